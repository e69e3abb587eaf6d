/* SPDX-License-Identifier: MIT */
/*
 * Responder: places incoming SEND and WRITE packets straight into memory, in
 * whatever order they arrive, answers READ requests, and acknowledges.
 *
 * Each message in the window [exp_msn, exp_msn + SRNIC_WINDOW) has a slot
 * that records its transaction id and which of its packets have landed.
 * A packet of an older attempt (smaller txid) or of a message already done is
 * dropped: that is the at-most-once rule.  Messages complete strictly in MSN
 * order, so receive completions and ACKs follow the order verbs promises, and
 * a READ runs only after every earlier message has landed.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "srnic_responder.h"
#include "srnic_flow.h"
#include "srnic_recv.h"
#include "srnic_sge.h"

static inline int32_t seq_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

static void maybe_sack(struct srnic_engine *eng, struct srnic_qp *qp,
		       uint32_t below);
static void sack_slot(struct srnic_engine *eng, struct srnic_qp *qp,
		      struct srnic_rmsg *s, uint64_t now);

static void uc_give_up(struct srnic_engine *eng, struct srnic_qp *qp,
		       bool timed);
static void uc_watch(struct srnic_engine *eng, struct srnic_qp *qp);
static bool uc_stuck(const struct srnic_qp *qp);
static bool uc_jump(struct srnic_engine *eng, struct srnic_qp *qp,
		    const struct srnic_pkt *pkt);

static void nak(struct srnic_engine *eng, struct srnic_qp *qp,
		uint8_t syndrome, uint32_t msn, uint32_t txid)
{
	if (!srnic_qp_reliable(qp))
		return;	/* UC: nobody would act on it */
	/* One NAK travels with each ACK: the oldest one matters (the
	 * requester resends everything from there on). */
	if (qp->rcv.ack_syndrome != SRNIC_ACK_OK &&
	    seq_diff(msn, qp->rcv.ack_nak_msn) > 0) {
		srnic_qp_want_ack(eng, qp);
		return;
	}
	qp->rcv.ack_syndrome = syndrome;
	qp->rcv.ack_nak_msn = msn;
	qp->rcv.ack_nak_txid = txid;
	srnic_qp_want_ack(eng, qp);
}

static void uc_late(struct srnic_engine *eng, struct srnic_qp *qp,
		    uint32_t msn);

static void slot_clear(struct srnic_rmsg *s)
{
	srnic_track_fini(&s->trk);
	if (s->held) {
		rte_pktmbuf_free(s->held);
		s->held = NULL;
	}
	s->state = RMSG_FREE;
}

void srnic_responder_reset(struct srnic_qp *qp)
{
	unsigned i;

	for (i = 0; i < SRNIC_WINDOW; i++)
		slot_clear(&qp->rcv.rmsg[i]);
	qp->rcv.uc_stuck_at = 0;
	qp->rcv.uc_gone_to = qp->rcv.uc_gone_from;
	qp->rcv.ninv = 0;
	qp->rcv.rd_head = qp->rcv.rd_tail = 0;
	memset(qp->rcv.atomic_done, 0, sizeof(qp->rcv.atomic_done));
}

/* The SRQ-limit event, when fewer WQEs than the armed limit are left;
 * disarmed by whoever wins: a modify_srq arming it again meanwhile keeps
 * its new limit. */
static void srq_limit_check(struct srnic_srq *srq)
{
	uint32_t prod = __atomic_load_n(&srq->prod, __ATOMIC_ACQUIRE);
	uint32_t limit = __atomic_load_n(&srq->limit, __ATOMIC_ACQUIRE);

	if (limit && prod - srq->cons < limit &&
	    __atomic_compare_exchange_n(&srq->limit, &limit, 0, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		srnic_event(SRNIC_EV_SRQ_LIMIT, srq->handle);
}

/* The SRQ's next WQE, moved to *to; false when it has none. */
static bool srq_take(struct srnic_srq *srq, struct srnic_rwqe *to)
{
	if (srq->cons == __atomic_load_n(&srq->prod, __ATOMIC_ACQUIRE))
		return false;
	*to = srq->rq[srq->cons & srq->mask];
	/* The slot is the application's again. */
	__atomic_store_n(&srq->cons, srq->cons + 1, __ATOMIC_RELEASE);
	return true;
}

/*
 * A QP on an SRQ: move WQEs from the SRQ into the QP's own receive ring
 * until the one for receive sequence ssn is there (or the SRQ is empty).
 * Taking them in SSN order, whatever order messages start in, keeps the
 * QP's receives in its message order.  Arms off the SRQ-limit event when
 * fewer than the limit are left.
 */
void srnic_srq_pull(struct srnic_qp *qp, uint32_t ssn)
{
	struct srnic_srq *srq = qp->q.srq;
	uint32_t need = ssn - qp->rcv.exp_ssn + 1;

	while (qp->q.rq_prod - qp->q.rq_comp < need &&
	       qp->q.rq_prod - qp->q.rq_comp <= qp->q.rq_mask &&
	       srq_take(srq, &qp->q.rq[qp->q.rq_prod & qp->q.rq_mask]))
		__atomic_store_n(&qp->q.rq_prod, qp->q.rq_prod + 1,
				 __ATOMIC_RELEASE);
	srq_limit_check(srq);
}

/*
 * An XRC target: each message takes its receive WQE from the SRQ it names
 * when it begins, into the place of its receive sequence ssn in the QP's
 * ring (messages begin in any order, and two of them may name two SRQs,
 * so the ring fills out of order; xrc_rq_srq says which places hold a
 * WQE, and from where).  True when ssn has its WQE, now or from before.
 * An SRQ's WQEs go to messages in the order they begin, which for
 * messages of one QP is mostly their order.
 */
static bool xrc_take(struct srnic_qp *qp, struct srnic_srq *srq, uint32_t ssn)
{
	uint32_t d = ssn - qp->rcv.exp_ssn, i;

	if (!srq || d > qp->q.rq_mask)
		return false;
	i = (qp->q.rq_comp + d) & qp->q.rq_mask;
	if (qp->xrc_rq_srq[i])
		return true;
	if (!srq_take(srq, &qp->q.rq[i]))
		return false;
	qp->xrc_rq_srq[i] = srq;
	srq_limit_check(srq);
	return true;
}

/* The CQ of the receive whose turn it is: an XRC target's comes from the
 * SRQ its WQE came from (NULL: that SRQ is gone). */
static struct srnic_cq *recv_cq_of(const struct srnic_qp *qp)
{
	if (!qp->xrc_rq_srq)
		return qp->q.recv_cq;
	return qp->xrc_rq_srq[qp->q.rq_comp & qp->q.rq_mask]
		       ? qp->xrc_rq_srq[qp->q.rq_comp & qp->q.rq_mask]->cq
		       : NULL;
}

/* The receive whose turn it is is used up (an XRC target's place in the
 * ring empties: its ring is the datapath's alone, rq_prod kept level). */
static void rq_done(struct srnic_qp *qp)
{
	if (qp->xrc_rq_srq) {
		qp->xrc_rq_srq[qp->q.rq_comp & qp->q.rq_mask] = NULL;
		qp->q.rq_prod++;
	}
	srnic_rq_consumed(qp);
}

/* May the peer do this (right) to len bytes at (rkey, va)?  The QP must
 * grant the right and the region allow it; nothing to touch is fine. */
static enum srnic_mem_check remote_check(const struct srnic_engine *eng,
					 const struct srnic_qp *qp, uint32_t pd,
					 uint32_t rkey, uint64_t va,
					 uint64_t len, uint32_t right)
{
	if (!(qp->access & right))
		return SRNIC_MEM_NO_RIGHTS;
	return len ? srnic_mem_check_remote(&eng->mem, rkey, pd, qp->q.qpn,
					    va, len, right)
		   : SRNIC_MEM_OK;
}

/*
 * The SRQ a request to an XRC target QP is for: one of its domain, named
 * by the packet's XRC extension; its PD is the one the message's memory
 * is checked against.  NULL for any other QP, or a number that names no
 * SRQ of the domain.
 */
static struct srnic_srq *xrc_srq_of(const struct srnic_engine *eng,
				    const struct srnic_qp *qp,
				    const struct srnic_pkt *pkt)
{
	struct srnic_srq **tab = __atomic_load_n(&eng->xrc_srq,
						 __ATOMIC_ACQUIRE);
	struct srnic_srq *srq;

	/* (another process's number, or none: no SRQ of this one) */
	if (qp->xrc != SRNIC_XRC_TGT || !(pkt->flags & SRNIC_F_XRC) || !tab ||
	    pkt->xrc_srqn >> SRNIC_XRC_SRQ_INDEX_BITS != eng->mem.owner)
		return NULL;
	srq = __atomic_load_n(&tab[pkt->xrc_srqn & (SRNIC_MAX_XRC_SRQ - 1)],
			      __ATOMIC_ACQUIRE);
	return srq && srq->srqn == pkt->xrc_srqn && srq->xrcd == qp->xrcd
		       ? srq
		       : NULL;
}

/* The PD a request's memory is checked against: the QP's, or an XRC
 * target's SRQ's (*srq, else NULL); false when the request may not come
 * here (an XRC request to another QP, or one naming no SRQ of the
 * target's domain). */
static bool request_pd(struct srnic_engine *eng, const struct srnic_qp *qp,
		       const struct srnic_pkt *pkt, uint32_t *pd,
		       struct srnic_srq **srq)
{
	*pd = qp->pd;
	*srq = NULL;
	if (qp->xrc == SRNIC_XRC_NONE && !(pkt->flags & SRNIC_F_XRC))
		return true;
	*srq = xrc_srq_of(eng, qp, pkt);
	if (!*srq) {
		eng->st->drops[SRNIC_DROP_BAD_XRC]++;
		return false;
	}
	*pd = (*srq)->pd;
	return true;
}

/*
 * Invalidation in message order: a SEND with invalidate revokes its key
 * when it completes, but a later WRITE may land before that (packets land
 * as they come).  Until then the key counts as gone already for any
 * message after it.
 */
static void inv_forget(struct srnic_qp *qp, uint32_t msn)
{
	unsigned i;

	for (i = 0; i < qp->rcv.ninv; i++)
		if (qp->rcv.inv[i].msn == msn) {
			qp->rcv.inv[i] = qp->rcv.inv[--qp->rcv.ninv];
			return;
		}
}

static bool inv_revoked_for(const struct srnic_qp *qp, uint32_t msn,
			    uint32_t rkey)
{
	unsigned i;

	for (i = 0; i < qp->rcv.ninv; i++)
		if (qp->rcv.inv[i].rkey == rkey && seq_diff(msn, qp->rcv.inv[i].msn) > 0)
			return true;
	return false;
}

/* May this WRITE packet land?  One that carries nothing (a zero-length
 * WRITE, which UCX posts to flush a QP) touches no memory: as on IB, its
 * key and address are not checked (rkey 0, va 0 from UCX). */
static enum srnic_mem_check write_check(const struct srnic_engine *eng,
					const struct srnic_qp *qp,
					const struct srnic_rmsg *s,
					const struct srnic_pkt *pkt)
{
	if (!pkt->pkt_len)
		return SRNIC_MEM_OK;
	if (qp->rcv.ninv && inv_revoked_for(qp, pkt->msn, pkt->rkey))
		return SRNIC_MEM_BAD_KEY;
	return srnic_mem_check_remote(&eng->mem, pkt->rkey, s->pd, qp->q.qpn,
				      pkt->va, pkt->pkt_len,
				      SRNIC_ACCESS_REMOTE_WRITE);
}

/* The drop counter an access check's verdict goes to. */
static void count_access(struct srnic_engine *eng, enum srnic_mem_check r)
{
	eng->st->drops[r == SRNIC_MEM_OUT_OF_BOUNDS ? SRNIC_DROP_OUT_OF_BOUNDS
		      : r == SRNIC_MEM_NO_RIGHTS   ? SRNIC_DROP_NO_RIGHTS
						   : SRNIC_DROP_BAD_KEY]++;
}

static void fail(struct srnic_engine *eng, struct srnic_qp *qp,
		 struct srnic_rmsg *s, uint8_t syndrome, uint8_t status)
{
	srnic_track_fini(&s->trk);
	if (s->held) {
		rte_pktmbuf_free(s->held);
		s->held = NULL;
	}
	s->state = RMSG_FAILED;
	s->nak = syndrome;
	s->status = status;
	if (s->flags & SRNIC_F_INV)
		inv_forget(qp, s->msn);	/* it will invalidate nothing */
	nak(eng, qp, syndrome, s->msn, s->txid);
}

/*
 * First packet of a message: take the slot, find the
 * receive WQE, check what can be checked once for the whole message.
 * Returns false when the packet must be dropped (RNR).
 */
static bool slot_start(struct srnic_engine *eng, struct srnic_qp *qp,
		       struct srnic_rmsg *s, const struct srnic_pkt *pkt)
{
	struct srnic_srq *srq;	/* an XRC target's: the message's SRQ */
	enum srnic_mem_check r;

	slot_clear(s);
	s->msn = pkt->msn;
	s->txid = pkt->txid;
	s->ssn = pkt->ssn - qp->rcv.uc_skew;	/* (RC: skew 0) */
	s->msg_len = pkt->msg_len;
	s->imm = pkt->imm;
	s->flags = pkt->flags;
	s->opcode = pkt->opcode;
	if (!request_pd(eng, qp, pkt, &s->pd, &srq)) {
		fail(eng, qp, s, SRNIC_NAK_INVALID, SRNIC_WC_REM_INV_REQ_ERR);
		return true;
	}

	if (pkt->opcode == SRNIC_OP_ATOMIC_REQ) {
		/* Runs in its turn, like a READ; checked now as well, so a
		 * bad key is NAKed at once. */
		s->rkey = pkt->rkey;
		s->va = pkt->va;
		s->trk.shift = pkt->stride_shift;
		s->operand[0] = srnic_get64(pkt->payload);
		s->operand[1] = srnic_get64(pkt->payload + 8);
		s->state = RMSG_READ;
		r = remote_check(eng, qp, s->pd, pkt->rkey, pkt->va,
				 SRNIC_ATOMIC_LEN,
				 SRNIC_ACCESS_REMOTE_ATOMIC);
		if (r != SRNIC_MEM_OK) {
			count_access(eng, r);
			fail(eng, qp, s, SRNIC_NAK_ACCESS,
			     SRNIC_WC_REM_ACCESS_ERR);
		}
		return true;
	}
	if (pkt->opcode == SRNIC_OP_READ_REQ) {
		s->rkey = pkt->rkey;
		s->va = pkt->va;
		s->trk.shift = pkt->stride_shift;
		s->state = RMSG_READ;
		r = remote_check(eng, qp, s->pd, pkt->rkey, pkt->va,
				 pkt->msg_len,
				 SRNIC_ACCESS_REMOTE_READ);
		if (r != SRNIC_MEM_OK) {
			count_access(eng, r);
			fail(eng, qp, s, SRNIC_NAK_ACCESS,
			     SRNIC_WC_REM_ACCESS_ERR);
		} else if ((1u << pkt->stride_shift) > eng->payload_max)
			/* Packets larger than this node's ports carry. */
			fail(eng, qp, s, SRNIC_NAK_INVALID,
			     SRNIC_WC_REM_INV_REQ_ERR);
		return true;
	}
	if (pkt->flags & SRNIC_F_INV) {
		/* Send with invalidate: the key must be a remote key of this
		 * QP's PD (a region's with a remote right, or a type 2
		 * window's bound to this QP), else the request is invalid (a
		 * peer may not take a local-only key away); it is revoked on
		 * completion. */
		s->rkey = pkt->rkey;
		if (pkt->opcode != SRNIC_OP_SEND ||
		    !srnic_mem_invalidatable(&eng->mem, pkt->rkey, s->pd,
					     qp->q.qpn)) {
			eng->st->drops[SRNIC_DROP_BAD_KEY]++;
			fail(eng, qp, s, SRNIC_NAK_INVALID,
			     SRNIC_WC_REM_INV_REQ_ERR);
			return true;
		}
		if (qp->rcv.ninv == SRNIC_INV_PENDING) {
			/* Too many at once: not ready, ask again later. */
			s->state = RMSG_FREE;
			eng->st->drops[SRNIC_DROP_RNR]++;
			nak(eng, qp, SRNIC_NAK_RNR, pkt->msn, pkt->txid);
			return false;
		}
	}
	if (pkt->opcode == SRNIC_OP_WRITE &&
	    !(qp->access & SRNIC_ACCESS_REMOTE_WRITE)) {
		count_access(eng, SRNIC_MEM_NO_RIGHTS);
		fail(eng, qp, s, SRNIC_NAK_ACCESS, SRNIC_WC_REM_ACCESS_ERR);
		return true;
	}

	if (pkt->flags & SRNIC_F_RECV_CQE) {
		struct srnic_rwqe *r;
		bool have;
		int64_t room;

		if (qp->xrc == SRNIC_XRC_TGT) {
			have = xrc_take(qp, srq, s->ssn);
		} else {
			if (qp->q.srq &&
			    (uint32_t)(s->ssn - qp->rcv.exp_ssn) < SRNIC_WINDOW)
				srnic_srq_pull(qp, s->ssn);
			have = (uint32_t)(s->ssn - qp->rcv.exp_ssn) <
			       srnic_rq_posted(qp);
		}
		if (!have && !srnic_qp_reliable(qp)) {
			/* UC: no receive WQE, the message is lost (given up
			 * in its turn: it has a slot, which says how many
			 * receive WQEs it would have taken). */
			eng->st->drops[SRNIC_DROP_RNR]++;
			fail(eng, qp, s, SRNIC_NAK_RNR, SRNIC_WC_GENERAL_ERR);
			return true;
		}
		if (!have) {
			/* No receive WQE for it yet: receiver not ready. */
			s->state = RMSG_FREE;
			eng->st->drops[SRNIC_DROP_RNR]++;
			eng->st->rnr_naks_sent++;
			nak(eng, qp, SRNIC_NAK_RNR, pkt->msn, pkt->txid);
			return false;
		}
		r = srnic_recv_wqe(qp, s->ssn);
		if (pkt->opcode == SRNIC_OP_SEND) {
			room = srnic_sge_check_all(&eng->mem, s->pd, r->sge,
						   r->num_sge,
						   SRNIC_ACCESS_LOCAL_WRITE);
			if (room < 0) {
				fail(eng, qp, s, SRNIC_NAK_OPERATIONAL,
				     SRNIC_WC_LOC_PROT_ERR);
				return true;
			}
			if (room < pkt->msg_len) {
				fail(eng, qp, s, SRNIC_NAK_INVALID,
				     SRNIC_WC_LOC_LEN_ERR);
				return true;
			}
		}
	}
	if (srnic_track_init(&s->trk, pkt->msg_len, pkt->stride_shift)) {
		s->state = RMSG_FREE;
		return false;	/* no memory: the requester will retry */
	}
	if (pkt->flags & SRNIC_F_INV) {
		qp->rcv.inv[qp->rcv.ninv].msn = pkt->msn;
		qp->rcv.inv[qp->rcv.ninv++].rkey = pkt->rkey;
	}
	s->state = RMSG_RECEIVING;
	if (!srnic_qp_reliable(qp) && pkt->msn != qp->rcv.exp_msn)
		uc_watch(eng, qp);	/* the oldest may be lost */
	return true;
}

/* Write one packet's payload where it belongs; false (counted) when an
 * access check refuses it. */
static bool place(struct srnic_engine *eng, struct srnic_qp *qp,
		  struct srnic_rmsg *s, const struct srnic_pkt *pkt)
{
	enum srnic_mem_check r;

	if (!pkt->pkt_len)
		return true;
	if (pkt->opcode == SRNIC_OP_WRITE) {
		r = write_check(eng, qp, s, pkt);
		if (r != SRNIC_MEM_OK) {
			count_access(eng, r);
			return false;
		}
		if (pkt->flags & SRNIC_F_ATOMIC_WR) {
			/* 8 aligned bytes, stored as one (the wire checked
			 * the length and the alignment) */
			uint64_t v, old;

			memcpy(&v, pkt->payload, sizeof(v));
			if (!srnic_mem_atomic(&eng->mem,
					      (uint64_t *)(uintptr_t)pkt->va,
					      SRNIC_AMO_STORE, v, 0, &old)) {
				eng->st->drops[SRNIC_DROP_PAGE_FAULT]++;
				return false;
			}
			return true;
		}
		if (!srnic_mem_copy(&eng->mem, (void *)(uintptr_t)pkt->va,
				    pkt->payload, pkt->pkt_len)) {
			eng->st->drops[SRNIC_DROP_PAGE_FAULT]++;
			return false;
		}
		return true;
	}
	{
		struct srnic_rwqe *r = srnic_recv_wqe(qp, s->ssn);

		return srnic_sge_scatter(&eng->mem, s->pd, r->sge, r->num_sge,
					 pkt->msg_off, pkt->payload,
					 pkt->pkt_len) == 0;
	}
}

/* Decode a held packet again: its payload pointer is only valid now. */
static bool place_held(struct srnic_engine *eng, struct srnic_qp *qp,
		       struct srnic_rmsg *s)
{
	struct rte_mbuf *m = s->held;
	struct srnic_pkt pkt;
	bool ok;

	s->held = NULL;
	ok = srnic_wire_decode(rte_pktmbuf_mtod(m, const uint8_t *),
			       rte_pktmbuf_data_len(m), &pkt) == SRNIC_WIRE_OK &&
	     place(eng, qp, s, &pkt);
	rte_pktmbuf_free(m);
	return ok;
}

static bool emit_recv_cqe(struct srnic_engine *eng, struct srnic_qp *qp,
			  struct srnic_rmsg *s)
{
	struct srnic_cq *cq = recv_cq_of(qp);
	struct srnic_rwqe *r = srnic_recv_wqe(qp, s->ssn);
	struct srnic_cqe *c;

	if (!cq) {
		/* an XRC SRQ destroyed under the message: nowhere to
		 * complete (its WQE went with it) */
		if (s->flags & SRNIC_F_INV)
			inv_forget(qp, s->msn);
		rq_done(qp);
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
	rq_done(qp);
	srnic_cq_publish(cq);
	return true;
}

/* A packet could not be written: a WRITE's key, bounds or rights, or the
 * receive WQE's memory (deregistered meanwhile). */
static void fail_placement(struct srnic_engine *eng, struct srnic_qp *qp,
			   struct srnic_rmsg *s)
{
	bool write = s->opcode == SRNIC_OP_WRITE;

	fail(eng, qp, s, write ? SRNIC_NAK_ACCESS : SRNIC_NAK_OPERATIONAL,
	     write ? SRNIC_WC_REM_ACCESS_ERR : SRNIC_WC_LOC_PROT_ERR);
}

/*
 * Run atomic s on the application's memory, checked again (the region may
 * have gone since the request came): a locked instruction of the CPU, so
 * it is atomic against every other atomic of this node and the CPUs' own.
 * Leaves the old value in s->operand[0] and keeps it for copies of the
 * request.  False when the check fails, or the page is not there (s is
 * failed and NAKed).
 */
static bool run_atomic(struct srnic_engine *eng, struct srnic_qp *qp,
		       struct srnic_rmsg *s)
{
	enum srnic_mem_check r = remote_check(eng, qp, s->pd, s->rkey, s->va,
					      SRNIC_ATOMIC_LEN,
					      SRNIC_ACCESS_REMOTE_ATOMIC);
	uint64_t *p = (uint64_t *)(uintptr_t)s->va, old;
	struct srnic_atomic_done *d;

	if (r != SRNIC_MEM_OK) {
		count_access(eng, r);
		fail(eng, qp, s, SRNIC_NAK_ACCESS, SRNIC_WC_REM_ACCESS_ERR);
		return false;
	}
	if (!srnic_mem_atomic(&eng->mem, p,
			      s->flags & SRNIC_F_CAS ? SRNIC_AMO_CAS
						     : SRNIC_AMO_ADD,
			      s->operand[0], s->operand[1], &old)) {
		/* a page of an on-demand region not there */
		eng->st->drops[SRNIC_DROP_PAGE_FAULT]++;
		fail(eng, qp, s, SRNIC_NAK_ACCESS, SRNIC_WC_REM_ACCESS_ERR);
		return false;
	}
	s->operand[0] = old;
	d = &qp->rcv.atomic_done[qp->rcv.atomic_next++ % SRNIC_MAX_RD_ATOMIC];
	d->msn = s->msn;
	d->value = old;
	d->valid = 1;
	eng->st->atomics++;
	return true;
}

/* Complete, in MSN order, every message whose turn has come.  A message
 * all of whose packets are in still holds back its last-byte packet until
 * it is next in line: that one is placed here. */
/* UC: the oldest message cannot complete yet; watch it if nothing does
 * (whatever left it stuck: a later message failing at its first packet, a
 * watch dropped while the oldest waited for CQ room). */
static void uc_head_waits(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (!srnic_qp_reliable(qp) && !qp->rcv.uc_stuck_at && uc_stuck(qp))
		uc_watch(eng, qp);
}

static void advance(struct srnic_engine *eng, struct srnic_qp *qp)
{
	for (;;) {
		struct srnic_rmsg *s = &qp->rcv.rmsg[qp->rcv.exp_msn % SRNIC_WINDOW];

		if (s->msn != qp->rcv.exp_msn || s->state == RMSG_FREE) {
			uc_head_waits(eng, qp);
			return;
		}
		if (s->state == RMSG_RECEIVING) {
			if (!srnic_track_complete(&s->trk)) {
				uc_head_waits(eng, qp);
				/* Stuck behind a gap while the next message
				 * is in already: no later arrival may come
				 * to point at the gap, so point at it now. */
				struct srnic_rmsg *n =
					&qp->rcv.rmsg[(qp->rcv.exp_msn + 1) % SRNIC_WINDOW];

				if (n->msn == qp->rcv.exp_msn + 1 &&
				    (n->state == RMSG_PLACED ||
				     (n->state == RMSG_RECEIVING &&
				      srnic_track_complete(&n->trk))))
					maybe_sack(eng, qp, qp->rcv.exp_msn + 1);
				return;
			}
			if (s->held && !place_held(eng, qp, s)) {
				fail_placement(eng, qp, s);
				continue;	/* the FAILED case below */
			}
			srnic_track_fini(&s->trk);
			s->state = RMSG_PLACED;
		}
		if (s->state == RMSG_FAILED) {
			/* A receive that could not land completes in error
			 * and takes the QP down; a bad key only NAKs (UC:
			 * the message is dropped, and the QP goes on). */
			if (s->status == SRNIC_WC_LOC_LEN_ERR ||
			    s->status == SRNIC_WC_LOC_PROT_ERR) {
				if (emit_recv_cqe(eng, qp, s)) {
					srnic_qp_to_error(eng, qp);
				} else {
					srnic_qp_cq_full(eng, qp);
				}
			} else if (!srnic_qp_reliable(qp)) {
				uc_give_up(eng, qp, false);
			}
			return;
		}
		if (s->state == RMSG_READ) {
			struct srnic_read_job *j;

			if (qp->rcv.rd_tail - qp->rcv.rd_head == SRNIC_MAX_RD_ATOMIC)
				return;
			/* An atomic runs here, once: every message before
			 * it is done, and its answer has a job to go in. */
			if (s->opcode == SRNIC_OP_ATOMIC_REQ &&
			    !run_atomic(eng, qp, s))
				continue;	/* failed: the case below */
			j = &qp->rcv.rd_jobs[qp->rcv.rd_tail++ % SRNIC_MAX_RD_ATOMIC];
			j->msn = s->msn;
			j->txid = s->txid;
			j->rkey = s->rkey;
			j->pd = s->pd;
			j->va = s->va;
			j->len = s->msg_len;
			j->shift = s->trk.shift;
			j->sent = 0;
			j->end = s->msg_len;
			j->atomic = s->opcode == SRNIC_OP_ATOMIC_REQ;
			j->again = 0;
			j->value = j->atomic ? s->operand[0] : 0;
			srnic_qp_activate(eng, qp);
		} else if ((s->flags & SRNIC_F_RECV_CQE) &&
			   s->ssn != qp->rcv.exp_ssn) {
			/* Its number names another receive WQE than the one
			 * whose turn it is: the peer numbered wrong.  Nothing
			 * completes from it (RC: NAKed; UC: given up). */
			eng->st->drops[SRNIC_DROP_MALFORMED]++;
			fail(eng, qp, s, SRNIC_NAK_INVALID, SRNIC_WC_GENERAL_ERR);
			continue;
		} else if (s->flags & SRNIC_F_RECV_CQE) {
			if (!emit_recv_cqe(eng, qp, s)) {
				srnic_qp_cq_full(eng, qp);
				return;
			}
		}
		slot_clear(s);
		qp->rcv.exp_msn++;
		srnic_qp_want_ack_lazy(eng, qp);
	}
}

/*
 * A copy of an atomic request that ran already (its answer was lost, or is
 * late): answer with what it found then, never run it again.  One too old
 * to be remembered cannot be outstanding any more (the requester has at
 * most SRNIC_MAX_RD_ATOMIC); it is dropped.
 */
static void reanswer_atomic(struct srnic_engine *eng, struct srnic_qp *qp,
			    const struct srnic_pkt *pkt)
{
	const struct srnic_atomic_done *d = NULL;
	struct srnic_read_job *j;
	uint32_t i;

	for (i = 0; i < SRNIC_MAX_RD_ATOMIC; i++)
		if (qp->rcv.atomic_done[i].valid &&
		    qp->rcv.atomic_done[i].msn == pkt->msn)
			d = &qp->rcv.atomic_done[i];
	for (i = qp->rcv.rd_head; d && i != qp->rcv.rd_tail; i++) {
		j = &qp->rcv.rd_jobs[i % SRNIC_MAX_RD_ATOMIC];
		if (j->msn == pkt->msn) {
			if (seq_diff(pkt->txid, j->txid) > 0)
				j->txid = pkt->txid;	/* still going out */
			else if (pkt->txid != j->txid)
				eng->st->drops[SRNIC_DROP_STALE_TXID]++;
			return;
		}
	}
	if (!d || qp->rcv.rd_tail - qp->rcv.rd_head == SRNIC_MAX_RD_ATOMIC) {
		eng->st->drops[SRNIC_DROP_DUPLICATE]++;
		return;
	}
	j = &qp->rcv.rd_jobs[qp->rcv.rd_tail++ % SRNIC_MAX_RD_ATOMIC];
	memset(j, 0, sizeof(*j));
	j->msn = pkt->msn;
	j->txid = pkt->txid;
	j->len = j->end = SRNIC_ATOMIC_LEN;
	j->shift = pkt->stride_shift;
	j->atomic = 1;
	j->value = d->value;
	srnic_qp_activate(eng, qp);
}

/*
 * Whether [va, va + len) is mapped in this process.  A region can stay
 * registered after its program unmapped the memory: UCX's cache of
 * registrations lets go of them a while later, and MPI frees a send
 * buffer as soon as the peer's READ of it has completed.  A request for
 * part of that READ again, from a requester that had not seen the answer
 * yet, then read through the hole and killed the process (e2e/18, once
 * in CI).  Such a request gets no answer the requester still needs, so it
 * pays a system call (msync validates the range and, MS_ASYNC, does
 * nothing else); a first request, and every packet, pays none.  The
 * program can still unmap the memory between this check and the job's
 * last copy: the requester that asked again lacked only packets that were
 * late, they came, the READ completed and MPI freed the buffer while the
 * job was still answering (e2e/18b, four nodes on the tap wire, two
 * ranks each: three ranks died of it in its first run, a segfault in
 * srnic_responder_reads; guarded, a run met three such holes).  So a
 * job asked for again (j->again) copies under the guard of on-demand
 * regions (guard.c), never zero-copy, and a hole ends it as this check
 * does; a first request's job is never guarded: its requester waits for
 * every byte of it, which the program may not free meanwhile.
 */
static bool mapped(uint64_t va, uint64_t len)
{
	static uintptr_t page;
	uintptr_t start;

	if (!len)
		return true;
	if (!page)
		page = (uintptr_t)sysconf(_SC_PAGESIZE);
	start = (uintptr_t)va & ~(page - 1);
	return msync((void *)start, (uintptr_t)(va + len) - start,
		     MS_ASYNC) == 0;
}

/* A job asked for again copies guarded (mapped()): whether it can be,
 * the guard's handler installed. */
static uint8_t guard_again(void)
{
	return srnic_guard_enable() == 0;
}

/* Answer a READ again: the request is idempotent, the response is not kept. */
static void reread(struct srnic_engine *eng, struct srnic_qp *qp,
		   const struct srnic_pkt *pkt)
{
	uint32_t end = pkt->read_len ? pkt->msg_off + pkt->read_len
				     : pkt->msg_len;
	struct srnic_read_job *j;
	struct srnic_srq *srq;
	enum srnic_mem_check r;
	uint32_t i, pd;

	for (i = qp->rcv.rd_head; i != qp->rcv.rd_tail; i++) {
		j = &qp->rcv.rd_jobs[i % SRNIC_MAX_RD_ATOMIC];
		if (j->msn != pkt->msn)
			continue;
		if (j->txid == pkt->txid && j->sent <= pkt->msg_off &&
		    end <= j->end) {
			/* A copy of a request being answered: it will be. */
			eng->st->drops[SRNIC_DROP_DUPLICATE]++;
			return;
		}
		if (j->txid == pkt->txid && pkt->msg_off < j->sent &&
		    end > j->sent && end <= j->end)
			end = j->sent;	/* the rest is on its way already */
		if (seq_diff(pkt->txid, j->txid) < 0) {
			/* A late request of an older attempt: the requester
			 * no longer listens to its answer. */
			eng->st->drops[SRNIC_DROP_STALE_TXID]++;
			return;
		}
		if (j->txid != pkt->txid) {
			/* Still answering an older attempt: answer this one
			 * instead (its other ranges get jobs of their own). */
			if (pkt->va != j->va || pkt->rkey != j->rkey ||
			    pkt->msg_len != j->len) {
				eng->st->drops[SRNIC_DROP_MALFORMED]++;
				return;
			}
			j->txid = pkt->txid;
			j->sent = pkt->msg_off;
			j->end = end;
			j->again = guard_again();
			return;
		}
	}
	/* Asked again for what was answered already (all of it, or the
	 * part the requester lacks): the range is checked as the first
	 * request was, READ is idempotent.  A region gone since is NAKed,
	 * as the first request would have been. */
	if (qp->rcv.rd_tail - qp->rcv.rd_head == SRNIC_MAX_RD_ATOMIC ||
	    (1u << pkt->stride_shift) > eng->payload_max) {
		eng->st->drops[SRNIC_DROP_DUPLICATE]++;
		return;
	}
	if (!request_pd(eng, qp, pkt, &pd, &srq)) {
		nak(eng, qp, SRNIC_NAK_INVALID, pkt->msn, pkt->txid);
		return;
	}
	r = remote_check(eng, qp, pd, pkt->rkey, pkt->va + pkt->msg_off,
			 end - pkt->msg_off, SRNIC_ACCESS_REMOTE_READ);
	if (r != SRNIC_MEM_OK) {
		count_access(eng, r);
		nak(eng, qp, SRNIC_NAK_ACCESS, pkt->msn, pkt->txid);
		return;
	}
	if (!mapped(pkt->va + pkt->msg_off, end - pkt->msg_off)) {
		eng->st->drops[SRNIC_DROP_UNMAPPED]++;
		nak(eng, qp, SRNIC_NAK_ACCESS, pkt->msn, pkt->txid);
		return;
	}
	j = &qp->rcv.rd_jobs[qp->rcv.rd_tail++ % SRNIC_MAX_RD_ATOMIC];
	j->msn = pkt->msn;
	j->txid = pkt->txid;
	j->rkey = pkt->rkey;
	j->pd = pd;
	j->va = pkt->va;
	j->len = pkt->msg_len;
	j->shift = pkt->stride_shift;
	j->sent = pkt->msg_off;
	j->end = end;
	/* (the slot may have answered an atomic last) */
	j->atomic = 0;
	j->again = guard_again();
	srnic_qp_activate(eng, qp);
}

/* Every packet of message s is in. */
static void message_in(struct srnic_engine *eng, struct srnic_qp *qp,
		       struct srnic_rmsg *s)
{
	if (s->msn == qp->rcv.exp_msn)
		advance(eng, qp);
	else if (srnic_qp_reliable(qp))
		maybe_sack(eng, qp, s->msn);
	else
		uc_watch(eng, qp);
}

/* A new packet of qp is in: credit to give back now and then. */
static inline void landed(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (srnic_fc_landed(qp, eng->fc_grant))
		srnic_qp_want_ack(eng, qp);
}

/* Returns true when it kept m (a held last packet). */
static bool rx_packet(struct srnic_engine *eng, struct srnic_qp *qp,
		      const struct srnic_pkt *pkt, struct rte_mbuf *m)
{
	struct srnic_rmsg *s;
	int32_t d = seq_diff(pkt->msn, qp->rcv.exp_msn);
	uint32_t idx;

	if (pkt->ts)
		qp->rcv.ts_recent = pkt->ts;	/* echoed by the next ACK */
	/* RDMA only from a peer that confirmed it forgot our older
	 * incarnations (integrate.c); SEND needs no such wait. */
	if (pkt->opcode != SRNIC_OP_SEND && !srnic_qp_peer_rdma_ok(qp)) {
		eng->st->drops[SRNIC_DROP_NOT_INTEGRATED]++;
		return false;
	}
	if (d < 0) {
		if (pkt->opcode == SRNIC_OP_READ_REQ && d >= -SRNIC_WINDOW) {
			reread(eng, qp, pkt);
			return false;
		}
		if (pkt->opcode == SRNIC_OP_ATOMIC_REQ) {
			reanswer_atomic(eng, qp, pkt);
			return false;
		}
		/* Done already: say so again, the ACK may have been lost. */
		if (srnic_qp_reliable(qp))
			eng->st->drops[SRNIC_DROP_DUPLICATE]++;
		else
			uc_late(eng, qp, pkt->msn);
		srnic_qp_want_ack(eng, qp);
		return false;
	}
	if (d >= SRNIC_WINDOW && !srnic_qp_reliable(qp) &&
	    uc_jump(eng, qp, pkt))
		d = 0;	/* (UC: it is the oldest now) */
	if (d >= SRNIC_WINDOW) {
		eng->st->drops[SRNIC_DROP_OUT_OF_WINDOW]++;
		return false;
	}

	s = &qp->rcv.rmsg[pkt->msn % SRNIC_WINDOW];
	if (s->state == RMSG_FREE || s->msn != pkt->msn) {
		if (!slot_start(eng, qp, s, pkt))
			return false;
	} else if (s->txid != pkt->txid) {
		if (s->state == RMSG_READ && seq_diff(pkt->txid, s->txid) > 0) {
			/* A READ still waiting for its turn: answer the
			 * newest attempt, which is the one the requester
			 * listens to. */
			s->txid = pkt->txid;
			return false;
		}
		if (seq_diff(pkt->txid, s->txid) < 0 ||
		    s->state != RMSG_RECEIVING) {
			/* An older attempt, or the message is in already. */
			eng->st->drops[seq_diff(pkt->txid, s->txid) < 0
					      ? SRNIC_DROP_STALE_TXID
					      : SRNIC_DROP_DUPLICATE]++;
			if (s->state == RMSG_FAILED)
				nak(eng, qp, s->nak, s->msn, pkt->txid);
			return false;
		}
		/* A newer attempt of a message still coming in: what landed
		 * stays (the same bytes, at the same places), so a message
		 * resent under loss completes as soon as its missing packets
		 * do.  Packets of the older attempt are dropped from now on. */
		s->txid = pkt->txid;
	} else if (s->state != RMSG_RECEIVING) {
		eng->st->drops[SRNIC_DROP_DUPLICATE]++;
		if (s->state == RMSG_FAILED)
			nak(eng, qp, s->nak, s->msn, s->txid);
		return false;
	}

	if (s->state != RMSG_RECEIVING) {
		advance(eng, qp);	/* READ, or failed at its first packet */
		return false;
	}
	if (pkt->opcode != s->opcode || pkt->msg_len != s->msg_len ||
	    pkt->stride_shift != s->trk.shift) {
		eng->st->drops[SRNIC_DROP_MALFORMED]++;
		return false;
	}
	idx = pkt->msg_off >> s->trk.shift;
	if (idx >= s->trk.npkts || srnic_track_test(&s->trk, idx)) {
		eng->st->drops[SRNIC_DROP_DUPLICATE]++;
		/* A requester probing a message we still lack packets of
		 * (it resends its last packet): tell it which. */
		if (pkt->msn == qp->rcv.exp_msn)
			maybe_sack(eng, qp, qp->rcv.exp_msn + 1);
		return false;
	}

	/* The packet with a message's last byte lands after every other
	 * byte of the message and of every earlier message, so a program
	 * polling that byte (a flag written after the data, as ib_write_lat
	 * does) sees everything before it.  It is checked now all the same:
	 * a bad key is NAKed when it arrives, not when the rest does. */
	if ((pkt->flags & SRNIC_F_LAST) &&
	    (s->trk.ndone + 1 < s->trk.npkts || pkt->msn != qp->rcv.exp_msn)) {
		enum srnic_mem_check r = pkt->opcode != SRNIC_OP_WRITE
						 ? SRNIC_MEM_OK
						 : write_check(eng, qp, s, pkt);

		if (r != SRNIC_MEM_OK) {
			count_access(eng, r);
			fail(eng, qp, s, SRNIC_NAK_ACCESS,
			     SRNIC_WC_REM_ACCESS_ERR);
			advance(eng, qp);	/* (UC gives it up there) */
			return false;
		}
		srnic_track_mark(&s->trk, idx);
		landed(eng, qp);
		s->held = m;
		if (srnic_track_complete(&s->trk))
			message_in(eng, qp, s);
		return true;
	}
	if (!place(eng, qp, s, pkt)) {
		fail_placement(eng, qp, s);
		advance(eng, qp);	/* (UC gives it up there) */
		return false;
	}
	srnic_track_mark(&s->trk, idx);
	landed(eng, qp);
	if (srnic_track_complete(&s->trk))
		message_in(eng, qp, s);
	return false;
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
			sack_slot(eng, qp, s, srnic_now());
		return;
	}
	srnic_qp_want_ack(eng, qp);
}

bool srnic_responder_rx(struct srnic_engine *eng, struct srnic_qp *qp,
			const struct srnic_pkt *pkt, struct rte_mbuf *m)
{
	bool kept = rx_packet(eng, qp, pkt, m);

	if (unlikely(pkt->flags & SRNIC_F_PROBE))
		answer_probe(eng, qp, pkt);
	return kept;
}

/*
 * A later message has all its packets while earlier ones still lack some,
 * which were sent before it: those are most likely lost.  Say which (a SACK
 * with the next ACK) for the oldest such message below `below`, so the
 * requester sends them again now: holes in several messages are pointed at
 * one after the other, as later messages come in, not each in its turn at
 * the head of the window.  At most one SACK a message every SACK_GAP_US:
 * packets merely late on the other port cost a few duplicates, never a
 * storm.
 */
#define SACK_GAP_US 500

static void maybe_sack(struct srnic_engine *eng, struct srnic_qp *qp,
		       uint32_t below)
{
	uint64_t now = srnic_now(), gap = eng->tsc_hz / 1000000 * SACK_GAP_US;
	struct srnic_rmsg *s = NULL;
	uint32_t m;

	/* One SACK waits to go out: it goes first (and this call's scan
	 * would be spent for nothing). */
	if (qp->rcv.sack_due)
		return;
	for (m = qp->rcv.exp_msn; seq_diff(m, below) < 0 &&
			      seq_diff(m, qp->rcv.exp_msn) < SRNIC_WINDOW; m++) {
		s = &qp->rcv.rmsg[m % SRNIC_WINDOW];
		if (s->msn == m && s->state == RMSG_RECEIVING &&
		    !srnic_track_complete(&s->trk) && now - s->sack_tsc >= gap)
			break;
		s = NULL;
	}
	if (s)
		sack_slot(eng, qp, s, now);
}

/* The SACK of what message s lacks goes with the next ACK. */
static void sack_slot(struct srnic_engine *eng, struct srnic_qp *qp,
		      struct srnic_rmsg *s, uint64_t now)
{
	uint64_t bits = 0;
	uint32_t first, k;

	first = srnic_track_next(&s->trk, 0, false);
	if (first == s->trk.npkts)
		return;
	for (k = 1; k <= 64 && first + k < s->trk.npkts; k++)
		if (!srnic_track_test(&s->trk, first + k))
			bits |= 1ull << (k - 1);
	s->sack_tsc = now;
	qp->rcv.sack_due = 1;
	qp->rcv.sack_msn = s->msn;
	qp->rcv.sack_first = first;
	qp->rcv.sack_bits = bits;
	eng->st->sacks_sent++;
	srnic_qp_want_ack(eng, qp);
}

/*
 * UC: nothing is resent, so a message that lost packets (or found no
 * receive WQE, or a bad key) never completes, and the messages behind it
 * must not wait for it for ever.  Once a later message is complete, the
 * oldest gets the give-up time more to finish (longer than packets of one
 * message fall behind another's across ports); then it is given up.
 *
 * How far one port's packets fall behind another's is the host's and the
 * wire's business: microseconds on a NIC, but on a busy host a veth pair
 * whose receive work waits for the next kernel tick holds packets for
 * milliseconds (measured with a CPU hog beside the sanitizer build's
 * uc_check: packets of given-up messages came 3.7 to 4.3 ms after their
 * message stalled, one 4 ms tick at HZ=250; a 2 ms time lost a message in
 * one run of six).  So the time starts at SRNIC_UC_GIVE_UP_US (four
 * ticks), and
 * widens, for the
 * whole engine (it is the ports' lag, not a QP's), each time a packet of
 * a message whose time ran out comes after all (`drop uc_late`; not one
 * of a message that failed, which is given up at once), as TCP's RACK
 * widens its reordering window on a DSACK.  It never narrows: a loss
 * then costs the messages behind it a longer wait, never a message.  And
 * a timer does not call a packet lost while frames still wait in a port's
 * receive queue (rx_backlog), up to twice the time: an engine that did not
 * run for a while reads them before it judges.
 */
#define UC_GIVE_UP_MAX_US 256000

static uint64_t uc_give_up_tsc(const struct srnic_engine *eng)
{
	return eng->uc_give_up_tsc ? eng->uc_give_up_tsc
				   : eng->tsc_per_us * SRNIC_UC_GIVE_UP_US;
}

/* A packet of a message behind exp_msn on a UC QP (which resends
 * nothing): one of the last given up came after all, the give-up was
 * early, and the time widens (once a give-up). */
static void uc_late(struct srnic_engine *eng, struct srnic_qp *qp,
		    uint32_t msn)
{
	uint64_t t = uc_give_up_tsc(eng);

	if (seq_diff(msn, qp->rcv.uc_gone_from) < 0 ||
	    seq_diff(msn, qp->rcv.uc_gone_to) >= 0) {
		eng->st->drops[SRNIC_DROP_DUPLICATE]++;
		return;
	}
	eng->st->drops[SRNIC_DROP_UC_LATE]++;
	qp->rcv.uc_gone_to = qp->rcv.uc_gone_from;
	t = 2 * t < eng->tsc_per_us * UC_GIVE_UP_MAX_US
		    ? 2 * t
		    : eng->tsc_per_us * UC_GIVE_UP_MAX_US;
	eng->uc_give_up_tsc = t;
	eng->st->uc_give_up_us = t / eng->tsc_per_us;
}
/* How far ahead a packet may be for uc_jump to follow it (messages). */
#define UC_JUMP_MAX (64 * SRNIC_WINDOW)

static bool slot_started(const struct srnic_qp *qp, uint32_t msn)
{
	const struct srnic_rmsg *s = &qp->rcv.rmsg[msn % SRNIC_WINDOW];

	return s->msn == msn && s->state != RMSG_FREE;
}

/* Is the oldest message stuck: not (all) in, while a later one has begun
 * to arrive?  (One that is in and waits for CQ room is not stuck.) */
static bool uc_stuck(const struct srnic_qp *qp)
{
	const struct srnic_rmsg *h = &qp->rcv.rmsg[qp->rcv.exp_msn % SRNIC_WINDOW];
	uint32_t m;

	if (slot_started(qp, qp->rcv.exp_msn) &&
	    (h->state != RMSG_RECEIVING || srnic_track_complete(&h->trk)))
		return false;
	for (m = qp->rcv.exp_msn + 1; seq_diff(m, qp->rcv.exp_msn) < SRNIC_WINDOW;
	     m++)
		if (slot_started(qp, m))
			return true;
	return false;
}

/* Packets of the oldest message so far (its progress). */
static uint32_t uc_head_landed(const struct srnic_qp *qp)
{
	const struct srnic_rmsg *h = &qp->rcv.rmsg[qp->rcv.exp_msn % SRNIC_WINDOW];

	return slot_started(qp, qp->rcv.exp_msn) ? h->trk.ndone + 1 : 0;
}

static void uc_watch(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (qp->rcv.uc_stuck_at && qp->rcv.uc_stuck_msn == qp->rcv.exp_msn)
		return;
	qp->rcv.uc_stuck_at = srnic_now();
	qp->rcv.uc_stuck_msn = qp->rcv.exp_msn;
	qp->rcv.uc_stuck_landed = uc_head_landed(qp);
	srnic_qp_timer_on(eng, qp);
}

/*
 * Move what landed of message s from the receive WQE it had to the one d
 * before it (which a given-up message left free), checked as any placement
 * is.  False when the new WQE is too small or fails its check.
 */
static bool uc_move_down(struct srnic_engine *eng, struct srnic_qp *qp,
			 struct srnic_rmsg *s, uint32_t d)
{
	const struct srnic_rwqe *from = srnic_recv_wqe(qp, s->ssn);
	const struct srnic_rwqe *to = srnic_recv_wqe(qp, s->ssn - d);
	int64_t room = srnic_sge_check_all(&eng->mem, qp->pd, to->sge,
					   to->num_sge,
					   SRNIC_ACCESS_LOCAL_WRITE);
	uint8_t chunk[2048];
	uint32_t off, n;

	if (room < s->msg_len)
		return false;
	/* (what has not landed yet is copied too, harmlessly: its packets
	 * land at the new place once s->ssn is moved) */
	for (off = 0; off < s->msg_len; off += n) {
		n = s->msg_len - off < sizeof(chunk) ? s->msg_len - off
						      : sizeof(chunk);
		if (srnic_sge_gather(&eng->mem, qp->pd, from->sge,
				     from->num_sge, off, chunk, n) ||
		    srnic_sge_scatter(&eng->mem, qp->pd, to->sge, to->num_sge,
				      off, chunk, n))
			return false;
	}
	return true;
}

/* Drop the state of every begun message in [exp_msn, to), and go on from
 * to. */
static void uc_drop_until(struct srnic_engine *eng, struct srnic_qp *qp,
			  uint32_t to)
{
	uint32_t m;

	for (m = qp->rcv.exp_msn; m != to; m++)
		if (slot_started(qp, m)) {
			eng->st->drops[SRNIC_DROP_UC_GIVEN_UP]++;
			slot_clear(&qp->rcv.rmsg[m % SRNIC_WINDOW]);
			inv_forget(qp, m);	/* (nothing invalidated) */
		}
	qp->rcv.uc_gone_to = qp->rcv.uc_gone_from;	/* (no give-up of the timer's) */
	qp->rcv.exp_msn = to;
}

/* Bytes a give-up may move down (uc_move_down) before it gives up what
 * begun after it instead: a loss must not stall the datapath. */
#define UC_MOVE_BUDGET (1u << 20)

/*
 * Give up the oldest messages, up to the first one that has begun to
 * arrive (the oldest itself, if it had), and go on from there.
 *
 * Messages after them were mapped to receive WQEs counting the given-up
 * ones, which took d receive sequence numbers (a message carries the number
 * of the next receive WQE even when it takes none, so the first later one
 * tells).  Those d WQEs stay for the messages after, as a UC responder
 * reuses the WQE of a message it dropped: every later message that begun
 * moves its data d WQEs down, and later packets' numbers are taken d lower
 * (uc_skew).  Receives so complete in order, in the WQEs they were posted
 * in, and a loss costs one message, not the window behind it.  (Unless
 * more than UC_MOVE_BUDGET bytes would move: then what begun goes too.)
 */
static void uc_give_up(struct srnic_engine *eng, struct srnic_qp *qp,
		       bool timed)
{
	const struct srnic_rmsg *h = &qp->rcv.rmsg[qp->rcv.exp_msn % SRNIC_WINDOW];
	uint32_t from = qp->rcv.exp_msn, to, d, m, moving = 0, last;

	if (slot_started(qp, qp->rcv.exp_msn)) {
		to = qp->rcv.exp_msn + 1;
		d = h->ssn + !!(h->flags & SRNIC_F_RECV_CQE) - qp->rcv.exp_ssn;
	} else {
		for (to = qp->rcv.exp_msn + 1;
		     seq_diff(to, qp->rcv.exp_msn) < SRNIC_WINDOW &&
		     !slot_started(qp, to);
		     to++)
			;
		if (seq_diff(to, qp->rcv.exp_msn) >= SRNIC_WINDOW)
			return;	/* nothing to go on from yet */
		d = qp->rcv.rmsg[to % SRNIC_WINDOW].ssn - qp->rcv.exp_ssn;
	}
	/* Each message takes at most one receive WQE: anything else is a
	 * peer making numbers up, and everything begun goes. */
	if (d > to - qp->rcv.exp_msn)
		moving = UINT32_MAX;
	last = to - 1;
	for (m = to; d && seq_diff(m, qp->rcv.exp_msn) < SRNIC_WINDOW; m++) {
		const struct srnic_rmsg *s = &qp->rcv.rmsg[m % SRNIC_WINDOW];

		if (!slot_started(qp, m))
			continue;
		last = m;
		if ((s->flags & SRNIC_F_RECV_CQE) && s->opcode == SRNIC_OP_SEND &&
		    moving != UINT32_MAX)
			moving = moving + s->msg_len > UC_MOVE_BUDGET
					 ? UINT32_MAX
					 : moving + s->msg_len;
	}
	if (moving == UINT32_MAX) {
		/* Give up everything begun; go on after the last of it, as
		 * many receive WQEs on as it says (if it is believable). */
		h = &qp->rcv.rmsg[last % SRNIC_WINDOW];
		d = slot_started(qp, last)
			    ? h->ssn + !!(h->flags & SRNIC_F_RECV_CQE) -
				      qp->rcv.exp_ssn
			    : 0;
		if (d > last + 1 - qp->rcv.exp_msn)
			d = 0;
		uc_drop_until(eng, qp, last + 1);
		qp->rcv.uc_skew += d;
	} else {
		uc_drop_until(eng, qp, to);
		for (m = to; d && seq_diff(m, qp->rcv.exp_msn) < SRNIC_WINDOW;
		     m++) {
			struct srnic_rmsg *s = &qp->rcv.rmsg[m % SRNIC_WINDOW];

			if (!slot_started(qp, m))
				continue;
			/* (a target before the oldest receive WQE: numbers
			 * made up; it goes) */
			if ((s->flags & SRNIC_F_RECV_CQE) &&
			    seq_diff(s->ssn - d, qp->rcv.exp_ssn) < 0)
				fail(eng, qp, s, SRNIC_NAK_INVALID,
				     SRNIC_WC_GENERAL_ERR);
			else if ((s->flags & SRNIC_F_RECV_CQE) &&
				 s->opcode == SRNIC_OP_SEND &&
				 s->state != RMSG_FAILED &&
				 !uc_move_down(eng, qp, s, d))
				fail(eng, qp, s, SRNIC_NAK_INVALID,
				     SRNIC_WC_LOC_LEN_ERR);
			s->ssn -= d;
		}
		qp->rcv.uc_skew += d;
	}
	/* The messages the time ran out on (not those that failed, or went
	 * with them over the budget): one of their packets coming after all
	 * says the time was short (uc_late). */
	if (timed) {
		qp->rcv.uc_gone_from = from;
		qp->rcv.uc_gone_to = to;
	}
	qp->rcv.uc_stuck_at = 0;
	srnic_qp_want_ack(eng, qp);	/* (credit) */
	advance(eng, qp);
	if (uc_stuck(qp))
		uc_watch(eng, qp);
}

/*
 * A packet of a message a window or more ahead: the messages before its
 * window will not come any more (their sender has gone on, lending itself
 * credit), so everything begun goes and the packet's message is the
 * oldest.  Its receive number says how many receive WQEs those took.
 * False when the number is impossible (more than a WQE a message).
 */
static bool uc_jump(struct srnic_engine *eng, struct srnic_qp *qp,
		    const struct srnic_pkt *pkt)
{
	uint32_t d = pkt->ssn - qp->rcv.uc_skew - qp->rcv.exp_ssn;

	/* (further than a sender lending itself credit gets in a while, or
	 * numbers made up: a stray packet, dropped) */
	if (pkt->msn - qp->rcv.exp_msn > UC_JUMP_MAX ||
	    d > pkt->msn - qp->rcv.exp_msn)
		return false;
	uc_drop_until(eng, qp, qp->rcv.exp_msn + SRNIC_WINDOW);
	qp->rcv.exp_msn = pkt->msn;
	qp->rcv.uc_skew += d;
	qp->rcv.uc_stuck_at = 0;
	srnic_qp_want_ack(eng, qp);
	return true;
}

void srnic_responder_uc_timer(struct srnic_engine *eng, struct srnic_qp *qp,
			      uint64_t now)
{
	bool same = qp->rcv.uc_stuck_msn == qp->rcv.exp_msn;

	if (same && qp->rcv.uc_stuck_landed != uc_head_landed(qp)) {
		/* It is still coming in: another while from now. */
		qp->rcv.uc_stuck_landed = uc_head_landed(qp);
		qp->rcv.uc_stuck_at = now;
		return;
	}
	/* (frames still unread defer it, but not for ever: a port or the
	 * loopback that never runs dry must not keep a loss waiting) */
	if (same && (now - qp->rcv.uc_stuck_at < uc_give_up_tsc(eng) ||
		     (eng->rx_backlog &&
		      now - qp->rcv.uc_stuck_at < 2 * uc_give_up_tsc(eng))))
		return;
	qp->rcv.uc_stuck_at = 0;
	if (same && uc_stuck(qp))
		uc_give_up(eng, qp, true);	/* (watches again if need be) */
	else if (uc_stuck(qp))
		uc_watch(eng, qp);
	if (!qp->rcv.uc_stuck_at && qp->q.sq_comp == qp->snd.sq_next && !qp->snd.fc_blocked)
		srnic_qp_timer_off(eng, qp);	/* nothing left to time */
}

/* Called when CQ room or a read slot may have appeared. */
void srnic_responder_progress(struct srnic_engine *eng, struct srnic_qp *qp)
{
	advance(eng, qp);
}

unsigned srnic_responder_reads(struct srnic_engine *eng, struct srnic_qp *qp,
			       unsigned budget)
{
	enum srnic_mem_check r;
	unsigned n = 0;

	while (n < budget && qp->rcv.rd_head != qp->rcv.rd_tail) {
		struct srnic_read_job *j =
			&qp->rcv.rd_jobs[qp->rcv.rd_head % SRNIC_MAX_RD_ATOMIC];
		struct srnic_pkt pkt;
		struct rte_mbuf *m;
		uint8_t *payload;
		uint32_t left = j->end - j->sent;
		const void *src = (const void *)(uintptr_t)(j->va + j->sent);
		int port = srnic_qp_pick_port(eng, qp);

		if (port < 0) {
			/* Nobody to answer: drop the jobs; the requester asks
			 * again (READ is idempotent) or gives up. */
			if (!srnic_qp_peer_reachable(eng, qp))
				qp->rcv.rd_head = qp->rcv.rd_tail;
			break;
		}
		srnic_qp_pkt_init(&pkt, eng, qp, SRNIC_OP_READ_RESP, j->msn);
		pkt.txid = j->txid;
		pkt.msg_off = j->sent;
		pkt.msg_len = j->len;
		pkt.stride_shift = j->shift;
		pkt.pkt_len = left < (1u << j->shift) ? left : (1u << j->shift);
		if (j->sent + pkt.pkt_len == j->len)
			pkt.flags |= SRNIC_F_LAST;	/* the READ's last byte */
		/* The region may have gone since the request was checked
		 * (an atomic's answer is the value it found, kept). */
		r = pkt.pkt_len && !j->atomic
			    ? srnic_mem_check_remote(&eng->mem, j->rkey,
						     j->pd, qp->q.qpn,
						     j->va + j->sent,
						     pkt.pkt_len,
						     SRNIC_ACCESS_REMOTE_READ)
			    : SRNIC_MEM_OK;
		if (r != SRNIC_MEM_OK) {
			count_access(eng, r);
			nak(eng, qp, SRNIC_NAK_ACCESS, j->msn, j->txid);
			qp->rcv.rd_head++;
			continue;
		}
		if (!j->atomic && !j->again && pkt.pkt_len >= SRNIC_ZC_MIN &&
		    eng->node->port[port].zero_copy &&
		    !srnic_mem_guarded(&eng->mem)) {
			/* Zero-copy: straight out of the region. */
			m = srnic_pkt_alloc_ext(
				eng, &pkt, qp->peer->mac[port], port, src);
			if (!m)
				break;
		} else {
			m = srnic_pkt_alloc(eng, &pkt, qp->peer->mac[port],
					    port, &payload);
			if (!m)
				break;
			if (j->atomic) {	/* the 8 bytes as they were */
				memcpy(payload, &j->value, SRNIC_ATOMIC_LEN);
			} else if (j->again
					   ? !srnic_guard_copy(payload, src,
							       pkt.pkt_len)
					   : !srnic_mem_copy(&eng->mem, payload,
							     src,
							     pkt.pkt_len)) {
				/* a page of an on-demand region not there,
				 * or of one unmapped since it was asked for
				 * again (mapped()) */
				rte_pktmbuf_free(m);
				eng->st->drops[j->again
						       ? SRNIC_DROP_UNMAPPED
						       : SRNIC_DROP_PAGE_FAULT]++;
				nak(eng, qp, SRNIC_NAK_ACCESS, j->msn, j->txid);
				qp->rcv.rd_head++;
				continue;
			}
		}
		srnic_port_tx(eng, port, m);
		n++;
		j->sent += pkt.pkt_len;
		if (j->sent == j->end)
			qp->rcv.rd_head++;
	}
	if (qp->rcv.rd_head == qp->rcv.rd_tail)
		advance(eng, qp);	/* a READ may wait for a free job */
	return n;
}

void srnic_responder_send_ack(struct srnic_engine *eng, struct srnic_qp *qp)
{
	struct srnic_pkt pkt;
	struct rte_mbuf *m;
	bool with_data;
	int port;

	if (!qp->peer)
		return;
	/* With a packet of this QP sent in this iteration, or about to be
	 * (datapath.c, ack_ahead): on its port, so that it keeps its place
	 * next to the data. */
	with_data = qp->rcv.tx_epoch == eng->dp_epoch;
	port = with_data ? qp->rcv.tx_port : srnic_qp_pick_port(eng, qp);
	if (port < 0)
		return;
	srnic_qp_pkt_init(&pkt, eng, qp, SRNIC_OP_ACK, qp->rcv.exp_msn);
	pkt.syndrome = qp->rcv.ack_syndrome;
	pkt.nak_msn = qp->rcv.ack_nak_msn;
	pkt.nak_txid = qp->rcv.ack_nak_txid;
	pkt.rnr_timer = qp->at.min_rnr_timer;
	pkt.credit = srnic_fc_credit(qp, eng->fc_grant);
	pkt.ts_echo = qp->rcv.ts_recent;
	qp->rcv.ts_recent = 0;	/* a sample is taken once */
	if (qp->rcv.sack_due) {
		pkt.flags |= SRNIC_F_SACK;
		pkt.sack_msn = qp->rcv.sack_msn;
		pkt.sack_first = qp->rcv.sack_first;
		pkt.sack_bits = qp->rcv.sack_bits;
	}
	m = srnic_pkt_alloc(eng, &pkt, qp->peer->mac[port], port, NULL);
	if (!m)
		return;
	srnic_port_tx(eng, port, m);
	/* A plain ACK goes out twice (on two ports where there are two; both
	 * on the data's port when it rides with some, keeping their place):
	 * a lost ACK would leave a requester whose window is full
	 * waiting a whole timeout, while a second copy costs 70 bytes.  NAKs
	 * and SACKs go once: they make the requester act. */
	if (!qp->rcv.sack_due && qp->rcv.ack_syndrome == SRNIC_ACK_OK) {
		if (!with_data)
			port = srnic_qp_pick_port(eng, qp);
		m = port < 0 ? NULL
			     : srnic_pkt_alloc(eng, &pkt, qp->peer->mac[port],
					       port, NULL);
		if (m)
			srnic_port_tx(eng, port, m);
	}
	qp->rcv.ack_syndrome = SRNIC_ACK_OK;
	qp->rcv.sack_due = 0;
	eng->st->acks_sent++;
}

/* An XRC target's flush: the WQEs its messages took from their SRQs and
 * did not complete, into each SRQ's CQ (its ring holds nothing else). */
static void xrc_flush(struct srnic_qp *qp)
{
	uint32_t i;

	for (i = 0; i <= qp->q.rq_mask; i++) {
		struct srnic_srq *srq = qp->xrc_rq_srq[i];
		struct srnic_cqe *c;

		if (!srq)
			continue;
		if (!srnic_cq_room(srq->cq)) {
			qp->flush_pending = 1;
			return;
		}
		c = srnic_cq_slot(srq->cq);
		memset(c, 0, sizeof(*c));
		c->wr_id = qp->q.rq[i].wr_id;
		c->qp_num = qp->q.qpn;
		c->status = SRNIC_WC_WR_FLUSH_ERR;
		c->opcode = SRNIC_WC_RECV;
		qp->xrc_rq_srq[i] = NULL;
		srnic_cq_publish(srq->cq);
	}
}

void srnic_responder_flush(struct srnic_engine *eng, struct srnic_qp *qp)
{
	uint32_t prod = __atomic_load_n(&qp->q.rq_prod, __ATOMIC_ACQUIRE);

	if (qp->xrc_rq_srq) {
		xrc_flush(qp);
		return;
	}
	while (qp->q.rq_comp != prod) {
		struct srnic_cq *cq = qp->q.recv_cq;
		struct srnic_cqe *c;

		if (!srnic_cq_room(cq)) {
			qp->flush_pending = 1;
			return;
		}
		c = srnic_cq_slot(cq);
		memset(c, 0, sizeof(*c));
		c->wr_id = qp->q.rq[qp->q.rq_comp & qp->q.rq_mask].wr_id;
		c->qp_num = qp->q.qpn;
		c->status = SRNIC_WC_WR_FLUSH_ERR;
		c->opcode = SRNIC_WC_RECV;
		srnic_rq_consumed(qp);
		srnic_cq_publish(cq);
	}
	(void)eng;
}
