/* SPDX-License-Identifier: MIT */
/*
 * Limits and post-time checks, on QPs of the client's own:
 *  - CQs, QPs and SRQs at exactly the device's maxima are made, one above
 *    is refused with EINVAL (ibv_create_qp(3), ibv_create_cq(3)), and the
 *    caps create_qp returns are at least those asked for;
 *  - post_send and post_recv refuse what verbs says they refuse: more WRs
 *    than the queue holds (ENOMEM), more SGEs than the QP has, inline data
 *    above max_inline_data, a UD datagram above the path MTU, opcodes the
 *    QP type has not (EINVAL), with *bad_wr on the first refused;
 *  - moving a QP to ERR flushes every posted receive and send, in order,
 *    with IBV_WC_WR_FLUSH_ERR, and WRs posted in ERR flush too;
 *  - a UD or UC send that fails locally takes the QP to SQE (the send
 *    queue error state of IBTA's QP state machine), from which
 *    SQE->RTS goes on.
 * Sends that must be queued and not go out are posted in SQD, where a QP
 * holds its send queue: the checks then never depend on a peer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

#define BUF_LEN 8192

/* ---- create at the limits ---- */

static void cq_limits(struct cf_node *n)
{
	int max = n->dev.max_cqe;
	struct ibv_cq *cq;
	char detail[96];

	errno = 0;
	cq = ibv_create_cq(n->ctx, max, NULL, NULL, 0);
	snprintf(detail, sizeof(detail), "%s, cqe %d",
		 cq ? "made" : cf_err(errno), cq ? cq->cqe : 0);
	cf_report(cq && cq->cqe >= max, detail,
		  "create_cq with max_cqe (%d) entries succeeds and holds them",
		  max);
	if (cq)
		ibv_destroy_cq(cq);
	if (max < 0x7fffffff) {
		errno = 0;
		cq = ibv_create_cq(n->ctx, max + 1, NULL, NULL, 0);
		cf_report(!cq && errno == EINVAL, cq ? "made" : cf_err(errno),
			  "create_cq with max_cqe + 1 entries fails EINVAL");
		if (cq)
			ibv_destroy_cq(cq);
	}
	errno = 0;
	cq = ibv_create_cq(n->ctx, 0, NULL, NULL, 0);
	cf_report(!cq && errno == EINVAL, cq ? "made" : cf_err(errno),
		  "create_cq with 0 entries fails EINVAL");
	if (cq)
		ibv_destroy_cq(cq);
}

enum cap_field { C_SEND_WR, C_RECV_WR, C_SEND_SGE, C_RECV_SGE, C_INLINE };

static const char *const cap_names[] = {"max_send_wr", "max_recv_wr",
					"max_send_sge", "max_recv_sge",
					"max_inline_data"};

static uint32_t *cap_of(struct ibv_qp_cap *c, enum cap_field f)
{
	switch (f) {
	case C_SEND_WR: return &c->max_send_wr;
	case C_RECV_WR: return &c->max_recv_wr;
	case C_SEND_SGE: return &c->max_send_sge;
	case C_RECV_SGE: return &c->max_recv_sge;
	default: return &c->max_inline_data;
	}
}

/* create_qp of type with one cap at value (the others at 1, inline 0):
 * made or refused as `ok` says. */
static void create_at(struct cf_node *n, enum ibv_qp_type type,
		      struct ibv_cq *cq, enum cap_field f, uint32_t value,
		      const char *which, int ok)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;
	char detail[96];
	uint32_t got;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = cq;
	ia.qp_type = type;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	*cap_of(&ia.cap, f) = value;
	errno = 0;
	qp = ibv_create_qp(n->pd, &ia);
	got = *cap_of(&ia.cap, f);
	if (ok) {
		snprintf(detail, sizeof(detail), "%s, %s %u",
			 qp ? "made" : cf_err(errno), cap_names[f], got);
		cf_report(qp && got >= value, detail,
			  "%s create_qp with %s = %s (%u) succeeds, caps hold "
			  "it", cf_type(type), cap_names[f], which, value);
	} else {
		cf_report(!qp && errno == EINVAL, qp ? "made" : cf_err(errno),
			  "%s create_qp with %s = %s + 1 fails EINVAL",
			  cf_type(type), cap_names[f], which);
	}
	if (qp)
		ibv_destroy_qp(qp);
}

static void qp_limits(struct cf_node *n, enum ibv_qp_type type,
		      struct ibv_cq *cq)
{
	const struct ibv_device_attr *d = &n->dev;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr q;
	struct ibv_qp_cap cap;
	struct ibv_qp *qp;
	char detail[160];
	int rc;

	create_at(n, type, cq, C_SEND_WR, d->max_qp_wr, "max_qp_wr", 1);
	create_at(n, type, cq, C_SEND_WR, d->max_qp_wr + 1, "max_qp_wr", 0);
	create_at(n, type, cq, C_RECV_WR, d->max_qp_wr, "max_qp_wr", 1);
	create_at(n, type, cq, C_RECV_WR, d->max_qp_wr + 1, "max_qp_wr", 0);
	create_at(n, type, cq, C_SEND_SGE, d->max_sge, "max_sge", 1);
	create_at(n, type, cq, C_SEND_SGE, d->max_sge + 1, "max_sge", 0);
	create_at(n, type, cq, C_RECV_SGE, d->max_sge, "max_sge", 1);
	create_at(n, type, cq, C_RECV_SGE, d->max_sge + 1, "max_sge", 0);
	create_at(n, type, cq, C_INLINE, CF_MAX_INLINE, "srnic's 256", 1);
	create_at(n, type, cq, C_INLINE, CF_MAX_INLINE + 1, "srnic's 256", 0);

	/* Odd sizes: rounded up, never down, and query_qp says the same. */
	qp = cf_create_qp(n, type, cq, 5, 3, 3, 100, 0, &cap);
	if (!qp) {
		cf_report(0, cf_err(errno), "%s create_qp with caps 5/3/3/100",
			  cf_type(type));
		return;
	}
	snprintf(detail, sizeof(detail), "caps %u/%u/%u/%u/%u",
		 cap.max_send_wr, cap.max_recv_wr, cap.max_send_sge,
		 cap.max_recv_sge, cap.max_inline_data);
	cf_report(cap.max_send_wr >= 5 && cap.max_recv_wr >= 3 &&
			  cap.max_send_sge >= 3 && cap.max_recv_sge >= 3 &&
			  cap.max_inline_data >= 100,
		  detail, "%s create_qp returns caps >= those asked for "
		  "(5 send, 3 recv, 3 SGEs, 100 inline)", cf_type(type));
	memset(&ia, 0, sizeof(ia));
	rc = ibv_query_qp(qp, &q, IBV_QP_CAP, &ia);
	cf_report(rc == 0 && !memcmp(&ia.cap, &cap, sizeof(cap)) &&
			  !memcmp(&q.cap, &cap, sizeof(cap)) && !ia.sq_sig_all,
		  rc ? cf_err(rc) : "other caps or sq_sig_all",
		  "%s query_qp reports those caps and sq_sig_all 0",
		  cf_type(type));
	ibv_destroy_qp(qp);
}

static void srq_limits(struct cf_node *n, struct ibv_cq *cq)
{
	static const char *const what[] = {"max_srq_wr", "max_srq_sge"};
	struct ibv_qp_init_attr ia;
	struct ibv_qp_init_attr qa;
	struct ibv_srq_init_attr sa;
	struct ibv_srq *srq;
	struct ibv_qp_attr q;
	struct ibv_qp *qp;
	int i, over;

	for (i = 0; i < 2; i++) {
		for (over = 0; over <= 1; over++) {
			memset(&sa, 0, sizeof(sa));
			sa.attr.max_wr = 1;
			sa.attr.max_sge = 1;
			if (i == 0)
				sa.attr.max_wr = n->dev.max_srq_wr + over;
			else
				sa.attr.max_sge = n->dev.max_srq_sge + over;
			errno = 0;
			srq = ibv_create_srq(n->pd, &sa);
			if (over)
				cf_report(!srq && errno == EINVAL,
					  srq ? "made" : cf_err(errno),
					  "create_srq with %s + 1 fails EINVAL",
					  what[i]);
			else
				cf_report(srq != NULL, cf_err(errno),
					  "create_srq with %s succeeds",
					  what[i]);
			if (srq)
				ibv_destroy_srq(srq);
		}
	}

	/* A QP on an SRQ: query_qp names the SRQ. */
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 16;
	sa.attr.max_sge = 1;
	srq = ibv_create_srq(n->pd, &sa);
	if (!srq)
		cf_die("create_srq");
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = cq;
	ia.srq = srq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 4;
	ia.cap.max_send_sge = 1;
	qp = ibv_create_qp(n->pd, &ia);
	if (!qp)
		cf_die("create_qp on an SRQ");
	memset(&qa, 0, sizeof(qa));
	cf_report(!ibv_query_qp(qp, &q, IBV_QP_CAP, &qa) && qa.srq == srq,
		  "other SRQ", "query_qp of a QP on an SRQ names the SRQ");
	ibv_destroy_qp(qp);
	ibv_destroy_srq(srq);
}

/* ---- post time ---- */

struct poster {
	struct cf_node *n;
	enum ibv_qp_type type;
	const char *tn;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_cap cap;
	struct ibv_ah *ah;
	uint8_t *buf;
	struct ibv_mr *mr;
};

/* The poster's objects: a QP of type (wr WRs, sge SGEs a queue, inline
 * bytes) on a CQ of its own, a buffer, and for UD an AH to the peer. */
static void poster_make(struct poster *p, struct cf_node *n,
			enum ibv_qp_type type, int cqe, uint32_t wr,
			uint32_t sge, uint32_t inline_len)
{
	memset(p, 0, sizeof(*p));
	p->n = n;
	p->type = type;
	p->tn = cf_type(type);
	p->buf = cf_alloc(BUF_LEN);
	p->mr = ibv_reg_mr(n->pd, p->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	p->cq = ibv_create_cq(n->ctx, cqe, NULL, NULL, 0);
	p->qp = cf_create_qp(n, type, p->cq, wr, wr, sge, inline_len, 0,
			     &p->cap);
	if (type == IBV_QPT_UD)
		p->ah = cf_peer_ah(n);
	if (!p->mr || !p->cq || !p->qp || (type == IBV_QPT_UD && !p->ah))
		cf_die("objects for the post checks");
}

static void poster_free(struct poster *p)
{
	ibv_destroy_qp(p->qp);
	if (p->ah)
		ibv_destroy_ah(p->ah);
	ibv_destroy_cq(p->cq);
	ibv_dereg_mr(p->mr);
	free(p->buf);
}

/* A signaled SEND of len bytes from buf, in one SGE (UD: to the peer). */
static void send_wr(struct poster *p, struct ibv_send_wr *wr,
		    struct ibv_sge *sge, uint32_t len, uint64_t id)
{
	memset(sge, 0, sizeof(*sge));
	sge->addr = (uintptr_t)p->buf;
	sge->length = len;
	sge->lkey = p->mr->lkey;
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = id;
	wr->opcode = IBV_WR_SEND;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->send_flags = IBV_SEND_SIGNALED;
	if (p->type == IBV_QPT_UD) {
		wr->wr.ud.ah = p->ah;
		wr->wr.ud.remote_qpn = CF_NO_QPN;
		wr->wr.ud.remote_qkey = CF_QKEY;
	}
}

static int expect_send(struct poster *p, struct ibv_send_wr *wr,
		       struct ibv_send_wr *want_bad, int want,
		       const char *what)
{
	struct ibv_send_wr *bad = NULL;
	char detail[96];
	int rc = ibv_post_send(p->qp, wr, &bad);

	snprintf(detail, sizeof(detail), "returned %s, bad_wr %s", cf_err(rc),
		 bad == want_bad ? "right" : bad ? "wrong" : "unset");
	cf_report(rc == want && (!want || bad == want_bad), detail,
		  "%s post_send %s %s", p->tn, what,
		  want ? want == ENOMEM ? "fails ENOMEM at the first that "
					  "does not fit"
					: "fails EINVAL"
		       : "succeeds");
	return rc;
}

static void recv_checks(struct poster *p)
{
	struct ibv_recv_wr wrs[64], *bad;
	struct ibv_sge sge[32];
	char detail[96];
	uint32_t k, n = p->cap.max_recv_wr;
	int rc;

	for (k = 0; k < 32; k++) {
		sge[k].addr = (uintptr_t)p->buf + 4096;
		sge[k].length = 64;
		sge[k].lkey = p->mr->lkey;
	}
	memset(wrs, 0, sizeof(wrs));
	wrs[0].sg_list = sge;
	wrs[0].num_sge = p->cap.max_recv_sge + 1;
	bad = NULL;
	rc = ibv_post_recv(p->qp, &wrs[0], &bad);
	snprintf(detail, sizeof(detail), "returned %s, bad_wr %s", cf_err(rc),
		 bad == &wrs[0] ? "right" : "wrong");
	cf_report(rc == EINVAL && bad == &wrs[0], detail,
		  "%s post_recv with max_recv_sge + 1 SGEs fails EINVAL",
		  p->tn);
	if (n + 1 > 64) {
		cf_report(0, "queue too big for the test", "%s post_recv fill",
			  p->tn);
		return;
	}
	for (k = 0; k <= n; k++) {
		wrs[k].wr_id = 0x1000 + k;
		wrs[k].sg_list = sge;
		wrs[k].num_sge = 1;
		wrs[k].next = k < n ? &wrs[k + 1] : NULL;
	}
	bad = NULL;
	rc = ibv_post_recv(p->qp, &wrs[0], &bad);
	snprintf(detail, sizeof(detail), "returned %s, bad_wr #%d", cf_err(rc),
		 bad ? (int)(bad - wrs) : -1);
	cf_report(rc == ENOMEM && bad == &wrs[n], detail,
		  "%s post_recv of max_recv_wr + 1 (%u) WRs fails ENOMEM at "
		  "the last", p->tn, n + 1);
}

/* Opcodes the type has not: refused at post time. */
static void opcode_checks(struct poster *p)
{
	static const struct {
		enum ibv_wr_opcode op;
		const char *name;
	} ops[] = {
		{IBV_WR_RDMA_WRITE, "an RDMA WRITE"},
		{IBV_WR_RDMA_WRITE_WITH_IMM, "an RDMA WRITE with immediate"},
		{IBV_WR_RDMA_READ, "an RDMA READ"},
		{IBV_WR_ATOMIC_CMP_AND_SWP, "a compare-and-swap"},
		{IBV_WR_ATOMIC_FETCH_AND_ADD, "a fetch-and-add"},
	};
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	char what[96];
	unsigned i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		int reads = ops[i].op == IBV_WR_RDMA_READ ||
			    ops[i].op == IBV_WR_ATOMIC_CMP_AND_SWP ||
			    ops[i].op == IBV_WR_ATOMIC_FETCH_AND_ADD;

		if (p->type == IBV_QPT_RC || (p->type == IBV_QPT_UC && !reads))
			continue;
		send_wr(p, &wr, &sge, 8, 0x3000 + i);
		wr.opcode = ops[i].op;
		/* refused before any address or key matters */
		wr.wr.rdma.remote_addr = 0x10000;
		wr.wr.rdma.rkey = 0x1234;
		snprintf(what, sizeof(what), "of %s (not a %s operation)",
			 ops[i].name, p->tn);
		expect_send(p, &wr, &wr, EINVAL, what);
	}
	send_wr(p, &wr, &sge, 8, 0x3100);
	wr.opcode = (enum ibv_wr_opcode)0x7f;
	expect_send(p, &wr, &wr, EINVAL, "of an unknown opcode (0x7f)");
}

/* Sends into the held (SQD) queue; returns how many were queued. */
static uint32_t send_checks(struct poster *p)
{
	struct ibv_send_wr wrs[64], wr;
	struct ibv_sge sges[64], many[32];
	uint32_t posted = 0, k, room, mtu = 128u << p->n->mtu;
	char what[96];

	send_wr(p, &wr, &sges[0], 16, 0x3200);
	for (k = 0; k < 32; k++)
		many[k] = sges[0];
	wr.sg_list = many;
	wr.num_sge = p->cap.max_send_sge + 1;
	expect_send(p, &wr, &wr, EINVAL, "with max_send_sge + 1 SGEs");

	send_wr(p, &wr, &sges[0], p->cap.max_inline_data + 1, 0x3201);
	wr.send_flags |= IBV_SEND_INLINE;
	snprintf(what, sizeof(what), "inline of max_inline_data + 1 (%u) bytes",
		 p->cap.max_inline_data + 1);
	expect_send(p, &wr, &wr, EINVAL, what);
	send_wr(p, &wr, &sges[0], p->cap.max_inline_data, 0x2000 + posted);
	wr.send_flags |= IBV_SEND_INLINE;
	snprintf(what, sizeof(what), "inline of max_inline_data (%u) bytes",
		 p->cap.max_inline_data);
	posted += !expect_send(p, &wr, NULL, 0, what);

	if (p->type == IBV_QPT_UD) {
		send_wr(p, &wr, &sges[0], mtu + 1, 0x3202);
		snprintf(what, sizeof(what), "of a %u-byte datagram (path MTU "
			 "%u)", mtu + 1, mtu);
		expect_send(p, &wr, &wr, EINVAL, what);
		send_wr(p, &wr, &sges[0], mtu, 0x2000 + posted);
		snprintf(what, sizeof(what), "of a %u-byte datagram (the path "
			 "MTU)", mtu);
		posted += !expect_send(p, &wr, NULL, 0, what);
	}
	opcode_checks(p);

	room = p->cap.max_send_wr - posted;
	if (room + 1 > 64) {
		cf_report(0, "queue too big for the test", "%s post_send fill",
			  p->tn);
		return posted;
	}
	for (k = 0; k <= room; k++) {
		send_wr(p, &wrs[k], &sges[k], 16, 0x2000 + posted + k);
		wrs[k].next = k < room ? &wrs[k + 1] : NULL;
	}
	snprintf(what, sizeof(what), "of %u WRs onto %u queued (max_send_wr "
		 "%u)", room + 1, posted, p->cap.max_send_wr);
	if (expect_send(p, &wrs[0], &wrs[room], ENOMEM, what) == ENOMEM)
		posted += room;
	return posted;
}

/* Every posted WR comes back flushed, sends and receives each in order. */
static void flush_check(struct poster *p, uint32_t sends, uint32_t recvs)
{
	uint32_t ns = 0, nr = 0, other = 0;
	uint64_t deadline = vu_now_ms() + CF_POLL_MS;
	char detail[160] = "";
	struct ibv_wc wc;
	int got = 1;

	while ((ns < sends || nr < recvs) && got == 1 &&
	       vu_now_ms() < deadline) {
		got = vu_poll(p->cq, &wc, CF_POLL_MS);
		if (got != 1)
			break;
		if (wc.status == IBV_WC_WR_FLUSH_ERR && wc.qp_num ==
							      p->qp->qp_num &&
		    wc.wr_id == 0x2000 + ns)
			ns++;
		else if (wc.status == IBV_WC_WR_FLUSH_ERR &&
			 wc.qp_num == p->qp->qp_num && wc.wr_id == 0x1000 + nr)
			nr++;
		else if (!other++)
			snprintf(detail, sizeof(detail), "first stray: wr_id "
				 "0x%llx, %s", (unsigned long long)wc.wr_id,
				 ibv_wc_status_str(wc.status));
	}
	if (!detail[0])
		snprintf(detail, sizeof(detail), "%u of %u sends, %u of %u "
			 "receives, then %s", ns, sends, nr, recvs,
			 cf_wc(&wc, got));
	cf_report(ns == sends && nr == recvs && !other, detail,
		  "%s modify_qp to ERR flushes the %u queued sends and %u "
		  "posted receives with IBV_WC_WR_FLUSH_ERR, each in order",
		  p->tn, sends, recvs);
}

/* In ERR a new send and a new receive complete flushed. */
static void flush_in_err(struct poster *p)
{
	struct ibv_send_wr wr, *sbad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge sge;
	struct ibv_wc wc[2];
	int rc, got = 0, flushed = 0, i;
	char detail[96];

	send_wr(p, &wr, &sge, 16, 0x4000);
	rc = ibv_post_send(p->qp, &wr, &sbad);
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 0x4001;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	rc = rc ? rc : ibv_post_recv(p->qp, &rwr, &rbad);
	for (i = 0; !rc && i < 2; i++) {
		got = vu_poll(p->cq, &wc[i], CF_POLL_MS);
		if (got != 1)
			break;
		flushed += wc[i].status == IBV_WC_WR_FLUSH_ERR &&
			   (wc[i].wr_id == 0x4000 || wc[i].wr_id == 0x4001);
	}
	snprintf(detail, sizeof(detail), "%s, %d flushed, %s", cf_err(rc),
		 flushed, cf_wc(&wc[i < 2 ? i : 1], got));
	cf_report(!rc && flushed == 2, detail,
		  "%s a send and a receive posted in ERR are accepted and "
		  "complete with IBV_WC_WR_FLUSH_ERR", p->tn);
}

static void post_checks(struct cf_node *n, enum ibv_qp_type type)
{
	struct poster p;
	struct ibv_qp_attr a;
	uint32_t sends;
	int rc;

	poster_make(&p, n, type, 128, 8, 2, 64);

	rc = cf_to_init(p.qp, IBV_ACCESS_LOCAL_WRITE);
	if (rc) {
		errno = rc;
		cf_die("modify_qp to INIT");
	}
	recv_checks(&p);
	rc = cf_to_rtr(n, p.qp, CF_NO_QPN, 0);
	rc = rc ? rc : cf_rtr_to_rts(p.qp, 0, 7);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_SQD;
	rc = rc ? rc : ibv_modify_qp(p.qp, &a, IBV_QP_STATE);
	if (rc) {
		errno = rc;
		cf_die("modify_qp to SQD");
	}
	sends = send_checks(&p);
	a.qp_state = IBV_QPS_ERR;
	rc = ibv_modify_qp(p.qp, &a, IBV_QP_STATE);
	cf_report(rc == 0, cf_err(rc), "%s modify_qp SQD->ERR with queued "
		  "sends succeeds", p.tn);
	flush_check(&p, sends, p.cap.max_recv_wr);
	flush_in_err(&p);

	poster_free(&p);
}

/* ---- the send queue error state ---- */

/*
 * IBTA: on UD and UC QPs a send that completes in error takes the QP to
 * SQE, not ERR: the receive queue goes on, and SQE->RTS resumes sending.
 * (Linux's IPoIB, a UD user, moves its QP from SQE back to RTS.)
 */
static void sqe_check(struct cf_node *n, enum ibv_qp_type type)
{
	struct poster p;
	struct ibv_send_wr wr, *bad;
	struct ibv_qp_attr a;
	struct ibv_sge sge;
	struct ibv_wc wc;
	int rc, got = 0, st;
	char detail[96];

	poster_make(&p, n, type, 16, 4, 1, 0);
	rc = cf_to_rts(n, p.qp, CF_NO_QPN, 0, 0, 7);
	if (rc) {
		errno = rc;
		cf_die("modify_qp to RTS");
	}

	send_wr(&p, &wr, &sge, 64, 0x5000);
	sge.lkey ^= 0x10000;
	rc = ibv_post_send(p.qp, &wr, &bad);
	if (!rc)
		got = vu_poll(p.cq, &wc, CF_POLL_MS);
	cf_report(!rc && got == 1 && wc.status == IBV_WC_LOC_PROT_ERR &&
			  wc.wr_id == 0x5000,
		  rc ? cf_err(rc) : cf_wc(&wc, got),
		  "%s SEND with a bad lkey completes with %s", p.tn,
		  ibv_wc_status_str(IBV_WC_LOC_PROT_ERR));
	st = vu_qp_state(p.qp);
	cf_report(st == IBV_QPS_SQE, cf_state(st),
		  "%s after a send error the QP is in SQE (IBTA: UD and UC "
		  "send errors stop the send queue only)", p.tn);
	if (st == IBV_QPS_SQE) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		rc = ibv_modify_qp(p.qp, &a, IBV_QP_STATE);
		st = vu_qp_state(p.qp);
		snprintf(detail, sizeof(detail), "returned %s, state %s",
			 cf_err(rc), cf_state(st));
		cf_report(!rc && st == IBV_QPS_RTS, detail,
			  "%s SQE->RTS succeeds", p.tn);
		send_wr(&p, &wr, &sge, 64, 0x5001);
		got = 0;
		rc = ibv_post_send(p.qp, &wr, &bad);
		if (!rc)
			got = vu_poll(p.cq, &wc, CF_POLL_MS);
		cf_report(!rc && got == 1 && wc.status == IBV_WC_SUCCESS,
			  rc ? cf_err(rc) : cf_wc(&wc, got),
			  "%s a SEND after SQE->RTS completes successfully",
			  p.tn);
	}
	poster_free(&p);
}

void cf_limit_checks(struct cf_node *n)
{
	static const enum ibv_qp_type types[] = {IBV_QPT_RC, IBV_QPT_UC,
						 IBV_QPT_UD};
	struct ibv_cq *cq;
	unsigned i;

	cq_limits(n);
	cq = ibv_create_cq(n->ctx, 16, NULL, NULL, 0);
	if (!cq)
		cf_die("create_cq");
	for (i = 0; i < 3; i++)
		qp_limits(n, types[i], cq);
	srq_limits(n, cq);
	ibv_destroy_cq(cq);
	for (i = 0; i < 3; i++)
		post_checks(n, types[i]);
	sqe_check(n, IBV_QPT_UD);
	sqe_check(n, IBV_QPT_UC);
}
