/* SPDX-License-Identifier: MIT */
/*
 * Responder, the age of held last packets (datapath thread, the QP's turn
 * among the timers).
 *
 * A message's last packet that comes before the rest is held until they
 * are in (rx.c, hold_last), so that a program polling the last byte sees
 * everything before it.  One held SRNIC_HELD_AGE_MS is given back: its
 * buffer to the pool and its packet to the missing, so that the
 * requester's resend (a SACK asks for it) lands it once the rest is in.
 * A message whose other packets have not come in a second is far behind
 * or was never sent: the last packets of messages a station forged would
 * otherwise keep their buffers, within the budget (SRNIC_HELD_MAX) but for
 * as long as the QP lives, and every genuine early last packet behind
 * them would be dropped over budget.
 */
#include "responder_internal.h"

/* (a look at a QP's slots every eighth of the age at most: a QP that holds
 * packets all the time, as one fed over two ports does, would have its
 * window read at every timer tick) */
void srnic_responder_held_age(struct srnic_engine *eng, struct srnic_qp *qp,
			      uint64_t now)
{
	uint64_t age = eng->tsc_per_us * 1000 * SRNIC_HELD_AGE_MS;
	unsigned i, left = qp->rcv.nheld;

	if (now - qp->rcv.held_look_tsc < age / 8)
		return;
	qp->rcv.held_look_tsc = now;
	for (i = 0; i < SRNIC_WINDOW && left; i++) {
		struct srnic_rmsg *s = &qp->rcv.rmsg[i];

		if (!s->held)
			continue;
		left--;
		if (now - s->held_tsc < age)
			continue;
		srnic_track_unmark(&s->trk, s->trk.npkts - 1);
		held_free(eng, qp, s);
		eng->st->drops[SRNIC_DROP_OVER_BUDGET]++;
	}
}
