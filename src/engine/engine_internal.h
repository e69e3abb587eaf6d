/* SPDX-License-Identifier: MIT */
/*
 * What the engine's parts share: the node (struct srnic_engine), its ports,
 * the peers the control core learned, and the hand-offs between requester,
 * responder and completer.  Nothing here is seen by the provider.
 */
#ifndef SRNIC_ENGINE_INTERNAL_H
#define SRNIC_ENGINE_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "srnic_config.h"
#include "srnic_engine.h"
#include "srnic_mem.h"
#include "srnic_flow.h"
#include "srnic_qp.h"
#include "srnic_rto.h"
#include "srnic_wire.h"

#define SRNIC_MAX_PEERS 64
/* The peer slot after the others is this node itself (loopback): no
 * control-core loop sees it (they stop at npeers), and a UD address names
 * it by index as any peer. */
#define SRNIC_PEER_SELF SRNIC_MAX_PEERS
#define SRNIC_POOL_SIZE 16383	/* packet buffers of a node */
#define SRNIC_BURST 32
#define SRNIC_TXBUF 256
/* A receive poll's frames: a burst a port, a transmit buffer's worth off
 * the loopback (dispatch.c) */
#define SRNIC_RX_KEPT (SRNIC_MAX_PORTS * SRNIC_BURST + SRNIC_TXBUF)
/* Payloads from this size on are sent from registered memory where the
 * port allows it (below, a copy costs less than a second mbuf). */
#define SRNIC_ZC_MIN 2048

/* UC's first give-up time (responder.c says why) */
#define SRNIC_UC_GIVE_UP_US 16000

/* Why a received packet was dropped; counted per node. */
enum srnic_drop {
	SRNIC_DROP_MALFORMED,
	SRNIC_DROP_NOT_OURS,
	SRNIC_DROP_STALE_INC,	/* from or to an earlier incarnation */
	SRNIC_DROP_NO_QP,
	SRNIC_DROP_QP_STATE,
	SRNIC_DROP_STALE_TXID,	/* an older attempt of a message */
	SRNIC_DROP_DUPLICATE,	/* already landed, or message already done */
	SRNIC_DROP_OUT_OF_WINDOW,
	/* access checks, NAKed */
	SRNIC_DROP_BAD_KEY,	/* no such key, or another PD's */
	SRNIC_DROP_OUT_OF_BOUNDS,
	SRNIC_DROP_NO_RIGHTS,	/* the region or QP does not allow it */
	SRNIC_DROP_RNR,
	SRNIC_DROP_NO_MBUF,
	SRNIC_DROP_NOT_INTEGRATED, /* RDMA from a peer before its BOOT_ACK */
	SRNIC_DROP_BAD_QKEY,	/* a datagram with another Q_Key */
	SRNIC_DROP_CQ_FULL,	/* a datagram whose CQ had no room */
	SRNIC_DROP_NO_GROUP,	/* multicast to a group nobody here joined */
	SRNIC_DROP_UC_GIVEN_UP,	/* UC messages given up: packets lost */
	SRNIC_DROP_UC_LATE,	/* packets of a UC message given up already:
				 * the give-up was early (it widens) */
	SRNIC_DROP_BAD_CRC,	/* integrity trailer wrong, or missing */
	SRNIC_DROP_BAD_AUTH,	/* control frame without the cluster key's
				 * MAC, or with a wrong one */
	SRNIC_DROP_MAX
};

struct srnic_port_stats {
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes;
	uint64_t delayed;	/* frames the fault injector held back */
	uint64_t corrupted;	/* ... and the ones it flipped a bit in */
	uint64_t tx_full;	/* flushes the port did not take whole */
};

/* A port's receive-side fault injector (src/port/fault.c): a FIFO of frames
 * held back, and bit flips.  The file thread writes hold, delay_tsc and
 * corrupt; the rest is the datapath's. */
#define SRNIC_FAULT_HOLD 1024	/* a power of two */
struct srnic_fault {
	uint64_t hold;		/* hold a frame when 32 random bits < hold */
	uint64_t corrupt;	/* flip a bit in it when 32 random bits <
				 * corrupt */
	uint64_t delay_tsc;
	uint64_t rng;		/* xorshift64 state */
	uint32_t head, tail;
	struct rte_mbuf *m[SRNIC_FAULT_HOLD];
	uint64_t due[SRNIC_FAULT_HOLD];	/* TSC at which m[i] goes on */
};

struct srnic_port {
	uint16_t port_id;
	uint8_t mac[6];
	/* Link state has one writer per field: the control core follows the
	 * link (link_up, and link_gen counts its ups); the datapath decides
	 * whether to touch the port (polling) and remembers in which life of
	 * the link the peer said goodbye (bye_gen). */
	uint8_t link_up;
	uint8_t polling;
	uint32_t link_gen;
	uint32_t bye_gen;
	uint8_t started;	/* rte_eth_dev_start succeeded */
	uint64_t down_since;	/* control core: ms the link went down */
	uint64_t started_at;	/* ms of the last successful start */
	uint32_t start_gen;	/* link_gen at that start */
	uint64_t next_try;	/* ms: retry a refused start after this */
	uint8_t reconnects;	/* a client port: restart it to reconnect */
	uint32_t hello_seq;	/* control core: number of the next HELLO */
	uint8_t shared_memory;	/* memif: the peer's leaving unmaps the link */
	uint8_t zero_copy;	/* tx_burst copies frames out: payload may
				 * stay in registered memory */
	uint8_t crc;		/* frames carry and must carry a CRC-32C
				 * (never zero_copy: the frame is sealed
				 * whole, in one buffer) */
	char iface[16];		/* af_packet: its kernel interface */
	struct srnic_port_stats st;
	struct srnic_fault fault;
};

/* A remote node as the control core knows it. */
struct srnic_peer {
	uint32_t ipv4;
	uint32_t inc;			/* its current incarnation */
	uint8_t node_mac[6];
	char name[SRNIC_NAME_MAX];
	uint8_t mac[SRNIC_PORT_SLOTS][6]; /* its port on our port i's wire */
	uint8_t up[SRNIC_MAX_PORTS];	 /* heard from recently on port i */
	uint64_t last_seen[SRNIC_MAX_PORTS];
	/* How many of its HELLOs port i loses (per mille, a moving
	 * average); striping avoids a port that loses far more than the
	 * peer's best one (lossy). */
	uint32_t hello_seq[SRNIC_MAX_PORTS];	/* the next one expected */
	uint32_t hello_inc[SRNIC_MAX_PORTS];	/* ... from this incarnation */
	uint16_t hello_loss[SRNIC_MAX_PORTS];
	uint8_t lossy[SRNIC_MAX_PORTS];
	/* Port i has been quiet for a while although another port still
	 * hears the peer: striping avoids it until it is heard again. */
	uint8_t silent[SRNIC_MAX_PORTS];
	uint32_t silenced;	/* times one of its ports went silent */
	/* Integration (integrate.c).  The datapath reads ok_inc and
	 * ready_inc; the control core writes everything. */
	uint32_t ok_inc;	/* this incarnation of the peer confirmed it
				 * forgot our older ones: its RDMA is let in */
	uint32_t ready_inc;	/* this incarnation of the peer lets our
				 * RDMA in */
	uint8_t acked_ports;	/* BOOT_ACKs so far from incarnation inc */
	/* Its incarnations before inc, the latest few: frames that name one
	 * are late and ignored (control core writes, datapath reads). */
#define SRNIC_RETIRED 4
	uint32_t retired[SRNIC_RETIRED];
	uint32_t nretired;
	uint64_t booting_at;	/* ms we last sent it BOOTING */
	uint64_t ready_at;	/* ms we last sent it RDMA_READY */
	uint32_t ready_sent;	/* RDMA_READYs sent to this incarnation */
};

/* srnicd's node and its processes: where DPDK keeps the memory they share
 * (EAL --file-prefix, --huge-dir, --base-virtaddr). */
struct srnic_eal_memory {
	char prefix[64];
	char huge_dir[128];
	char base_va[24];
};

/* engine.c: fill m (the strings are cut to fit). */
void srnic_eal_memory_set(struct srnic_eal_memory *m, const char *prefix,
			  const char *huge_dir, const char *base_va);

/* A multicast group some UD QPs of this process joined (control/mcast.c).
 * Changed by engine calls, so the process's datapath reads it without a
 * lock. */
struct srnic_mcast_group {
	uint8_t gid[16];
	uint32_t id;		/* on the wire (dst_ipv4) */
	uint8_t kind;		/* SRNIC_MCAST_IPV4 or _IPV6 */
	uint32_t nqp;		/* 0: a free entry */
	uint32_t qpn[SRNIC_MAX_MCAST_QPS];
};

/* A multicast group some process of the node joined: which ones (a bit a
 * slot).  Changed under the node's mcast_lock as processes join and
 * leave; read without it by whoever polls the ports, to pass each
 * datagram to the member processes.  A read that races a change can only
 * pass one to a process that has just left, which drops and counts it. */
struct srnic_node_group {
	uint8_t gid[16];
	uint32_t id;		/* on the wire (dst_ipv4) */
	uint8_t kind;
	uint32_t procs;		/* bit per slot; 0: a free entry */
};

/* A FIFO of QPs through their fifo_next[id] links. */
struct srnic_qp_fifo {
	struct srnic_qp *head, *tail;
};

/* An operation the datapath core runs for another thread. */
struct srnic_call {
	void (*fn)(struct srnic_engine *eng, struct srnic_call *c);
	void *arg;
	const void *arg2;
	void *arg3;
	int result;
	uint32_t done;
};

struct srnic_stats {
	uint64_t drops[SRNIC_DROP_MAX];
	uint64_t retransmits;	/* messages sent again (timeout, RNR) */
	uint64_t sack_resent;	/* packets sent again on a SACK */
	uint64_t sacks_sent;
	uint64_t probes;	/* last packets sent again to ask for a SACK */
	uint64_t read_rerequests; /* READ ranges asked for again */
	uint64_t atomics;	/* atomic operations run (responder) */
	uint64_t srtt_us, rto_us;	/* of the QP that sampled last */
	uint64_t uc_give_up_us;
	uint64_t rnr_naks_sent;
	uint64_t acks_sent;
	/* integration */
	uint64_t booting_sent;
	uint64_t boot_acks;	/* BOOT_ACKs received: the peer forgot us */
	uint64_t boot_naks;	/* BOOT_ACKs received: it had nothing */
	uint64_t boot_answers;	/* BOOT_ACKs we sent */
	uint64_t qps_cleared;	/* QPs failed: their peer restarted */
	/* control core: frames of a peer's older process (late or
	 * replayed) that it refused to learn from */
	uint64_t ctl_refused;
	/* flow control */
	uint64_t fc_blocked;	/* a QP ran out of credit */
	uint64_t fc_lent;	/* ... and lent itself some after a wait */
	uint64_t tx_zero_copy;	/* frames sent from registered memory */
	/* ... still queued when an engine call came, and copied */
	uint64_t tx_settled;
};

/* stats.c: the node's counters, as a NIC's are the device's: in srnicd's
 * node those of every process, gone ones too, added up (srtt_us, rto_us
 * and uc_give_up_us, a QP's last sample, as the highest of them). */
void srnic_stats_node(const struct srnic_engine *eng, struct srnic_stats *t);
/* ... and add one process's to t. */
void srnic_stats_add(struct srnic_stats *t, const struct srnic_stats *st);

#define SRNIC_TOKEN_HUNGRY_US 2000
#define SRNIC_TOKEN_LEAVE_US 1000

/* Processes one node (srnicd) takes; slot 0 is srnicd's own engine. */
#define SRNIC_MAX_PROCS 32
/* A process's EAL lcore id is this plus its slot: each has mempool caches
 * of its own in the node's pools (srnicd's is its CPU's, below). */
#define SRNIC_PROC_LCORE0 16
/* The DPDK memzone srnicd keeps the node in. */
#define SRNIC_NODE_MZ "srnic_node"

/* A process of the node, as srnicd and the process itself see it. */
struct srnic_proc {
	uint32_t live;		/* srnicd: the slot is taken */
	int32_t pid;
	char prog[32];
	struct rte_ring *rx;	/* frames for its QPs, from whoever polls */
	/* its engine's hand-offs (srnicd makes them, as it makes rx) */
	struct rte_ring *doorbell, *calls;
	/* its datapath's nap (the futex word is shared: another process's
	 * poller wakes it when it queues frames for it) */
	uint32_t sleeping;
	uint32_t wake;
	/* Its engine thread stepped aside: its application threads poll,
	 * and take queued frames themselves (no wake-up needed). */
	uint32_t aside;
	struct srnic_stats st;	/* its engine's counters */
	uint64_t port_polls;	/* its iterations that had the port token */
	uint64_t token_misses;	/* ... and that found it taken */
	uint64_t token_waits;	/* sleeps for it, frames to send */
	uint64_t token_hungry;	/* ... and times it asked for a turn */
	uint64_t rx_forwarded;	/* frames other pollers queued for it */
	uint64_t rx_ring_full;	/* ... and dropped: its ring was full */
};

/*
 * The node: what belongs to the adapter rather than to a process using it.
 * Its ports and their link state, the peers the control core learned, the
 * node's incarnation, its packet buffers, its multicast groups, and the
 * control core's rings.  The control core writes the peer and link state
 * and the datapath reads it; the datapath owns the ports' receive side
 * (polling, bye_gen, the fault injector, the counters).  Nothing in it
 * points into a process's engine: it is what srnicd will keep in memory
 * its processes share (today it is allocated with the one engine).
 */
struct srnic_node {
	uint32_t inc;
	struct rte_mempool *pool;
	struct rte_mempool *zc_pool;	/* small: zero-copy frames' mbufs */
	unsigned nports;
	struct srnic_port port[SRNIC_PORT_SLOTS];	/* SRNIC_PORT_LOOP last */
	struct rte_ring *loop;	/* loopback frames, flush to next receive */
	struct rte_ring *ctrl_rx;	/* datapath -> control: mbufs */
	struct rte_ring *ctrl_tx;	/* control -> datapath: mbufs */

	/* multicast groups some process here joined; mcast_gen counts
	 * changes, so the control core knows to program the ports' filters
	 * again */
	struct srnic_node_group mcast[SRNIC_MAX_MCAST_GROUPS];
	pthread_mutex_t mcast_lock;	/* shared and robust, as peer_lock */
	uint32_t mcast_gen;
	uint32_t mcast_programmed;	/* control core: gen programmed */

	/* peers: control core writes, everyone reads */
	struct srnic_peer peer[SRNIC_MAX_PEERS + 1];	/* SRNIC_PEER_SELF last */
	unsigned npeers;
	pthread_mutex_t peer_lock;

	/* the control core's and the file thread's life */
	uint32_t ctrl_stop;
	uint32_t hello_now;	/* ask the control core for HELLOs now */
	int8_t dev_active;	/* control core: any port up (-1: not yet
				 * looked at; the first look is no event) */
	pthread_t ctrl_thread;
	pthread_t files_thread;	/* files.c: stats and fault files */
	int ctrl_started, files_started;

	/* srnicd's node: its processes, which QP number is whose, and the
	 * token of port I/O (whoever holds it polls every port and queues
	 * each frame for the process whose QP it names).  Embedded: one
	 * process, slot 0, and no token. */
	uint8_t shared;
	uint32_t port_token;	/* 0, or the holder's slot + 1, with
				 * SRNIC_TOKEN_WAITERS when someone sleeps
				 * for it (port.c) */
	uint32_t closing;	/* srnicd stops: its processes poll no more */
	/* A process starved of the port token for SRNIC_TOKEN_HUNGRY_US
	 * (its slot + 1, or 0) and since when: the others leave it the token
	 * for up to SRNIC_TOKEN_LEAVE_US (port.c) */
	uint32_t hungry;
	uint64_t hungry_at;
	uint64_t apps_polled;	/* iterations an application thread of an
				 * attached process polled the ports in */
	/* TSC at the end of the last poll of every port (the datapath that
	 * polled them): a peer's frames sent since may still wait in a port,
	 * so the control core judges a silence only up to here */
	uint64_t ports_polled;
	struct srnic_proc proc[SRNIC_MAX_PROCS];
	uint32_t nprocs;	/* attached ones (srnicd writes) */
	uint32_t nprocs_most;	/* ... the most at once so far */
	uint32_t stopped_killed;	/* srnicd: processes it killed for
					 * being stopped with the port token */
	struct srnic_stats departed;	/* counters of processes gone */
	uint8_t qp_owner[SRNIC_MAX_QP];	/* slot + 1; 0: free */
};

/* The processes of the node whose QPs joined a group of wire id id (a bit
 * a slot; see struct srnic_node_group). */
static inline uint32_t srnic_node_group_procs(const struct srnic_node *node,
					      uint32_t id)
{
	uint32_t procs = 0, p;
	unsigned i;

	for (i = 0; i < SRNIC_MAX_MCAST_GROUPS; i++) {
		p = __atomic_load_n(&node->mcast[i].procs, __ATOMIC_ACQUIRE);
		if (p && node->mcast[i].id == id)
			procs |= p;
	}
	return procs;
}

/* A counter another thread (or process) bumps, read whole. */
static inline uint64_t srnic_cnt(const uint64_t *v)
{
	return __atomic_load_n(v, __ATOMIC_RELAXED);
}

/* A port's transmit buffer: frames a process queued since its last
 * flush.  Each process has its own for every port. */
struct srnic_txbuf {
	uint16_t n;
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
	uint32_t payload_max;	/* bytes of payload a frame can carry */
	/* Striping: one round of the rotation, ports repeated by weight and
	 * interleaved (srnic_stripe_plan). */
	uint8_t stripe[SRNIC_MAX_PORTS * SRNIC_MAX_WEIGHT];
	uint32_t stripe_len;
	uint32_t fc_grant;	/* credit each ACK grants (srnic_flow.h) */

	/* QPs by number; numbers below 16 are never used */
	struct srnic_qp *qp_tab[SRNIC_MAX_QP];
	uint32_t qpn_next;
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
	struct srnic_qp *timer_head;
	struct srnic_qp *timer_cursor;	/* where the next tick's slice starts */
	uint64_t next_tick;
	uint64_t tick_tsc;
	/* srnicd's node: when this process first found the port token taken
	 * with frames to send, not having had it since (0: it has) */
	uint64_t token_missed_at;
	/* The last receive poll left frames in a port's queue (it took a
	 * full burst): what a timer would call lost may be there. */
	bool rx_backlog;
	/* Frames for this process's QPs the receive poll took off the
	 * ports, decoded: sorted under the port token, handled once it is
	 * given back (dispatch.c). */
	uint16_t rx_kept;
	struct rte_mbuf *rx_kept_m[SRNIC_RX_KEPT];
	struct srnic_pkt rx_kept_pkt[SRNIC_RX_KEPT];
	/* UC: how long the oldest message may stall the ones behind it
	 * before it is given up (responder.c); widened by evidence, 0 until
	 * then: SRNIC_UC_GIVE_UP_US. */
	uint64_t uc_give_up_tsc;

	/* life (the nap's words: the engine's own, or its process's slot
	 * in the node when others must wake it) */
	uint32_t *sleeping;
	uint32_t *wake;
	uint32_t own_sleeping, own_wake;
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
};

/* A datagram (to a group) this node's current process sent. */
static inline bool srnic_sent_here(const struct srnic_engine *eng,
				   const struct srnic_pkt *pkt)
{
	return pkt->src_ipv4 == eng->cfg.ipv4 && pkt->src_inc == eng->node->inc;
}

/* attach.c: a process joins srnicd's node (process side) */
/* Connect to srnicd if one serves the node (cfg.srnicd_socket): 1 and
 * the engine attached (mode, slot, lcore, EAL memory), 0 when none runs
 * (the engine stays embedded), or a negative errno with the reason in
 * err (srnicd refused, or spoke nonsense). */
int srnic_attach(struct srnic_engine *eng, char *err, unsigned errlen);
/* Whether srnicd, to which the process is attached, has gone (its end of
 * the socket closed). */
bool srnic_attach_gone(const struct srnic_engine *eng);
/* Let go of srnicd: it releases whatever the process held. */
void srnic_attach_close(struct srnic_engine *eng);
/* The engine's thread, every few ms, token or not: whether srnicd is
 * gone (fatal becomes SRNIC_FATAL_SEEN).  Then the next iteration, under
 * the token, fails every QP and reports DEVICE_FATAL, once
 * (srnic_attach_fail_all: SRNIC_FATAL_DONE). */
#define SRNIC_FATAL_SEEN 1
#define SRNIC_FATAL_DONE 2
void srnic_attach_check(struct srnic_engine *eng);
void srnic_attach_fail_all(struct srnic_engine *eng);

/* engine.c */
/* Run c at once if the datapath has not started (and keep it from
 * starting meanwhile); false when it runs, and c must go to it. */
bool srnic_engine_call_unstarted(struct srnic_engine *eng,
				 struct srnic_call *c);

/* datapath.c */
/* Run c under the datapath token and wait for it to finish. */
void srnic_engine_call(struct srnic_engine *eng, struct srnic_call *c);
/* The engine thread's loop, until eng->stop; it returns holding the token
 * (and eng->dp_abandoned says the datapath must not be touched again). */
void srnic_datapath_loop(struct srnic_engine *eng);
/* Wake the engine's thread if it naps. */
void srnic_datapath_wake(struct srnic_engine *eng);
/* ... or the datapath whose nap words these are (another process's). */
void srnic_wake(uint32_t *sleeping, uint32_t *wake);
/* The process exits from inside an iteration this thread runs (a signal
 * handler that calls exit): that iteration never ends, and the engine's
 * stop leaves the datapath, its ports and links untouched. */
void srnic_datapath_abandon(struct srnic_engine *eng);
void srnic_qp_lists_remove(struct srnic_engine *eng, struct srnic_qp *qp);
void srnic_doorbells_drain_all(struct srnic_engine *eng);

/* sched.c: the datapath's lists, which the roles join to get a turn */
void srnic_qp_activate(struct srnic_engine *eng, struct srnic_qp *qp);
/* An ACK (NAK, SACK, credit) to send at the end of this iteration. */
void srnic_qp_want_ack(struct srnic_engine *eng, struct srnic_qp *qp);
/* A plain ACK of a finished message: it may wait ack_delay_us for a packet
 * of this QP's own to follow (one each way per round trip of a ping-pong,
 * and fewer ACKs under a stream). */
void srnic_qp_want_ack_lazy(struct srnic_engine *eng, struct srnic_qp *qp);
void srnic_qp_cq_full(struct srnic_engine *eng, struct srnic_qp *qp);
void srnic_qp_timer_on(struct srnic_engine *eng, struct srnic_qp *qp);
void srnic_qp_timer_off(struct srnic_engine *eng, struct srnic_qp *qp);
struct srnic_qp *srnic_qp_lookup(struct srnic_engine *eng, uint32_t qpn);
/* state.c: a QP taken to the error state (or, UC and UD, its send queue):
 * marked, and given a turn on which its roles do their parts */
void srnic_qp_to_error(struct srnic_engine *eng, struct srnic_qp *qp);
void srnic_qp_to_sqe(struct srnic_engine *eng, struct srnic_qp *qp);
/* event.c: report an asynchronous event (srnic_engine_on_event) */
void srnic_event(enum srnic_event ev, void *handle);

/* port.c: port I/O */
void srnic_ports_prepare(const struct srnic_config *cfg);
void srnic_port_vdev_arg(const struct srnic_config *cfg, unsigned i,
			 char *out, size_t size);
void srnic_port_retry_start(struct srnic_engine *eng, unsigned i);
void srnic_port_restart(struct srnic_engine *eng, unsigned i);
#define SRNIC_PORT_RETRY_MS 250		/* a refused memif client start */
#define SRNIC_HANDSHAKE_MS 2000		/* what a memif handshake may take */
int srnic_ports_start(struct srnic_engine *eng, char *err, unsigned errlen);
void srnic_ports_stop(struct srnic_engine *eng);
uint16_t srnic_port_rx(struct srnic_engine *eng, unsigned p,
		       struct rte_mbuf **pkts, uint16_t n);
void srnic_port_tx(struct srnic_engine *eng, unsigned p, struct rte_mbuf *m);
bool srnic_port_tx_now(struct srnic_engine *eng, unsigned p,
		       struct rte_mbuf *m);
unsigned srnic_ports_flush(struct srnic_engine *eng);
/* srnicd's node: the token of port I/O (a try-lock; always had when the
 * node is the process's own). */
bool srnic_ports_take(struct srnic_engine *eng);
/* ... waiting for it up to wait_ms (0: as long as it takes: srnicd's
 * control core, to restart a port); false when it did not come. */
bool srnic_ports_hold(struct srnic_engine *eng, unsigned wait_ms);
/* Attached: a DPDK secondary maps a memif link's memory when it looks at
 * the link, and lets go of it when it sees it down; a link that came
 * back (its peer or srnicd restarted it) must be looked at again before
 * it is polled.  Under the process's datapath token, not the port
 * token (it may ask srnicd for the memory, which takes a while). */
void srnic_ports_remap(struct srnic_engine *eng);
/* The node's ports whose link is up. */
unsigned srnic_ports_up(const struct srnic_node *node);
/* The engine stops: what its transmit buffers hold goes if the token
 * comes within wait_ms, and is freed either way. */
void srnic_ports_flush_last(struct srnic_engine *eng, unsigned wait_ms);
void srnic_ports_give(struct srnic_engine *eng);
/* port_token's bit: someone sleeps for the token. */
#define SRNIC_TOKEN_WAITERS 0x80000000u
/* The port token is free again (its holder gave it back, or srnicd took
 * it from a process that died): whoever sleeps for it wakes. */
void srnic_port_token_free(struct srnic_node *node);
void srnic_ports_settle(struct srnic_engine *eng);
/* The port token held: the control core's frames into this process's
 * transmit queues (whoever holds the token sends them). */
void srnic_ports_take_control(struct srnic_engine *eng);
bool srnic_port_backlogged(const struct srnic_engine *eng, unsigned p);
int srnic_port_carrier(const struct srnic_port *port);
void srnic_ports_prefault_shared(void);

/* loop.c: the loopback port (SRNIC_PORT_LOOP), frames to this node */
int srnic_loop_start(struct srnic_engine *eng, char *err, unsigned errlen);
void srnic_loop_stop(struct srnic_engine *eng);
uint16_t srnic_loop_rx(struct srnic_engine *eng, struct rte_mbuf **pkts,
		       uint16_t n);
uint16_t srnic_loop_tx(struct srnic_engine *eng, struct rte_mbuf **pkts,
		       uint16_t n);

/* fault.c: delay and reorder received frames (the testbed's faults) */
uint16_t srnic_fault_rx(struct srnic_engine *eng, unsigned p,
			struct rte_mbuf **pkts, uint16_t got, uint16_t n);
void srnic_fault_drop(struct srnic_port *port);
void srnic_fault_poll(struct srnic_engine *eng);

/* Packet builders shared by requester, responder and completer. */
struct rte_mbuf *srnic_pkt_alloc(struct srnic_engine *eng,
				 const struct srnic_pkt *pkt,
				 const uint8_t dst_mac[6], unsigned p,
				 uint8_t **payload);
/*
 * As srnic_pkt_alloc, for a payload of pkt->pkt_len bytes that stays where
 * it is (registered memory, checked by the caller) until the port copies it
 * out: only for ports with zero_copy, and only for RC, whose WQEs complete
 * once the peer has their data (a frame still queued then is a duplicate,
 * which the peer drops whatever it carries).  Queued ones get copies of
 * their own before any engine call runs (srnic_ports_settle): after a
 * deregistration returns, the program may unmap the memory.
 */
struct rte_mbuf *srnic_pkt_alloc_ext(struct srnic_engine *eng,
				     const struct srnic_pkt *pkt,
				     const uint8_t dst_mac[6], unsigned p,
				     const uint8_t *payload);

/* stripe.c: which port a packet takes */
/* Pick the port for qp's next packet (weighted round-robin over live
 * paths, lossy ones only when nothing else is left); -1 when none can take
 * one now. */
int srnic_qp_pick_port(struct srnic_engine *eng, struct srnic_qp *qp);
/* The same for peer (NULL: a multicast group), rotating *rr. */
int srnic_stripe_pick(struct srnic_engine *eng, const struct srnic_peer *peer,
		      uint32_t *rr);
/* Lay out the rotation from the configured weights. */
void srnic_stripe_plan(struct srnic_engine *eng);
/* Whether any port reaches qp's peer (peer; NULL: any live port). */
bool srnic_qp_peer_reachable(const struct srnic_engine *eng,
			     const struct srnic_qp *qp);
bool srnic_stripe_reachable(const struct srnic_engine *eng,
			    const struct srnic_peer *peer);

/* decode.c: check (CRC), decode and, for a control frame under a cluster
 * key, authenticate a frame port p received; false, and the drop counted,
 * for one that is damaged, malformed, forged or not ours. */
bool srnic_rx_decode(struct srnic_engine *eng, unsigned p,
		     const struct rte_mbuf *m, struct srnic_pkt *pkt);

/* incarnation.c: the next incarnation of the node (boot count and random
 * bits); -1 with a reason in err when the boot count cannot be kept. */
int srnic_incarnation_draw(const struct srnic_config *cfg, uint32_t *inc,
			   char *err, unsigned errlen);

/* dispatch.c: receive */
unsigned srnic_rx_ports(struct srnic_engine *eng);

/* requester.c */
unsigned srnic_requester_run(struct srnic_engine *eng, struct srnic_qp *qp,
			     unsigned budget);

/* responder.c */
bool srnic_responder_rx(struct srnic_engine *eng, struct srnic_qp *qp,
			const struct srnic_pkt *pkt, struct rte_mbuf *m);
void srnic_responder_progress(struct srnic_engine *eng, struct srnic_qp *qp);
unsigned srnic_responder_reads(struct srnic_engine *eng, struct srnic_qp *qp,
			       unsigned budget);
void srnic_responder_send_ack(struct srnic_engine *eng, struct srnic_qp *qp);
void srnic_responder_reset(struct srnic_qp *qp);
void srnic_responder_flush(struct srnic_engine *eng, struct srnic_qp *qp);
/* UC: give up the oldest message if it has been stuck long enough */
void srnic_responder_uc_timer(struct srnic_engine *eng, struct srnic_qp *qp,
			      uint64_t now);
/* datagram.c: a datagram for UD QP qp */
void srnic_responder_datagram(struct srnic_engine *eng, struct srnic_qp *qp,
			      const struct srnic_pkt *pkt,
			      const uint8_t *group_gid);

/* completer.c */
void srnic_completer_ack(struct srnic_engine *eng, struct srnic_qp *qp,
			 const struct srnic_pkt *pkt);
void srnic_completer_read_resp(struct srnic_engine *eng, struct srnic_qp *qp,
			       const struct srnic_pkt *pkt,
			       const struct rte_mbuf *m);
void srnic_completer_timeouts(struct srnic_engine *eng, struct srnic_qp *qp,
			      uint64_t now);
unsigned srnic_completer_complete(struct srnic_engine *eng,
				  struct srnic_qp *qp);
void srnic_completer_flush_sq(struct srnic_qp *qp);
/* UC: an ACK brings credit, and nothing else */
void srnic_completer_credit(struct srnic_engine *eng, struct srnic_qp *qp,
			    const struct srnic_pkt *pkt);

/* stats.c */
/* A drop reason's name in the counters ("no_qp"...). */
const char *srnic_drop_name(enum srnic_drop d);
void srnic_stats_write(struct srnic_engine *eng);
/* files.c: the thread that writes and reads the node's files (it stops
 * with the control core, on ctrl_stop) */
int srnic_files_start(struct srnic_engine *eng);
void srnic_files_stop(struct srnic_engine *eng);

/* leave.c: leaving links so that the peer survives it */
void srnic_leave_answer(struct srnic_engine *eng, unsigned p);
void srnic_leave_links(struct srnic_engine *eng);

/* dispatch.c: srnicd's node, the port poller passes frame m, with one
 * more reference each, to the rings of the processes in the mask procs
 * (bit = slot), and wakes them; what could not go is counted. */
void srnic_procs_queue(struct srnic_engine *eng, uint32_t procs,
		       struct rte_mbuf *m);

/* dispatch.c: a datagram to a group, off a port (m, NULL in unit tests,
 * is its frame): to the node's other member processes; whether this one
 * has members too. */
bool srnic_mcast_forward(struct srnic_engine *eng, const struct srnic_pkt *pkt,
			 struct rte_mbuf *m);
/* datagram.c: ... and to this process's QPs in the group. */
void srnic_mcast_deliver(struct srnic_engine *eng, const struct srnic_pkt *pkt);

/* mcast.c: multicast groups */
/* What kind of multicast GID gid is (SRNIC_MCAST_IPV4, _IPV6 or 0: none),
 * and its wire id. */
uint8_t srnic_mcast_gid(const uint8_t gid[16], uint32_t *id);
/* Datapath (an engine call): UD QP qp joins, or leaves, the group of
 * (normalised) GID gid; 0 or -errno. */
int srnic_mcast_join(struct srnic_engine *eng, struct srnic_qp *qp,
		     const uint8_t gid[16]);
int srnic_mcast_leave(struct srnic_engine *eng, struct srnic_qp *qp,
		      const uint8_t gid[16]);
/* Datapath, while destroying QP qpn: it leaves every group. */
void srnic_mcast_forget_qp(struct srnic_engine *eng, uint32_t qpn);
/* srnicd: a process gone leaves every group. */
void srnic_mcast_release_proc(struct srnic_node *node, unsigned slot);
void srnic_mcast_program_ports(struct srnic_engine *eng);

/* control.c */
struct rte_mbuf *srnic_control_frame(struct srnic_engine *eng, uint8_t op,
				     unsigned p);
/* A control frame for one peer's incarnation dst_inc, on port p. */
struct rte_mbuf *srnic_control_frame_to(struct srnic_engine *eng, uint8_t op,
					unsigned p, const uint8_t dst_mac[6],
					uint32_t dst_inc, uint16_t flags);
struct srnic_peer *srnic_peer_find(struct srnic_engine *eng, uint32_t ipv4);

/* Whether inc is one of the peer's earlier incarnations. */
static inline bool srnic_peer_retired(const struct srnic_peer *peer,
				      uint32_t inc)
{
	unsigned i;

	for (i = 0; i < SRNIC_RETIRED; i++)
		if (__atomic_load_n(&peer->retired[i], __ATOMIC_RELAXED) == inc)
			return true;
	return false;
}

/*
 * Whether inc is an incarnation of the peer older than the one we know:
 * one we saw it leave behind, or one with a lower boot count (the high 16
 * bits, incarnation.c; compared as serial numbers).  A frame of an older
 * process is late or replayed, and must not act for the live one.
 */
static inline bool srnic_peer_older(const struct srnic_peer *peer,
				    uint32_t inc)
{
	uint32_t cur = __atomic_load_n(&peer->inc, __ATOMIC_ACQUIRE);

	return srnic_peer_retired(peer, inc) ||
	       (cur && inc != cur && (int16_t)((inc >> 16) - (cur >> 16)) < 0);
}

/* The peer table's lock.  In srnicd's node it is shared with attached
 * processes (modify_qp resolves GIDs under it) and robust: one killed
 * while it held it (it only reads) leaves it to the next taker. */
static inline void srnic_shared_lock(pthread_mutex_t *lock)
{
	if (pthread_mutex_lock(lock) == EOWNERDEAD)
		pthread_mutex_consistent(lock);
}

static inline void srnic_peer_lock(struct srnic_node *node)
{
	srnic_shared_lock(&node->peer_lock);
}

static inline void srnic_peer_unlock(struct srnic_node *node)
{
	pthread_mutex_unlock(&node->peer_lock);
}

/* integrate.c: the BOOTING / BOOT_ACK / RDMA_READY exchange */
void srnic_integrate_booting(struct srnic_engine *eng,
			     const struct srnic_pkt *pkt, unsigned p);
/* The forgetting part alone: QPs failed, or -1 for a stale BOOTING. */
int srnic_integrate_forget(struct srnic_engine *eng,
			   const struct srnic_pkt *pkt);
void srnic_integrate_rx(struct srnic_engine *eng, const struct srnic_pkt *pkt,
			unsigned p);
void srnic_integrate_new_incarnation(struct srnic_peer *peer);
void srnic_integrate_tick(struct srnic_engine *eng, uint64_t now);
/* Both directions done with the peer's current incarnation. */
bool srnic_peer_integrated(const struct srnic_peer *peer);
/* Whether RDMA from qp's peer may land here. */
static inline bool srnic_qp_peer_rdma_ok(const struct srnic_qp *qp)
{
	return __atomic_load_n(&qp->peer->ok_inc, __ATOMIC_ACQUIRE) ==
	       qp->peer_inc;
}
int srnic_control_start(struct srnic_engine *eng);
void srnic_control_stop(struct srnic_engine *eng);
struct srnic_peer *srnic_control_resolve(struct srnic_engine *eng,
					 const uint8_t gid[16],
					 unsigned wait_ms);

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

/* A frame in one segment: m itself, or a copy of it (m is freed); NULL,
 * counted as a drop, when no buffer is free. */
struct rte_mbuf *srnic_mbuf_linear(struct srnic_engine *eng,
				   struct rte_mbuf *m);
/* Copy len bytes of a (possibly chained) mbuf starting at off into dst. */
void srnic_mbuf_copy_out(const struct rte_mbuf *m, uint32_t off, void *dst,
			 uint32_t len);

static inline uint64_t srnic_now(void)
{
	return rte_get_tsc_cycles();
}

/* The 16-bit microsecond clock packets carry (ts, ts_echo): wraps every
 * 65 ms, plenty for a round trip; never 0, which means "none". */
static inline uint16_t srnic_ts16(const struct srnic_engine *eng)
{
	uint16_t t = (uint16_t)(srnic_now() / eng->tsc_per_us);

	return t ? t : 1;
}

/* Milliseconds of a monotonic clock: control-plane timekeeping. */
static inline uint64_t srnic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
