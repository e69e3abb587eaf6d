/* SPDX-License-Identifier: MIT */
/*
 * The queues an application shares with the engine: send queue, receive
 * queue, completion queue.  Each is a power-of-two ring with one producer
 * and one consumer index:
 *
 *   SQ, RQ: the application produces work requests (under the QP's post lock,
 *           since verbs lets several threads post), the datapath consumes.
 *   CQ:     the datapath produces completions, the application consumes
 *           (under the CQ's poll lock).
 *
 * Indices are free-running 32-bit counters; a slot is index & mask.
 */
#ifndef SRNIC_QUEUE_H
#define SRNIC_QUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define SRNIC_MAX_SGE 16
#define SRNIC_MAX_INLINE 256
/* READs and atomics a QP may have outstanding each way */
#define SRNIC_MAX_RD_ATOMIC 16
#define SRNIC_CACHE_LINE 64
/* A QP number is an index into the node's QP table (0..15 are never
 * used) under 12 bits of the entry's generation (seed 002's rCxt key,
 * l.422-434): each QP an entry holds has the next generation, so a
 * packet still on its way to the entry's last QP (trickle traffic a
 * fabric held up) names a number no QP has now, and is dropped as
 * stale_qp instead of landing in the new one.  24 bits in all, as verbs
 * numbers are.  A service's QPs have generation 0 (the same number on
 * every member); every other QP's is 1 to 4095, its low two bits the
 * steering class of the process that owns it (srnic_qpn_class). */
#define SRNIC_QPN_INDEX_BITS 12
#define SRNIC_MAX_QP (1u << SRNIC_QPN_INDEX_BITS)
#define SRNIC_QPN_GENS (1u << (24 - SRNIC_QPN_INDEX_BITS))
/* Service QPs (docs/failover.md): slot s of a service is QP number
 * SRNIC_SVC_QPN_BASE + s on every member; other QPs are numbered below. */
#define SRNIC_SVC_QPN_BASE 0xF00
#define SRNIC_SVC_QP_SLOTS (SRNIC_MAX_QP - SRNIC_SVC_QPN_BASE)

/* The QP table entry a QP number names. */
static inline uint32_t srnic_qpn_index(uint32_t qpn)
{
	return qpn & (SRNIC_MAX_QP - 1);
}
/* XRC SRQ numbers: the process's slot in its node (the owner field of its
 * memory keys) above 12 bits of index (from 1), so that one process's
 * number never names another's SRQ on the node. */
#define SRNIC_XRC_SRQ_INDEX_BITS 12
#define SRNIC_MAX_XRC_SRQ (1u << SRNIC_XRC_SRQ_INDEX_BITS)
#define SRNIC_MAX_MCAST_GROUPS 64	/* groups a node joins */
#define SRNIC_MAX_MCAST_QPS 32		/* local QPs in one group */

/* Work request opcodes, as the engine knows them. */
enum srnic_wr_opcode {
	SRNIC_WR_SEND,
	SRNIC_WR_SEND_IMM,
	SRNIC_WR_WRITE,
	SRNIC_WR_WRITE_IMM,
	SRNIC_WR_READ,
	SRNIC_WR_ATOMIC_CAS,	/* compare-and-swap on 8 remote bytes */
	SRNIC_WR_ATOMIC_FAA,	/* fetch-and-add on 8 remote bytes */
	SRNIC_WR_SEND_INV,	/* SEND that invalidates the peer's key rkey */
	SRNIC_WR_LOCAL_INV,	/* invalidate our own key rkey, in order */
	SRNIC_WR_BIND_MW,	/* bind a memory window, in order: rkey its
				 * new key, remote_addr and compare_add its
				 * address and length, swap the region's key
				 * (low 32 bits) and the remote rights (high) */
	SRNIC_WR_ATOMIC_WRITE,	/* 8 bytes (inline_data) stored as one at 8
				 * aligned remote bytes: a WRITE to the
				 * responder, which needs no answer */
	SRNIC_WR_MC_WRITE,	/* UD: a multicast RDMA WRITE (srnic.h): rkey
				 * the group, remote_addr the offset in its
				 * regions (src/group sends it) */
	SRNIC_WR_TP_WRITE,	/* RC: a third-party WRITE (srnic.h): the
				 * source QP's peer writes length bytes at
				 * tp.src_rkey, tp.src_va of its memory to
				 * rkey, remote_addr of this QP's peer */
};

static inline bool srnic_wr_is_atomic(uint8_t op)
{
	return op == SRNIC_WR_ATOMIC_CAS || op == SRNIC_WR_ATOMIC_FAA;
}

/* What reads remote memory and so waits for its answer: READ, atomics. */
static inline bool srnic_wr_reads(uint8_t op)
{
	return op == SRNIC_WR_READ || srnic_wr_is_atomic(op);
}

#define SRNIC_WR_SIGNALED 0x1
#define SRNIC_WR_SOLICITED 0x2
#define SRNIC_WR_FENCE 0x4
#define SRNIC_WR_INLINE 0x8
/* Conditional RDMA (srnic.h; docs/conditional-rdma.md), RC and UC only:
 * the WQE's completion counts into queue cond.q, or the WQE starts only
 * once cond.q's cond.op holds against cond.value. */
#define SRNIC_WR_COUNTED 0x10
#define SRNIC_WR_COND 0x20
/* Half-RDMA's READ into a FIFO (srnic_post_fifo_read), RC only: sge[0]'s
 * key is a FIFO's of the QP's PD, and each packet of the answer is
 * appended to its ring as a record whose msn is imm (the program's tag),
 * not placed at an address. */
#define SRNIC_WR_FIFO 0x40
/* Completion at both ends (srnic.h's SRNIC_SEND_REMOTE_NOTIFY), an RC
 * WRITE's or READ's: its target completes it too (the wire's
 * SRNIC_X_NOTIFY). */
#define SRNIC_WR_NOTIFY 0x80

struct srnic_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/* UD: where a datagram goes.  Copied from the address handle into each
 * WQE at post time, since the handle may be destroyed while it waits. */
struct srnic_ud_addr {
	uint32_t qpn;
	uint32_t qkey;	/* high bit set: the sending QP's own Q_Key */
	uint32_t ipv4;	/* the destination node's, or its multicast group's
			 * id (srnic_mcast_mac) */
	uint16_t peer;	/* the node's index among the engine's peers */
	uint8_t mcast;	/* SRNIC_MCAST_IPV4 or _IPV6 for a group, else 0 */
	uint8_t svc;	/* a service's address: its entry in the node's
			 * services + 1, whose holder each datagram goes
			 * to (docs/failover.md); else 0 */
};

#define SRNIC_MCAST_IPV4 1
#define SRNIC_MCAST_IPV6 2

/* A send work request as posted; the engine keeps its progress elsewhere. */
struct srnic_swqe {
	uint64_t wr_id;
	uint64_t remote_addr;
	uint32_t rkey;		/* the remote key; SEND_INV, LOCAL_INV: the
				 * key to invalidate */
	uint32_t imm;		/* network order, as verbs hands it over */
	uint32_t length;	/* sum of the SGE lengths */
	uint8_t opcode;
	uint8_t flags;
	uint8_t num_sge;
	uint8_t reserved;
	uint64_t compare_add;	/* atomics: compare (CAS) or add (FAA) */
	uint64_t swap;		/* CAS: the new value */
	/* (a union: a WQE is 320 bytes, five cache lines, which the
	 * application writes and the datapath reads; four bytes more made
	 * every WQE straddle six, and ib_write_lat +0.2 us beside the
	 * commit before them, +0.1 with this: docs/performance.md) */
	union {
		struct srnic_ud_addr ud;	/* UD QPs */
		uint32_t xrc_srqn;	/* XRC initiator QPs: the remote SRQ */
		struct {		/* RC and UC: SRNIC_WR_COUNTED, _COND */
			uint16_t q;	/* the queue's id */
			uint8_t op;	/* enum srnic_condq_op */
			uint8_t pad[5];
			uint64_t value;
		} cond;
		struct {		/* RC: SRNIC_WR_TP_WRITE */
			uint32_t src_qpn; /* this node's QP to the source */
			uint32_t src_rkey;
			uint64_t src_va;
		} tp;
	};
	union {
		struct srnic_sge sge[SRNIC_MAX_SGE];
		uint8_t inline_data[SRNIC_MAX_INLINE];
	};
};

_Static_assert(sizeof(struct srnic_swqe) % SRNIC_CACHE_LINE == 0,
	       "a send WQE fills whole cache lines");

struct srnic_rwqe {
	uint64_t wr_id;
	uint32_t length;
	uint8_t num_sge;
	/* The datapath's: its CQ's early event went as its message began
	 * (srnic_cq_early), and which one it was (the CQ's early_seq, low
	 * 16 bits); the provider clears told as it posts. */
	uint8_t told;
	uint16_t told_no;
	struct srnic_sge sge[SRNIC_MAX_SGE];
};

/*
 * A shared receive queue: the application produces (under the lock, as
 * several threads may post), the datapath consumes.  The datapath never
 * places into it directly: it moves WQEs, in order, into the receive ring
 * of the QP whose next message needs one, so each QP still takes its
 * receives in its own message order.
 */
struct srnic_srq {
	pthread_spinlock_t lock;
	uint32_t prod;		/* application */
	uint32_t mask;
	uint32_t max_sge;
	uint32_t limit;		/* armed: an event once fewer are left */
	uint32_t users;		/* QPs on it */
	void *handle;		/* its creator's, for async events */
	struct srnic_rwqe *rq;
	/* XRC (srqn not 0): senders name it by srqn through any XRC target
	 * QP of its domain; its messages' memory is checked against pd and
	 * its receives complete into cq */
	uint32_t srqn;
	uint32_t xrcd;
	uint32_t pd;
	struct srnic_cq *cq;
	uint32_t cons __attribute__((aligned(SRNIC_CACHE_LINE))); /* datapath */
};

/*
 * Half-RDMA's FIFO (docs/half-rdma.md; seed 002 l.262-310): a ring of
 * records in the program's memory, registered as one region with
 * SRNIC_ACCESS_FIFO.  The responder appends each WRITE packet sent to the
 * ring's key as a record (responder/fifo.c), the completer each packet of
 * the answer to a READ posted into it (SRNIC_WR_FIFO), and the program
 * consumes them (srnic_fifo_next/done).  Offsets count bytes ever
 * appended or consumed; a record starts at prod % size, 8-byte aligned,
 * and never wraps: where one would not fit before the end, a record
 * marked SRNIC_FIFO_PAD fills the rest.
 */
#define SRNIC_FIFO_VALID 0x5eed0001u	/* a WRITE's packet */
#define SRNIC_FIFO_PAD 0x5eed0002u
#define SRNIC_FIFO_VALID_READ 0x5eed0003u /* the answer to a READ of ours */
#define SRNIC_FIFO_VALID_READ_REQ 0x5eed0004u /* a peer's READ to answer */

struct srnic_fifo_hdr {
	uint32_t valid;		/* SRNIC_FIFO_VALID, _VALID_READ or _PAD,
				 * written last (release); the program
				 * clears it */
	uint32_t pkt_len;	/* the payload's bytes, after this header */
	uint32_t qp_num;	/* the QP it came on */
	uint32_t src_qp;	/* ... from this QP of its peer */
	uint32_t msn;		/* its message */
	uint32_t msg_len;	/* the message's bytes */
	uint64_t msg_off;	/* where in the message the payload was */
};

/* A READ request's record (a FIFO that takes READs, SRNIC_ACCESS_FIFO
 * with SRNIC_ACCESS_REMOTE_READ): after the header (msn the READ's,
 * msg_len its length, msg_off the first byte asked for), what the
 * program needs to answer it (srnic_engine_fifo_answer). */
struct srnic_fifo_req {
	uint64_t va;		/* the address the requester named */
	uint32_t length;	/* bytes asked for, from msg_off */
	uint32_t txid;		/* the attempt the answer belongs to */
	uint8_t shift;		/* the answer's packets: 1 << shift bytes */
	uint8_t pad[7];
};

/* The program's answer to such a request, to FIFO key's: len bytes from
 * msg_off of READ msn (of msg_len bytes, attempt txid, packets of
 * 1 << shift) to peer QP src_qp, gathered from iov from its byte
 * iov_off. */
struct srnic_fifo_answer {
	uint32_t key, src_qp, msn, txid, msg_len, msg_off, len, iov_off;
	uint8_t shift;
	const struct iovec *iov;
	int iovcnt;
};

struct srnic_fifo_ring {
	uint64_t prod __attribute__((aligned(SRNIC_CACHE_LINE)));
	uint64_t records;	/* datapath: records appended */
	uint64_t full;		/* datapath: packets dropped, no room */
	uint64_t cons __attribute__((aligned(SRNIC_CACHE_LINE))); /* program */
	uint8_t data[] __attribute__((aligned(SRNIC_CACHE_LINE)));
};

/* A record's bytes in the ring: its header and payload, 8-aligned. */
static inline uint64_t srnic_fifo_rec_len(uint32_t pkt_len)
{
	return (sizeof(struct srnic_fifo_hdr) + pkt_len + 7) & ~(uint64_t)7;
}

/* Completion status and opcodes; the provider maps them to verbs'. */
enum srnic_wc_status {
	SRNIC_WC_SUCCESS,
	SRNIC_WC_LOC_LEN_ERR,
	SRNIC_WC_LOC_QP_OP_ERR,
	SRNIC_WC_LOC_PROT_ERR,
	SRNIC_WC_WR_FLUSH_ERR,
	SRNIC_WC_REM_INV_REQ_ERR,
	SRNIC_WC_REM_ACCESS_ERR,
	SRNIC_WC_REM_OP_ERR,
	SRNIC_WC_RETRY_EXC_ERR,
	SRNIC_WC_RNR_RETRY_EXC_ERR,
	SRNIC_WC_GENERAL_ERR,
	SRNIC_WC_MW_BIND_ERR,
};

enum srnic_wc_opcode {
	SRNIC_WC_SEND,
	SRNIC_WC_RDMA_WRITE,
	SRNIC_WC_RDMA_READ,
	SRNIC_WC_RECV,
	SRNIC_WC_RECV_RDMA_WITH_IMM,
	SRNIC_WC_COMP_SWAP,
	SRNIC_WC_FETCH_ADD,
	SRNIC_WC_LOCAL_INV,
	SRNIC_WC_BIND_MW,
	SRNIC_WC_ATOMIC_WRITE,
	SRNIC_WC_TARGET_WRITE,	/* the target's of a WRITE that asked
				 * (SRNIC_WR_NOTIFY) */
	SRNIC_WC_TARGET_READ,	/* ... of a READ that asked */
};

#define SRNIC_WC_F_IMM 0x1
#define SRNIC_WC_F_GRH 0x2	/* UD: a GRH heads the receive buffer */
#define SRNIC_WC_F_INV 0x4	/* the SEND invalidated key imm (host order) */
#define SRNIC_WC_F_SOLICITED 0x8 /* its sender asked for a solicited event */
#define SRNIC_WC_F_GRH_IPV6 0x10 /* ... an IPv6 header (an IPv6 group's
				  * datagram, or an IPv6 node's), else an
				  * IPv4 one */
#define SRNIC_WC_F_TOLD 0x20	/* its CQ's early event went as its message
				 * began: none as it completes (the engine's
				 * own; programs do not see it) */

/* What a UD receive buffer holds before the payload, as verbs has it. */
#define SRNIC_GRH_LEN 40

struct srnic_cqe {
	uint64_t wr_id;
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t byte_len;
	uint32_t imm;	/* network order */
	uint8_t status;
	uint8_t opcode;
	uint8_t flags;
	uint8_t vendor_err;
	uint32_t told_no;	/* SRNIC_WC_F_TOLD: its early event's number
				 * (srnic_rwqe_told) */
};

/* A CQ armed for one event (req_notify_cq): by the next completion, or by
 * the next solicited or failed one. */
#define SRNIC_CQ_ARM_ANY 1
#define SRNIC_CQ_ARM_SOLICITED 2
/* ... armed for any, the arm lent to a poll that lands a told message
 * itself (provider/cq.c's early_wait): no event while it is, the poll
 * takes what comes, and gives the arm back (or the program arms anew) */
#define SRNIC_CQ_ARM_LENT 3

struct srnic_cq {
	/* datapath side */
	uint32_t prod __attribute__((aligned(SRNIC_CACHE_LINE)));
	uint32_t armed;		/* SRNIC_CQ_ARM_*, or 0: the application
				 * arms, the datapath disarms as it tells */
	uint32_t early_seq;	/* early events so far (srnic_cq_early) */
	/* application side */
	uint32_t cons __attribute__((aligned(SRNIC_CACHE_LINE)));
	uint32_t empty_polls;
	pthread_spinlock_t lock;
	/* Early events, the polls' side (provider/cq.c): how many have had
	 * their completions taken (early_seq less this: messages told of
	 * and not yet polled), and those a poll gave up waiting for, the
	 * numbers after early_lapsed_from up to early_lapsed (lapsed:
	 * their completions make events as others do, and count for
	 * nothing here; srnic_cq_event). */
	uint32_t early_answered;
	uint32_t early_lapsed_from, early_lapsed;
	/* read-mostly */
	uint32_t mask __attribute__((aligned(SRNIC_CACHE_LINE)));
	uint32_t users;		/* QPs that complete into it */
	/* Early events (srnic_cq_set_early: seed 002's early interrupt):
	 * the armed CQ's event as an RC message that will complete into it
	 * begins, and until that completion is polled any poll that finds
	 * nothing waits for it, running the datapath early_us
	 * (provider/cq.c's early_wait); 0: off. */
	uint32_t early_us;
	struct srnic_cqe *ring;
	/* a completion channel's pipe (write end; -1: none) and what an
	 * event puts in it: the verbs CQ, as libibverbs' ibv_get_cq_event
	 * reads it back */
	int notify_fd;
	uint64_t notify_handle;
	/* the channel's count of events written to the pipe (the
	 * provider's: a thread that waits on the channel runs the datapath
	 * until it moves), or NULL */
	uint32_t *notify_seq;
	/* ... and the verbs CQ's own count of them (the provider's, or
	 * NULL) */
	uint32_t *notify_cq_seq;
	/* the channel's hand-over slot (the provider's, or NULL): while a
	 * thread waits for an event running the datapath itself, it holds
	 * SRNIC_CLAIM_WAITING, and the next event goes there instead of
	 * into the pipe (srnic_cq_tell) */
	uint64_t *notify_claim;
	/* Event moderation (ibv_modify_cq), set by an engine call: the
	 * armed CQ's event waits for mod_count completions, or for
	 * mod_period (TSC cycles) after the first of them.  Datapath side:
	 * the completions seen since the arming, when the period ends (0:
	 * not started: the engine's next timer tick starts it), and the
	 * engine's list of moderated CQs. */
	uint32_t mod_count;
	uint64_t mod_period;
	uint32_t mod_seen;
	uint64_t mod_due;
	struct srnic_cq *mod_next;
	bool mod_listed;
	/* A CQ that asks for completion times: CLOCK_MONOTONIC ns of each
	 * slot's completion as it was published, beside the ring (so a
	 * CQE stays 32 bytes: two to a cache line); NULL for the others.
	 * Set before any QP uses the CQ. */
	uint64_t *ts;
};

static inline uint32_t srnic_cq_room(const struct srnic_cq *cq)
{
	return cq->mask + 1 -
	       (cq->prod - __atomic_load_n(&cq->cons, __ATOMIC_ACQUIRE));
}

/* Datapath: the caller checked srnic_cq_room() first. */
static inline struct srnic_cqe *srnic_cq_slot(struct srnic_cq *cq)
{
	return &cq->ring[cq->prod & cq->mask];
}

/* A channel's hand-over slot: nobody waits there (IDLE), a thread waits
 * (WAITING), or it holds the verbs CQ of the event handed over. */
#define SRNIC_CLAIM_IDLE 0u
#define SRNIC_CLAIM_WAITING 1u

/*
 * The event: the verbs CQ to the thread that waits in the channel's slot,
 * if one does, or into the channel's pipe, counted.  The slot spares
 * that thread a write and libibverbs' read of the pipe, some 0.7 us on
 * this kind of machine, per event (provider/channel.c).
 */
static inline void srnic_cq_tell(struct srnic_cq *cq)
{
	uint64_t waiting = SRNIC_CLAIM_WAITING;

	if (cq->notify_claim &&
	    __atomic_load_n(cq->notify_claim, __ATOMIC_RELAXED) == waiting &&
	    __atomic_compare_exchange_n(cq->notify_claim, &waiting,
					cq->notify_handle, false,
					__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	/* (counted once it is in: a full pipe loses the event) */
	if (write(cq->notify_fd, &cq->notify_handle,
		  sizeof(cq->notify_handle)) != sizeof(cq->notify_handle))
		return;
	if (cq->notify_cq_seq)
		__atomic_add_fetch(cq->notify_cq_seq, 1, __ATOMIC_RELEASE);
	if (cq->notify_seq)
		__atomic_add_fetch(cq->notify_seq, 1, __ATOMIC_RELEASE);
}

/* Early events a told WQE's number tells apart (it keeps 16 bits). */
#define SRNIC_EARLY_NOS 65536u

/*
 * A message that will complete into cq begins (the datapath's, at its
 * first packet): the armed CQ's event now, if it asks for early ones;
 * whether it went (the message's receive WQE is marked told, and its
 * completion makes no event of its own: srnic_cq_event).  Not for a CQ
 * armed for solicited completions only (a first packet may not say),
 * nor a moderated one (its events count completions).
 */
static inline bool srnic_cq_early(struct srnic_cq *cq, uint16_t *no)
{
	uint32_t arm;

	if (!cq || !__atomic_load_n(&cq->early_us, __ATOMIC_RELAXED) ||
	    cq->notify_fd < 0 || cq->mod_listed)
		return false;
	arm = __atomic_load_n(&cq->armed, __ATOMIC_RELAXED);
	if (arm != SRNIC_CQ_ARM_ANY ||
	    !__atomic_compare_exchange_n(&cq->armed, &arm, 0, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return false;
	/* (before the event: the poll it wakes must see it) */
	*no = (uint16_t)(cq->early_seq + 1);
	__atomic_store_n(&cq->early_seq, cq->early_seq + 1, __ATOMIC_RELEASE);
	srnic_cq_tell(cq);
	return true;
}

/* A receive WQE whose CQ cq was told early completes as c: c says so, and
 * which event it was (the WQE keeps its low 16 bits: it is one of the
 * last 65,536 the CQ made); the WQE's mark goes (the datapath's). */
static inline void srnic_rwqe_told(struct srnic_rwqe *r, struct srnic_cqe *c,
				   const struct srnic_cq *cq)
{
	if (!r->told)
		return;
	r->told = 0;
	c->flags |= SRNIC_WC_F_TOLD;
	c->told_no = cq->early_seq -
		     (uint16_t)((uint16_t)cq->early_seq - r->told_no);
}

/* Whether told completion c's early event was given up on by a poll
 * (early_lapsed): its completion is then as any other.  (A give-up
 * SRNIC_EARLY_NOS events ago is forgotten: the numbers come round.) */
static inline bool srnic_cq_told_lapsed(const struct srnic_cq *cq,
					const struct srnic_cqe *c)
{
	uint32_t from = __atomic_load_n(&cq->early_lapsed_from,
					__ATOMIC_SEQ_CST);
	uint32_t upto = __atomic_load_n(&cq->early_lapsed, __ATOMIC_SEQ_CST);

	return c->told_no - from - 1 < upto - from &&
	       __atomic_load_n(&cq->early_seq, __ATOMIC_ACQUIRE) - upto <
		       SRNIC_EARLY_NOS;
}

/* The armed CQ's event, if the completion c calls for it: one 8-byte
 * write to the channel's pipe (or none, to a waiting thread's slot), and
 * the CQ is disarmed.  The datapath's, as
 * it publishes c; req_notify_cq's, for a c that came before the arming
 * (the compare-and-swap lets only one of them write).  A completion whose
 * early event went makes none, unless a poll gave up waiting for it
 * (early_lapsed): its program polls for it, and may have armed again
 * before that poll, which would otherwise take the completion of a
 * second event and leave that event with nothing behind it. */
static inline void srnic_cq_event(struct srnic_cq *cq,
				  const struct srnic_cqe *c)
{
	uint32_t arm = __atomic_load_n(&cq->armed, __ATOMIC_RELAXED);

	if (__builtin_expect(c->flags & SRNIC_WC_F_TOLD, 0) &&
	    !srnic_cq_told_lapsed(cq, c))
		return;
	if (!arm || arm == SRNIC_CQ_ARM_LENT ||
	    (arm == SRNIC_CQ_ARM_SOLICITED &&
	     !(c->flags & SRNIC_WC_F_SOLICITED) && !c->status))
		return;
	if (__atomic_compare_exchange_n(&cq->armed, &arm, 0, false,
					__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		srnic_cq_tell(cq);
}

/* The moderated CQ's event, once it is due (the datapath's): a call
 * for each completion that would make the event, and the engine's timer
 * tick (c NULL), which starts and ends the period. */
static inline void srnic_cq_moderated(struct srnic_cq *cq,
				      const struct srnic_cqe *c, uint64_t now)
{
	uint32_t arm = __atomic_load_n(&cq->armed, __ATOMIC_RELAXED);

	if (!arm || arm == SRNIC_CQ_ARM_LENT) {
		cq->mod_seen = 0;	/* (told, or not armed yet) */
		cq->mod_due = 0;
		return;
	}
	if (c) {
		if (arm == SRNIC_CQ_ARM_SOLICITED &&
		    !(c->flags & SRNIC_WC_F_SOLICITED) && !c->status)
			return;
		if (++cq->mod_seen < cq->mod_count || !cq->mod_count)
			return;
	} else {
		if (!cq->mod_seen || !cq->mod_period)
			return;
		if (!cq->mod_due) {
			cq->mod_due = now + cq->mod_period;
			return;
		}
		if (now < cq->mod_due)
			return;
	}
	cq->mod_seen = 0;
	cq->mod_due = 0;
	if (__atomic_compare_exchange_n(&cq->armed, &arm, 0, false,
					__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		srnic_cq_tell(cq);
}

static inline void srnic_cq_publish(struct srnic_cq *cq)
{
	const struct srnic_cqe *c = &cq->ring[cq->prod & cq->mask];

	if (__builtin_expect(cq->ts != NULL, 0)) {
		/* (the vDSO's clock: no system call where the kernel's
		 * clocksource is the TSC) */
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		cq->ts[cq->prod & cq->mask] =
			(uint64_t)now.tv_sec * 1000000000u +
			(uint64_t)now.tv_nsec;
	}
	__atomic_store_n(&cq->prod, cq->prod + 1, __ATOMIC_RELEASE);
	/* (a CQ with a channel only: the fence orders the completion's
	 * publishing before the look at armed, as req_notify_cq orders its
	 * arming before the application's next poll, so that a completion
	 * either shows in that poll or makes the event) */
	if (__builtin_expect(cq->notify_fd >= 0, 0)) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (cq->mod_listed)
			srnic_cq_moderated(cq, c, 0);
		else
			srnic_cq_event(cq, c);
	}
}

/* QP states and types, as the engine knows them. */
enum srnic_qp_state {
	SRNIC_QPS_RESET,
	SRNIC_QPS_INIT,
	SRNIC_QPS_RTR,
	SRNIC_QPS_RTS,
	SRNIC_QPS_SQD,
	SRNIC_QPS_SQE,
	SRNIC_QPS_ERR,
};

enum srnic_qp_type { SRNIC_QPT_RC, SRNIC_QPT_UC, SRNIC_QPT_UD };

/* XRC QPs (type RC): an initiator sends to SRQs of a peer's domain, named
 * in each WQE, and receives nothing; a target receives for every SRQ of
 * its domain and sends nothing, and has no CQs (each SRQ has its own). */
enum srnic_xrc_role { SRNIC_XRC_NONE, SRNIC_XRC_INI, SRNIC_XRC_TGT };

/*
 * A queue pair as the application side sees it: its two rings, their
 * indices, the post locks and what a post checks.  The engine's QP
 * (srnic_qp.h) begins with it and keeps its requester, responder and
 * completer state behind it, out of the provider's sight.  Producer
 * indices are the application's (under the post locks, as verbs lets
 * several threads post), consumer indices the datapath's; each side's on
 * a cache line of its own.
 */
struct srnic_qp_queues {
	pthread_spinlock_t sq_lock;
	pthread_spinlock_t rq_lock;
	uint32_t sq_prod __attribute__((aligned(SRNIC_CACHE_LINE)));
	uint32_t rq_prod;
	uint32_t db_armed;	/* set while on the engine's doorbell ring */
	uint32_t rq_bell;	/* UC: the engine waits for the next receive
				 * posted (responder/uc.c): it rings */

	/* read-mostly: set at creation, state by the engine */
	uint32_t qpn __attribute__((aligned(SRNIC_CACHE_LINE)));
	uint8_t type;		/* enum srnic_qp_type */
	uint8_t sq_sig_all;
	uint8_t accept_notify;	/* srnic_qp_accept_notify: WRITEs and
				 * READs whose requester asks complete
				 * here too */
	uint32_t sq_mask;
	uint32_t rq_mask;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;
	struct srnic_swqe *sq;
	struct srnic_rwqe *rq;	/* with an SRQ: filled by the datapath */
	struct srnic_srq *srq;
	struct srnic_cq *send_cq;
	struct srnic_cq *recv_cq;
	uint32_t state;		/* enum srnic_qp_state: read by post calls */
	void *handle;		/* its creator's, for async events */

	/* datapath: the next WQE of each ring to complete */
	uint32_t sq_comp __attribute__((aligned(SRNIC_CACHE_LINE)));
	uint32_t rq_comp;
};

static inline uint32_t srnic_qp_state(const struct srnic_qp_queues *q)
{
	return __atomic_load_n(&q->state, __ATOMIC_ACQUIRE);
}

/* Application: take up to n completions, and their times into ts (not
 * NULL: a CQ that keeps them); read before the slots are given back. */
static inline int srnic_cq_poll_ts(struct srnic_cq *cq, struct srnic_cqe *out,
				   uint64_t *ts, int n)
{
	uint32_t prod = __atomic_load_n(&cq->prod, __ATOMIC_ACQUIRE);
	uint32_t told = 0;
	int got = 0;

	while (got < n && cq->cons + got != prod) {
		out[got] = cq->ring[(cq->cons + got) & cq->mask];
		if (ts)
			ts[got] = cq->ts[(cq->cons + got) & cq->mask];
		told += (out[got].flags & SRNIC_WC_F_TOLD) &&
			!srnic_cq_told_lapsed(cq, &out[got]);
		got++;
	}
	__atomic_store_n(&cq->cons, cq->cons + got, __ATOMIC_RELEASE);
	/* (early events whose completions this poll took are answered:
	 * provider/cq.c's early_wait) */
	if (__builtin_expect(told, 0))
		__atomic_add_fetch(&cq->early_answered, told, __ATOMIC_RELEASE);
	return got;
}

/* Application: take up to n completions. */
static inline int srnic_cq_poll(struct srnic_cq *cq, struct srnic_cqe *out,
				int n)
{
	return srnic_cq_poll_ts(cq, out, NULL, n);
}

#endif
