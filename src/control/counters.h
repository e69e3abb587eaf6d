/* SPDX-License-Identifier: MIT */
/*
 * The node's counters, listed once.  Every counter a user can read has one
 * entry here: its name (the same in the stats file, its JSON and
 * docs/counters.md), where it lives (a scope's struct and the offset in
 * it), the line of the stats file it is shown on, and what it counts.
 * stats.c writes the stats file and its JSON from this table, srnicd's
 * STATS answer too (src/srnicd/json.c), and srnic_stats_add adds up
 * processes' counters by it.
 *
 * And the writer both formats share (srnic_out): one walk over the node
 * gives the readable text or the JSON, so a field's name is spelled once.
 */
#ifndef SRNIC_COUNTERS_H
#define SRNIC_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum srnic_scope {
	SRNIC_SCOPE_NODE,	/* struct srnic_stats: the node's (every
				 * process's added up) and each process's */
	SRNIC_SCOPE_PORT,	/* struct srnic_port_stats: each port's and
				 * the loopback's */
	SRNIC_SCOPE_PROC,	/* struct srnic_proc: an srnicd process's */
	SRNIC_SCOPE_PEER,	/* struct srnic_peer */
	SRNIC_SCOPE_SERVICE,	/* struct srnic_service */
	SRNIC_SCOPE_MAX
};

/* How processes' values make the node's: added up, or the highest (a
 * QP's last sample, the longest time). */
#define SRNIC_CNT_HIGHEST 0x1
/* Shown for each of srnicd's processes as well (which way its traffic
 * struggles), not only for the node. */
#define SRNIC_CNT_PER_PROC 0x2
/* A drop reason: a line of its own in text ("drop no_qp 3"), a member of
 * "drops" in JSON. */
#define SRNIC_CNT_DROP 0x4

struct srnic_counter {
	const char *name;
	const char *line;	/* the stats file's line it is on (node
				 * scope; each drop reason has one) */
	const char *meaning;	/* one line, as docs/counters.md has it */
	uint16_t offset;	/* in its scope's struct */
	uint8_t scope;		/* enum srnic_scope */
	uint8_t size;		/* bytes: 8 or 4 */
	uint8_t flags;		/* SRNIC_CNT_* */
	uint32_t unset;		/* shown while the counter is 0 (a value no
				 * QP sampled yet) */
};

extern const struct srnic_counter srnic_counters[];
extern const unsigned srnic_ncounters;

/* Counter c's value in base, its scope's struct. */
static inline uint64_t srnic_counter_raw(const struct srnic_counter *c,
					 const void *base)
{
	const char *at = (const char *)base + c->offset;

	return c->size == 8 ? __atomic_load_n((const uint64_t *)at,
					      __ATOMIC_RELAXED)
			    : __atomic_load_n((const uint32_t *)at,
					      __ATOMIC_RELAXED);
}

/* ... as shown: c->unset while it is 0. */
static inline uint64_t srnic_counter_read(const struct srnic_counter *c,
					  const void *base)
{
	uint64_t v = srnic_counter_raw(c, base);

	return v ? v : c->unset;
}

/*
 * The writer.  Text: one line per record ("port 0 link up rx_packets 12
 * ..."), a record's name and its label words first, then name value
 * pairs; lists are their values one after the other.  JSON: one object,
 * records as nested objects or arrays of them.  Labels are JSON members
 * whose text is the value alone ("port 0", not "port port 0").
 */
struct srnic_out {
	FILE *f;
	bool json;
	bool first;		/* JSON: no member yet in this object/array */
	bool line;		/* text: a line is open */
};

void srnic_out_begin(struct srnic_out *o, FILE *f, bool json);
void srnic_out_end(struct srnic_out *o);
/* Text: a new line that starts with word (and label, if not NULL). */
void srnic_out_line(struct srnic_out *o, const char *word, const char *label);
/* JSON: "name":{ or "name":[ (name NULL: an array's element) */
void srnic_out_open(struct srnic_out *o, const char *name, bool array);
void srnic_out_close(struct srnic_out *o, bool array);
void srnic_out_u64(struct srnic_out *o, const char *name, uint64_t v);
/* text %08x (an incarnation) or %#x (hex 0: a map, a term), JSON a number */
void srnic_out_hex(struct srnic_out *o, const char *name, uint64_t v,
		   bool wide);
void srnic_out_str(struct srnic_out *o, const char *name, const char *s,
		   size_t max);
void srnic_out_bool(struct srnic_out *o, const char *name, bool v);
void srnic_out_ipv4(struct srnic_out *o, const char *name, uint32_t ip);
/* The ports p < n whose byte in set is not 0 (text: their numbers). */
void srnic_out_ports(struct srnic_out *o, const char *name,
		     const uint8_t *set, unsigned n);
/* A list of n numbers. */
void srnic_out_u16s(struct srnic_out *o, const char *name,
		    const uint16_t *v, unsigned n);
void srnic_out_u8s(struct srnic_out *o, const char *name, const uint8_t *v,
		   unsigned n);
/* Labels: JSON members, the value alone in text. */
void srnic_out_label_u64(struct srnic_out *o, const char *name, uint64_t v);
void srnic_out_label_str(struct srnic_out *o, const char *name,
			 const char *s, size_t max);
void srnic_out_label_ipv4(struct srnic_out *o, const char *name,
			  uint32_t ip);

/* The counters of scope read from base (only those with one of flags, if
 * flags): node scope starts a text line where the table's line changes,
 * and gives the drops their object. */
void srnic_out_counters(struct srnic_out *o, enum srnic_scope scope,
			const void *base, unsigned flags);
/* The drops above 0, in a "drops" object (srnicd's processes). */
void srnic_out_drops_seen(struct srnic_out *o, const void *stats);

#endif
