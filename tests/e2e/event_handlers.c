/* SPDX-License-Identifier: MIT */
/*
 * event_handlers: several threads that handle one completion channel's
 * events (seed 002's multiple interrupt handlers: each event goes to a
 * handler that is ready, and waits for the next one to become ready when
 * none is).
 *
 *   event_handlers [ROUNDS]
 *
 * HANDLERS threads wait in ibv_get_cq_event on one channel; NCQ CQs are on
 * it, each the send CQ of an RC QP connected to another through the
 * node's own GID.  An armed CQ and a signaled WRITE on its QP make one
 * event.
 *  - ROUNDS rounds of FEW events, a handler that took one staying busy
 *    until the round ends: every event is taken once, by FEW different
 *    handlers;
 *  - a round of NCQ events, more than there are handlers, each handler
 *    busy LATE_MS after each: every event is taken once, and the ones no
 *    handler was ready for are taken only once one is again (not before
 *    LATE_MS), so no handler takes more than its share;
 *  - a CQ destroyed with its event unread: the next wait has another
 *    CQ's event, never the destroyed one's.
 * Prints "ok"/"not ok" lines and "# N checks, M failed".
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_util.h"

#define HANDLERS 4
#define FEW 3
#define NCQ 6
#define LATE_MS 40
#define POLL_MS 10000

static struct ibv_comp_channel *ch;
static struct ibv_cq *cq[NCQ];
static struct ibv_qp *qp[NCQ][2];
static uint64_t *buf;
static struct ibv_mr *mr;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int taken[NCQ];		/* events taken this round, by CQ */
static uint64_t taken_at[NCQ];	/* ... when (ms since the round began) */
static int by[HANDLERS];	/* ... by handler */
static unsigned gen;		/* the round; main ends it by counting on */
static int timed;		/* busy LATE_MS, not until the round ends */
static uint64_t round_t0;
static int stop, exited;

static void die(const char *what)
{
	fprintf(stderr, "event_handlers: %s\n", what);
	exit(2);
}

static int cq_index(struct ibv_cq *c)
{
	for (int i = 0; i < NCQ; i++)
		if (cq[i] == c)
			return i;
	return -1;
}

static void *handler(void *arg)
{
	int me = (int)(intptr_t)arg, k;
	struct ibv_cq *ecq;
	struct ibv_wc wc;
	unsigned mine;
	void *ectx;

	while (!ibv_get_cq_event(ch, &ecq, &ectx)) {
		pthread_mutex_lock(&lock);
		if (stop) {
			exited++;
			pthread_cond_broadcast(&cv);
			pthread_mutex_unlock(&lock);
			ibv_ack_cq_events(ecq, 1);
			return NULL;
		}
		k = cq_index(ecq);
		if (k >= 0) {
			taken[k]++;
			taken_at[k] = vu_now_ms() - round_t0;
		}
		by[me]++;
		mine = gen;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&lock);
		if (k >= 0 && vu_poll(ecq, &wc, POLL_MS) != 1)
			fprintf(stderr, "handler %d: no completion behind the "
				"event of CQ %d\n", me, k);
		ibv_ack_cq_events(ecq, 1);
		/* busy: until the round ends, or LATE_MS */
		pthread_mutex_lock(&lock);
		if (timed) {
			pthread_mutex_unlock(&lock);
			usleep(LATE_MS * 1000);
		} else {
			while (gen == mine && !stop)
				pthread_cond_wait(&cv, &lock);
			pthread_mutex_unlock(&lock);
		}
	}
	return NULL;
}

static void fire(int i)
{
	struct ibv_sge sge = {(uintptr_t)buf, 8, mr->lkey};
	struct ibv_send_wr wr = {0}, *bad;

	ibv_req_notify_cq(cq[i], 0);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)(buf + 1);
	wr.wr.rdma.rkey = mr->rkey;
	if (ibv_post_send(qp[i][0], &wr, &bad))
		die("post");
}

/* Events on the first n CQs; how many were taken in POLL_MS.  The round
 * stays open (the handlers busy) until end_round(). */
static int round_of(int n, int busy_timed)
{
	uint64_t t0;
	int i, got;

	pthread_mutex_lock(&lock);
	memset(taken, 0, sizeof(taken));
	memset(by, 0, sizeof(by));
	timed = busy_timed;
	round_t0 = t0 = vu_now_ms();
	pthread_mutex_unlock(&lock);
	for (i = 0; i < n; i++)
		fire(i);
	pthread_mutex_lock(&lock);
	for (;;) {
		for (got = 0, i = 0; i < NCQ; i++)
			got += taken[i];
		if (got >= n || vu_now_ms() - t0 > POLL_MS)
			break;
		pthread_mutex_unlock(&lock);
		usleep(2000);
		pthread_mutex_lock(&lock);
	}
	pthread_mutex_unlock(&lock);
	usleep(20000);	/* (a second event for one CQ would show now) */
	return got;
}

static void end_round(void)
{
	pthread_mutex_lock(&lock);
	gen++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&lock);
	usleep(2 * LATE_MS * 1000);	/* (every handler waiting again) */
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10, r, i;
	struct ibv_context *ctx = vu_open_first();
	pthread_t th[HANDLERS];
	union ibv_gid gid;
	struct ibv_pd *pd;

	buf = calloc(2, 8);
	if (!ctx || !buf || rounds < 1)
		die("device, memory or rounds");
	pd = ibv_alloc_pd(ctx);
	ch = ibv_create_comp_channel(ctx);
	if (!pd || !ch || ibv_query_gid(ctx, VU_PORT, VU_GID_INDEX, &gid))
		die("PD, channel or GID");
	mr = ibv_reg_mr(pd, buf, 16,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		die("MR");
	for (i = 0; i < NCQ; i++) {
		cq[i] = ibv_create_cq(ctx, 16, NULL, ch, 0);
		if (!cq[i] || vu_loop_pair(pd, cq[i], &gid,
					   IBV_ACCESS_REMOTE_WRITE, qp[i]))
			die("CQ or QPs");
	}
	for (i = 0; i < HANDLERS; i++)
		pthread_create(&th[i], NULL, handler, (void *)(intptr_t)i);
	usleep(200000);	/* (all of them waiting) */

	for (r = 0; r < rounds; r++) {
		int got = round_of(FEW, 0), once = 1, spread = 0;

		pthread_mutex_lock(&lock);
		for (i = 0; i < FEW; i++)
			once &= taken[i] == 1;
		for (i = 0; i < HANDLERS; i++)
			spread += by[i] > 0;
		pthread_mutex_unlock(&lock);
		vu_check(got == FEW && once && spread == FEW, NULL,
			 "round %d: %d events, each taken once, by %d different "
			 "handlers (want %d)", r, got, spread, FEW);
		end_round();
	}

	/* More events than handlers: the rest wait for one to be ready. */
	{
		int got = round_of(NCQ, 1), once = 1, late = 0, most = 0;

		pthread_mutex_lock(&lock);
		for (i = 0; i < NCQ; i++) {
			once &= taken[i] == 1;
			late += taken[i] && taken_at[i] >= LATE_MS - 5;
		}
		for (i = 0; i < HANDLERS; i++)
			most = by[i] > most ? by[i] : most;
		pthread_mutex_unlock(&lock);
		vu_check(got == NCQ && once && late >= NCQ - HANDLERS &&
				 most <= (NCQ + HANDLERS - 1) / HANDLERS + 1,
			 NULL, "%d events for %d handlers: each taken once, %d "
			 "only once a handler was ready again (at least %d), "
			 "at most %d by one", NCQ, HANDLERS, late,
			 NCQ - HANDLERS, most);
		end_round();
	}

	/* Stop: one event at a time until every handler has left. */
	pthread_mutex_lock(&lock);
	stop = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&lock);
	for (i = 0; i < HANDLERS; i++) {
		uint64_t t0 = vu_now_ms();
		int left;

		fire(0);
		do {
			usleep(2000);
			pthread_mutex_lock(&lock);
			left = exited;
			pthread_mutex_unlock(&lock);
		} while (left <= i && vu_now_ms() - t0 < POLL_MS);
		if (left <= i)
			die("a handler did not stop");
		{
			struct ibv_wc wc;	/* (the stop WRITE's) */

			vu_poll(cq[0], &wc, POLL_MS);
		}
	}
	for (i = 0; i < HANDLERS; i++)
		pthread_join(th[i], NULL);

	/* A CQ destroyed with its event unread: the kernel's channel drops
	 * the event, so the next wait must see the next CQ's, never the
	 * freed one. */
	{
		struct ibv_cq *ecq;
		struct ibv_wc wc;
		void *ectx;
		int last = NCQ - 1, ok;

		fire(last);
		ok = vu_poll(cq[last], &wc, POLL_MS) == 1 &&
		     !ibv_destroy_qp(qp[last][0]) &&
		     !ibv_destroy_qp(qp[last][1]) && !ibv_destroy_cq(cq[last]);
		fire(0);
		/* (nobody waits now: the pipe has it, or the wait would
		 * hang, not fail) */
		ok = ok && poll(&(struct pollfd){.fd = ch->fd, .events = POLLIN},
				1, POLL_MS) == 1 &&
		     !ibv_get_cq_event(ch, &ecq, &ectx);
		vu_check(ok && ecq == cq[0], NULL,
			 "an unread event of a destroyed CQ is dropped: the "
			 "next wait has the live CQ's");
		if (ok)
			ibv_ack_cq_events(ecq, 1);
	}
	printf("# %u checks, %u failed\n", vu_checks, vu_failed);
	return vu_failed ? 1 : 0;
}
