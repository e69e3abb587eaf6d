/* SPDX-License-Identifier: MIT */
/*
 * srnicd's counters as JSON (the STATS request; `./srnic stats` shows them
 * readably): the node, its processes, its ports and its peers.  Runs on
 * srnicd's main thread; it reads counters other threads and processes
 * write, one relaxed load each.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <rte_mempool.h>

#include "srnicd.h"

struct out {
	char *buf;
	size_t size, len;
};

static void put(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->len + 1 >= o->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n < o->size - o->len ? (size_t)n
						       : o->size - o->len - 1;
}

/* A name as a JSON string, up to max bytes: a process's (request.c let
 * only printable ASCII in) or a peer's (from the wire: anything). */
static void put_name(struct out *o, const char *s, size_t max)
{
	size_t i;

	put(o, "\"");
	for (i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			put(o, "\\%c", c);
		else if (c < 0x20 || c > 0x7e)
			put(o, "\\u%04x", c);
		else
			put(o, "%c", c);
	}
	put(o, "\"");
}

/* The drops counted so far, by reason (the ones above 0). */
static void put_drops(struct out *o, const struct srnic_stats *st)
{
	unsigned d, first = 1;

	for (d = 0; d < SRNIC_DROP_MAX; d++) {
		uint64_t n = srnic_cnt(&st->drops[d]);

		if (!n)
			continue;
		put(o, "%s\"%s\":%lu", first ? "" : ",",
		    srnic_drop_name((enum srnic_drop)d), (unsigned long)n);
		first = 0;
	}
}

size_t srnicd_proc_drops(struct srnic_engine *eng, unsigned slot, char *buf,
			 size_t size)
{
	const struct srnic_proc *pr = &eng->node->proc[slot];
	struct out o = {buf, size, 0};

	if (size)
		buf[0] = '\0';
	put(&o, "retransmits %lu, drops {",
	    (unsigned long)srnic_cnt(&pr->st.retransmits));
	put_drops(&o, &pr->st);
	put(&o, "}");
	return o.len;
}

/* A process's recovery at a glance: which way its traffic struggles. */
static const struct {
	const char *name;
	size_t off;
} recovery[] = {
	{"retransmits", offsetof(struct srnic_stats, retransmits)},
	{"acks_sent", offsetof(struct srnic_stats, acks_sent)},
	{"probes", offsetof(struct srnic_stats, probes)},
	{"sacks_sent", offsetof(struct srnic_stats, sacks_sent)},
	{"sack_resent", offsetof(struct srnic_stats, sack_resent)},
	{"fc_blocked", offsetof(struct srnic_stats, fc_blocked)},
	{"fc_lent", offsetof(struct srnic_stats, fc_lent)},
};

size_t srnicd_stats_json(struct srnic_engine *eng, char *buf, size_t size)
{
	struct srnic_node *node = eng->node;
	struct out o = {buf, size, 0};
	struct srnic_stats total;
	struct srnic_proc *holder = srnicd_token_holder(node);
	unsigned i, p, c, first = 1, qps = 0;

	if (size)
		buf[0] = '\0';
	put(&o, "{\"node\":");
	put_name(&o, eng->cfg.node, sizeof(eng->cfg.node));
	srnic_stats_node(eng, &total);
	put(&o, ",\"incarnation\":%u,\"pool_in_use\":%u,"
		"\"processes_most\":%u,\"token_holder\":%d,"
		"\"stopped_killed\":%u,\"retransmits\":%lu,\"drops\":{",
	    node->inc, rte_mempool_in_use_count(node->pool),
	    node->nprocs_most, holder ? holder->pid : 0, node->stopped_killed,
	    (unsigned long)total.retransmits);
	put_drops(&o, &total);
	put(&o, "},\"processes\":[");
	for (i = 0; i < SRNIC_MAX_PROCS; i++) {
		const struct srnic_proc *pr = &node->proc[i];
		unsigned n;

		if (!__atomic_load_n(&pr->live, __ATOMIC_ACQUIRE))
			continue;
		n = srnicd_proc_qps(eng, i);
		put(&o, "%s{\"slot\":%u,\"pid\":%d,\"prog\":", first ? "" : ",",
		    i, pr->pid);
		put_name(&o, pr->prog, sizeof(pr->prog));
		qps += n;
		put(&o, ",\"qps\":%u,\"rx_forwarded\":%lu,\"rx_ring_full\":%lu,"
			"\"port_polls\":%lu,\"token_misses\":%lu,"
			"\"token_waits\":%lu,\"token_hungry\":%lu",
		    n, (unsigned long)srnic_cnt(&pr->rx_forwarded),
		    (unsigned long)srnic_cnt(&pr->rx_ring_full),
		    (unsigned long)srnic_cnt(&pr->port_polls),
		    (unsigned long)srnic_cnt(&pr->token_misses),
		    (unsigned long)srnic_cnt(&pr->token_waits),
		    (unsigned long)srnic_cnt(&pr->token_hungry));
		for (c = 0; c < RTE_DIM(recovery); c++)
			put(&o, ",\"%s\":%lu", recovery[c].name,
			    (unsigned long)srnic_cnt(
				    (const uint64_t *)((const char *)&pr->st +
						       recovery[c].off)));
		put(&o, ",\"drops\":{");
		put_drops(&o, &pr->st);
		put(&o, "}}");
		first = 0;
	}
	put(&o, "],\"qps\":%u,\"ports\":[", qps);
	for (p = 0; p < node->nports; p++) {
		const struct srnic_port *port = &node->port[p];

		put(&o, "%s{\"port\":%u,\"link\":\"%s\",\"rx_packets\":%lu,"
			"\"rx_bytes\":%lu,\"tx_packets\":%lu,\"tx_bytes\":%lu}",
		    p ? "," : "", p, port->link_up ? "up" : "down",
		    (unsigned long)srnic_cnt(&port->st.rx_pkts),
		    (unsigned long)srnic_cnt(&port->st.rx_bytes),
		    (unsigned long)srnic_cnt(&port->st.tx_pkts),
		    (unsigned long)srnic_cnt(&port->st.tx_bytes));
	}
	put(&o, "],\"peers\":[");
	for (i = 0; i < node->npeers; i++) {
		const struct srnic_peer *peer = &node->peer[i];
		unsigned up = 0;

		for (p = 0; p < node->nports; p++)
			up += __atomic_load_n(&peer->up[p], __ATOMIC_RELAXED);
		put(&o, "%s{\"name\":", i ? "," : "");
		put_name(&o, peer->name, sizeof(peer->name));
		put(&o, ",\"incarnation\":%u,\"ports_up\":%u,"
			"\"integrated\":%s}",
		    peer->inc, up,
		    srnic_peer_integrated(peer) ? "true" : "false");
	}
	put(&o, "]}\n");
	return o.len;
}
