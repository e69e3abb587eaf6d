/* SPDX-License-Identifier: MIT */
/*
 * The responder and completer driven packet by packet: out-of-order
 * placement, the last byte landing last, duplicates, transaction ids,
 * receive sequence numbers, access checks and RNR.  The engine is real (its
 * memory table, QP, CQ and port code); its one port is DPDK's net_ring,
 * which loops what the engine transmits (ACKs, NAKs, READ responses) back to
 * this test to read.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "check.h"
#include "engine_internal.h"
#include "responder_internal.h"
#include "ring_engine.h"

/* The roles are called here as an iteration calls them, the datapath's
 * clock read first (eng->now: srnic_dp_clock).  (Inside its own macro a
 * name is not expanded again: f calls the function.) */
#define AS_ITERATION(f, e, ...) (srnic_dp_clock(e), f(e, __VA_ARGS__))
#define srnic_requester_run(...) AS_ITERATION(srnic_requester_run, __VA_ARGS__)
#define srnic_responder_rx(...) AS_ITERATION(srnic_responder_rx, __VA_ARGS__)
#define srnic_completer_ack(...) AS_ITERATION(srnic_completer_ack, __VA_ARGS__)
#define srnic_completer_credit(...) \
	AS_ITERATION(srnic_completer_credit, __VA_ARGS__)
#define srnic_completer_read_resp(...) \
	AS_ITERATION(srnic_completer_read_resp, __VA_ARGS__)
#define srnic_completer_read_done_ack(...) \
	AS_ITERATION(srnic_completer_read_done_ack, __VA_ARGS__)

#define STRIDE_SHIFT 10
#define STRIDE (1u << STRIDE_SHIFT)
#define PEER_QPN 77
#define PEER_INC 0x1234567u

static struct srnic_engine *eng;
static struct srnic_peer peer;
static struct srnic_cq *cq;
static const uint8_t peer_mac[6] = {2, 0, 0, 0, 0, 9};

static void engine_up(void)
{
	eng = ring_engine_new();
	srnic_mem_init(&eng->mem, 42);
	eng->doorbell = rte_ring_create("db", 64, 0, RING_F_SC_DEQ);
	ring_engine_start(eng, 8192);
	peer.up[0] = 1;
	peer.inc = PEER_INC;
	peer.ok_inc = PEER_INC;		/* integrated: its RDMA is let in */
	memcpy(peer.mac[0], peer_mac, 6);
	cq = srnic_engine_create_cq(eng, 64);
}

/* A connected RC QP in RTS whose responder expects MSN 100. */
static struct srnic_qp *qp_new(uint32_t pd)
{
	struct srnic_qp_init init = {.type = SRNIC_QPT_RC, .pd = pd,
				     .max_send_wr = 16, .max_recv_wr = 16,
				     .max_send_sge = 4, .max_recv_sge = 4,
				     .send_cq = cq, .recv_cq = cq};
	struct srnic_qp *qp = srnic_engine_create_qp(eng, &init);

	qp->peer = &peer;
	qp->peer_inc = PEER_INC;
	qp->access = SRNIC_ACCESS_REMOTE_WRITE | SRNIC_ACCESS_REMOTE_READ;
	qp->at.dest_qpn = PEER_QPN;
	qp->at.path_shift = STRIDE_SHIFT;
	qp->at.timeout_tsc = eng->tsc_hz;
	qp->at.retry_cnt = 7;
	qp->at.max_rd_atomic = qp->at.max_dest_rd_atomic = 16;
	qp->rcv.exp_msn = 100;
	qp->snd.next_msn = 500;
	qp->q.state = SRNIC_QPS_RTS;
	return qp;
}

/* Build packet idx of a message as a requester would, and hand it to the
 * responder as the datapath would.  Returns whether the responder kept the
 * mbuf. */
static uint8_t deliver_xflags;	/* the further flags deliver() sends */
static uint16_t deliver_port;	/* ... and the port slot it came by */

static bool deliver(struct srnic_qp *qp, uint8_t op, uint16_t flags,
		    uint32_t msn, uint32_t txid, uint32_t ssn, uint32_t rkey,
		    uint64_t va, const uint8_t *msg, uint32_t msg_len,
		    uint32_t idx)
{
	struct srnic_pkt pkt = {0}, in;
	struct rte_mbuf *m;
	uint8_t *payload;
	bool kept;

	pkt.opcode = op;
	pkt.flags = flags;
	pkt.dst_qpn = qp->q.qpn;
	pkt.src_qpn = PEER_QPN;
	pkt.src_inc = PEER_INC;
	pkt.dst_inc = eng->node->inc;
	pkt.msn = msn;
	pkt.txid = txid;
	pkt.ssn = ssn;
	pkt.rkey = rkey;
	pkt.msg_off = idx * STRIDE;
	pkt.msg_len = msg_len;
	pkt.stride_shift = STRIDE_SHIFT;
	pkt.xflags = deliver_xflags;
	pkt.pkt_len = msg_len - pkt.msg_off < STRIDE ? msg_len - pkt.msg_off
						      : STRIDE;
	pkt.va = va + pkt.msg_off;
	if (pkt.msg_off + pkt.pkt_len == msg_len)
		pkt.flags |= SRNIC_F_LAST;
	m = srnic_pkt_alloc(eng, &pkt, eng->node->port[0].mac, 0, &payload);
	if (!m)
		abort();
	memcpy(payload, msg + pkt.msg_off, pkt.pkt_len);
	m->port = deliver_port;
	if (srnic_wire_decode(rte_pktmbuf_mtod(m, uint8_t *),
			      rte_pktmbuf_data_len(m), &in) != SRNIC_WIRE_OK)
		abort();
	kept = srnic_responder_rx(eng, qp, &in, m);
	if (!kept)
		rte_pktmbuf_free(m);
	return kept;
}

/* Transmit what the engine queued and read it back from the ring. */
static unsigned drain_wire(struct srnic_pkt *out, unsigned max)
{
	struct rte_mbuf *ms[32];
	unsigned got = 0;
	uint16_t n, i;

	while (eng->ack_head) {
		struct srnic_qp *qp = eng->ack_head;

		eng->ack_head = qp->ack_next;
		qp->on_ack = 0;
		srnic_responder_send_ack(eng, qp);
	}
	srnic_ports_flush(eng);
	n = rte_eth_rx_burst(eng->node->port[0].port_id, 0, ms, 32);
	for (i = 0; i < n; i++) {
		if (got < max &&
		    srnic_wire_decode(rte_pktmbuf_mtod(ms[i], uint8_t *),
				      rte_pktmbuf_data_len(ms[i]),
				      &out[got]) == SRNIC_WIRE_OK)
			got++;
		rte_pktmbuf_free(ms[i]);
	}
	return got;
}

static void shuffle(uint32_t *a, uint32_t n, unsigned seed)
{
	uint32_t i;

	srand(seed);
	for (i = n - 1; i > 0; i--) {
		uint32_t j = rand() % (i + 1), t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
}

static uint64_t drops(enum srnic_drop d)
{
	return eng->st->drops[d];
}

/* WRITE packets in any order land exactly once; the packet with the last
 * byte waits for all the others; the cumulative ACK moves only at the end. */
static void test_write_out_of_order(void)
{
	enum { LEN = 20 * STRIDE + 77, NPKT = 21 };
	uint8_t *dst = calloc(1, LEN), *msg = malloc(LEN);
	uint32_t order[NPKT], i, key;
	struct srnic_qp *qp = qp_new(1);
	struct srnic_pkt acks[8];
	unsigned n;

	for (i = 0; i < LEN; i++)
		msg[i] = (uint8_t)(i * 7 + 3);
	for (i = 0; i < NPKT; i++)
		order[i] = i;
	shuffle(order, NPKT, 1);
	/* Make the last packet arrive early. */
	for (i = 0; i < NPKT; i++)
		if (order[i] == NPKT - 1) {
			order[i] = order[1];
			order[1] = NPKT - 1;
		}
	key = srnic_mem_register(&eng->mem, (uintptr_t)dst, LEN,
				 SRNIC_ACCESS_LOCAL_WRITE |
					 SRNIC_ACCESS_REMOTE_WRITE, 1);
	for (i = 0; i < NPKT; i++) {
		bool kept = deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key,
				    (uintptr_t)dst, msg, LEN, order[i]);

		if (order[i] == NPKT - 1)
			CHECK(kept, "the last packet is held while others are missing");
		if (i + 1 < NPKT) {
			CHECK(dst[LEN - 1] == 0,
			      "last byte written before packet %u of %u", i + 1,
			      NPKT);
			CHECK(qp->rcv.exp_msn == 100, "message done too early");
		}
	}
	CHECK(memcmp(dst, msg, LEN) == 0, "placed bytes differ");
	CHECK(qp->rcv.exp_msn == 101, "exp_msn %u after the message", qp->rcv.exp_msn);
	n = drain_wire(acks, 8);
	CHECK(n >= 1 && acks[n - 1].opcode == SRNIC_OP_ACK &&
		      acks[n - 1].msn == 101 &&
		      acks[n - 1].syndrome == SRNIC_ACK_OK,
	      "cumulative ACK for 101 (got %u packets)", n);
	CHECK(n == 2, "a plain ACK goes out twice (got %u)", n);

	/* A duplicate of a finished message, with other bytes in it, is
	 * dropped and changes nothing. */
	{
		uint64_t before = drops(SRNIC_DROP_DUPLICATE);
		uint8_t *junk = malloc(LEN);

		memset(junk, 0xee, LEN);
		deliver(qp, SRNIC_OP_WRITE, 0, 100, 2, 0, key, (uintptr_t)dst,
			junk, LEN, 3);
		CHECK(drops(SRNIC_DROP_DUPLICATE) == before + 1,
		      "late duplicate not counted");
		CHECK(memcmp(dst, msg, LEN) == 0, "a late duplicate was placed");
		n = drain_wire(acks, 8);
		CHECK(n >= 1 && acks[0].msn == 101 && acks[n - 1].msn == 101,
		      "a duplicate is answered with the ACK again");
		free(junk);
	}
	srnic_engine_destroy_qp(eng, qp);
	free(dst);
	free(msg);
}

/*
 * Completion at both ends: a WRITE whose writer asks (SRNIC_X_NOTIFY)
 * completes at its target once every byte is in, whatever order its
 * packets came in, naming its first byte's address; into a full CQ it
 * waits, and its ACK with it, until room is made; packets that disagree
 * about the flag are dropped; a target that does not accept them NAKs
 * the WRITE and completes nothing.
 */
static void test_write_notify(void)
{
	enum { LEN = 5 * STRIDE + 10, NPKT = 6 };
	static const uint32_t order[NPKT] = {5, 2, 0, 4, 1, 3};
	uint8_t *dst = calloc(1, LEN), *msg = malloc(LEN);
	struct srnic_cq *small = srnic_engine_create_cq(eng, 1);
	struct srnic_qp *qp = qp_new(1);
	struct srnic_cq *was = qp->q.recv_cq;
	struct srnic_cqe c[4];
	struct srnic_pkt out[8];
	uint32_t i, key, msn = 100, room;
	uint64_t before;
	unsigned n;

	for (i = 0; i < LEN; i++)
		msg[i] = (uint8_t)(i * 5 + 1);
	key = srnic_mem_register(&eng->mem, (uintptr_t)dst, LEN,
				 SRNIC_ACCESS_LOCAL_WRITE |
					 SRNIC_ACCESS_REMOTE_WRITE, 1);
	qp->q.recv_cq = small;
	qp->q.accept_notify = 1;
	deliver_xflags = SRNIC_X_NOTIFY;
	for (i = 0; i < NPKT; i++) {
		deliver(qp, SRNIC_OP_WRITE, 0, msn, 1, 0, key, (uintptr_t)dst,
			msg, LEN, order[i]);
		if (i + 1 < NPKT)
			CHECK(srnic_cq_poll(small, c, 4) == 0,
			      "a completion after %u packets of %u", i + 1,
			      NPKT);
	}
	CHECK(memcmp(dst, msg, LEN) == 0, "placed bytes differ");
	n = srnic_cq_poll(small, c, 4);
	CHECK(n == 1 && c[0].opcode == SRNIC_WC_TARGET_WRITE &&
		      c[0].status == SRNIC_WC_SUCCESS &&
		      c[0].wr_id == (uintptr_t)dst && c[0].byte_len == LEN &&
		      c[0].qp_num == qp->q.qpn && c[0].src_qp == PEER_QPN,
	      "the target's completion: %u, opcode %u, wr_id %#lx, %u bytes",
	      n, n ? c[0].opcode : 0, n ? (unsigned long)c[0].wr_id : 0,
	      n ? c[0].byte_len : 0);
	msn++;
	drain_wire(out, 8);

	/* the CQ full: the next waits, and its ACK */
	for (room = srnic_cq_room(small); room; room--)
		deliver(qp, SRNIC_OP_WRITE, 0, msn++, 1, 0, key,
			(uintptr_t)dst, msg, 10, 0);
	deliver(qp, SRNIC_OP_WRITE, 0, msn, 1, 0, key, (uintptr_t)dst, msg,
		10, 0);
	CHECK(qp->rcv.exp_msn == msn,
	      "a WRITE whose CQ is full is done already (exp_msn %u, want "
	      "%u)", qp->rcv.exp_msn, msn);
	n = drain_wire(out, 8);
	CHECK(n >= 1 && out[n - 1].msn == msn,
	      "the ACK went past the waiting WRITE (%u, want %u)",
	      n ? out[n - 1].msn : 0, msn);
	while (srnic_cq_poll(small, c, 4))
		;
	srnic_responder_progress(eng, qp);
	CHECK(qp->rcv.exp_msn == msn + 1 && srnic_cq_poll(small, c, 4) == 1,
	      "with room made, it completes (exp_msn %u)", qp->rcv.exp_msn);
	msn++;
	drain_wire(out, 8);

	/* packets that disagree about the flag */
	before = drops(SRNIC_DROP_MALFORMED);
	deliver(qp, SRNIC_OP_WRITE, 0, msn, 1, 0, key, (uintptr_t)dst, msg,
		LEN, 0);
	deliver_xflags = 0;
	deliver(qp, SRNIC_OP_WRITE, 0, msn, 1, 0, key, (uintptr_t)dst, msg,
		LEN, 1);
	CHECK(drops(SRNIC_DROP_MALFORMED) == before + 1,
	      "a packet without the flag of a WRITE with it is dropped");
	deliver_xflags = SRNIC_X_NOTIFY;
	for (i = 1; i < NPKT; i++)
		deliver(qp, SRNIC_OP_WRITE, 0, msn, 1, 0, key, (uintptr_t)dst,
			msg, LEN, i);
	CHECK(srnic_cq_poll(small, c, 4) == 1, "... and the WRITE completes");
	msn++;
	drain_wire(out, 8);

	/* a target that does not accept them */
	qp->q.accept_notify = 0;
	deliver(qp, SRNIC_OP_WRITE, 0, msn, 1, 0, key, (uintptr_t)dst, msg,
		10, 0);
	n = drain_wire(out, 8);
	CHECK(n >= 1 && out[n - 1].syndrome == SRNIC_NAK_INVALID &&
		      srnic_cq_poll(small, c, 4) == 0,
	      "a target that does not accept them NAKs the WRITE "
	      "(syndrome %u) and completes nothing",
	      n ? out[n - 1].syndrome : 0);
	deliver_xflags = 0;
	qp->q.recv_cq = was;
	srnic_engine_destroy_qp(eng, qp);
	free(dst);
	free(msg);
}

/* Transaction ids: a newer attempt of a message keeps what landed and
 * drops the older attempt's packets from then on; duplicates inside one
 * attempt are dropped; the message completes exactly once. */
static void test_txid(void)
{
	enum { LEN = 6 * STRIDE };
	uint8_t *dst = calloc(1, LEN), *msg = malloc(LEN), *junk = malloc(LEN);
	struct srnic_qp *qp = qp_new(2);
	const uint16_t fl = SRNIC_F_RECV_CQE | SRNIC_F_IMM;
	struct srnic_cqe c[4];
	struct srnic_rwqe *r;
	uint32_t key, i;
	int got;

	for (i = 0; i < LEN; i++)
		msg[i] = (uint8_t)(i ^ 0x5a);
	memset(junk, 0xcc, LEN);
	key = srnic_mem_register(&eng->mem, (uintptr_t)dst, LEN,
				 SRNIC_ACCESS_LOCAL_WRITE |
					 SRNIC_ACCESS_REMOTE_WRITE, 2);
	/* WRITE with immediate consumes a receive WQE: post one. */
	r = &qp->q.rq[0];
	r->wr_id = 4242;
	r->num_sge = 0;
	qp->q.rq_prod = 1;

	/* Attempt 7 gets packets 0 and 2 in (2 twice: the copy is junk). */
	deliver(qp, SRNIC_OP_WRITE, fl, 100, 7, 0, key, (uintptr_t)dst, msg,
		LEN, 0);
	deliver(qp, SRNIC_OP_WRITE, fl, 100, 7, 0, key, (uintptr_t)dst, msg,
		LEN, 2);
	{
		uint64_t before = drops(SRNIC_DROP_DUPLICATE);

		deliver(qp, SRNIC_OP_WRITE, fl, 100, 7, 0, key,
			(uintptr_t)dst, junk, LEN, 2);
		CHECK(drops(SRNIC_DROP_DUPLICATE) == before + 1,
		      "duplicate in one attempt not dropped");
		CHECK(memcmp(dst + 2 * STRIDE, msg + 2 * STRIDE, STRIDE) == 0,
		      "duplicate overwrote placed data");
	}
	/* Attempt 8 (the retry) brings 5, 4, 3: packet 1 is still missing. */
	for (i = 5; i >= 3; i--)
		deliver(qp, SRNIC_OP_WRITE, fl, 100, 8, 0, key,
			(uintptr_t)dst, msg, LEN, i);
	CHECK(qp->rcv.exp_msn == 100, "complete with packet 1 missing");
	/* A straggler of attempt 7 arrives (with other bytes): dropped. */
	{
		uint64_t before = drops(SRNIC_DROP_STALE_TXID);

		deliver(qp, SRNIC_OP_WRITE, fl, 100, 7, 0, key,
			(uintptr_t)dst, junk, LEN, 1);
		CHECK(drops(SRNIC_DROP_STALE_TXID) == before + 1,
		      "stale txid not dropped");
		CHECK(dst[STRIDE] == 0, "a stale packet was placed");
	}
	CHECK(srnic_cq_poll(cq, c, 4) == 0, "completion before the data");
	/* Attempt 8's packet 1 completes it: what attempt 7 landed stays. */
	deliver(qp, SRNIC_OP_WRITE, fl, 100, 8, 0, key, (uintptr_t)dst, msg,
		LEN, 1);
	CHECK(memcmp(dst, msg, LEN) == 0, "data after the retry");
	got = srnic_cq_poll(cq, c, 4);
	CHECK(got == 1 && c[0].wr_id == 4242 &&
		      c[0].opcode == SRNIC_WC_RECV_RDMA_WITH_IMM &&
		      c[0].status == SRNIC_WC_SUCCESS && c[0].byte_len == LEN,
	      "exactly one receive completion (got %d)", got);
	/* The whole message again, newer txid: at most once. */
	for (i = 0; i < 6; i++)
		deliver(qp, SRNIC_OP_WRITE, fl, 100, 9, 0, key,
			(uintptr_t)dst, junk, LEN, i);
	CHECK(srnic_cq_poll(cq, c, 4) == 0, "a message completed twice");
	CHECK(memcmp(dst, msg, LEN) == 0, "a finished message was rewritten");
	drain_wire(NULL, 0);
	srnic_engine_destroy_qp(eng, qp);
	free(dst);
	free(msg);
	free(junk);
}

/* Two SENDs whose packets arrive interleaved and backwards: each lands in
 * the receive WQE its receive sequence number names, and completions come
 * in message order. */
static void test_send_ssn(void)
{
	enum { LEN = 3 * STRIDE + 5 };
	uint8_t *buf0 = calloc(1, LEN), *buf1 = calloc(1, LEN);
	uint8_t *m0 = malloc(LEN), *m1 = malloc(LEN);
	struct srnic_qp *qp = qp_new(3);
	struct srnic_cqe c[4];
	uint32_t k0, k1, i;
	int got;

	for (i = 0; i < LEN; i++) {
		m0[i] = (uint8_t)i;
		m1[i] = (uint8_t)(255 - i);
	}
	k0 = srnic_mem_register(&eng->mem, (uintptr_t)buf0, LEN,
				SRNIC_ACCESS_LOCAL_WRITE, 3);
	k1 = srnic_mem_register(&eng->mem, (uintptr_t)buf1, LEN,
				SRNIC_ACCESS_LOCAL_WRITE, 3);
	qp->q.rq[0] = (struct srnic_rwqe){.wr_id = 10, .num_sge = 1,
					.length = LEN};
	qp->q.rq[0].sge[0] = (struct srnic_sge){(uintptr_t)buf0, LEN, k0};
	qp->q.rq[1] = (struct srnic_rwqe){.wr_id = 11, .num_sge = 1,
					.length = LEN};
	qp->q.rq[1].sge[0] = (struct srnic_sge){(uintptr_t)buf1, LEN, k1};
	qp->q.rq_prod = 2;

	for (i = 0; i < 4; i++) {
		deliver(qp, SRNIC_OP_SEND, SRNIC_F_RECV_CQE, 101, 1, 1, 0, 0,
			m1, LEN, 3 - i);
		deliver(qp, SRNIC_OP_SEND, SRNIC_F_RECV_CQE, 100, 1, 0, 0, 0,
			m0, LEN, 3 - i);
	}
	CHECK(memcmp(buf0, m0, LEN) == 0, "first SEND in the first WQE");
	CHECK(memcmp(buf1, m1, LEN) == 0, "second SEND in the second WQE");
	got = srnic_cq_poll(cq, c, 4);
	CHECK(got == 2 && c[0].wr_id == 10 && c[1].wr_id == 11 &&
		      c[0].byte_len == LEN && c[0].opcode == SRNIC_WC_RECV,
	      "two receive completions in order (got %d)", got);
	CHECK(qp->rcv.exp_msn == 102 && qp->q.rq_comp == 2, "responder state");

	/* No receive WQE for a third SEND: RNR NAK, nothing completes. */
	{
		struct srnic_pkt out[4];
		uint32_t credit = 0;
		unsigned n;

		/* (the ACK says where the receives end: none past the two) */
		srnic_responder_send_ack(eng, qp);
		n = drain_wire(out, 4);
		CHECK(n >= 1 && srnic_ack_recv_credit(&out[n - 1], &credit) &&
			      credit == 2,
		      "the ACK's receive credit %u, 2 receives taken and none "
		      "posted", credit);
		deliver(qp, SRNIC_OP_SEND, SRNIC_F_RECV_CQE, 102, 1, 2, 0, 0,
			m0, LEN, 0);
		n = drain_wire(out, 4);
		CHECK(n == 1 && out[0].syndrome == SRNIC_NAK_RNR &&
			      out[0].nak_msn == 102 && out[0].msn == 102 &&
			      !srnic_ack_recv_credit(&out[0], &credit),
		      "RNR NAK for a SEND without a receive WQE");
		CHECK(srnic_cq_poll(cq, c, 4) == 0, "RNR completed something");
	}
	srnic_engine_destroy_qp(eng, qp);
	free(buf0);
	free(buf1);
	free(m0);
	free(m1);
}

/* A WRITE outside its region, with a wrong key, a key of another PD or
 * without remote-write rights is NAKed and writes nothing. */
static void test_access(void)
{
	enum { LEN = 2 * STRIDE };
	uint8_t *dst = calloc(1, 2 * LEN), *msg = malloc(LEN);
	struct srnic_qp *qp = qp_new(4);
	uint32_t key, ro, other, i;
	struct srnic_pkt out[4];
	unsigned n;
	struct {
		const char *what;
		uint32_t key;
		uint64_t va;
		enum srnic_drop counted;
	} cases[4];

	memset(msg, 0x77, LEN);
	key = srnic_mem_register(&eng->mem, (uintptr_t)dst, LEN,
				 SRNIC_ACCESS_LOCAL_WRITE |
					 SRNIC_ACCESS_REMOTE_WRITE, 4);
	ro = srnic_mem_register(&eng->mem, (uintptr_t)dst, LEN,
				SRNIC_ACCESS_REMOTE_READ, 4);
	other = srnic_mem_register(&eng->mem, (uintptr_t)dst, LEN,
				   SRNIC_ACCESS_LOCAL_WRITE |
					   SRNIC_ACCESS_REMOTE_WRITE, 5);
	cases[0].what = "beyond the region";
	cases[0].key = key;
	cases[0].va = (uintptr_t)dst + STRIDE + 1;	/* one byte past the end */
	cases[0].counted = SRNIC_DROP_OUT_OF_BOUNDS;
	cases[1].what = "wrong key";
	cases[1].key = key ^ 0x10000;
	cases[1].va = (uintptr_t)dst;
	cases[1].counted = SRNIC_DROP_BAD_KEY;
	cases[2].what = "no remote write right";
	cases[2].key = ro;
	cases[2].va = (uintptr_t)dst;
	cases[2].counted = SRNIC_DROP_NO_RIGHTS;
	cases[3].what = "key of another PD";
	cases[3].key = other;
	cases[3].va = (uintptr_t)dst;
	cases[3].counted = SRNIC_DROP_BAD_KEY;
	for (i = 0; i < 4; i++) {
		uint64_t before = drops(cases[i].counted);

		qp->rcv.exp_msn = 100 + i;
		/* Odd cases send the held last packet, even ones the first. */
		deliver(qp, SRNIC_OP_WRITE, 0, 100 + i, 1, 0, cases[i].key,
			cases[i].va, msg, LEN, i % 2);
		n = drain_wire(out, 4);
		CHECK(n == 1 && out[0].syndrome == SRNIC_NAK_ACCESS &&
			      out[0].nak_msn == 100 + i,
		      "%s: access NAK", cases[i].what);
		CHECK(drops(cases[i].counted) == before + 1,
		      "%s: not counted under its reason", cases[i].what);
	}
	for (i = 0; i < 2 * LEN; i++)
		if (dst[i]) {
			CHECK(0, "a refused WRITE changed byte %u", i);
			break;
		}
	srnic_engine_destroy_qp(eng, qp);
	free(dst);
	free(msg);
}

/* A WRITE of no bytes touches no memory, so its key and address are not
 * checked (UCX flushes a QP with one: rkey 0, address 0), also when it
 * comes ahead of the message before it, whose last packet it may be
 * taken for. */
static void test_zero_length_write(void)
{
	struct srnic_qp *qp = qp_new(4);
	uint64_t bad = drops(SRNIC_DROP_BAD_KEY);
	struct srnic_pkt out[4];
	uint8_t none[1] = {0};
	unsigned n, i, naks = 0;

	deliver(qp, SRNIC_OP_WRITE, 0, 101, 1, 0, 0, 0, none, 0, 0);
	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, 0, 0, none, 0, 0);
	n = drain_wire(out, 4);
	for (i = 0; i < n; i++)
		naks += out[i].syndrome != SRNIC_ACK_OK;
	CHECK(naks == 0 && drops(SRNIC_DROP_BAD_KEY) == bad,
	      "zero-length WRITEs refused: %u NAKs, %llu bad keys", naks,
	      (unsigned long long)(drops(SRNIC_DROP_BAD_KEY) - bad));
	CHECK(qp->rcv.exp_msn == 102, "zero-length WRITEs not both done "
	      "(next message %u)", qp->rcv.exp_msn);
	srnic_engine_destroy_qp(eng, qp);
}

/* Post a signaled READ of len bytes into local (key) as send WQE 0. */
static void post_read(struct srnic_qp *qp, uint64_t wr_id, uint8_t *local,
		      uint32_t len, uint32_t key)
{
	struct srnic_swqe *w = &qp->q.sq[0];

	memset(w, 0, sizeof(*w));
	w->wr_id = wr_id;
	w->opcode = SRNIC_WR_READ;
	w->flags = SRNIC_WR_SIGNALED;
	w->length = len;
	w->num_sge = 1;
	w->sge[0] = (struct srnic_sge){(uintptr_t)local, len, key};
	w->remote_addr = 0x1000;
	w->rkey = 5;
	qp->q.sq_prod = 1;
}

/* Packet idx of the answer to qp's first READ, of len bytes of data, as
 * its responder would send it (decoded from a frame: pkt's payload is in
 * frame). */
static void read_resp_pkt(struct srnic_pkt *pkt, uint8_t *frame,
			  const struct srnic_qp *qp, uint32_t idx,
			  const uint8_t *data, uint32_t len)
{
	uint8_t *p = frame;

	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = SRNIC_OP_READ_RESP;
	pkt->dst_qpn = qp->q.qpn;
	pkt->src_qpn = PEER_QPN;
	pkt->msn = qp->run[0].msn;
	pkt->txid = qp->run[0].txid;
	pkt->msg_off = idx * STRIDE;
	pkt->msg_len = len;
	pkt->stride_shift = STRIDE_SHIFT;
	pkt->pkt_len = len - pkt->msg_off < STRIDE ? len - pkt->msg_off
						   : STRIDE;
	p += srnic_wire_encode(frame, peer_mac, peer_mac, pkt);
	memcpy(p, data + pkt->msg_off, pkt->pkt_len);
	srnic_wire_decode(frame, p - frame + pkt->pkt_len, pkt);
}

/* The requester side: a READ's response packets in any order fill the
 * local buffer, duplicates and stale ids are dropped, and the send
 * completion comes only after the last byte. */
static void test_read_response(void)
{
	enum { LEN = 9 * STRIDE + 1 };
	uint8_t *local = calloc(1, LEN), *data = malloc(LEN);
	struct srnic_qp *qp = qp_new(6);
	struct srnic_cqe c[2];
	uint32_t key, order[10], i;

	for (i = 0; i < LEN; i++)
		data[i] = (uint8_t)(i * 13);
	key = srnic_mem_register(&eng->mem, (uintptr_t)local, LEN,
				 SRNIC_ACCESS_LOCAL_WRITE, 6);
	post_read(qp, 77, local, LEN, key);
	srnic_requester_run(eng, qp, 8);	/* sends the READ request */
	CHECK(qp->snd.sq_next == 1 && qp->run[0].state == SWQE_WAITING,
	      "READ request sent");
	drain_wire(NULL, 0);

	for (i = 0; i < 10; i++)
		order[i] = i;
	shuffle(order, 10, 7);
	for (i = 0; i < 10; i++) {
		struct srnic_pkt pkt;
		uint8_t frame[SRNIC_MAX_HLEN + STRIDE];

		read_resp_pkt(&pkt, frame, qp, order[i], data, LEN);
		CHECK(srnic_cq_poll(cq, c, 2) == 0,
		      "READ completed before packet %u", i);
		srnic_completer_read_resp(eng, qp, &pkt, NULL);
		if (i == 4) {	/* a stale id and a duplicate change nothing */
			uint64_t st = drops(SRNIC_DROP_STALE_TXID),
				 du = drops(SRNIC_DROP_DUPLICATE);

			pkt.txid--;
			srnic_completer_read_resp(eng, qp, &pkt, NULL);
			pkt.txid++;
			srnic_completer_read_resp(eng, qp, &pkt, NULL);
			CHECK(drops(SRNIC_DROP_STALE_TXID) == st + 1 &&
				      drops(SRNIC_DROP_DUPLICATE) == du + 1,
			      "stale and duplicate READ responses dropped");
		}
	}
	CHECK(memcmp(local, data, LEN) == 0, "READ data");
	CHECK(srnic_cq_poll(cq, c, 2) == 1 && c[0].wr_id == 77 &&
		      c[0].status == SRNIC_WC_SUCCESS &&
		      c[0].opcode == SRNIC_WC_RDMA_READ,
	      "one READ completion");
	srnic_engine_destroy_qp(eng, qp);
	free(local);
	free(data);
}

/* A later message's data never lands before an earlier message's: the
 * classic "data, then flag" pair of WRITEs, with the flag arriving first. */
static void test_cross_message_order(void)
{
	enum { LEN = 3 * STRIDE };
	uint8_t *data = calloc(1, LEN), *msg = malloc(LEN);
	uint64_t flag = 0, one = 1;
	struct srnic_qp *qp = qp_new(7);
	uint32_t kd, kf, i;

	for (i = 0; i < LEN; i++)
		msg[i] = (uint8_t)(i + 1);
	kd = srnic_mem_register(&eng->mem, (uintptr_t)data, LEN,
				SRNIC_ACCESS_LOCAL_WRITE |
					SRNIC_ACCESS_REMOTE_WRITE, 7);
	kf = srnic_mem_register(&eng->mem, (uintptr_t)&flag, sizeof(flag),
				SRNIC_ACCESS_LOCAL_WRITE |
					SRNIC_ACCESS_REMOTE_WRITE, 7);
	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, kd, (uintptr_t)data, msg,
		LEN, 0);
	CHECK(deliver(qp, SRNIC_OP_WRITE, 0, 101, 1, 0, kf, (uintptr_t)&flag,
		      (const uint8_t *)&one, sizeof(one), 0),
	      "the flag is held while the data is incomplete");
	CHECK(flag == 0, "flag written before the data");
	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, kd, (uintptr_t)data, msg,
		LEN, 2);
	CHECK(flag == 0 && data[LEN - 1] == 0, "written too early");
	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, kd, (uintptr_t)data, msg,
		LEN, 1);
	CHECK(memcmp(data, msg, LEN) == 0, "data");
	CHECK(flag == 1, "flag after the data");
	CHECK(qp->rcv.exp_msn == 102, "both messages done (exp_msn %u)",
	      qp->rcv.exp_msn);
	drain_wire(NULL, 0);
	srnic_engine_destroy_qp(eng, qp);
	free(data);
	free(msg);
}

/* A QP that grants no remote write refuses WRITEs even with a good key. */
static void test_qp_access(void)
{
	uint8_t *dst = calloc(1, STRIDE), *msg = malloc(STRIDE);
	struct srnic_qp *qp = qp_new(8);
	struct srnic_pkt out[4];
	uint32_t key;
	unsigned n;

	memset(msg, 0x42, STRIDE);
	qp->access = SRNIC_ACCESS_REMOTE_READ;
	key = srnic_mem_register(&eng->mem, (uintptr_t)dst, STRIDE,
				 SRNIC_ACCESS_LOCAL_WRITE |
					 SRNIC_ACCESS_REMOTE_WRITE, 8);
	drain_wire(out, 4);
	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key, (uintptr_t)dst, msg,
		STRIDE, 0);
	n = drain_wire(out, 4);
	CHECK(n == 1 && out[0].syndrome == SRNIC_NAK_ACCESS,
	      "WRITE to a QP without remote write is NAKed");
	CHECK(dst[0] == 0, "and writes nothing");
	srnic_engine_destroy_qp(eng, qp);
	free(dst);
	free(msg);
}

/* A later message complete while the oldest lacks packets: the next ACK
 * says which (a SACK), and says it once per interval, not per packet. */
static void test_sack(void)
{
	enum { LEN = 5 * STRIDE };
	uint8_t *dst = calloc(1, LEN + 64), *msg = malloc(LEN);
	struct srnic_qp *qp = qp_new(9);
	struct srnic_pkt out[4];
	uint32_t key;
	unsigned n;

	memset(msg, 0x33, LEN);
	key = srnic_mem_register(&eng->mem, (uintptr_t)dst, LEN + 64,
				 SRNIC_ACCESS_LOCAL_WRITE |
					 SRNIC_ACCESS_REMOTE_WRITE, 9);
	drain_wire(out, 4);
	/* Message 100 gets packets 0, 2 and 4 (4 is the held last one). */
	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key, (uintptr_t)dst, msg,
		LEN, 0);
	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key, (uintptr_t)dst, msg,
		LEN, 2);
	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key, (uintptr_t)dst, msg,
		LEN, 4);
	CHECK(drain_wire(out, 4) == 0, "no SACK while nothing later is in");
	/* Message 101, one packet, all in: 100 lacks 1 and 3. */
	deliver(qp, SRNIC_OP_WRITE, 0, 101, 1, 0, key, (uintptr_t)dst + LEN,
		msg, 8, 0);
	n = drain_wire(out, 4);
	CHECK(n == 1 && (out[0].flags & SRNIC_F_SACK) && out[0].sack_msn == 100 &&
		      out[0].sack_first == 1 && out[0].sack_bits == 0x2 &&
		      out[0].msn == 100,
	      "SACK: message 100 lacks packets 1 and 3 (got %u packets, "
	      "first %u bits %#lx)", n, n ? out[0].sack_first : 0,
	      n ? (unsigned long)out[0].sack_bits : 0);
	deliver(qp, SRNIC_OP_WRITE, 0, 102, 1, 0, key, (uintptr_t)dst + LEN,
		msg, 8, 0);
	CHECK(drain_wire(out, 4) == 0, "a second SACK at once");
	srnic_engine_destroy_qp(eng, qp);
	free(dst);
	free(msg);
}

/* A message lost whole: its last packet alone looks like one that overtook
 * the others on another port (no SACK), but flagged as the requester's
 * probe it is answered at once with what the message lacks; a probe of a
 * message that is in gets the ACK. */
static void test_probe_answer(void)
{
	enum { LEN = 5 * STRIDE };
	uint8_t *dst = calloc(1, 2 * LEN), *msg = malloc(LEN);
	struct srnic_qp *qp = qp_new(10);
	struct srnic_pkt out[4];
	uint32_t key, i;
	unsigned n;

	memset(msg, 0x44, LEN);
	key = srnic_mem_register(&eng->mem, (uintptr_t)dst, 2 * LEN,
				 SRNIC_ACCESS_LOCAL_WRITE |
					 SRNIC_ACCESS_REMOTE_WRITE, 10);
	drain_wire(out, 4);
	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key, (uintptr_t)dst, msg,
		LEN, 4);
	CHECK(drain_wire(out, 4) == 0, "a last packet alone asks nothing");
	deliver(qp, SRNIC_OP_WRITE, SRNIC_F_PROBE, 101, 1, 0, key,
		(uintptr_t)dst + LEN, msg, LEN, 4);
	n = drain_wire(out, 4);
	/* (message 100 is still the oldest: the probe of 101 says where 101
	 * stands all the same) */
	CHECK(n == 1 && (out[0].flags & SRNIC_F_SACK) &&
		      out[0].sack_msn == 101 && out[0].sack_first == 0 &&
		      out[0].sack_bits == 0x7 && out[0].msn == 100,
	      "probe of a message lost whole: SACK of packets 0-3 (got %u "
	      "packets, sack_msn %u first %u bits %#lx)", n,
	      n ? out[0].sack_msn : 0, n ? out[0].sack_first : 0,
	      n ? (unsigned long)out[0].sack_bits : 0);
	for (i = 0; i < 4; i++)
		deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key, (uintptr_t)dst,
			msg, LEN, i);
	for (i = 0; i < 4; i++)
		deliver(qp, SRNIC_OP_WRITE, 0, 101, 1, 0, key,
			(uintptr_t)dst + LEN, msg, LEN, i);
	drain_wire(out, 4);
	CHECK(qp->rcv.exp_msn == 102 && memcmp(dst, msg, LEN) == 0 &&
		      memcmp(dst + LEN, msg, LEN) == 0,
	      "both messages in, every byte (exp_msn %u)", qp->rcv.exp_msn);
	deliver(qp, SRNIC_OP_WRITE, SRNIC_F_PROBE, 101, 1, 0, key,
		(uintptr_t)dst + LEN, msg, LEN, 4);
	n = drain_wire(out, 4);
	CHECK(n >= 1 && out[0].opcode == SRNIC_OP_ACK &&
		      !(out[0].flags & SRNIC_F_SACK) && out[0].msn == 102,
	      "probe of a message that is in: the ACK (got %u packets)", n);
	srnic_engine_destroy_qp(eng, qp);
	free(dst);
	free(msg);
}

/* Integration: RDMA from a peer that has not confirmed it forgot our older
 * incarnations is dropped; a BOOTING from a restarted peer fails the QPs
 * bound to its old incarnation and is answered on its port, with
 * SRNIC_F_NAK once nothing is left to forget. */
static void test_integration(void)
{
	enum { LEN = 2 * STRIDE };
	uint8_t *dst = calloc(1, LEN), *msg = malloc(LEN);
	struct srnic_qp *qp = qp_new(10);
	struct srnic_pkt boot = {0}, out[4];
	struct srnic_cqe c[2];
	uint32_t key;
	unsigned n;

	memset(msg, 0x5a, LEN);
	key = srnic_mem_register(&eng->mem, (uintptr_t)dst, LEN,
				 SRNIC_ACCESS_LOCAL_WRITE |
					 SRNIC_ACCESS_REMOTE_WRITE, 10);
	peer.ok_inc = 0;
	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key, (uintptr_t)dst, msg,
		LEN, 0);
	CHECK(drops(SRNIC_DROP_NOT_INTEGRATED) == 1 && dst[0] == 0,
	      "RDMA WRITE let in before the peer's BOOT_ACK");
	peer.ok_inc = PEER_INC;

	/* The peer as the control core knows it, with a READ in flight. */
	eng->node->peer[0] = peer;
	eng->node->peer[0].ipv4 = 0x0a370009;
	eng->node->npeers = 1;
	qp->peer = &eng->node->peer[0];
	post_read(qp, 91, dst, LEN, key);
	srnic_requester_run(eng, qp, 8);
	drain_wire(out, 4);

	boot.opcode = SRNIC_OP_BOOTING;
	boot.src_inc = PEER_INC + 2;
	boot.dst_inc = eng->node->inc;
	boot.ipv4 = 0x0a370009;
	memcpy(boot.eth_src, peer_mac, 6);
	srnic_integrate_booting(eng, &boot, 0);
	/* (the READ is failed in its run; the completer, on the QP's turn,
	 * completes it and takes the QP to the error state) */
	CHECK(qp->on_active, "QP of the old incarnation given no turn");
	srnic_completer_complete(eng, qp);
	CHECK(qp->q.state == SRNIC_QPS_ERR, "QP of the old incarnation not failed");
	CHECK(srnic_cq_poll(cq, c, 2) == 1 && c[0].wr_id == 91 &&
		      c[0].status == SRNIC_WC_RETRY_EXC_ERR,
	      "the READ in flight did not end with a retry error");
	n = drain_wire(out, 4);
	CHECK(n == 1 && out[0].opcode == SRNIC_OP_BOOT_ACK &&
		      out[0].dst_inc == PEER_INC + 2 &&
		      out[0].src_inc == eng->node->inc && !(out[0].flags & SRNIC_F_NAK),
	      "BOOT_ACK for the new incarnation (got %u frames)", n);
	srnic_integrate_booting(eng, &boot, 0);
	n = drain_wire(out, 4);
	CHECK(n == 1 && out[0].opcode == SRNIC_OP_BOOT_ACK &&
		      (out[0].flags & SRNIC_F_NAK),
	      "nothing left to forget: BOOT_ACK with SRNIC_F_NAK");
	srnic_engine_destroy_qp(eng, qp);

	/* A late BOOTING of the incarnation the peer has had before: the
	 * QP bound to its current one is left alone, and nothing answers. */
	qp = qp_new(10);
	qp->peer = &eng->node->peer[0];
	qp->peer_inc = PEER_INC + 2;
	eng->node->peer[0].retired[0] = PEER_INC;
	boot.src_inc = PEER_INC;
	srnic_integrate_booting(eng, &boot, 0);
	CHECK(qp->q.state == SRNIC_QPS_RTS && drain_wire(out, 4) == 0,
	      "a BOOTING of a retired incarnation failed a QP or was answered");
	eng->node->npeers = 0;
	srnic_engine_destroy_qp(eng, qp);
	free(dst);
	free(msg);
}

/* The further flags (xflags) of the data frames count_data_frames saw
 * last, in order (as many as fit). */
static uint8_t seen_xflags[64];
static unsigned nseen_xflags;

/* Data frames the engine has queued, counted and thrown away. */
static unsigned count_data_frames(void)
{
	struct rte_mbuf *ms[32];
	unsigned got = 0;
	uint16_t n, i;

	srnic_ports_flush(eng);
	while ((n = rte_eth_rx_burst(eng->node->port[0].port_id, 0, ms, 32)) > 0) {
		for (i = 0; i < n; i++) {
			struct srnic_pkt pkt;

			if (srnic_wire_decode(rte_pktmbuf_mtod(ms[i], uint8_t *),
					      rte_pktmbuf_data_len(ms[i]),
					      &pkt) == SRNIC_WIRE_OK &&
			    (pkt.opcode == SRNIC_OP_WRITE ||
			     pkt.opcode == SRNIC_OP_SEND)) {
				if (nseen_xflags < sizeof(seen_xflags))
					seen_xflags[nseen_xflags++] = pkt.xflags;
				got++;
			}
			rte_pktmbuf_free(ms[i]);
		}
		srnic_ports_flush(eng);
	}
	return got;
}

/* Send until the requester stops; returns the data packets it sent. */
static unsigned run_requester(struct srnic_qp *qp)
{
	unsigned total = 0, n;

	do {
		n = srnic_requester_run(eng, qp, 32);
		total += count_data_frames();
	} while (n);
	return total;
}

/* One WRITE of len bytes from src (registered here), in qp's first send
 * slot. */
static void post_write(struct srnic_qp *qp, uint8_t *src, uint32_t len)
{
	struct srnic_swqe *w = &qp->q.sq[0];
	uint32_t key = srnic_mem_register(&eng->mem, (uintptr_t)src, len,
					  SRNIC_ACCESS_LOCAL_WRITE, qp->pd);

	memset(w, 0, sizeof(*w));
	w->opcode = SRNIC_WR_WRITE;
	w->length = len;
	w->num_sge = 1;
	w->sge[0] = (struct srnic_sge){(uintptr_t)src, len, key};
	qp->q.sq_prod = 1;
}

/* Flow control: new data stops at the credit the responder granted and
 * goes on when an ACK grants more; with no ACK at all, a probe interval
 * later the requester lends itself a quarter window.  The responder grants
 * credit as packets land, before the message is complete. */
static void test_credits(void)
{
	enum { NPKTS = SRNIC_FC_WINDOW * 2 };
	uint32_t len = NPKTS * STRIDE;
	uint8_t *src = calloc(1, len), *dst = calloc(1, len);
	struct srnic_qp *qp = qp_new(11);
	struct srnic_pkt ack, out[4];
	uint32_t key, i;
	unsigned n;

	srnic_fc_reset(qp);
	post_write(qp, src, len);
	n = run_requester(qp);
	CHECK(n == SRNIC_FC_WINDOW && qp->snd.fc_blocked,
	      "sent %u packets on a credit of %u", n, SRNIC_FC_WINDOW);

	srnic_qp_pkt_init(&ack, eng, qp, SRNIC_OP_ACK, qp->run[0].msn);
	ack.credit = SRNIC_FC_WINDOW + 50;
	srnic_completer_ack(eng, qp, &ack);
	CHECK(!qp->snd.fc_blocked, "an ACK with more credit did not unblock");
	n = run_requester(qp);
	CHECK(n == 50, "sent %u packets on 50 more credits", n);
	ack.credit = SRNIC_FC_WINDOW + 10;	/* older, overtaken */
	srnic_completer_ack(eng, qp, &ack);
	CHECK(run_requester(qp) == 0, "an older grant counted");

	srnic_completer_timeouts(eng, qp,
				 qp->snd.fc_blocked_at + srnic_probe_tsc(qp));
	n = run_requester(qp);
	CHECK(n == SRNIC_FC_UPDATE,
	      "lent %u packets after a silent probe interval", n);
	srnic_engine_destroy_qp(eng, qp);

	/* The responder's side: an update after SRNIC_FC_UPDATE packets of
	 * a message that is far from complete. */
	qp = qp_new(11);
	srnic_fc_reset(qp);
	key = srnic_mem_register(&eng->mem, (uintptr_t)dst, len,
				 SRNIC_ACCESS_LOCAL_WRITE |
					 SRNIC_ACCESS_REMOTE_WRITE, 11);
	drain_wire(out, 4);
	for (i = 0; i < SRNIC_FC_UPDATE; i++)
		deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key, (uintptr_t)dst,
			src, len, i);
	n = drain_wire(out, 4);
	CHECK(n >= 1 && out[0].opcode == SRNIC_OP_ACK && out[0].msn == 100 &&
		      out[0].credit == SRNIC_FC_UPDATE + SRNIC_FC_WINDOW,
	      "credit update after %u landed packets (got %u frames, credit "
	      "%u)", SRNIC_FC_UPDATE, n, n ? out[0].credit : 0);
	srnic_engine_destroy_qp(eng, qp);
	free(src);
	free(dst);
}

/* The requester answers a SACK by sending the holes it names again, but
 * not holes it sent again for a SACK less than an RTO before: a SACK
 * then cannot know of those copies yet (behind a queue of tens of ms a
 * hole went again for every SACK, 500 us apart).  New holes go at once;
 * after the RTO, all of them again. */
static void test_sack_hold(void)
{
	enum { NPKTS = 8 };
	uint8_t *src = calloc(1, NPKTS * STRIDE);
	struct srnic_qp *qp = qp_new(15);
	uint64_t resent0 = eng->st->sack_resent, held0 = eng->st->sack_held;
	struct srnic_pkt ack;
	unsigned n;

	srnic_fc_reset(qp);
	post_write(qp, src, NPKTS * STRIDE);
	n = run_requester(qp);
	CHECK(n == NPKTS, "sent %u packets of %u", n, NPKTS);
	qp->snd.rto = eng->tsc_hz;	/* (as RTT samples made it: long,
					 * against a stall between calls) */
	srnic_qp_pkt_init(&ack, eng, qp, SRNIC_OP_ACK, qp->run[0].msn);
	ack.credit = qp->snd.fc_credit;
	ack.flags |= SRNIC_F_SACK;
	ack.sack_msn = qp->run[0].msn;
	ack.sack_first = 2;
	ack.sack_bits = 0x2;		/* packets 2 and 4 */
	srnic_completer_ack(eng, qp, &ack);
	n = run_requester(qp);
	CHECK(n == 2 && eng->st->sack_resent - resent0 == 2,
	      "a SACK of 2 holes sent %u packets again", n);
	srnic_completer_ack(eng, qp, &ack);
	n = run_requester(qp);
	CHECK(n == 0 && eng->st->sack_held - held0 == 2,
	      "the same SACK at once sent %u packets again (%lu held)", n,
	      (unsigned long)(eng->st->sack_held - held0));
	ack.sack_bits = 0x2 | 0x8;	/* ... and packet 6 */
	srnic_completer_ack(eng, qp, &ack);
	n = run_requester(qp);
	CHECK(n == 1, "a SACK with one hole more sent %u packets again", n);
	qp->run[0].sack_resent_at -= qp->snd.rto;	/* (an RTO passed) */
	srnic_completer_ack(eng, qp, &ack);
	n = run_requester(qp);
	CHECK(n == 3, "an RTO later the SACK sent %u packets again of 3", n);
	srnic_engine_destroy_qp(eng, qp);
	free(src);
}

/* UC: out of credit, the requester lends itself nothing while its
 * responder is only slow; any ACK starts the silence anew, and after
 * SRNIC_UC_GONE_MS of it the requester lends a quarter window every probe
 * interval, as to a responder that is gone. */
static void test_uc_loans(void)
{
	enum { NPKTS = SRNIC_FC_WINDOW * 3 };
	uint32_t len = NPKTS * STRIDE;
	uint8_t *src = calloc(1, len);
	struct srnic_qp *qp = qp_new(12);
	uint64_t gone = eng->tsc_per_us * 1000 * SRNIC_UC_GONE_MS, t;
	struct srnic_pkt ack;
	unsigned n;

	qp->q.type = SRNIC_QPT_UC;
	srnic_fc_reset(qp);
	qp->snd.uc_acked = qp->snd.next_msn;	/* (nothing unresolved) */
	post_write(qp, src, len);
	n = run_requester(qp);
	CHECK(n == SRNIC_FC_WINDOW && qp->snd.fc_blocked,
	      "UC sent %u packets on a window of %u", n, SRNIC_FC_WINDOW);
	t = qp->snd.fc_blocked_at;
	srnic_completer_timeouts(eng, qp, t + srnic_probe_tsc(qp));
	srnic_completer_timeouts(eng, qp, t + gone / 2);
	n = run_requester(qp);
	CHECK(n == 0, "UC lent %u packets to a responder silent for %u ms",
	      n, SRNIC_UC_GONE_MS / 2);

	srnic_qp_pkt_init(&ack, eng, qp, SRNIC_OP_ACK, qp->run[0].msn);
	srnic_completer_credit(eng, qp, &ack);	/* (resolves nothing) */
	t = qp->snd.uc_heard_at;
	srnic_completer_timeouts(eng, qp, t + gone - gone / 8);
	n = run_requester(qp);
	CHECK(n == 0, "UC lent %u packets %u ms after the responder spoke",
	      n, SRNIC_UC_GONE_MS * 7 / 8);
	srnic_completer_timeouts(eng, qp, t + gone);
	n = run_requester(qp);
	CHECK(n == SRNIC_FC_WINDOW / 4, "UC lent %u packets to a responder "
	      "silent for %u ms", n, SRNIC_UC_GONE_MS);
	srnic_completer_timeouts(eng, qp, t + gone + srnic_probe_tsc(qp));
	n = run_requester(qp);
	CHECK(n == SRNIC_FC_WINDOW / 4, "UC lent %u packets a probe interval "
	      "later to a responder still silent", n);
	srnic_engine_destroy_qp(eng, qp);
	free(src);
}

/* Hand READ request req to qp's responder, let it answer, and count the
 * access NAKs and the answers that went out. */
static void answer_reads(struct srnic_qp *qp, unsigned budget,
			 unsigned *naks, unsigned *answers)
{
	struct srnic_pkt out[8];
	unsigned n, k;

	*naks = *answers = 0;
	srnic_responder_reads(eng, qp, budget);
	n = drain_wire(out, 8);
	for (k = 0; k < n; k++) {
		*naks += out[k].syndrome == SRNIC_NAK_ACCESS;
		*answers += out[k].opcode == SRNIC_OP_READ_RESP;
	}
}

static void ask_read(struct srnic_qp *qp, const struct srnic_pkt *req,
		     unsigned *naks, unsigned *answers)
{
	srnic_responder_rx(eng, qp, req, NULL);
	answer_reads(qp, 8, naks, answers);
}

/*
 * Completion at both ends, a READ's.  The reader: its READ request says
 * NOTIFY; once every byte has landed it completes nothing yet but says
 * READ_DONE, again a probe interval later, and completes at the target's
 * READ_DONE_ACK of that attempt.  The target: a READ told of completes
 * into its receive CQ at its READ_DONE, in message order whatever order
 * they come in, once each (a READ_DONE again is answered again); with the
 * CQ full it waits, unanswered, and completes when room is made; a
 * READ_DONE for a message not come yet is dropped.
 */
static void test_read_done(void)
{
	enum { LEN = 3 * STRIDE };
	uint8_t *local = calloc(1, LEN), *data = malloc(LEN);
	struct srnic_cq *small = srnic_engine_create_cq(eng, 1);
	struct srnic_qp *qp = qp_new(19);
	struct srnic_pkt out[8], pkt;
	struct srnic_cqe c[4];
	uint32_t key, i, msn, txid;
	uint64_t malformed;
	unsigned n, naks, answers;

	for (i = 0; i < LEN; i++)
		data[i] = (uint8_t)(i * 7 + 3);
	key = srnic_mem_register(&eng->mem, (uintptr_t)local, LEN,
				 SRNIC_ACCESS_LOCAL_WRITE, 19);
	post_read(qp, 78, local, LEN, key);
	qp->q.sq[0].flags |= SRNIC_WR_NOTIFY;
	srnic_requester_run(eng, qp, 8);
	n = drain_wire(out, 8);
	CHECK(n == 1 && out[0].opcode == SRNIC_OP_READ_REQ &&
		      out[0].xflags == SRNIC_X_NOTIFY,
	      "the READ request says NOTIFY (%u frames)", n);
	msn = qp->run[0].msn;
	txid = qp->run[0].txid;
	for (i = 0; i < 3; i++) {
		uint8_t frame[SRNIC_MAX_HLEN + STRIDE];

		read_resp_pkt(&pkt, frame, qp, 2 - i, data, LEN);
		srnic_completer_read_resp(eng, qp, &pkt, NULL);
	}
	CHECK(memcmp(local, data, LEN) == 0, "READ data");
	CHECK(srnic_cq_poll(cq, c, 4) == 0, "landed: no completion yet");
	srnic_requester_run(eng, qp, 8);
	n = drain_wire(out, 8);
	CHECK(n == 1 && out[0].opcode == SRNIC_OP_READ_DONE &&
		      out[0].msn == msn && out[0].nak_txid == txid,
	      "READ_DONE said (%u frames, opcode %u)", n,
	      n ? out[0].opcode : 0);
	srnic_completer_timeouts(eng, qp, srnic_now() + srnic_probe_tsc(qp));
	srnic_requester_run(eng, qp, 8);
	n = drain_wire(out, 8);
	CHECK(n == 1 && out[0].opcode == SRNIC_OP_READ_DONE,
	      "unanswered a probe interval: said again (%u frames)", n);
	srnic_qp_pkt_init(&pkt, eng, qp, SRNIC_OP_READ_DONE_ACK, msn);
	pkt.nak_txid = txid + 1;
	srnic_completer_read_done_ack(eng, qp, &pkt);
	CHECK(srnic_cq_poll(cq, c, 4) == 0,
	      "an answer of another attempt completes nothing");
	pkt.nak_txid = txid;
	srnic_completer_read_done_ack(eng, qp, &pkt);
	CHECK(srnic_cq_poll(cq, c, 4) == 1 && c[0].wr_id == 78 &&
		      c[0].status == SRNIC_WC_SUCCESS &&
		      c[0].opcode == SRNIC_WC_RDMA_READ,
	      "the READ completes at the target's answer");
	srnic_engine_destroy_qp(eng, qp);
	srnic_mem_release(&eng->mem, key);

	/* the target: READs 100 and 101 told of, 102 not */
	qp = qp_new(19);
	qp->q.recv_cq = small;
	qp->q.accept_notify = 1;
	key = srnic_mem_register(&eng->mem, (uintptr_t)data, LEN,
				 SRNIC_ACCESS_REMOTE_READ, 19);
	for (i = 0; i < 3; i++) {
		struct srnic_pkt req = {0};

		req.opcode = SRNIC_OP_READ_REQ;
		req.src_qpn = PEER_QPN;
		req.src_inc = PEER_INC;
		req.msn = 100 + i;
		req.txid = 1;
		req.rkey = key;
		req.va = (uintptr_t)data + i * STRIDE;
		req.msg_len = STRIDE;
		req.stride_shift = STRIDE_SHIFT;
		req.xflags = i < 2 ? SRNIC_X_NOTIFY : 0;
		ask_read(qp, &req, &naks, &answers);
		CHECK(naks == 0 && answers == 1, "READ %u answered", 100 + i);
	}
	CHECK(qp->rcv.rd_told_tail - qp->rcv.rd_told_head == 2,
	      "two READs told of");
	srnic_qp_pkt_init(&pkt, eng, qp, SRNIC_OP_READ_DONE, 101);
	srnic_responder_read_done(eng, qp, &pkt);
	CHECK(srnic_cq_poll(small, c, 4) == 0 && drain_wire(out, 8) == 0,
	      "READ_DONE of 101 before 100's: nothing yet");
	pkt.msn = 100;
	srnic_responder_read_done(eng, qp, &pkt);
	n = drain_wire(out, 8);
	CHECK(n == 1 && out[0].opcode == SRNIC_OP_READ_DONE_ACK &&
		      out[0].msn == 100,
	      "100 answered, not 101, whose completion finds the CQ full "
	      "(%u frames)", n);
	n = srnic_cq_poll(small, c, 4);
	CHECK(n == 1 && c[0].opcode == SRNIC_WC_TARGET_READ &&
		      c[0].wr_id == (uintptr_t)data &&
		      c[0].byte_len == STRIDE && c[0].qp_num == qp->q.qpn &&
		      c[0].src_qp == PEER_QPN,
	      "READ 100's completion at the target (%u, opcode %u)", n,
	      n ? c[0].opcode : 0);
	srnic_responder_progress(eng, qp);
	n = drain_wire(out, 8);
	CHECK(n == 1 && out[0].opcode == SRNIC_OP_READ_DONE_ACK &&
		      out[0].msn == 101 && srnic_cq_poll(small, c, 4) == 1 &&
		      c[0].wr_id == (uintptr_t)data + STRIDE,
	      "with room made, READ 101 completes and is answered (%u "
	      "frames)", n);
	pkt.msn = 101;
	srnic_responder_read_done(eng, qp, &pkt);
	n = drain_wire(out, 8);
	CHECK(n == 1 && out[0].opcode == SRNIC_OP_READ_DONE_ACK &&
		      out[0].msn == 101 && srnic_cq_poll(small, c, 4) == 0,
	      "READ_DONE of 101 again: answered again, no second completion");
	pkt.msn = 100;
	srnic_responder_read_done(eng, qp, &pkt);
	n = drain_wire(out, 8);
	CHECK(n == 1 && out[0].opcode == SRNIC_OP_READ_DONE_ACK &&
		      srnic_cq_poll(small, c, 4) == 0,
	      "READ_DONE of 100 again: answered again, no second completion");
	malformed = drops(SRNIC_DROP_MALFORMED);
	pkt.msn = 103;
	srnic_responder_read_done(eng, qp, &pkt);
	CHECK(drain_wire(out, 8) == 0 &&
		      drops(SRNIC_DROP_MALFORMED) == malformed + 1,
	      "READ_DONE of a message not come yet: dropped, counted");
	qp->q.recv_cq = cq;
	srnic_engine_destroy_qp(eng, qp);
	srnic_mem_release(&eng->mem, key);
	free(local);
	free(data);
}

/* READ recovery is selective: a READ whose answer stopped short asks
 * again for the missing ranges only, and a responder asked for a range
 * answers just that range. */
/* A READ asked again of memory still registered but no longer mapped
 * (its program freed it once the READ had completed, as MPI does): the
 * responder NAKs it and counts it, and does not read through the hole. */
static void test_reread_unmapped(void)
{
	enum { LEN = 4 * STRIDE };
	long page = sysconf(_SC_PAGESIZE);
	size_t span = (LEN + page - 1) / page * page;
	uint8_t *mem = mmap(NULL, span, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct srnic_qp *qp = qp_new(13);
	uint64_t unmapped = drops(SRNIC_DROP_UNMAPPED);
	struct srnic_pkt req;
	uint32_t key;
	unsigned naks, answers;

	if (mem == MAP_FAILED)
		abort();
	key = srnic_mem_register(&eng->mem, (uintptr_t)mem, LEN,
				 SRNIC_ACCESS_REMOTE_READ, 13);
	munmap(mem, span);
	memset(&req, 0, sizeof(req));
	req.opcode = SRNIC_OP_READ_REQ;
	req.msn = 99;		/* answered already: below the expected 100 */
	req.txid = 4;
	req.rkey = key;
	req.va = (uintptr_t)mem;
	req.msg_len = LEN;
	req.msg_off = STRIDE;
	req.read_len = STRIDE;
	req.stride_shift = STRIDE_SHIFT;
	ask_read(qp, &req, &naks, &answers);
	CHECK(naks == 1 && answers == 0 &&
		      drops(SRNIC_DROP_UNMAPPED) == unmapped + 1,
	      "a re-read of unmapped memory: %u NAKs, %u answers, %llu "
	      "counted", naks, answers,
	      (unsigned long long)(drops(SRNIC_DROP_UNMAPPED) - unmapped));
	srnic_mem_release(&eng->mem, key);

	/* Mapped when asked for again, unmapped after its first answer (the
	 * packets the requester lacked were late, came, and the program
	 * freed the memory: e2e/18b on the tap wire): the rest of the job
	 * meets the hole under the guard, and ends with a NAK. */
	mem = mmap(NULL, span, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		abort();
	key = srnic_mem_register(&eng->mem, (uintptr_t)mem, LEN,
				 SRNIC_ACCESS_REMOTE_READ, 13);
	req.txid = 5;
	req.rkey = key;
	req.va = (uintptr_t)mem;
	req.read_len = 2 * STRIDE;
	srnic_responder_rx(eng, qp, &req, NULL);
	answer_reads(qp, 1, &naks, &answers);
	CHECK(naks == 0 && answers == 1,
	      "a re-read of mapped memory: %u NAKs, %u answers (1 asked)", naks,
	      answers);
	munmap(mem, span);
	answer_reads(qp, 8, &naks, &answers);
	CHECK(naks == 1 && answers == 0 &&
		      drops(SRNIC_DROP_UNMAPPED) == unmapped + 2,
	      "a re-read unmapped while answered: %u NAKs, %u answers, %llu "
	      "counted", naks, answers,
	      (unsigned long long)(drops(SRNIC_DROP_UNMAPPED) - unmapped - 1));
	srnic_mem_release(&eng->mem, key);
	srnic_engine_destroy_qp(eng, qp);
}

/* The packet of qp's READ answer that carries bytes [off, off + STRIDE)
 * of its len, from data, under the READ's present attempt. */
static void read_answer(struct srnic_qp *qp, uint32_t off, uint32_t len,
			const uint8_t *data)
{
	struct srnic_pkt pkt = {0};

	pkt.opcode = SRNIC_OP_READ_RESP;
	pkt.msn = qp->run[0].msn;
	pkt.txid = qp->run[0].txid;
	pkt.msg_off = off;
	pkt.msg_len = len;
	pkt.stride_shift = STRIDE_SHIFT;
	pkt.pkt_len = STRIDE;
	pkt.payload = data;
	srnic_completer_read_resp(eng, qp, &pkt, NULL);
}

static void test_read_ranges(void)
{
	enum { LEN = 10 * STRIDE };
	uint8_t *local = calloc(1, LEN), *data = malloc(LEN);
	struct srnic_qp *qp = qp_new(12);
	struct srnic_pkt out[32], req;
	uint32_t key, i, bytes = 0;
	unsigned n, k;

	for (i = 0; i < LEN; i++)
		data[i] = (uint8_t)(i * 7);
	key = srnic_mem_register(&eng->mem, (uintptr_t)local, LEN,
				 SRNIC_ACCESS_LOCAL_WRITE, 12);
	post_read(qp, 5, local, LEN, key);
	srnic_requester_run(eng, qp, 8);
	drain_wire(out, 32);
	for (i = 0; i < 10; i++)
		if (i != 2 && i != 5 && i != 6)		/* (lost) */
			read_answer(qp, i * STRIDE, LEN, data + i * STRIDE);
	/* Its probe time: the completer's timer asks the requester, whose
	 * next turn asks again. */
	qp->snd.rd_progress = srnic_now() - srnic_probe_tsc(qp);
	qp->run[0].probe_at = 0;
	srnic_completer_timeouts(eng, qp, srnic_now());
	srnic_requester_run(eng, qp, 8);
	n = drain_wire(out, 32);
	CHECK(n == 2 && out[0].opcode == SRNIC_OP_READ_REQ &&
		      out[0].msg_off == 2 * STRIDE &&
		      out[0].read_len == STRIDE && out[1].msg_off == 5 * STRIDE &&
		      out[1].read_len == 2 * STRIDE,
	      "READ asked again for packets 2 and 5-6 only (%u requests, "
	      "first at %u for %u)", n, n ? out[0].msg_off : 0,
	      n ? out[0].read_len : 0);
	srnic_engine_destroy_qp(eng, qp);

	/* The responder: the READ was answered already (MSN 99, below the
	 * expected 100); a request for packets 5 and 6 gets just those. */
	qp = qp_new(12);
	key = srnic_mem_register(&eng->mem, (uintptr_t)data, LEN,
				 SRNIC_ACCESS_REMOTE_READ, 12);
	memset(&req, 0, sizeof(req));
	req.opcode = SRNIC_OP_READ_REQ;
	req.msn = 99;
	req.txid = 3;
	req.rkey = key;
	req.va = (uintptr_t)data;
	req.msg_len = LEN;
	req.msg_off = 5 * STRIDE;
	req.read_len = 2 * STRIDE;
	req.stride_shift = STRIDE_SHIFT;
	srnic_responder_rx(eng, qp, &req, NULL);
	srnic_responder_rx(eng, qp, &req, NULL);	/* a copy: once only */
	srnic_responder_reads(eng, qp, 32);
	n = drain_wire(out, 32);
	for (k = 0; k < n; k++)
		if (out[k].opcode == SRNIC_OP_READ_RESP &&
		    out[k].msg_off >= 5 * STRIDE && out[k].msg_off < 7 * STRIDE &&
		    !(out[k].flags & SRNIC_F_LAST) && out[k].txid == 3)
			bytes += out[k].pkt_len;
	CHECK(n == 2 && bytes == 2 * STRIDE,
	      "range answer: %u frames, %u bytes in the range", n, bytes);
	srnic_engine_destroy_qp(eng, qp);
	free(local);
	free(data);
	test_reread_unmapped();
}

/* One READ timeout of qp's WQE 0, and the requester's turn that asks again
 * (what it sends is dropped). */
static void read_timeout(struct srnic_qp *qp)
{
	uint64_t now = srnic_now();

	qp->run[0].deadline = 0;
	qp->snd.rd_progress = now - qp->at.timeout_tsc - 1;
	srnic_completer_timeouts(eng, qp, now);
	srnic_requester_run(eng, qp, 8);
	drain_wire(NULL, 0);
}

/* The target's word that READ 0 of qp waits on its program: an RNR NAK
 * of its attempt. */
static void read_rnr_nak(struct srnic_qp *qp)
{
	struct srnic_pkt nak;

	srnic_qp_pkt_init(&nak, eng, qp, SRNIC_OP_ACK, qp->run[0].msn);
	nak.syndrome = SRNIC_NAK_RNR;
	nak.rnr_timer = 1;	/* (10 us: a SEND's wait would be over) */
	nak.nak_msn = qp->run[0].msn;
	nak.nak_txid = qp->run[0].txid;
	srnic_completer_ack(eng, qp, &nak);
}

/* A READ posted on a new QP of PD pd, sent, its timer running. */
static struct srnic_qp *read_sent(uint32_t pd, uint64_t wr_id, void *local,
				  uint32_t len, uint32_t key)
{
	struct srnic_qp *qp = qp_new(pd);

	post_read(qp, wr_id, local, len, key);
	srnic_requester_run(eng, qp, 8);
	drain_wire(NULL, 0);
	srnic_completer_timeouts(eng, qp, srnic_now());
	return qp;
}

/* retry_cnt counts timeouts in a row: a READ whose answer moves on between
 * its timeouts is not failed for their sum, one that does not move is. */
static void test_read_retries_progress(void)
{
	enum { LEN = 4 * STRIDE };
	uint8_t *local = calloc(1, LEN), *data = calloc(1, LEN);
	uint32_t key = srnic_mem_register(&eng->mem, (uintptr_t)local, LEN,
					  SRNIC_ACCESS_LOCAL_WRITE, 14);
	struct srnic_qp *qp = read_sent(14, 9, local, LEN, key);
	struct srnic_cqe c[2];
	uint32_t i;

	qp->at.retry_cnt = 1;
	for (i = 0; i < 3; i++) {
		read_timeout(qp);
		read_answer(qp, i * STRIDE, LEN, data);	/* (a new attempt) */
	}
	CHECK(srnic_cq_poll(cq, c, 2) == 0 && qp->run[0].state != SWQE_DONE,
	      "a READ that moved on after each of its 3 timeouts failed "
	      "(retry_cnt 1)");
	read_timeout(qp);
	read_timeout(qp);	/* two in a row, nothing between */
	CHECK(srnic_cq_poll(cq, c, 2) == 1 && c[0].wr_id == 9 &&
		      c[0].status == SRNIC_WC_RETRY_EXC_ERR,
	      "a READ that did not move through two timeouts (retry_cnt 1) "
	      "did not fail with a retry error");
	srnic_mem_release(&eng->mem, key);
	srnic_engine_destroy_qp(eng, qp);
	free(local);
	free(data);
}

/* A READ whose target's program holds its question (half-RDMA's
 * half-receive READ; its probes hear RNR NAKs): its timeouts spend RNR
 * retries, not transport retries, and ask nothing again under a new
 * attempt (which would put the question to the program twice); once the
 * NAKs stop, a timeout is a transport retry again; rnr_retry bounds the
 * wait. */
static void test_read_rnr_waits(void)
{
	enum { LEN = 4 * STRIDE };
	uint8_t *local = calloc(1, LEN);
	uint32_t key = srnic_mem_register(&eng->mem, (uintptr_t)local, LEN,
					  SRNIC_ACCESS_LOCAL_WRITE, 15);
	struct srnic_qp *qp = read_sent(15, 11, local, LEN, key);
	uint32_t i, txid = qp->run[0].txid;
	uint64_t again = eng->st->retransmits;
	struct srnic_cqe c[2];

	qp->at.retry_cnt = 0;
	qp->at.rnr_retry = 7;
	for (i = 0; i < 20; i++) {
		read_rnr_nak(qp);
		usleep(50);	/* (past the NAK's wait) */
		read_timeout(qp);
	}
	CHECK(srnic_cq_poll(cq, c, 2) == 0 && qp->run[0].state != SWQE_DONE &&
		      qp->run[0].txid == txid && eng->st->retransmits == again,
	      "a READ told 20 times that its question waits (retry_cnt 0): "
	      "%s, attempt %u (was %u)",
	      qp->run[0].state == SWQE_DONE ? "failed" : "on",
	      qp->run[0].txid, txid);
	read_timeout(qp);	/* (no NAK since: the target is silent) */
	CHECK(srnic_cq_poll(cq, c, 2) == 1 && c[0].wr_id == 11 &&
		      c[0].status == SRNIC_WC_RETRY_EXC_ERR,
	      "a READ whose target went silent (retry_cnt 0) did not fail "
	      "with a retry error");
	srnic_engine_destroy_qp(eng, qp);
	/* rnr_retry 2: the third timeout told to wait fails the READ */
	qp = read_sent(15, 12, local, LEN, key);
	qp->at.rnr_retry = 2;
	for (i = 0; i < 3; i++) {
		read_rnr_nak(qp);
		read_timeout(qp);
	}
	CHECK(srnic_cq_poll(cq, c, 2) == 1 && c[0].wr_id == 12 &&
		      c[0].status == SRNIC_WC_RNR_RETRY_EXC_ERR,
	      "a READ told to wait through 3 timeouts (rnr_retry 2) did not "
	      "fail with an RNR retry error");
	srnic_engine_destroy_qp(eng, qp);
	/* rnr_retry 0, told to wait, then part of its answer: the program
	 * answered, so the next stall is a transport retry's, not an RNR
	 * retry's that would fail it */
	qp = read_sent(15, 13, local, LEN, key);
	qp->at.rnr_retry = 0;
	qp->at.retry_cnt = 1;
	read_rnr_nak(qp);
	read_answer(qp, 0, LEN, local);
	read_timeout(qp);
	CHECK(srnic_cq_poll(cq, c, 2) == 0 && qp->run[0].state != SWQE_DONE,
	      "a READ (rnr_retry 0) told to wait, then answered in part, "
	      "failed at its next timeout (status %u)", c[0].status);
	srnic_mem_release(&eng->mem, key);
	srnic_engine_destroy_qp(eng, qp);
	free(local);
}

/* The port token of a shared node (srnicd's): a process starved of it with
 * frames to send asks for a turn after SRNIC_TOKEN_HUNGRY_US, the others
 * then leave it the token for up to SRNIC_TOKEN_LEAVE_US, and the turn
 * ends when it takes the token. */
static void test_token_turns(void)
{
	struct srnic_node *node = eng->node;
	uint64_t us = eng->tsc_per_us;
	struct srnic_pkt out[4];
	uint8_t *payload;
	struct rte_mbuf *m;
	unsigned slot = eng->slot;

	node->shared = 1;
	eng->slot = 2;
	CHECK(srnic_ports_take(eng) && node->port_token == 3,
	      "a free token is taken (token %#x)", node->port_token);
	srnic_ports_give(eng);
	node->hungry = 6;	/* slot 5 starved */
	node->hungry_at = srnic_now();
	CHECK(!srnic_ports_take(eng) && node->port_token == 0,
	      "left to a hungry process (token %#x)", node->port_token);
	node->hungry_at = srnic_now() - 2 * SRNIC_TOKEN_LEAVE_US * us;
	CHECK(srnic_ports_take(eng), "taken once the hungry one's time is up");
	srnic_ports_give(eng);

	/* This process with a frame to send, the token held by slot 4. */
	node->hungry = 0;
	node->port_token = 5;
	m = srnic_pkt_alloc(eng, &(struct srnic_pkt){.opcode = SRNIC_OP_ACK},
			    node->port[0].mac, 0, &payload);
	srnic_port_tx(eng, 0, m);
	srnic_ports_flush(eng);
	CHECK(node->hungry == 0 && eng->txbuf[0].n == 1,
	      "a first miss waits (hungry %u)", node->hungry);
	eng->token_missed_at = srnic_now() - 2 * SRNIC_TOKEN_HUNGRY_US * us;
	srnic_ports_flush(eng);
	CHECK(node->hungry == 3 && node->proc[2].token_hungry == 1,
	      "starved: asks for a turn (hungry %u)", node->hungry);
	node->port_token = 0;
	srnic_ports_flush(eng);
	CHECK(node->hungry == 0 && eng->txbuf[0].n == 0 &&
		      eng->token_missed_at == 0 && node->port_token == 0,
	      "its turn: the frame goes, the turn ends (hungry %u, queued "
	      "%u)", node->hungry, eng->txbuf[0].n);
	drain_wire(out, 4);

	/* A frame of the control core's, and none of this process's: it
	 * waits while another holds the token, and goes with this one's
	 * turn (srnicd's own datapath may not get one for long). */
	m = srnic_pkt_alloc(eng, &(struct srnic_pkt){.opcode = SRNIC_OP_HELLO},
			    node->port[0].mac, 0, &payload);
	m->port = 0;
	CHECK(rte_ring_mp_enqueue(node->ctrl_tx, m) == 0, "ctrl_tx full");
	node->port_token = 5;
	srnic_ports_flush(eng);
	CHECK(rte_ring_count(node->ctrl_tx) == 1 && drain_wire(out, 4) == 0,
	      "the control core's frame went without the token");
	node->port_token = 0;
	eng->token_missed_at = 0;
	node->hungry = 0;
	srnic_ports_flush(eng);
	CHECK(rte_ring_count(node->ctrl_tx) == 0 &&
		      drain_wire(out, 4) == 1 && out[0].opcode == SRNIC_OP_HELLO,
	      "the control core's frame did not go with the token's holder");
	node->shared = 0;
	eng->slot = slot;
}

/* Striping weights: each port appears as often as its weight in a round,
 * spread out rather than bunched. */
static void test_stripe_plan(void)
{
	static const uint8_t w[3] = {3, 1, 2};
	unsigned nports = eng->node->nports, n[3] = {0}, i, bunched = 0;

	eng->node->nports = 3;
	memcpy(eng->cfg.weight, w, 3);
	srnic_stripe_plan(eng);
	CHECK(eng->stripe_len == 6, "a round of %u, not 6", eng->stripe_len);
	for (i = 0; i < eng->stripe_len && i < 6; i++) {
		n[eng->stripe[i]]++;
		bunched += i && eng->stripe[i] == eng->stripe[i - 1];
	}
	CHECK(n[0] == 3 && n[1] == 1 && n[2] == 2,
	      "ports appear %u, %u and %u times for weights 3, 1, 2", n[0],
	      n[1], n[2]);
	CHECK(bunched == 0, "%u packets follow one on the same port", bunched);
	eng->node->nports = nports;
	eng->cfg.weight[0] = 1;
	srnic_stripe_plan(eng);
}

/* n receive WQEs of len bytes each on qp, wr_id 20 + i, in buf (pd). */
static void post_recvs(struct srnic_qp *qp, uint8_t *buf, uint32_t len,
		       unsigned n, uint32_t pd)
{
	uint32_t key = srnic_mem_register(&eng->mem, (uintptr_t)buf, len * n,
					  SRNIC_ACCESS_LOCAL_WRITE, pd);
	unsigned i;

	for (i = 0; i < n; i++) {
		struct srnic_rwqe *r = &qp->q.rq[(qp->q.rq_prod + i) & qp->q.rq_mask];

		*r = (struct srnic_rwqe){.wr_id = 20 + i, .num_sge = 1,
					 .length = len};
		r->sge[0] = (struct srnic_sge){(uintptr_t)buf + i * len, len,
					       key};
	}
	qp->q.rq_prod += n;
}

/* n SENDs of len bytes from src (key) in qp's first send slots, not
 * posted yet (sq_prod is the caller's). */
static void write_sends(struct srnic_qp *qp, uint8_t *src, uint32_t len,
			uint32_t key, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		struct srnic_swqe *w = &qp->q.sq[i];

		memset(w, 0, sizeof(*w));
		w->opcode = SRNIC_WR_SEND;
		w->length = len;
		w->num_sge = 1;
		w->sge[0] = (struct srnic_sge){(uintptr_t)src, len, key};
	}
}

/*
 * UC: a SEND waits for the receive WQE it takes at the responder.  Its
 * ACKs' credit says where the posted ones end; the requester stops there
 * (a newer ACK's credit lets it on, an older one's does not hold it back),
 * and lends itself a quarter window of them only to a responder silent for
 * SRNIC_UC_GONE_MS.  The responder grants what its program posted, and
 * with fewer than a window posted asks the next post to ring for an ACK.
 */
static void test_uc_recv_credit(void)
{
	enum { NSEND = 12, LEN = 64 };
	uint8_t *src = calloc(1, LEN), *rbuf = calloc(4, LEN);
	struct srnic_qp *qp = qp_new(13), *rq = qp_new(14);
	uint64_t gone = eng->tsc_per_us * 1000 * SRNIC_UC_GONE_MS, t;
	uint32_t key = srnic_mem_register(&eng->mem, (uintptr_t)src, LEN,
					  SRNIC_ACCESS_LOCAL_WRITE, qp->pd);
	struct srnic_pkt ack, out[4];
	unsigned n;

	qp->q.type = rq->q.type = SRNIC_QPT_UC;
	srnic_fc_reset(qp);
	qp->snd.uc_acked = qp->snd.next_msn;
	write_sends(qp, src, LEN, key, NSEND);
	qp->q.sq_prod = NSEND;
	qp->snd.recv_limit = 3;	/* (as the responder's word said) */
	n = run_requester(qp);
	CHECK(n == 3 && qp->snd.fc_blocked && qp->snd.uc_recv_wait,
	      "UC sent %u SENDs on 3 receives posted", n);
	srnic_qp_pkt_init(&ack, eng, qp, SRNIC_OP_ACK, qp->snd.uc_acked);
	ack.credit = 5;
	srnic_completer_credit(eng, qp, &ack);
	ack.credit = 4;			/* (of an older msn: overtaken) */
	ack.msn--;
	srnic_completer_credit(eng, qp, &ack);
	ack.msn++;
	n = run_requester(qp);
	CHECK(n == 2 && qp->snd.fc_blocked,
	      "UC sent %u SENDs on 2 receives more", n);
	/* (a lower credit of the same msn, or a newer one, counts: a
	 * responder whose program began to post grants less than before) */
	ack.credit = 4;
	srnic_completer_credit(eng, qp, &ack);
	CHECK(qp->snd.recv_limit == 4, "UC kept credit %u over a newer 4",
	      qp->snd.recv_limit);
	ack.credit = 5;
	srnic_completer_credit(eng, qp, &ack);
	t = qp->snd.uc_heard_at;
	srnic_completer_timeouts(eng, qp, t + gone / 2);
	n = run_requester(qp);
	CHECK(n == 0, "UC lent receives to a responder silent for %u ms",
	      SRNIC_UC_GONE_MS / 2);
	srnic_completer_timeouts(eng, qp, t + gone);
	n = run_requester(qp);
	CHECK(n == NSEND - 5, "UC sent %u SENDs of %u to a responder gone",
	      n, NSEND - 5);

	/* The responder of a program that has posted nothing: not waited
	 * for (two windows past its receives: SENDs lost at once, as a
	 * NIC's), and no bell. */
	srnic_responder_send_ack(eng, rq);
	n = drain_wire(out, 4);
	CHECK(n >= 1 && out[0].credit == 2 * SRNIC_WINDOW && !rq->q.rq_bell,
	      "UC ACK's credit %u with no receive ever posted (bell %u)",
	      n ? out[0].credit : 0, rq->q.rq_bell);
	/* ... then credit as posted, and a post then rings. */
	post_recvs(rq, rbuf, LEN, 2, 14);
	srnic_responder_send_ack(eng, rq);
	n = drain_wire(out, 4);
	CHECK(n >= 1 && out[0].credit == 2 && rq->q.rq_bell,
	      "UC ACK's credit %u on 2 receives posted (bell %u)",
	      n ? out[0].credit : 0, rq->q.rq_bell);
	CHECK(!srnic_responder_uc_recv_moved(rq), "UC saw receives not posted");
	post_recvs(rq, rbuf + 2 * LEN, LEN, 2, 14);
	CHECK(srnic_responder_uc_recv_moved(rq),
	      "UC missed the receives posted after its ACK");
	srnic_responder_progress(eng, rq);
	n = drain_wire(out, 4);
	CHECK(n >= 1 && out[0].credit == 4,
	      "UC's turn sent no ACK of the receives posted (credit %u)",
	      n ? out[0].credit : 0);
	/* A program that stopped posting SRNIC_UC_GONE_MS ago: not waited
	 * for again. */
	eng->now += gone;
	srnic_responder_send_ack(eng, rq);
	n = drain_wire(out, 4);
	CHECK(n >= 1 && out[0].credit == 4 + 2 * SRNIC_WINDOW,
	      "UC ACK's credit %u a second after the last receive posted",
	      n ? out[0].credit : 0);
	eng->now -= gone;
	srnic_engine_destroy_qp(eng, qp);
	srnic_engine_destroy_qp(eng, rq);
	free(src);
	free(rbuf);
}

/*
 * RC: a SEND waits for the receive WQE it takes at the responder while
 * the requester has messages in flight (their ACKs bring the responder's
 * word); with none in flight one goes alone, whatever the credit said.
 * No credit heard: nothing waits (an SRQ's responder, an older one).
 */
static void test_rc_recv_credit(void)
{
	enum { NSEND = 6, LEN = 64 };
	uint8_t *src = calloc(1, LEN);
	struct srnic_qp *qp = qp_new(16);
	uint64_t waits0 = eng->st->recv_credit_waits;
	uint32_t key = srnic_mem_register(&eng->mem, (uintptr_t)src, LEN,
					  SRNIC_ACCESS_LOCAL_WRITE, qp->pd);
	struct srnic_pkt ack;
	unsigned n;

	srnic_fc_reset(qp);
	write_sends(qp, src, LEN, key, NSEND);
	qp->q.sq[3].opcode = SRNIC_WR_WRITE;	/* (it takes no receive) */
	qp->q.sq[3].rkey = 1;
	/* (the responder's word before any of them: 2 receives posted) */
	srnic_qp_pkt_init(&ack, eng, qp, SRNIC_OP_ACK, qp->snd.next_msn);
	ack.credit = qp->snd.fc_credit;
	srnic_ack_set_recv_credit(&ack, qp->snd.next_ssn + 2);
	srnic_completer_ack(eng, qp, &ack);
	qp->q.sq_prod = NSEND;
	n = run_requester(qp);
	CHECK(n == 2 && eng->st->recv_credit_waits - waits0 == 1,
	      "RC sent %u SENDs on 2 receives posted, with them in flight",
	      n);
	/* Both acknowledged, one receive more: the third SEND, then the
	 * WRITE (it takes none), and the fifth waits for the two. */
	ack.msn = qp->snd.next_msn;
	srnic_ack_set_recv_credit(&ack, qp->snd.next_ssn + 1);
	srnic_completer_ack(eng, qp, &ack);
	n = run_requester(qp);
	CHECK(n == 2 && qp->snd.sq_next == 4,
	      "RC sent %u messages of the third and fourth on one receive "
	      "more", n);
	/* An older ACK's larger credit does not count. */
	ack.msn -= 2;
	srnic_ack_set_recv_credit(&ack, qp->snd.next_ssn + 5);
	srnic_completer_ack(eng, qp, &ack);
	n = run_requester(qp);
	CHECK(n == 0, "RC took the credit of an overtaken ACK (%u sent)", n);
	/* Nothing in flight any more: the fifth goes alone, past the
	 * credit, and the sixth waits for its answer. */
	ack.msn = qp->snd.next_msn;
	srnic_ack_set_recv_credit(&ack, qp->snd.next_ssn);
	srnic_completer_ack(eng, qp, &ack);
	n = run_requester(qp);
	CHECK(n == 1 && qp->snd.sq_next == 5,
	      "RC sent %u SENDs past the credit with none in flight (one)",
	      n);
	srnic_engine_destroy_qp(eng, qp);

	/* No credit heard: nothing waits. */
	qp = qp_new(16);
	srnic_fc_reset(qp);
	write_sends(qp, src, LEN, key, NSEND);
	qp->q.sq_prod = NSEND;
	n = run_requester(qp);
	CHECK(n == NSEND, "RC with no credit heard sent %u SENDs of %u", n,
	      NSEND);
	srnic_engine_destroy_qp(eng, qp);
	free(src);
}

/*
 * An ACK asked for at once (SRNIC_X_ACK_REQ).  The responder, whose ACKs
 * otherwise wait ack_delay_us: a message asked about that is done goes
 * out now, one whose earlier messages still lack packets when they are
 * in.  The requester asks on a signaled WQE, and on one that fills half
 * the send queue (one such ask at a time, until its WQE completes), while
 * an earlier WQE is unacknowledged; never with nothing else in flight (a
 * ping-pong's ACK rides on the answer).
 */
static struct srnic_swqe qp_sq_template[16];	/* (16 plain WRITEs) */

static void test_ack_req(void)
{
	enum { LEN = 64 };
	uint8_t *dst = calloc(4, LEN), *msg = calloc(1, LEN);
	struct srnic_qp *qp = qp_new(15);
	uint64_t delay = eng->ack_delay_tsc;
	struct srnic_pkt ack, out[4];
	uint32_t key, i;
	unsigned n;

	memset(msg, 0x5a, LEN);
	key = srnic_mem_register(&eng->mem, (uintptr_t)dst, 4 * LEN,
				 SRNIC_ACCESS_LOCAL_WRITE |
					 SRNIC_ACCESS_REMOTE_WRITE,
				 qp->pd);
	eng->ack_delay_tsc = eng->tsc_hz;	/* (lazy ACKs: a second) */
	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key, (uintptr_t)dst, msg,
		LEN, 0);
	CHECK(qp->ack_lazy && !qp->on_ack && drain_wire(out, 4) == 0,
	      "a WRITE nobody asked an ACK of was answered at once");
	deliver_xflags = SRNIC_X_ACK_REQ;
	deliver(qp, SRNIC_OP_WRITE, 0, 102, 1, 0, key,
		(uintptr_t)dst + 2 * LEN, msg, LEN, 0);
	CHECK(!qp->on_ack && qp->rcv.exp_msn == 101,
	      "an ACK went out for a message asked about behind a missing one");
	deliver_xflags = 0;
	deliver(qp, SRNIC_OP_WRITE, 0, 101, 1, 0, key, (uintptr_t)dst + LEN,
		msg, LEN, 0);
	n = drain_wire(out, 4);
	CHECK(n >= 1 && out[0].opcode == SRNIC_OP_ACK && out[0].msn == 103,
	      "the ACK asked for did not go when its message was done (%u "
	      "frames, msn %u)", n, n ? out[0].msn : 0);
	CHECK(!memcmp(dst + LEN, msg, LEN) && !memcmp(dst + 2 * LEN, msg, LEN),
	      "WRITEs asking for their ACK landed other bytes");
	/* (asked about a message already done: at once) */
	deliver_xflags = SRNIC_X_ACK_REQ;
	deliver(qp, SRNIC_OP_WRITE, 0, 102, 2, 0, key,
		(uintptr_t)dst + 2 * LEN, msg, LEN, 0);
	deliver_xflags = 0;
	n = drain_wire(out, 4);
	CHECK(n >= 1 && out[n - 1].msn == 103,
	      "a done message asked about again was not answered");
	eng->ack_delay_tsc = delay;
	srnic_engine_destroy_qp(eng, qp);

	/* The requester: a 16-WQE send queue. */
	qp = qp_new(15);
	key = srnic_mem_register(&eng->mem, (uintptr_t)msg, LEN,
				 SRNIC_ACCESS_LOCAL_WRITE, qp->pd);
	for (i = 0; i <= qp->q.sq_mask; i++) {
		struct srnic_swqe *w = &qp->q.sq[i];

		memset(w, 0, sizeof(*w));
		w->opcode = SRNIC_WR_WRITE;
		w->length = LEN;
		w->rkey = 1;
		w->num_sge = 1;
		w->sge[0] = (struct srnic_sge){(uintptr_t)msg, LEN, key};
	}
	memcpy(qp_sq_template, qp->q.sq, sizeof(qp_sq_template));
	srnic_fc_reset(qp);
	qp->q.sq[0].flags = qp->q.sq[2].flags = qp->q.sq[4].flags =
		SRNIC_WR_SIGNALED;
	nseen_xflags = 0;
	qp->q.sq_prod = 1;
	n = run_requester(qp);
	CHECK(n == 1 && !(seen_xflags[0] & SRNIC_X_ACK_REQ),
	      "a lone WRITE asked for its ACK at once");
	qp->q.sq_prod = 5;
	n = run_requester(qp);
	CHECK(n == 4, "%u WRITEs of 4 sent", n);
	for (i = 1; i < 5; i++)
		CHECK(!(seen_xflags[i] & SRNIC_X_ACK_REQ) == !(i % 2 == 0),
		      "WQE %u of 5 (the even ones signaled): ACK asked %#x", i,
		      seen_xflags[i]);
	/* WQEs 0-2 done: the one that fills half the queue (WQE 10, the
	 * eighth unacknowledged of 16) asks, and the next (11) waits for
	 * that one's answer. */
	srnic_qp_pkt_init(&ack, eng, qp, SRNIC_OP_ACK, qp->snd.next_msn - 2);
	ack.credit = qp->snd.fc_credit;
	srnic_completer_ack(eng, qp, &ack);
	qp->q.sq_prod = 13;
	n = run_requester(qp);
	CHECK(n == 8 && qp->q.sq_comp == 3, "%u WRITEs sent, %u done", n,
	      qp->q.sq_comp);
	for (i = 5; i < 13; i++)
		CHECK(!(seen_xflags[i] & SRNIC_X_ACK_REQ) == (i != 10),
		      "WQE %u of 13, 3 done: ACK asked %#x", i, seen_xflags[i]);
	srnic_engine_destroy_qp(eng, qp);

	/* A half-queue ask whose WQE could not go yet (out of credit) asks
	 * when it goes. */
	qp = qp_new(15);
	memcpy(qp->q.sq, qp_sq_template, sizeof(qp_sq_template));
	srnic_fc_reset(qp);
	qp->snd.fc_credit = qp->snd.fc_sent + 7;
	nseen_xflags = 0;
	qp->q.sq_prod = 9;
	n = run_requester(qp);
	CHECK(n == 7 && qp->snd.fc_blocked, "%u WRITEs sent on 7 credits", n);
	/* (WQE 7 begun, none acknowledged: credit alone) */
	srnic_qp_pkt_init(&ack, eng, qp, SRNIC_OP_ACK, qp->snd.next_msn - 8);
	ack.credit = qp->snd.fc_sent + 8;
	srnic_completer_ack(eng, qp, &ack);
	n = run_requester(qp);
	CHECK(n == 2 && (seen_xflags[7] & SRNIC_X_ACK_REQ) &&
		      !(seen_xflags[8] & SRNIC_X_ACK_REQ),
	      "the half-queue WQE held by credit did not ask when it went "
	      "(%u sent; %#x %#x)", n, seen_xflags[7], seen_xflags[8]);
	srnic_engine_destroy_qp(eng, qp);
	free(dst);
	free(msg);
}

/*
 * A service client's takeover (engine/service.c, client_rebind): a SEND
 * the old holder acknowledged behind a READ whose answer had not landed
 * goes to the new holder again with the READ and everything after it, in
 * order, since the resync names the READ as the first message the holder
 * is to take (it waited for the SEND for ever before: docs/failover.md).
 * A message acknowledged before the READ is not sent again.
 */
static void test_svc_rebind_done_behind_read(void)
{
	enum { LEN = 64 };
	uint8_t *buf = calloc(5, LEN);
	struct srnic_qp *qp = qp_new(16);
	struct srnic_service *sv = &eng->node->svc[0];
	uint32_t key = srnic_mem_register(&eng->mem, (uintptr_t)buf, 5 * LEN,
					  SRNIC_ACCESS_LOCAL_WRITE, qp->pd);
	struct srnic_pkt ack;
	uint32_t i, msn0;

	for (i = 0; i < 4; i++) {
		struct srnic_swqe *w = &qp->q.sq[i];

		memset(w, 0, sizeof(*w));
		w->opcode = i == 1 ? SRNIC_WR_READ : i == 2 ? SRNIC_WR_SEND
							     : SRNIC_WR_WRITE;
		w->length = LEN;
		w->rkey = 5;
		w->remote_addr = 0x1000;
		w->num_sge = 1;
		w->sge[0] = (struct srnic_sge){(uintptr_t)buf + i * LEN, LEN,
					       key};
	}
	srnic_fc_reset(qp);
	qp->q.sq_prod = 4;
	msn0 = qp->snd.next_msn;
	CHECK(run_requester(qp) == 3, "the WRITE, SEND and WRITE went");
	/* The old holder acknowledged the first three (the READ's answer
	 * still out), not the last. */
	srnic_qp_pkt_init(&ack, eng, qp, SRNIC_OP_ACK, msn0 + 3);
	ack.credit = qp->snd.fc_credit;
	srnic_completer_ack(eng, qp, &ack);
	CHECK(qp->q.sq_comp == 1 && qp->run[1].state == SWQE_WAITING &&
		      qp->run[2].state == SWQE_DONE &&
		      qp->run[3].state != SWQE_DONE,
	      "the setting: WRITE completed, READ waiting, SEND done (%u; "
	      "%u %u %u)", qp->q.sq_comp, qp->run[1].state, qp->run[2].state,
	      qp->run[3].state);
	/* A takeover: the service's term moves to another holder. */
	memset(sv, 0, sizeof(*sv));
	sv->holder = 0x0a000063;
	sv->term = 2 << 8 | 0x63;
	sv->holder_heard = srnic_ms();
	__atomic_store_n(&sv->ipv4, 0x0a000064, __ATOMIC_RELEASE);
	qp->svc_ipv4 = 0x0a000064;
	qp->svc_term = 1 << 8 | 0x62;
	srnic_svc_qp_track(eng, qp, true);
	srnic_svc_qps_tick(eng, rte_rdtsc());
	CHECK(qp->svc_resync && qp->run[1].state == SWQE_WAITING &&
		      qp->run[2].state == SWQE_WAITING &&
		      qp->run[3].state == SWQE_WAITING,
	      "after the takeover the READ, SEND and WRITE do not all wait to "
	      "go again (%u %u %u)", qp->run[1].state, qp->run[2].state,
	      qp->run[3].state);
	CHECK(qp->snd.resend_tail - qp->snd.resend_head == 3 &&
		      qp->snd.resend[qp->snd.resend_head % SRNIC_WINDOW] == 1 &&
		      qp->snd.resend[(qp->snd.resend_head + 1) % SRNIC_WINDOW] ==
			      2,
	      "the resends are not READ, SEND, WRITE in order (%u queued)",
	      qp->snd.resend_tail - qp->snd.resend_head);
	CHECK(qp->run[1].rd.npkts == 1, "the READ's tracker was not kept");
	srnic_svc_qp_track(eng, qp, false);
	memset(sv, 0, sizeof(*sv));
	drain_wire(NULL, 0);
	srnic_engine_destroy_qp(eng, qp);
	free(buf);
}

/*
 * UC: a SEND that lost a packet is given up once a later message is
 * complete and the give-up time has passed; the SENDs behind it move down
 * into the receive WQEs it and they would have had, so receives complete
 * in order, intact, in the WQEs they were posted in.  A plain WRITE takes
 * no receive WQE and does not shift them.  A WRITE with a bad key is
 * given up at once.
 */
static void test_uc_give_up(void)
{
	enum { LEN = 2 * STRIDE + 9 };
	uint8_t *rbuf = calloc(4, LEN), *wbuf = calloc(1, LEN);
	uint8_t *m[4];
	struct srnic_qp *qp = qp_new(5);
	struct srnic_cqe c[8];
	uint32_t wkey, i, k;
	uint64_t given = drops(SRNIC_DROP_UC_GIVEN_UP), late, wait, away;
	int got;

	qp->q.type = SRNIC_QPT_UC;
	for (i = 0; i < 4; i++) {
		m[i] = malloc(LEN);
		for (k = 0; k < LEN; k++)
			m[i][k] = (uint8_t)(i * 50 + k);
	}
	post_recvs(qp, rbuf, LEN, 4, 5);
	wkey = srnic_mem_register(&eng->mem, (uintptr_t)wbuf, LEN,
				  SRNIC_ACCESS_LOCAL_WRITE |
					  SRNIC_ACCESS_REMOTE_WRITE, 5);
	/* 100: SEND (ssn 0) lacking packet 0; 101: WRITE (next ssn 1);
	 * 102: SEND (ssn 1), whole, packets backwards; 103: SEND (ssn 2),
	 * only its first packet so far. */
	deliver(qp, SRNIC_OP_SEND, SRNIC_F_RECV_CQE, 100, 1, 0, 0, 0, m[0],
		LEN, 1);
	deliver(qp, SRNIC_OP_SEND, SRNIC_F_RECV_CQE, 100, 1, 0, 0, 0, m[0],
		LEN, 2);
	for (i = 0; i < 3; i++)
		deliver(qp, SRNIC_OP_WRITE, 0, 101, 1, 1, wkey,
			(uintptr_t)wbuf, m[1], LEN, i);
	for (i = 0; i < 3; i++)
		deliver(qp, SRNIC_OP_SEND, SRNIC_F_RECV_CQE, 102, 1, 1, 0, 0,
			m[2], LEN, 2 - i);
	deliver(qp, SRNIC_OP_SEND, SRNIC_F_RECV_CQE, 103, 1, 2, 0, 0, m[3],
		LEN, 0);
	CHECK(srnic_cq_poll(cq, c, 8) == 0 && qp->rcv.exp_msn == 100,
	      "UC waits for a message lacking a packet");
	CHECK(qp->rcv.uc_stuck_at != 0, "UC watches the stuck message");
	srnic_responder_uc_timer(eng, qp, qp->rcv.uc_stuck_at + 1);
	CHECK(qp->rcv.exp_msn == 100, "UC gave up before its time");
	/* Time the datapath was away (off its core) is no stall, nor is
	 * time nobody polled the node's ports (a holder of the port token
	 * off its core): ten times the time away and half of it here is
	 * half the time. */
	away = eng->tsc_per_us * SRNIC_UC_GIVE_UP_US * 10;
	for (i = 0; i < 2; i++) {
		uint64_t *gone = i ? &eng->node->ports_away : &eng->away_tsc;

		*gone += away;
		srnic_responder_uc_timer(eng, qp,
					 qp->rcv.uc_stuck_at + away +
						 eng->tsc_per_us *
							 SRNIC_UC_GIVE_UP_US /
							 2);
		CHECK(qp->rcv.exp_msn == 100,
		      i ? "UC gave up with the time the node's ports went unpolled"
			: "UC gave up with the time its process was away");
		*gone -= away;
	}
	/* Frames still wait in a port's queue: nothing is called lost, up
	 * to twice the time. */
	eng->rx_backlog = true;
	eng->rx_backlog_since = qp->rcv.uc_stuck_at;
	srnic_responder_uc_timer(eng, qp,
				 qp->rcv.uc_stuck_at + eng->tsc_per_us *
							   SRNIC_UC_GIVE_UP_US *
							   3 / 2);
	CHECK(qp->rcv.exp_msn == 100, "UC gave up with frames not read yet");
	/* ... counted from when they began to wait: a process back on its
	 * core after longer than the time reads its ring before it judges. */
	eng->rx_backlog_since = qp->rcv.uc_stuck_at + eng->tsc_per_us *
							      SRNIC_UC_GIVE_UP_US * 10;
	srnic_responder_uc_timer(eng, qp,
				 qp->rcv.uc_stuck_at + eng->tsc_per_us *
							   SRNIC_UC_GIVE_UP_US *
							   11);
	CHECK(qp->rcv.exp_msn == 100,
	      "UC gave up while the frames of a process back on its core "
	      "waited to be read");
	eng->rx_backlog_since = qp->rcv.uc_stuck_at;
	srnic_responder_uc_timer(eng, qp,
				 qp->rcv.uc_stuck_at + eng->tsc_per_us *
							   SRNIC_UC_GIVE_UP_US *
							   3);
	CHECK(drops(SRNIC_DROP_UC_GIVEN_UP) == given + 1,
	      "UC gave one message up (a backlog defers it only so long)");
	eng->rx_backlog = false;
	/* Its lost packet comes after all: the give-up was early, and the
	 * engine's give-up time doubles, once for this give-up. */
	late = drops(SRNIC_DROP_UC_LATE);
	wait = eng->uc_give_up_tsc;
	deliver(qp, SRNIC_OP_SEND, SRNIC_F_RECV_CQE, 100, 1, 0, 0, 0, m[0],
		LEN, 0);
	deliver(qp, SRNIC_OP_SEND, SRNIC_F_RECV_CQE, 100, 1, 0, 0, 0, m[0],
		LEN, 1);
	CHECK(drops(SRNIC_DROP_UC_LATE) == late + 1 &&
		      eng->uc_give_up_tsc == 2 * (wait ? wait
						      : eng->tsc_per_us * 16000),
	      "UC a late packet widens the give-up time once (%lu -> %lu)",
	      (unsigned long)wait, (unsigned long)eng->uc_give_up_tsc);
	CHECK(memcmp(wbuf, m[1], LEN) == 0, "UC WRITE behind it landed");
	got = srnic_cq_poll(cq, c, 8);
	CHECK(got == 1 && c[0].wr_id == 20 && c[0].byte_len == LEN &&
		      c[0].status == SRNIC_WC_SUCCESS &&
		      memcmp(rbuf, m[2], LEN) == 0,
	      "UC the SEND behind it completes in the first receive WQE "
	      "(got %d, wr_id %lu)", got, got ? (unsigned long)c[0].wr_id : 0);
	/* The rest of 103, numbered as the requester did: lands in the
	 * second WQE. */
	for (i = 1; i < 3; i++)
		deliver(qp, SRNIC_OP_SEND, SRNIC_F_RECV_CQE, 103, 1, 2, 0, 0,
			m[3], LEN, i);
	got = srnic_cq_poll(cq, c, 8);
	CHECK(got == 1 && c[0].wr_id == 21 && memcmp(rbuf + LEN, m[3], LEN) == 0,
	      "UC a SEND begun before the give-up moved down one WQE");
	/* 104: a later SEND (ssn 3) lands in the third WQE. */
	for (i = 0; i < 3; i++)
		deliver(qp, SRNIC_OP_SEND, SRNIC_F_RECV_CQE, 104, 1, 3, 0, 0,
			m[0], LEN, i);
	got = srnic_cq_poll(cq, c, 8);
	CHECK(got == 1 && c[0].wr_id == 22 &&
		      memcmp(rbuf + 2 * LEN, m[0], LEN) == 0,
	      "UC a SEND after the give-up takes the next WQE");
	/* 105: a WRITE with a bad key is given up at once, and no NAK
	 * goes out (UC answers nothing but credit). */
	deliver(qp, SRNIC_OP_WRITE, 0, 105, 1, 4, wkey ^ 0x10000,
		(uintptr_t)wbuf, m[1], LEN, 0);
	CHECK(qp->rcv.exp_msn == 106, "UC bad key given up at once (exp %u)",
	      qp->rcv.exp_msn);
	{
		struct srnic_pkt out[8];
		unsigned n = drain_wire(out, 8);

		for (i = 0; i < n; i++)
			CHECK(out[i].syndrome == SRNIC_ACK_OK &&
				      !(out[i].flags & SRNIC_F_SACK),
			      "UC sent a NAK or SACK");
	}
	CHECK(qp->q.state == SRNIC_QPS_RTS, "UC QP still in RTS");
	/* A packet far beyond any sender's reach is dropped; one a window
	 * and a bit ahead, numbered consistently, makes its message the
	 * oldest (the sender went on without the ones before). */
	{
		uint64_t oow = drops(SRNIC_DROP_OUT_OF_WINDOW);

		deliver(qp, SRNIC_OP_WRITE, 0, 106 + 1000000, 1, 4, wkey,
			(uintptr_t)wbuf, m[1], LEN, 0);
		CHECK(drops(SRNIC_DROP_OUT_OF_WINDOW) == oow + 1 &&
			      qp->rcv.exp_msn == 106,
		      "UC a packet a million messages ahead is dropped");
		deliver(qp, SRNIC_OP_WRITE, 0, 106 + 200, 1, 4, wkey,
			(uintptr_t)wbuf, m[1], LEN, 0);
		CHECK(qp->rcv.exp_msn == 306, "UC follows a sender 200 messages "
		      "ahead (exp %u)", qp->rcv.exp_msn);
	}
	srnic_engine_destroy_qp(eng, qp);
	for (i = 0; i < 4; i++)
		free(m[i]);
	free(rbuf);
	free(wbuf);
}

/*
 * UC: a port's frames come in order, so a message lacking packets while
 * one of the ports it was striped over has brought nothing later is not
 * given up when the give-up time passes (that port may be far behind the
 * other: its packets are still coming), only once that port brings a
 * later message's packet, or the peer's striping leaves it, or after
 * UC_GIVE_UP_MAX_US; and not while nobody polls the node's ports.
 */
static void test_uc_port_behind(void)
{
	enum { LEN = 3 * STRIDE, GIVE_UP_MAX_US = 256000 /* uc.c */ };
	uint8_t *wbuf = calloc(1, LEN), *msg = malloc(LEN);
	struct srnic_qp *qp = qp_new(5);
	uint64_t given = drops(SRNIC_DROP_UC_GIVEN_UP), give_up, t0, polled;
	unsigned nports, polling[2];
	uint32_t wkey, i;

	qp->q.type = SRNIC_QPT_UC;
	for (i = 0; i < LEN; i++)
		msg[i] = (uint8_t)(i * 7 + 3);
	wkey = srnic_mem_register(&eng->mem, (uintptr_t)wbuf, LEN,
				  SRNIC_ACCESS_LOCAL_WRITE |
					  SRNIC_ACCESS_REMOTE_WRITE, 5);
	give_up = eng->uc_give_up_tsc ? eng->uc_give_up_tsc
				      : eng->tsc_per_us * SRNIC_UC_GIVE_UP_US;
	/* (two ports, both polled, the peer heard on both) */
	nports = eng->node->nports;
	polling[0] = eng->node->port[0].polling;
	polling[1] = eng->node->port[1].polling;
	eng->node->nports = 2;
	eng->node->port[0].polling = eng->node->port[1].polling = 1;
	peer.up[1] = 1;
#define W(msn, idx, port)                                                  \
	(deliver_port = (port), deliver(qp, SRNIC_OP_WRITE, 0, msn, 1, 0, wkey, \
					(uintptr_t)wbuf, msg, LEN, idx))
	/* 100 whole, striped 0, 1, 0; 101 lacks its packet 1 (port 1's);
	 * 102 begun on port 0. */
	W(100, 0, 0), W(100, 1, 1), W(100, 2, 0);
	W(101, 0, 1), W(101, 2, 1);
	W(102, 1, 0);
	CHECK(qp->rcv.exp_msn == 101 && qp->rcv.uc_stuck_at,
	      "UC watches a message lacking a packet (exp %u)",
	      qp->rcv.exp_msn);
	/* (port 1 brought 101's packets 0 and 2 and nothing later) */
	t0 = qp->rcv.uc_stuck_at;
	srnic_responder_uc_timer(eng, qp, t0 + 2 * give_up);
	CHECK(qp->rcv.exp_msn == 101,
	      "UC gave up a message while a port it came by had brought "
	      "nothing later");
	W(102, 0, 1);
	/* (not while nobody polls the node's ports: a holder of the port
	 * token is off its core, and what they hold is not known yet) */
	polled = eng->node->ports_polled;
	eng->node->ports_polled = t0 + 3 * give_up - srnic_away_gap_tsc(eng) - 1;
	srnic_responder_uc_timer(eng, qp, t0 + 3 * give_up);
	CHECK(qp->rcv.exp_msn == 101,
	      "UC gave up a message while the node's ports went unpolled");
	eng->node->ports_polled = t0 + 3 * give_up;
	srnic_responder_uc_timer(eng, qp, t0 + 3 * give_up);
	eng->node->ports_polled = polled;
	CHECK(qp->rcv.exp_msn == 102 &&
		      drops(SRNIC_DROP_UC_GIVEN_UP) == given + 1,
	      "UC kept a message whose ports both brought later ones "
	      "(exp %u)", qp->rcv.exp_msn);
	/* 102 lacks its packet 2, 103 begun on port 0: port 1 (102's
	 * packet 0) says nothing later; unless the peer's striping left it
	 * (lossy), it is waited for. */
	W(103, 0, 0);
	CHECK(qp->rcv.uc_stuck_at, "UC watches 102");
	t0 = qp->rcv.uc_stuck_at;
	srnic_responder_uc_timer(eng, qp, t0 + 2 * give_up);
	CHECK(qp->rcv.exp_msn == 102, "UC gave up 102 early");
	peer.lossy[1] = 1;
	srnic_responder_uc_timer(eng, qp, t0 + 2 * give_up);
	peer.lossy[1] = 0;
	CHECK(qp->rcv.exp_msn == 103 &&
		      drops(SRNIC_DROP_UC_GIVEN_UP) == given + 2,
	      "UC waited for a port the peer's striping left (exp %u)",
	      qp->rcv.exp_msn);
	/* 103 lacks packets 1 and 2, 104 begun on port 0: port 1 says
	 * nothing later until the longest time. */
	W(104, 0, 0);
	CHECK(qp->rcv.uc_stuck_at, "UC watches 103");
	t0 = qp->rcv.uc_stuck_at;
	srnic_responder_uc_timer(eng, qp, t0 + 2 * give_up);
	CHECK(qp->rcv.exp_msn == 103, "UC gave up 103 early");
	srnic_responder_uc_timer(eng, qp,
				 t0 + eng->tsc_per_us * (GIVE_UP_MAX_US + 1));
	CHECK(qp->rcv.exp_msn == 104 &&
		      drops(SRNIC_DROP_UC_GIVEN_UP) == given + 3,
	      "UC waited past the longest time for a port (exp %u)",
	      qp->rcv.exp_msn);
#undef W
	deliver_port = 0;
	eng->node->nports = nports;
	eng->node->port[0].polling = polling[0];
	eng->node->port[1].polling = polling[1];
	peer.up[1] = 0;
	srnic_engine_destroy_qp(eng, qp);
	srnic_mem_invalidate(&eng->mem, wkey);
	srnic_mem_release(&eng->mem, wkey);
	free(wbuf);
	free(msg);
}

/* A datagram for UD QP qp from QP 99 of the node of id src, with qkey. */
static void datagram_from(struct srnic_qp *qp, uint32_t src, uint32_t qkey,
			  const uint8_t *msg, uint32_t len)
{
	struct srnic_pkt pkt = {0};

	pkt.opcode = SRNIC_OP_UD_SEND;
	pkt.flags = SRNIC_F_RECV_CQE | SRNIC_F_LAST;
	pkt.dst_qpn = qp->q.qpn;
	pkt.src_qpn = 99;
	pkt.qkey = qkey;
	pkt.src_ipv4 = src;
	pkt.dst_ipv4 = 0x0a000001;
	pkt.msg_len = pkt.pkt_len = len;
	pkt.stride_shift = SRNIC_MAX_STRIDE_SHIFT;
	pkt.payload = msg;
	srnic_responder_datagram(eng, qp, &pkt, NULL);
}

/* ... from node 10.0.0.9 */
static void datagram(struct srnic_qp *qp, uint32_t qkey, const uint8_t *msg,
		     uint32_t len)
{
	datagram_from(qp, 0x0a000009, qkey, msg, len);
}

/*
 * UD: a datagram lands behind a 40-byte GRH ending in its IPv4 header;
 * one with another Q_Key, or with no receive WQE posted, is dropped and
 * counted; one longer than its receive buffer completes it in error;
 * multicast to a group nobody joined is dropped and counted.
 */
static void test_ud(void)
{
	enum { LEN = 300 };
	uint8_t *rbuf = calloc(3, SRNIC_GRH_LEN + LEN), msg[LEN + 1];
	struct srnic_qp *qp = qp_new(6);
	struct srnic_pkt pkt = {0};
	struct srnic_cqe c[4];
	uint64_t qkeys = drops(SRNIC_DROP_BAD_QKEY);
	uint64_t rnr = drops(SRNIC_DROP_RNR);
	uint64_t nogroup = drops(SRNIC_DROP_NO_GROUP);
	const uint8_t *ip = rbuf + 20;
	uint32_t i;
	int got;

	qp->q.type = SRNIC_QPT_UD;
	qp->peer = NULL;
	qp->at.qkey = 0x1234;
	for (i = 0; i <= LEN; i++)
		msg[i] = (uint8_t)(i ^ 0x5a);
	post_recvs(qp, rbuf, SRNIC_GRH_LEN + LEN, 2, 6);
	datagram(qp, 0x4321, msg, LEN);
	CHECK(drops(SRNIC_DROP_BAD_QKEY) == qkeys + 1 &&
		      srnic_cq_poll(cq, c, 4) == 0,
	      "UD another Q_Key is dropped");
	datagram(qp, 0x1234, msg, LEN);
	got = srnic_cq_poll(cq, c, 4);
	CHECK(got == 1 && c[0].wr_id == 20 && c[0].src_qp == 99 &&
		      c[0].byte_len == SRNIC_GRH_LEN + LEN &&
		      (c[0].flags & SRNIC_WC_F_GRH) &&
		      c[0].status == SRNIC_WC_SUCCESS,
	      "UD datagram completes with a GRH");
	CHECK(memcmp(rbuf + SRNIC_GRH_LEN, msg, LEN) == 0,
	      "UD payload after the GRH");
	CHECK(ip[0] == 0x45 && ip[9] == 17 && srnic_get32(ip + 12) == 0x0a000009 &&
		      srnic_get32(ip + 16) == 0x0a000001,
	      "UD GRH ends in the IPv4 header");
	/* One byte longer than the buffer: the WQE completes in error. */
	datagram(qp, 0x1234, msg, LEN + 1);
	got = srnic_cq_poll(cq, c, 4);
	CHECK(got >= 1 && c[0].wr_id == 21 &&
		      c[0].status == SRNIC_WC_LOC_LEN_ERR,
	      "UD datagram longer than its buffer: LOC_LEN_ERR");
	CHECK(qp->q.state == SRNIC_QPS_RTS, "UD QP goes on after it");
	datagram(qp, 0x1234, msg, LEN);
	CHECK(drops(SRNIC_DROP_RNR) == rnr + 1, "UD no receive WQE: dropped");
	pkt.opcode = SRNIC_OP_UD_SEND;
	pkt.dst_qpn = SRNIC_QPN_MCAST;
	pkt.dst_ipv4 = 0xe0010203;
	CHECK(!srnic_mcast_forward(eng, &pkt, NULL) &&
		      drops(SRNIC_DROP_NO_GROUP) == nogroup + 1,
	      "UD multicast to no group here: dropped");
	srnic_engine_destroy_qp(eng, qp);
	free(rbuf);
}

/* On an IPv6 node, a datagram from the node of id src: the source of its
 * IPv6 GRH, or NULL if its GRH is IPv4's (its sender not known). */
static const uint8_t *datagram6_from(struct srnic_qp *qp, uint8_t *rbuf,
				     uint32_t src)
{
	enum { LEN = 64 };
	static const uint8_t msg[LEN];
	struct srnic_cqe c;
	const uint8_t *grh;

	post_recvs(qp, rbuf, SRNIC_GRH_LEN + LEN, 1, 6);
	datagram_from(qp, src, 0x1234, msg, LEN);
	if (srnic_cq_poll(cq, &c, 1) != 1 || c.status != SRNIC_WC_SUCCESS) {
		CHECK(0, "UD6 datagram from %08x completes", src);
		return NULL;
	}
	grh = rbuf;
	return c.flags & SRNIC_WC_F_GRH_IPV6 ? grh + 8 : NULL;
}

/*
 * UD on an IPv6 node: a datagram's GRH is IPv6, from its sender's address,
 * which the receiver keeps with the sender's peer slot and then finds with
 * no scan of the peers; but not once the slot holds another address under
 * the id, or another node (the GRH falls back to IPv4's, as for a sender
 * not known), and again once the sender is back.  A configured peer not
 * heard yet is its line's address.
 */
static void test_ud6(void)
{
	static const uint8_t self[16] = {0xfd, 0, 0x56, [15] = 1};
	static const uint8_t a[16] = {0xfd, 0, 0x56, [15] = 9};
	static const uint8_t b[16] = {0xfd, 0, 0x56, [15] = 10};
	static const uint8_t c[16] = {0xfd, 0, 0x57, [15] = 2};
	uint8_t *rbuf = calloc(1, SRNIC_GRH_LEN + 64);
	struct srnic_qp *qp = qp_new(6);
	struct srnic_peer *slot = &eng->node->peer[0];
	struct srnic_config cfg = eng->cfg;
	uint32_t id_a = srnic_wire_ip6_id(a), id_c = srnic_wire_ip6_id(c);
	const uint8_t *src;

	qp->q.type = SRNIC_QPT_UD;
	qp->peer = NULL;
	qp->at.qkey = 0x1234;
	eng->cfg.has_ipv6 = 1;
	memcpy(eng->cfg.ipv6, self, 16);
	eng->cfg.ipv4 = srnic_wire_ip6_id(self);
	eng->cfg.npeers = 1;
	eng->cfg.peer[0] = id_c;
	memcpy(eng->cfg.peer6[0], c, 16);
	memset(slot, 0, sizeof(*slot));
	slot->ipv4 = id_a;
	memcpy(slot->ip6, a, 16);
	eng->node->npeers = 1;

	src = datagram6_from(qp, rbuf, id_a);
	CHECK(src && !memcmp(src, a, 16) && !memcmp(src + 16, self, 16),
	      "UD6 GRH from the sender's address to ours");
	eng->node->npeers = 0;
	src = datagram6_from(qp, rbuf, id_a);
	CHECK(src && !memcmp(src, a, 16),
	      "UD6 the last sender kept: no scan of the peers");
	eng->node->npeers = 1;
	memcpy(slot->ip6, b, 16);
	CHECK(!datagram6_from(qp, rbuf, id_a),
	      "UD6 another address under the sender's id: not its");
	slot->ipv4 = srnic_wire_ip6_id(b);
	CHECK(!datagram6_from(qp, rbuf, id_a),
	      "UD6 the sender's slot taken by another node: IPv4 GRH");
	src = datagram6_from(qp, rbuf, srnic_wire_ip6_id(b));
	CHECK(src && !memcmp(src, b, 16), "UD6 the slot's new node");
	slot->ipv4 = 0;
	memcpy(slot->ip6, a, 16);
	slot->ipv4 = id_a;
	src = datagram6_from(qp, rbuf, id_a);
	CHECK(src && !memcmp(src, a, 16), "UD6 the sender back in its slot");
	src = datagram6_from(qp, rbuf, id_c);
	CHECK(src && !memcmp(src, c, 16), "UD6 a configured peer not heard");

	memset(slot, 0, sizeof(*slot));
	eng->node->npeers = 0;
	eng->cfg = cfg;
	srnic_engine_destroy_qp(eng, qp);
	free(rbuf);
}

/* Three pages of 0x5a registered for remote write and read (and extra)
 * on PD pd, the middle one unmapped since, as a program that let it go
 * still registered leaves it; the key. */
static uint32_t holed_region(uint32_t pd, uint32_t extra, uint8_t **mem)
{
	long page = sysconf(_SC_PAGESIZE);
	uint32_t key;

	*mem = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*mem == MAP_FAILED)
		abort();
	memset(*mem, 0x5a, 3 * page);
	key = srnic_mem_register(&eng->mem, (uintptr_t)*mem, 3 * page,
				 SRNIC_ACCESS_LOCAL_WRITE |
					 SRNIC_ACCESS_REMOTE_WRITE |
					 SRNIC_ACCESS_REMOTE_READ | extra,
				 pd);
	munmap(*mem + page, page);
	drain_wire(NULL, 0);	/* (what earlier tests left queued) */
	return key;
}

/* A READ of one stride at va under key, as message msn: its NAKs and
 * answers. */
static void read_at(struct srnic_qp *qp, uint32_t msn, uint32_t key,
		    const uint8_t *va, unsigned *naks, unsigned *answers)
{
	struct srnic_pkt req;

	qp->rcv.exp_msn = msn;
	memset(&req, 0, sizeof(req));
	req.opcode = SRNIC_OP_READ_REQ;
	req.msn = msn;
	req.txid = 1;
	req.rkey = key;
	req.va = (uintptr_t)va;
	req.msg_len = STRIDE;
	req.stride_shift = STRIDE_SHIFT;
	ask_read(qp, &req, naks, answers);
}

/* The pages around the hole: page 0 all 0x5a, page 2 its first len
 * bytes v and the rest 0x5a.  The first byte wrong, or page. */
static long around_hole(const uint8_t *mem, uint8_t v, long len)
{
	long page = sysconf(_SC_PAGESIZE), i;

	for (i = 0; i < page; i++)
		if (mem[i] != 0x5a || mem[2 * page + i] != (i < len ? v : 0x5a))
			break;
	return i;
}

static void holed_region_end(struct srnic_qp *qp, uint32_t key, uint8_t *mem)
{
	long page = sysconf(_SC_PAGESIZE);

	srnic_mem_release(&eng->mem, key);
	srnic_engine_destroy_qp(eng, qp);
	munmap(mem, page);
	munmap(mem + 2 * page, page);
}

/*
 * Robust placement: an ordinary region of a robust table with a hole.  A
 * WRITE into the hole is NAKed as an access error, counted as a page
 * fault, and fences the key: a WRITE to a mapped page of the region after
 * it is refused by the key check, leaving the page as it was, and so is
 * a READ; the region still deregisters.  The table's copies are guarded,
 * yet it may still send zero-copy (only an on-demand region stops that).
 */
static void test_fenced_hole(void)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *mem, *msg = malloc(STRIDE);
	struct srnic_qp *qp = qp_new(15);
	uint64_t faulted = drops(SRNIC_DROP_PAGE_FAULT);
	uint64_t fenced = eng->st->fault_fenced;
	struct srnic_pkt out[8];
	unsigned n, naks, answers;
	uint32_t key;

	if (!msg)
		abort();
	memset(msg, 0x77, STRIDE);
	eng->mem.robust = true;
	key = holed_region(15, 0, &mem);
	CHECK(key && srnic_mem_guarded(&eng->mem) &&
		      srnic_mem_zero_copy_ok(&eng->mem),
	      "a robust table's region guards its copies, zero-copy stays");

	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key,
		(uintptr_t)mem + page, msg, STRIDE, 0);
	n = drain_wire(out, 8);
	CHECK(n == 1 && out[0].syndrome == SRNIC_NAK_ACCESS &&
		      drops(SRNIC_DROP_PAGE_FAULT) == faulted + 1 &&
		      eng->st->fault_fenced == fenced + 1,
	      "a WRITE into the hole: access NAK, the key fenced (%u frames)",
	      n);

	qp->rcv.exp_msn = 101;
	deliver(qp, SRNIC_OP_WRITE, 0, 101, 1, 0, key,
		(uintptr_t)mem + 2 * page, msg, STRIDE, 0);
	n = drain_wire(out, 8);
	CHECK(n == 1 && out[0].syndrome == SRNIC_NAK_ACCESS &&
		      drops(SRNIC_DROP_PAGE_FAULT) == faulted + 1,
	      "a WRITE to a mapped page after: refused by the key check");
	CHECK(around_hole(mem, 0x5a, 0) == page,
	      "the mapped pages keep their bytes");

	read_at(qp, 102, key, mem, &naks, &answers);
	CHECK(naks == 1 && answers == 0 &&
		      eng->st->fault_fenced == fenced + 1,
	      "a READ of a fenced key: %u NAKs, %u answers", naks, answers);
	CHECK(srnic_mem_invalidate(&eng->mem, key) == 0,
	      "a fenced region deregisters");
	eng->mem.robust = false;
	holed_region_end(qp, key, mem);
	free(msg);
}

/*
 * An on-demand region with a hole (a page its program unmapped): a WRITE
 * into the hole and a READ of it are NAKed as access errors and counted as
 * page faults, the process goes on, and the pages around the hole keep
 * their bytes; a WRITE to a mapped page of the same region then lands.
 * (Last: the first on-demand region guards the table's copies for good.)
 */
static void test_on_demand_hole(void)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *mem, *msg = malloc(STRIDE);
	struct srnic_qp *qp = qp_new(14);
	uint64_t faulted = drops(SRNIC_DROP_PAGE_FAULT);
	struct srnic_pkt out[8];
	unsigned n, naks, answers;
	uint32_t key;
	long i;

	if (!msg)
		abort();
	memset(msg, 0x77, STRIDE);
	key = holed_region(14, SRNIC_ACCESS_ON_DEMAND, &mem);
	CHECK(key && srnic_mem_guarded(&eng->mem) &&
		      !srnic_mem_zero_copy_ok(&eng->mem),
	      "an on-demand region registers, guards the table, and stops "
	      "zero-copy");

	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key,
		(uintptr_t)mem + page, msg, STRIDE, 0);
	n = drain_wire(out, 8);
	CHECK(n == 1 && out[0].syndrome == SRNIC_NAK_ACCESS &&
		      out[0].nak_msn == 100 &&
		      drops(SRNIC_DROP_PAGE_FAULT) == faulted + 1,
	      "a WRITE into the hole: access NAK, counted (%u frames)", n);

	read_at(qp, 101, key, mem + page, &naks, &answers);
	CHECK(naks == 1 && answers == 0 &&
		      drops(SRNIC_DROP_PAGE_FAULT) == faulted + 2,
	      "a READ of the hole: %u NAKs, %u answers", naks, answers);

	qp->rcv.exp_msn = 102;
	deliver(qp, SRNIC_OP_WRITE, 0, 102, 1, 0, key,
		(uintptr_t)mem + 2 * page, msg, STRIDE, 0);
	drain_wire(out, 8);
	i = around_hole(mem, 0x77, STRIDE);
	CHECK(i == page, "the pages around the hole: byte %ld %s", i,
	      i == page ? "all as they should be" : "wrong");
	srnic_mem_invalidate(&eng->mem, key);
	holed_region_end(qp, key, mem);
	free(msg);
}

/* What messages from the wire may hold (issue 32, 4): a last packet
 * beyond held_max is dropped, not kept, and lands when sent again after
 * the rest; a message whose packet map would pass the map budget is
 * refused at its first packet; both are counted, and both holds are given
 * back as the messages complete. */
static void test_budgets(void)
{
	enum { LEN = 3 * STRIDE, BIG = 100 * STRIDE };
	uint8_t *dst = calloc(1, 3 * LEN + BIG), *msg = malloc(BIG);
	struct srnic_qp *qp = qp_new(9);
	uint64_t over = drops(SRNIC_DROP_OVER_BUDGET);
	uint32_t key, i, m;
	struct srnic_pkt out[16];

	for (i = 0; i < BIG; i++)
		msg[i] = (uint8_t)(i * 13 + 1);
	key = srnic_mem_register(&eng->mem, (uintptr_t)dst, 3 * LEN + BIG,
				 SRNIC_ACCESS_LOCAL_WRITE |
					 SRNIC_ACCESS_REMOTE_WRITE, 9);
	eng->held_max = eng->held + 2;
	/* the last packets of three messages first: two are held */
	for (m = 0; m < 3; m++)
		CHECK(deliver(qp, SRNIC_OP_WRITE, 0, 100 + m, 1, 0, key,
			      (uintptr_t)dst + m * LEN, msg, LEN, 2) == (m < 2),
		      "last packet of message %u %s", m,
		      m < 2 ? "held" : "dropped past held_max");
	CHECK(drops(SRNIC_DROP_OVER_BUDGET) == over + 1,
	      "the packet past held_max is counted");
	for (m = 0; m < 3; m++)
		for (i = 0; i < 2; i++)
			deliver(qp, SRNIC_OP_WRITE, 0, 100 + m, 1, 0, key,
				(uintptr_t)dst + m * LEN, msg, LEN, i);
	CHECK(qp->rcv.exp_msn == 102, "two messages done (exp_msn %u)",
	      qp->rcv.exp_msn);
	CHECK(eng->held == eng->held_max - 2,
	      "the held packets are given back as they land");
	/* sent again (as a probe would), it lands now */
	CHECK(!deliver(qp, SRNIC_OP_WRITE, 0, 102, 1, 0, key,
		       (uintptr_t)dst + 2 * LEN, msg, LEN, 2),
	      "the dropped last packet, sent again, is placed");
	CHECK(qp->rcv.exp_msn == 103 &&
		      !memcmp(dst + 2 * LEN, msg, LEN) && !memcmp(dst, msg, LEN),
	      "all three messages landed whole");
	eng->held_max = 0;

	/* 100 packets need a map of 16 bytes: refused under a budget of 8 */
	eng->map_budget.max = eng->map_budget.bytes + 8;
	over = drops(SRNIC_DROP_OVER_BUDGET);
	deliver(qp, SRNIC_OP_WRITE, 0, 103, 1, 0, key,
		(uintptr_t)dst + 3 * LEN, msg, BIG, 0);
	CHECK(drops(SRNIC_DROP_OVER_BUDGET) == over + 1 &&
		      qp->rcv.rmsg[103 % SRNIC_WINDOW].state == RMSG_FREE,
	      "a message whose map passes the budget is refused");
	eng->map_budget.max += 16;
	for (i = 0; i < 100; i++)
		deliver(qp, SRNIC_OP_WRITE, 0, 103, 1, 0, key,
			(uintptr_t)dst + 3 * LEN, msg, BIG, i);
	CHECK(qp->rcv.exp_msn == 104 && !memcmp(dst + 3 * LEN, msg, BIG),
	      "with room in the budget it lands whole");
	CHECK(eng->map_budget.bytes + 24 == eng->map_budget.max,
	      "its map is given back (%llu bytes counted)",
	      (unsigned long long)eng->map_budget.bytes);
	eng->map_budget.max = 0;
	drain_wire(out, 16);
	srnic_engine_destroy_qp(eng, qp);
	free(dst);
	free(msg);
}

/* The node's budget for held last packets, shared by its processes: with
 * the others holding all but one, this process keeps one more and drops
 * the next (counted), though its own budget has room; each hold shows in
 * its slot's count (srnicd takes a departed process's back) and in the
 * node's, and is given back as its message lands. */
static void test_held_node(void)
{
	enum { LEN = 3 * STRIDE };
	uint8_t *dst = calloc(1, 2 * LEN), *msg = malloc(LEN);
	struct srnic_qp *qp = qp_new(9);
	uint32_t saved = eng->node->held_total, key, i, m;
	uint64_t over = drops(SRNIC_DROP_OVER_BUDGET);

	memset(msg, 0x5a, LEN);
	key = srnic_mem_register(&eng->mem, (uintptr_t)dst, 2 * LEN,
				 SRNIC_ACCESS_LOCAL_WRITE |
					 SRNIC_ACCESS_REMOTE_WRITE, 9);
	eng->held_max = eng->held + 100;
	eng->node->held_total = SRNIC_HELD_MAX - 1;
	for (m = 0; m < 2; m++)
		CHECK(deliver(qp, SRNIC_OP_WRITE, 0, 100 + m, 1, 0, key,
			      (uintptr_t)dst + m * LEN, msg, LEN, 2) == (m == 0),
		      "last packet of message %u %s", m,
		      m == 0 ? "held" : "dropped past the node's budget");
	CHECK(drops(SRNIC_DROP_OVER_BUDGET) == over + 1 &&
		      eng->node->held_total == SRNIC_HELD_MAX &&
		      eng->node->proc[eng->slot].held == eng->held,
	      "the node's count %u, the slot's %u, the process's %u",
	      eng->node->held_total, eng->node->proc[eng->slot].held,
	      eng->held);
	for (m = 0; m < 2; m++)
		for (i = 0; i < 3; i++)
			deliver(qp, SRNIC_OP_WRITE, 0, 100 + m, 1, 0, key,
				(uintptr_t)dst + m * LEN, msg, LEN, i);
	CHECK(qp->rcv.exp_msn == 102 && !memcmp(dst, msg, LEN) &&
		      !memcmp(dst + LEN, msg, LEN) &&
		      eng->node->held_total == SRNIC_HELD_MAX - 1,
	      "both messages landed and the hold was given back (node %u)",
	      eng->node->held_total);
	eng->node->held_total = saved;
	eng->held_max = 0;
	srnic_engine_destroy_qp(eng, qp);
	free(dst);
	free(msg);
}

/* Issue 32's flood (hole 4): a station forges, on each of 200 QPs, the
 * last packet of every message of the window ahead, each message's other
 * packets never to come.  The process keeps no more of them than its share
 * of the pool (the rest dropped and counted), so the pool keeps buffers
 * for everyone else, and a QP beside them still takes its messages, whole.
 * (A stopped process beside it pins at most SRNIC_RX_STALL_FRAMES more:
 * test_stalled_ring.) */
static void test_forged_flood(void)
{
	enum { NQP = 200, LEN = 3 * STRIDE };
	static struct srnic_qp *qps[NQP];
	uint8_t *dst = calloc(1, LEN + STRIDE), *msg = malloc(LEN);
	uint64_t over = drops(SRNIC_DROP_OVER_BUDGET), forged = 0;
	uint32_t held0 = eng->held, key, q, m;
	struct srnic_qp *qp;
	struct srnic_pkt out[32];
	unsigned in_use;

	memset(msg, 0x6b, LEN);
	key = srnic_mem_register(&eng->mem, (uintptr_t)dst, LEN + STRIDE,
				 SRNIC_ACCESS_LOCAL_WRITE |
					 SRNIC_ACCESS_REMOTE_WRITE, 9);
	/* (a quarter of this engine's pool, as SRNIC_HELD_MAX of a node's) */
	eng->held_max = eng->node->pool->size / 4;
	for (q = 0; q < NQP; q++) {
		qps[q] = qp_new(9);
		for (m = 1; m < SRNIC_WINDOW; m++, forged++)
			deliver(qps[q], SRNIC_OP_WRITE, 0, 100 + m, 1, 0, key,
				(uintptr_t)dst, msg, LEN, 2);
		while (drain_wire(out, 32))
			;
	}
	in_use = rte_mempool_in_use_count(eng->node->pool);
	CHECK(eng->held <= eng->held_max &&
		      drops(SRNIC_DROP_OVER_BUDGET) - over ==
			      forged - (eng->held - held0),
	      "%llu forged last packets: %u held, %llu dropped over budget",
	      (unsigned long long)forged, eng->held - held0,
	      (unsigned long long)(drops(SRNIC_DROP_OVER_BUDGET) - over));
	CHECK(in_use <= eng->held_max + 64,
	      "%u of the pool's buffers in use after the flood", in_use);
	/* the QP beside them: a message of one packet, one of three */
	qp = qp_new(9);
	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key,
		(uintptr_t)dst + LEN, msg, STRIDE, 0);
	memset(msg, 0x3c, LEN);
	for (m = 0; m < 3; m++)
		deliver(qp, SRNIC_OP_WRITE, 0, 101, 2, 0, key, (uintptr_t)dst,
			msg, LEN, m);
	CHECK(qp->rcv.exp_msn == 102 && !memcmp(dst, msg, LEN) &&
		      dst[LEN] == 0x6b && dst[LEN + STRIDE - 1] == 0x6b,
	      "the QP beside the flood: exp_msn %u, bytes %s",
	      qp->rcv.exp_msn, !memcmp(dst, msg, LEN) ? "right" : "wrong");
	srnic_engine_destroy_qp(eng, qp);
	for (q = 0; q < NQP; q++)
		srnic_engine_destroy_qp(eng, qps[q]);
	while (drain_wire(out, 32))
		;
	CHECK(eng->held == held0, "%u held after the QPs went, not %u",
	      eng->held, held0);
	eng->held_max = 0;
	free(dst);
	free(msg);
}

/* A last packet held SRNIC_HELD_AGE_MS is given back (responder/held.c):
 * its buffer, and its place among the message's packets, so that when it
 * comes again after the rest it lands; one held less long stays. */
static void test_held_age(void)
{
	enum { LEN = 3 * STRIDE };
	uint8_t *dst = calloc(1, LEN), *msg = malloc(LEN);
	struct srnic_qp *qp = qp_new(9);
	uint64_t over = drops(SRNIC_DROP_OVER_BUDGET),
		 age = eng->tsc_per_us * 1000 * SRNIC_HELD_AGE_MS, t;
	struct srnic_rmsg *s = &qp->rcv.rmsg[100 % SRNIC_WINDOW];
	uint32_t held0 = eng->held, key, i;
	struct srnic_pkt out[32];

	for (i = 0; i < LEN; i++)
		msg[i] = (uint8_t)(i * 7 + 3);
	key = srnic_mem_register(&eng->mem, (uintptr_t)dst, LEN,
				 SRNIC_ACCESS_LOCAL_WRITE |
					 SRNIC_ACCESS_REMOTE_WRITE, 9);
	CHECK(deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key, (uintptr_t)dst,
		      msg, LEN, 2) && qp->rcv.nheld == 1 && qp->on_timer,
	      "the last packet, first, is held (and the QP timed)");
	t = s->held_tsc;
	srnic_responder_held_age(eng, qp, t + age - 1);
	CHECK(s->held && eng->held == held0 + 1, "given back before its time");
	qp->rcv.held_look_tsc = 0;	/* (it looks every eighth of the age) */
	srnic_responder_held_age(eng, qp, t + age);
	CHECK(!s->held && qp->rcv.nheld == 0 && eng->held == held0 &&
		      drops(SRNIC_DROP_OVER_BUDGET) == over + 1,
	      "held %s after %u ms (nheld %u)", s->held ? "still" : "no more",
	      SRNIC_HELD_AGE_MS, qp->rcv.nheld);
	for (i = 0; i < 2; i++)
		deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key, (uintptr_t)dst,
			msg, LEN, i);
	CHECK(qp->rcv.exp_msn == 100, "the message done without its last packet");
	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key, (uintptr_t)dst, msg,
		LEN, 2);
	CHECK(qp->rcv.exp_msn == 101 && !memcmp(dst, msg, LEN),
	      "the last packet, sent again, did not land the message whole");
	while (drain_wire(out, 32))
		;
	srnic_engine_destroy_qp(eng, qp);
	free(dst);
	free(msg);
}

/* A receive poll that takes a full burst (frames may still wait) begins
 * a backlog, which keeps its start while polls go on finding one; after a
 * gap between polls longer than the shortest UC give-up time (the process
 * off its core), it begins anew: the UC timer counts from there.  Such a
 * gap before a poll or while its frames are handled is time away. */
static void test_rx_pause(void)
{
	uint16_t port = eng->node->port[0].port_id;
	struct rte_mbuf *ms[SRNIC_BURST];
	uint64_t gap = eng->tsc_per_us * SRNIC_UC_GIVE_UP_US * 2;
	uint64_t first, away, node_away;
	unsigned b, i;

	/* (a whole receive poll reads the node's loopback ring too) */
	if (!eng->node->loop)
		eng->node->loop = rte_ring_create("loop", 64, 0, RING_F_SC_DEQ);
	if (!eng->node->loop)
		abort();
	for (b = 0; b < 5; b++) {
		for (i = 0; i < SRNIC_BURST; i++) {
			ms[i] = rte_pktmbuf_alloc(eng->node->pool);
			if (!ms[i] || !rte_pktmbuf_append(ms[i], 64))
				abort();
			memset(rte_pktmbuf_mtod(ms[i], void *), 0, 64);
		}
		if (rte_eth_tx_burst(port, 0, ms, SRNIC_BURST) != SRNIC_BURST)
			abort();
	}
	eng->rx_backlog = false;
	srnic_rx_ports(eng);
	first = eng->rx_backlog_since;
	CHECK(eng->rx_backlog && first, "a full burst began no backlog");
	srnic_rx_ports(eng);
	CHECK(eng->rx_backlog && eng->rx_backlog_since == first,
	      "a backlog that went on began anew");
	eng->rx_polled_at -= gap;
	srnic_rx_ports(eng);
	CHECK(eng->rx_backlog && eng->rx_backlog_since > first,
	      "a backlog found after a gap of twice the give-up time kept "
	      "its start from before the gap");
	/* The poll reads the clock itself: a process taken off its core
	 * after its iteration's first read finds the gap all the same. */
	away = eng->away_tsc;
	eng->rx_polled_at = srnic_now() - gap;
	eng->now = eng->rx_polled_at;	/* (the iteration's first read) */
	srnic_rx_ports(eng);
	CHECK(eng->away_tsc - away >= gap,
	      "a gap before the poll, after the iteration read its clock, "
	      "was not time away (%llu of %llu cycles)",
	      (unsigned long long)(eng->away_tsc - away),
	      (unsigned long long)gap);
	/* ... and so is a long while handling a burst (UC stalls begun by
	 * its packets count from the poll), the backlog begun anew. */
	CHECK(eng->rx_backlog, "no backlog left to look at");
	away = eng->away_tsc;
	first = eng->rx_backlog_since;
	eng->rx_polled_at -= gap;
	srnic_rx_handled(eng);
	CHECK(eng->away_tsc - away >= gap && eng->rx_backlog_since > first,
	      "a long while handling frames was not time away (%llu of %llu "
	      "cycles), or the backlog kept its start from before it",
	      (unsigned long long)(eng->away_tsc - away),
	      (unsigned long long)gap);
	away = eng->away_tsc;
	srnic_rx_handled(eng);
	CHECK(eng->away_tsc == away, "a short while handling was time away");
	/* The node's ports unpolled for a while (a holder of the port token
	 * off its core): the next poll counts the gap for the node. */
	node_away = eng->node->ports_away;
	eng->node->ports_polled = srnic_now() - gap;
	srnic_rx_ports(eng);
	CHECK(eng->node->ports_away - node_away >= gap,
	      "a gap between polls of the ports was not the node's time away");
	CHECK(eng->node->ports_polled > eng->now,
	      "the ports' last poll is timed by the clock before the port "
	      "token was taken, not after");
	while (srnic_rx_ports(eng))
		;
	eng->rx_backlog = false;
	/* (the UC tests time stalls with made-up clocks: not to be taken for
	 * ports gone unpolled) */
	eng->node->ports_polled = 0;
}

/* A process that srnicd found halted (rx_halted: none of its threads able
 * to run while its frames waited) gets no more than SRNIC_RX_STALL_FRAMES
 * of the frames other pollers pass it; one that only waits for a core, or
 * that looked at its ring again, gets its whole ring. */
static void test_stalled_ring(void)
{
	struct srnic_proc *p = &eng->node->proc[1];
	uint64_t stale = eng->tsc_per_us * 1000 * (SRNIC_RX_STALL_MS + 50);
	unsigned i, queued = 0;
	void *m;

	p->rx = rte_ring_create("stall_rx", 1024, 0,
				RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!p->rx)
		abort();
	p->live = 1;
	p->aside = 1;	/* (nobody to wake) */
	p->rx_taken_at = srnic_now() - stale;
	p->rx_halted = 1;
	for (i = 0; i < SRNIC_RX_STALL_FRAMES + 100; i++) {
		struct rte_mbuf *f = rte_pktmbuf_alloc(eng->node->pool);

		if (!f)
			abort();
		srnic_procs_queue(eng, 1u << 1, f);
		rte_pktmbuf_free(f);
	}
	queued = rte_ring_count(p->rx);
	CHECK(queued == SRNIC_RX_STALL_FRAMES && p->rx_stalled == 100,
	      "a process that stopped taking frames is given %u (%llu refused)",
	      queued, (unsigned long long)p->rx_stalled);
	p->rx_halted = 0;	/* (its look is still old: off its core) */
	for (i = 0; i < 100; i++) {
		struct rte_mbuf *f = rte_pktmbuf_alloc(eng->node->pool);

		if (!f)
			abort();
		srnic_procs_queue(eng, 1u << 1, f);
		rte_pktmbuf_free(f);
	}
	CHECK(rte_ring_count(p->rx) == SRNIC_RX_STALL_FRAMES + 100,
	      "one that takes them is given more (%u)",
	      rte_ring_count(p->rx));
	while (rte_ring_sc_dequeue(p->rx, &m) == 0)
		rte_pktmbuf_free(m);
	rte_ring_free(p->rx);
	memset(p, 0, sizeof(*p));
}

/* A one-packet WRITE of msg (MSN 100) to QP number dst_qpn, put on the
 * wire for the receive poll to take. */
static void wire_write(uint32_t dst_qpn, uint32_t key, const uint8_t *dst,
		       const uint8_t *msg, uint32_t len)
{
	struct srnic_pkt pkt = {.opcode = SRNIC_OP_WRITE, .flags = SRNIC_F_LAST,
				.dst_qpn = dst_qpn, .src_qpn = PEER_QPN,
				.src_inc = PEER_INC, .dst_inc = eng->node->inc,
				.msn = 100, .txid = 1, .rkey = key,
				.va = (uintptr_t)dst, .msg_len = len,
				.pkt_len = len, .stride_shift = STRIDE_SHIFT};
	struct rte_mbuf *m;
	uint8_t *payload;

	m = srnic_pkt_alloc(eng, &pkt, eng->node->port[0].mac, 0, &payload);
	if (!m)
		abort();
	memcpy(payload, msg, len);
	if (rte_eth_tx_burst(eng->node->port[0].port_id, 0, &m, 1) != 1)
		abort();
}

/* Seed 002's trickle traffic (l.422-434): a QP table entry taken again
 * gives its new QP the next generation, so a late packet for the QP
 * before names a number no QP has: dropped as stale_qp, placing nothing,
 * while the new QP's own packet lands.  (Before generations, it reached
 * the new QP, which took it from the same peer QP.) */
static void test_stale_qp(void)
{
	enum { LEN = 64 };
	uint8_t *dst = calloc(1, LEN), msg[LEN];
	struct srnic_qp *qp = qp_new(1);
	uint32_t old = qp->q.qpn, key;
	uint64_t stale = drops(SRNIC_DROP_STALE_QP);
	struct srnic_pkt out[8];

	memset(msg, 0x5a, LEN);
	key = srnic_mem_register(&eng->mem, (uintptr_t)dst, LEN,
				 SRNIC_ACCESS_LOCAL_WRITE |
					 SRNIC_ACCESS_REMOTE_WRITE, 1);
	srnic_engine_destroy_qp(eng, qp);
	eng->qpn_next = srnic_qpn_index(old);
	qp = qp_new(1);
	CHECK(srnic_qpn_index(qp->q.qpn) == srnic_qpn_index(old) &&
		      qp->q.qpn != old && qp->q.qpn < (1u << 24),
	      "the entry's new QP is number %#x, its last %#x", qp->q.qpn,
	      old);
	CHECK(srnic_qp_lookup(eng, old) == NULL &&
		      srnic_qp_lookup(eng, qp->q.qpn) == qp,
	      "a number finds a QP of another generation");
	wire_write(old, key, dst, msg, LEN);
	srnic_rx_ports(eng);
	CHECK(drops(SRNIC_DROP_STALE_QP) == stale + 1 && dst[0] == 0 &&
		      qp->rcv.exp_msn == 100,
	      "a packet for the entry's last QP was taken (stale_qp %llu, "
	      "exp_msn %u)",
	      (unsigned long long)(drops(SRNIC_DROP_STALE_QP) - stale),
	      qp->rcv.exp_msn);
	wire_write(qp->q.qpn, key, dst, msg, LEN);
	srnic_rx_ports(eng);
	CHECK(!memcmp(dst, msg, LEN) && qp->rcv.exp_msn == 101,
	      "the new QP's own WRITE did not land");
	while (drain_wire(out, 8))
		;
	srnic_engine_destroy_qp(eng, qp);
	srnic_mem_invalidate(&eng->mem, key);
	srnic_mem_release(&eng->mem, key);
	free(dst);
}

/* Take qp off the active list (the loop would, on its turn). */
static void unschedule(struct srnic_qp *qp)
{
	srnic_qp_lists_remove(eng, qp);
	qp->on_active = 0;
}

/* Conditional queues (sched/condq.c): a conditional WQE parks its QP
 * until the count holds, a failure does not count as a success, the
 * count that makes it hold wakes the QP at once (no timer), set moves
 * the count, and a queue destroyed under a parked QP fails it. */
static void test_condq(void)
{
	struct srnic_qp *qp = qp_new(1);
	struct srnic_swqe w = {.flags = SRNIC_WR_COND};
	struct srnic_condq_state *q = &eng->condq[3];
	unsigned i;

	memset(q, 0, sizeof(*q));
	q->id = 1u << SRNIC_CONDQ_INDEX_BITS | 3;
	w.cond.q = q->id;
	w.cond.op = SRNIC_CONDQ_COUNT_GE;
	w.cond.value = 4;
	unschedule(qp);
	CHECK(!srnic_condq_ready(eng, qp, &w) && q->waiters == qp &&
		      qp->cond_wait == q->id,
	      "a condition not met yet did not park its QP");
	for (i = 0; i < 3; i++)
		srnic_condq_count(eng, q->id, true);
	srnic_condq_count(eng, q->id, false);
	CHECK(!qp->on_active && q->count == 3 && q->failed == 1,
	      "woken at 3 successes and a failure of 4 (count %llu)",
	      (unsigned long long)q->count);
	srnic_condq_count(eng, q->id, true);
	CHECK(qp->on_active && !qp->cond_wait && !q->waiters,
	      "the fourth success did not wake the QP");
	CHECK(srnic_condq_ready(eng, qp, &w),
	      "a condition met did not let its WQE start");
	/* a count for a queue gone since (another id in its entry) */
	srnic_condq_count(eng, q->id + (1u << SRNIC_CONDQ_INDEX_BITS), true);
	CHECK(q->count == 4, "a stale id counted into its entry's queue");
	/* set: a new round */
	unschedule(qp);
	srnic_condq_store(eng, q->id, 0);
	CHECK(!srnic_condq_ready(eng, qp, &w) && q->waiters == qp,
	      "after set to 0 the condition held");
	srnic_condq_store(eng, q->id, 9);
	CHECK(qp->on_active && !q->waiters, "set to 9 did not wake the QP");
	/* parked on one queue, its next conditional WQE on another (the
	 * first WQE flushed, the QP back in RTS without a reset) */
	unschedule(qp);
	srnic_condq_store(eng, q->id, 0);
	srnic_condq_ready(eng, qp, &w);
	{
		struct srnic_condq_state *q2 = &eng->condq[4];
		struct srnic_swqe w2 = w;

		memset(q2, 0, sizeof(*q2));
		q2->id = 1u << SRNIC_CONDQ_INDEX_BITS | 4;
		w2.cond.q = q2->id;
		srnic_condq_ready(eng, qp, &w2);
		CHECK(!q->waiters && q2->waiters == qp && qp->cond_wait == q2->id,
		      "a QP parked on one queue was not moved to the other");
		srnic_condq_forget_qp(eng, qp);
		q2->id = 0;
	}
	/* destroyed under a parked QP: the QP fails */
	unschedule(qp);
	srnic_condq_store(eng, q->id, 0);
	srnic_condq_ready(eng, qp, &w);
	srnic_condq_retire(eng, q->id);
	CHECK(qp->q.state == SRNIC_QPS_ERR && qp->on_active && !q->id &&
		      !qp->cond_wait,
	      "a queue destroyed under a waiting QP left it %s",
	      qp->q.state == SRNIC_QPS_ERR ? "off its turn" : "in its state");
	srnic_engine_destroy_qp(eng, qp);
}

/* A FIFO's ring of data bytes in pd, registered with access (and
 * SRNIC_ACCESS_FIFO): its key in *key. */
static struct srnic_fifo_ring *fifo_ring(uint32_t pd, uint32_t access,
					 uint32_t data, uint32_t *key)
{
	struct srnic_fifo_ring *r = calloc(1, sizeof(*r) + data);

	*key = srnic_mem_register(&eng->mem, (uintptr_t)r, sizeof(*r) + data,
				  access | SRNIC_ACCESS_FIFO, pd);
	return r;
}

/* Half-RDMA (responder/fifo.c): WRITE packets to a FIFO's key become
 * records in its ring, whatever their va, each once; one the ring has no
 * room for is dropped (fifo_full), not landed, and lands when its
 * requester sends it again after the program made room; a record that
 * would not fit before the ring's end leaves a pad and starts at 0; the
 * FIFO's key is no local key. */
static void test_fifo(void)
{
	enum { NPKT = 3, LEN = NPKT * STRIDE, REC = 32 + STRIDE,
	       DATA = 2 * REC + 512 };
	uint32_t key, i;
	struct srnic_fifo_ring *r =
		fifo_ring(1, SRNIC_ACCESS_REMOTE_WRITE, DATA, &key);
	uint8_t *msg = malloc(LEN);
	struct srnic_qp *qp = qp_new(1);
	const struct srnic_fifo_hdr *h;
	uint64_t full = drops(SRNIC_DROP_FIFO_FULL);

	for (i = 0; i < LEN; i++)
		msg[i] = (uint8_t)(i * 13 + 1);
	CHECK(srnic_mem_check(&eng->mem, key, 1, (uintptr_t)r, 8,
			      SRNIC_ACCESS_LOCAL_WRITE) != SRNIC_MEM_OK,
	      "a FIFO's key passed as a local key");
	/* packets 2 and 0 land (any va: 1 << 40 is no address here) */
	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key, 1ull << 40, msg, LEN, 2);
	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key, 1ull << 40, msg, LEN, 0);
	h = (const struct srnic_fifo_hdr *)r->data;
	CHECK(r->records == 2 && r->prod == 2 * REC && h->valid == SRNIC_FIFO_VALID &&
		      h->msg_off == 2 * STRIDE && h->pkt_len == STRIDE &&
		      h->src_qp == PEER_QPN && h->qp_num == qp->q.qpn &&
		      h->msn == 100 && h->msg_len == LEN &&
		      !memcmp(h + 1, msg + 2 * STRIDE, STRIDE),
	      "the first record: %llu records, offset %llu",
	      (unsigned long long)r->records, (unsigned long long)h->msg_off);
	/* packet 1: no room (512 bytes left) */
	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key, 1ull << 40, msg, LEN, 1);
	CHECK(drops(SRNIC_DROP_FIFO_FULL) == full + 1 && r->full == 1 &&
		      r->records == 2 && qp->rcv.exp_msn == 100,
	      "a packet with the ring full: %llu dropped, message %s",
	      (unsigned long long)(drops(SRNIC_DROP_FIFO_FULL) - full),
	      qp->rcv.exp_msn == 100 ? "waiting" : "done");
	/* ... and the requester told as a receiver not ready is (it waits
	 * and sends again, spending no transport retry) */
	CHECK(qp->rcv.ack_syndrome == SRNIC_NAK_RNR &&
		      qp->rcv.ack_nak_msn == 100 && qp->rcv.ack_rnr_fifo &&
		      qp->rcv.fifo_rnr_streak == 1,
	      "a packet with the ring full: syndrome %u, not an RNR NAK",
	      qp->rcv.ack_syndrome);
	/* ... once an attempt: the NAK gone, another of its packets meets
	 * the full ring unsaid */
	qp->rcv.ack_syndrome = SRNIC_ACK_OK;
	qp->rcv.ack_rnr_fifo = 0;
	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key, 1ull << 40, msg, LEN, 1);
	CHECK(qp->rcv.ack_syndrome == SRNIC_ACK_OK &&
		      qp->rcv.fifo_rnr_streak == 1,
	      "a second RNR NAK for one attempt (streak %u)",
	      qp->rcv.fifo_rnr_streak);
	/* ... asking for the QP's RNR wait, then twice it for each NAK in a
	 * row, up to 15 ms (code 21), which a longer one gets at once */
	qp->at.min_rnr_timer = 12;
	CHECK(resp_rnr_timer(qp) == 12, "the first RNR NAK asks for %u, not 12",
	      resp_rnr_timer(qp));
	qp->rcv.fifo_rnr_streak = 3;
	CHECK(resp_rnr_timer(qp) == 16, "the third asks for %u, not 16",
	      resp_rnr_timer(qp));
	qp->rcv.fifo_rnr_streak = 200;
	CHECK(resp_rnr_timer(qp) == 21, "the 200th asks for %u, not 21",
	      resp_rnr_timer(qp));
	qp->at.min_rnr_timer = 0;	/* (655 ms) */
	CHECK(resp_rnr_timer(qp) == 21, "min_rnr_timer 0: %u, not 21",
	      resp_rnr_timer(qp));
	qp->at.min_rnr_timer = 12;
	qp->rcv.fifo_rnr_streak = 1;
	/* the program takes both records; packet 1 again: a pad, then 0 */
	r->cons = 2 * REC;
	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key, 1ull << 40, msg, LEN, 1);
	h = (const struct srnic_fifo_hdr *)r->data;
	CHECK(r->records == 3 && qp->rcv.exp_msn == 101 &&
		      qp->rcv.fifo_rnr_streak == 0 &&
		      *(const uint32_t *)&r->data[2 * REC] == SRNIC_FIFO_PAD &&
		      h->valid == SRNIC_FIFO_VALID && h->msg_off == STRIDE &&
		      r->prod == 3 * REC + 512 &&
		      !memcmp(h + 1, msg + STRIDE, STRIDE),
	      "after the wrap: %llu records, prod %llu",
	      (unsigned long long)r->records, (unsigned long long)r->prod);
	/* a copy of a packet landed before: no record */
	deliver(qp, SRNIC_OP_WRITE, 0, 100, 1, 0, key, 1ull << 40, msg, LEN, 0);
	CHECK(r->records == 3, "a copy was appended");
	/* a QP made new (a new connection) starts its waits anew */
	qp->rcv.fifo_rnr_streak = 5;
	srnic_responder_reset(eng, qp);
	CHECK(qp->rcv.fifo_rnr_streak == 0 && !qp->rcv.fifo_naked,
	      "the RNR streak outlived the connection");
	srnic_engine_destroy_qp(eng, qp);
	srnic_mem_invalidate(&eng->mem, key);
	srnic_mem_release(&eng->mem, key);
	free(r);
	free(msg);
}

/* A READ's answer packet for the READ in send queue slot 0 of qp. */
static void read_answer_pkt(struct srnic_qp *qp, const uint8_t *data,
			    uint32_t len, uint32_t idx)
{
	struct srnic_pkt pkt = {0};
	uint8_t frame[SRNIC_MAX_HLEN + STRIDE], *p = frame;

	pkt.opcode = SRNIC_OP_READ_RESP;
	pkt.dst_qpn = qp->q.qpn;
	pkt.src_qpn = PEER_QPN;
	pkt.msn = qp->run[0].msn;
	pkt.txid = qp->run[0].txid;
	pkt.msg_off = idx * STRIDE;
	pkt.msg_len = len;
	pkt.stride_shift = STRIDE_SHIFT;
	pkt.pkt_len = len - pkt.msg_off < STRIDE ? len - pkt.msg_off : STRIDE;
	p += srnic_wire_encode(frame, peer_mac, peer_mac, &pkt);
	memcpy(p, data + pkt.msg_off, pkt.pkt_len);
	srnic_wire_decode(frame, p - frame + pkt.pkt_len, &pkt);
	srnic_completer_read_resp(eng, qp, &pkt, NULL);
}

/* Half-RDMA's READ into a FIFO (SRNIC_WR_FIFO): each packet of the answer
 * becomes a record (kind READ, msn the tag), a packet the full ring has
 * no room for is not marked and spends no retry, a copy leaves no
 * record, and the READ completes once every packet is in; a FIFO gone
 * meanwhile fails the READ. */
static void test_fifo_read(void)
{
	enum { NPKT = 3, LEN = NPKT * STRIDE, REC = 32 + STRIDE,
	       DATA = 2 * REC + 512 };
	uint32_t key, i;
	struct srnic_fifo_ring *r =
		fifo_ring(15, SRNIC_ACCESS_REMOTE_WRITE, DATA, &key);
	uint8_t *data = malloc(LEN);
	struct srnic_qp *qp = qp_new(15);
	const struct srnic_fifo_hdr *h;
	uint64_t full = drops(SRNIC_DROP_FIFO_FULL);
	struct srnic_cqe c[2];

	for (i = 0; i < LEN; i++)
		data[i] = (uint8_t)(i * 7 + 3);
	post_read(qp, 88, NULL, LEN, key);
	qp->q.sq[0].flags |= SRNIC_WR_FIFO;
	qp->q.sq[0].imm = 0xfeed;
	srnic_requester_run(eng, qp, 8);
	CHECK(qp->snd.sq_next == 1 && qp->run[0].state == SWQE_WAITING,
	      "a READ into a FIFO sent");
	drain_wire(NULL, 0);
	read_answer_pkt(qp, data, LEN, 2);
	read_answer_pkt(qp, data, LEN, 0);
	h = (const struct srnic_fifo_hdr *)r->data;
	CHECK(r->records == 2 && h->valid == SRNIC_FIFO_VALID_READ &&
		      h->msn == 0xfeed && h->msg_off == 2 * STRIDE &&
		      h->pkt_len == STRIDE && h->msg_len == LEN &&
		      h->qp_num == qp->q.qpn && h->src_qp == PEER_QPN &&
		      !memcmp(h + 1, data + 2 * STRIDE, STRIDE),
	      "READ answer records: %llu, the first's kind %#x msn %#x",
	      (unsigned long long)r->records, h->valid, h->msn);
	qp->run[0].retries = 3;
	read_answer_pkt(qp, data, LEN, 1);	/* no room */
	CHECK(drops(SRNIC_DROP_FIFO_FULL) == full + 1 && r->records == 2 &&
		      !srnic_track_test(&qp->run[0].rd, 1) &&
		      qp->run[0].retries == 0 && srnic_cq_poll(cq, c, 2) == 0,
	      "a READ answer packet with the ring full: dropped, unmarked, "
	      "retries %u", qp->run[0].retries);
	read_answer_pkt(qp, data, LEN, 0);	/* a copy */
	CHECK(r->records == 2, "a copy of a READ answer packet appended");
	r->cons = 2 * REC;			/* the program took both */
	read_answer_pkt(qp, data, LEN, 1);
	h = (const struct srnic_fifo_hdr *)r->data;
	CHECK(r->records == 3 && h->valid == SRNIC_FIFO_VALID_READ &&
		      h->msg_off == STRIDE && !memcmp(h + 1, data + STRIDE, STRIDE),
	      "the dropped packet, asked again, appended");
	CHECK(srnic_cq_poll(cq, c, 2) == 1 && c[0].wr_id == 88 &&
		      c[0].status == SRNIC_WC_SUCCESS &&
		      c[0].opcode == SRNIC_WC_RDMA_READ,
	      "the READ into a FIFO completed");
	srnic_engine_destroy_qp(eng, qp);

	/* the FIFO destroyed while the READ runs: it fails */
	qp = qp_new(15);
	post_read(qp, 89, NULL, LEN, key);
	qp->q.sq[0].flags |= SRNIC_WR_FIFO;
	srnic_requester_run(eng, qp, 8);
	drain_wire(NULL, 0);
	srnic_mem_invalidate(&eng->mem, key);
	read_answer_pkt(qp, data, LEN, 0);
	CHECK(srnic_cq_poll(cq, c, 2) == 1 && c[0].wr_id == 89 &&
		      c[0].status == SRNIC_WC_LOC_PROT_ERR,
	      "a READ into a FIFO gone: status %u", c[0].status);
	srnic_engine_destroy_qp(eng, qp);
	srnic_mem_release(&eng->mem, key);
	free(r);
	free(data);
}

/* The half-receive READ: a READ of a FIFO that takes READs is a request
 * record for its program (the READ's msn, length, what it asks for),
 * asked again for a part as a record again; the program's answer goes out
 * as READ answer packets of that attempt, from its iovec; a FIFO that
 * takes no READs refuses them. */
static void test_fifo_answer(void)
{
	enum { LEN = 3 * STRIDE + 100, DATA = 4096 };
	uint32_t key, i, plain;
	struct srnic_fifo_ring *r = fifo_ring(
		16, SRNIC_ACCESS_REMOTE_WRITE | SRNIC_ACCESS_REMOTE_READ, DATA,
		&key);
	uint8_t *data = malloc(LEN);
	struct srnic_qp *qp = qp_new(16);
	const struct srnic_fifo_hdr *h;
	const struct srnic_fifo_req *rq;
	struct srnic_pkt req, out[8];
	struct iovec iov[2];
	struct srnic_fifo_answer a;
	unsigned n, naks, answers;
	bool ok = true;

	for (i = 0; i < LEN; i++)
		data[i] = (uint8_t)(i * 11 + 5);
	memset(&req, 0, sizeof(req));
	req.opcode = SRNIC_OP_READ_REQ;
	req.dst_qpn = qp->q.qpn;
	req.src_qpn = PEER_QPN;
	req.src_inc = PEER_INC;
	req.dst_inc = eng->node->inc;
	req.msn = 100;
	req.txid = 7;
	req.rkey = key;
	req.va = 0x4000;	/* no address here: the program's word */
	req.msg_len = LEN;
	req.stride_shift = STRIDE_SHIFT;
	req.flags = SRNIC_F_LAST;
	ask_read(qp, &req, &naks, &answers);
	h = (const struct srnic_fifo_hdr *)r->data;
	rq = (const struct srnic_fifo_req *)(h + 1);
	CHECK(naks == 0 && answers == 0 && qp->rcv.exp_msn == 101 &&
		      r->records == 1 && h->valid == SRNIC_FIFO_VALID_READ_REQ &&
		      h->msn == 100 && h->msg_len == LEN && h->msg_off == 0 &&
		      h->qp_num == qp->q.qpn && h->src_qp == PEER_QPN &&
		      rq->va == 0x4000 && rq->length == LEN && rq->txid == 7 &&
		      rq->shift == STRIDE_SHIFT,
	      "a READ request record: %llu records, %u NAKs, %u answers",
	      (unsigned long long)r->records, naks, answers);
	/* a copy of the request (a probe) while the program has it: no
	 * second record, and the reader told it is not ready (an RNR NAK
	 * of that attempt: it waits on, completer.c's read_waits) */
	srnic_responder_rx(eng, qp, &req, NULL);
	CHECK(qp->rcv.ack_syndrome == SRNIC_NAK_RNR &&
		      qp->rcv.ack_nak_msn == 100 && qp->rcv.ack_nak_txid == 7,
	      "a copy of an unanswered request: syndrome %u, not an RNR NAK "
	      "of READ 100 attempt 7", qp->rcv.ack_syndrome);
	answer_reads(qp, 8, &naks, &answers);
	CHECK(r->records == 1 && naks == 0 && answers == 0,
	      "a copy of an unanswered request asked the program again");
	/* the program's answer, from two pieces */
	iov[0] = (struct iovec){data, 1000};
	iov[1] = (struct iovec){data + 1000, LEN - 1000};
	a = (struct srnic_fifo_answer){.key = key, .src_qp = PEER_QPN,
				       .msn = 100, .txid = 7, .msg_len = LEN,
				       .msg_off = 0, .len = LEN,
				       .shift = STRIDE_SHIFT, .iov = iov,
				       .iovcnt = 2};
	CHECK(srnic_responder_fifo_answer(eng, qp->q.qpn, &a) == LEN,
	      "the program's answer sent");
	n = drain_wire(out, 8);
	for (i = 0; i < n; i++)
		ok &= out[i].opcode == SRNIC_OP_READ_RESP && out[i].msn == 100 &&
		      out[i].txid == 7 && out[i].msg_off == i * STRIDE &&
		      out[i].msg_len == LEN &&
		      !memcmp(out[i].payload, data + i * STRIDE, out[i].pkt_len) &&
		      !!(out[i].flags & SRNIC_F_LAST) == (i == n - 1);
	CHECK(n == 4 && ok && out[3].pkt_len == 100,
	      "the answer's packets: %u, their bytes %s", n, ok ? "right" : "wrong");
	/* the same request once answered (its answer lost): asked again */
	ask_read(qp, &req, &naks, &answers);
	CHECK(r->records == 2, "a request answered and asked again: %llu records",
	      (unsigned long long)r->records);
	/* a part asked again under a new attempt: a record for that part */
	req.msn = 100;
	req.txid = 8;
	req.msg_off = STRIDE;
	req.read_len = STRIDE;
	ask_read(qp, &req, &naks, &answers);
	h = (const struct srnic_fifo_hdr *)&r->data[r->prod - srnic_fifo_rec_len(sizeof(*rq))];
	rq = (const struct srnic_fifo_req *)(h + 1);
	CHECK(r->records == 3 && naks == 0 && h->valid == SRNIC_FIFO_VALID_READ_REQ &&
		      h->msg_off == STRIDE && rq->length == STRIDE && rq->txid == 8,
	      "a part asked again: %llu records, offset %llu, length %u",
	      (unsigned long long)r->records, (unsigned long long)h->msg_off,
	      rq->length);
	/* an answer the program spoiled, or for a QP of another peer */
	a.shift = 40;
	CHECK(srnic_responder_fifo_answer(eng, qp->q.qpn, &a) == -EINVAL,
	      "an answer with a packet size of 2^40 refused");
	a.shift = STRIDE_SHIFT;
	a.msg_off = 8;
	a.len = STRIDE;
	CHECK(srnic_responder_fifo_answer(eng, qp->q.qpn, &a) == -EINVAL,
	      "an answer from the middle of a packet refused");
	a.msg_off = 0;
	a.len = LEN;
	a.key = key + 1;
	CHECK(srnic_responder_fifo_answer(eng, qp->q.qpn, &a) == -EINVAL,
	      "an answer through no FIFO of the QP's PD refused");
	a.key = key;
	a.src_qp = PEER_QPN + 1;
	CHECK(srnic_responder_fifo_answer(eng, qp->q.qpn, &a) == -ENOENT,
	      "an answer for another peer's QP refused");
	a.src_qp = PEER_QPN;
	/* a QP that answers READs but sends nothing yet (RTR) answers */
	qp->q.state = SRNIC_QPS_RTR;
	n = (unsigned)srnic_responder_fifo_answer(eng, qp->q.qpn, &a);
	qp->q.state = SRNIC_QPS_RTS;
	CHECK(n == LEN && drain_wire(out, 8) == 4, "an answer from RTR: %u", n);
	/* a READ of no bytes, its empty answer lost: asked again */
	req.msn = 99;
	req.txid = 3;
	req.msg_len = 0;
	req.msg_off = 0;
	req.read_len = 0;
	ask_read(qp, &req, &naks, &answers);
	h = (const struct srnic_fifo_hdr *)&r->data[r->prod - srnic_fifo_rec_len(sizeof(*rq))];
	CHECK(r->records == 4 && h->msn == 99 && h->msg_len == 0,
	      "a READ of no bytes asked again: %llu records",
	      (unsigned long long)r->records);
	a = (struct srnic_fifo_answer){.key = key, .src_qp = PEER_QPN,
				       .msn = 99, .txid = 3,
				       .shift = STRIDE_SHIFT};
	CHECK(srnic_responder_fifo_answer(eng, qp->q.qpn, &a) == 0 &&
		      drain_wire(out, 8) == 1 && out[0].pkt_len == 0 &&
		      (out[0].flags & SRNIC_F_LAST),
	      "a READ of no bytes answered by one empty packet");
	req.msg_len = LEN;
	drain_wire(out, 8);
	/* a FIFO that takes no READs: REM_ACCESS (a NAK) */
	plain = srnic_mem_register(&eng->mem, (uintptr_t)r, sizeof(*r) + DATA,
				   SRNIC_ACCESS_REMOTE_WRITE | SRNIC_ACCESS_FIFO,
				   16);
	req.msn = 101;
	req.txid = 9;
	req.rkey = plain;
	req.msg_off = 0;
	req.read_len = 0;
	ask_read(qp, &req, &naks, &answers);
	CHECK(naks == 1 && answers == 0 && r->records == 4,
	      "a READ of a FIFO that takes none: %u NAKs", naks);
	srnic_engine_destroy_qp(eng, qp);
	srnic_mem_invalidate(&eng->mem, key);
	srnic_mem_release(&eng->mem, key);
	srnic_mem_invalidate(&eng->mem, plain);
	srnic_mem_release(&eng->mem, plain);
	free(r);
	free(data);
}

/* A program moves a sending QP to error right after posting (rsockets'
 * close when its peer's half-close comes in then): the WRITE it posted
 * goes out once, as a NIC's queue would have carried it, the READ after
 * it does not, and both complete flushed. */
static void test_error_sends_posted(void)
{
	uint8_t *src = malloc(STRIDE);
	struct srnic_qp *qp = qp_new(17);
	struct srnic_qp_mod mod = {.mask = SRNIC_MOD_STATE,
				   .state = SRNIC_QPS_ERR};
	struct srnic_pkt out[8];
	struct srnic_cqe c[2];
	int n;

	memset(src, 0x5a, STRIDE);
	srnic_fc_reset(qp);	/* (as a QP that reached RTS has its credit) */
	post_write(qp, src, 100);
	qp->q.sq[0].wr_id = 91;
	qp->q.sq[0].flags = SRNIC_WR_SIGNALED;
	/* (then a READ, which must not go: its answer would be lost, and
	 * the program would find it flushed) */
	qp->q.sq[1] = qp->q.sq[0];
	qp->q.sq[1].opcode = SRNIC_WR_READ;
	qp->q.sq[1].wr_id = 92;
	qp->q.sq[1].rkey = 5;
	qp->q.sq_prod = 2;
	drain_wire(out, 8);
	CHECK(srnic_engine_modify_qp(eng, qp, &mod) == 0, "to ERR");
	n = (int)drain_wire(out, 8);
	CHECK(n == 1 && out[0].opcode == SRNIC_OP_WRITE &&
		      out[0].pkt_len == 100 && out[0].payload[0] == 0x5a,
	      "the WRITE posted before the move to ERR went out: %d frames", n);
	srnic_completer_flush_sq(eng, qp);	/* (the QP's next turn) */
	CHECK(srnic_cq_poll(cq, c, 2) == 2 && c[0].wr_id == 91 &&
		      c[0].status == SRNIC_WC_WR_FLUSH_ERR && c[1].wr_id == 92 &&
		      c[1].status == SRNIC_WC_WR_FLUSH_ERR,
	      "... and, with the READ behind it, completed flushed");
	srnic_engine_destroy_qp(eng, qp);
	free(src);
}

/* Seed 004's initiator-side checks (Fig. 6 S11-S13): a request under a
 * key the peer published is checked against its table before anything
 * goes: a WRITE to a region published for READ only, and a READ past its
 * end, fail at once (REM_ACCESS_ERR, counted, no frame); a READ inside
 * goes; a key the table does not hold goes as always. */
static void test_published_checks(void)
{
	uint8_t *buf = calloc(1, 4 * STRIDE);
	struct srnic_qp *qp;
	struct srnic_pkt out[8];
	struct srnic_cqe c[2];
	uint64_t denied = eng->st->tpt_denied;
	uint32_t key = srnic_mem_register(&eng->mem, (uintptr_t)buf, 4 * STRIDE,
					  SRNIC_ACCESS_LOCAL_WRITE, 18);
	struct {
		uint8_t op;
		uint32_t rkey;
		uint64_t va;
		uint32_t len;
		unsigned frames;	/* 0: refused here */
	} cases[] = {
		{SRNIC_WR_WRITE, 77, 0x10000, STRIDE, 0},
		{SRNIC_WR_READ, 77, 0x10000 + 3 * STRIDE, 2 * STRIDE, 0},
		{SRNIC_WR_ATOMIC_FAA, 77, 0x10000, 8, 0},
		{SRNIC_WR_READ, 77, 0x10000 + STRIDE, STRIDE, 1},
		{SRNIC_WR_WRITE, 78, 0x10000, STRIDE, 1},
		/* (no bytes: no memory touched, no key checked) */
		{SRNIC_WR_WRITE, 77, 0x90000, 0, 1},
	};
	unsigned i, n;

	peer.tpt.inc = PEER_INC;
	peer.tpt.n = 1;
	peer.tpt.e[0] = (struct srnic_tpt_entry){
		.name = 9, .rkey = 77, .addr = 0x10000, .length = 4 * STRIDE,
		.access = SRNIC_ACCESS_REMOTE_READ};
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct srnic_swqe *w;

		qp = qp_new(18);
		srnic_fc_reset(qp);
		w = &qp->q.sq[0];
		memset(w, 0, sizeof(*w));
		w->wr_id = 100 + i;
		w->opcode = cases[i].op;
		w->flags = SRNIC_WR_SIGNALED;
		w->length = cases[i].len;
		w->num_sge = 1;
		w->sge[0] = (struct srnic_sge){(uintptr_t)buf, cases[i].len, key};
		w->remote_addr = cases[i].va;
		w->rkey = cases[i].rkey;
		qp->q.sq_prod = 1;
		drain_wire(out, 8);
		srnic_requester_run(eng, qp, 8);
		n = drain_wire(out, 8);
		if (!cases[i].frames) {
			srnic_completer_complete(eng, qp);
			CHECK(n == 0 && srnic_cq_poll(cq, c, 2) == 1 &&
				      c[0].wr_id == 100 + i &&
				      c[0].status == SRNIC_WC_REM_ACCESS_ERR,
			      "case %u: refused by the table: %u frames", i, n);
		} else {
			CHECK(n == cases[i].frames, "case %u: %u frames", i, n);
		}
		srnic_engine_destroy_qp(eng, qp);
		while (srnic_cq_poll(cq, c, 2))
			;
	}
	CHECK(eng->st->tpt_denied == denied + 3, "tpt_denied %llu",
	      (unsigned long long)(eng->st->tpt_denied - denied));
	/* (a copy of the peer's process before: no word on its keys) */
	peer.tpt.inc = PEER_INC + 1;
	qp = qp_new(18);
	srnic_fc_reset(qp);
	qp->q.sq[0].opcode = SRNIC_WR_WRITE;
	qp->q.sq[0].rkey = 77;
	qp->q.sq[0].remote_addr = 0x10000;
	qp->q.sq[0].length = 8;
	qp->q.sq[0].num_sge = 1;
	qp->q.sq[0].sge[0] = (struct srnic_sge){(uintptr_t)buf, 8, key};
	qp->q.sq_prod = 1;
	drain_wire(out, 8);
	srnic_requester_run(eng, qp, 8);
	CHECK(drain_wire(out, 8) == 1, "a stale table's entry refused a WRITE");
	srnic_engine_destroy_qp(eng, qp);
	memset(&peer.tpt, 0, sizeof(peer.tpt));
	srnic_mem_release(&eng->mem, key);
	free(buf);
}

/* Steering: a QP number says its class (srnic_qpn_class: its generation's
 * low bits), and a class takes numbers only of its own, from any entry
 * (engine/objects.c, qpn_take). */
static void test_qpn_classes(void)
{
	struct srnic_qp *qp[3];
	uint32_t idx = 0;
	unsigned c, i;

	CHECK(srnic_qpn_class(4, 4u << 12 | 16) == 0 &&
		      srnic_qpn_class(4, 0xffcu << 12 | 0xeff) == 0,
	      "class 0's numbers");
	CHECK(srnic_qpn_class(4, 1u << 12 | 16) == 1 &&
		      srnic_qpn_class(4, 0xffdu << 12 | 0xeff) == 1 &&
		      srnic_qpn_class(4, 0x503u << 12 | 0x400) == 3,
	      "class 1's and 3's, of any entry");
	CHECK(srnic_qpn_class(4, SRNIC_SVC_QPN_BASE) == 0 &&
		      srnic_qpn_class(4, 1u << 12 | SRNIC_SVC_QPN_BASE) == 0 &&
		      srnic_qpn_class(4, SRNIC_QPN_MCAST) == 0,
	      "services and multicast: class 0");
	CHECK(srnic_qpn_class(2, 3u << 12 | 16) == 0 &&
		      srnic_qpn_class(1, 1u << 12 | 16) == 0,
	      "no class beyond the node's classes");
	CHECK(srnic_qpn_next_gen(0, 0) == 4 && srnic_qpn_next_gen(4, 0) == 8 &&
		      srnic_qpn_next_gen(4092, 0) == 4 &&
		      srnic_qpn_next_gen(4093, 1) == 1 &&
		      srnic_qpn_next_gen(5, 2) == 10,
	      "generations step by class, never 0, and wrap");
	eng->node->classes = 4;
	for (c = 0; c < 4; c++) {
		eng->cls = c;
		for (i = 0; i < 3; i++) {
			qp[i] = qp_new(1);
			if (!CHECK(qp[i], "class %u: QP %u", c, i))
				continue;
			CHECK(srnic_qpn_class(4, qp[i]->q.qpn) == c,
			      "class %u took QP number %#x", c, qp[i]->q.qpn);
		}
		/* (an entry the class before had: it may take it too) */
		if (c && qp[0])
			CHECK(srnic_qpn_index(qp[0]->q.qpn) == idx ||
				      idx == 0,
			      "class %u took entry %#x, not %#x", c,
			      srnic_qpn_index(qp[0]->q.qpn), idx);
		idx = qp[0] ? srnic_qpn_index(qp[0]->q.qpn) : 0;
		for (i = 0; i < 3; i++)
			if (qp[i])
				srnic_engine_destroy_qp(eng, qp[i]);
		eng->qpn_next = idx;
	}
	eng->cls = 0;
	eng->node->classes = 1;
}

int main(void)
{
	engine_up();
	test_qpn_classes();
	test_write_out_of_order();
	test_write_notify();
	test_read_done();
	test_txid();
	test_send_ssn();
	test_access();
	test_zero_length_write();
	test_read_response();
	test_cross_message_order();
	test_qp_access();
	test_sack();
	test_sack_hold();
	test_probe_answer();
	test_token_turns();
	test_integration();
	test_credits();
	test_uc_loans();
	test_uc_recv_credit();
	test_rc_recv_credit();
	test_ack_req();
	test_svc_rebind_done_behind_read();
	test_read_ranges();
	test_read_retries_progress();
	test_read_rnr_waits();
	test_stripe_plan();
	test_uc_give_up();
	test_uc_port_behind();
	test_ud();
	test_ud6();
	test_fenced_hole();
	test_on_demand_hole();
	test_budgets();
	test_held_node();
	test_forged_flood();
	test_held_age();
	test_stalled_ring();
	test_rx_pause();
	test_stale_qp();
	test_condq();
	test_fifo();
	test_fifo_read();
	test_fifo_answer();
	test_error_sends_posted();
	test_published_checks();
	return check_summary("test_placement");
}
