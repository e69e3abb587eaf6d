/* SPDX-License-Identifier: MIT */
/*
 * conformance: does srnic answer as the verbs specification says?  A
 * systematic walk, for RC, UC and UD QPs, over the QP state machine, the
 * attributes ibv_query_qp reports, the device's limits, what post time
 * refuses, and the error completions between two nodes.  One line per
 * check, "ok - ..." or "not ok - ... (detail)", then "# N checks, M
 * failed"; the exit status is 1 if any check failed.
 *
 *   conformance [-p PORT]         server (run it first, on node b)
 *   conformance [-p PORT] HOST    client: connects to HOST
 *
 * Both nodes check the device and port queries.  The client then walks
 * the state machine and the limits on QPs of its own, while the server
 * waits; last, the client runs the error cases on QP pairs made up front
 * (one pair a case, so that one error never spoils the next), and the
 * server checks what arrives on its side.
 *
 * tests/e2e/verbs_errors.c covers more RC error cases (lkeys, bounds,
 * READ rights, a peer that dies): this program does not repeat them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conformance.h"

#define n_checks vu_checks
#define n_failed vu_failed

void cf_note(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void cf_die(const char *what)
{
	printf("not ok - %s: %s\n", what, strerror(errno));
	printf("# bailing out after %u checks, %u failed\n", n_checks + 1,
	       n_failed + 1);
	fflush(stdout);
	_exit(1);
}

const char *cf_type(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC"
			       : t == IBV_QPT_UD ? "UD" : "?";
}

uint8_t *cf_alloc(size_t len)
{
	size_t size = (len + 4095) & ~(size_t)4095;
	uint8_t *p = aligned_alloc(4096, size ? size : 4096);

	if (!p)
		cf_die("aligned_alloc");
	memset(p, 0, size ? size : 4096);
	return p;
}

struct ibv_qp *cf_create_qp(struct cf_node *n, enum ibv_qp_type type,
			    struct ibv_cq *cq, uint32_t send_wr,
			    uint32_t recv_wr, uint32_t sge, uint32_t inline_len,
			    int sig_all, struct ibv_qp_cap *cap_out)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = cq;
	ia.qp_type = type;
	ia.sq_sig_all = sig_all;
	ia.cap.max_send_wr = send_wr;
	ia.cap.max_recv_wr = recv_wr;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = sge;
	ia.cap.max_inline_data = inline_len;
	qp = ibv_create_qp(n->pd, &ia);
	if (qp && cap_out)
		*cap_out = ia.cap;
	return qp;
}

int cf_to_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr a;
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = VU_PORT;
	if (qp->qp_type == IBV_QPT_UD) {
		a.qkey = CF_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = access;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return ibv_modify_qp(qp, &a, mask);
}

/*
 * The node resolves the peer's GID while its links come up; on a loaded
 * machine that can outlast one resolve_ms, which is not what is tested
 * here: try again, a few times.
 */
int cf_to_rtr(struct cf_node *n, struct ibv_qp *qp, uint32_t dest_qpn,
	      uint32_t rq_psn)
{
	return cf_to_rtr_granting(n, qp, dest_qpn, rq_psn, -1);
}

int cf_to_rtr_granting(struct cf_node *n, struct ibv_qp *qp,
		       uint32_t dest_qpn, uint32_t rq_psn, int dest_rd)
{
	struct vu_dest peer;
	struct ibv_qp_attr a;
	int mask, rc = 0, attempt;

	if (qp->qp_type == IBV_QPT_UD) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTR;
		return ibv_modify_qp(qp, &a, IBV_QP_STATE);
	}
	memset(&peer, 0, sizeof(peer));
	peer.qpn = dest_qpn;
	peer.psn = rq_psn;
	peer.gid = n->peer_gid;
	for (attempt = 1; attempt <= 3; attempt++) {
		mask = vu_rtr_attr(&a, &peer, n->mtu);
		a.min_rnr_timer = 1;	/* 0.01 ms: RNR cases end fast */
		if (dest_rd >= 0)
			a.max_dest_rd_atomic = (uint8_t)dest_rd;
		if (qp->qp_type == IBV_QPT_UC)
			mask &= ~(IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER);
		rc = ibv_modify_qp(qp, &a, mask);
		if (rc != EHOSTUNREACH)
			break;
		cf_note("RTR to the peer failed EHOSTUNREACH (attempt %d of 3)",
			attempt);
	}
	return rc;
}

int cf_rtr_to_rts(struct ibv_qp *qp, uint32_t sq_psn, uint8_t rnr_retry)
{
	struct ibv_qp_attr a;
	int mask;

	if (qp->qp_type != IBV_QPT_RC) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = sq_psn;
		return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}
	mask = vu_rts_attr(&a, sq_psn, 14, 7);	/* 67 ms, 7 retries */
	a.rnr_retry = rnr_retry;
	return ibv_modify_qp(qp, &a, mask);
}

int cf_to_rts(struct cf_node *n, struct ibv_qp *qp, uint32_t dest_qpn,
	      uint32_t rq_psn, uint32_t sq_psn, uint8_t rnr_retry)
{
	int rc = cf_to_init(qp, IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE |
					(qp->qp_type == IBV_QPT_RC
						 ? IBV_ACCESS_REMOTE_READ
						 : 0));

	if (!rc)
		rc = cf_to_rtr(n, qp, dest_qpn, rq_psn);
	if (!rc)
		rc = cf_rtr_to_rts(qp, sq_psn, rnr_retry);
	return rc;
}

struct ibv_ah *cf_peer_ah(struct cf_node *n)
{
	struct ibv_ah_attr ah;

	memset(&ah, 0, sizeof(ah));
	ah.is_global = 1;
	ah.grh.dgid = n->peer_gid;
	ah.grh.sgid_index = VU_GID_INDEX;
	ah.grh.hop_limit = 64;
	ah.port_num = VU_PORT;
	return ibv_create_ah(n->pd, &ah);
}

/* ---- device and port ---- */

static void positive(const char *name, uint64_t v)
{
	char detail[64];

	snprintf(detail, sizeof(detail), "it is %llu", (unsigned long long)v);
	cf_report(v > 0, detail, "query_device: %s > 0", name);
}

static void device_checks(struct cf_node *n)
{
	struct ibv_device_attr *d = &n->dev;
	struct ibv_device_attr_ex ex;
	char detail[160];
	int rc;

#define POSITIVE(f) positive(#f, (uint64_t)d->f)
	POSITIVE(max_qp);
	POSITIVE(max_qp_wr);
	POSITIVE(max_sge);
	POSITIVE(max_sge_rd);
	POSITIVE(max_cq);
	POSITIVE(max_cqe);
	POSITIVE(max_mr);
	POSITIVE(max_mr_size);
	POSITIVE(max_pd);
	POSITIVE(max_qp_rd_atom);
	POSITIVE(max_qp_init_rd_atom);
	POSITIVE(max_srq);
	POSITIVE(max_srq_wr);
	POSITIVE(max_srq_sge);
	POSITIVE(max_ah);
	POSITIVE(max_pkeys);
	POSITIVE(max_mcast_grp);
	POSITIVE(max_mcast_qp_attach);
	POSITIVE(node_guid);
	POSITIVE(vendor_id);	/* (0 is "no device" to rdma-core's tests) */
#undef POSITIVE
	snprintf(detail, sizeof(detail), "max_res_rd_atom %d, "
		 "max_qp_rd_atom %d", d->max_res_rd_atom, d->max_qp_rd_atom);
	cf_report(d->max_res_rd_atom >= d->max_qp_rd_atom, detail,
		  "query_device: max_res_rd_atom >= max_qp_rd_atom");
	snprintf(detail, sizeof(detail), "total %d, per group %d",
		 d->max_total_mcast_qp_attach, d->max_mcast_qp_attach);
	cf_report(d->max_total_mcast_qp_attach >= d->max_mcast_qp_attach,
		  detail, "query_device: max_total_mcast_qp_attach >= "
		  "max_mcast_qp_attach");
	/* Atomics work on srnic (tests/e2e/atomics.c): the device must not
	 * say IBV_ATOMIC_NONE. */
	snprintf(detail, sizeof(detail), "atomic_cap %d", d->atomic_cap);
	cf_report(d->atomic_cap == IBV_ATOMIC_HCA ||
			  d->atomic_cap == IBV_ATOMIC_GLOB,
		  detail, "query_device: atomic_cap is HCA or GLOB");
	snprintf(detail, sizeof(detail), "%u", d->phys_port_cnt);
	cf_report(d->phys_port_cnt == 1, detail,
		  "query_device: phys_port_cnt is 1");
	snprintf(detail, sizeof(detail), "0x%llx",
		 (unsigned long long)d->page_size_cap);
	cf_report(d->page_size_cap & 4096, detail,
		  "query_device: page_size_cap includes 4 KiB");
	cf_report(d->fw_ver[0] != 0, "empty", "query_device: fw_ver is set");
	/* srnic answers a SEND with no receive with an RNR NAK. */
	cf_report(d->device_cap_flags & IBV_DEVICE_RC_RNR_NAK_GEN, NULL,
		  "query_device: device_cap_flags has RC_RNR_NAK_GEN");

	memset(&ex, 0, sizeof(ex));
	rc = ibv_query_device_ex(n->ctx, NULL, &ex);
	cf_report(rc == 0 && !memcmp(&ex.orig_attr, d, sizeof(*d)),
		  rc ? cf_err(rc) : "orig_attr differs",
		  "query_device_ex: orig_attr is what query_device says");
	snprintf(detail, sizeof(detail), "%u", ex.phys_port_cnt_ex);
	cf_report(rc == 0 && ex.phys_port_cnt_ex == d->phys_port_cnt, detail,
		  "query_device_ex: phys_port_cnt_ex is phys_port_cnt");
}

/* ::ffff:a.b.c.d with a.b.c.d = ipv4 (network order)? */
static int gid_is_v4(const union ibv_gid *g, uint32_t ipv4)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0,
					   0, 0, 0xff, 0xff};

	return !memcmp(g->raw, prefix, 12) && !memcmp(g->raw + 12, &ipv4, 4);
}

static void port_checks(struct cf_node *n, uint32_t my_ipv4)
{
	struct ibv_port_attr *p = &n->port, other;
	struct ibv_gid_entry ge;
	union ibv_gid g;
	char detail[160], s[64];
	uint16_t pkey = 0;
	int rc;

	snprintf(detail, sizeof(detail), "state %d", p->state);
	cf_report(p->state == IBV_PORT_ACTIVE, detail,
		  "query_port: port 1 is ACTIVE with both nodes up");
	snprintf(detail, sizeof(detail), "link_layer %d", p->link_layer);
	cf_report(p->link_layer == IBV_LINK_LAYER_ETHERNET, detail,
		  "query_port: link_layer is Ethernet");
	snprintf(detail, sizeof(detail), "active_mtu %d, max_mtu %d",
		 p->active_mtu, p->max_mtu);
	cf_report(p->active_mtu >= IBV_MTU_256 &&
			  p->active_mtu <= p->max_mtu &&
			  p->max_mtu <= IBV_MTU_4096,
		  detail, "query_port: 256 <= active_mtu <= max_mtu <= 4096");
	snprintf(detail, sizeof(detail), "gid_tbl_len %d, pkey_tbl_len %u",
		 p->gid_tbl_len, p->pkey_tbl_len);
	cf_report(p->gid_tbl_len >= 2 && p->pkey_tbl_len >= 1, detail,
		  "query_port: gid_tbl_len >= 2 and pkey_tbl_len >= 1");
	snprintf(detail, sizeof(detail), "%u", p->max_msg_sz);
	cf_report(p->max_msg_sz >= 1u << 31, detail,
		  "query_port: max_msg_sz >= 2^31 (the RC message limit)");
	rc = ibv_query_port(n->ctx, 2, &other);
	cf_report(rc != 0, "succeeded", "query_port of port 2 (the device "
		  "has one) fails");

	rc = ibv_query_gid(n->ctx, VU_PORT, 0, &g);
	cf_report(rc == 0 && g.raw[0] == 0xfe && (g.raw[1] & 0xc0) == 0x80,
		  rc ? cf_err(rc) : vu_gid_str(&g, s, sizeof(s)),
		  "query_gid: index 0 is a link-local GID");
	cf_report(gid_is_v4(&n->gid, my_ipv4),
		  vu_gid_str(&n->gid, s, sizeof(s)),
		  "query_gid: index 1 is ::ffff:<the node's IPv4 address>");
	rc = ibv_query_gid(n->ctx, VU_PORT, p->gid_tbl_len, &g);
	cf_report(rc != 0, "succeeded",
		  "query_gid at index gid_tbl_len fails");
	memset(&ge, 0, sizeof(ge));
	rc = ibv_query_gid_ex(n->ctx, VU_PORT, VU_GID_INDEX, &ge, 0);
	snprintf(detail, sizeof(detail), "returned %s, type %u", cf_err(rc),
		 ge.gid_type);
	cf_report(rc == 0 && ge.gid_type == IBV_GID_TYPE_ROCE_V2 &&
			  !memcmp(ge.gid.raw, n->gid.raw, 16),
		  detail, "query_gid_ex: index 1 is a RoCE v2 GID, the same");
	rc = ibv_query_pkey(n->ctx, VU_PORT, 0, &pkey);
	snprintf(detail, sizeof(detail), "returned %s, pkey 0x%x", cf_err(rc),
		 ntohs(pkey));
	cf_report(rc == 0 && ntohs(pkey) == 0xffff, detail,
		  "query_pkey: index 0 is the default P_Key 0xffff");
}

/* ---- main ---- */

static void usage(void)
{
	fprintf(stderr, "usage: conformance [-p PORT] [HOST]\n");
	exit(2);
}

/* The address our end of the TCP connection has: the node's own. */
static uint32_t local_ipv4(int fd)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);

	memset(&sin, 0, sizeof(sin));
	if (getsockname(fd, (struct sockaddr *)&sin, &len))
		return 0;
	return sin.sin_addr.s_addr;
}

int main(int argc, char **argv)
{
	struct vu_dest mine[16], theirs[16];
	const char *host = NULL;
	struct cf_remote *r;
	struct cf_node n;
	unsigned nd;
	int port = 18515 + 86, c, fd, rc;
	uint64_t t0 = vu_now_ms();

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "p:")) != -1) {
		if (c != 'p')
			usage();
		port = atoi(optarg);
	}
	if (optind < argc)
		host = argv[optind++];
	if (optind < argc)
		usage();

	memset(&n, 0, sizeof(n));
	n.server = !host;
	n.ctx = vu_open_first();
	if (!n.ctx)
		cf_die("open the device");
	n.pd = ibv_alloc_pd(n.ctx);
	if (!n.pd)
		cf_die("alloc_pd");
	rc = ibv_query_device(n.ctx, &n.dev);
	cf_report(rc == 0, cf_err(rc), "query_device succeeds");
	if (rc)
		cf_die("query_device");
	if (ibv_query_gid(n.ctx, VU_PORT, VU_GID_INDEX, &n.gid))
		cf_die("query_gid");
	if (ibv_query_port(n.ctx, VU_PORT, &n.port))
		cf_die("query_port");
	n.mtu = n.port.active_mtu;

	r = cf_remote_setup(&n);
	cf_remote_dests(r, mine, &nd);
	fd = vu_tcp_connect(host, port, CF_TCP_MS);
	if (fd < 0)
		cf_die("tcp connection to the peer");
	if (vu_exchange(fd, mine, theirs, nd, CF_TCP_MS))
		cf_die("exchange of QPs with the peer");
	n.peer_gid = theirs[0].gid;
	cf_remote_connect(r, theirs);
	if (vu_sync(fd, CF_TCP_MS))
		cf_die("sync with the peer");

	/* Both engines run and both pairs connected: the links are up. */
	rc = ibv_query_port(n.ctx, VU_PORT, &n.port);
	cf_report(rc == 0, cf_err(rc), "query_port succeeds");
	device_checks(&n);
	port_checks(&n, local_ipv4(fd));

	if (!n.server) {
		cf_state_checks(&n);
		cf_limit_checks(&n);
	}
	/* The server waits here while the client walks on its own. */
	if (vu_sync(fd, 120000))
		cf_die("sync with the peer before the error cases");
	if (n.server)
		cf_remote_server(r);
	else
		cf_remote_client(r);
	if (vu_sync(fd, 60000))
		cf_die("sync with the peer after the error cases");
	if (n.server)
		cf_remote_server_after(r);
	/* Nobody tears down while the other still counts on its QPs. */
	if (vu_sync(fd, 60000))
		cf_die("final sync with the peer");
	close(fd);

	cf_remote_free(r);
	rc = ibv_dealloc_pd(n.pd);
	cf_report(rc == 0, cf_err(rc), "dealloc_pd after everything is "
		  "destroyed succeeds");
	ibv_close_device(n.ctx);
	cf_note("%s took %llu ms", n.server ? "server" : "client",
		(unsigned long long)(vu_now_ms() - t0));
	printf("# %u checks, %u failed\n", n_checks, n_failed);
	return n_failed ? 1 : 0;
}
