/* SPDX-License-Identifier: MIT */
/*
 * What a process and srnicd say to each other over srnicd's UNIX socket
 * (SOCK_SEQPACKET: one message a request, one a reply).  Every message
 * starts with the same header; a request's length must be exactly what
 * its operation takes, and every string in it must end inside it.
 * request.c is the only code that reads a request; it is fuzzed.
 *
 * The connection is the attachment: srnicd releases what the process held
 * when it closes, whatever the reason (exit, kill, crash).  Who the
 * process is comes from the kernel (SO_PEERCRED), never from a message.
 */
#ifndef SRNICD_PROTO_H
#define SRNICD_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define SRNICD_MAGIC 0x53524e44u	/* "SRND" */
#define SRNICD_VERSION 1
/* The largest message either side sends (a stats reply). */
#define SRNICD_MSG_MAX 65536

enum srnicd_op {
	SRNICD_OP_ATTACH = 1,	/* become a process of the node */
	SRNICD_OP_STATS = 2,	/* the node's counters as JSON */
	SRNICD_OP_SHUTDOWN = 3,	/* leave the links and exit */
	SRNICD_OP_MAX
};

struct srnicd_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t op;
	uint32_t len;		/* of the whole message, header included */
	int32_t status;		/* replies: 0 or a negative errno */
};

struct srnicd_attach_req {
	struct srnicd_hdr hdr;
	char prog[32];		/* the program's name (stats, logs) */
};

/* What a process needs to join the node's DPDK memory as a secondary
 * process and find its share of the node there. */
struct srnicd_attach_rep {
	struct srnicd_hdr hdr;
	uint32_t slot;		/* the process's index in the node */
	uint32_t lcore;		/* its EAL lcore id (mempool caches) */
	uint32_t node_inc;	/* the node's incarnation */
	uint32_t pad;
	/* The node's cluster key's fingerprint (srnic_wire_key_id; zeros:
	 * no key): a process attaches only with the same key, since it
	 * checks the control frames it polls for the whole node. */
	uint8_t key_id[16];
	char file_prefix[64];	/* EAL --file-prefix of the node */
	char huge_dir[128];	/* EAL --huge-dir */
	char base_va[24];	/* EAL --base-virtaddr */
	char error[160];	/* when status < 0: why */
};

/* SRNICD_OP_STATS and SRNICD_OP_SHUTDOWN take a bare header; a stats
 * reply is the header and NUL-terminated JSON. */

/* A request as request.c checked it. */
struct srnicd_req {
	enum srnicd_op op;
	char prog[32];		/* ATTACH: NUL-terminated, printable */
};

/* Check a request of len bytes; 0 with *out filled, or a negative errno:
 * EPROTO (not a request of ours: magic, version, length), EOPNOTSUPP
 * (an operation we do not know), EINVAL (a field out of range). */
int srnicd_req_parse(const void *buf, size_t len, struct srnicd_req *out);

/* A request's or reply's header for op, of len bytes. */
void srnicd_hdr_init(struct srnicd_hdr *h, enum srnicd_op op, uint32_t len,
		     int32_t status);

/* Check a reply of len bytes to op: 0, or -EPROTO when it is none. */
int srnicd_rep_check(const void *buf, size_t len, enum srnicd_op op);

#endif
