/* SPDX-License-Identifier: MIT */
/*
 * A guard between this process's port I/O and the unmapping of a memif
 * link's memory.
 *
 * DPDK 22.11's memif frees a link's shared memory (munmap) when its peer
 * vanishes, on the thread that notices: the interrupt thread in the
 * process that runs the ports (the control channel's hang-up), or, in an
 * attached process, whichever thread next asks for the link's state.  A
 * poller inside rte_eth_rx_burst or rte_eth_tx_burst on that link at that
 * moment reads freed memory and faults: memif checks that the link is up
 * before a burst, not during it.  Without a guard, an srnicd killed with
 * SIGKILL took its peer's srnicd down about one time in two, the peer's
 * datapath thread faulting in memif's receive.
 *
 * So every port I/O call of the process goes between srnic_port_io_enter
 * and srnic_port_io_leave (two atomic operations a burst, not a packet),
 * and whoever may unmap closes the guard first: new I/O is refused (the
 * caller polls nothing, or keeps its frames for the next flush) and the
 * I/O under way is waited for.  srnicd interposes munmap for its
 * interrupt thread (src/srnicd/unmap.c); an attached process closes it
 * around its look at the links (srnic_ports_remap).  A process that runs
 * the node itself has no such guard on its interrupt thread: see
 * docs/reliability.md, "Leaving a link".
 */
#ifndef SRNIC_PORT_GUARD_H
#define SRNIC_PORT_GUARD_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_branch_prediction.h>

extern uint32_t srnic_port_io_busy;	/* port I/O calls under way */
extern uint32_t srnic_port_io_closed;	/* closers at work */

static inline bool srnic_port_io_enter(void)
{
	__atomic_fetch_add(&srnic_port_io_busy, 1, __ATOMIC_SEQ_CST);
	if (likely(!__atomic_load_n(&srnic_port_io_closed, __ATOMIC_SEQ_CST)))
		return true;
	__atomic_fetch_sub(&srnic_port_io_busy, 1, __ATOMIC_RELEASE);
	return false;
}

static inline void srnic_port_io_leave(void)
{
	__atomic_fetch_sub(&srnic_port_io_busy, 1, __ATOMIC_RELEASE);
}

/* Refuse new port I/O in this process and wait (at most wait_ms) until
 * what is under way ends; srnic_port_io_open undoes it.  Never called with
 * the guard entered. */
void srnic_port_io_close(unsigned wait_ms);
void srnic_port_io_open(void);

#endif
