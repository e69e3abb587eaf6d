/* SPDX-License-Identifier: MIT */
/*
 * srnic's own verbs: what a srnic device offers beyond libibverbs, in the
 * manner of mlx5dv and efadv.  Link with -lsrnic (pkg-config srnic): the
 * library is the provider libibverbs loads for srnic devices, so these
 * calls work on the very objects ibv_* calls made.
 *
 * Every call takes an object of a srnic device and fails with EOPNOTSUPP
 * for one of any other device; calls that return a pointer return NULL
 * with errno set.
 */
#ifndef SRNIC_H
#define SRNIC_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether device is a srnic device (its calls below work on it). */
bool srnic_is_srnic_device(struct ibv_device *device);

#define SRNIC_NODE_NAME_MAX 32

/* What srnic_query_device says: the node the context belongs to. */
struct srnic_device_attr {
	uint64_t comp_mask;		/* none defined: 0 */
	char node[SRNIC_NODE_NAME_MAX];	/* the node's name ("a") */
	uint32_t ipv4;			/* the node's address, host order */
	uint32_t nports;		/* Ethernet ports it stripes over */
	uint32_t ports_up;		/* bit p: port p's link is up */
	uint32_t mtu;			/* largest payload of a frame */
	uint32_t running;		/* the datapath runs: it starts with
					 * the context's first CQ, QP, SRQ or
					 * address handle; before, every
					 * configured port counts as up and
					 * the process as not attached */
	uint32_t attached;		/* the node is srnicd's, and this
					 * process one of those attached */
	uint32_t slot;			/* attached: the process's slot */
};

/*
 * The node behind context: 0, or EOPNOTSUPP (not a srnic context), or
 * EINVAL (attr->comp_mask asks for what this library does not know).
 */
int srnic_query_device(struct ibv_context *context,
		       struct srnic_device_attr *attr);

#ifdef __cplusplus
}
#endif

#endif
