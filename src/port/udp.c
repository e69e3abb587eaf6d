/* SPDX-License-Identifier: MIT */
/*
 * UDP/IP encapsulation at the ports (a node's `encap = udp`): a frame is
 * wrapped in IPv4 and UDP as it is handed to a port, and stripped as it
 * comes off one, so that everything between (the codec, the roles, the
 * loopback, the rings to other processes) sees the raw frame it always
 * did.  The headers are the wire codec's (srnic_wire_udp_wrap, _unwrap);
 * this file moves the mbuf's start and picks the addresses.  Whoever
 * holds a port: the datapath, and the control core as its node leaves;
 * and a steering class on its own queues (port/steer.c).
 *
 * Inside the node a peer's port is named by an Ethernet address made of
 * the peer's IPv4 address (srnic_wire_ip_mac): stripping writes it as a
 * frame's source, since across a router the Ethernet source is the
 * router's; wrapping reads the destination's address back from it, finds
 * the next hop (the node's subnet, its routes) and sends to that hop's
 * Ethernet address, which the control core learns by ARP (control/arp.c).
 */
#include <rte_mbuf.h>

#include "srnic_port.h"

/*
 * What a thread that wraps frames keeps, its own (srnicd's control thread
 * and its datapath both wrap, and an attached process's threads take the
 * ports in turn): for a few destinations on each port their next hop, its
 * neighbour entry and the peer (a QP's frames come in runs to one peer,
 * and a node's QPs to a few), checked before use, and its frames' turn
 * through the paths.
 */
#define DST_SLOTS 16	/* a power of two */
struct dst_slot {
	uint32_t dst, hop;
	uint32_t neigh;
	uint32_t turn;		/* its frames' turn through the paths */
	const struct srnic_peer *peer;
	uint8_t dst6[16];	/* an IPv6 node's: dst's address */
};
static __thread struct {
	const struct srnic_node *node;
	struct dst_slot slot[SRNIC_MAX_PORTS][DST_SLOTS];
} cache;

static inline struct dst_slot *slot_of(const struct srnic_engine *eng,
				       unsigned p, uint32_t dst)
{
	if (unlikely(cache.node != eng->node)) {
		memset(&cache, 0, sizeof(cache));
		cache.node = eng->node;
	}
	return &cache.slot[p][(dst * 2654435761u) >> 28 & (DST_SLOTS - 1)];
}

/* The Ethernet address of hop on port p, from entry i if it is hop's
 * there (arp.c stores an entry's address last, its port in the same
 * word; an entry taken for another hop meanwhile fails the last look). */
static inline bool neigh_mac(const struct srnic_node *node, unsigned i,
			     uint32_t hop, unsigned p, uint64_t *mac)
{
	const struct srnic_neigh *n = &node->neigh[i];

	if (__atomic_load_n(&n->ipv4, __ATOMIC_ACQUIRE) != hop)
		return false;
	*mac = __atomic_load_n(&n->mac, __ATOMIC_ACQUIRE);
	return (*mac & SRNIC_NEIGH_KNOWN) &&
	       (*mac >> SRNIC_NEIGH_PORT_SHIFT & 0xff) == p &&
	       __atomic_load_n(&n->ipv4, __ATOMIC_ACQUIRE) == hop;
}

/* The Ethernet address a frame to dst leaves port p for: false when ARP
 * has not found it yet (the control core is asked to). */
static bool hop_mac(struct srnic_engine *eng, unsigned p, uint32_t dst,
		    struct dst_slot *s, uint8_t out[6])
{
	struct srnic_node *node = eng->node;
	uint8_t dst6[16] = {0};
	uint32_t hop;
	uint64_t mac;
	unsigned i;

	if (s->dst == dst && neigh_mac(node, s->neigh, s->hop, p, &mac))
		goto found;
	if (eng->cfg.has_ipv6) {
		/* (an IPv6 node's hops are keyed by their ids as well:
		 * its routes' prefixes are the addresses') */
		uint8_t hop6[16];

		if (!srnic_node_addr6(node, &eng->cfg, dst, dst6))
			return false;
		srnic_config_next_hop6(&eng->cfg, p, dst6, hop6);
		hop = srnic_wire_ip6_id(hop6);
	} else {
		hop = srnic_config_next_hop(&eng->cfg, p, dst);
	}
	for (i = 0; i < SRNIC_MAX_NEIGH; i++)
		if (neigh_mac(node, i, hop, p, &mac)) {
			if (s->dst != dst)
				s->turn = 0;
			memcpy(s->dst6, dst6, 16);
			s->dst = dst;
			s->hop = hop;
			s->neigh = i;
			s->peer = srnic_node_peer(node, dst);
			goto found;
		}
	__atomic_store_n(&node->neigh_want[p], hop, __ATOMIC_RELEASE);
	return false;
found:
	srnic_put16(out, (uint16_t)(mac >> 32));
	srnic_put32(out + 2, (uint32_t)mac);
	return true;
}

/* The path (UDP source port) a frame to peer leaves port p on: the next
 * in turn of the peer's plan, which spreads a QP's packets over every
 * path an ECMP hash makes of them (SRD's spraying), each as much as it
 * carries, and leaves a path that stops carrying as soon as the peer's
 * HELLOs say so (control/paths.c).  Until there is a plan for the paths
 * the peer hears (all while it says none), each in turn as often.  A
 * HELLO to one peer says its own path (the control core probes each). */
static unsigned pick_path(const struct srnic_peer *peer, unsigned p,
			  struct dst_slot *s, const uint8_t *f,
			  const struct rte_mbuf *m)
{
	const struct srnic_peer_paths *pp;
	unsigned ok, k, n;

	if (f[SRNIC_ETH_HLEN + 1] == SRNIC_OP_HELLO)
		return m->hash.usr % SRNIC_UDP_PATHS;
	ok = peer ? __atomic_load_n(&peer->paths_ok[p], __ATOMIC_RELAXED) : 0;
	if (!ok)
		ok = (1u << SRNIC_UDP_PATHS) - 1;
	n = s->turn++;
	if (peer) {
		pp = &peer->paths[p];
		if (__atomic_load_n(&pp->planned, __ATOMIC_ACQUIRE) == ok) {
			/* (a plan being laid out anew names a path of the
			 * old paths or the new: checked) */
			k = __atomic_load_n(&pp->plan[n % SRNIC_PATH_PLAN],
					    __ATOMIC_RELAXED);
			if (k < SRNIC_UDP_PATHS && (ok >> k & 1))
				return k;
		}
	}
	/* (the n-th of the paths it hears, each in its turn as often) */
	n %= (unsigned)__builtin_popcount(ok);
	for (k = 0; n || !(ok >> k & 1); k++)
		if (ok >> k & 1)
			n--;
	return k;
}

/* The peer a frame to dst goes to (NULL: none known, or a group), checked
 * against the slot's. */
static inline struct srnic_peer *dst_peer(struct srnic_engine *eng,
					  struct dst_slot *s, uint32_t dst)
{
	struct srnic_peer *peer = (struct srnic_peer *)s->peer;

	if (!peer || __atomic_load_n(&peer->ipv4, __ATOMIC_RELAXED) != dst)
		s->peer = peer = srnic_node_peer(eng->node, dst);
	return peer;
}

/* ff02::1's Ethernet address (RFC 2464) */
static const uint8_t all_nodes_mac[6] = {0x33, 0x33, 0, 0, 0, 1};

bool srnic_port_udp_wrap(struct srnic_engine *eng, unsigned p,
			 struct rte_mbuf *m)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	/* (a peer's port, or a group, a service's address, nobody yet:
	 * the limited broadcast, on this segment only) */
	uint32_t dst = srnic_wire_mac_ip(f);
	struct srnic_peer *peer = NULL;
	struct dst_slot *s = NULL;
	unsigned path = 0;
	uint8_t mac[6];

	if (dst) {
		s = slot_of(eng, p, dst);

		if (!hop_mac(eng, p, dst, s, mac)) {
			eng->st->drops[SRNIC_DROP_UNRESOLVED]++;
			return false;
		}
		peer = dst_peer(eng, s, dst);
		path = pick_path(peer, p, s, f, m);
	}
	f = (uint8_t *)rte_pktmbuf_prepend(m, eng->cfg.has_ipv6
						      ? SRNIC_UDP6_HLEN
						      : SRNIC_UDP_HLEN);
	if (!f) {
		eng->st->drops[SRNIC_DROP_NO_MBUF]++;
		return false;	/* no headroom: not one of ours */
	}
	if (eng->cfg.has_ipv6) {
		/* (nobody's: every node of the segment, ff02::1) */
		srnic_wire_udp6_wrap(f, rte_pktmbuf_pkt_len(m), eng->cfg.ipv6,
				     s ? s->dst6
					 : srnic_ip6_all_nodes,
				     (uint16_t)eng->cfg.udp_port, path, 0);
		if (!dst)
			memcpy(f, all_nodes_mac, 6);
	} else {
		srnic_wire_udp_wrap(f, rte_pktmbuf_pkt_len(m), eng->cfg.ipv4,
				    dst ? dst : SRNIC_IPV4_BROADCAST,
				    (uint16_t)eng->cfg.udp_port, path, 0);
	}
	if (dst)
		memcpy(f, mac, 6);
	/* (numbered as it goes out: the peer's slot + 1, 0 for none, and
	 * the path above) */
	m->hash.usr = peer ? ((uint32_t)(peer - eng->node->peer) + 1) |
				     path << 8
			   : 0;
	return true;
}

/*
 * Frames to a peer are numbered per path as they go out, in the order the
 * port takes them: a frame wrapped in one process's transmit buffer may
 * leave after frames another process wrapped later, or not at all (a full
 * buffer), and a number given then would read as a loss at the peer.
 * Never 0 ("not counted").  A frame the port did not take keeps its
 * number for the next try (one dropped after all, as the rare frame a
 * full port refuses the control core, is one lost frame in the peer's
 * window).  What is not wrapped IPv4 is left alone (ARP).  Numbered under
 * the port token, and by each steering class as it flushes its own
 * queues (steer.c): with classes, the numbers of a path are taken
 * atomically then, one count for them all, so that the peer reads one
 * run of numbers a path whichever queue each frame went by.
 */
static inline uint16_t number_take(uint16_t *next, bool shared)
{
	uint16_t v;

	if (shared) {
		do
			v = __atomic_add_fetch(next, 1, __ATOMIC_RELAXED);
		while (!v);
		return v;
	}
	v = (uint16_t)(*next + 1) ? (uint16_t)(*next + 1) : 1;
	*next = v;
	return v;
}

void srnic_port_udp_number(struct srnic_engine *eng, unsigned p,
			   struct rte_mbuf **m, uint16_t n)
{
	struct srnic_node *node = eng->node;
	bool shared = node->classes > 1;
	uint16_t i;

	for (i = 0; i < n; i++) {
		const uint8_t *f = rte_pktmbuf_mtod(m[i], const uint8_t *);
		uint32_t slot = m[i]->hash.usr & 0xff;
		unsigned path = m[i]->hash.usr >> 8 & 0xff;
		struct srnic_peer *peer;

		if (!slot || slot > SRNIC_MAX_PEERS ||
		    path >= SRNIC_UDP_PATHS)
			continue;
		peer = &node->peer[slot - 1];
		/* (the slot may have been taken since) */
		if (srnic_get16(f + 12) == SRNIC_ETHERTYPE_IPV6) {
			if (srnic_wire_udp6_seq(f) ||
			    memcmp(peer->ip6, srnic_wire_udp6_dst(f), 16))
				continue;
			srnic_wire_udp6_number(
				rte_pktmbuf_mtod(m[i], uint8_t *),
				number_take(&peer->paths[p].tx_seq[path],
					    shared));
			continue;
		}
		if (srnic_get16(f + 12) != SRNIC_ETHERTYPE_IPV4 ||
		    srnic_wire_udp_seq(f) ||
		    __atomic_load_n(&peer->ipv4, __ATOMIC_RELAXED) !=
			    srnic_wire_udp_dst(f))
			continue;
		srnic_wire_udp_number(rte_pktmbuf_mtod(m[i], uint8_t *),
				      number_take(&peer->paths[p].tx_seq[path],
						  shared));
	}
}

/* A frame of the peer at src came on path: counted for the control
 * core's measure of the path's losses, and a data frame's delay (from its
 * send time to its burst's arrival) summed for its measure of the path's
 * delay (control/paths.c), once it is known for one of ours (its CRC and
 * format checked), by the port's holder (the sorting of frames,
 * engine/dispatch.c).  The last peer a thread saw is its guess for the
 * next frame, checked. */
static __thread struct srnic_peer *rx_peer;

/*
 * With steering (queues > 1) a peer's frames on one path may come to each
 * class's queue (the peer's class 0 sends to any of our classes, and
 * every class's poll counts what it gets), so the counts are added by
 * more than one thread at once: atomically then, or two adds would be one
 * and the path would seem to lose a frame.  The highest number seen stays
 * a plain store: one a little behind reads as a window a little later.
 */
#define COUNT_ADD(c, v, shared)                                              \
	do {                                                                 \
		if (shared)                                                  \
			__atomic_fetch_add((c), (v), __ATOMIC_RELAXED);      \
		else                                                         \
			__atomic_store_n((c), *(c) + (v), __ATOMIC_RELAXED); \
	} while (0)

void srnic_port_udp_count(struct srnic_engine *eng, const struct rte_mbuf *m,
			  uint16_t ts)
{
	struct srnic_node *node = eng->node;
	struct srnic_peer *peer = rx_peer;
	uint32_t src = srnic_wire_mac_ip(rte_pktmbuf_mtod(m, const uint8_t *) +
					 6);
	unsigned path = m->hash.usr & 0xff, p = m->port;
	uint16_t seq = (uint16_t)(m->hash.usr >> 16);
	struct srnic_path_rx *r;
	int16_t ahead;
	bool shared;

	if (!seq || path >= SRNIC_UDP_PATHS || p >= node->nports || !src)
		return;
	if (!peer || peer < node->peer || peer >= node->peer + SRNIC_MAX_PEERS ||
	    __atomic_load_n(&peer->ipv4, __ATOMIC_RELAXED) != src) {
		peer = srnic_node_peer(node, src);
		if (!peer)
			return;
		rx_peer = peer;
	}
	r = &peer->paths[p].rx[path];
	shared = node->classes > 1;
	COUNT_ADD(&r->got, 1, shared);
	if (ts) {
		struct srnic_peer_paths *pp = &peer->paths[p];
		uint16_t owd = (uint16_t)(eng->rx_ts16 - ts);
		int16_t d = (int16_t)(owd - __atomic_load_n(&pp->owd_ref,
							    __ATOMIC_RELAXED));

		/* (summed as it differs from ref, signed: the control core
		 * keeps ref near the paths' delays, from a real one) */
		__atomic_store_n(&pp->owd_last, owd, __ATOMIC_RELAXED);
		COUNT_ADD(&r->owd_sum, d, shared);
		COUNT_ADD(&r->owd_n, 1, shared);
	}
	/* (the numbers run ahead; far behind is a sender that restarted;
	 * 0 is none yet) */
	ahead = (int16_t)(seq - r->top);
	if (ahead > 0 || ahead < -4096 || !r->top)
		__atomic_store_n(&r->top, seq, __ATOMIC_RELAXED);
}

uint16_t srnic_port_udp_strip(struct srnic_engine *eng,
			      struct rte_mbuf **pkts, uint16_t n, bool arp)
{
	bool v6 = eng->cfg.has_ipv6;
	uint16_t i, kept = 0, hlen = v6 ? SRNIC_UDP6_HLEN : SRNIC_UDP_HLEN;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct srnic_udp_rx h;
		enum srnic_wire_err e;
		uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);

		/* (a frame in more than one buffer is none of ours, whose
		 * every frame fits one: left for the codec to count) */
		if (m->nb_segs > 1) {
			pkts[kept++] = m;
			continue;
		}
		/* ARP, an IPv6 node's ICMPv6 (neighbour discovery): the
		 * control core's (control/arp.c, nd.c) */
		if (v6 ? srnic_wire_is_icmp6(f, rte_pktmbuf_data_len(m))
		       : srnic_wire_is_arp(f, rte_pktmbuf_data_len(m))) {
			if (!arp ||
			    rte_ring_sp_enqueue(eng->node->ctrl_rx, m) != 0)
				rte_pktmbuf_free(m);
			continue;
		}
		e = v6 ? srnic_wire_udp6_unwrap(f, rte_pktmbuf_data_len(m),
						eng->cfg.ipv6,
						(uint16_t)eng->cfg.udp_port, &h)
		       : srnic_wire_udp_unwrap(f, rte_pktmbuf_data_len(m),
					       eng->cfg.ipv4,
					       (uint16_t)eng->cfg.udp_port, &h);
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
		    srnic_get16(f + 12) == SRNIC_ETHERTYPE) {
			eng->st->drops[SRNIC_DROP_NOT_OURS]++;
			rte_pktmbuf_free(m);
			continue;
		}
		if (e == SRNIC_WIRE_OK) {
			f = (uint8_t *)rte_pktmbuf_adj(m, hlen);
			/* (the Ethernet padding goes, as the codec would
			 * take a CRC trailer to be the frame's last bytes) */
			if (rte_pktmbuf_pkt_len(m) > h.raw_len)
				rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) -
							    h.raw_len);
			/* (the sending node, not the last hop; the path it
			 * came on and whether to us alone, for the control
			 * core's HELLOs) */
			srnic_wire_ip_mac(h.src_ip, f + 6);
			m->hash.usr = h.path |
				      (h.to_me ? SRNIC_UDP_RX_UNICAST : 0) |
				      (uint32_t)h.seq << 16;
		}
		/* (NOT_OURS: as it came, for the codec to count) */
		pkts[kept++] = m;
	}
	return kept;
}
