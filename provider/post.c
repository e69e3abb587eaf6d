/* SPDX-License-Identifier: MIT */
/*
 * The legacy post calls: check each work request the way verbs promises
 * (an error returns at once with *bad_wr, nothing after it is posted), put
 * it in the ring, and ring the engine's doorbell once per call.
 */
#include <errno.h>
#include <string.h>

#include "srnic.h"
#include "srnic_provider.h"
#include "srnic_post.h"

static const int8_t wr_opcode[] = {
	[IBV_WR_RDMA_WRITE] = SRNIC_WR_WRITE,
	[IBV_WR_RDMA_WRITE_WITH_IMM] = SRNIC_WR_WRITE_IMM,
	[IBV_WR_SEND] = SRNIC_WR_SEND,
	[IBV_WR_SEND_WITH_IMM] = SRNIC_WR_SEND_IMM,
	[IBV_WR_RDMA_READ] = SRNIC_WR_READ,
	[IBV_WR_ATOMIC_CMP_AND_SWP] = SRNIC_WR_ATOMIC_CAS,
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = SRNIC_WR_ATOMIC_FAA,
	[IBV_WR_LOCAL_INV] = SRNIC_WR_LOCAL_INV,
	[IBV_WR_SEND_WITH_INV] = SRNIC_WR_SEND_INV,
	[IBV_WR_BIND_MW] = SRNIC_WR_BIND_MW,
	[IBV_WR_ATOMIC_WRITE] = SRNIC_WR_ATOMIC_WRITE,
};

/* The engine's opcode for a verbs one, or -1 for one it does not know. */
static inline int send_op_of(enum ibv_wr_opcode opcode)
{
	int op = (unsigned)opcode < sizeof(wr_opcode) / sizeof(wr_opcode[0])
			 ? wr_opcode[opcode]
			 : -1;

	/* (the table's holes are 0, SRNIC_WR_SEND: only IBV_WR_SEND is) */
	if (op == SRNIC_WR_SEND && opcode != IBV_WR_SEND)
		return -1;
	return op;
}

/* A type 2 window's bind posted as a WR (type 1 binds through
 * ibv_bind_mw): it carries no SGEs, only the window and what it binds. */
static inline int build_bind(struct srnic_qp_v *sqp,
			     const struct ibv_send_wr *wr, struct srnic_swqe *w)
{
	memset(w, 0, offsetof(struct srnic_swqe, sge));
	w->wr_id = wr->wr_id;
	if (wr->send_flags & IBV_SEND_SIGNALED)
		w->flags |= SRNIC_WR_SIGNALED;
	return srnic_bind_wqe(sqp, w, wr->bind_mw.mw, wr->bind_mw.rkey,
			      &wr->bind_mw.bind_info, IBV_MW_TYPE_2);
}

/* The message's length: the sum of its SGEs, which must fit the QP and
 * one message.  0 or EINVAL. */
static inline int message_length(const struct srnic_qp_v *sqp,
				 const struct ibv_send_wr *wr, uint64_t *total)
{
	uint64_t sum = 0;
	int i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > sqp->q->max_send_sge)
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		sum += wr->sg_list[i].length;
	if (sum > SRNIC_MAX_MSG_BYTES)
		return EINVAL;
	*total = sum;
	return 0;
}

/* What every data-moving WQE has: id, opcode, flags, length, immediate,
 * and the remote address of the ops that name one. */
static inline void fill_header(struct srnic_swqe *w,
			       const struct ibv_send_wr *wr, int op,
			       uint64_t total)
{
	w->wr_id = wr->wr_id;
	w->opcode = op;
	w->flags = 0;
	if (wr->send_flags & IBV_SEND_SIGNALED)
		w->flags |= SRNIC_WR_SIGNALED;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		w->flags |= SRNIC_WR_SOLICITED;
	if (wr->send_flags & IBV_SEND_FENCE)
		w->flags |= SRNIC_WR_FENCE;
	if (wr->send_flags & SRNIC_SEND_REMOTE_NOTIFY)
		w->flags |= SRNIC_WR_NOTIFY;	/* (checked: build_send) */
	w->length = total;
	w->imm = (op == SRNIC_WR_SEND_IMM || op == SRNIC_WR_WRITE_IMM)
			 ? wr->imm_data
			 : 0;
	/* wr.rdma is one member of a union: a SEND's is whatever the
	 * caller left there (UCX leaves it unset), and a SEND carries no
	 * address.  Copying it anyway can make va + length wrap, and the
	 * peer then drops every try of the SEND as malformed. */
	w->remote_addr = 0;
	w->rkey = 0;
	if (op == SRNIC_WR_WRITE || op == SRNIC_WR_WRITE_IMM ||
	    op == SRNIC_WR_READ || op == SRNIC_WR_ATOMIC_WRITE) {
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
	}
}

/* The checks and fields particular to the atomic write and the two
 * invalidates.  0 or EINVAL. */
static inline int fill_write_inv(struct srnic_swqe *w,
				 const struct ibv_send_wr *wr, int op,
				 uint64_t total)
{
	/* An atomic write: the SGEs (or inline data) hold the 8 bytes, for
	 * 8 aligned remote bytes. */
	if (op == SRNIC_WR_ATOMIC_WRITE &&
	    (total != 8 || (w->remote_addr & 7)))
		return EINVAL;
	if (op == SRNIC_WR_SEND_INV || op == SRNIC_WR_LOCAL_INV)
		w->rkey = wr->invalidate_rkey;
	if (op == SRNIC_WR_LOCAL_INV &&
	    (total || (wr->send_flags & IBV_SEND_INLINE)))
		return EINVAL;	/* it moves no data */
	return 0;
}

/* Where the message goes beyond the QP's connection: an XRC send's SRQ,
 * a UD send's address handle.  0 or EINVAL. */
static inline int fill_destination(const struct srnic_qp_v *sqp,
				   struct srnic_swqe *w,
				   const struct ibv_send_wr *wr, uint64_t total)
{
	if (sqp->vqp.qp.qp_type == IBV_QPT_XRC_SEND) {
		if (!wr->qp_type.xrc.remote_srqn)
			return EINVAL;	/* every XRC send names its SRQ */
		w->xrc_srqn = wr->qp_type.xrc.remote_srqn;
	}
	if (sqp->vqp.qp.qp_type == IBV_QPT_UD) {
		if (!wr->wr.ud.ah || total > sqp->ud_max)
			return EINVAL;
		srnic_ud_dest(w, wr->wr.ud.ah, wr->wr.ud.remote_qpn,
			      wr->wr.ud.remote_qkey);
	}
	return 0;
}

/* Compare-and-swap and fetch-and-add: 8 aligned remote bytes, the old
 * value landing in one SGE of 8 bytes.  0 or EINVAL. */
static inline int fill_atomic(struct srnic_swqe *w,
			      const struct ibv_send_wr *wr, uint64_t total)
{
	if (wr->num_sge != 1 || total != 8 ||
	    (wr->wr.atomic.remote_addr & 7) ||
	    (wr->send_flags & IBV_SEND_INLINE))
		return EINVAL;
	w->remote_addr = wr->wr.atomic.remote_addr;
	w->rkey = wr->wr.atomic.rkey;
	w->compare_add = wr->wr.atomic.compare_add;
	w->swap = wr->wr.atomic.swap;
	return 0;
}

/* The payload: copied into the WQE when inline (the caller's buffers
 * may be reused as soon as the post returns), else the SGEs as given.
 * 0 or EINVAL. */
static inline int fill_payload(const struct srnic_qp_v *sqp,
			       struct srnic_swqe *w,
			       const struct ibv_send_wr *wr, int op,
			       uint64_t total)
{
	int i;

	if (wr->send_flags & IBV_SEND_INLINE) {
		uint32_t off = 0;

		if (srnic_wr_reads(op) || total > sqp->q->max_inline)
			return EINVAL;
		w->flags |= SRNIC_WR_INLINE;
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(w->inline_data + off,
			       (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			off += wr->sg_list[i].length;
		}
		w->num_sge = 0;
		return 0;
	}
	w->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		w->sge[i].addr = wr->sg_list[i].addr;
		w->sge[i].length = wr->sg_list[i].length;
		w->sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

/* One send WR into the WQE at w, checked as verbs promises; the WQE
 * counts only once the caller publishes it, so an error may leave it
 * half written.  0 or an errno value. */
static inline int build_send(struct srnic_qp_v *sqp,
			     const struct ibv_send_wr *wr,
			     struct srnic_swqe *w)
{
	int op = send_op_of(wr->opcode);
	uint64_t total;
	int rc;

	if (op < 0 || !srnic_post_op_ok(sqp, op))
		return EINVAL;
	/* (completion at both ends: an RC WRITE's or READ's only) */
	if ((wr->send_flags & SRNIC_SEND_REMOTE_NOTIFY) &&
	    ((op != SRNIC_WR_WRITE && op != SRNIC_WR_READ) ||
	     sqp->vqp.qp.qp_type != IBV_QPT_RC))
		return EINVAL;
	if (op == SRNIC_WR_BIND_MW)
		return build_bind(sqp, wr, w);
	rc = message_length(sqp, wr, &total);
	if (rc)
		return rc;
	fill_header(w, wr, op, total);
	rc = fill_write_inv(w, wr, op, total);
	if (!rc)
		rc = fill_destination(sqp, w, wr, total);
	if (!rc && srnic_wr_is_atomic(op))
		rc = fill_atomic(w, wr, total);
	if (rc)
		return rc;
	return fill_payload(sqp, w, wr, op, total);
}

void srnic_rwqe_fill(struct srnic_rwqe *r, const struct ibv_recv_wr *wr)
{
	uint64_t total = 0;
	int i;

	r->wr_id = wr->wr_id;
	r->num_sge = wr->num_sge;
	r->told = 0;
	for (i = 0; i < wr->num_sge; i++) {
		r->sge[i].addr = wr->sg_list[i].addr;
		r->sge[i].length = wr->sg_list[i].length;
		r->sge[i].lkey = wr->sg_list[i].lkey;
		total += wr->sg_list[i].length;
	}
	r->length = total > UINT32_MAX ? UINT32_MAX : total;
}

/* The send WRs of wr's list into the send queue, each marked as cond
 * says (conditional RDMA) when it is not NULL. */
static inline int post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			    struct ibv_send_wr **bad,
			    const struct srnic_post_cond *cond)
{
	struct srnic_qp_v *sqp = to_sqp(ibqp);
	struct srnic_qp_queues *qp = sqp->q;
	uint32_t prod;
	enum srnic_sq_go go;
	int rc = 0;

	pthread_spin_lock(&qp->sq_lock);
	rc = srnic_sq_state_ok(qp);
	prod = qp->sq_prod;
	for (; wr && !rc; wr = wr->next) {
		struct srnic_swqe *w = &qp->sq[prod & qp->sq_mask];

		if (!srnic_sq_room(qp, prod)) {
			rc = ENOMEM;
			break;
		}
		rc = build_send(sqp, wr, w);
		if (rc)
			break;
		if (cond) {
			w->flags |= cond->flags;
			w->cond.q = cond->q;
			w->cond.op = cond->op;
			w->cond.value = cond->value;
		}
		prod++;
	}
	if (rc && bad)
		*bad = wr;
	go = srnic_sq_publish(sqp, prod);
	pthread_spin_unlock(&qp->sq_lock);
	srnic_sq_go(sqp, go);
	return rc;
}

int srnic_post_swqe(struct srnic_qp_v *sqp, const struct srnic_swqe *w,
		    size_t len)
{
	struct srnic_qp_queues *qp = sqp->q;
	uint32_t prod;
	enum srnic_sq_go go;
	int rc;

	pthread_spin_lock(&qp->sq_lock);
	rc = srnic_sq_state_ok(qp);
	prod = qp->sq_prod;
	if (!rc && !srnic_sq_room(qp, prod))
		rc = ENOMEM;
	if (!rc)
		memcpy(&qp->sq[prod++ & qp->sq_mask], w, len);
	go = srnic_sq_publish(sqp, prod);
	pthread_spin_unlock(&qp->sq_lock);
	srnic_sq_go(sqp, go);
	return rc;
}

int srnic_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad)
{
	return post_send(ibqp, wr, bad, NULL);
}

int srnic_post_send_cond(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad,
			 const struct srnic_post_cond *cond)
{
	return post_send(ibqp, wr, bad, cond);
}

int srnic_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad)
{
	struct srnic_qp_v *sqp = to_sqp(ibqp);
	struct srnic_qp_queues *qp = sqp->q;
	uint32_t state = srnic_qp_state(qp), prod;
	bool kick = false;
	int rc = 0;

	if (qp->srq || ibqp->qp_type == IBV_QPT_XRC_SEND ||
	    ibqp->qp_type == IBV_QPT_XRC_RECV) {
		/* Its receives come from an SRQ, and its ring is the
		 * engine's (or it has none): not a field of it may be
		 * touched here. */
		if (bad)
			*bad = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->rq_lock);
	if (state == SRNIC_QPS_RESET)
		rc = EINVAL;
	prod = qp->rq_prod;
	for (; wr && !rc; wr = wr->next) {
		if (prod - __atomic_load_n(&qp->rq_comp, __ATOMIC_ACQUIRE) >
		    qp->rq_mask) {
			rc = ENOMEM;
			break;
		}
		if (wr->num_sge < 0 ||
		    (uint32_t)wr->num_sge > qp->max_recv_sge) {
			rc = EINVAL;
			break;
		}
		srnic_rwqe_fill(&qp->rq[prod & qp->rq_mask], wr);
		prod++;
	}
	if (rc && bad)
		*bad = wr;
	if (prod != qp->rq_prod) {
		__atomic_store_n(&qp->rq_prod, prod, __ATOMIC_RELEASE);
		/* In the error state receives complete as flushed, which
		 * the engine does.  The fence pairs with the one in
		 * srnic_qp_to_error: either it sees our receives, or we see
		 * its state. */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (srnic_qp_state(qp) == SRNIC_QPS_ERR) {
			srnic_engine_doorbell(sqp->ctx->eng, sqp->qp);
			kick = true;
		}
		/* (UC: the peer may wait for these; the engine tells it.
		 * The same fence: the engine arms the bell before it reads
		 * rq_prod, so it sees our receives or we see the bell.) */
		if (__atomic_load_n(&qp->rq_bell, __ATOMIC_RELAXED) &&
		    __atomic_exchange_n(&qp->rq_bell, 0, __ATOMIC_SEQ_CST)) {
			srnic_engine_doorbell(sqp->ctx->eng, sqp->qp);
			kick = true;
		}
	}
	pthread_spin_unlock(&qp->rq_lock);
	if (kick)
		srnic_engine_kick(sqp->ctx->eng);
	return rc;
}
