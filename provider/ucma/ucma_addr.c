/* SPDX-License-Identifier: MIT */
/*
 * rdma_cm commands about addresses (run in the caller's thread, ucma.lock
 * held; ucma_cmd.c dispatches them): bind, address and route resolution,
 * the queries librdmacm makes after each, and multicast groups.
 *
 * An id binds a TCP socket to the address it holds in the RDMA port
 * space, at the port's TCP twin (ucma_port_flip), so a port is taken by
 * one process of a node at a time, as the kernel's RDMA ports are, and a
 * connection is a TCP connection between two ids' twins (cm_thread.c).
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/ib.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_sa.h>

#include "ucma.h"

/* The address a command gives, as the IP address srnic keeps; an AF_IB
 * one (where ib_ps is given: its port space, -1 for an IP address) is
 * taken by the IP address its GID names (ucma_ib.c). */
static int take_addr(const struct ucma_id *id, struct sockaddr_storage *to,
		     const void *from, size_t size, int *ib_ps)
{
	const struct sockaddr *a = from;
	uint16_t ps;
	int rc;

	memset(to, 0, sizeof(*to));
	if (ib_ps)
		*ib_ps = -1;
	if (a->sa_family == AF_IB && ib_ps) {
		if (size < sizeof(struct sockaddr_ib))
			return EINVAL;
		rc = ucma_ib_to_ip(from, id->ps, to, &ps);
		if (!rc)
			*ib_ps = ps;
		return rc;
	}
	if (a->sa_family != AF_INET && a->sa_family != AF_INET6)
		return EAFNOSUPPORT;
	if (ucma_addr_len(a) > size)
		return EINVAL;
	memcpy(to, a, ucma_addr_len(a));
	return 0;
}

/* The id speaks the family of the address it was given. */
static void take_family(struct ucma_id *id, int ib_ps)
{
	id->af_ib = ib_ps >= 0;
	id->sid_ps = ib_ps >= 0 ? (uint16_t)ib_ps : 0;
}

/* Binds id's TCP socket to a (port 0: one the system picks). */
int ucma_bind_to(struct ucma_id *id, const struct sockaddr *a)
{
	socklen_t len = sizeof(id->src);
	struct sockaddr_storage t;
	int one = 1, s;

	if (!ucma_port_ok(a))
		return EADDRINUSE;	/* (the one port without a TCP twin) */
	id->dev = -1;
	if (!ucma_addr_any(a)) {
		id->dev = ucma_dev_by_addr(a, NULL);
		if (id->dev < 0)
			return ENODEV;	/* no RDMA device has it */
	}
	s = socket(a->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		   0);
	if (s < 0)
		return errno;
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (a->sa_family == AF_INET6 && id->afonly)
		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	/* (an AF_IB id bound to GID 0 takes IPv4 peers, GID 1's, too,
	 * whatever the system's bindv6only) */
	else if (a->sa_family == AF_INET6 && id->af_ib)
		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &(int){0}, sizeof(int));
	memset(&t, 0, sizeof(t));
	memcpy(&t, a, ucma_addr_len(a));
	/* (a loopback address: the TCP twin takes every address, as the
	 * kernel's id listens on all; the id keeps the address it was
	 * given, with the port) */
	if (ucma_addr_loopback(a)) {
		if (t.ss_family == AF_INET)
			((struct sockaddr_in *)&t)->sin_addr.s_addr = 0;
		else
			((struct sockaddr_in6 *)&t)->sin6_addr = in6addr_any;
	}
	ucma_port_flip(&t);
	if (bind(s, (struct sockaddr *)&t, ucma_addr_len(a))) {
		int e = errno;

		close(s);
		return e;
	}
	getsockname(s, (struct sockaddr *)&t, &len);
	ucma_port_flip(&t);
	memcpy(&id->src, a, ucma_addr_len(a));
	ucma_addr_set_port(&id->src, ucma_addr_port((struct sockaddr *)&t));
	id->sock = s;
	id->state = ST_BOUND;
	return 0;
}

static int bind_addr(struct ucma_id *id, const void *addr, size_t size)
{
	struct sockaddr_storage a;
	int ib_ps, rc = take_addr(id, &a, addr, size, &ib_ps);

	if (rc)
		return rc;
	if (id->state != ST_IDLE)
		return EINVAL;
	take_family(id, ib_ps);
	rc = ucma_bind_to(id, (struct sockaddr *)&a);
	if (rc)
		take_family(id, -1);
	return rc;
}

int ucma_bind_ip(struct ucma_chan *ch, struct ucma_id *id, const void *c,
		 uint32_t out)
{
	const struct rdma_ucm_bind_ip *cmd = c;

	(void)ch;
	(void)out;
	return bind_addr(id, &cmd->addr, sizeof(cmd->addr));
}

int ucma_bind(struct ucma_chan *ch, struct ucma_id *id, const void *c,
	      uint32_t out)
{
	const struct rdma_ucm_bind *cmd = c;

	(void)ch;
	(void)out;
	if (cmd->addr_size > sizeof(cmd->addr))
		return EINVAL;
	return bind_addr(id, &cmd->addr, cmd->addr_size);
}

/* The source address the routing table picks for d (port 0). */
static int routed_source(const struct sockaddr_storage *d,
			 struct sockaddr_storage *s)
{
	socklen_t len = sizeof(*s);
	int u, rc = 0;

	u = socket(d->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (u < 0)
		return errno;
	if (connect(u, (const struct sockaddr *)d,
		    ucma_addr_len((const struct sockaddr *)d)) ||
	    getsockname(u, (struct sockaddr *)s, &len))
		rc = errno;	/* ENETUNREACH: no route */
	close(u);
	ucma_addr_set_port(s, 0);
	return rc;
}

/* The destination in the family of the socket a bound id holds: IPv4
 * as IPv4-mapped IPv6 for an AF_IB id on an IPv6 socket (bound to GID 0,
 * it may resolve GID 1's); other mixes refused, as the kernel refuses an
 * IP id's. */
static int same_family(const struct ucma_id *id, struct sockaddr_storage *d)
{
	struct sockaddr_in v4;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)d;

	if (id->src.ss_family == d->ss_family)
		return 0;
	if (!id->af_ib || id->src.ss_family != AF_INET6)
		return EINVAL;
	memcpy(&v4, d, sizeof(v4));
	memset(d, 0, sizeof(*d));
	v6->sin6_family = AF_INET6;
	v6->sin6_port = v4.sin_port;
	v6->sin6_addr.s6_addr[10] = v6->sin6_addr.s6_addr[11] = 0xff;
	memcpy(&v6->sin6_addr.s6_addr[12], &v4.sin_addr, 4);
	return 0;
}

/* Address resolution: the source the system would route from (unless the
 * id has one), the device that address belongs to, both GIDs.  The event
 * comes at once: a peer on the node's IP network is a neighbour. */
static int resolve(struct ucma_id *id, const void *src, size_t src_size,
		   const void *dst, size_t dst_size)
{
	struct sockaddr_storage s, d;
	int ib_ps, src_ps, rc;

	rc = take_addr(id, &d, dst, dst_size, &ib_ps);
	if (rc)
		return rc;
	if (id->state != ST_IDLE && id->state != ST_BOUND &&
	    id->state != ST_ADDR)
		return EINVAL;
	/* (an id speaks one family: AF_IB or IP) */
	if (id->state != ST_IDLE && id->af_ib != (ib_ps >= 0))
		return EINVAL;
	if (id->state == ST_IDLE && src &&
	    ((const struct sockaddr *)src)->sa_family) {
		rc = take_addr(id, &s, src, src_size, &src_ps);
		if (!rc && (src_ps >= 0) != (ib_ps >= 0))
			rc = EINVAL;
		if (!rc) {
			take_family(id, ib_ps);
			rc = ucma_bind_to(id, (struct sockaddr *)&s);
		}
		if (rc) {
			take_family(id, -1);
			return rc;
		}
	}
	if (id->state != ST_IDLE) {
		rc = same_family(id, &d);
		if (rc)
			return rc;
	}
	memcpy(&id->dst, &d, sizeof(d));
	if (id->state == ST_IDLE) {
		take_family(id, ib_ps);
		rc = routed_source(&d, &s);
		if (!rc)
			rc = ucma_bind_to(id, (struct sockaddr *)&s);
		if (rc && rc != ENODEV)
			take_family(id, -1);
		if (rc == ENODEV) {
			/* routed out of an interface with no RDMA device:
			 * the kernel's ADDR_ERROR */
			ucma_queue(id, RDMA_CM_EVENT_ADDR_ERROR, -ENODEV);
			return 0;
		}
		if (rc)
			return rc;
	} else if (ucma_addr_any((struct sockaddr *)&id->src)) {
		/* bound to "any": the port stays, the address is the
		 * routed one */
		rc = routed_source(&d, &s);
		if (rc)
			return rc;
		ucma_addr_set_port(&s,
				   ucma_addr_port((struct sockaddr *)&id->src));
		memcpy(&id->src, &s, sizeof(s));
		id->dev = ucma_dev_by_addr((struct sockaddr *)&s, NULL);
	}
	if (id->dev < 0) {
		ucma_queue(id, RDMA_CM_EVENT_ADDR_ERROR, -ENODEV);
		return 0;
	}
	id->state = ST_ADDR;
	ucma_queue(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	return 0;
}

int ucma_resolve_ip(struct ucma_chan *ch, struct ucma_id *id, const void *c,
		    uint32_t out)
{
	const struct rdma_ucm_resolve_ip *cmd = c;

	(void)ch;
	(void)out;
	return resolve(id, &cmd->src_addr, sizeof(cmd->src_addr),
		       &cmd->dst_addr, sizeof(cmd->dst_addr));
}

int ucma_resolve_addr(struct ucma_chan *ch, struct ucma_id *id,
		      const void *c, uint32_t out)
{
	const struct rdma_ucm_resolve_addr *cmd = c;

	(void)ch;
	(void)out;
	if (cmd->src_size > sizeof(cmd->src_addr) ||
	    cmd->dst_size > sizeof(cmd->dst_addr))
		return EINVAL;
	return resolve(id, cmd->src_size ? &cmd->src_addr : NULL,
		       cmd->src_size, &cmd->dst_addr, cmd->dst_size);
}

int ucma_resolve_route(struct ucma_chan *ch, struct ucma_id *id,
		       const void *c, uint32_t out)
{
	(void)ch;
	(void)c;
	(void)out;
	if (id->state != ST_ADDR && id->state != ST_ROUTE)
		return EINVAL;
	id->state = ST_ROUTE;
	id->route = true;
	ucma_queue(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	return 0;
}

/* The path record of id's route (one path: srnic stripes every port). */
void ucma_path_rec(const struct ucma_id *id, struct ib_user_path_rec *p)
{
	memset(p, 0, sizeof(*p));
	ucma_addr_gid((const struct sockaddr *)&id->src, p->sgid);
	ucma_addr_gid((const struct sockaddr *)&id->dst, p->dgid);
	p->pkey = htons(0xffff);
	p->hop_limit = 64;
	p->traffic_class = id->tos;
	p->reversible = 1;
	p->numb_path = 1;
	p->mtu_selector = 2;	/* exactly */
	p->mtu = ucma.devs[id->dev].active_mtu;
	p->rate_selector = 2;
	p->rate = 7;		/* (40 Gb/s: what is reported is a guess) */
	p->packet_life_time_selector = 2;
	p->packet_life_time = 14;
}

int ucma_query_route(struct ucma_chan *ch, struct ucma_id *id, const void *c,
		     uint32_t out)
{
	const struct rdma_ucm_query *cmd = c;
	struct rdma_ucm_query_route_resp resp;
	size_t n;

	(void)ch;
	memset(&resp, 0, sizeof(resp));
	resp.ibdev_index = (uint32_t)-1;
	/* (sockaddr_in6 fields: an IPv4 address fits, as the kernel puts
	 * it there too) */
	n = ucma_addr_len((struct sockaddr *)&id->src);
	memcpy(&resp.src_addr, &id->src, n);
	n = ucma_addr_len((struct sockaddr *)&id->dst);
	memcpy(&resp.dst_addr, &id->dst, n);
	if (id->dev >= 0) {
		resp.node_guid = ucma.devs[id->dev].guid;
		resp.port_num = 1;
		ucma_path_rec(id, &resp.ib_route[0]);
		resp.num_paths = id->route ? 1 : 0;
	}
	ucma_answer(cmd->response, out, &resp, sizeof(resp));
	return 0;
}

int ucma_query(struct ucma_chan *ch, struct ucma_id *id, const void *c,
	       uint32_t out)
{
	const struct rdma_ucm_query *cmd = c;
	struct rdma_ucm_query_addr_resp resp;

	(void)ch;
	/* (QUERY is librdmacm's way when it has AF_IB: ucma_ib.c) */
	if (cmd->option == RDMA_USER_CM_QUERY_GID)
		return ucma_query_gid(id, cmd->response, out);
	if (cmd->option == RDMA_USER_CM_QUERY_PATH)
		return ucma_query_path(id, cmd->response, out);
	if (cmd->option != RDMA_USER_CM_QUERY_ADDR)
		return ENOSYS;
	memset(&resp, 0, sizeof(resp));
	if (id->af_ib) {
		resp.src_size = resp.dst_size = sizeof(struct sockaddr_ib);
		ucma_ip_to_ib(id, &id->src, (struct sockaddr_ib *)&resp.src_addr);
		ucma_ip_to_ib(id, &id->dst, (struct sockaddr_ib *)&resp.dst_addr);
	} else {
		resp.src_size = ucma_addr_len((struct sockaddr *)&id->src);
		resp.dst_size = ucma_addr_len((struct sockaddr *)&id->dst);
		memcpy(&resp.src_addr, &id->src, resp.src_size);
		memcpy(&resp.dst_addr, &id->dst, resp.dst_size);
	}
	ucma_query_dev(id, &resp);
	ucma_answer(cmd->response, out, &resp, sizeof(resp));
	return 0;
}

void ucma_query_dev(const struct ucma_id *id,
		    struct rdma_ucm_query_addr_resp *resp)
{
	resp->ibdev_index = (uint32_t)-1;
	if (id->dev < 0)
		return;
	resp->node_guid = ucma.devs[id->dev].guid;
	resp->port_num = 1;
	resp->pkey = 0xffff;
}

/* A multicast group: srnic joins IPv4 groups by their IPv4-mapped GID,
 * which the QP attaches to (librdmacm does, on the join event). */
static int join(struct ucma_id *id, uint64_t uid, const void *addr,
		size_t size, uint64_t response, uint32_t out)
{
	struct rdma_ucm_create_id_resp resp = {0};
	struct sockaddr_storage a;
	struct ucma_event *ev;
	struct ucma_mc *mc;
	int rc, k = 0;

	if (id->dev < 0 || id->qp_type != IBV_QPT_UD)
		return EINVAL;
	rc = take_addr(id, &a, addr, size, NULL);
	if (rc)
		return rc;
	if (a.ss_family != AF_INET ||
	    !IN_MULTICAST(ntohl(((struct sockaddr_in *)&a)->sin_addr.s_addr)))
		return EINVAL;
	mc = ucma_mc_new(id, uid);
	if (!mc)
		return ENOMEM;
	memcpy(&mc->addr, &a, sizeof(a));
	ev = ucma_event_new(id, RDMA_CM_EVENT_MULTICAST_JOIN, 0);
	if (ev) {
		struct rdma_ucm_ud_param *u = &ev->resp.param.ud;

		ev->resp.uid = uid;
		ev->resp.id = mc->handle;
		ev->mc = mc;
		u->qp_num = 0xffffff;
		u->qkey = RDMA_UDP_QKEY;
		ucma_addr_gid((struct sockaddr *)&a, u->ah_attr.grh.dgid);
		ucma_dev_by_addr((struct sockaddr *)&id->src, &k);
		u->ah_attr.grh.sgid_index = (uint8_t)k;
		u->ah_attr.grh.hop_limit = 1;
		u->ah_attr.is_global = 1;
		u->ah_attr.port_num = 1;
		u->ah_attr.dlid = 0xc000;	/* (unused on Ethernet) */
	}
	ucma_event_queue(id, ev);
	resp.id = mc->handle;
	ucma_answer(response, out, &resp, sizeof(resp));
	return 0;
}

int ucma_join_ip_mcast(struct ucma_chan *ch, struct ucma_id *id,
		       const void *c, uint32_t out)
{
	const struct rdma_ucm_join_ip_mcast *cmd = c;

	(void)ch;
	return join(id, cmd->uid, &cmd->addr, sizeof(cmd->addr),
		    cmd->response, out);
}

int ucma_join_mcast(struct ucma_chan *ch, struct ucma_id *id, const void *c,
		    uint32_t out)
{
	const struct rdma_ucm_join_mcast *cmd = c;

	(void)ch;
	if (cmd->addr_size > sizeof(cmd->addr) ||
	    cmd->join_flags > RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
		return EINVAL;
	return join(id, cmd->uid, &cmd->addr, cmd->addr_size, cmd->response,
		    out);
}

/* LEAVE_MCAST names the membership, not the id. */
int ucma_leave_mcast(struct ucma_chan *ch, struct ucma_id *none,
		     const void *c, uint32_t out)
{
	const struct rdma_ucm_destroy_id *cmd = c;
	struct rdma_ucm_destroy_id_resp resp = {0};
	struct ucma_mc *mc = ucma_mc_get(cmd->id);

	(void)none;
	if (!mc || mc->id->chan != ch)
		return EINVAL;
	resp.events_reported = mc->events_reported;
	ucma_mc_free(mc);
	ucma_answer(cmd->response, out, &resp, sizeof(resp));
	return 0;
}
