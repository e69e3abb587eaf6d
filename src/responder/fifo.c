/* SPDX-License-Identifier: MIT */
/*
 * Half-RDMA's receiving half (seed 002 l.262-310; docs/half-rdma.md): a
 * WRITE packet whose key is a FIFO's is not placed at its address but
 * appended to the FIFO's ring as a record (src/mem/fifo_ring.c), a
 * header saying where it came from and where it sat in its message, then
 * its bytes; the header's valid word goes last, so the program, reading
 * it, finds the rest there.
 * A packet the ring has no room for is dropped and counted (fifo_full),
 * not marked as landed: the requester's SACK or probe brings it again
 * once the program has made room.  The message's bitmap keeps a packet
 * from being appended twice.
 *
 * A FIFO that takes READs (seed l. 304-310, the half-receive READ) gets
 * each READ to its key as a request record for its program, which
 * answers from wherever its bytes are (srnic_fifo_read_reply): the answer
 * is built and sent in the program's engine call, no job and no copy
 * kept.  A part of it asked for again comes as a request again (a READ is
 * idempotent: so must the program's answer be).  Datapath only.
 */
#include <errno.h>
#include <string.h>

#include "responder_internal.h"

/* Packets of an answer one engine call sends at most (1 MiB at 4 KiB). */
#define ANSWER_BURST 256

enum resp_placed resp_fifo_append(struct srnic_engine *eng,
				  struct srnic_qp *qp,
				  const struct srnic_pkt *pkt)
{
	const struct srnic_fifo_hdr h = {
		.valid = SRNIC_FIFO_VALID, .pkt_len = pkt->pkt_len,
		.qp_num = qp->q.qpn, .src_qp = pkt->src_qpn, .msn = pkt->msn,
		.msg_len = pkt->msg_len, .msg_off = pkt->msg_off};

	switch (srnic_fifo_put(&eng->mem, pkt->rkey, &h, pkt->payload)) {
	case 0:
		qp->rcv.fifo_rnr_streak = 0;	/* (room again) */
		return RESP_PLACED;
	case -ENOSPC:
		return RESP_FIFO_FULL;
	default:
		srnic_page_fault(eng, pkt->rkey);	/* (a ring gone) */
		return RESP_REFUSED;
	}
}

/*
 * A WRITE's packet the ring had no room for: an RC requester hears it as
 * an RNR NAK, as it would a SEND that found no receive WQE.  The program
 * has not made room yet, which is no loss: the requester waits the QP's
 * RNR time and sends the message again, spending RNR retries (rnr_retry
 * 7: for ever), not transport retries.  Dropped unsaid, the packet was
 * asked for again by SACKs and timeouts alone, and a sink kept off its
 * CPU for longer than seven timeouts failed its senders' WRITEs with
 * IBV_WC_RETRY_EXC_ERR (e2e/39 in CI: four nodes' programs on two CPUs,
 * 40,278 fifo_full).  UC resends nothing, and hears no NAK (resp_nak).
 *
 * Each NAK in a row (one an attempt; nothing of the QP's went in since)
 * asks for twice the wait of the last, from the QP's min_rnr_timer up to
 * 15 ms (resp_rnr_timer): the requester sends every message from the
 * refused one on again after the wait, which meets the ring full as long
 * as the program takes nothing, and at the fixed 0.64 ms of perftest's
 * and meet.h's min_rnr_timer, three senders stalled 3 s by their sink
 * (e2e/39's stall) had 695,840 packets dropped on the full ring.
 */
void resp_fifo_full(struct srnic_engine *eng, struct srnic_qp *qp,
		    const struct srnic_pkt *pkt)
{
	/* (a third-party data source is no requester that would wait: the
	 * controller hears of the missing packets by SACK, as before) */
	if (!srnic_qp_reliable(qp) || (pkt->flags & SRNIC_F_THIRD_PARTY))
		return;
	/* One NAK an attempt: the rest of its packets in flight meet the
	 * full ring too, and each NAK would spend one of the requester's
	 * RNR retries and double the wait again. */
	if (qp->rcv.fifo_naked && qp->rcv.fifo_nak_msn == pkt->msn &&
	    qp->rcv.fifo_nak_txid == pkt->txid)
		return;
	qp->rcv.fifo_naked = 1;
	qp->rcv.fifo_nak_msn = pkt->msn;
	qp->rcv.fifo_nak_txid = pkt->txid;
	/* (an older message's NAK waiting to go wins: the requester sends
	 * this one again after that one) */
	if (!resp_nak(eng, qp, SRNIC_NAK_RNR, pkt->msn, pkt->txid))
		return;
	qp->rcv.ack_rnr_fifo = 1;
	if (qp->rcv.fifo_rnr_streak < UINT8_MAX)
		qp->rcv.fifo_rnr_streak++;
}

bool resp_fifo_reads(const struct srnic_engine *eng, const struct srnic_qp *qp,
		     uint32_t key, uint32_t pd)
{
	return (qp->access & SRNIC_ACCESS_REMOTE_READ) &&
	       srnic_mem_check(&eng->mem, key, pd, 0, 0,
			       SRNIC_ACCESS_REMOTE_READ) == SRNIC_MEM_FIFO;
}

/* The request [off, end) of READ msn, attempt txid, that the program
 * was asked and has not answered, if any. */
static struct srnic_fifo_asked *asked(struct srnic_qp *qp, uint32_t msn,
				      uint32_t txid, uint32_t off,
				      uint32_t end)
{
	unsigned i;

	for (i = 0; i < SRNIC_MAX_RD_ATOMIC; i++) {
		struct srnic_fifo_asked *k = &qp->rcv.fifo_asked[i];

		if (k->live && k->msn == msn && k->txid == txid &&
		    k->off <= off && end <= k->end)
			return k;
	}
	return NULL;
}

void resp_fifo_read_request(struct srnic_engine *eng, struct srnic_qp *qp,
			    uint32_t key,
			    uint32_t msn, uint32_t msg_len, uint64_t va,
			    uint32_t txid, uint8_t shift, uint32_t off,
			    uint32_t end)
{
	const struct srnic_fifo_hdr h = {
		.valid = SRNIC_FIFO_VALID_READ_REQ,
		.pkt_len = sizeof(struct srnic_fifo_req), .qp_num = qp->q.qpn,
		.src_qp = qp->at.dest_qpn, .msn = msn, .msg_len = msg_len,
		.msg_off = off};
	const struct srnic_fifo_req r = {.va = va, .length = end - off,
					 .txid = txid, .shift = shift};
	struct srnic_fifo_asked *k;

	/* (a requester's probe asks again for what has not come: while the
	 * program has the question, a copy would only make it answer
	 * twice, and the reader hears that the program is not ready, as
	 * from a full ring below: it waits on, spending no transport retry
	 * (completer.c, read_waits); once the program has answered, a loss
	 * is asked for again) */
	if (asked(qp, msn, txid, off, end)) {
		eng->st->drops[SRNIC_DROP_DUPLICATE]++;
		resp_nak(eng, qp, SRNIC_NAK_RNR, msn, txid);
		return;
	}
	switch (srnic_fifo_put(&eng->mem, key, &h, &r)) {
	case 0:
		eng->st->fifo_read_reqs++;
		k = &qp->rcv.fifo_asked[qp->rcv.fifo_asked_next++ %
					SRNIC_MAX_RD_ATOMIC];
		*k = (struct srnic_fifo_asked){.msn = msn, .txid = txid,
					       .off = off, .end = end,
					       .live = 1};
		break;
	case -ENOSPC:
		eng->st->drops[SRNIC_DROP_FIFO_FULL]++;
		resp_nak(eng, qp, SRNIC_NAK_RNR, msn, txid);
		break;
	default:
		srnic_page_fault(eng, key);
		break;
	}
}

/* n bytes of the iovec from byte off into to; false when a piece of it
 * is not there (a program's bad pointer fails its answer, not the
 * datapath: the guarded copy). */
static bool iov_gather(const struct iovec *iov, int iovcnt, uint64_t off,
		       uint8_t *to, uint32_t n)
{
	int i;

	for (i = 0; i < iovcnt && n; i++) {
		uint64_t take;

		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		take = iov[i].iov_len - off < n ? iov[i].iov_len - off : n;
		if (!srnic_guard_copy(to, (const uint8_t *)iov[i].iov_base + off,
				      take))
			return false;
		to += take;
		n -= (uint32_t)take;
		off = 0;
	}
	return true;
}

/* Where a request's QP may answer: as the responder takes READs. */
static bool answers(const struct srnic_qp *qp)
{
	uint32_t st = qp->q.state;

	return qp->q.type == SRNIC_QPT_RC &&
	       (st == SRNIC_QPS_RTR || st == SRNIC_QPS_RTS ||
		st == SRNIC_QPS_SQD || st == SRNIC_QPS_SQE);
}

int srnic_responder_fifo_answer(struct srnic_engine *eng, uint32_t qpn,
				const struct srnic_fifo_answer *a)
{
	struct srnic_qp *qp = eng->qp_tab[srnic_qpn_index(qpn)];
	struct srnic_fifo_asked *k;
	uint32_t sent = 0, n = 0;

	if (!qp || qp->q.qpn != qpn || !answers(qp) ||
	    qp->at.dest_qpn != a->src_qp)
		return -ENOENT;
	/* (what the record said is in the program's memory: checked as a
	 * packet's would be, the answer a whole number of packets in, from
	 * a FIFO of the QP's PD that takes READs) */
	if (a->shift < SRNIC_MIN_STRIDE_SHIFT || a->shift > SRNIC_MAX_STRIDE_SHIFT ||
	    (1u << a->shift) > eng->payload_max || a->msg_off > a->msg_len ||
	    a->len > a->msg_len - a->msg_off ||
	    a->msg_off & ((1u << a->shift) - 1) ||
	    srnic_mem_check(&eng->mem, a->key, qp->pd, 0, 0,
			    SRNIC_ACCESS_REMOTE_READ) != SRNIC_MEM_FIFO)
		return -EINVAL;
	if (srnic_guard_enable())
		return -ENOMEM;
	k = asked(qp, a->msn, a->txid, a->msg_off, a->msg_off + a->len);
	if (k)
		k->live = 0;	/* (answered: a loss may be asked for now) */
	/* (a READ of no bytes is answered by one empty packet, as a job
	 * answers it; a long answer goes in bursts, the provider calling
	 * again, so that the datapath's other work runs between) */
	do {
		int port = srnic_qp_pick_port(eng, qp);
		uint32_t left = a->len - sent, off = a->msg_off + sent;
		struct srnic_pkt pkt;
		struct rte_mbuf *m;
		uint8_t *payload;

		/* (every port's buffer full: out with them, once) */
		if (port < 0 && srnic_ports_flush(eng))
			port = srnic_qp_pick_port(eng, qp);
		if (port < 0)
			break;	/* (the wire's full: the provider calls again) */
		srnic_qp_pkt_init(&pkt, eng, qp, SRNIC_OP_READ_RESP, a->msn);
		pkt.txid = a->txid;
		pkt.msg_off = off;
		pkt.msg_len = a->msg_len;
		pkt.stride_shift = a->shift;
		pkt.pkt_len = left < (1u << a->shift) ? left : (1u << a->shift);
		if (off + pkt.pkt_len == a->msg_len)
			pkt.flags |= SRNIC_F_LAST;
		m = srnic_pkt_alloc(eng, &pkt, qp->peer->mac[port],
				    (unsigned)port, &payload);
		if (!m)
			break;
		if (!iov_gather(a->iov, a->iovcnt, a->iov_off + sent, payload,
				pkt.pkt_len)) {
			rte_pktmbuf_free(m);
			return -EFAULT;
		}
		srnic_port_tx(eng, (unsigned)port, m);
		sent += pkt.pkt_len;
		n++;
	} while (sent < a->len && n < ANSWER_BURST);
	if (!n)
		return -EAGAIN;
	if (sent == a->len)
		eng->st->fifo_answers++;
	return (int)sent;
}
