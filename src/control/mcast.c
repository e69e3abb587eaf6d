/* SPDX-License-Identifier: MIT */
/*
 * Multicast groups: which local UD QPs joined which IPv4 group.
 *
 * The join state is the control plane's: attach and detach change it as
 * engine calls (so the datapath, which reads it for every multicast
 * datagram, never sees it half changed), and the control core programs
 * each port's multicast filter from it.  A datagram for a group nobody
 * here joined is dropped and counted whatever the port's filter let in:
 * af_packet and memif ports take every frame.
 *
 * Groups are named by IPv4 multicast GIDs (::ffff:224.0.0.0/100 as RoCE
 * v2 maps IPv4 addresses, or ff0e::ffff:224.0.0.0/100 as rdma-core encodes
 * IPv4 groups) or by IPv6 multicast GIDs (ff00::/8).  The wire carries a 32-bit id of the group: its
 * IPv4 address, or the IPv6 GID's last 32 bits, which is also all its
 * Ethernet address keeps (33:33 and those bits).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "engine_internal.h"

/* A group as it is named on the wire: its IPv4 address, or the low 32 bits
 * of an IPv6 multicast GID (what its Ethernet address keeps of it too). */
static struct srnic_mcast_group *group_by_gid(struct srnic_engine *eng,
					      const uint8_t gid[16])
{
	unsigned i;

	for (i = 0; i < SRNIC_MAX_MCAST_GROUPS; i++)
		if (eng->node->mcast[i].nqp &&
		    !memcmp(eng->node->mcast[i].gid, gid, 16))
			return &eng->node->mcast[i];
	return NULL;
}

/* What kind of multicast GID gid is (SRNIC_MCAST_IPV4, _IPV6 or 0: none),
 * and its wire id. */
static uint8_t gid_group(const uint8_t gid[16], uint32_t *id)
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

static void call_attach(struct srnic_engine *eng, struct srnic_call *c)
{
	struct srnic_qp *qp = c->arg;
	const uint8_t *gid = c->arg2;
	struct srnic_mcast_group *g = group_by_gid(eng, gid);
	uint32_t i;

	if (!g) {
		for (i = 0; i < SRNIC_MAX_MCAST_GROUPS &&
			    eng->node->mcast[i].nqp;
		     i++)
			;
		if (i == SRNIC_MAX_MCAST_GROUPS) {
			c->result = -ENOMEM;
			return;
		}
		g = &eng->node->mcast[i];
		memcpy(g->gid, gid, 16);
		g->kind = gid_group(gid, &g->id);
	}
	for (i = 0; i < g->nqp; i++)
		if (g->qpn[i] == qp->qpn) {
			c->result = 0;	/* attached already: verbs says fine */
			return;
		}
	if (g->nqp == SRNIC_MAX_MCAST_QPS) {
		c->result = -ENOMEM;
		return;
	}
	g->qpn[g->nqp] = qp->qpn;
	__atomic_store_n(&g->nqp, g->nqp + 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&eng->node->mcast_gen, 1, __ATOMIC_RELEASE);
	c->result = 0;
}

static void group_remove(struct srnic_engine *eng,
			 struct srnic_mcast_group *g, uint32_t i)
{
	g->qpn[i] = g->qpn[g->nqp - 1];
	__atomic_store_n(&g->nqp, g->nqp - 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&eng->node->mcast_gen, 1, __ATOMIC_RELEASE);
}

static void call_detach(struct srnic_engine *eng, struct srnic_call *c)
{
	struct srnic_qp *qp = c->arg;
	struct srnic_mcast_group *g = group_by_gid(eng, c->arg2);
	uint32_t i;

	c->result = -ENOENT;
	for (i = 0; g && i < g->nqp; i++)
		if (g->qpn[i] == qp->qpn) {
			group_remove(eng, g, i);
			c->result = 0;
			return;
		}
}

static int mcast_call(struct srnic_engine *eng, struct srnic_qp *qp,
		      const uint8_t gid[16],
		      void (*fn)(struct srnic_engine *, struct srnic_call *))
{
	uint8_t key[16];
	struct srnic_call c = {.fn = fn, .arg = qp, .arg2 = key};
	uint32_t id;
	uint8_t kind = gid_group(gid, &id);

	if (!kind || qp->type != SRNIC_QPT_UD)
		return -EINVAL;
	/* srnicd's node keeps one group table for all its processes, which
	 * they cannot change safely yet (docs/architecture.md, srnicd). */
	if (eng->mode == SRNIC_ATTACHED)
		return -EOPNOTSUPP;
	/* An IPv4 group has two GIDs (::ffff:, ff0e::ffff:): one group. */
	memcpy(key, gid, 16);
	if (kind == SRNIC_MCAST_IPV4) {
		memset(key, 0, 10);
		key[10] = key[11] = 0xff;
	}
	srnic_engine_call(eng, &c);
	return c.result;
}

int srnic_engine_attach_mcast(struct srnic_engine *eng, struct srnic_qp *qp,
			      const uint8_t gid[16])
{
	return mcast_call(eng, qp, gid, call_attach);
}

int srnic_engine_detach_mcast(struct srnic_engine *eng, struct srnic_qp *qp,
			      const uint8_t gid[16])
{
	return mcast_call(eng, qp, gid, call_detach);
}

/* Datapath, while destroying QP qpn: it leaves every group. */
void srnic_mcast_forget_qp(struct srnic_engine *eng, uint32_t qpn)
{
	unsigned i, k;

	for (i = 0; i < SRNIC_MAX_MCAST_GROUPS; i++)
		for (k = 0; k < eng->node->mcast[i].nqp; k++)
			if (eng->node->mcast[i].qpn[k] == qpn) {
				group_remove(eng, &eng->node->mcast[i], k);
				break;
			}
}

int srnic_engine_resolve_ud(struct srnic_engine *eng, const uint8_t gid[16],
			    struct srnic_ud_addr *out)
{
	struct srnic_peer *peer;

	memset(out, 0, sizeof(*out));
	out->mcast = gid_group(gid, &out->ipv4);
	if (out->mcast) {
		/* A group is any node's: resolving it is having a link to
		 * send on.  A program that starts the engine and sends at
		 * once would otherwise send into links still coming up. */
		uint64_t deadline = srnic_ms() + eng->cfg.resolve_ms;

		while (!srnic_engine_ports_up(eng) && srnic_ms() < deadline)
			usleep(2000);
		return 0;
	}
	peer = srnic_control_resolve(eng, gid, eng->cfg.resolve_ms);
	if (!peer)
		return -EHOSTUNREACH;
	out->peer = (uint16_t)(peer - eng->node->peer);
	out->ipv4 = peer->ipv4;
	return 0;
}

/* Datapath: a datagram to a group goes to every QP here that joined it
 * (every group of that wire id). */
void srnic_mcast_deliver(struct srnic_engine *eng, const struct srnic_pkt *pkt)
{
	bool found = false;
	uint32_t i, k;

	for (i = 0; i < SRNIC_MAX_MCAST_GROUPS; i++) {
		const struct srnic_mcast_group *g = &eng->node->mcast[i];

		if (!g->nqp || g->id != pkt->dst_ipv4)
			continue;
		found = true;
		for (k = 0; k < g->nqp; k++) {
			struct srnic_qp *qp = srnic_qp_lookup(eng, g->qpn[k]);

			if (qp)
				srnic_responder_datagram(
					eng, qp, pkt,
					g->kind == SRNIC_MCAST_IPV6 ? g->gid
								    : NULL);
		}
	}
	if (!found)
		eng->st->drops[SRNIC_DROP_NO_GROUP]++;
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
		const struct srnic_mcast_group *g = &eng->node->mcast[i];

		if (__atomic_load_n(&g->nqp, __ATOMIC_ACQUIRE))
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
