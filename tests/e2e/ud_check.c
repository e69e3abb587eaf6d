/* SPDX-License-Identifier: MIT */
/*
 * ud_check: UD QPs and multicast, what ibv_ud_pingpong does not look at.
 *
 *   server:  ud_check [-p PORT]       three UD QPs: one unicast, two
 *                                     attached to group 239.1.2.3
 *   client:  ud_check [-p PORT] HOST  one UD QP, which sends
 *
 * Unicast: a datagram with another Q_Key is not received, one with the
 * right Q_Key and immediate data is, and so is one whose Q_Key has the high
 * bit set (the sending QP's own Q_Key is used).  Each receive completion has
 * IBV_WC_GRH, the sender's QP number, 40 + payload bytes, and a GRH whose
 * last 20 bytes are the IPv4 header of a RoCE v2 packet from the client to
 * the server (valid checksum); the payload is checked byte for byte.  The
 * server answers through ibv_create_ah_from_wc, which reads that GRH.
 *
 * Multicast: 20 datagrams to the group reach both attached QPs, in order
 * and intact; after one QP detaches, 10 more (sent with the ibv_wr_* API,
 * the others with ibv_post_send) reach only the other.
 * Attaching a non-multicast GID and detaching twice fail.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_util.h"

#define QKEY 0x1234u
#define MC_QKEY 0x5678u
#define GROUP "239.1.2.3"
#define GRH 40
#define NRECV 32
#define MC_FIRST 20
#define MC_SECOND 10
#define TCP_MS 30000
#define WAIT_MS 5000
#define QUIET_MS 300

static unsigned bad, checks;

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		checks++;                                                  \
		if (cond) {                                                \
			printf("ok - " __VA_ARGS__);                       \
		} else {                                                   \
			printf("not ok - " __VA_ARGS__);                   \
			bad++;                                             \
		}                                                          \
		putchar('\n');                                             \
	} while (0)

static void die(const char *what)
{
	fprintf(stderr, "ud_check: %s (errno %d)\n", what, errno);
	exit(2);
}

/* One UD QP with its own CQ and NRECV receive slots of GRH + mtu bytes. */
struct udq {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	unsigned slot_len;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static unsigned mtu;

static void udq_post_recv(struct udq *q, unsigned slot)
{
	struct ibv_sge sge = {.addr = (uintptr_t)q->buf + slot * q->slot_len,
			      .length = q->slot_len,
			      .lkey = q->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge,
				 .num_sge = 1}, *badwr;

	memset(q->buf + slot * q->slot_len, 0xee, q->slot_len);
	if (ibv_post_recv(q->qp, &wr, &badwr))
		die("ibv_post_recv");
}

static void udq_make(struct udq *q, uint32_t qkey)
{
	struct ibv_qp_init_attr_ex ia;
	struct ibv_qp_attr a;
	unsigned i;

	q->slot_len = GRH + mtu;
	q->cq = ibv_create_cq(ctx, 2 * NRECV, NULL, NULL, 0);
	q->buf = calloc(NRECV + 1, q->slot_len);
	q->mr = q->cq && q->buf ? ibv_reg_mr(pd, q->buf,
					      (NRECV + 1) * q->slot_len,
					      IBV_ACCESS_LOCAL_WRITE)
				: NULL;
	if (!q->mr)
		die("UD QP resources");
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = q->cq;
	ia.qp_type = IBV_QPT_UD;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = NRECV;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ia.pd = pd;
	ia.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	q->qp = ibv_create_qp_ex(ctx, &ia);
	if (!q->qp)
		die("ibv_create_qp_ex UD");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = VU_PORT;
	a.qkey = qkey;
	if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				     IBV_QP_PORT | IBV_QP_QKEY))
		die("UD to INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE))
		die("UD to RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("UD to RTS");
	for (i = 0; i < NRECV; i++)
		udq_post_recv(q, i);
}

static uint8_t pattern(unsigned msg, unsigned k)
{
	return (uint8_t)(msg * 29 + k * 3 + 1);
}

/* Send len pattern(msg) bytes to (ah, qpn, qkey) from the send slot,
 * with ibv_post_send or (new_api) the ibv_wr_* calls. */
static int new_api;

static void udq_send(struct udq *q, struct ibv_ah *ah, uint32_t qpn,
		     uint32_t qkey, unsigned msg, unsigned len, int imm)
{
	uint8_t *src = q->buf + NRECV * q->slot_len;
	struct ibv_sge sge = {.addr = (uintptr_t)src, .length = len,
			      .lkey = q->mr->lkey};
	struct ibv_send_wr wr, *badwr;
	struct ibv_wc wc;
	unsigned k;

	for (k = 0; k < len; k++)
		src[k] = pattern(msg, k);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1000 + msg;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	wr.imm_data = htonl(0xabc00000u + msg);
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	if (new_api) {
		struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(q->qp);

		ibv_wr_start(qpx);
		qpx->wr_id = wr.wr_id;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		if (imm)
			ibv_wr_send_imm(qpx, wr.imm_data);
		else
			ibv_wr_send(qpx);
		ibv_wr_set_ud_addr(qpx, ah, qpn, qkey);
		ibv_wr_set_sge(qpx, sge.lkey, sge.addr, sge.length);
		if (ibv_wr_complete(qpx))
			die("ibv_wr_complete UD");
	} else if (ibv_post_send(q->qp, &wr, &badwr)) {
		die("ibv_post_send UD");
	}
	if (vu_poll(q->cq, &wc, WAIT_MS) != 1 || wc.status != IBV_WC_SUCCESS ||
	    wc.wr_id != wr.wr_id)
		die("UD send completion");
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The IPv4 header at grh + 20: from src to dst, checksum valid. */
static int grh_ok(const uint8_t *grh, uint32_t src, uint32_t dst)
{
	const uint8_t *ip = grh + 20;
	uint32_t sum = 0, s, d;
	unsigned i;

	for (i = 0; i < 20; i += 2)
		sum += get16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	memcpy(&s, ip + 12, 4);
	memcpy(&d, ip + 16, 4);
	return ip[0] == 0x45 && ip[9] == 17 && sum == 0xffff && s == src &&
	       d == dst;
}

/*
 * Take the next receive of q: it must be msg, len bytes from QP src_qpn of
 * node src to dst, with immediate data if imm.  Reposts the slot.  Returns
 * the completion through *out and its GRH through grh_out (for an answer)
 * when out is not NULL.
 */
static void expect_recv(struct udq *q, const char *what, unsigned msg,
			unsigned len, uint32_t src_qpn, uint32_t src,
			uint32_t dst, int imm, struct ibv_wc *out,
			uint8_t *grh_out)
{
	struct ibv_wc wc;
	const uint8_t *p;
	unsigned k, wrong = 0;

	if (vu_poll(q->cq, &wc, WAIT_MS) != 1) {
		CHECK(0, "%s: received", what);
		return;
	}
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV,
	      "%s: completes (status %d opcode %d)", what, wc.status,
	      wc.opcode);
	CHECK(wc.wc_flags & IBV_WC_GRH, "%s: IBV_WC_GRH set", what);
	CHECK(wc.byte_len == GRH + len, "%s: byte_len %u is 40 + %u", what,
	      wc.byte_len, len);
	CHECK(wc.src_qp == src_qpn, "%s: src_qp %#x is the sender's %#x",
	      what, wc.src_qp, src_qpn);
	CHECK(!imm || ((wc.wc_flags & IBV_WC_WITH_IMM) &&
		       ntohl(wc.imm_data) == 0xabc00000u + msg),
	      "%s: immediate data", what);
	p = q->buf + wc.wr_id * q->slot_len;
	CHECK(grh_ok(p, src, dst), "%s: GRH holds the IPv4 header", what);
	for (k = 0; k < len; k++)
		wrong += p[GRH + k] != pattern(msg, k);
	CHECK(!wrong, "%s: %u bytes intact (%u wrong)", what, len, wrong);
	if (out) {
		*out = wc;
		memcpy(grh_out, p, GRH);
	}
	udq_post_recv(q, (unsigned)wc.wr_id);
}

static void expect_quiet(struct udq *q, const char *what)
{
	struct ibv_wc wc;
	int got = vu_poll(q->cq, &wc, QUIET_MS);

	CHECK(got == 0, "%s", what);
	if (got == 1)
		udq_post_recv(q, (unsigned)wc.wr_id);
}

static struct ibv_ah *ah_to(const union ibv_gid *gid)
{
	struct ibv_ah_attr a;
	struct ibv_ah *ah;

	memset(&a, 0, sizeof(a));
	a.is_global = 1;
	a.port_num = VU_PORT;
	a.grh.dgid = *gid;
	a.grh.sgid_index = VU_GID_INDEX;
	a.grh.hop_limit = 1;
	ah = ibv_create_ah(pd, &a);
	if (!ah)
		die("ibv_create_ah");
	return ah;
}

static uint32_t gid_ipv4(const union ibv_gid *g)
{
	uint32_t ip;

	memcpy(&ip, g->raw + 12, 4);
	return ip;	/* network order, as in the IPv4 header */
}

static void group_gid(union ibv_gid *g)
{
	memset(g, 0, sizeof(*g));
	g->raw[10] = g->raw[11] = 0xff;
	inet_pton(AF_INET, GROUP, g->raw + 12);
}

static void server(int fd, const union ibv_gid *me)
{
	struct udq uni, mc[2];
	struct vu_dest mine[3], theirs[3];
	union ibv_gid group, plain;
	struct ibv_wc wc;
	struct ibv_ah *back;
	uint8_t grh[GRH];
	uint32_t cli, srv = gid_ipv4(me);
	unsigned i;

	udq_make(&uni, QKEY);
	udq_make(&mc[0], MC_QKEY);
	udq_make(&mc[1], MC_QKEY);
	group_gid(&group);
	CHECK(!ibv_attach_mcast(mc[0].qp, &group, 0) &&
		      !ibv_attach_mcast(mc[1].qp, &group, 0),
	      "two QPs attach to " GROUP);
	plain = *me;
	CHECK(ibv_attach_mcast(mc[0].qp, &plain, 0) != 0,
	      "attaching a unicast GID fails");
	memset(mine, 0, sizeof(mine));
	mine[0].qpn = uni.qp->qp_num;
	mine[1].qpn = mc[0].qp->qp_num;
	mine[2].qpn = mc[1].qp->qp_num;
	for (i = 0; i < 3; i++)
		mine[i].gid = *me;
	if (vu_exchange(fd, mine, theirs, 3, TCP_MS))
		die("exchange");
	cli = gid_ipv4(&theirs[0].gid);

	/* Unicast: the wrong Q_Key's datagram (message 1) never shows. */
	if (vu_sync(fd, TCP_MS))
		die("sync");
	expect_recv(&uni, "Q_Key and immediate", 2, 1000, theirs[0].qpn, cli,
		    srv, 1, &wc, grh);
	expect_recv(&uni, "high-bit Q_Key takes the sender's own", 3, mtu,
		    theirs[0].qpn, cli, srv, 0, NULL, NULL);
	expect_quiet(&uni, "a datagram with another Q_Key is not received");
	back = ibv_create_ah_from_wc(pd, &wc, (struct ibv_grh *)grh, VU_PORT);
	CHECK(back != NULL, "ibv_create_ah_from_wc reads the GRH (errno %d)",
	      back ? 0 : errno);
	if (back) {
		udq_send(&uni, back, wc.src_qp, QKEY, 4, 64, 0);
		ibv_destroy_ah(back);
	}

	/* Multicast: both QPs take all of the first run... */
	if (vu_sync(fd, TCP_MS))
		die("sync");
	for (i = 0; i < MC_FIRST; i++) {
		expect_recv(&mc[0], "multicast to QP 1", 100 + i, 512 + i,
			    theirs[0].qpn, cli, htonl(0xef010203u), 0,
			    NULL, NULL);
		expect_recv(&mc[1], "multicast to QP 2", 100 + i, 512 + i,
			    theirs[0].qpn, cli, htonl(0xef010203u), 0,
			    NULL, NULL);
	}
	/* ... and after one leaves, only the other. */
	CHECK(!ibv_detach_mcast(mc[1].qp, &group, 0), "QP 2 detaches");
	CHECK(ibv_detach_mcast(mc[1].qp, &group, 0) != 0,
	      "detaching twice fails");
	if (vu_sync(fd, TCP_MS) || vu_sync(fd, TCP_MS))
		die("sync");
	for (i = 0; i < MC_SECOND; i++)
		expect_recv(&mc[0], "multicast after a detach", 200 + i, 700,
			    theirs[0].qpn, cli, htonl(0xef010203u), 0,
			    NULL, NULL);
	expect_quiet(&mc[1], "a detached QP receives nothing");
	vu_sync(fd, TCP_MS);
}

static void client(int fd, const union ibv_gid *me)
{
	struct vu_dest mine[3], theirs[3];
	union ibv_gid group;
	struct ibv_ah *ah, *mah;
	struct udq q;
	unsigned i;

	udq_make(&q, QKEY);
	memset(mine, 0, sizeof(mine));
	for (i = 0; i < 3; i++) {
		mine[i].qpn = q.qp->qp_num;
		mine[i].gid = *me;
	}
	if (vu_exchange(fd, mine, theirs, 3, TCP_MS))
		die("exchange");
	ah = ah_to(&theirs[0].gid);
	udq_send(&q, ah, theirs[0].qpn, 0x9999, 1, 100, 0);
	udq_send(&q, ah, theirs[0].qpn, QKEY, 2, 1000, 1);
	udq_send(&q, ah, theirs[0].qpn, 0x80000000u, 3, mtu, 0);
	if (vu_sync(fd, TCP_MS))
		die("sync");
	expect_recv(&q, "the answer through an AH from a wc", 4, 64,
		    theirs[0].qpn, gid_ipv4(&theirs[0].gid), gid_ipv4(me), 0,
		    NULL, NULL);

	group_gid(&group);
	mah = ah_to(&group);
	if (vu_sync(fd, TCP_MS))
		die("sync");
	for (i = 0; i < MC_FIRST; i++)
		udq_send(&q, mah, 0xffffff, MC_QKEY, 100 + i, 512 + i, 0);
	if (vu_sync(fd, TCP_MS))
		die("sync");
	new_api = 1;
	for (i = 0; i < MC_SECOND; i++)
		udq_send(&q, mah, 0xffffff, MC_QKEY, 200 + i, 700, 0);
	new_api = 0;
	if (vu_sync(fd, TCP_MS) || vu_sync(fd, TCP_MS))
		die("sync");
	ibv_destroy_ah(mah);
	ibv_destroy_ah(ah);
}

int main(int argc, char **argv)
{
	struct ibv_port_attr pa;
	union ibv_gid me;
	const char *host = NULL;
	int port = 18519, opt, fd;

	while ((opt = getopt(argc, argv, "p:")) != -1) {
		if (opt != 'p')
			return 2;
		port = atoi(optarg);
	}
	if (optind < argc)
		host = argv[optind];
	setvbuf(stdout, NULL, _IOLBF, 0);
	ctx = vu_open_first();
	if (!ctx)
		return 2;
	pd = ibv_alloc_pd(ctx);
	if (!pd || ibv_query_port(ctx, VU_PORT, &pa) ||
	    ibv_query_gid(ctx, VU_PORT, VU_GID_INDEX, &me))
		die("setup");
	mtu = 128u << pa.active_mtu;
	fd = vu_tcp_connect(host, port, TCP_MS);
	if (fd < 0)
		die("connect");
	if (host)
		client(fd, &me);
	else
		server(fd, &me);
	printf("# %u checks, %u failed\n", checks, bad);
	return bad ? 1 : 0;
}
