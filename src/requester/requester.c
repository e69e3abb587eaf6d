/* SPDX-License-Identifier: MIT */
/*
 * Requester: turns send WQEs into packets.  Each WQE is one message with its
 * own MSN; its packets are cut on stride (path MTU) boundaries, carry the
 * destination key and offset, and are striped round-robin over every port
 * that reaches the peer.  A message the completer asks to send again starts
 * over with a newer transaction id, which makes the responder drop whatever
 * is left of the older attempt.
 */
#define ALLOW_EXPERIMENTAL_API	/* rte_seqcount (DPDK 22.07): the peers'
				 * published tables */
#include <string.h>

#include "srnic_requester.h"
#include "srnic_flow.h"
#include "srnic_rto.h"
#include "srnic_sge.h"

static const uint16_t op_flags[] = {
	[SRNIC_WR_SEND] = SRNIC_F_RECV_CQE,
	[SRNIC_WR_SEND_IMM] = SRNIC_F_RECV_CQE | SRNIC_F_IMM,
	[SRNIC_WR_WRITE] = 0,
	[SRNIC_WR_WRITE_IMM] = SRNIC_F_RECV_CQE | SRNIC_F_IMM,
	[SRNIC_WR_READ] = 0,
	[SRNIC_WR_ATOMIC_CAS] = SRNIC_F_CAS,
	[SRNIC_WR_ATOMIC_FAA] = 0,
	[SRNIC_WR_SEND_INV] = SRNIC_F_RECV_CQE | SRNIC_F_INV,
	[SRNIC_WR_ATOMIC_WRITE] = SRNIC_F_ATOMIC_WR,
	[SRNIC_WR_TP_WRITE] = 0,
};

static const uint8_t op_wire[] = {
	[SRNIC_WR_SEND] = SRNIC_OP_SEND,
	[SRNIC_WR_SEND_IMM] = SRNIC_OP_SEND,
	[SRNIC_WR_WRITE] = SRNIC_OP_WRITE,
	[SRNIC_WR_WRITE_IMM] = SRNIC_OP_WRITE,
	[SRNIC_WR_READ] = SRNIC_OP_READ_REQ,
	[SRNIC_WR_ATOMIC_CAS] = SRNIC_OP_ATOMIC_REQ,
	[SRNIC_WR_ATOMIC_FAA] = SRNIC_OP_ATOMIC_REQ,
	[SRNIC_WR_SEND_INV] = SRNIC_OP_SEND,
	[SRNIC_WR_ATOMIC_WRITE] = SRNIC_OP_WRITE,
	[SRNIC_WR_TP_WRITE] = SRNIC_OP_WRITE,	/* (the source sends them) */
};

/* A WRITE's or READ's remote range that runs past 2^64 (the wire refuses
 * it: srnic_wire_decode). */
static bool remote_wraps(const struct srnic_swqe *w)
{
	if (w->opcode == SRNIC_WR_TP_WRITE &&
	    w->tp.src_va + w->length < w->tp.src_va)
		return true;
	return (w->opcode == SRNIC_WR_WRITE || w->opcode == SRNIC_WR_WRITE_IMM ||
		w->opcode == SRNIC_WR_READ ||
		w->opcode == SRNIC_WR_ATOMIC_WRITE ||
		w->opcode == SRNIC_WR_TP_WRITE) &&
	       w->remote_addr + w->length < w->remote_addr;
}

/* Check every local SGE once, when the message starts. */
static int check_sges(struct srnic_engine *eng, struct srnic_qp *qp,
		      const struct srnic_swqe *w)
{
	uint32_t need = srnic_wr_reads(w->opcode) ? SRNIC_ACCESS_LOCAL_WRITE
						   : 0;
	unsigned i;

	if (w->flags & SRNIC_WR_INLINE)
		return 0;
	/* (a READ into a FIFO: its one SGE names the FIFO, of this PD) */
	if (w->flags & SRNIC_WR_FIFO)
		return w->opcode == SRNIC_WR_READ && w->num_sge == 1 &&
				       srnic_mem_check(&eng->mem, w->sge[0].lkey,
						       qp->pd, 0, 0,
						       SRNIC_ACCESS_REMOTE_WRITE) ==
					       SRNIC_MEM_FIFO
			       ? 0
			       : -1;
	for (i = 0; i < w->num_sge; i++)
		if (w->sge[i].length &&
		    srnic_mem_check(&eng->mem, w->sge[i].lkey, qp->pd,
				    w->sge[i].addr, w->sge[i].length, need))
			return -1;
	return 0;
}

/* Gather len bytes of the message at offset off from the WQE's SGEs,
 * checking each piece: a region deregistered (and perhaps unmapped) since
 * the message started must not be read.  Returns -1 when one is gone. */
static int gather(const struct srnic_mem_table *mem, uint32_t pd,
		  const struct srnic_swqe *w, uint32_t off, uint8_t *dst,
		  uint32_t len)
{
	if (w->flags & SRNIC_WR_INLINE) {
		memcpy(dst, w->inline_data + off, len);
		return 0;
	}
	return srnic_sge_gather(mem, pd, w->sge, w->num_sge, off, dst, len);
}

static uint8_t stride_shift(const struct srnic_engine *eng,
			    const struct srnic_qp *qp)
{
	uint8_t s = qp->at.path_shift;

	while ((1u << s) > eng->payload_max)
		s--;
	return s;
}

/* Out of credit: wait for an ACK, or for the loan a timer gives after a
 * silent probe interval (RC has its timers on already, UC not). */
static void fc_block(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (qp->snd.fc_blocked)
		return;
	qp->snd.fc_blocked = 1;
	qp->snd.fc_blocked_at = eng->now;
	eng->st->fc_blocked++;
	srnic_qp_timer_on(eng, qp);
}

/* The next WQE must wait for earlier ones to finish: the QP idles (no
 * spinning) until the completer sees one finish. */
/* The WQE at sq_next is taken, to start or to run; a conditional one is
 * counted as fired only now (its check may have passed on an earlier
 * look that then waited for something else). */
static inline void take_wqe(struct srnic_engine *eng, struct srnic_qp *qp,
			    const struct srnic_swqe *w)
{
	qp->snd.sq_cur = qp->snd.sq_next++;
	if (unlikely(w->flags & SRNIC_WR_COND))
		srnic_condq_fired(eng, w->cond.q);
}

static bool sq_wait(struct srnic_qp *qp)
{
	qp->snd.sq_wait = 1;
	qp->snd.wait_done = qp->snd.done_count;
	return false;
}

/* A SEND with invalidate is unresolved (RC: not acknowledged).  Nothing
 * after it starts before: the responder places packets as they come, and
 * a later WRITE's must not land in the region it takes away.  (UC waits in
 * srnic_fc_uc_msg_open, for the responder's word.) */
static bool inv_fenced(const struct srnic_qp *qp)
{
	uint32_t i = qp->snd.inv_fence_idx;

	return qp->snd.inv_fence && srnic_qp_reliable(qp) &&
	       (int32_t)(i - qp->q.sq_comp) >= 0 &&
	       qp->run[i & qp->q.sq_mask].state != SWQE_DONE;
}

/*
 * Local invalidate and memory window binds: no packet, no message number.
 * Each waits until every WQE before it is done (one of them may still
 * read or resend from the key), then revokes the key or binds the window;
 * it completes in its turn.  Returns true when it ran.
 */
static bool local_op(struct srnic_engine *eng, struct srnic_qp *qp)
{
	struct srnic_swqe_run *run = &qp->run[qp->snd.sq_next & qp->q.sq_mask];
	const struct srnic_swqe *w = &qp->q.sq[qp->snd.sq_next & qp->q.sq_mask];
	uint32_t i;

	for (i = qp->q.sq_comp; i != qp->snd.sq_next; i++)
		if (qp->run[i & qp->q.sq_mask].state != SWQE_DONE)
			return sq_wait(qp);
	memset(run, 0, offsetof(struct srnic_swqe_run, rd));
	take_wqe(eng, qp, w);
	run->state = SWQE_DONE;
	if (w->opcode == SRNIC_WR_BIND_MW) {
		struct srnic_mw_bind b = {
			.key = w->rkey, .mr_key = (uint32_t)w->swap,
			.access = (uint32_t)(w->swap >> 32),
			.addr = w->remote_addr, .length = w->compare_add};

		if (srnic_mw_bind(&eng->mem, &b, qp->pd, qp->q.qpn)) {
			run->status = SRNIC_WC_MW_BIND_ERR;
			qp->snd.sq_stopped = 1;
		}
	} else if (srnic_mem_revoke(&eng->mem, w->rkey, qp->pd)) {
		run->status = SRNIC_WC_LOC_PROT_ERR;
		qp->snd.sq_stopped = 1;
	}
	return true;
}

static void reread(struct srnic_engine *eng, struct srnic_qp *qp,
		   uint32_t idx);

static inline bool resend_pending(const struct srnic_qp *qp)
{
	return qp->snd.resend_head != qp->snd.resend_tail;
}

/*
 * Give the first queued resend a new attempt (a new txid, from its first
 * byte).  Returns true when it became the current message; false when the
 * entry is spent without one: the WQE finished since it was queued, or it
 * is a READ, whose new attempt is its requests for what is missing.
 */
static inline bool restart_resend(struct srnic_engine *eng,
				  struct srnic_qp *qp)
{
	uint32_t idx = qp->snd.resend[qp->snd.resend_head++ % SRNIC_WINDOW];
	struct srnic_swqe_run *run = &qp->run[idx & qp->q.sq_mask];

	run->resend_queued = 0;
	if (run->state != SWQE_WAITING)
		return false;
	run->txid = qp->snd.next_txid++;
	run->sent = 0;
	run->sack_resent_at = 0;	/* (every packet goes again) */
	eng->st->retransmits++;
	if (srnic_wr_reads(qp->q.sq[idx & qp->q.sq_mask].opcode)) {
		/* A READ keeps what already landed and asks, under the new
		 * id, only for what is missing. */
		uint64_t now = eng->now;

		reread(eng, qp, idx);
		run->deadline = now + qp->at.timeout_tsc;
		run->probe_at = now + srnic_probe_tsc(qp);
		return false;
	}
	run->state = SWQE_SENDING;
	qp->snd.sq_cur = idx;
	qp->snd.cur_busy = 1;
	return true;
}

/* Whether the send queue may start a WQE at all: the QP sends (in SQD
 * what is in flight completes, nothing new starts), nothing failed, a WQE
 * is posted, and the window has room for it. */
static inline bool sq_may_start(const struct srnic_qp *qp, uint32_t prod)
{
	return qp->q.state == SRNIC_QPS_RTS && !qp->snd.sq_stopped &&
	       qp->snd.sq_next != prod &&
	       qp->snd.sq_next - qp->q.sq_comp < SRNIC_WINDOW;
}

/* Third-party WRITEs a QP has in flight at most: their sources answer
 * each from a job of their own, of SRNIC_MAX_RD_ATOMIC / 2 a QP for
 * them (responder/third_party.c), and those asked for beyond are dropped
 * (and asked again). */
#define TP_INFLIGHT_MAX (SRNIC_MAX_RD_ATOMIC / 2)

static bool tp_full(const struct srnic_qp *qp)
{
	unsigned n = 0;
	uint32_t i;

	for (i = qp->q.sq_comp; i != qp->snd.sq_next; i++)
		if (qp->q.sq[i & qp->q.sq_mask].opcode == SRNIC_WR_TP_WRITE &&
		    qp->run[i & qp->q.sq_mask].state != SWQE_DONE &&
		    ++n >= TP_INFLIGHT_MAX)
			return true;
	return false;
}

/* Whether w must wait for WQEs before it to finish: the peer's limit of
 * READs and atomics in flight, a fence behind them, a SEND with
 * invalidate not yet resolved (inv_fenced), or as many third-party
 * WRITEs as their sources take. */
static inline bool wqe_ordered_behind(const struct srnic_qp *qp,
				      const struct srnic_swqe *w)
{
	unsigned rd_max = qp->at.max_rd_atomic ? qp->at.max_rd_atomic : 1;

	if (srnic_wr_reads(w->opcode) && qp->snd.rd_inflight >= rd_max)
		return true;
	if (unlikely(w->opcode == SRNIC_WR_TP_WRITE) && tp_full(qp))
		return true;
	if ((w->flags & SRNIC_WR_FENCE) && qp->snd.rd_inflight)
		return true;
	return inv_fenced(qp);
}

/*
 * Seed 004's initiator-side checks (Fig. 6 S11-S13): a request under a
 * key its peer published (docs/published-keys.md) is checked against
 * the peer's table, here, before anything goes: the right it needs, and
 * its range inside the region.  True when the table refuses it.  A key
 * the table does not hold goes as always; the responder checks every
 * packet in any case (the table is a copy, some milliseconds behind).
 * Per message, not per packet; nothing to do for a peer that published
 * nothing.  RC only; a loopback QP's peer and a service's have no copy
 * of a table, and go unchecked here.
 */
#define TPT_READ_TRIES 8

static bool published_refuses(const struct srnic_qp *qp,
			      const struct srnic_swqe *w)
{
	const struct srnic_tpt *t;
	uint32_t need, seq, n, i, tries = 0;
	uint64_t len = w->length;
	bool found, ok;

	/* (UC: a refused message is dropped by its responder without a
	 * word, and the requester's completes; not failed here either) */
	if (!qp->peer || qp->q.type != SRNIC_QPT_RC)
		return false;
	switch (w->opcode) {
	case SRNIC_WR_WRITE:
	case SRNIC_WR_WRITE_IMM:
		need = SRNIC_ACCESS_REMOTE_WRITE;
		break;
	case SRNIC_WR_ATOMIC_WRITE:
		need = SRNIC_ACCESS_REMOTE_WRITE;
		len = SRNIC_ATOMIC_LEN;
		break;
	case SRNIC_WR_READ:
		need = SRNIC_ACCESS_REMOTE_READ;
		break;
	case SRNIC_WR_ATOMIC_CAS:
	case SRNIC_WR_ATOMIC_FAA:
		need = SRNIC_ACCESS_REMOTE_ATOMIC;
		len = SRNIC_ATOMIC_LEN;
		break;
	default:
		return false;
	}
	/* (a request of no bytes touches no memory: the responder checks
	 * no key for it) */
	if (!len)
		return false;
	t = &qp->peer->tpt;
	if (!__atomic_load_n(&t->n, __ATOMIC_RELAXED))
		return false;
	do {
		/* (a table being written this long: not checked here; the
		 * responder checks every packet anyway) */
		if (tries++ == TPT_READ_TRIES)
			return false;
		seq = rte_seqcount_read_begin(&t->sc);
		found = ok = false;
		/* (a copy of the peer's process before: no word on its keys) */
		n = t->inc == __atomic_load_n(&qp->peer->inc, __ATOMIC_ACQUIRE)
			    ? RTE_MIN(t->n, (uint32_t)SRNIC_TPT_MAX)
			    : 0;
		for (i = 0; i < n && !found; i++) {
			const struct srnic_tpt_entry *e = &t->e[i];

			if (e->rkey != w->rkey)
				continue;
			found = true;
			ok = (e->access & need) == need &&
			     w->remote_addr >= e->addr && len <= e->length &&
			     w->remote_addr - e->addr <= e->length - len;
		}
	} while (rte_seqcount_read_retry(&t->sc, seq));
	return found && !ok;
}

/*
 * The local checks a message passes before it takes a message number:
 * SRNIC_WC_SUCCESS, or the status it fails with.  Nothing goes out for a
 * WQE we cannot read from, and it takes no number, so that the responder
 * does not wait for it (the QP is about to enter the error state).  A
 * remote range that wraps is in no region: REM_ACCESS_ERR, as the peer
 * would answer (its decoder drops such frames); so is one the peer's
 * published table refuses.
 */
static inline uint8_t wqe_local_status(struct srnic_engine *eng,
				       struct srnic_qp *qp,
				       const struct srnic_swqe *w)
{
	if (remote_wraps(w))
		return SRNIC_WC_REM_ACCESS_ERR;
	if (published_refuses(qp, w)) {
		eng->st->tpt_denied++;
		return SRNIC_WC_REM_ACCESS_ERR;
	}
	if (check_sges(eng, qp, w))
		return SRNIC_WC_LOC_PROT_ERR;
	return SRNIC_WC_SUCCESS;
}

/* Give the message its numbers: MSN, attempt id, and the receive WQE it
 * will take at the peer. */
static inline void number_message(struct srnic_qp *qp,
				  const struct srnic_swqe *w,
				  struct srnic_swqe_run *run)
{
	run->msn = qp->snd.next_msn++;
	run->txid = qp->snd.next_txid++;
	/* A message that takes no receive WQE carries the next one's number
	 * all the same: a UC responder that gives messages up learns from
	 * any message how many receive WQEs the ones before it took. */
	run->ssn = qp->snd.next_ssn;
	if (op_flags[w->opcode] & SRNIC_F_RECV_CQE)
		qp->snd.next_ssn++;
	if (w->opcode == SRNIC_WR_SEND_INV) {
		qp->snd.inv_fence = 1;
		qp->snd.inv_fence_idx = qp->snd.sq_cur;
		qp->snd.inv_fence_msn = run->msn;
	}
}

/*
 * Make the WQE at sq_next the current message.  Returns true (the caller's
 * loop then sees from cur_busy whether it is to be sent, or whether it
 * failed and the completer is to act).
 */
static inline bool start_message(struct srnic_engine *eng,
				 struct srnic_qp *qp,
				 const struct srnic_swqe *w)
{
	struct srnic_swqe_run *run = &qp->run[qp->snd.sq_next & qp->q.sq_mask];
	uint8_t status;

	memset(run, 0, offsetof(struct srnic_swqe_run, rd));
	take_wqe(eng, qp, w);
	if (srnic_qp_reliable(qp))
		srnic_qp_timer_on(eng, qp);
	status = wqe_local_status(eng, qp, w);
	if (status != SRNIC_WC_SUCCESS) {
		run->state = SWQE_DONE;
		run->status = status;
		qp->snd.sq_stopped = 1;
		return true;
	}
	number_message(qp, w, run);
	run->state = SWQE_SENDING;
	qp->snd.cur_busy = 1;
	if (!srnic_wr_reads(w->opcode))
		return true;
	/* A READ tracks which packets of its answer have landed. */
	if (srnic_track_init(&run->rd, w->length, stride_shift(eng, qp))) {
		/* Out of memory for the bitmap: an error the responder sees
		 * as a lost message, so fail the QP. */
		run->state = SWQE_DONE;
		run->status = SRNIC_WC_GENERAL_ERR;
		qp->snd.cur_busy = 0;
		return true;
	}
	qp->snd.rd_inflight++;
	return true;
}

/* Start the next posted WQE if nothing holds it back; false when the QP
 * is to idle (sq_wait and fc_block say until what). */
static inline bool next_new_message(struct srnic_engine *eng,
				    struct srnic_qp *qp)
{
	uint32_t prod = __atomic_load_n(&qp->q.sq_prod, __ATOMIC_ACQUIRE);
	const struct srnic_swqe *w;

	if (!sq_may_start(qp, prod))
		return false;
	w = &qp->q.sq[qp->snd.sq_next & qp->q.sq_mask];
	if (qp->q.type == SRNIC_QPT_UC &&
	    !srnic_fc_uc_msg_open(qp, qp->snd.next_msn)) {
		fc_block(eng, qp);
		return false;
	}
	/* (UC: nor one that would find no receive WQE posted) */
	if (qp->q.type == SRNIC_QPT_UC &&
	    (op_flags[w->opcode] & SRNIC_F_RECV_CQE) &&
	    !srnic_fc_uc_recv_open(qp)) {
		qp->snd.uc_recv_wait = 1;
		fc_block(eng, qp);
		return false;
	}
	/* (RC: nor, with messages in flight, one past the receive WQEs its
	 * responder last said were posted: their ACKs bring its word) */
	if (qp->q.type == SRNIC_QPT_RC &&
	    (op_flags[w->opcode] & SRNIC_F_RECV_CQE) &&
	    !srnic_fc_rc_recv_open(qp)) {
		if (!qp->snd.rc_recv_wait) {
			qp->snd.rc_recv_wait = 1;
			eng->st->recv_credit_waits++;
		}
		return sq_wait(qp);
	}
	qp->snd.rc_recv_wait = 0;
	if (wqe_ordered_behind(qp, w))
		return sq_wait(qp);
	/* A conditional WQE waits for its queue's count (sched/condq.c
	 * parks the QP there, and the count that meets it wakes the QP). */
	if ((w->flags & SRNIC_WR_COND) && !srnic_condq_ready(eng, qp, w))
		return false;
	/* A multicast WRITE is src/group's to start, in the QP's turn before
	 * this role's: the WQEs after it wait until it has (idle, while
	 * another is in flight, until that one finishes). */
	if (w->opcode == SRNIC_WR_MC_WRITE)
		return qp->gsend && qp->gsend->active ? sq_wait(qp) : false;
	if (w->opcode == SRNIC_WR_LOCAL_INV || w->opcode == SRNIC_WR_BIND_MW)
		return local_op(eng, qp);
	return start_message(eng, qp, w);
}

/*
 * Pick the WQE to packetize next: a resend first, then a new message.
 * (Two sources in a fixed order, each a short sequence of checks: plain
 * calls read better here than a state machine would.)
 */
static bool next_message(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (eng->now < qp->snd.rnr_until)
		return false;
	while (resend_pending(qp)) {
		/* After a failure nothing goes out any more (a reread may
		 * have failed one just now). */
		if (qp->snd.sq_stopped) {
			qp->snd.resend_head = qp->snd.resend_tail;
			return false;
		}
		if (restart_resend(eng, qp))
			return true;
	}
	return next_new_message(eng, qp);
}

/* The header every packet of this WQE's current attempt shares. */
static void data_pkt_init(struct srnic_pkt *pkt, struct srnic_engine *eng,
			  struct srnic_qp *qp, const struct srnic_swqe *w,
			  const struct srnic_swqe_run *run)
{
	srnic_qp_pkt_init(pkt, eng, qp, op_wire[w->opcode], run->msn);
	pkt->flags = op_flags[w->opcode];
	if (w->flags & SRNIC_WR_SOLICITED)
		pkt->flags |= SRNIC_F_SOLICITED;
	if (qp->xrc == SRNIC_XRC_INI) {	/* the peer's SRQ it is for */
		pkt->flags |= SRNIC_F_XRC;
		pkt->xrc_srqn = w->xrc_srqn;
	}
	pkt->txid = run->txid;
	pkt->ssn = run->ssn;
	pkt->rkey = w->rkey;
	pkt->imm = w->imm;
	pkt->msg_len = w->length;
	pkt->stride_shift = stride_shift(eng, qp);
	pkt->ts = eng->now_ts16;
	/* (every packet says it: any of them may begin the message at the
	 * target) */
	if (w->flags & SRNIC_WR_NOTIFY)
		pkt->xflags = SRNIC_X_NOTIFY;
}

/*
 * Ask for this message's ACK at once (SRNIC_X_ACK_REQ; the responder
 * otherwise lets a plain ACK wait up to ack_delay_us for a packet to ride
 * with) when the program waits for it: the WQE is signaled, or fills half
 * the send queue, while an earlier one still waits for its ACK.  A program
 * that posts a window of WRITEs and polls for a completion otherwise
 * waited out the delay every window (one core moved 8-byte WRITEs at 295
 * cycles a packet, tests/bench/insns).  Not on every WQE posted last: a
 * requester that keeps up with its program's posts would ask on nearly
 * every message (ib_write_bw 8 B sent 6 times the ACKs, and moved 0.8
 * times the messages).  A half-queue ask, once sent, holds other WQEs'
 * back until its own completes (its later packets still ask); a ping-pong (nothing else in flight, its ACK riding on
 * the answer) asks nothing.
 */
static inline bool ask_ack(struct srnic_qp *qp, const struct srnic_swqe *w,
			   struct srnic_pkt *pkt, uint32_t idx)
{
	uint32_t unacked = idx - qp->q.sq_comp;	/* (before this one) */
	uint32_t depth = qp->q.sq_mask + 1;

	if (!unacked || !srnic_qp_reliable(qp) ||
	    (pkt->opcode != SRNIC_OP_WRITE && pkt->opcode != SRNIC_OP_SEND))
		return false;
	if (qp->q.sq_sig_all || (w->flags & SRNIC_WR_SIGNALED)) {
		pkt->xflags |= SRNIC_X_ACK_REQ;
		return false;
	}
	/* (answered: its WQE completed; kept, the sign would turn after
	 * 2^31 more) */
	if (qp->snd.ack_asking &&
	    (int32_t)(qp->snd.ack_ask_idx - qp->q.sq_comp) < 0)
		qp->snd.ack_asking = 0;
	/* (the requester keeps at most SRNIC_WINDOW messages in flight:
	 * half of that in a deeper queue) */
	if (depth > SRNIC_WINDOW)
		depth = SRNIC_WINDOW;
	if (2 * (unacked + 1) < depth ||
	    (qp->snd.ack_asking && qp->snd.ack_ask_idx != idx))
		return false;
	pkt->xflags |= SRNIC_X_ACK_REQ;
	return true;
}

/*
 * An RC QP's request carries the cumulative ACK of the other direction:
 * what this QP's responder would put in a plain ACK now (its exp_msn).
 * The peer then completes its own sends before it takes in this packet,
 * whatever became of the plain ACK: lost, or on another port, or passed on
 * by another process's poller and still on its ring (dispatch.c).  A
 * program that waits for both on one completion channel counts on that
 * order: perftest 4.5's ib_send_lat -e polls its send CQ once on the first
 * event after its send, and lost step for good (its server then waited for
 * an event that never came) when the answer completed first.  (An XRC
 * initiator's responder takes nothing in: it has nothing to say.)
 */
static inline void piggyback_ack(const struct srnic_qp *qp,
				 struct srnic_pkt *pkt)
{
	if (!srnic_qp_reliable(qp) || qp->xrc != SRNIC_XRC_NONE)
		return;
	pkt->flags |= SRNIC_F_ACKS;
	pkt->ack_msn = qp->rcv.exp_msn;
}

/*
 * Build and queue the packet of w that starts at off, on port.  Returns 1
 * when it went out, 0 when no buffer was free, -1 when the WQE's memory
 * failed its check (the WQE is failed).
 */
static int data_pkt_send(struct srnic_engine *eng, struct srnic_qp *qp,
			 uint32_t idx, struct srnic_pkt *pkt, uint32_t off,
			 int port)
{
	const struct srnic_swqe *w = &qp->q.sq[idx & qp->q.sq_mask];
	uint32_t stride = 1u << pkt->stride_shift;
	struct rte_mbuf *m;
	uint8_t *payload;

	pkt->flags &= ~SRNIC_F_LAST;
	pkt->msg_off = off;
	pkt->va = w->remote_addr + off;
	piggyback_ack(qp, pkt);
	if (pkt->opcode == SRNIC_OP_ATOMIC_REQ) {
		/* One packet (off 0): the operands are the payload, the
		 * SGE is where the old value goes. */
		pkt->pkt_len = SRNIC_ATOMIC_PAYLOAD;
		pkt->flags |= SRNIC_F_LAST;
	} else if (pkt->opcode == SRNIC_OP_READ_REQ) {
		/* The whole READ, and from off the part wanted (read_len,
		 * which the caller set) */
		pkt->pkt_len = 0;
		pkt->va = w->remote_addr;
		pkt->flags |= SRNIC_F_LAST;
	} else {
		pkt->pkt_len = w->length - off < stride ? w->length - off
							: stride;
		if (off + pkt->pkt_len == w->length)
			pkt->flags |= SRNIC_F_LAST;
	}
	if (pkt->pkt_len >= SRNIC_ZC_MIN && eng->node->port[port].zero_copy &&
	    srnic_mem_zero_copy_ok(&eng->mem) &&
	    srnic_qp_reliable(qp) && !(w->flags & SRNIC_WR_INLINE) &&
	    (pkt->opcode == SRNIC_OP_WRITE || pkt->opcode == SRNIC_OP_SEND)) {
		/* Zero-copy: the port copies the payload straight out of the
		 * program's memory (RC only: srnic_pkt_alloc_ext). */
		bool bad;
		const uint8_t *src = srnic_sge_piece(&eng->mem, qp->pd, w->sge,
						     w->num_sge, off,
						     pkt->pkt_len, &bad);

		if (bad) {
			srnic_swqe_finish(qp, idx, SRNIC_WC_LOC_PROT_ERR);
			return -1;
		}
		if (src) {
			m = srnic_pkt_alloc_ext(eng, pkt, qp->peer->mac[port],
						port, src);
			if (!m)
				return 0;
			goto queue;
		}
	}
	m = srnic_pkt_alloc(eng, pkt, qp->peer->mac[port], port, &payload);
	if (!m)
		return 0;
	if (pkt->opcode == SRNIC_OP_ATOMIC_REQ) {
		srnic_put64(payload, w->compare_add);
		srnic_put64(payload + 8, w->swap);
	} else if (pkt->pkt_len &&
		   gather(&eng->mem, qp->pd, w, off, payload, pkt->pkt_len)) {
		rte_pktmbuf_free(m);
		srnic_swqe_finish(qp, idx, SRNIC_WC_LOC_PROT_ERR);
		return -1;
	}
queue:
	srnic_port_tx(eng, port, m);
	/* A plain ACK this QP owes (ack_ahead sends it before a new
	 * message; this is a resend) goes right behind (send_acks). */
	srnic_qp_path_sent(eng, qp, port);
	if (qp->ack_lazy)
		srnic_qp_want_ack(eng, qp);
	return 1;
}

/* Send one packet of WQE idx again (or its request), on the next port:
 * what probes, SACK resends and READ ranges do.  As data_pkt_send, and 0
 * when no port can take it. */
static int resend_at(struct srnic_engine *eng, struct srnic_qp *qp,
		     uint32_t idx, struct srnic_pkt *pkt, uint32_t off)
{
	const struct srnic_swqe *w = &qp->q.sq[idx & qp->q.sq_mask];
	int port;

	/* (a third-party WRITE's packet: its source is asked for it) */
	if (w->opcode == SRNIC_WR_TP_WRITE)
		return srnic_tp_request(eng, qp, idx, off,
					RTE_MIN(1u << pkt->stride_shift,
						w->length - off),
					pkt->flags & SRNIC_F_PROBE,
					pkt->stride_shift);
	port = srnic_qp_pick_port(eng, qp);

	return port < 0 ? 0 : data_pkt_send(eng, qp, idx, pkt, off, port);
}

/* The current message has gone out whole (its last packet, or its
 * third-party request): the completer waits for its ACK from now. */
static void message_sent(const struct srnic_engine *eng, struct srnic_qp *qp,
			 struct srnic_swqe_run *run)
{
	uint64_t now = eng->now;

	run->state = srnic_qp_reliable(qp) ? SWQE_WAITING : SWQE_DONE;
	run->deadline = now + qp->at.timeout_tsc;
	run->probe_at = now + srnic_probe_tsc(qp);
	qp->snd.cur_busy = 0;
}

/* A third-party WRITE goes as one request to its source, for all of it
 * (third_party.c); the target's credit is taken as if this QP had sent
 * its packets, which the target counts as this QP's. */
static unsigned send_tp(struct srnic_engine *eng, struct srnic_qp *qp,
			struct srnic_swqe_run *run,
			const struct srnic_swqe *w)
{
	uint8_t shift = stride_shift(eng, qp);
	bool fresh = !run->fc_high;

	if (fresh && !srnic_fc_open(qp)) {
		fc_block(eng, qp);
		return 0;
	}
	if (srnic_tp_request(eng, qp, qp->snd.sq_cur, 0, 0, 0, shift) <= 0)
		return 0;
	if (fresh) {
		qp->snd.fc_sent += srnic_track_npkts(w->length, shift);
		run->fc_high = w->length + !w->length;
	}
	run->sent = w->length;
	message_sent(eng, qp, run);
	return 1;
}

/* Emit up to budget packets of the current message. */
static unsigned send_packets(struct srnic_engine *eng, struct srnic_qp *qp,
			     unsigned budget)
{
	struct srnic_swqe_run *run = &qp->run[qp->snd.sq_cur & qp->q.sq_mask];
	struct srnic_swqe *w = &qp->q.sq[qp->snd.sq_cur & qp->q.sq_mask];
	struct srnic_pkt pkt;
	bool half_ask;
	unsigned n = 0;

	if (unlikely(w->opcode == SRNIC_WR_TP_WRITE))
		return send_tp(eng, qp, run, w);
	data_pkt_init(&pkt, eng, qp, w, run);
	half_ask = ask_ack(qp, w, &pkt, qp->snd.sq_cur);
	while (n < budget) {
		/* (a READ's or an atomic's request carries no data) */
		bool fresh = run->sent >= run->fc_high &&
			     !srnic_wr_reads(w->opcode);
		int port, rc;

		/* New data waits for credit; a resend never does. */
		if (fresh && !(srnic_qp_reliable(qp) ? srnic_fc_open(qp)
						     : srnic_fc_uc_open(qp))) {
			fc_block(eng, qp);
			break;
		}
		port = srnic_qp_pick_port(eng, qp);
		if (port < 0) {
			/* No way to the peer at all (not merely full ports):
			 * count the attempt as lost, so that the timer retries
			 * it and retry_cnt ends it, rather than spinning. */
			if (!srnic_qp_peer_reachable(eng, qp)) {
				/* (UC: lost, as on a wire that is down) */
				run->state = srnic_qp_reliable(qp)
						     ? SWQE_WAITING
						     : SWQE_DONE;
				run->deadline = eng->now +
						qp->at.timeout_tsc;
				qp->snd.cur_busy = 0;
			}
			break;
		}
		rc = data_pkt_send(eng, qp, qp->snd.sq_cur, &pkt, run->sent, port);
		if (rc <= 0)
			break;
		n++;
		if (fresh && !srnic_qp_reliable(qp))
			srnic_fc_uc_sent(qp, run->msn);
		if (fresh) {
			qp->snd.fc_sent++;
			/* An empty message's one packet counts once too. */
			run->fc_high = run->sent + pkt.pkt_len + !pkt.pkt_len;
		}
		run->sent += pkt.pkt_len;
		if (pkt.flags & SRNIC_F_LAST) {
			message_sent(eng, qp, run);
			break;
		}
	}
	/* (a half-queue ask holds the next ones back once it went) */
	if (half_ask && n) {
		qp->snd.ack_asking = 1;
		qp->snd.ack_ask_idx = qp->snd.sq_cur;
	}
	return n;
}

/*
 * The oldest message has waited a probe interval: send its last packet
 * again (one packet, same attempt).  If the responder lacks anything of the
 * message it answers with a SACK; if it has it all, with the ACK again.
 * Either way recovery takes a probe interval, not a whole timeout.
 */
static void probe(struct srnic_engine *eng, struct srnic_qp *qp, uint32_t idx)
{
	struct srnic_swqe_run *run = &qp->run[idx & qp->q.sq_mask];
	struct srnic_swqe *w = &qp->q.sq[idx & qp->q.sq_mask];
	struct srnic_pkt pkt;
	uint32_t npkts;

	if (run->state != SWQE_WAITING)
		return;
	if (srnic_wr_reads(w->opcode)) {
		/* Answers to it (or to the READs before it) still coming:
		 * nothing to chase yet. */
		if (eng->now - qp->snd.rd_progress < srnic_probe_tsc(qp)) {
			run->probe_at = qp->snd.rd_progress + srnic_probe_tsc(qp);
			return;
		}
		reread(eng, qp, idx);
		srnic_rto_backoff(qp);
		run->probe_at = eng->now + srnic_probe_tsc(qp);
		return;
	}
	data_pkt_init(&pkt, eng, qp, w, run);
	/* (flagged: a message lost whole would otherwise hear nothing back
	 * from its probe, whose lone last packet looks like one that merely
	 * overtook the others) */
	pkt.flags |= SRNIC_F_PROBE;
	npkts = srnic_track_npkts(w->length, pkt.stride_shift);
	if (resend_at(eng, qp, idx, &pkt, (npkts - 1) << pkt.stride_shift) > 0)
		eng->st->probes++;
	/* Until something moves, each probe waits twice as long. */
	srnic_rto_backoff(qp);
	run->probe_at = eng->now + srnic_probe_tsc(qp);
}

/* How many ranges one READ asks again for at most; what lies beyond the
 * last is asked for with it, to the READ's end.  (Asking for only what
 * lies past the last packet that landed instead, and leaving the holes
 * between for the next attempt, took a 2 GiB READ whose receive ring
 * overflowed now and then past its program's 30 s: the holes were
 * thousands, three an attempt.  Answering again what landed costs
 * bandwidth, not the READ.) */
#define REREAD_RANGES 4

/*
 * A READ whose answer stopped short: ask, under the attempt's txid, for
 * only the packets that have not landed, a request per missing range.
 */
static void reread(struct srnic_engine *eng, struct srnic_qp *qp,
		   uint32_t idx)
{
	struct srnic_swqe_run *run = &qp->run[idx & qp->q.sq_mask];
	struct srnic_swqe *w = &qp->q.sq[idx & qp->q.sq_mask];
	const struct srnic_track *t = &run->rd;
	struct srnic_pkt pkt;
	uint32_t from = 0;
	unsigned k;

	data_pkt_init(&pkt, eng, qp, w, run);
	pkt.stride_shift = t->shift;	/* as the bitmap was cut */
	if (pkt.opcode == SRNIC_OP_ATOMIC_REQ) {
		/* Asked again as it was: the responder answers a copy from
		 * what it saved, it never runs an atomic twice. */
		if (resend_at(eng, qp, idx, &pkt, 0) > 0)
			eng->st->read_rerequests++;
		return;
	}
	for (k = 0; k < REREAD_RANGES; k++) {
		uint32_t a = srnic_track_next(t, from, false), b;

		if (a >= t->npkts)
			break;
		b = srnic_track_next(t, a, true);
		if (k == REREAD_RANGES - 1 || b >= t->npkts)
			pkt.read_len = 0;	/* to the end */
		else
			pkt.read_len = (b << t->shift) - (a << t->shift);
		if (resend_at(eng, qp, idx, &pkt, a << t->shift) <= 0)
			break;
		eng->st->read_rerequests++;
		from = b;
	}
}

/* Whether a SACK of first and bits says packet first + k is lacking. */
static inline bool sack_lacks(uint64_t bits, uint32_t k)
{
	return !k || (k <= 64 && (bits >> (k - 1) & 1));
}

/* The packets of third-party WRITE idx a SACK says are lacking, asked of
 * its source a run of them a request; how many packets. */
static unsigned tp_resend_ranges(struct srnic_engine *eng,
				 struct srnic_qp *qp, uint32_t idx,
				 uint32_t first, uint64_t bits, uint8_t shift)
{
	const struct srnic_swqe *w = &qp->q.sq[idx & qp->q.sq_mask];
	uint32_t npkts = srnic_track_npkts(w->length, shift), k, k0;
	unsigned n = 0;

	for (k = 0; k <= 64 && first + k < npkts; k++) {
		uint64_t off, end;

		if (!sack_lacks(bits, k))
			continue;
		for (k0 = k; sack_lacks(bits, k + 1) && first + k + 1 < npkts;)
			k++;
		off = (uint64_t)(first + k0) << shift;
		end = RTE_MIN((uint64_t)(first + k + 1) << shift,
			      (uint64_t)w->length);
		if (srnic_tp_request(eng, qp, idx, (uint32_t)off,
				     (uint32_t)(end - off), 0, shift) <= 0)
			break;
		n += k - k0 + 1;
	}
	return n;
}

/*
 * Whether packet i of the message went again for a SACK less than an RTO
 * ago (sack_resent_*): a SACK naming it once more was sent before that
 * copy could land, and another copy would be one more duplicate.  The
 * responder SACKs a message every 500 us while it lacks packets
 * (responder/ack.c); behind a queue of tens of milliseconds (a routed
 * path at its rate, tests/bench/paths.sh with 4 KiB frames) each hole
 * went again dozens of times: 7,907 duplicates for 17,091 packets
 * resent in 3 s, a sixth of the links' bytes.  Held a quarter of the
 * verbs timeout at most, as a probe waits: a held copy that was lost
 * goes again before the timeout resends the whole message.
 */
static inline bool sack_held(const struct srnic_engine *eng,
			     const struct srnic_qp *qp,
			     const struct srnic_swqe_run *run, uint32_t i)
{
	uint64_t hold = qp->snd.rto;

	if (qp->at.timeout_tsc && hold > qp->at.timeout_tsc / 4)
		hold = qp->at.timeout_tsc / 4;
	return run->sack_resent_at && eng->now - run->sack_resent_at < hold &&
	       i - run->sack_resent_first < 64 &&
	       (run->sack_resent_bits >> (i - run->sack_resent_first) & 1);
}

/*
 * The responder says which packets of message msn it lacks (a SACK): send
 * those again at once, under the attempt's own txid, instead of waiting for
 * the timer to resend the whole message.  Only packets this attempt has
 * sent already are concerned.
 */
static void resend_missing(struct srnic_engine *eng, struct srnic_qp *qp,
			   uint32_t idx, uint32_t first, uint64_t bits)
{
	struct srnic_swqe_run *run = &qp->run[idx & qp->q.sq_mask];
	struct srnic_swqe *w = &qp->q.sq[idx & qp->q.sq_mask];
	struct srnic_pkt pkt;
	uint32_t npkts, k;
	uint64_t gone = 0;	/* (bit k: packet first + k resent or held) */
	bool held = false, short_of = false;

	if (srnic_wr_reads(w->opcode) || run->state == SWQE_DONE)
		return;
	data_pkt_init(&pkt, eng, qp, w, run);
	npkts = srnic_track_npkts(w->length, pkt.stride_shift);
	/* (a third-party WRITE's are asked of its source, a range each) */
	if (w->opcode == SRNIC_WR_TP_WRITE)
		eng->st->sack_resent += tp_resend_ranges(eng, qp, idx, first,
							 bits, pkt.stride_shift);
	else
		for (k = 0; k <= 64; k++) {
			uint32_t i = first + k;
			uint64_t off = (uint64_t)i << pkt.stride_shift;

			if (!sack_lacks(bits, k))
				continue;
			if (i >= npkts || (off >= run->sent && w->length))
				break;
			if (sack_held(eng, qp, run, i)) {
				held = true;
				if (k < 64)
					gone |= 1ull << k;
				eng->st->sack_held++;
				continue;
			}
			if (resend_at(eng, qp, idx, &pkt, off) <= 0) {
				short_of = true;
				break;
			}
			if (k < 64)
				gone |= 1ull << k;
			eng->st->sack_resent++;
		}
	/* (what went again or is held is held from now on, or, beside
	 * copies still held, from when those went: a new one's hold is
	 * shorter then, a duplicate at worst; a resend cut short holds
	 * nothing, so the next SACK sends it all) */
	if (short_of || w->opcode == SRNIC_WR_TP_WRITE || !gone) {
		run->sack_resent_at = 0;
	} else {
		if (!held)
			run->sack_resent_at = eng->now;
		run->sack_resent_first = first;
		run->sack_resent_bits = gone;
	}
	/* A SACK that shows the message moving on (its first hole later,
	 * or fewer holes) gives it a new timeout and ends the back-off; one
	 * that names the same holes again does not, or a path that never
	 * carries what is resent would keep the message alive for ever. */
	k = 1 + (uint32_t)__builtin_popcountll(bits);
	if (!run->sack_missing || first > run->sack_first ||
	    (first == run->sack_first && k < run->sack_missing)) {
		run->sack_first = first;
		run->sack_missing = k;
		run->retries = 0;	/* progress: as a READ's answer */
		srnic_rto_progress(qp);
		run->deadline = eng->now + qp->at.timeout_tsc;
	}
	run->probe_at = eng->now + srnic_probe_tsc(qp);
}

/* The datagram's WQE is over: UD completes once the frame is queued, or
 * lost, as a UD send does on hardware.  Returns the one packet it counts. */
static inline unsigned datagram_done(struct srnic_qp *qp,
				     struct srnic_swqe_run *run)
{
	run->state = SWQE_DONE;
	qp->snd.cur_busy = 0;
	return 1;
}

/*
 * Where w goes: *peer is the node it names, NULL for a multicast group.
 * To a service it goes to the service's group address, for its holder, or
 * to this node if it holds it.  Returns false when nobody holds the
 * service: the datagram is lost.
 */
static inline bool datagram_peer(const struct srnic_engine *eng,
				 const struct srnic_swqe *w,
				 const struct srnic_peer **peer)
{
	const struct srnic_service *sv;
	int16_t h;

	*peer = w->ud.mcast ? NULL : &eng->node->peer[w->ud.peer];
	if (!w->ud.svc)
		return true;
	sv = &eng->node->svc[w->ud.svc - 1];
	h = __atomic_load_n(&sv->holder_peer, __ATOMIC_ACQUIRE);
	/* (nobody holds it, or its entry is another service's now: the
	 * service was forgotten, control/service.c) */
	if (h < 0 || __atomic_load_n(&sv->ipv4, __ATOMIC_ACQUIRE) != w->ud.ipv4)
		return false;
	*peer = h == SRNIC_PEER_SELF ? &eng->node->peer[h] : &sv->peer;
	return true;
}

/* The datagram's header; for a multicast group (peer NULL), mac gets the
 * group's Ethernet address.  A service's QP (a member's, srnic_svc_create_
 * qp) sends from the service's address, not the node's (seed 000 ¶67): its
 * receiver's GRH names the service, and an answer made from it goes to
 * whoever holds the service then.  (To a group, from the node's own: that
 * is how a node tells its own datagram back from a wire.) */
static inline void datagram_pkt_init(struct srnic_pkt *pkt,
				     const struct srnic_engine *eng,
				     const struct srnic_qp *qp,
				     const struct srnic_swqe *w,
				     const struct srnic_peer *peer,
				     uint8_t mac[6])
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = SRNIC_OP_UD_SEND;
	pkt->flags = (op_flags[w->opcode] & SRNIC_F_IMM) | SRNIC_F_RECV_CQE |
		     SRNIC_F_LAST;
	if (w->flags & SRNIC_WR_SOLICITED)
		pkt->flags |= SRNIC_F_SOLICITED;
	pkt->src_qpn = qp->q.qpn;
	pkt->src_inc = eng->node->inc;
	pkt->imm = w->imm;
	pkt->qkey = (int32_t)w->ud.qkey < 0 ? qp->at.qkey : w->ud.qkey;
	pkt->src_ipv4 = qp->svc_slot && peer ? qp->svc_ipv4 : eng->cfg.ipv4;
	pkt->dst_ipv4 = w->ud.ipv4;
	pkt->msg_len = pkt->pkt_len = w->length;
	pkt->stride_shift = SRNIC_MAX_STRIDE_SHIFT;
	if (peer) {
		pkt->dst_qpn = w->ud.qpn;
		pkt->dst_inc = __atomic_load_n(&peer->inc, __ATOMIC_ACQUIRE);
	} else {
		pkt->dst_qpn = SRNIC_QPN_MCAST;
		srnic_mcast_mac(w->ud.ipv4, w->ud.mcast == SRNIC_MCAST_IPV6,
				mac);
	}
}

/* The port of the datagram's flow.  One flow (this QP to that QP) keeps to
 * one port, so its datagrams arrive in the order they were sent, as on a
 * NIC with one path a flow; flows spread over the ports, as ECMP spreads
 * them.  -1 when no port can take it now. */
static inline int datagram_port(struct srnic_engine *eng,
				const struct srnic_qp *qp,
				const struct srnic_swqe *w,
				const struct srnic_peer *peer)
{
	uint32_t rr = (qp->q.qpn * 0x9e3779b1u ^ w->ud.qpn * 0x85ebca6bu ^
		       w->ud.ipv4) >> 16;

	return srnic_stripe_pick(eng, peer, &rr);
}

/* Members of the group on this node get a multicast datagram through the
 * loopback: a copy of the frame sealed for the wire, since the loopback
 * checks the CRC that the frame's flags say it carries. */
static inline void datagram_to_local_members(struct srnic_engine *eng,
					     unsigned port, struct rte_mbuf *m,
					     uint32_t group)
{
	struct rte_mbuf *c;

	if (!srnic_node_group_procs(eng->node, group) ||
	    srnic_port_backlogged(eng, SRNIC_PORT_LOOP))
		return;
	srnic_port_seal(eng, port, m);
	c = rte_pktmbuf_copy(m, eng->node->pool, 0, UINT32_MAX);
	if (c)
		srnic_port_tx(eng, SRNIC_PORT_LOOP, c);
	else
		eng->st->drops[SRNIC_DROP_NO_MBUF]++;
}

/*
 * UD: the current WQE is one datagram, to the node (or multicast group) it
 * names, in one packet on its flow's port.  It completes as soon as it is
 * queued; one to a node no port reaches is lost the same way.  Returns
 * packets sent (0 or 1).
 */
static unsigned send_datagram(struct srnic_engine *eng, struct srnic_qp *qp)
{
	struct srnic_swqe_run *run = &qp->run[qp->snd.sq_cur & qp->q.sq_mask];
	struct srnic_swqe *w = &qp->q.sq[qp->snd.sq_cur & qp->q.sq_mask];
	const struct srnic_peer *peer;
	uint8_t mac[6];
	struct srnic_pkt pkt;
	struct rte_mbuf *m;
	uint8_t *payload;
	int port;

	if (!datagram_peer(eng, w, &peer))
		return datagram_done(qp, run);
	datagram_pkt_init(&pkt, eng, qp, w, peer, mac);
	port = datagram_port(eng, qp, w, peer);
	if (port < 0)
		return srnic_stripe_reachable(eng, peer)
			       ? 0 /* ports full: try again */
			       : datagram_done(qp, run);
	m = srnic_pkt_alloc(eng, &pkt, peer ? peer->mac[port] : mac, port,
			    &payload);
	if (!m)
		return 0;
	if (pkt.pkt_len &&
	    gather(&eng->mem, qp->pd, w, 0, payload, pkt.pkt_len)) {
		rte_pktmbuf_free(m);
		srnic_swqe_finish(qp, qp->snd.sq_cur, SRNIC_WC_LOC_PROT_ERR);
		qp->snd.cur_busy = 0;
		return 0;
	}
	if (!peer)
		datagram_to_local_members(eng, port, m, pkt.dst_ipv4);
	srnic_port_tx(eng, port, m);
	return datagram_done(qp, run);
}

/* Completion at both ends: READ run's every byte is here, which its target
 * is told (engine/dispatch.c takes its answer to the completer). */
static void say_read_done(struct srnic_engine *eng, struct srnic_qp *qp,
			  const struct srnic_swqe_run *run)
{
	struct srnic_pkt pkt;

	srnic_qp_pkt_init(&pkt, eng, qp, SRNIC_OP_READ_DONE, run->msn);
	pkt.nak_txid = run->txid;
	srnic_qp_send_header(eng, qp, &pkt);
}

/* What the completer asked for (SRNIC_REPAIR_*), message by message. */
static void run_repairs(struct srnic_engine *eng, struct srnic_qp *qp)
{
	while (qp->repair_head != qp->repair_tail) {
		uint32_t idx = qp->repair[qp->repair_head++ % SRNIC_WINDOW];
		struct srnic_swqe_run *run = &qp->run[idx & qp->q.sq_mask];
		uint8_t what;

		/* (an ask about a WQE completed since: its slot is another's) */
		if (idx - qp->q.sq_comp >= qp->snd.sq_next - qp->q.sq_comp)
			continue;
		what = run->repair;
		run->repair = 0;
		/* (finished since the ask: nothing to repair; probe and
		 * resend_missing look at the rest themselves) */
		if (run->state == SWQE_DONE)
			continue;
		if (run->done_wait) {	/* (its data all in: nothing to send
					 * again but the word) */
			if (what & SRNIC_REPAIR_DONE)
				say_read_done(eng, qp, run);
			continue;
		}
		/* (not of an attempt that is about to be replaced: an RNR
		 * NAK's, whose resend waits for the NAK's time) */
		if (run->resend_queued)
			continue;
		if (what & SRNIC_REPAIR_SACK)
			resend_missing(eng, qp, idx, run->sack_ask_first,
				       run->sack_ask_bits);
		else if (what & SRNIC_REPAIR_PROBE)
			probe(eng, qp, idx);
	}
}

unsigned srnic_requester_run(struct srnic_engine *eng, struct srnic_qp *qp,
			     unsigned budget)
{
	unsigned n = 0;

	if ((qp->q.state != SRNIC_QPS_RTS && qp->q.state != SRNIC_QPS_SQD) ||
	    (!qp->peer && qp->q.type != SRNIC_QPT_UD))
		return 0;
	/* A service's client waits for its holder's answer to send: what
	 * is queued goes to the QP bound then (engine/service.c). */
	if (qp->svc_resync)
		return 0;
	run_repairs(eng, qp);
	while (n < budget) {
		if (!qp->snd.cur_busy && !next_message(eng, qp))
			break;
		if (!qp->snd.cur_busy)
			break;	/* a WQE failed its checks: let the completer act */
		{
			unsigned k = qp->q.type == SRNIC_QPT_UD
					     ? send_datagram(eng, qp)
					     : send_packets(eng, qp, budget - n);

			n += k;
			if (k == 0)
				break;
		}
	}
	return n;
}
