/* SPDX-License-Identifier: MIT */
/*
 * The node's counters, written twice a second to the configuration's
 * stats_file (what "./srnic stats NODE" shows) and, as JSON, to
 * stats_file.json ("./srnic stats NODE --json"), by the thread that does
 * the node's file work (files.c), and by srnicd when asked for them.  In
 * srnicd's node they are every process's added up (srnic_stats_node).
 * Both files come from one walk over the node (srnic_stats_out) whose
 * counters are counters.c's table.  The text is made in memory, where
 * holding the peers' lock costs nothing, and each file is replaced whole
 * (write, then rename), so a reader never sees half of it.
 * Counters belong to the datapath; reading them here without a lock is fine
 * for statistics: each is one aligned word.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>

#include "counters.h"
#include "srnic_control.h"

const char *srnic_drop_name(enum srnic_drop d)
{
	size_t at = offsetof(struct srnic_stats, drops) + d * sizeof(uint64_t);
	unsigned i;

	for (i = 0; i < srnic_ncounters; i++)
		if ((srnic_counters[i].flags & SRNIC_CNT_DROP) &&
		    srnic_counters[i].offset == at)
			return srnic_counters[i].name;
	return "?";
}

void srnic_stats_add(struct srnic_stats *t, const struct srnic_stats *st)
{
	unsigned i;

	for (i = 0; i < srnic_ncounters; i++) {
		const struct srnic_counter *c = &srnic_counters[i];
		uint64_t *to, v;

		if (c->scope != SRNIC_SCOPE_NODE)
			continue;
		to = (uint64_t *)((char *)t + c->offset);
		v = srnic_counter_raw(c, st);
		*to = c->flags & SRNIC_CNT_HIGHEST ? RTE_MAX(*to, v) : *to + v;
	}
}

void srnic_stats_node(const struct srnic_engine *eng, struct srnic_stats *t)
{
	const struct srnic_node *node = eng->node;
	unsigned i;

	memset(t, 0, sizeof(*t));
	if (!node->shared) {
		srnic_stats_add(t, eng->st);
		return;
	}
	srnic_stats_add(t, &node->departed);
	for (i = 0; i < SRNIC_MAX_PROCS; i++)
		if (__atomic_load_n(&node->proc[i].live, __ATOMIC_ACQUIRE))
			srnic_stats_add(t, &node->proc[i].st);
}

/* The node itself: its incarnation, how it looks keys up, the multicast
 * groups its HELLOs announce, whether it has a cluster key. */
static void out_node(struct srnic_out *o, const struct srnic_engine *eng)
{
	srnic_out_line(o, "node", NULL);
	srnic_out_label_str(o, "node", eng->cfg.node, sizeof(eng->cfg.node));
	srnic_out_hex(o, "incarnation", eng->node->inc, true);
	srnic_out_str(o, "key_scope", eng->cfg.key_scope_device ? "device"
								: "node", 8);
	srnic_out_u64(o, "devices", eng->cfg.ndev);
	srnic_out_hex(o, "groups",
		      __atomic_load_n(&eng->node->groups, __ATOMIC_RELAXED),
		      false);
	srnic_out_bool(o, "cluster_key", eng->cfg.has_key);
	/* (which fault file is in effect: port/fault.c) */
	srnic_out_u64(o, "fault_file_inode",
		      __atomic_load_n(&eng->fault_ino, __ATOMIC_RELAXED));
	srnic_out_u64(o, "fault_file_mtime_ns",
		      __atomic_load_n(&eng->fault_mtime_ns, __ATOMIC_ACQUIRE));
}

/* The class queue q of a port carries frames from, and to (a tap's queue
 * c: class c's both ways; a memif link's s*N + r: from s to r). */
static unsigned from_class(const struct srnic_port *port, unsigned q,
			   unsigned n)
{
	return port->kernel_steer ? q : q / n;
}

static unsigned to_class(const struct srnic_port *port, unsigned q,
			 unsigned n)
{
	return port->kernel_steer ? q : q % n;
}

/* A port's counters: its own (the port token's holders'), what the
 * steering classes' own queues carried, which only they count, and what
 * the fault injector did to each class's frames. */
static struct srnic_port_stats port_totals(const struct srnic_node *node,
					   unsigned p)
{
	const struct srnic_port *port = &node->port[p];
	struct srnic_port_stats t = port->st;
	unsigned q, c, n = node->classes;

	for (c = 0; c < SRNIC_MAX_CLASSES; c++) {
		t.delayed += port->fault.held[c].delayed;
		t.corrupted += port->fault.held[c].corrupted;
	}

	for (q = 0; port->nq > 1 && q < port->nq; q++) {
		if (to_class(port, q, n)) {
			t.rx_pkts += port->q[q].rx_pkts;
			t.rx_bytes += port->q[q].rx_bytes;
		}
		if (from_class(port, q, n)) {
			t.tx_pkts += port->q[q].tx_pkts;
			t.tx_bytes += port->q[q].tx_bytes;
		}
	}
	return t;
}

/* Steering: each of a port's queues, from which class to which. */
static void out_queues(struct srnic_out *o, const struct srnic_node *node,
		       unsigned p)
{
	const struct srnic_port *port = &node->port[p];
	unsigned q, n = node->classes;

	if (port->nq <= 1)
		return;
	srnic_out_bool(o, "steering", port->steer);
	srnic_out_open(o, "queues", true);
	for (q = 0; q < port->nq; q++) {
		srnic_out_open(o, NULL, false);
		srnic_out_line(o, "queue", NULL);
		srnic_out_label_u64(o, "port", p);
		srnic_out_label_u64(o, "queue", q);
		srnic_out_u64(o, "from_class", from_class(port, q, n));
		srnic_out_u64(o, "to_class", to_class(port, q, n));
		srnic_out_u64(o, "rx_packets", port->q[q].rx_pkts);
		srnic_out_u64(o, "rx_bytes", port->q[q].rx_bytes);
		srnic_out_u64(o, "tx_packets", port->q[q].tx_pkts);
		srnic_out_u64(o, "tx_bytes", port->q[q].tx_bytes);
		srnic_out_u64(o, "tx_dropped", port->q[q].tx_dropped);
		srnic_out_close(o, false);
	}
	srnic_out_close(o, true);
}

static void out_ports(struct srnic_out *o, const struct srnic_engine *eng)
{
	const struct srnic_node *node = eng->node;
	unsigned p;

	srnic_out_open(o, "ports", true);
	for (p = 0; p < node->nports; p++) {
		srnic_out_open(o, NULL, false);
		srnic_out_line(o, "port", NULL);
		srnic_out_label_u64(o, "port", p);
		srnic_out_str(o, "link", node->port[p].link_up ? "up" : "down",
			      8);
		struct srnic_port_stats st = port_totals(node, p);

		srnic_out_counters(o, SRNIC_SCOPE_PORT, &st, 0);
		srnic_out_u64(o, "tx_queued",
			      __atomic_load_n(&eng->txbuf[p].n,
					      __ATOMIC_RELAXED));
		srnic_out_u64(o, "weight", eng->cfg.weight[p]);
		srnic_out_bool(o, "crc", node->port[p].crc);
		out_queues(o, node, p);
		srnic_out_close(o, false);
	}
	srnic_out_close(o, true);
	srnic_out_open(o, "loopback", false);
	srnic_out_line(o, "loopback", NULL);
	srnic_out_counters(o, SRNIC_SCOPE_PORT,
			   &node->port[SRNIC_PORT_LOOP].st, 0);
	srnic_out_close(o, false);
}

/* The services this node is a member of or heard of: who holds each at
 * which term, and this node's part. */
static void out_services(struct srnic_out *o, const struct srnic_node *node)
{
	unsigned i;

	srnic_out_open(o, "services", true);
	for (i = 0; i < SRNIC_MAX_SVC_KNOWN; i++) {
		const struct srnic_service *sv = &node->svc[i];

		if (!sv->ipv4)
			continue;
		srnic_out_open(o, NULL, false);
		srnic_out_line(o, "service", NULL);
		srnic_out_label_str(o, "name", sv->mine >= 0 ? sv->name : "-",
				    sizeof(sv->name));
		srnic_out_label_ipv4(o, "ipv4", sv->ipv4);
		srnic_out_ipv4(o, "holder", sv->holder);
		srnic_out_hex(o, "term", sv->term, false);
		srnic_out_str(o, "role", sv->holding      ? "holder"
					 : sv->mine >= 0 ? "standby"
							 : "client", 8);
		srnic_out_counters(o, SRNIC_SCOPE_SERVICE, sv, 0);
		srnic_out_close(o, false);
	}
	srnic_out_close(o, true);
}

/* A peer: where it is heard; whether RDMA flows in (it forgot our old
 * selves) and out (it lets us in); HELLOs lost per mille on each port, how
 * often a port went silent, the ports striping avoids for it, and (a UDP
 * node's peer) on each port the paths it hears, bit k for path k (UDP
 * source port 49152 + k; 0: it does not say), each path's weight
 * (control/paths.c: 64 for all, less for a path that loses more or is
 * slower), and the loss of each of its paths to us (256ths, 255: not
 * measured) and its delay against the best's (a code, 15: not measured)
 * as last measured. */
static void out_peer(struct srnic_out *o, const struct srnic_node *node,
		     const struct srnic_peer *peer)
{
	uint8_t w[SRNIC_MAX_PORTS * SRNIC_UDP_PATHS];
	uint8_t l[SRNIC_MAX_PORTS * SRNIC_UDP_PATHS];
	uint8_t d[SRNIC_MAX_PORTS * SRNIC_UDP_PATHS];
	static const uint8_t no_ip6[16];
	char ip6[INET6_ADDRSTRLEN];

	srnic_out_open(o, NULL, false);
	srnic_out_line(o, "peer", NULL);
	srnic_out_label_str(o, "name", peer->name, sizeof(peer->name));
	srnic_out_label_ipv4(o, "ipv4", peer->ipv4);
	if (memcmp(peer->ip6, no_ip6, 16)) {
		/* (an IPv6 node: ipv4 is its id) */
		inet_ntop(AF_INET6, peer->ip6, ip6, sizeof(ip6));
		srnic_out_label_str(o, "ipv6", ip6, sizeof(ip6));
	}
	srnic_out_hex(o, "incarnation", peer->inc, true);
	srnic_out_ports(o, "ports_up", peer->up, node->nports);
	srnic_out_line(o, "integration", peer->name);
	srnic_out_bool(o, "rdma_in", peer->ok_inc == peer->inc);
	srnic_out_bool(o, "rdma_out", peer->ready_inc == peer->inc);
	srnic_out_line(o, "striping", peer->name);
	srnic_out_u16s(o, "hello_loss", peer->hello_loss, node->nports);
	srnic_out_counters(o, SRNIC_SCOPE_PEER, peer, 0);
	srnic_out_ports(o, "silent", peer->silent, node->nports);
	srnic_out_ports(o, "lossy", peer->lossy, node->nports);
	srnic_out_u8s(o, "paths_ok", peer->paths_ok, node->nports);
	srnic_paths_weights(peer, node->nports, w, l, d);
	srnic_out_u8s(o, "path_weights", w, node->nports * SRNIC_UDP_PATHS);
	srnic_out_u8s(o, "path_loss", l, node->nports * SRNIC_UDP_PATHS);
	srnic_out_u8s(o, "path_delay", d, node->nports * SRNIC_UDP_PATHS);
	srnic_out_close(o, false);
}

void srnic_stats_out(struct srnic_out *o, struct srnic_engine *eng)
{
	struct srnic_stats st;
	unsigned i;

	srnic_stats_node(eng, &st);
	out_node(o, eng);
	out_ports(o, eng);
	srnic_out_counters(o, SRNIC_SCOPE_NODE, &st, 0);
	out_services(o, eng->node);
	srnic_out_open(o, "peers", true);
	bool held = srnic_peer_lock(eng->node);
	/* (an entry without an address is nobody's: a peer is learned from
	 * a frame that names it, and an attached process may have written
	 * npeers past the ones there are, as e2e/26's hostile one does) */
	for (i = 0; i < srnic_npeers(eng->node); i++)
		if (eng->node->peer[i].ipv4)
			out_peer(o, eng->node, &eng->node->peer[i]);
	srnic_peer_unlock(eng->node, held);
	srnic_out_close(o, true);
}

/* The node's counters in one format, made in memory; NULL if out of it. */
static char *stats_text(struct srnic_engine *eng, bool json, size_t *len)
{
	struct srnic_out o;
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		return NULL;
	srnic_out_begin(&o, f, json);
	srnic_stats_out(&o, eng);
	srnic_out_end(&o);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* path replaced whole by text (through path.tmp). */
static void replace_file(const char *path, const char *text, size_t len)
{
	char tmp[sizeof(((struct srnic_config *)0)->stats_file) + 16];
	FILE *f;
	bool whole;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	whole = fwrite(text, 1, len, f) == len;
	if (fclose(f) == 0 && whole)
		rename(tmp, path);
	else
		remove(tmp);
}

void srnic_stats_write(struct srnic_engine *eng)
{
	/* (srnicd's main thread writes too, when asked for its counters) */
	static pthread_mutex_t writing = PTHREAD_MUTEX_INITIALIZER;
	char path[sizeof(eng->cfg.stats_file) + 8];
	char *text, *json;
	size_t len, json_len;

	if (!eng->cfg.stats_file[0])
		return;
	text = stats_text(eng, false, &len);
	json = stats_text(eng, true, &json_len);
	snprintf(path, sizeof(path), "%s.json", eng->cfg.stats_file);
	pthread_mutex_lock(&writing);
	if (text)
		replace_file(eng->cfg.stats_file, text, len);
	if (json)
		replace_file(path, json, json_len);
	pthread_mutex_unlock(&writing);
	free(text);
	free(json);
}
