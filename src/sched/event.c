/* SPDX-License-Identifier: MIT */
/*
 * The adapter's asynchronous events (a QP's last WQE, an SRQ's limit, a
 * port's state, the device's end), handed to whoever registered for them:
 * the provider.  Any thread of the engine.
 */
#include "srnic_sched.h"

static srnic_event_fn event_fn;

void srnic_engine_on_event(srnic_event_fn fn)
{
	__atomic_store_n(&event_fn, fn, __ATOMIC_RELEASE);
}

void srnic_event(enum srnic_event ev, void *handle)
{
	srnic_event_fn fn = __atomic_load_n(&event_fn, __ATOMIC_ACQUIRE);

	if (fn)
		fn(ev, handle);
}
