/* SPDX-License-Identifier: MIT */
/*
 * Responder, a message's first packet (datapath thread): the slot is
 * taken, and what can be checked once for the whole message is checked:
 * the request's domain, the keys and rights of a READ or atomic, a SEND
 * with invalidate's key, the QP's write right, the receive WQE and its
 * room.  A failed check fails the message with its NAK and completion
 * status; it completes so in its turn (complete.c).
 *
 * The checks are states of one machine, one function a check, each naming
 * the next check, a NAK, or how the message begins.
 */
#include "responder_internal.h"

enum start_step {
	ST_CHECK_DOMAIN,	/* the PD (an XRC target's SRQ's) */
	ST_CHECK_RD_GRANTED,	/* a READ or atomic: the QP takes them */
	ST_ATOMIC,		/* an atomic: checked now, runs in its turn */
	ST_READ,		/* a READ: likewise */
	ST_CHECK_INVALIDATE,	/* a SEND with invalidate's key */
	ST_CHECK_WRITE,		/* the QP lets the peer WRITE */
	ST_TAKE_RECV_WQE,	/* a receive WQE for it */
	ST_CHECK_RECV_ROOM,	/* a SEND fits the WQE's memory */
	ST_TRACK,		/* which packets are in: ready to land */
	ST_FAIL,		/* NAK (syndrome, status) */
	ST_NOT_READY,		/* RNR: the slot stays free */
	ST_NO_MEMORY,		/* the requester will retry */
	ST_WAITS_TURN,		/* a READ or atomic, checked */
	ST_RECEIVING,		/* its packets land from now on */
};

/* One message's start on its way through the states. */
struct start {
	struct srnic_engine *eng;
	struct srnic_qp *qp;
	struct srnic_rmsg *s;
	const struct srnic_pkt *pkt;
	struct srnic_srq *srq;	/* an XRC target's: the message's SRQ */
	uint8_t syndrome;	/* ST_FAIL's NAK ... */
	uint8_t status;		/* ... and the completion it comes to */
};

static inline enum start_step nak_with(struct start *t, uint8_t syndrome,
				       uint8_t status)
{
	t->syndrome = syndrome;
	t->status = status;
	return ST_FAIL;
}

/* An access check's verdict: counted and NAKed when it refuses. */
static inline enum start_step access_verdict(struct start *t,
					     enum srnic_mem_check r,
					     enum start_step next)
{
	if (r == SRNIC_MEM_OK)
		return next;
	count_access(t->eng, r);
	return nak_with(t, SRNIC_NAK_ACCESS, SRNIC_WC_REM_ACCESS_ERR);
}

static void slot_fill(struct srnic_engine *eng, struct srnic_rmsg *s,
		      struct srnic_qp *qp, const struct srnic_pkt *pkt)
{
	slot_clear(eng, qp, s);
	s->msn = pkt->msn;
	s->txid = pkt->txid;
	s->ssn = pkt->ssn - qp->rcv.uc_skew;	/* (RC: skew 0) */
	s->msg_len = pkt->msg_len;
	s->imm = pkt->imm;
	s->flags = pkt->flags;
	s->opcode = pkt->opcode;
	s->rkey = pkt->rkey;
	/* (a WRITE's packet names its own bytes' address: the WRITE's
	 * first is msg_off before it) */
	s->va = pkt->opcode == SRNIC_OP_WRITE ? pkt->va - pkt->msg_off
					      : pkt->va;
	s->xflags = pkt->xflags & ~SRNIC_X_ACK_REQ;	/* (an attempt's) */
	s->trk.shift = pkt->stride_shift;
}

static enum start_step check_domain(struct start *t)
{
	if (!resp_request_pd(t->eng, t->qp, t->pkt, &t->s->pd, &t->srq))
		return nak_with(t, SRNIC_NAK_INVALID, SRNIC_WC_REM_INV_REQ_ERR);
	return srnic_op_rd_atomic(t->pkt->opcode) ? ST_CHECK_RD_GRANTED
						  : ST_CHECK_INVALIDATE;
}

/* A QP whose program granted no responder resources (max_dest_rd_atomic
 * 0) answers no READ or atomic: an invalid request, as rxe and the IBTA
 * have it.  Beyond that the grant is how many it answers at once
 * (read_turn, complete.c): a requester that keeps to its max_rd_atomic
 * never finds more waiting. */
static enum start_step check_rd_granted(struct start *t)
{
	if (!t->qp->at.max_dest_rd_atomic) {
		t->eng->st->drops[SRNIC_DROP_NO_RD_GRANT]++;
		return nak_with(t, SRNIC_NAK_INVALID, SRNIC_WC_REM_INV_REQ_ERR);
	}
	return t->pkt->opcode == SRNIC_OP_ATOMIC_REQ ? ST_ATOMIC : ST_READ;
}

/* An atomic runs in its turn, like a READ; checked now as well, so a bad
 * key is NAKed at once. */
static enum start_step start_atomic(struct start *t)
{
	struct srnic_rmsg *s = t->s;

	s->operand[0] = srnic_get64(t->pkt->payload);
	s->operand[1] = srnic_get64(t->pkt->payload + 8);
	s->state = RMSG_READ;
	return access_verdict(t, remote_check(t->eng, t->qp, s->pd, s->rkey,
					      s->va, SRNIC_ATOMIC_LEN,
					      SRNIC_ACCESS_REMOTE_ATOMIC),
			      ST_WAITS_TURN);
}

/* Completion at both ends: only where its program said it takes them, a
 * plain RC WRITE's or READ's (anything else would put completions in a
 * CQ whose program never asked for them). */
static bool notify_refused(const struct start *t)
{
	return (t->pkt->xflags & SRNIC_X_NOTIFY) &&
	       (!srnic_qp_reliable(t->qp) || t->qp->xrc == SRNIC_XRC_TGT ||
		(t->pkt->flags & (SRNIC_F_RECV_CQE | SRNIC_F_GROUP |
				  SRNIC_F_THIRD_PARTY)) ||
		!__atomic_load_n(&t->qp->q.accept_notify, __ATOMIC_ACQUIRE));
}

static enum start_step start_read(struct start *t)
{
	struct srnic_rmsg *s = t->s;
	enum srnic_mem_check r = remote_check(t->eng, t->qp, s->pd, s->rkey,
					      s->va, s->msg_len,
					      SRNIC_ACCESS_REMOTE_READ);

	s->state = RMSG_READ;
	/* (a FIFO's key that takes READs: any address, any length; its
	 * program answers, in the READ's turn: fifo.c, and is not told) */
	if (notify_refused(t) ||
	    (r == SRNIC_MEM_FIFO && (s->xflags & SRNIC_X_NOTIFY)))
		return nak_with(t, SRNIC_NAK_INVALID, SRNIC_WC_REM_INV_REQ_ERR);
	if (r == SRNIC_MEM_FIFO)
		r = SRNIC_MEM_OK;
	if (r == SRNIC_MEM_OK && (1u << s->trk.shift) > t->eng->payload_max)
		/* Packets larger than this node's ports carry. */
		return nak_with(t, SRNIC_NAK_INVALID, SRNIC_WC_REM_INV_REQ_ERR);
	return access_verdict(t, r, ST_WAITS_TURN);
}

/*
 * Send with invalidate: the key must be a remote key of this QP's PD (a
 * region's with a remote right, or a type 2 window's bound to this QP),
 * else the request is invalid (a peer may not take a local-only key
 * away); it is revoked on completion.
 */
static enum start_step check_invalidate(struct start *t)
{
	const struct srnic_pkt *pkt = t->pkt;

	if (!(pkt->flags & SRNIC_F_INV))
		return ST_CHECK_WRITE;
	if (pkt->opcode != SRNIC_OP_SEND ||
	    !srnic_mem_invalidatable(&t->eng->mem, pkt->rkey, t->s->pd,
				     t->qp->q.qpn)) {
		t->eng->st->drops[SRNIC_DROP_BAD_KEY]++;
		return nak_with(t, SRNIC_NAK_INVALID, SRNIC_WC_REM_INV_REQ_ERR);
	}
	if (t->qp->rcv.ninv == SRNIC_INV_PENDING)
		return ST_NOT_READY;	/* too many at once: ask again later */
	return ST_CHECK_WRITE;
}

static enum start_step check_write(struct start *t)
{
	if (t->pkt->opcode == SRNIC_OP_WRITE &&
	    !(t->qp->access & SRNIC_ACCESS_REMOTE_WRITE))
		return access_verdict(t, SRNIC_MEM_NO_RIGHTS, ST_FAIL);
	if (notify_refused(t))
		return nak_with(t, SRNIC_NAK_INVALID, SRNIC_WC_REM_INV_REQ_ERR);
	return t->pkt->flags & SRNIC_F_RECV_CQE ? ST_TAKE_RECV_WQE : ST_TRACK;
}

/* Whether the receive WQE numbered ssn is there (an SRQ's QP pulls it
 * over first; an XRC target takes it from the message's SRQ). */
static bool have_recv_wqe(struct srnic_qp *qp, struct srnic_srq *srq,
			  uint32_t ssn)
{
	if (qp->xrc == SRNIC_XRC_TGT)
		return resp_xrc_take(qp, srq, ssn);
	if (qp->q.srq && (uint32_t)(ssn - qp->rcv.exp_ssn) < SRNIC_WINDOW)
		srnic_srq_pull(qp, ssn);
	return (uint32_t)(ssn - qp->rcv.exp_ssn) < srnic_rq_posted(qp);
}

static enum start_step take_recv_wqe(struct start *t)
{
	if (have_recv_wqe(t->qp, t->srq, t->s->ssn))
		return t->pkt->opcode == SRNIC_OP_SEND ? ST_CHECK_RECV_ROOM
						       : ST_TRACK;
	if (srnic_qp_reliable(t->qp))
		return ST_NOT_READY;
	/* UC: no receive WQE, the message is lost (given up in its turn:
	 * it has a slot, which says how many receive WQEs it would have
	 * taken). */
	t->eng->st->drops[SRNIC_DROP_RNR]++;
	return nak_with(t, SRNIC_NAK_RNR, SRNIC_WC_GENERAL_ERR);
}

static enum start_step check_recv_room(struct start *t)
{
	struct srnic_rwqe *r = srnic_recv_wqe(t->qp, t->s->ssn);
	int64_t room = srnic_sge_check_used(&t->eng->mem, t->s->pd, r->sge,
					    r->num_sge,
					    SRNIC_ACCESS_LOCAL_WRITE,
					    t->pkt->msg_len);

	if (room < 0)
		return nak_with(t, SRNIC_NAK_OPERATIONAL, SRNIC_WC_LOC_PROT_ERR);
	if (room < t->pkt->msg_len)
		return nak_with(t, SRNIC_NAK_INVALID, SRNIC_WC_LOC_LEN_ERR);
	return ST_TRACK;
}

/* Ready for its packets (unless there is no memory or budget for its map
 * of them: the requester will retry). */
static enum start_step track(struct start *t)
{
	struct srnic_qp *qp = t->qp;
	const struct srnic_pkt *pkt = t->pkt;
	uint16_t no;

	if (srnic_track_init_within(&t->s->trk, pkt->msg_len,
				    pkt->stride_shift,
				    &t->eng->map_budget)) {
		t->eng->st->drops[SRNIC_DROP_OVER_BUDGET]++;
		return ST_NO_MEMORY;
	}
	if (pkt->flags & SRNIC_F_INV) {
		qp->rcv.inv[qp->rcv.ninv].msn = pkt->msn;
		qp->rcv.inv[qp->rcv.ninv++].rkey = pkt->rkey;
	}
	t->s->state = RMSG_RECEIVING;
	/* (a CQ that asks for early events has its event now: seed 002's
	 * early interrupt, overlapping its program's wake-up with the
	 * message's landing.  RC only: a UC message that loses a packet
	 * never completes, and the program would wait for nothing.  An XRC
	 * target's receive is its message's SRQ's.) */
	if ((pkt->flags & SRNIC_F_RECV_CQE) && srnic_qp_reliable(qp) &&
	    srnic_cq_early(qp->xrc == SRNIC_XRC_TGT
				   ? (t->srq ? t->srq->cq : NULL)
				   : qp->q.recv_cq,
			   &no)) {
		srnic_recv_wqe(qp, t->s->ssn)->told = 1;
		srnic_recv_wqe(qp, t->s->ssn)->told_no = no;
	}
	if (!srnic_qp_reliable(qp) && pkt->msn != qp->rcv.exp_msn)
		resp_uc_watch(t->eng, qp);	/* the oldest may be lost */
	return ST_RECEIVING;
}

/* The receiver is not ready (no receive WQE yet, or too many invalidations
 * pending): the packet is dropped with the slot left free, and the RNR NAK
 * makes the requester try again later. */
static void not_ready(struct start *t)
{
	t->s->state = RMSG_FREE;
	t->eng->st->drops[SRNIC_DROP_RNR]++;
	resp_nak(t->eng, t->qp, SRNIC_NAK_RNR, t->pkt->msn, t->pkt->txid);
}

enum resp_start resp_start_message(struct srnic_engine *eng,
				   struct srnic_qp *qp, struct srnic_rmsg *s,
				   const struct srnic_pkt *pkt)
{
	struct start t = { .eng = eng, .qp = qp, .s = s, .pkt = pkt };
	enum start_step step = ST_CHECK_DOMAIN;

	slot_fill(eng, s, qp, pkt);
	for (;;) {
		switch (step) {
		case ST_CHECK_DOMAIN:	  step = check_domain(&t); break;
		case ST_CHECK_RD_GRANTED: step = check_rd_granted(&t); break;
		case ST_ATOMIC:		  step = start_atomic(&t); break;
		case ST_READ:		  step = start_read(&t); break;
		case ST_CHECK_INVALIDATE: step = check_invalidate(&t); break;
		case ST_CHECK_WRITE:	  step = check_write(&t); break;
		case ST_TAKE_RECV_WQE:	  step = take_recv_wqe(&t); break;
		case ST_CHECK_RECV_ROOM:  step = check_recv_room(&t); break;
		case ST_TRACK:		  step = track(&t); break;
		case ST_FAIL:
			resp_fail(eng, qp, s, t.syndrome, t.status);
			return RESP_START_DECIDED;
		case ST_NOT_READY:
			not_ready(&t);
			return RESP_START_REFUSED;
		case ST_NO_MEMORY:
			s->state = RMSG_FREE;
			return RESP_START_REFUSED;
		case ST_RECEIVING:
			return RESP_START_RECEIVING;
		case ST_WAITS_TURN:
		default:
			return RESP_START_DECIDED;
		}
	}
}
