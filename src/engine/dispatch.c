/* SPDX-License-Identifier: MIT */
/*
 * Receive dispatch: what each frame a port delivers is, and which part of
 * the engine takes it (the control core, the responder, the completer,
 * multicast).  Runs under the datapath token (datapath.c); srnicd's node:
 * sorting the ports' frames runs under the port token as well, and what is
 * this process's is handled after it is given back.
 */
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "engine_internal.h"

static bool proc_queue(struct srnic_engine *eng, struct srnic_proc *to,
		       struct rte_mbuf *m)
{
	if (!__atomic_load_n(&to->live, __ATOMIC_ACQUIRE) || !to->rx) {
		eng->st->drops[SRNIC_DROP_NO_QP]++;
		return false;
	}
	if (unlikely(__atomic_load_n(&to->rx_halted, __ATOMIC_RELAXED)) &&
	    rte_ring_count(to->rx) >= SRNIC_RX_STALL_FRAMES) {
		to->rx_stalled++;
		eng->st->drops[SRNIC_DROP_NO_MBUF]++;
		return false;
	}
	if (rte_ring_sp_enqueue(to->rx, m) != 0) {
		to->rx_ring_full++;
		eng->st->drops[SRNIC_DROP_NO_MBUF]++;
		return false;
	}
	to->rx_forwarded++;
	/* (the frame on the ring before the look at aside, as the process
	 * clears aside before its last look at the ring) */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&to->aside, __ATOMIC_RELAXED))
		srnic_ring_fenced(&to->bell);
	return true;
}

void srnic_procs_queue(struct srnic_engine *eng, uint32_t procs,
		       struct rte_mbuf *m)
{
	for (; procs; procs &= procs - 1) {
		rte_mbuf_refcnt_update(m, 1);
		if (!proc_queue(eng, &eng->node->proc[__builtin_ctz(procs)], m))
			rte_mbuf_refcnt_update(m, -1);
	}
}

/* srnicd's node: the processes other than this one (and srnicd, slot 0,
 * which has no QPs) that are attached. */
static uint32_t other_procs(const struct srnic_engine *eng)
{
	uint32_t procs = 0;
	unsigned s;

	for (s = 1; s < SRNIC_MAX_PROCS; s++)
		if (s != eng->slot &&
		    __atomic_load_n(&eng->node->proc[s].live, __ATOMIC_ACQUIRE))
			procs |= 1u << s;
	return procs;
}

/* A datagram to a multicast group (srnic_mcast_forward), not to one QP. */
static inline bool to_group(const struct srnic_pkt *pkt)
{
	return pkt->opcode == SRNIC_OP_UD_SEND && pkt->dst_qpn == SRNIC_QPN_MCAST;
}

/* What sorting did with a frame. */
enum rx_fate {
	RX_FREE,	/* dropped (and counted), or done with: free it */
	RX_GONE,	/* passed on: to a ring, another process's or srnicd's */
	RX_MINE,	/* for this process's QPs: rx_handle it, in order */
};

/* A control frame, on the thread that polled it. */
static enum rx_fate rx_control(struct srnic_engine *eng, struct rte_mbuf *m,
			       const struct srnic_pkt *pkt, bool queued)
{
	/* The peer is about to vanish from this link: let go of it now, on
	 * the thread that polls it, and say so.  Only its current process
	 * can say that: an old one's BYE, late or replayed, changes
	 * nothing. */
	if (pkt->opcode == SRNIC_OP_BYE && m->port < eng->node->nports) {
		const struct srnic_peer *peer = srnic_peer_find(eng, pkt->ipv4);

		if (peer && srnic_peer_older(peer, pkt->src_inc)) {
			eng->st->drops[SRNIC_DROP_STALE_INC]++;
			return RX_FREE;
		}
		srnic_leave_answer(eng, m->port);
	}
	if (pkt->opcode == SRNIC_OP_BYE_ACK)
		return RX_FREE;	/* late: we are not leaving */
	/* A peer's BOOTING: this process's QPs forget its old incarnation in
	 * order with the data of this port (rx_handle: the frames before it
	 * are the old incarnation's, those after it the new one's), and
	 * srnicd's node passes it on to every other process for theirs.
	 * The control core sees it too: the poller's reference goes there,
	 * one more stays with this process. */
	if (pkt->opcode == SRNIC_OP_BOOTING && m->port < eng->node->nports) {
		if (pkt->dst_inc != eng->node->inc) {
			eng->st->drops[SRNIC_DROP_STALE_INC]++;
			return RX_FREE;
		}
		if (queued)
			return RX_MINE;
		if (eng->node->shared)
			srnic_procs_queue(eng, other_procs(eng), m);
		rte_mbuf_refcnt_update(m, 1);
		if (rte_ring_sp_enqueue(eng->node->ctrl_rx, m) != 0)
			rte_mbuf_refcnt_update(m, -1);
		return RX_MINE;
	}
	if (rte_ring_sp_enqueue(eng->node->ctrl_rx, m) != 0)
		return RX_FREE;
	eng->ctrl_frames++;
	return RX_GONE;
}

/*
 * Whose frame m is, decoded into pkt: the control core's, another
 * process's (srnicd's node: it goes onto that process's receive ring, and
 * its datapath is woken if it naps), or this process's.  A frame that came
 * off this process's own ring (queued) is never passed on again: only the
 * port token's holder puts frames on a ring, and one whose QP went
 * meanwhile is dropped.  Cheap, as what runs under the port token must be:
 * nothing here places data or touches a QP.
 */
static enum rx_fate rx_sort(struct srnic_engine *eng, struct rte_mbuf *m,
			    struct srnic_pkt *pkt, bool queued)
{
	struct srnic_node *node = eng->node;
	unsigned owner;

	if (!srnic_rx_decode(eng, m->port, m, pkt))
		return RX_FREE;
	/* (a UDP node's frames counted on their paths, once, by whoever
	 * took them off the wire: control/paths.c weighs the paths by their
	 * losses and delays) */
	if ((!queued || eng->rx_own_queues) && eng->cfg.encap_udp)
		srnic_port_udp_count(eng, m, pkt->ts);
	if (srnic_op_is_control(pkt->opcode))
		return rx_control(eng, m, pkt, queued);
	if (to_group(pkt))
		return queued || srnic_mcast_forward(eng, pkt, m) ? RX_MINE
								  : RX_FREE;
	if (srnic_group_write(pkt)) {
		/* A multicast WRITE: the process holding the group's region
		 * here places it (and checks its tag), or nobody does. */
		owner = __atomic_load_n(
			&node->group_owner[pkt->rkey % SRNIC_MAX_GROUPS],
			__ATOMIC_ACQUIRE);
		if (!owner) {
			eng->st->drops[SRNIC_DROP_NOT_MEMBER]++;
			return RX_FREE;
		}
	} else if (!node->shared) {
		return RX_MINE;
	} else {
		/* (by the entry alone: its owner tells a stale generation
		 * from the current one) */
		owner = __atomic_load_n(
			&node->qp_owner[srnic_qpn_index(pkt->dst_qpn)],
			__ATOMIC_ACQUIRE);
	}
	if (owner == eng->slot + 1 || !node->shared)
		return RX_MINE;
	if (owner && !queued)
		return proc_queue(eng, &node->proc[owner - 1], m) ? RX_GONE
								  : RX_FREE;
	eng->st->drops[SRNIC_DROP_NO_QP]++;
	return RX_FREE;
}

/*
 * Key migration (key_scope = device): an RDMA request that came in on a
 * port of an adapter that neither issued its key nor imported it.  It is
 * dropped, not NAKed (the requester sends it again), and the key reported
 * (control/keys.c settles it after this burst).  A key the adapter
 * imported, or was told is nobody's (the usual checks NAK that one), goes
 * on.
 */
static bool key_foreign(struct srnic_engine *eng, const struct srnic_pkt *pkt,
			unsigned port)
{
	struct srnic_key_alias *alias;
	uint8_t dev;

	/* (a WRITE of no bytes touches no memory, whatever its key) */
	if (port >= eng->node->nports || !srnic_op_remote(pkt->opcode) ||
	    (pkt->opcode == SRNIC_OP_WRITE && !pkt->pkt_len))
		return false;
	dev = eng->cfg.port_dev[port];
	if (srnic_mem_key_dev(&eng->mem, pkt->rkey) == dev)
		return false;
	alias = srnic_key_alias_find(&eng->keys, dev, pkt->rkey);
	if (alias) {
		/* (imported or refused: its own checks decide; in use, so
		 * not idle; the poll's time is close enough) */
		alias->used = eng->rx_polled_at;
		return false;
	}
	eng->st->drops[SRNIC_DROP_KEY_FOREIGN]++;
	srnic_keys_miss(eng, dev, pkt->rkey);
	return true;
}

/* Frames for the node rather than one of its QPs: a peer's booting
 * notice, and multicast.  True when pkt was one (and is done with). */
static inline bool rx_node_frame(struct srnic_engine *eng,
				 const struct rte_mbuf *m,
				 const struct srnic_pkt *pkt, bool queued)
{
	if (pkt->opcode == SRNIC_OP_BOOTING) {
		/* (queued: the poller that passed it on answered it) */
		if (queued)
			srnic_integrate_forget(eng, pkt);
		else
			srnic_integrate_booting(eng, pkt, m->port);
		return true;
	}
	if (to_group(pkt)) {
		srnic_mcast_deliver(eng, pkt); /* (no incarnation) */
		return true;
	}
	if (srnic_group_write(pkt)) {
		srnic_group_member_rx(eng, pkt, m); /* (to any incarnation) */
		return true;
	}
	return false;
}

/* Frames a QP takes from any peer, not only its connected one: a
 * service's binding, a multicast WRITE's answer, a datagram.  True when
 * pkt was one (and is done with). */
static inline bool rx_unconnected(struct srnic_engine *eng,
				  struct srnic_qp *qp,
				  const struct srnic_pkt *pkt)
{
	if (pkt->opcode == SRNIC_OP_SVC_RESYNC ||
	    pkt->opcode == SRNIC_OP_SVC_RESYNC_ACK) {
		/* A service QP's binding (engine/service.c): the member's QP
		 * is not connected yet, the client's is to another. */
		if (!qp || qp->q.type != SRNIC_QPT_RC)
			eng->st->drops[SRNIC_DROP_NO_QP]++;
		else if (pkt->opcode == SRNIC_OP_SVC_RESYNC)
			srnic_svc_resync_rx(eng, qp, pkt);
		else
			srnic_svc_resync_ack_rx(eng, qp, pkt);
		return true;
	}
	if (srnic_group_ack_pkt(pkt)) {
		/* A member's answer to a UD QP's multicast WRITE. */
		if (!qp || qp->q.type != SRNIC_QPT_UD)
			eng->st->drops[SRNIC_DROP_NO_QP]++;
		else
			srnic_group_ack(eng, qp, pkt);
		return true;
	}
	if (pkt->opcode == SRNIC_OP_UD_SEND) {
		/* A datagram: from anyone who knows the Q_Key. */
		if (!qp || qp->q.type != SRNIC_QPT_UD)
			eng->st->drops[SRNIC_DROP_NO_QP]++;
		else
			srnic_responder_datagram(eng, qp, pkt, NULL);
		return true;
	}
	return false;
}

/* Whether a connected QP takes pkt: only from the QP it is connected to,
 * in that QP's current incarnation, and UC only SEND and WRITE (and
 * ACKs, which bring credit).  A refused frame is counted as a drop. */
static inline bool rx_connected_ok(struct srnic_engine *eng,
				   const struct srnic_qp *qp,
				   const struct srnic_pkt *pkt, unsigned port)
{
	if (!qp || qp->q.type == SRNIC_QPT_UD ||
	    pkt->src_qpn != qp->at.dest_qpn ||
	    (qp->q.type == SRNIC_QPT_UC && pkt->opcode != SRNIC_OP_SEND &&
	     pkt->opcode != SRNIC_OP_WRITE && pkt->opcode != SRNIC_OP_ACK)) {
		eng->st->drops[SRNIC_DROP_NO_QP]++;
		return false;
	}
	if (pkt->src_inc != qp->peer_inc) {
		eng->st->drops[SRNIC_DROP_STALE_INC]++;
		return false;
	}
	return !(unlikely(eng->cfg.key_scope_device) &&
		 key_foreign(eng, pkt, port));
}

/* A connected QP's frame to its role: ACKs and READ responses to the
 * requester's completer, requests to the responder (which only a QP
 * that has a receive side, RTR or later, takes), and the ACK a request
 * carries to the completer.  True when the responder kept m. */
static inline bool rx_connected(struct srnic_engine *eng, struct srnic_qp *qp,
				const struct srnic_pkt *pkt,
				struct rte_mbuf *m)
{
	switch (pkt->opcode) {
	case SRNIC_OP_ACK:
		if (srnic_qp_reliable(qp))
			srnic_completer_ack(eng, qp, pkt);
		else
			srnic_completer_credit(eng, qp, pkt);
		return false;
	case SRNIC_OP_READ_RESP:
		srnic_completer_read_resp(eng, qp, pkt, m);
		return false;
	/* (completion at both ends, a READ's: the reader says it has
	 * every byte, the target that it completed the READ) */
	case SRNIC_OP_READ_DONE:
		srnic_responder_read_done(eng, qp, pkt);
		return false;
	case SRNIC_OP_READ_DONE_ACK:
		srnic_completer_read_done_ack(eng, qp, pkt);
		return false;
	default:
		if (qp->q.state != SRNIC_QPS_RTR && qp->q.state != SRNIC_QPS_RTS &&
		    qp->q.state != SRNIC_QPS_SQD && qp->q.state != SRNIC_QPS_SQE) {
			eng->st->drops[SRNIC_DROP_QP_STATE]++;
			return false;
		}
		/* (a controller's third-party request: no message of this
		 * QP's, an RC QP's to take at once) */
		if (pkt->opcode == SRNIC_OP_TP_READ_REQ) {
			if (qp->q.type == SRNIC_QPT_RC)
				srnic_responder_tp(eng, qp, pkt);
			else
				eng->st->drops[SRNIC_DROP_NO_QP]++;
			return false;
		}
		/* (the ACK it carries first: what it acknowledges was sent
		 * before the request was) */
		if ((pkt->flags & SRNIC_F_ACKS) && srnic_qp_reliable(qp))
			srnic_completer_acked(eng, qp, pkt->ack_msn);
		return srnic_responder_rx(eng, qp, pkt, m);
	}
}

/* A packet for a QP number no QP has whose table entry holds a QP of
 * another generation: for the entry's QP before (trickle traffic, seed
 * 002 l.422-434), dropped and counted as such.  (Multicast's number is
 * no QP's, and rx_unconnected counts the other misses.) */
static inline bool rx_stale_qp(struct srnic_engine *eng,
			       const struct srnic_pkt *pkt)
{
	if (pkt->dst_qpn == SRNIC_QPN_MCAST ||
	    !srnic_qp_at(eng, srnic_qpn_index(pkt->dst_qpn)))
		return false;
	eng->st->drops[SRNIC_DROP_STALE_QP]++;
	return true;
}

/* A frame for this process's QPs (sorted; queued: off its own ring):
 * true when the roles kept m. */
static bool rx_handle(struct srnic_engine *eng, struct rte_mbuf *m,
		      const struct srnic_pkt *pkt, bool queued)
{
	struct srnic_qp *qp;

	if (rx_node_frame(eng, m, pkt, queued))
		return false;
	if (pkt->dst_inc != eng->node->inc) {
		eng->st->drops[SRNIC_DROP_STALE_INC]++;
		return false;
	}
	qp = srnic_qp_lookup(eng, pkt->dst_qpn);
	if (unlikely(!qp) && rx_stale_qp(eng, pkt))
		return false;
	if (rx_unconnected(eng, qp, pkt))
		return false;
	if (!rx_connected_ok(eng, qp, pkt, m->port))
		return false;
	return rx_connected(eng, qp, pkt, m);
}

/*
 * A burst a port, the loopback or (queued) another process's poller
 * delivered, sorted frame by frame.  What is this process's waits in
 * rx_kept (rx_handle_kept): under the port token only sorting runs, so
 * that the token is held for as little as a burst's headers, never for
 * placing data (a holder that is descheduled stops every process's port
 * I/O meanwhile).
 */
static void rx_burst(struct srnic_engine *eng, struct rte_mbuf **pkts,
		     uint16_t n, bool queued)
{
	uint16_t i;

	for (i = 0; i < n; i++) {
		/* (in one segment: every consumer sees a contiguous frame) */
		struct rte_mbuf *m = srnic_mbuf_linear(eng, pkts[i]);
		struct srnic_pkt *pkt = &eng->rx_kept_pkt[eng->rx_kept];

		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		if (!m)
			continue;
		switch (rx_sort(eng, m, pkt, queued)) {
		case RX_MINE:
			RTE_ASSERT(eng->rx_kept < SRNIC_RX_KEPT);
			eng->rx_kept_m[eng->rx_kept++] = m;
			break;
		case RX_FREE:
			rte_pktmbuf_free(m);
			break;
		case RX_GONE:
			break;
		}
	}
}

/*
 * The frames rx_burst kept, to this process's roles: the ACKs first, then
 * the rest in the order they came.  An ACK and the peer's answer to what it
 * acknowledges may come on two ports, and the port polled first is not
 * always the one that carried the first sent: a program that waits for
 * both on one completion channel must see its send complete before the
 * answer's receive (perftest 4.5's ib_send_lat -e polls the send CQ once
 * on the first event after its send).  They concern the two directions'
 * separate messages, so nothing else depends on their order.
 */
static void rx_handle_kept(struct srnic_engine *eng, bool queued)
{
	/* (what the roles did not keep goes back to the pool at once, a
	 * burst's worth in one put) */
	struct rte_mbuf *done[SRNIC_RX_KEPT];
	uint16_t i, pass, ndone = 0;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < eng->rx_kept; i++) {
			if ((eng->rx_kept_pkt[i].opcode == SRNIC_OP_ACK) !=
			    (pass == 0))
				continue;
			if (!rx_handle(eng, eng->rx_kept_m[i],
				       &eng->rx_kept_pkt[i], queued))
				done[ndone++] = eng->rx_kept_m[i];
		}
	}
	rte_pktmbuf_free_bulk(done, ndone);
	eng->rx_kept = 0;
}

/* srnicd's node: frames other processes' pollers queued for this one. */
static uint16_t queued_rx(struct srnic_engine *eng, struct rte_mbuf **pkts,
			  uint16_t n)
{
	struct srnic_proc *me = &eng->node->proc[eng->slot];

	if (!me->rx)
		return 0;
	/* (the pollers and srnicd see that it still takes its frames) */
	__atomic_store_n(&me->rx_taken_at, eng->now, __ATOMIC_RELAXED);
	if (unlikely(__atomic_load_n(&me->rx_halted, __ATOMIC_RELAXED)))
		__atomic_store_n(&me->rx_halted, 0, __ATOMIC_RELAXED);
	return (uint16_t)rte_ring_sc_dequeue_burst(me->rx, (void **)pkts, n,
						   NULL);
}

/*
 * srnicd's node: frames the last holder of the port token queued for this
 * process before it gave the token back are older than any still on the
 * ports.  With some in the ring, the ports wait for the next iteration,
 * which reads the ring first.  Polled now, they let a flow's datagrams
 * overtake each other: whoever held the token queued some after this
 * process read its ring, and gave the token back with later ones still on
 * the port (ud_check's multicast datagrams under the sanitizers arrived
 * as 0, 18, 19, 1, 2, ...).
 */
static inline bool queued_waiting(const struct srnic_engine *eng)
{
	const struct srnic_proc *me = &eng->node->proc[eng->slot];

	return eng->node->shared && me->rx && !rte_ring_empty(me->rx);
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
		/* (its own ring: no port token to give back first) */
		if (queued)
			rx_handle_kept(eng, true);
		total += n;
		if (n < SRNIC_BURST)
			break;
	}
	eng->rx_backlog |= n == SRNIC_BURST;
	return total;
}

/*
 * The port token's holder, about to poll the ports: a gap since the last
 * poll of them longer than srnic_away_gap_tsc is the node's time away
 * (ports_away).  srnicd's node shares the ports: a process that misses the
 * token reads only its ring, which nobody fills while the holder is off
 * its core (20-200 ms beside busy programs on two CPUs, control.c), and
 * its UC stalls leave that time out, as they leave out its own time off
 * its core (responder/uc.c).
 */
static void ports_gap(struct srnic_engine *eng, uint64_t now)
{
	uint64_t gap = srnic_away_gap(eng,
				      __atomic_load_n(&eng->node->ports_polled,
						      __ATOMIC_RELAXED),
				      now);

	if (gap)
		__atomic_fetch_add(&eng->node->ports_away, gap,
				   __ATOMIC_RELAXED);
}

/* A steering class's own queues (port/steer.c), no port token held:
 * only data frames come off them, and a frame for another process's QP
 * (whose class this process had before it) is not passed on, as a frame
 * off the process's own ring is not (queued). */
static unsigned rx_steered(struct srnic_engine *eng)
{
	struct rte_mbuf *pkts[SRNIC_BURST];
	unsigned p, total = 0;
	uint16_t n;

	for (p = 0; p < eng->node->nports; p++) {
		/* (srnic_port_rx_steered looks whether it is live, with the
		 * class's word said) */
		if (!srnic_port_own(eng, p))
			continue;
		n = srnic_port_rx_steered(eng, p, pkts, SRNIC_BURST);
		eng->rx_own_queues = true;
		rx_burst(eng, pkts, n, true);
		eng->rx_own_queues = false;
		total += n;
		eng->rx_backlog |= n == SRNIC_BURST;
	}
	rx_handle_kept(eng, true);
	return total;
}

static unsigned rx_poll(struct srnic_engine *eng)
{
	struct rte_mbuf *pkts[SRNIC_BURST];
	unsigned p, total;
	uint64_t at;
	uint16_t n;

	total = rx_ring(eng, queued_rx, true);
	/* A steering class polls its own queues, and nothing under the
	 * port token: the node's other frames are class 0's, whose pollers
	 * queue this process's among them on its ring, as before. */
	if (eng->cls) {
		eng->rx_missed = false;
		return total + rx_steered(eng);
	}
	/* (srnicd's node: one process at a time polls the ports; one that
	 * missed them does not sleep long: the holder may be about to) */
	eng->rx_missed = !srnic_ports_take(eng);
	if (eng->rx_missed)
		return total;
	if (unlikely(queued_waiting(eng))) {
		srnic_ports_give(eng);
		return total;
	}
	/* (the clock read with the token held: the holders' times never go
	 * backwards, though this process may have been off its core since
	 * its iteration read eng->now) */
	at = srnic_now();
	ports_gap(eng, at);
	srnic_ports_take_control(eng);
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
	/* (after the control core's frames went on ctrl_rx: it reads this
	 * first, then the ring) */
	__atomic_store_n(&eng->node->ports_polled, at, __ATOMIC_RELEASE);
	srnic_ports_give(eng);
	rx_handle_kept(eng, false);
	return total;
}

/*
 * The datapath's clock read anew at a receive poll or after its frames,
 * and whether the gap since the last such read is time away (away_tsc):
 * longer than the shortest UC give-up time (and than twice the longest
 * nap an idle datapath takes: that is no absence), the process was off
 * its core (150 ms and more on two busy CPUs), and what arrived meanwhile
 * waits in its ring or the ports, behind a backlog that may have been
 * there before, which begins anew.  The UC timer (responder/uc.c) gives
 * it the time from now, not from before the gap, and leaves the gap out
 * of a stall: judged with it, it gave up messages whose packets it had
 * not read yet, or that still waited in the sender's full queue
 * (uc_late, then perftest's UC server waited for good).
 *
 * Read here, not taken from the iteration's first read: a process taken
 * off its core between that and the poll, or while it handled a burst
 * (whose packets start UC stalls at the poll's time), would come back to
 * a timer that counts the gap as a stall and a backlog as old as it, and
 * give up a message whose packets wait in its ring (test_placement's
 * rx_pause has both).
 */
static bool rx_clock(struct srnic_engine *eng)
{
	uint64_t gap;

	srnic_dp_clock(eng);
	gap = srnic_away_gap(eng, eng->rx_polled_at, eng->now);
	eng->away_tsc += gap;
	eng->rx_polled_at = eng->now;
	return gap != 0;
}

/* A receive poll, and whether it left frames waiting (rx_backlog) since
 * when. */
unsigned srnic_rx_ports(struct srnic_engine *eng)
{
	bool away = rx_clock(eng);
	bool fresh = !eng->rx_backlog || away;
	unsigned total;

	eng->rx_backlog = false;
	total = rx_poll(eng);
	if (eng->rx_backlog && fresh)
		eng->rx_backlog_since = eng->now;
	return total;
}

/* After the frames a poll found: the clock again, for the timers and the
 * packets' ts that follow, and a long while handling them is time away
 * as a long while between polls is. */
void srnic_rx_handled(struct srnic_engine *eng)
{
	if (rx_clock(eng) && eng->rx_backlog)
		eng->rx_backlog_since = eng->now;
}

/*
 * Datapath, the port poller: a datagram to a group.  Whoever polled it off
 * a port passes the same frame, with one more reference each, to every
 * other process of the node with members, and says whether its own process
 * has some (then srnic_mcast_deliver, once the port token is given back).
 * Our own datagram back from a wire (a bridge floods it) goes no further:
 * the node's loopback copy (requester) is the one that counts.  The caller
 * frees m as usual.
 */
bool srnic_mcast_forward(struct srnic_engine *eng, const struct srnic_pkt *pkt,
			 struct rte_mbuf *m)
{
	uint32_t mine = 1u << eng->slot, procs;

	if (srnic_sent_here(eng, pkt) && m && m->port < eng->node->nports) {
		eng->st->drops[SRNIC_DROP_NOT_OURS]++;
		return false;
	}
	procs = srnic_node_group_procs(eng->node, pkt->dst_ipv4);
	if (!procs) {
		eng->st->drops[SRNIC_DROP_NO_GROUP]++;
		return false;
	}
	if (m)
		srnic_procs_queue(eng, procs & ~mine, m);
	return procs & mine;
}
