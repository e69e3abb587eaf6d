/* SPDX-License-Identifier: MIT */
/*
 * The object API's multicast part and UD address resolution: joining and
 * leaving a group are engine calls (the datapath reads the process's
 * group table for every datagram, so it changes between iterations:
 * control/mcast.c), and an address handle's GID becomes a peer or a group.
 * Application threads.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "engine_internal.h"

static void call_join(struct srnic_engine *eng, struct srnic_call *c)
{
	c->result = srnic_mcast_join(eng, c->arg, c->arg2);
}

static void call_leave(struct srnic_engine *eng, struct srnic_call *c)
{
	c->result = srnic_mcast_leave(eng, c->arg, c->arg2);
}

static int group_call(struct srnic_engine *eng, struct srnic_qp *qp,
		      const uint8_t gid[16],
		      void (*fn)(struct srnic_engine *, struct srnic_call *))
{
	uint8_t key[16];
	struct srnic_call c = {.fn = fn, .arg = qp, .arg2 = key};
	uint32_t id;
	uint8_t kind = srnic_mcast_gid(gid, &id);

	if (!kind || qp->q.type != SRNIC_QPT_UD)
		return -EINVAL;
	/* An IPv4 group has two GIDs (::ffff:, ff0e::ffff:): one group. */
	memcpy(key, gid, 16);
	if (kind == SRNIC_MCAST_IPV4) {
		memset(key, 0, 10);
		key[10] = key[11] = 0xff;
	}
	srnic_engine_call(eng, &c);
	return c.result;
}

int srnic_engine_attach_mcast(struct srnic_engine *eng, struct srnic_qp *qp,
			      const uint8_t gid[16])
{
	return group_call(eng, qp, gid, call_join);
}

int srnic_engine_detach_mcast(struct srnic_engine *eng, struct srnic_qp *qp,
			      const uint8_t gid[16])
{
	return group_call(eng, qp, gid, call_leave);
}

int srnic_engine_resolve_ud(struct srnic_engine *eng, const uint8_t gid[16],
			    struct srnic_ud_addr *out)
{
	struct srnic_peer *peer;

	memset(out, 0, sizeof(*out));
	out->mcast = srnic_mcast_gid(gid, &out->ipv4);
	if (out->mcast) {
		/* A group is any node's: resolving it is having a link to
		 * send on.  A program that starts the engine and sends at
		 * once would otherwise send into links still coming up. */
		uint64_t deadline = srnic_ms() + eng->cfg.resolve_ms;

		while (!srnic_ports_up(eng->node) && srnic_ms() < deadline)
			usleep(2000);
		return 0;
	}
	peer = srnic_control_resolve(eng, gid, eng->cfg.resolve_ms);
	if (!peer)
		return -EHOSTUNREACH;
	out->peer = (uint16_t)(peer - eng->node->peer);
	out->ipv4 = peer->ipv4;
	return 0;
}
