/* SPDX-License-Identifier: MIT */
/*
 * UDP/IP encapsulation (src/wire/wire.c, srnic_wire_udp_wrap and _unwrap):
 * a wrapped frame is the IPv4 and UDP headers docs/wire-protocol.md
 * gives, checksums right; unwrapping gives the raw frame back byte for
 * byte, without the Ethernet padding; a UDP node's CRC and MAC survive a
 * router's new Ethernet addresses and a raw node's do not; and every
 * header a hostile or broken sender could get wrong is refused (BAD_IP)
 * or passed over as someone else's (NOT_OURS).
 */
#include <sodium.h>
#include <stdlib.h>

#include "check.h"
#include "srnic_wire.h"
#include "wire_oracle.h"

#define MY_IP 0x0a370002u	/* 10.55.0.2 */
#define PEER_IP 0x0a370001u
#define PORT SRNIC_UDP_PORT

static const uint8_t dmac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
static const uint8_t smac[6] = {0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee};
/* A router's addresses, in place of the sender's. */
static const uint8_t rdmac[6] = {0x02, 0x77, 0x77, 0x77, 0x77, 0x01};
static const uint8_t rsmac[6] = {0x02, 0x77, 0x77, 0x77, 0x77, 0x02};

/* The ones' complement of the sum of len bytes (wire_oracle.h's plain
 * sum, not the codec's): 0 over a header whose checksum is right. */
static uint16_t sum16(const uint8_t *p, uint32_t len, uint32_t sum)
{
	return (uint16_t)~wire_ones_ref(p, len, sum);
}

/* wire_udp_write's WRITE of plen payload bytes, sealed when crc,
 * wrapped: *len bytes, SRNIC_UDP_HLEN more than the raw frame, which
 * *raw (a copy) holds; 16 bytes of room after it. */
static uint8_t *wrapped(uint32_t plen, bool crc, uint8_t **raw,
			uint32_t *len)
{
	uint8_t *w = wire_udp_write(plen, crc, SRNIC_UDP_HLEN, dmac, smac,
				    raw, len);

	*len += SRNIC_UDP_HLEN;
	srnic_wire_udp_wrap(w, *len, PEER_IP, MY_IP, PORT,
			    plen % SRNIC_UDP_PATHS, (uint16_t)(plen * 7 + 1));
	return w;
}

/* The sender's address and path of the frame unwrap_copy took last. */
static struct srnic_udp_rx last;

static enum srnic_wire_err unwrap_copy(const uint8_t *w, uint32_t len,
				       uint8_t **out, uint32_t *raw_len)
{
	uint8_t *c = malloc(len);
	enum srnic_wire_err e;

	memcpy(c, w, len);
	memset(&last, 0, sizeof(last));
	e = srnic_wire_udp_unwrap(c, len, MY_IP, PORT, &last);
	*raw_len = last.raw_len;
	*out = c;
	return e;
}

/* The headers as docs/wire-protocol.md has them, and back again. */
static void test_layout(void)
{
	uint32_t plen, len, raw_len, k;
	uint8_t *raw, *w, *u;

	for (k = 0; k < 3; k++) {
		plen = k == 0 ? 0 : k == 1 ? 8 : 4096;
		w = wrapped(plen, k == 2, &raw, &len);
		CHECK(!memcmp(w, dmac, 6) && !memcmp(w + 6, smac, 6),
		      "%u B: the Ethernet addresses are not the raw frame's",
		      plen);
		CHECK(w[12] == 0x08 && w[13] == 0x00, "%u B: EtherType %02x%02x",
		      plen, w[12], w[13]);
		CHECK(w[14] == 0x45 && w[15] == 0, "%u B: IPv4 first bytes",
		      plen);
		CHECK(srnic_get16(w + 16) == len - 14,
		      "%u B: IPv4 total length %u of %u", plen,
		      srnic_get16(w + 16), len - 14);
		CHECK(srnic_get16(w + 20) == 0x4000 && w[22] == 64 &&
			      w[23] == 17,
		      "%u B: DF, TTL 64, UDP", plen);
		CHECK(sum16(w + 14, 20, 0) == 0, "%u B: IPv4 checksum wrong",
		      plen);
		CHECK(srnic_get32(w + 26) == PEER_IP &&
			      srnic_get32(w + 30) == MY_IP,
		      "%u B: addresses", plen);
		CHECK(srnic_get16(w + 34) == 49152 + plen % SRNIC_UDP_PATHS,
		      "%u B: source port %u does not name path %u", plen,
		      srnic_get16(w + 34), plen % SRNIC_UDP_PATHS);
		CHECK(srnic_get16(w + 36) == PORT &&
			      srnic_get16(w + 38) == len - 34 &&
			      srnic_get16(w + 40) == 0,
		      "%u B: UDP port, length, checksum", plen);
		CHECK(w[42] == SRNIC_WIRE_VERSION && w[43] == SRNIC_OP_WRITE,
		      "%u B: srnic's base header not at 42", plen);
		/* (Ethernet padding after it is not the frame's) */
		if (CHECK(unwrap_copy(w, len + 16, &u, &raw_len) ==
				  SRNIC_WIRE_OK,
			  "%u B: own wrap refused", plen))
			CHECK(raw_len == len - SRNIC_UDP_HLEN &&
				      !memcmp(u + SRNIC_UDP_HLEN, raw, raw_len) &&
				      last.src_ip == PEER_IP &&
				      last.path == plen % SRNIC_UDP_PATHS &&
				      last.seq == (uint16_t)(plen * 7 + 1),
			      "%u B: unwrapped is not the raw frame from its "
			      "sender, path and number", plen);
		free(u);
		free(raw);
		free(w);
	}
}

/* A router's Ethernet addresses: a UDP node's CRC and MAC still pass, a
 * raw node's (which cover them) fail. */
static void test_integrity(void)
{
	uint8_t key[SRNIC_KEY_LEN], *raw, *w, *u, *h;
	struct srnic_pkt p, got;
	uint32_t len, raw_len, n;
	uint8_t hdr[SRNIC_UDP_HLEN + 256];

	w = wrapped(512, true, &raw, &len);
	memcpy(w, rdmac, 6);
	memcpy(w + 6, rsmac, 6);
	if (CHECK(unwrap_copy(w, len, &u, &raw_len) == SRNIC_WIRE_OK,
		  "routed frame refused")) {
		CHECK(srnic_wire_check_crc(u + SRNIC_UDP_HLEN, raw_len, true,
					   true) == SRNIC_WIRE_OK,
		      "a router's addresses broke a UDP node's CRC");
		CHECK(srnic_wire_check_crc(u + SRNIC_UDP_HLEN, raw_len, true,
					   false) == SRNIC_WIRE_BAD_CRC,
		      "the raw CRC did not cover the Ethernet addresses");
		u[SRNIC_UDP_HLEN + 60] ^= 4;
		CHECK(srnic_wire_check_crc(u + SRNIC_UDP_HLEN, raw_len, true,
					   true) == SRNIC_WIRE_BAD_CRC,
		      "a flipped payload bit passed a UDP node's CRC");
	}
	free(u);
	free(raw);
	free(w);

	if (!CHECK(sodium_init() >= 0, "libsodium did not start"))
		return;
	for (n = 0; n < SRNIC_KEY_LEN; n++)
		key[n] = (uint8_t)(n * 29 + 5);
	memset(&p, 0, sizeof(p));
	p.opcode = SRNIC_OP_BOOTING;
	p.flags = SRNIC_F_AUTH;
	p.ipv4 = PEER_IP;
	h = wire_build(&p, dmac, smac, &n);
	srnic_wire_sign(h, key, true);
	memset(hdr, 0, sizeof(hdr));
	memcpy(hdr + SRNIC_UDP_HLEN, h, n);
	srnic_wire_udp_wrap(hdr, n + SRNIC_UDP_HLEN, PEER_IP, MY_IP, PORT, 3,
			    0);
	memcpy(hdr, rdmac, 6);
	memcpy(hdr + 6, rsmac, 6);
	if (CHECK(srnic_wire_udp_unwrap(hdr, n + SRNIC_UDP_HLEN, MY_IP, PORT,
					&last) == SRNIC_WIRE_OK &&
			  (raw_len = last.raw_len) != 0,
		  "routed BOOTING refused") &&
	    CHECK(srnic_wire_decode(hdr + SRNIC_UDP_HLEN, raw_len, &got) ==
			  SRNIC_WIRE_OK,
		  "routed BOOTING does not decode")) {
		CHECK(srnic_wire_auth_ok(hdr + SRNIC_UDP_HLEN, &got, key, true),
		      "a router's addresses broke a UDP node's MAC");
		CHECK(!srnic_wire_auth_ok(hdr + SRNIC_UDP_HLEN, &got, key,
					  false),
		      "the raw MAC did not cover the Ethernet addresses");
	}
	free(h);
}

/* What a sender could get wrong, one thing at a time. */
struct damage {
	const char *what;
	uint32_t off;		/* the byte to set (UINT32_MAX: none) */
	uint8_t val;
	bool fix_ip_sum;	/* keep the IPv4 checksum right after it */
	enum srnic_wire_err want;
};

static const struct damage damages[] = {
	{"nothing", UINT32_MAX, 0, false, SRNIC_WIRE_OK},
	{"IPv4 checksum", 25, 0x5a, false, SRNIC_WIRE_BAD_IP},
	{"more fragments", 20, 0x60, true, SRNIC_WIRE_BAD_IP},
	{"a fragment's offset", 21, 0x08, true, SRNIC_WIRE_BAD_IP},
	/* (its port then read 4 bytes on: the UDP checksum, 0) */
	{"IHL 6 without options", 14, 0x46, true, SRNIC_WIRE_NOT_OURS},
	{"IHL 4", 14, 0x44, true, SRNIC_WIRE_NOT_OURS},
	{"total length past the frame", 16, 0x7f, true, SRNIC_WIRE_BAD_IP},
	{"UDP length", 38, 0x7f, false, SRNIC_WIRE_BAD_IP},
	{"UDP checksum, wrong", 40, 0x12, false, SRNIC_WIRE_BAD_IP},
	{"another UDP port", 37, 0x01, false, SRNIC_WIRE_NOT_OURS},
	{"another host", 33, 0x09, true, SRNIC_WIRE_NOT_OURS},
	{"TCP", 23, 6, true, SRNIC_WIRE_NOT_OURS},
	{"IPv6's EtherType", 12, 0x86, false, SRNIC_WIRE_NOT_OURS},
	{"IP version 6", 14, 0x65, true, SRNIC_WIRE_NOT_OURS},
	{"srnic's own EtherType", 12, 0x88, false, SRNIC_WIRE_NOT_OURS},
	/* sources no node has: nobody to answer */
	{"from a loopback address", 26, 127, true, SRNIC_WIRE_BAD_IP},
	{"from a multicast group", 26, 0xe0, true, SRNIC_WIRE_BAD_IP},
};

static void test_damage(void)
{
	uint32_t len, raw_len, i, cut;
	uint8_t *raw, *w, *u;
	enum srnic_wire_err e;

	for (i = 0; i < sizeof(damages) / sizeof(damages[0]); i++) {
		const struct damage *d = &damages[i];

		w = wrapped(256, true, &raw, &len);
		if (d->off != UINT32_MAX)
			w[d->off] = d->val;
		if (d->fix_ip_sum) {
			srnic_put16(w + 24, 0);
			srnic_put16(w + 24, sum16(w + 14, 20, 0));
		}
		e = unwrap_copy(w, len, &u, &raw_len);
		CHECK(e == d->want, "%s: %d, not %d", d->what, e, d->want);
		free(u);
		free(raw);
		free(w);
	}
	/* IPv4 options (4 NOPs): to our port, refused (none of ours has
	 * them); to another, not ours. */
	w = wrapped(256, true, &raw, &len);
	{
		uint8_t *o = calloc(1, len + 4);

		memcpy(o, w, 34);
		memset(o + 34, 1, 4);
		memcpy(o + 38, w + 34, len - 34);
		o[14] = 0x46;
		srnic_put16(o + 16, (uint16_t)(len + 4 - 14));
		srnic_put16(o + 24, 0);
		srnic_put16(o + 24, sum16(o + 14, 24, 0));
		CHECK(unwrap_copy(o, len + 4, &u, &raw_len) ==
			      SRNIC_WIRE_BAD_IP,
		      "IPv4 options to our port taken");
		free(u);
		srnic_put16(o + 38 + 2, PORT + 1);
		CHECK(unwrap_copy(o, len + 4, &u, &raw_len) ==
			      SRNIC_WIRE_NOT_OURS,
		      "IPv4 options to another port not passed over");
		free(u);
		free(o);
	}
	free(raw);
	free(w);
	/* A right UDP checksum (none of ours carries one) passes. */
	w = wrapped(256, false, &raw, &len);
	srnic_put16(w + 40, 0);
	{
		uint32_t s = 0, k;

		for (k = 26; k < 34; k += 2)
			s += srnic_get16(w + k);
		s += 17 + (len - 34);
		srnic_put16(w + 40, sum16(w + 34, len - 34, s));
	}
	CHECK(unwrap_copy(w, len, &u, &raw_len) == SRNIC_WIRE_OK,
	      "a right UDP checksum refused");
	free(u);
	/* The limited broadcast and a multicast group are ours too; a
	 * frame from 0.0.0.0 or the limited broadcast is refused. */
	srnic_put16(w + 40, 0);
	{
		static const struct {
			unsigned off;
			uint32_t ip;
			enum srnic_wire_err want;
		} addr[] = {
			{30, SRNIC_IPV4_BROADCAST, SRNIC_WIRE_OK},
			{30, 0xef010203, SRNIC_WIRE_OK},
			{30, MY_IP, SRNIC_WIRE_OK},
			{26, 0, SRNIC_WIRE_BAD_IP},
			{26, SRNIC_IPV4_BROADCAST, SRNIC_WIRE_BAD_IP},
			{26, PEER_IP, SRNIC_WIRE_OK},
		};
		unsigned k;

		for (k = 0; k < sizeof(addr) / sizeof(addr[0]); k++) {
			srnic_put32(w + addr[k].off, addr[k].ip);
			srnic_put16(w + 24, 0);
			srnic_put16(w + 24, sum16(w + 14, 20, 0));
			CHECK(unwrap_copy(w, len, &u, &raw_len) == addr[k].want,
			      "%s %08x: not %d", addr[k].off == 26 ? "from" : "to",
			      addr[k].ip, addr[k].want);
			free(u);
		}
	}
	/* A source port that names no path of ours: taken, no path. */
	srnic_put16(w + 34, 0x1234);
	CHECK(unwrap_copy(w, len, &u, &raw_len) == SRNIC_WIRE_OK &&
		      last.path == SRNIC_UDP_NO_PATH,
	      "source port 0x1234: path %u", last.path);
	free(u);
	/* Cut anywhere: never OK, never a read past the end (ASan). */
	for (cut = 0; cut < len; cut++) {
		e = unwrap_copy(w, cut, &u, &raw_len);
		CHECK(e != SRNIC_WIRE_OK, "cut to %u of %u bytes: taken", cut,
		      len);
		free(u);
	}
	free(raw);
	free(w);
}

/* A peer's address inside a UDP node, and back; nothing else reads as
 * one. */
static void test_ip_mac(void)
{
	static const uint8_t others[][6] = {
		{0x02, 0x53, 0x4e, 0x01, 0x00, 0x01},	/* the testbed's */
		{0x02, 0x5e, 10, 55, 0, 9},		/* a service's */
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		{0x01, 0x00, 0x5e, 0x00, 0x00, 0x01},
	};
	uint8_t mac[6];
	unsigned i;

	srnic_wire_ip_mac(PEER_IP, mac);
	CHECK(!(mac[0] & 1) && (mac[0] & 2), "not local and unicast: %02x",
	      mac[0]);
	CHECK(srnic_wire_mac_ip(mac) == PEER_IP, "the address back: %08x",
	      srnic_wire_mac_ip(mac));
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		CHECK(srnic_wire_mac_ip(others[i]) == 0,
		      "address %u read as a peer's", i);
}

/* ARP: the layout RFC 826 gives, every field back, and what is not ARP
 * for IPv4 over Ethernet, or not from a host, refused. */
static void test_arp(void)
{
	static const uint8_t bc[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t want[42] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x53, 0x4e, 0x01,
		0x00, 0x02, 0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 0x06, 0x04,
		0x00, 0x01, 0x02, 0x53, 0x4e, 0x01, 0x00, 0x02, 10, 55,
		0, 2, 0, 0, 0, 0, 0, 0, 10, 55, 0, 1,
	};
	struct srnic_arp a = {.op = SRNIC_ARP_REQUEST,
			      .sha = {0x02, 0x53, 0x4e, 0x01, 0x00, 0x02},
			      .spa = MY_IP,
			      .tpa = PEER_IP},
			 got;
	uint8_t f[SRNIC_ARP_FRAME + 8], g[SRNIC_ARP_FRAME];
	uint32_t cut;
	unsigned i;

	memset(f, 0xee, sizeof(f));
	srnic_wire_arp_encode(f, bc, a.sha, &a);
	CHECK(!memcmp(f, want, sizeof(want)), "not RFC 826's layout");
	for (i = sizeof(want); i < SRNIC_ARP_FRAME; i++)
		if (!CHECK(f[i] == 0, "padding byte %u is %02x", i, f[i]))
			break;
	CHECK(f[SRNIC_ARP_FRAME] == 0xee, "written past the frame");
	if (CHECK(srnic_wire_arp_decode(f, SRNIC_ARP_FRAME, &got) ==
			  SRNIC_WIRE_OK,
		  "own request refused"))
		CHECK(got.op == a.op && !memcmp(got.sha, a.sha, 6) &&
			      got.spa == a.spa && !memcmp(got.tha, a.tha, 6) &&
			      got.tpa == a.tpa,
		      "a field changed on the way");
	/* Damage, one field at a time. */
	{
		static const struct {
			uint32_t off;
			uint8_t val;
			enum srnic_wire_err want;
		} d[] = {
			{12, 0x88, SRNIC_WIRE_NOT_OURS},	/* srnic's */
			{13, 0x00, SRNIC_WIRE_NOT_OURS},	/* IPv4's */
			{15, 0x06, SRNIC_WIRE_BAD_ARP},	/* hardware type */
			{16, 0x86, SRNIC_WIRE_BAD_ARP},	/* protocol */
			{18, 0x08, SRNIC_WIRE_BAD_ARP},	/* lengths */
			{19, 0x10, SRNIC_WIRE_BAD_ARP},
			{21, 0x03, SRNIC_WIRE_BAD_ARP},	/* RARP */
			{22, 0x03, SRNIC_WIRE_BAD_ARP},	/* group sender */
			{28, 0xe0, SRNIC_WIRE_BAD_ARP},	/* from a group */
			{38, 0x00, SRNIC_WIRE_OK},	/* any target */
		};

		for (i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
			memcpy(g, f, sizeof(g));
			g[d[i].off] = d[i].val;
			CHECK(srnic_wire_arp_decode(g, sizeof(g), &got) ==
				      d[i].want,
			      "byte %u = %02x: %d", d[i].off, d[i].val,
			      srnic_wire_arp_decode(g, sizeof(g), &got));
		}
		/* a zero sender's Ethernet address; a probe's 0.0.0.0 */
		memcpy(g, f, sizeof(g));
		memset(g + 22, 0, 6);
		CHECK(srnic_wire_arp_decode(g, sizeof(g), &got) ==
			      SRNIC_WIRE_BAD_ARP,
		      "a zero sender taken");
		memcpy(g, f, sizeof(g));
		memset(g + 28, 0, 4);
		CHECK(srnic_wire_arp_decode(g, sizeof(g), &got) ==
				      SRNIC_WIRE_OK && got.spa == 0,
		      "a probe refused");
	}
	for (cut = 0; cut < 42; cut++)
		CHECK(srnic_wire_arp_decode(f, cut, &got) != SRNIC_WIRE_OK,
		      "cut to %u bytes: taken", cut);
}

/* A frame wrapped with no number gets one as it goes out: the header's
 * checksum mended for every number (RFC 1624's update), unwrap reading it
 * back. */
static void test_number(void)
{
	static const uint16_t seqs[] = {1, 2, 0x00ff, 0x7fff, 0x8000, 0xfffe,
					0xffff, 12345};
	uint32_t len, raw_len, k, bad = 0;
	uint8_t *raw, *w, *c, *u;

	free(wrapped(64, true, &raw, &len));
	w = calloc(1, len);	/* (wrapped again, with no number) */
	memcpy(w + SRNIC_UDP_HLEN, raw, len - SRNIC_UDP_HLEN);
	srnic_wire_udp_wrap(w, len, PEER_IP, MY_IP, PORT, 1, 0);
	srnic_wire_udp_number(w, 0);
	CHECK(srnic_wire_udp_seq(w) == 0 && sum16(w + 14, 20, 0) == 0,
	      "number 0 changed the header");
	c = malloc(len);
	for (k = 0; k < 65536 + sizeof(seqs) / sizeof(seqs[0]); k++) {
		uint16_t seq = k < 65536 ? (uint16_t)k : seqs[k - 65536];

		memcpy(c, w, len);
		srnic_wire_udp_number(c, seq);
		if (srnic_wire_udp_seq(c) != seq || sum16(c + 14, 20, 0) != 0 ||
		    srnic_get16(c + 18) != seq) {
			bad++;
			continue;
		}
		if (k % 4099 == 0 || k >= 65536) {
			if (unwrap_copy(c, len, &u, &raw_len) != SRNIC_WIRE_OK ||
			    last.seq != seq ||
			    memcmp(u + SRNIC_UDP_HLEN, raw, raw_len))
				bad++;
			free(u);
		}
	}
	CHECK(!bad, "%u numbers left a wrong header or were not read back",
	      bad);
	free(c);
	free(raw);
	free(w);
}

int main(void)
{
	test_layout();
	test_number();
	test_integrity();
	test_damage();
	test_ip_mac();
	test_arp();
	return check_summary("test_wire_udp");
}
