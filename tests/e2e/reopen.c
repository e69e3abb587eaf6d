/* SPDX-License-Identifier: MIT */
/*
 * reopen: one program that opens and closes the device over and over,
 * as rdma-core's tests (run_tests.py: one process) do for every test.
 *
 *   reopen [ROUNDS]   (default 96: three times srnicd's process slots)
 *
 * Each round opens the device, allocates a PD, a CQ (which starts the
 * datapath: attached to srnicd, the process holds a slot of the node),
 * two RC QPs connected to each other through the node's own GID, WRITEs
 * 64 KiB of the round's pattern from one QP's region into the other's,
 * checks every byte, and closes it all.  Every round must work: the slot
 * a closed device held goes back when the process opens it again (before
 * it did only at the process's exit, and the 32nd opening failed with
 * EUSERS, "Too many users").
 * Prints "ok"/"not ok" lines and "# N checks, M failed"; exits 1 on any
 * failure, 2 when the device cannot be opened at all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_util.h"

#define BYTES (64u * 1024)

/* One round; what went wrong, or NULL. */
static const char *round_trip(struct ibv_device *dev, uint32_t seed)
{
	static uint8_t src[BYTES], dst[BYTES];
	struct ibv_context *ctx = ibv_open_device(dev);
	struct ibv_qp *qp[2] = {NULL, NULL};
	struct ibv_mr *ms = NULL, *md = NULL;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	const char *bad = NULL;
	union ibv_gid gid;
	struct ibv_wc wc;
	uint64_t i;

	if (!ctx)
		return "ibv_open_device failed";
	vu_fill(src, BYTES, seed);
	memset(dst, 0, BYTES);
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	if (!pd || !cq || ibv_query_gid(ctx, VU_PORT, VU_GID_INDEX, &gid)) {
		bad = !pd ? "ibv_alloc_pd failed" : "CQ or GID";
		goto out;
	}
	ms = ibv_reg_mr(pd, src, BYTES, IBV_ACCESS_LOCAL_WRITE);
	md = ibv_reg_mr(pd, dst, BYTES, IBV_ACCESS_LOCAL_WRITE |
					     IBV_ACCESS_REMOTE_WRITE);
	if (!ms || !md ||
	    vu_loop_pair(pd, cq, &gid, IBV_ACCESS_REMOTE_WRITE, qp)) {
		bad = "MRs or the loopback pair";
		goto out;
	}
	{
		struct ibv_sge sge = {.addr = (uintptr_t)src,
				      .length = BYTES,
				      .lkey = ms->lkey};
		struct ibv_send_wr wr = {.sg_list = &sge,
					 .num_sge = 1,
					 .opcode = IBV_WR_RDMA_WRITE,
					 .send_flags = IBV_SEND_SIGNALED},
				   *badwr;
		int got;

		wr.wr.rdma.remote_addr = (uintptr_t)dst;
		wr.wr.rdma.rkey = md->rkey;
		if (ibv_post_send(qp[0], &wr, &badwr)) {
			bad = "ibv_post_send failed";
			goto out;
		}
		got = vu_poll(cq, &wc, 10000);
		if (got != 1 || wc.status != IBV_WC_SUCCESS) {
			bad = vu_wc_str(&wc, got);
			goto out;
		}
	}
	for (i = 0; i < BYTES; i++)
		if (dst[i] != vu_pattern(seed, i)) {
			bad = "a byte landed wrong";
			break;
		}
out:
	for (i = 0; i < 2; i++)
		if (qp[i])
			ibv_destroy_qp(qp[i]);
	if (ms)
		ibv_dereg_mr(ms);
	if (md)
		ibv_dereg_mr(md);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return bad;
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 96;
	struct ibv_device **list;
	unsigned r, good = 0;
	const char *first = NULL;
	int n;

	list = ibv_get_device_list(&n);
	if (!list || n < 1) {
		fprintf(stderr, "reopen: no RDMA device\n");
		return 2;
	}
	for (r = 0; r < rounds; r++) {
		const char *bad = round_trip(list[0], r + 1);

		if (!bad)
			good++;
		else if (!first)
			first = bad, printf("# round %u: %s\n", r + 1, bad);
	}
	ibv_free_device_list(list);
	vu_check(good == rounds, first, "%u of %u rounds of open, WRITE 64 KiB "
		 "through the loopback (every byte checked), close", good,
		 rounds);
	printf("# %u checks, %u failed\n", vu_checks, vu_failed);
	return vu_failed ? 1 : 0;
}
