/* SPDX-License-Identifier: MIT */
/*
 * Completion channels: a CQ's end of its channel's pipe, and the wait for
 * an event.
 *
 * A channel is a pipe that srnic's preload library makes (preload.c); a
 * CQ created on it opens its own write end through /proc, and the
 * datapath writes the verbs CQ's address into it for an armed CQ's event
 * (srnic_cq_tell, srnic_queue.h), which is what ibv_get_cq_event reads,
 * unless a waiting thread holds the channel's slot (below).
 *
 * A thread that waits in ibv_get_cq_event would sleep in the pipe's read
 * until the engine's thread writes the event: a wake-up of its own, on
 * top of whatever brought the frame, and on this kind of machine a
 * wake-up is several microseconds.  So, as Linux's busy polling does for
 * sockets, the waiting thread first runs the datapath itself for up to
 * event_spin_us: a completion that comes meanwhile makes its event on the
 * waiting thread.  The preload library's ibv_get_cq_event hands the
 * waits on our channels to channel_get_event (srnic_preload_event_hook).
 * ib_send_lat -e went from 8.3-9.5 us typical to 3.4-3.5 on the default
 * testbed with the spin (docs/history/performance-log.md, "Programs that
 * wait for events").  The first thread to spin on a channel also holds
 * its hand-over slot, and the event is handed to it there, in memory:
 * no write and no read of the pipe, some 0.7 us a wait on this kind of
 * machine (and no wait asks the kernel whether the pipe holds one:
 * chan_queued).  ib_send_lat -e went from 3.9 to 2.4 us typical.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <dlfcn.h>

#include "srnic.h"
#include "srnic_provider.h"

/* A channel some CQ of this process was made on.  Not freed (the
 * engine's CQs point at written and claim, and a wait may be looking at
 * it): one no CQ uses any more, whose pipe has no event left to read and
 * whose slot nobody holds, is taken for the next channel. */
struct srnic_chan {
	struct srnic_chan *next;
	const struct ibv_comp_channel *ch;
	int fd;
	ino_t ino;		/* the pipe's (ch and fd may come again) */
	struct srnic_context *ctx;
	uint32_t written;	/* events the datapath put in the pipe */
	uint32_t taken;		/* ... and this process's waits read back */
	uint64_t claim;		/* the hand-over slot (srnic_cq_tell) */
	uint32_t users;		/* CQs on it */
	struct srnic_cq_v *dead; /* destroyed CQs with events in the pipe */
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

/* Whether the pipe holds an event no wait has read yet.  (Counted rather
 * than asked of the kernel, FIONREAD, a system call per wait.  A read
 * that passes these waits by leaves the count above zero for good: the
 * waits then sleep at once, as on a channel without the spin.) */
static bool chan_queued(const struct srnic_chan *c)
{
	return (int32_t)(__atomic_load_n(&c->written, __ATOMIC_ACQUIRE) -
			 __atomic_load_n(&c->taken, __ATOMIC_ACQUIRE)) > 0;
}

/* The verbs CQ of the event handed over in c's slot, which the caller
 * held: the event's, its context too, under the lock that a CQ's destroy
 * takes to drop its event from the slot (so the CQ is never a freed
 * one); whether there was one.  The slot is free again. */
static bool chan_handed(struct srnic_chan *c, struct ibv_cq **cq,
			void **cq_context)
{
	uint64_t got;

	pthread_mutex_lock(&chans_lock);
	/* (only the holder moves the slot off a handed-over CQ, and only
	 * a destroy moves it back to waiting) */
	got = __atomic_exchange_n(&c->claim, SRNIC_CLAIM_IDLE,
				  __ATOMIC_ACQ_REL);
	if (got != SRNIC_CLAIM_WAITING) {
		/* (as libibverbs' own would; srnic has no cq_event op) */
		*cq = (struct ibv_cq *)(uintptr_t)got;
		*cq_context = (*cq)->cq_context;
	}
	pthread_mutex_unlock(&chans_lock);
	return got != SRNIC_CLAIM_WAITING;
}

/*
 * Before a wait on ch: run the datapath here until an event comes or
 * event_spin_us have passed.  Not when one is in the pipe already, nor
 * for a channel whose fd is non-blocking (its program asks whether an
 * event is there, and must hear at once).  The first such thread holds
 * the channel's slot: the next event is handed to it there, not written
 * to the pipe, and is the wait's (true, *cq and *cq_context set); others
 * wait for an event in the pipe.
 */
static bool channel_spin(struct ibv_comp_channel *ch, struct ibv_cq **cq,
			 void **cq_context)
{
	struct srnic_engine *eng = NULL;
	struct srnic_chan *c;
	uint64_t idle = SRNIC_CLAIM_IDLE, until;
	unsigned spin_us = 0;
	uint32_t seen = 0;
	bool slot, queued = false, got = false;
	int fl, cancel;

	pthread_mutex_lock(&chans_lock);
	c = chan_find(ch);
	if (c) {
		eng = c->ctx->eng;
		spin_us = c->ctx->cfg.event_spin_us;
		/* (seen first: an event written after it ends the spin, one
		 * before it is queued) */
		seen = __atomic_load_n(&c->written, __ATOMIC_ACQUIRE);
		queued = chan_queued(c);
	}
	pthread_mutex_unlock(&chans_lock);
	if (!c || !spin_us || queued)
		return false;
	fl = fcntl(ch->fd, F_GETFL);
	if (fl < 0 || (fl & O_NONBLOCK))
		return false;
	/* (the slot is taken under the lock that a channel's reuse of c
	 * takes, once ch's CQs are gone: a slot held is never reused, so
	 * no other channel's event comes to this wait) */
	pthread_mutex_lock(&chans_lock);
	if (c != chan_find(ch)) {
		pthread_mutex_unlock(&chans_lock);
		return false;
	}
	slot = __atomic_compare_exchange_n(&c->claim, &idle,
					   SRNIC_CLAIM_WAITING, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&chans_lock);
	until = srnic_clock_ns() + 1000ull * spin_us;
	/* (not cancelled in the middle: the count of spinners would stay
	 * up, and the slot held; a cancel waits for the read that
	 * follows) */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	srnic_engine_app_spins(eng, true);
	while (__atomic_load_n(&c->written, __ATOMIC_ACQUIRE) == seen &&
	       (!slot || __atomic_load_n(&c->claim, __ATOMIC_ACQUIRE) ==
				 SRNIC_CLAIM_WAITING)) {
		if (srnic_clock_ns() >= until)
			break;
		srnic_engine_progress(eng);
	}
	srnic_engine_app_spins(eng, false);
	if (slot)
		got = chan_handed(c, cq, cq_context);
	/* (no event yet: the engine's thread, which stepped aside for this
	 * one, takes over while it sleeps) */
	if (!got && __atomic_load_n(&c->written, __ATOMIC_ACQUIRE) == seen)
		srnic_engine_app_sleeps(eng);
	pthread_setcancelstate(cancel, NULL);
	return got;
}

/* A dead CQ whose events are all read, or whose channel went: freed (the
 * lock held). */
static void dead_free(struct srnic_cq_v *scq)
{
	struct srnic_cq_v **p;

	for (p = scq->channel ? &scq->channel->dead : NULL; p && *p;
	     p = &(*p)->dead_next)
		if (*p == scq) {
			*p = scq->dead_next;
			break;
		}
	free(scq);
}

/*
 * An event of scq's was read from the pipe: counted (its channel's
 * count, and the CQ's own); whether it stands.  One of a CQ destroyed
 * since does not: the kernel's channel drops a CQ's events at its
 * destroy, and a program may destroy a CQ whose event it never read,
 * which here stays in the pipe.  So such a CQ's memory is kept until the
 * pipe has given back all its events (srnic_cq_channel_close), and they
 * are skipped: its program never sees the freed CQ.  (Its channel's
 * entry is not reused meanwhile: its pipe has events left.)
 */
static bool chan_read(struct srnic_cq_v *scq)
{
	bool stands;

	pthread_mutex_lock(&chans_lock);
	if (scq->channel)
		__atomic_add_fetch(&scq->channel->taken, 1, __ATOMIC_RELEASE);
	scq->piped_read++;
	stands = !scq->dead;
	if (scq->dead &&
	    scq->piped_read == __atomic_load_n(&scq->piped, __ATOMIC_ACQUIRE))
		dead_free(scq);
	pthread_mutex_unlock(&chans_lock);
	return stands;
}

/* ibv_get_cq_event on one of our channels (the preload library's hook):
 * the spin, and the event it was handed, or else libibverbs' own read of
 * the pipe (read_event). */
static int channel_get_event(struct ibv_comp_channel *ch, struct ibv_cq **cq,
			     void **cq_context,
			     int (*read_event)(struct ibv_comp_channel *,
					       struct ibv_cq **, void **))
{
	int rc;

	if (channel_spin(ch, cq, cq_context))
		return 0;
	while ((rc = read_event(ch, cq, cq_context)) == 0 &&
	       !chan_read(to_scq(*cq)))
		;	/* (a destroyed CQ's: as if the kernel had dropped it) */
	return rc;
}

/* The channel is being destroyed (the preload library's hook; no CQ is on
 * it): its pipe goes, with any events left in it, so its dead CQs go too,
 * and its entry is free for the next channel. */
static void channel_gone(struct ibv_comp_channel *ch)
{
	struct srnic_chan *c;

	pthread_mutex_lock(&chans_lock);
	for (c = chans; c; c = c->next) {
		if (c->ch != ch || c->fd != ch->fd || c->users)
			continue;
		while (c->dead)
			dead_free(c->dead);
		c->ch = NULL;
		c->fd = -1;
		__atomic_store_n(&c->written, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&c->taken, 0, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&chans_lock);
}

/* The CQ's end of its completion channel's pipe: a write end of its own
 * (the channel's fd is the read end); 0, or an errno. */
int srnic_cq_channel(struct srnic_context *ctx, struct srnic_cq_v *scq,
		     struct ibv_comp_channel *ch)
{
	static void (*hook_set)(typeof(&channel_get_event));
	void (*gone_set)(void (*)(struct ibv_comp_channel *));
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
	/* (the channel's own entry, with its counts of the events in its
	 * pipe, while it has one) */
	for (c = chans; c && !(c->ch == ch && c->fd == ch->fd &&
			       c->ino == st.st_ino);
	     c = c->next)
		;
	if (!c) {
		/* (one free for the next channel, or a new one) */
		for (c = chans;
		     c && (c->users || chan_queued(c) ||
			   __atomic_load_n(&c->claim, __ATOMIC_ACQUIRE) !=
				   SRNIC_CLAIM_IDLE);
		     c = c->next)
			;
		if (!c && (c = calloc(1, sizeof(*c))) != NULL) {
			c->next = chans;
			chans = c;
		}
		if (c) {
			c->ch = ch;
			c->fd = ch->fd;
			c->ino = st.st_ino;
			/* (a new pipe: empty) */
			__atomic_store_n(&c->written, 0, __ATOMIC_RELEASE);
			__atomic_store_n(&c->taken, 0, __ATOMIC_RELEASE);
		}
	}
	if (c) {
		c->ctx = ctx;
		c->users++;
	}
	if (!hook_set) {
		hook_set = (void (*)(typeof(&channel_get_event)))dlsym(
			RTLD_DEFAULT, "srnic_preload_event_hook");
		if (hook_set)
			hook_set(channel_get_event);
		gone_set = (void (*)(void (*)(struct ibv_comp_channel *)))
			dlsym(RTLD_DEFAULT, "srnic_preload_gone_hook");
		if (gone_set)
			gone_set(channel_gone);
	}
	pthread_mutex_unlock(&chans_lock);
	scq->cq->notify_handle = (uintptr_t)&scq->vcq.cq;
	scq->cq->notify_seq = c ? &c->written : NULL;
	scq->cq->notify_cq_seq = &scq->piped;
	scq->cq->notify_claim = c ? &c->claim : NULL;
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

/* The CQ is gone (the datapath let go of it): its end of the pipe too,
 * and scq, at once or, while the pipe holds events of it, once a wait has
 * read the last (chan_read). */
void srnic_cq_channel_close(struct srnic_cq_v *scq, int fd)
{
	struct srnic_chan *c = scq->channel;
	uint64_t handed = (uintptr_t)&scq->vcq.cq;

	close(fd);
	pthread_mutex_lock(&chans_lock);
	if (c) {
		c->users--;
		/* (its event handed to a wait not yet back is dropped,
		 * and the wait goes on: chan_handed) */
		__atomic_compare_exchange_n(&c->claim, &handed,
					    SRNIC_CLAIM_WAITING, false,
					    __ATOMIC_ACQ_REL,
					    __ATOMIC_RELAXED);
	}
	scq->dead = scq->piped_read !=
		    __atomic_load_n(&scq->piped, __ATOMIC_ACQUIRE);
	if (!scq->dead) {
		free(scq);
	} else if (c) {
		scq->dead_next = c->dead;
		c->dead = scq;
	}
	pthread_mutex_unlock(&chans_lock);
}
