/* SPDX-License-Identifier: MIT */
/*
 * srnicd's socket, served on its main thread: processes attach through it
 * (the connection is the attachment), and administrators ask for the
 * counters or a shutdown.  Every request is checked by request.c before
 * anything acts on it; a connection that sends something else is closed.
 * Nothing here blocks: one poll() over the listening socket and every
 * connection, so that a process that goes away is let go of at once (its
 * hang-up wakes the poll), and no client can hold srnicd up.
 *
 * A process's slot is released only once the process has exited: a
 * connection can end while its process still runs (it sent nonsense and
 * was hung up on, or it closed the socket), and that process may be in
 * the middle of a burst on the node's rings.  Its pidfd joins the poll
 * and says when it is gone.  Or once it attaches again: a process
 * attaches only as its device's first user, after its last one closed
 * it and its datapath stopped (engine.c), so it is done with the old
 * slot then.  (A program that opens and closes the device over and over,
 * as rdma-core's tests do for each test, would otherwise hold a slot for
 * every opening, and be refused past SRNIC_MAX_PROCS - 1.)
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/eventfd.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_eal.h>

#include "srnicd.h"
#include "srnicd_proto.h"

/* Connections at once: every process slot, and a few for administration;
 * more wait in the listen backlog. */
#define MAX_CONNS (SRNIC_MAX_PROCS + 8)
/* How often the stopped processes are looked for (stopped.c: within
 * STOPPED_HOLD_MS of this); an idle node's (its datapath deep asleep, the
 * port token held by no process) less often: a wake-up costs 40-150 us
 * here.  The datapath's leaving its deep sleep (eng->deep_left_fd) and a
 * stop (SIGTERM, SIGINT: blocked but in the poll, main.c) cut the poll
 * short. */
#define POLL_MS 100
#define IDLE_POLL_MS 250

struct conn {
	int fd;
	int pid;
	unsigned slot;	/* 0: not attached */
};

/* A process whose connection ended while it still ran: its slot waits for
 * its exit (pidfd readable). */
struct departing {
	int pidfd;	/* -1: a free entry */
	int pid;
	unsigned slot;
};

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434	/* (every architecture since Linux 5.3) */
#endif

static int listen_on(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	mode_t old;
	int fd, probe;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	/* A socket file nobody answers on is a dead srnicd's; one that
	 * answers is another srnicd's, which this one must not take over. */
	probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (probe >= 0 && connect(probe, (struct sockaddr *)&sa,
				  sizeof(sa)) == 0) {
		close(probe);
		fprintf(stderr, "srnicd: another srnicd serves %s\n", path);
		return -1;
	}
	if (probe >= 0)
		close(probe);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    0);
	if (fd < 0)
		return -1;
	/* Who may attach is who may open the socket: its owner and group. */
	old = umask(0117);	/* (0660) */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, 64)) {
		umask(old);
		fprintf(stderr, "srnicd: cannot serve %s: %s\n", path,
			strerror(errno));
		close(fd);
		return -1;
	}
	umask(old);
	return fd;
}

static void reply(int fd, void *msg, size_t len)
{
	/* (a client that does not read its answer loses it, not srnicd
	 * its time) */
	if (send(fd, msg, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
	    errno != EAGAIN)
		return;
}

/* A process's slot back; once it has exited (gone), the files its EAL
 * left in the node's runtime directory go too (eal_files.c). */
static void release_slot(struct srnic_engine *eng, int pid, unsigned slot,
			 bool gone)
{
	char drops[512];

	srnicd_proc_drops(eng, slot, drops, sizeof(drops));
	fprintf(stderr, "srnicd: pid %d (slot %u) detached, %u QPs released; "
		"it had %s\n", pid, slot, srnicd_proc_qps(eng, slot), drops);
	srnicd_proc_release(eng, slot);
	if (gone)
		srnic_eal_files_forget(rte_eal_get_runtime_dir(), pid);
}

/* A process that attaches again lets go of the slot it left waiting for
 * its exit (dep): it stopped using it before it asked (above). */
static void attached_again(struct srnic_engine *eng, int pid,
			   struct departing dep[SRNIC_MAX_PROCS])
{
	unsigned i;

	for (i = 0; i < SRNIC_MAX_PROCS; i++)
		if (dep[i].pidfd >= 0 && dep[i].pid == pid) {
			fprintf(stderr, "srnicd: pid %d attaches again: its "
				"slot %u goes\n", pid, dep[i].slot);
			release_slot(eng, pid, dep[i].slot, false);
			close(dep[i].pidfd);
			dep[i].pidfd = -1;
		}
}

static void attach(struct srnic_engine *eng, struct conn *c,
		   const struct srnicd_req *req,
		   struct departing dep[SRNIC_MAX_PROCS])
{
	struct srnicd_attach_rep rep;
	int slot;

	memset(&rep, 0, sizeof(rep));
	if (!c->slot && c->pid > 0)
		attached_again(eng, c->pid, dep);
	if (c->slot) {
		slot = -EALREADY;
		snprintf(rep.error, sizeof(rep.error),
			 "this connection is attached already");
	} else {
		slot = srnicd_proc_attach(eng, c->pid, req->prog, rep.error,
					  sizeof(rep.error));
	}
	srnicd_hdr_init(&rep.hdr, SRNICD_OP_ATTACH, sizeof(rep),
			slot < 0 ? slot : 0);
	if (slot > 0) {
		c->slot = (unsigned)slot;
		rep.slot = (uint32_t)slot;
		rep.lcore = SRNIC_PROC_LCORE0 + (uint32_t)slot;
		rep.node_inc = eng->node->inc;
		if (eng->cfg.has_key)
			srnic_wire_key_id(eng->cfg.cluster_key, rep.key_id);
		snprintf(rep.file_prefix, sizeof(rep.file_prefix), "%s",
			 eng->eal.prefix);
		snprintf(rep.huge_dir, sizeof(rep.huge_dir), "%s",
			 eng->eal.huge_dir);
		snprintf(rep.base_va, sizeof(rep.base_va), "%s",
			 eng->eal.base_va);
		fprintf(stderr, "srnicd: %s (pid %d) attached, slot %d\n",
			req->prog, c->pid, slot);
	}
	reply(c->fd, &rep, sizeof(rep));
}

static void stats(struct srnic_engine *eng, struct conn *c)
{
	static char msg[SRNICD_MSG_MAX];
	struct srnicd_hdr *h = (struct srnicd_hdr *)msg;
	size_t len = sizeof(*h);

	/* The stats file, too, as of now ("./srnic stats NODE" shows it). */
	srnic_stats_write(eng);

	len += srnicd_stats_json(eng, msg + len, sizeof(msg) - len) + 1;
	srnicd_hdr_init(h, SRNICD_OP_STATS, (uint32_t)len, 0);
	reply(c->fd, msg, len);
}

/* Nothing for the serving loop to watch: the node's datapath sleeps with
 * nothing timed, and no process holds the port token. */
static bool node_idle(struct srnic_node *node)
{
	struct srnic_proc *holder = srnicd_token_holder(node);

	return __atomic_load_n(&node->dp_deep, __ATOMIC_SEQ_CST) &&
	       (!holder || holder == &node->proc[0]);
}

/* poll(), up to IDLE_POLL_MS or POLL_MS, with the stop signals let in
 * while it waits (none is lost between a look at the stop flag and the
 * wait). */
static int wait_for(struct pollfd *pfd, unsigned n, bool idle,
		    const sigset_t *none)
{
	unsigned ms = idle ? IDLE_POLL_MS : POLL_MS;
	struct timespec ts = {.tv_sec = ms / 1000,
			      .tv_nsec = (ms % 1000) * 1000000L};

	return ppoll(pfd, n, &ts, none);
}

/* Whether the process behind pidfd has exited. */
static bool exited(int pidfd)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};

	return poll(&p, 1, 0) == 1;
}

/* A connection ends; release: what its process held in the node comes
 * back, now if the process is gone, else once it has exited (dep) (not
 * when srnicd itself stops: its processes may still be running, and
 * learn of the end by the hang-up). */
static void drop_conn(struct srnic_engine *eng, struct conn *c, bool release,
		      struct departing dep[SRNIC_MAX_PROCS])
{
	int pidfd;
	unsigned i;
	bool gone;

	if (c->slot && release) {
		pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
		/* (a slot has one connection, and a departing process keeps
		 * its slot: dep has room, but never trust it blindly) */
		for (i = 0; i < SRNIC_MAX_PROCS && dep[i].pidfd >= 0; i++)
			;
		gone = pidfd < 0 || exited(pidfd);
		if (gone || i == SRNIC_MAX_PROCS) {
			release_slot(eng, c->pid, c->slot, gone);
			if (pidfd >= 0)
				close(pidfd);
		} else {
			dep[i] = (struct departing){pidfd, c->pid, c->slot};
			fprintf(stderr, "srnicd: pid %d (slot %u) hung up "
				"while it runs: its slot waits for its exit\n",
				c->pid, c->slot);
		}
	}
	close(c->fd);
	c->fd = -1;
	c->slot = 0;
}

/* One message from c: false when the connection must go. */
static bool serve_one(struct srnic_engine *eng, struct conn *c,
		      struct departing dep[SRNIC_MAX_PROCS],
		      volatile int *stop)
{
	/* (one byte more than any request: a longer one is cut, and its
	 * length then fails the check) */
	union {
		struct srnicd_attach_req attach;
		char raw[sizeof(struct srnicd_attach_req) + 1];
	} in;
	struct srnicd_req req;
	struct srnicd_hdr h;
	ssize_t n;
	int rc;

	n = recv(c->fd, &in, sizeof(in), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n <= 0)
		return false;	/* gone */
	rc = srnicd_req_parse(&in, (size_t)n, &req);
	if (rc) {
		/* Not one of ours, or nonsense: say so once, then hang up
		 * (an attached process loses its attachment). */
		srnicd_hdr_init(&h, SRNICD_OP_MAX, sizeof(h), rc);
		reply(c->fd, &h, sizeof(h));
		return false;
	}
	switch (req.op) {
	case SRNICD_OP_ATTACH:
		attach(eng, c, &req, dep);
		return true;
	case SRNICD_OP_STATS:
		stats(eng, c);
		return true;
	case SRNICD_OP_SHUTDOWN:
		srnicd_hdr_init(&h, SRNICD_OP_SHUTDOWN, sizeof(h), 0);
		reply(c->fd, &h, sizeof(h));
		*stop = 1;
		return true;
	default:
		return false;
	}
}

static int peer_pid(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) ? -1
								    : cr.pid;
}

int srnicd_serve(struct srnic_engine *eng, volatile int *stop)
{
	const char *path = eng->cfg.srnicd_socket;
	struct conn conns[MAX_CONNS];
	struct departing dep[SRNIC_MAX_PROCS];
	struct pollfd pfd[2 + MAX_CONNS + SRNIC_MAX_PROCS];
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	sigset_t none;
	struct srnicd_stop_watch stopped = {0};
	unsigned i, n;
	int lfd, ret;
	bool idle;

	lfd = listen_on(path);
	if (lfd < 0)
		return -1;
	for (i = 0; i < MAX_CONNS; i++)
		conns[i].fd = -1, conns[i].slot = 0;
	for (i = 0; i < SRNIC_MAX_PROCS; i++)
		dep[i].pidfd = -1;
	fprintf(stderr, "srnicd: node %s serves %s (DPDK prefix %s)\n",
		eng->cfg.node, path, eng->eal.prefix);
	sigemptyset(&none);
	__atomic_store_n(&eng->deep_left_fd, efd, __ATOMIC_RELEASE);
	while (!*stop) {
		pfd[0].fd = lfd;
		pfd[0].events = POLLIN;
		for (i = 0, n = 1; i < MAX_CONNS; i++) {
			pfd[n].fd = conns[i].fd;
			pfd[n].events = POLLIN;
			pfd[n].revents = 0;
			n++;
		}
		for (i = 0; i < SRNIC_MAX_PROCS; i++, n++)
			pfd[n] = (struct pollfd){.fd = dep[i].pidfd,
						 .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = efd, .events = POLLIN};
		/* (said before the look at dp_deep: a datapath that leaves
		 * its deep sleep after the look wakes this one) */
		__atomic_store_n(&eng->node->main_long_poll, 1,
				 __ATOMIC_SEQ_CST);
		idle = node_idle(eng->node);
		if (!idle)
			__atomic_store_n(&eng->node->main_long_poll, 0,
					 __ATOMIC_RELAXED);
		ret = wait_for(pfd, n, idle, &none);
		__atomic_store_n(&eng->node->main_long_poll, 0,
				 __ATOMIC_RELAXED);
		if (ret < 0 && errno != EINTR)
			break;
		if (pfd[n - 1].revents) {
			uint64_t told;

			if (read(efd, &told, sizeof(told)) < 0)
				told = 0;	/* (drained already) */
		}
		for (i = 0; i < SRNIC_MAX_PROCS; i++)
			if (dep[i].pidfd >= 0 &&
			    pfd[1 + MAX_CONNS + i].revents) {
				release_slot(eng, dep[i].pid, dep[i].slot,
					     true);
				close(dep[i].pidfd);
				dep[i].pidfd = -1;
			}
		srnicd_watch_stopped(eng, &stopped);
		srnicd_watch_rings(eng);
		for (i = 0; i < MAX_CONNS; i++) {
			short ev = pfd[i + 1].revents;

			if (conns[i].fd < 0 || !ev)
				continue;
			if ((ev & POLLIN) &&
			    serve_one(eng, &conns[i], dep, stop))
				continue;
			if (ev & (POLLIN | POLLHUP | POLLERR | POLLNVAL))
				drop_conn(eng, &conns[i], true, dep);
		}
		if (pfd[0].revents & POLLIN) {
			int fd = accept4(lfd, NULL, NULL,
					 SOCK_CLOEXEC | SOCK_NONBLOCK);

			for (i = 0; fd >= 0 && i < MAX_CONNS; i++)
				if (conns[i].fd < 0) {
					conns[i].fd = fd;
					conns[i].pid = peer_pid(fd);
					conns[i].slot = 0;
					break;
				}
			if (fd >= 0 && i == MAX_CONNS)
				close(fd);	/* full: try again later */
		}
	}
	for (i = 0; i < MAX_CONNS; i++)
		if (conns[i].fd >= 0)
			drop_conn(eng, &conns[i], false, dep);
	for (i = 0; i < SRNIC_MAX_PROCS; i++)
		if (dep[i].pidfd >= 0)
			close(dep[i].pidfd);
	close(lfd);
	unlink(path);
	__atomic_store_n(&eng->deep_left_fd, -1, __ATOMIC_RELEASE);
	/* (the datapath may be writing to it still: closed with the
	 * process) */
	return 0;
}
