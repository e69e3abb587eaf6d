/* SPDX-License-Identifier: MIT */
/*
 * tpt_check: the system-wide protection table (include/srnic.h's
 * srnic_mr_publish/lookup; docs/published-keys.md) over the wire.
 *
 *   server:  tpt_check [-p PORT] NAME        publishes a region as NAME
 *   client:  tpt_check [-p PORT] NAME HOST   finds it and WRITEs to it
 *   hold:    tpt_check -H NAME               publishes, then sleeps
 *   gone:    tpt_check -G NAME HOST          NAME leaves HOST's table
 *   watch:   tpt_check -W STOPFILE NAME HOST lookups until STOPFILE is
 *
 * Server and client (each checks its part):
 *  1. the server registers 64 KiB with remote write and read and
 *     publishes it; its own node's lookup returns it; the errors (EEXIST
 *     for the name again, EINVAL for name 0 and a region without remote
 *     rights, ENOENT for an unknown name and for unpublishing what is
 *     not published); re-registered read only, the entry says so, and
 *     without a remote right it goes;
 *  2. the client looks NAME up on HOST (waiting for the table to come),
 *     connects a QP with the server (the exchange carries no key), WRITEs
 *     a pattern at the address the lookup gave under its key, and READs
 *     it back; the server finds the pattern in its region.
 * Hold prints "# published NAME rkey 0x..." and sleeps (60 s at most).
 * Gone waits up to 5 s for a lookup to say ENOENT.  Watch prints every
 * change a lookup sees ("# T ms: rkey 0x..." or "none") and, at the end,
 * "# keys seen: K1 none K2 ...", and fails if a key comes back after
 * another answer took its place.
 * Prints "ok"/"not ok" lines and "# N checks, M failed".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "srnic.h"
#include "verbs_util.h"

#define LEN (64u << 10)
#define TCP_MS 30000
#define POLL_MS 15000
#define FIND_MS 5000
#define SEEN_MAX 64

static int port = 18535;
static uint32_t name;

static void die(const char *what)
{
	fprintf(stderr, "tpt_check: %s (errno %d)\n", what, errno);
	exit(2);
}

/* HOST's RoCE v2 GID: ::ffff: and its IPv4 address. */
static void host_gid(const char *host, union ibv_gid *gid)
{
	struct addrinfo hints = {.ai_family = AF_INET}, *ai;
	const struct sockaddr_in *sin;

	if (getaddrinfo(host, NULL, &hints, &ai))
		die("the host's address");
	sin = (const struct sockaddr_in *)ai->ai_addr;
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], &sin->sin_addr, 4);
	freeaddrinfo(ai);
}

/* A lookup, retried until it finds name or ms pass: 0 or its errno. */
static int find(struct ibv_context *ctx, const union ibv_gid *gid,
		struct srnic_published_mr *out, unsigned ms)
{
	uint64_t end = vu_now_ms() + ms;
	int rc;

	while ((rc = srnic_mr_lookup(ctx, gid, name, out)) == ENOENT &&
	       vu_now_ms() < end)
		usleep(2000);
	return rc;
}

static void server_errors(struct ibv_pd *pd, struct ibv_mr *mr)
{
	struct srnic_published_mr out;
	union ibv_gid self;
	struct ibv_mr *local;
	void *buf = malloc(4096);

	if (!buf || ibv_query_gid(pd->context, VU_PORT, VU_GID_INDEX, &self))
		die("setup");
	vu_check(srnic_mr_lookup(pd->context, &self, name, &out) == 0 &&
			 out.rkey == mr->rkey &&
			 out.addr == (uintptr_t)mr->addr &&
			 out.length == LEN &&
			 out.access == (IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_READ),
		 NULL, "this node's own lookup finds the region, its rights");
	vu_check(srnic_mr_publish(mr, name) == EEXIST, NULL,
		 "the name again: EEXIST");
	vu_check(srnic_mr_publish(mr, 0) == EINVAL, NULL, "name 0: EINVAL");
	local = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	vu_check(local && srnic_mr_publish(local, name + 1) == EINVAL, NULL,
		 "a region without a remote right: EINVAL");
	vu_check(local && srnic_mr_unpublish(local) == ENOENT, NULL,
		 "unpublishing what is not published: ENOENT");
	vu_check(srnic_mr_lookup(pd->context, &self, name + 1, &out) ==
			 ENOENT,
		 NULL, "an unknown name: ENOENT");
	if (local)
		ibv_dereg_mr(local);
	free(buf);
}

/* Re-registered, the entry follows the region's rights; with none left
 * remote, it goes. */
static void rereg_follows(struct ibv_pd *pd, struct ibv_mr *mr)
{
	struct srnic_published_mr out;
	union ibv_gid self;
	int rc;

	if (ibv_query_gid(pd->context, VU_PORT, VU_GID_INDEX, &self))
		die("query_gid");
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	vu_check(!rc && srnic_mr_lookup(pd->context, &self, name, &out) == 0 &&
			 out.access == IBV_ACCESS_REMOTE_READ,
		 vu_err_str(rc), "re-registered read only: the entry says so");
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE);
	vu_check(!rc && srnic_mr_lookup(pd->context, &self, name, &out) ==
				ENOENT,
		 vu_err_str(rc), "re-registered without a remote right: out");
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ);
	if (rc)
		die("ibv_rereg_mr");
}

static void server(void)
{
	struct ibv_context *ctx = vu_open_first();
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	struct ibv_qp *qp = cq ? vu_create_rc_qp(pd, cq, 4, 1, 1, NULL) : NULL;
	uint8_t *mem = calloc(1, LEN), *want = malloc(LEN);
	struct vu_dest mine = {0}, peer;
	struct ibv_mr *mr;
	int fd;

	if (!qp || !mem || !want ||
	    vu_to_init(qp, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) ||
	    ibv_query_gid(ctx, VU_PORT, VU_GID_INDEX, &mine.gid))
		die("setup");
	mr = ibv_reg_mr(pd, mem, LEN,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ);
	if (!mr)
		die("ibv_reg_mr");
	vu_check(srnic_mr_publish(mr, name) == 0, NULL, "published");
	server_errors(pd, mr);
	mine.qpn = qp->qp_num;	/* (no rkey, no address) */
	fd = vu_tcp_connect(NULL, port, TCP_MS);
	if (fd < 0 || vu_exchange(fd, &mine, &peer, 1, TCP_MS) ||
	    vu_to_rtr(qp, &peer, IBV_MTU_4096) || vu_to_rts(qp, 0, 14, 7))
		die("connect");
	printf("tpt_check server: ready\n");
	if (vu_sync(fd, 60000))
		die("sync with the client");
	vu_fill(want, LEN, name);
	vu_check(!memcmp(mem, want, LEN), NULL,
		 "the client's WRITE landed in the published region");
	rereg_follows(pd, mr);
	vu_check(srnic_mr_unpublish(mr) == ENOENT, NULL,
		 "unpublishing again: ENOENT");
	vu_check(srnic_mr_publish(mr, name) == 0, NULL,
		 "published again (its process's end takes it out)");
	vu_wait_eof(fd, 30000);
}

/* One signaled RDMA op of LEN bytes between buf and the published
 * region: its completion status. */
static int rdma(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *buf,
		enum ibv_wr_opcode op, const struct srnic_published_mr *at)
{
	struct ibv_sge sge = {.addr = (uintptr_t)buf->addr, .length = LEN,
			      .lkey = buf->lkey};
	struct ibv_send_wr wr = {0}, *bad;
	struct ibv_wc wc;

	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = at->addr;
	wr.wr.rdma.rkey = at->rkey;
	if (ibv_post_send(qp, &wr, &bad))
		die("ibv_post_send");
	if (vu_poll(cq, &wc, POLL_MS) != 1)
		die("no completion");
	return wc.status;
}

static void client(const char *host)
{
	struct ibv_context *ctx = vu_open_first();
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	struct ibv_qp *qp = cq ? vu_create_rc_qp(pd, cq, 4, 1, 1, NULL) : NULL;
	uint8_t *buf = malloc(LEN), *back = calloc(1, LEN);
	struct srnic_published_mr at;
	struct vu_dest mine = {0}, peer;
	struct ibv_mr *mr, *back_mr;
	union ibv_gid gid;
	int fd, rc;

	if (!qp || !buf || !back || vu_to_init(qp, 0) ||
	    ibv_query_gid(ctx, VU_PORT, VU_GID_INDEX, &mine.gid))
		die("setup");
	mr = ibv_reg_mr(pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE);
	back_mr = ibv_reg_mr(pd, back, LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!mr || !back_mr)
		die("ibv_reg_mr");
	host_gid(host, &gid);
	rc = find(ctx, &gid, &at, FIND_MS);
	vu_check(rc == 0 && at.length == LEN, vu_err_str(rc),
		 "%s's region found by name, no message to it", host);
	if (rc)
		exit(1);
	mine.qpn = qp->qp_num;
	fd = vu_tcp_connect(host, port, TCP_MS);
	if (fd < 0 || vu_exchange(fd, &mine, &peer, 1, TCP_MS) ||
	    vu_to_rtr(qp, &peer, IBV_MTU_4096) || vu_to_rts(qp, 0, 14, 7))
		die("connect");
	vu_fill(buf, LEN, name);
	vu_check(rdma(qp, cq, mr, IBV_WR_RDMA_WRITE, &at) == IBV_WC_SUCCESS,
		 NULL, "a WRITE under the key the lookup gave");
	vu_check(rdma(qp, cq, back_mr, IBV_WR_RDMA_READ, &at) ==
				 IBV_WC_SUCCESS &&
			 !memcmp(buf, back, LEN),
		 NULL, "... read back whole");
	/* (the seed's initiator-side check: 8 bytes past the region's end,
	 * refused here by b's table, nothing sent; the QP's last WQE) */
	at.addr += 8;
	rc = rdma(qp, cq, mr, IBV_WR_RDMA_WRITE, &at);
	vu_check(rc == IBV_WC_REM_ACCESS_ERR, ibv_wc_status_str(rc),
		 "a WRITE past the published region's end refused");
	if (vu_sync(fd, TCP_MS))
		die("sync with the server");
	close(fd);
}

/* Publish a region as name and sleep until killed. */
static void hold(void)
{
	struct ibv_context *ctx = vu_open_first();
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	void *mem = malloc(LEN);
	struct ibv_mr *mr = pd && mem ? ibv_reg_mr(pd, mem, LEN,
						   IBV_ACCESS_LOCAL_WRITE |
							   IBV_ACCESS_REMOTE_WRITE)
				      : NULL;

	if (!mr || srnic_mr_publish(mr, name))
		die("publish");
	printf("# published %u rkey %#x\n", name, mr->rkey);
	fflush(stdout);
	sleep(60);
}

static void gone(const char *host)
{
	struct ibv_context *ctx = vu_open_first();
	struct srnic_published_mr at;
	union ibv_gid gid;
	uint64_t t0 = vu_now_ms(), end = t0 + FIND_MS;
	int rc;

	if (!ctx)
		die("open");
	host_gid(host, &gid);
	while ((rc = srnic_mr_lookup(ctx, &gid, name, &at)) == 0 &&
	       vu_now_ms() < end)
		usleep(2000);
	vu_check(rc == ENOENT, vu_err_str(rc),
		 "its process gone, %s's region left the table (%llu ms)", host,
		 (unsigned long long)(vu_now_ms() - t0));
}

/* Lookups until stop exists: every change printed, and no key again
 * once another answer replaced it. */
static void watch(const char *stop, const char *host)
{
	struct ibv_context *ctx = vu_open_first();
	struct srnic_published_mr at;
	uint32_t seen[SEEN_MAX], last = 1;	/* (no key is 1) */
	unsigned nseen = 0, i, back = 0;
	union ibv_gid gid;
	uint64_t t0 = vu_now_ms(), lookups = 0;
	char line[64 * 12] = "";

	if (!ctx)
		die("open");
	host_gid(host, &gid);
	while (access(stop, F_OK) != 0 && vu_now_ms() - t0 < 120000) {
		uint32_t k = srnic_mr_lookup(ctx, &gid, name, &at) ? 0
								    : at.rkey;

		lookups++;
		if (k != last && nseen < SEEN_MAX) {
			printf("# %llu ms: %s %#x\n",
			       (unsigned long long)(vu_now_ms() - t0),
			       k ? "rkey" : "none", k);
			for (i = 0; i < nseen; i++)
				back += k && seen[i] == k;
			seen[nseen++] = k;
			last = k;
		}
		usleep(500);
	}
	for (i = 0; i < nseen; i++)
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
			 seen[i] ? " %#x" : " none", seen[i]);
	printf("# keys seen:%s\n", line);
	vu_check(!back, NULL, "%llu lookups: no key came back after another "
		 "answer replaced it", (unsigned long long)lookups);
}

int main(int argc, char **argv)
{
	const char *stop = NULL;
	char mode = 0;
	int o;

	while ((o = getopt(argc, argv, "p:HGW:")) != -1) {
		if (o == 'p')
			port = atoi(optarg);
		else if (o == 'W')
			stop = optarg, mode = 'W';
		else
			mode = (char)o;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (optind >= argc || !(name = (uint32_t)strtoul(argv[optind], 0, 0)))
		die("usage: tpt_check [-p PORT] [-H | -G | -W STOP] NAME [HOST]");
	if (mode == 'H')
		hold();
	else if (mode && optind + 1 >= argc)
		die("no HOST");
	else if (mode == 'G')
		gone(argv[optind + 1]);
	else if (mode == 'W')
		watch(stop, argv[optind + 1]);
	else if (optind + 1 < argc)
		client(argv[optind + 1]);
	else
		server();
	printf("# %u checks, %u failed\n", vu_checks, vu_failed);
	return vu_failed ? 1 : 0;
}
