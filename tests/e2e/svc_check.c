/* SPDX-License-Identifier: MIT */
/*
 * svc_check: requests to a service whose holder fails and comes back
 * (docs/failover.md; tests/e2e/36-failover-qps.sh, ./srnic demo failover).
 *
 *   member:  svc_check serve SERVICE_IPV4
 *   client:  svc_check client SERVICE_IPV4 REQUESTS [RKEY]
 *
 * A member parks a QP of the service's slot 0 (srnic_svc_create_qp) with
 * receives posted, and answers each request (a 4 KiB SEND whose first 8
 * bytes are its number) with a SEND of the number and the node's name.
 * When the QP fails (this node stopped holding the service) it parks it
 * again.  It says "bound" and "dropped" as the events come.  SIGUSR1
 * asks it to hand the service over (failback=manual): it freezes the
 * service's QPs (srnic_svc_freeze), answers what it took, waits for its
 * answers to complete and FROZEN_MS at least, and calls
 * srnic_svc_handover ("frozen", "handed over").  It also
 * holds slot 0's region (srnic_svc_reg_mr), 1 MiB at the same address on
 * every member, and says its key.
 *
 * The client connects one RC QP to the service's address and slot 0's QP
 * number, and sends REQUESTS requests, 64 unanswered at most; a request
 * without an answer RETRY_MS after its send completed is sent again (the
 * application's part: a holder that died may have taken it with it).
 * Given the region's key, it also WRITEs 64 bytes to it every 50
 * requests: the key works at whichever member holds the service.  It
 * prints "progress N%" every 10%, then
 *
 *   failover: N requests, L lost, D duplicates, holders b c b, moves T F ms,
 *             longest gap G ms, R sent again
 *
 * (each move: the time from the old holder's last answer to the new
 * one's first)
 *
 * and exits 0 when every request got an answer and every one of its
 * WQEs completed without error: the QP lived through the takeovers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "srnic.h"
#include "verbs_util.h"

#define REQ_LEN 4096
#define REP_LEN 32
#define WINDOW 64
#define RECVS 128
/* A request the holder acknowledged but never answered died with it.
 * When the holder dies with all WINDOW requests in that state (its
 * program fell behind its datapath by a window, a few ms on a busy
 * machine), nothing else moves until they go again: RETRY_MS is then the
 * takeover the client sees (2 s made e2e/36's 1 s bound fail in CI,
 * "takeover 2000 ms"), so it stays below the tightest bound there (250
 * ms); an answer slower than it (a member stalled that long) counts as a
 * duplicate, so each request waits twice as long at each try after (at
 * most 16 times), and e2e/36 allows a duplicate for each request sent
 * again. */
#define RETRY_MS 200
#define RETRY_MAX_SHIFT 4
#define BYE UINT64_MAX	/* the client's last request: the member closes */
/* A service region: 1 MiB at the same address on every member (a key
 * addresses memory by virtual address), slot 0's key. */
#define SVC_REGION ((void *)0x5e0000000000ull)
#define SVC_REGION_LEN (1u << 20)
#define WRITE_EVERY 50	/* a client's WRITE to it every so many requests */
/* Datagrams to the service: slot 1's UD QP on every member answers each
 * ping; the client sends one every PING_MS. */
#define UD_QKEY 0x5eed
#define UD_RECVS 64
#define PING_MS 1
#define GRH 40
#define PING_SLACK_MS 50	/* a lost ping counts as the move's this close */

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;		/* RECVS receive slots, then send slots */
	uint32_t slot_len;
};

static int post_recv(struct side *s, unsigned i)
{
	struct ibv_sge sge = {(uintptr_t)s->buf + (uint64_t)i * s->slot_len,
			      s->slot_len, s->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1},
			   *bad;

	return ibv_post_recv(s->qp, &wr, &bad);
}

static int post_send(struct side *s, uint64_t id, const void *data,
		     uint32_t len, unsigned slot)
{
	uint8_t *p = s->buf + (uint64_t)(RECVS + slot) * s->slot_len;
	struct ibv_sge sge = {(uintptr_t)p, len, s->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	memcpy(p, data, len < 8 + 16 ? len : 8 + 16);
	return ibv_post_send(s->qp, &wr, &bad);
}

static int setup(struct side *s, uint32_t slot_len)
{
	s->ctx = vu_open_first();
	if (!s->ctx)
		return -1;
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 4 * RECVS, NULL, NULL, 0);
	s->slot_len = slot_len;
	s->buf = calloc(2 * RECVS, slot_len);
	if (!s->pd || !s->cq || !s->buf)
		return -1;
	s->mr = ibv_reg_mr(s->pd, s->buf, (size_t)2 * RECVS * slot_len,
			   IBV_ACCESS_LOCAL_WRITE);
	return s->mr ? 0 : -1;
}

/* ---- datagrams ---- */

struct ud {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;		/* UD_RECVS receive slots, then send slots */
};

#define UD_SLOT 64	/* GRH and 8 bytes, rounded */

static int ud_post_recv(struct ud *u, unsigned i)
{
	struct ibv_sge sge = {(uintptr_t)u->buf + i * UD_SLOT, UD_SLOT,
			      u->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1},
			   *bad;

	return ibv_post_recv(u->qp, &wr, &bad);
}

static int ud_send(struct ud *u, struct ibv_ah *ah, uint32_t qpn,
		   uint64_t seq, unsigned slot)
{
	uint8_t *p = u->buf + (UD_RECVS + slot % UD_RECVS) * UD_SLOT;
	struct ibv_sge sge = {(uintptr_t)p, 8, u->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = seq, .sg_list = &sge, .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	memcpy(p, &seq, 8);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = UD_QKEY;
	return ibv_post_send(u->qp, &wr, &bad);
}

/* A UD QP in RTS (a member's: slot 1 of the service), receives posted. */
static int ud_make(struct side *s, struct ud *u, uint32_t svc, bool member)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.cap = {.max_send_wr = UD_RECVS, .max_recv_wr = UD_RECVS,
			.max_send_sge = 1, .max_recv_sge = 1},
	};
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1,
				.qkey = UD_QKEY};
	unsigned i;

	u->cq = ibv_create_cq(s->ctx, 4 * UD_RECVS, NULL, NULL, 0);
	u->buf = calloc(2 * UD_RECVS, UD_SLOT);
	if (!u->cq || !u->buf)
		return -1;
	u->mr = ibv_reg_mr(s->pd, u->buf, 2 * UD_RECVS * UD_SLOT,
			   IBV_ACCESS_LOCAL_WRITE);
	ia.send_cq = ia.recv_cq = u->cq;
	u->qp = member ? srnic_svc_create_qp(s->pd, &ia, svc, 1)
		       : ibv_create_qp(s->pd, &ia);
	if (!u->mr || !u->qp ||
	    ibv_modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					     IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(u->qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return -1;
	for (i = 0; i < UD_RECVS; i++)
		if (ud_post_recv(u, i))
			return -1;
	return 0;
}

/* A member: each ping answered to its sender (one address handle kept
 * for the last sender: making one resolves its GID, a slow path). */
static void ud_answer(struct side *s, struct ud *u, unsigned *slot)
{
	static struct ibv_ah *ah;
	static union ibv_gid ah_gid;
	struct ibv_wc wc[8];
	int n = ibv_poll_cq(u->cq, 8, wc), i;

	for (i = 0; i < n; i++) {
		const uint8_t *p = u->buf + wc[i].wr_id * UD_SLOT;
		union ibv_gid gid;
		uint64_t seq;

		if (wc[i].status != IBV_WC_SUCCESS || wc[i].opcode != IBV_WC_RECV)
			continue;
		memcpy(&seq, p + GRH, 8);
		/* The sender: RoCE v2's IPv4 header fills the GRH's last 20
		 * bytes, its source address at 32.  (Not
		 * ibv_create_ah_from_wc: it looks for the destination, the
		 * service's address, among this node's GIDs.) */
		memset(&gid, 0, sizeof(gid));
		gid.raw[10] = gid.raw[11] = 0xff;
		memcpy(gid.raw + 12, p + 32, 4);
		if (!ah || memcmp(&ah_gid, &gid, sizeof(gid))) {
			struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};

			if (ah)
				ibv_destroy_ah(ah);
			aa.grh.dgid = gid;
			aa.grh.sgid_index = VU_GID_INDEX;
			ah = ibv_create_ah(s->pd, &aa);
			ah_gid = gid;
		}
		if (ah)
			ud_send(u, ah, wc[i].src_qp, seq, (*slot)++);
		ud_post_recv(u, (unsigned)wc[i].wr_id);
	}
}

/* A pong's number, and whether it came from the service's address (be,
 * network order) as a member's datagrams do (seed 000 ¶67), or from the
 * member's own (counted in not_svc). */
static uint64_t pong_seq(const struct ud *u, uint64_t wr_id, uint32_t be,
			 uint64_t *not_svc)
{
	const uint8_t *p = u->buf + wr_id * UD_SLOT;
	uint64_t seq;

	memcpy(&seq, p + GRH, 8);
	*not_svc += memcmp(p + 32, &be, 4) != 0;
	return seq;
}

/* ---- a member ---- */

static int park(struct side *s, uint32_t svc)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = RECVS, .max_recv_wr = RECVS,
			.max_send_sge = 1, .max_recv_sge = 1},
	};
	unsigned i;

	if (s->qp)
		ibv_destroy_qp(s->qp);
	s->qp = srnic_svc_create_qp(s->pd, &ia, svc, 0);
	if (!s->qp || vu_to_init(s->qp, IBV_ACCESS_REMOTE_WRITE))
		return -1;
	for (i = 0; i < RECVS; i++)
		if (post_recv(s, i))
			return -1;
	printf("parked qp %#x\n", s->qp->qp_num);
	fflush(stdout);
	return 0;
}

/* failback=manual: SIGUSR1 asks the holder's program to hand the service
 * over (./srnic demo failover --failback manual). */
static volatile sig_atomic_t handover_asked;

static void ask_handover(int sig)
{
	(void)sig;
	handover_asked = 1;
}

/* The hand-over, a step a loop: freeze the service's QPs, then (once
 * every request taken is answered, the CQ empty, no send outstanding,
 * and FROZEN_MS gone) hand the service over.  *frozen says how far it
 * got.  (FROZEN_MS: requests meet the frozen QP, and are dropped there
 * and sent again to the next holder, which e2e/36 checks happened; a
 * program idle at once handed over within 100 us, and a CI run saw no
 * request in that time.) */
#define FROZEN_MS 20

static void hand_over(struct side *s, uint32_t svc, bool *frozen,
		      bool idle, unsigned sends_out)
{
	static uint64_t frozen_at;
	int rc;

	if (!*frozen) {
		rc = srnic_svc_freeze(s->ctx, svc);
		printf("frozen: %d QPs%s\n", rc < 0 ? 0 : rc,
		       rc < 0 ? " (not holding)" : "");
		fflush(stdout);
		*frozen = rc >= 0;
		handover_asked = *frozen;
		frozen_at = vu_now_ms();
		return;
	}
	if (!idle || sends_out || vu_now_ms() - frozen_at < FROZEN_MS)
		return;
	rc = srnic_svc_handover(s->ctx, svc);
	if (rc == EAGAIN)
		return;	/* (nobody better heard yet: again) */
	printf("handed over: %s\n", rc ? strerror(rc) : "ok");
	fflush(stdout);
	handover_asked = 0;
	*frozen = false;
}

static int serve(uint32_t svc)
{
	struct srnic_device_attr da = {0};
	struct side s = {0};
	char node[16] = {0};
	unsigned next_send = 0, sends_out = 0;
	bool frozen = false, told_error = false;

	struct ibv_mr *region;
	struct ud u = {0};
	unsigned ud_slot = 0;
	void *mem;

	if (setup(&s, REQ_LEN) || srnic_query_device(s.ctx, &da) ||
	    park(&s, svc))
		return 2;
	snprintf(node, sizeof(node), "%s", da.node);
	mem = mmap(SVC_REGION, SVC_REGION_LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	region = mem == SVC_REGION
			 ? srnic_svc_reg_mr(s.pd, mem, SVC_REGION_LEN,
					    IBV_ACCESS_LOCAL_WRITE |
						    IBV_ACCESS_REMOTE_WRITE,
					    svc, 0)
			 : NULL;
	if (!region)
		return 2;
	printf("region key %#x addr %p\n", region->rkey, mem);
	fflush(stdout);
	if (ud_make(&s, &u, svc, true))
		return 2;
	fcntl(s.ctx->async_fd, F_SETFL,
	      fcntl(s.ctx->async_fd, F_GETFL) | O_NONBLOCK);
	signal(SIGUSR1, ask_handover);
	for (;;) {
		struct ibv_async_event ev;
		struct ibv_wc wc[16];
		int n, i;

		if (ibv_get_async_event(s.ctx, &ev) == 0) {
			enum ibv_event_type t = ev.event_type;

			ibv_ack_async_event(&ev);
			if (t == IBV_EVENT_COMM_EST) {
				printf("bound\n");
				fflush(stdout);
			} else if (t == IBV_EVENT_QP_FATAL &&
				   ev.element.qp == s.qp) {
				/* (the event names its QP: the one parked now
				 * is what it serves) */
				printf("dropped: parking again\n");
				fflush(stdout);
				while (ibv_poll_cq(s.cq, 16, wc) > 0)
					;
				sends_out = 0;
				told_error = false;
				if (park(&s, svc))
					return 2;
			}
		}
		ud_answer(&s, &u, &ud_slot);
		n = ibv_poll_cq(s.cq, 16, wc);
		for (i = 0; i < n; i++) {
			uint8_t rep[8 + 16];

			if (wc[i].opcode == IBV_WC_SEND && sends_out)
				sends_out--;
			/* (the QP failed: QP_FATAL follows, and the park;
			 * the log says why, once) */
			if (wc[i].status != IBV_WC_SUCCESS &&
			    wc[i].status != IBV_WC_WR_FLUSH_ERR && !told_error) {
				printf("completion in error: %s\n",
				       ibv_wc_status_str(wc[i].status));
				fflush(stdout);
				told_error = true;
			}
			if (wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].opcode != IBV_WC_RECV)
				continue;
			memcpy(rep, s.buf + wc[i].wr_id * s.slot_len, 8);
			if (!memcmp(rep, &(uint64_t){BYE}, 8)) {
				/* the client is done: its connection closes,
				 * a fresh QP waits for the next */
				printf("goodbye: parking again\n");
				fflush(stdout);
				while (ibv_poll_cq(s.cq, 16, wc) > 0)
					;
				sends_out = 0;
				if (park(&s, svc))
					return 2;
				break;
			}
			memcpy(rep + 8, node, 16);
			if (!post_send(&s, 0, rep, REP_LEN, next_send++ % RECVS))
				sends_out++;
			post_recv(&s, (unsigned)wc[i].wr_id);
		}
		if (handover_asked)
			hand_over(&s, svc, &frozen, n <= 0, sends_out);
		if (!n)
			usleep(50);
	}
}

/* ---- the client ---- */

static int post_write(struct side *s, uint64_t seq, uint32_t rkey,
		      unsigned slot)
{
	uint8_t *p = s->buf + (uint64_t)(RECVS + slot) * s->slot_len;
	struct ibv_sge sge = {(uintptr_t)p, 64, s->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = UINT64_MAX, .sg_list = &sge,
				 .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	memcpy(p, &seq, 8);
	wr.wr.rdma.remote_addr = (uintptr_t)SVC_REGION +
				 (seq / WRITE_EVERY % (SVC_REGION_LEN / 64)) * 64;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(s->qp, &wr, &bad);
}

/* A step of the client's that failed: which, and the errno it left. */
static int setup_failed(int step)
{
	fprintf(stderr, "svc_check: client step %d failed: %s\n", step,
		strerror(errno));
	return 2;
}

static int client(uint32_t svc, uint64_t nreq, uint32_t rkey)
{
	struct vu_dest peer = {.qpn = SRNIC_SVC_QPN(0), .psn = 0};
	uint8_t *answers = calloc(nreq, 1);
	uint64_t *sent_at = calloc(nreq, sizeof(uint64_t));
	uint8_t *tries = calloc(nreq, 1);	/* sent again so often */
	uint64_t next = 0, answered = 0, dups = 0, errors = 0, last = 0;
	uint64_t writes = 0, again = 0;
	/* datagrams: pings to the service, the members' pongs; the holders'
	 * moves as the RC answers showed them (from, to: ms) */
#define MAX_PINGS 200000
#define MAX_MOVES 8
	static uint64_t ping_at[MAX_PINGS];
	static uint8_t pong[MAX_PINGS];
	uint64_t pings = 0, next_ping = 0, move_from[MAX_MOVES],
		 move_to[MAX_MOVES];
	unsigned nmoves = 0, ud_slot = 0, ud_sends = 0;
	uint64_t not_svc = 0;	/* pongs from a member's own address */
	struct ibv_ah *svc_ah;
	struct ud u = {0};
	uint64_t gap = 0, i, lost = 0, deadline, pct = 0, prev = 0;
	char holders[128] = "", changes[128] = "", last_node[16] = "";
	unsigned open = 0, slot = 0, sends = 0;
	struct side s = {0};
	uint32_t be = htonl(svc);

	if (!answers || !sent_at || !tries || setup(&s, REQ_LEN))
		return setup_failed(1);
	s.qp = vu_create_rc_qp(s.pd, s.cq, 2 * RECVS, RECVS, 1, NULL);
	memset(peer.gid.raw + 10, 0xff, 2);
	memcpy(peer.gid.raw + 12, &be, 4);
	if (!s.qp)
		return setup_failed(2);
	errno = vu_to_init(s.qp, 0);
	if (!errno)
		errno = vu_to_rtr(s.qp, &peer, IBV_MTU_1024);
	if (!errno)
		errno = vu_to_rts(s.qp, 0, 14, 7);
	if (errno)
		return setup_failed(2);
	for (i = 0; i < RECVS; i++)
		if (post_recv(&s, (unsigned)i))
			return setup_failed(3);
	{
		struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};

		aa.grh.dgid = peer.gid;
		aa.grh.sgid_index = VU_GID_INDEX;
		svc_ah = ibv_create_ah(s.pd, &aa);
		if (!svc_ah || ud_make(&s, &u, svc, false))
			return setup_failed(4);
	}
	deadline = vu_now_ms() + 120000;
	last = vu_now_ms();
	while (answered < nreq && vu_now_ms() < deadline) {
		struct ibv_wc wc[16];
		uint64_t now = vu_now_ms();
		int n, k;

		/* new requests, and those unanswered too long again */
		while (open < WINDOW && next < nreq && sends + 1 < RECVS) {
			uint8_t req[24] = {0};

			/* (now and then a WRITE to the service's region: its
			 * key must work at whichever member holds it) */
			if (rkey && next % WRITE_EVERY == 0) {
				if (post_write(&s, next, rkey, slot++ % RECVS))
					return setup_failed(5);
				sends++;
			}
			memcpy(req, &next, 8);
			if (post_send(&s, next, req, REQ_LEN, slot++ % RECVS))
				return setup_failed(6);
			sent_at[next++] = 0;
			open++;
			sends++;
		}
		for (i = 0; i < next && sends < RECVS; i++) {
			uint8_t req[24] = {0};

			if (answers[i] || !sent_at[i] ||
			    now < sent_at[i] + ((uint64_t)RETRY_MS << tries[i]))
				continue;
			memcpy(req, &i, 8);
			if (post_send(&s, i, req, REQ_LEN, slot++ % RECVS))
				return setup_failed(7);
			sent_at[i] = 0;
			sends++;
			again++;
			if (tries[i] < RETRY_MAX_SHIFT)
				tries[i]++;
		}
		/* a ping every PING_MS; the pongs and send completions */
		if (now >= next_ping && pings < MAX_PINGS && ud_sends < UD_RECVS) {
			if (ud_send(&u, svc_ah, SRNIC_SVC_QPN(1), pings,
				    ud_slot++))
				return setup_failed(8);
			ping_at[pings++] = now;
			ud_sends++;
			next_ping = now + PING_MS;
		}
		{
			struct ibv_wc uw[16];
			int un = ibv_poll_cq(u.cq, 16, uw), ui;

			for (ui = 0; ui < un; ui++) {
				uint64_t seq;

				if (uw[ui].opcode == IBV_WC_SEND) {
					ud_sends--;
					continue;
				}
				if (uw[ui].status == IBV_WC_SUCCESS) {
					seq = pong_seq(&u, uw[ui].wr_id, be,
						       &not_svc);
					if (seq < pings)
						pong[seq] = 1;
				}
				ud_post_recv(&u, (unsigned)uw[ui].wr_id);
			}
		}
		n = ibv_poll_cq(s.cq, 16, wc);
		for (k = 0; k < n; k++) {
			uint64_t seq;

			if (wc[k].status != IBV_WC_SUCCESS) {
				/* (the QP failed: the run ends here) */
				if (!errors++)
					printf("completion: %s\n",
					       ibv_wc_status_str(wc[k].status));
				continue;
			}
			if (wc[k].opcode == IBV_WC_RDMA_WRITE) {
				sends--;
				writes++;
				continue;
			}
			if (wc[k].opcode == IBV_WC_SEND) {
				sends--;
				if (wc[k].wr_id < nreq && !answers[wc[k].wr_id])
					sent_at[wc[k].wr_id] = now;
				continue;
			}
			memcpy(&seq, s.buf + wc[k].wr_id * s.slot_len, 8);
			post_recv(&s, (unsigned)wc[k].wr_id);
			if (seq >= nreq)
				continue;
			if (answers[seq]++) {
				dups++;
				continue;
			}
			answered++;
			if (open)
				open--;
			if (now - last > gap)
				gap = now - last;
			prev = last;
			last = now;
			{
				const char *who = (const char *)s.buf +
						  wc[k].wr_id * s.slot_len + 8;

				if (strncmp(who, last_node, 15)) {
					/* (the gap the move left: since the
					 * old holder's last answer) */
					if (last_node[0] &&
					    strlen(changes) + 24 < sizeof(changes))
						snprintf(changes + strlen(changes),
							 sizeof(changes) - strlen(changes),
							 " %" PRIu64, now - prev);
					if (last_node[0] && nmoves < MAX_MOVES) {
						move_from[nmoves] = prev;
						move_to[nmoves++] = now;
					}
					snprintf(last_node, sizeof(last_node),
						 "%.15s", who);
					if (strlen(holders) + 18 < sizeof(holders))
						snprintf(holders + strlen(holders),
							 sizeof(holders) - strlen(holders),
							 " %s", last_node);
				}
			}
		}
		if (answered * 10 / nreq != pct) {
			pct = answered * 10 / nreq;
			printf("progress %" PRIu64 "%%\n", pct * 10);
			fflush(stdout);
		}
		if (errors)
			break;
		if (!n)
			usleep(50);
	}
	for (i = 0; i < nreq; i++)
		lost += !answers[i];
	/* the pongs still on their way, then the lost pings: each sent
	 * inside a move (with PING_SLACK_MS either side), or not */
	{
		uint64_t until = vu_now_ms() + 200, ud_lost = 0, outside = 0;
		struct ibv_wc uw[16];

		while (vu_now_ms() < until) {
			int un = ibv_poll_cq(u.cq, 16, uw), ui;

			for (ui = 0; ui < un; ui++) {
				uint64_t seq;

				if (uw[ui].opcode == IBV_WC_SEND ||
				    uw[ui].status != IBV_WC_SUCCESS)
					continue;
				seq = pong_seq(&u, uw[ui].wr_id, be, &not_svc);
				if (seq < pings)
					pong[seq] = 1;
			}
			usleep(1000);
		}
		for (i = 0; i + 200 < pings; i++) {	/* (not the last) */
			unsigned mv;
			bool inside = false;

			if (pong[i])
				continue;
			ud_lost++;
			for (mv = 0; mv < nmoves; mv++)
				inside |= ping_at[i] + PING_SLACK_MS >=
						  move_from[mv] &&
					  ping_at[i] <=
						  move_to[mv] + PING_SLACK_MS;
			outside += !inside;
		}
		printf("ud: %" PRIu64 " pings, %" PRIu64 " lost, %" PRIu64
		       " of them outside the moves, %" PRIu64
		       " pongs not from the service's address\n",
		       pings, ud_lost, outside, not_svc);
	}
	printf("failover: %" PRIu64 " requests, %" PRIu64 " lost, %" PRIu64
	       " duplicates, holders%s, moves%s ms, longest gap %" PRIu64
	       " ms, %" PRIu64 " sent again\n",
	       nreq, lost, dups, holders, changes[0] ? changes : " none", gap,
	       again);
	printf("qp: %s, %" PRIu64 " completions in error, %" PRIu64
	       " WRITEs to the service's key\n",
	       vu_state_str(vu_qp_state(s.qp)), errors, writes);
	/* goodbye: the member closes its side */
	{
		uint64_t bye = BYE, until = vu_now_ms() + 2000;
		uint8_t req[24] = {0};
		struct ibv_wc wc;

		memcpy(req, &bye, 8);
		if (!errors && !post_send(&s, BYE, req, REQ_LEN, slot++ % RECVS))
			while (vu_now_ms() < until &&
			       !(ibv_poll_cq(s.cq, 1, &wc) == 1 &&
				 wc.wr_id == BYE))
				usleep(100);
	}
	return lost || errors ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct in_addr a;

	if (argc < 3 || inet_pton(AF_INET, argv[2], &a) != 1) {
		fprintf(stderr, "usage: svc_check serve SERVICE_IPV4\n"
				"       svc_check client SERVICE_IPV4 "
				"REQUESTS [RKEY]\n");
		return 2;
	}
	if (!strcmp(argv[1], "serve"))
		return serve(ntohl(a.s_addr));
	if (!strcmp(argv[1], "client") && argc > 3)
		return client(ntohl(a.s_addr), strtoull(argv[3], NULL, 0),
			      argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 0)
				       : 0);
	return 2;
}
