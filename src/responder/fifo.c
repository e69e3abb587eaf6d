/* SPDX-License-Identifier: MIT */
/*
 * Half-RDMA's receiving half (seed 002 l.262-310; docs/half-rdma.md): a
 * WRITE packet whose key is a FIFO's is not placed at its address but
 * appended to the FIFO's ring as a record, a header saying where it came
 * from and where it sat in its message, then its bytes; the header's
 * valid word goes last, so the program, reading it, finds the rest there.
 * A packet the ring has no room for is dropped and counted (fifo_full),
 * not marked as landed: the requester's SACK or probe brings it again
 * once the program has made room.  The message's bitmap keeps a packet
 * from being appended twice.  Datapath only.
 */
#include "responder_internal.h"

/* Room for len bytes at the ring's producer offset, after what padding
 * the end of the ring takes: the offset to write at, or -1.  The offsets
 * are in the program's memory: ones it spoiled (unaligned, or more used
 * than the ring holds) give no room, never a write outside the ring. */
static int64_t fifo_room(const struct srnic_fifo_ring *r, uint64_t size,
			 uint64_t len, uint64_t *pad)
{
	uint64_t prod = r->prod,
		 cons = __atomic_load_n(&r->cons, __ATOMIC_ACQUIRE);
	uint64_t used = prod - cons, at = prod % size;

	*pad = at + len > size ? size - at : 0;
	if (((prod | cons) & 7) || used > size || len + *pad > size - used)
		return -1;
	return *pad ? 0 : (int64_t)at;
}

enum resp_placed resp_fifo_append(struct srnic_engine *eng,
				  const struct srnic_qp *qp,
				  const struct srnic_pkt *pkt)
{
	const struct srnic_mr *mr = srnic_mem_region_of(&eng->mem, pkt->rkey);
	struct srnic_fifo_ring *r = (struct srnic_fifo_ring *)(uintptr_t)mr->addr;
	uint64_t size = mr->length - sizeof(*r), len, pad;
	struct srnic_fifo_hdr h = {
		.pkt_len = pkt->pkt_len, .qp_num = qp->q.qpn,
		.src_qp = pkt->src_qpn, .msn = pkt->msn,
		.msg_len = pkt->msg_len, .msg_off = pkt->msg_off};
	struct srnic_fifo_hdr *at;
	int64_t off;

	len = srnic_fifo_rec_len(pkt->pkt_len);
	off = fifo_room(r, size, len, &pad);
	if (off < 0) {
		__atomic_store_n(&r->full, r->full + 1, __ATOMIC_RELAXED);
		return RESP_FIFO_FULL;
	}
	at = (struct srnic_fifo_hdr *)&r->data[off];
	if (!srnic_mem_copy(&eng->mem, &at->pkt_len, &h.pkt_len,
			    sizeof(h) - sizeof(h.valid)) ||
	    !srnic_mem_copy(&eng->mem, at + 1, pkt->payload, pkt->pkt_len)) {
		srnic_page_fault(eng, pkt->rkey);	/* (a ring gone) */
		return RESP_REFUSED;
	}
	/* (the pad, the rest of the ring to its end, only now: a copy that
	 * failed leaves nothing the program could take) */
	if (pad) {
		/* (through a pointer of the header's type: clang then knows
		 * the store is aligned, and makes no libatomic call) */
		struct srnic_fifo_hdr *p =
			(struct srnic_fifo_hdr *)&r->data[r->prod % size];

		__atomic_store_n(&p->valid, SRNIC_FIFO_PAD, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&at->valid, SRNIC_FIFO_VALID, __ATOMIC_RELEASE);
	__atomic_store_n(&r->records, r->records + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&r->prod, r->prod + pad + len, __ATOMIC_RELEASE);
	return RESP_PLACED;
}
