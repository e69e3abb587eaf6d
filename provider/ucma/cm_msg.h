/* SPDX-License-Identifier: MIT */
/*
 * The connection exchange between two nodes' rdma_cm (docs/wire-protocol.md,
 * "Connection manager"): IB CM's messages, carried over one TCP connection
 * from the active side's port to the passive side's, each the TCP twin of
 * the port its id holds in the RDMA port space (RDMA port P is TCP port
 * P ^ 0x4000, ucma_dev.c).
 *
 * Every message has the same shape, a header and one fixed body, so one
 * decoder checks them all: pure functions, run by whichever thread holds
 * the bytes, and fuzzed (tests/fuzz).
 */
#ifndef SRNIC_CM_MSG_H
#define SRNIC_CM_MSG_H

#include <stdint.h>

#define CM_MAGIC 0x5352434du	/* "SRCM" */
#define CM_VERSION 2	/* 2: a request's private data is IB CM's whole field */

enum cm_type {
	CM_REQ = 1,	/* connect: the active side's QP */
	CM_REP,		/* accept: the passive side's QP */
	CM_RTU,		/* ready to use: the active side is connected */
	CM_REJ,		/* reject, with a reason */
	CM_DREQ,	/* disconnect */
	CM_DREP,	/* disconnect answered */
	CM_SIDR_REQ,	/* UD: which QP serves this port? */
	CM_SIDR_REP,	/* UD: this one (status 0), or none */
	CM_TYPE_MAX,
};

/* Private data as IB CM carries it, each message's whole field: a
 * request's starts with rdma_cm's header (36 bytes, ucma_ib.c), which an
 * IP id's program never sees. */
#define CM_MAX_PD 216
static inline unsigned cm_max_pd(unsigned type)
{
	switch (type) {
	case CM_REQ: return 92;
	case CM_REP: return 196;
	case CM_REJ: return 148;
	case CM_SIDR_REQ: return 216;
	case CM_SIDR_REP: return 136;
	default: return 0;
	}
}

struct cm_msg {
	uint8_t type;
	uint8_t qp_type;	/* REQ: enum ibv_qp_type of the sender */
	uint32_t qpn, psn, qkey;
	uint8_t resp_res, init_depth, retry, rnr_retry;
	uint8_t srq, flow_control;
	uint8_t status;		/* REJ: reason; SIDR REP: status */
	uint8_t pd_len;
	uint8_t pd[CM_MAX_PD];
};

#define CM_HDR_LEN 8
#define CM_FIXED_LEN 24		/* the body before the private data */
#define CM_MSG_MAX (CM_HDR_LEN + CM_FIXED_LEN + CM_MAX_PD)

/* Writes m into buf (CM_MSG_MAX bytes): its length, or 0 if m is not a
 * message that may be sent (unknown type, private data too long). */
unsigned cm_msg_encode(const struct cm_msg *m, uint8_t *buf);

/* One message from the first len bytes of buf: the bytes it took, 0 if
 * more are needed, -1 if they are not a message (the connection is then
 * dropped: nothing of a malformed peer is trusted). */
int cm_msg_decode(const uint8_t *buf, unsigned len, struct cm_msg *m);

#endif
