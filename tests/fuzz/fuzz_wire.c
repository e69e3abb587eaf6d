/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for srnic_wire_decode: every frame off the wire goes through
 * it before anything else looks at the bytes, so it must refuse garbage
 * without reading past the frame, and whatever it accepts must be a packet
 * the engine can trust (see wire_oracle.h for what that means).  A UDP
 * node's ports read a frame first with the IPv4 or IPv6 unwrap, ARP's or
 * NDP's decoder: those too, on every input.
 *
 * Two builds of this file:
 *
 *   fuzz_wire         libFuzzer, clang only (tests/fuzz/run-fuzz.sh)
 *   test_wire_corpus  -DSRNIC_FUZZ_STANDALONE: a plain program any compiler
 *                     builds, so a gcc CI run still covers the parser.
 *
 *     test_wire_corpus [--count N] [--seed S]
 *         a deterministic corpus of N (200000) mutated valid frames
 *     test_wire_corpus FILE...
 *         the given inputs, e.g. a libFuzzer crash artifact
 *     test_wire_corpus --write-seeds DIR
 *         valid frames of every opcode, as a libFuzzer seed corpus
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "wire_oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum srnic_wire_err err;
	const char *bad;

	/* The engine never sees more than a jumbo frame; uint32_t is what
	 * the decoder takes. */
	if (size > UINT32_MAX)
		return 0;
	bad = wire_oracle(data, (uint32_t)size, &err);
	if (bad) {
		fprintf(stderr, "fuzz_wire: %s\n", bad);
		wire_hexdump(stderr, data, (uint32_t)size);
		abort();
	}
	return 0;
}

#ifdef SRNIC_FUZZ_STANDALONE

#include <errno.h>
#include <sys/stat.h>

#include "check.h"

#define DEFAULT_COUNT 200000
#define DEFAULT_SEED 0x5352e1c0ffee2024ull
#define MAX_FRAME (SRNIC_MAX_HLEN + (1u << SRNIC_MAX_STRIDE_SHIFT) + 256)

static uint64_t rng_state;

/* splitmix64: tiny, and the same sequence with every compiler and libc,
 * which is what makes the corpus replayable from a seed. */
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rnd_below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

/* Values that sit on the edges the decoder tests against. */
static uint32_t interesting32(uint32_t cur)
{
	static const uint32_t v[] = {
		0, 1, 2, 0xff, 0x100, 0x101, 0x3fff, 0x4000, 0x4001,
		0x7fffffff, 0x80000000, 0x80000001, 0xfffffeff, 0xffffff00,
		0xffffffff,
	};
	uint32_t k = rnd_below(sizeof(v) / sizeof(v[0]) + 4);

	switch ((int)k - (int)(sizeof(v) / sizeof(v[0]))) {
	case 0:
		return cur + 1;
	case 1:
		return cur - 1;
	case 2:
		return cur + 256;
	case 3:
		return cur ^ (1u << rnd_below(32));
	default:
		return v[k];
	}
}

/* A random IPv6 address, fd00::/8 (a node's) most of the time. */
static void random_ip6(uint8_t a[16])
{
	unsigned i;

	for (i = 0; i < 16; i++)
		a[i] = (uint8_t)rnd();
	if (rnd_below(4))
		a[0] = 0xfd;
}

/* A control frame's node: an IPv4 one (no IPv6 address), or an IPv6 one
 * (its address, and the id made of it). */
static void random_node(struct srnic_pkt *p)
{
	p->ipv4 = (uint32_t)rnd();
	if (rnd_below(2))
		return;
	random_ip6(p->ipv6);
	p->ipv4 = srnic_wire_ip6_id(p->ipv6);
}

/* A valid packet with random contents; its payload goes to pay. */
static void random_pkt(struct srnic_pkt *p, uint8_t *pay)
{
	uint32_t stride, npkts, i, n;

	memset(p, 0, sizeof(*p));
	p->opcode = 1 + rnd_below(SRNIC_OP_MAX - 1);
	p->flags = (uint16_t)rnd();
	if (!srnic_op_xrc(p->opcode))
		p->flags &= ~SRNIC_F_XRC;
	else if (p->flags & SRNIC_F_XRC)
		p->xrc_srqn = (uint32_t)rnd();
	/* (the requests are the XRC opcodes, and only they carry an ACK) */
	if (!srnic_op_xrc(p->opcode))
		p->flags &= ~SRNIC_F_ACKS;
	else if (p->flags & SRNIC_F_ACKS)
		p->ack_msn = (uint32_t)rnd();
	/* The third-party flag: a WRITE's or an ACK's. */
	if (p->opcode != SRNIC_OP_WRITE && p->opcode != SRNIC_OP_ACK)
		p->flags &= ~SRNIC_F_THIRD_PARTY;
	/* The group flag: an ACK's, or a plain WRITE's (which then carries
	 * nothing else of a request's). */
	if ((p->flags & SRNIC_F_GROUP) && p->opcode == SRNIC_OP_WRITE) {
		p->flags &= ~SRNIC_F_GROUP_NOT;
		p->xrc_srqn = 0;
		p->ack_msn = 0;
	} else if (p->opcode != SRNIC_OP_ACK) {
		p->flags &= ~SRNIC_F_GROUP;
	}
	p->dst_qpn = (uint32_t)rnd();
	p->src_qpn = (uint32_t)rnd();
	p->src_inc = (uint32_t)rnd();
	p->dst_inc = (uint32_t)rnd();
	p->msn = (uint32_t)rnd();

	if (srnic_op_has_data_ext(p->opcode)) {
		p->txid = (uint32_t)rnd();
		p->ssn = (uint32_t)rnd();
		p->rkey = (uint32_t)rnd();
		p->imm = (uint32_t)rnd();
		p->va = rnd();
		p->stride_shift = SRNIC_MIN_STRIDE_SHIFT +
				  rnd_below(SRNIC_MAX_STRIDE_SHIFT -
					    SRNIC_MIN_STRIDE_SHIFT + 1);
		if ((p->opcode == SRNIC_OP_WRITE &&
		     !(p->flags & SRNIC_F_ATOMIC_WR)) ||
		    p->opcode == SRNIC_OP_READ_REQ)
			p->xflags = (uint8_t)rnd_below(2);	/* NOTIFY */
		if (p->opcode == SRNIC_OP_WRITE || p->opcode == SRNIC_OP_SEND)
			p->xflags |= rnd_below(2) ? SRNIC_X_ACK_REQ : 0;
		stride = 1u << p->stride_shift;
		/* Lengths around stride multiples and the 2 GiB limit are
		 * where the arithmetic can go wrong. */
		switch (rnd_below(6)) {
		case 0:
			p->msg_len = 0;
			break;
		case 1:
			p->msg_len = 1 + rnd_below(stride);
			break;
		case 2:
			p->msg_len = stride * (1 + rnd_below(64));
			break;
		case 3:
			p->msg_len = stride * (1 + rnd_below(64)) + 1;
			break;
		case 4:
			p->msg_len = SRNIC_MAX_MSG_LEN - rnd_below(2 * stride);
			break;
		default:
			p->msg_len = 1 + rnd_below(SRNIC_MAX_MSG_LEN);
			break;
		}
		npkts = p->msg_len ? (uint32_t)(((uint64_t)p->msg_len +
						 stride - 1) >>
						p->stride_shift)
				   : 1;
		if (p->opcode == SRNIC_OP_ATOMIC_REQ) {
			/* Two operands on 8 aligned bytes. */
			p->msg_len = SRNIC_ATOMIC_LEN;
			p->pkt_len = SRNIC_ATOMIC_PAYLOAD;
			p->va &= ~7ull;
			for (i = 0; i < p->pkt_len; i++)
				pay[i] = (uint8_t)rnd();
			p->payload = pay;
			return;
		}
		if (p->opcode == SRNIC_OP_WRITE &&
		    (p->flags & SRNIC_F_ATOMIC_WR)) {
			/* An atomic write: one packet, 8 aligned bytes. */
			p->msg_len = p->pkt_len = SRNIC_ATOMIC_LEN;
			p->va = (p->va >> 1) & ~7ull;
			for (i = 0; i < p->pkt_len; i++)
				pay[i] = (uint8_t)rnd();
			p->payload = pay;
			return;
		}
		if (p->opcode == SRNIC_OP_UD_SEND) {
			/* A datagram: one packet, the whole message, and the
			 * Q_Key and addresses in the rkey and va slots. */
			p->rkey = 0;
			p->va = 0;
			p->qkey = (uint32_t)rnd();
			p->src_ipv4 = (uint32_t)rnd();
			p->dst_ipv4 = (uint32_t)rnd();
			p->msg_len = p->pkt_len = rnd_below(stride + 1);
			for (i = 0; i < p->pkt_len; i++)
				pay[i] = (uint8_t)rnd();
			p->payload = pay;
			return;
		}
		if (srnic_op_asks(p->opcode)) {
			/* The request names the whole remote range, and the
			 * part of it wanted: from a packet boundary, all of
			 * the rest (read_len 0) or some of it; a third-party
			 * one, where it goes too. */
			p->imm = 0;
			if (p->va + p->msg_len < p->va)
				p->va >>= 1;
			if (p->opcode == SRNIC_OP_TP_READ_REQ) {
				p->tp_ipv4 = (uint32_t)rnd();
				p->tp_inc = (uint32_t)rnd();
				p->tp_qpn = (uint32_t)rnd();
				p->tp_ctl_qpn = (uint32_t)rnd();
				p->tp_rkey = (uint32_t)rnd();
				p->tp_va = rnd() >> 1;
			}
			if (rnd_below(2)) {
				p->msg_off = rnd_below(npkts) << p->stride_shift;
				p->read_len = rnd_below(p->msg_len -
							p->msg_off + 1);
			}
			return;
		}
		/* The last packet is the odd one: pick it often. */
		i = rnd_below(3) ? rnd_below(npkts) : npkts - 1;
		p->msg_off = i << p->stride_shift;
		p->pkt_len = p->msg_len - p->msg_off < stride
				     ? p->msg_len - p->msg_off
				     : stride;
		if (p->va + p->pkt_len < p->va)
			p->va >>= 1;
		for (i = 0; i < p->pkt_len; i++)
			pay[i] = (uint8_t)rnd();
		p->payload = pay;
	} else if (srnic_op_ack_shaped(p->opcode)) {
		p->syndrome = p->opcode == SRNIC_OP_READ_DONE ||
					      p->opcode == SRNIC_OP_READ_DONE_ACK
				      ? SRNIC_ACK_OK
				      : rnd_below(SRNIC_NAK_OPERATIONAL + 1);
		p->rnr_timer = rnd_below(32);
		p->nak_msn = (uint32_t)rnd();
		p->nak_txid = (uint32_t)rnd();
	} else if (p->opcode == SRNIC_OP_TPT_UPDATE ||
		   p->opcode == SRNIC_OP_TPT_ACK) {
		/* a published region: entry index of count (count 0: none) */
		random_node(p);
		p->port = (uint8_t)rnd();
		p->tpt_gen = (uint32_t)rnd();
		p->tpt_count = rnd_below(SRNIC_TPT_MAX + 1);
		if (p->tpt_count) {
			p->tpt_index = rnd_below(p->tpt_count);
			p->tpt_access = 2 << rnd_below(3);
			p->tpt_name = (uint32_t)rnd() | 1;
			p->tpt_rkey = (uint32_t)rnd();
			p->tpt_addr = rnd() >> 1;
			p->tpt_length = rnd() >> 1;
		}
	} else {
		random_node(p);
		p->port = (uint8_t)rnd();
		for (i = 0; i < 6; i++)
			p->node_mac[i] = (uint8_t)rnd();
		n = rnd_below(sizeof(p->node_name));
		for (i = 0; i < n; i++)
			p->node_name[i] = 'a' + rnd_below(26);
		if (p->opcode == SRNIC_OP_SVC_ANNOUNCE) {
			p->svc_ipv4 = (uint32_t)rnd();
			p->svc_prio = (uint8_t)rnd();
			p->svc_holder = (uint8_t)rnd();
			p->svc_mode = (uint8_t)rnd();
			p->svc_bound = (uint8_t)rnd();
		} else {
			p->groups = rnd();
		}
		p->dev = (uint8_t)rnd();
		p->ndev = (uint8_t)rnd();
		if (p->opcode == SRNIC_OP_HELLO) {
			p->hello_ms = (uint16_t)rnd();
			p->paths = (uint8_t)rnd();
		}
	}
}

/* A frame in IPv6 with its UDP or ICMPv6 checksum right again after a
 * mutation: what is behind it is reached, not only the checksum.  (MLD:
 * behind an 8-byte hop-by-hop header, the sum over the message alone.) */
static void fix_ip6_sum(uint8_t *f, uint32_t n)
{
	uint32_t plen, off, l4;
	uint8_t next = f[20];
	uint16_t c;

	if (n < 62 || srnic_get16(f + 12) != SRNIC_ETHERTYPE_IPV6)
		return;
	if (next == 0 && f[54] == 58 && f[55] == 0) {
		next = 58;
		l4 = 62;
	} else if (next == 17 || next == 58) {
		l4 = 54;
	} else {
		return;
	}
	plen = srnic_get16(f + 18);
	off = next == 17 ? l4 + 6 : l4 + 2;
	if (plen > n - 54 || plen < off - 54 + 2)
		return;
	plen -= l4 - 54;
	srnic_put16(f + off, 0);
	c = (uint16_t)~wire_ones_ref(f + l4, plen,
				     wire_ones_ref(f + 22, 32, 0) + plen +
					     next);
	srnic_put16(f + off, next == 17 && !c ? 0xffff : c);
}

/* Encodes a random valid packet into f; returns the frame length. */
static uint32_t random_frame(uint8_t *f)
{
	static uint8_t pay[1u << SRNIC_MAX_STRIDE_SHIFT];
	struct srnic_pkt p;
	uint8_t mac[12];
	uint32_t n, i;
	uint8_t *b;

	for (i = 0; i < sizeof(mac); i++)
		mac[i] = (uint8_t)rnd();
	/* ARP, which a UDP node's ports hand to its control core. */
	if (rnd_below(8) == 0) {
		struct srnic_arp a = {.op = (uint16_t)(1 + rnd_below(2)),
				      .spa = (uint32_t)rnd(),
				      .tpa = (uint32_t)rnd()};

		memcpy(a.sha, mac + 6, 6);
		a.sha[0] &= 0xfe;
		memcpy(a.tha, mac, 6);
		srnic_wire_arp_encode(f, mac, mac + 6, &a);
		return SRNIC_ARP_FRAME;
	}
	/* NDP, which a UDP IPv6 node's ports hand to its control core. */
	if (rnd_below(16) == 0) {
		struct srnic_nd nd = {.type = rnd_below(2) ? SRNIC_ND_SOLICIT
							   : SRNIC_ND_ADVERT,
				      .has_lladdr = (uint8_t)rnd_below(2)};

		if (nd.type == SRNIC_ND_ADVERT)
			nd.flags = (uint8_t)(rnd() & 0xe0);
		random_ip6(nd.src);
		random_ip6(nd.target);
		nd.src[0] &= 0xfe;
		nd.target[0] &= 0xfe;
		srnic_wire_nd_solicited_node(nd.target, nd.dst, mac);
		memcpy(nd.lladdr, mac + 6, 6);
		nd.lladdr[0] = (nd.lladdr[0] & 0xfe) | 2;
		return srnic_wire_nd_encode(f, mac, mac + 6, &nd);
	}
	/* MLD: a report of a random group from a random link-local
	 * address, or (type 130) a query, MLDv2's 28 bytes or MLDv1's 24
	 * (its group then the whole message's end), of a random delay. */
	if (rnd_below(16) == 0) {
		uint8_t src[16], grp[16];

		random_ip6(grp);
		grp[0] = 0xff;
		srnic_wire_ip6_link_local(mac + 6, src);
		n = srnic_wire_mld_report_encode(f, mac + 6, src, grp,
						 (uint8_t)(2 + 2 * rnd_below(2)));
		if (rnd_below(2)) {
			f[62] = SRNIC_MLD_QUERY;
			srnic_put16(f + 66, (uint16_t)rnd());
			memcpy(f + 70, grp, 16);
			if (rnd_below(2)) {
				n -= 4;
				srnic_put16(f + 18, (uint16_t)(n - 54));
			}
			fix_ip6_sum(f, n);
		}
		return n;
	}
	random_pkt(&p, pay);
	b = wire_build(&p, mac, mac + 6, &n);
	memcpy(f, b, n);
	free(b);
	/* Some links pad more than Ethernet's minimum. */
	if (rnd_below(8) == 0) {
		uint32_t extra = rnd_below(64);

		for (i = 0; i < extra; i++)
			f[n + i] = (uint8_t)rnd();
		n += extra;
	}
	/* A UDP IPv6 node's, to this node (wire_udp6_oracle's
	 * fd00:56:1::2), all nodes or another group, from a host. */
	if (rnd_below(6) == 0) {
		uint8_t src[16], dst[16] = {0xff, 0x05, [15] = 0x42};

		random_ip6(src);
		src[0] = 0xfd;
		if (rnd_below(3) == 0)
			memcpy(dst, srnic_ip6_all_nodes, 16);
		else if (rnd_below(2))
			memcpy(dst, wire_me6, 16);
		memmove(f + SRNIC_UDP6_HLEN, f, n);
		n += SRNIC_UDP6_HLEN;
		srnic_wire_udp6_wrap(f, n, src, dst, SRNIC_UDP_PORT,
				     rnd_below(SRNIC_UDP_PATHS),
				     (uint16_t)rnd());
		return n;
	}
	/* A UDP node's, in IPv4 and UDP to this node (wire_udp_oracle's
	 * 10.55.0.2), the limited broadcast or a group. */
	if (rnd_below(4) == 0) {
		static const uint32_t to[] = {0x0a370002u, 0xffffffffu,
					      0xef000001u};

		memmove(f + SRNIC_UDP_HLEN, f, n);
		n += SRNIC_UDP_HLEN;
		/* (from a host: 10/8) */
		srnic_wire_udp_wrap(f, n, 0x0a000000u | (rnd() & 0xffffff),
				    to[rnd_below(3)], SRNIC_UDP_PORT,
				    rnd_below(SRNIC_UDP_PATHS),
				    (uint16_t)rnd());
	}
	return n;
}

/* Offsets of the multi-byte fields, where an edge value does more than a
 * random bit flip. */
static const uint8_t field_off[] = {
	18, 22, 26, 30, 34,		/* base header (raw) */
	38, 42, 46, 50, 54, 58, 62, 66, 70, /* data extension (raw) */
	16, 20, 24, 28, 32, 36,		/* IPv4 and UDP (wrapped) */
	/* IPv6: payload length, next header and hop limit; a source's
	 * last bytes; UDP's length and checksum; the shim; NDP's
	 * reserved bytes and its option */
	18, 20, 34, 58, 62, 76,
};


static uint32_t mutate(uint8_t *f, uint32_t n)
{
	unsigned rounds = 1 + rnd_below(4), r;
	uint32_t i, off;

	for (r = 0; r < rounds; r++) {
		switch (rnd_below(9)) {
		case 0:
		case 1:	/* bit flip, mostly in the header */
			if (!n)
				break;
			off = rnd_below(4) ? rnd_below(n < 80 ? n : 80)
					   : rnd_below(n);
			f[off] ^= 1u << rnd_below(8);
			break;
		case 2:	/* edge value in a 32-bit field */
			off = field_off[rnd_below(sizeof(field_off))];
			if (off + 4 <= n) {
				uint32_t v = srnic_get32(f + off);

				srnic_put32(f + off, interesting32(v));
			}
			break;
		case 3:	/* stride shift, version, opcode, syndrome;
			 * IPv6's next header, hop limit, ICMPv6 type */
			off = (uint32_t[]){74, 74, 14, 15, 38, 20, 21,
					   54}[rnd_below(8)];
			if (off < n)
				f[off] = rnd_below(3) ? rnd_below(20)
						      : (uint8_t)rnd();
			break;
		case 4:	/* truncate */
			n = rnd_below(n + 1);
			break;
		case 5:	/* extend */
			off = rnd_below(128);
			for (i = 0; i < off && n < MAX_FRAME; i++)
				f[n++] = (uint8_t)rnd();
			break;
		case 6:	/* a length that matches the truncated frame */
			if (n >= 70)
				srnic_put32(f + 66, n - 78 + rnd_below(3) - 1);
			break;
		case 7:	/* random bytes behind our EtherType */
			n = rnd_below(200);
			for (i = 0; i < n; i++)
				f[i] = (uint8_t)rnd();
			if (n >= 14 && rnd_below(2))
				srnic_put16(f + 12, SRNIC_ETHERTYPE);
			if (n >= 16 && rnd_below(2)) {
				f[14] = SRNIC_WIRE_VERSION;
				f[15] = 1 + rnd_below(SRNIC_OP_MAX);
			}
			break;
		default: /* byte set */
			if (n)
				f[rnd_below(n)] = (uint8_t)rnd();
			break;
		}
	}
	if (rnd_below(2))
		fix_ip6_sum(f, n);
	return n;
}

/* Runs one input from an exact-size copy, so a sanitizer build sees any
 * read past the frame. */
static enum srnic_wire_err run_one(const uint8_t *f, uint32_t n,
				   const char *what, unsigned long i)
{
	uint8_t *copy = malloc(n ? n : 1);
	enum srnic_wire_err err;
	const char *bad;

	if (!copy)
		abort();
	memcpy(copy, f, n);
	bad = wire_oracle(copy, n, &err);
	if (!CHECK(!bad, "%s %lu (%u bytes): %s", what, i, n, bad ? bad : ""))
		wire_hexdump(stderr, f, n);
	free(copy);
	return err;
}

static int write_seeds(const char *dir)
{
	uint8_t *f = malloc(MAX_FRAME);
	char path[4096];
	unsigned i;

	if (!f || (mkdir(dir, 0777) && errno != EEXIST)) {
		perror(dir);
		return 1;
	}
	for (i = 0; i < 64; i++) {
		uint32_t n = random_frame(f);
		FILE *out;

		/* libFuzzer is run with -max_len=9100: a seed past it would
		 * be cut and mostly waste the start. */
		if (n > 9100)
			continue;
		snprintf(path, sizeof(path), "%s/seed-%02u", dir, i);
		out = fopen(path, "wb");
		if (!out || fwrite(f, 1, n, out) != n || fclose(out)) {
			perror(path);
			return 1;
		}
	}
	free(f);
	return 0;
}

static int replay_file(const char *path)
{
	FILE *in = fopen(path, "rb");
	static uint8_t f[1 << 20];
	size_t n;

	if (!in) {
		perror(path);
		return 1;
	}
	n = fread(f, 1, sizeof(f), in);
	fclose(in);
	run_one(f, (uint32_t)n, path, 0);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long count = DEFAULT_COUNT, i, seen[SRNIC_WIRE_BAD_LENGTH + 1];
	uint64_t seed = DEFAULT_SEED;
	uint8_t *base, *f;
	uint32_t bn = 0, n;
	int a, files = 0;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--count") && a + 1 < argc) {
			count = strtoul(argv[++a], NULL, 0);
		} else if (!strcmp(argv[a], "--seed") && a + 1 < argc) {
			seed = strtoull(argv[++a], NULL, 0);
		} else if (!strcmp(argv[a], "--write-seeds") && a + 1 < argc) {
			rng_state = seed;
			return write_seeds(argv[++a]);
		} else {
			if (replay_file(argv[a]))
				return 1;
			files++;
		}
	}
	if (files)
		return check_summary("test_wire_corpus");

	base = malloc(MAX_FRAME);
	f = malloc(MAX_FRAME);
	if (!base || !f)
		abort();
	memset(seen, 0, sizeof(seen));
	rng_state = seed;
	for (i = 0; i < count; i++) {
		enum srnic_wire_err err;

		/* Every 8th input starts from a fresh valid frame; in
		 * between, a mutant sometimes becomes the base, so that
		 * mutations also stack. */
		if (i % 8 == 0) {
			bn = random_frame(base);
			err = run_one(base, bn, "valid frame", i);
			/* (ARP and NDP are no srnic frames: the codec
			 * passes them over) */
			CHECK(err == (srnic_wire_is_arp(base, bn) ||
						      srnic_wire_is_icmp6(base,
									  bn)
					      ? SRNIC_WIRE_NOT_OURS
					      : SRNIC_WIRE_OK),
			      "valid frame %lu refused with %d", i, err);
		}
		memcpy(f, base, bn);
		n = mutate(f, bn);
		err = run_one(f, n, "mutant", i);
		if (CHECK(err <= SRNIC_WIRE_BAD_LENGTH, "mutant %lu: error %d",
			  i, err))
			seen[err]++;
		if (rnd_below(4) == 0 && n) {
			memcpy(base, f, n);
			bn = n;
		}
	}
	fprintf(stderr,
		"%lu mutants: ok %lu, not ours %lu, short %lu, bad version "
		"%lu, bad opcode %lu, bad length %lu\n",
		count, seen[SRNIC_WIRE_OK], seen[SRNIC_WIRE_NOT_OURS],
		seen[SRNIC_WIRE_SHORT], seen[SRNIC_WIRE_BAD_VERSION],
		seen[SRNIC_WIRE_BAD_OPCODE], seen[SRNIC_WIRE_BAD_LENGTH]);
	/* A corpus that never reaches some verdict is not testing it: this
	 * catches a generator (or decoder) that went lopsided. */
	if (count >= 10000) {
		for (a = 0; a <= SRNIC_WIRE_BAD_LENGTH; a++)
			CHECK(seen[a] >= count / 200,
			      "verdict %d reached by only %lu of %lu mutants",
			      a, seen[a], count);
	}
	free(base);
	free(f);
	return check_summary("test_wire_corpus");
}

#endif
