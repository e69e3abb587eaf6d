/* SPDX-License-Identifier: MIT */
/*
 * The port token: on srnicd's node, the processes attached to it share the
 * node's ports, and whoever holds the token polls and sends on them (a
 * try-lock in the node's shared memory; waiters sleep on a futex).  A node
 * of the process's own has no token to take.
 */
#include <sched.h>
#include <unistd.h>

#include "srnic_port.h"
#include "srnic_futex.h"
#include "port_internal.h"

/*
 * Starvation of the port token.  With more busy processes than cores, the
 * token is free only for moments, and a process that sleeps for it (or
 * merely waits for its core) finds it taken again each time it looks,
 * while busier pollers take it as soon as it is given: a pingpong beside
 * three ib_write_bw pairs had the ports 3 times in 5,000 tries, and its QP
 * ran out of retries with its frames still queued.  So a process that has
 * had frames waiting for the token for SRNIC_TOKEN_HUNGRY_US says so, and
 * the others leave the token to it for up to SRNIC_TOKEN_LEAVE_US (not
 * longer: it may be waiting for a core, or gone).  One process at a time;
 * it ends when it takes the token.
 */
static inline bool others_hungry(const struct srnic_engine *eng)
{
	uint32_t h = __atomic_load_n(&eng->node->hungry, __ATOMIC_RELAXED);

	return unlikely(h) && h != eng->slot + 1 &&
	       srnic_now() - __atomic_load_n(&eng->node->hungry_at,
					     __ATOMIC_RELAXED) <
		       eng->tsc_per_us * SRNIC_TOKEN_LEAVE_US;
}

/* Frames waiting, the token taken: a process that has waited
 * SRNIC_TOKEN_HUNGRY_US asks for its turn (unless another has asked, and
 * is still within its time). */
void srnic_token_missed(struct srnic_engine *eng)
{
	struct srnic_node *node = eng->node;
	uint64_t now = srnic_now();
	uint32_t h;

	/* (srnicd's own frames are the control core's, which tolerate a
	 * wait: it does not make the node's processes wait for it) */
	if (eng->mode == SRNIC_NODE)
		return;
	if (!eng->token_missed_at) {
		eng->token_missed_at = now;
		return;
	}
	if (now - eng->token_missed_at <
	    eng->tsc_per_us * SRNIC_TOKEN_HUNGRY_US)
		return;
	h = __atomic_load_n(&node->hungry, __ATOMIC_RELAXED);
	if (h == eng->slot + 1 || others_hungry(eng))
		return;
	if (__atomic_compare_exchange_n(&node->hungry, &h, eng->slot + 1,
					false, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED)) {
		__atomic_store_n(&node->hungry_at, now, __ATOMIC_RELAXED);
		node->proc[eng->slot].token_hungry++;
	}
}

bool srnic_ports_take(struct srnic_engine *eng)
{
	struct srnic_proc *me = &eng->node->proc[eng->slot];
	uint32_t free = 0;
	bool got;

	if (!eng->node->shared)
		return true;
	/* (srnicd gone or going: the ports are nobody's) */
	if (eng->fatal || (eng->mode == SRNIC_ATTACHED &&
			   __atomic_load_n(&eng->node->closing,
					   __ATOMIC_ACQUIRE)))
		return false;
	got = __atomic_load_n(&eng->node->port_token, __ATOMIC_RELAXED) == 0 &&
	      !others_hungry(eng) &&
	      __atomic_compare_exchange_n(&eng->node->port_token, &free,
					  eng->slot + 1, false,
					  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
	if (got && __atomic_load_n(&eng->node->hungry, __ATOMIC_RELAXED) ==
			   eng->slot + 1)
		__atomic_store_n(&eng->node->hungry, 0, __ATOMIC_RELAXED);
	/* (srnicd began to stop between the look above and the taking:
	 * it waits for the token, so it has not stopped a port yet) */
	if (got && eng->mode == SRNIC_ATTACHED &&
	    __atomic_load_n(&eng->node->closing, __ATOMIC_ACQUIRE)) {
		srnic_ports_give(eng);
		got = false;
	}
	if (got)
		me->port_polls++;
	else
		me->token_misses++;
	return got;
}

bool srnic_ports_hold(struct srnic_engine *eng, unsigned wait_ms)
{
	uint64_t until = srnic_ms() + wait_ms;
	unsigned i;

	/* (a holder that dies is let go of by srnicd: procs.c) */
	for (i = 0; !srnic_ports_take(eng); i++) {
		if (wait_ms && srnic_ms() >= until)
			return false;
		if (eng->fatal || (eng->mode == SRNIC_ATTACHED &&
				   eng->node->closing))
			return false;
		if (i < 64)
			sched_yield();
		else
			usleep(50);
	}
	return true;
}

void srnic_ports_give(struct srnic_engine *eng)
{
	if (eng->node->shared)
		srnic_port_token_free(eng->node);
}

void srnic_port_token_free(struct srnic_node *node)
{
	if (__atomic_exchange_n(&node->port_token, 0, __ATOMIC_RELEASE) &
	    SRNIC_TOKEN_WAITERS)
		srnic_futex_wake(&node->port_token, INT32_MAX);
}

/*
 * Frames wait for the token: sleep until its holder gives it back (or up
 * to us).  A poller that spins for the token takes the CPU from the one
 * that holds it: with more busy processes than cores, that holder is
 * often descheduled in its burst, and spinners made every process of the
 * node wait out their time slices (four ib_write_bw pairs a node: whole
 * QPs starved of the token until their retries ran out).  Asleep, they
 * leave the holder the core.
 */
void srnic_token_wait(struct srnic_engine *eng, unsigned us)
{
	uint32_t *tok = &eng->node->port_token;
	uint32_t v = __atomic_load_n(tok, __ATOMIC_RELAXED);

	if (!v)
		return;
	if (!(v & SRNIC_TOKEN_WAITERS)) {
		if (!__atomic_compare_exchange_n(tok, &v,
						 v | SRNIC_TOKEN_WAITERS, false,
						 __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			return;	/* given back (or taken anew) meanwhile */
		v |= SRNIC_TOKEN_WAITERS;
	}
	eng->node->proc[eng->slot].token_waits++;
	srnic_futex_wait(tok, v, us);
}
