/* SPDX-License-Identifier: MIT */
/*
 * Responder, a request's domain (datapath thread): the PD its memory is
 * checked against, which for an XRC target is the one of the SRQ the
 * request names, not the QP's.
 */
#include "responder_internal.h"

/*
 * The SRQ a request to an XRC target QP is for: one of its domain, named
 * by the packet's XRC extension; its PD is the one the message's memory
 * is checked against.  NULL for any other QP, or a number that names no
 * SRQ of the domain.
 */
static struct srnic_srq *xrc_srq_of(const struct srnic_engine *eng,
				    const struct srnic_qp *qp,
				    const struct srnic_pkt *pkt)
{
	struct srnic_srq **tab = __atomic_load_n(&eng->xrc_srq,
						 __ATOMIC_ACQUIRE);
	struct srnic_srq *srq;

	/* (another process's number, or none: no SRQ of this one) */
	if (qp->xrc != SRNIC_XRC_TGT || !(pkt->flags & SRNIC_F_XRC) || !tab ||
	    pkt->xrc_srqn >> SRNIC_XRC_SRQ_INDEX_BITS != eng->mem.owner)
		return NULL;
	srq = __atomic_load_n(&tab[pkt->xrc_srqn & (SRNIC_MAX_XRC_SRQ - 1)],
			      __ATOMIC_ACQUIRE);
	return srq && srq->srqn == pkt->xrc_srqn && srq->xrcd == qp->xrcd
		       ? srq
		       : NULL;
}

/* The PD a request's memory is checked against: the QP's, or an XRC
 * target's SRQ's (*srq, else NULL); false when the request may not come
 * here (an XRC request to another QP, or one naming no SRQ of the
 * target's domain). */
bool resp_request_pd(struct srnic_engine *eng, const struct srnic_qp *qp,
		     const struct srnic_pkt *pkt, uint32_t *pd,
		     struct srnic_srq **srq)
{
	*pd = qp->pd;
	*srq = NULL;
	if (qp->xrc == SRNIC_XRC_NONE && !(pkt->flags & SRNIC_F_XRC))
		return true;
	*srq = xrc_srq_of(eng, qp, pkt);
	if (!*srq) {
		eng->st->drops[SRNIC_DROP_BAD_XRC]++;
		return false;
	}
	*pd = (*srq)->pd;
	return true;
}
