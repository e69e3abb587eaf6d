/* SPDX-License-Identifier: MIT */
/*
 * The retransmission timer's estimate, per QP.
 *
 * Two clocks govern recovery.  The verbs timeout (modify_qp's "timeout",
 * times retry_cnt) decides when a peer is given up for dead; it is the
 * application's setting and stays as it is.  How soon a lost packet is
 * noticed is ours to choose: the oldest unfinished message probes (resends
 * its last packet, which makes the responder say what it lacks) after one
 * RTO.  The RTO follows the round trips the QP measures, as TCP's does
 * (RFC 6298): SRTT + 4 RTTVAR, sampled from the last packet of a message
 * to the ACK that covers it, never from a message sent more than once
 * (Karn), and bounded by SRNIC_RTO_MIN_US and the verbs timeout.  Each
 * probe that brings no progress doubles the next wait (back-off); any
 * progress resets it.
 */
#ifndef SRNIC_RTO_H
#define SRNIC_RTO_H

#include <stdint.h>

#include "srnic_qp.h"

/* Below this a probe would chase the scheduler, not the network: two
 * nodes share two cores here, and a packet may wait a time slice. */
#define SRNIC_RTO_MIN_US 250
#define SRNIC_RTO_MAX_BACKOFF 10

/* The wait before the oldest message probes: at most a quarter of the
 * verbs timeout, so that a message probes a few times before its timeout
 * resends it whole, even when a burst of queueing inflated the estimate
 * to the timeout itself (the probe's answer repairs it in a round trip;
 * the whole resend costs the timeout, message after message). */
static inline uint64_t srnic_probe_tsc(const struct srnic_qp *qp)
{
	uint64_t t = qp->snd.rto ? qp->snd.rto : qp->at.timeout_tsc / 16;

	t <<= qp->snd.rto_backoff;
	return t < qp->at.timeout_tsc / 4 ? t : qp->at.timeout_tsc / 4;
}

/* A round trip of rtt TSC cycles was measured. */
static inline void srnic_rto_sample(struct srnic_qp *qp, uint64_t rtt,
				    uint64_t tsc_hz)
{
	uint64_t min = tsc_hz / 1000000 * SRNIC_RTO_MIN_US, rto;

	if (!qp->snd.srtt) {
		qp->snd.srtt = rtt;
		qp->snd.rttvar = rtt / 2;
	} else {
		uint64_t err = qp->snd.srtt > rtt ? qp->snd.srtt - rtt
					      : rtt - qp->snd.srtt;

		qp->snd.rttvar = (3 * qp->snd.rttvar + err) / 4;
		qp->snd.srtt = (7 * qp->snd.srtt + rtt) / 8;
	}
	rto = qp->snd.srtt + 4 * qp->snd.rttvar;
	if (rto < min)
		rto = min;
	if (qp->at.timeout_tsc && rto > qp->at.timeout_tsc)
		rto = qp->at.timeout_tsc;
	qp->snd.rto = rto;
}

/* A probe went out and nothing has moved since the last one. */
static inline void srnic_rto_backoff(struct srnic_qp *qp)
{
	if (qp->snd.rto_backoff < SRNIC_RTO_MAX_BACKOFF)
		qp->snd.rto_backoff++;
}

/* The responder answered with progress: probe at the estimate again. */
static inline void srnic_rto_progress(struct srnic_qp *qp)
{
	qp->snd.rto_backoff = 0;
}

#endif
