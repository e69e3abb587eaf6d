/* SPDX-License-Identifier: MIT */
/*
 * What the frame CRC costs the CPU: cycles per frame and per byte of
 * srnic_wire_crc (ISA-L's crc32_iscsi) at frame sizes from an ACK to a
 * jumbo frame, once with the frame in cache (a frame just written) and
 * once streaming through memory that is not (as a receiver meets a frame
 * a port just wrote).  DPDK's rte_hash_crc, the other well-kept CRC-32C
 * at hand, beside it.  Prints a Markdown table.
 *
 *   crc_cost [MILLISECONDS per cell]     (default 300)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include <rte_hash_crc.h>

#include "srnic_wire.h"

#define STREAM_BYTES (256u << 20)	/* far past any cache here */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The TSC's rate, against the monotonic clock over 200 ms. */
static double tsc_hz(void)
{
	double t0 = now_s();
	uint64_t c0 = __rdtsc();

	while (now_s() - t0 < 0.2)
		;
	return (__rdtsc() - c0) / (now_s() - t0);
}

static uint32_t dpdk_crc(const void *buf, uint32_t len, uint32_t crc)
{
	return ~rte_hash_crc(buf, len, ~crc);
}

typedef uint32_t crc_fn(const void *, uint32_t, uint32_t);

/* Cycles per frame of fn over frames of len bytes: in cache (the same
 * frame again and again) or streaming (consecutive frames of buf). */
static double cycles_per_frame(crc_fn *fn, const uint8_t *buf, uint32_t len,
			       int stream, double secs, uint32_t *sink)
{
	uint64_t frames = 0, c0, c;
	size_t off = 0, span = stream ? STREAM_BYTES / len * len : len;
	double t0 = now_s();

	c0 = __rdtsc();
	do {
		unsigned i;

		for (i = 0; i < 256; i++) {
			*sink ^= fn(buf + off, len, 0);
			off += stream ? len : 0;
			if (off >= span)
				off = 0;
		}
		frames += 256;
	} while (now_s() - t0 < secs);
	c = __rdtsc() - c0;
	return (double)c / frames;
}

int main(int argc, char **argv)
{
	static const uint32_t sizes[] = {70, 256, 1024, 2048, 4096, 8192};
	double secs = (argc > 1 ? atoi(argv[1]) : 300) / 1000.0, hz;
	uint8_t *buf = malloc(STREAM_BYTES);
	uint32_t sink = 0;
	size_t i;

	if (!buf || secs <= 0) {
		fprintf(stderr, "usage: crc_cost [MILLISECONDS per cell]\n");
		return 2;
	}
	for (i = 0; i < STREAM_BYTES; i++)
		buf[i] = (uint8_t)(i * 2654435761u >> 24);
	if (srnic_wire_crc(buf, 4096, 0) != dpdk_crc(buf, 4096, 0)) {
		fprintf(stderr, "crc_cost: ISA-L and DPDK disagree\n");
		return 1;
	}
	hz = tsc_hz();
	printf("TSC %.2f GHz; cycles per frame (and per byte) of CRC-32C\n\n",
	       hz / 1e9);
	printf("| frame bytes | ISA-L, in cache | ISA-L, from memory | "
	       "DPDK rte_hash_crc, in cache | ISA-L GB/s in cache |\n");
	printf("|---|---|---|---|---|\n");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t n = sizes[i];
		double hot = cycles_per_frame(srnic_wire_crc, buf, n, 0, secs,
					      &sink);
		double cold = cycles_per_frame(srnic_wire_crc, buf, n, 1, secs,
					       &sink);
		double dpdk = cycles_per_frame(dpdk_crc, buf, n, 0, secs,
					       &sink);

		printf("| %u | %.0f (%.3f) | %.0f (%.3f) | %.0f (%.3f) | "
		       "%.1f |\n",
		       n, hot, hot / n, cold, cold / n, dpdk, dpdk / n,
		       n / hot * hz / 1e9);
	}
	free(buf);
	return sink == 0x12345678;	/* (keeps the work) */
}
