/* SPDX-License-Identifier: MIT */
/*
 * srnicd's munmap, in place of the C library's for every library of the
 * process (the linker exports it: src/meson.build): when DPDK's interrupt
 * thread unmaps memory (memif freeing a vanished peer's link), the port
 * I/O guard is closed first, so no poller of srnicd is inside that link's
 * memory (srnic_port_guard.h).  Every other caller goes straight through.
 */
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_interrupts.h>

#include "srnic_port_guard.h"

#define UNMAP_WAIT_MS 50

int munmap(void *addr, size_t len);

int munmap(void *addr, size_t len)
{
	long rc;

	if (!rte_thread_is_intr())
		return (int)syscall(SYS_munmap, addr, len);
	srnic_port_io_close(UNMAP_WAIT_MS);
	rc = syscall(SYS_munmap, addr, len);
	srnic_port_io_open();
	return (int)rc;
}
