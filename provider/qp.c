/* SPDX-License-Identifier: MIT */
/* Queue pairs: creation, modify_qp, query_qp, destruction. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "srnic_provider.h"

/* What each QP type can send: UC has no READ or atomics (nothing comes
 * back), UD only SENDs. */
#define UD_SEND_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
#define UC_SEND_OPS                                                         \
	(UD_SEND_OPS | IBV_QP_EX_WITH_RDMA_WRITE |                           \
	 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND_WITH_INV |  \
	 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW)
#define RC_SEND_OPS                                                         \
	(UC_SEND_OPS | IBV_QP_EX_WITH_RDMA_READ |                            \
	 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |                                 \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_ATOMIC_WRITE)

static uint64_t send_ops_of(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
	case IBV_QPT_XRC_SEND:
		return RC_SEND_OPS;
	case IBV_QPT_UC:
		return UC_SEND_OPS;
	case IBV_QPT_UD:
		return UD_SEND_OPS;
	default:
		return 0;	/* an XRC target sends nothing */
	}
}

/*
 * What each QP type needs at creation: RC, UC and UD a PD and both CQs;
 * an XRC initiator (XRC_SEND) a PD and a send CQ, and receives nothing;
 * an XRC target (XRC_RECV) only its domain: it receives for the domain's
 * SRQs, into their CQs, and sends nothing.  0 or an errno value.
 */
static int check_kind(struct ibv_context *context, struct ibv_pd *pd,
		      struct ibv_qp_init_attr_ex *attr)
{
	switch (attr->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
		return pd && attr->send_cq && attr->recv_cq ? 0 : EINVAL;
	case IBV_QPT_XRC_SEND:
		if (!pd || !attr->send_cq || attr->srq)
			return EINVAL;
		attr->cap.max_recv_wr = attr->cap.max_recv_sge = 0;
		return 0;
	case IBV_QPT_XRC_RECV:
		if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd ||
		    attr->xrcd->context != context)
			return EINVAL;
		memset(&attr->cap, 0, sizeof(attr->cap));
		return 0;
	default:
		return EOPNOTSUPP;
	}
}

static int check_caps(struct ibv_qp_cap *cap)
{
	if (cap->max_send_wr > SRNIC_MAX_QP_WR ||
	    cap->max_recv_wr > SRNIC_MAX_QP_WR ||
	    cap->max_send_sge > SRNIC_MAX_SGE ||
	    cap->max_recv_sge > SRNIC_MAX_SGE ||
	    cap->max_inline_data > SRNIC_MAX_INLINE)
		return EINVAL;
	return 0;
}

/* Everything verbs lets creation refuse before the engine is asked:
 * the type's required objects and the queue sizes.  0 or an errno value;
 * attr's capabilities are normalised on the way. */
static int qp_check_attr(struct ibv_context *context, struct ibv_pd *pd,
			 struct ibv_qp_init_attr_ex *attr)
{
	int rc = check_kind(context, pd, attr);

	if (rc)
		return rc;
	if (attr->srq) {	/* verbs ignores the receive sizes then */
		attr->cap.max_recv_wr = 0;
		attr->cap.max_recv_sge = 0;
	}
	return check_caps(&attr->cap);
}

/* The inline data a QP's sends may carry: what was asked, and at least
 * what its SGEs' descriptors would take (16 bytes each), as rxe gives and
 * as programs count on: librdmacm's rdma_xclient posts a 16-byte inline
 * SEND on a QP that asked for none, and got EINVAL.  Every WQE has room
 * for SRNIC_MAX_INLINE bytes whatever the QP asked. */
static uint32_t inline_room(const struct ibv_qp_cap *cap)
{
	uint32_t sges = cap->max_send_sge * 16u;
	uint32_t room = cap->max_inline_data > sges ? cap->max_inline_data
						    : sges;

	return room < SRNIC_MAX_INLINE ? room : SRNIC_MAX_INLINE;
}

/* The engine's creation request for the verbs attributes.  An XRC target
 * has no send CQ and no XRC QP a receive CQ: their pointers in attr may
 * be anything, so they are not read. */
static void qp_init_of(struct srnic_qp_init *init, struct srnic_context *ctx,
		       struct ibv_pd *pd,
		       const struct ibv_qp_init_attr_ex *attr,
		       uint32_t svc_ipv4, unsigned svc_slot)
{
	bool tgt = attr->qp_type == IBV_QPT_XRC_RECV;

	memset(init, 0, sizeof(*init));
	init->type = attr->qp_type == IBV_QPT_UC   ? SRNIC_QPT_UC
		     : attr->qp_type == IBV_QPT_UD ? SRNIC_QPT_UD
						   : SRNIC_QPT_RC;
	init->xrc = attr->qp_type == IBV_QPT_XRC_SEND ? SRNIC_XRC_INI
		    : tgt			      ? SRNIC_XRC_TGT
						      : SRNIC_XRC_NONE;
	init->xrcd = tgt ? srnic_xrcd_handle(attr->xrcd) : 0;
	init->sq_sig_all = !!attr->sq_sig_all;
	init->dev = ctx->dev;
	init->svc_ipv4 = svc_ipv4;
	init->svc_slot = (uint16_t)svc_slot;
	init->pd = pd ? to_spd(pd)->handle : 0;
	init->max_send_wr = attr->cap.max_send_wr;
	init->max_recv_wr = attr->cap.max_recv_wr;
	init->max_send_sge = attr->cap.max_send_sge;
	init->max_recv_sge = attr->cap.max_recv_sge;
	init->max_inline = inline_room(&attr->cap);
	init->send_cq = tgt ? NULL : to_scq(attr->send_cq)->cq;
	init->recv_cq = init->xrc ? NULL : to_scq(attr->recv_cq)->cq;
	init->srq = attr->srq ? to_ssrq(attr->srq)->srq : NULL;
}

/* The verbs-visible half of a created QP: what ibv_qp's users read
 * directly, and an XRC target's hold on its domain. */
static void qp_fill_verbs(struct srnic_qp_v *sqp, struct ibv_context *context,
			  struct ibv_pd *pd, struct ibv_qp_init_attr_ex *attr,
			  int ex)
{
	struct ibv_qp *ibqp = &sqp->vqp.qp;
	bool tgt = attr->qp_type == IBV_QPT_XRC_RECV;
	bool xrc = tgt || attr->qp_type == IBV_QPT_XRC_SEND;

	ibqp->context = context;
	ibqp->pd = pd;
	ibqp->send_cq = tgt ? NULL : attr->send_cq;
	ibqp->recv_cq = xrc ? NULL : attr->recv_cq;
	if (tgt) {
		sqp->vqp.comp_mask |= VERBS_QP_XRCD;
		sqp->vqp.xrcd = (struct verbs_xrcd *)attr->xrcd;
		srnic_xrcd_use(attr->xrcd, 1);
	}
	ibqp->srq = attr->srq;
	ibqp->qp_num = sqp->q->qpn;
	ibqp->qp_type = attr->qp_type;
	ibqp->state = IBV_QPS_RESET;
	ibqp->qp_context = attr->qp_context;
	ibqp->events_completed = 0;
	pthread_mutex_init(&ibqp->mutex, NULL);
	pthread_cond_init(&ibqp->cond, NULL);
	if (ex && (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) {
		sqp->vqp.comp_mask |= VERBS_QP_EX;
		srnic_qp_ex_init(sqp, attr->send_ops_flags);
	}
}

/* A QP (svc_slot: a member's service QP, slot + 1, of the service at
 * svc_ipv4; 0 for any other). */
static struct ibv_qp *qp_new(struct ibv_context *context, struct ibv_pd *pd,
			     struct ibv_qp_init_attr_ex *attr, int ex,
			     uint32_t svc_ipv4, unsigned svc_slot)
{
	struct srnic_context *ctx = to_sctx(context);
	struct srnic_qp_init init;
	struct srnic_qp_v *sqp;
	int rc;

	rc = qp_check_attr(context, pd, attr);
	if (rc) {
		errno = rc;
		return NULL;
	}
	if (!srnic_ctx_start(ctx))
		return NULL;
	sqp = calloc(1, sizeof(*sqp));
	if (!sqp) {
		errno = ENOMEM;
		return NULL;
	}
	qp_init_of(&init, ctx, pd, attr, svc_ipv4, svc_slot);
	sqp->qp = srnic_engine_create_qp(ctx->eng, &init);
	if (!sqp->qp) {
		free(sqp);
		return NULL;
	}
	sqp->ctx = ctx;
	sqp->ud_max = 128u << srnic_active_mtu(ctx);
	sqp->q = srnic_engine_qp_queues(sqp->qp);
	sqp->q->handle = sqp;	/* async events name it */
	/* Report what the queues really hold: at least what was asked. */
	if (init.xrc != SRNIC_XRC_TGT)
		attr->cap.max_send_wr = sqp->q->sq_mask + 1;
	if (!attr->srq && !init.xrc)
		attr->cap.max_recv_wr = sqp->q->rq_mask + 1;
	if (init.xrc != SRNIC_XRC_TGT)
		attr->cap.max_inline_data = init.max_inline;
	sqp->cap = attr->cap;
	qp_fill_verbs(sqp, context, pd, attr, ex);
	return &sqp->vqp.qp;
}

/* A QP from the legacy attributes (svc_slot as qp_new's). */
static struct ibv_qp *qp_from_attr(struct ibv_pd *pd,
				   struct ibv_qp_init_attr *attr,
				   uint32_t svc_ipv4, unsigned svc_slot)
{
	struct ibv_qp_init_attr_ex ex;
	struct ibv_qp *qp;

	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, attr, sizeof(*attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = qp_new(pd->context, pd, &ex, 0, svc_ipv4, svc_slot);
	if (qp)
		attr->cap = ex.cap;
	return qp;
}

struct ibv_qp *srnic_create_qp(struct ibv_pd *pd,
			       struct ibv_qp_init_attr *attr)
{
	return qp_from_attr(pd, attr, 0, 0);
}

struct ibv_qp *srnic_create_qp_ex(struct ibv_context *context,
				  struct ibv_qp_init_attr_ex *attr)
{
	uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
			 IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_XRCD;

	/* (creation flags: none of them, but saying none is fine) */
	if ((attr->comp_mask & ~known) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~send_ops_of(attr->qp_type))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return qp_new(context, attr->comp_mask & IBV_QP_INIT_ATTR_PD
				       ? attr->pd
				       : NULL,
		      attr, 1, 0, 0);
}

struct ibv_qp *srnic_svc_qp_new(struct ibv_pd *pd,
				struct ibv_qp_init_attr *attr,
				uint32_t svc_ipv4, unsigned slot)
{
	return qp_from_attr(pd, attr, svc_ipv4, slot + 1);
}

static uint8_t mtu_shift(enum ibv_mtu mtu)
{
	return 7 + mtu;	/* IBV_MTU_256 is 1: 2^8 */
}

/* The state change's part of the engine's request: the transition, and
 * what RTR (not for UD: it has no peer) and RTS take from attr. */
static void mod_state(struct srnic_qp_mod *mod, enum ibv_qp_type type,
		      enum ibv_qp_state cur, const struct ibv_qp_attr *attr)
{
	mod->mask |= SRNIC_MOD_STATE;
	mod->state = attr->qp_state;
	if (attr->qp_state == IBV_QPS_RTR && cur == IBV_QPS_INIT &&
	    type != IBV_QPT_UD) {
		mod->mask |= SRNIC_MOD_RTR;
		mod->dest_qpn = attr->dest_qp_num;
		mod->rq_psn = attr->rq_psn;
		memcpy(mod->peer_gid, attr->ah_attr.grh.dgid.raw, 16);
		mod->path_shift = mtu_shift(attr->path_mtu);
		mod->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	}
	if (attr->qp_state == IBV_QPS_RTS && cur == IBV_QPS_RTR) {
		mod->mask |= SRNIC_MOD_RTS;
		mod->sq_psn = attr->sq_psn;
		mod->max_rd_atomic = attr->max_rd_atomic;
	}
}

/* Timer attributes may change in RTS and SQD too, one at a time: the
 * engine gets all four as the QP holds them after this call. */
static void mod_timers(struct srnic_qp_mod *mod, const struct srnic_qp_v *sqp,
		       const struct ibv_qp_attr *attr, int mask)
{
	const struct ibv_qp_attr *kept = &sqp->attr;

	mod->mask |= SRNIC_MOD_TIMERS;
	mod->timeout = mask & IBV_QP_TIMEOUT ? attr->timeout : kept->timeout;
	mod->retry_cnt = mask & IBV_QP_RETRY_CNT ? attr->retry_cnt
						 : kept->retry_cnt;
	mod->rnr_retry = mask & IBV_QP_RNR_RETRY ? attr->rnr_retry
						 : kept->rnr_retry;
	mod->min_rnr_timer = mask & IBV_QP_MIN_RNR_TIMER ? attr->min_rnr_timer
							 : kept->min_rnr_timer;
}

/* The engine's request for a modify_qp that srnic_qp_check_modify let
 * through. */
static void mod_of(struct srnic_qp_mod *mod, const struct srnic_qp_v *sqp,
		   enum ibv_qp_state cur, const struct ibv_qp_attr *attr,
		   int mask)
{
	memset(mod, 0, sizeof(*mod));
	if (mask & IBV_QP_STATE)
		mod_state(mod, sqp->vqp.qp.qp_type, cur, attr);
	if (mask & IBV_QP_QKEY) {
		mod->mask |= SRNIC_MOD_QKEY;
		mod->qkey = attr->qkey;
	}
	if (mask & IBV_QP_ACCESS_FLAGS) {
		mod->mask |= SRNIC_MOD_ACCESS;
		mod->access = srnic_rights_of(attr->qp_access_flags) &
			      SRNIC_ACCESS_REMOTE_ANY;
	}
	if (mask & (IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		    IBV_QP_MIN_RNR_TIMER))
		mod_timers(mod, sqp, attr, mask);
}

/* A move to RESET and a destroy take the QP's completions out of its CQs
 * (the engine's cq_forget_qp), so they hold both CQs' locks: their
 * pollers wait rather than read an entry being removed.  Taken in one
 * order whatever the QP (the CQ at the lower address first: two QPs whose
 * CQs are each other's send and receive CQs, reset or destroyed at once,
 * would otherwise each hold one lock and wait for the other), and one
 * lock when both are the same CQ. */
static void cqs_in_order(struct ibv_qp *ibqp, struct srnic_cq *cq[2])
{
	struct srnic_cq *s = ibqp->send_cq ? to_scq(ibqp->send_cq)->cq : NULL;
	struct srnic_cq *r = ibqp->recv_cq ? to_scq(ibqp->recv_cq)->cq : NULL;
	bool swap = s && r && (uintptr_t)r < (uintptr_t)s;

	cq[0] = swap ? r : s;
	cq[1] = swap ? s : r;
	if (cq[1] == cq[0])
		cq[1] = NULL;
}

static void cqs_lock(struct ibv_qp *ibqp)
{
	struct srnic_cq *cq[2];

	cqs_in_order(ibqp, cq);
	if (cq[0])
		pthread_spin_lock(&cq[0]->lock);
	if (cq[1])
		pthread_spin_lock(&cq[1]->lock);
}

static void cqs_unlock(struct ibv_qp *ibqp)
{
	struct srnic_cq *cq[2];

	cqs_in_order(ibqp, cq);
	if (cq[1])
		pthread_spin_unlock(&cq[1]->lock);
	if (cq[0])
		pthread_spin_unlock(&cq[0]->lock);
}

static int modify_to_reset(struct srnic_qp_v *sqp,
			   const struct srnic_qp_mod *mod)
{
	int rc;

	cqs_lock(&sqp->vqp.qp);
	rc = srnic_engine_modify_qp(sqp->ctx->eng, sqp->qp, mod);
	cqs_unlock(&sqp->vqp.qp);
	return rc;
}

/* Keep what was set, for query_qp: it answers from this copy. */
static void keep_attr(struct srnic_qp_v *sqp, const struct ibv_qp_attr *attr,
		      int mask)
{
	struct ibv_qp_attr *k = &sqp->attr;

#define KEEP(flag, field)                                                    \
	do {                                                                 \
		if (mask & (flag))                                           \
			k->field = attr->field;                              \
	} while (0)
	KEEP(IBV_QP_PKEY_INDEX, pkey_index);
	KEEP(IBV_QP_QKEY, qkey);
	KEEP(IBV_QP_PORT, port_num);
	KEEP(IBV_QP_ACCESS_FLAGS, qp_access_flags);
	KEEP(IBV_QP_AV, ah_attr);
	KEEP(IBV_QP_PATH_MTU, path_mtu);
	KEEP(IBV_QP_DEST_QPN, dest_qp_num);
	KEEP(IBV_QP_RQ_PSN, rq_psn);
	KEEP(IBV_QP_SQ_PSN, sq_psn);
	KEEP(IBV_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic);
	KEEP(IBV_QP_MAX_QP_RD_ATOMIC, max_rd_atomic);
	KEEP(IBV_QP_MIN_RNR_TIMER, min_rnr_timer);
	KEEP(IBV_QP_TIMEOUT, timeout);
	KEEP(IBV_QP_RETRY_CNT, retry_cnt);
	KEEP(IBV_QP_RNR_RETRY, rnr_retry);
#undef KEEP
	sqp->attr_mask |= mask;
}

int srnic_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct srnic_qp_v *sqp = to_sqp(ibqp);
	enum ibv_qp_state cur = (enum ibv_qp_state)srnic_qp_state(sqp->q);
	bool to_reset = (mask & IBV_QP_STATE) &&
			attr->qp_state == IBV_QPS_RESET;
	struct srnic_qp_mod mod;
	int rc;

	rc = srnic_qp_check_modify(sqp->ctx, ibqp->qp_type, cur, attr, mask);
	if (rc)
		return rc;
	/* A connection keeps to its node: an AV after RTR (SQD may give
	 * one) can only say the same again. */
	if ((mask & IBV_QP_AV) && cur != IBV_QPS_INIT &&
	    memcmp(attr->ah_attr.grh.dgid.raw, sqp->attr.ah_attr.grh.dgid.raw,
		   16))
		return EINVAL;
	mod_of(&mod, sqp, cur, attr, mask);
	if (srnic_engine_fatal(sqp->ctx->eng))
		return EIO;	/* srnicd is gone: the device is lost */
	rc = to_reset ? modify_to_reset(sqp, &mod)
		      : srnic_engine_modify_qp(sqp->ctx->eng, sqp->qp, &mod);
	if (rc)
		return -rc;
	if (mask & IBV_QP_STATE) {
		ibqp->state = attr->qp_state;
		if (to_reset)
			sqp->attr_mask = 0;
	}
	keep_attr(sqp, attr, mask);
	return 0;
}

int srnic_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask,
		   struct ibv_qp_init_attr *init)
{
	struct srnic_qp_v *sqp = to_sqp(ibqp);

	*attr = sqp->attr;
	attr->qp_state = (enum ibv_qp_state)srnic_qp_state(sqp->q);
	attr->cur_qp_state = attr->qp_state;
	attr->path_mig_state = IBV_MIG_MIGRATED;
	attr->cap = sqp->cap;
	attr->sq_draining = 0;
	memset(init, 0, sizeof(*init));
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = sqp->cap;
	init->qp_type = ibqp->qp_type;
	init->sq_sig_all = sqp->q->sq_sig_all;
	return 0;
}

int srnic_destroy_qp(struct ibv_qp *ibqp)
{
	struct srnic_qp_v *sqp = to_sqp(ibqp);
	int rc;

	cqs_lock(ibqp);
	rc = srnic_engine_destroy_qp(sqp->ctx->eng, sqp->qp);
	cqs_unlock(ibqp);
	if (rc)
		return -rc;
	srnic_fifo_stage_free(sqp);	/* (nothing reads it any more) */
	if (sqp->vqp.comp_mask & VERBS_QP_XRCD)
		srnic_xrcd_use(&sqp->vqp.xrcd->xrcd, -1);
	/* No event can come any more.  One reported and not acknowledged
	 * still names this QP: keep its memory (and mutex) until the
	 * context closes, rather than wait for a program that may never
	 * read its events. */
	pthread_mutex_lock(&ibqp->mutex);
	if (ibqp->events_completed != sqp->events_reported) {
		pthread_mutex_unlock(&ibqp->mutex);
		srnic_keep_until_close(sqp->ctx, sqp);
		return 0;
	}
	pthread_mutex_unlock(&ibqp->mutex);
	pthread_mutex_destroy(&ibqp->mutex);
	pthread_cond_destroy(&ibqp->cond);
	free(sqp);
	return 0;
}
