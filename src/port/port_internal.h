/* SPDX-License-Identifier: MIT */
/*
 * Within port/: what its files call of each other, and nobody else.
 */
#ifndef SRNIC_PORT_INTERNAL_H
#define SRNIC_PORT_INTERNAL_H

#include <rte_ethdev.h>

#include "srnic_port.h"

/* memif.c: give port i's server socket, once the port runs, its real
 * name (real), or take it back before the port stops. */
void srnic_memif_server_name(struct srnic_engine *eng, unsigned i, bool real);

/* token.c: frames wait for the token: sleep up to us for its holder to
 * give it back. */
void srnic_token_wait(struct srnic_engine *eng, unsigned us);
/* token.c: the token was taken again with frames waiting: after a while,
 * ask the others to leave it to this process. */
void srnic_token_missed(struct srnic_engine *eng);

/* Frames went to the far end of a memif link: wake whoever sleeps for
 * them there, its processes if any sleeps, else its node's sleeper; and
 * the node's sleeper too when the processes were rung already and none
 * has woken since (kept off its CPU: a process pinned beside a busy one,
 * a stopped one).  Then the node's sleeper polls and queues their frames
 * on their rings, as before there were bells; otherwise the frames waited
 * in the link until a process ran (e2e/14's UC receiver, pinned to a CPU
 * an RT hog takes 150 ms in 200, gave up messages in a CI run). */
static inline void ring_wire(struct srnic_wire_end *end)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&end->procs.sleeping, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&end->procs.wake, __ATOMIC_RELAXED))
		srnic_ring_fenced(&end->procs);
	else
		srnic_ring_fenced(&end->node);
}

/* A burst of nb frames on queue q of port p, copied to the capture while
 * one runs (tap.c: before the burst, for after it the port owns the
 * frames; the copies of those it did not take are given back).  How
 * many the port took. */
static inline uint16_t srnic_port_burst(struct srnic_engine *eng, unsigned p,
					uint16_t q, struct rte_mbuf **b,
					uint16_t nb)
{
	void *idx[SRNIC_BURST_MAX];
	uint16_t got, sent;

	if (likely(!srnic_tap_on(&eng->node->tap, p)))
		return rte_eth_tx_burst(eng->node->port[p].port_id, q, b, nb);
	got = srnic_tap_tx_take(eng->node, p, b, nb, idx);
	sent = rte_eth_tx_burst(eng->node->port[p].port_id, q, b, nb);
	srnic_tap_tx_done(eng->node, idx, got, sent);
	return sent;
}

/* steer.c: port p's transmit buffer tb onto the queues of sending class
 * cls, each frame on its receiving class's; how many went. */
unsigned srnic_steer_tx(struct srnic_engine *eng, unsigned p,
			struct srnic_txbuf *tb, unsigned cls);
/* steer.c: up to n frames from the queues port p has for receiving class
 * cls (counted per queue). */
uint16_t srnic_steer_rx(struct srnic_engine *eng, unsigned p, unsigned cls,
			struct rte_mbuf **pkts, uint16_t n);

#endif
