/* SPDX-License-Identifier: MIT */
/*
 * xrc: XRC between two nodes, two processes on each (tests/e2e/32-xrc.sh).
 *
 *   target:     xrc -s S [-p PORT]        (node b; S = 0 or 1)
 *   initiator:  xrc -c C [-p PORT] HOST   (node a; C = 0 or 1)
 *
 * Each target process opens an XRC domain on a file (twice: the second
 * open must give the same domain), makes two XRC SRQs in it, SRQ 0 with
 * PD 1 and SRQ 1 with PD 2, each with a CQ of its own, a region of PD 1,
 * and one XRC target QP for each of the two initiator processes.  Each
 * initiator process makes one XRC initiator QP for each target process,
 * and through it:
 *
 *  1. sends MSGS SENDs to each of the target's two SRQs, interleaved: one
 *     connection, two receive queues;
 *  2. WRITEs 64 KiB into the target's region naming SRQ 0 (of the
 *     region's PD) and READs it back;
 *  3. fails on purpose: to target 0 a WRITE naming SRQ 1, whose PD is not
 *     the region's (REM_ACCESS_ERR, and nothing lands); to target 1 a SEND
 *     naming target 0's SRQ 0 (REM_INV_REQ_ERR: SRQ numbers are unique on
 *     a node, so another process's never names one of target 1's; a node
 *     without srnicd runs each process as a node of its own, and the
 *     numbers may coincide: then a number neither has).
 *
 * The target checks that every SEND arrived once, whole, in the CQ of the
 * SRQ it named, with the number of the target QP it came through; that
 * each initiator's WRITE landed and the refused one did not.  Each process
 * prints "ok"/"not ok" lines and "# N checks, M failed"; exits 1 on any
 * failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_util.h"

#define PROCS 2		/* processes on each side */
#define MSGS 50		/* SENDs to each SRQ, from each initiator */
#define MSG 4096
#define AREA 65536	/* each initiator's part of a target's region */
#define TCP_MS 60000
#define POLL_MS 20000
#define BAD_SRQN 4000	/* no target makes that many SRQs (index 4000 of
			 * owner 0) */

struct hdr {
	uint32_t ini, tgt, srq, seq;
};

static struct ibv_context *ctx;
static union ibv_gid gid;

static void die(const char *what)
{
	fprintf(stderr, "xrc: %s (errno %d)\n", what, errno);
	exit(2);
}

static uint8_t pattern(const struct hdr *h, unsigned k)
{
	return (uint8_t)(h->ini * 37 + h->tgt * 59 + h->srq * 101 + h->seq * 7 +
			 k);
}

/* A message's bytes: its header, then its pattern. */
static void fill_msg(uint8_t *p, const struct hdr *h)
{
	memcpy(p, h, sizeof(*h));
	for (unsigned k = sizeof(*h); k < MSG; k++)
		p[k] = pattern(h, k);
}

static int msg_ok(const uint8_t *p, struct hdr *h)
{
	memcpy(h, p, sizeof(*h));
	for (unsigned k = sizeof(*h); k < MSG; k++)
		if (p[k] != pattern(h, k))
			return 0;
	return 1;
}

static uint8_t area_byte(unsigned ini, unsigned tgt, unsigned k, int bad)
{
	return (uint8_t)(ini * 17 + tgt * 29 + k * 3 + (bad ? 0x80 : 0));
}

static struct ibv_qp *xrc_qp(enum ibv_qp_type type, struct ibv_pd *pd,
			     struct ibv_cq *cq, struct ibv_xrcd *xrcd)
{
	struct ibv_qp_init_attr_ex a = {.qp_type = type};

	if (type == IBV_QPT_XRC_SEND) {
		a.comp_mask = IBV_QP_INIT_ATTR_PD;
		a.pd = pd;
		a.send_cq = cq;
		a.cap.max_send_wr = 4 * MSGS;
		a.cap.max_send_sge = 1;
	} else {
		a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		a.xrcd = xrcd;
	}
	return ibv_create_qp_ex(ctx, &a);
}

static void connect_qp(struct ibv_qp *qp, const struct vu_dest *peer,
		       int access)
{
	if (vu_to_init(qp, access) || vu_to_rtr(qp, peer, IBV_MTU_4096) ||
	    vu_to_rts(qp, 0, 14, 7))
		die("connect");
}

/* ---- target (node b) ---- */

static struct ibv_srq *xrc_srq(struct ibv_pd *pd, struct ibv_xrcd *xrcd,
			       struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = {.max_wr = PROCS * MSGS, .max_sge = 1},
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = xrcd, .cq = cq};

	return ibv_create_srq_ex(ctx, &a);
}

static int target(unsigned me, int port)
{
	char path[] = "/tmp/srnic-xrcd-XXXXXX";
	int file = mkstemp(path), fd[PROCS];
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.oflags = O_CREAT};
	struct ibv_pd *pd1 = ibv_alloc_pd(ctx), *pd2 = ibv_alloc_pd(ctx);
	struct ibv_xrcd *xrcd, *again;
	struct ibv_cq *cq[2];
	struct ibv_srq *srq[2];
	struct ibv_qp *tgt[PROCS];
	uint8_t *rbuf, *region;
	struct ibv_mr *rmr, *mr;
	uint32_t srqn[2];
	unsigned got[2][PROCS][MSGS] = {{{0}}}, n[2] = {0, 0}, q, i, c, k;
	unsigned wrong = 0;
	struct ibv_wc wc;

	if (file < 0 || !pd1 || !pd2)
		die("target: file or PDs");
	unlink(path);
	xa.fd = file;
	xrcd = ibv_open_xrcd(ctx, &xa);
	again = ibv_open_xrcd(ctx, &xa);
	vu_check(xrcd && again == xrcd, vu_err_str(errno),
		 "the domain on a file, opened twice: the same domain");
	if (!xrcd)
		return 1;
	ibv_close_xrcd(again);
	rbuf = calloc(2 * PROCS * MSGS, MSG);
	region = calloc(PROCS, AREA);
	if (!rbuf || !region)
		die("target: memory");
	/* (receive buffers: SRQ 0's in a region of PD 1, SRQ 1's in one of
	 * PD 2, as each SRQ's receives are checked against its own PD) */
	rmr = ibv_reg_mr(pd1, rbuf, (size_t)PROCS * MSGS * MSG,
			 IBV_ACCESS_LOCAL_WRITE);
	mr = ibv_reg_mr(pd1, region, (size_t)PROCS * AREA,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ);
	if (!rmr || !mr)
		die("target: regions");
	for (q = 0; q < 2; q++) {
		struct ibv_mr *m = q ? ibv_reg_mr(pd2, rbuf + (size_t)PROCS *
							       MSGS * MSG,
						  (size_t)PROCS * MSGS * MSG,
						  IBV_ACCESS_LOCAL_WRITE)
				     : rmr;

		cq[q] = ibv_create_cq(ctx, 2 * PROCS * MSGS, NULL, NULL, 0);
		srq[q] = cq[q] && m ? xrc_srq(q ? pd2 : pd1, xrcd, cq[q]) : NULL;
		if (!srq[q] || ibv_get_srq_num(srq[q], &srqn[q]))
			die("target: XRC SRQ");
		for (i = 0; i < PROCS * MSGS; i++) {
			uint8_t *b = rbuf + ((size_t)q * PROCS * MSGS + i) * MSG;
			struct ibv_sge sge = {(uintptr_t)b, MSG, m->lkey};
			struct ibv_recv_wr wr = {.wr_id = q * PROCS * MSGS + i,
						 .sg_list = &sge,
						 .num_sge = 1},
					   *bad;

			if (ibv_post_srq_recv(srq[q], &wr, &bad))
				die("target: post_srq_recv");
		}
	}
	vu_check(srqn[0] && srqn[1] && srqn[0] != srqn[1], NULL,
		 "two XRC SRQs with numbers of their own (%u, %u)", srqn[0],
		 srqn[1]);
	for (c = 0; c < PROCS; c++) {
		fd[c] = vu_tcp_connect(NULL, port + 10 * me + c, TCP_MS);
		if (fd[c] < 0)
			die("target: no initiator");
	}
	for (c = 0; c < PROCS; c++) {
		struct vu_dest mine[3] = {0}, theirs[3];

		tgt[c] = xrc_qp(IBV_QPT_XRC_RECV, NULL, NULL, xrcd);
		if (!tgt[c])
			die("target: XRC target QP");
		mine[0].qpn = tgt[c]->qp_num;
		mine[0].gid = gid;
		mine[0].rkey = mr->rkey;
		mine[0].addr = (uintptr_t)region + (size_t)c * AREA;
		mine[1].qpn = srqn[0];
		mine[2].qpn = srqn[1];
		if (vu_exchange(fd[c], mine, theirs, 3, TCP_MS))
			die("target: exchange");
		connect_qp(tgt[c], &theirs[0],
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
		if (vu_sync(fd[c], TCP_MS))
			die("target: sync");
	}
	/* every SEND, from each initiator to each SRQ */
	for (q = 0; q < 2; q++)
		while (n[q] < PROCS * MSGS && vu_poll(cq[q], &wc, POLL_MS) == 1) {
			struct hdr h;
			const uint8_t *b = rbuf + wc.wr_id * MSG;

			n[q]++;
			if (wc.status != IBV_WC_SUCCESS || wc.byte_len != MSG ||
			    !msg_ok(b, &h) || h.srq != q || h.tgt != me ||
			    h.ini >= PROCS || h.seq >= MSGS ||
			    wc.qp_num != tgt[h.ini]->qp_num) {
				wrong++;
				continue;
			}
			got[q][h.ini][h.seq]++;
		}
	for (q = 0; q < 2; q++)
		for (c = 0; c < PROCS; c++)
			for (i = 0; i < MSGS; i++)
				wrong += got[q][c][i] != 1;
	vu_check(n[0] == PROCS * MSGS && n[1] == PROCS * MSGS && !wrong, NULL,
		 "each initiator's %u SENDs to each SRQ: once, whole, in that "
		 "SRQ's CQ, through its own target QP (%u and %u came, %u "
		 "wrong)",
		 MSGS, n[0], n[1], wrong);
	for (c = 0; c < PROCS; c++)
		if (vu_sync(fd[c], TCP_MS))	/* its WRITEs are done */
			die("target: sync");
	wrong = 0;
	for (c = 0; c < PROCS; c++)
		for (k = 0; k < AREA; k++)
			wrong += region[(size_t)c * AREA + k] !=
				 area_byte(c, me, k, 0);
	vu_check(!wrong, NULL, "each initiator's WRITE landed (through SRQ "
		 "0, of the region's PD), and the one named SRQ 1 did not "
		 "(%u bytes wrong)", wrong);
	for (c = 0; c < PROCS; c++) {
		ibv_destroy_qp(tgt[c]);
		close(fd[c]);
	}
	vu_check(ibv_close_xrcd(xrcd) == EBUSY, NULL,
		 "closing the domain under its SRQs: EBUSY");
	for (q = 0; q < 2; q++)
		ibv_destroy_srq(srq[q]);
	vu_check(ibv_close_xrcd(xrcd) == 0, NULL, "then it closes");
	close(file);
	return 0;
}

/* ---- initiator (node a) ---- */

static int post(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	return ibv_post_send(qp, wr, &bad);
}

static int initiator(unsigned me, int port, const char *host)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4 * MSGS, NULL, NULL, 0);
	uint8_t *sbuf = malloc((size_t)2 * MSGS * MSG), *area = malloc(AREA),
		*back = malloc(AREA);
	struct ibv_mr *smr, *amr, *bmr;
	unsigned t, i, q, ok;
	uint32_t srqn0_of_0 = 0, foreign;
	int fd[PROCS];
	struct ibv_wc wc;

	if (!pd || !cq || !sbuf || !area || !back)
		die("initiator: resources");
	smr = ibv_reg_mr(pd, sbuf, (size_t)2 * MSGS * MSG,
			 IBV_ACCESS_LOCAL_WRITE);
	amr = ibv_reg_mr(pd, area, AREA, IBV_ACCESS_LOCAL_WRITE);
	bmr = ibv_reg_mr(pd, back, AREA, IBV_ACCESS_LOCAL_WRITE);
	if (!smr || !amr || !bmr)
		die("initiator: regions");
	for (t = 0; t < PROCS; t++) {
		fd[t] = vu_tcp_connect(host, port + 10 * t + me, TCP_MS);
		if (fd[t] < 0)
			die("initiator: no target");
	}
	for (t = 0; t < PROCS; t++) {
		struct vu_dest mine[3] = {0}, theirs[3];
		struct ibv_qp *ini = xrc_qp(IBV_QPT_XRC_SEND, pd, cq, NULL);
		struct ibv_sge sge;
		struct ibv_send_wr wr;

		if (!ini)
			die("initiator: XRC initiator QP");
		mine[0].qpn = ini->qp_num;
		mine[0].gid = gid;
		if (vu_exchange(fd[t], mine, theirs, 3, TCP_MS))
			die("initiator: exchange");
		connect_qp(ini, &theirs[0], 0);
		if (vu_sync(fd[t], TCP_MS))
			die("initiator: sync");
		if (t == 0)
			srqn0_of_0 = theirs[1].qpn;

		/* 1. SENDs to both SRQs through the one QP */
		for (i = 0; i < MSGS; i++)
			for (q = 0; q < 2; q++) {
				struct hdr h = {me, t, q, i};
				uint8_t *b = sbuf + ((size_t)q * MSGS + i) * MSG;

				fill_msg(b, &h);
				sge = (struct ibv_sge){(uintptr_t)b, MSG,
						       smr->lkey};
				memset(&wr, 0, sizeof(wr));
				wr.wr_id = q * MSGS + i;
				wr.sg_list = &sge;
				wr.num_sge = 1;
				wr.opcode = IBV_WR_SEND;
				wr.send_flags = IBV_SEND_SIGNALED;
				wr.qp_type.xrc.remote_srqn = theirs[1 + q].qpn;
				if (post(ini, &wr))
					die("initiator: post SEND");
			}
		for (ok = 0, i = 0; i < 2 * MSGS; i++)
			ok += vu_poll(cq, &wc, POLL_MS) == 1 &&
			      wc.status == IBV_WC_SUCCESS &&
			      wc.opcode == IBV_WC_SEND;
		vu_check(ok == 2 * MSGS, NULL, "target %u: %u SENDs to two "
			 "SRQs through one XRC QP completed (%u well)", t,
			 2 * MSGS, ok);

		/* 2. WRITE through SRQ 0 (the region's PD), READ back */
		for (i = 0; i < AREA; i++)
			area[i] = area_byte(me, t, i, 0);
		memset(back, 0, AREA);
		sge = (struct ibv_sge){(uintptr_t)area, AREA, amr->lkey};
		memset(&wr, 0, sizeof(wr));
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = theirs[0].addr;
		wr.wr.rdma.rkey = theirs[0].rkey;
		wr.qp_type.xrc.remote_srqn = theirs[1].qpn;
		ok = !post(ini, &wr) && vu_poll(cq, &wc, POLL_MS) == 1 &&
		     wc.status == IBV_WC_SUCCESS;
		sge = (struct ibv_sge){(uintptr_t)back, AREA, bmr->lkey};
		wr.opcode = IBV_WR_RDMA_READ;
		ok = ok && !post(ini, &wr) && vu_poll(cq, &wc, POLL_MS) == 1 &&
		     wc.status == IBV_WC_SUCCESS && !memcmp(back, area, AREA);
		vu_check(ok, NULL, "target %u: a 64 KiB WRITE through SRQ 0, "
			 "READ back the same", t);

		/* 3. refused: SRQ 1's PD is not the region's; an SRQ the
		 * target does not have */
		for (i = 0; i < AREA; i++)
			area[i] = area_byte(me, t, i, 1);
		sge = (struct ibv_sge){(uintptr_t)area, AREA, amr->lkey};
		foreign = srqn0_of_0 != theirs[1].qpn &&
					  srqn0_of_0 != theirs[2].qpn
				  ? srqn0_of_0
				  : BAD_SRQN;
		wr.opcode = t ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;
		sge.length = t ? MSG : AREA;
		wr.qp_type.xrc.remote_srqn = t ? foreign : theirs[2].qpn;
		ok = !post(ini, &wr) && vu_poll(cq, &wc, POLL_MS) == 1 &&
		     wc.status == (t ? IBV_WC_REM_INV_REQ_ERR
				     : IBV_WC_REM_ACCESS_ERR);
		if (t)
			vu_check(ok, vu_wc_str(&wc, 1),
				 "target 1: a SEND naming %s: REM_INV_REQ_ERR",
				 foreign == BAD_SRQN
					 ? "an SRQ number it has not"
					 : "target 0's SRQ 0 (another process's)");
		else
			vu_check(ok, vu_wc_str(&wc, 1),
				 "target 0: a WRITE naming SRQ 1, of another "
				 "PD: REM_ACCESS_ERR");
		if (vu_sync(fd[t], TCP_MS))
			die("initiator: sync");
		ibv_destroy_qp(ini);
	}
	for (t = 0; t < PROCS; t++)
		vu_wait_eof(fd[t], TCP_MS);
	return 0;
}

int main(int argc, char **argv)
{
	int c, port = 18600, side = -1, who = 0, rc;

	while ((c = getopt(argc, argv, "s:c:p:")) != -1) {
		if (c == 's' || c == 'c') {
			side = c == 's';
			who = atoi(optarg);
		} else if (c == 'p') {
			port = atoi(optarg);
		}
	}
	if (side < 0 || who < 0 || who >= PROCS ||
	    (side == 0) != (optind < argc)) {
		fprintf(stderr, "usage: xrc -s S [-p PORT] | xrc -c C [-p PORT] "
				"HOST\n");
		return 2;
	}
	ctx = vu_open_first();
	if (!ctx || ibv_query_gid(ctx, VU_PORT, VU_GID_INDEX, &gid))
		die("device");
	rc = side ? target(who, port) : initiator(who, port, argv[optind]);
	printf("# %u checks, %u failed\n", vu_checks, vu_failed);
	return rc ? rc : vu_failed ? 1 : 0;
}
