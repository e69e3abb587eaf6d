/* SPDX-License-Identifier: MIT */
/*
 * A member's side of multicast RDMA WRITE, on the datapath: each packet of
 * a sender's message lands at its offset in this process's region for the
 * group, checked as any placement is (the region's key, its bounds, its
 * rights), in any order, once.  The member keeps, per sender QP, which
 * packets of its current message landed, and answers by unicast to the
 * frame's source: every SRNIC_GROUP_ACK_EVERY packets, when the message is
 * whole, and at once to a probe.  An answer names the first packet missing
 * and which of the 64 after it are (a SACK), or says the message is whole.
 * A packet the region refuses is answered with an access NAK: the sender
 * gives this member up for that message.
 */
#include <string.h>

#include <rte_mbuf.h>

#include "srnic_group.h"
#include "srnic_port.h"

/* Packets landed between two answers of a message that is not whole. */
#define SRNIC_GROUP_ACK_EVERY 16

/* The sender's entry (incarnation and QP name it) in its set; else a
 * free one, or the one silent longest if that is past
 * SRNIC_GROUP_FORGET_MS, cleared for it; else NULL. */
static struct srnic_group_source *source_of(struct srnic_engine *eng,
					    const struct srnic_pkt *pkt,
					    uint64_t now)
{
	uint32_t h = (pkt->src_inc * 0x9e3779b1u) ^ (pkt->src_qpn * 0x85ebca6bu);
	struct srnic_group_source *set, *s, *old = NULL;
	unsigned i;

	h ^= h >> 16;
	set = &eng->group_src[(h % SRNIC_GROUP_SOURCE_SETS) *
			      SRNIC_GROUP_SOURCE_WAYS];
	for (i = 0; i < SRNIC_GROUP_SOURCE_WAYS; i++) {
		s = &set[i];
		if (s->inc == pkt->src_inc && s->qpn == pkt->src_qpn)
			return s;
		if (!old || !s->inc || (old->inc && s->heard < old->heard))
			old = s;
	}
	if (old->inc &&
	    now - old->heard < SRNIC_GROUP_FORGET_MS * 1000 * eng->tsc_per_us)
		return NULL;
	srnic_track_fini(&old->trk);
	memset(old, 0, sizeof(*old));
	old->inc = pkt->src_inc;
	old->qpn = pkt->src_qpn;
	return old;
}

/* Answer the sender of pkt (about its message pkt->msn) on the port the
 * frame came in, to its source address: whole, or what s lacks of it, or
 * a NAK. */
static void answer(struct srnic_engine *eng, struct srnic_group_source *s,
		   const struct srnic_pkt *pkt, const struct rte_mbuf *m,
		   uint8_t syndrome)
{
	const uint8_t *src = rte_pktmbuf_mtod(m, const uint8_t *) + 6;
	struct srnic_pkt a;
	struct rte_mbuf *out;
	uint32_t first, i;

	if (m->port >= eng->node->nports)
		return;
	memset(&a, 0, sizeof(a));
	a.opcode = SRNIC_OP_ACK;
	a.flags = SRNIC_F_GROUP;
	a.dst_qpn = pkt->src_qpn;
	a.src_inc = eng->node->inc;
	a.dst_inc = pkt->src_inc;
	a.msn = pkt->msn;
	a.syndrome = syndrome;
	if (!syndrome && s->started && s->msn == pkt->msn &&
	    s->trk.ndone < s->trk.npkts) {
		first = srnic_track_next(&s->trk, 0, false);
		a.flags |= SRNIC_F_SACK;
		a.sack_msn = pkt->msn;
		a.sack_first = first;
		for (i = 0; i < 64 && first + 1 + i < s->trk.npkts; i++)
			if (!srnic_track_test(&s->trk, first + 1 + i))
				a.sack_bits |= 1ull << i;
	}
	out = srnic_pkt_alloc(eng, &a, src, m->port, NULL);
	if (!out)
		return;
	srnic_port_tx(eng, m->port, out);
	s->acked = s->trk.ndone;
	eng->st->mc_acks++;
}

/* Whether this process's region for the group takes the packet's bytes;
 * counts a refusal. */
static bool region_takes(struct srnic_engine *eng, const struct srnic_pkt *pkt,
			 uint64_t *dst)
{
	const struct srnic_group_region *r =
		&eng->group[pkt->rkey % SRNIC_MAX_GROUPS];
	enum srnic_mem_check c = SRNIC_MEM_BAD_KEY;

	if (r->key && pkt->pkt_len <= r->length &&
	    pkt->va <= r->length - pkt->pkt_len)
		c = srnic_mem_check(&eng->mem, r->key, r->pd, r->addr + pkt->va,
				    pkt->pkt_len, SRNIC_ACCESS_REMOTE_WRITE);
	else if (r->key)
		c = SRNIC_MEM_OUT_OF_BOUNDS;
	switch (c) {
	case SRNIC_MEM_OK:
		*dst = r->addr + pkt->va;
		return true;
	case SRNIC_MEM_OUT_OF_BOUNDS:
		eng->st->drops[SRNIC_DROP_OUT_OF_BOUNDS]++;
		break;
	case SRNIC_MEM_NO_RIGHTS:
		eng->st->drops[SRNIC_DROP_NO_RIGHTS]++;
		break;
	default:
		/* (deregistered since the poller routed it here) */
		eng->st->drops[SRNIC_DROP_NOT_MEMBER]++;
		break;
	}
	return false;
}

/* Whether pkt's sender may write the group; counts a refusal.  Checked
 * before the sender takes an entry, so that forged packets cannot crowd
 * real senders out. */
static bool may_write(struct srnic_engine *eng, const struct srnic_pkt *pkt)
{
	/* Our own, back from a wire: we are not our own member. */
	if (pkt->src_inc == eng->node->inc) {
		eng->st->drops[SRNIC_DROP_NOT_OURS]++;
		return false;
	}
	/* Only a holder of the cluster key makes the tag (tag.c). */
	if (pkt->rkey != srnic_group_rkey(eng, pkt->rkey % SRNIC_MAX_GROUPS,
					  pkt->src_inc)) {
		eng->st->drops[SRNIC_DROP_BAD_KEY]++;
		return false;
	}
	return true;
}

/* The completion of a message that landed whole, in the region's CQ
 * (srnic_group_notify): where it starts in the region and its length,
 * the sending QP, and the group as immediate data.  Its room was made
 * sure of before the last packet was placed. */
static void landed(const struct srnic_group_region *r,
		   const struct srnic_pkt *pkt)
{
	struct srnic_cqe *c = srnic_cq_slot(r->cq);

	memset(c, 0, sizeof(*c));
	c->wr_id = pkt->va - pkt->msg_off;
	c->qp_num = SRNIC_QPN_MCAST;
	c->src_qp = pkt->src_qpn;
	c->byte_len = pkt->msg_len;
	c->opcode = SRNIC_WC_RECV_RDMA_WITH_IMM;
	c->flags = SRNIC_WC_F_IMM;
	c->imm = rte_cpu_to_be_32(pkt->rkey % SRNIC_MAX_GROUPS);
	srnic_cq_publish(r->cq);
}

enum place_result { PLACED, DUPLICATE, NO_ROOM, FAULTED };

/* pkt's bytes at dst, unless they landed before.  The packet that makes
 * the message whole waits for room in the region's CQ for its completion
 * (dropped, it comes again as a repair). */
static enum place_result place(struct srnic_engine *eng,
			       const struct srnic_group_region *r,
			       struct srnic_group_source *s,
			       const struct srnic_pkt *pkt, uint64_t dst)
{
	uint32_t idx = pkt->msg_off >> pkt->stride_shift;

	if (srnic_track_test(&s->trk, idx)) {
		eng->st->drops[SRNIC_DROP_DUPLICATE]++;
		return DUPLICATE;
	}
	if (r->cq && s->trk.ndone + 1 == s->trk.npkts &&
	    !srnic_cq_room(r->cq)) {
		eng->st->drops[SRNIC_DROP_CQ_FULL]++;
		return NO_ROOM;
	}
	if (pkt->pkt_len &&
	    !srnic_mem_copy(&eng->mem, (void *)(uintptr_t)dst, pkt->payload,
			    pkt->pkt_len)) {
		srnic_page_fault(eng, r->key);
		return FAULTED;
	}
	srnic_track_mark(&s->trk, idx);
	if (r->cq && s->trk.ndone == s->trk.npkts)
		landed(r, pkt);
	return PLACED;
}

void srnic_group_member_rx(struct srnic_engine *eng,
			   const struct srnic_pkt *pkt,
			   const struct rte_mbuf *m)
{
	struct srnic_group_source *s;
	uint64_t dst, now;
	bool fresh = false;

	if (!may_write(eng, pkt))
		return;
	now = srnic_now();
	s = source_of(eng, pkt, now);
	if (!s) {
		eng->st->drops[SRNIC_DROP_MC_SOURCES_FULL]++;
		return;
	}
	s->heard = now;
	if (s->started && (int32_t)(pkt->msn - s->msn) < 0) {
		/* A message done before (the sender starts one only when
		 * every member has the last): it lost our answer. */
		eng->st->drops[SRNIC_DROP_DUPLICATE]++;
		if (pkt->flags & (SRNIC_F_PROBE | SRNIC_F_LAST))
			answer(eng, s, pkt, m, SRNIC_ACK_OK);
		return;
	}
	if (!s->started || pkt->msn != s->msn) {
		if (srnic_track_init_within(&s->trk, pkt->msg_len,
					    pkt->stride_shift,
					    &eng->map_budget)) {
			eng->st->drops[SRNIC_DROP_OVER_BUDGET]++;
			s->started = 0;
			return;
		}
		s->msn = pkt->msn;
		s->started = 1;
		s->acked = 0;
		s->nak = 0;
	} else if (s->trk.shift != pkt->stride_shift ||
		   s->trk.npkts != srnic_track_npkts(pkt->msg_len,
						     pkt->stride_shift)) {
		eng->st->drops[SRNIC_DROP_MALFORMED]++;	/* not its message */
		return;
	}
	if (s->nak || !region_takes(eng, pkt, &dst)) {
		s->nak = 1;
		answer(eng, s, pkt, m, SRNIC_NAK_ACCESS);
		return;
	}
	switch (place(eng, &eng->group[pkt->rkey % SRNIC_MAX_GROUPS], s, pkt,
		      dst)) {
	case PLACED:
		eng->st->mc_placed++;
		/* (a repair comes to this node's own address) */
		if (!(rte_pktmbuf_mtod(m, const uint8_t *)[0] & 1))
			eng->st->mc_unicast++;
		fresh = true;
		break;
	case FAULTED:
		s->nak = 1;
		answer(eng, s, pkt, m, SRNIC_NAK_ACCESS);
		return;
	case NO_ROOM:
		return;
	case DUPLICATE:
		break;
	}
	if (s->trk.ndone == s->trk.npkts
		    ? fresh || (pkt->flags & (SRNIC_F_PROBE | SRNIC_F_LAST))
		    : (pkt->flags & SRNIC_F_PROBE) ||
			      s->trk.ndone - s->acked >= SRNIC_GROUP_ACK_EVERY)
		answer(eng, s, pkt, m, SRNIC_ACK_OK);
}
