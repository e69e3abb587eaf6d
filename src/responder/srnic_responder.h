/* SPDX-License-Identifier: MIT */
/*
 * responder/: packets into memory, receives, READ answers and ACKs; and
 * datagrams (datagram.c).  Datapath only.
 */
#ifndef SRNIC_RESPONDER_H
#define SRNIC_RESPONDER_H

#include "srnic_sched.h"
#include "srnic_port.h"

/* rx.c, complete.c, read.c, ack.c, recv.c, uc.c (responder_internal.h
 * says which holds what) */
bool srnic_responder_rx(struct srnic_engine *eng, struct srnic_qp *qp,
			const struct srnic_pkt *pkt, struct rte_mbuf *m);
void srnic_responder_progress(struct srnic_engine *eng, struct srnic_qp *qp);
unsigned srnic_responder_reads(struct srnic_engine *eng, struct srnic_qp *qp,
			       unsigned budget);
void srnic_responder_send_ack(struct srnic_engine *eng, struct srnic_qp *qp);
void srnic_responder_reset(struct srnic_engine *eng, struct srnic_qp *qp);
void srnic_responder_flush(struct srnic_engine *eng, struct srnic_qp *qp);
/* UC: give up the oldest message if it has been stuck long enough */
void srnic_responder_uc_timer(struct srnic_engine *eng, struct srnic_qp *qp,
			      uint64_t now);
/* UC: say the last ACK again if nothing new came since (uc_reack_at) */
void srnic_responder_uc_reack(struct srnic_engine *eng, struct srnic_qp *qp);
/* UC: the program posted receives its peer has not been told of, which
 * the QP's turn will (responder/uc.c) */
bool srnic_responder_uc_recv_moved(const struct srnic_qp *qp);
/* read_done.c: a requester's READ_DONE on qp (completion at both ends) */
void srnic_responder_read_done(struct srnic_engine *eng, struct srnic_qp *qp,
			       const struct srnic_pkt *pkt);
/* third_party.c: a controller's TP_READ_REQ, on qp, its QP to this node */
void srnic_responder_tp(struct srnic_engine *eng, struct srnic_qp *qp,
			const struct srnic_pkt *pkt);
/* fifo.c: the program's answer to a READ request its FIFO took (an
 * engine call): up to a burst of its packets sent now; the bytes sent
 * (the answer's first ones), or -EAGAIN (none: the wire is full),
 * -ENOENT (no such QP of this engine answering READs of src_qp),
 * -EINVAL (what the record said does not hold), -EFAULT (the iovec
 * could not be read) */
int srnic_responder_fifo_answer(struct srnic_engine *eng, uint32_t qpn,
				const struct srnic_fifo_answer *a);
/* held.c: give back the last packets it has held SRNIC_HELD_AGE_MS */
void srnic_responder_held_age(struct srnic_engine *eng, struct srnic_qp *qp,
			      uint64_t now);
/* datagram.c: a datagram for UD QP qp */
void srnic_responder_datagram(struct srnic_engine *eng, struct srnic_qp *qp,
			      const struct srnic_pkt *pkt,
			      const uint8_t *group_gid);
/* ... a datagram to a group, to this process's QPs in it (the engine's
 * dispatch passes it to the node's other member processes). */
void srnic_mcast_deliver(struct srnic_engine *eng, const struct srnic_pkt *pkt);

#endif
