/* SPDX-License-Identifier: MIT */
/*
 * loopback: QPs of one process talking to each other through the node's
 * own GID, as on a NIC's loopback.
 *
 *   loopback [-s BYTES]
 *
 * 0. Opening the device, two PDs and registering the source region of 2.
 *    take well under 50 ms and start no thread (no DPDK, no datapath): the
 *    first CQ starts them, and the region registered before serves 2.
 * 1. ibv_create_ah for the node's own GID returns at once (no wait for a
 *    peer that will never say HELLO), and so does the RTR transition of a
 *    QP whose destination is this node.
 * 2. Two RC QPs, A and B, connected to each other: A WRITEs BYTES (a
 *    message of many packets, by default over 64 of them) into B's region,
 *    READs it back into a region of its own, SENDs with immediate data into
 *    B's receive (with a stale wr.rdma in its work request), and fetch-and-adds a counter of B's 1000 times; every
 *    byte and value is checked.  B then WRITEs to A, so both directions
 *    carry data.
 * 3. A WRITE with a key of another PD fails with IBV_WC_REM_ACCESS_ERR: the
 *    loopback checks keys as a wire does.
 * 4. Two UD QPs: one sends 100 datagrams to the other through the address
 *    handle; each arrives whole, with the sender's QP number and a GRH
 *    (an IPv4 header, RoCE v2) whose source address is our own.
 * 5. CQ event moderation (ibv_modify_cq): count and period (64
 *    completions with a count of 16 make four events), one event an
 *    arming and none without a completion behind it, and arming a CQ
 *    that holds an unpolled completion (moderation()).
 * 6. The extended CQ's readers against ibv_poll_cq (extended_cq()).
 * 7. ibv_rereg_mr of translation, access and PD (rereg()).
 * 8. A QP moved to RESET leaves no completion in its CQ
 *    (reset_cleans_cq()), nor does a QP destroyed; a 0-byte SEND into a
 *    receive that names no memory (address 0, lkey 0) completes well on
 *    both sides (destroy_cleans_cq()).
 * 9. A parent domain stands for its PD (parent_domain()).
 * 10. Atomic write, through ibv_post_send and an extended QP
 *    (atomic_write()).
 * 11. Completion timestamps, device clock and wall clock (timestamps()).
 * Prints "ok"/"not ok" lines and "# N checks, M failed"; exits 1 on any
 * failure.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "verbs_util.h"

#define POLL_MS 15000
#define DGRAM_POLL_MS 2000
#define NFAA 1000
#define NDGRAM 100
#define DGRAM 1024
#define QKEY 0x11111111

static struct ibv_context *ctx;
static struct ibv_pd *pd, *pd2;
static union ibv_gid gid;
static size_t bytes = 1 << 20;
/* 2.'s source, registered before the datapath runs */
static uint8_t *src;
static struct ibv_mr *msrc;

static void die(const char *what)
{
	fprintf(stderr, "loopback: %s\n", what);
	exit(2);
}

static struct ibv_mr *reg(struct ibv_pd *p, void *buf, size_t len)
{
	struct ibv_mr *mr = ibv_reg_mr(p, buf, len,
				       IBV_ACCESS_LOCAL_WRITE |
					       IBV_ACCESS_REMOTE_WRITE |
					       IBV_ACCESS_REMOTE_READ |
					       IBV_ACCESS_REMOTE_ATOMIC);

	if (!mr)
		die("ibv_reg_mr failed");
	return mr;
}

/* One completion of cq, expected to have status want; 0 when it does. */
static int expect_wc(struct ibv_cq *cq, enum ibv_wc_status want,
		     struct ibv_wc *wc, const char *what)
{
	int got = vu_poll(cq, wc, POLL_MS);

	vu_check(got == 1 && wc->status == want, vu_wc_str(wc, got), "%s",
		 what);
	return got == 1 && wc->status == want ? 0 : -1;
}

static int post_rdma(struct ibv_qp *qp, enum ibv_wr_opcode op, void *buf,
		     uint32_t len, uint32_t lkey, uint64_t raddr,
		     uint32_t rkey)
{
	struct ibv_sge sge = {(uintptr_t)buf, len, lkey};
	struct ibv_send_wr wr = {0}, *bad;

	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed + (i >> 12));
}

/* How many of this process's threads have a name that starts with
 * prefix. */
static int threads_named(const char *prefix)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		die("/proc/self/task");
	while ((e = readdir(d))) {
		char path[300], name[64] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) &&
		    !strncmp(name, prefix, strlen(prefix)))
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

static void connected(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp *a, *b;
	struct vu_dest da = {0}, db = {0};
	uint8_t *dst = calloc(1, bytes),
		*back = calloc(1, bytes), *msg = malloc(4096),
		*rmsg = calloc(1, 4096);
	uint64_t *counter = calloc(1, 8), *old = calloc(1, 8);
	struct ibv_mr *mdst, *mback, *mmsg, *mrmsg, *mcnt, *mold,
		*other;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = {0}, *rbad;
	struct ibv_send_wr wr = {0}, *bad;
	struct ibv_wc wc;
	uint64_t t0;
	unsigned i, wrong;
	int rc;

	if (!cq || !dst || !back || !msg || !rmsg || !counter || !old)
		die("out of memory");
	a = vu_create_rc_qp(pd, cq, 64, 64, 1, NULL);
	b = vu_create_rc_qp(pd, cq, 64, 64, 1, NULL);
	if (!a || !b)
		die("cannot create RC QPs");
	da.qpn = a->qp_num;
	db.qpn = b->qp_num;
	da.gid = db.gid = gid;
	t0 = vu_now_ms();
	rc = vu_to_init(a, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC) ||
	     vu_to_init(b, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC) ||
	     vu_to_rtr(a, &db, IBV_MTU_4096) || vu_to_rtr(b, &da, IBV_MTU_4096) ||
	     vu_to_rts(a, 0, 14, 7) || vu_to_rts(b, 0, 14, 7);
	vu_check(rc == 0 && vu_now_ms() - t0 < 1000, NULL,
		 "RC QPs to our own GID connect at once (%lu ms)",
		 (unsigned long)(vu_now_ms() - t0));
	if (rc)
		return;

	mdst = reg(pd, dst, bytes);
	mback = reg(pd, back, bytes);
	mmsg = reg(pd, msg, 4096);
	mrmsg = reg(pd, rmsg, 4096);
	mcnt = reg(pd, counter, 8);
	mold = reg(pd, old, 8);

	/* WRITE a -> b, READ it back */
	if (post_rdma(a, IBV_WR_RDMA_WRITE, src, bytes, msrc->lkey,
		      (uintptr_t)dst, mdst->rkey))
		die("post WRITE");
	if (!expect_wc(cq, IBV_WC_SUCCESS, &wc, "loopback WRITE completes"))
		vu_check(!memcmp(src, dst, bytes), NULL,
			 "loopback WRITE of %zu bytes landed intact", bytes);
	if (post_rdma(a, IBV_WR_RDMA_READ, back, bytes, mback->lkey,
		      (uintptr_t)dst, mdst->rkey))
		die("post READ");
	if (!expect_wc(cq, IBV_WC_SUCCESS, &wc, "loopback READ completes"))
		vu_check(!memcmp(src, back, bytes), NULL,
			 "loopback READ of %zu bytes brought it back intact",
			 bytes);

	/* SEND with immediate a -> b */
	sge = (struct ibv_sge){(uintptr_t)rmsg, 4096, mrmsg->lkey};
	rwr.wr_id = 7;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	if (ibv_post_recv(b, &rwr, &rbad))
		die("post recv");
	fill(msg, 3000, 9);
	{
		struct ibv_sge s = {(uintptr_t)msg, 3000, mmsg->lkey};

		wr.sg_list = &s;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = htonl(0xabcd1234);
		wr.send_flags = IBV_SEND_SIGNALED;
		/* wr.rdma is not a SEND's: what a caller left there must
		 * not travel (UCX leaves it unset; an address near the top
		 * once made every try of a SEND a malformed frame) */
		wr.wr.rdma.remote_addr = ~0ull;
		wr.wr.rdma.rkey = 0xdeadbeef;
		if (ibv_post_send(a, &wr, &bad))
			die("post SEND");
		for (i = 0; i < 2; i++) {
			if (expect_wc(cq, IBV_WC_SUCCESS, &wc,
				      "loopback SEND: a completion"))
				break;
			if (wc.opcode == IBV_WC_RECV)
				vu_check(wc.wr_id == 7 && wc.byte_len == 3000 &&
						 (wc.wc_flags & IBV_WC_WITH_IMM) &&
						 wc.imm_data == htonl(0xabcd1234) &&
						 wc.qp_num == b->qp_num &&
						 !memcmp(msg, rmsg, 3000),
					 NULL,
					 "loopback SEND with immediate "
					 "received whole (len %u)",
					 wc.byte_len);
		}
	}

	/* fetch-and-add a -> b's counter */
	for (i = 0, wrong = 0; i < NFAA; i++) {
		struct ibv_sge s = {(uintptr_t)old, 8, mold->lkey};

		memset(&wr, 0, sizeof(wr));
		wr.sg_list = &s;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.atomic.remote_addr = (uintptr_t)counter;
		wr.wr.atomic.rkey = mcnt->rkey;
		wr.wr.atomic.compare_add = 1;
		if (ibv_post_send(a, &wr, &bad))
			die("post FAA");
		if (vu_poll(cq, &wc, POLL_MS) != 1 ||
		    wc.status != IBV_WC_SUCCESS || *old != i)
			wrong++;
	}
	vu_check(!wrong && *counter == NFAA, NULL,
		 "%u loopback fetch-and-adds returned 0..%u once each "
		 "(%u wrong, counter %lu)",
		 NFAA, NFAA - 1, wrong, (unsigned long)*counter);

	/* WRITE b -> a */
	fill(dst, bytes, 5);
	memset(back, 0, bytes);
	if (post_rdma(b, IBV_WR_RDMA_WRITE, dst, bytes, mdst->lkey,
		      (uintptr_t)back, mback->rkey))
		die("post WRITE b");
	if (!expect_wc(cq, IBV_WC_SUCCESS, &wc, "loopback WRITE b to a"))
		vu_check(!memcmp(dst, back, bytes), NULL,
			 "loopback WRITE the other way landed intact");

	/* a key of another PD: refused as a wire's peer refuses it */
	other = reg(pd2, calloc(1, 4096), 4096);
	if (post_rdma(a, IBV_WR_RDMA_WRITE, src, 64, msrc->lkey,
		      (uintptr_t)other->addr, other->rkey))
		die("post bad WRITE");
	expect_wc(cq, IBV_WC_REM_ACCESS_ERR, &wc,
		  "loopback WRITE with another PD's key: REM_ACCESS_ERR");
}

static void datagrams(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 2 * NDGRAM + 8, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {0};
	struct ibv_qp_attr at = {0};
	struct ibv_ah_attr ah_attr = {0};
	struct ibv_qp *s, *r;
	struct ibv_ah *ah;
	uint8_t *sbuf = malloc(DGRAM), *rbuf = calloc(NDGRAM, 40 + DGRAM);
	struct ibv_mr *ms, *mr;
	struct ibv_wc wc;
	unsigned i, ok = 0, got = 0;
	uint64_t t0;

	if (!cq || !sbuf || !rbuf)
		die("out of memory");
	ia.send_cq = ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_UD;
	ia.cap.max_send_wr = NDGRAM;
	ia.cap.max_recv_wr = NDGRAM;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	s = ibv_create_qp(pd, &ia);
	r = ibv_create_qp(pd, &ia);
	if (!s || !r)
		die("cannot create UD QPs");
	for (i = 0; i < 2; i++) {
		struct ibv_qp *q = i ? r : s;

		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_INIT;
		at.port_num = VU_PORT;
		at.qkey = QKEY;
		if (ibv_modify_qp(q, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						  IBV_QP_PORT | IBV_QP_QKEY))
			die("UD to INIT");
		at.qp_state = IBV_QPS_RTR;
		if (ibv_modify_qp(q, &at, IBV_QP_STATE))
			die("UD to RTR");
		at.qp_state = IBV_QPS_RTS;
		if (ibv_modify_qp(q, &at, IBV_QP_STATE | IBV_QP_SQ_PSN))
			die("UD to RTS");
	}
	ms = reg(pd, sbuf, DGRAM);
	mr = reg(pd, rbuf, NDGRAM * (40 + DGRAM));
	for (i = 0; i < NDGRAM; i++) {
		struct ibv_sge sge = {(uintptr_t)rbuf + i * (40 + DGRAM),
				      40 + DGRAM, mr->lkey};
		struct ibv_recv_wr w = {.wr_id = i, .sg_list = &sge,
					.num_sge = 1},
				   *bad;

		if (ibv_post_recv(r, &w, &bad))
			die("UD post recv");
	}
	ah_attr.is_global = 1;
	ah_attr.grh.dgid = gid;
	ah_attr.grh.sgid_index = VU_GID_INDEX;
	ah_attr.grh.hop_limit = 64;
	ah_attr.port_num = VU_PORT;
	t0 = vu_now_ms();
	ah = ibv_create_ah(pd, &ah_attr);
	vu_check(ah && vu_now_ms() - t0 < 1000, NULL,
		 "an address handle for our own GID at once (%lu ms)",
		 (unsigned long)(vu_now_ms() - t0));
	if (!ah)
		return;
	for (i = 0; i < NDGRAM; i++) {
		struct ibv_sge sge = {(uintptr_t)sbuf, DGRAM, ms->lkey};
		struct ibv_send_wr w = {0}, *bad;

		fill(sbuf, DGRAM, i);
		w.sg_list = &sge;
		w.num_sge = 1;
		w.opcode = IBV_WR_SEND;
		w.send_flags = IBV_SEND_SIGNALED;
		w.wr.ud.ah = ah;
		w.wr.ud.remote_qpn = r->qp_num;
		w.wr.ud.remote_qkey = QKEY;
		if (ibv_post_send(s, &w, &bad))
			die("UD post send");
		/* (its send completion, then the datagram: the buffer is
		 * reused for the next one only once it arrived) */
		while (vu_poll(cq, &wc, DGRAM_POLL_MS) == 1) {
			const uint8_t *slot, *ip;
			uint8_t want[DGRAM];

			if (wc.opcode != IBV_WC_RECV)
				continue;
			got++;
			slot = rbuf + wc.wr_id * (40 + DGRAM);
			/* (RoCE v2 over IPv4: the GRH's last 20 bytes are
			 * the IPv4 header, source address at 12) */
			ip = slot + 20;
			fill(want, DGRAM, i);
			ok += wc.status == IBV_WC_SUCCESS &&
			      wc.byte_len == 40 + DGRAM && wc.wr_id == i &&
			      wc.src_qp == s->qp_num &&
			      (wc.wc_flags & IBV_WC_GRH) &&
			      !memcmp(ip + 12, gid.raw + 12, 4) &&
			      !memcmp(slot + 40, want, DGRAM);
			break;
		}
	}
	vu_check(ok == NDGRAM, NULL,
		 "%u of %u loopback datagrams arrived whole, from the sending "
		 "QP, with our own address as source (%u arrived)",
		 ok, NDGRAM, got);
}

/* Whether the channel has an event within ms; takes it if so. */
static int event_within(struct ibv_comp_channel *ch, int ms)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	struct ibv_cq *ecq;
	void *ectx;

	if (poll(&p, 1, ms) != 1)
		return 0;
	if (ibv_get_cq_event(ch, &ecq, &ectx))
		return 0;
	ibv_ack_cq_events(ecq, 1);
	return 1;
}

/* n signaled 8-byte WRITEs a -> b, every completion polled off cq. */
static int writes(struct ibv_qp *a, struct ibv_cq *cq, unsigned n,
		  uint64_t *buf, struct ibv_mr *mr)
{
	struct ibv_wc wc;

	for (unsigned i = 0; i < n; i++)
		if (post_rdma(a, IBV_WR_RDMA_WRITE, buf, 8, mr->lkey,
			      (uintptr_t)(buf + 1), mr->rkey) ||
		    vu_poll(cq, &wc, POLL_MS) != 1 || wc.status)
			return -1;
	return 0;
}

/* 5. Event moderation (ibv_modify_cq) on a CQ with a channel: with a
 *    count of 4 and no period, three completions make no event and the
 *    fourth does; with a period of 20 ms and a count of 100, three make
 *    the event once the period is up, not before; a period over the
 *    device's cap and an unknown attribute are refused. */
static void moderation(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *scq = NULL, *rcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_modify_cq_attr m = {.attr_mask = IBV_CQ_ATTR_MODERATE};
	struct vu_dest da = {0}, db = {0};
	uint64_t *buf = calloc(2, 8), t0;
	struct ibv_device_attr_ex dx;
	struct ibv_mr *mr;
	struct ibv_qp *a, *b;
	int got;

	if (ch)
		scq = ibv_create_cq(ctx, 64, NULL, ch, 0);
	if (!ch || !scq || !rcq || !buf)
		die("moderation: channel, CQs");
	a = vu_create_rc_qp(pd, scq, 16, 16, 1, NULL);
	b = vu_create_rc_qp(pd, rcq, 16, 16, 1, NULL);
	mr = reg(pd, buf, 16);
	if (!a || !b)
		die("moderation: QPs");
	da.qpn = a->qp_num;
	db.qpn = b->qp_num;
	da.gid = db.gid = gid;
	if (vu_to_init(a, 0) || vu_to_init(b, IBV_ACCESS_REMOTE_WRITE) ||
	    vu_to_rtr(a, &db, IBV_MTU_4096) || vu_to_rtr(b, &da, IBV_MTU_4096) ||
	    vu_to_rts(a, 0, 14, 7) || vu_to_rts(b, 0, 14, 7))
		die("moderation: connect");
	memset(&dx, 0, sizeof(dx));
	got = ibv_query_device_ex(ctx, NULL, &dx);
	vu_check(got == 0 && dx.cq_mod_caps.max_cq_count == UINT16_MAX &&
			 dx.cq_mod_caps.max_cq_period > 0,
		 NULL, "the device reports CQ moderation (count %u, period %u us)",
		 dx.cq_mod_caps.max_cq_count, dx.cq_mod_caps.max_cq_period);
	m.moderate.cq_period = (uint16_t)(dx.cq_mod_caps.max_cq_period + 1);
	vu_check(dx.cq_mod_caps.max_cq_period == UINT16_MAX ||
			 ibv_modify_cq(scq, &m) == EINVAL,
		 NULL, "a period over the cap is refused");
	m.attr_mask = IBV_CQ_ATTR_RESERVED;
	vu_check(ibv_modify_cq(scq, &m) == EINVAL, NULL,
		 "an unknown attribute is refused");

	/* a count of 4, no period */
	m.attr_mask = IBV_CQ_ATTR_MODERATE;
	m.moderate.cq_count = 4;
	m.moderate.cq_period = 0;
	vu_check(ibv_modify_cq(scq, &m) == 0, NULL, "count 4 set");
	ibv_req_notify_cq(scq, 0);
	if (writes(a, scq, 3, buf, mr))
		die("moderation: writes");
	vu_check(!event_within(ch, 50), NULL,
		 "count 4: three completions make no event (50 ms)");
	if (writes(a, scq, 1, buf, mr))
		die("moderation: writes");
	vu_check(event_within(ch, 2000), NULL, "count 4: the fourth does");

	/* count 16: 64 completions make four events, re-armed after each
	 * (seed 002: a count threshold sets the next interrupt) */
	m.moderate.cq_count = 16;
	vu_check(ibv_modify_cq(scq, &m) == 0, NULL, "count 16 set");
	ibv_req_notify_cq(scq, 0);
	got = 0;
	for (unsigned i = 0; i < 64; i++) {
		if (writes(a, scq, 1, buf, mr))
			die("moderation: writes");
		if (event_within(ch, i % 16 == 15 ? 2000 : 0)) {
			got++;
			ibv_req_notify_cq(scq, 0);
		}
	}
	got += event_within(ch, 50);
	vu_check(got >= 4 && got <= 5, NULL,
		 "count 16: 64 completions made %d events (4, at most 5)", got);

	/* one event an arming: moderation off, three completions make one
	 * event, and no more come until the CQ is armed again, nor after
	 * an arming that no completion follows */
	m.moderate.cq_count = 0;
	vu_check(ibv_modify_cq(scq, &m) == 0, NULL, "moderation off");
	ibv_req_notify_cq(scq, 0);
	if (writes(a, scq, 3, buf, mr))
		die("moderation: writes");
	vu_check(event_within(ch, 2000), NULL, "armed: an event");
	vu_check(!event_within(ch, 100), NULL,
		 "one arming, three completions: one event");
	if (writes(a, scq, 2, buf, mr))
		die("moderation: writes");
	vu_check(!event_within(ch, 100), NULL,
		 "not armed again: no event for two more completions");
	ibv_req_notify_cq(scq, 0);
	vu_check(!event_within(ch, 100), NULL,
		 "armed, no completion: no event");
	if (writes(a, scq, 1, buf, mr))
		die("moderation: writes");
	vu_check(event_within(ch, 2000), NULL,
		 "... until a completion comes");

	/* a period of 20 ms, a count it never reaches */
	m.moderate.cq_count = 100;
	m.moderate.cq_period = 20000;
	vu_check(ibv_modify_cq(scq, &m) == 0, NULL, "period 20 ms set");
	ibv_req_notify_cq(scq, 0);
	t0 = vu_now_ms();
	if (writes(a, scq, 3, buf, mr))
		die("moderation: writes");
	got = event_within(ch, 2000);
	vu_check(got && vu_now_ms() - t0 >= 19, NULL,
		 "period 20 ms: the event came after %lu ms",
		 (unsigned long)(vu_now_ms() - t0));

	/* off again: an event for the next completion */
	m.moderate.cq_count = 0;
	m.moderate.cq_period = 0;
	ibv_modify_cq(scq, &m);
	ibv_req_notify_cq(scq, 0);
	if (writes(a, scq, 1, buf, mr))
		die("moderation: writes");
	vu_check(event_within(ch, 2000), NULL,
		 "moderation off: one completion makes the event");

	/* arming a CQ that holds a completion not polled yet: the next
	 * completion makes the event, not that one (the verbs man page;
	 * perftest's ib_send_lat -e arms before it polls) */
	if (post_rdma(a, IBV_WR_RDMA_WRITE, buf, 8, mr->lkey,
		      (uintptr_t)(buf + 1), mr->rkey))
		die("moderation: post");
	usleep(200000);	/* (it completes meanwhile, unpolled) */
	ibv_req_notify_cq(scq, 0);
	vu_check(!event_within(ch, 100), NULL,
		 "arming with a completion unpolled makes no event");
	if (writes(a, scq, 1, buf, mr))	/* (polls the older one) */
		die("moderation: writes");
	vu_check(event_within(ch, 2000), NULL,
		 "the next completion makes it");
	{
		struct ibv_wc wc;

		vu_check(vu_poll(scq, &wc, POLL_MS) == 1 && !wc.status, NULL,
			 "and is polled after it");
	}
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_dereg_mr(mr);
	vu_check(ibv_destroy_cq(scq) == 0 && ibv_destroy_cq(rcq) == 0 &&
			 ibv_destroy_comp_channel(ch) == 0,
		 NULL, "the moderated CQ and its channel destroyed");
}

/* A connected pair of RC QPs on p, both on cq, remote write and read on. */
static void rc_pair(struct ibv_pd *p, struct ibv_cq *cq, struct ibv_qp *qp[2])
{
	if (vu_loop_pair(p, cq, &gid,
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, qp))
		die("RC pair");
}

/* The same work on one connected pair: two receives posted on b, then from
 * a a SEND with immediate (3000 bytes), a WRITE (4096), a WRITE with
 * immediate (100, into b's second receive) and a READ of the WRITE's 4096,
 * all signaled: wr_ids 1-4, receives 11 and 12.  buf: the source (4 KiB),
 * the WRITEs' target, the receives' buffer. */
#define EX_SENDS 4
#define EX_RECVS 2
#define EX_N (EX_SENDS + EX_RECVS)
static void ex_work(struct ibv_qp *a, struct ibv_qp *b, uint8_t *buf,
		    struct ibv_mr *mr)
{
	static const enum ibv_wr_opcode op[EX_SENDS] = {
		IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ};
	static const uint32_t len[EX_SENDS] = {3000, 4096, 100, 4096};
	struct ibv_recv_wr rwr = {0}, *rbad;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	unsigned i;

	for (i = 0; i < EX_RECVS; i++) {
		sge = (struct ibv_sge){(uintptr_t)(buf + 8192), 4096, mr->lkey};
		rwr.wr_id = 11 + i;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		if (ibv_post_recv(b, &rwr, &rbad))
			die("extended CQ: post recv");
	}
	for (i = 0; i < EX_SENDS; i++) {
		/* (the READ brings the WRITE's bytes back over the source) */
		sge = (struct ibv_sge){(uintptr_t)buf, len[i], mr->lkey};
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 1 + i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = op[i];
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.imm_data = htonl(0x5eed0000 + i);
		wr.wr.rdma.remote_addr = (uintptr_t)(buf + 4096);
		wr.wr.rdma.rkey = mr->rkey;
		if (ibv_post_send(a, &wr, &bad))
			die("extended CQ: post send");
	}
}

/* A completion of ex_work by its wr_id's place; NULL for any other. */
static struct ibv_wc *ex_slot(struct ibv_wc *w, uint64_t wr_id)
{
	if (wr_id >= 1 && wr_id <= EX_SENDS)
		return &w[wr_id - 1];
	if (wr_id >= 11 && wr_id < 11 + EX_RECVS)
		return &w[EX_SENDS + wr_id - 11];
	return NULL;
}

/* The extended CQ's current completion, as far as ibv_wc holds it. */
static void ex_read(struct ibv_cq_ex *cqx, struct ibv_wc *w)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = cqx->wr_id;
	w->status = cqx->status;
	w->opcode = ibv_wc_read_opcode(cqx);
	w->byte_len = ibv_wc_read_byte_len(cqx);
	w->wc_flags = ibv_wc_read_wc_flags(cqx);
	if (w->wc_flags & IBV_WC_WITH_IMM)
		w->imm_data = ibv_wc_read_imm_data(cqx);
	w->qp_num = ibv_wc_read_qp_num(cqx);
	w->src_qp = ibv_wc_read_src_qp(cqx);
	w->slid = ibv_wc_read_slid(cqx);
	w->sl = ibv_wc_read_sl(cqx);
	w->dlid_path_bits = ibv_wc_read_dlid_path_bits(cqx);
}

/* 6. The extended CQ: ex_work on two pairs of QPs, one pair's completions
 *    taken with ibv_poll_cq, the other's with ibv_start_poll,
 *    ibv_next_poll and the ibv_wc_read_* readers; every field must read
 *    the same (QP numbers: each pair's own), and the bytes land. */
static void extended_cq(void)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 64,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
			    IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
			    IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
			    IBV_WC_EX_WITH_DLID_PATH_BITS,
	};
	struct ibv_wc legacy[EX_N], extended[EX_N], wc, *w;
	struct ibv_poll_cq_attr pa = {0};
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(ctx, &ca);
	struct ibv_qp *qp[4];
	uint8_t *buf[2];
	struct ibv_mr *mr[2];
	unsigned i, got, differ = 0, intact = 0;
	uint64_t t0;

	vu_check(cqx != NULL, NULL, "create_cq_ex with every reader srnic has");
	if (!cq || !cqx)
		return;
	/* qp[0] -> qp[1] on the legacy CQ, qp[2] -> qp[3] on the other */
	rc_pair(pd, cq, qp);
	rc_pair(pd, ibv_cq_ex_to_cq(cqx), qp + 2);
	for (i = 0; i < 2; i++) {
		buf[i] = calloc(1, 3 * 4096);
		if (!buf[i])
			die("out of memory");
		fill(buf[i], 4096, 20 + i);
		mr[i] = reg(pd, buf[i], 3 * 4096);
		ex_work(qp[2 * i], qp[2 * i + 1], buf[i], mr[i]);
	}

	memset(legacy, 0, sizeof(legacy));
	for (got = 0; got < EX_N; got++) {
		if (vu_poll(cq, &wc, POLL_MS) != 1 ||
		    !(w = ex_slot(legacy, wc.wr_id)))
			break;
		*w = wc;
	}
	vu_check(got == EX_N, NULL, "legacy poll: %u completions of %u", got,
		 EX_N);

	memset(extended, 0, sizeof(extended));
	got = 0;
	for (t0 = vu_now_ms(); got < EX_N && vu_now_ms() - t0 < POLL_MS;) {
		int rc = ibv_start_poll(cqx, &pa);

		if (rc)
			continue;	/* (ENOENT: none yet) */
		do {
			ex_read(cqx, &wc);
			if ((w = ex_slot(extended, wc.wr_id)))
				*w = wc;
			got++;
		} while (got < EX_N && ibv_next_poll(cqx) == 0);
		ibv_end_poll(cqx);
	}
	vu_check(got == EX_N, NULL, "extended poll: %u completions of %u", got,
		 EX_N);

	for (i = 0; i < EX_N; i++) {
		struct ibv_wc *l = &legacy[i], *x = &extended[i];
		/* (the legacy pair's QP numbers, as the other pair's) */
		uint32_t qpn = l->qp_num == qp[0]->qp_num   ? qp[2]->qp_num
			       : l->qp_num == qp[1]->qp_num ? qp[3]->qp_num
							    : l->qp_num;
		uint32_t src = l->src_qp == qp[0]->qp_num   ? qp[2]->qp_num
			       : l->src_qp == qp[1]->qp_num ? qp[3]->qp_num
							    : l->src_qp;

		if (l->wr_id != x->wr_id || l->status != x->status ||
		    l->status != IBV_WC_SUCCESS || l->opcode != x->opcode ||
		    l->byte_len != x->byte_len || l->wc_flags != x->wc_flags ||
		    ((l->wc_flags & IBV_WC_WITH_IMM) &&
		     l->imm_data != x->imm_data) ||
		    qpn != x->qp_num || src != x->src_qp || l->slid != x->slid ||
		    l->sl != x->sl || l->dlid_path_bits != x->dlid_path_bits) {
			differ++;
			printf("# wr_id %lu: legacy status %d opcode %d len %u "
			       "flags 0x%x qp %u src %u; extended wr_id %lu "
			       "status %d opcode %d len %u flags 0x%x qp %u "
			       "src %u\n",
			       (unsigned long)l->wr_id, l->status, l->opcode,
			       l->byte_len, l->wc_flags, l->qp_num, l->src_qp,
			       (unsigned long)x->wr_id, x->status, x->opcode,
			       x->byte_len, x->wc_flags, x->qp_num, x->src_qp);
		}
	}
	vu_check(!differ, NULL,
		 "the extended readers give what ibv_poll_cq gives, field by "
		 "field, for SEND with immediate, WRITE, WRITE with immediate, "
		 "READ and two receives (%u differ)", differ);
	for (i = 0; i < 2; i++)
		intact += !memcmp(buf[i] + 4096, buf[i], 4096) &&
			  !memcmp(buf[i] + 8192, buf[i], 3000);
	vu_check(intact == 2, NULL, "and both pairs' bytes landed intact");
	for (i = 0; i < 4; i++)
		ibv_destroy_qp(qp[i]);
	for (i = 0; i < 2; i++) {
		ibv_dereg_mr(mr[i]);
		free(buf[i]);
	}
	vu_check(ibv_destroy_cq(cq) == 0 &&
			 ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)) == 0,
		 NULL, "both CQs destroyed");
}

/* 7. ibv_rereg_mr, each change seen by the next access through the same
 *    rkey: a region of 4 KiB at A moved to 8 KiB at B (WRITE lands in B,
 *    A untouched), its rights turned to local write and remote read (a
 *    READ works), then to another PD with remote write back (a QP of that
 *    PD WRITEs; one of the first PD gets REM_ACCESS_ERR and changes
 *    nothing). */
static void rereg(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	uint8_t *a = calloc(1, 4096), *b = calloc(1, 8192),
		*data = malloc(8192), *back = calloc(1, 8192);
	struct ibv_mr *mr, *mdata, *mback, *mdata2;
	struct ibv_qp *p1[2], *p2[2];
	struct ibv_wc wc;
	int rc;

	if (!cq || !a || !b || !data || !back)
		die("rereg: out of memory");
	rc_pair(pd, cq, p1);
	rc_pair(pd2, cq, p2);
	fill(data, 8192, 31);
	mdata = reg(pd, data, 8192);
	mdata2 = reg(pd2, data, 8192);
	mback = reg(pd, back, 8192);
	mr = ibv_reg_mr(pd, a, 4096, IBV_ACCESS_LOCAL_WRITE |
					     IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		die("rereg: reg_mr");

	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b, 8192,
			  0);
	vu_check(rc == 0 && mr->addr == b && mr->length == 8192, NULL,
		 "rereg_mr moves a region (rc %d)", rc);
	if (post_rdma(p1[0], IBV_WR_RDMA_WRITE, data, 8192, mdata->lkey,
		      (uintptr_t)b, mr->rkey))
		die("rereg: post");
	if (!expect_wc(cq, IBV_WC_SUCCESS, &wc, "a WRITE to the moved region"))
		vu_check(!memcmp(b, data, 8192) && !a[0] && !memcmp(a, a + 1, 4095),
			 NULL, "it landed at the new address, the old untouched");

	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	vu_check(rc == 0, NULL, "rereg_mr changes the rights (rc %d)", rc);
	if (post_rdma(p1[0], IBV_WR_RDMA_READ, back, 8192, mback->lkey,
		      (uintptr_t)b, mr->rkey))
		die("rereg: post");
	if (!expect_wc(cq, IBV_WC_SUCCESS, &wc, "a READ it now allows"))
		vu_check(!memcmp(back, data, 8192), NULL, "read back intact");

	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS,
			  pd2, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	vu_check(rc == 0 && mr->pd == pd2, NULL,
		 "rereg_mr moves it to another PD (rc %d)", rc);
	if (post_rdma(p2[0], IBV_WR_RDMA_WRITE, data + 100, 4096, mdata2->lkey,
		      (uintptr_t)b, mr->rkey))
		die("rereg: post");
	if (!expect_wc(cq, IBV_WC_SUCCESS, &wc,
		       "a WRITE from a QP of the new PD"))
		vu_check(!memcmp(b, data + 100, 4096), NULL, "landed intact");
	memcpy(back, b, 8192);
	if (post_rdma(p1[0], IBV_WR_RDMA_WRITE, data, 64, mdata->lkey,
		      (uintptr_t)b, mr->rkey))
		die("rereg: post");
	if (!expect_wc(cq, IBV_WC_REM_ACCESS_ERR, &wc,
		       "a WRITE from a QP of the old PD: REM_ACCESS_ERR"))
		vu_check(!memcmp(back, b, 8192), NULL, "and changed nothing");

	errno = 0;
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_REMOTE_WRITE);
	vu_check(rc != 0 && errno == EINVAL, NULL,
		 "rereg_mr to remote write without local write fails EINVAL "
		 "(rc %d, errno %d)", rc, errno);
	vu_check(ibv_dereg_mr(mr) == 0, NULL, "and the region deregisters");
	ibv_destroy_qp(p1[0]);
	ibv_destroy_qp(p1[1]);
	ibv_destroy_qp(p2[0]);
	ibv_destroy_qp(p2[1]);
	ibv_dereg_mr(mdata);
	ibv_dereg_mr(mdata2);
	ibv_dereg_mr(mback);
	ibv_destroy_cq(cq);
}

/* Up to max completions of cq into wc, polled for about 100 ms: how many
 * came (the tests below count what is left in a CQ). */
static int poll_up_to(struct ibv_cq *cq, struct ibv_wc *wc, int max)
{
	int n = 0, i;

	for (i = 0; i < 100 && n < max; i++) {
		int got = ibv_poll_cq(cq, max - n, wc + n);

		if (got < 0)
			break;
		n += got;
		usleep(1000);
	}
	return n;
}

/* 8. A QP moved to RESET takes its completions not polled yet out of its
 *    CQ, and the other QP's stay, in order (as on mlx5: rdma-core's tests
 *    count on it). */
static void reset_cleans_cq(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_attr err = {.qp_state = IBV_QPS_ERR},
			   reset = {.qp_state = IBV_QPS_RESET};
	uint64_t *buf = calloc(2, 8);
	struct ibv_qp *p1[2], *p2[2];
	struct ibv_wc wc[4];
	struct ibv_mr *mr;
	int n, i, rc = 0;

	if (!cq || !buf)
		die("reset: out of memory");
	rc_pair(pd, cq, p1);
	rc_pair(pd, cq, p2);
	mr = reg(pd, buf, 16);
	/* p1[0]: in the error state, a WRITE posted there completes
	 * flushed; p2[0]: two WRITEs complete; the three wait in cq */
	if (ibv_modify_qp(p1[0], &err, IBV_QP_STATE))
		die("reset: to ERR");
	for (i = 0; i < 3; i++) {
		struct ibv_qp *q = i == 1 ? p1[0] : p2[0];
		struct ibv_sge sge = {(uintptr_t)buf, 8, mr->lkey};
		struct ibv_send_wr wr = {.wr_id = 100 + i, .sg_list = &sge,
					 .num_sge = 1,
					 .opcode = IBV_WR_RDMA_WRITE,
					 .send_flags = IBV_SEND_SIGNALED}, *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)(buf + 1);
		wr.wr.rdma.rkey = mr->rkey;
		rc |= ibv_post_send(q, &wr, &bad);
	}
	if (rc)
		die("reset: post");
	usleep(200000);	/* (all three complete meanwhile) */
	rc = ibv_modify_qp(p1[0], &reset, IBV_QP_STATE);
	n = poll_up_to(cq, wc, 4);
	vu_check(rc == 0 && n == 2 && wc[0].wr_id == 100 && wc[1].wr_id == 102 &&
			 wc[0].qp_num == p2[0]->qp_num && !wc[0].status &&
			 !wc[1].status,
		 NULL, "RESET took the QP's flushed completion out of the CQ and "
		 "left the other QP's two, in order (%d left)", n);
	for (i = 0; i < 2; i++) {
		ibv_destroy_qp(p1[i]);
		ibv_destroy_qp(p2[i]);
	}
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	free(buf);
}

/* 8b. A QP destroyed takes its completions not polled yet out of its CQs,
 *    the other QP's staying (mlx5 does; libfabric's rxm closes a
 *    connection's QP before it reads its CQ dry, and crashed reposting a
 *    destroyed QP's receive: fabtests' fi_rdm_pingpong); and a 0-byte
 *    SEND into a receive of address 0, lkey 0 and 256 bytes completes
 *    well at both ends, 0 bytes long (its bytes land in no SGE, whose key
 *    is then not looked at, as on rxe: libfabric's fi_shared_ctx -e msg
 *    posts such receives). */
static void destroy_cleans_cq(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *p1[2], *p2[2];
	struct ibv_wc wc[4];
	int n, i, rc = 0;
	uint32_t gone;

	if (!cq)
		die("destroy: out of memory");
	rc_pair(pd, cq, p1);
	rc_pair(pd, cq, p2);
	/* a 0-byte SEND from each pair's QP 0 into QP 1's receive of no
	 * memory; both receives and both sends complete into cq */
	for (i = 0; i < 2; i++) {
		struct ibv_qp **p = i ? p2 : p1;
		struct ibv_sge rs = {.addr = 0, .length = 256, .lkey = 0};
		struct ibv_recv_wr rw = {.wr_id = 200 + i, .sg_list = &rs,
					 .num_sge = 1}, *rbad;
		struct ibv_send_wr sw = {.wr_id = 100 + i,
					 .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_SIGNALED},
				   *sbad;

		rc |= ibv_post_recv(p[1], &rw, &rbad);
		rc |= ibv_post_send(p[0], &sw, &sbad);
	}
	if (rc)
		die("destroy: post");
	usleep(200000);	/* (all four complete meanwhile) */
	/* (p1's: its receive's completion goes with its QP 1) */
	gone = p1[1]->qp_num;
	rc = ibv_destroy_qp(p1[1]);
	n = poll_up_to(cq, wc, 4);
	vu_check(rc == 0 && n == 3, NULL, "a QP destroyed took its completion "
		 "out of the CQ and left the other three (%d left)", n);
	{
		int sends = 0, recv_ok = 0, bad_qp = 0;

		for (i = 0; i < n; i++) {
			bad_qp += wc[i].qp_num == gone;
			if (wc[i].status != IBV_WC_SUCCESS)
				continue;
			sends += wc[i].opcode == IBV_WC_SEND;
			recv_ok += wc[i].opcode == IBV_WC_RECV &&
				   wc[i].byte_len == 0 && wc[i].wr_id == 201;
		}
		vu_check(sends == 2 && recv_ok == 1 && !bad_qp, NULL,
			 "0-byte SENDs into receives of no memory: %d sends "
			 "and %d receive (0 bytes) completed well", sends,
			 recv_ok);
	}
	ibv_destroy_qp(p1[0]);
	for (i = 0; i < 2; i++)
		ibv_destroy_qp(p2[i]);

	/* A QP on an SRQ, destroyed, leaves its receive's completion: it
	 * names a WQE of the SRQ, whose buffer the program has back only
	 * by polling it. */
	{
		struct ibv_srq_init_attr sa = {.attr = {.max_wr = 4,
							.max_sge = 1}};
		struct ibv_srq *srq = ibv_create_srq(pd, &sa);
		struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq,
					      .qp_type = IBV_QPT_RC,
					      .cap = {.max_send_wr = 4,
						      .max_send_sge = 1}};
		struct ibv_sge rs = {.addr = 0, .length = 64, .lkey = 0};
		struct ibv_recv_wr rw = {.wr_id = 300, .sg_list = &rs,
					 .num_sge = 1}, *rbad;
		struct ibv_send_wr sw = {.wr_id = 301, .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_SIGNALED},
				   *sbad;
		struct ibv_qp *q[2];

		if (!srq)
			die("destroy: SRQ");
		q[0] = vu_create_rc_qp(pd, cq, 4, 4, 1, NULL);
		ia.srq = srq;
		q[1] = ibv_create_qp(pd, &ia);
		if (!q[0] || !q[1] ||
		    vu_loop_connect(q, &gid, IBV_ACCESS_REMOTE_WRITE))
			die("destroy: SRQ pair");
		/* (a 0-byte SEND from QP 0 into the SRQ's receive of QP 1,
		 * then QP 1 destroyed: its receive's completion and QP 0's
		 * send's wait in cq) */
		rc = ibv_post_srq_recv(srq, &rw, &rbad);
		rc |= ibv_post_send(q[0], &sw, &sbad);
		usleep(200000);
		gone = q[1]->qp_num;
		rc |= ibv_destroy_qp(q[1]);
		n = poll_up_to(cq, wc, 2);
		{
			int kept = 0;

			for (i = 0; i < n; i++)
				kept += wc[i].qp_num == gone &&
					wc[i].wr_id == 300 && !wc[i].status &&
					wc[i].opcode == IBV_WC_RECV;
			vu_check(rc == 0 && n == 2 && kept == 1, NULL,
				 "a QP on an SRQ destroyed left its receive's "
				 "completion (%d completions, %d of it)", n,
				 kept);
		}
		ibv_destroy_qp(q[0]);
		ibv_destroy_srq(srq);
	}
	ibv_destroy_cq(cq);
}

/* 9. A parent domain is its PD to every verb: QPs made with it WRITE into
 *    a region of the PD, and a region of another PD refuses them; a CQ
 *    may name it; a parent domain of a parent domain is refused. */
static void parent_domain(void)
{
	struct ibv_parent_domain_init_attr pa = {.pd = pd};
	struct ibv_pd *parent = ibv_alloc_parent_domain(ctx, &pa), *bad;
	struct ibv_cq_init_attr_ex ca = {.cqe = 16,
					 .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD};
	struct ibv_cq_ex *cqx;
	uint8_t *dst = calloc(1, 4096), *far = calloc(1, 4096);
	struct ibv_mr *mdst, *mfar;
	struct ibv_qp *qp[2];
	struct ibv_wc wc;

	vu_check(parent != NULL, NULL, "alloc_parent_domain");
	if (!parent || !dst || !far)
		return;
	ca.parent_domain = parent;
	cqx = ibv_create_cq_ex(ctx, &ca);
	vu_check(cqx != NULL, NULL, "an extended CQ naming the parent domain");
	if (!cqx)
		return;
	pa.pd = parent;
	errno = 0;
	bad = ibv_alloc_parent_domain(ctx, &pa);
	vu_check(!bad && errno == EINVAL, NULL,
		 "a parent domain of a parent domain is refused EINVAL");
	if (vu_loop_pair(parent, ibv_cq_ex_to_cq(cqx), &gid,
			 IBV_ACCESS_REMOTE_WRITE, qp))
		die("parent domain: QPs");
	mdst = reg(pd, dst, 4096);
	mfar = reg(pd2, far, 4096);
	if (post_rdma(qp[0], IBV_WR_RDMA_WRITE, src, 4096, msrc->lkey,
		      (uintptr_t)dst, mdst->rkey))
		die("parent domain: post");
	if (!expect_wc(ibv_cq_ex_to_cq(cqx), IBV_WC_SUCCESS, &wc,
		       "a WRITE from a QP of the parent domain into its PD"))
		vu_check(!memcmp(dst, src, 4096), NULL, "landed intact");
	if (post_rdma(qp[0], IBV_WR_RDMA_WRITE, src, 64, msrc->lkey,
		      (uintptr_t)far, mfar->rkey))
		die("parent domain: post");
	if (!expect_wc(ibv_cq_ex_to_cq(cqx), IBV_WC_REM_ACCESS_ERR, &wc,
		       "into another PD's region: REM_ACCESS_ERR"))
		vu_check(!far[0] && !memcmp(far, far + 1, 4095), NULL,
			 "and nothing written");
	ibv_destroy_qp(qp[0]);
	ibv_destroy_qp(qp[1]);
	ibv_dereg_mr(mdst);
	ibv_dereg_mr(mfar);
	vu_check(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)) == 0 &&
			 ibv_dealloc_pd(parent) == 0,
		 NULL, "the CQ and the parent domain go");
	free(dst);
	free(far);
}

/* 8 aligned bytes stored as one: through ibv_post_send's
 * IBV_WR_ATOMIC_WRITE (the 8 bytes in an SGE) and an extended QP's
 * ibv_wr_atomic_write (taken at the call); each completes as
 * IBV_WC_ATOMIC_WRITE and changes those 8 bytes only.  Another length, or
 * an unaligned address, is refused at the post. */
static void atomic_write(void)
{
	static const uint64_t v1 = 0x0123456789abcdefull,
			      v2 = 0xfeedfacecafebeefull;
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	uint64_t *dst = calloc(8, 8), *val = calloc(2, 8);
	struct ibv_qp_init_attr_ex xa = {
		.qp_type = IBV_QPT_RC, .pd = pd,
		.cap = {.max_send_wr = 16, .max_recv_wr = 16,
			.max_send_sge = 1, .max_recv_sge = 1},
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE};
	struct ibv_sge sge;
	struct ibv_send_wr wr = {0}, *bad;
	struct ibv_mr *mdst, *mval;
	struct ibv_qp *qp[2], *xy[2];
	struct ibv_qp_ex *qx;
	struct ibv_wc wc;
	unsigned i;
	int ok;

	if (!cq || !dst || !val)
		die("atomic write: out of memory");
	memset(dst, 0x5a, 64);
	val[0] = v1;
	mdst = reg(pd, dst, 64);
	mval = reg(pd, val, 16);
	rc_pair(pd, cq, qp);
	sge = (struct ibv_sge){(uintptr_t)val, 8, mval->lkey};
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_ATOMIC_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)(dst + 2);
	wr.wr.rdma.rkey = mdst->rkey;
	if (ibv_post_send(qp[0], &wr, &bad))
		die("atomic write: post");
	ok = !expect_wc(cq, IBV_WC_SUCCESS, &wc,
			"IBV_WR_ATOMIC_WRITE completes") &&
	     wc.opcode == IBV_WC_ATOMIC_WRITE && dst[2] == v1;
	for (i = 0; i < 8; i++)
		ok = ok && (i == 2 || dst[i] == 0x5a5a5a5a5a5a5a5aull);
	vu_check(ok, NULL, "as IBV_WC_ATOMIC_WRITE, its 8 bytes landed and "
		 "no other");
	wr.wr.rdma.remote_addr = (uintptr_t)dst + 4;
	vu_check(ibv_post_send(qp[0], &wr, &bad) == EINVAL, NULL,
		 "an unaligned atomic write is refused EINVAL");
	wr.wr.rdma.remote_addr = (uintptr_t)(dst + 2);
	sge.length = 16;
	vu_check(ibv_post_send(qp[0], &wr, &bad) == EINVAL, NULL,
		 "an atomic write of 16 bytes is refused EINVAL");

	xa.send_cq = xa.recv_cq = cq;
	xy[0] = ibv_create_qp_ex(ctx, &xa);
	xy[1] = vu_create_rc_qp(pd, cq, 16, 16, 1, NULL);
	vu_check(xy[0] && xy[1], vu_err_str(errno),
		 "an extended QP with IBV_QP_EX_WITH_ATOMIC_WRITE");
	if (!xy[0] || !xy[1])
		return;
	if (vu_loop_connect(xy, &gid, IBV_ACCESS_REMOTE_WRITE))
		die("atomic write: connect");
	qx = ibv_qp_to_qp_ex(xy[0]);
	ibv_wr_start(qx);
	qx->wr_id = 7;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qx, mdst->rkey, (uintptr_t)(dst + 5), &v2);
	ok = ibv_wr_complete(qx) == 0 &&
	     !expect_wc(cq, IBV_WC_SUCCESS, &wc, "ibv_wr_atomic_write "
			"completes") &&
	     wc.opcode == IBV_WC_ATOMIC_WRITE && wc.wr_id == 7 &&
	     dst[5] == v2 && dst[2] == v1 && dst[4] == 0x5a5a5a5a5a5a5a5aull &&
	     dst[6] == 0x5a5a5a5a5a5a5a5aull;
	vu_check(ok, NULL, "its 8 bytes landed and no other");
	ibv_destroy_qp(qp[0]);
	ibv_destroy_qp(qp[1]);
	ibv_destroy_qp(xy[0]);
	ibv_destroy_qp(xy[1]);
	ibv_dereg_mr(mdst);
	ibv_dereg_mr(mval);
	ibv_destroy_cq(cq);
	free(dst);
	free(val);
}

static int64_t clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* An extended CQ with both timestamp flags: each of three WRITEs'
 * completion time lies between the post and the poll, in the device's
 * clock (1 GHz, hca_core_clock, which ibv_query_rt_values_ex reads) and in
 * wall-clock time; the times do not go back. */
static void timestamps(void)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16,
		.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK};
	struct ibv_values_ex rt = {.comp_mask = IBV_VALUES_MASK_RAW_CLOCK};
	struct ibv_poll_cq_attr pa = {0};
	struct ibv_device_attr_ex da;
	uint8_t *dst = calloc(1, 4096);
	struct ibv_cq_ex *cqx;
	struct ibv_qp *qp[2];
	struct ibv_mr *mdst;
	int64_t t0, t1, w0, w1, raw, ts, wall, last = 0;
	int i, ok = 1, rc;

	if (ibv_query_device_ex(ctx, NULL, &da))
		die("timestamps: query_device_ex");
	vu_check(da.hca_core_clock == 1000000 &&
			 da.completion_timestamp_mask == UINT64_MAX,
		 NULL, "the device's clock: 1 GHz (hca_core_clock %llu kHz), "
		 "64 bits", (unsigned long long)da.hca_core_clock);
	t0 = clock_ns(CLOCK_MONOTONIC);
	rc = ibv_query_rt_values_ex(ctx, &rt);
	raw = rt.raw_clock.tv_nsec;
	t1 = clock_ns(CLOCK_MONOTONIC);
	vu_check(!rc && rt.comp_mask == IBV_VALUES_MASK_RAW_CLOCK &&
			 raw >= t0 && raw <= t1,
		 NULL, "ibv_query_rt_values_ex reads it");
	cqx = ibv_create_cq_ex(ctx, &ca);
	if (!dst || !cqx)
		die("timestamps: CQ");
	rc_pair(pd, ibv_cq_ex_to_cq(cqx), qp);
	mdst = reg(pd, dst, 4096);
	for (i = 0; i < 3 && ok; i++) {
		t0 = clock_ns(CLOCK_MONOTONIC);
		w0 = clock_ns(CLOCK_REALTIME);
		if (post_rdma(qp[0], IBV_WR_RDMA_WRITE, src, 4096, msrc->lkey,
			      (uintptr_t)dst, mdst->rkey))
			die("timestamps: post");
		while ((rc = ibv_start_poll(cqx, &pa)) == ENOENT)
			;
		t1 = clock_ns(CLOCK_MONOTONIC);
		w1 = clock_ns(CLOCK_REALTIME);
		ok = !rc && cqx->status == IBV_WC_SUCCESS;
		if (ok) {
			ts = (int64_t)ibv_wc_read_completion_ts(cqx);
			wall = (int64_t)ibv_wc_read_completion_wallclock_ns(cqx);
			/* (the wall clock may be slewed meanwhile: 1 ms) */
			ok = ts >= t0 && ts <= t1 && ts >= last &&
			     wall >= w0 - 1000000 && wall <= w1 + 1000000;
			last = ts;
			ibv_end_poll(cqx);
		}
	}
	vu_check(ok, NULL, "each completion's time lies between its post "
		 "and its poll, in both clocks");
	/* a completion waiting through a resize keeps its time */
	t0 = clock_ns(CLOCK_MONOTONIC);
	if (post_rdma(qp[0], IBV_WR_RDMA_WRITE, src, 64, msrc->lkey,
		      (uintptr_t)dst, mdst->rkey))
		die("timestamps: post");
	usleep(20000);
	rc = ibv_resize_cq(ibv_cq_ex_to_cq(cqx), 64);
	ok = !rc;
	while (ok && (rc = ibv_start_poll(cqx, &pa)) == ENOENT)
		;
	t1 = clock_ns(CLOCK_MONOTONIC);
	if (ok && !rc) {
		ts = (int64_t)ibv_wc_read_completion_ts(cqx);
		ok = cqx->status == IBV_WC_SUCCESS && ts >= t0 && ts <= t1;
		ibv_end_poll(cqx);
	}
	vu_check(ok && !rc, NULL, "and one that waited through "
		 "ibv_resize_cq keeps its time");
	ibv_destroy_qp(qp[0]);
	ibv_destroy_qp(qp[1]);
	ibv_dereg_mr(mdst);
	ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
	free(dst);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	uint64_t t0, took, listed;
	int c, n;

	while ((c = getopt(argc, argv, "s:")) != -1)
		if (c == 's')
			bytes = strtoul(optarg, NULL, 0);
	if (!bytes || bytes > (1u << 30))
		die("bad -s");
	src = malloc(bytes);
	if (!src)
		die("out of memory");
	fill(src, bytes, 1);
	/* (libibverbs loads the provider when it lists the devices: that
	 * is the program's start-up, timed apart) */
	t0 = vu_now_ms();
	list = ibv_get_device_list(&n);
	if (!list || n < 1)
		die("no RDMA device");
	listed = vu_now_ms() - t0;
	t0 = vu_now_ms();
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!ctx)
		die("cannot open the device");
	pd = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	if (!pd || !pd2 || ibv_query_gid(ctx, VU_PORT, VU_GID_INDEX, &gid))
		die("PD or GID");
	msrc = reg(pd, src, bytes);
	took = vu_now_ms() - t0;
	vu_check(took < 50, NULL, "open, 2 PDs and an MR took %lu ms (< 50; "
		 "listing the devices took %lu ms)",
		 (unsigned long)took, (unsigned long)listed);
	vu_check(!threads_named("srnic-") && !threads_named("eal-") &&
			 !threads_named("rte_"),
		 NULL, "open, PDs and an MR start no engine or DPDK thread");
	connected();
	vu_check(threads_named("srnic-dp") == 1, NULL,
		 "the first CQ started the datapath");
	datagrams();
	moderation();
	extended_cq();
	rereg();
	reset_cleans_cq();
	destroy_cleans_cq();
	parent_domain();
	atomic_write();
	timestamps();
	printf("# %u checks, %u failed\n", vu_checks, vu_failed);
	return vu_failed ? 1 : 0;
}
