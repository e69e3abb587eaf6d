/* SPDX-License-Identifier: MIT */
/*
 * Memory windows: allocation and release on application threads (under
 * the table's lock, as regions), binds and invalidations on the datapath,
 * which alone reads and writes a window's binding.  A window bound in a
 * region is counted there, and a region with windows bound is neither
 * deregistered nor re-registered (EBUSY), as rxe refuses it: a window
 * must never outlive the memory it names.
 */
#include <errno.h>

#include "srnic_mem.h"

#define NO_ENTRY UINT32_MAX

/* (window.c's part of srnic_mem_init) */
void srnic_mw_table_init(struct srnic_mem_table *t)
{
	uint32_t i;

	for (i = 0; i < SRNIC_MAX_MW; i++)
		t->mw[i].next_free = i + 1 < SRNIC_MAX_MW ? i + 1 : NO_ENTRY;
	t->mw_free_head = 0;
}

uint32_t srnic_mw_alloc(struct srnic_mem_table *t, uint8_t type, uint32_t pd)
{
	struct srnic_mw *w;
	uint32_t idx, tag;

	if (type != 1 && type != 2) {
		errno = EINVAL;
		return 0;
	}
	pthread_mutex_lock(&t->lock);
	idx = t->mw_free_head;
	if (idx == NO_ENTRY) {
		pthread_mutex_unlock(&t->lock);
		errno = ENOMEM;
		return 0;
	}
	w = &t->mw[idx];
	t->mw_free_head = w->next_free;
	/* (a new tag where the last window was: its keys miss) */
	tag = ((w->base >> 27 & 0xf) + 1) & 0xf;
	w->base = SRNIC_MW_BIT | tag << 27 | t->owner << 22 | idx << 8;
	pthread_mutex_unlock(&t->lock);
	w->type = type;
	w->pd = pd;
	w->qpn = 0;
	w->length = 0;
	__atomic_store_n(&w->key, 0, __ATOMIC_RELEASE);
	return w->base;
}

static struct srnic_mw *window_of(struct srnic_mem_table *t, uint32_t key)
{
	struct srnic_mw *w = &t->mw[SRNIC_MW_INDEX(key)];

	return (key & SRNIC_MW_BIT) && w->base &&
			       w->base == (key & ~0xffu)
		       ? w
		       : NULL;
}

/* The window lets go of its region (datapath). */
static void unbind(struct srnic_mem_table *t, struct srnic_mw *w)
{
	if (!w->key)
		return;
	t->mr[w->mr_key & (SRNIC_MAX_MR - 1)].windows--;
	if (w->qpn)
		t->mw_bound_to_qp--;
	__atomic_store_n(&w->key, 0, __ATOMIC_RELEASE);
}

int srnic_mw_retire(struct srnic_mem_table *t, uint32_t key)
{
	struct srnic_mw *w = window_of(t, key);

	if (!w)
		return -EINVAL;
	unbind(t, w);
	return 0;
}

void srnic_mw_release(struct srnic_mem_table *t, uint32_t key)
{
	uint32_t idx = SRNIC_MW_INDEX(key);

	pthread_mutex_lock(&t->lock);
	t->mw[idx].next_free = t->mw_free_head;
	t->mw_free_head = idx;
	pthread_mutex_unlock(&t->lock);
}

int srnic_mw_bind(struct srnic_mem_table *t, const struct srnic_mw_bind *b,
		  uint32_t pd, uint32_t qpn)
{
	struct srnic_mw *w = window_of(t, b->key);
	uint32_t rights = b->access & SRNIC_ACCESS_REMOTE_ANY;
	struct srnic_mr *mr;

	if (!w || w->pd != pd || (w->type == 2 && w->key))
		return -EINVAL;
	if (!b->length) {
		/* unbinding (type 1: a bind of length 0) */
		unbind(t, w);
		return 0;
	}
	mr = &t->mr[b->mr_key & (SRNIC_MAX_MR - 1)];
	if (srnic_mem_check(t, b->mr_key, pd, b->addr, b->length,
			    SRNIC_ACCESS_MW_BIND) != SRNIC_MEM_OK)
		return -EINVAL;
	if ((rights & (SRNIC_ACCESS_REMOTE_WRITE | SRNIC_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & SRNIC_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	unbind(t, w);
	w->mr_key = b->mr_key;
	w->addr = b->addr;
	w->length = b->length;
	w->access = rights;
	w->qpn = w->type == 2 ? qpn : 0;
	mr->windows++;
	if (w->qpn)
		t->mw_bound_to_qp++;
	__atomic_store_n(&w->key, b->key, __ATOMIC_RELEASE);
	return 0;
}

void srnic_mw_forget_qp(struct srnic_mem_table *t, uint32_t qpn)
{
	uint32_t i;

	/* (a look at every window, only while some are bound to a QP) */
	for (i = 0; i < SRNIC_MAX_MW && t->mw_bound_to_qp; i++)
		if (t->mw[i].key && t->mw[i].qpn == qpn)
			unbind(t, &t->mw[i]);
}

bool srnic_mem_invalidatable(const struct srnic_mem_table *t, uint32_t key,
			     uint32_t pd, uint32_t qpn)
{
	const struct srnic_mw *w;

	if (!(key & SRNIC_MW_BIT))
		return srnic_mem_owned(t, key, pd) &&
		       (srnic_mem_access(t, key) & SRNIC_ACCESS_REMOTE_ANY);
	w = &t->mw[SRNIC_MW_INDEX(key)];
	return w->type == 2 && __atomic_load_n(&w->key, __ATOMIC_ACQUIRE) == key &&
	       w->pd == pd && (!qpn || w->qpn == qpn);
}

/* (srnic_mem_revoke's part for windows: type 2 only) */
int srnic_mw_invalidate(struct srnic_mem_table *t, uint32_t key, uint32_t pd)
{
	struct srnic_mw *w = window_of(t, key);

	if (!w || w->type != 2 || w->key != key || w->pd != pd)
		return -EINVAL;
	unbind(t, w);
	return 0;
}
