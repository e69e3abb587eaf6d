/* SPDX-License-Identifier: MIT */
/*
 * Device and context: how libibverbs finds srnic (a sysfs tree that names
 * "srnic0", written by ./srnic from the node's configuration) and what the
 * device says about itself.  Opening a context reads the configuration but
 * starts nothing: ibv_devinfo must work beside a running node.  Nor do a PD
 * or a memory registration; the engine's datapath (DPDK, ports, cores)
 * starts with the first CQ, QP, SRQ or address handle.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "srnic_provider.h"

static const struct verbs_context_ops srnic_ops = {
	.alloc_pd = srnic_alloc_pd,
	.attach_mcast = srnic_attach_mcast,
	.create_ah = srnic_create_ah,
	.create_cq = srnic_create_cq,
	.create_cq_ex = srnic_create_cq_ex,
	.create_qp = srnic_create_qp,
	.create_qp_ex = srnic_create_qp_ex,
	.create_srq = srnic_create_srq,
	.dealloc_pd = srnic_dealloc_pd,
	.dereg_mr = srnic_dereg_mr,
	.advise_mr = srnic_advise_mr,
	.rereg_mr = srnic_rereg_mr,
	.alloc_mw = srnic_alloc_mw,
	.alloc_parent_domain = srnic_alloc_parent_domain,
	.alloc_td = srnic_alloc_td,
	.dealloc_td = srnic_dealloc_td,
	.dealloc_mw = srnic_dealloc_mw,
	.bind_mw = srnic_bind_mw,
	.destroy_ah = srnic_destroy_ah,
	.destroy_cq = srnic_destroy_cq,
	.destroy_qp = srnic_destroy_qp,
	.destroy_srq = srnic_destroy_srq,
	.create_srq_ex = srnic_create_srq_ex,
	.get_srq_num = srnic_get_srq_num,
	.open_xrcd = srnic_open_xrcd,
	.close_xrcd = srnic_close_xrcd,
	.detach_mcast = srnic_detach_mcast,
	.modify_qp = srnic_modify_qp,
	.modify_srq = srnic_modify_srq,
	.poll_cq = srnic_poll_cq,
	.post_recv = srnic_post_recv,
	.post_send = srnic_post_send,
	.post_srq_recv = srnic_post_srq_recv,
	.query_device_ex = srnic_query_device_ex,
	.query_rt_values = srnic_query_rt_values,
	.query_port = srnic_query_port,
	.query_qp = srnic_query_qp,
	.query_srq = srnic_query_srq,
	.reg_mr = srnic_reg_mr,
	.req_notify_cq = srnic_req_notify_cq,
	.resize_cq = srnic_resize_cq,
	.modify_cq = srnic_modify_cq,
};

struct srnic_engine *srnic_ctx_engine(struct srnic_context *ctx)
{
	char err[320];

	pthread_mutex_lock(&ctx->lock);
	if (!ctx->eng) {
		ctx->eng = srnic_engine_get(&ctx->cfg, err, sizeof(err));
		if (!ctx->eng) {
			int e = errno;

			fprintf(stderr, "%s\n", err);
			errno = e ? e : ENODEV;
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	return ctx->eng;
}

struct srnic_engine *srnic_ctx_start(struct srnic_context *ctx)
{
	char err[320];
	int rc;

	if (!srnic_ctx_engine(ctx))
		return NULL;
	if (srnic_engine_fatal(ctx->eng)) {
		errno = EIO;	/* srnicd is gone: the device is lost */
		return NULL;
	}
	rc = srnic_engine_start(ctx->eng, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "%s\n", err);
		errno = -rc;
		return NULL;
	}
	return ctx->eng;
}

static void srnic_free_context(struct ibv_context *ibctx)
{
	struct srnic_context *ctx = to_sctx(ibctx);

	/* No event for this context after this; verbs_uninit_context
	 * closes async_fd (the pipe's read end). */
	srnic_events_close(ctx);
	if (ctx->eng)
		srnic_engine_put(ctx->eng);
	verbs_uninit_context(&ctx->vctx);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}

static const struct verbs_context_ops srnic_free_ops = {
	.free_context = srnic_free_context,
};

static struct verbs_context *srnic_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd, void *priv)
{
	struct srnic_context *ctx;
	char err[320];
	long ncpu;
	int rc;

	ctx = SRNIC_ALLOC_CONTEXT(ibdev, cmd_fd, struct srnic_context, vctx,
				  0);
	if (!ctx)
		return NULL;
	ctx->async_pipe[0] = ctx->async_pipe[1] = -1;
	pthread_mutex_init(&ctx->lock, NULL);
	verbs_set_ops(&ctx->vctx, &srnic_free_ops);

	rc = srnic_config_load(&ctx->cfg, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "%s\n", err);
		goto fail;
	}
	/* srnic<K>: the node's adapter K (a "device" line of its
	 * configuration gave it ports) */
	ctx->dev = (uint8_t)strtoul(ibdev->name + 5, NULL, 10);
	if (strncmp(ibdev->name, "srnic", 5) || ctx->dev >= ctx->cfg.ndev) {
		fprintf(stderr, "srnic: %s: the configuration %s has %u "
			"device(s), srnic0 to srnic%u\n", ibdev->name,
			ctx->cfg.path, ctx->cfg.ndev, ctx->cfg.ndev - 1);
		rc = -ENODEV;
		goto fail;
	}
	/* Async events arrive on a pipe of ours: there is no kernel to ask
	 * for one (events.c). */
	if (srnic_events_open(ctx)) {
		rc = -errno;
		goto fail;
	}
	ctx->vctx.context.async_fd = ctx->async_pipe[0];
	/* (one a CPU, as rxe offers: a program may spread its CQs over
	 * them; srnic's one datapath serves them all alike) */
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	ctx->vctx.context.num_comp_vectors = ncpu > 0 ? (int)ncpu : 1;
	verbs_set_ops(&ctx->vctx, &srnic_ops);
	return &ctx->vctx;

fail:
	srnic_events_close(ctx);
	verbs_uninit_context(&ctx->vctx);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
	errno = -rc;
	return NULL;
}

static struct verbs_device *srnic_alloc_device(struct verbs_sysfs_dev *sysfs)
{
	struct srnic_device *dev = calloc(1, sizeof(*dev));

	(void)sysfs;
	return dev ? &dev->vdev : NULL;
}

static void srnic_uninit_device(struct verbs_device *vdev)
{
	free(vdev);
}

static const struct verbs_match_ent srnic_match[] = {
	SRNIC_NAME_MATCH_ENT("srnic", NULL),
	SRNIC_MATCH_END,
};

static const struct verbs_device_ops srnic_dev_ops = {
	.name = "srnic",
	.match_min_abi_version = 1,
	.match_max_abi_version = 1,
	.match_table = srnic_match,
	.alloc_device = srnic_alloc_device,
	.uninit_device = srnic_uninit_device,
	.alloc_context = srnic_alloc_context,
};
SRNIC_PROVIDER_REGISTER(srnic_dev_ops);

bool srnic_device_is_ours(struct ibv_device *device)
{
	return ((struct verbs_device *)device)->ops == &srnic_dev_ops;
}

/* ---- what the device says about itself ---- */

/* The GUID of adapter dev: EUI-64 from the node MAC, as the link-local
 * GID uses it, its fourth byte 0xff less the adapter's number (./srnic
 * sysfs writes the same). */
static uint64_t node_guid(const struct srnic_config *cfg, uint8_t dev)
{
	const uint8_t *m = cfg->mac;
	uint8_t g[8] = {m[0] ^ 2, m[1], m[2], (uint8_t)(0xff - dev), 0xfe,
			m[3], m[4], m[5]};
	uint64_t v;

	memcpy(&v, g, 8);
	return v;	/* verbs keeps GUIDs in network order */
}

/* The node's ports that are this adapter's (a bit a port). */
uint32_t srnic_ctx_ports(const struct srnic_context *ctx)
{
	uint32_t mask = 0;
	unsigned p;

	for (p = 0; p < ctx->cfg.nports; p++)
		if (ctx->cfg.port_dev[p] == ctx->dev)
			mask |= 1u << p;
	return mask;
}

/* The node's ports whose link is up (all of them before the engine
 * runs: a configured port counts as cabled). */
uint32_t srnic_ctx_ports_up(const struct srnic_context *ctx)
{
	struct srnic_engine_desc d = {0};

	if (!ctx->eng)
		return ctx->cfg.nports >= 32 ? UINT32_MAX
					     : (1u << ctx->cfg.nports) - 1;
	srnic_engine_describe(ctx->eng, &d);
	return d.ports_up;
}

enum ibv_mtu srnic_active_mtu(const struct srnic_context *ctx)
{
	unsigned mtu = ctx->cfg.mtu;

	return mtu >= 4096 ? IBV_MTU_4096 : mtu >= 2048 ? IBV_MTU_2048
		: mtu >= 1024 ? IBV_MTU_1024 : mtu >= 512 ? IBV_MTU_512
		: IBV_MTU_256;
}

/* Who the device is: firmware, GUIDs, vendor ids. */
static void device_identity(const struct srnic_context *ctx,
			    struct ibv_device_attr *d)
{
	snprintf(d->fw_ver, sizeof(d->fw_ver), "srnic-0.1");
	d->node_guid = node_guid(&ctx->cfg, ctx->dev);
	/* (one system: every adapter of the node says srnic0's) */
	d->sys_image_guid = node_guid(&ctx->cfg, 0);
	/* No IEEE OUI of its own: all ones, as rxe (0 reads as "no device"
	 * to rdma-core's tests; perftest and UCX take their generic paths
	 * either way, UCX reading the PCI ids from sysfs instead). */
	d->vendor_id = 0xFFFFFF;
	d->vendor_part_id = 0x5352;
	d->hw_ver = 1;
	d->phys_port_cnt = 1;
}

/* What the device can do, and how many of each object it holds. */
static void device_limits(struct ibv_device_attr *d)
{
	d->max_mr_size = 1ull << 40;
	d->page_size_cap = 4096;
	d->max_qp = SRNIC_MAX_QP - 16;
	d->max_qp_wr = SRNIC_MAX_QP_WR;
	/* XRC: domains, XRC SRQs and XRC QPs (xrc.c).
	 * MEM_MGT_EXTENSIONS: send with invalidate and local invalidate
	 * (of any region's key, and of type 2 windows'); memory windows of
	 * type 1 and of type 2 bound to a QP (2B). */
	d->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN |
			      IBV_DEVICE_MEM_MGT_EXTENSIONS |
			      IBV_DEVICE_MEM_WINDOW |
			      IBV_DEVICE_MEM_WINDOW_TYPE_2B | IBV_DEVICE_XRC;
	d->max_mw = SRNIC_MAX_MW;
	d->max_sge = SRNIC_MAX_SGE;
	d->max_sge_rd = SRNIC_MAX_SGE;
	d->max_cq = SRNIC_MAX_QP;
	d->max_cqe = SRNIC_MAX_CQE;
	d->max_mr = SRNIC_MAX_MR - 1;
	d->max_pd = SRNIC_MAX_PD;
	d->max_qp_rd_atom = SRNIC_MAX_RD_ATOMIC;
	d->max_qp_init_rd_atom = SRNIC_MAX_RD_ATOMIC;
	d->max_res_rd_atom = SRNIC_MAX_RD_ATOMIC * (SRNIC_MAX_QP - 16);
	/* Atomics run as locked instructions of the responder's CPU on the
	 * application's memory: atomic against each other, and against the
	 * CPUs' own atomic instructions on the same bytes, which is what
	 * IBV_ATOMIC_GLOB promises.  The device says IBV_ATOMIC_HCA, the
	 * weaker promise (and rxe's): UCX 1.13's verbs transports offer
	 * atomics only on a device that says exactly that. */
	d->atomic_cap = IBV_ATOMIC_HCA;
	d->max_srq = SRNIC_MAX_QP;
	d->max_srq_wr = SRNIC_MAX_QP_WR;
	d->max_srq_sge = SRNIC_MAX_SGE;
	d->max_pkeys = 1;
	d->max_ah = INT32_MAX;	/* a few bytes of the program's memory each */
	d->max_mcast_grp = SRNIC_MAX_MCAST_GROUPS;
	d->max_mcast_qp_attach = SRNIC_MAX_MCAST_QPS;
	d->max_total_mcast_qp_attach =
		SRNIC_MAX_MCAST_GROUPS * SRNIC_MAX_MCAST_QPS;
	d->local_ca_ack_delay = 15;
}

/* On-demand paging, explicit and implicit, for every operation of every
 * transport: srnic pins nothing and touches memory with the CPU, so a
 * region need only be mapped when a packet reaches it (and a hole fails
 * that message: src/mem/guard.c). */
static void device_odp_caps(struct ibv_device_attr_ex *a)
{
	a->odp_caps.general_caps = IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT;
	a->odp_caps.per_transport_caps.rc_odp_caps =
		IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;
	a->odp_caps.per_transport_caps.uc_odp_caps =
		IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_SRQ_RECV;
	a->odp_caps.per_transport_caps.ud_odp_caps =
		IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		IBV_ODP_SUPPORT_SRQ_RECV;
	a->xrc_odp_caps = a->odp_caps.per_transport_caps.rc_odp_caps;
}

/* The extended attributes beyond the legacy ones. */
static void device_ex_caps(struct ibv_device_attr_ex *a)
{
	a->phys_port_cnt_ex = a->orig_attr.phys_port_cnt;
	/* (the legacy flags are the low half of the extended ones) */
	a->device_cap_flags_ex = a->orig_attr.device_cap_flags;
	a->max_dm_size = 0;
	a->cq_mod_caps.max_cq_count = UINT16_MAX;
	a->cq_mod_caps.max_cq_period = SRNIC_MAX_CQ_PERIOD_US;
	/* Completion timestamps: CLOCK_MONOTONIC nanoseconds, a 1 GHz
	 * clock of 64 bits (provider/cq.c) */
	a->completion_timestamp_mask = UINT64_MAX;
	a->hca_core_clock = 1000000;	/* kHz */
	device_odp_caps(a);
}

int srnic_query_device_ex(struct ibv_context *context,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *out, size_t attr_size)
{
	struct srnic_context *ctx = to_sctx(context);
	struct ibv_device_attr_ex a;

	if (input && input->comp_mask)
		return EINVAL;
	memset(&a, 0, sizeof(a));
	device_identity(ctx, &a.orig_attr);
	device_limits(&a.orig_attr);
	device_ex_caps(&a);
	if (attr_size > sizeof(a))
		attr_size = sizeof(a);
	memcpy(out, &a, attr_size);
	return 0;
}

/* The device's clock now (ibv_query_rt_values_ex): CLOCK_MONOTONIC, in
 * the ticks of hca_core_clock (ns) held in tv_nsec, as mlx5 gives its
 * cycles.  comp_mask comes back with what was filled. */
int srnic_query_rt_values(struct ibv_context *context,
			  struct ibv_values_ex *values)
{
	struct timespec t;
	uint32_t filled = 0;

	(void)context;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec =
			(long)((uint64_t)t.tv_sec * 1000000000u +
			       (uint64_t)t.tv_nsec);
		filled |= IBV_VALUES_MASK_RAW_CLOCK;
	}
	values->comp_mask = filled;
	return 0;
}

int srnic_query_port(struct ibv_context *context, uint8_t port,
		     struct ibv_port_attr *attr)
{
	struct srnic_context *ctx = to_sctx(context);
	enum ibv_port_state state = IBV_PORT_ACTIVE;

	if (port != 1)
		return EINVAL;
	/* Before the engine runs there is no link to look at: a configured
	 * port counts as up, as a cabled NIC port would.  Once it runs, the
	 * port is down when every link of the node is. */
	if (ctx->eng && srnic_engine_running(ctx->eng) &&
	    !(srnic_ctx_ports_up(ctx) & srnic_ctx_ports(ctx)))
		state = IBV_PORT_DOWN;
	memset(attr, 0, sizeof(*attr));
	attr->state = state;
	attr->phys_state = state == IBV_PORT_ACTIVE ? 5 /* LinkUp */
						    : 3 /* Disabled */;
	attr->max_mtu = srnic_active_mtu(ctx);
	attr->active_mtu = srnic_active_mtu(ctx);
	attr->gid_tbl_len = SRNIC_GID_TBL_LEN;
	attr->port_cap_flags = 0;
	attr->max_msg_sz = 1u << 31;
	attr->pkey_tbl_len = 1;
	attr->max_vl_num = 1;
	attr->active_width = 2;		/* 4X */
	attr->active_speed = 32;	/* 25 Gb/s a lane: 100GbE class */
	attr->link_layer = IBV_LINK_LAYER_ETHERNET;
	return 0;
}
