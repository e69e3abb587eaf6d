/* SPDX-License-Identifier: MIT */
/*
 * Integration of a (re)started node: BOOTING, BOOT_ACK, RDMA_READY.
 *
 * Every process that opens the device is a new incarnation of its node,
 * with new random key tags.  Packets that name an older incarnation are
 * already dropped on sight (engine.c); this exchange is what makes a
 * restart safe even so, and quick to notice:
 *
 *  1. Whenever a node meets an incarnation of a peer it has not integrated
 *     with (a new peer, or one that restarted), it sends that incarnation
 *     BOOTING on every port it can send on, again every BOOTING_RETRY_MS,
 *     until each port that reaches the peer has brought an answer (a port
 *     the peer cannot hear us on is answered by way of another).
 *  2. The peer's datapath takes every QP still bound to an older incarnation
 *     of the sender to the error state (the oldest unfinished WQE completes
 *     with a retry error, the rest are flushed), so nothing new is built for
 *     the dead process; then it answers BOOT_ACK on every port of its own,
 *     not only the one the BOOTING came in on.  Each answer queues behind
 *     whatever its port still had to send, and a link delivers in order,
 *     so once it arrives nothing the peer addressed to the old incarnation
 *     is left on that link.  A port whose other direction is broken (a
 *     one-way link: the peer hears us on it, we do not hear the peer) is
 *     answered all the same, by the BOOTING that came in on another port,
 *     to the broadcast MAC if we never learned the sender's MAC there.  A
 *     peer that held nothing for the sender sets SRNIC_F_NAK: "nothing to
 *     forget"; it counts as an answer all the same.
 *  3. With an answer over every port that reaches the peer (a port that
 *     goes down is accounted for: nothing arrives over it), the node lets
 *     the peer's RDMA WRITE and READ in, and tells it so with RDMA_READY,
 *     repeated with the HELLOs for a while in case one is lost.  No port
 *     is accounted for by a timeout: one that reaches us carries answers,
 *     and one that does not is not waited for.
 *
 * SEND and RECV never wait for this: a SEND consumes a receive WQE the new
 * process posted itself.  RDMA that arrives early is dropped and counted
 * (drop not_integrated); the requester's recovery sends it again.  modify_qp
 * to RTR waits, within resolve_ms, until the exchange is done both ways, so
 * programs that connect and write at once do not meet those drops.
 *
 * The exchange is per peer, not per node: a peer that never answers keeps
 * only its own RDMA out, not everyone's.
 */
#include <string.h>

#include "srnic_control.h"

#define BOOTING_RETRY_MS 100
#define READY_BURST 20		/* RDMA_READYs, one each HELLO ... */
#define READY_EVERY_MS 500	/* ... then one this often */

uint8_t srnic_peer_reach(const struct srnic_engine *eng,
			 const struct srnic_peer *peer)
{
	uint8_t mask = 0;
	unsigned p;

	for (p = 0; p < eng->node->nports; p++)
		if (__atomic_load_n(&peer->up[p], __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&eng->node->port[p].polling,
				    __ATOMIC_ACQUIRE))
			mask |= 1u << p;
	return mask;
}

bool srnic_peer_integrated(const struct srnic_peer *peer)
{
	uint32_t inc = __atomic_load_n(&peer->inc, __ATOMIC_ACQUIRE);

	return __atomic_load_n(&peer->ok_inc, __ATOMIC_ACQUIRE) == inc &&
	       __atomic_load_n(&peer->ready_inc, __ATOMIC_ACQUIRE) == inc;
}

/* Control core, peer_lock held: the peer has a new incarnation. */
void srnic_integrate_new_incarnation(struct srnic_peer *peer)
{
	peer->acked_ports = 0;
	peer->booting_at = 0;	/* BOOTING at the next tick */
	peer->ready_sent = 0;
}

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* Control core: op to the peer on port p (srnic_control_send_peer). */
static void send_to(struct srnic_engine *eng, const struct srnic_peer *peer,
		    uint8_t op, unsigned p)
{
	struct srnic_pkt pkt;

	srnic_control_pkt(eng, op, p, &pkt);
	srnic_control_send_peer(eng, peer, &pkt, p);
}

/*
 * Datapath: a peer announces a new incarnation pkt->src_inc.  Fail what is
 * bound to its older ones (srnic_integrate_forget: this process's QPs; in
 * srnicd's node every other process does the same with the BOOTING the
 * poller passes it, dispatch.c), then answer on every port.
 */
int srnic_integrate_forget(struct srnic_engine *eng,
			   const struct srnic_pkt *pkt)
{
	struct srnic_peer *peer = srnic_peer_find(eng, pkt->ipv4);
	unsigned cleared = 0, q;
	uint32_t w;

	/* A BOOTING of a process the peer has had since (late, held up on
	 * the way, or replayed) must not fail what is bound to its current
	 * one. */
	if (peer && srnic_peer_older(peer, pkt->src_inc)) {
		eng->st->drops[SRNIC_DROP_STALE_INC]++;
		return -1;
	}
	for (q = 0; peer && q < SRNIC_MAX_QP; q++) {
		struct srnic_qp *qp = srnic_qp_at(eng, q);

		if (!qp || qp->peer != peer || qp->peer_inc == pkt->src_inc ||
		    qp->q.state < SRNIC_QPS_RTR || qp->q.state == SRNIC_QPS_ERR)
			continue;
		/* The process this QP talked to is gone: what it was sending
		 * ends as it would have after the retries, without waiting
		 * for them.  The oldest not finished fails (one done and
		 * waiting for CQ room keeps its status), and the completer,
		 * on the QP's turn, completes up to it and takes the QP to
		 * the error state.  One with nothing in flight, or a UC QP
		 * (whose failed send would only stop its send queue), goes
		 * there now. */
		for (w = qp->q.sq_comp; w != qp->snd.sq_next; w++)
			if (qp->run[w & qp->q.sq_mask].state != SWQE_DONE)
				break;
		if (w != qp->snd.sq_next) {
			eng->st->retry_exceeded++;
			srnic_swqe_finish(qp, w, SRNIC_WC_RETRY_EXC_ERR);
		}
		if (w != qp->snd.sq_next && srnic_qp_reliable(qp))
			srnic_qp_activate(eng, qp);
		else
			srnic_qp_to_error(eng, qp);
		srnic_qp_fatal_event(qp);
		cleared++;
	}
	eng->st->qps_cleared += cleared;
	return (int)cleared;
}

void srnic_integrate_booting(struct srnic_engine *eng,
			     const struct srnic_pkt *pkt, unsigned p)
{
	struct srnic_peer *peer = srnic_peer_find(eng, pkt->ipv4);
	struct rte_mbuf *m;
	int cleared = srnic_integrate_forget(eng, pkt);
	unsigned q;

	if (cleared < 0)
		return;
	/* On every port, behind everything each has queued: that is the
	 * point.  (As send_to: broadcast where the peer was never heard.) */
	for (q = 0; q < eng->node->nports; q++) {
		const uint8_t *dst = q == p ? pkt->eth_src : bcast;

		if (!__atomic_load_n(&eng->node->port[q].polling,
				     __ATOMIC_ACQUIRE))
			continue;
		if (q != p && peer && __atomic_load_n(&peer->up[q],
						      __ATOMIC_ACQUIRE))
			dst = peer->mac[q];
		m = srnic_control_frame_to(eng, SRNIC_OP_BOOT_ACK, q, dst,
					   pkt->src_inc,
					   cleared ? 0 : SRNIC_F_NAK);
		if (m) {
			srnic_port_tx(eng, q, m);
			eng->st->boot_answers++;
		}
	}
}

/* Control core: BOOT_ACK and RDMA_READY from a peer. */
void srnic_integrate_rx(struct srnic_engine *eng, const struct srnic_pkt *pkt,
			unsigned p)
{
	struct srnic_peer *peer;

	if (pkt->dst_inc != eng->node->inc || p >= eng->node->nports)
		return;		/* meant for an earlier process of ours */
	bool held = srnic_peer_lock(eng->node);
	peer = srnic_peer_find(eng, pkt->ipv4);
	if (peer && pkt->src_inc == peer->inc) {
		if (pkt->opcode == SRNIC_OP_BOOT_ACK) {
			peer->acked_ports |= 1u << p;
			if (pkt->flags & SRNIC_F_NAK)
				eng->st->boot_naks++;
			else
				eng->st->boot_acks++;
		} else if (pkt->opcode == SRNIC_OP_RDMA_READY) {
			__atomic_store_n(&peer->ready_inc, pkt->src_inc,
					 __ATOMIC_RELEASE);
		}
	}
	srnic_peer_unlock(eng->node, held);
}

/* Control core, every tick: drive the exchange with each peer. */
void srnic_integrate_tick(struct srnic_engine *eng, uint64_t now)
{
	unsigned i, p;

	bool held = srnic_peer_lock(eng->node);
	for (i = 0; i < srnic_npeers(eng->node); i++) {
		struct srnic_peer *peer = &eng->node->peer[i];
		uint8_t reach = srnic_peer_reach(eng, peer);

		if (!reach)
			continue;	/* down: asked again when it is back */
		if (peer->ok_inc != peer->inc) {
			if ((reach & ~peer->acked_ports) == 0) {
				__atomic_store_n(&peer->ok_inc, peer->inc,
						 __ATOMIC_RELEASE);
				peer->ready_at = 0;
			} else if (now - peer->booting_at >=
					   BOOTING_RETRY_MS ||
				   !peer->booting_at) {
				/* On every port we can send on, heard on or
				 * not: the peer may hear us where we do not
				 * hear it, and answers on all its ports. */
				peer->booting_at = now;
				for (p = 0; p < eng->node->nports; p++)
					if (__atomic_load_n(
						    &eng->node->port[p].polling,
						    __ATOMIC_ACQUIRE)) {
						send_to(eng, peer,
							SRNIC_OP_BOOTING, p);
						eng->st->booting_sent++;
					}
			}
		}
		if (peer->ok_inc == peer->inc &&
		    now - peer->ready_at >= (peer->ready_sent < READY_BURST
						     ? 50 : READY_EVERY_MS)) {
			peer->ready_at = now;
			peer->ready_sent++;
			for (p = 0; p < eng->node->nports; p++)
				if (reach & (1u << p))
					send_to(eng, peer, SRNIC_OP_RDMA_READY,
						p);
		}
	}
	srnic_peer_unlock(eng->node, held);
}
