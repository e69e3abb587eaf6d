/* SPDX-License-Identifier: MIT */
/*
 * srnic_cond: conditional RDMA through srnic's own verbs (include/srnic.h;
 * docs/conditional-rdma.md).  A source WRITEs to some targets and, once
 * all those WRITEs have completed, signals a last target with a WRITE
 * with immediate that the datapath holds back until then: the program
 * posts everything at once and never looks in between.
 *
 *   target:  srnic_cond target DIR NAME [-s SIZE] [-r]
 *   source:  srnic_cond source DIR [-n N] [-s SIZE] [-f | -p] NAME... SIGNAL
 *
 * The processes meet through files in DIR, a folder every node sees (not
 * through the network under test).  A target makes one RC QP and a
 * region of SIZE bytes (default 4 MiB), writes DIR/NAME.info, connects
 * to the QP the source names in DIR/NAME.peer and writes DIR/NAME.ready.
 * A target with -r (the signal's) posts receives and records each WRITE
 * with immediate that lands: its count, the first one's immediate and
 * wall-clock time.  Once DIR/done appears, each target writes
 * DIR/NAME.result: "received R imm I at T" (-r), or "wrong W", the bytes
 * of its region that differ from the source's pattern for it.
 *
 * The source connects one QP to each target, makes a conditional queue,
 * posts on SIGNAL's QP a WRITE with immediate conditional on the queue
 * counting every component a success, then posts N WRITEs of SIZE / N
 * bytes to each other target as components (all signaled: the last one's
 * completion time is when its ACK came).  With -f the last component to
 * the last of them carries a key that is no key, and fails.  It waits for
 * every completion (with -f: 500 ms more, then destroys the queue, which
 * must flush the conditional WRITE), writes DIR/done, reads the targets'
 * results, and prints one line:
 *
 *   conditional: fired after C of T components, once, L us after the last ACK
 *   conditional: not fired, C of T components, F failed, flushed
 *
 * With -p the program does what the queue would, for comparison: it polls
 * until the last component has completed and only then posts the signal,
 * an ordinary WRITE with immediate ("program: posted after ..." then).
 *
 * L is the signal's landing at its target less the last component's
 * completion at the source, both wall-clock times of their CQEs (nodes of
 * one host share the clock).  Exit 0 when that is what happened and every
 * target's bytes are right, else 2 (1: a setup failure).
 */
#include <getopt.h>
#include <inttypes.h>

#include <arpa/inet.h>

#include "meet.h"
#include "srnic.h"

#define MAX_TARGETS 8
#define WAIT_MS 30000		/* for completions */
#define SIGNAL_IMM 0x5160a1u	/* the conditional WRITE's immediate */
#define CQE_DEPTH 4096

const char *meet_prog = "srnic_cond";

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	uint8_t *buf;
	size_t len;
	struct ibv_mr *mr;
	char gid[33];		/* hex */
};

struct peer {
	char name[32];
	struct ibv_qp *qp;
	uint32_t qpn, rkey;
	uint64_t addr;
};

/* Each byte depends on the target and its offset. */
static uint8_t pattern(char who, uint64_t off)
{
	return (uint8_t)(who * 31 + off * 7 + (off >> 12));
}

/* ---- verbs ---- */

static void side_open(struct side *s, size_t len, bool timestamps)
{
	struct ibv_cq_init_attr_ex ca = {.cqe = CQE_DEPTH,
					 .wc_flags = IBV_WC_STANDARD_FLAGS};
	s->ctx = meet_open();
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		meet_die("ibv_alloc_pd", errno);
	if (timestamps)
		ca.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	s->cq = ibv_create_cq_ex(s->ctx, &ca);
	if (!s->cq)
		meet_die("ibv_create_cq_ex", errno);
	s->len = len;
	s->buf = calloc(1, len);
	if (!s->buf)
		meet_die("calloc", ENOMEM);
	s->mr = ibv_reg_mr(s->pd, s->buf, len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!s->mr)
		meet_die("ibv_reg_mr", errno);
	meet_gid(s->ctx, s->gid);
}

/* ---- the target ---- */

static int target(const char *dir, const char *name, size_t len, bool recv)
{
	char text[256], gid[40], fname[64], done[512];
	uint64_t first_ts = 0, until;
	unsigned received = 0;
	uint32_t imm = 0, qpn;
	struct side s = {0};
	struct ibv_qp *qp;
	size_t off, wrong = 0;

	side_open(&s, len, recv);
	qp = meet_rc_qp(s.pd, ibv_cq_ex_to_cq(s.cq), 64);
	snprintf(text, sizeof(text), "qpn %u gid %s rkey %u addr %" PRIu64 "\n",
		 qp->qp_num, s.gid, s.mr->rkey, (uint64_t)(uintptr_t)s.buf);
	snprintf(fname, sizeof(fname), "%s.info", name);
	meet_put(dir, fname, text);
	snprintf(fname, sizeof(fname), "%s.peer", name);
	if (!meet_get(dir, fname, text, sizeof(text)) ||
	    sscanf(text, "qpn %u gid %39s", &qpn, gid) != 2)
		meet_die("no word from the source", ETIMEDOUT);
	meet_connect(qp, qpn, gid);
	if (recv) {
		struct ibv_recv_wr wr = {0}, *bad;
		unsigned i;

		for (i = 0; i < 16; i++)
			if (ibv_post_recv(qp, &wr, &bad))
				meet_die("ibv_post_recv", errno);
	}
	snprintf(fname, sizeof(fname), "%s.ready", name);
	meet_put(dir, fname, "ready\n");
	/* until the source is done: what lands, and when */
	/* (a last look once the source is done: d made the signal's
	 * completion before it acknowledged the signal, which the source
	 * waited for, but this loop may not have polled it yet) */
	until = meet_now_ms() + 10 * WAIT_MS;
	snprintf(done, sizeof(done), "%s/done", dir);
	for (;;) {
		bool last = !access(done, F_OK) || meet_now_ms() >= until;
		struct ibv_poll_cq_attr pa = {0};

		if (ibv_start_poll(s.cq, &pa)) {
			if (last)
				break;
			usleep(50);
			continue;
		}
		do {
			if (s.cq->status == IBV_WC_SUCCESS &&
			    ibv_wc_read_opcode(s.cq) == IBV_WC_RECV_RDMA_WITH_IMM &&
			    !received++) {
				first_ts = ibv_wc_read_completion_wallclock_ns(s.cq);
				imm = ntohl(ibv_wc_read_imm_data(s.cq));
			}
		} while (!ibv_next_poll(s.cq));
		ibv_end_poll(s.cq);
	}
	if (recv) {
		snprintf(text, sizeof(text), "received %u imm %#x at %" PRIu64 "\n",
			 received, imm, first_ts);
	} else {
		for (off = 0; off < len; off++)
			wrong += s.buf[off] != pattern(name[0], off);
		snprintf(text, sizeof(text), "wrong %zu\n", wrong);
	}
	snprintf(fname, sizeof(fname), "%s.result", name);
	meet_put(dir, fname, text);
	return 0;
}

/* ---- the source ---- */

struct run {
	unsigned n;		/* components to each target */
	unsigned ncomp;		/* in all */
	unsigned done;		/* components completed, either way */
	uint64_t last_ok_ts;	/* the latest successful one's CQE time */
	int signal_status;	/* the conditional WRITE's, -1 until it ends */
	uint64_t signal_ts;
};

static void reap(struct side *s, struct run *r)
{
	struct ibv_poll_cq_attr pa = {0};

	if (ibv_start_poll(s->cq, &pa))
		return;
	do {
		if (s->cq->wr_id == UINT64_MAX) {
			r->signal_status = s->cq->status;
			r->signal_ts = ibv_wc_read_completion_wallclock_ns(s->cq);
			continue;
		}
		r->done++;
		if (s->cq->status == IBV_WC_SUCCESS) {
			uint64_t t = ibv_wc_read_completion_wallclock_ns(s->cq);

			if (t > r->last_ok_ts)
				r->last_ok_ts = t;
		}
	} while (!ibv_next_poll(s->cq));
	ibv_end_poll(s->cq);
}

static void connect_all(struct side *s, const char *dir, struct peer *p,
			unsigned np, unsigned depth)
{
	char text[256], gid[40], fname[64];
	unsigned i;

	for (i = 0; i < np; i++) {
		p[i].qp = meet_rc_qp(s->pd, ibv_cq_ex_to_cq(s->cq), depth);
		snprintf(fname, sizeof(fname), "%s.info", p[i].name);
		if (!meet_get(dir, fname, text, sizeof(text)) ||
		    sscanf(text, "qpn %u gid %39s rkey %u addr %" SCNu64,
			   &p[i].qpn, gid, &p[i].rkey, &p[i].addr) != 4)
			meet_die(fname, ETIMEDOUT);
		meet_connect(p[i].qp, p[i].qpn, gid);
		snprintf(text, sizeof(text), "qpn %u gid %s\n", p[i].qp->qp_num,
			 s->gid);
		snprintf(fname, sizeof(fname), "%s.peer", p[i].name);
		meet_put(dir, fname, text);
	}
	for (i = 0; i < np; i++) {
		snprintf(fname, sizeof(fname), "%s.ready", p[i].name);
		if (!meet_get(dir, fname, text, sizeof(text)))
			meet_die(fname, ETIMEDOUT);
	}
}

/* The N components to target p (index t of the data targets), each
 * chunk of its region; with bad, the last with a key that is none. */
static void post_components(struct side *s, struct srnic_condq *q,
			    const struct peer *p, unsigned n, bool bad)
{
	size_t chunk = s->len / n;
	unsigned i;
	int rc;

	for (i = 0; i < n; i++) {
		struct ibv_sge sge = {(uintptr_t)s->buf + i * chunk,
				      (uint32_t)chunk, s->mr->lkey};
		struct ibv_send_wr wr = {.wr_id = i, .sg_list = &sge,
					 .num_sge = 1,
					 .opcode = IBV_WR_RDMA_WRITE,
					 .send_flags = IBV_SEND_SIGNALED}, *b;

		wr.wr.rdma.remote_addr = p->addr + i * chunk;
		wr.wr.rdma.rkey = p->rkey ^ (bad && i == n - 1 ? 0x5a5a5a00u : 0);
		rc = srnic_post_send_counted(p->qp, &wr, q, &b);
		if (rc)
			meet_die("srnic_post_send_counted", rc);
	}
}

static int source(const char *dir, unsigned n, size_t len, bool fail,
		  bool program, char **names, unsigned np)
{
	struct peer p[MAX_TARGETS] = {0};
	struct run r = {.n = n, .ncomp = n * (np - 1), .signal_status = -1};
	struct srnic_condq_attr qa;
	struct srnic_condq *q;
	struct side s = {0};
	struct ibv_sge sge;
	struct ibv_send_wr wr = {0}, *bad;
	char text[256], fname[64];
	unsigned i, received = 0, imm = 0;
	uint64_t until, landed = 0, wrong = 0;
	int rc;

	for (i = 0; i < np; i++)
		snprintf(p[i].name, sizeof(p[i].name), "%s", names[i]);
	side_open(&s, len, true);
	connect_all(&s, dir, p, np, n + 1);
	q = srnic_condq_create(s.pd);
	if (!q)
		meet_die("srnic_condq_create", errno);
	/* the signal first, held back by its condition */
	sge = (struct ibv_sge){(uintptr_t)s.buf, 8, s.mr->lkey};
	wr.wr_id = UINT64_MAX;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htonl(SIGNAL_IMM);
	wr.wr.rdma.remote_addr = p[np - 1].addr;
	wr.wr.rdma.rkey = p[np - 1].rkey;
	if (!program) {
		rc = srnic_post_cond(p[np - 1].qp, &wr, q, SRNIC_COND_COUNT_GE,
				     r.ncomp, &bad);
		if (rc)
			meet_die("srnic_post_cond", rc);
	}
	/* then the components: each target's own bytes, from one buffer */
	for (i = 0; i + 1 < np; i++) {
		size_t off;

		for (off = 0; off < len; off++)
			s.buf[off] = pattern(p[i].name[0], off);
		post_components(&s, q, &p[i], n, fail && i == np - 2);
		/* (the WQEs hold the buffer's address, not its bytes: wait
		 * until these are done before the next target's pattern) */
		until = meet_now_ms() + WAIT_MS;
		while (r.done < n * (i + 1) && meet_now_ms() < until)
			reap(&s, &r);
	}
	until = meet_now_ms() + (fail ? 500 : WAIT_MS);
	if (program) {
		/* (the program's way: see the last completion, then post) */
		while (r.done < r.ncomp && meet_now_ms() < until)
			reap(&s, &r);
		rc = ibv_post_send(p[np - 1].qp, &wr, &bad);
		if (rc)
			meet_die("ibv_post_send", rc);
	}
	while ((r.done < r.ncomp || r.signal_status < 0) && meet_now_ms() < until)
		reap(&s, &r);
	srnic_condq_query(q, &qa);
	if (fail) {
		/* never fired: destroying the queue fails the signal */
		srnic_condq_destroy(q);
		until = meet_now_ms() + WAIT_MS;
		while (r.signal_status < 0 && meet_now_ms() < until)
			reap(&s, &r);
	}
	meet_put(dir, "done", "done\n");
	for (i = 0; i < np; i++) {
		snprintf(fname, sizeof(fname), "%s.result", p[i].name);
		if (!meet_get(dir, fname, text, sizeof(text)))
			meet_die(fname, ETIMEDOUT);
		if (i + 1 < np) {
			uint64_t w;

			if (sscanf(text, "wrong %" SCNu64, &w) == 1)
				wrong += fail && i == np - 2 ? 0 : w;
			else
				wrong += len;
		} else if (sscanf(text, "received %u imm %x at %" SCNu64,
				  &received, &imm, &landed) != 3) {
			meet_die("the signal's target said nothing", EPROTO);
		}
	}
	if (!fail) {
		bool once = received == 1 && imm == SIGNAL_IMM &&
			    qa.fired == !program &&
			    r.signal_status == IBV_WC_SUCCESS;
		bool after = landed >= r.last_ok_ts;

		printf("%s after %" PRIu64 " of %u components, %s, "
		       "%.1f us after the last ACK\n",
		       program ? "program: posted" : "conditional: fired",
		       qa.count, r.ncomp, once ? "once" : "NOT once",
		       ((double)landed - (double)r.last_ok_ts) / 1000.0);
		printf("target bytes wrong: %" PRIu64 "; signal %s\n", wrong,
		       after ? "after the components" : "BEFORE the components");
		return once && after && !wrong && qa.count == r.ncomp ? 0 : 2;
	}
	printf("conditional: %s, %" PRIu64 " of %u components, %" PRIu64
	       " failed, %s\n",
	       received || qa.fired ? "FIRED" : "not fired", qa.count, r.ncomp,
	       qa.failed,
	       r.signal_status == IBV_WC_WR_FLUSH_ERR ? "flushed" : "NOT flushed");
	return !received && !qa.fired && qa.failed >= 1 &&
		       r.signal_status == IBV_WC_WR_FLUSH_ERR && !wrong
		       ? 0
		       : 2;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: srnic_cond target DIR NAME [-s SIZE] [-r]\n"
		"       srnic_cond source DIR [-n N] [-s SIZE] [-f | -p] NAME... SIGNAL\n");
	exit(1);
}

int main(int argc, char **argv)
{
	size_t len = 4u << 20;
	unsigned n = 64;
	bool recv = false, fail = false, program = false;
	const char *mode, *dir;
	int c;

	if (argc < 3)
		usage();
	mode = argv[1];
	dir = argv[2];
	optind = 3;
	while ((c = getopt(argc, argv, "s:n:rfp")) != -1) {
		switch (c) {
		case 's': len = strtoull(optarg, NULL, 0); break;
		case 'n': n = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'r': recv = true; break;
		case 'f': fail = true; break;
		case 'p': program = true; break;
		default: usage();
		}
	}
	if (!strcmp(mode, "target") && optind < argc)
		return target(dir, argv[optind], len, recv);
	if (!strcmp(mode, "source") && argc - optind >= 2 && !(fail && program) &&
	    argc - optind <= MAX_TARGETS && n && len >= n && len / n <= (1u << 30))
		return source(dir, n, len, fail, program, argv + optind,
			      (unsigned)(argc - optind));
	usage();
	return 1;
}
