/* SPDX-License-Identifier: MIT */
/*
 * stress: a long run of mixed work requests over several RC QPs, every byte
 * checked.  By default 1,000,000 messages: RDMA WRITE, WRITE with
 * immediate, SEND, SEND with immediate and RDMA READ, drawn pseudo-randomly
 * from a seed (printed, and -s replays it), of 0 bytes to 64 KiB (most of
 * them small), with up to a window of work requests in flight per QP,
 * selective signaling, scatter-gather, inline data, fences, and both post
 * APIs (legacy ibv_post_send on even QPs, ibv_wr_* on odd ones by default).
 *
 *   server:  stress [options]          (run it first, on node b)
 *   client:  stress [options] HOST
 *
 * Both sides take the same options; the client's seed wins.
 *   -n COUNT   messages in all (default 1000000), spread over the QPs
 *   -q QPS     QPs (default 4)             -w WINDOW  WRs in flight per QP (64)
 *   -m BYTES   largest message, a power of 2 (65536)
 *   -s SEED    seed of the run (default: from the clock)
 *   -a API     legacy, new or mix (default mix: ibv_wr_* on odd QPs)
 *   -p PORT    TCP port (18630)            -t MS      longest wait for any
 *                                                     completion (30000)
 *   -O         read back WRITEs not yet completed at the client (relies on
 *              the responder running a READ after the WRITEs before it)
 *
 * The data only flows from the client to the server, plus the READs the
 * client issues.  Both sides generate the same message schedule from the
 * seed (per QP: opcode, length, offset of message seq), so the server knows
 * what each message was without being told.  Message seq of QP q uses slot
 * seq % WINDOW, both in the client's buffer and in the server's WRITE area.
 *
 * Every payload is a pattern of (seed, qp, seq, byte offset): a byte that is
 * misplaced, stale, duplicated or torn does not match.  The server checks
 *   - SEND and SEND with immediate at their receive completion (opcode,
 *     byte_len, immediate, the bytes in its receive buffer),
 *   - WRITE with immediate at its receive completion (the slot's bytes),
 *   - every plain WRITE before a SEND or WRITE with immediate when that
 *     message's receive completion comes: verbs guarantees the earlier
 *     WRITEs of the QP have landed by then.
 * The last message of each QP, and at least one in every WINDOW/2, takes a
 * receive, so every WRITE is checked.  The client checks READ data when a
 * later signaled completion shows the READ done.  A READ reads either a
 * region the server filled with a pattern or (one in four, "readback") the
 * slot of an earlier WRITE of the same QP whose completion the client has
 * seen; the WRITE that reuses such a slot carries IBV_SEND_FENCE while the
 * READ is outstanding, so that a resent READ cannot see the newer data.
 *
 * Flow control: the server returns credits, SEND with immediate of 0 bytes
 * whose immediate is the number of messages of the QP it has checked.  The
 * client posts message seq only when seq < credit + WINDOW (the slot at the
 * server is free) and seq < completed + WINDOW (the local slot is free).
 *
 * Every signaled WR must complete exactly once, successfully, in posting
 * order per QP (wr_id checked), and every receive likewise; an error
 * completion, a wrong byte, or no completion within -t fails the run.  The
 * client prints the summary line "stress: N messages (...), X bytes, B bad,
 * seed S, T s, R msgs/s"; both sides exit 0 only if nothing was wrong.
 *
 * -s SEED replays the schedule (opcode, length and offset of every message);
 * signaling, batching, SGEs, inline and fences come from the seed too, but
 * which WRITE a readback reads depends on which completions came already.
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "verbs_util.h"

#define MAX_QPS 16
#define MAX_SGE 3
#define MAX_BATCH 16		/* WRs per post call */
#define GAP 40			/* bytes between the pieces of a message */
#define WOFF 64			/* a WRITE starts at offset [0, WOFF) of its slot */
#define RECV_PIECE0 777		/* odd receives scatter: this, then the rest */
#define CREDIT_RECVS 32		/* credit receives per QP at the client */
#define CREDIT_SQ 64		/* the server's send queue (credits) */
#define TCP_MS 60000
#define QP_TAG_SHIFT 48
#define SEQ_MASK ((1ull << QP_TAG_SHIFT) - 1)

enum { OP_WRITE, OP_WRITE_IMM, OP_SEND, OP_SEND_IMM, OP_READ, NOPS };
static const char *const op_name[NOPS] = {
	"WRITE", "WRITE_IMM", "SEND", "SEND_IMM", "READ",
};

enum { API_LEGACY, API_NEW, API_MIX };

static struct {
	uint64_t count;
	unsigned nqp, window;
	uint32_t max_len;
	uint64_t seed;
	int seed_set, api, port, ordered;
	unsigned idle_ms;
	const char *host;
} opt = {
	.count = 1000000, .nqp = 4, .window = 64, .max_len = 65536,
	.api = API_MIX, .port = 18630, .idle_ms = 30000,
};

static const char *role = "server";

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "stress (%s): FAIL: ", role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static bool consumes(int op)	/* takes a receive at the server */
{
	return op == OP_WRITE_IMM || op == OP_SEND || op == OP_SEND_IMM;
}

static bool writes_slot(int op)
{
	return op == OP_WRITE || op == OP_WRITE_IMM;
}

/* ---- numbers and patterns ---- */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t rnd(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ull;
	return mix64(*s);
}

/* The pattern key of message seq of QP q; READ_REGION is the server's
 * region that READs read. */
#define READ_REGION SEQ_MASK

static uint64_t msg_key(unsigned q, uint64_t seq)
{
	return mix64(opt.seed * 0xd6e8feb86659fd93ull ^
		     (uint64_t)q << QP_TAG_SHIFT ^ seq);
}

static uint32_t msg_imm(unsigned q, uint64_t seq)
{
	return (uint32_t)(msg_key(q, seq) >> 17);
}

static inline uint64_t pat_word(uint64_t key, uint64_t w)
{
	uint64_t x = (key ^ w) * 0x9e3779b97f4a7c15ull;

	return htole64(x ^ (x >> 29));
}

static inline uint8_t pat_byte(uint64_t key, uint64_t off)
{
	uint64_t w = le64toh(pat_word(key, off >> 3));

	return (uint8_t)(w >> ((off & 7) * 8));
}

/* n bytes of the pattern key from message offset off on, at p. */
static void pat_fill(uint64_t key, uint64_t off, uint8_t *p, uint32_t n)
{
	for (; n && (off & 7); n--)
		*p++ = pat_byte(key, off++);
	for (; n >= 8; n -= 8, off += 8, p += 8) {
		uint64_t w = pat_word(key, off >> 3);

		memcpy(p, &w, 8);
	}
	for (; n; n--)
		*p++ = pat_byte(key, off++);
}

/* The index of the first byte of p that differs from the pattern, or -1. */
static int64_t pat_check(uint64_t key, uint64_t off, const uint8_t *p,
			 uint32_t n)
{
	uint32_t i = 0;

	for (; i < n && ((off + i) & 7); i++)
		if (p[i] != pat_byte(key, off + i))
			return i;
	for (; i + 8 <= n; i += 8) {
		uint64_t w = pat_word(key, (off + i) >> 3), got;

		memcpy(&got, p + i, 8);
		if (got != w)
			break;
	}
	for (; i < n; i++)
		if (p[i] != pat_byte(key, off + i))
			return i;
	return -1;
}

/* A message's bytes in memory: up to MAX_SGE pieces, GAP bytes apart. */
struct pieces {
	unsigned n;
	uint8_t *p[MAX_SGE];
	uint32_t len[MAX_SGE];
};

static void split(struct pieces *pc, uint8_t *base, uint32_t len,
		  unsigned nsge)
{
	uint32_t done = 0;
	unsigned i;

	if (nsge > len)
		nsge = len;	/* 0 bytes: no piece at all */
	pc->n = nsge;
	for (i = 0; i < nsge; i++) {
		pc->p[i] = base + done + i * GAP;
		pc->len[i] = i == nsge - 1 ? len - done : len / nsge;
		done += pc->len[i];
	}
}

static void fill_pieces(const struct pieces *pc, uint64_t key, uint64_t off)
{
	unsigned i;

	for (i = 0; i < pc->n; off += pc->len[i], i++)
		pat_fill(key, off, pc->p[i], pc->len[i]);
}

/* The message offset of the first wrong byte, or -1; *got its value. */
static int64_t check_pieces(const struct pieces *pc, uint64_t key,
			    uint64_t off, uint8_t *got)
{
	uint64_t at = 0;
	unsigned i;

	for (i = 0; i < pc->n; at += pc->len[i], i++) {
		int64_t bad = pat_check(key, off + at, pc->p[i], pc->len[i]);

		if (bad >= 0) {
			*got = pc->p[i][bad];
			return (int64_t)at + bad;
		}
	}
	return -1;
}

/* ---- the message schedule, the same on both sides ---- */

struct msg {
	uint64_t seq;
	int op;
	uint32_t len;
	uint32_t off;	/* WRITE: in the slot; READ: in the read region */
};

struct sched {
	uint64_t rng, seq, n;
	unsigned since;	/* messages since the last that took a receive */
};

static uint32_t slot_bytes(void)	/* a WRITE slot at the server */
{
	return (opt.max_len + WOFF + 63) & ~63u;
}

static uint32_t recv_bytes(void)	/* a receive buffer at the server */
{
	return (opt.max_len + GAP + 63) & ~63u;
}

static uint32_t region_bytes(void)	/* what READs read at the server */
{
	return 2 * opt.max_len + 4096;
}

static uint32_t local_bytes(void)	/* a slot at the client */
{
	return (opt.max_len + MAX_SGE * GAP + 63) & ~63u;
}

static uint64_t area_bytes(void)	/* one QP's part of the server's MR */
{
	return (uint64_t)opt.window * (slot_bytes() + recv_bytes()) +
	       region_bytes();
}

static void sched_init(struct sched *s, unsigned q, uint64_t n)
{
	memset(s, 0, sizeof(*s));
	s->rng = mix64(opt.seed ^ 0x5bd1e995ull * (q + 1));
	s->n = n;
}

/* Log-uniform-ish: a power of two 2^k, k uniform below log2(max_len), then
 * uniform in [2^k, 2^(k+1)); some 0-byte messages, some right at a power
 * of two (MTU and stride boundaries) and some of the largest size. */
static uint32_t draw_len(uint64_t r)
{
	unsigned lg = 0, k;
	uint32_t len;

	while ((2u << lg) <= opt.max_len)
		lg++;
	if (r % 64 == 0)
		return 0;
	if ((r >> 6) % 256 == 0)
		return opt.max_len;
	k = (r >> 14) % lg;
	if ((r >> 20) % 8 == 0)
		len = (1u << k) + (uint32_t)((r >> 24) % 3) - 1;
	else
		len = (1u << k) + (uint32_t)((r >> 32) & ((1u << k) - 1));
	return len > opt.max_len ? opt.max_len : len;
}

static void sched_next(struct sched *s, struct msg *m)
{
	static const int takes_recv[] = {OP_WRITE_IMM, OP_SEND, OP_SEND_IMM};
	uint64_t r = rnd(&s->rng);

	m->seq = s->seq++;
	m->op = (int)(r % NOPS);
	/* Every WRITE must be followed by a message that takes a receive,
	 * within half a window (or the credits stall), and before the end. */
	if (!consumes(m->op) &&
	    (s->since + 1 >= opt.window / 2 || m->seq + 1 == s->n))
		m->op = takes_recv[(r >> 8) % 3];
	s->since = consumes(m->op) ? 0 : s->since + 1;
	m->len = draw_len(rnd(&s->rng));
	r = rnd(&s->rng);
	if (m->op == OP_READ)
		m->off = (uint32_t)(r % (region_bytes() - m->len + 1));
	else if (writes_slot(m->op))
		m->off = (uint32_t)(r % WOFF);
	else
		m->off = 0;
}

/* ---- verbs set-up ---- */

/* Each opcode's verbs work request, the completion the sender sees, and
 * what an ibv_wr_* QP must be created with to post it. */
static const struct {
	enum ibv_wr_opcode wr;
	enum ibv_wc_opcode wc;
	uint64_t ex;
} verbs_op[NOPS] = {
	[OP_WRITE] = {IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE,
		      IBV_QP_EX_WITH_RDMA_WRITE},
	[OP_WRITE_IMM] = {IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WC_RDMA_WRITE,
			  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM},
	[OP_SEND] = {IBV_WR_SEND, IBV_WC_SEND, IBV_QP_EX_WITH_SEND},
	[OP_SEND_IMM] = {IBV_WR_SEND_WITH_IMM, IBV_WC_SEND,
			 IBV_QP_EX_WITH_SEND_WITH_IMM},
	[OP_READ] = {IBV_WR_RDMA_READ, IBV_WC_RDMA_READ,
		     IBV_QP_EX_WITH_RDMA_READ},
};

struct dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	uint64_t buf_len;
	union ibv_gid gid;
	enum ibv_mtu mtu;
	unsigned max_rd;
};

static void dev_open(struct dev *d, uint64_t bytes, unsigned cqe)
{
	struct ibv_port_attr pa;
	struct ibv_device_attr da;

	d->ctx = vu_open_first();
	if (!d->ctx)
		die("no device");
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	if (ibv_query_port(d->ctx, VU_PORT, &pa) ||
	    ibv_query_gid(d->ctx, VU_PORT, VU_GID_INDEX, &d->gid) ||
	    ibv_query_device(d->ctx, &da))
		die("cannot query the device");
	d->mtu = pa.active_mtu;
	d->max_rd = da.max_qp_rd_atom < 16 ? da.max_qp_rd_atom : 16;
	if (d->max_rd == 0)
		d->max_rd = 1;
	d->buf_len = (bytes + 4095) & ~4095ull;
	d->buf = aligned_alloc(4096, d->buf_len);
	if (!d->buf)
		die("out of memory (%" PRIu64 " bytes)", d->buf_len);
	memset(d->buf, 0, d->buf_len);
	d->mr = ibv_reg_mr(d->pd, d->buf, d->buf_len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ);
	if (!d->mr)
		die("ibv_reg_mr of %" PRIu64 " bytes: %s", d->buf_len,
		    strerror(errno));
	d->cq = ibv_create_cq(d->ctx, (int)cqe, NULL, NULL, 0);
	if (!d->cq)
		die("ibv_create_cq(%u): %s", cqe, strerror(errno));
}

static bool new_api(unsigned q)
{
	return opt.api == API_NEW || (opt.api == API_MIX && (q & 1));
}

static struct ibv_qp *make_qp(struct dev *d, unsigned q, uint32_t sq,
			      uint32_t rq, struct ibv_qp_ex **qpx)
{
	struct ibv_qp_init_attr_ex qa;
	struct ibv_qp *qp;
	int op;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = d->cq;
	qa.recv_cq = d->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = sq;
	qa.cap.max_recv_wr = rq;
	qa.cap.max_send_sge = MAX_SGE;
	qa.cap.max_recv_sge = MAX_SGE;
	qa.cap.max_inline_data = 64;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = d->pd;
	if (new_api(q)) {
		qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		for (op = 0; op < NOPS; op++)
			qa.send_ops_flags |= verbs_op[op].ex;
	}
	qp = ibv_create_qp_ex(d->ctx, &qa);
	if (!qp)
		die("ibv_create_qp_ex (QP %u): %s", q, strerror(errno));
	*qpx = new_api(q) ? ibv_qp_to_qp_ex(qp) : NULL;
	if (new_api(q) && !*qpx)
		die("ibv_qp_to_qp_ex (QP %u)", q);
	if (vu_to_init(qp, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ))
		die("QP %u to INIT", q);
	return qp;
}

static void connect_qp(struct dev *d, struct ibv_qp *qp, unsigned q,
		       const struct vu_dest *mine, const struct vu_dest *peer)
{
	struct ibv_qp_attr a;
	int mask, rc;

	mask = vu_rtr_attr(&a, peer, d->mtu);
	a.max_dest_rd_atomic = (uint8_t)d->max_rd;
	rc = ibv_modify_qp(qp, &a, mask);
	if (rc)
		die("QP %u to RTR: %s", q, strerror(rc));
	mask = vu_rts_attr(&a, mine->psn, 14, 7);
	a.max_rd_atomic = (uint8_t)d->max_rd;
	rc = ibv_modify_qp(qp, &a, mask);
	if (rc)
		die("QP %u to RTS: %s", q, strerror(rc));
}

/*
 * Both sides send one entry per QP and a last one with the run's
 * parameters (the client's seed wins; the rest must agree).
 */
static void exchange(int fd, struct dev *d, struct ibv_qp **qp,
		     const uint64_t *addr, struct vu_dest *peer)
{
	struct vu_dest mine[MAX_QPS + 1];
	unsigned q, n = opt.nqp;
	uint64_t seed;

	memset(mine, 0, sizeof(mine));
	for (q = 0; q < n; q++) {
		mine[q].qpn = qp[q]->qp_num;
		mine[q].psn = (uint32_t)mix64(opt.seed + q + getpid()) & 0xffffff;
		mine[q].gid = d->gid;
		mine[q].rkey = d->mr->rkey;
		mine[q].addr = addr[q];
	}
	mine[n].qpn = opt.window;
	mine[n].psn = opt.max_len;
	mine[n].addr = opt.count;
	mine[n].rkey = opt.seed_set;
	seed = htobe64(opt.seed);
	memcpy(mine[n].gid.raw, &seed, 8);
	if (vu_exchange(fd, mine, peer, n + 1, TCP_MS))
		die("the TCP exchange with the peer failed (same -q on both sides?)");
	if (peer[n].qpn != opt.window || peer[n].psn != opt.max_len ||
	    peer[n].addr != opt.count)
		die("the peer runs -w %u -m %u -n %" PRIu64 ", we -w %u -m %u -n %" PRIu64,
		    peer[n].qpn, peer[n].psn, peer[n].addr, opt.window,
		    opt.max_len, opt.count);
	if (!opt.host) {	/* the server takes the client's seed */
		memcpy(&seed, peer[n].gid.raw, 8);
		opt.seed = be64toh(seed);
	}
	for (q = 0; q < n; q++)
		connect_qp(d, qp[q], q, &mine[q], &peer[q]);
}

/* ---- posting ---- */

struct wrd {
	uint64_t wr_id;
	int op;
	unsigned flags;
	unsigned nsge;
	struct ibv_sge sge[MAX_SGE];
	uint64_t raddr;
	uint32_t rkey;
	uint32_t imm;	/* host order */
};


static void post_ex(struct ibv_qp_ex *qpx, const struct wrd *d, unsigned n)
{
	struct ibv_data_buf buf[MAX_SGE];
	unsigned i, j;
	int rc;

	ibv_wr_start(qpx);
	for (i = 0; i < n; i++) {
		qpx->wr_id = d[i].wr_id;
		qpx->wr_flags = d[i].flags & ~IBV_SEND_INLINE;
		switch (d[i].op) {
		case OP_WRITE:
			ibv_wr_rdma_write(qpx, d[i].rkey, d[i].raddr);
			break;
		case OP_WRITE_IMM:
			ibv_wr_rdma_write_imm(qpx, d[i].rkey, d[i].raddr,
					      htobe32(d[i].imm));
			break;
		case OP_SEND:
			ibv_wr_send(qpx);
			break;
		case OP_SEND_IMM:
			ibv_wr_send_imm(qpx, htobe32(d[i].imm));
			break;
		default:
			ibv_wr_rdma_read(qpx, d[i].rkey, d[i].raddr);
			break;
		}
		if (d[i].flags & IBV_SEND_INLINE) {
			for (j = 0; j < d[i].nsge; j++) {
				buf[j].addr = (void *)(uintptr_t)d[i].sge[j].addr;
				buf[j].length = d[i].sge[j].length;
			}
			ibv_wr_set_inline_data_list(qpx, d[i].nsge, buf);
		} else {
			ibv_wr_set_sge_list(qpx, d[i].nsge, d[i].sge);
		}
	}
	rc = ibv_wr_complete(qpx);
	if (rc)
		die("ibv_wr_complete of %u WRs (first wr_id %#" PRIx64 "): %s",
		    n, d[0].wr_id, strerror(rc));
}

static void post_legacy(struct ibv_qp *qp, struct wrd *d, unsigned n)
{
	struct ibv_send_wr wr[MAX_BATCH], *bad = NULL;
	unsigned i;
	int rc;

	memset(wr, 0, n * sizeof(wr[0]));
	for (i = 0; i < n; i++) {
		wr[i].wr_id = d[i].wr_id;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		wr[i].sg_list = d[i].sge;
		wr[i].num_sge = (int)d[i].nsge;
		wr[i].opcode = verbs_op[d[i].op].wr;
		wr[i].send_flags = d[i].flags;
		wr[i].imm_data = htobe32(d[i].imm);
		wr[i].wr.rdma.remote_addr = d[i].raddr;
		wr[i].wr.rdma.rkey = d[i].rkey;
	}
	rc = ibv_post_send(qp, wr, &bad);
	if (rc)
		die("ibv_post_send of %u WRs: %s (bad wr_id %#" PRIx64 ")", n,
		    strerror(rc), bad ? bad->wr_id : 0);
}

static void post_wrs(struct ibv_qp *qp, struct ibv_qp_ex *qpx, struct wrd *d,
		     unsigned n)
{
	if (!n)
		return;
	if (qpx)
		post_ex(qpx, d, n);
	else
		post_legacy(qp, d, n);
}

static void post_recv(struct ibv_qp *qp, uint64_t wr_id,
		      const struct pieces *pc, uint32_t lkey)
{
	struct ibv_sge sge[MAX_SGE];
	struct ibv_recv_wr wr, *bad;
	unsigned i;
	int rc;

	memset(&wr, 0, sizeof(wr));
	for (i = 0; i < pc->n; i++) {
		sge[i].addr = (uintptr_t)pc->p[i];
		sge[i].length = pc->len[i];
		sge[i].lkey = lkey;
	}
	wr.wr_id = wr_id;
	wr.sg_list = sge;
	wr.num_sge = (int)pc->n;
	rc = ibv_post_recv(qp, &wr, &bad);
	if (rc)
		die("ibv_post_recv (wr_id %#" PRIx64 "): %s", wr_id, strerror(rc));
}

/* The signaled work requests of a QP, in posting order. */
struct fifo {
	uint64_t *v;
	uint64_t head, tail;
	unsigned mask;
};

static void fifo_init(struct fifo *f, unsigned cap)
{
	unsigned n = 1;

	while (n < cap)
		n <<= 1;
	f->v = calloc(n, sizeof(*f->v));
	if (!f->v)
		die("out of memory");
	f->mask = n - 1;
	f->head = f->tail = 0;
}

static void fifo_push(struct fifo *f, uint64_t x)
{
	if (f->tail - f->head > f->mask)
		die("internal: signal queue overflow");
	f->v[f->tail++ & f->mask] = x;
}

/* ---- waiting ---- */

static void nap(void)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = 50000};

	nanosleep(&ts, NULL);
}

struct idle {
	uint64_t last;		/* when something last happened */
	unsigned empty;		/* empty polls since */
};

/*
 * Poll up to 32 completions into wc and return how many.  When nothing
 * happened (no completion, and worked false) for opt.idle_ms, dump(arg)
 * says what was outstanding and the run fails.
 */
static int poll_or_fail(struct ibv_cq *cq, struct ibv_wc *wc, bool worked,
			struct idle *id, void (*dump)(const void *),
			const void *arg)
{
	int n = ibv_poll_cq(cq, 32, wc);

	if (n < 0)
		die("ibv_poll_cq failed");
	if (n > 0 || worked) {
		id->last = vu_now_ms();
		id->empty = 0;
	} else if (++id->empty > 64) {
		/* Two CPUs for two nodes and their programs: nap. */
		if (vu_now_ms() - id->last > opt.idle_ms) {
			fprintf(stderr, "stress (%s): no completion for %u ms:\n",
				role, opt.idle_ms);
			dump(arg);
			die("completion missing (seed %" PRIu64 ")", opt.seed);
		}
		nap();
	}
	return n;
}

/* After the last expected completion: nothing more may come (a duplicate). */
static void expect_quiet(struct ibv_cq *cq)
{
	uint64_t end = vu_now_ms() + 100;
	struct ibv_wc wc;

	while (vu_now_ms() < end) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			die("ibv_poll_cq failed");
		if (n > 0)
			die("a completion after the last one: wr_id %#" PRIx64 ", %s, status %s",
			    wc.wr_id, wc.opcode & IBV_WC_RECV ? "receive" : "send",
			    ibv_wc_status_str(wc.status));
		nap();
	}
}

/* Tell the peer how many bad messages we saw; return its count. */
static uint64_t swap_verdict(int fd, uint64_t bad)
{
	struct vu_dest mine, theirs;

	memset(&mine, 0, sizeof(mine));
	mine.addr = bad;
	if (vu_exchange(fd, &mine, &theirs, 1, TCP_MS))
		die("the peer went away before the verdict");
	return theirs.addr;
}

static const char *wc_op_name(enum ibv_wc_opcode o)
{
	switch (o) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	default: return "other";
	}
}

static unsigned qp_index(struct ibv_qp **qp, uint32_t qpn)
{
	unsigned q;

	for (q = 0; q < opt.nqp; q++)
		if (qp[q]->qp_num == qpn)
			return q;
	die("completion for unknown QP number %u", qpn);
	return 0;
}

static void check_wc_status(const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_SUCCESS)
		die("completion error on QP number %u: %s (status %d, vendor_err %#x, wr_id %#" PRIx64 ", QP index %" PRIu64 ", seq %" PRIu64 ")",
		    wc->qp_num, ibv_wc_status_str(wc->status), wc->status,
		    wc->vendor_err, wc->wr_id, wc->wr_id >> QP_TAG_SHIFT,
		    wc->wr_id & SEQ_MASK);
}

/* ---- the client ---- */

struct slot {
	uint64_t seq;
	int op;
	uint32_t len, off;
	unsigned nsge;
	bool readback;		/* READ of an earlier WRITE's slot */
	uint64_t rd_key, rd_off;	/* READ: the pattern expected */
	uint64_t rb_seq;	/* seq + 1 of the last readback of this slot */
};

struct cqp {
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct sched sch;
	uint64_t n, posted, comp, credit, last_sig;
	uint64_t recvs;		/* credit receives completed */
	uint64_t rng;		/* the client's own choices */
	struct fifo sig;
	struct slot *slot;
	uint8_t *local;
	uint64_t raddr;		/* this QP's area at the server */
	uint32_t rkey;
};

static struct {
	uint64_t ops[NOPS], readbacks, fences, inl, zero, signaled, bytes;
	uint64_t bad, read_checked;
} cs;

static uint8_t *local_slot(struct cqp *c, uint64_t seq)
{
	return c->local + (seq % opt.window) * (uint64_t)local_bytes();
}

static struct pieces credit_pieces;	/* none: credits carry no data */

static void client_post(struct dev *d, struct cqp *c, unsigned q)
{
	struct wrd w[MAX_BATCH];
	unsigned n = 0, batch = 1 + (unsigned)(rnd(&c->rng) % MAX_BATCH);

	while (n < batch && c->posted < c->n &&
	       c->posted < c->comp + opt.window &&
	       c->posted < c->credit + opt.window) {
		uint64_t seq = c->posted, r = rnd(&c->rng);
		struct slot *s = &c->slot[seq % opt.window];
		struct wrd *x = &w[n];
		struct pieces pc;
		struct msg m;
		uint64_t old_rb = s->rb_seq;

		sched_next(&c->sch, &m);
		if (m.seq != seq)
			die("internal: schedule out of step");
		memset(s, 0, sizeof(*s));
		s->seq = seq;
		s->op = m.op;
		s->len = m.len;
		s->off = m.off;
		s->nsge = 1 + (unsigned)(r % MAX_SGE);
		memset(x, 0, sizeof(*x));
		x->wr_id = (uint64_t)q << QP_TAG_SHIFT | seq;
		x->op = m.op;
		x->rkey = c->rkey;
		if (writes_slot(m.op))
			x->raddr = c->raddr + (seq % opt.window) * slot_bytes() +
				   m.off;
		if (m.op == OP_WRITE_IMM || m.op == OP_SEND_IMM)
			x->imm = msg_imm(q, seq);

		if (m.op == OP_READ) {
			s->rd_key = msg_key(q, READ_REGION);
			s->rd_off = m.off;
			x->raddr = c->raddr + (uint64_t)opt.window *
				   (slot_bytes() + recv_bytes()) + m.off;
			if ((r >> 8) % 4 == 0) {
				/* Read back an earlier WRITE still in its slot:
				 * one the client saw complete (or with -O any
				 * one posted before). */
				uint64_t top = opt.ordered ? seq : c->comp, t;
				uint64_t low = seq >= opt.window ? seq - opt.window + 1 : 0;

				for (t = top; t > low; t--) {
					struct slot *o = &c->slot[(t - 1) % opt.window];

					if (o->seq == t - 1 && writes_slot(o->op) &&
					    o->len > 0)
						break;
				}
				if (t > low) {
					struct slot *o = &c->slot[(t - 1) % opt.window];

					s->readback = true;
					s->len = o->len;
					s->rd_key = msg_key(q, t - 1);
					s->rd_off = 0;
					x->raddr = c->raddr + ((t - 1) % opt.window) *
						   slot_bytes() + o->off;
					o->rb_seq = seq + 1;
					cs.readbacks++;
				}
			}
		}
		split(&pc, local_slot(c, seq), s->len, s->nsge);
		s->nsge = pc.n;
		if (m.op == OP_READ)
			for (unsigned i = 0; i < pc.n; i++)
				memset(pc.p[i], 0xee, pc.len[i]);
		else
			fill_pieces(&pc, msg_key(q, seq), 0);
		x->nsge = pc.n;
		for (unsigned i = 0; i < pc.n; i++) {
			x->sge[i].addr = (uintptr_t)pc.p[i];
			x->sge[i].length = pc.len[i];
			x->sge[i].lkey = d->mr->lkey;
		}
		/* A WRITE into a slot that a READ may still read waits for
		 * the READs before it: fence.  And a few fences anyway. */
		if ((writes_slot(m.op) && old_rb > c->comp) ||
		    (r >> 16) % 64 == 0) {
			x->flags |= IBV_SEND_FENCE;
			cs.fences++;
		}
		if (m.op != OP_READ && s->len <= 64 && (r >> 24) % 2) {
			x->flags |= IBV_SEND_INLINE;
			cs.inl++;
		}
		/* Selective signaling: about one in four, at least one in
		 * eight, and the last. */
		if ((r >> 32) % 4 == 0 || seq - c->last_sig >= 8 ||
		    seq + 1 == c->n) {
			x->flags |= IBV_SEND_SIGNALED;
			fifo_push(&c->sig, seq);
			c->last_sig = seq;
			cs.signaled++;
		}
		cs.ops[m.op]++;
		cs.bytes += s->len;
		cs.zero += s->len == 0;
		c->posted++;
		n++;
	}
	post_wrs(c->qp, c->qpx, w, n);
}

static void bad_data(unsigned q, uint64_t seq, const char *what,
		     uint32_t len, int64_t at, uint8_t got, uint8_t want)
{
	fprintf(stderr,
		"stress (%s): BAD DATA: QP %u seq %" PRIu64 " %s of %u bytes: byte %" PRId64 " is %#04x, expected %#04x\n",
		role, q, seq, what, len, at, got, want);
}

/* Everything up to seq of QP q is done: check the READs among it. */
static void client_done_upto(struct cqp *c, unsigned q, uint64_t seq)
{
	for (; c->comp <= seq; c->comp++) {
		struct slot *s = &c->slot[c->comp % opt.window];
		struct pieces pc;
		int64_t at;
		uint8_t got = 0;

		if (s->seq != c->comp)
			die("internal: slot of seq %" PRIu64 " lost", c->comp);
		if (s->op != OP_READ)
			continue;
		split(&pc, local_slot(c, c->comp), s->len, s->nsge);
		at = check_pieces(&pc, s->rd_key, s->rd_off, &got);
		cs.read_checked++;
		if (at >= 0) {
			cs.bad++;
			bad_data(q, c->comp,
				 s->readback ? "READ (readback of a WRITE)" : "READ",
				 s->len, at, got,
				 pat_byte(s->rd_key, s->rd_off + (uint64_t)at));
		}
	}
}

static void client_wc(struct cqp *cq, struct ibv_qp **qps,
		      const struct ibv_wc *wc)
{
	unsigned q = qp_index(qps, wc->qp_num);
	struct cqp *c = &cq[q];
	uint64_t seq = wc->wr_id & SEQ_MASK;

	check_wc_status(wc);
	if (wc->wr_id >> QP_TAG_SHIFT != q)
		die("QP %u: completion with wr_id %#" PRIx64 " of another QP",
		    q, wc->wr_id);
	if (wc->opcode & IBV_WC_RECV) {	/* a credit */
		uint32_t credit = be32toh(wc->imm_data);

		if (seq != c->recvs)
			die("QP %u: receive completion wr_id seq %" PRIu64 ", expected %" PRIu64 " (order)",
			    q, seq, c->recvs);
		if (wc->opcode != IBV_WC_RECV || !(wc->wc_flags & IBV_WC_WITH_IMM) ||
		    wc->byte_len != 0)
			die("QP %u: credit completion is %s, flags %#x, %u bytes; expected RECV with immediate, 0 bytes",
			    q, wc_op_name(wc->opcode), wc->wc_flags, wc->byte_len);
		if (credit <= c->credit || credit > c->posted)
			die("QP %u: credit %u after %" PRIu64 ", with %" PRIu64 " posted",
			    q, credit, c->credit, c->posted);
		c->credit = credit;
		post_recv(c->qp, (uint64_t)q << QP_TAG_SHIFT |
				 (c->recvs + CREDIT_RECVS), &credit_pieces, 0);
		c->recvs++;
		return;
	}
	if (c->sig.head == c->sig.tail)
		die("QP %u: completion of wr_id seq %" PRIu64 " but nothing signaled is outstanding",
		    q, seq);
	if (seq != c->sig.v[c->sig.head & c->sig.mask])
		die("QP %u: completion of seq %" PRIu64 ", expected seq %" PRIu64 " (posting order; missing or duplicate completion)",
		    q, seq, c->sig.v[c->sig.head & c->sig.mask]);
	c->sig.head++;
	if (wc->opcode != verbs_op[c->slot[seq % opt.window].op].wc)
		die("QP %u seq %" PRIu64 ": completion opcode %s for a %s", q,
		    seq, wc_op_name(wc->opcode),
		    op_name[c->slot[seq % opt.window].op]);
	client_done_upto(c, q, seq);
}

static void dump_client(const void *arg)
{
	const struct cqp *c = arg;
	unsigned q;

	for (q = 0; q < opt.nqp; q++)
		fprintf(stderr,
			"  QP %u: %" PRIu64 " messages, %" PRIu64 " posted, %" PRIu64 " completed, credit %" PRIu64 ", %" PRIu64 " signaled outstanding\n",
			q, c[q].n, c[q].posted, c[q].comp, c[q].credit,
			c[q].sig.tail - c[q].sig.head);
}

static int run_client(void)
{
	struct ibv_qp *qps[MAX_QPS];
	struct vu_dest peer[MAX_QPS + 1];
	struct cqp *c = calloc(opt.nqp, sizeof(*c));
	struct ibv_wc wc[32];
	uint64_t addr[MAX_QPS], start, peer_bad;
	struct idle idle = {0};
	unsigned q;
	struct dev d;
	double secs;
	int fd, i, n;

	if (!c)
		die("out of memory");
	dev_open(&d, (uint64_t)opt.nqp * opt.window * local_bytes(),
		 opt.nqp * (opt.window + CREDIT_RECVS) + 64);
	for (q = 0; q < opt.nqp; q++) {
		struct cqp *x = &c[q];

		x->qp = make_qp(&d, q, opt.window, CREDIT_RECVS, &x->qpx);
		qps[q] = x->qp;
		x->n = opt.count / opt.nqp + (q < opt.count % opt.nqp);
		x->slot = calloc(opt.window, sizeof(*x->slot));
		if (!x->slot)
			die("out of memory");
		for (i = 0; i < (int)opt.window; i++)
			x->slot[i].seq = UINT64_MAX;
		x->local = d.buf + (uint64_t)q * opt.window * local_bytes();
		fifo_init(&x->sig, opt.window);
		addr[q] = (uintptr_t)x->local;
		for (i = 0; i < CREDIT_RECVS; i++)
			post_recv(x->qp, (uint64_t)q << QP_TAG_SHIFT | (uint64_t)i,
				  &credit_pieces, 0);
	}
	fd = vu_tcp_connect(opt.host, opt.port, TCP_MS);
	if (fd < 0)
		die("no TCP connection to %s:%d", opt.host, opt.port);
	exchange(fd, &d, qps, addr, peer);
	for (q = 0; q < opt.nqp; q++) {
		sched_init(&c[q].sch, q, c[q].n);
		c[q].rng = mix64(opt.seed ^ 0xc2b2ae3d27d4eb4full * (q + 1));
		c[q].raddr = peer[q].addr;
		c[q].rkey = peer[q].rkey;
	}
	printf("stress: %" PRIu64 " messages over %u QPs, window %u, up to %u bytes, api %s, seed %" PRIu64 "%s\n",
	       opt.count, opt.nqp, opt.window, opt.max_len,
	       opt.api == API_LEGACY ? "legacy" : opt.api == API_NEW ? "ibv_wr_*" : "mix",
	       opt.seed, opt.ordered ? ", readback before completion (-O)" : "");
	fflush(stdout);
	if (vu_sync(fd, TCP_MS))
		die("the server did not get ready");

	start = idle.last = vu_now_ms();
	for (;;) {
		bool done = true, did = false;

		for (q = 0; q < opt.nqp; q++) {
			uint64_t before = c[q].posted;

			client_post(&d, &c[q], q);
			did |= c[q].posted != before;
			done &= c[q].comp == c[q].n && c[q].credit == c[q].n;
		}
		if (done)
			break;
		n = poll_or_fail(d.cq, wc, did, &idle, dump_client, c);
		for (i = 0; i < n; i++)
			client_wc(c, qps, &wc[i]);
	}
	secs = (double)(vu_now_ms() - start) / 1000;
	expect_quiet(d.cq);
	peer_bad = swap_verdict(fd, cs.bad);
	if (peer_bad)
		fprintf(stderr, "stress (client): the server found %" PRIu64 " bad messages\n",
			peer_bad);
	printf("stress: %" PRIu64 " messages (%" PRIu64 " writes, %" PRIu64 " write-imms, %" PRIu64 " sends, %" PRIu64 " send-imms, %" PRIu64 " reads of which %" PRIu64 " readbacks; %" PRIu64 " of 0 bytes, %" PRIu64 " inline, %" PRIu64 " fenced, %" PRIu64 " signaled), %" PRIu64 " bytes, %" PRIu64 " bad, seed %" PRIu64 ", %.1f s, %.0f msgs/s, %.1f MB/s\n",
	       opt.count, cs.ops[OP_WRITE], cs.ops[OP_WRITE_IMM],
	       cs.ops[OP_SEND], cs.ops[OP_SEND_IMM], cs.ops[OP_READ],
	       cs.readbacks, cs.zero, cs.inl, cs.fences, cs.signaled, cs.bytes,
	       cs.bad + peer_bad, opt.seed, secs,
	       secs > 0 ? (double)opt.count / secs : 0,
	       secs > 0 ? (double)cs.bytes / secs / 1e6 : 0);
	fflush(stdout);
	return cs.bad + peer_bad ? 1 : 0;
}

/* ---- the server ---- */

struct sqp {
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct sched sch;
	uint64_t n, v;		/* messages; all below v checked */
	uint64_t recvs;		/* receive completions */
	uint64_t credit;	/* the last credit posted */
	uint64_t cposted, ccomp, last_sig;
	struct fifo sig;
	uint8_t *area;
};

static struct {
	uint64_t checked, bytes, bad, credits;
} ss;

static uint8_t *wslot(struct sqp *s, uint64_t seq)
{
	return s->area + (seq % opt.window) * (uint64_t)slot_bytes();
}

static void recv_pieces(struct sqp *s, uint64_t i, struct pieces *pc)
{
	uint8_t *b = s->area + (uint64_t)opt.window * slot_bytes() +
		     (i % opt.window) * (uint64_t)recv_bytes();

	if ((i & 1) && opt.max_len > RECV_PIECE0) {
		pc->n = 2;
		pc->p[0] = b;
		pc->len[0] = RECV_PIECE0;
		pc->p[1] = b + RECV_PIECE0 + GAP;
		pc->len[1] = opt.max_len - RECV_PIECE0;
	} else {
		pc->n = 1;
		pc->p[0] = b;
		pc->len[0] = opt.max_len;
	}
}

/* The first len bytes of a receive buffer. */
static void first_bytes(struct pieces *pc, uint32_t len)
{
	unsigned i;

	for (i = 0; i < pc->n; i++) {
		if (pc->len[i] >= len) {
			pc->len[i] = len;
			pc->n = len ? i + 1 : i;
			return;
		}
		len -= pc->len[i];
	}
}

static void server_check(unsigned q, const struct msg *m, const char *what,
			 struct pieces *pc)
{
	uint64_t key = msg_key(q, m->seq);
	uint8_t got = 0;
	int64_t at = check_pieces(pc, key, 0, &got);

	ss.checked++;
	ss.bytes += m->len;
	if (at >= 0) {
		ss.bad++;
		bad_data(q, m->seq, what, m->len, at, got,
			 pat_byte(key, (uint64_t)at));
	}
}

static void server_credit(struct sqp *s, unsigned q, bool force)
{
	struct wrd w;

	if (s->v == s->credit || (!force && s->v - s->credit < opt.window / 4))
		return;
	if (s->cposted - s->ccomp >= CREDIT_SQ - 1)
		return;		/* sent again after the next send completion */
	memset(&w, 0, sizeof(w));
	w.wr_id = (uint64_t)q << QP_TAG_SHIFT | s->cposted;
	w.op = OP_SEND_IMM;
	w.imm = (uint32_t)s->v;
	if (s->cposted - s->last_sig >= 4 || s->v == s->n) {
		w.flags = IBV_SEND_SIGNALED;
		fifo_push(&s->sig, s->cposted);
		s->last_sig = s->cposted;
	}
	post_wrs(s->qp, s->qpx, &w, 1);
	s->cposted++;
	s->credit = s->v;
	ss.credits++;
}

static void server_wc(struct sqp *sv, struct ibv_qp **qps,
		      const struct ibv_wc *wc, uint32_t lkey)
{
	unsigned q = qp_index(qps, wc->qp_num);
	struct sqp *s = &sv[q];
	uint64_t seq = wc->wr_id & SEQ_MASK;
	struct pieces pc;
	struct msg m;

	check_wc_status(wc);
	if (wc->wr_id >> QP_TAG_SHIFT != q)
		die("QP %u: completion with wr_id %#" PRIx64 " of another QP",
		    q, wc->wr_id);
	if (!(wc->opcode & IBV_WC_RECV)) {	/* a credit went out */
		if (s->sig.head == s->sig.tail ||
		    seq != s->sig.v[s->sig.head & s->sig.mask])
			die("QP %u: credit send completion %" PRIu64 " out of order",
			    q, seq);
		s->sig.head++;
		s->ccomp = seq + 1;
		return;
	}
	if (seq != s->recvs)
		die("QP %u: receive completion wr_id seq %" PRIu64 ", expected %" PRIu64 " (order)",
		    q, seq, s->recvs);
	/* The WRITEs before this message have landed: check them. */
	for (;;) {
		if (s->v >= s->n)
			die("QP %u: a receive completion after the last message", q);
		sched_next(&s->sch, &m);
		s->v++;
		if (consumes(m.op))
			break;
		if (m.op == OP_WRITE) {
			split(&pc, wslot(s, m.seq) + m.off, m.len, 1);
			server_check(q, &m, "WRITE (checked at a later receive)", &pc);
		}
	}
	if (m.op == OP_WRITE_IMM) {
		if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM)
			die("QP %u seq %" PRIu64 ": receive completion %s for a WRITE_IMM",
			    q, m.seq, wc_op_name(wc->opcode));
	} else if (wc->opcode != IBV_WC_RECV) {
		die("QP %u seq %" PRIu64 ": receive completion %s for a %s", q,
		    m.seq, wc_op_name(wc->opcode), op_name[m.op]);
	}
	if (!!(wc->wc_flags & IBV_WC_WITH_IMM) != (m.op != OP_SEND))
		die("QP %u seq %" PRIu64 " (%s): immediate flag %s", q, m.seq,
		    op_name[m.op], wc->wc_flags & IBV_WC_WITH_IMM ? "set" : "missing");
	if (m.op != OP_SEND && be32toh(wc->imm_data) != msg_imm(q, m.seq))
		die("QP %u seq %" PRIu64 " (%s): immediate %#x, expected %#x",
		    q, m.seq, op_name[m.op], be32toh(wc->imm_data),
		    msg_imm(q, m.seq));
	if (m.op == OP_WRITE_IMM) {
		split(&pc, wslot(s, m.seq) + m.off, m.len, 1);
		server_check(q, &m, "WRITE_IMM", &pc);
	} else {
		if (wc->byte_len != m.len)
			die("QP %u seq %" PRIu64 " (%s): byte_len %u, expected %u",
			    q, m.seq, op_name[m.op], wc->byte_len, m.len);
		recv_pieces(s, s->recvs, &pc);
		first_bytes(&pc, m.len);
		server_check(q, &m, op_name[m.op], &pc);
	}
	recv_pieces(s, s->recvs, &pc);
	post_recv(s->qp, (uint64_t)q << QP_TAG_SHIFT | (s->recvs + opt.window),
		  &pc, lkey);
	s->recvs++;
	server_credit(s, q, s->v == s->n);
}

static void dump_server(const void *arg)
{
	const struct sqp *sv = arg;
	unsigned q;

	for (q = 0; q < opt.nqp; q++)
		fprintf(stderr, "  QP %u: %" PRIu64 " messages, %" PRIu64 " checked, %" PRIu64 " receives done, credit %" PRIu64 "\n",
			q, sv[q].n, sv[q].v, sv[q].recvs, sv[q].credit);
}

static int run_server(void)
{
	struct ibv_qp *qps[MAX_QPS];
	struct vu_dest peer[MAX_QPS + 1];
	struct sqp *sv = calloc(opt.nqp, sizeof(*sv));
	struct ibv_wc wc[32];
	uint64_t addr[MAX_QPS];
	struct idle idle = {0};
	unsigned q;
	struct dev d;
	int fd, i, n;

	if (!sv)
		die("out of memory");
	dev_open(&d, opt.nqp * area_bytes(),
		 opt.nqp * (opt.window + CREDIT_SQ) + 64);
	for (q = 0; q < opt.nqp; q++) {
		struct sqp *s = &sv[q];
		struct pieces pc;

		s->qp = make_qp(&d, q, CREDIT_SQ, opt.window, &s->qpx);
		qps[q] = s->qp;
		s->n = opt.count / opt.nqp + (q < opt.count % opt.nqp);
		s->area = d.buf + q * area_bytes();
		addr[q] = (uintptr_t)s->area;
		fifo_init(&s->sig, CREDIT_SQ);
		for (i = 0; i < (int)opt.window; i++) {
			recv_pieces(s, (uint64_t)i, &pc);
			post_recv(s->qp, (uint64_t)q << QP_TAG_SHIFT | (uint64_t)i,
				  &pc, d.mr->lkey);
		}
	}
	fd = vu_tcp_connect(NULL, opt.port, TCP_MS);
	if (fd < 0)
		die("no client came to port %d", opt.port);
	exchange(fd, &d, qps, addr, peer);
	for (q = 0; q < opt.nqp; q++) {
		sched_init(&sv[q].sch, q, sv[q].n);
		pat_fill(msg_key(q, READ_REGION), 0,
			 sv[q].area + (uint64_t)opt.window *
					      (slot_bytes() + recv_bytes()),
			 region_bytes());
	}
	printf("stress: server, seed %" PRIu64 "\n", opt.seed);
	fflush(stdout);
	if (vu_sync(fd, TCP_MS))
		die("the client did not get ready");

	idle.last = vu_now_ms();
	for (;;) {
		bool done = true;

		for (q = 0; q < opt.nqp; q++) {
			server_credit(&sv[q], q, sv[q].v == sv[q].n);
			done &= sv[q].v == sv[q].n && sv[q].credit == sv[q].n &&
				sv[q].ccomp == sv[q].cposted;
		}
		if (done)
			break;
		n = poll_or_fail(d.cq, wc, false, &idle, dump_server, sv);
		for (i = 0; i < n; i++)
			server_wc(sv, qps, &wc[i], d.mr->lkey);
	}
	expect_quiet(d.cq);
	swap_verdict(fd, ss.bad);
	printf("stress: server checked %" PRIu64 " messages (%" PRIu64 " bytes), %" PRIu64 " bad, %" PRIu64 " credits sent, seed %" PRIu64 "\n",
	       ss.checked, ss.bytes, ss.bad, ss.credits, opt.seed);
	fflush(stdout);
	return ss.bad ? 1 : 0;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-n count] [-q qps] [-w window] [-m max bytes] [-s seed]\n"
		"          [-a legacy|new|mix] [-p port] [-t idle ms] [-O] [host]\n",
		prog);
	exit(2);
}

int main(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "n:q:w:m:s:a:p:t:O")) != -1) {
		switch (c) {
		case 'n': opt.count = strtoull(optarg, NULL, 0); break;
		case 'q': opt.nqp = (unsigned)atoi(optarg); break;
		case 'w': opt.window = (unsigned)atoi(optarg); break;
		case 'm': opt.max_len = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 's':
			opt.seed = strtoull(optarg, NULL, 0);
			opt.seed_set = 1;
			break;
		case 'a':
			if (!strcmp(optarg, "legacy"))
				opt.api = API_LEGACY;
			else if (!strcmp(optarg, "new"))
				opt.api = API_NEW;
			else if (!strcmp(optarg, "mix"))
				opt.api = API_MIX;
			else
				usage(argv[0]);
			break;
		case 'p': opt.port = atoi(optarg); break;
		case 't': opt.idle_ms = (unsigned)atoi(optarg); break;
		case 'O': opt.ordered = 1; break;
		default: usage(argv[0]);
		}
	}
	if (optind < argc) {
		opt.host = argv[optind];
		role = "client";
	}
	if (opt.nqp < 1 || opt.nqp > MAX_QPS || opt.window < 8 ||
	    opt.window > 128 || opt.max_len < 64 ||
	    (opt.max_len & (opt.max_len - 1)) || opt.max_len > (1u << 24) ||
	    opt.count >= (1ull << 32))
		die("bad options: -q 1..%d, -w 8..128, -m a power of 2 in 64..16M, -n below 2^32",
		    MAX_QPS);
	if (!opt.seed_set) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		opt.seed = mix64(((uint64_t)ts.tv_sec * 1000000000ull +
				  (uint64_t)ts.tv_nsec) ^ (uint64_t)getpid()) %
			   1000000000ull;
	}
	return opt.host ? run_client() : run_server();
}
