/* SPDX-License-Identifier: MIT */
/*
 * Half-RDMA's sending half (include/srnic.h; docs/half-rdma.md), on the
 * application's threads: a WRITE whose bytes come from memory nobody
 * registered, scattered over an iovec, as seed 002's protocol code puts
 * them into the send FIFO and the adapter sends them as one RDMA WRITE
 * (l. 286-292).
 *
 * The bytes are copied, under the QP's post lock, into a staging ring of
 * the QP's own (registered once, at the first such WRITE), and an
 * ordinary WRITE is posted from there.  The ring's room comes back as the
 * send queue completes (sq_comp, which counts unsignaled WQEs too): each
 * staged WQE's slot remembers where its bytes end, and the ring's tail
 * follows the completed ones in order, since the ring is filled in the
 * order the WQEs are posted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "srnic.h"
#include "srnic_provider.h"
#include "srnic_post.h"

#define STAGE_MB_DEFAULT 8

struct srnic_fifo_stage {
	struct ibv_mr *mr;
	uint8_t *buf;
	uint64_t size;
	uint64_t head, tail;	/* bytes taken and given back, ever */
	uint32_t reclaimed;	/* send queue index looked at up to */
	uint64_t *end;		/* by send queue slot: head after its bytes,
				 * 0 for a WQE that staged none */
};

/* The ring's size: SRNIC_FIFO_STAGE_MB (1-1024), else 8 MiB. */
static uint64_t stage_bytes(void)
{
	const char *v = getenv("SRNIC_FIFO_STAGE_MB");
	long mb = v ? strtol(v, NULL, 10) : STAGE_MB_DEFAULT;

	if (mb < 1 || mb > 1024)
		mb = STAGE_MB_DEFAULT;
	return (uint64_t)mb << 20;
}

static struct srnic_fifo_stage *stage_new(struct srnic_qp_v *sqp)
{
	struct srnic_fifo_stage *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->size = stage_bytes();
	s->buf = aligned_alloc(4096, s->size);
	s->end = calloc(sqp->q->sq_mask + 1, sizeof(*s->end));
	if (s->buf && s->end)
		s->mr = ibv_reg_mr(sqp->vqp.qp.pd, s->buf, s->size,
				   IBV_ACCESS_LOCAL_WRITE);
	if (!s->mr) {
		free(s->buf);
		free(s->end);
		free(s);
		return NULL;
	}
	return s;
}

static void stage_free(struct srnic_fifo_stage *s)
{
	ibv_dereg_mr(s->mr);
	free(s->buf);
	free(s->end);
	free(s);
}

void srnic_fifo_stage_free(struct srnic_qp_v *sqp)
{
	if (sqp->stage)
		stage_free(sqp->stage);
	sqp->stage = NULL;
}

/* The QP's ring, made at its first use: registered outside the post lock
 * (a poster spins on it), so two first posts may race; one ring stays. */
static struct srnic_fifo_stage *stage_of(struct srnic_qp_v *sqp)
{
	struct srnic_fifo_stage *s, *mine;

	s = __atomic_load_n(&sqp->stage, __ATOMIC_ACQUIRE);
	if (s)
		return s;
	mine = stage_new(sqp);
	if (!mine)
		return NULL;
	pthread_spin_lock(&sqp->q->sq_lock);
	s = sqp->stage;
	if (!s) {
		/* (nothing staged before: from the oldest WQE not done) */
		mine->reclaimed = __atomic_load_n(&sqp->q->sq_comp,
						  __ATOMIC_ACQUIRE);
		__atomic_store_n(&sqp->stage, mine, __ATOMIC_RELEASE);
		s = mine;
		mine = NULL;
	}
	pthread_spin_unlock(&sqp->q->sq_lock);
	if (mine)
		stage_free(mine);
	return s;
}

/* Under the post lock: room back from every WQE completed since last.
 * (More than a queue's length on since the last look, or behind it, as a
 * reset of the QP starts its send queue at 0 again: every WQE that
 * staged bytes is done, and the ring is all room.) */
static void stage_reclaim(struct srnic_fifo_stage *s,
			  const struct srnic_qp_queues *q)
{
	uint32_t comp = __atomic_load_n(&q->sq_comp, __ATOMIC_ACQUIRE);

	if (comp - s->reclaimed > q->sq_mask + 1) {
		memset(s->end, 0, (q->sq_mask + 1) * sizeof(*s->end));
		s->tail = s->head;
		s->reclaimed = comp;
		return;
	}
	for (; s->reclaimed != comp; s->reclaimed++) {
		uint64_t *e = &s->end[s->reclaimed & q->sq_mask];

		if (*e) {
			s->tail = *e;
			*e = 0;
		}
	}
}

/* Under the post lock: len contiguous bytes of the ring, or NULL when
 * they are not free yet.  (A piece that would run past the ring's end
 * starts at its beginning, the rest of the end taken too.) */
static uint8_t *stage_take(struct srnic_fifo_stage *s, uint64_t len,
			   uint64_t *end)
{
	uint64_t at = s->head % s->size, skip = 0;

	/* (an empty ring starts over at its beginning: a message longer
	 * than what is left past the last one still fits) */
	if (s->head == s->tail && at) {
		s->head = s->tail = s->head - at + s->size;
		at = 0;
	}
	if (at + len > s->size)
		skip = s->size - at;
	if (s->head + skip + len - s->tail > s->size)
		return NULL;
	*end = s->head + skip + len;
	return s->buf + (at + len > s->size ? 0 : at);
}

static bool wr_ok(const struct srnic_qp_v *sqp,
		  const struct srnic_fifo_write_wr *wr, uint64_t *len)
{
	uint64_t sum = 0;
	int i;

	if (!wr || wr->iovcnt < 0 || (wr->iovcnt && !wr->iov) ||
	    (wr->send_flags & ~(unsigned)(IBV_SEND_SIGNALED | IBV_SEND_FENCE)) ||
	    (sqp->vqp.qp.qp_type != IBV_QPT_RC &&
	     sqp->vqp.qp.qp_type != IBV_QPT_UC))
		return false;
	for (i = 0; i < wr->iovcnt; i++) {
		if (wr->iov[i].iov_len > SRNIC_MAX_MSG_BYTES - sum)
			return false;
		sum += wr->iov[i].iov_len;
	}
	*len = sum;
	return wr->remote_addr + sum >= wr->remote_addr;
}

/* Under the post lock: the bytes into the ring and the WRITE from there
 * into WQE slot prod.  0, or ENOMEM (no room in the ring). */
static int stage_wqe(struct srnic_fifo_stage *s, struct srnic_swqe *w,
		     const struct srnic_fifo_write_wr *wr, uint64_t len)
{
	uint64_t end = s->head;
	uint8_t *to = len ? stage_take(s, len, &end) : NULL;
	int i;

	if (len && !to)
		return ENOMEM;
	memset(w, 0, offsetof(struct srnic_swqe, sge));
	w->wr_id = wr->wr_id;
	w->opcode = SRNIC_WR_WRITE;
	w->flags = srnic_swqe_flags(wr->send_flags);
	w->length = (uint32_t)len;
	w->remote_addr = wr->remote_addr;
	w->rkey = wr->rkey;
	if (!len)
		return 0;
	w->num_sge = 1;
	w->sge[0].addr = (uintptr_t)to;
	w->sge[0].length = (uint32_t)len;
	w->sge[0].lkey = s->mr->lkey;
	for (i = 0; i < wr->iovcnt; i++) {
		memcpy(to, wr->iov[i].iov_base, wr->iov[i].iov_len);
		to += wr->iov[i].iov_len;
	}
	s->head = end;
	return 0;
}

SRNIC_API int srnic_post_fifo_write(struct ibv_qp *qp,
				    const struct srnic_fifo_write_wr *wr)
{
	struct srnic_qp_v *sqp;
	struct srnic_qp_queues *q;
	struct srnic_fifo_stage *s;
	uint64_t len;
	uint32_t prod;
	enum srnic_sq_go go;
	int rc;

	if (!qp || !srnic_context_ours(qp->context))
		return EOPNOTSUPP;
	sqp = to_sqp(qp);
	q = sqp->q;
	if (!wr_ok(sqp, wr, &len))
		return EINVAL;
	s = stage_of(sqp);
	if (!s)
		return errno ? errno : ENOMEM;
	pthread_spin_lock(&q->sq_lock);
	rc = srnic_sq_state_ok(q);
	prod = q->sq_prod;
	if (!rc && !srnic_sq_room(q, prod))
		rc = ENOMEM;
	if (!rc && len > s->size)
		rc = EINVAL;	/* (it would never fit) */
	if (!rc) {
		stage_reclaim(s, q);
		rc = stage_wqe(s, &q->sq[prod & q->sq_mask], wr, len);
	}
	if (!rc)
		s->end[prod++ & q->sq_mask] = len ? s->head : 0;
	go = srnic_sq_publish(sqp, prod);
	pthread_spin_unlock(&q->sq_lock);
	srnic_sq_go(sqp, go);
	return rc;
}
