/* SPDX-License-Identifier: MIT */
/*
 * Responder, completion at both ends, a READ's (datapath thread; seed
 * 002's "completion packet ... delivered to the appropriate side(s) once
 * the data has reached coherence").  A READ whose request carried
 * SRNIC_X_NOTIFY completes here too, but not when its answer leaves: a
 * lost packet is read again, and the program, told, may already have
 * reused the memory.  Its requester says READ_DONE once every byte has
 * landed there; then the READ completes into the QP's receive CQ, and
 * READ_DONE_ACK tells the requester, whose own completion waits for it.
 *
 * The READs told of are kept from their turns, in message order
 * (rd_told); READ_DONEs may come out of order (two ports) and again (a
 * lost READ_DONE_ACK), so each marks its READ, and the READs complete
 * from the oldest while marked: in message order, each once, each
 * answered as it completes.  With the CQ full the oldest waits for room
 * (the QP's turns drain them: srnic_responder_progress).
 */
#include "responder_internal.h"

bool resp_read_told(struct srnic_qp *qp, const struct srnic_rmsg *s)
{
	struct srnic_read_told *t;

	/* (a requester keeps to its max_rd_atomic, at most as many: each
	 * READ it waits for is one here) */
	if (qp->rcv.rd_told_tail - qp->rcv.rd_told_head == SRNIC_MAX_RD_ATOMIC)
		return false;
	t = &qp->rcv.rd_told[qp->rcv.rd_told_tail++ % SRNIC_MAX_RD_ATOMIC];
	t->msn = s->msn;
	t->len = s->msg_len;
	t->va = s->va;
	t->done = 0;
	return true;
}

/* READ_DONE_ACK of READ msn, attempt txid: the target completed it. */
static void answer(struct srnic_engine *eng, struct srnic_qp *qp,
		   uint32_t msn, uint32_t txid)
{
	struct srnic_pkt ack;

	srnic_qp_pkt_init(&ack, eng, qp, SRNIC_OP_READ_DONE_ACK, msn);
	ack.nak_txid = txid;
	srnic_qp_send_header(eng, qp, &ack);
}

void resp_told_drain(struct srnic_engine *eng, struct srnic_qp *qp)
{
	while (qp->rcv.rd_told_head != qp->rcv.rd_told_tail) {
		struct srnic_read_told *t =
			&qp->rcv.rd_told[qp->rcv.rd_told_head %
					 SRNIC_MAX_RD_ATOMIC];

		if (!t->done)
			return;
		if (!resp_target_cqe(qp, SRNIC_WC_TARGET_READ, t->va,
				     t->len)) {
			srnic_qp_cq_full(eng, qp);	/* (drained again when
							 * room is made) */
			return;
		}
		qp->rcv.rd_told_head++;
		answer(eng, qp, t->msn, t->txid);
	}
}

void srnic_responder_read_done(struct srnic_engine *eng, struct srnic_qp *qp,
			       const struct srnic_pkt *pkt)
{
	uint32_t i, head = qp->rcv.rd_told_head;

	if (!srnic_qp_reliable(qp) || qp->q.state < SRNIC_QPS_RTR ||
	    qp->q.state == SRNIC_QPS_ERR) {
		eng->st->drops[SRNIC_DROP_QP_STATE]++;
		return;
	}
	for (i = head; i != qp->rcv.rd_told_tail; i++) {
		struct srnic_read_told *t =
			&qp->rcv.rd_told[i % SRNIC_MAX_RD_ATOMIC];

		if (t->msn == pkt->msn) {
			t->done = 1;
			t->txid = pkt->nak_txid;
			resp_told_drain(eng, qp);
			return;
		}
	}
	/* Not told of now: one completed already, whose answer was lost
	 * (older than every READ still told of, and than the next
	 * message's turn), is answered again; one not come yet is the
	 * requester's error. */
	if (head != qp->rcv.rd_told_tail
		    ? seq_diff(pkt->msn,
			       qp->rcv.rd_told[head % SRNIC_MAX_RD_ATOMIC].msn) >= 0
		    : seq_diff(pkt->msn, qp->rcv.exp_msn) >= 0) {
		eng->st->drops[SRNIC_DROP_MALFORMED]++;
		return;
	}
	answer(eng, qp, pkt->msn, pkt->nak_txid);
}
