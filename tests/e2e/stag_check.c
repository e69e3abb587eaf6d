/* SPDX-License-Identifier: MIT */
/*
 * stag_check: key (STag) migration between a node's adapters (seed 003;
 * docs/key-migration.md), on a testbed whose nodes have two adapters,
 * srnic0 on port 0 and srnic1 on port 1, keys looked up per adapter
 * (./srnic testbed up --devices 2).  Every QP and key here is srnic0's.
 *
 *   b:  stag_check [-p PORT] [-s SIZE]
 *   a:  stag_check [-p PORT] [-s SIZE] HOST
 *
 *  A. a WRITEs SIZE bytes (1 MiB WRITEs, 16 in flight) to a key of b's,
 *     printing "progress N%" every 10%: the harness takes b's srnic0 port
 *     down on the way (./srnic demo stag-migration does at 30%), and the
 *     rest arrives at srnic1, which imports the key.  No WRITE fails, and
 *     b's region ends equal to a's bytes.
 *  B. A WRITE with a key nobody issued: IBV_WC_REM_ACCESS_ERR, and the
 *     region whose key it resembles is unchanged.
 *  C. A key b deregistered: IBV_WC_REM_ACCESS_ERR, its memory unchanged.
 *  D. A key imported, then a SEND with invalidate of it: the SEND
 *     completes (b's receive says which key), and a WRITE after it gets
 *     IBV_WC_REM_ACCESS_ERR: b's region holds the first WRITE's bytes.
 * B, C and D expect b's srnic0 port down already (their requests arrive
 * at srnic1).  Each phase has a QP of its own (an access error ends one).
 * Prints "ok"/"not ok" lines and "# N checks, M failed".
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_util.h"

#define CHUNK (1u << 20)
#define DEPTH 16
#define SMALL 4096
#define D_LEN 32768
#define NQP 4
#define TIMEOUT_MS 30000

static uint64_t wrong(const uint8_t *p, uint64_t len, uint32_t seed)
{
	uint64_t i, n = 0;

	for (i = 0; i < len; i++)
		n += p[i] != vu_pattern(seed, i);
	return n;
}

/* srnic0, by name: the adapter whose keys these are. */
static struct ibv_context *open_srnic0(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "srnic0"))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx)
		fprintf(stderr, "stag_check: no srnic0\n");
	return ctx;
}

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[NQP];
	union ibv_gid gid;
	int fd;
};

static int connect_qps(struct side *s, struct vu_dest *mine,
		       struct vu_dest *theirs)
{
	int i, rc = 0;

	if (vu_exchange(s->fd, mine, theirs, NQP, TIMEOUT_MS))
		return -1;
	for (i = 0; i < NQP && !rc; i++) {
		/* (a long timeout: the path moves to the other adapter
		 * once b's HELLOs on port 0 are missed, after 300 ms) */
		rc = vu_to_init(s->qp[i], IBV_ACCESS_REMOTE_WRITE) ||
		     vu_to_rtr(s->qp[i], &theirs[i], IBV_MTU_1024) ||
		     vu_to_rts(s->qp[i], mine[i].psn, 16, 7);
	}
	return rc ? -1 : 0;
}

static int setup(struct side *s, const char *host, int port)
{
	int i;

	s->ctx = open_srnic0();
	if (!s->ctx || ibv_query_gid(s->ctx, VU_PORT, VU_GID_INDEX, &s->gid))
		return -1;
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 4 * DEPTH, NULL, NULL, 0);
	if (!s->pd || !s->cq)
		return -1;
	for (i = 0; i < NQP; i++) {
		s->qp[i] = vu_create_rc_qp(s->pd, s->cq, 2 * DEPTH, 4, 1, NULL);
		if (!s->qp[i])
			return -1;
	}
	s->fd = vu_tcp_connect(host, port, TIMEOUT_MS);
	return s->fd < 0 ? -1 : 0;
}

static int member(int port, uint64_t size)
{
	int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct vu_dest mine[NQP], theirs[NQP];
	uint8_t *a = malloc(size), *canary = malloc(SMALL),
		*gone = malloc(SMALL), *d = malloc(D_LEN), *rbuf = malloc(64);
	struct ibv_mr *mr_a, *mr_c, *mr_g, *mr_d, *mr_r;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = {.wr_id = 9, .sg_list = &sge, .num_sge = 1},
			   *bad;
	struct ibv_wc wc;
	struct side s;
	int i, got;

	if (!a || !canary || !gone || !d || !rbuf || setup(&s, NULL, port))
		return 2;
	vu_fill(a, size, 0xca);
	vu_fill(canary, SMALL, 0xca);
	vu_fill(gone, SMALL, 0xca);
	vu_fill(d, D_LEN, 0xca);
	mr_a = ibv_reg_mr(s.pd, a, size, rw);
	mr_c = ibv_reg_mr(s.pd, canary, SMALL, rw);
	mr_g = ibv_reg_mr(s.pd, gone, SMALL, rw);
	mr_d = ibv_reg_mr(s.pd, d, D_LEN, rw);
	mr_r = ibv_reg_mr(s.pd, rbuf, 64, IBV_ACCESS_LOCAL_WRITE);
	if (!mr_a || !mr_c || !mr_g || !mr_d || !mr_r)
		return 2;
	for (i = 0; i < NQP; i++) {
		mine[i] = (struct vu_dest){.qpn = s.qp[i]->qp_num,
					   .psn = 100 + i, .gid = s.gid};
	}
	mine[0].rkey = mr_a->rkey, mine[0].addr = (uintptr_t)a;
	mine[1].rkey = mr_c->rkey, mine[1].addr = (uintptr_t)canary;
	mine[2].rkey = mr_g->rkey, mine[2].addr = (uintptr_t)gone;
	mine[3].rkey = mr_d->rkey, mine[3].addr = (uintptr_t)d;
	sge = (struct ibv_sge){(uintptr_t)rbuf, 64, mr_r->lkey};
	if (connect_qps(&s, mine, theirs) || ibv_post_recv(s.qp[3], &rwr, &bad))
		return 2;

	/* A */
	if (vu_sync(s.fd, 600000))
		return 2;
	vu_check(wrong(a, size, 77) == 0, NULL,
		 "A: the %lu bytes a wrote, every one in place",
		 (unsigned long)size);
	/* B */
	if (vu_sync(s.fd, TIMEOUT_MS))
		return 2;
	vu_check(wrong(canary, SMALL, 0xca) == 0, NULL,
		 "B: the region next to the unknown key is unchanged");
	/* C */
	vu_check(ibv_dereg_mr(mr_g) == 0, NULL, "C: a key deregistered");
	if (vu_sync(s.fd, TIMEOUT_MS) || vu_sync(s.fd, TIMEOUT_MS))
		return 2;
	vu_check(wrong(gone, SMALL, 0xca) == 0, NULL,
		 "C: its memory is unchanged");
	/* D */
	got = vu_poll(s.cq, &wc, TIMEOUT_MS);
	vu_check(got == 1 && wc.status == IBV_WC_SUCCESS &&
			 (wc.wc_flags & IBV_WC_WITH_INV) &&
			 wc.invalidated_rkey == mr_d->rkey,
		 vu_wc_str(&wc, got),
		 "D: the SEND invalidated the imported key");
	if (vu_sync(s.fd, TIMEOUT_MS))
		return 2;
	vu_check(wrong(d, D_LEN, 78) == 0, NULL,
		 "D: the region holds the WRITE before the SEND, nothing "
		 "after it");
	return 0;
}

static int post_write(struct ibv_qp *qp, uint64_t id, void *buf, uint32_t len,
		      uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {(uintptr_t)buf, len, lkey};
	struct ibv_send_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

/* One WRITE on qp, waited for: its completion's status (or -1). */
static int write_once(struct side *s, struct ibv_qp *qp, void *buf,
		      uint32_t len, uint32_t lkey, uint64_t raddr,
		      uint32_t rkey)
{
	struct ibv_wc wc;

	if (post_write(qp, 1, buf, len, lkey, raddr, rkey) ||
	    vu_poll(s->cq, &wc, TIMEOUT_MS) != 1)
		return -1;
	return wc.status;
}

static int sender(const char *host, int port, uint64_t size)
{
	struct vu_dest mine[NQP], theirs[NQP];
	uint8_t *buf = malloc(size + D_LEN);
	uint64_t nchunks = (size + CHUNK - 1) / CHUNK, next = 0, done = 0;
	unsigned inflight = 0, pct = 0;
	struct ibv_mr *mr;
	struct side s;
	int i, st, failed = 0;

	if (!buf || setup(&s, host, port))
		return 2;
	vu_fill(buf, size, 77);
	mr = ibv_reg_mr(s.pd, buf, size + D_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		return 2;
	for (i = 0; i < NQP; i++)
		mine[i] = (struct vu_dest){.qpn = s.qp[i]->qp_num,
					   .psn = 200 + i, .gid = s.gid};
	if (connect_qps(&s, mine, theirs))
		return 2;

	/* A: the bulk, the path moving under it */
	while (done < nchunks) {
		struct ibv_wc wc[DEPTH];
		int n;

		while (inflight < DEPTH && next < nchunks) {
			uint64_t off = next * CHUNK;
			uint32_t len = size - off < CHUNK ? (uint32_t)(size - off)
							  : CHUNK;

			if (post_write(s.qp[0], next, buf + off, len, mr->lkey,
				       theirs[0].addr + off, theirs[0].rkey))
				return 2;
			next++;
			inflight++;
		}
		n = ibv_poll_cq(s.cq, DEPTH, wc);
		for (i = 0; i < n; i++) {
			inflight--;
			done++;
			if (wc[i].status != IBV_WC_SUCCESS && !failed++)
				printf("write %lu: %s\n",
				       (unsigned long)wc[i].wr_id,
				       ibv_wc_status_str(wc[i].status));
		}
		if (failed)
			break;
		if (done * 10 / nchunks != pct) {
			pct = (unsigned)(done * 10 / nchunks);
			printf("progress %u%%\n", pct * 10);
			fflush(stdout);
		}
	}
	vu_check(!failed && done == nchunks, NULL,
		 "A: %lu MiB in %lu WRITEs, none failed",
		 (unsigned long)(size >> 20), (unsigned long)nchunks);
	if (vu_sync(s.fd, TIMEOUT_MS))
		return 2;

	/* B: a key nobody issued (b's canary key, its tag changed) */
	st = write_once(&s, s.qp[1], buf, SMALL, mr->lkey, theirs[1].addr,
			theirs[1].rkey ^ 0x00200000u);
	vu_check(st == IBV_WC_REM_ACCESS_ERR, NULL,
		 "B: a WRITE with an unknown key: %s",
		 st < 0 ? "nothing" : ibv_wc_status_str(st));
	if (vu_sync(s.fd, TIMEOUT_MS))
		return 2;

	/* C: a key b deregistered */
	if (vu_sync(s.fd, TIMEOUT_MS))
		return 2;
	st = write_once(&s, s.qp[2], buf, SMALL, mr->lkey, theirs[2].addr,
			theirs[2].rkey);
	vu_check(st == IBV_WC_REM_ACCESS_ERR, NULL,
		 "C: a WRITE with a deregistered key: %s",
		 st < 0 ? "nothing" : ibv_wc_status_str(st));
	if (vu_sync(s.fd, TIMEOUT_MS))
		return 2;

	/* D: imported (the first WRITE), then invalidated by a SEND */
	vu_fill(buf + size, D_LEN, 78);
	st = write_once(&s, s.qp[3], buf + size, D_LEN, mr->lkey,
			theirs[3].addr, theirs[3].rkey);
	vu_check(st == IBV_WC_SUCCESS, NULL, "D: a WRITE to a key b's other "
		 "adapter imports: %s", st < 0 ? "nothing"
					       : ibv_wc_status_str(st));
	{
		struct ibv_sge sge = {(uintptr_t)buf, 8, mr->lkey};
		struct ibv_send_wr wr = {.wr_id = 2, .sg_list = &sge,
					 .num_sge = 1,
					 .opcode = IBV_WR_SEND_WITH_INV,
					 .send_flags = IBV_SEND_SIGNALED},
				   *bad;
		struct ibv_wc wc;
		int got;

		wr.invalidate_rkey = theirs[3].rkey;
		got = ibv_post_send(s.qp[3], &wr, &bad) ? -1
			: vu_poll(s.cq, &wc, TIMEOUT_MS);
		vu_check(got == 1 && wc.status == IBV_WC_SUCCESS,
			 vu_wc_str(&wc, got), "D: the SEND with invalidate");
	}
	vu_fill(buf + size, D_LEN, 79);
	st = write_once(&s, s.qp[3], buf + size, D_LEN, mr->lkey,
			theirs[3].addr, theirs[3].rkey);
	vu_check(st == IBV_WC_REM_ACCESS_ERR, NULL,
		 "D: a WRITE after it: %s", st < 0 ? "nothing"
						   : ibv_wc_status_str(st));
	if (vu_sync(s.fd, TIMEOUT_MS))
		return 2;
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t size = 64u << 20;
	int port = 18800, opt, rc;

	while ((opt = getopt(argc, argv, "p:s:")) != -1) {
		if (opt == 'p')
			port = atoi(optarg);
		else if (opt == 's')
			size = strtoull(optarg, NULL, 0) << 20;
	}
	rc = optind < argc ? sender(argv[optind], port, size)
			   : member(port, size);
	printf("# %u checks, %u failed\n", vu_checks, vu_failed);
	return rc ? rc : vu_failed != 0;
}
