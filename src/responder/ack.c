/* SPDX-License-Identifier: MIT */
/*
 * Responder, what it tells the requester (datapath thread): the ACK of
 * every message up to exp_msn with the credit it gives back, at most one
 * NAK (the oldest: the requester resends everything from there on), and a
 * SACK of the packets a message lacks.  They are gathered in qp->rcv and
 * go out in one packet when the scheduler gives the QP its ACK turn.
 */
#include "responder_internal.h"

bool resp_nak(struct srnic_engine *eng, struct srnic_qp *qp, uint8_t syndrome,
	      uint32_t msn, uint32_t txid)
{
	if (!srnic_qp_reliable(qp))
		return false;	/* UC: nobody would act on it */
	/* One NAK travels with each ACK: the oldest one matters (the
	 * requester resends everything from there on). */
	if (qp->rcv.ack_syndrome != SRNIC_ACK_OK &&
	    seq_diff(msn, qp->rcv.ack_nak_msn) > 0) {
		srnic_qp_want_ack(eng, qp);
		return false;
	}
	qp->rcv.ack_syndrome = syndrome;
	qp->rcv.ack_nak_msn = msn;
	qp->rcv.ack_nak_txid = txid;
	qp->rcv.ack_rnr_fifo = 0;	/* (resp_fifo_full says otherwise) */
	srnic_qp_want_ack(eng, qp);
	return true;
}

/*
 * A later message has all its packets while earlier ones still lack some,
 * which were sent before it: those are most likely lost.  Say which (a SACK
 * with the next ACK) for the oldest such message below `below`, so the
 * requester sends them again now: holes in several messages are pointed at
 * one after the other, as later messages come in, not each in its turn at
 * the head of the window.  At most one SACK a message every SACK_GAP_US:
 * packets merely late on the other port cost a few duplicates, never a
 * storm.
 */
#define SACK_GAP_US 500

void resp_maybe_sack(struct srnic_engine *eng, struct srnic_qp *qp,
		     uint32_t below)
{
	uint64_t now = eng->now, gap = eng->tsc_hz / 1000000 * SACK_GAP_US;
	struct srnic_rmsg *s = NULL;
	uint32_t m;

	/* One SACK waits to go out: it goes first (and this call's scan
	 * would be spent for nothing).  UC resends nothing, so a SACK would
	 * only make its ACK go once (see below): its requester reads the msn
	 * alone. */
	if (qp->rcv.sack_due || !srnic_qp_reliable(qp))
		return;
	for (m = qp->rcv.exp_msn; seq_diff(m, below) < 0 &&
			      seq_diff(m, qp->rcv.exp_msn) < SRNIC_WINDOW; m++) {
		s = &qp->rcv.rmsg[m % SRNIC_WINDOW];
		if (s->msn == m && s->state == RMSG_RECEIVING &&
		    !srnic_track_complete(&s->trk) && now - s->sack_tsc >= gap)
			break;
		s = NULL;
	}
	if (s)
		resp_sack_slot(eng, qp, s, now);
}

/* The SACK of what message s lacks goes with the next ACK. */
void resp_sack_slot(struct srnic_engine *eng, struct srnic_qp *qp,
		    struct srnic_rmsg *s, uint64_t now)
{
	uint64_t bits = 0;
	uint32_t first, k;

	first = srnic_track_next(&s->trk, 0, false);
	if (first == s->trk.npkts)
		return;
	for (k = 1; k <= 64 && first + k < s->trk.npkts; k++)
		if (!srnic_track_test(&s->trk, first + k))
			bits |= 1ull << (k - 1);
	s->sack_tsc = now;
	qp->rcv.sack_due = 1;
	qp->rcv.sack_msn = s->msn;
	qp->rcv.sack_first = first;
	qp->rcv.sack_bits = bits;
	eng->st->sacks_sent++;
	srnic_qp_want_ack(eng, qp);
}

void srnic_responder_send_ack(struct srnic_engine *eng, struct srnic_qp *qp)
{
	struct srnic_pkt pkt;
	struct rte_mbuf *m;
	bool with_data;
	int port;

	if (!qp->peer)
		return;
	/* (UC: the next time it goes again, set first: one that cannot go
	 * now, for want of a port or a buffer, is as good as lost) */
	if (qp->q.type == SRNIC_QPT_UC)
		resp_uc_reack_arm(eng, qp);
	/* With a packet of this QP sent in this iteration, or about to be
	 * (datapath.c, ack_ahead): on its port, so that it keeps its place
	 * next to the data. */
	port = srnic_qp_path_now(eng, qp);
	with_data = port >= 0;
	if (!with_data)
		port = srnic_qp_pick_port(eng, qp);
	if (port < 0)
		return;
	srnic_qp_pkt_init(&pkt, eng, qp, SRNIC_OP_ACK, qp->rcv.exp_msn);
	pkt.syndrome = qp->rcv.ack_syndrome;
	pkt.nak_msn = qp->rcv.ack_nak_msn;
	pkt.nak_txid = qp->rcv.ack_nak_txid;
	pkt.rnr_timer = qp->rcv.ack_rnr_fifo ? resp_rnr_timer(qp)
					     : qp->at.min_rnr_timer;
	pkt.credit = srnic_fc_credit(qp, eng->fc_grant);
	/* (UC: its requester counts no landed packets; the credit says
	 * where the program's receive WQEs end instead) */
	if (qp->q.type == SRNIC_QPT_UC)
		pkt.credit = resp_uc_recv_credit(eng, qp);
	/* (RC: where its receive WQEs end, when it has its own: the
	 * requester waits there, srnic_fc_rc_recv_open) */
	else if (!qp->q.srq && qp->xrc != SRNIC_XRC_TGT &&
		 pkt.syndrome == SRNIC_ACK_OK)
		srnic_ack_set_recv_credit(&pkt, qp->rcv.exp_ssn +
							 srnic_rq_posted(qp));
	pkt.ts_echo = qp->rcv.ts_recent;
	qp->rcv.ts_recent = 0;	/* a sample is taken once */
	if (qp->rcv.sack_due) {
		pkt.flags |= SRNIC_F_SACK;
		pkt.sack_msn = qp->rcv.sack_msn;
		pkt.sack_first = qp->rcv.sack_first;
		pkt.sack_bits = qp->rcv.sack_bits;
	}
	m = srnic_pkt_alloc(eng, &pkt, qp->peer->mac[port], port, NULL);
	if (!m)
		return;
	srnic_port_tx(eng, port, m);
	/* A plain ACK goes out twice (on two ports where there are two; both
	 * on the data's port when it rides with some, keeping their place):
	 * a lost ACK would leave a requester whose window is full
	 * waiting a whole timeout, while a second copy costs 70 bytes.  NAKs
	 * and SACKs go once: they make the requester act. */
	if (!qp->rcv.sack_due && qp->rcv.ack_syndrome == SRNIC_ACK_OK) {
		if (!with_data)
			port = srnic_qp_pick_port(eng, qp);
		m = port < 0 ? NULL
			     : srnic_pkt_alloc(eng, &pkt, qp->peer->mac[port],
					       port, NULL);
		if (m)
			srnic_port_tx(eng, port, m);
	}
	if (pkt.syndrome == SRNIC_NAK_RNR)
		eng->st->rnr_naks_sent++;
	qp->rcv.ack_syndrome = SRNIC_ACK_OK;
	qp->rcv.ack_rnr_fifo = 0;
	qp->rcv.sack_due = 0;
	eng->st->acks_sent++;
}
