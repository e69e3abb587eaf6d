/* SPDX-License-Identifier: MIT */
/*
 * early_event: seed 002's early interrupt (srnic_cq_set_early).  A CQ that
 * asks for early events has its event as a message that will complete
 * into it begins, before the message has landed; one that does not, once
 * it has.
 *
 *   early_event [-m MIB]
 *
 * Two RC QPs of one program, connected through the node's own GID: b's
 * receive CQ is on a completion channel.  For each mode (early, then
 * plain) b posts a receive of MIB MiB (default 256) filled with a marker,
 * arms its CQ, and a SENDs that many bytes of a pattern; the program waits
 * for the event, then looks at the receive's last 8 bytes: still the
 * marker with early events (the event came before the data landed), the
 * pattern without.  Then it polls the completion (early: the poll that
 * finds nothing waits for it), checks every byte, and arms the CQ once
 * more: no second event comes for the message.  Then, as perftest's -e
 * does it, with early events: ROUNDS messages of MIB MiB, each time the
 * event, the CQ armed again, then one poll, which must hold that round's
 * completion, and no event after it (the completion came after the
 * arming, and makes none); and again with 256 KiB messages, which the
 * waiting poll lands itself, the arm lent to it; then two messages
 * behind one event (the second sent once the CQ is armed again), whose
 * one poll takes the first: the second makes an event, and nothing more
 * comes.  Then a poll that gives up (made short by SRNIC_EARLY_WAIT_MS)
 * before its message landed: the completion makes an event when it
 * comes, and perftest's way works again.  Last, a told message that
 * never completes (its receiving QP reset after the event): the poll
 * gives up after a second, no event or completion comes for it, the
 * next empty poll does not wait, and perftest's way works again on a new
 * pair of QPs.
 * Prints "ok"/"not ok" lines and "# N checks, M failed".
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "srnic.h"
#include "verbs_util.h"

#define MARK 0xee
#define ROUNDS 10
#define POLL_MS 30000

static void die(const char *what)
{
	fprintf(stderr, "early_event: %s\n", what);
	exit(2);
}

/* The next event within POLL_MS (its CQ in *ecq, not acknowledged). */
static int event_wait(struct ibv_comp_channel *ch, struct ibv_cq **ecq)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	void *ectx;

	return poll(&p, 1, POLL_MS) == 1 && !ibv_get_cq_event(ch, ecq, &ectx);
}

static int event_within(struct ibv_comp_channel *ch, int ms)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	struct ibv_cq *ecq;
	void *ectx;

	if (poll(&p, 1, ms) != 1 || ibv_get_cq_event(ch, &ecq, &ectx))
		return 0;
	ibv_ack_cq_events(ecq, 1);
	return 1;
}

/* Buffers and keys for the rounds of perftest_way. */
struct bufs {
	uint8_t *src, *dst;
	size_t len;
	struct ibv_mr *ms, *mr;
};

/*
 * perftest's way, with early events: ROUNDS messages of b->len bytes from
 * qp[0] to qp[1], each time the event, the CQ armed again, then one poll,
 * which must hold that round's completion, and no event after it (the
 * completion came after the arming: its event is held back, and dropped
 * once the poll took it).  rcq is armed when it is called.
 */
static void perftest_way(struct ibv_qp *qp[2], struct ibv_cq *scq,
			 struct ibv_cq *rcq, struct ibv_comp_channel *ch,
			 const struct bufs *b, const char *what)
{
	int r, polled = 0, extra = 0;
	struct ibv_cq *ecq;

	for (r = 0; r < ROUNDS; r++) {
		struct ibv_sge rs = {(uintptr_t)b->dst, (uint32_t)b->len,
				     b->mr->lkey};
		struct ibv_sge ss = {(uintptr_t)b->src, (uint32_t)b->len,
				     b->ms->lkey};
		struct ibv_recv_wr rw = {.wr_id = 100 + r, .sg_list = &rs,
					 .num_sge = 1}, *rbad;
		struct ibv_send_wr sw = {.wr_id = 4, .sg_list = &ss,
					 .num_sge = 1, .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_SIGNALED},
				   *sbad;
		struct ibv_wc wc;

		if (ibv_post_recv(qp[1], &rw, &rbad) ||
		    ibv_post_send(qp[0], &sw, &sbad))
			die("post");
		if (!event_wait(ch, &ecq))
			die("no event (perftest's way)");
		ibv_ack_cq_events(ecq, 1);
		ibv_req_notify_cq(rcq, 0);
		/* (its own: one an earlier poll left would be another
		 * round's) */
		polled += ibv_poll_cq(rcq, 1, &wc) == 1 && !wc.status &&
			  wc.wr_id == 100u + r;
		if (vu_poll(scq, &wc, POLL_MS) != 1 || wc.status)
			die("the SEND did not complete");
		/* (the next round's event is the next message's) */
		extra += event_within(ch, 20);
		if (extra)
			ibv_req_notify_cq(rcq, 0);
	}
	vu_check(polled == ROUNDS && !extra, NULL,
		 "%s: %d of %d single polls after an event held the "
		 "completion, %d events with nothing behind them",
		 what, polled, ROUNDS, extra);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx = vu_open_first();
	size_t len = 256u << 20;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq, *ecq;
	struct ibv_qp *qp[2];
	struct ibv_mr *ms, *mr;
	union ibv_gid gid;
	struct ibv_pd *pd;
	uint8_t *src, *dst;
	struct bufs b;
	int c, early;

	while ((c = getopt(argc, argv, "m:")) != -1)
		if (c == 'm')
			len = strtoul(optarg, NULL, 0) << 20;
	if (!ctx || !len || len > (1ul << 30))
		die("device or -m");
	src = malloc(len);
	dst = malloc(len);
	pd = ibv_alloc_pd(ctx);
	ch = ibv_create_comp_channel(ctx);
	if (!src || !dst || !pd || !ch ||
	    ibv_query_gid(ctx, VU_PORT, VU_GID_INDEX, &gid))
		die("memory, PD, channel or GID");
	vu_fill(src, len, 7);
	scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 16, NULL, ch, 0);
	ms = ibv_reg_mr(pd, src, len, IBV_ACCESS_LOCAL_WRITE);
	mr = ibv_reg_mr(pd, dst, len, IBV_ACCESS_LOCAL_WRITE);
	if (!scq || !rcq || !ms || !mr)
		die("CQs or MRs");
	qp[0] = vu_create_rc_qp(pd, scq, 4, 4, 1, NULL);
	qp[1] = vu_create_rc_qp(pd, rcq, 4, 4, 1, NULL);
	if (!qp[0] || !qp[1] || vu_loop_connect(qp, &gid, 0))
		die("QPs");
	/* (a quarter of MIB a round: long to land, after its event, and
	 * well within the poll's second on a busy machine) */
	b = (struct bufs){.src = src, .dst = dst, .len = len / 4, .ms = ms,
			  .mr = mr};
	vu_check(srnic_cq_set_early(scq, 100) == EINVAL, NULL,
		 "a CQ with no channel has no early events (EINVAL)");
	vu_check(srnic_cq_set_early(rcq, SRNIC_MAX_EARLY_US + 1) == EINVAL,
		 NULL, "a wait over SRNIC_MAX_EARLY_US is refused");

	for (early = 1; early >= 0; early--) {
		struct ibv_sge rs = {(uintptr_t)dst, (uint32_t)len, mr->lkey};
		struct ibv_sge ss = {(uintptr_t)src, (uint32_t)len, ms->lkey};
		struct ibv_recv_wr rw = {.wr_id = 1, .sg_list = &rs,
					 .num_sge = 1}, *rbad;
		struct ibv_send_wr sw = {.wr_id = 2, .sg_list = &ss,
					 .num_sge = 1,
					 .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_SIGNALED},
				   *sbad;
		const char *mode = early ? "early" : "plain";
		uint64_t tail, t0;
		struct ibv_wc wc;
		int got = 0, landed;

		memset(dst, MARK, len);
		vu_check(srnic_cq_set_early(rcq, early ? SRNIC_MAX_EARLY_US
						       : 0) == 0,
			 NULL, "%s: srnic_cq_set_early", mode);
		if (ibv_post_recv(qp[1], &rw, &rbad) ||
		    ibv_req_notify_cq(rcq, 0) ||
		    ibv_post_send(qp[0], &sw, &sbad))
			die("post");
		if (!event_wait(ch, &ecq))
			die("no event");
		memcpy(&tail, dst + len - 8, 8);
		landed = tail != 0xeeeeeeeeeeeeeeeeull;
		ibv_ack_cq_events(ecq, 1);
		vu_check(early ? !landed : landed, NULL,
			 "%s: at the event the message's last bytes had %s",
			 mode, landed ? "landed" : "not landed yet");
		/* (the early poll waits up to its spin, then polls again) */
		t0 = vu_now_ms();
		while (!got && vu_now_ms() - t0 < POLL_MS)
			got = ibv_poll_cq(rcq, 1, &wc);
		vu_check(got == 1 && !wc.status && wc.byte_len == len &&
				 wc.opcode == IBV_WC_RECV,
			 NULL, "%s: the receive completed (%s)", mode,
			 vu_wc_str(&wc, got));
		vu_check(memcmp(dst, src, len) == 0, NULL,
			 "%s: every byte of %zu MiB landed right", mode,
			 len >> 20);
		if (vu_poll(scq, &wc, POLL_MS) != 1 || wc.status)
			die("the SEND did not complete");
		ibv_req_notify_cq(rcq, 0);
		vu_check(!event_within(ch, 200), NULL,
			 "%s: one event for the message, none after", mode);
	}
	/* perftest's way: the event, arm again, one poll */
	srnic_cq_set_early(rcq, SRNIC_MAX_EARLY_US);
	ibv_req_notify_cq(rcq, 0);
	perftest_way(qp, scq, rcq, ch, &b, "perftest's way");
	/* ... with messages that land within the wait's spin: the wait,
	 * its CQ's arm lent to it, lands them itself, and gives the arm
	 * back after its poll */
	{
		struct bufs small = b;

		small.len = (size_t)256 << 10;
		perftest_way(qp, scq, rcq, ch, &small,
			     "perftest's way, 256 KiB (landed by the wait)");
	}
	/* Two messages behind one event, the poll taking one: the second
	 * (landed while the arm was lent, or after) makes an event of its
	 * own, and nothing more comes.  The second is sent once the CQ is
	 * armed again: one that landed before the arming would make no
	 * event (verbs: only completions after the arm do), and on a busy
	 * machine the program may wake from the first's event after both
	 * have landed (a CI run's 1 0 0). */
	{
		const uint32_t half = 256u << 10;
		struct ibv_sge rs[2] = {{(uintptr_t)dst, half, mr->lkey},
					{(uintptr_t)dst + half, half,
					 mr->lkey}};
		struct ibv_sge ss[2] = {{(uintptr_t)src, half, ms->lkey},
					{(uintptr_t)src, 64, ms->lkey}};
		struct ibv_wc wc;
		int i, first, second, got;

		for (i = 0; i < 2; i++) {
			struct ibv_recv_wr rw = {.wr_id = 200 + i,
						 .sg_list = &rs[i],
						 .num_sge = 1}, *rbad;

			if (ibv_post_recv(qp[1], &rw, &rbad))
				die("post (two messages)");
		}
		for (i = 0; i < 2; i++) {
			struct ibv_send_wr sw = {.wr_id = 9, .sg_list = &ss[i],
						 .num_sge = 1,
						 .opcode = IBV_WR_SEND,
						 .send_flags = IBV_SEND_SIGNALED},
					   *sbad;

			if (ibv_post_send(qp[0], &sw, &sbad))
				die("post (two messages)");
			if (i)
				continue;
			if (!event_wait(ch, &ecq))
				die("no event (two messages)");
			ibv_ack_cq_events(ecq, 1);
			ibv_req_notify_cq(rcq, 0);
		}
		first = ibv_poll_cq(rcq, 1, &wc) == 1 && !wc.status &&
			wc.wr_id == 200;
		got = event_wait(ch, &ecq);
		if (got)
			ibv_ack_cq_events(ecq, 1);
		ibv_req_notify_cq(rcq, 0);
		second = got && ibv_poll_cq(rcq, 1, &wc) == 1 && !wc.status &&
			 wc.wr_id == 201 && wc.byte_len == 64;
		vu_check(first && second && !event_within(ch, 200), NULL,
			 "two messages behind one event: one poll took the "
			 "first, the second made an event (%d %d %d), none more",
			 first, got, second);
		/* (a second left behind is not the next check's) */
		while (!second && ibv_poll_cq(rcq, 1, &wc) == 1)
			second = 1;
		for (i = 0; i < 2; i++)
			if (vu_poll(scq, &wc, POLL_MS) != 1 || wc.status)
				die("the SENDs did not complete (two messages)");
	}
	/* A poll that gives up before its told message has landed (made
	 * short by SRNIC_EARLY_WAIT_MS): the completion, when it comes,
	 * makes an event as any other, and the rounds after go as before. */
	{
		struct ibv_sge rs = {(uintptr_t)dst, (uint32_t)len, mr->lkey};
		struct ibv_sge ss = {(uintptr_t)src, (uint32_t)len, ms->lkey};
		struct ibv_recv_wr rw = {.wr_id = 7, .sg_list = &rs,
					 .num_sge = 1}, *rbad;
		struct ibv_send_wr sw = {.wr_id = 8, .sg_list = &ss,
					 .num_sge = 1, .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_SIGNALED},
				   *sbad;
		struct ibv_wc wc;
		int got;

		if (ibv_post_recv(qp[1], &rw, &rbad) ||
		    ibv_post_send(qp[0], &sw, &sbad))
			die("post");
		if (!event_wait(ch, &ecq))
			die("no event (give-up)");
		ibv_ack_cq_events(ecq, 1);
		ibv_req_notify_cq(rcq, 0);
		setenv("SRNIC_EARLY_WAIT_MS", "1", 1);
		got = ibv_poll_cq(rcq, 1, &wc);
		unsetenv("SRNIC_EARLY_WAIT_MS");
		vu_check(got == 0, NULL,
			 "a poll gave up before its %zu MiB had landed (got %d)",
			 len >> 20, got);
		got = event_wait(ch, &ecq);
		if (got)
			ibv_ack_cq_events(ecq, 1);
		vu_check(got, NULL, "... and the completion made an event");
		got = ibv_poll_cq(rcq, 1, &wc);
		vu_check(got == 1 && !wc.status && wc.wr_id == 7, NULL,
			 "... which a poll then found (%s)", vu_wc_str(&wc, got));
		if (vu_poll(scq, &wc, POLL_MS) != 1 || wc.status)
			die("the SEND did not complete (give-up)");
		ibv_req_notify_cq(rcq, 0);
		perftest_way(qp, scq, rcq, ch, &b,
			     "after a give-up its completion outran, "
			     "perftest's way");
	}
	/* A told message that never completes: its receiver reset midway.
	 * The poll after its event gives up after a second; the CQ's early
	 * events then work as before, for a new pair of QPs. */
	{
		struct ibv_sge rs = {(uintptr_t)dst, (uint32_t)len, mr->lkey};
		struct ibv_sge ss = {(uintptr_t)src, (uint32_t)len, ms->lkey};
		struct ibv_recv_wr rw = {.wr_id = 5, .sg_list = &rs,
					 .num_sge = 1}, *rbad;
		struct ibv_send_wr sw = {.wr_id = 6, .sg_list = &ss,
					 .num_sge = 1, .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_SIGNALED},
				   *sbad;
		struct ibv_qp_attr reset = {.qp_state = IBV_QPS_RESET};
		struct ibv_qp_attr err = {.qp_state = IBV_QPS_ERR};
		struct ibv_cq *scq2 = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		struct ibv_qp *q2[2];
		struct ibv_wc wc;
		uint64_t t0, ms_waited;
		int got;

		if (ibv_post_recv(qp[1], &rw, &rbad) ||
		    ibv_post_send(qp[0], &sw, &sbad))
			die("post");
		if (!event_wait(ch, &ecq))
			die("no event (reset)");
		ibv_ack_cq_events(ecq, 1);
		ibv_req_notify_cq(rcq, 0);
		if (ibv_modify_qp(qp[1], &reset, IBV_QP_STATE) ||
		    ibv_modify_qp(qp[0], &err, IBV_QP_STATE))
			die("reset");
		t0 = vu_now_ms();
		got = ibv_poll_cq(rcq, 1, &wc);
		ms_waited = vu_now_ms() - t0;
		vu_check(got == 0 && ms_waited >= 900 && ms_waited < 5000,
			 NULL, "a told message that never completes: the poll "
			 "gave up after %lu ms (got %d)",
			 (unsigned long)ms_waited, got);
		vu_check(!event_within(ch, 200), NULL,
			 "... and no event came for it");
		got = ibv_poll_cq(rcq, 1, &wc);
		vu_check(got == 0, NULL, "... nor a completion");
		t0 = vu_now_ms();
		got = ibv_poll_cq(rcq, 1, &wc);
		vu_check(vu_now_ms() - t0 < 100, NULL,
			 "an empty poll after it does not wait (%lu ms)",
			 (unsigned long)(vu_now_ms() - t0));
		q2[0] = scq2 ? vu_create_rc_qp(pd, scq2, 4, 4, 1, NULL) : NULL;
		q2[1] = vu_create_rc_qp(pd, rcq, 4, 4, 1, NULL);
		if (!q2[0] || !q2[1] || vu_loop_connect(q2, &gid, 0))
			die("the new QPs");
		perftest_way(q2, scq2, rcq, ch, &b,
			     "after the give-up, perftest's way");
	}
	printf("# %u checks, %u failed\n", vu_checks, vu_failed);
	return vu_failed ? 1 : 0;
}
