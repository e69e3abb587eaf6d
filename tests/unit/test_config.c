/* SPDX-License-Identifier: MIT */
/*
 * The configuration key table (src/engine/config.c): every key of it is in
 * docs/configuration.md and every key the doc lists is in it; every key can
 * be parsed; a good file loads with the table's defaults; a bad value is
 * told as "FILE:LINE: key: what it takes", as e2e/21-bad-config expects.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "check.h"
#include "srnic_config.h"
#include "srnic_wire.h"

static char path[64];

static const char good[] =
	"# a comment\n"
	"node = a\n"
	"ipv4 = 10.55.0.1   # trailing comment\n"
	"mac = 02:53:4e:00:00:01\n"
	"port = net_memif0,role=server,id=0\n"
	"weight = 3\n"
	"port = net_tap1,iface=tap1\n"
	"link = rail1\n"
	"crc = no\n"
	"device = srnic1 1\n"
	"key_scope = device\n"
	"service = web 10.9.9.9 prio=5 failback=expire mode=switch\n";

static void write_conf(const char *text, const char *extra)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		exit(1);
	}
	fprintf(f, "%s%s", text, extra);
	fclose(f);
}

/* The doc's text, whole. */
static char *read_doc(void)
{
	static char doc[65536];
	FILE *f = fopen(SRNIC_CONFIG_DOC, "r");
	size_t n;

	if (!CHECK(f, "cannot read %s", SRNIC_CONFIG_DOC))
		return NULL;
	n = fread(doc, 1, sizeof(doc) - 1, f);
	fclose(f);
	doc[n] = '\0';
	return doc;
}

/* Each key a row of the doc ("| `key` |"), each row a key of the table. */
static void check_doc(void)
{
	const char *doc = read_doc(), *s;
	char row[64], name[40];
	unsigned i;

	if (!doc)
		return;
	for (i = 0; i < srnic_conf_nkeys; i++) {
		snprintf(row, sizeof(row), "\n| `%s` |", srnic_conf_keys[i].name);
		CHECK(strstr(doc, row), "key %s is not in %s",
		      srnic_conf_keys[i].name, SRNIC_CONFIG_DOC);
	}
	for (s = doc; (s = strstr(s, "\n| `")) != NULL; s++)
		if (sscanf(s, "\n| `%39[^`]` |", name) == 1)
			CHECK(srnic_config_key(name), "%s lists '%s', which is "
			      "no key", SRNIC_CONFIG_DOC, name);
}

static void check_table(void)
{
	const struct srnic_conf_key *k;
	unsigned i, j;

	for (i = 0; i < srnic_conf_nkeys; i++) {
		k = &srnic_conf_keys[i];
		CHECK(srnic_config_key(k->name) == k, "%s: looked up elsewhere",
		      k->name);
		for (j = i + 1; j < srnic_conf_nkeys; j++)
			CHECK(strcmp(k->name, srnic_conf_keys[j].name),
			      "%s twice", k->name);
		/* (these kinds have no parser of their own) */
		if (k->kind == SRNIC_CONF_PORT_STR ||
		    k->kind == SRNIC_CONF_SERVICES)
			CHECK(k->parse, "%s: no parser", k->name);
		if (k->kind == SRNIC_CONF_ENUM)
			CHECK(k->names && k->names[0] && k->names[1],
			      "%s: an enum of fewer than two words", k->name);
		CHECK(k->doc && *k->doc, "%s: no doc line", k->name);
	}
}

static void check_good(void)
{
	struct srnic_config cfg;
	char err[640];

	write_conf(good, "");
	if (!CHECK(!srnic_config_load_file(&cfg, path, err, sizeof(err)),
		   "good file refused: %s", err))
		return;
	CHECK(!strcmp(cfg.node, "a") && cfg.ipv4 == 0x0a370001 &&
	      cfg.mac[5] == 1, "identity");
	CHECK(cfg.nports == 2 && cfg.weight[0] == 3 && cfg.weight[1] == 1,
	      "weights %u %u", cfg.weight[0], cfg.weight[1]);
	/* (memif: no CRC by default; the tap's is turned off by its line) */
	CHECK(!cfg.crc[0] && !cfg.crc[1], "crc %u %u", cfg.crc[0], cfg.crc[1]);
	CHECK(!strcmp(cfg.link[1], "rail1") && !cfg.link[0][0], "links");
	CHECK(cfg.ndev == 2 && cfg.port_dev[1] == 1 && cfg.key_scope_device,
	      "devices: %u", cfg.ndev);
	CHECK(cfg.nsvc == 1 && cfg.svc[0].prio == 5 && !cfg.svc[0].failback &&
	      cfg.svc[0].mode == SRNIC_SVC_SWITCH, "service");
	CHECK(cfg.mtu == 4096 && cfg.mem_mb == 256 && cfg.hugepages == 1 &&
	      cfg.ack_delay_us == 20 && cfg.svc_dead_ms == 300 &&
	      cfg.resolve_ms == 5000 && !cfg.zero_copy && !cfg.has_key,
	      "defaults");
	CHECK(!strcmp(cfg.state_dir, "/var/lib/srnic/a") &&
	      !strcmp(cfg.srnicd_socket, "/run/srnic/a.sock"),
	      "defaults from the name: %s %s", cfg.state_dir,
	      cfg.srnicd_socket);
}

/* A routed UDP node: its subnet, routes (the longest prefix first or
 * not), configured peers; and what a whole file cannot be. */
static const char routed[] =
	"node = a\n"
	"ipv4 = 10.1.0.2/24\n"
	"mac = 02:53:4e:00:00:01\n"
	"encap = udp\n"
	"port = net_memif0,role=server,id=0\n"
	"port = net_memif1,role=server,id=1\n"
	"route = default via 10.1.0.1\n"
	"route = 10.2.0.0/16 via 10.1.0.254 port 1\n"
	"peer = 10.2.0.2\n"
	"peer = 10.3.0.2\n";

static void check_routed(void)
{
	struct srnic_config cfg;
	char err[640];

	write_conf(routed, "");
	if (CHECK(!srnic_config_load_file(&cfg, path, err, sizeof(err)),
		  "routed file refused: %s", err)) {
		CHECK(cfg.ipv4 == 0x0a010002 && cfg.ipv4_len == 24, "ipv4/24");
		CHECK(cfg.nroutes == 2 && cfg.route[0].len == 0 &&
			      !cfg.route[0].prefix &&
			      cfg.route[0].gw == 0x0a010001 &&
			      cfg.route[0].port == -1 &&
			      cfg.route[1].prefix == 0x0a020000 &&
			      cfg.route[1].len == 16 && cfg.route[1].port == 1,
		      "routes");
		CHECK(cfg.npeers == 2 && cfg.peer[1] == 0x0a030002, "peers");
		/* Next hops: the subnet, the longest prefix, a port's own
		 * route before any port's, the segment past every route. */
		CHECK(srnic_config_next_hop(&cfg, 0, 0x0a0100fe) == 0x0a0100fe,
		      "the subnet is on the segment");
		CHECK(srnic_config_next_hop(&cfg, 0, 0x0a020305) == 0x0a010001,
		      "10.2.3.5 on port 0: the default route");
		CHECK(srnic_config_next_hop(&cfg, 1, 0x0a020305) == 0x0a0100fe,
		      "10.2.3.5 on port 1: its /16");
		CHECK(srnic_config_next_hop(&cfg, 1, 0x0b000001) == 0x0a010001,
		      "11.0.0.1 on port 1: the default route");
		cfg.nroutes = 0;
		CHECK(srnic_config_next_hop(&cfg, 0, 0x0b000001) == 0x0b000001,
		      "no route: on the segment");
		cfg.ipv4_len = 0;
		CHECK(srnic_config_next_hop(&cfg, 0, 0x0a010009) == 0x0a010009,
		      "no subnet, no route: on the segment");
	}
	/* At one length, the port's own route wins, wherever it stands:
	 * after the any-port one, and before it. */
	write_conf(routed, "route = 10.2.0.0/16 via 10.1.0.253\n");
	if (CHECK(!srnic_config_load_file(&cfg, path, err, sizeof(err)),
		  "two /16 routes refused: %s", err)) {
		CHECK(srnic_config_next_hop(&cfg, 1, 0x0a020305) == 0x0a0100fe,
		      "port 1: its own /16 route");
		CHECK(srnic_config_next_hop(&cfg, 0, 0x0a020305) == 0x0a0100fd,
		      "port 0: the /16 of any port");
		cfg.route[1].port = -1;
		cfg.route[2].port = 1;
		CHECK(srnic_config_next_hop(&cfg, 1, 0x0a020305) == 0x0a0100fd,
		      "port 1: its own /16 route, listed after the other");
		CHECK(srnic_config_next_hop(&cfg, 0, 0x0a020305) == 0x0a0100fe,
		      "port 0: the any-port /16, listed first");
	}
	/* The node's subnet wins over a route of its length, even the
	 * port's own, and loses to a longer one. */
	write_conf(routed, "route = 10.1.0.0/24 via 10.1.0.253 port 0\n"
			   "route = 10.1.0.128/25 via 10.1.0.252\n");
	if (CHECK(!srnic_config_load_file(&cfg, path, err, sizeof(err)),
		  "routes into the subnet refused: %s", err)) {
		CHECK(srnic_config_next_hop(&cfg, 0, 0x0a010009) == 0x0a010009,
		      "the subnet before port 0's route to it");
		CHECK(srnic_config_next_hop(&cfg, 0, 0x0a010089) == 0x0a0100fc,
		      "a /25 in the subnet: its route");
	}
	write_conf(good, "");
	CHECK(!srnic_config_load_file(&cfg, path, err, sizeof(err)) &&
		      cfg.ipv4_len == 0 && !cfg.nroutes && !cfg.npeers,
	      "a bare ipv4 has no subnet, no routes, no peers");
	/* (what only the whole file tells: a port it has not, eth) */
	write_conf(routed, "route = 10.9.0.0/16 via 10.1.0.9 port 2\n");
	CHECK(srnic_config_load_file(&cfg, path, err, sizeof(err)) &&
		      strstr(err, "route: the node has no port 2"),
	      "a route to a port the node has not: %s", err);
	write_conf(routed, "route = 10.7.0.0/16 via 10.1.0.2\n");
	CHECK(srnic_config_load_file(&cfg, path, err, sizeof(err)) &&
		      strstr(err, "the gateway is the node's own address"),
	      "the node its own gateway: %s", err);
	write_conf(good, "peer = 10.2.0.2\n");
	CHECK(srnic_config_load_file(&cfg, path, err, sizeof(err)) &&
		      strstr(err, "route and peer lines are for encap = udp"),
	      "a peer line on a raw Ethernet node: %s", err);
}

/* An IPv6 routed node: its id made of its address, IPv6 routes and
 * peers, the next hops of its addresses; and what it cannot be. */
static const char routed6[] =
	"node = a\n"
	"ipv6 = fd00:56:1::2/64\n"
	"mac = 02:53:4e:00:00:01\n"
	"encap = udp\n"
	"port = net_memif0,role=server,id=0\n"
	"port = net_memif1,role=server,id=1\n"
	"route = default via fd00:56:1::1\n"
	"route = fd00:57::/32 via fd00:56:1::fe port 1\n"
	"peer = fd00:56:2::2\n";

/* An IPv6 address, parsed. */
static void ip6(const char *text, uint8_t a[16])
{
	if (inet_pton(AF_INET6, text, a) != 1)
		abort();
}

/* IPv6 route prefixes at the bounds of their lengths: a bit past it,
 * the first or the last, is refused; one just before it is not. */
static void check_prefix6_bounds(void)
{
	static const struct {
		const char *prefix;
		bool ok;
	} t[] = {
		{"::/0", true},		{"::1/0", false},
		{"8000::/1", true},	{"c000::/1", false},
		{"fd00:58::2/127", true}, {"fd00:58::1/127", false},
		{"fd00:58::1/128", true}, {"fd00:58:0:1::/63", false},
		{"fd00:58::/63", true},
	};
	struct srnic_config cfg;
	char err[640], line[128];
	unsigned i;
	int rc;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(line, sizeof(line),
			 "route = %s via fd00:56:1::1 port 1\n", t[i].prefix);
		write_conf(routed6, line);
		rc = srnic_config_load_file(&cfg, path, err, sizeof(err));
		CHECK(t[i].ok ? !rc : rc && strstr(err, "has bits past its "
							"length"),
		      "route to %s: %s", t[i].prefix, rc ? err : "taken");
	}
}

static void check_routed6(void)
{
	uint8_t want[16], hop[16], dst[16];
	struct srnic_config cfg;
	char err[640];

	write_conf(routed6, "");
	if (CHECK(!srnic_config_load_file(&cfg, path, err, sizeof(err)),
		  "IPv6 routed file refused: %s", err)) {
		ip6("fd00:56:1::2", want);
		CHECK(cfg.has_ipv6 && !memcmp(cfg.ipv6, want, 16) &&
			      cfg.ipv6_len == 64 &&
			      cfg.ipv4 == srnic_wire_ip6_id(want) &&
			      cfg.ipv4 >> 28 == 0xf,
		      "ipv6/64 and its id %08x", cfg.ipv4);
		ip6("fd00:56:2::2", want);
		CHECK(cfg.npeers == 1 && !memcmp(cfg.peer6[0], want, 16) &&
			      cfg.peer[0] == srnic_wire_ip6_id(want),
		      "the peer and its id");
		ip6("fd00:56:1::1", want);
		CHECK(cfg.nroutes == 2 && cfg.route[0].v6 &&
			      cfg.route[0].len == 0 &&
			      !memcmp(cfg.route[0].gw6, want, 16) &&
			      cfg.route[0].gw == srnic_wire_ip6_id(want) &&
			      cfg.route[1].len == 32 && cfg.route[1].port == 1,
		      "routes");
		ip6("fd00:56:1::77", dst);
		srnic_config_next_hop6(&cfg, 0, dst, hop);
		CHECK(!memcmp(hop, dst, 16), "the subnet is on the segment");
		ip6("fd00:57:3::5", dst);
		srnic_config_next_hop6(&cfg, 0, dst, hop);
		CHECK(!memcmp(hop, want, 16), "port 0: the default route");
		srnic_config_next_hop6(&cfg, 1, dst, hop);
		ip6("fd00:56:1::fe", want);
		CHECK(!memcmp(hop, want, 16), "port 1: its /32");
	}
	/* At one length, the port's own route wins, wherever it stands
	 * (after the any-port one, and before it); the node's subnet wins
	 * over a route of its length, even the port's own, and loses to a
	 * longer one. */
	write_conf(routed6, "route = fd00:57::/32 via fd00:56:1::fd\n"
			    "route = fd00:56:1::/64 via fd00:56:1::fd port 0\n"
			    "route = fd00:56:1:0:8000::/65 via fd00:56:1::fc\n");
	if (CHECK(!srnic_config_load_file(&cfg, path, err, sizeof(err)),
		  "IPv6 routes of one length refused: %s", err)) {
		ip6("fd00:57:3::5", dst);
		srnic_config_next_hop6(&cfg, 1, dst, hop);
		ip6("fd00:56:1::fe", want);
		CHECK(!memcmp(hop, want, 16), "port 1: its own /32");
		srnic_config_next_hop6(&cfg, 0, dst, hop);
		ip6("fd00:56:1::fd", want);
		CHECK(!memcmp(hop, want, 16), "port 0: the /32 of any port");
		cfg.route[1].port = -1;
		cfg.route[2].port = 1;
		srnic_config_next_hop6(&cfg, 1, dst, hop);
		CHECK(!memcmp(hop, want, 16),
		      "port 1: its own /32, listed after the other");
		srnic_config_next_hop6(&cfg, 0, dst, hop);
		ip6("fd00:56:1::fe", want);
		CHECK(!memcmp(hop, want, 16),
		      "port 0: the any-port /32, listed first");
		ip6("fd00:56:1::77", dst);
		srnic_config_next_hop6(&cfg, 0, dst, hop);
		CHECK(!memcmp(hop, dst, 16),
		      "the subnet before port 0's route to it");
		ip6("fd00:56:1:0:8000::77", dst);
		srnic_config_next_hop6(&cfg, 0, dst, hop);
		ip6("fd00:56:1::fc", want);
		CHECK(!memcmp(hop, want, 16), "a /65 in the subnet: its route");
	}
	write_conf(routed6, "ipv4 = 10.1.0.2\n");
	CHECK(srnic_config_load_file(&cfg, path, err, sizeof(err)) &&
		      strstr(err, "a node has one address: ipv4 or ipv6"),
	      "ipv4 and ipv6: %s", err);
	write_conf(routed6, "peer = 10.2.0.2\n");
	CHECK(srnic_config_load_file(&cfg, path, err, sizeof(err)) &&
		      strstr(err, "an IPv6 node's peers are IPv6"),
	      "an IPv4 peer of an IPv6 node: %s", err);
	write_conf(routed6, "route = 10.0.0.0/8 via 10.1.0.1\n");
	CHECK(srnic_config_load_file(&cfg, path, err, sizeof(err)) &&
		      strstr(err, "an IPv6 node's routes are IPv6"),
	      "an IPv4 route of an IPv6 node: %s", err);
	write_conf(good, "peer = fd00::2\n");
	CHECK(srnic_config_load_file(&cfg, path, err, sizeof(err)) &&
		      strstr(err, "IPv4 node's peers are IPv4"),
	      "an IPv6 peer of an IPv4 node: %s", err);
	write_conf(routed6, "route = fd00:58::1/32 via fd00:56:1::1\n");
	CHECK(srnic_config_load_file(&cfg, path, err, sizeof(err)) &&
		      strstr(err, "has bits past its length"),
	      "an IPv6 prefix with bits past its length: %s", err);
	check_prefix6_bounds();
	write_conf(routed6, "encap = eth\n");
	CHECK(srnic_config_load_file(&cfg, path, err, sizeof(err)) &&
		      strstr(err, "ipv6: a node's IPv6 address is for encap = "
				  "udp"),
	      "an IPv6 node on raw Ethernet: %s", err);
	write_conf(routed6, "ipv6 = fe80::1/64\n");
	CHECK(srnic_config_load_file(&cfg, path, err, sizeof(err)) &&
		      strstr(err, "not a link-local address"),
	      "a link-local node address: %s", err);
	write_conf(routed6, "peer = ff02::1\n");
	CHECK(srnic_config_load_file(&cfg, path, err, sizeof(err)) &&
		      strstr(err, "not a host's IPv6 address"),
	      "a multicast peer: %s", err);
}

/* good plus line: refused with a message ending in want ("" = the line's
 * number and key come first). */
static void check_bad(const char *line, const char *want)
{
	struct srnic_config cfg;
	char err[640], text[1024], head[128];
	int rc;

	snprintf(text, sizeof(text), "%s\n", line);
	write_conf(good, text);
	rc = srnic_config_load_file(&cfg, path, err, sizeof(err));
	snprintf(head, sizeof(head), "srnic: %s:13: ", path);
	CHECK(rc && !strncmp(err, head, strlen(head)) &&
	      strstr(err, want), "'%s': got '%s', want '%s'", line,
	      rc ? err : "no error", want);
}

int main(void)
{
	snprintf(path, sizeof(path), "/tmp/srnic-test-config.%d.conf",
		 (int)getpid());
	check_table();
	check_doc();
	check_good();
	check_routed();
	check_routed6();
	check_bad("frobnicate = 3", "unknown key 'frobnicate'");
	check_bad("no equals sign", "expected key = value");
	check_bad("weight = 17", "weight: 1 to 16");
	check_bad("ack_delay_us = 5000", "ack_delay_us: 0 to 200");
	check_bad("zero_copy = maybe", "zero_copy: yes or no");
	check_bad("mtu = 1000", "mtu: a power of two from 256 to 8192");
	check_bad("key_scope = adapter", "key_scope: node or device");
	check_bad("state_dir = relative", "state_dir: an absolute path, under "
		  "240 characters");
	check_bad("node = ..", "node: 1 to 15 characters, no '/'");
	check_bad("mac = 02:53", "mac: want xx:xx:xx:xx:xx:xx");
	check_bad("ipv4 = 10.1", "ipv4: an IPv4 address");
	check_bad("ipv4 = 10.1.0.2/33", "ipv4: an IPv4 address");
	check_bad("ipv4 = 10.1.0.2/0", "ipv4: an IPv4 address");
	check_bad("route = 10.2.0.0/16 10.1.0.1", "route: PREFIX/LEN via");
	check_bad("route = 10.2.0.0 via 10.1.0.1", "route: PREFIX/LEN via");
	check_bad("route = 10.2.0.0/16 via 10.1.0.1 port x",
		  "route: PREFIX/LEN via");
	check_bad("route = 10.2.0.1/16 via 10.1.0.1",
		  "route: 10.2.0.1/16 has bits past its length");
	check_bad("route = default via 255.255.255.255",
		  "route: a gateway is a host's address");
	check_bad("peer = 10.2", "peer: not an IPv4 address");
	check_bad("peer = 224.0.0.1", "peer: a peer is a host's address");
	check_bad("link = a/b", "link: a kernel interface name");
	check_bad("crc = sometimes", "crc: yes or no");
	check_bad("port = net_memif2,zero-copy=no,zero-copy=yes",
		  "port: memif's zero-copy=yes (either role) is refused");
	check_bad("device = srnic9 1", "device: srnic1 to srnic3");
	check_bad("device = srnic2 1", "device: port 1 is srnic1's already");
	check_bad("device = srnic2 7", "device: srnic2: no port '7'");
	check_bad("service = web 10.9.9.8 prio=5", "service: web or its "
		  "address is there already");
	check_bad("service = db 10.9.9.8 prio=0", "service: prio=1 to 255");
	check_bad("service = db 10.9.9.8 flavour=x", "service: unknown "
		  "setting 'flavour=x'");
	check_bad("cluster_key = /nonexistent/key", "cluster_key: cannot read "
		  "/nonexistent/key");
	unlink(path);
	return check_summary("config");
}
