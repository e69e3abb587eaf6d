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

#endif
