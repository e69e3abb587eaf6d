/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for srnicd_req_parse: every message a process sends srnicd
 * goes through it before srnicd acts on anything, so it must refuse
 * garbage without reading past the message, and whatever it accepts must
 * be a request srnicd can trust: a known operation, a message of exactly
 * that operation's size, and a program name that ends inside its field and
 * is printable.
 *
 * Two builds of this file:
 *
 *   fuzz_request          libFuzzer, clang only (tests/fuzz/run-fuzz.sh)
 *   test_request_corpus   -DSRNIC_FUZZ_STANDALONE: a plain program (a unit
 *                         test): hostile requests of every kind, then a
 *                         deterministic corpus of mutated valid ones;
 *                         with --write-seeds DIR, one valid request of
 *                         each operation as libFuzzer's seed corpus.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srnicd_proto.h"

/* What an accepted request must be; NULL, or what is wrong. */
static const char *oracle(const uint8_t *data, size_t size, int *rc_out)
{
	struct srnicd_req req;
	struct srnicd_hdr h;
	uint8_t *copy = malloc(size ? size : 1);
	const char *bad = NULL;
	size_t i;
	int rc;

	/* (a copy of exactly size bytes: ASan sees any read past it) */
	if (!copy)
		abort();
	memcpy(copy, data, size);
	rc = srnicd_req_parse(copy, size, &req);
	*rc_out = rc;
	if (rc) {
		if (rc != -EPROTO && rc != -EOPNOTSUPP && rc != -EINVAL)
			bad = "an error other than EPROTO, EOPNOTSUPP, EINVAL";
		goto out;
	}
	memcpy(&h, copy, sizeof(h));
	if (h.magic != SRNICD_MAGIC || h.version != SRNICD_VERSION ||
	    h.len != size)
		bad = "accepted a header that is not ours";
	else if (req.op <= 0 || req.op >= SRNICD_OP_MAX || req.op != h.op)
		bad = "accepted an unknown operation";
	else if (req.op == SRNICD_OP_ATTACH &&
		 size != sizeof(struct srnicd_attach_req))
		bad = "accepted an ATTACH of the wrong size";
	else if (req.op != SRNICD_OP_ATTACH && size != sizeof(h))
		bad = "accepted a bare request of the wrong size";
	if (!bad && !memchr(req.prog, '\0', sizeof(req.prog)))
		bad = "a program name without its end";
	for (i = 0; !bad && req.prog[i]; i++)
		if (req.prog[i] < 0x20 || req.prog[i] > 0x7e)
			bad = "an unprintable program name";
out:
	free(copy);
	return bad;
}

#define FUZZ_NAME "fuzz_request"
#include "fuzz_driver.h"

#ifdef SRNIC_FUZZ_STANDALONE

int main(int argc, char **argv)
{
	struct srnicd_attach_req a, t;
	struct srnicd_hdr h;
	uint8_t big[sizeof(a) * 4], buf[sizeof(a) + 8];
	unsigned i, accepted = 0;
	int rc;

	memset(&a, 0, sizeof(a));
	srnicd_hdr_init(&a.hdr, SRNICD_OP_ATTACH, sizeof(a), 0);
	strcpy(a.prog, "ib_write_bw");
	srnicd_hdr_init(&h, SRNICD_OP_STATS, sizeof(h), 0);
	if (argc == 3 && !strcmp(argv[1], "--write-seeds")) {
		struct srnicd_hdr s;

		srnicd_hdr_init(&s, SRNICD_OP_SHUTDOWN, sizeof(s), 0);
		return write_seed(argv[2], "attach", &a, sizeof(a)) |
		       write_seed(argv[2], "stats", &h, sizeof(h)) |
		       write_seed(argv[2], "shutdown", &s, sizeof(s));
	}

	expect(&a, sizeof(a), 0, "a well-formed ATTACH");
	expect(&h, sizeof(h), 0, "a well-formed STATS");
	expect(&a, 3, -EPROTO, "shorter than a header");
	expect(&a, 0, -EPROTO, "empty");
	expect(&a, sizeof(a) - 1, -EPROTO, "an ATTACH cut short");
	memset(big, 0x41, sizeof(big));
	memcpy(big, &a, sizeof(a));
	((struct srnicd_hdr *)big)->len = sizeof(big);
	expect(big, sizeof(big), -EPROTO, "an ATTACH longer than it is");
	t = a;
	t.hdr.len = 4;
	expect(&t, sizeof(t), -EPROTO, "a length that is not the message's");
	t = a;
	t.hdr.magic ^= 1;
	expect(&t, sizeof(t), -EPROTO, "another magic");
	t = a;
	t.hdr.version = 99;
	expect(&t, sizeof(t), -EPROTO, "another version");
	t = a;
	t.hdr.status = -1;
	expect(&t, sizeof(t), -EPROTO, "a request with a status");
	t = a;
	t.hdr.op = 0;
	expect(&t, sizeof(t), -EOPNOTSUPP, "operation 0");
	t = a;
	t.hdr.op = 0xffff;
	expect(&t, sizeof(t), -EOPNOTSUPP, "operation 65535");
	t = a;
	memset(t.prog, 'x', sizeof(t.prog));
	expect(&t, sizeof(t), -EINVAL, "a program name with no end");
	t = a;
	t.prog[2] = '\n';
	expect(&t, sizeof(t), -EINVAL, "a control character in the name");
	t = a;
	t.prog[1] = (char)0xc3;
	expect(&t, sizeof(t), -EINVAL, "a byte above ASCII in the name");
	memcpy(buf, &h, sizeof(h));
	((struct srnicd_hdr *)buf)->len = sizeof(h) + 8;
	expect(buf, sizeof(h) + 8, -EPROTO, "a STATS with a body");

	/* Mutations of both valid requests: bytes flipped, cut, grown. */
	for (i = 0; i < 200000; i++) {
		size_t len = i & 1 ? sizeof(a) : sizeof(h);
		unsigned k, flips = 1 + next() % 4;
		const char *bad;

		memcpy(buf, i & 1 ? (void *)&a : (void *)&h, len);
		for (k = 0; k < flips; k++)
			buf[next() % len] ^= (uint8_t)(1u << (next() % 8));
		if (next() % 8 == 0)
			len = next() % sizeof(buf);
		bad = oracle(buf, len, &rc);
		accepted += rc == 0;
		if (bad) {
			failed++;
			printf("not ok - mutation %u: %s\n", i, bad);
			break;
		}
	}
	checks++;
	printf("ok - 200000 mutated requests, %u accepted, none wrongly\n",
	       accepted);
	printf("# %u checks, %u failed\n", checks, failed);
	return failed ? 1 : 0;
}

#endif
