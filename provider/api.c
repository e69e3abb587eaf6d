/* SPDX-License-Identifier: MIT */
/*
 * srnic's own verbs (include/srnic.h), on the application's threads: the
 * calls a program links from libsrnic, which is this provider, so they
 * reach the objects libibverbs made through it.  Each checks first that
 * its object is a srnic device's (EOPNOTSUPP for another's), as mlx5dv
 * and efadv do.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "srnic.h"
#include "srnic_provider.h"

#define SRNIC_API __attribute__((visibility("default")))

SRNIC_API bool srnic_is_srnic_device(struct ibv_device *device)
{
	return device && srnic_device_is_ours(device);
}

static bool srnic_context(struct ibv_context *context)
{
	return context && srnic_is_srnic_device(context->device);
}

SRNIC_API int srnic_query_device(struct ibv_context *context,
				 struct srnic_device_attr *attr)
{
	struct srnic_context *ctx;
	struct srnic_engine_desc d = {0};

	if (!srnic_context(context))
		return EOPNOTSUPP;
	if (attr->comp_mask)
		return EINVAL;
	ctx = to_sctx(context);
	memset(attr, 0, sizeof(*attr));
	snprintf(attr->node, sizeof(attr->node), "%s", ctx->cfg.node);
	attr->ipv4 = ctx->cfg.ipv4;
	attr->nports = ctx->cfg.nports;
	attr->mtu = ctx->cfg.mtu;
	if (ctx->eng) {
		srnic_engine_describe(ctx->eng, &d);
	} else {
		d.ports_up = ctx->cfg.nports >= 32 ? UINT32_MAX
						   : (1u << ctx->cfg.nports) - 1;
	}
	attr->ports_up = d.ports_up;
	attr->running = d.running;
	attr->attached = d.attached;
	attr->slot = d.slot;
	return 0;
}
