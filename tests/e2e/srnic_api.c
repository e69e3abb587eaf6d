/* SPDX-License-Identifier: MIT */
/*
 * srnic_api: srnic's own verbs (include/srnic.h), linked from libsrnic as
 * a program would (tests/e2e/01-devinfo.sh).
 *
 *   srnic_api NODE NPORTS
 *
 *  1. srnic_is_srnic_device says yes for srnic0, no for a device of
 *     another provider (a stand-in whose provider ops are not srnic's).
 *  2. srnic_query_device names the node, its ports and its address (GID
 *     1's IPv4), says the datapath does not run before the first CQ and
 *     runs after it, with every port up; EINVAL for an unknown comp_mask,
 *     EOPNOTSUPP for another provider's context.
 *  3. The library the program linked is the provider libibverbs loaded:
 *     one copy of it in the process.
 *  4. Conditional queues' calls and their errors: a queue's counts start
 *     at 0 and srnic_condq_set sets them; posting for a queue from a UD
 *     QP, from a QP of another PD, or with an unknown condition is EINVAL
 *     (and names the WR); a process has 64 queues at most (ENOMEM past
 *     them); another provider's PD is EOPNOTSUPP.  (What they do on the
 *     wire: tests/e2e/38-conditional.sh.)
 *  5. Third-party RDMA's calls and their errors: srnic_post_3p refuses a
 *     UD QP, one QP for both ends, unknown flags, a range that wraps, a
 *     WRITE over 2 GiB (EINVAL) and QPs not in RTS (EINVAL, as
 *     ibv_post_send); srnic_mr_allow_third_party a region without remote
 *     read (EINVAL) and takes one with it; another provider's objects are
 *     EOPNOTSUPP.  (On the wire: tests/e2e/40-third-party.sh.)
 *  6. The registration cache's calls on another provider's objects:
 *     EOPNOTSUPP.  (Their work and other errors: 41-mr-cache.sh.)
 *  7. The protection table's calls: another provider's objects are
 *     EOPNOTSUPP; a lookup without a name, GID or answer, or with a GID
 *     other than ::ffff:IPv4, EINVAL; of a node nobody knows, ENOENT.
 *     (On the wire: 43-published-keys.sh.)
 *  8. Half-RDMA's sending half through the loopback: a WRITE gathered
 *     from three pieces of unregistered memory lands byte for byte; its
 *     errors (another provider's QP, unknown flags, a wrapping range, a
 *     message longer than the staging ring).
 *  9. failback=manual's calls (srnic_svc_freeze, _thaw, _handover):
 *     another provider's context is EOPNOTSUPP, a service this node is no
 *     member of ENOENT.  (Their work: tests/e2e/36-failover-qps.sh.)
 * Prints "ok"/"not ok" lines and "# N checks, M failed"; exits 1 on any
 * failure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srnic.h"
#include "verbs_util.h"

/* Executable mappings of libsrnic.so.1 (the library, not the preload
 * library beside it) in this process. */
static unsigned srnic_text_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, " r-xp ") && strstr(line, "/libsrnic.so."))
			n++;
	fclose(f);
	return n;
}

/* 4.: conditional queues' calls (other: another provider's context) */
static void condq_api(struct ibv_context *ctx, struct ibv_context *other)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx), *pd2 = ibv_alloc_pd(ctx);
	struct ibv_pd opd = {.context = other};
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp_init_attr ua = {.send_cq = cq, .recv_cq = cq,
				      .qp_type = IBV_QPT_UD,
				      .cap = {.max_send_wr = 2, .max_recv_wr = 2,
					      .max_send_sge = 1,
					      .max_recv_sge = 1}};
	struct srnic_condq *q, *more[64];
	struct srnic_condq_attr qa = {1, 1, 1};
	struct ibv_send_wr wr = {.opcode = IBV_WR_SEND}, *bad = NULL;
	struct ibv_qp *ud, *rc2;
	unsigned n = 0;
	int rc;

	if (!pd || !pd2 || !cq)
		return;
	ud = ibv_create_qp(pd, &ua);
	rc2 = vu_create_rc_qp(pd2, cq, 2, 2, 1, NULL);
	errno = 0;
	vu_check(!srnic_condq_create(&opd) && errno == EOPNOTSUPP, NULL,
		 "srnic_condq_create on another provider's PD: EOPNOTSUPP");
	q = srnic_condq_create(pd);
	vu_check(q && !srnic_condq_query(q, &qa) && !qa.count && !qa.failed &&
			 !qa.fired,
		 vu_err_str(errno), "srnic_condq_create: a queue, its counts 0");
	if (!q || !ud || !rc2)
		return;
	rc = srnic_condq_set(q, 5);
	if (!rc)
		rc = srnic_condq_query(q, &qa);
	vu_check(!rc && qa.count == 5, vu_err_str(rc),
		 "srnic_condq_set: count 5 (%llu)", (unsigned long long)qa.count);
	rc = srnic_post_send_counted(ud, &wr, q, &bad);
	vu_check(rc == EINVAL && bad == &wr, vu_err_str(rc),
		 "a component on a UD QP: EINVAL, the WR named");
	rc = srnic_post_send_counted(rc2, &wr, q, &bad);
	vu_check(rc == EINVAL, vu_err_str(rc),
		 "a component on a QP of another PD: EINVAL");
	rc = srnic_post_cond(rc2, &wr, q, (enum srnic_cond_op)7, 1, &bad);
	vu_check(rc == EINVAL, vu_err_str(rc), "an unknown condition: EINVAL");
	vu_check(srnic_condq_destroy(NULL) == EINVAL &&
			 srnic_condq_set(NULL, 0) == EINVAL,
		 NULL, "a queue that is none: EINVAL");
	while (n < 64 && (more[n] = srnic_condq_create(pd)))
		n++;
	vu_check(n == 63 && errno == ENOMEM, vu_err_str(errno),
		 "64 queues a process, then ENOMEM (%u more made)", n);
	while (n)
		srnic_condq_destroy(more[--n]);
	srnic_condq_destroy(q);
	ibv_destroy_qp(ud);
	ibv_destroy_qp(rc2);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd2);
	ibv_dealloc_pd(pd);
}

/* 5.: third-party RDMA's calls (other: another provider's context) */
static void tp_api(struct ibv_context *ctx, struct ibv_context *other)
{
	static uint8_t buf[4096];
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = {.send_cq = cq, .recv_cq = cq,
				      .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 2, .max_recv_wr = 2,
					      .max_send_sge = 1,
					      .max_recv_sge = 1}};
	struct ibv_qp oqp = {.context = other, .qp_type = IBV_QPT_RC};
	struct srnic_3p_wr wr = {.length = 4096, .src_addr = 4096,
				 .dst_addr = 8192};
	struct ibv_mr *w, *r, omr = {.context = other};
	struct ibv_qp *a, *b, *ud;

	if (!pd || !cq)
		return;
	a = ibv_create_qp(pd, &qa);
	b = ibv_create_qp(pd, &qa);
	qa.qp_type = IBV_QPT_UD;
	ud = ibv_create_qp(pd, &qa);
	if (!a || !b || !ud)
		return;
	vu_check(srnic_post_3p(&oqp, &oqp, &wr) == EOPNOTSUPP &&
			 srnic_post_3p(NULL, b, &wr) == EOPNOTSUPP,
		 NULL, "srnic_post_3p, another provider's QPs: EOPNOTSUPP");
	vu_check(srnic_post_3p(ud, b, &wr) == EINVAL &&
			 srnic_post_3p(a, a, &wr) == EINVAL &&
			 srnic_post_3p(a, b, NULL) == EINVAL,
		 NULL, "srnic_post_3p: a UD QP, one QP for both: EINVAL");
	wr.send_flags = IBV_SEND_INLINE;
	vu_check(srnic_post_3p(a, b, &wr) == EINVAL, NULL,
		 "srnic_post_3p: IBV_SEND_INLINE: EINVAL");
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.dst_addr = UINT64_MAX - 100;
	vu_check(srnic_post_3p(a, b, &wr) == EINVAL, NULL,
		 "srnic_post_3p: a target range that wraps: EINVAL");
	wr.dst_addr = 8192;
	wr.length = (1u << 31) + 1;
	vu_check(srnic_post_3p(a, b, &wr) == EINVAL, NULL,
		 "srnic_post_3p: over 2 GiB: EINVAL");
	wr.length = 4096;
	vu_check(srnic_post_3p(a, b, &wr) == EINVAL, NULL,
		 "srnic_post_3p: a QP in RESET: EINVAL");
	w = ibv_reg_mr(pd, buf, sizeof(buf),
		       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	r = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_READ);
	vu_check(w && r && srnic_mr_allow_third_party(w) == EINVAL &&
			 srnic_mr_allow_third_party(r) == 0 &&
			 srnic_mr_allow_third_party(&omr) == EOPNOTSUPP,
		 NULL, "srnic_mr_allow_third_party: without remote read EINVAL, "
		 "with it 0, another provider's EOPNOTSUPP");
	if (w)
		ibv_dereg_mr(w);
	if (r)
		ibv_dereg_mr(r);
	ibv_destroy_qp(ud);
	ibv_destroy_qp(b);
	ibv_destroy_qp(a);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

/* 6.: the registration cache's calls, another provider's objects */
static void cache_api(struct ibv_context *other)
{
	static uint8_t buf[64];
	struct ibv_pd opd = {.context = other};
	struct ibv_mr omr = {.context = other};
	struct srnic_mr_cache_attr ca;

	errno = 0;
	vu_check(!srnic_mr_cache_get(&opd, buf, sizeof(buf), 0) &&
			 errno == EOPNOTSUPP &&
			 srnic_mr_cache_put(&omr) == EOPNOTSUPP &&
			 srnic_mr_cache_query(other, &ca) == EOPNOTSUPP,
		 NULL, "the registration cache, another provider's objects: "
		 "EOPNOTSUPP");
}

/* 7.: the protection table's calls (other: another provider's context) */
static void tpt_api(struct ibv_context *ctx, struct ibv_context *other)
{
	struct ibv_mr omr = {.context = other};
	struct srnic_published_mr out;
	union ibv_gid gid = {.raw = {[10] = 0xff, [11] = 0xff, [15] = 1}};

	vu_check(srnic_mr_publish(&omr, 7) == EOPNOTSUPP &&
			 srnic_mr_unpublish(&omr) == EOPNOTSUPP &&
			 srnic_mr_lookup(other, &gid, 7, &out) == EOPNOTSUPP,
		 NULL, "the protection table, another provider's objects: "
		 "EOPNOTSUPP");
	vu_check(srnic_mr_lookup(ctx, &gid, 0, &out) == EINVAL &&
			 srnic_mr_lookup(ctx, NULL, 7, &out) == EINVAL &&
			 srnic_mr_lookup(ctx, &gid, 7, NULL) == EINVAL,
		 NULL, "srnic_mr_lookup: name 0, no GID or no answer: EINVAL");
	gid.raw[10] = 0;
	vu_check(srnic_mr_lookup(ctx, &gid, 7, &out) == EINVAL, NULL,
		 "srnic_mr_lookup: a GID not ::ffff:IPv4: EINVAL");
	gid.raw[10] = 0xff;
	vu_check(srnic_mr_lookup(ctx, &gid, 7, &out) == ENOENT, NULL,
		 "srnic_mr_lookup: a node nobody knows: ENOENT");
}

/* 9.: failback=manual's calls: another provider's context, a service
 * this node is no member of. */
static void svc_manual_api(struct ibv_context *ctx, struct ibv_context *other)
{
	const uint32_t nosvc = 0x0a3700fe;	/* (10.55.0.254) */

	vu_check(srnic_svc_freeze(other, nosvc) == -EOPNOTSUPP &&
			 srnic_svc_thaw(other, nosvc) == -EOPNOTSUPP &&
			 srnic_svc_handover(other, nosvc) == EOPNOTSUPP,
		 NULL, "freeze, thaw, handover: another provider's context: "
		 "EOPNOTSUPP");
	vu_check(srnic_svc_freeze(ctx, nosvc) == -ENOENT &&
			 srnic_svc_thaw(ctx, nosvc) == -ENOENT &&
			 srnic_svc_handover(ctx, nosvc) == ENOENT,
		 NULL, "freeze, thaw, handover: a service of no member here: "
		 "ENOENT");
}

/* 8.: half-RDMA's sending half, between two QPs of this program through
 * the node's own GID (the loopback): a WRITE gathered from three pieces
 * of unregistered memory lands byte for byte; the errors. */
static void fifo_write_api(struct ibv_context *ctx, struct ibv_context *other,
			   const union ibv_gid *gid)
{
	enum { A = 1000, B = 70000, C = 5, ALL = A + B + C };
	static uint8_t pa[A], pb[B], pc[C], want[ALL], got[ALL];
	struct iovec iov[3] = {{pa, A}, {pb, B}, {pc, C}};
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 8, NULL, NULL, 0) : NULL;
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, got, ALL,
					    IBV_ACCESS_LOCAL_WRITE |
						    IBV_ACCESS_REMOTE_WRITE)
			       : NULL;
	struct ibv_qp oqp = {.context = other}, *qp[2];
	struct srnic_fifo_write_wr wr = {.wr_id = 8, .iov = iov, .iovcnt = 3,
					 .send_flags = IBV_SEND_SIGNALED};
	struct ibv_wc wc;
	int rc;

	if (!mr || vu_loop_pair(pd, cq, gid, IBV_ACCESS_REMOTE_WRITE, qp))
		exit(2);
	vu_fill(want, ALL, 8);
	memcpy(pa, want, A);
	memcpy(pb, want + A, B);
	memcpy(pc, want + A + B, C);
	wr.rkey = mr->rkey;
	wr.remote_addr = (uintptr_t)got;
	rc = srnic_post_fifo_write(qp[0], &wr);
	memset(pb, 0, B);	/* (copied: the buffers are free at once) */
	vu_check(!rc && vu_poll(cq, &wc, 15000) == 1 &&
			 wc.status == IBV_WC_SUCCESS && wc.wr_id == 8 &&
			 wc.opcode == IBV_WC_RDMA_WRITE &&
			 !memcmp(got, want, ALL),
		 vu_err_str(rc), "srnic_post_fifo_write: %u bytes from three "
		 "unregistered pieces, landed whole", ALL);
	vu_check(srnic_post_fifo_write(&oqp, &wr) == EOPNOTSUPP, NULL,
		 "srnic_post_fifo_write, another provider's QP: EOPNOTSUPP");
	wr.send_flags = IBV_SEND_INLINE;
	vu_check(srnic_post_fifo_write(qp[0], &wr) == EINVAL, NULL,
		 "srnic_post_fifo_write: IBV_SEND_INLINE: EINVAL");
	wr.send_flags = 0;
	wr.remote_addr = UINT64_MAX - 10;
	vu_check(srnic_post_fifo_write(qp[0], &wr) == EINVAL, NULL,
		 "srnic_post_fifo_write: a range that wraps: EINVAL");
	wr.remote_addr = (uintptr_t)got;
	iov[1].iov_len = 9u << 20;	/* (past the 8 MiB ring) */
	vu_check(srnic_post_fifo_write(qp[0], &wr) == EINVAL, NULL,
		 "srnic_post_fifo_write: longer than the staging ring: EINVAL");
	ibv_destroy_qp(qp[0]);
	ibv_destroy_qp(qp[1]);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

int main(int argc, char **argv)
{
	struct srnic_device_attr a = {0};
	/* another provider's device and context: zeroes, whose provider
	 * ops (after the ibv_device) are not srnic's */
	static uint64_t fake[512];
	struct ibv_context other = {.device = (struct ibv_device *)fake};
	struct ibv_context *ctx;
	union ibv_gid gid;
	struct ibv_cq *cq;
	uint32_t all, ipv4;
	unsigned nports;
	int rc;

	if (argc != 3)
		return fprintf(stderr, "usage: srnic_api NODE NPORTS\n"), 2;
	nports = (unsigned)atoi(argv[2]);
	all = (1u << nports) - 1;
	ctx = vu_open_first();
	if (!ctx || ibv_query_gid(ctx, VU_PORT, VU_GID_INDEX, &gid))
		return 2;
	ipv4 = (uint32_t)gid.raw[12] << 24 | (uint32_t)gid.raw[13] << 16 |
	       (uint32_t)gid.raw[14] << 8 | gid.raw[15];

	vu_check(srnic_is_srnic_device(ctx->device) &&
			 !srnic_is_srnic_device(other.device),
		 NULL, "srnic_is_srnic_device: srnic0 yes, another's no");
	rc = srnic_query_device(ctx, &a);
	/* (an IPv6 node's ipv4 is its id, in 240.0.0.0/4) */
	vu_check(!rc && !strcmp(a.node, argv[1]) && a.nports == nports &&
			 (gid.raw[10] == 0xff ? a.ipv4 == ipv4
					      : a.ipv4 >> 28 == 0xf) &&
			 a.mtu >= 256 && !a.running &&
			 a.ports_up == all,
		 vu_err_str(rc), "srnic_query_device: node %s, %u ports, "
		 "mtu %u, not running yet", a.node, a.nports, a.mtu);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!cq)
		return 2;
	rc = srnic_query_device(ctx, &a);
	vu_check(!rc && a.running && a.ports_up == all, vu_err_str(rc),
		 "after the first CQ: running, ports up 0x%x%s (slot %u)",
		 a.ports_up, a.attached ? ", attached to srnicd" : "", a.slot);
	a.comp_mask = SRNIC_DEVICE_ATTR_IPV6;
	memset(a.ipv6, 0xee, sizeof(a.ipv6));
	rc = srnic_query_device(ctx, &a);
	vu_check(!rc && a.comp_mask == SRNIC_DEVICE_ATTR_IPV6 &&
			 a.has_ipv6 == (gid.raw[10] != 0xff) &&
			 (a.has_ipv6 ? !memcmp(a.ipv6, gid.raw, 16)
				     : !a.ipv6[0] && !a.ipv6[15]),
		 vu_err_str(rc), "srnic_query_device's IPv6 part: %s node",
		 a.has_ipv6 ? "an IPv6" : "an IPv4");
	a.comp_mask = 1ull << 1;
	vu_check(srnic_query_device(ctx, &a) == EINVAL, NULL,
		 "an unknown comp_mask: EINVAL");
	a.comp_mask = 0;
	vu_check(srnic_query_device(&other, &a) == EOPNOTSUPP, NULL,
		 "another provider's context: EOPNOTSUPP");
	vu_check(srnic_text_maps() == 1, NULL,
		 "libsrnic and the provider libibverbs loaded are one copy "
		 "(%u mappings of its code)", srnic_text_maps());
	condq_api(ctx, &other);
	tp_api(ctx, &other);
	cache_api(&other);
	tpt_api(ctx, &other);
	fifo_write_api(ctx, &other, &gid);
	svc_manual_api(ctx, &other);
	ibv_destroy_cq(cq);
	ibv_close_device(ctx);
	printf("# %u checks, %u failed\n", vu_checks, vu_failed);
	return vu_failed ? 1 : 0;
}
