/* SPDX-License-Identifier: MIT */
/*
 * xcpu: how long one cache line takes to go from CPU 0 to CPU 1 and back,
 * now.  Two threads, one pinned to each CPU, pass a counter through two
 * cache lines for MS milliseconds; prints the mean round trip in ns.
 *
 *   xcpu [MS]        (default 200)
 *
 * Why a benchmark needs it: on this kind of virtual machine the host moves
 * the two vCPUs about, and the round trip is 110-130 ns for seconds at a
 * time, then 540-670 ns.  Everything srnic hands between two
 * threads (rings, descriptors, the data) pays it.  UCX's
 * put latency over srnic went from 1.0 to 2.0 us and back within single
 * runs, on one port or two, with srnicd or without, with the programs
 * pinned or not; of 14 short runs between two xcpu readings, the three
 * slow ones (1.9-2.9 us) had a slow reading or a change next to them,
 * though one slow reading came before a fast run.  The benchmarks print it
 * beside each round, so that a slow round can be told from a slower srnic.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t ping __attribute__((aligned(64)));
static volatile uint64_t pong __attribute__((aligned(64)));
static volatile int stop;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *answer(void *arg)
{
	uint64_t seen = 0;

	(void)arg;
	while (!stop) {
		uint64_t v = ping;

		if (v != seen)
			pong = seen = v;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t ms = argc > 1 ? strtoull(argv[1], NULL, 0) : 200, n, t0, end;
	pthread_attr_t attr;
	cpu_set_t cpu0, cpu1;
	pthread_t t;

	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	CPU_ZERO(&cpu1);
	CPU_SET(1, &cpu1);
	/* (the answering thread starts on CPU 1, or not at all) */
	if (pthread_attr_init(&attr) ||
	    pthread_attr_setaffinity_np(&attr, sizeof(cpu1), &cpu1) ||
	    pthread_setaffinity_np(pthread_self(), sizeof(cpu0), &cpu0) ||
	    pthread_create(&t, &attr, answer, NULL)) {
		fprintf(stderr, "xcpu: needs CPUs 0 and 1\n");
		return 1;
	}
	t0 = now_ns();
	end = t0 + ms * 1000000u;
	/* (the clock is read once per 1024 round trips) */
	for (n = 1; (n & 1023) || now_ns() < end; n++) {
		ping = n;
		while (pong != n)
			;
	}
	stop = 1;
	pthread_join(t, NULL);
	printf("%.0f\n", (double)(now_ns() - t0) / (double)n);
	return 0;
}
