/* SPDX-License-Identifier: MIT */
/*
 * Third-party RDMA (include/srnic.h; docs/third-party.md), on the
 * application's threads: a controller's WRITE from a data source's memory
 * to a target's, posted on the controller's QP to the target (it is a
 * message of that QP's), naming its QP to the source; and the data
 * source's consent, a right on the region.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "srnic.h"
#include "srnic_provider.h"
#include "srnic_post.h"

/* Both QPs RC QPs of the same srnic context. */
static bool tp_qps_ok(struct ibv_qp *to_target, struct ibv_qp *to_source)
{
	return to_target != to_source &&
	       to_target->qp_type == IBV_QPT_RC &&
	       to_source->qp_type == IBV_QPT_RC &&
	       to_target->context == to_source->context;
}

SRNIC_API int srnic_post_3p(struct ibv_qp *to_target, struct ibv_qp *to_source,
			    const struct srnic_3p_wr *wr)
{
	struct srnic_swqe w;

	if (!to_target || !to_source || !srnic_context_ours(to_target->context) ||
	    !srnic_context_ours(to_source->context))
		return EOPNOTSUPP;
	if (!wr || !tp_qps_ok(to_target, to_source) ||
	    (wr->send_flags & ~(unsigned)(IBV_SEND_SIGNALED | IBV_SEND_FENCE)) ||
	    wr->length > SRNIC_MAX_MSG_BYTES ||
	    wr->src_addr + wr->length < wr->src_addr ||
	    wr->dst_addr + wr->length < wr->dst_addr)
		return EINVAL;
	memset(&w, 0, offsetof(struct srnic_swqe, sge));
	w.wr_id = wr->wr_id;
	w.opcode = SRNIC_WR_TP_WRITE;
	w.flags = srnic_swqe_flags(wr->send_flags);
	w.length = wr->length;
	w.rkey = wr->dst_rkey;
	w.remote_addr = wr->dst_addr;
	w.tp.src_qpn = to_source->qp_num;
	w.tp.src_rkey = wr->src_rkey;
	w.tp.src_va = wr->src_addr;
	return srnic_post_swqe(to_sqp(to_target), &w,
			       offsetof(struct srnic_swqe, sge));
}

SRNIC_API int srnic_mr_allow_third_party(struct ibv_mr *mr)
{
	struct verbs_mr *vmr;
	struct srnic_context *ctx;
	int rc;

	if (!mr || !srnic_context_ours(mr->context))
		return EOPNOTSUPP;
	vmr = (struct verbs_mr *)((char *)mr - offsetof(struct verbs_mr, ibv_mr));
	if (!(vmr->access & IBV_ACCESS_REMOTE_READ) || !mr->pd)
		return EINVAL;
	ctx = to_sctx(mr->context);
	rc = srnic_engine_rereg_mr(ctx->eng, mr->lkey, mr->addr, mr->length,
				   srnic_rights_of(vmr->access) |
					   SRNIC_ACCESS_THIRD_PARTY,
				   to_spd(mr->pd)->handle);
	return -rc;
}
