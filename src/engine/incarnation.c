/* SPDX-License-Identifier: MIT */
/*
 * The node's incarnation, drawn at every start of its engine (the thread
 * that starts it runs this, before any port is up).
 *
 * Peers tell an old process of the node from the new one by it alone: an
 * incarnation that came back would make them take the dead process's QPs
 * for the live one's (srnic_integrate_booting forgets only QPs bound to
 * another incarnation).  So it is not merely random: its high 16 bits are
 * the node's boot count, kept in state_dir/boot_count and raised at every
 * start under an exclusive lock (several processes of a node may start at
 * once), and only the low 16 bits are random.  Two starts of a node get
 * different incarnations until the count wraps, after 65536 starts; the
 * random bits stand in where the state directory was lost (a new machine,
 * a tmpfs after a reboot).
 *
 * SRNIC_DEBUG_INC_RANDOM=N (tests only) fixes the random bits at N, so a
 * test can show that the count alone keeps restarts apart.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine_internal.h"

#define COUNT_FILE "boot_count"
#define LOCK_FILE "node.lock"
/* How long a start waits for the node's last process to finish exiting
 * (the kernel lets go of its lock only once it has unmapped its memory). */
#define CLAIM_WAIT_MS 2000

/* mkdir -p for the state directory (0700: only the node's owner). */
static int make_dir(const char *path)
{
	char buf[sizeof(((struct srnic_config *)0)->state_dir)];
	char *s;

	snprintf(buf, sizeof(buf), "%s", path);
	for (s = buf + strlen(buf); s > buf + 1 && s[-1] == '/'; )
		*--s = '\0';	/* (the last one gets 0700 below) */
	for (s = buf + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -1;
		*s = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -1;
	return 0;
}

/* The state directory made if it is not there yet, or why it cannot be
 * (the node's lock and its boot count both live there, and either may be
 * the first to need it). */
static int state_dir_made(const char *dir, char *err, unsigned errlen)
{
	if (!make_dir(dir))
		return 0;
	snprintf(err, errlen, "srnic: cannot make the state directory %s: %s "
		 "(state_dir)", dir, strerror(errno));
	return -1;
}

/* The node's boot count after this start: read, raise and write back
 * under an exclusive lock, and on disk before it is used. */
static int next_boot_count(const char *dir, uint32_t *count, char *err,
			   unsigned errlen)
{
	char path[sizeof(((struct srnic_config *)0)->state_dir) + 16];
	char text[16];
	unsigned long v = 0;
	ssize_t n;
	int fd, rc = -1;

	if (state_dir_made(dir, err, errlen))
		return -1;
	snprintf(path, sizeof(path), "%s/" COUNT_FILE, dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX)) {
		snprintf(err, errlen, "srnic: cannot keep the boot count in "
			 "%s: %s (state_dir)", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	n = pread(fd, text, sizeof(text) - 1, 0);
	if (n > 0) {
		char *end;

		text[n] = '\0';
		v = strtoul(text, &end, 10);
		if (end == text || (*end && *end != '\n')) {
			snprintf(err, errlen, "srnic: %s is not a boot count: "
				 "remove it to start counting again", path);
			goto out;
		}
	}
	v++;
	n = snprintf(text, sizeof(text), "%lu\n", v);
	if (pwrite(fd, text, n, 0) != n || ftruncate(fd, n) || fsync(fd)) {
		snprintf(err, errlen, "srnic: cannot write the boot count to "
			 "%s: %s", path, strerror(errno));
		goto out;
	}
	*count = (uint32_t)v;
	rc = 0;
out:
	close(fd);	/* (and the lock with it) */
	return rc;
}

/*
 * The node runs in one process at a time: srnicd, or where none serves
 * it, the one program that uses the device.  A second would open the same
 * ports (a tap a second time is another queue of it, which the kernel
 * shares the frames out to) and answer for the same node with another
 * incarnation.  It is told instead.  An exclusive lock on a file of the
 * state directory, held while the node runs here; the kernel drops it
 * when the process dies, however it dies.
 */
static int node_lock = -1;

int srnic_node_claim(const struct srnic_config *cfg, char *err,
		     unsigned errlen)
{
	char path[sizeof(((struct srnic_config *)0)->state_dir) + 16];
	char text[32];
	unsigned i;
	ssize_t n;
	int fd;

	if (node_lock >= 0)
		return 0;
	if (state_dir_made(cfg->state_dir, err, errlen))
		return -1;
	snprintf(path, sizeof(path), "%s/" LOCK_FILE, cfg->state_dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "srnic: cannot open %s: %s (state_dir)",
			 path, strerror(errno));
		return -1;
	}
	for (i = 0; flock(fd, LOCK_EX | LOCK_NB); i++) {
		if (errno != EWOULDBLOCK || i == CLAIM_WAIT_MS / 10) {
			n = pread(fd, text, sizeof(text) - 1, 0);
			text[n > 0 ? n : 0] = '\0';
			text[strcspn(text, "\n")] = '\0';
			snprintf(err, errlen, "srnic: node %s is run by another "
				 "process (pid %s) and no srnicd serves it: "
				 "without srnicd, one program a node uses the "
				 "device; start srnicd for the node (srnicd "
				 "--conf %s) and every program attaches to it",
				 cfg->node, text[0] ? text : "?", cfg->path);
			close(fd);
			return -1;
		}
		usleep(10 * 1000);
	}
	/* (the pid is for the message above only: no harm if unwritten) */
	n = snprintf(text, sizeof(text), "%d\n", (int)getpid());
	if (pwrite(fd, text, n, 0) == n)
		(void)ftruncate(fd, n);
	node_lock = fd;
	return 0;
}

void srnic_node_release(void)
{
	if (node_lock >= 0)
		close(node_lock);
	node_lock = -1;
}

int srnic_incarnation_draw(const struct srnic_config *cfg, uint32_t *inc,
			   char *err, unsigned errlen)
{
	const char *fixed = getenv("SRNIC_DEBUG_INC_RANDOM");
	uint32_t count, rnd;

	if (next_boot_count(cfg->state_dir, &count, err, errlen))
		return -1;
	if (fixed && *fixed)
		rnd = (uint32_t)strtoul(fixed, NULL, 0);
	else if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = (uint32_t)(srnic_now() * 0x9e3779b97f4a7c15ull >> 32);
	*inc = count << 16 | (rnd & 0xffff);
	if (!*inc)
		*inc = 1;	/* never 0, which no packet may claim */
	return 0;
}
