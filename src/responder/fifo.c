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
 * from being appended twice.  Datapath only.
 */
#include <errno.h>

#include "responder_internal.h"

enum resp_placed resp_fifo_append(struct srnic_engine *eng,
				  const struct srnic_qp *qp,
				  const struct srnic_pkt *pkt)
{
	const struct srnic_fifo_hdr h = {
		.valid = SRNIC_FIFO_VALID, .pkt_len = pkt->pkt_len,
		.qp_num = qp->q.qpn, .src_qp = pkt->src_qpn, .msn = pkt->msn,
		.msg_len = pkt->msg_len, .msg_off = pkt->msg_off};

	switch (srnic_fifo_put(&eng->mem, pkt->rkey, &h, pkt->payload)) {
	case 0:
		return RESP_PLACED;
	case -ENOSPC:
		return RESP_FIFO_FULL;
	default:
		srnic_page_fault(eng, pkt->rkey);	/* (a ring gone) */
		return RESP_REFUSED;
	}
}
