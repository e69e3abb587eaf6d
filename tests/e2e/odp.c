/* SPDX-License-Identifier: MIT */
/*
 * odp: on-demand paging between QPs of one program connected through the
 * node's own GID (the loopback: every access is a packet the responder
 * places, as from another node).
 *
 *  1. The device says ODP and implicit ODP, and every RC operation.
 *  2. A fresh malloc'ed buffer, never touched, registered on demand: a
 *     WRITE lands in it and a READ brings it back, byte for byte.
 *  3. An implicit region (address 0, length SIZE_MAX): its lkey sends from
 *     and its rkey writes to buffers registered nowhere else.
 *  4. A hole: a page of an on-demand region unmapped after registration.
 *     A WRITE into it, a READ of it and an atomic on it complete with
 *     REM_ACCESS_ERR; a WRITE into a read-only page too; a SEND from the
 *     hole and a READ into it with LOC_PROT_ERR.  The process lives on,
 *     the pages around the hole keep their canary, and once the page is
 *     mapped again a WRITE into it lands.
 *  5. ibv_advise_mr: prefetch (read and write) of an on-demand range, no
 *     fault; EINVAL for a region not on demand, EFAULT for the hole.
 * Prints "ok"/"not ok" lines and "# N checks, M failed"; exits 1 on any
 * failure.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "verbs_util.h"

#define POLL_MS 15000
#define BIG (1u << 20)		/* the fresh buffer: 256 pages */
#define RIGHTS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |         \
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static union ibv_gid gid;
static long page;

static void die(const char *what)
{
	fprintf(stderr, "odp: %s (errno %d)\n", what, errno);
	exit(2);
}

/* A fresh loopback pair: qp[0] posts, qp[1] is the target's side. */
static void pair(struct ibv_qp *qp[2])
{
	if (vu_loop_pair(pd, cq, &gid, RIGHTS, qp))
		die("QP pair");
}

static void unpair(struct ibv_qp *qp[2])
{
	ibv_destroy_qp(qp[0]);
	ibv_destroy_qp(qp[1]);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 13 + seed);
}

static int all(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

/* Post wr on qp (signaled) and wait: its completion's status, -1 none. */
static int run(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	wr->send_flags |= IBV_SEND_SIGNALED;
	if (ibv_post_send(qp, wr, &bad))
		die("post_send");
	return vu_poll(cq, &wc, POLL_MS) == 1 ? (int)wc.status : -1;
}

/* One RDMA WRITE or READ of len bytes between buf (lkey) and (raddr,
 * rkey); its status. */
static int rdma(struct ibv_qp *qp, enum ibv_wr_opcode op, void *buf,
		uint32_t len, uint32_t lkey, void *raddr, uint32_t rkey)
{
	struct ibv_sge sge = {(uintptr_t)buf, len, lkey};
	struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = op};

	wr.wr.rdma.remote_addr = (uintptr_t)raddr;
	wr.wr.rdma.rkey = rkey;
	return run(qp, &wr);
}

static int fetch_add(struct ibv_qp *qp, uint64_t *res, uint32_t lkey,
		     void *raddr, uint32_t rkey)
{
	struct ibv_sge sge = {(uintptr_t)res, 8, lkey};
	struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1,
				 .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD};

	wr.wr.atomic.remote_addr = (uintptr_t)raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = 1;
	return run(qp, &wr);
}

/* A SEND of len bytes from buf (lkey) into a receive of rlen bytes at
 * rbuf (rlkey) posted on qp[1]: the sender's status, and the receive's in
 * *rstatus (-1: none). */
static int send_recv(struct ibv_qp *qp[2], void *buf, uint32_t len,
		     uint32_t lkey, void *rbuf, uint32_t rlen, uint32_t rlkey,
		     int *rstatus)
{
	struct ibv_sge rs = {(uintptr_t)rbuf, rlen, rlkey};
	struct ibv_recv_wr rwr = {.wr_id = 2, .sg_list = &rs, .num_sge = 1},
			   *rbad;
	struct ibv_sge sge = {(uintptr_t)buf, len, lkey};
	struct ibv_send_wr wr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1,
				 .opcode = IBV_WR_SEND};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int s = -1, got;

	*rstatus = -1;
	if (ibv_post_recv(qp[1], &rwr, &rbad))
		die("post_recv");
	wr.send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(qp[0], &wr, &bad))
		die("post_send");
	/* the two completions, in either order (the receive's only if it
	 * got anything) */
	for (got = 0; got < 2 && vu_poll(cq, &wc, got ? 300 : POLL_MS) == 1;
	     got++) {
		if (wc.wr_id == 1)
			s = (int)wc.status;
		else
			*rstatus = (int)wc.status;
	}
	return s;
}

static void device_caps(void)
{
	struct ibv_device_attr_ex a;
	uint32_t rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		      IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		      IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;

	if (ibv_query_device_ex(ctx, NULL, &a))
		die("query_device_ex");
	vu_check((a.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
			 (a.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT) &&
			 (a.odp_caps.per_transport_caps.rc_odp_caps & rc) == rc,
		 NULL, "the device offers ODP, implicit ODP, every RC op "
		 "(general 0x%llx, rc 0x%x)",
		 (unsigned long long)a.odp_caps.general_caps,
		 a.odp_caps.per_transport_caps.rc_odp_caps);
}

/* 2: a buffer whose pages nobody has touched yet. */
static void fresh_buffer(void)
{
	uint8_t *src = malloc(BIG), *dst = malloc(BIG), *back = malloc(BIG);
	struct ibv_mr *msrc, *mdst, *mback;
	struct ibv_qp *qp[2];

	if (!src || !dst || !back)
		die("malloc");
	fill(src, BIG, 3);
	msrc = ibv_reg_mr(pd, src, BIG, IBV_ACCESS_LOCAL_WRITE);
	mdst = ibv_reg_mr(pd, dst, BIG, RIGHTS | IBV_ACCESS_ON_DEMAND);
	mback = ibv_reg_mr(pd, back, BIG,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND);
	vu_check(msrc && mdst && mback, NULL,
		 "on-demand regions over fresh malloc'ed buffers register");
	if (!msrc || !mdst || !mback)
		return;
	pair(qp);
	vu_check(rdma(qp[0], IBV_WR_RDMA_WRITE, src, BIG, msrc->lkey, dst,
		      mdst->rkey) == IBV_WC_SUCCESS &&
			 !memcmp(dst, src, BIG),
		 NULL, "a 1 MiB WRITE lands in the untouched buffer, byte "
		 "for byte");
	vu_check(rdma(qp[0], IBV_WR_RDMA_READ, back, BIG, mback->lkey, dst,
		      mdst->rkey) == IBV_WC_SUCCESS &&
			 !memcmp(back, src, BIG),
		 NULL, "a READ of it into another untouched on-demand "
		 "buffer brings it back");
	unpair(qp);
	ibv_dereg_mr(msrc);
	ibv_dereg_mr(mdst);
	ibv_dereg_mr(mback);
	free(src);
	free(dst);
	free(back);
}

/* 3: one key for the whole address space. */
static void implicit(void)
{
	enum { LEN = 65536 };
	struct ibv_mr *all_mr = ibv_reg_mr(pd, NULL, SIZE_MAX,
					   RIGHTS | IBV_ACCESS_ON_DEMAND);
	uint8_t *a = malloc(LEN), *b = malloc(LEN), *c = malloc(LEN);
	struct ibv_qp *qp[2];
	int rs;

	if (!a || !b || !c)
		die("malloc");
	vu_check(all_mr != NULL, vu_err_str(errno),
		 "an implicit on-demand region (NULL, SIZE_MAX) registers");
	vu_check(!ibv_reg_mr(pd, NULL, SIZE_MAX, RIGHTS) && errno == EINVAL,
		 vu_err_str(errno), "the same without ON_DEMAND: EINVAL");
	if (!all_mr)
		return;
	fill(a, LEN, 5);
	memset(b, 0, LEN);
	memset(c, 0, LEN);
	pair(qp);
	vu_check(rdma(qp[0], IBV_WR_RDMA_WRITE, a, LEN, all_mr->lkey, b,
		      all_mr->rkey) == IBV_WC_SUCCESS &&
			 !memcmp(a, b, LEN),
		 NULL, "a WRITE from and to buffers the implicit key covers");
	vu_check(send_recv(qp, a, LEN, all_mr->lkey, c, LEN, all_mr->lkey,
			   &rs) == IBV_WC_SUCCESS &&
			 rs == IBV_WC_SUCCESS && !memcmp(a, c, LEN),
		 NULL, "a SEND and its receive through the implicit key");
	unpair(qp);
	vu_check(ibv_dereg_mr(all_mr) == 0, NULL, "the implicit region "
		 "deregisters");
	free(a);
	free(b);
	free(c);
}

/* 4 and 5: three pages, the middle one unmapped under the region. */
static void hole(void)
{
	uint8_t *mem = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *src = malloc(page), *back = malloc(page), *hp;
	struct ibv_mr *mr, *msrc, *mback;
	struct ibv_sge sge;
	struct ibv_qp *qp[2];
	int rs;

	if (mem == MAP_FAILED || !src || !back)
		die("mmap");
	hp = mem + page;
	memset(mem, 0x5a, 3 * page);
	fill(src, page, 9);
	mr = ibv_reg_mr(pd, mem, 3 * page, RIGHTS | IBV_ACCESS_ON_DEMAND);
	msrc = ibv_reg_mr(pd, src, page, IBV_ACCESS_LOCAL_WRITE);
	mback = ibv_reg_mr(pd, back, page, IBV_ACCESS_LOCAL_WRITE);
	if (!mr || !msrc || !mback)
		die("reg_mr");

	sge = (struct ibv_sge){(uintptr_t)mem, (uint32_t)(3 * page), mr->lkey};
	vu_check(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			       IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1) == 0,
		 NULL, "advise_mr PREFETCH_WRITE of the mapped region");
	sge = (struct ibv_sge){(uintptr_t)src, (uint32_t)page, msrc->lkey};
	vu_check(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge,
			       1) == EINVAL,
		 NULL, "advise_mr of a region not on demand: EINVAL");
	munmap(hp, page);
	sge = (struct ibv_sge){(uintptr_t)mem, (uint32_t)(3 * page), mr->lkey};
	vu_check(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
			       IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1) == EFAULT,
		 NULL, "advise_mr PREFETCH over the hole: EFAULT");
	vu_check(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, 0,
			       &sge, 1) == 0,
		 NULL, "advise_mr PREFETCH_NO_FAULT over it: nothing to do");

	pair(qp);
	vu_check(rdma(qp[0], IBV_WR_RDMA_WRITE, src, page, msrc->lkey, hp,
		      mr->rkey) == IBV_WC_REM_ACCESS_ERR,
		 NULL, "a WRITE into the hole: REM_ACCESS_ERR");
	unpair(qp);
	pair(qp);
	vu_check(rdma(qp[0], IBV_WR_RDMA_WRITE, src, 64, msrc->lkey,
		      hp - 32, mr->rkey) == IBV_WC_REM_ACCESS_ERR,
		 NULL, "a WRITE that runs from a mapped page into the hole: "
		 "REM_ACCESS_ERR");
	unpair(qp);
	pair(qp);
	vu_check(rdma(qp[0], IBV_WR_RDMA_READ, back, page, mback->lkey, hp,
		      mr->rkey) == IBV_WC_REM_ACCESS_ERR,
		 NULL, "a READ of the hole: REM_ACCESS_ERR");
	unpair(qp);
	pair(qp);
	vu_check(fetch_add(qp[0], (uint64_t *)back, mback->lkey, hp + 8,
			   mr->rkey) ==
			 IBV_WC_REM_ACCESS_ERR,
		 NULL, "an atomic on the hole: REM_ACCESS_ERR");
	unpair(qp);
	pair(qp);
	vu_check(send_recv(qp, hp, 256, mr->lkey, back, page, mback->lkey,
			   &rs) == IBV_WC_LOC_PROT_ERR,
		 NULL, "a SEND from the hole: LOC_PROT_ERR");
	unpair(qp);
	pair(qp);
	vu_check(rdma(qp[0], IBV_WR_RDMA_READ, hp, 256, mr->lkey, mem + 64,
		      mr->rkey) == IBV_WC_LOC_PROT_ERR,
		 NULL, "a READ into the hole: LOC_PROT_ERR");
	unpair(qp);
	vu_check(all(mem, page - 32, 0x5a) && all(mem + 2 * page, page, 0x5a),
		 NULL, "the pages around the hole keep their canary (the "
		 "WRITE that ran into it aside)");

	/* a read-only page of the region */
	mprotect(mem + 2 * page, page, PROT_READ);
	pair(qp);
	vu_check(rdma(qp[0], IBV_WR_RDMA_WRITE, src, 128, msrc->lkey,
		      mem + 2 * page, mr->rkey) == IBV_WC_REM_ACCESS_ERR &&
			 all(mem + 2 * page, page, 0x5a),
		 NULL, "a WRITE into a read-only page: REM_ACCESS_ERR, page "
		 "unchanged");
	unpair(qp);
	pair(qp);
	memset(back, 0, page);
	vu_check(rdma(qp[0], IBV_WR_RDMA_READ, back, page, mback->lkey,
		      mem + 2 * page, mr->rkey) == IBV_WC_SUCCESS &&
			 all(back, page, 0x5a),
		 NULL, "a READ of the read-only page works");

	/* the page comes back: the region works there again */
	if (mmap(hp, page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != hp)
		die("mmap again");
	vu_check(rdma(qp[0], IBV_WR_RDMA_WRITE, src, page, msrc->lkey, hp,
		      mr->rkey) == IBV_WC_SUCCESS &&
			 !memcmp(hp, src, page),
		 NULL, "mapped again, the page takes a WRITE");
	unpair(qp);
	ibv_dereg_mr(mr);
	ibv_dereg_mr(msrc);
	ibv_dereg_mr(mback);
	munmap(mem, 3 * page);
	free(src);
	free(back);
}

int main(void)
{
	page = sysconf(_SC_PAGESIZE);
	ctx = vu_open_first();
	if (!ctx)
		return 2;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!pd || !cq || ibv_query_gid(ctx, VU_PORT, VU_GID_INDEX, &gid))
		die("pd, cq or gid");
	device_caps();
	fresh_buffer();
	implicit();
	hole();
	printf("# %u checks, %u failed\n", vu_checks, vu_failed);
	return vu_failed ? 1 : 0;
}
