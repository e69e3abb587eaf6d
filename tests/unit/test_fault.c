/* SPDX-License-Identifier: MIT */
/*
 * The receive-side fault injector (src/port/fault.c): the fault file as the
 * control core reads it, frames held back and handed on later in order, a
 * full FIFO that passes frames on rather than drop them, held frames
 * freed when the port stops, and corruption: one bit flipped in the share
 * of frames asked for, none in the others.  The port is DPDK's net_ring, which loops what
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
		struct rte_mbuf *m = rte_pktmbuf_alloc(eng->node->pool);
		uint32_t *seq = (uint32_t *)rte_pktmbuf_append(m, 64);

		*seq = next_seq++;
		srnic_port_tx(eng, 0, m);
		if (eng->txbuf[0].n == SRNIC_BURST)
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
	const struct srnic_fault *f = &eng->node->port[0].fault;
	uint64_t ms = eng->tsc_hz / 1000;

	fault_file("port 0 reorder=50% delay=20ms\n");
	CHECK(f->hold == 1ull << 31, "hold %lu", (unsigned long)f->hold);
	CHECK(f->delay_tsc == 20 * ms, "delay_tsc %lu",
	      (unsigned long)f->delay_tsc);
	fault_file("port 0 reorder=25%\nport 1 delay=500us\n");
	CHECK(f->hold == 1ull << 30 && f->delay_tsc == ms,
	      "reorder alone: default delay 1 ms");
	CHECK(eng->node->port[1].fault.hold == 1ull << 32 &&
	      eng->node->port[1].fault.delay_tsc == ms / 2,
	      "delay alone: every frame");
	fault_file("port 0 reorder=25% delay=2 ms\nport 1 jitter=1ms\n");
	CHECK(f->hold == 0 && eng->node->port[1].fault.hold == 0,
	      "a line that does not parse sets nothing");
	fault_file("port 0 reorder=0.5% delay=1.5ms\n");
	CHECK(f->hold == (uint64_t)(0.005 * 4294967296.0 + 0.5) &&
	      f->delay_tsc == 3 * ms / 2, "fractions");
	fault_file("port 0 corrupt=2.5%\n");
	CHECK(f->corrupt == (uint64_t)(0.025 * 4294967296.0 + 0.5) &&
	      f->hold == 0 && f->delay_tsc == 0, "corrupt alone holds nothing");
	fault_file("port 0 corrupt=101%\n");
	CHECK(f->corrupt == 0, "corrupt over 100%% taken");
	fault_file(NULL);
	CHECK(f->hold == 0 && f->delay_tsc == 0 && f->corrupt == 0,
	      "no file, no fault");
}

/* Bits in which a received frame differs from what frame seq was sent
 * with (byte i of frame s is s * 31 + i, after its 4-byte number). */
static unsigned flipped_bits(const struct rte_mbuf *m)
{
	const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t seq;
	unsigned i, bits = 0;

	memcpy(&seq, b, 4);
	for (i = 4; i < rte_pktmbuf_data_len(m); i++)
		bits += __builtin_popcount((uint8_t)(b[i] ^ (seq * 31 + i)));
	return bits;
}

/* Receive one burst: count[0] frames, count[1] with one bit flipped,
 * count[2] with more.  Returns how many came. */
static unsigned tally(unsigned count[3])
{
	struct rte_mbuf *pkts[SRNIC_BURST];
	uint16_t n = srnic_port_rx(eng, 0, pkts, SRNIC_BURST), i;

	for (i = 0; i < n; i++) {
		unsigned bits = flipped_bits(pkts[i]);

		count[0]++;
		count[bits > 1 ? 2 : 1] += bits > 0;
		rte_pktmbuf_free(pkts[i]);
	}
	return n;
}

static void test_corrupt(void)
{
	const unsigned total = 4000, len = 1000;
	unsigned count[3] = {0}, sent, k, empty = 0;
	unsigned got, damaged, wrong;
	uint64_t before = eng->node->port[0].fault.held[0].corrupted;

	/* The sequence number is outside the pattern so a flip there can
	 * not be told: the frames are long enough that it rarely is. */
	fault_file("port 0 corrupt=10%\n");
	for (sent = 0; sent < total; sent++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(eng->node->pool);
		uint8_t *b = (uint8_t *)rte_pktmbuf_append(m, len);

		memcpy(b, &sent, 4);
		for (k = 4; k < len; k++)
			b[k] = (uint8_t)(sent * 31 + k);
		srnic_port_tx(eng, 0, m);
		if (eng->txbuf[0].n == SRNIC_BURST)
			srnic_ports_flush(eng);
		while (tally(count))
			;
	}
	srnic_ports_flush(eng);
	while (empty < 3)
		empty = tally(count) ? 0 : empty + 1;
	fault_file(NULL);
	got = count[0];
	damaged = count[1];
	wrong = count[2];
	CHECK(got == total, "corruption lost frames: %u of %u", got, total);
	CHECK(wrong == 0, "%u frames with more than one bit flipped", wrong);
	/* 10% of 4000: 400, with a standard deviation of 19; a flip in the
	 * 4-byte number (0.4% of the bits) hides from this count. */
	CHECK(damaged >= 300 && damaged <= 500,
	      "%u of %u frames with one bit flipped, want about 400", damaged,
	      total);
	CHECK(eng->node->port[0].fault.held[0].corrupted - before >= damaged &&
		      eng->node->port[0].fault.held[0].corrupted - before <= damaged + 20,
	      "counted %lu corrupted, saw %u",
	      (unsigned long)(eng->node->port[0].fault.held[0].corrupted - before), damaged);
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
	CHECK(eng->node->port[0].fault.held[0].delayed == 0, "nothing delayed");
}

static void test_reorder(void)
{
	uint32_t seq[300], later[300];
	unsigned got, more, i, k = 0, after_later = 0;
	bool seen[200] = {false};
	uint64_t t0, delayed = eng->node->port[0].fault.held[0].delayed;

	fault_file("port 0 reorder=50% delay=20ms\n");
	next_seq = 0;
	t0 = srnic_now();
	send_frames(200);
	got = receive(seq, 300);
	CHECK(got >= 60 && got <= 140, "%u of 200 frames went straight on",
	      got);
	CHECK(eng->node->port[0].fault.held[0].delayed - delayed == 200 - got,
	      "delayed counts %lu held frames, %u were held",
	      (unsigned long)(eng->node->port[0].fault.held[0].delayed - delayed), 200 - got);
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
	unsigned in_use = rte_mempool_in_use_count(eng->node->pool), got;

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
	CHECK(rte_mempool_in_use_count(eng->node->pool) == in_use + SRNIC_FAULT_HOLD,
	      "held frames in use: %u", rte_mempool_in_use_count(eng->node->pool));
	srnic_ports_stop(eng);
	CHECK(rte_mempool_in_use_count(eng->node->pool) == in_use,
	      "after stop, %u mbufs still in use (%u before)",
	      rte_mempool_in_use_count(eng->node->pool), in_use);
}

int main(void)
{
	engine_up();
	test_file();
	test_clean();
	test_reorder();
	test_corrupt();
	test_full_and_stop();	/* (last: it stops the port) */
	unlink(fault_path);
	return check_summary("test_fault");
}
