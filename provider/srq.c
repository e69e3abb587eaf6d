/* SPDX-License-Identifier: MIT */
/*
 * Shared receive queues: creation, limits, posting.  Posting writes the
 * SRQ's ring under its lock; the engine moves WQEs from there to the QPs
 * that need them (src/responder), so a post never rings a doorbell: a
 * SEND that found the SRQ empty was refused with an RNR NAK and comes
 * again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "srnic_provider.h"

/* An SRQ of ctx; with xrcd, an XRC SRQ of that domain whose receives
 * complete into cq and whose messages' memory is pd's. */
static struct srnic_srq_v *srq_new(struct srnic_context *ctx,
				   struct ibv_srq_attr *attr, struct ibv_pd *pd,
				   struct ibv_xrcd *xrcd, struct ibv_cq *cq)
{
	struct srnic_srq_v *ssrq;

	if (!attr->max_wr || attr->max_wr > SRNIC_MAX_QP_WR ||
	    !attr->max_sge || attr->max_sge > SRNIC_MAX_SGE) {
		errno = EINVAL;
		return NULL;
	}
	if (!srnic_ctx_start(ctx))
		return NULL;
	ssrq = calloc(1, sizeof(*ssrq));
	if (!ssrq) {
		errno = ENOMEM;
		return NULL;
	}
	ssrq->srq = xrcd ? srnic_engine_create_xrc_srq(
				   ctx->eng, attr->max_wr, attr->max_sge,
				   srnic_xrcd_handle(xrcd), to_spd(pd)->handle,
				   to_scq(cq)->cq)
			 : srnic_engine_create_srq(ctx->eng, attr->max_wr,
						   attr->max_sge);
	if (!ssrq->srq) {
		free(ssrq);
		errno = ENOMEM;
		return NULL;
	}
	if (xrcd) {
		ssrq->xrcd = xrcd;
		srnic_xrcd_use(xrcd, 1);
	}
	ssrq->srq->handle = ssrq;
	ssrq->ctx = ctx;
	/* What it really holds; the limit is not armed at creation. */
	attr->max_wr = ssrq->srq->mask + 1;
	ssrq->max_wr = attr->max_wr;
	ssrq->max_sge = attr->max_sge;
	return ssrq;
}

struct ibv_srq *srnic_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr)
{
	struct srnic_srq_v *ssrq = srq_new(to_sctx(pd->context), &attr->attr,
					   pd, NULL, NULL);

	return ssrq ? &ssrq->ibv_srq : NULL;
}

/*
 * ibv_create_srq_ex: a basic SRQ, or an XRC SRQ (a PD, a domain and a CQ
 * of this context).  libibverbs hands the basic kind with nothing else to
 * create_srq; what comes here fills its own ibv_srq.
 */
struct ibv_srq *srnic_create_srq_ex(struct ibv_context *context,
				    struct ibv_srq_init_attr_ex *attr)
{
	uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			 IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	enum ibv_srq_type type = attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE
					 ? attr->srq_type
					 : IBV_SRQT_BASIC;
	struct ibv_pd *pd = attr->comp_mask & IBV_SRQ_INIT_ATTR_PD ? attr->pd
								   : NULL;
	struct srnic_srq_v *ssrq;
	struct ibv_srq *srq;

	if ((attr->comp_mask & ~known) ||
	    (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC)) {
		errno = EOPNOTSUPP;	/* tag matching among them */
		return NULL;
	}
	if (!pd || pd->context != context ||
	    (type == IBV_SRQT_XRC &&
	     (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !attr->xrcd ||
	      attr->xrcd->context != context ||
	      !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->cq ||
	      attr->cq->context != context))) {
		errno = EINVAL;
		return NULL;
	}
	ssrq = srq_new(to_sctx(context), &attr->attr, pd,
		       type == IBV_SRQT_XRC ? attr->xrcd : NULL,
		       type == IBV_SRQT_XRC ? attr->cq : NULL);
	if (!ssrq)
		return NULL;
	srq = &ssrq->ibv_srq;
	srq->context = context;
	srq->srq_context = attr->srq_context;
	srq->pd = pd;
	srq->events_completed = 0;
	pthread_mutex_init(&srq->mutex, NULL);
	pthread_cond_init(&srq->cond, NULL);
	return srq;
}

/* The number XRC senders name an XRC SRQ by. */
int srnic_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct srnic_srq_v *ssrq = to_ssrq(ibsrq);

	if (!ssrq->xrcd)
		return EINVAL;
	*srq_num = ssrq->srq->srqn;
	return 0;
}

int srnic_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int mask)
{
	struct srnic_srq_v *ssrq = to_ssrq(ibsrq);

	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	if (mask & IBV_SRQ_MAX_WR)
		return EINVAL;	/* no resizing */
	if ((mask & IBV_SRQ_LIMIT) && attr->srq_limit > ssrq->max_wr)
		return EINVAL;
	if (mask & IBV_SRQ_LIMIT)
		srnic_engine_arm_srq(ssrq->srq, attr->srq_limit);
	return 0;
}

int srnic_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct srnic_srq_v *ssrq = to_ssrq(ibsrq);

	attr->max_wr = ssrq->max_wr;
	attr->max_sge = ssrq->max_sge;
	attr->srq_limit = __atomic_load_n(&ssrq->srq->limit, __ATOMIC_ACQUIRE);
	return 0;
}

int srnic_destroy_srq(struct ibv_srq *ibsrq)
{
	struct srnic_srq_v *ssrq = to_ssrq(ibsrq);
	int rc = srnic_engine_destroy_srq(ssrq->ctx->eng, ssrq->srq);

	if (rc)
		return -rc;
	if (ssrq->xrcd)
		srnic_xrcd_use(ssrq->xrcd, -1);
	/* As for a QP: an unacknowledged event still names it. */
	pthread_mutex_lock(&ibsrq->mutex);
	if (ibsrq->events_completed != ssrq->events_reported) {
		pthread_mutex_unlock(&ibsrq->mutex);
		srnic_keep_until_close(ssrq->ctx, ssrq);
		return 0;
	}
	pthread_mutex_unlock(&ibsrq->mutex);
	free(ssrq);
	return 0;
}

int srnic_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad)
{
	struct srnic_srq *srq = to_ssrq(ibsrq)->srq;
	uint32_t prod;
	int rc = 0;

	pthread_spin_lock(&srq->lock);
	prod = srq->prod;
	for (; wr; wr = wr->next) {
		if (prod - __atomic_load_n(&srq->cons, __ATOMIC_ACQUIRE) >
		    srq->mask) {
			rc = ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > srq->max_sge) {
			rc = EINVAL;
			break;
		}
		srnic_rwqe_fill(&srq->rq[prod & srq->mask], wr);
		prod++;
	}
	if (rc && bad)
		*bad = wr;
	__atomic_store_n(&srq->prod, prod, __ATOMIC_RELEASE);
	pthread_spin_unlock(&srq->lock);
	return rc;
}
