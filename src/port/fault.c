/* SPDX-License-Identifier: MIT */
/*
 * Receive-side fault injection: delay, reordering and corruption for the
 * testbed, whose kernel has no netem.  Each port may hold back a share of
 * the frames it receives for a fixed time and hand them to the datapath
 * after the frames that arrived meanwhile, and may flip one bit in a share
 * of them: past any checksum the wire has, which is what the frames' own
 * CRC (wire.c) is there to catch.
 *
 * The setting comes from the configuration's fault_file, which
 * "./srnic testbed fault" writes, one line per faulty port:
 *
 *     port 0 reorder=25% delay=1ms corrupt=1%
 *
 * reorder=P% holds each received frame with probability P (default 100%
 * when only a delay is given); delay=T holds it that long (us, ms or s;
 * default 1 ms when only reorder is given); corrupt=P% flips one random bit
 * of each frame with probability P.  A port the file does not name, or a
 * missing file, has no fault.  The file thread (files.c) looks at the
 * file every FILE_CHECK_MS (every 500 ms while the node sleeps) and
 * publishes what it read with atomic stores, then which file that was
 * (its inode and mtime, in the stats): "./srnic testbed fault" returns
 * once srnicd's stats name the file it wrote, so a transfer started next
 * meets the fault from its first frame.
 *
 * On the datapath, a port without a fault and nothing held costs one
 * branch per receive burst (srnic_port_rx, srnic_port_rx_steered).  Held
 * frames wait in a FIFO of SRNIC_FAULT_HOLD, one for each class that
 * receives (steering: a class polls its own queues, beside class 0's
 * pollers); the delay is the same for every frame, so release times are in
 * order and only the head is checked.  A frame that finds the FIFO full
 * goes on at once: the injector never drops.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "srnic_port.h"

#define FILE_CHECK_MS 100
#define DEFAULT_DELAY_US 1000
#define MAX_DELAY_US 1000000
#define HOLD_ALL (1ull << 32)

static inline uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/* BYE and BYE_ACK are never held or damaged: a peer leaving a memif link
 * waits only so long for its answer before it unmaps the link under us. */
static inline bool leaving(const struct rte_mbuf *m)
{
	uint8_t op = srnic_wire_peek_opcode(rte_pktmbuf_mtod(m, const uint8_t *),
					    rte_pktmbuf_data_len(m));

	return op == SRNIC_OP_BYE || op == SRNIC_OP_BYE_ACK;
}

/* One random bit of m's frame, in whichever segment it lies. */
static void flip_bit(struct rte_mbuf *m, uint64_t r)
{
	uint32_t bit = (uint32_t)(r % ((uint64_t)rte_pktmbuf_pkt_len(m) * 8));

	while (m && bit >= (uint32_t)m->data_len * 8) {
		bit -= m->data_len * 8;
		m = m->next;
	}
	if (m)
		*rte_pktmbuf_mtod_offset(m, uint8_t *, bit / 8) ^=
			(uint8_t)(1u << (bit % 8));
}

/*
 * Datapath: pkts[0..got) were just received on port p by class cls's
 * poller (room for n).  Holds some of them back and appends the held
 * frames whose time has come, after the new ones.  Returns how many
 * frames pkts now has.
 */
uint16_t srnic_fault_rx(struct srnic_engine *eng, unsigned p, unsigned cls,
			struct rte_mbuf **pkts, uint16_t got, uint16_t n)
{
	struct srnic_fault *f = &eng->node->port[p].fault;
	struct srnic_fault_held *h = &f->held[cls];
	uint64_t hold = __atomic_load_n(&f->hold, __ATOMIC_RELAXED);
	uint64_t corrupt = __atomic_load_n(&f->corrupt, __ATOMIC_RELAXED);
	uint64_t now = srnic_now();
	uint16_t i, kept = 0;

	if (!h->rng)
		h->rng = ((uint64_t)eng->node->inc << 16 | (cls + 1) << 8 |
			  (p + 1)) * 0x9e3779b97f4a7c15ull | 1;
	if (corrupt)
		for (i = 0; i < got; i++)
			if ((xorshift64(&h->rng) >> 32) < corrupt &&
			    rte_pktmbuf_pkt_len(pkts[i]) && !leaving(pkts[i])) {
				flip_bit(pkts[i], xorshift64(&h->rng));
				h->corrupted++;
			}
	if (hold && got) {
		uint64_t due = now + __atomic_load_n(&f->delay_tsc,
						     __ATOMIC_RELAXED);

		for (i = 0; i < got; i++) {
			if ((xorshift64(&h->rng) >> 32) < hold &&
			    h->tail - h->head < SRNIC_FAULT_HOLD &&
			    !leaving(pkts[i])) {
				uint32_t k = h->tail++ & (SRNIC_FAULT_HOLD - 1);

				h->m[k] = pkts[i];
				h->due[k] = due;
				h->delayed++;
			} else {
				pkts[kept++] = pkts[i];
			}
		}
	} else {
		kept = got;
	}
	while (kept < n && h->head != h->tail &&
	       h->due[h->head & (SRNIC_FAULT_HOLD - 1)] <= now)
		pkts[kept++] = h->m[h->head++ & (SRNIC_FAULT_HOLD - 1)];
	return kept;
}

/* Free what the port holds, for every class (it stops, or restarts: a
 * new life of the link).  The caller owns the port's datapath side, and
 * no class is in its queues (srnic_port_classes_out). */
void srnic_fault_drop(struct srnic_port *port)
{
	unsigned c;

	for (c = 0; c < SRNIC_MAX_CLASSES; c++) {
		struct srnic_fault_held *h = &port->fault.held[c];

		while (h->head != h->tail)
			rte_pktmbuf_free(
				h->m[h->head++ & (SRNIC_FAULT_HOLD - 1)]);
	}
}

/* ---- the fault file (file thread) ---- */

struct port_fault {
	uint64_t hold;
	uint64_t delay_us;
	uint64_t corrupt;
};

/* "25%", "0.5%" or "25" -> the hold threshold (of 2^32); -1 if bad. */
static int parse_share(const char *s, uint64_t *hold)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || (*end && strcmp(end, "%")) || !(v >= 0) ||
	    v > 100)
		return -1;
	*hold = (uint64_t)(v / 100 * (double)HOLD_ALL + 0.5);
	return 0;
}

/* "500us", "2ms", "1.5ms", "0.1s" -> microseconds; -1 if bad. */
static int parse_delay(const char *s, uint64_t *us)
{
	char *end;
	double v, scale;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0))
		return -1;
	if (!strcmp(end, "us"))
		scale = 1;
	else if (!strcmp(end, "ms"))
		scale = 1000;
	else if (!strcmp(end, "s"))
		scale = 1000000;
	else
		return -1;
	v *= scale;
	if (v > MAX_DELAY_US)
		return -1;
	*us = (uint64_t)(v + 0.5);
	return 0;
}

/* One "port N reorder=P% delay=T corrupt=P%" line into pf[N]; a line that
 * does not parse is ignored whole. */
static void parse_line(char *line, struct port_fault *pf)
{
	struct port_fault v = {0};
	int have_hold = 0, have_delay = 0;
	char *tok, *save;
	unsigned p;

	tok = strtok_r(line, " \t\n", &save);
	if (!tok || strcmp(tok, "port"))
		return;
	tok = strtok_r(NULL, " \t\n", &save);
	if (!tok || sscanf(tok, "%u", &p) != 1 || p >= SRNIC_MAX_PORTS)
		return;
	while ((tok = strtok_r(NULL, " \t\n", &save)) != NULL) {
		if (!strncmp(tok, "reorder=", 8) && !parse_share(tok + 8, &v.hold))
			have_hold = 1;
		else if (!strncmp(tok, "delay=", 6) &&
			 !parse_delay(tok + 6, &v.delay_us))
			have_delay = 1;
		else if (strncmp(tok, "corrupt=", 8) ||
			 parse_share(tok + 8, &v.corrupt))
			return;
	}
	if (!have_hold && have_delay)
		v.hold = HOLD_ALL;
	if (have_hold && !have_delay)
		v.delay_us = DEFAULT_DELAY_US;
	if (!v.delay_us)
		v.hold = 0;
	pf[p] = v;
}

static void publish(struct srnic_engine *eng, const struct port_fault *pf)
{
	unsigned p;

	for (p = 0; p < SRNIC_MAX_PORTS; p++) {
		struct srnic_fault *f = &eng->node->port[p].fault;

		__atomic_store_n(&f->delay_tsc,
				 pf[p].delay_us * eng->tsc_hz / 1000000,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&f->hold, pf[p].hold, __ATOMIC_RELAXED);
		__atomic_store_n(&f->corrupt, pf[p].corrupt, __ATOMIC_RELAXED);
	}
}

/*
 * The file thread, every tick: at most every FILE_CHECK_MS, stat the fault
 * file and read it again when it changed (or went away).  One engine per
 * process, so what was seen last can live here.
 */
void srnic_fault_poll(struct srnic_engine *eng)
{
	static const struct srnic_engine *seen_eng;
	static uint64_t next_ms;
	static struct stat seen;	/* st_ino 0: no file */
	struct port_fault pf[SRNIC_MAX_PORTS];
	uint64_t now = srnic_ms();
	struct stat st;
	char line[256];
	FILE *f;

	if (!eng->cfg.fault_file[0] || (eng == seen_eng && now < next_ms))
		return;
	next_ms = now + FILE_CHECK_MS;
	if (stat(eng->cfg.fault_file, &st))
		memset(&st, 0, sizeof(st));
	if (eng == seen_eng && st.st_ino == seen.st_ino &&
	    st.st_size == seen.st_size &&
	    st.st_mtim.tv_sec == seen.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == seen.st_mtim.tv_nsec)
		return;
	seen_eng = eng;
	seen = st;
	memset(pf, 0, sizeof(pf));
	f = st.st_ino ? fopen(eng->cfg.fault_file, "r") : NULL;
	if (f) {
		while (fgets(line, sizeof(line), f))
			parse_line(line, pf);
		fclose(f);
	}
	publish(eng, pf);
	__atomic_store_n(&eng->fault_ino, (uint64_t)st.st_ino,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&eng->fault_mtime_ns,
			 (uint64_t)st.st_mtim.tv_sec * 1000000000ull +
				 (uint64_t)st.st_mtim.tv_nsec,
			 __ATOMIC_RELEASE);
}
