/* SPDX-License-Identifier: MIT */
/*
 * The node's counters, written twice a second to the configuration's
 * stats_file (what "./srnic stats NODE" shows) by the thread that does the
 * node's file work (files.c), and by srnicd when asked for them.  In
 * srnicd's node they are every process's added up (srnic_stats_node).  The text is made in memory, where holding
 * the peers' lock costs nothing, and the file is replaced whole (write,
 * then rename), so a reader never sees half of it.
 * Counters belong to the datapath; reading them here without a lock is fine
 * for statistics: each is one aligned 64-bit word.
 */
#include <stdio.h>
#include <stdlib.h>

#include "srnic_control.h"

static const char *const drop_name[SRNIC_DROP_MAX] = {
	[SRNIC_DROP_MALFORMED] = "malformed",
	[SRNIC_DROP_NOT_OURS] = "not_ours",
	[SRNIC_DROP_STALE_INC] = "stale_incarnation",
	[SRNIC_DROP_NO_QP] = "no_qp",
	[SRNIC_DROP_QP_STATE] = "qp_state",
	[SRNIC_DROP_STALE_TXID] = "stale_txid",
	[SRNIC_DROP_DUPLICATE] = "duplicate",
	[SRNIC_DROP_OUT_OF_WINDOW] = "out_of_window",
	[SRNIC_DROP_BAD_KEY] = "bad_key",
	[SRNIC_DROP_OUT_OF_BOUNDS] = "out_of_bounds",
	[SRNIC_DROP_NO_RIGHTS] = "no_rights",
	[SRNIC_DROP_RNR] = "receiver_not_ready",
	[SRNIC_DROP_NO_MBUF] = "no_buffer",
	[SRNIC_DROP_NOT_INTEGRATED] = "not_integrated",
	[SRNIC_DROP_BAD_QKEY] = "bad_qkey",
	[SRNIC_DROP_CQ_FULL] = "cq_full",
	[SRNIC_DROP_NO_GROUP] = "no_group",
	[SRNIC_DROP_UC_GIVEN_UP] = "uc_given_up",
	[SRNIC_DROP_UC_LATE] = "uc_late",
	[SRNIC_DROP_BAD_CRC] = "bad_crc",
	[SRNIC_DROP_BAD_AUTH] = "bad_auth",
	[SRNIC_DROP_UNMAPPED] = "unmapped",
	[SRNIC_DROP_PAGE_FAULT] = "page_fault",
	[SRNIC_DROP_BAD_XRC] = "bad_xrc",
	[SRNIC_DROP_NOT_MEMBER] = "mc_not_member",
	[SRNIC_DROP_KEY_FOREIGN] = "key_foreign",
};

const char *srnic_drop_name(enum srnic_drop d)
{
	return d < SRNIC_DROP_MAX && drop_name[d] ? drop_name[d] : "?";
}

void srnic_stats_add(struct srnic_stats *t, const struct srnic_stats *st)
{
	const uint64_t *from = (const uint64_t *)st;
	uint64_t *to = (uint64_t *)t;
	uint64_t srtt = t->srtt_us, rto = t->rto_us, give_up = t->uc_give_up_us;
	uint64_t import_us = t->key_import_ns;
	uint64_t first_us = t->key_first_import_ns;
	size_t i;

	_Static_assert(sizeof(*st) % sizeof(uint64_t) == 0,
		       "srnic_stats holds only uint64_t counters");
	for (i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		to[i] += srnic_cnt(&from[i]);
	t->srtt_us = RTE_MAX(srtt, srnic_cnt(&st->srtt_us));
	t->rto_us = RTE_MAX(rto, srnic_cnt(&st->rto_us));
	t->uc_give_up_us = RTE_MAX(give_up, srnic_cnt(&st->uc_give_up_us));
	t->key_import_ns = RTE_MAX(import_us, srnic_cnt(&st->key_import_ns));
	t->key_first_import_ns = RTE_MAX(first_us,
					 srnic_cnt(&st->key_first_import_ns));
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

void srnic_stats_write(struct srnic_engine *eng)
{
	/* (srnicd's main thread writes too, when asked for its counters) */
	static pthread_mutex_t writing = PTHREAD_MUTEX_INITIALIZER;
	struct srnic_stats st;
	const struct srnic_port *lo = &eng->node->port[SRNIC_PORT_LOOP];
	char tmp[sizeof(eng->cfg.stats_file) + 8];
	char *text = NULL;
	size_t len = 0;
	unsigned p, i;
	FILE *f;

	if (!eng->cfg.stats_file[0])
		return;
	f = open_memstream(&text, &len);
	if (!f)
		return;
	srnic_stats_node(eng, &st);
	fprintf(f, "node %s incarnation %08x\n", eng->cfg.node, eng->node->inc);
	for (p = 0; p < eng->node->nports; p++) {
		const struct srnic_port *port = &eng->node->port[p];

		fprintf(f, "port %u link %s rx_packets %lu rx_bytes %lu "
			"tx_packets %lu tx_bytes %lu delayed %lu corrupted %lu "
			"tx_full %lu tx_queued %u weight %u crc %s\n", p,
			port->link_up ? "up" : "down",
			(unsigned long)srnic_cnt(&port->st.rx_pkts),
			(unsigned long)srnic_cnt(&port->st.rx_bytes),
			(unsigned long)srnic_cnt(&port->st.tx_pkts),
			(unsigned long)srnic_cnt(&port->st.tx_bytes),
			(unsigned long)srnic_cnt(&port->st.delayed),
			(unsigned long)srnic_cnt(&port->st.corrupted),
			(unsigned long)srnic_cnt(&port->st.tx_full),
			(unsigned)__atomic_load_n(&eng->txbuf[p].n,
						  __ATOMIC_RELAXED),
			eng->cfg.weight[p], port->crc ? "yes" : "no");
	}
	fprintf(f, "loopback rx_packets %lu rx_bytes %lu tx_packets %lu "
		"tx_bytes %lu tx_full %lu\n",
		(unsigned long)srnic_cnt(&lo->st.rx_pkts),
		(unsigned long)srnic_cnt(&lo->st.rx_bytes),
		(unsigned long)srnic_cnt(&lo->st.tx_pkts),
		(unsigned long)srnic_cnt(&lo->st.tx_bytes),
		(unsigned long)srnic_cnt(&lo->st.tx_full));
	fprintf(f, "retransmits %lu\n",
		(unsigned long)srnic_cnt(&st.retransmits));
	fprintf(f, "sacks_sent %lu\n",
		(unsigned long)srnic_cnt(&st.sacks_sent));
	fprintf(f, "sack_resent_packets %lu\n",
		(unsigned long)srnic_cnt(&st.sack_resent));
	fprintf(f, "probes %lu\n", (unsigned long)srnic_cnt(&st.probes));
	fprintf(f, "srtt_us %lu rto_us %lu\n",
		(unsigned long)srnic_cnt(&st.srtt_us),
		(unsigned long)srnic_cnt(&st.rto_us));
	fprintf(f, "uc_give_up_us %lu\n",
		srnic_cnt(&st.uc_give_up_us)
			? (unsigned long)srnic_cnt(&st.uc_give_up_us)
			: (unsigned long)SRNIC_UC_GIVE_UP_US);
	fprintf(f, "atomics %lu\n", (unsigned long)srnic_cnt(&st.atomics));
	fprintf(f, "read_rerequests %lu\n",
		(unsigned long)srnic_cnt(&st.read_rerequests));
	fprintf(f, "credit_waits %lu credit_loans %lu\n",
		(unsigned long)srnic_cnt(&st.fc_blocked),
		(unsigned long)srnic_cnt(&st.fc_lent));
	fprintf(f, "zero_copy frames %lu settled %lu\n",
		(unsigned long)srnic_cnt(&st.tx_zero_copy),
		(unsigned long)srnic_cnt(&st.tx_settled));
	fprintf(f, "acks_sent %lu\n", (unsigned long)srnic_cnt(&st.acks_sent));
	fprintf(f, "rnr_naks_sent %lu\n",
		(unsigned long)srnic_cnt(&st.rnr_naks_sent));
	/* Key migration between the node's adapters: keys imported and
	 * refused, the longest miss-to-import time, and how the node's keys
	 * are looked up. */
	fprintf(f, "keys_imported %lu keys_refused %lu key_import_ns %lu "
		"key_first_import_ns %lu key_scope %s devices %u\n",
		(unsigned long)srnic_cnt(&st.keys_imported),
		(unsigned long)srnic_cnt(&st.keys_refused),
		(unsigned long)srnic_cnt(&st.key_import_ns),
		(unsigned long)srnic_cnt(&st.key_first_import_ns),
		eng->cfg.key_scope_device ? "device" : "node", eng->cfg.ndev);
	/* Multicast RDMA WRITE: the sender's messages, packets to groups,
	 * repairs and members given up; a member's placed packets and
	 * answers; and the node's group map. */
	fprintf(f, "mc_writes %lu mc_packets %lu mc_repairs %lu mc_bytes %lu "
		"mc_member_failed %lu mc_placed %lu mc_unicast %lu mc_acks %lu "
		"groups %#llx\n",
		(unsigned long)srnic_cnt(&st.mc_writes),
		(unsigned long)srnic_cnt(&st.mc_packets),
		(unsigned long)srnic_cnt(&st.mc_repairs),
		(unsigned long)srnic_cnt(&st.mc_bytes),
		(unsigned long)srnic_cnt(&st.mc_member_failed),
		(unsigned long)srnic_cnt(&st.mc_placed),
		(unsigned long)srnic_cnt(&st.mc_unicast),
		(unsigned long)srnic_cnt(&st.mc_acks),
		(unsigned long long)__atomic_load_n(&eng->node->groups,
						    __ATOMIC_RELAXED));
	for (i = 0; i < SRNIC_DROP_MAX; i++)
		fprintf(f, "drop %s %lu\n", drop_name[i],
			(unsigned long)srnic_cnt(&st.drops[i]));
	fprintf(f, "integration booting_sent %lu boot_acks %lu boot_naks %lu "
		"boot_answers %lu qps_cleared %lu older_refused %lu "
		"cluster_key %s\n",
		(unsigned long)srnic_cnt(&st.booting_sent),
		(unsigned long)srnic_cnt(&st.boot_acks),
		(unsigned long)srnic_cnt(&st.boot_naks),
		(unsigned long)srnic_cnt(&st.boot_answers),
		(unsigned long)srnic_cnt(&st.qps_cleared),
		(unsigned long)srnic_cnt(&st.ctl_refused),
		eng->cfg.has_key ? "yes" : "no");
	fprintf(f, "svc_resyncs %lu svc_rebinds %lu svc_binds %lu "
		"svc_qps_dropped %lu\n",
		(unsigned long)srnic_cnt(&st.svc_resyncs),
		(unsigned long)srnic_cnt(&st.svc_rebinds),
		(unsigned long)srnic_cnt(&st.svc_binds),
		(unsigned long)srnic_cnt(&st.svc_qps_dropped));
	/* Services: which this node is a member of or heard of, who holds
	 * each at which term, and this node's part. */
	for (i = 0; i < SRNIC_MAX_SVC_KNOWN; i++) {
		const struct srnic_service *sv = &eng->node->svc[i];
		uint32_t h = sv->holder;

		if (!sv->ipv4)
			continue;
		fprintf(f, "service %s %u.%u.%u.%u holder %u.%u.%u.%u term %#x "
			"role %s takeovers %u stepdowns %u changes %u\n",
			sv->mine >= 0 ? sv->name : "-", sv->ipv4 >> 24,
			(sv->ipv4 >> 16) & 255, (sv->ipv4 >> 8) & 255,
			sv->ipv4 & 255, h >> 24, (h >> 16) & 255,
			(h >> 8) & 255, h & 255, sv->term,
			sv->holding ? "holder" : sv->mine >= 0 ? "standby"
							       : "client",
			sv->takeovers, sv->stepdowns, sv->changes);
	}
	srnic_peer_lock(eng->node);
	for (i = 0; i < eng->node->npeers; i++) {
		const struct srnic_peer *peer = &eng->node->peer[i];

		fprintf(f, "peer %s %u.%u.%u.%u incarnation %08x ports up",
			peer->name, peer->ipv4 >> 24, (peer->ipv4 >> 16) & 255,
			(peer->ipv4 >> 8) & 255, peer->ipv4 & 255, peer->inc);
		for (p = 0; p < eng->node->nports; p++)
			if (peer->up[p])
				fprintf(f, " %u", p);
		/* RDMA in: it forgot our old selves; out: it lets us in. */
		fprintf(f, "\nintegration %s rdma_in %s rdma_out %s\n",
			peer->name, peer->ok_inc == peer->inc ? "yes" : "no",
			peer->ready_inc == peer->inc ? "yes" : "no");
		/* HELLOs lost per mille on each port, how often a port went
		 * silent, and the ports striping avoids for it. */
		fprintf(f, "striping %s hello_loss", peer->name);
		for (p = 0; p < eng->node->nports; p++)
			fprintf(f, " %u", peer->hello_loss[p]);
		fprintf(f, " silenced %u silent", peer->silenced);
		for (p = 0; p < eng->node->nports; p++)
			if (peer->silent[p])
				fprintf(f, " %u", p);
		fprintf(f, " lossy");
		for (p = 0; p < eng->node->nports; p++)
			if (peer->lossy[p])
				fprintf(f, " %u", p);
		fputc('\n', f);
	}
	srnic_peer_unlock(eng->node);
	if (fclose(f) != 0) {
		free(text);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", eng->cfg.stats_file);
	pthread_mutex_lock(&writing);
	f = fopen(tmp, "w");
	if (f) {
		bool whole = fwrite(text, 1, len, f) == len;

		if (fclose(f) == 0 && whole)
			rename(tmp, eng->cfg.stats_file);
		else
			remove(tmp);
	}
	pthread_mutex_unlock(&writing);
	free(text);
}
