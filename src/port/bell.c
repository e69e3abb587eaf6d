/* SPDX-License-Identifier: MIT */
/*
 * A memif link's bells: how the node at one end of a memif link wakes the
 * other's sleeper when it sends it frames.  DPDK 22.11's memif has no
 * receive interrupts (no rx_queue_intr_enable): its rings carry the memif
 * protocol's "interrupt" flag and an eventfd per queue, but the eventfd is
 * the primary's, and an attached process (a secondary) that sends would
 * write its number, which is some other file there.  So srnic keeps bells
 * of its own beside the link's socket: a small file that both ends'
 * processes map, with a bell (struct srnic_bell) for each end, the
 * server's and the client's.  A node's sleeper (srnicd's datapath, or an
 * embedded engine's) sleeps on its end's bells and its own at once
 * (futex_waitv); whoever sends on the link rings the far end's bell after
 * the frames are on the ring, which costs a system call only when the far
 * end sleeps (srnic_ring).  A memif link joins two processes of one host,
 * so a file beside its socket is one both can reach.
 *
 * Mapped by every process of a node when its engine starts (the bells'
 * addresses are its own), before its datapath runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "srnic_port.h"

#define BELL_MAGIC 0x5342454cu	/* "SBEL" */

/* The file: a bell for each end, each on a cache line of its own (the
 * far end writes the one, this end the other). */
struct wire_bells {
	uint32_t magic;
	uint8_t pad0[60];
	struct {
		struct srnic_bell bell;
		uint8_t pad[64 - sizeof(struct srnic_bell)];
	} end[2];	/* [0] the server's, [1] the client's */
};

/* The value of key=VALUE in a vdev's arguments (n bytes), or NULL. */
static const char *arg_value(const char *arg, const char *key, size_t *n)
{
	size_t k = strlen(key);
	const char *s = arg;

	while ((s = strchr(s, ',')) != NULL) {
		s++;
		if (!strncmp(s, key, k) && s[k] == '=') {
			*n = strcspn(s + k + 1, ",");
			return s + k + 1;
		}
	}
	return NULL;
}

/* Map the bells of memif port i; 0, or a negative errno. */
static int bells_map(struct srnic_engine *eng, unsigned i)
{
	const char *arg = eng->cfg.port[i], *sock, *id, *role;
	size_t nsock = 0, nid = 0, nrole = 0;
	struct wire_bells *wb;
	char path[PATH_MAX];
	struct stat st;
	int fd, me;

	sock = arg_value(arg, "socket", &nsock);
	id = arg_value(arg, "id", &nid);
	role = arg_value(arg, "role", &nrole);
	/* (DPDK's defaults: client, /run/memif.sock, id 0) */
	me = role && nrole == 6 && !strncmp(role, "server", 6) ? 0 : 1;
	if (snprintf(path, sizeof(path), "%.*s.bell.%.*s", (int)nsock,
		     sock ? sock : "/run/memif.sock", (int)(id ? nid : 1),
		     id ? id : "0") >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0660);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (st.st_size < (off_t)sizeof(*wb) &&
	     ftruncate(fd, sizeof(*wb)))) {
		close(fd);
		return -EINVAL;
	}
	wb = mmap(NULL, sizeof(*wb), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		  0);
	close(fd);
	if (wb == MAP_FAILED)
		return -errno;
	__atomic_store_n(&wb->magic, BELL_MAGIC, __ATOMIC_RELAXED);
	eng->wire_bell[i] = &wb->end[me].bell;
	eng->wire_peer[i] = &wb->end[!me].bell;
	return 0;
}

void srnic_port_bells_open(struct srnic_engine *eng)
{
	unsigned i;

	eng->wires_unbelled = 0;
	for (i = 0; i < eng->cfg.nports; i++) {
		if (eng->wire_bell[i])
			continue;	/* (an earlier start's) */
		if (strncmp(eng->cfg.port[i], "net_memif", 9) ||
		    bells_map(eng, i) < 0)
			eng->wires_unbelled++;
	}
}
