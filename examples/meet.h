/* SPDX-License-Identifier: MIT */
/*
 * What the demos' programs that run on several nodes share (srnic_cond,
 * srnic_fifo, srnic_3p): they meet through files in a folder every node sees, not
 * through the network under test, and connect RC QPs with what the files
 * say.  Header only: each program is one file and this.
 */
#ifndef SRNIC_EXAMPLES_MEET_H
#define SRNIC_EXAMPLES_MEET_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define MEET_GID_INDEX 1	/* ::ffff:IPV4 */
#define MEET_WAIT_MS 30000	/* for a file to appear */

extern const char *meet_prog;	/* the program's name, for its errors */

static inline void meet_die(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", meet_prog, what, strerror(err));
	exit(1);
}

static inline uint64_t meet_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* The first RDMA device, opened. */
static inline struct ibv_context *meet_open(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;

	if (!list || !list[0])
		meet_die("no RDMA device", ENODEV);
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!ctx)
		meet_die("ibv_open_device", errno);
	return ctx;
}

/* DIR/NAME holds text, written whole (a rename: a reader never sees half). */
static inline void meet_put(const char *dir, const char *name,
			    const char *text)
{
	char path[512], tmp[520];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, path))
		meet_die(path, errno);
}

/* DIR/NAME's text, once it appears; false after MEET_WAIT_MS. */
static inline bool meet_get(const char *dir, const char *name, char *out,
			    size_t len)
{
	uint64_t until = meet_now_ms() + MEET_WAIT_MS;
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	while (meet_now_ms() < until) {
		FILE *f = fopen(path, "r");

		if (f) {
			size_t n = fread(out, 1, len - 1, f);

			fclose(f);
			out[n] = '\0';
			return true;
		}
		usleep(2000);
	}
	return false;
}

/* The context's GID MEET_GID_INDEX in hex, as the files carry it. */
static inline void meet_gid(struct ibv_context *ctx, char out[33])
{
	union ibv_gid g;
	unsigned i;

	if (ibv_query_gid(ctx, 1, MEET_GID_INDEX, &g))
		meet_die("ibv_query_gid", errno);
	for (i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", g.raw[i]);
}

/* RTR and RTS toward QP qpn at gid (hex), at the port's active MTU. */
static inline void meet_connect(struct ibv_qp *qp, uint32_t qpn,
				const char *gid)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096,
		.dest_qp_num = qpn, .max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {.is_global = 1, .port_num = 1,
			    .grh = {.sgid_index = MEET_GID_INDEX,
				    .hop_limit = 64}}};
	struct ibv_port_attr pa;
	unsigned i, b;
	int rc;

	for (i = 0; i < 16 && sscanf(gid + 2 * i, "%2x", &b) == 1; i++)
		a.ah_attr.grh.dgid.raw[i] = (uint8_t)b;
	if (!ibv_query_port(qp->context, 1, &pa) && pa.active_mtu < a.path_mtu)
		a.path_mtu = pa.active_mtu;
	/* (a node whose program has just started may not be heard yet: its
	 * address resolves once its first HELLO has come) */
	for (i = 0; i < MEET_WAIT_MS / 10; i++) {
		rc = ibv_modify_qp(qp, &a,
				   IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					   IBV_QP_MAX_DEST_RD_ATOMIC |
					   IBV_QP_MIN_RNR_TIMER);
		if (rc != EHOSTUNREACH)
			break;
		usleep(10000);
	}
	if (rc)
		meet_die("RTR", rc);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
					   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					   IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (rc)
		meet_die("RTS", rc);
}

/* An RC QP on cq, in INIT, that grants its peer access (IBV_ACCESS_*). */
static inline struct ibv_qp *meet_rc_qp_access(struct ibv_pd *pd,
					       struct ibv_cq *cq,
					       unsigned depth, int access)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = depth, .max_recv_wr = depth,
			.max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp_attr init = {.qp_state = IBV_QPS_INIT, .port_num = 1,
				   .qp_access_flags = (unsigned)access};
	struct ibv_qp *qp = ibv_create_qp(pd, &a);
	int rc;

	if (!qp)
		meet_die("ibv_create_qp", errno);
	rc = ibv_modify_qp(qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					      IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (rc)
		meet_die("INIT", rc);
	return qp;
}

/* ... that lets its peer WRITE. */
static inline struct ibv_qp *meet_rc_qp(struct ibv_pd *pd, struct ibv_cq *cq,
					unsigned depth)
{
	return meet_rc_qp_access(pd, cq, depth, IBV_ACCESS_REMOTE_WRITE);
}

#endif
