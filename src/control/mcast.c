/* SPDX-License-Identifier: MIT */
/*
 * Multicast groups: which UD QPs of the node joined which group.
 *
 * Two tables.  Each process keeps its own QPs' groups: attach and detach
 * change it as engine calls, so its datapath, which reads it for every
 * multicast datagram, never sees it half changed.  The node keeps which
 * processes joined each group (node_join, node_leave, under a lock all
 * of srnicd's processes share): whoever polls the ports passes each
 * datagram to the member processes, and the control core programs each
 * port's multicast filter from it.  A datagram a process sends to a group
 * with members on its own node also goes through the loopback, as a NIC
 * loops multicast back to its other QPs.  A datagram for a group nobody
 * here joined is dropped and counted whatever the port's filter let in:
 * af_packet and memif ports take every frame.
 *
 * Groups are named by IPv4 multicast GIDs (::ffff:224.0.0.0/100 as RoCE
 * v2 maps IPv4 addresses, or ff0e::ffff:224.0.0.0/100 as rdma-core encodes
 * IPv4 groups) or by IPv6 multicast GIDs (ff00::/8).  The wire carries a
 * 32-bit id of the group: its IPv4 address, or the IPv6 GID's last 32
 * bits, which is also all its Ethernet address keeps (33:33 and those
 * bits).
 *
 * This file changes the tables (engine calls, srnicd) and programs the
 * ports' filters (control core).  The datapath reads them where it runs:
 * the port poller passes a group's datagram to the member processes
 * (srnic_mcast_forward, engine/dispatch.c), and the responder gives it to
 * this process's member QPs (srnic_mcast_deliver, responder/datagram.c).
 */
#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>

#include "srnic_control.h"

/* This process's group of that GID, if its QPs joined one. */
static struct srnic_mcast_group *group_by_gid(struct srnic_engine *eng,
					      const uint8_t gid[16])
{
	unsigned i;

	for (i = 0; i < SRNIC_MAX_MCAST_GROUPS; i++)
		if (eng->mcast[i].nqp && !memcmp(eng->mcast[i].gid, gid, 16))
			return &eng->mcast[i];
	return NULL;
}

/*
 * The node's part: a process joins a group with its first QP and leaves
 * it with its last.  Under mcast_lock, which every process of srnicd's
 * node shares; the control core sees the change (mcast_gen) and programs
 * the ports' filters.  Join returns 0 or -ENOMEM (every entry in use).
 */
static int node_join(struct srnic_engine *eng,
		     const struct srnic_mcast_group *g)
{
	struct srnic_node *node = eng->node;
	struct srnic_node_group *ng = NULL, *free_ng = NULL;
	unsigned i;

	bool held = srnic_shared_lock(node, &node->mcast_lock);
	for (i = 0; i < SRNIC_MAX_MCAST_GROUPS && !ng; i++) {
		struct srnic_node_group *e = &node->mcast[i];

		if (!e->procs)
			free_ng = free_ng ? free_ng : e;
		else if (!memcmp(e->gid, g->gid, 16))
			ng = e;
	}
	if (!ng && free_ng) {
		ng = free_ng;
		memcpy(ng->gid, g->gid, 16);
		ng->id = g->id;
		ng->kind = g->kind;
	}
	if (ng) {
		__atomic_or_fetch(&ng->procs, 1u << eng->slot, __ATOMIC_RELEASE);
		__atomic_fetch_add(&node->mcast_gen, 1, __ATOMIC_RELEASE);
	}
	srnic_shared_unlock(&node->mcast_lock, held);
	return ng ? 0 : -ENOMEM;
}

/* Slot leaves every group of the node whose GID is gid (NULL: all). */
static void node_leave(struct srnic_node *node, unsigned slot,
		       const uint8_t *gid)
{
	unsigned i;

	bool held = srnic_shared_lock(node, &node->mcast_lock);
	for (i = 0; i < SRNIC_MAX_MCAST_GROUPS; i++) {
		struct srnic_node_group *e = &node->mcast[i];

		if ((e->procs & 1u << slot) &&
		    (!gid || !memcmp(e->gid, gid, 16))) {
			__atomic_and_fetch(&e->procs, ~(1u << slot),
					   __ATOMIC_RELEASE);
			__atomic_fetch_add(&node->mcast_gen, 1,
					   __ATOMIC_RELEASE);
		}
	}
	srnic_shared_unlock(&node->mcast_lock, held);
}

void srnic_mcast_release_proc(struct srnic_node *node, unsigned slot)
{
	node_leave(node, slot, NULL);
	srnic_group_release_proc(node, slot);
}

/*
 * Multicast RDMA WRITE: which process of the node holds each group's
 * region (one at most: a WRITE lands at one offset of one region a node),
 * and the map the node's HELLOs carry.  Under mcast_lock; the poller reads
 * group_owner to pass each packet to its process, and the control core
 * sends HELLOs at once when the map changed (peers learn the members from
 * them).
 */
int srnic_group_claim(struct srnic_node *node, unsigned slot, unsigned g)
{
	int rc = 0;

	bool held = srnic_shared_lock(node, &node->mcast_lock);
	if (node->group_owner[g])
		rc = -EBUSY;
	else {
		__atomic_store_n(&node->group_owner[g], (uint8_t)(slot + 1),
				 __ATOMIC_RELEASE);
		__atomic_or_fetch(&node->groups, 1ull << g, __ATOMIC_RELEASE);
	}
	srnic_shared_unlock(&node->mcast_lock, held);
	srnic_hello_now(node);
	return rc;
}

void srnic_group_unclaim(struct srnic_node *node, unsigned slot, unsigned g)
{
	bool held = srnic_shared_lock(node, &node->mcast_lock);
	if (node->group_owner[g] == slot + 1) {
		__atomic_and_fetch(&node->groups, ~(1ull << g),
				   __ATOMIC_RELEASE);
		__atomic_store_n(&node->group_owner[g], 0, __ATOMIC_RELEASE);
	}
	srnic_shared_unlock(&node->mcast_lock, held);
	srnic_hello_now(node);
}

void srnic_group_release_proc(struct srnic_node *node, unsigned slot)
{
	unsigned g;

	for (g = 0; g < SRNIC_MAX_GROUPS; g++)
		if (__atomic_load_n(&node->group_owner[g], __ATOMIC_ACQUIRE) ==
		    slot + 1)
			srnic_group_unclaim(node, slot, g);
}

uint8_t srnic_mcast_gid(const uint8_t gid[16], uint32_t *id)
{
	static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0,
					     0, 0, 0, 0, 0xff, 0xff};
	/* ff0e::ffff:a.b.c.d: how rdma-core and perftest encode an IPv4
	 * group in an IPv6 multicast GID */
	static const uint8_t v4encoded[12] = {0xff, 0x0e, 0, 0, 0, 0,
					      0, 0, 0, 0, 0xff, 0xff};

	*id = srnic_get32(gid + 12);
	if (!memcmp(gid, v4mapped, 12) || !memcmp(gid, v4encoded, 12))
		return (*id >> 28) == 0xe ? SRNIC_MCAST_IPV4 : 0;
	return gid[0] == 0xff ? SRNIC_MCAST_IPV6 : 0;
}

int srnic_mcast_join(struct srnic_engine *eng, struct srnic_qp *qp,
		     const uint8_t gid[16])
{
	struct srnic_mcast_group *g = group_by_gid(eng, gid);
	uint32_t i;

	if (!g) {
		for (i = 0; i < SRNIC_MAX_MCAST_GROUPS && eng->mcast[i].nqp;
		     i++)
			;
		if (i == SRNIC_MAX_MCAST_GROUPS)
			return -ENOMEM;
		g = &eng->mcast[i];
		memcpy(g->gid, gid, 16);
		g->kind = srnic_mcast_gid(gid, &g->id);
	}
	for (i = 0; i < g->nqp; i++)
		if (g->qpn[i] == qp->q.qpn)
			return 0;	/* attached already: verbs says fine */
	if (g->nqp == SRNIC_MAX_MCAST_QPS)
		return -ENOMEM;
	/* The process's first QP in the group: the node learns of it. */
	if (g->nqp == 0 && node_join(eng, g))
		return -ENOMEM;
	g->qpn[g->nqp] = qp->q.qpn;
	__atomic_store_n(&g->nqp, g->nqp + 1, __ATOMIC_RELEASE);
	return 0;
}

static void group_remove(struct srnic_engine *eng,
			 struct srnic_mcast_group *g, uint32_t i)
{
	g->qpn[i] = g->qpn[g->nqp - 1];
	__atomic_store_n(&g->nqp, g->nqp - 1, __ATOMIC_RELEASE);
	if (g->nqp == 0)
		node_leave(eng->node, eng->slot, g->gid);
}

int srnic_mcast_leave(struct srnic_engine *eng, struct srnic_qp *qp,
		      const uint8_t gid[16])
{
	struct srnic_mcast_group *g = group_by_gid(eng, gid);
	uint32_t i;

	for (i = 0; g && i < g->nqp; i++)
		if (g->qpn[i] == qp->q.qpn) {
			group_remove(eng, g, i);
			return 0;
		}
	return -ENOENT;
}

void srnic_mcast_forget_qp(struct srnic_engine *eng, uint32_t qpn)
{
	unsigned i, k;

	for (i = 0; i < SRNIC_MAX_MCAST_GROUPS; i++)
		for (k = 0; k < eng->mcast[i].nqp; k++)
			if (eng->mcast[i].qpn[k] == qpn) {
				group_remove(eng, &eng->mcast[i], k);
				break;
			}
}

/*
 * Control core: give each port the list of group MACs to let in, when the
 * groups changed.  Ports that filter nothing (af_packet, memif) say they
 * cannot; the datapath filters for them.
 */
void srnic_mcast_program_ports(struct srnic_engine *eng)
{
	struct rte_ether_addr macs[SRNIC_MAX_MCAST_GROUPS];
	uint32_t gen = __atomic_load_n(&eng->node->mcast_gen, __ATOMIC_ACQUIRE);
	unsigned i, n = 0, p;

	if (gen == eng->node->mcast_programmed)
		return;
	for (i = 0; i < SRNIC_MAX_MCAST_GROUPS; i++) {
		const struct srnic_node_group *g = &eng->node->mcast[i];

		if (__atomic_load_n(&g->procs, __ATOMIC_ACQUIRE))
			srnic_mcast_mac(g->id, g->kind == SRNIC_MCAST_IPV6,
					macs[n++].addr_bytes);
	}
	/* The datapath changes the table as it likes: a list read while it
	 * did is read again next tick. */
	if (__atomic_load_n(&eng->node->mcast_gen, __ATOMIC_ACQUIRE) != gen)
		return;
	eng->node->mcast_programmed = gen;
	for (p = 0; p < eng->node->nports; p++)
		if (eng->node->port[p].started)
			rte_eth_dev_set_mc_addr_list(eng->node->port[p].port_id,
						     n ? macs : NULL, n);
}
