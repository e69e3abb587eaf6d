/* SPDX-License-Identifier: MIT */
/*
 * srnic's own verbs (include/srnic.h), on the application's threads: the
 * calls a program links from libsrnic, which is this provider, so they
 * reach the objects libibverbs made through it.  Each checks first that
 * its object is a srnic device's (EOPNOTSUPP for another's), as mlx5dv
 * and efadv do.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "srnic.h"
#include "srnic_provider.h"
#include "srnic_post.h"

/* Nodes a group can have: every peer the engine knows. */
#define SRNIC_MAX_GROUP_MEMBERS 64

SRNIC_API bool srnic_is_srnic_device(struct ibv_device *device)
{
	return device && srnic_device_is_ours(device);
}

SRNIC_API int srnic_query_device(struct ibv_context *context,
				 struct srnic_device_attr *attr)
{
	struct srnic_context *ctx;
	struct srnic_engine_desc d = {0};
	uint64_t asked;

	if (!srnic_context_ours(context))
		return EOPNOTSUPP;
	asked = attr->comp_mask;
	if (asked & ~(uint64_t)SRNIC_DEVICE_ATTR_IPV6)
		return EINVAL;
	ctx = to_sctx(context);
	/* (the parts past dev_ports only where the caller asked for them:
	 * an older caller's struct ends there) */
	memset(attr, 0, asked ? sizeof(*attr)
			      : offsetof(struct srnic_device_attr, has_ipv6));
	attr->comp_mask = asked;
	if (asked & SRNIC_DEVICE_ATTR_IPV6) {
		attr->has_ipv6 = (uint32_t)ctx->cfg.has_ipv6;
		memcpy(attr->ipv6, ctx->cfg.ipv6, 16);
	}
	snprintf(attr->node, sizeof(attr->node), "%s", ctx->cfg.node);
	attr->ipv4 = ctx->cfg.ipv4;
	attr->nports = ctx->cfg.nports;
	attr->mtu = ctx->cfg.mtu;
	if (ctx->eng)
		srnic_engine_describe(ctx->eng, &d);
	attr->ports_up = srnic_ctx_ports_up(ctx);
	attr->device = ctx->dev;
	attr->ndev = ctx->cfg.ndev;
	attr->dev_ports = srnic_ctx_ports(ctx);
	attr->running = d.running;
	attr->attached = d.attached;
	attr->slot = d.slot;
	return 0;
}

/* ---- multicast and broadcast RDMA WRITE ---- */

SRNIC_API struct ibv_mr *srnic_reg_mr_group(struct ibv_pd *pd, void *addr,
					    size_t length, int access,
					    unsigned group)
{
	struct srnic_context *ctx;
	struct ibv_mr *mr;
	int rc;

	if (!pd || !srnic_context_ours(pd->context)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (group >= SRNIC_MAX_GROUPS || !(access & IBV_ACCESS_REMOTE_WRITE)) {
		errno = EINVAL;
		return NULL;
	}
	ctx = to_sctx(pd->context);
	/* (a member places the group's packets: its datapath must run) */
	if (!srnic_ctx_start(ctx))
		return NULL;
	mr = ibv_reg_mr(pd, addr, length, access);
	if (!mr)
		return NULL;
	rc = srnic_engine_group_region(ctx->eng, group, mr->lkey,
				       to_spd(pd)->handle, addr, length);
	if (rc) {
		ibv_dereg_mr(mr);
		errno = -rc;
		return NULL;
	}
	return mr;
}

SRNIC_API int srnic_group_notify(struct ibv_mr *mr, struct ibv_cq *cq)
{
	struct srnic_context *ctx;

	if (!mr || !srnic_context_ours(mr->context) ||
	    (cq && !srnic_context_ours(cq->context)))
		return EOPNOTSUPP;
	ctx = to_sctx(mr->context);
	if (!ctx->eng || (cq && to_sctx(cq->context) != ctx))
		return EINVAL;
	return -srnic_engine_group_notify(ctx->eng, mr->lkey,
					  cq ? to_scq(cq)->cq : NULL);
}

static void members_out(const struct srnic_engine_member *in, int n,
			struct srnic_group_member *out, int max)
{
	int i;

	for (i = 0; i < n && i < max; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].ipv4 = in[i].ipv4;
		memcpy(out[i].node, in[i].name, sizeof(out[i].node));
		out[i].node[sizeof(out[i].node) - 1] = '\0';
		out[i].status = in[i].status
					? (int)srnic_wc_status_of(
						  (uint8_t)in[i].status)
					: 0;
	}
}

SRNIC_API int srnic_qp_accept_notify(struct ibv_qp *qp, int accept)
{
	if (!qp || !srnic_context_ours(qp->context))
		return EOPNOTSUPP;
	if (qp->qp_type != IBV_QPT_RC)
		return EINVAL;
	__atomic_store_n(&to_sqp(qp)->q->accept_notify, !!accept,
			 __ATOMIC_RELEASE);
	return 0;
}

SRNIC_API int srnic_query_group(struct ibv_context *context, unsigned group,
				struct srnic_group_member *members, int max)
{
	struct srnic_engine_member m[SRNIC_MAX_GROUP_MEMBERS];
	struct srnic_context *ctx;
	int n;

	if (!srnic_context_ours(context)) {
		errno = EOPNOTSUPP;
		return -1;
	}
	if (group >= SRNIC_MAX_GROUPS || max < 0 || (max && !members)) {
		errno = EINVAL;
		return -1;
	}
	ctx = to_sctx(context);
	/* (its control core learns the peers: the engine must be up) */
	if (!srnic_ctx_start(ctx))
		return -1;
	n = srnic_engine_group_members(ctx->eng, group, m,
				       SRNIC_MAX_GROUP_MEMBERS);
	if (n < 0) {
		errno = -n;
		return -1;
	}
	members_out(m, n, members, max);
	return n;
}

SRNIC_API int srnic_post_mc_write(struct ibv_qp *ibqp,
				  const struct srnic_mc_write_wr *wr)
{
	struct srnic_swqe w;
	struct srnic_qp_v *sqp;
	struct srnic_qp_queues *q;
	uint64_t total = 0;
	int i;

	if (!ibqp || !srnic_context_ours(ibqp->context))
		return EOPNOTSUPP;
	sqp = to_sqp(ibqp);
	q = sqp->q;
	if (!wr || ibqp->qp_type != IBV_QPT_UD || wr->group >= SRNIC_MAX_GROUPS ||
	    (wr->send_flags & ~(unsigned)IBV_SEND_SIGNALED) ||
	    wr->num_sge < 0 || (uint32_t)wr->num_sge > q->max_send_sge ||
	    (wr->num_sge && !wr->sg_list))
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		total += wr->sg_list[i].length;
	if (total > SRNIC_MAX_MSG_BYTES || wr->offset + total < wr->offset)
		return EINVAL;
	memset(&w, 0, offsetof(struct srnic_swqe, sge));
	w.wr_id = wr->wr_id;
	w.opcode = SRNIC_WR_MC_WRITE;
	w.flags = wr->send_flags & IBV_SEND_SIGNALED ? SRNIC_WR_SIGNALED : 0;
	w.length = (uint32_t)total;
	w.rkey = wr->group;
	w.remote_addr = wr->offset;
	w.num_sge = (uint8_t)wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		w.sge[i].addr = wr->sg_list[i].addr;
		w.sge[i].length = wr->sg_list[i].length;
		w.sge[i].lkey = wr->sg_list[i].lkey;
	}
	return srnic_post_swqe(sqp, &w,
			       offsetof(struct srnic_swqe, sge) +
				       (size_t)wr->num_sge * sizeof(w.sge[0]));
}

SRNIC_API int srnic_mc_failed(struct ibv_qp *ibqp, uint64_t *wr_id,
			      struct srnic_group_member *members, int max)
{
	struct srnic_engine_member m[SRNIC_MAX_GROUP_MEMBERS];
	struct srnic_qp_v *sqp;
	uint64_t id = 0;
	int n;

	if (!ibqp || !srnic_context_ours(ibqp->context)) {
		errno = EOPNOTSUPP;
		return -1;
	}
	if (max < 0 || (max && !members)) {
		errno = EINVAL;
		return -1;
	}
	sqp = to_sqp(ibqp);
	n = srnic_engine_group_failed(sqp->ctx->eng, sqp->qp, &id, m,
				      SRNIC_MAX_GROUP_MEMBERS);
	if (wr_id)
		*wr_id = id;
	members_out(m, n, members, max);
	return n;
}

/* ---- services (docs/failover.md) ---- */

/* pd is a srnic context's, whose node is a member of the service at
 * svc_ipv4, and slot one of its slots; else false with errno set. */
static bool svc_slot_ok(struct ibv_pd *pd, uint32_t svc_ipv4, unsigned slot)
{
	const struct srnic_context *ctx;
	unsigned i;

	if (!pd || !srnic_context_ours(pd->context)) {
		errno = EOPNOTSUPP;
		return false;
	}
	ctx = to_sctx(pd->context);
	for (i = 0; i < ctx->cfg.nsvc && ctx->cfg.svc[i].ipv4 != svc_ipv4; i++)
		;
	if (slot >= SRNIC_SVC_SLOTS || i == ctx->cfg.nsvc) {
		errno = EINVAL;
		return false;
	}
	return true;
}

_Static_assert(SRNIC_SVC_SLOTS == SRNIC_SVC_QP_SLOTS &&
		       SRNIC_SVC_QPN(0) == SRNIC_SVC_QPN_BASE,
	       "include/srnic.h's service QP numbers are the engine's");

SRNIC_API struct ibv_qp *srnic_svc_create_qp(struct ibv_pd *pd,
					     struct ibv_qp_init_attr *attr,
					     uint32_t svc_ipv4, unsigned slot)
{
	if (!svc_slot_ok(pd, svc_ipv4, slot))
		return NULL;
	if (!attr ||
	    (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UD) ||
	    attr->srq) {
		errno = EINVAL;
		return NULL;
	}
	return srnic_svc_qp_new(pd, attr, svc_ipv4, slot);
}

/* failback=manual: the context's running engine, or NULL with *rc. */
static struct srnic_engine *svc_engine(struct ibv_context *ctx, int *rc)
{
	struct srnic_engine *eng;

	*rc = EOPNOTSUPP;
	if (!ctx || !srnic_context_ours(ctx))
		return NULL;
	eng = to_sctx(ctx)->eng;
	*rc = ENOENT;	/* (it binds nothing before it runs) */
	return eng && srnic_engine_running(eng) ? eng : NULL;
}

SRNIC_API int srnic_svc_freeze(struct ibv_context *ctx, uint32_t svc_ipv4)
{
	int rc;
	struct srnic_engine *eng = svc_engine(ctx, &rc);

	/* (a count, or a negative errno) */
	return eng ? srnic_engine_svc_freeze(eng, svc_ipv4, true) : -rc;
}

SRNIC_API int srnic_svc_thaw(struct ibv_context *ctx, uint32_t svc_ipv4)
{
	int rc;
	struct srnic_engine *eng = svc_engine(ctx, &rc);

	return eng ? srnic_engine_svc_freeze(eng, svc_ipv4, false) : -rc;
}

SRNIC_API int srnic_svc_handover(struct ibv_context *ctx, uint32_t svc_ipv4)
{
	int rc;
	struct srnic_engine *eng = svc_engine(ctx, &rc);

	return eng ? -srnic_engine_svc_handover(eng, svc_ipv4) : rc;
}

SRNIC_API struct ibv_mr *srnic_svc_reg_mr(struct ibv_pd *pd, void *addr,
					  size_t length, int access,
					  uint32_t svc_ipv4, unsigned slot)
{
	if (!svc_slot_ok(pd, svc_ipv4, slot))
		return NULL;
	return srnic_svc_mr_new(pd, addr, length, access, svc_ipv4, slot);
}
