/* SPDX-License-Identifier: MIT */
/*
 * Responder for UD QPs: each datagram is a whole message in one packet, so
 * it lands at once in the QP's next receive WQE, behind the 40-byte GRH
 * verbs puts at the head of every UD receive buffer, and completes there.
 * Nothing is acknowledged: a datagram with no receive WQE waiting, or no
 * room in the CQ, is dropped and counted, as a NIC drops it.
 */
#include <string.h>

#include "srnic_responder.h"
#include "srnic_recv.h"
#include "srnic_sge.h"

/*
 * The GRH a RoCE v2 NIC leaves for an IPv4 datagram: 20 unused bytes, then
 * the packet's IPv4 header.  That is what ibv_init_ah_from_wc() reads to
 * answer the sender, so it is a real header with a valid checksum.
 */
static void grh_ipv4(uint8_t grh[SRNIC_GRH_LEN], const struct srnic_pkt *pkt)
{
	/* what RoCE v2 would carry: UDP 8, BTH 12, DETH 8, ICRC 4 */
	uint32_t total = 20 + 8 + 12 + 8 + pkt->pkt_len + 4, sum = 0;
	uint8_t *ip = grh + 20;
	unsigned i;

	memset(grh, 0, SRNIC_GRH_LEN);
	ip[0] = 0x45;	/* version 4, 5 words */
	srnic_put16(ip + 2, (uint16_t)total);
	ip[6] = 0x40;	/* don't fragment */
	ip[8] = 64;	/* TTL */
	ip[9] = 17;	/* UDP */
	srnic_put32(ip + 12, pkt->src_ipv4);
	srnic_put32(ip + 16, pkt->dst_ipv4);
	for (i = 0; i < 20; i += 2)
		sum += srnic_get16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	srnic_put16(ip + 10, (uint16_t)~sum);
}

/*
 * The GRH of a datagram in IPv6: as RoCE v2 carries it, an IPv6 header
 * from src (a GID) to dst, a multicast group's or an IPv6 node's own.
 */
static void grh_ipv6(uint8_t grh[SRNIC_GRH_LEN], const struct srnic_pkt *pkt,
		     const uint8_t src[16], const uint8_t dst[16])
{
	memset(grh, 0, SRNIC_GRH_LEN);
	grh[0] = 0x60;	/* version 6 */
	srnic_put16(grh + 4, (uint16_t)(8 + 12 + 8 + pkt->pkt_len + 4));
	grh[6] = 17;	/* next header: UDP */
	grh[7] = 64;	/* hop limit */
	memcpy(grh + 8, src, 16);
	memcpy(grh + 24, dst, 16);
}

/*
 * The GID a datagram's sender answers to, into gid: an IPv4 node's
 * IPv4-mapped address; an IPv6 node's address (its peer's, looked up by
 * the id the datagram names it by), false if the peer is gone.  The last
 * sender found in a peer slot is kept with its slot (eng->dgram_from):
 * a UD service's datagrams come in runs from a few peers, and the look-up
 * is a scan of the peers and a hash.  A configured peer not heard yet is
 * not kept: once heard, its slot's address is the one that counts.
 */
static bool sender_gid(struct srnic_engine *eng, const struct srnic_pkt *pkt,
		       uint8_t gid[16])
{
	uint32_t id = pkt->src_ipv4;
	struct srnic_peer *peer;

	if (!eng->cfg.has_ipv6) {
		memset(gid, 0, 10);
		gid[10] = gid[11] = 0xff;
		srnic_put32(gid + 12, id);
		return true;
	}
	if (id == eng->cfg.ipv4) {
		memcpy(gid, eng->cfg.ipv6, 16);
		return true;
	}
	if (eng->dgram_from.peer && eng->dgram_from.id == id &&
	    srnic_peer_has6(eng->dgram_from.peer, id, eng->dgram_from.ip6)) {
		memcpy(gid, eng->dgram_from.ip6, 16);
		return true;
	}
	peer = srnic_node_peer(eng->node, id);
	if (peer && srnic_peer_addr6(peer, id, gid)) {
		eng->dgram_from.id = id;
		eng->dgram_from.peer = peer;
		memcpy(eng->dgram_from.ip6, gid, 16);
		return true;
	}
	return srnic_config_peer6(&eng->cfg, id, gid);
}

/* Complete the oldest receive WQE; the caller checked the CQ's room. */
static void complete_recv(struct srnic_qp *qp, const struct srnic_pkt *pkt,
			  bool grh6, uint8_t status)
{
	struct srnic_cq *cq = qp->q.recv_cq;
	struct srnic_cqe *c = srnic_cq_slot(cq);

	memset(c, 0, sizeof(*c));
	c->wr_id = qp->q.rq[qp->q.rq_comp & qp->q.rq_mask].wr_id;
	c->qp_num = qp->q.qpn;
	c->src_qp = pkt->src_qpn;
	c->status = status;
	c->opcode = SRNIC_WC_RECV;
	c->byte_len = SRNIC_GRH_LEN + pkt->pkt_len;
	c->flags = SRNIC_WC_F_GRH | (grh6 ? SRNIC_WC_F_GRH_IPV6 : 0);
	if (pkt->flags & SRNIC_F_IMM) {
		c->flags |= SRNIC_WC_F_IMM;
		c->imm = pkt->imm;
	}
	if (pkt->flags & SRNIC_F_SOLICITED)
		c->flags |= SRNIC_WC_F_SOLICITED;
	srnic_rq_consumed(qp);
	srnic_cq_publish(cq);
}

/* group_gid: the IPv6 multicast group it was sent to, else NULL. */
void srnic_responder_datagram(struct srnic_engine *eng, struct srnic_qp *qp,
			      const struct srnic_pkt *pkt,
			      const uint8_t *group_gid)
{
	/* (an IPv6 node's datagrams, and those to an IPv6 group, carry an
	 * IPv6 header, whose source the receiver answers) */
	bool grh6 = group_gid || eng->cfg.has_ipv6;
	uint8_t grh[SRNIC_GRH_LEN], src[16];
	struct srnic_rwqe *r;
	int64_t room;

	if (qp->q.state != SRNIC_QPS_RTR && qp->q.state != SRNIC_QPS_RTS &&
	    qp->q.state != SRNIC_QPS_SQD && qp->q.state != SRNIC_QPS_SQE) {
		eng->st->drops[SRNIC_DROP_QP_STATE]++;
		return;
	}
	if (pkt->qkey != qp->at.qkey) {
		eng->st->drops[SRNIC_DROP_BAD_QKEY]++;
		return;
	}
	if (qp->q.srq)
		srnic_srq_pull(qp, qp->rcv.exp_ssn);
	if (!srnic_rq_posted(qp)) {
		eng->st->drops[SRNIC_DROP_RNR]++;
		return;
	}
	if (!srnic_cq_room(qp->q.recv_cq)) {
		eng->st->drops[SRNIC_DROP_CQ_FULL]++;
		return;
	}
	r = srnic_recv_wqe(qp, qp->rcv.exp_ssn);
	room = srnic_sge_check_used(&eng->mem, qp->pd, r->sge, r->num_sge,
				    SRNIC_ACCESS_LOCAL_WRITE,
				    SRNIC_GRH_LEN + (uint64_t)pkt->pkt_len);
	if (room < 0) {
		/* The receive WQE itself is wrong (its region went): it
		 * completes in error and takes the QP down. */
		srnic_qp_to_error(eng, qp);	/* (before it shows) */
		complete_recv(qp, pkt, grh6, SRNIC_WC_LOC_PROT_ERR);
		return;
	}
	if (room < SRNIC_GRH_LEN + (int64_t)pkt->pkt_len) {
		/* Too long for it: the WQE says so, but the QP goes on.
		 * Anyone who knows the Q_Key may send a datagram, and a
		 * long one must not take a UD service down. */
		complete_recv(qp, pkt, grh6, SRNIC_WC_LOC_LEN_ERR);
		return;
	}
	/* (an IPv6 sender whose address is not known here, its peer's slot
	 * taken meanwhile: the data still comes, from :: to a group, else
	 * under the IPv4 header of its id, which no AH answers) */
	if (grh6 && !sender_gid(eng, pkt, src)) {
		if (group_gid)
			memset(src, 0, sizeof(src));
		else
			grh6 = false;
	}
	if (grh6)
		grh_ipv6(grh, pkt, src, group_gid ? group_gid : eng->cfg.ipv6);
	else
		grh_ipv4(grh, pkt);
	if (srnic_sge_scatter(&eng->mem, qp->pd, r->sge, r->num_sge, 0, grh,
			      SRNIC_GRH_LEN) ||
	    srnic_sge_scatter(&eng->mem, qp->pd, r->sge, r->num_sge,
			      SRNIC_GRH_LEN, pkt->payload, pkt->pkt_len)) {
		srnic_qp_to_error(eng, qp);	/* (before it shows) */
		complete_recv(qp, pkt, grh6, SRNIC_WC_LOC_PROT_ERR);
		return;
	}
	complete_recv(qp, pkt, grh6, SRNIC_WC_SUCCESS);
}

/* Datapath: a group's datagram to this process's QPs in the group (every
 * group of that wire id), but the QP that sent it. */
void srnic_mcast_deliver(struct srnic_engine *eng, const struct srnic_pkt *pkt)
{
	bool self = srnic_sent_here(eng, pkt);
	unsigned i, k;

	for (i = 0; i < SRNIC_MAX_MCAST_GROUPS; i++) {
		const struct srnic_mcast_group *g = &eng->mcast[i];

		if (!g->nqp || g->id != pkt->dst_ipv4)
			continue;
		for (k = 0; k < g->nqp; k++) {
			struct srnic_qp *qp = srnic_qp_lookup(eng, g->qpn[k]);

			if (qp && !(self && qp->q.qpn == pkt->src_qpn))
				srnic_responder_datagram(
					eng, qp, pkt,
					g->kind == SRNIC_MCAST_IPV6 ? g->gid
								    : NULL);
		}
	}
}
