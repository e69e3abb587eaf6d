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
 * first, and a region over memory unmapped is never handed out again.
 * Keys address memory by virtual address here, not by pinned pages, so a
 * region over memory mapped anew at the same address would still be
 * right; what the hooks prevent is a region handed out over memory that
 * is gone.
 *
 * The lock: short, and no provider call is made under it.  The unmap
 * hook runs on whatever thread unmaps, the datapath's among them (memif
 * unmaps a link's memory while the datapath holds what an engine call
 * waits for): a registration or deregistration under the lock, which
 * waits for the datapath, would deadlock with it.  So the hook only marks
 * regions stale, and what goes is deregistered by the next get, put or
 * query, after the lock is dropped.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
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
	int access;		/* what it was registered with */
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

static void (*hook_set)(void (*)(void *, size_t));

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

/*
 * [addr, addr + len) is about to be unmapped (preload.c's munmap, mremap,
 * shmdt, on the thread that unmaps): no region over any of it is handed
 * out again.  Nothing but marks, under the lock (see the top).
 */
static void cache_unmapped(void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;
	struct cache_ent *e;

	pthread_mutex_lock(&cache.lock);
	for (e = cache.head; e; e = e->next)
		if (!e->stale && e->start < a + len && a < e->end) {
			e->stale = 1;
			cache.st.invalidated++;
		}
	pthread_mutex_unlock(&cache.lock);
}

/* A child of fork has the parent's regions in name only, and perhaps its
 * lock taken: it starts with an empty cache and no hook. */
static void cache_forked(void)
{
	if (hook_set)
		hook_set(NULL);
	pthread_mutex_init(&cache.lock, NULL);
	cache.head = NULL;
	cache.ready = false;
	memset(&cache.st, 0, sizeof(cache.st));
}

/* The cache's one-time setup, under its lock: its tuning, and the unmap
 * hook of the preload library if it is there. */
static void cache_ready(void)
{
	uint64_t mb;

	if (cache.ready)
		return;
	mb = env_num("SRNIC_MR_CACHE_FRAG_MB", FRAG_MB_DEFAULT, 1024);
	cache.frag = 1ull << (63 - __builtin_clzll(mb << 20));
	cache.idle_ms = 1000 * env_num("SRNIC_MR_CACHE_IDLE_S", IDLE_S_DEFAULT,
				       86400);
	if (!hook_set) {
		hook_set = (void (*)(void (*)(void *, size_t)))dlsym(
			RTLD_DEFAULT, "srnic_preload_unmap_hook");
		pthread_atfork(NULL, NULL, cache_forked);
	}
	if (hook_set) {
		hook_set(cache_unmapped);
		cache.hooked = true;
	}
	cache.ready = true;
}

/* Under the lock: entry *p out of the cache, onto *gone (deregistered
 * once the lock is dropped: regions_free). */
static void unlink_ent(struct cache_ent **p, struct cache_ent **gone)
{
	struct cache_ent *e = *p;

	*p = e->next;
	cache.st.cached_bytes -= e->end - e->start;
	cache.st.regions--;
	e->next = *gone;
	*gone = e;
}

/* Under the lock: idle regions past their time, and stale ones nobody
 * holds, onto *gone. */
static void evict(uint64_t now, struct cache_ent **gone)
{
	struct cache_ent **p = &cache.head;

	while (*p) {
		struct cache_ent *e = *p;

		if (!e->refs && (e->stale || now - e->idle_since >= cache.idle_ms))
			unlink_ent(p, gone);
		else
			p = &e->next;
	}
}

/* Outside the lock: deregister what went. */
static void regions_free(struct cache_ent *gone)
{
	unsigned n = 0;

	while (gone) {
		struct cache_ent *e = gone;

		gone = e->next;
		n += ibv_dereg_mr(e->mr) == 0;
		free(e);
	}
	if (n) {
		pthread_mutex_lock(&cache.lock);
		cache.st.deregistrations += n;
		pthread_mutex_unlock(&cache.lock);
	}
}

/* Whether [start, end) is all mapped (mincore fails with ENOMEM on a
 * hole, and touches nothing).  Under the lock: one vector. */
static bool all_mapped(uintptr_t start, uintptr_t end)
{
	static unsigned char vec[(1024u << 20) / 4096];
	size_t len = end - start;

	return len / 4096 <= sizeof(vec) &&
	       mincore((void *)start, len, vec) == 0;
}

/*
 * Under the lock: the range a new region for [addr, addr + len) takes,
 * and its rights.  For sends (no remote rights), the fragments it touches
 * if they are all mapped, else its pages.  With remote rights only its
 * pages: a fragment's key would give a peer the 16 MiB around the buffer;
 * and it is an on-demand region, so a peer that reaches memory gone since
 * fails its message instead of the process.
 */
static int new_range(uintptr_t addr, size_t len, int access, uintptr_t *s,
		     uintptr_t *e)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	*s = addr & ~(cache.frag - 1);
	*e = (addr + len + cache.frag - 1) & ~(cache.frag - 1);
	if ((access & ~IBV_ACCESS_LOCAL_WRITE) || *e < *s ||
	    !all_mapped(*s, *e)) {
		*s = addr & ~(page - 1);
		*e = (addr + len + page - 1) & ~(page - 1);
	}
	return access & ~IBV_ACCESS_LOCAL_WRITE
		       ? access | IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND
		       : access | IBV_ACCESS_LOCAL_WRITE;
}

/* Under the lock: a region of pd that covers the range with the rights,
 * and is not stale; taken (its count up). */
static struct ibv_mr *cache_hit(struct ibv_pd *pd, uintptr_t a, size_t len,
				int access)
{
	struct cache_ent *e;

	for (e = cache.head; e; e = e->next)
		if (e->pd == pd && !e->stale && e->start <= a &&
		    a + len <= e->end && (e->access & access) == access) {
			e->refs++;
			cache.st.hits++;
			return e->mr;
		}
	return NULL;
}

/* A miss: register (outside the lock), then add it, taken. */
static struct ibv_mr *cache_miss(struct ibv_pd *pd, uintptr_t a, size_t len,
				 int access)
{
	struct cache_ent *n = calloc(1, sizeof(*n));
	struct ibv_mr *mr;

	if (!n) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&cache.lock);
	n->access = new_range(a, len, access, &n->start, &n->end);
	pthread_mutex_unlock(&cache.lock);
	n->mr = ibv_reg_mr(pd, (void *)n->start, n->end - n->start, n->access);
	if (!n->mr) {
		free(n);
		return NULL;
	}
	n->pd = pd;
	n->refs = 1;
	mr = n->mr;
	pthread_mutex_lock(&cache.lock);
	n->next = cache.head;
	cache.head = n;
	cache.st.registrations++;
	cache.st.cached_bytes += n->end - n->start;
	cache.st.regions++;
	pthread_mutex_unlock(&cache.lock);
	return mr;
}

SRNIC_API struct ibv_mr *srnic_mr_cache_get(struct ibv_pd *pd, void *addr,
					    size_t length, int access)
{
	uintptr_t a = (uintptr_t)addr;
	struct cache_ent *gone = NULL;
	struct ibv_mr *mr;

	if (!pd || !srnic_context_ours(pd->context)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!addr || !length || a + length < a || (access & ~CACHE_ACCESS)) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&cache.lock);
	cache_ready();
	evict(srnic_clock_ns() / 1000000, &gone);
	cache.st.gets++;
	mr = cache_hit(pd, a, length, access);
	pthread_mutex_unlock(&cache.lock);
	regions_free(gone);
	return mr ? mr : cache_miss(pd, a, length, access);
}

SRNIC_API int srnic_mr_cache_put(struct ibv_mr *mr)
{
	struct cache_ent **p, *gone = NULL;
	int rc = EINVAL;

	if (!mr || !srnic_context_ours(mr->context))
		return EOPNOTSUPP;
	pthread_mutex_lock(&cache.lock);
	for (p = &cache.head; *p; p = &(*p)->next) {
		struct cache_ent *e = *p;

		if (e->mr != mr || !e->refs)
			continue;
		e->idle_since = srnic_clock_ns() / 1000000;
		rc = 0;
		if (!--e->refs && e->stale)
			unlink_ent(p, &gone);
		break;
	}
	pthread_mutex_unlock(&cache.lock);
	regions_free(gone);
	return rc;
}

SRNIC_API int srnic_mr_cache_query(struct ibv_context *context,
				   struct srnic_mr_cache_attr *attr)
{
	struct cache_ent *gone = NULL;

	if (!srnic_context_ours(context))
		return EOPNOTSUPP;
	if (!attr)
		return EINVAL;
	pthread_mutex_lock(&cache.lock);
	cache_ready();
	evict(srnic_clock_ns() / 1000000, &gone);
	pthread_mutex_unlock(&cache.lock);
	regions_free(gone);
	pthread_mutex_lock(&cache.lock);
	*attr = cache.st;
	attr->frag_bytes = cache.frag;
	attr->idle_ms = cache.idle_ms;
	attr->hooked = cache.hooked;
	pthread_mutex_unlock(&cache.lock);
	return 0;
}

/* pd is about to go (ibv_dealloc_pd): its idle regions go first; EBUSY
 * while one is held. */
int srnic_mr_cache_drop_pd(struct ibv_pd *pd)
{
	struct cache_ent **p, *gone = NULL;
	int rc = 0;

	pthread_mutex_lock(&cache.lock);
	for (p = &cache.head; *p;) {
		if ((*p)->pd != pd) {
			p = &(*p)->next;
		} else if ((*p)->refs) {
			rc = EBUSY;
			p = &(*p)->next;
		} else {
			unlink_ent(p, &gone);
		}
	}
	pthread_mutex_unlock(&cache.lock);
	regions_free(gone);
	return rc;
}
