/* SPDX-License-Identifier: MIT */
/*
 * Responder, receive WQEs (datapath thread): which one a message takes (a
 * QP's own ring, an SRQ's, an XRC target's SRQ of the message's choice),
 * its completion queue, and the flush of those left when the QP fails.
 */
#include <string.h>

#include "responder_internal.h"

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
bool resp_xrc_take(struct srnic_qp *qp, struct srnic_srq *srq, uint32_t ssn)
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
struct srnic_cq *resp_recv_cq_of(const struct srnic_qp *qp)
{
	if (!qp->xrc_rq_srq)
		return qp->q.recv_cq;
	return qp->xrc_rq_srq[qp->q.rq_comp & qp->q.rq_mask]
		       ? qp->xrc_rq_srq[qp->q.rq_comp & qp->q.rq_mask]->cq
		       : NULL;
}

/* The receive whose turn it is is used up (an XRC target's place in the
 * ring empties: its ring is the datapath's alone, rq_prod kept level). */
void resp_rq_done(struct srnic_qp *qp)
{
	if (qp->xrc_rq_srq) {
		qp->xrc_rq_srq[qp->q.rq_comp & qp->q.rq_mask] = NULL;
		qp->q.rq_prod++;
	}
	srnic_rq_consumed(qp);
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
		srnic_rwqe_told(&qp->q.rq[i], c, srq->cq);
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
		srnic_rwqe_told(&qp->q.rq[qp->q.rq_comp & qp->q.rq_mask], c,
				cq);
		srnic_rq_consumed(qp);
		srnic_cq_publish(cq);
	}
	(void)eng;
}
