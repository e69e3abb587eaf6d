/* SPDX-License-Identifier: MIT */
/*
 * ARP for a UDP node (encap = udp), on the control core, and the
 * neighbour table it keeps, which an IPv6 node's neighbour discovery
 * (nd.c) fills the same way: the node answers
 * for its address on every port, and finds the Ethernet address of each
 * next hop its frames go to (a peer on the segment, a router), which the
 * ports' senders read from the node's neighbour table (port/udp.c).  A
 * sender that finds no address for its hop leaves the hop in neigh_want,
 * drops the frame (drop unresolved: the QP sends it again) and the next
 * tick asks.  Peers are resolved as soon as they are heard, and the
 * routes' gateways and the configured peers from the start, so a QP's
 * first frames seldom meet an unknown hop.
 *
 * Entries are refreshed while they live (a hop that moves to another
 * Ethernet address is learned again from its answer, or at once from its
 * own ARP: every node says its address on each port as it starts).
 *
 * An IPv6 node's hops are keyed by their ids (srnic_wire_ip6_id), as
 * its peers are, with their addresses beside (struct srnic_neigh's
 * ip6): the senders look a hop up by the id, neighbour discovery asks
 * and answers by the address.
 */
#include <arpa/inet.h>
#include <string.h>

#include <rte_mbuf.h>

#include "srnic_control.h"

#define ASK_MS 200		/* an unknown hop asked again after */
#define ASK_SLOW_MS 1000	/* ... after ASK_TRIES unanswered */
#define ASK_TRIES 5
#define GIVE_UP_TRIES 20	/* ... and forgotten after this many */
#define REFRESH_MS 15000	/* a known one asked again after */
#define STALE_MS 60000		/* ... and forgotten unanswered this long */
#define ANNOUNCE_MS 500		/* the node's own ARPs at start, apart */
#define ANNOUNCES 3

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static uint64_t mac_word(const uint8_t m[6], unsigned p)
{
	return SRNIC_NEIGH_KNOWN | (uint64_t)p << SRNIC_NEIGH_PORT_SHIFT |
	       (uint64_t)srnic_get16(m) << 32 | srnic_get32(m + 2);
}

static bool known(const struct srnic_neigh *n)
{
	return __atomic_load_n(&n->mac, __ATOMIC_RELAXED) & SRNIC_NEIGH_KNOWN;
}

bool srnic_neigh_is(const struct srnic_neigh *n, const uint8_t mac[6])
{
	return known(n) && __atomic_load_n(&n->mac, __ATOMIC_RELAXED) ==
				   mac_word(mac, n->port);
}

/* An entry free again (a sender that still reads it finds it unknown
 * before it finds it gone). */
static void forget(struct srnic_neigh *n)
{
	__atomic_store_n(&n->mac, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&n->ipv4, 0, __ATOMIC_RELEASE);
}

struct rte_mbuf *srnic_neigh_frame(struct srnic_engine *eng, unsigned p,
				   uint32_t len, uint8_t **f)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(eng->node->pool);

	if (!m)
		return NULL;
	*f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	if (!*f) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	m->port = (uint16_t)p;
	m->hash.usr = 0;	/* (nobody's frame to number: port/udp.c) */
	return m;
}

/* An ARP frame out of port p. */
static void send_arp(struct srnic_engine *eng, unsigned p,
		     const uint8_t eth_dst[6], const struct srnic_arp *a)
{
	uint8_t *f;
	struct rte_mbuf *m = srnic_neigh_frame(eng, p, SRNIC_ARP_FRAME, &f);

	if (!m)
		return;
	srnic_wire_arp_encode(f, eth_dst, eng->node->port[p].mac, a);
	srnic_control_queue(eng, m);
}

/* Who has tpa, asked on port p (tpa our own: the node says its address). */
static void request(struct srnic_engine *eng, unsigned p, uint32_t tpa)
{
	struct srnic_arp a = {.op = SRNIC_ARP_REQUEST,
			      .spa = eng->cfg.ipv4,
			      .tpa = tpa};

	memcpy(a.sha, eng->node->port[p].mac, 6);
	send_arp(eng, p, bcast, &a);
}

static void ask(struct srnic_engine *eng, struct srnic_neigh *n, uint64_t now)
{
	if (eng->cfg.has_ipv6)
		srnic_nd_solicit(eng, n->port, n->ip6);
	else
		request(eng, n->port, n->ipv4);
	n->asked_ms = now;
	n->tries++;
	eng->st->arp_asked++;
}

struct srnic_neigh *srnic_neigh_find(struct srnic_node *node, uint32_t ip,
				     unsigned p)
{
	unsigned i;

	for (i = 0; i < SRNIC_MAX_NEIGH; i++)
		if (node->neigh[i].ipv4 == ip && node->neigh[i].port == p)
			return &node->neigh[i];
	return NULL;
}

/* Which of two entries to give up first when the table is full: one
 * never answered (the most tries first) before one known, of those the
 * one heard from longest ago. */
static bool worse(const struct srnic_neigh *a, const struct srnic_neigh *b)
{
	if (known(a) != known(b))
		return !known(a);
	if (!known(a))
		return a->tries > b->tries;
	return a->heard_ms < b->heard_ms;
}

/* An entry for hop ip on port p (an IPv6 node's: of id ip, at address
 * ip6): its own, or a free one, or the one the table misses least (worse;
 * a hop still in use that loses its entry is asked for again, as any). */
struct srnic_neigh *srnic_neigh_entry(struct srnic_engine *eng, uint32_t ip,
				      const uint8_t *ip6, unsigned p,
				      uint64_t now)
{
	struct srnic_node *node = eng->node;
	struct srnic_neigh *n = srnic_neigh_find(node, ip, p), *old = NULL;
	unsigned i;

	if (n)
		return n;
	for (i = 0; i < SRNIC_MAX_NEIGH && !n; i++) {
		if (!node->neigh[i].ipv4)
			n = &node->neigh[i];
		else if (!old || worse(&node->neigh[i], old))
			old = &node->neigh[i];
	}
	if (!n)
		n = old;
	/* (unknown first: a sender that still reads the old hop must not
	 * pair it with the new one's address) */
	__atomic_store_n(&n->mac, 0, __ATOMIC_RELEASE);
	n->port = (uint8_t)p;
	n->asked_ms = 0;
	n->heard_ms = now;
	n->tries = 0;
	memset(n->ip6, 0, 16);
	if (ip6)
		memcpy(n->ip6, ip6, 16);
	__atomic_store_n(&n->ipv4, ip, __ATOMIC_RELEASE);
	return n;
}

void srnic_neigh_learned(struct srnic_engine *eng, struct srnic_neigh *n,
			 const uint8_t mac[6], uint64_t now)
{
	uint64_t w = mac_word(mac, n->port);
	char hop[INET6_ADDRSTRLEN];
	uint32_t ip = htonl(n->ipv4);

	if (__atomic_load_n(&n->mac, __ATOMIC_RELAXED) != w) {
		if (eng->cfg.has_ipv6)
			inet_ntop(AF_INET6, n->ip6, hop, sizeof(hop));
		else
			inet_ntop(AF_INET, &ip, hop, sizeof(hop));
		ctl_log(eng, "next hop %s on port %u is "
			"%02x:%02x:%02x:%02x:%02x:%02x", hop, n->port, mac[0],
			mac[1], mac[2], mac[3], mac[4], mac[5]);
		__atomic_store_n(&n->mac, w, __ATOMIC_RELEASE);
		eng->st->arp_learned++;
	}
	n->heard_ms = now;
	n->tries = 0;
}

/* Whether ip is a hop this node sends through: a route's gateway, a
 * configured peer, a peer heard (an IPv6 node's: by their ids). */
bool srnic_neigh_ours(struct srnic_engine *eng, uint32_t ip)
{
	unsigned i;

	for (i = 0; i < eng->cfg.nroutes; i++)
		if (eng->cfg.route[i].gw == ip)
			return true;
	return srnic_config_has_peer(&eng->cfg, ip) ||
	       srnic_peer_find(eng, ip) != NULL;
}

void srnic_arp_rx(struct srnic_engine *eng, struct rte_mbuf *m,
		  uint64_t now)
{
	unsigned p = m->port;
	struct srnic_neigh *n;
	struct srnic_arp a;

	if (p >= eng->node->nports ||
	    srnic_wire_arp_decode(rte_pktmbuf_mtod(m, const uint8_t *),
				  rte_pktmbuf_data_len(m), &a) !=
		    SRNIC_WIRE_OK) {
		eng->st->arp_refused++;
		return;
	}
	/* What the sender says of itself: news for a hop we send to, and
	 * for one that asks for us and that we would send through (a
	 * gateway, a peer: it is about to send to us).  Anyone else on the
	 * segment could ask, from any address: not taken in. */
	if (a.spa && a.spa != eng->cfg.ipv4) {
		n = srnic_neigh_find(eng->node, a.spa, p);
		if (!n && a.op == SRNIC_ARP_REQUEST &&
		    a.tpa == eng->cfg.ipv4 && srnic_neigh_ours(eng, a.spa))
			n = srnic_neigh_entry(eng, a.spa, NULL, p, now);
		if (n)
			srnic_neigh_learned(eng, n, a.sha, now);
	}
	if (a.op == SRNIC_ARP_REQUEST && a.tpa == eng->cfg.ipv4 &&
	    a.spa != eng->cfg.ipv4) {
		struct srnic_arp r = {.op = SRNIC_ARP_REPLY,
				      .spa = eng->cfg.ipv4,
				      .tpa = a.spa};

		memcpy(r.sha, eng->node->port[p].mac, 6);
		memcpy(r.tha, a.sha, 6);
		send_arp(eng, p, a.sha, &r);
		eng->st->arp_answered++;
	}
}

/* The next hop of the node of id dst on port p (an IPv6 node's: its
 * address in hop6 too); 0 when an IPv6 node knows no address for dst. */
static uint32_t next_hop(struct srnic_engine *eng, unsigned p, uint32_t dst,
			 uint8_t hop6[16])
{
	uint8_t dst6[16];

	if (!eng->cfg.has_ipv6)
		return srnic_config_next_hop(&eng->cfg, p, dst);
	if (!srnic_node_addr6(eng->node, &eng->cfg, dst, dst6))
		return 0;
	srnic_config_next_hop6(&eng->cfg, p, dst6, hop6);
	return srnic_wire_ip6_id(hop6);
}

void srnic_arp_want(struct srnic_engine *eng, unsigned p, uint32_t dst)
{
	uint8_t hop6[16];
	uint32_t hop;

	if (!eng->cfg.encap_udp || p >= eng->node->nports)
		return;
	hop = next_hop(eng, p, dst, hop6);
	if (hop)
		srnic_neigh_entry(eng, hop, eng->cfg.has_ipv6 ? hop6 : NULL, p,
				  srnic_ms());
}

/* The entry of dst's next hop on port p, or NULL. */
static struct srnic_neigh *hop_entry(struct srnic_engine *eng, unsigned p,
				     uint32_t dst)
{
	uint8_t hop6[16];
	uint32_t hop = next_hop(eng, p, dst, hop6);

	return hop ? srnic_neigh_find(eng->node, hop, p) : NULL;
}

/* An IPv6 node's hop of id id, which a sender missed (neigh_want): its
 * address, a route's gateway's or a peer's on the segment; false for
 * none known. */
static bool hop_addr6(struct srnic_engine *eng, uint32_t id, uint8_t out[16])
{
	unsigned i;

	for (i = 0; i < eng->cfg.nroutes; i++)
		if (eng->cfg.route[i].gw == id) {
			memcpy(out, eng->cfg.route[i].gw6, 16);
			return true;
		}
	return srnic_node_addr6(eng->node, &eng->cfg, id, out);
}

void srnic_arp_recheck(struct srnic_engine *eng, unsigned p, uint32_t dst)
{
	struct srnic_neigh *n = hop_entry(eng, p, dst);
	char peer[INET6_ADDRSTRLEN];
	uint8_t dst6[16];
	uint32_t ip = htonl(dst);

	/* (due for its refresh now: the tick asks, as often as an
	 * unanswered refresh is asked) */
	if (n && known(n) && srnic_ms() - n->heard_ms < REFRESH_MS) {
		if (eng->cfg.has_ipv6 &&
		    srnic_node_addr6(eng->node, &eng->cfg, dst, dst6))
			inet_ntop(AF_INET6, dst6, peer, sizeof(peer));
		else
			inet_ntop(AF_INET, &ip, peer, sizeof(peer));
		ctl_log(eng, "next hop of %s on port %u: asked again", peer,
			p);
		n->heard_ms = srnic_ms() - REFRESH_MS;
	}
}

bool srnic_arp_ready(struct srnic_engine *eng, unsigned p, uint32_t dst)
{
	struct srnic_neigh *n = hop_entry(eng, p, dst);

	return n && known(n);
}

void srnic_arp_tick(struct srnic_engine *eng, uint64_t now)
{
	struct srnic_node *node = eng->node;
	uint8_t hop6[16];
	unsigned p, i;
	uint32_t hop;

	if (!eng->cfg.encap_udp)
		return;
	for (p = 0; p < node->nports; p++) {
		if (!node->port[p].polling)
			continue;
		/* The node's own address, said as it starts (a hop that
		 * kept another Ethernet address for it learns this one). */
		if (eng->arp_announced[p] < ANNOUNCES &&
		    now - eng->arp_announce_ms[p] >= ANNOUNCE_MS) {
			if (eng->cfg.has_ipv6) {
				srnic_mld_report(eng, p, false, now);
				srnic_nd_announce(eng, p);
			} else {
				request(eng, p, eng->cfg.ipv4);
			}
			eng->arp_announced[p]++;
			eng->arp_announce_ms[p] = now;
		}
		if (eng->cfg.has_ipv6)
			srnic_mld_tick(eng, p, now);
		hop = __atomic_exchange_n(&node->neigh_want[p], 0,
					  __ATOMIC_ACQ_REL);
		if (hop && !eng->cfg.has_ipv6)
			srnic_neigh_entry(eng, hop, NULL, p, now);
		else if (hop && hop_addr6(eng, hop, hop6))
			srnic_neigh_entry(eng, hop, hop6, p, now);
		/* (a gateway is a hop itself, whatever a route to its
		 * address would say) */
		for (i = 0; i < eng->cfg.nroutes; i++) {
			const struct srnic_route_conf *r = &eng->cfg.route[i];

			if (r->port < 0 || r->port == (int)p)
				srnic_neigh_entry(eng, r->gw,
						  r->v6 ? r->gw6 : NULL, p, now);
		}
		for (i = 0; i < eng->cfg.npeers; i++)
			srnic_arp_want(eng, p, eng->cfg.peer[i]);
	}
	for (i = 0; i < SRNIC_MAX_NEIGH; i++) {
		struct srnic_neigh *n = &node->neigh[i];

		if (!n->ipv4 || !node->port[n->port].polling)
			continue;
		/* (a hop nobody answers for is forgotten, until a sender or
		 * a peer wants it again) */
		if (!known(n) ? n->tries >= GIVE_UP_TRIES
			      : now - n->heard_ms >= STALE_MS) {
			forget(n);
			continue;
		}
		if (!known(n) ? now - n->asked_ms >= (n->tries < ASK_TRIES
							      ? ASK_MS
							      : ASK_SLOW_MS)
			      : now - n->heard_ms >= REFRESH_MS &&
					now - n->asked_ms >=
						ASK_MS * (1 + n->tries))
			ask(eng, n, now);
	}
}
