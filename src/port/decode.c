/* SPDX-License-Identifier: MIT */
/*
 * A frame off port p, before anyone acts on it: its CRC where the port
 * carries one, its decoding, and a control frame's MAC under a cluster
 * key.  Whoever polled the port (the datapath, or the control core's wait
 * for BYE_ACKs as the node leaves).
 */
#include <rte_mbuf.h>

#include "srnic_port.h"

bool srnic_rx_decode(struct srnic_engine *eng, unsigned p,
		     const struct rte_mbuf *m, struct srnic_pkt *pkt)
{
	const uint8_t *buf = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m);
	enum srnic_wire_err e;

	/* The trailer first: nothing of a damaged frame is believed, not
	 * even the lengths that say where its payload goes. */
	e = srnic_wire_check_crc(buf, len, eng->node->port[p].crc,
				 eng->cfg.encap_udp);
	if (e == SRNIC_WIRE_OK)
		e = srnic_wire_decode(buf, len, pkt);
	if (e != SRNIC_WIRE_OK) {
		eng->st->drops[e == SRNIC_WIRE_NOT_OURS ? SRNIC_DROP_NOT_OURS
			      : e == SRNIC_WIRE_BAD_CRC ? SRNIC_DROP_BAD_CRC
							 : SRNIC_DROP_MALFORMED]++;
		return false;
	}
	/* With a cluster key, control frames only from its holders: they
	 * can fail QPs, gate RDMA, or take a link out of use (a BYE_ACK
	 * ends a leaving node's wait too); and a service QP's resync, which
	 * binds a parked QP to whoever sent it. */
	if (eng->cfg.has_key && srnic_op_signed(pkt->opcode) &&
	    !srnic_wire_auth_ok(buf, pkt, eng->cfg.cluster_key,
				eng->cfg.encap_udp)) {
		eng->st->drops[SRNIC_DROP_BAD_AUTH]++;
		return false;
	}
	return true;
}
