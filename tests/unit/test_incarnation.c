/* SPDX-License-Identifier: MIT */
/*
 * The node's incarnation (src/engine/incarnation.c): the boot count in the
 * state directory makes every start's incarnation new, even when the
 * random bits are forced equal; the count survives in its file; a state
 * directory that cannot be kept, or a count file that is not one, is an
 * error that says so, never a silent repeat.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "engine_internal.h"

#define STARTS 2000

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	static uint32_t inc[STARTS];
	struct srnic_config cfg;
	char err[256], path[300], dir[64];
	unsigned i, repeats = 0;
	FILE *f;

	memset(&cfg, 0, sizeof(cfg));
	snprintf(dir, sizeof(dir), "/tmp/srnic-test-inc.%d", (int)getpid());
	snprintf(cfg.state_dir, sizeof(cfg.state_dir), "%s/node/a", dir);
	snprintf(path, sizeof(path), "%s/boot_count", cfg.state_dir);

	/* Random bits forced equal: only the count tells starts apart. */
	setenv("SRNIC_DEBUG_INC_RANDOM", "0x1234", 1);
	for (i = 0; i < STARTS; i++) {
		if (!CHECK(srnic_incarnation_draw(&cfg, &inc[i], err,
						  sizeof(err)) == 0,
			   "start %u: %s", i, err))
			break;
		CHECK((inc[i] & 0xffff) == 0x1234, "random bits %#x, forced "
		      "0x1234", inc[i] & 0xffff);
		CHECK(inc[i] >> 16 == i + 1, "start %u: boot count %u", i,
		      inc[i] >> 16);
	}
	qsort(inc, STARTS, sizeof(inc[0]), cmp_u32);
	for (i = 1; i < STARTS; i++)
		repeats += inc[i] == inc[i - 1];
	CHECK(repeats == 0, "%u incarnations came back", repeats);
	f = fopen(path, "r");
	if (CHECK(f != NULL, "no %s", path)) {
		unsigned v = 0;

		CHECK(fscanf(f, "%u", &v) == 1 && v == STARTS,
		      "boot count on disk %u, want %u", v, STARTS);
		fclose(f);
	}

	/* Random bits of their own when not forced. */
	unsetenv("SRNIC_DEBUG_INC_RANDOM");
	{
		uint32_t a = 0, b = 0;

		CHECK(srnic_incarnation_draw(&cfg, &a, err, sizeof(err)) == 0 &&
			      srnic_incarnation_draw(&cfg, &b, err,
						     sizeof(err)) == 0,
		      "%s", err);
		CHECK(a >> 16 == STARTS + 1 && b >> 16 == STARTS + 2,
		      "count goes on: %u %u", a >> 16, b >> 16);
	}

	/* A count file that is not one. */
	f = fopen(path, "w");
	fputs("many\n", f);
	fclose(f);
	err[0] = '\0';
	CHECK(srnic_incarnation_draw(&cfg, &inc[0], err, sizeof(err)) != 0 &&
		      strstr(err, "not a boot count"),
	      "a garbled count file taken: '%s'", err);
	unlink(path);

	/* A state directory that cannot be made (a file in its way). */
	snprintf(cfg.state_dir, sizeof(cfg.state_dir), "%s/node/a/boot_count/x",
		 dir);
	f = fopen(path, "w");
	fclose(f);
	err[0] = '\0';
	CHECK(srnic_incarnation_draw(&cfg, &inc[0], err, sizeof(err)) != 0 &&
		      strstr(err, "state_dir"),
	      "an impossible state directory taken: '%s'", err);

	unlink(path);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path))
		fprintf(stderr, "(could not remove %s)\n", dir);
	return check_summary("test_incarnation");
}
