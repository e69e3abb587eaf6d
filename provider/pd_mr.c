/* SPDX-License-Identifier: MIT */
/* Protection domains and memory regions. */
#include <errno.h>
#include <stdlib.h>

#include "srnic_provider.h"

struct ibv_pd *srnic_alloc_pd(struct ibv_context *context)
{
	struct srnic_context *ctx = to_sctx(context);
	struct srnic_pd *pd;

	if (!srnic_ctx_engine(ctx))
		return NULL;
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&ctx->lock);
	/* Handles are node-wide unique enough: context address bits keep
	 * two contexts of one process apart. */
	pd->handle = ++ctx->next_pd ^ ((uint32_t)(uintptr_t)ctx << 12);
	pthread_mutex_unlock(&ctx->lock);
	return &pd->ibv_pd;
}

int srnic_dealloc_pd(struct ibv_pd *pd)
{
	free(pd);
	return 0;
}

#define KNOWN_ACCESS                                                        \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                  \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |                 \
	 IBV_ACCESS_RELAXED_ORDERING)

struct ibv_mr *srnic_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			    uint64_t hca_va, int access)
{
	struct srnic_context *ctx = to_sctx(pd->context);
	struct verbs_mr *vmr;
	uint32_t rights = 0, key;

	if (srnic_engine_fatal(ctx->eng)) {
		errno = EIO;
		return NULL;
	}
	if ((access & ~KNOWN_ACCESS) || (!addr && length)) {
		errno = EINVAL;
		return NULL;
	}
	/* Remote write or atomic without local write is an error in verbs. */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE)) {
		errno = EINVAL;
		return NULL;
	}
	/* Keys address memory by virtual address: an iova other than the
	 * address itself is not supported. */
	if (hca_va != (uintptr_t)addr) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (access & IBV_ACCESS_LOCAL_WRITE)
		rights |= SRNIC_ACCESS_LOCAL_WRITE;
	if (access & IBV_ACCESS_REMOTE_WRITE)
		rights |= SRNIC_ACCESS_REMOTE_WRITE;
	if (access & IBV_ACCESS_REMOTE_READ)
		rights |= SRNIC_ACCESS_REMOTE_READ;
	if (access & IBV_ACCESS_REMOTE_ATOMIC)
		rights |= SRNIC_ACCESS_REMOTE_ATOMIC;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	key = srnic_engine_reg_mr(ctx->eng, addr, length, rights,
				  to_spd(pd)->handle);
	if (!key) {
		free(vmr);
		return NULL;
	}
	vmr->ibv_mr.lkey = key;
	vmr->ibv_mr.rkey = key;
	vmr->mr_type = IBV_MR_TYPE_MR;
	vmr->access = access;
	return &vmr->ibv_mr;
}

int srnic_dereg_mr(struct verbs_mr *vmr)
{
	struct srnic_context *ctx = to_sctx(vmr->ibv_mr.context);
	int rc;

	rc = srnic_engine_dereg_mr(ctx->eng, vmr->ibv_mr.lkey);
	if (rc)
		return -rc;
	free(vmr);
	return 0;
}
