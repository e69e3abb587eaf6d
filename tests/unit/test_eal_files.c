/* SPDX-License-Identifier: MIT */
/*
 * A secondary process's DPDK files (src/engine/eal_files.c): forgetting a
 * pid removes that pid's memory-segment copies and nothing else of the
 * runtime directory (the node's own lists, another pid's, whose number
 * starts the same, the sockets), even while something holds the file
 * locked, which is what used to stop a new process with that pid; and the
 * runtime directory is where EAL puts it.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "engine_internal.h"

static const char *const kept[] = {
	"fbarray_memseg-2048k-0-0",	/* srnicd's own lists */
	"fbarray_memzone",
	"fbarray_memseg-2048k-0-0_1234",	/* pids 1234 and 12 */
	"fbarray_memseg-2048k-0-0_12",
	"mp_socket_123_5f2e0c",	/* (EAL's own to clean) */
	"config",
};
static const char *const forgotten[] = {
	"fbarray_memseg-2048k-0-0_123",
	"fbarray_memseg-2048k-0-1_123",
	"fbarray_memseg-1048576k-1-3_123",
};

static void make(const char *dir, const char *name)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0, "cannot make %s", path);
	if (fd >= 0)
		close(fd);
}

static bool there(const char *dir, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

int main(void)
{
	char dir[64], path[256], out[64], longp[300];
	unsigned i;
	int held;

	snprintf(dir, sizeof(dir), "/tmp/srnic-test-eal.%d", (int)getpid());
	if (!CHECK(mkdir(dir, 0700) == 0, "mkdir %s", dir))
		return check_summary("eal_files");
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		make(dir, kept[i]);
	for (i = 0; i < sizeof(forgotten) / sizeof(forgotten[0]); i++)
		make(dir, forgotten[i]);
	/* One held as DPDK holds its files: a shared lock, kept open. */
	snprintf(path, sizeof(path), "%s/%s", dir, forgotten[0]);
	held = open(path, O_RDWR);
	CHECK(held >= 0 && flock(held, LOCK_SH | LOCK_NB) == 0, "lock %s",
	      path);

	CHECK(srnic_eal_files_forget(dir, 123) == 3, "pid 123's three files");
	for (i = 0; i < sizeof(forgotten) / sizeof(forgotten[0]); i++)
		CHECK(!there(dir, forgotten[i]), "%s is left", forgotten[i]);
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		CHECK(there(dir, kept[i]), "%s went too", kept[i]);
	CHECK(srnic_eal_files_forget(dir, 123) == 0, "nothing left of 123");
	CHECK(srnic_eal_files_forget(dir, 0) == 0, "pid 0 names nothing");
	CHECK(srnic_eal_files_forget("/nonexistent/dir", 123) == 0,
	      "no directory, nothing");
	if (held >= 0)
		close(held);

	/* Where EAL puts it: root's under /var/run, anyone else's under
	 * XDG_RUNTIME_DIR (or /tmp). */
	setenv("XDG_RUNTIME_DIR", "/run/user/1000", 1);
	CHECK(srnic_eal_runtime_dir("srnicd-a-1", out, sizeof(out)) == 0,
	      "runtime dir");
	CHECK(strcmp(out, getuid() == 0 ? "/var/run/dpdk/srnicd-a-1"
					: "/run/user/1000/dpdk/srnicd-a-1") ==
		      0,
	      "runtime dir %s", out);
	memset(longp, 'p', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	CHECK(srnic_eal_runtime_dir(longp, out, sizeof(out)) == -1,
	      "a prefix that does not fit");

	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, kept[i]);
		unlink(path);
	}
	rmdir(dir);
	return check_summary("eal_files");
}
