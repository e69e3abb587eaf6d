/* SPDX-License-Identifier: MIT */
/*
 * The receive-side fault injector (src/port/fault.c): the fault file as the
 * control core reads it, frames held back and handed on later in order, a
 * full FIFO that passes frames on rather than drop them, and held frames
 * freed when the port stops.  The port is DPDK's net_ring, which loops what
 * the engine transmits back to its receive side.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "check.h"
#include "engine_internal.h"
#include "ring_engine.h"

static struct srnic_engine *eng;
static char fault_path[64];
static uint32_t next_seq;

static void engine_up(void)
{
	eng = ring_engine_new();
	snprintf(fault_path, sizeof(fault_path), "/tmp/srnic-test-fault.%d",
		 (int)getpid());
	snprintf(eng->cfg.fault_file, sizeof(eng->cfg.fault_file), "%s",
		 fault_path);
	ring_engine_start(eng, 2048);
}

/* Write the fault file and let the control core's poll see it (it looks
 * at most every 100 ms). */
static void fault_file(const char *text)
{
	FILE *f;

	if (text) {
		f = fopen(fault_path, "w");
		fputs(text, f);
		fclose(f);
	} else {
		unlink(fault_path);
	}
	usleep(110 * 1000);
	srnic_fault_poll(eng);
}

/* Send count frames numbered from next_seq through the loop. */
static void send_frames(unsigned count)
{
	while (count--) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(eng->pool);
		uint32_t *seq = (uint32_t *)rte_pktmbuf_append(m, 64);

		*seq = next_seq++;
		srnic_port_tx(eng, 0, m);
		if (eng->port[0].ntx == SRNIC_BURST)
			srnic_ports_flush(eng);
	}
	srnic_ports_flush(eng);
}

/* Receive what the port hands on now; their numbers go to seq[]. */
static unsigned receive(uint32_t *seq, unsigned max)
{
	struct rte_mbuf *pkts[SRNIC_BURST];
	unsigned got = 0, empty = 0;

	while (empty < 3) {
		uint16_t n = srnic_port_rx(eng, 0, pkts, SRNIC_BURST), i;

		empty = n ? 0 : empty + 1;
		for (i = 0; i < n; i++) {
			if (got < max)
				seq[got++] = *rte_pktmbuf_mtod(pkts[i],
							       uint32_t *);
			rte_pktmbuf_free(pkts[i]);
		}
	}
	return got;
}

static void test_file(void)
{
	const struct srnic_fault *f = &eng->port[0].fault;
	uint64_t ms = eng->tsc_hz / 1000;

	fault_file("port 0 reorder=50% delay=20ms\n");
	CHECK(f->hold == 1ull << 31, "hold %lu", (unsigned long)f->hold);
	CHECK(f->delay_tsc == 20 * ms, "delay_tsc %lu",
	      (unsigned long)f->delay_tsc);
	fault_file("port 0 reorder=25%\nport 1 delay=500us\n");
	CHECK(f->hold == 1ull << 30 && f->delay_tsc == ms,
	      "reorder alone: default delay 1 ms");
	CHECK(eng->port[1].fault.hold == 1ull << 32 &&
	      eng->port[1].fault.delay_tsc == ms / 2,
	      "delay alone: every frame");
	fault_file("port 0 reorder=25% delay=2 ms\nport 1 jitter=1ms\n");
	CHECK(f->hold == 0 && eng->port[1].fault.hold == 0,
	      "a line that does not parse sets nothing");
	fault_file("port 0 reorder=0.5% delay=1.5ms\n");
	CHECK(f->hold == (uint64_t)(0.005 * 4294967296.0 + 0.5) &&
	      f->delay_tsc == 3 * ms / 2, "fractions");
	fault_file(NULL);
	CHECK(f->hold == 0 && f->delay_tsc == 0, "no file, no fault");
}

static void test_clean(void)
{
	uint32_t seq[300];
	unsigned got, i;

	next_seq = 0;
	send_frames(200);
	got = receive(seq, 300);
	CHECK(got == 200, "no fault: %u of 200 frames", got);
	for (i = 0; i < got; i++)
		if (!CHECK(seq[i] == i, "no fault: frame %u is %u", i, seq[i]))
			break;
	CHECK(eng->port[0].st.delayed == 0, "nothing delayed");
}

static void test_reorder(void)
{
	uint32_t seq[300], later[300];
	unsigned got, more, i, k = 0, after_later = 0;
	bool seen[200] = {false};
	uint64_t t0, delayed = eng->port[0].st.delayed;

	fault_file("port 0 reorder=50% delay=20ms\n");
	next_seq = 0;
	t0 = srnic_now();
	send_frames(200);
	got = receive(seq, 300);
	CHECK(got >= 60 && got <= 140, "%u of 200 frames went straight on",
	      got);
	CHECK(eng->port[0].st.delayed - delayed == 200 - got,
	      "delayed counts %lu held frames, %u were held",
	      (unsigned long)(eng->port[0].st.delayed - delayed), 200 - got);
	/* The held frames wait their 20 ms (they were received after t0). */
	more = 0;
	while (more < 200 - got &&
	       srnic_now() - t0 < eng->tsc_hz / 1000 * 100) {
		unsigned n = receive(later + more, 300 - more);

		if (n)
			CHECK(srnic_now() - t0 >= eng->tsc_hz / 1000 * 20,
			      "%u held frames came out before their time", n);
		more += n;
	}
	CHECK(got + more == 200, "%u + %u frames of 200", got, more);
	for (i = 0; i < got; i++)
		seen[seq[i]] = true;
	for (i = 0; i < more && i < 300; i++) {
		if (later[i] >= 200 || seen[later[i]])
			break;
		seen[later[i]] = true;
		if (later[i] < seq[got - 1])
			after_later++;
		if (i && later[i] < later[i - 1])
			k++;
	}
	CHECK(i == more, "a held frame twice, or not one of ours");
	CHECK(k == 0, "held frames out of their order: %u", k);
	CHECK(after_later > 0, "no held frame was overtaken");
	fault_file(NULL);
}

/* Every frame held and the FIFO full: the rest go straight on; then the
 * port stops and every held frame goes back to the pool. */
static void test_full_and_stop(void)
{
	uint32_t seq[2048];
	unsigned in_use = rte_mempool_in_use_count(eng->pool), got;

	fault_file("port 0 delay=1s\n");
	next_seq = 0;
	for (got = 0; next_seq < SRNIC_FAULT_HOLD + 100;) {
		/* No more at once than the loop's ring takes. */
		send_frames(RTE_MIN(100u, SRNIC_FAULT_HOLD + 100 - next_seq));
		got += receive(seq + got, 2048 - got);
	}
	CHECK(got == 100, "FIFO full: %u frames went straight on, not 100",
	      got);
	CHECK(got && seq[0] == SRNIC_FAULT_HOLD,
	      "the first frame past a full FIFO is %u", got ? seq[0] : 0);
	CHECK(rte_mempool_in_use_count(eng->pool) == in_use + SRNIC_FAULT_HOLD,
	      "held frames in use: %u", rte_mempool_in_use_count(eng->pool));
	srnic_ports_stop(eng);
	CHECK(rte_mempool_in_use_count(eng->pool) == in_use,
	      "after stop, %u mbufs still in use (%u before)",
	      rte_mempool_in_use_count(eng->pool), in_use);
}

int main(void)
{
	engine_up();
	test_file();
	test_clean();
	test_reorder();
	test_full_and_stop();
	unlink(fault_path);
	return check_summary("test_fault");
}
