/* SPDX-License-Identifier: MIT */
/*
 * srnic_ipd: IP over srnic (seed 002, "IP over the adapter", l.462-478).
 * A TUN interface, srnic-ip0, whose IPv4 packets travel as UD datagrams
 * on srnic0: to one node with its address's QP, to every node (a
 * broadcast or a multicast address) through one multicast group all the
 * daemons join.  A datagram is at most the port's MTU, so a larger packet
 * goes as IP fragments cut here, with their headers rewritten, and the
 * receiving kernel puts it together again: the seed's way of carrying a
 * large broadcast, which RDMA cannot send as one message.
 *
 * The daemons find each other through the group: each says HELLO (its
 * address on srnic-ip0, its QP number) when it starts, every second for a
 * while, and whenever it hears a daemon it did not know.
 *
 *   srnic_ipd ADDR/PREFIX [-n IFNAME] [-m MTU]
 *
 * Runs one thread, the loop below, until SIGTERM or SIGINT; then prints
 * its counts ("ipd: sent P packets in F datagrams, received R
 * datagrams, ...").  A failed send or receive ends it (exit 1).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <netinet/ip.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define GRH 40
#define GID_INDEX 1		/* ::ffff:IPV4 */
#define QKEY 0x51a1e0u
#define GROUP "::ffff:239.255.80.1"	/* every daemon's */
#define SEND_SLOTS 256
/* (a 64 KiB packet is 64 datagrams on a port of MTU 1024, and a TCP
 * window holds many: fewer receives posted dropped fragments, whose
 * packets the kernel then failed to reassemble) */
#define RECV_SLOTS 4096
#define MAX_PEERS 64
#define MAX_PKT 65535

enum { T_HELLO = 'H', T_PACKET = 'P' };

struct hdr {			/* before every datagram's payload */
	uint8_t magic[3];	/* "sIP" */
	uint8_t type;
};

struct hello {
	struct hdr h;
	uint32_t ip;		/* network order */
	uint32_t qpn;
};

struct peer {
	uint32_t ip, qpn;
	struct ibv_ah *ah;
};

static struct {
	int tun;
	uint32_t ip, mask, bcast;	/* network order */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq;	/* sends (polled), receives (the channel's) */
	struct ibv_qp *qp;
	struct ibv_ah *group_ah;
	union ibv_gid group;
	uint32_t mtu;		/* a datagram's bytes */
	uint8_t *sbuf, *rbuf;
	struct ibv_mr *smr, *rmr;
	uint32_t shead, sfree;	/* the send slots: next, free */
	struct peer peers[MAX_PEERS];
	int npeers;
	uint64_t pkts_out, dgrams_out, dgrams_in, no_peer;
	uint16_t next_id;	/* IP ids for the fragments of DF packets */
} ipd;

static volatile sig_atomic_t stop;

static void die(const char *what, int err)
{
	fprintf(stderr, "srnic_ipd: %s: %s\n", what, strerror(err));
	exit(1);
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* ---- the interface ---------------------------------------------------- */

static void ifreq_addr(struct ifreq *r, uint32_t ip)
{
	struct sockaddr_in *in = (struct sockaddr_in *)&r->ifr_addr;

	memset(&r->ifr_addr, 0, sizeof(r->ifr_addr));
	in->sin_family = AF_INET;
	in->sin_addr.s_addr = ip;
}

/* srnic-ip0: up, its address, its MTU (a packet's largest: the kernel
 * hands whole packets up to it, cut here). */
static void tun_open(const char *name, int mtu)
{
	struct ifreq r = {0};
	int s;

	ipd.tun = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (ipd.tun < 0)
		die("/dev/net/tun", errno);
	r.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(r.ifr_name, IFNAMSIZ, "%s", name);
	if (ioctl(ipd.tun, TUNSETIFF, &r))
		die("TUNSETIFF", errno);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		die("socket", errno);
	r.ifr_mtu = mtu;
	if (ioctl(s, SIOCSIFMTU, &r))
		die("SIOCSIFMTU", errno);
	ifreq_addr(&r, ipd.ip);
	if (ioctl(s, SIOCSIFADDR, &r))
		die("SIOCSIFADDR", errno);
	ifreq_addr(&r, ipd.mask);
	if (ioctl(s, SIOCSIFNETMASK, &r))
		die("SIOCSIFNETMASK", errno);
	ifreq_addr(&r, ipd.bcast);
	if (ioctl(s, SIOCSIFBRDADDR, &r))
		die("SIOCSIFBRDADDR", errno);
	if (ioctl(s, SIOCGIFFLAGS, &r))
		die("SIOCGIFFLAGS", errno);
	r.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &r))
		die("SIOCSIFFLAGS", errno);
	close(s);
}

/* The IP stack's room for packets being reassembled, raised to 64 MiB
 * where it is less (the node's network namespace's own setting): a 64 KiB
 * packet in datagrams of 1024 bytes takes its 4 MiB default many times
 * over with a TCP window's worth in flight, and the kernel then dropped
 * fragments and failed reassemblies (iperf fell from 0.9 Gb/s to 0.1). */
static void reassembly_room(void)
{
	const char *f = "/proc/sys/net/ipv4/ipfrag_high_thresh";
	const long want = 64L << 20;
	char v[32] = "";
	FILE *fp = fopen(f, "r+");

	if (!fp)
		return;
	if (fgets(v, sizeof(v), fp) && atol(v) < want) {
		rewind(fp);
		fprintf(fp, "%ld\n", want);
	}
	fclose(fp);
}

/* ---- the QP ------------------------------------------------------------ */

static void post_recv(uint32_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(ipd.rbuf + (size_t)slot * (GRH + ipd.mtu)),
		.length = GRH + ipd.mtu, .lkey = ipd.rmr->lkey};
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1},
			   *bad;

	if (ibv_post_recv(ipd.qp, &wr, &bad))
		die("ibv_post_recv", errno);
}

static struct ibv_ah *ah_to(const union ibv_gid *gid)
{
	struct ibv_ah_attr a = {.is_global = 1, .port_num = 1,
				.grh = {.dgid = *gid, .sgid_index = GID_INDEX,
					.hop_limit = 1}};

	return ibv_create_ah(ipd.pd, &a);
}

static void qp_open(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD, .sq_sig_all = 1,
		.cap = {.max_send_wr = SEND_SLOTS, .max_recv_wr = RECV_SLOTS,
			.max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1,
				.qkey = QKEY};

	if (!list || !list[0] || !(ipd.ctx = ibv_open_device(list[0])))
		die("no RDMA device", ENODEV);
	ibv_free_device_list(list);
	if (ibv_query_port(ipd.ctx, 1, &pa))
		die("ibv_query_port", errno);
	ipd.mtu = 128u << pa.active_mtu;
	ipd.pd = ibv_alloc_pd(ipd.ctx);
	ipd.ch = ibv_create_comp_channel(ipd.ctx);
	if (!ipd.pd || !ipd.ch)
		die("pd, channel", errno);
	/* (sends on a CQ of their own: waiting for a send slot takes no
	 * receive, so no HELLO is learnt while a packet is being cut) */
	ipd.scq = ibv_create_cq(ipd.ctx, SEND_SLOTS, NULL, NULL, 0);
	ipd.rcq = ibv_create_cq(ipd.ctx, RECV_SLOTS, NULL, ipd.ch, 0);
	ia.send_cq = ipd.scq;
	ia.recv_cq = ipd.rcq;
	if (!ipd.scq || !ipd.rcq || !(ipd.qp = ibv_create_qp(ipd.pd, &ia)))
		die("cq, qp", errno);
	if (ibv_modify_qp(ipd.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					   IBV_QP_PORT | IBV_QP_QKEY))
		die("INIT", errno);
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(ipd.qp, &a, IBV_QP_STATE))
		die("RTR", errno);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(ipd.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("RTS", errno);
	inet_pton(AF_INET6, GROUP, &ipd.group);
	if (ibv_attach_mcast(ipd.qp, &ipd.group, 0))
		die("ibv_attach_mcast", errno);
	if (!(ipd.group_ah = ah_to(&ipd.group)))
		die("the group's address handle", errno);
	ipd.sbuf = calloc(SEND_SLOTS, ipd.mtu);
	ipd.rbuf = calloc(RECV_SLOTS, GRH + ipd.mtu);
	if (!ipd.sbuf || !ipd.rbuf)
		die("buffers", ENOMEM);
	ipd.smr = ibv_reg_mr(ipd.pd, ipd.sbuf, (size_t)SEND_SLOTS * ipd.mtu, 0);
	ipd.rmr = ibv_reg_mr(ipd.pd, ipd.rbuf,
			     (size_t)RECV_SLOTS * (GRH + ipd.mtu),
			     IBV_ACCESS_LOCAL_WRITE);
	if (!ipd.smr || !ipd.rmr)
		die("ibv_reg_mr", errno);
	for (uint32_t i = 0; i < RECV_SLOTS; i++)
		post_recv(i);
	ipd.sfree = SEND_SLOTS;
	if (ibv_req_notify_cq(ipd.rcq, 0))
		die("ibv_req_notify_cq", errno);
}

/* ---- sending ----------------------------------------------------------- */

/* Sends done: their slots free.  A failed one is the end (a UD QP in
 * error sends no more). */
static void send_completions(void)
{
	struct ibv_wc wc[32];
	int n, i;

	while ((n = ibv_poll_cq(ipd.scq, 32, wc)) > 0)
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "srnic_ipd: a send failed: %s\n",
					ibv_wc_status_str(wc[i].status));
				exit(1);
			}
			ipd.sfree++;
		}
	if (n < 0)
		die("ibv_poll_cq", EIO);
}

/* A send slot, once a send of the ring's completed if none is free. */
static uint8_t *slot(uint32_t *id)
{
	while (!ipd.sfree) {
		if (stop)
			exit(0);
		send_completions();
	}
	*id = ipd.shead;
	ipd.shead = (ipd.shead + 1) % SEND_SLOTS;
	ipd.sfree--;
	return ipd.sbuf + (size_t)*id * ipd.mtu;
}

static void send_slot(uint32_t id, uint32_t len, struct ibv_ah *ah,
		      uint32_t qpn)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(ipd.sbuf + (size_t)id * ipd.mtu),
			      .length = len, .lkey = ipd.smr->lkey};
	struct ibv_send_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .wr.ud = {.ah = ah, .remote_qpn = qpn,
					   .remote_qkey = QKEY}},
			   *bad;

	if (ibv_post_send(ipd.qp, &wr, &bad))
		die("ibv_post_send", errno);
	ipd.dgrams_out++;
}

static void hello(void)
{
	uint32_t id;
	struct hello *h = (struct hello *)slot(&id);

	memcpy(h->h.magic, "sIP", 3);
	h->h.type = T_HELLO;
	h->ip = ipd.ip;
	h->qpn = htonl(ipd.qp->qp_num);
	send_slot(id, sizeof(*h), ipd.group_ah, 0xffffff);
}

static uint16_t ip_sum(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)b[i] << 8 | b[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return htons((uint16_t)~s);
}

/* The packet, in datagrams to (ah, qpn): itself if it fits, else IP
 * fragments of it, each with the header rewritten (its length, offset,
 * more-fragments flag and checksum), as a router cuts them. */
static void send_packet(const uint8_t *pkt, size_t len, struct ibv_ah *ah,
			uint32_t qpn)
{
	const struct iphdr *ip = (const struct iphdr *)pkt;
	size_t hl = (size_t)ip->ihl * 4, room = ipd.mtu - sizeof(struct hdr);
	size_t step = (room - hl) & ~(size_t)7, off;
	uint16_t frag0 = ntohs(ip->frag_off), ip_id = ip->id;
	uint32_t id;

	ipd.pkts_out++;
	/* (a packet sent with DF may have IP id 0, as the kernel gives
	 * unconnected UDP sockets': fragments of two such packets would
	 * share a reassembly key, and a lost one spoil both) */
	if (len > room && (frag0 & IP_DF))
		ip_id = htons(++ipd.next_id);
	for (off = 0; off < len - hl || off == 0; off += step) {
		size_t n = len - hl - off < step ? len - hl - off : step;
		uint8_t *d = slot(&id);
		struct iphdr *f = (struct iphdr *)(d + sizeof(struct hdr));
		bool more = off + n < len - hl;

		memcpy(d, "sIP", 3);
		d[3] = T_PACKET;
		if (len <= room) {	/* whole */
			memcpy(f, pkt, len);
			send_slot(id, (uint32_t)(sizeof(struct hdr) + len), ah, qpn);
			return;
		}
		memcpy(f, pkt, hl);
		memcpy((uint8_t *)f + hl, pkt + hl + off, n);
		f->tot_len = htons((uint16_t)(hl + n));
		f->id = ip_id;
		f->frag_off = htons((uint16_t)(((frag0 & IP_OFFMASK) + off / 8) |
					       (more || (frag0 & IP_MF) ? IP_MF : 0)));
		f->check = 0;
		f->check = ip_sum(f, hl);
		send_slot(id, (uint32_t)(sizeof(struct hdr) + hl + n), ah, qpn);
	}
}

static struct peer *peer_of(uint32_t ip)
{
	for (int i = 0; i < ipd.npeers; i++)
		if (ipd.peers[i].ip == ip)
			return &ipd.peers[i];
	return NULL;
}

/* A packet the kernel routed to srnic-ip0. */
static void from_tun(void)
{
	static uint8_t pkt[MAX_PKT];
	ssize_t n = read(ipd.tun, pkt, sizeof(pkt));
	const struct iphdr *ip = (const struct iphdr *)pkt;
	struct peer *p;

	if (n < (ssize_t)sizeof(*ip) || ip->version != 4 || ip->ihl < 5 ||
	    (size_t)ip->ihl * 4 > (size_t)n)
		return;	/* (IPv6 and the like: not carried) */
	if (ip->daddr == ipd.bcast || ip->daddr == INADDR_BROADCAST ||
	    IN_MULTICAST(ntohl(ip->daddr))) {
		send_packet(pkt, (size_t)n, ipd.group_ah, 0xffffff);
		return;
	}
	p = peer_of(ip->daddr);
	if (!p) {
		ipd.no_peer++;
		return;
	}
	send_packet(pkt, (size_t)n, p->ah, p->qpn);
}

/* ---- receiving ----------------------------------------------------------- */

static void learn(const struct hello *h, const uint8_t *grh)
{
	union ibv_gid gid;
	struct peer *p;

	if (h->ip == ipd.ip)
		return;
	p = peer_of(h->ip);
	if (p && p->qpn == ntohl(h->qpn))
		return;
	if (!p) {
		if (ipd.npeers == MAX_PEERS)
			return;
		p = &ipd.peers[ipd.npeers++];
	} else {
		ibv_destroy_ah(p->ah);
	}
	/* (the sender's GID: the GRH's source, an IPv4 header's in its last
	 * 20 bytes, as srnic writes it) */
	memset(&gid, 0, sizeof(gid));
	gid.raw[10] = gid.raw[11] = 0xff;
	memcpy(&gid.raw[12], grh + 20 + 12, 4);
	p->ah = ah_to(&gid);
	if (!p->ah) {	/* (not reachable yet: its next HELLO tries again) */
		*p = ipd.peers[--ipd.npeers];
		return;
	}
	p->ip = h->ip;
	p->qpn = ntohl(h->qpn);
	printf("ipd: peer %s, QP %u (%d known)\n",
	       inet_ntoa(*(struct in_addr *)&p->ip), p->qpn, ipd.npeers);
	fflush(stdout);
	hello();	/* (a newcomer learns of us at once) */
}

static void received(const struct ibv_wc *wc)
{
	const uint8_t *grh = ipd.rbuf + (size_t)wc->wr_id * (GRH + ipd.mtu);
	const uint8_t *d = grh + GRH;
	size_t n = wc->byte_len > GRH ? wc->byte_len - GRH : 0;

	if (wc->status != IBV_WC_SUCCESS && wc->status != IBV_WC_LOC_LEN_ERR) {
		fprintf(stderr, "srnic_ipd: a receive failed: %s\n",
			ibv_wc_status_str(wc->status));
		exit(1);	/* (the QP is in error) */
	}
	if (wc->status == IBV_WC_SUCCESS && n > sizeof(struct hdr) &&
	    !memcmp(d, "sIP", 3)) {
		if (d[3] == T_HELLO && n >= sizeof(struct hello))
			learn((const struct hello *)d, grh);
		else if (d[3] == T_PACKET) {
			ipd.dgrams_in++;
			(void)!write(ipd.tun, d + sizeof(struct hdr),
				     n - sizeof(struct hdr));
		}
	}
	post_recv((uint32_t)wc->wr_id);
}

static void receive_completions(void)
{
	struct ibv_wc wc[32];
	int n, i;

	while ((n = ibv_poll_cq(ipd.rcq, 32, wc)) > 0)
		for (i = 0; i < n; i++)
			received(&wc[i]);
	if (n < 0)
		die("ibv_poll_cq", EIO);
}

/* The channel's event, the CQ armed again, then what it holds. */
static void cq_event(void)
{
	struct ibv_cq *cq;
	void *ctx;

	if (ibv_get_cq_event(ipd.ch, &cq, &ctx) == 0) {
		ibv_ack_cq_events(cq, 1);
		if (ibv_req_notify_cq(ipd.rcq, 0))
			die("ibv_req_notify_cq", errno);
	}
	receive_completions();
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void parse(const char *arg)
{
	char a[32];
	const char *slash = strchr(arg, '/');
	int prefix = slash ? atoi(slash + 1) : 24;

	snprintf(a, sizeof(a), "%.*s", slash ? (int)(slash - arg) : 31, arg);
	if (inet_pton(AF_INET, a, &ipd.ip) != 1 || prefix < 1 || prefix > 30) {
		fprintf(stderr, "srnic_ipd: ADDR/PREFIX, e.g. 10.56.0.1/24\n");
		exit(2);
	}
	ipd.mask = htonl(~0u << (32 - prefix));
	ipd.bcast = ipd.ip | ~ipd.mask;
}

int main(int argc, char **argv)
{
	const char *name = "srnic-ip0";
	int opt, mtu = 65520;
	uint64_t start, next_hello = 0;

	while ((opt = getopt(argc, argv, "n:m:")) != -1) {
		if (opt == 'n')
			name = optarg;
		else if (opt == 'm')
			mtu = atoi(optarg);
		else
			return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: srnic_ipd ADDR/PREFIX [-n IFNAME] [-m MTU]\n");
		return 2;
	}
	parse(argv[optind]);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	qp_open();
	tun_open(name, mtu);
	reassembly_room();
	fcntl(ipd.ch->fd, F_SETFL, fcntl(ipd.ch->fd, F_GETFL) | O_NONBLOCK);
	printf("ipd: %s up, %s, datagrams of %u bytes\n", name, argv[optind],
	       ipd.mtu);
	fflush(stdout);
	start = now_ms();
	while (!stop) {
		struct pollfd p[2] = {{.fd = ipd.tun, .events = POLLIN},
				      {.fd = ipd.ch->fd, .events = POLLIN}};
		uint64_t t = now_ms();

		/* HELLO: every second for the first 10, then every 10 */
		if (t >= next_hello) {
			hello();
			next_hello = t + (t - start < 10000 ? 1000 : 10000);
		}
		if (poll(p, 2, 200) < 0)
			continue;
		if (p[1].revents)
			cq_event();
		for (int k = 0; k < 64 && (p[0].revents & POLLIN); k++) {
			struct pollfd q = {.fd = ipd.tun, .events = POLLIN};

			from_tun();
			if (poll(&q, 1, 0) != 1)
				break;
		}
		send_completions();
		receive_completions();
	}
	printf("ipd: sent %llu packets in %llu datagrams, received %llu "
	       "datagrams, %llu packets to no known peer\n",
	       (unsigned long long)ipd.pkts_out,
	       (unsigned long long)ipd.dgrams_out,
	       (unsigned long long)ipd.dgrams_in,
	       (unsigned long long)ipd.no_peer);
	return 0;
}
