/* SPDX-License-Identifier: MIT */
/*
 * The system-wide protection table (seed 004, Fig. 3 and 8;
 * docs/published-keys.md): each node's portion lists the regions its
 * programs published under a name of theirs, and every node keeps a copy
 * of the portion of each peer it is integrated with.  A lookup finds a
 * peer's region by name without asking the peer; a restart of the peer
 * (a new incarnation) empties its copy before its new table comes.
 *
 * Who writes: the node's own portion (node->tpt), its processes, under
 * mcast_lock (publish, unpublish; srnicd for a process that is gone); a
 * peer's copy (peer->tpt), the control core alone (control/tpt.c).
 * Anyone reads either without a lock: the sequence count is odd while a
 * writer is in, and a reader that saw it change reads again.
 */
#ifndef SRNIC_TPT_H
#define SRNIC_TPT_H

#include <stdint.h>

#include <rte_seqcount.h>

#include "srnic_wire.h"

struct srnic_tpt_entry {
	uint32_t name;		/* the program's name for it, not 0 */
	uint32_t rkey;
	uint64_t addr;
	uint64_t length;
	uint8_t access;		/* remote rights (SRNIC_TPT_RIGHTS) */
	uint8_t owner;		/* own portion: the publishing process's
				 * slot + 1 */
	uint16_t pad;
	uint32_t pad2;
};

struct srnic_tpt {
	rte_seqcount_t sc;
	uint32_t inc;		/* a peer's copy: its incarnation the table
				 * is of (0: none) */
	uint32_t gen;		/* the publisher's generation of it */
	uint32_t n;
	struct srnic_tpt_entry e[SRNIC_TPT_MAX];
};

#endif
