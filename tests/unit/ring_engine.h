/* SPDX-License-Identifier: MIT */
/*
 * The engine the net_ring unit tests drive: DPDK initialised without a
 * NIC, one port that is DPDK's net_ring (what it transmits comes back on
 * its receive side), and just the engine state the parts under test read.
 * The test fills in the rest (memory table, doorbell ring, faults) before
 * calling ring_engine_start().
 */
#ifndef SRNIC_TEST_RING_ENGINE_H
#define SRNIC_TEST_RING_ENGINE_H

#include <stdio.h>
#include <stdlib.h>

#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "engine_internal.h"

/* DPDK up, and an engine with one net_ring port configured, not started. */
static inline struct srnic_engine *ring_engine_new(void)
{
	char *argv[] = {"test", "--no-pci", "--no-huge", "--no-shconf",
			"--no-telemetry", "-m", "256", "--vdev=net_ring0",
			"--log-level=*:error"};
	struct srnic_engine *eng;

	if (rte_eal_init(sizeof(argv) / sizeof(argv[0]), argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		exit(2);
	}
	eng = srnic_zalloc_aligned(sizeof(*eng), 64);
	if (!eng)
		exit(2);
	eng->node = srnic_zalloc_aligned(sizeof(*eng->node), 64);
	if (!eng->node)
		exit(2);
	eng->st = &eng->own_st;
	/* (the control core's frames: whoever holds the port token sends
	 * them) */
	eng->node->ctrl_tx = rte_ring_create("ctrl_tx", 64, 0, RING_F_SC_DEQ);
	if (!eng->node->ctrl_tx)
		exit(2);
	snprintf(eng->cfg.port[0], sizeof(eng->cfg.port[0]), "net_ring0");
	eng->cfg.nports = 1;
	eng->cfg.mtu = 4096;
	eng->payload_max = 4096;
	eng->fc_grant = SRNIC_FC_WINDOW;
	eng->node->inc = 0xabcdef1;
	eng->tsc_hz = rte_get_tsc_hz();
	eng->tsc_per_us = eng->tsc_hz / 1000000;
	return eng;
}

/* The port started on packet pool pool, and in use. */
static inline void ring_engine_start_pool(struct srnic_engine *eng,
					  struct rte_mempool *pool)
{
	char err[256] = "no packet pool";

	eng->node->pool = pool;
	if (!eng->node->pool || srnic_ports_start(eng, err, sizeof(err))) {
		fprintf(stderr, "engine: %s\n", err);
		exit(2);
	}
	eng->node->port[0].polling = 1;
	eng->node->port[0].link_up = 1;
	srnic_stripe_plan(eng);
}

/* A packet pool of mbufs with room for room bytes, and the port started
 * and in use. */
static inline void ring_engine_start(struct srnic_engine *eng, unsigned room)
{
	ring_engine_start_pool(eng,
			       rte_pktmbuf_pool_create("t", 4095, 0, 0, room, 0));
}

#endif
