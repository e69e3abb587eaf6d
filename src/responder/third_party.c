/* SPDX-License-Identifier: MIT */
/*
 * Responder, a data source's side of third-party RDMA (datapath thread;
 * docs/third-party.md).  A controller's TP_READ_REQ on its QP to this
 * node asks for a READ whose answer goes to a third node: a job as a
 * READ's (read.c answers it), whose packets are WRITEs to the target, as
 * message msn of the controller's QP there.  The request is no message of
 * the QP it came on: it is checked and taken at once, in any order, and
 * asked again as often as the controller needs (a READ is idempotent).
 */
#include "responder_internal.h"

/* What a job of request pkt says of its controller and target. */
static void tp_job_fill(struct srnic_read_job *j, const struct srnic_pkt *pkt)
{
	j->tp = 1;
	j->tp_probe = !!(pkt->flags & SRNIC_F_PROBE);
	j->tp_ipv4 = pkt->tp_ipv4;
	j->tp_inc = pkt->tp_inc;
	j->tp_qpn = pkt->tp_qpn;
	j->tp_ctl_inc = pkt->src_inc;
	j->tp_ctl_qpn = pkt->tp_ctl_qpn;
	j->tp_rkey = pkt->tp_rkey;
	j->tp_ssn = pkt->ssn;
	j->tp_va = pkt->tp_va;
}

/*
 * The controller's NAK of job j: straight to its QP to the target, as from
 * the target's QP, whose incarnation and number the controller's QP
 * checks, flagged SRNIC_F_THIRD_PARTY so that it is read as the NAK alone
 * (its msn is no cumulative ACK: this node knows nothing of the target's
 * progress).
 */
void resp_tp_nak(struct srnic_engine *eng, struct srnic_qp *qp,
		 const struct srnic_read_job *j, uint8_t syndrome)
{
	int port = srnic_qp_pick_port(eng, qp);
	struct srnic_pkt pkt;
	struct rte_mbuf *m;
	uint8_t *payload;

	if (port < 0)
		return;	/* (the controller asks again) */
	memset(&pkt, 0, sizeof(pkt));
	pkt.opcode = SRNIC_OP_ACK;
	pkt.flags = SRNIC_F_THIRD_PARTY;
	pkt.dst_qpn = j->tp_ctl_qpn;
	pkt.src_qpn = j->tp_qpn;
	pkt.src_inc = j->tp_inc;
	pkt.dst_inc = j->tp_ctl_inc;
	pkt.msn = j->msn;
	pkt.syndrome = syndrome;
	pkt.nak_msn = j->msn;
	pkt.nak_txid = j->txid;
	m = srnic_pkt_alloc(eng, &pkt, qp->peer->mac[port], port, &payload);
	if (m)
		srnic_port_tx(eng, port, m);
}

/* The NAK of a request refused before it became a job. */
static void tp_nak(struct srnic_engine *eng, struct srnic_qp *qp,
		   const struct srnic_pkt *req, uint8_t syndrome)
{
	struct srnic_read_job j = {.msn = req->msn, .txid = req->txid};

	tp_job_fill(&j, req);
	resp_tp_nak(eng, qp, &j, syndrome);
}

/* The node a request names as its target, in the incarnation it names:
 * a peer, or this node itself (a target of the source's own node, reached
 * through the loopback); NULL for none. */
static const struct srnic_peer *tp_target(struct srnic_engine *eng,
					  uint32_t ipv4, uint32_t inc)
{
	const struct srnic_peer *p =
		ipv4 == eng->cfg.ipv4 ? &eng->node->peer[SRNIC_PEER_SELF]
				      : srnic_node_peer(eng->node, ipv4);

	return p && __atomic_load_n(&p->inc, __ATOMIC_ACQUIRE) == inc ? p
								      : NULL;
}

/* Third-party jobs on a QP at most: the rest of its jobs are its own
 * controller's READs and atomics. */
#define TP_JOBS_MAX (SRNIC_MAX_RD_ATOMIC / 2)

/*
 * A request of a WRITE a job already serves: a copy of (part of) what the
 * job sends, dropped; or a newer attempt (the controller's timer asked
 * for it again), which the job answers instead, from where the request
 * says: the controller no longer listens to the older one.  True when
 * nothing more is to be done; *tp_jobs counts the QP's third-party jobs.
 */
static bool tp_joins_job(struct srnic_engine *eng, struct srnic_qp *qp,
			 const struct srnic_pkt *pkt, uint32_t end,
			 unsigned *tp_jobs)
{
	uint32_t i;

	*tp_jobs = 0;
	for (i = qp->rcv.rd_head; i != qp->rcv.rd_tail; i++) {
		struct srnic_read_job *j =
			&qp->rcv.rd_jobs[i % SRNIC_MAX_RD_ATOMIC];

		*tp_jobs += j->tp;
		if (!j->tp || j->msn != pkt->msn ||
		    j->tp_ctl_qpn != pkt->tp_ctl_qpn ||
		    j->tp_ctl_inc != pkt->src_inc)
			continue;
		if (j->txid == pkt->txid) {
			if (j->sent > pkt->msg_off || end > j->end ||
			    (pkt->flags & SRNIC_F_PROBE))
				continue;	/* (more than it sends) */
			eng->st->drops[SRNIC_DROP_DUPLICATE]++;
			return true;
		}
		if (seq_diff(pkt->txid, j->txid) < 0) {
			eng->st->drops[SRNIC_DROP_STALE_TXID]++;
			return true;
		}
		if (pkt->rkey != j->rkey || pkt->va != j->va ||
		    pkt->msg_len != j->len) {
			eng->st->drops[SRNIC_DROP_MALFORMED]++;
			return true;
		}
		j->txid = pkt->txid;
		j->sent = pkt->msg_off;
		j->end = end;
		j->tp_probe = !!(pkt->flags & SRNIC_F_PROBE);
		return true;
	}
	return false;
}

/* Checks of a request before it is answered; false when it is not
 * (counted, and NAKed where the controller must hear why). */
static bool tp_request_ok(struct srnic_engine *eng, struct srnic_qp *qp,
			  const struct srnic_pkt *pkt, uint32_t end,
			  uint32_t *pd)
{
	const struct srnic_peer *target;
	struct srnic_srq *srq;

	if (!srnic_qp_peer_rdma_ok(qp)) {
		eng->st->drops[SRNIC_DROP_NOT_INTEGRATED]++;
		return false;
	}
	/* (packets this node cannot send: asked again they would be too) */
	if ((1u << pkt->stride_shift) > eng->payload_max ||
	    !resp_request_pd(eng, qp, pkt, pd, &srq)) {
		tp_nak(eng, qp, pkt, SRNIC_NAK_INVALID);
		return false;
	}
	target = tp_target(eng, pkt->tp_ipv4, pkt->tp_inc);
	if (!target || !srnic_stripe_reachable(eng, target)) {
		eng->st->drops[SRNIC_DROP_TP_NO_TARGET]++;
		return false;
	}
	if (!resp_range_readable(eng, qp, pkt, *pd, end,
				 SRNIC_ACCESS_REMOTE_READ |
					 SRNIC_ACCESS_THIRD_PARTY)) {
		tp_nak(eng, qp, pkt, SRNIC_NAK_ACCESS);
		return false;
	}
	return true;
}

void srnic_responder_tp(struct srnic_engine *eng, struct srnic_qp *qp,
			const struct srnic_pkt *pkt)
{
	uint32_t end = pkt->read_len ? pkt->msg_off + pkt->read_len
				     : pkt->msg_len;
	unsigned tp_jobs;
	uint32_t pd;

	if (!tp_request_ok(eng, qp, pkt, end, &pd) ||
	    tp_joins_job(eng, qp, pkt, end, &tp_jobs))
		return;
	/* (no room for a job now: the controller asks again) */
	if (resp_jobs_full(qp) || tp_jobs >= TP_JOBS_MAX) {
		eng->st->drops[SRNIC_DROP_TP_BUSY]++;
		return;
	}
	/* (the source's program may unmap the memory meanwhile: its copies
	 * are guarded, as a READ's asked again) */
	tp_job_fill(resp_range_job(eng, qp, pkt, pd, end), pkt);
	eng->st->tp_requests++;
}

/* The port a third-party job's next packet takes to its target, and the
 * target's MAC on it; -1 when none reaches the target now (*gone: nor will,
 * the target left or restarted). */
int resp_tp_port(struct srnic_engine *eng, struct srnic_read_job *j,
		 const uint8_t **mac, bool *gone)
{
	const struct srnic_peer *target = tp_target(eng, j->tp_ipv4, j->tp_inc);
	int port;

	*gone = !target;
	if (*gone)
		return -1;
	port = srnic_stripe_pick(eng, target, &j->tp_rr);
	*gone = port < 0 && !srnic_stripe_reachable(eng, target);
	if (port >= 0)
		*mac = target->mac[port];
	return port;
}

/* The header of a third-party job's next packet: a WRITE of the
 * controller's message msn, to the target. */
void resp_tp_header(struct srnic_pkt *pkt, const struct srnic_read_job *j)
{
	uint32_t left = j->end - j->sent;

	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = SRNIC_OP_WRITE;
	pkt->flags = SRNIC_F_THIRD_PARTY;
	pkt->dst_qpn = j->tp_qpn;
	pkt->src_qpn = j->tp_ctl_qpn;
	pkt->src_inc = j->tp_ctl_inc;
	pkt->dst_inc = j->tp_inc;
	pkt->msn = j->msn;
	pkt->txid = j->txid;
	pkt->ssn = j->tp_ssn;
	pkt->rkey = j->tp_rkey;
	pkt->va = j->tp_va + j->sent;
	pkt->msg_off = j->sent;
	pkt->msg_len = j->len;
	pkt->stride_shift = j->shift;
	pkt->pkt_len = left < (1u << j->shift) ? left : (1u << j->shift);
	/* (no send time: the controller reads ts_echo by its own clock) */
	if (j->sent + pkt->pkt_len == j->len) {
		pkt->flags |= SRNIC_F_LAST;
		if (j->tp_probe)
			pkt->flags |= SRNIC_F_PROBE;
	}
}
