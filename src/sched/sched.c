/* SPDX-License-Identifier: MIT */
/*
 * The scheduler: how a role asks the datapath for a turn.  A QP with packets to send or completions to make goes on
 * the active list, one owing an ACK on the ACK list (at once) or the lazy
 * list (after ack_delay_us), one with something to time on the timer
 * list; the loop (datapath.c) runs what the lists hold.  And the QP table,
 * by number.  Datapath only.
 */
#include "srnic_sched.h"

void srnic_qp_activate(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (qp->on_active)
		return;
	qp->on_active = 1;
	srnic_fifo_push(&eng->active, qp, SRNIC_FIFO_ACTIVE);
}

/* A completion found its CQ full: keep the QP running until the
 * application polls room into it; nothing is dropped meanwhile. */
void srnic_qp_cq_full(struct srnic_engine *eng, struct srnic_qp *qp)
{
	qp->cq_wait = 1;
	srnic_qp_activate(eng, qp);
}

void srnic_qp_want_ack(struct srnic_engine *eng, struct srnic_qp *qp)
{
	qp->ack_lazy = 0;	/* (a deferred one goes with it) */
	if (qp->on_ack)
		return;
	qp->on_ack = 1;
	qp->ack_next = eng->ack_head;
	eng->ack_head = qp;
}

void srnic_qp_want_ack_lazy(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (qp->on_ack || qp->ack_lazy)
		return;	/* one is pending already: it covers this message */
	if (!eng->ack_delay_tsc) {
		srnic_qp_want_ack(eng, qp);
		return;
	}
	qp->ack_lazy = 1;
	qp->ack_at = eng->now + eng->ack_delay_tsc;
	/* Still queued from an earlier deferral (sent early since): it
	 * keeps its place, and holds the ones behind it at most one delay
	 * longer. */
	if (qp->on_lazy)
		return;
	qp->on_lazy = 1;
	srnic_fifo_push(&eng->lazy, qp, SRNIC_FIFO_LAZY);
}

void srnic_qp_timer_on(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (qp->on_timer)
		return;
	qp->on_timer = 1;
	qp->timer_prev = NULL;
	qp->timer_next = eng->timer_head;
	if (eng->timer_head)
		eng->timer_head->timer_prev = qp;
	eng->timer_head = qp;
}

void srnic_qp_timer_off(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (!qp->on_timer)
		return;
	qp->on_timer = 0;
	if (eng->timer_cursor == qp)
		eng->timer_cursor = qp->timer_next;
	if (qp->timer_prev)
		qp->timer_prev->timer_next = qp->timer_next;
	else
		eng->timer_head = qp->timer_next;
	if (qp->timer_next)
		qp->timer_next->timer_prev = qp->timer_prev;
	qp->timer_next = qp->timer_prev = NULL;
}

struct srnic_qp *srnic_qp_at(struct srnic_engine *eng, uint32_t idx)
{
	struct srnic_qp *qp;

	if (idx >= SRNIC_MAX_QP)
		return NULL;
	qp = __atomic_load_n(&eng->qp_tab[idx], __ATOMIC_ACQUIRE);
	return qp && !qp->destroyed ? qp : NULL;
}

struct srnic_qp *srnic_qp_lookup(struct srnic_engine *eng, uint32_t qpn)
{
	struct srnic_qp *qp = srnic_qp_at(eng, srnic_qpn_index(qpn));

	return qp && qp->q.qpn == qpn ? qp : NULL;
}
