/* SPDX-License-Identifier: MIT */
/*
 * Memory windows, types 1 and 2: allocation, and the bind work request
 * that ibv_bind_mw (type 1), IBV_WR_BIND_MW and ibv_wr_bind_mw (type 2)
 * put on a send queue.  The bind runs on the datapath in the queue's
 * order (requester.c, local_op; the window's state: src/mem/window.c).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "srnic_provider.h"
#include "srnic_post.h"

struct ibv_mw *srnic_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct srnic_context *ctx = to_sctx(pd->context);
	struct ibv_mw *mw;
	uint32_t key;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	if (srnic_engine_fatal(ctx->eng)) {
		errno = EIO;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	key = srnic_engine_alloc_mw(ctx->eng, (uint8_t)type,
				    to_spd(pd)->handle);
	if (!key) {
		free(mw);
		return NULL;
	}
	mw->context = pd->context;
	mw->pd = pd;
	mw->rkey = key;
	mw->handle = key;
	mw->type = type;
	return mw;
}

int srnic_dealloc_mw(struct ibv_mw *mw)
{
	int rc = srnic_engine_dealloc_mw(to_sctx(mw->context)->eng, mw->rkey);

	if (rc)
		return -rc;
	free(mw);
	return 0;
}

/*
 * Fill w, a bind of mw under rkey (its key with any count byte) to
 * bind_info on sqp's send queue; type: the window type this way of
 * binding is for.  0, or EINVAL for what verbs refuses at post time.
 */
int srnic_bind_wqe(struct srnic_qp_v *sqp, struct srnic_swqe *w,
		   struct ibv_mw *mw, uint32_t rkey,
		   const struct ibv_mw_bind_info *bi, enum ibv_mw_type type)
{
	const int rights_known = IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_READ |
				 IBV_ACCESS_REMOTE_ATOMIC |
				 IBV_ACCESS_LOCAL_WRITE;

	/* (PDs compared by handle: a parent domain is its PD) */
	if (!mw || mw->type != type || mw->context != sqp->vqp.qp.context ||
	    to_spd(mw->pd)->handle != to_spd(sqp->vqp.qp.pd)->handle ||
	    (rkey & ~0xffu) != (mw->handle & ~0xffu))
		return EINVAL;
	if (bi->length &&
	    (!bi->mr || to_spd(bi->mr->pd)->handle != to_spd(mw->pd)->handle))
		return EINVAL;
	/* (zero-based windows are not offered: their addresses would be
	 * offsets, and srnic's keys name virtual addresses) */
	if (bi->mw_access_flags & ~rights_known)
		return EINVAL;
	w->opcode = SRNIC_WR_BIND_MW;
	w->rkey = rkey;
	w->remote_addr = bi->addr;
	w->compare_add = bi->length;
	/* (the window takes the remote ones: srnic_mw_bind) */
	w->swap = (uint64_t)srnic_rights_of(bi->mw_access_flags) << 32 |
		  (bi->length ? bi->mr->lkey : 0);
	w->length = 0;
	w->num_sge = 0;
	return 0;
}

/* ibv_bind_mw (type 1): the window's next key, on qp's send queue; the
 * window takes it when the bind is posted, as on mlx5. */
int srnic_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		  struct ibv_mw_bind *mw_bind)
{
	struct srnic_qp_v *sqp = to_sqp(ibqp);
	struct srnic_qp_queues *qp = sqp->q;
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct srnic_swqe *w;
	enum srnic_sq_go go;
	int rc;

	if (ibqp->qp_type == IBV_QPT_UD)
		return EINVAL;
	pthread_spin_lock(&qp->sq_lock);
	rc = srnic_sq_state_ok(qp);
	if (!rc && !srnic_sq_room(qp, qp->sq_prod))
		rc = ENOMEM;
	if (!rc) {
		w = &qp->sq[qp->sq_prod & qp->sq_mask];
		memset(w, 0, offsetof(struct srnic_swqe, sge));
		w->wr_id = mw_bind->wr_id;
		if (mw_bind->send_flags & IBV_SEND_SIGNALED)
			w->flags |= SRNIC_WR_SIGNALED;
		rc = srnic_bind_wqe(sqp, w, mw, rkey, &mw_bind->bind_info,
				    IBV_MW_TYPE_1);
	}
	go = rc ? SRNIC_SQ_NOTHING : srnic_sq_publish(sqp, qp->sq_prod + 1);
	pthread_spin_unlock(&qp->sq_lock);
	srnic_sq_go(sqp, go);
	if (!rc)
		mw->rkey = rkey;
	return rc;
}
