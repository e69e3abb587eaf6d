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
	/* A service's address: each datagram to its holder then, the
	 * service's address its destination. */
	{
		const struct srnic_service *sv;
		uint32_t ip = srnic_get32(gid + 12);

		sv = gid[10] == 0xff && gid[11] == 0xff &&
			     !memcmp(gid, "\0\0\0\0\0\0\0\0\0\0", 10)
			     ? srnic_service_find(eng->node, ip)
			     : NULL;
		if (sv) {
			out->svc = (uint8_t)(sv - eng->node->svc + 1);
			out->ipv4 = ip;
		}
	}
	return 0;
}

/* ---- multicast RDMA WRITE: group regions (src/group places into them) ---- */

struct group_region_call {
	unsigned g;
	struct srnic_group_region r;
};

/* Group g's region makes its completions in cq from now on: the CQ it
 * made them in before is no longer in use by it, cq is. */
static void region_cq(struct srnic_engine *eng, unsigned g,
		      struct srnic_cq *cq)
{
	struct srnic_cq *old = eng->group[g].cq;

	if (old == cq)
		return;
	if (old)
		__atomic_fetch_sub(&old->users, 1, __ATOMIC_RELAXED);
	if (cq)
		__atomic_fetch_add(&cq->users, 1, __ATOMIC_RELAXED);
	eng->group[g].cq = cq;
}

static void call_group_region(struct srnic_engine *eng, struct srnic_call *c)
{
	const struct group_region_call *a = c->arg;

	region_cq(eng, a->g, a->r.cq);
	eng->group[a->g] = a->r;
	c->result = 0;
}

static void set_region(struct srnic_engine *eng, unsigned g,
		       const struct srnic_group_region *r)
{
	struct group_region_call a = {.g = g, .r = *r};
	struct srnic_call c = {.fn = call_group_region, .arg = &a};

	srnic_engine_call(eng, &c);
}

int srnic_engine_group_region(struct srnic_engine *eng, unsigned g,
			      uint32_t key, uint32_t pd, const void *addr,
			      uint64_t length)
{
	const struct srnic_group_region r = {
		.key = key, .pd = pd, .addr = (uintptr_t)addr, .length = length};
	int rc;

	if (g >= SRNIC_MAX_GROUPS)
		return -EINVAL;
	/* The node first: a second process's claim fails before it could
	 * take packets; then this process's table, before peers hear of
	 * it from the HELLOs the claim asks for. */
	rc = srnic_group_claim(eng->node, eng->slot, g);
	if (rc)
		return rc;
	set_region(eng, g, &r);
	return 0;
}

void srnic_engine_group_forget_key(struct srnic_engine *eng, uint32_t key)
{
	static const struct srnic_group_region none;
	unsigned g;

	for (g = 0; g < SRNIC_MAX_GROUPS; g++)
		if (key && eng->group[g].key == key) {
			srnic_group_unclaim(eng->node, eng->slot, g);
			set_region(eng, g, &none);
		}
}

static void call_group_notify(struct srnic_engine *eng, struct srnic_call *c)
{
	uint32_t key = (uint32_t)(uintptr_t)c->arg2;
	unsigned g;

	c->result = -EINVAL;
	for (g = 0; g < SRNIC_MAX_GROUPS; g++)
		if (key && eng->group[g].key == key) {
			region_cq(eng, g, c->arg);
			c->result = 0;
		}
}

int srnic_engine_group_notify(struct srnic_engine *eng, uint32_t key,
			      struct srnic_cq *cq)
{
	struct srnic_call c = {.fn = call_group_notify, .arg = cq,
			       .arg2 = (const void *)(uintptr_t)key};

	srnic_engine_call(eng, &c);
	return c.result;
}

int srnic_engine_group_members(struct srnic_engine *eng, unsigned g,
			       struct srnic_engine_member *out, int max)
{
	unsigned n, i;
	int k = 0;

	if (g >= SRNIC_MAX_GROUPS)
		return -EINVAL;
	n = srnic_npeers(eng->node);
	for (i = 0; i < n && i < SRNIC_MAX_PEERS; i++) {
		const struct srnic_peer *peer = &eng->node->peer[i];

		if (!((__atomic_load_n(&peer->groups, __ATOMIC_ACQUIRE) >> g) &
		      1) ||
		    !srnic_stripe_reachable(eng, peer))
			continue;
		if (k < max) {
			out[k].ipv4 = peer->ipv4;
			memcpy(out[k].name, peer->name, sizeof(out[k].name));
			out[k].name[sizeof(out[k].name) - 1] = '\0';
			out[k].status = 0;
		}
		k++;
	}
	return k;
}

int srnic_engine_group_failed(struct srnic_engine *eng, struct srnic_qp *qp,
			      uint64_t *wr_id, struct srnic_engine_member *out,
			      int max)
{
	const struct srnic_group_send *gs = qp->gsend;
	uint32_t n, i, k;
	int got = 0;

	if (!gs)
		return 0;
	n = __atomic_load_n(&gs->nfailed, __ATOMIC_ACQUIRE);
	*wr_id = gs->failed_wr_id;
	for (i = 0; i < n; i++) {
		const struct srnic_peer *peer = srnic_peer_find(eng,
							       gs->failed_ipv4[i]);

		if (got < max) {
			out[got].ipv4 = gs->failed_ipv4[i];
			out[got].status = gs->failed_status[i];
			memset(out[got].name, 0, sizeof(out[got].name));
			for (k = 0; peer && k + 1 < sizeof(out[got].name) &&
				    k < sizeof(peer->name) && peer->name[k];
			     k++)
				out[got].name[k] = peer->name[k];
		}
		got++;
	}
	return got;
}
