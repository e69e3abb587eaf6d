/* SPDX-License-Identifier: MIT */
/*
 * UDP over IPv6 (src/wire/wire.c, srnic_wire_udp6_wrap and _unwrap) and
 * what an IPv6 node needs besides (neighbour discovery): a wrapped frame is the IPv6 and UDP
 * headers and shim docs/wire-protocol.md gives, its UDP checksum right by
 * a plain sum written here; unwrapping gives the raw frame back byte for
 * byte; a number given on the way out mends the checksum; every header a
 * hostile or broken sender could get wrong is refused (BAD_IP) or passed
 * over as someone else's (NOT_OURS); the node id of an address stays in
 * 240/4; a HELLO carries the node's IPv6 address under its MAC; and NS
 * and NA are RFC 4861's, with what it refuses refused.
 */
#include <sodium.h>
#include <stdlib.h>

#include "check.h"
#include "srnic_wire.h"
#include "wire_oracle.h"

#define PORT SRNIC_UDP_PORT
#define HLEN6 SRNIC_UDP6_HLEN

/* fd00:56:1::2 (this node) and fd00:56:1::1 (its peer) */
static const uint8_t my_ip[16] = {0xfd, 0, 0, 0x56, 0, 1, [15] = 2};
static const uint8_t peer_ip[16] = {0xfd, 0, 0, 0x56, 0, 1, [15] = 1};

static const uint8_t dmac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
static const uint8_t smac[6] = {0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee};
/* A router's addresses (destination, source), in place of the
 * sender's. */
static const uint8_t rdmac[12] = {0x02, 0x77, 0x77, 0x77, 0x77, 0x01,
				  0x02, 0x77, 0x77, 0x77, 0x77, 0x02};

/* The inverted sum over a wrapped frame's IPv6 pseudo-header and its
 * payload (next header `next`, the length its IPv6 header says): 0 when
 * its upper layer's checksum is right.  The sum is wire_oracle.h's,
 * 16 bits at a time as RFC 1071 spells it, not the codec's 8 bytes at
 * a time. */
static uint16_t ref_check6(const uint8_t *w, uint8_t next)
{
	uint32_t plen = srnic_get16(w + 18);
	uint32_t sum = wire_ones_ref(w + 22, 32, 0) + plen + next;

	return (uint16_t)~wire_ones_ref(w + 54, plen, sum);
}

/* The UDP checksum a wrapped frame should carry, computed here. */
static void ref_fix6(uint8_t *w, uint8_t next, unsigned csum_off)
{
	uint16_t c;

	srnic_put16(w + csum_off, 0);
	c = ref_check6(w, next);
	srnic_put16(w + csum_off, c ? c : 0xffff);
}

/* wire_udp_write's WRITE of plen payload bytes, sealed when crc,
 * wrapped from the peer to me on path plen % 8 with number plen * 7 + 1:
 * *len bytes, HLEN6 more than the raw frame, which *raw (a copy) holds;
 * 16 bytes of room after it. */
static uint8_t *wrapped(uint32_t plen, bool crc, uint8_t **raw, uint32_t *len)
{
	uint8_t *w = wire_udp_write(plen, crc, HLEN6, dmac, smac, raw, len);

	*len += HLEN6;
	srnic_wire_udp6_wrap(w, *len, peer_ip, my_ip, PORT,
			     plen % SRNIC_UDP_PATHS, (uint16_t)(plen * 7 + 1));
	return w;
}

/* What the frame unwrap_copy took last said of its sender. */
static struct srnic_udp_rx last;

static enum srnic_wire_err unwrap_copy(const uint8_t *w, uint32_t len,
				       uint8_t **out)
{
	uint8_t *c = malloc(len ? len : 1);
	enum srnic_wire_err e;

	memcpy(c, w, len);
	memset(&last, 0, sizeof(last));
	e = srnic_wire_udp6_unwrap(c, len, my_ip, PORT, &last);
	*out = c;
	return e;
}

/* One wrapped frame's headers, as docs/wire-protocol.md has them. */
static void check_layout(const uint8_t *w, uint32_t len, uint32_t plen,
			 uint16_t seq, uint8_t op)
{
	CHECK(!memcmp(w, dmac, 6) && !memcmp(w + 6, smac, 6),
	      "%u B: the Ethernet addresses are not the raw frame's", plen);
	CHECK(srnic_get16(w + 12) == 0x86dd, "%u B: EtherType %04x", plen,
	      srnic_get16(w + 12));
	CHECK(srnic_get32(w + 14) == 0x60000000,
	      "%u B: version, traffic class, flow label %08x", plen,
	      srnic_get32(w + 14));
	CHECK(srnic_get16(w + 18) == len - 54 && w[20] == 17 && w[21] == 64,
	      "%u B: payload length %u of %u, next header %u, hop limit %u",
	      plen, srnic_get16(w + 18), len - 54, w[20], w[21]);
	CHECK(!memcmp(w + 22, peer_ip, 16) && !memcmp(w + 38, my_ip, 16),
	      "%u B: addresses", plen);
	CHECK(srnic_get16(w + 54) == SRNIC_UDP_SPORT0 + plen % SRNIC_UDP_PATHS,
	      "%u B: source port %u does not name path %u", plen,
	      srnic_get16(w + 54), plen % SRNIC_UDP_PATHS);
	CHECK(srnic_get16(w + 56) == PORT && srnic_get16(w + 58) == len - 54,
	      "%u B: UDP port, length", plen);
	CHECK(srnic_get16(w + 60) != 0 && ref_check6(w, 17) == 0,
	      "%u B: UDP checksum %04x wrong", plen, srnic_get16(w + 60));
	CHECK(srnic_get16(w + 62) == seq && srnic_get16(w + 64) == 0 &&
		      srnic_wire_udp6_seq(w) == seq,
	      "%u B: the shim is not the number and zero", plen);
	CHECK(srnic_wire_udp6_dst(w) == w + 38, "%u B: udp6_dst", plen);
	CHECK(w[66] == SRNIC_WIRE_VERSION && w[67] == op,
	      "%u B: srnic's base header not at 66", plen);
}

/* Every payload length to 64 (the sum's tails: 8, 4, 2, 1 bytes), a few
 * long ones, with a CRC and without: the layout, and back again. */
static void test_layout(void)
{
	static const uint32_t longer[] = {255, 1000, 1001, 4093, 4096};
	uint32_t plen, len, k, i;
	uint8_t *raw, *w, *u;

	for (i = 0; i < 65 + sizeof(longer) / sizeof(longer[0]); i++) {
		plen = i < 65 ? i : longer[i - 65];
		for (k = 0; k < 2; k++) {
			w = wrapped(plen, k, &raw, &len);
			check_layout(w, len, plen, (uint16_t)(plen * 7 + 1),
				     SRNIC_OP_WRITE);
			/* (Ethernet padding after it is not the frame's) */
			if (CHECK(unwrap_copy(w, len + 16 * k, &u) ==
					  SRNIC_WIRE_OK,
				  "%u B: own wrap refused", plen))
				CHECK(last.raw_len == len - HLEN6 &&
					      !memcmp(u + HLEN6, raw,
						      last.raw_len) &&
					      last.src_ip ==
						      srnic_wire_ip6_id(peer_ip) &&
					      !memcmp(last.src6, peer_ip, 16) &&
					      last.to_me &&
					      last.path == plen % SRNIC_UDP_PATHS &&
					      last.seq == (uint16_t)(plen * 7 + 1),
				      "%u B: unwrapped is not the raw frame from "
				      "its sender, path and number", plen);
			free(u);
			free(raw);
			free(w);
		}
	}
}

/* The other opcode shapes: an ACK (no payload) and a control frame. */
static void test_shapes(void)
{
	static const uint8_t ops[] = {SRNIC_OP_ACK, SRNIC_OP_HELLO,
				      SRNIC_OP_BYE, SRNIC_OP_TPT_ACK};
	uint8_t w[HLEN6 + 256], *u;
	struct srnic_pkt p, got;
	uint32_t n, i;
	uint8_t *f;

	for (i = 0; i < sizeof(ops); i++) {
		memset(&p, 0, sizeof(p));
		p.opcode = ops[i];
		p.msn = 99;
		p.dst_qpn = ops[i] == SRNIC_OP_ACK ? 0x2020 : 0;
		if (srnic_op_is_control(ops[i])) {
			memcpy(p.ipv6, peer_ip, 16);
			p.ipv4 = srnic_wire_ip6_id(peer_ip);
		}
		f = wire_build(&p, dmac, smac, &n);
		memset(w, 0, sizeof(w));
		memcpy(w + HLEN6, f, n);
		srnic_wire_udp6_wrap(w, n + HLEN6, peer_ip, my_ip, PORT, 5, 77);
		check_layout(w, n + HLEN6, 5, 77, ops[i]);
		if (CHECK(unwrap_copy(w, n + HLEN6, &u) == SRNIC_WIRE_OK,
			  "%s: own wrap refused", srnic_op_name(ops[i])) &&
		    CHECK(last.raw_len == n && !memcmp(u + HLEN6, f, n),
			  "%s: unwrapped is not the raw frame",
			  srnic_op_name(ops[i])))
			CHECK(srnic_wire_decode(u + HLEN6, n, &got) ==
					      SRNIC_WIRE_OK &&
				      got.opcode == ops[i] && got.msn == 99 &&
				      !memcmp(got.ipv6, p.ipv6, 16),
			      "%s: does not decode as sent",
			      srnic_op_name(ops[i]));
		free(u);
		free(f);
	}
}

/* A router's Ethernet addresses: a UDP node's CRC and MAC still pass
 * (test_wire_udp shows a raw node's would not), and a HELLO's IPv6
 * address is under its MAC. */
static void test_integrity(void)
{
	uint8_t key[SRNIC_KEY_LEN], *raw, *w, *u, *h;
	uint8_t hdr[HLEN6 + 256];
	struct srnic_pkt p, got;
	uint32_t len, n;

	w = wrapped(512, true, &raw, &len);
	memcpy(w, rdmac, 12);
	CHECK(unwrap_copy(w, len, &u) == SRNIC_WIRE_OK &&
		      srnic_wire_check_crc(u + HLEN6, last.raw_len, true,
					   true) == SRNIC_WIRE_OK,
	      "a router's addresses broke a UDP node's frame or its CRC");
	free(u);
	free(raw);
	free(w);

	if (!CHECK(sodium_init() >= 0, "libsodium did not start"))
		return;
	crypto_auth_keygen(key);
	memset(&p, 0, sizeof(p));
	p.opcode = SRNIC_OP_HELLO;
	p.flags = SRNIC_F_AUTH;
	p.ipv4 = srnic_wire_ip6_id(peer_ip);
	memcpy(p.ipv6, peer_ip, 16);
	p.port = 1;
	p.hello_ms = 10;
	strcpy(p.node_name, "node-6");
	h = wire_build(&p, dmac, smac, &n);
	srnic_wire_sign(h, key, true);
	memset(hdr, 0, sizeof(hdr));
	memcpy(hdr + HLEN6, h, n);
	srnic_wire_udp6_wrap(hdr, n + HLEN6, peer_ip, srnic_ip6_all_nodes,
			     PORT, 3, 0);
	memcpy(hdr, rdmac, 12);
	if (CHECK(srnic_wire_udp6_unwrap(hdr, n + HLEN6, my_ip, PORT,
					 &last) == SRNIC_WIRE_OK &&
			  !last.to_me,
		  "routed HELLO to ff02::1 refused, or taken as to me") &&
	    CHECK(srnic_wire_decode(hdr + HLEN6, last.raw_len, &got) ==
			  SRNIC_WIRE_OK,
		  "routed HELLO does not decode")) {
		CHECK(!memcmp(got.ipv6, peer_ip, 16) &&
			      got.ipv4 == srnic_wire_ip6_id(peer_ip) &&
			      got.ipv4 == last.src_ip &&
			      !strcmp(got.node_name, "node-6"),
		      "the HELLO's node is not its sender");
		CHECK(srnic_wire_auth_ok(hdr + HLEN6, &got, key, true),
		      "a router's addresses broke a UDP node's MAC");
		/* (the address is under the MAC: a forger cannot move a
		 * node elsewhere) */
		hdr[HLEN6 + 14 + 24 + 40 + 15] ^= 1;
		CHECK(srnic_wire_decode(hdr + HLEN6, last.raw_len, &got) ==
				      SRNIC_WIRE_OK &&
			      got.ipv6[15] == (peer_ip[15] ^ 1) &&
			      !srnic_wire_auth_ok(hdr + HLEN6, &got, key,
						  true),
		      "a HELLO's IPv6 address is not under its MAC");
	}
	free(h);
}

/* The number given as a frame goes out: the checksum mended for each
 * (never 0), the very header wrap makes with that number, read back. */
static void test_number(void)
{
	uint32_t len, k, bad = 0, zero = 0;
	uint8_t *raw, *w, *c, *u, *fresh;

	free(wrapped(64, true, &raw, &len));
	w = calloc(1, len);
	fresh = calloc(1, len);
	c = malloc(len);
	memcpy(w + HLEN6, raw, len - HLEN6);
	srnic_wire_udp6_wrap(w, len, peer_ip, my_ip, PORT, 1, 0);
	memcpy(c, w, len);
	srnic_wire_udp6_number(c, 0);
	CHECK(!memcmp(c, w, len), "number 0 changed the frame");
	for (k = 0; k < 65536; k++) {
		uint16_t seq = (uint16_t)k;

		memcpy(c, w, len);
		srnic_wire_udp6_number(c, seq);
		memcpy(fresh + HLEN6, raw, len - HLEN6);
		srnic_wire_udp6_wrap(fresh, len, peer_ip, my_ip, PORT, 1, seq);
		if (srnic_wire_udp6_seq(c) != seq || ref_check6(c, 17) != 0 ||
		    !srnic_get16(c + 60) || memcmp(c, fresh, len)) {
			bad++;
			continue;
		}
		zero += srnic_get16(c + 60) == 0xffff;
		if (k % 4099 == 0 || srnic_get16(c + 60) == 0xffff) {
			if (unwrap_copy(c, len, &u) != SRNIC_WIRE_OK ||
			    last.seq != seq ||
			    memcmp(u + HLEN6, raw, last.raw_len))
				bad++;
			free(u);
		}
	}
	CHECK(!bad, "%u numbers left a wrong header or were not read back",
	      bad);
	/* (one number of the 65536 makes the sum 0: sent as 0xFFFF) */
	CHECK(zero == 1, "%u numbers gave a checksum of 0xFFFF", zero);
	free(c);
	free(fresh);
	free(raw);
	free(w);
}

/* A frame whose checksum comes out 0 goes with 0xFFFF, which is taken;
 * its 0 form is "no checksum", which IPv6 refuses. */
static void test_zero_sum(void)
{
	uint32_t len, off;
	uint8_t *raw, *w, *u;

	/* (a payload word, at an even offset of the datagram, set to the
	 * checksum the frame had with it 0 makes the sum all ones) */
	w = wrapped(64, false, &raw, &len);
	off = HLEN6 + srnic_wire_hlen(SRNIC_OP_WRITE);
	CHECK((off - 54) % 2 == 0, "payload at an odd offset");
	srnic_put16(raw + off - HLEN6, 0);
	memcpy(w + HLEN6, raw, len - HLEN6);
	srnic_wire_udp6_wrap(w, len, peer_ip, my_ip, PORT, 0, 1);
	srnic_put16(raw + off - HLEN6, srnic_get16(w + 60));
	memcpy(w + HLEN6, raw, len - HLEN6);
	srnic_wire_udp6_wrap(w, len, peer_ip, my_ip, PORT, 0, 1);
	CHECK(srnic_get16(w + 60) == 0xffff && ref_check6(w, 17) == 0,
	      "a sum of 0 sent as %04x", srnic_get16(w + 60));
	CHECK(unwrap_copy(w, len, &u) == SRNIC_WIRE_OK,
	      "checksum 0xFFFF refused");
	free(u);
	srnic_put16(w + 60, 0);
	CHECK(unwrap_copy(w, len, &u) == SRNIC_WIRE_BAD_IP,
	      "checksum 0 (none) taken");
	free(u);
	free(raw);
	free(w);
}

/* What a sender could get wrong, one thing at a time. */
struct damage {
	const char *what;
	uint32_t off;		/* the first byte to set (UINT32_MAX: none) */
	uint8_t val[16];
	uint8_t n;		/* bytes of val to set there */
	bool fix_sum;		/* keep the UDP checksum right after it */
	enum srnic_wire_err want;
};

#define D1(w, o, v, fix, e) {(w), (o), {(v)}, 1, (fix), (e)}

static const struct damage damages[] = {
	{"nothing", UINT32_MAX, {0}, 0, false, SRNIC_WIRE_OK},
	D1("UDP checksum, wrong", 61, 0x5a, false, SRNIC_WIRE_BAD_IP),
	{"UDP checksum 0", 60, {0, 0}, 2, false, SRNIC_WIRE_BAD_IP},
	D1("a payload bit", 200, 0x40, false, SRNIC_WIRE_BAD_IP),
	D1("another UDP port", 57, 0xba, true, SRNIC_WIRE_NOT_OURS),
	D1("another host", 53, 0x09, true, SRNIC_WIRE_NOT_OURS),
	D1("TCP", 20, 6, true, SRNIC_WIRE_NOT_OURS),
	/* (a hop-by-hop options header, then UDP: not read) */
	D1("an extension header", 20, 0, true, SRNIC_WIRE_NOT_OURS),
	D1("IP version 4", 14, 0x40, true, SRNIC_WIRE_NOT_OURS),
	D1("IPv4's EtherType", 12, 0x08, false, SRNIC_WIRE_NOT_OURS),
	{"srnic's own EtherType", 12, {0x88, 0xb5}, 2, false,
	 SRNIC_WIRE_NOT_OURS},
	/* (what routers may change, outside the checksum) */
	D1("a traffic class", 15, 0xb0, false, SRNIC_WIRE_OK),
	D1("a flow label", 17, 0x33, false, SRNIC_WIRE_OK),
	D1("a hop limit", 21, 1, false, SRNIC_WIRE_OK),
	/* (the shim's reserved half: sent as zero, not read) */
	D1("the shim's reserved bytes", 64, 0x12, true, SRNIC_WIRE_OK),
	/* lengths */
	D1("payload length past the frame", 19, 0xff, true,
	   SRNIC_WIRE_BAD_IP),
	D1("UDP length", 59, 0x01, true, SRNIC_WIRE_BAD_IP),
	{"payload length 2 short", UINT32_MAX - 1, {0}, 0, true,
	 SRNIC_WIRE_BAD_IP},
	/* (both 2 short: as far as IPv6 can tell, 2 bytes of Ethernet
	 * padding; the raw frame's own lengths and CRC are the codec's) */
	{"payload and UDP lengths 2 short", UINT32_MAX - 2, {0}, 0, true,
	 SRNIC_WIRE_OK},
	/* sources no node has: nobody to answer */
	{"from ::", 22, {0}, 16, true, SRNIC_WIRE_BAD_IP},
	{"from ::1", 22, {[15] = 1}, 16, true, SRNIC_WIRE_BAD_IP},
	{"from ff02::1", 22, {0xff, 0x02, [15] = 1}, 16, true,
	 SRNIC_WIRE_BAD_IP},
	{"from ::ffff:10.55.0.1", 22, {[10] = 0xff, 0xff, 10, 55, 0, 1}, 16,
	 true, SRNIC_WIRE_BAD_IP},
	{"from fe80::1", 22, {0xfe, 0x80, [15] = 1}, 16, true, SRNIC_WIRE_OK},
	{"from ::2", 22, {[15] = 2}, 16, true, SRNIC_WIRE_OK},
	{"from ::1:0:0:1", 22, {[11] = 1, [15] = 1}, 16, true, SRNIC_WIRE_OK},
	/* destinations: a group is ours too */
	{"to ff02::1", 38, {0xff, 0x02, [15] = 1}, 16, true, SRNIC_WIRE_OK},
	{"to ff05::1:3", 38, {0xff, 0x05, [13] = 1, [15] = 3}, 16, true,
	 SRNIC_WIRE_OK},
	{"to fe80::2", 38, {0xfe, 0x80, [15] = 2}, 16, true,
	 SRNIC_WIRE_NOT_OURS},
};

static void test_damage(void)
{
	uint32_t len, i, cut;
	uint8_t *raw, *w, *u;
	enum srnic_wire_err e;

	for (i = 0; i < sizeof(damages) / sizeof(damages[0]); i++) {
		const struct damage *d = &damages[i];

		w = wrapped(256, true, &raw, &len);
		if (d->off == UINT32_MAX - 1 || d->off == UINT32_MAX - 2)
			srnic_put16(w + 18, (uint16_t)(len - 54 - 2));
		if (d->off == UINT32_MAX - 2)
			srnic_put16(w + 58, (uint16_t)(len - 54 - 2));
		if (d->off < UINT32_MAX - 2)
			memcpy(w + d->off, d->val, d->n);
		if (d->fix_sum && srnic_get16(w + 18) <= len - 54)
			ref_fix6(w, 17, 60);
		else if (d->fix_sum)	/* (as much as there is) */
			srnic_put16(w + 60, 0x1234);
		e = unwrap_copy(w, len, &u);
		CHECK(e == d->want, "%s: %d, not %d", d->what, e, d->want);
		if (e == SRNIC_WIRE_OK && d->off == 38)
			CHECK(!last.to_me, "%s: taken as to me alone",
			      d->what);
		if (e != SRNIC_WIRE_OK)
			CHECK(!memcmp(u, w, len), "%s: refused, but changed",
			      d->what);
		free(u);
		free(raw);
		free(w);
	}

	/* A source port that names no path of ours: taken, no path. */
	w = wrapped(256, false, &raw, &len);
	srnic_put16(w + 54, 0x1234);
	ref_fix6(w, 17, 60);
	CHECK(unwrap_copy(w, len, &u) == SRNIC_WIRE_OK &&
		      last.path == SRNIC_UDP_NO_PATH,
	      "source port 0x1234: path %u", last.path);
	free(u);
	/* Too short for the shim and a base header, whatever the lengths
	 * say (kept in step, checksum right). */
	{
		uint32_t n = 54 + 8 + 4 + SRNIC_BASE_HLEN - 1;

		srnic_put16(w + 18, (uint16_t)(n - 54));
		srnic_put16(w + 58, (uint16_t)(n - 54));
		ref_fix6(w, 17, 60);
		CHECK(unwrap_copy(w, n, &u) == SRNIC_WIRE_BAD_IP,
		      "a datagram too short for a base header taken");
		free(u);
	}
	free(raw);
	free(w);
	/* Cut anywhere: never OK, never a read past the end (ASan). */
	w = wrapped(256, true, &raw, &len);
	for (cut = 0; cut < len; cut++) {
		e = unwrap_copy(w, cut, &u);
		CHECK(e != SRNIC_WIRE_OK, "cut to %u of %u bytes: taken", cut,
		      len);
		free(u);
	}
	free(raw);
	free(w);
}

/* The QP number a steering class reads off a wrapped frame: a data
 * frame's, none of a control frame's or another encapsulation's. */
static void test_frame_qpn(void)
{
	uint8_t w[HLEN6 + 128], *raw, *d;
	struct srnic_pkt p;
	uint32_t len, n, q, cut;
	uint8_t *f;

	d = wrapped(40, true, &raw, &len);
	q = 0;
	CHECK(srnic_wire_udp6_frame_qpn(d, len, &q) && q == 0x1010,
	      "a WRITE's QP number %#x", q);
	CHECK(!srnic_wire_udp_frame_qpn(d, len, &q),
	      "an IPv6 frame read as IPv4's");
	CHECK(!srnic_wire_frame_qpn(d, len, &q), "an IPv6 frame read as raw");
	for (cut = 0; cut < HLEN6 + SRNIC_ETH_HLEN + 8; cut++)
		CHECK(!srnic_wire_udp6_frame_qpn(d, cut, &q),
		      "cut to %u bytes: a QP number", cut);
	d[20] = 6;
	CHECK(!srnic_wire_udp6_frame_qpn(d, len, &q), "TCP read as ours");
	free(d);
	free(raw);

	memset(&p, 0, sizeof(p));
	p.opcode = SRNIC_OP_HELLO;
	f = wire_build(&p, dmac, smac, &n);
	memset(w, 0, sizeof(w));
	memcpy(w + HLEN6, f, n);
	srnic_wire_udp6_wrap(w, n + HLEN6, peer_ip, srnic_ip6_all_nodes, PORT,
			     0, 0);
	CHECK(!srnic_wire_udp6_frame_qpn(w, n + HLEN6, &q),
	      "a HELLO has a QP number");
	/* an IPv4 node's wrap of a data frame: not IPv6's */
	free(f);
	p.opcode = SRNIC_OP_ACK;
	p.dst_qpn = 0x3030;
	f = wire_build(&p, dmac, smac, &n);
	memset(w, 0, sizeof(w));
	memcpy(w + SRNIC_UDP_HLEN, f, n);
	srnic_wire_udp_wrap(w, n + SRNIC_UDP_HLEN, 0x0a370001, 0x0a370002,
			    PORT, 0, 0);
	CHECK(!srnic_wire_udp6_frame_qpn(w, n + SRNIC_UDP_HLEN, &q),
	      "an IPv4 frame read as IPv6's");
	CHECK(srnic_wire_udp_frame_qpn(w, n + SRNIC_UDP_HLEN, &q) &&
		      q == 0x3030,
	      "the IPv4 frame's own number");
	free(f);
}

/* Node ids: in 240/4, never the broadcast, and apart for addresses
 * apart anywhere. */
static void test_ip6_id(void)
{
	/* (from the algorithm docs/wire-protocol.md gives, computed
	 * elsewhere) */
	static const struct {
		uint8_t a[16];
		uint32_t id;
	} known[] = {
		{{0xfd, 0, 0, 0x56, 0, 1, [15] = 2}, 0xf7c1e3cc},
		{{0xfd, 0, 0, 0x56, 0, 2, [15] = 2}, 0xf20c41f5},
		{{0xfd, 0, 0, 0x56, 0, 1, [15] = 1}, 0xf9082b7b},
		{{0x20, 0x01, 0x0d, 0xb8, [15] = 1}, 0xff0fbbef},
		{{0xfe, 0x80, [15] = 1}, 0xf02b1ffa},
	};
	static uint32_t ids[16 * 255 + 1];
	uint8_t a[16];
	unsigned i, j, k, n = 0, same = 0, out = 0;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		CHECK(srnic_wire_ip6_id(known[i].a) == known[i].id,
		      "address %u: id %08x, not %08x", i,
		      srnic_wire_ip6_id(known[i].a), known[i].id);
	CHECK(srnic_wire_ip6_id(my_ip) != srnic_wire_ip6_id(known[1].a),
	      "fd00:56:1::2 and fd00:56:2::2 share an id");
	/* fd00:56:1::2 and every address one byte away from it, at each
	 * of its 16 bytes: 4081 ids, all in 240/4, all apart (a clash
	 * among 4081 has a chance of 3%: these have none). */
	ids[n++] = srnic_wire_ip6_id(my_ip);
	for (i = 0; i < 16; i++) {
		for (j = 0; j < 256; j++) {
			if (j == my_ip[i])
				continue;
			memcpy(a, my_ip, 16);
			a[i] = (uint8_t)j;
			ids[n++] = srnic_wire_ip6_id(a);
		}
	}
	for (i = 0; i < n; i++)
		out += ids[i] >> 28 != 0xf || ids[i] == SRNIC_IPV4_BROADCAST;
	CHECK(!out, "%u ids outside 240/4 or the broadcast", out);
	for (i = 0; i < n; i++)
		for (k = i + 1; k < n; k++)
			same += ids[i] == ids[k];
	CHECK(!same, "%u pairs of addresses share an id", same);
}

/* An ND message of `type` from my_ip, with olen bytes of options opts
 * after its 24 (none: encode's own option, if lladdr), into f: its
 * length. */
static uint32_t nd_frame(uint8_t *f, uint8_t type, const uint8_t *opts,
			 uint32_t olen, const uint8_t *lladdr)
{
	struct srnic_nd nd = {.type = type};
	uint32_t n;

	memcpy(nd.src, my_ip, 16);
	memcpy(nd.dst, srnic_ip6_all_nodes, 16);
	memcpy(nd.target, peer_ip, 16);
	if (type == SRNIC_ND_ADVERT) {
		nd.flags = SRNIC_ND_F_SOLICITED | SRNIC_ND_F_OVERRIDE;
		memcpy(nd.target, my_ip, 16);
	}
	if (lladdr) {
		memcpy(nd.lladdr, lladdr, 6);
		nd.has_lladdr = 1;
	}
	n = srnic_wire_nd_encode(f, dmac, smac, &nd);
	if (opts) {
		memcpy(f + 78, opts, olen);
		srnic_put16(f + 18, (uint16_t)(24 + olen));
		ref_fix6(f, 58, 56);
		n = 78 + olen;
	}
	return n;
}

/* NDP: RFC 4861's layout, every field back, the solicited-node group,
 * and what is not an NS or NA to take refused or passed over. */
static void test_nd(void)
{
	static const uint8_t zero6[6], group6[6] = {0x33, 0x33, 0, 0, 0, 1};
	uint8_t f[SRNIC_ND_FRAME + 64], g[SRNIC_ND_FRAME + 64], grp[16], mac[6];
	struct srnic_nd nd, got;
	uint32_t n, cut, k;

	/* An NS for the peer, to its solicited-node group, saying mine. */
	memset(&nd, 0, sizeof(nd));
	nd.type = SRNIC_ND_SOLICIT;
	memcpy(nd.src, my_ip, 16);
	srnic_wire_nd_solicited_node(peer_ip, nd.dst, mac);
	memcpy(nd.target, peer_ip, 16);
	memcpy(nd.lladdr, smac, 6);
	nd.has_lladdr = 1;
	memset(f, 0xee, sizeof(f));
	n = srnic_wire_nd_encode(f, mac, smac, &nd);
	CHECK(n == SRNIC_ND_FRAME && n == 86 && f[n] == 0xee,
	      "NS of %u bytes, or written past them", n);
	CHECK(!memcmp(f, "\x33\x33\xff\x00\x00\x01", 6) &&
		      !memcmp(f + 6, smac, 6) && srnic_get16(f + 12) == 0x86dd,
	      "NS: Ethernet header");
	CHECK(srnic_get32(f + 14) == 0x60000000 && srnic_get16(f + 18) == 32 &&
		      f[20] == 58 && f[21] == 255,
	      "NS: IPv6 header (payload %u, next %u, hops %u)",
	      srnic_get16(f + 18), f[20], f[21]);
	CHECK(!memcmp(f + 22, my_ip, 16) &&
		      !memcmp(f + 38,
			      "\xff\x02\0\0\0\0\0\0\0\0\0\x01\xff\0\0\x01",
			      16),
	      "NS: from me to ff02::1:ff00:1");
	CHECK(f[54] == 135 && f[55] == 0 && ref_check6(f, 58) == 0 &&
		      srnic_get32(f + 58) == 0 && !memcmp(f + 62, peer_ip, 16),
	      "NS: type, code, checksum, reserved, target");
	CHECK(f[78] == 1 && f[79] == 1 && !memcmp(f + 80, smac, 6),
	      "NS: the source link-layer address option");
	if (CHECK(srnic_wire_nd_decode(f, n, &got) == SRNIC_WIRE_OK,
		  "own NS refused"))
		CHECK(!memcmp(&got, &nd, sizeof(nd)), "NS: a field changed");
	CHECK(srnic_wire_is_icmp6(f, n) && !srnic_wire_is_arp(f, n),
	      "an NS is not ICMPv6");
	/* (Ethernet padding after it is not the message's) */
	CHECK(srnic_wire_nd_decode(f, n + 10, &got) == SRNIC_WIRE_OK,
	      "padded NS refused");

	/* The peer's answer: NA, solicited and override, without and with
	 * its address (then option 2). */
	memset(&nd, 0, sizeof(nd));
	nd.type = SRNIC_ND_ADVERT;
	nd.flags = SRNIC_ND_F_SOLICITED | SRNIC_ND_F_OVERRIDE;
	memcpy(nd.src, peer_ip, 16);
	memcpy(nd.dst, my_ip, 16);
	memcpy(nd.target, peer_ip, 16);
	n = srnic_wire_nd_encode(f, smac, dmac, &nd);
	CHECK(n == 78 && srnic_get16(f + 18) == 24 && f[54] == 136 &&
		      f[58] == 0x60 && !f[59] && !f[60] && !f[61] &&
		      ref_check6(f, 58) == 0,
	      "NA without an option (%u bytes)", n);
	if (CHECK(srnic_wire_nd_decode(f, n, &got) == SRNIC_WIRE_OK,
		  "own NA refused"))
		CHECK(!memcmp(&got, &nd, sizeof(nd)), "NA: a field changed");
	memcpy(nd.lladdr, dmac, 6);
	nd.has_lladdr = 1;
	nd.flags |= SRNIC_ND_F_ROUTER;
	n = srnic_wire_nd_encode(f, smac, dmac, &nd);
	CHECK(n == 86 && f[58] == 0xe0 && f[78] == 2 && f[79] == 1 &&
		      !memcmp(f + 80, dmac, 6),
	      "NA with the target link-layer address option");
	if (CHECK(srnic_wire_nd_decode(f, n, &got) == SRNIC_WIRE_OK,
		  "own NA with an option refused"))
		CHECK(!memcmp(&got, &nd, sizeof(nd)), "NA: a field changed");

	/* The solicited-node group of a target's last 24 bits. */
	{
		uint8_t t[16] = {0x20, 0x01, 0x0d, 0xb8, [13] = 0xab, 0xcd,
				 0xef};

		srnic_wire_nd_solicited_node(t, grp, mac);
		CHECK(!memcmp(grp,
			      "\xff\x02\0\0\0\0\0\0\0\0\0\x01\xff\xab\xcd\xef",
			      16) &&
			      !memcmp(mac, "\x33\x33\xff\xab\xcd\xef", 6),
		      "solicited-node group of ...:abcd:ef");
	}
	/* ff02::1, where HELLOs go, and its Ethernet address. */
	srnic_mcast_mac(srnic_get32(srnic_ip6_all_nodes + 12), true, mac);
	CHECK(!memcmp(srnic_ip6_all_nodes,
		      "\xff\x02\0\0\0\0\0\0\0\0\0\0\0\0\0\x01", 16) &&
		      !memcmp(mac, group6, 6),
	      "all-nodes is not ff02::1 at 33:33:00:00:00:01");

	/* Damage, one field at a time, to an NS with its option. */
	{
		static const struct {
			const char *what;
			uint32_t off;
			uint8_t val;
			bool fix_sum;
			enum srnic_wire_err want;
		} d[] = {
			{"nothing", 0, 0x33, false, SRNIC_WIRE_OK},
			{"IPv4's EtherType", 12, 0x08, false,
			 SRNIC_WIRE_NOT_OURS},
			{"IP version 4", 14, 0x40, false, SRNIC_WIRE_NOT_OURS},
			{"UDP", 20, 17, false, SRNIC_WIRE_NOT_OURS},
			{"a hop-by-hop header", 20, 0, false,
			 SRNIC_WIRE_NOT_OURS},
			{"a router advertisement", 54, 134, true,
			 SRNIC_WIRE_NOT_OURS},
			{"an echo request", 54, 128, true,
			 SRNIC_WIRE_NOT_OURS},
			{"an MLDv2 report", 54, 143, true,
			 SRNIC_WIRE_NOT_OURS},
			{"a redirect", 54, 137, true, SRNIC_WIRE_NOT_OURS},
			{"hop limit 254", 21, 254, false, SRNIC_WIRE_BAD_ND},
			{"hop limit 64", 21, 64, false, SRNIC_WIRE_BAD_ND},
			{"code 1", 55, 1, true, SRNIC_WIRE_BAD_ND},
			{"checksum", 57, 0x5a, false, SRNIC_WIRE_BAD_ND},
			{"a target bit", 70, 0x10, false, SRNIC_WIRE_BAD_ND},
			{"payload length 23", 19, 23, true, SRNIC_WIRE_BAD_ND},
			{"payload length past the frame", 19, 40, false,
			 SRNIC_WIRE_BAD_ND},
			{"a multicast target", 62, 0xff, true,
			 SRNIC_WIRE_BAD_ND},
			{"from a group", 22, 0xff, true, SRNIC_WIRE_BAD_ND},
			{"option length 0", 79, 0, true, SRNIC_WIRE_BAD_ND},
			{"option past the message", 79, 2, true,
			 SRNIC_WIRE_BAD_ND},
			{"a group's link-layer address", 80, 0x03, true,
			 SRNIC_WIRE_BAD_ND},
			/* (the reserved bytes: not read) */
			{"NS's reserved bytes", 58, 0xff, true, SRNIC_WIRE_OK},
			/* (an NS's option is the source's: a target's is
			 * passed over as unknown) */
			{"an NS with a target's address", 78, 2, true,
			 SRNIC_WIRE_OK},
			{"to anyone", 53, 0x77, true, SRNIC_WIRE_OK},
			{"from :: (a DAD probe)", UINT32_MAX, 0, true,
			 SRNIC_WIRE_OK},
		};
		unsigned i;

		n = nd_frame(f, SRNIC_ND_SOLICIT, NULL, 0, smac);
		for (i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
			enum srnic_wire_err e;

			memcpy(g, f, n);
			if (d[i].off == UINT32_MAX)
				memset(g + 22, 0, 16);
			else if (d[i].off)
				g[d[i].off] = d[i].val;
			if (d[i].fix_sum)
				ref_fix6(g, 58, 56);
			memset(&got, 0x5a, sizeof(got));
			e = srnic_wire_nd_decode(g, n, &got);
			CHECK(e == d[i].want, "%s: %d, not %d", d[i].what, e,
			      d[i].want);
			if (e == SRNIC_WIRE_OK && d[i].off == 58)
				CHECK(got.flags == 0, "NS with flags %02x",
				      got.flags);
			if (e == SRNIC_WIRE_OK && d[i].off == 78)
				CHECK(!got.has_lladdr,
				      "a target's address taken from an NS");
		}
		for (cut = 0; cut < n; cut++)
			CHECK(srnic_wire_nd_decode(f, cut, &got) !=
				      SRNIC_WIRE_OK,
			      "cut to %u bytes: taken", cut);
		for (cut = 0; cut < 55; cut++)
			CHECK(srnic_wire_nd_decode(f, cut, &got) ==
				      SRNIC_WIRE_NOT_OURS,
			      "cut to %u bytes: not NOT_OURS", cut);
	}

	/* Options: unknown ones passed over, the first address taken, a
	 * wrong one refused. */
	{
		static const struct {
			const char *what;
			uint8_t type;
			uint8_t opts[32];
			uint8_t olen;
			enum srnic_wire_err want;
			bool has;
		} o[] = {
			{"a nonce, then the address", SRNIC_ND_SOLICIT,
			 {14, 1, 1, 2, 3, 4, 5, 6, 1, 1, 2, 0xaa, 0xbb, 0xcc,
			  0xdd, 0xee},
			 16, SRNIC_WIRE_OK, true},
			{"two addresses", SRNIC_ND_ADVERT,
			 {2, 1, 2, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 2, 1, 2, 9, 9,
			  9, 9, 9},
			 16, SRNIC_WIRE_OK, true},
			{"the address, then a broken one", SRNIC_ND_ADVERT,
			 {2, 1, 2, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 2, 1, 1, 0, 0,
			  0, 0, 0},
			 16, SRNIC_WIRE_OK, true},
			{"an NA with a source's address", SRNIC_ND_ADVERT,
			 {1, 1, 2, 0xaa, 0xbb, 0xcc, 0xdd, 0xee}, 8,
			 SRNIC_WIRE_OK, false},
			{"an address of 14 bytes", SRNIC_ND_SOLICIT,
			 {1, 2, 2, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 1, 2, 3, 4, 5,
			  6, 7, 8},
			 16, SRNIC_WIRE_BAD_ND, false},
			{"a zero address", SRNIC_ND_ADVERT,
			 {2, 1}, 8, SRNIC_WIRE_BAD_ND, false},
			{"a lone byte", SRNIC_ND_ADVERT, {0}, 1,
			 SRNIC_WIRE_BAD_ND, false},
			{"a nonce cut short", SRNIC_ND_SOLICIT,
			 {14, 2, 1, 2, 3, 4, 5, 6}, 8, SRNIC_WIRE_BAD_ND,
			 false},
			{"an unknown option of 0", SRNIC_ND_SOLICIT,
			 {99, 0, 1, 2, 3, 4, 5, 6}, 8, SRNIC_WIRE_BAD_ND,
			 false},
		};
		unsigned i;

		for (i = 0; i < sizeof(o) / sizeof(o[0]); i++) {
			enum srnic_wire_err e;

			n = nd_frame(f, o[i].type, o[i].opts, o[i].olen, NULL);
			e = srnic_wire_nd_decode(f, n, &got);
			if (!CHECK(e == o[i].want, "%s: %d, not %d", o[i].what,
				   e, o[i].want) ||
			    e != SRNIC_WIRE_OK)
				continue;
			CHECK(got.has_lladdr == o[i].has &&
				      !memcmp(got.lladdr,
					      o[i].has
						      ? (const uint8_t *)"\x02\xaa\xbb\xcc\xdd\xee"
						      : zero6,
					      6),
			      "%s: address %02x:%02x:%02x:%02x:%02x:%02x",
			      o[i].what, got.lladdr[0], got.lladdr[1],
			      got.lladdr[2], got.lladdr[3], got.lladdr[4],
			      got.lladdr[5]);
		}
	}
	/* NA's reserved bits: not read, not sent back. */
	n = nd_frame(f, SRNIC_ND_ADVERT, NULL, 0, dmac);
	f[58] |= 0x1f;
	f[61] = 0x44;
	ref_fix6(f, 58, 56);
	CHECK(srnic_wire_nd_decode(f, n, &got) == SRNIC_WIRE_OK &&
		      got.flags == (SRNIC_ND_F_SOLICITED | SRNIC_ND_F_OVERRIDE),
	      "NA's reserved bits read as flags (%02x)", got.flags);
	n = srnic_wire_nd_encode(g, dmac, smac, &got);
	for (k = 0; k < n; k++)
		if (!CHECK(k == 58 || k == 61 || (k == 56 || k == 57) ||
				   g[k] == f[k],
			   "NA encoded back differs at %u", k))
			break;
	CHECK(g[58] == 0x60 && g[61] == 0, "reserved bits sent");
}

/* The inverted sum over an MLD frame's pseudo-header and its ICMPv6
 * message, behind an 8-byte hop-by-hop header: 0 when its checksum is
 * right; and that checksum written. */
static uint16_t mld_check(const uint8_t *f)
{
	uint32_t mlen = srnic_get16(f + 18) - 8u;

	return (uint16_t)~wire_ones_ref(f + 62, mlen,
					wire_ones_ref(f + 22, 32, 0) + mlen +
						58);
}

static void mld_fix(uint8_t *f)
{
	srnic_put16(f + 64, 0);
	srnic_put16(f + 64, mld_check(f));
}

/* A query as a router of the link sends it: from fe80::1 to ff02::1 (to
 * group, if one is asked about), hop limit 1, the router alert, then
 * ICMPv6 130 with the code and group, MLDv2's 28 bytes or MLDv1's 24;
 * its length. */
static uint32_t mld_query(uint8_t *f, const uint8_t *group, uint16_t code,
			  bool v2)
{
	static const uint8_t querier[16] = {0xfe, 0x80, [15] = 1};
	uint32_t mlen = v2 ? 28 : 24;
	uint8_t *m = f + 62;

	memset(f, 0, 62 + mlen);
	memcpy(f, "\x33\x33\0\0\0\x01", 6);
	memcpy(f + 6, rdmac + 6, 6);
	srnic_put16(f + 12, 0x86dd);
	f[14] = 0x60;
	srnic_put16(f + 18, (uint16_t)(8 + mlen));
	f[21] = 1;
	memcpy(f + 22, querier, 16);
	memcpy(f + 38, group ? group : srnic_ip6_all_nodes, 16);
	memcpy(f + 54, "\x3a\0\x05\x02\0\0\x01\0", 8);
	m[0] = SRNIC_MLD_QUERY;
	srnic_put16(m + 4, code);
	if (group)
		memcpy(m + 8, group, 16);
	if (v2)
		m[25] = 125;	/* (QQIC: the querier's interval) */
	mld_fix(f);
	return 62 + mlen;
}

/* MLD: a report is RFC 3810's, from the port's link-local address; a
 * query is read (MLDv1 and v2, both codes of its delay), what RFC 3810
 * refuses refused, the rest of ICMPv6 left to others. */
static void test_mld(void)
{
	static const uint8_t every[16];
	uint8_t f[160], g[160], ll[16], grp[16], mac[6];
	struct srnic_mld_query q;
	struct srnic_nd nd;
	uint32_t n, cut;
	unsigned i;

	srnic_wire_ip6_link_local(smac, ll);
	CHECK(!memcmp(ll, "\xfe\x80\0\0\0\0\0\0\0\xaa\xbb\xff\xfe\xcc\xdd\xee",
		      16),
	      "link-local of 02:aa:bb:cc:dd:ee is not fe80::aa:bbff:fecc:ddee");
	srnic_wire_nd_solicited_node(my_ip, grp, mac);
	memset(f, 0xee, sizeof(f));
	n = srnic_wire_mld_report_encode(f, smac, ll, grp,
					 SRNIC_MLD_TO_EXCLUDE);
	CHECK(n == SRNIC_MLD_FRAME && n == 90 && f[n] == 0xee,
	      "report of %u bytes, or written past them", n);
	CHECK(!memcmp(f, "\x33\x33\0\0\0\x16", 6) && !memcmp(f + 6, smac, 6) &&
		      srnic_get16(f + 12) == 0x86dd,
	      "report: Ethernet header");
	CHECK(srnic_get32(f + 14) == 0x60000000 && srnic_get16(f + 18) == 36 &&
		      f[20] == 0 && f[21] == 1 && !memcmp(f + 22, ll, 16) &&
		      !memcmp(f + 38, "\xff\x02\0\0\0\0\0\0\0\0\0\0\0\0\0\x16",
			      16),
	      "report: IPv6 header (payload %u, next %u, hops %u)",
	      srnic_get16(f + 18), f[20], f[21]);
	CHECK(!memcmp(f + 54, "\x3a\0\x05\x02\0\0\x01\0", 8),
	      "report: the hop-by-hop header and its router alert");
	CHECK(f[62] == 143 && f[63] == 0 && mld_check(f) == 0 &&
		      srnic_get16(f + 66) == 0 && srnic_get16(f + 68) == 1,
	      "report: type, code, checksum, reserved, one record");
	CHECK(f[70] == 4 && f[71] == 0 && srnic_get16(f + 72) == 0 &&
		      !memcmp(f + 74, grp, 16),
	      "report: the record (change to exclude, no sources, the group)");
	n = srnic_wire_mld_report_encode(f, smac, ll, grp,
					 SRNIC_MLD_IS_EXCLUDE);
	CHECK(f[70] == 2 && mld_check(f) == 0, "report answering a query");
	CHECK(srnic_wire_is_icmp6(f, n) &&
		      srnic_wire_mld_decode(f, n, &q) == SRNIC_WIRE_NOT_OURS &&
		      srnic_wire_nd_decode(f, n, &nd) == SRNIC_WIRE_NOT_OURS,
	      "a report taken as a query or as ND, or not as ICMPv6");
	/* MLDv1's report (RFC 2710), for an MLDv1 querier: to the group
	 * itself, 24 bytes, the group at 8 */
	memset(f, 0xee, sizeof(f));
	n = srnic_wire_mld1_report_encode(f, smac, ll, grp);
	CHECK(n == SRNIC_MLD1_FRAME && n == 86 && f[n] == 0xee,
	      "MLDv1 report of %u bytes, or written past them", n);
	CHECK(!memcmp(f, "\x33\x33\xff\x00\x00\x02", 6) &&
		      !memcmp(f + 6, smac, 6) && srnic_get16(f + 18) == 32 &&
		      f[20] == 0 && f[21] == 1 && !memcmp(f + 22, ll, 16) &&
		      !memcmp(f + 38, grp, 16) &&
		      !memcmp(f + 54, "\x3a\0\x05\x02\0\0\x01\0", 8),
	      "MLDv1 report: Ethernet, IPv6 and hop-by-hop headers");
	CHECK(f[62] == 131 && f[63] == 0 && mld_check(f) == 0 &&
		      srnic_get32(f + 66) == 0 && !memcmp(f + 70, grp, 16),
	      "MLDv1 report: type, code, checksum, delay, the group");
	CHECK(srnic_wire_mld_decode(f, n, &q) == SRNIC_WIRE_NOT_OURS,
	      "an MLDv1 report taken as a query");

	/* Queries: MLDv2's general one with a delay of 10 s, and of a
	 * delay in its float (exponent 2, mantissa 0x345: 0x1345 << 5);
	 * MLDv1's of the node's group. */
	n = mld_query(f, NULL, 10000, true);
	CHECK(srnic_wire_mld_decode(f, n, &q) == SRNIC_WIRE_OK &&
		      !memcmp(q.group, every, 16) &&
		      q.max_delay_ms == 10000 && q.src[0] == 0xfe,
	      "general MLDv2 query");
	CHECK(srnic_wire_nd_decode(f, n, &nd) == SRNIC_WIRE_NOT_OURS,
	      "a query taken as ND");
	n = mld_query(f, NULL, 0xa345, true);
	CHECK(srnic_wire_mld_decode(f, n, &q) == SRNIC_WIRE_OK &&
		      q.max_delay_ms == 0x1345u << 5,
	      "MLDv2 query's float delay: %u", q.max_delay_ms);
	CHECK(!q.v1, "MLDv2 query taken for MLDv1's");
	n = mld_query(f, grp, 0xa345, false);
	CHECK(srnic_wire_mld_decode(f, n, &q) == SRNIC_WIRE_OK &&
		      !memcmp(q.group, grp, 16) && q.max_delay_ms == 0xa345 &&
		      q.v1,
	      "MLDv1 query of a group (its delay in ms)");
	CHECK(srnic_wire_mld_decode(f, n + 10, &q) == SRNIC_WIRE_OK,
	      "padded query refused");

	/* Damage, one field at a time, to MLDv2's general query. */
	{
		static const struct {
			const char *what;
			uint32_t off;
			uint8_t val;
			bool fix_sum;
			enum srnic_wire_err want;
		} d[] = {
			{"nothing", 0, 0x33, false, SRNIC_WIRE_OK},
			{"hop limit 2", 21, 2, false, SRNIC_WIRE_BAD_ND},
			{"hop limit 255", 21, 255, false, SRNIC_WIRE_BAD_ND},
			{"from a global address", 22, 0xfd, false,
			 SRNIC_WIRE_BAD_ND},
			{"from fec0::", 23, 0xc0, false, SRNIC_WIRE_BAD_ND},
			{"checksum", 65, 0x5a, false, SRNIC_WIRE_BAD_ND},
			{"code 1", 63, 1, true, SRNIC_WIRE_BAD_ND},
			{"26 bytes (neither MLD's)", 19, 8 + 26, true,
			 SRNIC_WIRE_BAD_ND},
			{"payload past the frame", 19, 8 + 40, false,
			 SRNIC_WIRE_BAD_ND},
			{"hop-by-hop header past the payload", 55, 4, false,
			 SRNIC_WIRE_BAD_ND},
			{"a hop-by-hop header before UDP", 54, 17, false,
			 SRNIC_WIRE_NOT_OURS},
			{"ICMPv6 without the hop-by-hop header", 20, 58, false,
			 SRNIC_WIRE_NOT_OURS},
			{"an MLDv1 report", 62, 131, true,
			 SRNIC_WIRE_NOT_OURS},
			{"an MLDv2 report", 62, 143, true,
			 SRNIC_WIRE_NOT_OURS},
			{"an echo request", 62, 128, true,
			 SRNIC_WIRE_NOT_OURS},
			/* (MLDv2's flags and sources: not read) */
			{"the S flag", 86, 0x08, true, SRNIC_WIRE_OK},
		};

		n = mld_query(f, NULL, 10000, true);
		for (i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
			enum srnic_wire_err e;

			memcpy(g, f, n);
			g[d[i].off] = d[i].val;
			if (d[i].fix_sum)
				mld_fix(g);
			e = srnic_wire_mld_decode(g, n, &q);
			CHECK(e == d[i].want, "%s: %d, not %d", d[i].what, e,
			      d[i].want);
		}
		for (cut = 0; cut < n; cut++)
			CHECK(srnic_wire_mld_decode(f, cut, &q) !=
				      SRNIC_WIRE_OK,
			      "query cut to %u bytes: taken", cut);
		/* (every verdict the oracle's too) */
		for (cut = 0; cut <= n; cut++)
			CHECK(!wire_mld_oracle(f, cut),
			      "cut to %u bytes: %s", cut,
			      wire_mld_oracle(f, cut));
	}
}

int main(void)
{
	test_layout();
	test_shapes();
	test_number();
	test_zero_sum();
	test_integrity();
	test_damage();
	test_frame_qpn();
	test_ip6_id();
	test_nd();
	test_mld();
	return check_summary("test_wire_udp6");
}
