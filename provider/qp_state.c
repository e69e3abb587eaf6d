/* SPDX-License-Identifier: MIT */
/*
 * The verbs QP state machine for RC, UC, UD and XRC QPs: which transitions
 * exist, which attributes each one requires and which it allows, and the
 * range of every value.  Anything else is EINVAL, as a hardware provider's
 * kernel driver would answer.
 */
#include <errno.h>

#include "srnic_provider.h"

struct transition {
	int valid;
	int required;	/* besides IBV_QP_STATE */
	int optional;
};

#define RTR_REQ                                                             \
	(IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |      \
	 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RTS_REQ                                                             \
	(IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |  \
	 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)
#define RTS_OPT                                                             \
	(IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |     \
	 IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE)

/* [from][to], one table a QP type. */
static const struct transition rc_table[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_INIT] = {1, IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS, 0},
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_INIT] = {1, 0, IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS},
		[IBV_QPS_RTR] = {1, RTR_REQ, IBV_QP_ALT_PATH |
				 IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX},
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RTS] = {1, RTS_REQ, RTS_OPT},
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RTS] = {1, 0, RTS_OPT},
		[IBV_QPS_SQD] = {1, 0, IBV_QP_EN_SQD_ASYNC_NOTIFY},
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RTS] = {1, 0, RTS_OPT},
		[IBV_QPS_SQD] = {1, 0, IBV_QP_ACCESS_FLAGS |
				 IBV_QP_MIN_RNR_TIMER | IBV_QP_TIMEOUT |
				 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				 IBV_QP_MAX_QP_RD_ATOMIC |
				 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_AV},
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RTS] = {1, 0, IBV_QP_CUR_STATE |
				 IBV_QP_ACCESS_FLAGS},
	},
};

/* UC: no READ or atomics, no ACKs, so no responder resources, RNR timer
 * or retries. */
#define UC_RTS_OPT                                                          \
	(IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |          \
	 IBV_QP_PATH_MIG_STATE)
static const struct transition uc_table[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_INIT] = {1, IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS, 0},
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_INIT] = {1, 0, IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS},
		[IBV_QPS_RTR] = {1, IBV_QP_AV | IBV_QP_PATH_MTU |
				 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN,
				 IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
				 IBV_QP_PKEY_INDEX},
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RTS] = {1, IBV_QP_SQ_PSN, UC_RTS_OPT},
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RTS] = {1, 0, UC_RTS_OPT},
		[IBV_QPS_SQD] = {1, 0, IBV_QP_EN_SQD_ASYNC_NOTIFY},
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RTS] = {1, 0, UC_RTS_OPT},
		[IBV_QPS_SQD] = {1, 0, IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX |
				 IBV_QP_AV},
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RTS] = {1, 0, IBV_QP_CUR_STATE |
				 IBV_QP_ACCESS_FLAGS},
	},
};

/* UD: no peer, so no path; a Q_Key instead of access rights. */
static const struct transition ud_table[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_INIT] = {1, IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_QKEY, 0},
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_INIT] = {1, 0, IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_QKEY},
		[IBV_QPS_RTR] = {1, 0, IBV_QP_PKEY_INDEX | IBV_QP_QKEY},
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RTS] = {1, IBV_QP_SQ_PSN,
				 IBV_QP_CUR_STATE | IBV_QP_QKEY},
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RTS] = {1, 0, IBV_QP_CUR_STATE | IBV_QP_QKEY},
		[IBV_QPS_SQD] = {1, 0, IBV_QP_EN_SQD_ASYNC_NOTIFY},
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RTS] = {1, 0, IBV_QP_CUR_STATE | IBV_QP_QKEY},
		[IBV_QPS_SQD] = {1, 0, IBV_QP_PKEY_INDEX | IBV_QP_QKEY},
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RTS] = {1, 0, IBV_QP_CUR_STATE | IBV_QP_QKEY},
	},
};

static int check_values(const struct srnic_context *ctx,
			const struct ibv_qp_attr *a, int mask)
{
	/* (any Q_Key: the high bit only matters in a send work request) */
	if ((mask & IBV_QP_PORT) && a->port_num != 1)
		return EINVAL;
	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
		return EINVAL;
	/* (ON_DEMAND is a region's flag; programs that give a QP the flags
	 * of their regions pass it, rdma-core's tests among them, and the
	 * kernel's drivers let it by: it means nothing to a QP) */
	if ((mask & IBV_QP_ACCESS_FLAGS) &&
	    (a->qp_access_flags & ~(IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_ATOMIC |
				    IBV_ACCESS_ON_DEMAND)))
		return EINVAL;
	if ((mask & IBV_QP_PATH_MTU) &&
	    (a->path_mtu < IBV_MTU_256 || a->path_mtu > srnic_active_mtu(ctx)))
		return EINVAL;
	if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num >= (1u << 24))
		return EINVAL;
	if ((mask & IBV_QP_AV)) {
		/* Ethernet link layer: the peer is named by its GID. */
		if (!a->ah_attr.is_global || a->ah_attr.port_num > 1 ||
		    a->ah_attr.grh.sgid_index >= SRNIC_GID_TBL_LEN)
			return EINVAL;
	}
	if ((mask & IBV_QP_TIMEOUT) && a->timeout > 31)
		return EINVAL;
	if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7)
		return EINVAL;
	if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7)
		return EINVAL;
	if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return EINVAL;
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) &&
	    a->max_rd_atomic > SRNIC_MAX_RD_ATOMIC)
		return EINVAL;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
	    a->max_dest_rd_atomic > SRNIC_MAX_RD_ATOMIC)
		return EINVAL;
	if ((mask & (IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE)))
		return EINVAL;	/* no alternate path: it has all ports */
	if ((mask & IBV_QP_RQ_PSN) && a->rq_psn >= (1u << 24))
		return EINVAL;
	if ((mask & IBV_QP_SQ_PSN) && a->sq_psn >= (1u << 24))
		return EINVAL;
	return 0;
}

int srnic_qp_check_modify(const struct srnic_context *ctx,
			  enum ibv_qp_type type, enum ibv_qp_state cur,
			  const struct ibv_qp_attr *attr, int mask)
{
	enum ibv_qp_state next = mask & IBV_QP_STATE ? attr->qp_state : cur;
	const struct transition *t;
	struct transition xrc;

	if ((mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != cur)
		return EINVAL;
	if (next > IBV_QPS_ERR || cur > IBV_QPS_ERR)
		return EINVAL;
	/* Any state may go to RESET or ERR, with nothing else. */
	if ((mask & IBV_QP_STATE) &&
	    (next == IBV_QPS_RESET || next == IBV_QPS_ERR)) {
		if (mask & ~IBV_QP_STATE)
			return EINVAL;
		return 0;
	}
	if (!(mask & IBV_QP_STATE)) {
		/* Changing attributes in place is the X -> X transition. */
		next = cur;
	}
	t = type == IBV_QPT_UC	 ? &uc_table[cur][next]
	    : type == IBV_QPT_UD ? &ud_table[cur][next]
				 : &rc_table[cur][next];
	if (type == IBV_QPT_XRC_SEND || type == IBV_QPT_XRC_RECV) {
		/* XRC as the kernel has it: RC's table, but an initiator
		 * answers nothing, so its RTR needs no responder resources
		 * or RNR timer, and a target sends nothing, so its RTS needs
		 * only SQ_PSN and TIMEOUT. */
		xrc = *t;
		if (type == IBV_QPT_XRC_SEND && cur == IBV_QPS_INIT &&
		    next == IBV_QPS_RTR) {
			xrc.required &= ~(IBV_QP_MAX_DEST_RD_ATOMIC |
					  IBV_QP_MIN_RNR_TIMER);
			xrc.optional |= IBV_QP_MAX_DEST_RD_ATOMIC |
					IBV_QP_MIN_RNR_TIMER;
		}
		if (type == IBV_QPT_XRC_RECV && cur == IBV_QPS_RTR &&
		    next == IBV_QPS_RTS) {
			xrc.required = IBV_QP_SQ_PSN | IBV_QP_TIMEOUT;
			xrc.optional |= IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					IBV_QP_MAX_QP_RD_ATOMIC;
		}
		t = &xrc;
	}
	if (!t->valid)
		return EINVAL;
	/* (IBV_QP_CUR_STATE only where a table allows it: into RTS) */
	if ((mask & t->required) != t->required ||
	    (mask & ~(t->required | t->optional | IBV_QP_STATE)))
		return EINVAL;
	return check_values(ctx, attr, mask);
}
