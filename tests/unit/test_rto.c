/* SPDX-License-Identifier: MIT */
/*
 * The retransmission timer's estimate (srnic_rto.h): it follows measured
 * round trips, stays within its bounds, backs off while probes go
 * unanswered and comes back at the first progress.
 */
#include <string.h>

#include "check.h"
#include "srnic_rto.h"

#define HZ 1000000000ull	/* a 1 GHz TSC: one cycle a nanosecond */
#define US 1000ull

static void qp_init(struct srnic_qp *qp, uint64_t timeout)
{
	memset(qp, 0, sizeof(*qp));
	qp->at.timeout_tsc = timeout;
}

static void test_before_samples(void)
{
	struct srnic_qp qp;

	qp_init(&qp, 64000 * US);
	CHECK(srnic_probe_tsc(&qp) == 4000 * US,
	      "without a sample the probe waits timeout/16, not %lu",
	      (unsigned long)srnic_probe_tsc(&qp));
}

static void test_follows_samples(void)
{
	struct srnic_qp qp;
	unsigned i;

	qp_init(&qp, 64000 * US);
	srnic_rto_sample(&qp, 1000 * US, HZ);
	/* first sample: srtt = r, rttvar = r/2, rto = 3r */
	CHECK(qp.snd.rto == 3000 * US, "first RTO %lu us",
	      (unsigned long)(qp.snd.rto / US));
	for (i = 0; i < 200; i++)
		srnic_rto_sample(&qp, 1000 * US, HZ);
	CHECK(qp.snd.srtt == 1000 * US, "SRTT %lu us after steady samples",
	      (unsigned long)(qp.snd.srtt / US));
	CHECK(qp.snd.rto >= 1000 * US && qp.snd.rto < 1100 * US,
	      "RTO %lu us after steady 1 ms samples",
	      (unsigned long)(qp.snd.rto / US));
	/* a sudden slow sample widens it, by way of the variance */
	srnic_rto_sample(&qp, 5000 * US, HZ);
	CHECK(qp.snd.rto > 4000 * US, "RTO %lu us after a 5 ms outlier",
	      (unsigned long)(qp.snd.rto / US));
}

static void test_bounds(void)
{
	struct srnic_qp qp;
	unsigned i;

	qp_init(&qp, 8000 * US);
	for (i = 0; i < 50; i++)
		srnic_rto_sample(&qp, 10 * US, HZ);
	CHECK(qp.snd.rto == SRNIC_RTO_MIN_US * US, "RTO %lu us below the floor",
	      (unsigned long)(qp.snd.rto / US));
	srnic_rto_sample(&qp, 100000 * US, HZ);
	CHECK(qp.snd.rto == 8000 * US, "RTO %lu us above the verbs timeout",
	      (unsigned long)(qp.snd.rto / US));
}

static void test_backoff(void)
{
	struct srnic_qp qp;
	unsigned i;

	qp_init(&qp, 64000 * US);
	for (i = 0; i < 50; i++)
		srnic_rto_sample(&qp, 500 * US, HZ);
	uint64_t base = srnic_probe_tsc(&qp);

	srnic_rto_backoff(&qp);
	CHECK(srnic_probe_tsc(&qp) == 2 * base, "one probe doubles the wait");
	srnic_rto_backoff(&qp);
	CHECK(srnic_probe_tsc(&qp) == 4 * base, "two probes: four times");
	for (i = 0; i < 40; i++)
		srnic_rto_backoff(&qp);
	CHECK(srnic_probe_tsc(&qp) == 16000 * US,
	      "backed-off wait capped at a quarter of the verbs timeout, "
	      "not %lu us",
	      (unsigned long)(srnic_probe_tsc(&qp) / US));
	srnic_rto_progress(&qp);
	CHECK(srnic_probe_tsc(&qp) == base, "progress ends the back-off");
}

int main(void)
{
	test_before_samples();
	test_follows_samples();
	test_bounds();
	test_backoff();
	return check_summary("test_rto");
}
