/* SPDX-License-Identifier: MIT */
/*
 * sched/event.c: the engine's asynchronous events, which the provider
 * turns into verbs' (ibv_get_async_event).
 */
#ifndef SRNIC_EVENT_H
#define SRNIC_EVENT_H

/*
 * Asynchronous events, as verbs has them: the engine calls fn from one of
 * its threads (so fn must be quick and must not call back into the
 * engine).  Port events concern the device as a whole: active once any
 * port carries traffic, down when none does.  handle is the QP's handle
 * for QP events (srnic_qp.handle, set by whoever created it).
 */
enum srnic_event {
	SRNIC_EV_PORT_ACTIVE,
	SRNIC_EV_PORT_DOWN,
	SRNIC_EV_QP_FATAL,	/* the engine took the QP to the error state */
	SRNIC_EV_COMM_EST,	/* a service QP was bound to its client */
	SRNIC_EV_SRQ_LIMIT,	/* handle: the SRQ's */
	SRNIC_EV_QP_LAST_WQE,	/* a QP on an SRQ entered the error state */
	SRNIC_EV_DEVICE_FATAL,	/* srnicd, which the process was attached
				 * to, is gone: every QP is in the error
				 * state, and every later verb fails */
};
typedef void (*srnic_event_fn)(enum srnic_event ev, void *handle);
void srnic_engine_on_event(srnic_event_fn fn);

#endif
