/* SPDX-License-Identifier: MIT */
/*
 * What the responder's files share.  All of it runs on the datapath thread
 * of the process that owns the QP; nothing here is seen outside
 * responder/.
 *
 *   rx.c        one packet: the per-packet state machine, placement
 *   start.c     a message's first packet: the checks made once a message
 *   complete.c  messages complete in MSN order (receives, READ turns)
 *   read.c      READ and atomic answers, and requests for them again
 *   ack.c       ACK, NAK and SACK
 *   uc.c        UC: giving up messages that will not complete
 *   held.c      last packets held too long, given back
 *   recv.c      receive WQEs: SRQs, XRC targets, flush
 *   access.c    which domain a request's memory is checked in
 *   datagram.c  UD: a datagram is a message
 *   fifo.c      half-RDMA: WRITE packets appended to a FIFO's ring
 *   read_done.c completion at both ends, a READ's: READ_DONE
 */
#ifndef SRNIC_RESPONDER_INTERNAL_H
#define SRNIC_RESPONDER_INTERNAL_H

#include "srnic_responder.h"
#include "srnic_flow.h"
#include "srnic_recv.h"
#include "srnic_sge.h"

static inline int32_t seq_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

/* A last packet held, or given back: the QP's count, the process's, and
 * the node's (shared by its processes: srnic_node.h, held_total). */
static inline void held_count(struct srnic_engine *eng, struct srnic_qp *qp,
			      int d)
{
	qp->rcv.nheld += (uint16_t)d;
	eng->held += (uint32_t)d;
	__atomic_store_n(&eng->node->proc[eng->slot].held, eng->held,
			 __ATOMIC_RELAXED);
	__atomic_add_fetch(&eng->node->held_total, (uint32_t)d,
			   __ATOMIC_RELAXED);
}

/* A slot's held last packet, unplaced, given back to the pool. */
static inline void held_free(struct srnic_engine *eng, struct srnic_qp *qp,
			     struct srnic_rmsg *s)
{
	rte_pktmbuf_free(s->held);
	s->held = NULL;
	held_count(eng, qp, -1);
}

/* A slot's hold on the node's memory given back: the map of its packets,
 * and its held last packet (engine's held, map_budget). */
static inline void slot_forget(struct srnic_engine *eng, struct srnic_qp *qp,
			       struct srnic_rmsg *s)
{
	srnic_track_fini(&s->trk);
	if (s->held)
		held_free(eng, qp, s);
}

static inline void slot_clear(struct srnic_engine *eng, struct srnic_qp *qp,
			      struct srnic_rmsg *s)
{
	slot_forget(eng, qp, s);
	s->state = RMSG_FREE;
}

/* The drop counter an access check's verdict goes to. */
static inline void count_access(struct srnic_engine *eng,
				enum srnic_mem_check r)
{
	eng->st->drops[r == SRNIC_MEM_OUT_OF_BOUNDS ? SRNIC_DROP_OUT_OF_BOUNDS
		      : r == SRNIC_MEM_NO_RIGHTS   ? SRNIC_DROP_NO_RIGHTS
						   : SRNIC_DROP_BAD_KEY]++;
}

/* May the peer do this (right) to len bytes at (rkey, va)?  The QP must
 * grant the right and the region allow it; nothing to touch is fine. */
static inline enum srnic_mem_check
remote_check(const struct srnic_engine *eng, const struct srnic_qp *qp,
	     uint32_t pd, uint32_t rkey, uint64_t va, uint64_t len,
	     uint32_t right)
{
	if (!(qp->access & right))
		return SRNIC_MEM_NO_RIGHTS;
	return len ? srnic_mem_check_remote(&eng->mem, rkey, pd, qp->q.qpn,
					    va, len, right)
		   : SRNIC_MEM_OK;
}

/*
 * Invalidation in message order: a SEND with invalidate revokes its key
 * when it completes, but a later WRITE may land before that (packets land
 * as they come).  Until then the key counts as gone already for any
 * message after it; inv_forget ends that once the SEND is done with.
 */
static inline void inv_forget(struct srnic_qp *qp, uint32_t msn)
{
	unsigned i;

	for (i = 0; i < qp->rcv.ninv; i++)
		if (qp->rcv.inv[i].msn == msn) {
			qp->rcv.inv[i] = qp->rcv.inv[--qp->rcv.ninv];
			return;
		}
}

/* How a message's first packet went (start.c). */
enum resp_start {
	RESP_START_REFUSED,	/* slot left free, packet dropped (RNR...) */
	RESP_START_RECEIVING,	/* its packets land from now on */
	RESP_START_DECIDED,	/* a READ or atomic waiting its turn, or
				 * failed: advance() takes it from here */
};

/* access.c */
bool resp_request_pd(struct srnic_engine *eng, const struct srnic_qp *qp,
		     const struct srnic_pkt *pkt, uint32_t *pd,
		     struct srnic_srq **srq);

/* rx.c: a packet's bytes where they belong; RESP_FIFO_FULL for a FIFO's
 * packet the ring had no room for (dropped, not refused). */
enum resp_placed { RESP_PLACED, RESP_REFUSED, RESP_FIFO_FULL };
enum resp_placed resp_place(struct srnic_engine *eng, struct srnic_qp *qp,
			    struct srnic_rmsg *s, const struct srnic_pkt *pkt);

/* fifo.c: pkt (its key a FIFO's, checked) appended to the FIFO's ring;
 * RESP_FIFO_FULL when the ring had no room, RESP_REFUSED when its memory
 * was not there (counted, the key fenced). */
enum resp_placed resp_fifo_append(struct srnic_engine *eng,
				  struct srnic_qp *qp,
				  const struct srnic_pkt *pkt);
/* ... a WRITE's packet it had no room for: an RNR NAK (RC) */
void resp_fifo_full(struct srnic_engine *eng, struct srnic_qp *qp,
		    const struct srnic_pkt *pkt);
/* The wait an RNR NAK for a full FIFO asks for: the QP's min_rnr_timer,
 * twice as long for each such NAK in a row before this one, up to code 21
 * (15.36 ms), which a longer min_rnr_timer (0 is the longest, 655 ms)
 * gets at once.  (Codes two apart are twice the wait.)  A SEND's RNR NAK
 * asks for min_rnr_timer. */
static inline uint8_t resp_rnr_timer(const struct srnic_qp *qp)
{
	unsigned code = qp->at.min_rnr_timer, streak = qp->rcv.fifo_rnr_streak;

	if (!code || code >= 21)
		return 21;
	if (streak > 1)
		code += 2 * (streak - 1);
	return (uint8_t)(code > 21 ? 21 : code);
}
/* ... whether a READ of key (of pd) on qp, which grants remote READs, is
 * of a FIFO that takes READs: its requests go to the program
 * (resp_fifo_read_request), not to a job */
bool resp_fifo_reads(const struct srnic_engine *eng, const struct srnic_qp *qp,
		     uint32_t key, uint32_t pd);
/* ... READ msn (msg_len bytes at va, attempt txid, packets of 1 << shift)
 * asks for [off, end): a request record appended to the FIFO of key for
 * its program to answer (srnic_responder_fifo_answer), unless it has the
 * question and has not answered yet; a full ring drops it (counted: the
 * requester asks again). */
void resp_fifo_read_request(struct srnic_engine *eng, struct srnic_qp *qp,
			    uint32_t key,
			    uint32_t msn, uint32_t msg_len, uint64_t va,
			    uint32_t txid, uint8_t shift, uint32_t off,
			    uint32_t end);

/* start.c */
enum resp_start resp_start_message(struct srnic_engine *eng,
				   struct srnic_qp *qp, struct srnic_rmsg *s,
				   const struct srnic_pkt *pkt);

/* complete.c */
void resp_advance(struct srnic_engine *eng, struct srnic_qp *qp);
void resp_fail(struct srnic_engine *eng, struct srnic_qp *qp,
	       struct srnic_rmsg *s, uint8_t syndrome, uint8_t status);
void resp_fail_placement(struct srnic_engine *eng, struct srnic_qp *qp,
			 struct srnic_rmsg *s);

/* read.c */
bool resp_jobs_full(const struct srnic_qp *qp);
/* May the peer read [msg_off, end) of a READ-shaped request with right,
 * and is it mapped (read.c's mapped())?  False counted, for the caller's
 * access NAK. */
bool resp_range_readable(struct srnic_engine *eng, const struct srnic_qp *qp,
			 const struct srnic_pkt *pkt, uint32_t pd, uint32_t end,
			 uint32_t right);
/* A job for the range [msg_off, end) of a READ-shaped request asked for
 * again (its copies guarded), checked already: the QP is activated. */
struct srnic_read_job *resp_range_job(struct srnic_engine *eng,
				      struct srnic_qp *qp,
				      const struct srnic_pkt *pkt, uint32_t pd,
				      uint32_t end);
void resp_read_job_from_slot(struct srnic_engine *eng, struct srnic_qp *qp,
			     const struct srnic_rmsg *s);
void resp_reread(struct srnic_engine *eng, struct srnic_qp *qp,
		 const struct srnic_pkt *pkt);
void resp_reanswer_atomic(struct srnic_engine *eng, struct srnic_qp *qp,
			  const struct srnic_pkt *pkt);
bool resp_run_atomic(struct srnic_engine *eng, struct srnic_qp *qp,
		     struct srnic_rmsg *s);

/* complete.c: completion at both ends, a WRITE's or READ's (opcode
 * SRNIC_WC_TARGET_*) of len bytes at va into the QP's receive CQ, with no
 * receive WQE; false when that CQ has no room */
bool resp_target_cqe(struct srnic_qp *qp, uint8_t opcode, uint64_t va,
		     uint32_t len);
/* read_done.c: READ s, whose requester asked for a completion here too,
 * is told of when its READ_DONE comes; false when too many are already
 * (the requester overran its max_rd_atomic) */
bool resp_read_told(struct srnic_qp *qp, const struct srnic_rmsg *s);
/* ... the oldest ones whose READ_DONE came complete and are answered */
void resp_told_drain(struct srnic_engine *eng, struct srnic_qp *qp);

/* third_party.c: a third-party job's way to its target, its packets'
 * header, and its NAK to the controller */
int resp_tp_port(struct srnic_engine *eng, struct srnic_read_job *j,
		 const uint8_t **mac, bool *gone);
void resp_tp_header(struct srnic_pkt *pkt, const struct srnic_read_job *j);
void resp_tp_nak(struct srnic_engine *eng, struct srnic_qp *qp,
		 const struct srnic_read_job *j, uint8_t syndrome);

/* ack.c */
bool resp_nak(struct srnic_engine *eng, struct srnic_qp *qp, uint8_t syndrome,
	      uint32_t msn, uint32_t txid);
void resp_maybe_sack(struct srnic_engine *eng, struct srnic_qp *qp,
		     uint32_t below);
void resp_sack_slot(struct srnic_engine *eng, struct srnic_qp *qp,
		    struct srnic_rmsg *s, uint64_t now);

/* uc.c */
void resp_uc_give_up(struct srnic_engine *eng, struct srnic_qp *qp,
		     bool timed);
void resp_uc_watch(struct srnic_engine *eng, struct srnic_qp *qp);
bool resp_uc_stuck(const struct srnic_qp *qp);
bool resp_uc_jump(struct srnic_engine *eng, struct srnic_qp *qp,
		  const struct srnic_pkt *pkt);
/* A UC packet of message msn (not one done) came by port slot p. */
static inline void resp_uc_port_note(struct srnic_qp *qp, uint16_t p,
				     uint32_t msn)
{
	if (unlikely(p >= SRNIC_PORT_SLOTS))
		return;
	if (!(qp->rcv.uc_ports & (1u << p)) ||
	    seq_diff(msn, qp->rcv.uc_port_msn[p]) > 0) {
		qp->rcv.uc_port_msn[p] = msn;
		qp->rcv.uc_ports |= (uint16_t)(1u << p);
	}
}
void resp_uc_late(struct srnic_engine *eng, struct srnic_qp *qp,
		  uint32_t msn);
void resp_uc_reack_arm(struct srnic_engine *eng, struct srnic_qp *qp);
/* UC: an ACK's credit, receive WQEs posted below it; and the look, in the
 * QP's turn, at whether the program posted more since (uc.c) */
uint32_t resp_uc_recv_credit(struct srnic_engine *eng, struct srnic_qp *qp);
void resp_uc_recv_look(struct srnic_engine *eng, struct srnic_qp *qp);

/* recv.c */
bool resp_xrc_take(struct srnic_qp *qp, struct srnic_srq *srq, uint32_t ssn);
struct srnic_cq *resp_recv_cq_of(const struct srnic_qp *qp);
void resp_rq_done(struct srnic_qp *qp);

#endif
