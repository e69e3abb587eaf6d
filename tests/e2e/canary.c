/* SPDX-License-Identifier: MIT */
/*
 * canary: a node killed with SIGKILL in the middle of transfers aimed at it,
 * and started again, gets no stale packet in the new process's memory.
 * tests/e2e/09-restart-canary.sh drives it; one line per event, "key=value"
 * fields for the script to read.
 *
 *   canary blaster [-p PORT] [-n KILLS] [-t TIMEOUT] [-c RETRY] HOST
 *   canary target  [-p PORT] -r ROUND [-q QUIET_MS] [-P PIDFILE] [-l]
 *
 * The blaster (one process for the whole run) connects an RC QP to each
 * target in turn and streams RDMA WRITEs and SENDs into it, 64 in flight,
 * with a QP timeout and retry count long enough that, left alone, its
 * retransmissions toward a killed target go on for seconds.  A target (a new
 * process each round, killed by the script in the middle of the traffic)
 * maps its buffers at the same address as every earlier one, fills them with
 * a canary, registers them in the same order (same key indices), and
 * watches every byte for a quiet period before it lets the blaster's new QP
 * in: meanwhile the blaster's old QP may still be resending toward the dead
 * process.  Then the target checks every SEND it gets and every WRITE before
 * it, byte by byte, until it is killed.
 *
 * The blaster learns of a kill from its TCP connection (EOF), leaves the old
 * QP to end on its own CQ while it connects to the next target, and checks
 * that the old QP ends in error completions (no success after an error,
 * every WR accounted for, the QP in the error state) in bounded time.  Each
 * round writes its own pattern from its own source buffer, so stale data
 * that lands anywhere is seen for what it is.
 *
 * The last target (-l) is not killed: the blaster stops, sends a FINAL
 * SEND, and the target proves its watch can fail: it fills the canary again,
 * lets the blaster WRITE into the buffer while watching, and must catch it.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "verbs_util.h"

#define CHUNK (64u << 10)
#define NCHUNK 64
#define WBUF_SIZE ((size_t)CHUNK * NCHUNK)	/* the WRITE target: 4 MiB */
#define MAX_WRITE (32u << 10)
#define SLOT 4096			/* one SEND / one receive buffer */
#define DEPTH 64			/* blaster: WRs in flight */
#define RQ_DEPTH 128			/* target: receives posted */
#define RBUF_SIZE ((size_t)SLOT * RQ_DEPTH)
#define SEND_EVERY 8			/* every 8th WR is a SEND */
#define HDR 32
#define MAGIC 0x43414e52u		/* "CANR" */
#define F_FINAL 1u
/* Pattern offsets of the receive buffers and of SEND payloads: apart from
 * the WRITE buffer's, so that no two places expect the same bytes. */
#define RBUF_BASE (1ull << 40)
#define SEND_BASE (1ull << 41)
/* Where the target maps its buffers: the same address in every process,
 * so the old QP's WRITEs aim into the new buffer. */
#define WBUF_HINT 0x600000000000ull
#define RBUF_HINT 0x600001000000ull
/* The last round's WRITE into a watched buffer. */
#define PROBE_OFF ((1u << 20) + 123)
#define PROBE_LEN 3000
#define TCP_MS 60000

static const char *prog = "canary";

/* ---- patterns ----
 * The 8-byte word at pattern offset o (a multiple of 8) is mix(o) ^ K: K = 0
 * is the canary, round r writes with K = 0x0101..01 * (r % 254 + 1), so every
 * byte of a round's data differs from the canary's and from other rounds'.
 */
static uint64_t mix(uint64_t o)
{
	uint64_t x = (o >> 3) + 0x9e3779b97f4a7c15ull;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t round_key(unsigned r)
{
	return 0x0101010101010101ull * (r % 254 + 1);
}

/* Fill len bytes at p, which sit at pattern offset base (a multiple of 8). */
static void fill(uint8_t *p, uint64_t base, size_t len, uint64_t k)
{
	size_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t w = mix(base + i) ^ k;

		memcpy(p + i, &w, len - i < 8 ? len - i : 8);
	}
}

/*
 * Check bytes [off, off + len) of a buffer whose byte 0 sits at pattern
 * offset base (a multiple of 8).  Returns the first bad offset, or -1; with
 * *found and *want the 8-byte words around it.
 */
static int64_t check(const uint8_t *buf, uint64_t base, size_t off, size_t len,
		     uint64_t k, uint64_t *found, uint64_t *want)
{
	size_t end = off + len, o;

	for (o = off & ~(size_t)7; o < end; o += 8) {
		uint64_t w = mix(base + o) ^ k, got;
		size_t lo = o < off ? off - o : 0;
		size_t hi = end - o < 8 ? end - o : 8;

		memcpy(&got, buf + o, 8);
		if (lo == 0 && hi == 8) {
			if (got == w)
				continue;
		} else if (!memcmp((uint8_t *)&got + lo, (uint8_t *)&w + lo,
				   hi - lo)) {
			continue;
		}
		for (; lo < hi; lo++)
			if (buf[o + lo] != ((uint8_t *)&w)[lo])
				break;
		if (found)
			*found = got;
		if (want)
			*want = w;
		return (int64_t)(o + lo);
	}
	return -1;
}

/* What a bad word looks like: some round's data, or something else. */
static const char *whose(uint64_t base, uint64_t o, uint64_t got, char *s,
			 size_t n)
{
	uint64_t d = got ^ mix(base + (o & ~7ull));
	uint8_t b = (uint8_t)d;

	if (d && d == 0x0101010101010101ull * b && b <= 254)
		snprintf(s, n, "data of round %u (mod 254)", b - 1u);
	else
		snprintf(s, n, "no round's data");
	return s;
}

/* Round r's WRITE number i: where it goes and how long it is. */
static uint64_t hash(uint64_t x)
{
	return mix((x + 1) << 3);
}

static void write_at(uint64_t i, size_t *off, uint32_t *len)
{
	uint64_t h = hash(i);

	*off = (size_t)(i % NCHUNK) * CHUNK + (h % (CHUNK - MAX_WRITE));
	*len = 1 + (uint32_t)((h >> 20) % MAX_WRITE);
}

static uint32_t send_len(uint32_t seq)
{
	return HDR + (uint32_t)(hash(seq ^ 0x5e5d5e5dull) % (SLOT - HDR + 1));
}

struct hdr {
	uint32_t magic, round, seq, nwrites, len, flags;
};

/* Say what failed (and errno's word on it, if any) and stop. */
static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void die(const char *fmt, ...)
{
	int e = errno;
	va_list ap;

	printf("%s: ", prog);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("%s%s\n", e ? ": " : "", e ? strerror(e) : "");
	fflush(stdout);
	_exit(1);
}

static void nap_us(unsigned us)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)us * 1000};

	nanosleep(&ts, NULL);
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			      uint32_t sq, uint32_t rq, int access)
{
	struct ibv_qp *qp = vu_create_rc_qp(pd, cq, sq, rq, 1, NULL);

	if (!qp)
		die("ibv_create_qp");
	errno = vu_to_init(qp, access);
	if (errno)
		die("INIT");
	return qp;
}

static void connect_qp(struct ibv_qp *qp, const struct vu_dest *peer,
		       uint32_t psn, uint8_t timeout, uint8_t retry)
{
	errno = vu_to_rtr(qp, peer, IBV_MTU_1024);
	if (errno)
		die("RTR");
	errno = vu_to_rts(qp, psn, timeout, retry);
	if (errno)
		die("RTS");
}

static void local_dest(struct ibv_context *ctx, struct ibv_qp *qp,
		       uint32_t psn, struct vu_dest *d)
{
	memset(d, 0, sizeof(*d));
	d->qpn = qp->qp_num;
	d->psn = psn;
	if (ibv_query_gid(ctx, VU_PORT, VU_GID_INDEX, &d->gid))
		die("ibv_query_gid");
}

/* ================= target ================= */

struct target {
	unsigned round;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *wbuf, *rbuf;
	uint8_t *wcopy, *rcopy;	/* the canary, unregistered: to compare */
	struct ibv_mr *wmr, *rmr;
	int fd;
	/* traffic seen so far */
	uint32_t next_seq, nwrites;
	uint64_t bytes;
};

static uint8_t *map_at(uint64_t hint, size_t len)
{
	void *p = mmap((void *)(uintptr_t)hint, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)	/* taken: anywhere will do */
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

/* Every byte of both buffers is still the canary; else say what is there
 * and fail. */
static void check_canary(const struct target *t, const char *when)
{
	const struct {
		const char *name;
		const uint8_t *p, *copy;
		uint64_t base;
		size_t len;
	} reg[2] = {{"wbuf", t->wbuf, t->wcopy, 0, WBUF_SIZE},
		    {"rbuf", t->rbuf, t->rcopy, RBUF_BASE, RBUF_SIZE}};
	unsigned i;

	for (i = 0; i < 2; i++) {
		uint64_t got = 0, want = 0;
		int64_t bad;
		char s[64];

		if (!memcmp(reg[i].p, reg[i].copy, reg[i].len))
			continue;
		bad = check(reg[i].p, reg[i].base, 0, reg[i].len, 0, &got,
			    &want);
		printf("CORRUPT round=%u %s: %s offset %lld holds %016llx, "
		       "canary %016llx: %s\n", t->round, when, reg[i].name,
		       (long long)bad, (unsigned long long)got,
		       (unsigned long long)want,
		       whose(reg[i].base, (uint64_t)bad, got, s, sizeof(s)));
		fflush(stdout);
		_exit(2);
	}
}

static void post_recv(struct target *t, uint32_t slot)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(t->rbuf + (size_t)slot * SLOT),
			      .length = SLOT, .lkey = t->rmr->lkey};
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1},
			   *bad;

	if (ibv_post_recv(t->qp, &wr, &bad))
		die("ibv_post_recv");
}

static void bad_data(const struct target *t, const char *what, uint64_t base,
		     int64_t off, uint64_t got, uint64_t want)
{
	char s[64];

	printf("BAD round=%u %s: offset %lld holds %016llx, want %016llx: %s\n",
	       t->round, what, (long long)off, (unsigned long long)got,
	       (unsigned long long)want,
	       whose(base, (uint64_t)off, got, s, sizeof(s)));
	fflush(stdout);
	_exit(3);
}

/* One SEND arrived in receive slot: it and every WRITE posted before it
 * must be whole and this round's.  Returns its flags. */
static uint32_t verify_send(struct target *t, const struct ibv_wc *wc)
{
	const uint8_t *p = t->rbuf + wc->wr_id * SLOT;
	uint64_t got, want;
	struct hdr h;
	int64_t bad;

	if (wc->opcode != IBV_WC_RECV || wc->byte_len < HDR) {
		printf("BAD round=%u: receive completion opcode %d, %u bytes\n",
		       t->round, wc->opcode, wc->byte_len);
		_exit(3);
	}
	memcpy(&h, p, sizeof(h));
	if (h.magic != MAGIC || h.round != t->round || h.seq != t->next_seq ||
	    h.len != wc->byte_len || h.len != send_len(h.seq) ||
	    h.nwrites < t->nwrites) {
		printf("BAD round=%u: SEND header magic %08x round %u seq %u "
		       "(want %u) len %u (got %u bytes) nwrites %u (had %u)\n",
		       t->round, h.magic, h.round, h.seq, t->next_seq, h.len,
		       wc->byte_len, h.nwrites, t->nwrites);
		_exit(3);
	}
	bad = check(p, SEND_BASE + ((uint64_t)h.seq << 12), HDR, h.len - HDR,
		    round_key(t->round), &got, &want);
	if (bad >= 0)
		bad_data(t, "SEND payload", SEND_BASE + ((uint64_t)h.seq << 12),
			 bad, got, want);
	for (; t->nwrites < h.nwrites; t->nwrites++) {
		size_t off;
		uint32_t len;

		write_at(t->nwrites, &off, &len);
		bad = check(t->wbuf, 0, off, len, round_key(t->round), &got,
			    &want);
		if (bad >= 0)
			bad_data(t, "WRITE data", 0, bad, got, want);
		t->bytes += len;
	}
	t->next_seq++;
	t->bytes += h.len;
	return h.flags;
}

/* The last round: fill the canary again, let the blaster WRITE into it
 * while we watch, and catch it. */
static void negative_check(struct target *t)
{
	uint64_t start, got, want;
	int64_t bad = -1;
	unsigned scans = 0;

	memcpy(t->wbuf, t->wcopy, WBUF_SIZE);
	if (vu_sync(t->fd, TCP_MS))	/* armed: WRITE now */
		die("negative check: lost the blaster");
	start = vu_now_ms();
	while (vu_now_ms() - start < 10000) {
		scans++;
		if (memcmp(t->wbuf, t->wcopy, WBUF_SIZE)) {
			bad = check(t->wbuf, 0, 0, WBUF_SIZE, 0, &got, &want);
			break;
		}
		nap_us(100);
	}
	if (bad < 0 || bad < PROBE_OFF || bad >= PROBE_OFF + PROBE_LEN) {
		printf("NEGATIVE CHECK FAILED round=%u: the watch saw %s "
		       "(offset %lld) in %u scans\n", t->round,
		       bad < 0 ? "nothing" : "a change elsewhere",
		       (long long)bad, scans);
		_exit(4);
	}
	printf("target round=%u negative check: the watch saw a WRITE land at "
	       "offset %lld after %llu ms, %u scans\n", t->round,
	       (long long)bad, (unsigned long long)(vu_now_ms() - start),
	       scans);
	if (vu_sync(t->fd, TCP_MS))	/* its completion came */
		die("negative check: lost the blaster");
	if (check(t->wbuf, 0, 0, PROBE_OFF, 0, &got, &want) >= 0 ||
	    check(t->wbuf, 0, PROBE_OFF, PROBE_LEN, round_key(t->round), &got,
		  &want) >= 0 ||
	    check(t->wbuf, 0, PROBE_OFF + PROBE_LEN,
		  WBUF_SIZE - PROBE_OFF - PROBE_LEN, 0, &got, &want) >= 0) {
		printf("NEGATIVE CHECK FAILED round=%u: the WRITE did not land "
		       "exactly\n", t->round);
		_exit(4);
	}
	printf("target round=%u negative check ok\n", t->round);
}

static int run_target(unsigned round, unsigned quiet_ms, const char *pidfile,
		      int port, bool last)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ;
	struct target t = {.round = round};
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct vu_dest mine, peer;
	uint64_t q0, last_print, last_wc;
	unsigned scans = 0, i;
	uint32_t psn = 0x10000 + round;

	if (pidfile) {
		FILE *f = fopen(pidfile, "w");

		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
			die("%s", pidfile);
	}
	printf("target round=%u pid=%d start_ms=%llu\n", round, (int)getpid(),
	       (unsigned long long)vu_now_ms());
	fflush(stdout);
	/* The blaster is trying already: meet it first, then bring the
	 * device up (the engine starts with the PD). */
	t.fd = vu_tcp_connect(NULL, port, TCP_MS);
	if (t.fd < 0)
		die("no blaster came");
	ctx = vu_open_first();
	if (!ctx)
		_exit(1);
	pd = ibv_alloc_pd(ctx);
	t.cq = pd ? ibv_create_cq(ctx, RQ_DEPTH * 2, NULL, NULL, 0) : NULL;
	if (!t.cq)
		die("PD or CQ");
	t.qp = make_qp(pd, t.cq, 4, RQ_DEPTH, access);
	/* Same sizes, same order as every earlier process: same addresses
	 * and key indices; only the keys' random tags differ. */
	t.wbuf = map_at(WBUF_HINT, WBUF_SIZE);
	t.rbuf = map_at(RBUF_HINT, RBUF_SIZE);
	t.wcopy = malloc(WBUF_SIZE);
	t.rcopy = malloc(RBUF_SIZE);
	if (!t.wcopy || !t.rcopy)
		die("out of memory");
	fill(t.wcopy, 0, WBUF_SIZE, 0);
	fill(t.rcopy, RBUF_BASE, RBUF_SIZE, 0);
	memcpy(t.wbuf, t.wcopy, WBUF_SIZE);
	memcpy(t.rbuf, t.rcopy, RBUF_SIZE);
	t.wmr = ibv_reg_mr(pd, t.wbuf, WBUF_SIZE, access);
	t.rmr = ibv_reg_mr(pd, t.rbuf, RBUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!t.wmr || !t.rmr)
		die("ibv_reg_mr");
	for (i = 0; i < RQ_DEPTH; i++)
		post_recv(&t, i);
	q0 = vu_now_ms();
	printf("target round=%u registered wbuf=%p rkey=0x%08x rbuf=%p "
	       "qpn=%u quiet_start_ms=%llu\n", round, (void *)t.wbuf,
	       t.wmr->rkey, (void *)t.rbuf, t.qp->qp_num,
	       (unsigned long long)q0);
	fflush(stdout);

	/* The quiet period: the blaster's old QP may still be resending
	 * toward the old process; none of it may land here. */
	while (vu_now_ms() - q0 < quiet_ms) {
		check_canary(&t, "quiet period");
		scans++;
		nap_us(10000);
	}
	check_canary(&t, "end of quiet period");
	printf("target round=%u quiet ok scans=%u quiet_ms=%llu "
	       "quiet_end_ms=%llu\n", round, scans + 1,
	       (unsigned long long)(vu_now_ms() - q0),
	       (unsigned long long)vu_now_ms());
	fflush(stdout);

	local_dest(ctx, t.qp, psn, &mine);
	mine.rkey = t.wmr->rkey;
	mine.addr = (uintptr_t)t.wbuf;
	if (vu_exchange(t.fd, &mine, &peer, 1, TCP_MS))
		die("exchange with the blaster failed");
	connect_qp(t.qp, &peer, psn, 14, 7);
	if (vu_sync(t.fd, TCP_MS))
		die("sync with the blaster failed");

	last_print = last_wc = vu_now_ms();
	for (;;) {
		struct ibv_wc wc;
		int n = vu_poll(t.cq, &wc, 100);
		uint32_t flags;

		if (n < 0)
			die("ibv_poll_cq");
		if (n == 0) {
			if (vu_now_ms() - last_wc > 30000)
				die("no traffic for 30 s");
			continue;
		}
		last_wc = vu_now_ms();
		if (wc.status != IBV_WC_SUCCESS) {
			printf("BAD round=%u: completion %s (wr_id %llu)\n",
			       round, ibv_wc_status_str(wc.status),
			       (unsigned long long)wc.wr_id);
			_exit(3);
		}
		flags = verify_send(&t, &wc);
		if (t.next_seq == 1) {
			printf("target round=%u traffic\n", round);
			fflush(stdout);
		}
		if (flags & F_FINAL)
			break;
		post_recv(&t, (uint32_t)wc.wr_id);
		if (last_wc - last_print >= 200) {
			printf("target round=%u progress sends=%u writes=%u "
			       "bytes=%llu\n", round, t.next_seq, t.nwrites,
			       (unsigned long long)t.bytes);
			fflush(stdout);
			last_print = last_wc;
		}
	}
	printf("target round=%u final sends=%u writes=%u bytes=%llu\n", round,
	       t.next_seq, t.nwrites, (unsigned long long)t.bytes);
	if (!last) {
		printf("BAD round=%u: FINAL from the blaster in a round that "
		       "was to be killed\n", round);
		_exit(3);
	}
	negative_check(&t);
	fflush(stdout);
	/* The blaster waits for our end of the connection. */
	close(t.fd);
	return 0;
}

/* ================= blaster ================= */

struct round {
	unsigned r;
	int fd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *src;		/* WBUF_SIZE of data, then DEPTH send slots */
	uint64_t posted, done, ok, errors, writes, sends;
	uint64_t last_ok_ms, gone_ms, first_err_ms, deadline_ms;
	enum ibv_wc_status first_err;
	bool ended;		/* no more posting: peer gone or QP failed */
	bool bad_order;		/* a success after an error */
};

static struct {
	uint8_t timeout, retry;
	uint64_t timeout_ms;
	int failed;
	struct round *dying[16];
	unsigned ndying;
} B;

static void round_free(struct round *rd)
{
	if (ibv_destroy_qp(rd->qp) || ibv_destroy_cq(rd->cq) ||
	    ibv_dereg_mr(rd->mr)) {
		printf("BAD blaster round=%u: cannot destroy QP, CQ or MR: %s\n",
		       rd->r, strerror(errno));
		B.failed = 1;
	}
	free(rd->src);
	free(rd);
}

/* Completions of one round's QP.  Returns how many. */
static int reap(struct round *rd)
{
	struct ibv_wc wc[16];
	int n = ibv_poll_cq(rd->cq, 16, wc), i;

	if (n < 0) {
		printf("BAD blaster round=%u: ibv_poll_cq failed\n", rd->r);
		B.failed = 1;
		return 0;
	}
	for (i = 0; i < n; i++) {
		rd->done++;
		if (wc[i].status == IBV_WC_SUCCESS) {
			rd->ok++;
			rd->last_ok_ms = vu_now_ms();
			if (rd->errors)
				rd->bad_order = true;
			continue;
		}
		if (!rd->errors++) {
			rd->first_err = wc[i].status;
			rd->first_err_ms = vu_now_ms();
			rd->ended = true;
		}
	}
	return n;
}

/* The peer of round rd is gone (or its QP failed): stop posting, let the
 * QP end by itself, and go on. */
static void bury(struct round *rd)
{
	rd->ended = true;
	close(rd->fd);
	rd->deadline_ms = vu_now_ms() +
			  (B.retry + 1ull) * B.timeout_ms * 3 + 15000;
	if (B.ndying == sizeof(B.dying) / sizeof(B.dying[0])) {
		printf("BAD blaster: too many QPs still dying\n");
		_exit(1);
	}
	B.dying[B.ndying++] = rd;
}

static const char *status_name(enum ibv_wc_status st)
{
	switch (st) {
	case IBV_WC_SUCCESS: return "SUCCESS";
	case IBV_WC_RETRY_EXC_ERR: return "RETRY_EXC_ERR";
	case IBV_WC_RNR_RETRY_EXC_ERR: return "RNR_RETRY_EXC_ERR";
	case IBV_WC_WR_FLUSH_ERR: return "WR_FLUSH_ERR";
	case IBV_WC_REM_ACCESS_ERR: return "REM_ACCESS_ERR";
	case IBV_WC_REM_INV_REQ_ERR: return "REM_INV_REQ_ERR";
	default: return "OTHER_ERR";
	}
}

static void dying_report(struct round *rd)
{
	int state = vu_qp_state(rd->qp);

	printf("blaster round=%u old_qp posted=%llu ok=%llu errors=%llu "
	       "first_err=%s gone_ms=%llu first_err_ms=%llu "
	       "err_after_gone_ms=%lld state=%s\n", rd->r,
	       (unsigned long long)rd->posted, (unsigned long long)rd->ok,
	       (unsigned long long)rd->errors,
	       rd->errors ? status_name(rd->first_err) : "none",
	       (unsigned long long)rd->gone_ms,
	       (unsigned long long)rd->first_err_ms,
	       rd->errors ? (long long)(rd->first_err_ms - rd->gone_ms) : -1,
	       state == IBV_QPS_ERR ? "ERR" : state == IBV_QPS_RTS ? "RTS"
							       : "other");
	if (rd->bad_order) {
		printf("BAD blaster round=%u: a WR succeeded after one failed\n",
		       rd->r);
		B.failed = 1;
	}
	/* The peer died with WRs in flight: they cannot all succeed. */
	if (!rd->errors || state != IBV_QPS_ERR) {
		printf("BAD blaster round=%u: old QP ended with no error "
		       "completion or not in the error state\n", rd->r);
		B.failed = 1;
	}
	fflush(stdout);
}

/* Poll every dying QP; free those with nothing left in flight. */
static void tend_dying(void)
{
	unsigned i = 0;

	while (i < B.ndying) {
		struct round *rd = B.dying[i];

		while (reap(rd) > 0)
			;
		if (rd->done == rd->posted) {
			dying_report(rd);
			round_free(rd);
			B.dying[i] = B.dying[--B.ndying];
			continue;
		}
		if (vu_now_ms() > rd->deadline_ms) {
			printf("BAD blaster round=%u: HANG: %llu WRs still in "
			       "flight %llu ms after the peer went away\n",
			       rd->r, (unsigned long long)(rd->posted - rd->done),
			       (unsigned long long)(vu_now_ms() - rd->gone_ms));
			fflush(stdout);
			_exit(1);
		}
		i++;
	}
}

/* The peer closed its end (it was killed, or it is done). */
static bool peer_gone(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char c;

	if (poll(&p, 1, 0) <= 0)
		return false;
	if (p.revents & (POLLERR | POLLHUP))
		return true;
	return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) <= 0;
}

static bool post_one(struct round *rd, uint64_t ra, uint32_t rkey, int flags)
{
	uint64_t j = rd->posted;
	struct ibv_sge sge = {.lkey = rd->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = j, .sg_list = &sge, .num_sge = 1,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	if (j % SEND_EVERY == SEND_EVERY - 1 || flags) {
		uint8_t *slot = rd->src + WBUF_SIZE + (j % DEPTH) * SLOT;
		struct hdr h = {.magic = MAGIC, .round = rd->r,
				.seq = (uint32_t)rd->sends,
				.nwrites = (uint32_t)rd->writes,
				.len = send_len((uint32_t)rd->sends),
				.flags = (uint32_t)flags};

		fill(slot, SEND_BASE + ((uint64_t)h.seq << 12), h.len,
		     round_key(rd->r));
		memcpy(slot, &h, sizeof(h));
		sge.addr = (uintptr_t)slot;
		sge.length = h.len;
		wr.opcode = IBV_WR_SEND;
	} else {
		size_t off;
		uint32_t len;

		write_at(rd->writes, &off, &len);
		sge.addr = (uintptr_t)(rd->src + off);
		sge.length = len;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = ra + off;
		wr.wr.rdma.rkey = rkey;
	}
	if (ibv_post_send(rd->qp, &wr, &bad))
		return false;
	rd->posted++;
	if (wr.opcode == IBV_WR_SEND)
		rd->sends++;
	else
		rd->writes++;
	return true;
}

/* Wait for everything in flight on the round's QP: no error allowed. */
static void drain(struct round *rd)
{
	uint64_t t0 = vu_now_ms();

	while (rd->done < rd->posted) {
		if (!reap(rd))
			nap_us(100);
		tend_dying();
		if (rd->errors || vu_now_ms() - t0 > 30000) {
			printf("BAD blaster round=%u: %s while draining\n",
			       rd->r, rd->errors ?
			       ibv_wc_status_str(rd->first_err) : "stuck");
			_exit(1);
		}
	}
}

static void last_round(struct round *rd, const struct vu_dest *peer)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(rd->src + PROBE_OFF),
			      .length = PROBE_LEN, .lkey = rd->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = ~0ull, .sg_list = &sge, .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	drain(rd);
	if (!post_one(rd, peer->addr, peer->rkey, F_FINAL))
		die("posting the FINAL SEND");
	drain(rd);
	if (vu_sync(rd->fd, TCP_MS))	/* the target watches now */
		die("the last target did not arm its watch");
	wr.wr.rdma.remote_addr = peer->addr + PROBE_OFF;
	wr.wr.rdma.rkey = peer->rkey;
	if (ibv_post_send(rd->qp, &wr, &bad))
		die("posting the watched WRITE");
	rd->posted++;
	drain(rd);
	if (vu_sync(rd->fd, TCP_MS) || vu_wait_eof(rd->fd, TCP_MS))
		die("the last target did not finish");
	printf("blaster round=%u final posted=%llu ok=%llu\n", rd->r,
	       (unsigned long long)rd->posted, (unsigned long long)rd->ok);
}

static int run_blaster(const char *host, int port, unsigned kills,
		       unsigned final_wrs)
{
	struct ibv_context *ctx = vu_open_first();
	struct ibv_pd *pd;
	unsigned r;

	if (!ctx)
		return 1;
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd");
	B.timeout_ms = (uint64_t)(4.096e-3 * (double)(1ull << B.timeout));
	printf("blaster kills=%u timeout=%u (%llu ms) retry_cnt=%u\n", kills,
	       B.timeout, (unsigned long long)B.timeout_ms, B.retry);
	fflush(stdout);
	for (r = 0; r <= kills; r++) {
		struct round *rd = calloc(1, sizeof(*rd));
		struct vu_dest mine, peer;
		uint32_t psn = 0x20000 + r;
		uint64_t t0, last_dying = 0;

		if (!rd || !(rd->src = aligned_alloc(4096, WBUF_SIZE +
							    DEPTH * SLOT)))
			die("out of memory");
		rd->r = r;
		/* The target meets us first, then starts its engine. */
		rd->fd = vu_tcp_connect(host, port, TCP_MS);
		if (rd->fd < 0)
			die("no target for the next round");
		fill(rd->src, 0, WBUF_SIZE, round_key(r));
		rd->mr = ibv_reg_mr(pd, rd->src, WBUF_SIZE + DEPTH * SLOT,
				    IBV_ACCESS_LOCAL_WRITE);
		rd->cq = ibv_create_cq(ctx, DEPTH * 2, NULL, NULL, 0);
		if (!rd->mr || !rd->cq)
			die("MR or CQ");
		rd->qp = make_qp(pd, rd->cq, DEPTH, 1, 0);
		/* Its quiet period: keep the old QPs reaped meanwhile. */
		t0 = vu_now_ms();
		for (;;) {
			struct pollfd p = {.fd = rd->fd, .events = POLLIN};

			tend_dying();
			if (poll(&p, 1, 1) > 0)
				break;
			if (vu_now_ms() - t0 > TCP_MS)
				die("the target never came out of its quiet "
				    "period");
		}
		local_dest(ctx, rd->qp, psn, &mine);
		if (vu_exchange(rd->fd, &mine, &peer, 1, TCP_MS))
			die("exchange with the target failed");
		connect_qp(rd->qp, &peer, psn, B.timeout, B.retry);
		if (vu_sync(rd->fd, TCP_MS))
			die("sync with the target failed");
		printf("blaster round=%u connected qpn=%u -> %u addr=0x%llx "
		       "rkey=0x%08x\n", r, rd->qp->qp_num, peer.qpn,
		       (unsigned long long)peer.addr, peer.rkey);
		fflush(stdout);
		t0 = vu_now_ms();
		while (!rd->ended) {
			bool busy = false;

			while (rd->posted - rd->done < DEPTH &&
			       (r < kills || rd->posted < final_wrs)) {
				if (!post_one(rd, peer.addr, peer.rkey, 0))
					break;	/* the QP went to error */
				busy = true;
			}
			if (reap(rd))
				busy = true;
			if (r == kills && rd->posted >= final_wrs)
				break;
			if (vu_now_ms() - last_dying >= 5) {
				last_dying = vu_now_ms();
				tend_dying();
				if (peer_gone(rd->fd)) {
					rd->gone_ms = vu_now_ms();
					break;
				}
			}
			if (vu_now_ms() - t0 > TCP_MS)
				die("a round went on for a minute: no kill");
			if (!busy)
				nap_us(50);
		}
		if (r == kills) {
			last_round(rd, &peer);
			close(rd->fd);
			round_free(rd);
			break;
		}
		if (!rd->gone_ms)	/* the QP failed before the peer went */
			rd->gone_ms = vu_now_ms();
		printf("blaster round=%u gone posted=%llu ok=%llu writes=%llu "
		       "sends=%llu at_ms=%llu\n", r,
		       (unsigned long long)rd->posted,
		       (unsigned long long)rd->ok,
		       (unsigned long long)rd->writes,
		       (unsigned long long)rd->sends,
		       (unsigned long long)rd->gone_ms);
		fflush(stdout);
		bury(rd);
	}
	while (B.ndying) {
		tend_dying();
		nap_us(1000);
	}
	printf("blaster done failed=%d\n", B.failed);
	return B.failed;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: canary blaster [-p PORT] [-n KILLS] [-t TIMEOUT] "
		"[-c RETRY] [-F FINAL_WRS] HOST\n"
		"       canary target [-p PORT] -r ROUND [-q QUIET_MS] "
		"[-P PIDFILE] [-l]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int port = 18620, opt;
	unsigned kills = 20, round = ~0u, quiet = 1200, final_wrs = 800;
	const char *pidfile = NULL;
	bool last = false, blaster;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		usage();
	blaster = !strcmp(argv[1], "blaster");
	if (!blaster && strcmp(argv[1], "target"))
		usage();
	B.timeout = 17;
	B.retry = 7;
	optind = 2;
	while ((opt = getopt(argc, argv, "p:n:t:c:F:r:q:P:l")) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case 'n': kills = (unsigned)atoi(optarg); break;
		case 't': B.timeout = (uint8_t)atoi(optarg); break;
		case 'c': B.retry = (uint8_t)atoi(optarg); break;
		case 'F': final_wrs = (unsigned)atoi(optarg); break;
		case 'r': round = (unsigned)atoi(optarg); break;
		case 'q': quiet = (unsigned)atoi(optarg); break;
		case 'P': pidfile = optarg; break;
		case 'l': last = true; break;
		default: usage();
		}
	}
	if (blaster) {
		if (optind != argc - 1)
			usage();
		return run_blaster(argv[optind], port, kills, final_wrs);
	}
	if (round == ~0u || optind != argc)
		usage();
	return run_target(round, quiet, pidfile, port, last);
}
