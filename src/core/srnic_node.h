/* SPDX-License-Identifier: MIT */
/*
 * The node: what belongs to the adapter rather than to a process using it
 * (its ports, its peers, its packet pools, its processes, its multicast
 * groups, its counters), as every layer of the engine reads it, and the
 * clocks they keep time with.  Header only: the code that changes each
 * part lives in the layer that owns it (port/, control/, engine/).
 */
#ifndef SRNIC_NODE_H
#define SRNIC_NODE_H

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
#include "srnic_futex.h"
#include "srnic_wire.h"
#include "srnic_queue.h"
#include "srnic_tpt.h"

/* Processes one node (srnicd) takes; slot 0 is srnicd's own engine. */
#define SRNIC_MAX_PROCS 32
#define SRNIC_MAX_PEERS 64
/* The peer slot after the others is this node itself (loopback): no
 * control-core loop sees it (they stop at npeers), and a UD address names
 * it by index as any peer. */
#define SRNIC_PEER_SELF SRNIC_MAX_PEERS
#define SRNIC_POOL_SIZE 16383	/* packet buffers of a node */
/* What messages from the wire may hold at once: last packets kept until
 * the rest of their message lands (a quarter of the pool, for one process
 * and for all the node's together, so that processes flooded with forged
 * last packets, 128 a QP, cannot empty it), and one process's bitmaps of
 * packets (a 2 GiB message in 4 KiB packets takes 64 KiB). */
#define SRNIC_HELD_MAX (SRNIC_POOL_SIZE / 4)
#define SRNIC_HELD_AGE_MS 1000	/* ... held no longer (responder/held.c) */
#define SRNIC_MAP_BUDGET (64ull << 20)
#define SRNIC_BURST 32
#define SRNIC_TXBUF 256
/* An idle node's beat: its control core ticks and says HELLO this often
 * (control/control.c), and its datapath, asleep, reads the ports as
 * often (engine/datapath.c), since peers' HELLOs ring no bell. */
#define SRNIC_IDLE_TICK_MS 100

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
	SRNIC_DROP_CQ_FULL,	/* a datagram whose CQ had no room (or a
				 * multicast WRITE's last packet, its
				 * member's) */
	SRNIC_DROP_NO_GROUP,	/* multicast to a group nobody here joined */
	SRNIC_DROP_UC_GIVEN_UP,	/* UC messages given up: packets lost */
	SRNIC_DROP_UC_LATE,	/* packets of a UC message given up already:
				 * the give-up was early (it widens) */
	SRNIC_DROP_BAD_CRC,	/* integrity trailer wrong, or missing */
	SRNIC_DROP_BAD_AUTH,	/* control frame without the cluster key's
				 * MAC, or with a wrong one */
	SRNIC_DROP_UNMAPPED,	/* a READ asked again of memory still
				 * registered that its program unmapped */
	SRNIC_DROP_PAGE_FAULT,	/* a WRITE, READ or atomic that met a page
				 * not there (unmapped, or of an on-demand
				 * region), NAKed */
	SRNIC_DROP_BAD_XRC,	/* an XRC request naming no SRQ of the target
				 * QP's domain, or to a QP not an XRC target */
	SRNIC_DROP_NOT_MEMBER,	/* a multicast WRITE to a group this node
				 * holds no region for */
	SRNIC_DROP_KEY_FOREIGN,	/* an RDMA request at an adapter that did
				 * not issue its key, before the key's
				 * import (or refusal): resent, not NAKed */
	SRNIC_DROP_MC_SOURCES_FULL, /* a multicast WRITE of a new sender,
				 * every entry of its set in use */
	SRNIC_DROP_NO_RD_GRANT,	/* a READ or atomic to a QP whose program
				 * granted none (max_dest_rd_atomic 0) */
	SRNIC_DROP_OVER_BUDGET,	/* a message's first packet with no bitmap
				 * budget left, or a last packet to hold
				 * with SRNIC_HELD_MAX held: asked again */
	SRNIC_DROP_STALE_QP,	/* to a QP number whose table entry holds a
				 * later generation's QP now */
	SRNIC_DROP_FIFO_FULL,	/* a WRITE packet for a FIFO whose ring had
				 * no room: resent */
	SRNIC_DROP_TP_NO_TARGET, /* a third-party request whose target node
				  * this node does not reach (that
				  * incarnation of it): asked again */
	SRNIC_DROP_TP_BUSY,	/* ... while its QP's jobs were full */
	SRNIC_DROP_SVC_FROZEN,	/* a new request to a service's QP its
				 * program froze (srnic_svc_freeze): sent
				 * again to the next holder */
	SRNIC_DROP_BAD_IP,	/* IPv4 and UDP to srnic's port whose headers
				 * are wrong (encap = udp) */
	SRNIC_DROP_UNRESOLVED,	/* frames to a next hop ARP has not found
				 * yet (encap = udp): sent again */
	SRNIC_DROP_MISSTEERED,	/* a control frame on a steering class's own
				 * queue (port/steer.c: only class 0's carry
				 * them) */
	SRNIC_DROP_MAX
};

struct srnic_port_stats {
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes;
	/* (the fault injector's, for the counters: each class's are in
	 * struct srnic_fault_held) */
	uint64_t delayed;	/* frames the fault injector held back */
	uint64_t corrupted;	/* ... and the ones it flipped a bit in */
	uint64_t tx_full;	/* flushes the port did not take whole */
};

/* A steering queue's counters (struct srnic_port, q): the receive side's
 * written by the queue's poller, the transmit side's by its sender, each
 * on a line of its own (different processes). */
struct srnic_queue_stats {
	uint64_t rx_pkts, rx_bytes;
	uint8_t pad0[48];
	uint64_t tx_pkts, tx_bytes;
	uint64_t tx_dropped;	/* frames the queue could not take while the
				 * sender's buffer was backed up (a stopped
				 * receiver's queue) */
	uint8_t pad1[40];
};

/* A port's receive-side fault injector (src/port/fault.c): a FIFO of frames
 * held back, and bit flips.  The file thread writes hold, delay_tsc and
 * corrupt; each receiving class's part (held) is its poller's: the port
 * token's holders' for class 0, a steering class's own for c > 0, which
 * poll at once. */
#define SRNIC_FAULT_HOLD 1024	/* a power of two */
struct srnic_fault_held {
	uint64_t rng;		/* xorshift64 state */
	uint32_t head, tail;
	uint64_t delayed;	/* frames held back (the port's "delayed") */
	uint64_t corrupted;	/* ... and flipped a bit in */
	struct rte_mbuf *m[SRNIC_FAULT_HOLD];
	uint64_t due[SRNIC_FAULT_HOLD];	/* TSC at which m[i] goes on */
};
struct srnic_fault {
	uint64_t hold;		/* hold a frame when 32 random bits < hold */
	uint64_t corrupt;	/* flip a bit in it when 32 random bits <
				 * corrupt */
	uint64_t delay_tsc;
	struct srnic_fault_held held[SRNIC_MAX_CLASSES];
};

/*
 * A next hop's Ethernet address on one port (encap = udp: ARP,
 * control/arp.c).  The control core alone writes an entry, mac last (an
 * entry taken for another hop is first made unknown); a port's sender
 * reads ipv4, then mac (the port in it), then ipv4 again (udp.c).
 */
#define SRNIC_MAX_NEIGH 256	/* 64 peers on 4 ports, and gateways */
#define SRNIC_NEIGH_KNOWN (1ull << 63)
#define SRNIC_NEIGH_PORT_SHIFT 48
struct srnic_neigh {
	uint32_t ipv4;		/* host order; 0: a free entry (an IPv6
				 * node's: the hop's id, srnic_wire_ip6_id) */
	uint8_t port;
	uint8_t ip6[16];	/* an IPv6 node's: the hop's address, written
				 * before ipv4 (neighbour discovery's) */
	/* SRNIC_NEIGH_KNOWN, the port at SRNIC_NEIGH_PORT_SHIFT and the
	 * address in the low 48 bits; 0 while unknown */
	uint64_t mac;
	/* the control core's own */
	uint64_t asked_ms;	/* the last request sent for it */
	uint64_t heard_ms;	/* its last answer (or its own ARP) */
	uint32_t tries;		/* requests unanswered since */
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
	uint8_t shareable;	/* an attached (secondary) process can do
				 * its I/O: memif, tap */
	uint8_t zero_copy;	/* tx_burst copies frames out: payload may
				 * stay in registered memory */
	uint8_t crc;		/* frames carry and must carry a CRC-32C
				 * (never zero_copy: the frame is sealed
				 * whole, in one buffer) */
	char iface[16];		/* the kernel interface whose carrier is the
				 * port's (af_packet's iface, a tap's link) */
	struct srnic_port_stats st;
	struct srnic_fault fault;
	/* Steering (queues = N > 1, memif ports; docs/architecture.md,
	 * "Steering"): the port has nq = N*N queue pairs, queue s*N + r
	 * carrying class s's frames to class r.  Until the peer's HELLO says
	 * it has as many (steer, set by the control core, cleared when the
	 * link goes down), only queue 0 is used: a memif server's queues
	 * that its client did not connect alias queue 0's ring. */
	uint8_t nq;
	uint8_t steer;
	/* A tap whose kernel picks each frame's queue by its class (port/
	 * tun_steer.c): queue c is class c's, both ways; else (memif) queue
	 * s*N + r carries class s's frames to class r's (port/steer.c) */
	uint8_t kernel_steer;
	uint8_t steer_said;	/* the peer's queues a mismatch was said for
				 * (control core; 0 each life of the link) */
	/* ... class c bursts on its own queues (port/steer.c: a restart waits
	 * for none to) */
	uint8_t cls_busy[SRNIC_MAX_CLASSES];
	/* Each queue's frames, written by its one poller (receive) and its
	 * one sender (transmit); st counts the port token's holders' too. */
	struct srnic_queue_stats q[SRNIC_MAX_QUEUES];
};

/*
 * encap = udp: how well each path between us and a peer carries, on one
 * port (control/paths.c has the why).  Our frames to it: the ports'
 * senders number them per path (IPv4 identification), and spread them
 * over the paths by plan, which the control core lays out from the
 * weights it gives each path by the losses and delays the peer reports.
 * Its frames to us: the ports' receivers count them per path, and sum
 * how long they took (against ref), and the control core reads a path's
 * loss from the count against the numbers' advance, and its delay from
 * the sum.
 */
#define SRNIC_PATH_PLAN 64	/* slots of the plan: a path's share */
struct srnic_path_rx {
	uint32_t got;		/* frames counted (wraps) */
	uint16_t top;		/* the highest number seen */
	uint16_t pad;
	int64_t owd_sum;	/* data frames' one-way delays, us, each as
				 * it differs from ref (the clocks differ:
				 * 16 bits, signed), and */
	uint32_t owd_n;		/* how many (wraps) */
};
struct srnic_path_delays {	/* the control core's: a window's start */
	int64_t sum[SRNIC_UDP_PATHS];
	uint32_t n[SRNIC_UDP_PATHS];
	uint64_t at;		/* ms */
	uint8_t skip;		/* ref moved in this window: not read */
	uint8_t last[SRNIC_UDP_PATHS];	/* what the last one said */
};
struct srnic_path_window {	/* the control core's: the last sample */
	uint32_t got;
	uint16_t top;
	uint8_t loss;		/* 256ths, SRNIC_PATH_LOSS_NONE: unknown */
	uint8_t armed;		/* got and top are a window's start */
	uint64_t at;		/* ms the window started */
};
struct srnic_peer_paths {
	/* written by whoever holds the port (the port token), and by the
	 * steering classes on their own queues (atomic adds then: udp.c) */
	uint16_t tx_seq[SRNIC_UDP_PATHS];
	struct srnic_path_rx rx[SRNIC_UDP_PATHS];
	/* (the control core's: what the receivers take from a delay, so
	 * that the paths' sums stay clear of the 16-bit clock's wrap; and
	 * the receivers': the last delay, from which ref is first taken) */
	uint16_t owd_ref;
	uint16_t owd_last;
	struct srnic_path_delays dwin;
	/* the control core's: each path's weight (SRNIC_PATH_W_MIN to
	 * _MAX, the heaviest path's always _MAX; 0: not weighed yet, _MAX),
	 * when they last changed, the loss the peer last reported for each,
	 * and which reports are news since */
	uint16_t weight[SRNIC_UDP_PATHS];
	uint64_t weighed_at;
	uint8_t reported[SRNIC_UDP_PATHS];
	uint8_t fresh;
	uint8_t delayed[SRNIC_UDP_PATHS];	/* ... and the delays */
	uint8_t dfresh;
	struct srnic_path_window win[SRNIC_UDP_PATHS];
	/* the plan: slot i names the path of a frame whose turn is i (the
	 * control core writes, the ports' senders read); laid out for the
	 * paths of `planned` (0: none yet) */
	uint8_t plan[SRNIC_PATH_PLAN];
	uint8_t planned;
};
#define SRNIC_PATH_W_MAX 1024
#define SRNIC_PATH_W_MIN 64

/* A remote node as the control core knows it. */
struct srnic_peer {
	uint32_t ipv4;		/* its id: its IPv4 address, or of its IPv6
				 * one (srnic_wire_ip6_id) */
	uint8_t ip6[16];		/* an IPv6 node's address, written
					 * before ipv4 */
	uint32_t inc;			/* its current incarnation */
	uint8_t node_mac[6];
	char name[SRNIC_NAME_MAX];
	uint8_t mac[SRNIC_PORT_SLOTS][6]; /* its port on our port i's wire */
	uint8_t up[SRNIC_MAX_PORTS];	 /* heard from recently on port i */
	uint64_t last_seen[SRNIC_MAX_PORTS];
	/* Its HELLOs' interval as it last said (0: a node that does not
	 * say, HELLO_MS), and the longer one it said before, which still
	 * holds until wide_until (ms): control.c's peer_hello_ms. */
	uint16_t hello_ms;
	uint16_t hello_wide_ms;
	uint64_t hello_wide_until;
	/* How many of its HELLOs port i loses (per mille, a moving
	 * average); striping avoids a port that loses far more than the
	 * peer's best one (lossy). */
	uint32_t hello_seq[SRNIC_MAX_PORTS];	/* the next one expected */
	uint32_t hello_inc[SRNIC_MAX_PORTS];	/* ... from this incarnation */
	/* ... and which of the 64 before it came: bit i, hello_seq - 1 - i
	 * (a late one is news, a copy of one that came is not) */
	uint64_t hello_seen[SRNIC_MAX_PORTS];
	uint16_t hello_loss[SRNIC_MAX_PORTS];
	uint8_t lossy[SRNIC_MAX_PORTS];
	/* Port i has been quiet for a while although another port still
	 * hears the peer: striping avoids it until it is heard again. */
	uint8_t silent[SRNIC_MAX_PORTS];
	uint32_t silenced;	/* times one of its ports went silent */
	/* encap = udp: the paths (UDP source ports, SRNIC_UDP_PATHS)
	 * between us.  On port i: which of ours it says it hears (its
	 * HELLOs to us; 0: all), which the ports' senders spread their
	 * frames over (control core writes, the ports read); and when we
	 * last heard each of its (the control core's own). */
	uint8_t paths_ok[SRNIC_MAX_PORTS];
	uint64_t paths_at[SRNIC_MAX_PORTS];	/* ms it last said them */
	uint64_t path_heard[SRNIC_MAX_PORTS][SRNIC_UDP_PATHS];
	/* ... and how well each carries (control/paths.c): */
	struct srnic_peer_paths paths[SRNIC_MAX_PORTS];
	/* ms its last HELLO to this node alone came: it is sent HELLOs of
	 * its own too, as a configured peer is (control.c) */
	uint64_t unicast_ms;
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
	/* The multicast RDMA groups it holds a region for (its HELLOs' map:
	 * control core writes, the datapath reads). */
	uint64_t groups;
	/* Its adapters (HELLO): how many, and which one its port on our
	 * port i's link is of.  A QP of its adapter d (its QPN's table index
	 * % ndev == d) is reached on d's ports while any is up. */
	uint8_t ndev;
	uint8_t dev_on[SRNIC_MAX_PORTS];
	/* The protection table (control/tpt.c): its portion as last taken
	 * whole, the generation being gathered (n: its count; got: the
	 * entries in), and which generation of ours this incarnation of it
	 * acknowledged (control core writes; lookups read tpt). */
	struct srnic_tpt tpt;
	struct srnic_tpt tpt_in;
	uint64_t tpt_in_got;
	uint32_t tpt_acked;
	uint32_t tpt_acked_inc;	/* 0: none of ours yet */
	uint64_t tpt_sent_at;	/* ms ours last went to it */
	uint32_t tpt_sends;	/* ... times, to this incarnation */
};

/* A service (a failover address, docs/failover.md) as this node knows it:
 * one it is a member of (mine: its configuration's index), or one it
 * learned from the members' announcements (a client's view).  The control
 * core writes; anyone reads ipv4, holder and term. */
#define SRNIC_MAX_SVC_KNOWN 16
#define SRNIC_SVC_MEMBERS 8
struct srnic_svc_member {
	uint32_t ipv4;		/* 0: a free entry */
	uint8_t prio;
	uint64_t heard;		/* ms of its last announcement */
	/* Its announcements' numbers (control/service.c, announce_fresh):
	 * the last one taken from incarnation inc on its port p, valid
	 * where bit p of seq_seen is set. */
	uint32_t inc;
	uint32_t seq_seen;
	uint32_t seq[SRNIC_MAX_PORTS];
};
struct srnic_service {
	uint32_t ipv4;		/* the service's address; 0: a free entry */
	char name[SRNIC_NAME_MAX]; /* (a member's: its configuration's) */
	int8_t mine;		/* index in cfg.svc, or -1 */
	uint8_t holding;	/* this node holds it */
	uint8_t holder_prio;
	uint8_t mode;		/* SRNIC_SVC_GROUP or _SWITCH: its members' */
	uint8_t holder_bound;	/* the holder's QPs bound to clients (its
				 * announcements say) */
	/* This node's QPs of it bound to clients, by process slot: each
	 * process's datapath counts its own, and a process that goes
	 * without closing them (killed) has its count taken back with it
	 * (srnic_service_release_proc), or failback=expire would wait for
	 * connections nobody holds. */
	uint32_t bound_by[SRNIC_MAX_PROCS];
	uint32_t holder;	/* the holder's address (0: none known) */
	int16_t holder_peer;	/* ... its peer entry (SRNIC_PEER_SELF: this
				 * node), -1 none: where a datagram to the
				 * service goes */
	uint32_t term;		/* its term: counter << 8 | its address's low
				 * byte; the highest wins */
	uint64_t holder_heard;	/* ms */
	uint64_t since;		/* ms this node began to watch it */
	uint32_t takeovers;	/* terms this node claimed */
	uint32_t stepdowns;	/* ... and gave up to a higher one */
	uint32_t changes;	/* holders (or terms) it saw come */
	/* failback=manual: a program of this node asks the control core to
	 * stop holding it (srnic_svc_handover); the term it then released,
	 * which its announcements say until another holder shows */
	uint8_t handover;
	uint32_t released_term;
	uint32_t handovers;
	/* ... its bound QPs frozen (srnic_svc_freeze: a QP bound since
	 * freezes as it binds) until it is handed over or thawed; and the
	 * holder's release heard (the claim that follows says so) */
	uint8_t frozen;
	uint8_t holder_released;
	struct srnic_svc_member member[SRNIC_SVC_MEMBERS];
	/* The service as a peer (its group address on every port, the
	 * holder's incarnation and paths): what a client's QP and address
	 * handle send to, so every member hears the frames and only the
	 * holder takes them (seed 000's group mode).  The control core
	 * keeps it the holder's mirror. */
	struct srnic_peer peer;
};

/* srnicd's node and its processes: where DPDK keeps the memory they share
 * (EAL --file-prefix, --huge-dir, --base-virtaddr). */
struct srnic_eal_memory {
	char prefix[64];
	char huge_dir[128];
	char base_va[24];
};

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

struct srnic_stats {
	uint64_t drops[SRNIC_DROP_MAX];
	uint64_t retransmits;	/* messages sent again (timeout, RNR) */
	uint64_t retry_exceeded; /* WQEs failed: their retries ran out
				  * (timeouts or RNR), or the peer
				  * restarted */
	uint64_t sends_flushed;	/* send WQEs flushed unfinished: their QP
				 * went to the error state first */
	uint64_t sack_resent;	/* packets sent again on a SACK */
	uint64_t sack_held;	/* ... not sent again: resent within an RTO */
	uint64_t recv_credit_waits; /* RC messages that waited for their
				     * responder's receive credit */
	uint64_t sacks_sent;
	uint64_t probes;	/* last packets sent again to ask for a SACK */
	uint64_t read_rerequests; /* READ ranges asked for again */
	uint64_t read_dones_again; /* READ_DONEs said again, unanswered */
	uint64_t atomics;	/* atomic operations run (responder) */
	uint64_t fifo_read_reqs; /* READ requests a FIFO's program took */
	uint64_t fifo_answers;	/* ... and answers it sent (responder) */
	uint64_t srtt_us, rto_us;	/* of the QP that sampled last */
	uint64_t uc_give_up_us;
	uint64_t rnr_naks_sent;
	uint64_t acks_sent;
	uint64_t uc_acks_again;	/* UC ACKs said again, nothing new after */
	/* integration */
	uint64_t booting_sent;
	uint64_t boot_acks;	/* BOOT_ACKs received: the peer forgot us */
	uint64_t boot_naks;	/* BOOT_ACKs received: it had nothing */
	uint64_t boot_answers;	/* BOOT_ACKs we sent */
	uint64_t qps_cleared;	/* QPs failed: their peer restarted */
	/* control core: frames of a peer's older process (late or
	 * replayed) that it refused to learn from */
	uint64_t ctl_refused;
	/* ... frames of a new peer not learned: the peer table was full of
	 * peers heard within SRNIC_PEER_FORGET_MS (control/control.c) */
	uint64_t ctl_peers_full;
	/* ... frames whose IPv4 source is not the node they say they are
	 * from (encap = udp) */
	uint64_t ctl_addr_refused;
	/* ... an IPv6 node's frames that say a peer's id with another
	 * address (two addresses of one id: the second refused) */
	uint64_t ctl_id_clashes;
	/* ARP (control/arp.c, encap = udp) */
	uint64_t arp_asked;	/* requests sent */
	uint64_t arp_answered;	/* replies sent for the node's address */
	uint64_t arp_learned;	/* next hops' addresses found or changed */
	uint64_t arp_refused;	/* ARP frames not IPv4's over Ethernet, or
				 * not from a host */
	/* MLD (control/mld.c, an IPv6 node's) */
	uint64_t mld_reports;	/* reports of its solicited-node group */
	uint64_t mld_queries;	/* queries for it or every group heard */
	/* flow control */
	uint64_t fc_blocked;	/* a QP ran out of credit */
	uint64_t fc_lent;	/* ... and lent itself some after a wait */
	uint64_t tx_zero_copy;	/* frames sent from registered memory */
	/* ... still queued when an engine call came, and copied */
	uint64_t tx_settled;
	/* multicast RDMA WRITE (src/group) */
	uint64_t mc_writes;	/* messages the sender finished */
	uint64_t mc_packets;	/* new data packets sent to a group */
	uint64_t mc_repairs;	/* ... sent again to one member, unicast */
	uint64_t mc_bytes;	/* payload of both (what mc_writes moved
				 * once would be its length) */
	uint64_t mc_member_failed; /* members a message gave up on */
	uint64_t mc_placed;	/* packets a member placed */
	uint64_t mc_unicast;	/* ... that came as repairs, to it alone */
	uint64_t mc_acks;	/* ACKs a member sent */
	/* key migration (control/keys.c) */
	uint64_t keys_imported;	/* another adapter's keys taken in */
	uint64_t keys_refused;	/* keys no adapter issued */
	uint64_t keys_evicted;	/* ... or imported, unused for key_idle_ms */
	uint64_t key_import_ns;	/* the longest miss-to-import time, ns */
	uint64_t key_first_import_ns;	/* ... and the first's */
	/* service QPs (engine/service.c) */
	uint64_t svc_resyncs;	/* a client's SVC_RESYNCs sent */
	uint64_t svc_rebinds;	/* ... its QPs moved to a new holder */
	uint64_t svc_binds;	/* a member's QPs bound to a client */
	uint64_t svc_qps_dropped; /* ... failed: the service went on */
	uint64_t svc_stale;	/* SVC_ANNOUNCEs no newer than one taken */
	uint64_t svc_full;	/* ... of a new service not learned: the
				 * table was full of services heard lately
				 * or this node's (control/service.c) */
	/* third-party RDMA: requests a data source took (responder) */
	uint64_t tp_requests;
	/* robust placement: keys fenced after a copy met memory their
	 * program had unmapped (srnic_page_fault) */
	uint64_t fault_fenced;
	/* the protection table (control/tpt.c) */
	uint64_t tpt_sent;	/* TPT_UPDATEs sent */
	uint64_t tpt_taken;	/* peers' tables taken whole */
	uint64_t tpt_purged;	/* ... emptied: a new incarnation of it */
	uint64_t tpt_refused;	/* TPT frames of no integrated peer's
				 * current incarnation, or stale */
	uint64_t tpt_denied;	/* requests a peer's published table
				 * refused here (requester) */
};

#define SRNIC_TOKEN_HUNGRY_US 2000
#define SRNIC_TOKEN_LEAVE_US 1000

/* A process's EAL lcore id is this plus its slot: each has mempool caches
 * of its own in the node's pools (srnicd's is its CPU's, below). */
#define SRNIC_PROC_LCORE0 16
/* The DPDK memzone srnicd keeps the node in. */
#define SRNIC_NODE_MZ "srnic_node"

/* A process of the node, as srnicd and the process itself see it. */
struct srnic_proc {
	uint32_t live;		/* srnicd: the slot is taken */
	char prog[32];
	struct rte_ring *rx;	/* frames for its QPs, from whoever polls */
	/* its engine's hand-offs (srnicd makes them, as it makes rx) */
	struct rte_ring *doorbell, *calls;
	/* its datapath's nap (the futex word is shared: another process's
	 * poller wakes it when it queues frames for it); slot 0's is the
	 * node's sleeper's, whoever holds the node (srnicd, or an embedded
	 * engine): it polls the ports for everyone when all are idle */
	struct srnic_bell bell;
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
	uint64_t rx_stalled;	/* ... or it had stopped (rx_halted) */
	/* When it last looked at its ring (TSC; its own datapath's). */
	uint64_t rx_taken_at;
	/* srnicd found none of its threads able to run while frames waited
	 * (SRNIC_RX_STALL_*); it clears this when it looks again. */
	uint32_t rx_halted;
	/* Its share of the node's held_total (srnicd takes it back when the
	 * process goes: the buffers are lost, the budget is not). */
	uint32_t held;
};

/*
 * A process that has not looked at its ring for SRNIC_RX_STALL_MS, while
 * SRNIC_RX_STALL_FRAMES wait there, is looked at by srnicd
 * (srnicd/stopped.c): if none of its threads runs or waits for a core
 * (stopped, frozen, asleep), it gets no more frames until it looks again,
 * and pins that many of the node's packet buffers, not its whole ring's
 * worth (8,192, half the pool).  One that merely waits for a core gets
 * its whole ring: on two busy CPUs a process is off its core for 150 ms
 * and more, and what it is sent meanwhile (a window, 4,096 packets, for
 * each of its QPs: srnic_flow.h) must not be lost.
 */
#define SRNIC_RX_STALL_MS 100
#define SRNIC_RX_STALL_FRAMES 512

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
/* The capture tap (src/port/tap.c, control/capture.c): copies of one
 * port's frames, in slots of the node's memory that the datapaths of its
 * processes fill and the node's file thread writes out. */
#define SRNIC_TAP_SLOTS 2048
#define SRNIC_TAP_SNAP 2048	/* bytes of a frame kept (a memif frame is
				 * at most a 4096-byte MTU's: its headers
				 * and the payload's first 1.9 KiB) */
#define SRNIC_TAP_RX 0
#define SRNIC_TAP_TX 1
#define SRNIC_BURST_MAX 512	/* frames one call of the tap copies */
struct srnic_tap_slot {
	uint64_t tsc;
	uint32_t len, caplen;
	uint16_t port;
	uint8_t dir;
	uint8_t data[SRNIC_TAP_SNAP];
};
struct srnic_tap {
	uint32_t ports;		/* bit p: port p is captured (0: off) */
	struct srnic_tap_slot *slots;
	struct rte_ring *free, *full;	/* slot numbers + 1 */
	uint64_t dropped;	/* frames no free slot took */
};

/* Whether port p's frames go to the tap: the only cost while it is off. */
static inline bool srnic_tap_on(const struct srnic_tap *t, unsigned p)
{
	return __builtin_expect(
		(__atomic_load_n(&t->ports, __ATOMIC_RELAXED) >> p) & 1, 0);
}

struct srnic_node {
	uint32_t inc;
	struct rte_mempool *pool;
	struct rte_mempool *zc_pool;	/* small: zero-copy frames' mbufs */
	unsigned nports;
	struct srnic_port port[SRNIC_PORT_SLOTS];	/* SRNIC_PORT_LOOP last */
	struct rte_ring *loop;	/* loopback frames, flush to next receive */
	struct rte_ring *ctrl_rx;	/* datapath -> control: mbufs */
	struct rte_ring *ctrl_tx;	/* control -> datapath: mbufs */
	struct srnic_tap tap;		/* ./srnic capture */

	/* multicast groups some process here joined; mcast_gen counts
	 * changes, so the control core knows to program the ports' filters
	 * again */
	struct srnic_node_group mcast[SRNIC_MAX_MCAST_GROUPS];
	pthread_mutex_t mcast_lock;	/* shared and robust, as peer_lock */
	uint32_t mcast_gen;
	uint32_t mcast_programmed;	/* control core: gen programmed */
	/* Multicast RDMA WRITE: the process holding group g's region here
	 * (its slot + 1; 0: none), and the map HELLO announces.  Changed
	 * under mcast_lock, read by the ports' poller. */
	uint8_t group_owner[SRNIC_MAX_GROUPS];
	uint64_t groups;
	/* The regions this node's programs published (control/tpt.c):
	 * changed under mcast_lock, read by the control core and lookups. */
	struct srnic_tpt tpt;

	/* services: the ones this node is a member of and the ones it heard
	 * of (control core writes) */
	struct srnic_service svc[SRNIC_MAX_SVC_KNOWN];

	/* peers: control core writes, everyone reads */
	struct srnic_peer peer[SRNIC_MAX_PEERS + 1];	/* SRNIC_PEER_SELF last */
	unsigned npeers;
	pthread_mutex_t peer_lock;

	/* A UDP node's neighbours (control/arp.c writes, the ports read),
	 * and the next hop each port's sender last found none for (its
	 * datapath writes, the control core asks ARP of it). */
	struct srnic_neigh neigh[SRNIC_MAX_NEIGH];
	uint32_t neigh_want[SRNIC_MAX_PORTS];

	/* the control core's and the file thread's life */
	uint32_t ctrl_stop;
	uint32_t hello_now;	/* ask the control core for HELLOs now */
	/* The node's sleeper sleeps deeply (nothing timed, every port
	 * rings), said until it finds work other than the control core's
	 * frames (datapath.c's say_deep): the control core ticks less often
	 * meanwhile, on its bell, which a request for HELLOs now rings
	 * (srnic_hello_now), and so do the file thread and srnicd's main
	 * thread. */
	uint32_t dp_deep;
	/* srnicd's main thread sleeps its long poll (it found dp_deep), and
	 * a datapath that leaves its deep sleep wakes it (deep_left_fd);
	 * otherwise not: a busy node's datapath goes in and out of its deep
	 * sleep between bursts, 135 times a second in an 8-byte
	 * ib_write_bw, and each wake cost a turn of srnicd's main loop and
	 * a context switch on CPUs where datapaths spin */
	uint32_t main_long_poll;
	struct srnic_bell ctrl_bell;
	/* The loopback's bells: frames a process puts on it ring them as
	 * a far end's frames ring a memif link's (port/rxtx.c). */
	struct srnic_wire_end loop_end;
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
				 * for it (token.c) */
	uint32_t closing;	/* srnicd stops: its processes poll no more */
	/* A process starved of the port token for SRNIC_TOKEN_HUNGRY_US
	 * (its slot + 1, or 0) and since when: the others leave it the token
	 * for up to SRNIC_TOKEN_LEAVE_US (token.c) */
	uint32_t hungry;
	uint64_t hungry_at;
	uint64_t apps_polled;	/* iterations an application thread of an
				 * attached process polled the ports in */
	/* TSC as the last poll of every port began (the datapath that
	 * polled them): a peer's frames sent since may still wait in a port,
	 * so the control core judges a silence only up to here */
	uint64_t ports_polled;
	/* ... and the gaps between such polls longer than
	 * srnic_away_gap_tsc (a poller off its core with the port token
	 * held), summed: no frame reached any process of the node meanwhile
	 * (engine/dispatch.c) */
	uint64_t ports_away;
	/* Steering (queues): the node's classes (1: none), and which
	 * attached process has class c > 0 (its slot + 1, or 0): taken by
	 * the process as its engine starts, given back as it detaches, or
	 * by srnicd as it lets a dead one go (srnicd_proc_release). */
	uint8_t classes;
	uint32_t class_owner[SRNIC_MAX_CLASSES];
	struct srnic_proc proc[SRNIC_MAX_PROCS];
	uint32_t nprocs;	/* attached ones (srnicd writes) */
	uint32_t nprocs_most;	/* ... the most at once so far */
	uint32_t locks_stepped;	/* the node's shared locks stepped over:
				 * a holder stopped with one
				 * (control/shared_lock.c) */
	uint32_t lock_stuck_tid[2];	/* ... the thread last stepped over,
					 * peer_lock's and mcast_lock's, until
					 * the lock is taken again */
	uint32_t stopped_killed;	/* srnicd: processes it killed for
					 * being stopped with the port token */
	/* Last packets the node's processes hold (responder, hold_last),
	 * at most SRNIC_HELD_MAX. */
	uint32_t held_total;
	uint32_t foreign_frames;	/* srnicd: what a departed process's
					 * ring held that was no frame of the
					 * pool's (not freed), and rings whose
					 * header was changed (not read) */
	struct srnic_stats departed;	/* counters of processes gone */
	uint8_t qp_owner[SRNIC_MAX_QP];	/* slot + 1; 0: free */
	/* The generation of the QP each entry of the table last held (the
	 * high bits of its number); written by the process that takes the
	 * entry, which owning it serialises. */
	uint16_t qp_gen[SRNIC_MAX_QP];
};

/*
 * Steering: a QP's number says which class of its node owns it, so that a
 * sender picks the queue its frames reach the owner by (port/steer.c): the
 * low bits of its generation (srnic_queue.h), which step by
 * SRNIC_MAX_CLASSES from one QP of an entry to the next, keeping the
 * class of the process that takes it.  So any class may take any entry.
 * Services' and multicast numbers (entries from SRNIC_SVC_QPN_BASE) are
 * class 0's, and so is a class the node does not have.
 */
_Static_assert((SRNIC_MAX_CLASSES & (SRNIC_MAX_CLASSES - 1)) == 0 &&
		       SRNIC_QPN_GENS % SRNIC_MAX_CLASSES == 0,
	       "a QP number's class: the generation's low bits");

static inline unsigned srnic_qpn_class(unsigned classes, uint32_t qpn)
{
	uint32_t c = (qpn >> SRNIC_QPN_INDEX_BITS) & (SRNIC_MAX_CLASSES - 1);

	return srnic_qpn_index(qpn) < SRNIC_SVC_QPN_BASE && c < classes ? c
									: 0;
}

/* The generation an entry's next QP, of class cls, takes after gen: the
 * next one of that class, never 0 (the services'). */
static inline uint32_t srnic_qpn_next_gen(uint32_t gen, unsigned cls)
{
	gen = ((gen / SRNIC_MAX_CLASSES + 1u) * SRNIC_MAX_CLASSES + cls) %
	      SRNIC_QPN_GENS;
	return gen ? gen : SRNIC_MAX_CLASSES;
}

/* Whether port p carries steered frames now: all its queues connected. */
static inline bool srnic_port_steers(const struct srnic_port *port)
{
	return port->nq > 1 && __atomic_load_n(&port->steer, __ATOMIC_ACQUIRE);
}

/* The peers the node knows, never past the table: in srnicd's node an
 * attached process could write any number into npeers, and every loop
 * over the peers reads it. */
static inline unsigned srnic_npeers(const struct srnic_node *node)
{
	unsigned n = __atomic_load_n(&node->npeers, __ATOMIC_ACQUIRE);

	return n < SRNIC_MAX_PEERS ? n : SRNIC_MAX_PEERS;
}

/* Any thread: the peer of that address, NULL if none (peers are only
 * ever added, each before npeers counts it). */
static inline struct srnic_peer *srnic_node_peer(struct srnic_node *node,
						 uint32_t ipv4)
{
	unsigned i, n = srnic_npeers(node);

	for (i = 0; i < n; i++)
		if (node->peer[i].ipv4 == ipv4)
			return &node->peer[i];
	return NULL;
}

/* Any thread of an IPv6 node: peer's address into out, if the slot holds
 * the node of id id.  (A peer's slot may be taken for another node as it
 * is read: the copy counts only if it makes the id.) */
static inline bool srnic_peer_addr6(const struct srnic_peer *peer,
				    uint32_t id, uint8_t out[16])
{
	static const uint8_t none[16];

	if (!memcmp(peer->ip6, none, 16))
		return false;
	memcpy(out, peer->ip6, 16);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return srnic_wire_ip6_id(out) == id &&
	       __atomic_load_n(&peer->ipv4, __ATOMIC_ACQUIRE) == id;
}

/*
 * Any thread: whether peer's slot still holds the node of id id at
 * address a, which srnic_peer_addr6 found there before; no hash.  The
 * control core never gives a slot's id another address in place (learn:
 * it clears the id before it writes the address, and refuses a second
 * node of an id it knows), so the id read before and after an address
 * that is a says the slot held a in between (as a sequence lock's
 * reader).
 */
static inline bool srnic_peer_has6(const struct srnic_peer *peer,
				   uint32_t id, const uint8_t a[16])
{
	if (__atomic_load_n(&peer->ipv4, __ATOMIC_ACQUIRE) != id ||
	    memcmp(peer->ip6, a, 16))
		return false;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&peer->ipv4, __ATOMIC_RELAXED) == id;
}

/* Any thread of an IPv6 node: the address of the node of id id (a peer
 * heard, or a configured one not heard yet), false when none is known.
 * (The senders keep what they found, port/udp.c; a datagram's receiver
 * its last sender's, responder/datagram.c.) */
static inline bool srnic_node_addr6(struct srnic_node *node,
				    const struct srnic_config *cfg,
				    uint32_t id, uint8_t out[16])
{
	struct srnic_peer *peer = srnic_node_peer(node, id);

	return (peer && srnic_peer_addr6(peer, id, out)) ||
	       srnic_config_peer6(cfg, id, out);
}

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

static inline uint64_t srnic_now(void)
{
	return rte_get_tsc_cycles();
}

/* Milliseconds of a monotonic clock: control-plane timekeeping. */
static inline uint64_t srnic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
