/* SPDX-License-Identifier: MIT */
/*
 * srnic_fifo: half-RDMA through srnic's own verbs (include/srnic.h;
 * docs/half-rdma.md).  Senders RDMA WRITE arrays of 64-bit numbers into a
 * sink's FIFO; the sink never sees an address, it sums the numbers of
 * each record as the packets come, in whatever order, and the sum must
 * come out exact.
 *
 *   sink:    srnic_fifo sink DIR [-s SIZE] [-f FIFO] [-p MS] [-r | -a] SENDER...
 *   sender:  srnic_fifo send DIR NAME [-s SIZE] [-u | -r | -a]
 *
 * The processes meet through files in DIR, a folder every node sees (not
 * through the network under test).  A sender registers SIZE bytes
 * (default 64 MiB) of numbers of its own, writes DIR/NAME.info, connects
 * to the QP the sink names in DIR/NAME.sink, WRITEs the whole array in
 * 1 MiB WRITEs (16 in flight) to the FIFO's key, and writes
 * DIR/NAME.done with the sum of its numbers.  With -u it registers
 * nothing: each WRITE is gathered from 16 pieces of the array by
 * srnic_post_fifo_write (half-RDMA's sending half), which copies them.
 * With -r (both sides) the sink pulls instead: each sender registers its
 * array for remote READ and waits, and the sink READs it in 1 MiB READs
 * (16 in flight a sender) into its FIFO (srnic_post_fifo_read, the
 * seed's half-send READ), each READ's records tagged with the sender and
 * chunk.  With -a (both sides) the senders READ instead, from the sink's
 * FIFO (made to take READs): each READ comes to the sink's program as a
 * request record, which it answers with numbers it makes on the spot,
 * from no registered memory (srnic_fifo_read_reply, the seed's
 * half-receive READ); each reader checks every word it got.  The sink
 * makes a FIFO of FIFO bytes (default 4 MiB) and one RC QP a sender, and
 * sums records until the senders' bytes are all in (-p: it stops taking
 * them for MS milliseconds once the first is in, a program that falls
 * behind, its ring full meanwhile); then it prints
 *
 *   half-rdma: S senders, sum exact|wrong, fifo_full F
 *
 * and the records and bytes it took (-a: the sum of what the readers
 * got, each word checked).  Exit 0 when the sum is exact.
 */
#include <getopt.h>
#include <inttypes.h>

#include "meet.h"
#include "srnic.h"

#define MAX_SENDERS 8
#define RUN_MS 240000		/* for the whole transfer */
#define CHUNK (1u << 20)
#define DEPTH 16

enum mode {
	PUSH,		/* the senders WRITE into the sink's FIFO */
	PULL,		/* -r: the sink READs their arrays into it */
	ANSWER,		/* -a: they READ the sink, its program answers */
};

/* Sender who's k-th number. */
static uint64_t number(const char *who, uint64_t k)
{
	return (k + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uint8_t)who[0] << 56;
}

/* ---- verbs ---- */

const char *meet_prog = "srnic_fifo";

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

static void side_open(struct side *s)
{
	s->ctx = meet_open();
	if (!(s->pd = ibv_alloc_pd(s->ctx)) ||
	    !(s->cq = ibv_create_cq(s->ctx, 256, NULL, NULL, 0)))
		meet_die("device, PD or CQ", errno);
}

/* ---- a sender ---- */

#define PIECES 16		/* -u: a WRITE gathered from this many */

/* WRITE chunk k of v to the sink's FIFO: from the registered array, or
 * (unregistered) gathered from PIECES pieces of it, copied by srnic
 * (srnic_post_fifo_write: half-RDMA's sending half).  0 or an errno
 * (ENOMEM: no room now). */
static int post_chunk(struct ibv_qp *qp, const uint64_t *v,
		      const struct ibv_mr *mr, uint32_t rkey, unsigned k)
{
	const uint8_t *at = (const uint8_t *)v + (uint64_t)k * CHUNK;
	struct ibv_sge sge = {(uintptr_t)at, CHUNK, mr ? mr->lkey : 0};
	struct ibv_send_wr wr = {.wr_id = k, .sg_list = &sge, .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	struct iovec iov[PIECES];
	struct srnic_fifo_write_wr fw = {.wr_id = k, .iov = iov,
					 .iovcnt = PIECES,
					 .send_flags = IBV_SEND_SIGNALED,
					 .rkey = rkey,
					 .remote_addr = (uint64_t)k * CHUNK};
	unsigned i;

	if (mr) {
		wr.wr.rdma.remote_addr = (uint64_t)k * CHUNK;
		wr.wr.rdma.rkey = rkey;
		return ibv_post_send(qp, &wr, &bad);
	}
	for (i = 0; i < PIECES; i++)
		iov[i] = (struct iovec){(void *)(at + i * (CHUNK / PIECES)),
					CHUNK / PIECES};
	return srnic_post_fifo_write(qp, &fw);
}

/* A sender's completions: how many (each counted in *done), or -1 when
 * one failed (said on stderr). */
static int reap(struct ibv_cq *cq, const char *what, unsigned *done)
{
	struct ibv_wc wc[DEPTH];
	int n = ibv_poll_cq(cq, DEPTH, wc), i;

	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "srnic_fifo: %s %" PRIu64 ": %s\n", what,
				wc[i].wr_id, ibv_wc_status_str(wc[i].status));
			return -1;
		}
		(*done)++;
	}
	return n;
}

/* A sender's QP connected to the sink's: info (its QP and GID, and what
 * else the sink is to know) in DIR/NAME.info, the sink's answer from
 * DIR/NAME.sink; the FIFO's key. */
static uint32_t meet_sink(const char *dir, const char *name,
			  struct ibv_qp *qp, const char *info)
{
	char text[256], fname[64], gid[40];
	uint32_t qpn, rkey;

	snprintf(fname, sizeof(fname), "%s.info", name);
	meet_put(dir, fname, info);
	snprintf(fname, sizeof(fname), "%s.sink", name);
	if (!meet_get(dir, fname, text, sizeof(text)) ||
	    sscanf(text, "qpn %u gid %39s rkey %u", &qpn, gid, &rkey) != 3)
		meet_die("no word from the sink", ETIMEDOUT);
	meet_connect(qp, qpn, gid);
	return rkey;
}

/* A sender's plain RC QP, connected to the sink's; the FIFO's key in
 * *rkey. */
static struct ibv_qp *join_sink(struct side *s, const char *dir,
				const char *name, uint32_t *rkey)
{
	struct ibv_qp *qp = meet_rc_qp(s->pd, s->cq, DEPTH);
	char text[128], gid[40];

	meet_gid(s->ctx, gid);
	snprintf(text, sizeof(text), "qpn %u gid %s\n", qp->qp_num, gid);
	*rkey = meet_sink(dir, name, qp, text);
	return qp;
}

/* -r: the array registered for the sink's READs, its sum said at once;
 * then wait for the sink's word that it has read it all. */
static int serve_reads(const char *dir, const char *name, const uint64_t *v,
		       size_t size, uint64_t sum)
{
	char text[256], fname[64], gid[40];
	struct side s = {0};
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint64_t until;

	side_open(&s);
	mr = ibv_reg_mr(s.pd, (void *)v, size,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr)
		meet_die("ibv_reg_mr", errno);
	qp = meet_rc_qp_access(s.pd, s.cq, DEPTH, IBV_ACCESS_REMOTE_READ);
	meet_gid(s.ctx, gid);
	snprintf(text, sizeof(text), "qpn %u gid %s rkey %u addr %" PRIu64 "\n",
		 qp->qp_num, gid, mr->rkey, (uint64_t)(uintptr_t)v);
	meet_sink(dir, name, qp, text);
	snprintf(text, sizeof(text), "sum %" PRIu64 " bytes %zu\n", sum, size);
	snprintf(fname, sizeof(fname), "%s.done", name);
	meet_put(dir, fname, text);
	snprintf(fname, sizeof(fname), "%s.bye", name);
	for (until = meet_now_ms() + RUN_MS; meet_now_ms() < until;)
		if (meet_get(dir, fname, text, sizeof(text))) {
			printf("%s: %zu bytes there for the sink's READs\n",
			       name, size);
			return 0;
		}
	return 2;
}

/* -a: READ the sink's array (size bytes, as the sink's program makes it
 * on the spot) into registered memory, DEPTH READs of CHUNK in flight,
 * then check every word; the sum and the words wrong to DIR/NAME.done. */
static int read_sink(const char *dir, const char *name, size_t size)
{
	uint64_t *v = calloc(1, size), sum = 0, bad = 0, k, until;
	unsigned posted = 0, done = 0, chunks = (unsigned)(size / CHUNK);
	char text[256], fname[64];
	struct side s = {0};
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint32_t rkey;

	if (!v)
		meet_die("calloc", ENOMEM);
	side_open(&s);
	mr = ibv_reg_mr(s.pd, v, size, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		meet_die("ibv_reg_mr", errno);
	qp = join_sink(&s, dir, name, &rkey);
	until = meet_now_ms() + RUN_MS;
	while (done < chunks && meet_now_ms() < until) {
		int n;

		while (posted < chunks && posted - done < DEPTH) {
			struct ibv_sge sge = {
				(uintptr_t)v + (uint64_t)posted * CHUNK, CHUNK,
				mr->lkey};
			struct ibv_send_wr wr = {
				.wr_id = posted, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_RDMA_READ,
				.send_flags = IBV_SEND_SIGNALED},
					   *badwr;

			wr.wr.rdma.remote_addr = (uint64_t)posted * CHUNK;
			wr.wr.rdma.rkey = rkey;
			if (ibv_post_send(qp, &wr, &badwr))
				meet_die("posting a READ", errno);
			posted++;
		}
		n = reap(s.cq, "READ", &done);
		if (n < 0)
			break;	/* (the sink still hears how far it got) */
		if (!n)
			usleep(20);
	}
	for (k = 0; k < (uint64_t)done * CHUNK / 8; k++) {
		sum += v[k];
		bad += v[k] != number(name, k);
	}
	snprintf(text, sizeof(text), "sum %" PRIu64 " bytes %zu bad %" PRIu64 "\n",
		 sum, (size_t)done * CHUNK, bad);
	snprintf(fname, sizeof(fname), "%s.done", name);
	meet_put(dir, fname, text);
	printf("%s: %u READs of %u bytes answered by the sink's program, "
	       "%" PRIu64 " words wrong\n", name, done, CHUNK, bad);
	ibv_dereg_mr(mr);
	free(v);
	return done == chunks && !bad ? 0 : 2;
}

static int send_all(const char *dir, const char *name, size_t size,
		    bool unregistered, bool reads)
{
	uint64_t *v = malloc(size), sum = 0, k, until;
	char text[256], fname[64];
	unsigned posted = 0, done = 0, chunks = (unsigned)(size / CHUNK);
	struct side s = {0};
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint32_t rkey;
	int rc;

	if (!v)
		meet_die("malloc", ENOMEM);
	for (k = 0; k < size / 8; k++)
		sum += v[k] = number(name, k);
	if (reads)
		return serve_reads(dir, name, v, size, sum);
	side_open(&s);
	mr = unregistered ? NULL
			  : ibv_reg_mr(s.pd, v, size, IBV_ACCESS_LOCAL_WRITE);
	if (!mr && !unregistered)
		meet_die("ibv_reg_mr", errno);
	qp = join_sink(&s, dir, name, &rkey);
	until = meet_now_ms() + RUN_MS;
	while (done < chunks && meet_now_ms() < until) {
		int n;

		while (posted < chunks && posted - done < DEPTH) {
			rc = post_chunk(qp, v, mr, rkey, posted);
			if (rc == ENOMEM && unregistered)
				break;	/* (the staging ring is full) */
			if (rc)
				meet_die("posting a WRITE", rc);
			posted++;
		}
		n = reap(s.cq, "WRITE", &done);
		if (n < 0)
			break;	/* (the sink still hears how far it got) */
		if (!n)
			usleep(20);
	}
	snprintf(text, sizeof(text), "sum %" PRIu64 " bytes %zu\n", sum,
		 (size_t)done * CHUNK);
	snprintf(fname, sizeof(fname), "%s.done", name);
	meet_put(dir, fname, text);
	printf("%s: %u WRITEs of %u bytes done%s\n", name, done, CHUNK,
	       unregistered ? ", each gathered from unregistered pieces" : "");
	if (mr)
		ibv_dereg_mr(mr);
	free(v);
	return done == chunks ? 0 : 2;
}

/* ---- the sink ---- */

/* The records there now, summed into *sum; their payload bytes. */
static uint64_t take(struct srnic_fifo *f, uint32_t kind, uint64_t *sum,
		     uint64_t *records, uint64_t *wrong)
{
	const struct srnic_fifo_rec *r;
	uint64_t bytes = 0;

	while ((r = srnic_fifo_next(f))) {
		const uint8_t *p = (const uint8_t *)(r + 1);
		uint32_t i;

		/* (a READ's answer is one of our READs': its tag names a
		 * sender and a chunk, its bytes lie inside the chunk) */
		if (r->valid != kind ||
		    (kind == SRNIC_FIFO_REC_READ &&
		     ((r->msn >> 24) >= MAX_SENDERS || r->msg_len != CHUNK ||
		      r->msg_off + r->pkt_len > CHUNK)))
			(*wrong)++;

		for (i = 0; i + 8 <= r->pkt_len; i += 8) {
			uint64_t x;

			memcpy(&x, p + i, 8);
			*sum += x;
		}
		bytes += r->pkt_len;
		(*records)++;
		srnic_fifo_done(f);
	}
	return bytes;
}

/* -r: what the sink READs from each sender, and how far it got. */
struct source {
	struct ibv_qp *qp;
	uint32_t rkey;
	uint64_t addr;
	unsigned posted, done;
};

/* -r: READs of the senders' chunks into the FIFO, DEPTH in flight each
 * (tag: sender, chunk), and their completions.  -1 on a failed one. */
static int pull(struct ibv_cq *cq, struct srnic_fifo *f, struct source *src,
		unsigned n, unsigned chunks)
{
	struct ibv_wc wc[DEPTH];
	unsigned i;
	int k, got;

	for (i = 0; i < n; i++) {
		struct source *c = &src[i];

		while (c->posted < chunks && c->posted - c->done < DEPTH) {
			struct srnic_fifo_read_wr rd = {
				.wr_id = (uint64_t)i << 32 | c->posted,
				.send_flags = IBV_SEND_SIGNALED, .fifo = f,
				.tag = i << 24 | c->posted, .rkey = c->rkey,
				.remote_addr = c->addr + (uint64_t)c->posted * CHUNK,
				.length = CHUNK};
			int rc = srnic_post_fifo_read(c->qp, &rd);

			if (rc)
				meet_die("srnic_post_fifo_read", rc);
			c->posted++;
		}
	}
	got = ibv_poll_cq(cq, DEPTH, wc);
	for (k = 0; k < got; k++) {
		if (wc[k].status != IBV_WC_SUCCESS ||
		    wc[k].opcode != IBV_WC_RDMA_READ) {
			fprintf(stderr, "srnic_fifo: READ %#" PRIx64 ": %s\n",
				wc[k].wr_id, ibv_wc_status_str(wc[k].status));
			return -1;
		}
		src[wc[k].wr_id >> 32].done++;
	}
	return got;
}

/* -r: a FIFO of another PD is refused at the post, as the key of a
 * region of another PD would be. */
static void other_pd_refused(struct side *s, struct ibv_qp *qp)
{
	struct ibv_pd *pd = ibv_alloc_pd(s->ctx);
	struct srnic_fifo *f = pd ? srnic_fifo_create(pd, SRNIC_FIFO_MIN) : NULL;
	struct srnic_fifo_read_wr rd = {.fifo = f, .length = 8};
	int rc;

	if (!f)
		meet_die("a second PD's FIFO", errno);
	rc = srnic_post_fifo_read(qp, &rd);
	printf("sink: a READ into a FIFO of another PD: %s\n",
	       rc == EINVAL ? "refused (EINVAL)" : strerror(rc));
	if (rc != EINVAL)
		exit(2);
	srnic_fifo_destroy(f);
	ibv_dealloc_pd(pd);
}

/* -a: the answer to every READ request in the ring: the words it asks
 * for, made now into scratch and handed over in four pieces (as from
 * scattered memory).  The requests answered; *again counts those for
 * part of a READ (asked again after a loss). */
static unsigned answer(struct srnic_fifo *f, const struct source *src,
		       char **names, unsigned n, uint64_t *scratch,
		       uint64_t *again, uint64_t *short_)
{
	const struct srnic_fifo_rec *r;
	unsigned done = 0, i;

	while ((r = srnic_fifo_next(f))) {
		const struct srnic_fifo_read_req *rq = (const void *)(r + 1);
		uint64_t first, k, q;
		struct iovec iov[4];
		int rc;

		for (i = 0; i < n && src[i].qp->qp_num != r->qp_num; i++)
			;
		if (r->valid != SRNIC_FIFO_REC_READ_REQ || i == n ||
		    rq->length > CHUNK || rq->length % 8)
			meet_die("a record that is no READ of ours", EPROTO);
		first = (rq->va + r->msg_off) / 8;
		for (k = 0; k < rq->length / 8; k++)
			scratch[k] = number(names[i], first + k);
		q = rq->length / 4;
		for (k = 0; k < 4; k++)
			iov[k] = (struct iovec){(uint8_t *)scratch + k * q,
						k == 3 ? rq->length - 3 * q : q};
		rc = srnic_fifo_read_reply(f, r, iov, 4);
		if (rc && rc != ENOBUFS)
			meet_die("srnic_fifo_read_reply", rc);
		*short_ += rc == ENOBUFS;
		*again += r->msg_off != 0 || rq->length != r->msg_len;
		srnic_fifo_done(f);
		done++;
	}
	return done;
}

/* Whether every sender has written DIR/NAME.done. */
static bool all_done(const char *dir, char **names, unsigned n)
{
	char path[512];
	unsigned i;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s.done", dir, names[i]);
		if (access(path, F_OK))
			return false;
	}
	return true;
}

static int sink(const char *dir, size_t size, size_t fifo_bytes,
		unsigned pause_ms, char **names, unsigned n, enum mode mode)
{
	char text[256], fname[64], gid[40], mine[33];
	uint64_t sum = 0, want = 0, bytes = 0, records = 0, wrong = 0, until;
	uint64_t requests = 0, again = 0, stopped = 0, bad = 0, next = 0;
	uint64_t *scratch = NULL;
	uint32_t kind = mode == PULL ? SRNIC_FIFO_REC_READ : SRNIC_FIFO_REC_WRITE;
	struct source src[MAX_SENDERS] = {{0}};
	struct srnic_fifo_attr fa;
	struct srnic_fifo *f;
	struct side s = {0};
	unsigned i;
	bool failed = false;

	side_open(&s);
	f = srnic_fifo_create_ex(s.pd, fifo_bytes,
				 mode == ANSWER ? SRNIC_FIFO_TAKE_READS : 0);
	if (!f)
		meet_die("srnic_fifo_create_ex", errno);
	meet_gid(s.ctx, mine);
	for (i = 0; i < n; i++) {
		struct ibv_qp *qp = meet_rc_qp_access(
			s.pd, s.cq, DEPTH,
			IBV_ACCESS_REMOTE_WRITE |
				(mode == ANSWER ? IBV_ACCESS_REMOTE_READ : 0));
		uint32_t qpn;

		snprintf(fname, sizeof(fname), "%s.info", names[i]);
		if (!meet_get(dir, fname, text, sizeof(text)) ||
		    sscanf(text, "qpn %u gid %39s", &qpn, gid) != 2 ||
		    (mode == PULL &&
		     sscanf(text, "qpn %*u gid %*s rkey %u addr %" SCNu64,
			    &src[i].rkey, &src[i].addr) != 2))
			meet_die(fname, ETIMEDOUT);
		src[i].qp = qp;
		meet_connect(qp, qpn, gid);
		snprintf(text, sizeof(text), "qpn %u gid %s rkey %u\n",
			 qp->qp_num, mine, srnic_fifo_rkey(f));
		snprintf(fname, sizeof(fname), "%s.sink", names[i]);
		meet_put(dir, fname, text);
	}
	if (mode == PULL)
		other_pd_refused(&s, src[0].qp);
	if (mode == ANSWER && !(scratch = malloc(CHUNK)))
		meet_die("malloc", ENOMEM);
	until = meet_now_ms() + RUN_MS;
	while (meet_now_ms() < until && !failed) {
		uint64_t got = 0;
		int polled = 0;

		if (mode == ANSWER) {
			polled = (int)answer(f, src, names, n, scratch, &again,
					     &stopped);
			requests += (unsigned)polled;
			/* (the readers say when they have it all) */
			if (!polled && meet_now_ms() >= next) {
				if (all_done(dir, names, n))
					break;
				next = meet_now_ms() + 10;
			}
		} else {
			if (bytes >= (uint64_t)n * size)
				break;
			/* (a sender that gave up says how far it got: what
			 * it wrote is in the ring, taken after the loop) */
			if (mode == PUSH && meet_now_ms() >= next) {
				if (all_done(dir, names, n))
					break;
				next = meet_now_ms() + 10;
			}
			got = take(f, kind, &sum, &records, &wrong);
			/* (-p: the senders meet a full ring, and wait) */
			if (got && pause_ms) {
				struct timespec t = {
					.tv_sec = pause_ms / 1000,
					.tv_nsec = pause_ms % 1000 * 1000000L};

				nanosleep(&t, NULL);
				until += pause_ms;
				pause_ms = 0;
			}
			polled = mode == PULL ? pull(s.cq, f, src, n,
						     (unsigned)(size / CHUNK))
					      : 0;
			failed = polled < 0;
			bytes += got;
		}
		if (!got && !polled)
			usleep(10);
	}
	for (i = 0; i < n; i++) {
		uint64_t x, got = 0, b = 0, k;

		snprintf(fname, sizeof(fname), "%s.done", names[i]);
		if (!meet_get(dir, fname, text, sizeof(text)) ||
		    sscanf(text, "sum %" SCNu64 " bytes %" SCNu64 " bad %" SCNu64,
			   &x, &got, &b) < 1)
			continue;
		if (mode != ANSWER) {
			want += x;
			continue;
		}
		/* (what the readers got, against what was answered) */
		sum += x;
		bad += b;
		for (k = 0; k < size / 8; k++)
			want += number(names[i], k);
		bytes += got;	/* (short, when a reader gave up) */
	}
	/* (a copy of a record, late, would show here) */
	usleep(200000);
	if (mode != ANSWER)
		bytes += take(f, kind, &sum, &records, &wrong);
	srnic_fifo_query(f, &fa);
	for (i = 0; mode == PULL && i < n; i++) {
		snprintf(fname, sizeof(fname), "%s.bye", names[i]);
		meet_put(dir, fname, "bye\n");
	}
	if (mode == ANSWER)
		printf("sink: %" PRIu64 " READ requests answered (%" PRIu64
		       " for a part asked again, %" PRIu64 " stopped short), %"
		       PRIu64 " bytes of %" PRIu64 " read, %" PRIu64
		       " words wrong\n",
		       requests, again, stopped, bytes, (uint64_t)n * size, bad);
	else
		printf("sink: %" PRIu64 " records%s, %" PRIu64 " bytes of %" PRIu64
		       ", ring %" PRIu64 " bytes, %" PRIu64 " records not ours\n",
		       records, mode == PULL ? " of READ answers" : "", bytes,
		       (uint64_t)n * size, fa.size, wrong);
	failed |= sum != want || bytes != (uint64_t)n * size || wrong || bad;
	printf("half-rdma: %u senders, sum %s, fifo_full %" PRIu64 "\n", n,
	       failed ? "wrong" : "exact", fa.full);
	free(scratch);
	srnic_fifo_destroy(f);
	return failed ? 2 : 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: srnic_fifo sink DIR [-s SIZE] [-f FIFO] [-p MS] [-r | -a] SENDER...\n"
		"       srnic_fifo send DIR NAME [-s SIZE] [-u | -r | -a]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	size_t size = 64u << 20, fifo = 4u << 20;
	const char *mode, *dir;
	enum mode m = PUSH;
	bool unregistered = false;
	unsigned pause_ms = 0;
	int c;

	if (argc < 3)
		usage();
	mode = argv[1];
	dir = argv[2];
	optind = 3;
	while ((c = getopt(argc, argv, "s:f:p:ura")) != -1) {
		switch (c) {
		case 'r': m = PULL; break;
		case 'a': m = ANSWER; break;
		case 's': size = strtoull(optarg, NULL, 0); break;
		case 'f': fifo = strtoull(optarg, NULL, 0); break;
		case 'p': pause_ms = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'u': unregistered = true; break;
		default: usage();
		}
	}
	if (!size || size % CHUNK || (m != PUSH && unregistered))
		usage();
	if (!strcmp(mode, "send") && argc - optind == 1)
		return m == ANSWER ? read_sink(dir, argv[optind], size)
				   : send_all(dir, argv[optind], size,
					      unregistered, m == PULL);
	if (!strcmp(mode, "sink") && argc - optind >= 1 &&
	    argc - optind <= MAX_SENDERS)
		return sink(dir, size, fifo, pause_ms, argv + optind,
			    (unsigned)(argc - optind), m);
	usage();
	return 1;
}
