/* SPDX-License-Identifier: MIT */
/*
 * Loopback: the port to this node itself.  A QP connected to the node's
 * own GID, or a UD address handle for it, has its frames striped onto this
 * port alone (stripe.c), as a remote node's go onto the ports that reach
 * it.  The transmit buffer is the same as any port's; its flush puts the
 * frames on a ring instead of a wire, and the next receive poll takes them
 * off and dispatches them as any port's frames (dispatch.c): the responder
 * and completer see what they would see from a wire, headers, incarnations
 * and key checks included, and nothing has a second path to keep right.
 * The frames never leave the process's memory: no CRC, no zero-copy.
 * Datapath only; srnic_loop_start and srnic_loop_stop run with it stopped.
 */
#include <string.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "srnic_port.h"

/* Frames in flight to ourselves: a transmit buffer's worth, twice. */
#define LOOP_RING (2 * SRNIC_TXBUF)

int srnic_loop_start(struct srnic_engine *eng, char *err, unsigned errlen)
{
	struct srnic_port *port = &eng->node->port[SRNIC_PORT_LOOP];

	if (!eng->node->loop)
		eng->node->loop = rte_ring_create("srnic_loop", LOOP_RING,
					    rte_socket_id(),
					    RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!eng->node->loop) {
		snprintf(err, errlen, "srnic: out of DPDK memory (mem_mb in %s)",
			 eng->cfg.path);
		return -ENOMEM;
	}
	memcpy(port->mac, eng->cfg.mac, 6);
	port->crc = 0;
	port->zero_copy = 0;
	port->started = 1;
	port->link_up = 1;
	port->polling = 1;
	return 0;
}

void srnic_loop_stop(struct srnic_engine *eng)
{
	struct rte_mbuf *m;

	srnic_port_tx_discard(eng, SRNIC_PORT_LOOP);
	while (eng->node->loop &&
	       rte_ring_sc_dequeue(eng->node->loop, (void **)&m) == 0)
		rte_pktmbuf_free(m);
}

uint16_t srnic_loop_rx(struct srnic_engine *eng, struct rte_mbuf **pkts,
		       uint16_t n)
{
	struct srnic_port *port = &eng->node->port[SRNIC_PORT_LOOP];
	uint16_t got, i;

	got = (uint16_t)rte_ring_sc_dequeue_burst(eng->node->loop,
						  (void **)pkts, n, NULL);
	for (i = 0; i < got; i++) {
		pkts[i]->port = SRNIC_PORT_LOOP;
		port->st.rx_bytes += rte_pktmbuf_pkt_len(pkts[i]);
	}
	port->st.rx_pkts += got;
	return got;
}

/* Frames queued to ourselves, onto the ring (rxtx.c's flush): how many
 * it took. */
uint16_t srnic_loop_tx(struct srnic_engine *eng, struct rte_mbuf **pkts,
		       uint16_t n)
{
	return (uint16_t)rte_ring_sp_enqueue_burst(eng->node->loop,
						   (void **)pkts, n, NULL);
}
