/* SPDX-License-Identifier: MIT */
/*
 * Responder, one packet of a request (datapath thread): places incoming
 * SEND and WRITE packets straight into memory, in whatever order they
 * arrive.
 *
 * Each message in the window [exp_msn, exp_msn + SRNIC_WINDOW) has a slot
 * that records its transaction id and which of its packets have landed.
 * A packet of an older attempt (smaller txid) or of a message already done is
 * dropped: that is the at-most-once rule.  Messages complete strictly in MSN
 * order (complete.c), so receive completions and ACKs follow the order verbs
 * promises, and a READ runs only after every earlier message has landed.
 *
 * A packet goes through the checks as states of one machine, one function
 * a check, each naming the next check or how the packet ends: the checks a
 * NIC's responder makes (rxe's responder is built the same way), in the
 * order that lets the cheap ones turn most packets away.
 */
#include <string.h>

#include "responder_internal.h"

enum rx_step {
	RX_CHECK_PEER,		/* RDMA only from a peer that integrated */
	RX_CHECK_MSN,		/* an old message, in the window, or ahead */
	RX_OLD_MESSAGE,		/* done already: answer again, or drop */
	RX_FIND_SLOT,		/* the message's slot */
	RX_START,		/* the first packet of a message (start.c) */
	RX_CHECK_ATTEMPT,	/* another attempt of a message begun */
	RX_CHECK_PACKET,	/* agrees with its message, not in yet */
	RX_HOLD_LAST,		/* the last byte waits for its turn */
	RX_PLACE,		/* into memory */
	RX_ADVANCE,		/* the message changed: complete what can */
	RX_DONE,		/* the packet is spent (counted if dropped) */
	RX_KEPT,		/* the packet is held in its slot */
};

/* One packet on its way through the states. */
struct rx {
	struct srnic_engine *eng;
	struct srnic_qp *qp;
	const struct srnic_pkt *pkt;
	struct rte_mbuf *m;
	struct srnic_rmsg *s;	/* the message's slot (from RX_FIND_SLOT) */
	uint32_t idx;		/* the packet's index in it */
};

static inline enum rx_step rx_drop(struct rx *x, enum srnic_drop why)
{
	x->eng->st->drops[why]++;
	return RX_DONE;
}

/* May this WRITE packet land?  One that carries nothing (a zero-length
 * WRITE, which UCX posts to flush a QP) touches no memory: as on IB, its
 * key and address are not checked (rkey 0, va 0 from UCX).  A key that a
 * SEND with invalidate before it takes away is gone already. */
static inline enum srnic_mem_check write_check(const struct srnic_engine *eng,
					       const struct srnic_qp *qp,
					       const struct srnic_rmsg *s,
					       const struct srnic_pkt *pkt)
{
	unsigned i;

	if (!pkt->pkt_len)
		return SRNIC_MEM_OK;
	for (i = 0; i < qp->rcv.ninv; i++)
		if (qp->rcv.inv[i].rkey == pkt->rkey &&
		    seq_diff(pkt->msn, qp->rcv.inv[i].msn) > 0)
			return SRNIC_MEM_BAD_KEY;
	return srnic_mem_check_remote(&eng->mem, pkt->rkey, s->pd, qp->q.qpn,
				      pkt->va, pkt->pkt_len,
				      SRNIC_ACCESS_REMOTE_WRITE);
}

/* A WRITE packet's payload; an atomic write is 8 aligned bytes stored as
 * one (the wire checked the length and the alignment). */
static inline bool place_write(struct srnic_engine *eng,
			       const struct srnic_pkt *pkt)
{
	if (pkt->flags & SRNIC_F_ATOMIC_WR) {
		uint64_t v, old;

		memcpy(&v, pkt->payload, sizeof(v));
		if (srnic_mem_atomic(&eng->mem, (uint64_t *)(uintptr_t)pkt->va,
				     SRNIC_AMO_STORE, v, 0, &old))
			return true;
	} else if (srnic_mem_copy(&eng->mem, (void *)(uintptr_t)pkt->va,
				  pkt->payload, pkt->pkt_len)) {
		return true;
	}
	srnic_page_fault(eng, pkt->rkey);
	return false;
}

/* Write one packet's payload where it belongs (a FIFO's: into its ring);
 * refused (counted) when an access check refuses it. */
enum resp_placed resp_place(struct srnic_engine *eng, struct srnic_qp *qp,
			    struct srnic_rmsg *s, const struct srnic_pkt *pkt)
{
	struct srnic_rwqe *r;
	enum srnic_mem_check c;

	if (!pkt->pkt_len)
		return RESP_PLACED;
	if (pkt->opcode == SRNIC_OP_WRITE) {
		c = write_check(eng, qp, s, pkt);
		/* (an atomic write stores at an address: a FIFO has none) */
		if (c == SRNIC_MEM_FIFO && (pkt->flags & SRNIC_F_ATOMIC_WR))
			c = SRNIC_MEM_NO_RIGHTS;
		if (c == SRNIC_MEM_FIFO)
			return resp_fifo_append(eng, qp, pkt);
		if (c != SRNIC_MEM_OK) {
			count_access(eng, c);
			return RESP_REFUSED;
		}
		return place_write(eng, pkt) ? RESP_PLACED : RESP_REFUSED;
	}
	r = srnic_recv_wqe(qp, s->ssn);
	return srnic_sge_scatter(&eng->mem, s->pd, r->sge, r->num_sge,
				 pkt->msg_off, pkt->payload, pkt->pkt_len)
		       ? RESP_REFUSED
		       : RESP_PLACED;
}

/* Every packet of message s is in. */
static void message_in(struct srnic_engine *eng, struct srnic_qp *qp,
		       struct srnic_rmsg *s)
{
	if (s->msn == qp->rcv.exp_msn)
		resp_advance(eng, qp);
	else if (srnic_qp_reliable(qp))
		resp_maybe_sack(eng, qp, s->msn);
	else
		resp_uc_watch(eng, qp);
}

/* The packet is in its message: marked, credit given back now and then,
 * and the message complete once it was the last one missing. */
static inline void landed(struct rx *x)
{
	srnic_track_mark(&x->s->trk, x->idx);
	if (srnic_fc_landed(x->qp, x->eng->fc_grant))
		srnic_qp_want_ack(x->eng, x->qp);
	if (srnic_track_complete(&x->s->trk))
		message_in(x->eng, x->qp, x->s);
}

static enum rx_step check_peer(struct rx *x)
{
	if (x->pkt->ts)
		x->qp->rcv.ts_recent = x->pkt->ts;	/* echoed by the next ACK */
	/* RDMA only from a peer that confirmed it forgot our older
	 * incarnations (integrate.c); SEND needs no such wait. */
	if (x->pkt->opcode != SRNIC_OP_SEND && !srnic_qp_peer_rdma_ok(x->qp))
		return rx_drop(x, SRNIC_DROP_NOT_INTEGRATED);
	return RX_CHECK_MSN;
}

static enum rx_step check_msn(struct rx *x)
{
	int32_t d = seq_diff(x->pkt->msn, x->qp->rcv.exp_msn);

	if (d < 0)
		return RX_OLD_MESSAGE;
	/* (UC: a packet beyond the window says the messages before it are
	 * gone: its message is the oldest now.  One in the window, or so
	 * followed, says how far its port has come; a stray one nothing.) */
	if (d < SRNIC_WINDOW ||
	    (!srnic_qp_reliable(x->qp) && resp_uc_jump(x->eng, x->qp, x->pkt))) {
		if (!srnic_qp_reliable(x->qp))
			resp_uc_port_note(x->qp, x->m->port, x->pkt->msn);
		return RX_FIND_SLOT;
	}
	return rx_drop(x, SRNIC_DROP_OUT_OF_WINDOW);
}

/* A packet of a message done already: a READ or atomic asked again is
 * answered again; anything else says its ACK again, which may have been
 * lost. */
static enum rx_step old_message(struct rx *x)
{
	const struct srnic_pkt *pkt = x->pkt;

	if (pkt->opcode == SRNIC_OP_READ_REQ &&
	    seq_diff(pkt->msn, x->qp->rcv.exp_msn) >= -SRNIC_WINDOW) {
		resp_reread(x->eng, x->qp, pkt);
		return RX_DONE;
	}
	if (pkt->opcode == SRNIC_OP_ATOMIC_REQ) {
		resp_reanswer_atomic(x->eng, x->qp, pkt);
		return RX_DONE;
	}
	if (srnic_qp_reliable(x->qp))
		x->eng->st->drops[SRNIC_DROP_DUPLICATE]++;
	else
		resp_uc_late(x->eng, x->qp, pkt->msn);
	srnic_qp_want_ack(x->eng, x->qp);
	return RX_DONE;
}

/* A packet of a message that is in (or failed) already: dropped as stale
 * or duplicate; a failed one's NAK goes again, the first may be lost. */
static enum rx_step already_in(struct rx *x, enum srnic_drop why)
{
	if (x->s->state == RMSG_FAILED)
		resp_nak(x->eng, x->qp, x->s->nak, x->s->msn, x->pkt->txid);
	return rx_drop(x, why);
}

static enum rx_step find_slot(struct rx *x)
{
	x->s = &x->qp->rcv.rmsg[x->pkt->msn % SRNIC_WINDOW];
	if (x->s->state == RMSG_FREE || x->s->msn != x->pkt->msn)
		return RX_START;
	if (x->s->txid != x->pkt->txid)
		return RX_CHECK_ATTEMPT;
	if (x->s->state != RMSG_RECEIVING)
		return already_in(x, SRNIC_DROP_DUPLICATE);
	return RX_CHECK_PACKET;
}

static enum rx_step start(struct rx *x)
{
	switch (resp_start_message(x->eng, x->qp, x->s, x->pkt)) {
	case RESP_START_RECEIVING:
		return RX_CHECK_PACKET;
	case RESP_START_DECIDED:
		return RX_ADVANCE;	/* READ, or failed at its first packet */
	default:
		return RX_DONE;		/* (counted there) */
	}
}

static enum rx_step check_attempt(struct rx *x)
{
	struct srnic_rmsg *s = x->s;
	int32_t newer = seq_diff(x->pkt->txid, s->txid);

	if (s->state == RMSG_READ && newer > 0) {
		/* A READ still waiting for its turn: answer the newest
		 * attempt, which is the one the requester listens to. */
		s->txid = x->pkt->txid;
		return RX_DONE;
	}
	if (newer < 0)
		return already_in(x, SRNIC_DROP_STALE_TXID);
	if (s->state != RMSG_RECEIVING)
		return already_in(x, SRNIC_DROP_DUPLICATE);
	/* A newer attempt of a message still coming in: what landed stays
	 * (the same bytes, at the same places), so a message resent under
	 * loss completes as soon as its missing packets do.  Packets of the
	 * older attempt are dropped from now on. */
	s->txid = x->pkt->txid;
	return RX_CHECK_PACKET;
}

static enum rx_step check_packet(struct rx *x)
{
	const struct srnic_pkt *pkt = x->pkt;
	struct srnic_rmsg *s = x->s;

	if (pkt->opcode != s->opcode || pkt->msg_len != s->msg_len ||
	    pkt->stride_shift != s->trk.shift ||
	    (pkt->xflags & ~SRNIC_X_ACK_REQ) != s->xflags)
		return rx_drop(x, SRNIC_DROP_MALFORMED);
	x->idx = pkt->msg_off >> s->trk.shift;
	if (x->idx >= s->trk.npkts || srnic_track_test(&s->trk, x->idx)) {
		/* A requester probing a message we still lack packets of
		 * (it resends its last packet): tell it which. */
		if (pkt->msn == x->qp->rcv.exp_msn)
			resp_maybe_sack(x->eng, x->qp, x->qp->rcv.exp_msn + 1);
		return rx_drop(x, SRNIC_DROP_DUPLICATE);
	}
	/* The packet with a message's last byte lands after every other
	 * byte of the message and of every earlier message, so a program
	 * polling that byte (a flag written after the data, as ib_write_lat
	 * does) sees everything before it. */
	if ((pkt->flags & SRNIC_F_LAST) &&
	    (s->trk.ndone + 1 < s->trk.npkts || pkt->msn != x->qp->rcv.exp_msn))
		return RX_HOLD_LAST;
	return RX_PLACE;
}

/* The last byte's packet, kept until its turn (complete.c places it).  It
 * is checked now all the same: a bad key is NAKed when it arrives, not
 * when the rest does. */
static enum rx_step hold_last(struct rx *x)
{
	enum srnic_mem_check r = x->pkt->opcode != SRNIC_OP_WRITE
					 ? SRNIC_MEM_OK
					 : write_check(x->eng, x->qp, x->s, x->pkt);

	/* (a FIFO's records go in any order: nothing to hold it for) */
	if (r == SRNIC_MEM_FIFO)
		return RX_PLACE;
	if (r != SRNIC_MEM_OK) {
		count_access(x->eng, r);
		resp_fail(x->eng, x->qp, x->s, SRNIC_NAK_ACCESS,
			  SRNIC_WC_REM_ACCESS_ERR);
		return RX_ADVANCE;	/* (UC gives it up there) */
	}
	/* With the process's share of the pool held already, or the node's,
	 * the packet goes: the requester sends it again (its probe is that
	 * packet), and by then the rest may be in. */
	if (x->eng->held_max &&
	    (x->eng->held >= x->eng->held_max ||
	     __atomic_load_n(&x->eng->node->held_total, __ATOMIC_RELAXED) >=
		     SRNIC_HELD_MAX)) {
		x->eng->st->drops[SRNIC_DROP_OVER_BUDGET]++;
		return RX_DONE;
	}
	held_count(x->eng, x->qp, 1);
	x->s->held = x->m;
	x->s->held_tsc = x->eng->now;
	srnic_qp_timer_on(x->eng, x->qp);	/* (its age: held.c) */
	landed(x);	/* (which may place it at once, and free it) */
	return RX_KEPT;
}

static enum rx_step place(struct rx *x)
{
	switch (resp_place(x->eng, x->qp, x->s, x->pkt)) {
	case RESP_REFUSED:
		resp_fail_placement(x->eng, x->qp, x->s);
		return RX_ADVANCE;	/* (UC gives it up there) */
	case RESP_FIFO_FULL:
		/* (not landed: the requester sends it again, told as a
		 * receiver not ready is, resp_fifo_full) */
		resp_fifo_full(x->eng, x->qp, x->pkt);
		return rx_drop(x, SRNIC_DROP_FIFO_FULL);
	case RESP_PLACED:
	default:
		landed(x);
		return RX_DONE;
	}
}

/* Returns true when it kept m (a held last packet). */
static bool rx_packet(struct srnic_engine *eng, struct srnic_qp *qp,
		      const struct srnic_pkt *pkt, struct rte_mbuf *m)
{
	struct rx x = { .eng = eng, .qp = qp, .pkt = pkt, .m = m };
	enum rx_step step = RX_CHECK_PEER;

	for (;;) {
		switch (step) {
		case RX_CHECK_PEER:	step = check_peer(&x); break;
		case RX_CHECK_MSN:	step = check_msn(&x); break;
		case RX_OLD_MESSAGE:	step = old_message(&x); break;
		case RX_FIND_SLOT:	step = find_slot(&x); break;
		case RX_START:		step = start(&x); break;
		case RX_CHECK_ATTEMPT:	step = check_attempt(&x); break;
		case RX_CHECK_PACKET:	step = check_packet(&x); break;
		case RX_HOLD_LAST:	step = hold_last(&x); break;
		case RX_PLACE:		step = place(&x); break;
		case RX_ADVANCE:
			resp_advance(eng, qp);
			return false;
		case RX_KEPT:
			return true;
		case RX_DONE:
		default:
			return false;
		}
	}
}

/*
 * The requester's probe (SRNIC_F_PROBE) asks where its oldest message
 * stands: a SACK of what it lacks, or, once it is in, the ACK.  Answered
 * at once, whatever SACK_GAP_US says: the requester's back-off already
 * spaces its probes, and a message lost whole (its probe the only packet
 * in) has no later packet that would ever make the SACK go out.  Without
 * the answer it waited for a second probe, at twice the probe interval;
 * with a round trip inflated by a burst of queueing that was the verbs
 * timeout, and a window of messages lost together was repaired one
 * timeout each (three ib_write_bw pairs crawled at one message in 67 ms).
 */
static void answer_probe(struct srnic_engine *eng, struct srnic_qp *qp,
			 const struct srnic_pkt *pkt)
{
	struct srnic_rmsg *s = &qp->rcv.rmsg[pkt->msn % SRNIC_WINDOW];
	int32_t d = seq_diff(pkt->msn, qp->rcv.exp_msn);

	if (!srnic_qp_reliable(qp))
		return;
	if (d >= 0 && d < SRNIC_WINDOW && s->msn == pkt->msn &&
	    s->state == RMSG_RECEIVING && !srnic_track_complete(&s->trk)) {
		/* (one SACK a QP waits at a time: one already due goes
		 * first, and the requester probes again) */
		if (!qp->rcv.sack_due)
			resp_sack_slot(eng, qp, s, eng->now);
		return;
	}
	srnic_qp_want_ack(eng, qp);
}

/*
 * The requester asked for the ACK of message msn at once (SRNIC_X_ACK_REQ:
 * its program waits for that WQE's completion, or it has half its send
 * queue in flight).  Already done, it goes now; else resp_advance sends it
 * as soon as exp_msn passes msn, not after ack_delay_us: a program that
 * posts a window of WRITEs and polls for their completion would otherwise
 * wait out the delay every window (tests/bench/insns: 8-byte WRITEs
 * moved 295 cycles a packet with it, 173 without).  Of two asks pending
 * the later message's stands (its ACK covers both; packets on several
 * ports may bring them in either order).
 */
static void ack_asked(struct srnic_engine *eng, struct srnic_qp *qp,
		      uint32_t msn)
{
	if (!srnic_qp_reliable(qp))
		return;
	if (seq_diff(qp->rcv.exp_msn, msn) > 0) {
		srnic_qp_want_ack(eng, qp);
		return;
	}
	if (qp->rcv.ack_asked && seq_diff(msn, qp->rcv.ack_asked_msn) < 0)
		return;
	qp->rcv.ack_asked = 1;
	qp->rcv.ack_asked_msn = msn;
}

bool srnic_responder_rx(struct srnic_engine *eng, struct srnic_qp *qp,
			const struct srnic_pkt *pkt, struct rte_mbuf *m)
{
	bool kept;

	/* A frozen service QP takes nothing new: its program is handing
	 * its state over, which holds what came before (failback=manual;
	 * unanswered, the client sends it again to the next holder). */
	if (unlikely(qp->svc_frozen) && seq_diff(pkt->msn, qp->rcv.exp_msn) >= 0) {
		eng->st->drops[SRNIC_DROP_SVC_FROZEN]++;
		return false;
	}
	kept = rx_packet(eng, qp, pkt, m);

	if (unlikely(pkt->flags & SRNIC_F_PROBE))
		answer_probe(eng, qp, pkt);
	else if (pkt->xflags & SRNIC_X_ACK_REQ)
		ack_asked(eng, qp, pkt->msn);
	return kept;
}
