/* SPDX-License-Identifier: MIT */
/*
 * srnic_integrity: moves patterned data between two nodes with RDMA WRITE,
 * RDMA READ and SEND, from 1 byte to 8 MiB, and checks every byte at the
 * far end.  A plain verbs program: it runs on any RDMA device.
 *
 *   server:  srnic_integrity [-p PORT] [-g GIDX]
 *   client:  srnic_integrity [-p PORT] [-g GIDX] [-N] [-r ROUNDS] HOST
 *
 * -N uses the ibv_wr_* API; -R opens, uses and closes the device once
 * before the run (a device must work again after its last close); -L
 * (on both sides) moves one message of verbs' largest size, 2 GiB, each
 * way instead.
 *
 * The two sides agree over TCP on what to do next; the data itself only
 * crosses the RDMA device.  A WRITE's completion at the client means the
 * data has landed at the server, so the server checks right after the
 * client says "written": a lost or late byte fails the run.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define MAX_MSG (8u << 20)
#define HUGE_MSG (1u << 31)	/* verbs' largest message: -L */

/* Bytes of the largest message of this run, and of the buffers. */
static uint32_t max_msg = MAX_MSG;
#define BUF_SIZE ((size_t)max_msg + 4096)

struct peer_info {
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;
	uint64_t addr;
	uint8_t gid[16];
};

struct ctx {
	struct ibv_context *dev;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;	/* set with -N: the ibv_wr_* API */
	struct ibv_mr *mr;
	uint8_t *buf;
	struct peer_info remote;
	int sock;
	int gidx;
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "srnic_integrity: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

/* The pattern depends on the seed and on each byte's offset, so a byte
 * that landed at the wrong place or came from an earlier test shows. */
static uint8_t pattern(uint32_t seed, uint64_t off)
{
	uint64_t x = (off + 1) * 0x9e3779b97f4a7c15ull ^ seed;

	x ^= x >> 29;
	return (uint8_t)(x * 0xbf58476d1ce4e5b9ull >> 56);
}

static void fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern(seed, i);
}

/* Returns the first bad offset, or -1. */
static int64_t verify(const uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern(seed, i))
			return i;
	return -1;
}

/* ---- TCP side channel ---- */

static void send_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t k = send(fd, c, n, MSG_NOSIGNAL);

		if (k <= 0)
			die("control connection lost");
		c += k;
		n -= k;
	}
}

static void recv_all(int fd, void *p, size_t n)
{
	char *c = p;

	while (n) {
		ssize_t k = recv(fd, c, n, 0);

		if (k <= 0)
			die("control connection lost");
		c += k;
		n -= k;
	}
}

struct cmd {
	char op;	/* 'W' write, 'R' read, 'S' send, 'Q' quit; 'k'/'x' ok/bad */
	uint32_t len;
	uint32_t seed;
	uint32_t off;	/* where in the server's buffer */
};

static int tcp_connect(const char *host, const char *port)
{
	struct addrinfo hints = {.ai_family = AF_INET,
				 .ai_socktype = SOCK_STREAM};
	struct addrinfo *res, *r;
	int fd = -1, tries;

	if (getaddrinfo(host, port, &hints, &res))
		die("cannot resolve %s", host);
	for (tries = 0; tries < 50 && fd < 0; tries++) {
		for (r = res; r; r = r->ai_next) {
			fd = socket(r->ai_family, r->ai_socktype, 0);
			if (fd >= 0 && !connect(fd, r->ai_addr, r->ai_addrlen))
				break;
			if (fd >= 0)
				close(fd);
			fd = -1;
		}
		if (fd < 0)
			usleep(100000);
	}
	freeaddrinfo(res);
	if (fd < 0)
		die("cannot connect to %s:%s", host, port);
	return fd;
}

static int tcp_accept(const char *port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons(atoi(port))};
	int one = 1, lfd, fd;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) || listen(lfd, 1))
		die("cannot listen on port %s: %s", port, strerror(errno));
	fd = accept(lfd, NULL, NULL);
	close(lfd);
	if (fd < 0)
		die("accept: %s", strerror(errno));
	return fd;
}

/* ---- verbs ---- */

static void setup(struct ctx *c, int new_api)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr_ex qa;

	if (!list || !list[0])
		die("no RDMA device");
	c->dev = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!c->dev)
		die("cannot open the device");
	c->pd = ibv_alloc_pd(c->dev);
	if (!c->pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	c->buf = aligned_alloc(4096, BUF_SIZE);
	if (!c->buf)
		die("out of memory");
	memset(c->buf, 0, BUF_SIZE);
	c->mr = ibv_reg_mr(c->pd, c->buf, BUF_SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ);
	if (!c->mr)
		die("ibv_reg_mr: %s", strerror(errno));
	c->cq = ibv_create_cq(c->dev, 64, NULL, NULL, 0);
	if (!c->cq)
		die("ibv_create_cq: %s", strerror(errno));
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 16;
	qa.cap.max_recv_wr = 16;
	qa.cap.max_send_sge = 4;
	qa.cap.max_recv_sge = 4;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = c->pd;
	if (new_api) {
		qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		qa.send_ops_flags = IBV_QP_EX_WITH_SEND |
				    IBV_QP_EX_WITH_SEND_WITH_IMM |
				    IBV_QP_EX_WITH_RDMA_WRITE |
				    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				    IBV_QP_EX_WITH_RDMA_READ;
	}
	c->qp = ibv_create_qp_ex(c->dev, &qa);
	if (!c->qp)
		die("ibv_create_qp_ex: %s", strerror(errno));
	if (new_api)
		c->qpx = ibv_qp_to_qp_ex(c->qp);
}

static void connect_qp(struct ctx *c, int server)
{
	struct peer_info me = {0};
	struct ibv_qp_attr a;
	union ibv_gid gid;

	if (ibv_query_gid(c->dev, 1, c->gidx, &gid))
		die("cannot read GID %d", c->gidx);
	srand48(getpid() ^ time(NULL));
	me.qpn = c->qp->qp_num;
	me.psn = lrand48() & 0xffffff;
	me.rkey = c->mr->rkey;
	me.addr = (uintptr_t)c->buf;
	memcpy(me.gid, gid.raw, 16);
	if (server) {
		recv_all(c->sock, &c->remote, sizeof(c->remote));
		send_all(c->sock, &me, sizeof(me));
	} else {
		send_all(c->sock, &me, sizeof(me));
		recv_all(c->sock, &c->remote, sizeof(c->remote));
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify_qp INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_4096;
	a.dest_qp_num = c->remote.qpn;
	a.rq_psn = c->remote.psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = c->gidx;
	a.ah_attr.grh.hop_limit = 1;
	memcpy(a.ah_attr.grh.dgid.raw, c->remote.gid, 16);
	{
		struct ibv_port_attr pa;

		if (!ibv_query_port(c->dev, 1, &pa) &&
		    pa.active_mtu < a.path_mtu)
			a.path_mtu = pa.active_mtu;
	}
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_AV |
					     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					     IBV_QP_RQ_PSN |
					     IBV_QP_MAX_DEST_RD_ATOMIC |
					     IBV_QP_MIN_RNR_TIMER))
		die("modify_qp RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = me.psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
					     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					     IBV_QP_RNR_RETRY |
					     IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify_qp RTS");
}

static struct ibv_wc wait_one(struct ctx *c)
{
	struct ibv_wc wc;
	time_t end = time(NULL) + 30;
	int n;

	while ((n = ibv_poll_cq(c->cq, 1, &wc)) == 0)
		if (time(NULL) > end)
			die("no completion within 30 s");
	if (n < 0)
		die("ibv_poll_cq failed");
	if (wc.status != IBV_WC_SUCCESS)
		die("completion error: %s (wr_id %llu)",
		    ibv_wc_status_str(wc.status),
		    (unsigned long long)wc.wr_id);
	return wc;
}

/* Post one WRITE, READ or SEND (with immediate data or not) of len bytes
 * at loc in our buffer, cut into nsge pieces so that scatter-gather is
 * exercised too. */
static void post(struct ctx *c, enum ibv_wr_opcode op, uint32_t loc,
		 uint32_t len, uint32_t roff, int nsge, uint32_t imm)
{
	struct ibv_sge sge[4];
	uint32_t piece = len / nsge, off = 0;
	int i;

	if (len < (uint32_t)nsge)
		nsge = 1, piece = len;
	for (i = 0; i < nsge; i++) {
		sge[i].addr = (uintptr_t)c->buf + loc + off;
		sge[i].length = i == nsge - 1 ? len - off : piece;
		sge[i].lkey = c->mr->lkey;
		off += sge[i].length;
	}
	if (c->qpx) {
		ibv_wr_start(c->qpx);
		c->qpx->wr_id = op;
		c->qpx->wr_flags = IBV_SEND_SIGNALED;
		if (op == IBV_WR_RDMA_WRITE)
			ibv_wr_rdma_write(c->qpx, c->remote.rkey,
					  c->remote.addr + roff);
		else if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
			ibv_wr_rdma_write_imm(c->qpx, c->remote.rkey,
					      c->remote.addr + roff,
					      htonl(imm));
		else if (op == IBV_WR_RDMA_READ)
			ibv_wr_rdma_read(c->qpx, c->remote.rkey,
					 c->remote.addr + roff);
		else if (op == IBV_WR_SEND_WITH_IMM)
			ibv_wr_send_imm(c->qpx, htonl(imm));
		else
			ibv_wr_send(c->qpx);
		ibv_wr_set_sge_list(c->qpx, nsge, sge);
		if (ibv_wr_complete(c->qpx))
			die("ibv_wr_complete failed");
	} else {
		struct ibv_send_wr wr = {0}, *bad;

		wr.wr_id = op;
		wr.sg_list = sge;
		wr.num_sge = nsge;
		wr.opcode = op;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = c->remote.addr + roff;
		wr.wr.rdma.rkey = c->remote.rkey;
		wr.imm_data = htonl(imm);
		if (ibv_post_send(c->qp, &wr, &bad))
			die("ibv_post_send failed");
	}
}

static void post_recv(struct ctx *c, uint32_t len)
{
	struct ibv_sge sge = {.addr = (uintptr_t)c->buf, .length = len,
			      .lkey = c->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = 99, .sg_list = &sge, .num_sge = 1},
			   *bad;

	if (ibv_post_recv(c->qp, &wr, &bad))
		die("ibv_post_recv failed");
}

/* ---- the two roles ---- */

static int serve(struct ctx *c)
{
	struct cmd m, r;

	for (;;) {
		recv_all(c->sock, &m, sizeof(m));
		r = m;
		switch (m.op) {
		case 'W':	/* the client wrote: check what landed */
			r.op = verify(c->buf + m.off, m.len, m.seed) < 0 ? 'k'
									 : 'x';
			break;
		case 'R':	/* fill what the client will read */
			fill(c->buf + m.off, m.len, m.seed);
			r.op = 'k';
			break;
		case 'S':	/* SEND, or (T) SEND with immediate data */
		case 'T': {	/* post a receive, say ready, then check */
			struct ibv_wc wc;
			int imm = m.op == 'T';

			memset(c->buf, 0, m.len + 1);
			post_recv(c, m.len + 1);	/* one spare byte */
			r.op = 'k';
			send_all(c->sock, &r, sizeof(r));
			wc = wait_one(c);
			r.op = wc.opcode == IBV_WC_RECV && wc.byte_len == m.len &&
					       !!(wc.wc_flags & IBV_WC_WITH_IMM) == imm &&
					       (!imm || wc.imm_data == htonl(m.seed)) &&
					       verify(c->buf, m.len, m.seed) < 0 &&
					       c->buf[m.len] == 0
				       ? 'k'
				       : 'x';
			break;
		}
		case 'I': {	/* WRITE with immediate: takes a receive too */
			struct ibv_wc wc;

			post_recv(c, 0);
			r.op = 'k';
			send_all(c->sock, &r, sizeof(r));
			wc = wait_one(c);
			r.op = wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
					       (wc.wc_flags & IBV_WC_WITH_IMM) &&
					       wc.imm_data == htonl(m.seed) &&
					       verify(c->buf + m.off, m.len, m.seed) < 0
				       ? 'k'
				       : 'x';
			break;
		}
		case 'Q':
			r.op = 'k';
			send_all(c->sock, &r, sizeof(r));
			return 0;
		default:
			die("bad command");
		}
		send_all(c->sock, &r, sizeof(r));
	}
}

static int ask(struct ctx *c, char op, uint32_t len, uint32_t seed,
	       uint32_t off)
{
	struct cmd m = {.op = op, .len = len, .seed = seed, .off = off};

	send_all(c->sock, &m, sizeof(m));
	recv_all(c->sock, &m, sizeof(m));
	return m.op == 'k';
}

static int client(struct ctx *c, int rounds)
{
	static const uint32_t sizes[] = {
		1, 2, 3, 7, 63, 64, 255, 256, 257, 1023, 1024, 1025, 4095,
		4096, 4097, 8191, 65535, 65536, 65537, 1000003, 4194304,
		MAX_MSG - 1, MAX_MSG,
	};
	static const uint32_t huge[] = {HUGE_MSG};
	const uint32_t *list = max_msg == HUGE_MSG ? huge : sizes;
	const unsigned n = max_msg == HUGE_MSG ? 1 : sizeof(sizes) / sizeof(sizes[0]);
	unsigned i, checks = 0, bad = 0;
	int round;

	for (round = 0; round < rounds; round++) {
		for (i = 0; i < n; i++) {
			uint32_t len = list[i];
			uint32_t seed = (uint32_t)lrand48();
			uint32_t roff = (i * 4099u) % 4096;	/* unaligned */
			int nsge = 1 + (i % 4);
			int64_t at;

			if (roff + (size_t)len > BUF_SIZE)
				roff = 0;
			/* WRITE: ours -> theirs, checked there.  Every other
			 * size goes as WRITE with immediate, which the server
			 * sees complete with the immediate data. */
			fill(c->buf, len, seed);
			if (i % 2) {
				struct cmd m;

				ask(c, 'I', len, seed, roff);	/* receive up */
				post(c, IBV_WR_RDMA_WRITE_WITH_IMM, 0, len,
				     roff, nsge, seed);
				wait_one(c);
				recv_all(c->sock, &m, sizeof(m));
				checks++;
				if (m.op != 'k') {
					bad++;
					fprintf(stderr, "WRITE with immediate %u bytes: wrong at the server\n",
						len);
				}
			} else {
				post(c, IBV_WR_RDMA_WRITE, 0, len, roff, nsge, 0);
				wait_one(c);
				checks++;
				if (!ask(c, 'W', len, seed, roff)) {
					bad++;
					fprintf(stderr, "WRITE %u bytes: data differs at the server\n",
						len);
				}
			}
			/* READ: theirs -> ours, checked here. */
			seed = (uint32_t)lrand48();
			ask(c, 'R', len, seed, roff);
			memset(c->buf, 0, len);
			post(c, IBV_WR_RDMA_READ, 0, len, roff, nsge, 0);
			wait_one(c);
			checks++;
			at = verify(c->buf, len, seed);
			if (at >= 0) {
				bad++;
				fprintf(stderr, "READ %u bytes: wrong byte at %lld\n",
					len, (long long)at);
			}
			/* SEND: ours -> their receive buffer, checked there. */
			seed = (uint32_t)lrand48();
			fill(c->buf, len, seed);
			/* they post a receive; every other size goes with
			 * immediate data */
			ask(c, i % 2 ? 'T' : 'S', len, seed, 0);
			post(c, i % 2 ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, 0,
			     len, 0, nsge, seed);
			wait_one(c);
			checks++;
			{
				struct cmd m;

				recv_all(c->sock, &m, sizeof(m));
				if (m.op != 'k') {
					bad++;
					fprintf(stderr, "SEND %u bytes: wrong at the receiver\n",
						len);
				}
			}
		}
	}
	ask(c, 'Q', 0, 0, 0);
	printf("srnic_integrity: %u checks, %u bad (WRITE, READ, SEND; %s%u B%s)\n",
	       checks, bad, n == 1 ? "" : "1 B to ", max_msg,
	       c->qpx ? ", ibv_wr_* API" : "");
	return bad ? 1 : 0;
}

static void teardown(struct ctx *c)
{
	ibv_destroy_qp(c->qp);
	ibv_dereg_mr(c->mr);
	ibv_destroy_cq(c->cq);
	ibv_dealloc_pd(c->pd);
	ibv_close_device(c->dev);
	free(c->buf);
}

int main(int argc, char **argv)
{
	struct ctx c = {.gidx = 1};
	const char *port = "18600";
	int new_api = 0, rounds = 1, reopen = 0, opt, rc;

	while ((opt = getopt(argc, argv, "p:g:Nr:RL")) != -1) {
		switch (opt) {
		case 'p': port = optarg; break;
		case 'g': c.gidx = atoi(optarg); break;
		case 'N': new_api = 1; break;
		case 'r': rounds = atoi(optarg); break;
		case 'R': reopen = 1; break;
		case 'L': max_msg = HUGE_MSG; break;
		default:
			fprintf(stderr, "usage: %s [-p port] [-g gid index] [-N] [-R] [-L] [-r rounds] [host]\n",
				argv[0]);
			return 2;
		}
	}
	if (reopen) {
		setup(&c, new_api);
		teardown(&c);
	}
	setup(&c, new_api);
	c.sock = optind < argc ? tcp_connect(argv[optind], port)
			       : tcp_accept(port);
	connect_qp(&c, optind >= argc);
	srand48(getpid());
	rc = optind < argc ? client(&c, rounds) : serve(&c);

	teardown(&c);
	close(c.sock);
	return rc;
}
