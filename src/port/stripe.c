/* SPDX-License-Identifier: MIT */
/*
 * Striping: which port a packet goes out on.  Every packet of every QP
 * may take any port that reaches its peer (packets are self-describing and
 * land in any order), in a weighted round-robin over the live paths; a
 * path that loses HELLOs (lossy) or went quiet (silent) is left out while
 * others remain.  Frames to this node itself take the loopback port
 * (loop.c).  Runs on the datapath (the requester's packets, the
 * responder's ACKs and READ responses); srnic_stripe_plan at start.
 */
#include "srnic_port.h"

/* Whether any port reaches peer at all (NULL: a multicast group, which
 * any live port reaches). */
bool srnic_stripe_reachable(const struct srnic_engine *eng,
			    const struct srnic_peer *peer)
{
	unsigned p;

	if (peer == &eng->node->peer[SRNIC_PEER_SELF])
		return true;
	for (p = 0; p < eng->node->nports; p++)
		if ((!peer || __atomic_load_n(&peer->up[p], __ATOMIC_RELAXED)) &&
		    __atomic_load_n(&eng->node->port[p].polling,
				    __ATOMIC_RELAXED))
			return true;
	return false;
}

bool srnic_qp_peer_reachable(const struct srnic_engine *eng,
			     const struct srnic_qp *qp)
{
	return srnic_stripe_reachable(eng, qp->peer);
}

/*
 * Smooth weighted round-robin: each step every port earns its weight and
 * the richest one pays the total and goes next.  Weights 2 and 1 give
 * 0 1 0, not 0 0 1: a port's packets are spread over the round.
 */
void srnic_stripe_plan(struct srnic_engine *eng)
{
	int credit[SRNIC_MAX_PORTS] = {0}, total = 0;
	unsigned p, k, best;

	for (p = 0; p < eng->node->nports; p++)
		total += eng->cfg.weight[p] ? eng->cfg.weight[p] : 1;
	for (k = 0; k < (unsigned)total; k++) {
		best = 0;
		for (p = 0; p < eng->node->nports; p++) {
			credit[p] += eng->cfg.weight[p] ? eng->cfg.weight[p] : 1;
			if (credit[p] > credit[best])
				best = p;
		}
		credit[best] -= total;
		eng->stripe[k] = best;
	}
	eng->stripe_len = total;
}

/* peer NULL: a multicast group, which every live port reaches. */
static inline bool port_usable(const struct srnic_engine *eng,
			       const struct srnic_peer *peer, unsigned p)
{
	return (!peer || __atomic_load_n(&peer->up[p], __ATOMIC_RELAXED)) &&
	       __atomic_load_n(&eng->node->port[p].polling, __ATOMIC_RELAXED) &&
	       !srnic_port_backlogged(eng, p);
}

int srnic_stripe_pick(struct srnic_engine *eng, const struct srnic_peer *peer,
		      uint32_t *rr)
{
	unsigned i, p;

	/* This node itself: the loopback port, and no other. */
	if (peer == &eng->node->peer[SRNIC_PEER_SELF])
		return srnic_port_backlogged(eng, SRNIC_PORT_LOOP)
			       ? -1
			       : SRNIC_PORT_LOOP;
	for (i = 0; i < eng->stripe_len; i++) {
		p = eng->stripe[(*rr)++ % eng->stripe_len];
		if (port_usable(eng, peer, p) &&
		    (!peer || (!__atomic_load_n(&peer->lossy[p],
						__ATOMIC_RELAXED) &&
			       !__atomic_load_n(&peer->silent[p],
						__ATOMIC_RELAXED))))
			return p;
	}
	/* Only lossy or silent ports left: a doubtful path beats none. */
	for (p = 0; p < eng->node->nports; p++)
		if (port_usable(eng, peer, p))
			return p;
	return -1;
}

/*
 * A peer with several adapters (docs/key-migration.md): its QP is of
 * adapter index % ndev (dest_qpn's table index), which its HELLOs say
 * the ports of.  Its packets take that adapter's ports, in the rotation,
 * while any of them can take one; else the peer's other ports (the
 * adapter is cut off, or its ports full): what arrives at another adapter
 * then carries a key it did not issue, which the node imports.
 */
static int pick_on_adapter(struct srnic_engine *eng, struct srnic_qp *qp,
			   unsigned ndev)
{
	const struct srnic_peer *peer = qp->peer;
	uint8_t dev = (uint8_t)(srnic_qpn_index(qp->at.dest_qpn) % ndev);
	bool reachable = false;
	unsigned i, p;

	for (i = 0; i < eng->stripe_len; i++) {
		p = eng->stripe[qp->path.cursor++ % eng->stripe_len];
		if (__atomic_load_n(&peer->dev_on[p], __ATOMIC_RELAXED) != dev ||
		    !__atomic_load_n(&peer->up[p], __ATOMIC_RELAXED) ||
		    !__atomic_load_n(&eng->node->port[p].polling,
				     __ATOMIC_RELAXED))
			continue;
		if (!srnic_port_backlogged(eng, p))
			return (int)p;
		reachable = true;
	}
	/* (its ports only full: wait for them, the adapter is there) */
	return reachable ? -1 : srnic_stripe_pick(eng, peer, &qp->path.cursor);
}

int srnic_qp_pick_port(struct srnic_engine *eng, struct srnic_qp *qp)
{
	unsigned ndev = qp->peer ? __atomic_load_n(&qp->peer->ndev,
						   __ATOMIC_RELAXED)
				 : 0;

	if (__builtin_expect(ndev > 1, 0))
		return pick_on_adapter(eng, qp, ndev);
	return srnic_stripe_pick(eng, qp->peer, &qp->path.cursor);
}
