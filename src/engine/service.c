/* SPDX-License-Identifier: MIT */
/*
 * Service QPs on the datapath (docs/failover.md): a client's RC QP to a
 * service follows the service's holder, and a member's QP of a service
 * slot binds to the client that asks.
 *
 * A client's QP whose destination GID was a service's address is bound to
 * the holder of the term it saw.  At RTS, and whenever the term changes
 * (a takeover), it asks the holder with SVC_RESYNC to bind the holder's QP
 * of that number to it: the message and receive numbers each side is to
 * take next.  Until the holder answers it sends nothing; then what was
 * not acknowledged goes again, under fresh transaction ids, and no
 * completion is lost or doubled at the client (the holder may see a
 * request twice: the last window the old holder had not acknowledged).
 *
 * A member's QP of a service slot has the same number on every member
 * (SRNIC_SVC_QPN).  Its program takes it to INIT and posts receives; it
 * is parked there until the holder's copy gets a SVC_RESYNC, which binds
 * it to the client, moves it to RTS and tells the program
 * (IBV_EVENT_COMM_EST).  A member that stops holding the service (a
 * higher term) fails its bound QPs (IBV_EVENT_QP_FATAL): their clients
 * resync with the new holder.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "engine_internal.h"

#define RESYNC_EVERY_US 5000	/* a SVC_RESYNC again until answered */
#define GRACE_AFTER_MS 30	/* holder unheard this long: between holders */

static bool holding(struct srnic_engine *eng, uint32_t svc)
{
	const struct srnic_service *sv = srnic_service_find(eng->node, svc);

	return sv && __atomic_load_n(&sv->holding, __ATOMIC_ACQUIRE);
}

/* The message (and its receive number) the client's QP is to (re)send
 * first: the oldest it has not had acknowledged, else its next. */
static void first_unacked(const struct srnic_qp *qp, uint32_t *msn,
			  uint32_t *ssn)
{
	uint32_t i;

	for (i = qp->q.sq_comp; i != qp->snd.sq_next; i++) {
		const struct srnic_swqe_run *run = &qp->run[i & qp->q.sq_mask];
		uint8_t op = qp->q.sq[i & qp->q.sq_mask].opcode;

		if (op == SRNIC_WR_LOCAL_INV || op == SRNIC_WR_BIND_MW)
			continue;	/* (no message) */
		if (run->state != SWQE_DONE) {
			*msn = run->msn;
			*ssn = run->ssn;
			return;
		}
	}
	*msn = qp->snd.next_msn;
	*ssn = qp->snd.next_ssn;
}

/* A resync or its answer, signed under a cluster key: the receiver binds
 * a QP by it (port/decode.c drops it unsigned). */
static void send_to_peer(struct srnic_engine *eng, struct srnic_qp *qp,
			 struct srnic_pkt *pkt)
{
	if (eng->cfg.has_key)
		pkt->flags |= SRNIC_F_AUTH;
	srnic_qp_send_header(eng, qp, pkt);
}

static void send_resync(struct srnic_engine *eng, struct srnic_qp *qp)
{
	struct srnic_pkt pkt;
	uint32_t msn, ssn;

	first_unacked(qp, &msn, &ssn);
	srnic_qp_pkt_init(&pkt, eng, qp, SRNIC_OP_SVC_RESYNC, msn);
	pkt.sack_msn = ssn;
	pkt.nak_msn = qp->rcv.exp_msn;
	pkt.sack_first = qp->rcv.exp_ssn;
	pkt.credit = qp->at.path_shift;
	send_to_peer(eng, qp, &pkt);
	eng->st->svc_resyncs++;
}

/*
 * A WQE the old holder finished behind one it had not (a SEND
 * acknowledged while a READ before it still lacked its answer) goes to
 * the new holder again: the resync names the first unfinished message,
 * and the holder takes messages from there on in order, so one left out
 * would be waited for until the QP ran out of retries.  It has not
 * completed (completions go in posting order): its READ's tracker, freed
 * as it finished, is made again.  False when that fails (it fails).
 */
static bool reopen_done(struct srnic_qp *qp, uint32_t i)
{
	struct srnic_swqe_run *run = &qp->run[i & qp->q.sq_mask];
	const struct srnic_swqe *w = &qp->q.sq[i & qp->q.sq_mask];

	if (srnic_wr_reads(w->opcode)) {
		if (srnic_track_init(&run->rd, w->length, run->rd.shift)) {
			run->status = SRNIC_WC_GENERAL_ERR;
			qp->snd.sq_stopped = 1;
			return false;
		}
		qp->snd.rd_inflight++;
	}
	run->state = SWQE_WAITING;
	return true;
}

/* A client's QP moves to the holder of term: everything it had in flight
 * goes again (fresh transaction ids, after the holder answers), what it
 * had partly received from the old holder is forgotten. */
static void client_rebind(struct srnic_engine *eng, struct srnic_qp *qp,
			  struct srnic_peer *holder, uint32_t term)
{
	bool behind = false;	/* past the first unfinished message */
	uint32_t i;

	qp->peer = holder;
	qp->peer_inc = __atomic_load_n(&holder->inc, __ATOMIC_ACQUIRE);
	qp->svc_term = term;
	srnic_responder_reset(eng, qp);
	srnic_fc_reset(qp);
	qp->snd.cur_busy = 0;
	for (i = qp->q.sq_comp; i != qp->snd.sq_next; i++) {
		struct srnic_swqe_run *run = &qp->run[i & qp->q.sq_mask];
		uint8_t op = qp->q.sq[i & qp->q.sq_mask].opcode;

		if (op == SRNIC_WR_LOCAL_INV || op == SRNIC_WR_BIND_MW)
			continue;	/* (no message) */
		if (run->state == SWQE_DONE && behind &&
		    run->status == SRNIC_WC_SUCCESS && !reopen_done(qp, i))
			break;
		if (run->state != SWQE_SENDING && run->state != SWQE_WAITING)
			continue;
		behind = true;
		/* A READ whose target was to complete it too, landed and
		 * waiting for the old holder's word: the new holder has
		 * not seen it, so it is read again, in full, there (its
		 * READ_DONE would be for a message the holder lacks). */
		if (run->done_wait) {
			run->done_wait = 0;
			if (srnic_track_init(&run->rd,
					     qp->q.sq[i & qp->q.sq_mask].length,
					     run->rd.shift)) {
				srnic_swqe_finish(qp, i, SRNIC_WC_GENERAL_ERR);
				continue;
			}
		}
		run->state = SWQE_WAITING;
		run->retries = 0;
		if (!run->resend_queued) {
			run->resend_queued = 1;
			qp->snd.resend[qp->snd.resend_tail++ % SRNIC_WINDOW] = i;
		}
	}
	qp->svc_resync = 1;
	qp->svc_resync_at = 0;
	eng->st->svc_rebinds++;
}

static void client_tick(struct srnic_engine *eng, struct srnic_qp *qp,
			uint64_t now)
{
	const struct srnic_service *sv =
		srnic_service_find(eng->node, qp->svc_ipv4);
	uint32_t term, holder;
	struct srnic_peer *peer;

	if (!sv || (qp->q.state != SRNIC_QPS_RTS &&
		    qp->q.state != SRNIC_QPS_SQD))
		return;
	term = __atomic_load_n(&sv->term, __ATOMIC_ACQUIRE);
	holder = __atomic_load_n(&sv->holder, __ATOMIC_ACQUIRE);
	/* No holder heard for a few HELLO intervals: the service is between
	 * holders, and the QP's tries meanwhile are free, up to
	 * svc_grace_ms from the last word of one. */
	{
		uint64_t quiet = srnic_ms() -
				 __atomic_load_n(&sv->holder_heard,
						 __ATOMIC_ACQUIRE);

		qp->svc_grace = quiet >= GRACE_AFTER_MS &&
				quiet < eng->cfg.svc_grace_ms;
	}
	if (term != qp->svc_term && holder) {
		peer = srnic_service_holder(eng, qp->svc_ipv4);
		if (peer)
			client_rebind(eng, qp, peer, term);
	}
	if (qp->svc_resync && now >= qp->svc_resync_at) {
		send_resync(eng, qp);
		qp->svc_resync_at = now + RESYNC_EVERY_US * eng->tsc_per_us;
	}
}

/* A member's QP is (on) or is no more (off) bound to a client: its
 * service's count, which the holder announces (failback=expire waits for
 * it to reach 0). */
static void bound(struct srnic_engine *eng, struct srnic_qp *qp, bool on)
{
	struct srnic_service *sv = srnic_service_find(eng->node, qp->svc_ipv4);

	if (!sv || qp->svc_bound == on)
		return;
	qp->svc_bound = on;
	if (on)
		__atomic_add_fetch(&sv->bound_by[eng->slot], 1,
				   __ATOMIC_RELEASE);
	else
		__atomic_sub_fetch(&sv->bound_by[eng->slot], 1,
				   __ATOMIC_RELEASE);
}

/* The program took its member's bound QP out of RTS (modify_qp): bound no
 * more, and nothing to tell it. */
void srnic_svc_qp_left(struct srnic_engine *eng, struct srnic_qp *qp)
{
	bound(eng, qp, false);
}

/* The program learns that its member's bound QP is done for: it parks a
 * fresh one on this event. */
static void member_drop(struct srnic_engine *eng, struct srnic_qp *qp)
{
	bound(eng, qp, false);
	eng->st->svc_qps_dropped++;
	srnic_qp_fatal_event(qp);
}

/* A member's bound QP that failed, or whose service went to another
 * holder. */
static void member_tick(struct srnic_engine *eng, struct srnic_qp *qp)
{
	const struct srnic_service *sv;

	/* A bound QP that left RTS and not by its program's move failed on
	 * its own: its replies to a client cut off ran out of retries, or
	 * the client's node restarted.  Its program, whose parked QP it was,
	 * would otherwise see only the completions in error and leave it so:
	 * the client's SVC_RESYNC after the next takeover then found no QP
	 * to bind (e2e/36's cut-group once lost every request after the
	 * heal, its resyncs dropped as qp_state). */
	if (qp->svc_bound && qp->q.state != SRNIC_QPS_RTS) {
		if (qp->q.state == SRNIC_QPS_ERR)
			member_drop(eng, qp);
		else
			bound(eng, qp, false);
		return;
	}

	/* (a UD QP of a slot binds to nobody: it takes the datagrams to the
	 * service while this node holds it) */
	if (qp->q.type != SRNIC_QPT_RC || qp->q.state != SRNIC_QPS_RTS)
		return;
	/* Still holding, in the term it was bound in: it stays.  (A holder
	 * that stepped down and took the service back at once, after a
	 * partition, holds it in a new term: its clients resync, and must
	 * find a fresh QP.) */
	sv = srnic_service_find(eng->node, qp->svc_ipv4);
	if (sv && __atomic_load_n(&sv->holding, __ATOMIC_ACQUIRE) &&
	    __atomic_load_n(&sv->term, __ATOMIC_ACQUIRE) == qp->svc_term)
		return;
	srnic_qp_to_error(eng, qp);
	member_drop(eng, qp);
}

void srnic_svc_qps_tick(struct srnic_engine *eng, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < eng->nsvc_qps; i++) {
		struct srnic_qp *qp = eng->svc_qps[i];

		if (qp->svc_slot)
			member_tick(eng, qp);
		else
			client_tick(eng, qp, now);
	}
}

void srnic_svc_resync_rx(struct srnic_engine *eng, struct srnic_qp *qp,
			 const struct srnic_pkt *pkt)
{
	struct srnic_pkt ack;
	struct srnic_peer *peer = NULL;
	unsigned n, i;

	if (!qp->svc_slot || !holding(eng, qp->svc_ipv4)) {
		eng->st->drops[SRNIC_DROP_NO_QP]++;
		return;
	}
	if (qp->q.state == SRNIC_QPS_RTS) {
		if (qp->at.dest_qpn != pkt->src_qpn ||
		    qp->peer_inc != pkt->src_inc ||
		    qp->svc_term != __atomic_load_n(
				&srnic_service_find(eng->node, qp->svc_ipv4)->term,
				__ATOMIC_ACQUIRE)) {
			eng->st->drops[SRNIC_DROP_QP_STATE]++;
			return;	/* another client's, or an older term's */
		}
	} else if (qp->q.state != SRNIC_QPS_INIT) {
		eng->st->drops[SRNIC_DROP_QP_STATE]++;
		return;
	} else {
		n = srnic_npeers(eng->node);
		for (i = 0; i < n && !peer; i++)
			if (__atomic_load_n(&eng->node->peer[i].inc,
					    __ATOMIC_ACQUIRE) == pkt->src_inc)
				peer = &eng->node->peer[i];
		if (!peer) {
			eng->st->drops[SRNIC_DROP_STALE_INC]++;
			return;
		}
		qp->peer = peer;
		qp->peer_inc = pkt->src_inc;
		qp->svc_term = __atomic_load_n(
			&srnic_service_find(eng->node, qp->svc_ipv4)->term,
			__ATOMIC_ACQUIRE);
		qp->at.dest_qpn = pkt->src_qpn;
		qp->at.rq_psn = pkt->msn;
		qp->rcv.exp_msn = pkt->msn;
		qp->rcv.exp_ssn = pkt->sack_msn;
		qp->at.sq_psn = pkt->nak_msn;
		qp->snd.next_msn = pkt->nak_msn;
		qp->snd.uc_acked = pkt->nak_msn;
		qp->snd.next_ssn = pkt->sack_first;
		qp->at.path_shift = pkt->credit < SRNIC_MIN_STRIDE_SHIFT ||
						    pkt->credit > SRNIC_MAX_STRIDE_SHIFT
					    ? SRNIC_MIN_STRIDE_SHIFT
					    : (uint8_t)pkt->credit;
		qp->at.max_rd_atomic = qp->at.max_dest_rd_atomic = 16;
		qp->at.timeout_tsc = srnic_timeout_tsc(eng, 14);
		qp->at.retry_cnt = 7;
		qp->at.rnr_retry = 7;
		qp->at.min_rnr_timer = 12;
		srnic_fc_reset(qp);
		/* (a client binding while the service is frozen here takes
		 * nothing until the next holder) */
		qp->svc_frozen = __atomic_load_n(
			&srnic_service_find(eng->node, qp->svc_ipv4)->frozen,
			__ATOMIC_ACQUIRE);
		__atomic_store_n(&qp->q.state, SRNIC_QPS_RTS, __ATOMIC_RELEASE);
		srnic_qp_activate(eng, qp);
		eng->st->svc_binds++;
		bound(eng, qp, true);
		srnic_event(SRNIC_EV_COMM_EST, qp->q.handle);
	}
	srnic_qp_pkt_init(&ack, eng, qp, SRNIC_OP_SVC_RESYNC_ACK, pkt->msn);
	send_to_peer(eng, qp, &ack);
}

void srnic_svc_resync_ack_rx(struct srnic_engine *eng, struct srnic_qp *qp,
			     const struct srnic_pkt *pkt)
{
	if (!qp->svc_resync || pkt->src_inc != qp->peer_inc ||
	    pkt->src_qpn != qp->at.dest_qpn)
		return;		/* late, or an old holder's */
	qp->svc_resync = 0;
	srnic_qp_activate(eng, qp);
}

void srnic_svc_qp_track(struct srnic_engine *eng, struct srnic_qp *qp,
			bool on)
{
	uint32_t i;

	if (!on)
		bound(eng, qp, false);	/* (destroyed or reset) */
	for (i = 0; i < eng->nsvc_qps; i++)
		if (eng->svc_qps[i] == qp) {
			if (!on)
				eng->svc_qps[i] = eng->svc_qps[--eng->nsvc_qps];
			return;
		}
	if (on && eng->nsvc_qps < SRNIC_SVC_QPS)
		eng->svc_qps[eng->nsvc_qps++] = qp;
}

/* ---- failback=manual: freeze and hand over (application threads) ---- */

/* Every bound QP of the service frozen (on) or thawed; a frozen one's
 * ACK goes now, so that what it took is acknowledged before the QP ends
 * at the hand-over. */
static void call_freeze(struct srnic_engine *eng, struct srnic_call *c)
{
	uint32_t svc = (uint32_t)(uintptr_t)c->arg2, i;
	bool on = c->arg != NULL;
	int n = 0;

	for (i = 0; i < eng->nsvc_qps; i++) {
		struct srnic_qp *qp = eng->svc_qps[i];

		if (qp->svc_slot && qp->svc_ipv4 == svc && qp->svc_bound) {
			qp->svc_frozen = on;
			if (on)
				srnic_qp_want_ack(eng, qp);
			n++;
		}
	}
	c->result = n;
}

/* The service of svc_ipv4 if this node is a member holding it. */
static struct srnic_service *held_here(struct srnic_engine *eng,
				       uint32_t svc_ipv4, int *rc)
{
	struct srnic_service *sv = srnic_service_find(eng->node, svc_ipv4);

	*rc = !sv || sv->mine < 0 ? -ENOENT
	      : !__atomic_load_n(&sv->holding, __ATOMIC_ACQUIRE) ? -EINVAL
								  : 0;
	return *rc ? NULL : sv;
}

int srnic_engine_svc_freeze(struct srnic_engine *eng, uint32_t svc_ipv4,
			    bool on)
{
	struct srnic_call c = {.fn = call_freeze, .arg = on ? eng : NULL,
			       .arg2 = (const void *)(uintptr_t)svc_ipv4};
	struct srnic_service *sv = held_here(eng, svc_ipv4, &c.result);

	if (!sv)
		return c.result;
	__atomic_store_n(&sv->frozen, on, __ATOMIC_RELEASE);
	srnic_engine_call(eng, &c);
	return c.result;
}

#define HANDOVER_WAIT_MS 1000

int srnic_engine_svc_handover(struct srnic_engine *eng, uint32_t svc_ipv4)
{
	uint64_t until = srnic_ms() + HANDOVER_WAIT_MS;
	struct srnic_service *sv;
	int rc;

	sv = held_here(eng, svc_ipv4, &rc);
	if (!sv)
		return rc;
	if (!srnic_service_better_live(eng, sv))
		return -EAGAIN;	/* nobody to take it */
	__atomic_store_n(&sv->handover, 1, __ATOMIC_RELEASE);
	/* (the control core lets go of it at its next tick) */
	while (__atomic_load_n(&sv->holding, __ATOMIC_ACQUIRE) &&
	       srnic_ms() < until)
		usleep(1000);
	if (!__atomic_load_n(&sv->holding, __ATOMIC_ACQUIRE))
		return 0;
	/* (taken back unless the control core took it meanwhile) */
	if (__atomic_compare_exchange_n(&sv->handover, &(uint8_t){1}, 0, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return -ETIMEDOUT;
	return 0;
}
