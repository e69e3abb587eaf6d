/* SPDX-License-Identifier: MIT */
/*
 * The control core: the node's slow path.  For now it
 *  - announces the node on every port (HELLO) and learns its peers from
 *    theirs: which MAC reaches which node on which port, and each peer's
 *    incarnation;
 *  - follows link state and peer liveness, which the requester's striping
 *    reads;
 *  - resolves a GID to a peer for modify_qp.
 * It is a plain thread that sleeps between ticks: it must cost nothing on a
 * machine where two nodes share two cores.  It never touches a file, which
 * could keep it waiting and silence the node (files.c does that work).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "srnic_control.h"
#include "srnic_port_guard.h"

#define TICK_MS 10
/* Often enough that a port's HELLO loss measures the port within a few
 * hundred milliseconds; 100 tiny frames a second a port cost nothing. */
#define HELLO_MS 10
/* ... and while the node sleeps (its datapath's sleeper in a deep
 * sleep: node->dp_deep), a tick and a HELLO this often: a wake-up costs
 * 40-150 us of CPU here, and an idle node should cost nothing (at 30 ms,
 * srnicd and a waiting server ran 72-113 ms in 10 s, most of it
 * wake-ups).  Each HELLO says the interval (hello_ms) and the peers judge
 * by it (peer_dead_ms); one goes at once when the node falls asleep, so
 * that none comes later than the last one said.  A node with services
 * keeps ten HELLOs a svc_dead_ms: their SVC_ANNOUNCEs go with them, and
 * its members judge those by svc_dead_ms alone.  (SRNIC_IDLE_TICK_MS,
 * srnic_node.h: the datapath's sleep follows it.) */
#define IDLE_TICK_MS SRNIC_IDLE_TICK_MS
/* ... but every 30 ms, as before HELLOs gave their interval, while a peer
 * whose HELLOs give none is heard: it judges every node by PEER_DEAD_MS
 * and PORT_SILENT_MS alone. */
#define UNSAID_IDLE_TICK_MS 30
/* A peer is down on a port after this long without a frame there, or
 * after DEAD_HELLOS of its HELLO intervals if that is longer; silent
 * after SILENT_HELLOS (one HELLO lost is two intervals and a little).
 * An interval said over HELLO_MS_MAX counts as that. */
#define PEER_DEAD_MS 300
#define DEAD_HELLOS 5
#define SILENT_HELLOS 3
#define HELLO_MS_MAX 1000
/* A port that has stayed quiet this long while another port of the same
 * peer kept hearing it is out of the rotation at once, not after
 * PEER_DEAD_MS: a link that died silently must not eat the retries of
 * the QPs striped over it (ibv_rc_pingpong's are spent in half a
 * second).  Ten HELLOs, and twice the queueing a rate-limited port of
 * the testbed may add (tbf latency 50 ms), so congestion alone does not
 * look like silence; a stall of the whole node delays every port alike. */
#define PORT_SILENT_MS 100
/* A UDP peer that sent this node a HELLO of its own within this is sent
 * HELLOs of its own too (send_hello), configured here or not. */
#define ANSWER_UNICAST_MS 5000
/* A burst takes microseconds: the bound is for a poller that was stopped
 * (a debugger), which must not hold the restart up. */
#define RESTART_WAIT_MS 50

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* SRNIC_LOG=1 in the environment: the control core says what it sees
 * (links, peers).  Slow path only; the datapath never logs.  (A debugging
 * aid: stderr may be a file, on which the control core then may wait.) */
static int log_on = -1;

void ctl_log(const struct srnic_engine *eng, const char *fmt, ...)
{
	char line[512];
	struct timespec ts;
	struct tm tm;
	va_list ap;
	int n;

	if (log_on < 0) {
		const char *v = getenv("SRNIC_LOG");

		log_on = v && *v && strcmp(v, "0");
	}
	if (!log_on)
		return;
	/* (wall-clock time: lines from both nodes and the test's own
	 * events read as one story) */
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	/* One write a line: stderr is unbuffered, and srnicd's main thread
	 * writes there too ("node N serves ..." landed inside a line once,
	 * and a test waiting for it missed it). */
	n = snprintf(line, sizeof(line), "%02d:%02d:%02d.%03ld srnic[%s]: ",
		     tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
		     eng->cfg.node);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	n = strlen(line);
	line[n++] = '\n';
	fwrite(line, 1, n, stderr);
}


/* What every control frame says: who sends it, on which port. */
void srnic_control_pkt(const struct srnic_engine *eng, uint8_t op, unsigned p,
		       struct srnic_pkt *pkt)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = op;
	pkt->flags = eng->cfg.has_key ? SRNIC_F_AUTH : 0;
	pkt->src_inc = eng->node->inc;
	pkt->ipv4 = eng->cfg.ipv4;
	if (eng->cfg.has_ipv6)
		memcpy(pkt->ipv6, eng->cfg.ipv6, 16);
	pkt->port = p;
	memcpy(pkt->node_mac, eng->cfg.mac, 6);
	memcpy(pkt->node_name, eng->cfg.node, sizeof(pkt->node_name));
}

struct rte_mbuf *srnic_control_frame_to(struct srnic_engine *eng, uint8_t op,
					unsigned p, const uint8_t dst_mac[6],
					uint32_t dst_inc, uint16_t flags)
{
	struct srnic_pkt pkt;

	srnic_control_pkt(eng, op, p, &pkt);
	pkt.flags |= flags;
	pkt.dst_inc = dst_inc;
	return srnic_pkt_alloc(eng, &pkt, dst_mac, p, NULL);
}

/* A control frame (HELLO, BYE, BYE_ACK) announcing this node on port p. */
struct rte_mbuf *srnic_control_frame(struct srnic_engine *eng, uint8_t op,
				     unsigned p)
{
	return srnic_control_frame_to(eng, op, p, bcast, 0, 0);
}

/* The control core's tick queues its frames without waking anyone, and
 * wakes the node's sleeper once at its end (ctrl_ring): one wake-up a
 * tick, not one a frame. */
static __thread bool in_tick;
static __thread bool tick_queued;

static void ctrl_ring(struct srnic_engine *eng)
{
	srnic_ring(&eng->node->proc[0].bell);
}

/* m to the datapath that holds the port token next; false (m freed) if
 * the ring is full.  The node's sleeper wakes for it: with every process
 * idle nobody else would take the token. */
bool srnic_control_queue(struct srnic_engine *eng, struct rte_mbuf *m)
{
	if (rte_ring_mp_enqueue(eng->node->ctrl_tx, m) != 0) {
		rte_pktmbuf_free(m);
		return false;
	}
	if (in_tick)
		tick_queued = true;
	else
		ctrl_ring(eng);
	return true;
}

/* pkt to dst on port p, by the datapath (ctrl_tx): the mbuf, or NULL. */
static struct rte_mbuf *send_on(struct srnic_engine *eng,
				const struct srnic_pkt *pkt,
				const uint8_t dst[6], unsigned p)
{
	struct rte_mbuf *m = srnic_pkt_alloc(eng, pkt, dst, p, NULL);

	return m && srnic_control_queue(eng, m) ? m : NULL;
}

struct rte_mbuf *srnic_control_send(struct srnic_engine *eng,
				    const struct srnic_pkt *pkt, unsigned p)
{
	return send_on(eng, pkt, bcast, p);
}

struct rte_mbuf *srnic_control_send_peer(struct srnic_engine *eng,
					 const struct srnic_peer *peer,
					 struct srnic_pkt *pkt, unsigned p)
{
	pkt->dst_inc = peer->inc;
	return send_on(eng, pkt,
		       __atomic_load_n(&peer->up[p], __ATOMIC_ACQUIRE)
			       ? peer->mac[p]
			       : bcast,
		       p);
}

static inline uint64_t peer_hello_ms(const struct srnic_peer *peer,
				     uint64_t now);

/* How long a path of a UDP peer may be silent and still be said heard:
 * SILENT_HELLOS rounds of its probes, one path a HELLO (send_hello), or
 * PORT_SILENT_MS if longer, as its ports are judged. */
static uint64_t path_quiet_ms(const struct srnic_peer *peer, uint64_t now)
{
	uint64_t quiet = SILENT_HELLOS * SRNIC_UDP_PATHS *
			 peer_hello_ms(peer, now);

	return quiet < PORT_SILENT_MS ? PORT_SILENT_MS : quiet;
}

/* The paths of peer whose HELLOs port p heard lately; 0, not said, when
 * none (not heard on p at all). */
static uint8_t paths_heard(const struct srnic_peer *peer, unsigned p,
			   uint64_t now)
{
	uint64_t quiet = path_quiet_ms(peer, now);
	uint8_t heard = 0;
	unsigned k;

	for (k = 0; k < SRNIC_UDP_PATHS; k++)
		if (now - peer->path_heard[p][k] <= quiet)
			heard |= (uint8_t)(1u << k);
	return heard;
}

/* A HELLO (pkt) to the UDP peer at ipv4 on port p, two copies (send_hello;
 * not before ARP finds the way: arp.c asks from the start). */
static void hello_to(struct srnic_engine *eng, struct srnic_pkt *pkt,
		     unsigned p, uint32_t ipv4, uint64_t now)
{
	struct srnic_peer *peer = srnic_peer_find(eng, ipv4);
	unsigned probe = pkt->msn % SRNIC_UDP_PATHS, alive, k;
	uint8_t to[6], ok;
	struct rte_mbuf *m;

	if (!srnic_arp_ready(eng, p, ipv4))
		return;
	pkt->paths = peer ? paths_heard(peer, p, now) : 0;
	if (peer) {
		srnic_paths_measure(peer, p, now, pkt->path_loss,
				    pkt->path_delay);
	} else {
		memset(pkt->path_loss, SRNIC_PATH_LOSS_NONE,
		       sizeof(pkt->path_loss));
		memset(pkt->path_delay, SRNIC_PATH_DELAY_NONE,
		       sizeof(pkt->path_delay));
	}
	ok = peer ? __atomic_load_n(&peer->paths_ok[p], __ATOMIC_RELAXED) : 0;
	if (!ok)
		ok = 0xff;
	for (k = 0; k < SRNIC_UDP_PATHS; k++)
		if (ok >> ((probe + 1 + k) % SRNIC_UDP_PATHS) & 1)
			break;
	alive = (probe + 1 + k) % SRNIC_UDP_PATHS;
	srnic_wire_ip_mac(ipv4, to);
	for (k = 0; k < 2; k++) {
		if (k == 1 && alive == probe)
			break;
		m = srnic_pkt_alloc(eng, pkt, to, p, NULL);
		if (!m)
			break;
		m->hash.usr = k ? alive : probe;
		srnic_control_queue(eng, m);
	}
	pkt->paths = 0;
	memset(pkt->path_loss, 0, sizeof(pkt->path_loss));
	memset(pkt->path_delay, 0, sizeof(pkt->path_delay));
}

/* A HELLO on port p said how many steering classes its node has: when as
 * many as ours, the link's queues are all connected (the memif client
 * connects as many as it has, and both have classes^2), and the datapath
 * may use them all (port/steer.c); else only queue 0. */
static void steer_agree(struct srnic_engine *eng, unsigned p, uint8_t queues)
{
	struct srnic_port *port = &eng->node->port[p];
	uint8_t theirs = queues ? queues : 1;
	/* (a tap's kernel steers by this node's numbers alone: whatever
	 * the peer has, port/tun_steer.c) */
	uint8_t on = port->nq > 1 &&
		     (port->kernel_steer ||
		      (port->shared_memory && theirs == eng->node->classes));

	/* (the configuration's doing, so said whatever SRNIC_LOG says, once
	 * a life of the link: the link works, each process of both nodes
	 * through the port token, as with queues = 1) */
	if (port->shared_memory && theirs != eng->node->classes &&
	    port->steer_said != theirs) {
		port->steer_said = theirs;
		fprintf(stderr, "srnic[%s]: port %u: the peer's node has queues "
			"= %u, this one %u: the link does not steer (both ends "
			"must say the same)\n", eng->cfg.node, p, theirs,
			eng->node->classes);
	}
	if (on == port->steer)
		return;
	ctl_log(eng, "port %u: %s (the peer has %u queues, this node %u)",
		p, on ? "steering" : "no steering", queues ? queues : 1,
		eng->node->classes);
	__atomic_store_n(&port->steer, on, __ATOMIC_RELEASE);
	if (on)
		srnic_port_bells_steer(eng, p);
}

static void send_hello(struct srnic_engine *eng, unsigned p,
		       unsigned hello_ms)
{
	struct srnic_pkt pkt;
	struct rte_mbuf *m;
	uint64_t now = srnic_ms();
	unsigned i;

	/* Numbered per port, so that peers can tell how many they miss. */
	srnic_control_pkt(eng, SRNIC_OP_HELLO, p, &pkt);
	pkt.msn = eng->node->port[p].hello_seq++;
	pkt.hello_ms = (uint16_t)hello_ms;
	pkt.groups = __atomic_load_n(&eng->node->groups, __ATOMIC_ACQUIRE);
	pkt.dev = eng->cfg.port_dev[p];
	pkt.ndev = (uint8_t)eng->cfg.ndev;
	pkt.queues = eng->node->classes;
	m = srnic_pkt_alloc(eng, &pkt, bcast, p, NULL);

	if (m)
		srnic_control_queue(eng, m);
	/* The same HELLO to each configured peer (encap = udp), whom the
	 * broadcast does not reach beyond a router, and to each peer that
	 * sends us HELLOs of its own (its configuration names us).  It
	 * says which of the peer's paths we hear, and goes on two paths:
	 * the next of all in turn (a probe: a path that came back is heard
	 * again) and the next of those the peer hears (so that the peer
	 * hears us while any path works). */
	for (i = 0; i < eng->cfg.npeers; i++)
		hello_to(eng, &pkt, p, eng->cfg.peer[i], now);
	for (i = 0; i < srnic_npeers(eng->node); i++) {
		const struct srnic_peer *peer = &eng->node->peer[i];

		if (peer->ipv4 && peer->unicast_ms &&
		    now - peer->unicast_ms < ANSWER_UNICAST_MS &&
		    !srnic_config_has_peer(&eng->cfg, peer->ipv4))
			hello_to(eng, &pkt, p, peer->ipv4, now);
	}
}

struct srnic_peer *srnic_peer_find(struct srnic_engine *eng, uint32_t ipv4)
{
	return srnic_node_peer(eng->node, ipv4);
}

/* HELLO loss, a moving average over HELLO slots (1/16 each), per mille:
 * a port that loses this much more than the peer's best port leaves the
 * rotation, and comes back below the second mark.  At 50% loss that takes
 * about ten slots. */
#define LOSS_SHIFT 4
#define LOSSY_ENTER_PM 250
#define LOSSY_LEAVE_PM 100

static void hello_loss(struct srnic_engine *eng, struct srnic_peer *peer,
		       unsigned p, const struct srnic_pkt *pkt)
{
	uint32_t seq = pkt->msn, gap = seq - peer->hello_seq[p], best = 1000, k;
	uint32_t back = peer->hello_seq[p] - 1 - seq;
	/* A port counts afresh when it comes up, and when the peer's
	 * incarnation is new to it: a new process numbers from 0 again. */
	bool fresh = !peer->up[p] || peer->hello_inc[p] != pkt->src_inc;
	unsigned q;

	peer->hello_inc[p] = pkt->src_inc;
	if (fresh) {
		peer->hello_loss[p] = 0;
		peer->hello_seen[p] = 1;
	} else if (gap < 64) {
		/* gap HELLOs lost, then this one: one slot each */
		for (k = 0; k <= gap; k++)
			peer->hello_loss[p] =
				peer->hello_loss[p] -
				(peer->hello_loss[p] >> LOSS_SHIFT) +
				(k < gap ? 1000 >> LOSS_SHIFT : 0);
		peer->hello_seen[p] = gap + 1 < 64
					      ? peer->hello_seen[p] << (gap + 1) | 1
					      : 1;
	} else if (gap < 0x80000000u) {
		peer->hello_loss[p] = 1000;	/* a long silence */
		peer->hello_seen[p] = 1;
	} else {
		/* Earlier than the last one.  A copy of one that came (a UDP
		 * node hears the broadcast HELLO and the ones sent it alone,
		 * on two paths: send_hello) is no news; one that did not
		 * come yet was late (overtaken, a slower path), not lost
		 * after all: take back about what its absence cost. */
		if (back < 64 && !(peer->hello_seen[p] >> back & 1)) {
			peer->hello_seen[p] |= 1ull << back;
			peer->hello_loss[p] -=
				peer->hello_loss[p] < (1000 >> LOSS_SHIFT)
					? peer->hello_loss[p]
					: 1000 >> LOSS_SHIFT;
		}
		return;
	}
	peer->hello_seq[p] = seq + 1;
	/* The best port: among those with a history (a port just come up
	 * has none, and would make every other look bad). */
	for (q = 0; q < eng->node->nports; q++)
		if (peer->up[q] && !(q == p && fresh) &&
		    peer->hello_loss[q] < best)
			best = peer->hello_loss[q];
	for (q = 0; q < eng->node->nports; q++) {
		uint8_t lossy = peer->lossy[q];

		if (!lossy && peer->hello_loss[q] > best + LOSSY_ENTER_PM)
			lossy = 1;
		else if (lossy && peer->hello_loss[q] < best + LOSSY_LEAVE_PM)
			lossy = 0;
		if (lossy != peer->lossy[q]) {
			ctl_log(eng, "peer %s port %u %s (loses %u per mille "
				"of its HELLOs, best port %u)", peer->name, q,
				lossy ? "lossy: out of the rotation"
				      : "back in the rotation",
				peer->hello_loss[q], best);
			__atomic_store_n(&peer->lossy[q], lossy,
					 __ATOMIC_RELEASE);
		}
	}
}

bool srnic_peer_heard(const struct srnic_engine *eng,
		      const struct srnic_peer *peer)
{
	unsigned p;

	for (p = 0; p < eng->node->nports; p++)
		if (__atomic_load_n(&peer->up[p], __ATOMIC_ACQUIRE))
			return true;
	return false;
}

/* The peer in slot i was last heard this long before now (ms), on no
 * port any more; UINT64_MAX while a port still hears it. */
static uint64_t peer_silence(const struct srnic_engine *eng, unsigned i,
			     uint64_t now)
{
	const struct srnic_peer *peer = &eng->node->peer[i];
	uint64_t last = 0;
	unsigned p;

	if (srnic_peer_heard(eng, peer))
		return UINT64_MAX;
	for (p = 0; p < eng->node->nports; p++)
		if (peer->last_seen[p] > last)
			last = peer->last_seen[p];
	return now > last ? now - last : 0;
}

struct srnic_peer *srnic_peer_slot(struct srnic_engine *eng,
				   const struct srnic_pkt *pkt, uint64_t now)
{
	struct srnic_node *node = eng->node;
	struct srnic_peer *peer = NULL;
	uint64_t longest = SRNIC_PEER_FORGET_MS, quiet;
	/* (read once: in srnicd's node an attached process may write it) */
	unsigned i, n = __atomic_load_n(&node->npeers, __ATOMIC_RELAXED);
	bool grow = n < SRNIC_MAX_PEERS;

	if (grow) {
		peer = &node->peer[n];
	} else {
		for (i = 0; i < SRNIC_MAX_PEERS; i++) {
			quiet = peer_silence(eng, i, now);
			if (quiet != UINT64_MAX && quiet >= longest) {
				longest = quiet;
				peer = &node->peer[i];
			}
		}
		if (!peer) {
			eng->st->ctl_peers_full++;
			return NULL;
		}
		ctl_log(eng, "peer %s forgotten after %lu s of silence: its "
			"slot is for %s now", peer->name,
			(unsigned long)(longest / 1000), pkt->node_name);
		/* As a slot never used: its ports down already, integration
		 * and incarnations from nothing.  QPs still aimed at the old
		 * peer meet the new node's incarnation, and its BOOTING
		 * fails them. */
		memset(peer, 0, sizeof(*peer));
	}
	/* (the address before the id it is looked up by; a slot taken
	 * from another node has no id while its address changes:
	 * srnic_node_addr6 checks the two agree) */
	__atomic_store_n(&peer->ipv4, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(peer->ip6, pkt->ipv6, 16);
	__atomic_store_n(&peer->ipv4, pkt->ipv4, __ATOMIC_RELEASE);
	memcpy(peer->node_mac, pkt->node_mac, 6);
	memcpy(peer->name, pkt->node_name, sizeof(peer->name));
	/* (a new slot counts once its identity is there to be read) */
	if (grow)
		__atomic_store_n(&node->npeers, n + 1, __ATOMIC_RELEASE);
	return peer;
}

/* The interval a peer's HELLO says (an idle peer's are slower:
 * IDLE_TICK_MS).  When it shortens, the longer one still holds for
 * DEAD_HELLOS of it: the HELLOs sent before, and those of the same tick
 * on the peer's other ports, may come yet. */
static void hello_interval(struct srnic_peer *peer, uint16_t said,
			   uint64_t now)
{
	uint16_t ms = said > HELLO_MS_MAX ? HELLO_MS_MAX : said;

	if (ms < peer->hello_ms) {
		peer->hello_wide_ms = peer->hello_ms;
		peer->hello_wide_until =
			now + (uint64_t)DEAD_HELLOS * peer->hello_ms;
	}
	peer->hello_ms = ms;
}

/* A control frame from a peer, in on port p (where the peer is a UDP
 * node, rx says on which path and whether to this node alone:
 * port/udp.c). */
static void learn(struct srnic_engine *eng, const struct srnic_pkt *pkt,
		  unsigned p, uint32_t rx, uint64_t now)
{
	unsigned path = rx & 0xff;
	bool unicast = rx & SRNIC_UDP_RX_UNICAST;
	struct srnic_peer *peer;

	/* (another IPv6 address of our own id: a clash, said as any) */
	if (eng->cfg.has_ipv6 && pkt->ipv4 == eng->cfg.ipv4 &&
	    memcmp(pkt->ipv6, eng->cfg.ipv6, 16) && !eng->st->ctl_id_clashes++)
		ctl_log(eng, "another node (%.15s) says our id %08x, of "
			"another IPv6 address: refused", pkt->node_name,
			pkt->ipv4);
	if (p >= eng->node->nports || pkt->ipv4 == eng->cfg.ipv4 ||
	    !pkt->ipv4 || !pkt->src_inc)
		return;		/* ourselves, or nobody */
	/* A UDP node's frames name their sender by its IPv4 source
	 * (port/udp.c): one that says it is another node is not learned
	 * from, and the peer is reached through its next hop, found now. */
	if (eng->cfg.encap_udp) {
		/* (an IPv6 node's id is of the address it says: a frame
		 * from one whose id it is not, or from an IPv4 node, is
		 * refused as well) */
		if (srnic_wire_mac_ip(pkt->eth_src) != pkt->ipv4 ||
		    (eng->cfg.has_ipv6 &&
		     srnic_wire_ip6_id(pkt->ipv6) != pkt->ipv4)) {
			eng->st->ctl_addr_refused++;
			return;
		}
	}
	bool held = srnic_peer_lock(eng->node);
	peer = srnic_peer_find(eng, pkt->ipv4);
	/* Two IPv6 nodes whose addresses make one id: the one heard first
	 * keeps it, the other is refused (its frames would reach the
	 * first), and said so. */
	if (peer && eng->cfg.has_ipv6 &&
	    memcmp(peer->ip6, pkt->ipv6, 16)) {
		if (!eng->st->ctl_id_clashes++)
			ctl_log(eng, "peer %s: another node (%.15s) says the "
				"same id %08x, of another IPv6 address: refused",
				peer->name, pkt->node_name, pkt->ipv4);
		srnic_peer_unlock(eng->node, held);
		return;
	}
	if (!peer)
		peer = srnic_peer_slot(eng, pkt, now);
	/* (after the slot: an IPv6 peer's address is known by it) */
	if (eng->cfg.encap_udp)
		srnic_arp_want(eng, p, pkt->ipv4);
	/* A late or replayed frame of a process the peer has had since: it
	 * must not bring that incarnation back.  A lower boot count is
	 * taken only once the peer is heard on no port: a node that lost
	 * its state directory counts from 1 again. */
	if (peer && srnic_peer_older(peer, pkt->src_inc) &&
	    (srnic_peer_retired(peer, pkt->src_inc) ||
	     srnic_peer_heard(eng, peer))) {
		eng->st->ctl_refused++;
		peer = NULL;
	}
	if (peer) {
		if (pkt->opcode == SRNIC_OP_BYE) {
			ctl_log(eng, "peer %s said goodbye on port %u", peer->name,
			     p);
			__atomic_store_n(&peer->up[p], 0, __ATOMIC_RELEASE);
		} else {
			if (!peer->up[p] || peer->inc != pkt->src_inc)
				ctl_log(eng, "peer %s up on port %u "
				     "(incarnation %08x)", peer->name, p,
				     pkt->src_inc);
			if (pkt->opcode == SRNIC_OP_HELLO) {
				hello_loss(eng, peer, p, pkt);
				hello_interval(peer, pkt->hello_ms, now);
				/* (the multicast RDMA senders' members) */
				__atomic_store_n(&peer->groups, pkt->groups,
						 __ATOMIC_RELEASE);
				/* (its adapters: where its QPs are) */
				__atomic_store_n(&peer->dev_on[p], pkt->dev,
						 __ATOMIC_RELEASE);
				__atomic_store_n(&peer->ndev, pkt->ndev,
						 __ATOMIC_RELEASE);
				steer_agree(eng, p, pkt->queues);
			}
			if (peer->inc != pkt->src_inc) {
				if (peer->inc)
					peer->retired[peer->nretired++ %
						      SRNIC_RETIRED] =
						peer->inc;
				/* (what its paths were is its old self's) */
				srnic_paths_forget(peer);
				memset(peer->path_heard, 0,
				       sizeof(peer->path_heard));
				srnic_integrate_new_incarnation(peer);
				srnic_tpt_forget(eng, peer);
			}
			/* (a UDP peer's paths: which we hear, which it
			 * does; and whether it sends us HELLOs of its own) */
			if (pkt->opcode == SRNIC_OP_HELLO) {
				if (path < SRNIC_UDP_PATHS)
					peer->path_heard[p][path] = now;
				if (pkt->paths) {
					srnic_paths_hear(peer, p, pkt->paths);
					srnic_paths_weigh(peer, p,
							  pkt->path_loss,
							  pkt->path_delay,
							  now);
					peer->paths_at[p] = now;
				} else if (unicast && peer->paths_ok[p]) {
					/* It heard us, and hears us no more,
					 * on any path: the way to it (a
					 * router's address) may have moved. */
					srnic_arp_recheck(eng, p, peer->ipv4);
					srnic_paths_hear(peer, p, 0);
				}
				if (unicast)
					peer->unicast_ms = now;
			}
			/* The MAC first, then "up": the datapath reads them
			 * in the other order. */
			memcpy(peer->mac[p], pkt->eth_src, 6);
			__atomic_store_n(&peer->inc, pkt->src_inc,
					 __ATOMIC_RELEASE);
			peer->last_seen[p] = now;
			if (peer->silent[p]) {
				ctl_log(eng, "peer %s heard on port %u again",
					peer->name, p);
				__atomic_store_n(&peer->silent[p], 0,
						 __ATOMIC_RELEASE);
			}
			__atomic_store_n(&peer->up[p], 1, __ATOMIC_RELEASE);
		}
	}
	srnic_peer_unlock(eng->node, held);
}

static void drain_rx(struct srnic_engine *eng, uint64_t now)
{
	struct rte_mbuf *m;

	while (rte_ring_sc_dequeue(eng->node->ctrl_rx, (void **)&m) == 0) {
		struct srnic_pkt pkt;

		if (srnic_wire_is_arp(rte_pktmbuf_mtod(m, const uint8_t *),
				      rte_pktmbuf_data_len(m)))
			srnic_arp_rx(eng, m, now);
		else if (srnic_wire_is_icmp6(rte_pktmbuf_mtod(m,
							      const uint8_t *),
					     rte_pktmbuf_data_len(m)))
			srnic_nd_rx(eng, m, now);
		else if (srnic_wire_decode(rte_pktmbuf_mtod(m, const uint8_t *),
				      rte_pktmbuf_data_len(m),
				      &pkt) == SRNIC_WIRE_OK) {
			if (pkt.opcode == SRNIC_OP_BOOT_ACK ||
			    pkt.opcode == SRNIC_OP_RDMA_READY)
				srnic_integrate_rx(eng, &pkt, m->port);
			else if (pkt.opcode == SRNIC_OP_SVC_ANNOUNCE)
				srnic_service_rx(eng, &pkt, now);
			else if (pkt.opcode == SRNIC_OP_TPT_UPDATE ||
				 pkt.opcode == SRNIC_OP_TPT_ACK)
				srnic_tpt_rx(eng, &pkt, m->port);
			else
				learn(eng, &pkt, m->port,
				      eng->cfg.encap_udp ? m->hash.usr
							 : SRNIC_UDP_NO_PATH,
				      now);
		}
		rte_pktmbuf_free(m);
	}
}

/* The interval the peer is judged by. */
static inline uint64_t peer_hello_ms(const struct srnic_peer *peer,
				     uint64_t now)
{
	uint64_t ms = peer->hello_ms ? peer->hello_ms : HELLO_MS;

	if (now < peer->hello_wide_until && peer->hello_wide_ms > ms)
		ms = peer->hello_wide_ms;
	return ms;
}

/* Ports of a peer gone quiet while another still hears it (PORT_SILENT_MS,
 * or SILENT_HELLOS of its HELLO intervals if longer).  The measure is
 * relative: it needs no clock of the peer's, and a node that stalls (or a
 * peer that stalls) silences every port alike. */
static void watch_silence(struct srnic_engine *eng, struct srnic_peer *peer,
			  uint64_t now)
{
	uint64_t freshest = 0, quiet = SILENT_HELLOS * peer_hello_ms(peer, now);
	unsigned p;

	if (quiet < PORT_SILENT_MS)
		quiet = PORT_SILENT_MS;

	for (p = 0; p < eng->node->nports; p++)
		if (peer->up[p] && peer->last_seen[p] > freshest)
			freshest = peer->last_seen[p];
	for (p = 0; p < eng->node->nports; p++)
		if (peer->up[p] && !peer->silent[p] &&
		    peer->last_seen[p] + quiet < freshest) {
			ctl_log(eng, "peer %s silent on port %u for %lu ms: "
				"out of the rotation", peer->name, p,
				(unsigned long)(freshest - peer->last_seen[p]));
			__atomic_store_n(&peer->silent[p], 1,
					 __ATOMIC_RELEASE);
			peer->silenced++;
		}
}

/* When, on the control core's clock (ms), the datapath last polled every
 * port: frames that came before are on ctrl_rx, read it after this. */
static uint64_t ports_polled_ms(const struct srnic_engine *eng, uint64_t now)
{
	uint64_t at = __atomic_load_n(&eng->node->ports_polled,
				      __ATOMIC_ACQUIRE);
	uint64_t tsc = srnic_now(), ago;

	if (!at)
		return 0;
	ago = at < tsc ? (tsc - at) / (eng->tsc_hz / 1000) : 0;
	return ago < now ? now - ago : 0;
}

/* Port p's link as the port reports it now (a kernel port also needs its
 * carrier); a change is logged, and a link that came up starts a new life
 * (link_gen). */
static uint8_t read_link(struct srnic_engine *eng, unsigned p, uint64_t now)
{
	struct srnic_port *port = &eng->node->port[p];
	struct rte_eth_link link;
	uint8_t up;

	memset(&link, 0, sizeof(link));
	if (port->started)
		rte_eth_link_get_nowait(port->port_id, &link);
	up = link.link_status == RTE_ETH_LINK_UP && srnic_port_carrier(port);
	if (up == port->link_up)
		return up;
	ctl_log(eng, "port %u link %s", p, up ? "up" : "down");
	port->down_since = now;
	/* (a new peer says anew how many queues it connected) */
	__atomic_store_n(&port->steer, 0, __ATOMIC_RELEASE);
	port->steer_said = 0;
	if (!up)
		return up;
	/* A new life of the link: a new peer, new rings. */
	__atomic_store_n(&port->link_gen, port->link_gen + 1, __ATOMIC_RELEASE);
	/* (memif memory faulted in now, not by the datapath packet by
	 * packet: prefault.c) */
	if (port->shared_memory)
		srnic_ports_prefault_shared();
	return up;
}

/*
 * A memif client does not reconnect by itself once its server went away
 * (a peer process that ended or restarted): restart a port that stays
 * down, once the datapath has let go, and not before a handshake had its
 * time: cutting one short makes DPDK 22.11's memif server panic.
 * (started_at may be later than now: srnic_port_retry_start reads the
 * clock again, so no subtraction of it.)
 */
static void restart_if_stuck(struct srnic_engine *eng, unsigned p,
			     uint64_t now)
{
	struct srnic_port *port = &eng->node->port[p];

	if (!port->started || !port->reconnects ||
	    port->down_since + SRNIC_HANDSHAKE_MS > now ||
	    port->started_at + SRNIC_HANDSHAKE_MS > now)
		return;
	/* link_up is 0: once the burst it may be in ends, the datapath no
	 * longer touches the port. */
	__atomic_store_n(&port->link_up, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&port->steer, 0, __ATOMIC_SEQ_CST);
	/* (a steering class takes no port token: its own word says when it
	 * is in its queues) */
	if (!srnic_port_classes_out(eng, p, RESTART_WAIT_MS)) {
		ctl_log(eng, "port %u: a steering class is in its queues, "
			"restart put off", p);
		return;
	}
	ctl_log(eng, "port %u: no link for %lu ms, restarting it", p,
		(unsigned long)(now - port->started_at));
	/* No poller in a port while it restarts: srnicd's node, none of its
	 * processes (the port token); a node of its own, none of this
	 * process's threads (the port I/O guard, srnic_port_guard.h). */
	if (eng->node->shared)
		srnic_ports_hold(eng, 0);
	else
		srnic_port_io_close(RESTART_WAIT_MS);
	srnic_port_restart(eng, p);
	if (eng->node->shared)
		srnic_ports_give(eng);
	else
		srnic_port_io_open();
	port->down_since = now;
}

/* The device's one verbs port is active while any of ours is up: tell the
 * program when that changes. */
static void report_device_active(struct srnic_engine *eng)
{
	int8_t active = srnic_ports_up(eng->node) > 0;

	if (eng->node->dev_active >= 0 && active != eng->node->dev_active)
		srnic_event(active ? SRNIC_EV_PORT_ACTIVE : SRNIC_EV_PORT_DOWN,
			    NULL);
	eng->node->dev_active = active;
}

/* A peer is down on a port that has carried no frame of it for
 * PEER_DEAD_MS, or DEAD_HELLOS of its HELLO intervals, up to polled, or
 * that nobody polls. */
static void watch_peer(struct srnic_engine *eng, struct srnic_peer *peer,
		       uint64_t polled, uint64_t now)
{
	uint64_t dead = DEAD_HELLOS * peer_hello_ms(peer, now);
	unsigned p;

	if (dead < PEER_DEAD_MS)
		dead = PEER_DEAD_MS;

	for (p = 0; p < eng->node->nports; p++) {
		if (peer->up[p] && (peer->last_seen[p] + dead < polled ||
				    !eng->node->port[p].polling)) {
			ctl_log(eng, "peer %s down on port %u", peer->name, p);
			__atomic_store_n(&peer->up[p], 0, __ATOMIC_RELEASE);
		}
		/* (a UDP peer that stopped saying which paths it hears:
		 * every path again, until it says) */
		if (peer->paths_ok[p] && peer->paths_at[p] + dead < polled)
			srnic_paths_hear(peer, p, 0);
	}
	watch_silence(eng, peer, now);
}

/*
 * Link state and peer liveness: what striping may use.  polled is when
 * this node last read its ports (ports_polled_ms).  A peer is dead after
 * PEER_DEAD_MS without a frame up to then, not up to now: a poller
 * descheduled with the port token held (20-200 ms, measured beside busy
 * programs on two CPUs) leaves the peer's HELLOs waiting in the ports, and
 * judging by now would take every peer for dead on every port just before
 * they are read, and a pingpong beside busy programs ran out of retries
 * that way.
 */
static void watch_links(struct srnic_engine *eng, uint64_t now,
			uint64_t polled)
{
	unsigned p, i;

	for (p = 0; p < eng->node->nports; p++) {
		uint8_t up;

		srnic_port_retry_start(eng, p);
		up = read_link(eng, p, now);
		if (!up)
			restart_if_stuck(eng, p, now);
		__atomic_store_n(&eng->node->port[p].link_up, up,
				 __ATOMIC_RELEASE);
	}
	report_device_active(eng);
	bool held = srnic_peer_lock(eng->node);
	for (i = 0; i < srnic_npeers(eng->node); i++)
		watch_peer(eng, &eng->node->peer[i], polled, now);
	srnic_peer_unlock(eng->node, held);
}

/* When this node itself last made progress: its control core's last tick,
 * and the datapath's iteration count and when it last changed. */
struct self_watch {
	uint64_t tick, dp_epoch, dp_moved;
	bool unpolled;	/* the ports have gone unpolled for a while */
	/* the last stretch this control core was off its core (its ticks
	 * that late), from its tick before to its tick after (ms) */
	uint64_t away_from, away_to;
};

/* SRNIC_LOG: say when this node itself stalled (its control core, or its
 * datapath), which peers would take for a silent or dead link. */
static void watch_self(struct srnic_engine *eng, struct self_watch *w,
		       uint64_t now, uint64_t polled, bool idle,
		       unsigned slept_ms)
{
	uint64_t dp = __atomic_load_n(&eng->dp_epoch, __ATOMIC_ACQUIRE);
	bool late = w->tick && now - w->tick > slept_ms + 4 * TICK_MS,
	     unpolled;

	if (late) {
		ctl_log(eng, "control core stalled: %lu ms between ticks",
			(unsigned long)(now - w->tick));
		w->away_from = w->tick;
		w->away_to = now;
	}
	w->tick = now;
	/* (the datapath is judged only across ticks that came on time) */
	if (dp != w->dp_epoch || late) {
		/* (asleep, it runs every QUIET_NODE_US at least) */
		if (!late && !idle && w->dp_moved &&
		    now - w->dp_moved > 5 * TICK_MS)
			ctl_log(eng, "datapath stalled for %lu ms",
				(unsigned long)(now - w->dp_moved));
		w->dp_epoch = dp;
		w->dp_moved = now;
	}
	/* (asleep, the node polls its ports every QUIET_NODE_US) */
	unpolled = !idle && polled && now - polled > 5 * TICK_MS;
	if (unpolled && !w->unpolled)
		ctl_log(eng, "ports unpolled for %lu ms: peers not judged",
			(unsigned long)(now - polled));
	w->unpolled = unpolled;
}

void srnic_hello_now(struct srnic_node *node)
{
	__atomic_store_n(&node->hello_now, 1, __ATOMIC_RELEASE);
	srnic_ring(&node->ctrl_bell);
}

/* The node asleep: the next tick after ms, or at once for HELLOs asked
 * for (a service taken, a group claimed, a GID to resolve). */
static void idle_sleep(struct srnic_node *node, unsigned ms)
{
	__atomic_store_n(&node->ctrl_bell.sleeping, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&node->hello_now, __ATOMIC_RELAXED))
		srnic_futex_wait(&node->ctrl_bell.wake, 0, ms * 1000ull);
	__atomic_store_n(&node->ctrl_bell.sleeping, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&node->ctrl_bell.wake, 0, __ATOMIC_RELAXED);
}

/* A peer is heard whose HELLOs do not say their interval (an older
 * srnic): it would judge ours by PEER_DEAD_MS alone. */
static bool unsaid_peers(struct srnic_engine *eng)
{
	unsigned i, p;

	for (i = 0; i < srnic_npeers(eng->node); i++)
		for (p = 0; p < eng->node->nports; p++)
			if (eng->node->peer[i].up[p] &&
			    !eng->node->peer[i].hello_ms)
				return true;
	return false;
}

/*
 * Up to when the peers' silence is judged: polled (the last poll of the
 * ports), but not past the start of this control core's own last stall
 * for PEER_DEAD_MS after it ended.  Off its core, it sent no HELLOs either,
 * and on a host where the nodes share CPUs the peers' control cores are
 * off theirs at the same moments: back, both took each other for dead on
 * every port (a run of 49-steering: 400-840 ms between ticks on both nodes
 * beside eight busy programs on two CPUs, and every QP between them then
 * ran out of retries; the kernel's autogroup scheduling, which
 * ./srnic setup turns off, made such stalls long: docs/architecture.md,
 * "Scheduling").  The peer gets the time to be heard again.
 */
static uint64_t judged_until(const struct self_watch *w, uint64_t now,
			     uint64_t polled)
{
	if (w->away_to && now - w->away_to < PEER_DEAD_MS &&
	    polled > w->away_from)
		return w->away_from;
	return polled;
}

static void *control_thread(void *arg)
{
	struct srnic_engine *eng = arg;
	uint64_t last_hello = 0;
	struct self_watch self = {0};
	bool idle = false, was_idle;
	/* (a service's members announce it with the HELLOs: ten of them in
	 * svc_dead_ms) */
	unsigned own_idle_ms = eng->cfg.nsvc &&
				       eng->cfg.svc_dead_ms / 10 < IDLE_TICK_MS
				       ? eng->cfg.svc_dead_ms / 10
				       : IDLE_TICK_MS;
	unsigned idle_ms = TICK_MS, slept_ms = TICK_MS;

	if (own_idle_ms < TICK_MS)
		own_idle_ms = TICK_MS;

	pthread_setname_np(pthread_self(), "srnic-ctrl");
	while (!__atomic_load_n(&eng->node->ctrl_stop, __ATOMIC_ACQUIRE)) {
		uint64_t now = srnic_ms();
		uint64_t polled = ports_polled_ms(eng, now);
		unsigned p;

		in_tick = true;
		watch_self(eng, &self, now, polled, idle, slept_ms);
		drain_rx(eng, now);
		srnic_arp_tick(eng, now);
		watch_links(eng, now, judged_until(&self, now, polled));
		was_idle = idle;
		idle = __atomic_load_n(&eng->node->dp_deep, __ATOMIC_RELAXED);
		if (idle)
			idle_ms = unsaid_peers(eng) &&
						  own_idle_ms > UNSAID_IDLE_TICK_MS
					  ? UNSAID_IDLE_TICK_MS
					  : own_idle_ms;
		if (now - last_hello >= (idle ? idle_ms : HELLO_MS) ||
		    (idle && !was_idle) ||
		    __atomic_exchange_n(&eng->node->hello_now, 0,
					__ATOMIC_ACQ_REL)) {
			last_hello = now;
			for (p = 0; p < eng->node->nports; p++)
				if (eng->node->port[p].polling) {
					send_hello(eng, p,
						   idle ? idle_ms : HELLO_MS);
					srnic_services_announce(eng, p);
				}
		}
		srnic_services_tick(eng, now);
		srnic_integrate_tick(eng, now);
		srnic_tpt_tick(eng, now);
		srnic_mcast_program_ports(eng);
		in_tick = false;
		if (tick_queued && !srnic_ports_send_control(eng))
			ctrl_ring(eng);
		tick_queued = false;
		slept_ms = idle ? idle_ms : TICK_MS;
		if (idle)
			idle_sleep(eng->node, idle_ms);
		else
			usleep(TICK_MS * 1000);
	}
	return NULL;
}

/* This node as a peer of its own (loopback, SRNIC_PEER_SELF): integrated
 * with itself in its current incarnation, reached through the loopback
 * port only, where its "port" has our own MAC. */
static void self_init(struct srnic_engine *eng)
{
	struct srnic_peer *self = &eng->node->peer[SRNIC_PEER_SELF];

	memset(self, 0, sizeof(*self));
	self->ipv4 = eng->cfg.ipv4;
	memcpy(self->ip6, eng->cfg.ipv6, 16);
	self->inc = self->ok_inc = self->ready_inc = eng->node->inc;
	memcpy(self->node_mac, eng->cfg.mac, 6);
	memcpy(self->mac[SRNIC_PORT_LOOP], eng->cfg.mac, 6);
	snprintf(self->name, sizeof(self->name), "%s", eng->cfg.node);
}

int srnic_control_start(struct srnic_engine *eng)
{
	unsigned i, p;

	/* (awake until its datapath says otherwise) */
	eng->node->dp_deep = 0;
	/* Whatever was known before a restart of the engine must be heard
	 * again, and our new incarnation integrated with every peer. */
	for (i = 0; i < srnic_npeers(eng->node); i++) {
		for (p = 0; p < SRNIC_MAX_PORTS; p++)
			eng->node->peer[i].up[p] = 0;
		eng->node->peer[i].ok_inc = eng->node->peer[i].ready_inc = 0;
		srnic_integrate_new_incarnation(&eng->node->peer[i]);
		srnic_tpt_forget(eng, &eng->node->peer[i]);
	}
	srnic_tpt_forget_own(eng->node);
	self_init(eng);
	/* (services start over: held by nobody this node knows of, its own
	 * listening svc_dead_ms before they claim anything) */
	memset(eng->node->svc, 0, sizeof(eng->node->svc));
	srnic_services_init(eng);
	eng->node->ctrl_stop = 0;
	eng->node->hello_now = 1;
	eng->node->dev_active = -1;
	if (pthread_create(&eng->node->ctrl_thread, NULL, control_thread, eng))
		return -EAGAIN;
	eng->node->ctrl_started = 1;
	if (srnic_files_start(eng)) {
		srnic_control_stop(eng);
		return -EAGAIN;
	}
	return 0;
}

void srnic_control_stop(struct srnic_engine *eng)
{
	struct rte_mbuf *m;

	if (!eng->node->ctrl_started)
		return;
	__atomic_store_n(&eng->node->ctrl_stop, 1, __ATOMIC_RELEASE);
	/* (the control core and the file thread may sleep for an idle
	 * node's tick: control_idle_sleep, files.c) */
	srnic_ring(&eng->node->ctrl_bell);
	srnic_futex_wake(&eng->node->ctrl_stop, INT_MAX);
	pthread_join(eng->node->ctrl_thread, NULL);
	srnic_files_stop(eng);
	eng->node->ctrl_started = 0;
	while (rte_ring_sc_dequeue(eng->node->ctrl_rx, (void **)&m) == 0)
		rte_pktmbuf_free(m);
}

/* The node a GID names: an IPv4-mapped GID by address (an IPv6 node's
 * GID by its own), a link-local one by the node MAC it embeds (EUI-64). */
static struct srnic_peer *peer_by_gid(struct srnic_engine *eng,
				      const uint8_t gid[16])
{
	static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0,
					     0, 0, 0, 0, 0xff, 0xff};
	unsigned i;

	/* an IPv6 node's GID 1: its address */
	if (eng->cfg.has_ipv6 && !memcmp(gid, eng->cfg.ipv6, 16))
		return &eng->node->peer[SRNIC_PEER_SELF];
	if (eng->cfg.has_ipv6 && gid[0] != 0xfe) {
		struct srnic_peer *peer =
			srnic_peer_find(eng, srnic_wire_ip6_id(gid));

		return peer && !memcmp(peer->ip6, gid, 16) ? peer : NULL;
	}
	if (!memcmp(gid, v4mapped, 12)) {
		uint32_t ip;
		struct srnic_peer *holder;

		memcpy(&ip, gid + 12, 4);
		if (ntohl(ip) == eng->cfg.ipv4)
			return &eng->node->peer[SRNIC_PEER_SELF];
		/* a service's address: the node that holds it now */
		holder = srnic_service_holder(eng, ntohl(ip));
		return holder ? holder : srnic_peer_find(eng, ntohl(ip));
	}
	if (gid[0] == 0xfe && gid[1] == 0x80 && gid[11] == 0xff &&
	    gid[12] == 0xfe) {
		uint8_t mac[6] = {gid[8] ^ 2, gid[9], gid[10],
				  gid[13], gid[14], gid[15]};

		if (!memcmp(eng->cfg.mac, mac, 6))
			return &eng->node->peer[SRNIC_PEER_SELF];
		for (i = 0; i < srnic_npeers(eng->node); i++)
			if (!memcmp(eng->node->peer[i].node_mac, mac, 6))
				return &eng->node->peer[i];
	}
	return NULL;
}

static bool peer_reachable(const struct srnic_engine *eng,
			   const struct srnic_peer *peer)
{
	unsigned p;

	if (peer == &eng->node->peer[SRNIC_PEER_SELF])
		return true;
	for (p = 0; p < eng->node->nports; p++)
		if (__atomic_load_n(&peer->up[p], __ATOMIC_ACQUIRE))
			return true;
	return false;
}

/* Has peer been heard on every port whose link is up?  (A QP connected
 * before then stripes over fewer paths until the next HELLO: a short
 * transfer right after connecting would use one port of two.) */
static bool heard_everywhere(const struct srnic_engine *eng,
			     const struct srnic_peer *peer)
{
	unsigned p;

	if (peer == &eng->node->peer[SRNIC_PEER_SELF])
		return true;
	for (p = 0; p < eng->node->nports; p++)
		if (__atomic_load_n(&eng->node->port[p].link_up,
				    __ATOMIC_ACQUIRE) &&
		    !__atomic_load_n(&peer->up[p], __ATOMIC_ACQUIRE))
			return false;
	return true;
}

/* How long a resolution waits, once the peer is reachable, for it to be
 * heard on the other ports with a link up: a few HELLOs. */
#define SETTLE_MS (5 * HELLO_MS)

struct srnic_peer *srnic_control_resolve(struct srnic_engine *eng,
					 const uint8_t gid[16],
					 unsigned wait_ms)
{
	uint64_t deadline = srnic_ms() + wait_ms, settled = 0;
	struct srnic_peer *peer;

	srnic_hello_now(eng->node);
	for (;;) {
		bool held = srnic_peer_lock(eng->node);
		peer = peer_by_gid(eng, gid);
		srnic_peer_unlock(eng->node, held);
		/* Reachable is enough to connect; integrated too spares
		 * the first RDMA a drop and a resend, and heard on every
		 * live port its first transfer a single path. */
		if (peer && peer_reachable(eng, peer) &&
		    srnic_peer_integrated(peer)) {
			if (!settled)
				settled = srnic_ms() + SETTLE_MS;
			if (heard_everywhere(eng, peer) ||
			    srnic_ms() >= settled)
				return peer;
		}
		if (srnic_ms() >= deadline)
			return peer && peer_reachable(eng, peer) ? peer : NULL;
		usleep(2000);
	}
}
