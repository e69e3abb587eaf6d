/* SPDX-License-Identifier: MIT */
/*
 * atomics: fetch-and-add and compare-and-swap from node a on 8-byte
 * counters of node b, checked to run exactly once and atomically.
 *
 *   server:  atomics [-p PORT] [-n N]
 *   client:  atomics [-p PORT] [-n N] HOST
 *
 * 1. Two QPs (one posting with ibv_post_send, one with the ibv_wr_* API)
 *    each fetch-and-add 1 to the same counter N times, 16 in flight: the
 *    2N values they get back must be 0 .. 2N-1, each exactly once (none
 *    lost, none run twice, none torn), and the counter ends at 2N.
 * 2. A chain of compare-and-swaps, i -> i + 1, each returns i; a CAS that
 *    does not match returns the value and changes nothing.
 * 3. Both QPs increment a second counter by CAS loops at once (retrying
 *    with the value a failed CAS returned): it must end at the sum.
 * 4. An atomic on a region registered without remote atomic rights
 *    completes with IBV_WC_REM_ACCESS_ERR; an unaligned one is refused at
 *    post time.
 * 5. A QP destroyed with atomics in flight, and then its CQ: both succeed
 *    at once (nothing waits for the peer, nothing crashes).
 * The server checks the counters in its own memory at the end as well.
 * Under loss and duplication (tests/e2e/06-faults.sh) this is the test of
 * the responder's at-most-once rule for atomics.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_util.h"

#define NQP 2			/* QP 0 legacy posts, QP 1 ibv_wr_* */
#define QP_ERR NQP		/* the error cases' own QP */
#define DEPTH 16		/* atomics in flight per QP */
#define CHAIN 1000		/* compare-and-swaps in phase 2 */
#define CONTEND 1000		/* CAS increments per QP in phase 3 */
#define POLL_MS 15000
#define TCP_MS 30000

enum { C_FAA, C_CHAIN, C_CONTEND, NCOUNTERS, C_SCRATCH = NCOUNTERS };

static int port = 18516;
static unsigned n_faa = 20000;
static unsigned bad;

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq[NQP + 1];
	struct ibv_qp *qp[NQP + 1];
	struct ibv_qp_ex *qpx;		/* QP 1 */
	struct ibv_mr *mr, *mr_noatomic, *mr_res;
	uint64_t *counters;		/* server: the targets */
	uint64_t *res;			/* client: what atomics return */
	struct vu_dest remote[NQP + 1];
	int fd;
};

#define BAD(...)                                                           \
	do {                                                               \
		fprintf(stderr, "atomics: " __VA_ARGS__);                  \
		fputc('\n', stderr);                                       \
		bad++;                                                     \
	} while (0)

static void die(const char *what)
{
	fprintf(stderr, "atomics: %s\n", what);
	exit(2);
}

static struct ibv_qp *make_qp(struct side *s, unsigned i)
{
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp *qp;

	s->cq[i] = ibv_create_cq(s->ctx, 4 * DEPTH, NULL, NULL, 0);
	if (!s->cq[i])
		die("ibv_create_cq");
	if (i != 1)
		return vu_create_rc_qp(s->pd, s->cq[i], 4 * DEPTH, 4, 1, NULL);
	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_RC;
	a.send_cq = a.recv_cq = s->cq[i];
	a.cap.max_send_wr = 4 * DEPTH;
	a.cap.max_recv_wr = 4;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	a.pd = s->pd;
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
			   IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			   IBV_QP_EX_WITH_RDMA_READ;
	qp = ibv_create_qp_ex(s->ctx, &a);
	if (qp)
		s->qpx = ibv_qp_to_qp_ex(qp);
	return qp;
}

/* Bring every QP up against the peer's, with DEPTH atomics each way. */
static void connect_all(struct side *s, const char *host)
{
	struct vu_dest mine[NQP + 1];
	union ibv_gid gid;
	unsigned i;

	if (ibv_query_gid(s->ctx, VU_PORT, VU_GID_INDEX, &gid))
		die("ibv_query_gid");
	for (i = 0; i <= NQP; i++) {
		s->qp[i] = make_qp(s, i);
		if (!s->qp[i] ||
		    vu_to_init(s->qp[i], IBV_ACCESS_REMOTE_ATOMIC |
						 IBV_ACCESS_REMOTE_READ))
			die("QP setup");
		mine[i].qpn = s->qp[i]->qp_num;
		mine[i].psn = 100 * i + 7;
		mine[i].gid = gid;
		mine[i].rkey = s->counters ? (i == QP_ERR ? s->mr_noatomic->rkey
							  : s->mr->rkey)
					   : 0;
		mine[i].addr = (uintptr_t)s->counters;
	}
	s->fd = vu_tcp_connect(host, port, TCP_MS);
	if (s->fd < 0 || vu_exchange(s->fd, mine, s->remote, NQP + 1, TCP_MS))
		die("exchange with the peer");
	for (i = 0; i <= NQP; i++) {
		struct ibv_qp_attr a;
		int mask = vu_rtr_attr(&a, &s->remote[i], IBV_MTU_1024);

		a.max_dest_rd_atomic = DEPTH;
		if (ibv_modify_qp(s->qp[i], &a, mask))
			die("RTR");
		mask = vu_rts_attr(&a, mine[i].psn, 14, 7);
		a.max_rd_atomic = DEPTH;
		if (ibv_modify_qp(s->qp[i], &a, mask))
			die("RTS");
	}
}

/* Post one atomic on QP q; the old value lands in *result. */
static int post_atomic(struct side *s, unsigned q, uint64_t wr_id,
		       enum ibv_wr_opcode op, uint64_t remote, uint64_t cmp_add,
		       uint64_t swap, uint64_t *result)
{
	struct ibv_sge sge = {.addr = (uintptr_t)result, .length = 8,
			      .lkey = s->mr_res->lkey};
	struct ibv_send_wr wr, *badwr;

	if (q == 1) {
		ibv_wr_start(s->qpx);
		s->qpx->wr_id = wr_id;
		s->qpx->wr_flags = IBV_SEND_SIGNALED;
		if (op == IBV_WR_ATOMIC_FETCH_AND_ADD)
			ibv_wr_atomic_fetch_add(s->qpx, s->remote[q].rkey,
						remote, cmp_add);
		else
			ibv_wr_atomic_cmp_swp(s->qpx, s->remote[q].rkey, remote,
					      cmp_add, swap);
		ibv_wr_set_sge(s->qpx, sge.lkey, sge.addr, sge.length);
		return ibv_wr_complete(s->qpx);
	}
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.atomic.remote_addr = remote;
	wr.wr.atomic.rkey = s->remote[q].rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	return ibv_post_send(s->qp[q], &wr, &badwr);
}

/* One completion of QP q, which must be a success of opcode op. */
static int reap(struct side *s, unsigned q, enum ibv_wc_opcode op,
		uint64_t *wr_id)
{
	struct ibv_wc wc;

	if (vu_poll(s->cq[q], &wc, POLL_MS) != 1) {
		BAD("QP %u: no completion within %u ms", q, POLL_MS);
		return -1;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != op ||
	    wc.byte_len != 8) {
		BAD("QP %u: completion %s, opcode %d, %u bytes", q,
		    ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len);
		return -1;
	}
	*wr_id = wc.wr_id;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t remote_counter(struct side *s, unsigned c)
{
	return s->remote[0].addr + 8 * c;
}

/* Phase 1: fetch-and-add from both QPs at once. */
static void phase_faa(struct side *s)
{
	unsigned posted[NQP] = {0}, done[NQP] = {0}, q, k, n = 2 * n_faa;
	uint64_t id, *all = s->res;

	while (done[0] + done[1] < n) {
		for (q = 0; q < NQP; q++) {
			while (posted[q] < n_faa && posted[q] - done[q] < DEPTH) {
				unsigned i = q * n_faa + posted[q];

				if (post_atomic(s, q, i,
						IBV_WR_ATOMIC_FETCH_AND_ADD,
						remote_counter(s, C_FAA), 1, 0,
						&all[i]))
					die("posting a fetch-and-add");
				posted[q]++;
			}
			if (posted[q] > done[q]) {
				if (reap(s, q, IBV_WC_FETCH_ADD, &id))
					return;
				done[q]++;
			}
		}
	}
	qsort(all, n, sizeof(*all), cmp_u64);
	for (k = 0; k < n; k++)
		if (all[k] != k) {
			BAD("fetch-and-add: sorted result %u is %llu: an add "
			    "was lost, run twice or torn", k,
			    (unsigned long long)all[k]);
			return;
		}
	printf("phase 1: %u fetch-and-adds on 2 QPs returned 0..%u, each "
	       "once\n", n, n - 1);
}

/* One atomic on QP q, waited for; returns the old value. */
static uint64_t atomic_now(struct side *s, unsigned q, enum ibv_wr_opcode op,
			   unsigned c, uint64_t cmp_add, uint64_t swap)
{
	uint64_t id, *r = &s->res[2 * n_faa + q];

	*r = 0xdeadbeefdeadbeefull;
	if (post_atomic(s, q, 7, op, remote_counter(s, c), cmp_add, swap, r))
		die("posting an atomic");
	if (reap(s, q, op == IBV_WR_ATOMIC_FETCH_AND_ADD ? IBV_WC_FETCH_ADD
							 : IBV_WC_COMP_SWAP,
		 &id))
		return ~0ull;
	return *r;
}

/* Phase 2: a chain of compare-and-swaps, and one that does not match. */
static void phase_chain(struct side *s)
{
	uint64_t i, got;

	for (i = 0; i < CHAIN; i++) {
		got = atomic_now(s, i % NQP, IBV_WR_ATOMIC_CMP_AND_SWP, C_CHAIN,
				 i, i + 1);
		if (got != i) {
			BAD("CAS %llu -> %llu returned %llu",
			    (unsigned long long)i, (unsigned long long)i + 1,
			    (unsigned long long)got);
			return;
		}
	}
	got = atomic_now(s, 0, IBV_WR_ATOMIC_CMP_AND_SWP, C_CHAIN, 999999, 5);
	if (got != CHAIN)
		BAD("a CAS that does not match returned %llu, not %u",
		    (unsigned long long)got, CHAIN);
	got = atomic_now(s, 1, IBV_WR_ATOMIC_FETCH_AND_ADD, C_CHAIN, 0, 0);
	if (got != CHAIN)
		BAD("after a CAS that does not match the counter is %llu, "
		    "not %u", (unsigned long long)got, CHAIN);
	else
		printf("phase 2: %u compare-and-swaps in a chain, a miss "
		       "changed nothing\n", CHAIN);
}

/* Phase 3: both QPs increment one counter by CAS loops, interleaved. */
static void phase_contend(struct side *s)
{
	unsigned wins[NQP] = {0}, misses = 0, q;
	uint64_t guess[NQP] = {0}, got;

	while (wins[0] < CONTEND || wins[1] < CONTEND) {
		for (q = 0; q < NQP; q++) {
			if (wins[q] == CONTEND)
				continue;
			got = atomic_now(s, q, IBV_WR_ATOMIC_CMP_AND_SWP,
					 C_CONTEND, guess[q], guess[q] + 1);
			if (got == ~0ull)
				return;
			if (got == guess[q]) {
				wins[q]++;
				guess[q] = got + 1;
			} else {
				misses++;
				guess[q] = got;
			}
		}
	}
	got = atomic_now(s, 0, IBV_WR_ATOMIC_FETCH_AND_ADD, C_CONTEND, 0, 0);
	if (got != 2 * CONTEND)
		BAD("two QPs' CAS increments: counter %llu, not %u",
		    (unsigned long long)got, 2 * CONTEND);
	else
		printf("phase 3: %u CAS increments from 2 QPs (%u misses) "
		       "add up\n", 2 * CONTEND, misses);
}

/* Phase 4: no atomic rights, and an unaligned address. */
static void phase_errors(struct side *s)
{
	struct ibv_sge sge = {.addr = (uintptr_t)s->res, .length = 8,
			      .lkey = s->mr_res->lkey};
	struct ibv_send_wr wr, *badwr;
	struct ibv_wc wc;
	int rc;

	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.atomic.remote_addr = remote_counter(s, C_FAA) + 4;
	wr.wr.atomic.rkey = s->remote[0].rkey;
	wr.wr.atomic.compare_add = 1;
	rc = ibv_post_send(s->qp[0], &wr, &badwr);
	if (rc != EINVAL)
		BAD("an unaligned atomic posted with %d, not EINVAL", rc);
	wr.wr.atomic.remote_addr = remote_counter(s, C_FAA);
	wr.wr.atomic.rkey = s->remote[QP_ERR].rkey;
	if (ibv_post_send(s->qp[QP_ERR], &wr, &badwr))
		die("posting the atomic without rights");
	if (vu_poll(s->cq[QP_ERR], &wc, POLL_MS) != 1 ||
	    wc.status != IBV_WC_REM_ACCESS_ERR)
		BAD("an atomic without remote atomic rights did not fail "
		    "with a remote access error");
	else
		printf("phase 4: no rights -> remote access error; unaligned "
		       "-> EINVAL\n");
}

/* Phase 5: destroy a QP, then its CQ, with work in flight. */
static void phase_destroy(struct side *s)
{
	uint64_t t0 = vu_now_ms();
	unsigned i;
	int rc;

	for (i = 0; i < DEPTH; i++)
		if (post_atomic(s, 0, i, IBV_WR_ATOMIC_FETCH_AND_ADD,
				remote_counter(s, C_SCRATCH), 1, 0, &s->res[i]))
			die("posting the atomics to leave in flight");
	rc = ibv_destroy_qp(s->qp[0]);
	if (rc)
		BAD("destroy_qp with %u atomics in flight: %s", DEPTH,
		    strerror(rc));
	rc = ibv_destroy_cq(s->cq[0]);
	if (rc)
		BAD("destroy_cq after its QP, completions pending: %s",
		    strerror(rc));
	if (vu_now_ms() - t0 > 2000)
		BAD("destroying took %llu ms",
		    (unsigned long long)(vu_now_ms() - t0));
	else if (!rc)
		printf("phase 5: QP and CQ destroyed with %u atomics in "
		       "flight\n", DEPTH);
}

static void server(struct side *s)
{
	uint64_t want[NCOUNTERS] = {[C_FAA] = 2ull * n_faa,
				    [C_CHAIN] = CHAIN,
				    [C_CONTEND] = 2 * CONTEND};
	unsigned c;

	s->counters = aligned_alloc(4096, 4096);
	if (!s->counters)
		die("out of memory");
	memset(s->counters, 0, 4096);
	s->mr = ibv_reg_mr(s->pd, s->counters, 4096,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC |
				   IBV_ACCESS_REMOTE_READ);
	s->mr_noatomic = ibv_reg_mr(s->pd, s->counters, 4096,
				    IBV_ACCESS_LOCAL_WRITE |
					    IBV_ACCESS_REMOTE_READ);
	if (!s->mr || !s->mr_noatomic)
		die("ibv_reg_mr");
	connect_all(s, NULL);
	if (vu_sync(s->fd, 600000))	/* the client is done */
		die("the client went away");
	for (c = 0; c < NCOUNTERS; c++)
		if (s->counters[c] != want[c])
			BAD("server: counter %u is %llu, not %llu", c,
			    (unsigned long long)s->counters[c],
			    (unsigned long long)want[c]);
	printf("atomics server: counters %llu %llu %llu, %u bad\n",
	       (unsigned long long)s->counters[0],
	       (unsigned long long)s->counters[1],
	       (unsigned long long)s->counters[2], bad);
}

static void client(struct side *s, const char *host)
{
	size_t len = (2ull * n_faa + NQP) * sizeof(uint64_t);

	s->res = calloc(1, len);
	if (!s->res)
		die("out of memory");
	s->mr_res = ibv_reg_mr(s->pd, s->res, len, IBV_ACCESS_LOCAL_WRITE);
	if (!s->mr_res)
		die("ibv_reg_mr");
	connect_all(s, host);
	phase_faa(s);
	if (!bad)
		phase_chain(s);
	if (!bad)
		phase_contend(s);
	if (!bad)
		phase_errors(s);
	if (!bad)
		phase_destroy(s);
	if (vu_sync(s->fd, TCP_MS))
		BAD("the server went away");
	printf("atomics: %u fetch-and-adds, %u + %u compare-and-swaps, "
	       "%u bad\n", 2 * n_faa, CHAIN, 2 * CONTEND, bad);
}

int main(int argc, char **argv)
{
	struct side s;
	int opt;

	memset(&s, 0, sizeof(s));
	while ((opt = getopt(argc, argv, "p:n:")) != -1) {
		switch (opt) {
		case 'p':
			port = atoi(optarg);
			break;
		case 'n':
			n_faa = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-p PORT] [-n N] [HOST]\n",
				argv[0]);
			return 2;
		}
	}
	if (!n_faa)
		die("-n: at least 1");
	s.ctx = vu_open_first();
	if (!s.ctx)
		return 2;
	s.pd = ibv_alloc_pd(s.ctx);
	if (!s.pd)
		die("ibv_alloc_pd");
	if (optind < argc)
		client(&s, argv[optind]);
	else
		server(&s);
	return bad ? 1 : 0;
}
