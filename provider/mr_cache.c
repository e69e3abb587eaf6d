/* SPDX-License-Identifier: MIT */
/*
 * The registration cache (include/srnic.h; docs/registration-cache.md),
 * on the application's threads: seed 002's lazy deregistration (l. 480-
 * 496).  A program that sends from buffers it does not keep registered
 * asks for a region of each (srnic_mr_cache_get) and gives it back
 * (srnic_mr_cache_put); the cache registers whole fragments (16 MiB
 * aligned, SRNIC_MR_CACHE_FRAG_MB), hands the same region out again for
 * any buffer inside it, and deregisters one only once it has been idle
 * SRNIC_MR_CACHE_IDLE_S or its memory was unmapped.
 *
 * Unmapping is noticed through libsrnic-preload.so (preload.c), which
 * ./srnic exec preloads: its munmap, mremap and shmdt tell the cache
 * first, and a region over memory unmapped is never handed out again
 * (deregistered at once if idle, else at its last put).  Keys address
 * memory by virtual address here, not by pinned pages, so a region over
 * memory mapped anew at the same address would still be right; what the
 * hooks prevent is a region over memory that is gone.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "srnic.h"
#include "srnic_provider.h"

#define FRAG_MB_DEFAULT 16
#define IDLE_S_DEFAULT 10
#define CACHE_ACCESS                                                        \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                  \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

struct cache_ent {
	struct cache_ent *next;
	struct ibv_pd *pd;
	uintptr_t start, end;	/* the region: [start, end) */
	int access;		/* as asked (ON_DEMAND added for remote) */
	struct ibv_mr *mr;
	uint32_t refs;		/* gets not put back yet */
	uint8_t stale;		/* its memory was unmapped: never again */
	uint64_t idle_since;	/* ms, of its last put */
};

static struct {
	pthread_mutex_t lock;
	struct cache_ent *head;
	uint64_t frag;		/* bytes, a power of two */
	uint64_t idle_ms;
	bool ready, hooked;
	struct srnic_mr_cache_attr st;
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Set while this thread holds the cache's lock: an unmap the cache's own
 * calls make (none of a program's buffers) must not take it again. */
static __thread bool inside;

static void cache_lock(void)
{
	pthread_mutex_lock(&cache.lock);
	inside = true;
}

static void cache_unlock(void)
{
	inside = false;
	pthread_mutex_unlock(&cache.lock);
}

static void cache_unmapped(void *addr, size_t len);

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static uint64_t env_num(const char *name, uint64_t dflt, uint64_t max)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return dflt;
	n = strtoull(v, &end, 10);
	return *end || n == 0 || n > max ? dflt : n;
}

/* The cache's one-time setup, under its lock: its tuning, and the unmap
 * hook of the preload library if it is there. */
static void cache_ready(void)
{
	void (*set)(void (*)(void *, size_t));
	uint64_t mb;

	if (cache.ready)
		return;
	mb = env_num("SRNIC_MR_CACHE_FRAG_MB", FRAG_MB_DEFAULT, 1024);
	cache.frag = 1ull << (63 - __builtin_clzll(mb << 20));
	cache.idle_ms = 1000 * env_num("SRNIC_MR_CACHE_IDLE_S", IDLE_S_DEFAULT,
				       86400);
	set = (void (*)(void (*)(void *, size_t)))dlsym(
		RTLD_DEFAULT, "srnic_preload_unmap_hook");
	if (set) {
		set(cache_unmapped);
		cache.hooked = true;
	}
	cache.ready = true;
}

static void ent_free(struct cache_ent **p)
{
	struct cache_ent *e = *p;

	*p = e->next;
	if (ibv_dereg_mr(e->mr) == 0)
		cache.st.deregistrations++;
	cache.st.cached_bytes -= e->end - e->start;
	cache.st.regions--;
	free(e);
}

/* Idle regions past their time, and stale ones nobody holds, go. */
static void evict(uint64_t now)
{
	struct cache_ent **p = &cache.head;

	while (*p) {
		struct cache_ent *e = *p;

		if (!e->refs && (e->stale || now - e->idle_since >= cache.idle_ms))
			ent_free(p);
		else
			p = &e->next;
	}
}

/* Whether [start, end) is all mapped (mincore fails with ENOMEM on a
 * hole, and touches nothing). */
static bool all_mapped(uintptr_t start, uintptr_t end)
{
	static unsigned char vec[(1024u << 20) / 4096];
	size_t len = end - start;

	return len / 4096 <= sizeof(vec) &&
	       mincore((void *)start, len, vec) == 0;
}

/* A new region for [addr, addr + len): the fragments it touches if they
 * are all mapped, else the pages it touches.  A region with remote rights
 * is an on-demand one: a peer that writes where memory has gone since
 * fails its message instead of the process. */
static struct cache_ent *ent_new(struct ibv_pd *pd, uintptr_t addr,
				 size_t len, int access)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t s = addr & ~(cache.frag - 1);
	uintptr_t e = (addr + len + cache.frag - 1) & ~(cache.frag - 1);
	struct cache_ent *n = calloc(1, sizeof(*n));
	int reg = access | IBV_ACCESS_LOCAL_WRITE;

	if (!n)
		return NULL;
	if (e < s || !all_mapped(s, e)) {
		s = addr & ~(page - 1);
		e = (addr + len + page - 1) & ~(page - 1);
	}
	if (access & ~IBV_ACCESS_LOCAL_WRITE)
		reg |= IBV_ACCESS_ON_DEMAND;
	n->mr = ibv_reg_mr(pd, (void *)s, e - s, reg);
	if (!n->mr) {
		free(n);
		return NULL;
	}
	n->pd = pd;
	n->start = s;
	n->end = e;
	n->access = access;
	cache.st.registrations++;
	cache.st.cached_bytes += e - s;
	cache.st.regions++;
	return n;
}

SRNIC_API struct ibv_mr *srnic_mr_cache_get(struct ibv_pd *pd, void *addr,
					    size_t length, int access)
{
	uintptr_t a = (uintptr_t)addr;
	struct cache_ent *e;

	if (!pd || !srnic_context_ours(pd->context)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!addr || !length || a + length < a || (access & ~CACHE_ACCESS)) {
		errno = EINVAL;
		return NULL;
	}
	cache_lock();
	cache_ready();
	evict(now_ms());
	cache.st.gets++;
	for (e = cache.head; e; e = e->next)
		if (e->pd == pd && !e->stale && e->start <= a &&
		    a + length <= e->end && (e->access & access) == access)
			break;
	if (e) {
		cache.st.hits++;
	} else {
		e = ent_new(pd, a, length, access);
		if (e) {
			e->next = cache.head;
			cache.head = e;
		}
	}
	if (e)
		e->refs++;
	cache_unlock();
	return e ? e->mr : NULL;
}

SRNIC_API int srnic_mr_cache_put(struct ibv_mr *mr)
{
	struct cache_ent **p;
	int rc = EINVAL;

	if (!mr || !srnic_context_ours(mr->context))
		return EOPNOTSUPP;
	cache_lock();
	for (p = &cache.head; *p; p = &(*p)->next) {
		struct cache_ent *e = *p;

		if (e->mr != mr || !e->refs)
			continue;
		e->idle_since = now_ms();
		rc = 0;
		if (!--e->refs && e->stale)
			ent_free(p);
		break;
	}
	cache_unlock();
	return rc;
}

SRNIC_API int srnic_mr_cache_query(struct ibv_context *context,
				   struct srnic_mr_cache_attr *attr)
{
	if (!srnic_context_ours(context))
		return EOPNOTSUPP;
	if (!attr)
		return EINVAL;
	cache_lock();
	cache_ready();
	evict(now_ms());
	*attr = cache.st;
	attr->frag_bytes = cache.frag;
	attr->idle_ms = cache.idle_ms;
	attr->hooked = cache.hooked;
	cache_unlock();
	return 0;
}

/*
 * [addr, addr + len) is about to be unmapped (preload.c's munmap, mremap,
 * shmdt, on the thread that unmaps): no region over any of it is handed
 * out again; one nobody holds is deregistered now, before the memory goes.
 */
static void cache_unmapped(void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;
	struct cache_ent **p;

	if (inside)
		return;
	cache_lock();
	p = &cache.head;
	while (*p) {
		struct cache_ent *e = *p;

		if (e->stale || e->end <= a || a + len <= e->start) {
			p = &e->next;
			continue;
		}
		e->stale = 1;
		cache.st.invalidated++;
		if (!e->refs)
			ent_free(p);
		else
			p = &e->next;
	}
	cache_unlock();
}
