/* SPDX-License-Identifier: MIT */
/*
 * Futex waits and wakes on words of the node's memory.  Not the _PRIVATE
 * operations: in srnicd's node the words are in memory its processes
 * share, and one process wakes another.
 */
#ifndef SRNIC_FUTEX_H
#define SRNIC_FUTEX_H

#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "srnic_config.h"

/* Sleep while *addr is val, up to us microseconds (or until a wake). */
static inline void srnic_futex_wait(uint32_t *addr, uint32_t val, uint64_t us)
{
	struct timespec ts = {.tv_sec = us / 1000000,
			      .tv_nsec = (us % 1000000) * 1000};

	syscall(SYS_futex, addr, FUTEX_WAIT, val, &ts, NULL, 0);
}

/* Wake up to n of the threads that sleep on addr. */
static inline void srnic_futex_wake(uint32_t *addr, int n)
{
	syscall(SYS_futex, addr, FUTEX_WAKE, n, NULL, NULL, 0);
}

/*
 * A bell: two words that sleepers sleep on.  A sleeper sets its bit in
 * sleeping (its process's slot in the node) before its last look for work
 * and sleeps while wake is 0; whoever gives it work afterwards
 * (publishing it first) finds sleeping not 0, makes wake 1 and wakes
 * every sleeper.  One system call a nap, not one a frame: the first
 * waker's exchange makes wake 1, the others find it so.  A sleeper that
 * wakes clears its bit and makes wake 0.  Most bells have one sleeper; a
 * memif link's may have one per process of the node (port/bell.c), and
 * srnicd clears the bit of a process that died asleep.
 */
struct srnic_bell {
	uint32_t sleeping;	/* bit s: slot s sleeps on it */
	uint32_t wake;
};

/* One end of a link, as the other end's frames wake it (a memif link's:
 * port/bell.c; the loopback's, in the node): the bell its processes that
 * wait for frames sleep on, and its node's sleeper's, rung only when none
 * of them sleeps. */
struct srnic_wire_end {
	struct srnic_bell procs;
	uint8_t pad0[64 - sizeof(struct srnic_bell)];
	struct srnic_bell node;
	uint8_t pad1[64 - sizeof(struct srnic_bell)];
};

/* Steering: one end's bells for its classes, class c's (c > 0) slept on
 * by the process that has the class alone, rung for frames on its queues
 * (port/steer.c).  In a memif link's bell file after both ends' (an older
 * node's file ends before them). */
struct srnic_wire_classes {
	struct srnic_cls_bell {
		struct srnic_bell b;
		uint8_t pad[64 - sizeof(struct srnic_bell)];
	} cls[SRNIC_MAX_CLASSES];
};

/* ... the caller's fence already made: the work published before the
 * look at sleeping (the sleeper orders its look for work after setting
 * its bit the same way) */
static inline void srnic_ring_fenced(struct srnic_bell *b)
{
	if (__atomic_load_n(&b->sleeping, __ATOMIC_RELAXED) &&
	    !__atomic_exchange_n(&b->wake, 1, __ATOMIC_ACQ_REL))
		srnic_futex_wake(&b->wake, INT32_MAX);
}

static inline void srnic_ring(struct srnic_bell *b)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	srnic_ring_fenced(b);
}

/*
 * Sleep until a wake on one of the n bells (each must have wake 0 and
 * sleeping set), up to us microseconds.  One system call for them all
 * (futex_waitv, Linux 5.16); -1 with errno ENOSYS where the kernel has
 * none (the caller then sleeps on its first bell alone).
 */
static inline int srnic_futex_waitv(struct srnic_bell *const *bells,
				    unsigned n, uint64_t us)
{
	struct futex_waitv w[FUTEX_WAITV_MAX];
	struct timespec ts;
	unsigned i;

	if (n > FUTEX_WAITV_MAX)
		n = FUTEX_WAITV_MAX;
	for (i = 0; i < n; i++)
		w[i] = (struct futex_waitv){
			.val = 0,
			.uaddr = (uintptr_t)&bells[i]->wake,
			.flags = FUTEX_32,
		};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += us / 1000000;
	ts.tv_nsec += (us % 1000000) * 1000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return syscall(SYS_futex_waitv, w, n, 0, &ts, CLOCK_MONOTONIC);
}

#endif
