/* SPDX-License-Identifier: MIT */
/*
 * Conditional queues on the datapath (seed 002 l.372-390; docs/
 * conditional-rdma.md): where the completer and the requester meet for
 * conditional RDMA.  The completer counts each component WQE as it
 * completes (srnic_condq_count); the requester, at a conditional WQE,
 * asks whether its condition holds and, if not, parks the QP on the
 * queue (srnic_condq_ready); a count that makes a parked QP's condition
 * hold puts it back on the active list, so the conditional WQE starts in
 * the same iteration as the completion that allowed it.  Datapath only.
 */
#include "srnic_sched.h"

static struct srnic_condq_state *condq_of(struct srnic_engine *eng, uint16_t id)
{
	struct srnic_condq_state *q = &eng->condq[srnic_condq_index(id)];

	return id && q->id == id ? q : NULL;
}

/* Wake the QPs parked on q whose condition holds now (all of them with
 * all: the queue goes). */
static void wake(struct srnic_engine *eng, struct srnic_condq_state *q, bool all)
{
	struct srnic_qp **pp = &q->waiters, *qp;

	while ((qp = *pp)) {
		if (!all && !srnic_condq_holds(q, qp->cond_op, qp->cond_value)) {
			pp = &qp->cond_next;
			continue;
		}
		*pp = qp->cond_next;
		qp->cond_next = NULL;
		qp->cond_wait = 0;
		srnic_qp_activate(eng, qp);
	}
}

void srnic_condq_count(struct srnic_engine *eng, uint16_t id, bool ok)
{
	struct srnic_condq_state *q = condq_of(eng, id);

	if (!q)
		return;	/* (destroyed since the component was posted) */
	if (ok)
		__atomic_store_n(&q->count, q->count + 1, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&q->failed, q->failed + 1, __ATOMIC_RELEASE);
	if (q->waiters)
		wake(eng, q, false);
}

bool srnic_condq_ready(struct srnic_engine *eng, struct srnic_qp *qp,
		       const struct srnic_swqe *w)
{
	struct srnic_condq_state *q = condq_of(eng, w->cond.q);

	if (!q) {
		/* Its queue is gone: the WQE fails (the QP's error flushes
		 * the rest), as a destroy fails the WQEs that wait on it. */
		srnic_qp_to_error(eng, qp);
		return false;
	}
	/* (parked on another queue still: a WQE that waited there was
	 * flushed, and the QP went back to RTS without a reset) */
	if (qp->cond_wait && qp->cond_wait != w->cond.q)
		srnic_condq_forget_qp(eng, qp);
	if (srnic_condq_holds(q, w->cond.op, w->cond.value)) {
		/* (a QP left on the list would be failed by the queue's
		 * destroy, though nothing of it waits there any more) */
		if (qp->cond_wait)
			srnic_condq_forget_qp(eng, qp);
		return true;
	}
	if (!qp->cond_wait) {
		qp->cond_wait = w->cond.q;
		qp->cond_next = q->waiters;
		q->waiters = qp;
	}
	qp->cond_op = w->cond.op;
	qp->cond_value = w->cond.value;
	return false;
}

void srnic_condq_fired(struct srnic_engine *eng, uint16_t id)
{
	struct srnic_condq_state *q = condq_of(eng, id);

	if (q)
		__atomic_store_n(&q->fired, q->fired + 1, __ATOMIC_RELAXED);
}

void srnic_condq_store(struct srnic_engine *eng, uint16_t id, uint64_t count)
{
	struct srnic_condq_state *q = condq_of(eng, id);

	if (!q)
		return;
	__atomic_store_n(&q->count, count, __ATOMIC_RELEASE);
	__atomic_store_n(&q->failed, 0, __ATOMIC_RELEASE);
	wake(eng, q, false);
}

void srnic_condq_retire(struct srnic_engine *eng, uint16_t id)
{
	struct srnic_condq_state *q = condq_of(eng, id);
	struct srnic_qp *qp;

	if (!q)
		return;
	/* What waits on it will never start: each such QP fails, and its
	 * WQEs complete flushed (in its turn, which wake gives it). */
	for (qp = q->waiters; qp; qp = qp->cond_next)
		srnic_qp_to_error(eng, qp);
	wake(eng, q, true);
	q->id = 0;
}

void srnic_condq_forget_qp(struct srnic_engine *eng, struct srnic_qp *qp)
{
	struct srnic_condq_state *q = condq_of(eng, qp->cond_wait);
	struct srnic_qp **pp;

	if (!q)
		return;
	for (pp = &q->waiters; *pp; pp = &(*pp)->cond_next)
		if (*pp == qp) {
			*pp = qp->cond_next;
			break;
		}
	qp->cond_wait = 0;
	qp->cond_next = NULL;
}
