/* SPDX-License-Identifier: MIT */
/*
 * A queue pair as the engine holds it.  The application side (post_send,
 * post_recv) sees only its first part, struct srnic_qp_queues
 * (srnic_queue.h): the rings, their indices and locks; the provider holds
 * the rest by an opaque pointer and never includes this header.
 * Everything after "datapath only" belongs to the datapath (whichever
 * thread holds its token, datapath.c), the only writer of QP state
 * (modify_qp reaches it as an engine call).
 *
 * Message numbering: every send WQE becomes one message with a message
 * sequence number (MSN) starting at the QP's sq_psn; the responder expects
 * rq_psn, so a pair that exchanged PSNs the verbs way agrees.  Messages that
 * consume a receive WQE also carry a receive sequence number (SSN), which
 * picks the receive WQE even when packets arrive out of order.
 */
#ifndef SRNIC_QP_H
#define SRNIC_QP_H

#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>

#include "srnic_config.h"
#include "srnic_queue.h"
#include "srnic_track.h"

/* Messages a QP may have in flight each way: the responder's window. */
#define SRNIC_WINDOW 128

struct rte_mbuf;
struct srnic_peer;
struct srnic_group_send;

/* Requester progress of one send WQE (parallel to the SQ ring). */
enum srnic_swqe_state {
	SWQE_QUEUED,	/* not started */
	SWQE_SENDING,	/* packets going out */
	SWQE_WAITING,	/* all sent, waiting for ACK or READ data */
	SWQE_DONE,	/* ready to complete, status says how */
};

struct srnic_swqe_run {
	uint32_t msn;
	uint32_t txid;
	uint32_t ssn;
	uint32_t sent;		/* bytes sent in this attempt */
	uint64_t deadline;	/* TSC: resend if not finished by then */
	uint64_t probe_at;	/* TSC: the oldest message probes then */
	uint8_t state;
	uint8_t status;		/* enum srnic_wc_status once DONE */
	uint8_t retries;	/* timeouts in a row, since it last moved on */
	uint8_t rnr_retries;
	uint8_t resend_queued;
	uint8_t repair;		/* SRNIC_REPAIR_*: asked of the requester
				 * (not 0: on the QP's repair list) */
	/* A READ whose target completes it too (SRNIC_WR_NOTIFY): all its
	 * data landed, it waits for the target's READ_DONE_ACK */
	uint8_t done_wait;
	/* A READ whose question the target's program holds unanswered (its
	 * FIFO's RNR NAK to a probe) since its last timeout */
	uint8_t rnr_heard;
	uint32_t fc_high;	/* bytes already counted against credits */
	uint32_t sack_first;	/* the last SACK's first missing packet */
	uint32_t sack_missing;	/* ... and how many it named; 0: none yet */
	/* The holes a SACK's answer resent (bit k: packet
	 * sack_resent_first + k), and when (0: none to hold): a SACK naming
	 * them again within an RTO cannot know of those copies yet
	 * (requester.c, sack_held) */
	uint64_t sack_resent_at;
	uint64_t sack_resent_bits;
	uint32_t sack_resent_first;
	struct srnic_track rd;	/* READ: response packets landed */
	/* (not cleared with the rest when a message starts: read only under
	 * SRNIC_REPAIR_SACK, which is) */
	uint32_t sack_ask_first;	/* the SACK to answer: its first hole */
	uint64_t sack_ask_bits;		/* ... and the holes after it */
};

/*
 * What the completer asks the requester to send again for one message it
 * keeps in flight (the roles meet in the run, not by calling each other):
 * its last packet as a probe when it has waited a probe interval, the
 * packets a SACK named.  The requester sends them on its next turn.
 */
#define SRNIC_REPAIR_PROBE 0x1
#define SRNIC_REPAIR_SACK 0x2
#define SRNIC_REPAIR_DONE 0x4	/* a READ's READ_DONE (done_wait) */

/* Responder state of one incoming message, slot msn % SRNIC_WINDOW. */
enum srnic_rmsg_state {
	RMSG_FREE,
	RMSG_RECEIVING,
	RMSG_PLACED,	/* every byte landed; waits for its turn */
	RMSG_READ,	/* READ request waiting for earlier messages */
	RMSG_FAILED,	/* NAKed: access error or receive too short */
};

struct srnic_rmsg {
	uint32_t msn;
	uint32_t txid;
	uint32_t ssn;
	uint32_t msg_len;
	uint32_t imm;
	uint32_t rkey;		/* READ, atomics */
	uint32_t pd;		/* its memory's: the QP's, or (XRC target) its
				 * SRQ's */
	uint64_t va;		/* READ, atomics; a WRITE's first byte */
	uint64_t operand[2];	/* atomics: compare (or add), swap */
	uint16_t flags;		/* wire flags of the message */
	uint8_t xflags;		/* ... and its further flags (SRNIC_X_*) */
	uint8_t state;
	uint8_t opcode;
	uint8_t status;		/* RMSG_FAILED: srnic_wc_status of the recv */
	uint8_t nak;		/* RMSG_FAILED: syndrome sent */
	struct srnic_track trk;
	struct rte_mbuf *held;	/* the last byte's packet, placed last */
	uint64_t held_tsc;	/* ... kept since (given back after
				 * SRNIC_HELD_AGE_MS: responder/held.c) */
	uint64_t sack_tsc;	/* when we last said what it lacks */
};

/* A READ the responder is answering. */
struct srnic_read_job {
	uint32_t msn;
	uint32_t txid;
	uint32_t rkey;
	uint32_t len;		/* of the whole READ */
	uint64_t va;		/* of the READ's first byte */
	uint32_t sent;		/* offset of the next byte to send */
	uint32_t end;		/* the job ends before this offset */
	uint8_t shift;		/* the requester's packet size */
	uint8_t atomic;		/* the answer is value, not memory */
	/* Asked for again (the responder's reread): the requester may have
	 * all of it already, and its program may have unmapped the memory
	 * since; its copies are guarded (responder/read.c, mapped()). */
	uint8_t again;
	uint32_t pd;		/* the memory's (srnic_rmsg.pd) */
	uint64_t value;		/* atomics: the 8 bytes as they were */
	/* A third-party request's (responder/third_party.c): its answer is
	 * WRITE packets to the target, as message msn of the controller's
	 * QP there, not READ responses to the requester */
	uint8_t tp;
	uint8_t tp_probe;	/* its last packet flagged SRNIC_F_PROBE */
	uint32_t tp_ipv4, tp_inc, tp_qpn;	/* the target */
	uint32_t tp_ctl_inc, tp_ctl_qpn;	/* the controller */
	uint32_t tp_rkey, tp_ssn;
	uint32_t tp_rr;		/* its rotation over the target's ports */
	uint64_t tp_va;
};

/* What an atomic found, kept to answer a copy of its request without
 * running it twice (at most once); the last SRNIC_MAX_RD_ATOMIC. */
struct srnic_atomic_done {
	uint32_t msn;
	uint8_t valid;
	uint64_t value;
};

/* A SEND with invalidate that has begun and not completed: messages after
 * it must already find its key gone (SRNIC_INV_PENDING of them at once). */
#define SRNIC_INV_PENDING 4
struct srnic_inv_pending {
	uint32_t msn;
	uint32_t rkey;
};

struct srnic_qp_attr_rt {
	uint32_t dest_qpn;
	uint32_t sq_psn;
	uint32_t rq_psn;
	uint32_t peer_ipv4;
	uint32_t qkey;		/* UD: datagrams must carry this Q_Key */
	uint64_t timeout_tsc;	/* 0: none set */
	uint64_t rnr_tsc;	/* our min_rnr_timer, sent in RNR NAKs */
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	uint8_t path_shift;	/* log2(path MTU) */
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
};

/* The engine's QP FIFOs (datapath.c): each QP has a link in each. */
enum srnic_qp_fifo_id {
	SRNIC_FIFO_ACTIVE,
	SRNIC_FIFO_LAZY,
	SRNIC_QP_FIFOS
};

/*
 * Which port a QP's packets take: port/'s (stripe.c), which alone writes
 * it.  The cursor turns with each pick; the last packet's port and the
 * datapath iteration it went in let an ACK the responder owes go on the
 * same port, behind the data, not ahead of it on another.  Datapath only.
 */
struct srnic_qp_path {
	uint32_t cursor;	/* striping rotation */
	uint8_t sent_port;	/* the port of the last packet sent ... */
	uint64_t sent_epoch;	/* ... in this datapath iteration */
};

/*
 * The send side of a QP: the send queue's progress, which the requester
 * (starting WQEs, sending their packets) and the completer (ACKs, timers,
 * completions) share, as rxe's req and comp share the send queue; the
 * completer's requests of the requester go through the runs and the
 * repair list, not through calls.  Datapath only.
 */
struct srnic_qp_send {
	uint32_t sq_next;	/* next WQE to start */
	uint32_t sq_cur;	/* WQE being packetized when cur_busy */
	uint8_t cur_busy;
	uint8_t sq_stopped;	/* a WQE failed: start nothing more */
	uint8_t sq_wait;	/* the next WQE waits for earlier ones to
				 * finish (fence, READ limit, invalidation):
				 * idle until one does (done_count moves) */
	uint8_t inv_fence;	/* a SEND with invalidate is unresolved */
	uint32_t inv_fence_idx;	/* ... its WQE (RC) */
	uint32_t inv_fence_msn;	/* ... its message (UC) */
	uint32_t done_count;	/* WQEs finished, running count */
	uint32_t wait_done;	/* done_count when sq_wait was set */
	uint32_t next_msn;
	uint32_t next_ssn;
	uint32_t next_txid;
	uint32_t rd_inflight;	/* READs outstanding (max_rd_atomic) */
	uint64_t rd_progress;	/* TSC of the last READ response packet */
	uint32_t resend[SRNIC_WINDOW];	/* SQ indices to send again */
	uint32_t resend_head, resend_tail;
	uint32_t timer_idx;	/* the oldest unfinished WQE the timers saw */
	uint8_t timer_set;
	uint64_t srtt, rttvar, rto;	/* TSC; see srnic_rto.h */
	uint8_t rto_backoff;
	uint8_t fc_blocked;	/* out of credits (srnic_flow.h) */
	uint32_t fc_sent;	/* new data packets sent, running count */
	uint32_t fc_credit;	/* the responder lets us send below this */
	uint64_t fc_blocked_at;	/* TSC the credits ran out */
	uint32_t uc_acked;	/* UC: the responder resolved messages below */
	uint32_t uc_inflight;	/* UC: packets of messages not resolved */
	uint32_t uc_pkts[SRNIC_WINDOW];	/* UC: packets sent, by msn */
	uint64_t uc_heard_at;	/* UC: TSC of the responder's last ACK
				 * (0: none yet; srnic_flow.h) */
	uint32_t recv_limit;	/* UC, RC: the responder has receive WQEs
				 * posted below this receive number */
	uint8_t uc_recv_wait;	/* UC: fc_blocked for want of one */
	uint8_t rc_recv_wait;	/* RC: the next message waits for one
				 * (srnic_fc_rc_recv_open; counted once) */
	uint8_t recv_heard;	/* recv_limit is an ACK's, of msn: */
	uint32_t recv_msn;
	uint64_t rnr_until;	/* TSC: no new sends before this (RNR) */
	uint8_t ack_asking;	/* RC: WQE ack_ask_idx, filling half the
				 * send queue, asked for its ACK at once
				 * (SRNIC_X_ACK_REQ; until it completes,
				 * no other does for that reason) */
	uint32_t ack_ask_idx;
};

/*
 * The receive side: the responder's messages coming in, the READs and
 * atomics it answers, and what the ACK it owes says (when it goes is
 * sched/'s: on_ack, ack_lazy).  Datapath only.
 */
struct srnic_qp_recv {
	uint32_t exp_msn;	/* responder: all messages below are done */
	uint16_t nheld;		/* its slots' held last packets */
	uint64_t held_look_tsc;	/* when held.c last looked at their age */
	uint32_t exp_ssn;	/* receive sequence of rq_comp */
	uint32_t fc_landed;	/* data packets landed, running count */
	uint32_t fc_acked;	/* fc_landed when the last ACK went out */
	uint16_t ts_recent;	/* ts of the newest data packet, to echo */
	uint8_t ack_syndrome;	/* a NAK to send with the next ACK */
	uint32_t ack_nak_msn, ack_nak_txid;
	uint8_t ack_rnr_fifo;	/* ... an RNR NAK for a full FIFO (its wait:
				 * resp_rnr_timer) */
	/* A full FIFO (responder/fifo.c): the RNR NAKs for it since a packet
	 * of the QP's last went in, and the attempt last told (one NAK an
	 * attempt; fifo_naked: one was) */
	uint8_t fifo_rnr_streak;
	uint8_t fifo_naked;
	uint32_t fifo_nak_msn, fifo_nak_txid;
	uint8_t sack_due;	/* a SACK to send with the next ACK */
	uint8_t ack_asked;	/* RC: the requester asked for an ACK as soon
				 * as exp_msn passes ack_asked_msn */
	uint32_t ack_asked_msn;
	uint32_t uc_stuck_msn;	/* UC: the oldest message lacks packets while
				 * a later one is in, since uc_stuck_at */
	uint64_t uc_stuck_at;	/* TSC; 0: not stuck */
	uint64_t uc_stuck_away;	/* the engine's away_tsc then */
	uint64_t uc_stuck_ports_away;	/* ... and the node's ports_away */
	uint32_t uc_stuck_landed; /* its packets in then (progress) */
	/* UC: the newest message each port (slot: m->port, the loopback's
	 * too) brought a packet of, for ports with bit p in uc_ports: a
	 * port's frames come in the order they went, so one that brought a
	 * later message's packet holds none of an earlier one's
	 * (responder/uc.c, uc_ports_passed) */
	uint32_t uc_port_msn[SRNIC_PORT_SLOTS];
	uint16_t uc_ports;
	uint32_t uc_skew;	/* UC: receive numbers given-up messages took */
	/* UC: the messages the last give-up dropped, [from, to) until one
	 * of their packets comes after all (then empty: widened once) */
	uint32_t uc_gone_from, uc_gone_to;
	/* UC: when the last ACK goes again (0: not due), the msn it said
	 * and how often it went again (responder/uc.c, resp_uc_reack_arm) */
	uint64_t uc_reack_at;
	uint32_t uc_reack_msn;
	uint8_t uc_reacks;
	/* UC: the receive number the last ACK said WQEs are posted below
	 * (its credit), and whether the program's next post is to ring for
	 * another ACK (responder/uc.c, resp_uc_recv_credit) */
	uint32_t uc_recv_told;
	uint8_t uc_recv_watch;
	/* UC: whether the program posts receives (it did within
	 * SRNIC_UC_GONE_MS, as the ACKs saw rq_prod move: its last value
	 * and when), which its peer then waits for */
	uint8_t uc_rq_posting;
	uint32_t uc_rq_seen;
	uint64_t uc_rq_moved_at;
	uint8_t ninv;
	struct srnic_inv_pending inv[SRNIC_INV_PENDING];
	uint32_t sack_msn, sack_first;
	uint64_t sack_bits;
	struct srnic_rmsg *rmsg;	/* SRNIC_WINDOW slots */
	struct srnic_read_job rd_jobs[SRNIC_MAX_RD_ATOMIC];
	uint32_t rd_head, rd_tail;
	struct srnic_atomic_done atomic_done[SRNIC_MAX_RD_ATOMIC];
	uint32_t atomic_next;
	/* READs whose requesters asked for a completion here too
	 * (SRNIC_X_NOTIFY), in message order from their turns, until each
	 * is said READ_DONE and completes (responder/read_done.c) */
	struct srnic_read_told {
		uint32_t msn;
		uint32_t len;
		uint64_t va;
		uint32_t txid;	/* the attempt its READ_DONE named */
		uint8_t done;	/* READ_DONE heard, a completion to make */
	} rd_told[SRNIC_MAX_RD_ATOMIC];
	uint32_t rd_told_head, rd_told_tail;
	/* READs of a FIFO asked of its program and not answered yet
	 * (responder/fifo.c): a copy of one is not asked again */
	struct srnic_fifo_asked {
		uint32_t msn, txid, off, end;
		uint8_t live;
	} fifo_asked[SRNIC_MAX_RD_ATOMIC];
	uint32_t fifo_asked_next;
};

struct srnic_qp {
	struct srnic_qp_queues q;	/* the provider's view: first */

	/* engine, read-mostly */
	uint32_t pd;
	uint32_t access;		/* remote rights the QP grants */
	uint8_t xrc;			/* enum srnic_xrc_role */
	uint32_t xrcd;			/* SRNIC_XRC_TGT: its domain */
	/* SRNIC_XRC_TGT: the SRQ each receive WQE in q.rq came from (its
	 * CQ takes the completion), by ring slot; NULL: none there */
	struct srnic_srq **xrc_rq_srq;
	struct srnic_swqe_run *run;	/* one per SQ slot */
	/* UD: its multicast WRITE in flight (src/group; made with the
	 * first, datapath only) */
	struct srnic_group_send *gsend;
	/* A service's QP (engine/service.c): a client's (svc_ipv4 the
	 * service, svc_term the holder's term it is bound to (a member's:
	 * the term it was bound in), svc_resync:
	 * asking that holder to bind, nothing sent meanwhile) or a member's
	 * (svc_slot: its slot + 1, parked in INIT until a client binds it).
	 * Set by engine calls, then the datapath's. */
	uint32_t svc_ipv4;
	uint32_t svc_term;
	uint16_t svc_slot;
	uint8_t svc_resync;
	uint8_t svc_bound;	/* a member's, bound to a client (counted in
				 * its service's bound) */
	uint8_t svc_grace;	/* no holder heard lately, within
				 * svc_grace_ms: timeouts cost no retry */
	uint8_t svc_frozen;	/* a member's, frozen by its program
				 * (srnic_svc_freeze): new requests are
				 * dropped, for the next holder */
	uint64_t svc_resync_at;

	/* datapath only */
	struct srnic_qp_attr_rt at __attribute__((aligned(SRNIC_CACHE_LINE)));
	struct srnic_peer *peer;
	uint32_t peer_inc;
	struct srnic_qp_send snd;	/* requester and completer */
	struct srnic_qp_recv rcv;	/* responder */
	struct srnic_qp_path path;	/* port/ (stripe.c) */

	/* The engine's lists, which sched/ puts a QP on and the datapath
	 * loop (engine/datapath.c) takes it off: the FIFOs (active: has
	 * work; lazy: a deferred ACK), ack (ACK to send now), timer. */
	struct srnic_qp *fifo_next[SRNIC_QP_FIFOS];
	struct srnic_qp *ack_next;
	struct srnic_qp *timer_next, *timer_prev;
	uint8_t on_active, on_ack, on_lazy, on_timer;
	uint8_t ack_lazy;	/* the ACK owed may wait until ack_at */
	uint64_t ack_at;	/* TSC */
	uint8_t flush_pending;
	/* Taken to the error state (srnic_qp_to_error) since its last turn:
	 * its roles have yet to see it (the responder clears its messages,
	 * after the ACK still owed for what landed when ack_final). */
	uint8_t err_new;
	/* IBV_EVENT_QP_FATAL raised for it (srnic_qp_fatal_event: its peer
	 * restarted, a member's bound QP dropped): once */
	uint8_t fatal_told;
	uint8_t ack_final;
	uint8_t cq_wait;	/* a completion waits for CQ room */
	uint8_t destroyed;

	/* completer -> requester: SQ indices with run->repair (last: the
	 * hot fields above keep their cache lines) */
	uint32_t repair_head, repair_tail;
	uint32_t repair[SRNIC_WINDOW];
	/* Its next WQE waits on conditional queue cond_wait (an id; 0:
	 * none) for cond_op to hold against cond_value, on that queue's
	 * list through cond_next (sched/condq.c; rare: out of the hot
	 * lines). */
	uint16_t cond_wait;
	uint8_t cond_op;
	uint64_t cond_value;
	struct srnic_qp *cond_next;
};

/* RC: acknowledged, resent, flow-controlled.  UC and UD send and forget:
 * a send WQE completes once its packets are on their way. */
static inline bool srnic_qp_reliable(const struct srnic_qp *qp)
{
	return qp->q.type == SRNIC_QPT_RC;
}

/* Whether nothing of qp needs the timers: every send WQE done, no UC
 * message watched and no UC ACK to say again (responder/uc.c), no last
 * packet held (its age: responder/held.c), no loan owed to a requester
 * out of credit.  The completer and UC's timers take the QP off the timer
 * list then. */
static inline bool srnic_qp_timers_idle(const struct srnic_qp *qp)
{
	return qp->q.sq_comp == qp->snd.sq_next && !qp->rcv.uc_stuck_at &&
	       !qp->rcv.uc_reack_at && !qp->rcv.nheld && !qp->snd.fc_blocked;
}

/*
 * Send WQE idx is finished, with status: the completer turns it into a
 * completion when its turn comes.  The completer finishes what the peer
 * answered or the timers gave up on; the requester what it could not send
 * (its memory went), and the control core what a restarted peer will never
 * answer.
 */
static inline void srnic_swqe_finish(struct srnic_qp *qp, uint32_t idx,
				     uint8_t status)
{
	struct srnic_swqe_run *run = &qp->run[idx & qp->q.sq_mask];

	if (qp->snd.cur_busy && qp->snd.sq_cur == idx)
		qp->snd.cur_busy = 0;
	if (srnic_wr_reads(qp->q.sq[idx & qp->q.sq_mask].opcode) &&
	    run->state != SWQE_DONE && qp->snd.rd_inflight)
		qp->snd.rd_inflight--;
	srnic_track_fini(&run->rd);
	run->state = SWQE_DONE;
	run->status = status;
	qp->snd.done_count++;
	if (qp->snd.inv_fence && idx == qp->snd.inv_fence_idx)
		qp->snd.inv_fence = 0;	/* the invalidation is acknowledged */
	/* Nothing posted after a failed WQE may reach the peer: the QP is
	 * about to enter the error state, and those WQEs will be flushed. */
	if (status != SRNIC_WC_SUCCESS)
		qp->snd.sq_stopped = 1;
}

#endif
