/* SPDX-License-Identifier: MIT */
/*
 * Flow control: credits granted by the responder, per QP, in packets.
 *
 * Why credits and not a sender-side window: the responder is the one that
 * knows how much it can take (receive rings, packet buffers), and packets
 * land in any order, so "how far the cumulative ACK got" says little about
 * what is still sitting in the receiver's queues.  Both ends count the same
 * thing: new data packets of the QP (a packet counts once, however often it
 * is sent; resends of lost packets never count again).  The requester
 * counts them as it sends (fc_sent), the responder as they land
 * (fc_landed).  Every ACK carries credit = fc_landed + grant, and the
 * requester sends new packets only while fc_sent is below the last credit
 * it heard.  A packet lost on the way stays "in flight" until its resend
 * lands, which is what a window should do under loss.
 *
 * Recovery (SACK resends, probes, whole-message resends) never waits for
 * credit: it is what brings the next credit.  Should credit stop coming
 * altogether, the requester lends itself a quarter window after one probe
 * interval, so a lost ACK cannot stall it for good; the verbs timeout still
 * ends a QP whose peer is gone.  (UC lends only to a responder silent for
 * SRNIC_UC_GONE_MS: srnic_fc_uc_may_lend.)
 *
 * UC also waits for receive WQEs (srnic_fc_uc_recv_open): RC's RNR NAK
 * makes a SEND that found none go again, but a UC SEND is lost, so the
 * responder's ACKs say how far its program has posted them.  RC's ACKs
 * say it too, and its requester waits for them as well while it has
 * messages in flight (srnic_fc_rc_recv_open): an RNR NAK costs the
 * responder's RNR delay and every message sent behind it.
 */
#ifndef SRNIC_FLOW_H
#define SRNIC_FLOW_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "srnic_qp.h"

/* Packets a QP may have landing at once: what one port's receive queue
 * holds on our af_packet setup (4096 frames), twice a memif ring.  A
 * quarter of it was measured to cost a third of ib_write_bw's throughput
 * at 4 MiB messages on memif: two nodes that share two cores take turns,
 * and the window must cover a whole turn. */
#define SRNIC_FC_WINDOW 4096u
/* The responder sends a credit update (a plain ACK) after this many
 * landed packets even if no message completed: a large message keeps its
 * requester supplied. */
#define SRNIC_FC_UPDATE (SRNIC_FC_WINDOW / 4)

/* Requester: may one more new packet go out? */
static inline bool srnic_fc_open(const struct srnic_qp *qp)
{
	return (int32_t)(qp->snd.fc_sent - qp->snd.fc_credit) < 0;
}

/* Requester: an ACK granted credit up to c (ACKs may arrive out of
 * order: only a newer grant counts).  Returns whether that unblocked us. */
static inline bool srnic_fc_grant(struct srnic_qp *qp, uint32_t c)
{
	if ((int32_t)(c - qp->snd.fc_credit) > 0)
		qp->snd.fc_credit = c;
	if (qp->snd.fc_blocked && srnic_fc_open(qp)) {
		qp->snd.fc_blocked = 0;
		return true;
	}
	return false;
}

/* Requester, connecting: the window before any ACK. */
static inline void srnic_fc_reset(struct srnic_qp *qp)
{
	qp->snd.uc_inflight = 0;
	qp->snd.uc_heard_at = 0;
	memset(qp->snd.uc_pkts, 0, sizeof(qp->snd.uc_pkts));
	qp->snd.fc_sent = 0;
	qp->snd.fc_credit = SRNIC_FC_WINDOW;
	qp->snd.fc_blocked = 0;
	/* (UC: a window's receives before the responder's first word, as a
	 * window's messages; its program posts them before it connects) */
	qp->snd.recv_limit = qp->snd.next_ssn + SRNIC_WINDOW;
	qp->snd.uc_recv_wait = 0;
	qp->snd.rc_recv_wait = 0;
	qp->snd.recv_heard = 0;
	qp->rcv.fc_landed = 0;
	qp->rcv.fc_acked = 0;
}

/* Responder: a new packet landed.  Returns whether a credit update is
 * due: after a quarter window, or half the grant when the grant is small
 * (a requester holding only that much would otherwise wait for a loan). */
static inline bool srnic_fc_landed(struct srnic_qp *qp, uint32_t grant)
{
	uint32_t every = grant / 2 < SRNIC_FC_UPDATE ? grant / 2
						     : SRNIC_FC_UPDATE;

	return ++qp->rcv.fc_landed - qp->rcv.fc_acked >= (every ? every : 1);
}

/* Responder: the credit the next ACK carries. */
static inline uint32_t srnic_fc_credit(struct srnic_qp *qp, uint32_t grant)
{
	qp->rcv.fc_acked = qp->rcv.fc_landed;
	return qp->rcv.fc_landed + grant;
}

/*
 * UC: nothing is resent, so credit, which counts packets that landed,
 * would shrink by every packet lost.  A UC requester counts instead the
 * packets of the messages its responder has not resolved yet (delivered,
 * or given up as lost: every ACK's msn says up to where), at most
 * SRNIC_FC_WINDOW of them, in at most SRNIC_WINDOW messages.
 */
static inline bool srnic_fc_uc_open(const struct srnic_qp *qp)
{
	return qp->snd.uc_inflight < SRNIC_FC_WINDOW;
}

/* May the UC requester begin message msn? */
static inline bool srnic_fc_uc_msg_open(const struct srnic_qp *qp,
					uint32_t msn)
{
	/* (and nothing starts after a SEND with invalidate until it is
	 * resolved: what comes after must find the key gone) */
	return msn - qp->snd.uc_acked < SRNIC_WINDOW &&
	       (!qp->snd.inv_fence ||
		(int32_t)(qp->snd.uc_acked - qp->snd.inv_fence_msn) > 0);
}

static inline void srnic_fc_uc_sent(struct srnic_qp *qp, uint32_t msn)
{
	/* (a message a loan counted as resolved already counts no more) */
	if ((int32_t)(msn - qp->snd.uc_acked) < 0)
		return;
	qp->snd.uc_inflight++;
	qp->snd.uc_pkts[msn % SRNIC_WINDOW]++;
}

/*
 * May the UC requester begin a message that takes a receive WQE (SEND,
 * WRITE with immediate)?  Only one whose receive number is below the
 * credit of the responder's last ACK: the WQEs its program has posted.
 *
 * The window alone let a UC SEND meet an empty receive queue, lost by
 * UC's rules, when the receiving program fell behind its own engine:
 * e2e/14's off-core run (perftest's server, 1024 receives posted, its
 * CQ as deep, pinned to a CPU a busy loop takes 150 ms of every 350)
 * lost SENDs in 2 or 3 runs of 10 on a busy host, steered or not, b's
 * engine finding the CQ full (1024 unpolled) and 0 receives posted for
 * each (drop receiver_not_ready, then uc_given_up); and a SEND given up
 * so is resolved at once, which let the sender's next ones in behind
 * it: 39 to 736 lost in a run.
 */
static inline bool srnic_fc_uc_recv_open(const struct srnic_qp *qp)
{
	return (int32_t)(qp->snd.next_ssn - qp->snd.recv_limit) < 0;
}

/* Nothing the UC requester waited for is short any more: it goes on. */
static inline bool srnic_fc_uc_unblock(struct srnic_qp *qp)
{
	if (!qp->snd.fc_blocked || !srnic_fc_uc_open(qp) ||
	    !srnic_fc_uc_msg_open(qp, qp->snd.next_msn) ||
	    (qp->snd.uc_recv_wait && !srnic_fc_uc_recv_open(qp)))
		return false;
	qp->snd.fc_blocked = 0;
	qp->snd.uc_recv_wait = 0;
	return true;
}

/* An ACK's receive credit: receive WQEs are posted below c, as of the
 * ACK's msn (every message below it resolved).  The first ACK's counts,
 * whatever the window let before it; then an ACK of an older msn,
 * overtaken on another path, does not; one of the same msn or newer
 * does, lower or higher: a UC responder whose program begins to post
 * lowers it (it grants past its receives until then, uc.c), and a
 * higher one held back by a stale copy of the same msn comes again with
 * the responder's next ACK (UC: or its re-sent one, resp_uc_reack_arm). */
static inline void srnic_fc_recv_heard(struct srnic_qp *qp, uint32_t c,
				       uint32_t msn)
{
	if (!qp->snd.recv_heard ||
	    (int32_t)(msn - qp->snd.recv_msn) >= 0) {
		qp->snd.recv_limit = c;
		qp->snd.recv_msn = msn;
		qp->snd.recv_heard = 1;
	}
}

/* A UC ACK's credit (srnic_fc_recv_heard).  Returns whether that
 * unblocked the requester. */
static inline bool srnic_fc_uc_recv_credit(struct srnic_qp *qp, uint32_t c,
					   uint32_t msn)
{
	srnic_fc_recv_heard(qp, c, msn);
	return srnic_fc_uc_unblock(qp);
}

/*
 * RC: may the requester begin a message that takes a receive WQE (SEND,
 * WRITE with immediate)?  Below the receive credit of the responder's
 * last ACK (srnic_ack_recv_credit), as InfiniBand's end-to-end credits
 * have it; past it only once no SEND or WRITE it sent is left
 * unacknowledged (READs and atomics are not waited for: their answers
 * carry no credit, and a long READ would hold the SEND for nothing):
 * then the message goes alone, and its answer (its ACK, with the credit
 * as it is by then, or an RNR NAK) is the responder's word again, so a
 * lost or stale credit costs a round trip, never a stall.  Before any credit
 * (a responder on an SRQ, whose receives are shared, sends none; nor
 * does one older than this) nothing waits.  Resends never wait: an RNR
 * NAK's delay paces them.
 *
 * Without it, ib_send_bw -r 16 (a server that keeps 16 receives posted,
 * its client 128 SENDs in flight) moved 1.19 Gb/s where -r 512 moved
 * 40: 8,857 RNR NAKs and 107,561 packets dropped receiver_not_ready in
 * 3 s, each NAK the responder's RNR delay and every message behind it.
 */
static inline bool srnic_fc_rc_recv_open(const struct srnic_qp *qp)
{
	uint32_t i;

	if (!qp->snd.recv_heard ||
	    (int32_t)(qp->snd.next_ssn - qp->snd.recv_limit) < 0)
		return true;
	/* (past the credit, a rare look: at most a window of WQEs) */
	for (i = qp->q.sq_comp; i != qp->snd.sq_next; i++)
		if (qp->run[i & qp->q.sq_mask].state != SWQE_DONE &&
		    !srnic_wr_reads(qp->q.sq[i & qp->q.sq_mask].opcode))
			return false;
	return true;
}

/* The responder resolved every message below msn.  Returns whether that
 * unblocked the requester. */
static inline bool srnic_fc_uc_acked(struct srnic_qp *qp, uint32_t msn)
{
	if ((int32_t)(msn - qp->snd.next_msn) > 0)
		msn = qp->snd.next_msn;	/* (a loan ran ahead of the ACKs) */
	while ((int32_t)(msn - qp->snd.uc_acked) > 0) {
		uint32_t *n = &qp->snd.uc_pkts[qp->snd.uc_acked++ % SRNIC_WINDOW];

		qp->snd.uc_inflight -= *n < qp->snd.uc_inflight ? *n : qp->snd.uc_inflight;
		*n = 0;
	}
	if (qp->snd.inv_fence && (int32_t)(qp->snd.uc_acked - qp->snd.inv_fence_msn) > 0)
		qp->snd.inv_fence = 0;	/* the invalidation is resolved */
	return srnic_fc_uc_unblock(qp);
}

/*
 * UC: a loan is for ACKs that were lost (a plain ACK goes out twice, so
 * both copies) or a responder that is gone.  To a responder that is only
 * slow it loses messages: its process off its core on a busy host (150 ms
 * and more measured beside busy programs on two CPUs) with the window's
 * packets waiting in its ring, the loan's messages are past the window it
 * keeps, and it gives up the ones before as its sender's (resp_uc_jump).
 * Lending after every silent probe interval lost SENDs so in e2e/14's UC
 * SEND bandwidth runs in CI, and perftest's UC server waited for them for
 * good.  So a UC requester lends only once its responder has said nothing
 * for SRNIC_UC_GONE_MS (since its last ACK, or since the requester first
 * waited), and then after every probe interval, sending into the void as
 * a UC sender whose peer is gone does on a real NIC.  The price: the last
 * ACK lost twice stalls the QP for that long.
 */
#define SRNIC_UC_GONE_MS 1000

static inline bool srnic_fc_uc_may_lend(struct srnic_qp *qp, uint64_t now,
					uint64_t gone_tsc)
{
	if (!qp->snd.uc_heard_at)
		qp->snd.uc_heard_at = qp->snd.fc_blocked_at;
	return now - qp->snd.uc_heard_at >= gone_tsc;
}

/* UC: an ACK came at now, whatever it resolved. */
static inline void srnic_fc_uc_heard(struct srnic_qp *qp, uint64_t now)
{
	qp->snd.uc_heard_at = now;
}

/* UC, no word from the responder for SRNIC_UC_GONE_MS: lend what the
 * requester is short of.  Packets: a quarter window of them, without
 * calling any message resolved (one large message may be all there is);
 * receive WQEs: a quarter window of them; messages: the oldest quarter
 * window of them.  (The caller unblocks the requester.) */
static inline void srnic_fc_uc_lend(struct srnic_qp *qp)
{
	if (!srnic_fc_uc_open(qp)) {
		qp->snd.uc_inflight -= SRNIC_FC_WINDOW / 4;
		return;
	}
	if (qp->snd.uc_recv_wait) {
		qp->snd.uc_recv_wait = 0;
		if (!srnic_fc_uc_recv_open(qp))
			qp->snd.recv_limit = qp->snd.next_ssn +
						SRNIC_WINDOW / 4;
		if (srnic_fc_uc_msg_open(qp, qp->snd.next_msn))
			return;
	}
	srnic_fc_uc_acked(qp, qp->snd.uc_acked + SRNIC_WINDOW / 4);
}

#endif
