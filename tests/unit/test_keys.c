/* SPDX-License-Identifier: MIT */
/*
 * Key migration's table of an adapter's imported and refused keys
 * (control/keys.c): a flood of made-up keys arriving at an adapter fills
 * it with refusals, and a real key of another adapter that arrives after
 * them must still be imported.  Before refusals gave way to imports, 1024
 * bogus keys locked migration out for good.  And an import no request
 * used for key_idle_ms is evicted, counted, while one in use stays.
 */
#include <string.h>

#include "check.h"
#include "engine_internal.h"
#include "ring_engine.h"
#include "srnic_control.h"

static uint8_t region[4096];

/* key (imported at adapter 1) through idle sweeps: kept while requests
 * use it, evicted after key_idle_ms without, and imported again. */
static void idle_eviction(struct srnic_engine *eng, uint32_t key)
{
	uint64_t ms = eng->tsc_per_us * 1000, t0 = srnic_now();
	struct srnic_key_alias *a = srnic_key_alias_find(&eng->keys, 1, key);

	eng->cfg.key_idle_ms = 100;
	if (!CHECK(a && eng->keys.nalias > SRNIC_KEY_ALIASES / 2,
		   "no import to age (%u aliases)", eng->keys.nalias))
		return;
	/* the refusals, settled before it, go at the first sweep past
	 * their idle time; a request 50 ms in keeps the import */
	a->used = t0 + 50 * ms;
	srnic_keys_evict(eng, t0 + 120 * ms);
	CHECK(srnic_key_alias_of(&eng->keys, 1, key) == SRNIC_ALIAS_IMPORTED,
	      "an import used 70 ms ago was evicted");
	CHECK(eng->keys.nalias == 1 &&
		      eng->st->keys_evicted >= SRNIC_KEY_ALIASES / 2,
	      "idle refusals not evicted: %u aliases left, %llu evicted",
	      eng->keys.nalias, (unsigned long long)eng->st->keys_evicted);
	{
		unsigned i, gone = 0;

		for (i = 0; i < SRNIC_KEY_ALIASES; i++)
			gone += eng->keys.alias[1][i].state == SRNIC_ALIAS_GONE;
		CHECK(!gone && !eng->keys.gone,
		      "%u evicted entries left in the table as gaps", gone);
	}
	/* (sweeps are a second apart: the next one is past 1120 ms) */
	srnic_keys_evict(eng, t0 + 1000 * ms);
	CHECK(srnic_key_alias_of(&eng->keys, 1, key) == SRNIC_ALIAS_IMPORTED,
	      "swept again within the second");
	srnic_keys_evict(eng, t0 + 1200 * ms);
	CHECK(srnic_key_alias_of(&eng->keys, 1, key) == SRNIC_ALIAS_FREE &&
		      eng->keys.nalias == 0,
	      "an import unused for 1150 ms (key_idle_ms 100) was kept");
	/* its next request misses and is settled again */
	srnic_keys_miss(eng, 1, key);
	srnic_keys_settle(eng);
	CHECK(srnic_key_alias_of(&eng->keys, 1, key) == SRNIC_ALIAS_IMPORTED &&
		      eng->st->keys_imported == 2,
	      "an evicted key was not imported again");
}

int main(void)
{
	struct srnic_engine *eng = ring_engine_new();
	uint32_t key, bogus = 0x7000001, i, n;
	uint64_t refused0;

	srnic_mem_init(&eng->mem, 42);
	/* issued by adapter 0, arriving at adapter 1 */
	key = srnic_mem_register_on(&eng->mem, 0, (uintptr_t)region,
				    sizeof(region), SRNIC_ACCESS_REMOTE_WRITE,
				    1);
	if (!CHECK(key, "no key"))
		return check_summary("test_keys");
	/* twice the table's room of keys nobody issued */
	for (i = 0; i < 2 * SRNIC_KEY_ALIASES; i += n) {
		for (n = 0; n < SRNIC_KEY_MISSES; n++, bogus += 0x100)
			srnic_keys_miss(eng, 1, bogus);
		srnic_keys_settle(eng);
	}
	refused0 = eng->st->keys_refused;
	CHECK(refused0 >= SRNIC_KEY_ALIASES, "only %llu refusals recorded",
	      (unsigned long long)refused0);
	srnic_keys_miss(eng, 1, key);
	srnic_keys_settle(eng);
	CHECK(srnic_key_alias_of(&eng->keys, 1, key) == SRNIC_ALIAS_IMPORTED,
	      "a live key of adapter 0 was not imported at adapter 1 after "
	      "%llu refusals", (unsigned long long)refused0);
	CHECK(eng->st->keys_imported == 1, "%llu imports, not 1",
	      (unsigned long long)eng->st->keys_imported);
	idle_eviction(eng, key);
	/* deregistration takes the import out again */
	srnic_keys_forget(eng, key);
	CHECK(srnic_key_alias_of(&eng->keys, 1, key) != SRNIC_ALIAS_IMPORTED,
	      "a forgotten key still imported");
	return check_summary("test_keys");
}
