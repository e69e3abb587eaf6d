/* SPDX-License-Identifier: MIT */
/*
 * The datapath: one iteration runs the engine calls, polls the ports, runs
 * the QPs that have work, sends the ACKs that are due and flushes the
 * transmit queues.
 *
 * Whoever holds the token runs an iteration: the engine's own thread, which
 * loops over them, or an application thread inside a post or poll call
 * when the token is free.  A program that polls its CQ thus drives its own
 * traffic with no thread hand-off between it and the wire, which is what
 * latency needs, and on a machine with fewer cores than busy threads it is
 * one thread fewer competing for them.  While applications drive it the
 * engine's thread steps aside and naps; once they stop calling, it takes
 * over within ASIDE_NAP_US.  The token is a try-lock taken once an
 * iteration, never per packet, and nobody waits on it but the engine's
 * thread when it stops.
 */
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "engine_internal.h"
#include "srnic_futex.h"
#include "srnic_sched.h"

#define SPIN_US 50	/* an idle engine thread spins this long, then naps */
#define NAP_MIN_US 10	/* its first nap, doubling to idle_sleep_us */
#define ITER_PACKETS 256	/* packets the active QPs send in an iteration */
#define ASIDE_NAP_US 100	/* longest nap while applications drive: below
			 * the RTO's floor (SRNIC_RTO_MIN_US) */
#define ASIDE_TOLD_US 250	/* ... where the driver says when it stops
				 * (nap_aside): the RTO's floor */
#define NODE_IDLE_NAP_US 2000	/* srnicd's longest nap, no process
				 * attached, or each on queues of its own */
#define SRNICD_CHECK_US 10000	/* attached: how often srnicd's socket is
				 * looked at */
#define QUIET_ATTACHED_US 250000	/* an attached process's sleep with
				 * nothing timed (srnicd's end is seen
				 * within it, then) */
#define QUIET_NODE_US (SRNIC_IDLE_TICK_MS * 1000)	/* the node's
			 * sleeper's, every port rung: peers' HELLOs ring no
			 * bell, and are read then, as often as its own go */
#define QUIET_SVC_US 40000	/* ... on a member of a service, whose peers'
			 * SVC_ANNOUNCEs are judged by svc_dead_ms */
#define LAST_FLUSH_MS 100	/* attached: how long the last flush waits
				 * for the port token */
#define APP_DRIVES 16	/* application iterations in SPIN_US (or in a
			 * nap) that say it polls busily */

/* ---- the token ---- */

static inline bool dp_enter(struct srnic_engine *eng)
{
	uint32_t free = 0;

	return __atomic_load_n(&eng->dp_token, __ATOMIC_RELAXED) == 0 &&
	       __atomic_compare_exchange_n(&eng->dp_token, &free, 1, false,
					   __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

static inline void dp_leave(struct srnic_engine *eng)
{
	__atomic_store_n(&eng->dp_token, 0, __ATOMIC_RELEASE);
}

/* ---- waking the engine's thread ---- */

void srnic_datapath_wake(struct srnic_engine *eng)
{
	srnic_ring(eng->bell);
}

/* Nothing that a timer must look at: no QP's timers run, no ACK is
 * owed, no CQ moderated, no service QP, no key aging; and nothing waits
 * that no bell would announce: frames left in a transmit buffer (a full
 * ring: nobody rings when it drains), frames the fault injector holds,
 * ports another poller held at the last look.  The engine's thread may
 * then sleep until it is woken (QUIET_*_US). */
static inline bool dp_quiet(const struct srnic_engine *eng)
{
	unsigned i;

	if (eng->timer_head || eng->ack_head || eng->lazy.head ||
	    eng->mod_cqs || eng->nsvc_qps || eng->keys.nalias ||
	    eng->keys.gone || eng->rx_missed)
		return false;
	for (i = 0; i < SRNIC_PORT_SLOTS; i++)
		if (eng->txbuf[i].n)
			return false;
	for (i = 0; i < eng->node->nports; i++)
		if (srnic_fault_holds(&eng->node->port[i], eng->cls))
			return false;
	return true;
}

static bool waitv_missing;	/* the kernel has no futex_waitv */

/* The node's sleeper (srnicd's, or an embedded engine's thread) is woken
 * by every frame: each of its ports has a bell, and the kernel sleeps on
 * them all at once. */
static inline bool node_rung(const struct srnic_engine *eng)
{
	return eng->mode != SRNIC_ATTACHED && !eng->wires_unbelled &&
	       !waitv_missing;
}

static unsigned dp_iteration(struct srnic_engine *eng);

/* Whether this process polls a queue of its own on a tap (a class's, its
 * kernel steering: port/tun_steer.c), whose frames ring no bell: it naps
 * as on a kernel wire, and never sleeps the attached process's long
 * sleep, which srnicd's forwarding or a memif peer would end. */
static bool own_kernel_queue(const struct srnic_engine *eng)
{
	unsigned p;

	for (p = 0; p < eng->node->nports; p++)
		if (eng->node->port[p].kernel_steer && srnic_port_own(eng, p))
			return true;
	return false;
}

/* Its bells set: one more iteration, so that no frame that came before
 * them waits for the nap.  Whether it found nothing. */
static bool armed_look(struct srnic_engine *eng)
{
	unsigned work;
	bool acks;

	if (!dp_enter(eng))
		return false;	/* (another poller is at it: not idle) */
	work = dp_iteration(eng);
	acks = eng->ack_head || eng->lazy.head;
	dp_leave(eng);
	return !work && !acks;
}

/*
 * Sleep up to us unless there is work; whether it slept.  The engine
 * sleeps on its own bell (its doorbells, its calls, and the frames other
 * pollers queue for it ring it) and, armed, on its memif links' bells,
 * which the far end rings when it sends: it looks at the ports once more
 * after counting itself in them, and whoever of the node's sleepers
 * wakes first polls for all of them, as a NIC's interrupt wakes its
 * driver.  The node's sleeper is always among them; a process that waits
 * for its own frames is too, and then takes them with no hand-off.
 */
static bool idle_nap(struct srnic_engine *eng, uint64_t us, bool armed)
{
	struct srnic_bell *bells[2 + SRNIC_MAX_PORTS];
	struct rte_ring *rx = eng->node->proc[eng->slot].rx;
	uint32_t me = 1u << eng->slot;
	unsigned n = 0, i;
	bool sleep;

	bells[n++] = eng->bell;
	/* (no link bit of a process whose srnicd is gone, which may not
	 * poll, nor where futex_waitv is missing: it would not wake) */
	if (armed && !waitv_missing && !eng->fatal && eng->cls) {
		/* A steering class: its own queues' bells alone (it polls
		 * nothing else; what class 0's pollers queue for it rings
		 * its own bell). */
		for (i = 0; i < eng->node->nports; i++)
			if (eng->wire_cls[i])
				bells[n++] = &eng->wire_cls[i]->cls[eng->cls].b;
	} else if (armed && !waitv_missing && !eng->fatal) {
		for (i = 0; i < eng->node->nports; i++)
			if (eng->wire_bell[i])
				bells[n++] = eng->wire_bell[i];
		bells[n++] = eng->mode == SRNIC_ATTACHED
				     ? &eng->node->loop_end.procs
				     : &eng->node->loop_end.node;
	}
	for (i = 0; i < n; i++)
		__atomic_fetch_or(&bells[i]->sleeping, me, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	sleep = rte_ring_count(eng->doorbell) == 0 &&
		rte_ring_count(eng->calls) == 0 && !eng->stop &&
		(!rx || rte_ring_count(rx) == 0) &&
		!__atomic_load_n(&eng->kicked, __ATOMIC_RELAXED);
	if (sleep && n > 1)
		sleep = armed_look(eng);
	/* (that look missed the ports, another process holding them: frames
	 * that came before the bells were set rang nobody, and the holder
	 * may hold the ports only to send, polling nothing, as a steering
	 * class does on a link that does not steer: back within a nap, not
	 * after a quiet sleep) */
	if (sleep && eng->rx_missed && us > eng->cfg.idle_sleep_us)
		us = eng->cfg.idle_sleep_us;
	if (sleep && n == 1)
		srnic_futex_wait(&eng->bell->wake, 0, us);
	else if (sleep && srnic_futex_waitv(bells, n, us) < 0 &&
		 errno != EAGAIN && errno != ETIMEDOUT && errno != EINTR) {
		/* (ENOSYS before Linux 5.16; EPERM under a seccomp
		 * profile that predates it): short naps from now on */
		waitv_missing = true;
		srnic_futex_wait(&eng->bell->wake, 0, us);
	}
	for (i = 0; i < n; i++)
		__atomic_fetch_and(&bells[i]->sleeping, ~me, __ATOMIC_SEQ_CST);
	for (i = 0; i < n; i++)
		__atomic_store_n(&bells[i]->wake, 0, __ATOMIC_RELAXED);
	return sleep;
}

/*
 * An application thread that runs the datapath becomes a DPDK lcore of its
 * own, for a packet-buffer cache of its own: without one every buffer it
 * takes or gives back is a compare-and-swap on the pool's shared ring.  The
 * lcore goes back when the thread ends.  Only a few threads get one: each
 * cache may keep a few hundred buffers, and a program with many polling
 * threads would otherwise strand the pool in them.
 */
#define APP_LCORES 4

static pthread_key_t lcore_key;
static pthread_once_t lcore_once = PTHREAD_ONCE_INIT;
static __thread int8_t lcore_state;	/* 0 not tried, 1 registered, -1 no */
static uint32_t app_lcores;		/* registered application threads */

static void lcore_release(void *unused)
{
	(void)unused;
	rte_thread_unregister();
	__atomic_fetch_sub(&app_lcores, 1, __ATOMIC_RELAXED);
}

static void lcore_key_init(void)
{
	pthread_key_create(&lcore_key, lcore_release);
}

static void become_lcore(void)
{
	if (rte_lcore_id() != LCORE_ID_ANY) {
		lcore_state = -1;	/* an EAL thread already */
		return;
	}
	lcore_state = -1;	/* (without one, it works all the same) */
	if (__atomic_add_fetch(&app_lcores, 1, __ATOMIC_RELAXED) >
	    APP_LCORES) {
		__atomic_fetch_sub(&app_lcores, 1, __ATOMIC_RELAXED);
		return;
	}
	pthread_once(&lcore_once, lcore_key_init);
	if (rte_thread_register() == 0) {
		lcore_state = 1;
		pthread_setspecific(lcore_key, &lcore_state);
	} else {
		__atomic_fetch_sub(&app_lcores, 1, __ATOMIC_RELAXED);
	}
}

static __thread bool in_iteration;

/* One iteration on the caller's thread if nobody is running one.  app: a
 * program's post or poll (not an engine call or the control core), which
 * counts towards "applications drive" and earns an lcore. */
static bool run_here(struct srnic_engine *eng, unsigned *work, bool app)
{
	unsigned own_lcore = rte_lcore_id();
	int cancel;

	if (!dp_enter(eng))
		return false;
	/* (a program's thread cancelled inside the iteration, at one of
	 * its cancellation points, an event's write() say, would leave the
	 * datapath half-run and its token taken: rping cancels the thread
	 * that waits for its events as it tears down) */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	in_iteration = true;
	if (eng->mode == SRNIC_ATTACHED) {
		/* A secondary process may not register threads as lcores:
		 * whoever holds the token runs as the process's lcore, whose
		 * mempool caches only token holders touch. */
		RTE_PER_LCORE(_lcore_id) = eng->lcore;
	} else if (app && !lcore_state) {
		become_lcore();
	}
	*work = dp_iteration(eng);
	if (app) {
		__atomic_store_n(&eng->app_iters, eng->app_iters + 1,
				 __ATOMIC_RELAXED);
		/* (a steering class polls no port for the node: srnicd's
		 * thread must not step aside for it) */
		if (eng->mode == SRNIC_ATTACHED && !eng->cls)
			__atomic_fetch_add(&eng->node->apps_polled, 1,
					   __ATOMIC_RELAXED);
	}
	RTE_PER_LCORE(_lcore_id) = own_lcore;
	in_iteration = false;
	dp_leave(eng);
	pthread_setcancelstate(cancel, NULL);
	return true;
}

void srnic_datapath_abandon(struct srnic_engine *eng)
{
	/* Its lists and port queues may be half-changed: nobody may touch
	 * them again, so the token stays taken, and the stop path leaves
	 * the links as a killed process would. */
	if (in_iteration)
		__atomic_store_n(&eng->dp_abandoned, 1, __ATOMIC_RELEASE);
}

void srnic_engine_app_spins(struct srnic_engine *eng, bool on)
{
	__atomic_add_fetch(&eng->apps_spinning, on ? 1 : -1,
			   __ATOMIC_RELEASE);
}

void srnic_engine_app_sleeps(struct srnic_engine *eng)
{
	__atomic_store_n(&eng->apps_asleep, 1, __ATOMIC_RELEASE);
	srnic_datapath_wake(eng);
}

unsigned srnic_engine_progress(struct srnic_engine *eng)
{
	unsigned work = 0;

	run_here(eng, &work, true);
	return work;
}

void srnic_engine_wake(struct srnic_engine *eng)
{
	/* (as a kick that found the token taken: the holder may be past
	 * the QP already, its doorbell still armed, so nothing went on the
	 * ring; the engine's thread looks once more before it naps) */
	__atomic_store_n(&eng->kicked, 1, __ATOMIC_SEQ_CST);
	srnic_datapath_wake(eng);
}

void srnic_engine_kick(struct srnic_engine *eng)
{
	unsigned work;

	if (run_here(eng, &work, true))
		return;
	/* Someone else holds the token, and may be past the QP already (it
	 * was armed: no doorbell went on the ring).  The engine's thread
	 * runs once more after this, whatever it was about to do. */
	__atomic_store_n(&eng->kicked, 1, __ATOMIC_SEQ_CST);
	srnic_datapath_wake(eng);
}

/* ---- engine calls ---- */

void srnic_engine_call(struct srnic_engine *eng, struct srnic_call *c)
{
	unsigned spins = 0, work;

	c->done = 0;
	/* No datapath yet (memory registered before the first CQ or QP):
	 * nothing else touches engine state. */
	if (srnic_engine_call_unstarted(eng, c))
		return;
	while (rte_ring_mp_enqueue(eng->calls, c) != 0)
		sched_yield();
	srnic_datapath_wake(eng);
	while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE)) {
		if (run_here(eng, &work, false))
			continue;
		if (++spins < 64)
			sched_yield();
		else
			usleep(20);
	}
}

static unsigned run_calls(struct srnic_engine *eng)
{
	struct srnic_call *c;
	unsigned n = 0;

	while (rte_ring_sc_dequeue(eng->calls, (void **)&c) == 0) {
		/* (a call may deregister memory that queued frames read) */
		if (!n)
			srnic_ports_settle(eng);
		c->fn(eng, c);
		__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
		n++;
	}
	return n;
}

void srnic_qp_lists_remove(struct srnic_engine *eng, struct srnic_qp *qp)
{
	struct srnic_qp **pp;

	/* An ACK still owed tells the peer its last messages landed (else
	 * it would retry them against a QP that is gone); so does one a
	 * move to the error state left for the QP's turn (qp_error_turn). */
	if (((qp->ack_lazy || qp->on_ack) && srnic_qp_ack_wanted(qp)) ||
	    qp->ack_final)
		srnic_responder_send_ack(eng, qp);
	/* (after it: a UC ACK arms the timer that says it again) */
	srnic_qp_timer_off(eng, qp);
	qp->ack_lazy = 0;
	qp->ack_final = 0;
	for (pp = &eng->ack_head; *pp; pp = &(*pp)->ack_next)
		if (*pp == qp) {
			*pp = qp->ack_next;
			break;
		}
	qp->on_ack = 0;
	if (qp->on_lazy)
		srnic_fifo_remove(&eng->lazy, qp, SRNIC_FIFO_LAZY);
	qp->on_lazy = 0;
	if (qp->on_active)
		srnic_fifo_remove(&eng->active, qp, SRNIC_FIFO_ACTIVE);
	qp->on_active = 0;
}

/* Does qp still have something for the datapath to do? */
static bool qp_busy(const struct srnic_qp *qp)
{
	uint32_t prod = __atomic_load_n(&qp->q.sq_prod, __ATOMIC_ACQUIRE);

	if (qp->q.state == SRNIC_QPS_ERR)
		return qp->flush_pending || qp->q.sq_comp != prod ||
		       qp->q.rq_comp != __atomic_load_n(&qp->q.rq_prod,
						      __ATOMIC_ACQUIRE);
	if (qp->q.state == SRNIC_QPS_SQE)
		return qp->flush_pending || qp->cq_wait || qp->q.sq_comp != prod;
	if (qp->q.state != SRNIC_QPS_RTS && qp->q.state != SRNIC_QPS_RTR &&
	    qp->q.state != SRNIC_QPS_SQD)
		return false;
	/* (a service's client asking its holder to bind sends nothing) */
	if (unlikely(qp->svc_resync))
		return qp->rcv.rd_head != qp->rcv.rd_tail || qp->cq_wait;
	/* Out of credit, new data waits for an ACK, which activates the
	 * QP again (or for the timer's loan). */
	/* (UC: receives the peer is yet to hear of, posted perhaps while
	 * the doorbell was still armed from this turn, which did not ring) */
	return (qp->snd.cur_busy && !qp->snd.fc_blocked) ||
	       srnic_group_send_busy(qp) ||
	       unlikely(srnic_responder_uc_recv_moved(qp)) ||
	       qp->snd.resend_head != qp->snd.resend_tail ||
	       qp->rcv.rd_head != qp->rcv.rd_tail || qp->cq_wait ||
	       (qp->q.state == SRNIC_QPS_RTS && qp->snd.sq_next != prod &&
		qp->snd.sq_next - qp->q.sq_comp < SRNIC_WINDOW && !qp->snd.fc_blocked &&
		!qp->snd.sq_wait);
}

/*
 * A QP in the error state: what srnic_qp_to_error left to its roles.  The
 * responder's ACK still owed for what landed goes before its messages are
 * cleared (or the peer would retry delivered messages into the error
 * state); then every WQE completes flushed, as CQ room allows.
 */
static void qp_error_turn(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (qp->err_new) {
		qp->err_new = 0;
		if (qp->ack_final)
			srnic_responder_send_ack(eng, qp);
		qp->ack_final = 0;
		srnic_responder_reset(eng, qp);
	}
	srnic_completer_flush_sq(eng, qp);
	srnic_responder_flush(eng, qp);
	srnic_qp_timer_off(eng, qp);
}

/*
 * A plain ACK the QP owes goes ahead of the new messages it is about to
 * send, on the port the first of them takes (the same rotation, looked at
 * one step early): the peer then completes its own send before the answer
 * to it arrives, as behind a NIC that acknowledges at once.  A program that
 * waits for both on one completion channel counts on that order: perftest
 * 4.5's ib_send_lat -e takes the first event for its send's and polls the
 * send CQ once, and fails when the ACK goes behind the data.  The
 * requester may send nothing after all (its window or credit is out):
 * the ACK has then only gone early.
 */
static void ack_ahead(struct srnic_engine *eng, struct srnic_qp *qp)
{
	int port;

	if (!qp->ack_lazy || qp->on_ack || qp->q.state != SRNIC_QPS_RTS ||
	    qp->snd.sq_next == __atomic_load_n(&qp->q.sq_prod, __ATOMIC_ACQUIRE))
		return;
	port = srnic_qp_peek_port(eng, qp);
	if (port < 0)
		return;
	qp->ack_lazy = 0;
	srnic_qp_path_sent(eng, qp, port);
	srnic_responder_send_ack(eng, qp);
}

static unsigned run_qp(struct srnic_engine *eng, struct srnic_qp *qp)
{
	unsigned n = 0;

	if (qp->q.state == SRNIC_QPS_ERR) {
		qp_error_turn(eng, qp);
		return 1;
	}
	qp->cq_wait = 0;
	if (qp->q.state == SRNIC_QPS_SQE) {
		srnic_completer_flush_sq(eng, qp);
		srnic_responder_progress(eng, qp);
		return 1;
	}
	n += srnic_responder_reads(eng, qp, SRNIC_BURST);
	ack_ahead(eng, qp);
	/* (a UD QP's multicast WRITE first: the requester stops at one
	 * until it has started) */
	if (qp->q.type == SRNIC_QPT_UD)
		n += srnic_group_send_run(eng, qp, SRNIC_BURST);
	n += srnic_requester_run(eng, qp, SRNIC_BURST);
	srnic_completer_complete(eng, qp);
	srnic_responder_progress(eng, qp);
	return n;
}

static unsigned run_active(struct srnic_engine *eng)
{
	struct srnic_qp *qp, *tail = eng->active.tail;
	unsigned n = 0;

	/* One round over the QPs that were active when it started, or
	 * ITER_PACKETS packets, whichever ends first; a QP that still has
	 * work goes to the back of the line.  The bound keeps an iteration
	 * short with many QPs: the ports are polled again soon, and an
	 * application thread that is descheduled holding the token holds it
	 * for little. */
	while (n < ITER_PACKETS &&
	       (qp = srnic_fifo_pop(&eng->active, SRNIC_FIFO_ACTIVE)) != NULL) {
		bool last = qp == tail;

		qp->on_active = 0;
		n += run_qp(eng, qp);
		if (qp_busy(qp)) {
			srnic_qp_activate(eng, qp);
		} else {
			/* Re-arm the doorbell, then look again: a post that
			 * saw it armed did not ring. */
			__atomic_store_n(&qp->q.db_armed, 0, __ATOMIC_SEQ_CST);
			if (qp_busy(qp) &&
			    !__atomic_exchange_n(&qp->q.db_armed, 1,
						 __ATOMIC_SEQ_CST))
				srnic_qp_activate(eng, qp);
		}
		if (last)
			break;
	}
	return n;
}

static unsigned drain_doorbells(struct srnic_engine *eng)
{
	void *qps[SRNIC_BURST];
	unsigned n, i;

	n = rte_ring_sc_dequeue_burst(eng->doorbell, qps, SRNIC_BURST, NULL);
	for (i = 0; i < n; i++) {
		struct srnic_qp *qp = qps[i];

		if (!qp->destroyed)
			srnic_qp_activate(eng, qp);
	}
	return n;
}

void srnic_doorbells_drain_all(struct srnic_engine *eng)
{
	while (drain_doorbells(eng))
		;
}

/* Posting queued work: the QP goes on the doorbell ring once until the
 * datapath takes it (the caller then calls srnic_engine_kick). */
void srnic_engine_doorbell(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (__atomic_exchange_n(&qp->q.db_armed, 1, __ATOMIC_SEQ_CST))
		return;
	while (rte_ring_mp_enqueue(eng->doorbell, qp) != 0)
		sched_yield();
}

/*
 * The ACKs that are due: every one asked for now, and the deferred ones
 * whose delay is up.  A deferred ACK whose QP sends a new message
 * meanwhile goes ahead of it (ack_ahead); one whose QP sends another
 * packet (a resend) is asked for now by the requester, behind it on its
 * port.  The cost is the ACKs sent, not the QPs that wait.
 */
static void send_acks(struct srnic_engine *eng, uint64_t now)
{
	struct srnic_qp *qp;

	while ((qp = eng->ack_head) != NULL) {
		eng->ack_head = qp->ack_next;
		qp->on_ack = 0;
		if (srnic_qp_ack_wanted(qp))
			srnic_responder_send_ack(eng, qp);
	}
	while ((qp = eng->lazy.head) != NULL) {
		if (qp->ack_lazy && now < qp->ack_at)
			break;
		srnic_fifo_pop(&eng->lazy, SRNIC_FIFO_LAZY);
		qp->on_lazy = 0;
		if (qp->ack_lazy) {
			qp->ack_lazy = 0;
			if (srnic_qp_ack_wanted(qp))
				srnic_responder_send_ack(eng, qp);
		}
	}
}

/* QPs whose timers one tick looks at: with many QPs each is seen every few
 * ticks (1000 QPs: every 1.6 ms), which the RTO's 250 us floor and the
 * verbs timeouts tolerate, rather than every QP's state pulled through the
 * cache 10000 times a second. */
#define TIMER_SLICE 64

static void run_timers(struct srnic_engine *eng, uint64_t now)
{
	struct srnic_qp *qp;
	struct srnic_cq *cq;
	unsigned n;

	/* Moderated CQs' events whose period is up (ibv_modify_cq) */
	for (cq = eng->mod_cqs; cq; cq = cq->mod_next)
		srnic_cq_moderated(cq, NULL, now);

	/* Short of packet buffers (held packets, full transmit queues):
	 * grant peers less until they drain. */
	eng->fc_grant =
		rte_mempool_avail_count(eng->node->pool) < SRNIC_POOL_SIZE / 8
			? SRNIC_FC_WINDOW / 8
			: SRNIC_FC_WINDOW;
	if (eng->nsvc_qps)
		srnic_svc_qps_tick(eng, now);
	if (unlikely(eng->keys.nalias || eng->keys.gone))
		srnic_keys_evict(eng, now);
	qp = eng->timer_cursor ? eng->timer_cursor : eng->timer_head;
	for (n = 0; qp && n < TIMER_SLICE; n++) {
		/* (the cursor moves on first: the QP may leave the list) */
		eng->timer_cursor = qp->timer_next;
		if (qp->q.type == SRNIC_QPT_UD) {
			/* (its timers are a multicast WRITE's) */
			srnic_group_timers(eng, qp, now);
			qp = eng->timer_cursor;
			continue;
		}
		if (qp->rcv.uc_stuck_at)
			srnic_responder_uc_timer(eng, qp, now);
		if (qp->rcv.uc_reack_at && now >= qp->rcv.uc_reack_at)
			srnic_responder_uc_reack(eng, qp);
		if (qp->rcv.nheld)
			srnic_responder_held_age(eng, qp, now);
		srnic_completer_timeouts(eng, qp, now);
		/* (the completer takes an idle QP off in RTS and SQD only: one
		 * that only receives (RTR), whose held packets were placed,
		 * would stay and keep the datapath from its deep sleep) */
		if (qp->on_timer && srnic_qp_timers_idle(qp))
			srnic_qp_timer_off(eng, qp);
		qp = eng->timer_cursor;
	}
}

/* ---- the iteration, and the engine thread's loop ---- */

static unsigned dp_iteration(struct srnic_engine *eng)
{
	unsigned work = 0, rx;
	uint64_t now;

	__atomic_store_n(&eng->dp_epoch, eng->dp_epoch + 1, __ATOMIC_RELEASE);
	srnic_dp_clock(eng);
	/* (this iteration covers every kick made before it) */
	__atomic_store_n(&eng->kicked, 0, __ATOMIC_SEQ_CST);
	if (unlikely(__atomic_load_n(&eng->fatal, __ATOMIC_ACQUIRE) ==
		     SRNIC_FATAL_SEEN))
		srnic_attach_fail_all(eng);
	work += run_calls(eng);
	work += drain_doorbells(eng);
	/* (it reads the clock again: the gap since its last poll is judged
	 * by it) */
	rx = srnic_rx_ports(eng);
	work += rx;
	/* (keys the burst found foreign: settled before the requesters'
	 * resends come) */
	if (unlikely(eng->keys.nmiss))
		srnic_keys_settle(eng);
	/* (again after frames, whose handling may have taken a while: the
	 * timers and the packets' ts are for what follows) */
	if (rx)
		srnic_rx_handled(eng);
	now = eng->now;
	/* (before the QPs' turns: a probe or a resend the timers ask the
	 * requester for goes in this iteration, not after a nap) */
	if (now >= eng->next_tick) {
		eng->next_tick = now + eng->tick_tsc;
		run_timers(eng, now);
	}
	send_acks(eng, now);
	work += run_active(eng);
	send_acks(eng, now);
	work += srnic_ports_flush(eng);
	return work;
}

/* How the engine thread paces itself between iterations: spinning,
 * napping, or stepping aside for applications that drive the datapath. */
struct dp_pace {
	uint64_t spin_tsc;	/* SPIN_US in TSC cycles */
	uint64_t idle_since;	/* when the idle stretch began, 0 if busy */
	uint64_t nap;		/* the next nap, us */
	uint64_t app_seen;	/* applications' iterations at the last look */
	uint64_t look_at;	/* when to look at them again */
	uint64_t check_at;	/* attached: when to look at srnicd again */
	unsigned max_nap;	/* idle_sleep_us; 0: never nap */
	unsigned aside_nap;	/* the longest nap while stepped aside */
	bool app_drives;	/* applications run the iterations */
};

/* Iterations the applications ran: srnicd counts the node's attached
 * applications' polls of its ports, an attached process its own. */
static inline uint64_t app_iterations(const struct srnic_engine *eng)
{
	uint64_t app = __atomic_load_n(&eng->app_iters, __ATOMIC_RELAXED);

	if (eng->mode == SRNIC_NODE)
		app += __atomic_load_n(&eng->node->apps_polled,
				       __ATOMIC_RELAXED);
	return app;
}

/* Attached: srnicd's end is seen within SRNICD_CHECK_US, whoever runs
 * the iterations; links that went down and came back are remapped
 * (srnic_ports_remap) while no iteration of this process polls them. */
static inline void attached_check(struct srnic_engine *eng,
				  struct dp_pace *p)
{
	if (srnic_now() < p->check_at)
		return;
	srnic_attach_check(eng);
	if (dp_enter(eng)) {
		srnic_ports_remap(eng);
		dp_leave(eng);
	}
	p->check_at = srnic_now() + eng->tsc_per_us * SRNICD_CHECK_US;
}

/* Applications drive the datapath when they ran many iterations since
 * the last look: then this thread steps aside.  One that polls now and
 * then does not drive it: its traffic would move only as often as it
 * polls.  (An attached process says so in its slot: a poller that
 * queues frames to it then need not wake this thread.) */
static inline void look_at_apps(struct srnic_engine *eng, struct dp_pace *p,
				uint64_t now)
{
	uint64_t app = app_iterations(eng);

	/* (a thread that ran iterations while it waited for an event, and
	 * now sleeps for it, drives no more: channel.c) */
	bool slept = __atomic_exchange_n(&eng->apps_asleep, 0,
					 __ATOMIC_ACQ_REL);

	p->app_drives = !slept && app - p->app_seen >= APP_DRIVES;
	p->app_seen = app;
	if (eng->mode == SRNIC_ATTACHED)
		__atomic_store_n(&eng->node->proc[eng->slot].aside,
				 p->app_drives, __ATOMIC_RELAXED);
	p->look_at = now + p->spin_tsc;
}

/*
 * Stepped aside: short naps, so that if the application stops calling,
 * what it left (deferred ACKs, timers) waits no longer.  Longer ones
 * (ASIDE_TOLD_US) where whoever drives says when it stops: a thread that
 * waits for an event (srnic_engine_app_sleeps), and srnicd's, whose
 * processes' own threads take over from their application threads and
 * whose every port rings.  A wake-up costs 10-40 us of CPU here: at
 * 100 us naps the threads aside took a third of a CPU each, and two
 * event ping-pongs' threads then waited for CPUs (ib_send_lat -e typical
 * 4.7 to 122 us from one round to the next).
 */
static inline void nap_aside(struct srnic_engine *eng, struct dp_pace *p)
{
	unsigned most = p->aside_nap;

	if (__atomic_load_n(&eng->apps_spinning, __ATOMIC_RELAXED) ||
	    (eng->mode == SRNIC_NODE && node_rung(eng) && dp_quiet(eng)))
		most = ASIDE_TOLD_US;
	p->idle_since = 0;
	if (p->nap > most)
		p->nap = most;
	if (idle_nap(eng, p->nap, false))
		p->nap = p->nap * 2 < most ? p->nap * 2 : most;
}

/* The node's sleeper says whether it sleeps deep, with nothing timed (its
 * control core, file thread and srnicd's main thread then tick less
 * often: control.c, files.c, srnicd/serve.c), until it finds work: a
 * wake-up that finds nothing does not make the node look busy.  (An
 * attached process has no say.) */
static inline void say_deep(struct srnic_engine *eng, bool deep)
{
	int fd;

	if (eng->mode == SRNIC_ATTACHED ||
	    __atomic_load_n(&eng->node->dp_deep, __ATOMIC_RELAXED) == deep)
		return;
	__atomic_store_n(&eng->node->dp_deep, deep, __ATOMIC_SEQ_CST);
	fd = __atomic_load_n(&eng->deep_left_fd, __ATOMIC_RELAXED);
	/* (dp_deep stored before the look at main_long_poll, as srnicd's
	 * main thread stores that before its look at dp_deep: one of the
	 * two sees the other's) */
	if (!deep && fd >= 0 &&
	    __atomic_load_n(&eng->node->main_long_poll, __ATOMIC_SEQ_CST)) {
		uint64_t one = 1;

		/* (once a busy spell: the next is after a deep sleep) */
		if (write(fd, &one, sizeof(one)) < 0)
			return;	/* (full: it has been told) */
	}
}

/*
 * srnicd's datapath polls only to keep the node's links alive (its
 * control frames, HELLOs every few ms) when no process is attached, or
 * when each attached one is a steering class and every port steers: the
 * processes' frames then come by their own queues, never through srnicd's
 * (on a tap those ring no bell, and naps of idle_sleep_us there took a
 * tenth of a CPU, and a lone pingpong's programs 1.2x their round trip:
 * docs/performance.md).  What else it serves wakes it (the loopback's
 * bell, its own), or keeps it from naps (a service's QPs: dp_quiet).
 */
static bool node_keeps_links(const struct srnic_engine *eng)
{
	const struct srnic_node *node = eng->node;
	uint32_t procs = __atomic_load_n(&node->nprocs, __ATOMIC_RELAXED);
	unsigned c, steered = 0;

	if (eng->mode != SRNIC_NODE || eng->nsvc_qps)
		return false;
	if (!procs)
		return true;
	for (c = 1; c < node->classes; c++)
		steered += __atomic_load_n(&node->class_owner[c],
					   __ATOMIC_RELAXED) != 0;
	if (steered < procs)
		return false;
	for (c = 0; c < node->nports; c++)
		if (!srnic_port_steers(&node->port[c]))
			return false;
	return true;
}

/*
 * An iteration that found no work (ran: this thread ran it; acks: ACKs
 * still wait to go).  Spin a little for latency (and for deferred ACKs,
 * which fall due within ack_delay_us), then sleep, as DPDK's l3fwd-power
 * does: poll while busy, arm the wake-ups and sleep after an idle spell.
 * With nothing timed to look at (dp_quiet) the sleep lasts until a
 * wake-up: an idle node costs nothing.  Otherwise, and on kernel wires,
 * whose frames ring no bell, naps, each twice the last, up to
 * idle_sleep_us, so that two nodes and their programs can share two
 * cores.
 */
static inline void idle_wait(struct srnic_engine *eng, struct dp_pace *p,
			     uint64_t now, bool ran, bool acks)
{
	unsigned most;
	uint64_t us = p->nap;
	bool deep, slept;

	if (!p->idle_since)
		p->idle_since = now;
	if (!ran) {
		/* An application thread holds the token: if it was
		 * descheduled in its iteration, let it finish. */
		sched_yield();
		return;
	}
	deep = dp_quiet(eng) &&
	       ((eng->mode == SRNIC_ATTACHED && !own_kernel_queue(eng)) ||
		node_rung(eng));
	/* Deep: quiet, every wake-up rung.  It does not spin either (a
	 * spin catches the answer to what was just sent, and nothing was);
	 * one that never naps is no sleeper. */
	say_deep(eng, deep && p->max_nap);
	if (acks || !p->max_nap ||
	    (!deep && now - p->idle_since < p->spin_tsc)) {
		rte_pause();
		return;
	}
	if (deep)
		us = eng->mode == SRNIC_ATTACHED ? QUIET_ATTACHED_US
		     : eng->cfg.nsvc		 ? QUIET_SVC_US
						 : QUIET_NODE_US;
	slept = idle_nap(eng, us, true);
	if (!slept)
		return;
	/* srnicd with no process attached only keeps its links alive:
	 * HELLOs every few ms, and its naps may be as long.  So with every
	 * process steered (node_keeps_links). */
	most = node_keeps_links(eng) ? NODE_IDLE_NAP_US : p->max_nap;
	if (most < p->max_nap)
		most = p->max_nap;
	p->nap = p->nap * 2 < most ? p->nap * 2 : most;
}

/* Stopping: let an application thread's iteration end, then keep the
 * token, so that none starts while the ports stop. */
static void datapath_stop(struct srnic_engine *eng)
{
	while (!dp_enter(eng)) {
		if (__atomic_load_n(&eng->dp_abandoned, __ATOMIC_ACQUIRE))
			return;	/* (srnic_datapath_abandon) */
		sched_yield();
	}
	srnic_dp_clock(eng);
	run_calls(eng);
	/* ACKs still waiting for company go now: a program that exits
	 * right after its last receive leaves no sender retrying.  (An
	 * attached process waits a little for the port token: its last
	 * frames must not stay behind.) */
	send_acks(eng, UINT64_MAX);
	if (eng->mode == SRNIC_ATTACHED)
		srnic_ports_flush_last(eng, LAST_FLUSH_MS);
	else
		srnic_ports_flush(eng);
}

/*
 * The engine thread's loop: an iteration whenever it can take the port
 * token (application threads run them too, between their own calls),
 * then the pace: at once again after work, aside while applications
 * drive, else spin and nap.
 */
void srnic_datapath_loop(struct srnic_engine *eng)
{
	struct dp_pace p = {
		.spin_tsc = eng->tsc_per_us * SPIN_US,
		.nap = NAP_MIN_US,
		.app_seen = app_iterations(eng),
		.max_nap = eng->cfg.idle_sleep_us,
	};

	p.aside_nap = p.max_nap < ASIDE_NAP_US ? p.max_nap : ASIDE_NAP_US;
	dp_leave(eng);	/* application threads may run iterations now */
	while (!eng->stop) {
		unsigned work = 0, ctrl = 0;
		bool ran, acks = false;
		uint64_t now;

		if (eng->mode == SRNIC_ATTACHED)
			attached_check(eng, &p);
		ran = dp_enter(eng);
		if (ran) {
			ctrl = eng->ctrl_frames;
			work = dp_iteration(eng);
			ctrl = eng->ctrl_frames - ctrl;
			acks = eng->ack_head || eng->lazy.head;
			dp_leave(eng);
			/* (an attached process's thread that polls is awake
			 * for the node's frames: srnicd steps aside, its
			 * bells unset, so that senders ring nobody; not a
			 * steering class's, which polls none of them, as in
			 * dp_run) */
			if (eng->mode == SRNIC_ATTACHED && !eng->cls)
				__atomic_fetch_add(&eng->node->apps_polled, 1,
						   __ATOMIC_RELAXED);
		}
		now = srnic_now();
		if (now >= p.look_at ||
		    __atomic_load_n(&eng->apps_asleep, __ATOMIC_RELAXED))
			look_at_apps(eng, &p, now);
		/* (an application thread that runs the datapath while it
		 * waits for an event has it to itself: two threads of one
		 * process spinning on two CPUs left the other node none) */
		if ((p.app_drives ||
		     __atomic_load_n(&eng->apps_spinning, __ATOMIC_RELAXED)) &&
		    p.max_nap) {
			say_deep(eng, false);
			nap_aside(eng, &p);
			continue;
		}
		if (work) {
			/* (the peers' HELLOs read, its own sent: still
			 * asleep, as far as the node goes) */
			if (work > ctrl)
				say_deep(eng, false);
			p.idle_since = 0;
			p.nap = NAP_MIN_US;
			continue;
		}
		idle_wait(eng, &p, now, ran, acks);
	}
	datapath_stop(eng);
}
