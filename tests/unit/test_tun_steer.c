/* SPDX-License-Identifier: MIT */
/*
 * The tap's steering program (src/port/tun_steer.c), run by the kernel on
 * frames (BPF_PROG_TEST_RUN) against the datapath's own reading of them:
 * a data frame's queue is its QP's class (srnic_wire_frame_qpn,
 * srnic_qpn_class), anything else's 0.  Every opcode, QP numbers of each
 * class, of the services' entries, classes the node does not have, other
 * EtherTypes and frames too short for what the program reads.  Needs the
 * bpf() system call (root): SKIP without it.
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
static int run(int prog, const uint8_t *frame, uint32_t len, uint32_t *ret)
{
	uint8_t in[SRNIC_ETH_HLEN + 64] = {0};
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

/* A frame of ours as far as the program reads: EtherType, opcode, QP. */
static void frame(uint8_t *f, uint16_t type, uint8_t op, uint32_t qpn)
{
	memset(f, 0, 64);
	memset(f, 0xff, 6);
	f[12] = (uint8_t)(type >> 8);
	f[13] = (uint8_t)type;
	f[SRNIC_ETH_HLEN] = SRNIC_WIRE_VERSION;
	f[SRNIC_ETH_HLEN + 1] = op;
	srnic_put32(f + SRNIC_ETH_HLEN + 4, qpn);
}

/* What the datapath makes of the frame: its queue. */
static uint32_t want(unsigned classes, const uint8_t *f, uint32_t len)
{
	uint32_t qpn;

	return srnic_wire_frame_qpn(f, len, &qpn)
		       ? srnic_qpn_class(classes, qpn)
		       : 0;
}

int main(void)
{
	static const uint32_t index[] = {16, 1000, SRNIC_SVC_QPN_BASE - 1,
					 SRNIC_SVC_QPN_BASE, SRNIC_MAX_QP - 1};
	unsigned classes, op, c, i, checked = 0, wrong = 0, steered = 0;
	uint8_t f[64];
	char log[4096];

	for (classes = 2; classes <= SRNIC_MAX_CLASSES; classes++) {
		int prog = srnic_tun_steer_load(classes, log, sizeof(log));
		uint32_t got;

		if (prog == -EPERM || prog == -ENOSYS) {
			printf("SKIP: no bpf() here (%s)\n", strerror(-prog));
			return 77;
		}
		CHECK(prog >= 0, "the program for %u classes refused: %s: %s",
		      classes, strerror(-prog), log);
		if (prog < 0)
			continue;
		for (op = 0; op < 256; op++)
			for (c = 0; c < SRNIC_MAX_CLASSES; c++)
				for (i = 0; i < sizeof(index) / sizeof(*index); i++) {
					uint32_t qpn = (5u << 14 | c << 12) | index[i];

					frame(f, SRNIC_ETHERTYPE, (uint8_t)op, qpn);
					if (run(prog, f, sizeof(f), &got))
						break;
					checked++;
					steered += got != 0;
					wrong += got != want(classes, f, sizeof(f));
				}
		/* another EtherType; frames that end before the QP number */
		frame(f, 0x0800, SRNIC_OP_WRITE, 1u << 12 | 16);
		CHECK(!run(prog, f, sizeof(f), &got) && got == 0,
		      "an IPv4 frame steered to queue %u", got);
		frame(f, SRNIC_ETHERTYPE, SRNIC_OP_WRITE, 1u << 12 | 16);
		for (i = SRNIC_ETH_HLEN; i < SRNIC_ETH_HLEN + 8; i++)
			CHECK(!run(prog, f, i, &got) && got == 0,
			      "a frame of %u bytes steered to queue %u", i, got);
		CHECK(!run(prog, f, SRNIC_ETH_HLEN + 8, &got) && got == 1,
		      "a WRITE to a class-1 QP (%u classes) steered to %u",
		      classes, got);
		close(prog);
	}
	CHECK(checked == 3 * 256 * SRNIC_MAX_CLASSES * 5 && wrong == 0 &&
		      steered > 0,
	      "%u frames run, %u steered elsewhere than the datapath reads "
	      "them (%u to a class's queue)", checked, wrong, steered);
	return check_summary("test_tun_steer");
}
