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
 * - ... and each path's delay: the mean of its data frames' one-way
 *   delays over a window of DELAY_MS, against the best path's (the two
 *   nodes' clocks differ: only the paths' differences mean anything),
 *   which the next HELLO carries too (path_delay, a 4-bit code), once;
 * - the sender, at most every WEIGH_MS, cuts by an eighth the weight of
 *   each path newly reported to lose more than the best of the peer's
 *   paths by MARGIN (multiplicative decrease); moves each path with a
 *   new delay towards the paths' average delay, its weight down by its
 *   excess over the average (up by its shortfall) in proportion, a tenth
 *   for each DELAY_GAIN_US; moves every weight a little towards the
 *   paths' mean (paths on one link have one delay, and nothing else
 *   keeps them together); and scales them so that the heaviest is
 *   SRNIC_PATH_W_MAX (only their ratios count), none below
 *   SRNIC_PATH_W_MIN (a path cut so far that it carries too little to be
 *   measured still carries some, and comes back).  An overfull link
 *   loses more, or queues longer, than one with room, and its paths'
 *   shares shrink until it does not.  A path that loses all, or that the
 *   peer no longer hears, leaves the plan by paths_ok (the HELLO probes,
 *   control.c), as before.
 *
 * SRD's sender weighs its paths by their delays and losses alike; a rate
 * limiter's or a switch's queue shows in the delay long before a loss.
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
/* A delay window: DELAY_MS at least, a path's mean read from DELAY_MIN
 * frames or more.  A path DELAY_GAIN_US slower than the paths' average
 * loses a tenth of its weight at a weighing (one as much faster gains
 * it): this host's scheduling swings a path's mean over a window by tens
 * of us, a link at 5/8 of the frames where the other has 3/8 queued them
 * 100 to 300 us longer (tests/bench/paths.sh).  Each weighing moves
 * every weight a LEAK-th of the way to the paths' mean weight (a path
 * cut to the least comes back in about 120 weighings). */
#define DELAY_MS 40
#define DELAY_MIN 16
#define DELAY_GAIN_US 100
#define LEAK 32

static inline int weight_of(const struct srnic_peer_paths *pp, unsigned k)
{
	return pp->weight[k] ? pp->weight[k] : SRNIC_PATH_W_MAX;
}

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
			total += weight_of(pp, k);
	__atomic_store_n(&pp->planned, 0, __ATOMIC_RELEASE);
	for (i = 0; i < SRNIC_PATH_PLAN; i++) {
		best = SRNIC_UDP_PATHS;
		for (k = 0; k < SRNIC_UDP_PATHS; k++) {
			if (!(ok >> k & 1))
				continue;
			credit[k] += weight_of(pp, k);
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
		memset(pp->weight, 0, sizeof(pp->weight));
		memset(pp->win, 0, sizeof(pp->win));
		memset(pp->reported, SRNIC_PATH_LOSS_NONE,
		       sizeof(pp->reported));
		pp->fresh = 0;
		memset(pp->delayed, SRNIC_PATH_DELAY_NONE,
		       sizeof(pp->delayed));
		pp->dfresh = 0;
		memset(&pp->dwin, 0, sizeof(pp->dwin));
		memset(pp->dwin.last, SRNIC_PATH_DELAY_NONE,
		       sizeof(pp->dwin.last));
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

/* d us, as a HELLO's path_delay says it (SRNIC_PATH_DELAY_NONE's
 * neighbours: 0 under 16 us, v for 2^(v+3) to 2^(v+4) us). */
static uint8_t delay_code(uint32_t d)
{
	unsigned v = 0;

	while (d >= 16 && v < 14) {
		d >>= 1;
		v++;
	}
	return (uint8_t)v;
}

/* The delays of the peer's paths to us over the window that ends now, if
 * it is DELAY_MS long: how much longer each path's data frames took than
 * the best path's, on average (the senders' clocks are not ours: only the
 * paths' differences mean anything), once; SRNIC_PATH_DELAY_NONE for a
 * path with fewer than DELAY_MIN frames, or every path while the window
 * runs. */
static void window_delays(struct srnic_peer_paths *pp, uint64_t now,
			  uint8_t delay[SRNIC_UDP_PATHS])
{
	struct srnic_path_delays *w = &pp->dwin;
	int64_t mean[SRNIC_UDP_PATHS], best = INT64_MAX, sum;
	uint32_t n;
	unsigned k;

	memset(delay, SRNIC_PATH_DELAY_NONE, SRNIC_UDP_PATHS);
	if (w->at && now - w->at < DELAY_MS)
		return;
	/* (a first look: ref from a delay the receivers saw, so that the
	 * others differ from it by far less than the 16 bits' half) */
	if (!w->at) {
		__atomic_store_n(&pp->owd_ref,
				 __atomic_load_n(&pp->owd_last,
						 __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
		w->skip = 1;
	}
	for (k = 0; k < SRNIC_UDP_PATHS; k++) {
		sum = __atomic_load_n(&pp->rx[k].owd_sum, __ATOMIC_RELAXED);
		n = __atomic_load_n(&pp->rx[k].owd_n, __ATOMIC_RELAXED);
		mean[k] = INT64_MAX;
		if (!w->skip && n - w->n[k] >= DELAY_MIN)
			mean[k] = (sum - w->sum[k]) / (int64_t)(n - w->n[k]);
		if (mean[k] < best)
			best = mean[k];
		w->sum[k] = sum;
		w->n[k] = n;
	}
	w->at = now;
	w->skip = 0;
	if (best == INT64_MAX)
		return;
	/* The best path's delay kept near ref, the others above it (a
	 * clock that drifts, a queue that grows on every path): ref moves
	 * to it, and the sums of the window that moves it are not read. */
	if (best < -0x2000 || best > 0x2000) {
		__atomic_store_n(&pp->owd_ref, (uint16_t)(pp->owd_ref + best),
				 __ATOMIC_RELAXED);
		w->skip = 1;
		return;
	}
	for (k = 0; k < SRNIC_UDP_PATHS; k++)
		if (mean[k] != INT64_MAX)
			delay[k] = delay_code((uint32_t)(mean[k] - best));
	memcpy(w->last, delay, sizeof(w->last));
}

void srnic_paths_measure(struct srnic_peer *peer, unsigned p, uint64_t now,
			 uint8_t loss[SRNIC_UDP_PATHS],
			 uint8_t delay[SRNIC_UDP_PATHS])
{
	struct srnic_peer_paths *pp = &peer->paths[p];
	unsigned k;

	for (k = 0; k < SRNIC_UDP_PATHS; k++)
		loss[k] = window_loss(&pp->win[k], &pp->rx[k], now);
	window_delays(pp, now, delay);
}

/* What a weight w moves by for a path d us faster than the average
 * (slower: d < 0): a tenth for each DELAY_GAIN_US, a sixteenth at most
 * (a full link's queue may say milliseconds, and overshoot). */
static int step(int w, int d)
{
	int s = w * d / (10 * DELAY_GAIN_US);

	return s > w / 16 ? w / 16 : s < -w / 16 ? -w / 16 : s;
}

/* What a path_delay code says, in us: the middle of its range. */
static int code_us(uint8_t v)
{
	return v ? 3 << (v + 2) : 8;
}

void srnic_paths_weigh(struct srnic_peer *peer, unsigned p,
		       const uint8_t loss[SRNIC_UDP_PATHS],
		       const uint8_t delay[SRNIC_UDP_PATHS], uint64_t now)
{
	struct srnic_peer_paths *pp = &peer->paths[p];
	uint8_t ok = peer->paths_ok[p], timed;
	unsigned k, best = SRNIC_PATH_LOSS_NONE, n = 0;
	int w[SRNIC_UDP_PATHS], most = 0, sum = 0, avg = 0, mean;
	bool changed = false;

	for (k = 0; k < SRNIC_UDP_PATHS; k++) {
		if (loss[k] != SRNIC_PATH_LOSS_NONE) {
			pp->reported[k] = loss[k];
			pp->fresh |= (uint8_t)(1u << k);
		}
		if (delay[k] != SRNIC_PATH_DELAY_NONE) {
			pp->delayed[k] = delay[k];
			pp->dfresh |= (uint8_t)(1u << k);
		}
	}
	if (!ok || now - pp->weighed_at < WEIGH_MS)
		return;
	pp->weighed_at = now;
	for (k = 0; k < SRNIC_UDP_PATHS; k++) {
		w[k] = weight_of(pp, k);
		if ((ok >> k & 1) && pp->reported[k] < best)
			best = pp->reported[k];
	}
	/* (the delays' average, by the frames each path carries; only
	 * with two paths or more to compare) */
	timed = ok & pp->dfresh;
	if (__builtin_popcount(timed) < 2)
		timed = 0;
	for (k = 0; k < SRNIC_UDP_PATHS; k++)
		if (timed >> k & 1) {
			avg += w[k] * code_us(pp->delayed[k]);
			sum += w[k];
		}
	if (timed)
		avg /= sum;
	for (k = 0, sum = 0; k < SRNIC_UDP_PATHS; k++)
		if (ok >> k & 1) {
			sum += w[k];
			n++;
		}
	mean = sum / (int)n;
	for (k = 0; k < SRNIC_UDP_PATHS; k++) {
		if (!(ok >> k & 1))
			continue;
		if ((pp->fresh >> k & 1) && best != SRNIC_PATH_LOSS_NONE &&
		    pp->reported[k] > best + MARGIN(best))
			w[k] -= (w[k] + 7) / 8;
		else if (timed >> k & 1)
			w[k] += step(w[k], avg - code_us(pp->delayed[k]));
		/* (rounded away from the weight: equal weights stay equal,
		 * near ones become equal) */
		w[k] += mean > w[k] ? (mean - w[k] + LEAK - 1) / LEAK
				    : -((w[k] - mean + LEAK - 1) / LEAK);
		if (w[k] > most)
			most = w[k];
	}
	/* (scaled so that the heaviest is the most, none below the least:
	 * only their ratios count) */
	for (k = 0; k < SRNIC_UDP_PATHS && most; k++) {
		int v;

		if (!(ok >> k & 1))
			continue;
		v = (w[k] * SRNIC_PATH_W_MAX + most / 2) / most;
		v = v < SRNIC_PATH_W_MIN ? SRNIC_PATH_W_MIN : v;
		if (v != weight_of(pp, k)) {
			pp->weight[k] = (uint16_t)v;
			changed = true;
		}
	}
	pp->fresh = 0;
	pp->dfresh = 0;
	if (changed)
		lay_out(pp, ok);
}

void srnic_paths_weights(const struct srnic_peer *peer, unsigned nports,
			 uint8_t *weight, uint8_t *loss, uint8_t *delay)
{
	unsigned p, k, i;

	for (p = 0; p < nports; p++)
		for (k = 0; k < SRNIC_UDP_PATHS; k++) {
			i = p * SRNIC_UDP_PATHS + k;
			weight[i] = (uint8_t)(weight_of(&peer->paths[p], k) *
					      64 / SRNIC_PATH_W_MAX);
			loss[i] = peer->paths[p].win[k].armed
					  ? peer->paths[p].win[k].loss
					  : SRNIC_PATH_LOSS_NONE;
			delay[i] = peer->paths[p].dwin.at
					   ? peer->paths[p].dwin.last[k]
					   : SRNIC_PATH_DELAY_NONE;
		}
}
