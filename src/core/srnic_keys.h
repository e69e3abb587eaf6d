/* SPDX-License-Identifier: MIT */
/*
 * Key migration between a node's adapters (seed 003; docs/key-migration.md)
 * as the engine holds it: each adapter's set of keys that another adapter
 * issued and that it took in (imported) or was told are nothing
 * (refused), and the misses waiting to be settled.  A node whose keys are
 * looked up per adapter (key_scope = device) drops an RDMA request whose
 * key its receiving adapter neither issued nor imported, and queues a
 * miss; control/keys.c settles it after the burst (the issuer's table is
 * this process's), and the requester's resend finds the key imported, or
 * refused and NAKed.  Datapath only.
 */
#ifndef SRNIC_KEYS_H
#define SRNIC_KEYS_H

#include <stdint.h>

#include "srnic_config.h"

#define SRNIC_KEY_ALIAS_BITS 10
#define SRNIC_KEY_ALIASES (1u << SRNIC_KEY_ALIAS_BITS)	/* an adapter's */
#define SRNIC_KEY_MISSES 64	/* misses waiting at once */

enum srnic_alias_state {
	SRNIC_ALIAS_FREE,
	SRNIC_ALIAS_IMPORTED,	/* another adapter's live key: let in */
	SRNIC_ALIAS_REFUSED,	/* no adapter's: NAKed by the usual checks */
	SRNIC_ALIAS_GONE,	/* was one (probing goes on past it) */
};

struct srnic_key_alias {
	uint32_t key;
	uint8_t state;
	uint64_t used;		/* TSC of its last request (or its settling):
				 * idle ones are evicted (srnic_keys_evict) */
};

struct srnic_key_miss {
	uint32_t key;
	uint8_t dev;		/* the adapter it arrived at */
	uint64_t tsc;		/* when */
};

struct srnic_keys {
	struct srnic_key_alias alias[SRNIC_MAX_DEVICES][SRNIC_KEY_ALIASES];
	struct srnic_key_miss miss[SRNIC_KEY_MISSES];
	uint32_t nmiss;
	uint32_t nalias;	/* imported or refused, in all adapters */
	uint8_t gone;		/* entries GONE since the last sweep */
	uint64_t sweep_at;	/* TSC of the next look for idle ones */
};

static inline uint32_t srnic_key_slot(uint32_t key)
{
	return (key * 0x9e3779b1u) >> (32 - SRNIC_KEY_ALIAS_BITS);
}

/* Adapter dev's alias entry for key, or NULL when it has none. */
static inline struct srnic_key_alias *
srnic_key_alias_find(struct srnic_keys *k, uint8_t dev, uint32_t key)
{
	struct srnic_key_alias *a = k->alias[dev];
	uint32_t i, s = srnic_key_slot(key);

	for (i = 0; i < SRNIC_KEY_ALIASES; i++) {
		struct srnic_key_alias *e = &a[(s + i) & (SRNIC_KEY_ALIASES - 1)];

		if (e->state == SRNIC_ALIAS_FREE)
			return NULL;
		if (e->key == key && e->state != SRNIC_ALIAS_GONE)
			return e;
	}
	return NULL;
}

/* Adapter dev's alias for key: its state, or SRNIC_ALIAS_FREE. */
static inline uint8_t srnic_key_alias_of(struct srnic_keys *k, uint8_t dev,
					 uint32_t key)
{
	const struct srnic_key_alias *e = srnic_key_alias_find(k, dev, key);

	return e ? e->state : SRNIC_ALIAS_FREE;
}

#endif
