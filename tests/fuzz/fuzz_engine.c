/* SPDX-License-Identifier: MIT */
/*
 * The receive path fuzzed with its state, not only the decoder: sequences
 * of frames (data, ACK, READ, atomics, datagrams, multicast group WRITEs,
 * control frames), valid and mutated, go into one engine the way the
 * datapath takes them (srnic_rx_ports: dispatch, responder, completer,
 * group member), on DPDK's net_ring port, which loops back what the
 * engine answers.  The engine has an RC, a UC and a UD QP and four
 * regions:
 *
 *   W     remote write, read and atomics (and the multicast group's)
 *   R     remote read only
 *   N     local write only
 *   RECV  local write only, behind the posted receives
 *
 * each between guard bytes no key covers.  After every batch, the oracle:
 * R, N and every guard byte are as they were (only W and RECV may
 * change), and the engine did not crash or trip a sanitizer.  A QP that
 * left RTS (a NAK'd request fails it, as it should) is made again.
 *
 * Two builds:
 *  - libFuzzer (clang, tests/fuzz/run-fuzz.sh ... engine): an input is a
 *    sequence of frames, each a 2-byte length and its bytes; the engine
 *    lives across inputs, as a NIC's state does across frames.
 *  - standalone (-DSRNIC_FUZZ_STANDALONE, unit test engine_corpus): a
 *    deterministic generator of frames built valid from the engine's own
 *    keys, QP numbers and addresses, a quarter of them then mutated;
 *    "--write-seeds DIR" writes such sequences as libFuzzer's seeds.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "engine_internal.h"
#include "ring_engine.h"

#define STRIDE_SHIFT 10
#define STRIDE (1u << STRIDE_SHIFT)
#define PEER_INC 0x1234567u
#define PEER_QPN 77
#define QKEY 0x1111
#define GROUP 1
#define GUARD 4096
#define CANARY 0xa5
#define RECVS 8			/* receives kept posted on each QP */

enum { W_LEN = 32768, R_LEN = 16384, N_LEN = 16384, RECV_LEN = 16384 };
enum { QP_RC, QP_UC, QP_UD, NQPS };

static struct srnic_engine *eng;
static struct srnic_cq *cq;
static struct srnic_peer peer;
static struct srnic_qp *qps[NQPS];
static uint8_t *arena, *w, *r, *n, *rcv;
static uint8_t r_was[R_LEN], n_was[N_LEN];
static uint32_t w_key, r_key, n_key, rcv_key;
static size_t arena_len;

/* ---- the engine under test -------------------------------------------- */

static uint8_t *carve(uint8_t **at, size_t len)
{
	uint8_t *p = *at;

	*at += len + GUARD;
	return p;
}

static void post_recvs(struct srnic_qp *qp)
{
	uint32_t per = RECV_LEN / (NQPS * RECVS);
	uint8_t *base = rcv + (size_t)(qp->q.type % NQPS) * RECVS * per;

	while (qp->q.rq_prod - qp->q.rq_comp < RECVS) {
		unsigned i = qp->q.rq_prod % RECVS;
		struct srnic_rwqe *wqe = &qp->q.rq[qp->q.rq_prod & qp->q.rq_mask];

		*wqe = (struct srnic_rwqe){.wr_id = i, .num_sge = 1,
					   .length = per};
		wqe->sge[0] = (struct srnic_sge){(uintptr_t)base + i * per,
						 per, rcv_key};
		qp->q.rq_prod++;
	}
}

static struct srnic_qp *qp_make(uint8_t type)
{
	struct srnic_qp_init init = {.type = type, .pd = 1,
				     .max_send_wr = 16, .max_recv_wr = 16,
				     .max_send_sge = 2, .max_recv_sge = 2,
				     .send_cq = cq, .recv_cq = cq};
	struct srnic_qp *qp = srnic_engine_create_qp(eng, &init);

	if (!qp) {
		fprintf(stderr, "fuzz_engine: no QP\n");
		exit(2);
	}
	if (type != SRNIC_QPT_UD) {
		qp->peer = &peer;
		qp->peer_inc = PEER_INC;
		qp->at.dest_qpn = PEER_QPN;
	}
	qp->access = SRNIC_ACCESS_REMOTE_WRITE | SRNIC_ACCESS_REMOTE_READ |
		     SRNIC_ACCESS_REMOTE_ATOMIC;
	qp->at.qkey = QKEY;
	qp->at.path_shift = STRIDE_SHIFT;
	qp->at.timeout_tsc = eng->tsc_hz;
	qp->at.retry_cnt = 7;
	qp->at.max_rd_atomic = qp->at.max_dest_rd_atomic = 16;
	qp->rcv.exp_msn = 100;
	qp->snd.next_msn = 500;
	qp->q.state = SRNIC_QPS_RTS;
	post_recvs(qp);
	return qp;
}

static void engine_up(void)
{
	static const uint8_t peer_mac[6] = {2, 0, 0, 0, 0, 9};
	uint32_t rights = SRNIC_ACCESS_LOCAL_WRITE | SRNIC_ACCESS_REMOTE_WRITE |
			  SRNIC_ACCESS_REMOTE_READ | SRNIC_ACCESS_REMOTE_ATOMIC;
	uint8_t *at;
	unsigned i;

	eng = ring_engine_new();
	srnic_mem_init(&eng->mem, 42);
	eng->node->ctrl_rx = rte_ring_create("ctrl_rx", 1024, 0,
					     RING_F_SC_DEQ);
	eng->node->loop = rte_ring_create("loop", 1024, 0, RING_F_SC_DEQ);
	eng->doorbell = rte_ring_create("db", 64, 0, RING_F_SC_DEQ);
	if (!eng->node->ctrl_rx || !eng->node->loop || !eng->doorbell)
		exit(2);
	ring_engine_start(eng, 9216);
	peer.up[0] = 1;
	peer.inc = PEER_INC;
	peer.ok_inc = PEER_INC;
	peer.ready_inc = PEER_INC;
	memcpy(peer.mac[0], peer_mac, 6);
	cq = srnic_engine_create_cq(eng, 4096);

	arena_len = GUARD + W_LEN + GUARD + R_LEN + GUARD + N_LEN + GUARD +
		    RECV_LEN + GUARD;
	arena = aligned_alloc(4096, arena_len);
	if (!arena || !cq)
		exit(2);
	memset(arena, CANARY, arena_len);
	at = arena + GUARD;
	w = carve(&at, W_LEN);
	r = carve(&at, R_LEN);
	n = carve(&at, N_LEN);
	rcv = carve(&at, RECV_LEN);
	for (i = 0; i < R_LEN; i++)
		r[i] = r_was[i] = (uint8_t)(i * 7);
	for (i = 0; i < N_LEN; i++)
		n[i] = n_was[i] = (uint8_t)(i * 13);
	w_key = srnic_mem_register(&eng->mem, (uintptr_t)w, W_LEN, rights, 1);
	r_key = srnic_mem_register(&eng->mem, (uintptr_t)r, R_LEN,
				   SRNIC_ACCESS_REMOTE_READ, 1);
	n_key = srnic_mem_register(&eng->mem, (uintptr_t)n, N_LEN,
				   SRNIC_ACCESS_LOCAL_WRITE, 1);
	rcv_key = srnic_mem_register(&eng->mem, (uintptr_t)rcv, RECV_LEN,
				     SRNIC_ACCESS_LOCAL_WRITE, 1);
	/* W is this process's region for the multicast group too. */
	eng->group[GROUP] = (struct srnic_group_region){
		.key = w_key, .pd = 1, .addr = (uintptr_t)w, .length = W_LEN};
	eng->node->group_owner[GROUP] = eng->slot + 1;
	qps[QP_RC] = qp_make(SRNIC_QPT_RC);
	qps[QP_UC] = qp_make(SRNIC_QPT_UC);
	qps[QP_UD] = qp_make(SRNIC_QPT_UD);
}

/* Frames the engine sent (ACKs, READ responses) come back on the ring and
 * are taken with the next batch; what is left for nobody goes. */
static void settle(void)
{
	struct srnic_cqe c[64];
	struct rte_mbuf *m;
	unsigned i;

	srnic_dp_clock(eng);	/* (as an iteration reads it first) */
	srnic_rx_ports(eng);
	srnic_ports_flush(eng);
	while (rte_ring_sc_dequeue(eng->node->ctrl_rx, (void **)&m) == 0)
		rte_pktmbuf_free(m);
	while (srnic_cq_poll(cq, c, 64) > 0)
		;
	for (i = 0; i < NQPS; i++) {
		if (qps[i]->q.state != SRNIC_QPS_RTS) {
			uint8_t type = qps[i]->q.type;

			srnic_engine_destroy_qp(eng, qps[i]);
			qps[i] = qp_make(type);
		}
		post_recvs(qps[i]);
	}
}

/* NULL, or what the engine changed that no key let it. */
static const char *oracle(void)
{
	static char why[128];
	size_t i;

	if (memcmp(r, r_was, R_LEN))
		return "the remote-read-only region changed";
	if (memcmp(n, n_was, N_LEN))
		return "the local-only region changed";
	for (i = 0; i < arena_len; i++) {
		const uint8_t *p = arena + i;

		if ((p >= w && p < w + W_LEN) || (p >= r && p < r + R_LEN) ||
		    (p >= n && p < n + N_LEN) ||
		    (p >= rcv && p < rcv + RECV_LEN))
			continue;
		if (*p != CANARY) {
			snprintf(why, sizeof(why), "a guard byte changed, %zu "
				 "bytes into the arena", i);
			return why;
		}
	}
	return NULL;
}

/* One frame in through the port, as a peer's would come. */
static void inject(const uint8_t *frame, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(eng->node->pool);
	uint8_t *p;

	if (!m)
		return;
	p = (uint8_t *)rte_pktmbuf_append(m, len);
	if (!p) {
		rte_pktmbuf_free(m);
		return;
	}
	memcpy(p, frame, len);
	if (rte_eth_tx_burst(eng->node->port[0].port_id, 0, &m, 1) != 1)
		rte_pktmbuf_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An input: frames, each a little-endian 2-byte length and its bytes. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *bad;
	unsigned batch = 0;
	uint16_t len;

	if (!eng)
		engine_up();
	while (size >= 2) {
		len = (uint16_t)(data[0] | data[1] << 8);
		data += 2;
		size -= 2;
		if (len > size || len > 9100)
			len = (uint16_t)(size < 9100 ? size : 9100);
		inject(data, len);
		data += len;
		size -= len;
		if (++batch == 16) {
			settle();
			batch = 0;
		}
	}
	settle();
	bad = oracle();
	if (bad) {
		fprintf(stderr, "fuzz_engine: %s\n", bad);
		abort();
	}
	return 0;
}

#ifdef SRNIC_FUZZ_STANDALONE

/* ---- the standalone generator ------------------------------------------ */

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static uint32_t next_msn[NQPS];	/* the next message each QP gets */

static uint32_t below(uint32_t n)
{
	return n ? rnd() % n : 0;
}

/* A key the frame names, and the address it aims at in that region
 * (sometimes past its end, sometimes anywhere). */
static void aim(struct srnic_pkt *pkt, uint32_t len)
{
	static const uint32_t lens[] = {W_LEN, R_LEN, N_LEN, RECV_LEN};
	const uint8_t *bases[] = {w, r, n, rcv};
	uint32_t keys[] = {w_key, r_key, n_key, rcv_key};
	unsigned k = below(5);

	if (k == 4) {
		pkt->rkey = rnd();
		pkt->va = (uint64_t)rnd() << 20 | rnd();
		return;
	}
	pkt->rkey = keys[k];
	pkt->va = (uintptr_t)bases[k] +
		  (below(8) ? below(lens[k] > len ? lens[k] - len + 1 : 1)
			    : lens[k] - below(64));
}

/* A frame as a peer would build it (then, a quarter of the time,
 * damaged): *len its length. */
static uint8_t *make_frame(uint8_t *out, uint16_t *len)
{
	static const uint8_t ops[] = {
		SRNIC_OP_WRITE, SRNIC_OP_WRITE, SRNIC_OP_SEND, SRNIC_OP_SEND,
		SRNIC_OP_READ_REQ, SRNIC_OP_ATOMIC_REQ, SRNIC_OP_ACK,
		SRNIC_OP_READ_RESP, SRNIC_OP_UD_SEND, SRNIC_OP_BOOTING,
		SRNIC_OP_HELLO, SRNIC_OP_SVC_RESYNC};
	struct srnic_pkt pkt = {0};
	struct srnic_qp *qp = qps[below(2) ? QP_RC : QP_UC];
	struct rte_mbuf *m;
	uint8_t *payload = NULL;
	uint32_t npkts, i;
	uint16_t n;

	pkt.opcode = ops[below(sizeof(ops))];
	if (pkt.opcode == SRNIC_OP_UD_SEND)
		qp = qps[QP_UD];
	pkt.dst_qpn = below(16) ? qp->q.qpn : rnd() & 0xffffff;
	pkt.src_qpn = PEER_QPN;
	pkt.src_inc = below(16) ? PEER_INC : rnd();
	pkt.dst_inc = eng->node->inc;
	/* Mostly the QP's next message, whole in one packet, first
	 * attempt: what gets as far as the checks before placement; the
	 * rest around it. */
	if ((int32_t)(next_msn[qp->q.type % NQPS] - qp->rcv.exp_msn) < 0)
		next_msn[qp->q.type % NQPS] = qp->rcv.exp_msn;
	pkt.msn = below(8) ? next_msn[qp->q.type % NQPS]++
			   : qp->rcv.exp_msn + below(6) - 1;
	pkt.txid = below(8) ? 0 : below(3);
	pkt.ssn = qp->rcv.exp_ssn + below(3);
	pkt.stride_shift = below(16) ? STRIDE_SHIFT : below(32);
	pkt.msg_len = below(4) ? below(STRIDE + 1)
		      : below(8) ? below(3 * STRIDE + 1) : rnd();
	npkts = pkt.msg_len ? (pkt.msg_len + STRIDE - 1) >> STRIDE_SHIFT : 1;
	i = below(npkts);
	pkt.msg_off = i << STRIDE_SHIFT;
	pkt.pkt_len = pkt.msg_len - pkt.msg_off < STRIDE
			      ? pkt.msg_len - pkt.msg_off
			      : STRIDE;
	if (pkt.msg_off + pkt.pkt_len >= pkt.msg_len)
		pkt.flags |= SRNIC_F_LAST;
	aim(&pkt, pkt.msg_len);
	pkt.va += pkt.msg_off;
	switch (pkt.opcode) {
	case SRNIC_OP_WRITE:
		if (!below(4)) {	/* to the group */
			pkt.flags |= SRNIC_F_GROUP;
			pkt.dst_qpn = 0xffffff;
			pkt.rkey = below(8) ? GROUP : below(70);
			pkt.va = pkt.msg_off + below(4) * STRIDE;
		}
		break;
	case SRNIC_OP_READ_REQ:
		pkt.pkt_len = 0;
		pkt.va -= pkt.msg_off;
		break;
	case SRNIC_OP_ATOMIC_REQ:
		pkt.msg_len = SRNIC_ATOMIC_LEN;
		pkt.pkt_len = SRNIC_ATOMIC_PAYLOAD;
		pkt.msg_off = 0;
		pkt.va &= ~7ull;
		pkt.flags = SRNIC_F_LAST | (below(2) ? SRNIC_F_CAS : 0);
		break;
	case SRNIC_OP_ACK:
		pkt.msn = qp->snd.next_msn - below(3);
		pkt.syndrome = below(4) ? 0 : below(8);
		pkt.credit = rnd();
		break;
	case SRNIC_OP_UD_SEND:
		pkt.qkey = below(8) ? QKEY : rnd();
		pkt.msg_off = 0;
		pkt.msg_len = pkt.pkt_len = below(STRIDE - 40);
		break;
	case SRNIC_OP_BOOTING:
	case SRNIC_OP_HELLO:
		pkt.ipv4 = 0x0a370002;
		break;
	}
	if (!below(8))
		pkt.flags |= (uint16_t)(1u << below(16));
	if (!below(4))
		pkt.flags |= SRNIC_F_IMM;
	m = srnic_pkt_alloc(eng, &pkt, eng->node->port[0].mac, 0, &payload);
	if (!m)
		return NULL;
	n = rte_pktmbuf_data_len(m);
	memcpy(out, rte_pktmbuf_mtod(m, uint8_t *), n);
	if (srnic_op_carries_payload(pkt.opcode))
		for (i = 0; i < pkt.pkt_len && n >= pkt.pkt_len; i++)
			out[n - pkt.pkt_len + i] = (uint8_t)rnd();
	rte_pktmbuf_free(m);
	if (!below(4))		/* damaged: a few bytes anywhere */
		for (i = below(4) + 1; i > 0; i--)
			out[below(n)] = (uint8_t)rnd();
	*len = n;
	return out;
}

/* BATCHES batches of up to 16 frames, as one input each. */
static int run(unsigned batches)
{
	static uint8_t input[16 * (2 + 9100)];
	unsigned b, k, frames = 0;
	uint16_t len;
	size_t at;

	for (b = 0; b < batches; b++) {
		at = 0;
		for (k = below(16) + 1; k > 0; k--) {
			if (!make_frame(input + at + 2, &len))
				continue;
			input[at] = (uint8_t)len;
			input[at + 1] = (uint8_t)(len >> 8);
			at += 2 + len;
			frames++;
		}
		LLVMFuzzerTestOneInput(input, at);
	}
	for (b = 0, k = 0; b < W_LEN; b++)
		k += w[b] != CANARY;
	printf("fuzz_engine: %u frames in %u batches, the regions held; "
	       "%u bytes of W written, %llu multicast packets placed, "
	       "drops bad_key %llu out_of_bounds %llu no_rights %llu "
	       "malformed %llu\n", frames, batches, k,
	       (unsigned long long)eng->st->mc_placed,
	       (unsigned long long)eng->st->drops[SRNIC_DROP_BAD_KEY],
	       (unsigned long long)eng->st->drops[SRNIC_DROP_OUT_OF_BOUNDS],
	       (unsigned long long)eng->st->drops[SRNIC_DROP_NO_RIGHTS],
	       (unsigned long long)eng->st->drops[SRNIC_DROP_MALFORMED]);
	return 0;
}

/* DIR/seed-N: sequences of generated frames, libFuzzer's starting
 * corpus. */
static int write_seeds(const char *dir)
{
	static uint8_t input[16 * (2 + 9100)];
	char path[512];
	unsigned s, k;
	uint16_t len;
	size_t at;
	FILE *f;

	engine_up();
	for (s = 0; s < 64; s++) {
		at = 0;
		for (k = 0; k < 8; k++) {
			if (!make_frame(input + at + 2, &len))
				continue;
			input[at] = (uint8_t)len;
			input[at + 1] = (uint8_t)(len >> 8);
			at += 2 + len;
		}
		snprintf(path, sizeof(path), "%s/seed-%u", dir, s);
		f = fopen(path, "wb");
		if (!f || fwrite(input, 1, at, f) != at || fclose(f)) {
			perror(path);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--write-seeds"))
		return write_seeds(argv[2]);
	engine_up();
	return run(argc == 2 ? (unsigned)atoi(argv[1]) : 4000);
}

#endif
