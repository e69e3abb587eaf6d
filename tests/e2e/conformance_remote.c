/* SPDX-License-Identifier: MIT */
/*
 * Error completions between two nodes, one QP pair a case, made and
 * swapped up front:
 *  RC  a WRITE of 0 bytes with rkey 0 and address 0 (which UCX posts to
 *      flush a QP) completes fine: it touches no memory, so nothing is
 *      checked; a WRITE with a bad rkey completes IBV_WC_REM_ACCESS_ERR, the QP is
 *      in ERR and what comes after is flushed; a SEND longer than the
 *      receive completes IBV_WC_REM_INV_REQ_ERR at the sender (the
 *      responder NAKs it as an invalid request) and IBV_WC_LOC_LEN_ERR at
 *      the receiver; a SEND that finds no receive, with rnr_retry 0,
 *      completes IBV_WC_RNR_RETRY_EXC_ERR; a READ to a QP whose program
 *      granted no responder resources (max_dest_rd_atomic 0) completes
 *      IBV_WC_REM_INV_REQ_ERR, as rxe has it.
 *  UC  nothing comes back: a SEND longer than the receive completes fine
 *      at the sender and IBV_WC_LOC_LEN_ERR at the receiver; a WRITE with
 *      a bad rkey completes fine, lands nowhere, and what follows lands.
 *  INV a SEND with invalidate completes, the receiver's completion says
 *      IBV_WC_WITH_INV and names the key, and a WRITE after it with that
 *      key completes IBV_WC_REM_ACCESS_ERR; one naming no key completes
 *      IBV_WC_REM_INV_REQ_ERR.  A local invalidate completes
 *      IBV_WC_LOCAL_INV, a SEND from the key after it IBV_WC_LOC_PROT_ERR
 *      and (UC) takes only the send queue down, to SQE, from which RTS
 *      resumes; the region still deregisters.
 *  UD  a datagram with the wrong Q_Key is dropped and the next one is
 *      received; a receive shorter than the 40-byte GRH plus the payload
 *      completes IBV_WC_LOC_LEN_ERR; a receive completion says
 *      IBV_WC_GRH, the sender's QPN and payload + 40 bytes, and sl 2
 *      (the GRH holds an IPv4 header, as mlx5 says it), and the GRH
 *      ends in the IPv4 header of the packet (RoCE v2).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conformance.h"

enum {
	P_RC_RKEY,
	P_RC_SEND_LEN,
	P_RC_RNR,
	P_UC_SEND_LEN,
	P_UC_RKEY,
	P_UD_QKEY,
	P_UD_SHORT,
	P_RC_INV,
	P_RC_INV_BAD,
	P_RC_NO_RD,
	NPAIR
};

static const enum ibv_qp_type pair_type[NPAIR] = {
	IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UC,
	IBV_QPT_UD, IBV_QPT_UD, IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_RC,
};

#define REGION 16384
#define GRH 40
#define WLEN 64			/* each WRITE */
#define SMALL_RECV 64		/* the receive a longer SEND hits */
#define BIG_SEND 256
#define UC_SEND 32		/* the UC SEND after the bad WRITE */
#define UD_LEN 128		/* the datagram that must arrive */
#define UD_BAD_LEN 100		/* the one with the wrong Q_Key */
#define UD_SHORT_LEN 100	/* into a receive one byte short */
#define IMM 0x12345678u

/* The server's region: where the client's WRITEs aim. */
#define OFF_RC_BAD 1024		/* the RC WRITE with a bad rkey */
#define OFF_UC_BAD 0		/* the UC WRITE with a bad rkey */
#define OFF_UC_GOOD 512		/* the UC WRITE after it */
#define OFF_INV 4096		/* the RC WRITE after a SEND with invalidate */
/* The server's receive buffers. */
#define RB_RC_SEND 0
#define RB_UC_SEND 1024
#define RB_UC_RKEY 2048
#define RB_UD_QKEY 4096		/* two of 2048 */
#define RB_UD_SHORT 8192
#define RB_RC_INV 10240
/* The client's sources, each filled with its own byte. */
#define SRC_A 0			/* 0xa1: failing operations */
#define SRC_B 4096		/* 0xb2: the UC WRITE that lands */
#define SRC_C 8192		/* 0xc3: the UC SEND */
#define SRC_D1 12288		/* 0xd1: the datagram with a bad Q_Key */
#define SRC_D2 14336		/* 0xd2: the datagram that arrives */

struct cf_remote {
	struct cf_node *n;
	struct ibv_cq *cq[NPAIR];
	struct ibv_qp *qp[NPAIR];
	uint32_t psn[NPAIR];
	uint8_t *buf;		/* client: sources; server: WRITE target */
	struct ibv_mr *mr;
	uint8_t *rbuf;		/* server: receive buffers */
	struct ibv_mr *rmr;
	struct ibv_mr *imr;	/* server: the region the client invalidates */
	struct vu_dest peer[NPAIR];
	struct ibv_ah *ah;	/* client: to the server */
	struct ibv_wc ud_wc;	/* server: the datagram's completion */
	int ud_got;
};

static void post_recv(struct cf_remote *r, unsigned i, uint32_t off,
		      uint32_t len, uint64_t id)
{
	struct ibv_sge sge = {.addr = (uintptr_t)r->rbuf + off,
			      .length = len,
			      .lkey = r->rmr->lkey};
	struct ibv_recv_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (ibv_post_recv(r->qp[i], &wr, &bad))
		cf_die("post_recv");
}

/* What the peer may do to a pair's QP (UD: none, it has a Q_Key). */
static int pair_access(unsigned i)
{
	int a = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

	return pair_type[i] == IBV_QPT_RC ? a | IBV_ACCESS_REMOTE_READ : a;
}

struct cf_remote *cf_remote_setup(struct cf_node *n)
{
	struct cf_remote *r = calloc(1, sizeof(*r));
	int access = IBV_ACCESS_LOCAL_WRITE;
	unsigned i;

	if (!r)
		cf_die("calloc");
	r->n = n;
	r->buf = cf_alloc(REGION);
	r->rbuf = cf_alloc(REGION);
	if (n->server)
		access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	r->mr = ibv_reg_mr(n->pd, r->buf, REGION, access);
	r->rmr = ibv_reg_mr(n->pd, r->rbuf, REGION, IBV_ACCESS_LOCAL_WRITE);
	/* (a second region over the same bytes; the client's SEND with
	 * invalidate takes its key away) */
	r->imr = ibv_reg_mr(n->pd, r->buf, REGION, access);
	if (!r->mr || !r->rmr || !r->imr)
		cf_die("reg_mr");
	if (!n->server) {
		memset(r->buf + SRC_A, 0xa1, 4096);
		memset(r->buf + SRC_B, 0xb2, 4096);
		memset(r->buf + SRC_C, 0xc3, 4096);
		memset(r->buf + SRC_D1, 0xd1, 2048);
		memset(r->buf + SRC_D2, 0xd2, 2048);
	}
	for (i = 0; i < NPAIR; i++) {
		r->cq[i] = ibv_create_cq(n->ctx, 64, NULL, NULL, 0);
		if (!r->cq[i])
			cf_die("create_cq");
		r->qp[i] = cf_create_qp(n, pair_type[i], r->cq[i], 16, 16, 1,
					0, 0, NULL);
		if (!r->qp[i])
			cf_die("create_qp");
		if (cf_to_init(r->qp[i], pair_access(i)))
			cf_die("modify_qp to INIT");
		r->psn[i] = (uint32_t)(getpid() * 7919u + i * 4099u) & 0xffffff;
	}
	if (n->server) {
		/* In INIT already: nothing can arrive before its receive. */
		post_recv(r, P_RC_SEND_LEN, RB_RC_SEND, SMALL_RECV, 0x5e);
		post_recv(r, P_UC_SEND_LEN, RB_UC_SEND, SMALL_RECV, 0x5f);
		post_recv(r, P_UC_RKEY, RB_UC_RKEY, 256, 0x60);
		post_recv(r, P_UD_QKEY, RB_UD_QKEY, 2048, 0x61);
		post_recv(r, P_UD_QKEY, RB_UD_QKEY + 2048, 2048, 0x62);
		post_recv(r, P_UD_SHORT, RB_UD_SHORT, GRH + UD_SHORT_LEN - 1,
			  0x63);
		post_recv(r, P_RC_INV, RB_RC_INV, 256, 0x64);
	}
	return r;
}

void cf_remote_dests(struct cf_remote *r, struct vu_dest *d, unsigned *nd)
{
	unsigned i;

	for (i = 0; i < NPAIR; i++) {
		memset(&d[i], 0, sizeof(d[i]));
		d[i].qpn = r->qp[i]->qp_num;
		d[i].psn = r->psn[i];
		d[i].gid = r->n->gid;
		d[i].rkey = i == P_RC_INV ? r->imr->rkey : r->mr->rkey;
		d[i].addr = (uintptr_t)r->buf;
	}
	*nd = NPAIR;
}

void cf_remote_connect(struct cf_remote *r, const struct vu_dest *peer)
{
	struct cf_node *n = r->n;
	unsigned i;
	int rc;

	memcpy(r->peer, peer, sizeof(r->peer));
	for (i = 0; i < NPAIR; i++) {
		/* rnr_retry 0 on the client's RNR pair: the first RNR NAK
		 * ends it. */
		uint8_t rnr = !n->server && i == P_RC_RNR ? 0 : 7;

		/* (the server's no-READ pair grants no responder
		 * resources) */
		rc = cf_to_rtr_granting(n, r->qp[i], peer[i].qpn, peer[i].psn,
					n->server && i == P_RC_NO_RD ? 0 : -1);
		if (!rc)
			rc = cf_rtr_to_rts(r->qp[i], r->psn[i], rnr);
		if (rc) {
			errno = rc;
			cf_die("modify_qp of a pair to RTR and RTS");
		}
	}
	if (!n->server) {
		r->ah = cf_peer_ah(n);
		if (!r->ah)
			cf_die("create_ah for the server");
	}
}

/* ---- the client ---- */

static void wr_of(struct cf_remote *r, unsigned i, struct ibv_send_wr *wr,
		  struct ibv_sge *sge, enum ibv_wr_opcode op, uint32_t src,
		  uint32_t len, uint64_t id)
{
	memset(sge, 0, sizeof(*sge));
	sge->addr = (uintptr_t)r->buf + src;
	sge->length = len;
	sge->lkey = r->mr->lkey;
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = id;
	wr->opcode = op;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->wr.rdma.remote_addr = r->peer[i].addr;
	wr->wr.rdma.rkey = r->peer[i].rkey;
	if (pair_type[i] == IBV_QPT_UD) {
		wr->wr.ud.ah = r->ah;
		wr->wr.ud.remote_qpn = r->peer[i].qpn;
		wr->wr.ud.remote_qkey = CF_QKEY;
	}
}

/* Post wr on pair i and expect one completion, status want. */
static int one(struct cf_remote *r, unsigned i, struct ibv_send_wr *wr,
	       enum ibv_wc_status want, const char *what)
{
	struct ibv_send_wr *bad = NULL;
	struct ibv_wc wc;
	char detail[128];
	uint64_t t0 = vu_now_ms();
	int rc, got = 0;

	rc = ibv_post_send(r->qp[i], wr, &bad);
	if (!rc)
		got = vu_poll(r->cq[i], &wc, CF_POLL_MS);
	if (rc)
		snprintf(detail, sizeof(detail), "post_send returned %s",
			 cf_err(rc));
	else
		snprintf(detail, sizeof(detail), "%s after %llu ms%s",
			 cf_wc(&wc, got),
			 (unsigned long long)(vu_now_ms() - t0),
			 got == 1 && wc.wr_id != wr->wr_id ? ", other wr_id"
							     : "");
	cf_report(!rc && got == 1 && wc.status == want &&
			  wc.wr_id == wr->wr_id,
		  detail, "%s completes with %s", what,
		  ibv_wc_status_str(want));
	return !rc && got == 1;
}

static void state_is(struct cf_remote *r, unsigned i, int want,
		     const char *what)
{
	int st = vu_qp_state(r->qp[i]);

	cf_report(st == want, cf_state(st), "%s: the QP is in %s afterwards",
		  what, cf_state(want));
}

/* An RC error: the QP is in ERR, and a WRITE and a receive after it are
 * flushed. */
static void rc_after_error(struct cf_remote *r, unsigned i, const char *what)
{
	struct ibv_send_wr wr;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	char w2[128];
	int rc, got = 0;

	state_is(r, i, IBV_QPS_ERR, what);
	wr_of(r, i, &wr, &sge, IBV_WR_RDMA_WRITE, SRC_A, WLEN, 0xf1);
	snprintf(w2, sizeof(w2), "%s: a WRITE posted after it", what);
	one(r, i, &wr, IBV_WC_WR_FLUSH_ERR, w2);
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 0xf2;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	rc = ibv_post_recv(r->qp[i], &rwr, &rbad);
	if (!rc)
		got = vu_poll(r->cq[i], &wc, CF_POLL_MS);
	cf_report(!rc && got == 1 && wc.status == IBV_WC_WR_FLUSH_ERR &&
			  wc.wr_id == 0xf2,
		  rc ? cf_err(rc) : cf_wc(&wc, got),
		  "%s: a receive posted after it completes with %s", what,
		  ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR));
}

static void rc_cases(struct cf_remote *r)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	const char *what;

	what = "RC RDMA WRITE of 0 bytes, rkey 0, address 0";
	wr_of(r, P_RC_RKEY, &wr, &sge, IBV_WR_RDMA_WRITE, SRC_A, 0, 4);
	wr.sg_list = NULL;
	wr.num_sge = 0;
	wr.wr.rdma.remote_addr = 0;
	wr.wr.rdma.rkey = 0;
	one(r, P_RC_RKEY, &wr, IBV_WC_SUCCESS, what);
	state_is(r, P_RC_RKEY, IBV_QPS_RTS, what);

	what = "RC RDMA WRITE with a bad rkey";
	wr_of(r, P_RC_RKEY, &wr, &sge, IBV_WR_RDMA_WRITE, SRC_A, WLEN, 1);
	wr.wr.rdma.remote_addr += OFF_RC_BAD;
	wr.wr.rdma.rkey ^= 0x10000;
	if (one(r, P_RC_RKEY, &wr, IBV_WC_REM_ACCESS_ERR, what))
		rc_after_error(r, P_RC_RKEY, what);

	/* IBTA: a responder finding a SEND longer than its receive NAKs it
	 * as an invalid request (REM_INV_REQ_ERR), and completes the
	 * receive with a local length error. */
	what = "RC SEND of 256 bytes into a 64-byte receive";
	wr_of(r, P_RC_SEND_LEN, &wr, &sge, IBV_WR_SEND, SRC_A, BIG_SEND, 2);
	if (one(r, P_RC_SEND_LEN, &wr, IBV_WC_REM_INV_REQ_ERR, what))
		state_is(r, P_RC_SEND_LEN, IBV_QPS_ERR, what);

	what = "RC SEND with no receive posted and rnr_retry 0";
	wr_of(r, P_RC_RNR, &wr, &sge, IBV_WR_SEND, SRC_A, 32, 3);
	if (one(r, P_RC_RNR, &wr, IBV_WC_RNR_RETRY_EXC_ERR, what))
		state_is(r, P_RC_RNR, IBV_QPS_ERR, what);

	what = "RC READ from a QP with max_dest_rd_atomic 0";
	wr_of(r, P_RC_NO_RD, &wr, &sge, IBV_WR_RDMA_READ, SRC_A, 32, 5);
	if (one(r, P_RC_NO_RD, &wr, IBV_WC_REM_INV_REQ_ERR, what))
		state_is(r, P_RC_NO_RD, IBV_QPS_ERR, what);
}

static void uc_cases(struct cf_remote *r)
{
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sge[3];
	struct ibv_wc wc;
	char detail[128] = "";
	int rc, got = 1, k, good = 0;

	wr_of(r, P_UC_SEND_LEN, &wr[0], &sge[0], IBV_WR_SEND, SRC_A, BIG_SEND,
	      4);
	if (one(r, P_UC_SEND_LEN, &wr[0], IBV_WC_SUCCESS,
		"UC SEND of 256 bytes into a 64-byte receive (the sender "
		"hears nothing)"))
		state_is(r, P_UC_SEND_LEN, IBV_QPS_RTS,
			 "UC SEND into a short receive");

	/* A WRITE with a bad rkey, a good WRITE, a SEND: all three complete
	 * at the sender; the server checks where they landed. */
	wr_of(r, P_UC_RKEY, &wr[0], &sge[0], IBV_WR_RDMA_WRITE, SRC_A, WLEN,
	      0x10);
	wr[0].wr.rdma.remote_addr += OFF_UC_BAD;
	wr[0].wr.rdma.rkey ^= 0x10000;
	wr_of(r, P_UC_RKEY, &wr[1], &sge[1], IBV_WR_RDMA_WRITE, SRC_B, WLEN,
	      0x11);
	wr[1].wr.rdma.remote_addr += OFF_UC_GOOD;
	wr_of(r, P_UC_RKEY, &wr[2], &sge[2], IBV_WR_SEND, SRC_C, UC_SEND,
	      0x12);
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	rc = ibv_post_send(r->qp[P_UC_RKEY], &wr[0], &bad);
	for (k = 0; !rc && k < 3 && got == 1; k++) {
		got = vu_poll(r->cq[P_UC_RKEY], &wc, CF_POLL_MS);
		if (got == 1 && wc.status == IBV_WC_SUCCESS &&
		    wc.wr_id == 0x10u + k)
			good++;
		else if (!detail[0])
			snprintf(detail, sizeof(detail),
				 "#%d: %s, wr_id 0x%llx", k, cf_wc(&wc, got),
				 got == 1 ? (unsigned long long)wc.wr_id
					  : 0ull);
	}
	if (rc)
		snprintf(detail, sizeof(detail), "post_send returned %s",
			 cf_err(rc));
	cf_report(good == 3, detail, "UC RDMA WRITE with a bad rkey, a WRITE "
		  "and a SEND after it all complete successfully, in order");
	state_is(r, P_UC_RKEY, IBV_QPS_RTS, "UC RDMA WRITE with a bad rkey");
}

static void ud_cases(struct cf_remote *r)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	wr_of(r, P_UD_QKEY, &wr, &sge, IBV_WR_SEND, SRC_D1, UD_BAD_LEN, 0x20);
	wr.wr.ud.remote_qkey = CF_BAD_QKEY;
	one(r, P_UD_QKEY, &wr, IBV_WC_SUCCESS,
	    "UD SEND with the wrong Q_Key (the sender cannot know)");
	wr_of(r, P_UD_QKEY, &wr, &sge, IBV_WR_SEND_WITH_IMM, SRC_D2, UD_LEN,
	      0x21);
	wr.imm_data = htonl(IMM);
	one(r, P_UD_QKEY, &wr, IBV_WC_SUCCESS,
	    "UD SEND with immediate and the right Q_Key after it");
	wr_of(r, P_UD_SHORT, &wr, &sge, IBV_WR_SEND, SRC_A, UD_SHORT_LEN, 0x22);
	one(r, P_UD_SHORT, &wr, IBV_WC_SUCCESS,
	    "UD SEND of 100 bytes to a receive of 139 bytes (GRH + 99)");
}

static void inv_cases(struct cf_remote *r)
{
	struct ibv_send_wr wr;
	struct ibv_qp_attr a;
	struct ibv_sge sge;
	struct ibv_mr *lmr;
	const char *what;
	int rc;

	what = "RC SEND with invalidate of the peer's key";
	wr_of(r, P_RC_INV, &wr, &sge, IBV_WR_SEND_WITH_INV, SRC_C, 32, 0x30);
	wr.invalidate_rkey = r->peer[P_RC_INV].rkey;
	one(r, P_RC_INV, &wr, IBV_WC_SUCCESS, what);
	what = "RC WRITE with the key a SEND just invalidated";
	wr_of(r, P_RC_INV, &wr, &sge, IBV_WR_RDMA_WRITE, SRC_A, WLEN, 0x31);
	wr.wr.rdma.remote_addr += OFF_INV;
	one(r, P_RC_INV, &wr, IBV_WC_REM_ACCESS_ERR, what);

	what = "RC SEND with invalidate of a key the peer does not have";
	wr_of(r, P_RC_INV_BAD, &wr, &sge, IBV_WR_SEND_WITH_INV, SRC_C, 32,
	      0x32);
	wr.invalidate_rkey = r->peer[P_RC_INV_BAD].rkey ^ 0x10000;
	one(r, P_RC_INV_BAD, &wr, IBV_WC_REM_INV_REQ_ERR, what);

	/* Local invalidate, on the UC pair (still in RTS): a region of our
	 * own over the first source. */
	lmr = ibv_reg_mr(r->n->pd, r->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!lmr)
		cf_die("reg_mr");
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x33;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = lmr->lkey;
	if (one(r, P_UC_RKEY, &wr, IBV_WC_SUCCESS, "UC local invalidate"))
		state_is(r, P_UC_RKEY, IBV_QPS_RTS, "UC local invalidate");
	wr_of(r, P_UC_RKEY, &wr, &sge, IBV_WR_SEND, SRC_A, 32, 0x34);
	sge.lkey = lmr->lkey;
	what = "UC SEND from a key invalidated locally";
	if (one(r, P_UC_RKEY, &wr, IBV_WC_LOC_PROT_ERR, what))
		state_is(r, P_UC_RKEY, IBV_QPS_SQE, what);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	rc = ibv_modify_qp(r->qp[P_UC_RKEY], &a, IBV_QP_STATE);
	cf_report(rc == 0, cf_err(rc), "UC SQE -> RTS");
	wr_of(r, P_UC_RKEY, &wr, &sge, IBV_WR_SEND, SRC_C, 32, 0x35);
	one(r, P_UC_RKEY, &wr, IBV_WC_SUCCESS, "UC SEND after SQE -> RTS");
	rc = ibv_dereg_mr(lmr);
	cf_report(rc == 0, cf_err(rc), "an invalidated region deregisters");
}

void cf_remote_client(struct cf_remote *r)
{
	rc_cases(r);
	uc_cases(r);
	ud_cases(r);
	inv_cases(r);
}

/* ---- the server ---- */

/* One receive completion on pair i: status want, wr_id id. */
static int recv_done(struct cf_remote *r, unsigned i, struct ibv_wc *wc,
		     enum ibv_wc_status want, uint64_t id, const char *what)
{
	char detail[128];
	int got = vu_poll(r->cq[i], wc, CF_POLL_MS);

	snprintf(detail, sizeof(detail), "%s%s", cf_wc(wc, got),
		 got == 1 && wc->wr_id != id ? ", other wr_id" : "");
	cf_report(got == 1 && wc->status == want && wc->wr_id == id &&
			  wc->qp_num == r->qp[i]->qp_num,
		  detail, "%s completes with %s", what,
		  ibv_wc_status_str(want));
	return got == 1;
}

static int all_bytes(const uint8_t *p, uint8_t v, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

static uint16_t ip_sum(const uint8_t *ip)
{
	uint32_t sum = 0;
	unsigned i;

	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* The datagram that got through: its completion and its GRH. */
static void ud_received(struct cf_remote *r, const struct ibv_wc *wc)
{
	const uint8_t *grh = r->rbuf + RB_UD_QKEY, *ip = grh + 20;
	const uint8_t *client_ip = r->peer[P_UD_QKEY].gid.raw + 12;
	const uint8_t *my_ip = r->n->gid.raw + 12;
	struct ibv_ah_attr ah;
	char detail[160], g[64];
	int rc;

	snprintf(detail, sizeof(detail), "wc_flags 0x%x, imm 0x%x, src_qp "
		 "0x%x (sender 0x%x), byte_len %u", wc->wc_flags,
		 ntohl(wc->imm_data), wc->src_qp, r->peer[P_UD_QKEY].qpn,
		 wc->byte_len);
	cf_report(wc->opcode == IBV_WC_RECV && (wc->wc_flags & IBV_WC_GRH) &&
			  (wc->wc_flags & IBV_WC_WITH_IMM) &&
			  wc->imm_data == htonl(IMM) &&
			  wc->src_qp == r->peer[P_UD_QKEY].qpn &&
			  wc->byte_len == GRH + UD_LEN,
		  detail, "UD receive completion: IBV_WC_RECV with IBV_WC_GRH "
		  "and the immediate, src_qp the sender's QPN, byte_len "
		  "payload + 40");
	snprintf(detail, sizeof(detail), "sl %u", wc->sl);
	cf_report(wc->sl == 2, detail, "UD the completion's sl says the GRH "
		  "holds an IPv4 header (2), where mlx5 says it and UCX's UD "
		  "reads it");
	cf_report(all_bytes(grh + GRH, 0xd2, UD_LEN) &&
			  all_bytes(grh + GRH + UD_LEN, 0, 64),
		  "other bytes", "UD the payload is the right-Q_Key "
		  "datagram's, after the 40-byte GRH, and no more");
	snprintf(detail, sizeof(detail), "%02x ... proto %u, %u.%u.%u.%u -> "
		 "%u.%u.%u.%u, length %u, sum 0x%04x", ip[0], ip[9], ip[12],
		 ip[13], ip[14], ip[15], ip[16], ip[17], ip[18], ip[19],
		 ip[2] << 8 | ip[3], ip_sum(ip));
	/* IPv4 + UDP + BTH + DETH + payload + ICRC, as RoCE v2 carries it */
	cf_report(ip[0] == 0x45 && ip[9] == 17 &&
			  !memcmp(ip + 12, client_ip, 4) &&
			  !memcmp(ip + 16, my_ip, 4) && ip_sum(ip) == 0xffff &&
			  (ip[2] << 8 | ip[3]) == 20 + 8 + 12 + 8 + UD_LEN + 4,
		  detail, "UD the GRH's last 20 bytes are the datagram's IPv4 "
		  "header: UDP, from the sender's address to ours, valid "
		  "checksum, RoCE v2 length");
	memset(&ah, 0, sizeof(ah));
	rc = ibv_init_ah_from_wc(r->n->ctx, VU_PORT, (struct ibv_wc *)wc,
				 (struct ibv_grh *)grh, &ah);
	snprintf(detail, sizeof(detail), "returned %s, dgid %s, sgid_index %u",
		 cf_err(rc < 0 ? -rc : rc),
		 vu_gid_str(&ah.grh.dgid, g, sizeof(g)), ah.grh.sgid_index);
	cf_report(rc == 0 && ah.is_global &&
			  !memcmp(ah.grh.dgid.raw, r->peer[P_UD_QKEY].gid.raw,
				  16) &&
			  ah.grh.sgid_index == VU_GID_INDEX,
		  detail, "UD ibv_init_ah_from_wc on the completion names the "
		  "sender's GID and our IPv4 GID index");
}

void cf_remote_server(struct cf_remote *r)
{
	struct ibv_wc wc;
	int st;

	recv_done(r, P_RC_SEND_LEN, &wc, IBV_WC_LOC_LEN_ERR, 0x5e,
		  "RC the 64-byte receive a 256-byte SEND hit");
	if (recv_done(r, P_UC_SEND_LEN, &wc, IBV_WC_LOC_LEN_ERR, 0x5f,
		      "UC the 64-byte receive a 256-byte SEND hit")) {
		st = vu_qp_state(r->qp[P_UC_SEND_LEN]);
		cf_note("UC: after that receive error the QP is in %s",
			cf_state(st));
	}
	if (recv_done(r, P_UC_RKEY, &wc, IBV_WC_SUCCESS, 0x60,
		      "UC the SEND after a WRITE with a bad rkey arrives and"))
		cf_report(wc.opcode == IBV_WC_RECV && wc.byte_len == UC_SEND &&
				  all_bytes(r->rbuf + RB_UC_RKEY, 0xc3,
					    UC_SEND),
			  "other length or bytes",
			  "UC that SEND's 32 bytes are in its receive");
	r->ud_got = recv_done(r, P_UD_QKEY, &r->ud_wc, IBV_WC_SUCCESS, 0x61,
			      "UD of a wrong-Q_Key datagram and a right one, "
			      "the right one arrives and");
	if (r->ud_got)
		ud_received(r, &r->ud_wc);
	if (recv_done(r, P_UD_SHORT, &wc, IBV_WC_LOC_LEN_ERR, 0x63,
		      "UD a receive of GRH + 99 bytes that a 100-byte "
		      "datagram hit")) {
		st = vu_qp_state(r->qp[P_UD_SHORT]);
		/* srnic: a datagram anyone with the Q_Key may send must not
		 * take the QP down (README, Limits) */
		cf_report(st == IBV_QPS_RTS, cf_state(st),
			  "UD the QP goes on after a datagram too long for "
			  "its receive");
	}
	if (recv_done(r, P_RC_INV, &wc, IBV_WC_SUCCESS, 0x64,
		      "RC the SEND with invalidate"))
		cf_report((wc.wc_flags & IBV_WC_WITH_INV) &&
				  wc.invalidated_rkey == r->imr->rkey,
			  "other flags or key",
			  "RC its receive completion says IBV_WC_WITH_INV and "
			  "names the key");
}

void cf_remote_server_after(struct cf_remote *r)
{
	struct ibv_wc wc;
	int got, st;

	/* The client is done: a second datagram would be here by now. */
	got = vu_poll(r->cq[P_UD_QKEY], &wc, CF_QUIET_MS);
	cf_report(got == 0,
		  got == 1 ? "a second completion came" : "poll failed",
		  "UD the datagram with the wrong Q_Key never arrives");
	cf_report(all_bytes(r->buf + OFF_UC_BAD, 0, WLEN), "bytes changed",
		  "UC the WRITE with a bad rkey changed nothing");
	cf_report(all_bytes(r->buf + OFF_UC_GOOD, 0xb2, WLEN), "not there",
		  "UC the WRITE after the one with a bad rkey landed");
	cf_report(all_bytes(r->buf + OFF_RC_BAD, 0, WLEN), "bytes changed",
		  "RC the WRITE with a bad rkey changed nothing");
	cf_report(all_bytes(r->buf + OFF_INV, 0, WLEN), "bytes changed",
		  "RC the WRITE with an invalidated key changed nothing");
	/* An RNR NAK is flow control, not an error, at the responder. */
	st = vu_qp_state(r->qp[P_RC_RNR]);
	cf_report(st == IBV_QPS_RTS, cf_state(st),
		  "RC the responder that sent an RNR NAK stays in RTS");
	got = vu_poll(r->cq[P_RC_RNR], &wc, 0);
	cf_report(got == 0, "a completion came",
		  "RC the responder that sent an RNR NAK completes nothing");
}

void cf_remote_free(struct cf_remote *r)
{
	unsigned i;
	int rc;

	for (i = 0; i < NPAIR; i++) {
		rc = ibv_destroy_qp(r->qp[i]);
		if (rc)
			cf_report(0, cf_err(rc), "destroy_qp of pair %u", i);
		ibv_destroy_cq(r->cq[i]);
	}
	if (r->ah && ibv_destroy_ah(r->ah))
		cf_report(0, NULL, "destroy_ah");
	ibv_dereg_mr(r->mr);
	ibv_dereg_mr(r->rmr);
	cf_report(ibv_dereg_mr(r->imr) == 0, NULL,
		  "a region invalidated by the peer deregisters");
	free(r->buf);
	free(r->rbuf);
	free(r);
}
