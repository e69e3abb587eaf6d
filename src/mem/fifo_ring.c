/* SPDX-License-Identifier: MIT */
/*
 * Half-RDMA's FIFO rings (docs/half-rdma.md; seed 002 l.262-310), the
 * producer's side, on the datapath: a record appended to the ring of a
 * FIFO's key, header then payload, the header's valid word last so that
 * the program, reading it, finds the rest there.  Both halves that land
 * packets in a FIFO come here: the responder's (a WRITE to the FIFO's
 * key) and the completer's (the answer to a READ posted into a FIFO).
 */
#include <errno.h>

#include "srnic_mem.h"
#include "srnic_queue.h"

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

int srnic_fifo_put(const struct srnic_mem_table *t, uint32_t key,
		   const struct srnic_fifo_hdr *h, const void *payload)
{
	const struct srnic_mr *mr = srnic_mem_region_of(t, key);
	struct srnic_fifo_ring *r = (struct srnic_fifo_ring *)(uintptr_t)mr->addr;
	/* (the ring's size is the region's, never the program's word) */
	uint64_t size = mr->length - sizeof(*r), len, pad;
	struct srnic_fifo_hdr *at;
	int64_t off;

	len = srnic_fifo_rec_len(h->pkt_len);
	off = fifo_room(r, size, len, &pad);
	if (off < 0) {
		__atomic_store_n(&r->full, r->full + 1, __ATOMIC_RELAXED);
		return -ENOSPC;
	}
	at = (struct srnic_fifo_hdr *)&r->data[off];
	if (!srnic_mem_copy(t, &at->pkt_len, &h->pkt_len,
			    sizeof(*h) - sizeof(h->valid)) ||
	    !srnic_mem_copy(t, at + 1, payload, h->pkt_len))
		return -EFAULT;
	/* (the pad, the rest of the ring to its end, only now: a copy that
	 * failed leaves nothing the program could take) */
	if (pad) {
		/* (through a pointer of the header's type: clang then knows
		 * the store is aligned, and makes no libatomic call) */
		struct srnic_fifo_hdr *p =
			(struct srnic_fifo_hdr *)&r->data[r->prod % size];

		__atomic_store_n(&p->valid, SRNIC_FIFO_PAD, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&at->valid, h->valid, __ATOMIC_RELEASE);
	__atomic_store_n(&r->records, r->records + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&r->prod, r->prod + pad + len, __ATOMIC_RELEASE);
	return 0;
}
