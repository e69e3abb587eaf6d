/* SPDX-License-Identifier: MIT */
/*
 * Which RDMA device an IP address belongs to, as rdma_cm must know to bind
 * an id: the srnic device whose GID table holds the address (GID 1 is the
 * node's IPv4 address, IPv4-mapped, as RoCE v2 names it).  Read once from
 * libibverbs itself (the provider answers: GIDs, GUID, active MTU), which
 * librdmacm has loaded; this library links nothing of it.  Runs with
 * ucma.lock held.
 */

#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "preload.h"
#include "ucma.h"

static void *verbs(const char *name)
{
	return preload_verbs_fn(name, "IBVERBS_1.1");
}

static void read_devs(void)
{
	struct ibv_device **(*get_list)(int *) = verbs("ibv_get_device_list");
	void (*free_list)(struct ibv_device **) =
		verbs("ibv_free_device_list");
	struct ibv_context *(*open_dev)(struct ibv_device *) =
		verbs("ibv_open_device");
	int (*close_dev)(struct ibv_context *) = verbs("ibv_close_device");
	int (*query_port)(struct ibv_context *, uint8_t,
			  struct ibv_port_attr *) = verbs("ibv_query_port");
	int (*query_gid)(struct ibv_context *, uint8_t, int,
			 union ibv_gid *) = verbs("ibv_query_gid");
	__be64 (*guid)(struct ibv_device *) = verbs("ibv_get_device_guid");
	struct ibv_device **list;
	struct ibv_port_attr pa;
	struct ibv_context *ctx;
	union ibv_gid g;
	int n, i, k;

	ucma.devs_read = true;
	if (!get_list || !free_list || !open_dev || !close_dev ||
	    !query_port || !query_gid || !guid)
		return;
	list = get_list(&n);
	if (!list)
		return;
	for (i = 0; i < n && ucma.ndevs < UCMA_MAX_DEVS; i++) {
		struct ucma_dev *d = &ucma.devs[ucma.ndevs];

		/* (srnic's alone: another vendor's device has its kernel) */
		if (strncmp(list[i]->name, "srnic", 5))
			continue;
		ctx = open_dev(list[i]);
		if (!ctx)
			continue;
		memset(d, 0, sizeof(*d));
		memset(&pa, 0, sizeof(pa));
		if (query_port(ctx, 1, &pa) == 0) {
			snprintf(d->name, sizeof(d->name), "%s", list[i]->name);
			d->guid = guid(list[i]);
			d->active_mtu = pa.active_mtu;
			for (k = 0; k < UCMA_GIDS; k++)
				if (query_gid(ctx, 1, k, &g) == 0)
					memcpy(d->gid[k], g.raw, 16);
			ucma.ndevs++;
		}
		close_dev(ctx);
	}
	free_list(list);
}

void ucma_devs_load(void)
{
	if (!ucma.devs_read)
		read_devs();
}

void ucma_addr_gid(const struct sockaddr *a, uint8_t gid[16])
{
	memset(gid, 0, 16);
	if (a->sa_family == AF_INET) {
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, &((const struct sockaddr_in *)a)->sin_addr, 4);
	} else if (a->sa_family == AF_INET6) {
		memcpy(gid, &((const struct sockaddr_in6 *)a)->sin6_addr, 16);
	}
}

bool ucma_addr_loopback(const struct sockaddr *a)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)a;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)a;

	if (a->sa_family == AF_INET)
		return ntohl(in->sin_addr.s_addr) >> 24 == IN_LOOPBACKNET;
	return a->sa_family == AF_INET6 &&
	       IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
}

/* The kernel's rdma_cm takes a loopback address (127/8, ::1) for "any"
 * too (cma_any_addr): bound to one, an id has no device, and it listens
 * on every address. */
bool ucma_addr_any(const struct sockaddr *a)
{
	static const uint8_t zero[16];
	uint8_t gid[16];

	if (ucma_addr_loopback(a))
		return true;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr == 0;
	ucma_addr_gid(a, gid);
	return memcmp(gid, zero, 16) == 0;
}

socklen_t ucma_addr_len(const struct sockaddr *a)
{
	return a->sa_family == AF_INET	  ? sizeof(struct sockaddr_in)
	       : a->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					  : 0;
}

uint16_t ucma_addr_port(const struct sockaddr *a)
{
	return a->sa_family == AF_INET
		       ? ntohs(((const struct sockaddr_in *)a)->sin_port)
		       : ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
}

void ucma_addr_set_port(struct sockaddr_storage *a, uint16_t port)
{
	if (a->ss_family == AF_INET)
		((struct sockaddr_in *)a)->sin_port = htons(port);
	else if (a->ss_family == AF_INET6)
		((struct sockaddr_in6 *)a)->sin6_port = htons(port);
}

/* The device holding address a, and the GID index it is at: -1 if none. */
int ucma_dev_by_addr(const struct sockaddr *a, int *gid_index)
{
	static const uint8_t zero[16];
	uint8_t gid[16];
	int d, k;

	ucma_devs_load();
	ucma_addr_gid(a, gid);
	if (!memcmp(gid, zero, 16))
		return -1;
	for (d = 0; d < ucma.ndevs; d++)
		for (k = 0; k < UCMA_GIDS; k++)
			if (!memcmp(ucma.devs[d].gid[k], gid, 16)) {
				if (gid_index)
					*gid_index = k;
				return d;
			}
	return -1;
}

/* The TCP port an RDMA port travels on (and back: the map is its own
 * inverse).  Not the same number: a program may use one port number in
 * both spaces, which are apart in the kernel (UCX listens with every
 * connection manager on one port, its TCP one among them).  0 stays 0
 * ("any"), so RDMA port 16384, which would map to it, is refused. */
#define CM_PORT_FLIP 0x4000

static uint16_t flip(uint16_t port)
{
	return port ? port ^ CM_PORT_FLIP : 0;
}

void ucma_port_flip(struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)a;

		in->sin_port = htons(flip(ntohs(in->sin_port)));
	} else if (a->ss_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)a;

		in6->sin6_port = htons(flip(ntohs(in6->sin6_port)));
	}
}

bool ucma_port_ok(const struct sockaddr *a)
{
	return ucma_addr_port(a) != CM_PORT_FLIP;
}
