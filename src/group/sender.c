/* SPDX-License-Identifier: MIT */
/*
 * The sender of a multicast RDMA WRITE: requester and completer of a UD
 * QP's SRNIC_WR_MC_WRITE, on the datapath.
 *
 * A message goes to the members its WQE found when it started: the nodes
 * whose HELLOs say they hold a region for the group and that a port
 * reaches.  Each new packet goes once, to the group's Ethernet address;
 * each member answers by unicast with the first packet it lacks and which
 * of the 64 after it it lacks, and what a member lacks goes again to that
 * member alone.  New packets stay within SRNIC_GROUP_WINDOW of the slowest
 * member's first missing one (what an ACK describes whole), and the WQE
 * completes once every member has the whole message: with an error if any
 * member failed (silent through SRNIC_GROUP_RETRIES timeouts, restarted,
 * or refusing the offset), naming them for srnic_mc_failed.  One message
 * of a QP is in flight at a time; the requester sends the QP's datagrams
 * around it and the completer completes them in order behind it.
 */
#include <string.h>

#include "srnic_group.h"
#include "srnic_port.h"
#include "srnic_sched.h"
#include "srnic_sge.h"

/* A hole (a missing packet with later ones landed) is resent once it has
 * stayed one this long: until then it may only be late, as packets of one
 * message take every port and each port is read a burst at a time. */
#define REPAIR_US 2000
/* The first timeout; each retry doubles it, up to 2^RTO_MAX_SHIFT times. */
#define RTO_US 4000
#define RTO_MAX_SHIFT 6
/* A member forgets a sender silent for SRNIC_GROUP_FORGET_MS: by then the
 * sender has given it up (its timeouts, summed over the retries, with a
 * margin of 2), or it had everything the sender sent. */
_Static_assert(SRNIC_GROUP_FORGET_MS * 1000ull >
		       2ull * RTO_US * ((2u << RTO_MAX_SHIFT) - 1) &&
	       SRNIC_GROUP_RETRIES <= RTO_MAX_SHIFT + 1,
	       "a member may forget a sender that still retries");

static const struct srnic_peer *peer_of(const struct srnic_engine *eng,
					const struct srnic_group_member *mb)
{
	return &eng->node->peer[mb->peer];
}

/* The packet size: the largest power of two a frame carries. */
static uint8_t stride_shift(const struct srnic_engine *eng)
{
	uint8_t s = SRNIC_MAX_STRIDE_SHIFT;

	while (s > SRNIC_MIN_STRIDE_SHIFT && (1u << s) > eng->payload_max)
		s--;
	return s;
}

/* Every packet up to which the slowest member leaves room for. */
static uint32_t window_end(const struct srnic_group_send *gs)
{
	uint32_t end = gs->npkts, i;

	for (i = 0; i < gs->nmembers; i++)
		if (gs->m[i].state == GM_WAITING &&
		    gs->m[i].first + SRNIC_GROUP_WINDOW < end)
			end = gs->m[i].first + SRNIC_GROUP_WINDOW;
	return end;
}

/* Packet i of the message in flight, to mac on port: 1 sent, 0 no buffer,
 * -1 its memory failed the check (the WQE fails). */
static int send_pkt(struct srnic_engine *eng, const struct srnic_qp *qp,
		    const struct srnic_group_send *gs, uint32_t i,
		    const uint8_t mac[6], int port, uint32_t dst_inc,
		    uint16_t flags)
{
	const struct srnic_swqe *w = &qp->q.sq[gs->idx & qp->q.sq_mask];
	uint32_t off = i << gs->shift, stride = 1u << gs->shift;
	struct srnic_pkt pkt;
	struct rte_mbuf *m;
	uint8_t *payload;

	memset(&pkt, 0, sizeof(pkt));
	pkt.opcode = SRNIC_OP_WRITE;
	pkt.flags = SRNIC_F_GROUP | flags;
	pkt.dst_qpn = SRNIC_QPN_MCAST;
	pkt.src_qpn = qp->q.qpn;
	pkt.src_inc = eng->node->inc;
	pkt.dst_inc = dst_inc;
	pkt.msn = gs->msn;
	pkt.txid = gs->txid;
	pkt.rkey = gs->rkey;
	pkt.va = w->remote_addr + off;
	pkt.msg_off = off;
	pkt.msg_len = w->length;
	pkt.pkt_len = w->length - off < stride ? w->length - off : stride;
	if (off + pkt.pkt_len == w->length)
		pkt.flags |= SRNIC_F_LAST;
	pkt.stride_shift = gs->shift;
	pkt.ts = eng->now_ts16;
	m = srnic_pkt_alloc(eng, &pkt, mac, (unsigned)port, &payload);
	if (!m)
		return 0;
	if (pkt.pkt_len &&
	    srnic_sge_gather(&eng->mem, qp->pd, w->sge, w->num_sge, off,
			     payload, pkt.pkt_len)) {
		rte_pktmbuf_free(m);
		return -1;
	}
	srnic_port_tx(eng, (unsigned)port, m);
	eng->st->mc_bytes += pkt.pkt_len;
	return 1;
}

/* The port for the next multicast packet: one every waiting member hears
 * on, in the stripe's rotation; else any live one (those who do not hear
 * it there get it as a repair). */
static int group_port(struct srnic_engine *eng, struct srnic_group_send *gs)
{
	uint32_t i, k;

	for (i = 0; i < eng->stripe_len; i++) {
		unsigned p = eng->stripe[gs->rr++ % eng->stripe_len];
		bool all = __atomic_load_n(&eng->node->port[p].polling,
					   __ATOMIC_RELAXED) &&
			   !srnic_port_backlogged(eng, p);

		for (k = 0; all && k < gs->nmembers; k++)
			all = gs->m[k].state != GM_WAITING ||
			      __atomic_load_n(&peer_of(eng, &gs->m[k])->up[p],
					      __ATOMIC_RELAXED);
		if (all)
			return (int)p;
	}
	return srnic_stripe_pick(eng, NULL, &gs->rr);
}

/* The QP's message in flight, if it still is: a flush (the error state,
 * a reset) completes its WQE behind the sender's back. */
static struct srnic_group_send *in_flight(struct srnic_qp *qp)
{
	struct srnic_group_send *gs = qp->gsend;

	if (!gs || !gs->active)
		return NULL;
	if (gs->idx - qp->q.sq_comp >= qp->snd.sq_next - qp->q.sq_comp ||
	    qp->run[gs->idx & qp->q.sq_mask].state == SWQE_DONE) {
		gs->active = 0;
		return NULL;
	}
	return gs;
}

static void member_fail(struct srnic_engine *eng, struct srnic_group_member *mb,
			uint8_t status)
{
	mb->state = GM_FAILED;
	mb->status = status;
	mb->repair = 0;
	eng->st->mc_member_failed++;
}

/* Every member answered for good: the WQE is done, with the first failed
 * member's status if any failed (srnic_mc_failed names them all). */
static void maybe_finish(struct srnic_engine *eng, struct srnic_qp *qp,
			 struct srnic_group_send *gs)
{
	uint8_t status = SRNIC_WC_SUCCESS;
	uint32_t i, nfailed = 0;

	for (i = 0; i < gs->nmembers; i++)
		if (gs->m[i].state == GM_WAITING)
			return;
	for (i = 0; i < gs->nmembers; i++) {
		const struct srnic_group_member *mb = &gs->m[i];

		if (mb->state != GM_FAILED)
			continue;
		if (status == SRNIC_WC_SUCCESS)
			status = mb->status;
		gs->failed_ipv4[nfailed] = peer_of(eng, mb)->ipv4;
		gs->failed_status[nfailed++] = mb->status;
	}
	if (nfailed) {
		gs->failed_wr_id = qp->q.sq[gs->idx & qp->q.sq_mask].wr_id;
		/* (published with the completion, which the program polls
		 * before it asks) */
		__atomic_store_n(&gs->nfailed, nfailed, __ATOMIC_RELEASE);
	}
	gs->active = 0;
	eng->st->mc_writes++;
	srnic_swqe_finish(qp, gs->idx, status);
	srnic_qp_activate(eng, qp);
}

/* The members of group g now: peers that hold a region for it, that a
 * port reaches, whose incarnation we know. */
static void snapshot_members(struct srnic_engine *eng,
			     struct srnic_group_send *gs, uint64_t now)
{
	unsigned n = srnic_npeers(eng->node), i;

	gs->nmembers = 0;
	for (i = 0; i < n && i < SRNIC_MAX_PEERS; i++) {
		const struct srnic_peer *peer = &eng->node->peer[i];
		struct srnic_group_member *mb = &gs->m[gs->nmembers];
		uint32_t inc = __atomic_load_n(&peer->inc, __ATOMIC_ACQUIRE);

		if (!inc || !((__atomic_load_n(&peer->groups, __ATOMIC_ACQUIRE) >>
			       gs->group) & 1) ||
		    !srnic_stripe_reachable(eng, peer))
			continue;
		memset(mb, 0, sizeof(*mb));
		mb->peer = (uint16_t)i;
		mb->inc = inc;
		mb->state = GM_WAITING;
		mb->missing = ~0ull;	/* nothing heard: all of it */
		mb->rr = i;
		mb->deadline = now + gs->rto;
		gs->nmembers++;
	}
}

/* Start the multicast WRITE at the head of the send queue, if that is
 * one and none is in flight.  True when one started. */
static bool start(struct srnic_engine *eng, struct srnic_qp *qp)
{
	uint32_t prod = __atomic_load_n(&qp->q.sq_prod, __ATOMIC_ACQUIRE);
	struct srnic_group_send *gs = qp->gsend;
	const struct srnic_swqe *w;
	struct srnic_swqe_run *run;
	uint64_t now = srnic_now();
	uint8_t fail = SRNIC_WC_SUCCESS;
	uint32_t idx, i;

	if (qp->q.state != SRNIC_QPS_RTS || qp->snd.sq_stopped ||
	    qp->snd.sq_next == prod ||
	    qp->snd.sq_next - qp->q.sq_comp >= SRNIC_WINDOW)
		return false;
	w = &qp->q.sq[qp->snd.sq_next & qp->q.sq_mask];
	if (w->opcode != SRNIC_WR_MC_WRITE || in_flight(qp))
		return false;
	idx = qp->snd.sq_next++;
	run = &qp->run[idx & qp->q.sq_mask];
	memset(run, 0, offsetof(struct srnic_swqe_run, rd));
	if (!gs) {
		/* (once a QP: the allocation is a message's, not a
		 * packet's) */
		gs = qp->gsend = srnic_zalloc(sizeof(*gs));
		if (!gs) {
			srnic_swqe_finish(qp, idx, SRNIC_WC_GENERAL_ERR);
			return true;
		}
	}
	/* The provider checked the group and the range; the memory is
	 * checked here, as the requester checks a message's. */
	for (i = 0; i < w->num_sge && fail == SRNIC_WC_SUCCESS; i++)
		if (w->sge[i].length &&
		    srnic_mem_check(&eng->mem, w->sge[i].lkey, qp->pd,
				    w->sge[i].addr, w->sge[i].length, 0))
			fail = SRNIC_WC_LOC_PROT_ERR;
	if (w->rkey >= SRNIC_MAX_GROUPS ||
	    w->remote_addr + w->length < w->remote_addr)
		fail = SRNIC_WC_REM_INV_REQ_ERR;
	if (fail != SRNIC_WC_SUCCESS) {
		srnic_swqe_finish(qp, idx, fail);
		return true;
	}
	gs->active = 1;
	gs->blocked = 0;
	gs->idx = idx;
	gs->group = (uint8_t)w->rkey;
	gs->rkey = srnic_group_rkey(eng, gs->group, eng->node->inc);
	/* (numbered by the process, not the QP: a QP made again with the
	 * same number goes on from where its members are, and a member never
	 * takes its first message for an old one) */
	gs->msn = ++eng->group_msn;
	gs->txid++;
	gs->shift = stride_shift(eng);
	gs->npkts = srnic_track_npkts(w->length, gs->shift);
	gs->next = 0;
	gs->rto = RTO_US * eng->tsc_per_us;
	run->msn = gs->msn;
	run->state = SWQE_SENDING;
	snapshot_members(eng, gs, now);
	srnic_qp_timer_on(eng, qp);
	maybe_finish(eng, qp, gs);	/* (a group nobody holds: done) */
	return true;
}

/* What member mb's last ACK or timeout asked for: its missing packets
 * from resent_to up to repair_to (packets beyond its ACK's view count as
 * missing), to it alone.  Returns packets sent. */
static unsigned repair(struct srnic_engine *eng, struct srnic_qp *qp,
		       struct srnic_group_send *gs,
		       struct srnic_group_member *mb, unsigned budget)
{
	const struct srnic_peer *peer = peer_of(eng, mb);
	uint32_t i = mb->resent_to > mb->first ? mb->resent_to : mb->first;
	uint32_t end = mb->repair_to < gs->next ? mb->repair_to : gs->next;
	unsigned n = 0;

	for (; i < end && n < budget; i++) {
		uint32_t d = i - mb->first - 1;
		int port, rc;

		if (i != mb->first && d < 64 && !((mb->missing >> d) & 1))
			continue;	/* it has that one */
		port = srnic_stripe_pick(eng, peer, &mb->rr);
		if (port < 0)
			break;
		/* (the first one asks for an answer at once) */
		rc = send_pkt(eng, qp, gs, i, peer->mac[port], port, mb->inc,
			      n == 0 ? SRNIC_F_PROBE : 0);
		if (rc <= 0) {
			if (rc < 0)
				member_fail(eng, mb, SRNIC_WC_LOC_PROT_ERR);
			break;
		}
		n++;
		eng->st->mc_repairs++;
	}
	mb->resent_to = i;
	if (i >= end)
		mb->repair = 0;
	return n;
}

unsigned srnic_group_send_run(struct srnic_engine *eng, struct srnic_qp *qp,
			      unsigned budget)
{
	struct srnic_group_send *gs;
	unsigned n = 0;
	uint32_t i, end;
	uint8_t mac[6];

	if (qp->q.state != SRNIC_QPS_RTS && qp->q.state != SRNIC_QPS_SQD)
		return 0;
	if (!in_flight(qp) && !start(eng, qp))
		return 0;
	gs = in_flight(qp);
	if (!gs)
		return 0;
	for (i = 0; i < gs->nmembers && n < budget; i++)
		if (gs->m[i].state == GM_WAITING && gs->m[i].repair)
			n += repair(eng, qp, gs, &gs->m[i], budget - n);
	srnic_group_mac(gs->group, mac);
	end = window_end(gs);
	while (n < budget && gs->next < gs->npkts) {
		int port, rc;

		if (gs->next >= end) {
			gs->blocked = 1;	/* an ACK opens it again */
			break;
		}
		port = group_port(eng, gs);
		if (port < 0)
			break;	/* no port now: the timers decide */
		rc = send_pkt(eng, qp, gs, gs->next, mac, port, 0, 0);
		if (rc < 0) {
			for (i = 0; i < gs->nmembers; i++)
				if (gs->m[i].state == GM_WAITING)
					member_fail(eng, &gs->m[i],
						    SRNIC_WC_LOC_PROT_ERR);
			break;
		}
		if (rc == 0)
			break;
		gs->next++;
		n++;
		eng->st->mc_packets++;
	}
	if (gs->next == gs->npkts)
		qp->run[gs->idx & qp->q.sq_mask].state = SWQE_WAITING;
	maybe_finish(eng, qp, gs);
	return n;
}

/* What mb's last ACK says has landed past its first missing packet: a
 * hole, timed from when it was first seen (srnic_group_timers resends it
 * once it has lasted REPAIR_US). */
static void note_hole(const struct srnic_group_send *gs,
		      struct srnic_group_member *mb)
{
	uint32_t seen = gs->next > mb->first + 1 ? gs->next - mb->first - 1 : 0;
	uint64_t landed = ~mb->missing &
			  (seen >= 64 ? ~0ull : (1ull << seen) - 1);

	if (!landed) {
		mb->hole_at = 0;
		return;
	}
	mb->landed_hi = mb->first + 1 + 64 - (uint32_t)__builtin_clzll(landed);
	if (!mb->hole_at)
		mb->hole_at = srnic_now();
}

static struct srnic_group_member *member_by_inc(struct srnic_group_send *gs,
						uint32_t inc)
{
	uint32_t i;

	for (i = 0; i < gs->nmembers; i++)
		if (gs->m[i].inc == inc && gs->m[i].state == GM_WAITING)
			return &gs->m[i];
	return NULL;
}

void srnic_group_ack(struct srnic_engine *eng, struct srnic_qp *qp,
		     const struct srnic_pkt *pkt)
{
	struct srnic_group_send *gs = in_flight(qp);
	struct srnic_group_member *mb;
	uint32_t first;

	if (!gs || pkt->msn != gs->msn ||
	    !(mb = member_by_inc(gs, pkt->src_inc))) {
		eng->st->drops[SRNIC_DROP_DUPLICATE]++;	/* late */
		return;
	}
	if (pkt->syndrome != SRNIC_ACK_OK) {
		member_fail(eng, mb, pkt->syndrome == SRNIC_NAK_ACCESS
					     ? SRNIC_WC_REM_ACCESS_ERR
					     : SRNIC_WC_REM_OP_ERR);
	} else if (!(pkt->flags & SRNIC_F_SACK)) {
		mb->state = GM_DONE;
	} else {
		first = pkt->sack_first < gs->npkts ? pkt->sack_first
						    : gs->npkts;
		if (first < mb->first)
			return;	/* older than one we had */
		if (first > mb->first) {
			mb->retries = 0;
			mb->deadline = srnic_now() + gs->rto;
			mb->hole_at = 0;	/* (a new first missing one) */
		}
		mb->first = first;
		mb->missing = pkt->sack_bits;
		note_hole(gs, mb);
	}
	if (gs->blocked && window_end(gs) > gs->next)
		gs->blocked = 0;
	srnic_qp_activate(eng, qp);
	maybe_finish(eng, qp, gs);
}

void srnic_group_timers(struct srnic_engine *eng, struct srnic_qp *qp,
			uint64_t now)
{
	struct srnic_group_send *gs = in_flight(qp);
	bool kick = false;
	uint32_t i;

	if (!gs)
		return;
	for (i = 0; i < gs->nmembers; i++) {
		struct srnic_group_member *mb = &gs->m[i];

		if (mb->state != GM_WAITING)
			continue;
		if (__atomic_load_n(&peer_of(eng, mb)->inc, __ATOMIC_ACQUIRE) !=
		    mb->inc) {
			/* It restarted: what it had is gone with it. */
			member_fail(eng, mb, SRNIC_WC_RETRY_EXC_ERR);
			continue;
		}
		if (mb->hole_at && now - mb->hole_at >= REPAIR_US * eng->tsc_per_us) {
			/* A hole that lasted: what it lacks below the last
			 * packet it has goes again (and again each REPAIR_US
			 * it still lacks it). */
			mb->resent_to = mb->first;
			mb->repair_to = mb->landed_hi;
			mb->repair = 1;
			mb->hole_at = now;
			kick = true;
		}
		if (mb->first >= gs->next) {
			/* It has all that went out: nothing to time. */
			mb->deadline = now + gs->rto;
			continue;
		}
		if (now < mb->deadline)
			continue;
		if (++mb->retries > SRNIC_GROUP_RETRIES) {
			member_fail(eng, mb, SRNIC_WC_RETRY_EXC_ERR);
			continue;
		}
		/* Silent: what its last ACK said it lacks goes again (past
		 * what an ACK describes, the answer to the first, a probe,
		 * tells). */
		mb->resent_to = mb->first;
		mb->repair_to = mb->first + 65 < gs->next ? mb->first + 65
							  : gs->next;
		mb->repair = 1;
		mb->deadline = now + (gs->rto << (mb->retries < RTO_MAX_SHIFT
							 ? mb->retries
							 : RTO_MAX_SHIFT));
		kick = true;
	}
	if (gs->blocked && window_end(gs) > gs->next) {
		gs->blocked = 0;
		kick = true;
	}
	if (kick)
		srnic_qp_activate(eng, qp);
	maybe_finish(eng, qp, gs);
}

void srnic_group_send_free(struct srnic_qp *qp)
{
	srnic_free(qp->gsend);
	qp->gsend = NULL;
}
