/* SPDX-License-Identifier: MIT */
/*
 * Multicast Listener Discovery (RFC 3810) for an IPv6 UDP node, on the
 * control core: the node listens to one group of its own, its address's
 * solicited-node group, where a router's neighbour solicitation for it
 * goes (nd.c).  A switch that snoops MLD passes a group's frames only to
 * the ports that reported it, so the node reports the group on every
 * port: unasked as it starts (with its neighbour advertisements, arp.c's
 * tick), and when a querier of the link asks for every group or for
 * this one, at a random moment within the delay the query allows (RFC
 * 3810, 6.2: many listeners asked at once do not answer at once).
 * While an MLDv1 querier is heard on a port, and for its Older Version
 * Querier Present Timeout after (RFC 3810, 8.2.1: robustness 2 times the
 * query interval of 125 s, plus 10 s), the node answers in MLDv1, which
 * is all such a querier, or a switch that snoops for it, reads.  Nothing
 * else of MLD is srnic's: the ports take every frame (promiscuous), and
 * all-nodes (ff02::1), where groups' frames go, is never reported.
 */
#include <string.h>

#include <rte_mbuf.h>
#include <rte_random.h>

#include "srnic_control.h"

/* The longest the node waits to answer, whatever a query allows: a
 * querier that allows 10 s (MLD's default) hears within a second. */
#define ANSWER_MAX_MS 1000
#define V1_PRESENT_MS (2 * 125000 + 10000)

void srnic_mld_report(struct srnic_engine *eng, unsigned p, bool asked,
		      uint64_t now)
{
	uint8_t group[16], mac[6], src[16], *f;
	struct rte_mbuf *m = srnic_neigh_frame(eng, p, SRNIC_MLD_FRAME, &f);
	const uint8_t *eth = eng->node->port[p].mac;

	if (!m)
		return;
	srnic_wire_nd_solicited_node(eng->cfg.ipv6, group, mac);
	srnic_wire_ip6_link_local(eth, src);
	if (now < eng->mld_v1_until[p])
		rte_pktmbuf_trim(m, SRNIC_MLD_FRAME -
					    srnic_wire_mld1_report_encode(
						    f, eth, src, group));
	else
		srnic_wire_mld_report_encode(f, eth, src, group,
					     asked ? SRNIC_MLD_IS_EXCLUDE
						   : SRNIC_MLD_TO_EXCLUDE);
	srnic_control_queue(eng, m);
	eng->st->mld_reports++;
}

bool srnic_mld_rx(struct srnic_engine *eng, struct rte_mbuf *m, uint64_t now)
{
	static const uint8_t all[16];
	struct srnic_mld_query q;
	uint8_t group[16], mac[6];
	enum srnic_wire_err e;
	unsigned p = m->port;
	uint64_t due;

	e = srnic_wire_mld_decode(rte_pktmbuf_mtod(m, const uint8_t *),
				  rte_pktmbuf_data_len(m), &q);
	if (e == SRNIC_WIRE_NOT_OURS)
		return false;
	if (e != SRNIC_WIRE_OK) {
		eng->st->arp_refused++;
		return true;
	}
	srnic_wire_nd_solicited_node(eng->cfg.ipv6, group, mac);
	if (memcmp(q.group, all, 16) && memcmp(q.group, group, 16))
		return true;	/* (another listener's group) */
	eng->st->mld_queries++;
	if (q.v1)
		eng->mld_v1_until[p] = now + V1_PRESENT_MS;
	if (q.max_delay_ms > ANSWER_MAX_MS)
		q.max_delay_ms = ANSWER_MAX_MS;
	due = now + (q.max_delay_ms ? rte_rand_max(q.max_delay_ms) : 0);
	/* (an answer due sooner stays: RFC 3810, 6.2) */
	if (!eng->mld_due_ms[p] || due < eng->mld_due_ms[p])
		eng->mld_due_ms[p] = due ? due : 1;
	return true;
}

void srnic_mld_tick(struct srnic_engine *eng, unsigned p, uint64_t now)
{
	if (eng->mld_due_ms[p] && now >= eng->mld_due_ms[p]) {
		eng->mld_due_ms[p] = 0;
		srnic_mld_report(eng, p, true, now);
	}
}
