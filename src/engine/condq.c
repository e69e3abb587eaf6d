/* SPDX-License-Identifier: MIT */
/*
 * Conditional queues as the provider makes and uses them (srnic.h's
 * srnic_condq_*; docs/conditional-rdma.md): every change is an engine
 * call, under the datapath token, so that the datapath (sched/condq.c)
 * sees a queue come, move and go between iterations; a query reads the
 * counters the datapath publishes.  Runs on the program's threads.
 */
#include <errno.h>

#include "engine_internal.h"

static void call_condq_create(struct srnic_engine *eng, struct srnic_call *c)
{
	uint32_t i, gen;

	for (i = 0; i < SRNIC_MAX_CONDQ; i++) {
		struct srnic_condq_state *q = &eng->condq[i];

		if (q->id)
			continue;
		/* the next generation of the ids, never 0 */
		gen = (uint32_t)(eng->condq_last >> SRNIC_CONDQ_INDEX_BITS) + 1;
		gen &= (1u << (16 - SRNIC_CONDQ_INDEX_BITS)) - 1;
		gen += !gen;
		memset(q, 0, sizeof(*q));
		q->id = (uint16_t)(gen << SRNIC_CONDQ_INDEX_BITS | i);
		eng->condq_last = q->id;
		c->result = q->id;
		return;
	}
	c->result = -ENOMEM;
}

int srnic_engine_condq_create(struct srnic_engine *eng)
{
	struct srnic_call c = {.fn = call_condq_create};

	srnic_engine_call(eng, &c);
	return c.result;
}

static void call_condq_destroy(struct srnic_engine *eng, struct srnic_call *c)
{
	srnic_condq_retire(eng, (uint16_t)(uintptr_t)c->arg2);
	c->result = 0;
}

void srnic_engine_condq_destroy(struct srnic_engine *eng, uint16_t id)
{
	struct srnic_call c = {.fn = call_condq_destroy,
			       .arg2 = (const void *)(uintptr_t)id};

	srnic_engine_call(eng, &c);
}

static void call_condq_set(struct srnic_engine *eng, struct srnic_call *c)
{
	srnic_condq_store(eng, (uint16_t)(uintptr_t)c->arg2,
			*(const uint64_t *)c->arg);
	c->result = 0;
}

void srnic_engine_condq_set(struct srnic_engine *eng, uint16_t id,
			    uint64_t count)
{
	struct srnic_call c = {.fn = call_condq_set, .arg = &count,
			       .arg2 = (const void *)(uintptr_t)id};

	srnic_engine_call(eng, &c);
}

void srnic_engine_condq_query(const struct srnic_engine *eng, uint16_t id,
			      uint64_t out[3])
{
	const struct srnic_condq_state *q = &eng->condq[srnic_condq_index(id)];

	out[0] = __atomic_load_n(&q->count, __ATOMIC_ACQUIRE);
	out[1] = __atomic_load_n(&q->failed, __ATOMIC_ACQUIRE);
	out[2] = __atomic_load_n(&q->fired, __ATOMIC_ACQUIRE);
}
