/* SPDX-License-Identifier: MIT */
/*
 * memif server sockets: the name a memif server listens under while its
 * port starts, and the leftovers of servers that died.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "srnic_port.h"
#include "port_internal.h"

/* ---- memif server sockets ----
 *
 * DPDK 22.11's memif server creates its listening socket when EAL probes the
 * device, long before the port is configured and started; a client that
 * connects in that window (a peer retrying every 250 ms) makes the server's
 * interrupt thread panic.  So a server listens under a private name while
 * it starts, and the socket takes its real name (rename is atomic) only
 * once the port runs; it gives the name back when the port stops.
 */

/* PATH of "socket=PATH" in a memif server's vdev arguments, or 0. */
static size_t server_socket(const char *arg, const char **path)
{
	const char *s;

	if (strncmp(arg, "net_memif", 9) || !strstr(arg, "role=server"))
		return 0;
	s = strstr(arg, "socket=");
	if (!s)
		return 0;
	*path = s + 7;
	return strcspn(*path, ",");
}

static void starting_name(const char *path, size_t n, char *out, size_t size)
{
	snprintf(out, size, "%.*s.%d", (int)n, path, (int)getpid());
}

/* Is somebody listening on a Unix socket of that path (in this network
 * namespace)?  Read from /proc/net/unix: a probing connect would itself
 * upset a memif server mid-start. */
static bool unix_listener(const char *path)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/net/unix", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *name = strrchr(line, ' ');
		unsigned flags = 0;

		if (!name || sscanf(line, "%*s %*s %*s %x", &flags) != 1)
			continue;
		name[strcspn(name, "\n")] = '\0';
		found = (flags & 0x10000) /* __SO_ACCEPTCON: listening */ &&
			!strcmp(name + 1, path);
	}
	fclose(f);
	return found;
}

/* The vdev arguments EAL gets for port i: a server's socket renamed. */
void srnic_port_vdev_arg(const struct srnic_config *cfg, unsigned i,
			 char *out, size_t size)
{
	const char *arg = cfg->port[i], *path;
	char tmp[128];
	size_t n = server_socket(arg, &path);

	if (!n || n >= sizeof(tmp) - 16) {
		snprintf(out, size, "%s", arg);
		return;
	}
	starting_name(path, n, tmp, sizeof(tmp));
	snprintf(out, size, "%.*s%s%s", (int)(path - arg), arg, tmp,
		 path + n);
}

/* Private names (PATH.<pid>) that servers which ended left behind. */
static void remove_stale_starting(const char *name)
{
	char dir[128], full[300];
	const char *base, *slash = strrchr(name, '/');
	size_t blen;
	struct dirent *d;
	DIR *dp;

	if (!slash)
		return;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - name), name);
	base = slash + 1;
	blen = strlen(base);
	dp = opendir(dir[0] ? dir : "/");
	if (!dp)
		return;
	while ((d = readdir(dp)) != NULL) {
		if (strncmp(d->d_name, base, blen) || d->d_name[blen] != '.' ||
		    strspn(d->d_name + blen + 1, "0123456789") !=
			    strlen(d->d_name + blen + 1))
			continue;
		snprintf(full, sizeof(full), "%s/%s", dir, d->d_name);
		if (!unix_listener(full))
			unlink(full);
	}
	closedir(dp);
}

/*
 * Before EAL starts: a socket file nobody listens on is left over from a
 * server that died (memif does not remove it): remove it, or this node's
 * server could not take the name.
 */
void srnic_ports_prepare(const struct srnic_config *cfg)
{
	unsigned i;

	for (i = 0; i < cfg->nports; i++) {
		const char *path;
		char name[128];
		size_t n = server_socket(cfg->port[i], &path);

		if (!n || n >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)n, path);
		if (!unix_listener(name))
			unlink(name);
		remove_stale_starting(name);
	}
}

/* Give a started server's socket its real name, or take it back. */
void srnic_memif_server_name(struct srnic_engine *eng, unsigned i, bool real)
{
	const char *path;
	char name[128], tmp[128];
	size_t n = server_socket(eng->cfg.port[i], &path);

	if (!n || n >= sizeof(name) - 16)
		return;
	snprintf(name, sizeof(name), "%.*s", (int)n, path);
	starting_name(path, n, tmp, sizeof(tmp));
	if (real)
		rename(tmp, name);
	else
		rename(name, tmp);
}
