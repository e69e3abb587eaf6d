/* SPDX-License-Identifier: MIT */
/*
 * Multicast RDMA WRITE as the engine holds it (src/group does the work):
 * a process's group regions, what a member has of each sender's current
 * message, and a sending QP's message in flight with each member's
 * progress.  docs/multicast-rdma.md tells the protocol.
 */
#ifndef SRNIC_GROUP_STATE_H
#define SRNIC_GROUP_STATE_H

#include <stdint.h>

#include "srnic_node.h"
#include "srnic_track.h"
#include "srnic_wire.h"

/* A region this process registered for a group (srnic_reg_mr_group):
 * zero-based, a multicast WRITE's offset is from addr.  key 0: none.
 * Changed by engine calls, read by the datapath. */
struct srnic_group_region {
	uint32_t key;
	uint32_t pd;
	uint64_t addr;
	uint64_t length;
	/* where each message that lands whole makes a completion
	 * (srnic_group_notify; counted in its users); NULL: nowhere */
	struct srnic_cq *cq;
};

/*
 * Senders a member keeps track of at once: a sender's entry is in one set,
 * chosen by a hash of its name, so that a packet's lookup reads one set.
 * An entry gives way to a new sender only once its own sender has been
 * silent SRNIC_GROUP_FORGET_MS: by then that sender has either had every
 * member's answer or given this member up (group/sender.c asserts it), so
 * no packet of a message it tracked can still come and be placed twice.
 * A new sender whose set holds no such entry is refused (not answered,
 * counted as mc_sources_full) and retries.
 */
#define SRNIC_GROUP_SOURCE_SETS 16
#define SRNIC_GROUP_SOURCE_WAYS 16
#define SRNIC_GROUP_SOURCES (SRNIC_GROUP_SOURCE_SETS * SRNIC_GROUP_SOURCE_WAYS)
#define SRNIC_GROUP_FORGET_MS 2000

/* A member's view of one sender QP (incarnation and QP number name it):
 * the message it has of it, packet by packet.  Datapath only. */
struct srnic_group_source {
	uint32_t inc;		/* 0: a free entry */
	uint32_t qpn;
	uint32_t msn;		/* the message trk is of */
	uint32_t acked;		/* trk.ndone when we last answered */
	uint8_t started;	/* trk holds message msn */
	uint8_t nak;		/* its packets failed the region's checks */
	uint64_t heard;		/* TSC of its last packet */
	struct srnic_track trk;
};

/* Packets the sender keeps ahead of a member's first missing one: what
 * one ACK describes whole (its first missing packet and 64 bits). */
#define SRNIC_GROUP_WINDOW 256
/* Timeouts without progress before a member is given up. */
#define SRNIC_GROUP_RETRIES 7

enum srnic_group_member_state {
	GM_WAITING,	/* has not all of the message yet */
	GM_DONE,	/* acknowledged it whole */
	GM_FAILED,	/* gone, restarted, or refused it */
};

/* One member of the message in flight, as its ACKs left it. */
struct srnic_group_member {
	uint16_t peer;		/* its index in the node's peer table */
	uint8_t state;
	uint8_t status;		/* GM_FAILED: srnic_wc_status */
	uint32_t inc;		/* its incarnation when the message began */
	uint32_t first;		/* every packet below this landed */
	uint64_t missing;	/* bit i: packet first + 1 + i has not */
	uint32_t resent_to;	/* repairs went out for packets below this
				 * since the last timeout */
	uint32_t repair_to;	/* repair: what it lacks below this */
	uint32_t landed_hi;	/* one past the last packet its ACK had */
	uint64_t hole_at;	/* TSC its ACKs first showed first missing
				 * with later packets landed; 0: no hole */
	uint8_t retries;	/* timeouts without progress */
	uint8_t repair;		/* its last ACK named holes to fill */
	uint32_t rr;		/* repairs' port rotation */
	uint64_t deadline;	/* TSC: silence until then is a timeout */
};

/* A UD QP's multicast WRITE in flight (one at a time), and who failed the
 * last one that failed (srnic_mc_failed).  Allocated with its first. */
struct srnic_group_send {
	uint8_t active;
	uint8_t group;
	uint8_t shift;		/* log2 of the packet size */
	uint8_t blocked;	/* window shut: an ACK opens it */
	uint32_t idx;		/* its WQE's SQ index */
	uint32_t msn;		/* its number (the process's count) */
	uint32_t txid;
	uint32_t rkey;		/* the group and its tag (group/tag.c) */
	uint32_t npkts;
	uint32_t next;		/* the next packet not yet multicast */
	uint32_t rr;		/* multicast's port rotation */
	uint32_t nmembers;
	uint64_t rto;		/* TSC: the first timeout, doubled each retry */
	struct srnic_group_member m[SRNIC_MAX_PEERS];
	/* the last message some member failed: which ones, and why */
	uint64_t failed_wr_id;
	uint32_t nfailed;
	uint32_t failed_ipv4[SRNIC_MAX_PEERS];
	uint8_t failed_status[SRNIC_MAX_PEERS];
};

#endif
