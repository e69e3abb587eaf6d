/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for cm_msg_decode: every byte a peer's rdma_cm sends over
 * the connection exchange (provider/ucma/cm_msg.h) goes through it before
 * the CM thread acts on anything, so it must refuse garbage without
 * reading past what it was given, and whatever it accepts must be a
 * message that could have been sent: a known type, private data within
 * that type's limit, a 24-bit QP number and PSN, and bytes that encode
 * back to exactly what it took.
 *
 * Two builds of this file:
 *
 *   fuzz_cm           libFuzzer, clang only (tests/fuzz/run-fuzz.sh)
 *   test_cm_corpus    -DSRNIC_FUZZ_STANDALONE: a plain program (a unit
 *                     test): hostile messages of every kind, then a
 *                     deterministic corpus of mutated valid ones; with
 *                     --write-seeds DIR, one valid message of each type
 *                     as libFuzzer's seed corpus.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm_msg.h"

/* What an accepted message must be; NULL, or what is wrong. */
static const char *oracle(const uint8_t *data, size_t size, int *rc_out)
{
	uint8_t *copy = malloc(size ? size : 1), again[CM_MSG_MAX];
	struct cm_msg m;
	const char *bad = NULL;
	unsigned n;
	int rc;

	/* (a copy of exactly size bytes: ASan sees any read past it) */
	if (!copy)
		abort();
	memcpy(copy, data, size);
	rc = cm_msg_decode(copy, (unsigned)size, &m);
	*rc_out = rc;
	if (rc <= 0)
		goto out;
	if ((size_t)rc > size)
		bad = "took more bytes than it was given";
	else if (m.type < CM_REQ || m.type >= CM_TYPE_MAX)
		bad = "accepted an unknown type";
	else if (m.pd_len > cm_max_pd(m.type))
		bad = "accepted private data over the type's limit";
	else if (m.qpn >> 24 || m.psn >> 24 || m.retry > 7 || m.rnr_retry > 7)
		bad = "a field out of its range";
	else if ((n = cm_msg_encode(&m, again)) != (unsigned)rc)
		bad = "does not encode back to its length";
	else if (memcmp(again + CM_HDR_LEN + CM_FIXED_LEN,
			copy + CM_HDR_LEN + CM_FIXED_LEN, m.pd_len))
		bad = "private data that is not what came";
out:
	free(copy);
	return bad;
}

#define FUZZ_NAME "fuzz_cm"
#include "fuzz_driver.h"

#ifdef SRNIC_FUZZ_STANDALONE

/* A valid message of type t with its largest private data. */
static unsigned valid(uint8_t type, uint8_t *buf)
{
	struct cm_msg m = {.type = type, .qpn = 0x123456, .psn = 0xabcdef,
			   .qkey = 0x01234567, .resp_res = 4, .init_depth = 4,
			   .retry = 7, .rnr_retry = 7};

	m.pd_len = (uint8_t)cm_max_pd(type);
	for (unsigned i = 0; i < m.pd_len; i++)
		m.pd[i] = (uint8_t)(i * 13);
	return cm_msg_encode(&m, buf);
}

int main(int argc, char **argv)
{
	uint8_t buf[CM_MSG_MAX + 16], t[CM_MSG_MAX + 16], two[2 * CM_MSG_MAX];
	struct cm_msg m = {0};
	unsigned i, len, accepted = 0;
	int rc;

	if (argc == 3 && !strcmp(argv[1], "--write-seeds")) {
		int rc_seeds = 0;

		for (uint8_t ty = CM_REQ; ty < CM_TYPE_MAX; ty++) {
			char name[16];

			snprintf(name, sizeof(name), "type%u", ty);
			rc_seeds |= write_seed(argv[2], name, buf,
					       valid(ty, buf));
		}
		return rc_seeds;
	}

	for (uint8_t ty = CM_REQ; ty < CM_TYPE_MAX; ty++) {
		len = valid(ty, buf);
		expect(buf, len, (int)len, "a well-formed message");
		expect(buf, len - 1, 0, "one byte short: more is needed");
	}
	len = valid(CM_REQ, buf);
	expect(buf, 3, 0, "shorter than a header: more is needed");
	expect(buf, 0, 0, "nothing yet");
	memcpy(two, buf, len);
	memcpy(two + len, buf, len);
	expect(two, 2 * len, (int)len, "two messages: the first one taken");
	memcpy(t, buf, len);
	t[0] ^= 1;
	expect(t, len, -1, "another magic");
	memcpy(t, buf, len);
	t[4] = CM_VERSION + 1;
	expect(t, len, -1, "another version");
	t[4] = CM_VERSION - 1;
	expect(t, len, -1, "the version before");
	memcpy(t, buf, len);
	t[5] = 0;
	expect(t, len, -1, "type 0");
	t[5] = CM_TYPE_MAX;
	expect(t, len, -1, "a type past the last");
	memcpy(t, buf, len);
	t[28]++;
	expect(t, len, -1, "private data longer than the body");
	memcpy(t, buf, len);
	t[6] = 0xff;
	expect(t, len, -1, "a body longer than any message");
	memcpy(t, buf, len);
	t[7] = CM_FIXED_LEN - 1;
	t[6] = 0;
	expect(t, len, -1, "a body shorter than its fixed part");
	/* a REQ body that carries a REP's worth of private data */
	m.type = CM_REP;
	m.pd_len = 100;
	len = cm_msg_encode(&m, t);
	t[5] = CM_REQ;
	expect(t, len, -1, "a REQ with more private data than a REQ holds");
	m.type = CM_DREQ;
	m.pd_len = 1;
	expect(t, cm_msg_encode(&m, t), 0,
	       "(encode refuses private data a DREQ cannot hold)");

	/* Mutations of valid messages: bytes flipped, cut, grown. */
	for (i = 0; i < 200000; i++) {
		uint8_t ty = (uint8_t)(CM_REQ + next() % (CM_TYPE_MAX - 1));
		unsigned k, flips = 1 + next() % 4;
		const char *bad;

		len = valid(ty, buf);
		for (k = 0; k < flips; k++)
			buf[next() % len] ^= (uint8_t)(1u << (next() % 8));
		if (next() % 8 == 0)
			len = (unsigned)(next() % sizeof(buf));
		bad = oracle(buf, len, &rc);
		accepted += rc > 0;
		if (bad) {
			failed++;
			printf("not ok - mutation %u: %s\n", i, bad);
			break;
		}
	}
	checks++;
	printf("ok - 200000 mutated messages, %u accepted, none wrongly\n",
	       accepted);
	printf("# %u checks, %u failed\n", checks, failed);
	return failed ? 1 : 0;
}

#endif
