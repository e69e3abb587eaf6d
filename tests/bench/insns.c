/* SPDX-License-Identifier: MIT */
/*
 * The engine's own work a packet, in instructions that callgrind counts
 * the same from run to run (this host's cycles swing 2x): issue 35's
 * "half the cycles a packet", measured where srnic's code can cut them.
 *
 * Two RC QPs of one engine, each the other's peer across DPDK's net_ring
 * (a port whose transmit comes back on its receive), and WRITEs of SIZE
 * bytes from one to the other, as perftest's ib_write_bw posts them
 * (WINDOW in flight, one in SIGNAL signaled), driven by whole
 * datapath iterations on this one thread (srnic_engine_progress): the
 * doorbell, the requester, the port's transmit buffer and flush, the
 * receive poll and its sorting, the responder's placement, the ACK, the
 * completer and the CQ.  Not memif's copies, not the provider's verbs
 * face, no second thread.  The target's bytes are checked at the end.
 *
 *   build/tests/bench/insns [MESSAGES [SIZE [SLOTS]]]
 *	(default 20000 8-byte WRITEs, each to its own slot of up to 4096 in
 *	regions of at most 64 MiB: at 64 KiB the copies then run from and
 *	to memory, not cache; SLOTS 1 reuses one buffer, as perftest's
 *	ib_write_bw does)
 *   tests/bench/insns.sh runs it under callgrind: instructions a packet.
 *
 * Prints the messages, the packets the port moved (out and in), the
 * iterations run, and TSC cycles a packet (on this host, noise).  Under
 * callgrind only the measured messages are counted (a first tenth warms
 * the caches and pools up uncounted).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define COUNTED 1
#else	/* (built without valgrind: it runs, and says it counts nothing) */
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#define COUNTED 0
#endif

#include "ring_engine.h"

#define WINDOW 128	/* ib_write_bw's default tx depth */
#define SIGNAL 100	/* one completion asked for every SIGNAL WRITEs
			 * (ib_write_bw's default cq_mod) */
#define SLOTS 4096	/* the regions: at most SLOTS messages' room ... */
#define REGION_MAX (64u << 20)	/* ... and at most this many bytes */

static struct srnic_engine *eng;
static struct srnic_peer self;
static struct srnic_cq *cq;
static uint64_t slots;	/* messages' room in each region */

/* An RC QP in RTS whose peer is this engine itself. */
static struct srnic_qp *qp_make(void)
{
	struct srnic_qp_init init = {.type = SRNIC_QPT_RC, .pd = 1,
				     .max_send_wr = 2 * WINDOW,
				     .max_recv_wr = 1, .max_send_sge = 1,
				     .max_recv_sge = 1, .send_cq = cq,
				     .recv_cq = cq};
	struct srnic_qp *qp = srnic_engine_create_qp(eng, &init);

	if (!qp)
		exit(2);
	qp->peer = &self;
	qp->peer_inc = eng->node->inc;
	qp->access = SRNIC_ACCESS_REMOTE_WRITE;
	qp->at.path_shift = 12;
	qp->at.timeout_tsc = eng->tsc_hz;
	qp->at.retry_cnt = 7;
	qp->q.state = SRNIC_QPS_RTS;
	return qp;
}

/* What slot s of the source holds (never the target's first 0xee). */
static inline uint8_t pattern(uint64_t s)
{
	return (uint8_t)(s % 199);
}

/* Messages [first, first + n) from a to b: slot i % slots of src (SIZE
 * bytes) to the same slot of dst.  Counted under callgrind: the WQEs as
 * a provider writes them, the iterations, the CQ's polls. */
static uint64_t run(struct srnic_qp *a, uint32_t src_key, uint8_t *src,
		    uint32_t dst_key, uint8_t *dst, uint32_t size,
		    uint64_t first, uint64_t n, uint64_t *iters)
{
	uint64_t posted = first, done = first, end = first + n;
	struct srnic_cqe c[16];
	int k;

	while (done < end) {
		uint32_t prod = a->q.sq_prod;

		for (; posted < end && posted - done < WINDOW; posted++) {
			struct srnic_swqe *w = &a->q.sq[prod++ & a->q.sq_mask];
			uint64_t at = posted % slots * size;

			memset(w, 0, offsetof(struct srnic_swqe, sge) +
					     sizeof(w->sge[0]));
			w->wr_id = posted;
			w->opcode = SRNIC_WR_WRITE;
			w->flags = (posted + 1) % SIGNAL ? 0 : SRNIC_WR_SIGNALED;
			w->num_sge = 1;
			w->length = size;
			w->rkey = dst_key;
			w->remote_addr = (uintptr_t)dst + at;
			w->sge[0] = (struct srnic_sge){
				.addr = (uintptr_t)src + at, .length = size,
				.lkey = src_key};
		}
		if (prod != a->q.sq_prod) {
			__atomic_store_n(&a->q.sq_prod, prod, __ATOMIC_RELEASE);
			srnic_engine_doorbell(eng, a);
		}
		srnic_engine_progress(eng);
		(*iters)++;
		while ((k = srnic_cq_poll(cq, c, 16)) > 0)
			for (int i = 0; i < k; i++) {
				if (c[i].status != SRNIC_WC_SUCCESS) {
					fprintf(stderr, "WRITE %llu: status %u\n",
						(unsigned long long)c[i].wr_id,
						c[i].status);
					exit(1);
				}
				done = c[i].wr_id + 1;
			}
	}
	return done - first;
}

static uint64_t port_packets(void)
{
	const struct srnic_port *port = &eng->node->port[0];

	return port->st.tx_pkts + port->st.rx_pkts;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 20000;
	uint32_t size = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : 8;
	uint64_t want_slots = argc > 3 ? strtoull(argv[3], NULL, 0) : 0;
	uint64_t warm, iters = 0, pkts, tsc, i;
	uint32_t src_key, dst_key;
	struct srnic_qp *a, *b;
	uint8_t *src, *dst;

	if (n < 10 * SIGNAL || !size || size > 65536 || want_slots > SLOTS) {
		fprintf(stderr, "usage: insns [MESSAGES (at least %u)] "
				"[SIZE (1-65536)] [SLOTS (1-%u)]\n",
			SIGNAL * 10, SLOTS);
		return 2;
	}
	n = n / SIGNAL * SIGNAL;	/* (the last one signaled) */
	warm = n / 10 / SIGNAL * SIGNAL;
	eng = ring_engine_new();
	srnic_mem_init(&eng->mem, 42);
	eng->doorbell = rte_ring_create("db", 64, 0, RING_F_SC_DEQ);
	eng->calls = rte_ring_create("calls", 64, 0, RING_F_SC_DEQ);
	eng->node->loop = rte_ring_create("loop", 1024, 0, RING_F_SC_DEQ);
	eng->node->ctrl_rx = rte_ring_create("ctrl_rx", 1024, 0,
					     RING_F_SC_DEQ);
	if (!eng->doorbell || !eng->calls || !eng->node->loop ||
	    !eng->node->ctrl_rx)
		return 2;
	/* (a pool as the node's: engine.c's cache of 256 a thread and
	 * ring ops, so that a buffer's round trip costs what it does there) */
	ring_engine_start_pool(eng, rte_pktmbuf_pool_create_by_ops(
					    "insns", SRNIC_POOL_SIZE, 256, 0,
					    RTE_ALIGN_CEIL(RTE_PKTMBUF_HEADROOM +
								   SRNIC_MAX_OVERHEAD +
								   4096,
							   128),
					    rte_socket_id(), "ring_mt_rts"));
	/* (the engine's defaults: ACKs wait up to 20 us for company) */
	eng->tick_tsc = eng->tsc_per_us * 100;
	eng->ack_delay_tsc = eng->tsc_per_us * 20;
	self.up[0] = 1;
	self.inc = self.ok_inc = self.ready_inc = eng->node->inc;
	memcpy(self.mac[0], eng->node->port[0].mac, 6);
	cq = srnic_engine_create_cq(eng, 4096);
	slots = SLOTS < REGION_MAX / size ? SLOTS : REGION_MAX / size;
	if (want_slots && want_slots < slots)
		slots = want_slots;
	if (slots > warm + n)
		slots = warm + n;
	src = aligned_alloc(4096, RTE_ALIGN_CEIL(slots * size, 4096));
	dst = aligned_alloc(4096, RTE_ALIGN_CEIL(slots * size, 4096));
	if (!cq || !src || !dst)
		return 2;
	memset(dst, 0xee, slots * size);
	for (i = 0; i < slots; i++)
		memset(src + i * size, pattern(i), size);
	src_key = srnic_mem_register(&eng->mem, (uintptr_t)src,
				     slots * size,
				     SRNIC_ACCESS_LOCAL_WRITE, 1);
	dst_key = srnic_mem_register(&eng->mem, (uintptr_t)dst,
				     slots * size,
				     SRNIC_ACCESS_LOCAL_WRITE |
					     SRNIC_ACCESS_REMOTE_WRITE, 1);
	a = qp_make();
	b = qp_make();
	a->at.dest_qpn = b->q.qpn;
	b->at.dest_qpn = a->q.qpn;

	run(a, src_key, src, dst_key, dst, size, 0, warm, &iters);
	iters = 0;
	pkts = port_packets();
	tsc = rte_rdtsc();
	CALLGRIND_START_INSTRUMENTATION;
	if (run(a, src_key, src, dst_key, dst, size, warm, n, &iters) != n)
		return 1;
	CALLGRIND_STOP_INSTRUMENTATION;
	tsc = rte_rdtsc() - tsc;
	pkts = port_packets() - pkts;
	/* (every slot written, with its source's bytes) */
	for (i = 0; i < slots; i++)
		if (memcmp(dst + i * size, src + i * size, size)) {
			fprintf(stderr, "slot %llu: %#x landed, not %#x\n",
				(unsigned long long)i, dst[i * size],
				pattern(i));
			return 1;
		}
	printf("messages %llu size %u packets %llu iterations %llu "
	       "cycles_per_packet %.0f counted %d\n",
	       (unsigned long long)n, size, (unsigned long long)pkts,
	       (unsigned long long)iters, pkts ? (double)tsc / pkts : 0.0,
	       COUNTED);
	return 0;
}
