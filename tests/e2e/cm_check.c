/* SPDX-License-Identifier: MIT */
/*
 * cm_check: librdmacm (unmodified) against srnic's rdma_cm, what the
 * rdmacm-utils do not look at.  Server: cm_check -s [-p PORT]; client:
 * cm_check [-p PORT] HOST.
 *
 *  1. The event channel's fd: with O_NONBLOCK an empty channel says
 *     EAGAIN; poll() and epoll see an event arrive.
 *  2. Private data at each message's limit, both ways, byte for byte
 *     (REQ 56, or 92 with -g; REP 196, REJ 148), and one byte more
 *     refused (EINVAL) by connect, accept and reject.  IB CM delivers the whole field: the
 *     lengths reported are the limits, the bytes past what was sent zero.
 *  3. Reject: the client sees REJECTED with IB CM's "consumer defined"
 *     reason (28) and the server's private data.
 *  4. INIT_QP_ATTR: the RTR attributes are refused before the peer's QP
 *     is known; for a request they name the peer (its QP number, its
 *     GID), port 1, a path MTU.
 *  5. A connection made with rdma_create_qp and accept: 64 KiB RDMA
 *     WRITE to the buffer the server named in its REP, then a SEND; the
 *     server checks every byte.  Then disconnect: DISCONNECTED both sides.
 *
 * With -g, both sides name addresses by GID and service id (AF_IB, a
 * sockaddr_ib: srnic's rdma_cm offers rdma_cm's native family on
 * Ethernet): the ids report AF_IB addresses and a path with both GIDs,
 * and a REQ carries IB CM's whole field, 92 bytes, rdma_cm's header
 * being the program's own.
 *
 * Prints "ok"/"not ok" lines and "# N checks, M failed"; exits 1 on any
 * failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <infiniband/ib.h>
#include <rdma/rdma_cma.h>

#include "verbs_util.h"

#define BUF_SIZE 65536
#define REQ_PD (af_ib ? 92 : 56)
#define REQ_PD_MAX 92
#define REP_PD 196
#define REJ_PD 148
#define CONSUMER_DEFINED 28

struct rep_info {	/* the start of the server's REP private data */
	uint64_t addr;
	uint32_t rkey;
};

static int af_ib;	/* -g */

static uint8_t pattern(unsigned i, unsigned salt)
{
	return (uint8_t)(i * 7 + salt);
}

static void fill(uint8_t *p, unsigned n, unsigned salt)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = pattern(i, salt);
}

/* Private data as delivered: the first `sent` bytes as filled with salt,
 * the rest of the field (up to `field`) zero, the length the field's. */
static int pd_ok(const void *pd, unsigned len, unsigned sent, unsigned field,
		 unsigned from, unsigned salt)
{
	const uint8_t *p = pd;

	if (!p || len != field)
		return 0;
	for (unsigned i = from; i < field; i++)
		if (p[i] != (i < sent ? pattern(i, salt) : 0))
			return 0;
	return 1;
}

/* The next event on ch, within timeout_ms (the fd is non-blocking). */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch,
					unsigned timeout_ms)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	struct rdma_cm_event *ev;

	if (poll(&p, 1, (int)timeout_ms) != 1)
		return NULL;
	if (rdma_get_cm_event(ch, &ev))
		return NULL;
	return ev;
}

static int expect(struct rdma_event_channel *ch, enum rdma_cm_event_type t,
		  struct rdma_cm_event **out)
{
	struct rdma_cm_event *ev = next_event(ch, 20000);

	vu_check(ev && ev->event == t, ev ? rdma_event_str(ev->event) : "none",
		 "event %s", rdma_event_str(t));
	if (!ev || ev->event != t) {
		if (ev)
			rdma_ack_cm_event(ev);
		return -1;
	}
	if (out)
		*out = ev;
	else
		rdma_ack_cm_event(ev);
	return 0;
}

static struct rdma_event_channel *channel(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;

	vu_check(ch != NULL, strerror(errno), "rdma_create_event_channel");
	if (!ch)
		exit(1);
	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	errno = 0;
	vu_check(rdma_get_cm_event(ch, &ev) == -1 && errno == EAGAIN,
		 strerror(errno), "an empty non-blocking channel says EAGAIN");
	return ch;
}

static struct ibv_qp_init_attr qp_caps(void)
{
	struct ibv_qp_init_attr a = {
		.cap = {.max_send_wr = 8, .max_recv_wr = 8,
			.max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	return a;
}

/* The peer's GID, from the address the id reports (IPv4-mapped for an
 * IP id). */
static void peer_gid(struct rdma_cm_id *id, uint8_t gid[16])
{
	struct sockaddr *peer = rdma_get_peer_addr(id);

	memset(gid, 0, 16);
	if (peer->sa_family == AF_IB) {
		memcpy(gid, &((struct sockaddr_ib *)peer)->sib_addr, 16);
	} else {
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, &((struct sockaddr_in *)peer)->sin_addr, 4);
	}
}

/* -g: id speaks AF_IB, and its path names both ends by GID. */
static void check_af_ib(struct rdma_cm_id *id, const char *what)
{
	struct sockaddr_ib *src = (struct sockaddr_ib *)rdma_get_local_addr(id);
	struct sockaddr_ib *dst = (struct sockaddr_ib *)rdma_get_peer_addr(id);
	struct ibv_sa_path_rec *p = id->route.path_rec;

	if (!af_ib)
		return;
	vu_check(src->sib_family == AF_IB && dst->sib_family == AF_IB &&
			 (be64toh(src->sib_sid) & 0xffff0000) ==
				 RDMA_IB_IP_PS_TCP,
		 NULL, "%s: both addresses AF_IB, the TCP port space", what);
	vu_check(id->route.num_paths == 1 && p &&
			 !memcmp(&p->sgid, &src->sib_addr, 16) &&
			 !memcmp(&p->dgid, &dst->sib_addr, 16) &&
			 !memcmp(&id->route.addr.addr.ibaddr.dgid,
				 &dst->sib_addr, 16),
		 NULL, "%s: one path, from our GID to the peer's", what);
}

static int server(int port)
{
	struct rdma_event_channel *ch = channel();
	struct sockaddr_in any = {.sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port)};
	struct sockaddr_ib any_ib = {
		.sib_family = AF_IB,
		.sib_sid = htobe64(RDMA_IB_IP_PS_TCP | (uint16_t)port),
		.sib_sid_mask = htobe64(UINT64_MAX)};
	struct rdma_conn_param cp = {0};
	struct rdma_cm_event *ev;
	struct rdma_cm_id *l, *id;
	struct ibv_qp_init_attr qa = qp_caps();
	struct ibv_qp_attr attr;
	struct epoll_event ee = {.events = EPOLLIN}, got;
	uint8_t rej[REJ_PD + 1], rep[REP_PD + 1], *buf;
	struct rep_info info;
	struct ibv_recv_wr rwr = {0}, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct ibv_mr *mr;
	uint32_t peer_qpn;
	int ep, mask, bad_at = -1;

	if (rdma_create_id(ch, &l, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(l, af_ib ? (struct sockaddr *)&any_ib
				    : (struct sockaddr *)&any) ||
	    rdma_listen(l, 4)) {
		vu_check(0, strerror(errno), "listen on port %d", port);
		return 1;
	}
	printf("# listening on %d\n", port);
	fflush(stdout);

	/* 1st request: rejected */
	ep = epoll_create1(0);
	epoll_ctl(ep, EPOLL_CTL_ADD, ch->fd, &ee);
	vu_check(epoll_wait(ep, &got, 1, 30000) == 1, NULL,
		 "epoll sees the first request");
	if (expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST, &ev))
		return 1;
	vu_check(pd_ok(ev->param.conn.private_data,
		       ev->param.conn.private_data_len, REQ_PD, REQ_PD, 0, 1),
		 NULL, "REQ private data: %u bytes, every byte",
		 ev->param.conn.private_data_len);
	id = ev->id;
	rdma_ack_cm_event(ev);
	/* (asked of an id without a QP: librdmacm moves a QP to RTS
	 * before it accepts, and to ERR when the accept fails) */
	fill(rep, sizeof(rep), 4);
	cp.private_data = rep;
	cp.private_data_len = REP_PD + 1;
	cp.qp_num = 0x123;
	errno = 0;
	vu_check(rdma_accept(id, &cp) == -1 && errno == EINVAL,
		 strerror(errno), "accept with %d bytes refused", REP_PD + 1);
	memset(&cp, 0, sizeof(cp));
	fill(rej, sizeof(rej), 2);
	errno = 0;
	vu_check(rdma_reject(id, rej, REJ_PD + 1) == -1 && errno == EINVAL,
		 strerror(errno), "reject with %d bytes refused", REJ_PD + 1);
	vu_check(rdma_reject(id, rej, REJ_PD) == 0, strerror(errno),
		 "reject with %d bytes", REJ_PD);
	rdma_destroy_id(id);

	/* 2nd request: accepted */
	if (expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST, &ev))
		return 1;
	id = ev->id;
	peer_qpn = ev->param.conn.qp_num;
	vu_check(pd_ok(ev->param.conn.private_data,
		       ev->param.conn.private_data_len, REQ_PD, REQ_PD, 0, 3),
		 NULL, "second REQ's private data, every byte");
	rdma_ack_cm_event(ev);
	check_af_ib(id, "a request");

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	vu_check(rdma_init_qp_attr(id, &attr, &mask) == 0, strerror(errno),
		 "INIT_QP_ATTR RTR for a request");
	{
		uint8_t want[16];

		peer_gid(id, want);
		vu_check(attr.dest_qp_num == peer_qpn && attr.path_mtu &&
				 attr.ah_attr.is_global &&
				 attr.ah_attr.port_num == 1 &&
				 !memcmp(attr.ah_attr.grh.dgid.raw, want, 16) &&
				 (mask & IBV_QP_DEST_QPN) && (mask & IBV_QP_AV),
			 NULL, "RTR: the peer's QP %u and GID, port 1, MTU %d",
			 attr.dest_qp_num, attr.path_mtu);
	}
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	vu_check(rdma_init_qp_attr(id, &attr, &mask) == 0 &&
			 attr.port_num == 1 && (mask & IBV_QP_ACCESS_FLAGS) &&
			 (attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE),
		 NULL, "INIT: port 1, remote write");

	if (rdma_create_qp(id, NULL, &qa)) {
		vu_check(0, strerror(errno), "rdma_create_qp");
		return 1;
	}
	buf = calloc(1, BUF_SIZE);
	mr = ibv_reg_mr(id->pd, buf, BUF_SIZE,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!mr) {
		vu_check(0, strerror(errno), "ibv_reg_mr");
		return 1;
	}
	sge = (struct ibv_sge){.addr = (uintptr_t)buf, .length = 16,
			       .lkey = mr->lkey};
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	ibv_post_recv(id->qp, &rwr, &bad);

	fill(rep, sizeof(rep), 4);
	info.addr = (uintptr_t)buf;
	info.rkey = mr->rkey;
	memcpy(rep, &info, sizeof(info));
	cp.private_data = rep;
	cp.private_data_len = REP_PD;
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	vu_check(rdma_accept(id, &cp) == 0, strerror(errno),
		 "accept with %d bytes", REP_PD);
	if (expect(ch, RDMA_CM_EVENT_ESTABLISHED, NULL))
		return 1;

	/* the client's WRITE, then its SEND */
	vu_check(vu_poll(id->recv_cq, &wc, 20000) == 1 &&
			 wc.status == IBV_WC_SUCCESS,
		 NULL, "the client's SEND arrived");
	for (unsigned i = 16; i < BUF_SIZE; i++)
		if (buf[i] != pattern(i, 5)) {
			bad_at = (int)i;
			break;
		}
	vu_check(bad_at < 0, NULL, "64 KiB RDMA WRITE: every byte (first wrong at %d)",
		 bad_at);

	if (expect(ch, RDMA_CM_EVENT_DISCONNECTED, NULL) == 0)
		vu_check(rdma_disconnect(id) == 0, strerror(errno),
			 "disconnect after the peer's");
	rdma_destroy_qp(id);
	ibv_dereg_mr(mr);
	rdma_destroy_id(id);
	rdma_destroy_id(l);
	rdma_destroy_event_channel(ch);
	return 0;
}

static struct rdma_cm_id *resolved(struct rdma_event_channel *ch,
				   struct sockaddr *dst)
{
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, dst, 2000) ||
	    expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) ||
	    rdma_resolve_route(id, 2000) ||
	    expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL)) {
		vu_check(0, strerror(errno), "resolve address and route");
		exit(1);
	}
	return id;
}

static int client(const char *host, int port)
{
	struct rdma_event_channel *ch = channel();
	struct addrinfo *ai, hints = {.ai_family = AF_INET};
	struct rdma_conn_param cp = {0};
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct ibv_qp_init_attr qa = qp_caps();
	struct ibv_qp_attr attr;
	struct ibv_send_wr wr = {0}, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct ibv_mr *mr;
	struct rep_info info;
	uint8_t req[REQ_PD_MAX + 1], *buf;
	struct sockaddr_ib gib = {0};
	struct sockaddr *dst;
	char service[16];
	int mask, ok;

	snprintf(service, sizeof(service), "%d", port);
	if (getaddrinfo(host, service, &hints, &ai)) {
		vu_check(0, host, "resolve the server's name");
		return 1;
	}
	dst = ai->ai_addr;

	if (af_ib) {
		/* (the server's IPv4 address, as its GID names it) */
		gib.sib_family = AF_IB;
		gib.sib_pkey = htobe16(0xffff);
		gib.sib_addr.sib_raw[10] = gib.sib_addr.sib_raw[11] = 0xff;
		memcpy(&gib.sib_addr.sib_raw[12],
		       &((struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
		gib.sib_sid = htobe64(RDMA_IB_IP_PS_TCP | (uint16_t)port);
		gib.sib_sid_mask = htobe64(UINT64_MAX);
		dst = (struct sockaddr *)&gib;
	}

	/* 1st connection: rejected */
	id = resolved(ch, dst);
	check_af_ib(id, "resolved");
	vu_check(id->verbs && id->port_num == 1 &&
			 !strncmp(ibv_get_device_name(id->verbs->device),
				  "srnic", 5),
		 NULL, "the id is bound to srnic's port 1");
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	errno = 0;
	vu_check(rdma_init_qp_attr(id, &attr, &mask) == -1 && errno == EINVAL,
		 strerror(errno),
		 "INIT_QP_ATTR RTR refused before the peer is known");
	fill(req, sizeof(req), 1);
	cp.private_data = req;
	cp.private_data_len = REQ_PD + 1;
	cp.qp_num = 0x123;	/* (no QP: a connect without one) */
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	errno = 0;
	vu_check(rdma_connect(id, &cp) == -1 && errno == EINVAL,
		 strerror(errno), "connect with %d bytes refused", REQ_PD + 1);
	cp.private_data_len = REQ_PD;
	vu_check(rdma_connect(id, &cp) == 0, strerror(errno),
		 "connect with %d bytes", REQ_PD);
	if (expect(ch, RDMA_CM_EVENT_REJECTED, &ev) == 0) {
		vu_check(ev->status == CONSUMER_DEFINED, NULL,
			 "REJECTED with reason %d", ev->status);
		vu_check(pd_ok(ev->param.conn.private_data,
			       ev->param.conn.private_data_len, REJ_PD,
			       REJ_PD, 0, 2),
			 NULL, "REJ private data: %u bytes, every byte",
			 ev->param.conn.private_data_len);
		rdma_ack_cm_event(ev);
	}
	rdma_destroy_id(id);

	/* 2nd connection: accepted; WRITE, SEND, disconnect */
	id = resolved(ch, dst);
	if (rdma_create_qp(id, NULL, &qa)) {
		vu_check(0, strerror(errno), "rdma_create_qp");
		return 1;
	}
	buf = malloc(BUF_SIZE);
	fill(buf, BUF_SIZE, 5);
	mr = ibv_reg_mr(id->pd, buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	fill(req, sizeof(req), 3);
	cp.private_data = req;
	cp.private_data_len = REQ_PD;
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	if (!mr || rdma_connect(id, &cp)) {
		vu_check(0, strerror(errno), "register and connect");
		return 1;
	}
	if (expect(ch, RDMA_CM_EVENT_ESTABLISHED, &ev))
		return 1;
	vu_check(pd_ok(ev->param.conn.private_data,
		       ev->param.conn.private_data_len, REP_PD, REP_PD,
		       sizeof(info), 4),
		 NULL, "REP private data: %u bytes, every byte",
		 ev->param.conn.private_data_len);
	memcpy(&info, ev->param.conn.private_data, sizeof(info));
	rdma_ack_cm_event(ev);

	sge = (struct ibv_sge){.addr = (uintptr_t)buf + 16,
			       .length = BUF_SIZE - 16, .lkey = mr->lkey};
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = info.addr + 16;
	wr.wr.rdma.rkey = info.rkey;
	ok = ibv_post_send(id->qp, &wr, &bad) == 0 &&
	     vu_poll(id->send_cq, &wc, 20000) == 1 &&
	     wc.status == IBV_WC_SUCCESS;
	vu_check(ok, NULL, "RDMA WRITE of 64 KiB to the REP's buffer");
	sge.length = 16;
	sge.addr = (uintptr_t)buf;
	wr.opcode = IBV_WR_SEND;
	ok = ibv_post_send(id->qp, &wr, &bad) == 0 &&
	     vu_poll(id->send_cq, &wc, 20000) == 1 &&
	     wc.status == IBV_WC_SUCCESS;
	vu_check(ok, NULL, "SEND after it");

	vu_check(rdma_disconnect(id) == 0, strerror(errno), "disconnect");
	expect(ch, RDMA_CM_EVENT_DISCONNECTED, NULL);
	rdma_destroy_qp(id);
	ibv_dereg_mr(mr);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	freeaddrinfo(ai);
	return 0;
}

int main(int argc, char **argv)
{
	int opt, port = 7300, is_server = 0, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "sgp:")) != -1) {
		switch (opt) {
		case 's':
			is_server = 1;
			break;
		case 'g':
			af_ib = 1;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: cm_check -s [-g] [-p PORT] | "
					"cm_check [-g] [-p PORT] HOST\n");
			return 2;
		}
	}
	if (!is_server && optind >= argc) {
		fprintf(stderr, "cm_check: a host, or -s\n");
		return 2;
	}
	rc = is_server ? server(port) : client(argv[optind], port);
	printf("# %u checks, %u failed\n", vu_checks, vu_failed);
	return rc || vu_failed ? 1 : 0;
}
