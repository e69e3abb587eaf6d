/* SPDX-License-Identifier: MIT */
/*
 * A hostile station on a testbed rail: captures srnic frames off a kernel
 * interface, replays them, and forges control frames, raw (AF_PACKET).
 * tests/e2e/23-forged-control.sh uses it to show that forged and replayed
 * control frames change nothing on a node with a cluster key.
 *
 *   inject capture IFACE OPCODE FILE SECONDS
 *       the first srnic frame of OPCODE that arrives on IFACE (on the
 *       switch's side of a node's link: what the node sent), into FILE;
 *       exit 1 if none came within SECONDS
 *   inject replay IFACE FILE COUNT
 *       send FILE's frame COUNT times
 *   inject forge IFACE OPCODE DST_MAC SRC_MAC IPV4 SRC_INC DST_INC MODE COUNT
 *       a control frame claiming to come from node IPV4's incarnation
 *       SRC_INC (port MAC SRC_MAC, name "m" and IPV4), for DST_INC, COUNT
 *       times, with a good
 *       CRC; MODE says what stands in for the cluster key's MAC: "none" (no
 *       MAC) or "garbage" (the flag and 32 random bytes)
 *
 *   inject group-write IFACE SRC_MAC GROUP COUNT
 *       COUNT multicast WRITEs to GROUP's address, each a message of its
 *       own from a made-up sender: 256 bytes of 0xee at offset 0 of the
 *       members' regions, with the group's number alone where a sender
 *       with the cluster key puts the group and its tag
 *
 *   inject udp-damage IFACE DST_MAC SRC_MAC SRC_IP DST_IP
 *       a UDP node's HELLO (encap = udp, srnic's default port) from
 *       SRC_IP to DST_IP, sent once with each of the header faults a
 *       UDP node must drop and count (bad_ip; two of them fragments,
 *       which a port may reassemble or drop before the node sees them),
 *       then once as each of the frames it must pass over (not_ours):
 *       prints how many of each
 *
 * Opcodes by name: HELLO BYE BYE_ACK BOOTING BOOT_ACK RDMA_READY.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "srnic_wire.h"

#define MAX_FRAME 9216

static const char *const op_names[] = {
	[SRNIC_OP_HELLO] = "HELLO",	    [SRNIC_OP_BYE] = "BYE",
	[SRNIC_OP_BYE_ACK] = "BYE_ACK",	    [SRNIC_OP_BOOTING] = "BOOTING",
	[SRNIC_OP_BOOT_ACK] = "BOOT_ACK", [SRNIC_OP_RDMA_READY] = "RDMA_READY",
	[SRNIC_OP_SVC_ANNOUNCE] = "SVC_ANNOUNCE",
};

static void die(const char *what)
{
	fprintf(stderr, "inject: %s: %s\n", what, strerror(errno));
	exit(2);
}

static int usage(void)
{
	fprintf(stderr, "usage: inject capture IFACE OPCODE FILE SECONDS\n"
			"       inject replay IFACE FILE COUNT\n"
			"       inject forge IFACE OPCODE DST_MAC SRC_MAC IPV4 "
			"SRC_INC DST_INC none|garbage COUNT\n"
			"       inject group-write IFACE SRC_MAC GROUP COUNT\n"
			"       inject udp-damage IFACE DST_MAC SRC_MAC SRC_IP "
			"DST_IP\n");
	return 2;
}

static uint8_t opcode(const char *name)
{
	unsigned op;

	for (op = SRNIC_OP_HELLO; op < SRNIC_OP_MAX; op++)
		if (op_names[op] && !strcmp(name, op_names[op]))
			return op;
	fprintf(stderr, "inject: no control opcode %s\n", name);
	exit(2);
}

static void parse_mac(const char *s, uint8_t mac[6])
{
	if (sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1],
		   &mac[2], &mac[3], &mac[4], &mac[5]) != 6) {
		fprintf(stderr, "inject: not a MAC: %s\n", s);
		exit(2);
	}
}

/* A raw socket on iface; *addr to send with.  It takes every frame (a
 * bridge port hands frames to its bridge before any handler of one
 * protocol sees them); the caller picks srnic's. */
static int open_iface(const char *iface, struct sockaddr_ll *addr)
{
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));

	if (fd < 0)
		die("socket");
	memset(addr, 0, sizeof(*addr));
	addr->sll_family = AF_PACKET;
	addr->sll_protocol = htons(ETH_P_ALL);
	addr->sll_ifindex = (int)if_nametoindex(iface);
	if (!addr->sll_ifindex)
		die(iface);
	if (bind(fd, (struct sockaddr *)addr, sizeof(*addr)))
		die("bind");
	addr->sll_halen = 6;
	return fd;
}

static void send_frame(int fd, struct sockaddr_ll *addr, const uint8_t *f,
		       size_t len, unsigned count)
{
	memcpy(addr->sll_addr, f, 6);
	while (count--) {
		if (sendto(fd, f, len, 0, (struct sockaddr *)addr,
			   sizeof(*addr)) != (ssize_t)len)
			die("sendto");
		usleep(2000);
	}
}

static int capture(const char *iface, uint8_t op, const char *file,
		   int secs)
{
	static uint8_t f[MAX_FRAME];
	struct sockaddr_ll addr;
	int fd = open_iface(iface, &addr);
	time_t end = time(NULL) + secs;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	FILE *out;

	while (time(NULL) < end) {
		struct sockaddr_ll from;
		socklen_t fromlen = sizeof(from);
		ssize_t n;

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		n = recvfrom(fd, f, sizeof(f), 0, (struct sockaddr *)&from,
			     &fromlen);
		if (n < 0)
			die("recv");
		if (from.sll_pkttype == PACKET_OUTGOING ||
		    srnic_wire_peek_opcode(f, (uint32_t)n) != op)
			continue;
		out = fopen(file, "w");
		if (!out || fwrite(f, 1, n, out) != (size_t)n || fclose(out))
			die(file);
		printf("captured %s of %zd bytes\n", op_names[op], n);
		return 0;
	}
	fprintf(stderr, "inject: no %s came on %s in %d s\n", op_names[op],
		iface, secs);
	return 1;
}

static int replay(const char *iface, const char *file, unsigned count)
{
	static uint8_t f[MAX_FRAME];
	struct sockaddr_ll addr;
	int fd = open_iface(iface, &addr);
	FILE *in = fopen(file, "r");
	size_t n;

	if (!in)
		die(file);
	n = fread(f, 1, sizeof(f), in);
	fclose(in);
	send_frame(fd, &addr, f, n, count);
	printf("replayed %s %u times\n", file, count);
	return 0;
}

static int forge(char **argv)
{
	static uint8_t f[MAX_FRAME];
	struct sockaddr_ll addr;
	int fd = open_iface(argv[0], &addr);
	uint8_t dst[6], src[6];
	struct srnic_pkt p;
	struct in_addr ip;
	unsigned hlen, len, count = (unsigned)atoi(argv[8]);
	int garbage = !strcmp(argv[7], "garbage");

	if (!garbage && strcmp(argv[7], "none"))
		return usage();
	memset(&p, 0, sizeof(p));
	p.opcode = opcode(argv[1]);
	parse_mac(argv[2], dst);
	parse_mac(argv[3], src);
	if (inet_pton(AF_INET, argv[4], &ip) != 1)
		return usage();
	p.ipv4 = ntohl(ip.s_addr);
	p.src_inc = (uint32_t)strtoul(argv[5], NULL, 16);
	p.dst_inc = (uint32_t)strtoul(argv[6], NULL, 16);
	memcpy(p.node_mac, src, 6);
	snprintf(p.node_name, sizeof(p.node_name), "m%s", argv[4]);
	p.flags = garbage ? SRNIC_F_AUTH : 0;
	hlen = srnic_wire_encode(f, dst, src, &p);
	len = hlen;
	if (garbage) {
		if (getrandom(f + hlen, SRNIC_AUTH_LEN, 0) != SRNIC_AUTH_LEN)
			die("getrandom");
		len += SRNIC_AUTH_LEN;
	}
	/* A good CRC: the frame must get as far as the MAC check. */
	len += SRNIC_CRC_LEN;
	srnic_wire_seal(f, len, false);
	send_frame(fd, &addr, f, len, count);
	printf("forged %s (%s MAC) %u times\n", op_names[p.opcode], argv[7],
	       count);
	return 0;
}

static int group_write(char **argv)
{
	static uint8_t f[MAX_FRAME];
	struct sockaddr_ll addr;
	int fd = open_iface(argv[0], &addr);
	unsigned group = (unsigned)atoi(argv[2]), count = (unsigned)atoi(argv[3]);
	uint8_t dst[6], src[6];
	struct srnic_pkt p;
	unsigned i, len;

	if (group >= SRNIC_MAX_GROUPS)
		return usage();
	parse_mac(argv[1], src);
	srnic_group_mac((uint8_t)group, dst);
	memset(&p, 0, sizeof(p));
	p.opcode = SRNIC_OP_WRITE;
	p.flags = SRNIC_F_GROUP | SRNIC_F_LAST;
	p.dst_qpn = SRNIC_QPN_MCAST;
	p.src_qpn = 1;
	if (getrandom(&p.src_inc, sizeof(p.src_inc), 0) != sizeof(p.src_inc))
		die("getrandom");
	p.rkey = group;
	p.msg_len = p.pkt_len = 256;
	p.stride_shift = 10;
	for (i = 0; i < count; i++) {
		p.msn = i + 1;
		p.txid = i + 1;
		len = srnic_wire_encode(f, dst, src, &p);
		memset(f + len, 0xee, p.pkt_len);
		len += p.pkt_len + SRNIC_CRC_LEN;
		srnic_wire_seal(f, len, false);
		send_frame(fd, &addr, f, len, 1);
	}
	printf("forged %u multicast WRITEs to group %u\n", count, group);
	return 0;
}

/* The ones' complement sum of an IPv4 header, for one made right again
 * after a fault elsewhere in it. */
static void ip_sum(uint8_t *ip, unsigned len)
{
	uint32_t sum = 0;
	unsigned i;

	ip[10] = ip[11] = 0;
	for (i = 0; i < len; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	srnic_put16(ip + 10, (uint16_t)~sum);
}

/* One fault in a wrapped frame: the byte at off (from the frame's start)
 * set to val, the IPv4 checksum made right again after it if fix. */
struct udp_fault {
	const char *what;
	unsigned off;
	uint8_t val;
	int fix;
	int ours;	/* 1: to drop as bad_ip; 0: not ours; 2: a fragment,
			 * to drop as bad_ip where the port delivers it */
};

static const struct udp_fault udp_faults[] = {
	{"IPv4 checksum", 24, 0x5a, 0, 1},
	{"more fragments", 20, 0x60, 1, 2},
	{"a fragment's offset", 21, 0x10, 1, 2},
	{"total length past the frame", 16, 0x3f, 1, 1},
	{"UDP length", 38, 0x3f, 0, 1},
	{"UDP checksum", 40, 0x77, 0, 1},
	{"another UDP port", 37, 0x01, 0, 0},
	{"another host", 33, 0xfe, 1, 0},
	{"TCP", 23, 6, 1, 0},
};

static int udp_damage(char **argv)
{
	static uint8_t f[MAX_FRAME], g[MAX_FRAME];
	struct sockaddr_ll addr;
	int fd = open_iface(argv[0], &addr);
	unsigned i, len, bad = 0, frags = 0, not_ours = 0;
	struct in_addr src_ip, dst_ip;
	uint8_t dst[6], src[6];
	struct srnic_pkt p;

	parse_mac(argv[1], dst);
	parse_mac(argv[2], src);
	if (inet_pton(AF_INET, argv[3], &src_ip) != 1 ||
	    inet_pton(AF_INET, argv[4], &dst_ip) != 1)
		return usage();
	memset(&p, 0, sizeof(p));
	p.opcode = SRNIC_OP_HELLO;
	p.ipv4 = ntohl(src_ip.s_addr);
	memcpy(p.node_mac, src, 6);
	snprintf(p.node_name, sizeof(p.node_name), "m%s", argv[3]);
	len = srnic_wire_encode(f + SRNIC_UDP_HLEN, dst, src, &p) +
	      SRNIC_UDP_HLEN;
	srnic_wire_udp_wrap(f, len, ntohl(src_ip.s_addr),
			    ntohl(dst_ip.s_addr), SRNIC_UDP_PORT, 0, 0);
	for (i = 0; i < sizeof(udp_faults) / sizeof(udp_faults[0]); i++) {
		const struct udp_fault *u = &udp_faults[i];

		memcpy(g, f, len);
		g[u->off] = u->val;
		if (u->fix)
			ip_sum(g + 14, 20);
		send_frame(fd, &addr, g, len, 1);
		bad += u->ours != 0;
		frags += u->ours == 2;
		not_ours += !u->ours;
	}
	/* and the frame as a raw node sends it */
	len = srnic_wire_encode(g, dst, src, &p);
	send_frame(fd, &addr, g, len, 1);
	not_ours++;
	printf("sent %u damaged UDP frames to our port (%u of them fragments) "
	       "and %u frames not ours\n", bad, frags, not_ours);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 7 && !strcmp(argv[1], "udp-damage"))
		return udp_damage(argv + 2);
	if (argc == 6 && !strcmp(argv[1], "group-write"))
		return group_write(argv + 2);
	if (argc == 6 && !strcmp(argv[1], "capture"))
		return capture(argv[2], opcode(argv[3]), argv[4],
			       atoi(argv[5]));
	if (argc == 5 && !strcmp(argv[1], "replay"))
		return replay(argv[2], argv[3], (unsigned)atoi(argv[4]));
	if (argc == 11 && !strcmp(argv[1], "forge"))
		return forge(argv + 2);
	return usage();
}
