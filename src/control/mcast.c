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
 * Groups are named by IPv4-mapped GIDs (::ffff:224.0.0.0/100), which is
 * how RoCE v2 names IPv4 multicast; the wire carries the group address.
 */
#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>

#include "engine_internal.h"

static struct srnic_mcast_group *group_find(struct srnic_engine *eng,
					    uint32_t ipv4)
{
	unsigned i;

	for (i = 0; i < SRNIC_MAX_MCAST_GROUPS; i++)
		if (eng->mcast[i].ipv4 == ipv4)
			return &eng->mcast[i];
	return NULL;
}

/* The IPv4 group an IPv4-mapped multicast GID names, or 0. */
static uint32_t gid_group(const uint8_t gid[16])
{
	static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0,
					     0, 0, 0, 0, 0xff, 0xff};
	uint32_t ip;

	if (memcmp(gid, v4mapped, 12))
		return 0;
	ip = srnic_get32(gid + 12);
	return (ip >> 28) == 0xe ? ip : 0;
}

static void call_attach(struct srnic_engine *eng, struct srnic_call *c)
{
	struct srnic_qp *qp = c->arg;
	uint32_t ipv4 = *(const uint32_t *)c->arg2, i;
	struct srnic_mcast_group *g = group_find(eng, ipv4);

	if (!g) {
		g = group_find(eng, 0);
		if (!g) {
			c->result = -ENOMEM;
			return;
		}
		g->nqp = 0;
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
	g->qpn[g->nqp++] = qp->qpn;
	g->ipv4 = ipv4;
	__atomic_fetch_add(&eng->mcast_gen, 1, __ATOMIC_RELEASE);
	c->result = 0;
}

static void group_remove(struct srnic_engine *eng,
			 struct srnic_mcast_group *g, uint32_t i)
{
	g->qpn[i] = g->qpn[--g->nqp];
	if (!g->nqp)
		g->ipv4 = 0;
	__atomic_fetch_add(&eng->mcast_gen, 1, __ATOMIC_RELEASE);
}

static void call_detach(struct srnic_engine *eng, struct srnic_call *c)
{
	struct srnic_qp *qp = c->arg;
	uint32_t ipv4 = *(const uint32_t *)c->arg2, i;
	struct srnic_mcast_group *g = group_find(eng, ipv4);

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
	uint32_t ipv4 = gid_group(gid);
	struct srnic_call c = {.fn = fn, .arg = qp, .arg2 = &ipv4};

	if (!ipv4 || qp->type != SRNIC_QPT_UD)
		return -EINVAL;
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
		for (k = 0; k < eng->mcast[i].nqp; k++)
			if (eng->mcast[i].qpn[k] == qpn) {
				group_remove(eng, &eng->mcast[i], k);
				break;
			}
}

int srnic_engine_resolve_ud(struct srnic_engine *eng, const uint8_t gid[16],
			    struct srnic_ud_addr *out)
{
	struct srnic_peer *peer;

	memset(out, 0, sizeof(*out));
	if (gid[0] == 0xff)
		return -EINVAL;	/* IPv6 multicast: not carried */
	out->ipv4 = gid_group(gid);
	if (out->ipv4) {
		out->mcast = 1;
		return 0;
	}
	peer = srnic_control_resolve(eng, gid, eng->cfg.resolve_ms);
	if (!peer)
		return -EHOSTUNREACH;
	out->peer = (uint16_t)(peer - eng->peer);
	out->ipv4 = peer->ipv4;
	return 0;
}

/* Datapath: a datagram to a group goes to every QP here that joined it. */
void srnic_mcast_deliver(struct srnic_engine *eng, const struct srnic_pkt *pkt)
{
	struct srnic_mcast_group *g =
		pkt->dst_ipv4 ? group_find(eng, pkt->dst_ipv4) : NULL;
	uint32_t i;

	if (!g) {
		eng->st.drops[SRNIC_DROP_NO_GROUP]++;
		return;
	}
	for (i = 0; i < g->nqp; i++) {
		struct srnic_qp *qp = srnic_qp_lookup(eng, g->qpn[i]);

		if (qp)
			srnic_responder_datagram(eng, qp, pkt);
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
	uint32_t gen = __atomic_load_n(&eng->mcast_gen, __ATOMIC_ACQUIRE);
	unsigned i, n = 0, p;

	if (gen == eng->mcast_programmed)
		return;
	eng->mcast_programmed = gen;
	for (i = 0; i < SRNIC_MAX_MCAST_GROUPS; i++) {
		uint32_t ipv4 = __atomic_load_n(&eng->mcast[i].ipv4,
						__ATOMIC_RELAXED);

		if (ipv4)
			srnic_mcast_mac(ipv4, macs[n++].addr_bytes);
	}
	for (p = 0; p < eng->nports; p++)
		if (eng->port[p].started)
			rte_eth_dev_set_mc_addr_list(eng->port[p].port_id,
						     n ? macs : NULL, n);
}
