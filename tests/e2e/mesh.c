/* SPDX-License-Identifier: MIT */
/*
 * mesh: COUNT processes, on one node or several, each talking to every
 * other, every byte checked.  Run as many instances as COUNT, one per
 * INDEX, all given the same DIR (a folder every node sees: they meet
 * through files in it, not through the network under test).
 *
 *   mesh [-s BYTES] [-k] [-H MS] DIR INDEX COUNT
 *
 * Each process makes one RC QP for each other process and one UD QP, and
 * registers one region.  With every peer it
 *   1. WRITEs BYTES (by default 64 KiB, many packets) into the peer's
 *      region, READs them back into its own and checks them;
 *   2. SENDs BYTES with immediate data: the receiver checks the bytes, the
 *      immediate, and then the WRITE of 1., which verbs orders before it;
 *   3. sends a datagram of 1 KiB with immediate data (the sender's INDEX)
 *      to the peer's UD QP: the receiver checks its bytes and that it names
 *      the sender's QP.
 * And every UD QP joins one multicast group (239.1.2.3) and sends one
 * datagram to it: each process gets every other's, bytes checked, and not
 * its own.
 * So processes of one node talk through the node's loopback, and
 * processes of two nodes through the wire.
 *
 * -k (in INDEX 0 only): keys are the node's, not the process's.  For two
 * other processes J and K of one node, INDEX 0 WRITEs on its QP to K with
 * J's key and address: it must fail with IBV_WC_REM_ACCESS_ERR, and J's
 * region must not change.  Done for a J and K of INDEX 0's own node (the
 * loopback) and of another node (the wire), when there are such.
 *
 * -H MS: then hold every RC QP with a receive posted, for at most MS:
 * until each QP to a process of another node has failed (a flushed
 * receive), while those to processes of our own node have not.  For a
 * test that restarts the other node's srnicd: its BOOTING must fail every
 * process's QPs to the earlier one, which send nothing and would never
 * fail otherwise.
 *
 * Files in DIR: INDEX.info (what peers need, written whole by rename),
 * INDEX.ready (receives posted), INDEX.done (all checked) and keys.done
 * (INDEX 0's key checks are over: the others may tear down).
 * Prints "ok"/"not ok" lines and "# N checks, M failed"; exits 1 on any
 * failure.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_util.h"

#define MAX_PROCS 16
#define WAIT_MS 30000	/* for peers' files, and for any completion */
#define DGRAM 1024
#define GRH 40
#define QKEY 0x5eed
#define GROUP 0xef010203u	/* 239.1.2.3 */
#define FROM_GROUP 0x100	/* in a datagram's immediate: to the group */

/* What one process publishes: written as one binary record. */
struct mesh_info {
	uint32_t magic;
	uint32_t count;
	union ibv_gid gid;
	uint32_t qpn[MAX_PROCS];	/* its RC QP for each peer */
	uint32_t ud_qpn;
	uint32_t rkey;
	uint64_t addr;			/* its region: the WRITE areas */
};
#define MESH_MAGIC 0x6d657368u

static const char *dir;
static unsigned me, count;
static size_t bytes = 65536;

/* The byte at offset b of what process from sends process to, kind t
 * (0 WRITE, 1 SEND, 2 datagram, 3 to the group: to is 0). */
static uint8_t pattern(unsigned from, unsigned to, unsigned t, size_t b)
{
	uint32_t x = (uint32_t)b * 2654435761u;

	return (uint8_t)(x >> 24 ^ x >> 11 ^ (from << 4 | to) ^ t * 0x5a);
}

static void fill(uint8_t *p, unsigned from, unsigned to, unsigned t,
		 size_t n)
{
	size_t b;

	for (b = 0; b < n; b++)
		p[b] = pattern(from, to, t, b);
}

/* Offset of the first wrong byte, or -1 when all n are right. */
static long bad_at(const uint8_t *p, unsigned from, unsigned to, unsigned t,
		   size_t n)
{
	size_t b;

	for (b = 0; b < n; b++)
		if (p[b] != pattern(from, to, t, b))
			return (long)b;
	return -1;
}

static int put_file(const char *name, const void *data, size_t len)
{
	char tmp[512], final[512];
	FILE *f;
	int ok;

	snprintf(final, sizeof(final), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", final, getpid());
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	ok = fwrite(data, 1, len, f) == len;
	ok &= fclose(f) == 0;
	return ok && rename(tmp, final) == 0 ? 0 : -1;
}

/* Wait for DIR/name, of exactly len bytes when data is not NULL. */
static int get_file(const char *name, void *data, size_t len)
{
	char p[512];
	uint64_t end = vu_now_ms() + WAIT_MS;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	for (;;) {
		f = fopen(p, "r");
		if (f) {
			size_t got = data ? fread(data, 1, len, f) : len;

			fclose(f);
			if (got == len)
				return 0;
		}
		if (vu_now_ms() > end)
			return -1;
		usleep(20000);
	}
}

/* Publish INDEX.what, then wait for every process's. */
static int barrier(const char *what)
{
	char name[64];
	unsigned i;

	snprintf(name, sizeof(name), "%u.%s", me, what);
	if (put_file(name, "", 0))
		return -1;
	for (i = 0; i < count; i++) {
		snprintf(name, sizeof(name), "%u.%s", i, what);
		if (get_file(name, NULL, 0)) {
			fprintf(stderr, "mesh %u: process %u never reached "
				"'%s'\n", me, i, what);
			return -1;
		}
	}
	return 0;
}

/* The region's parts, each BYTES long per process (slot i for peer i). */
struct region {
	uint8_t *base;
	size_t per;		/* bytes of one slot */
	struct ibv_mr *mr;
	struct ibv_cq *cq;
};
enum part { IN_WRITE, READ_BACK, OUT_SRC, OUT_SEND, IN_SEND, UD_OUT, UD_IN,
	    NPARTS };

static uint8_t *slot(struct region *r, enum part p, unsigned i)
{
	return r->base + ((size_t)p * count + i) * r->per;
}

static struct mesh_info peer[MAX_PROCS];
static struct region r;

/* Receive buffer b of the UD QP: two for each peer (its datagram to us,
 * and to the group), packed in the UD_IN part. */
static uint8_t *ud_buf(unsigned b)
{
	return slot(&r, UD_IN, 0) + (size_t)b * (GRH + DGRAM);
}
static unsigned sends_seen, dgrams_seen, sends_done;

static const char *const kind_name[] = {"?", "SEND in", "datagram in",
					"WRITE", "READ", "SEND", "datagram",
					"datagram to the group"};

/* One completion, of any kind: checks what arrived. */
static void handle(const struct ibv_wc *wc)
{
	unsigned kind = wc->wr_id >> 32, from = (unsigned)wc->wr_id, i;
	long at;

	if (kind >= 3) {	/* ours, to peer 'from' */
		vu_check(wc->status == IBV_WC_SUCCESS,
			 ibv_wc_status_str(wc->status), "%u: %s to %u",
			 me, kind_name[kind], from);
		sends_done++;
	} else if (kind == 1) {	/* a SEND of peer 'from' (its QP's) */
		sends_seen++;
		at = bad_at(slot(&r, IN_SEND, from), from, me, 1, r.per);
		vu_check(wc->status == IBV_WC_SUCCESS && wc->byte_len == r.per &&
				 at < 0 && (wc->wc_flags & IBV_WC_WITH_IMM) &&
				 be32toh(wc->imm_data) == 0x1000 * from + me,
			 ibv_wc_status_str(wc->status),
			 "%u: SEND from %u (%u bytes, immediate %#x, first "
			 "bad byte %ld)", me, from, wc->byte_len,
			 be32toh(wc->imm_data), at);
		at = bad_at(slot(&r, IN_WRITE, from), from, me, 0, r.per);
		vu_check(at < 0, "", "%u: WRITE from %u landed before its "
			 "SEND (first bad byte %ld)", me, from, at);
	} else {		/* a datagram, in buffer 'from', of anyone */
		unsigned imm = be32toh(wc->imm_data);
		bool group = imm & FROM_GROUP;

		dgrams_seen++;
		/* (QP numbers are a node's: the immediate names the
		 * sender, the source QP must then be its) */
		i = imm & ~FROM_GROUP;
		if (!(wc->wc_flags & IBV_WC_WITH_IMM) || i >= count || i == me ||
		    peer[i].ud_qpn != wc->src_qp)
			i = count;
		at = i < count ? bad_at(ud_buf(from) + GRH, i, group ? 0 : me,
					group ? 3 : 2, DGRAM)
			       : 0;
		vu_check(wc->status == IBV_WC_SUCCESS && i < count &&
				 wc->byte_len == GRH + DGRAM && at < 0,
			 ibv_wc_status_str(wc->status),
			 "%u: datagram%s from QP %u (process %d, %u bytes, "
			 "first bad byte %ld)", me, group ? " to the group" : "",
			 wc->src_qp, i < count ? (int)i : -1, wc->byte_len, at);
	}
}

static int poll_until(const unsigned *counter, unsigned want)
{
	struct ibv_wc wc;
	int got;

	while (*counter < want) {
		got = vu_poll(r.cq, &wc, WAIT_MS);
		if (got != 1) {
			vu_check(0, vu_wc_str(&wc, got), "%u: completions "
				 "(%u of %u)", me, *counter, want);
			return -1;
		}
		handle(&wc);
	}
	return 0;
}

#define WR(kind, peer) ((uint64_t)(kind) << 32 | (peer))

static void key_write(struct ibv_qp **qp, unsigned j, unsigned k, int local)
{
	struct ibv_sge sge = {.lkey = r.mr->lkey, .length = r.per,
			      .addr = (uintptr_t)slot(&r, OUT_SEND, k)};
	struct ibv_send_wr w = {.sg_list = &sge, .num_sge = 1,
				.send_flags = IBV_SEND_SIGNALED,
				.opcode = IBV_WR_RDMA_WRITE},
			   *bad;
	struct ibv_wc wc;
	uint64_t jarea = peer[j].addr + ((size_t)IN_WRITE * count) * r.per;
	int got;
	long at;

	w.wr.rdma.remote_addr = jarea;
	w.wr.rdma.rkey = peer[j].rkey;
	if (ibv_post_send(qp[k], &w, &bad)) {
		vu_check(0, strerror(errno), "post the WRITE with a foreign key");
		return;
	}
	got = vu_poll(r.cq, &wc, WAIT_MS);
	vu_check(got == 1 && wc.status == IBV_WC_REM_ACCESS_ERR,
		 vu_wc_str(&wc, got), "WRITE to process %u with the key of "
		 "process %u (%s): remote access error", k, j,
		 local ? "our node, the loopback" : "another node");
	/* j's area for us holds our WRITE of before */
	sge.addr = (uintptr_t)slot(&r, READ_BACK, j);
	memset(slot(&r, READ_BACK, j), 0, r.per);
	w.opcode = IBV_WR_RDMA_READ;
	if (ibv_post_send(qp[j], &w, &bad)) {
		vu_check(0, strerror(errno), "post the READ of process %u", j);
		return;
	}
	got = vu_poll(r.cq, &wc, WAIT_MS);
	at = bad_at(slot(&r, READ_BACK, j), 0, j, 0, r.per);
	vu_check(got == 1 && wc.status == IBV_WC_SUCCESS && at < 0,
		 vu_wc_str(&wc, got), "process %u's region is as we wrote it "
		 "(first bad byte %ld)", j, at);
}

/*
 * WRITE on our QP to k with the key and address of j (j and k of one
 * node): REM_ACCESS_ERR, and j's region unchanged (read back through our
 * QP to j).  Once with j and k on our node, once on another, if we can.
 */
static void check_keys(struct ibv_qp **qp)
{
	int local;
	unsigned j, k = 0;

	for (local = 1; local >= 0; local--) {
		for (j = 1; j < count; j++) {
			for (k = 1; k < count; k++)
				if (k != j &&
				    !memcmp(&peer[j].gid, &peer[k].gid,
					    sizeof(peer[j].gid)) &&
				    (memcmp(&peer[j].gid, &peer[0].gid,
					    sizeof(peer[j].gid)) == 0) == local)
					break;
			if (k < count)
				break;
		}
		if (j == count) {
			printf("# no two other processes %s\n",
			       local ? "on our node" : "on another node");
			continue;
		}
		key_write(qp, j, k, local);
	}
}

static void hold(struct ibv_qp **qp, unsigned long ms)
{
	struct ibv_sge sge = {.lkey = r.mr->lkey, .length = r.per};
	struct ibv_recv_wr rw = {.sg_list = &sge, .num_sge = 1}, *bad;
	uint64_t t0 = vu_now_ms();
	unsigned i, remote = 0, failed = 0, local_failed = 0;
	struct ibv_wc wc;
	int got;

	for (i = 0; i < count; i++) {
		if (i == me)
			continue;
		sge.addr = (uintptr_t)slot(&r, IN_SEND, i);
		rw.wr_id = WR(8, i);
		if (ibv_post_recv(qp[i], &rw, &bad)) {
			vu_check(0, strerror(errno), "%u: hold a receive", me);
			return;
		}
		remote += !!memcmp(&peer[i].gid, &peer[me].gid,
				   sizeof(peer[i].gid));
	}
	printf("# %u: holding %u QPs to another node\n", me, remote);
	fflush(stdout);
	/* Polled every 5 ms, not busily: a held QP waits for seconds, and
	 * four such processes polling hard would crowd out the traffic the
	 * test runs beside them. */
	while (failed < remote && vu_now_ms() - t0 < ms) {
		got = ibv_poll_cq(r.cq, 1, &wc);
		if (got < 0)
			break;
		if (got == 0) {
			usleep(5000);
			continue;
		}
		i = (unsigned)wc.wr_id;
		if (wc.wr_id >> 32 != 8 || i >= count ||
		    wc.status == IBV_WC_SUCCESS)
			continue;
		if (memcmp(&peer[i].gid, &peer[me].gid, sizeof(peer[i].gid)))
			failed++;
		else
			local_failed++;
	}
	vu_check(failed == remote && local_failed == 0, "",
		 "%u: held: %u of %u QPs to another node failed, %u of our "
		 "node's, after %llu ms", me, failed, remote, local_failed,
		 (unsigned long long)(vu_now_ms() - t0));
}

int main(int argc, char **argv)
{
	struct mesh_info mine;
	struct ibv_qp *qp[MAX_PROCS] = {0}, *ud;
	struct ibv_ah *ah[MAX_PROCS] = {0}, *group_ah;
	union ibv_gid group = {.raw = {[10] = 0xff, [11] = 0xff,
				       [12] = GROUP >> 24, [13] = GROUP >> 16 & 0xff,
				       [14] = GROUP >> 8 & 0xff, [15] = GROUP & 0xff}};
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	unsigned i, b;
	int opt, keys = 0;
	unsigned long hold_ms = 0;
	char name[64];
	long at;

	while ((opt = getopt(argc, argv, "s:kH:")) != -1) {
		switch (opt) {
		case 'H':
			hold_ms = strtoul(optarg, NULL, 0);
			break;
		case 's':
			bytes = strtoul(optarg, NULL, 0);
			break;
		case 'k':
			keys = 1;
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 3) {
usage:
		fprintf(stderr, "usage: mesh [-s BYTES] [-k] [-H MS] DIR INDEX "
			"COUNT\n");
		return 2;
	}
	dir = argv[optind];
	me = strtoul(argv[optind + 1], NULL, 0);
	count = strtoul(argv[optind + 2], NULL, 0);
	if (count < 2 || count > MAX_PROCS || me >= count || bytes < 4096 ||
	    bytes > (1u << 24)) {
		fprintf(stderr, "mesh: 2 <= COUNT <= %d, INDEX < COUNT, "
			"4 KiB <= BYTES <= 16 MiB\n", MAX_PROCS);
		return 2;
	}

	ctx = vu_open_first();
	if (!ctx)
		return 1;
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 8 * count + 8, NULL, NULL, 0) : NULL;
	r.cq = cq;
	r.per = bytes;
	r.base = aligned_alloc(4096, NPARTS * count * r.per);
	if (!cq || !r.base) {
		fprintf(stderr, "mesh %u: PD, CQ or memory: %s\n", me,
			strerror(errno));
		return 1;
	}
	memset(r.base, 0, NPARTS * count * r.per);
	r.mr = ibv_reg_mr(pd, r.base, NPARTS * count * r.per,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ);
	if (!r.mr) {
		fprintf(stderr, "mesh %u: ibv_reg_mr: %s\n", me,
			strerror(errno));
		return 1;
	}

	memset(&mine, 0, sizeof(mine));
	mine.magic = MESH_MAGIC;
	mine.count = count;
	if (ibv_query_gid(ctx, VU_PORT, VU_GID_INDEX, &mine.gid)) {
		fprintf(stderr, "mesh %u: ibv_query_gid failed\n", me);
		return 1;
	}
	for (i = 0; i < count; i++) {
		if (i == me)
			continue;
		qp[i] = vu_create_rc_qp(pd, cq, 8, 4, 1, NULL);
		if (!qp[i] || vu_to_init(qp[i], IBV_ACCESS_REMOTE_WRITE |
							IBV_ACCESS_REMOTE_READ)) {
			fprintf(stderr, "mesh %u: RC QP: %s\n", me,
				strerror(errno));
			return 1;
		}
		mine.qpn[i] = qp[i]->qp_num;
	}
	{
		struct ibv_qp_init_attr ia = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
			.cap = {.max_send_wr = count + 1,
				.max_recv_wr = 2 * count,
				.max_send_sge = 1, .max_recv_sge = 1},
		};
		struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
					.port_num = VU_PORT, .qkey = QKEY};

		ud = ibv_create_qp(pd, &ia);
		if (!ud || ibv_modify_qp(ud, &a, IBV_QP_STATE |
						 IBV_QP_PKEY_INDEX |
						 IBV_QP_PORT | IBV_QP_QKEY)) {
			fprintf(stderr, "mesh %u: UD QP: %s\n", me,
				strerror(errno));
			return 1;
		}
		a.qp_state = IBV_QPS_RTR;
		if (ibv_modify_qp(ud, &a, IBV_QP_STATE)) {
			fprintf(stderr, "mesh %u: UD RTR\n", me);
			return 1;
		}
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 0;
		if (ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_SQ_PSN)) {
			fprintf(stderr, "mesh %u: UD RTS\n", me);
			return 1;
		}
	}
	mine.ud_qpn = ud->qp_num;
	mine.rkey = r.mr->rkey;
	mine.addr = (uintptr_t)r.base;
	snprintf(name, sizeof(name), "%u.info", me);
	if (put_file(name, &mine, sizeof(mine))) {
		fprintf(stderr, "mesh %u: cannot write %s/%s\n", me, dir, name);
		return 1;
	}
	for (i = 0; i < count; i++) {
		snprintf(name, sizeof(name), "%u.info", i);
		if (get_file(name, &peer[i], sizeof(peer[i])) ||
		    peer[i].magic != MESH_MAGIC || peer[i].count != count) {
			fprintf(stderr, "mesh %u: no good %s/%s\n", me, dir,
				name);
			return 1;
		}
	}

	/* Connect, post the receives, and meet before anyone sends. */
	for (i = 0; i < count; i++) {
		struct vu_dest d = {.qpn = peer[i].qpn[me], .gid = peer[i].gid};
		struct ibv_sge sge = {.lkey = r.mr->lkey};
		struct ibv_recv_wr rw = {.sg_list = &sge, .num_sge = 1}, *bad;
		struct ibv_ah_attr aa = {
			.is_global = 1, .port_num = VU_PORT,
			.grh = {.dgid = peer[i].gid, .sgid_index = VU_GID_INDEX,
				.hop_limit = 64},
		};

		if (i == me)
			continue;
		if (vu_to_rtr(qp[i], &d, IBV_MTU_4096) ||
		    vu_to_rts(qp[i], 0, 14, 7)) {
			fprintf(stderr, "mesh %u: connecting to %u failed\n",
				me, i);
			return 1;
		}
		sge.addr = (uintptr_t)slot(&r, IN_SEND, i);
		sge.length = r.per;
		rw.wr_id = WR(1, i);
		if (ibv_post_recv(qp[i], &rw, &bad))
			return 1;
		sge.length = GRH + DGRAM;
		for (b = 2 * (i - (i > me)); b < 2 * (i - (i > me)) + 2; b++) {
			sge.addr = (uintptr_t)ud_buf(b);
			rw.wr_id = WR(2, b);
			if (ibv_post_recv(ud, &rw, &bad))
				return 1;
		}
		ah[i] = ibv_create_ah(pd, &aa);
		if (!ah[i]) {
			fprintf(stderr, "mesh %u: no address handle for %u: "
				"%s\n", me, i, strerror(errno));
			return 1;
		}
		fill(slot(&r, OUT_SRC, i), me, i, 0, r.per);
		fill(slot(&r, OUT_SEND, i), me, i, 1, r.per);
		fill(slot(&r, UD_OUT, i), me, i, 2, DGRAM);
	}
	/* Every UD QP in the group before anyone sends to it. */
	fill(slot(&r, UD_OUT, me), me, 0, 3, DGRAM);
	group_ah = ibv_create_ah(pd, &(struct ibv_ah_attr){
		.is_global = 1, .port_num = VU_PORT,
		.grh = {.dgid = group, .sgid_index = VU_GID_INDEX,
			.hop_limit = 64}});
	if (!group_ah || ibv_attach_mcast(ud, &group, 0)) {
		fprintf(stderr, "mesh %u: joining the group: %s\n", me,
			strerror(errno));
		return 1;
	}
	if (barrier("ready"))
		return 1;
	{
		struct ibv_sge sge = {.lkey = r.mr->lkey, .length = DGRAM,
				      .addr = (uintptr_t)slot(&r, UD_OUT, me)};
		struct ibv_send_wr w = {
			.sg_list = &sge, .num_sge = 1, .wr_id = WR(7, me),
			.send_flags = IBV_SEND_SIGNALED,
			.opcode = IBV_WR_SEND_WITH_IMM,
			.imm_data = htobe32(me | FROM_GROUP),
			.wr.ud = {.ah = group_ah, .remote_qpn = 0xffffff,
				  .remote_qkey = QKEY}},
				   *bad;

		if (ibv_post_send(ud, &w, &bad) ||
		    poll_until(&sends_done, sends_done + 1))
			return 1;
	}

	/* To every peer, one at a time: WRITE, READ it back, SEND, and a
	 * datagram; the peers' SENDs and datagrams arrive meanwhile. */
	for (i = 0; i < count; i++) {
		struct ibv_sge sge = {.lkey = r.mr->lkey, .length = r.per};
		struct ibv_send_wr w = {.sg_list = &sge, .num_sge = 1,
					.send_flags = IBV_SEND_SIGNALED},
				   *bad;

		if (i == me)
			continue;
		sge.addr = (uintptr_t)slot(&r, OUT_SRC, i);
		w.opcode = IBV_WR_RDMA_WRITE;
		w.wr.rdma.remote_addr =
			peer[i].addr + ((size_t)IN_WRITE * count + me) * r.per;
		w.wr.rdma.rkey = peer[i].rkey;
		w.wr_id = WR(3, i);
		if (ibv_post_send(qp[i], &w, &bad))
			return 1;
		sge.addr = (uintptr_t)slot(&r, READ_BACK, i);
		w.opcode = IBV_WR_RDMA_READ;
		w.wr_id = WR(4, i);
		if (ibv_post_send(qp[i], &w, &bad))
			return 1;
		/* after the WRITE: the peer checks it when this arrives */
		sge.addr = (uintptr_t)slot(&r, OUT_SEND, i);
		w.opcode = IBV_WR_SEND_WITH_IMM;
		w.imm_data = htobe32(0x1000 * me + i);
		w.wr_id = WR(5, i);
		if (ibv_post_send(qp[i], &w, &bad))
			return 1;
		sge.addr = (uintptr_t)slot(&r, UD_OUT, i);
		sge.length = DGRAM;
		w.opcode = IBV_WR_SEND_WITH_IMM;
		w.imm_data = htobe32(me);
		w.wr.ud.ah = ah[i];
		w.wr.ud.remote_qpn = peer[i].ud_qpn;
		w.wr.ud.remote_qkey = QKEY;
		w.wr_id = WR(6, i);
		if (ibv_post_send(ud, &w, &bad))
			return 1;
		if (poll_until(&sends_done, sends_done + 4))
			return 1;
		at = bad_at(slot(&r, READ_BACK, i), me, i, 0, r.per);
		vu_check(at < 0, "", "%u: READ back from %u (first bad byte "
			 "%ld)", me, i, at);
	}
	if (poll_until(&sends_seen, count - 1) ||
	    poll_until(&dgrams_seen, 2 * (count - 1)) || barrier("done"))
		return 1;

	if (keys && me == 0)
		check_keys(qp);
	if (me == 0 && put_file("keys.done", "", 0))
		return 1;
	if (get_file("keys.done", NULL, 0)) {
		fprintf(stderr, "mesh %u: process 0 never finished\n", me);
		return 1;
	}
	if (hold_ms)
		hold(qp, hold_ms);
	printf("# %u checks, %u failed\n", vu_checks, vu_failed);
	return vu_failed ? 1 : 0;
}
