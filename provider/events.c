/* SPDX-License-Identifier: MIT */
/*
 * Asynchronous events.  libibverbs reads them from the context's async_fd
 * as the kernel's uverbs driver would write them (struct
 * ib_uverbs_async_event_desc); with no kernel driver, each context has a
 * pipe of its own and the engine's event callback writes into it: QP
 * events to the context that owns the QP, port events (and DEVICE_FATAL:
 * srnicd went away) to every context whose engine is running.  The write
 * end never blocks: an application that leaves events unread loses the
 * newest, it never stalls the engine.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>

#include "srnic_provider.h"

static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct srnic_context *contexts;	/* with a pipe */

/* Returns whether the event was written (a full pipe loses it). */
static bool put_event(struct srnic_context *ctx, uint64_t element,
		      enum ibv_event_type type)
{
	struct ib_uverbs_async_event_desc d;

	memset(&d, 0, sizeof(d));
	d.element = element;
	d.event_type = type;
	return write(ctx->async_pipe[1], &d, sizeof(d)) == sizeof(d);
}

static void on_event(enum srnic_event ev, void *handle)
{
	struct srnic_context *ctx;

	if (ev == SRNIC_EV_QP_FATAL || ev == SRNIC_EV_QP_LAST_WQE ||
	    ev == SRNIC_EV_COMM_EST) {
		struct srnic_qp_v *sqp = handle;

		/* Counted under the QP's mutex: destroy_qp waits for the
		 * acknowledgements of what was written. */
		if (sqp) {
			pthread_mutex_lock(&sqp->vqp.qp.mutex);
			sqp->events_reported +=
				put_event(sqp->ctx, (uintptr_t)&sqp->vqp.qp,
					  ev == SRNIC_EV_QP_FATAL
						  ? IBV_EVENT_QP_FATAL
					  : ev == SRNIC_EV_COMM_EST
						  ? IBV_EVENT_COMM_EST
						  : IBV_EVENT_QP_LAST_WQE_REACHED);
			pthread_mutex_unlock(&sqp->vqp.qp.mutex);
		}
		return;
	}
	if (ev == SRNIC_EV_SRQ_LIMIT) {
		struct srnic_srq_v *ssrq = handle;

		if (ssrq) {
			pthread_mutex_lock(&ssrq->ibv_srq.mutex);
			ssrq->events_reported +=
				put_event(ssrq->ctx, (uintptr_t)&ssrq->ibv_srq,
					  IBV_EVENT_SRQ_LIMIT_REACHED);
			pthread_mutex_unlock(&ssrq->ibv_srq.mutex);
		}
		return;
	}
	pthread_mutex_lock(&contexts_lock);
	for (ctx = contexts; ctx; ctx = ctx->next)
		if (ctx->eng)
			put_event(ctx, 1, ev == SRNIC_EV_PORT_ACTIVE
						  ? IBV_EVENT_PORT_ACTIVE
					  : ev == SRNIC_EV_DEVICE_FATAL
						  ? IBV_EVENT_DEVICE_FATAL
						  : IBV_EVENT_PORT_ERR);
	pthread_mutex_unlock(&contexts_lock);
}

int srnic_events_open(struct srnic_context *ctx)
{
	if (pipe2(ctx->async_pipe, O_CLOEXEC))
		return -1;
	/* ibv_get_async_event blocks on the read end; we never block on
	 * the write end. */
	fcntl(ctx->async_pipe[1], F_SETFL,
	      fcntl(ctx->async_pipe[1], F_GETFL) | O_NONBLOCK);
	srnic_engine_on_event(on_event);
	pthread_mutex_lock(&contexts_lock);
	ctx->next = contexts;
	contexts = ctx;
	pthread_mutex_unlock(&contexts_lock);
	return 0;
}

void srnic_keep_until_close(struct srnic_context *ctx, void *obj)
{
	void **kept;

	pthread_mutex_lock(&ctx->lock);
	kept = realloc(ctx->kept, (ctx->nkept + 1) * sizeof(*kept));
	if (kept) {
		kept[ctx->nkept++] = obj;
		ctx->kept = kept;
	}
	pthread_mutex_unlock(&ctx->lock);
	/* Out of memory: leaked, which is still better than freed. */
}

void srnic_events_close(struct srnic_context *ctx)
{
	unsigned i;

	struct srnic_context **pp;

	pthread_mutex_lock(&contexts_lock);
	for (pp = &contexts; *pp; pp = &(*pp)->next)
		if (*pp == ctx) {
			*pp = ctx->next;
			break;
		}
	pthread_mutex_unlock(&contexts_lock);
	if (ctx->async_pipe[1] >= 0)
		close(ctx->async_pipe[1]);
	ctx->async_pipe[1] = -1;
	for (i = 0; i < ctx->nkept; i++)
		free(ctx->kept[i]);
	free(ctx->kept);
	ctx->kept = NULL;
	ctx->nkept = 0;
}
