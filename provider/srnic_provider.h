/* SPDX-License-Identifier: MIT */
/*
 * The verbs face of srnic: the objects libibverbs hands us, each wrapping
 * the engine object that does the work.
 */
#ifndef SRNIC_PROVIDER_H
#define SRNIC_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "verbs_private.h"
#include "srnic_engine.h"

#define SRNIC_GID_TBL_LEN 4	/* entries the sysfs tree has (see ./srnic) */
#define SRNIC_MAX_QP_WR 16384
#define SRNIC_MAX_CQE (1 << 20)
#define SRNIC_MAX_PD 65536

struct srnic_device {
	struct verbs_device vdev;
};

struct srnic_context {
	struct verbs_context vctx;
	struct srnic_config cfg;
	struct srnic_engine *eng;	/* started by the first PD */
	uint8_t dev;			/* which of the node's adapters it is
					 * (srnic<dev>): its QPs and keys */
	pthread_mutex_t lock;
	int async_pipe[2];
	uint32_t next_pd;
	struct srnic_context *next;	/* events.c: contexts with a pipe */
	void **kept;			/* destroyed objects events still name */
	unsigned nkept;
};

struct srnic_pd {
	struct ibv_pd ibv_pd;
	uint32_t handle;	/* the engine's PD: a parent domain has its PD's */
	/* a parent domain (ibv_alloc_parent_domain): the PD it stands for,
	 * its thread domain and allocators (kept: srnic's queues are the
	 * engine's memory, so it never calls them, which verbs allows) */
	struct ibv_pd *protection;
	struct ibv_td *td;
};

struct srnic_cq_v {
	struct verbs_cq vcq;
	struct srnic_cq *cq;
	struct srnic_chan *channel;	/* channel.c's, or NULL */
	/* events of its own put in the channel's pipe (the datapath's
	 * count, atomic) and read back (under channel.c's lock, as dead
	 * and dead_next are); destroyed while some are left (dead), it is
	 * freed once they are read, or its channel destroyed */
	uint32_t piped;
	uint32_t piped_read;
	bool dead;
	struct srnic_cq_v *dead_next;	/* its channel's other dead CQs */
	int ex;			/* created with create_cq_ex */
	/* create_cq_ex polling state */
	struct srnic_cqe cur;
	uint64_t cur_ts;		/* its time (a CQ with times) */
	int cur_valid;
	/* CLOCK_REALTIME less CLOCK_MONOTONIC when the CQ was made, in ns:
	 * what turns a completion's time into wall-clock time */
	int64_t wall_offset;
};

struct srnic_qp_v {
	struct verbs_qp vqp;
	struct srnic_qp *qp;		/* the engine's, opaque */
	struct srnic_qp_queues *q;	/* its queues: what posting sees */
	struct srnic_context *ctx;
	struct ibv_qp_cap cap;
	struct ibv_qp_attr attr;	/* what modify_qp was given */
	int attr_mask;
	/* ibv_wr_* batch state */
	uint32_t events_reported;	/* under vqp.qp.mutex */
	uint32_t wr_prod;
	int wr_err;
	struct srnic_swqe *wr_cur;
	uint32_t ud_max;		/* UD: largest datagram (path MTU) */
	/* srnic_post_fifo_write's staging ring (fifo_write.c), made at its
	 * first use */
	struct srnic_fifo_stage *stage;
};

struct srnic_srq_v {
	struct ibv_srq ibv_srq;
	struct srnic_srq *srq;
	struct srnic_context *ctx;
	struct ibv_xrcd *xrcd;		/* an XRC SRQ's domain */
	uint32_t max_wr, max_sge;
	uint32_t events_reported;	/* under ibv_srq.mutex */
};

struct srnic_ah_v {
	struct ibv_ah ibv_ah;
	struct ibv_ah_attr attr;
	struct srnic_ud_addr addr;	/* what the GID resolved to */
};

/* The provider's one clock, for waits and ages (a program's threads, not
 * the engine's TSC): monotonic nanoseconds. */
static inline uint64_t srnic_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline struct srnic_ah_v *to_sah(struct ibv_ah *ah)
{
	return (struct srnic_ah_v *)ah;
}

static inline struct srnic_srq_v *to_ssrq(struct ibv_srq *srq)
{
	return (struct srnic_srq_v *)srq;
}

static inline struct srnic_context *to_sctx(struct ibv_context *c)
{
	return (struct srnic_context *)((char *)c -
					offsetof(struct srnic_context,
						 vctx.context));
}

/* The engine's rights (SRNIC_ACCESS_*) for verbs access flags: regions',
 * windows' and QPs' alike; flags it has no right for are the caller's to
 * refuse. */
static inline uint32_t srnic_rights_of(int access)
{
	return (access & IBV_ACCESS_LOCAL_WRITE ? SRNIC_ACCESS_LOCAL_WRITE : 0) |
	       (access & IBV_ACCESS_REMOTE_WRITE ? SRNIC_ACCESS_REMOTE_WRITE
						 : 0) |
	       (access & IBV_ACCESS_REMOTE_READ ? SRNIC_ACCESS_REMOTE_READ : 0) |
	       (access & IBV_ACCESS_REMOTE_ATOMIC ? SRNIC_ACCESS_REMOTE_ATOMIC
						  : 0) |
	       (access & IBV_ACCESS_MW_BIND ? SRNIC_ACCESS_MW_BIND : 0) |
	       (access & IBV_ACCESS_ON_DEMAND ? SRNIC_ACCESS_ON_DEMAND : 0);
}

static inline struct srnic_pd *to_spd(struct ibv_pd *pd)
{
	return (struct srnic_pd *)pd;
}

static inline struct srnic_cq_v *to_scq(struct ibv_cq *cq)
{
	return (struct srnic_cq_v *)cq;
}

static inline struct srnic_qp_v *to_sqp(struct ibv_qp *qp)
{
	return (struct srnic_qp_v *)qp;
}

/* events.c: the context's async event pipe; -1 with errno on failure. */
int srnic_events_open(struct srnic_context *ctx);
void srnic_events_close(struct srnic_context *ctx);
/* A destroyed QP or SRQ that an unacknowledged event still names: freed
 * with the context (or at once if that cannot be arranged). */
void srnic_keep_until_close(struct srnic_context *ctx, void *obj);

/* The process's engine (memory registration; nothing runs yet), and the
 * same with its datapath started (CQs, QPs, SRQs, address handles: the
 * datapath starts with the first of them).  NULL with errno set on
 * failure. */
struct srnic_engine *srnic_ctx_engine(struct srnic_context *ctx);
/* Whether a device of libibverbs' is one of this provider's. */
bool srnic_device_is_ours(struct ibv_device *device);

/* include/srnic.h's calls, exported by name (libsrnic.map); each answers
 * EOPNOTSUPP for an object that is not a srnic device's. */
#define SRNIC_API __attribute__((visibility("default")))
static inline bool srnic_context_ours(const struct ibv_context *context)
{
	/* (a context of no device, as a program may make up: not ours) */
	return context && context->device &&
	       srnic_device_is_ours(context->device);
}
struct srnic_engine *srnic_ctx_start(struct srnic_context *ctx);
/* fifo_write.c: the QP's staging ring goes (its QP is gone). */
void srnic_fifo_stage_free(struct srnic_qp_v *sqp);

/* device.c: the node's ports that are the context's adapter's, and
 * those whose link is up (a bit a port) */
uint32_t srnic_ctx_ports(const struct srnic_context *ctx);
uint32_t srnic_ctx_ports_up(const struct srnic_context *ctx);

/* qp.c: a member's QP of slot slot of the service at svc_ipv4 (the
 * checks are the caller's: include/srnic.h's srnic_svc_create_qp) */
struct ibv_qp *srnic_svc_qp_new(struct ibv_pd *pd,
				struct ibv_qp_init_attr *attr,
				uint32_t svc_ipv4, unsigned slot);

/* pd_mr.c: a service's region of slot slot (include/srnic.h's
 * srnic_svc_reg_mr checks the rest) */
struct ibv_mr *srnic_svc_mr_new(struct ibv_pd *pd, void *addr, size_t length,
				int access, uint32_t svc_ipv4, unsigned slot);

/* mr_cache.c: pd is about to go; its idle cached regions go first.
 * EBUSY while one is held. */
int srnic_mr_cache_drop_pd(struct ibv_pd *pd);

/* channel.c: the CQ's end of its completion channel (0, or an errno),
 * and its closing once the datapath has let go of the CQ */
int srnic_cq_channel(struct srnic_context *ctx, struct srnic_cq_v *scq,
		     struct ibv_comp_channel *ch);
void srnic_cq_channel_close(struct srnic_cq_v *scq, int fd);

/* cq.c: verbs' status for the engine's (enum srnic_wc_status) */
enum ibv_wc_status srnic_wc_status_of(uint8_t status);

/* device.c */
int srnic_query_device_ex(struct ibv_context *context,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size);
int srnic_query_rt_values(struct ibv_context *context,
			  struct ibv_values_ex *values);
int srnic_query_port(struct ibv_context *context, uint8_t port,
		     struct ibv_port_attr *attr);
enum ibv_mtu srnic_active_mtu(const struct srnic_context *ctx);

/* pd_mr.c */
struct ibv_pd *srnic_alloc_pd(struct ibv_context *context);
struct ibv_pd *srnic_alloc_parent_domain(struct ibv_context *context,
					 struct ibv_parent_domain_init_attr *attr);
struct ibv_td *srnic_alloc_td(struct ibv_context *context,
			      struct ibv_td_init_attr *attr);
int srnic_dealloc_td(struct ibv_td *td);
int srnic_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *srnic_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			    uint64_t hca_va, int access);
int srnic_dereg_mr(struct verbs_mr *vmr);
/* XRC domains (xrc.c): the handle the engine knows one by, and the count
 * of its SRQs and target QPs, which keep it open. */
struct ibv_xrcd *srnic_open_xrcd(struct ibv_context *context,
				 struct ibv_xrcd_init_attr *attr);
int srnic_close_xrcd(struct ibv_xrcd *xrcd);
uint32_t srnic_xrcd_handle(struct ibv_xrcd *xrcd);
void srnic_xrcd_use(struct ibv_xrcd *xrcd, int delta);
int srnic_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		    uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sges);
struct ibv_mw *srnic_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int srnic_dealloc_mw(struct ibv_mw *mw);
int srnic_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		  struct ibv_mw_bind *mw_bind);
struct srnic_swqe;
int srnic_bind_wqe(struct srnic_qp_v *sqp, struct srnic_swqe *w,
		   struct ibv_mw *mw, uint32_t rkey,
		   const struct ibv_mw_bind_info *bi, enum ibv_mw_type type);
int srnic_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		   void *addr, size_t length, int access);

/* cq.c */
struct ibv_cq *srnic_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel, int vector);
struct ibv_cq_ex *srnic_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr);
int srnic_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int srnic_destroy_cq(struct ibv_cq *cq);
int srnic_resize_cq(struct ibv_cq *cq, int cqe);
int srnic_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
/* ibv_modify_cq's cq_period, at most (and cq_count is 16 bits) */
#define SRNIC_MAX_CQ_PERIOD_US 50000
int srnic_req_notify_cq(struct ibv_cq *cq, int solicited_only);

/* qp.c */
struct ibv_qp *srnic_create_qp(struct ibv_pd *pd,
			       struct ibv_qp_init_attr *attr);
struct ibv_qp *srnic_create_qp_ex(struct ibv_context *context,
				  struct ibv_qp_init_attr_ex *attr);
int srnic_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
int srnic_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		   struct ibv_qp_init_attr *init);
int srnic_destroy_qp(struct ibv_qp *qp);

/* qp_state.c: the verbs QP state machine */
int srnic_qp_check_modify(const struct srnic_context *ctx,
			  enum ibv_qp_type type, enum ibv_qp_state cur,
			  const struct ibv_qp_attr *attr, int mask);

/* post.c */
int srnic_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad);
/* A receive WQE from a verbs work request (its checks already made). */
void srnic_rwqe_fill(struct srnic_rwqe *r, const struct ibv_recv_wr *wr);

/* srq.c */
struct ibv_srq *srnic_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr);
int srnic_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		     int mask);
int srnic_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int srnic_destroy_srq(struct ibv_srq *srq);
struct ibv_srq *srnic_create_srq_ex(struct ibv_context *context,
				    struct ibv_srq_init_attr_ex *attr);
int srnic_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
int srnic_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad);

int srnic_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad);

/* ah.c */
struct ibv_ah *srnic_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int srnic_destroy_ah(struct ibv_ah *ah);
int srnic_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
		       uint16_t lid);
int srnic_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
		       uint16_t lid);

/* qp_ex.c */
void srnic_qp_ex_init(struct srnic_qp_v *sqp, uint64_t send_ops);

#endif
