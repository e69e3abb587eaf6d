/* SPDX-License-Identifier: MIT */
/*
 * Multicast RDMA WRITE (seed 002): one WRITE lands at the same offset of
 * the group region on every node that holds one, each member answering by
 * unicast, holes resent to the member that lacks them alone.  Datapath
 * only: the sender's side runs in its UD QP's turn and timers
 * (engine/datapath.c), the member's side on each frame dispatch hands it.
 * docs/multicast-rdma.md tells the protocol; the state is in
 * core/srnic_group_state.h.
 */
#ifndef SRNIC_GROUP_H
#define SRNIC_GROUP_H

#include "srnic_engine_state.h"

/* A multicast WRITE's packet (a member's to place), not a QP's. */
static inline bool srnic_group_write(const struct srnic_pkt *pkt)
{
	return pkt->opcode == SRNIC_OP_WRITE && (pkt->flags & SRNIC_F_GROUP);
}

/* A member's answer to one (the sender's to take). */
static inline bool srnic_group_ack_pkt(const struct srnic_pkt *pkt)
{
	return pkt->opcode == SRNIC_OP_ACK && (pkt->flags & SRNIC_F_GROUP);
}

/* ---- sender.c: a UD QP's multicast WRITE ---- */

/* Whether the sender has packets it may send now (the QP stays active). */
static inline bool srnic_group_send_busy(const struct srnic_qp *qp)
{
	const struct srnic_group_send *gs = qp->gsend;
	uint32_t i;

	if (!gs || !gs->active || gs->blocked)
		return false;
	if (gs->next < gs->npkts)
		return true;
	for (i = 0; i < gs->nmembers; i++)
		if (gs->m[i].state == GM_WAITING && gs->m[i].repair)
			return true;
	return false;
}

/* Its turn: start the multicast WRITE at the head of the queue if none is
 * in flight, send repairs, then new packets as the window allows.
 * Returns packets sent. */
unsigned srnic_group_send_run(struct srnic_engine *eng, struct srnic_qp *qp,
			      unsigned budget);
/* A member's ACK for qp's message. */
void srnic_group_ack(struct srnic_engine *eng, struct srnic_qp *qp,
		     const struct srnic_pkt *pkt);
/* Its timers: a member silent too long gets what it lacks again, and is
 * given up after SRNIC_GROUP_RETRIES timeouts (or at once if it
 * restarted). */
void srnic_group_timers(struct srnic_engine *eng, struct srnic_qp *qp,
			uint64_t now);
/* The QP goes: its sender state with it. */
void srnic_group_send_free(struct srnic_qp *qp);

/* ---- member.c: a member's side ---- */

/* A multicast WRITE's packet for this process's group region: place it,
 * answer as due.  m is the frame it came in (the answer goes back to its
 * source address, on its port). */
/* tag.c: the rkey of a multicast WRITE of group by a sender of
 * incarnation inc (the group, and a tag from the cluster key), and the
 * tag's key, set once from the engine's configuration. */
void srnic_group_tag_init(struct srnic_engine *eng);
uint32_t srnic_group_rkey(const struct srnic_engine *eng, uint8_t group,
			  uint32_t inc);

void srnic_group_member_rx(struct srnic_engine *eng,
			   const struct srnic_pkt *pkt,
			   const struct rte_mbuf *m);

#endif
