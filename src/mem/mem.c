/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "srnic_alloc.h"

#include "srnic_mem.h"

#define NO_ENTRY UINT32_MAX

#ifndef MADV_POPULATE_READ	/* Linux 5.14; glibc's headers may lag */
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

static uint64_t next_random(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

int srnic_mem_init(struct srnic_mem_table *t, uint64_t seed)
{
	uint32_t i;

	memset(t, 0, sizeof(*t));
	t->mr = srnic_zalloc((size_t)SRNIC_MAX_MR * sizeof(*t->mr));
	t->mw = srnic_zalloc((size_t)SRNIC_MAX_MW * sizeof(*t->mw));
	if (!t->mr || !t->mw) {
		srnic_free(t->mr);
		srnic_free(t->mw);
		return -ENOMEM;
	}
	srnic_mw_table_init(t);
	/* Index 0 is never handed out: a key of 0 means "no key"; nor are
	 * the services' entries, which their slots name. */
	for (i = 1; i < SRNIC_MR_SVC_FIRST; i++)
		t->mr[i].next_free = i + 1 < SRNIC_MR_SVC_FIRST ? i + 1
							       : NO_ENTRY;
	t->free_head = 1;
	t->rng = seed | 1;
	pthread_mutex_init(&t->lock, NULL);
	return 0;
}

void srnic_mem_set_owner(struct srnic_mem_table *t, uint32_t owner)
{
	t->owner = owner & ((1u << SRNIC_MR_OWNER_BITS) - 1);
}

void srnic_mem_fini(struct srnic_mem_table *t)
{
	srnic_free(t->mr);
	srnic_free(t->mw);
	t->mr = NULL;
	t->mw = NULL;
	pthread_mutex_destroy(&t->lock);
}

int srnic_mem_prepare(struct srnic_mem_table *t, uint32_t access)
{
	bool on_demand = access & SRNIC_ACCESS_ON_DEMAND;
	int rc;

	if (!on_demand && !t->robust)
		return 0;
	if (!srnic_mem_guarded(t)) {
		rc = srnic_guard_enable();
		if (rc)
			return rc;
		__atomic_store_n(&t->guarded, true, __ATOMIC_RELAXED);
	}
	if (on_demand)
		__atomic_store_n(&t->on_demand, true, __ATOMIC_RELAXED);
	return 0;
}

/* What a region needs before it takes an entry: a range that does not
 * wrap, and what its rights ask for (srnic_mem_prepare).  false with errno
 * set. */
static bool may_register(struct srnic_mem_table *t, uint64_t addr,
			 uint64_t length, uint32_t access)
{
	int rc;

	if (addr + length < addr) {
		errno = EINVAL;
		return false;
	}
	rc = srnic_mem_prepare(t, access);
	if (rc)
		errno = -rc;
	return rc == 0;
}

/* Entry mr holds the region now, under key (published last). */
static uint32_t publish(struct srnic_mr *mr, uint32_t key, uint8_t dev,
			uint64_t addr, uint64_t length, uint32_t access,
			uint32_t pd)
{
	mr->addr = addr;
	mr->length = length;
	mr->access = access;
	mr->pd = pd;
	mr->dev = dev;
	__atomic_store_n(&mr->key, key, __ATOMIC_RELEASE);
	return key;
}

uint32_t srnic_mem_register_on(struct srnic_mem_table *t, uint8_t dev,
			       uint64_t addr, uint64_t length, uint32_t access,
			       uint32_t pd)
{
	struct srnic_mr *mr;
	uint32_t idx, tag;

	if (!may_register(t, addr, length, access))
		return 0;
	pthread_mutex_lock(&t->lock);
	idx = t->free_head;
	if (idx == NO_ENTRY) {
		pthread_mutex_unlock(&t->lock);
		errno = ENOMEM;
		return 0;
	}
	mr = &t->mr[idx];
	t->free_head = mr->next_free;
	t->used++;
	/* A tag of 10 bits would repeat at an index one time in 1023: never
	 * the one just released there, so a stale key of the last region
	 * misses for sure. */
	/* (the tag's top bit clear: a region's key never looks like a
	 * window's, SRNIC_MW_BIT) */
	do
		tag = (uint32_t)(next_random(&t->rng) >> 40) &
		      ((1u << (SRNIC_MR_TAG_BITS - 1)) - 1);
	while (tag == 0 || (tag << SRNIC_MR_OWNER_BITS | t->owner)
				       << SRNIC_MR_INDEX_BITS ==
			       (mr->was & ~(SRNIC_MAX_MR - 1)));
	tag = tag << SRNIC_MR_OWNER_BITS | t->owner;
	mr->was = tag << SRNIC_MR_INDEX_BITS | idx;
	pthread_mutex_unlock(&t->lock);
	return publish(mr, tag << SRNIC_MR_INDEX_BITS | idx, dev, addr, length,
		       access, pd);
}

uint32_t srnic_mem_register_svc(struct srnic_mem_table *t, uint8_t dev,
				uint32_t svc_ipv4, unsigned slot,
				uint64_t addr, uint64_t length,
				uint32_t access, uint32_t pd)
{
	uint32_t idx = SRNIC_MR_SVC_FIRST + slot, tag, key;
	struct srnic_mr *mr;
	uint64_t h;

	if (slot >= SRNIC_MR_SVC_SLOTS) {
		errno = EINVAL;
		return 0;
	}
	if (!may_register(t, addr, length, access))
		return 0;
	/* The tag from the service and slot alone (every member computes
	 * the same), never 0, its top bit clear (not a window's key). */
	h = ((uint64_t)svc_ipv4 << 8 | slot) * 0x9e3779b97f4a7c15ull;
	tag = (uint32_t)(h >> 55) % ((1u << (SRNIC_MR_TAG_BITS - 1)) - 1) + 1;
	key = tag << (SRNIC_MR_INDEX_BITS + SRNIC_MR_OWNER_BITS) | idx;
	mr = &t->mr[idx];
	pthread_mutex_lock(&t->lock);
	if (mr->was) {
		pthread_mutex_unlock(&t->lock);
		errno = EBUSY;
		return 0;
	}
	mr->was = key;
	t->used++;
	pthread_mutex_unlock(&t->lock);
	return publish(mr, key, dev, addr, length, access, pd);
}

int srnic_mem_prefetch(const struct srnic_mem_table *t, uint32_t key,
		       uint32_t pd, uint64_t addr, uint64_t len, bool fault,
		       bool write)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), start;

	if (srnic_mem_check(t, key, pd, addr, len,
			    SRNIC_ACCESS_ON_DEMAND |
				    (write ? SRNIC_ACCESS_LOCAL_WRITE : 0)))
		return -EINVAL;
	if (!len || !fault)
		return 0;
	/* The kernel faults the pages in as a touch would, and says EFAULT
	 * (ENOMEM for a hole, on older kernels) instead of a signal. */
	start = (uintptr_t)addr & ~(page - 1);
	if (madvise((void *)start, (uintptr_t)(addr + len) - start,
		    write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) == 0)
		return 0;
	return errno == EINVAL ? -EOPNOTSUPP : -EFAULT;
}

int srnic_mem_invalidate(struct srnic_mem_table *t, uint32_t key)
{
	struct srnic_mr *mr = &t->mr[key & (SRNIC_MAX_MR - 1)];

	if (key == 0 || __atomic_load_n(&mr->key, __ATOMIC_ACQUIRE) != key)
		return -EINVAL;
	if (mr->windows)
		return -EBUSY;	/* windows are bound in it */
	__atomic_store_n(&mr->key, 0, __ATOMIC_RELEASE);
	return 0;
}

int srnic_mem_modify(struct srnic_mem_table *t, uint32_t key, uint64_t addr,
		     uint64_t length, uint32_t access, uint32_t pd)
{
	struct srnic_mr *mr = &t->mr[key & (SRNIC_MAX_MR - 1)];

	if (key == 0 || addr + length < addr ||
	    __atomic_load_n(&mr->key, __ATOMIC_ACQUIRE) != key)
		return -EINVAL;
	if (mr->windows)
		return -EBUSY;	/* windows are bound in it */
	/* (only the datapath reads an entry, and this runs on it) */
	mr->addr = addr;
	mr->length = length;
	mr->access = access;
	mr->pd = pd;
	return 0;
}

int srnic_mem_revoke(struct srnic_mem_table *t, uint32_t key, uint32_t pd)
{
	if (key & SRNIC_MW_BIT)
		return srnic_mw_invalidate(t, key, pd);
	if (!srnic_mem_owned(t, key, pd))
		return -EINVAL;
	t->mr[key & (SRNIC_MAX_MR - 1)].pd = SRNIC_PD_REVOKED;
	return 0;
}

bool srnic_mem_fence(struct srnic_mem_table *t, uint32_t key)
{
	struct srnic_mr *mr;

	key = srnic_mem_region_key(t, key);
	mr = &t->mr[key & (SRNIC_MAX_MR - 1)];
	if (key == 0 || __atomic_load_n(&mr->key, __ATOMIC_ACQUIRE) != key ||
	    (mr->access & SRNIC_ACCESS_ON_DEMAND) ||
	    mr->pd == SRNIC_PD_REVOKED)
		return false;
	mr->pd = SRNIC_PD_REVOKED;
	return true;
}

void srnic_mem_release(struct srnic_mem_table *t, uint32_t key)
{
	uint32_t idx = key & (SRNIC_MAX_MR - 1);

	pthread_mutex_lock(&t->lock);
	if (idx >= SRNIC_MR_SVC_FIRST) {	/* (its slot names it) */
		t->mr[idx].was = 0;
		t->used--;
		pthread_mutex_unlock(&t->lock);
		return;
	}
	t->mr[idx].next_free = t->free_head;
	t->free_head = idx;
	t->used--;
	pthread_mutex_unlock(&t->lock);
}
