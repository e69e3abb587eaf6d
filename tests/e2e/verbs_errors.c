/* SPDX-License-Identifier: MIT */
/*
 * verbs_errors: bad input gets the error a verbs user expects, with no crash
 * and no hang.  Prints one line per check, "ok - ..." or "not ok - ...", and
 * exits non-zero if any check failed.
 *
 *   verbs_errors [-p PORT]             server (run it first, on node b)
 *   verbs_errors [-p PORT] HOST        client: local checks, then the
 *                                      connected ones against HOST
 *   verbs_errors --unreachable IP [--resolve-ms N]
 *                                      alone: INIT->RTR to a GID nobody
 *                                      answers fails EHOSTUNREACH in time
 *
 * The client and the server make one RC QP pair per case up front and swap
 * them in one TCP exchange; each error case then runs on its own pair, so an
 * error (which takes a QP to the error state) never spoils the next case.
 * At the end the server exits without cleaning up, as a crashed peer would,
 * and the client checks that a WRITE to it fails instead of hanging.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_util.h"

#define REGION 4096		/* bytes registered of each 2 * REGION buffer */
#define SMALL_RECV 64		/* the server's receive for the SEND case */
#define BIG_SEND 256		/* what the client sends into it */
#define PROBE_LEN 64		/* successful WRITEs land at [0, PROBE_LEN) */
#define PATTERN 0xab
#define POLL_MS 5000		/* longest wait for any one completion */
#define TCP_MS 30000
#define PEER_GONE_MS 5000	/* "within a few seconds" */

/* One QP pair per case. */
enum {
	QP_PROBE,	/* state checks in RTR/RTS, full SQ, successful WRITEs */
	QP_BAD_LKEY,
	QP_LOCAL_LEN,
	QP_BAD_RKEY,
	QP_REMOTE_LEN,
	QP_REMOTE_WRAP,
	QP_NO_READ,
	QP_SEND_LEN,
	QP_PEER_GONE,
	NQP
};

#define PROBE_SQ 8

struct node {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	enum ibv_mtu mtu;
	union ibv_gid gid;
	struct ibv_cq *cq[NQP];
	struct ibv_qp *qp[NQP];
	struct ibv_qp_cap cap[NQP];
	uint32_t psn[NQP];
	/* client: the source of everything it sends; server: the region
	 * WRITEs and READs go to */
	uint8_t *buf;
	struct ibv_mr *mr;
	/* server: a region registered without REMOTE_READ */
	uint8_t *nrbuf;
	struct ibv_mr *nrmr;
	/* server: the small receive buffer of the SEND case */
	uint8_t *rbuf;
	struct ibv_mr *rmr;
	struct vu_dest peer[NQP];
};

#define report vu_check
#define n_checks vu_checks
#define n_failed vu_failed
#define state_name vu_state_str
#define err_name vu_err_str
#define wc_name vu_wc_str

static void die(const char *what)
{
	printf("not ok - %s: %s\n", what, strerror(errno));
	printf("# bailing out after %u checks, %u failed\n", n_checks,
	       n_failed + 1);
	fflush(stdout);
	_exit(1);
}

static uint8_t *region(void)
{
	uint8_t *p = aligned_alloc(4096, 2 * REGION);

	if (!p)
		die("aligned_alloc");
	memset(p, 0, 2 * REGION);
	return p;
}

/* ---- checks that need no peer ---- */

static void expect_modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
			  int want, const char *what)
{
	int before = vu_qp_state(qp), after, rc;
	char detail[128];

	rc = ibv_modify_qp(qp, a, mask);
	after = vu_qp_state(qp);
	snprintf(detail, sizeof(detail), "returned %s, state %s -> %s",
		 err_name(rc), state_name(before), state_name(after));
	report(rc == want && after == before, detail,
	       "modify_qp %s fails %s, state stays %s", what, err_name(want),
	       state_name(before));
}

static void expect_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			     struct ibv_send_wr *want_bad, int want,
			     const char *what)
{
	struct ibv_send_wr *bad = NULL;
	char detail[128];
	int rc;

	rc = ibv_post_send(qp, wr, &bad);
	snprintf(detail, sizeof(detail), "returned %s, bad_wr %s",
		 err_name(rc), bad == want_bad ? "right" : bad ? "wrong"
							     : "unset");
	report(rc == want && bad == want_bad, detail,
	       "post_send %s returns %s and sets bad_wr", what,
	       err_name(want));
}

static void local_checks(struct node *n)
{
	struct ibv_comp_channel *ch, stand_in;
	struct ibv_cq_init_attr_ex cqa;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct ibv_send_wr wr;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge sge;
	struct vu_dest self;
	struct ibv_cq *cq;
	struct ibv_cq_ex *cqx;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf = region();
	char detail[128];
	int mask, rc;

	/* Memory registration. */
	errno = 0;
	mr = ibv_reg_mr(n->pd, buf, REGION, IBV_ACCESS_REMOTE_WRITE);
	snprintf(detail, sizeof(detail), "%s, errno %s", mr ? "succeeded" : "failed",
		 err_name(errno));
	report(!mr && errno == EINVAL, detail,
	       "reg_mr with REMOTE_WRITE but without LOCAL_WRITE fails EINVAL");
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_mr(n->pd, buf, REGION, IBV_ACCESS_REMOTE_ATOMIC);
	snprintf(detail, sizeof(detail), "%s, errno %s", mr ? "succeeded" : "failed",
		 err_name(errno));
	report(!mr && errno == EINVAL, detail,
	       "reg_mr with REMOTE_ATOMIC but without LOCAL_WRITE fails EINVAL");
	if (mr)
		ibv_dereg_mr(mr);

	/* Completion channels: srnic's preload library makes them (./srnic
	 * exec preloads it).  A channel it did not make (libibverbs' own,
	 * here a stand-in with no pipe) is refused; a CQ on a real one
	 * arms, and has no event before a completion. */
	errno = 0;
	ch = ibv_create_comp_channel(n->ctx);
	snprintf(detail, sizeof(detail), "%s, errno %s", ch ? "succeeded" : "failed",
		 err_name(errno));
	report(ch != NULL, detail, "create_comp_channel succeeds");
	memset(&stand_in, 0, sizeof(stand_in));
	stand_in.context = n->ctx;
	stand_in.fd = -1;
	errno = 0;
	cq = ibv_create_cq(n->ctx, 16, NULL, &stand_in, 0);
	snprintf(detail, sizeof(detail), "%s, errno %s", cq ? "succeeded" : "failed",
		 err_name(errno));
	report(!cq && errno == EINVAL, detail,
	       "create_cq with a channel srnic did not make fails EINVAL");
	if (cq)
		ibv_destroy_cq(cq);
	memset(&cqa, 0, sizeof(cqa));
	cqa.cqe = 16;
	cqa.channel = &stand_in;
	cqa.wc_flags = IBV_WC_EX_WITH_BYTE_LEN;
	errno = 0;
	cqx = ibv_create_cq_ex(n->ctx, &cqa);
	snprintf(detail, sizeof(detail), "%s, errno %s", cqx ? "succeeded" : "failed",
		 err_name(errno));
	report(!cqx && errno == EINVAL, detail,
	       "create_cq_ex with a channel srnic did not make fails EINVAL");
	if (cqx)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
	/* The creation flags a CQ needs nothing for (UCX asks for
	 * IGNORE_OVERRUN), and one that is not there. */
	cqa.channel = NULL;
	cqa.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	cqa.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN |
		    IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	errno = 0;
	cqx = ibv_create_cq_ex(n->ctx, &cqa);
	report(cqx != NULL, cqx ? "" : err_name(errno),
	       "create_cq_ex with IGNORE_OVERRUN and SINGLE_THREADED succeeds");
	if (cqx)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
	cqa.flags = 0x80000000u;
	errno = 0;
	cqx = ibv_create_cq_ex(n->ctx, &cqa);
	snprintf(detail, sizeof(detail), "%s, errno %s", cqx ? "succeeded" : "failed",
		 err_name(errno));
	report(!cqx && errno == EOPNOTSUPP, detail,
	       "create_cq_ex with an unknown creation flag fails EOPNOTSUPP");
	if (cqx)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
	cqa.comp_mask = 0;
	cqa.flags = 0;
	if (ch) {
		struct pollfd pfd = {.fd = ch->fd, .events = POLLIN};

		cq = ibv_create_cq(n->ctx, 16, NULL, ch, 0);
		report(cq != NULL, cq ? "" : err_name(errno),
		       "create_cq on a channel succeeds");
		rc = cq ? ibv_req_notify_cq(cq, 0) : -1;
		report(rc == 0, err_name(rc), "req_notify_cq on it succeeds");
		rc = poll(&pfd, 1, 50);
		report(rc == 0, rc ? "readable" : "",
		       "its channel has no event before a completion");
		errno = 0;
		rc = ibv_destroy_comp_channel(ch);
		report(rc == EBUSY, err_name(rc),
		       "destroy_comp_channel with a CQ on it fails EBUSY");
		if (cq)
			ibv_destroy_cq(cq);
		rc = ibv_destroy_comp_channel(ch);
		report(rc == 0, err_name(rc),
		       "destroy_comp_channel once its CQ is gone succeeds");
	}

	cq = ibv_create_cq(n->ctx, 16, NULL, NULL, 0);
	if (!cq)
		die("create_cq");
	rc = ibv_req_notify_cq(cq, 0);
	report(rc == EINVAL, err_name(rc),
	       "req_notify_cq on a CQ without a channel fails EINVAL");

	/* Raw packet QPs are not there: it must say so, not half work. */
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RAW_PACKET;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	errno = 0;
	qp = ibv_create_qp(n->pd, &ia);
	snprintf(detail, sizeof(detail), "%s, errno %s", qp ? "succeeded" : "failed",
		 err_name(errno));
	report(!qp && errno == EOPNOTSUPP, detail,
	       "create_qp of type RAW_PACKET fails EOPNOTSUPP");
	if (qp)
		ibv_destroy_qp(qp);

	/* The state machine, on a QP of its own. */
	qp = vu_create_rc_qp(n->pd, cq, 4, 4, 1, NULL);
	if (!qp)
		die("create_qp RC");
	memset(&self, 0, sizeof(self));
	self.qpn = 0x123;
	self.gid = n->gid;

	mask = vu_rtr_attr(&a, &self, n->mtu);
	expect_modify(qp, &a, mask, EINVAL, "RESET->RTR (skipping INIT)");
	mask = vu_init_attr(&a, IBV_ACCESS_LOCAL_WRITE);
	expect_modify(qp, &a, mask & ~IBV_QP_PORT, EINVAL,
		      "RESET->INIT without IBV_QP_PORT");
	mask = vu_init_attr(&a, IBV_ACCESS_LOCAL_WRITE);
	a.port_num = 2;
	expect_modify(qp, &a, mask, EINVAL, "RESET->INIT with port_num 2");
	mask = vu_init_attr(&a, IBV_ACCESS_LOCAL_WRITE);
	a.cur_qp_state = IBV_QPS_INIT;
	expect_modify(qp, &a, mask | IBV_QP_CUR_STATE, EINVAL,
		      "RESET->INIT with IBV_QP_CUR_STATE saying INIT");

	memset(&sge, 0, sizeof(sge));
	sge.addr = (uintptr_t)buf;
	sge.length = 16;
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	expect_post_send(qp, &wr, &wr, EINVAL, "in RESET");

	memset(&rwr, 0, sizeof(rwr));
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	rbad = NULL;
	rc = ibv_post_recv(qp, &rwr, &rbad);
	snprintf(detail, sizeof(detail), "returned %s, bad_wr %s", err_name(rc),
		 rbad == &rwr ? "right" : rbad ? "wrong" : "unset");
	report(rc == EINVAL && rbad == &rwr, detail,
	       "post_recv in RESET returns EINVAL and sets bad_wr");

	rc = vu_to_init(qp, IBV_ACCESS_LOCAL_WRITE);
	report(rc == 0 && vu_qp_state(qp) == IBV_QPS_INIT, err_name(rc),
	       "modify_qp RESET->INIT with valid attributes succeeds");
	expect_post_send(qp, &wr, &wr, EINVAL, "in INIT");
	{
		struct ibv_send_wr w2 = wr;

		/* a chain: the first is refused, so bad_wr is the first */
		w2.next = NULL;
		wr.next = &w2;
		expect_post_send(qp, &wr, &wr, EINVAL,
				 "of a chain of two in INIT");
		wr.next = NULL;
	}

	mask = vu_rtr_attr(&a, &self, n->mtu);
	a.path_mtu = (enum ibv_mtu)(n->mtu + 1);
	{
		char what[96];

		snprintf(what, sizeof(what),
			 "INIT->RTR with path_mtu %d above active_mtu %d",
			 a.path_mtu, n->mtu);
		expect_modify(qp, &a, mask, EINVAL, what);
	}
	mask = vu_rtr_attr(&a, &self, n->mtu);
	a.ah_attr.is_global = 0;
	expect_modify(qp, &a, mask, EINVAL, "INIT->RTR without is_global");
	mask = vu_rtr_attr(&a, &self, n->mtu);
	a.ah_attr.grh.sgid_index = 200;
	expect_modify(qp, &a, mask, EINVAL, "INIT->RTR with sgid_index 200");
	mask = vu_rtr_attr(&a, &self, n->mtu);
	expect_modify(qp, &a, mask & ~IBV_QP_DEST_QPN, EINVAL,
		      "INIT->RTR without IBV_QP_DEST_QPN");

	rc = ibv_destroy_qp(qp);
	report(rc == 0, err_name(rc), "destroy_qp of the INIT QP succeeds");
	ibv_destroy_cq(cq);
	free(buf);
}

/* INIT->RTR to a GID that no node answers for. */
static void unreachable_check(struct node *n, const char *ip,
			      unsigned resolve_ms)
{
	struct vu_dest nobody;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct in_addr in;
	char detail[128], g[64];
	uint64_t t0, dt;
	int rc, st;

	memset(&nobody, 0, sizeof(nobody));
	if (inet_pton(AF_INET, ip, &in) != 1) {
		errno = EINVAL;
		die("--unreachable wants an IPv4 address");
	}
	nobody.gid.raw[10] = nobody.gid.raw[11] = 0xff;
	memcpy(&nobody.gid.raw[12], &in, 4);
	nobody.qpn = 0x123;

	cq = ibv_create_cq(n->ctx, 16, NULL, NULL, 0);
	if (!cq)
		die("create_cq");
	qp = vu_create_rc_qp(n->pd, cq, 4, 4, 1, NULL);
	if (!qp)
		die("create_qp");
	if (vu_to_init(qp, IBV_ACCESS_LOCAL_WRITE))
		die("modify_qp to INIT");
	t0 = vu_now_ms();
	rc = vu_to_rtr(qp, &nobody, n->mtu);
	dt = vu_now_ms() - t0;
	st = vu_qp_state(qp);
	snprintf(detail, sizeof(detail), "returned %s after %llu ms, state %s",
		 err_name(rc), (unsigned long long)dt, state_name(st));
	report(rc == EHOSTUNREACH && st == IBV_QPS_INIT &&
		       dt <= resolve_ms + 1500,
	       detail,
	       "modify_qp INIT->RTR to %s (no such node) fails EHOSTUNREACH "
	       "in %llu ms (resolve_ms %u), state stays INIT",
	       vu_gid_str(&nobody.gid, g, sizeof(g)), (unsigned long long)dt,
	       resolve_ms);
	rc = ibv_destroy_qp(qp);
	report(rc == 0, err_name(rc), "destroy_qp after a failed RTR succeeds");
	ibv_destroy_cq(cq);
}

/* ---- the connected part ---- */

static void setup(struct node *n, int server)
{
	unsigned i;

	n->buf = region();
	n->mr = ibv_reg_mr(n->pd, n->buf, REGION,
			   IBV_ACCESS_LOCAL_WRITE |
				   (server ? IBV_ACCESS_REMOTE_WRITE |
						     IBV_ACCESS_REMOTE_READ
					   : 0));
	if (!n->mr)
		die("reg_mr");
	if (server) {
		n->nrbuf = region();
		n->nrmr = ibv_reg_mr(n->pd, n->nrbuf, REGION,
				     IBV_ACCESS_LOCAL_WRITE |
					     IBV_ACCESS_REMOTE_WRITE);
		n->rbuf = region();
		n->rmr = ibv_reg_mr(n->pd, n->rbuf, SMALL_RECV,
				    IBV_ACCESS_LOCAL_WRITE);
		if (!n->nrmr || !n->rmr)
			die("reg_mr");
	} else {
		memset(n->buf, PATTERN, REGION);
	}
	for (i = 0; i < NQP; i++) {
		n->cq[i] = ibv_create_cq(n->ctx, 64, NULL, NULL, 0);
		if (!n->cq[i])
			die("create_cq");
		n->qp[i] = vu_create_rc_qp(n->pd, n->cq[i],
					   i == QP_PROBE ? PROBE_SQ : 16, 16,
					   1, &n->cap[i]);
		if (!n->qp[i])
			die("create_qp");
		if (vu_to_init(n->qp[i], IBV_ACCESS_LOCAL_WRITE |
						 IBV_ACCESS_REMOTE_WRITE |
						 IBV_ACCESS_REMOTE_READ)) {
			errno = EINVAL;
			die("modify_qp to INIT");
		}
		n->psn[i] = (uint32_t)(getpid() * 7919u + i * 4099u) & 0xffffff;
	}
	if (server) {
		struct ibv_recv_wr rwr, *bad;
		struct ibv_sge sge = {.addr = (uintptr_t)n->rbuf,
				      .length = SMALL_RECV,
				      .lkey = n->rmr->lkey};

		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = 0x5e;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		if (ibv_post_recv(n->qp[QP_SEND_LEN], &rwr, &bad))
			die("post_recv");
	}
}

static void fill_dests(struct node *n, int server, struct vu_dest *d)
{
	unsigned i;

	for (i = 0; i < NQP; i++) {
		memset(&d[i], 0, sizeof(d[i]));
		d[i].qpn = n->qp[i]->qp_num;
		d[i].psn = n->psn[i];
		d[i].gid = n->gid;
		if (server) {
			d[i].rkey = n->mr->rkey;
			d[i].addr = (uintptr_t)n->buf;
		}
	}
	if (server) {
		d[QP_NO_READ].rkey = n->nrmr->rkey;
		d[QP_NO_READ].addr = (uintptr_t)n->nrbuf;
	}
}

/*
 * INIT->RTR towards the peer.  The node resolves the peer's GID while its
 * links come up; on a loaded machine that can outlast one resolve_ms, which
 * is not what this program tests: say so and try again, a few times.
 */
static int to_rtr_peer(struct node *n, unsigned i)
{
	unsigned attempt;
	int rc = 0;

	for (attempt = 1; attempt <= 3; attempt++) {
		uint64_t t0 = vu_now_ms();

		rc = vu_to_rtr(n->qp[i], &n->peer[i], n->mtu);
		if (rc != EHOSTUNREACH)
			break;
		printf("# QP %u: RTR to the peer failed EHOSTUNREACH after "
		       "%llu ms (attempt %u of 3)\n", i,
		       (unsigned long long)(vu_now_ms() - t0), attempt);
	}
	return rc;
}

static uint8_t timeout_of(unsigned i)
{
	(void)i;
	return 14;	/* 4.096 us << 14: 67 ms */
}

static uint8_t retry_of(unsigned i)
{
	return i == QP_PEER_GONE ? 3 : 7;
}

/* A valid WRITE of len bytes from the client's region to the peer's. */
static void write_wr(struct node *n, unsigned i, struct ibv_send_wr *wr,
		     struct ibv_sge *sge, uint32_t len)
{
	memset(sge, 0, sizeof(*sge));
	sge->addr = (uintptr_t)n->buf;
	sge->length = len;
	sge->lkey = n->mr->lkey;
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = i;
	wr->opcode = IBV_WR_RDMA_WRITE;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->wr.rdma.remote_addr = n->peer[i].addr;
	wr->wr.rdma.rkey = n->peer[i].rkey;
}

/* Post wr on pair i, expect one completion with status want; then the QP
 * must be in the error state and flush what comes after. */
static void error_case(struct node *n, unsigned i, struct ibv_send_wr *wr,
		       enum ibv_wc_status want, const char *what)
{
	struct ibv_send_wr *bad = NULL, next;
	struct ibv_sge sge;
	struct ibv_wc wc;
	uint64_t t0 = vu_now_ms();
	int rc, got, st;
	char detail[128];

	rc = ibv_post_send(n->qp[i], wr, &bad);
	if (rc) {
		snprintf(detail, sizeof(detail), "post_send returned %s",
			 err_name(rc));
		report(0, detail, "%s completes with %s", what,
		       ibv_wc_status_str(want));
		return;
	}
	got = vu_poll(n->cq[i], &wc, POLL_MS);
	snprintf(detail, sizeof(detail), "%s after %llu ms",
		 wc_name(&wc, got),
		 (unsigned long long)(vu_now_ms() - t0));
	report(got == 1 && wc.status == want && wc.wr_id == wr->wr_id, detail,
	       "%s completes with %s", what, ibv_wc_status_str(want));
	if (got != 1)
		return;
	st = vu_qp_state(n->qp[i]);
	report(st == IBV_QPS_ERR, state_name(st),
	       "%s: the QP is in IBV_QPS_ERR afterwards", what);

	write_wr(n, i, &next, &sge, PROBE_LEN);
	next.wr_id = 0xf1;
	bad = NULL;
	rc = ibv_post_send(n->qp[i], &next, &bad);
	got = rc ? 0 : vu_poll(n->cq[i], &wc, POLL_MS);
	if (rc)
		snprintf(detail, sizeof(detail), "post_send returned %s",
			 err_name(rc));
	else
		snprintf(detail, sizeof(detail), "%s", wc_name(&wc, got));
	report(!rc && got == 1 && wc.status == IBV_WC_WR_FLUSH_ERR &&
		       wc.wr_id == 0xf1,
	       detail, "%s: a WRITE posted after the error completes with %s",
	       what, ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR));
}

static void probe_checks(struct node *n)
{
	struct ibv_qp *qp = n->qp[QP_PROBE];
	struct ibv_send_wr wrs[PROBE_SQ * 2 + 1], wr, *bad;
	struct ibv_sge sges[PROBE_SQ * 2 + 1], sge2[4];
	struct ibv_qp_attr a;
	struct ibv_wc wc;
	char detail[128];
	unsigned i, sq = n->cap[QP_PROBE].max_send_wr, done = 0;
	int mask, rc, got = 1;

	rc = to_rtr_peer(n, QP_PROBE);
	report(rc == 0, err_name(rc), "modify_qp INIT->RTR with valid "
	       "attributes succeeds");
	write_wr(n, QP_PROBE, &wr, &sges[0], PROBE_LEN);
	expect_post_send(qp, &wr, &wr, EINVAL, "in RTR");

	mask = vu_rts_attr(&a, n->psn[QP_PROBE], 32, 7);
	expect_modify(qp, &a, mask, EINVAL, "RTR->RTS with timeout 32");
	mask = vu_rts_attr(&a, n->psn[QP_PROBE], 14, 8);
	expect_modify(qp, &a, mask, EINVAL, "RTR->RTS with retry_cnt 8");
	mask = vu_rts_attr(&a, n->psn[QP_PROBE], 14, 7);
	a.rnr_retry = 8;
	expect_modify(qp, &a, mask, EINVAL, "RTR->RTS with rnr_retry 8");
	mask = vu_rts_attr(&a, n->psn[QP_PROBE], 14, 7);
	a.cur_qp_state = IBV_QPS_INIT;
	expect_modify(qp, &a, mask | IBV_QP_CUR_STATE, EINVAL,
		      "RTR->RTS with IBV_QP_CUR_STATE saying INIT");
	mask = vu_rts_attr(&a, n->psn[QP_PROBE], 14, 7);
	expect_modify(qp, &a, mask & ~IBV_QP_SQ_PSN, EINVAL,
		      "RTR->RTS without IBV_QP_SQ_PSN");
	rc = vu_to_rts(qp, n->psn[QP_PROBE], timeout_of(QP_PROBE),
		       retry_of(QP_PROBE));
	report(rc == 0 && vu_qp_state(qp) == IBV_QPS_RTS, err_name(rc),
	       "modify_qp RTR->RTS with valid attributes succeeds");

	/* More SGEs than the QP was made for. */
	write_wr(n, QP_PROBE, &wr, &sges[0], PROBE_LEN);
	for (i = 0; i < 4; i++)
		sge2[i] = sges[0];
	wr.sg_list = sge2;
	wr.num_sge = n->cap[QP_PROBE].max_send_sge + 1;
	{
		char what[64];

		snprintf(what, sizeof(what), "with num_sge %d > max_send_sge %u",
			 wr.num_sge, n->cap[QP_PROBE].max_send_sge);
		expect_post_send(qp, &wr, &wr, EINVAL, what);
	}

	/* A chain one longer than the SQ: the last one finds it full. */
	if (sq >= sizeof(wrs) / sizeof(wrs[0]))
		sq = sizeof(wrs) / sizeof(wrs[0]) - 1;
	for (i = 0; i <= sq; i++) {
		write_wr(n, QP_PROBE, &wrs[i], &sges[i], PROBE_LEN);
		wrs[i].wr_id = 100 + i;
		wrs[i].next = i < sq ? &wrs[i + 1] : NULL;
	}
	bad = NULL;
	rc = ibv_post_send(qp, &wrs[0], &bad);
	snprintf(detail, sizeof(detail), "returned %s, bad_wr %s%d",
		 err_name(rc), bad ? "#" : "unset ",
		 bad ? (int)(bad - wrs) : -1);
	report(rc == ENOMEM && bad == &wrs[sq], detail,
	       "post_send of %u WRs on a QP with max_send_wr %u returns ENOMEM "
	       "and bad_wr is the first that did not fit", sq + 1, sq);
	/* Grow the CQ while those complete: nothing lost, the order kept. */
	rc = ibv_resize_cq(n->cq[QP_PROBE], 0);
	report(rc == EINVAL, err_name(rc), "ibv_resize_cq to 0 entries fails "
	       "with EINVAL");
	usleep(2000);
	rc = ibv_resize_cq(n->cq[QP_PROBE], 4 * n->cq[QP_PROBE]->cqe);
	report(rc == 0, err_name(rc), "ibv_resize_cq to 4x with completions "
	       "pending succeeds");
	while (got == 1 && done < sq) {
		got = vu_poll(n->cq[QP_PROBE], &wc, POLL_MS);
		if (got == 1 && wc.status == IBV_WC_SUCCESS &&
		    wc.wr_id == 100 + done)
			done++;
		else if (got == 1)
			break;
	}
	snprintf(detail, sizeof(detail), "%u of %u, then %s", done, sq,
		 wc_name(&wc, got));
	report(done == sq, detail,
	       "the %u WRITEs that fit complete successfully, in order", sq);
}

static void client_cases(struct node *n)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	write_wr(n, QP_BAD_LKEY, &wr, &sge, PROBE_LEN);
	sge.lkey ^= 0x10000;
	error_case(n, QP_BAD_LKEY, &wr, IBV_WC_LOC_PROT_ERR,
		   "RDMA WRITE with a bad lkey");

	write_wr(n, QP_LOCAL_LEN, &wr, &sge, REGION + 64);
	error_case(n, QP_LOCAL_LEN, &wr, IBV_WC_LOC_PROT_ERR,
		   "RDMA WRITE longer than its local region");

	write_wr(n, QP_BAD_RKEY, &wr, &sge, PROBE_LEN);
	wr.wr.rdma.rkey ^= 0x10000;
	error_case(n, QP_BAD_RKEY, &wr, IBV_WC_REM_ACCESS_ERR,
		   "RDMA WRITE with a bad rkey");

	write_wr(n, QP_REMOTE_LEN, &wr, &sge, 128);
	wr.wr.rdma.remote_addr += REGION - 64;
	error_case(n, QP_REMOTE_LEN, &wr, IBV_WC_REM_ACCESS_ERR,
		   "RDMA WRITE beyond the end of the remote region");

	write_wr(n, QP_REMOTE_WRAP, &wr, &sge, 128);
	wr.wr.rdma.remote_addr = UINT64_MAX - 63;
	error_case(n, QP_REMOTE_WRAP, &wr, IBV_WC_REM_ACCESS_ERR,
		   "RDMA WRITE whose remote range runs past 2^64");

	write_wr(n, QP_NO_READ, &wr, &sge, PROBE_LEN);
	sge.addr += REGION / 2;		/* read into the upper half */
	wr.opcode = IBV_WR_RDMA_READ;
	error_case(n, QP_NO_READ, &wr, IBV_WC_REM_ACCESS_ERR,
		   "RDMA READ from a region without REMOTE_READ");

	write_wr(n, QP_SEND_LEN, &wr, &sge, BIG_SEND);
	wr.opcode = IBV_WR_SEND;
	error_case(n, QP_SEND_LEN, &wr, IBV_WC_REM_INV_REQ_ERR,
		   "SEND of 256 bytes into a 64-byte receive");
}

/* The pair for the peer-gone case works while the peer is there. */
static void peer_alive_check(struct node *n)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	int rc, got = 0;

	write_wr(n, QP_PEER_GONE, &wr, &sge, PROBE_LEN);
	rc = ibv_post_send(n->qp[QP_PEER_GONE], &wr, &bad);
	if (!rc)
		got = vu_poll(n->cq[QP_PEER_GONE], &wc, POLL_MS);
	report(!rc && got == 1 && wc.status == IBV_WC_SUCCESS,
	       rc ? err_name(rc) : wc_name(&wc, got),
	       "RDMA WRITE on the timeout=14 retry_cnt=3 pair succeeds while "
	       "the peer lives");
}

static void peer_gone_check(struct node *n)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	char detail[128];
	uint64_t t0, dt;
	int rc, got = 0;

	write_wr(n, QP_PEER_GONE, &wr, &sge, PROBE_LEN);
	t0 = vu_now_ms();
	rc = ibv_post_send(n->qp[QP_PEER_GONE], &wr, &bad);
	if (!rc)
		got = vu_poll(n->cq[QP_PEER_GONE], &wc, PEER_GONE_MS + 3000);
	dt = vu_now_ms() - t0;
	if (rc)
		snprintf(detail, sizeof(detail), "post_send returned %s",
			 err_name(rc));
	else
		snprintf(detail, sizeof(detail), "%s after %llu ms",
			 wc_name(&wc, got), (unsigned long long)dt);
	report(!rc && got == 1 && wc.status == IBV_WC_RETRY_EXC_ERR &&
		       dt <= PEER_GONE_MS,
	       detail,
	       "RDMA WRITE to a peer whose process exited completes with %s "
	       "within %u ms (took %llu ms)",
	       ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR), PEER_GONE_MS,
	       (unsigned long long)dt);
	if (got == 1) {
		int st = vu_qp_state(n->qp[QP_PEER_GONE]);

		report(st == IBV_QPS_ERR, state_name(st),
		       "after the peer is gone the QP is in IBV_QPS_ERR");
	}
}

static void server_checks(struct node *n)
{
	struct ibv_wc wc;
	char detail[128];
	unsigned i, stray = 0, landed = 0;
	int got, st;

	got = vu_poll(n->cq[QP_SEND_LEN], &wc, 3 * POLL_MS);
	snprintf(detail, sizeof(detail), "%s", wc_name(&wc, got));
	report(got == 1 && wc.status == IBV_WC_LOC_LEN_ERR &&
		       wc.wr_id == 0x5e && wc.opcode == IBV_WC_RECV,
	       detail, "the 64-byte receive that a 256-byte SEND hit completes "
	       "with %s", ibv_wc_status_str(IBV_WC_LOC_LEN_ERR));
	if (got == 1) {
		st = vu_qp_state(n->qp[QP_SEND_LEN]);
		report(st == IBV_QPS_ERR, state_name(st),
		       "after the receive error that QP is in IBV_QPS_ERR");
	}
	/* Only the successful WRITEs changed the server's memory. */
	for (i = 0; i < PROBE_LEN; i++)
		landed += n->buf[i] == PATTERN;
	for (i = PROBE_LEN; i < 2 * REGION; i++)
		stray += n->buf[i] != 0;
	for (i = 0; i < 2 * REGION; i++)
		stray += n->nrbuf[i] != 0;
	for (i = SMALL_RECV; i < 2 * REGION; i++)
		stray += n->rbuf[i] != 0;
	snprintf(detail, sizeof(detail), "%u of %u bytes landed", landed,
		 PROBE_LEN);
	report(landed == PROBE_LEN, detail,
	       "the successful WRITEs landed in the server's region");
	snprintf(detail, sizeof(detail), "%u bytes changed", stray);
	report(stray == 0, detail,
	       "no failed operation changed the server's memory");
}

static void usage(void)
{
	fprintf(stderr,
		"usage: verbs_errors [-p PORT] [HOST]\n"
		"       verbs_errors --unreachable IP [--resolve-ms N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"port", required_argument, NULL, 'p'},
		{"unreachable", required_argument, NULL, 'u'},
		{"resolve-ms", required_argument, NULL, 'r'},
		{NULL, 0, NULL, 0},
	};
	struct vu_dest mine[NQP];
	struct ibv_port_attr pa;
	const char *host = NULL, *unreachable = NULL;
	unsigned resolve_ms = 5000, i;
	struct node n;
	int port = 18515 + 77, c, fd, server, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt_long(argc, argv, "p:", opts, NULL)) != -1) {
		switch (c) {
		case 'p': port = atoi(optarg); break;
		case 'u': unreachable = optarg; break;
		case 'r': resolve_ms = (unsigned)atoi(optarg); break;
		default: usage();
		}
	}
	if (optind < argc)
		host = argv[optind++];
	if (optind < argc || (unreachable && host))
		usage();
	server = !host && !unreachable;

	memset(&n, 0, sizeof(n));
	n.ctx = vu_open_first();
	if (!n.ctx)
		die("open the device");
	n.pd = ibv_alloc_pd(n.ctx);
	if (!n.pd)
		die("alloc_pd");
	if (ibv_query_port(n.ctx, VU_PORT, &pa))
		die("query_port");
	n.mtu = pa.active_mtu;
	if (ibv_query_gid(n.ctx, VU_PORT, VU_GID_INDEX, &n.gid))
		die("query_gid");

	if (unreachable) {
		unreachable_check(&n, unreachable, resolve_ms);
		goto out;
	}
	if (!server)
		local_checks(&n);

	setup(&n, server);
	fill_dests(&n, server, mine);
	fd = vu_tcp_connect(host, port, TCP_MS);
	if (fd < 0)
		die("tcp connection to the peer");
	if (vu_exchange(fd, mine, n.peer, NQP, TCP_MS))
		die("exchange of QPs with the peer");
	for (i = 0; i < NQP; i++) {
		if (!server && i == QP_PROBE)
			continue;	/* probe_checks walks it */
		rc = to_rtr_peer(&n, i);
		if (!rc)
			rc = vu_to_rts(n.qp[i], n.psn[i], timeout_of(i),
				       retry_of(i));
		if (rc) {
			errno = rc;
			die("modify_qp to RTR/RTS");
		}
	}
	if (vu_sync(fd, TCP_MS))
		die("sync with the peer");

	if (server) {
		server_checks(&n);
		/* Wait for the client to finish, then vanish as a crashed
		 * process would: no goodbye, no cleanup. */
		if (vu_sync(fd, 120000))
			die("waiting for the client");
		printf("# server: %u checks, %u failed; exiting without "
		       "cleanup\n", n_checks, n_failed);
		fflush(stdout);
		_exit(n_failed ? 1 : 0);
	}

	probe_checks(&n);
	client_cases(&n);
	peer_alive_check(&n);
	if (vu_sync(fd, TCP_MS))
		die("sync with the peer");
	if (vu_wait_eof(fd, TCP_MS))
		die("waiting for the server to exit");
	close(fd);
	peer_gone_check(&n);

	for (i = 0; i < NQP; i++) {
		rc = ibv_destroy_qp(n.qp[i]);
		if (rc)
			report(0, err_name(rc), "destroy_qp %u", i);
		ibv_destroy_cq(n.cq[i]);
	}
	ibv_dereg_mr(n.mr);
	free(n.buf);
out:
	rc = ibv_dealloc_pd(n.pd);
	if (rc)
		report(0, err_name(rc), "dealloc_pd");
	ibv_close_device(n.ctx);
	printf("# %u checks, %u failed\n", n_checks, n_failed);
	return n_failed ? 1 : 0;
}
