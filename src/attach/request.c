/* SPDX-License-Identifier: MIT */
/*
 * The only reader of srnicd's requests (srnicd_proto.h says the rules).
 * Whatever a process sends, this either fills a checked request or says
 * why not: it reads nothing outside the message and trusts no length in
 * it.  tests/fuzz/fuzz_request.c feeds it everything.
 */
#include <errno.h>
#include <string.h>

#include "srnicd_proto.h"

void srnicd_hdr_init(struct srnicd_hdr *h, enum srnicd_op op, uint32_t len,
		     int32_t status)
{
	memset(h, 0, sizeof(*h));
	h->magic = SRNICD_MAGIC;
	h->version = SRNICD_VERSION;
	h->op = (uint16_t)op;
	h->len = len;
	h->status = status;
}

/* The size a request of op must have; 0 for an unknown op. */
static size_t req_size(unsigned op)
{
	switch (op) {
	case SRNICD_OP_ATTACH:
		return sizeof(struct srnicd_attach_req);
	case SRNICD_OP_STATS:
	case SRNICD_OP_SHUTDOWN:
		return sizeof(struct srnicd_hdr);
	default:
		return 0;
	}
}

/* A name for logs: ends inside its field, printable ASCII only. */
static int name_ok(const char *s, size_t size)
{
	const char *end = memchr(s, '\0', size);
	const char *c;

	if (!end)
		return 0;
	for (c = s; c < end; c++)
		if (*c < 0x20 || *c > 0x7e)
			return 0;
	return 1;
}

int srnicd_req_parse(const void *buf, size_t len, struct srnicd_req *out)
{
	struct srnicd_hdr h;
	size_t want;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(h))
		return -EPROTO;
	memcpy(&h, buf, sizeof(h));
	if (h.magic != SRNICD_MAGIC || h.version != SRNICD_VERSION ||
	    h.len != len || h.status != 0)
		return -EPROTO;
	want = req_size(h.op);
	if (!want)
		return -EOPNOTSUPP;
	if (len != want)
		return -EPROTO;
	out->op = (enum srnicd_op)h.op;
	if (h.op == SRNICD_OP_ATTACH) {
		struct srnicd_attach_req r;

		memcpy(&r, buf, sizeof(r));
		if (!name_ok(r.prog, sizeof(r.prog)))
			return -EINVAL;
		memcpy(out->prog, r.prog, sizeof(out->prog));
	}
	return 0;
}

int srnicd_rep_check(const void *buf, size_t len, enum srnicd_op op)
{
	struct srnicd_hdr h;

	if (len < sizeof(h))
		return -EPROTO;
	memcpy(&h, buf, sizeof(h));
	if (h.magic != SRNICD_MAGIC || h.version != SRNICD_VERSION ||
	    h.op != op || h.len != len || h.status > 0)
		return -EPROTO;
	if (op == SRNICD_OP_ATTACH && len != sizeof(struct srnicd_attach_rep))
		return -EPROTO;
	/* (a stats reply's JSON ends in the message) */
	if (op == SRNICD_OP_STATS && len > sizeof(h) &&
	    ((const char *)buf)[len - 1] != '\0')
		return -EPROTO;
	return 0;
}
