/* SPDX-License-Identifier: MIT */
/*
 * notify_faults: completion at both ends (include/srnic.h's
 * SRNIC_SEND_REMOTE_NOTIFY) across the wire, under whatever the testbed's
 * faults do to it (e2e/06: loss, duplication, reordering).
 *
 *   notify_faults [-p PORT] [-n N]          the target (server)
 *   notify_faults [-p PORT] [-n N] HOST     the requester (client)
 *
 * The client posts N operations on one RC QP, every one with the flag:
 * operation i is a READ of slot i of the server's region when i % 3 is 0,
 * else a WRITE into it, of 1 to 4096 bytes (slot i is 4 KiB at offset
 * i * 4096; its length a function of i), at most 16 outstanding.  Each
 * completes at the client as ever; the client checks the bytes it read.
 * The server's QP accepts such completions and the server takes N from
 * its receive CQ: each of a WRITE's or a READ's opcode, its slot's address
 * and length, the WRITEs in order among themselves and the READs among
 * theirs (a READ completes at its target when its reader says it has the
 * data, later than WRITEs posted after it may), and a WRITE's bytes
 * already in its slot when its completion comes.  One lost, doubled or
 * out of order fails a check.  Both print "ok"/"not ok" lines and
 * "# N checks, M failed"; exit 0 when none failed.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srnic.h"
#include "verbs_util.h"

#define SLOT 4096u
#define WINDOW 16
#define TCP_MS 30000
#define RUN_MS 120000
#define WRITE_SEED 1000	/* a WRITE slot's pattern: WRITE_SEED + i */

static void die(const char *what)
{
	fprintf(stderr, "notify_faults: %s\n", what);
	exit(2);
}

static int is_read(uint32_t i)
{
	return i % 3 == 0;
}

static uint32_t len_of(uint32_t i)
{
	return 1 + (uint32_t)((i * 2654435761u) >> 20) % SLOT;
}

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct vu_dest remote;
	int fd;
};

/* Device, region of n slots, CQ, QP; the peer's over TCP; RTS. */
static void setup(struct side *s, const char *host, int port, uint32_t n)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ;
	struct vu_dest mine = {0};

	s->ctx = vu_open_first();
	s->buf = malloc((size_t)n * SLOT);
	if (!s->ctx || !s->buf)
		die("no device, or memory");
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = s->pd ? ibv_create_cq(s->ctx, (int)n + 2 * WINDOW, NULL,
				      NULL, 0)
		      : NULL;
	s->mr = s->pd ? ibv_reg_mr(s->pd, s->buf, (size_t)n * SLOT, access)
		      : NULL;
	s->qp = s->cq ? vu_create_rc_qp(s->pd, s->cq, 2 * WINDOW, 1, 1, NULL)
		      : NULL;
	if (!s->qp || !s->mr ||
	    ibv_query_gid(s->ctx, VU_PORT, VU_GID_INDEX, &mine.gid))
		die("PD, CQ, region or QP");
	mine.qpn = s->qp->qp_num;
	mine.rkey = s->mr->rkey;
	mine.addr = (uintptr_t)s->buf;
	s->fd = vu_tcp_connect(host, port, TCP_MS);
	if (s->fd < 0 || vu_exchange(s->fd, &mine, &s->remote, 1, TCP_MS))
		die("the peer, over TCP");
	if (vu_to_init(s->qp, access) || vu_to_rtr(s->qp, &s->remote,
						   IBV_MTU_4096) ||
	    vu_to_rts(s->qp, 0, 14, 7))
		die("the QP to RTS");
}

static void serve(struct side *s, uint32_t n)
{
	uint32_t next[2] = {0, 0}, got_n = 0, bad = 0, bytes_bad = 0, i;
	uint64_t until;

	/* the slots READs take hold their pattern; WRITE slots are
	 * filled with what they must not keep */
	for (i = 0; i < n; i++)
		if (is_read(i))
			vu_fill(s->buf + (size_t)i * SLOT, SLOT, i);
		else
			memset(s->buf + (size_t)i * SLOT, 0xa5, SLOT);
	vu_check(srnic_qp_accept_notify(s->qp, 1) == 0, NULL,
		 "the target's QP accepts completions of WRITEs and READs");
	if (vu_sync(s->fd, TCP_MS))
		die("sync");
	until = vu_now_ms() + RUN_MS;
	while (got_n < n && vu_now_ms() < until) {
		struct ibv_wc wc;
		int got = vu_poll(s->cq, &wc, 1000), rd;

		if (got != 1)
			continue;
		got_n++;
		rd = wc.opcode == SRNIC_WC_REMOTE_READ;
		if (wc.status || (!rd && wc.opcode != SRNIC_WC_REMOTE_WRITE)) {
			bad++;
			continue;
		}
		/* the next of its kind */
		for (i = next[rd]; i < n && is_read(i) != rd; i++)
			;
		next[rd] = i + 1;
		if (i >= n || wc.wr_id != (uintptr_t)s->buf + (size_t)i * SLOT ||
		    wc.byte_len != len_of(i) || wc.src_qp != s->remote.qpn) {
			if (bad++ < 4)
				fprintf(stderr, "completion %u: %s of %u bytes "
					"at %#llx, wanted op %u\n", got_n,
					rd ? "READ" : "WRITE", wc.byte_len,
					(unsigned long long)wc.wr_id, i);
			continue;
		}
		if (!rd) {
			uint8_t *p = s->buf + (size_t)i * SLOT;
			uint32_t k;

			for (k = 0; k < len_of(i); k++)
				if (p[k] != vu_pattern(WRITE_SEED + i, k))
					break;
			bytes_bad += k < len_of(i);
		}
	}
	vu_check(got_n == n, NULL, "%u of %u completions at the target", got_n,
		 n);
	vu_check(!bad, NULL, "each the next WRITE's or READ's, its address, "
		 "length and QP (%u not)", bad);
	vu_check(!bytes_bad, NULL, "each WRITE's bytes in place at its "
		 "completion (%u not)", bytes_bad);
	{
		struct ibv_wc wc;

		vu_check(vu_poll(s->cq, &wc, 200) == 0, NULL,
			 "no completion more");
	}
	vu_sync(s->fd, TCP_MS);
}

static int post(struct side *s, uint32_t i)
{
	struct ibv_sge sge = {(uintptr_t)s->buf + (size_t)i * SLOT, len_of(i),
			      s->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1,
				 .opcode = is_read(i) ? IBV_WR_RDMA_READ
						      : IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED |
					       SRNIC_SEND_REMOTE_NOTIFY},
			   *bad;

	wr.wr.rdma.remote_addr = s->remote.addr + (uint64_t)i * SLOT;
	wr.wr.rdma.rkey = s->remote.rkey;
	return ibv_post_send(s->qp, &wr, &bad);
}

static void request(struct side *s, uint32_t n)
{
	uint32_t posted = 0, done = 0, bad = 0, bytes_bad = 0, i;
	uint64_t until;

	for (i = 0; i < n; i++)
		if (is_read(i))
			memset(s->buf + (size_t)i * SLOT, 0x5a, SLOT);
		else
			vu_fill(s->buf + (size_t)i * SLOT, SLOT, WRITE_SEED + i);
	if (vu_sync(s->fd, TCP_MS))
		die("sync");
	until = vu_now_ms() + RUN_MS;
	while (done < n && vu_now_ms() < until) {
		struct ibv_wc wc;

		while (posted < n && posted - done < WINDOW)
			if (post(s, posted++))
				die("post");
		if (vu_poll(s->cq, &wc, 1000) != 1)
			continue;
		if (wc.status || wc.wr_id != done) {
			if (bad++ < 4)
				fprintf(stderr, "op %u: %s\n", done,
					vu_wc_str(&wc, 1));
			if (wc.status)
				break;	/* the QP is in error now */
		}
		i = (uint32_t)wc.wr_id;
		if (!wc.status && is_read(i)) {
			uint8_t *p = s->buf + (size_t)i * SLOT;
			uint32_t k;

			for (k = 0; k < len_of(i); k++)
				if (p[k] != vu_pattern(i, k))
					break;
			bytes_bad += k < len_of(i);
		}
		done++;
	}
	vu_check(done == n && !bad, NULL, "%u of %u operations completed at "
		 "the requester, in order (%u not)", done, n, bad);
	vu_check(!bytes_bad, NULL, "every byte read (%u READs not)",
		 bytes_bad);
	vu_sync(s->fd, RUN_MS);
}

int main(int argc, char **argv)
{
	struct side s = {0};
	uint32_t n = 600;
	int port = 18530, opt;

	while ((opt = getopt(argc, argv, "p:n:")) != -1) {
		if (opt == 'p')
			port = atoi(optarg);
		else if (opt == 'n')
			n = (uint32_t)strtoul(optarg, NULL, 0);
		else
			die("usage: notify_faults [-p PORT] [-n N] [HOST]");
	}
	if (!n || n > 100000)
		die("-n: 1 to 100000");
	setup(&s, optind < argc ? argv[optind] : NULL, port, n);
	if (optind < argc)
		request(&s, n);
	else
		serve(&s, n);
	printf("# %u checks, %u failed\n", vu_checks, vu_failed);
	return vu_failed ? 1 : 0;
}
