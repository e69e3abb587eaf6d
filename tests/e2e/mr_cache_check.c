/* SPDX-License-Identifier: MIT */
/*
 * mr_cache_check: srnic's registration cache (include/srnic.h's
 * srnic_mr_cache_*; docs/registration-cache.md), its regions used for
 * WRITEs over the wire and every byte of them checked.
 *
 *   server:  mr_cache_check [-p PORT]         a 4 MiB target, 1024 slots
 *   client:  mr_cache_check [-p PORT] HOST
 *
 * Run with SRNIC_MR_CACHE_IDLE_S=3 and the preload library (./srnic exec).
 * The client:
 *  1. WRITEs 10,000 pages from rotating buffers across a 64 MiB mapping
 *     into the server's slots, a cached region (srnic_mr_cache_get, put
 *     back at its completion) for each: the registrations are the 16 MiB
 *     fragments the buffers touch, no more, and every other get a hit;
 *     then READs the slots back, each the last page written to it;
 *  2. munmaps the mapping: every region over it is invalidated and, held
 *     by nobody, deregistered; maps new memory at the same address and
 *     WRITEs from it again: its gets miss (a region of before is never
 *     handed out), and the slots read back are the new bytes;
 *  3. mremaps the mapping: its regions are invalidated again;
 *  4. waits past the idle time: the regions left idle are deregistered;
 *  and the calls' errors: EINVAL for a bad range or access, or a put of a
 *  region the cache did not hand out.
 * Prints "ok"/"not ok" lines and "# N checks, M failed".
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "srnic.h"
#include "verbs_util.h"

#define AREA (64u << 20)
#define PAGE 4096u
#define SLOTS 1024u
#define SENDS 10000u
#define AGAIN 200u		/* WRITEs of phase 2 */
#define DEPTH 64
#define TCP_MS 30000
#define POLL_MS 15000

static int port = 18531;

struct client {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct vu_dest peer;
	uint8_t *area;
	uint8_t *verify;	/* the slots read back */
	struct ibv_mr *verify_mr;
	struct ibv_mr *held[DEPTH];	/* by wr_id % DEPTH */
	uint32_t last[SLOTS];	/* the message last written to each slot */
	unsigned inflight;
	unsigned puts_failed;
};

static void die(const char *what)
{
	fprintf(stderr, "mr_cache_check: %s (errno %d)\n", what, errno);
	exit(2);
}

/* Message i's page: spread over the mapping, 37 pages apart. */
static uint8_t *page_of(struct client *c, uint32_t i)
{
	return c->area + (uint64_t)(i * 37u % (AREA / PAGE - 1)) * PAGE;
}

static void reap(struct client *c, unsigned down_to)
{
	struct ibv_wc wc;

	while (c->inflight > down_to) {
		if (vu_poll(c->cq, &wc, POLL_MS) != 1 ||
		    wc.status != IBV_WC_SUCCESS) {
			vu_check(0, vu_wc_str(&wc, 1), "a WRITE completed");
			exit(1);
		}
		if (c->held[wc.wr_id % DEPTH]) {
			c->puts_failed +=
				srnic_mr_cache_put(c->held[wc.wr_id % DEPTH]) != 0;
			c->held[wc.wr_id % DEPTH] = NULL;
		}
		c->inflight--;
	}
}

/* WRITE message i (its page filled with its pattern) to slot i % SLOTS,
 * from a cached region. */
static void write_msg(struct client *c, uint32_t i)
{
	uint8_t *p = page_of(c, i);
	struct ibv_mr *mr;
	struct ibv_sge sge;
	struct ibv_send_wr wr = {0}, *bad;

	reap(c, DEPTH - 1);
	vu_fill(p, PAGE, i);
	mr = srnic_mr_cache_get(c->pd, p, PAGE, 0);
	if (!mr)
		die("srnic_mr_cache_get");
	c->held[i % DEPTH] = mr;
	sge = (struct ibv_sge){.addr = (uintptr_t)p, .length = PAGE,
			       .lkey = mr->lkey};
	wr.wr_id = i;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = c->peer.addr + (uint64_t)(i % SLOTS) * PAGE;
	wr.wr.rdma.rkey = c->peer.rkey;
	if (ibv_post_send(c->qp, &wr, &bad))
		die("ibv_post_send");
	c->inflight++;
	c->last[i % SLOTS] = i;
}

/* READ every slot back: each the last page written to it. */
static void verify_slots(struct client *c, const char *what)
{
	struct ibv_sge sge = {.addr = (uintptr_t)c->verify,
			      .length = SLOTS * PAGE, .lkey = c->verify_mr->lkey};
	struct ibv_send_wr wr = {0}, *bad;
	unsigned s, wrong = 0;
	uint8_t *want = malloc(PAGE);

	reap(c, 0);
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = c->peer.addr;
	wr.wr.rdma.rkey = c->peer.rkey;
	if (!want || ibv_post_send(c->qp, &wr, &bad))
		die("the READ back");
	c->inflight++;
	reap(c, 0);
	for (s = 0; s < SLOTS; s++) {
		vu_fill(want, PAGE, c->last[s]);
		wrong += memcmp(want, c->verify + (uint64_t)s * PAGE, PAGE) != 0;
	}
	free(want);
	vu_check(!wrong, NULL, "%s: %u of %u slots wrong", what, wrong, SLOTS);
}

/* The 16 MiB fragments messages [from, to) touch. */
static unsigned fragments(struct client *c, uint32_t from, uint32_t to,
			  uint64_t frag)
{
	static uint8_t seen[(AREA >> 20) + 2];
	uintptr_t first = (uintptr_t)c->area / frag;
	unsigned n = 0;
	uint32_t i;

	memset(seen, 0, sizeof(seen));
	for (i = from; i < to; i++) {
		uintptr_t f = (uintptr_t)page_of(c, i) / frag - first;

		if (f < sizeof(seen) && !seen[f]) {
			seen[f] = 1;
			n++;
		}
	}
	return n;
}

static void query(struct client *c, struct srnic_mr_cache_attr *a)
{
	if (srnic_mr_cache_query(c->ctx, a))
		die("srnic_mr_cache_query");
}

static void rotate(struct client *c)
{
	struct srnic_mr_cache_attr a;
	unsigned touched;
	uint32_t i;

	query(c, &a);
	vu_check(a.hooked, NULL, "unmapping is seen (the preload library)");
	for (i = 0; i < SENDS; i++)
		write_msg(c, i);
	reap(c, 0);
	touched = fragments(c, 0, SENDS, a.frag_bytes);
	query(c, &a);
	vu_check(a.registrations == touched && a.gets == SENDS &&
			 a.hits == SENDS - touched && !c->puts_failed,
		 NULL, "%u WRITEs from rotating buffers: %llu registrations for "
		 "%u fragments touched, %llu hits, %u puts failed", SENDS,
		 (unsigned long long)a.registrations, touched,
		 (unsigned long long)a.hits, c->puts_failed);
	verify_slots(c, "rotating buffers");
}

static void remap(struct client *c)
{
	struct srnic_mr_cache_attr a, b;
	uint8_t *again;
	uint32_t i;

	query(c, &a);
	vu_check(a.regions == fragments(c, 0, SENDS, a.frag_bytes), NULL,
		 "before munmap: %llu regions held",
		 (unsigned long long)a.regions);
	if (munmap(c->area, AREA))
		die("munmap");
	query(c, &b);
	vu_check(a.regions && b.invalidated == a.invalidated + a.regions &&
			 !b.regions &&
			 b.deregistrations == a.deregistrations + a.regions,
		 NULL, "munmap: %llu regions invalidated and deregistered",
		 (unsigned long long)(b.invalidated - a.invalidated));
	again = mmap(c->area, AREA, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (again != c->area)
		die("mmap at the same address");
	for (i = SENDS; i < SENDS + AGAIN; i++)
		write_msg(c, i);
	reap(c, 0);
	query(c, &a);
	vu_check(a.registrations == b.registrations +
					    fragments(c, SENDS, SENDS + AGAIN,
						      a.frag_bytes),
		 NULL, "new memory at the same address: registered anew "
		 "(%llu registrations)",
		 (unsigned long long)(a.registrations - b.registrations));
	verify_slots(c, "new memory at the same address");
	c->area = mremap(c->area, AREA, AREA / 2, 0);
	if (c->area == MAP_FAILED)
		die("mremap");
	query(c, &b);
	vu_check(a.regions && b.invalidated == a.invalidated + a.regions &&
			 !b.regions,
		 NULL, "mremap: %llu regions invalidated",
		 (unsigned long long)(b.invalidated - a.invalidated));
}

/* Regions idle past SRNIC_MR_CACHE_IDLE_S go; the errors. */
static void idle_and_errors(struct client *c)
{
	struct srnic_mr_cache_attr a;
	struct ibv_mr *mr = srnic_mr_cache_get(c->pd, c->area, PAGE,
					       IBV_ACCESS_REMOTE_WRITE);
	struct ibv_mr other = {.context = c->ctx};

	vu_check(mr && srnic_mr_cache_put(mr) == 0, NULL,
		 "a region with remote write");
	query(c, &a);
	vu_check(a.regions == 1, NULL, "put back, it stays: %llu regions",
		 (unsigned long long)a.regions);
	usleep(a.idle_ms * 1000 + 300000);
	query(c, &a);
	vu_check(!a.regions, NULL, "idle %llu ms: %llu regions left",
		 (unsigned long long)a.idle_ms, (unsigned long long)a.regions);
	errno = 0;
	vu_check(!srnic_mr_cache_get(c->pd, c->area, 0, 0) && errno == EINVAL &&
			 !srnic_mr_cache_get(c->pd, c->area, PAGE,
					     IBV_ACCESS_MW_BIND) &&
			 errno == EINVAL &&
			 srnic_mr_cache_put(c->verify_mr) == EINVAL &&
			 srnic_mr_cache_put(&other) == EINVAL,
		 NULL, "EINVAL: length 0, an access it does not cache, a put "
		 "of a region it did not hand out");
}

/* The mapping, on a 16 MiB boundary (the default fragment's), so that
 * the fragments its buffers touch are its own. */
static uint8_t *aligned_area(void)
{
	const uintptr_t frag = 16u << 20;
	uint8_t *m = mmap(NULL, AREA + frag, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t a, head;

	if (m == MAP_FAILED)
		die("mmap");
	a = ((uintptr_t)m + frag - 1) & ~(frag - 1);
	head = a - (uintptr_t)m;
	if ((head && munmap(m, head)) ||
	    munmap((uint8_t *)a + AREA, frag - head))
		die("munmap of the unaligned ends");
	return (uint8_t *)a;
}

static void client(const char *host)
{
	struct client c = {0};
	struct vu_dest mine = {0};
	struct ibv_qp_attr a;
	int fd, mask;

	c.ctx = vu_open_first();
	if (!c.ctx || !(c.pd = ibv_alloc_pd(c.ctx)) ||
	    !(c.cq = ibv_create_cq(c.ctx, 2 * DEPTH, NULL, NULL, 0)) ||
	    !(c.qp = vu_create_rc_qp(c.pd, c.cq, 2 * DEPTH, 1, 1, NULL)) ||
	    vu_to_init(c.qp, 0) ||
	    ibv_query_gid(c.ctx, VU_PORT, VU_GID_INDEX, &mine.gid))
		die("setup");
	c.area = aligned_area();
	c.verify = malloc(SLOTS * PAGE);
	if (!c.verify)
		die("memory");
	c.verify_mr = ibv_reg_mr(c.pd, c.verify, SLOTS * PAGE,
				 IBV_ACCESS_LOCAL_WRITE);
	if (!c.verify_mr)
		die("ibv_reg_mr");
	mine.qpn = c.qp->qp_num;
	fd = vu_tcp_connect(host, port, TCP_MS);
	if (fd < 0 || vu_exchange(fd, &mine, &c.peer, 1, TCP_MS))
		die("exchange");
	mask = vu_rtr_attr(&a, &c.peer, IBV_MTU_4096);
	if (ibv_modify_qp(c.qp, &a, mask))
		die("RTR");
	mask = vu_rts_attr(&a, 0, 14, 7);
	if (ibv_modify_qp(c.qp, &a, mask))
		die("RTS");
	rotate(&c);
	remap(&c);
	idle_and_errors(&c);
	close(fd);
}

static void server(void)
{
	struct ibv_context *ctx = vu_open_first();
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	struct ibv_qp *qp = cq ? vu_create_rc_qp(pd, cq, 4, 1, 1, NULL) : NULL;
	uint8_t *t = calloc(SLOTS, PAGE);
	struct vu_dest mine = {0}, peer;
	struct ibv_mr *mr;
	struct ibv_qp_attr a;
	int fd, mask;

	if (!qp || !t ||
	    vu_to_init(qp, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) ||
	    ibv_query_gid(ctx, VU_PORT, VU_GID_INDEX, &mine.gid))
		die("setup");
	mr = ibv_reg_mr(pd, t, SLOTS * PAGE,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ);
	if (!mr)
		die("ibv_reg_mr");
	mine.qpn = qp->qp_num;
	mine.rkey = mr->rkey;
	mine.addr = (uintptr_t)t;
	fd = vu_tcp_connect(NULL, port, TCP_MS);
	if (fd < 0 || vu_exchange(fd, &mine, &peer, 1, TCP_MS))
		die("exchange");
	mask = vu_rtr_attr(&a, &peer, IBV_MTU_4096);
	if (ibv_modify_qp(qp, &a, mask))
		die("RTR");
	mask = vu_rts_attr(&a, 0, 14, 7);
	if (ibv_modify_qp(qp, &a, mask))
		die("RTS");
	printf("mr_cache_check server: ready\n");
	fflush(stdout);
	vu_wait_eof(fd, 120000);
}

int main(int argc, char **argv)
{
	int o;

	while ((o = getopt(argc, argv, "p:")) != -1)
		if (o == 'p')
			port = atoi(optarg);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (optind < argc)
		client(argv[optind]);
	else
		server();
	printf("# %u checks, %u failed\n", vu_checks, vu_failed);
	return vu_failed ? 1 : 0;
}
