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
 * end sleeps (srnic_ring).  Each end has two bells: its processes' (each
 * that waits for frames sleeps there, and the first to wake polls the
 * ports for all, taking its own frames with no hand-off) and its node's
 * sleeper's, rung only when no process sleeps on the first: waking both
 * made them race for the ports and the CPUs (ib_send_lat -e typical went
 * from 17 to 40-47 us when every sleeper woke).  A memif link joins two
 * processes of one host, so a file beside its socket is one both can
 * reach.
 *
 * Mapped by every process of a node when its engine starts (the bells'
 * addresses are its own), before its datapath runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "srnic_port.h"

#define BELL_MAGIC 0x5342454cu	/* "SBEL" */

/* The file: each end's bells (the far end writes them, this end sleeps
 * on them), each end on cache lines of its own. */
struct wire_bells {
	uint32_t magic;
	uint8_t pad0[60];
	struct srnic_wire_end end[2];	/* [0] the server's, [1] the client's */
	struct srnic_wire_classes cls[2];	/* ... their classes' */
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
	unsigned c;
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
	if (eng->mode != SRNIC_ATTACHED) {
		/* The node starts: nobody of this end sleeps yet, whatever
		 * the file says (a srnicd killed with processes asleep
		 * left their bits, which would send every ring their way). */
		__atomic_store_n(&wb->end[me].procs.sleeping, 0,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&wb->end[me].node.sleeping, 0,
				 __ATOMIC_RELAXED);
		for (c = 0; c < SRNIC_MAX_CLASSES; c++)
			__atomic_store_n(&wb->cls[me].cls[c].b.sleeping, 0,
					 __ATOMIC_RELAXED);
	}
	eng->wire_bell[i] = eng->mode == SRNIC_ATTACHED ? &wb->end[me].procs
							: &wb->end[me].node;
	eng->wire_peer[i] = &wb->end[!me];
	eng->wire_cls[i] = &wb->cls[me];
	eng->wire_peer_cls[i] = &wb->cls[!me];
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

/* srnicd: a process that died asleep sleeps on no bell any more (else its
 * bit would make every sender of the link wake nobody, a system call a
 * flush). */
/* Port i's end of the link, of the node's engine (srnicd's, or an
 * embedded one), whose bell there is its end's node bell. */
static struct srnic_wire_end *node_end(struct srnic_engine *eng, unsigned i)
{
	return (struct srnic_wire_end *)((char *)eng->wire_bell[i] -
					 offsetof(struct srnic_wire_end, node));
}

void srnic_port_bells_forget(struct srnic_engine *eng, unsigned slot)
{
	unsigned i, c;

	for (i = 0; i < eng->cfg.nports; i++) {
		if (!eng->wire_bell[i])
			continue;
		__atomic_fetch_and(&node_end(eng, i)->procs.sleeping,
				   ~(1u << slot),
				   __ATOMIC_RELAXED);
		for (c = 0; c < SRNIC_MAX_CLASSES; c++)
			__atomic_fetch_and(&eng->wire_cls[i]->cls[c].b.sleeping,
					   ~(1u << slot), __ATOMIC_RELAXED);
	}
	__atomic_fetch_and(&eng->node->loop_end.procs.sleeping, ~(1u << slot),
			   __ATOMIC_RELAXED);
}

/* The control core: port i began to steer (its peer said it has as many
 * queues).  Frames the peer sent on the new queues meanwhile woke their
 * class's process, or this node's sleeper, when the port was not theirs to
 * poll yet: wake them again, now that it is. */
void srnic_port_bells_steer(struct srnic_engine *eng, unsigned i)
{
	unsigned c;

	if (!eng->wire_bell[i] || !eng->wire_cls[i])
		return;
	for (c = 1; c < SRNIC_MAX_CLASSES; c++)
		srnic_ring(&eng->wire_cls[i]->cls[c].b);
	srnic_ring(&node_end(eng, i)->procs);
	srnic_ring(&node_end(eng, i)->node);
}
