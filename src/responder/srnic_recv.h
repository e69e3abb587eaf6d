/* SPDX-License-Identifier: MIT */
/*
 * The receive side of a QP as the responder's two halves share it: the
 * connected one (rx.c and start.c), which maps each message to a receive WQE by
 * its receive sequence number, and the datagram one (datagram.c), which
 * takes the next WQE for each datagram.
 */
#ifndef SRNIC_RECV_H
#define SRNIC_RECV_H

#include "srnic_responder.h"

/* The receive WQE for receive sequence ssn (exp_ssn is rq_comp's). */
static inline struct srnic_rwqe *srnic_recv_wqe(struct srnic_qp *qp,
						uint32_t ssn)
{
	return &qp->q.rq[(qp->q.rq_comp + (ssn - qp->rcv.exp_ssn)) & qp->q.rq_mask];
}

/* The oldest receive WQE is used up.  The application reads rq_comp to
 * know which slots are free, so this comes before its completion shows. */
static inline void srnic_rq_consumed(struct srnic_qp *qp)
{
	__atomic_store_n(&qp->q.rq_comp, qp->q.rq_comp + 1, __ATOMIC_RELEASE);
	qp->rcv.exp_ssn++;
}

/* A QP on an SRQ: move WQEs from the SRQ into the QP's own ring until the
 * one for ssn is there, or the SRQ is empty (recv.c). */
void srnic_srq_pull(struct srnic_qp *qp, uint32_t ssn);

/* Receive WQEs posted and not yet used. */
static inline uint32_t srnic_rq_posted(const struct srnic_qp *qp)
{
	return __atomic_load_n(&qp->q.rq_prod, __ATOMIC_ACQUIRE) - qp->q.rq_comp;
}

#endif
