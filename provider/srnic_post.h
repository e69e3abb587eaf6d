/* SPDX-License-Identifier: MIT */
/* What the two posting styles (legacy and ibv_wr_*) share. */
#ifndef SRNIC_POST_H
#define SRNIC_POST_H

#include "srnic_provider.h"

#define SRNIC_MAX_MSG_BYTES (1ull << 31)

/* Sends may be posted in RTS and SQD (queued), and in the error states,
 * where they complete as flushed; before RTS they are refused. */
static inline int srnic_sq_state_ok(const struct srnic_qp_queues *qp)
{
	uint32_t s = srnic_qp_state(qp);

	return s == SRNIC_QPS_RTS || s == SRNIC_QPS_SQD ||
			       s == SRNIC_QPS_SQE || s == SRNIC_QPS_ERR
		       ? 0
		       : EINVAL;
}

/* What a QP of this type may send: UC no READ or atomics, UD only SEND. */
static inline bool srnic_post_op_ok(const struct srnic_qp_v *sqp, uint8_t op)
{
	switch (sqp->vqp.qp.qp_type) {
	case IBV_QPT_UD:
		return op == SRNIC_WR_SEND || op == SRNIC_WR_SEND_IMM;
	/* (UC: SEND with invalidate and local invalidate are fine; an
	 * atomic write, like the other atomics, is RC's) */
	case IBV_QPT_UC:
		return !srnic_wr_reads(op) && op != SRNIC_WR_ATOMIC_WRITE;
	case IBV_QPT_XRC_RECV:
		return false;	/* an XRC target sends nothing */
	default:
		return true;
	}
}

/* A UD WQE's destination, from its address handle. */
static inline void srnic_ud_dest(struct srnic_swqe *w, struct ibv_ah *ah,
				 uint32_t qpn, uint32_t qkey)
{
	w->ud = to_sah(ah)->addr;
	w->ud.qpn = qpn & 0xFFFFFF;
	w->ud.qkey = qkey;
}

static inline bool srnic_sq_room(const struct srnic_qp_queues *qp, uint32_t prod)
{
	return prod - __atomic_load_n(&qp->sq_comp, __ATOMIC_ACQUIRE) <=
	       qp->sq_mask;
}

/* What a post is to do about the datapath once its lock is dropped
 * (srnic_sq_go). */
enum srnic_sq_go {
	SRNIC_SQ_NOTHING,	/* nothing was posted */
	SRNIC_SQ_KICK,		/* run it (srnic_engine_kick) */
	SRNIC_SQ_WAKE,		/* only wake the engine's thread */
};

/*
 * Hand the WQEs below prod to the engine (under the post lock).  The
 * caller runs the datapath when the queue had nothing in flight, so that
 * a lone message leaves at once.  Behind WQEs still in flight the
 * program polls for their completions, running the datapath then, and
 * the engine's thread is only told: one iteration a post sent a stream's
 * messages one frame a burst (ib_write_bw 8 B on the default testbed:
 * 1.56x the message rate of edf89c6, tests/bench/against.sh edf89c6 4 3).
 */
static inline enum srnic_sq_go srnic_sq_publish(struct srnic_qp_v *sqp,
						uint32_t prod)
{
	struct srnic_qp_queues *qp = sqp->q;
	bool idle;

	if (prod == qp->sq_prod)
		return SRNIC_SQ_NOTHING;
	idle = qp->sq_prod == __atomic_load_n(&qp->sq_comp, __ATOMIC_ACQUIRE);
	__atomic_store_n(&qp->sq_prod, prod, __ATOMIC_RELEASE);
	srnic_engine_doorbell(sqp->ctx->eng, sqp->qp);
	return idle ? SRNIC_SQ_KICK : SRNIC_SQ_WAKE;
}

static inline void srnic_sq_go(struct srnic_qp_v *sqp, enum srnic_sq_go go)
{
	if (go == SRNIC_SQ_KICK)
		srnic_engine_kick(sqp->ctx->eng);
	else if (go == SRNIC_SQ_WAKE)
		srnic_engine_wake(sqp->ctx->eng);
}

/* Conditional RDMA (api.c): what each WQE of a post gets besides its
 * WR, as srnic_queue.h's SRNIC_WR_COUNTED and SRNIC_WR_COND say. */
struct srnic_post_cond {
	uint8_t flags;
	uint16_t q;
	uint8_t op;
	uint64_t value;
};

int srnic_post_send_cond(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad,
			 const struct srnic_post_cond *cond);

/* The WQE flags of srnic.h's calls that take only IBV_SEND_SIGNALED and
 * IBV_SEND_FENCE (checked by the caller). */
static inline uint8_t srnic_swqe_flags(unsigned int send_flags)
{
	return (uint8_t)((send_flags & IBV_SEND_SIGNALED ? SRNIC_WR_SIGNALED : 0) |
			 (send_flags & IBV_SEND_FENCE ? SRNIC_WR_FENCE : 0));
}

/* One WQE the caller built (its first len bytes) onto sqp's send queue,
 * for srnic.h's calls that post what no ibv_send_wr says: 0, or an errno
 * as ibv_post_send's (EINVAL: the QP's state; ENOMEM: the queue full). */
int srnic_post_swqe(struct srnic_qp_v *sqp, const struct srnic_swqe *w,
		    size_t len);

#endif
