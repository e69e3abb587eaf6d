/* SPDX-License-Identifier: MIT */
/*
 * AF_IB, rdma_cm's native address family: a GID and a service id in a
 * sockaddr_ib.  The kernel offers it on InfiniBand alone; srnic's rdma_cm
 * lives in user space and offers it on Ethernet too, where a GID names an
 * IP address (GID 0: the netdev's link-local IPv6 address; GID 1: the
 * node's IPv4 address, IPv4-mapped, as RoCE v2 names it) and the service
 * id's low 16 bits are the port.
 *
 * An id given an AF_IB address keeps the IP address that address names
 * (its TCP twin, its device and its path are an IP id's) and speaks AF_IB
 * to its program: QUERY answers in sockaddr_ib, and its connection
 * requests carry IB CM's whole private data, rdma_cm's header included
 * (ucma_pd_skip).
 *
 * librdmacm asks for the family when it starts (a bind of AF_IB); granted,
 * it runs every id through the commands a kernel with AF_IB answers (BIND,
 * RESOLVE_ADDR, QUERY for the address, the GIDs and the paths), as it does
 * on a host with an RDMA NIC.  SRNIC_CM_AF_IB=0 refuses the family, and
 * librdmacm goes back to the IP commands.  Runs in the caller's thread
 * (commands) or the CM thread, ucma.lock held.
 */
#include <endian.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/ib.h>
#include <infiniband/sa.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_sa.h>

#include "cm_msg.h"
#include "ucma.h"

static bool af_ib_offered(void)
{
	const char *v = getenv("SRNIC_CM_AF_IB");

	return !v || strcmp(v, "0") != 0;
}

/* The interface the devices' link-local GIDs are the addresses of: the
 * scope a link-local GID is taken in when its sockaddr_ib gives none
 * (a GID, unlike an IPv6 address, names its link by itself). */
static unsigned link_scope(void)
{
	struct ifaddrs *all, *a;
	int d, k;

	ucma_devs_load();
	if (ucma.link_scope || getifaddrs(&all))
		return ucma.link_scope;
	for (a = all; a && !ucma.link_scope; a = a->ifa_next) {
		const struct sockaddr_in6 *in6 = (void *)a->ifa_addr;

		if (!in6 || in6->sin6_family != AF_INET6 ||
		    !IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr))
			continue;
		for (d = 0; d < ucma.ndevs; d++)
			for (k = 0; k < UCMA_GIDS; k++)
				if (!memcmp(ucma.devs[d].gid[k],
					    &in6->sin6_addr, 16))
					ucma.link_scope =
						if_nametoindex(a->ifa_name);
	}
	freeifaddrs(all);
	return ucma.link_scope;
}

/* An id's port space as a service id carries it (bits 16-31). */
#define SID_PS_IB 0x013f	/* (RDMA_PS_IB in a service id: 0x3f | 0x100) */

static uint16_t sid_ps(uint16_t id_ps)
{
	return id_ps == RDMA_PS_IB ? SID_PS_IB : id_ps;
}

/* Whether the service id's port space may be an id's of space id_ps: its
 * own, or any of rdma_cm's IP spaces for an RDMA_PS_IB id, or none (a
 * service id of 0: any port), as the kernel's cma_select_ib_ps takes
 * them. */
static bool space_ok(uint16_t ps, uint16_t id_ps)
{
	if (!ps || ps == sid_ps(id_ps))
		return true;
	return id_ps == RDMA_PS_IB &&
	       (ps == RDMA_PS_TCP || ps == RDMA_PS_UDP || ps == SID_PS_IB);
}

int ucma_ib_to_ip(const struct sockaddr_ib *sib, uint16_t id_ps,
		  struct sockaddr_storage *to, uint16_t *ps)
{
	const struct in6_addr *g = (const struct in6_addr *)&sib->sib_addr;
	uint64_t sid = be64toh(sib->sib_sid) & be64toh(sib->sib_sid_mask);
	uint16_t port = (uint16_t)sid;

	memset(to, 0, sizeof(*to));
	if (!af_ib_offered())
		return EAFNOSUPPORT;
	/* (a service id outside rdma_cm's IP port spaces has no port) */
	if (sid >> 32)
		return EINVAL;
	*ps = (uint16_t)(sid >> 16);
	if (!space_ok(*ps, id_ps))
		return EPROTONOSUPPORT;
	if (IN6_IS_ADDR_V4MAPPED(g)) {
		struct sockaddr_in *in = (struct sockaddr_in *)to;

		in->sin_family = AF_INET;
		memcpy(&in->sin_addr, &g->s6_addr[12], 4);
		in->sin_port = htons(port);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)to;

		in6->sin6_family = AF_INET6;
		in6->sin6_addr = *g;
		in6->sin6_port = htons(port);
		in6->sin6_flowinfo = sib->sib_flowinfo;
		in6->sin6_scope_id = (uint32_t)sib->sib_scope_id;
		if (IN6_IS_ADDR_LINKLOCAL(g) && !in6->sin6_scope_id)
			in6->sin6_scope_id = link_scope();
	}
	return 0;
}

/* The AF_IB address an id's IP address is: its GID, the id's port space
 * and the port in the service id.  (An address not yet known, as a
 * listener's peer: the family alone, as the kernel gives an AF_IB id's.) */
void ucma_ip_to_ib(const struct ucma_id *id, const struct sockaddr_storage *a,
		   struct sockaddr_ib *sib)
{
	const struct sockaddr *sa = (const struct sockaddr *)a;
	uint16_t ps = id->sid_ps ? id->sid_ps : sid_ps(id->ps);

	memset(sib, 0, sizeof(*sib));
	sib->sib_family = AF_IB;
	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
		return;
	sib->sib_pkey = htobe16(0xffff);
	ucma_addr_gid(sa, sib->sib_addr.sib_raw);
	sib->sib_sid = htobe64((uint64_t)ps << 16 | ucma_addr_port(sa));
	sib->sib_sid_mask = htobe64(UINT64_MAX);
	if (sa->sa_family == AF_INET6) {
		sib->sib_flowinfo = ((const struct sockaddr_in6 *)a)->sin6_flowinfo;
		sib->sib_scope_id = ((const struct sockaddr_in6 *)a)->sin6_scope_id;
	}
}

/* rdma_cm's header at the front of a request's private data (the kernel's
 * cma_hdr, rsockets' ib_connect_hdr: the IP addresses and port): an IP
 * id's rdma_cm writes it and keeps it from its program; an AF_IB id's
 * program writes and reads it itself, as IB CM carries the whole field. */
#define CM_IP_HDR_LEN 36

unsigned ucma_pd_skip(const struct ucma_id *id, unsigned type)
{
	return !id->af_ib && (type == CM_REQ || type == CM_SIDR_REQ)
		       ? CM_IP_HDR_LEN
		       : 0;
}

/* Writes an IP id's header (CM_IP_HDR_LEN bytes at p), as the kernel's
 * rdma_cm does: version 0, the IP version in the high nibble, the source
 * port, both addresses (IPv4 in the last 4 bytes of each 16). */
unsigned ucma_pd_header(const struct ucma_id *id, unsigned type, uint8_t *p)
{
	const struct sockaddr *s = (const struct sockaddr *)&id->src;
	uint16_t port = htons(ucma_addr_port(s));

	if (!ucma_pd_skip(id, type))
		return 0;
	memset(p, 0, CM_IP_HDR_LEN);
	p[1] = s->sa_family == AF_INET ? 4 << 4 : 6 << 4;
	memcpy(p + 2, &port, 2);
	if (s->sa_family == AF_INET) {
		memcpy(p + 16, &((const struct sockaddr_in *)&id->src)->sin_addr, 4);
		memcpy(p + 32, &((const struct sockaddr_in *)&id->dst)->sin_addr, 4);
	} else {
		memcpy(p + 4, &((const struct sockaddr_in6 *)&id->src)->sin6_addr, 16);
		memcpy(p + 20, &((const struct sockaddr_in6 *)&id->dst)->sin6_addr, 16);
	}
	return CM_IP_HDR_LEN;
}

/* QUERY's GID option: both GIDs, in sockaddr_ib (librdmacm keeps their
 * sib_addr), whatever the id's family. */
int ucma_query_gid(const struct ucma_id *id, uint64_t response, uint32_t out)
{
	struct rdma_ucm_query_addr_resp resp;

	memset(&resp, 0, sizeof(resp));
	resp.src_size = resp.dst_size = sizeof(struct sockaddr_ib);
	ucma_ip_to_ib(id, &id->src, (struct sockaddr_ib *)&resp.src_addr);
	ucma_ip_to_ib(id, &id->dst, (struct sockaddr_ib *)&resp.dst_addr);
	ucma_query_dev(id, &resp);
	ucma_answer(response, out, &resp, sizeof(resp));
	return 0;
}

/* The path record as an SA sends it (big-endian, packed fields). */
static void pack_path(const struct ib_user_path_rec *p, uint64_t sid,
		      struct ibv_path_record *w)
{
	memset(w, 0, sizeof(*w));
	w->service_id = htobe64(sid);
	memcpy(w->dgid.raw, p->dgid, 16);
	memcpy(w->sgid.raw, p->sgid, 16);
	w->dlid = p->dlid;
	w->slid = p->slid;
	w->flowlabel_hoplimit =
		htobe32(be32toh(p->flow_label) << 8 | p->hop_limit);
	w->tclass = p->traffic_class;
	w->reversible_numpath = (uint8_t)(p->reversible << 7 | p->numb_path);
	w->pkey = p->pkey;
	w->qosclass_sl = htobe16(p->sl & 0xf);
	w->mtu = (uint8_t)(p->mtu_selector << 6 | p->mtu);
	w->rate = (uint8_t)(p->rate_selector << 6 | p->rate);
	w->packetlifetime = (uint8_t)(p->packet_life_time_selector << 6 |
				      p->packet_life_time);
	w->preference = p->preference;
}

/* QUERY's PATH option: the route's one path (none before it is known),
 * its service id the listener's port (the passive side's own). */
int ucma_query_path(const struct ucma_id *id, uint64_t response, uint32_t out)
{
	struct rdma_ucm_query_path_resp hdr = {0};
	struct ib_path_rec_data path = {0};
	uint8_t resp[sizeof(hdr) + sizeof(path)];
	struct ib_user_path_rec rec;
	struct ibv_path_record w;
	struct sockaddr_ib svc;

	if (id->route && id->dev >= 0) {
		ucma_path_rec(id, &rec);
		ucma_ip_to_ib(id, id->passive ? &id->src : &id->dst, &svc);
		pack_path(&rec, be64toh(svc.sib_sid), &w);
		hdr.num_paths = 1;
		path.flags = IB_PATH_GMP | IB_PATH_PRIMARY |
			     IB_PATH_BIDIRECTIONAL;
		memcpy(path.path_rec, &w, sizeof(w));
	}
	memcpy(resp, &hdr, sizeof(hdr));
	memcpy(resp + sizeof(hdr), &path, sizeof(path));
	ucma_answer(response, out, resp, sizeof(resp));
	return 0;
}
