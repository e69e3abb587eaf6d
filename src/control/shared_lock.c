/* SPDX-License-Identifier: MIT */
/*
 * The node's shared locks when they are taken (srnic_control.h,
 * srnic_shared_lock): run by whoever wants one, srnicd's control core or an
 * attached process's verbs call, and only once trylock found it busy.
 *
 * A holder holds one for microseconds (a GID lookup, a peer's or a group's
 * table entry) and makes no system call that sleeps meanwhile.  One that
 * has not let go in SRNIC_LOCK_STEP_MS is off its core, and which of two
 * things that means its state in /proc tells:
 * - it waits for a core (R): it runs again by itself and lets go.  Beside
 *   busy programs on two CPUs a thread can wait 200 ms for one (measured,
 *   srnicd/stopped.c), and the control core's ticks came up to 2 s late
 *   when they spun on a descheduled process (docs/architecture.md), so it
 *   is waited for, up to SRNIC_LOCK_WAIT_MS: stepping over it would let two
 *   writers into a group's entry, or a reader into a half-written one.
 * - it is stopped or traced (T, t), or asleep (S, D: a frozen cgroup, v2
 *   and v1): it will not let go until someone starts it again.  Stopped,
 *   it is stepped over at once; asleep, when it is seen so twice, a step
 *   apart, since a holder may block in a page fault for a moment.
 * The wait is bounded even for one that runs (hostile, or spinning on a
 * bug): the control core that waits sends no HELLO, and its peers would
 * take the node for dead.  Once a thread was stepped over, the node
 * remembers it (lock_stuck_tid) and steps over it at once until the lock
 * is taken again: the control core takes the peer table's for every HELLO.
 * The TID is the holder's own, read here in the waiter's PID namespace: a
 * program of another one (a container attached to the node) may name no
 * thread here, and is waited for its second, or another thread, whose
 * state then decides.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "srnic_control.h"

#define SRNIC_LOCK_WAIT_MS 1000

char srnic_thread_state(int tid)
{
	char path[40], buf[256], *state;
	FILE *f;
	size_t n;

	if (tid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	f = fopen(path, "re");
	if (!f)
		return 0;	/* gone, or of another PID namespace */
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "tid (comm) S ...": comm may hold anything, the last ')' ends it */
	state = strrchr(buf, ')');
	return state && state[1] == ' ' ? state[2] : 0;
}

/* The thread holding lock (glibc keeps its TID in every mutex it locks),
 * or 0: none, or one that died with it. */
static int lock_owner(pthread_mutex_t *lock)
{
	int tid = __atomic_load_n(&lock->__data.__owner, __ATOMIC_RELAXED);

	return tid > 0 && tid < 0x40000000 ? tid : 0;
}

static int wait_step(pthread_mutex_t *lock)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);	/* (timedlock's) */
	until.tv_nsec += SRNIC_LOCK_STEP_MS * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	return pthread_mutex_timedlock(lock, &until);
}

/* Wait for lock, busy when tried (slot: its lock_stuck_tid): whether it
 * was taken; if not, *tid is the holder stepped over (0: not told). */
static bool wait_holder(struct srnic_node *node, pthread_mutex_t *lock,
			unsigned slot, int *tid)
{
	uint64_t since = srnic_ms();
	int asleep = 0, rc;

	*tid = lock_owner(lock);
	if (*tid && *tid == (int)__atomic_load_n(&node->lock_stuck_tid[slot],
						 __ATOMIC_RELAXED))
		return false;
	for (;;) {
		rc = wait_step(lock);
		if (rc == EOWNERDEAD)
			pthread_mutex_consistent(lock);
		if (rc == 0 || rc == EOWNERDEAD)
			return true;
		*tid = lock_owner(lock);
		if (rc != ETIMEDOUT)
			return false;	/* ENOTRECOVERABLE: nobody will */
		switch (srnic_thread_state(*tid)) {
		case 'T': case 't':
			return false;
		case 'S': case 'D':
			if (asleep == *tid)
				return false;
			asleep = *tid;
			break;
		default:
			asleep = 0;
		}
		if (srnic_ms() - since >= SRNIC_LOCK_WAIT_MS)
			return false;
	}
}

bool srnic_shared_lock_busy(struct srnic_node *node, pthread_mutex_t *lock,
			    unsigned slot)
{
	int tid;

	if (wait_holder(node, lock, slot, &tid))
		return true;
	__atomic_store_n(&node->lock_stuck_tid[slot], (uint32_t)tid,
			 __ATOMIC_RELAXED);
	__atomic_add_fetch(&node->locks_stepped, 1, __ATOMIC_RELAXED);
	return false;
}
