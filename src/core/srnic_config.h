/* SPDX-License-Identifier: MIT */
/*
 * A node's configuration: one file of "key = value" lines (docs/configuration.md
 * lists every key).  It is read when the provider needs to describe the device and
 * again when the engine starts, so both see the same node.
 */
#ifndef SRNIC_CONFIG_H
#define SRNIC_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SRNIC_MAX_PORTS 8
/* Port slots of an engine: the configured ports, then the loopback port
 * (src/port/loop.c), which only frames to this node itself take. */
#define SRNIC_PORT_LOOP SRNIC_MAX_PORTS
#define SRNIC_PORT_SLOTS (SRNIC_MAX_PORTS + 1)
#define SRNIC_NAME_MAX 16
/* Steering (queues = N): classes of a node, and a port's queue pairs,
 * one for each class that sends and class that receives. */
#define SRNIC_MAX_CLASSES 4
#define SRNIC_MAX_QUEUES (SRNIC_MAX_CLASSES * SRNIC_MAX_CLASSES)
#define SRNIC_MAX_WEIGHT 16
/* Services (docs/failover.md) a node is a member of. */
#define SRNIC_MAX_SERVICES 4
/* How a service's frames reach its holder: to its group address, which
 * every member hears; or to a unicast address of its own, which the
 * fabric (./srnic fabric) forwards to the holder's port alone. */
#define SRNIC_SVC_GROUP 0
#define SRNIC_SVC_SWITCH 1

struct srnic_service_conf {
	char name[SRNIC_NAME_MAX];
	uint32_t ipv4;		/* the service's address, host order */
	uint8_t prio;		/* 1-255: the live member with the highest
				 * holds it (ties: the higher node address) */
	uint8_t mode;		/* SRNIC_SVC_GROUP or SRNIC_SVC_SWITCH */
	uint8_t failback;	/* SRNIC_FAILBACK_*: what a better member
				 * back does while the holder lives */
};

/* A better member back: takes the service at once (auto), once the
 * holder's connections have all closed (expire), or once the holder's
 * program hands it over (manual: srnic_svc_freeze, srnic_svc_handover). */
enum { SRNIC_FAILBACK_EXPIRE, SRNIC_FAILBACK_AUTO, SRNIC_FAILBACK_MANUAL };

/* A UDP node's routes ("route = PREFIX/LEN via GW [port P]"): frames to
 * an address in PREFIX/LEN go to GW's Ethernet address (ARP), on port P
 * or on any port; the longest prefix wins.  An address in no route and
 * not in the node's own subnet (ipv4's /LEN) is taken to be on the
 * segment, as every address is when ipv4 has no /LEN. */
#define SRNIC_MAX_ROUTES 8
struct srnic_route_conf {
	uint32_t prefix;	/* host order, the bits past len zero */
	uint8_t len;		/* 0 to 32 (0: the default route); an IPv6
				 * route's: 0 to 128 */
	int8_t port;		/* -1: any port */
	uint32_t gw;		/* (an IPv6 route's: its gateway's node id,
				 * srnic_wire_ip6_id, what ARP's table and
				 * the senders key the hop by) */
	/* An IPv6 node's route (v6): prefix6/len via gw6 */
	uint8_t v6;
	uint8_t prefix6[16];
	uint8_t gw6[16];
};
/* Nodes beyond a router, whom broadcast HELLOs never reach: "peer = IPV4"
 * (or "peer = IPV6" for an IPv6 node's) lines, each sent HELLOs of its
 * own. */
#define SRNIC_MAX_CONF_PEERS 16

/* Verbs devices (adapters) a node's ports can be split into: srnic0 to
 * srnic3 (docs/key-migration.md). */
#define SRNIC_MAX_DEVICES 4

struct srnic_config {
	char path[256];
	char node[SRNIC_NAME_MAX];	/* node name, e.g. "a" */
	/* The node's id, what names it in srnic's headers and tables:
	 * its IPv4 address (host order; gives the RoCE v2 GID), or for an
	 * IPv6 node (has_ipv6) srnic_wire_ip6_id of that address. */
	uint32_t ipv4;
	uint8_t ipv4_len;		/* its subnet's prefix length (0:
					 * every address is on the segment) */
	/* "ipv6 = ADDR[/LEN]": an IPv6 node, whose GID 1 is ipv6 and whose
	 * UDP frames travel in IPv6 (an address family a network: its
	 * peers are IPv6 nodes too) */
	int has_ipv6;
	uint8_t ipv6[16];
	uint8_t ipv6_len;		/* as ipv4_len */
	uint8_t mac[6];			/* node MAC: GUID and link-local GID */
	char netdev[SRNIC_NAME_MAX];	/* kernel interface the GIDs name */
	unsigned mtu;			/* largest packet payload, power of 2 */
	unsigned nports;
	char port[SRNIC_MAX_PORTS][256]; /* DPDK vdev arguments, one a port */
	uint8_t weight[SRNIC_MAX_PORTS]; /* striping weight, 1 to 16 */
	/* Frames on the port carry, and must carry, a CRC-32C trailer
	 * ("crc = yes|no" after its port line; by default yes for ports
	 * that cross a wire, no for memif and net_ring, whose frames never
	 * leave the host's memory). */
	uint8_t crc[SRNIC_MAX_PORTS];
	/* "encap = udp": every port's frames travel in IPv4 and UDP to
	 * udp_port, from the node's ipv4 (src/wire/srnic_wire.h,
	 * docs/wire-protocol.md); 0, "eth": raw Ethernet. */
	int encap_udp;
	unsigned udp_port;
	unsigned nroutes;
	struct srnic_route_conf route[SRNIC_MAX_ROUTES];
	unsigned npeers;
	uint32_t peer[SRNIC_MAX_CONF_PEERS];	/* host order: node ids */
	uint8_t peer6[SRNIC_MAX_CONF_PEERS][16]; /* an IPv6 node's: their
						  * addresses */
	/* "link = IFACE" after a tap port's line: the kernel interface that
	 * is the port's cable (a host's NIC, a veth).  The tap joins the
	 * bridge IFACE is a port of, and the port is up while IFACE has
	 * carrier.  Empty: the tap stands alone, as DPDK made it. */
	char link[SRNIC_MAX_PORTS][16];
	/* Adapters: port p belongs to verbs device srnic<port_dev[p]> (0
	 * unless a "device = srnicK PORTS" line names it), of ndev.  With
	 * key_scope_device, a key is looked up by the device its packet
	 * came in on, which takes a key of another as foreign and imports
	 * it (key migration); else every device knows every key. */
	unsigned ndev;
	uint8_t port_dev[SRNIC_MAX_PORTS];
	int key_scope_device;
	unsigned key_idle_ms;	/* an import (or a refusal) no request used
				 * this long is evicted */
	/* Services this node is a member of ("service = NAME IPV4 prio=N
	 * [failback=auto|expire|manual]"), and how long a holder may be silent
	 * before the best live member takes its service (svc_dead_ms). */
	unsigned nsvc;
	struct srnic_service_conf svc[SRNIC_MAX_SERVICES];
	unsigned svc_dead_ms;
	unsigned svc_grace_ms;		/* a client's QP of a service retries
					 * for free this long while no holder
					 * is heard */
	unsigned mem_mb;		/* EAL memory */
	int hugepages;			/* 0: run EAL with --no-huge */
	char eal_extra[256];		/* more EAL arguments, space separated */
	unsigned queues;		/* steering classes: memif links carry
					 * queues^2 queue pairs (1: one) */
	unsigned idle_sleep_us;		/* longest idle nap of the datapath */
	unsigned event_spin_us;		/* a waiter's datapath run before it
					 * sleeps (provider/channel.c) */
	unsigned cq_early_us;		/* CQs with a channel: early events,
					 * polls waiting this long (0: off) */
	unsigned ack_delay_us;		/* how long a plain ACK may wait for
					 * a packet to go with */
	int zero_copy;			/* send RC payload from registered
					 * memory where the port allows it */
	int robust_placement;		/* guard every copy to or from a
					 * program's memory (mem/guard.c) */
	unsigned resolve_ms;		/* how long RTR waits for a GID */
	char stats_file[256];		/* where the engine writes its
					 * counters (empty: nowhere) */
	char fault_file[256];		/* delay and reordering to inject
					 * (src/port/fault.c; empty: none) */
	char capture_file[256];		/* ./srnic capture's requests
					 * (control/capture.c; empty: none) */
	char state_dir[256];		/* what the node keeps across starts:
					 * its boot count (incarnation.c) */
	char srnicd_socket[108];	/* where srnicd serves the node (a
					 * process attaches when it runs) */
	char huge_dir[128];		/* srnicd: the hugetlbfs its memory
					 * files go to (empty: the first
					 * mounted) */
	/* The cluster key (cluster_key = FILE of 64 hex digits, readable by
	 * its owner only): control frames carry its MAC, and those that do
	 * not are refused.  has_key 0: no key, no MACs. */
	int has_key;
	uint8_t cluster_key[32];
};

/* The mask of an IPv4 prefix len bits long (host order). */
static inline uint32_t srnic_prefix_mask(unsigned len)
{
	return len ? ~0u << (32 - len) : 0;
}

/* Whether a "peer = IPV4" line names ipv4. */
static inline bool srnic_config_has_peer(const struct srnic_config *cfg,
					 uint32_t ipv4)
{
	unsigned i;

	for (i = 0; i < cfg->npeers; i++)
		if (cfg->peer[i] == ipv4)
			return true;
	return false;
}

/* A family's test of a destination (an IPv4 node's uint32_t, host order;
 * an IPv6 node's 16 bytes) against route r's prefix. */
typedef bool srnic_route_holds_fn(const struct srnic_route_conf *r,
				  const void *dst);

/* An IPv6 node's "peer = IPV6" line of id id: its address into out. */
static inline bool srnic_config_peer6(const struct srnic_config *cfg,
				      uint32_t id, uint8_t out[16])
{
	unsigned i;

	for (i = 0; i < cfg->npeers; i++)
		if (cfg->peer[i] == id) {
			memcpy(out, cfg->peer6[i], 16);
			return true;
		}
	return false;
}

/*
 * The route a UDP node's frame to dst leaves port p by: the index of the
 * longest route prefix that holds dst (holds: the family's test), a route
 * of port p before one of any port at the same length, the node's own
 * subnet a prefix with none (subnet: its length if it holds dst, else 0);
 * -1 for none.  One walk for both families, each inlining it with its
 * test.
 */
static inline int srnic_config_route(const struct srnic_config *cfg,
				     unsigned p, const void *dst,
				     unsigned subnet,
				     srnic_route_holds_fn *holds)
{
	/* (score: twice the length, and one for a route of this port) */
	int best = subnet ? 2 * (int)subnet + 1 : -1, route = -1, score;
	unsigned i;

	for (i = 0; i < cfg->nroutes; i++) {
		const struct srnic_route_conf *r = &cfg->route[i];

		if (r->port >= 0 && r->port != (int)p)
			continue;
		score = 2 * r->len + (r->port >= 0);
		if (score > best && holds(r, dst)) {
			best = score;
			route = (int)i;
		}
	}
	return route;
}

static inline bool srnic_route_holds(const struct srnic_route_conf *r,
				     const void *dst)
{
	return (*(const uint32_t *)dst & srnic_prefix_mask(r->len)) ==
	       r->prefix;
}

/*
 * Where a UDP node's frame to dst leaves port p for: its route's gateway
 * (srnic_config_route); for the node's subnet (ipv4's /LEN), or no route,
 * dst itself, taken to be on the port's segment.  (Every thread that
 * wraps a frame, and the control core's ARP.)
 */
static inline uint32_t srnic_config_next_hop(const struct srnic_config *cfg,
					     unsigned p, uint32_t dst)
{
	bool in_subnet = cfg->ipv4_len &&
			 !((dst ^ cfg->ipv4) & srnic_prefix_mask(cfg->ipv4_len));
	int i = srnic_config_route(cfg, p, &dst, in_subnet ? cfg->ipv4_len : 0,
				   srnic_route_holds);

	return i < 0 ? dst : cfg->route[i].gw;
}

/* Whether the first len bits of IPv6 addresses a and b are the same. */
static inline bool srnic_prefix6_match(const uint8_t a[16],
				       const uint8_t b[16], unsigned len)
{
	unsigned full = len / 8, rest = len % 8;

	if (memcmp(a, b, full))
		return false;
	return !rest || !((a[full] ^ b[full]) & (uint8_t)(0xff00 >> rest));
}

static inline bool srnic_route_holds6(const struct srnic_route_conf *r,
				      const void *dst)
{
	return srnic_prefix6_match(dst, r->prefix6, r->len);
}

/* The same for an IPv6 node (srnic_config_next_hop's rules): the
 * address of the hop a frame to dst leaves port p for. */
static inline void srnic_config_next_hop6(const struct srnic_config *cfg,
					  unsigned p, const uint8_t dst[16],
					  uint8_t hop[16])
{
	bool in_subnet = cfg->ipv6_len &&
			 srnic_prefix6_match(dst, cfg->ipv6, cfg->ipv6_len);
	int i = srnic_config_route(cfg, p, dst, in_subnet ? cfg->ipv6_len : 0,
				   srnic_route_holds6);

	memcpy(hop, i < 0 ? dst : cfg->route[i].gw6, 16);
}

/*
 * Load the node's configuration from $SRNIC_CONF (or /etc/srnic/srnic.conf).
 * On failure returns a negative errno and writes a one-line reason to err.
 */
int srnic_config_load(struct srnic_config *cfg, char *err, unsigned errlen);
/* The same from the file at path. */
int srnic_config_load_file(struct srnic_config *cfg, const char *path,
			   char *err, unsigned errlen);

/*
 * The keys a configuration may hold: one table (config.c) that the parser
 * walks, srnic-conf prints from and docs/configuration.md lists.  A key's
 * kind says how its value reads, where it lands and how it prints; a key
 * whose value needs more than that (a port line, a device's ports, a
 * service) names its own parser.
 */
enum srnic_conf_kind {
	SRNIC_CONF_UINT,	/* decimal, lo to hi, into an unsigned */
	SRNIC_CONF_BOOL,	/* yes or no, into an int */
	SRNIC_CONF_ENUM,	/* one of names[], its index into an int */
	SRNIC_CONF_STR,		/* text shorter than size, into char[] */
	SRNIC_CONF_PATH,	/* an absolute path shorter than size */
	SRNIC_CONF_IPV4,	/* dotted quad, into a host-order uint32_t */
	SRNIC_CONF_IPV6,	/* an IPv6 address, into uint8_t[16] */
	SRNIC_CONF_MAC,		/* xx:xx:xx:xx:xx:xx, into uint8_t[6] */
	/* One value a port, set by the line after that port's line:
	 * char[SRNIC_MAX_PORTS][size], or uint8_t[SRNIC_MAX_PORTS] holding
	 * a number lo to hi or a yes/no. */
	SRNIC_CONF_PORT_STR,
	SRNIC_CONF_PORT_U8,
	SRNIC_CONF_PORT_BOOL,
	SRNIC_CONF_SERVICES,	/* the svc[] list (its own parser) */
	SRNIC_CONF_ROUTES,	/* the route[] list (its own parser) */
	SRNIC_CONF_PEERS,	/* the peer[] list (its own parser) */
};

struct srnic_conf_key;
/* Parses val into cfg; on a bad value writes why (without the key's
 * name, which the caller puts first) and returns -1. */
typedef int srnic_conf_parse_fn(struct srnic_config *cfg,
				const struct srnic_conf_key *key,
				const char *val, char *why, size_t len);

struct srnic_conf_key {
	const char *name;
	enum srnic_conf_kind kind;
	size_t offset;			/* of the value in srnic_config */
	size_t size;			/* STR, PATH, PORT_STR: bytes */
	unsigned lo, hi;		/* UINT, PORT_U8: bounds */
	unsigned def;			/* UINT, BOOL, ENUM: when absent */
	const char *const *names;	/* ENUM: the words, NULL-ended */
	srnic_conf_parse_fn *parse;	/* NULL: the kind's own parser */
	const char *doc;		/* what it sets, one line */
};

extern const struct srnic_conf_key srnic_conf_keys[];
extern const unsigned srnic_conf_nkeys;
/* The table's entry for name, or NULL. */
const struct srnic_conf_key *srnic_config_key(const char *name);

#endif
