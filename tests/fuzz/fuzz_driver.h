/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz targets built on an oracle share (fuzz_request.c,
 * fuzz_cm.c): included after the target defines
 *
 *   static const char *oracle(const uint8_t *data, size_t size, int *rc);
 *
 * (NULL, or what is wrong with the parser's answer; *rc: its answer) and
 * FUZZ_NAME.  It makes the libFuzzer entry point, and, in the standalone
 * build (-DSRNIC_FUZZ_STANDALONE, a unit test), the check lines, a
 * deterministic generator for mutations and the seed writer.
 */
#ifndef SRNIC_FUZZ_DRIVER_H
#define SRNIC_FUZZ_DRIVER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int rc;
	const char *bad = oracle(data, size, &rc);

	if (bad) {
		fprintf(stderr, FUZZ_NAME ": %s\n", bad);
		abort();
	}
	return 0;
}

#ifdef SRNIC_FUZZ_STANDALONE

static unsigned checks, failed;

/* One check line: the oracle finds nothing wrong, and the answer is want. */
static void expect(const void *msg, size_t len, int want, const char *what)
{
	int rc;
	const char *bad = oracle(msg, len, &rc);

	checks++;
	if (bad || rc != want) {
		failed++;
		printf("not ok - %s: %s (rc %d, want %d)\n", what,
		       bad ? bad : "wrong answer", rc, want);
	} else {
		printf("ok - %s\n", what);
	}
}

/* xorshift64: the same mutations every run */
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* DIR/NAME holds msg: one input of libFuzzer's seed corpus.  0 or 1. */
static int write_seed(const char *dir, const char *name, const void *msg,
		      size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(msg, 1, len, f) != len) {
		perror(path);
		if (f)
			fclose(f);
		return 1;
	}
	return fclose(f) ? 1 : 0;
}

#endif
#endif
