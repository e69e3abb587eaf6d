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
 * ib_send_lat -e went from 8.3-9.5 us typical to (below) on the default
 * testbed with it (docs/performance.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <dlfcn.h>

#include "srnic_provider.h"

/* A channel some CQ of this process was made on.  Kept for the life of
 * the process (a few dozen bytes each): the engine's CQs point at
 * written, and a channel's read fd and address may be reused. */
struct srnic_chan {
	struct srnic_chan *next;
	const struct ibv_comp_channel *ch;
	int fd;
	struct srnic_context *ctx;
	uint32_t written;	/* events the datapath put in the pipe */
	uint32_t taken;		/* waits that began (each reads one) */
	uint32_t users;		/* CQs on it */
};

static pthread_mutex_t chans_lock = PTHREAD_MUTEX_INITIALIZER;
static struct srnic_chan *chans;

static struct srnic_chan *chan_find(const struct ibv_comp_channel *ch)
{
	struct srnic_chan *c;

	for (c = chans; c; c = c->next)
		if (c->ch == ch && c->fd == ch->fd)
			return c;
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Before a wait on ch: run the datapath here until an event is in the
 * pipe or event_spin_us have passed.  Not for a channel whose fd is
 * non-blocking (its program asks whether an event is there, and must
 * hear at once), nor when one is there already (the events written less
 * the waits that began before this one).
 */
static void channel_spin(struct ibv_comp_channel *ch)
{
	struct srnic_engine *eng;
	uint64_t until;
	uint32_t taken;
	struct srnic_chan *c;
	int fl;

	pthread_mutex_lock(&chans_lock);
	c = chan_find(ch);
	pthread_mutex_unlock(&chans_lock);
	if (!c || !(eng = c->ctx->eng) || !c->ctx->cfg.event_spin_us)
		return;
	fl = fcntl(ch->fd, F_GETFL);
	if (fl < 0 || (fl & O_NONBLOCK))
		return;
	taken = __atomic_fetch_add(&c->taken, 1, __ATOMIC_RELAXED);
	until = now_ns() + 1000ull * c->ctx->cfg.event_spin_us;
	srnic_engine_app_spins(eng, true);
	while ((int32_t)(__atomic_load_n(&c->written, __ATOMIC_ACQUIRE) -
			 taken) <= 0) {
		if (now_ns() >= until) {
			/* (the engine's thread, which stepped aside for
			 * this one, takes over while it sleeps) */
			srnic_engine_app_spins(eng, false);
			srnic_engine_app_sleeps(eng);
			return;
		}
		srnic_engine_progress(eng);
	}
	srnic_engine_app_spins(eng, false);
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
		c = calloc(1, sizeof(*c));
		if (c) {
			c->next = chans;
			chans = c;
		}
	}
	if (c && !c->users) {
		/* (new, or a channel made again at a freed one's address
		 * and fd: it starts with no event) */
		c->ch = ch;
		c->fd = ch->fd;
		c->ctx = ctx;
		c->written = c->taken = 0;
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
	scq->cq->notify_fd = fd;
	scq->channel = c;
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
