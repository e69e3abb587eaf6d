/* SPDX-License-Identifier: MIT */
/*
 * A UDP node's paths to a peer, weighed by what they carry.  Control core.
 *
 * The ports spread a peer's frames over the paths (UDP source ports) an
 * ECMP hash makes of them, and a router's hash is not fair: with 8 source
 * ports and two equal links, 5 ports on one link and 3 on the other is as
 * likely as 4 and 4 (tests/bench/paths.sh saw 5 to 3), and frames spread
 * evenly over the paths then fill the first link at 8/5 of its rate while
 * the other has room.  So each path gets a weight, and the ports' senders
 * give it a share of the frames in proportion (the plan, port/udp.c):
 *
 * - the receiver measures each path's loss: the sender numbers its frames
 *   per path (the IPv4 identification) as they leave its port, and over a
 *   window of at least WINDOW_MIN numbers, what the path's frames counted
 *   fall short of them by is that path's loss; its next HELLO to the
 *   sender carries it (path_loss, 256ths), once: a path whose window did
 *   not end since the HELLO before says SRNIC_PATH_LOSS_NONE;
 * - the sender, at most every WEIGH_MS, cuts by an eighth the weight of
 *   each path newly reported to lose more than the best of the peer's
 *   paths by MARGIN (multiplicative decrease), and gives every other path
 *   one step back (additive increase: a path cut so far that it carries
 *   too little to be measured still comes back), so that the paths'
 *   losses, not their shares, come out even: an overfull link loses more
 *   than one with room, and its paths' shares shrink until it does not.
 *   A path that loses all, or that the peer no longer hears, leaves the
 *   plan by paths_ok (the HELLO probes, control.c), as before.
 *
 * SRD's sender weighs its paths by their delay as well as their losses;
 * losses alone are what a rate limiter or a full queue gives here.
 */
#include "srnic_control.h"

/* The fewest numbers a window must span for its loss to be read (a lost
 * frame is 1/256 of it at most), the most (a longer jump is a sender that
 * restarted), and how long one may wait for them. */
#define WINDOW_MIN 256
#define WINDOW_MAX 30000
#define WINDOW_STALE_MS 1000
/* How often the weights may change: about two round trips of the reports
 * (HELLOs every 10 ms while busy), so a change shows before the next. */
#define WEIGH_MS 40
/* Loss above the best path's by this much (256ths) is a path's own: 2%,
 * and a quarter of the best's (even loss on every path, sampled in
 * windows of 256, differs by about the square root of what is lost). */
#define MARGIN(best) (5 + (best) / 4)

/* The plan for the paths of ok (0: all): each path's slots in proportion
 * to its weight, spread over the plan as smooth weighted round-robin
 * spreads them, so that a path's frames do not come in runs. */
static void lay_out(struct srnic_peer_paths *pp, uint8_t ok)
{
	int credit[SRNIC_UDP_PATHS] = {0}, total = 0;
	unsigned i, k, best;

	if (!ok)
		ok = (1u << SRNIC_UDP_PATHS) - 1;
	for (k = 0; k < SRNIC_UDP_PATHS; k++)
		if (ok >> k & 1)
			total += SRNIC_PATH_W_MAX - pp->cut[k];
	__atomic_store_n(&pp->planned, 0, __ATOMIC_RELEASE);
	for (i = 0; i < SRNIC_PATH_PLAN; i++) {
		best = SRNIC_UDP_PATHS;
		for (k = 0; k < SRNIC_UDP_PATHS; k++) {
			if (!(ok >> k & 1))
				continue;
			credit[k] += SRNIC_PATH_W_MAX - pp->cut[k];
			if (best == SRNIC_UDP_PATHS || credit[k] > credit[best])
				best = k;
		}
		credit[best] -= total;
		__atomic_store_n(&pp->plan[i], (uint8_t)best,
				 __ATOMIC_RELAXED);
	}
	__atomic_store_n(&pp->planned, ok, __ATOMIC_RELEASE);
}

void srnic_paths_hear(struct srnic_peer *peer, unsigned p, uint8_t ok)
{
	struct srnic_peer_paths *pp = &peer->paths[p];
	uint8_t all = (uint8_t)((1u << SRNIC_UDP_PATHS) - 1);

	__atomic_store_n(&peer->paths_ok[p], ok, __ATOMIC_RELEASE);
	if (pp->planned != (ok ? ok : all))
		lay_out(pp, ok);
}

void srnic_paths_forget(struct srnic_peer *peer)
{
	unsigned p, k;

	for (p = 0; p < SRNIC_MAX_PORTS; p++) {
		struct srnic_peer_paths *pp = &peer->paths[p];

		__atomic_store_n(&peer->paths_ok[p], 0, __ATOMIC_RELEASE);
		memset(pp->cut, 0, sizeof(pp->cut));
		memset(pp->win, 0, sizeof(pp->win));
		memset(pp->reported, SRNIC_PATH_LOSS_NONE,
		       sizeof(pp->reported));
		pp->fresh = 0;
		pp->weighed_at = 0;
		lay_out(pp, 0);
		/* (its new self numbers from 1: the highest seen so far is
		 * forgotten, and the next taken whatever it is; a port's
		 * holder storing one meanwhile only starts a window late) */
		for (k = 0; k < SRNIC_UDP_PATHS; k++)
			__atomic_store_n(&pp->rx[k].top, 0, __ATOMIC_RELAXED);
	}
}

/* A path's window: its loss read once it spans WINDOW_MIN numbers (or
 * unknown after WINDOW_STALE_MS with fewer), and a new one started; what
 * the window says, once (SRNIC_PATH_LOSS_NONE: nothing new). */
static uint8_t window_loss(struct srnic_path_window *w,
			   const struct srnic_path_rx *r, uint64_t now)
{
	uint32_t got = __atomic_load_n(&r->got, __ATOMIC_RELAXED);
	uint16_t top = __atomic_load_n(&r->top, __ATOMIC_RELAXED);
	uint32_t span = (uint16_t)(top - w->top), n = got - w->got, lost;

	if (!w->armed || span > WINDOW_MAX) {
		w->loss = SRNIC_PATH_LOSS_NONE;	/* a first look, a restart */
	} else if (span < WINDOW_MIN) {
		if (now - w->at < WINDOW_STALE_MS)
			return SRNIC_PATH_LOSS_NONE;	/* (still counting) */
		w->loss = SRNIC_PATH_LOSS_NONE;
	} else {
		/* (frames late from the window before count in this one) */
		lost = n >= span ? 0 : (span - n) * 256 / span;
		w->loss = (uint8_t)(lost > 254 ? 254 : lost);
	}
	w->got = got;
	w->top = top;
	w->at = now;
	w->armed = 1;
	return w->loss;
}

void srnic_paths_measure(struct srnic_peer *peer, unsigned p, uint64_t now,
			 uint8_t loss[SRNIC_UDP_PATHS])
{
	struct srnic_peer_paths *pp = &peer->paths[p];
	unsigned k;

	for (k = 0; k < SRNIC_UDP_PATHS; k++)
		loss[k] = window_loss(&pp->win[k], &pp->rx[k], now);
}

void srnic_paths_weigh(struct srnic_peer *peer, unsigned p,
		       const uint8_t loss[SRNIC_UDP_PATHS], uint64_t now)
{
	struct srnic_peer_paths *pp = &peer->paths[p];
	uint8_t ok = peer->paths_ok[p];
	unsigned k, best = SRNIC_PATH_LOSS_NONE, w, was;
	bool changed = false;

	for (k = 0; k < SRNIC_UDP_PATHS; k++)
		if (loss[k] != SRNIC_PATH_LOSS_NONE) {
			pp->reported[k] = loss[k];
			pp->fresh |= (uint8_t)(1u << k);
		}
	if (!ok || now - pp->weighed_at < WEIGH_MS)
		return;
	pp->weighed_at = now;
	for (k = 0; k < SRNIC_UDP_PATHS; k++)
		if ((ok >> k & 1) && pp->reported[k] < best)
			best = pp->reported[k];
	for (k = 0; k < SRNIC_UDP_PATHS; k++) {
		if (!(ok >> k & 1))
			continue;
		was = w = SRNIC_PATH_W_MAX - pp->cut[k];
		if ((pp->fresh >> k & 1) && best != SRNIC_PATH_LOSS_NONE &&
		    pp->reported[k] > best + MARGIN(best))
			w = w - (w + 7) / 8 < SRNIC_PATH_W_MIN
				    ? SRNIC_PATH_W_MIN
				    : w - (w + 7) / 8;
		else if (w < SRNIC_PATH_W_MAX)
			w++;
		if (w != was) {
			pp->cut[k] = (uint8_t)(SRNIC_PATH_W_MAX - w);
			changed = true;
		}
	}
	pp->fresh = 0;
	if (changed)
		lay_out(pp, ok);
}

void srnic_paths_weights(const struct srnic_peer *peer, unsigned nports,
			 uint8_t *weight, uint8_t *loss)
{
	unsigned p, k, i;

	for (p = 0; p < nports; p++)
		for (k = 0; k < SRNIC_UDP_PATHS; k++) {
			i = p * SRNIC_UDP_PATHS + k;
			weight[i] = (uint8_t)(SRNIC_PATH_W_MAX -
					      peer->paths[p].cut[k]);
			loss[i] = peer->paths[p].win[k].armed
					  ? peer->paths[p].win[k].loss
					  : SRNIC_PATH_LOSS_NONE;
		}
}
