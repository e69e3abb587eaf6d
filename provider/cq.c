/* SPDX-License-Identifier: MIT */
/*
 * Completion queues, polled, or waited on through a completion channel.
 *
 * A channel is a pipe: libibverbs' ibv_create_comp_channel would ask the
 * kernel for it, so srnic's preload library (preload.c) makes it instead,
 * and a CQ created on it opens its own write end (channel.c).  An armed
 * CQ's next completion (or next solicited or failed one) makes the
 * datapath write the verbs CQ's address into the pipe, which is what
 * ibv_get_cq_event reads (srnic_cq_event, srnic_queue.h), or hand it to
 * the thread that waits spinning in the channel's slot (channel.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "srnic.h"
#include "srnic_provider.h"

/* After this many empty polls in a row a poller yields its CPU once: on a
 * machine with fewer cores than busy threads that is what lets the engine
 * run at all. */
#define EMPTY_POLLS_BEFORE_YIELD 64

static const enum ibv_wc_status wc_status[] = {
	[SRNIC_WC_SUCCESS] = IBV_WC_SUCCESS,
	[SRNIC_WC_LOC_LEN_ERR] = IBV_WC_LOC_LEN_ERR,
	[SRNIC_WC_LOC_QP_OP_ERR] = IBV_WC_LOC_QP_OP_ERR,
	[SRNIC_WC_LOC_PROT_ERR] = IBV_WC_LOC_PROT_ERR,
	[SRNIC_WC_WR_FLUSH_ERR] = IBV_WC_WR_FLUSH_ERR,
	[SRNIC_WC_REM_INV_REQ_ERR] = IBV_WC_REM_INV_REQ_ERR,
	[SRNIC_WC_REM_ACCESS_ERR] = IBV_WC_REM_ACCESS_ERR,
	[SRNIC_WC_REM_OP_ERR] = IBV_WC_REM_OP_ERR,
	[SRNIC_WC_RETRY_EXC_ERR] = IBV_WC_RETRY_EXC_ERR,
	[SRNIC_WC_RNR_RETRY_EXC_ERR] = IBV_WC_RNR_RETRY_EXC_ERR,
	[SRNIC_WC_GENERAL_ERR] = IBV_WC_GENERAL_ERR,
	[SRNIC_WC_MW_BIND_ERR] = IBV_WC_MW_BIND_ERR,
};

enum ibv_wc_status srnic_wc_status_of(uint8_t status)
{
	return status < sizeof(wc_status) / sizeof(wc_status[0])
		       ? wc_status[status]
		       : IBV_WC_GENERAL_ERR;
}

static const enum ibv_wc_opcode wc_opcode[] = {
	[SRNIC_WC_SEND] = IBV_WC_SEND,
	[SRNIC_WC_RDMA_WRITE] = IBV_WC_RDMA_WRITE,
	[SRNIC_WC_RDMA_READ] = IBV_WC_RDMA_READ,
	[SRNIC_WC_RECV] = IBV_WC_RECV,
	[SRNIC_WC_RECV_RDMA_WITH_IMM] = IBV_WC_RECV_RDMA_WITH_IMM,
	[SRNIC_WC_COMP_SWAP] = IBV_WC_COMP_SWAP,
	[SRNIC_WC_FETCH_ADD] = IBV_WC_FETCH_ADD,
	[SRNIC_WC_LOCAL_INV] = IBV_WC_LOCAL_INV,
	[SRNIC_WC_BIND_MW] = IBV_WC_BIND_MW,
	[SRNIC_WC_ATOMIC_WRITE] = IBV_WC_ATOMIC_WRITE,
	[SRNIC_WC_TARGET_WRITE] = SRNIC_WC_REMOTE_WRITE,
	[SRNIC_WC_TARGET_READ] = SRNIC_WC_REMOTE_READ,
};

static struct srnic_cq_v *cq_new(struct ibv_context *context, int cqe)
{
	struct srnic_context *ctx = to_sctx(context);
	struct srnic_cq_v *scq;

	if (cqe < 1 || cqe > SRNIC_MAX_CQE) {
		errno = EINVAL;
		return NULL;
	}
	if (!srnic_ctx_start(ctx))
		return NULL;
	scq = calloc(1, sizeof(*scq));
	if (!scq) {
		errno = ENOMEM;
		return NULL;
	}
	scq->cq = srnic_engine_create_cq(ctx->eng, cqe);
	if (!scq->cq) {
		free(scq);
		errno = ENOMEM;
		return NULL;
	}
	scq->vcq.cq.cqe = scq->cq->mask + 1;
	return scq;
}

static void cq_free(struct srnic_context *ctx, struct srnic_cq_v *scq)
{
	int fd = scq->cq->notify_fd;

	srnic_engine_destroy_cq(ctx->eng, scq->cq);
	if (fd >= 0)
		srnic_cq_channel_close(scq, fd);	/* (frees scq) */
	else
		free(scq);
}

struct ibv_cq *srnic_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel, int vector)
{
	struct srnic_cq_v *scq;
	int rc;

	if (vector < 0 || vector >= context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	scq = cq_new(context, cqe);
	if (scq && channel &&
	    (rc = srnic_cq_channel(to_sctx(context), scq, channel))) {
		cq_free(to_sctx(context), scq);
		errno = rc;
		return NULL;
	}
	return scq ? &scq->vcq.cq : NULL;
}

static void to_wc(const struct srnic_cqe *c, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = c->wr_id;
	wc->status = wc_status[c->status];
	wc->opcode = wc_opcode[c->opcode];
	wc->vendor_err = c->vendor_err;
	wc->byte_len = c->byte_len;
	wc->qp_num = c->qp_num;
	wc->src_qp = c->src_qp;
	if (c->flags & SRNIC_WC_F_IMM) {
		wc->wc_flags |= IBV_WC_WITH_IMM;
		wc->imm_data = c->imm;
	}
	if (c->flags & SRNIC_WC_F_GRH) {
		wc->wc_flags |= IBV_WC_GRH;
		/* Which network header the GRH holds, where mlx5 reports it
		 * for RoCE v2 (its SL field: 2 IPv4, 1 IPv6; RoCE frames
		 * carry no SL of their own).  UCX's UD reads it to find the
		 * destination address in the GRH, and drops every datagram
		 * whose address it reads wrong. */
		wc->sl = c->flags & SRNIC_WC_F_GRH_IPV6 ? 1 : 2;
	}
	if (c->flags & SRNIC_WC_F_INV) {
		wc->wc_flags |= IBV_WC_WITH_INV;
		wc->invalidated_rkey = c->imm;
	}
}

/*
 * Whether a poll that found nothing may run the datapath itself (and look
 * again): not while the CQ is armed.  Its program waits for the event; a
 * completion this poll published would both make that event and be taken
 * by this very poll, leaving an event with nothing behind it.  perftest's
 * -e loops poll once per event and lose step over one (ib_send_lat -e's
 * server then waited forever, in 2 runs of 3 once the provider's calls
 * became direct ones); the engine's own thread brings the completion.
 */
static bool may_progress(const struct srnic_cq *cq)
{
	uint32_t arm = __atomic_load_n(&cq->armed, __ATOMIC_ACQUIRE);

	return !arm || arm == SRNIC_CQ_ARM_LENT;
}

static int poll_some(struct srnic_cq *cq, int n, struct ibv_wc *wc)
{
	struct srnic_cqe c[16];
	int got = 0;

	pthread_spin_lock(&cq->lock);
	while (got < n) {
		int want = n - got < 16 ? n - got : 16;
		int k = srnic_cq_poll(cq, c, want), i;

		for (i = 0; i < k; i++)
			to_wc(&c[i], &wc[got + i]);
		got += k;
		if (k < want)
			break;
	}
	pthread_spin_unlock(&cq->lock);
	return got;
}

/* Early events (srnic_cq_set_early) told of messages whose completions no
 * poll has taken yet. */
static inline bool early_untaken(const struct srnic_cq *cq)
{
	return (int32_t)(__atomic_load_n(&cq->early_seq, __ATOMIC_ACQUIRE) -
			 __atomic_load_n(&cq->early_answered,
					 __ATOMIC_ACQUIRE)) > 0;
}

/*
 * A poll that finds nothing while an early event's message has yet to
 * complete waits for the completion, as the seed's consumer polls the
 * line the adapter has yet to write: running the datapath where a poll
 * may for early_us, then giving the CPU up between looks.  A CQ armed
 * for any completion (perftest arms it again before it polls) lends its
 * arm to ibv_poll_cq's wait for that (early_wait); armed otherwise, the
 * wait may not run the datapath (may_progress), and gives the CPU up at
 * once, to the engine's thread.  Programs that poll once an event
 * (perftest's -e) need the completion from that poll.  It leaves as soon
 * as any poll took the completions told of.
 * After EARLY_WAIT_MAX_MS (a message on a link that died, or one its
 * QP's reset dropped) it gives up on every early event so far: their
 * completions, if they come, make events as any other (early_lapsed).
 */
#define EARLY_WAIT_MAX_MS 1000

/* SRNIC_EARLY_WAIT_MS in the environment, 1 to EARLY_WAIT_MAX_MS, makes
 * the wait shorter: for tests of what follows a give-up. */
static uint64_t early_wait_max_us(void)
{
	const char *v = getenv("SRNIC_EARLY_WAIT_MS");
	unsigned long ms = v ? strtoul(v, NULL, 10) : 0;

	return 1000ull * (ms && ms < EARLY_WAIT_MAX_MS ? ms
						      : EARLY_WAIT_MAX_MS);
}

static void early_give_up(struct srnic_cq *cq)
{
	uint32_t seq;

	/* (every event so far whose completion has yet to come: the last
	 * SRNIC_EARLY_NOS, since a WQE keeps 16 bits of its number.  Under
	 * the lock every poll takes, seq read there too: no completion is
	 * counted against the old mark meanwhile, nor an event and its
	 * poll counted off) */
	pthread_spin_lock(&cq->lock);
	seq = __atomic_load_n(&cq->early_seq, __ATOMIC_ACQUIRE);
	__atomic_store_n(&cq->early_lapsed_from, seq - SRNIC_EARLY_NOS,
			 __ATOMIC_SEQ_CST);
	__atomic_store_n(&cq->early_lapsed, seq, __ATOMIC_SEQ_CST);
	__atomic_store_n(&cq->early_answered, seq, __ATOMIC_SEQ_CST);
	pthread_spin_unlock(&cq->lock);
	/* (against the datapath's publishing: it sees the mark, or the
	 * poll that follows sees its completion) */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* The arm early_wait borrowed, back (armed for any again), unless the
 * program armed the CQ anew meanwhile: then that stands. */
static void early_arm_back(struct srnic_cq *cq)
{
	uint32_t lent = SRNIC_CQ_ARM_LENT;

	__atomic_compare_exchange_n(&cq->armed, &lent, SRNIC_CQ_ARM_ANY, false,
				    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

/*
 * After the poll that followed a wait that borrowed the arm: completions
 * published while it was lent made no event; any the poll left in the
 * CQ make it now, so none waits for an event that never comes.  (Not
 * before the poll: a told completion landing just then would make an
 * event the poll then takes the completion of.)
 */
static void early_lent_done(struct srnic_cq *cq)
{
	uint32_t any = SRNIC_CQ_ARM_ANY;

	early_arm_back(cq);
	if (__atomic_load_n(&cq->prod, __ATOMIC_SEQ_CST) !=
		    __atomic_load_n(&cq->cons, __ATOMIC_ACQUIRE) &&
	    __atomic_compare_exchange_n(&cq->armed, &any, 0, false,
					__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		srnic_cq_tell(cq);
}

/*
 * The wait; returns whether it borrowed the arm, which the caller's poll
 * after it ends (early_lent_done).  Where the caller may lend it
 * (borrow: ibv_poll_cq's, whose one call takes what the wait found, not
 * the extended API's, whose next_poll calls come later), a CQ armed for
 * any completion (perftest arms it again before it polls; not a
 * moderated one) lends its arm (SRNIC_CQ_ARM_LENT) to the wait while it
 * runs the datapath itself for early_us: a completion published meanwhile
 * makes no event, and the poll after the wait takes it, or, left in the
 * CQ, makes the event then.  Before, the armed wait gave the CPU up at
 * once to the engine's thread: a usleep(20) that took 130 us on average
 * on this host (256 KiB ib_send_lat -e: early 170-230 us typical, events
 * 78-122).
 */
static bool early_wait(struct srnic_context *ctx, struct srnic_cq *cq,
		       bool borrow)
{
	uint64_t spin = __atomic_load_n(&cq->early_us, __ATOMIC_RELAXED);
	uint64_t t0 = srnic_clock_ns() / 1000, now = t0;
	uint64_t most = early_wait_max_us();
	uint32_t any = SRNIC_CQ_ARM_ANY;
	bool lent = false, held;

	if (borrow && spin && !cq->mod_listed)
		lent = __atomic_compare_exchange_n(&cq->armed, &any,
						   SRNIC_CQ_ARM_LENT, false,
						   __ATOMIC_SEQ_CST,
						   __ATOMIC_RELAXED);
	held = lent;
	/* (a thread that may not run the datapath here has the engine's
	 * thread run it: it may have stepped aside for this one, which ran
	 * it while it waited for the event, provider/channel.c) */
	if (!may_progress(cq))
		srnic_engine_app_sleeps(ctx->eng);
	while (__atomic_load_n(&cq->prod, __ATOMIC_ACQUIRE) ==
		       __atomic_load_n(&cq->cons, __ATOMIC_ACQUIRE) &&
	       early_untaken(cq)) {
		if (now - t0 >= most) {
			early_give_up(cq);
			return lent;
		}
		if (held && now - t0 >= spin) {
			/* (its spin over: the arm back, the engine's thread
			 * to land the rest) */
			early_arm_back(cq);
			held = false;
			srnic_engine_app_sleeps(ctx->eng);
		}
		/* (a spin that may not run the datapath only takes a CPU
		 * from the threads that land the message: 256 KiB
		 * ib_send_lat -e, early, 387-410 us typical with it, 317-352
		 * without) */
		if (may_progress(cq)) {
			if (!srnic_engine_progress(ctx->eng) && now - t0 >= spin)
				usleep(20);
		} else {
			usleep(20);
		}
		now = srnic_clock_ns() / 1000;
	}
	return lent;
}

int srnic_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct srnic_cq *cq = to_scq(ibcq)->cq;
	int got;

	if (n < 0)
		return -EINVAL;
	got = poll_some(cq, n, wc);
	if (__builtin_expect(!got && n > 0 && early_untaken(cq), 0)) {
		bool lent = early_wait(to_sctx(ibcq->context), cq, true);

		got = poll_some(cq, n, wc);
		if (lent)
			early_lent_done(cq);
	}
	/* Nothing yet: move the datapath on from here (when nobody else is
	 * at it), and look again. */
	if (!got && may_progress(cq) &&
	    srnic_engine_progress(to_sctx(ibcq->context)->eng))
		got = poll_some(cq, n, wc);
	if (got) {
		__atomic_store_n(&cq->empty_polls, 0, __ATOMIC_RELAXED);
		return got;
	}
	if (__atomic_add_fetch(&cq->empty_polls, 1, __ATOMIC_RELAXED) >=
	    EMPTY_POLLS_BEFORE_YIELD) {
		__atomic_store_n(&cq->empty_polls, 0, __ATOMIC_RELAXED);
		sched_yield();
	}
	return 0;
}

int srnic_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct srnic_cq *cq = to_scq(ibcq)->cq;

	if (cq->notify_fd < 0)
		return EINVAL;	/* created without a channel */
	/* The next completion published after this makes the event, as the
	 * verbs man page says and rxe does; those already in the ring do
	 * not (the caller polls them after arming).  A full fence, against
	 * the datapath's in srnic_cq_publish.  Not arming at the consumer
	 * index, as some NICs may: then unpolled completions would make the
	 * event at once, and perftest 4.5's ib_send_lat -e, which arms the
	 * CQ that woke it before polling it, would take that second event
	 * for its send's, poll the send CQ once and fail. */
	__atomic_store_n(&cq->armed,
			 solicited_only ? SRNIC_CQ_ARM_SOLICITED
					: SRNIC_CQ_ARM_ANY,
			 __ATOMIC_SEQ_CST);
	return 0;
}

int srnic_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct srnic_cq_v *scq = to_scq(ibcq);
	struct srnic_context *ctx = to_sctx(ibcq->context);
	int rc;

	if (cqe < 1 || cqe > SRNIC_MAX_CQE)
		return EINVAL;
	/* Pollers wait while the engine moves the ring. */
	pthread_spin_lock(&scq->cq->lock);
	rc = srnic_engine_resize_cq(ctx->eng, scq->cq, cqe);
	pthread_spin_unlock(&scq->cq->lock);
	if (rc)
		return -rc;
	ibcq->cqe = scq->cq->mask + 1;
	return 0;
}

/* Event moderation (ibv_modify_cq): the channel's event for this CQ waits
 * for cq_count completions, or cq_period us after the first of them
 * (within the engine's 100 us timer tick); count 0 or 1 with period 0
 * is an event each completion again. */
int srnic_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr)
{
	struct srnic_cq_v *scq = to_scq(ibcq);
	struct srnic_context *ctx = to_sctx(ibcq->context);

	if (!attr || (attr->attr_mask & ~IBV_CQ_ATTR_MODERATE))
		return EINVAL;
	if (!(attr->attr_mask & IBV_CQ_ATTR_MODERATE))
		return 0;
	if (attr->moderate.cq_period > SRNIC_MAX_CQ_PERIOD_US)
		return EINVAL;
	return -srnic_engine_moderate_cq(ctx->eng, scq->cq,
					 attr->moderate.cq_count,
					 attr->moderate.cq_period);
}

int srnic_destroy_cq(struct ibv_cq *ibcq)
{
	struct srnic_cq_v *scq = to_scq(ibcq);
	struct srnic_context *ctx = to_sctx(ibcq->context);
	int fd = scq->cq->notify_fd;
	int rc = srnic_engine_destroy_cq(ctx->eng, scq->cq);

	if (rc)
		return -rc;
	/* (the datapath has let go of the CQ: nothing writes to fd now) */
	if (fd >= 0)
		srnic_cq_channel_close(scq, fd);	/* (frees scq) */
	else
		free(scq);
	return 0;
}

/* ---- the extended CQ (ibv_start_poll / ibv_next_poll / ibv_wc_read_*) ---- */

static struct srnic_cq_v *ex_to_scq(struct ibv_cq_ex *cq)
{
	return (struct srnic_cq_v *)cq;
}

static int ex_next(struct ibv_cq_ex *ibcq)
{
	struct srnic_cq_v *scq = ex_to_scq(ibcq);

	if (srnic_cq_poll_ts(scq->cq, &scq->cur,
			     scq->cq->ts ? &scq->cur_ts : NULL, 1) != 1) {
		scq->cur_valid = 0;
		return ENOENT;
	}
	scq->cur_valid = 1;
	ibcq->wr_id = scq->cur.wr_id;
	ibcq->status = wc_status[scq->cur.status];
	return 0;
}

static int ex_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct srnic_cq_v *scq = ex_to_scq(ibcq);
	int rc;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&scq->cq->lock);
	rc = ex_next(ibcq);
	if (__builtin_expect(rc && early_untaken(scq->cq), 0)) {
		pthread_spin_unlock(&scq->cq->lock);
		early_wait(to_sctx(ibcq->context), scq->cq, false);
		pthread_spin_lock(&scq->cq->lock);
		rc = ex_next(ibcq);
	}
	if (rc) {
		pthread_spin_unlock(&scq->cq->lock);
		if (!may_progress(scq->cq) ||
		    !srnic_engine_progress(to_sctx(ibcq->context)->eng)) {
			sched_yield();
			return rc;
		}
		pthread_spin_lock(&scq->cq->lock);
		rc = ex_next(ibcq);
		if (rc)
			pthread_spin_unlock(&scq->cq->lock);
	}
	return rc;
}

static void ex_end_poll(struct ibv_cq_ex *ibcq)
{
	pthread_spin_unlock(&ex_to_scq(ibcq)->cq->lock);
}

static enum ibv_wc_opcode ex_read_opcode(struct ibv_cq_ex *ibcq)
{
	return wc_opcode[ex_to_scq(ibcq)->cur.opcode];
}

static uint32_t ex_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return ex_to_scq(ibcq)->cur.vendor_err;
}

static uint32_t ex_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return ex_to_scq(ibcq)->cur.byte_len;
}

static __be32 ex_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return ex_to_scq(ibcq)->cur.imm;
}

static uint32_t ex_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return ex_to_scq(ibcq)->cur.qp_num;
}

static uint32_t ex_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return ex_to_scq(ibcq)->cur.src_qp;
}

/* RoCE has no LIDs, service levels or path bits: what an InfiniBand
 * reader of them gets on Ethernet, 0. */
static uint32_t ex_read_slid(struct ibv_cq_ex *ibcq)
{
	return 0;
}

static uint8_t ex_read_sl(struct ibv_cq_ex *ibcq)
{
	return 0;
}

static uint8_t ex_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return 0;
}

/* Completion timestamps are CLOCK_MONOTONIC nanoseconds: the device's
 * clock runs at 1 GHz (hca_core_clock), and the wall clock is the
 * realtime clock's offset from it, taken when the CQ was made. */
static uint64_t ex_read_completion_ts(struct ibv_cq_ex *ibcq)
{
	return ex_to_scq(ibcq)->cur_ts;
}

static uint64_t ex_read_completion_wallclock_ns(struct ibv_cq_ex *ibcq)
{
	struct srnic_cq_v *scq = ex_to_scq(ibcq);

	return scq->cur_ts + (uint64_t)scq->wall_offset;
}

static int64_t clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static unsigned int ex_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	uint8_t f = ex_to_scq(ibcq)->cur.flags;

	return (f & SRNIC_WC_F_IMM ? IBV_WC_WITH_IMM : 0) |
	       (f & SRNIC_WC_F_GRH ? IBV_WC_GRH : 0) |
	       (f & SRNIC_WC_F_INV ? IBV_WC_WITH_INV : 0);
}

#define SUPPORTED_WC_FLAGS                                                  \
	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM | \
	 IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |     \
	 IBV_WC_EX_WITH_DLID_PATH_BITS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
#define TIMESTAMP_FLAGS                                                     \
	(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |                                \
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
/* Both are promises of the program's that srnic needs no change for: a CQ
 * never overruns (a QP waits for room, a datagram that finds none is
 * dropped and counted), so there is no overrun to ignore; and a CQ used by
 * one thread keeps its lock, uncontended.  UCX asks for IGNORE_OVERRUN. */
#define SUPPORTED_CQ_FLAGS                                                  \
	(IBV_CREATE_CQ_ATTR_SINGLE_THREADED | IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN)

struct ibv_cq_ex *srnic_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr)
{
	struct srnic_cq_v *scq;
	struct ibv_cq_ex *ex;
	int rc;

	if (attr->comp_vector >= (uint32_t)context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	/* A parent domain may be named (a CQ has no PD: nothing of it is
	 * used), but it must be one of this context's. */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain || attr->parent_domain->context != context ||
	     !to_spd(attr->parent_domain)->protection)) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->wc_flags & ~(uint64_t)SUPPORTED_WC_FLAGS) ||
	    (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					   IBV_CQ_INIT_ATTR_MASK_PD)) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)SUPPORTED_CQ_FLAGS))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	scq = cq_new(context, attr->cqe);
	if (!scq)
		return NULL;
	if (attr->channel &&
	    (rc = srnic_cq_channel(to_sctx(context), scq, attr->channel))) {
		cq_free(to_sctx(context), scq);
		errno = rc;
		return NULL;
	}
	scq->ex = 1;
	ex = &scq->vcq.cq_ex;
	ex->start_poll = ex_start_poll;
	ex->next_poll = ex_next;
	ex->end_poll = ex_end_poll;
	ex->read_opcode = ex_read_opcode;
	ex->read_vendor_err = ex_read_vendor_err;
	ex->read_byte_len = ex_read_byte_len;
	ex->read_imm_data = ex_read_imm_data;
	ex->read_qp_num = ex_read_qp_num;
	ex->read_src_qp = ex_read_src_qp;
	ex->read_wc_flags = ex_read_wc_flags;
	ex->read_slid = ex_read_slid;
	ex->read_sl = ex_read_sl;
	ex->read_dlid_path_bits = ex_read_dlid_path_bits;
	if ((attr->wc_flags & TIMESTAMP_FLAGS) &&
	    (rc = srnic_engine_cq_timestamps(to_sctx(context)->eng,
					     scq->cq))) {
		cq_free(to_sctx(context), scq);
		errno = -rc;
		return NULL;
	}
	if (attr->wc_flags & TIMESTAMP_FLAGS) {
		scq->wall_offset = clock_ns(CLOCK_REALTIME) -
				   clock_ns(CLOCK_MONOTONIC);
		ex->read_completion_ts = ex_read_completion_ts;
		ex->read_completion_wallclock_ns =
			ex_read_completion_wallclock_ns;
	}
	return ex;
}
