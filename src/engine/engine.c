/* SPDX-License-Identifier: MIT */
/*
 * The engine's life: start, stop, DPDK.
 *
 * srnic_engine_get() makes the process's engine (its memory table: a
 * program may register memory before it has a CQ or QP) and starts nothing.
 * The first srnic_engine_start() starts a thread of the engine's own, which
 * initialises DPDK (rte_eal_init pins its caller: it must not be the
 * application's thread), opens the ports and then runs the datapath loop as
 * DPDK's main lcore (datapath.c; application threads share that work).  The
 * control core is a second, mostly sleeping thread.  The last
 * srnic_engine_put() of a started engine says goodbye on every link, stops
 * the ports and leaves DPDK initialised but idle, since DPDK cannot be
 * initialised twice in one process; a later start() starts the ports again.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mempool.h>

#include "engine_internal.h"

#define MAX_EAL_ARGS 48
#define POOL_CACHE 256
/* Relaxed tail sync: a process descheduled inside an operation on the
 * pool's ring does not keep every other process spinning on the ring's
 * tail until it runs again (DPDK's default ring did, for up to 2 s with
 * busy programs on two CPUs: docs/architecture.md, "Lifetimes"). */
#define POOL_OPS "ring_mt_rts"
#define TICK_US 100

static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;
static struct srnic_engine *the_engine;
static int eal_state;	/* 0 never tried, 1 up, -1 failed */
static enum srnic_engine_mode eal_mode;	/* what DPDK came up as */
static char eal_error[256];

/* ---- start and stop ---- */

struct start_args {
	struct srnic_engine *eng;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int done;
	int rc;
	char err[256];
};

/* rte_eal_init's command line, and the strings it points into (which
 * must outlive the call). */
struct eal_args {
	char *argv[MAX_EAL_ARGS];
	int argc;
	char lcore[32], mem[32];
	char prefix[96], huge[160], base[48];
	char vdev[SRNIC_MAX_PORTS][sizeof(((struct srnic_config *)0)->port[0])];
	char extra[sizeof(((struct srnic_config *)0)->eal_extra)];
};

static void eal_arg(struct eal_args *a, char *arg)
{
	a->argv[a->argc++] = arg;
}

/* The first CPU this thread may run on (0 if none is found). */
static unsigned first_cpu(const cpu_set_t *cpus)
{
	unsigned i;

	for (i = 0; i < CPU_SETSIZE && !CPU_ISSET(i, cpus); i++)
		;
	return i < CPU_SETSIZE ? i : 0;
}

/* One lcore, this thread, on cpu: the engine starts its other thread
 * (the control core) itself, and an idle EAL worker per CPU is waste. */
static void eal_args_lcore(struct eal_args *a, const struct srnic_engine *eng,
			   unsigned cpu)
{
	if (eng->mode != SRNIC_EMBEDDED)
		/* (its own lcore id: the node's pools keep a cache for
		 * each lcore id, and every process of the node shares them;
		 * srnicd's is 0, its processes' SRNIC_PROC_LCORE0 on) */
		snprintf(a->lcore, sizeof(a->lcore), "--lcores=%u@%u",
			 eng->mode == SRNIC_NODE ? 0 : eng->lcore, cpu);
	else
		snprintf(a->lcore, sizeof(a->lcore), "-l%u", cpu);
	eal_arg(a, a->lcore);
}

/* Where DPDK's memory comes from, by the engine's mode. */
static void eal_args_memory(struct eal_args *a, const struct srnic_engine *eng)
{
	const struct srnic_config *cfg = &eng->cfg;

	if (eng->mode != SRNIC_EMBEDDED) {
		/* srnicd's node: hugepage files its processes map, at the
		 * same addresses (high enough to stay clear of a sanitizer's
		 * shadow memory and of the usual mappings). */
		snprintf(a->prefix, sizeof(a->prefix), "--file-prefix=%s",
			 eng->eal.prefix);
		snprintf(a->huge, sizeof(a->huge), "--huge-dir=%s",
			 eng->eal.huge_dir);
		snprintf(a->base, sizeof(a->base), "--base-virtaddr=%s",
			 eng->eal.base_va);
		eal_arg(a, a->prefix);
		eal_arg(a, a->huge);
		eal_arg(a, a->base);
		eal_arg(a, eng->mode == SRNIC_NODE ? "--proc-type=primary"
						   : "--proc-type=secondary");
	} else if (cfg->hugepages) {
		/* Nothing of a node's memory is shared with another DPDK
		 * process, and nothing may be left behind in hugetlbfs when
		 * it dies. */
		eal_arg(a, "--in-memory");
	} else {
		eal_arg(a, "--no-huge");
		eal_arg(a, "--no-shconf");
	}
	/* (a secondary process uses the node's memory and finds the
	 * node's ports by itself) */
	if (eng->mode == SRNIC_ATTACHED)
		return;
	snprintf(a->mem, sizeof(a->mem), "-m%u", cfg->mem_mb);
	eal_arg(a, a->mem);
}

static void eal_args_ports(struct eal_args *a, const struct srnic_engine *eng)
{
	const struct srnic_config *cfg = &eng->cfg;
	unsigned i;

	for (i = 0; eng->mode != SRNIC_ATTACHED && i < cfg->nports; i++) {
		srnic_port_vdev_arg(cfg, i, a->vdev[i], sizeof(a->vdev[i]));
		eal_arg(a, "--vdev");
		eal_arg(a, a->vdev[i]);
	}
}

/* The configuration's own EAL words, as many as fit. */
static void eal_args_extra(struct eal_args *a, const struct srnic_config *cfg)
{
	char *tok, *save;

	snprintf(a->extra, sizeof(a->extra), "%s", cfg->eal_extra);
	for (tok = strtok_r(a->extra, " \t", &save);
	     tok && a->argc < MAX_EAL_ARGS - 1;
	     tok = strtok_r(NULL, " \t", &save))
		eal_arg(a, tok);
}

/* A dead process's DPDK files that srnicd did not remove and that our
 * pid now names: our EAL would open them and need their lock
 * (eal_files.c). */
static void forget_own_files(const struct srnic_engine *eng)
{
	char dir[256];

	if (srnic_eal_runtime_dir(eng->eal.prefix, dir, sizeof(dir)) == 0)
		srnic_eal_files_forget(dir, (int)getpid());
}

static int eal_init(const struct srnic_engine *eng, char *err, size_t errlen)
{
	const struct srnic_config *cfg = &eng->cfg;
	struct eal_args a = {.argc = 0};
	cpu_set_t cpus;
	int rc;

	sched_getaffinity(0, sizeof(cpus), &cpus);
	eal_arg(&a, "srnic");
	eal_args_lcore(&a, eng, first_cpu(&cpus));
	eal_arg(&a, "--no-pci");
	eal_arg(&a, "--no-telemetry");
	eal_arg(&a, "--log-level=*:error");
	/* DPDK's tap says at every start, at error level, that this kernel
	 * has no multiq qdisc (so no rte_flow: srnic uses none) and, with no
	 * process attached, that it could send its queues to none; a real
	 * failure to start a tap port is srnic's own message. */
	eal_arg(&a, "--log-level=pmd.net.tap:critical");
	eal_args_memory(&a, eng);
	eal_args_ports(&a, eng);
	eal_args_extra(&a, cfg);
	a.argv[a.argc] = NULL;

	if (eng->mode != SRNIC_ATTACHED)
		srnic_ports_prepare(cfg);
	else
		forget_own_files(eng);
	rc = rte_eal_init(a.argc, a.argv);
	if (rc < 0) {
		snprintf(err, errlen, "srnic: DPDK initialisation failed: %s "
			 "(the EAL lines above say why: check the port lines "
			 "and hugepages in %s)",
			 rte_strerror(rte_errno), cfg->path);
		return -1;
	}
	/* rte_eal_init pinned this thread to one CPU; the datapath should
	 * float over the CPUs the program was given, as the rest of it
	 * does. */
	pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	return 0;
}

/* Steering: the first of the node's classes nobody has, if any (given
 * back as the process detaches, srnic_attach_close, or by srnicd as it
 * lets a dead one go, srnicd_proc_release); the others share class 0,
 * the port token's path. */
static void class_take(struct srnic_engine *eng)
{
	uint32_t me = eng->slot + 1;
	unsigned c;

	eng->cls = 0;
	for (c = 1; c < eng->node->classes && c < SRNIC_MAX_CLASSES; c++) {
		uint32_t free = 0;

		if (__atomic_load_n(&eng->node->class_owner[c],
				    __ATOMIC_ACQUIRE) == me ||
		    __atomic_compare_exchange_n(&eng->node->class_owner[c],
						&free, me, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			eng->cls = c;
			return;
		}
	}
}

/*
 * srnicd's node goes into DPDK memory its processes map at the same
 * address; an attached process finds it there and uses it in place of its
 * own (which it frees).  Everything the node points to (pools, rings) is
 * in that memory too.
 */
static int node_share(struct srnic_engine *eng, char *err, size_t errlen)
{
	const struct rte_memzone *mz;
	struct srnic_node *own = eng->node;
	pthread_mutexattr_t ma;

	if (eng->mode == SRNIC_ATTACHED) {
		struct srnic_proc *me;

		if (!own->shared) {
			mz = rte_memzone_lookup(SRNIC_NODE_MZ);
			if (!mz || mz->len < sizeof(struct srnic_node)) {
				snprintf(err, errlen, "srnic: srnicd's node is "
					 "not in its memory (a srnicd of "
					 "another version?)");
				return -EPROTO;
			}
			eng->node = mz->addr;
			srnic_free(own);
		}
		/* DPDK comes up once in a process: a srnicd started since
		 * is in memory this process never mapped. */
		if (eng->node->inc != eng->attach_inc) {
			snprintf(err, errlen, "srnic: srnicd restarted since "
				 "this program first attached: restart it");
			return -EBUSY;
		}
		class_take(eng);
		/* (at every start: each attachment has a slot of its own) */
		me = &eng->node->proc[eng->slot];
		if (!me->doorbell || !me->calls || !me->rx) {
			snprintf(err, errlen, "srnic: srnicd made no rings for "
				 "this process");
			return -EPROTO;
		}
		eng->doorbell = me->doorbell;
		eng->calls = me->calls;
		eng->bell = &me->bell;
		eng->st = &me->st;
		return 0;
	}
	if (own->shared)
		return 0;	/* srnicd starting again */
	mz = rte_memzone_reserve(SRNIC_NODE_MZ, sizeof(struct srnic_node),
				 rte_socket_id(), 0);
	if (!mz) {
		snprintf(err, errlen, "srnic: no DPDK memory for the node "
			 "(mem_mb in %s)", eng->cfg.path);
		return -ENOMEM;
	}
	memcpy(mz->addr, own, sizeof(*own));
	eng->node = mz->addr;
	srnic_free(own);
	eng->node->shared = 1;
	/* (attached processes take them to resolve GIDs and to join
	 * multicast groups: srnic_shared_lock) */
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&eng->node->peer_lock, &ma);
	pthread_mutex_init(&eng->node->mcast_lock, &ma);
	pthread_mutexattr_destroy(&ma);
	eng->st = &eng->node->proc[0].st;	/* (srnicd's own) */
	eng->node->proc[0].live = 1;
	snprintf(eng->node->proc[0].prog, sizeof(eng->node->proc[0].prog),
		 "srnicd");
	return 0;
}

static int engine_resources(struct srnic_engine *eng, char *err, size_t errlen)
{
	struct srnic_node *node;
	unsigned room = RTE_PKTMBUF_HEADROOM + SRNIC_MAX_OVERHEAD + eng->cfg.mtu;
	unsigned i;
	int rc;

	/* Some ports want a full standard frame per mbuf whatever our MTU,
	 * and af_packet its ring slot's (srnic_port_buf_need). */
	if (room < RTE_MBUF_DEFAULT_BUF_SIZE)
		room = RTE_MBUF_DEFAULT_BUF_SIZE;
	for (i = 0; i < eng->cfg.nports; i++)
		room = RTE_MAX(room, RTE_PKTMBUF_HEADROOM +
					     srnic_port_buf_need(eng->cfg.port[i]));

	if (eng->mode != SRNIC_EMBEDDED) {
		rc = node_share(eng, err, errlen);
		if (rc)
			return rc;
	}
	node = eng->node;
	if (eng->mode != SRNIC_ATTACHED)
		eng->bell = &node->proc[0].bell;	/* (the node's sleeper) */
	if (eng->mode == SRNIC_ATTACHED) {
		/* The ports, the loopback and the control core are srnicd's;
		 * the process sends and receives on them.  A secondary
		 * process maps a memif link's memory when it first looks at
		 * the link (an exchange with srnicd that may take a while):
		 * now, not later while it holds the port token, which every
		 * process would then wait for (it starved their QPs into
		 * retry errors). */
		srnic_ports_remap(eng);
		srnic_port_bells_open(eng);
		eng->payload_max = eng->cfg.mtu;
		eng->fc_grant = SRNIC_FC_WINDOW;
		srnic_stripe_plan(eng);
		return 0;
	}
	if (!node->pool) {
		node->pool = rte_pktmbuf_pool_create_by_ops(
			"srnic_pool", SRNIC_POOL_SIZE, POOL_CACHE, 0,
			RTE_ALIGN_CEIL(room, 128), rte_socket_id(), POOL_OPS);
		/* Frames whose payload stays in registered memory take two
		 * mbufs from here (the header, and the one that points at
		 * the payload): small ones, so that they stay in cache. */
		node->zc_pool = rte_pktmbuf_pool_create_by_ops(
			"srnic_zc", SRNIC_POOL_SIZE, POOL_CACHE, 0,
			RTE_ALIGN_CEIL(RTE_PKTMBUF_HEADROOM + SRNIC_MAX_HLEN,
				       64),
			rte_socket_id(), POOL_OPS);
		eng->doorbell = rte_ring_create("srnic_db", 4096,
						rte_socket_id(),
						RING_F_SC_DEQ);
		eng->calls = rte_ring_create("srnic_calls", 256,
					     rte_socket_id(), RING_F_SC_DEQ);
		if (srnic_tap_init(node))
			node->pool = NULL;	/* (reported below, as for the pool) */
		node->ctrl_rx = rte_ring_create("srnic_ctrl_rx", 1024,
						rte_socket_id(),
						RING_F_SP_ENQ | RING_F_SC_DEQ);
		node->ctrl_tx = rte_ring_create("srnic_ctrl_tx", 1024,
						rte_socket_id(), RING_F_SC_DEQ);
	}
	if (!node->pool || !node->zc_pool || !eng->doorbell || !eng->calls ||
	    !node->ctrl_rx || !node->ctrl_tx) {
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
		rc = srnic_loop_start(eng, err, errlen);
	if (rc == 0) {
		srnic_port_bells_open(eng);
		srnic_stripe_plan(eng);
	} else
		srnic_ports_stop(eng);
	return rc;
}

static void *datapath_thread(void *arg)
{
	struct start_args *sa = arg;
	struct srnic_engine *eng = sa->eng;
	int rc = 0;

	pthread_setname_np(pthread_self(), "srnic-dp");
	if (eal_state == 0) {
		eal_state = eal_init(eng, eal_error, sizeof(eal_error))
				    ? -1
				    : 1;
		eal_mode = eng->mode;
	}
	if (eal_state < 0) {
		snprintf(sa->err, sizeof(sa->err), "%s", eal_error);
		rc = -ENODEV;
	} else {
		/* (a process attached again: its new slot's lcore) */
		if (eng->mode == SRNIC_ATTACHED)
			RTE_PER_LCORE(_lcore_id) = eng->lcore;
		eng->tsc_hz = rte_get_tsc_hz();
		eng->tsc_per_us = eng->tsc_hz / 1000000 ? eng->tsc_hz / 1000000
							 : 1;
		eng->tick_tsc = eng->tsc_per_us * TICK_US;
		eng->ack_delay_tsc = eng->tsc_per_us * eng->cfg.ack_delay_us;
		eng->map_budget.max = SRNIC_MAP_BUDGET;
		eng->held_max = SRNIC_HELD_MAX;
		rc = engine_resources(eng, sa->err, sizeof(sa->err));
	}

	pthread_mutex_lock(&sa->lock);
	sa->rc = rc;
	sa->done = 1;
	pthread_cond_signal(&sa->cond);
	pthread_mutex_unlock(&sa->lock);
	if (rc)
		return NULL;

	srnic_datapath_loop(eng);
	if (__atomic_load_n(&eng->dp_abandoned, __ATOMIC_ACQUIRE))
		return NULL;	/* ports and links left as they are */
	if (eng->mode == SRNIC_ATTACHED)
		return NULL;	/* srnicd's, who stays */
	srnic_leave_links(eng);
	srnic_ports_stop(eng);
	srnic_loop_stop(eng);
	return NULL;
}

/* Stop the control core, then the datapath, which leaves its links and
 * stops the ports on its way out.  Called with engine_lock held. */
static void engine_stop(struct srnic_engine *eng)
{
	if (eng->mode == SRNIC_NODE) {
		/* No attached process polls a port again, and the one that
		 * may be in a poll now finishes it, before the links go
		 * (DPDK 22.11's memif faults a poller whose port stops). */
		__atomic_store_n(&eng->node->closing, 1, __ATOMIC_SEQ_CST);
		srnic_ports_hold(eng, 0);
		srnic_ports_give(eng);
		/* (nor a steering class, which takes no port token) */
		for (unsigned p = 0; p < eng->node->nports; p++)
			srnic_port_classes_out(eng, p, 100);
	}
	if (eng->mode != SRNIC_ATTACHED)
		srnic_control_stop(eng);
	eng->stop = 1;
	srnic_datapath_wake(eng);
	pthread_join(eng->dp_thread, NULL);
	eng->dp_started = 0;
	if (eng->mode == SRNIC_ATTACHED)
		srnic_attach_close(eng);
	else
		srnic_node_release();
}

void srnic_eal_memory_set(struct srnic_eal_memory *m, const char *prefix,
			  const char *huge_dir, const char *base_va)
{
	snprintf(m->prefix, sizeof(m->prefix), "%s", prefix);
	snprintf(m->huge_dir, sizeof(m->huge_dir), "%s", huge_dir);
	snprintf(m->base_va, sizeof(m->base_va), "%s", base_va);
}

/* srnicd's DPDK memory, set before its get (srnic_engine_be_node). */
static bool node_memory_set;
static struct srnic_eal_memory node_memory;

void srnic_engine_be_node(const char *prefix, const char *huge_dir,
			  const char *base_va)
{
	node_memory_set = true;
	srnic_eal_memory_set(&node_memory, prefix, huge_dir, base_va);
}

/*
 * Whose node the process uses, decided at its first get (and again after
 * its last put): srnicd's when one answers on the socket, its own when none
 * does.  The slot srnicd gives goes into every key the process hands out
 * from now on, so keys are unique in the node.  engine_lock held.
 */
static int engine_join(struct srnic_engine *eng, char *err, unsigned errlen)
{
	int rc;

	if (eng->mode == SRNIC_NODE)
		return 0;
	if (eng->mode == SRNIC_ATTACHED && eng->srnicd_fd >= 0)
		return 0;
	rc = srnic_attach(eng, err, errlen);
	if (rc < 0)
		return rc;
	srnic_mem_set_owner(&eng->mem, eng->mode == SRNIC_ATTACHED
						? eng->slot : 0);
	return 0;
}

struct srnic_engine *srnic_engine_get(const struct srnic_config *cfg,
				      char *err, unsigned errlen)
{
	struct srnic_engine *eng;
	uint64_t seed;
	int rc;

	pthread_mutex_lock(&engine_lock);
	eng = the_engine;
	if (eng) {
		if (eng->refcnt == 0 && !eng->dp_started &&
		    (rc = engine_join(eng, err, errlen)) < 0) {
			pthread_mutex_unlock(&engine_lock);
			errno = -rc;
			return NULL;
		}
		eng->refcnt++;
		pthread_mutex_unlock(&engine_lock);
		return eng;
	}
	eng = srnic_zalloc_aligned(sizeof(*eng), SRNIC_CACHE_LINE);
	if (eng) {
		/* The node, for now, belongs to the one engine of the
		 * process. */
		eng->node = srnic_zalloc_aligned(sizeof(*eng->node),
						 SRNIC_CACHE_LINE);
		if (!eng->node) {
			srnic_free(eng);
			eng = NULL;
		}
	}
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	if (eng && srnic_mem_init(&eng->mem, seed)) {
		srnic_free(eng->node);
		srnic_free(eng);
		eng = NULL;
	}
	if (!eng) {
		pthread_mutex_unlock(&engine_lock);
		snprintf(err, errlen, "srnic: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	eng->cfg = *cfg;
	eng->mem.robust = cfg->robust_placement;	/* (nothing registered) */
	eng->srnicd_fd = -1;
	eng->deep_left_fd = -1;
	if (node_memory_set) {
		eng->mode = SRNIC_NODE;
		eng->eal = node_memory;
	}
	eng->st = &eng->own_st;
	eng->bell = &eng->own_bell;
	eng->qpn_next = 16;
	eng->dp_token = 1;	/* the engine thread's until it runs */
	pthread_mutex_init(&eng->obj_lock, NULL);
	pthread_mutex_init(&eng->node->peer_lock, NULL);
	pthread_mutex_init(&eng->node->mcast_lock, NULL);
	rc = engine_join(eng, err, errlen);
	if (rc < 0) {
		srnic_mem_fini(&eng->mem);
		srnic_free(eng->node);
		srnic_free(eng);
		pthread_mutex_unlock(&engine_lock);
		errno = -rc;
		return NULL;
	}
	eng->refcnt = 1;
	the_engine = eng;
	pthread_mutex_unlock(&engine_lock);
	return eng;
}

/* Start the datapath, ports and control core; engine_lock held. */
static int engine_start(struct srnic_engine *eng, char *err, unsigned errlen)
{
	struct start_args sa;

	/* libsodium, for the control frames' MACs, wants this first. */
	if (eng->cfg.has_key && sodium_init() < 0) {
		snprintf(err, errlen, "srnic: libsodium did not start");
		return -EIO;
	}
	srnic_group_tag_init(eng);
	/* srnicd, whose node this is, may have gone since the get. */
	if (srnic_attach_gone(eng)) {
		snprintf(err, errlen, "srnic: srnicd (%s) is gone",
			 eng->cfg.srnicd_socket);
		return -ENODEV;
	}
	/* DPDK comes up once in a process, as a node of its own or as a
	 * process of srnicd's: it cannot change. */
	if (eng->mode != SRNIC_NODE && eal_state == 1 &&
	    eal_mode != eng->mode) {
		snprintf(err, errlen, "srnic: %s since this program first "
			 "used the device: restart it",
			 eal_mode == SRNIC_EMBEDDED ? "srnicd started"
						    : "srnicd went away");
		return -EBUSY;
	}
	/* A fresh incarnation at every start, a restart in the same process
	 * too (peers then forget what they held for the last one; see
	 * incarnation.c).  Drawn apart from the key seed: peers see the
	 * incarnation, and must learn nothing of the keys.  (An attached
	 * process is of srnicd's incarnation.) */
	if (eng->mode != SRNIC_ATTACHED &&
	    srnic_node_claim(&eng->cfg, err, errlen))
		return -EBUSY;
	if (eng->mode != SRNIC_ATTACHED &&
	    srnic_incarnation_draw(&eng->cfg, &eng->node->inc, err, errlen))
		return -EIO;

	memset(&sa, 0, sizeof(sa));
	sa.eng = eng;
	pthread_mutex_init(&sa.lock, NULL);
	pthread_cond_init(&sa.cond, NULL);
	eng->stop = 0;
	if (pthread_create(&eng->dp_thread, NULL, datapath_thread, &sa)) {
		snprintf(err, errlen, "srnic: cannot start the engine thread");
		return -EAGAIN;
	}
	pthread_mutex_lock(&sa.lock);
	while (!sa.done)
		pthread_cond_wait(&sa.cond, &sa.lock);
	pthread_mutex_unlock(&sa.lock);
	if (sa.rc) {
		pthread_join(eng->dp_thread, NULL);
		if (eng->mode != SRNIC_ATTACHED)
			srnic_node_release();
		snprintf(err, errlen, "%s", sa.err);
		return sa.rc;
	}
	eng->dp_started = 1;
	if (eng->mode != SRNIC_ATTACHED && srnic_control_start(eng)) {
		engine_stop(eng);
		snprintf(err, errlen, "srnic: cannot start the control core");
		return -EAGAIN;
	}
	return 0;
}

int srnic_engine_start(struct srnic_engine *eng, char *err, unsigned errlen)
{
	int rc = 0;

	pthread_mutex_lock(&engine_lock);
	if (!eng->dp_started)
		rc = engine_start(eng, err, errlen);
	pthread_mutex_unlock(&engine_lock);
	return rc;
}


bool srnic_engine_fatal(const struct srnic_engine *eng)
{
	return __atomic_load_n(&eng->fatal, __ATOMIC_ACQUIRE);
}

bool srnic_engine_running(const struct srnic_engine *eng)
{
	return __atomic_load_n(&eng->dp_started, __ATOMIC_ACQUIRE);
}

bool srnic_engine_call_unstarted(struct srnic_engine *eng,
				 struct srnic_call *c)
{
	bool ran = false;

	pthread_mutex_lock(&engine_lock);
	if (!eng->dp_started) {
		c->fn(eng, c);
		ran = true;
	}
	pthread_mutex_unlock(&engine_lock);
	return ran;
}

void srnic_engine_put(struct srnic_engine *eng)
{
	pthread_mutex_lock(&engine_lock);
	/* Others may still use it, or it was shut down at exit.  The last
	 * put lets go of srnicd's slot too (engine_stop does, when the
	 * engine ran): the next get attaches anew. */
	if (--eng->refcnt == 0 && eng->dp_started)
		engine_stop(eng);
	else if (eng->refcnt == 0 && eng->mode == SRNIC_ATTACHED)
		srnic_attach_close(eng);
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
	srnic_datapath_abandon(eng);
	if (eng->refcnt > 0 && eng->dp_started)
		engine_stop(eng);
	pthread_mutex_unlock(&engine_lock);
}

unsigned srnic_engine_ports_up(const struct srnic_engine *eng)
{
	return srnic_ports_up(eng->node);
}

void srnic_engine_describe(const struct srnic_engine *eng,
			   struct srnic_engine_desc *d)
{
	unsigned p;

	memset(d, 0, sizeof(*d));
	d->running = srnic_engine_running(eng);
	d->attached = d->running && eng->mode == SRNIC_ATTACHED;
	d->slot = d->attached ? eng->slot : 0;
	for (p = 0; p < eng->cfg.nports; p++)
		if (!d->running ||
		    __atomic_load_n(&eng->node->port[p].link_up,
				    __ATOMIC_RELAXED))
			d->ports_up |= 1u << p;
}

