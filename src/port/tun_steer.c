/* SPDX-License-Identifier: MIT */
/*
 * Steering on a tap port (queues = N > 1; docs/architecture.md,
 * "Steering"): the kernel's tun driver picks the queue of each frame it
 * hands a multi-queue tap with an eBPF program of the device's
 * (TUNSETSTEERINGEBPF), whose answer is the queue.  Ours reads the frame's
 * QP number and answers its class (srnic_qpn_class), 0 for anything that
 * is no data frame of ours: so a tap port's queue c carries what comes for
 * class c's QPs, and the class polls it itself, as it polls its queues of
 * a memif link (steer.c).  Nothing of the peer's is needed: the receiver's
 * kernel reads the receiver's numbers, and a sender may send on any queue
 * (class c on its queue c).  TC flower, through which DPDK's tap offers
 * rte_flow, is not in this kernel ("TC classifier not found"); the tun
 * driver's own hook is, and needs no rule per queue.
 *
 * The program is made here from the wire's own tables (the EtherType, the
 * control opcodes, where the QP number sits), so it follows them.  A frame
 * too short for what it reads ends the program, which answers 0 then.
 * For a node with encap = udp it reads the base header behind IPv4 and
 * UDP, in a frame to the node's UDP port with no IP options and no
 * fragment offset (an IPv6 node's: behind IPv6, UDP and srnic's shim,
 * UDP the very next header), what a sender wraps (port/udp.c), and
 * answers 0 for
 * any other (ARP, the kernel's frames); the class's own poll checks the
 * rest (port/steer.c).  The UDP destination port stays the node's one:
 * a router's ECMP hash reads it with the source port, which names the
 * path, so a port a class would make each path another route for each
 * class, which the HELLOs' probes of the paths (class 0's) know nothing
 * of (docs/architecture.md, "Steering").
 *
 * Slow path: the node's process (srnicd, or a program running its own
 * node), as it starts a tap port: once its queues are made, before the
 * interface comes up (the kernel sends as it does: IPv6's neighbour and
 * multicast frames, which its flow hash would spread over the classes'
 * queues meanwhile, and e2e/49b saw one there).
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/if_tun.h>

#include <rte_ethdev.h>

#include "srnic_port.h"

/* The most instructions the program takes: a compare for each control
 * opcode, and the rest (UDP's headers among it). */
#define STEER_INSNS (256 + 32)

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src,
			    int16_t off, int32_t imm)
{
	return (struct bpf_insn){.code = code, .dst_reg = dst, .src_reg = src,
				 .off = off, .imm = imm};
}

/* The program for a node of `classes` classes into p (udp_port: its
 * frames in UDP to that port; 0: raw Ethernet); its length.  Every jump
 * that answers 0 goes to the last two instructions, whose place is known
 * only at the end: they are patched then. */
static unsigned steer_program(unsigned classes, uint16_t udp_port,
			      bool ipv6, struct bpf_insn *p)
{
	unsigned n = 0, op, i, to_zero[STEER_INSNS], nz = 0;
	/* (where the base header starts) */
	int32_t base = SRNIC_ETH_HLEN + (!udp_port ? 0
					 : ipv6	  ? SRNIC_UDP6_HLEN
						  : SRNIC_UDP_HLEN);

/* (r0 loaded with the size bytes at off; to the answer 0 unless it is v) */
#define LOAD_JNE(size, off, v)                                               \
	do {                                                                 \
		p[n++] = insn(BPF_LD | BPF_ABS | (size), 0, 0, 0, (off));    \
		to_zero[nz++] = n;                                           \
		p[n++] = insn(BPF_JMP | BPF_JNE | BPF_K, 0, 0, 0, (v));      \
	} while (0)
	/* (the packet loads take the context in r6) */
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0);
	if (udp_port && ipv6) {
		/* IPv6, UDP with no extension header between, our port */
		LOAD_JNE(BPF_H, 12, SRNIC_ETHERTYPE_IPV6);
		p[n++] = insn(BPF_LD | BPF_ABS | BPF_B, 0, 0, 0,
			      SRNIC_ETH_HLEN);
		p[n++] = insn(BPF_ALU64 | BPF_AND | BPF_K, 0, 0, 0, 0xf0);
		to_zero[nz++] = n;
		p[n++] = insn(BPF_JMP | BPF_JNE | BPF_K, 0, 0, 0, 0x60);
		LOAD_JNE(BPF_B, SRNIC_ETH_HLEN + 6, 17);
		LOAD_JNE(BPF_H, SRNIC_ETH_HLEN + 42, udp_port);
	} else if (udp_port) {
		/* IPv4 without options, UDP, no fragment, our port */
		LOAD_JNE(BPF_H, 12, SRNIC_ETHERTYPE_IPV4);
		LOAD_JNE(BPF_B, SRNIC_ETH_HLEN, 0x45);
		LOAD_JNE(BPF_B, SRNIC_ETH_HLEN + 9, 17);
		p[n++] = insn(BPF_LD | BPF_ABS | BPF_H, 0, 0, 0,
			      SRNIC_ETH_HLEN + 6);
		p[n++] = insn(BPF_ALU64 | BPF_AND | BPF_K, 0, 0, 0, 0x3fff);
		to_zero[nz++] = n;
		p[n++] = insn(BPF_JMP | BPF_JNE | BPF_K, 0, 0, 0, 0);
		LOAD_JNE(BPF_H, SRNIC_ETH_HLEN + 22, udp_port);
	} else {
		LOAD_JNE(BPF_H, 12, SRNIC_ETHERTYPE);
	}
#undef LOAD_JNE
	p[n++] = insn(BPF_LD | BPF_ABS | BPF_B, 0, 0, 0, base + 1);
	for (op = 0; op < 256; op++)
		if (srnic_op_is_control((uint8_t)op)) {
			to_zero[nz++] = n;
			p[n++] = insn(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0,
				      (int32_t)op);
		}
	/* r0: the QP number; r1: its table entry */
	p[n++] = insn(BPF_LD | BPF_ABS | BPF_W, 0, 0, 0, base + 4);
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_X, 1, 0, 0, 0);
	p[n++] = insn(BPF_ALU64 | BPF_AND | BPF_K, 1, 0, 0, SRNIC_MAX_QP - 1);
	to_zero[nz++] = n;
	p[n++] = insn(BPF_JMP | BPF_JGE | BPF_K, 1, 0, 0, SRNIC_SVC_QPN_BASE);
	p[n++] = insn(BPF_ALU64 | BPF_RSH | BPF_K, 0, 0, 0,
		      SRNIC_QPN_INDEX_BITS);
	p[n++] = insn(BPF_ALU64 | BPF_AND | BPF_K, 0, 0, 0,
		      SRNIC_MAX_CLASSES - 1);
	to_zero[nz++] = n;
	p[n++] = insn(BPF_JMP | BPF_JGE | BPF_K, 0, 0, 0, (int32_t)classes);
	p[n++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	/* the answer 0 */
	for (i = 0; i < nz; i++)
		p[to_zero[i]].off = (int16_t)(n - to_zero[i] - 1);
	p[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	p[n++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return n;
}

int srnic_tun_steer_load(unsigned classes, uint16_t udp_port, bool ipv6,
			 char *log, unsigned loglen)
{
	struct bpf_insn prog[STEER_INSNS];
	union bpf_attr a;
	int fd, again;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insn_cnt = steer_program(classes, udp_port, ipv6, prog);
	a.insns = (uintptr_t)prog;
	a.license = (uintptr_t)"Dual MIT/GPL";
	log[0] = '\0';
	fd = (int)syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	if (fd >= 0 || errno == EPERM || errno == ENOSYS)
		return fd < 0 ? -errno : fd;
	/* Refused: again, for the verifier's words (asked for the first
	 * time, they fail a load whose log outgrows the buffer) */
	fd = -errno;
	a.log_buf = (uintptr_t)log;
	a.log_size = loglen;
	a.log_level = 1;
	again = (int)syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	if (again >= 0)
		close(again);
	return fd;
}

int srnic_tun_steer(struct srnic_engine *eng, unsigned i, int prog,
		    char *err, unsigned errlen)
{
	struct srnic_port *p = &eng->node->port[i];
	struct rte_eth_dev_info info;
	char tap[IFNAMSIZ];
	struct ifreq ifr;
	int fd, rc = 0;

	if (rte_eth_dev_info_get(p->port_id, &info) || !info.if_index ||
	    !if_indextoname(info.if_index, tap)) {
		snprintf(err, errlen, "srnic: port %u: no kernel interface "
			 "for its tap", i);
		close(prog);
		return -ENODEV;
	}
	/* The program is the device's: set through a queue of it, which
	 * is attached for that (the last, so its going renumbers none)
	 * and closed again. */
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_MULTI_QUEUE;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", tap);
	if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr) ||
	    ioctl(fd, TUNSETSTEERINGEBPF, &prog))
		rc = -errno;
	if (fd >= 0)
		close(fd);
	close(prog);	/* (the device holds it) */
	if (rc) {
		snprintf(err, errlen, "srnic: port %u: tap %s: its steering "
			 "program could not be set: %s", i, tap, strerror(-rc));
		return rc;
	}
	__atomic_store_n(&p->kernel_steer, 1, __ATOMIC_RELEASE);
	return 0;
}
