/* SPDX-License-Identifier: MIT */
/*
 * The closing side of the port I/O guard (srnic_port_guard.h): runs on
 * whichever thread may unmap a link's memory.
 */
#include <sched.h>
#include <time.h>

#include "srnic_port_guard.h"

uint32_t srnic_port_io_busy;
uint32_t srnic_port_io_closed;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void srnic_port_io_close(unsigned wait_ms)
{
	uint64_t until = now_ns() + (uint64_t)wait_ms * 1000000u;

	__atomic_fetch_add(&srnic_port_io_closed, 1, __ATOMIC_SEQ_CST);
	/* A burst takes microseconds; the bound is for a poller that was
	 * stopped (a debugger), which must not stop the unmapping too. */
	while (__atomic_load_n(&srnic_port_io_busy, __ATOMIC_SEQ_CST) &&
	       now_ns() < until)
		sched_yield();
}

void srnic_port_io_open(void)
{
	__atomic_fetch_sub(&srnic_port_io_closed, 1, __ATOMIC_RELEASE);
}
