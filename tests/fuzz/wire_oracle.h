/* SPDX-License-Identifier: MIT */
/*
 * What must hold for any frame srnic_wire_decode accepts, shared by the
 * libFuzzer target, the corpus replay and test_wire:
 *
 *  - the decoded packet obeys every promise of srnic_wire.h (opcode in range,
 *    payload inside the frame and inside the message, stride rules, unused
 *    fields zero), so the engine may trust it without re-checking;
 *  - encoding it again gives a frame that decodes to the same packet, and
 *    that frame is a fixed point of decode+encode;
 *  - the re-encoded header matches the input at every byte that carries a
 *    field, so encoder and decoder agree with the byte map of wire.c, not
 *    merely with each other;
 *  - srnic_wire_check_crc agrees with a plain bitwise CRC-32C written here,
 *    demanded or not;
 *  - what a UDP node runs before the decoder (the IPv4 and IPv6 unwraps,
 *    ARP, NDP) holds to its own rules: IPv6's and NDP's verdicts are
 *    those of references written here, with a plain checksum.
 *
 * Offsets here are literal numbers on purpose: they restate the map in the
 * comment at the top of wire.c, so a change to either side shows up.
 */
#ifndef SRNIC_WIRE_ORACLE_H
#define SRNIC_WIRE_ORACLE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srnic_wire.h"

#define WIRE_MIN_FRAME 60	/* Ethernet minimum without FCS */

/* Name of the first field in which a and b differ, or NULL.  The payload
 * pointer is not compared: two frames never share a buffer. */
static inline const char *wire_pkt_diff(const struct srnic_pkt *a,
					const struct srnic_pkt *b)
{
#define WIRE_FIELD(f)                                          \
	do {                                                   \
		if (memcmp(&a->f, &b->f, sizeof(a->f)) != 0)   \
			return #f;                             \
	} while (0)
	WIRE_FIELD(opcode);
	WIRE_FIELD(flags);
	WIRE_FIELD(dst_qpn);
	WIRE_FIELD(src_qpn);
	WIRE_FIELD(src_inc);
	WIRE_FIELD(dst_inc);
	WIRE_FIELD(msn);
	WIRE_FIELD(txid);
	WIRE_FIELD(ssn);
	WIRE_FIELD(rkey);
	WIRE_FIELD(imm);
	WIRE_FIELD(read_len);
	WIRE_FIELD(va);
	WIRE_FIELD(msg_off);
	WIRE_FIELD(pkt_len);
	WIRE_FIELD(msg_len);
	WIRE_FIELD(stride_shift);
	WIRE_FIELD(xflags);
	WIRE_FIELD(ts);
	WIRE_FIELD(ack_msn);
	WIRE_FIELD(xrc_srqn);
	WIRE_FIELD(tp_ipv4);
	WIRE_FIELD(tp_inc);
	WIRE_FIELD(tp_qpn);
	WIRE_FIELD(tp_ctl_qpn);
	WIRE_FIELD(tp_rkey);
	WIRE_FIELD(tp_va);
	WIRE_FIELD(qkey);
	WIRE_FIELD(src_ipv4);
	WIRE_FIELD(dst_ipv4);
	WIRE_FIELD(ts_echo);
	WIRE_FIELD(syndrome);
	WIRE_FIELD(rnr_timer);
	WIRE_FIELD(nak_msn);
	WIRE_FIELD(nak_txid);
	WIRE_FIELD(sack_msn);
	WIRE_FIELD(sack_first);
	WIRE_FIELD(sack_bits);
	WIRE_FIELD(credit);
	WIRE_FIELD(ipv4);
	WIRE_FIELD(ipv6);
	WIRE_FIELD(port);
	WIRE_FIELD(dev);
	WIRE_FIELD(ndev);
	WIRE_FIELD(hello_ms);
	WIRE_FIELD(paths);
	WIRE_FIELD(path_loss);
	WIRE_FIELD(path_delay);
	WIRE_FIELD(node_mac);
	WIRE_FIELD(node_name);
	WIRE_FIELD(queues);
	WIRE_FIELD(groups);
	WIRE_FIELD(svc_ipv4);
	WIRE_FIELD(svc_prio);
	WIRE_FIELD(svc_holder);
	WIRE_FIELD(svc_mode);
	WIRE_FIELD(svc_bound);
	WIRE_FIELD(eth_src);
#undef WIRE_FIELD
	return NULL;
}

static inline void wire_pkt_dump(FILE *f, const char *what,
				 const struct srnic_pkt *p)
{
	fprintf(f,
		"%s: op %u flags %#x dst_qpn %#x src_qpn %#x src_inc %#x "
		"dst_inc %#x msn %#x txid %#x ssn %#x rkey %#x imm %#x "
		"va %#llx msg_off %u pkt_len %u msg_len %u shift %u "
		"syndrome %u rnr %u nak_msn %#x nak_txid %#x ipv4 %#x port %u "
		"name '%.16s'\n",
		what, p->opcode, p->flags, p->dst_qpn, p->src_qpn, p->src_inc,
		p->dst_inc, p->msn, p->txid, p->ssn, p->rkey, p->imm,
		(unsigned long long)p->va, p->msg_off, p->pkt_len, p->msg_len,
		p->stride_shift, p->syndrome, p->rnr_timer, p->nak_msn,
		p->nak_txid, p->ipv4, p->port, p->node_name);
}

static inline void wire_hexdump(FILE *f, const uint8_t *buf, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		fprintf(f, "%02x%s", buf[i],
			i % 16 == 15 || i + 1 == len ? "\n" : " ");
}

/* Whether header byte off of an opcode-op frame carries a field (as
 * opposed to reserved bytes, which the decoder must ignore). */
static inline bool wire_byte_meaningful(uint8_t op, uint16_t flags,
					unsigned off)
{
	if (off < 38)
		return true;	/* Ethernet and base header */
	off -= 38;
	/* (TP_READ_REQ: bytes 20-23 of its extension, 64-67, reserved) */
	if (op == SRNIC_OP_TP_READ_REQ && off >= 64 && off < 68)
		return false;
	if (srnic_op_has_data_ext(op))
		return off < 40 || off >= 44 || (flags & SRNIC_F_ACKS);
	if (srnic_op_ack_shaped(op))
		return true;
	/* (every control frame: bytes 40-55 the node's IPv6 address) */
	if (off >= 40)
		return off < 56;
	/* (TPT_UPDATE, TPT_ACK: bytes 20-23 of the extension reserved) */
	if (op == SRNIC_OP_TPT_UPDATE || op == SRNIC_OP_TPT_ACK)
		return off < 20 || off >= 24;
	/* control frames: the name's last byte is forced to NUL on decode */
	/* (HELLO: byte 13 its paths, 14-15 its interval) */
	if (op == SRNIC_OP_HELLO)
		return off != 31;
	return off < 13 || (off >= 16 && off != 31);
}

/* Whether a packet of this opcode and flags has a MAC behind its headers. */
static inline bool wire_has_auth(uint8_t op, uint16_t flags)
{
	return srnic_op_signed(op) && (flags & SRNIC_F_AUTH);
}

/* Writes pkt as a frame into a new buffer (header, payload or the MAC
 * p->auth points to, CRC trailer if its flags say so, padding to the
 * Ethernet minimum) and returns it; *len gets its length. */
static inline uint8_t *wire_build(const struct srnic_pkt *p,
				  const uint8_t dst[6], const uint8_t src[6],
				  uint32_t *len)
{
	uint32_t hlen = srnic_wire_pkt_hlen(p);
	uint32_t plen = srnic_op_carries_payload(p->opcode) ? p->pkt_len : 0;
	uint32_t alen = wire_has_auth(p->opcode, p->flags) ? SRNIC_AUTH_LEN : 0;
	uint32_t crc = p->flags & SRNIC_F_CRC ? SRNIC_CRC_LEN : 0;
	uint32_t n = hlen + plen + alen + crc;
	uint8_t *f;

	n = n < WIRE_MIN_FRAME ? WIRE_MIN_FRAME : n;
	f = calloc(1, n);
	if (!f)
		abort();
	srnic_wire_encode(f, dst, src, p);
	if (plen)
		memcpy(f + hlen, p->payload, plen);
	if (alen && p->auth)
		memcpy(f + hlen, p->auth, alen);
	if (crc)
		srnic_wire_seal(f, n, false);
	*len = n;
	return f;
}

/* The UDP tests' data frame: a WRITE (QP 0x1010, from 0x12345, msn 7,
 * key 0x1001) of plen payload bytes (byte i is i * 7 + plen), sealed as
 * a UDP node seals it when crc, into a new buffer after `room` free
 * bytes (for a wrap's headers) and before 16 (for Ethernet padding).
 * *raw (to free) gets a copy of the raw frame, *len its length. */
static inline uint8_t *wire_udp_write(uint32_t plen, bool crc, uint32_t room,
				      const uint8_t dst[6],
				      const uint8_t src[6], uint8_t **raw,
				      uint32_t *len)
{
	struct srnic_pkt p;
	uint8_t *f, *w, *pay;
	uint32_t n, i;

	memset(&p, 0, sizeof(p));
	p.opcode = SRNIC_OP_WRITE;
	p.flags = SRNIC_F_LAST;
	p.dst_qpn = 0x1010;
	p.src_qpn = 0x12345;
	p.msn = 7;
	p.rkey = 0x1001;
	p.pkt_len = plen;
	p.msg_len = plen;
	p.stride_shift = 13;
	pay = calloc(1, plen ? plen : 1);
	if (!pay)
		abort();
	for (i = 0; i < plen; i++)
		pay[i] = (uint8_t)(i * 7 + plen);
	p.payload = pay;
	f = wire_build(&p, dst, src, &n);
	free(pay);
	w = calloc(1, room + n + SRNIC_CRC_LEN + 16);
	if (!w)
		abort();
	memcpy(w + room, f, n);
	free(f);
	if (crc) {
		n += SRNIC_CRC_LEN;
		srnic_wire_seal(w + room, n, true);
	}
	*raw = malloc(n);
	if (!*raw)
		abort();
	memcpy(*raw, w + room, n);
	*len = n;
	return w;
}

/* CRC-32C the slow, obvious way: reflected, polynomial 0x82f63b78. */
static inline uint32_t wire_crc32c_ref(const uint8_t *buf, uint32_t len)
{
	uint32_t c = 0xffffffff;
	int k;

	while (len--) {
		c ^= *buf++;
		for (k = 0; k < 8; k++)
			c = c >> 1 ^ (0x82f63b78 & -(c & 1));
	}
	return ~c;
}

/* What srnic_wire_check_crc must answer for this frame (udp: a UDP
 * node's, which reads the Ethernet addresses as zero). */
static inline enum srnic_wire_err wire_crc_expected(const uint8_t *buf,
						    uint32_t len,
						    bool required, bool udp)
{
	enum srnic_wire_err e;
	uint8_t *c;

	if (len < 38 || buf[12] != 0x88 || buf[13] != 0xb5)
		return SRNIC_WIRE_OK;	/* not ours: decode says so */
	if (!(buf[16] & 0x01))	/* flags 0x0100, big-endian at 14 + 2 */
		return required ? SRNIC_WIRE_BAD_CRC : SRNIC_WIRE_OK;
	if (len < 42)
		return SRNIC_WIRE_BAD_CRC;
	c = malloc(len);
	if (!c)
		abort();
	memcpy(c, buf, len);
	if (udp)
		memset(c, 0, 12);
	e = wire_crc32c_ref(c, len - 4) == srnic_get32(c + len - 4)
		    ? SRNIC_WIRE_OK
		    : SRNIC_WIRE_BAD_CRC;
	free(c);
	return e;
}

/* The path a UDP source port names, as docs/wire-protocol.md says. */
static inline uint8_t wire_path_of(uint16_t sport)
{
	return sport >= 49152 && sport < 49152 + 8 ? (uint8_t)(sport - 49152)
						  : SRNIC_UDP_NO_PATH;
}

/*
 * UDP/IP encapsulation: what unwrapping the input (as from a port, to
 * 10.55.0.2 at srnic's default port) may do.  It never reads or writes
 * past the frame (the sanitizers see to that), a frame it takes leaves a
 * raw one inside the input that is ours by its EtherType, and wrapping
 * that again and unwrapping it gives the same raw frame.  NULL, or what
 * broke; *raw (to free) gets the raw frame, *raw_len bytes, when it was
 * taken, else NULL.
 */
static inline const char *wire_udp_oracle(const uint8_t *buf, uint32_t len,
					  uint8_t **raw, uint32_t *raw_len)
{
	const uint32_t me = 0x0a370002u, peer = 0x0a370001u;
	struct srnic_udp_rx h = {0}, h2 = {0};
	uint16_t sport = len >= 36 ? srnic_get16(buf + 34) : 0;
	const char *bad = NULL;
	uint8_t *c, *w;

	*raw = NULL;
	c = malloc(len ? len : 1);
	if (!c)
		abort();
	memcpy(c, buf, len);
	{
		/* (whatever the input, read within it: the sanitizers see) */
		uint32_t q;

		(void)srnic_wire_udp_frame_qpn(c, len, &q);
	}
	if (srnic_wire_udp_unwrap(c, len, me, SRNIC_UDP_PORT, &h) !=
	    SRNIC_WIRE_OK) {
		/* (refused: as it came, for the codec or the next reader) */
		if (len && memcmp(c, buf, len))
			bad = "UDP unwrap changed a frame it refused";
		free(c);
		return bad;
	}
	*raw_len = h.raw_len;
	if (*raw_len + SRNIC_UDP_HLEN > len ||
	    *raw_len < SRNIC_ETH_HLEN + SRNIC_BASE_HLEN ||
	    srnic_get16(c + SRNIC_UDP_HLEN + 12) != SRNIC_ETHERTYPE) {
		free(c);
		return "UDP unwrap took a frame and left no raw frame in it";
	}
	/* (the sender as its IPv4 header had it, a host's; the path its
	 * source port names) */
	if (h.src_ip != srnic_get32(buf + SRNIC_ETH_HLEN + 12) || !h.src_ip ||
	    h.seq != srnic_get16(buf + SRNIC_ETH_HLEN + 4) ||
	    h.src_ip == SRNIC_IPV4_BROADCAST || h.src_ip >> 28 == 0xe ||
	    h.src_ip >> 24 == 127 ||
	    h.to_me != (srnic_get32(buf + SRNIC_ETH_HLEN + 16) == me) ||
	    h.path != wire_path_of(sport)) {
		free(c);
		return "UDP unwrap gave a sender that is not the frame's, or "
		       "no host's, or another path or number";
	}
	{
		uint32_t raw_n = *raw_len;
	w = malloc(raw_n + SRNIC_UDP_HLEN);
	if (!w)
		abort();
	memcpy(w + SRNIC_UDP_HLEN, c + SRNIC_UDP_HLEN, raw_n);
	srnic_wire_udp_wrap(w, raw_n + SRNIC_UDP_HLEN, peer, me,
			    SRNIC_UDP_PORT, raw_n % SRNIC_UDP_PATHS, h.seq);
	if (srnic_wire_udp_unwrap(w, raw_n + SRNIC_UDP_HLEN, me,
				  SRNIC_UDP_PORT, &h2) != SRNIC_WIRE_OK ||
	    h2.raw_len != raw_n || h2.src_ip != peer ||
	    h2.path != raw_n % SRNIC_UDP_PATHS || h2.seq != h.seq ||
	    memcmp(w + SRNIC_UDP_HLEN, c + SRNIC_UDP_HLEN, raw_n))
		bad = "UDP wrap and unwrap do not give the raw frame back";
	/* (a steering class reads the wrapped frame's QP number as the
	 * raw frame has it: port/steer.c) */
	{
		uint32_t q1 = 0, q2 = 0;
		bool k1, k2;

		memcpy(w + SRNIC_UDP_HLEN, c + SRNIC_UDP_HLEN, raw_n);
		srnic_wire_udp_wrap(w, raw_n + SRNIC_UDP_HLEN, peer, me,
				    SRNIC_UDP_PORT, 0, 0);
		k1 = srnic_wire_udp_frame_qpn(w, raw_n + SRNIC_UDP_HLEN, &q1);
		k2 = srnic_wire_frame_qpn(c + SRNIC_UDP_HLEN, raw_n, &q2);
		if (!bad && (k1 != k2 || q1 != q2))
			bad = "a wrapped frame's QP number is not its raw "
			      "frame's";
	}
	/* (numbered as it goes out: the same headers as wrapped with the
	 * number, but for the checksum's two forms of zero) */
	{
		uint8_t hdr[SRNIC_UDP_HLEN];
		uint16_t a, b;

		memcpy(w + SRNIC_UDP_HLEN, c + SRNIC_UDP_HLEN, raw_n);
		srnic_wire_udp_wrap(w, raw_n + SRNIC_UDP_HLEN, peer, me,
				    SRNIC_UDP_PORT, raw_n % SRNIC_UDP_PATHS,
				    h.seq);
		memcpy(hdr, w, SRNIC_UDP_HLEN);
		memcpy(w + SRNIC_UDP_HLEN, c + SRNIC_UDP_HLEN, raw_n);
		srnic_wire_udp_wrap(w, raw_n + SRNIC_UDP_HLEN, peer, me,
				    SRNIC_UDP_PORT, raw_n % SRNIC_UDP_PATHS, 0);
		srnic_wire_udp_number(w, h.seq);
		a = srnic_get16(hdr + 24);
		b = srnic_get16(w + 24);
		if (!bad && (memcmp(hdr, w, 24) ||
			     memcmp(hdr + 26, w + 26, SRNIC_UDP_HLEN - 26) ||
			     (a != b && !((a == 0 && b == 0xffff) ||
					  (a == 0xffff && b == 0)))))
			bad = "a number given as the frame goes out is not the "
			      "header wrap makes with it";
	}
	free(w);
	*raw = malloc(raw_n);
	if (!*raw)
		abort();
	memcpy(*raw, c + SRNIC_UDP_HLEN, raw_n);
	free(c);
	}
	return bad;
}

/* RFC 1071's sum, 16 bits at a time, folded, not inverted: the
 * reference the codec's 8-bytes-a-step sum is held to. */
static inline uint32_t wire_ones_ref(const uint8_t *p, uint32_t len,
				     uint32_t sum)
{
	uint32_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/* Whether the upper layer (next header `next`, plen bytes at 54) of an
 * IPv6 frame sums right with its pseudo-header; plen must fit. */
static inline bool wire_ip6_sum_ok(const uint8_t *buf, uint32_t plen,
				   uint8_t next)
{
	uint32_t sum = wire_ones_ref(buf + 22, 32, 0) + plen + next;

	return wire_ones_ref(buf + 54, plen, sum) == 0xffff;
}

/* (fd00:56:1::2, this node, and fd00:56:1::1) */
static const uint8_t wire_me6[16] = {0xfd, 0, 0, 0x56, 0, 1, [15] = 2};
static const uint8_t wire_peer6[16] = {0xfd, 0, 0, 0x56, 0, 1, [15] = 1};

/* The verdict srnic_wire_udp6_unwrap owes a frame to wire_me6 at srnic's
 * port, from docs/wire-protocol.md with literal offsets. */
static inline enum srnic_wire_err wire_udp6_expected(const uint8_t *buf,
						     uint32_t len)
{
	static const uint8_t mapped[12] = {[10] = 0xff, 0xff};
	static const uint8_t zero[16];
	const uint8_t *src = buf + 22;
	uint32_t plen;

	if (len < 62 || buf[12] != 0x86 || buf[13] != 0xdd ||
	    buf[14] >> 4 != 6 || buf[20] != 17 ||
	    srnic_get16(buf + 56) != SRNIC_UDP_PORT ||
	    (memcmp(buf + 38, wire_me6, 16) && buf[38] != 0xff))
		return SRNIC_WIRE_NOT_OURS;
	plen = srnic_get16(buf + 18);
	if (plen > len - 54 || srnic_get16(buf + 58) != plen ||
	    plen < 8 + 4 + 24 || !srnic_get16(buf + 60) ||
	    !wire_ip6_sum_ok(buf, plen, 17) || src[0] == 0xff ||
	    !memcmp(src, mapped, 12) ||
	    (!memcmp(src, zero, 15) && src[15] <= 1))
		return SRNIC_WIRE_BAD_IP;
	return SRNIC_WIRE_OK;
}

/*
 * UDP over IPv6: unwrapping the input (as from an IPv6 node's port,
 * wire_me6 at srnic's default port) gives the verdict the reference
 * above owes it, never reads or writes past the frame, leaves what it
 * refuses as it was and what it takes a raw frame of ours with the
 * sender, number and path the headers carry; wrapping that raw frame
 * again (its QP number the raw one's to a steering class), numbering
 * it, and unwrapping it give it back.  NULL, or what broke; *raw (to
 * free) gets the raw frame, *raw_len bytes, when it was taken.
 */
static inline const char *wire_udp6_oracle(const uint8_t *buf, uint32_t len,
					   uint8_t **raw, uint32_t *raw_len)
{
	enum srnic_wire_err e, want = wire_udp6_expected(buf, len);
	struct srnic_udp_rx h, h2;
	uint32_t q1 = 0, q2 = 0, n;
	uint8_t *c, *w, *x;

	*raw = NULL;
	c = malloc(len ? len : 1);
	if (!c)
		abort();
	memcpy(c, buf, len);
	(void)srnic_wire_udp6_frame_qpn(c, len, &q1);
	e = srnic_wire_udp6_unwrap(c, len, wire_me6, SRNIC_UDP_PORT, &h);
	if (e != want || e != SRNIC_WIRE_OK) {
		bool same = !len || !memcmp(c, buf, len);

		free(c);
		if (e != want)
			return want == SRNIC_WIRE_OK ? "UDP6 unwrap refused a "
						       "right frame"
			       : e == SRNIC_WIRE_OK
				       ? "UDP6 unwrap took a wrong frame"
				       : "UDP6 unwrap's NOT_OURS and BAD_IP "
					 "are not the frame's";
		return same ? NULL : "UDP6 unwrap changed a frame it refused";
	}
	n = h.raw_len;
	if (n != srnic_get16(buf + 18) + 2u ||
	    srnic_get16(c + SRNIC_UDP6_HLEN + 12) != SRNIC_ETHERTYPE ||
	    memcmp(c + SRNIC_UDP6_HLEN, buf, 12) ||
	    memcmp(c + SRNIC_UDP6_HLEN + 14, buf + 66, n - 14)) {
		free(c);
		return "UDP6 unwrap left no raw frame, or another";
	}
	if (h.src_ip != srnic_wire_ip6_id(buf + 22) ||
	    memcmp(h.src6, buf + 22, 16) || h.seq != srnic_get16(buf + 62) ||
	    h.to_me != !memcmp(buf + 38, wire_me6, 16) ||
	    h.path != wire_path_of(srnic_get16(buf + 54))) {
		free(c);
		return "UDP6 unwrap gave a sender that is not the frame's, "
		       "or another path or number";
	}
	/* wrapped again with its number, and with 0 then numbered: one
	 * frame, which unwraps to the raw one, and whose QP number is the
	 * raw frame's */
	w = calloc(2, n + SRNIC_UDP6_HLEN);
	if (!w)
		abort();
	x = w + n + SRNIC_UDP6_HLEN;
	memcpy(w + SRNIC_UDP6_HLEN, c + SRNIC_UDP6_HLEN, n);
	memcpy(x + SRNIC_UDP6_HLEN, c + SRNIC_UDP6_HLEN, n);
	srnic_wire_udp6_wrap(w, n + SRNIC_UDP6_HLEN, wire_peer6, wire_me6,
			     SRNIC_UDP_PORT, n, h.seq);
	srnic_wire_udp6_wrap(x, n + SRNIC_UDP6_HLEN, wire_peer6, wire_me6,
			     SRNIC_UDP_PORT, n, 0);
	srnic_wire_udp6_number(x, h.seq);
	if (memcmp(w, x, n + SRNIC_UDP6_HLEN)) {
		free(w);
		free(c);
		return "a number given as the frame goes out is not the "
		       "header wrap makes with it";
	}
	if (srnic_wire_udp6_frame_qpn(w, n + SRNIC_UDP6_HLEN, &q1) !=
		    srnic_wire_frame_qpn(c + SRNIC_UDP6_HLEN, n, &q2) ||
	    q1 != q2) {
		free(w);
		free(c);
		return "a wrapped frame's QP number is not its raw frame's";
	}
	e = srnic_wire_udp6_unwrap(w, n + SRNIC_UDP6_HLEN, wire_me6,
				   SRNIC_UDP_PORT, &h2);
	if (e != SRNIC_WIRE_OK || h2.raw_len != n ||
	    h2.src_ip != srnic_wire_ip6_id(wire_peer6) || h2.seq != h.seq ||
	    h2.path != n % SRNIC_UDP_PATHS || !h2.to_me ||
	    memcmp(w + SRNIC_UDP6_HLEN, c + SRNIC_UDP6_HLEN, n)) {
		free(w);
		free(c);
		return "UDP6 wrap and unwrap do not give the raw frame back";
	}
	free(w);
	*raw = malloc(n);
	if (!*raw)
		abort();
	memcpy(*raw, c + SRNIC_UDP6_HLEN, n);
	*raw_len = n;
	free(c);
	return NULL;
}

static inline bool wire_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		if (*b++)
			return false;
	return true;
}

/* A published region's entry (TPT_UPDATE), said again from
 * docs/wire-protocol.md: none (index 0 of 0), or one of at most 32 with
 * a name, remote rights only (write 2, read 4, atomic 8) and a range
 * that does not wrap. */
static inline bool wire_tpt_entry_ok(const struct srnic_pkt *p)
{
	if (!p->tpt_count)
		return !p->tpt_index;
	return p->tpt_count <= 32 && p->tpt_index < p->tpt_count &&
	       p->tpt_name && p->tpt_access && !(p->tpt_access & ~0x0eu) &&
	       p->tpt_addr + p->tpt_length >= p->tpt_addr;
}

/* What only TPT_UPDATE and TPT_ACK carry, and what they do not. */
static inline const char *wire_tpt_invariants(const struct srnic_pkt *p)
{
	bool tpt = p->opcode == SRNIC_OP_TPT_UPDATE ||
		   p->opcode == SRNIC_OP_TPT_ACK;

	if (!tpt && (p->tpt_gen || p->tpt_index || p->tpt_count ||
		     p->tpt_access || p->tpt_name || p->tpt_rkey ||
		     p->tpt_addr || p->tpt_length))
		return "TPT fields set on other than TPT_UPDATE or TPT_ACK";
	if (tpt && (p->groups || p->dev || p->ndev ||
		    !wire_zero(p->node_mac, sizeof(p->node_mac)) ||
		    !wire_zero(p->node_name, sizeof(p->node_name))))
		return "node fields set on a TPT frame";
	if (p->opcode == SRNIC_OP_TPT_UPDATE && !wire_tpt_entry_ok(p))
		return "accepted a TPT_UPDATE entry no table holds";
	return NULL;
}

/* The packet-level promises; NULL when they hold. */
static inline const char *wire_pkt_invariants(const uint8_t *buf,
					      uint32_t len,
					      const struct srnic_pkt *p)
{
	uint8_t op = p->opcode;
	uint32_t hlen, stride, want;
	const char *s;

	if (op == 0 || op >= SRNIC_OP_MAX)
		return "accepted opcode out of range";
	if ((p->flags & SRNIC_F_XRC) && !srnic_op_xrc(op))
		return "accepted the XRC flag on a packet other than a request";
	if (!(p->flags & SRNIC_F_XRC) && p->xrc_srqn)
		return "xrc_srqn set without the XRC flag";
	if ((p->flags & SRNIC_F_ACKS) && op != SRNIC_OP_SEND &&
	    op != SRNIC_OP_WRITE && op != SRNIC_OP_READ_REQ &&
	    op != SRNIC_OP_ATOMIC_REQ)
		return "accepted the ACKS flag on a packet other than a request";
	if (!(p->flags & SRNIC_F_ACKS) && p->ack_msn)
		return "ack_msn set without the ACKS flag";
	if ((p->flags & SRNIC_F_THIRD_PARTY) && op != SRNIC_OP_WRITE &&
	    op != SRNIC_OP_ACK)
		return "accepted the third-party flag on other than a WRITE "
		       "or an ACK";
	if (op != SRNIC_OP_TP_READ_REQ &&
	    (p->tp_ipv4 || p->tp_inc || p->tp_qpn || p->tp_ctl_qpn ||
	     p->tp_rkey || p->tp_va))
		return "third-party fields set on other than TP_READ_REQ";
	if ((p->flags & SRNIC_F_GROUP) && op != SRNIC_OP_ACK &&
	    (op != SRNIC_OP_WRITE || (p->flags & SRNIC_F_GROUP_NOT)))
		return "accepted the group flag on other than a plain WRITE "
		       "or an ACK";
	if (!srnic_op_is_control(op) &&
	    (p->groups || p->dev || p->ndev ||
	     !wire_zero(p->ipv6, sizeof(p->ipv6))))
		return "group map, device or IPv6 address set on other than "
		       "a control frame";
	if (op != SRNIC_OP_HELLO && (p->hello_ms || p->paths || p->queues))
		return "a HELLO interval or paths on other than a HELLO";
	if (op == SRNIC_OP_HELLO
		    ? p->dst_qpn || p->src_qpn || p->dst_inc
		    : memcmp(p->path_loss, (uint8_t[8]){0}, 8) ||
			      memcmp(p->path_delay, (uint8_t[8]){0}, 8))
		return "QPNs or dst_inc on a HELLO, or paths' losses or "
		       "delays on other than one";
	for (unsigned k = 0; k < SRNIC_UDP_PATHS; k++)
		if (p->path_delay[k] > 15)
			return "a path's delay wider than its 4 bits";
	if (p->xflags & SRNIC_X_NOTIFY &&
	    !((op == SRNIC_OP_WRITE && !(p->flags & SRNIC_F_ATOMIC_WR)) ||
	      op == SRNIC_OP_READ_REQ))
		return "SRNIC_X_NOTIFY on other than a WRITE or a READ "
		       "request";
	if (p->xflags & SRNIC_X_ACK_REQ && op != SRNIC_OP_WRITE &&
	    op != SRNIC_OP_SEND)
		return "SRNIC_X_ACK_REQ on other than a WRITE or a SEND";
	if (p->xflags & ~(SRNIC_X_NOTIFY | SRNIC_X_ACK_REQ))
		return "further flags srnic does not know";
	if ((op == SRNIC_OP_READ_DONE || op == SRNIC_OP_READ_DONE_ACK) &&
	    p->syndrome)
		return "a NAK's syndrome on READ_DONE or READ_DONE_ACK";
	if (op != SRNIC_OP_SVC_ANNOUNCE &&
	    (p->svc_ipv4 || p->svc_prio || p->svc_holder || p->svc_mode ||
	     p->svc_bound))
		return "service fields set on other than SVC_ANNOUNCE";
	if (op == SRNIC_OP_SVC_ANNOUNCE && p->groups)
		return "group map set on SVC_ANNOUNCE";
	s = wire_tpt_invariants(p);
	if (s)
		return s;
	hlen = srnic_wire_pkt_hlen(p);
	if (len < hlen)
		return "accepted a frame shorter than its header";
	if (srnic_op_has_data_ext(op)) {
		if (p->syndrome || p->rnr_timer || p->nak_msn || p->nak_txid ||
		    p->sack_msn || p->sack_first || p->sack_bits ||
		    p->credit || p->ts_echo || p->ipv4 || p->port || p->auth ||
		    !wire_zero(p->node_mac, sizeof(p->node_mac)) ||
		    !wire_zero(p->node_name, sizeof(p->node_name)) ||
		    !wire_zero(p->eth_src, sizeof(p->eth_src)))
			return "non-data field set on a data packet";
		if (p->msg_len > SRNIC_MAX_MSG_LEN)
			return "accepted msg_len beyond 2 GiB";
		if (op != SRNIC_OP_READ_REQ && op != SRNIC_OP_TP_READ_REQ &&
		    p->read_len)
			return "read_len set on a packet other than a READ "
			       "request";
		if (op == SRNIC_OP_UD_SEND ? p->rkey || p->va
					   : p->qkey || p->src_ipv4 ||
						     p->dst_ipv4)
			return "datagram and connected fields mixed";
		if (op == SRNIC_OP_UD_SEND &&
		    (p->msg_off || p->pkt_len != p->msg_len))
			return "datagram of more than one packet";
	} else if (p->read_len || p->imm || p->ts || p->qkey || p->src_ipv4 ||
		   p->dst_ipv4) {
		return "data field set on an ACK or control frame";
	}
	if (op == SRNIC_OP_ATOMIC_REQ) {
		if (p->payload != buf + hlen)
			return "atomic operands do not follow the header";
		if (p->pkt_len != SRNIC_ATOMIC_PAYLOAD ||
		    p->pkt_len > len - hlen)
			return "atomic request without its two operands";
		if (p->msg_len != SRNIC_ATOMIC_LEN || p->msg_off)
			return "atomic request on other than 8 bytes";
		if (p->va & 7)
			return "atomic request on unaligned bytes";
		if (p->stride_shift < SRNIC_MIN_STRIDE_SHIFT ||
		    p->stride_shift > SRNIC_MAX_STRIDE_SHIFT)
			return "stride_shift out of range";
	} else if (op == SRNIC_OP_READ_REQ || op == SRNIC_OP_TP_READ_REQ) {
		if (p->pkt_len)
			return "READ request with payload";
		if (p->imm)
			return "READ request with immediate data";
		if (p->stride_shift < SRNIC_MIN_STRIDE_SHIFT ||
		    p->stride_shift > SRNIC_MAX_STRIDE_SHIFT)
			return "stride_shift out of range";
		if (p->msg_off % (1u << p->stride_shift))
			return "READ request offset not on a stride boundary";
		if (p->msg_len ? p->msg_off >= p->msg_len : p->msg_off != 0)
			return "READ request offset outside the READ";
		if (p->read_len > p->msg_len - p->msg_off)
			return "READ request range runs past the READ";
		if (p->va + p->msg_len < p->va)
			return "READ request va + msg_len wraps";
		if (p->tp_va + p->msg_len < p->tp_va)
			return "third-party target va + msg_len wraps";
	} else if (srnic_op_carries_payload(op)) {
		if (p->payload != buf + hlen)
			return "payload does not follow the header";
		if (p->pkt_len > len - hlen)
			return "payload runs past the frame";
		if (p->msg_off > p->msg_len ||
		    p->pkt_len > p->msg_len - p->msg_off)
			return "payload runs past the message";
		if (p->va + p->pkt_len < p->va)
			return "va + pkt_len wraps";
		if (op == SRNIC_OP_WRITE && (p->flags & SRNIC_F_ATOMIC_WR) &&
		    (p->msg_len != SRNIC_ATOMIC_LEN ||
		     p->pkt_len != SRNIC_ATOMIC_LEN || p->msg_off ||
		     (p->va & 7)))
			return "atomic write on other than 8 aligned bytes";
		if (p->stride_shift < SRNIC_MIN_STRIDE_SHIFT ||
		    p->stride_shift > SRNIC_MAX_STRIDE_SHIFT)
			return "stride_shift out of range";
		stride = 1u << p->stride_shift;
		if (p->msg_off % stride)
			return "msg_off not on a stride boundary";
		want = p->msg_len - p->msg_off < stride
			       ? p->msg_len - p->msg_off
			       : stride;
		if (p->pkt_len != want)
			return "packet not cut at the stride";
	} else if (srnic_op_ack_shaped(op)) {
		if (p->syndrome > SRNIC_NAK_OPERATIONAL)
			return "accepted an unknown syndrome";
		if (p->rnr_timer > 31)
			return "rnr_timer beyond its 5 bits";
		if (wire_has_auth(op, p->flags)
			    ? p->auth != buf + hlen || len - hlen < SRNIC_AUTH_LEN
			    : p->auth != NULL)
			return "MAC missing, misplaced or outside the frame";
		if (p->txid || p->rkey || p->va || p->msg_len || p->pkt_len ||
		    p->ipv4 || p->payload ||
		    !wire_zero(p->eth_src, sizeof(p->eth_src)))
			return "non-ACK field set on an ACK";
	} else {
		if (p->node_name[sizeof(p->node_name) - 1] != '\0')
			return "node name not terminated";
		if (wire_has_auth(op, p->flags)
			    ? p->auth != buf + hlen || len - hlen < SRNIC_AUTH_LEN
			    : p->auth != NULL)
			return "MAC missing, misplaced or outside the frame";
		if (memcmp(p->eth_src, buf + 6, 6) != 0)
			return "eth_src is not the frame's source MAC";
		if (p->txid || p->rkey || p->va || p->msg_len || p->syndrome ||
		    p->sack_bits || p->credit || p->ts_echo || p->payload)
			return "non-control field set on HELLO/BYE";
	}
	return NULL;
}

/*
 * ARP: decode never reads past the frame; what it takes is IPv4 over
 * Ethernet, a request or a reply, from a host (the reference below), and
 * encodes back to the same fields.  NULL, or what broke.
 */
static inline const char *wire_arp_oracle(const uint8_t *buf, uint32_t len)
{
	static const uint8_t zero[6];
	struct srnic_arp a, b;
	uint8_t f[SRNIC_ARP_FRAME];
	enum srnic_wire_err e = srnic_wire_arp_decode(buf, len, &a);
	bool arp = len >= 14 && buf[12] == 0x08 && buf[13] == 0x06;
	bool ok = arp && len >= 42 && buf[14] == 0 && buf[15] == 1 &&
		  buf[16] == 0x08 && buf[17] == 0 && buf[18] == 6 &&
		  buf[19] == 4 && buf[20] == 0 && (buf[21] == 1 || buf[21] == 2) &&
		  !(buf[22] & 1) && memcmp(buf + 22, zero, 6) &&
		  srnic_get32(buf + 28) != SRNIC_IPV4_BROADCAST &&
		  buf[28] >> 4 != 0xe;

	if (e == SRNIC_WIRE_NOT_OURS)
		return arp ? "ARP's EtherType passed over" : NULL;
	if (!arp)
		return "a frame of another EtherType read as ARP";
	if ((e == SRNIC_WIRE_OK) != ok)
		return ok ? "good ARP refused" : "bad ARP taken";
	if (e != SRNIC_WIRE_OK)
		return NULL;
	srnic_wire_arp_encode(f, buf, buf + 6, &a);
	if (memcmp(f, buf, 42))
		return "ARP encoded back is not the frame";
	if (srnic_wire_arp_decode(f, sizeof(f), &b) != SRNIC_WIRE_OK ||
	    a.op != b.op || memcmp(a.sha, b.sha, 6) || a.spa != b.spa ||
	    memcmp(a.tha, b.tha, 6) || a.tpa != b.tpa)
		return "ARP round trip changes a field";
	return NULL;
}

/* The verdict srnic_wire_nd_decode owes a frame, and what it reads of
 * it into *want, from RFC 4861 with literal offsets. */
static inline enum srnic_wire_err wire_nd_expected(const uint8_t *buf,
						   uint32_t len,
						   struct srnic_nd *want)
{
	static const uint8_t zero[6];
	const uint8_t *m = buf + 54;
	uint32_t plen, off, l;

	if (len < 55 || buf[12] != 0x86 || buf[13] != 0xdd ||
	    buf[14] >> 4 != 6 || buf[20] != 58 || (m[0] != 135 && m[0] != 136))
		return SRNIC_WIRE_NOT_OURS;
	plen = srnic_get16(buf + 18);
	if (plen > len - 54 || plen < 24 || buf[21] != 255 || m[1] ||
	    !wire_ip6_sum_ok(buf, plen, 58) || m[8] == 0xff || buf[22] == 0xff)
		return SRNIC_WIRE_BAD_ND;
	memset(want, 0, sizeof(*want));
	want->type = m[0];
	want->flags = m[0] == 136 ? m[4] & 0xe0 : 0;
	memcpy(want->src, buf + 22, 16);
	memcpy(want->dst, buf + 38, 16);
	memcpy(want->target, m + 8, 16);
	for (off = 24; off < plen; off += l) {
		if (plen - off < 2 || !m[off + 1] || m[off + 1] * 8u > plen - off)
			return SRNIC_WIRE_BAD_ND;
		l = m[off + 1] * 8u;
		if (m[off] != m[0] - 134 || want->has_lladdr)
			continue;
		if (l != 8 || (m[off + 2] & 1) || !memcmp(m + off + 2, zero, 6))
			return SRNIC_WIRE_BAD_ND;
		memcpy(want->lladdr, m + off + 2, 6);
		want->has_lladdr = 1;
	}
	return SRNIC_WIRE_OK;
}

/*
 * NDP: decode never reads past the frame, gives the verdict and the
 * fields the reference above does, and what it takes encodes to a frame
 * that decodes to the same.  NULL, or what broke.
 */
static inline const char *wire_nd_oracle(const uint8_t *buf, uint32_t len)
{
	struct srnic_nd nd, want, back;
	uint8_t f[SRNIC_ND_FRAME];
	enum srnic_wire_err e = srnic_wire_nd_decode(buf, len, &nd);
	uint32_t n;

	if (e != wire_nd_expected(buf, len, &want))
		return "an ND verdict is not RFC 4861's";
	if (e != SRNIC_WIRE_OK)
		return NULL;
	if (memcmp(&nd, &want, sizeof(nd)))
		return "ND decode read a field wrong";
	n = srnic_wire_nd_encode(f, buf, buf + 6, &nd);
	if (n != (nd.has_lladdr ? SRNIC_ND_FRAME : 78u) ||
	    srnic_wire_nd_decode(f, n, &back) != SRNIC_WIRE_OK ||
	    memcmp(&nd, &back, sizeof(nd)))
		return "ND round trip changes a field";
	return NULL;
}

/* The verdict srnic_wire_mld_decode owes a frame, and the query it reads
 * into *want, from RFC 3810 with literal offsets: behind the hop-by-hop
 * header at 54 of (1 + byte 55) * 8 bytes, an ICMPv6 message whose sum
 * covers it alone. */
static inline enum srnic_wire_err wire_mld_expected(const uint8_t *buf,
						    uint32_t len,
						    struct srnic_mld_query *want)
{
	uint32_t plen, hlen, mlen, code, sum;
	const uint8_t *m;

	if (len < 62 || buf[12] != 0x86 || buf[13] != 0xdd ||
	    buf[14] >> 4 != 6 || buf[20] != 0 || buf[54] != 58)
		return SRNIC_WIRE_NOT_OURS;
	plen = srnic_get16(buf + 18);
	hlen = (buf[55] + 1u) * 8;
	if (plen > len - 54 || hlen + 4 > plen)
		return SRNIC_WIRE_BAD_ND;
	m = buf + 54 + hlen;
	mlen = plen - hlen;
	if (m[0] != 130)
		return SRNIC_WIRE_NOT_OURS;
	sum = wire_ones_ref(buf + 22, 32, 0) + mlen + 58;
	if ((mlen != 24 && mlen < 28) || buf[21] != 1 || m[1] ||
	    buf[22] != 0xfe || (buf[23] & 0xc0) != 0x80 ||
	    wire_ones_ref(m, mlen, sum) != 0xffff)
		return SRNIC_WIRE_BAD_ND;
	memcpy(want->src, buf + 22, 16);
	memcpy(want->group, m + 8, 16);
	want->v1 = mlen == 24;
	code = srnic_get16(m + 4);
	want->max_delay_ms = mlen == 24 || code < 32768
				     ? code
				     : ((code & 0xfff) | 0x1000)
					       << (((code >> 12) & 7) + 3);
	return SRNIC_WIRE_OK;
}

/* MLD: decode never reads past the frame and gives the verdict and the
 * query the reference above does; ICMPv6 is told as it says.  NULL, or
 * what broke. */
static inline const char *wire_mld_oracle(const uint8_t *buf, uint32_t len)
{
	struct srnic_mld_query q, want;
	enum srnic_wire_err e = srnic_wire_mld_decode(buf, len, &q);

	if (srnic_wire_is_icmp6(buf, len) !=
	    (len >= 54 && buf[12] == 0x86 && buf[13] == 0xdd &&
	     buf[14] >> 4 == 6 &&
	     (buf[20] == 58 || (buf[20] == 0 && len >= 62 && buf[54] == 58))))
		return "ICMPv6 (or MLD's hop-by-hop) told wrong";
	if (e != wire_mld_expected(buf, len, &want))
		return "an MLD verdict is not RFC 3810's";
	if (e == SRNIC_WIRE_OK && memcmp(&q, &want, sizeof(q)))
		return "MLD decode read a field wrong";
	return NULL;
}

/*
 * The whole oracle for one input.  Returns NULL when the frame is refused
 * or passes, else what broke; *err gets the decode result either way.
 */
static inline const char *wire_oracle(const uint8_t *buf, uint32_t len,
				      enum srnic_wire_err *err)
{
	static char why[160];
	struct srnic_pkt p1, p2;
	const char *bad = NULL, *field;
	uint8_t *f1, *f2;
	uint32_t n1, n2, hlen, i;
	int required;

	bad = wire_arp_oracle(buf, len);
	if (!bad)
		bad = wire_nd_oracle(buf, len);
	if (!bad)
		bad = wire_mld_oracle(buf, len);
	if (bad)
		return bad;
	/* A UDP node's frame, IPv4 or IPv6: the rest is about the raw frame
	 * in it (as the port strips it), which unwraps no further. */
	{
		uint8_t *raw;
		uint32_t raw_len;

		bad = wire_udp_oracle(buf, len, &raw, &raw_len);
		if (!bad && !raw)
			bad = wire_udp6_oracle(buf, len, &raw, &raw_len);
		*err = SRNIC_WIRE_NOT_OURS;	/* (unless the raw one says) */
		if (bad || raw) {
			const char *inner = bad ? NULL
					       : wire_oracle(raw, raw_len, err);

			free(raw);
			return bad ? bad : inner;
		}
	}
	for (required = 0; required < 4; required++)
		if (srnic_wire_check_crc(buf, len, required & 1,
					 required & 2) !=
		    wire_crc_expected(buf, len, required & 1, required & 2))
			return required & 1
				       ? "CRC check (demanded) disagrees with "
					 "the reference CRC-32C"
				       : "CRC check disagrees with the "
					 "reference CRC-32C";
	*err = srnic_wire_decode(buf, len, &p1);
	if (*err != SRNIC_WIRE_OK)
		return NULL;
	/* The packet's promises are about the frame before its trailer. */
	bad = wire_pkt_invariants(buf,
				  len - (p1.flags & SRNIC_F_CRC ? SRNIC_CRC_LEN
								: 0),
				  &p1);
	if (bad)
		return bad;

	hlen = srnic_wire_pkt_hlen(&p1);
	f1 = wire_build(&p1, buf, buf + 6, &n1);
	if (srnic_wire_decode(f1, n1, &p2) != SRNIC_WIRE_OK) {
		bad = "re-encoded frame is refused";
		goto out1;
	}
	field = wire_pkt_diff(&p1, &p2);
	if (field) {
		snprintf(why, sizeof(why), "round trip changes %s", field);
		bad = why;
		goto out1;
	}
	if (srnic_op_carries_payload(p1.opcode) &&
	    memcmp(p1.payload, p2.payload, p1.pkt_len) != 0) {
		bad = "round trip changes the payload";
		goto out1;
	}
	if (p1.auth && memcmp(p1.auth, p2.auth, SRNIC_AUTH_LEN) != 0) {
		bad = "round trip changes the MAC";
		goto out1;
	}
	for (i = 0; i < hlen; i++) {
		uint8_t in = buf[i], out = f1[i];

		if (!wire_byte_meaningful(p1.opcode, p1.flags, i))
			continue;
		if (srnic_op_ack_shaped(p1.opcode) && i == 39)
			in &= 31;	/* rnr_timer keeps 5 bits */
		if (in != out) {
			snprintf(why, sizeof(why),
				 "re-encoded header byte %u is %#x, input had "
				 "%#x",
				 i, out, in);
			bad = why;
			goto out1;
		}
	}
	f2 = wire_build(&p2, f1, f1 + 6, &n2);
	if (n1 != n2 || memcmp(f1, f2, n1) != 0)
		bad = "encode(decode(encode(p))) differs from encode(p)";
	free(f2);
out1:
	free(f1);
	return bad;
}

#endif
