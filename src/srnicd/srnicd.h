/* SPDX-License-Identifier: MIT */
/*
 * srnicd's own parts: the socket it serves (serve.c, on its main thread),
 * the processes it attaches and lets go of (procs.c), and the counters it
 * reports (json.c).  The node itself is the engine's (srnic_engine_be_node).
 */
#ifndef SRNICD_H
#define SRNICD_H

#include <stddef.h>

#include "engine_internal.h"

/* procs.c: a process attaches (pid from the kernel, prog its name for the
 * stats): its slot (1 and up), or a negative errno with a reason in err. */
int srnicd_proc_attach(struct srnic_engine *eng, int pid, const char *prog,
		       char *err, size_t errlen);
/* ... and goes, whatever the reason: everything it held in the node is
 * taken back (QP numbers, the port token, queued frames, the packet
 * buffers its lcore's caches kept). */
void srnicd_proc_release(struct srnic_engine *eng, unsigned slot);
/* The pid of slot's process, as the kernel gave it at its connection (0:
 * none). */
int srnicd_proc_pid(unsigned slot);
/* slot's receive ring, as srnicd made it (never the node's proc[].rx,
 * which the process can write), or NULL. */
struct rte_ring *srnicd_proc_rx(unsigned slot);
/* The process that holds the node's port token now (srnicd's own is
 * slot 0), or NULL. */
struct srnic_proc *srnicd_token_holder(struct srnic_node *node);
/* The port token back from slot's process, killed while it held it and
 * never to run again, as from one that died with it. */
void srnicd_token_reclaim(struct srnic_node *node, unsigned slot);
/* QP numbers the process in slot holds. */
unsigned srnicd_proc_qps(const struct srnic_engine *eng, unsigned slot);

/* json.c: the node's counters as JSON into buf (NUL-terminated, cut short
 * where it would not fit); the length written. */
size_t srnicd_stats_json(struct srnic_engine *eng, char *buf, size_t size);
/* One process's retransmits and drops, as a line for srnicd's log. */
size_t srnicd_proc_drops(struct srnic_engine *eng, unsigned slot, char *buf,
			 size_t size);

/* stopped.c: kill a process that has been stopped (SIGSTOP, a debugger)
 * while holding the node's port token, which stalls every process's port
 * I/O and the node's HELLOs.  Called at every turn of serving; w keeps
 * what was seen last. */
struct srnicd_stop_watch {
	struct srnic_proc *holder;	/* seen with the token ... */
	int pid;
	uint64_t takes;		/* ... taken this many times (port_polls) */
	uint64_t since;		/* ... since then, ms, not given back */
};
void srnicd_watch_stopped(struct srnic_engine *eng,
			  struct srnicd_stop_watch *w);
/* ... and mark a process that stopped taking its frames, so that it pins
 * no more of the node's packet buffers (SRNIC_RX_STALL_FRAMES). */
void srnicd_watch_rings(struct srnic_engine *eng);

/* serve.c: serve the socket until SHUTDOWN or *stop; 0, or -1 with the
 * reason printed when the socket cannot be served. */
int srnicd_serve(struct srnic_engine *eng, volatile int *stop);

#endif
