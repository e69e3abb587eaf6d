/* SPDX-License-Identifier: MIT */
/*
 * The node's configuration file: "key = value" lines, '#' starting a
 * comment.  Every key is a row of srnic_conf_keys[] (the end of this file):
 * a line is looked up there and parsed by its key's kind, or by the key's
 * own parser, so what a key takes and what a bad value is told both come
 * from its row.  srnic-conf prints a loaded file from the same table, and
 * docs/configuration.md lists it (tests/unit/test_config.c holds them to
 * each other).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "srnic_config.h"
#include "srnic_wire.h"	/* (SRNIC_UDP_PORT) */

#define DEFAULT_CONF "/etc/srnic/srnic.conf"

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4],
		   &v[5]) != 6)
		return -1;
	for (i = 0; i < 6; i++) {
		if (v[i] > 255)
			return -1;
		mac[i] = v[i];
	}
	return 0;
}

static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int copy_str(char *dst, size_t size, const char *src)
{
	if (strlen(src) >= size)
		return -1;
	strcpy(dst, src);
	return 0;
}

static int parse_yes_no(const char *val, int *out)
{
	if (!strcmp(val, "yes"))
		*out = 1;
	else if (!strcmp(val, "no"))
		*out = 0;
	else
		return -1;
	return 0;
}

/* A memif port line asking for memif's own zero-copy mode.  DPDK 22.11's
 * memif client closes the file descriptor of EAL's memory once it has
 * mapped it, though EAL still owns it: the number is reused by the next
 * memfd (the second port's rings), which a later connect then hands its
 * peer as the memory region, and the peer faults on its first packet
 * (3 starts in 30 on the two-port testbed). */
static bool memif_zero_copy(const char *port)
{
	const char *arg = strchr(port, ',');
	bool on = false;

	if (strncmp(port, "net_memif", 9))
		return false;
	/* Each "key=value" after the device name; memif, like every
	 * kvargs user, takes the last of a key given twice, and any value
	 * containing "yes" as yes. */
	while (arg) {
		const char *end = strchr(++arg, ',');
		size_t n = end ? (size_t)(end - arg) : strlen(arg);

		if (n >= 10 && !strncmp(arg, "zero-copy=", 10))
			on = memmem(arg + 10, n - 10, "yes", 3) != NULL;
		arg = end;
	}
	return on;
}

/* Whether a port's frames leave the host's memory: all but memif's and
 * net_ring's, which are copies between processes (or within one). */
static bool crosses_wire(const char *port)
{
	return strncmp(port, "net_memif", 9) && strncmp(port, "net_ring", 8);
}


/* Writes a reason for a bad value to why; returns -1, a parser's failure. */
static int __attribute__((format(printf, 3, 4)))
reject(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* Where a key's value lives in cfg. */
static void *field(struct srnic_config *cfg, const struct srnic_conf_key *k)
{
	return (char *)cfg + k->offset;
}

/* ---- the kinds' parsers ----------------------------------------------- */

static int parse_uint_kind(struct srnic_config *cfg,
			   const struct srnic_conf_key *k, const char *val,
			   char *why, size_t len)
{
	if (parse_uint(val, k->lo, k->hi, field(cfg, k)))
		return reject(why, len, "%u to %u", k->lo, k->hi);
	return 0;
}

static int parse_bool_kind(struct srnic_config *cfg,
			   const struct srnic_conf_key *k, const char *val,
			   char *why, size_t len)
{
	if (parse_yes_no(val, field(cfg, k)))
		return reject(why, len, "yes or no");
	return 0;
}

/* The words of an enum key as a reason: "a, b or c". */
static int reject_enum(const struct srnic_conf_key *k, char *why, size_t len)
{
	size_t n = 0;
	unsigned i;

	why[0] = '\0';
	for (i = 0; k->names[i] && n < len; i++)
		n += snprintf(why + n, len - n, "%s%s",
			      !i ? "" : k->names[i + 1] ? ", " : " or ",
			      k->names[i]);
	return -1;
}

static int parse_enum_kind(struct srnic_config *cfg,
			   const struct srnic_conf_key *k, const char *val,
			   char *why, size_t len)
{
	int i;

	for (i = 0; k->names[i]; i++)
		if (!strcmp(val, k->names[i])) {
			*(int *)field(cfg, k) = i;
			return 0;
		}
	return reject_enum(k, why, len);
}

static int parse_str_kind(struct srnic_config *cfg,
			  const struct srnic_conf_key *k, const char *val,
			  char *why, size_t len)
{
	if (copy_str(field(cfg, k), k->size, val))
		return reject(why, len, "at most %zu characters", k->size - 1);
	return 0;
}

static int parse_path_kind(struct srnic_config *cfg,
			   const struct srnic_conf_key *k, const char *val,
			   char *why, size_t len)
{
	if (val[0] != '/' || copy_str(field(cfg, k), k->size, val))
		return reject(why, len, "an absolute path, under %zu "
			      "characters", k->size);
	return 0;
}

static int parse_ipv4_kind(struct srnic_config *cfg,
			   const struct srnic_conf_key *k, const char *val,
			   char *why, size_t len)
{
	struct in_addr a;

	if (inet_pton(AF_INET, val, &a) != 1)
		return reject(why, len, "not an IPv4 address");
	*(uint32_t *)field(cfg, k) = ntohl(a.s_addr);
	return 0;
}

static int parse_mac_kind(struct srnic_config *cfg,
			  const struct srnic_conf_key *k, const char *val,
			  char *why, size_t len)
{
	if (parse_mac(val, field(cfg, k)))
		return reject(why, len, "want xx:xx:xx:xx:xx:xx");
	return 0;
}

/* The port a line after a port line is for: the last one; -1 before any. */
static int last_port(const struct srnic_config *cfg, char *why, size_t len)
{
	if (!cfg->nports)
		return reject(why, len, "goes after the port line it is for");
	return (int)cfg->nports - 1;
}

static int parse_port_u8_kind(struct srnic_config *cfg,
			      const struct srnic_conf_key *k, const char *val,
			      char *why, size_t len)
{
	int p = last_port(cfg, why, len);
	unsigned v;

	if (p < 0)
		return -1;
	if (parse_uint(val, k->lo, k->hi, &v))
		return reject(why, len, "%u to %u", k->lo, k->hi);
	((uint8_t *)field(cfg, k))[p] = (uint8_t)v;
	return 0;
}

static int parse_port_bool_kind(struct srnic_config *cfg,
				const struct srnic_conf_key *k,
				const char *val, char *why, size_t len)
{
	int p = last_port(cfg, why, len), on;

	if (p < 0)
		return -1;
	if (parse_yes_no(val, &on))
		return reject(why, len, "yes or no");
	((uint8_t *)field(cfg, k))[p] = (uint8_t)on;
	return 0;
}

/* (PORT_STR and SERVICES keys have parsers of their own) */
static srnic_conf_parse_fn *const kind_parser[] = {
	[SRNIC_CONF_UINT] = parse_uint_kind,
	[SRNIC_CONF_BOOL] = parse_bool_kind,
	[SRNIC_CONF_ENUM] = parse_enum_kind,
	[SRNIC_CONF_STR] = parse_str_kind,
	[SRNIC_CONF_PATH] = parse_path_kind,
	[SRNIC_CONF_IPV4] = parse_ipv4_kind,
	[SRNIC_CONF_MAC] = parse_mac_kind,
	[SRNIC_CONF_PORT_U8] = parse_port_u8_kind,
	[SRNIC_CONF_PORT_BOOL] = parse_port_bool_kind,
};

/* ---- keys with parsers of their own ------------------------------------ */

/* (the name makes the default state directory: nothing that climbs out) */
static int parse_node(struct srnic_config *cfg, const struct srnic_conf_key *k,
		      const char *val, char *why, size_t len)
{
	if (!*val || strchr(val, '/') || !strcmp(val, ".") ||
	    !strcmp(val, "..") || copy_str(cfg->node, k->size, val))
		return reject(why, len, "1 to %zu characters, no '/', not . "
			      "or ..", k->size - 1);
	return 0;
}

static int parse_mtu(struct srnic_config *cfg, const struct srnic_conf_key *k,
		     const char *val, char *why, size_t len)
{
	unsigned v;

	if (parse_uint(val, k->lo, k->hi, &v) || (v & (v - 1)))
		return reject(why, len, "a power of two from %u to %u", k->lo,
			      k->hi);
	cfg->mtu = v;
	return 0;
}

/* A port line: the next port, with the defaults of the lines that may
 * follow it (weight 1; a CRC where its frames cross a wire). */
static int parse_port(struct srnic_config *cfg, const struct srnic_conf_key *k,
		      const char *val, char *why, size_t len)
{
	unsigned p = cfg->nports;

	if (p == SRNIC_MAX_PORTS)
		return reject(why, len, "too many ports (at most %d)",
			      SRNIC_MAX_PORTS);
	if (!*val || copy_str(cfg->port[p], k->size, val))
		return reject(why, len, "empty or too long");
	if (memif_zero_copy(val))
		return reject(why, len, "memif's zero-copy=yes (either role) "
			      "is refused: DPDK 22.11's memif closes the "
			      "memory's file descriptor on connect, and its "
			      "peer then faults (docs/performance.md)");
	cfg->weight[p] = 1;
	cfg->crc[p] = crosses_wire(val);
	cfg->nports++;
	return 0;
}

static int parse_link(struct srnic_config *cfg, const struct srnic_conf_key *k,
		      const char *val, char *why, size_t len)
{
	int p = last_port(cfg, why, len);

	if (p < 0)
		return -1;
	if (strncmp(cfg->port[p], "net_tap", 7))
		return reject(why, len, "only a tap port (net_tap) has one");
	if (!*val || strpbrk(val, " \t/") ||
	    copy_str(cfg->link[p], k->size, val))
		return reject(why, len, "a kernel interface name (at most %zu "
			      "characters)", k->size - 1);
	return 0;
}

/* The cluster key file: 64 hex digits (32 bytes), an optional newline, and
 * no access for anyone but its owner. */
static int parse_cluster_key(struct srnic_config *cfg,
			     const struct srnic_conf_key *k, const char *path,
			     char *why, size_t len)
{
	char text[80];
	struct stat st;
	size_t n;
	FILE *f;
	int i;

	f = fopen(path, "r");
	if (!f || fstat(fileno(f), &st)) {
		reject(why, len, "cannot read %s: %s", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	if (st.st_mode & 077)
		return reject(why, len, "%s may be read by others than its "
			      "owner (chmod 600 it)", path);
	text[n] = '\0';
	if (n && text[n - 1] == '\n')
		text[--n] = '\0';
	for (i = 0; n == 64 && i < 32; i++)
		if (!isxdigit((unsigned char)text[2 * i]) ||
		    !isxdigit((unsigned char)text[2 * i + 1]) ||
		    sscanf(text + 2 * i, "%2hhx", &cfg->cluster_key[i]) != 1)
			break;
	if (n != 64 || i != 32)
		return reject(why, len, "%s must hold 64 hex digits (32 "
			      "bytes), e.g. made by 'od -An -tx1 -N32 "
			      "/dev/urandom | tr -d \" \\n\"'", path);
	cfg->has_key = 1;
	return 0;
}

/* "device = srnicK P[,P...]": the ports, already declared, that make verbs
 * device srnicK (1 to 3; srnic0 keeps the others). */
static int parse_device(struct srnic_config *cfg,
			const struct srnic_conf_key *k, const char *val,
			char *why, size_t len)
{
	unsigned d, p, n = 0;
	const char *s;
	char *end;

	if (strncmp(val, "srnic", 5) || val[5] < '1' ||
	    val[5] >= '0' + SRNIC_MAX_DEVICES || val[6] != ' ')
		return reject(why, len, "srnic1 to srnic%d, then its ports "
			      "(e.g. 'device = srnic1 1'): srnic0 keeps the "
			      "rest", SRNIC_MAX_DEVICES - 1);
	d = (unsigned)(val[5] - '0');
	for (s = val + 7; *s; s = end) {
		s += strspn(s, " ,");
		if (!*s)
			break;
		p = (unsigned)strtoul(s, &end, 10);
		if (end == s || p >= cfg->nports)
			return reject(why, len, "srnic%u: no port '%.8s' "
				      "(ports are numbered from 0, and go "
				      "before the device lines)", d, s);
		if (cfg->port_dev[p])
			return reject(why, len, "port %u is srnic%u's already",
				      p, cfg->port_dev[p]);
		cfg->port_dev[p] = (uint8_t)d;
		n++;
	}
	if (!n)
		return reject(why, len, "which ports? (e.g. 'device = srnic1 "
			      "1')");
	if (d + 1 > cfg->ndev)
		cfg->ndev = d + 1;
	return 0;
}

/* One "prio=N", "failback=..." or "mode=..." of a service line. */
static int service_setting(struct srnic_service_conf *sv, const char *tok,
			   char *why, size_t len)
{
	unsigned v;

	if (!strncmp(tok, "prio=", 5)) {
		if (parse_uint(tok + 5, 1, 255, &v))
			return reject(why, len, "prio=1 to 255");
		sv->prio = (uint8_t)v;
	} else if (!strcmp(tok, "failback=auto")) {
		sv->failback = SRNIC_FAILBACK_AUTO;
	} else if (!strcmp(tok, "failback=expire")) {
		sv->failback = SRNIC_FAILBACK_EXPIRE;
	} else if (!strcmp(tok, "failback=manual")) {
		sv->failback = SRNIC_FAILBACK_MANUAL;
	} else if (!strcmp(tok, "mode=group")) {
		sv->mode = SRNIC_SVC_GROUP;
	} else if (!strcmp(tok, "mode=switch")) {
		sv->mode = SRNIC_SVC_SWITCH;
	} else {
		return reject(why, len, "unknown setting '%.32s' (prio=, "
			      "failback=, mode=)", tok);
	}
	return 0;
}

/* "service = NAME IPV4 prio=N [failback=auto|expire|manual]
 * [mode=group|switch]":
 * a service this node is a member of (docs/failover.md). */
static int parse_service(struct srnic_config *cfg,
			 const struct srnic_conf_key *k, const char *val,
			 char *why, size_t len)
{
	struct srnic_service_conf *sv = &cfg->svc[cfg->nsvc];
	char buf[256], *tok, *save = NULL;
	struct in_addr a;
	unsigned i;

	if (cfg->nsvc == SRNIC_MAX_SERVICES)
		return reject(why, len, "at most %d", SRNIC_MAX_SERVICES);
	if (copy_str(buf, sizeof(buf), val))
		return reject(why, len, "too long");
	memset(sv, 0, sizeof(*sv));
	sv->failback = SRNIC_FAILBACK_AUTO;
	tok = strtok_r(buf, " \t", &save);
	if (!tok || copy_str(sv->name, sizeof(sv->name), tok))
		return reject(why, len, "NAME IPV4 prio=N [failback=auto|"
			      "expire|manual], the name 1 to %zu characters",
			      sizeof(sv->name) - 1);
	tok = strtok_r(NULL, " \t", &save);
	if (!tok || inet_pton(AF_INET, tok, &a) != 1)
		return reject(why, len, "its address (IPV4) after the name");
	sv->ipv4 = ntohl(a.s_addr);
	while ((tok = strtok_r(NULL, " \t", &save)) != NULL)
		if (service_setting(sv, tok, why, len))
			return -1;
	if (!sv->prio)
		return reject(why, len, "prio=N is required (1 to 255: the "
			      "live member with the highest holds it)");
	for (i = 0; i < cfg->nsvc; i++)
		if (!strcmp(cfg->svc[i].name, sv->name) ||
		    cfg->svc[i].ipv4 == sv->ipv4)
			return reject(why, len, "%s or its address is there "
				      "already", sv->name);
	cfg->nsvc++;
	return 0;
}

/* "ADDR/LEN" of family af (AF_INET, AF_INET6), or without /LEN when bare
 * may (then the address's whole length): the address in ip, as
 * inet_pton gives it; 0, or -1. */
static int parse_prefix_af(int af, const char *val, bool bare, void *ip,
			   uint8_t *plen)
{
	unsigned n = af == AF_INET ? 32 : 128;
	char buf[64], *slash;

	if (copy_str(buf, sizeof(buf), val))
		return -1;
	slash = strchr(buf, '/');
	if (slash) {
		*slash = '\0';
		if (parse_uint(slash + 1, 0, n, &n))
			return -1;
	} else if (!bare) {
		return -1;
	}
	if (inet_pton(af, buf, ip) != 1)
		return -1;
	*plen = (uint8_t)n;
	return 0;
}

/* "A.B.C.D/LEN" (or without /LEN when bare may: then LEN 32): 0, or -1. */
static int parse_prefix(const char *val, bool bare, uint32_t *ip,
			uint8_t *plen)
{
	struct in_addr a;

	if (parse_prefix_af(AF_INET, val, bare, &a, plen))
		return -1;
	*ip = ntohl(a.s_addr);
	return 0;
}

/* The same of IPv6 (then LEN 128). */
static int parse_prefix6(const char *val, bool bare, uint8_t ip[16],
			 uint8_t *plen)
{
	return parse_prefix_af(AF_INET6, val, bare, ip, plen);
}

/* Whether an IPv6 address could be a host's: not unspecified, loopback,
 * multicast or IPv4-mapped (what srnic_wire_udp6_unwrap refuses as a
 * source). */
static bool host_ip6(const uint8_t a[16])
{
	static const uint8_t zero[16], mapped[12] = {[10] = 0xff, [11] = 0xff};
	static const uint8_t loop[16] = {[15] = 1};

	return memcmp(a, zero, 16) && memcmp(a, loop, 16) && a[0] != 0xff &&
	       memcmp(a, mapped, 12);
}

/* "ipv6 = ADDR[/LEN]": an IPv6 node's address and its subnet's length;
 * its id, what names it inside srnic, comes of the address. */
static int parse_node_ipv6(struct srnic_config *cfg,
			   const struct srnic_conf_key *k, const char *val,
			   char *why, size_t len)
{
	uint8_t plen;

	if (cfg->ipv4 && !cfg->has_ipv6)
		return reject(why, len, "a node has one address: ipv4 or "
			      "ipv6");
	if (parse_prefix6(val, true, cfg->ipv6, &plen) || plen == 0 ||
	    !host_ip6(cfg->ipv6))
		return reject(why, len, "a host's IPv6 address, with /LEN (1 "
			      "to 128) where the node's subnet is not the "
			      "whole segment");
	/* (GID 0 is the node's link-local address already, of its MAC;
	 * and a link-local one is no router's to forward) */
	if (cfg->ipv6[0] == 0xfe && (cfg->ipv6[1] & 0xc0) == 0x80)
		return reject(why, len, "not a link-local address (fe80::/10)");
	cfg->ipv6_len = strchr(val, '/') ? plen : 0;
	cfg->has_ipv6 = 1;
	cfg->ipv4 = srnic_wire_ip6_id(cfg->ipv6);
	return 0;
}

/* "ipv4 = A.B.C.D[/LEN]": the node's address, and its subnet's length. */
static int parse_node_ipv4(struct srnic_config *cfg,
			   const struct srnic_conf_key *k, const char *val,
			   char *why, size_t len)
{
	uint8_t plen;

	if (cfg->has_ipv6)
		return reject(why, len, "a node has one address: ipv4 or "
			      "ipv6");
	if (parse_prefix(val, true, &cfg->ipv4, &plen) || plen == 0)
		return reject(why, len, "an IPv4 address, with /LEN (1 to 32) "
			      "where the node's subnet is not the whole "
			      "segment");
	cfg->ipv4_len = strchr(val, '/') ? plen : 0;
	return 0;
}

/* Whether route r's destination is there already (a route of the same
 * prefix, length and port). */
static bool route_there(const struct srnic_config *cfg,
			const struct srnic_route_conf *r)
{
	unsigned i;

	for (i = 0; i < cfg->nroutes; i++)
		if (cfg->route[i].v6 == r->v6 && cfg->route[i].len == r->len &&
		    cfg->route[i].port == r->port &&
		    (r->v6 ? !memcmp(cfg->route[i].prefix6, r->prefix6, 16)
			   : cfg->route[i].prefix == r->prefix))
			return true;
	return false;
}

/* An IPv6 node's route, split in tokens by parse_route ("default" for
 * ::/0). */
static int parse_route6(struct srnic_config *cfg, char **tok, unsigned n,
			char *why, size_t len)
{
	struct srnic_route_conf *r = &cfg->route[cfg->nroutes];
	unsigned p, i;

	r->v6 = 1;
	if ((n != 3 && n != 5) || strcmp(tok[1], "via") ||
	    (strcmp(tok[0], "default") &&
	     parse_prefix6(tok[0], false, r->prefix6, &r->len)) ||
	    inet_pton(AF_INET6, tok[2], r->gw6) != 1 ||
	    (n == 5 && (strcmp(tok[3], "port") ||
			parse_uint(tok[4], 0, SRNIC_MAX_PORTS - 1, &p))))
		return reject(why, len, "PREFIX/LEN via GATEWAY [port P] "
			      "(PREFIX/LEN: an IPv6 prefix, /0-128, or "
			      "default)");
	if (n == 5)
		r->port = (int8_t)p;
	/* (bit i of the address is bit 7 - i % 8 of byte i / 8) */
	for (i = r->len; i < 128; i++)
		if (r->prefix6[i / 8] >> (7 - i % 8) & 1)
			return reject(why, len, "%s has bits past its length",
				      tok[0]);
	if (!host_ip6(r->gw6))
		return reject(why, len, "a gateway is a host's address");
	r->gw = srnic_wire_ip6_id(r->gw6);
	if (route_there(cfg, r))
		return reject(why, len, "a route to %s is there already",
			      tok[0]);
	cfg->nroutes++;
	return 0;
}

/* "route = PREFIX/LEN via GW [port P]" ("default" for 0.0.0.0/0). */
static int parse_route(struct srnic_config *cfg,
		       const struct srnic_conf_key *k, const char *val,
		       char *why, size_t len)
{
	struct srnic_route_conf *r = &cfg->route[cfg->nroutes];
	char buf[128], *tok[6], *t, *save = NULL;
	unsigned n = 0, p;
	struct in_addr a;

	if (cfg->nroutes == SRNIC_MAX_ROUTES)
		return reject(why, len, "at most %d", SRNIC_MAX_ROUTES);
	if (copy_str(buf, sizeof(buf), val))
		return reject(why, len, "too long");
	for (t = strtok_r(buf, " \t", &save); t && n < 6;
	     t = strtok_r(NULL, " \t", &save))
		tok[n++] = t;
	memset(r, 0, sizeof(*r));
	r->port = -1;
	if (n >= 3 && strchr(tok[2], ':'))
		return parse_route6(cfg, tok, n, why, len);
	if ((n != 3 && n != 5) || strcmp(tok[1], "via") ||
	    (strcmp(tok[0], "default") &&
	     parse_prefix(tok[0], false, &r->prefix, &r->len)) ||
	    inet_pton(AF_INET, tok[2], &a) != 1 ||
	    (n == 5 && (strcmp(tok[3], "port") ||
			parse_uint(tok[4], 0, SRNIC_MAX_PORTS - 1, &p))))
		return reject(why, len, "PREFIX/LEN via GATEWAY [port P] "
			      "(PREFIX/LEN: A.B.C.D/0-32 or default)");
	r->gw = ntohl(a.s_addr);
	if (n == 5)
		r->port = (int8_t)p;
	if (r->prefix & ~srnic_prefix_mask(r->len))
		return reject(why, len, "%s has bits past its length", tok[0]);
	if (!r->gw || r->gw == SRNIC_IPV4_BROADCAST || r->gw >> 28 == 0xe)
		return reject(why, len, "a gateway is a host's address");
	if (route_there(cfg, r))
		return reject(why, len, "a route to %s is there already",
			      tok[0]);
	cfg->nroutes++;
	return 0;
}

/* "peer = IPV4": a node beyond a router, sent HELLOs of its own. */
static int parse_peer(struct srnic_config *cfg, const struct srnic_conf_key *k,
		      const char *val, char *why, size_t len)
{
	struct in_addr a;
	uint32_t ip;

	if (cfg->npeers == SRNIC_MAX_CONF_PEERS)
		return reject(why, len, "at most %d", SRNIC_MAX_CONF_PEERS);
	if (strchr(val, ':')) {
		uint8_t *a6 = cfg->peer6[cfg->npeers];

		if (inet_pton(AF_INET6, val, a6) != 1 || !host_ip6(a6))
			return reject(why, len, "not a host's IPv6 address");
		ip = srnic_wire_ip6_id(a6);
	} else {
		if (inet_pton(AF_INET, val, &a) != 1)
			return reject(why, len, "not an IPv4 address");
		ip = ntohl(a.s_addr);
		if (!ip || ip == SRNIC_IPV4_BROADCAST || ip >> 28 == 0xe)
			return reject(why, len, "a peer is a host's "
				      "address");
	}
	if (srnic_config_has_peer(cfg, ip))
		return reject(why, len, "%s is there already", val);
	cfg->peer[cfg->npeers++] = ip;
	return 0;
}

/* ---- the table ------------------------------------------------------- */

#define AT(f) offsetof(struct srnic_config, f)
#define SIZE(f) sizeof(((struct srnic_config *)0)->f)

static const char *const key_scopes[] = {"node", "device", NULL};
static const char *const encaps[] = {"eth", "udp", NULL};

const struct srnic_conf_key srnic_conf_keys[] = {
	/* who the node is */
	{ .name = "node", .kind = SRNIC_CONF_STR, .offset = AT(node),
	  .size = SIZE(node), .parse = parse_node,
	  .doc = "the node's name (it names the default state directory "
		 "and srnicd socket)" },
	{ .name = "ipv4", .kind = SRNIC_CONF_IPV4, .offset = AT(ipv4),
	  .parse = parse_node_ipv4,
	  .doc = "the node's address: GID 1 is ::ffff:IPV4 (RoCE v2); /LEN: "
		 "its subnet (encap = udp: beyond it, the routes)" },
	{ .name = "ipv6", .kind = SRNIC_CONF_IPV6, .offset = AT(ipv6),
	  .parse = parse_node_ipv6,
	  .doc = "an IPv6 node's address, in place of ipv4: GID 1 is IPV6, "
		 "and encap = udp frames travel in IPv6; /LEN: its subnet" },
	{ .name = "mac", .kind = SRNIC_CONF_MAC, .offset = AT(mac),
	  .doc = "the node's MAC: its node GUID and GID 0 (fe80::EUI-64)" },
	{ .name = "netdev", .kind = SRNIC_CONF_STR, .offset = AT(netdev),
	  .size = SIZE(netdev),
	  .doc = "the kernel interface the GIDs name (none: lo)" },
	{ .name = "mtu", .kind = SRNIC_CONF_UINT, .offset = AT(mtu),
	  .lo = 256, .hi = 8192, .def = 4096, .parse = parse_mtu,
	  .doc = "bytes of payload a packet carries at most" },
	{ .name = "encap", .kind = SRNIC_CONF_ENUM, .offset = AT(encap_udp),
	  .names = encaps,
	  .doc = "udp: frames travel in IPv4 and UDP (to udp_port, from the "
		 "node's ipv4; every node of the network alike); eth: raw "
		 "Ethernet, EtherType 0x88B5 (none: eth)" },
	{ .name = "udp_port", .kind = SRNIC_CONF_UINT, .offset = AT(udp_port),
	  .lo = 1024, .hi = 65535, .def = SRNIC_UDP_PORT,
	  .doc = "the UDP port srnic's frames go to with encap = udp" },
	{ .name = "route", .kind = SRNIC_CONF_ROUTES, .offset = AT(route),
	  .parse = parse_route,
	  .doc = "PREFIX/LEN via GATEWAY [port P]: encap = udp frames to an "
		 "address there go to the gateway (one line a route)" },
	{ .name = "peer", .kind = SRNIC_CONF_PEERS, .offset = AT(peer),
	  .parse = parse_peer,
	  .doc = "a node beyond a router, sent HELLOs of its own (encap = "
		 "udp; one line a peer)" },
	/* the ports, each with the lines after it */
	{ .name = "port", .kind = SRNIC_CONF_PORT_STR, .offset = AT(port),
	  .size = SIZE(port[0]), .parse = parse_port,
	  .doc = "a port: DPDK vdev arguments as for --vdev, one line a "
		 "port, in order" },
	{ .name = "weight", .kind = SRNIC_CONF_PORT_U8, .offset = AT(weight),
	  .lo = 1, .hi = SRNIC_MAX_WEIGHT,
	  .doc = "the port's packets in each round of striping (none: 1)" },
	{ .name = "crc", .kind = SRNIC_CONF_PORT_BOOL, .offset = AT(crc),
	  .doc = "the port's frames end in a CRC-32C (none: yes, but no for "
		 "memif and net_ring)" },
	{ .name = "link", .kind = SRNIC_CONF_PORT_STR, .offset = AT(link),
	  .size = SIZE(link[0]), .parse = parse_link,
	  .doc = "a tap port's cable: the kernel interface whose bridge it "
		 "joins and whose carrier it follows" },
	{ .name = "device", .kind = SRNIC_CONF_PORT_U8,
	  .offset = AT(port_dev), .parse = parse_device,
	  .doc = "srnicK P[,P...]: the ports that make verbs device srnicK "
		 "(1 to 3; srnic0 keeps the rest)" },
	{ .name = "key_scope", .kind = SRNIC_CONF_ENUM,
	  .offset = AT(key_scope_device), .names = key_scopes,
	  .doc = "device: a key is looked up by the device its packet came "
		 "in on (key migration)" },
	{ .name = "key_idle_ms", .kind = SRNIC_CONF_UINT,
	  .offset = AT(key_idle_ms), .lo = 100, .hi = 86400000, .def = 10000,
	  .doc = "how long an adapter keeps another's key it imported (or a "
		 "refusal) with no request for it" },
	/* services (docs/failover.md) */
	{ .name = "service", .kind = SRNIC_CONF_SERVICES, .offset = AT(svc),
	  .parse = parse_service,
	  .doc = "NAME IPV4 prio=N [failback=auto|expire|manual] "
		 "[mode=group|switch]: a service the node is a member of" },
	{ .name = "svc_dead_ms", .kind = SRNIC_CONF_UINT,
	  .offset = AT(svc_dead_ms), .lo = 20, .hi = 10000, .def = 300,
	  .doc = "how long a holder may be silent before the best live "
		 "member takes its service" },
	{ .name = "svc_grace_ms", .kind = SRNIC_CONF_UINT,
	  .offset = AT(svc_grace_ms), .lo = 0, .hi = 60000, .def = 2000,
	  .doc = "how long a client's QP of a service retries for free "
		 "while no holder is heard" },
	/* DPDK */
	{ .name = "mem_mb", .kind = SRNIC_CONF_UINT, .offset = AT(mem_mb),
	  .lo = 64, .hi = 65536, .def = 256,
	  .doc = "MiB of memory EAL takes" },
	{ .name = "hugepages", .kind = SRNIC_CONF_BOOL,
	  .offset = AT(hugepages), .def = 1,
	  .doc = "no: EAL runs on ordinary pages (--no-huge)" },
	{ .name = "eal", .kind = SRNIC_CONF_STR, .offset = AT(eal_extra),
	  .size = SIZE(eal_extra),
	  .doc = "more EAL arguments, space separated" },
	/* the datapath */
	{ .name = "queues", .kind = SRNIC_CONF_UINT, .offset = AT(queues),
	  .lo = 1, .hi = SRNIC_MAX_CLASSES, .def = SRNIC_MAX_CLASSES,
	  .doc = "steering classes, where the wire steers: with N, each "
		 "memif link carries N*N queue pairs (both ends of a link "
		 "alike) and each tap port N, its kernel steering each frame "
		 "to its class's queue, and the first N-1 attached "
		 "processes each send and receive on queues of their own, "
		 "without the port token (1: every frame through the port "
		 "token, as on af_packet ports)" },
	{ .name = "idle_sleep_us", .kind = SRNIC_CONF_UINT,
	  .offset = AT(idle_sleep_us), .lo = 0, .hi = 100000, .def = 200,
	  .doc = "longest nap of an idle datapath core (0: it never "
		 "sleeps)" },
	{ .name = "event_spin_us", .kind = SRNIC_CONF_UINT,
	  .offset = AT(event_spin_us), .lo = 0, .hi = 10000, .def = 100,
	  .doc = "how long a thread that waits for a completion event "
		 "runs the datapath itself before it sleeps (0: it sleeps "
		 "at once)" },
	{ .name = "cq_early_us", .kind = SRNIC_CONF_UINT,
	  .offset = AT(cq_early_us), .lo = 0, .hi = 10000, .def = 0,
	  .doc = "every CQ with a completion channel has its events early, "
		 "as an RC message that will complete into it begins; until "
		 "its completion is polled, any poll that finds nothing "
		 "waits for it, running the datapath this long (not while "
		 "the CQ is armed) before it yields between looks (a second "
		 "at most: a program that polls without blocking, as "
		 "rsockets and UCX do, waits too; srnic_cq_set_early; 0: "
		 "events when messages complete)" },
	/* (at most 200: below the RTO's floor, 250 us, or the peer probes) */
	{ .name = "ack_delay_us", .kind = SRNIC_CONF_UINT,
	  .offset = AT(ack_delay_us), .lo = 0, .hi = 200, .def = 20,
	  .doc = "how long a plain ACK may wait for a packet to ride with "
		 "(0: never)" },
	{ .name = "zero_copy", .kind = SRNIC_CONF_BOOL,
	  .offset = AT(zero_copy), .def = 0,
	  .doc = "RC payload leaves from registered memory where the port "
		 "allows it" },
	{ .name = "robust_placement", .kind = SRNIC_CONF_BOOL,
	  .offset = AT(robust_placement), .def = 1,
	  .doc = "a request into memory its program unmapped without "
		 "deregistering fails and fences the key, instead of "
		 "killing the process" },
	{ .name = "resolve_ms", .kind = SRNIC_CONF_UINT,
	  .offset = AT(resolve_ms), .lo = 1, .hi = 600000, .def = 5000,
	  .doc = "how long modify_qp(RTR) waits to find the peer's GID" },
	/* files the node shares with ./srnic and srnicd */
	{ .name = "stats_file", .kind = SRNIC_CONF_STR,
	  .offset = AT(stats_file), .size = SIZE(stats_file),
	  .doc = "where the engine writes its counters (none: nowhere)" },
	{ .name = "fault_file", .kind = SRNIC_CONF_STR,
	  .offset = AT(fault_file), .size = SIZE(fault_file),
	  .doc = "delay and reordering to inject on receive, re-read when "
		 "it changes (none: no faults)" },
	{ .name = "capture_file", .kind = SRNIC_CONF_STR,
	  .offset = AT(capture_file), .size = SIZE(capture_file),
	  .doc = "where ./srnic capture leaves its requests (none: no "
		 "capture of memif ports)" },
	/* (16 bytes kept for the names of the files in it) */
	{ .name = "state_dir", .kind = SRNIC_CONF_PATH,
	  .offset = AT(state_dir), .size = SIZE(state_dir) - 16,
	  .doc = "what the node keeps across starts, its boot count (none: "
		 "/var/lib/srnic/NODE)" },
	{ .name = "srnicd_socket", .kind = SRNIC_CONF_PATH,
	  .offset = AT(srnicd_socket), .size = SIZE(srnicd_socket),
	  .doc = "where srnicd serves the node (none: /run/srnic/NODE.sock)" },
	{ .name = "huge_dir", .kind = SRNIC_CONF_PATH, .offset = AT(huge_dir),
	  .size = SIZE(huge_dir),
	  .doc = "srnicd: the hugetlbfs its memory files go to (none: the "
		 "first mounted)" },
	{ .name = "cluster_key", .kind = SRNIC_CONF_BOOL,
	  .offset = AT(has_key), .parse = parse_cluster_key,
	  .doc = "a file of 64 hex digits, mode 600: control frames and "
		 "service resyncs carry its MAC, and those without are "
		 "dropped; a process attaches to srnicd only with the same" },
};

const unsigned srnic_conf_nkeys =
	sizeof(srnic_conf_keys) / sizeof(srnic_conf_keys[0]);

const struct srnic_conf_key *srnic_config_key(const char *name)
{
	unsigned i;

	for (i = 0; i < srnic_conf_nkeys; i++)
		if (!strcmp(srnic_conf_keys[i].name, name))
			return &srnic_conf_keys[i];
	return NULL;
}

/* ---- loading a file -------------------------------------------------- */

static void set_defaults(struct srnic_config *cfg)
{
	const struct srnic_conf_key *k;

	memset(cfg, 0, sizeof(*cfg));
	for (k = srnic_conf_keys; k < srnic_conf_keys + srnic_conf_nkeys; k++)
		if (k->kind == SRNIC_CONF_UINT)
			*(unsigned *)field(cfg, k) = k->def;
		else if (k->kind == SRNIC_CONF_BOOL ||
			 k->kind == SRNIC_CONF_ENUM)
			*(int *)field(cfg, k) = (int)k->def;
}

/* One "key = value" line, its comment and blanks gone. */
static int apply_line(struct srnic_config *cfg, char *s, char *why,
		      size_t len)
{
	const struct srnic_conf_key *k;
	char *eq = strchr(s, '='), reason[400];

	if (!eq)
		return reject(why, len, "expected key = value");
	*eq = '\0';
	s = trim(s);
	k = srnic_config_key(s);
	if (!k)
		return reject(why, len, "unknown key '%s'", s);
	if ((k->parse ? k->parse : kind_parser[k->kind])(cfg, k, trim(eq + 1),
							  reason,
							  sizeof(reason)))
		return reject(why, len, "%s: %s", k->name, reason);
	return 0;
}

static int read_lines(struct srnic_config *cfg, FILE *f, char *err,
		      unsigned errlen)
{
	char line[512], why[480], *s;
	unsigned lineno = 0;

	while (fgets(line, sizeof(line), f)) {
		lineno++;
		s = strchr(line, '#');
		if (s)
			*s = '\0';
		s = trim(line);
		if (*s && apply_line(cfg, s, why, sizeof(why))) {
			snprintf(err, errlen, "srnic: %s:%u: %s", cfg->path,
				 lineno, why);
			return -EINVAL;
		}
	}
	return 0;
}

/* Every device srnic0 to srnic<ndev - 1> has a port. */
static int devices_whole(const struct srnic_config *cfg, char *why,
			 size_t len)
{
	unsigned d, p;

	for (d = 0; d < cfg->ndev; d++) {
		for (p = 0; p < cfg->nports && cfg->port_dev[p] != d; p++)
			;
		if (p == cfg->nports)
			return reject(why, len, "device: srnic%u has no port "
				      "(devices take ports in order, srnic0 "
				      "the ones left)", d);
	}
	return 0;
}

/* What no one line can be held to: the keys every node needs, and keys
 * that must agree with each other. */
static int check_whole(const struct srnic_config *cfg, char *why, size_t len)
{
	unsigned i;

	if (!cfg->node[0] || !cfg->ipv4 || !cfg->nports)
		return reject(why, len, "node, ipv4 (or ipv6) and at least "
			      "one port are required");
	for (i = 0; i < cfg->nroutes; i++)
		if (cfg->route[i].v6 != !!cfg->has_ipv6)
			return reject(why, len, "route: an IPv%d node's "
				      "routes are IPv%d", cfg->has_ipv6 ? 6 : 4,
				      cfg->has_ipv6 ? 6 : 4);
	for (i = 0; i < cfg->npeers; i++)
		if (!!host_ip6(cfg->peer6[i]) != !!cfg->has_ipv6)
			return reject(why, len, "peer: an IPv%d node's peers "
				      "are IPv%d", cfg->has_ipv6 ? 6 : 4,
				      cfg->has_ipv6 ? 6 : 4);
	if (cfg->has_ipv6 && !cfg->encap_udp)
		return reject(why, len, "ipv6: a node's IPv6 address is for "
			      "encap = udp (raw Ethernet's nodes are IPv4's "
			      "yet)");
	if (cfg->has_ipv6 && cfg->nsvc)
		return reject(why, len, "service: an IPv6 node has none yet "
			      "(a service's address is IPv4)");
	for (i = 0; i < cfg->nsvc; i++)
		if (cfg->svc[i].ipv4 == cfg->ipv4)
			return reject(why, len, "service %s: its address is "
				      "the node's own", cfg->svc[i].name);
	for (i = 0; i < cfg->nroutes; i++)
		if (cfg->route[i].port >= (int)cfg->nports)
			return reject(why, len, "route: the node has no port "
				      "%d", cfg->route[i].port);
	for (i = 0; i < cfg->npeers; i++)
		if (cfg->peer[i] == cfg->ipv4)
			return reject(why, len, "peer: the node's own address");
	for (i = 0; i < cfg->nroutes; i++)
		if (cfg->route[i].gw == cfg->ipv4)
			return reject(why, len, "route: the gateway is the "
				      "node's own address");
	if ((cfg->nroutes || cfg->npeers) && !cfg->encap_udp)
		return reject(why, len, "route and peer lines are for encap = "
			      "udp (raw Ethernet does not leave its segment)");
	if (devices_whole(cfg, why, len))
		return -1;
	if (!(cfg->mac[0] | cfg->mac[1] | cfg->mac[2] | cfg->mac[3] |
	      cfg->mac[4] | cfg->mac[5]))
		return reject(why, len, "mac is required");
	return 0;
}

int srnic_config_load_file(struct srnic_config *cfg, const char *path,
			   char *err, unsigned errlen)
{
	char why[200];
	FILE *f;
	int rc;

	set_defaults(cfg);
	snprintf(cfg->path, sizeof(cfg->path), "%s", path);
	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "srnic: cannot read configuration %s: "
			 "%s", path, strerror(errno));
		return -ENOENT;
	}
	rc = read_lines(cfg, f, err, errlen);
	fclose(f);
	if (rc)
		return rc;
	if (!cfg->ndev)
		cfg->ndev = 1;
	if (check_whole(cfg, why, sizeof(why))) {
		snprintf(err, errlen, "srnic: %s: %s", path, why);
		return -EINVAL;
	}
	/* (defaults that follow from the node's name) */
	if (!cfg->state_dir[0])
		snprintf(cfg->state_dir, sizeof(cfg->state_dir),
			 "/var/lib/srnic/%s", cfg->node);
	if (!cfg->srnicd_socket[0])
		snprintf(cfg->srnicd_socket, sizeof(cfg->srnicd_socket),
			 "/run/srnic/%s.sock", cfg->node);
	return 0;
}

int srnic_config_load(struct srnic_config *cfg, char *err, unsigned errlen)
{
	const char *path = getenv("SRNIC_CONF");
	size_t n;
	int rc;

	if (!path || !*path)
		path = DEFAULT_CONF;
	rc = srnic_config_load_file(cfg, path, err, errlen);
	if (rc == -ENOENT) {
		n = strlen(err);
		snprintf(err + n, errlen - n, " (set SRNIC_CONF)");
	}
	return rc;
}
