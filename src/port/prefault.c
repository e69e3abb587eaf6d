/* SPDX-License-Identifier: MIT */
/*
 * Prefaulting the shared memory of memif ports.
 *
 * A memif link is a memfd of rings and 1024 packet buffers per direction
 * (16 MiB with 8 KiB buffers), which both processes map and which the
 * kernel fills page by page as they first touch it.  Each buffer is first
 * used only when its ring comes round to it, so a latency test's first
 * 1000-3000 round trips each took a minor fault on both sides (8-11 us
 * where the rest take 0.6-1.2 us, docs/performance.md).  When a link comes
 * up, the control core faults the whole mapping in, off the datapath.
 *
 * DPDK gives no handle on memif's regions; they are found by the name DPDK
 * gives their memfds ("memif_region_N") in /proc/self/maps.  Populating
 * changes no byte, so a ring already in use is safe.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine_internal.h"

#define MEMIF_REGION "/memfd:memif_region_"

static void populate(uintptr_t lo, uintptr_t hi)
{
	long page = sysconf(_SC_PAGESIZE);

	if (madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0 ||
	    errno != EINVAL)
		return;	/* (EFAULT: a mapping longer than its file, which a
			 * read would die of) */
	/* Kernels before 5.14: a read of each page faults it in as well,
	 * writable, since a shared memfd keeps no dirty accounting. */
	for (uintptr_t a = lo; a < hi; a += (uintptr_t)page)
		(void)*(volatile const uint8_t *)a;
}

void srnic_ports_prefault_shared(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	if (!f)
		return;	/* (only a cost: the faults happen on first use) */
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[5];

		if (!strstr(line, MEMIF_REGION) ||
		    sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3 ||
		    perms[0] != 'r' || perms[1] != 'w')
			continue;
		populate(lo, hi);
	}
	fclose(f);
}
