/* SPDX-License-Identifier: MIT */
/*
 * The datapath's QP lists, as the scheduler (sched.c) and the loop
 * (datapath.c) both walk them: FIFOs linked through each QP's
 * fifo_next[id], so a QP is on each list at most once and joining or
 * leaving costs no allocation.  Datapath only.
 */
#ifndef SRNIC_SCHED_H
#define SRNIC_SCHED_H

#include "srnic_engine_state.h"
#include "srnic_event.h"

static inline void srnic_fifo_push(struct srnic_qp_fifo *f,
				   struct srnic_qp *qp,
				   enum srnic_qp_fifo_id id)
{
	qp->fifo_next[id] = NULL;
	if (f->tail)
		f->tail->fifo_next[id] = qp;
	else
		f->head = qp;
	f->tail = qp;
}

static inline struct srnic_qp *srnic_fifo_pop(struct srnic_qp_fifo *f,
					      enum srnic_qp_fifo_id id)
{
	struct srnic_qp *qp = f->head;

	if (qp) {
		f->head = qp->fifo_next[id];
		if (!f->head)
			f->tail = NULL;
	}
	return qp;
}

/* Take qp out of f, wherever it is (a walk: QP teardown only). */
static inline void srnic_fifo_remove(struct srnic_qp_fifo *f,
				     struct srnic_qp *qp,
				     enum srnic_qp_fifo_id id)
{
	struct srnic_qp *prev = NULL, *q;

	for (q = f->head; q && q != qp; q = q->fifo_next[id])
		prev = q;
	if (!q)
		return;
	if (prev)
		prev->fifo_next[id] = q->fifo_next[id];
	else
		f->head = q->fifo_next[id];
	if (f->tail == q)
		f->tail = prev;
}

/* Whether qp's ACK may still go (a QP the responder has just taken to the
 * error state still owes its peer the NAK that says why). */
static inline bool srnic_qp_ack_wanted(const struct srnic_qp *qp)
{
	return qp->q.state >= SRNIC_QPS_RTR &&
	       (qp->q.state != SRNIC_QPS_ERR ||
		qp->rcv.ack_syndrome != SRNIC_ACK_OK);
}

/* sched.c: the datapath's lists, which the roles join to get a turn */
void srnic_qp_activate(struct srnic_engine *eng, struct srnic_qp *qp);
/* An ACK (NAK, SACK, credit) to send at the end of this iteration. */
void srnic_qp_want_ack(struct srnic_engine *eng, struct srnic_qp *qp);
/* A plain ACK of a finished message: it may wait ack_delay_us for a packet
 * of this QP's own to follow (one each way per round trip of a ping-pong,
 * and fewer ACKs under a stream). */
void srnic_qp_want_ack_lazy(struct srnic_engine *eng, struct srnic_qp *qp);
void srnic_qp_cq_full(struct srnic_engine *eng, struct srnic_qp *qp);
void srnic_qp_timer_on(struct srnic_engine *eng, struct srnic_qp *qp);
void srnic_qp_timer_off(struct srnic_engine *eng, struct srnic_qp *qp);
/* The live QP of a number (NULL: none, or the entry holds another
 * generation's), and the live QP in a table entry whatever its number. */
struct srnic_qp *srnic_qp_lookup(struct srnic_engine *eng, uint32_t qpn);
struct srnic_qp *srnic_qp_at(struct srnic_engine *eng, uint32_t idx);
/* condq.c: conditional queues (conditional RDMA).  The completer counts
 * a component WQE's completion (ok: a success); the requester asks
 * whether a conditional WQE may start, which parks its QP on the queue
 * until it may, and says when it started one (fired); engine calls set
 * the counter, destroy the queue (its parked QPs fail) and take a QP
 * going away off the queue. */
void srnic_condq_count(struct srnic_engine *eng, uint16_t id, bool ok);
bool srnic_condq_ready(struct srnic_engine *eng, struct srnic_qp *qp,
		       const struct srnic_swqe *w);
void srnic_condq_fired(struct srnic_engine *eng, uint16_t id);
void srnic_condq_store(struct srnic_engine *eng, uint16_t id, uint64_t count);
void srnic_condq_retire(struct srnic_engine *eng, uint16_t id);
void srnic_condq_forget_qp(struct srnic_engine *eng, struct srnic_qp *qp);
/* state.c: a QP taken to the error state (or, UC and UD, its send queue):
 * marked, and given a turn on which its roles do their parts */
void srnic_qp_to_error(struct srnic_engine *eng, struct srnic_qp *qp);
void srnic_qp_to_sqe(struct srnic_engine *eng, struct srnic_qp *qp);
/* ... and its program told (IBV_EVENT_QP_FATAL), once a QP's life */
void srnic_qp_fatal_event(struct srnic_qp *qp);
/* event.c: report an asynchronous event (srnic_engine_on_event) */
void srnic_event(enum srnic_event ev, void *handle);

#endif
