/* SPDX-License-Identifier: MIT */
/*
 * srnic_3p: third-party RDMA through srnic's own verbs (include/srnic.h;
 * docs/third-party.md).  A controller has a data source WRITE a region
 * of its memory straight into a target's, as a lock manager tells the
 * node that owns a block to ship it to the node that asked for it.
 *
 *   target:      srnic_3p target DIR [-s SIZE]
 *   source:      srnic_3p source DIR [-s SIZE] [-n]
 *   controller:  srnic_3p controller DIR [-s SIZE] [-k CHUNK] [-n] [-t NODE]
 *
 * The processes meet through files in DIR, a folder every node sees (not
 * through the network under test).  The target and the source each make
 * a region of SIZE bytes (default 64 MiB) and an RC QP to the controller,
 * and write DIR/target.info and DIR/source.info (GID, QP, key, address);
 * the source fills its region with a pattern and consents to third-party
 * WRITEs of it (srnic_mr_allow_third_party), unless -n.  The controller
 * connects a QP to each, writes DIR/controller.info, and posts SIZE /
 * CHUNK third-party WRITEs (CHUNK default 1 MiB) on its QP to the target,
 * naming its QP to the source, and waits for their completions.  It
 * writes DIR/done with what they said; the target then checks every byte
 * of its region against the source's pattern and writes DIR/result:
 * "wrong W".  The controller prints one line:
 *
 *   third-party: B bytes from c to a ordered by b, W wrong
 *
 * (-t NODE: the target's node, for the line, when it is not a.)
 *   third-party: refused, REM_ACCESS_ERR, W WRITEs (with -n)
 *
 * Exit 0 when that is what had to happen (every WRITE a success and no
 * byte wrong; with -n, every WRITE refused), else 2 (1: a setup failure).
 */
#include <getopt.h>
#include <inttypes.h>

#include "meet.h"
#include "srnic.h"

#define DEPTH 256		/* WRITEs in flight at most */
#define WAIT_MS 120000		/* for completions */

const char *meet_prog = "srnic_3p";

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	uint8_t *buf;
	struct ibv_mr *mr;
	char gid[33];
};

/* Each byte of the source's region depends on its offset. */
static uint8_t pattern(uint64_t off)
{
	return (uint8_t)(off * 13 + (off >> 10) + (off >> 20) * 7);
}

static void side_open(struct side *s, size_t len, int access)
{
	s->ctx = meet_open();
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = s->pd ? ibv_create_cq(s->ctx, 2 * DEPTH, NULL, NULL, 0) : NULL;
	if (!s->cq)
		meet_die("ibv_alloc_pd, ibv_create_cq", errno);
	meet_gid(s->ctx, s->gid);
	if (!len)
		return;
	s->buf = calloc(1, len);
	if (!s->buf)
		meet_die("calloc", ENOMEM);
	s->mr = ibv_reg_mr(s->pd, s->buf, len, IBV_ACCESS_LOCAL_WRITE | access);
	if (!s->mr)
		meet_die("ibv_reg_mr", errno);
}

/* The controller's QP number and GID, from DIR/controller.info, once
 * it appears; qp_name names which of its QPs. */
static void controller_of(const char *dir, const char *qp_name,
			  uint32_t *qpn, char gid[40])
{
	uint32_t to_target, to_source;
	char text[256];

	if (!meet_get(dir, "controller.info", text, sizeof(text)))
		meet_die("no controller.info", ETIMEDOUT);
	if (sscanf(text, "gid %39s to_target %" SCNu32 " to_source %" SCNu32,
		   gid, &to_target, &to_source) != 3)
		meet_die("controller.info", EINVAL);
	*qpn = strcmp(qp_name, "to_target") ? to_source : to_target;
}

/* The target and the source: a region, a QP to the controller, and the
 * file that says so; then the target checks what landed. */
static int end_node(const char *dir, bool is_target, size_t len, bool no_right)
{
	struct side s = {0};
	struct ibv_qp *qp;
	char text[256], gid[40];
	uint64_t i, wrong = 0;
	uint32_t qpn;

	side_open(&s, len, is_target ? IBV_ACCESS_REMOTE_WRITE
				     : IBV_ACCESS_REMOTE_READ);
	if (!is_target) {
		for (i = 0; i < len; i++)
			s.buf[i] = pattern(i);
		if (!no_right && srnic_mr_allow_third_party(s.mr))
			meet_die("srnic_mr_allow_third_party", EINVAL);
	}
	qp = meet_rc_qp_access(s.pd, s.cq, DEPTH,
			       is_target ? IBV_ACCESS_REMOTE_WRITE
					 : IBV_ACCESS_REMOTE_READ);
	snprintf(text, sizeof(text), "gid %s qpn %" PRIu32 " rkey %" PRIu32
		 " addr %" PRIu64 "\n", s.gid, qp->qp_num, s.mr->rkey,
		 (uint64_t)(uintptr_t)s.buf);
	meet_put(dir, is_target ? "target.info" : "source.info", text);
	controller_of(dir, is_target ? "to_target" : "to_source", &qpn, gid);
	meet_connect(qp, qpn, gid);
	meet_put(dir, is_target ? "target.ready" : "source.ready", "ready\n");
	if (!is_target)
		return meet_get(dir, "done", text, sizeof(text)) ? 0 : 2;
	if (!meet_get(dir, "done", text, sizeof(text)))
		meet_die("no done", ETIMEDOUT);
	for (i = 0; i < len; i++)
		wrong += s.buf[i] != pattern(i);
	snprintf(text, sizeof(text), "wrong %" PRIu64 "\n", wrong);
	meet_put(dir, "result", text);
	return 0;
}

struct remote {
	char gid[40];
	uint32_t qpn, rkey;
	uint64_t addr;
};

static void remote_of(const char *dir, const char *name, struct remote *r)
{
	char text[256];

	if (!meet_get(dir, name, text, sizeof(text)))
		meet_die(name, ETIMEDOUT);
	if (sscanf(text, "gid %39s qpn %" SCNu32 " rkey %" SCNu32
			 " addr %" SCNu64, r->gid, &r->qpn, &r->rkey,
		   &r->addr) != 4)
		meet_die(name, EINVAL);
}

/* Post the WRITEs, DEPTH at most in flight; how many completed, and how
 * many of them with status bad (the first bad one's, else success). */
static uint64_t run_writes(struct ibv_qp *to_a, struct ibv_qp *to_c,
			   struct ibv_cq *cq, const struct remote *a,
			   const struct remote *c, size_t len, size_t chunk,
			   uint64_t *bad, enum ibv_wc_status *status)
{
	uint64_t n = (len + chunk - 1) / chunk, posted = 0, done = 0;
	uint64_t until = meet_now_ms() + WAIT_MS;
	struct ibv_wc wc[32];
	int k, i;

	*bad = 0;
	*status = IBV_WC_SUCCESS;
	while (done < n && meet_now_ms() < until) {
		while (posted < n && posted - done < DEPTH) {
			uint64_t off = posted * chunk;
			struct srnic_3p_wr wr = {
				.wr_id = posted,
				.length = (uint32_t)(len - off < chunk ? len - off
								     : chunk),
				.send_flags = IBV_SEND_SIGNALED,
				.src_rkey = c->rkey, .src_addr = c->addr + off,
				.dst_rkey = a->rkey, .dst_addr = a->addr + off};
			int rc = srnic_post_3p(to_a, to_c, &wr);

			if (rc)
				meet_die("srnic_post_3p", rc);
			posted++;
		}
		k = ibv_poll_cq(cq, 32, wc);
		for (i = 0; i < k; i++, done++)
			if (wc[i].status != IBV_WC_SUCCESS && !(*bad)++)
				*status = wc[i].status;
		/* (after a failure the QP flushes the rest: stop posting) */
		if (*bad && posted == done)
			break;
	}
	return done;
}

static int controller(const char *dir, size_t len, size_t chunk, bool no_right,
		      const char *target_node)
{
	struct remote a, c;
	struct side s = {0};
	struct ibv_qp *to_a, *to_c;
	enum ibv_wc_status status;
	char text[256];
	uint64_t done, bad, wrong = UINT64_MAX;

	side_open(&s, 0, 0);
	to_a = meet_rc_qp(s.pd, s.cq, DEPTH);
	to_c = meet_rc_qp(s.pd, s.cq, DEPTH);
	snprintf(text, sizeof(text), "gid %s to_target %" PRIu32
		 " to_source %" PRIu32 "\n", s.gid, to_a->qp_num, to_c->qp_num);
	meet_put(dir, "controller.info", text);
	remote_of(dir, "target.info", &a);
	remote_of(dir, "source.info", &c);
	meet_connect(to_a, a.qpn, a.gid);
	meet_connect(to_c, c.qpn, c.gid);
	if (!meet_get(dir, "target.ready", text, sizeof(text)) ||
	    !meet_get(dir, "source.ready", text, sizeof(text)))
		meet_die("the target or the source never connected", ETIMEDOUT);
	done = run_writes(to_a, to_c, s.cq, &a, &c, len, chunk, &bad, &status);
	meet_put(dir, "done", "done\n");
	if (no_right) {
		printf("third-party: %s, %s, %" PRIu64 " WRITEs\n",
		       bad ? "refused" : "not refused",
		       ibv_wc_status_str(status), done);
		return bad && status == IBV_WC_REM_ACCESS_ERR ? 0 : 2;
	}
	if (meet_get(dir, "result", text, sizeof(text)))
		sscanf(text, "wrong %" SCNu64, &wrong);
	if (bad)
		printf("third-party: %" PRIu64 " of %" PRIu64 " WRITEs failed, "
		       "first %s\n", bad, done, ibv_wc_status_str(status));
	printf("third-party: %zu bytes from c to %s ordered by b, %" PRIu64
	       " wrong\n", len, target_node, wrong);
	return !bad && !wrong && done * chunk >= len ? 0 : 2;
}

int main(int argc, char **argv)
{
	size_t len = 64u << 20, chunk = 1u << 20;
	bool no_right = false;
	const char *role, *dir, *target_node = "a";
	int o;

	if (argc < 3) {
		fprintf(stderr, "usage: srnic_3p target|source|controller DIR "
				"[-s SIZE] [-k CHUNK] [-n] [-t NODE]\n");
		return 1;
	}
	role = argv[1];
	dir = argv[2];
	optind = 3;
	while ((o = getopt(argc, argv, "s:k:nt:")) != -1) {
		switch (o) {
		case 's':
			len = strtoull(optarg, NULL, 0);
			break;
		case 'k':
			chunk = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			no_right = true;
			break;
		case 't':
			target_node = optarg;
			break;
		default:
			return 1;
		}
	}
	if (!len || !chunk || chunk > (1u << 31)) {
		fprintf(stderr, "srnic_3p: a size and a chunk of 1 to 2^31\n");
		return 1;
	}
	if (!strcmp(role, "target") || !strcmp(role, "source"))
		return end_node(dir, role[0] == 't', len, no_right);
	if (!strcmp(role, "controller"))
		return controller(dir, len, chunk, no_right, target_node);
	fprintf(stderr, "srnic_3p: target, source or controller\n");
	return 1;
}
