/* SPDX-License-Identifier: MIT */
/*
 * ./srnic capture on a memif port: the request it leaves in the node's
 * capture_file ("port P count C file PATH"), served by the node's file
 * thread (files.c), which owns the capture from start to end.  It turns
 * the port's tap on (src/port/tap.c), writes the copies the datapaths
 * put in the tap's slots to PATH as a pcap file (nanosecond timestamps),
 * and once COUNT frames are written, or the request is gone, turns the
 * tap off and leaves its result in capture_file.done: "captured N
 * dropped D", or "error: ...".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "srnic_control.h"

static struct {
	bool on;
	FILE *out;
	uint64_t want, written, dropped0;
	uint64_t base_tsc, base_ns, hz;
} cap;

bool srnic_capture_active(void)
{
	return cap.on;
}

static void done(struct srnic_engine *eng, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void done(struct srnic_engine *eng, const char *fmt, ...)
{
	char path[300], tmp[310];
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s.done", eng->cfg.capture_file);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (f) {
		va_start(ap, fmt);
		vfprintf(f, fmt, ap);
		va_end(ap);
		fputc('\n', f);
		if (fclose(f) == 0)
			rename(tmp, path);
	}
	unlink(eng->cfg.capture_file);
}

static void put32(FILE *f, uint32_t v)
{
	fwrite(&v, 4, 1, f);	/* (pcap: the writer's byte order) */
}

/* The copies waiting in the tap, dropped: their slots given back. */
static void discard(struct srnic_tap *t)
{
	void *idx[64];
	unsigned n;

	while ((n = rte_ring_dequeue_burst(t->full, idx, 64, NULL)))
		rte_ring_enqueue_bulk(t->free, idx, n, NULL);
}

static int start(struct srnic_engine *eng)
{
	struct srnic_tap *t = &eng->node->tap;
	char line[400], file[300];
	unsigned port;
	unsigned long long count;
	struct timespec ts;
	FILE *r = fopen(eng->cfg.capture_file, "r");

	if (!r)
		return 0;	/* nothing asked */
	if (!fgets(line, sizeof(line), r)) {
		fclose(r);
		return 0;	/* (being written: next tick) */
	}
	fclose(r);
	if (sscanf(line, "port %u count %llu file %299s", &port, &count,
		   file) != 3) {
		done(eng, "error: a request is \"port P count C file PATH\"");
		return -1;
	}
	if (port >= eng->node->nports || !t->slots) {
		done(eng, "error: node has no port %u", port);
		return -1;
	}
	cap.out = fopen(file, "wb");
	if (!cap.out) {
		done(eng, "error: cannot write %s: %s", file, strerror(errno));
		return -1;
	}
	/* pcap, nanosecond timestamps, Ethernet */
	put32(cap.out, 0xa1b23c4d);
	fwrite(&(uint16_t){2}, 2, 1, cap.out);
	fwrite(&(uint16_t){4}, 2, 1, cap.out);
	put32(cap.out, 0);
	put32(cap.out, 0);
	put32(cap.out, SRNIC_TAP_SNAP);
	put32(cap.out, 1);
	discard(t);	/* (stale: from a capture that ended before) */
	clock_gettime(CLOCK_REALTIME, &ts);
	cap.base_ns = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	cap.base_tsc = rte_get_tsc_cycles();
	cap.hz = rte_get_tsc_hz();
	cap.want = count;
	cap.written = 0;
	cap.dropped0 = __atomic_load_n(&t->dropped, __ATOMIC_RELAXED);
	cap.on = true;
	__atomic_store_n(&t->ports, 1u << port, __ATOMIC_RELEASE);
	return 0;
}

static void write_slot(const struct srnic_tap_slot *s)
{
	int64_t d = (int64_t)(s->tsc - cap.base_tsc);
	uint64_t ns = cap.base_ns + (uint64_t)((double)d * 1e9 / cap.hz);

	put32(cap.out, (uint32_t)(ns / 1000000000ull));
	put32(cap.out, (uint32_t)(ns % 1000000000ull));
	put32(cap.out, s->caplen);
	put32(cap.out, s->len);
	fwrite(s->data, 1, s->caplen, cap.out);
	cap.written++;
}

/* The copies waiting in the tap, written out (as far as COUNT) and their
 * slots given back. */
static void drain(struct srnic_tap *t)
{
	void *idx[64];
	unsigned n, i;

	while ((!cap.want || cap.written < cap.want) &&
	       (n = rte_ring_dequeue_burst(t->full, idx, 64, NULL))) {
		for (i = 0; i < n && (!cap.want || cap.written < cap.want); i++)
			write_slot(&t->slots[(uintptr_t)idx[i] - 1]);
		rte_ring_enqueue_bulk(t->free, idx, n, NULL);
	}
}

static void stop(struct srnic_engine *eng)
{
	struct srnic_tap *t = &eng->node->tap;
	uint64_t dropped;
	int rc;

	__atomic_store_n(&t->ports, 0, __ATOMIC_RELEASE);
	usleep(1000);	/* (a burst that saw it on finishes its copies) */
	drain(t);
	discard(t);	/* (past COUNT) */
	dropped = __atomic_load_n(&t->dropped, __ATOMIC_RELAXED) -
		  cap.dropped0;
	rc = fclose(cap.out);
	cap.on = false;
	if (rc)
		done(eng, "error: writing the capture: %s", strerror(errno));
	else
		done(eng, "captured %llu dropped %llu",
		     (unsigned long long)cap.written,
		     (unsigned long long)dropped);
}

/* The file thread, each tick (every millisecond while a capture runs). */
void srnic_capture_poll(struct srnic_engine *eng)
{
	if (!eng->cfg.capture_file[0])
		return;
	if (!cap.on) {
		start(eng);
		return;
	}
	drain(&eng->node->tap);
	if ((cap.want && cap.written >= cap.want) ||
	    access(eng->cfg.capture_file, F_OK))
		stop(eng);
}
