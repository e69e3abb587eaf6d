/* SPDX-License-Identifier: MIT */
/*
 * Receive dispatch: what each frame a port delivers is, and which part of
 * the engine takes it (the control core, the responder, the completer,
 * multicast).  Runs under the datapath token (datapath.c).
 */
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "engine_internal.h"

bool srnic_rx_decode(struct srnic_engine *eng, unsigned p,
		     const struct rte_mbuf *m, struct srnic_pkt *pkt)
{
	const uint8_t *buf = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m);
	enum srnic_wire_err e;

	/* The trailer first: nothing of a damaged frame is believed, not
	 * even the lengths that say where its payload goes. */
	e = srnic_wire_check_crc(buf, len, eng->node->port[p].crc);
	if (e == SRNIC_WIRE_OK)
		e = srnic_wire_decode(buf, len, pkt);
	if (e != SRNIC_WIRE_OK) {
		eng->st->drops[e == SRNIC_WIRE_NOT_OURS ? SRNIC_DROP_NOT_OURS
			      : e == SRNIC_WIRE_BAD_CRC ? SRNIC_DROP_BAD_CRC
							 : SRNIC_DROP_MALFORMED]++;
		return false;
	}
	/* With a cluster key, control frames only from its holders: they
	 * can fail QPs, gate RDMA, or take a link out of use (a BYE_ACK
	 * ends a leaving node's wait too). */
	if (eng->cfg.has_key && srnic_op_is_control(pkt->opcode) &&
	    !srnic_wire_auth_ok(buf, pkt, eng->cfg.cluster_key)) {
		eng->st->drops[SRNIC_DROP_BAD_AUTH]++;
		return false;
	}
	return true;
}

/*
 * srnicd's node: a frame for a QP of another process goes to that
 * process's receive ring (and its datapath is woken if it naps).  Returns
 * true when the frame is this process's to handle; false when it is gone
 * (queued, or dropped and counted: *drop then says whether the caller
 * frees it).  A frame that came off this process's own ring (queued) is
 * never passed on again: only the port token's holder puts frames on a
 * ring, and one whose QP went meanwhile is dropped.
 */
static bool rx_mine(struct srnic_engine *eng, const struct srnic_pkt *pkt,
		    struct rte_mbuf *m, bool queued, bool *drop)
{
	struct srnic_node *node = eng->node;
	unsigned owner;

	owner = pkt->dst_qpn < SRNIC_MAX_QP
			? __atomic_load_n(&node->qp_owner[pkt->dst_qpn],
					  __ATOMIC_ACQUIRE)
			: 0;
	*drop = owner != eng->slot + 1;
	if (!*drop)
		return true;
	if (owner && !queued) {
		*drop = !srnic_proc_queue(eng, &node->proc[owner - 1], m);
		return false;
	}
	eng->st->drops[SRNIC_DROP_NO_QP]++;
	return false;
}

bool srnic_proc_queue(struct srnic_engine *eng, struct srnic_proc *to,
		      struct rte_mbuf *m)
{
	if (!__atomic_load_n(&to->live, __ATOMIC_ACQUIRE) || !to->rx) {
		eng->st->drops[SRNIC_DROP_NO_QP]++;
		return false;
	}
	if (rte_ring_sp_enqueue(to->rx, m) != 0) {
		to->rx_ring_full++;
		eng->st->drops[SRNIC_DROP_NO_MBUF]++;
		return false;
	}
	to->rx_forwarded++;
	if (!__atomic_load_n(&to->aside, __ATOMIC_RELAXED))
		srnic_wake(&to->sleeping, &to->wake);
	return true;
}

/* srnicd's node: a frame every other process's datapath must see too (a
 * peer's BOOTING: each forgets what its own QPs held for the peer), with
 * one more reference each.  srnicd itself (slot 0) has no QPs. */
static void rx_to_every_process(struct srnic_engine *eng, struct rte_mbuf *m)
{
	unsigned s;

	for (s = 1; s < SRNIC_MAX_PROCS; s++) {
		if (s == eng->slot ||
		    !__atomic_load_n(&eng->node->proc[s].live, __ATOMIC_ACQUIRE))
			continue;
		rte_mbuf_refcnt_update(m, 1);
		if (!srnic_proc_queue(eng, &eng->node->proc[s], m))
			rte_mbuf_refcnt_update(m, -1);
	}
}

static bool rx_one(struct srnic_engine *eng, struct rte_mbuf *m,
		   bool queued)
{
	struct srnic_pkt pkt;
	struct srnic_qp *qp;

	if (!srnic_rx_decode(eng, m->port, m, &pkt))
		return false;
	if (srnic_op_is_control(pkt.opcode)) {
		/* The peer is about to vanish from this link: let go of it
		 * now, on the thread that polls it, and say so.  Only its
		 * current process can say that: an old one's BYE, late or
		 * replayed, changes nothing. */
		if (pkt.opcode == SRNIC_OP_BYE && m->port < eng->node->nports) {
			const struct srnic_peer *peer =
				srnic_peer_find(eng, pkt.ipv4);

			if (peer && srnic_peer_older(peer, pkt.src_inc)) {
				eng->st->drops[SRNIC_DROP_STALE_INC]++;
				return false;
			}
			srnic_leave_answer(eng, m->port);
		}
		if (pkt.opcode == SRNIC_OP_BYE_ACK)
			return false;	/* late: we are not leaving */
		/* Forgetting a peer's old incarnation must happen here, in
		 * order with the data of this port. */
		if (pkt.opcode == SRNIC_OP_BOOTING &&
		    m->port < eng->node->nports) {
			if (pkt.dst_inc != eng->node->inc) {
				eng->st->drops[SRNIC_DROP_STALE_INC]++;
				return false;
			}
			/* srnicd's node: the poller passed it on for this
			 * process's QPs; the answer was the poller's. */
			if (queued) {
				srnic_integrate_forget(eng, &pkt);
				return false;
			}
			srnic_integrate_booting(eng, &pkt, m->port);
			if (eng->node->shared)
				rx_to_every_process(eng, m);
		}
		if (rte_ring_sp_enqueue(eng->node->ctrl_rx, m) == 0)
			return true;
		return false;
	}
	if (pkt.opcode == SRNIC_OP_UD_SEND && pkt.dst_qpn == SRNIC_QPN_MCAST) {
		srnic_mcast_deliver(eng, &pkt, m, queued); /* no incarnation */
		return false;
	}
	if (eng->node->shared) {
		bool drop;

		if (!rx_mine(eng, &pkt, m, queued, &drop))
			return !drop;
	}
	if (pkt.dst_inc != eng->node->inc) {
		eng->st->drops[SRNIC_DROP_STALE_INC]++;
		return false;
	}
	qp = srnic_qp_lookup(eng, pkt.dst_qpn);
	if (pkt.opcode == SRNIC_OP_UD_SEND) {
		/* A datagram: from anyone who knows the Q_Key. */
		if (!qp || qp->type != SRNIC_QPT_UD) {
			eng->st->drops[SRNIC_DROP_NO_QP]++;
			return false;
		}
		srnic_responder_datagram(eng, qp, &pkt, NULL);
		return false;
	}
	/* Connected: only from the QP it is connected to, and UC only takes
	 * SEND and WRITE (and ACKs, which bring credit). */
	if (!qp || qp->type == SRNIC_QPT_UD ||
	    pkt.src_qpn != qp->at.dest_qpn ||
	    (qp->type == SRNIC_QPT_UC && pkt.opcode != SRNIC_OP_SEND &&
	     pkt.opcode != SRNIC_OP_WRITE && pkt.opcode != SRNIC_OP_ACK)) {
		eng->st->drops[SRNIC_DROP_NO_QP]++;
		return false;
	}
	if (pkt.src_inc != qp->peer_inc) {
		eng->st->drops[SRNIC_DROP_STALE_INC]++;
		return false;
	}
	switch (pkt.opcode) {
	case SRNIC_OP_ACK:
		if (srnic_qp_reliable(qp))
			srnic_completer_ack(eng, qp, &pkt);
		else
			srnic_completer_credit(eng, qp, &pkt);
		return false;
	case SRNIC_OP_READ_RESP:
		srnic_completer_read_resp(eng, qp, &pkt, m);
		return false;
	default:
		if (qp->state != SRNIC_QPS_RTR && qp->state != SRNIC_QPS_RTS &&
		    qp->state != SRNIC_QPS_SQD && qp->state != SRNIC_QPS_SQE) {
			eng->st->drops[SRNIC_DROP_QP_STATE]++;
			return false;
		}
		return srnic_responder_rx(eng, qp, &pkt, m);
	}
}

/* A burst a port, the loopback or (queued) another process's poller
 * delivered, frame by frame. */
static void rx_burst(struct srnic_engine *eng, struct rte_mbuf **pkts,
		     uint16_t n, bool queued)
{
	uint16_t i;

	for (i = 0; i < n; i++) {
		/* (in one segment: every consumer sees a contiguous frame) */
		struct rte_mbuf *m = srnic_mbuf_linear(eng, pkts[i]);

		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		if (m && !rx_one(eng, m, queued))
			rte_pktmbuf_free(m);
	}
}

/* srnicd's node: frames other processes' pollers queued for this one. */
static uint16_t queued_rx(struct srnic_engine *eng, struct rte_mbuf **pkts,
			  uint16_t n)
{
	struct rte_ring *rx = eng->node->proc[eng->slot].rx;

	return rx ? (uint16_t)rte_ring_sc_dequeue_burst(rx, (void **)pkts, n,
							NULL)
		  : 0;
}

/* A ring of frames (the loopback's, or this process's own), up to a
 * transmit buffer's worth (what one flush may have put there): read only
 * a burst an iteration, it would back up, and its senders, ACKs too, would
 * find it full. */
static unsigned rx_ring(struct srnic_engine *eng,
			uint16_t (*rx)(struct srnic_engine *eng,
				       struct rte_mbuf **pkts, uint16_t n),
			bool queued)
{
	struct rte_mbuf *pkts[SRNIC_BURST];
	unsigned total = 0, k;
	uint16_t n = 0;

	for (k = 0; k < SRNIC_TXBUF / SRNIC_BURST; k++) {
		n = rx(eng, pkts, SRNIC_BURST);
		rx_burst(eng, pkts, n, queued);
		total += n;
		if (n < SRNIC_BURST)
			break;
	}
	eng->rx_backlog |= n == SRNIC_BURST;
	return total;
}

unsigned srnic_rx_ports(struct srnic_engine *eng)
{
	struct rte_mbuf *pkts[SRNIC_BURST];
	unsigned p, total;
	uint16_t n;

	eng->rx_backlog = false;
	total = rx_ring(eng, queued_rx, true);
	/* (srnicd's node: one process at a time polls the ports) */
	if (!srnic_ports_take(eng))
		return total;
	for (p = 0; p < eng->node->nports; p++) {
		struct srnic_port *port = &eng->node->port[p];

		/* Only the datapath decides to touch a port: while its link is
		 * up, and not in a life of the link whose peer said BYE. */
		port->polling = __atomic_load_n(&port->link_up,
						__ATOMIC_ACQUIRE) &&
				port->bye_gen !=
					__atomic_load_n(&port->link_gen,
							__ATOMIC_ACQUIRE);
		if (!port->polling)
			continue;
		n = srnic_port_rx(eng, p, pkts, SRNIC_BURST);
		rx_burst(eng, pkts, n, false);
		total += n;
		/* (a full burst: the port may hold more than was read) */
		eng->rx_backlog |= n == SRNIC_BURST;
	}
	total += rx_ring(eng, srnic_loop_rx, false);
	srnic_ports_give(eng);
	return total;
}
