/* SPDX-License-Identifier: MIT */
/*
 * UDP/IP encapsulation at the ports (a node's `encap = udp`): a frame is
 * wrapped in IPv4 and UDP as it is handed to a port, and stripped as it
 * comes off one, so that everything between (the codec, the roles, the
 * loopback, the rings to other processes) sees the raw frame it always
 * did.  The headers are the wire codec's (srnic_wire_udp_wrap, _unwrap);
 * this file moves the mbuf's start and picks the addresses.  Whoever
 * holds a port: the datapath, and the control core as its node leaves.
 */
#include <rte_mbuf.h>

#include "srnic_port.h"

/* The IPv4 address of the node whose port p has Ethernet address mac:
 * the peer table's (the entry hit last on this port first: a QP's frames
 * come in runs to one peer), or, for a group address, a node not known
 * yet or a service's address (failover.md's switch mode), the limited
 * broadcast.  (Routes and ARP are to come: a peer is reached on the
 * segment the port is on.)  udp_peer is a hint only, checked before it is
 * used: srnicd's control thread and its datapath may both write it. */
static uint32_t dst_ipv4(struct srnic_engine *eng, unsigned p,
			 const uint8_t *mac)
{
	const struct srnic_node *node = eng->node;
	unsigned i = eng->udp_peer[p];

	if (mac[0] & 1)
		return SRNIC_IPV4_BROADCAST;
	if (i < SRNIC_MAX_PEERS && node->peer[i].ipv4 &&
	    !memcmp(node->peer[i].mac[p], mac, 6))
		return node->peer[i].ipv4;
	for (i = 0; i < SRNIC_MAX_PEERS; i++)
		if (node->peer[i].ipv4 && !memcmp(node->peer[i].mac[p], mac, 6)) {
			eng->udp_peer[p] = (uint8_t)i;
			return node->peer[i].ipv4;
		}
	return SRNIC_IPV4_BROADCAST;
}

bool srnic_port_udp_wrap(struct srnic_engine *eng, unsigned p,
			 struct rte_mbuf *m)
{
	uint8_t *f = (uint8_t *)rte_pktmbuf_prepend(m, SRNIC_UDP_HLEN);

	if (!f)
		return false;	/* no headroom: not one of ours */
	srnic_wire_udp_wrap(f, rte_pktmbuf_pkt_len(m), eng->cfg.ipv4,
			    dst_ipv4(eng, p, f + SRNIC_UDP_HLEN),
			    (uint16_t)eng->cfg.udp_port);
	return true;
}

uint16_t srnic_port_udp_strip(struct srnic_engine *eng,
			      struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i, kept = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint32_t raw_len;
		enum srnic_wire_err e;

		/* (a frame in more than one buffer is none of ours, whose
		 * every frame fits one: left for the codec to count) */
		if (m->nb_segs > 1) {
			pkts[kept++] = m;
			continue;
		}
		e = srnic_wire_udp_unwrap(rte_pktmbuf_mtod(m, uint8_t *),
					  rte_pktmbuf_data_len(m),
					  eng->cfg.ipv4,
					  (uint16_t)eng->cfg.udp_port,
					  &raw_len);
		if (e == SRNIC_WIRE_BAD_IP) {
			eng->st->drops[SRNIC_DROP_BAD_IP]++;
			rte_pktmbuf_free(m);
			continue;
		}
		/* (a raw frame, an `encap = eth` node's or one forged on
		 * the segment: not ours here, where nothing raw comes in,
		 * and neither CRC nor MAC would be read as it was made) */
		if (e == SRNIC_WIRE_NOT_OURS &&
		    rte_pktmbuf_data_len(m) >= SRNIC_ETH_HLEN &&
		    srnic_get16(rte_pktmbuf_mtod(m, uint8_t *) + 12) ==
			    SRNIC_ETHERTYPE) {
			eng->st->drops[SRNIC_DROP_NOT_OURS]++;
			rte_pktmbuf_free(m);
			continue;
		}
		if (e == SRNIC_WIRE_OK) {
			rte_pktmbuf_adj(m, SRNIC_UDP_HLEN);
			/* (the Ethernet padding goes, as the codec would
			 * take a CRC trailer to be the frame's last bytes) */
			if (rte_pktmbuf_pkt_len(m) > raw_len)
				rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) -
							    raw_len);
		}
		/* (NOT_OURS: as it came, for the codec to count) */
		pkts[kept++] = m;
	}
	return kept;
}
