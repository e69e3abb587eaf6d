/* SPDX-License-Identifier: MIT */
/*
 * Encoding and decoding of srnic frames.  Offsets are given once, here, as
 * the byte map in docs/wire-protocol.md:
 *
 *  Ethernet   0 dst mac, 6 src mac, 12 EtherType
 *  base      +0 version, +1 opcode, +2 flags, +4 dst_qpn, +8 src_qpn,
 *            +12 src_inc, +16 dst_inc, +20 msn
 *  data ext  +0 txid, +4 ssn, +8 rkey, +12 imm (READ_REQ: read_len),
 *            +16 va (8), +24 msg_off,
 *            +28 pkt_len, +32 msg_len, +36 stride_shift, +37 reserved,
 *            +38 ts
 *            (UD_SEND: +8 qkey, +16 src ipv4, +20 dst ipv4)
 *  xrc ext    (flag SRNIC_F_XRC: SEND, WRITE, READ_REQ, ATOMIC_REQ) right
 *            after the data ext: +0 xrc_srqn; the payload follows it
 *  ack ext   +0 syndrome, +1 rnr_timer, +2 ts_echo, +4 nak_msn,
 *            +8 nak_txid, +12 sack_msn, +16 sack_first, +20 credit,
 *            +24 sack_bits (8)
 *  hello ext +0 ipv4, +4 port, +5 dev, +6 node mac, +12 ndev,
 *            +13 reserved,
 *            +16 node name (16), +32 groups (8: HELLO's group map;
 *            SVC_ANNOUNCE: +32 service ipv4, +36 prio, +37 holder,
 *            +38 mode, +39 bound)
 *  auth       (flag SRNIC_F_AUTH, control frames) 32 bytes right after
 *            the hello ext: MAC of the frame's bytes before it
 *  trailer    (flag SRNIC_F_CRC) the frame's last 4 bytes: CRC-32C of all
 *            before them
 */
#include <isa-l/crc.h>
#include <sodium.h>

#include "srnic_wire.h"

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

void srnic_wire_seal(uint8_t *buf, uint32_t len)
{
	uint32_t body = len - SRNIC_CRC_LEN;

	srnic_wire_add_flags(buf, SRNIC_F_CRC);
	srnic_put32(buf + body, srnic_wire_crc(buf, body, 0));
}

_Static_assert(crypto_auth_BYTES == SRNIC_AUTH_LEN &&
		       crypto_auth_KEYBYTES == SRNIC_KEY_LEN,
	       "crypto_auth is HMAC-SHA-512-256: 32-byte key and tag");

void srnic_wire_sign(uint8_t *buf, const uint8_t key[SRNIC_KEY_LEN])
{
	unsigned hlen = srnic_wire_hlen(buf[SRNIC_ETH_HLEN + 1]);

	crypto_auth(buf + hlen, buf, hlen, key);
}

bool srnic_wire_auth_ok(const uint8_t *buf, const struct srnic_pkt *pkt,
			const uint8_t key[SRNIC_KEY_LEN])
{
	return pkt->auth && crypto_auth_verify(pkt->auth, buf,
					       srnic_wire_hlen(pkt->opcode),
					       key) == 0;
}

enum srnic_wire_err srnic_wire_check_crc(const uint8_t *buf, uint32_t len,
					 bool required)
{
	if (len < SRNIC_ETH_HLEN + SRNIC_BASE_HLEN ||
	    srnic_get16(buf + 12) != SRNIC_ETHERTYPE)
		return SRNIC_WIRE_OK;
	if (!(srnic_get16(buf + FLAGS_OFF) & SRNIC_F_CRC))
		return required ? SRNIC_WIRE_BAD_CRC : SRNIC_WIRE_OK;
	if (len < SRNIC_ETH_HLEN + SRNIC_BASE_HLEN + SRNIC_CRC_LEN ||
	    srnic_wire_crc(buf, len - SRNIC_CRC_LEN, 0) !=
		    srnic_get32(buf + len - SRNIC_CRC_LEN))
		return SRNIC_WIRE_BAD_CRC;
	return SRNIC_WIRE_OK;
}

unsigned srnic_wire_encode(uint8_t *buf, const uint8_t dst_mac[6],
			   const uint8_t src_mac[6],
			   const struct srnic_pkt *pkt)
{
	uint8_t *b = buf + SRNIC_ETH_HLEN;
	uint8_t *x = b + SRNIC_BASE_HLEN;
	unsigned hlen = srnic_wire_pkt_hlen(pkt);

	memcpy(buf, dst_mac, 6);
	memcpy(buf + 6, src_mac, 6);
	srnic_put16(buf + 12, SRNIC_ETHERTYPE);

	b[0] = SRNIC_WIRE_VERSION;
	b[1] = pkt->opcode;
	srnic_put16(b + 2, pkt->flags);
	srnic_put32(b + 4, pkt->dst_qpn);
	srnic_put32(b + 8, pkt->src_qpn);
	srnic_put32(b + 12, pkt->src_inc);
	srnic_put32(b + 16, pkt->dst_inc);
	srnic_put32(b + 20, pkt->msn);

	if (srnic_op_has_data_ext(pkt->opcode)) {
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
		if (pkt->opcode == SRNIC_OP_READ_REQ)
			srnic_put32(x + 12, pkt->read_len);
		else
			memcpy(x + 12, &pkt->imm, 4); /* network order already */
		srnic_put32(x + 24, pkt->msg_off);
		srnic_put32(x + 28, pkt->pkt_len);
		srnic_put32(x + 32, pkt->msg_len);
		x[36] = pkt->stride_shift;
		x[37] = 0;
		srnic_put16(x + 38, pkt->ts);
		if (pkt->flags & SRNIC_F_XRC)
			srnic_put32(x + SRNIC_DATA_XLEN, pkt->xrc_srqn);
	} else if (srnic_op_ack_shaped(pkt->opcode)) {
		x[0] = pkt->syndrome;
		x[1] = pkt->rnr_timer;
		srnic_put16(x + 2, pkt->ts_echo);
		srnic_put32(x + 4, pkt->nak_msn);
		srnic_put32(x + 8, pkt->nak_txid);
		srnic_put32(x + 12, pkt->sack_msn);
		srnic_put32(x + 16, pkt->sack_first);
		srnic_put32(x + 20, pkt->credit);
		srnic_put64(x + 24, pkt->sack_bits);
	} else {
		memset(x, 0, SRNIC_HELLO_XLEN);
		srnic_put32(x + 0, pkt->ipv4);
		x[4] = pkt->port;
		x[5] = pkt->dev;
		memcpy(x + 6, pkt->node_mac, 6);
		x[12] = pkt->ndev;
		memcpy(x + 16, pkt->node_name, sizeof(pkt->node_name));
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
	return hlen;
}

enum srnic_wire_err srnic_wire_decode(const uint8_t *buf, uint32_t len,
				      struct srnic_pkt *pkt)
{
	const uint8_t *b = buf + SRNIC_ETH_HLEN;
	const uint8_t *x = b + SRNIC_BASE_HLEN;
	unsigned hlen;

	if (len < SRNIC_ETH_HLEN)
		return SRNIC_WIRE_SHORT;
	if (srnic_get16(buf + 12) != SRNIC_ETHERTYPE)
		return SRNIC_WIRE_NOT_OURS;
	if (len < SRNIC_ETH_HLEN + SRNIC_BASE_HLEN)
		return SRNIC_WIRE_SHORT;
	if (b[0] != SRNIC_WIRE_VERSION)
		return SRNIC_WIRE_BAD_VERSION;
	if (b[1] == 0 || b[1] >= SRNIC_OP_MAX)
		return SRNIC_WIRE_BAD_OPCODE;

	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = b[1];
	pkt->flags = srnic_get16(b + 2);
	if (pkt->flags & SRNIC_F_CRC) {
		/* What follows sees the frame without its trailer. */
		if (len < SRNIC_ETH_HLEN + SRNIC_BASE_HLEN + SRNIC_CRC_LEN)
			return SRNIC_WIRE_SHORT;
		len -= SRNIC_CRC_LEN;
	}
	hlen = srnic_wire_hlen(pkt->opcode);
	if (pkt->flags & SRNIC_F_XRC) {
		/* (an XRC QP's requests only) */
		if (!srnic_op_xrc(pkt->opcode))
			return SRNIC_WIRE_BAD_OPCODE;
		hlen += SRNIC_XRC_XLEN;
	}
	/* A multicast WRITE is a plain WRITE of its bytes: nothing for a
	 * receive, nothing atomic, no SRQ (and its ACK is an ACK). */
	if ((pkt->flags & SRNIC_F_GROUP) && pkt->opcode != SRNIC_OP_ACK &&
	    (pkt->opcode != SRNIC_OP_WRITE || (pkt->flags & SRNIC_F_GROUP_NOT)))
		return SRNIC_WIRE_BAD_OPCODE;
	if (len < hlen)
		return SRNIC_WIRE_SHORT;

	pkt->dst_qpn = srnic_get32(b + 4);
	pkt->src_qpn = srnic_get32(b + 8);
	pkt->src_inc = srnic_get32(b + 12);
	pkt->dst_inc = srnic_get32(b + 16);
	pkt->msn = srnic_get32(b + 20);

	if (srnic_op_has_data_ext(pkt->opcode)) {
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
		if (pkt->opcode == SRNIC_OP_READ_REQ)
			pkt->read_len = srnic_get32(x + 12);
		else
			memcpy(&pkt->imm, x + 12, 4);
		pkt->msg_off = srnic_get32(x + 24);
		pkt->pkt_len = srnic_get32(x + 28);
		pkt->msg_len = srnic_get32(x + 32);
		pkt->stride_shift = x[36];
		pkt->ts = srnic_get16(x + 38);
		if (pkt->flags & SRNIC_F_XRC)
			pkt->xrc_srqn = srnic_get32(x + SRNIC_DATA_XLEN);
		pkt->payload = buf + hlen;

		if (pkt->msg_len > SRNIC_MAX_MSG_LEN)
			return SRNIC_WIRE_BAD_LENGTH;
		/* Every data packet names a stride, a READ request too: the
		 * responder cuts its answer with it. */
		if (pkt->stride_shift < SRNIC_MIN_STRIDE_SHIFT ||
		    pkt->stride_shift > SRNIC_MAX_STRIDE_SHIFT)
			return SRNIC_WIRE_BAD_LENGTH;
		if (pkt->opcode == SRNIC_OP_ATOMIC_REQ) {
			/* Two operands, on 8 aligned bytes. */
			if (pkt->pkt_len != SRNIC_ATOMIC_PAYLOAD ||
			    pkt->pkt_len > len - hlen)
				return pkt->pkt_len > len - hlen
					       ? SRNIC_WIRE_SHORT
					       : SRNIC_WIRE_BAD_LENGTH;
			if (pkt->msg_len != SRNIC_ATOMIC_LEN ||
			    pkt->msg_off != 0 || (pkt->va & 7))
				return SRNIC_WIRE_BAD_LENGTH;
		} else if (pkt->opcode == SRNIC_OP_WRITE &&
			   (pkt->flags & SRNIC_F_ATOMIC_WR)) {
			/* An atomic write: one packet, 8 aligned bytes. */
			if (pkt->pkt_len > len - hlen)
				return SRNIC_WIRE_SHORT;
			if (pkt->msg_len != SRNIC_ATOMIC_LEN ||
			    pkt->pkt_len != SRNIC_ATOMIC_LEN ||
			    pkt->msg_off != 0 || (pkt->va & 7) ||
			    pkt->va + SRNIC_ATOMIC_LEN < pkt->va)
				return SRNIC_WIRE_BAD_LENGTH;
		} else if (pkt->opcode == SRNIC_OP_READ_REQ) {
			/* A request carries no payload.  It names the whole
			 * READ (va, msg_len) and the part of it wanted:
			 * read_len bytes (0: the rest) from msg_off, which is
			 * a packet boundary inside the READ. */
			if (pkt->pkt_len != 0)
				return SRNIC_WIRE_BAD_LENGTH;
			if (pkt->msg_off & ((1u << pkt->stride_shift) - 1))
				return SRNIC_WIRE_BAD_LENGTH;
			if (pkt->msg_len ? pkt->msg_off >= pkt->msg_len
					 : pkt->msg_off != 0)
				return SRNIC_WIRE_BAD_LENGTH;
			if (pkt->read_len > pkt->msg_len - pkt->msg_off)
				return SRNIC_WIRE_BAD_LENGTH;
			if (pkt->va + pkt->msg_len < pkt->va)
				return SRNIC_WIRE_BAD_LENGTH;
		} else {
			/* Padding may follow the payload (short frames), but
			 * the payload must be inside the frame and inside the
			 * message, and only an empty message has an empty
			 * packet. */
			if (pkt->pkt_len > len - hlen)
				return SRNIC_WIRE_SHORT;
			if (pkt->msg_off > pkt->msg_len ||
			    pkt->pkt_len > pkt->msg_len - pkt->msg_off)
				return SRNIC_WIRE_BAD_LENGTH;
			if (pkt->pkt_len == 0 && pkt->msg_len != 0)
				return SRNIC_WIRE_BAD_LENGTH;
			if (pkt->va + pkt->pkt_len < pkt->va)
				return SRNIC_WIRE_BAD_LENGTH;
			/* Packets are cut on stride boundaries, so each one
			 * has a fixed index in the message's bitmap. */
			if (pkt->msg_off & ((1u << pkt->stride_shift) - 1))
				return SRNIC_WIRE_BAD_LENGTH;
			if (pkt->msg_len != 0 &&
			    pkt->pkt_len != (pkt->msg_len - pkt->msg_off <
							 (1u << pkt->stride_shift)
						 ? pkt->msg_len - pkt->msg_off
						 : (1u << pkt->stride_shift)))
				return SRNIC_WIRE_BAD_LENGTH;
			/* A datagram is one packet: the whole message. */
			if (pkt->opcode == SRNIC_OP_UD_SEND &&
			    (pkt->msg_off != 0 || pkt->pkt_len != pkt->msg_len))
				return SRNIC_WIRE_BAD_LENGTH;
		}
	} else if (srnic_op_ack_shaped(pkt->opcode)) {
		pkt->syndrome = x[0];
		pkt->rnr_timer = x[1] & 31;
		pkt->ts_echo = srnic_get16(x + 2);
		pkt->nak_msn = srnic_get32(x + 4);
		pkt->nak_txid = srnic_get32(x + 8);
		pkt->sack_msn = srnic_get32(x + 12);
		pkt->sack_first = srnic_get32(x + 16);
		pkt->credit = srnic_get32(x + 20);
		pkt->sack_bits = srnic_get64(x + 24);
		if (pkt->syndrome > SRNIC_NAK_OPERATIONAL)
			return SRNIC_WIRE_BAD_OPCODE;
	} else {
		if (pkt->flags & SRNIC_F_AUTH) {
			if (len - hlen < SRNIC_AUTH_LEN)
				return SRNIC_WIRE_SHORT;
			pkt->auth = buf + hlen;
		}
		pkt->ipv4 = srnic_get32(x + 0);
		pkt->port = x[4];
		pkt->dev = x[5];
		memcpy(pkt->node_mac, x + 6, 6);
		pkt->ndev = x[12];
		memcpy(pkt->node_name, x + 16, sizeof(pkt->node_name));
		pkt->node_name[sizeof(pkt->node_name) - 1] = '\0';
		if (pkt->opcode == SRNIC_OP_SVC_ANNOUNCE) {
			pkt->svc_ipv4 = srnic_get32(x + 32);
			pkt->svc_prio = x[36];
			pkt->svc_holder = x[37];
			pkt->svc_mode = x[38];
			pkt->svc_bound = x[39];
		} else {
			pkt->groups = srnic_get64(x + 32);
		}
		memcpy(pkt->eth_src, buf + 6, 6);
	}
	return SRNIC_WIRE_OK;
}
