/* SPDX-License-Identifier: MIT */
/*
 * Encoding and decoding of srnic frames.  Offsets are given once, here, as
 * the byte map in docs/wire-protocol.md:
 *
 *  Ethernet   0 dst mac, 6 src mac, 12 EtherType
 *  base      +0 version, +1 opcode, +2 flags, +4 dst_qpn, +8 src_qpn
 *            (HELLO: +4 path_loss, 8 bytes, one a path),
 *            +12 src_inc, +16 dst_inc (HELLO: path_delay, 4 bits a
 *            path), +20 msn
 *  data ext  +0 txid, +4 ssn, +8 rkey, +12 imm (READ_REQ: read_len),
 *            +16 va (8), +24 msg_off,
 *            +28 pkt_len, +32 msg_len, +36 stride_shift, +37 xflags
 *            (SRNIC_X_NOTIFY: WRITE and READ_REQ only),
 *            +38 ts, +40 ack_msn (flag SRNIC_F_ACKS, requests; else 0)
 *            (UD_SEND: +8 qkey, +16 src ipv4, +20 dst ipv4)
 *  xrc ext    (flag SRNIC_F_XRC: SEND, WRITE, READ_REQ, ATOMIC_REQ) right
 *            after the data ext: +0 xrc_srqn; the payload follows it
 *  tp ext     (TP_READ_REQ) right after the data ext: +0 target ipv4,
 *            +4 target inc, +8 target qpn, +12 controller qpn,
 *            +16 target rkey, +20 reserved, +24 target va (8)
 *  ack ext   +0 syndrome, +1 rnr_timer, +2 ts_echo, +4 nak_msn,
 *            +8 nak_txid, +12 sack_msn, +16 sack_first, +20 credit,
 *            +24 sack_bits (8)
 *  hello ext +0 ipv4, +4 port, +5 dev, +6 node mac, +12 ndev,
 *            +13 paths (HELLO to one UDP peer; else 0), +14 hello_ms
 *            (2: HELLO's interval; else 0),
 *            +16 node name (15, NUL padded), +31 queues (HELLO: the
 *            node's steering classes; else 0), +32 groups (8: HELLO's
 *            group map;
 *            SVC_ANNOUNCE: +32 service ipv4, +36 prio, +37 holder,
 *            +38 mode, +39 bound; TPT_UPDATE, TPT_ACK: +5 index,
 *            +6 count, +7 access, +8 gen, +12 name, +16 rkey,
 *            +20 reserved, +24 addr (8), +32 length (8), in place of
 *            all from +5 to +39),
 *            +40 ipv6 (16, every control opcode: the node's IPv6
 *            address; zero for an IPv4 node)
 *  auth       (flag SRNIC_F_AUTH, control frames) 32 bytes right after
 *            the hello ext: MAC of the frame's bytes before it
 *  trailer    (flag SRNIC_F_CRC) the frame's last 4 bytes: CRC-32C of all
 *            before them
 */
#include <isa-l/crc.h>
#include <sodium.h>

#include "srnic_wire.h"
#include "wire_internal.h"

/* The base header's flags, for the CRC functions (which see a frame before
 * it is decoded). */
#define FLAGS_OFF (SRNIC_ETH_HLEN + 2)

uint32_t srnic_wire_crc(const void *buf, uint32_t len, uint32_t crc)
{
	/* crc32_iscsi leaves out CRC-32C's final inversion and takes the
	 * register as it was: invert on the way in and out. */
	return ~crc32_iscsi((unsigned char *)(uintptr_t)buf, (int)len, ~crc);
}

void srnic_wire_add_flags(uint8_t *buf, uint16_t flags)
{
	srnic_put16(buf + FLAGS_OFF, srnic_get16(buf + FLAGS_OFF) | flags);
}

/* The Ethernet addresses as a UDP node's CRC and MAC read them: zero,
 * whatever the routers on the way wrote there. */
static const uint8_t no_macs[12];

/* CRC-32C of the frame's first len bytes, as integrity reads them. */
static uint32_t frame_crc(const uint8_t *buf, uint32_t len, bool udp)
{
	if (!udp)
		return srnic_wire_crc(buf, len, 0);
	return srnic_wire_crc(buf + sizeof(no_macs), len - sizeof(no_macs),
			      srnic_wire_crc(no_macs, sizeof(no_macs), 0));
}

void srnic_wire_seal(uint8_t *buf, uint32_t len, bool udp)
{
	uint32_t body = len - SRNIC_CRC_LEN;

	srnic_wire_add_flags(buf, SRNIC_F_CRC);
	srnic_put32(buf + body, frame_crc(buf, body, udp));
}

_Static_assert(crypto_auth_BYTES == SRNIC_AUTH_LEN &&
		       crypto_auth_KEYBYTES == SRNIC_KEY_LEN &&
		       crypto_auth_hmacsha512256_BYTES == SRNIC_AUTH_LEN,
	       "crypto_auth is HMAC-SHA-512-256: 32-byte key and tag");

/* The MAC of a control frame's hlen bytes of headers, as integrity reads
 * them (libsodium's crypto_auth, fed in two pieces). */
static void frame_mac(uint8_t mac[SRNIC_AUTH_LEN], const uint8_t *buf,
		      unsigned hlen, const uint8_t key[SRNIC_KEY_LEN],
		      bool udp)
{
	crypto_auth_hmacsha512256_state st;

	crypto_auth_hmacsha512256_init(&st, key, SRNIC_KEY_LEN);
	crypto_auth_hmacsha512256_update(&st, udp ? no_macs : buf,
					 sizeof(no_macs));
	crypto_auth_hmacsha512256_update(&st, buf + sizeof(no_macs),
					 hlen - sizeof(no_macs));
	crypto_auth_hmacsha512256_final(&st, mac);
	sodium_memzero(&st, sizeof(st));
}

void srnic_wire_sign(uint8_t *buf, const uint8_t key[SRNIC_KEY_LEN],
		     bool udp)
{
	unsigned hlen = srnic_wire_hlen(buf[SRNIC_ETH_HLEN + 1]);

	frame_mac(buf + hlen, buf, hlen, key, udp);
}

void srnic_wire_key_id(const uint8_t key[SRNIC_KEY_LEN],
		       uint8_t id[SRNIC_KEY_ID_LEN])
{
	static const uint8_t what[] = "srnic cluster key id";

	/* (keyed BLAKE2b of a constant: nothing of the key shows) */
	crypto_generichash(id, SRNIC_KEY_ID_LEN, what, sizeof(what), key,
			   SRNIC_KEY_LEN);
}

bool srnic_wire_auth_ok(const uint8_t *buf, const struct srnic_pkt *pkt,
			const uint8_t key[SRNIC_KEY_LEN], bool udp)
{
	uint8_t mac[SRNIC_AUTH_LEN];

	if (!pkt->auth)
		return false;
	frame_mac(mac, buf, srnic_wire_hlen(pkt->opcode), key, udp);
	return crypto_verify_32(mac, pkt->auth) == 0;
}

enum srnic_wire_err srnic_wire_check_crc(const uint8_t *buf, uint32_t len,
					 bool required, bool udp)
{
	if (len < SRNIC_ETH_HLEN + SRNIC_BASE_HLEN ||
	    srnic_get16(buf + 12) != SRNIC_ETHERTYPE)
		return SRNIC_WIRE_OK;
	if (!(srnic_get16(buf + FLAGS_OFF) & SRNIC_F_CRC))
		return required ? SRNIC_WIRE_BAD_CRC : SRNIC_WIRE_OK;
	if (len < SRNIC_ETH_HLEN + SRNIC_BASE_HLEN + SRNIC_CRC_LEN ||
	    frame_crc(buf, len - SRNIC_CRC_LEN, udp) !=
		    srnic_get32(buf + len - SRNIC_CRC_LEN))
		return SRNIC_WIRE_BAD_CRC;
	return SRNIC_WIRE_OK;
}

/* ---- UDP/IP encapsulation -------------------------------------------
 *
 *  Ethernet   0 dst mac, 6 src mac, 12 EtherType 0x0800
 *  IPv4      14 version and length 0x45, 15 DSCP/ECN 0, 16 total length,
 *            18 id 0, 20 flags and fragment offset (DF: 0x4000),
 *            22 TTL 64, 23 protocol 17, 24 header checksum, 26 source,
 *            30 destination
 *  UDP       34 source port, 36 destination port, 38 length,
 *            40 checksum (0: none)
 *  srnic     42 the base header, as at 14 in a raw frame
 *
 * and over IPv6:
 *
 *  Ethernet   0 dst mac, 6 src mac, 12 EtherType 0x86DD
 *  IPv6      14 version 6, traffic class and flow label 0 (4),
 *            18 payload length, 20 next header 17, 21 hop limit 64,
 *            22 source (16), 38 destination (16)
 *  UDP       54 source port, 56 destination port, 58 length (the
 *            payload length), 60 checksum (never 0)
 *  shim      62 seq (the path's count), 64 zero (2)
 *  srnic     66 the base header, as at 14 in a raw frame
 */
#define IP_OFF SRNIC_ETH_HLEN
#define UDP_OFF (IP_OFF + 20)
#define UDP6_OFF (IP_OFF + 40)
#define UDP_HDR 8
#define SHIM_OFF (UDP6_OFF + UDP_HDR)
#define SHIM_LEN 4
#define IP_DF 0x4000
#define IP_MF 0x2000
#define IP_FRAG_OFF 0x1fff
#define IP_TTL 64
#define IP_UDP 17
#define ETHERTYPE_IPV4 SRNIC_ETHERTYPE_IPV4
_Static_assert(SHIM_OFF + SHIM_LEN == SRNIC_ETH_HLEN + SRNIC_UDP6_HLEN,
	       "srnic's base header right after the shim");

/* A checksum hc mended for a 16-bit field it covered as 0 that now
 * holds v: RFC 1624's update, eqn. 3, ~(~HC + ~0 + v). */
static uint16_t sum_mend(uint16_t hc, uint16_t v)
{
	uint32_t sum = (uint16_t)~hc + 0xffffu + v;

	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The sum of an IPv6 checksum (UDP's, ICMPv6's: RFC 8200, 8.1) over the
 * pseudo-header of the IPv6 header at ip (the addresses, the upper-layer
 * length, next header) and the len bytes of upper layer at l4. */
static uint32_t ip6_sum(const uint8_t *ip, const uint8_t *l4, uint32_t len,
			uint8_t next)
{
	uint32_t sum = srnic_wire_ones_sum(ip + 8, 32, 0);

	sum += (len >> 16) + (len & 0xffff) + next;
	return srnic_wire_ones_sum(l4, len, sum);
}

/* Both wraps: the raw frame's Ethernet addresses, hlen bytes on, move to
 * the front, the EtherType after them says which IP, and a UDP header of
 * ulen bytes at udp goes from the path's source port to `port` (its
 * checksum 0, which is IPv4's "none" and what IPv6's is computed over). */
static void wrap_start(uint8_t *frame, unsigned hlen, uint16_t type,
		       uint8_t *udp, uint32_t ulen, uint16_t port,
		       unsigned path)
{
	memmove(frame, frame + hlen, 12);
	srnic_put16(frame + 12, type);
	srnic_put16(udp, (uint16_t)(SRNIC_UDP_SPORT0 +
				    path % SRNIC_UDP_PATHS));
	srnic_put16(udp + 2, port);
	srnic_put16(udp + 4, (uint16_t)ulen);
	srnic_put16(udp + 6, 0);
}

void srnic_wire_udp_wrap(uint8_t *frame, uint32_t len, uint32_t src_ip,
			 uint32_t dst_ip, uint16_t port, unsigned path,
			 uint16_t seq)
{
	uint8_t *ip = frame + IP_OFF;

	wrap_start(frame, SRNIC_UDP_HLEN, ETHERTYPE_IPV4, frame + UDP_OFF,
		   len - UDP_OFF, port, path);
	ip[0] = 0x45;
	ip[1] = 0;
	srnic_put16(ip + 2, (uint16_t)(len - SRNIC_ETH_HLEN));
	srnic_put16(ip + 4, seq);
	srnic_put16(ip + 6, IP_DF);
	ip[8] = IP_TTL;
	ip[9] = IP_UDP;
	srnic_put16(ip + 10, 0);
	srnic_put32(ip + 12, src_ip);
	srnic_put32(ip + 16, dst_ip);
	srnic_put16(ip + 10, (uint16_t)~srnic_wire_ones_sum(ip, 20, 0));
}

void srnic_wire_udp_number(uint8_t *frame, uint16_t seq)
{
	uint8_t *ip = frame + IP_OFF;

	srnic_put16(ip + 4, seq);
	srnic_put16(ip + 10, sum_mend(srnic_get16(ip + 10), seq));
}

uint16_t srnic_wire_udp_seq(const uint8_t *frame)
{
	return srnic_get16(frame + IP_OFF + 4);
}

uint32_t srnic_wire_udp_dst(const uint8_t *frame)
{
	return srnic_get32(frame + IP_OFF + 16);
}

/* An IPv6 header at ip: plen bytes of payload, next header `next`, hop
 * limit `hops`.  Traffic class and flow label 0, for every frame: a
 * UDP frame's path is its source port, which an ECMP hash reads with
 * the flow label, so the label must not move. */
static void put_ip6(uint8_t *ip, uint32_t plen, uint8_t next, uint8_t hops,
		    const uint8_t src[16], const uint8_t dst[16])
{
	srnic_put32(ip, 6u << 28);
	srnic_put16(ip + 4, (uint16_t)plen);
	ip[6] = next;
	ip[7] = hops;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
}

/* IPv6's UDP checksum as it goes: never 0, which IPv6 refuses (RFC 8200,
 * 8.1); 0xFFFF is the same sum. */
static uint16_t udp6_sum_out(uint16_t c)
{
	return c ? c : 0xffff;
}

void srnic_wire_udp6_wrap(uint8_t *frame, uint32_t len, const uint8_t src[16],
			  const uint8_t dst[16], uint16_t port, unsigned path,
			  uint16_t seq)
{
	uint8_t *ip = frame + IP_OFF, *udp = frame + UDP6_OFF;
	uint32_t plen = len - UDP6_OFF;

	wrap_start(frame, SRNIC_UDP6_HLEN, SRNIC_ETHERTYPE_IPV6, udp, plen,
		   port, path);
	put_ip6(ip, plen, IP_UDP, IP_TTL, src, dst);
	srnic_put16(frame + SHIM_OFF, seq);
	srnic_put16(frame + SHIM_OFF + 2, 0);
	srnic_put16(udp + 6,
		    udp6_sum_out((uint16_t)~ip6_sum(ip, udp, plen, IP_UDP)));
}

void srnic_wire_udp6_number(uint8_t *frame, uint16_t seq)
{
	uint8_t *udp = frame + UDP6_OFF;

	srnic_put16(frame + SHIM_OFF, seq);
	srnic_put16(udp + 6,
		    udp6_sum_out(sum_mend(srnic_get16(udp + 6), seq)));
}

uint16_t srnic_wire_udp6_seq(const uint8_t *frame)
{
	return srnic_get16(frame + SHIM_OFF);
}

const uint8_t *srnic_wire_udp6_dst(const uint8_t *frame)
{
	return frame + IP_OFF + 24;
}

/* (a frame's base header at base: its QP number, unless it is a control
 * frame's or the frame ends before it) */
static bool base_qpn(const uint8_t *frame, uint32_t len, uint32_t base,
		     uint32_t *qpn)
{
	if (len < base + 8 || srnic_op_is_control(frame[base + 1]))
		return false;
	*qpn = srnic_get32(frame + base + 4);
	return true;
}

bool srnic_wire_frame_qpn(const uint8_t *frame, uint32_t len, uint32_t *qpn)
{
	return len >= SRNIC_ETH_HLEN &&
	       srnic_get16(frame + 12) == SRNIC_ETHERTYPE &&
	       base_qpn(frame, len, SRNIC_ETH_HLEN, qpn);
}

bool srnic_wire_udp_frame_qpn(const uint8_t *frame, uint32_t len,
			      uint32_t *qpn)
{
	return len >= UDP_OFF + 8 &&
	       srnic_get16(frame + 12) == ETHERTYPE_IPV4 &&
	       frame[IP_OFF] == 0x45 && frame[IP_OFF + 9] == IP_UDP &&
	       base_qpn(frame, len, UDP_OFF + 8, qpn);
}

bool srnic_wire_udp6_frame_qpn(const uint8_t *frame, uint32_t len,
			       uint32_t *qpn)
{
	return len >= SHIM_OFF &&
	       srnic_get16(frame + 12) == SRNIC_ETHERTYPE_IPV6 &&
	       frame[IP_OFF] >> 4 == 6 && frame[IP_OFF + 6] == IP_UDP &&
	       base_qpn(frame, len, SHIM_OFF + SHIM_LEN, qpn);
}

/* Whether a UDP datagram's checksum (not 0) is right: over the IPv4
 * pseudo-header and the datagram, ulen bytes at udp. */
static bool udp_sum_ok(const uint8_t *ip, const uint8_t *udp, uint32_t ulen)
{
	uint32_t sum = srnic_wire_ones_sum(ip + 12, 8, 0);

	sum += IP_UDP + ulen;
	return (uint16_t)~srnic_wire_ones_sum(udp, ulen, sum) == 0;
}

/* Both unwraps, once a frame is taken and what they read of its IP
 * header is in h: the sender's path (its UDP source port names it) and
 * number, and the raw frame of raw_len bytes laid out at frame + hlen,
 * the Ethernet addresses moved up to it (over the headers, read by now)
 * and srnic's EtherType after them. */
static enum srnic_wire_err unwrap_end(uint8_t *frame, unsigned hlen,
				      const uint8_t *udp, uint16_t seq,
				      uint32_t raw_len,
				      struct srnic_udp_rx *h)
{
	uint32_t sport = srnic_get16(udp);

	h->seq = seq;
	h->path = sport - SRNIC_UDP_SPORT0 < SRNIC_UDP_PATHS
			  ? (uint8_t)(sport - SRNIC_UDP_SPORT0)
			  : SRNIC_UDP_NO_PATH;
	memmove(frame + hlen, frame, 12);
	srnic_put16(frame + hlen + 12, SRNIC_ETHERTYPE);
	h->raw_len = raw_len;
	return SRNIC_WIRE_OK;
}

enum srnic_wire_err srnic_wire_udp_unwrap(uint8_t *frame, uint32_t len,
					  uint32_t my_ip, uint16_t port,
					  struct srnic_udp_rx *h)
{
	const uint8_t *ip = frame + IP_OFF, *udp = frame + UDP_OFF;
	uint32_t total, ulen, dst, ihl, src;

	/* Not ours, left to whoever counts what is not: another EtherType,
	 * IP version or protocol, a header length below 20, another UDP
	 * port (after the options, where the frame has it), another host.
	 * (Options to us whose port the frame is too short to hold are
	 * wrong, below.) */
	if (len < SRNIC_ETH_HLEN + SRNIC_UDP_HLEN)
		return SRNIC_WIRE_NOT_OURS;
	ihl = (uint32_t)(ip[0] & 0xf) * 4;
	if (srnic_get16(frame + 12) != ETHERTYPE_IPV4 || ip[0] >> 4 != 4 ||
	    ip[9] != IP_UDP || ihl < 20 ||
	    (IP_OFF + ihl + 4 <= len &&
	     srnic_get16(ip + ihl + 2) != port))
		return SRNIC_WIRE_NOT_OURS;
	dst = srnic_get32(ip + 16);
	if (dst != my_ip && dst != SRNIC_IPV4_BROADCAST && dst >> 28 != 0xe)
		return SRNIC_WIRE_NOT_OURS;
	/* (options: none of ours has them) */
	if (ihl != 20)
		return SRNIC_WIRE_BAD_IP;
	/* To our port: believed only whole.  No fragments (srnic's frames
	 * fit the path: the sender's DF), lengths that fit the frame and
	 * each other and leave room for a base header, the checksums. */
	total = srnic_get16(ip + 2);
	ulen = srnic_get16(udp + 4);
	if ((srnic_get16(ip + 6) & (IP_MF | IP_FRAG_OFF)) ||
	    total > len - SRNIC_ETH_HLEN || ulen != total - 20 ||
	    total < SRNIC_UDP_HLEN + SRNIC_BASE_HLEN ||
	    (uint16_t)~srnic_wire_ones_sum(ip, 20, 0) != 0 ||
	    (srnic_get16(udp + 6) && !udp_sum_ok(ip, udp, ulen)))
		return SRNIC_WIRE_BAD_IP;
	/* A source no node has (0, a broadcast or multicast address, a
	 * loopback one) names no peer to answer: a node learns its peers by
	 * it (srnic_wire_ip_mac). */
	src = srnic_get32(ip + 12);
	if (!src || src == SRNIC_IPV4_BROADCAST || src >> 28 == 0xe ||
	    src >> 24 == 127)
		return SRNIC_WIRE_BAD_IP;
	h->src_ip = src;
	h->to_me = dst == my_ip;
	return unwrap_end(frame, SRNIC_UDP_HLEN, udp, srnic_get16(ip + 4),
			  SRNIC_ETH_HLEN + total - SRNIC_UDP_HLEN, h);
}

/* An IPv6 address some node could send from: not the unspecified ::,
 * the loopback ::1, a multicast group (ff00::/8) or an IPv4-mapped
 * ::ffff:0:0/96 (an IPv4 stack's, never on the wire). */
static bool ip6_host(const uint8_t a[16])
{
	static const uint8_t zero[16];

	if (a[0] == 0xff)
		return false;
	if (memcmp(a, zero, 10))
		return true;
	if (a[10] == 0xff && a[11] == 0xff)
		return false;
	return memcmp(a + 10, zero, 5) || a[15] > 1;
}

enum srnic_wire_err srnic_wire_udp6_unwrap(uint8_t *frame, uint32_t len,
					   const uint8_t my_ip[16],
					   uint16_t port,
					   struct srnic_udp_rx *h)
{
	const uint8_t *ip = frame + IP_OFF, *udp = frame + UDP6_OFF;
	const uint8_t *src = ip + 8, *dst = ip + 24;
	uint32_t plen;
	bool to_me;

	/* Not ours: another EtherType, IP version or next header (an
	 * extension header included: srnic sends none, and which port the
	 * frame was for only its chain would say), another UDP port, a
	 * destination neither my_ip nor a group. */
	if (len < UDP6_OFF + UDP_HDR ||
	    srnic_get16(frame + 12) != SRNIC_ETHERTYPE_IPV6 ||
	    ip[0] >> 4 != 6 || ip[6] != IP_UDP ||
	    srnic_get16(udp + 2) != port)
		return SRNIC_WIRE_NOT_OURS;
	to_me = !memcmp(dst, my_ip, 16);
	if (!to_me && dst[0] != 0xff)
		return SRNIC_WIRE_NOT_OURS;
	/* To our port: believed only whole.  A payload that fits the frame
	 * (Ethernet padding may follow it), a UDP length that is all of it
	 * and leaves room for the shim and a base header, a checksum (IPv6
	 * has no header checksum: this one covers the addresses too), a
	 * source a node could have. */
	plen = srnic_get16(ip + 4);
	if (plen > len - UDP6_OFF || srnic_get16(udp + 4) != plen ||
	    plen < UDP_HDR + SHIM_LEN + SRNIC_BASE_HLEN ||
	    !srnic_get16(udp + 6) ||
	    (uint16_t)~ip6_sum(ip, udp, plen, IP_UDP) != 0 || !ip6_host(src))
		return SRNIC_WIRE_BAD_IP;
	memcpy(h->src6, src, 16);
	h->src_ip = srnic_wire_ip6_id(src);
	h->to_me = to_me;
	return unwrap_end(frame, SRNIC_UDP6_HLEN, udp,
			  srnic_get16(frame + SHIM_OFF),
			  SRNIC_ETH_HLEN + plen - UDP_HDR - SHIM_LEN, h);
}

const uint8_t srnic_ip6_all_nodes[16] = {0xff, 0x02, [15] = 0x01};

uint32_t srnic_wire_ip6_id(const uint8_t a[16])
{
	uint32_t h = 0x811c9dc5;	/* FNV-1a's 32-bit offset basis */
	unsigned i;

	for (i = 0; i < 16; i++)
		h = (h ^ a[i]) * 0x01000193;
	/* (FNV-1a's last bytes reach few of the high bits: a final mix,
	 * MurmurHash3's, spreads every one over all 32) */
	h ^= h >> 16;
	h *= 0x85ebca6b;
	h ^= h >> 13;
	h *= 0xc2b2ae35;
	h ^= h >> 16;
	h = 0xf0000000u | (h & 0x0fffffffu);
	return h == SRNIC_IPV4_BROADCAST ? h - 1 : h;
}

/*
 * ARP (RFC 826), IPv4 over Ethernet, after the Ethernet header:
 *   0 hardware type (1), 2 protocol type (0x0800), 4 their lengths (6, 4),
 *   6 operation, 8 sender's Ethernet address, 14 its IPv4 address,
 *  18 target's Ethernet address, 24 its IPv4 address.
 */
#define ARP_OFF SRNIC_ETH_HLEN
#define ARP_LEN 28

enum srnic_wire_err srnic_wire_arp_decode(const uint8_t *frame, uint32_t len,
					  struct srnic_arp *arp)
{
	const uint8_t *a = frame + ARP_OFF;
	static const uint8_t zero[6];

	if (len < SRNIC_ETH_HLEN || srnic_get16(frame + 12) != SRNIC_ETHERTYPE_ARP)
		return SRNIC_WIRE_NOT_OURS;
	if (len < ARP_OFF + ARP_LEN || srnic_get16(a) != 1 ||
	    srnic_get16(a + 2) != ETHERTYPE_IPV4 || a[4] != 6 || a[5] != 4)
		return SRNIC_WIRE_BAD_ARP;
	arp->op = srnic_get16(a + 6);
	memcpy(arp->sha, a + 8, 6);
	arp->spa = srnic_get32(a + 14);
	memcpy(arp->tha, a + 18, 6);
	arp->tpa = srnic_get32(a + 24);
	if ((arp->op != SRNIC_ARP_REQUEST && arp->op != SRNIC_ARP_REPLY) ||
	    (arp->sha[0] & 1) || !memcmp(arp->sha, zero, 6) ||
	    arp->spa == SRNIC_IPV4_BROADCAST || arp->spa >> 28 == 0xe)
		return SRNIC_WIRE_BAD_ARP;
	return SRNIC_WIRE_OK;
}

void srnic_wire_arp_encode(uint8_t *frame, const uint8_t eth_dst[6],
			   const uint8_t eth_src[6], const struct srnic_arp *arp)
{
	uint8_t *a = frame + ARP_OFF;

	memcpy(frame, eth_dst, 6);
	memcpy(frame + 6, eth_src, 6);
	srnic_put16(frame + 12, SRNIC_ETHERTYPE_ARP);
	srnic_put16(a, 1);
	srnic_put16(a + 2, ETHERTYPE_IPV4);
	a[4] = 6;
	a[5] = 4;
	srnic_put16(a + 6, arp->op);
	memcpy(a + 8, arp->sha, 6);
	srnic_put32(a + 14, arp->spa);
	memcpy(a + 18, arp->tha, 6);
	srnic_put32(a + 24, arp->tpa);
	memset(a + ARP_LEN, 0, SRNIC_ARP_FRAME - ARP_OFF - ARP_LEN);
}

/*
 * Neighbour discovery (RFC 4861), ICMPv6 right after the IPv6 header:
 *  54 type, 55 code (0), 56 checksum (over the pseudo-header and the
 *     message), 58 NA: flags (R 0x80, S 0x40, O 0x20), else reserved,
 *  62 target address (16),
 *  78 options: type (1 source, 2 target link-layer address), length in
 *     8 bytes, then the Ethernet address (6).
 */
#define ND_OFF (IP_OFF + 40)
#define ND_LEN 24
#define ND_HOPS 255
#define ND_FLAGS (SRNIC_ND_F_ROUTER | SRNIC_ND_F_SOLICITED | \
		  SRNIC_ND_F_OVERRIDE)
#define ND_OPT_UNIT 8
#define IP_ICMP6 58
_Static_assert(ND_OFF + ND_LEN + ND_OPT_UNIT == SRNIC_ND_FRAME,
	       "an ND frame is its message and one option");

/* The link-layer address option an NS (the source's) or an NA (the
 * target's) carries. */
static uint8_t nd_opt(uint8_t type)
{
	return type == SRNIC_ND_SOLICIT ? 1 : 2;
}

/* The options from the message's byte off on, of plen: every one whole
 * and of a length, the first link-layer address nd's type carries (of
 * Ethernet's length) into nd, others passed over. */
static bool nd_options(const uint8_t *m, uint32_t off, uint32_t plen,
		       struct srnic_nd *nd)
{
	uint32_t olen;

	for (; off < plen; off += olen) {
		if (plen - off < 2 || !m[off + 1] ||
		    m[off + 1] * ND_OPT_UNIT > plen - off)
			return false;
		olen = m[off + 1] * ND_OPT_UNIT;
		if (m[off] != nd_opt(nd->type) || nd->has_lladdr)
			continue;
		if (olen != ND_OPT_UNIT)
			return false;
		memcpy(nd->lladdr, m + off + 2, 6);
		nd->has_lladdr = 1;
	}
	return true;
}

enum srnic_wire_err srnic_wire_nd_decode(const uint8_t *frame, uint32_t len,
					 struct srnic_nd *nd)
{
	const uint8_t *ip = frame + IP_OFF, *m = frame + ND_OFF;
	static const uint8_t zero[6];
	uint32_t plen;

	if (!srnic_wire_is_icmp6(frame, len) || ip[6] != IP_ICMP6 ||
	    len <= ND_OFF ||
	    (m[0] != SRNIC_ND_SOLICIT && m[0] != SRNIC_ND_ADVERT))
		return SRNIC_WIRE_NOT_OURS;
	/* Believed whole and from this link only (a router would have
	 * lowered the hop limit: RFC 4861, 7.1.1 and 7.1.2), the payload
	 * inside the frame (Ethernet padding may follow it). */
	plen = srnic_get16(ip + 4);
	if (plen > len - ND_OFF || plen < ND_LEN || ip[7] != ND_HOPS ||
	    m[1] != 0 || (uint16_t)~ip6_sum(ip, m, plen, IP_ICMP6) != 0)
		return SRNIC_WIRE_BAD_ND;
	memset(nd, 0, sizeof(*nd));
	nd->type = m[0];
	nd->flags = nd->type == SRNIC_ND_ADVERT ? m[4] & ND_FLAGS : 0;
	memcpy(nd->src, ip + 8, 16);
	memcpy(nd->dst, ip + 24, 16);
	memcpy(nd->target, m + 8, 16);
	/* (a host's address, about a host, of an Ethernet host: what a
	 * neighbour table may hold) */
	if (nd->target[0] == 0xff || nd->src[0] == 0xff ||
	    !nd_options(m, ND_LEN, plen, nd) ||
	    (nd->has_lladdr &&
	     ((nd->lladdr[0] & 1) || !memcmp(nd->lladdr, zero, 6))))
		return SRNIC_WIRE_BAD_ND;
	return SRNIC_WIRE_OK;
}

uint32_t srnic_wire_nd_encode(uint8_t *frame, const uint8_t eth_dst[6],
			      const uint8_t eth_src[6],
			      const struct srnic_nd *nd)
{
	uint8_t *ip = frame + IP_OFF, *m = frame + ND_OFF;
	uint32_t plen = ND_LEN + (nd->has_lladdr ? ND_OPT_UNIT : 0);

	memcpy(frame, eth_dst, 6);
	memcpy(frame + 6, eth_src, 6);
	srnic_put16(frame + 12, SRNIC_ETHERTYPE_IPV6);
	put_ip6(ip, plen, IP_ICMP6, ND_HOPS, nd->src, nd->dst);
	m[0] = nd->type;
	m[1] = 0;
	srnic_put16(m + 2, 0);
	srnic_put32(m + 4, 0);
	if (nd->type == SRNIC_ND_ADVERT)
		m[4] = nd->flags & ND_FLAGS;
	memcpy(m + 8, nd->target, 16);
	if (nd->has_lladdr) {
		m[ND_LEN] = nd_opt(nd->type);
		m[ND_LEN + 1] = 1;
		memcpy(m + ND_LEN + 2, nd->lladdr, 6);
	}
	srnic_put16(m + 2, (uint16_t)~ip6_sum(ip, m, plen, IP_ICMP6));
	return ND_OFF + plen;
}

void srnic_wire_nd_solicited_node(const uint8_t target[16], uint8_t group[16],
				  uint8_t mac[6])
{
	/* ff02::1:ff00:0/104 (RFC 4291, 2.7.1) */
	static const uint8_t prefix[13] = {0xff, 0x02, [11] = 0x01, 0xff};

	memcpy(group, prefix, sizeof(prefix));
	memcpy(group + 13, target + 13, 3);
	srnic_mcast_mac(srnic_get32(group + 12), true, mac);
}

/*
 * MLD (RFC 3810) behind a hop-by-hop header of (1 + its byte 1) * 8
 * bytes at 54, whose byte 0 is the next header (58).  The ICMPv6
 * message after it:
 *  0 type, 1 code (0), 2 checksum (over the pseudo-header, whose length
 *    is the message's alone, and the message),
 *  query: 4 maximum response code, 8 the group (16), then MLDv2's flags,
 *    QQIC and sources from 24 (MLDv1's query ends there);
 *  MLDv2 report: 6 number of records, each from 8 on: record type,
 *    auxiliary length (0), number of sources (0), the group (16);
 *  MLDv1 report (RFC 2710): 4 maximum response delay (0), 8 the group,
 *    and the message ends there (24 bytes), sent to the group.
 */
#define IP_HOPOPTS 0
#define MLD_HOPS 1
#define MLD_V1_LEN 24
#define MLD_V2_QUERY_MIN 28
#define MLD_REPORT_LEN 28	/* its 8 bytes and one record */
#define RTR_ALERT_LEN 8		/* the hop-by-hop header we send */
_Static_assert(ND_OFF + RTR_ALERT_LEN + MLD_REPORT_LEN == SRNIC_MLD_FRAME,
	       "a report is its hop-by-hop header, its 8 bytes, one record");
_Static_assert(ND_OFF + RTR_ALERT_LEN + MLD_V1_LEN == SRNIC_MLD1_FRAME &&
		       SRNIC_MLD1_FRAME <= SRNIC_MLD_FRAME,
	       "an MLDv1 report is its hop-by-hop header and 24 bytes");

/* The longest a query says to wait, in ms: MLDv1's code is that
 * already, MLDv2's from 32768 on a float (RFC 3810, 5.1.3). */
static uint32_t mld_max_delay(uint16_t code, bool v2)
{
	if (!v2 || code < 32768)
		return code;
	return ((uint32_t)(code & 0xfff) | 0x1000) << (((code >> 12) & 7) + 3);
}

enum srnic_wire_err srnic_wire_mld_decode(const uint8_t *frame, uint32_t len,
					  struct srnic_mld_query *q)
{
	const uint8_t *ip = frame + IP_OFF, *h = frame + ND_OFF, *m;
	uint32_t plen, hlen, mlen;

	if (!srnic_wire_is_icmp6(frame, len) || ip[6] != IP_HOPOPTS)
		return SRNIC_WIRE_NOT_OURS;
	/* (the payload inside the frame, Ethernet padding after it; the
	 * hop-by-hop header inside the payload with room for a type) */
	plen = srnic_get16(ip + 4);
	hlen = (h[1] + 1u) * 8;
	if (plen > len - ND_OFF || hlen + 4 > plen)
		return SRNIC_WIRE_BAD_ND;
	m = h + hlen;
	mlen = plen - hlen;
	if (m[0] != SRNIC_MLD_QUERY)
		return SRNIC_WIRE_NOT_OURS;
	if ((mlen != MLD_V1_LEN && mlen < MLD_V2_QUERY_MIN) ||
	    ip[7] != MLD_HOPS || m[1] != 0 || ip[8] != 0xfe ||
	    (ip[9] & 0xc0) != 0x80 ||
	    (uint16_t)~ip6_sum(ip, m, mlen, IP_ICMP6) != 0)
		return SRNIC_WIRE_BAD_ND;
	memcpy(q->src, ip + 8, 16);
	memcpy(q->group, m + 8, 16);
	q->max_delay_ms = mld_max_delay(srnic_get16(m + 4), mlen != MLD_V1_LEN);
	q->v1 = mlen == MLD_V1_LEN;
	return SRNIC_WIRE_OK;
}

/* Ethernet, IPv6 (hop limit 1, from src to dst) and the hop-by-hop header
 * of an MLD report whose message is mlen bytes; the message's place. */
static uint8_t *mld_start(uint8_t *frame, const uint8_t eth_dst[6],
			  const uint8_t eth_src[6], const uint8_t src[16],
			  const uint8_t dst[16], uint32_t mlen)
{
	uint8_t *h = frame + ND_OFF;

	memcpy(frame, eth_dst, 6);
	memcpy(frame + 6, eth_src, 6);
	srnic_put16(frame + 12, SRNIC_ETHERTYPE_IPV6);
	put_ip6(frame + IP_OFF, RTR_ALERT_LEN + mlen, IP_HOPOPTS, MLD_HOPS,
		src, dst);
	/* next header, length 0 (8 bytes), router alert (type 5, 2 bytes,
	 * value 0: MLD), then PadN of its own 2 bytes to fill the 8 */
	memcpy(h, (const uint8_t[RTR_ALERT_LEN]){IP_ICMP6, 0, 5, 2, 0, 0, 1, 0},
	       RTR_ALERT_LEN);
	memset(h + RTR_ALERT_LEN, 0, mlen);
	return h + RTR_ALERT_LEN;
}

uint32_t srnic_wire_mld1_report_encode(uint8_t *frame,
				       const uint8_t eth_src[6],
				       const uint8_t src[16],
				       const uint8_t group[16])
{
	uint8_t mac[6];
	uint8_t *m;

	srnic_mcast_mac(srnic_get32(group + 12), true, mac);
	m = mld_start(frame, mac, eth_src, src, group, MLD_V1_LEN);
	m[0] = SRNIC_MLD1_REPORT;
	memcpy(m + 8, group, 16);
	srnic_put16(m + 2, (uint16_t)~ip6_sum(frame + IP_OFF, m, MLD_V1_LEN,
					      IP_ICMP6));
	return ND_OFF + RTR_ALERT_LEN + MLD_V1_LEN;
}

uint32_t srnic_wire_mld_report_encode(uint8_t *frame, const uint8_t eth_src[6],
				      const uint8_t src[16],
				      const uint8_t group[16],
				      uint8_t record_type)
{
	/* ff02::16, every MLDv2-capable router, and its Ethernet group */
	static const uint8_t routers[16] = {0xff, 0x02, [15] = 0x16};
	static const uint8_t routers_mac[6] = {0x33, 0x33, 0, 0, 0, 0x16};
	uint8_t *m = mld_start(frame, routers_mac, eth_src, src, routers,
			       MLD_REPORT_LEN);
	uint8_t *r = m + 8;

	m[0] = SRNIC_MLD_REPORT;
	srnic_put16(m + 6, 1);
	r[0] = record_type;
	r[1] = 0;
	srnic_put16(r + 2, 0);
	memcpy(r + 4, group, 16);
	srnic_put16(m + 2, (uint16_t)~ip6_sum(frame + IP_OFF, m, MLD_REPORT_LEN,
					      IP_ICMP6));
	return ND_OFF + RTR_ALERT_LEN + MLD_REPORT_LEN;
}

void srnic_wire_ip6_link_local(const uint8_t mac[6], uint8_t ip[16])
{
	memset(ip, 0, 16);
	ip[0] = 0xfe;
	ip[1] = 0x80;
	ip[8] = mac[0] ^ 2;	/* (the universal/local bit, inverted) */
	ip[9] = mac[1];
	ip[10] = mac[2];
	ip[11] = 0xff;
	ip[12] = 0xfe;
	memcpy(ip + 13, mac + 3, 3);
}

static void encode_base(uint8_t *b, const struct srnic_pkt *pkt)
{
	const uint8_t *d = pkt->path_delay;
	unsigned k;

	b[0] = SRNIC_WIRE_VERSION;
	b[1] = pkt->opcode;
	srnic_put16(b + 2, pkt->flags);
	if (pkt->opcode == SRNIC_OP_HELLO) {
		memcpy(b + 4, pkt->path_loss, SRNIC_UDP_PATHS);
		for (k = 0; k < SRNIC_UDP_PATHS; k += 2)
			b[16 + k / 2] = (uint8_t)((d[k] & 15) << 4 |
						  (d[k + 1] & 15));
	} else {
		srnic_put32(b + 4, pkt->dst_qpn);
		srnic_put32(b + 8, pkt->src_qpn);
		srnic_put32(b + 16, pkt->dst_inc);
	}
	srnic_put32(b + 12, pkt->src_inc);
	srnic_put32(b + 20, pkt->msn);
}

static void encode_tp_ext(uint8_t *x, const struct srnic_pkt *pkt)
{
	srnic_put32(x + 0, pkt->tp_ipv4);
	srnic_put32(x + 4, pkt->tp_inc);
	srnic_put32(x + 8, pkt->tp_qpn);
	srnic_put32(x + 12, pkt->tp_ctl_qpn);
	srnic_put32(x + 16, pkt->tp_rkey);
	srnic_put32(x + 20, 0);
	srnic_put64(x + 24, pkt->tp_va);
}

static void encode_data_ext(uint8_t *x, const struct srnic_pkt *pkt)
{
	srnic_put32(x + 0, pkt->txid);
	srnic_put32(x + 4, pkt->ssn);
	if (pkt->opcode == SRNIC_OP_UD_SEND) {
		srnic_put32(x + 8, pkt->qkey);
		srnic_put32(x + 16, pkt->src_ipv4);
		srnic_put32(x + 20, pkt->dst_ipv4);
	} else {
		srnic_put32(x + 8, pkt->rkey);
		srnic_put64(x + 16, pkt->va);
	}
	if (srnic_op_asks(pkt->opcode))
		srnic_put32(x + 12, pkt->read_len);
	else
		memcpy(x + 12, &pkt->imm, 4); /* network order already */
	srnic_put32(x + 24, pkt->msg_off);
	srnic_put32(x + 28, pkt->pkt_len);
	srnic_put32(x + 32, pkt->msg_len);
	x[36] = pkt->stride_shift;
	x[37] = pkt->xflags;
	srnic_put16(x + 38, pkt->ts);
	srnic_put32(x + 40, pkt->flags & SRNIC_F_ACKS ? pkt->ack_msn : 0);
	if (pkt->flags & SRNIC_F_XRC)
		srnic_put32(x + SRNIC_DATA_XLEN, pkt->xrc_srqn);
	if (pkt->opcode == SRNIC_OP_TP_READ_REQ)
		encode_tp_ext(x + SRNIC_DATA_XLEN, pkt);
}

static void encode_ack_ext(uint8_t *x, const struct srnic_pkt *pkt)
{
	x[0] = pkt->syndrome;
	x[1] = pkt->rnr_timer;
	srnic_put16(x + 2, pkt->ts_echo);
	srnic_put32(x + 4, pkt->nak_msn);
	srnic_put32(x + 8, pkt->nak_txid);
	srnic_put32(x + 12, pkt->sack_msn);
	srnic_put32(x + 16, pkt->sack_first);
	srnic_put32(x + 20, pkt->credit);
	srnic_put64(x + 24, pkt->sack_bits);
}

static bool tpt_op(uint8_t opcode)
{
	return opcode == SRNIC_OP_TPT_UPDATE || opcode == SRNIC_OP_TPT_ACK;
}

/* A published region's entry, after the sender's address and port. */
static void encode_tpt(uint8_t *x, const struct srnic_pkt *pkt)
{
	x[5] = pkt->tpt_index;
	x[6] = pkt->tpt_count;
	x[7] = pkt->tpt_access;
	srnic_put32(x + 8, pkt->tpt_gen);
	srnic_put32(x + 12, pkt->tpt_name);
	srnic_put32(x + 16, pkt->tpt_rkey);
	srnic_put64(x + 24, pkt->tpt_addr);
	srnic_put64(x + 32, pkt->tpt_length);
}

static void decode_tpt(const uint8_t *x, struct srnic_pkt *pkt)
{
	pkt->tpt_index = x[5];
	pkt->tpt_count = x[6];
	pkt->tpt_access = x[7];
	pkt->tpt_gen = srnic_get32(x + 8);
	pkt->tpt_name = srnic_get32(x + 12);
	pkt->tpt_rkey = srnic_get32(x + 16);
	pkt->tpt_addr = srnic_get64(x + 24);
	pkt->tpt_length = srnic_get64(x + 32);
}

/* Where a control frame says its node's IPv6 address: after all that
 * the extension had before IPv6 nodes, so that every opcode's fields
 * kept their places. */
#define HELLO_IPV6_OFF 40
_Static_assert(HELLO_IPV6_OFF + 16 == SRNIC_HELLO_XLEN,
	       "the IPv6 address ends the control extension");

static void encode_hello_ext(uint8_t *x, const struct srnic_pkt *pkt)
{
	memset(x, 0, SRNIC_HELLO_XLEN);
	srnic_put32(x + 0, pkt->ipv4);
	x[4] = pkt->port;
	memcpy(x + HELLO_IPV6_OFF, pkt->ipv6, sizeof(pkt->ipv6));
	if (tpt_op(pkt->opcode)) {
		encode_tpt(x, pkt);
		return;
	}
	x[5] = pkt->dev;
	memcpy(x + 6, pkt->node_mac, 6);
	x[12] = pkt->ndev;
	if (pkt->opcode == SRNIC_OP_HELLO) {
		x[13] = pkt->paths;
		srnic_put16(x + 14, pkt->hello_ms);
	}
	memcpy(x + 16, pkt->node_name, sizeof(pkt->node_name) - 1);
	if (pkt->opcode == SRNIC_OP_HELLO)
		x[31] = pkt->queues;
	if (pkt->opcode == SRNIC_OP_SVC_ANNOUNCE) {
		srnic_put32(x + 32, pkt->svc_ipv4);
		x[36] = pkt->svc_prio;
		x[37] = pkt->svc_holder;
		x[38] = pkt->svc_mode;
		x[39] = pkt->svc_bound;
	} else {
		srnic_put64(x + 32, pkt->groups);
	}
}

unsigned srnic_wire_encode(uint8_t *buf, const uint8_t dst_mac[6],
			   const uint8_t src_mac[6],
			   const struct srnic_pkt *pkt)
{
	uint8_t *x = buf + SRNIC_ETH_HLEN + SRNIC_BASE_HLEN;

	memcpy(buf, dst_mac, 6);
	memcpy(buf + 6, src_mac, 6);
	srnic_put16(buf + 12, SRNIC_ETHERTYPE);
	encode_base(buf + SRNIC_ETH_HLEN, pkt);

	switch (srnic_op_entry(pkt->opcode)->ext) {
	case SRNIC_EXT_DATA:
		encode_data_ext(x, pkt);
		break;
	case SRNIC_EXT_ACK:
		encode_ack_ext(x, pkt);
		break;
	default:
		encode_hello_ext(x, pkt);
		break;
	}
	return srnic_wire_pkt_hlen(pkt);
}

static void decode_base(const uint8_t *b, struct srnic_pkt *pkt)
{
	unsigned k;

	if (b[1] == SRNIC_OP_HELLO) {
		memcpy(pkt->path_loss, b + 4, SRNIC_UDP_PATHS);
		for (k = 0; k < SRNIC_UDP_PATHS; k += 2) {
			pkt->path_delay[k] = b[16 + k / 2] >> 4;
			pkt->path_delay[k + 1] = b[16 + k / 2] & 15;
		}
	} else {
		pkt->dst_qpn = srnic_get32(b + 4);
		pkt->src_qpn = srnic_get32(b + 8);
		pkt->dst_inc = srnic_get32(b + 16);
	}
	pkt->src_inc = srnic_get32(b + 12);
	pkt->msn = srnic_get32(b + 20);
}

static void decode_data_ext(const uint8_t *x, struct srnic_pkt *pkt)
{
	pkt->txid = srnic_get32(x + 0);
	pkt->ssn = srnic_get32(x + 4);
	if (pkt->opcode == SRNIC_OP_UD_SEND) {
		pkt->qkey = srnic_get32(x + 8);
		pkt->src_ipv4 = srnic_get32(x + 16);
		pkt->dst_ipv4 = srnic_get32(x + 20);
	} else {
		pkt->rkey = srnic_get32(x + 8);
		pkt->va = srnic_get64(x + 16);
	}
	if (srnic_op_asks(pkt->opcode))
		pkt->read_len = srnic_get32(x + 12);
	else
		memcpy(&pkt->imm, x + 12, 4);
	pkt->msg_off = srnic_get32(x + 24);
	pkt->pkt_len = srnic_get32(x + 28);
	pkt->msg_len = srnic_get32(x + 32);
	pkt->stride_shift = x[36];
	pkt->xflags = x[37];
	pkt->ts = srnic_get16(x + 38);
	if (pkt->flags & SRNIC_F_ACKS)
		pkt->ack_msn = srnic_get32(x + 40);
	if (pkt->flags & SRNIC_F_XRC)
		pkt->xrc_srqn = srnic_get32(x + SRNIC_DATA_XLEN);
	if (pkt->opcode == SRNIC_OP_TP_READ_REQ) {
		x += SRNIC_DATA_XLEN;
		pkt->tp_ipv4 = srnic_get32(x + 0);
		pkt->tp_inc = srnic_get32(x + 4);
		pkt->tp_qpn = srnic_get32(x + 8);
		pkt->tp_ctl_qpn = srnic_get32(x + 12);
		pkt->tp_rkey = srnic_get32(x + 16);
		pkt->tp_va = srnic_get64(x + 24);
	}
}

static void decode_ack_ext(const uint8_t *x, struct srnic_pkt *pkt)
{
	pkt->syndrome = x[0];
	pkt->rnr_timer = x[1] & 31;
	pkt->ts_echo = srnic_get16(x + 2);
	pkt->nak_msn = srnic_get32(x + 4);
	pkt->nak_txid = srnic_get32(x + 8);
	pkt->sack_msn = srnic_get32(x + 12);
	pkt->sack_first = srnic_get32(x + 16);
	pkt->credit = srnic_get32(x + 20);
	pkt->sack_bits = srnic_get64(x + 24);
}

static void decode_hello_ext(const uint8_t *x, struct srnic_pkt *pkt)
{
	pkt->ipv4 = srnic_get32(x + 0);
	pkt->port = x[4];
	memcpy(pkt->ipv6, x + HELLO_IPV6_OFF, sizeof(pkt->ipv6));
	if (tpt_op(pkt->opcode)) {
		decode_tpt(x, pkt);
		return;
	}
	pkt->dev = x[5];
	memcpy(pkt->node_mac, x + 6, 6);
	pkt->ndev = x[12];
	if (pkt->opcode == SRNIC_OP_HELLO) {
		pkt->paths = x[13];
		pkt->hello_ms = srnic_get16(x + 14);
	}
	memcpy(pkt->node_name, x + 16, sizeof(pkt->node_name) - 1);
	pkt->node_name[sizeof(pkt->node_name) - 1] = '\0';
	pkt->queues = pkt->opcode == SRNIC_OP_HELLO ? x[31] : 0;
	if (pkt->opcode == SRNIC_OP_SVC_ANNOUNCE) {
		pkt->svc_ipv4 = srnic_get32(x + 32);
		pkt->svc_prio = x[36];
		pkt->svc_holder = x[37];
		pkt->svc_mode = x[38];
		pkt->svc_bound = x[39];
	} else {
		pkt->groups = srnic_get64(x + 32);
	}
}

/* What every data extension must say: a message srnic can move, cut at a
 * stride it knows (a READ request's too: the responder cuts its answer
 * with it). */
static bool data_ext_sane(const struct srnic_pkt *pkt)
{
	uint8_t allowed = 0;

	if ((pkt->opcode == SRNIC_OP_WRITE &&
	     !(pkt->flags & SRNIC_F_ATOMIC_WR)) ||
	    pkt->opcode == SRNIC_OP_READ_REQ)
		allowed |= SRNIC_X_NOTIFY;
	if (pkt->opcode == SRNIC_OP_WRITE || pkt->opcode == SRNIC_OP_SEND)
		allowed |= SRNIC_X_ACK_REQ;
	return pkt->msg_len <= SRNIC_MAX_MSG_LEN &&
	       pkt->stride_shift >= SRNIC_MIN_STRIDE_SHIFT &&
	       pkt->stride_shift <= SRNIC_MAX_STRIDE_SHIFT &&
	       !(pkt->xflags & ~allowed);
}

/* One packet of a message cut on stride boundaries, so that each has a
 * fixed index in the message's bitmap: inside the message, the stride's
 * length (or the rest of the message, for the last one), and empty only
 * for an empty message. */
static bool stream_lengths_ok(const struct srnic_pkt *pkt)
{
	uint32_t stride = 1u << pkt->stride_shift;
	uint32_t left;

	if (pkt->msg_off > pkt->msg_len ||
	    pkt->pkt_len > pkt->msg_len - pkt->msg_off)
		return false;
	if (pkt->pkt_len == 0 && pkt->msg_len != 0)
		return false;
	if (pkt->va + pkt->pkt_len < pkt->va)
		return false;
	if (pkt->msg_off & (stride - 1))
		return false;
	left = pkt->msg_len - pkt->msg_off;
	return pkt->msg_len == 0 ||
	       pkt->pkt_len == (left < stride ? left : stride);
}

/* Padding may follow the payload (short frames), but the payload must be
 * inside the frame. */
static enum srnic_wire_err check_stream_packet(const struct srnic_pkt *pkt,
					       uint32_t rest_len)
{
	if (pkt->pkt_len > rest_len)
		return SRNIC_WIRE_SHORT;
	return stream_lengths_ok(pkt) ? SRNIC_WIRE_OK : SRNIC_WIRE_BAD_LENGTH;
}

/* An atomic's packet: the whole message, on 8 aligned bytes of memory,
 * with a payload of payload_len bytes in the frame. */
static enum srnic_wire_err check_atomic_packet(const struct srnic_pkt *pkt,
					       uint32_t rest_len,
					       uint32_t payload_len)
{
	if (pkt->pkt_len > rest_len)
		return SRNIC_WIRE_SHORT;
	if (pkt->msg_len != SRNIC_ATOMIC_LEN || pkt->pkt_len != payload_len ||
	    pkt->msg_off != 0 || (pkt->va & 7) ||
	    pkt->va + SRNIC_ATOMIC_LEN < pkt->va)
		return SRNIC_WIRE_BAD_LENGTH;
	return SRNIC_WIRE_OK;
}

/* SEND, READ_RESP: a packet of a message. */
static enum srnic_wire_err check_stream(struct srnic_pkt *pkt,
					const uint8_t *rest, uint32_t rest_len)
{
	(void)rest;
	if (!data_ext_sane(pkt))
		return SRNIC_WIRE_BAD_LENGTH;
	return check_stream_packet(pkt, rest_len);
}

static enum srnic_wire_err check_write(struct srnic_pkt *pkt,
				       const uint8_t *rest, uint32_t rest_len)
{
	(void)rest;
	if (!data_ext_sane(pkt))
		return SRNIC_WIRE_BAD_LENGTH;
	if (pkt->flags & SRNIC_F_ATOMIC_WR)	/* ibv_wr_atomic_write */
		return check_atomic_packet(pkt, rest_len, SRNIC_ATOMIC_LEN);
	return check_stream_packet(pkt, rest_len);
}

/* A datagram is one packet: the whole message. */
static enum srnic_wire_err check_datagram(struct srnic_pkt *pkt,
					  const uint8_t *rest,
					  uint32_t rest_len)
{
	enum srnic_wire_err e = check_stream(pkt, rest, rest_len);

	if (e != SRNIC_WIRE_OK)
		return e;
	if (pkt->msg_off != 0 || pkt->pkt_len != pkt->msg_len)
		return SRNIC_WIRE_BAD_LENGTH;
	return SRNIC_WIRE_OK;
}

/* A READ request carries no payload.  It names the whole READ (va,
 * msg_len) and the part of it wanted: read_len bytes (0: the rest) from
 * msg_off, which is a packet boundary inside the READ. */
static enum srnic_wire_err check_read_req(struct srnic_pkt *pkt,
					  const uint8_t *rest,
					  uint32_t rest_len)
{
	(void)rest;
	(void)rest_len;
	if (!data_ext_sane(pkt) || pkt->pkt_len != 0)
		return SRNIC_WIRE_BAD_LENGTH;
	if (pkt->msg_off & ((1u << pkt->stride_shift) - 1))
		return SRNIC_WIRE_BAD_LENGTH;
	if (pkt->msg_len ? pkt->msg_off >= pkt->msg_len : pkt->msg_off != 0)
		return SRNIC_WIRE_BAD_LENGTH;
	if (pkt->read_len > pkt->msg_len - pkt->msg_off ||
	    pkt->va + pkt->msg_len < pkt->va)
		return SRNIC_WIRE_BAD_LENGTH;
	return SRNIC_WIRE_OK;
}

/* A third-party request is a READ request whose data goes to the target's
 * range, which must not wrap either. */
static enum srnic_wire_err check_tp_read_req(struct srnic_pkt *pkt,
					     const uint8_t *rest,
					     uint32_t rest_len)
{
	enum srnic_wire_err e = check_read_req(pkt, rest, rest_len);

	if (e == SRNIC_WIRE_OK && pkt->tp_va + pkt->msg_len < pkt->tp_va)
		return SRNIC_WIRE_BAD_LENGTH;
	return e;
}

/* Two operands, on 8 aligned bytes. */
static enum srnic_wire_err check_atomic(struct srnic_pkt *pkt,
					const uint8_t *rest, uint32_t rest_len)
{
	(void)rest;
	if (!data_ext_sane(pkt))
		return SRNIC_WIRE_BAD_LENGTH;
	return check_atomic_packet(pkt, rest_len, SRNIC_ATOMIC_PAYLOAD);
}

/* ACK-shaped: a syndrome srnic knows. */
static enum srnic_wire_err check_ack(struct srnic_pkt *pkt,
				     const uint8_t *rest, uint32_t rest_len)
{
	(void)rest;
	(void)rest_len;
	if (pkt->syndrome > SRNIC_NAK_OPERATIONAL)
		return SRNIC_WIRE_BAD_OPCODE;
	return SRNIC_WIRE_OK;
}

/* READ_DONE, READ_DONE_ACK: ACK-shaped, never a NAK. */
static enum srnic_wire_err check_read_done(struct srnic_pkt *pkt,
					   const uint8_t *rest,
					   uint32_t rest_len)
{
	(void)rest;
	(void)rest_len;
	return pkt->syndrome == SRNIC_ACK_OK ? SRNIC_WIRE_OK
					     : SRNIC_WIRE_BAD_OPCODE;
}

/* A signed opcode's MAC, if flagged, right after the headers. */
static enum srnic_wire_err check_signed(struct srnic_pkt *pkt,
					const uint8_t *rest, uint32_t rest_len)
{
	if (pkt->flags & SRNIC_F_AUTH) {
		if (rest_len < SRNIC_AUTH_LEN)
			return SRNIC_WIRE_SHORT;
		pkt->auth = rest;
	}
	return SRNIC_WIRE_OK;
}

/* SVC_RESYNC, SVC_RESYNC_ACK: ACK-shaped and signed. */
static enum srnic_wire_err check_resync(struct srnic_pkt *pkt,
					const uint8_t *rest, uint32_t rest_len)
{
	enum srnic_wire_err e = check_ack(pkt, rest, rest_len);

	return e != SRNIC_WIRE_OK ? e : check_signed(pkt, rest, rest_len);
}

/* TPT_UPDATE: an entry of a table srnic can hold (or none: index 0 of
 * count 0), with a name, remote rights only, and a range that does not
 * wrap. */
static bool tpt_entry_sane(const struct srnic_pkt *pkt)
{
	if (pkt->tpt_count == 0)
		return pkt->tpt_index == 0;
	return pkt->tpt_count <= SRNIC_TPT_MAX &&
	       pkt->tpt_index < pkt->tpt_count && pkt->tpt_name &&
	       pkt->tpt_access && !(pkt->tpt_access & ~SRNIC_TPT_RIGHTS) &&
	       pkt->tpt_addr + pkt->tpt_length >= pkt->tpt_addr;
}

/* TPT_UPDATE, TPT_ACK: signed as every control frame. */
static enum srnic_wire_err check_tpt(struct srnic_pkt *pkt,
				     const uint8_t *rest, uint32_t rest_len)
{
	if (pkt->opcode == SRNIC_OP_TPT_UPDATE && !tpt_entry_sane(pkt))
		return SRNIC_WIRE_BAD_LENGTH;
	return check_signed(pkt, rest, rest_len);
}

#define HLEN(xlen) (SRNIC_ETH_HLEN + SRNIC_BASE_HLEN + (xlen))
#define DATA_OP(n, chk, props_)                                             \
	{.name = (n), .check = (chk), .ext = SRNIC_EXT_DATA,                \
	 .hlen = HLEN(SRNIC_DATA_XLEN), .props = (props_)}
#define CONTROL_OP(n)                                                       \
	{.name = (n), .check = check_signed, .ext = SRNIC_EXT_HELLO,        \
	 .hlen = HLEN(SRNIC_HELLO_XLEN),                                    \
	 .props = SRNIC_OPF_CONTROL | SRNIC_OPF_SIGNED}
#define TPT_OP(n)                                                           \
	{.name = (n), .check = check_tpt, .ext = SRNIC_EXT_HELLO,           \
	 .hlen = HLEN(SRNIC_HELLO_XLEN),                                    \
	 .props = SRNIC_OPF_CONTROL | SRNIC_OPF_SIGNED}
#define RESYNC_OP(n)                                                        \
	{.name = (n), .check = check_resync, .ext = SRNIC_EXT_ACK,          \
	 .hlen = HLEN(SRNIC_ACK_XLEN), .props = SRNIC_OPF_SIGNED}

const struct srnic_op_info srnic_op_table[UINT8_MAX + 1] = {
	[SRNIC_OP_SEND] = DATA_OP("SEND", check_stream,
				  SRNIC_OPF_PAYLOAD | SRNIC_OPF_XRC |
					  SRNIC_OPF_REQUEST),
	/* a multicast WRITE is a plain WRITE of its bytes: nothing for a
	 * receive, nothing atomic, no SRQ */
	[SRNIC_OP_WRITE] = {.name = "WRITE", .check = check_write,
			    .ext = SRNIC_EXT_DATA,
			    .hlen = HLEN(SRNIC_DATA_XLEN),
			    .props = SRNIC_OPF_PAYLOAD | SRNIC_OPF_XRC |
				     SRNIC_OPF_REQUEST | SRNIC_OPF_GROUP |
				     SRNIC_OPF_REMOTE | SRNIC_OPF_THIRD_PARTY,
			    .group_not = SRNIC_F_GROUP_NOT},
	[SRNIC_OP_READ_REQ] = DATA_OP("READ_REQ", check_read_req,
				      SRNIC_OPF_XRC | SRNIC_OPF_REQUEST |
					      SRNIC_OPF_REMOTE |
					      SRNIC_OPF_RD_ATOMIC),
	[SRNIC_OP_READ_RESP] = DATA_OP("READ_RESP", check_stream,
				       SRNIC_OPF_PAYLOAD),
	/* (a member's answer to a multicast WRITE is an ACK too) */
	[SRNIC_OP_ACK] = {.name = "ACK", .check = check_ack,
			  .ext = SRNIC_EXT_ACK, .hlen = HLEN(SRNIC_ACK_XLEN),
			  .props = SRNIC_OPF_GROUP | SRNIC_OPF_THIRD_PARTY},
	[SRNIC_OP_HELLO] = CONTROL_OP("HELLO"),
	[SRNIC_OP_BYE] = CONTROL_OP("BYE"),
	[SRNIC_OP_BYE_ACK] = CONTROL_OP("BYE_ACK"),
	[SRNIC_OP_BOOTING] = CONTROL_OP("BOOTING"),
	[SRNIC_OP_BOOT_ACK] = CONTROL_OP("BOOT_ACK"),
	[SRNIC_OP_RDMA_READY] = CONTROL_OP("RDMA_READY"),
	[SRNIC_OP_ATOMIC_REQ] = DATA_OP("ATOMIC_REQ", check_atomic,
					SRNIC_OPF_PAYLOAD | SRNIC_OPF_XRC |
						SRNIC_OPF_REQUEST |
						SRNIC_OPF_REMOTE |
						SRNIC_OPF_RD_ATOMIC),
	[SRNIC_OP_UD_SEND] = DATA_OP("UD_SEND", check_datagram,
				     SRNIC_OPF_PAYLOAD),
	[SRNIC_OP_SVC_ANNOUNCE] = CONTROL_OP("SVC_ANNOUNCE"),
	[SRNIC_OP_SVC_RESYNC] = RESYNC_OP("SVC_RESYNC"),
	[SRNIC_OP_SVC_RESYNC_ACK] = RESYNC_OP("SVC_RESYNC_ACK"),
	/* (not a message of the QP it comes on: no SRNIC_OPF_REQUEST) */
	[SRNIC_OP_TP_READ_REQ] = {.name = "TP_READ_REQ",
				  .check = check_tp_read_req,
				  .ext = SRNIC_EXT_DATA,
				  .hlen = HLEN(SRNIC_DATA_XLEN + SRNIC_TP_XLEN),
				  .props = 0},
	[SRNIC_OP_TPT_UPDATE] = TPT_OP("TPT_UPDATE"),
	[SRNIC_OP_TPT_ACK] = TPT_OP("TPT_ACK"),
	[SRNIC_OP_READ_DONE] = {.name = "READ_DONE", .check = check_read_done,
				.ext = SRNIC_EXT_ACK,
				.hlen = HLEN(SRNIC_ACK_XLEN)},
	[SRNIC_OP_READ_DONE_ACK] = {.name = "READ_DONE_ACK",
				    .check = check_read_done,
				    .ext = SRNIC_EXT_ACK,
				    .hlen = HLEN(SRNIC_ACK_XLEN)},
};

/* The frame before its opcode: ours, of our version, long enough for the
 * base header. */
static enum srnic_wire_err check_frame(const uint8_t *buf, uint32_t len)
{
	if (len < SRNIC_ETH_HLEN)
		return SRNIC_WIRE_SHORT;
	if (srnic_get16(buf + 12) != SRNIC_ETHERTYPE)
		return SRNIC_WIRE_NOT_OURS;
	if (len < SRNIC_ETH_HLEN + SRNIC_BASE_HLEN)
		return SRNIC_WIRE_SHORT;
	if (buf[SRNIC_ETH_HLEN] != SRNIC_WIRE_VERSION)
		return SRNIC_WIRE_BAD_VERSION;
	return SRNIC_WIRE_OK;
}

/* The flags only some opcodes may carry. */
static enum srnic_wire_err check_flags(const struct srnic_op_info *op,
				       uint16_t flags)
{
	if ((flags & SRNIC_F_XRC) && !(op->props & SRNIC_OPF_XRC))
		return SRNIC_WIRE_BAD_OPCODE;
	if ((flags & SRNIC_F_THIRD_PARTY) &&
	    !(op->props & SRNIC_OPF_THIRD_PARTY))
		return SRNIC_WIRE_BAD_OPCODE;
	if ((flags & SRNIC_F_ACKS) && !(op->props & SRNIC_OPF_REQUEST))
		return SRNIC_WIRE_BAD_OPCODE;
	if ((flags & SRNIC_F_GROUP) &&
	    (!(op->props & SRNIC_OPF_GROUP) || (flags & op->group_not)))
		return SRNIC_WIRE_BAD_OPCODE;
	return SRNIC_WIRE_OK;
}

/* Headers into pkt: the base header and the opcode's extension. */
static void decode_headers(const struct srnic_op_info *op,
			   const uint8_t *buf, struct srnic_pkt *pkt)
{
	const uint8_t *x = buf + SRNIC_ETH_HLEN + SRNIC_BASE_HLEN;

	decode_base(buf + SRNIC_ETH_HLEN, pkt);
	switch (op->ext) {
	case SRNIC_EXT_DATA:
		decode_data_ext(x, pkt);
		break;
	case SRNIC_EXT_ACK:
		decode_ack_ext(x, pkt);
		break;
	default:
		decode_hello_ext(x, pkt);
		memcpy(pkt->eth_src, buf + 6, 6);
		break;
	}
}

enum srnic_wire_err srnic_wire_decode(const uint8_t *buf, uint32_t len,
				      struct srnic_pkt *pkt)
{
	const struct srnic_op_info *op;
	enum srnic_wire_err e;
	unsigned hlen;

	e = check_frame(buf, len);
	if (e != SRNIC_WIRE_OK)
		return e;
	op = srnic_op_entry(buf[SRNIC_ETH_HLEN + 1]);
	if (op->ext == SRNIC_EXT_NONE)
		return SRNIC_WIRE_BAD_OPCODE;

	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = buf[SRNIC_ETH_HLEN + 1];
	pkt->flags = srnic_get16(buf + FLAGS_OFF);
	if (pkt->flags & SRNIC_F_CRC) {
		/* What follows sees the frame without its trailer. */
		if (len < SRNIC_ETH_HLEN + SRNIC_BASE_HLEN + SRNIC_CRC_LEN)
			return SRNIC_WIRE_SHORT;
		len -= SRNIC_CRC_LEN;
	}
	e = check_flags(op, pkt->flags);
	if (e != SRNIC_WIRE_OK)
		return e;
	hlen = srnic_wire_pkt_hlen(pkt);
	if (len < hlen)
		return SRNIC_WIRE_SHORT;

	decode_headers(op, buf, pkt);
	if (op->ext == SRNIC_EXT_DATA)
		pkt->payload = buf + hlen;
	return op->check(pkt, buf + hlen, len - hlen);
}
