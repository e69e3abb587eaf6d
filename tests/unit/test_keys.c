/* SPDX-License-Identifier: MIT */
/*
 * Key migration's table of an adapter's imported and refused keys
 * (control/keys.c): a flood of made-up keys arriving at an adapter fills
 * it with refusals, and a real key of another adapter that arrives after
 * them must still be imported.  Before refusals gave way to imports, 1024
 * bogus keys locked migration out for good.
 */
#include <string.h>

#include "check.h"
#include "engine_internal.h"
#include "ring_engine.h"
#include "srnic_control.h"

static uint8_t region[4096];

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
	/* deregistration takes the import out again */
	srnic_keys_forget(eng, key);
	CHECK(srnic_key_alias_of(&eng->keys, 1, key) != SRNIC_ALIAS_IMPORTED,
	      "a forgotten key still imported");
	return check_summary("test_keys");
}
