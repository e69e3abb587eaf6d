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

/*
 * A parent domain is a PD to every verb that takes one: it carries its
 * protection domain's handle, so QPs, SRQs, regions and windows made with
 * it are that PD's.  Its thread domain and allocators are accepted and
 * kept; srnic's queues live in the engine's memory, and a provider may
 * leave the allocators uncalled.
 */
struct ibv_pd *srnic_alloc_parent_domain(struct ibv_context *context,
					 struct ibv_parent_domain_init_attr *attr)
{
	struct srnic_pd *parent;

	if (!attr->pd || attr->pd->context != context ||
	    to_spd(attr->pd)->protection ||
	    (attr->td && attr->td->context != context) ||
	    (attr->comp_mask & ~(uint32_t)(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
					   IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT))) {
		errno = EINVAL;
		return NULL;
	}
	parent = calloc(1, sizeof(*parent));
	if (!parent) {
		errno = ENOMEM;
		return NULL;
	}
	parent->ibv_pd.context = context;
	parent->handle = to_spd(attr->pd)->handle;
	parent->protection = attr->pd;
	parent->td = attr->td;
	return &parent->ibv_pd;
}

/* A thread domain: a promise that one thread uses what it is given to;
 * srnic's posting locks are uncontended then, and stay. */
struct ibv_td *srnic_alloc_td(struct ibv_context *context,
			      struct ibv_td_init_attr *attr)
{
	struct ibv_td *td;

	if (attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (!td) {
		errno = ENOMEM;
		return NULL;
	}
	td->context = context;
	return td;
}

int srnic_dealloc_td(struct ibv_td *td)
{
	free(td);
	return 0;
}

int srnic_dealloc_pd(struct ibv_pd *pd)
{
	/* (the registration cache's regions of it first, or they would
	 * outlive it) */
	int rc = srnic_mr_cache_drop_pd(pd);

	if (rc)
		return rc;
	free(pd);
	return 0;
}

#define KNOWN_ACCESS                                                        \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                  \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |                 \
	 IBV_ACCESS_RELAXED_ORDERING | IBV_ACCESS_MW_BIND |                  \
	 IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB)

/* The engine's rights for verbs access flags; -1 with errno set for flags
 * srnic does not know, or remote write or atomic without local write (an
 * error in verbs). */
static int32_t mr_rights(int access)
{
	if ((access & ~KNOWN_ACCESS) ||
	    ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & IBV_ACCESS_LOCAL_WRITE))) {
		errno = EINVAL;
		return -1;
	}
	return (int32_t)srnic_rights_of(access);
}

/* A region (svc_slot: a service's, slot + 1, of the service at svc_ipv4:
 * its key the same on every member; 0 for any other). */
static struct ibv_mr *mr_new(struct ibv_pd *pd, void *addr, size_t length,
			     uint64_t hca_va, int access, uint32_t svc_ipv4,
			     unsigned svc_slot)
{
	struct srnic_context *ctx = to_sctx(pd->context);
	struct verbs_mr *vmr;
	int32_t rights;
	uint32_t key;

	if (srnic_engine_fatal(ctx->eng)) {
		errno = EIO;
		return NULL;
	}
	rights = mr_rights(access);
	if (rights < 0)
		return NULL;
	/* (address 0 and length SIZE_MAX: an implicit on-demand region,
	 * the whole address space; any other region at 0 is a mistake) */
	if (!addr && length &&
	    !(length == SIZE_MAX && (access & IBV_ACCESS_ON_DEMAND))) {
		errno = EINVAL;
		return NULL;
	}
	/* Keys address memory by virtual address: an iova other than the
	 * address itself is not supported. */
	if (hca_va != (uintptr_t)addr) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	key = svc_slot ? srnic_engine_reg_mr_svc(ctx->eng, ctx->dev, svc_ipv4,
						 svc_slot - 1, addr, length,
						 (uint32_t)rights,
						 to_spd(pd)->handle)
		       : srnic_engine_reg_mr(ctx->eng, ctx->dev, addr, length,
					     (uint32_t)rights,
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

struct ibv_mr *srnic_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			    uint64_t hca_va, int access)
{
	return mr_new(pd, addr, length, hca_va, access, 0, 0);
}

struct ibv_mr *srnic_svc_mr_new(struct ibv_pd *pd, void *addr, size_t length,
				int access, uint32_t svc_ipv4, unsigned slot)
{
	return mr_new(pd, addr, length, (uintptr_t)addr, access, svc_ipv4,
		      slot + 1);
}

/*
 * ibv_rereg_mr: the region keeps its key and takes what flags change (the
 * rest as it was), in one step of the datapath, so a packet sees the old
 * region or the new one.  libibverbs has checked the flags and updates
 * the MR's pd, addr and length on success; an error (errno) leaves the
 * region as it was.
 */
int srnic_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		   void *addr, size_t length, int access)
{
	struct ibv_mr *mr = &vmr->ibv_mr;
	struct srnic_context *ctx = to_sctx(mr->context);
	struct ibv_pd *to_pd = flags & IBV_REREG_MR_CHANGE_PD ? pd : mr->pd;
	int to_access = flags & IBV_REREG_MR_CHANGE_ACCESS ? access : vmr->access;
	int32_t rights = mr_rights(to_access);
	int rc;

	if (rights < 0)
		return errno;
	if (!to_pd || to_pd->context != mr->context)
		return errno = EINVAL;
	if (!(flags & IBV_REREG_MR_CHANGE_TRANSLATION)) {
		addr = mr->addr;
		length = mr->length;
	}
	rc = srnic_engine_rereg_mr(ctx->eng, mr->lkey, addr, length,
				   (uint32_t)rights, to_spd(to_pd)->handle);
	if (rc)
		return errno = -rc;
	vmr->access = to_access;
	return 0;
}

/*
 * ibv_advise_mr: prefetch faults each range of an on-demand region in
 * (writable for PREFETCH_WRITE) before it returns, which satisfies the
 * asynchronous form as well; PREFETCH_NO_FAULT maps what is there
 * already, which the CPU's page tables have done: its ranges are only
 * checked.
 */
int srnic_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		    uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sges)
{
	struct srnic_context *ctx = to_sctx(pd->context);
	uint32_t i;
	int rc;

	if (advice != IBV_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return EOPNOTSUPP;
	if ((flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH) || !num_sges ||
	    !sg_list)
		return EINVAL;
	for (i = 0; i < num_sges; i++) {
		rc = srnic_engine_prefetch(
			ctx->eng, sg_list[i].lkey, to_spd(pd)->handle,
			sg_list[i].addr, sg_list[i].length,
			advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
			advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE);
		if (rc)
			return -rc;
	}
	return 0;
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
