/* SPDX-License-Identifier: MIT */
/*
 * Conditional RDMA's verbs (include/srnic.h; docs/conditional-rdma.md),
 * on the application's threads: a conditional queue is the engine's (an
 * id in its table, sched/condq.c counts and wakes), and posting marks each
 * WQE as a component of it or as conditional on it; the datapath does the
 * rest.
 */
#include <errno.h>
#include <stdlib.h>

#include "srnic.h"
#include "srnic_provider.h"
#include "srnic_post.h"


struct srnic_condq {
	struct srnic_context *ctx;
	uint32_t pd;		/* the engine's PD its QPs must be of */
	uint16_t id;
};

SRNIC_API struct srnic_condq *srnic_condq_create(struct ibv_pd *pd)
{
	struct srnic_context *ctx;
	struct srnic_condq *q;
	int id;

	if (!pd || !srnic_context_ours(pd->context)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	ctx = to_sctx(pd->context);
	if (!srnic_ctx_start(ctx))
		return NULL;
	q = calloc(1, sizeof(*q));
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	id = srnic_engine_condq_create(ctx->eng);
	if (id < 0) {
		free(q);
		errno = -id;
		return NULL;
	}
	q->ctx = ctx;
	q->pd = to_spd(pd)->handle;
	q->id = (uint16_t)id;
	return q;
}

SRNIC_API int srnic_condq_destroy(struct srnic_condq *q)
{
	if (!q)
		return EINVAL;
	srnic_engine_condq_destroy(q->ctx->eng, q->id);
	free(q);
	return 0;
}

SRNIC_API int srnic_condq_set(struct srnic_condq *q, uint64_t count)
{
	if (!q)
		return EINVAL;
	srnic_engine_condq_set(q->ctx->eng, q->id, count);
	return 0;
}

SRNIC_API int srnic_condq_query(struct srnic_condq *q,
				struct srnic_condq_attr *attr)
{
	uint64_t v[3];

	if (!q || !attr)
		return EINVAL;
	srnic_engine_condq_query(q->ctx->eng, q->id, v);
	attr->count = v[0];
	attr->failed = v[1];
	attr->fired = v[2];
	return 0;
}

/* Whether qp may post for q: an RC or UC QP of this context, of q's PD. */
static int qp_of_queue(struct ibv_qp *qp, const struct srnic_condq *q)
{
	if (!qp || !srnic_context_ours(qp->context))
		return EOPNOTSUPP;
	if (!q || to_sctx(qp->context) != q->ctx ||
	    (qp->qp_type != IBV_QPT_RC && qp->qp_type != IBV_QPT_UC) ||
	    to_spd(qp->pd)->handle != q->pd)
		return EINVAL;
	return 0;
}

SRNIC_API int srnic_post_send_counted(struct ibv_qp *qp,
				      struct ibv_send_wr *wr,
				      struct srnic_condq *q,
				      struct ibv_send_wr **bad_wr)
{
	int rc = qp_of_queue(qp, q);

	if (rc) {
		if (bad_wr)
			*bad_wr = wr;
		return rc;
	}
	return srnic_post_send_cond(qp, wr, bad_wr,
				    &(struct srnic_post_cond){
					    .flags = SRNIC_WR_COUNTED,
					    .q = q->id});
}

SRNIC_API int srnic_post_cond(struct ibv_qp *qp, struct ibv_send_wr *wr,
			      struct srnic_condq *q, enum srnic_cond_op op,
			      uint64_t value, struct ibv_send_wr **bad_wr)
{
	int rc = qp_of_queue(qp, q);

	if (!rc && op != SRNIC_COND_COUNT_GE && op != SRNIC_COND_FAILED_GE)
		rc = EINVAL;
	if (rc) {
		if (bad_wr)
			*bad_wr = wr;
		return rc;
	}
	return srnic_post_send_cond(qp, wr, bad_wr,
				    &(struct srnic_post_cond){
					    .flags = SRNIC_WR_COND,
					    .q = q->id, .op = (uint8_t)op,
					    .value = value});
}
