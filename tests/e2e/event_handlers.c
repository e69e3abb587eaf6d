/* SPDX-License-Identifier: MIT */
/*
 * event_handlers: several threads that handle one completion channel's
 * events (seed 002's "multiple interrupt handlers": each event goes to a
 * handler that is ready, never to a busy one, and waits for the next to
 * become ready when none is).
 *
 *   event_handlers [ROUNDS]
 *
 * HANDLERS threads wait in ibv_get_cq_event on one channel; NCQ CQs are
 * on it, each the send CQ of an RC QP connected to another through the
 * node's own GID.  Each round arms every CQ and posts one signaled WRITE
 * on each QP: NCQ events.  A handler that takes one is busy for BUSY_MS
 * (it polls the CQ, acknowledges the event, then sleeps), so the round's
 * events must go to NCQ different handlers, each exactly once; and with
 * some handlers kept busy (the last rounds), the events go to the others
 * only, waiting in the channel until one is ready again.
 * Prints "ok"/"not ok" lines and "# N checks, M failed".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_util.h"

#define HANDLERS 4
#define NCQ 3
#define BUSY_MS 30
#define POLL_MS 5000

static struct ibv_comp_channel *ch;
static struct ibv_cq *cq[NCQ];
static struct ibv_qp *qp[NCQ][2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int taken[NCQ];		/* events taken this round, by CQ */
static int by[HANDLERS];	/* ... by handler */
static int busy[HANDLERS];	/* taken while busy (never) */
static int now_busy[HANDLERS];
static int stop;
static int hold;		/* the last round: handlers > 0 stay busy */

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
	void *ectx;

	for (;;) {
		if (ibv_get_cq_event(ch, &ecq, &ectx))
			break;
		pthread_mutex_lock(&lock);
		if (stop) {
			pthread_mutex_unlock(&lock);
			ibv_ack_cq_events(ecq, 1);
			break;
		}
		k = cq_index(ecq);
		busy[me] += now_busy[me];
		now_busy[me] = 1;
		if (k >= 0)
			taken[k]++;
		by[me]++;
		pthread_mutex_unlock(&lock);
		if (k >= 0 && vu_poll(ecq, &wc, POLL_MS) != 1)
			fprintf(stderr, "handler %d: no completion behind the "
				"event of CQ %d\n", me, k);
		ibv_ack_cq_events(ecq, 1);
		do
			usleep(BUSY_MS * 1000);
		while (__atomic_load_n(&hold, __ATOMIC_ACQUIRE) && me > 0);
		pthread_mutex_lock(&lock);
		now_busy[me] = 0;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

/* One round: every CQ armed, a WRITE on each QP; wait for want events. */
static int round_of(uint64_t *buf, struct ibv_mr *mr, int want)
{
	uint64_t t0 = vu_now_ms();
	int i, got;

	pthread_mutex_lock(&lock);
	memset(taken, 0, sizeof(taken));
	memset(by, 0, sizeof(by));
	pthread_mutex_unlock(&lock);
	for (i = 0; i < NCQ; i++) {
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
	do {
		usleep(5000);
		pthread_mutex_lock(&lock);
		for (got = 0, i = 0; i < NCQ; i++)
			got += taken[i];
		pthread_mutex_unlock(&lock);
	} while (got < want && vu_now_ms() - t0 < POLL_MS);
	/* (every handler ready again before the next round) */
	usleep(2 * BUSY_MS * 1000);
	return got;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10, r, i, spread;
	struct ibv_context *ctx = vu_open_first();
	pthread_t th[HANDLERS];
	union ibv_gid gid;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	uint64_t *buf = calloc(2, 8);

	if (!ctx || !buf || rounds < 1)
		die("device, memory or rounds");
	pd = ibv_alloc_pd(ctx);
	ch = ibv_create_comp_channel(ctx);
	if (!pd || !ch || ibv_query_gid(ctx, VU_PORT, VU_GID_INDEX, &gid))
		die("PD, channel or GID");
	mr = ibv_reg_mr(pd, buf, 16,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	for (i = 0; i < NCQ; i++) {
		cq[i] = ibv_create_cq(ctx, 16, NULL, ch, 0);
		if (!cq[i] || vu_loop_pair(pd, cq[i], &gid,
					   IBV_ACCESS_REMOTE_WRITE, qp[i]))
			die("CQ or QPs");
	}
	if (!mr)
		die("MR");
	for (i = 0; i < HANDLERS; i++)
		pthread_create(&th[i], NULL, handler, (void *)(intptr_t)i);
	usleep(200000);	/* (all of them waiting) */

	for (r = 0; r < rounds; r++) {
		int got = round_of(buf, mr, NCQ), once = 1;

		for (i = 0; i < NCQ; i++)
			once &= taken[i] == 1;
		for (spread = 0, i = 0; i < HANDLERS; i++)
			spread += by[i] > 0;
		vu_check(got == NCQ && once && spread == NCQ, NULL,
			 "round %d: %d events, each once, to %d different "
			 "handlers (want %d)", r, got, spread, NCQ);
	}
	/* Handlers 1.. that take an event now stay busy: the next round's
	 * events find only the others ready, and wait for them. */
	__atomic_store_n(&hold, 1, __ATOMIC_RELEASE);
	round_of(buf, mr, NCQ);
	{
		int held[HANDLERS], nheld = 0, to_held = 0, got, once = 1;

		pthread_mutex_lock(&lock);
		for (i = 0; i < HANDLERS; i++)
			nheld += held[i] = i > 0 && now_busy[i];
		pthread_mutex_unlock(&lock);
		got = round_of(buf, mr, NCQ);
		for (i = 0; i < NCQ; i++)
			once &= taken[i] == 1;
		for (i = 0; i < HANDLERS; i++)
			to_held += held[i] ? by[i] : 0;
		vu_check(nheld > 0 && got == NCQ && once && !to_held, NULL,
			 "%d of %d handlers busy: the %d events waited for the "
			 "others, each once (%d taken, %d by busy ones)", nheld,
			 HANDLERS, NCQ, got, to_held);
	}
	for (i = 0; i < HANDLERS; i++)
		vu_check(!busy[i], NULL, "handler %d never took an event while "
			 "busy", i);
	__atomic_store_n(&hold, 0, __ATOMIC_RELEASE);

	/* Wake the handlers: one event each, then they stop. */
	pthread_mutex_lock(&lock);
	stop = 1;
	pthread_mutex_unlock(&lock);
	for (i = 0; i < HANDLERS; i++) {
		struct ibv_sge sge = {(uintptr_t)buf, 8, mr->lkey};
		struct ibv_send_wr wr = {0}, *bad;

		ibv_req_notify_cq(cq[0], 0);
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = (uintptr_t)(buf + 1);
		wr.wr.rdma.rkey = mr->rkey;
		ibv_post_send(qp[0][0], &wr, &bad);
		usleep(50000);
	}
	for (i = 0; i < HANDLERS; i++)
		pthread_join(th[i], NULL);
	printf("# %u checks, %u failed\n", vu_checks, vu_failed);
	return vu_failed ? 1 : 0;
}
