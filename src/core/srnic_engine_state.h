/* SPDX-License-Identifier: MIT */
/*
 * A process's engine as every layer reads it: its QPs and the datapath's
 * lists, its memory table, its transmit buffers, the hand-offs from its
 * application threads; and the small helpers on a QP's connection that
 * more than one role uses.  Header only: engine/ starts and stops it, each
 * layer changes only its own parts (docs/architecture.md).
 */
#ifndef SRNIC_ENGINE_STATE_H
#define SRNIC_ENGINE_STATE_H

#include "srnic_node.h"
#include "srnic_condq.h"
#include "srnic_group_state.h"
#include "srnic_keys.h"
#include "srnic_mem.h"
#include "srnic_qp.h"
#include "srnic_wire.h"

/* A receive poll's frames: a burst a port, a transmit buffer's worth off
 * the loopback (dispatch.c) */
#define SRNIC_RX_KEPT (SRNIC_MAX_PORTS * SRNIC_BURST + SRNIC_TXBUF)
/* Payloads from this size on are sent from registered memory where the
 * port allows it (below, a copy costs less than a second mbuf). */
#define SRNIC_ZC_MIN 2048

/* UC's first give-up time (responder/uc.c says why) */
#define SRNIC_UC_GIVE_UP_US 16000

/* A FIFO of QPs through their fifo_next[id] links. */
struct srnic_qp_fifo {
	struct srnic_qp *head, *tail;
};

/* A port's transmit buffer: frames a process queued since its last
 * flush.  Each process has its own for every port. */
struct srnic_txbuf {
	uint16_t n;
	uint16_t nctrl;	/* of them, the control core's (they ring no bell:
			 * the far end reads them at its own pace) */
	struct rte_mbuf *m[SRNIC_TXBUF];
};

/* A process's engine: its QPs and their roles' lists, its memory table,
 * the hand-offs from its application threads, and the datapath token. */
enum srnic_engine_mode {
	SRNIC_EMBEDDED,	/* the node is this process's alone */
	SRNIC_NODE,	/* srnicd: the node, in memory its processes share */
	SRNIC_ATTACHED,	/* a process of srnicd's node */
};

struct srnic_engine {
	struct srnic_config cfg;
	struct srnic_node *node;
	enum srnic_engine_mode mode;
	uint32_t slot;		/* its process's index in the node */
	unsigned lcore;		/* attached: the EAL lcore its iterations
				 * run as (srnic_proc) */
	int srnicd_fd;		/* attached: the connection to srnicd */
	uint32_t attach_inc;	/* ... and the node's incarnation it gave */
	struct srnic_eal_memory eal;	/* srnicd's node and its processes */
	uint64_t tsc_hz;
	uint64_t tsc_per_us;
	struct srnic_mem_table mem;
	/* the groups this process's QPs joined (the node's say which
	 * processes joined) */
	struct srnic_mcast_group mcast[SRNIC_MAX_MCAST_GROUPS];
	struct srnic_txbuf txbuf[SRNIC_PORT_SLOTS];
	/* The datapath's clock (srnic_dp_clock): read as an iteration
	 * starts, at its receive poll and after the frames it found, and
	 * used for all it does in between (its frames' arrival, timers and
	 * deadlines, the packets' ts) rather than read at each use: an
	 * rdtsc costs about 25 cycles
	 * here, and was read some ten times a packet (12.5% of an 8-byte
	 * WRITE's cycles in tests/bench/profile.sh).  Valid inside an
	 * iteration (datapath.c) only. */
	uint64_t now;
	uint16_t now_ts16;	/* its 16-bit microseconds (srnic_ts16) */
	/* encap = udp: when the last burst came off a port, each frame's
	 * arrival for its path's delay (port/udp.c): one clock read a
	 * burst, not one a frame (the iteration's clock, from before the
	 * receive, would add the time its earlier bursts took) */
	uint16_t rx_ts16;
	/* the control core's ARPs of the node's own address at its start
	 * (control/arp.c): how many on each port, and when last */
	uint8_t arp_announced[SRNIC_MAX_PORTS];
	uint64_t arp_announce_ms[SRNIC_MAX_PORTS];
	/* an IPv6 node's: when its MLD report answers a query on each port
	 * (control/mld.c), 0 for none due */
	uint64_t mld_due_ms[SRNIC_MAX_PORTS];
	/* ... and until when it answers in MLDv1 (an MLDv1 querier heard) */
	uint64_t mld_v1_until[SRNIC_MAX_PORTS];
	/* The fault file as the file thread last read it (port/fault.c):
	 * its inode and modification time, 0 for none; the stats show them,
	 * and `./srnic testbed fault` waits for them to be its file's. */
	uint64_t fault_ino, fault_mtime_ns;
	uint32_t payload_max;	/* bytes of payload a frame can carry */
	/* Striping: one round of the rotation, ports repeated by weight and
	 * interleaved (srnic_stripe_plan). */
	uint8_t stripe[SRNIC_MAX_PORTS * SRNIC_MAX_WEIGHT];
	uint32_t stripe_len;
	uint32_t fc_grant;	/* credit each ACK grants (srnic_flow.h) */

	/* QPs by number; numbers below 16 are never used */
	struct srnic_qp *qp_tab[SRNIC_MAX_QP];
	uint32_t qpn_next;
	/* Steering: this process's class (0: the port token's shared path;
	 * c > 0: its own queues, port/steer.c), taken as its engine starts
	 * (engine.c, class_take). */
	unsigned cls;
	unsigned steer_next;	/* port/steer.c: the sending class polled
				 * first */
	/* ... when each port's queue to each class first refused frames (0:
	 * it took them all at the last flush) */
	uint64_t steer_full_at[SRNIC_MAX_PORTS][SRNIC_MAX_CLASSES];
	/* XRC SRQs by number (0 unused; made with the first) */
	struct srnic_srq **xrc_srq;
	uint32_t xrc_srq_next;
	pthread_mutex_t obj_lock;

	/* hand-offs between threads */
	struct rte_ring *doorbell;	/* app -> datapath: QPs with work */
	struct rte_ring *calls;		/* any -> datapath: engine calls */

	/* datapath lists */
	struct srnic_qp_fifo active;	/* QPs with work */
	struct srnic_qp *ack_head;	/* ACKs to send now */
	/* Deferred plain ACKs, in the order they fall due (each waits the
	 * same ack_delay_tsc) */
	struct srnic_qp_fifo lazy;
	uint64_t ack_delay_tsc;
	struct srnic_cq *mod_cqs;	/* CQs with event moderation */
	struct srnic_qp *timer_head;
	struct srnic_qp *timer_cursor;	/* where the next tick's slice starts */
	uint64_t next_tick;
	uint64_t tick_tsc;
	/* srnicd's node: when this process first found the port token taken
	 * with frames to send, not having had it since (0: it has) */
	uint64_t token_missed_at;
	/* The last receive poll left frames in a port's queue or this
	 * process's ring (it took a full burst): what a timer would call
	 * lost may be there.  Since when the polls have, and when the last
	 * began or the frames it found were handled (TSC; dispatch.c,
	 * rx_clock). */
	bool rx_backlog;
	/* The burst in hand came off a steering class's own queues (not
	 * off its ring, which class 0's pollers filled): its frames are
	 * counted on their paths here (dispatch.c, rx_steered). */
	bool rx_own_queues;
	uint64_t rx_backlog_since;
	uint64_t rx_polled_at;
	/* Time the datapath was away: the gaps between receive polls (or a
	 * poll and the end of handling its frames) longer than
	 * srnic_away_gap_tsc (the process off its core, or nobody driving
	 * it), summed.  UC's give-up leaves it out of a stall, or the
	 * node's ports_away if that grew more meanwhile: no packet can come
	 * in while nobody reads (responder/uc.c). */
	uint64_t away_tsc;
	/* Frames for this process's QPs the receive poll took off the
	 * ports, decoded: sorted under the port token, handled once it is
	 * given back (dispatch.c). */
	uint16_t rx_kept;
	struct rte_mbuf *rx_kept_m[SRNIC_RX_KEPT];
	struct srnic_pkt rx_kept_pkt[SRNIC_RX_KEPT];
	/* What messages from the wire may hold of the node's memory at once
	 * (the responder's and multicast members'): bitmaps of their
	 * packets, and last packets kept until the rest of their message
	 * has landed, out of the node's packet pool (held_max, and the
	 * node's SRNIC_HELD_MAX for all its processes; 0 in either: no
	 * limit, as a test's engine has). */
	struct srnic_track_budget map_budget;
	uint32_t held, held_max;
	/* UC: how long the oldest message may stall the ones behind it
	 * before it is given up (responder/uc.c); widened by evidence, 0 until
	 * then: SRNIC_UC_GIVE_UP_US. */
	uint64_t uc_give_up_tsc;
	/* An IPv6 node's datagrams: the last sender their receiver looked
	 * up (responder/datagram.c), by its id, and its peer slot (NULL:
	 * none) and address, checked against the slot at each use.  The
	 * datapath's, under its token, as the QPs that receive are. */
	struct {
		uint32_t id;
		const struct srnic_peer *peer;
		uint8_t ip6[16];
	} dgram_from;

	/* life (the nap's words: the engine's own, or its process's slot
	 * in the node when others must wake it: slot 0, the node's
	 * sleeper, for srnicd's and an embedded engine's) */
	struct srnic_bell *bell;
	struct srnic_bell own_bell;
	uint32_t apps_asleep;	/* an application thread that drove went to
				 * sleep (srnic_engine_app_sleeps) */
	uint32_t apps_spinning;	/* ... and those that drive while they wait
				 * for an event (srnic_engine_app_spins) */
	/* Each memif port's bells, in a file both ends of the link map
	 * (port/bell.c): the one of this node's end that this engine
	 * sleeps on, and the far end, rung after sending it frames; NULL
	 * where the port has none. */
	struct srnic_bell *wire_bell[SRNIC_MAX_PORTS];
	struct srnic_wire_end *wire_peer[SRNIC_MAX_PORTS];
	/* Steering: each memif link's class bells, ours and the far end's */
	struct srnic_wire_classes *wire_cls[SRNIC_MAX_PORTS];
	struct srnic_wire_classes *wire_peer_cls[SRNIC_MAX_PORTS];
	unsigned wires_unbelled;	/* ports with no bell (kernel wires) */
	/* srnicd's: an eventfd its main thread polls, written as the
	 * node's datapath leaves a deep sleep (its watch on stopped
	 * processes speeds up again: srnicd/serve.c); -1 elsewhere. */
	int deep_left_fd;
	/* Frames the datapath carried for the control core (its HELLOs out,
	 * the peers' in): an iteration that moved only those finds no work
	 * that wakes the node (datapath.c's say_deep). */
	uint32_t ctrl_frames;
	bool rx_missed;		/* the last receive poll found the port token
				 * taken */
	/* Whoever holds the token runs the datapath: the engine's thread,
	 * or an application thread in a post or poll call (datapath.c
	 * says when).  Iterations count under it; app_iters counts those an
	 * application thread ran. */
	uint32_t dp_token __attribute__((aligned(SRNIC_CACHE_LINE)));
	uint64_t dp_epoch;
	uint64_t app_iters;
	uint32_t kicked;	/* a post found the token taken */
	uint32_t dp_abandoned;	/* an iteration was cut short by exit() */
	uint32_t fatal;		/* srnicd gone (attach.c): SRNIC_FATAL_* */
	volatile int stop;
	int refcnt;
	pthread_t dp_thread;
	int dp_started;

	/* its counters: its own, or (attached) its slot's in the node, where
	 * srnicd reads them */
	struct srnic_stats *st;
	struct srnic_stats own_st;

	/* (the large tables of the slow paths last, past the hot fields) */
	/* multicast RDMA WRITE (src/group): this process's group regions,
	 * and what it has of each sender's current message */
	struct srnic_group_region group[SRNIC_MAX_GROUPS];
	struct srnic_group_source group_src[SRNIC_GROUP_SOURCES];
	uint32_t group_msn;	/* the last multicast WRITE's number */
	/* the key of the tag in a multicast WRITE's rkey (group/tag.c), from
	 * the cluster key; group_tag_on 0: no cluster key, no tag */
	uint8_t group_tag_key[16];
	uint8_t group_tag_on;
	/* key migration between the node's adapters (key_scope = device) */
	struct srnic_keys keys;
	/* conditional queues (sched/condq.c) and the last id given */
	struct srnic_condq_state condq[SRNIC_MAX_CONDQ];
	uint16_t condq_last;
	/* service QPs, clients' and members' (engine/service.c): the timer
	 * tick looks at each */
#define SRNIC_SVC_QPS 64
	struct srnic_qp *svc_qps[SRNIC_SVC_QPS];
	uint32_t nsvc_qps;
};

/* A datagram (to a group) this node's current process sent. */
static inline bool srnic_sent_here(const struct srnic_engine *eng,
				   const struct srnic_pkt *pkt)
{
	return pkt->src_ipv4 == eng->cfg.ipv4 && pkt->src_inc == eng->node->inc;
}

/* A peer's request under key met memory that is not there (a guarded
 * copy failed): counted, and the key fenced unless its region is
 * on-demand (srnic_mem_fence; docs/reliability.md, robust placement). */
static inline void srnic_page_fault(struct srnic_engine *eng, uint32_t key)
{
	eng->st->drops[SRNIC_DROP_PAGE_FAULT]++;
	if (srnic_mem_fence(&eng->mem, key))
		eng->st->fault_fenced++;
}

/* Whether RDMA from qp's peer may land here. */
static inline bool srnic_qp_peer_rdma_ok(const struct srnic_qp *qp)
{
	return __atomic_load_n(&qp->peer->ok_inc, __ATOMIC_ACQUIRE) ==
	       qp->peer_inc;
}

/* The base header of a packet of qp's connection. */
static inline void srnic_qp_pkt_init(struct srnic_pkt *pkt,
				     const struct srnic_engine *eng,
				     const struct srnic_qp *qp, uint8_t opcode,
				     uint32_t msn)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = opcode;
	pkt->dst_qpn = qp->at.dest_qpn;
	pkt->src_qpn = qp->q.qpn;
	pkt->src_inc = eng->node->inc;
	pkt->dst_inc = qp->peer_inc;
	pkt->msn = msn;
}

/* The 16-bit microsecond clock packets carry (ts, ts_echo): wraps every
 * 65 ms, plenty for a round trip; never 0, which means "none". */
static inline uint16_t srnic_ts16(const struct srnic_engine *eng,
				  uint64_t now)
{
	uint16_t t = (uint16_t)(now / eng->tsc_per_us);

	return t ? t : 1;
}

/* How long a gap between receive polls must be to be time away
 * (away_tsc): longer than the shortest UC give-up, and than twice the
 * longest nap an idle datapath takes (that is no absence). */
static inline uint64_t srnic_away_gap_tsc(const struct srnic_engine *eng)
{
	uint64_t us = 2ull * eng->cfg.idle_sleep_us > SRNIC_UC_GIVE_UP_US
			      ? 2ull * eng->cfg.idle_sleep_us
			      : SRNIC_UC_GIVE_UP_US;

	return eng->tsc_per_us * us;
}

/* The gap from SINCE (a clock reading, 0 for never) to NOW when it is time
 * away (longer than srnic_away_gap_tsc), else 0. */
static inline uint64_t srnic_away_gap(const struct srnic_engine *eng,
				      uint64_t since, uint64_t now)
{
	return since && now > since && now - since > srnic_away_gap_tsc(eng)
		       ? now - since
		       : 0;
}

/* The datapath's clock read anew (eng->now): as an iteration starts, at
 * its receive poll and after the frames it found (dispatch.c). */
static inline void srnic_dp_clock(struct srnic_engine *eng)
{
	eng->now = srnic_now();
	eng->now_ts16 = srnic_ts16(eng, eng->now);
}

#endif
