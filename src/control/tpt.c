/* SPDX-License-Identifier: MIT */
/*
 * The system-wide protection table (seed 004; docs/published-keys.md):
 * the regions a node's programs publish by name, and every integrated
 * peer's copy of them.
 *
 *  - A program publishes (srnic_tpt_publish, on its own thread, under
 *    mcast_lock): the node's table gets a new generation.
 *  - The control core sends each peer that is integrated both ways
 *    (Fig. 8 S29: updates start after the peer's RDMA_READY) the whole
 *    table, a TPT_UPDATE an entry, every TPT_RESEND_MS until the peer
 *    answers TPT_ACK of the generation it holds now.
 *  - A peer takes a generation whole or not at all: it gathers the
 *    entries and swaps its copy in once every one is there.
 *  - A new incarnation of a peer (its BOOTING, any frame of it) empties
 *    its copy at once (Fig. 8 S26), and its new table comes only after
 *    integration.  A lookup also checks that the copy is of the peer's
 *    current incarnation and that the peer is integrated, so no lookup
 *    returns a key of a process that has gone.
 *
 * Control core: srnic_tpt_tick, srnic_tpt_rx, srnic_tpt_forget.  Any
 * thread: publish, unpublish, release, lookup.
 */
#define ALLOW_EXPERIMENTAL_API	/* rte_seqcount (DPDK 22.07) */
#include <errno.h>
#include <string.h>

#include "srnic_control.h"

#define TPT_RESEND_MS 50

/* ---- the node's own table (any thread, under mcast_lock) ---- */

static int find(const struct srnic_tpt *t, uint32_t name)
{
	unsigned i;

	for (i = 0; i < t->n && i < SRNIC_TPT_MAX; i++)
		if (t->e[i].name == name)
			return (int)i;
	return -1;
}

/* The node's table as its writers find it: processes share it, and one
 * may have left n anything (a hostile one, or a holder of the lock that
 * was stepped over while it stood still). */
static void sane(struct srnic_tpt *t)
{
	if (t->n > SRNIC_TPT_MAX)
		t->n = SRNIC_TPT_MAX;
}

/* Take out every entry that matches; true when one did.  (The last
 * moves into the hole: the order of a table means nothing.) */
static bool remove_where(struct srnic_tpt *t, uint8_t owner, uint32_t rkey,
			 bool any_key)
{
	bool removed = false;
	unsigned i = 0;

	sane(t);
	while (i < t->n) {
		if (t->e[i].owner == owner &&
		    (any_key || t->e[i].rkey == rkey)) {
			t->e[i] = t->e[--t->n];
			removed = true;
		} else {
			i++;
		}
	}
	if (removed)
		t->gen++;
	return removed;
}

int srnic_tpt_publish(struct srnic_node *node, unsigned slot,
		      const struct srnic_tpt_entry *e)
{
	struct srnic_tpt *t = &node->tpt;
	int rc = 0;

	if (!e->name || !e->access || (e->access & ~SRNIC_TPT_RIGHTS) ||
	    e->addr + e->length < e->addr)
		return -EINVAL;
	bool held = srnic_shared_lock(node, &node->mcast_lock);
	sane(t);
	if (find(t, e->name) >= 0) {
		rc = -EEXIST;
	} else if (t->n >= SRNIC_TPT_MAX) {
		rc = -ENOSPC;
	} else {
		t->e[t->n] = *e;
		t->e[t->n].owner = (uint8_t)(slot + 1);
		t->n++;
		t->gen++;
	}
	srnic_shared_unlock(&node->mcast_lock, held);
	return rc;
}

int srnic_tpt_unpublish(struct srnic_node *node, unsigned slot, uint32_t rkey)
{
	bool removed;

	bool held = srnic_shared_lock(node, &node->mcast_lock);
	removed = remove_where(&node->tpt, (uint8_t)(slot + 1), rkey, false);
	srnic_shared_unlock(&node->mcast_lock, held);
	return removed ? 0 : -ENOENT;
}

int srnic_tpt_follow(struct srnic_node *node, unsigned slot, uint32_t rkey,
		     uint64_t addr, uint64_t length, uint8_t access)
{
	struct srnic_tpt *t = &node->tpt;
	uint8_t owner = (uint8_t)(slot + 1);
	bool found = false;
	unsigned i;

	if (!access)
		return srnic_tpt_unpublish(node, slot, rkey);
	bool held = srnic_shared_lock(node, &node->mcast_lock);
	sane(t);
	for (i = 0; i < t->n; i++)
		if (t->e[i].owner == owner && t->e[i].rkey == rkey) {
			t->e[i].addr = addr;
			t->e[i].length = length;
			t->e[i].access = access;
			found = true;
		}
	if (found)
		t->gen++;
	srnic_shared_unlock(&node->mcast_lock, held);
	return found ? 0 : -ENOENT;
}

void srnic_tpt_forget_own(struct srnic_node *node)
{
	bool held = srnic_shared_lock(node, &node->mcast_lock);
	node->tpt.n = 0;
	node->tpt.gen++;
	srnic_shared_unlock(&node->mcast_lock, held);
}

void srnic_tpt_release_proc(struct srnic_node *node, unsigned slot)
{
	bool held = srnic_shared_lock(node, &node->mcast_lock);
	remove_where(&node->tpt, (uint8_t)(slot + 1), 0, true);
	srnic_shared_unlock(&node->mcast_lock, held);
}

/* The node's table as it is now. */
static void own_table(struct srnic_node *node, struct srnic_tpt *copy)
{
	bool held = srnic_shared_lock(node, &node->mcast_lock);
	*copy = node->tpt;
	srnic_shared_unlock(&node->mcast_lock, held);
	if (copy->n > SRNIC_TPT_MAX)	/* (a process wrote it) */
		copy->n = SRNIC_TPT_MAX;
}

/* ---- peers' copies ---- */

/* A peer's copy, read whole (the control core may be swapping it). */
static void peer_table(const struct srnic_peer *peer, struct srnic_tpt *copy)
{
	uint32_t sn;

	do {
		sn = rte_seqcount_read_begin(&peer->tpt.sc);
		copy->inc = peer->tpt.inc;
		copy->gen = peer->tpt.gen;
		copy->n = peer->tpt.n;
		memcpy(copy->e, peer->tpt.e, sizeof(copy->e));
	} while (rte_seqcount_read_retry(&peer->tpt.sc, sn));
}

int srnic_tpt_lookup(struct srnic_engine *eng, uint32_t ipv4, uint32_t name,
		     struct srnic_tpt_entry *out)
{
	struct srnic_peer *peer;
	struct srnic_tpt t;
	int i;

	if (ipv4 == eng->cfg.ipv4) {
		own_table(eng->node, &t);
	} else {
		peer = srnic_node_peer(eng->node, ipv4);
		if (!peer || !srnic_peer_integrated(peer) ||
		    !srnic_peer_heard(eng, peer))
			return -ENOENT;
		peer_table(peer, &t);
		/* (a copy of the process it had before: emptied soon, but
		 * never handed out meanwhile) */
		if (t.inc != __atomic_load_n(&peer->inc, __ATOMIC_ACQUIRE) ||
		    !srnic_peer_integrated(peer))
			return -ENOENT;
	}
	i = find(&t, name);
	if (i < 0)
		return -ENOENT;
	*out = t.e[i];
	out->owner = 0;
	return 0;
}

/* Control core: the peer's copy becomes t (inc 0: none). */
static void install(struct srnic_peer *peer, const struct srnic_tpt *t)
{
	rte_seqcount_write_begin(&peer->tpt.sc);
	peer->tpt.inc = t->inc;
	peer->tpt.gen = t->gen;
	peer->tpt.n = t->n;
	memcpy(peer->tpt.e, t->e, sizeof(t->e));
	rte_seqcount_write_end(&peer->tpt.sc);
}

void srnic_tpt_forget(struct srnic_engine *eng, struct srnic_peer *peer)
{
	static const struct srnic_tpt none;

	if (peer->tpt.inc || peer->tpt.n) {
		install(peer, &none);
		eng->st->tpt_purged++;
	}
	peer->tpt_in.inc = 0;
	peer->tpt_in_got = 0;
	peer->tpt_acked_inc = 0;
	peer->tpt_sent_at = 0;
	peer->tpt_sends = 0;
}

/* ---- the exchange (control core) ---- */

/* A port that reaches the peer, a different one each round where it has
 * several (a lossy port does not starve the table); -1: none. */
static int tpt_port(const struct srnic_engine *eng,
		    const struct srnic_peer *peer)
{
	uint8_t reach = srnic_peer_reach(eng, peer);
	unsigned k, n = eng->node->nports;

	for (k = 0; k < n; k++) {
		unsigned p = (peer->tpt_sends + k) % n;

		if (reach & (1u << p))
			return (int)p;
	}
	return -1;
}

/* The whole of our table to the peer, an entry a frame (one frame with
 * count 0 for an empty table). */
static void send_table(struct srnic_engine *eng, struct srnic_peer *peer,
		       const struct srnic_tpt *t, unsigned p)
{
	struct srnic_pkt pkt;
	unsigned i = 0;

	do {
		srnic_control_pkt(eng, SRNIC_OP_TPT_UPDATE, p, &pkt);
		pkt.tpt_gen = t->gen;
		pkt.tpt_count = (uint8_t)t->n;
		if (t->n) {
			pkt.tpt_index = (uint8_t)i;
			pkt.tpt_name = t->e[i].name;
			pkt.tpt_rkey = t->e[i].rkey;
			pkt.tpt_access = t->e[i].access;
			pkt.tpt_addr = t->e[i].addr;
			pkt.tpt_length = t->e[i].length;
		}
		if (srnic_control_send_peer(eng, peer, &pkt, p))
			eng->st->tpt_sent++;
	} while (++i < t->n);
}

void srnic_tpt_tick(struct srnic_engine *eng, uint64_t now)
{
	struct srnic_tpt own;
	unsigned i;
	int p;

	/* (before the peer lock: nothing takes them in the other order) */
	own_table(eng->node, &own);
	bool held = srnic_peer_lock(eng->node);
	for (i = 0; i < srnic_npeers(eng->node); i++) {
		struct srnic_peer *peer = &eng->node->peer[i];

		if (!srnic_peer_integrated(peer) ||
		    now - peer->tpt_sent_at < TPT_RESEND_MS)
			continue;
		if (peer->tpt_acked_inc == peer->inc &&
		    peer->tpt_acked == own.gen)
			continue;
		p = tpt_port(eng, peer);
		if (p < 0)
			continue;
		send_table(eng, peer, &own, (unsigned)p);
		peer->tpt_sent_at = now;
		peer->tpt_sends++;
	}
	srnic_peer_unlock(eng->node, held);
}

/* Entry pkt of generation pkt->tpt_gen into the peer's gathering; true
 * when that generation is whole. */
static bool gather(struct srnic_peer *peer, const struct srnic_pkt *pkt)
{
	struct srnic_tpt *in = &peer->tpt_in;
	struct srnic_tpt_entry *e;

	if (in->inc != peer->inc || in->gen != pkt->tpt_gen ||
	    in->n != pkt->tpt_count) {
		in->inc = peer->inc;
		in->gen = pkt->tpt_gen;
		in->n = pkt->tpt_count;
		peer->tpt_in_got = 0;
	}
	if (in->n) {
		e = &in->e[pkt->tpt_index];
		memset(e, 0, sizeof(*e));
		e->name = pkt->tpt_name;
		e->rkey = pkt->tpt_rkey;
		e->access = pkt->tpt_access;
		e->addr = pkt->tpt_addr;
		e->length = pkt->tpt_length;
		peer->tpt_in_got |= 1ull << pkt->tpt_index;
	}
	return peer->tpt_in_got == (in->n ? (2ull << (in->n - 1)) - 1 : 0);
}

/* A TPT_UPDATE of the peer's current incarnation: gathered; once its
 * generation is whole, it is the peer's copy, and acknowledged (as is an
 * entry of the generation the copy has already). */
static void take_update(struct srnic_engine *eng, struct srnic_peer *peer,
			const struct srnic_pkt *pkt, unsigned p)
{
	struct srnic_pkt ack;
	bool have = peer->tpt.inc == peer->inc && peer->tpt.gen == pkt->tpt_gen;

	if (!have && peer->tpt.inc == peer->inc &&
	    (int32_t)(pkt->tpt_gen - peer->tpt.gen) < 0) {
		eng->st->tpt_refused++;	/* older than the copy */
		return;
	}
	if (!have) {
		if (!gather(peer, pkt))
			return;
		install(peer, &peer->tpt_in);
		eng->st->tpt_taken++;
	}
	srnic_control_pkt(eng, SRNIC_OP_TPT_ACK, p, &ack);
	ack.tpt_gen = pkt->tpt_gen;
	srnic_control_send_peer(eng, peer, &ack, p);
}

void srnic_tpt_rx(struct srnic_engine *eng, const struct srnic_pkt *pkt,
		  unsigned p)
{
	struct srnic_peer *peer;

	if (pkt->dst_inc != eng->node->inc || p >= eng->node->nports) {
		eng->st->tpt_refused++;	/* for an earlier process of ours */
		return;
	}
	bool held = srnic_peer_lock(eng->node);
	peer = srnic_peer_find(eng, pkt->ipv4);
	if (!peer || pkt->src_inc != peer->inc ||
	    !srnic_peer_integrated(peer)) {
		eng->st->tpt_refused++;	/* it sends again once we are */
	} else if (pkt->opcode == SRNIC_OP_TPT_ACK) {
		peer->tpt_acked = pkt->tpt_gen;
		peer->tpt_acked_inc = peer->inc;
	} else {
		take_update(eng, peer, pkt, p);
	}
	srnic_peer_unlock(eng->node, held);
}
