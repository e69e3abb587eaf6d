/* SPDX-License-Identifier: MIT */
/*
 * Completion channels: a CQ's end of its channel's pipe, and the wait for
 * an event.
 *
 * A channel is a pipe that srnic's preload library makes (preload.c); a
 * CQ created on it opens its own write end through /proc, and the
 * datapath writes the verbs CQ's address into it for an armed CQ's event
 * (srnic_cq_tell, srnic_queue.h), which is what ibv_get_cq_event reads.
 *
 * A thread that waits in ibv_get_cq_event would sleep in the pipe's read
 * until the engine's thread writes the event: a wake-up of its own, on
 * top of whatever brought the frame, and on this kind of machine a
 * wake-up is several microseconds.  So, as Linux's busy polling does for
 * sockets, the waiting thread first runs the datapath itself for up to
 * event_spin_us: a completion that comes meanwhile makes its event on the
 * waiting thread, whose read then finds it.  The preload library's
 * ibv_get_cq_event calls channel_spin first (srnic_preload_wait_hook).
 * ib_send_lat -e went from 8.3-9.5 us typical to 3.4-3.5 on the default
 * testbed with it (docs/history/performance-log.md, "Programs that wait
 * for events").
 *
 * A CQ may also ask for its events early (srnic_cq_set_early, or
 * cq_early_us for all): when a message that will complete into it
 * begins, seed 002's early interrupt (srnic_cq_early, srnic_queue.h; the
 * poll's wait for the completion is cq.c's early_wait).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <dlfcn.h>

#include "srnic.h"
#include "srnic_provider.h"

/* A channel some CQ of this process was made on.  Not freed (the
 * engine's CQs point at written, and a wait may be looking at it): one
 * no CQ uses any more is taken for the next channel. */
struct srnic_chan {
	struct srnic_chan *next;
	const struct ibv_comp_channel *ch;
	int fd;
	struct srnic_context *ctx;
	uint32_t written;	/* events the datapath put in the pipe */
	uint32_t users;		/* CQs on it */
};

static pthread_mutex_t chans_lock = PTHREAD_MUTEX_INITIALIZER;
static struct srnic_chan *chans;

static struct srnic_chan *chan_find(const struct ibv_comp_channel *ch)
{
	struct srnic_chan *c;

	for (c = chans; c; c = c->next)
		if (c->users && c->ch == ch && c->fd == ch->fd)
			return c;
	return NULL;
}

/*
 * Before a wait on ch: run the datapath here until an event is written
 * or event_spin_us have passed.  Not when one is in the pipe already
 * (FIONREAD: counting waits against events would drift for good at the
 * first read a signal interrupts), nor for a channel whose fd is
 * non-blocking (its program asks whether an event is there, and must
 * hear at once).
 */
static void channel_spin(struct ibv_comp_channel *ch)
{
	struct srnic_engine *eng = NULL;
	struct srnic_chan *c;
	uint32_t seen = 0;
	unsigned spin_us = 0;
	uint64_t until;
	int fl, queued, cancel;

	pthread_mutex_lock(&chans_lock);
	c = chan_find(ch);
	if (c) {
		eng = c->ctx->eng;
		spin_us = c->ctx->cfg.event_spin_us;
		seen = __atomic_load_n(&c->written, __ATOMIC_ACQUIRE);
	}
	pthread_mutex_unlock(&chans_lock);
	if (!eng || !spin_us)
		return;
	if (ioctl(ch->fd, FIONREAD, &queued) || queued > 0)
		return;
	fl = fcntl(ch->fd, F_GETFL);
	if (fl < 0 || (fl & O_NONBLOCK))
		return;
	until = srnic_clock_ns() + 1000ull * spin_us;
	/* (not cancelled in the middle: the count of spinners would stay
	 * up; a cancel waits for the read that follows) */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	srnic_engine_app_spins(eng, true);
	while (__atomic_load_n(&c->written, __ATOMIC_ACQUIRE) == seen) {
		if (srnic_clock_ns() >= until)
			break;
		srnic_engine_progress(eng);
	}
	srnic_engine_app_spins(eng, false);
	/* (no event yet: the engine's thread, which stepped aside for this
	 * one, takes over while it sleeps) */
	if (__atomic_load_n(&c->written, __ATOMIC_ACQUIRE) == seen)
		srnic_engine_app_sleeps(eng);
	pthread_setcancelstate(cancel, NULL);
}

/* The CQ's end of its completion channel's pipe: a write end of its own
 * (the channel's fd is the read end); 0, or an errno. */
int srnic_cq_channel(struct srnic_context *ctx, struct srnic_cq_v *scq,
		     struct ibv_comp_channel *ch)
{
	static void (*hook_set)(void (*)(struct ibv_comp_channel *));
	char path[40];
	struct stat st;
	struct srnic_chan *c;
	int fd;

	if (fstat(ch->fd, &st) || !S_ISFIFO(st.st_mode))
		return EINVAL;	/* not a channel srnic's preload made */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", ch->fd);
	fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno;
	pthread_mutex_lock(&chans_lock);
	c = chan_find(ch);
	if (!c) {
		/* (one no CQ uses, or a new one) */
		for (c = chans; c && c->users; c = c->next)
			;
		if (!c && (c = calloc(1, sizeof(*c))) != NULL) {
			c->next = chans;
			chans = c;
		}
		if (c) {
			c->ch = ch;
			c->fd = ch->fd;
			c->ctx = ctx;
		}
	}
	if (c)
		c->users++;
	if (!hook_set) {
		hook_set = (void (*)(void (*)(struct ibv_comp_channel *)))dlsym(
			RTLD_DEFAULT, "srnic_preload_wait_hook");
		if (hook_set)
			hook_set(channel_spin);
	}
	pthread_mutex_unlock(&chans_lock);
	scq->cq->notify_handle = (uintptr_t)&scq->vcq.cq;
	scq->cq->notify_seq = c ? &c->written : NULL;
	scq->cq->early_us = ctx->cfg.cq_early_us;
	scq->cq->notify_fd = fd;
	scq->channel = c;
	return 0;
}

SRNIC_API int srnic_cq_set_early(struct ibv_cq *cq, unsigned spin_us)
{
	if (!cq || !srnic_context_ours(cq->context))
		return EOPNOTSUPP;
	if (to_scq(cq)->cq->notify_fd < 0 || spin_us > SRNIC_MAX_EARLY_US)
		return EINVAL;
	__atomic_store_n(&to_scq(cq)->cq->early_us, spin_us, __ATOMIC_RELEASE);
	return 0;
}

/* The CQ is gone (the datapath let go of it): its end of the pipe too. */
void srnic_cq_channel_close(struct srnic_cq_v *scq, int fd)
{
	struct srnic_chan *c = scq->channel;

	close(fd);
	if (!c)
		return;
	pthread_mutex_lock(&chans_lock);
	c->users--;
	pthread_mutex_unlock(&chans_lock);
}
