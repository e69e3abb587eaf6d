/* SPDX-License-Identifier: MIT */
/*
 * The engine's life and its datapath loop.
 *
 * The first srnic_engine_get() of a process starts a thread of the engine's
 * own, which initialises DPDK (rte_eal_init pins its caller: it must not be
 * the application's thread), opens the ports and then runs the datapath loop
 * as DPDK's main lcore.  The control core is a second, mostly sleeping
 * thread.  The last srnic_engine_put() says goodbye on every link, stops the
 * ports and leaves DPDK initialised but idle, since DPDK cannot be
 * initialised twice in one process; a later get() starts the ports again.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mempool.h>

#include "engine_internal.h"

#define MAX_EAL_ARGS 48
#define POOL_SIZE 16383
#define POOL_CACHE 256
#define TICK_US 100
#define SPIN_US 50

static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;
static struct srnic_engine *the_engine;
static int eal_state;	/* 0 never tried, 1 up, -1 failed */
static char eal_error[256];

/* ---- asynchronous events ---- */

static srnic_event_fn event_fn;

void srnic_engine_on_event(srnic_event_fn fn)
{
	__atomic_store_n(&event_fn, fn, __ATOMIC_RELEASE);
}

void srnic_event(enum srnic_event ev, void *handle)
{
	srnic_event_fn fn = __atomic_load_n(&event_fn, __ATOMIC_ACQUIRE);

	if (fn)
		fn(ev, handle);
}

/* ---- waking the datapath core ---- */

static void futex_wait(uint32_t *addr, uint32_t val, uint64_t us)
{
	struct timespec ts = {.tv_sec = us / 1000000,
			      .tv_nsec = (us % 1000000) * 1000};

	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

static void wake_datapath(struct srnic_engine *eng)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&eng->sleeping, __ATOMIC_RELAXED)) {
		__atomic_store_n(&eng->wake, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &eng->wake, FUTEX_WAKE_PRIVATE, 1, NULL,
			NULL, 0);
	}
}

static void idle_nap(struct srnic_engine *eng, uint64_t us)
{
	__atomic_store_n(&eng->sleeping, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (rte_ring_count(eng->doorbell) == 0 &&
	    rte_ring_count(eng->calls) == 0 && !eng->stop)
		futex_wait(&eng->wake, 0, us);
	__atomic_store_n(&eng->sleeping, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&eng->wake, 0, __ATOMIC_RELAXED);
}

/* ---- engine calls ---- */

void srnic_engine_call(struct srnic_engine *eng, struct srnic_call *c)
{
	unsigned spins = 0;

	c->done = 0;
	if (!eng->dp_started) {
		/* No datapath thread: nothing else touches engine state. */
		c->fn(eng, c);
		return;
	}
	while (rte_ring_mp_enqueue(eng->calls, c) != 0)
		sched_yield();
	wake_datapath(eng);
	while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE)) {
		if (++spins < 64)
			sched_yield();
		else
			usleep(20);
	}
}

void srnic_engine_quiesce(struct srnic_engine *eng)
{
	uint64_t start = __atomic_load_n(&eng->dp_epoch, __ATOMIC_ACQUIRE);
	unsigned i;

	if (!eng->dp_started)
		return;
	wake_datapath(eng);
	/* Two new iterations: the one under way when we were called has
	 * ended.  (A nap ends at once on the wake above.) */
	for (i = 0; i < 100000; i++) {
		if (__atomic_load_n(&eng->dp_epoch, __ATOMIC_ACQUIRE) - start >= 2)
			return;
		wake_datapath(eng);
		usleep(10);
	}
}

static unsigned run_calls(struct srnic_engine *eng)
{
	struct srnic_call *c;
	unsigned n = 0;

	while (rte_ring_sc_dequeue(eng->calls, (void **)&c) == 0) {
		c->fn(eng, c);
		__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
		n++;
	}
	return n;
}

/* ---- QP lists of the datapath ---- */

void srnic_qp_activate(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (qp->on_active)
		return;
	qp->on_active = 1;
	qp->active_next = NULL;
	if (eng->active_tail)
		eng->active_tail->active_next = qp;
	else
		eng->active_head = qp;
	eng->active_tail = qp;
}

/* A completion found its CQ full: keep the QP running until the
 * application polls room into it; nothing is dropped meanwhile. */
void srnic_qp_cq_full(struct srnic_engine *eng, struct srnic_qp *qp)
{
	qp->cq_wait = 1;
	srnic_qp_activate(eng, qp);
}

void srnic_qp_want_ack(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (qp->on_ack)
		return;
	qp->on_ack = 1;
	qp->ack_next = eng->ack_head;
	eng->ack_head = qp;
}

void srnic_qp_timer_on(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (qp->on_timer)
		return;
	qp->on_timer = 1;
	qp->timer_prev = NULL;
	qp->timer_next = eng->timer_head;
	if (eng->timer_head)
		eng->timer_head->timer_prev = qp;
	eng->timer_head = qp;
}

void srnic_qp_timer_off(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (!qp->on_timer)
		return;
	qp->on_timer = 0;
	if (qp->timer_prev)
		qp->timer_prev->timer_next = qp->timer_next;
	else
		eng->timer_head = qp->timer_next;
	if (qp->timer_next)
		qp->timer_next->timer_prev = qp->timer_prev;
	qp->timer_next = qp->timer_prev = NULL;
}

void srnic_qp_lists_remove(struct srnic_engine *eng, struct srnic_qp *qp)
{
	struct srnic_qp **pp;

	srnic_qp_timer_off(eng, qp);
	for (pp = &eng->ack_head; *pp; pp = &(*pp)->ack_next)
		if (*pp == qp) {
			*pp = qp->ack_next;
			break;
		}
	qp->on_ack = 0;
	if (qp->on_active) {
		struct srnic_qp *prev = NULL, *q;

		for (q = eng->active_head; q; prev = q, q = q->active_next)
			if (q == qp)
				break;
		if (q) {
			if (prev)
				prev->active_next = q->active_next;
			else
				eng->active_head = q->active_next;
			if (eng->active_tail == q)
				eng->active_tail = prev;
		}
		qp->on_active = 0;
	}
}

struct srnic_qp *srnic_qp_lookup(struct srnic_engine *eng, uint32_t qpn)
{
	struct srnic_qp *qp;

	if (qpn >= SRNIC_MAX_QP)
		return NULL;
	qp = __atomic_load_n(&eng->qp_tab[qpn], __ATOMIC_ACQUIRE);
	return qp && !qp->destroyed ? qp : NULL;
}

void srnic_qp_to_error(struct srnic_engine *eng, struct srnic_qp *qp)
{
	bool was_err = qp->state == SRNIC_QPS_ERR;

	__atomic_store_n(&qp->state, SRNIC_QPS_ERR, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);	/* see srnic_post_recv */
	srnic_responder_reset(qp);
	srnic_completer_flush(eng, qp);
	if (qp->flush_pending)
		srnic_qp_activate(eng, qp);
	/* It takes nothing more from its SRQ (verbs' LAST_WQE_REACHED: the
	 * program may now destroy it without losing a receive). */
	if (qp->srq && !was_err)
		srnic_event(SRNIC_EV_QP_LAST_WQE, qp->handle);
}

/* Send queue error (UC, UD): what is posted, and what will be until the
 * QP goes back to RTS, completes flushed; receiving goes on. */
void srnic_qp_to_sqe(struct srnic_engine *eng, struct srnic_qp *qp)
{
	__atomic_store_n(&qp->state, SRNIC_QPS_SQE, __ATOMIC_RELEASE);
	srnic_completer_flush_sq(qp);
	if (qp->flush_pending)
		srnic_qp_activate(eng, qp);
}

/* Does qp still have something for the datapath to do? */
static bool qp_busy(const struct srnic_qp *qp)
{
	uint32_t prod = __atomic_load_n(&qp->sq_prod, __ATOMIC_ACQUIRE);

	if (qp->state == SRNIC_QPS_ERR)
		return qp->flush_pending || qp->sq_comp != prod ||
		       qp->rq_comp != __atomic_load_n(&qp->rq_prod,
						      __ATOMIC_ACQUIRE);
	if (qp->state == SRNIC_QPS_SQE)
		return qp->flush_pending || qp->cq_wait || qp->sq_comp != prod;
	if (qp->state != SRNIC_QPS_RTS && qp->state != SRNIC_QPS_RTR &&
	    qp->state != SRNIC_QPS_SQD)
		return false;
	/* Out of credit, new data waits for an ACK, which activates the
	 * QP again (or for the timer's loan). */
	return (qp->cur_busy && !qp->fc_blocked) ||
	       qp->resend_head != qp->resend_tail ||
	       qp->rd_head != qp->rd_tail || qp->cq_wait ||
	       (qp->state == SRNIC_QPS_RTS && qp->sq_next != prod &&
		qp->sq_next - qp->sq_comp < SRNIC_WINDOW && !qp->fc_blocked &&
		!qp->sq_wait);
}

static unsigned run_qp(struct srnic_engine *eng, struct srnic_qp *qp)
{
	unsigned n = 0;

	if (qp->state == SRNIC_QPS_ERR) {
		srnic_completer_flush(eng, qp);
		return 1;
	}
	qp->cq_wait = 0;
	if (qp->state == SRNIC_QPS_SQE) {
		srnic_completer_flush_sq(qp);
		srnic_responder_progress(eng, qp);
		return 1;
	}
	n += srnic_responder_reads(eng, qp, SRNIC_BURST);
	n += srnic_requester_run(eng, qp, SRNIC_BURST);
	srnic_completer_complete(eng, qp);
	srnic_responder_progress(eng, qp);
	return n;
}

static unsigned run_active(struct srnic_engine *eng)
{
	struct srnic_qp *qp, *tail = eng->active_tail;
	unsigned n = 0;

	/* One round over the QPs that were active when it started; a QP
	 * that still has work goes to the back of the line. */
	while ((qp = eng->active_head) != NULL) {
		bool last = qp == tail;

		eng->active_head = qp->active_next;
		if (!eng->active_head)
			eng->active_tail = NULL;
		qp->on_active = 0;
		n += run_qp(eng, qp);
		if (qp_busy(qp)) {
			srnic_qp_activate(eng, qp);
		} else {
			/* Re-arm the doorbell, then look again: a post that
			 * saw it armed did not ring. */
			__atomic_store_n(&qp->db_armed, 0, __ATOMIC_SEQ_CST);
			if (qp_busy(qp) &&
			    !__atomic_exchange_n(&qp->db_armed, 1,
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

void srnic_engine_doorbell(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (__atomic_exchange_n(&qp->db_armed, 1, __ATOMIC_SEQ_CST))
		return;
	while (rte_ring_mp_enqueue(eng->doorbell, qp) != 0)
		sched_yield();
	wake_datapath(eng);
}

static void send_acks(struct srnic_engine *eng)
{
	struct srnic_qp *qp;

	while ((qp = eng->ack_head) != NULL) {
		eng->ack_head = qp->ack_next;
		qp->on_ack = 0;
		/* A QP the responder has just taken to the error state
		 * still owes its peer the NAK that says why. */
		if (qp->state >= SRNIC_QPS_RTR &&
		    (qp->state != SRNIC_QPS_ERR ||
		     qp->ack_syndrome != SRNIC_ACK_OK))
			srnic_responder_send_ack(eng, qp);
	}
}

static void run_timers(struct srnic_engine *eng, uint64_t now)
{
	struct srnic_qp *qp, *next;

	/* Short of packet buffers (held packets, full transmit queues):
	 * grant peers less until they drain. */
	eng->fc_grant = rte_mempool_avail_count(eng->pool) < POOL_SIZE / 8
				? SRNIC_FC_WINDOW / 8
				: SRNIC_FC_WINDOW;
	for (qp = eng->timer_head; qp; qp = next) {
		next = qp->timer_next;
		if (qp->uc_stuck_at)
			srnic_responder_uc_timer(eng, qp, now);
		srnic_completer_timeouts(eng, qp, now);
	}
}

/* ---- receive ---- */

/* A frame spread over several segments is copied into one: every consumer
 * then sees a contiguous frame. */
static struct rte_mbuf *linearize(struct srnic_engine *eng, struct rte_mbuf *m)
{
	struct rte_mbuf *n;
	uint32_t len = rte_pktmbuf_pkt_len(m);
	char *dst;

	if (m->nb_segs == 1)
		return m;
	n = rte_pktmbuf_alloc(eng->pool);
	dst = n ? rte_pktmbuf_append(n, len) : NULL;
	if (!dst) {
		rte_pktmbuf_free(n);
		rte_pktmbuf_free(m);
		eng->st.drops[SRNIC_DROP_NO_MBUF]++;
		return NULL;
	}
	srnic_mbuf_copy_out(m, 0, dst, len);
	n->port = m->port;
	rte_pktmbuf_free(m);
	return n;
}

static bool rx_one(struct srnic_engine *eng, struct rte_mbuf *m)
{
	struct srnic_pkt pkt;
	struct srnic_qp *qp;
	enum srnic_wire_err e;

	e = srnic_wire_decode(rte_pktmbuf_mtod(m, const uint8_t *),
			      rte_pktmbuf_data_len(m), &pkt);
	if (e != SRNIC_WIRE_OK) {
		eng->st.drops[e == SRNIC_WIRE_NOT_OURS ? SRNIC_DROP_NOT_OURS
						       : SRNIC_DROP_MALFORMED]++;
		return false;
	}
	if (srnic_op_is_control(pkt.opcode)) {
		/* The peer is about to vanish from this link: let go of it
		 * now, on the thread that polls it, and say so. */
		if (pkt.opcode == SRNIC_OP_BYE && m->port < eng->nports)
			srnic_leave_answer(eng, m->port);
		if (pkt.opcode == SRNIC_OP_BYE_ACK)
			return false;	/* late: we are not leaving */
		/* Forgetting a peer's old incarnation must happen here, in
		 * order with the data of this port. */
		if (pkt.opcode == SRNIC_OP_BOOTING && m->port < eng->nports) {
			if (pkt.dst_inc != eng->inc) {
				eng->st.drops[SRNIC_DROP_STALE_INC]++;
				return false;
			}
			srnic_integrate_booting(eng, &pkt, m->port);
		}
		if (rte_ring_sp_enqueue(eng->ctrl_rx, m) == 0)
			return true;
		return false;
	}
	if (pkt.opcode == SRNIC_OP_UD_SEND && pkt.dst_qpn == SRNIC_QPN_MCAST) {
		srnic_mcast_deliver(eng, &pkt);	/* to no incarnation */
		return false;
	}
	if (pkt.dst_inc != eng->inc) {
		eng->st.drops[SRNIC_DROP_STALE_INC]++;
		return false;
	}
	qp = srnic_qp_lookup(eng, pkt.dst_qpn);
	if (pkt.opcode == SRNIC_OP_UD_SEND) {
		/* A datagram: from anyone who knows the Q_Key. */
		if (!qp || qp->type != SRNIC_QPT_UD) {
			eng->st.drops[SRNIC_DROP_NO_QP]++;
			return false;
		}
		srnic_responder_datagram(eng, qp, &pkt, NULL);
		return false;
	}
	/* Connected: only from the QP it is connected to, and UC only takes
	 * SEND and WRITE (and ACKs, which bring credit). */
	if (!qp || qp->type == SRNIC_QPT_UD ||
	    pkt.src_qpn != qp->at.dest_qpn ||
	    (qp->type == SRNIC_QPT_UC && pkt.opcode != SRNIC_OP_SEND &&
	     pkt.opcode != SRNIC_OP_WRITE && pkt.opcode != SRNIC_OP_ACK)) {
		eng->st.drops[SRNIC_DROP_NO_QP]++;
		return false;
	}
	if (pkt.src_inc != qp->peer_inc) {
		eng->st.drops[SRNIC_DROP_STALE_INC]++;
		return false;
	}
	switch (pkt.opcode) {
	case SRNIC_OP_ACK:
		if (srnic_qp_reliable(qp))
			srnic_completer_ack(eng, qp, &pkt);
		else
			srnic_completer_credit(eng, qp, &pkt);
		return false;
	case SRNIC_OP_READ_RESP:
		srnic_completer_read_resp(eng, qp, &pkt, m);
		return false;
	default:
		if (qp->state != SRNIC_QPS_RTR && qp->state != SRNIC_QPS_RTS &&
		    qp->state != SRNIC_QPS_SQD && qp->state != SRNIC_QPS_SQE) {
			eng->st.drops[SRNIC_DROP_QP_STATE]++;
			return false;
		}
		return srnic_responder_rx(eng, qp, &pkt, m);
	}
}

static unsigned rx_ports(struct srnic_engine *eng)
{
	struct rte_mbuf *pkts[SRNIC_BURST];
	unsigned p, total = 0;

	for (p = 0; p < eng->nports; p++) {
		struct srnic_port *port = &eng->port[p];
		uint16_t n, i;

		/* Only this thread decides to touch a port: while its link is
		 * up, and not in a life of the link whose peer said BYE. */
		port->polling = __atomic_load_n(&port->link_up,
						__ATOMIC_ACQUIRE) &&
				port->bye_gen !=
					__atomic_load_n(&port->link_gen,
							__ATOMIC_ACQUIRE);
		if (!port->polling)
			continue;
		n = srnic_port_rx(eng, p, pkts, SRNIC_BURST);
		for (i = 0; i < n; i++) {
			struct rte_mbuf *m = linearize(eng, pkts[i]);

			if (i + 1 < n)
				rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1],
							       void *));
			if (m && !rx_one(eng, m))
				rte_pktmbuf_free(m);
		}
		total += n;
	}
	return total;
}

static unsigned drain_ctrl_tx(struct srnic_engine *eng)
{
	struct rte_mbuf *m;
	unsigned n = 0;

	while (rte_ring_sc_dequeue(eng->ctrl_tx, (void **)&m) == 0) {
		if (m->port < eng->nports)
			srnic_port_tx(eng, m->port, m);
		else
			rte_pktmbuf_free(m);
		n++;
	}
	return n;
}

/* ---- the loop ---- */

static void datapath_loop(struct srnic_engine *eng)
{
	uint64_t spin_tsc = eng->tsc_hz / 1000000 * SPIN_US;
	uint64_t idle_since = 0, nap = 10;

	while (!eng->stop) {
		uint64_t now;
		unsigned work = 0;

		__atomic_store_n(&eng->dp_epoch, eng->dp_epoch + 1,
				 __ATOMIC_RELEASE);
		work += run_calls(eng);
		work += drain_doorbells(eng);
		work += rx_ports(eng);
		send_acks(eng);
		work += run_active(eng);
		send_acks(eng);
		work += drain_ctrl_tx(eng);
		now = srnic_now();
		if (now >= eng->next_tick) {
			eng->next_tick = now + eng->tick_tsc;
			run_timers(eng, now);
		}
		work += srnic_ports_flush(eng);

		if (work) {
			idle_since = 0;
			nap = 10;
			continue;
		}
		/* Idle: spin a little for latency, then nap so that two
		 * nodes and their programs can share two cores. */
		if (!idle_since)
			idle_since = now;
		if (now - idle_since < spin_tsc || eng->cfg.idle_sleep_us == 0) {
			rte_pause();
			continue;
		}
		idle_nap(eng, nap);
		if (nap < eng->cfg.idle_sleep_us)
			nap = nap * 2 < eng->cfg.idle_sleep_us
				      ? nap * 2
				      : eng->cfg.idle_sleep_us;
	}
}

/* ---- start and stop ---- */

struct start_args {
	struct srnic_engine *eng;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int done;
	int rc;
	char err[256];
};

static int eal_init(const struct srnic_config *cfg, char *err, size_t errlen)
{
	char *argv[MAX_EAL_ARGS];
	char mem[32], lcore[32], extra[sizeof(cfg->eal_extra)];
	char vdev[SRNIC_MAX_PORTS][sizeof(cfg->port[0])];
	int argc = 0, rc;
	unsigned i;
	char *tok, *save;
	cpu_set_t cpus;

	/* One lcore, this thread: the engine starts its other thread (the
	 * control core) itself, and an idle EAL worker per CPU is waste. */
	sched_getaffinity(0, sizeof(cpus), &cpus);
	for (i = 0; i < CPU_SETSIZE && !CPU_ISSET(i, &cpus); i++)
		;
	snprintf(lcore, sizeof(lcore), "-l%u", i < CPU_SETSIZE ? i : 0);
	argv[argc++] = "srnic";
	argv[argc++] = lcore;
	argv[argc++] = "--no-pci";
	argv[argc++] = "--no-telemetry";
	argv[argc++] = "--log-level=*:error";
	/* Nothing of a node's memory is shared with another DPDK process,
	 * and nothing may be left behind in hugetlbfs when it dies. */
	if (cfg->hugepages) {
		argv[argc++] = "--in-memory";
	} else {
		argv[argc++] = "--no-huge";
		argv[argc++] = "--no-shconf";
	}
	snprintf(mem, sizeof(mem), "-m%u", cfg->mem_mb);
	argv[argc++] = mem;
	for (i = 0; i < cfg->nports; i++) {
		srnic_port_vdev_arg(cfg, i, vdev[i], sizeof(vdev[i]));
		argv[argc++] = "--vdev";
		argv[argc++] = vdev[i];
	}
	snprintf(extra, sizeof(extra), "%s", cfg->eal_extra);
	for (tok = strtok_r(extra, " \t", &save);
	     tok && argc < MAX_EAL_ARGS - 1; tok = strtok_r(NULL, " \t", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;

	/* rte_eal_init pins this thread to one CPU; the datapath should
	 * float over the CPUs the program was given, as the rest of it does. */
	srnic_ports_prepare(cfg);
	rc = rte_eal_init(argc, argv);
	if (rc < 0) {
		snprintf(err, errlen, "srnic: DPDK initialisation failed: %s "
			 "(the EAL lines above say why: check the port lines "
			 "and hugepages in %s)",
			 rte_strerror(rte_errno), cfg->path);
		return -1;
	}
	pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	return 0;
}

static int engine_resources(struct srnic_engine *eng, char *err, size_t errlen)
{
	unsigned room = RTE_PKTMBUF_HEADROOM + SRNIC_MAX_HLEN + eng->cfg.mtu;
	int rc;

	/* Some ports want a full standard frame per mbuf whatever our MTU
	 * (af_packet checks its frame size against the room). */
	if (room < RTE_MBUF_DEFAULT_BUF_SIZE)
		room = RTE_MBUF_DEFAULT_BUF_SIZE;

	if (!eng->pool) {
		eng->pool = rte_pktmbuf_pool_create("srnic_pool", POOL_SIZE,
						    POOL_CACHE, 0,
						    RTE_ALIGN_CEIL(room, 128),
						    rte_socket_id());
		eng->doorbell = rte_ring_create("srnic_db", 4096,
						rte_socket_id(),
						RING_F_SC_DEQ);
		eng->calls = rte_ring_create("srnic_calls", 256,
					     rte_socket_id(), RING_F_SC_DEQ);
		eng->ctrl_rx = rte_ring_create("srnic_ctrl_rx", 1024,
					       rte_socket_id(),
					       RING_F_SP_ENQ | RING_F_SC_DEQ);
		eng->ctrl_tx = rte_ring_create("srnic_ctrl_tx", 1024,
					       rte_socket_id(), RING_F_SC_DEQ);
	}
	if (!eng->pool || !eng->doorbell || !eng->calls || !eng->ctrl_rx ||
	    !eng->ctrl_tx) {
		snprintf(err, errlen, "srnic: out of DPDK memory (mem_mb in %s)",
			 eng->cfg.path);
		return -ENOMEM;
	}
	eng->payload_max = eng->cfg.mtu;
	eng->fc_grant = SRNIC_FC_WINDOW;
	/* Faults the testbed set apply from the first frame on, not from
	 * the control core's first tick. */
	srnic_fault_poll(eng);
	rc = srnic_ports_start(eng, err, errlen);
	if (rc == 0)
		srnic_stripe_plan(eng);
	return rc;
}

static void *datapath_thread(void *arg)
{
	struct start_args *sa = arg;
	struct srnic_engine *eng = sa->eng;
	int rc = 0;

	pthread_setname_np(pthread_self(), "srnic-dp");
	if (eal_state == 0) {
		eal_state = eal_init(&eng->cfg, eal_error, sizeof(eal_error))
				    ? -1
				    : 1;
	}
	if (eal_state < 0) {
		snprintf(sa->err, sizeof(sa->err), "%s", eal_error);
		rc = -ENODEV;
	} else {
		eng->tsc_hz = rte_get_tsc_hz();
		eng->tsc_per_us = eng->tsc_hz / 1000000 ? eng->tsc_hz / 1000000
							 : 1;
		eng->tick_tsc = eng->tsc_per_us * TICK_US;
		rc = engine_resources(eng, sa->err, sizeof(sa->err));
	}

	pthread_mutex_lock(&sa->lock);
	sa->rc = rc;
	sa->done = 1;
	pthread_cond_signal(&sa->cond);
	pthread_mutex_unlock(&sa->lock);
	if (rc)
		return NULL;

	datapath_loop(eng);
	run_calls(eng);
	srnic_leave_links(eng);
	srnic_ports_stop(eng);
	return NULL;
}

/* Stop the control core, then the datapath, which leaves its links and
 * stops the ports on its way out.  Called with engine_lock held. */
static void engine_stop(struct srnic_engine *eng)
{
	srnic_control_stop(eng);
	eng->stop = 1;
	wake_datapath(eng);
	pthread_join(eng->dp_thread, NULL);
	eng->dp_started = 0;
}

struct srnic_engine *srnic_engine_get(const struct srnic_config *cfg,
				      char *err, unsigned errlen)
{
	struct srnic_engine *eng;
	struct start_args sa;
	uint64_t seed;

	pthread_mutex_lock(&engine_lock);
	eng = the_engine;
	if (eng && eng->refcnt) {
		eng->refcnt++;
		pthread_mutex_unlock(&engine_lock);
		return eng;
	}
	if (!eng) {
		eng = srnic_zalloc_aligned(sizeof(*eng), SRNIC_CACHE_LINE);
		if (!eng) {
			pthread_mutex_unlock(&engine_lock);
			snprintf(err, errlen, "srnic: out of memory");
			errno = ENOMEM;
			return NULL;
		}
		if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
			seed = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
		eng->cfg = *cfg;
		if (srnic_mem_init(&eng->mem, seed)) {
			srnic_free(eng);
			pthread_mutex_unlock(&engine_lock);
			snprintf(err, errlen, "srnic: out of memory");
			errno = ENOMEM;
			return NULL;
		}
		eng->qpn_next = 16;
		pthread_mutex_init(&eng->obj_lock, NULL);
		pthread_mutex_init(&eng->peer_lock, NULL);
		the_engine = eng;
	}

	/* A fresh incarnation at every start, a restart in the same process
	 * too (peers then forget what they held for the last one): never 0,
	 * which no packet may claim.  Drawn apart from the key seed: peers
	 * see the incarnation, and must learn nothing of the keys. */
	if (getrandom(&eng->inc, sizeof(eng->inc), 0) != sizeof(eng->inc))
		eng->inc = (uint32_t)(srnic_now() * 0x9e3779b97f4a7c15ull >> 32);
	eng->inc |= 1;

	memset(&sa, 0, sizeof(sa));
	sa.eng = eng;
	pthread_mutex_init(&sa.lock, NULL);
	pthread_cond_init(&sa.cond, NULL);
	eng->stop = 0;
	if (pthread_create(&eng->dp_thread, NULL, datapath_thread, &sa)) {
		pthread_mutex_unlock(&engine_lock);
		snprintf(err, errlen, "srnic: cannot start the engine thread");
		errno = EAGAIN;
		return NULL;
	}
	pthread_mutex_lock(&sa.lock);
	while (!sa.done)
		pthread_cond_wait(&sa.cond, &sa.lock);
	pthread_mutex_unlock(&sa.lock);
	if (sa.rc) {
		pthread_join(eng->dp_thread, NULL);
		pthread_mutex_unlock(&engine_lock);
		snprintf(err, errlen, "%s", sa.err);
		errno = -sa.rc;
		return NULL;
	}
	eng->dp_started = 1;
	if (srnic_control_start(eng)) {
		engine_stop(eng);
		pthread_mutex_unlock(&engine_lock);
		snprintf(err, errlen, "srnic: cannot start the control core");
		errno = EAGAIN;
		return NULL;
	}
	eng->refcnt = 1;
	pthread_mutex_unlock(&engine_lock);
	return eng;
}

void srnic_engine_put(struct srnic_engine *eng)
{
	pthread_mutex_lock(&engine_lock);
	/* Others may still use it, or it was shut down at exit. */
	if (--eng->refcnt == 0 && eng->dp_started)
		engine_stop(eng);
	pthread_mutex_unlock(&engine_lock);
}

/*
 * A program that exits with the device still open (many do) must leave its
 * links as politely as one that closes it: peers polling a vanishing memif
 * link fault.  Runs at exit() and at unload; not after SIGKILL, which the
 * peers must survive on their own.
 */
__attribute__((destructor)) static void engine_at_exit(void)
{
	struct srnic_engine *eng = the_engine;

	if (!eng || pthread_mutex_trylock(&engine_lock))
		return;
	if (eng->refcnt > 0 && eng->dp_started)
		engine_stop(eng);
	pthread_mutex_unlock(&engine_lock);
}

unsigned srnic_engine_ports_up(const struct srnic_engine *eng)
{
	unsigned p, n = 0;

	for (p = 0; p < eng->nports; p++)
		n += __atomic_load_n(&eng->port[p].link_up, __ATOMIC_RELAXED);
	return n;
}
