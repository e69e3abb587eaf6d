/* SPDX-License-Identifier: MIT */
/*
 * Address handles and multicast attachment (UD QPs).  An address handle
 * is resolved once, when it is made: the GID names a node the control core
 * has heard of, or an IPv4 multicast group; each work request copies what
 * it resolved to, so the handle may go while the request waits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "srnic_provider.h"

struct ibv_ah *srnic_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct srnic_context *ctx = to_sctx(pd->context);
	struct srnic_ah_v *ah;
	int rc;

	/* Ethernet link layer: a destination is a GID, never a LID. */
	if (!attr->is_global || attr->port_num > 1 ||
	    attr->grh.sgid_index >= SRNIC_GID_TBL_LEN) {
		errno = EINVAL;
		return NULL;
	}
	if (!srnic_ctx_start(ctx))
		return NULL;
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	rc = srnic_engine_resolve_ud(ctx->eng, attr->grh.dgid.raw, &ah->addr);
	if (rc) {
		free(ah);
		errno = -rc;
		return NULL;
	}
	ah->attr = *attr;
	return &ah->ibv_ah;
}

int srnic_destroy_ah(struct ibv_ah *ah)
{
	free(to_sah(ah));
	return 0;
}

int srnic_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
		       uint16_t lid)
{
	struct srnic_qp_v *sqp = to_sqp(qp);

	(void)lid;	/* Ethernet: groups are GIDs */
	if (qp->qp_type != IBV_QPT_UD)
		return EINVAL;
	return -srnic_engine_attach_mcast(sqp->ctx->eng, sqp->qp, gid->raw);
}

int srnic_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
		       uint16_t lid)
{
	struct srnic_qp_v *sqp = to_sqp(qp);

	(void)lid;
	if (qp->qp_type != IBV_QPT_UD)
		return EINVAL;
	return -srnic_engine_detach_mcast(sqp->ctx->eng, sqp->qp, gid->raw);
}
