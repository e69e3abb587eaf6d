/* SPDX-License-Identifier: MIT */
/*
 * A process stopped with the node's port token: srnicd's main thread looks
 * at every turn of its serving loop.
 *
 * Whoever holds the port token polls every port for the whole node.  A
 * process stopped while it holds it (SIGSTOP, Ctrl-Z, a debugger that
 * stops all its threads) stops the port I/O of every process of the node
 * and the node's HELLOs, and PEER_DEAD_MS later the peers take the whole
 * node for dead.  Nobody can finish its poll for it: it is inside a PMD's
 * burst, with the queue's state in its registers, and would go on from
 * there whenever it runs again.  So srnicd kills it; its connection then
 * closes and srnicd_proc_release frees the token, as for any process that
 * dies holding it.  Only a stopped one: a holder that is merely waiting
 * for a core runs again by itself.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "srnicd.h"

/* Below PEER_DEAD_MS (300), so that the peers keep the node; above a
 * time slice or two, which a holder that is not stopped may be off its
 * core for (up to 200 ms measured beside busy programs on two CPUs). */
#define STOPPED_HOLD_MS 100

/* Whether pid is stopped ("T", or "t" for a tracer's stop). */
static bool proc_stopped(int pid)
{
	char path[32], buf[256], *state;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "pid (comm) S ...": comm may hold anything, the last ')' ends it */
	state = strrchr(buf, ')');
	return state && state[1] == ' ' && (state[2] == 'T' || state[2] == 't');
}

void srnicd_watch_stopped(struct srnic_engine *eng,
			  struct srnicd_stop_watch *w)
{
	struct srnic_node *node = eng->node;
	struct srnic_proc *p = srnicd_token_holder(node);
	uint64_t now = srnic_ms();
	/* (the pid srnicd itself took from the kernel, not the node's copy,
	 * which an attached process could aim at anyone) */
	int pid = p ? srnicd_proc_pid((unsigned)(p - node->proc)) : 0;

	/* (nobody, or srnicd itself) */
	if (!p || p == &node->proc[0] ||
	    !__atomic_load_n(&p->live, __ATOMIC_ACQUIRE) || pid <= 0 ||
	    !proc_stopped(pid)) {
		w->holder = NULL;
		return;
	}
	if (w->holder != p || w->pid != pid) {
		w->holder = p;
		w->pid = pid;
		w->since = now;
		return;
	}
	if (now - w->since < STOPPED_HOLD_MS)
		return;
	fprintf(stderr, "srnicd: %.*s (pid %d) stopped for %lu ms holding "
		"the node's port token: killed, so that the node's other "
		"processes and its peers go on\n", (int)sizeof(p->prog),
		p->prog, pid, (unsigned long)(now - w->since));
	kill(pid, SIGKILL);
	node->stopped_killed++;
	w->holder = NULL;
}
