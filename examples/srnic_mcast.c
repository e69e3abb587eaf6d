/* SPDX-License-Identifier: MIT */
/*
 * srnic_mcast: multicast RDMA WRITE through srnic's own verbs
 * (include/srnic.h).  One node sends; every other node that registered a
 * region for the group gets the same bytes at the same offsets.
 *
 *   member:  srnic_mcast member -g GROUP -s SIZE
 *   sender:  srnic_mcast send -g GROUP -s SIZE [-c CHUNK] [-m MEMBERS]
 *                             [-S SEED] [-q QPS] [-r]
 *
 * A member registers SIZE bytes for GROUP, filled with a canary pattern,
 * says "member ready", and answers commands on its standard input:
 * "check SEED LEN" counts the bytes of [0, LEN) that differ from the
 * sender's pattern for SEED and those after LEN that differ from the
 * canary ("check wrong N"), and says what its completions (srnic_group_
 * notify: one for each WRITE that landed whole) add up to ("completions C
 * bytes B repeated R": R offsets had more than one); "canary" counts the
 * bytes that differ from the canary ("canary changed N"); "quit" or the
 * end of input ends it.
 *
 * The sender waits until MEMBERS nodes hold a region for GROUP (default
 * 1), then writes SIZE bytes of its pattern in CHUNK-byte multicast WRITEs
 * (default 1 MiB), 16 in flight, and prints what it sent.  With -q it
 * sends from QPS UD QPs (1 to 32), chunk i from the (i mod QPS)th, one
 * WRITE of each in flight at least: each is a sender of its own at the
 * members, which track each one's messages apart (group/member.c).  A WRITE that
 * fails names the members that failed it (srnic_mc_failed); with -r the
 * sender then goes on to the members left, writing again what had not
 * completed, else it stops there.  It exits 0 when every WRITE completed
 * without error (with -r: when the last try of each did), else 2.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "srnic.h"

#define DEPTH 16		/* WRITEs in flight (at least one a QP) */
#define MAX_MEMBERS 64
#define MAX_QPS 32		/* -q */

static void die(const char *what, int err)
{
	fprintf(stderr, "srnic_mcast: %s: %s\n", what, strerror(err));
	exit(1);
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* Each byte depends on the seed and its offset: a byte at the wrong place,
 * or left from another run, shows. */
static uint8_t pattern(uint32_t seed, uint64_t off)
{
	uint64_t x = (off + 1) * 0x9e3779b97f4a7c15ull ^ seed;

	x ^= x >> 29;
	return (uint8_t)(x * 0xbf58476d1ce4e5b9ull >> 56);
}

#define CANARY_SEED 0xca9a27u

static void fill(uint8_t *p, uint64_t len, uint32_t seed)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern(seed, i);
}

static uint64_t differ(const uint8_t *p, uint64_t from, uint64_t to,
		       uint32_t seed)
{
	uint64_t i, n = 0;

	for (i = from; i < to; i++)
		n += p[i] != pattern(seed, i);
	return n;
}

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	if (*end == 'K' || *end == 'k')
		v <<= 10;
	else if (*end == 'M' || *end == 'm')
		v <<= 20;
	else if (*end == 'G' || *end == 'g')
		v <<= 30;
	return v;
}

struct dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[MAX_QPS];
	unsigned nqps;
};

static void open_dev(struct dev *d)
{
	struct ibv_device **list = ibv_get_device_list(NULL);

	if (!list || !list[0])
		die("no RDMA device", ENODEV);
	if (!srnic_is_srnic_device(list[0]))
		die(ibv_get_device_name(list[0]), EOPNOTSUPP);
	d->ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!d->ctx)
		die("ibv_open_device", errno);
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd)
		die("ibv_alloc_pd", errno);
}

static void close_qps(struct dev *d)
{
	unsigned i;

	for (i = 0; i < d->nqps; i++)
		if (d->qp[i])
			ibv_destroy_qp(d->qp[i]);
	d->nqps = 0;
}

/* Everything goes, the device last: its engine writes the node's counters
 * a last time as it stops. */
static void close_dev(struct dev *d)
{
	close_qps(d);
	if (d->cq)
		ibv_destroy_cq(d->cq);
	ibv_dealloc_pd(d->pd);
	ibv_close_device(d->ctx);
}

#define MEMBER_CQE 65536	/* the completions a member keeps */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The member's completions so far, each a WRITE that landed: how many,
 * their bytes, and how many offsets came more than once. */
static void member_completions(struct ibv_cq *cq)
{
	static uint64_t off[MEMBER_CQE];
	static unsigned n;
	static uint64_t bytes;
	struct ibv_wc wc[64];
	unsigned i, repeated = 0;
	int got;

	while ((got = ibv_poll_cq(cq, 64, wc)) > 0)
		for (i = 0; i < (unsigned)got && n < MEMBER_CQE; i++) {
			off[n++] = wc[i].wr_id;
			bytes += wc[i].byte_len;
		}
	qsort(off, n, sizeof(off[0]), cmp_u64);
	for (i = 1; i < n; i++)
		repeated += off[i] == off[i - 1];
	printf("completions %u bytes %" PRIu64 " repeated %u\n", n, bytes,
	       repeated);
}

static int member(struct dev *d, unsigned group, uint64_t size)
{
	uint8_t *buf = malloc(size);
	char line[128];
	struct ibv_mr *mr;
	int rc;

	if (!buf)
		die("malloc", ENOMEM);
	fill(buf, size, CANARY_SEED);
	mr = srnic_reg_mr_group(d->pd, buf, size,
				IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE,
				group);
	if (!mr)
		die("srnic_reg_mr_group", errno);
	d->cq = ibv_create_cq(d->ctx, MEMBER_CQE, NULL, NULL, 0);
	if (!d->cq)
		die("ibv_create_cq", errno);
	rc = srnic_group_notify(mr, d->cq);
	if (rc)
		die("srnic_group_notify", rc);
	printf("member ready group %u size %" PRIu64 "\n", group, size);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		unsigned seed;
		uint64_t len;

		if (sscanf(line, "check %u %" SCNu64, &seed, &len) == 2) {
			if (len > size)
				len = size;
			printf("check wrong %" PRIu64 "\n",
			       differ(buf, 0, len, seed) +
				       differ(buf, len, size, CANARY_SEED));
			member_completions(d->cq);
		} else if (!strncmp(line, "canary", 6)) {
			printf("canary changed %" PRIu64 "\n",
			       differ(buf, 0, size, CANARY_SEED));
		} else if (!strncmp(line, "quit", 4)) {
			break;
		}
		fflush(stdout);
	}
	ibv_dereg_mr(mr);	/* (the CQ is free to go then) */
	free(buf);
	close_dev(d);
	return 0;
}

static struct ibv_qp *ud_qp(struct dev *d)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.cap = {.max_send_wr = 2 * DEPTH, .max_recv_wr = 1,
			.max_send_sge = 1, .max_recv_sge = 1},
	};
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0,
				.port_num = 1, .qkey = 0x11111111};
	struct ibv_qp *qp;
	int rc;

	ia.send_cq = ia.recv_cq = d->cq;
	qp = ibv_create_qp(d->pd, &ia);
	if (!qp)
		die("ibv_create_qp", errno);
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					   IBV_QP_PORT | IBV_QP_QKEY);
	a.qp_state = IBV_QPS_RTR;
	if (!rc)
		rc = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (!rc)
		rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	if (rc)
		die("ibv_modify_qp", rc);
	return qp;
}

/* The sender's QPs, nqps of them, on one CQ. */
static void ud_qps(struct dev *d, unsigned nqps)
{
	d->cq = ibv_create_cq(d->ctx, 4 * MAX_QPS, NULL, NULL, 0);
	if (!d->cq)
		die("ibv_create_cq", errno);
	for (d->nqps = 0; d->nqps < nqps; d->nqps++)
		d->qp[d->nqps] = ud_qp(d);
}

/* The QP a completion is of. */
static struct ibv_qp *qp_of(struct dev *d, uint32_t qp_num)
{
	unsigned i;

	for (i = 0; i < d->nqps; i++)
		if (d->qp[i]->qp_num == qp_num)
			return d->qp[i];
	return d->qp[0];
}

/* Wait until want nodes hold a region for group (10 s at most); prints
 * them.  Returns how many there are. */
static int wait_members(struct dev *d, unsigned group, int want)
{
	struct srnic_group_member m[MAX_MEMBERS];
	uint64_t until = now_ms() + 10000;
	int n, i;

	do {
		n = srnic_query_group(d->ctx, group, m, MAX_MEMBERS);
		if (n < 0)
			die("srnic_query_group", errno);
		if (n >= want)
			break;
		usleep(20000);
	} while (now_ms() < until);
	printf("members of group %u:", group);
	for (i = 0; i < n && i < MAX_MEMBERS; i++)
		printf(" %s (%u.%u.%u.%u)", m[i].node, m[i].ipv4 >> 24,
		       (m[i].ipv4 >> 16) & 255, (m[i].ipv4 >> 8) & 255,
		       m[i].ipv4 & 255);
	printf("\n");
	fflush(stdout);
	return n;
}

static void report_failed(struct ibv_qp *qp)
{
	struct srnic_group_member m[MAX_MEMBERS];
	uint64_t wr_id;
	int n = srnic_mc_failed(qp, &wr_id, m, MAX_MEMBERS), i;

	printf("write %" PRIu64 " failed:", wr_id);
	for (i = 0; i < n && i < MAX_MEMBERS; i++) {
		printf(" %s (%s)", m[i].node,
		       ibv_wc_status_str((enum ibv_wc_status)m[i].status));
	}
	printf("\n");
	fflush(stdout);
}

static int sender(struct dev *d, unsigned group, uint64_t size,
		  uint64_t chunk, int want, uint32_t seed, int resume,
		  unsigned nqps)
{
	uint64_t nchunks = (size + chunk - 1) / chunk, next = 0, done = 0;
	uint8_t *ok, *posted, *buf = malloc(size);
	uint64_t t0, failures = 0, deadline, last_pct = 0;
	unsigned inflight = 0, depth = nqps > DEPTH ? nqps : DEPTH;
	struct ibv_mr *mr;
	int members;

	ok = calloc(nchunks, 1);
	posted = calloc(nchunks, 1);
	if (!buf || !ok || !posted)
		die("malloc", ENOMEM);
	fill(buf, size, seed);
	mr = ibv_reg_mr(d->pd, buf, size, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr", errno);
	ud_qps(d, nqps);
	members = wait_members(d, group, want);
	if (members < want) {
		fprintf(stderr, "srnic_mcast: %d members of group %u, not %d\n",
			members, group, want);
		exit(2);
	}
	t0 = now_ms();
	deadline = t0 + 120000;
	while (done < nchunks && now_ms() < deadline) {
		struct ibv_wc wc[MAX_QPS];
		int n, i;

		while (inflight < depth && next < nchunks) {
			uint64_t off = next * chunk;
			struct ibv_sge sge = {
				.addr = (uintptr_t)buf + off,
				.length = (uint32_t)(size - off < chunk ? size - off
									: chunk),
				.lkey = mr->lkey};
			struct srnic_mc_write_wr wr = {
				.wr_id = next, .sg_list = &sge, .num_sge = 1,
				.send_flags = IBV_SEND_SIGNALED,
				.group = group, .offset = off};
			int rc;

			if (ok[next] || posted[next]) {
				next++;
				continue;
			}
			rc = srnic_post_mc_write(d->qp[next % d->nqps], &wr);
			if (rc)
				die("srnic_post_mc_write", rc);
			posted[next++] = 1;
			inflight++;
		}
		n = ibv_poll_cq(d->cq, MAX_QPS, wc);
		if (n < 0)
			die("ibv_poll_cq", EIO);
		for (i = 0; i < n; i++) {
			uint64_t c = wc[i].wr_id;

			inflight--;
			posted[c] = 0;
			if (wc[i].status == IBV_WC_SUCCESS &&
			    wc[i].opcode == IBV_WC_RDMA_WRITE) {
				ok[c] = 1;
				done++;
				continue;
			}
			if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
				continue;
			failures++;
			printf("write %" PRIu64 ": %s\n", c,
			       ibv_wc_status_str(wc[i].status));
			report_failed(qp_of(d, wc[i].qp_num));
			if (!resume) {
				printf("stopped: %" PRIu64 " of %" PRIu64
				       " writes done\n", done, nchunks);
				close_qps(d);
				ibv_dereg_mr(mr);
				close_dev(d);
				return 2;
			}
		}
		if (!inflight && done < nchunks) {
			/* (after a failure the send queue stopped: flushed
			 * WRITEs go again, to the members left) */
			struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS};
			unsigned q;
			int rc = 0;

			for (q = 0; failures && q < d->nqps; q++)
				rc |= ibv_modify_qp(d->qp[q], &a, IBV_QP_STATE);
			if (failures && !rc)
				wait_members(d, group, 1);
			next = 0;
		}
		if (done * 10 / nchunks != last_pct) {
			last_pct = done * 10 / nchunks;
			printf("progress %" PRIu64 "%%\n", last_pct * 10);
			fflush(stdout);
		}
		if (!n)
			usleep(50);
	}
	{
		double secs = (double)(now_ms() - t0) / 1000;

		printf("sent %" PRIu64 " bytes to group %u in %.2f s (%.2f Gb/s), "
		       "%" PRIu64 " writes, %" PRIu64 " failed\n",
		       size, group, secs,
		       secs > 0 ? (double)size * 8 / secs / 1e9 : 0.0, nchunks,
		       failures);
	}
	ibv_dereg_mr(mr);
	close_dev(d);
	return done == nchunks && (resume || !failures) ? 0 : 2;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: srnic_mcast member -g GROUP -s SIZE\n"
		"       srnic_mcast send -g GROUP -s SIZE [-c CHUNK] "
		"[-m MEMBERS] [-S SEED] [-q QPS] [-r]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	unsigned group = 1;
	uint64_t size = 1 << 20, chunk = 1 << 20;
	int want = 1, resume = 0, opt;
	unsigned nqps = 1;
	uint32_t seed = 1;
	struct dev d = {0};
	const char *role;

	if (argc < 2)
		usage();
	role = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "g:s:c:m:S:q:r")) != -1) {
		switch (opt) {
		case 'g': group = (unsigned)strtoul(optarg, NULL, 0); break;
		case 's': size = parse_size(optarg); break;
		case 'c': chunk = parse_size(optarg); break;
		case 'm': want = atoi(optarg); break;
		case 'S': seed = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'q': nqps = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'r': resume = 1; break;
		default: usage();
		}
	}
	if (!size || !chunk || chunk > (1u << 31) || !nqps || nqps > MAX_QPS)
		usage();
	open_dev(&d);
	if (!strcmp(role, "member"))
		return member(&d, group, size);
	if (!strcmp(role, "send"))
		return sender(&d, group, size, chunk, want, seed, resume,
			      nqps);
	usage();
	return 1;
}
