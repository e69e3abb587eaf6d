/* SPDX-License-Identifier: MIT */
/*
 * Half-RDMA's FIFO (include/srnic.h; docs/half-rdma.md), on the
 * application's threads: a ring in the program's memory, registered as a
 * region the engine appends WRITE packets to (responder/fifo.c), and the
 * two calls that consume its records.  The program owns the consumer
 * offset, the datapath the producer offset; a record's valid word, the
 * datapath's last store, is the handover.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "srnic.h"
#include "srnic_provider.h"
#include "srnic_post.h"


struct srnic_fifo {
	struct srnic_context *ctx;
	struct ibv_pd *pd;
	struct srnic_fifo_ring *ring;
	size_t map_len;		/* the mapping: the ring's header and data */
	uint64_t size;		/* the data's bytes */
	uint32_t key;
};

_Static_assert(sizeof(struct srnic_fifo_rec) == sizeof(struct srnic_fifo_hdr) &&
		       offsetof(struct srnic_fifo_rec, valid) ==
			       offsetof(struct srnic_fifo_hdr, valid) &&
		       offsetof(struct srnic_fifo_rec, pkt_len) ==
			       offsetof(struct srnic_fifo_hdr, pkt_len) &&
		       offsetof(struct srnic_fifo_rec, qp_num) ==
			       offsetof(struct srnic_fifo_hdr, qp_num) &&
		       offsetof(struct srnic_fifo_rec, src_qp) ==
			       offsetof(struct srnic_fifo_hdr, src_qp) &&
		       offsetof(struct srnic_fifo_rec, msn) ==
			       offsetof(struct srnic_fifo_hdr, msn) &&
		       offsetof(struct srnic_fifo_rec, msg_len) ==
			       offsetof(struct srnic_fifo_hdr, msg_len) &&
		       offsetof(struct srnic_fifo_rec, msg_off) ==
			       offsetof(struct srnic_fifo_hdr, msg_off),
	       "srnic.h's record is the engine's");
_Static_assert(SRNIC_FIFO_REC_WRITE == SRNIC_FIFO_VALID &&
		       SRNIC_FIFO_REC_READ == SRNIC_FIFO_VALID_READ &&
		       SRNIC_FIFO_REC_READ_REQ == SRNIC_FIFO_VALID_READ_REQ,
	       "srnic.h's record kinds are the engine's");
_Static_assert(sizeof(struct srnic_fifo_read_req) ==
			       sizeof(struct srnic_fifo_req) &&
		       offsetof(struct srnic_fifo_read_req, va) ==
			       offsetof(struct srnic_fifo_req, va) &&
		       offsetof(struct srnic_fifo_read_req, length) ==
			       offsetof(struct srnic_fifo_req, length) &&
		       offsetof(struct srnic_fifo_read_req, txid) ==
			       offsetof(struct srnic_fifo_req, txid) &&
		       offsetof(struct srnic_fifo_read_req, shift) ==
			       offsetof(struct srnic_fifo_req, shift),
	       "srnic.h's READ request is the engine's");

SRNIC_API struct srnic_fifo *srnic_fifo_create(struct ibv_pd *pd,
					       size_t bytes)
{
	return srnic_fifo_create_ex(pd, bytes, 0);
}

SRNIC_API struct srnic_fifo *srnic_fifo_create_ex(struct ibv_pd *pd,
						  size_t bytes,
						  unsigned int flags)
{
	struct srnic_context *ctx;
	struct srnic_fifo *f;

	if (!pd || !srnic_context_ours(pd->context)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* (a record of a whole packet must fit, and some of them) */
	if (bytes < SRNIC_FIFO_MIN || bytes > SRNIC_FIFO_MAX || bytes % 64 ||
	    (flags & ~SRNIC_FIFO_TAKE_READS)) {
		errno = EINVAL;
		return NULL;
	}
	ctx = to_sctx(pd->context);
	if (!srnic_ctx_start(ctx))
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f) {
		errno = ENOMEM;
		return NULL;
	}
	f->ctx = ctx;
	f->pd = pd;
	f->size = bytes;
	f->map_len = sizeof(*f->ring) + bytes;
	f->ring = mmap(NULL, f->map_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (f->ring == MAP_FAILED) {
		free(f);
		errno = ENOMEM;
		return NULL;
	}
	f->key = srnic_engine_reg_mr(ctx->eng, ctx->dev, f->ring, f->map_len,
				     SRNIC_ACCESS_REMOTE_WRITE |
					     SRNIC_ACCESS_FIFO |
					     (flags & SRNIC_FIFO_TAKE_READS
						      ? SRNIC_ACCESS_REMOTE_READ
						      : 0),
				     to_spd(pd)->handle);
	if (!f->key) {
		munmap(f->ring, f->map_len);
		free(f);
		return NULL;
	}
	return f;
}

SRNIC_API int srnic_fifo_destroy(struct srnic_fifo *f)
{
	if (!f)
		return EINVAL;
	/* (no packet is appended once this returns: then the ring goes) */
	srnic_engine_dereg_mr(f->ctx->eng, f->key);
	munmap(f->ring, f->map_len);
	free(f);
	return 0;
}

SRNIC_API uint32_t srnic_fifo_rkey(const struct srnic_fifo *f)
{
	return f ? f->key : 0;
}

/* Only what the datapath appended is read: bytes at the consumer offset
 * past the producer's are an old payload's, which a writer chose, and
 * never taken for a header.  The producer's offset is published after
 * the record (release), so a record below it is whole. */
SRNIC_API const struct srnic_fifo_rec *srnic_fifo_next(struct srnic_fifo *f)
{
	struct srnic_fifo_ring *r = f->ring;

	for (;;) {
		uint64_t at = r->cons % f->size;
		struct srnic_fifo_hdr *h = (struct srnic_fifo_hdr *)&r->data[at];
		uint32_t v;

		if (__atomic_load_n(&r->prod, __ATOMIC_ACQUIRE) == r->cons)
			return NULL;
		v = __atomic_load_n(&h->valid, __ATOMIC_ACQUIRE);
		if ((v == SRNIC_FIFO_VALID || v == SRNIC_FIFO_VALID_READ ||
		     v == SRNIC_FIFO_VALID_READ_REQ) &&
		    h->pkt_len <= f->size - at - sizeof(*h))
			return (const struct srnic_fifo_rec *)h;
		if (v != SRNIC_FIFO_PAD)
			return NULL;
		/* the ring's end, skipped: the next record is at its start */
		h->valid = 0;
		__atomic_store_n(&r->cons, r->cons + f->size - at,
				 __ATOMIC_RELEASE);
	}
}

SRNIC_API void srnic_fifo_done(struct srnic_fifo *f)
{
	struct srnic_fifo_ring *r = f->ring;
	/* (the record next() gives: none, and nothing is given back) */
	struct srnic_fifo_hdr *h = (struct srnic_fifo_hdr *)srnic_fifo_next(f);

	if (!h)
		return;
	h->valid = 0;
	/* (the space goes back only now: the datapath may write there) */
	__atomic_store_n(&r->cons, r->cons + srnic_fifo_rec_len(h->pkt_len),
			 __ATOMIC_RELEASE);
}

SRNIC_API int srnic_fifo_query(const struct srnic_fifo *f,
			       struct srnic_fifo_attr *attr)
{
	if (!f || !attr)
		return EINVAL;
	attr->size = f->size;
	attr->records = __atomic_load_n(&f->ring->records, __ATOMIC_ACQUIRE);
	attr->full = __atomic_load_n(&f->ring->full, __ATOMIC_ACQUIRE);
	attr->used = __atomic_load_n(&f->ring->prod, __ATOMIC_ACQUIRE) -
		     f->ring->cons;
	return 0;
}

/* Half-RDMA's READ into a FIFO: an ordinary READ WQE whose one SGE names
 * the FIFO (SRNIC_WR_FIFO); the completer appends its answer's packets
 * (completer.c, fifo_append). */
SRNIC_API int srnic_post_fifo_read(struct ibv_qp *qp,
				   const struct srnic_fifo_read_wr *wr)
{
	struct srnic_swqe w;

	if (!qp || !srnic_context_ours(qp->context))
		return EOPNOTSUPP;
	if (!wr || !wr->fifo || wr->fifo->pd != qp->pd ||
	    qp->qp_type != IBV_QPT_RC ||
	    (wr->send_flags & ~(unsigned)(IBV_SEND_SIGNALED | IBV_SEND_FENCE)) ||
	    wr->length > SRNIC_MAX_MSG_BYTES ||
	    wr->remote_addr + wr->length < wr->remote_addr)
		return EINVAL;
	memset(&w, 0, offsetof(struct srnic_swqe, sge) + sizeof(w.sge[0]));
	w.wr_id = wr->wr_id;
	w.opcode = SRNIC_WR_READ;
	w.flags = SRNIC_WR_FIFO | srnic_swqe_flags(wr->send_flags);
	w.imm = wr->tag;
	w.rkey = wr->rkey;
	w.remote_addr = wr->remote_addr;
	w.length = wr->length;
	w.num_sge = 1;
	w.sge[0] = (struct srnic_sge){.addr = 0, .length = wr->length,
				      .lkey = wr->fifo->key};
	return srnic_post_swqe(to_sqp(qp), &w,
			       offsetof(struct srnic_swqe, sge) + sizeof(w.sge[0]));
}

/* How long an answer waits for a wire that takes none of it, looking
 * again every ANSWER_NAP_US. */
#define ANSWER_WAIT_MS 100
#define ANSWER_NAP_US 50

/* The half-receive READ: the answer goes out in the datapath's calls
 * (engine/fifo.c), a burst each, straight from the iovec; the call
 * returns once it is all out. */
SRNIC_API int srnic_fifo_read_reply(struct srnic_fifo *f,
				    const struct srnic_fifo_rec *rec,
				    const struct iovec *iov, int iovcnt)
{
	const struct srnic_fifo_read_req *rq;
	struct srnic_fifo_answer a;
	uint64_t sum = 0;
	uint32_t done = 0, stuck = 0;
	int i, rc;

	if (!f)
		return EINVAL;
	if (!srnic_context_ours(f->pd->context))
		return EOPNOTSUPP;
	if (!rec || rec->valid != SRNIC_FIFO_REC_READ_REQ ||
	    rec->pkt_len != sizeof(*rq) || iovcnt < 0 || (iovcnt && !iov))
		return EINVAL;
	rq = (const struct srnic_fifo_read_req *)(rec + 1);
	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > rq->length - sum)
			return EINVAL;	/* (more than asked: no wrap) */
		sum += iov[i].iov_len;
	}
	if (sum != rq->length || rec->msg_off > rec->msg_len ||
	    sum > rec->msg_len - rec->msg_off)
		return EINVAL;
	a = (struct srnic_fifo_answer){
		.key = f->key, .src_qp = rec->src_qp, .msn = rec->msn,
		.txid = rq->txid, .msg_len = rec->msg_len, .shift = rq->shift,
		.iov = iov, .iovcnt = iovcnt};
	for (;;) {
		a.msg_off = (uint32_t)rec->msg_off + done;
		a.len = rq->length - done;
		a.iov_off = done;
		rc = srnic_engine_fifo_answer(f->ctx->eng, rec->qp_num, &a);
		if (rc >= 0) {
			done += (uint32_t)rc;
			if (done == rq->length)
				return 0;
			stuck = 0;
			continue;
		}
		if (rc != -EAGAIN)
			return -rc;
		/* (the wire full: the datapath sends what it holds, and
		 * the answer goes on; one that takes nothing for long is
		 * left to the reader to ask again) */
		if (++stuck > ANSWER_WAIT_MS * 1000 / ANSWER_NAP_US)
			return ENOBUFS;
		usleep(ANSWER_NAP_US);
	}
}
