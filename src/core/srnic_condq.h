/* SPDX-License-Identifier: MIT */
/*
 * Conditional queues (seed 002 l.372-390; docs/conditional-rdma.md): a
 * counter of the completions of the send WQEs posted as its components,
 * successes and failures apart, and the QPs whose next WQE waits for the
 * counter to reach a value.  The completer counts (sched/condq.c), the
 * requester parks a QP on a condition not met yet, the count wakes it:
 * the two roles meet here, never calling each other.  The program sets
 * and queries the counter through include/srnic.h (engine/condq.c).
 */
#ifndef SRNIC_CONDQ_H
#define SRNIC_CONDQ_H

#include <stdbool.h>
#include <stdint.h>

/* Queues a process may have at once; a queue's id is its index under
 * the generation of the index's use, so that a component posted to a
 * queue destroyed since counts into no queue made after it. */
#define SRNIC_CONDQ_INDEX_BITS 6
#define SRNIC_MAX_CONDQ (1u << SRNIC_CONDQ_INDEX_BITS)

/* What a conditional WQE waits for (enum srnic_cond_op in srnic.h). */
enum srnic_condq_op {
	SRNIC_CONDQ_COUNT_GE,	/* successes >= value */
	SRNIC_CONDQ_FAILED_GE,	/* failures >= value */
};

struct srnic_qp;

struct srnic_condq_state {
	/* datapath writes, the program reads (srnic_condq_query) */
	uint64_t count;		/* components that completed successfully */
	uint64_t failed;	/* ... with an error, or flushed */
	uint64_t fired;		/* conditional WQEs started */
	/* engine calls (under the datapath token) */
	uint16_t id;		/* 0: free (its PD is the provider's to check) */
	/* the QPs whose next WQE waits on it, through qp->cond_next */
	struct srnic_qp *waiters;
};

static inline uint32_t srnic_condq_index(uint16_t id)
{
	return id & (SRNIC_MAX_CONDQ - 1);
}

static inline bool srnic_condq_holds(const struct srnic_condq_state *q,
				     uint8_t op, uint64_t value)
{
	return (op == SRNIC_CONDQ_FAILED_GE ? q->failed : q->count) >= value;
}

#endif
