/* SPDX-License-Identifier: MIT */
/*
 * svc_check: requests to a service whose holder fails and comes back
 * (docs/failover.md; tests/e2e/36-failover-qps.sh, ./srnic demo failover).
 *
 *   member:  svc_check serve SERVICE_IPV4
 *   client:  svc_check client SERVICE_IPV4 REQUESTS
 *
 * A member parks a QP of the service's slot 0 (srnic_svc_create_qp) with
 * receives posted, and answers each request (a 4 KiB SEND whose first 8
 * bytes are its number) with a SEND of the number and the node's name.
 * When the QP fails (this node stopped holding the service) it parks it
 * again.  It says "bound" and "dropped" as the events come.
 *
 * The client connects one RC QP to the service's address and slot 0's QP
 * number, and sends REQUESTS requests, 64 unanswered at most; a request
 * without an answer 2 s after its send completed is sent again (the
 * application's part: a holder that died may have taken it with it).  It
 * prints "progress N%" every 10%, then
 *
 *   failover: N requests, L lost, D duplicates, holders b c b, moves T F ms,
 *             longest gap G ms
 *
 * (each move: the time from the old holder's last answer to the new
 * one's first)
 *
 * and exits 0 when every request got an answer and every one of its
 * WQEs completed without error: the QP lived through the takeovers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "srnic.h"
#include "verbs_util.h"

#define REQ_LEN 4096
#define REP_LEN 32
#define WINDOW 64
#define RECVS 128
#define RETRY_MS 2000

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;		/* RECVS receive slots, then send slots */
	uint32_t slot_len;
};

static int post_recv(struct side *s, unsigned i)
{
	struct ibv_sge sge = {(uintptr_t)s->buf + (uint64_t)i * s->slot_len,
			      s->slot_len, s->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1},
			   *bad;

	return ibv_post_recv(s->qp, &wr, &bad);
}

static int post_send(struct side *s, uint64_t id, const void *data,
		     uint32_t len, unsigned slot)
{
	uint8_t *p = s->buf + (uint64_t)(RECVS + slot) * s->slot_len;
	struct ibv_sge sge = {(uintptr_t)p, len, s->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	memcpy(p, data, len < 8 + 16 ? len : 8 + 16);
	return ibv_post_send(s->qp, &wr, &bad);
}

static int setup(struct side *s, uint32_t slot_len)
{
	s->ctx = vu_open_first();
	if (!s->ctx)
		return -1;
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 4 * RECVS, NULL, NULL, 0);
	s->slot_len = slot_len;
	s->buf = calloc(2 * RECVS, slot_len);
	if (!s->pd || !s->cq || !s->buf)
		return -1;
	s->mr = ibv_reg_mr(s->pd, s->buf, (size_t)2 * RECVS * slot_len,
			   IBV_ACCESS_LOCAL_WRITE);
	return s->mr ? 0 : -1;
}

/* ---- a member ---- */

static int park(struct side *s, uint32_t svc)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = RECVS, .max_recv_wr = RECVS,
			.max_send_sge = 1, .max_recv_sge = 1},
	};
	unsigned i;

	if (s->qp)
		ibv_destroy_qp(s->qp);
	s->qp = srnic_svc_create_qp(s->pd, &ia, svc, 0);
	if (!s->qp || vu_to_init(s->qp, 0))
		return -1;
	for (i = 0; i < RECVS; i++)
		if (post_recv(s, i))
			return -1;
	printf("parked qp %#x\n", s->qp->qp_num);
	fflush(stdout);
	return 0;
}

static int serve(uint32_t svc)
{
	struct srnic_device_attr da = {0};
	struct side s = {0};
	char node[16] = {0};
	unsigned next_send = 0;

	if (setup(&s, REQ_LEN) || srnic_query_device(s.ctx, &da) ||
	    park(&s, svc))
		return 2;
	snprintf(node, sizeof(node), "%s", da.node);
	fcntl(s.ctx->async_fd, F_SETFL,
	      fcntl(s.ctx->async_fd, F_GETFL) | O_NONBLOCK);
	for (;;) {
		struct ibv_async_event ev;
		struct ibv_wc wc[16];
		int n, i;

		if (ibv_get_async_event(s.ctx, &ev) == 0) {
			enum ibv_event_type t = ev.event_type;

			ibv_ack_async_event(&ev);
			if (t == IBV_EVENT_COMM_EST) {
				printf("bound\n");
				fflush(stdout);
			} else if (t == IBV_EVENT_QP_FATAL) {
				printf("dropped: parking again\n");
				fflush(stdout);
				while (ibv_poll_cq(s.cq, 16, wc) > 0)
					;
				if (park(&s, svc))
					return 2;
			}
		}
		n = ibv_poll_cq(s.cq, 16, wc);
		for (i = 0; i < n; i++) {
			uint8_t rep[8 + 16];

			if (wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].opcode != IBV_WC_RECV)
				continue;
			memcpy(rep, s.buf + wc[i].wr_id * s.slot_len, 8);
			memcpy(rep + 8, node, 16);
			post_send(&s, 0, rep, REP_LEN, next_send++ % RECVS);
			post_recv(&s, (unsigned)wc[i].wr_id);
		}
		if (!n)
			usleep(50);
	}
}

/* ---- the client ---- */

static int client(uint32_t svc, uint64_t nreq)
{
	struct vu_dest peer = {.qpn = SRNIC_SVC_QPN(0), .psn = 0};
	uint8_t *answers = calloc(nreq, 1);
	uint64_t *sent_at = calloc(nreq, sizeof(uint64_t));
	uint64_t next = 0, answered = 0, dups = 0, errors = 0, last = 0;
	uint64_t gap = 0, i, lost = 0, deadline, pct = 0, prev = 0;
	char holders[128] = "", changes[128] = "", last_node[16] = "";
	unsigned open = 0, slot = 0, sends = 0;
	struct side s = {0};
	uint32_t be = htonl(svc);

	if (!answers || !sent_at || setup(&s, REQ_LEN))
		return 2;
	s.qp = vu_create_rc_qp(s.pd, s.cq, 2 * RECVS, RECVS, 1, NULL);
	memset(peer.gid.raw + 10, 0xff, 2);
	memcpy(peer.gid.raw + 12, &be, 4);
	if (!s.qp || vu_to_init(s.qp, 0) || vu_to_rtr(s.qp, &peer, IBV_MTU_1024) ||
	    vu_to_rts(s.qp, 0, 14, 7))
		return 2;
	for (i = 0; i < RECVS; i++)
		if (post_recv(&s, (unsigned)i))
			return 2;
	deadline = vu_now_ms() + 120000;
	last = vu_now_ms();
	while (answered < nreq && vu_now_ms() < deadline) {
		struct ibv_wc wc[16];
		uint64_t now = vu_now_ms();
		int n, k;

		/* new requests, and those unanswered too long again */
		while (open < WINDOW && next < nreq && sends < RECVS) {
			uint8_t req[24] = {0};

			memcpy(req, &next, 8);
			if (post_send(&s, next, req, REQ_LEN, slot++ % RECVS))
				return 2;
			sent_at[next++] = 0;
			open++;
			sends++;
		}
		for (i = 0; i < next && sends < RECVS; i++) {
			uint8_t req[24] = {0};

			if (answers[i] || !sent_at[i] || now < sent_at[i] + RETRY_MS)
				continue;
			memcpy(req, &i, 8);
			if (post_send(&s, i, req, REQ_LEN, slot++ % RECVS))
				return 2;
			sent_at[i] = 0;
			sends++;
		}
		n = ibv_poll_cq(s.cq, 16, wc);
		for (k = 0; k < n; k++) {
			uint64_t seq;

			if (wc[k].status != IBV_WC_SUCCESS) {
				/* (the QP failed: the run ends here) */
				if (!errors++)
					printf("completion: %s\n",
					       ibv_wc_status_str(wc[k].status));
				continue;
			}
			if (wc[k].opcode == IBV_WC_SEND) {
				sends--;
				if (wc[k].wr_id < nreq && !answers[wc[k].wr_id])
					sent_at[wc[k].wr_id] = now;
				continue;
			}
			memcpy(&seq, s.buf + wc[k].wr_id * s.slot_len, 8);
			post_recv(&s, (unsigned)wc[k].wr_id);
			if (seq >= nreq)
				continue;
			if (answers[seq]++) {
				dups++;
				continue;
			}
			answered++;
			if (open)
				open--;
			if (now - last > gap)
				gap = now - last;
			prev = last;
			last = now;
			{
				const char *who = (const char *)s.buf +
						  wc[k].wr_id * s.slot_len + 8;

				if (strncmp(who, last_node, 15)) {
					/* (the gap the move left: since the
					 * old holder's last answer) */
					if (last_node[0] &&
					    strlen(changes) + 24 < sizeof(changes))
						snprintf(changes + strlen(changes),
							 sizeof(changes) - strlen(changes),
							 " %" PRIu64, now - prev);
					snprintf(last_node, sizeof(last_node),
						 "%.15s", who);
					if (strlen(holders) + 18 < sizeof(holders))
						snprintf(holders + strlen(holders),
							 sizeof(holders) - strlen(holders),
							 " %s", last_node);
				}
			}
		}
		if (answered * 10 / nreq != pct) {
			pct = answered * 10 / nreq;
			printf("progress %" PRIu64 "%%\n", pct * 10);
			fflush(stdout);
		}
		if (errors)
			break;
		if (!n)
			usleep(50);
	}
	for (i = 0; i < nreq; i++)
		lost += !answers[i];
	printf("failover: %" PRIu64 " requests, %" PRIu64 " lost, %" PRIu64
	       " duplicates, holders%s, moves%s ms, longest gap %" PRIu64
	       " ms\n",
	       nreq, lost, dups, holders, changes[0] ? changes : " none", gap);
	printf("qp: %s, %" PRIu64 " completions in error\n",
	       vu_state_str(vu_qp_state(s.qp)), errors);
	return lost || errors ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct in_addr a;

	if (argc < 3 || inet_pton(AF_INET, argv[2], &a) != 1) {
		fprintf(stderr, "usage: svc_check serve SERVICE_IPV4\n"
				"       svc_check client SERVICE_IPV4 "
				"REQUESTS\n");
		return 2;
	}
	if (!strcmp(argv[1], "serve"))
		return serve(ntohl(a.s_addr));
	if (!strcmp(argv[1], "client") && argc > 3)
		return client(ntohl(a.s_addr), strtoull(argv[3], NULL, 0));
	return 2;
}
