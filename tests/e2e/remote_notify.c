/* SPDX-License-Identifier: MIT */
/*
 * remote_notify: completion at both ends (seed 002; include/srnic.h's
 * SRNIC_SEND_REMOTE_NOTIFY).  An RDMA WRITE posted with the flag gives its
 * target a completion in the target QP's receive CQ, without consuming a
 * receive WQE; one posted without gives none.
 *
 *   remote_notify
 *
 * Two RC QPs of one program, connected through the node's own GID (the
 * loopback port): a writes into b's region, b's QP accepting completions
 * of WRITEs (srnic_qp_accept_notify).  b's receive CQ is on a
 * completion channel, and b has one receive posted (wr_id 77) all along.
 * Checks:
 *  - a WRITE of 1 MiB with the flag: a's completion as ever; at b, armed,
 *    an event and one completion: SRNIC_WC_REMOTE_WRITE, success,
 *    byte_len 1 MiB, wr_id the address written at, qp_num b's QP,
 *    src_qp a's; every byte right;
 *  - a WRITE at an offset, without the flag: nothing at b in 200 ms;
 *  - 16 WRITEs with the flag, of 1 to 16 KiB at 16 offsets: 16
 *    completions at b, in order, each naming its address and length;
 *  - a zero-length WRITE with the flag: a completion of 0 bytes;
 *  - then a SEND: b's receive 77 takes it (no notified WRITE took it);
 *  - the flag on a SEND, and on an atomic: EINVAL;
 *  - a READ of 1 MiB of b's region with the flag: at b, armed, an event
 *    and SRNIC_WC_REMOTE_READ (byte_len, wr_id the address read, QPs)
 *    already there when a's own completion comes (a completes it only
 *    once b has); every byte read right;
 *  - a READ without the flag: nothing at b in 200 ms;
 *  - 8 READs with the flag at 8 offsets: 8 completions at b, in order;
 *  - b's QP no longer accepting them: the WRITE is refused
 *    (IBV_WC_REM_INV_REQ_ERR at a), nothing at b; so is a READ (a pair
 *    of its own); a UC QP cannot accept them (EINVAL).
 * Prints "ok"/"not ok" lines and "# N checks, M failed".
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srnic.h"
#include "verbs_util.h"

#define LEN (1u << 20)
#define POLL_MS 10000
#define RECV_ID 77

static void die(const char *what)
{
	fprintf(stderr, "remote_notify: %s\n", what);
	exit(2);
}

/* A WRITE (op IBV_WR_RDMA_WRITE) of len bytes from ml's addr + off to
 * mr's, or a READ (IBV_WR_RDMA_READ) of them from mr's into ml's, flags
 * as given; ibv_post_send's return. */
static int rdma_at(struct ibv_qp *qp, enum ibv_wr_opcode op,
		   struct ibv_mr *ml, struct ibv_mr *mr, uint64_t off,
		   uint32_t len, unsigned flags)
{
	struct ibv_sge sge = {(uintptr_t)ml->addr + off, len, ml->lkey};
	struct ibv_send_wr wr = {.wr_id = off, .sg_list = &sge,
				 .num_sge = len ? 1 : 0, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED | flags},
			   *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)mr->addr + off;
	wr.wr.rdma.rkey = mr->rkey;
	return ibv_post_send(qp, &wr, &bad);
}

#define write_at(qp, ms, mr, off, len, flags) \
	rdma_at(qp, IBV_WR_RDMA_WRITE, ms, mr, off, len, flags)
#define read_at(qp, ml, mr, off, len, flags) \
	rdma_at(qp, IBV_WR_RDMA_READ, ml, mr, off, len, flags)

/* The writer's completion of the WRITE just posted. */
static void written(struct ibv_cq *scq)
{
	struct ibv_wc wc;

	if (vu_poll(scq, &wc, POLL_MS) != 1 || wc.status ||
	    wc.opcode != IBV_WC_RDMA_WRITE)
		die("the writer's completion");
}

/* The reader's completion of the READ just posted: its status, or -1. */
static int read_status(struct ibv_cq *scq)
{
	struct ibv_wc wc;

	if (vu_poll(scq, &wc, POLL_MS) != 1)
		return -1;
	return wc.status ? (int)wc.status
			 : wc.opcode == IBV_WC_RDMA_READ ? 0 : -1;
}

/* Whether wc is the target's completion (opcode op) of a WRITE or READ of
 * len bytes at addr from src_qp on qp. */
static int told(const struct ibv_wc *wc, int got, unsigned op, uint64_t addr,
		uint32_t len, const struct ibv_qp *qp, uint32_t src_qp)
{
	return got == 1 && wc->status == IBV_WC_SUCCESS &&
	       wc->opcode == op && wc->byte_len == len &&
	       wc->wr_id == addr && wc->qp_num == qp->qp_num &&
	       wc->src_qp == src_qp && !(wc->wc_flags & IBV_WC_WITH_IMM);
}

/* Whether wc is the target's completion of a WRITE of len bytes at addr
 * from src_qp into qp. */
static int notified(const struct ibv_wc *wc, int got, uint64_t addr,
		    uint32_t len, const struct ibv_qp *qp, uint32_t src_qp)
{
	return told(wc, got, SRNIC_WC_REMOTE_WRITE, addr, len, qp, src_qp);
}

int main(void)
{
	struct ibv_context *ctx = vu_open_first();
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq, *ecq;
	struct ibv_qp *qp[2];
	struct ibv_mr *ms, *mr, *ml;
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_wc wc;
	uint8_t *src, *dst, *back;
	struct pollfd p;
	void *ectx;
	int got, i, in_order = 1;

	if (!ctx)
		die("no device");
	src = malloc(LEN);
	dst = malloc(LEN);
	back = malloc(LEN);
	pd = ibv_alloc_pd(ctx);
	ch = ibv_create_comp_channel(ctx);
	if (!src || !dst || !back || !pd || !ch ||
	    ibv_query_gid(ctx, VU_PORT, VU_GID_INDEX, &gid))
		die("memory, PD, channel or GID");
	vu_fill(src, LEN, 11);
	memset(dst, 0xee, LEN);
	memset(back, 0xdd, LEN);
	scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 64, NULL, ch, 0);
	ms = ibv_reg_mr(pd, src, LEN, IBV_ACCESS_LOCAL_WRITE);
	mr = ibv_reg_mr(pd, dst, LEN,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ);
	ml = ibv_reg_mr(pd, back, LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!scq || !rcq || !ms || !mr || !ml)
		die("CQs or MRs");
	qp[0] = vu_create_rc_qp(pd, scq, 32, 4, 1, NULL);
	qp[1] = vu_create_rc_qp(pd, rcq, 32, 4, 1, NULL);
	if (!qp[0] || !qp[1] ||
	    vu_loop_connect(qp, &gid,
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ))
		die("QPs");
	{
		struct ibv_sge rs = {(uintptr_t)dst, LEN, mr->lkey};
		struct ibv_recv_wr rw = {.wr_id = RECV_ID, .sg_list = &rs,
					 .num_sge = 1}, *rbad;

		if (ibv_post_recv(qp[1], &rw, &rbad))
			die("post_recv");
	}
	vu_check(srnic_qp_accept_notify(qp[1], 1) == 0, NULL,
		 "b's QP accepts completions of WRITEs and READs");

	/* 1 MiB with the flag, b's CQ armed */
	ibv_req_notify_cq(rcq, 0);
	if (write_at(qp[0], ms, mr, 0, LEN, SRNIC_SEND_REMOTE_NOTIFY))
		die("post (1 MiB)");
	written(scq);
	p = (struct pollfd){.fd = ch->fd, .events = POLLIN};
	got = poll(&p, 1, POLL_MS) == 1 && !ibv_get_cq_event(ch, &ecq, &ectx);
	vu_check(got && ecq == rcq, NULL,
		 "the target's armed CQ has its event");
	if (got)
		ibv_ack_cq_events(ecq, 1);
	got = vu_poll(rcq, &wc, POLL_MS);
	vu_check(notified(&wc, got, (uintptr_t)dst, LEN, qp[1],
			  qp[0]->qp_num),
		 NULL, "1 MiB: the target's completion (%s, opcode %#x, "
		 "%u bytes)", vu_wc_str(&wc, got), got ? wc.opcode : 0,
		 got ? wc.byte_len : 0);
	vu_check(!memcmp(src, dst, LEN), NULL, "1 MiB: every byte landed");

	/* without the flag: nothing at the target */
	if (write_at(qp[0], ms, mr, 4096, 8192, 0))
		die("post (plain)");
	written(scq);
	got = vu_poll(rcq, &wc, 200);
	vu_check(got == 0, NULL, "a WRITE without the flag: no completion "
		 "at the target (%s)", vu_wc_str(&wc, got));

	/* 16 of them, of 1 to 16 KiB */
	for (i = 0; i < 16; i++)
		if (write_at(qp[0], ms, mr, (uint64_t)i << 16,
			     (uint32_t)(i + 1) << 10,
			     SRNIC_SEND_REMOTE_NOTIFY))
			die("post (16)");
	for (i = 0; i < 16; i++)
		written(scq);
	for (i = 0; i < 16; i++) {
		got = vu_poll(rcq, &wc, POLL_MS);
		in_order &= notified(&wc, got,
				     (uintptr_t)dst + ((uint64_t)i << 16),
				     (uint32_t)(i + 1) << 10, qp[1],
				     qp[0]->qp_num);
	}
	vu_check(in_order, NULL, "16 WRITEs: 16 completions at the target, in "
		 "order, each with its address and length");
	vu_check(!memcmp(src, dst, LEN), NULL, "... every byte landed");

	/* empty */
	if (write_at(qp[0], ms, mr, 0, 0, SRNIC_SEND_REMOTE_NOTIFY))
		die("post (empty)");
	written(scq);
	got = vu_poll(rcq, &wc, POLL_MS);
	vu_check(notified(&wc, got, (uintptr_t)dst, 0, qp[1], qp[0]->qp_num),
		 NULL, "an empty WRITE: a completion of 0 bytes (%s)",
		 vu_wc_str(&wc, got));

	/* the receive is still there */
	{
		struct ibv_sge ss = {(uintptr_t)src, 64, ms->lkey};
		struct ibv_send_wr sw = {.wr_id = 9, .sg_list = &ss,
					 .num_sge = 1, .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_SIGNALED},
				   *sbad;

		if (ibv_post_send(qp[0], &sw, &sbad))
			die("post (SEND)");
		if (vu_poll(scq, &wc, POLL_MS) != 1 || wc.status)
			die("the SEND's completion");
		got = vu_poll(rcq, &wc, POLL_MS);
		vu_check(got == 1 && !wc.status && wc.opcode == IBV_WC_RECV &&
				 wc.wr_id == RECV_ID && wc.byte_len == 64,
			 NULL, "a SEND then takes the receive posted before "
			 "the WRITEs (%s)", vu_wc_str(&wc, got));

		sw.send_flags |= SRNIC_SEND_REMOTE_NOTIFY;
		vu_check(ibv_post_send(qp[0], &sw, &sbad) == EINVAL, NULL,
			 "the flag on a SEND: EINVAL");
	}
	{
		struct ibv_sge ls = {(uintptr_t)back, 8, ml->lkey};
		struct ibv_send_wr fa = {.wr_id = 10, .sg_list = &ls,
					 .num_sge = 1,
					 .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
					 .send_flags = IBV_SEND_SIGNALED |
						       SRNIC_SEND_REMOTE_NOTIFY},
				   *rbad;

		fa.wr.atomic.remote_addr = (uintptr_t)dst;
		fa.wr.atomic.rkey = mr->rkey;
		fa.wr.atomic.compare_add = 1;
		vu_check(ibv_post_send(qp[0], &fa, &rbad) == EINVAL, NULL,
			 "the flag on an atomic: EINVAL");
	}

	/* READs: the target's completion before the reader's own */
	ibv_req_notify_cq(rcq, 0);
	if (read_at(qp[0], ml, mr, 0, LEN, SRNIC_SEND_REMOTE_NOTIFY))
		die("post (READ 1 MiB)");
	vu_check(read_status(scq) == 0, NULL, "READ 1 MiB: the reader's "
		 "completion");
	got = vu_poll(rcq, &wc, 0);
	vu_check(told(&wc, got, SRNIC_WC_REMOTE_READ, (uintptr_t)dst, LEN,
		      qp[1], qp[0]->qp_num),
		 NULL, "READ 1 MiB: the target's completion, there before the "
		 "reader's (%s, opcode %#x, %u bytes)", vu_wc_str(&wc, got),
		 got ? wc.opcode : 0, got ? wc.byte_len : 0);
	p = (struct pollfd){.fd = ch->fd, .events = POLLIN};
	got = poll(&p, 1, POLL_MS) == 1 && !ibv_get_cq_event(ch, &ecq, &ectx);
	vu_check(got && ecq == rcq, NULL, "... and its armed CQ's event");
	if (got)
		ibv_ack_cq_events(ecq, 1);
	vu_check(!memcmp(back, dst, LEN), NULL, "READ 1 MiB: every byte read");

	if (read_at(qp[0], ml, mr, 4096, 8192, 0) || read_status(scq))
		die("READ (plain)");
	got = vu_poll(rcq, &wc, 200);
	vu_check(got == 0, NULL, "a READ without the flag: no completion "
		 "at the target (%s)", vu_wc_str(&wc, got));

	memset(back, 0xdd, LEN);
	in_order = 1;
	for (i = 0; i < 8; i++)
		if (read_at(qp[0], ml, mr, (uint64_t)i << 17,
			    (uint32_t)(i + 1) << 12, SRNIC_SEND_REMOTE_NOTIFY))
			die("post (8 READs)");
	for (i = 0; i < 8; i++)
		if (read_status(scq))
			die("the reader's completions (8 READs)");
	for (i = 0; i < 8; i++) {
		got = vu_poll(rcq, &wc, POLL_MS);
		in_order &= told(&wc, got, SRNIC_WC_REMOTE_READ,
				 (uintptr_t)dst + ((uint64_t)i << 17),
				 (uint32_t)(i + 1) << 12, qp[1],
				 qp[0]->qp_num);
	}
	vu_check(in_order, NULL, "8 READs: 8 completions at the target, in "
		 "order, each with its address and length");
	for (i = 0; i < 8; i++)
		in_order &= !memcmp(back + ((size_t)i << 17),
				    dst + ((size_t)i << 17),
				    (size_t)(i + 1) << 12);
	vu_check(in_order, NULL, "... every byte read");
	/* a QP that does not accept them refuses the WRITE */
	{
		struct ibv_qp_init_attr ua = {0};
		struct ibv_qp *uc;

		srnic_qp_accept_notify(qp[1], 0);
		if (write_at(qp[0], ms, mr, 0, 64, SRNIC_SEND_REMOTE_NOTIFY))
			die("post (refused)");
		got = vu_poll(scq, &wc, POLL_MS);
		vu_check(got == 1 && wc.status == IBV_WC_REM_INV_REQ_ERR, NULL,
			 "a target that does not accept them refuses the WRITE "
			 "(%s)", vu_wc_str(&wc, got));
		got = vu_poll(rcq, &wc, 200);
		vu_check(got == 0 || wc.status == IBV_WC_WR_FLUSH_ERR, NULL,
			 "... and has no completion of it (%s)",
			 vu_wc_str(&wc, got));
		ua.send_cq = ua.recv_cq = scq;
		ua.qp_type = IBV_QPT_UC;
		ua.cap.max_send_wr = ua.cap.max_recv_wr = 1;
		ua.cap.max_send_sge = ua.cap.max_recv_sge = 1;
		uc = ibv_create_qp(pd, &ua);
		vu_check(uc && srnic_qp_accept_notify(uc, 1) == EINVAL, NULL,
			 "a UC QP does not accept them: EINVAL");
	}
	/* ... nor a READ (a pair of its own: a's QP is in error now) */
	{
		struct ibv_qp *q2[2];

		q2[0] = vu_create_rc_qp(pd, scq, 4, 4, 1, NULL);
		q2[1] = vu_create_rc_qp(pd, rcq, 4, 4, 1, NULL);
		if (!q2[0] || !q2[1] ||
		    vu_loop_connect(q2, &gid,
				    IBV_ACCESS_REMOTE_WRITE |
					    IBV_ACCESS_REMOTE_READ) ||
		    read_at(q2[0], ml, mr, 0, 64, SRNIC_SEND_REMOTE_NOTIFY))
			die("a second pair");
		vu_check(read_status(scq) == IBV_WC_REM_INV_REQ_ERR, NULL,
			 "a target that does not accept them refuses the READ");
		got = vu_poll(rcq, &wc, 200);
		vu_check(got == 0, NULL, "... and has no completion of it (%s)",
			 vu_wc_str(&wc, got));
	}
	printf("# %u checks, %u failed\n", vu_checks, vu_failed);
	return vu_failed ? 1 : 0;
}
