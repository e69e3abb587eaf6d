/* SPDX-License-Identifier: MIT */
/*
 * srnic wire format: the only place that knows byte offsets on the wire.
 *
 * Every frame is raw Ethernet with EtherType SRNIC_ETHERTYPE followed by a
 * fixed base header and an extension chosen by the opcode.  Data-carrying
 * packets are self-describing (key, offset, message context, transaction id,
 * own length and the message's total length), so a receiver can place each
 * one in any order.  docs/wire-protocol.md describes the same layout for
 * people; keep the two in step.
 *
 * The rest of srnic sees packets only as struct srnic_pkt, in host order.
 */
#ifndef SRNIC_WIRE_H
#define SRNIC_WIRE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* IEEE 802 "Local Experimental EtherType 1": reserved for exactly this kind
 * of private protocol, never assigned, so no host stack will claim it. */
#define SRNIC_ETHERTYPE 0x88B5
#define SRNIC_WIRE_VERSION 1

#define SRNIC_ETH_HLEN 14
#define SRNIC_BASE_HLEN 24
#define SRNIC_DATA_XLEN 44
#define SRNIC_ACK_XLEN 32
#define SRNIC_HELLO_XLEN 56
#define SRNIC_XRC_XLEN 4	/* SRNIC_F_XRC: the receiving SRQ's number */
#define SRNIC_TP_XLEN 32	/* TP_READ_REQ: where the data goes */
/* TPT_UPDATE: the most regions one node's table publishes (one frame
 * each), and the rights an entry may grant (SRNIC_ACCESS_REMOTE_WRITE,
 * _READ and _ATOMIC, as src/mem/srnic_mem.h numbers them). */
#define SRNIC_TPT_MAX 32
#define SRNIC_TPT_RIGHTS 0x0e
/* Largest header a packet with a payload carries: what a payload budget
 * must leave.  (A TP_READ_REQ's are longer, and it carries none.) */
#define SRNIC_MAX_HLEN                                                      \
	(SRNIC_ETH_HLEN + SRNIC_BASE_HLEN + SRNIC_DATA_XLEN + SRNIC_XRC_XLEN)

enum srnic_opcode {
	SRNIC_OP_SEND = 1,	/* payload into the receiver's next receive WQE */
	SRNIC_OP_WRITE = 2,	/* payload at (rkey, va) */
	SRNIC_OP_READ_REQ = 3,	/* ask for msg_len bytes at (rkey, va) */
	SRNIC_OP_READ_RESP = 4, /* payload for the requester's READ at msg_off */
	SRNIC_OP_ACK = 5,	/* cumulative ACK, or a NAK with a syndrome */
	SRNIC_OP_HELLO = 6,	/* control: node identity and liveness per port */
	SRNIC_OP_BYE = 7,	/* control: the sender is leaving this link */
	SRNIC_OP_BYE_ACK = 8,	/* control: the receiver of a BYE let go of it */
	/* Integration of a (re)started node, unicast on every port: */
	SRNIC_OP_BOOTING = 9,	/* "forget my older incarnations" */
	SRNIC_OP_BOOT_ACK = 10, /* "done, and nothing of mine toward them is
				 * still on this link" (SRNIC_F_NAK: I had
				 * nothing to forget) */
	SRNIC_OP_RDMA_READY = 11, /* "I accept RDMA from you now" */
	/* data again: fetch-and-add, or compare-and-swap (SRNIC_F_CAS), on
	 * the 8 bytes at (rkey, va); the payload is the two operands, and the
	 * answer a READ_RESP of the 8 bytes as they were */
	SRNIC_OP_ATOMIC_REQ = 12,
	/* a datagram (UD QPs): one packet, the whole message, into the
	 * receiver's next receive WQE behind a 40-byte GRH; no ACK.  The
	 * data extension's rkey slot carries the Q_Key, its va slot the
	 * sender's and the destination's IPv4 addresses (a group's for
	 * multicast, with dst_qpn SRNIC_QPN_MCAST). */
	SRNIC_OP_UD_SEND = 13,
	/* control: a member of a service (a failover address, docs/
	 * failover.md) says it is alive, with what priority, and whether it
	 * holds the service, at term msn; every 10 ms a port, broadcast */
	SRNIC_OP_SVC_ANNOUNCE = 14,
	/* A client's QP to a service asks the service's holder to bind its
	 * QP of that number to it (at the start, and after each takeover),
	 * and the holder says done.  ACK-shaped: msn is the message the
	 * holder's QP is to take next from the client, sack_msn that
	 * message's receive number, nak_msn and sack_first the message and
	 * receive numbers the client expects next from it, credit the
	 * client's packet size (log2); the ACK echoes msn. */
	SRNIC_OP_SVC_RESYNC = 15,
	SRNIC_OP_SVC_RESYNC_ACK = 16,
	/* Third-party RDMA (docs/third-party.md): a controller asks the data
	 * source to WRITE msg_len bytes at (rkey, va) of its memory to a
	 * target, as message msn of the controller's QP to that target
	 * (the TP extension says where); read_len bytes from msg_off, as a
	 * READ_REQ.  The source's WRITE packets carry SRNIC_F_THIRD_PARTY. */
	SRNIC_OP_TP_READ_REQ = 17,
	/* control: the system-wide protection table (seed 004; docs/
	 * published-keys.md).  TPT_UPDATE is entry tpt_index of the
	 * tpt_count regions the sender's node publishes at generation
	 * tpt_gen (count 0: none), sent to one incarnation of a peer that is
	 * integrated both ways, until it answers TPT_ACK of that
	 * generation. */
	SRNIC_OP_TPT_UPDATE = 18,
	SRNIC_OP_TPT_ACK = 19,
	/* Completion at both ends, a READ's (SRNIC_X_NOTIFY): its requester
	 * says, once every byte of READ msn has landed, READ_DONE (nak_txid
	 * its attempt), again until the target answers READ_DONE_ACK of msn
	 * (the target completes the READ before it answers). */
	SRNIC_OP_READ_DONE = 20,
	SRNIC_OP_READ_DONE_ACK = 21,
	SRNIC_OP_MAX
};

/* SVC_ANNOUNCE's holder byte: the sender held the service at the term in
 * msn and handed it over (failback=manual; docs/failover.md). */
#define SRNIC_SVC_RELEASED 2

/* Flags in the base header. */
#define SRNIC_F_IMM 0x0001	 /* imm carries immediate data */
#define SRNIC_F_RECV_CQE 0x0002	 /* consumes a receive WQE at the responder;
				  * ACK (no NAK): carries the responder's
				  * receive credit (srnic_ack_recv_credit) */
#define SRNIC_F_SOLICITED 0x0004 /* solicited event requested */
#define SRNIC_F_LAST 0x0008	 /* carries the message's last byte */
#define SRNIC_F_SACK 0x0010	 /* ACK: sack_* say what sack_msn lacks */
#define SRNIC_F_NAK 0x0020	 /* BOOT_ACK: the sender held no state */
#define SRNIC_F_CAS 0x0040	 /* ATOMIC_REQ: compare-and-swap, not add */
#define SRNIC_F_INV 0x0080	 /* SEND: invalidate the receiver's key rkey
				  * when the message completes */
#define SRNIC_F_CRC 0x0100	 /* the frame's last 4 bytes are a CRC-32C
				  * of every byte before them */
#define SRNIC_F_AUTH 0x0200	 /* control frames: a MAC of the headers
				  * follows them (SRNIC_AUTH_LEN bytes) */
#define SRNIC_F_PROBE 0x0400	 /* data: a probe (the message's last packet
				  * sent again): answer now, with a SACK if
				  * the message lacks anything */
#define SRNIC_F_ATOMIC_WR 0x0800 /* WRITE: an atomic write, 8 aligned bytes
				  * stored as one */
#define SRNIC_F_XRC 0x1000	 /* SEND, WRITE, READ_REQ, ATOMIC_REQ of an
				  * XRC QP: the XRC extension (the SRQ the
				  * message is for, which also names its PD)
				  * follows the data extension */
#define SRNIC_F_GROUP 0x2000	 /* WRITE: a multicast RDMA WRITE, to every
				  * node holding a region for the group
				  * (dst_qpn SRNIC_QPN_MCAST, rkey the group,
				  * va the offset in its region); ACK: a
				  * member's answer to one (docs/multicast-
				  * rdma.md) */
#define SRNIC_F_ACKS 0x4000	 /* SEND, WRITE, READ_REQ, ATOMIC_REQ of an
				  * RC QP: ack_msn is the
				  * cumulative ACK of the other direction
				  * (the sender's responder has done every
				  * message below it), riding with the data */
#define SRNIC_F_THIRD_PARTY 0x8000 /* WRITE: sent by a third-party data
				    * source on behalf of the controller
				    * (src_inc, src_qpn), as a message of
				    * the controller's QP; ACK: the source's
				    * NAK of a third-party request, which
				    * says nothing else */
/* What a multicast WRITE never carries. */
#define SRNIC_F_GROUP_NOT                                                   \
	(SRNIC_F_IMM | SRNIC_F_RECV_CQE | SRNIC_F_SOLICITED | SRNIC_F_CAS |   \
	 SRNIC_F_INV | SRNIC_F_ATOMIC_WR | SRNIC_F_XRC | SRNIC_F_ACKS |      \
	 SRNIC_F_THIRD_PARTY)

/* The MAC of an authenticated control frame: HMAC-SHA-512-256 (libsodium's
 * crypto_auth) under the cluster key, of the frame's bytes before it. */
#define SRNIC_AUTH_LEN 32

/* The integrity trailer (SRNIC_F_CRC), as RoCE's ICRC: CRC-32C
 * (Castagnoli, as iSCSI's) of the whole frame before it, Ethernet header
 * included, big-endian.  Ports that cross a wire send and demand it. */
#define SRNIC_CRC_LEN 4

/*
 * UDP/IP encapsulation (a node's `encap = udp`): between the Ethernet
 * header and srnic's, an IPv4 header (20 bytes, no options, DF, TTL 64)
 * and a UDP header (8 bytes, checksum 0) to the node's UDP port, whose
 * EtherType 0x0800 replaces SRNIC_ETHERTYPE.  Inside a node a frame is
 * always the raw one: the ports wrap it on its way out and strip it on
 * its way in (srnic_wire_udp_wrap, _unwrap).  A router rewrites the
 * Ethernet addresses, so a UDP node's CRC and MAC (SRNIC_F_CRC,
 * SRNIC_F_AUTH) read them as zero: `udp` in the functions below.
 */
#define SRNIC_UDP_HLEN 28
/* An IPv6 node's: IPv6 (40), UDP (8) and a 4-byte shim (below, "UDP over
 * IPv6"). */
#define SRNIC_UDP6_HLEN 52
#define SRNIC_UDP_PORT 4793	/* the default: not RoCE v2's 4791 */
/* What a frame adds to its payload at most: headers and trailer (what a
 * port's MTU and a buffer must leave room for), in any encapsulation. */
#define SRNIC_UDP_HLEN_MAX                                                  \
	(SRNIC_UDP6_HLEN > SRNIC_UDP_HLEN ? SRNIC_UDP6_HLEN : SRNIC_UDP_HLEN)
#define SRNIC_MAX_OVERHEAD                                                  \
	(SRNIC_MAX_HLEN + SRNIC_UDP_HLEN_MAX + SRNIC_CRC_LEN)

/* An ATOMIC_REQ's payload: compare (or add) then swap, 8 bytes each, in
 * network order; it works on 8 aligned bytes. */
#define SRNIC_ATOMIC_PAYLOAD 16
#define SRNIC_ATOMIC_LEN 8

/* dst_qpn of a datagram to a multicast group: every QP attached to the
 * group named by dst_ipv4 takes it. */
#define SRNIC_QPN_MCAST 0xFFFFFFu

/* Groups of multicast RDMA WRITE: numbered 0-63, as many as the bits of
 * the map a HELLO carries (the groups its node holds a region for).  Group
 * 0 is broadcast: its frames go to every node. */
#define SRNIC_MAX_GROUPS 64

/* The Ethernet address a multicast RDMA WRITE to group g goes to: the
 * broadcast address for group 0, else a locally administered group
 * address (03:53:52:4e:00:g, "SRN"). */
static inline void srnic_group_mac(uint8_t g, uint8_t mac[6])
{
	static const uint8_t base[6] = {0x03, 0x53, 0x52, 0x4e, 0x00, 0x00};

	if (g == 0) {
		memset(mac, 0xff, 6);
		return;
	}
	memcpy(mac, base, 6);
	mac[5] = g;
}

/* The Ethernet address of multicast group `id` (host order): for IPv4
 * 01:00:5e and the group's low 23 bits (RFC 1112), for IPv6 33:33 and its
 * low 32 bits (RFC 2464). */
static inline void srnic_mcast_mac(uint32_t id, bool ipv6, uint8_t mac[6])
{
	if (ipv6) {
		mac[0] = mac[1] = 0x33;
		mac[2] = id >> 24;
		mac[3] = id >> 16;
	} else {
		mac[0] = 0x01;
		mac[1] = 0x00;
		mac[2] = 0x5e;
		mac[3] = (id >> 16) & 0x7f;
	}
	mac[4] = id >> 8;
	mac[5] = id;
}

/* ACK syndromes. */
enum srnic_syndrome {
	SRNIC_ACK_OK = 0,
	SRNIC_NAK_RNR = 1,	   /* no receive WQE yet: retry after a delay */
	SRNIC_NAK_ACCESS = 2,	   /* bad key, bounds or rights */
	SRNIC_NAK_INVALID = 3,	   /* request the responder cannot execute */
	SRNIC_NAK_OPERATIONAL = 4, /* responder failed (e.g. receive too short) */
};

/* encap = udp: the paths between two nodes, which UDP source ports name
 * (SRNIC_UDP_SPORT0 + path, below) */
#define SRNIC_UDP_PATHS 8
/* A HELLO's path_loss byte for a path whose loss was not measured, and
 * its path_delay value (4 bits) for one whose delay was not: v from 1 to
 * 14 says 2^(v+3) to 2^(v+4) us more than the best path, 0 less than
 * 16 us more. */
#define SRNIC_PATH_LOSS_NONE 0xff
#define SRNIC_PATH_DELAY_NONE 15

/* One decoded packet.  Fields not used by an opcode are zero. */
struct srnic_pkt {
	uint8_t opcode;
	uint16_t flags;
	uint32_t dst_qpn;  /* message context at the receiver */
	uint32_t src_qpn;  /* message context at the sender */
	uint32_t src_inc;  /* sender's incarnation (random per node start) */
	uint32_t dst_inc;  /* incarnation of the receiver the sender knows */
	uint32_t msn;	   /* message sequence number; ACK: all below are done */
	/* data, READ request, READ response */
	uint32_t txid;	   /* transaction id: a retry carries a newer one */
	uint32_t ssn;	   /* receive sequence (SEND, WRITE with immediate) */
	uint32_t rkey;
	uint32_t imm;	   /* immediate data, kept in network order */
	uint32_t read_len; /* READ_REQ (in imm's place): bytes wanted from
			    * msg_off, 0 for all up to the end */
	uint64_t va;	   /* PVO: address of this packet's first byte;
			    * READ_REQ: of the READ's first byte */
	uint32_t msg_off;  /* offset of this packet's first byte in the message;
			    * READ_REQ: of the first byte wanted */
	uint32_t pkt_len;  /* payload bytes in this packet */
	uint32_t msg_len;  /* bytes in the whole message */
	uint8_t stride_shift; /* log2 of the sender's packet size for this
			       * message: every packet but the last carries
			       * exactly that many bytes */
	uint8_t xflags;	   /* SRNIC_X_*: a WRITE's or READ_REQ's
			    * SRNIC_X_NOTIFY, a SEND's or WRITE's
			    * SRNIC_X_ACK_REQ, else 0 */
	uint16_t ts;	   /* the sender's clock in µs (16 bits, never 0) when
			    * it sent this packet; 0: none */
	uint32_t ack_msn;  /* SRNIC_F_ACKS: every message the receiver sent
			    * below this is done at the sender (an ACK's
			    * msn, riding with the data) */
	uint32_t xrc_srqn; /* SRNIC_F_XRC: the receiver's XRC SRQ */
	/* TP_READ_REQ: the target node, its incarnation and its QP, the
	 * controller's QP (the message's context there), and the target's
	 * key and address of the message's first byte */
	uint32_t tp_ipv4;
	uint32_t tp_inc;
	uint32_t tp_qpn;
	uint32_t tp_ctl_qpn;
	uint32_t tp_rkey;
	uint64_t tp_va;
	/* UD_SEND (rkey and va are zero then) */
	uint32_t qkey;
	uint32_t src_ipv4;  /* the sending node, host order */
	uint32_t dst_ipv4;  /* the receiving node, or the multicast group's id
			     * (its IPv4 address, or an IPv6 group GID's low
			     * 32 bits) */
	/* ACK */
	uint8_t syndrome;
	uint8_t rnr_timer;  /* RNR NAK: the responder's min_rnr_timer code */
	uint16_t ts_echo;   /* ts of the newest data packet the responder took
			     * in just before this ACK (a round-trip sample) */
	uint32_t nak_msn;   /* NAK: the message it is about */
	uint32_t nak_txid;  /* ... and its attempt; an RC ACK that is no NAK,
			     * SRNIC_F_RECV_CQE: its receive credit */
	/* SACK: message sack_msn lacks packet sack_first and each packet
	 * sack_first + 1 + i whose bit i is set in sack_bits */
	uint32_t sack_msn;
	uint32_t sack_first;
	uint64_t sack_bits;
	/* Flow control: the requester may send new data packets of the QP
	 * while its running count of them is below this (credits). */
	uint32_t credit;
	/* control frames (HELLO, BYE, BYE_ACK, BOOTING, BOOT_ACK, RDMA_READY,
	 * SVC_ANNOUNCE, TPT_UPDATE, TPT_ACK) */
	uint32_t ipv4;	    /* node address, host order (an IPv6 node's: its
			     * node id, srnic_wire_ip6_id of ipv6) */
	uint8_t ipv6[16];   /* control frames: the sending node's IPv6
			     * address, all zero for an IPv4 node (the id
			     * alone cannot be turned back into it) */
	uint8_t port;	    /* sender's port index */
	uint8_t dev;	    /* HELLO: the verbs device (adapter) that port
			     * is of, of ndev the node has */
	uint8_t ndev;
	uint16_t hello_ms;  /* HELLO: the sender's next one comes within
			     * about this (0: it does not say) */
	uint8_t paths;	    /* HELLO to one UDP peer: bit k, the sender
			     * hears the peer's path k (0: not said) */
	/* HELLO (in the base header's QPNs, which a HELLO has none of): the
	 * share of the peer's frames each path k lost lately, in 256ths
	 * (SRNIC_PATH_LOSS_NONE: not measured); read only with paths */
	uint8_t path_loss[SRNIC_UDP_PATHS];
	/* ... (in dst_inc's place, 4 bits each: path k in byte k/2, the
	 * high half for even k) how much longer each path's frames took
	 * than the best path's lately (SRNIC_PATH_DELAY_NONE above) */
	uint8_t path_delay[SRNIC_UDP_PATHS];
	uint8_t node_mac[6];
	char node_name[16];
	uint8_t queues;	    /* HELLO: the node's steering classes (its
			     * queues setting; 0, an older node's: 1) */
	uint64_t groups;    /* HELLO: bit g, the node holds a region for
			     * multicast RDMA group g */
	/* SVC_ANNOUNCE: the service (its address), the sender's priority
	 * for it, and whether the sender holds it (at term msn) */
	uint32_t svc_ipv4;
	uint8_t svc_prio;
	uint8_t svc_holder; /* 1: holds it; SRNIC_SVC_RELEASED: held it at
			     * term msn and handed it over */
	uint8_t svc_mode;   /* SRNIC_SVC_GROUP or _SWITCH (srnic_config.h) */
	uint8_t svc_bound;  /* the holder's QPs bound to clients (255: more) */
	/* TPT_UPDATE: one published region (the table's tpt_index of
	 * tpt_count at generation tpt_gen); TPT_ACK: tpt_gen only */
	uint32_t tpt_gen;
	uint8_t tpt_index;
	uint8_t tpt_count;
	uint8_t tpt_access; /* the remote rights it grants (SRNIC_ACCESS_*) */
	uint32_t tpt_name;  /* the publisher's name for it, not 0 */
	uint32_t tpt_rkey;
	uint64_t tpt_addr;
	uint64_t tpt_length;
	uint8_t eth_src[6]; /* control frames: the sending port's MAC */
	const uint8_t *payload;
	const uint8_t *auth; /* SRNIC_F_AUTH: the MAC, right after the
			      * headers (srnic_wire_hlen bytes it covers) */
};

/* An RC ACK's receive credit (SRNIC_F_RECV_CQE on an ACK that is no NAK):
 * the receive number below which the responder's receive WQEs are
 * posted, in nak_txid's place, which only a NAK uses.  Whether pkt has
 * one, and it in *c.  (A responder on an SRQ sends none; nor did srnic
 * before commit e1a8102, whose requesters ignore it.) */
static inline bool srnic_ack_recv_credit(const struct srnic_pkt *pkt,
					 uint32_t *c)
{
	if (!(pkt->flags & SRNIC_F_RECV_CQE) || pkt->syndrome)
		return false;
	*c = pkt->nak_txid;
	return true;
}

static inline void srnic_ack_set_recv_credit(struct srnic_pkt *pkt,
					     uint32_t c)
{
	pkt->flags |= SRNIC_F_RECV_CQE;
	pkt->nak_txid = c;
}

static inline void srnic_put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static inline void srnic_put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static inline void srnic_put64(uint8_t *p, uint64_t v)
{
	srnic_put32(p, v >> 32);
	srnic_put32(p + 4, (uint32_t)v);
}

static inline uint16_t srnic_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t srnic_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t srnic_get64(const uint8_t *p)
{
	return (uint64_t)srnic_get32(p) << 32 | srnic_get32(p + 4);
}

/* The data extension's byte of further flags (+37; the base header's 16
 * are all taken).  SRNIC_X_NOTIFY, on every packet of an RC WRITE, or on
 * an RC READ_REQ: its target completes it too, without a receive WQE
 * (completion at both ends, include/srnic.h's SRNIC_SEND_REMOTE_NOTIFY;
 * a READ's once its requester says READ_DONE).  SRNIC_X_ACK_REQ, on a
 * SEND's or WRITE's packets: the requester asks for its ACK as soon as
 * the message (and every one before it) is done, not after the
 * responder's ACK delay; it may differ between a message's attempts.
 * Any other bit, or a flag on an opcode it is not for (NOTIFY on an
 * atomic write), makes the frame malformed. */
#define SRNIC_X_NOTIFY 0x01
#define SRNIC_X_ACK_REQ 0x02

/* Why srnic_wire_decode refused a frame. */
enum srnic_wire_err {
	SRNIC_WIRE_OK = 0,
	SRNIC_WIRE_NOT_OURS,	 /* other EtherType: not counted as malformed */
	SRNIC_WIRE_SHORT,	 /* shorter than its headers or payload */
	SRNIC_WIRE_BAD_VERSION,
	SRNIC_WIRE_BAD_OPCODE,
	SRNIC_WIRE_BAD_LENGTH,	 /* lengths and offsets that contradict */
	SRNIC_WIRE_BAD_CRC,	 /* the trailer does not match, or is missing
				  * where the port demands one */
	SRNIC_WIRE_BAD_IP,	 /* IPv4 and UDP to srnic's port, wrong: a
				  * checksum, a fragment, options, lengths */
	SRNIC_WIRE_BAD_ARP,	 /* ARP, not IPv4's over Ethernet or not from
				  * a host (srnic_wire_arp_decode) */
	SRNIC_WIRE_BAD_ND,	 /* an IPv6 neighbour solicitation or
				  * advertisement that RFC 4861 refuses, or
				  * not from a host (srnic_wire_nd_decode) */
};

/*
 * The opcode table: one entry per opcode byte, the single source of what
 * each opcode is.  The decoder, the encoder and the srnic_op_* predicates
 * below read it; docs/wire-protocol.md and tools/wireshark/srnic.lua
 * restate it, and tests/unit/test_wire_tables.c fails when they differ.
 * Bytes that are no opcode have an all-zero entry (SRNIC_EXT_NONE).
 */

/* The extension that follows an opcode's base header. */
enum srnic_ext {
	SRNIC_EXT_NONE = 0, /* not an opcode: the frame is malformed */
	SRNIC_EXT_DATA,	    /* SRNIC_DATA_XLEN bytes */
	SRNIC_EXT_ACK,	    /* SRNIC_ACK_XLEN bytes */
	SRNIC_EXT_HELLO,    /* SRNIC_HELLO_XLEN bytes: the control frames' */
};

/* Properties of an opcode (srnic_op_info.props). */
#define SRNIC_OPF_PAYLOAD 0x01 /* pkt_len bytes follow the headers */
#define SRNIC_OPF_CONTROL 0x02 /* node to node, no QP; may be signed */
#define SRNIC_OPF_XRC 0x04     /* an XRC QP's request: may be SRNIC_F_XRC */
#define SRNIC_OPF_GROUP 0x08   /* may be SRNIC_F_GROUP (but never with
				* any of the entry's group_not flags) */
#define SRNIC_OPF_SIGNED 0x10  /* under a cluster key, SRNIC_F_AUTH and its
				* MAC right after the headers, or dropped */
#define SRNIC_OPF_REQUEST 0x20 /* a requester's: may be SRNIC_F_ACKS */
#define SRNIC_OPF_REMOTE 0x40  /* names the responder's memory by rkey */
#define SRNIC_OPF_RD_ATOMIC 0x80 /* answered from the responder resources
				  * its QP granted (max_dest_rd_atomic) */
#define SRNIC_OPF_THIRD_PARTY 0x100 /* may be SRNIC_F_THIRD_PARTY */

/*
 * An opcode's rules beyond its header layout, checked once its headers are
 * decoded into pkt.  rest points right after the headers (XRC extension
 * included) and rest_len bytes remain before the trailer.
 */
typedef enum srnic_wire_err srnic_op_check_fn(struct srnic_pkt *pkt,
					      const uint8_t *rest,
					      uint32_t rest_len);

struct srnic_op_info {
	const char *name;	 /* as the docs and the dissector call it */
	srnic_op_check_fn *check;
	uint8_t ext;		 /* enum srnic_ext */
	uint8_t hlen;		 /* Ethernet, base header and extension */
	uint16_t props;		 /* SRNIC_OPF_* */
	uint16_t group_not;	 /* SRNIC_OPF_GROUP: flags never seen with
				  * SRNIC_F_GROUP */
};

/* Indexed by the opcode byte itself, so no lookup needs a bounds check. */
extern const struct srnic_op_info srnic_op_table[UINT8_MAX + 1];

static inline const struct srnic_op_info *srnic_op_entry(uint8_t op)
{
	return &srnic_op_table[op];
}

/* The opcode's name, "?" for a byte that is none. */
static inline const char *srnic_op_name(uint8_t op)
{
	return srnic_op_table[op].name ? srnic_op_table[op].name : "?";
}

static inline bool srnic_op_has_data_ext(uint8_t op)
{
	return srnic_op_table[op].ext == SRNIC_EXT_DATA;
}

/* What has the ACK extension: ACKs, and a service QP's resync. */
static inline bool srnic_op_ack_shaped(uint8_t op)
{
	return srnic_op_table[op].ext == SRNIC_EXT_ACK;
}

/* Control frames: node to node, no QP. */
static inline bool srnic_op_is_control(uint8_t op)
{
	return srnic_op_table[op].props & SRNIC_OPF_CONTROL;
}

/* What a node with a cluster key takes only with a valid MAC: the control
 * frames, and a service QP's resync, which binds a QP to its sender. */
static inline bool srnic_op_signed(uint8_t op)
{
	return srnic_op_table[op].props & SRNIC_OPF_SIGNED;
}

static inline bool srnic_op_carries_payload(uint8_t op)
{
	return srnic_op_table[op].props & SRNIC_OPF_PAYLOAD;
}

/* Requests that name the responder's memory by rkey and va. */
static inline bool srnic_op_remote(uint8_t op)
{
	return srnic_op_table[op].props & SRNIC_OPF_REMOTE;
}

/* Requests the responder answers from its READ and atomic resources. */
static inline bool srnic_op_rd_atomic(uint8_t op)
{
	return srnic_op_table[op].props & SRNIC_OPF_RD_ATOMIC;
}

/* Requests that ask for a range (read_len in imm's place). */
static inline bool srnic_op_asks(uint8_t op)
{
	return op == SRNIC_OP_READ_REQ || op == SRNIC_OP_TP_READ_REQ;
}

/* The requests an XRC QP sends, which carry the XRC extension. */
static inline bool srnic_op_xrc(uint8_t op)
{
	return srnic_op_table[op].props & SRNIC_OPF_XRC;
}

/* The opcode of a frame of ours without decoding it (0: not ours, or too
 * short to say). */
static inline uint8_t srnic_wire_peek_opcode(const uint8_t *buf, uint32_t len)
{
	if (len < SRNIC_ETH_HLEN + SRNIC_BASE_HLEN ||
	    (uint16_t)(buf[12] << 8 | buf[13]) != SRNIC_ETHERTYPE)
		return 0;
	return buf[SRNIC_ETH_HLEN + 1];
}

/* Header bytes (Ethernet included) a packet of this opcode needs, without
 * the XRC extension (srnic_wire_pkt_hlen); 0 for a byte that is no
 * opcode. */
static inline unsigned srnic_wire_hlen(uint8_t op)
{
	return srnic_op_table[op].hlen;
}

/* Header bytes of pkt itself: with its XRC extension, if it has one. */
static inline unsigned srnic_wire_pkt_hlen(const struct srnic_pkt *pkt)
{
	return srnic_wire_hlen(pkt->opcode) +
	       ((pkt->flags & SRNIC_F_XRC) ? SRNIC_XRC_XLEN : 0);
}

/*
 * Write Ethernet and srnic headers for pkt at buf.  buf must have
 * srnic_wire_pkt_hlen(pkt) bytes; the payload goes right after.
 * Returns the header length.
 */
unsigned srnic_wire_encode(uint8_t *buf, const uint8_t dst_mac[6],
			   const uint8_t src_mac[6],
			   const struct srnic_pkt *pkt);

/*
 * Decode a contiguous frame of len bytes.  Everything is checked that can be
 * checked without state: sizes, opcode, that the payload fits the frame and
 * the message (msg_off + pkt_len <= msg_len, no wrap).  pkt->payload points
 * into buf.  A frame flagged SRNIC_F_CRC is decoded without its trailer;
 * the trailer itself is srnic_wire_check_crc's (call it first).  The
 * checks, in order: the frame (EtherType, version), the opcode
 * (srnic_op_table), the flags the opcode may carry, the header lengths,
 * then the opcode's own rules (srnic_op_info.check).
 */
enum srnic_wire_err srnic_wire_decode(const uint8_t *buf, uint32_t len,
				      struct srnic_pkt *pkt);

/*
 * CRC-32C of len bytes at buf, going on from crc (0 to start): chain calls
 * over the pieces of a frame.  ISA-L's crc32_iscsi, at memory speed.
 */
uint32_t srnic_wire_crc(const void *buf, uint32_t len, uint32_t crc);

/* Flag a finished contiguous frame of len bytes as carrying a CRC and
 * write it into its last SRNIC_CRC_LEN bytes (kept free for it); `udp`:
 * a UDP node's, the Ethernet addresses read as zero. */
void srnic_wire_seal(uint8_t *buf, uint32_t len, bool udp);

/* Set flags in an encoded frame's base header (what the port adds, as
 * SRNIC_F_CRC, before anything is computed over the header). */
void srnic_wire_add_flags(uint8_t *buf, uint16_t flags);

/*
 * The receiving side of srnic_wire_seal, before anything of the frame is
 * believed: SRNIC_WIRE_BAD_CRC for a frame of ours whose trailer does not
 * match, or that has none while `required` (a flipped flag bit must not
 * switch the check off); SRNIC_WIRE_OK otherwise, frames not ours and too
 * short to be ours included (srnic_wire_decode sorts those out).
 */
enum srnic_wire_err srnic_wire_check_crc(const uint8_t *buf, uint32_t len,
					 bool required, bool udp);

/*
 * The cluster key's MAC on a control frame flagged SRNIC_F_AUTH: sign
 * writes it after the headers of the encoded frame at buf (room kept for
 * it); auth_ok checks a decoded one (false when it has none).  Only the
 * headers are covered: control frames carry nothing else, and the
 * incarnations in them are what keeps a copy from being replayed to
 * another process (docs/reliability.md).
 */
#define SRNIC_KEY_LEN 32
#define SRNIC_KEY_ID_LEN 16
void srnic_wire_sign(uint8_t *buf, const uint8_t key[SRNIC_KEY_LEN],
		     bool udp);
/* A cluster key's fingerprint: tells whether two holders have the same
 * key without showing it (srnicd's attach answer carries its node's). */
void srnic_wire_key_id(const uint8_t key[SRNIC_KEY_LEN],
		       uint8_t id[SRNIC_KEY_ID_LEN]);
bool srnic_wire_auth_ok(const uint8_t *buf, const struct srnic_pkt *pkt,
			const uint8_t key[SRNIC_KEY_LEN], bool udp);

/*
 * UDP/IP encapsulation, on a contiguous first buffer.  wrap: frame holds
 * SRNIC_UDP_HLEN free bytes and then a raw frame, len bytes in all; the
 * raw frame's Ethernet addresses move to the front and the IPv4 and UDP
 * headers follow them (from src_ip to dst_ip, host order, at UDP port
 * `port`; the source port names the path, SRNIC_UDP_SPORT0 + path, which
 * an ECMP hash sends its own way).  unwrap: the other way, for a frame of
 * len bytes from a port: SRNIC_WIRE_NOT_OURS for anything that is not
 * IPv4 and UDP to `port` at my_ip, the limited broadcast or a multicast
 * group (left as it was), SRNIC_WIRE_BAD_IP for one to `port` whose
 * headers are wrong or whose source no node could have; OK with the raw
 * frame, h->raw_len bytes without the Ethernet padding, at frame +
 * SRNIC_UDP_HLEN, its sender's address and path in *h (path
 * SRNIC_UDP_NO_PATH when the source port names none), and whether it was
 * sent to my_ip alone.
 */
#define SRNIC_UDP_SPORT0 49152
#define SRNIC_UDP_NO_PATH 0xff
struct srnic_udp_rx {
	uint32_t raw_len;
	uint32_t src_ip;	/* the sender's address; an IPv6 one's id */
	uint16_t seq;	/* the IPv4 identification (IPv6: the shim's number):
			 * the path's count */
	uint8_t path;
	uint8_t to_me;	/* to my_ip (not a broadcast or a group) */
	uint8_t src6[16];	/* the IPv6 sender's address: written by
				 * srnic_wire_udp6_unwrap only (the IPv4
				 * unwrap leaves it as it was) */
};
/* seq goes in the IPv4 identification field (free for srnic's use: every
 * frame is sent with DF and never fragmented): the sender counts its
 * frames to each peer on each path there, so that the receiver can tell
 * how many each path lost (0: not counted).  number: a wrapped frame
 * sent with seq 0 gets its number (the header checksum mended), as it
 * goes out; seq: its number so far (0: none yet); dst: the node it goes
 * to (host order). */
void srnic_wire_udp_wrap(uint8_t *frame, uint32_t len, uint32_t src_ip,
			 uint32_t dst_ip, uint16_t port, unsigned path,
			 uint16_t seq);
void srnic_wire_udp_number(uint8_t *frame, uint16_t seq);
uint16_t srnic_wire_udp_seq(const uint8_t *frame);
uint32_t srnic_wire_udp_dst(const uint8_t *frame);

/* The QP number a raw frame of our own making is for, read at transmit to
 * pick its steering queue (port/steer.c); false for a control frame (the
 * node's, no QP's). */
bool srnic_wire_frame_qpn(const uint8_t *frame, uint32_t len, uint32_t *qpn);
/* ... and of one a UDP node wrapped (srnic_wire_udp_wrap): false for a
 * control frame, and for anything not IPv4 and UDP without options (ARP) */
bool srnic_wire_udp_frame_qpn(const uint8_t *frame, uint32_t len,
			      uint32_t *qpn);
enum srnic_wire_err srnic_wire_udp_unwrap(uint8_t *frame, uint32_t len,
					  uint32_t my_ip, uint16_t port,
					  struct srnic_udp_rx *h);

/*
 * Inside a UDP node a peer's port is named by an Ethernet address made of
 * the peer's IPv4 address: 06:53 (local, unicast) and its four bytes.  The
 * ports write it as the source of every frame they strip, and read the
 * destination's address back from it as they wrap: across a router a
 * frame's Ethernet addresses are the hops', and say nothing of the node
 * that sent it.
 */
#define SRNIC_IPMAC_0 0x06
#define SRNIC_IPMAC_1 0x53
static inline void srnic_wire_ip_mac(uint32_t ip, uint8_t mac[6])
{
	mac[0] = SRNIC_IPMAC_0;
	mac[1] = SRNIC_IPMAC_1;
	srnic_put32(mac + 2, ip);
}
/* The address such an Ethernet address names, or 0 for any other. */
static inline uint32_t srnic_wire_mac_ip(const uint8_t mac[6])
{
	return mac[0] == SRNIC_IPMAC_0 && mac[1] == SRNIC_IPMAC_1
		       ? srnic_get32(mac + 2)
		       : 0;
}

/*
 * ARP for IPv4 over Ethernet (RFC 826): a UDP node's control core answers
 * it for the node's address and asks it of the next hops it sends to.  The
 * frame is the Ethernet header and 28 bytes (padded to Ethernet's 60 by
 * encode).  decode: SRNIC_WIRE_NOT_OURS for another EtherType,
 * SRNIC_WIRE_BAD_ARP for ARP that is not an IPv4-over-Ethernet request
 * or reply, or whose sender no host could be (a group or zero Ethernet
 * address, a broadcast or multicast IPv4 one; 0.0.0.0 is a probe's).
 */
#define SRNIC_ETHERTYPE_ARP 0x0806
#define SRNIC_ETHERTYPE_IPV4 0x0800
#define SRNIC_ARP_FRAME 60
#define SRNIC_ARP_REQUEST 1
#define SRNIC_ARP_REPLY 2
struct srnic_arp {
	uint16_t op;
	uint8_t sha[6];		/* sender's hardware and protocol address */
	uint32_t spa;
	uint8_t tha[6];		/* target's */
	uint32_t tpa;
};
enum srnic_wire_err srnic_wire_arp_decode(const uint8_t *frame, uint32_t len,
					  struct srnic_arp *arp);
/* Whether a frame of len bytes is ARP by its EtherType (what a UDP node's
 * ports hand to its control core, which decodes it). */
static inline bool srnic_wire_is_arp(const uint8_t *frame, uint32_t len)
{
	return len >= SRNIC_ETH_HLEN &&
	       srnic_get16(frame + 12) == SRNIC_ETHERTYPE_ARP;
}
/* SRNIC_ARP_FRAME bytes into frame: eth_dst, eth_src, then arp. */
void srnic_wire_arp_encode(uint8_t *frame, const uint8_t eth_dst[6],
			   const uint8_t eth_src[6],
			   const struct srnic_arp *arp);
/* The IPv4 address a UDP node sends a frame to Ethernet address mac on
 * its segment when no peer has it: a group address (broadcast,
 * multicast: HELLOs, multicast WRITEs and datagrams) goes to the limited
 * broadcast 255.255.255.255, which no router forwards. */
#define SRNIC_IPV4_BROADCAST 0xFFFFFFFFu

/*
 * UDP over IPv6 (an IPv6 node's `encap = udp`): as above, with an IPv6
 * header (40 bytes: traffic class and flow label 0, next header UDP
 * itself, hop limit 64) in IPv4's place, EtherType 0x86DD, and a 4-byte
 * shim after the UDP header: the frame's number on its path (what IPv4's
 * identification carries; IPv6 has no such field, and the flow label
 * must not carry it: it must stay the same for every packet of a flow,
 * or an ECMP hash that reads it would spread one path over many links)
 * and 2 bytes zero.  Then the raw frame's base header, at 66.
 *
 * IPv6 makes the UDP checksum mandatory (RFC 8200, 8.1): wrap computes
 * it over the pseudo-header and the whole datagram, and sends a computed
 * 0 as 0xFFFF; unwrap refuses a 0 or a wrong one.  The CRC trailer and
 * MAC are still what a UDP node's are, over the raw frame.
 *
 * The functions are the IPv4 ones' (above), with 16-byte addresses:
 * wrap takes SRNIC_UDP6_HLEN free bytes then the raw frame; unwrap is
 * NOT_OURS for anything not IPv6 with next header UDP to `port` at my_ip
 * or a multicast address (ff00::/8), BAD_IP for one to `port` whose
 * lengths or checksum are wrong or whose source no node could have (::,
 * ::1, multicast, IPv4-mapped ::ffff:0:0/96), and OK with the raw frame
 * at frame + SRNIC_UDP6_HLEN, h->src_ip the source's node id
 * (srnic_wire_ip6_id) and h->src6 the source itself.  No extension
 * header is read: srnic's own frames carry none, and a frame that has
 * one (next header not UDP) is NOT_OURS even when it was for our port,
 * which only the chain behind it would say.  number writes the number
 * into the shim of a frame wrapped with 0 and mends the UDP checksum
 * (RFC 1624), a 0 still going as 0xFFFF; udp6_dst points into the
 * frame, at the destination's 16 bytes.
 */
#define SRNIC_ETHERTYPE_IPV6 0x86DD
void srnic_wire_udp6_wrap(uint8_t *frame, uint32_t len, const uint8_t src[16],
			  const uint8_t dst[16], uint16_t port, unsigned path,
			  uint16_t seq);
void srnic_wire_udp6_number(uint8_t *frame, uint16_t seq);
uint16_t srnic_wire_udp6_seq(const uint8_t *frame);
const uint8_t *srnic_wire_udp6_dst(const uint8_t *frame);
bool srnic_wire_udp6_frame_qpn(const uint8_t *frame, uint32_t len,
			       uint32_t *qpn);
enum srnic_wire_err srnic_wire_udp6_unwrap(uint8_t *frame, uint32_t len,
					   const uint8_t my_ip[16],
					   uint16_t port,
					   struct srnic_udp_rx *h);

/*
 * The node id of an IPv6 node: the 32 bits srnic names every node by
 * (an IPv4 node's is its address; HELLOs, peers, UD's addresses, the
 * Ethernet address srnic_wire_ip_mac makes of it).  0xF0000000 and 28
 * bits of a hash of all 16 bytes (FNV-1a, then a final mix so that every
 * byte moves every bit, and addresses that differ only in their prefix
 * or their last byte still differ), 0xFFFFFFFE in place of 0xFFFFFFFF.
 * So an id is in IPv4's class E, 240/4, which no IPv4 node can have
 * (reserved, never assigned): never an IPv4 node's address, never a
 * multicast group's id (224/4, which srnic reads as one), never 0 (no
 * node) and never the broadcast SRNIC_IPV4_BROADCAST.  28 bits make two
 * nodes of n share an id with a chance of about n^2 / 2^29 (0.2% for a
 * thousand): the control extension carries the whole address too
 * (srnic_pkt.ipv6), by which a clash can be told.
 */
uint32_t srnic_wire_ip6_id(const uint8_t a[16]);

/* What a UDP IPv6 node sends HELLOs and frames to Ethernet group
 * addresses to on its own segment, as an IPv4 node the limited
 * broadcast: the all-nodes group ff02::1 (link scope: no router
 * forwards it), whose Ethernet address is 33:33:00:00:00:01
 * (srnic_mcast_mac(1, true, mac)). */
extern const uint8_t srnic_ip6_all_nodes[16];

/*
 * IPv6 neighbour discovery (RFC 4861), what ARP is to an IPv4 node: a
 * UDP IPv6 node's control core answers Neighbor Solicitations for the
 * node's address and solicits the next hops it sends to.  A message is
 * ICMPv6 right after the IPv6 header (hop limit 255: a router would have
 * lowered it, so it came from this link), 24 bytes (type, code 0,
 * checksum, NA's flags, target) and options; encode writes at most one,
 * the link-layer address.  decode: SRNIC_WIRE_NOT_OURS for another
 * EtherType, anything but ICMPv6 right after the IPv6 header, and any
 * other ICMPv6 message (router advertisements, MLD, echo: not srnic's
 * to answer); SRNIC_WIRE_BAD_ND for a solicitation or advertisement
 * that is short, not of hop limit 255 or code 0, of a wrong checksum,
 * about a multicast target, from a multicast address, with an option
 * of length 0 or past the message, or whose link-layer address is no
 * Ethernet host's (another length, a group or zero address).  Unknown
 * options are passed over, and of the link-layer address the message
 * carries (NS: the source's, NA: the target's) the first counts.  A
 * solicitation from :: is a duplicate address detection probe's.
 */
#define SRNIC_ND_SOLICIT 135
#define SRNIC_ND_ADVERT 136
#define SRNIC_ND_FRAME 86	/* 14 + 40 + 24 + 8 (one link-layer address
				 * option); 78 without it */
/* NA's flags */
#define SRNIC_ND_F_ROUTER 0x80
#define SRNIC_ND_F_SOLICITED 0x40
#define SRNIC_ND_F_OVERRIDE 0x20
struct srnic_nd {
	uint8_t type;		/* SRNIC_ND_SOLICIT or _ADVERT */
	uint8_t flags;		/* NA: R 0x80, S 0x40, O 0x20 (the byte after
				 * the checksum); NS: 0 */
	uint8_t src[16], dst[16];	/* the IPv6 header's addresses */
	uint8_t target[16];
	uint8_t lladdr[6];	/* NS: source link-layer address option;
				 * NA: target link-layer address option */
	uint8_t has_lladdr;
};
enum srnic_wire_err srnic_wire_nd_decode(const uint8_t *frame, uint32_t len,
					 struct srnic_nd *nd);
/* The frame into frame (SRNIC_ND_FRAME bytes of room): eth_dst, eth_src,
 * then nd; returns its length, SRNIC_ND_FRAME with the option, 78
 * without. */
uint32_t srnic_wire_nd_encode(uint8_t *frame, const uint8_t eth_dst[6],
			      const uint8_t eth_src[6],
			      const struct srnic_nd *nd);
/* Whether a frame of len bytes is ICMPv6 (EtherType 0x86DD, version 6,
 * next header 58, or a hop-by-hop header whose next is 58: MLD's): what
 * a UDP IPv6 node's ports hand to its control core, which decodes it. */
static inline bool srnic_wire_is_icmp6(const uint8_t *frame, uint32_t len)
{
	return len >= SRNIC_ETH_HLEN + 40 &&
	       srnic_get16(frame + 12) == SRNIC_ETHERTYPE_IPV6 &&
	       frame[SRNIC_ETH_HLEN] >> 4 == 6 &&
	       (frame[SRNIC_ETH_HLEN + 6] == 58 ||
		(frame[SRNIC_ETH_HLEN + 6] == 0 &&
		 len >= SRNIC_ETH_HLEN + 48 &&
		 frame[SRNIC_ETH_HLEN + 40] == 58));
}
/* The solicited-node group of target, ff02::1:ffXX:XXXX of its last 24
 * bits, where a solicitation for it goes, and that group's Ethernet
 * address 33:33:ff:XX:XX:XX. */
void srnic_wire_nd_solicited_node(const uint8_t target[16], uint8_t group[16],
				  uint8_t mac[6]);

/*
 * Multicast Listener Discovery (MLDv2, RFC 3810), which a switch that
 * snoops it needs to pass the solicitations for a node's address to its
 * port: the node reports its solicited-node group, unasked as it starts
 * and when a querier asks.  Both ride in IPv6 with a hop-by-hop header
 * (the router alert option) before the ICMPv6 message, hop limit 1.
 *
 * srnic_wire_mld_decode takes a Multicast Listener Query (MLDv1's 24
 * bytes or MLDv2's 28 and more) into q: SRNIC_WIRE_NOT_OURS for any other
 * frame, MLD's reports among them (srnic_wire_is_icmp6 tells both
 * kinds); SRNIC_WIRE_BAD_ND for a query that is short or of another
 * length, not of hop limit 1 or code 0, of a wrong checksum, or not from
 * a link-local address (RFC 3810, 5.1.14: only a router of the link
 * asks), or a hop-by-hop header that runs past the payload.  An MLDv1
 * querier (its query 24 bytes: q->v1) is answered in MLDv1 (RFC 3810,
 * 8.2.1: its routers and switches may read nothing else).
 */
#define SRNIC_MLD_QUERY 130
#define SRNIC_MLD_REPORT 143		/* MLDv2's */
#define SRNIC_MLD1_REPORT 131		/* MLDv1's (RFC 2710) */
#define SRNIC_MLD_IS_EXCLUDE 2		/* a record: answering a query */
#define SRNIC_MLD_TO_EXCLUDE 4		/* ... joining, unasked */
#define SRNIC_MLD_FRAME 90	/* 14 + 40 + 8 (hop-by-hop) + 8 + one
				 * record of 20 */
#define SRNIC_MLD1_FRAME 86	/* 14 + 40 + 8 + MLDv1's 24 */
struct srnic_mld_query {
	uint8_t src[16];	/* the querier (link-local) */
	uint8_t group[16];	/* the group asked about, :: for all */
	uint32_t max_delay_ms;	/* answer within this */
	uint32_t v1;		/* an MLDv1 query: answer in MLDv1 */
};
enum srnic_wire_err srnic_wire_mld_decode(const uint8_t *frame, uint32_t len,
					  struct srnic_mld_query *q);
/* A report of one group into frame (SRNIC_MLD_FRAME bytes of room), from
 * eth_src and the link-local src to ff02::16 (every MLDv2 router), its
 * record of record_type (SRNIC_MLD_IS_EXCLUDE or _TO_EXCLUDE: listening
 * to every source); returns SRNIC_MLD_FRAME. */
uint32_t srnic_wire_mld_report_encode(uint8_t *frame, const uint8_t eth_src[6],
				      const uint8_t src[16],
				      const uint8_t group[16],
				      uint8_t record_type);
/* An MLDv1 report of group into frame (SRNIC_MLD1_FRAME bytes of room),
 * from eth_src and the link-local src to the group itself; returns
 * SRNIC_MLD1_FRAME. */
uint32_t srnic_wire_mld1_report_encode(uint8_t *frame,
				       const uint8_t eth_src[6],
				       const uint8_t src[16],
				       const uint8_t group[16]);
/* The link-local address fe80::/64 of an Ethernet address (its modified
 * EUI-64, RFC 4291 2.5.1): what a port's MLD reports come from. */
void srnic_wire_ip6_link_local(const uint8_t mac[6], uint8_t ip[16]);

/* Largest message srnic moves: verbs' 2 GiB limit for one work request. */
#define SRNIC_MAX_MSG_LEN (1u << 31)
#define SRNIC_MIN_STRIDE_SHIFT 8  /* 256 B, verbs' smallest path MTU */
#define SRNIC_MAX_STRIDE_SHIFT 14 /* 16 KiB */

#endif
