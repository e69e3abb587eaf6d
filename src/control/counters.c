/* SPDX-License-Identifier: MIT */
/*
 * The counter table (counters.h) and the writer of the stats file and its
 * JSON.  A new counter is one line in the table and one in
 * docs/counters.md; tests/unit/test_counters.c fails when a field of the
 * counter structs or a row of the document is missing.
 */
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "counters.h"
#include "srnic_engine_state.h"

#define NODE(n, field, ln, fl, what)                                          \
	{.name = n, .line = ln, .meaning = what,                              \
	 .offset = offsetof(struct srnic_stats, field),                       \
	 .scope = SRNIC_SCOPE_NODE, .size = 8, .flags = fl}
#define DROP(reason, n, what)                                                 \
	NODE(n, drops[SRNIC_DROP_##reason], "drop", SRNIC_CNT_DROP, what)
#define PORT(n, field, what)                                                  \
	{.name = n, .meaning = what,                                          \
	 .offset = offsetof(struct srnic_port_stats, field),                  \
	 .scope = SRNIC_SCOPE_PORT, .size = 8}
#define PROC(n, field, what)                                                  \
	{.name = n, .meaning = what,                                          \
	 .offset = offsetof(struct srnic_proc, field),                        \
	 .scope = SRNIC_SCOPE_PROC, .size = 8}
#define OF(n, type, sc, field, what)                                          \
	{.name = n, .meaning = what, .offset = offsetof(type, field),         \
	 .scope = sc, .size = sizeof(((type *)0)->field)}

#define HI SRNIC_CNT_HIGHEST
#define PP SRNIC_CNT_PER_PROC

const struct srnic_counter srnic_counters[] = {
	PORT("rx_packets", rx_pkts, "frames received"),
	PORT("rx_bytes", rx_bytes, "... their bytes"),
	PORT("tx_packets", tx_pkts, "frames sent"),
	PORT("tx_bytes", tx_bytes, "... their bytes"),
	PORT("delayed", delayed, "frames the fault injector held back"),
	PORT("corrupted", corrupted, "frames the fault injector flipped a bit in"),
	PORT("tx_full", tx_full, "flushes the port did not take whole"),

	NODE("retransmits", retransmits, "recovery", PP,
	     "messages sent again (timeout, RNR)"),
	NODE("sack_resent_packets", sack_resent, "recovery", PP,
	     "packets sent again on a SACK"),
	NODE("sack_held_packets", sack_held, "recovery", 0,
	     "packets a SACK named not sent again: sent again for a SACK "
	     "less than an RTO before, that copy still on its way"),
	NODE("sacks_sent", sacks_sent, "recovery", PP, "SACKs sent"),
	NODE("recv_credit_waits", recv_credit_waits, "recovery", 0,
	     "RC SENDs and WRITEs with immediate that waited, with messages "
	     "in flight, for their responder to say it had posted receive "
	     "WQEs for them"),
	NODE("probes", probes, "recovery", PP,
	     "last packets sent again to ask for a SACK"),
	NODE("read_rerequests", read_rerequests, "recovery", 0,
	     "READ ranges asked for again"),
	NODE("read_dones_again", read_dones_again, "recovery", 0,
	     "READ_DONEs said again: their target's answer had not come "
	     "(completion at both ends)"),
	NODE("retry_exceeded", retry_exceeded, "recovery", 0,
	     "WQEs failed when their retries ran out (timeouts or RNR) or "
	     "their peer restarted: a QP that gave its peer up (a multicast "
	     "member's: mc_member_failed)"),
	NODE("sends_flushed", sends_flushed, "recovery", 0,
	     "send WQEs flushed unfinished: their QP went to the error state "
	     "(a program's teardown, or a failure) before they completed"),
	NODE("acks_sent", acks_sent, "responder", PP, "ACKs sent"),
	NODE("uc_acks_again", uc_acks_again, "responder", 0,
	     "UC ACKs said again: nothing new came after them, and a UC "
	     "requester out of credit waits for nothing else"),
	NODE("rnr_naks_sent", rnr_naks_sent, "responder", 0,
	     "RNR NAKs sent: a SEND found no receive posted, a WRITE's "
	     "packet a full FIFO ring, or a READ's request a FIFO's "
	     "program that has not answered it yet or a full ring "
	     "(docs/half-rdma.md)"),
	NODE("atomics", atomics, "responder", 0, "atomic operations run"),
	NODE("fifo_read_reqs", fifo_read_reqs, "responder", 0,
	     "READ requests a FIFO took for its program (half-RDMA)"),
	NODE("fifo_answers", fifo_answers, "responder", 0,
	     "answers a FIFO's program sent to them"),
	NODE("tp_requests", tp_requests, "responder", 0,
	     "third-party requests taken: this node sent a range to a target"),
	NODE("fault_fenced", fault_fenced, "responder", 0,
	     "keys fenced: a request met memory unmapped under them"),
	NODE("tpt_sent", tpt_sent, "tpt", 0,
	     "TPT_UPDATEs sent: this node's published regions"),
	NODE("tpt_taken", tpt_taken, "tpt", 0,
	     "peers' tables of published regions taken whole"),
	NODE("tpt_purged", tpt_purged, "tpt", 0,
	     "... emptied: the peer restarted"),
	NODE("tpt_refused", tpt_refused, "tpt", 0,
	     "TPT frames of no integrated peer's current process, or stale"),
	NODE("tpt_denied", tpt_denied, "tpt", 0,
	     "requests a peer's published table refused here (its right or "
	     "range): failed with nothing sent"),
	NODE("srtt_us", srtt_us, "rtt", HI,
	     "smoothed round-trip time of the QP that sampled last"),
	NODE("rto_us", rto_us, "rtt", HI, "... and its retransmission timeout"),
	{.name = "uc_give_up_us", .line = "rtt", .scope = SRNIC_SCOPE_NODE,
	 .offset = offsetof(struct srnic_stats, uc_give_up_us), .size = 8,
	 .flags = HI, .unset = SRNIC_UC_GIVE_UP_US,
	 .meaning = "how long a UC message waits for a lost packet"},
	NODE("credit_waits", fc_blocked, "credit", PP,
	     "times a QP ran out of credit"),
	NODE("credit_loans", fc_lent, "credit", PP,
	     "... and lent itself some after a wait"),
	NODE("zero_copy_frames", tx_zero_copy, "zero_copy", 0,
	     "frames sent from registered memory"),
	NODE("zero_copy_settled", tx_settled, "zero_copy", 0,
	     "... still queued when an engine call came, and copied"),
	NODE("keys_imported", keys_imported, "keys", 0,
	     "keys of another adapter taken in"),
	NODE("keys_refused", keys_refused, "keys", 0, "keys no adapter issued"),
	NODE("keys_evicted", keys_evicted, "keys", 0,
	     "imports and refusals unused for key_idle_ms, taken out"),
	NODE("key_import_ns", key_import_ns, "keys", HI,
	     "the longest miss-to-import time"),
	NODE("key_first_import_ns", key_first_import_ns, "keys", HI,
	     "the first import's"),
	NODE("mc_writes", mc_writes, "multicast", 0,
	     "sender: multicast WRITEs finished"),
	NODE("mc_packets", mc_packets, "multicast", 0,
	     "sender: new packets sent to a group"),
	NODE("mc_repairs", mc_repairs, "multicast", 0,
	     "sender: packets sent again to one member"),
	NODE("mc_bytes", mc_bytes, "multicast", 0,
	     "sender: payload of new packets and repairs"),
	NODE("mc_member_failed", mc_member_failed, "multicast", 0,
	     "sender: members given up"),
	NODE("mc_placed", mc_placed, "multicast", 0, "member: packets placed"),
	NODE("mc_unicast", mc_unicast, "multicast", 0,
	     "member: ... of them that came as repairs"),
	NODE("mc_acks", mc_acks, "multicast", 0, "member: answers sent"),
	NODE("booting_sent", booting_sent, "integration", 0,
	     "BOOTING frames sent"),
	NODE("boot_acks", boot_acks, "integration", 0,
	     "BOOT_ACKs received: the peer forgot our older selves"),
	NODE("boot_naks", boot_naks, "integration", 0,
	     "BOOT_ACKs received: the peer had nothing of us"),
	NODE("boot_answers", boot_answers, "integration", 0, "BOOT_ACKs sent"),
	NODE("qps_cleared", qps_cleared, "integration", 0,
	     "QPs failed: their peer restarted"),
	NODE("older_refused", ctl_refused, "integration", 0,
	     "control frames of a peer's older process refused"),
	NODE("peers_full", ctl_peers_full, "integration", 0,
	     "frames of a new peer not learned: the peer table was full of "
	     "peers heard lately"),
	NODE("addr_refused", ctl_addr_refused, "integration", 0,
	     "control frames whose IPv4 source is not the node they name "
	     "(encap = udp; an IPv6 node's: whose address does not make the "
	     "id they name)"),
	NODE("id_clashes", ctl_id_clashes, "integration", 0,
	     "an IPv6 node's control frames refused: another address says "
	     "a peer's id, or ours (docs/wire-protocol.md, \"Node ids\")"),
	NODE("arp_asked", arp_asked, "arp", 0,
	     "ARP requests sent (an IPv6 node's: neighbour solicitations)"),
	NODE("arp_answered", arp_answered, "arp", 0,
	     "ARP replies sent for the node's address (an IPv6 node's: "
	     "neighbour advertisements)"),
	NODE("arp_learned", arp_learned, "arp", 0,
	     "next hops' Ethernet addresses found or changed"),
	NODE("arp_refused", arp_refused, "arp", 0,
	     "ARP frames not IPv4's over Ethernet, or not from a host (an "
	     "IPv6 node's: solicitations and advertisements RFC 4861 "
	     "refuses, and MLD queries RFC 3810 does)"),
	NODE("mld_reports", mld_reports, "arp", 0,
	     "an IPv6 node's MLD reports of its solicited-node group (as it "
	     "starts, and answering queries)"),
	NODE("mld_queries", mld_queries, "arp", 0,
	     "an IPv6 node's MLD queries heard for that group or every group"),
	NODE("svc_resyncs", svc_resyncs, "svc", 0, "a client's SVC_RESYNCs sent"),
	NODE("svc_rebinds", svc_rebinds, "svc", 0,
	     "... its QPs moved to a new holder"),
	NODE("svc_binds", svc_binds, "svc", 0,
	     "a member's QPs bound to a client"),
	NODE("svc_stale", svc_stale, "svc", 0,
	     "SVC_ANNOUNCEs not newer than one taken: replays"),
	NODE("svc_full", svc_full, "svc", 0,
	     "announcements of a new service not learned: the service table "
	     "was full of services heard lately"),
	NODE("svc_qps_dropped", svc_qps_dropped, "svc", 0,
	     "a member's bound QPs failed: the service went on"),

	DROP(MALFORMED, "malformed", "frames that do not parse"),
	DROP(NOT_OURS, "not_ours", "frames for another node"),
	DROP(STALE_INC, "stale_incarnation",
	     "frames from or to an earlier incarnation"),
	DROP(NO_QP, "no_qp", "packets for a QP that does not exist"),
	DROP(QP_STATE, "qp_state", "packets a QP's state does not take"),
	DROP(STALE_TXID, "stale_txid", "packets of an older attempt of a message"),
	DROP(DUPLICATE, "duplicate",
	     "packets already landed, or of a message already done"),
	DROP(OUT_OF_WINDOW, "out_of_window", "packets beyond the QP's window"),
	DROP(BAD_KEY, "bad_key",
	     "requests with no such key, or another PD's (NAKed); "
	     "multicast WRITEs with a wrong tag"),
	DROP(OUT_OF_BOUNDS, "out_of_bounds", "requests outside the region (NAKed)"),
	DROP(NO_RIGHTS, "no_rights",
	     "requests the region or QP does not allow (NAKed)"),
	DROP(RNR, "receiver_not_ready", "SENDs that found no receive posted"),
	DROP(NO_MBUF, "no_buffer", "packets no packet buffer was left for"),
	DROP(NOT_INTEGRATED, "not_integrated",
	     "RDMA from a peer before its BOOT_ACK"),
	DROP(BAD_QKEY, "bad_qkey", "datagrams with another Q_Key"),
	DROP(CQ_FULL, "cq_full",
	     "datagrams whose CQ had no room, and multicast WRITEs' last "
	     "packets whose member CQ had none (resent)"),
	DROP(NO_GROUP, "no_group", "multicast to a group nobody here joined"),
	DROP(UC_GIVEN_UP, "uc_given_up", "UC messages given up: packets lost"),
	DROP(UC_LATE, "uc_late", "packets of a UC message given up already"),
	DROP(BAD_CRC, "bad_crc", "frames whose integrity trailer is wrong or missing"),
	DROP(BAD_AUTH, "bad_auth",
	     "control frames and service resyncs without the cluster key's MAC"),
	DROP(UNMAPPED, "unmapped",
	     "READs asked again of memory its program unmapped"),
	DROP(PAGE_FAULT, "page_fault",
	     "requests that met a page not there (unmapped, or on-demand)"),
	DROP(BAD_XRC, "bad_xrc",
	     "XRC requests naming no SRQ of the QP's domain, or to no XRC target"),
	DROP(NOT_MEMBER, "mc_not_member",
	     "multicast WRITEs to a group this node holds no region for"),
	DROP(KEY_FOREIGN, "key_foreign",
	     "RDMA at an adapter before its key's import (resent, not NAKed)"),
	DROP(MC_SOURCES_FULL, "mc_sources_full",
	     "multicast WRITEs of a new sender while its set of senders was full"),
	DROP(NO_RD_GRANT, "no_rd_grant",
	     "READs and atomics to a QP with max_dest_rd_atomic 0 (NAKed)"),
	DROP(OVER_BUDGET, "over_budget",
	     "packets a process had no room to keep: bitmap budget or held "
	     "last packets, or held a second (resent)"),
	DROP(FIFO_FULL, "fifo_full",
	     "WRITE packets for a FIFO, or packets of the answer to a READ "
	     "into one, whose ring had no room (sent again)"),
	DROP(STALE_QP, "stale_qp",
	     "packets for a QP gone whose number's table entry holds a newer QP"),
	DROP(TP_NO_TARGET, "tp_no_target",
	     "third-party requests for a target this node does not reach "
	     "(asked again)"),
	DROP(TP_BUSY, "tp_busy",
	     "third-party requests while their QP's jobs were full (asked "
	     "again)"),
	DROP(SVC_FROZEN, "svc_frozen",
	     "new requests to a service's QP its program froze (sent again "
	     "to the next holder)"),
	DROP(BAD_IP, "bad_ip",
	     "frames in IPv4 and UDP to srnic's port whose headers are wrong: "
	     "a checksum, a fragment, options, lengths (encap = udp)"),
	DROP(UNRESOLVED, "unresolved",
	     "frames to a next hop whose Ethernet address ARP has not found "
	     "yet (encap = udp; sent again)"),
	DROP(MISSTEERED, "missteered",
	     "control frames on a steering class's own queue, which carries "
	     "data frames only (queues > 1)"),

	PROC("port_polls", port_polls, "its iterations that had the port token"),
	PROC("token_misses", token_misses, "... and that found it taken"),
	PROC("token_waits", token_waits, "its sleeps for the token, frames to send"),
	PROC("token_hungry", token_hungry, "... and times it asked for a turn"),
	PROC("rx_forwarded", rx_forwarded, "frames other pollers queued for it"),
	PROC("rx_ring_full", rx_ring_full, "... and dropped: its ring was full"),
	PROC("rx_stalled", rx_stalled, "... or it had stopped (srnicd found it halted)"),

	OF("silenced", struct srnic_peer, SRNIC_SCOPE_PEER, silenced,
	   "times one of the peer's ports went silent"),
	OF("takeovers", struct srnic_service, SRNIC_SCOPE_SERVICE, takeovers,
	   "terms this node claimed"),
	OF("stepdowns", struct srnic_service, SRNIC_SCOPE_SERVICE, stepdowns,
	   "... and gave up to a higher one"),
	OF("changes", struct srnic_service, SRNIC_SCOPE_SERVICE, changes,
	   "holders (or terms) it saw come"),
};

const unsigned srnic_ncounters = RTE_DIM(srnic_counters);

void srnic_out_begin(struct srnic_out *o, FILE *f, bool json)
{
	*o = (struct srnic_out){.f = f, .json = json, .first = true};
	if (json)
		fputc('{', f);
}

void srnic_out_end(struct srnic_out *o)
{
	fputs(o->json ? "}\n" : o->line ? "\n" : "", o->f);
	o->line = false;
}

void srnic_out_line(struct srnic_out *o, const char *word, const char *label)
{
	if (o->json)
		return;
	if (o->line)
		fputc('\n', o->f);
	fputs(word, o->f);
	if (label)
		fprintf(o->f, " %s", label);
	o->line = true;
}

/* The start of a member: a JSON comma and name, a text space. */
static void member(struct srnic_out *o, const char *name)
{
	if (!o->json) {
		fputc(' ', o->f);
		return;
	}
	if (!o->first)
		fputc(',', o->f);
	o->first = false;
	if (name)
		fprintf(o->f, "\"%s\":", name);
}

/* A text member: its name, then its value. */
static void named(struct srnic_out *o, const char *name)
{
	member(o, name);
	if (!o->json)
		fprintf(o->f, "%s ", name);
}

void srnic_out_open(struct srnic_out *o, const char *name, bool array)
{
	if (!o->json)
		return;
	member(o, name);
	fputc(array ? '[' : '{', o->f);
	o->first = true;
}

void srnic_out_close(struct srnic_out *o, bool array)
{
	if (!o->json)
		return;
	fputc(array ? ']' : '}', o->f);
	o->first = false;
}

void srnic_out_u64(struct srnic_out *o, const char *name, uint64_t v)
{
	named(o, name);
	fprintf(o->f, "%" PRIu64, v);
}

void srnic_out_label_u64(struct srnic_out *o, const char *name, uint64_t v)
{
	member(o, name);
	fprintf(o->f, "%" PRIu64, v);
}

void srnic_out_hex(struct srnic_out *o, const char *name, uint64_t v,
		   bool wide)
{
	named(o, name);
	if (o->json)
		fprintf(o->f, "%" PRIu64, v);
	else
		fprintf(o->f, wide ? "%08" PRIx64 : "%#" PRIx64, v);
}

/* s, up to max bytes: in JSON a string, escaped (a peer's name comes from
 * the wire: anything); in text as it is, "-" if empty. */
static void string(struct srnic_out *o, const char *s, size_t max)
{
	size_t i;

	if (!o->json) {
		fprintf(o->f, "%.*s", (int)(max && s[0] ? max : 1),
			s[0] ? s : "-");
		return;
	}
	fputc('"', o->f);
	for (i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(o->f, "\\%c", c);
		else if (c < 0x20 || c > 0x7e)
			fprintf(o->f, "\\u%04x", c);
		else
			fputc(c, o->f);
	}
	fputc('"', o->f);
}

void srnic_out_str(struct srnic_out *o, const char *name, const char *s,
		   size_t max)
{
	named(o, name);
	string(o, s, max);
}

void srnic_out_label_str(struct srnic_out *o, const char *name,
			 const char *s, size_t max)
{
	member(o, name);
	string(o, s, max);
}

void srnic_out_bool(struct srnic_out *o, const char *name, bool v)
{
	named(o, name);
	fputs(o->json ? (v ? "true" : "false") : (v ? "yes" : "no"), o->f);
}

static void ipv4(struct srnic_out *o, uint32_t ip)
{
	fprintf(o->f, o->json ? "\"%u.%u.%u.%u\"" : "%u.%u.%u.%u", ip >> 24,
		(ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

void srnic_out_ipv4(struct srnic_out *o, const char *name, uint32_t ip)
{
	named(o, name);
	ipv4(o, ip);
}

void srnic_out_label_ipv4(struct srnic_out *o, const char *name, uint32_t ip)
{
	member(o, name);
	ipv4(o, ip);
}

/* Text: the name, then each value after a space (none: the name alone). */
static void list(struct srnic_out *o, const char *name, const uint64_t *v,
		 unsigned n)
{
	unsigned i;

	member(o, name);
	fputs(o->json ? "[" : name, o->f);
	for (i = 0; i < n; i++)
		fprintf(o->f, "%s%" PRIu64, o->json && !i ? "" : o->json ? "," : " ",
			v[i]);
	if (o->json)
		fputc(']', o->f);
}

void srnic_out_ports(struct srnic_out *o, const char *name,
		     const uint8_t *set, unsigned n)
{
	uint64_t v[SRNIC_MAX_PORTS];
	unsigned p, k = 0;

	for (p = 0; p < n && p < SRNIC_MAX_PORTS; p++)
		if (__atomic_load_n(&set[p], __ATOMIC_RELAXED))
			v[k++] = p;
	list(o, name, v, k);
}

void srnic_out_u16s(struct srnic_out *o, const char *name,
		    const uint16_t *v16, unsigned n)
{
	uint64_t v[SRNIC_MAX_PORTS];
	unsigned i;

	for (i = 0; i < n && i < SRNIC_MAX_PORTS; i++)
		v[i] = __atomic_load_n(&v16[i], __ATOMIC_RELAXED);
	list(o, name, v, i);
}

void srnic_out_u8s(struct srnic_out *o, const char *name, const uint8_t *v8,
		   unsigned n)
{
	uint64_t v[SRNIC_MAX_PORTS];
	unsigned i;

	for (i = 0; i < n && i < SRNIC_MAX_PORTS; i++)
		v[i] = __atomic_load_n(&v8[i], __ATOMIC_RELAXED);
	list(o, name, v, i);
}

/* Node scope: a text line per table line, and per drop reason; the
 * drops are one JSON object (the table keeps them together). */
static void node_line(struct srnic_out *o, const struct srnic_counter *c,
		      const char **line)
{
	bool was_drop = *line && !strcmp(*line, "drop");

	if (c->flags & SRNIC_CNT_DROP) {
		if (!was_drop)
			srnic_out_open(o, "drops", false);
		srnic_out_line(o, "drop", c->name);
		*line = c->line;
		return;
	}
	if (was_drop)
		srnic_out_close(o, false);
	if (!*line || strcmp(*line, c->line))
		srnic_out_line(o, c->line, NULL);
	*line = c->line;
}

void srnic_out_counters(struct srnic_out *o, enum srnic_scope scope,
			const void *base, unsigned flags)
{
	const char *line = NULL;
	unsigned i;

	for (i = 0; i < srnic_ncounters; i++) {
		const struct srnic_counter *c = &srnic_counters[i];
		uint64_t v;

		if (c->scope != scope || (flags && !(c->flags & flags)))
			continue;
		v = srnic_counter_read(c, base);
		if (scope != SRNIC_SCOPE_NODE) {
			srnic_out_u64(o, c->name, v);
			continue;
		}
		node_line(o, c, &line);
		if (c->flags & SRNIC_CNT_DROP) {
			member(o, c->name);
			fprintf(o->f, "%" PRIu64, v);
		} else {
			srnic_out_u64(o, c->name, v);
		}
	}
	if (line && !strcmp(line, "drop"))
		srnic_out_close(o, false);
}

void srnic_out_drops_seen(struct srnic_out *o, const void *stats)
{
	unsigned i;

	srnic_out_open(o, "drops", false);
	for (i = 0; i < srnic_ncounters; i++) {
		const struct srnic_counter *c = &srnic_counters[i];
		uint64_t v;

		if (!(c->flags & SRNIC_CNT_DROP))
			continue;
		v = srnic_counter_read(c, stats);
		if (v)
			srnic_out_u64(o, c->name, v);
	}
	srnic_out_close(o, false);
}
