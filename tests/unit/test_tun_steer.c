/* SPDX-License-Identifier: MIT */
/*
 * The tap's steering program (src/port/tun_steer.c), run by the kernel on
 * frames (BPF_PROG_TEST_RUN) against the datapath's own reading of them:
 * a data frame's queue is its QP's class (srnic_wire_frame_qpn,
 * srnic_qpn_class), anything else's 0.  Every opcode, QP numbers of each
 * class, of the services' entries, classes the node does not have, other
 * EtherTypes and frames too short for what the program reads; and the
 * same frames wrapped in IPv4 and UDP for a node with encap = udp
 * (srnic_wire_udp_frame_qpn), with frames whose IPv4 or UDP headers are
 * not what a node wraps (options, a fragment, another protocol or port)
 * answered 0, and wrapped in IPv6 and UDP for an IPv6 node
 * (srnic_wire_udp6_frame_qpn), likewise.  Needs the bpf() system call
 * (root): SKIP without it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "srnic_port.h"
#include "check.h"

/* The program's answer for a frame of len bytes.  (The kernel's test run
 * of a socket filter takes the data as a frame and starts the program past
 * its Ethernet header, where the tun driver starts it at the frame: so the
 * frame goes in behind an Ethernet header of its own.) */
#define PORT 4793
#define FLEN (64 + SRNIC_UDP6_HLEN)

/* How a node's frames travel: raw, in IPv4 and UDP, in IPv6 and UDP. */
enum encap { ETH, UDP4, UDP6 };
static const uint32_t hlen[] = {0, SRNIC_UDP_HLEN, SRNIC_UDP6_HLEN};
static const uint8_t ip6a[16] = {0xfd, 0, 0, 0x56, 0, 1, [15] = 2};
static const uint8_t ip6b[16] = {0xfd, 0, 0, 0x56, 0, 2, [15] = 2};

static int run(int prog, const uint8_t *frame, uint32_t len, uint32_t *ret)
{
	uint8_t in[SRNIC_ETH_HLEN + FLEN] = {0};
	union bpf_attr a;

	memcpy(in + SRNIC_ETH_HLEN, frame, len);
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)prog;
	a.test.data_in = (uintptr_t)in;
	a.test.data_size_in = SRNIC_ETH_HLEN + len;
	a.test.repeat = 1;
	if (syscall(__NR_bpf, BPF_PROG_TEST_RUN, &a, sizeof(a)))
		return -errno;
	*ret = a.test.retval;
	return 0;
}

/* A frame of ours as far as the program reads: EtherType, opcode, QP;
 * wrapped in IPv4 or IPv6 and UDP to PORT (then hlen[e] bytes longer). */
static void frame(uint8_t *f, uint16_t type, uint8_t op, uint32_t qpn,
		  enum encap e)
{
	if (e != ETH) {
		frame(f + hlen[e], type, op, qpn, ETH);
		if (e == UDP4)
			srnic_wire_udp_wrap(f, 64 + hlen[e], 0x0a000001,
					    0x0a000002, PORT, 3, 0);
		else
			srnic_wire_udp6_wrap(f, 64 + hlen[e], ip6a, ip6b, PORT,
					     3, 0);
		return;
	}
	memset(f, 0, 64);
	memset(f, 0xff, 6);
	f[12] = (uint8_t)(type >> 8);
	f[13] = (uint8_t)type;
	f[SRNIC_ETH_HLEN] = SRNIC_WIRE_VERSION;
	f[SRNIC_ETH_HLEN + 1] = op;
	srnic_put32(f + SRNIC_ETH_HLEN + 4, qpn);
}

/* What the datapath makes of the frame: its queue. */
static uint32_t want(unsigned classes, const uint8_t *f, uint32_t len,
		     enum encap e)
{
	uint32_t qpn;

	return (e == UDP4   ? srnic_wire_udp_frame_qpn(f, len, &qpn)
		: e == UDP6 ? srnic_wire_udp6_frame_qpn(f, len, &qpn)
			    : srnic_wire_frame_qpn(f, len, &qpn))
		       ? srnic_qpn_class(classes, qpn)
		       : 0;
}

/* A wrapped WRITE to a class-1 QP, its byte at `at` set to v (the IPv4
 * header checksum left as it is: the kernel's tun does not read it, and
 * the class's own poll checks it); the program's answer, which must be 0. */
static void udp_other(int prog, enum encap e, unsigned at, uint8_t v,
		      const char *what)
{
	uint8_t f[FLEN];
	uint32_t got = 9;

	frame(f, SRNIC_ETHERTYPE, SRNIC_OP_WRITE, 1u << 12 | 16, e);
	f[at] = v;
	CHECK(!run(prog, f, 64 + hlen[e], &got) && got == 0,
	      "a UDP frame (IPv%d) with %s steered to queue %u",
	      e == UDP4 ? 4 : 6, what, got);
}

/* The UDP program's checks on the headers around an otherwise good
 * frame to a class-1 QP. */
static void udp_headers(int prog, enum encap e)
{
	uint8_t f[FLEN];
	uint32_t got = 9, i;

	if (e == UDP4) {
		udp_other(prog, e, 12, 0x86, "another EtherType");
		udp_other(prog, e, SRNIC_ETH_HLEN, 0x46, "IP options");
		udp_other(prog, e, SRNIC_ETH_HLEN, 0x65, "IP version 6");
		udp_other(prog, e, SRNIC_ETH_HLEN + 9, 6, "protocol TCP");
		udp_other(prog, e, SRNIC_ETH_HLEN + 6, 0x60, "more fragments");
		udp_other(prog, e, SRNIC_ETH_HLEN + 7, 1, "a fragment offset");
		udp_other(prog, e, SRNIC_ETH_HLEN + 23,
			  PORT + 1 - 256 * (PORT >> 8), "another UDP port");
	} else {
		udp_other(prog, e, 13, 0x00, "another EtherType");
		udp_other(prog, e, SRNIC_ETH_HLEN, 0x40, "IP version 4");
		/* (a hop-by-hop options header first) */
		udp_other(prog, e, SRNIC_ETH_HLEN + 6, 0, "an extension header");
		udp_other(prog, e, SRNIC_ETH_HLEN + 6, 6, "TCP");
		udp_other(prog, e, SRNIC_ETH_HLEN + 43,
			  PORT + 1 - 256 * (PORT >> 8), "another UDP port");
	}
	frame(f, SRNIC_ETHERTYPE, SRNIC_OP_WRITE, 1u << 12 | 16, e);
	for (i = SRNIC_ETH_HLEN; i < SRNIC_ETH_HLEN + hlen[e] + 8; i++)
		CHECK(!run(prog, f, i, &got) && got == 0,
		      "a UDP frame of %u bytes steered to queue %u", i, got);
	CHECK(!run(prog, f, 64 + hlen[e], &got) && got == 1,
	      "a wrapped WRITE to a class-1 QP steered to %u", got);
}

int main(void)
{
	static const uint32_t index[] = {16, 1000, SRNIC_SVC_QPN_BASE - 1,
					 SRNIC_SVC_QPN_BASE, SRNIC_MAX_QP - 1};
	unsigned classes, op, c, i, checked = 0, wrong = 0, steered = 0;
	uint8_t f[FLEN];
	char log[4096];
	unsigned u;

	for (classes = 2; classes <= SRNIC_MAX_CLASSES; classes++)
	for (u = ETH; u <= UDP6; u++) {
		enum encap e = u;
		int prog = srnic_tun_steer_load(classes, e != ETH ? PORT : 0,
						e == UDP6, log, sizeof(log));
		uint32_t got, len = 64 + hlen[e];

		if (prog == -EPERM || prog == -ENOSYS) {
			printf("SKIP: no bpf() here (%s)\n", strerror(-prog));
			return 77;
		}
		CHECK(prog >= 0, "the program for %u classes (%s) refused: "
		      "%s: %s", classes,
		      e == ETH ? "eth" : e == UDP4 ? "udp" : "udp6",
		      strerror(-prog),
		      log);
		if (prog < 0)
			continue;
		for (op = 0; op < 256; op++)
			for (c = 0; c < SRNIC_MAX_CLASSES; c++)
				for (i = 0; i < sizeof(index) / sizeof(*index); i++) {
					uint32_t qpn = (5u << 14 | c << 12) | index[i];

					frame(f, SRNIC_ETHERTYPE, (uint8_t)op, qpn,
					      e);
					if (run(prog, f, len, &got))
						break;
					checked++;
					steered += got != 0;
					wrong += got != want(classes, f, len, e);
				}
		if (e != ETH) {
			udp_headers(prog, e);
			close(prog);
			continue;
		}
		/* another EtherType; frames that end before the QP number */
		frame(f, 0x0800, SRNIC_OP_WRITE, 1u << 12 | 16, ETH);
		CHECK(!run(prog, f, len, &got) && got == 0,
		      "an IPv4 frame steered to queue %u", got);
		frame(f, SRNIC_ETHERTYPE, SRNIC_OP_WRITE, 1u << 12 | 16, ETH);
		for (i = SRNIC_ETH_HLEN; i < SRNIC_ETH_HLEN + 8; i++)
			CHECK(!run(prog, f, i, &got) && got == 0,
			      "a frame of %u bytes steered to queue %u", i, got);
		CHECK(!run(prog, f, SRNIC_ETH_HLEN + 8, &got) && got == 1,
		      "a WRITE to a class-1 QP (%u classes) steered to %u",
		      classes, got);
		close(prog);
	}
	CHECK(checked == 3 * 3 * 256 * SRNIC_MAX_CLASSES * 5 && wrong == 0 &&
		      steered > 0,
	      "%u frames run, %u steered elsewhere than the datapath reads "
	      "them (%u to a class's queue)", checked, wrong, steered);
	return check_summary("test_tun_steer");
}
