/* SPDX-License-Identifier: MIT */
/*
 * srq_check: what ibv_srq_pingpong does not look at.
 *
 *   server:  srq_check [-p PORT]      an SRQ of 64 receives, its limit
 *                                     armed at 16, two QPs on it
 *   client:  srq_check [-p PORT] HOST 25 SENDs on each QP
 *
 * The server checks every SEND's bytes and that its completion names the
 * QP it came on; that IBV_EVENT_SRQ_LIMIT_REACHED arrives once fewer than
 * 16 receives are left (and ibv_query_srq then says the limit is off);
 * that a QP of the SRQ moved to the error state reports
 * IBV_EVENT_QP_LAST_WQE_REACHED, once, and the other QP nothing;
 * that ibv_post_recv on a QP of the SRQ, a limit above max_wr and
 * destroying the SRQ while QPs use it fail as verbs says.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_util.h"

#define NQP 2
#define PER_QP 25
#define SRQ_WR 64
#define LIMIT 16
#define MSG 512
#define TCP_MS 30000

static unsigned bad;

#define BAD(...)                                                           \
	do {                                                               \
		printf("not ok - " __VA_ARGS__);                           \
		putchar('\n');                                             \
		bad++;                                                     \
	} while (0)

static void die(const char *what)
{
	fprintf(stderr, "srq_check: %s\n", what);
	exit(2);
}

static uint8_t pattern(unsigned qp, unsigned i, unsigned k)
{
	return (uint8_t)(qp * 131 + i * 7 + k);
}

/*
 * Move qp[0] to ERR: it must say, once, that it takes nothing more from
 * the SRQ (LAST_WQE_REACHED), and qp[1], still working, nothing.  Returns
 * how many such events came for qp[0].
 */
static unsigned last_wqe_events(struct ibv_context *ctx, struct ibv_qp **qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
	unsigned n = 0, i;

	if (ibv_modify_qp(qp[0], &a, IBV_QP_STATE))
		die("modify_qp to ERR");
	for (i = 0; i < 5; i++) {	/* (half a second of quiet after) */
		struct pollfd p = {.fd = ctx->async_fd, .events = POLLIN};
		struct ibv_async_event ev;

		if (poll(&p, 1, 100) <= 0)
			continue;
		if (ibv_get_async_event(ctx, &ev))
			break;
		if (ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED) {
			if (ev.element.qp == qp[0])
				n++;
			else
				BAD("LAST_WQE_REACHED for a QP still working");
		}
		ibv_ack_async_event(&ev);
		i = 0;
	}
	return n;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq = NULL;
	struct ibv_qp *qp[NQP];
	struct ibv_mr *mr;
	struct vu_dest mine[NQP], theirs[NQP];
	struct ibv_qp_init_attr ia;
	const char *host = NULL;
	int port = 18518, opt, fd, i, q;
	uint8_t *buf;

	while ((opt = getopt(argc, argv, "p:")) != -1) {
		if (opt != 'p')
			return 2;
		port = atoi(optarg);
	}
	if (optind < argc)
		host = argv[optind];
	ctx = vu_open_first();
	if (!ctx)
		return 2;
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 256, NULL, NULL, 0) : NULL;
	buf = calloc(SRQ_WR, MSG);
	mr = cq && buf ? ibv_reg_mr(pd, buf, SRQ_WR * MSG,
				    IBV_ACCESS_LOCAL_WRITE)
		       : NULL;
	if (!mr)
		die("setup");
	if (!host) {
		struct ibv_srq_init_attr sa = {.attr = {.max_wr = SRQ_WR,
							.max_sge = 1}};

		srq = ibv_create_srq(pd, &sa);
		if (!srq)
			die("ibv_create_srq");
	}
	for (q = 0; q < NQP; q++) {
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = ia.recv_cq = cq;
		ia.srq = srq;
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = 64;
		ia.cap.max_recv_wr = srq ? 0 : 4;
		ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
		qp[q] = ibv_create_qp(pd, &ia);
		if (!qp[q] || vu_to_init(qp[q], 0))
			die("QP setup");
		memset(&mine[q], 0, sizeof(mine[q]));
		mine[q].qpn = qp[q]->qp_num;
		mine[q].psn = 7 + q;
		if (ibv_query_gid(ctx, VU_PORT, VU_GID_INDEX, &mine[q].gid))
			die("ibv_query_gid");
	}
	fd = vu_tcp_connect(host, port, TCP_MS);
	if (fd < 0 || vu_exchange(fd, mine, theirs, NQP, TCP_MS))
		die("exchange");
	for (q = 0; q < NQP; q++)
		if (vu_to_rtr(qp[q], &theirs[q], IBV_MTU_1024) ||
		    vu_to_rts(qp[q], mine[q].psn, 14, 7))
			die("connect");

	if (host) {	/* client: the SENDs */
		for (i = 0; i < PER_QP; i++)
			for (q = 0; q < NQP; q++) {
				struct ibv_sge sge = {
					.addr = (uintptr_t)buf + q * MSG,
					.length = MSG, .lkey = mr->lkey};
				struct ibv_send_wr wr = {
					.sg_list = &sge, .num_sge = 1,
					.opcode = IBV_WR_SEND,
					.send_flags = IBV_SEND_SIGNALED},
					*badwr;
				struct ibv_wc wc;
				int k;

				for (k = 0; k < MSG; k++)
					buf[q * MSG + k] = pattern(q, i, k);
				if (ibv_post_send(qp[q], &wr, &badwr) ||
				    vu_poll(cq, &wc, 10000) != 1 ||
				    wc.status != IBV_WC_SUCCESS)
					die("a SEND failed");
			}
		vu_sync(fd, TCP_MS);
		return 0;
	}

	{	/* server */
		struct ibv_srq_attr sa = {.srq_limit = SRQ_WR + 1};
		struct ibv_recv_wr rw, *badrw;
		struct ibv_sge sge;
		unsigned got[NQP] = {0}, n, limit_seen = 0, last_wqe;

		if (ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT) != EINVAL)
			BAD("a limit above max_wr was taken");
		for (i = 0; i < SRQ_WR; i++) {
			sge.addr = (uintptr_t)buf + i * MSG;
			sge.length = MSG;
			sge.lkey = mr->lkey;
			memset(&rw, 0, sizeof(rw));
			rw.wr_id = i;
			rw.sg_list = &sge;
			rw.num_sge = 1;
			if (ibv_post_srq_recv(srq, &rw, &badrw))
				die("ibv_post_srq_recv");
		}
		if (ibv_post_recv(qp[0], &rw, &badrw) != EINVAL)
			BAD("ibv_post_recv on a QP of an SRQ did not fail");
		sa.srq_limit = LIMIT;
		if (ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT))
			die("arming the SRQ limit");
		if (ibv_destroy_srq(srq) != EBUSY)
			BAD("destroying an SRQ in use did not fail with EBUSY");
		for (n = 0; n < NQP * PER_QP; n++) {
			struct ibv_wc wc;
			int k;

			if (vu_poll(cq, &wc, 10000) != 1 ||
			    wc.status != IBV_WC_SUCCESS ||
			    wc.opcode != IBV_WC_RECV || wc.byte_len != MSG) {
				BAD("receive %u missing or failed", n);
				break;
			}
			for (q = 0; q < NQP && qp[q]->qp_num != wc.qp_num; q++)
				;
			if (q == NQP) {
				BAD("a completion names QP %#x", wc.qp_num);
				break;
			}
			for (k = 0; k < MSG; k++)
				if (buf[wc.wr_id * MSG + k] !=
				    pattern(q, got[q], k)) {
					BAD("SEND %u of QP %d: byte %d", got[q],
					    q, k);
					break;
				}
			got[q]++;
		}
		for (i = 0; i < 50 && !limit_seen; i++) {
			struct pollfd p = {.fd = ctx->async_fd,
					   .events = POLLIN};
			struct ibv_async_event ev;

			if (poll(&p, 1, 100) <= 0)
				continue;
			if (ibv_get_async_event(ctx, &ev))
				break;
			limit_seen = ev.event_type ==
					     IBV_EVENT_SRQ_LIMIT_REACHED &&
				     ev.element.srq == srq;
			ibv_ack_async_event(&ev);
		}
		if (!limit_seen)
			BAD("no IBV_EVENT_SRQ_LIMIT_REACHED");
		if (ibv_query_srq(srq, &sa) || sa.srq_limit != 0 ||
		    sa.max_wr < SRQ_WR)
			BAD("ibv_query_srq after the event: limit %u, max_wr %u",
			    sa.srq_limit, sa.max_wr);
		vu_sync(fd, TCP_MS);
		last_wqe = last_wqe_events(ctx, qp);
		if (last_wqe != 1)
			BAD("%u IBV_EVENT_QP_LAST_WQE_REACHED for the QP moved "
			    "to ERR, want 1", last_wqe);
		printf("srq_check: %u SENDs through one SRQ on %d QPs, limit "
		       "event %s, last-WQE events %u, %u bad\n",
		       got[0] + got[1], NQP, limit_seen ? "yes" : "no",
		       last_wqe, bad);
		for (q = 0; q < NQP; q++)
			ibv_destroy_qp(qp[q]);
		if (ibv_destroy_srq(srq))
			BAD("destroying the SRQ after its QPs failed");
	}
	return bad ? 1 : 0;
}
