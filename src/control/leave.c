/* SPDX-License-Identifier: MIT */
/*
 * Leaving a link without hurting the peer.
 *
 * DPDK 22.11's memif unmaps a link's shared memory from its interrupt thread
 * as soon as the other side disconnects, while the datapath may be inside a
 * receive or transmit burst on that memory: the survivor faults.  So a node
 * that stops its ports first says BYE on every link and waits, a bounded
 * time, for each peer's BYE_ACK.  A peer sends BYE_ACK only after it has
 * stopped using the link (and it sends it from the datapath itself, the
 * one that would otherwise touch the link), so the disconnect that
 * follows finds nobody on the other side.
 *
 * Both halves run in the datapath: the leaving one at shutdown (on the
 * engine's thread, holding the token for good), the answering one from the
 * receive path.
 */
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "srnic_control.h"
#include "srnic_port_guard.h"

#define LEAVE_WAIT_MS 300

/* The peer on port p is leaving: let go of the link, then tell it so. */
void srnic_leave_answer(struct srnic_engine *eng, unsigned p)
{
	struct srnic_port *port = &eng->node->port[p];
	struct rte_mbuf *m;

	/* Only a shared-memory link vanishes under its peer: on the others
	 * (af_packet) the answer is all that is needed, and the link stays
	 * in use for whoever comes next on it. */
	if (port->shared_memory) {
		port->bye_gen = __atomic_load_n(&port->link_gen,
						__ATOMIC_ACQUIRE);
		__atomic_store_n(&port->polling, 0, __ATOMIC_RELEASE);
		/* What was queued for the link will not go. */
		srnic_port_tx_discard(eng, p);
	}
	m = srnic_control_frame(eng, SRNIC_OP_BYE_ACK, p);
	if (m)
		srnic_port_tx_now(eng, p, m);
}

/* Shutdown: BYE on every live link, then wait for the answers. */
void srnic_leave_links(struct srnic_engine *eng)
{
	uint8_t waiting[SRNIC_MAX_PORTS] = {0};
	unsigned p, left = 0, ms;

	srnic_ports_flush(eng);
	for (p = 0; p < eng->node->nports; p++) {
		struct rte_mbuf *m;

		if (!eng->node->port[p].polling)
			continue;
		m = srnic_control_frame(eng, SRNIC_OP_BYE, p);
		if (m && srnic_port_tx_now(eng, p, m)) {
			waiting[p] = 1;
			left++;
		}
	}
	for (ms = 0; left && ms < LEAVE_WAIT_MS; ms++) {
		for (p = 0; p < eng->node->nports; p++) {
			struct rte_mbuf *pkts[SRNIC_BURST];
			uint16_t n, i;

			if (!waiting[p])
				continue;
			if (!srnic_port_io_enter())
				continue;
			n = rte_eth_rx_burst(eng->node->port[p].port_id, 0,
					     pkts, SRNIC_BURST);
			srnic_port_io_leave();
			if (eng->cfg.encap_udp)
				n = srnic_port_udp_strip(eng, pkts, n, false);
			for (i = 0; i < n; i++) {
				struct srnic_pkt pkt;

				if (waiting[p] &&
				    srnic_rx_decode(eng, p, pkts[i], &pkt) &&
				    (pkt.opcode == SRNIC_OP_BYE_ACK ||
				     pkt.opcode == SRNIC_OP_BYE)) {
					/* An answer, or the peer leaving at
					 * the same time: either way it no
					 * longer uses the link. */
					waiting[p] = 0;
					left--;
				}
				rte_pktmbuf_free(pkts[i]);
			}
		}
		if (left)
			usleep(1000);
	}
	for (p = 0; p < eng->node->nports; p++)
		__atomic_store_n(&eng->node->port[p].polling, 0,
				 __ATOMIC_RELEASE);
}
