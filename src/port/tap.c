/* SPDX-License-Identifier: MIT */
/*
 * The capture tap (./srnic capture on a memif port): copies of a port's
 * frames as they are received and sent, for the node's file thread to
 * write out (control/capture.c).  Datapath side, any process of the node:
 * the slots and both rings are in the node's memory, so whichever process
 * polls or sends on the port copies its frames.
 *
 * Off, it costs one load and one branch a burst (srnic_tap_on).  On, a
 * frame takes a free slot (none: counted as dropped, never waited for),
 * is copied up to the slot's size, and the slot goes on the full ring.
 * Sent frames are copied before the burst (after it the driver owns them)
 * and kept only as far as the port took them.
 */
#include <rte_cycles.h>
#include <rte_malloc.h>

#include "srnic_port.h"

int srnic_tap_init(struct srnic_node *node)
{
	struct srnic_tap *t = &node->tap;
	uintptr_t i;

	t->slots = rte_zmalloc("srnic_tap", sizeof(*t->slots) * SRNIC_TAP_SLOTS,
			       64);
	t->free = rte_ring_create("srnic_tap_free", SRNIC_TAP_SLOTS * 2,
				  rte_socket_id(), 0);
	t->full = rte_ring_create("srnic_tap_full", SRNIC_TAP_SLOTS * 2,
				  rte_socket_id(), RING_F_SC_DEQ);
	if (!t->slots || !t->free || !t->full)
		return -ENOMEM;
	for (i = 0; i < SRNIC_TAP_SLOTS; i++)
		rte_ring_enqueue(t->free, (void *)(i + 1));
	return 0;
}

/* Copies of frames m[0..n) into slots; their numbers in idx.  How many. */
static uint16_t take(struct srnic_tap *t, unsigned p, uint8_t dir,
		     struct rte_mbuf **m, uint16_t n, void **idx)
{
	uint16_t got = (uint16_t)rte_ring_dequeue_burst(t->free, idx, n, NULL);
	uint64_t now = rte_get_tsc_cycles();
	uint16_t i;

	if (got < n)
		__atomic_fetch_add(&t->dropped, n - got, __ATOMIC_RELAXED);
	for (i = 0; i < got; i++) {
		struct srnic_tap_slot *s = &t->slots[(uintptr_t)idx[i] - 1];
		uint32_t len = rte_pktmbuf_pkt_len(m[i]);
		uint32_t cap = len < sizeof(s->data) ? len : sizeof(s->data);
		const void *d = rte_pktmbuf_read(m[i], 0, cap, s->data);

		if (d && d != s->data)
			rte_memcpy(s->data, d, cap);
		s->tsc = now;
		s->port = (uint16_t)p;
		s->dir = dir;
		s->len = len;
		s->caplen = d ? cap : 0;
	}
	return got;
}

void srnic_tap_rx(struct srnic_node *node, unsigned p, struct rte_mbuf **m,
		  uint16_t n)
{
	void *idx[SRNIC_BURST_MAX];
	uint16_t got;

	if (n > SRNIC_BURST_MAX)
		n = SRNIC_BURST_MAX;
	got = take(&node->tap, p, SRNIC_TAP_RX, m, n, idx);
	rte_ring_enqueue_bulk(node->tap.full, idx, got, NULL);
}

uint16_t srnic_tap_tx_take(struct srnic_node *node, unsigned p,
			   struct rte_mbuf **m, uint16_t n, void **idx)
{
	if (n > SRNIC_BURST_MAX)
		n = SRNIC_BURST_MAX;
	return take(&node->tap, p, SRNIC_TAP_TX, m, n, idx);
}

/* After the burst: the copies of the first `sent` frames are kept. */
void srnic_tap_tx_done(struct srnic_node *node, void **idx, uint16_t got,
		       uint16_t sent)
{
	uint16_t keep = sent < got ? sent : got;

	rte_ring_enqueue_bulk(node->tap.full, idx, keep, NULL);
	rte_ring_enqueue_bulk(node->tap.free, idx + keep, got - keep, NULL);
}
