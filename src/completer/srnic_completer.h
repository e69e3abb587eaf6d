/* SPDX-License-Identifier: MIT */
/*
 * completer/: ACKs and READ data into completions in posting order, and
 * the timers.  Datapath only.
 */
#ifndef SRNIC_COMPLETER_H
#define SRNIC_COMPLETER_H

#include "srnic_sched.h"
#include "srnic_port.h"

/* completer.c */
void srnic_completer_ack(struct srnic_engine *eng, struct srnic_qp *qp,
			 const struct srnic_pkt *pkt);
/* RC: the cumulative ACK a request of the peer's carried */
void srnic_completer_acked(struct srnic_engine *eng, struct srnic_qp *qp,
			   uint32_t msn);
void srnic_completer_read_resp(struct srnic_engine *eng, struct srnic_qp *qp,
			       const struct srnic_pkt *pkt,
			       const struct rte_mbuf *m);
/* completion at both ends: the target of READ pkt->msn completed it */
void srnic_completer_read_done_ack(struct srnic_engine *eng,
				   struct srnic_qp *qp,
				   const struct srnic_pkt *pkt);
void srnic_completer_timeouts(struct srnic_engine *eng, struct srnic_qp *qp,
			      uint64_t now);
unsigned srnic_completer_complete(struct srnic_engine *eng,
				  struct srnic_qp *qp);
void srnic_completer_flush_sq(struct srnic_engine *eng,
			      struct srnic_qp *qp);
/* UC: an ACK brings credit, and nothing else */
void srnic_completer_credit(struct srnic_engine *eng, struct srnic_qp *qp,
			    const struct srnic_pkt *pkt);

#endif
