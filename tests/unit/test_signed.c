/* SPDX-License-Identifier: MIT */
/*
 * What a node with a cluster key takes only signed (port/decode.c): the
 * control frames and a service QP's SVC_RESYNC and SVC_RESYNC_ACK, which
 * bind a parked QP to whoever sent them.  Frames built the way the engine
 * sends them (srnic_pkt_alloc signs what carries SRNIC_F_AUTH) go through
 * the receive check of the net_ring engine: signed with the node's key they
 * pass; unsigned, or signed with another key, they are dropped and counted
 * as bad_auth.  Without a key, nothing is asked of them.
 */
#include <string.h>

#include <rte_mbuf.h>
#include <sodium.h>

#include "check.h"
#include "engine_internal.h"
#include "ring_engine.h"

static struct srnic_engine *eng;

/* op, signed or not, with key (NULL: the node's), through the receive
 * check. */
static bool passes(uint8_t op, bool sign, const uint8_t *key)
{
	static const uint8_t dst[6] = {2, 0, 0, 0, 0, 1};
	uint8_t node_key[SRNIC_KEY_LEN];
	struct srnic_pkt pkt, got;
	struct rte_mbuf *m;
	bool ok;

	memset(&pkt, 0, sizeof(pkt));
	pkt.opcode = op;
	pkt.flags = sign ? SRNIC_F_AUTH : 0;
	pkt.dst_qpn = 5;
	pkt.src_qpn = 9;
	pkt.src_inc = 0x77;
	pkt.dst_inc = eng->node->inc;
	pkt.msn = 42;
	pkt.ipv4 = srnic_op_is_control(op) ? 0x0a000002 : 0;
	memcpy(node_key, eng->cfg.cluster_key, sizeof(node_key));
	if (key)
		memcpy(eng->cfg.cluster_key, key, SRNIC_KEY_LEN);
	m = srnic_pkt_alloc(eng, &pkt, dst, 0, NULL);
	memcpy(eng->cfg.cluster_key, node_key, sizeof(node_key));
	if (!m) {
		fprintf(stderr, "no mbuf\n");
		exit(2);
	}
	ok = srnic_rx_decode(eng, 0, m, &got);
	rte_pktmbuf_free(m);
	return ok;
}

static void test_op(uint8_t op)
{
	uint8_t other[SRNIC_KEY_LEN];
	uint64_t bad0;
	const char *name = srnic_op_name(op);

	CHECK(srnic_op_signed(op), "%s: not among the signed opcodes", name);
	randombytes_buf(other, sizeof(other));
	eng->cfg.has_key = 1;
	bad0 = eng->st->drops[SRNIC_DROP_BAD_AUTH];
	CHECK(passes(op, true, NULL), "%s signed with the key: refused", name);
	CHECK(!passes(op, false, NULL), "%s unsigned: taken under a key", name);
	CHECK(!passes(op, true, other), "%s signed with another key: taken",
	      name);
	CHECK(eng->st->drops[SRNIC_DROP_BAD_AUTH] - bad0 == 2,
	      "%s: %llu bad_auth drops counted, not 2", name,
	      (unsigned long long)(eng->st->drops[SRNIC_DROP_BAD_AUTH] - bad0));
	eng->cfg.has_key = 0;
	CHECK(passes(op, false, NULL), "%s unsigned without a key: refused",
	      name);
}

int main(void)
{
	if (sodium_init() < 0)
		return 2;
	eng = ring_engine_new();
	ring_engine_start(eng, 2048);
	randombytes_buf(eng->cfg.cluster_key, sizeof(eng->cfg.cluster_key));
	test_op(SRNIC_OP_SVC_RESYNC);
	test_op(SRNIC_OP_SVC_RESYNC_ACK);
	test_op(SRNIC_OP_BOOTING);
	test_op(SRNIC_OP_HELLO);
	/* Data and ACKs carry no MAC: a key asks nothing of them. */
	eng->cfg.has_key = 1;
	CHECK(!srnic_op_signed(SRNIC_OP_ACK) && passes(SRNIC_OP_ACK, false, NULL),
	      "an ACK refused unsigned");
	return check_summary("test_signed");
}
