/* SPDX-License-Identifier: MIT */
/*
 * The files DPDK keeps for each secondary process of a node, in the
 * node's runtime directory: a local copy of every memory-segment list,
 * "fbarray_<list>_<pid>", some 400 KiB each (four on a node of 2 MiB
 * pages).  DPDK never removes them: every process that ever attached
 * would leave 1.6 MiB in /run (a tmpfs on most hosts), and a new process
 * that gets a dead one's pid finds that pid's files there.  Its EAL then
 * opens them and must take their lock: the one thing that could hold it
 * is another process, and EAL says only "Cannot initialize local memory
 * map" (CI once, 26-srnicd, a node's pids having wrapped at pid_max
 * 32768).
 *
 * So each side forgets a process's files: srnicd once the process has
 * exited (serve.c, srnicd's main thread), and a process before its EAL
 * starts (engine.c, the engine's thread), in case srnicd could not.  No
 * live process can be using files named for a pid that is not its own;
 * one that just got a dead one's pid and made them already holds them
 * open, which an unlink leaves alone.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine_internal.h"

int srnic_eal_runtime_dir(const char *prefix, char *out, size_t len)
{
	const char *base = "/var/run", *xdg = getenv("XDG_RUNTIME_DIR");
	int n;

	/* (where EAL puts it: root's under /var/run, anyone else's under
	 * XDG_RUNTIME_DIR or /tmp) */
	if (getuid() != 0)
		base = xdg ? xdg : "/tmp";
	n = snprintf(out, len, "%s/dpdk/%s", base, prefix);
	return n > 0 && (size_t)n < len ? 0 : -1;
}

unsigned srnic_eal_files_forget(const char *dir, int pid)
{
	char pattern[320];
	unsigned n = 0;
	glob_t g;
	size_t i;
	int w;

	w = snprintf(pattern, sizeof(pattern), "%s/fbarray_*_%d", dir, pid);
	if (w <= 0 || (size_t)w >= sizeof(pattern) || pid <= 0)
		return 0;
	if (glob(pattern, GLOB_NOSORT, NULL, &g) != 0)
		return 0;
	for (i = 0; i < g.gl_pathc; i++)
		n += unlink(g.gl_pathv[i]) == 0;
	globfree(&g);
	return n;
}
