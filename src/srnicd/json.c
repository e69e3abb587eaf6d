/* SPDX-License-Identifier: MIT */
/*
 * srnicd's counters as JSON (the STATS request; `./srnic stats` shows them
 * readably): the node's, as its stats file has them (srnic_stats_out), and
 * srnicd's own: its packet buffers, its processes and theirs.  Runs on
 * srnicd's main thread; it reads counters other threads and processes
 * write, one relaxed load each.
 */
#include <stdio.h>

#include <rte_mempool.h>

#include "counters.h"
#include "srnicd.h"

/* A stream that writes into buf (up to size - 1 bytes), or NULL. */
static FILE *open_buf(char *buf, size_t size)
{
	if (!size)
		return NULL;
	buf[0] = '\0';
	return fmemopen(buf, size, "w");
}

/* ... closed: buf NUL-terminated (cut short where the text did not fit);
 * its length. */
static size_t close_buf(FILE *f, char *buf, size_t size)
{
	long at;

	if (!f)
		return 0;
	at = ftell(f);
	fclose(f);
	if (at < 0)
		at = 0;
	if ((size_t)at > size - 1)
		at = (long)(size - 1);
	buf[at] = '\0';
	return (size_t)at;
}

size_t srnicd_proc_drops(struct srnic_engine *eng, unsigned slot, char *buf,
			 size_t size)
{
	const struct srnic_proc *pr = &eng->node->proc[slot];
	FILE *f = open_buf(buf, size);
	struct srnic_out o;

	if (!f)
		return 0;
	fprintf(f, "retransmits %lu, drops {",
		(unsigned long)srnic_cnt(&pr->st.retransmits));
	srnic_out_begin(&o, f, false);
	srnic_out_drops_seen(&o, &pr->st);
	fputs(" }", f);
	return close_buf(f, buf, size);
}

/* A process: who it is, the QPs it holds, its share of the port work, and
 * which way its traffic struggles; the QPs it holds. */
static unsigned out_proc(struct srnic_out *o, struct srnic_engine *eng,
			 unsigned slot)
{
	const struct srnic_proc *pr = &eng->node->proc[slot];
	unsigned qps = srnicd_proc_qps(eng, slot), c, cls = 0;

	for (c = 1; c < SRNIC_MAX_CLASSES; c++)
		if (__atomic_load_n(&eng->node->class_owner[c],
				    __ATOMIC_RELAXED) == slot + 1)
			cls = c;
	srnic_out_open(o, NULL, false);
	srnic_out_u64(o, "slot", slot);
	srnic_out_u64(o, "pid", (uint64_t)srnicd_proc_pid(slot));
	srnic_out_str(o, "prog", pr->prog, sizeof(pr->prog));
	srnic_out_u64(o, "qps", qps);
	/* (steering: 0, the port token's path; else its own queues) */
	srnic_out_u64(o, "class", cls);
	srnic_out_counters(o, SRNIC_SCOPE_PROC, pr, 0);
	srnic_out_counters(o, SRNIC_SCOPE_NODE, &pr->st, SRNIC_CNT_PER_PROC);
	srnic_out_drops_seen(o, &pr->st);
	srnic_out_close(o, false);
	return qps;
}

static void out_srnicd(struct srnic_out *o, struct srnic_engine *eng)
{
	struct srnic_node *node = eng->node;
	struct srnic_proc *holder = srnicd_token_holder(node);
	unsigned i, qps = 0;

	srnic_out_u64(o, "pool_in_use", rte_mempool_in_use_count(node->pool));
	srnic_out_u64(o, "processes_most", node->nprocs_most);
	srnic_out_u64(o, "token_holder",
		      holder ? (uint64_t)srnicd_proc_pid(
				       (unsigned)(holder - node->proc))
			     : 0);
	srnic_out_u64(o, "stopped_killed", node->stopped_killed);
	srnic_out_u64(o, "foreign_frames", node->foreign_frames);
	srnic_out_u64(o, "locks_stepped", node->locks_stepped);
	srnic_out_open(o, "processes", true);
	for (i = 0; i < SRNIC_MAX_PROCS; i++)
		if (__atomic_load_n(&node->proc[i].live, __ATOMIC_ACQUIRE))
			qps += out_proc(o, eng, i);
	srnic_out_close(o, true);
	srnic_out_u64(o, "qps", qps);
}

size_t srnicd_stats_json(struct srnic_engine *eng, char *buf, size_t size)
{
	FILE *f = open_buf(buf, size);
	struct srnic_out o;

	if (!f)
		return 0;
	srnic_out_begin(&o, f, true);
	srnic_stats_out(&o, eng);
	out_srnicd(&o, eng);
	srnic_out_end(&o);
	return close_buf(f, buf, size);
}
