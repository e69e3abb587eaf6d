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
 * answered 0.  Needs the bpf() system call (root): SKIP without it.
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
#define FLEN (64 + SRNIC_UDP_HLEN)

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
 * wrapped in IPv4 and UDP to PORT if udp (then 28 bytes longer). */
static void frame(uint8_t *f, uint16_t type, uint8_t op, uint32_t qpn,
		  bool udp)
{
	if (udp) {
		frame(f + SRNIC_UDP_HLEN, type, op, qpn, false);
		srnic_wire_udp_wrap(f, FLEN, 0x0a000001, 0x0a000002, PORT, 3,
				    0);
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
		     bool udp)
{
	uint32_t qpn;

	return (udp ? srnic_wire_udp_frame_qpn(f, len, &qpn)
		    : srnic_wire_frame_qpn(f, len, &qpn))
		       ? srnic_qpn_class(classes, qpn)
		       : 0;
}

/* A wrapped WRITE to a class-1 QP, its byte at `at` set to v (the IPv4
 * header checksum left as it is: the kernel's tun does not read it, and
 * the class's own poll checks it); the program's answer, which must be 0. */
static void udp_other(int prog, unsigned at, uint8_t v, const char *what)
{
	uint8_t f[FLEN];
	uint32_t got = 9;

	frame(f, SRNIC_ETHERTYPE, SRNIC_OP_WRITE, 1u << 12 | 16, true);
	f[at] = v;
	CHECK(!run(prog, f, sizeof(f), &got) && got == 0,
	      "a UDP frame with %s steered to queue %u", what, got);
}

/* The UDP program's checks on the headers around an otherwise good
 * frame to a class-1 QP. */
static void udp_headers(int prog)
{
	uint8_t f[FLEN];
	uint32_t got = 9, i;

	udp_other(prog, 12, 0x86, "another EtherType");
	udp_other(prog, SRNIC_ETH_HLEN, 0x46, "IP options");
	udp_other(prog, SRNIC_ETH_HLEN, 0x65, "IP version 6");
	udp_other(prog, SRNIC_ETH_HLEN + 9, 6, "protocol TCP");
	udp_other(prog, SRNIC_ETH_HLEN + 6, 0x60, "more fragments");
	udp_other(prog, SRNIC_ETH_HLEN + 7, 1, "a fragment offset");
	udp_other(prog, SRNIC_ETH_HLEN + 23, PORT + 1 - 256 * (PORT >> 8),
		  "another UDP port");
	frame(f, SRNIC_ETHERTYPE, SRNIC_OP_WRITE, 1u << 12 | 16, true);
	for (i = SRNIC_ETH_HLEN; i < SRNIC_ETH_HLEN + SRNIC_UDP_HLEN + 8; i++)
		CHECK(!run(prog, f, i, &got) && got == 0,
		      "a UDP frame of %u bytes steered to queue %u", i, got);
	CHECK(!run(prog, f, sizeof(f), &got) && got == 1,
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
	for (u = 0; u < 2; u++) {
		bool udp = u;	/* (raw Ethernet, then UDP) */
		int prog = srnic_tun_steer_load(classes, udp ? PORT : 0, log,
						sizeof(log));
		uint32_t got, len = udp ? FLEN : 64;

		if (prog == -EPERM || prog == -ENOSYS) {
			printf("SKIP: no bpf() here (%s)\n", strerror(-prog));
			return 77;
		}
		CHECK(prog >= 0, "the program for %u classes (%s) refused: "
		      "%s: %s", classes, udp ? "udp" : "eth", strerror(-prog),
		      log);
		if (prog < 0)
			continue;
		for (op = 0; op < 256; op++)
			for (c = 0; c < SRNIC_MAX_CLASSES; c++)
				for (i = 0; i < sizeof(index) / sizeof(*index); i++) {
					uint32_t qpn = (5u << 14 | c << 12) | index[i];

					frame(f, SRNIC_ETHERTYPE, (uint8_t)op, qpn,
					      udp);
					if (run(prog, f, len, &got))
						break;
					checked++;
					steered += got != 0;
					wrong += got != want(classes, f, len, udp);
				}
		if (udp) {
			udp_headers(prog);
			close(prog);
			continue;
		}
		/* another EtherType; frames that end before the QP number */
		frame(f, 0x0800, SRNIC_OP_WRITE, 1u << 12 | 16, false);
		CHECK(!run(prog, f, len, &got) && got == 0,
		      "an IPv4 frame steered to queue %u", got);
		frame(f, SRNIC_ETHERTYPE, SRNIC_OP_WRITE, 1u << 12 | 16, false);
		for (i = SRNIC_ETH_HLEN; i < SRNIC_ETH_HLEN + 8; i++)
			CHECK(!run(prog, f, i, &got) && got == 0,
			      "a frame of %u bytes steered to queue %u", i, got);
		CHECK(!run(prog, f, SRNIC_ETH_HLEN + 8, &got) && got == 1,
		      "a WRITE to a class-1 QP (%u classes) steered to %u",
		      classes, got);
		close(prog);
	}
	CHECK(checked == 2 * 3 * 256 * SRNIC_MAX_CLASSES * 5 && wrong == 0 &&
		      steered > 0,
	      "%u frames run, %u steered elsewhere than the datapath reads "
	      "them (%u to a class's queue)", checked, wrong, steered);
	return check_summary("test_tun_steer");
}
