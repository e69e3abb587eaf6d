/* SPDX-License-Identifier: MIT */
/*
 * Half-RDMA's half-receive READ (docs/half-rdma.md), the provider's way
 * in: a program's answer to a READ request its FIFO took is sent on the
 * datapath thread, in engine calls, straight from the program's iovec
 * into packets (responder/fifo.c), a burst a call so that the datapath's
 * other work goes on between them.
 */
#include "engine_internal.h"

static void call_fifo_answer(struct srnic_engine *eng, struct srnic_call *c)
{
	c->result = srnic_responder_fifo_answer(eng,
						(uint32_t)(uintptr_t)c->arg,
						c->arg2);
}

int srnic_engine_fifo_answer(struct srnic_engine *eng, uint32_t qpn,
			     const struct srnic_fifo_answer *a)
{
	struct srnic_call c = {.fn = call_fifo_answer,
			       .arg = (void *)(uintptr_t)qpn, .arg2 = a};

	srnic_engine_call(eng, &c);
	return c.result;
}
