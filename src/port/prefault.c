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
 * gives their memfds ("memif_region_N") in /proc/self/maps, every memif
 * link's at once (those already in cost a walk of their page tables).
 * Populating changes no byte, so a ring already in use is safe.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "srnic_port.h"

#define MEMIF_REGION "/memfd:memif_region_"
/* Larger mappings (rsize and bsize far above the testbed's) are left to
 * fault on use: populating commits their memory and holds up the control
 * core, which also keeps the peers' HELLOs going. */
#define PREFAULT_MAX (256ul << 20)

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif

void srnic_ports_prefault_shared(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	if (!f)
		return;	/* (only a cost: the faults happen on first use) */
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[5];

		/* (shared and writable: on a private mapping populating
		 * would copy every page and cut it off from the peer) */
		if (!strstr(line, MEMIF_REGION) ||
		    sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3 ||
		    strncmp(perms, "rw", 2) || perms[3] != 's' ||
		    hi - lo > PREFAULT_MAX)
			continue;
		/* Any failure only leaves the faults to first use: a kernel
		 * before 5.14 (EINVAL), a mapping the interrupt thread just
		 * took down (ENOMEM), one longer than its file (EFAULT). */
		(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
	}
	fclose(f);
}
