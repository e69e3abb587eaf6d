/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "verbs_util.h"

uint64_t vu_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_us(unsigned us)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)us * 1000};

	nanosleep(&ts, NULL);
}

uint8_t vu_pattern(uint32_t seed, uint64_t off)
{
	uint64_t x = (off + 1) * 0x9e3779b97f4a7c15ull ^ seed;

	x ^= x >> 29;
	return (uint8_t)(x * 0xbf58476d1ce4e5b9ull >> 56);
}

void vu_fill(uint8_t *p, uint64_t len, uint32_t seed)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		p[i] = vu_pattern(seed, i);
}

struct ibv_context *vu_open_first(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n;

	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		fprintf(stderr, "no RDMA device found\n");
		if (list)
			ibv_free_device_list(list);
		return NULL;
	}
	ctx = ibv_open_device(list[0]);
	if (!ctx)
		fprintf(stderr, "cannot open %s: %s\n",
			ibv_get_device_name(list[0]), strerror(errno));
	ibv_free_device_list(list);
	return ctx;
}

struct ibv_qp *vu_create_rc_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			       uint32_t max_send_wr, uint32_t max_recv_wr,
			       uint32_t max_sge, struct ibv_qp_cap *cap_out)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = max_send_wr;
	ia.cap.max_recv_wr = max_recv_wr;
	ia.cap.max_send_sge = max_sge;
	ia.cap.max_recv_sge = max_sge;
	qp = ibv_create_qp(pd, &ia);
	if (qp && cap_out)
		*cap_out = ia.cap;
	return qp;
}

int vu_init_attr(struct ibv_qp_attr *a, int access)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_INIT;
	a->pkey_index = 0;
	a->port_num = VU_PORT;
	a->qp_access_flags = access;
	return IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	       IBV_QP_ACCESS_FLAGS;
}

int vu_rtr_attr(struct ibv_qp_attr *a, const struct vu_dest *peer,
		enum ibv_mtu mtu)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = mtu;
	a->dest_qp_num = peer->qpn;
	a->rq_psn = peer->psn;
	a->max_dest_rd_atomic = 1;
	a->min_rnr_timer = 12;
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.dgid = peer->gid;
	a->ah_attr.grh.sgid_index = VU_GID_INDEX;
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.sl = 0;
	a->ah_attr.port_num = VU_PORT;
	return IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
	       IBV_QP_MIN_RNR_TIMER;
}

int vu_rts_attr(struct ibv_qp_attr *a, uint32_t sq_psn, uint8_t timeout,
		uint8_t retry_cnt)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTS;
	a->sq_psn = sq_psn;
	a->timeout = timeout;
	a->retry_cnt = retry_cnt;
	a->rnr_retry = 7;
	a->max_rd_atomic = 1;
	return IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
	       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
}

int vu_to_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr a;
	int mask = vu_init_attr(&a, access);

	return ibv_modify_qp(qp, &a, mask);
}

int vu_to_rtr(struct ibv_qp *qp, const struct vu_dest *peer, enum ibv_mtu mtu)
{
	struct ibv_port_attr pa;
	struct ibv_qp_attr a;
	int mask;

	/* At most the port's active MTU, as verbs asks (the tap and
	 * af_packet wires carry 1024-byte payloads, memif 4096). */
	if (!ibv_query_port(qp->context, VU_PORT, &pa) && pa.active_mtu < mtu)
		mtu = pa.active_mtu;
	mask = vu_rtr_attr(&a, peer, mtu);

	return ibv_modify_qp(qp, &a, mask);
}

int vu_to_rts(struct ibv_qp *qp, uint32_t sq_psn, uint8_t timeout,
	      uint8_t retry_cnt)
{
	struct ibv_qp_attr a;
	int mask = vu_rts_attr(&a, sq_psn, timeout, retry_cnt);

	return ibv_modify_qp(qp, &a, mask);
}

int vu_loop_pair(struct ibv_pd *pd, struct ibv_cq *cq,
		 const union ibv_gid *gid, int access, struct ibv_qp *qp[2])
{
	unsigned i;

	for (i = 0; i < 2; i++) {
		qp[i] = vu_create_rc_qp(pd, cq, 16, 16, 1, NULL);
		if (!qp[i])
			return -1;
	}
	return vu_loop_connect(qp, gid, access);
}

int vu_loop_connect(struct ibv_qp *qp[2], const union ibv_gid *gid,
		    int access)
{
	unsigned i;

	for (i = 0; i < 2; i++)
		if (vu_to_init(qp[i], access))
			return -1;
	for (i = 0; i < 2; i++) {
		struct vu_dest d = {.gid = *gid, .qpn = qp[i ^ 1]->qp_num};

		if (vu_to_rtr(qp[i], &d, IBV_MTU_4096) ||
		    vu_to_rts(qp[i], 0, 14, 7))
			return -1;
	}
	return 0;
}

int vu_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	memset(&a, 0, sizeof(a));
	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

int vu_poll(struct ibv_cq *cq, struct ibv_wc *wc, unsigned timeout_ms)
{
	uint64_t deadline = vu_now_ms() + timeout_ms;
	unsigned empty = 0;

	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			return -1;
		if (n > 0)
			return 1;
		/* Two CPUs for two nodes and their programs: don't spin
		 * long on an empty CQ. */
		if (++empty > 100) {
			if (vu_now_ms() >= deadline)
				return 0;
			nap_us(200);
		}
	}
}

/* ---- TCP ---- */

static int wait_fd(int fd, short events, uint64_t deadline)
{
	for (;;) {
		uint64_t now = vu_now_ms();
		struct pollfd p = {.fd = fd, .events = events};
		int rc;

		if (now >= deadline)
			return -1;
		rc = poll(&p, 1, (int)(deadline - now));
		if (rc > 0)
			return 0;
		if (rc < 0 && errno != EINTR)
			return -1;
	}
}

static int write_all(int fd, const void *buf, size_t len, uint64_t deadline)
{
	const char *p = buf;

	while (len) {
		ssize_t n;

		if (wait_fd(fd, POLLOUT, deadline))
			return -1;
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* 0, or -1 on error, timeout or end of stream. */
static int read_all(int fd, void *buf, size_t len, uint64_t deadline)
{
	char *p = buf;

	while (len) {
		ssize_t n;

		if (wait_fd(fd, POLLIN, deadline))
			return -1;
		n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static void tcp_tune(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int tcp_server(int port, uint64_t deadline)
{
	struct sockaddr_in sin;
	int one = 1, lfd, fd;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0) {
		perror("socket");
		return -1;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_ANY);
	sin.sin_port = htons(port);
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    listen(lfd, 1)) {
		fprintf(stderr, "tcp port %d: %s\n", port, strerror(errno));
		close(lfd);
		return -1;
	}
	if (wait_fd(lfd, POLLIN, deadline)) {
		fprintf(stderr, "tcp port %d: no client came\n", port);
		close(lfd);
		return -1;
	}
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		perror("accept");
	close(lfd);
	if (fd >= 0)
		tcp_tune(fd);
	return fd;
}

static int tcp_client(const char *host, int port, uint64_t deadline)
{
	struct addrinfo hints, *res, *ai;
	char service[16];
	int rc, fd = -1;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(service, sizeof(service), "%d", port);
	rc = getaddrinfo(host, service, &hints, &res);
	if (rc) {
		fprintf(stderr, "%s: %s\n", host, gai_strerror(rc));
		return -1;
	}
	while (fd < 0) {
		for (ai = res; ai && fd < 0; ai = ai->ai_next) {
			fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
				    ai->ai_protocol);
			if (fd < 0)
				continue;
			if (connect(fd, ai->ai_addr, ai->ai_addrlen)) {
				close(fd);
				fd = -1;
			}
		}
		if (fd >= 0 || vu_now_ms() >= deadline)
			break;
		nap_us(100000);	/* the server may not listen yet */
	}
	freeaddrinfo(res);
	if (fd < 0)
		fprintf(stderr, "cannot connect to %s:%d\n", host, port);
	else
		tcp_tune(fd);
	return fd;
}

int vu_tcp_connect(const char *host, int port, unsigned timeout_ms)
{
	uint64_t deadline = vu_now_ms() + timeout_ms;

	return host ? tcp_client(host, port, deadline)
		    : tcp_server(port, deadline);
}

/* On the wire: count, then per entry qpn, psn, rkey (32 bit), addr (64 bit,
 * two halves) and the GID's 16 bytes; integers in network order. */
#define ENTRY_BYTES (4 * 5 + 16)

static void put32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

int vu_exchange(int fd, const struct vu_dest *mine, struct vu_dest *theirs,
		unsigned n, unsigned timeout_ms)
{
	uint64_t deadline = vu_now_ms() + timeout_ms;
	uint8_t buf[ENTRY_BYTES];
	uint8_t cnt[4];
	unsigned i;

	put32(cnt, n);
	if (write_all(fd, cnt, 4, deadline))
		return -1;
	for (i = 0; i < n; i++) {
		put32(buf, mine[i].qpn);
		put32(buf + 4, mine[i].psn);
		put32(buf + 8, mine[i].rkey);
		put32(buf + 12, (uint32_t)(mine[i].addr >> 32));
		put32(buf + 16, (uint32_t)mine[i].addr);
		memcpy(buf + 20, mine[i].gid.raw, 16);
		if (write_all(fd, buf, sizeof(buf), deadline))
			return -1;
	}
	if (read_all(fd, cnt, 4, deadline))
		return -1;
	if (get32(cnt) != n) {
		fprintf(stderr, "peer has %u QPs, we have %u\n", get32(cnt), n);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (read_all(fd, buf, sizeof(buf), deadline))
			return -1;
		theirs[i].qpn = get32(buf);
		theirs[i].psn = get32(buf + 4);
		theirs[i].rkey = get32(buf + 8);
		theirs[i].addr = (uint64_t)get32(buf + 12) << 32 |
				 get32(buf + 16);
		memcpy(theirs[i].gid.raw, buf + 20, 16);
	}
	return 0;
}

int vu_sync(int fd, unsigned timeout_ms)
{
	uint64_t deadline = vu_now_ms() + timeout_ms;
	char c = 's';

	if (write_all(fd, &c, 1, deadline))
		return -1;
	return read_all(fd, &c, 1, deadline);
}

int vu_wait_eof(int fd, unsigned timeout_ms)
{
	uint64_t deadline = vu_now_ms() + timeout_ms;
	char c;

	for (;;) {
		ssize_t n;

		if (wait_fd(fd, POLLIN, deadline))
			return -1;
		n = recv(fd, &c, 1, 0);
		if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
			return 0;	/* closed (or reset): gone */
	}
}

const char *vu_gid_str(const union ibv_gid *gid, char *buf, unsigned len)
{
	if (!inet_ntop(AF_INET6, gid->raw, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

unsigned vu_checks, vu_failed;

void vu_check(int ok, const char *detail, const char *fmt, ...)
{
	va_list ap;

	vu_checks++;
	vu_failed += !ok;
	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (!ok && detail && *detail)
		printf(" (%s)", detail);
	printf("\n");
	fflush(stdout);
}

const char *vu_state_str(int s)
{
	static const char *names[] = {"RESET", "INIT", "RTR", "RTS",
				      "SQD", "SQE", "ERR"};

	return s >= 0 && s <= IBV_QPS_ERR ? names[s] : "?";
}

const char *vu_err_str(int e)
{
	static char other[32];

	switch (e) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case ENOMEM: return "ENOMEM";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EHOSTUNREACH: return "EHOSTUNREACH";
	case ENOSYS: return "ENOSYS";
	case EBUSY: return "EBUSY";
	default:
		snprintf(other, sizeof(other), "errno %d", e);
		return other;
	}
}

const char *vu_wc_str(const struct ibv_wc *wc, int got)
{
	static char s[96];

	if (got < 0)
		return "poll_cq failed";
	if (got == 0)
		return "no completion in time";
	snprintf(s, sizeof(s), "got %s", ibv_wc_status_str(wc->status));
	return s;
}
