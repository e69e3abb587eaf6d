/* SPDX-License-Identifier: MIT */
/*
 * Requester, third-party WRITEs (datapath thread; docs/third-party.md).
 * A controller's WRITE from a data source to a target is a message of the
 * controller's QP to the target, whose packets the source sends: this QP
 * numbers it as any message, and where it would send packets it asks the
 * source for them instead (TP_READ_REQ), on its QP to the source.  The
 * target answers this QP as for a WRITE of its own, so ACKs, SACKs and
 * probes work as they do for one; only the bytes come from elsewhere.
 */
#include "srnic_requester.h"

int srnic_tp_request(struct srnic_engine *eng, struct srnic_qp *qp,
		     uint32_t idx, uint32_t off, uint32_t len, uint16_t flags,
		     uint8_t shift)
{
	const struct srnic_swqe *w = &qp->q.sq[idx & qp->q.sq_mask];
	const struct srnic_swqe_run *run = &qp->run[idx & qp->q.sq_mask];
	struct srnic_qp *src = srnic_qp_lookup(eng, w->tp.src_qpn);
	struct srnic_pkt pkt;
	struct rte_mbuf *m;
	uint8_t *payload;
	int port;

	/* (the QP to the source was destroyed, or left RTS, since the post:
	 * the WRITE cannot go) */
	if (!src || src->q.type != SRNIC_QPT_RC || !src->peer ||
	    (src->q.state != SRNIC_QPS_RTS && src->q.state != SRNIC_QPS_SQD)) {
		srnic_swqe_finish(qp, idx, SRNIC_WC_LOC_QP_OP_ERR);
		return -1;
	}
	port = srnic_qp_pick_port(eng, src);
	/* (no way to the source at all, not merely full ports: the request
	 * is lost, as on a wire that is down, and the timers ask again
	 * until retry_cnt ends it) */
	if (port < 0)
		return srnic_qp_peer_reachable(eng, src) ? 0 : 1;
	srnic_qp_pkt_init(&pkt, eng, src, SRNIC_OP_TP_READ_REQ, run->msn);
	pkt.flags = flags;
	pkt.txid = run->txid;
	pkt.ssn = run->ssn;
	pkt.rkey = w->tp.src_rkey;
	pkt.va = w->tp.src_va;
	pkt.msg_off = off;
	pkt.read_len = len;
	pkt.msg_len = w->length;
	pkt.stride_shift = shift;
	pkt.tp_ipv4 = qp->peer->ipv4;
	pkt.tp_inc = qp->peer_inc;
	pkt.tp_qpn = qp->at.dest_qpn;
	pkt.tp_ctl_qpn = qp->q.qpn;
	pkt.tp_rkey = w->rkey;
	pkt.tp_va = w->remote_addr;
	m = srnic_pkt_alloc(eng, &pkt, src->peer->mac[port], port, &payload);
	if (!m)
		return 0;
	srnic_port_tx(eng, port, m);
	return 1;
}
