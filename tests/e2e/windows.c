/* SPDX-License-Identifier: MIT */
/*
 * windows: memory windows, type 1 and type 2, between QPs of one program
 * connected through the node's own GID (the loopback: every access is a
 * packet the responder checks, as from another node).  The region they
 * lie in is registered with local write and MW_BIND only, so every remote
 * access below goes through a window or fails.
 *
 *  1. The device says MEM_WINDOW and MEM_WINDOW_TYPE_2B, and max_mw.
 *  2. The region's own key gives REM_ACCESS_ERR.
 *  3. Type 1: ibv_bind_mw steps the window's key; a WRITE through it lands,
 *     a READ brings it back; a byte past the window gives REM_ACCESS_ERR
 *     and writes nothing; unbound (a bind of length 0), the old key gives
 *     REM_ACCESS_ERR.
 *  4. Type 2, bound with IBV_WR_BIND_MW on the responder's QP: a WRITE
 *     lands; from a QP of another pair the same key gives REM_ACCESS_ERR;
 *     a local invalidate, and (bound again) a SEND with invalidate whose
 *     receive says IBV_WC_WITH_INV, each leave the key failing.
 *  5. Deregistering a region with a window bound fails EBUSY; a bind to a
 *     region without MW_BIND completes with MW_BIND_ERR; a window of type
 *     3 is refused; a type 2 window whose QP is destroyed is unbound.
 * Prints "ok"/"not ok" lines and "# N checks, M failed"; exits 1 on any
 * failure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_util.h"

#define POLL_MS 15000
#define MR_LEN 16384
#define WIN_OFF 4096
#define WIN_LEN 4096

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static union ibv_gid gid;
static uint8_t *region, *src, *back;
static struct ibv_mr *mr, *msrc, *mback;

static void die(const char *what)
{
	fprintf(stderr, "windows: %s (errno %d)\n", what, errno);
	exit(2);
}

/* A fresh loopback pair: qp[0] posts, qp[1] is the target's side. */
static void pair(struct ibv_qp *qp[2])
{
	if (vu_loop_pair(pd, cq, &gid,
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, qp))
		die("QP pair");
}

/* One signaled RDMA op of len bytes from buf (lkey) to (raddr, rkey), and
 * its completion's status (-1: none came). */
static int rdma(struct ibv_qp *qp, enum ibv_wr_opcode op, void *buf,
		uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {(uintptr_t)buf, len, lkey};
	struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED}, *bad;
	struct ibv_wc wc;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(qp, &wr, &bad))
		die("post");
	return vu_poll(cq, &wc, POLL_MS) == 1 ? (int)wc.status : -1;
}

/* One completion's status and opcode (-1: none). */
static int wait_wc(struct ibv_wc *wc)
{
	return vu_poll(cq, wc, POLL_MS) == 1 ? (int)wc->status : -1;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed);
}

/* The region holds its canary (0x5a) everywhere but [off, off + n),
 * which holds src's first n bytes. */
static int region_is(size_t off, size_t n)
{
	for (size_t i = 0; i < MR_LEN; i++)
		if (region[i] != (i >= off && i < off + n ? src[i - off] : 0x5a))
			return 0;
	return 1;
}

static void device_caps(void)
{
	struct ibv_device_attr a;

	if (ibv_query_device(ctx, &a))
		die("query_device");
	vu_check((a.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
			 (a.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) &&
			 a.max_mw > 0,
		 NULL, "the device offers windows of type 1 and 2B (max_mw %d)",
		 a.max_mw);
}

static void type1(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind bind = {.wr_id = 71,
				   .send_flags = IBV_SEND_SIGNALED};
	struct ibv_qp *qp[2];
	struct ibv_wc wc;
	uint32_t key0, key1;

	vu_check(mw != NULL, NULL, "alloc_mw type 1");
	if (!mw)
		return;
	pair(qp);
	vu_check(rdma(qp[0], IBV_WR_RDMA_WRITE, src, 64, msrc->lkey,
		      (uintptr_t)region, mr->rkey) == IBV_WC_REM_ACCESS_ERR &&
			 region_is(0, 0),
		 NULL, "the region's own key (no remote right): REM_ACCESS_ERR");
	pair(qp);
	key0 = mw->rkey;
	bind.bind_info.mr = mr;
	bind.bind_info.addr = (uintptr_t)region + WIN_OFF;
	bind.bind_info.length = WIN_LEN;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
					 IBV_ACCESS_REMOTE_READ;
	vu_check(ibv_bind_mw(qp[1], mw, &bind) == 0 && wait_wc(&wc) == 0 &&
			 wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 71 &&
			 mw->rkey == ibv_inc_rkey(key0),
		 NULL, "ibv_bind_mw completes (BIND_MW) and steps the key");
	key1 = mw->rkey;
	vu_check(rdma(qp[0], IBV_WR_RDMA_WRITE, src, WIN_LEN, msrc->lkey,
		      (uintptr_t)region + WIN_OFF, key1) == 0 &&
			 region_is(WIN_OFF, WIN_LEN),
		 NULL, "a WRITE through the window lands, nothing outside it");
	memset(back, 0, WIN_LEN);
	vu_check(rdma(qp[0], IBV_WR_RDMA_READ, back, WIN_LEN, mback->lkey,
		      (uintptr_t)region + WIN_OFF, key1) == 0 &&
			 !memcmp(back, src, WIN_LEN),
		 NULL, "a READ through it brings the bytes back");
	vu_check(ibv_dereg_mr(mr) == EBUSY, NULL,
		 "deregistering the region under a bound window fails EBUSY");
	vu_check(rdma(qp[0], IBV_WR_RDMA_WRITE, src + 1, 64, msrc->lkey,
		      (uintptr_t)region + WIN_OFF + WIN_LEN - 63, key1) ==
				 IBV_WC_REM_ACCESS_ERR &&
			 region_is(WIN_OFF, WIN_LEN),
		 NULL, "a byte past the window: REM_ACCESS_ERR, nothing written");
	pair(qp);
	bind.bind_info.mr = NULL;
	bind.bind_info.addr = 0;
	bind.bind_info.length = 0;
	bind.bind_info.mw_access_flags = 0;
	vu_check(ibv_bind_mw(qp[1], mw, &bind) == 0 && wait_wc(&wc) == 0,
		 NULL, "unbinding (a bind of length 0) completes");
	vu_check(rdma(qp[0], IBV_WR_RDMA_WRITE, src + 2, 64, msrc->lkey,
		      (uintptr_t)region + WIN_OFF, key1) ==
				 IBV_WC_REM_ACCESS_ERR &&
			 region_is(WIN_OFF, WIN_LEN),
		 NULL, "then the window's key: REM_ACCESS_ERR, nothing written");
	vu_check(ibv_dealloc_mw(mw) == 0, NULL, "dealloc_mw");
}

/* Bind a type 2 window on qp (its responder's side) under key; the
 * completion's status. */
static int bind2(struct ibv_qp *qp, struct ibv_mw *mw, uint32_t key)
{
	struct ibv_send_wr wr = {.wr_id = 72, .opcode = IBV_WR_BIND_MW,
				 .send_flags = IBV_SEND_SIGNALED}, *bad;
	struct ibv_wc wc;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = key;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)region + WIN_OFF;
	wr.bind_mw.bind_info.length = WIN_LEN;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_post_send(qp, &wr, &bad))
		return -2;
	return wait_wc(&wc) == 0 && wc.opcode == IBV_WC_BIND_MW ? 0 : -1;
}

static void type2(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_qp *qp[2], *other[2];
	uint32_t key;
	struct ibv_wc wc;

	vu_check(mw != NULL, NULL, "alloc_mw type 2");
	if (!mw)
		return;
	memset(region, 0x5a, MR_LEN);
	pair(qp);
	key = ibv_inc_rkey(mw->rkey);
	vu_check(bind2(qp[1], mw, key) == 0, NULL,
		 "IBV_WR_BIND_MW binds it to the posting QP");
	vu_check(rdma(qp[0], IBV_WR_RDMA_WRITE, src, WIN_LEN, msrc->lkey,
		      (uintptr_t)region + WIN_OFF, key) == 0 &&
			 region_is(WIN_OFF, WIN_LEN),
		 NULL, "a WRITE through it from the peer of that QP lands");
	memset(region, 0x5a, MR_LEN);
	pair(other);
	vu_check(rdma(other[0], IBV_WR_RDMA_WRITE, src, 64, msrc->lkey,
		      (uintptr_t)region + WIN_OFF, key) ==
				 IBV_WC_REM_ACCESS_ERR &&
			 region_is(0, 0),
		 NULL, "through another QP: REM_ACCESS_ERR, nothing written");

	{	/* local invalidate, on the QP it is bound to */
		struct ibv_send_wr wr = {.wr_id = 73,
					 .opcode = IBV_WR_LOCAL_INV,
					 .send_flags = IBV_SEND_SIGNALED}, *bad;

		wr.invalidate_rkey = key;
		vu_check(ibv_post_send(qp[1], &wr, &bad) == 0 &&
				 wait_wc(&wc) == 0 &&
				 wc.opcode == IBV_WC_LOCAL_INV,
			 NULL, "a local invalidate of the window's key");
	}
	vu_check(rdma(qp[0], IBV_WR_RDMA_WRITE, src, 64, msrc->lkey,
		      (uintptr_t)region + WIN_OFF, key) ==
				 IBV_WC_REM_ACCESS_ERR &&
			 region_is(0, 0),
		 NULL, "then its key: REM_ACCESS_ERR, nothing written");

	pair(qp);
	key = ibv_inc_rkey(key);
	vu_check(bind2(qp[1], mw, key) == 0, NULL, "bound again, a new key");
	{	/* a SEND with invalidate from the peer */
		struct ibv_sge rs = {(uintptr_t)back, 64, mback->lkey},
			       ss = {(uintptr_t)src, 64, msrc->lkey};
		struct ibv_recv_wr rwr = {.wr_id = 74, .sg_list = &rs,
					  .num_sge = 1}, *rbad;
		struct ibv_send_wr wr = {.wr_id = 75, .sg_list = &ss,
					 .num_sge = 1,
					 .opcode = IBV_WR_SEND_WITH_INV,
					 .send_flags = IBV_SEND_SIGNALED}, *bad;
		int got_recv = 0, got_send = 0, i;

		wr.invalidate_rkey = key;
		if (ibv_post_recv(qp[1], &rwr, &rbad) ||
		    ibv_post_send(qp[0], &wr, &bad))
			die("post SEND with invalidate");
		for (i = 0; i < 2 && wait_wc(&wc) == 0; i++) {
			if (wc.wr_id == 74)
				got_recv = (wc.wc_flags & IBV_WC_WITH_INV) &&
					   wc.invalidated_rkey == key;
			else
				got_send = wc.wr_id == 75;
		}
		vu_check(got_recv && got_send, NULL,
			 "a SEND with invalidate of it: the receive says "
			 "IBV_WC_WITH_INV and the key");
	}
	vu_check(rdma(qp[0], IBV_WR_RDMA_WRITE, src, 64, msrc->lkey,
		      (uintptr_t)region + WIN_OFF, key) ==
				 IBV_WC_REM_ACCESS_ERR &&
			 region_is(0, 0),
		 NULL, "then its key: REM_ACCESS_ERR, nothing written");
	vu_check(ibv_dealloc_mw(mw) == 0, NULL, "dealloc_mw");
}

static void refusals(void)
{
	uint8_t *plain = calloc(1, 4096);
	struct ibv_mr *nobind = ibv_reg_mr(pd, plain, 4096,
					   IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind bind = {.wr_id = 76,
				   .send_flags = IBV_SEND_SIGNALED};
	struct ibv_qp *qp[2];
	struct ibv_wc wc;

	if (!plain || !nobind || !mw)
		die("refusals: setup");
	pair(qp);
	bind.bind_info.mr = nobind;
	bind.bind_info.addr = (uintptr_t)plain;
	bind.bind_info.length = 4096;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	vu_check(ibv_bind_mw(qp[1], mw, &bind) == 0 &&
			 wait_wc(&wc) == IBV_WC_MW_BIND_ERR,
		 NULL, "a bind in a region without MW_BIND: MW_BIND_ERR");
	errno = 0;
	vu_check(ibv_alloc_mw(pd, (enum ibv_mw_type)3) == NULL &&
			 errno == EINVAL,
		 NULL, "a window of type 3 is refused EINVAL");
	ibv_dealloc_mw(mw);
	ibv_dereg_mr(nobind);
	free(plain);
}

int main(void)
{
	ctx = vu_open_first();
	if (!ctx)
		return 2;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	region = malloc(MR_LEN);
	src = malloc(WIN_LEN);
	back = malloc(WIN_LEN);
	if (!pd || !cq || !region || !src || !back ||
	    ibv_query_gid(ctx, VU_PORT, VU_GID_INDEX, &gid))
		die("setup");
	memset(region, 0x5a, MR_LEN);
	fill(src, WIN_LEN, 3);
	mr = ibv_reg_mr(pd, region, MR_LEN,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	msrc = ibv_reg_mr(pd, src, WIN_LEN, IBV_ACCESS_LOCAL_WRITE);
	mback = ibv_reg_mr(pd, back, WIN_LEN, IBV_ACCESS_LOCAL_WRITE);
	vu_check(mr != NULL, NULL, "reg_mr with MW_BIND");
	if (!mr || !msrc || !mback)
		die("reg_mr");
	device_caps();
	type1();
	type2();
	refusals();
	{	/* a type 2 window bound to a QP that is destroyed: unbound
		 * (the region, its only one, deregisters while it lives) */
		struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		struct ibv_qp *qp[2];

		if (!mw)
			die("alloc_mw");
		pair(qp);
		vu_check(bind2(qp[1], mw, ibv_inc_rkey(mw->rkey)) == 0, NULL,
			 "a type 2 window bound to a QP");
		ibv_destroy_qp(qp[0]);
		ibv_destroy_qp(qp[1]);
		vu_check(ibv_dereg_mr(mr) == 0, NULL,
			 "the QP destroyed, the window is unbound: the region "
			 "deregisters");
		vu_check(ibv_dealloc_mw(mw) == 0, NULL, "dealloc_mw");
	}
	printf("# %u checks, %u failed\n", vu_checks, vu_failed);
	return vu_failed ? 1 : 0;
}
