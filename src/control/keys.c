/* SPDX-License-Identifier: MIT */
/*
 * Key migration between the node's adapters (seed 003; docs/key-
 * migration.md): the control core's part.  An adapter that receives an
 * RDMA request with a key it did not issue drops the request (the
 * requester sends it again) and reports the key (engine/dispatch.c).  Here
 * the issuer's table is asked for it: a live key of another adapter is
 * imported into the receiving one, which lets its requests in from then
 * on; a key no adapter issued is refused, and the receiving adapter's
 * checks NAK it.  Deregistration takes the key out of every adapter's
 * imports before it returns.
 *
 * The node's adapters are one process's tables (each region says which
 * adapter issued it), so asking the issuer is a table read: it runs on
 * the datapath thread, right after the burst that reported the misses,
 * and the requester's next try finds the key settled.
 */
#include "srnic_control.h"

/*
 * Adapter dev's alias entry for key, or the free one it would take; NULL
 * when none is free.  With take_refused, another key's refusal gives way
 * when nothing else is free: a refusal only saves the requester of a key
 * nobody issued some resends before its NAK (its key is looked up again),
 * while an import lets a live key in at all, so a flood of made-up keys
 * must not fill the table against the real ones.
 */
static struct srnic_key_alias *alias_slot(struct srnic_keys *k, uint8_t dev,
					  uint32_t key, bool take_refused)
{
	struct srnic_key_alias *a = k->alias[dev], *spare = NULL,
			       *refused = NULL;
	uint32_t i, s = srnic_key_slot(key);

	for (i = 0; i < SRNIC_KEY_ALIASES; i++) {
		struct srnic_key_alias *e = &a[(s + i) & (SRNIC_KEY_ALIASES - 1)];

		if (e->state == SRNIC_ALIAS_FREE)
			return spare ? spare : e;
		if (e->key == key && e->state != SRNIC_ALIAS_GONE)
			return e;
		if (e->state == SRNIC_ALIAS_GONE && !spare)
			spare = e;
		else if (e->state == SRNIC_ALIAS_REFUSED && !refused)
			refused = e;
	}
	return spare ? spare : take_refused ? refused : NULL;
}

void srnic_keys_miss(struct srnic_engine *eng, uint8_t dev, uint32_t key)
{
	struct srnic_keys *k = &eng->keys;
	uint32_t i;

	for (i = 0; i < k->nmiss; i++)
		if (k->miss[i].key == key && k->miss[i].dev == dev)
			return;	/* (one report a key until it is settled) */
	if (k->nmiss < SRNIC_KEY_MISSES)
		k->miss[k->nmiss++] = (struct srnic_key_miss){
			.key = key, .dev = dev, .tsc = srnic_now()};
}

void srnic_keys_settle(struct srnic_engine *eng)
{
	struct srnic_keys *k = &eng->keys;
	uint64_t now = srnic_now();
	uint32_t i;

	for (i = 0; i < k->nmiss; i++) {
		const struct srnic_key_miss *m = &k->miss[i];
		int issuer = srnic_mem_key_dev(&eng->mem, m->key);
		struct srnic_key_alias *a = alias_slot(k, m->dev, m->key,
						       issuer >= 0);
		uint64_t ns = (now - m->tsc) * 1000 / eng->tsc_per_us;

		if (!a)
			continue;	/* its imports are full: dropped again */
		if (a->state == SRNIC_ALIAS_FREE || a->state == SRNIC_ALIAS_GONE)
			k->nalias++;
		a->key = m->key;
		a->used = now;
		if (issuer >= 0) {
			a->state = SRNIC_ALIAS_IMPORTED;
			eng->st->keys_imported++;
			if (ns > eng->st->key_import_ns)
				eng->st->key_import_ns = ns;
			if (eng->st->keys_imported == 1)
				eng->st->key_first_import_ns = ns;
		} else {
			a->state = SRNIC_ALIAS_REFUSED;
			eng->st->keys_refused++;
		}
	}
	k->nmiss = 0;
}

void srnic_keys_forget(struct srnic_engine *eng, uint32_t key)
{
	uint8_t dev;

	for (dev = 0; dev < SRNIC_MAX_DEVICES; dev++) {
		struct srnic_key_alias *a =
			srnic_key_alias_find(&eng->keys, dev, key);

		if (a) {
			a->state = SRNIC_ALIAS_GONE;
			eng->keys.nalias--;
			eng->keys.gone = 1;
		}
	}
}

/* Adapter dev's table without its GONE entries, which only ever grow
 * otherwise (a lookup of a key not there probes past every one): each
 * live entry put back where a probe from its slot meets it first. */
static void alias_rebuild(struct srnic_keys *k, uint8_t dev)
{
	struct srnic_key_alias live[SRNIC_KEY_ALIASES], *a = k->alias[dev];
	uint32_t n = 0, i, s;

	for (i = 0; i < SRNIC_KEY_ALIASES; i++)
		if (a[i].state == SRNIC_ALIAS_IMPORTED ||
		    a[i].state == SRNIC_ALIAS_REFUSED)
			live[n++] = a[i];
	memset(a, 0, sizeof(k->alias[dev]));	/* (SRNIC_ALIAS_FREE) */
	for (i = 0; i < n; i++) {
		s = srnic_key_slot(live[i].key);
		while (a[s].state != SRNIC_ALIAS_FREE)
			s = (s + 1) & (SRNIC_KEY_ALIASES - 1);
		a[s] = live[i];
	}
}

/*
 * Imports and refusals no request used for key_idle_ms are taken out
 * (seed 003 keeps an alias until the key is invalidated; a key that is
 * never invalidated, a long-lived region, would hold its slot for good,
 * and 1024 of them fill an adapter's table).  A request for it after
 * that misses again and is settled again, as the first one was.  The
 * table is looked at once a second while it holds some or lost some
 * (evicted, or deregistered), and then rebuilt without the gaps.
 */
void srnic_keys_evict(struct srnic_engine *eng, uint64_t now)
{
	struct srnic_keys *k = &eng->keys;
	uint64_t idle = eng->tsc_per_us * 1000 * eng->cfg.key_idle_ms;
	uint32_t dev, i;

	if ((!k->nalias && !k->gone) || now < k->sweep_at)
		return;
	k->sweep_at = now + eng->tsc_per_us * 1000000;
	for (dev = 0; dev < SRNIC_MAX_DEVICES; dev++)
		for (i = 0; i < SRNIC_KEY_ALIASES; i++) {
			struct srnic_key_alias *a = &k->alias[dev][i];

			if ((a->state != SRNIC_ALIAS_IMPORTED &&
			     a->state != SRNIC_ALIAS_REFUSED) ||
			    a->used + idle > now)
				continue;
			a->state = SRNIC_ALIAS_GONE;
			k->nalias--;
			k->gone = 1;
			eng->st->keys_evicted++;
		}
	if (!k->gone)
		return;
	for (dev = 0; dev < SRNIC_MAX_DEVICES; dev++)
		alias_rebuild(k, (uint8_t)dev);
	k->gone = 0;
}
