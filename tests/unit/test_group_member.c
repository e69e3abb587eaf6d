/* SPDX-License-Identifier: MIT */
/*
 * A multicast member's table of senders (group/member.c), driven packet
 * by packet on the net_ring engine: each packet of a sender's message is
 * placed once, whatever the number of senders, and an entry gives way to
 * a new sender only once its own has been silent long enough that no
 * packet of its messages can come again.  Before the table was sets with
 * that rule, the 17th sender evicted the first, and a late copy of the
 * first sender's older message was placed over its newer one.  And a
 * member's completions (srnic_group_notify): one for each message that
 * lands whole, none for a copy, and the last packet waits for room.
 */
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "check.h"
#include "engine_internal.h"
#include "ring_engine.h"
#include "srnic_group.h"

#define GROUP 3
#define SENDERS 300
#define SLICE 64		/* each sender's bytes in the region */
#define LEN (SENDERS * SLICE)
#define SENDER_INC(i) (0x5000u + (i))
#define SENDER_QPN(i) (100u + (i))

static struct srnic_engine *eng;
static uint8_t region[LEN];

/* The engine's answers (ACKs to the senders), thrown away. */
static void drain_wire(void)
{
	struct rte_mbuf *ms[32];
	uint16_t n;

	srnic_ports_flush(eng);
	while ((n = rte_eth_rx_burst(eng->node->port[0].port_id, 0, ms, 32)))
		rte_pktmbuf_free_bulk(ms, n);
}

/* Sender i's message msn, one packet with rkey: SLICE bytes of fill at
 * its slice. */
static void deliver_as(unsigned i, uint32_t msn, uint8_t fill, uint32_t rkey)
{
	static const uint8_t src_mac[6] = {2, 0, 0, 0, 0, 7};
	uint8_t payload[SLICE];
	struct srnic_pkt pkt;
	struct rte_mbuf *m = rte_pktmbuf_alloc(eng->node->pool);
	uint8_t *frame;

	if (!m || !(frame = (uint8_t *)rte_pktmbuf_append(m, 64))) {
		fprintf(stderr, "no mbuf\n");
		exit(2);
	}
	memset(frame, 0, 64);
	memcpy(frame + 6, src_mac, 6);	/* (answers go to its source) */
	m->port = 0;
	memset(payload, fill, sizeof(payload));
	memset(&pkt, 0, sizeof(pkt));
	pkt.opcode = SRNIC_OP_WRITE;
	pkt.flags = SRNIC_F_GROUP | SRNIC_F_LAST;
	pkt.src_inc = SENDER_INC(i);
	pkt.src_qpn = SENDER_QPN(i);
	pkt.rkey = rkey;
	pkt.msn = msn;
	pkt.va = (uint64_t)i * SLICE;
	pkt.msg_len = SLICE;
	pkt.pkt_len = SLICE;
	pkt.stride_shift = 10;
	pkt.payload = payload;
	srnic_group_member_rx(eng, &pkt, m);
	rte_pktmbuf_free(m);
	drain_wire();
}

/* The same, as sender i would send it. */
static void deliver(unsigned i, uint32_t msn, uint8_t fill)
{
	deliver_as(i, msn, fill, srnic_group_rkey(eng, GROUP, SENDER_INC(i)));
}

static bool slice_is(unsigned i, uint8_t fill)
{
	unsigned k;

	for (k = 0; k < SLICE; k++)
		if (region[i * SLICE + k] != fill)
			return false;
	return true;
}

/* 17 senders, one more than one set had room for before: a late copy of
 * sender 0's message 1 after its message 2 is a duplicate, not placed. */
static void test_seventeen_senders(void)
{
	unsigned i;

	for (i = 0; i < 17; i++)
		deliver(i, 1, 0x11);
	for (i = 0; i < 17; i++)
		deliver(i, 2, 0x22);
	for (i = 0; i < 17; i++)
		deliver(i, 1, 0x11);	/* late copies of message 1 */
	for (i = 0; i < 17; i++)
		CHECK(slice_is(i, 0x22),
		      "sender %u's older message placed over its newer one", i);
}

/* More senders than a set holds, all heard just now: the newcomers are
 * refused and counted, no entry of a sender still sending is lost; once
 * those have been silent past SRNIC_GROUP_FORGET_MS, newcomers get them. */
static void test_full_set(void)
{
	uint64_t refused0 = eng->st->drops[SRNIC_DROP_MC_SOURCES_FULL];
	uint64_t placed0 = eng->st->mc_placed;
	unsigned i, placed, refused;

	for (i = 17; i < SENDERS; i++)
		deliver(i, 1, 0x33);
	placed = (unsigned)(eng->st->mc_placed - placed0);
	refused = (unsigned)(eng->st->drops[SRNIC_DROP_MC_SOURCES_FULL] -
			     refused0);
	CHECK(placed + refused == SENDERS - 17, "%u placed + %u refused of %u",
	      placed, refused, SENDERS - 17);
	CHECK(refused > 0, "%u senders in a table of %u: none refused",
	      SENDERS, SRNIC_GROUP_SOURCES);
	CHECK(placed >= SRNIC_GROUP_SOURCES / 2,
	      "only %u of %u new senders placed", placed, SENDERS - 17);
	/* The first 17 keep their entries: their late copies stay out. */
	for (i = 0; i < 17; i++)
		deliver(i, 1, 0x11);
	for (i = 0; i < 17; i++)
		CHECK(slice_is(i, 0x22), "sender %u lost its entry to a newcomer",
		      i);
	/* Every entry silent for longer than the forget time: a refused
	 * sender now finds room. */
	for (i = 0; i < SRNIC_GROUP_SOURCES; i++)
		eng->group_src[i].heard -=
			(SRNIC_GROUP_FORGET_MS + 1) * 1000 * eng->tsc_per_us;
	refused0 = eng->st->drops[SRNIC_DROP_MC_SOURCES_FULL];
	for (i = 17; i < SENDERS; i++)
		if (!slice_is(i, 0x33))
			deliver(i, 1, 0x33);
	CHECK(eng->st->drops[SRNIC_DROP_MC_SOURCES_FULL] == refused0,
	      "refused after every entry went silent");
	for (i = 17; i < SENDERS; i++)
		CHECK(slice_is(i, 0x33), "sender %u never placed", i);
}

/* With a cluster key, a group WRITE carries a tag only key holders make
 * (group/tag.c): the group's number alone, a tag made for another
 * sender's incarnation, or one for another group is dropped as a bad key
 * and places nothing; the sender's own is placed. */
static void test_tag(void)
{
	uint64_t bad = eng->st->drops[SRNIC_DROP_BAD_KEY];
	uint8_t before = region[5 * SLICE];
	uint32_t own;

	eng->cfg.has_key = 1;
	memset(eng->cfg.cluster_key, 0x5a, sizeof(eng->cfg.cluster_key));
	srnic_group_tag_init(eng);
	own = srnic_group_rkey(eng, GROUP, SENDER_INC(5));
	CHECK(own % SRNIC_MAX_GROUPS == GROUP && own != GROUP,
	      "rkey %#x: no tag above group %u", own, GROUP);
	deliver_as(5, 100, 0x44, GROUP);
	deliver_as(5, 100, 0x44, srnic_group_rkey(eng, GROUP, SENDER_INC(6)));
	deliver_as(5, 100, 0x44, srnic_group_rkey(eng, GROUP + 1,
						   SENDER_INC(5)) -
					 1);	/* (group+1's tag, group's number) */
	CHECK(before != 0x44 && slice_is(5, before) &&
		      eng->st->drops[SRNIC_DROP_BAD_KEY] == bad + 3,
	      "forged tags: %llu of 3 dropped as bad_key, slice %s",
	      (unsigned long long)(eng->st->drops[SRNIC_DROP_BAD_KEY] - bad),
	      slice_is(5, before) ? "untouched" : "written");
	deliver(5, 100, 0x44);
	CHECK(slice_is(5, 0x44), "the sender's own tag was not placed");
	eng->cfg.has_key = 0;
	srnic_group_tag_init(eng);
}

/* Completions in the region's CQ (srnic_group_notify): a message that
 * lands whole makes one, a copy of it none; its last packet, with the
 * CQ full, is dropped unplaced (cq_full) and lands once there is room. */
static void test_completions(void)
{
	struct srnic_cq *cq = srnic_engine_create_cq(eng, 1);
	uint64_t full = eng->st->drops[SRNIC_DROP_CQ_FULL];
	const struct srnic_cqe *c;

	if (!CHECK(cq && cq->mask == 0, "a CQ of one entry"))
		return;
	eng->group[GROUP].cq = cq;
	deliver(7, 200, 0x55);
	c = &cq->ring[0];
	CHECK(cq->prod == 1 && c->wr_id == 7 * SLICE && c->byte_len == SLICE &&
		      c->src_qp == SENDER_QPN(7) &&
		      c->opcode == SRNIC_WC_RECV_RDMA_WITH_IMM &&
		      c->imm == rte_cpu_to_be_32(GROUP),
	      "the message's completion: %u made, offset %llu, length %u",
	      cq->prod, (unsigned long long)c->wr_id, c->byte_len);
	deliver(7, 200, 0x55);	/* a copy */
	CHECK(cq->prod == 1, "a copy of the message made a completion");
	deliver(8, 200, 0x66);	/* the CQ is full (not polled) */
	CHECK(cq->prod == 1 && !slice_is(8, 0x66) &&
		      eng->st->drops[SRNIC_DROP_CQ_FULL] == full + 1,
	      "a last packet with its CQ full was placed, or not counted");
	cq->cons = 1;		/* polled */
	deliver(8, 200, 0x66);	/* the repair */
	CHECK(cq->prod == 2 && slice_is(8, 0x66) && cq->ring[0].wr_id == 8 * SLICE,
	      "the repair, with room, did not land with its completion");
	eng->group[GROUP].cq = NULL;
}

int main(void)
{
	uint32_t key;

	eng = ring_engine_new();
	srnic_mem_init(&eng->mem, 42);
	ring_engine_start(eng, 8192);
	key = srnic_mem_register(&eng->mem, (uintptr_t)region, LEN,
				 SRNIC_ACCESS_LOCAL_WRITE |
					 SRNIC_ACCESS_REMOTE_WRITE, 1);
	eng->group[GROUP] = (struct srnic_group_region){
		.key = key, .pd = 1, .addr = (uintptr_t)region, .length = LEN};
	test_seventeen_senders();
	test_full_set();
	test_tag();
	test_completions();
	return check_summary("test_group_member");
}
