/* SPDX-License-Identifier: MIT */
/*
 * Responder, messages in MSN order (datapath thread): packets land in any
 * order (rx.c), but messages complete strictly in order, the oldest first,
 * so receive completions and ACKs follow the order verbs promises and a
 * READ or atomic runs only after every earlier message has landed.
 *
 * advance() takes the oldest message by its state: one still receiving
 * waits for its packets (its held last packet is placed once they are
 * in), a failed one completes in error or is given up, a READ or atomic
 * gets its answer job, a placed one its receive completion.
 */
#include <string.h>

#include "responder_internal.h"

void srnic_responder_reset(struct srnic_engine *eng, struct srnic_qp *qp)
{
	unsigned i;

	for (i = 0; i < SRNIC_WINDOW; i++)
		slot_clear(eng, qp, &qp->rcv.rmsg[i]);
	qp->rcv.uc_stuck_at = 0;
	qp->rcv.uc_ports = 0;	/* (a new connection's ports say anew) */
	qp->rcv.fifo_rnr_streak = 0;
	qp->rcv.fifo_naked = 0;
	qp->rcv.ack_rnr_fifo = 0;
	qp->rcv.uc_gone_to = qp->rcv.uc_gone_from;
	qp->rcv.uc_reack_at = 0;
	qp->rcv.uc_reacks = 0;
	qp->rcv.uc_recv_watch = 0;
	/* (receives posted before the QP connects count as posting) */
	qp->rcv.uc_rq_posting = 0;
	qp->rcv.uc_rq_seen = 0;
	__atomic_store_n(&qp->q.rq_bell, 0, __ATOMIC_RELAXED);
	qp->rcv.ninv = 0;
	qp->rcv.rd_head = qp->rcv.rd_tail = 0;
	memset(qp->rcv.atomic_done, 0, sizeof(qp->rcv.atomic_done));
	qp->rcv.rd_told_head = qp->rcv.rd_told_tail = 0;
	memset(qp->rcv.fifo_asked, 0, sizeof(qp->rcv.fifo_asked));
}

void resp_fail(struct srnic_engine *eng, struct srnic_qp *qp,
	       struct srnic_rmsg *s, uint8_t syndrome, uint8_t status)
{
	slot_forget(eng, qp, s);
	s->state = RMSG_FAILED;
	s->nak = syndrome;
	s->status = status;
	if (s->flags & SRNIC_F_INV)
		inv_forget(qp, s->msn);	/* it will invalidate nothing */
	resp_nak(eng, qp, syndrome, s->msn, s->txid);
}

/* A packet could not be written: a WRITE's key, bounds or rights, or the
 * receive WQE's memory (deregistered meanwhile). */
void resp_fail_placement(struct srnic_engine *eng, struct srnic_qp *qp,
			 struct srnic_rmsg *s)
{
	bool write = s->opcode == SRNIC_OP_WRITE;

	resp_fail(eng, qp, s, write ? SRNIC_NAK_ACCESS : SRNIC_NAK_OPERATIONAL,
		  write ? SRNIC_WC_REM_ACCESS_ERR : SRNIC_WC_LOC_PROT_ERR);
}

/* Decode a held packet again: its payload pointer is only valid now. */
static bool place_held(struct srnic_engine *eng, struct srnic_qp *qp,
		       struct srnic_rmsg *s)
{
	struct rte_mbuf *m = s->held;
	struct srnic_pkt pkt;
	bool ok;

	s->held = NULL;
	held_count(eng, qp, -1);
	ok = srnic_wire_decode(rte_pktmbuf_mtod(m, const uint8_t *),
			       rte_pktmbuf_data_len(m), &pkt) == SRNIC_WIRE_OK &&
	     resp_place(eng, qp, s, &pkt) == RESP_PLACED;
	rte_pktmbuf_free(m);
	return ok;
}

/* The receive completion of message s, a SEND's or a WRITE with
 * immediate's (failed or not); false when its CQ has no room. */
static bool emit_recv_cqe(struct srnic_engine *eng, struct srnic_qp *qp,
			  struct srnic_rmsg *s)
{
	struct srnic_cq *cq = resp_recv_cq_of(qp);
	struct srnic_rwqe *r = srnic_recv_wqe(qp, s->ssn);
	struct srnic_cqe *c;

	if (!cq) {
		/* an XRC SRQ destroyed under the message: nowhere to
		 * complete (its WQE went with it) */
		if (s->flags & SRNIC_F_INV)
			inv_forget(qp, s->msn);
		resp_rq_done(qp);
		return true;
	}
	if (!srnic_cq_room(cq))
		return false;
	c = srnic_cq_slot(cq);
	memset(c, 0, sizeof(*c));
	c->wr_id = r->wr_id;
	c->qp_num = qp->q.qpn;
	c->src_qp = qp->at.dest_qpn;
	c->status = s->state == RMSG_FAILED ? s->status : SRNIC_WC_SUCCESS;
	c->opcode = s->opcode == SRNIC_OP_WRITE ? SRNIC_WC_RECV_RDMA_WITH_IMM
						 : SRNIC_WC_RECV;
	c->byte_len = s->msg_len;
	srnic_rwqe_told(r, c, cq);
	if (s->flags & SRNIC_F_IMM) {
		c->flags |= SRNIC_WC_F_IMM;
		c->imm = s->imm;
	}
	if (s->flags & SRNIC_F_SOLICITED)
		c->flags |= SRNIC_WC_F_SOLICITED;
	if ((s->flags & SRNIC_F_INV) && c->status == SRNIC_WC_SUCCESS) {
		/* (checked when the message began; a region deregistered
		 * since has nothing left to invalidate) */
		srnic_mem_revoke(&eng->mem, s->rkey, s->pd);
		c->flags |= SRNIC_WC_F_INV;
		c->imm = s->rkey;
	}
	if (s->flags & SRNIC_F_INV)
		inv_forget(qp, s->msn);
	/* The receive slot is free before the completion shows. */
	resp_rq_done(qp);
	srnic_cq_publish(cq);
	return true;
}

/* What the oldest message does next. */
enum turn {
	TURN_WAIT,	/* it cannot complete yet: stop */
	TURN_AGAIN,	/* its state changed: look at it again */
	TURN_NEXT,	/* it is done: on to the next */
};

/* UC: the oldest message cannot complete yet; watch it if nothing does
 * (whatever left it stuck: a later message failing at its first packet, a
 * watch dropped while the oldest waited for CQ room). */
static void uc_head_waits(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (!srnic_qp_reliable(qp) && !qp->rcv.uc_stuck_at && resp_uc_stuck(qp))
		resp_uc_watch(eng, qp);
}

/* Its packets all in or not; all in, the held last one is placed. */
static enum turn receiving_turn(struct srnic_engine *eng, struct srnic_qp *qp,
				struct srnic_rmsg *s)
{
	struct srnic_rmsg *n;

	if (srnic_track_complete(&s->trk)) {
		if (s->held && !place_held(eng, qp, s)) {
			resp_fail_placement(eng, qp, s);
			return TURN_AGAIN;
		}
		srnic_track_fini(&s->trk);
		s->state = RMSG_PLACED;
		return TURN_AGAIN;
	}
	uc_head_waits(eng, qp);
	/* Stuck behind a gap while the next message is in already: no later
	 * arrival may come to point at the gap, so point at it now. */
	n = &qp->rcv.rmsg[(qp->rcv.exp_msn + 1) % SRNIC_WINDOW];
	if (n->msn == qp->rcv.exp_msn + 1 &&
	    (n->state == RMSG_PLACED ||
	     (n->state == RMSG_RECEIVING && srnic_track_complete(&n->trk))))
		resp_maybe_sack(eng, qp, qp->rcv.exp_msn + 1);
	return TURN_WAIT;
}

/* A receive that could not land completes in error and takes the QP
 * down; a bad key only NAKs (UC: the message is dropped, and the QP goes
 * on). */
static enum turn failed_turn(struct srnic_engine *eng, struct srnic_qp *qp,
			     struct srnic_rmsg *s)
{
	if (s->status == SRNIC_WC_LOC_LEN_ERR ||
	    s->status == SRNIC_WC_LOC_PROT_ERR) {
		struct srnic_cq *cq = resp_recv_cq_of(qp);

		/* (the QP in ERR before the completion shows: a program
		 * that sees it and asks the QP's state finds ERR) */
		if (cq && !srnic_cq_room(cq)) {
			srnic_qp_cq_full(eng, qp);
		} else {
			srnic_qp_to_error(eng, qp);
			emit_recv_cqe(eng, qp, s);
		}
	} else if (!srnic_qp_reliable(qp)) {
		resp_uc_give_up(eng, qp, false);
	}
	return TURN_WAIT;
}

/* A READ or atomic gets its answer job, when there is one free: as many
 * answer at once as the program granted (max_dest_rd_atomic, at most
 * SRNIC_MAX_RD_ATOMIC, which the provider checks).  An atomic runs here,
 * once: every message before it is done. */
static enum turn read_turn(struct srnic_engine *eng, struct srnic_qp *qp,
			   struct srnic_rmsg *s)
{
	/* (a READ of a FIFO that takes READs: a request for its program,
	 * who answers; no job) */
	if (s->opcode == SRNIC_OP_READ_REQ &&
	    resp_fifo_reads(eng, qp, s->rkey, s->pd)) {
		resp_fifo_read_request(eng, qp, s->rkey, s->msn, s->msg_len,
				       s->va, s->txid, s->trk.shift, 0,
				       s->msg_len);
		return TURN_NEXT;
	}
	if (qp->rcv.rd_tail - qp->rcv.rd_head >= qp->at.max_dest_rd_atomic)
		return TURN_WAIT;
	if (s->opcode == SRNIC_OP_ATOMIC_REQ && !resp_run_atomic(eng, qp, s))
		return TURN_AGAIN;	/* failed */
	if ((s->xflags & SRNIC_X_NOTIFY) && !resp_read_told(qp, s)) {
		eng->st->drops[SRNIC_DROP_MALFORMED]++;
		resp_fail(eng, qp, s, SRNIC_NAK_INVALID,
			  SRNIC_WC_REM_INV_REQ_ERR);
		return TURN_AGAIN;
	}
	resp_read_job_from_slot(eng, qp, s);
	return TURN_NEXT;
}

bool resp_target_cqe(struct srnic_qp *qp, uint8_t opcode, uint64_t va,
		     uint32_t len)
{
	struct srnic_cq *cq = qp->q.recv_cq;
	struct srnic_cqe *c;

	if (!cq || !srnic_cq_room(cq))
		return false;
	c = srnic_cq_slot(cq);
	memset(c, 0, sizeof(*c));
	c->wr_id = va;
	c->qp_num = qp->q.qpn;
	c->src_qp = qp->at.dest_qpn;
	c->status = SRNIC_WC_SUCCESS;
	c->opcode = opcode;
	c->byte_len = len;
	srnic_cq_publish(cq);
	return true;
}

/* All in: a message that takes a receive WQE completes into it; a WRITE
 * that asked completes at its target (RC, not an XRC target, which has
 * no receive CQ of its own). */
static enum turn placed_turn(struct srnic_engine *eng, struct srnic_qp *qp,
			     struct srnic_rmsg *s)
{
	if (!(s->flags & SRNIC_F_RECV_CQE)) {
		if (!(s->xflags & SRNIC_X_NOTIFY) || s->opcode != SRNIC_OP_WRITE ||
		    !srnic_qp_reliable(qp) || qp->xrc == SRNIC_XRC_TGT ||
		    !qp->q.recv_cq)
			return TURN_NEXT;
		if (!resp_target_cqe(qp, SRNIC_WC_TARGET_WRITE, s->va,
				     s->msg_len)) {
			srnic_qp_cq_full(eng, qp);
			return TURN_WAIT;
		}
		return TURN_NEXT;
	}
	if (s->ssn != qp->rcv.exp_ssn) {
		/* Its number names another receive WQE than the one whose
		 * turn it is: the peer numbered wrong.  Nothing completes
		 * from it (RC: NAKed; UC: given up). */
		eng->st->drops[SRNIC_DROP_MALFORMED]++;
		resp_fail(eng, qp, s, SRNIC_NAK_INVALID, SRNIC_WC_GENERAL_ERR);
		return TURN_AGAIN;
	}
	if (!emit_recv_cqe(eng, qp, s)) {
		srnic_qp_cq_full(eng, qp);
		return TURN_WAIT;
	}
	return TURN_NEXT;
}

/* Complete, in MSN order, every message whose turn has come. */
void resp_advance(struct srnic_engine *eng, struct srnic_qp *qp)
{
	for (;;) {
		struct srnic_rmsg *s = &qp->rcv.rmsg[qp->rcv.exp_msn % SRNIC_WINDOW];
		enum turn t;

		if (s->msn != qp->rcv.exp_msn || s->state == RMSG_FREE) {
			uc_head_waits(eng, qp);
			return;
		}
		switch (s->state) {
		case RMSG_RECEIVING: t = receiving_turn(eng, qp, s); break;
		case RMSG_FAILED:    t = failed_turn(eng, qp, s); break;
		case RMSG_READ:	     t = read_turn(eng, qp, s); break;
		case RMSG_PLACED:
		default:	     t = placed_turn(eng, qp, s); break;
		}
		if (t == TURN_WAIT)
			return;
		if (t == TURN_AGAIN)
			continue;
		slot_clear(eng, qp, s);
		qp->rcv.exp_msn++;
		if (unlikely(qp->rcv.ack_asked) &&
		    seq_diff(qp->rcv.exp_msn, qp->rcv.ack_asked_msn) > 0) {
			qp->rcv.ack_asked = 0;	/* (rx.c, ack_asked) */
			srnic_qp_want_ack(eng, qp);
		} else {
			srnic_qp_want_ack_lazy(eng, qp);
		}
	}
}

/* Called when CQ room or a read slot may have appeared. */
void srnic_responder_progress(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (unlikely(qp->rcv.uc_recv_watch))
		resp_uc_recv_look(eng, qp);
	resp_advance(eng, qp);
	if (unlikely(qp->rcv.rd_told_head != qp->rcv.rd_told_tail))
		resp_told_drain(eng, qp);
}
