/* SPDX-License-Identifier: MIT */
/*
 * The extended post API (ibv_wr_start ... ibv_wr_complete).  Work requests
 * are written straight into the send ring under the QP's post lock, which
 * wr_start takes and wr_complete or wr_abort releases; nothing is visible to
 * the engine before wr_complete publishes the new producer index.
 */
#include <errno.h>
#include <string.h>

#include "srnic.h"
#include "srnic_provider.h"
#include "srnic_post.h"

static struct srnic_qp_v *ex_to_sqp(struct ibv_qp_ex *qpx)
{
	return (struct srnic_qp_v *)qpx;
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct srnic_qp_v *sqp = ex_to_sqp(qpx);

	pthread_spin_lock(&sqp->q->sq_lock);
	sqp->wr_prod = sqp->q->sq_prod;
	sqp->wr_err = srnic_sq_state_ok(sqp->q);
	sqp->wr_cur = NULL;
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct srnic_qp_v *sqp = ex_to_sqp(qpx);
	struct srnic_qp_queues *qp = sqp->q;
	int rc = sqp->wr_err;
	enum srnic_sq_go go;
	uint32_t i;

	/* An atomic whose 8-byte SGE never came is not a work request, nor
	 * is a datagram without its address, or longer than the path MTU,
	 * nor an XRC send that names no SRQ. */
	for (i = qp->sq_prod; !rc && i != sqp->wr_prod; i++) {
		const struct srnic_swqe *w = &qp->sq[i & qp->sq_mask];

		if (srnic_wr_is_atomic(w->opcode) && w->length != 8)
			rc = EINVAL;
		if (sqp->vqp.qp.qp_type == IBV_QPT_UD &&
		    (!w->ud.ipv4 || w->length > sqp->ud_max))
			rc = EINVAL;
		if (sqp->vqp.qp.qp_type == IBV_QPT_XRC_SEND &&
		    w->opcode != SRNIC_WR_LOCAL_INV &&
		    w->opcode != SRNIC_WR_BIND_MW && !w->xrc_srqn)
			rc = EINVAL;
	}
	go = rc ? SRNIC_SQ_NOTHING : srnic_sq_publish(sqp, sqp->wr_prod);
	pthread_spin_unlock(&sqp->q->sq_lock);
	srnic_sq_go(sqp, go);
	return rc;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	pthread_spin_unlock(&ex_to_sqp(qpx)->q->sq_lock);
}

/* Start a new WQE; the SGE or inline setter that follows fills in its
 * data. */
static void new_wqe(struct ibv_qp_ex *qpx, uint8_t op, uint32_t rkey,
		    uint64_t remote_addr, __be32 imm)
{
	struct srnic_qp_v *sqp = ex_to_sqp(qpx);
	struct srnic_qp_queues *qp = sqp->q;
	struct srnic_swqe *w;

	sqp->wr_cur = NULL;
	if (sqp->wr_err)
		return;
	/* (completion at both ends comes through ibv_post_send only) */
	if (!srnic_post_op_ok(sqp, op) ||
	    (qpx->wr_flags & SRNIC_SEND_REMOTE_NOTIFY)) {
		sqp->wr_err = EINVAL;
		return;
	}
	if (!srnic_sq_room(qp, sqp->wr_prod)) {
		sqp->wr_err = ENOMEM;
		return;
	}
	w = &qp->sq[sqp->wr_prod++ & qp->sq_mask];
	memset(w, 0, offsetof(struct srnic_swqe, sge));	/* ud too */
	w->wr_id = qpx->wr_id;
	w->opcode = op;
	w->rkey = rkey;
	w->remote_addr = remote_addr;
	w->imm = imm;
	if (qpx->wr_flags & IBV_SEND_SIGNALED)
		w->flags |= SRNIC_WR_SIGNALED;
	if (qpx->wr_flags & IBV_SEND_SOLICITED)
		w->flags |= SRNIC_WR_SOLICITED;
	if (qpx->wr_flags & IBV_SEND_FENCE)
		w->flags |= SRNIC_WR_FENCE;
	sqp->wr_cur = w;
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	new_wqe(qpx, SRNIC_WR_SEND, 0, 0, 0);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	new_wqe(qpx, SRNIC_WR_SEND_IMM, 0, 0, imm);
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	new_wqe(qpx, SRNIC_WR_SEND_INV, invalidate_rkey, 0, 0);
}

static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
		       uint32_t rkey, const struct ibv_mw_bind_info *bind_info)
{
	struct srnic_qp_v *sqp = ex_to_sqp(qpx);

	new_wqe(qpx, SRNIC_WR_BIND_MW, 0, 0, 0);
	if (sqp->wr_cur && (sqp->wr_err = srnic_bind_wqe(sqp, sqp->wr_cur, mw,
							 rkey, bind_info,
							 IBV_MW_TYPE_2)))
		sqp->wr_cur = NULL;
}

static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	new_wqe(qpx, SRNIC_WR_LOCAL_INV, invalidate_rkey, 0, 0);
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			  uint64_t remote_addr)
{
	new_wqe(qpx, SRNIC_WR_WRITE, rkey, remote_addr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t remote_addr, __be32 imm)
{
	new_wqe(qpx, SRNIC_WR_WRITE_IMM, rkey, remote_addr, imm);
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			 uint64_t remote_addr)
{
	new_wqe(qpx, SRNIC_WR_READ, rkey, remote_addr, 0);
}

/* Atomics work on 8 aligned remote bytes, and the old value lands in one
 * SGE of 8 bytes (checked when it is set). */
static void new_atomic(struct ibv_qp_ex *qpx, uint8_t op, uint32_t rkey,
		       uint64_t remote_addr, uint64_t compare_add,
		       uint64_t swap)
{
	struct srnic_qp_v *sqp = ex_to_sqp(qpx);

	new_wqe(qpx, op, rkey, remote_addr, 0);
	if (!sqp->wr_cur)
		return;
	if (remote_addr & 7) {
		sqp->wr_err = EINVAL;
		return;
	}
	sqp->wr_cur->compare_add = compare_add;
	sqp->wr_cur->swap = swap;
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t remote_addr, uint64_t compare,
			      uint64_t swap)
{
	new_atomic(qpx, SRNIC_WR_ATOMIC_CAS, rkey, remote_addr, compare, swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				uint64_t remote_addr, uint64_t add)
{
	new_atomic(qpx, SRNIC_WR_ATOMIC_FAA, rkey, remote_addr, add, 0);
}

/* The 8 bytes are taken now, as inline data. */
static void wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			    uint64_t remote_addr, const void *atomic_wr)
{
	struct srnic_qp_v *sqp = ex_to_sqp(qpx);
	struct srnic_swqe *w;

	new_wqe(qpx, SRNIC_WR_ATOMIC_WRITE, rkey, remote_addr, 0);
	w = sqp->wr_cur;
	if (!w)
		return;
	if ((remote_addr & 7) || !atomic_wr) {
		sqp->wr_err = EINVAL;
		return;
	}
	memcpy(w->inline_data, atomic_wr, 8);
	w->flags |= SRNIC_WR_INLINE;
	w->num_sge = 0;
	w->length = 8;
}

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
			   uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct srnic_qp_v *sqp = ex_to_sqp(qpx);

	if (!sqp->wr_cur)
		return;
	if (!ah) {
		sqp->wr_err = EINVAL;
		return;
	}
	srnic_ud_dest(sqp->wr_cur, ah, remote_qpn, remote_qkey);
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct srnic_qp_v *sqp = ex_to_sqp(qpx);

	if (sqp->wr_cur)
		sqp->wr_cur->xrc_srqn = remote_srqn;
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n,
			    const struct ibv_sge *sg)
{
	struct srnic_qp_v *sqp = ex_to_sqp(qpx);
	struct srnic_swqe *w = sqp->wr_cur;
	uint64_t total = 0;
	size_t i;

	if (!w)
		return;
	if (n > sqp->q->max_send_sge) {
		sqp->wr_err = EINVAL;
		return;
	}
	for (i = 0; i < n; i++) {
		w->sge[i].addr = sg[i].addr;
		w->sge[i].length = sg[i].length;
		w->sge[i].lkey = sg[i].lkey;
		total += sg[i].length;
	}
	if (total > SRNIC_MAX_MSG_BYTES ||
	    (srnic_wr_is_atomic(w->opcode) && (n != 1 || total != 8)) ||
	    (w->opcode == SRNIC_WR_ATOMIC_WRITE && total != 8)) {
		sqp->wr_err = EINVAL;
		return;
	}
	w->num_sge = n;
	w->length = total;
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
		       uint32_t length)
{
	struct ibv_sge sge = {.addr = addr, .length = length, .lkey = lkey};

	wr_set_sge_list(qpx, 1, &sge);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n,
				    const struct ibv_data_buf *buf)
{
	struct srnic_qp_v *sqp = ex_to_sqp(qpx);
	struct srnic_swqe *w = sqp->wr_cur;
	size_t i, total = 0;

	if (!w)
		return;
	for (i = 0; i < n; i++)
		total += buf[i].length;
	if (srnic_wr_reads(w->opcode) || total > sqp->q->max_inline) {
		sqp->wr_err = EINVAL;
		return;
	}
	total = 0;
	for (i = 0; i < n; i++) {
		memcpy(w->inline_data + total, buf[i].addr, buf[i].length);
		total += buf[i].length;
	}
	w->flags |= SRNIC_WR_INLINE;
	w->num_sge = 0;
	w->length = total;
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
			       size_t length)
{
	struct ibv_data_buf buf = {.addr = addr, .length = length};

	wr_set_inline_data_list(qpx, 1, &buf);
}

void srnic_qp_ex_init(struct srnic_qp_v *sqp, uint64_t send_ops)
{
	struct ibv_qp_ex *qpx = &sqp->vqp.qp_ex;

	qpx->wr_start = wr_start;
	qpx->wr_complete = wr_complete;
	qpx->wr_abort = wr_abort;
	if (send_ops & IBV_QP_EX_WITH_SEND)
		qpx->wr_send = wr_send;
	if (send_ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		qpx->wr_send_imm = wr_send_imm;
	if (send_ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		qpx->wr_send_inv = wr_send_inv;
	if (send_ops & IBV_QP_EX_WITH_LOCAL_INV)
		qpx->wr_local_inv = wr_local_inv;
	if (send_ops & IBV_QP_EX_WITH_BIND_MW)
		qpx->wr_bind_mw = wr_bind_mw;
	if (send_ops & IBV_QP_EX_WITH_RDMA_WRITE)
		qpx->wr_rdma_write = wr_rdma_write;
	if (send_ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		qpx->wr_rdma_write_imm = wr_rdma_write_imm;
	if (send_ops & IBV_QP_EX_WITH_RDMA_READ)
		qpx->wr_rdma_read = wr_rdma_read;
	if (send_ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		qpx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	if (send_ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		qpx->wr_atomic_fetch_add = wr_atomic_fetch_add;
	if (send_ops & IBV_QP_EX_WITH_ATOMIC_WRITE)
		qpx->wr_atomic_write = wr_atomic_write;
	if (sqp->vqp.qp.qp_type == IBV_QPT_UD)
		qpx->wr_set_ud_addr = wr_set_ud_addr;
	if (sqp->vqp.qp.qp_type == IBV_QPT_XRC_SEND)
		qpx->wr_set_xrc_srqn = wr_set_xrc_srqn;
	qpx->wr_set_sge = wr_set_sge;
	qpx->wr_set_sge_list = wr_set_sge_list;
	qpx->wr_set_inline_data = wr_set_inline_data;
	qpx->wr_set_inline_data_list = wr_set_inline_data_list;
}
