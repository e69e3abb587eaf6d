/* SPDX-License-Identifier: MIT */
/*
 * async_events: ibv_get_async_event on srnic.
 *
 *   peer:   async_events [-p PORT]          an RC QP for the watcher to
 *                                           connect to; waits to be killed
 *   watch:  async_events [-p PORT] HOST     connects a QP to the peer on
 *                                           HOST, then reports every async
 *                                           event, one line each
 *
 * The watcher prints "connected" once its QP is in RTS, then waits (at most
 * 60 s) until it has seen IBV_EVENT_QP_FATAL naming its own QP (the peer
 * was killed and started again: its new incarnation makes our QP fail),
 * IBV_EVENT_PORT_ERR for port 1 (every link went down) and then
 * IBV_EVENT_PORT_ACTIVE for port 1 (a link came back).  It acknowledges
 * every event and exits 0 only if all three came, in that order for the
 * port ones.  tests/e2e/12-async-events.sh drives the faults.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_util.h"

#define WAIT_MS 60000
#define TCP_MS 60000

static int port = 18517;

static void die(const char *what)
{
	fprintf(stderr, "async_events: %s\n", what);
	exit(2);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct vu_dest mine, theirs;
	const char *host = NULL;
	int opt, fd, fatal = 0, down = 0, active = 0;
	uint64_t deadline;

	while ((opt = getopt(argc, argv, "p:")) != -1) {
		if (opt != 'p') {
			fprintf(stderr, "usage: %s [-p PORT] [HOST]\n", argv[0]);
			return 2;
		}
		port = atoi(optarg);
	}
	if (optind < argc)
		host = argv[optind];
	ctx = vu_open_first();
	if (!ctx)
		return 2;
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	qp = cq ? vu_create_rc_qp(pd, cq, 16, 16, 1, NULL) : NULL;
	if (!qp || vu_to_init(qp, IBV_ACCESS_REMOTE_WRITE))
		die("QP setup");
	memset(&mine, 0, sizeof(mine));
	mine.qpn = qp->qp_num;
	mine.psn = 1;
	if (ibv_query_gid(ctx, VU_PORT, VU_GID_INDEX, &mine.gid))
		die("ibv_query_gid");
	fd = vu_tcp_connect(host, port, TCP_MS);
	if (fd < 0 || vu_exchange(fd, &mine, &theirs, 1, TCP_MS))
		die("exchange with the peer");
	if (vu_to_rtr(qp, &theirs, IBV_MTU_1024) || vu_to_rts(qp, 1, 14, 7))
		die("connect");
	if (!host) {
		printf("peer: connected, waiting to be killed\n");
		fflush(stdout);
		pause();
		return 0;
	}
	printf("connected\n");
	fflush(stdout);

	deadline = vu_now_ms() + WAIT_MS;
	while (!(fatal && active) && vu_now_ms() < deadline) {
		struct pollfd p = {.fd = ctx->async_fd, .events = POLLIN};
		struct ibv_async_event ev;

		if (poll(&p, 1, 200) <= 0)
			continue;
		if (ibv_get_async_event(ctx, &ev))
			die("ibv_get_async_event");
		switch (ev.event_type) {
		case IBV_EVENT_QP_FATAL:
			printf("event QP_FATAL qp %#x%s\n", ev.element.qp->qp_num,
			       ev.element.qp == qp ? " (ours)" : "");
			fatal |= ev.element.qp == qp;
			break;
		case IBV_EVENT_PORT_ERR:
			printf("event PORT_ERR port %d\n", ev.element.port_num);
			down |= ev.element.port_num == 1;
			break;
		case IBV_EVENT_PORT_ACTIVE:
			printf("event PORT_ACTIVE port %d\n",
			       ev.element.port_num);
			active |= down && ev.element.port_num == 1;
			break;
		default:
			printf("event %s\n", ibv_event_type_str(ev.event_type));
			break;
		}
		fflush(stdout);
		ibv_ack_async_event(&ev);
	}
	printf("async events: QP_FATAL %s, PORT_ERR %s, PORT_ACTIVE after it "
	       "%s\n", fatal ? "yes" : "no", down ? "yes" : "no",
	       active ? "yes" : "no");
	/* destroy_qp waits for the acknowledged events: it must return. */
	if (ibv_destroy_qp(qp) || ibv_destroy_cq(cq) || ibv_dealloc_pd(pd))
		die("teardown");
	ibv_close_device(ctx);
	return fatal && active ? 0 : 1;
}
