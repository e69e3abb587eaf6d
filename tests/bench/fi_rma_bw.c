/* SPDX-License-Identifier: MIT */
/*
 * fi_rma_bw: RDMA WRITE bandwidth through libfabric, the peer srnic is
 * measured against (issue 5): what a program could use instead of srnic on
 * a machine without RDMA hardware is libfabric's tcp provider.  Debian ships
 * no fabtests, so this is ours, on libfabric's public API only.
 *
 *   server:  fi_rma_bw [-p PORT] [-P PROV]
 *   client:  fi_rma_bw [-p PORT] [-P PROV] [-s SIZE] [-D SECS] [-w WINDOW] HOST
 *
 * The two meet over a TCP socket (addresses, key, buffer), then the client
 * keeps WINDOW fi_write()s of SIZE bytes in flight into the server's
 * registered buffer for SECS seconds and prints, last,
 *   "fi_rma_bw: SIZE bytes, N writes, T s, G Gb/s".
 * The server drives its provider's progress until the client says it is
 * done (the tcp provider progresses the target in its calls).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>

#define NAME_MAX_LEN 64

/* What each side tells the other. */
struct peer_info {
	uint8_t name[NAME_MAX_LEN];	/* endpoint address */
	uint64_t name_len;
	uint64_t addr;			/* buffer, as the peer targets it */
	uint64_t key;
};

struct fab {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct fid_mr *mr;
	fi_addr_t peer;
};

static void die(const char *what, int rc)
{
	fprintf(stderr, "fi_rma_bw: %s: %s\n", what,
		rc ? fi_strerror(-rc) : strerror(errno));
	exit(2);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The TCP rendezvous: the server accepts one client on port, the client
 * connects to host:port (retrying while the server starts). */
static int meet(const char *host, const char *port)
{
	struct addrinfo hints = {.ai_family = AF_INET,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = host ? 0 : AI_PASSIVE},
			*ai;
	int fd, one = 1, i;

	if (getaddrinfo(host, port, &hints, &ai))
		die("getaddrinfo", 0);
	fd = socket(ai->ai_family, ai->ai_socktype, 0);
	if (fd < 0)
		die("socket", 0);
	if (!host) {
		int c;

		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 1))
			die("bind/listen", 0);
		c = accept(fd, NULL, NULL);
		close(fd);
		fd = c;
	} else {
		for (i = 0; connect(fd, ai->ai_addr, ai->ai_addrlen); i++) {
			if (i == 300)
				die("connect", 0);
			usleep(100000);
		}
	}
	freeaddrinfo(ai);
	if (fd < 0)
		die("accept", 0);
	return fd;
}

static void xfer(int fd, void *buf, size_t len, int out)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = out ? write(fd, p, len) : read(fd, p, len);

		if (n <= 0)
			die(out ? "socket write" : "socket read", 0);
		p += n;
		len -= (size_t)n;
	}
}

/* Open the provider on the interface the rendezvous socket uses. */
static void fab_open(struct fab *f, const char *prov, int fd, void *buf,
		     size_t len)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT,
				     .size = 1024};
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct sockaddr_in me;
	socklen_t melen = sizeof(me);
	char ip[INET_ADDRSTRLEN];
	int rc;

	if (!hints)
		die("fi_allocinfo", -FI_ENOMEM);
	getsockname(fd, (struct sockaddr *)&me, &melen);
	inet_ntop(AF_INET, &me.sin_addr, ip, sizeof(ip));
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_RMA | FI_MSG;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY |
				      FI_MR_ENDPOINT;
	hints->fabric_attr->prov_name = strdup(prov);
	rc = fi_getinfo(FI_VERSION(1, 17), ip, NULL, FI_SOURCE, hints,
			&f->info);
	if (rc)
		die("fi_getinfo", rc);
	fi_freeinfo(hints);
	if ((rc = fi_fabric(f->info->fabric_attr, &f->fabric, NULL)) ||
	    (rc = fi_domain(f->fabric, f->info, &f->domain, NULL)) ||
	    (rc = fi_cq_open(f->domain, &cq_attr, &f->cq, NULL)) ||
	    (rc = fi_av_open(f->domain, &av_attr, &f->av, NULL)) ||
	    (rc = fi_endpoint(f->domain, f->info, &f->ep, NULL)) ||
	    (rc = fi_ep_bind(f->ep, &f->cq->fid, FI_TRANSMIT | FI_RECV)) ||
	    (rc = fi_ep_bind(f->ep, &f->av->fid, 0)) ||
	    (rc = fi_enable(f->ep)))
		die("opening the endpoint", rc);
	rc = fi_mr_reg(f->domain, buf, len, FI_WRITE | FI_REMOTE_WRITE, 0, 0,
		       0, &f->mr, NULL);
	if (rc)
		die("fi_mr_reg", rc);
	if (f->info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
		if ((rc = fi_mr_bind(f->mr, &f->ep->fid, 0)) ||
		    (rc = fi_mr_enable(f->mr)))
			die("binding the region", rc);
	}
}

static void exchange(struct fab *f, int fd, void *buf, struct peer_info *them)
{
	struct peer_info me = {0};
	size_t len = sizeof(me.name);
	int rc;

	rc = fi_getname(&f->ep->fid, me.name, &len);
	if (rc)
		die("fi_getname", rc);
	me.name_len = len;
	me.addr = f->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR
			  ? (uintptr_t)buf
			  : 0;
	me.key = fi_mr_key(f->mr);
	xfer(fd, &me, sizeof(me), 1);
	xfer(fd, them, sizeof(*them), 0);
	if (fi_av_insert(f->av, them->name, 1, &f->peer, 0, NULL) != 1)
		die("fi_av_insert", -FI_EINVAL);
}

/* Reap completions; returns how many, or dies on an error. */
static int reap(struct fab *f)
{
	struct fi_cq_entry e[64];
	ssize_t n = fi_cq_read(f->cq, e, 64);

	if (n == -FI_EAGAIN)
		return 0;
	if (n < 0) {
		struct fi_cq_err_entry err = {0};

		fi_cq_readerr(f->cq, &err, 0);
		die("completion", -err.err);
	}
	return (int)n;
}

static void client(struct fab *f, int fd, void *buf, size_t size,
		   double secs, unsigned window, const struct peer_info *them)
{
	uint64_t posted = 0, done = 0;
	double start = now_s(), end = start + secs, t;
	void *desc = fi_mr_desc(f->mr);
	char bye = 1;

	while ((t = now_s()) < end || done < posted) {
		while (t < end && posted - done < window) {
			ssize_t rc = fi_write(f->ep, buf, size, desc, f->peer,
					      them->addr, them->key, NULL);

			if (rc == -FI_EAGAIN)
				break;
			if (rc)
				die("fi_write", (int)rc);
			posted++;
		}
		done += (uint64_t)reap(f);
	}
	t = now_s() - start;
	xfer(fd, &bye, 1, 1);
	printf("fi_rma_bw: %zu bytes, %llu writes, %.3f s, %.3f Gb/s\n", size,
	       (unsigned long long)done, t, done * (double)size * 8 / t / 1e9);
}

static void server(struct fab *f, int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char bye;

	/* The target's side progresses only in its own calls. */
	while (poll(&p, 1, 0) == 0)
		reap(f);
	xfer(fd, &bye, 1, 0);
}

int main(int argc, char **argv)
{
	const char *host = NULL, *port = "18530", *prov = "tcp";
	size_t size = 65536, len;
	double secs = 5;
	unsigned window = 64;
	struct peer_info them;
	struct fab f = {0};
	void *buf;
	int opt, fd;

	while ((opt = getopt(argc, argv, "p:P:s:D:w:")) != -1) {
		switch (opt) {
		case 'p': port = optarg; break;
		case 'P': prov = optarg; break;
		case 's': size = strtoul(optarg, NULL, 0); break;
		case 'D': secs = atof(optarg); break;
		case 'w': window = (unsigned)atoi(optarg); break;
		default:
			fprintf(stderr, "usage: fi_rma_bw [-p PORT] [-P PROV] "
				"[-s SIZE] [-D SECS] [-w WINDOW] [HOST]\n");
			return 2;
		}
	}
	if (optind < argc)
		host = argv[optind];
	if (!size || !window || secs <= 0) {
		fprintf(stderr, "fi_rma_bw: size, window and time must be > 0\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	len = size;
	if (posix_memalign(&buf, 4096, len))
		die("memory", 0);
	memset(buf, 0x5a, len);
	fd = meet(host, port);
	fab_open(&f, prov, fd, buf, len);
	exchange(&f, fd, buf, &them);
	if (host)
		client(&f, fd, buf, size, secs, window, &them);
	else
		server(&f, fd);
	close(fd);
	fi_close(&f.ep->fid);
	fi_close(&f.mr->fid);
	fi_close(&f.av->fid);
	fi_close(&f.cq->fid);
	fi_close(&f.domain->fid);
	fi_close(&f.fabric->fid);
	fi_freeinfo(f.info);
	return 0;
}
