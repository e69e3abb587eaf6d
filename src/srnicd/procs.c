/* SPDX-License-Identifier: MIT */
/*
 * The processes of srnicd's node: a slot each, with the rings the node's
 * pollers and its own threads hand it work through.  Runs on srnicd's main
 * thread (serve.c), which alone writes the slot table.
 *
 * A slot's rings outlive its process and serve the next one: a poller of
 * another process may be putting a frame on them at the very moment the
 * process goes, so they are drained, never freed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "srnicd.h"

/* Frames queued for a process's QPs: room for two QPs' windows (4,096
 * packets each: srnic_flow.h) while the process waits for a core. */
#define RX_RING 8192
#define DB_RING 4096	/* as the embedded engine's doorbell ring */
#define CALL_RING 256

static struct rte_ring *slot_ring(const char *what, unsigned slot,
				  unsigned size, unsigned flags)
{
	char name[RTE_RING_NAMESIZE];
	struct rte_ring *r;

	snprintf(name, sizeof(name), "srnic_%s%u", what, slot);
	r = rte_ring_lookup(name);
	return r ? r : rte_ring_create(name, size, rte_socket_id(), flags);
}

struct in_chunk {
	const void *obj;
	bool in;
};

static void chunk_has(struct rte_mempool *mp, void *opaque,
		      struct rte_mempool_memhdr *memhdr, unsigned idx)
{
	struct in_chunk *c = opaque;
	uintptr_t o = (uintptr_t)c->obj, a = (uintptr_t)memhdr->addr;

	(void)mp;
	(void)idx;
	if (o >= a && o - a < memhdr->len &&
	    memhdr->len - (o - a) >= sizeof(struct rte_mbuf))
		c->in = true;
}

/*
 * Whether m, taken from a ring an attached process can write, is a plain
 * frame of the node's packet pool, which srnicd may free.  Freeing
 * anything else would act on pointers the process chose, inside srnicd:
 * an external buffer's free callback would run, an indirect mbuf's
 * parent or a chain's next segment be freed.  What fails is left alone
 * (its buffer is lost to the pool) and counted.
 */
static bool frame_ours(struct srnic_node *node, const struct rte_mbuf *m)
{
	struct in_chunk c = {.obj = m};

	if (!m)
		return false;
	rte_mempool_mem_iter(node->pool, chunk_has, &c);
	return c.in && m->pool == node->pool && m->nb_segs == 1 && !m->next &&
	       !(m->ol_flags & (RTE_MBUF_F_EXTERNAL | RTE_MBUF_F_INDIRECT));
}

/*
 * Each slot's receive ring as srnicd made it, kept in srnicd's own memory
 * (as the pids are, below): the node's copy in proc[].rx is for the
 * pollers, and any attached process can point it anywhere.  srnicd
 * follows only these.
 */
static struct rte_ring *slot_rx[SRNIC_MAX_PROCS];

/* A ring's header is in the node's memory too: one whose size is no
 * longer what srnicd made it with would take srnicd's indexes outside
 * it.  Left alone (and counted) rather than read. */
static bool ring_whole(struct srnic_node *node, const struct rte_ring *r,
		       unsigned size)
{
	if (r->size == size && r->mask == size - 1 && r->capacity == size - 1)
		return true;
	node->foreign_frames++;
	return false;
}

static void ring_drain(struct srnic_node *node, struct rte_ring *r,
		       unsigned size, bool mbufs)
{
	void *obj;

	if (!r || !ring_whole(node, r, size))
		return;
	while (rte_ring_dequeue(r, &obj) == 0)
		if (!mbufs)
			continue;
		else if (frame_ours(node, obj))
			rte_pktmbuf_free(obj);
		else
			node->foreign_frames++;
}

/*
 * A process killed holding the port token may have been between claiming
 * slots of a single-producer ring and publishing them: the next producer
 * would publish them, stale, with its own.  Taking back what it claimed
 * (srnicd holds the token meanwhile) loses at most the frames it was
 * putting there; the senders' recovery covers them.  (A kill inside an
 * operation on the multi-producer packet pool cannot be repaired so:
 * docs/architecture.md says so.)
 */
static void ring_unclaim(struct rte_ring *r)
{
	if (r && r->prod.head != r->prod.tail)
		r->prod.head = r->prod.tail;
}

/* The port token, if the process in slot held - 1 has it (someone may
 * sleep for it meanwhile): srnicd's now. */
static bool token_take_from(struct srnic_node *node, uint32_t held)
{
	uint32_t v = __atomic_load_n(&node->port_token, __ATOMIC_RELAXED);

	while ((v & ~SRNIC_TOKEN_WAITERS) == held)
		if (__atomic_compare_exchange_n(
			    &node->port_token, &v,
			    1 | (v & SRNIC_TOKEN_WAITERS), false,
			    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return true;
	return false;
}

static void token_rings_repair(struct srnic_node *node)
{
	unsigned s;

	ring_unclaim(node->loop);
	ring_unclaim(node->ctrl_rx);
	for (s = 0; s < SRNIC_MAX_PROCS; s++)
		ring_unclaim(slot_rx[s]);
	srnic_port_token_free(node);
}

/* Each slot's process as the kernel named it when it connected
 * (SO_PEERCRED), kept in srnicd's own memory: nothing in the node's
 * shared memory, which every attached process can write, names a pid. */
static int slot_pid[SRNIC_MAX_PROCS];

struct rte_ring *srnicd_proc_rx(unsigned slot)
{
	return slot < SRNIC_MAX_PROCS ? slot_rx[slot] : NULL;
}

int srnicd_proc_pid(unsigned slot)
{
	if (slot == 0)
		return getpid();	/* srnicd's own engine */
	return slot < SRNIC_MAX_PROCS ? slot_pid[slot] : 0;
}

int srnicd_proc_attach(struct srnic_engine *eng, int pid, const char *prog,
		       char *err, size_t errlen)
{
	struct srnic_node *node = eng->node;
	struct rte_ring *rx, *db, *calls;
	struct srnic_proc *p;
	unsigned slot, i;

	/* Ports whose I/O only the primary process can do (af_packet's
	 * and af_xdp's in DPDK 22.11) would leave an attached process
	 * unable to send. */
	for (i = 0; i < node->nports; i++)
		if (!node->port[i].shareable) {
			snprintf(err, errlen, "port %u is neither memif nor "
				 "tap: DPDK does no I/O on it in another "
				 "process; give the node tap ports (net_tap, "
				 "docs/install.md) or run it without srnicd",
				 i);
			return -EOPNOTSUPP;
		}
	for (slot = 1; slot < SRNIC_MAX_PROCS; slot++)
		if (!node->proc[slot].live)
			break;
	if (slot == SRNIC_MAX_PROCS) {
		snprintf(err, errlen, "%u processes are attached already",
			 SRNIC_MAX_PROCS - 1);
		return -EUSERS;
	}
	p = &node->proc[slot];
	rx = slot_ring("rx", slot, RX_RING, RING_F_SP_ENQ | RING_F_SC_DEQ);
	db = slot_ring("db", slot, DB_RING, RING_F_SC_DEQ);
	calls = slot_ring("calls", slot, CALL_RING, RING_F_SC_DEQ);
	if (!rx || !db || !calls) {
		snprintf(err, errlen, "no DPDK memory for its rings");
		return -ENOMEM;
	}
	/* (what a process before it left) */
	ring_drain(node, rx, RX_RING, true);
	ring_drain(node, db, DB_RING, false);
	ring_drain(node, calls, CALL_RING, false);
	/* Everything else of the slot starts anew: counters, nap words,
	 * and the earlier process's "aside". */
	memset(p, 0, sizeof(*p));
	p->rx = rx;
	p->doorbell = db;
	p->calls = calls;
	slot_rx[slot] = rx;
	slot_pid[slot] = pid;
	snprintf(p->prog, sizeof(p->prog), "%s", prog);
	__atomic_store_n(&p->live, 1, __ATOMIC_RELEASE);
	if (__atomic_add_fetch(&node->nprocs, 1, __ATOMIC_RELEASE) >
	    node->nprocs_most)
		node->nprocs_most = node->nprocs;
	return (int)slot;
}

/* A departed process's share of the node's held last packets. */
static void held_give_back(struct srnic_node *node, struct srnic_proc *p)
{
	uint32_t h = __atomic_load_n(&p->held, __ATOMIC_RELAXED),
		 t = __atomic_load_n(&node->held_total, __ATOMIC_RELAXED);

	__atomic_sub_fetch(&node->held_total, h < t ? h : t, __ATOMIC_RELAXED);
}

void srnicd_token_reclaim(struct srnic_node *node, unsigned slot)
{
	if (token_take_from(node, slot + 1))
		token_rings_repair(node);
}

struct srnic_proc *srnicd_token_holder(struct srnic_node *node)
{
	uint32_t held = __atomic_load_n(&node->port_token, __ATOMIC_ACQUIRE) &
			~SRNIC_TOKEN_WAITERS;

	return held && held <= SRNIC_MAX_PROCS ? &node->proc[held - 1] : NULL;
}

unsigned srnicd_proc_qps(const struct srnic_engine *eng, unsigned slot)
{
	unsigned q, n = 0;

	for (q = 0; q < SRNIC_MAX_QP; q++)
		n += __atomic_load_n(&eng->node->qp_owner[q],
				     __ATOMIC_RELAXED) == slot + 1;
	return n;
}

void srnicd_proc_release(struct srnic_engine *eng, unsigned slot)
{
	struct srnic_node *node = eng->node;
	struct srnic_proc *p = &node->proc[slot];
	uint32_t held = slot + 1;
	unsigned q, lcore = SRNIC_PROC_LCORE0 + slot;

	if (slot == 0 || slot >= SRNIC_MAX_PROCS || !p->live)
		return;
	/* Pollers stop queueing for it first, then its QP numbers go:
	 * a frame for one of them is dropped as for no QP, and the peer's
	 * QP fails as it would on a NIC whose QP is gone. */
	__atomic_store_n(&p->live, 0, __ATOMIC_RELEASE);
	__atomic_fetch_sub(&node->nprocs, 1, __ATOMIC_RELEASE);
	for (q = 0; q < SRNIC_MAX_QP; q++)
		if (__atomic_load_n(&node->qp_owner[q], __ATOMIC_RELAXED) ==
		    held)
			__atomic_store_n(&node->qp_owner[q], 0,
					 __ATOMIC_RELEASE);
	for (q = 1; q < SRNIC_MAX_CLASSES; q++) {
		uint32_t mine = held;

		__atomic_compare_exchange_n(&node->class_owner[q], &mine, 0,
					    false, __ATOMIC_ACQ_REL,
					    __ATOMIC_RELAXED);
	}
	srnic_mcast_release_proc(node, slot);
	srnic_tpt_release_proc(node, slot);
	srnic_service_release_proc(node, slot);
	/* Its counters stay the node's (it runs no more: they hold still);
	 * the last packets it held are lost to the pool, but not to the
	 * node's budget for them. */
	srnic_stats_add(&node->departed, &p->st);
	held_give_back(node, p);
	/* Killed while it polled the ports: the token is free again, once
	 * the rings only its holder puts frames on are whole. */
	srnicd_token_reclaim(node, slot);
	srnic_port_bells_forget(eng, slot);
	ring_drain(node, slot_rx[slot], RX_RING, true);
	/* The buffers its lcore's caches held go back to the pools (it
	 * runs no more: nobody else uses that lcore id). */
	if (lcore < RTE_MAX_LCORE) {
		struct rte_mempool *pools[2] = {node->pool, node->zc_pool};

		for (q = 0; q < 2; q++) {
			struct rte_mempool_cache *c =
				rte_mempool_default_cache(pools[q], lcore);

			if (c)
				rte_mempool_cache_flush(c, pools[q]);
		}
	}
	slot_pid[slot] = 0;
}
