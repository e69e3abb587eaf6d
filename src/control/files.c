/* SPDX-License-Identifier: MIT */
/*
 * The node's files, on a thread of their own: the counters it writes twice
 * a second (stats_file), the faults it reads (fault_file) and the packet
 * captures it writes (capture_file: capture.c).
 *
 * A file system may keep a caller waiting for a second: ext4 renaming over
 * a file whose pages are still being written back, as the testbed's /run
 * on this machine's disk does.  The control core sends the HELLOs by which
 * peers judge this node's links; were it the one waiting, both links of the
 * node would fall silent together, its peers would declare it dead on every
 * port and its QPs would run out of retries with nothing wrong on the wire.
 * So the control core never touches a file, and this thread, which touches
 * nothing else, may wait as long as the disk likes.
 */
#include <errno.h>
#include <unistd.h>

#include "srnic_control.h"
#include "srnic_futex.h"

#define FILES_TICK_MS 50
#define STATS_MS 500
/* The node asleep (dp_deep): a wake-up costs 40-150 us of CPU here, and
 * an idle node should cost nothing.  The fault file is looked at twice a
 * second then, the counters written once (`./srnic stats` calls an engine
 * whose file is older than 2 s stopped; srnicd writes it when asked). */
#define IDLE_TICK_MS 500
#define IDLE_STATS_MS 1000

static void *files_thread(void *arg)
{
	struct srnic_engine *eng = arg;
	uint64_t last_stats = 0;

	pthread_setname_np(pthread_self(), "srnic-files");
	while (!__atomic_load_n(&eng->node->ctrl_stop, __ATOMIC_ACQUIRE)) {
		uint64_t now = srnic_ms();
		bool idle = __atomic_load_n(&eng->node->dp_deep,
					    __ATOMIC_RELAXED);

		srnic_fault_poll(eng);
		srnic_capture_poll(eng);
		if (now - last_stats >= (idle ? IDLE_STATS_MS : STATS_MS)) {
			last_stats = now;
			srnic_stats_write(eng);
		}
		/* (a capture's slots are few: emptied every millisecond;
		 * srnic_control_stop wakes it) */
		srnic_futex_wait(&eng->node->ctrl_stop, 0,
				 srnic_capture_active() ? 1000
				 : idle			? IDLE_TICK_MS * 1000
							: FILES_TICK_MS * 1000);
	}
	srnic_stats_write(eng);	/* the last word */
	return NULL;
}

int srnic_files_start(struct srnic_engine *eng)
{
	if (pthread_create(&eng->node->files_thread, NULL, files_thread, eng))
		return -EAGAIN;
	eng->node->files_started = 1;
	return 0;
}

/* After ctrl_stop is set. */
void srnic_files_stop(struct srnic_engine *eng)
{
	if (!eng->node->files_started)
		return;
	pthread_join(eng->node->files_thread, NULL);
	eng->node->files_started = 0;
}
