/* SPDX-License-Identifier: MIT */
/*
 * uc_check: a stream of UC messages, every byte that arrives checked.
 *
 *   server:  uc_check [-p PORT] [-l]        receives and checks
 *   client:  uc_check [-p PORT] [-l] [-N] HOST
 *                                           sends N messages, alternately
 *                                           RDMA WRITE with immediate into
 *                                           slot i and SEND with immediate
 *                                           (-N: with the ibv_wr_* API)
 *
 * Message i is 100 B, 4 KiB or 16 KiB (path MTU 1 KiB: up to 16 packets)
 * of pattern(i), its immediate data is i.  The server checks that
 * completions come in increasing i, each with the right length and bytes
 * (in its slot, or in the receive buffer).  Without -l every message must
 * arrive.  With -l (the wire loses packets) some may be missing, but what
 * arrives must be intact, the last messages must still arrive (a lost one
 * never blocks those behind it), and both QPs must still be in RTS.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_util.h"

#define NMSG 400
#define SLOT 16384
#define TCP_MS 60000
#define QUIET_MS 1000

static int new_api;	/* -N: post with ibv_wr_*, not ibv_post_send */

static unsigned msg_len(unsigned i)
{
	static const unsigned len[] = {100, 4096, SLOT};

	return len[i % 3];
}

static uint8_t pattern(unsigned i, unsigned k)
{
	return (uint8_t)(i * 131 + k * 7 + 5);
}

static void die(const char *what)
{
	fprintf(stderr, "uc_check: %s (errno %d)\n", what, errno);
	exit(2);
}

static struct ibv_qp *uc_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex ia;
	struct ibv_qp_attr a;
	struct ibv_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_UC;
	ia.cap.max_send_wr = 64;
	ia.cap.max_recv_wr = NMSG;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ia.pd = pd;
	ia.send_ops_flags = IBV_QP_EX_WITH_SEND_WITH_IMM |
			    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	qp = ibv_create_qp_ex(pd->context, &ia);
	if (!qp)
		die("ibv_create_qp UC");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = VU_PORT;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("UC to INIT");
	return qp;
}

static void uc_connect(struct ibv_qp *qp, const struct vu_dest *d,
		       uint32_t my_psn)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = d->qpn;
	a.rq_psn = d->psn;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = VU_PORT;
	a.ah_attr.grh.dgid = d->gid;
	a.ah_attr.grh.sgid_index = VU_GID_INDEX;
	a.ah_attr.grh.hop_limit = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN))
		die("UC to RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = my_psn;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("UC to RTS");
}

static void client(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr,
		   uint8_t *buf, const struct vu_dest *peer)
{
	unsigned i, k, inflight = 0;
	struct ibv_wc wc;

	for (i = 0; i < NMSG; i++) {
		uint8_t *src = buf + (i % 32) * SLOT;
		struct ibv_sge sge = {.addr = (uintptr_t)src,
				      .length = msg_len(i), .lkey = mr->lkey};
		struct ibv_send_wr wr, *badwr;

		/* 32 source slots and at most 32 WRs outstanding: a slot is
		 * refilled only after its WR completed. */
		while (inflight >= 32) {
			if (vu_poll(cq, &wc, 10000) != 1 ||
			    wc.status != IBV_WC_SUCCESS)
				die("UC send completion");
			inflight--;
		}
		for (k = 0; k < msg_len(i); k++)
			src[k] = pattern(i, k);
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.imm_data = htonl(i);
		if (i % 2) {
			wr.opcode = IBV_WR_SEND_WITH_IMM;
		} else {
			wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
			wr.wr.rdma.rkey = peer->rkey;
			wr.wr.rdma.remote_addr = peer->addr + (uint64_t)i * SLOT;
		}
		if (new_api) {
			struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);

			ibv_wr_start(qpx);
			qpx->wr_id = i;
			qpx->wr_flags = IBV_SEND_SIGNALED;
			if (i % 2)
				ibv_wr_send_imm(qpx, wr.imm_data);
			else
				ibv_wr_rdma_write_imm(qpx, wr.wr.rdma.rkey,
						      wr.wr.rdma.remote_addr,
						      wr.imm_data);
			ibv_wr_set_sge(qpx, sge.lkey, sge.addr, sge.length);
			if (ibv_wr_complete(qpx))
				die("ibv_wr_complete UC");
		} else if (ibv_post_send(qp, &wr, &badwr)) {
			die("ibv_post_send UC");
		}
		inflight++;
	}
	while (inflight--)
		if (vu_poll(cq, &wc, 10000) != 1 || wc.status != IBV_WC_SUCCESS)
			die("UC send completion");
	printf("uc client: %u messages sent\n", NMSG);
}

/* Returns the number of failed checks. */
static unsigned server(struct ibv_cq *cq, const uint8_t *slots,
		       const uint8_t *rbuf, int lossy)
{
	unsigned got = 0, wrong = 0, order = 0, last = 0, fails = 0, k;
	int prev = -1;
	struct ibv_wc wc;

	while (vu_poll(cq, &wc, QUIET_MS) == 1) {
		unsigned i = ntohl(wc.imm_data), bad = 0;
		const uint8_t *p;

		if (wc.status != IBV_WC_SUCCESS || i >= NMSG ||
		    !(wc.wc_flags & IBV_WC_WITH_IMM)) {
			printf("not ok - completion status %d imm %u\n",
			       wc.status, i);
			fails++;
			break;
		}
		if ((int)i <= prev)
			order++;
		prev = (int)i;
		p = wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM
			    ? slots + (size_t)i * SLOT
			    : rbuf + wc.wr_id * SLOT;
		if (wc.byte_len != msg_len(i) ||
		    (wc.opcode == IBV_WC_RECV) != (i % 2))
			bad++;
		for (k = 0; !bad && k < msg_len(i); k++)
			bad += p[k] != pattern(i, k);
		wrong += !!bad;
		got++;
		last = i;
	}
	printf("uc server: %u of %u messages, %u wrong, %u out of order, "
	       "last %u\n", got, NMSG, wrong, order, last);
	if (wrong || order || !got)
		fails++;
	if (!lossy && got != NMSG)
		fails++;
	/* A lost message must not hold up the ones behind it. */
	if (lossy && last < NMSG - 20)
		fails++;
	return fails;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct vu_dest mine, theirs;
	const char *host = NULL;
	int port = 18520, opt, fd, lossy = 0;
	unsigned fails = 0, i;
	size_t len = (size_t)NMSG * SLOT;
	uint8_t *buf;

	while ((opt = getopt(argc, argv, "p:lN")) != -1) {
		if (opt == 'p')
			port = atoi(optarg);
		else if (opt == 'l')
			lossy = 1;
		else if (opt == 'N')
			new_api = 1;
		else
			return 2;
	}
	if (optind < argc)
		host = argv[optind];
	setvbuf(stdout, NULL, _IOLBF, 0);
	ctx = vu_open_first();
	if (!ctx)
		return 2;
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 2 * NMSG, NULL, NULL, 0) : NULL;
	/* server: NMSG WRITE slots, then NMSG receive buffers */
	buf = calloc(2, len);
	mr = cq && buf ? ibv_reg_mr(pd, buf, 2 * len,
				    IBV_ACCESS_LOCAL_WRITE |
					    IBV_ACCESS_REMOTE_WRITE)
		       : NULL;
	if (!mr)
		die("setup");
	qp = uc_qp(pd, cq);
	/* Every message (a WRITE with immediate too) takes a receive: all
	 * are there before anything moves. */
	if (!host)
		for (i = 0; i < NMSG; i++) {
			struct ibv_sge sge = {
				.addr = (uintptr_t)buf + len + (size_t)i * SLOT,
				.length = SLOT, .lkey = mr->lkey};
			struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sge,
						 .num_sge = 1}, *badwr;

			if (ibv_post_recv(qp, &wr, &badwr))
				die("ibv_post_recv");
		}
	memset(&mine, 0, sizeof(mine));
	mine.qpn = qp->qp_num;
	mine.psn = host ? 0x1111 : 0x2222;
	mine.rkey = mr->rkey;
	mine.addr = (uintptr_t)buf;
	if (ibv_query_gid(ctx, VU_PORT, VU_GID_INDEX, &mine.gid))
		die("ibv_query_gid");
	fd = vu_tcp_connect(host, port, TCP_MS);
	if (fd < 0 || vu_exchange(fd, &mine, &theirs, 1, TCP_MS))
		die("exchange");
	uc_connect(qp, &theirs, mine.psn);
	if (vu_sync(fd, TCP_MS))
		die("sync");
	if (host)
		client(qp, cq, mr, buf, &theirs);
	else
		fails = server(cq, buf, buf + len, lossy);
	if (vu_sync(fd, TCP_MS))
		die("sync");
	if (vu_qp_state(qp) != IBV_QPS_RTS) {
		printf("not ok - the QP left RTS (state %d)\n", vu_qp_state(qp));
		fails++;
	}
	printf("# uc_check %s: %s\n", host ? "client" : "server",
	       fails ? "FAILED" : "passed");
	return fails ? 1 : 0;
}
