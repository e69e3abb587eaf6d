/* SPDX-License-Identifier: MIT */
/*
 * A UDP node's paths weighed (src/control/paths.c), driven as the control
 * core drives it, with the ports' counts written by hand:
 *  - the receiver's measure: a window of numbers with frames missing
 *    reads as that loss, once; a path whose frames took longer reads as
 *    slower than the best, once;
 *  - the sender's weights: paths said to lose more than the best lose
 *    weight, slower ones too, the others keep theirs, and the plan gives
 *    each path slots in proportion; with nothing said any more, every
 *    weight comes back to the most; a new incarnation forgets them.
 */
#include <string.h>

#include "check.h"
#include "srnic_control.h"

#define ALL 0xff
#define LINK0 0xcd	/* paths 0, 2, 3, 6, 7: one link of two */

static struct srnic_peer peer;

static unsigned plan_slots(const struct srnic_peer_paths *pp, unsigned k)
{
	unsigned i, n = 0;

	for (i = 0; i < SRNIC_PATH_PLAN; i++)
		n += pp->plan[i] == k;
	return n;
}

static void weights(uint8_t w[SRNIC_UDP_PATHS])
{
	uint8_t l[SRNIC_UDP_PATHS], d[SRNIC_UDP_PATHS];

	srnic_paths_weights(&peer, 1, w, l, d);
}

/* The heaviest of link 0's paths, and the lightest of link 1's. */
static void split(unsigned *hi, unsigned *lo)
{
	uint8_t w[SRNIC_UDP_PATHS];
	unsigned k;

	weights(w);
	for (k = 0, *lo = 64, *hi = 0; k < SRNIC_UDP_PATHS; k++)
		if (LINK0 >> k & 1)
			*hi = w[k] > *hi ? w[k] : *hi;
		else
			*lo = w[k] < *lo ? w[k] : *lo;
}

/* A measure that says nothing new of any path. */
static void said_nothing(const uint8_t loss[SRNIC_UDP_PATHS],
			 const uint8_t delay[SRNIC_UDP_PATHS], const char *when)
{
	unsigned k;

	for (k = 0; k < SRNIC_UDP_PATHS; k++)
		CHECK(loss[k] == SRNIC_PATH_LOSS_NONE &&
			      delay[k] == SRNIC_PATH_DELAY_NONE,
		      "path %u: %s said loss %u, delay %u", k, when, loss[k],
		      delay[k]);
}

/* The receiver: its counts of the peer's frames, as the ports keep them. */
static void test_measure(void)
{
	struct srnic_peer_paths *pp = &peer.paths[0];
	uint8_t loss[SRNIC_UDP_PATHS], delay[SRNIC_UDP_PATHS];
	uint64_t now = 1000;
	unsigned k;

	memset(&peer, 0, sizeof(peer));
	srnic_paths_forget(&peer);
	pp->owd_last = 0x1234;
	srnic_paths_measure(&peer, 0, now, loss, delay);
	said_nothing(loss, delay, "a first look");
	CHECK(pp->owd_ref == 0x1234, "ref %#x, not the last delay seen",
	      pp->owd_ref);
	/* 512 numbers on each path; path 3 brought 448 (1/8 lost), the
	 * others all; path 5's 100 data frames took 300 us longer than the
	 * others' (each summed as it differs from ref, which the first look
	 * took from the last delay the receivers saw) */
	for (k = 0; k < SRNIC_UDP_PATHS; k++) {
		pp->rx[k].top = 512;
		pp->rx[k].got = k == 3 ? 448 : 512;
		pp->rx[k].owd_n = 100;
		pp->rx[k].owd_sum = k == 5 ? 100 * 300 : 0;
	}
	now += 50;
	srnic_paths_measure(&peer, 0, now, loss, delay);
	for (k = 0; k < SRNIC_UDP_PATHS; k++)
		CHECK(loss[k] == (k == 3 ? 32 : 0) &&
			      delay[k] == (k == 5 ? 5 : 0),
		      "path %u: loss %u/256, delay code %u", k, loss[k],
		      delay[k]);
	/* ... said once */
	now += 50;
	srnic_paths_measure(&peer, 0, now, loss, delay);
	said_nothing(loss, delay, "a second reading of a window");
	/* Every path 0x3000 us from ref (a clock that drifted): ref moves
	 * there, and neither that window nor the next is read */
	for (k = 0; k < SRNIC_UDP_PATHS; k++) {
		pp->rx[k].owd_n += 100;
		pp->rx[k].owd_sum += 100 * 0x3000;
	}
	now += 50;
	srnic_paths_measure(&peer, 0, now, loss, delay);
	CHECK(delay[0] == SRNIC_PATH_DELAY_NONE &&
		      pp->owd_ref == (uint16_t)(0x1234 + 0x3000),
	      "delay code %u, ref %#x after every path drifted", delay[0],
	      pp->owd_ref);
	for (k = 0; k < SRNIC_UDP_PATHS; k++) {
		pp->rx[k].owd_n += 100;
		pp->rx[k].owd_sum -= 100 * 0x3000;
	}
	now += 50;
	srnic_paths_measure(&peer, 0, now, loss, delay);
	CHECK(delay[0] == SRNIC_PATH_DELAY_NONE,
	      "a delay read from the window after ref moved");
}

/* One weighing a WEIGH_MS (40 ms) apart, with a report. */
static uint64_t weigh(uint64_t now, const uint8_t loss[SRNIC_UDP_PATHS],
		      const uint8_t delay[SRNIC_UDP_PATHS])
{
	now += 50;
	srnic_paths_weigh(&peer, 0, loss, delay, now);
	return now;
}

static void test_weigh(void)
{
	struct srnic_peer_paths *pp = &peer.paths[0];
	uint8_t loss[SRNIC_UDP_PATHS], delay[SRNIC_UDP_PATHS], none_l[8],
		none_d[8], w[SRNIC_UDP_PATHS];
	uint64_t now = 1000;
	unsigned k, i, lo, hi;

	memset(&peer, 0, sizeof(peer));
	srnic_paths_forget(&peer);
	srnic_paths_hear(&peer, 0, ALL);
	for (k = 0; k < SRNIC_UDP_PATHS; k++)
		CHECK(plan_slots(pp, k) == SRNIC_PATH_PLAN / SRNIC_UDP_PATHS,
		      "even weights: path %u has %u slots", k,
		      plan_slots(pp, k));
	memset(none_l, SRNIC_PATH_LOSS_NONE, sizeof(none_l));
	memset(none_d, SRNIC_PATH_DELAY_NONE, sizeof(none_d));

	/* Link 0 loses 10%, link 1 nothing */
	for (k = 0; k < SRNIC_UDP_PATHS; k++)
		loss[k] = (LINK0 >> k & 1) ? 26 : 0;
	for (i = 0; i < 40; i++)
		now = weigh(now, loss, none_d);
	split(&hi, &lo);
	CHECK(hi < lo / 2 && lo == 64,
	      "lossy link's paths weigh up to %u, the others from %u", hi, lo);
	CHECK(plan_slots(pp, 1) > 2 * plan_slots(pp, 0) && plan_slots(pp, 0),
	      "the plan: path 0 (lossy) %u slots, path 1 %u",
	      plan_slots(pp, 0), plan_slots(pp, 1));

	/* Nothing said any more: every weight back to the most; then one
	 * path said milliseconds slower loses a sixteenth at most, and the
	 * others, faster than the average it pulls up, gain as much: 15/17
	 * of 64 after the scaling, not less */
	for (i = 0; i < 400; i++)
		now = weigh(now, none_l, none_d);
	weights(w);
	for (k = 0; k < SRNIC_UDP_PATHS; k++)
		CHECK(w[k] == 64, "path %u at %u, not back", k, w[k]);
	memset(loss, 0, sizeof(loss));
	memset(delay, 0, sizeof(delay));
	delay[2] = 12;
	now = weigh(now, loss, delay);
	weights(w);
	CHECK(w[2] >= 56 && w[2] < 64,
	      "a path 16 ms slower went from 64 to %u in one weighing", w[2]);

	/* Link 0's frames take 256-511 us longer: its paths lose weight,
	 * a sixteenth at most a weighing; then a path not heard leaves the
	 * plan */
	memset(loss, 0, sizeof(loss));
	for (k = 0; k < SRNIC_UDP_PATHS; k++)
		delay[k] = (LINK0 >> k & 1) ? 5 : 0;
	for (i = 0; i < 20; i++)
		now = weigh(now, loss, delay);
	split(&hi, &lo);
	CHECK(hi < lo && lo == 64,
	      "slower link's paths weigh up to %u, the others from %u", hi,
	      lo);
	srnic_paths_hear(&peer, 0, ALL & ~2);
	CHECK(plan_slots(pp, 1) == 0, "a path not heard has %u slots",
	      plan_slots(pp, 1));

	/* A new incarnation: even again */
	srnic_paths_forget(&peer);
	weights(w);
	for (k = 0; k < SRNIC_UDP_PATHS; k++)
		CHECK(w[k] == 64 && plan_slots(pp, k) == 8,
		      "after forget, path %u at %u, %u slots", k, w[k],
		      plan_slots(pp, k));
}

int main(void)
{
	test_measure();
	test_weigh();
	return check_summary("test_paths");
}
