/* SPDX-License-Identifier: MIT */
/*
 * A process joins srnicd's node: runs on the thread that first gets the
 * engine (the device's first PD), long before DPDK.  srnicd answers an
 * ATTACH with the process's slot in the node, its lcore id and where the
 * node's DPDK memory is; the engine starts later (its first CQ or QP) as
 * a DPDK secondary process of srnicd (engine.c) and uses the node in place
 * of one of its own.  The connection stays open for
 * the life of the attachment: srnicd takes back what the process held when
 * it closes, and the process learns of srnicd's end by the same socket.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "engine_internal.h"
#include "srnicd_proto.h"

#define ATTACH_WAIT_MS 2000	/* srnicd answers at once, or is stuck */

static const char *prog_name(void)
{
	extern char *program_invocation_short_name;

	return program_invocation_short_name ? program_invocation_short_name
					     : "?";
}

/* Whether the process at the other end of fd runs as root or as us. */
static bool server_trusted(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len))
		return false;
	return cr.uid == 0 || cr.uid == geteuid();
}

_Static_assert(sizeof(((struct srnicd_attach_rep *)0)->key_id) ==
		       SRNIC_KEY_ID_LEN,
	       "the attach answer carries a key's fingerprint");

/* Whether this process holds the key whose fingerprint srnicd sent (all
 * zeros: the node has none, and neither may we). */
static bool same_key(const struct srnic_engine *eng,
		     const uint8_t id[SRNIC_KEY_ID_LEN])
{
	uint8_t mine[SRNIC_KEY_ID_LEN] = {0};

	if (eng->cfg.has_key)
		srnic_wire_key_id(eng->cfg.cluster_key, mine);
	return memcmp(mine, id, SRNIC_KEY_ID_LEN) == 0;
}

/* srnicd's answer to the attach, read in full: 0 when this process may
 * join, else why not. */
static int answer_check(const struct srnic_engine *eng,
			struct srnicd_attach_rep *rep, char *err,
			unsigned errlen)
{
	if (rep->hdr.status) {
		rep->error[sizeof(rep->error) - 1] = '\0';
		snprintf(err, errlen, "srnic: srnicd refused to attach this "
			 "process: %s", rep->error);
		return rep->hdr.status;
	}
	if (rep->slot == 0 || rep->slot >= SRNIC_MAX_PROCS ||
	    rep->lcore >= RTE_MAX_LCORE) {
		snprintf(err, errlen, "srnic: srnicd's answer is out of range");
		return -EPROTO;
	}
	if (!same_key(eng, rep->key_id)) {
		snprintf(err, errlen, "srnic: srnicd's node at %s has %s: this "
			 "process would check the node's control frames with "
			 "its own; give its configuration (%s) the node's "
			 "cluster_key", eng->cfg.srnicd_socket,
			 eng->cfg.has_key ? "another cluster key than this "
					    "process"
					  : "a cluster key, this process none",
			 eng->cfg.path);
		return -EPERM;
	}
	return 0;
}

int srnic_attach(struct srnic_engine *eng, char *err, unsigned errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct srnicd_attach_req req;
	struct srnicd_attach_rep rep;
	struct pollfd pfd;
	ssize_t n;
	int fd, rc;

	if (!eng->cfg.srnicd_socket[0])
		return 0;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s",
		 eng->cfg.srnicd_socket);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "srnic: socket: %s", strerror(errno));
		return -errno;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = errno;

		close(fd);
		/* Nobody serves the node: the process runs it itself. */
		if (e == ENOENT || e == ECONNREFUSED) {
			if (eng->mode == SRNIC_ATTACHED) {
				snprintf(err, errlen, "srnic: srnicd (%s) is "
					 "gone, and this process was attached "
					 "to it", eng->cfg.srnicd_socket);
				return -ENODEV;
			}
			return 0;
		}
		snprintf(err, errlen, "srnic: cannot reach srnicd at %s: %s",
			 eng->cfg.srnicd_socket, strerror(e));
		return -e;
	}
	/* The answer says which DPDK memory to join: take it only from a
	 * srnicd run by root or by this process's own user, not from
	 * whoever managed to bind the socket's path. */
	if (!server_trusted(fd)) {
		close(fd);
		snprintf(err, errlen, "srnic: %s is served by a process of "
			 "neither root nor this user: not attaching",
			 eng->cfg.srnicd_socket);
		return -EPERM;
	}
	memset(&req, 0, sizeof(req));
	srnicd_hdr_init(&req.hdr, SRNICD_OP_ATTACH, sizeof(req), 0);
	snprintf(req.prog, sizeof(req.prog), "%s", prog_name());
	pfd.fd = fd;
	pfd.events = POLLIN;
	if (send(fd, &req, sizeof(req), MSG_NOSIGNAL) != sizeof(req) ||
	    poll(&pfd, 1, ATTACH_WAIT_MS) != 1 ||
	    (n = recv(fd, &rep, sizeof(rep), 0)) < 0 ||
	    srnicd_rep_check(&rep, (size_t)n, SRNICD_OP_ATTACH)) {
		close(fd);
		snprintf(err, errlen, "srnic: srnicd at %s did not answer "
			 "the attach", eng->cfg.srnicd_socket);
		return -EPROTO;
	}
	rc = answer_check(eng, &rep, err, errlen);
	if (rc) {
		close(fd);
		return rc;
	}
	eng->mode = SRNIC_ATTACHED;
	eng->srnicd_fd = fd;
	eng->slot = rep.slot;
	eng->lcore = rep.lcore;
	eng->attach_inc = rep.node_inc;
	rep.file_prefix[sizeof(rep.file_prefix) - 1] = '\0';
	rep.huge_dir[sizeof(rep.huge_dir) - 1] = '\0';
	rep.base_va[sizeof(rep.base_va) - 1] = '\0';
	srnic_eal_memory_set(&eng->eal, rep.file_prefix, rep.huge_dir,
			     rep.base_va);
	return 1;
}

bool srnic_attach_gone(const struct srnic_engine *eng)
{
	struct pollfd pfd = {.fd = eng->srnicd_fd, .events = POLLIN};

	/* srnicd never speaks unasked: anything to read is its end. */
	return eng->mode == SRNIC_ATTACHED && eng->srnicd_fd >= 0 &&
	       poll(&pfd, 1, 0) == 1;
}

void srnic_attach_check(struct srnic_engine *eng)
{
	if (__atomic_load_n(&eng->fatal, __ATOMIC_ACQUIRE) ||
	    !srnic_attach_gone(eng))
		return;
	fprintf(stderr, "srnic: srnicd (%s) is gone: the device is lost\n",
		eng->cfg.srnicd_socket);
	__atomic_store_n(&eng->fatal, SRNIC_FATAL_SEEN, __ATOMIC_RELEASE);
}

void srnic_attach_fail_all(struct srnic_engine *eng)
{
	unsigned q;

	__atomic_store_n(&eng->fatal, SRNIC_FATAL_DONE, __ATOMIC_RELEASE);
	for (q = 0; q < SRNIC_MAX_QP; q++) {
		struct srnic_qp *qp = srnic_qp_at(eng, q);

		if (!qp || qp->q.state == SRNIC_QPS_ERR)
			continue;
		srnic_qp_to_error(eng, qp);
		srnic_qp_activate(eng, qp);
	}
	srnic_event(SRNIC_EV_DEVICE_FATAL, NULL);
}

void srnic_attach_close(struct srnic_engine *eng)
{
	/* Its steering class goes back now (its datapath has stopped, or
	 * never ran in this attachment), not when srnicd lets go of the slot:
	 * that waits for the process to exit, and a program that closes the
	 * device and opens it again attaches under a new slot meanwhile. */
	if (eng->cls) {
		uint32_t mine = eng->slot + 1;

		__atomic_compare_exchange_n(&eng->node->class_owner[eng->cls],
					    &mine, 0, false, __ATOMIC_ACQ_REL,
					    __ATOMIC_RELAXED);
		eng->cls = 0;
	}
	if (eng->srnicd_fd >= 0)
		close(eng->srnicd_fd);
	eng->srnicd_fd = -1;
}
