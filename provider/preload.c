/* SPDX-License-Identifier: MIT */
/*
 * libsrnic-preload.so: the one verbs call srnic cannot serve from its
 * provider.  libibverbs' ibv_create_comp_channel asks the kernel's uverbs
 * file for a channel (a command written to cmd_fd, whose answer is an fd),
 * and srnic has no kernel.  Preloaded (./srnic exec sets LD_PRELOAD), this
 * library defines that call and its
 * destroy: for an srnic device the channel is a pipe made here, and the
 * provider's CQs open their own write ends of it (cq.c); for any other
 * device, libibverbs' own function runs.  ibv_get_cq_event on one of
 * these channels is the provider's wait (channel.c), which reads the pipe
 * with libibverbs' own function; every other call of the channel
 * (ibv_ack_cq_events, poll/epoll on its fd) is libibverbs' own and works
 * unchanged.
 *
 * The definitions are unversioned; they still take an application's
 * references to ibv_create_comp_channel@IBVERBS_1.0 (ld.so binds a
 * versioned reference to an unversioned definition that comes first).
 * This library links nothing of libibverbs: a program preloaded with it
 * that never uses verbs does not load libibverbs because of it.
 *
 * It also sees a program's munmap, mremap and shmdt first, for the
 * registration cache (mr_cache.c), which hooks itself in once a program
 * uses it: a region over memory about to be unmapped is never handed out
 * again.  (What libc unmaps inside free() is not seen: it calls no
 * exported munmap.)
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "preload.h"

#define EXPORT __attribute__((visibility("default")))

/* The write end each of our channels keeps open (so that a read waits,
 * rather than seeing the end of the pipe, while no CQ is on the channel):
 * by the channel's read fd. */
struct kept {
	struct kept *next;
	int rfd, wfd;
};

static struct kept *kept;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static bool is_srnic(const struct ibv_context *ctx)
{
	return ctx && ctx->device &&
	       strncmp(ctx->device->name, "srnic", 5) == 0;
}

/* libibverbs' own function: next in the search order, or, when
 * libibverbs came with a library that was dlopen()ed on its own (UCX's
 * modules are), where it was loaded.  (ucma/ asks it too.) */
void *preload_verbs_fn(const char *name, const char *version)
{
	void *fn = dlvsym(RTLD_NEXT, name, version);
	void *lib;

	if (!fn)
		fn = dlsym(RTLD_NEXT, name);
	if (fn)
		return fn;
	lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!lib)
		return NULL;
	fn = dlvsym(lib, name, version);
	dlclose(lib);	/* (NOLOAD took a reference: libibverbs stays) */
	return fn;
}

static void *real(const char *name)
{
	return preload_verbs_fn(name, "IBVERBS_1.0");
}

EXPORT struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *ctx)
{
	struct ibv_comp_channel *(*next)(struct ibv_context *);
	struct ibv_comp_channel *ch;
	struct kept *k;
	int fds[2];

	if (!is_srnic(ctx)) {
		next = real("ibv_create_comp_channel");
		if (!next) {
			errno = ENOSYS;
			return NULL;
		}
		return next(ctx);
	}
	ch = calloc(1, sizeof(*ch));
	k = calloc(1, sizeof(*k));
	if (!ch || !k || pipe2(fds, O_CLOEXEC)) {
		free(ch);
		free(k);
		return NULL;
	}
	ch->context = ctx;
	ch->fd = fds[0];
	ch->refcnt = 0;
	k->rfd = fds[0];
	k->wfd = fds[1];
	pthread_mutex_lock(&kept_lock);
	k->next = kept;
	kept = k;
	pthread_mutex_unlock(&kept_lock);
	return ch;
}

/* channel.c's: fn forgets a channel of ours as it is destroyed (its
 * pipe, and whatever events were left in it, go). */
static void (*gone_hook)(struct ibv_comp_channel *);

EXPORT void srnic_preload_gone_hook(void (*fn)(struct ibv_comp_channel *))
{
	__atomic_store_n(&gone_hook, fn, __ATOMIC_RELEASE);
}

EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	void (*gone)(struct ibv_comp_channel *) =
		__atomic_load_n(&gone_hook, __ATOMIC_ACQUIRE);
	int (*next)(struct ibv_comp_channel *);
	struct kept **p, *k = NULL;
	int rc = 0;

	pthread_mutex_lock(&kept_lock);
	for (p = &kept; *p; p = &(*p)->next)
		if ((*p)->rfd == ch->fd) {
			k = *p;
			break;
		}
	if (k) {
		/* Ours, as libibverbs destroys its own: EBUSY while CQs use
		 * it (libibverbs counts them under the context's mutex),
		 * else both ends closed and the channel freed. */
		pthread_mutex_lock(&ch->context->mutex);
		if (ch->refcnt)
			rc = EBUSY;
		pthread_mutex_unlock(&ch->context->mutex);
		if (!rc)
			*p = k->next;
	}
	pthread_mutex_unlock(&kept_lock);
	if (k) {
		if (rc)
			return rc;
		if (gone)
			gone(ch);
		close(k->rfd);
		close(k->wfd);
		free(k);
		free(ch);
		return 0;
	}
	next = real("ibv_destroy_comp_channel");
	return next ? next(ch) : ENOSYS;
}

/* ---- unmapping, for the registration cache ---- */

static void (*unmap_hook)(void *addr, size_t len);
static int (*next_munmap)(void *, size_t);
static void *(*next_mremap)(void *, size_t, size_t, int, ...);
static int (*next_shmdt)(const void *);

/* libc's own, found before the program runs (a lookup inside munmap
 * could unmap, and come back here); until then, the system calls. */
__attribute__((constructor)) static void unmap_next(void)
{
	next_munmap = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
	next_mremap = (void *(*)(void *, size_t, size_t, int, ...))dlsym(
		RTLD_NEXT, "mremap");
	next_shmdt = (int (*)(const void *))dlsym(RTLD_NEXT, "shmdt");
}

/* channel.c's: fn takes the wait for an event on one of our channels,
 * with libibverbs' own function to read the pipe when it must. */
typedef int (*get_event_fn)(struct ibv_comp_channel *, struct ibv_cq **,
			    void **);
typedef int (*event_hook_fn)(struct ibv_comp_channel *, struct ibv_cq **,
			     void **, get_event_fn);
static event_hook_fn event_hook;

EXPORT void srnic_preload_event_hook(event_hook_fn fn)
{
	__atomic_store_n(&event_hook, fn, __ATOMIC_RELEASE);
}

static bool kept_channel(const struct ibv_comp_channel *ch)
{
	struct kept *k;

	pthread_mutex_lock(&kept_lock);
	for (k = kept; k && k->rfd != ch->fd; k = k->next)
		;
	pthread_mutex_unlock(&kept_lock);
	return k != NULL;
}

/* libibverbs' own, or, for our channels, the provider's wait (it runs
 * the datapath on this thread for a while, and may be handed the event
 * without the pipe: channel.c). */
EXPORT int ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq,
			    void **cq_context)
{
	static get_event_fn next;
	event_hook_fn hook = __atomic_load_n(&event_hook, __ATOMIC_ACQUIRE);

	if (!next)
		next = (get_event_fn)preload_verbs_fn("ibv_get_cq_event",
						      "IBVERBS_1.1");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	if (hook && ch && kept_channel(ch))
		return hook(ch, cq, cq_context, next);
	return next(ch, cq, cq_context);
}

/* mr_cache.c's: fn is told of every range before it is unmapped. */
EXPORT void srnic_preload_unmap_hook(void (*fn)(void *addr, size_t len))
{
	__atomic_store_n(&unmap_hook, fn, __ATOMIC_RELEASE);
}

static void unmapping(const void *addr, size_t len)
{
	void (*fn)(void *, size_t) =
		__atomic_load_n(&unmap_hook, __ATOMIC_ACQUIRE);
	int saved = errno;

	if (fn && len)
		fn((void *)(uintptr_t)addr, len);
	errno = saved;	/* (the call's errno is the unmap's alone) */
}

EXPORT int munmap(void *addr, size_t len)
{
	unmapping(addr, len);
	return next_munmap ? next_munmap(addr, len)
			   : (int)syscall(SYS_munmap, addr, len);
}

EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *new_addr = NULL;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	/* (the old range goes, or moves: either way no region over it may
	 * be handed out again; one that only grows in place loses nothing,
	 * but is looked up anew all the same) */
	unmapping(old, old_len);
	return next_mremap ? next_mremap(old, old_len, new_len, flags, new_addr)
			   : (void *)syscall(SYS_mremap, old, old_len, new_len,
					     flags, new_addr);
}

/* The length of the mapping that starts at addr (a segment shmat made),
 * from /proc/self/maps; 0 if none does. */
static size_t mapping_len(const void *addr)
{
	unsigned long start, end;
	size_t len = 0;
	char line[256];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &start, &end) == 2 &&
		    start == (uintptr_t)addr) {
			len = end - start;
			break;
		}
	if (f)
		fclose(f);
	return len;
}

EXPORT int shmdt(const void *addr)
{
	if (__atomic_load_n(&unmap_hook, __ATOMIC_ACQUIRE))
		unmapping(addr, mapping_len(addr));
	return next_shmdt ? next_shmdt(addr) : (int)syscall(SYS_shmdt, addr);
}
