/* SPDX-License-Identifier: MIT */
/*
 * group_check: multicast RDMA WRITE's verbs (include/srnic.h) between two
 * nodes, every byte checked (tests/e2e/33-mcast-rdma.sh).
 *
 *   member (b):  group_check [-p PORT]
 *   sender (a):  group_check [-p PORT] HOST
 *
 *  1. Group regions: a group past the last, or without remote write, is
 *     EINVAL; a second region for a group the node has is EBUSY.  b holds
 *     1 MiB for group 3 and 4 KiB (of an 8 KiB buffer) for group 4.
 *  2. a sees b as group 3's member (srnic_query_group), group 6 has none.
 *     srnic_post_mc_write refuses an RC QP, group 64, inline data.
 *  3. a writes 1 MiB to group 3, then 100 bytes at offset 4097 and an
 *     empty WRITE; each completes as IBV_WC_RDMA_WRITE; a datagram posted
 *     between them completes in order.  b's region then holds exactly
 *     those bytes, and b, which asked for completions on group 3's region
 *     (srnic_group_notify), has one for each WRITE, in order, naming its
 *     offset, length, group and sender, and no more; the CQ is in use
 *     (EBUSY) until b stops asking.  A region of no group: EINVAL.
 *  4. 8 KiB to group 4's 4 KiB region: IBV_WC_REM_ACCESS_ERR, and
 *     srnic_mc_failed names b with that status and the WRITE's id; the
 *     send queue then takes the QP back to RTS and goes on.  b's bytes
 *     past its region are untouched.
 *  5. A WRITE to group 6, which nobody holds, completes; 4 KiB to group
 *     0 (broadcast) land in b's region for it.
 *  6. b deregisters group 3's region: a sees it leave the group.
 * Prints "ok"/"not ok" lines and "# N checks, M failed".
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "srnic.h"
#include "verbs_util.h"

#define BIG (1u << 20)
#define SMALL 4096
#define ODD_OFF 4097
#define ODD_LEN 100
#define TIMEOUT_MS 20000

/* The first offset in [from, to) whose byte is not vu_pattern(seed), or to. */
static uint64_t first_bad(const uint8_t *p, uint64_t from, uint64_t to,
			  uint32_t seed, uint64_t seed_base)
{
	for (; from < to; from++)
		if (p[from] != vu_pattern(seed, from - seed_base))
			return from;
	return to;
}

/* 3's completions at b: one per WRITE, in order, then none. */
static void member_completions(struct ibv_cq *cq)
{
	static const uint64_t off[3] = {0, ODD_OFF, 0};
	static const uint32_t len[3] = {BIG, ODD_LEN, 0};
	struct ibv_wc wc[4];
	unsigned i, ok = 0;
	int n = 0, k;

	for (k = 0; k < 50 && n < 4; k++) {
		int got = ibv_poll_cq(cq, 4 - n, wc + n);

		n += got > 0 ? got : 0;
		usleep(2000);	/* (and 100 ms for one too many) */
	}
	for (i = 0; i < 3 && i < (unsigned)n; i++)
		ok += wc[i].status == IBV_WC_SUCCESS &&
		      wc[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		      (wc[i].wc_flags & IBV_WC_WITH_IMM) &&
		      ntohl(wc[i].imm_data) == 3 && wc[i].wr_id == off[i] &&
		      wc[i].byte_len == len[i] && wc[i].qp_num == 0xFFFFFF &&
		      wc[i].src_qp == wc[0].src_qp && wc[0].src_qp;
	vu_check(n == 3 && ok == 3, NULL,
		 "b's completions for group 3: %d (3 wanted), %u right "
		 "(offset, length, group, sender)", n, ok);
}

static int member(struct ibv_context *ctx, int fd)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	uint8_t *big = malloc(BIG), *small = malloc(2 * SMALL),
		*bcast = malloc(SMALL);
	int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_mr *mr3, *mr4, *mr0, *mr, *plain;
	uint64_t bad;
	int rc;

	if (!pd || !big || !small || !bcast)
		return 2;
	plain = ibv_reg_mr(pd, bcast, SMALL, rw);
	vu_fill(bcast, SMALL, 0xca9a);
	vu_fill(big, BIG, 0xca9a);
	vu_fill(small, 2 * SMALL, 0xca9a);

	mr = srnic_reg_mr_group(pd, big, BIG, rw, SRNIC_MAX_GROUPS);
	vu_check(!mr && errno == EINVAL, vu_err_str(errno),
		 "a group past the last is EINVAL");
	mr = srnic_reg_mr_group(pd, big, BIG, IBV_ACCESS_LOCAL_WRITE, 3);
	vu_check(!mr && errno == EINVAL, vu_err_str(errno),
		 "a group region without remote write is EINVAL");
	mr3 = srnic_reg_mr_group(pd, big, BIG, rw, 3);
	vu_check(mr3 != NULL, vu_err_str(errno), "a region for group 3");
	mr = srnic_reg_mr_group(pd, small, SMALL, rw, 3);
	vu_check(!mr && errno == EBUSY, vu_err_str(errno),
		 "a second region for group 3 is EBUSY");
	mr4 = srnic_reg_mr_group(pd, small, SMALL, rw, 4);
	vu_check(mr4 != NULL, vu_err_str(errno),
		 "a 4 KiB region for group 4");
	mr0 = srnic_reg_mr_group(pd, bcast, SMALL, rw,
				 SRNIC_GROUP_BROADCAST);
	vu_check(mr0 != NULL, vu_err_str(errno),
		 "a region for group 0, broadcast");
	if (!mr3 || !mr4 || !mr0 || !cq || !plain)
		return 2;
	rc = srnic_group_notify(plain, cq);
	vu_check(rc == EINVAL, vu_err_str(rc),
		 "completions for a region of no group: EINVAL");
	rc = srnic_group_notify(mr3, cq);
	vu_check(!rc, vu_err_str(rc), "completions for group 3's region");
	/* 1: regions ready; 2: a wrote */
	if (vu_sync(fd, TIMEOUT_MS) || vu_sync(fd, TIMEOUT_MS))
		return 2;
	member_completions(cq);
	rc = ibv_destroy_cq(cq);
	vu_check(rc == EBUSY, vu_err_str(rc),
		 "the CQ is in use while group 3's region names it: EBUSY");
	rc = srnic_group_notify(mr3, NULL);
	if (!rc)
		rc = ibv_destroy_cq(cq);
	vu_check(!rc, vu_err_str(rc), "no more completions: the CQ goes");
	bad = first_bad(big, 0, ODD_OFF, 7, 0);
	vu_check(bad == ODD_OFF, NULL,
		 "group 3's region holds a's 1 MiB up to offset %u (first "
		 "wrong byte: %lu)", ODD_OFF, (unsigned long)bad);
	bad = first_bad(big, ODD_OFF, ODD_OFF + ODD_LEN, 8, ODD_OFF);
	vu_check(bad == ODD_OFF + ODD_LEN, NULL,
		 "... a's 100 bytes at offset %u (first wrong: %lu)", ODD_OFF,
		 (unsigned long)bad);
	bad = first_bad(big, ODD_OFF + ODD_LEN, BIG, 7, 0);
	vu_check(bad == BIG, NULL, "... and the 1 MiB again after them "
		 "(first wrong: %lu)", (unsigned long)bad);
	bad = first_bad(bcast, 0, SMALL, 9, 0);
	vu_check(bad == SMALL, NULL, "the broadcast region holds a's 4 KiB "
		 "(first wrong byte: %lu)", (unsigned long)bad);
	bad = first_bad(small, SMALL, 2 * SMALL, 0xca9a, 0);
	vu_check(bad == 2 * SMALL, NULL,
		 "nothing landed past group 4's 4 KiB (first changed: %lu)",
		 (unsigned long)bad);
	vu_check(ibv_dereg_mr(mr3) == 0, NULL,
		 "group 3's region deregistered");
	/* 3: b left group 3; 4: a saw it */
	if (vu_sync(fd, TIMEOUT_MS) || vu_sync(fd, TIMEOUT_MS))
		return 2;
	ibv_dereg_mr(mr4);
	ibv_dereg_mr(mr0);
	ibv_dereg_mr(plain);
	ibv_dealloc_pd(pd);
	return 0;
}

static struct ibv_qp *ud_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = {.max_send_wr = 16, .max_recv_wr = 4, .max_send_sge = 2,
			.max_recv_sge = 1, .max_inline_data = 64},
	};
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1,
				.qkey = 0x1234};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp ||
	    ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					  IBV_QP_PORT | IBV_QP_QKEY))
		return NULL;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return NULL;
	a.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return NULL;
	return qp;
}

/* Members of group g, waiting until there are want (or the time is up). */
static int members(struct ibv_context *ctx, unsigned g, int want,
		   struct srnic_group_member *m, int max)
{
	uint64_t until = vu_now_ms() + 5000;
	int n;

	do {
		n = srnic_query_group(ctx, g, m, max);
		if (n == want)
			break;
		usleep(10000);
	} while (vu_now_ms() < until);
	return n;
}

static int mc_write(struct ibv_qp *qp, uint64_t id, unsigned group,
		    uint64_t off, struct ibv_sge *sge, int nsge)
{
	struct srnic_mc_write_wr wr = {.wr_id = id, .sg_list = sge,
				       .num_sge = nsge,
				       .send_flags = IBV_SEND_SIGNALED,
				       .group = group, .offset = off};

	return srnic_post_mc_write(qp, &wr);
}

static int sender(struct ibv_context *ctx, int fd, const char *peer)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	uint8_t *buf = malloc(BIG + SMALL), *odd;
	struct srnic_group_member m[8];
	struct ibv_qp *qp, *rc_qp;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	struct ibv_ah *ah;
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};
	union ibv_gid gid;
	uint64_t wr_id = 0;
	int n, rc, got, i;

	if (!pd || !cq || !buf)
		return 2;
	vu_fill(buf, BIG, 7);
	odd = buf + BIG;
	vu_fill(odd, ODD_LEN, 8);
	mr = ibv_reg_mr(pd, buf, BIG + SMALL, IBV_ACCESS_LOCAL_WRITE);
	qp = ud_qp(pd, cq);
	rc_qp = vu_create_rc_qp(pd, cq, 4, 4, 1, NULL);
	if (!mr || !qp || !rc_qp || vu_sync(fd, TIMEOUT_MS))
		return 2;

	n = members(ctx, 3, 1, m, 8);
	vu_check(n == 1 && !strcmp(m[0].node, peer), NULL,
		 "group 3's members: %d, the first %s", n, n > 0 ? m[0].node
								 : "-");
	n = members(ctx, 4, 1, m, 8);
	vu_check(n == 1 && !strcmp(m[0].node, peer), NULL,
		 "group 4's members: %d, the first %s", n, n > 0 ? m[0].node
								 : "-");
	n = srnic_query_group(ctx, 6, m, 8);
	vu_check(n == 0, NULL, "group 6 has no member (%d)", n);
	n = srnic_query_group(ctx, SRNIC_MAX_GROUPS, m, 8);
	vu_check(n == -1 && errno == EINVAL, vu_err_str(errno),
		 "srnic_query_group of group 64 is EINVAL");
	{
		struct ibv_sge sge = {(uintptr_t)buf, 64, mr->lkey};
		struct srnic_mc_write_wr wr = {.sg_list = &sge, .num_sge = 1,
					       .group = 3,
					       .send_flags = IBV_SEND_INLINE};

		rc = mc_write(rc_qp, 0, 3, 0, &sge, 1);
		vu_check(rc == EINVAL, vu_err_str(rc),
			 "srnic_post_mc_write on an RC QP is EINVAL");
		rc = mc_write(qp, 0, SRNIC_MAX_GROUPS, 0, &sge, 1);
		vu_check(rc == EINVAL, vu_err_str(rc),
			 "... to group 64 is EINVAL");
		rc = srnic_post_mc_write(qp, &wr);
		vu_check(rc == EINVAL, vu_err_str(rc),
			 "... with inline data is EINVAL");
		rc = mc_write(qp, 0, 3, UINT64_MAX - 8, &sge, 1);
		vu_check(rc == EINVAL, vu_err_str(rc),
			 "... past the end of the address space is EINVAL");
	}

	/* 3: the WRITEs, a datagram to b among them */
	if (ibv_query_gid(ctx, 1, VU_GID_INDEX, &gid))
		return 2;
	{
		struct ibv_sge whole = {(uintptr_t)buf, BIG, mr->lkey};
		struct ibv_sge parts[2] = {{(uintptr_t)odd, 40, mr->lkey},
					   {(uintptr_t)odd + 40, ODD_LEN - 40,
					    mr->lkey}};
		struct ibv_sge dg = {(uintptr_t)buf, 16, mr->lkey};
		struct ibv_send_wr swr = {.wr_id = 50, .sg_list = &dg,
					  .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED},
				   *bad;
		uint64_t want[4] = {1, 50, 2, 3};

		/* (a datagram to this node's own QP 1: nobody; it completes
		 * once sent all the same) */
		aa.grh.dgid = gid;
		aa.grh.sgid_index = VU_GID_INDEX;
		ah = ibv_create_ah(pd, &aa);
		swr.wr.ud.ah = ah;
		swr.wr.ud.remote_qpn = 1;
		swr.wr.ud.remote_qkey = 0x1234;
		rc = mc_write(qp, 1, 3, 0, &whole, 1);
		if (!rc && ah)
			rc = ibv_post_send(qp, &swr, &bad);
		if (!rc)
			rc = mc_write(qp, 2, 3, ODD_OFF, parts, 2);
		if (!rc)
			rc = mc_write(qp, 3, 3, 0, NULL, 0);
		vu_check(!rc && ah, vu_err_str(rc),
			 "three multicast WRITEs and a datagram posted");
		for (i = 0; i < 4; i++) {
			got = vu_poll(cq, &wc, TIMEOUT_MS);
			vu_check(got == 1 && wc.status == IBV_WC_SUCCESS &&
					 wc.wr_id == want[i] &&
					 wc.opcode == (want[i] == 50
							       ? IBV_WC_SEND
							       : IBV_WC_RDMA_WRITE),
				 vu_wc_str(&wc, got),
				 "completion %d: wr %lu, in order", i,
				 (unsigned long)want[i]);
		}
	}

	/* 4: too much for b's region */
	{
		struct ibv_sge sge = {(uintptr_t)buf, 2 * SMALL, mr->lkey};
		struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS};

		rc = mc_write(qp, 4, 4, 0, &sge, 1);
		got = vu_poll(cq, &wc, TIMEOUT_MS);
		vu_check(!rc && got == 1 &&
				 wc.status == IBV_WC_REM_ACCESS_ERR &&
				 wc.wr_id == 4,
			 vu_wc_str(&wc, got),
			 "8 KiB to a 4 KiB group region: REM_ACCESS_ERR");
		n = srnic_mc_failed(qp, &wr_id, m, 8);
		vu_check(n == 1 && wr_id == 4 && !strcmp(m[0].node, peer) &&
				 m[0].status == IBV_WC_REM_ACCESS_ERR,
			 NULL, "srnic_mc_failed names %s (%d members, wr %lu)",
			 n > 0 ? m[0].node : "-", n, (unsigned long)wr_id);
		vu_check(vu_qp_state(qp) == IBV_QPS_SQE, NULL,
			 "the send queue stopped (SQE)");
		rc = ibv_modify_qp(qp, &a, IBV_QP_STATE);
		vu_check(!rc, vu_err_str(rc), "back to RTS");
	}

	/* 5: a group nobody holds */
	{
		struct ibv_sge sge = {(uintptr_t)buf, 4096, mr->lkey};

		rc = mc_write(qp, 5, 6, 0, &sge, 1);
		got = vu_poll(cq, &wc, TIMEOUT_MS);
		vu_check(!rc && got == 1 && wc.status == IBV_WC_SUCCESS &&
				 wc.wr_id == 5,
			 vu_wc_str(&wc, got),
			 "a WRITE to a group without members completes");
		vu_fill(buf + BIG, SMALL, 9);
		sge.addr = (uintptr_t)buf + BIG;
		n = members(ctx, SRNIC_GROUP_BROADCAST, 1, m, 8);
		rc = mc_write(qp, 6, SRNIC_GROUP_BROADCAST, 0, &sge, 1);
		got = vu_poll(cq, &wc, TIMEOUT_MS);
		vu_check(n == 1 && !rc && got == 1 &&
				 wc.status == IBV_WC_SUCCESS && wc.wr_id == 6,
			 vu_wc_str(&wc, got),
			 "4 KiB broadcast (group 0, %d member)", n);
	}
	if (vu_sync(fd, TIMEOUT_MS) || vu_sync(fd, TIMEOUT_MS))
		return 2;
	/* 6: b left group 3 */
	n = members(ctx, 3, 0, m, 8);
	vu_check(n == 0, NULL, "b left group 3 (%d members)", n);
	if (vu_sync(fd, TIMEOUT_MS))
		return 2;
	if (ah)
		ibv_destroy_ah(ah);
	ibv_destroy_qp(qp);
	ibv_destroy_qp(rc_qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	int port = 18700, opt, fd, rc;
	const char *host = NULL;

	while ((opt = getopt(argc, argv, "p:")) != -1)
		if (opt == 'p')
			port = atoi(optarg);
	if (optind < argc)
		host = argv[optind];
	ctx = vu_open_first();
	if (!ctx)
		return 2;
	fd = vu_tcp_connect(host, port, TIMEOUT_MS);
	if (fd < 0)
		return 2;
	rc = host ? sender(ctx, fd, host) : member(ctx, fd);
	printf("# %u checks, %u failed\n", vu_checks, vu_failed);
	ibv_close_device(ctx);
	return rc ? rc : vu_failed != 0;
}
