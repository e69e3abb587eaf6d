/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "srnic_config.h"

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

/* The cluster key file: 64 hex digits (32 bytes), an optional newline,
 * and no access for anyone but its owner.  Returns a reason, or NULL. */
static const char *read_key(struct srnic_config *cfg, const char *path)
{
	static char why[300];
	char text[80];
	struct stat st;
	size_t n;
	FILE *f;
	int i;

	f = fopen(path, "r");
	if (!f || fstat(fileno(f), &st)) {
		snprintf(why, sizeof(why), "cluster_key: cannot read %s: %s",
			 path, strerror(errno));
		if (f)
			fclose(f);
		return why;
	}
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	if (st.st_mode & 077) {
		snprintf(why, sizeof(why), "cluster_key: %s may be read by "
			 "others than its owner (chmod 600 it)", path);
		return why;
	}
	text[n] = '\0';
	if (n && text[n - 1] == '\n')
		text[--n] = '\0';
	for (i = 0; n == 64 && i < 32; i++)
		if (sscanf(text + 2 * i, "%2hhx", &cfg->cluster_key[i]) != 1 ||
		    !isxdigit((unsigned char)text[2 * i]) ||
		    !isxdigit((unsigned char)text[2 * i + 1]))
			break;
	if (n != 64 || i != 32) {
		snprintf(why, sizeof(why), "cluster_key: %s must hold 64 hex "
			 "digits (32 bytes), e.g. made by "
			 "'od -An -tx1 -N32 /dev/urandom | tr -d \" \\n\"'",
			 path);
		return why;
	}
	cfg->has_key = 1;
	return NULL;
}

static const char *known[] = {"node", "ipv4", "mac", "netdev", "mtu",
			      "port", "mem_mb", "hugepages", "eal",
			      "idle_sleep_us", "ack_delay_us", "resolve_ms",
			      "stats_file", "fault_file", "capture_file",
			      "weight", "link",
			      "zero_copy", "crc", "state_dir", "cluster_key",
			      "srnicd_socket", "huge_dir", "device",
			      "key_scope", "service", "svc_dead_ms",
			      "svc_grace_ms"};

static bool is_known(const char *key)
{
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(key, known[i]))
			return true;
	return false;
}

/* "device = srnicK P[,P...]": the ports, already declared, that make
 * verbs device srnicK (1 to 3; srnic0 keeps the others). */
static const char *apply_device(struct srnic_config *cfg, const char *val)
{
	static char why[128];
	unsigned k, p, n = 0;
	const char *s;
	char *end;

	if (strncmp(val, "srnic", 5) || val[5] < '1' ||
	    val[5] >= '0' + SRNIC_MAX_DEVICES || val[6] != ' ')
		return "device: srnic1 to srnic3, then its ports (e.g. "
		       "'device = srnic1 1'): srnic0 keeps the rest";
	k = (unsigned)(val[5] - '0');
	for (s = val + 7; *s; s = end) {
		while (*s == ' ' || *s == ',')
			s++;
		if (!*s)
			break;
		p = (unsigned)strtoul(s, &end, 10);
		if (end == s || p >= cfg->nports) {
			snprintf(why, sizeof(why), "device: srnic%u: no port "
				 "'%.8s' (ports are numbered from 0, and go "
				 "before the device lines)", k, s);
			return why;
		}
		if (cfg->port_dev[p]) {
			snprintf(why, sizeof(why), "device: port %u is "
				 "srnic%u's already", p, cfg->port_dev[p]);
			return why;
		}
		cfg->port_dev[p] = (uint8_t)k;
		n++;
	}
	if (!n)
		return "device: which ports? (e.g. 'device = srnic1 1')";
	if (k + 1 > cfg->ndev)
		cfg->ndev = k + 1;
	return NULL;
}

/* "service = NAME IPV4 prio=N [failback=auto|expire] [mode=group|switch]": a
 * service this node is a member of (docs/failover.md). */
static const char *apply_service(struct srnic_config *cfg, const char *val)
{
	static char why[160];
	struct srnic_service_conf *sv;
	char buf[256], *tok, *save = NULL;
	struct in_addr a;
	unsigned i, v;

	if (cfg->nsvc == SRNIC_MAX_SERVICES)
		return "service: at most 4";
	if (copy_str(buf, sizeof(buf), val))
		return "service: too long";
	sv = &cfg->svc[cfg->nsvc];
	memset(sv, 0, sizeof(*sv));
	sv->failback = 1;
	tok = strtok_r(buf, " \t", &save);
	if (!tok || copy_str(sv->name, sizeof(sv->name), tok))
		return "service: NAME IPV4 prio=N [failback=auto|expire], "
		       "the name 1 to 15 characters";
	tok = strtok_r(NULL, " \t", &save);
	if (!tok || inet_pton(AF_INET, tok, &a) != 1)
		return "service: its address (IPV4) after the name";
	sv->ipv4 = ntohl(a.s_addr);
	while ((tok = strtok_r(NULL, " \t", &save)) != NULL) {
		if (!strncmp(tok, "prio=", 5)) {
			if (parse_uint(tok + 5, 1, 255, &v))
				return "service: prio=1 to 255";
			sv->prio = (uint8_t)v;
		} else if (!strcmp(tok, "failback=auto")) {
			sv->failback = 1;
		} else if (!strcmp(tok, "failback=expire")) {
			sv->failback = 0;
		} else if (!strcmp(tok, "mode=group")) {
			sv->mode = SRNIC_SVC_GROUP;
		} else if (!strcmp(tok, "mode=switch")) {
			sv->mode = SRNIC_SVC_SWITCH;
		} else {
			snprintf(why, sizeof(why), "service: unknown setting "
				 "'%.32s' (prio=, failback=, mode=)", tok);
			return why;
		}
	}
	if (!sv->prio)
		return "service: prio=N is required (1 to 255: the live "
		       "member with the highest holds it)";
	for (i = 0; i < cfg->nsvc; i++)
		if (!strcmp(cfg->svc[i].name, sv->name) ||
		    cfg->svc[i].ipv4 == sv->ipv4) {
			snprintf(why, sizeof(why), "service: %s or its address "
				 "is there already", sv->name);
			return why;
		}
	cfg->nsvc++;
	return NULL;
}

/* Every device srnic0 to srnic<ndev - 1> has a port; NULL or why not. */
static const char *devices_whole(const struct srnic_config *cfg)
{
	static char why[96];
	unsigned k, p;

	for (k = 0; k < cfg->ndev; k++) {
		for (p = 0; p < cfg->nports && cfg->port_dev[p] != k; p++)
			;
		if (p == cfg->nports) {
			snprintf(why, sizeof(why), "device: srnic%u has no "
				 "port (devices take ports in order, srnic0 "
				 "the ones left)", k);
			return why;
		}
	}
	return NULL;
}

/* One "key = value" line; returns a reason on error, NULL when fine. */
static const char *apply(struct srnic_config *cfg, const char *key,
			 const char *val)
{
	struct in_addr a;

	if (!strcmp(key, "node"))
		/* (it names the default state directory) */
		return copy_str(cfg->node, sizeof(cfg->node), val) || !*val ||
				       strchr(val, '/') || !strcmp(val, ".") ||
				       !strcmp(val, "..")
			       ? "node: 1 to 15 characters, no '/', not . or .."
			       : NULL;
	if (!strcmp(key, "ipv4")) {
		if (inet_pton(AF_INET, val, &a) != 1)
			return "ipv4: not an IPv4 address";
		cfg->ipv4 = ntohl(a.s_addr);
		return NULL;
	}
	if (!strcmp(key, "mac"))
		return parse_mac(val, cfg->mac) ? "mac: want xx:xx:xx:xx:xx:xx"
						: NULL;
	if (!strcmp(key, "netdev"))
		return copy_str(cfg->netdev, sizeof(cfg->netdev), val)
			       ? "netdev: name too long"
			       : NULL;
	if (!strcmp(key, "mtu")) {
		if (parse_uint(val, 256, 8192, &cfg->mtu) ||
		    (cfg->mtu & (cfg->mtu - 1)))
			return "mtu: a power of two from 256 to 8192";
		return NULL;
	}
	if (!strcmp(key, "port")) {
		if (cfg->nports == SRNIC_MAX_PORTS)
			return "port: too many ports (at most 8)";
		if (copy_str(cfg->port[cfg->nports], sizeof(cfg->port[0]),
			     val) || !*val)
			return "port: empty or too long";
		if (memif_zero_copy(val))
			return "port: memif's zero-copy=yes (either role) is "
			       "refused: DPDK 22.11's memif closes the "
			       "memory's file descriptor on connect, and its "
			       "peer then faults (docs/performance.md)";
		cfg->weight[cfg->nports] = 1;
		cfg->crc[cfg->nports++] = crosses_wire(val);
		return NULL;
	}
	if (!strcmp(key, "crc")) {
		int on;

		if (!cfg->nports)
			return "crc: goes after the port line it is for";
		if (parse_yes_no(val, &on))
			return "crc: yes or no";
		cfg->crc[cfg->nports - 1] = on;
		return NULL;
	}
	if (!strcmp(key, "link")) {
		if (!cfg->nports)
			return "link: goes after the port line it is for";
		if (strncmp(cfg->port[cfg->nports - 1], "net_tap", 7))
			return "link: only a tap port (net_tap) has one";
		if (copy_str(cfg->link[cfg->nports - 1],
			     sizeof(cfg->link[0]), val) || !*val ||
		    strpbrk(val, " \t/"))
			return "link: a kernel interface name (at most 15 "
			       "characters)";
		return NULL;
	}
	if (!strcmp(key, "weight")) {
		unsigned w;

		if (!cfg->nports)
			return "weight: goes after the port line it is for";
		if (parse_uint(val, 1, SRNIC_MAX_WEIGHT, &w))
			return "weight: 1 to 16";
		cfg->weight[cfg->nports - 1] = w;
		return NULL;
	}
	if (!strcmp(key, "device"))
		return apply_device(cfg, val);
	if (!strcmp(key, "service"))
		return apply_service(cfg, val);
	if (!strcmp(key, "svc_grace_ms"))
		return parse_uint(val, 0, 60000, &cfg->svc_grace_ms)
			       ? "svc_grace_ms: 0 to 60000"
			       : NULL;
	if (!strcmp(key, "svc_dead_ms"))
		return parse_uint(val, 20, 10000, &cfg->svc_dead_ms)
			       ? "svc_dead_ms: 20 to 10000"
			       : NULL;
	if (!strcmp(key, "key_scope")) {
		if (strcmp(val, "node") && strcmp(val, "device"))
			return "key_scope: node or device";
		cfg->key_scope_device = !strcmp(val, "device");
		return NULL;
	}
	if (!strcmp(key, "mem_mb"))
		return parse_uint(val, 64, 65536, &cfg->mem_mb)
			       ? "mem_mb: 64 to 65536"
			       : NULL;
	if (!strcmp(key, "hugepages"))
		return parse_yes_no(val, &cfg->hugepages)
			       ? "hugepages: yes or no"
			       : NULL;
	if (!strcmp(key, "zero_copy"))
		return parse_yes_no(val, &cfg->zero_copy)
			       ? "zero_copy: yes or no"
			       : NULL;
	if (!strcmp(key, "eal"))
		return copy_str(cfg->eal_extra, sizeof(cfg->eal_extra), val)
			       ? "eal: too long"
			       : NULL;
	if (!strcmp(key, "idle_sleep_us"))
		return parse_uint(val, 0, 100000, &cfg->idle_sleep_us)
			       ? "idle_sleep_us: 0 to 100000"
			       : NULL;
	if (!strcmp(key, "ack_delay_us"))
		/* (below the RTO's floor, 250 us: the peer would probe) */
		return parse_uint(val, 0, 200, &cfg->ack_delay_us)
			       ? "ack_delay_us: 0 to 200"
			       : NULL;
	if (!strcmp(key, "resolve_ms"))
		return parse_uint(val, 1, 600000, &cfg->resolve_ms)
			       ? "resolve_ms: 1 to 600000"
			       : NULL;
	if (!strcmp(key, "stats_file"))
		return copy_str(cfg->stats_file, sizeof(cfg->stats_file), val)
			       ? "stats_file: path too long"
			       : NULL;
	if (!strcmp(key, "cluster_key"))
		return read_key(cfg, val);
	if (!strcmp(key, "srnicd_socket"))
		return copy_str(cfg->srnicd_socket,
				sizeof(cfg->srnicd_socket), val) ||
				       val[0] != '/'
			       ? "srnicd_socket: an absolute path, under 108 "
				 "characters"
			       : NULL;
	if (!strcmp(key, "huge_dir"))
		return copy_str(cfg->huge_dir, sizeof(cfg->huge_dir), val) ||
				       val[0] != '/'
			       ? "huge_dir: an absolute path, under 128 "
				 "characters"
			       : NULL;
	if (!strcmp(key, "state_dir"))
		return copy_str(cfg->state_dir, sizeof(cfg->state_dir) - 16,
				val) || val[0] != '/'
			       ? "state_dir: an absolute path, under 240 "
				 "characters"
			       : NULL;
	if (!strcmp(key, "fault_file"))
		return copy_str(cfg->fault_file, sizeof(cfg->fault_file), val)
			       ? "fault_file: path too long"
			       : NULL;
	if (!strcmp(key, "capture_file"))
		return copy_str(cfg->capture_file, sizeof(cfg->capture_file),
				val)
			       ? "capture_file: path too long"
			       : NULL;
	return NULL;	/* the caller names the unknown key */
}

int srnic_config_load(struct srnic_config *cfg, char *err, unsigned errlen)
{
	const char *path = getenv("SRNIC_CONF");
	char line[512];
	unsigned lineno = 0, i;
	FILE *f;

	memset(cfg, 0, sizeof(*cfg));
	cfg->mtu = 4096;
	cfg->mem_mb = 256;
	cfg->hugepages = 1;
	cfg->idle_sleep_us = 200;
	cfg->svc_dead_ms = 300;
	cfg->svc_grace_ms = 2000;
	cfg->ack_delay_us = 20;
	cfg->resolve_ms = 5000;
	if (!path || !*path)
		path = DEFAULT_CONF;
	snprintf(cfg->path, sizeof(cfg->path), "%s", path);

	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "srnic: cannot read configuration %s: %s"
			 " (set SRNIC_CONF)", path, strerror(errno));
		return -ENOENT;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s = line, *eq, *hash;
		const char *why;

		lineno++;
		hash = strchr(s, '#');
		if (hash)
			*hash = '\0';
		s = trim(s);
		if (!*s)
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			why = "expected key = value";
		} else {
			*eq = '\0';
			s = trim(s);
			if (!is_known(s)) {
				snprintf(err, errlen,
					 "srnic: %s:%u: unknown key '%s'",
					 path, lineno, s);
				fclose(f);
				return -EINVAL;
			}
			why = apply(cfg, s, trim(eq + 1));
		}
		if (why) {
			snprintf(err, errlen, "srnic: %s:%u: %s", path, lineno,
				 why);
			fclose(f);
			return -EINVAL;
		}
	}
	fclose(f);
	if (!cfg->node[0] || !cfg->ipv4 || !cfg->nports) {
		snprintf(err, errlen,
			 "srnic: %s: node, ipv4 and at least one port are "
			 "required", path);
		return -EINVAL;
	}
	if (!cfg->ndev)
		cfg->ndev = 1;
	for (i = 0; i < cfg->nsvc; i++)
		if (cfg->svc[i].ipv4 == cfg->ipv4) {
			snprintf(err, errlen, "srnic: %s: service %s: its "
				 "address is the node's own", path,
				 cfg->svc[i].name);
			return -EINVAL;
		}
	if (devices_whole(cfg)) {
		snprintf(err, errlen, "srnic: %s: %s", path,
			 devices_whole(cfg));
		return -EINVAL;
	}
	if (!(cfg->mac[0] | cfg->mac[1] | cfg->mac[2] | cfg->mac[3] |
	      cfg->mac[4] | cfg->mac[5])) {
		snprintf(err, errlen, "srnic: %s: mac is required", path);
		return -EINVAL;
	}
	if (!cfg->state_dir[0])
		snprintf(cfg->state_dir, sizeof(cfg->state_dir),
			 "/var/lib/srnic/%s", cfg->node);
	if (!cfg->srnicd_socket[0])
		snprintf(cfg->srnicd_socket, sizeof(cfg->srnicd_socket),
			 "/run/srnic/%s.sock", cfg->node);
	return 0;
}
