/* SPDX-License-Identifier: MIT */
/*
 * srnic_wire_encode/decode: every opcode survives a round trip field by
 * field, the bytes sit where the map in wire.c says, and every frame the
 * decoder's contract calls malformed is refused with the right reason.
 *
 * Refused frames are made by editing a valid frame's bytes at literal
 * offsets rather than by encoding a bad packet: that way the test pins the
 * wire format, and a decoder that reads a field from the wrong place fails.
 * Each frame is decoded from an exact-size heap copy, so a sanitizer build
 * (meson setup -Db_sanitize=address,undefined) catches any read past it.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "check.h"
#include "srnic_wire.h"
#include "wire_oracle.h"

static const uint8_t dmac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
static const uint8_t smac[6] = {0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee};
static uint8_t payload[1 << SRNIC_MAX_STRIDE_SHIFT];

static const char *const err_name[] = {
	"OK", "NOT_OURS", "SHORT", "BAD_VERSION", "BAD_OPCODE", "BAD_LENGTH",
	"BAD_CRC", "BAD_IP", "BAD_ARP", "BAD_ND",
};
_Static_assert(sizeof(err_name) / sizeof(err_name[0]) ==
		       SRNIC_WIRE_BAD_ND + 1,
	       "a name for every verdict");

static const char *ename(enum srnic_wire_err e)
{
	return e <= SRNIC_WIRE_BAD_ND ? err_name[e] : "?";
}

/* Decodes len bytes of f from an exact-size copy; on success the payload
 * pointer is moved back into f so the caller can still use it. */
static enum srnic_wire_err dec(const uint8_t *f, uint32_t len,
			       struct srnic_pkt *p)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum srnic_wire_err e;

	if (!copy)
		abort();
	memcpy(copy, f, len);
	memset(p, 0xa5, sizeof(*p));	/* decode must overwrite it all */
	e = srnic_wire_decode(copy, len, p);
	if (e == SRNIC_WIRE_OK && p->payload)
		p->payload = f + (p->payload - copy);
	free(copy);
	return e;
}

/* A packet with every field set, those the opcode does not use included,
 * so that the round trip shows they are neither sent nor invented. */
static void full_pkt(struct srnic_pkt *p, uint8_t op)
{
	/* (fd00:56:1::2: a control frame's IPv6 address) */
	static const uint8_t ipv6[16] = {0xfd, 0, 0, 0x56, 0, 1, [15] = 2};
	unsigned i;

	memset(p, 0, sizeof(*p));
	p->opcode = op;
	p->flags = SRNIC_F_IMM | SRNIC_F_RECV_CQE | SRNIC_F_SOLICITED |
		   SRNIC_F_LAST;
	p->dst_qpn = 0x01020304;
	p->src_qpn = 0x0a0b0c0d;
	p->src_inc = 0xdeadbeef;
	p->dst_inc = 0xcafef00d;
	p->msn = 0x11223344;
	p->txid = 0x55667788;
	p->ssn = 0x99aabbcc;
	p->rkey = 0x00c0ffee;
	p->imm = htonl(0x12345678);
	p->va = 0x0123456789abcdefull;
	p->syndrome = SRNIC_NAK_RNR;
	p->rnr_timer = 17;
	p->nak_msn = 0x31415926;
	p->nak_txid = 0x27182818;
	p->sack_msn = 0x16180339;
	p->sack_first = 0x00abcdef;
	p->sack_bits = 0x8000000000000401ull;
	p->credit = 0x0badcafe;
	p->ts = 0x1234;
	p->ts_echo = 0x4321;
	p->qkey = 0x11111111;
	p->src_ipv4 = 0x0a000002;
	p->dst_ipv4 = 0xe0000101;
	p->ipv4 = 0x0a000001;
	memcpy(p->ipv6, ipv6, sizeof(ipv6));
	p->port = 3;
	p->dev = 1;
	p->ndev = 2;
	p->hello_ms = 0x0164;
	p->paths = 0xa5;
	p->queues = 4;
	for (i = 0; i < SRNIC_UDP_PATHS; i++) {
		p->path_loss[i] = (uint8_t)(i * 37 + 1);
		p->path_delay[i] = (uint8_t)(15 - i * 2);
	}
	for (i = 0; i < 6; i++)
		p->node_mac[i] = 0x40 + i;
	strcpy(p->node_name, "node-a");
	p->groups = 0x8000000000000006ull;
	p->svc_ipv4 = 0x0a37000a;
	p->svc_prio = 10;
	p->svc_holder = 1;
	p->svc_mode = 1;
	p->svc_bound = 3;
	memcpy(p->eth_src, "\x01\x02\x03\x04\x05\x06", 6);
	p->tpt_gen = 0x00070009;
	p->tpt_index = 4;
	p->tpt_count = 9;
	p->tpt_access = 0x0a;	/* remote write and atomic */
	p->tpt_name = 0x6e616d65;
	p->tpt_rkey = 0x00fade01;
	p->tpt_addr = 0x00007f00abcd0000ull;
	p->tpt_length = 0x0000000100000000ull;

	/* (a READ's completion at its target is never a NAK) */
	if (op == SRNIC_OP_READ_DONE || op == SRNIC_OP_READ_DONE_ACK)
		p->syndrome = SRNIC_ACK_OK;

	switch (op) {
	case SRNIC_OP_SEND:	/* last packet of a 3-packet message, its
				 * ACK asked for */
		p->stride_shift = 10;
		p->xflags = SRNIC_X_ACK_REQ;
		p->msg_len = 2148;
		p->msg_off = 2048;
		p->pkt_len = 100;
		break;
	case SRNIC_OP_WRITE:	/* first, full packet, its target notified */
		p->stride_shift = 12;
		p->xflags = SRNIC_X_NOTIFY;
		p->msg_len = 10000;
		p->msg_off = 0;
		p->pkt_len = 4096;
		break;
	case SRNIC_OP_READ_REQ:	/* a range inside the READ */
		p->stride_shift = 12;
		p->msg_len = 1u << 20;
		p->msg_off = 3 << 12;
		p->read_len = 2 << 12;
		p->imm = 0;	/* its place carries read_len */
		break;
	case SRNIC_OP_TP_READ_REQ: /* a READ request, and where it goes */
		p->stride_shift = 12;
		p->msg_len = 1u << 20;
		p->msg_off = 5 << 12;
		p->read_len = 1 << 12;
		p->imm = 0;
		p->flags = SRNIC_F_PROBE;
		p->tp_ipv4 = 0x0a370003;
		p->tp_inc = 0x00310042;
		p->tp_qpn = 0x00001005;
		p->tp_ctl_qpn = 0x00002006;
		p->tp_rkey = 0x00beef01;
		p->tp_va = 0x00007f0012345000ull;
		break;
	case SRNIC_OP_ATOMIC_REQ: /* compare-and-swap on 8 aligned bytes */
		p->flags |= SRNIC_F_CAS;
		p->stride_shift = 12;
		p->msg_len = 8;
		p->pkt_len = 16;
		p->va &= ~7ull;
		break;
	case SRNIC_OP_UD_SEND:	/* a datagram: one packet, the message */
		p->stride_shift = 14;
		p->msg_len = 1000;
		p->pkt_len = 1000;
		p->msg_off = 0;
		break;
	case SRNIC_OP_READ_RESP: /* middle packet */
		p->stride_shift = 8;
		p->msg_len = 256 * 10;
		p->msg_off = 256 * 3;
		p->pkt_len = 256;
		break;
	default:
		p->stride_shift = 9;
		p->msg_len = 77;
		p->pkt_len = 77;
		p->msg_off = 512;
		break;
	}
	p->payload = payload;
}

/* What decoding full_pkt(op) must give: only the opcode's fields. */
static void expected(struct srnic_pkt *want, const struct srnic_pkt *p,
		     const uint8_t *frame)
{
	memset(want, 0, sizeof(*want));
	want->opcode = p->opcode;
	want->flags = p->flags;
	/* (a HELLO's QPNs are its paths' losses, its dst_inc their delays) */
	if (p->opcode == SRNIC_OP_HELLO) {
		memcpy(want->path_loss, p->path_loss, sizeof(p->path_loss));
		memcpy(want->path_delay, p->path_delay, sizeof(p->path_delay));
	} else {
		want->dst_qpn = p->dst_qpn;
		want->src_qpn = p->src_qpn;
		want->dst_inc = p->dst_inc;
	}
	want->src_inc = p->src_inc;
	want->msn = p->msn;
	if (srnic_op_has_data_ext(p->opcode)) {
		want->txid = p->txid;
		want->ssn = p->ssn;
		if (p->opcode == SRNIC_OP_UD_SEND) {
			want->qkey = p->qkey;
			want->src_ipv4 = p->src_ipv4;
			want->dst_ipv4 = p->dst_ipv4;
		} else {
			want->rkey = p->rkey;
			want->va = p->va;
		}
		want->imm = p->imm;
		want->read_len = p->read_len;
		want->msg_off = p->msg_off;
		want->pkt_len = p->pkt_len;
		want->msg_len = p->msg_len;
		want->stride_shift = p->stride_shift;
		want->xflags = p->xflags;
		want->ts = p->ts;
		if (p->opcode == SRNIC_OP_TP_READ_REQ) {
			want->tp_ipv4 = p->tp_ipv4;
			want->tp_inc = p->tp_inc;
			want->tp_qpn = p->tp_qpn;
			want->tp_ctl_qpn = p->tp_ctl_qpn;
			want->tp_rkey = p->tp_rkey;
			want->tp_va = p->tp_va;
		}
		/* The decoder points past the header even for a READ
		 * request, whose payload is empty. */
		want->payload = frame + srnic_wire_hlen(p->opcode);
	} else if (srnic_op_ack_shaped(p->opcode)) {
		want->syndrome = p->syndrome;
		want->rnr_timer = p->rnr_timer;
		want->nak_msn = p->nak_msn;
		want->nak_txid = p->nak_txid;
		want->sack_msn = p->sack_msn;
		want->sack_first = p->sack_first;
		want->sack_bits = p->sack_bits;
		want->credit = p->credit;
		want->ts_echo = p->ts_echo;
	} else if (p->opcode == SRNIC_OP_TPT_UPDATE ||
		   p->opcode == SRNIC_OP_TPT_ACK) {
		want->ipv4 = p->ipv4;
		want->port = p->port;
		memcpy(want->ipv6, p->ipv6, sizeof(p->ipv6));
		want->tpt_gen = p->tpt_gen;
		want->tpt_index = p->tpt_index;
		want->tpt_count = p->tpt_count;
		want->tpt_access = p->tpt_access;
		want->tpt_name = p->tpt_name;
		want->tpt_rkey = p->tpt_rkey;
		want->tpt_addr = p->tpt_addr;
		want->tpt_length = p->tpt_length;
		memcpy(want->eth_src, smac, 6);
	} else {
		want->ipv4 = p->ipv4;
		want->port = p->port;
		memcpy(want->ipv6, p->ipv6, sizeof(p->ipv6));
		want->dev = p->dev;
		want->ndev = p->ndev;
		if (p->opcode == SRNIC_OP_HELLO) {
			want->hello_ms = p->hello_ms;
			want->paths = p->paths;
			want->queues = p->queues;
		}
		memcpy(want->node_mac, p->node_mac, 6);
		memcpy(want->node_name, p->node_name, sizeof(p->node_name));
		if (p->opcode == SRNIC_OP_SVC_ANNOUNCE) {
			want->svc_ipv4 = p->svc_ipv4;
			want->svc_prio = p->svc_prio;
			want->svc_holder = p->svc_holder;
			want->svc_mode = p->svc_mode;
			want->svc_bound = p->svc_bound;
		} else {
			want->groups = p->groups;
		}
		/* The decoder takes the sending port from the frame. */
		memcpy(want->eth_src, smac, 6);
	}
}

static const char *op_name(uint8_t op)
{
	return srnic_op_name(op);
}

static void test_round_trip(void)
{
	struct srnic_pkt p, got, want;
	const char *field, *bad;
	enum srnic_wire_err e;
	uint32_t len, hlen;
	uint8_t op, *f;

	for (op = SRNIC_OP_SEND; op < SRNIC_OP_MAX; op++) {
		full_pkt(&p, op);
		f = wire_build(&p, dmac, smac, &len);
		hlen = srnic_wire_hlen(op);
		CHECK(len >= 60, "%s: frame of %u bytes", op_name(op), len);
		e = dec(f, len, &got);
		if (!CHECK(e == SRNIC_WIRE_OK, "%s refused: %s", op_name(op),
			   ename(e))) {
			free(f);
			continue;
		}
		expected(&want, &p, f);
		field = wire_pkt_diff(&got, &want);
		if (!CHECK(!field, "%s: field %s differs", op_name(op),
			   field ? field : "")) {
			wire_pkt_dump(stderr, "got ", &got);
			wire_pkt_dump(stderr, "want", &want);
		}
		CHECK(got.payload == want.payload, "%s: payload at %+td",
		      op_name(op), got.payload - f);
		if (srnic_op_carries_payload(op))
			CHECK(!memcmp(got.payload, payload, p.pkt_len),
			      "%s: payload bytes differ", op_name(op));
		bad = wire_oracle(f, len, &e);
		CHECK(!bad, "%s: %s", op_name(op), bad ? bad : "");
		CHECK(srnic_wire_encode(f, dmac, smac, &p) == hlen,
		      "%s: encode returns a header length other than %u",
		      op_name(op), hlen);
		free(f);
	}
}

/* The byte map, restated with literal offsets (see the top of wire.c). */
static void test_byte_map(void)
{
	struct srnic_pkt p;
	uint8_t *f;
	uint32_t len;

	CHECK(SRNIC_ETHERTYPE == 0x88B5, "EtherType %#x", SRNIC_ETHERTYPE);
	CHECK(SRNIC_WIRE_VERSION == 1, "version %d", SRNIC_WIRE_VERSION);
	CHECK(srnic_wire_hlen(SRNIC_OP_SEND) == 82, "data header length");
	CHECK(srnic_wire_hlen(SRNIC_OP_READ_REQ) == 82, "data header length");
	CHECK(srnic_wire_hlen(SRNIC_OP_ACK) == 70, "ACK header length");
	CHECK(srnic_wire_hlen(SRNIC_OP_HELLO) == 94, "HELLO header length");
	CHECK(srnic_wire_hlen(SRNIC_OP_BYE) == 94, "BYE header length");
	CHECK(srnic_wire_hlen(SRNIC_OP_BYE_ACK) == 94, "BYE_ACK header length");
	CHECK(SRNIC_MAX_HLEN == 86, "SRNIC_MAX_HLEN %d", SRNIC_MAX_HLEN);
	/* Opcode numbers are on the wire too. */
	CHECK(SRNIC_OP_SEND == 1 && SRNIC_OP_WRITE == 2 &&
		      SRNIC_OP_READ_REQ == 3 && SRNIC_OP_READ_RESP == 4 &&
		      SRNIC_OP_ACK == 5 && SRNIC_OP_HELLO == 6 &&
		      SRNIC_OP_BYE == 7 && SRNIC_OP_BYE_ACK == 8 &&
		      SRNIC_OP_BOOTING == 9 && SRNIC_OP_BOOT_ACK == 10 &&
		      SRNIC_OP_RDMA_READY == 11 && SRNIC_OP_ATOMIC_REQ == 12 &&
		      SRNIC_OP_UD_SEND == 13 && SRNIC_OP_SVC_ANNOUNCE == 14 &&
		      SRNIC_OP_SVC_RESYNC == 15 &&
		      SRNIC_OP_SVC_RESYNC_ACK == 16 &&
		      SRNIC_OP_TP_READ_REQ == 17 &&
		      SRNIC_OP_TPT_UPDATE == 18 && SRNIC_OP_TPT_ACK == 19 &&
		      SRNIC_OP_READ_DONE == 20 &&
		      SRNIC_OP_READ_DONE_ACK == 21 && SRNIC_OP_MAX == 22,
	      "opcode numbering changed");

	full_pkt(&p, SRNIC_OP_SEND);
	f = wire_build(&p, dmac, smac, &len);
	CHECK(!memcmp(f, dmac, 6), "destination MAC not at 0");
	CHECK(!memcmp(f + 6, smac, 6), "source MAC not at 6");
	CHECK(f[12] == 0x88 && f[13] == 0xb5, "EtherType bytes %02x %02x",
	      f[12], f[13]);
	CHECK(f[14] == 1, "version byte %u", f[14]);
	CHECK(f[15] == SRNIC_OP_SEND, "opcode byte %u", f[15]);
	CHECK(srnic_get16(f + 16) == p.flags, "flags");
	CHECK(srnic_get32(f + 18) == 0x01020304, "dst_qpn");
	CHECK(f[18] == 0x01 && f[21] == 0x04, "dst_qpn not big-endian");
	CHECK(srnic_get32(f + 22) == 0x0a0b0c0d, "src_qpn");
	CHECK(srnic_get32(f + 26) == 0xdeadbeef, "src_inc");
	CHECK(srnic_get32(f + 30) == 0xcafef00d, "dst_inc");
	CHECK(srnic_get32(f + 34) == 0x11223344, "msn");
	CHECK(srnic_get32(f + 38) == 0x55667788, "txid");
	CHECK(srnic_get32(f + 42) == 0x99aabbcc, "ssn");
	CHECK(srnic_get32(f + 46) == 0x00c0ffee, "rkey");
	/* imm is kept in network order, so it is copied, not swapped. */
	CHECK(!memcmp(f + 50, "\x12\x34\x56\x78", 4), "imm");
	CHECK(srnic_get64(f + 54) == 0x0123456789abcdefull, "va");
	CHECK(f[54] == 0x01 && f[61] == 0xef, "va not big-endian");
	CHECK(srnic_get32(f + 62) == 2048, "msg_off");
	CHECK(srnic_get32(f + 66) == 100, "pkt_len");
	CHECK(srnic_get32(f + 70) == 2148, "msg_len");
	CHECK(f[74] == 10, "stride_shift");
	CHECK(f[75] == SRNIC_X_ACK_REQ, "a SEND's further flags: ACK_REQ");
	CHECK(srnic_get16(f + 76) == 0x1234, "ts");
	CHECK(srnic_get32(f + 78) == 0, "ack_msn without SRNIC_F_ACKS not zero");
	CHECK(!memcmp(f + 82, payload, 100), "payload not at 82");
	free(f);

	full_pkt(&p, SRNIC_OP_ACK);
	f = wire_build(&p, dmac, smac, &len);
	CHECK(f[15] == SRNIC_OP_ACK, "ACK opcode byte");
	CHECK(f[38] == SRNIC_NAK_RNR, "syndrome byte %u", f[38]);
	CHECK(f[39] == 17, "rnr_timer byte %u", f[39]);
	CHECK(srnic_get16(f + 40) == 0x4321, "ts_echo");
	CHECK(srnic_get32(f + 42) == 0x31415926, "nak_msn");
	CHECK(srnic_get32(f + 46) == 0x27182818, "nak_txid");
	CHECK(srnic_get32(f + 50) == 0x16180339, "sack_msn");
	CHECK(srnic_get32(f + 54) == 0x00abcdef, "sack_first");
	CHECK(srnic_get32(f + 58) == 0x0badcafe, "credit");
	CHECK(srnic_get64(f + 62) == 0x8000000000000401ull, "sack_bits");
	CHECK(len == 70, "ACK frame of %u bytes", len);
	free(f);

	full_pkt(&p, SRNIC_OP_HELLO);
	f = wire_build(&p, dmac, smac, &len);
	CHECK(srnic_get32(f + 38) == 0x0a000001, "ipv4");
	CHECK(f[42] == 3, "port");
	CHECK(f[43] == 1, "HELLO: the port's device");
	CHECK(!memcmp(f + 44, p.node_mac, 6), "node mac");
	CHECK(f[50] == 2 && f[51] == 0xa5, "HELLO: devices, then paths");
	CHECK(f[18] == 1 && f[19] == 38 && !memcmp(f + 18, p.path_loss, 8),
	      "HELLO: the paths' losses in the QPNs' place");
	CHECK(f[30] == 0xfd && f[31] == 0xb9 && f[32] == 0x75 && f[33] == 0x31,
	      "HELLO: the paths' delays in dst_inc's place, 4 bits each");
	CHECK(srnic_get16(f + 52) == 0x0164, "HELLO: its interval");
	CHECK(!memcmp(f + 54, "node-a\0", 7), "node name");
	CHECK(srnic_get64(f + 70) == 0x8000000000000006ull, "HELLO groups");
	CHECK(!memcmp(f + 78, p.ipv6, 16), "the node's IPv6 address");
	CHECK(len == 94, "HELLO frame of %u", len);
	free(f);
}

/* A valid frame of op, unpadded (so each byte short of it is a
 * truncation) and, for the cases below, with a known field layout. */
static uint8_t *frame_of(uint8_t op, uint32_t *len)
{
	struct srnic_pkt p;
	uint32_t hlen = srnic_wire_hlen(op);
	uint8_t *f;

	full_pkt(&p, op);
	f = calloc(1, hlen + (1 << SRNIC_MAX_STRIDE_SHIFT));
	if (!f)
		abort();
	srnic_wire_encode(f, dmac, smac, &p);
	*len = hlen;
	if (srnic_op_carries_payload(op)) {
		memcpy(f + hlen, payload, p.pkt_len);
		*len += p.pkt_len;
	}
	return f;
}

/* Decoding len bytes of f gives want. */
#define EXPECT(f, len, want, fmt, ...)                                   \
	do {                                                             \
		struct srnic_pkt p_;                                     \
		enum srnic_wire_err e_ = dec(f, len, &p_);               \
		CHECK(e_ == (want), fmt ": got %s, want %s",             \
		      ##__VA_ARGS__, ename(e_), ename(want));            \
	} while (0)

static void test_not_ours(void)
{
	static const uint16_t types[] = {0x0800, 0x86dd, 0x88b6, 0xb588,
					 0x88b4, 0};
	uint32_t len;
	uint8_t *f = frame_of(SRNIC_OP_SEND, &len);
	unsigned i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		srnic_put16(f + 12, types[i]);
		EXPECT(f, len, SRNIC_WIRE_NOT_OURS, "EtherType %#x", types[i]);
		/* Someone else's frame is not ours at any length. */
		EXPECT(f, 14, SRNIC_WIRE_NOT_OURS, "14-byte EtherType %#x",
		       types[i]);
	}
	free(f);
}

static void test_truncated(void)
{
	uint32_t len, n;
	uint8_t op, *f;

	for (op = SRNIC_OP_SEND; op < SRNIC_OP_MAX; op++) {
		f = frame_of(op, &len);
		EXPECT(f, len, SRNIC_WIRE_OK, "%s untruncated", op_name(op));
		for (n = 0; n < len; n++)
			EXPECT(f, n, SRNIC_WIRE_SHORT, "%s cut to %u of %u",
			       op_name(op), n, len);
		free(f);
	}
}

static void test_version_opcode(void)
{
	static const uint8_t versions[] = {0, 2, 0x81, 0xff};
	static const uint8_t ops[] = {0, SRNIC_OP_MAX, SRNIC_OP_MAX + 1, 0x80,
				      0xff};
	uint32_t len;
	uint8_t *f = frame_of(SRNIC_OP_WRITE, &len);
	unsigned i;

	for (i = 0; i < sizeof(versions); i++) {
		f[14] = versions[i];
		EXPECT(f, len, SRNIC_WIRE_BAD_VERSION, "version %u",
		       versions[i]);
	}
	f[14] = SRNIC_WIRE_VERSION;
	for (i = 0; i < sizeof(ops); i++) {
		f[15] = ops[i];
		EXPECT(f, len, SRNIC_WIRE_BAD_OPCODE, "opcode %u", ops[i]);
	}
	free(f);

	f = frame_of(SRNIC_OP_ACK, &len);
	for (i = SRNIC_ACK_OK; i <= SRNIC_NAK_OPERATIONAL; i++) {
		f[38] = i;
		EXPECT(f, len, SRNIC_WIRE_OK, "syndrome %u", i);
	}
	for (i = SRNIC_NAK_OPERATIONAL + 1; i < 256; i++) {
		f[38] = i;
		EXPECT(f, len, SRNIC_WIRE_BAD_OPCODE, "syndrome %u", i);
	}
	free(f);
}

/* Field offsets of the data extension, from the map. */
#define O_READ_LEN 50	/* imm of other data packets */
#define O_VA 54
#define O_MSG_OFF 62
#define O_PKT_LEN 66
#define O_MSG_LEN 70
#define O_SHIFT 74

/* A single-packet message of n bytes at stride 1 << shift, in a frame with
 * room for n bytes of payload. */
static uint8_t *single(uint8_t op, uint32_t n, uint8_t shift, uint32_t *len)
{
	uint8_t *f = frame_of(op, len);

	srnic_put32(f + O_MSG_OFF, 0);
	srnic_put32(f + O_PKT_LEN, n);
	srnic_put32(f + O_MSG_LEN, n);
	f[O_SHIFT] = shift;
	*len = 82 + n;
	return f;
}

static void test_lengths(void)
{
	uint32_t len, base_len, v;
	uint8_t *f;
	unsigned s;

	/* SEND: last packet, 100 bytes at 2048 of 2148, stride 1024. */
	f = frame_of(SRNIC_OP_SEND, &base_len);
	len = base_len;

	/* Claims one byte more than the frame has (and a message long
	 * enough for it, so only the frame is wrong). */
	srnic_put32(f + O_PKT_LEN, 101);
	srnic_put32(f + O_MSG_LEN, 2149);
	EXPECT(f, len, SRNIC_WIRE_SHORT, "pkt_len past the frame");
	EXPECT(f, len + 1, SRNIC_WIRE_OK, "one more byte in the frame");
	srnic_put32(f + O_PKT_LEN, 0xffffffff);
	EXPECT(f, len, SRNIC_WIRE_SHORT, "pkt_len 0xffffffff");
	srnic_put32(f + O_PKT_LEN, 100);
	srnic_put32(f + O_MSG_LEN, 2148);
	EXPECT(f, len, SRNIC_WIRE_OK, "restored");

	/* msg_off + pkt_len beyond msg_len. */
	srnic_put32(f + O_MSG_LEN, 2147);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "ends one past the message");
	srnic_put32(f + O_MSG_LEN, 2048);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "starts at the message's end");
	srnic_put32(f + O_MSG_LEN, 1000);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "starts past the message");
	/* An offset so large that msg_off + pkt_len wraps to 0x...64. */
	srnic_put32(f + O_MSG_LEN, 2148);
	srnic_put32(f + O_MSG_OFF, 0xfffffc00);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "msg_off + pkt_len wraps");
	srnic_put32(f + O_MSG_OFF, 2048);

	/* Messages beyond 2 GiB; exactly 2 GiB is the largest allowed. */
	srnic_put32(f + O_MSG_OFF, 0x80000000u - 1024);
	srnic_put32(f + O_PKT_LEN, 100);
	srnic_put32(f + O_MSG_LEN, 0x80000000u - 1024 + 100);
	EXPECT(f, len, SRNIC_WIRE_OK, "last packet just below 2 GiB");
	srnic_put32(f + O_MSG_OFF, 0x80000000u);
	srnic_put32(f + O_MSG_LEN, 0x80000000u + 100);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "message past 2 GiB");
	srnic_put32(f + O_MSG_OFF, 2048);
	srnic_put32(f + O_MSG_LEN, 2148);

	/* Non-last packet shorter (and longer) than the stride: make the
	 * message longer so this one is no longer last. */
	srnic_put32(f + O_MSG_LEN, 10000);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "non-last packet of 100");
	srnic_put32(f + O_MSG_OFF, 0);
	srnic_put32(f + O_MSG_LEN, 100);
	EXPECT(f, len, SRNIC_WIRE_OK, "single-packet message");
	/* Last packet shorter than what is left of the message. */
	srnic_put32(f + O_MSG_LEN, 101);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "last packet one short");

	/* msg_off not on the stride: 100 bytes at 512 of 612, stride 1024,
	 * and at 2048 + 256 with the stride 2048 (shift 11). */
	srnic_put32(f + O_MSG_OFF, 512);
	srnic_put32(f + O_MSG_LEN, 612);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "msg_off 512, stride 1024");
	f[O_SHIFT] = 8;
	EXPECT(f, len, SRNIC_WIRE_OK, "msg_off 512, stride 256");
	f[O_SHIFT] = 10;
	srnic_put32(f + O_MSG_OFF, 1);
	srnic_put32(f + O_MSG_LEN, 101);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "msg_off 1");
	free(f);

	/* stride_shift outside [8, 14], on a message that is valid at any
	 * stride: one 100-byte packet. */
	f = single(SRNIC_OP_WRITE, 100, 8, &len);
	for (s = 0; s < 256; s++) {
		f[O_SHIFT] = s;
		if (s >= SRNIC_MIN_STRIDE_SHIFT && s <= SRNIC_MAX_STRIDE_SHIFT)
			EXPECT(f, len, SRNIC_WIRE_OK, "stride_shift %u", s);
		else
			EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH,
			       "stride_shift %u", s);
	}
	f[O_SHIFT] = 8;

	/* Empty packets: only of an empty message. */
	srnic_put32(f + O_PKT_LEN, 0);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "empty packet, msg_len 100");
	srnic_put32(f + O_MSG_LEN, 0);
	EXPECT(f, 82, SRNIC_WIRE_OK, "empty message");
	srnic_put32(f + O_MSG_OFF, 256);
	EXPECT(f, 82, SRNIC_WIRE_BAD_LENGTH, "empty message at offset 256");
	/* An empty packet just past a message's end is on the stride and
	 * inside the message's bounds: only the emptiness gives it away. */
	srnic_put32(f + O_MSG_LEN, 256);
	EXPECT(f, 82, SRNIC_WIRE_BAD_LENGTH, "empty packet at 256 of 256");
	free(f);

	/* va + pkt_len must fit in 64 bits. */
	f = single(SRNIC_OP_READ_RESP, 100, 8, &len);
	srnic_put64(f + O_VA, UINT64_MAX - 100);
	EXPECT(f, len, SRNIC_WIRE_OK, "va ends at UINT64_MAX");
	srnic_put64(f + O_VA, UINT64_MAX - 99);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "va + pkt_len wraps to 0");
	srnic_put64(f + O_VA, UINT64_MAX - 50);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "va + pkt_len wraps");
	free(f);

	/* A long message's full packet: a stride of payload exactly. */
	f = single(SRNIC_OP_WRITE, 1 << 14, 14, &len);
	srnic_put32(f + O_MSG_LEN, 3 << 14);
	EXPECT(f, len, SRNIC_WIRE_OK, "16 KiB packet of 48 KiB");
	EXPECT(f, len - 1, SRNIC_WIRE_SHORT, "16 KiB packet cut by one");
	/* The same packet is longer than a stride of 8 KiB. */
	f[O_SHIFT] = 13;
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "16 KiB packet, stride 8 KiB");
	free(f);

	/* READ request: no payload; a range on packet boundaries inside the
	 * READ; msg_len up to 2 GiB. */
	f = frame_of(SRNIC_OP_READ_REQ, &len);
	EXPECT(f, len, SRNIC_WIRE_OK, "READ request");
	srnic_put32(f + O_MSG_OFF, 4096);
	srnic_put32(f + O_MSG_LEN, 8192);
	srnic_put32(f + O_READ_LEN, 4096);
	EXPECT(f, len, SRNIC_WIRE_OK, "READ request for the second packet");
	srnic_put32(f + O_READ_LEN, 4097);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "READ range past the READ");
	srnic_put32(f + O_READ_LEN, 0);
	srnic_put32(f + O_MSG_OFF, 8192);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "READ range starting at its end");
	srnic_put32(f + O_MSG_OFF, 100);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "READ range off a packet boundary");
	srnic_put32(f + O_PKT_LEN, 1);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "READ request, pkt_len 1");
	EXPECT(f, len + 1, SRNIC_WIRE_BAD_LENGTH,
	       "READ request, pkt_len 1 with a byte to match");
	srnic_put32(f + O_PKT_LEN, 0);
	srnic_put32(f + O_MSG_OFF, 0);
	srnic_put32(f + O_MSG_LEN, 0);
	EXPECT(f, len, SRNIC_WIRE_OK, "READ of 0 bytes");
	srnic_put32(f + O_MSG_OFF, 4096);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "READ of 0 bytes from 4096");
	srnic_put32(f + O_MSG_OFF, 0);
	srnic_put32(f + O_MSG_LEN, SRNIC_MAX_MSG_LEN);
	EXPECT(f, len, SRNIC_WIRE_OK, "READ of 2 GiB");
	for (v = SRNIC_MAX_MSG_LEN + 1; v >= SRNIC_MAX_MSG_LEN + 1;
	     v += 0x0fffffff) {
		srnic_put32(f + O_MSG_LEN, v);
		EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "READ of %#x bytes", v);
	}
	srnic_put32(f + O_MSG_LEN, UINT32_MAX);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "READ of 4 GiB - 1");
	srnic_put32(f + O_MSG_LEN, 1u << 20);

	/* The responder cuts its READ response at the request's stride, so
	 * a request's stride is held to the same range as any packet's. */
	{
		static const uint8_t shifts[] = {0, 7, 15, 32, 255};
		struct srnic_pkt p;

		for (s = 0; s < sizeof(shifts); s++) {
			f[O_SHIFT] = shifts[s];
			CHECK(dec(f, len, &p) == SRNIC_WIRE_BAD_LENGTH,
			      "READ request with stride_shift %u accepted",
			      shifts[s]);
		}
	}
	free(f);
}

/* Atomics: a fetch-and-add or compare-and-swap carries its two operands
 * for 8 aligned bytes, an atomic write 8 bytes for 8 aligned bytes; any
 * other length, offset or alignment is malformed. */
static void test_atomics(void)
{
	uint32_t len;
	uint8_t *f = frame_of(SRNIC_OP_ATOMIC_REQ, &len);

	EXPECT(f, len, SRNIC_WIRE_OK, "compare-and-swap");
	srnic_put32(f + O_PKT_LEN, 8);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "atomic with one operand");
	srnic_put32(f + O_PKT_LEN, 24);
	EXPECT(f, len, SRNIC_WIRE_SHORT, "atomic operands past the frame");
	EXPECT(f, len + 8, SRNIC_WIRE_BAD_LENGTH, "atomic with 24 bytes");
	srnic_put32(f + O_PKT_LEN, 16);
	srnic_put32(f + O_MSG_LEN, 16);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "atomic on 16 bytes");
	srnic_put32(f + O_MSG_LEN, 8);
	srnic_put32(f + O_MSG_OFF, 8);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "atomic at offset 8");
	srnic_put32(f + O_MSG_OFF, 0);
	srnic_put64(f + O_VA, 0x1004);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "atomic on unaligned bytes");
	srnic_put64(f + O_VA, 0x1000);
	f[O_SHIFT] = 7;
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "atomic with stride_shift 7");
	free(f);

	f = single(SRNIC_OP_WRITE, SRNIC_ATOMIC_LEN, 8, &len);
	f[16] |= SRNIC_F_ATOMIC_WR >> 8;
	srnic_put64(f + O_VA, 0x2000);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH,
	       "atomic write whose target would be notified");
	f[75] = 0;	/* (xflags) */
	EXPECT(f, len, SRNIC_WIRE_OK, "atomic write");
	EXPECT(f, len - 1, SRNIC_WIRE_SHORT, "atomic write cut by one");
	srnic_put64(f + O_VA, UINT64_MAX - 15);
	EXPECT(f, len, SRNIC_WIRE_OK, "atomic write ending at UINT64_MAX");
	srnic_put64(f + O_VA, UINT64_MAX - 7);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "atomic write wrapping to 0");
	srnic_put64(f + O_VA, 0x2001);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "atomic write unaligned");
	srnic_put64(f + O_VA, 0x2000);
	srnic_put32(f + O_MSG_LEN, 16);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "atomic write, msg_len 16");
	srnic_put32(f + O_MSG_LEN, 8);
	srnic_put32(f + O_PKT_LEN, 4);
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "atomic write of 4 bytes");
	free(f);

	/* further flags (xflags): a WRITE's NOTIFY and ACK_REQ, a SEND's
	 * ACK_REQ, nothing else */
	f = single(SRNIC_OP_WRITE, 64, 8, &len);
	EXPECT(f, len, SRNIC_WIRE_OK, "a WRITE that notifies its target");
	f[75] = SRNIC_X_NOTIFY | SRNIC_X_ACK_REQ;
	EXPECT(f, len, SRNIC_WIRE_OK, "a WRITE that notifies, asking an ACK");
	f[75] = 0x04;
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "a WRITE's unknown further flag");
	free(f);
	f = single(SRNIC_OP_SEND, 64, 8, &len);
	f[75] = SRNIC_X_ACK_REQ;
	EXPECT(f, len, SRNIC_WIRE_OK, "a SEND that asks for its ACK at once");
	f[75] = SRNIC_X_NOTIFY;
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "a SEND that would notify");
	free(f);
	/* (a READ request's, whose requester then says READ_DONE, which
	 * is never a NAK) */
	f = frame_of(SRNIC_OP_READ_REQ, &len);
	f[75] = SRNIC_X_NOTIFY;
	EXPECT(f, len, SRNIC_WIRE_OK, "a READ that notifies its target");
	f[75] = SRNIC_X_ACK_REQ;
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "a READ that asks for an ACK");
	free(f);
	f = frame_of(SRNIC_OP_READ_RESP, &len);
	f[75] = SRNIC_X_NOTIFY;
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "a READ answer that would notify");
	free(f);
	f = frame_of(SRNIC_OP_READ_DONE, &len);
	EXPECT(f, len, SRNIC_WIRE_OK, "READ_DONE");
	f[38] = SRNIC_NAK_ACCESS;
	EXPECT(f, len, SRNIC_WIRE_BAD_OPCODE, "READ_DONE as a NAK");
	free(f);
}

/* Which opcodes take the XRC and group flags, and the syndromes of the
 * ACK-shaped ones, spelled out here rather than read from the table. */
static void test_flag_rules(void)
{
	static const uint8_t xrc_ops[] = {SRNIC_OP_SEND, SRNIC_OP_WRITE,
					  SRNIC_OP_READ_REQ,
					  SRNIC_OP_ATOMIC_REQ};
	static const uint16_t group_not[] = {
		SRNIC_F_IMM, SRNIC_F_RECV_CQE, SRNIC_F_SOLICITED, SRNIC_F_CAS,
		SRNIC_F_INV, SRNIC_F_ATOMIC_WR, SRNIC_F_XRC, SRNIC_F_ACKS,
		SRNIC_F_THIRD_PARTY};
	static const uint16_t group_ok[] = {SRNIC_F_SACK, SRNIC_F_NAK,
					    SRNIC_F_AUTH, SRNIC_F_PROBE};
	uint32_t len;
	unsigned i;
	uint8_t op, *f;

	for (op = SRNIC_OP_SEND; op < SRNIC_OP_MAX; op++) {
		bool xrc = memchr(xrc_ops, op, sizeof(xrc_ops)) != NULL;

		/* room for the XRC extension ahead of the payload */
		f = frame_of(op, &len);
		f[16] |= SRNIC_F_XRC >> 8;
		EXPECT(f, len + SRNIC_XRC_XLEN,
		       xrc ? SRNIC_WIRE_OK : SRNIC_WIRE_BAD_OPCODE,
		       "%s with the XRC flag", op_name(op));
		/* (the requests are the ones that may carry an ACK) */
		f[16] &= ~(SRNIC_F_XRC >> 8);
		f[16] |= SRNIC_F_ACKS >> 8;
		EXPECT(f, len, xrc ? SRNIC_WIRE_OK : SRNIC_WIRE_BAD_OPCODE,
		       "%s with the ACKS flag", op_name(op));
		srnic_put16(f + 16, SRNIC_F_GROUP | SRNIC_F_LAST);
		EXPECT(f, len,
		       op == SRNIC_OP_WRITE || op == SRNIC_OP_ACK
			       ? SRNIC_WIRE_OK
			       : SRNIC_WIRE_BAD_OPCODE,
		       "%s with the group flag", op_name(op));
		if (srnic_op_ack_shaped(op)) {
			f[38] = SRNIC_NAK_OPERATIONAL + 1;
			EXPECT(f, len, SRNIC_WIRE_BAD_OPCODE,
			       "%s with syndrome %u", op_name(op), f[38]);
		}
		free(f);
	}

	f = single(SRNIC_OP_WRITE, 100, 8, &len);
	for (i = 0; i < sizeof(group_not) / sizeof(group_not[0]); i++) {
		srnic_put16(f + 16, SRNIC_F_GROUP | group_not[i]);
		EXPECT(f, len + SRNIC_XRC_XLEN, SRNIC_WIRE_BAD_OPCODE,
		       "multicast WRITE with flag %#x", group_not[i]);
	}
	for (i = 0; i < sizeof(group_ok) / sizeof(group_ok[0]); i++) {
		srnic_put16(f + 16, SRNIC_F_GROUP | group_ok[i]);
		EXPECT(f, len, SRNIC_WIRE_OK, "multicast WRITE with flag %#x",
		       group_ok[i]);
	}
	free(f);
}

static void test_padding(void)
{
	struct srnic_pkt p, got;
	uint32_t len, hlen, n;
	uint8_t op, *f;

	for (op = SRNIC_OP_SEND; op < SRNIC_OP_MAX; op++) {
		/* (an atomic request's payload has one size only) */
		bool shrink = srnic_op_carries_payload(op) &&
			      op != SRNIC_OP_ATOMIC_REQ;

		full_pkt(&p, op);
		hlen = srnic_wire_hlen(op);
		/* Short payloads: the frame is padded to 60 bytes. */
		if (shrink) {
			p.msg_off = 0;
			p.pkt_len = p.msg_len = 1;
		}
		f = wire_build(&p, dmac, smac, &len);
		n = hlen + (srnic_op_carries_payload(op) ? p.pkt_len : 0);
		CHECK(len == (n < 60 ? 60 : n), "%s: %u bytes", op_name(op),
		      len);
		if (CHECK(dec(f, len, &got) == SRNIC_WIRE_OK,
			  "%s padded to %u refused", op_name(op), len) &&
		    shrink) {
			CHECK(got.pkt_len == 1 && got.payload == f + hlen &&
				      got.payload[0] == payload[0],
			      "%s: padded payload", op_name(op));
		}
		free(f);

		/* Any amount of trailing bytes, e.g. a 9000-byte MTU link
		 * or a NIC that keeps the FCS. */
		f = frame_of(op, &len);
		f = realloc(f, len + 4096);
		if (!f)
			abort();
		memset(f + len, 0xee, 4096);
		CHECK(dec(f, len + 4, &got) == SRNIC_WIRE_OK,
		      "%s with 4 trailing bytes", op_name(op));
		CHECK(dec(f, len + 4096, &got) == SRNIC_WIRE_OK,
		      "%s with 4096 trailing bytes", op_name(op));
		CHECK(got.payload == NULL ||
			      got.payload == f + srnic_wire_hlen(op),
		      "%s: payload moved", op_name(op));
		free(f);
	}
}

/* Fields the decoder cleans up rather than refuses. */
static void test_sanitized(void)
{
	struct srnic_pkt p, got;
	uint32_t len;
	uint8_t *f;

	full_pkt(&p, SRNIC_OP_HELLO);
	memset(p.node_name, 'x', sizeof(p.node_name));
	p.queues = 3;
	f = wire_build(&p, dmac, smac, &len);
	/* (15 bytes of name: the 16th is a HELLO's queues) */
	CHECK(f[54 + 14] == 'x' && f[54 + 15] == 3,
	      "name sent in 15 bytes, then the queues");
	if (CHECK(dec(f, len, &got) == SRNIC_WIRE_OK, "16-byte name"))
		CHECK(strlen(got.node_name) == 15 && got.queues == 3,
		      "decoded name not terminated within 16 bytes, or "
		      "queues lost");
	free(f);

	f = frame_of(SRNIC_OP_ACK, &len);
	f[39] = 0xff;
	if (CHECK(dec(f, len, &got) == SRNIC_WIRE_OK, "rnr_timer 0xff"))
		CHECK(got.rnr_timer == 31,
		      "rnr_timer %u keeps more than 5 bits", got.rnr_timer);
	free(f);
}

/* A datagram: Q_Key in the rkey slot, the two addresses in the va slot,
 * and one packet that is the whole message. */
static void test_datagram(void)
{
	uint32_t len;
	uint8_t *f = frame_of(SRNIC_OP_UD_SEND, &len);

	CHECK(srnic_get32(f + 46) == 0x11111111, "qkey not at data+8");
	CHECK(srnic_get32(f + 54) == 0x0a000002, "src ipv4 not at data+16");
	CHECK(srnic_get32(f + 58) == 0xe0000101, "dst ipv4 not at data+20");
	EXPECT(f, len, SRNIC_WIRE_OK, "datagram of 1000 bytes");
	srnic_put32(f + 62, 512);	/* msg_off */
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "datagram at offset 512");
	srnic_put32(f + 62, 0);
	srnic_put32(f + 70, 2000);	/* msg_len */
	EXPECT(f, len, SRNIC_WIRE_BAD_LENGTH, "datagram of two packets");
	free(f);
}

/* The CRC trailer: CRC-32C by its check value, sealed frames of every
 * opcode accepted and decoded as without it, and every single flipped bit
 * caught (or the frame no longer ours, which decode refuses). */
static void test_crc(void)
{
	static const char check[] = "123456789";
	struct srnic_pkt want, got;
	uint32_t len, n, bit;
	uint8_t op, *f;

	CHECK(srnic_wire_crc(check, 9, 0) == 0xe3069283,
	      "CRC-32C of \"123456789\" is %08x", srnic_wire_crc(check, 9, 0));
	CHECK(srnic_wire_crc(check + 4, 5, srnic_wire_crc(check, 4, 0)) ==
		      0xe3069283,
	      "CRC-32C in two pieces");

	for (op = SRNIC_OP_SEND; op < SRNIC_OP_MAX; op++) {
		full_pkt(&want, op);
		want.flags |= SRNIC_F_CRC;
		f = wire_build(&want, dmac, smac, &len);
		n = srnic_wire_hlen(op) +
		    (srnic_op_carries_payload(op) ? want.pkt_len : 0);
		CHECK(len == n + SRNIC_CRC_LEN, "%s: sealed frame of %u bytes",
		      op_name(op), len);
		CHECK(srnic_get32(f + len - 4) ==
			      srnic_wire_crc(f, len - SRNIC_CRC_LEN, 0),
		      "%s: trailer is not the frame's CRC-32C", op_name(op));
		CHECK(srnic_wire_check_crc(f, len, true, false) == SRNIC_WIRE_OK,
		      "%s: sealed frame refused", op_name(op));
		if (CHECK(dec(f, len, &got) == SRNIC_WIRE_OK,
			  "%s: sealed frame does not decode", op_name(op)))
			CHECK(!srnic_op_has_data_ext(op) ||
				      (got.pkt_len == want.pkt_len &&
				       (!got.payload ||
					got.payload == f + srnic_wire_hlen(op))),
			      "%s: trailer taken for payload", op_name(op));
		EXPECT(f, len - 1, SRNIC_WIRE_SHORT, "%s: trailer cut short",
		       op_name(op));
		for (bit = 0; bit < len * 8; bit++) {
			f[bit / 8] ^= 1u << (bit % 8);
			if (srnic_wire_check_crc(f, len, true, false) == SRNIC_WIRE_OK)
				EXPECT(f, len, SRNIC_WIRE_NOT_OURS,
				       "%s: bit %u flipped and not caught",
				       op_name(op), bit);
			f[bit / 8] ^= 1u << (bit % 8);
		}
		free(f);

		/* No trailer: fine where the port does not demand one. */
		want.flags &= ~SRNIC_F_CRC;
		f = wire_build(&want, dmac, smac, &len);
		CHECK(srnic_wire_check_crc(f, len, false, false) == SRNIC_WIRE_OK,
		      "%s: frame without CRC refused", op_name(op));
		CHECK(srnic_wire_check_crc(f, len, true, false) == SRNIC_WIRE_BAD_CRC,
		      "%s: frame without CRC taken where demanded",
		      op_name(op));
		free(f);
	}
}

/* The cluster key's MAC on control frames: a signed frame of every
 * control opcode passes, under the key it was signed with only, and a
 * flipped bit anywhere in what it covers or in the MAC fails it.  Frames
 * without the flag have no MAC to pass. */
static void test_auth(void)
{
	uint8_t key[SRNIC_KEY_LEN], other[SRNIC_KEY_LEN];
	struct srnic_pkt p, got;
	uint32_t len, bit, caught, n;
	uint8_t op, *f;

	for (n = 0; n < SRNIC_KEY_LEN; n++) {
		key[n] = (uint8_t)(n * 13 + 1);
		other[n] = key[n] ^ (n == 7);
	}
	for (op = SRNIC_OP_HELLO; op <= SRNIC_OP_RDMA_READY; op++) {
		full_pkt(&p, op);
		p.flags |= SRNIC_F_AUTH;
		f = wire_build(&p, dmac, smac, &len);
		n = srnic_wire_hlen(op);
		CHECK(len == n + SRNIC_AUTH_LEN, "%s: %u bytes with a MAC",
		      op_name(op), len);
		srnic_wire_sign(f, key, false);
		if (!CHECK(dec(f, len, &got) == SRNIC_WIRE_OK && got.auth,
			   "%s: signed frame refused", op_name(op))) {
			free(f);
			continue;
		}
		CHECK(srnic_wire_auth_ok(f, &got, key, false), "%s: own MAC refused",
		      op_name(op));
		CHECK(!srnic_wire_auth_ok(f, &got, other, false),
		      "%s: MAC passed under another key", op_name(op));
		for (bit = 0, caught = 0; bit < len * 8; bit++) {
			f[bit / 8] ^= 1u << (bit % 8);
			caught += dec(f, len, &got) != SRNIC_WIRE_OK ||
				  !srnic_wire_auth_ok(f, &got, key, false);
			f[bit / 8] ^= 1u << (bit % 8);
		}
		CHECK(caught == len * 8, "%s: %u of %u flipped bits passed",
		      op_name(op), len * 8 - caught, len * 8);
		free(f);

		p.flags &= ~SRNIC_F_AUTH;
		f = wire_build(&p, dmac, smac, &len);
		CHECK(dec(f, len, &got) == SRNIC_WIRE_OK && !got.auth &&
			      !srnic_wire_auth_ok(f, &got, key, false),
		      "%s: a frame without a MAC passed", op_name(op));
		free(f);
	}
}

/* The XRC extension: 4 bytes after the data extension, the payload after
 * them; refused on a packet that is not a request. */
static void test_xrc(void)
{
	static const uint8_t dmac[6] = {2, 0, 0, 0, 0, 1},
			     smac[6] = {2, 0, 0, 0, 0, 2};
	struct srnic_pkt p, got;
	uint32_t len;
	uint8_t *f;

	full_pkt(&p, SRNIC_OP_SEND);
	p.flags |= SRNIC_F_XRC;
	p.xrc_srqn = 0x00abcdef;
	CHECK(srnic_wire_pkt_hlen(&p) == 86, "XRC data header length");
	f = wire_build(&p, dmac, smac, &len);
	CHECK(srnic_get32(f + 82) == 0x00abcdef, "xrc_srqn not at 82");
	CHECK(!memcmp(f + 86, payload, 100), "XRC payload not at 86");
	CHECK(srnic_wire_decode(f, len, &got) == SRNIC_WIRE_OK &&
		      got.xrc_srqn == 0x00abcdef && got.payload == f + 86 &&
		      got.pkt_len == 100,
	      "XRC SEND round trip");
	CHECK(srnic_wire_decode(f, 81, &got) == SRNIC_WIRE_SHORT,
	      "XRC SEND cut inside its extension");
	free(f);
	full_pkt(&p, SRNIC_OP_READ_RESP);
	f = wire_build(&p, dmac, smac, &len);
	f[16] |= SRNIC_F_XRC >> 8;
	CHECK(srnic_wire_decode(f, len, &got) == SRNIC_WIRE_BAD_OPCODE,
	      "the XRC flag on a READ response is refused");
	free(f);
}

/* The ACK a request carries: at data extension byte 40, before an XRC
 * extension; zero and ignored without its flag. */
static void test_acks(void)
{
	static const uint8_t dmac[6] = {2, 0, 0, 0, 0, 1},
			     smac[6] = {2, 0, 0, 0, 0, 2};
	struct srnic_pkt p, got;
	uint32_t len;
	uint8_t *f;

	full_pkt(&p, SRNIC_OP_SEND);
	p.flags |= SRNIC_F_ACKS | SRNIC_F_XRC;
	p.ack_msn = 0x01234567;
	p.xrc_srqn = 0x00abcdef;
	f = wire_build(&p, dmac, smac, &len);
	CHECK(srnic_get32(f + 78) == 0x01234567, "ack_msn not at 78");
	CHECK(srnic_get32(f + 82) == 0x00abcdef, "xrc_srqn not at 82");
	CHECK(srnic_wire_decode(f, len, &got) == SRNIC_WIRE_OK &&
		      got.ack_msn == 0x01234567 && got.xrc_srqn == 0x00abcdef &&
		      got.payload == f + 86,
	      "SEND with an ACK round trip");
	/* without the flag the bytes say nothing */
	f[16] &= ~(SRNIC_F_ACKS >> 8);
	CHECK(srnic_wire_decode(f, len, &got) == SRNIC_WIRE_OK &&
		      got.ack_msn == 0,
	      "ack_msn read without SRNIC_F_ACKS");
	free(f);
	p.flags &= ~SRNIC_F_ACKS;
	f = wire_build(&p, dmac, smac, &len);
	CHECK(srnic_get32(f + 78) == 0, "ack_msn written without SRNIC_F_ACKS");
	free(f);
}

/* Multicast RDMA WRITE: the group flag on a plain WRITE and on an ACK,
 * nowhere else, and a WRITE with it carries nothing of a receive's. */
static void test_group(void)
{
	static const uint8_t dmac[6] = {3, 0x53, 0x52, 0x4e, 0, 1},
			     smac[6] = {2, 0, 0, 0, 0, 2};
	struct srnic_pkt p, got;
	uint32_t len;
	uint8_t *f, mac[6];

	full_pkt(&p, SRNIC_OP_WRITE);
	p.flags = SRNIC_F_GROUP | SRNIC_F_LAST;
	p.dst_qpn = SRNIC_QPN_MCAST;
	p.rkey = 5;
	f = wire_build(&p, dmac, smac, &len);
	CHECK(srnic_wire_decode(f, len, &got) == SRNIC_WIRE_OK &&
		      (got.flags & SRNIC_F_GROUP) && got.rkey == 5 &&
		      got.dst_qpn == SRNIC_QPN_MCAST,
	      "a multicast WRITE round trip");
	f[17] |= SRNIC_F_IMM;
	CHECK(srnic_wire_decode(f, len, &got) == SRNIC_WIRE_BAD_OPCODE,
	      "a multicast WRITE with immediate data is refused");
	free(f);
	full_pkt(&p, SRNIC_OP_ACK);
	p.flags = SRNIC_F_GROUP | SRNIC_F_SACK;
	f = wire_build(&p, dmac, smac, &len);
	CHECK(srnic_wire_decode(f, len, &got) == SRNIC_WIRE_OK &&
		      (got.flags & SRNIC_F_GROUP),
	      "a member's ACK round trip");
	free(f);
	full_pkt(&p, SRNIC_OP_SEND);
	p.flags = SRNIC_F_LAST;
	f = wire_build(&p, dmac, smac, &len);
	f[16] |= SRNIC_F_GROUP >> 8;
	CHECK(srnic_wire_decode(f, len, &got) == SRNIC_WIRE_BAD_OPCODE,
	      "the group flag on a SEND is refused");
	free(f);
	srnic_group_mac(0, mac);
	CHECK(!memcmp(mac, "\xff\xff\xff\xff\xff\xff", 6),
	      "group 0 is broadcast");
	srnic_group_mac(9, mac);
	CHECK((mac[0] & 3) == 3 && mac[5] == 9,
	      "a group's address: multicast, local, its number last");
}

int main(void)
{
	unsigned i;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	test_byte_map();
	test_round_trip();
	test_not_ours();
	test_truncated();
	test_version_opcode();
	test_lengths();
	test_atomics();
	test_flag_rules();
	test_padding();
	test_sanitized();
	test_datagram();
	test_xrc();
	test_acks();
	test_group();
	test_crc();
	if (CHECK(sodium_init() >= 0, "libsodium did not start"))
		test_auth();
	return check_summary("test_wire");
}
