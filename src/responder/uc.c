/* SPDX-License-Identifier: MIT */
/*
 * Responder, UC's give-up (datapath thread): a UC message that lost a
 * packet never completes, so the messages behind it must not wait for it
 * for ever.
 */
#include "responder_internal.h"
#include "srnic_rto.h"

/*
 * UC: nothing is resent, so a message that lost packets (or found no
 * receive WQE, or a bad key) never completes, and the messages behind it
 * must not wait for it for ever.  Once a later message is complete, the
 * oldest gets the give-up time more to finish (longer than packets of one
 * message fall behind another's across ports); then it is given up.
 *
 * How far one port's packets fall behind another's is the host's and the
 * wire's business: microseconds on a NIC, but on a busy host a veth pair
 * whose receive work waits for the next kernel tick holds packets for
 * milliseconds (measured with a CPU hog beside the sanitizer build's
 * uc_check: packets of given-up messages came 3.7 to 4.3 ms after their
 * message stalled, one 4 ms tick at HZ=250; a 2 ms time lost a message in
 * one run of six).  So the time starts at SRNIC_UC_GIVE_UP_US (four
 * ticks), and
 * widens, for the
 * whole engine (it is the ports' lag, not a QP's), each time a packet of
 * a message whose time ran out comes after all (`drop uc_late`; not one
 * of a message that failed, which is given up at once), as TCP's RACK
 * widens its reordering window on a DSACK.  It never narrows: a loss
 * then costs the messages behind it a longer wait, never a message.  And
 * a timer does not call a packet lost while frames still wait in a port's
 * receive queue or the process's ring (rx_backlog), for up to twice the
 * time from when they began to wait: an engine that did not run for a
 * while reads them before it judges.  Nor does the time the engine was
 * away (off its core: away_tsc) count toward a stall: the rest of the
 * message may wait in the sender's queue, full while nobody read here.
 */
#define UC_GIVE_UP_MAX_US 256000

/*
 * And a time runs out only on a message whose packets no port still holds
 * (uc_ports_passed): each port's frames come in the order the sender gave
 * them (one ring, one queue, one wire), so a port that brought a packet of
 * a later message has none of this one's left, and one that did not may
 * still be bringing them.  A sender's ports can fall far apart: in
 * e2e/14's off-core run a receiver back on its core found every odd packet
 * of two or three messages in a row (one port's) 20 to 120 ms behind the
 * even ones, which the give-up time took for lost (2 runs of about 60).
 * A port that brought nothing of the QP's last window counts as unused,
 * and so does one that went down or that the peer's striping left;
 * without word from a port that is used, a message waits
 * UC_GIVE_UP_MAX_US.  (That alone still gave up a message in 2 runs of
 * 72, a port silent 256 ms and more while the receiver read; with time
 * nobody polled the node's ports left out as well (uc_stalled), 105 runs
 * gave none up.)
 */
static bool uc_port_waited(const struct srnic_engine *eng,
			   const struct srnic_qp *qp, unsigned p)
{
	const struct srnic_peer *peer = qp->peer;

	if (p == SRNIC_PORT_LOOP)
		return true;
	/* (not one that went down, or that the peer's striping left) */
	return p < eng->node->nports &&
	       __atomic_load_n(&eng->node->port[p].polling, __ATOMIC_RELAXED) &&
	       (!peer || (__atomic_load_n(&peer->up[p], __ATOMIC_RELAXED) &&
			  !__atomic_load_n(&peer->silent[p], __ATOMIC_RELAXED) &&
			  !__atomic_load_n(&peer->lossy[p], __ATOMIC_RELAXED)));
}

static bool uc_ports_passed(const struct srnic_engine *eng,
			    const struct srnic_qp *qp, uint32_t msn)
{
	unsigned p;

	for (p = 0; p < SRNIC_PORT_SLOTS; p++) {
		int32_t d = seq_diff(qp->rcv.uc_port_msn[p], msn);

		if ((qp->rcv.uc_ports & (1u << p)) && d <= 0 &&
		    d > -SRNIC_WINDOW && uc_port_waited(eng, qp, p))
			return false;
	}
	return true;
}

static uint64_t uc_give_up_tsc(const struct srnic_engine *eng)
{
	return eng->uc_give_up_tsc ? eng->uc_give_up_tsc
				   : eng->tsc_per_us * SRNIC_UC_GIVE_UP_US;
}

/* A packet of a message behind exp_msn on a UC QP (which resends
 * nothing): one of the last given up came after all, the give-up was
 * early, and the time widens (once a give-up). */
void resp_uc_late(struct srnic_engine *eng, struct srnic_qp *qp,
		  uint32_t msn)
{
	uint64_t t = uc_give_up_tsc(eng);

	if (seq_diff(msn, qp->rcv.uc_gone_from) < 0 ||
	    seq_diff(msn, qp->rcv.uc_gone_to) >= 0) {
		eng->st->drops[SRNIC_DROP_DUPLICATE]++;
		return;
	}
	eng->st->drops[SRNIC_DROP_UC_LATE]++;
	qp->rcv.uc_gone_to = qp->rcv.uc_gone_from;
	t = 2 * t < eng->tsc_per_us * UC_GIVE_UP_MAX_US
		    ? 2 * t
		    : eng->tsc_per_us * UC_GIVE_UP_MAX_US;
	eng->uc_give_up_tsc = t;
	eng->st->uc_give_up_us = t / eng->tsc_per_us;
}
/* How far ahead a packet may be for uc_jump to follow it (messages). */
#define UC_JUMP_MAX (64 * SRNIC_WINDOW)

static bool slot_started(const struct srnic_qp *qp, uint32_t msn)
{
	const struct srnic_rmsg *s = &qp->rcv.rmsg[msn % SRNIC_WINDOW];

	return s->msn == msn && s->state != RMSG_FREE;
}

/* Is the oldest message stuck: not (all) in, while a later one has begun
 * to arrive?  (One that is in and waits for CQ room is not stuck.) */
bool resp_uc_stuck(const struct srnic_qp *qp)
{
	const struct srnic_rmsg *h = &qp->rcv.rmsg[qp->rcv.exp_msn % SRNIC_WINDOW];
	uint32_t m;

	if (slot_started(qp, qp->rcv.exp_msn) &&
	    (h->state != RMSG_RECEIVING || srnic_track_complete(&h->trk)))
		return false;
	for (m = qp->rcv.exp_msn + 1; seq_diff(m, qp->rcv.exp_msn) < SRNIC_WINDOW;
	     m++)
		if (slot_started(qp, m))
			return true;
	return false;
}

/* Packets of the oldest message so far (its progress). */
static uint32_t uc_head_landed(const struct srnic_qp *qp)
{
	const struct srnic_rmsg *h = &qp->rcv.rmsg[qp->rcv.exp_msn % SRNIC_WINDOW];

	return slot_started(qp, qp->rcv.exp_msn) ? h->trk.ndone + 1 : 0;
}

/* The oldest message's stall counts from now, and so does the time the
 * datapath is away (uc_stalled leaves that out). */
static void uc_stall_from(const struct srnic_engine *eng, struct srnic_qp *qp,
			  uint64_t now)
{
	qp->rcv.uc_stuck_at = now;
	qp->rcv.uc_stuck_away = eng->away_tsc;
	qp->rcv.uc_stuck_ports_away = __atomic_load_n(&eng->node->ports_away,
						      __ATOMIC_RELAXED);
}

void resp_uc_watch(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (qp->rcv.uc_stuck_at && qp->rcv.uc_stuck_msn == qp->rcv.exp_msn)
		return;
	uc_stall_from(eng, qp, eng->now);
	qp->rcv.uc_stuck_msn = qp->rcv.exp_msn;
	qp->rcv.uc_stuck_landed = uc_head_landed(qp);
	srnic_qp_timer_on(eng, qp);
}

/*
 * Move what landed of message s from the receive WQE it had to the one d
 * before it (which a given-up message left free), checked as any placement
 * is.  False when the new WQE is too small or fails its check.
 */
static bool uc_move_down(struct srnic_engine *eng, struct srnic_qp *qp,
			 struct srnic_rmsg *s, uint32_t d)
{
	const struct srnic_rwqe *from = srnic_recv_wqe(qp, s->ssn);
	const struct srnic_rwqe *to = srnic_recv_wqe(qp, s->ssn - d);
	int64_t room = srnic_sge_check_used(&eng->mem, qp->pd, to->sge,
					    to->num_sge,
					    SRNIC_ACCESS_LOCAL_WRITE,
					    s->msg_len);
	uint8_t chunk[2048];
	uint32_t off, n;

	if (room < s->msg_len)
		return false;
	/* (what has not landed yet is copied too, harmlessly: its packets
	 * land at the new place once s->ssn is moved) */
	for (off = 0; off < s->msg_len; off += n) {
		n = s->msg_len - off < sizeof(chunk) ? s->msg_len - off
						      : sizeof(chunk);
		if (srnic_sge_gather(&eng->mem, qp->pd, from->sge,
				     from->num_sge, off, chunk, n) ||
		    srnic_sge_scatter(&eng->mem, qp->pd, to->sge, to->num_sge,
				      off, chunk, n))
			return false;
	}
	return true;
}

/* Drop the state of every begun message in [exp_msn, to), and go on from
 * to. */
static void uc_drop_until(struct srnic_engine *eng, struct srnic_qp *qp,
			  uint32_t to)
{
	uint32_t m;

	for (m = qp->rcv.exp_msn; m != to; m++)
		if (slot_started(qp, m)) {
			eng->st->drops[SRNIC_DROP_UC_GIVEN_UP]++;
			slot_clear(eng, qp, &qp->rcv.rmsg[m % SRNIC_WINDOW]);
			inv_forget(qp, m);	/* (nothing invalidated) */
		}
	qp->rcv.uc_gone_to = qp->rcv.uc_gone_from;	/* (no give-up of the timer's) */
	qp->rcv.exp_msn = to;
}

/* Bytes a give-up may move down (uc_move_down) before it gives up what
 * begun after it instead: a loss must not stall the datapath. */
#define UC_MOVE_BUDGET (1u << 20)

/* Receive sequence numbers the messages up to and including s took,
 * from the oldest receive WQE on (a message carries the number of the
 * next receive WQE even when it takes none). */
static uint32_t ssns_through(const struct srnic_qp *qp,
			     const struct srnic_rmsg *s)
{
	return s->ssn + !!(s->flags & SRNIC_F_RECV_CQE) - qp->rcv.exp_ssn;
}

/* The messages to give up, [exp_msn, *to), and the receive sequence
 * numbers they took (*d); false when none has begun yet to go on from. */
static bool give_up_range(const struct srnic_qp *qp, uint32_t *to,
			  uint32_t *d)
{
	uint32_t m = qp->rcv.exp_msn;

	if (slot_started(qp, m)) {
		*to = m + 1;
		*d = ssns_through(qp, &qp->rcv.rmsg[m % SRNIC_WINDOW]);
		return true;
	}
	for (m++; seq_diff(m, qp->rcv.exp_msn) < SRNIC_WINDOW; m++)
		if (slot_started(qp, m)) {
			*to = m;
			*d = qp->rcv.rmsg[m % SRNIC_WINDOW].ssn - qp->rcv.exp_ssn;
			return true;
		}
	return false;
}

/* Whether moving the messages begun after `to` down d receive WQEs is
 * out of the question: more than UC_MOVE_BUDGET bytes, or numbers made
 * up.  *last is the last message begun. */
static bool too_much_to_move(const struct srnic_qp *qp, uint32_t to,
			     uint32_t d, uint32_t *last)
{
	/* Each message takes at most one receive WQE: anything else is a
	 * peer making numbers up, and everything begun goes. */
	bool over = d > to - qp->rcv.exp_msn;
	uint64_t moving = 0;
	uint32_t m;

	*last = to - 1;
	for (m = to; d && seq_diff(m, qp->rcv.exp_msn) < SRNIC_WINDOW; m++) {
		const struct srnic_rmsg *s = &qp->rcv.rmsg[m % SRNIC_WINDOW];

		if (!slot_started(qp, m))
			continue;
		*last = m;
		if ((s->flags & SRNIC_F_RECV_CQE) && s->opcode == SRNIC_OP_SEND &&
		    !over) {
			moving += s->msg_len;
			over = moving > UC_MOVE_BUDGET;
		}
	}
	return over;
}

/* Give up everything begun; go on after the last of it, as many receive
 * WQEs on as it says (if it is believable). */
static void give_up_all_begun(struct srnic_engine *eng, struct srnic_qp *qp,
			      uint32_t last)
{
	uint32_t d = slot_started(qp, last)
			     ? ssns_through(qp, &qp->rcv.rmsg[last % SRNIC_WINDOW])
			     : 0;

	if (d > last + 1 - qp->rcv.exp_msn)
		d = 0;
	uc_drop_until(eng, qp, last + 1);
	qp->rcv.uc_skew += d;
}

/* Give up [exp_msn, to); every message begun after moves its data d
 * receive WQEs down, into the ones the given-up messages left. */
static void give_up_and_move_down(struct srnic_engine *eng,
				  struct srnic_qp *qp, uint32_t to, uint32_t d)
{
	uint32_t m;

	uc_drop_until(eng, qp, to);
	for (m = to; d && seq_diff(m, qp->rcv.exp_msn) < SRNIC_WINDOW; m++) {
		struct srnic_rmsg *s = &qp->rcv.rmsg[m % SRNIC_WINDOW];

		if (!slot_started(qp, m))
			continue;
		/* (a target before the oldest receive WQE: numbers made up;
		 * it goes) */
		if ((s->flags & SRNIC_F_RECV_CQE) &&
		    seq_diff(s->ssn - d, qp->rcv.exp_ssn) < 0)
			resp_fail(eng, qp, s, SRNIC_NAK_INVALID,
				  SRNIC_WC_GENERAL_ERR);
		else if ((s->flags & SRNIC_F_RECV_CQE) &&
			 s->opcode == SRNIC_OP_SEND && s->state != RMSG_FAILED &&
			 !uc_move_down(eng, qp, s, d))
			resp_fail(eng, qp, s, SRNIC_NAK_INVALID,
				  SRNIC_WC_LOC_LEN_ERR);
		s->ssn -= d;
	}
	qp->rcv.uc_skew += d;
}

/*
 * Give up the oldest messages, up to the first one that has begun to
 * arrive (the oldest itself, if it had), and go on from there.
 *
 * Messages after them were mapped to receive WQEs counting the given-up
 * ones, which took d receive sequence numbers (the first later message
 * tells).  Those d WQEs stay for the messages after, as a UC responder
 * reuses the WQE of a message it dropped: every later message that begun
 * moves its data d WQEs down, and later packets' numbers are taken d lower
 * (uc_skew).  Receives so complete in order, in the WQEs they were posted
 * in, and a loss costs one message, not the window behind it.  (Unless
 * more than UC_MOVE_BUDGET bytes would move: then what begun goes too.)
 */
void resp_uc_give_up(struct srnic_engine *eng, struct srnic_qp *qp,
		     bool timed)
{
	uint32_t from = qp->rcv.exp_msn, to, d, last;

	if (!give_up_range(qp, &to, &d))
		return;	/* nothing to go on from yet */
	if (too_much_to_move(qp, to, d, &last))
		give_up_all_begun(eng, qp, last);
	else
		give_up_and_move_down(eng, qp, to, d);
	/* The messages the time ran out on (not those that failed, or went
	 * with them over the budget): one of their packets coming after all
	 * says the time was short (uc_late). */
	if (timed) {
		qp->rcv.uc_gone_from = from;
		qp->rcv.uc_gone_to = to;
	}
	qp->rcv.uc_stuck_at = 0;
	srnic_qp_want_ack(eng, qp);	/* (credit) */
	resp_advance(eng, qp);
	if (resp_uc_stuck(qp))
		resp_uc_watch(eng, qp);
}

/*
 * A packet of a message a window or more ahead: the messages before its
 * window will not come any more (their sender has gone on, lending itself
 * credit), so everything begun goes and the packet's message is the
 * oldest.  Its receive number says how many receive WQEs those took.
 * False when the number is impossible (more than a WQE a message).
 */
bool resp_uc_jump(struct srnic_engine *eng, struct srnic_qp *qp,
		  const struct srnic_pkt *pkt)
{
	uint32_t d = pkt->ssn - qp->rcv.uc_skew - qp->rcv.exp_ssn;

	/* (further than a sender lending itself credit gets in a while, or
	 * numbers made up: a stray packet, dropped) */
	if (pkt->msn - qp->rcv.exp_msn > UC_JUMP_MAX ||
	    d > pkt->msn - qp->rcv.exp_msn)
		return false;
	uc_drop_until(eng, qp, qp->rcv.exp_msn + SRNIC_WINDOW);
	qp->rcv.exp_msn = pkt->msn;
	qp->rcv.uc_skew += d;
	qp->rcv.uc_stuck_at = 0;
	srnic_qp_want_ack(eng, qp);
	return true;
}

/* How long the oldest message has stalled, less the time the datapath
 * was away meanwhile (away_tsc): a process off its core reads nothing,
 * and its peer, whose queue to it was full, sends the rest only once it
 * reads again.  Or less the time nobody polled the node's ports
 * (ports_away), if that was longer: the two are often the same gap (a
 * process off its core with the port token), never added. */
static uint64_t uc_stalled(const struct srnic_engine *eng,
			   const struct srnic_qp *qp, uint64_t now)
{
	uint64_t away = eng->away_tsc - qp->rcv.uc_stuck_away;
	uint64_t ports = __atomic_load_n(&eng->node->ports_away,
					 __ATOMIC_RELAXED) -
			 qp->rcv.uc_stuck_ports_away;
	uint64_t t = now - qp->rcv.uc_stuck_at;

	if (ports > away)
		away = ports;

	return t > away ? t - away : 0;
}

/* Nobody has polled the node's ports for a while (the port token's holder
 * off its core): what they hold is not known yet, and the gap counts as
 * time away once they are polled again (engine/dispatch.c, ports_gap).
 * A steering class reads its own queues itself, every iteration, and its
 * time off its core is its own time away: only a port it does not steer
 * on, whose frames class 0's pollers pass on, waits for them. */
static bool ports_unpolled(const struct srnic_engine *eng, uint64_t now)
{
	unsigned p;

	for (p = 0; eng->cls && p < eng->node->nports; p++)
		if (!srnic_port_own(eng, p))
			break;
	if (eng->cls && p == eng->node->nports)
		return false;
	return srnic_away_gap(eng,
			      __atomic_load_n(&eng->node->ports_polled,
					      __ATOMIC_RELAXED),
			      now) != 0;
}

void srnic_responder_uc_timer(struct srnic_engine *eng, struct srnic_qp *qp,
			      uint64_t now)
{
	bool same = qp->rcv.uc_stuck_msn == qp->rcv.exp_msn;
	uint64_t stalled;

	if (same && qp->rcv.uc_stuck_landed != uc_head_landed(qp)) {
		/* It is still coming in: another while from now. */
		qp->rcv.uc_stuck_landed = uc_head_landed(qp);
		uc_stall_from(eng, qp, now);
		return;
	}
	/* (frames still unread defer it, but not for ever: a port or the
	 * loopback that never runs dry must not keep a loss waiting.  From
	 * when they began to wait, not from when the message stalled: a
	 * process off its core for longer than the time finds both old, and
	 * its ring full of the very packets) */
	stalled = uc_stalled(eng, qp, now);
	if (same && (stalled < uc_give_up_tsc(eng) ||
		     (stalled < eng->tsc_per_us * UC_GIVE_UP_MAX_US &&
		      (!uc_ports_passed(eng, qp, qp->rcv.exp_msn) ||
		       ports_unpolled(eng, now))) ||
		     (eng->rx_backlog &&
		      now - eng->rx_backlog_since < 2 * uc_give_up_tsc(eng))))
		return;
	qp->rcv.uc_stuck_at = 0;
	if (same && resp_uc_stuck(qp))
		resp_uc_give_up(eng, qp, true);	/* (watches again if need be) */
	else if (resp_uc_stuck(qp))
		resp_uc_watch(eng, qp);
	if (srnic_qp_timers_idle(qp))
		srnic_qp_timer_off(eng, qp);	/* nothing left to time */
}

/*
 * UC: the ACK is all a requester out of credit waits for (it resends
 * nothing, so nothing of its own brings another), and a lost one cost it
 * SRNIC_UC_GONE_MS, until it lends itself credit: with 1% loss on the
 * wire, e2e/06's UC stream stalled that long in one run of six (both
 * copies of an ACK lost, or the one copy of an ACK that carried a SACK,
 * which UC no longer sends).  So the last ACK goes again after a probe
 * interval with nothing new to say, twice as long each time, up to
 * UC_REACKS times: a requester that heard it meanwhile drops the copies,
 * one still waiting goes on.  (Called with each UC ACK, before it goes.)
 */
#define UC_REACKS 3
/* (the first wait of a QP that only receives, with no timeout of its own
 * (RTR): about the probe interval a UC sender has, objects.c; and the
 * longest, should a program set a long timeout on a UC QP: the last goes
 * within SRNIC_UC_GONE_MS, at 7/8 of it) */
#define UC_REACK_US 4000
#define UC_REACK_MAX_US (SRNIC_UC_GONE_MS * 1000 / 8)

/*
 * UC: the credit an ACK carries is the receive number below which the
 * program has posted receive WQEs, in the requester's numbering (uc_skew,
 * what given-up messages took, counted in), and the requester begins no
 * SEND at or past it (srnic_flow.h, srnic_fc_uc_recv_open): the window
 * alone let SENDs meet an empty receive queue, lost, when the program fell
 * a CQ behind its engine.  While fewer than a window's worth are posted the
 * requester may come to wait for more, and nothing else would tell it: the
 * program's next post rings the engine (q.rq_bell, provider/post.c), and
 * the QP's turn then sends the ACK (resp_uc_recv_look).  A QP on an SRQ
 * shares its receives with the SRQ's other QPs: it grants what the window
 * does, as before.
 *
 * Only a program that posts receives is waited for: one that posted none,
 * or none for SRNIC_UC_GONE_MS, grants two windows past what it has
 * posted, and its peer's SENDs meet its empty queue and are lost at once,
 * as a NIC loses them (a throwaway program here: 1000 UC SENDs to a QP
 * with no receive posted took 29 s waiting for credit, the sender lent a
 * quarter window a second, where without the wait they take
 * milliseconds).
 */
static uint32_t uc_recv_limit(const struct srnic_qp *qp)
{
	uint32_t below = qp->rcv.exp_ssn + qp->rcv.uc_skew;

	if (qp->q.srq)
		return below + 2 * SRNIC_WINDOW;
	return below + srnic_rq_posted(qp) +
	       (qp->rcv.uc_rq_posting ? 0 : 2 * SRNIC_WINDOW);
}

/* Whether the program posts receives, as of now (the rq_prod it moved). */
static bool uc_rq_posting(struct srnic_engine *eng, struct srnic_qp *qp)
{
	uint32_t prod = __atomic_load_n(&qp->q.rq_prod, __ATOMIC_ACQUIRE);

	if (prod != qp->rcv.uc_rq_seen) {
		qp->rcv.uc_rq_seen = prod;
		qp->rcv.uc_rq_moved_at = eng->now;
		qp->rcv.uc_rq_posting = 1;
	} else if (qp->rcv.uc_rq_posting &&
		   eng->now - qp->rcv.uc_rq_moved_at >=
			   eng->tsc_per_us * 1000 * SRNIC_UC_GONE_MS) {
		qp->rcv.uc_rq_posting = 0;
	}
	return qp->rcv.uc_rq_posting;
}

uint32_t resp_uc_recv_credit(struct srnic_engine *eng, struct srnic_qp *qp)
{
	bool few = !qp->q.srq && uc_rq_posting(eng, qp) &&
		   srnic_rq_posted(qp) < SRNIC_WINDOW;

	/* (armed before the look that follows: a post after it rings.  The
	 * fence pairs with srnic_post_recv's, after its rq_prod: either
	 * uc_recv_limit below sees its receives, or it sees the bell.  Not
	 * written when it stays clear: the program's posts read its line) */
	qp->rcv.uc_recv_watch = few;
	if (few || __atomic_load_n(&qp->q.rq_bell, __ATOMIC_RELAXED)) {
		__atomic_store_n(&qp->q.rq_bell, few, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	qp->rcv.uc_recv_told = uc_recv_limit(qp);
	return qp->rcv.uc_recv_told;
}

bool srnic_responder_uc_recv_moved(const struct srnic_qp *qp)
{
	return qp->rcv.uc_recv_watch &&
	       uc_recv_limit(qp) != qp->rcv.uc_recv_told;
}

void resp_uc_recv_look(struct srnic_engine *eng, struct srnic_qp *qp)
{
	if (!srnic_responder_uc_recv_moved(qp) ||
	    qp->q.state == SRNIC_QPS_ERR)
		return;
	qp->rcv.uc_recv_watch = 0;	/* (the ACK arms it again if need be) */
	srnic_qp_want_ack(eng, qp);
}

void resp_uc_reack_arm(struct srnic_engine *eng, struct srnic_qp *qp)
{
	uint64_t wait = qp->at.timeout_tsc ? srnic_probe_tsc(qp)
					   : eng->tsc_per_us * UC_REACK_US;

	if (wait > eng->tsc_per_us * UC_REACK_MAX_US)
		wait = eng->tsc_per_us * UC_REACK_MAX_US;

	/* (news: messages resolved, or receives posted, since the last) */
	if (qp->rcv.uc_reack_msn != qp->rcv.exp_msn ||
	    uc_recv_limit(qp) != qp->rcv.uc_recv_told) {
		qp->rcv.uc_reack_msn = qp->rcv.exp_msn;
		qp->rcv.uc_reacks = 0;
	}
	if (qp->rcv.uc_reacks >= UC_REACKS) {
		qp->rcv.uc_reack_at = 0;
		if (srnic_qp_timers_idle(qp))
			srnic_qp_timer_off(eng, qp);
		return;
	}
	qp->rcv.uc_reack_at = eng->now + (wait << qp->rcv.uc_reacks);
	srnic_qp_timer_on(eng, qp);
}

void srnic_responder_uc_reack(struct srnic_engine *eng, struct srnic_qp *qp)
{
	qp->rcv.uc_reack_at = 0;
	/* (off the timers unless something else is timed: the ACK, once it
	 * goes, arms the next) */
	if (srnic_qp_timers_idle(qp))
		srnic_qp_timer_off(eng, qp);
	if (srnic_qp_ack_wanted(qp) && qp->q.state != SRNIC_QPS_ERR) {
		qp->rcv.uc_reacks++;
		eng->st->uc_acks_again++;	/* (asked for: it goes with the
						 * next ACK turn, if it can) */
		srnic_qp_want_ack(eng, qp);
	}
}
