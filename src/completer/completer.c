/* SPDX-License-Identifier: MIT */
/*
 * Completer: the requester's other half.  It takes ACKs and NAKs, places
 * READ response data, runs the retransmission and RNR timers, and turns
 * finished send WQEs into completions strictly in posting order.
 */
#include <errno.h>
#include <string.h>

#include "srnic_completer.h"
#include "srnic_flow.h"
#include "srnic_rto.h"
#include "srnic_sge.h"

static inline int32_t seq_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

/* The run of the in-flight WQE that carries msn (its index in *idx), or
 * NULL. */
static struct srnic_swqe_run *run_of_msn(struct srnic_qp *qp, uint32_t msn,
					  uint32_t *idx)
{
	uint32_t i;

	if (qp->q.sq_comp == qp->snd.sq_next)
		return NULL;
	/* WQEs take consecutive MSNs, so the first guess is nearly always
	 * right; a WQE that failed its local checks took none. */
	i = qp->q.sq_comp + (msn - qp->run[qp->q.sq_comp & qp->q.sq_mask].msn);
	if (seq_diff(i, qp->q.sq_comp) >= 0 && seq_diff(i, qp->snd.sq_next) < 0 &&
	    qp->run[i & qp->q.sq_mask].msn == msn) {
		*idx = i;
		return &qp->run[i & qp->q.sq_mask];
	}
	for (i = qp->q.sq_comp; i != qp->snd.sq_next; i++)
		if (qp->run[i & qp->q.sq_mask].msn == msn &&
		    qp->run[i & qp->q.sq_mask].state != SWQE_DONE) {
			*idx = i;
			return &qp->run[i & qp->q.sq_mask];
		}
	return NULL;
}

static uint64_t rnr_delay_tsc(const struct srnic_engine *eng, uint8_t code)
{
	/* verbs' RNR timer codes, in microseconds (code 0 is 655.36 ms) */
	static const uint32_t us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320,
		480, 640, 960, 1280, 1920, 2560, 3840, 5120, 7680, 10240,
		15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840,
		245760, 327680, 491520,
	};

	return eng->tsc_hz / 1000000 * us[code & 31];
}

/* Ask the requester for packets of message idx again (SRNIC_REPAIR_*):
 * they go on its next turn, which this asks for. */
static void want_repair(struct srnic_engine *eng, struct srnic_qp *qp,
			uint32_t idx, uint8_t what)
{
	struct srnic_swqe_run *run = &qp->run[idx & qp->q.sq_mask];

	if (!run->repair)
		qp->repair[qp->repair_tail++ % SRNIC_WINDOW] = idx;
	run->repair |= what;
	srnic_qp_activate(eng, qp);
}

static void queue_resend(struct srnic_engine *eng, struct srnic_qp *qp,
			 uint32_t idx)
{
	struct srnic_swqe_run *run = &qp->run[idx & qp->q.sq_mask];

	if (run->resend_queued)
		return;
	run->resend_queued = 1;
	qp->snd.resend[qp->snd.resend_tail++ % SRNIC_WINDOW] = idx;
	srnic_qp_activate(eng, qp);
}

/* Cumulative part of an ACK: every message below msn has landed.  READs
 * and atomics finish when their answer has, not here.  Returns whether a
 * message finished. */
static inline bool ack_cumulative(struct srnic_qp *qp, uint32_t msn)
{
	bool moved = false;
	uint32_t i;

	for (i = qp->q.sq_comp; i != qp->snd.sq_next; i++) {
		struct srnic_swqe_run *run = &qp->run[i & qp->q.sq_mask];

		if (run->state == SWQE_DONE)
			continue;
		if (seq_diff(run->msn, msn) >= 0)
			break;
		if (!srnic_wr_reads(qp->q.sq[i & qp->q.sq_mask].opcode)) {
			srnic_swqe_finish(qp, i, SRNIC_WC_SUCCESS);
			moved = true;
		}
	}
	return moved;
}

/* The responder echoes the send time of the packet it took in just
 * before: a round trip of the path, queues included, but not the time
 * messages waited for earlier ones to be repaired (which a cumulative ACK
 * would add). */
static inline void ack_rtt_sample(struct srnic_engine *eng,
				  struct srnic_qp *qp, uint16_t ts_echo)
{
	uint16_t rtt = (uint16_t)(eng->now_ts16 - ts_echo);

	srnic_rto_sample(qp, (uint64_t)rtt * eng->tsc_per_us, eng->tsc_hz);
	eng->st->srtt_us = qp->snd.srtt / eng->tsc_per_us;
	eng->st->rto_us = qp->snd.rto / eng->tsc_per_us;
}

/* A SACK: ask the requester to resend what message sack_msn lacks (the
 * newest SACK of a message says best what that is). */
static inline void ack_sack(struct srnic_engine *eng, struct srnic_qp *qp,
			    const struct srnic_pkt *pkt)
{
	struct srnic_swqe_run *run;
	uint32_t idx;

	run = run_of_msn(qp, pkt->sack_msn, &idx);
	if (!run)
		return;
	run->sack_ask_first = pkt->sack_first;
	run->sack_ask_bits = pkt->sack_bits;
	want_repair(eng, qp, idx, SRNIC_REPAIR_SACK);
}

/*
 * Message idx was refused for want of a receive WQE: after the delay the
 * peer asks for, send it again, unless it has used up its RNR retries
 * (rnr_retry 7: retry for ever).  Later messages were refused as well, or
 * will be answered as duplicates: they all go again after the delay,
 * without charging their retry counts.
 */
static void nak_rnr(struct srnic_engine *eng, struct srnic_qp *qp,
		    uint32_t idx, uint8_t rnr_timer)
{
	struct srnic_swqe_run *run = &qp->run[idx & qp->q.sq_mask];
	uint32_t i;

	if (qp->at.rnr_retry != 7 && ++run->rnr_retries > qp->at.rnr_retry) {
		eng->st->retry_exceeded++;
		srnic_swqe_finish(qp, idx, SRNIC_WC_RNR_RETRY_EXC_ERR);
		return;
	}
	/* (the clock read anew: the iteration's, from before its receive,
	 * could spend a short wait before the requester's turn) */
	qp->snd.rnr_until = srnic_now() + rnr_delay_tsc(eng, rnr_timer);
	for (i = idx; i != qp->snd.sq_next; i++) {
		struct srnic_swqe_run *r = &qp->run[i & qp->q.sq_mask];

		if (r->state == SWQE_DONE)
			continue;
		if (r->state == SWQE_SENDING) {
			r->state = SWQE_WAITING;
			if (qp->snd.cur_busy && qp->snd.sq_cur == i)
				qp->snd.cur_busy = 0;
		}
		r->deadline = qp->snd.rnr_until + qp->at.timeout_tsc;
		queue_resend(eng, qp, i);
	}
}

/* A NAK of the message's current attempt: an RNR retries, any other ends
 * the message with the error the syndrome names.  A NAK about an older
 * attempt, or a message already finished, is stale. */
static void ack_nak(struct srnic_engine *eng, struct srnic_qp *qp,
		    const struct srnic_pkt *pkt)
{
	struct srnic_swqe_run *run;
	uint32_t idx;

	run = run_of_msn(qp, pkt->nak_msn, &idx);
	if (!run)
		return;
	if (run->txid != pkt->nak_txid || run->state == SWQE_DONE)
		return;
	/* (a READ with every byte in, waiting for its target's word: a NAK
	 * is of a job answering a probe's re-read, late, which may meet
	 * memory the target, told, has let go already) */
	if (run->done_wait)
		return;
	switch (pkt->syndrome) {
	case SRNIC_NAK_RNR:
		/* (a READ's: the target's program has the question, and
		 * will answer; read_waits) */
		if (srnic_wr_reads(qp->q.sq[idx & qp->q.sq_mask].opcode))
			run->rnr_heard = 1;
		else
			nak_rnr(eng, qp, idx, pkt->rnr_timer);
		break;
	case SRNIC_NAK_ACCESS:
		srnic_swqe_finish(qp, idx, SRNIC_WC_REM_ACCESS_ERR);
		break;
	case SRNIC_NAK_INVALID:
		srnic_swqe_finish(qp, idx, SRNIC_WC_REM_INV_REQ_ERR);
		break;
	default:
		srnic_swqe_finish(qp, idx, SRNIC_WC_REM_OP_ERR);
		break;
	}
}

/* A timeout of message idx spends one of its retries (none for a
 * service's client while no holder is heard: svc_grace_ms); true when
 * they ran out, and the message failed. */
static bool spend_retry(struct srnic_engine *eng, struct srnic_qp *qp,
			uint32_t idx, struct srnic_swqe_run *run)
{
	if (!qp->svc_grace)
		run->retries++;
	if (run->retries <= qp->at.retry_cnt)
		return false;
	eng->st->retry_exceeded++;
	srnic_swqe_finish(qp, idx, SRNIC_WC_RETRY_EXC_ERR);
	return true;
}

/*
 * The timeout of a READ whose question the target's program holds (its
 * FIFO answered a probe with an RNR NAK, src/responder/fifo.c): the
 * program is slow, not gone, so the READ waits on under the same attempt,
 * its probes going on, and the timeout spends an RNR retry (rnr_retry 7:
 * for ever), not a transport retry.  Asked again under a new attempt, as
 * a timeout does, the question would be put to the program a second time,
 * behind the first: three readers of a sink slowed by its CPU
 * (sanitizers, a busy machine) ran out of transport retries that way,
 * their questions answered twice and thrice (e2e/39 in CI).
 */
static void read_waits(struct srnic_engine *eng, struct srnic_qp *qp,
		       uint32_t idx, struct srnic_swqe_run *run, uint64_t now)
{
	run->rnr_heard = 0;
	if (qp->at.rnr_retry != 7 && ++run->rnr_retries > qp->at.rnr_retry) {
		eng->st->retry_exceeded++;
		srnic_swqe_finish(qp, idx, SRNIC_WC_RNR_RETRY_EXC_ERR);
		return;
	}
	run->retries = 0;	/* (heard from: as progress) */
	run->deadline = now + qp->at.timeout_tsc;
}

/* Completion at both ends, a READ's: every byte landed, and the READ
 * completes once its target has (READ_DONE, sent by the requester, until
 * the target's READ_DONE_ACK).  It keeps its place among the READs in
 * flight meanwhile. */
static void read_landed(struct srnic_engine *eng, struct srnic_qp *qp,
			uint32_t idx, struct srnic_swqe_run *run)
{
	uint64_t now = eng->now;

	run->done_wait = 1;
	run->retries = 0;
	run->deadline = now + qp->at.timeout_tsc;
	run->probe_at = now + srnic_probe_tsc(qp);
	want_repair(eng, qp, idx, SRNIC_REPAIR_DONE);
}

/* A READ that waits for its target's READ_DONE_ACK, the oldest message:
 * READ_DONE again after a probe interval, and each timeout spends a
 * retry, as a request's would. */
static void read_done_timer(struct srnic_engine *eng, struct srnic_qp *qp,
			    uint32_t idx, struct srnic_swqe_run *run,
			    uint64_t now)
{
	if (now >= run->deadline) {
		if (spend_retry(eng, qp, idx, run))
			return;
		run->deadline = now + qp->at.timeout_tsc;
	} else if (now < run->probe_at) {
		return;
	}
	run->probe_at = now + srnic_probe_tsc(qp);
	eng->st->read_dones_again++;
	want_repair(eng, qp, idx, SRNIC_REPAIR_DONE);
}

/* The oldest send WQE not finished yet (sq_next: none). */
static uint32_t oldest_unfinished(const struct srnic_qp *qp)
{
	uint32_t i;

	for (i = qp->q.sq_comp; i != qp->snd.sq_next; i++)
		if (qp->run[i & qp->q.sq_mask].state != SWQE_DONE)
			break;
	return i;
}

/*
 * The target's credit rose: packets of this QP's messages landed there.
 * A third-party WRITE that is the oldest unfinished message hears of its
 * progress no other way (its source sends it, from one request, and the
 * target ACKs it only whole), so that is progress for its timers: a
 * WRITE longer than a timeout to send must not be asked for again, or
 * given up, while its bytes are landing.
 */
static void tp_landing(struct srnic_qp *qp)
{
	struct srnic_swqe_run *run;
	uint32_t i = oldest_unfinished(qp);

	if (i == qp->snd.sq_next ||
	    qp->q.sq[i & qp->q.sq_mask].opcode != SRNIC_WR_TP_WRITE)
		return;
	run = &qp->run[i & qp->q.sq_mask];
	if (run->state != SWQE_WAITING)
		return;
	run->retries = 0;
	run->deadline = srnic_now() + qp->at.timeout_tsc;
	run->probe_at = srnic_now() + srnic_probe_tsc(qp);
	srnic_rto_progress(qp);
}

/* A third-party data source's NAK (flag SRNIC_F_THIRD_PARTY): of a
 * third-party WRITE's request, and nothing else; whatever else the frame
 * says is no ACK of the target's. */
static void ack_tp_nak(struct srnic_engine *eng, struct srnic_qp *qp,
		       const struct srnic_pkt *pkt)
{
	uint32_t idx;

	if (pkt->syndrome != SRNIC_NAK_ACCESS &&
	    pkt->syndrome != SRNIC_NAK_INVALID)
		return;
	if (!run_of_msn(qp, pkt->nak_msn, &idx) ||
	    qp->q.sq[idx & qp->q.sq_mask].opcode != SRNIC_WR_TP_WRITE)
		return;
	ack_nak(eng, qp, pkt);
}

void srnic_completer_ack(struct srnic_engine *eng, struct srnic_qp *qp,
			 const struct srnic_pkt *pkt)
{
	uint32_t recv;
	bool moved;

	if (qp->q.state != SRNIC_QPS_RTS && qp->q.state != SRNIC_QPS_SQD)
		return;
	if (unlikely(pkt->flags & SRNIC_F_THIRD_PARTY)) {
		ack_tp_nak(eng, qp, pkt);
		srnic_completer_complete(eng, qp);
		return;
	}
	moved = ack_cumulative(qp, pkt->msn);
	if (pkt->ts_echo)
		ack_rtt_sample(eng, qp, pkt->ts_echo);
	if (moved)
		srnic_rto_progress(qp);
	if ((int32_t)(pkt->credit - qp->snd.fc_credit) > 0)
		tp_landing(qp);
	if (srnic_fc_grant(qp, pkt->credit))
		srnic_qp_activate(eng, qp);
	if (srnic_ack_recv_credit(pkt, &recv)) {
		srnic_fc_recv_heard(qp, recv, pkt->msn);
		/* (a message that waited for it may go: look again) */
		if (qp->snd.rc_recv_wait && srnic_fc_rc_recv_open(qp)) {
			qp->snd.sq_wait = 0;
			srnic_qp_activate(eng, qp);
		}
	}
	if (pkt->flags & SRNIC_F_SACK)
		ack_sack(eng, qp, pkt);
	if (pkt->syndrome != SRNIC_ACK_OK)
		ack_nak(eng, qp, pkt);
	srnic_completer_complete(eng, qp);
}

/* The cumulative ACK an RC request carried (SRNIC_F_ACKS): no more than
 * a plain ACK's msn, so only what that moves (the plain ACKs still bring
 * credit, round-trip samples, NAKs and SACKs). */
void srnic_completer_acked(struct srnic_engine *eng, struct srnic_qp *qp,
			   uint32_t msn)
{
	if (qp->q.state != SRNIC_QPS_RTS && qp->q.state != SRNIC_QPS_SQD)
		return;
	if (!ack_cumulative(qp, msn))
		return;
	srnic_rto_progress(qp);
	srnic_completer_complete(eng, qp);
}

/* UC: the ACK says which messages the responder resolved (its msn), and
 * nothing else counts (srnic_flow.h). */
void srnic_completer_credit(struct srnic_engine *eng, struct srnic_qp *qp,
			    const struct srnic_pkt *pkt)
{
	bool go;

	srnic_fc_uc_heard(qp, eng->now);
	go = srnic_fc_uc_acked(qp, pkt->msn);
	/* (and its credit: receive WQEs posted below it) */
	if (srnic_fc_uc_recv_credit(qp, pkt->credit, pkt->msn) || go)
		srnic_qp_activate(eng, qp);
}

/* A packet of the answer to a READ posted into a FIFO (half-RDMA,
 * SRNIC_WR_FIFO): appended to its ring as a record, the READ's tag in
 * its msn.  False when it was not: the ring full (not marked landed: the
 * READ asks for it again when its answer stops, by when the program may
 * have made room) or gone (the READ fails). */
static bool fifo_append(struct srnic_engine *eng, struct srnic_qp *qp,
			uint32_t idx, const struct srnic_pkt *pkt)
{
	const struct srnic_swqe *w = &qp->q.sq[idx & qp->q.sq_mask];
	const struct srnic_fifo_hdr h = {
		.valid = SRNIC_FIFO_VALID_READ, .pkt_len = pkt->pkt_len,
		.qp_num = qp->q.qpn, .src_qp = qp->at.dest_qpn, .msn = w->imm,
		.msg_len = w->length, .msg_off = pkt->msg_off};
	int rc;

	if (!pkt->pkt_len)
		return true;
	/* (the FIFO destroyed since the READ started: nowhere to go) */
	rc = srnic_mem_check(&eng->mem, w->sge[0].lkey, qp->pd, 0, 0,
			     SRNIC_ACCESS_REMOTE_WRITE) == SRNIC_MEM_FIFO
		     ? srnic_fifo_put(&eng->mem, w->sge[0].lkey, &h,
				      pkt->payload)
		     : -EINVAL;
	if (!rc)
		return true;
	if (rc == -ENOSPC) {
		/* (the peer answered; the room is ours to make: as an RNR
		 * wait, it spends no retry, so a ring smaller than the READ
		 * never fails it, however long the program takes) */
		qp->run[idx & qp->q.sq_mask].retries = 0;
		eng->st->drops[SRNIC_DROP_FIFO_FULL]++;
		return false;
	}
	if (rc == -EFAULT)
		srnic_page_fault(eng, w->sge[0].lkey);
	srnic_swqe_finish(qp, idx, SRNIC_WC_LOC_PROT_ERR);
	srnic_completer_complete(eng, qp);
	return false;
}

void srnic_completer_read_resp(struct srnic_engine *eng, struct srnic_qp *qp,
			       const struct srnic_pkt *pkt,
			       const struct rte_mbuf *m)
{
	struct srnic_swqe_run *run;
	struct srnic_swqe *w;
	uint32_t idx, pi;

	(void)m;
	if (qp->q.state != SRNIC_QPS_RTS && qp->q.state != SRNIC_QPS_SQD)
		return;
	run = run_of_msn(qp, pkt->msn, &idx);
	if (!run) {
		eng->st->drops[SRNIC_DROP_DUPLICATE]++;
		return;
	}
	w = &qp->q.sq[idx & qp->q.sq_mask];
	if (!srnic_wr_reads(w->opcode) || run->state == SWQE_DONE ||
	    run->txid != pkt->txid) {
		eng->st->drops[SRNIC_DROP_STALE_TXID]++;
		return;
	}
	if (pkt->msg_len != w->length || pkt->stride_shift != run->rd.shift) {
		eng->st->drops[SRNIC_DROP_MALFORMED]++;
		return;
	}
	pi = pkt->msg_off >> run->rd.shift;
	if (pi >= run->rd.npkts || srnic_track_test(&run->rd, pi)) {
		eng->st->drops[SRNIC_DROP_DUPLICATE]++;
		return;
	}
	if (unlikely(w->flags & SRNIC_WR_FIFO)) {
		if (!fifo_append(eng, qp, idx, pkt))
			return;
	} else if (pkt->pkt_len &&
		   srnic_sge_scatter(&eng->mem, qp->pd, w->sge, w->num_sge,
				     pkt->msg_off, pkt->payload, pkt->pkt_len)) {
		srnic_swqe_finish(qp, idx, SRNIC_WC_LOC_PROT_ERR);
		srnic_completer_complete(eng, qp);
		return;
	}
	srnic_track_mark(&run->rd, pi);
	/* retry_cnt bounds timeouts in a row, not over a READ's life (rxe
	 * resets its count at every READ response): a 2 GiB READ that met
	 * eight stalls of one timeout each, spread over its seconds on a
	 * busy machine, ran out of retries though every attempt moved it
	 * on (e2e/05, once in CI). */
	run->retries = 0;
	/* (and its answer coming, the target's program no longer holds the
	 * question: a stall from here is a loss's, a transport retry) */
	run->rnr_heard = 0;
	/* A large READ's answer takes longer than one timeout, and READs
	 * are answered one after the other: the READ timers run from the
	 * last sign of progress of any of them, not from the request.  It
	 * is progress for the probes' back-off too (a READ-only QP hears no
	 * ACK that would end it). */
	qp->snd.rd_progress = eng->now;
	srnic_rto_progress(qp);
	if (!srnic_track_complete(&run->rd))
		return;
	if (w->flags & SRNIC_WR_NOTIFY) {
		read_landed(eng, qp, idx, run);
		return;
	}
	srnic_swqe_finish(qp, idx, SRNIC_WC_SUCCESS);
	srnic_completer_complete(eng, qp);
}

void srnic_completer_read_done_ack(struct srnic_engine *eng,
				   struct srnic_qp *qp,
				   const struct srnic_pkt *pkt)
{
	struct srnic_swqe_run *run;
	uint32_t idx;

	if (qp->q.state != SRNIC_QPS_RTS && qp->q.state != SRNIC_QPS_SQD)
		return;
	run = run_of_msn(qp, pkt->msn, &idx);
	if (!run || !run->done_wait || run->state == SWQE_DONE ||
	    pkt->nak_txid != run->txid) {
		eng->st->drops[SRNIC_DROP_DUPLICATE]++;
		return;
	}
	srnic_swqe_finish(qp, idx, SRNIC_WC_SUCCESS);
	srnic_completer_complete(eng, qp);
}

static void lend(struct srnic_engine *eng, struct srnic_qp *qp, uint64_t now)
{
	if (srnic_qp_reliable(qp)) {
		srnic_fc_grant(qp, qp->snd.fc_sent + SRNIC_FC_UPDATE);
	} else {
		if (!srnic_fc_uc_may_lend(qp, now, eng->tsc_per_us * 1000 *
							 SRNIC_UC_GONE_MS))
			return;	/* (a slow responder: wait for its word) */
		srnic_fc_uc_lend(qp);
	}
	qp->snd.fc_blocked = 0;
	eng->st->fc_lent++;
	srnic_qp_activate(eng, qp);
}

void srnic_completer_timeouts(struct srnic_engine *eng, struct srnic_qp *qp,
			      uint64_t now)
{
	uint32_t i;

	if (qp->q.state != SRNIC_QPS_RTS && qp->q.state != SRNIC_QPS_SQD)
		return;
	/* (a service's client between holders: its retries are not spent
	 * while it asks the new one to bind) */
	if (qp->svc_resync)
		return;
	/* Out of credit for a probe interval: the updates were lost, or the
	 * responder has gone quiet.  Lend a little and go on (srnic_flow.h). */
	if (qp->snd.fc_blocked && now - qp->snd.fc_blocked_at >= srnic_probe_tsc(qp))
		lend(eng, qp, now);
	/*
	 * The oldest unfinished message carries the QP's timers: it probes,
	 * and it alone times out.  Later messages lacking packets are the
	 * responder's to point out (SACKs) once they are the oldest; timing
	 * them out meanwhile would resend whole messages that mostly landed,
	 * behind a queue that is only slow.  A message that becomes the
	 * oldest gets a whole timeout from then.
	 */
	i = oldest_unfinished(qp);
	if (i != qp->snd.sq_next) {
		struct srnic_swqe_run *run = &qp->run[i & qp->q.sq_mask];

		if (!qp->snd.timer_set || qp->snd.timer_idx != i) {
			qp->snd.timer_set = 1;
			qp->snd.timer_idx = i;
			if (run->deadline < now + qp->at.timeout_tsc)
				run->deadline = now + qp->at.timeout_tsc;
		}
		if (run->done_wait) {
			read_done_timer(eng, qp, i, run, now);
		} else if (run->state == SWQE_WAITING && !run->resend_queued &&
			   now >= qp->snd.rnr_until) {
			if (now >= run->deadline &&
			    (!srnic_wr_reads(qp->q.sq[i & qp->q.sq_mask].opcode) ||
			     now >= qp->snd.rd_progress + qp->at.timeout_tsc)) {
				if (run->rnr_heard)
					read_waits(eng, qp, i, run, now);
				else if (!spend_retry(eng, qp, i, run))
					queue_resend(eng, qp, i);
			} else if (now >= run->probe_at) {
				want_repair(eng, qp, i, SRNIC_REPAIR_PROBE);
			}
		}
	}
	srnic_completer_complete(eng, qp);
}

static const uint8_t wc_op[] = {
	[SRNIC_WR_SEND] = SRNIC_WC_SEND,
	[SRNIC_WR_SEND_IMM] = SRNIC_WC_SEND,
	[SRNIC_WR_WRITE] = SRNIC_WC_RDMA_WRITE,
	[SRNIC_WR_WRITE_IMM] = SRNIC_WC_RDMA_WRITE,
	[SRNIC_WR_READ] = SRNIC_WC_RDMA_READ,
	[SRNIC_WR_ATOMIC_CAS] = SRNIC_WC_COMP_SWAP,
	[SRNIC_WR_ATOMIC_FAA] = SRNIC_WC_FETCH_ADD,
	[SRNIC_WR_SEND_INV] = SRNIC_WC_SEND,
	[SRNIC_WR_LOCAL_INV] = SRNIC_WC_LOCAL_INV,
	[SRNIC_WR_BIND_MW] = SRNIC_WC_BIND_MW,
	[SRNIC_WR_ATOMIC_WRITE] = SRNIC_WC_ATOMIC_WRITE,
	[SRNIC_WR_MC_WRITE] = SRNIC_WC_RDMA_WRITE,
	[SRNIC_WR_TP_WRITE] = SRNIC_WC_RDMA_WRITE,
};

static void sq_release(struct srnic_qp *qp)
{
	__atomic_store_n(&qp->q.sq_comp, qp->q.sq_comp + 1, __ATOMIC_RELEASE);
}

unsigned srnic_completer_complete(struct srnic_engine *eng,
				  struct srnic_qp *qp)
{
	unsigned n = 0;

	while (qp->q.sq_comp != qp->snd.sq_next) {
		uint32_t idx = qp->q.sq_comp;
		struct srnic_swqe_run *run = &qp->run[idx & qp->q.sq_mask];
		struct srnic_swqe *w = &qp->q.sq[idx & qp->q.sq_mask];
		bool error;

		if (run->state != SWQE_DONE)
			break;
		error = run->status != SRNIC_WC_SUCCESS;
		if (error || qp->q.sq_sig_all || (w->flags & SRNIC_WR_SIGNALED)) {
			struct srnic_cqe *c;

			if (!srnic_cq_room(qp->q.send_cq)) {
				srnic_qp_cq_full(eng, qp);
				break;
			}
			/* (a component counts before its completion shows:
			 * a program that sees it finds the count moved) */
			if (w->flags & SRNIC_WR_COUNTED)
				srnic_condq_count(eng, w->cond.q, !error);
			c = srnic_cq_slot(qp->q.send_cq);
			memset(c, 0, sizeof(*c));
			c->wr_id = w->wr_id;
			c->qp_num = qp->q.qpn;
			c->status = run->status;
			c->opcode = wc_op[w->opcode];
			c->byte_len = srnic_wr_reads(w->opcode) ? w->length : 0;
			/* The slot is free before the completion shows: a
			 * program that posts again on seeing it must find
			 * room. */
			sq_release(qp);
			/* RC: the QP is done for.  UC and UD: only the send
			 * queue stops (SQE); receives go on, and a move back
			 * to RTS resumes sending.  Before the completion
			 * shows: a program that sees the error and asks the
			 * QP's state must find it moved (a san run of e2e/15
			 * found RTS once, the move made just after). */
			if (error && srnic_qp_reliable(qp))
				srnic_qp_to_error(eng, qp);
			else if (error)
				srnic_qp_to_sqe(eng, qp);
			srnic_cq_publish(qp->q.send_cq);
		} else {
			if (w->flags & SRNIC_WR_COUNTED)
				srnic_condq_count(eng, w->cond.q, true);
			sq_release(qp);
		}
		n++;
		if (error) {
			/* What was posted behind it completes flushed now,
			 * before the program, seeing the error, can move
			 * the QP back to RTS. */
			srnic_completer_flush_sq(eng, qp);
			break;
		}
	}
	if (srnic_qp_timers_idle(qp))
		srnic_qp_timer_off(eng, qp);
	if (qp->snd.sq_wait && qp->snd.done_count != qp->snd.wait_done) {
		/* What the next WQE waited for may be done: look again. */
		qp->snd.sq_wait = 0;
		srnic_qp_activate(eng, qp);
	}
	/* Completions open the window: WQEs posted beyond it wait for this,
	 * not for another doorbell. */
	if (n && qp->snd.sq_next != __atomic_load_n(&qp->q.sq_prod, __ATOMIC_ACQUIRE))
		srnic_qp_activate(eng, qp);
	return n;
}

/* Error states: every outstanding send WQE completes with a flush error
 * (flush_pending while the CQ has no room for them all). */
void srnic_completer_flush_sq(struct srnic_engine *eng,
			      struct srnic_qp *qp)
{
	uint32_t prod = __atomic_load_n(&qp->q.sq_prod, __ATOMIC_ACQUIRE);

	qp->snd.cur_busy = 0;
	qp->snd.resend_head = qp->snd.resend_tail;
	qp->repair_head = qp->repair_tail;
	qp->snd.rd_inflight = 0;
	qp->flush_pending = 0;
	while (qp->q.sq_comp != prod) {
		uint32_t idx = qp->q.sq_comp;
		const struct srnic_swqe *w = &qp->q.sq[idx & qp->q.sq_mask];
		struct srnic_cqe *c;

		if (!srnic_cq_room(qp->q.send_cq)) {
			qp->flush_pending = 1;
			break;
		}
		srnic_track_fini(&qp->run[idx & qp->q.sq_mask].rd);
		if (w->flags & SRNIC_WR_COUNTED)	/* (as a failure) */
			srnic_condq_count(eng, w->cond.q, false);
		c = srnic_cq_slot(qp->q.send_cq);
		memset(c, 0, sizeof(*c));
		c->wr_id = w->wr_id;
		c->qp_num = qp->q.qpn;
		c->status = SRNIC_WC_WR_FLUSH_ERR;
		c->opcode = wc_op[w->opcode];
		eng->st->sends_flushed++;
		sq_release(qp);
		srnic_cq_publish(qp->q.send_cq);
	}
	qp->snd.sq_next = qp->q.sq_comp;
}
