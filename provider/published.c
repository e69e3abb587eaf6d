/* SPDX-License-Identifier: MIT */
/*
 * The system-wide protection table (include/srnic.h; docs/published-
 * keys.md), on the application's threads: a region published by name to
 * every node integrated with this one, and a peer's region found by its
 * node's GID and the name, without asking the peer.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "srnic.h"
#include "srnic_provider.h"

/* The IBV_ACCESS_REMOTE_* rights of a region, as the table keeps them. */
static uint32_t remote_rights(int access)
{
	return srnic_rights_of(access) & SRNIC_ACCESS_REMOTE_ANY;
}

SRNIC_API int srnic_mr_publish(struct ibv_mr *mr, uint32_t name)
{
	struct verbs_mr *vmr;
	struct srnic_published p;

	if (!mr || !srnic_context_ours(mr->context))
		return EOPNOTSUPP;
	vmr = (struct verbs_mr *)((char *)mr - offsetof(struct verbs_mr, ibv_mr));
	p = (struct srnic_published){.name = name, .rkey = mr->rkey,
				     .access = remote_rights(vmr->access),
				     .addr = (uintptr_t)mr->addr,
				     .length = mr->length};
	if (!name || !p.access)
		return EINVAL;
	/* (a region registers before the engine joins the node: the
	 * node's table is there only once it has) */
	if (!srnic_ctx_start(to_sctx(mr->context)))
		return errno;
	return -srnic_engine_publish_mr(to_sctx(mr->context)->eng, &p);
}

SRNIC_API int srnic_mr_unpublish(struct ibv_mr *mr)
{
	if (!mr || !srnic_context_ours(mr->context))
		return EOPNOTSUPP;
	return -srnic_engine_unpublish_mr(to_sctx(mr->context)->eng, mr->rkey);
}

SRNIC_API int srnic_mr_lookup(struct ibv_context *context,
			      const union ibv_gid *node, uint32_t name,
			      struct srnic_published_mr *out)
{
	struct srnic_engine *eng;
	struct srnic_published p;
	int rc;

	if (!context || !srnic_context_ours(context))
		return EOPNOTSUPP;
	if (!node || !out || !name)
		return EINVAL;
	/* (the node's tables are there once the engine has joined it) */
	eng = srnic_ctx_start(to_sctx(context));
	if (!eng)
		return errno;
	rc = srnic_engine_lookup_mr(eng, node->raw, name, &p);
	if (rc)
		return -rc;
	memset(out, 0, sizeof(*out));
	out->rkey = p.rkey;
	out->addr = p.addr;
	out->length = p.length;
	out->access = (p.access & SRNIC_ACCESS_REMOTE_WRITE
			       ? IBV_ACCESS_REMOTE_WRITE
			       : 0) |
		      (p.access & SRNIC_ACCESS_REMOTE_READ
			       ? IBV_ACCESS_REMOTE_READ
			       : 0) |
		      (p.access & SRNIC_ACCESS_REMOTE_ATOMIC
			       ? IBV_ACCESS_REMOTE_ATOMIC
			       : 0);
	return 0;
}
