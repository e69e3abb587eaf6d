/* SPDX-License-Identifier: MIT */
/*
 * Stopped processes, which srnicd's main thread looks for at every turn of
 * its serving loop: one that holds the node's port token, and ones that
 * have stopped taking the frames queued for them.
 *
 * Whoever holds the port token polls every port for the whole node.  A
 * process stopped while it holds it (SIGSTOP, Ctrl-Z, a debugger that
 * stops all its threads, a frozen cgroup) stops the port I/O of every
 * process of the node and the node's HELLOs, and PEER_DEAD_MS later the
 * peers take the whole node for dead.  Nobody can finish its poll for it:
 * it is inside a PMD's burst, with the queue's state in its registers, and
 * would go on from there whenever it runs again.  So srnicd kills it; its
 * connection then closes and srnicd_proc_release frees the token, as for
 * any process that dies holding it.
 *
 * Which one: the same process seen holding the token at every look for
 * STOPPED_HOLD_MS, without taking it again meanwhile (its port_polls, which
 * count its takes, unchanged), so held all along, when none of its threads
 * runs or waits for a core.  A holder holds the token for a burst, and
 * makes no system call that sleeps meanwhile; one that is waiting for a
 * core (state R, throttled by its CPU quota too) runs again by itself.
 * Each of the others is stopped (T, t) or asleep (S, D): the v1 freezer
 * shows a frozen cgroup's tasks as D, cgroup v2's as S.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_ring.h>

#include "srnic_control.h"
#include "srnicd.h"

/* Below PEER_DEAD_MS (300), so that the peers keep the node; above a
 * time slice or two, which a holder that is not stopped may be off its
 * core for (up to 200 ms measured beside busy programs on two CPUs).
 * (While the node sleeps, serve.c looks every IDLE_POLL_MS, 250, and
 * its peers give it five of its 100 ms HELLO intervals.) */
#define STOPPED_HOLD_MS 100

/* Whether no thread of pid runs or waits for a core. */
static bool proc_halted(int pid)
{
	char path[32];
	struct dirent *e;
	bool halted = true, any = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return false;
	while (halted && (e = readdir(d)) != NULL) {
		char st;

		if (e->d_name[0] == '.')
			continue;
		st = srnic_thread_state(atoi(e->d_name));
		if (!st)
			continue;
		any = true;
		halted = st == 'T' || st == 't' || st == 'S' || st == 'D';
	}
	closedir(d);
	return any && halted;
}

void srnicd_watch_stopped(struct srnic_engine *eng,
			  struct srnicd_stop_watch *w)
{
	struct srnic_node *node = eng->node;
	struct srnic_proc *p = srnicd_token_holder(node);
	uint64_t now = srnic_ms(), takes;
	/* (the pid srnicd itself took from the kernel, not one in the node's
	 * memory, which an attached process could aim at anyone) */
	int pid = p ? srnicd_proc_pid((unsigned)(p - node->proc)) : 0;

	/* (nobody, or srnicd itself) */
	if (!p || p == &node->proc[0] ||
	    !__atomic_load_n(&p->live, __ATOMIC_ACQUIRE) || pid <= 0) {
		w->holder = NULL;
		return;
	}
	takes = __atomic_load_n(&p->port_polls, __ATOMIC_RELAXED);
	if (w->holder != p || w->pid != pid || w->takes != takes) {
		w->holder = p;
		w->pid = pid;
		w->takes = takes;
		w->since = now;
		return;
	}
	if (now - w->since < STOPPED_HOLD_MS || !proc_halted(pid))
		return;
	fprintf(stderr, "srnicd: %.*s (pid %d) stopped for %lu ms holding "
		"the node's port token: killed, so that the node's other "
		"processes and its peers go on\n", (int)sizeof(p->prog),
		p->prog, pid, (unsigned long)(now - w->since));
	kill(pid, SIGKILL);
	node->stopped_killed++;
	/* None of its threads goes back to its code now: each meets the
	 * SIGKILL on its way out of the kernel.  A stopped one dies at once;
	 * a frozen one only when its cgroup thaws (the v1 freezer holds even
	 * SIGKILL), so the token is taken back now, as from one that died
	 * with it, unless a thread ran meanwhile (then it dies, and is
	 * released, by itself within a tick). */
	if (proc_halted(pid))
		srnicd_token_reclaim(node, (unsigned)(p - node->proc));
	w->holder = NULL;
}

/*
 * A process that has not looked at its ring for SRNIC_RX_STALL_MS while
 * SRNIC_RX_STALL_FRAMES wait there: halted (stopped, frozen, asleep) or
 * only waiting for a core?  The pollers that queue its frames cannot tell
 * (the node's memory holds no pid, and reading /proc is no work for a
 * datapath), so srnicd looks, and marks a halted one: it gets no more
 * frames until it looks at its ring again (which clears the mark).  Time
 * alone was the rule before, and dropped the frames of a process that
 * was only off its core on a busy host, UC's lost for good.
 */
void srnicd_watch_rings(struct srnic_engine *eng)
{
	struct srnic_node *node = eng->node;
	uint64_t stall = eng->tsc_per_us * 1000 * SRNIC_RX_STALL_MS, now;
	unsigned slot;

	now = srnic_now();
	for (slot = 1; slot < SRNIC_MAX_PROCS; slot++) {
		struct srnic_proc *p = &node->proc[slot];
		struct rte_ring *rx = srnicd_proc_rx(slot);
		int pid = srnicd_proc_pid(slot);

		if (!__atomic_load_n(&p->live, __ATOMIC_ACQUIRE) || !rx ||
		    pid <= 0 ||
		    __atomic_load_n(&p->rx_halted, __ATOMIC_RELAXED) ||
		    rte_ring_count(rx) < SRNIC_RX_STALL_FRAMES ||
		    now - __atomic_load_n(&p->rx_taken_at, __ATOMIC_RELAXED) <
			    stall)
			continue;
		if (proc_halted(pid))
			__atomic_store_n(&p->rx_halted, 1, __ATOMIC_RELAXED);
	}
}
