/* SPDX-License-Identifier: MIT */
/*
 * What a QP and a memory region cost in memory: the sizes of the engine's
 * structures as this build lays them out, and the totals for the queue
 * depths given (default: perftest's bandwidth tests, 128 send and 512
 * receive WQEs).  docs/performance.md quotes its output.
 *
 *   build/tests/bench/footprint [SEND_WR RECV_WR]
 */
#include <stdio.h>
#include <stdlib.h>

#include "srnic_mem.h"
#include "srnic_qp.h"

static unsigned pow2_at_least(unsigned n)
{
	unsigned p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

int main(int argc, char **argv)
{
	unsigned sq = pow2_at_least(argc > 2 ? atoi(argv[1]) : 128);
	unsigned rq = pow2_at_least(argc > 2 ? atoi(argv[2]) : 512);
	size_t fixed = sizeof(struct srnic_qp) +
		       SRNIC_WINDOW * sizeof(struct srnic_rmsg);
	size_t per_sq = sizeof(struct srnic_swqe) + sizeof(struct srnic_swqe_run);
	size_t per_rq = sizeof(struct srnic_rwqe);
	size_t qp = fixed + sq * per_sq + rq * per_rq;

	printf("struct srnic_qp           %6zu B\n", sizeof(struct srnic_qp));
	printf("responder window          %6zu B (%u messages x %zu B)\n",
	       SRNIC_WINDOW * sizeof(struct srnic_rmsg), SRNIC_WINDOW,
	       sizeof(struct srnic_rmsg));
	printf("send WQE + its state      %6zu B\n", per_sq);
	printf("receive WQE               %6zu B\n", per_rq);
	printf("QP, %u send and %u receive WQEs: %zu B (%.1f KiB); "
	       "1000 such QPs: %.1f MiB\n",
	       sq, rq, qp, qp / 1024.0, 1000.0 * qp / (1024 * 1024));
	printf("memory region             %6zu B (table of %u entries, "
	       "%zu KiB, allocated once)\n",
	       sizeof(struct srnic_mr), SRNIC_MAX_MR,
	       (size_t)SRNIC_MAX_MR * sizeof(struct srnic_mr) / 1024);
	printf("messages over 64 packets track arrival in a bitmap of their "
	       "own: 1 bit a packet, while they are in flight\n");
	return 0;
}
