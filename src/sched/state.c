/* SPDX-License-Identifier: MIT */
/*
 * A QP's ways out of its working states, as any role (or an engine call)
 * takes it there.  The move itself is only QP state: each role does its
 * part on the QP's next turn (datapath.c, run_qp), as it does all its
 * work, so no role calls another.  Datapath only.
 */
#include "srnic_port.h"
#include "srnic_sched.h"

void srnic_qp_to_error(struct srnic_engine *eng, struct srnic_qp *qp)
{
	bool was_err = qp->q.state == SRNIC_QPS_ERR;

	if (!was_err) {
		/* What landed is acknowledged still: a deferred ACK goes on
		 * the QP's next turn, before the responder forgets its
		 * messages (on the ACK lists it is now unwanted: a QP in
		 * error sends only NAKs from there). */
		qp->ack_final = (qp->ack_lazy || qp->on_ack) &&
				qp->q.state >= SRNIC_QPS_RTR &&
				qp->rcv.ack_syndrome == SRNIC_ACK_OK;
		qp->ack_lazy = 0;
		qp->err_new = 1;
		/* Its WQEs are about to complete, and the program may then
		 * reuse their buffers: frames still reading them get their
		 * own copies. */
		srnic_ports_settle(eng);
	}
	__atomic_store_n(&qp->q.state, SRNIC_QPS_ERR, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);	/* see srnic_post_recv */
	srnic_qp_activate(eng, qp);
	/* It takes nothing more from its SRQ (verbs' LAST_WQE_REACHED: the
	 * program may now destroy it without losing a receive). */
	if (qp->q.srq && !was_err)
		srnic_event(SRNIC_EV_QP_LAST_WQE, qp->q.handle);
}

void srnic_qp_fatal_event(struct srnic_qp *qp)
{
	/* (a member's bound QP whose client's node restarted: integration
	 * tells it, and so would the service's tick) */
	if (!qp->fatal_told)
		srnic_event(SRNIC_EV_QP_FATAL, qp->q.handle);
	qp->fatal_told = 1;
}

/* Send queue error (UC, UD): what is posted, and what will be until the
 * QP goes back to RTS, completes flushed on its next turn; receiving goes
 * on. */
void srnic_qp_to_sqe(struct srnic_engine *eng, struct srnic_qp *qp)
{
	__atomic_store_n(&qp->q.state, SRNIC_QPS_SQE, __ATOMIC_RELEASE);
	srnic_qp_activate(eng, qp);
}
