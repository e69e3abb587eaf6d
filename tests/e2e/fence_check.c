/* SPDX-License-Identifier: MIT */
/*
 * fence_check: robust placement over the wire (docs/reliability.md,
 * "Robust placement").  The server registers three pages as an ordinary
 * region (not on-demand), with remote write and read, then unmaps the
 * middle page without deregistering: the slip of a program that frees a
 * buffer still registered.
 *
 *   server:  fence_check [-p PORT]
 *   client:  fence_check [-p PORT] HOST
 *
 * The client, on QP 0 then QP 1 (a WRITE that fails takes its QP to the
 * error state):
 *  1. WRITEs a page into page 0: SUCCESS, the region works;
 *  2. WRITEs into page 1, the hole: IBV_WC_REM_ACCESS_ERR;
 *  3. on QP 1, WRITEs into page 2, which is mapped: REM_ACCESS_ERR all
 *     the same, the key is fenced.
 * Then the server, alive, finds page 0 with the client's bytes and page 2
 * with its canary, and deregisters the region (0).  The test script reads
 * b's counters: page_fault and fault_fenced went up by one.
 * Prints "ok"/"not ok" lines and "# N checks, M failed".
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "verbs_util.h"

#define TCP_MS 30000
#define POLL_MS 15000
#define CANARY 0x5a

static int port = 18533;
static long page;

static void die(const char *what)
{
	fprintf(stderr, "fence_check: %s (errno %d)\n", what, errno);
	exit(2);
}

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];
	struct vu_dest mine[2], peer[2];
	int fd;
};

/* The device, a PD, a CQ and two RC QPs in INIT. */
static void open_side(struct side *s, int access)
{
	int i;

	s->ctx = vu_open_first();
	if (!s->ctx || !(s->pd = ibv_alloc_pd(s->ctx)) ||
	    !(s->cq = ibv_create_cq(s->ctx, 8, NULL, NULL, 0)))
		die("setup");
	for (i = 0; i < 2; i++) {
		s->qp[i] = vu_create_rc_qp(s->pd, s->cq, 4, 1, 1, NULL);
		if (!s->qp[i] || vu_to_init(s->qp[i], access) ||
		    ibv_query_gid(s->ctx, VU_PORT, VU_GID_INDEX,
				  &s->mine[i].gid))
			die("QP setup");
		s->mine[i].qpn = s->qp[i]->qp_num;
	}
}

/* The QPs exchanged with the peer's (host NULL: the server's side) and
 * connected. */
static void meet_side(struct side *s, const char *host)
{
	struct ibv_qp_attr a;
	int i, mask;

	s->fd = vu_tcp_connect(host, port, TCP_MS);
	if (s->fd < 0 || vu_exchange(s->fd, s->mine, s->peer, 2, TCP_MS))
		die("exchange");
	for (i = 0; i < 2; i++) {
		mask = vu_rtr_attr(&a, &s->peer[i], IBV_MTU_4096);
		if (ibv_modify_qp(s->qp[i], &a, mask))
			die("RTR");
		mask = vu_rts_attr(&a, 0, 14, 7);
		if (ibv_modify_qp(s->qp[i], &a, mask))
			die("RTS");
	}
}

/* One signaled WRITE of a page from buf to the server's page n: its
 * completion status. */
static int write_page(struct side *s, int q, struct ibv_mr *mr, int n)
{
	struct ibv_sge sge = {.addr = (uintptr_t)mr->addr, .length = page,
			      .lkey = mr->lkey};
	struct ibv_send_wr wr = {0}, *bad;
	struct ibv_wc wc;

	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = s->peer[0].addr + (uint64_t)n * page;
	wr.wr.rdma.rkey = s->peer[0].rkey;
	if (ibv_post_send(s->qp[q], &wr, &bad))
		die("ibv_post_send");
	if (vu_poll(s->cq, &wc, POLL_MS) != 1)
		die("no completion");
	printf("# WRITE to page %d: %s\n", n, vu_wc_str(&wc, 1));
	return wc.status;
}

static void client(const char *host)
{
	struct side s = {0};
	struct ibv_mr *mr;
	void *buf;

	open_side(&s, 0);
	meet_side(&s, host);
	buf = malloc(page);
	if (!buf)
		die("memory");
	vu_fill(buf, page, 7);
	mr = ibv_reg_mr(s.pd, buf, page, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr");
	vu_check(write_page(&s, 0, mr, 0) == IBV_WC_SUCCESS, NULL,
		 "a WRITE into a mapped page of the region: SUCCESS");
	vu_check(write_page(&s, 0, mr, 1) == IBV_WC_REM_ACCESS_ERR, NULL,
		 "a WRITE into the page unmapped under the key: "
		 "REM_ACCESS_ERR");
	vu_check(write_page(&s, 1, mr, 2) == IBV_WC_REM_ACCESS_ERR, NULL,
		 "after it, a WRITE into a mapped page: REM_ACCESS_ERR (the "
		 "key fenced)");
	if (vu_sync(s.fd, TCP_MS))
		die("sync with the server");
	ibv_dereg_mr(mr);
	free(buf);
}

static void server(void)
{
	struct side s = {0};
	uint8_t *mem, *want;
	struct ibv_mr *mr;
	long i;

	mem = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	want = malloc(page);
	if (mem == MAP_FAILED || !want)
		die("memory");
	memset(mem, CANARY, 3 * page);
	open_side(&s, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	mr = ibv_reg_mr(s.pd, mem, 3 * page,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ);
	/* (the system call itself: not a hook's munmap, as free() does) */
	if (!mr || syscall(SYS_munmap, mem + page, page))
		die("the region and its hole");
	s.mine[0].rkey = mr->rkey;
	s.mine[0].addr = (uintptr_t)mem;
	meet_side(&s, NULL);
	printf("fence_check server: ready\n");
	if (vu_sync(s.fd, 120000))
		die("sync with the client");
	vu_fill(want, page, 7);
	vu_check(!memcmp(mem, want, page), NULL,
		 "page 0 holds the client's WRITE");
	for (i = 0; i < page && mem[2 * page + i] == CANARY; i++)
		;
	vu_check(i == page, NULL, "page 2 keeps its canary (byte %ld)", i);
	vu_check(ibv_dereg_mr(mr) == 0, NULL,
		 "the fenced region deregisters");
	free(want);
}

int main(int argc, char **argv)
{
	int o;

	while ((o = getopt(argc, argv, "p:")) != -1)
		if (o == 'p')
			port = atoi(optarg);
	setvbuf(stdout, NULL, _IOLBF, 0);
	page = sysconf(_SC_PAGESIZE);
	if (optind < argc)
		client(argv[optind]);
	else
		server();
	printf("# %u checks, %u failed\n", vu_checks, vu_failed);
	return vu_failed ? 1 : 0;
}
