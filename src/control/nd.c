/* SPDX-License-Identifier: MIT */
/*
 * Neighbour discovery (RFC 4861) for an IPv6 UDP node, on the control
 * core: what ARP is to an IPv4 node (arp.c, whose neighbour table and
 * timers it shares, and whose counters count it).  The node answers a
 * Neighbor Solicitation for its address on every port, solicits each
 * next hop it sends to at the hop's solicited-node group, and says its
 * own address as it starts with unsolicited Neighbor Advertisements to
 * every node of the segment (a router that kept another Ethernet address
 * for it takes the new one: the override flag).
 *
 * Only Neighbor Solicitations and Advertisements are read here, and MLD
 * queries by mld.c: the rest of ICMPv6 that reaches the ports (a
 * router's advertisements, MLD reports of the kernel's interfaces) is
 * none of srnic's, and left unanswered.
 */
#include <string.h>

#include <rte_mbuf.h>

#include "srnic_control.h"

static const uint8_t all_nodes_mac[6] = {0x33, 0x33, 0, 0, 0, 1};

/* A neighbour discovery frame out of port p. */
static void send_nd(struct srnic_engine *eng, unsigned p,
		    const uint8_t eth_dst[6], const struct srnic_nd *nd)
{
	uint8_t *f;
	struct rte_mbuf *m = srnic_neigh_frame(eng, p, SRNIC_ND_FRAME, &f);

	if (!m)
		return;
	rte_pktmbuf_trim(m, (uint16_t)(SRNIC_ND_FRAME -
				       srnic_wire_nd_encode(
					       f, eth_dst,
					       eng->node->port[p].mac, nd)));
	srnic_control_queue(eng, m);
}

void srnic_nd_solicit(struct srnic_engine *eng, unsigned p,
		      const uint8_t target[16])
{
	struct srnic_nd nd = {.type = SRNIC_ND_SOLICIT, .has_lladdr = 1};
	uint8_t mac[6];

	memcpy(nd.src, eng->cfg.ipv6, 16);
	memcpy(nd.target, target, 16);
	srnic_wire_nd_solicited_node(target, nd.dst, mac);
	memcpy(nd.lladdr, eng->node->port[p].mac, 6);
	send_nd(eng, p, mac, &nd);
}

void srnic_nd_announce(struct srnic_engine *eng, unsigned p)
{
	struct srnic_nd nd = {.type = SRNIC_ND_ADVERT,
			      .flags = SRNIC_ND_F_OVERRIDE,
			      .has_lladdr = 1};

	memcpy(nd.src, eng->cfg.ipv6, 16);
	memcpy(nd.dst, srnic_ip6_all_nodes, 16);
	memcpy(nd.target, eng->cfg.ipv6, 16);
	memcpy(nd.lladdr, eng->node->port[p].mac, 6);
	send_nd(eng, p, all_nodes_mac, &nd);
}

/* What a neighbour says of its own Ethernet address (from ip, on port
 * p): news for a hop we send to, and (asking) for one that solicits us
 * and that we would send through: it is about to send to us.  Anyone
 * else on the segment could say anything: not taken in.  An
 * advertisement without the override flag does not replace another
 * address known already (RFC 4861, 7.2.5: a proxy's, or an anycast
 * answer), but one that says the same refreshes it. */
static void heard(struct srnic_engine *eng, unsigned p, const uint8_t ip[16],
		  const uint8_t mac[6], bool asking, bool override,
		  uint64_t now)
{
	uint32_t id = srnic_wire_ip6_id(ip);
	struct srnic_neigh *n = srnic_neigh_find(eng->node, id, p);

	if (n && memcmp(n->ip6, ip, 16))
		return;		/* (another address of the same id) */
	if (n && !override &&
	    (__atomic_load_n(&n->mac, __ATOMIC_RELAXED) & SRNIC_NEIGH_KNOWN) &&
	    !srnic_neigh_is(n, mac))
		return;
	if (!n && asking && srnic_neigh_ours(eng, id))
		n = srnic_neigh_entry(eng, id, ip, p, now);
	if (n)
		srnic_neigh_learned(eng, n, mac, now);
}

void srnic_nd_rx(struct srnic_engine *eng, struct rte_mbuf *m, uint64_t now)
{
	static const uint8_t unspecified[16];
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	unsigned p = m->port;
	struct srnic_nd nd, r;
	enum srnic_wire_err e;

	if (p >= eng->node->nports || srnic_mld_rx(eng, m, now))
		return;
	e = srnic_wire_nd_decode(f, rte_pktmbuf_data_len(m), &nd);
	if (e == SRNIC_WIRE_NOT_OURS)
		return;		/* (the rest of ICMPv6: above) */
	if (e != SRNIC_WIRE_OK) {
		eng->st->arp_refused++;
		return;
	}
	if (nd.type == SRNIC_ND_ADVERT) {
		/* (an answer without the option is a unicast one: its
		 * Ethernet source is the target's; a solicited one to a
		 * group is none, RFC 4861 7.1.2) */
		if ((nd.flags & SRNIC_ND_F_SOLICITED) && nd.dst[0] == 0xff) {
			eng->st->arp_refused++;
			return;
		}
		if (memcmp(nd.target, eng->cfg.ipv6, 16))
			heard(eng, p, nd.target,
			      nd.has_lladdr ? nd.lladdr : f + 6, false,
			      nd.flags & SRNIC_ND_F_OVERRIDE, now);
		return;
	}
	/* A solicitation: for our address, from a host that says where it
	 * is (one from :: is another's duplicate address detection). */
	if (memcmp(nd.target, eng->cfg.ipv6, 16) ||
	    !memcmp(nd.src, unspecified, 16) ||
	    !memcmp(nd.src, eng->cfg.ipv6, 16))
		return;
	if (nd.has_lladdr)
		heard(eng, p, nd.src, nd.lladdr, true, true, now);
	memset(&r, 0, sizeof(r));
	r.type = SRNIC_ND_ADVERT;
	r.flags = SRNIC_ND_F_SOLICITED | SRNIC_ND_F_OVERRIDE;
	memcpy(r.src, eng->cfg.ipv6, 16);
	memcpy(r.dst, nd.src, 16);
	memcpy(r.target, eng->cfg.ipv6, 16);
	memcpy(r.lladdr, eng->node->port[p].mac, 6);
	r.has_lladdr = 1;
	send_nd(eng, p, nd.has_lladdr ? nd.lladdr : f + 6, &r);
	eng->st->arp_answered++;
}
