/* SPDX-License-Identifier: MIT */
/*
 * control/: the control core (peers, links, HELLO loss, integration,
 * multicast groups' filters), the file thread, the node's counters, and
 * the peer table's lock and the incarnation checks the datapath shares
 * with it.
 */
#ifndef SRNIC_CONTROL_H
#define SRNIC_CONTROL_H

#include "srnic_sched.h"
#include "srnic_port.h"

/* stats.c: the node's counters, as a NIC's are the device's: in srnicd's
 * node those of every process, gone ones too, added up (srtt_us, rto_us
 * and uc_give_up_us, a QP's last sample, as the highest of them). */
void srnic_stats_node(const struct srnic_engine *eng, struct srnic_stats *t);
/* ... and add one process's to t. */
void srnic_stats_add(struct srnic_stats *t, const struct srnic_stats *st);
/* A drop reason's name in the counters ("no_qp"...). */
const char *srnic_drop_name(enum srnic_drop d);
/* The node's counters and state, to o (counters.h): its stats file's
 * text or JSON; srnicd adds its processes to the JSON. */
struct srnic_out;
void srnic_stats_out(struct srnic_out *o, struct srnic_engine *eng);
/* stats_file and stats_file.json, afresh */
void srnic_stats_write(struct srnic_engine *eng);
/* files.c: the thread that writes and reads the node's files (it stops
 * with the control core, on ctrl_stop) */
int srnic_files_start(struct srnic_engine *eng);
/* capture.c: ./srnic capture's requests, served by the file thread */
void srnic_capture_poll(struct srnic_engine *eng);
bool srnic_capture_active(void);
void srnic_files_stop(struct srnic_engine *eng);

/* leave.c: leaving links so that the peer survives it */
void srnic_leave_answer(struct srnic_engine *eng, unsigned p);
void srnic_leave_links(struct srnic_engine *eng);

/* mcast.c: multicast groups */
/* What kind of multicast GID gid is (SRNIC_MCAST_IPV4, _IPV6 or 0: none),
 * and its wire id. */
uint8_t srnic_mcast_gid(const uint8_t gid[16], uint32_t *id);
/* Datapath (an engine call): UD QP qp joins, or leaves, the group of
 * (normalised) GID gid; 0 or -errno. */
int srnic_mcast_join(struct srnic_engine *eng, struct srnic_qp *qp,
		     const uint8_t gid[16]);
int srnic_mcast_leave(struct srnic_engine *eng, struct srnic_qp *qp,
		      const uint8_t gid[16]);
/* Datapath, while destroying QP qpn: it leaves every group. */
void srnic_mcast_forget_qp(struct srnic_engine *eng, uint32_t qpn);
/* srnicd: a process gone leaves every group. */
void srnic_mcast_release_proc(struct srnic_node *node, unsigned slot);
/* service.c: this node's QPs of sv bound to clients, all processes'; a
 * departed process's count taken back (srnicd, as it releases slot). */
uint32_t srnic_service_bound(const struct srnic_service *sv);
/* Any thread: a member of sv (this node one too) better than this node
 * is heard (within svc_dead_ms): whom a handover would go to. */
bool srnic_service_better_live(const struct srnic_engine *eng,
			       const struct srnic_service *sv);
void srnic_service_release_proc(struct srnic_node *node, unsigned slot);
/* Multicast RDMA WRITE's part of the node: slot's process holds group g's
 * region here (0, or -EBUSY: another holds it), or lets go of it; HELLO
 * announces the node's map (mcast.c). */
int srnic_group_claim(struct srnic_node *node, unsigned slot, unsigned g);
void srnic_group_unclaim(struct srnic_node *node, unsigned slot, unsigned g);
/* Every group's region slot's process held (it is gone). */
void srnic_group_release_proc(struct srnic_node *node, unsigned slot);
void srnic_mcast_program_ports(struct srnic_engine *eng);

/* arp.c, a UDP node's: an ARP frame in from port m->port (answered,
 * learned from); the tick's requests (hops the ports' senders miss, the
 * routes' gateways, the configured peers, unanswered and old entries,
 * the node's own address as it starts); and the next hop of dst on port
 * p resolved before it is needed.  Control core. */
void srnic_arp_rx(struct srnic_engine *eng, struct rte_mbuf *m,
		  uint64_t now);
void srnic_arp_tick(struct srnic_engine *eng, uint64_t now);
void srnic_arp_want(struct srnic_engine *eng, unsigned p, uint32_t dst);
/* The peer at dst stopped hearing us on port p: its next hop's address
 * is asked for again now (the hop may have moved). */
void srnic_arp_recheck(struct srnic_engine *eng, unsigned p, uint32_t dst);
/* Whether the Ethernet address of dst's next hop on port p is known. */
bool srnic_arp_ready(struct srnic_engine *eng, unsigned p, uint32_t dst);
/* ... and the neighbour table that ARP and neighbour discovery fill:
 * hop ip's entry on port p (NULL: none), made if need be (an IPv6 node's
 * hop: its id, at address ip6), its Ethernet address heard; whether ip
 * is a hop of ours (a gateway, a peer). */
struct srnic_neigh *srnic_neigh_find(struct srnic_node *node, uint32_t ip,
				     unsigned p);
struct srnic_neigh *srnic_neigh_entry(struct srnic_engine *eng, uint32_t ip,
				      const uint8_t *ip6, unsigned p,
				      uint64_t now);
void srnic_neigh_learned(struct srnic_engine *eng, struct srnic_neigh *n,
			 const uint8_t mac[6], uint64_t now);
bool srnic_neigh_ours(struct srnic_engine *eng, uint32_t ip);
/* Whether entry n is known at Ethernet address mac. */
bool srnic_neigh_is(const struct srnic_neigh *n, const uint8_t mac[6]);
/* A frame of len bytes (at *f) to go out of port p, for the control
 * core to queue: NULL when the pool has none. */
struct rte_mbuf *srnic_neigh_frame(struct srnic_engine *eng, unsigned p,
				   uint32_t len, uint8_t **f);

/* nd.c, an IPv6 UDP node's neighbour discovery (ARP's part for it): an
 * ICMPv6 frame in from port m->port; a solicitation of target's address
 * on port p; the node's own address said on port p.  Control core. */
void srnic_nd_rx(struct srnic_engine *eng, struct rte_mbuf *m, uint64_t now);
void srnic_nd_solicit(struct srnic_engine *eng, unsigned p,
		      const uint8_t target[16]);
void srnic_nd_announce(struct srnic_engine *eng, unsigned p);

/* mld.c, an IPv6 UDP node's MLD: its solicited-node group reported on
 * port p (asked: answering a query, else joining; in MLDv1 while a
 * querier of it is heard there, as of now); an ICMPv6 frame in,
 * false when it is no MLD query (nd.c's then); the answer to a query, on
 * port p once its moment came.  Control core. */
void srnic_mld_report(struct srnic_engine *eng, unsigned p, bool asked,
		      uint64_t now);
bool srnic_mld_rx(struct srnic_engine *eng, struct rte_mbuf *m, uint64_t now);
void srnic_mld_tick(struct srnic_engine *eng, unsigned p, uint64_t now);

/* paths.c, a UDP node's: how well each path to a peer carries (on our
 * port p).  Control core.  hear: the peer hears our paths ok (0: it does
 * not say), the plan laid out for them; forget: a new incarnation of the
 * peer, every path even again; measure: the loss of each of the peer's
 * paths to us lately (256ths, SRNIC_PATH_LOSS_NONE: nothing new) and its
 * delay against the best one's (SRNIC_PATH_DELAY_NONE: nothing new), for
 * our HELLO to it; weigh: its HELLO said ours lose and take that much;
 * weights: the weight of each of our paths, and the last loss and delay
 * of each of its, on each of nports ports (SRNIC_UDP_PATHS a port). */
void srnic_paths_hear(struct srnic_peer *peer, unsigned p, uint8_t ok);
void srnic_paths_forget(struct srnic_peer *peer);
void srnic_paths_measure(struct srnic_peer *peer, unsigned p, uint64_t now,
			 uint8_t loss[SRNIC_UDP_PATHS],
			 uint8_t delay[SRNIC_UDP_PATHS]);
void srnic_paths_weigh(struct srnic_peer *peer, unsigned p,
		       const uint8_t loss[SRNIC_UDP_PATHS],
		       const uint8_t delay[SRNIC_UDP_PATHS], uint64_t now);
void srnic_paths_weights(const struct srnic_peer *peer, unsigned nports,
			 uint8_t *weight, uint8_t *loss, uint8_t *delay);

/* control.c */
/* A frame the control core made, out of port m->port by whichever
 * datapath holds the port token next; false (m freed) when the ring is
 * full. */
bool srnic_control_queue(struct srnic_engine *eng, struct rte_mbuf *m);
/* The control core's log line (SRNIC_LOG=1; slow path only). */
void ctl_log(const struct srnic_engine *eng, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* What every control frame says (who sends it, on port p) into pkt; and
 * pkt sent broadcast on port p by the datapath (the mbuf, or NULL). */
void srnic_control_pkt(const struct srnic_engine *eng, uint8_t op, unsigned p,
		       struct srnic_pkt *pkt);
struct rte_mbuf *srnic_control_send(struct srnic_engine *eng,
				    const struct srnic_pkt *pkt, unsigned p);
/* pkt to the peer's current incarnation on port p: to its port's MAC, or
 * broadcast where it was never heard on p (whoever else meets it ignores
 * it: it names the peer's incarnation).  The mbuf, or NULL. */
struct rte_mbuf *srnic_control_send_peer(struct srnic_engine *eng,
					 const struct srnic_peer *peer,
					 struct srnic_pkt *pkt, unsigned p);
/* Whether any port hears the peer now (any thread). */
bool srnic_peer_heard(const struct srnic_engine *eng,
		      const struct srnic_peer *peer);
struct rte_mbuf *srnic_control_frame(struct srnic_engine *eng, uint8_t op,
				     unsigned p);
/* A control frame for one peer's incarnation dst_inc, on port p. */
struct rte_mbuf *srnic_control_frame_to(struct srnic_engine *eng, uint8_t op,
					unsigned p, const uint8_t dst_mac[6],
					uint32_t dst_inc, uint16_t flags);
struct srnic_peer *srnic_peer_find(struct srnic_engine *eng, uint32_t ipv4);

/* A slot of the peer table for pkt's sender, not in it yet: a free one,
 * or, the table full, the one heard on no port for longest once that is
 * SRNIC_PEER_FORGET_MS (its old peer is forgotten); NULL, counted
 * (peers_full), when there is none.  Without a cluster key anyone can
 * fill the table with made-up nodes: they must not shut real ones out
 * for good.  Control core, peer lock held. */
#define SRNIC_PEER_FORGET_MS 10000
struct srnic_peer *srnic_peer_slot(struct srnic_engine *eng,
				   const struct srnic_pkt *pkt, uint64_t now);

/* Whether inc is one of the peer's earlier incarnations. */
static inline bool srnic_peer_retired(const struct srnic_peer *peer,
				      uint32_t inc)
{
	unsigned i;

	for (i = 0; i < SRNIC_RETIRED; i++)
		if (__atomic_load_n(&peer->retired[i], __ATOMIC_RELAXED) == inc)
			return true;
	return false;
}

/* Whether incarnation inc booted before cur (0: none known): a lower boot
 * count in the high 16 bits (incarnation.c), compared as serial numbers. */
static inline bool srnic_inc_older(uint32_t inc, uint32_t cur)
{
	return cur && inc != cur && (int16_t)((inc >> 16) - (cur >> 16)) < 0;
}

/*
 * Whether inc is an incarnation of the peer older than the one we know:
 * one we saw it leave behind, or one with a lower boot count (the high 16
 * bits, incarnation.c; compared as serial numbers).  A frame of an older
 * process is late or replayed, and must not act for the live one.
 */
static inline bool srnic_peer_older(const struct srnic_peer *peer,
				    uint32_t inc)
{
	uint32_t cur = __atomic_load_n(&peer->inc, __ATOMIC_ACQUIRE);

	return srnic_peer_retired(peer, inc) || srnic_inc_older(inc, cur);
}

/*
 * The node's shared locks (the peer table's, mcast_lock).  In srnicd's
 * node attached processes take them too (modify_qp resolves GIDs under
 * the peer table's; joins and group regions take mcast_lock), and they are
 * robust: one killed while it held one leaves it to the next taker.  One
 * that holds it and does not move (stopped by a signal or a debugger,
 * frozen, or hostile) is stepped over, counted in locks_stepped: the
 * control core that waited on it would send no HELLO meanwhile, and its
 * peers would take the node for dead.  A holder merely waiting for a core
 * is waited for (shared_lock.c says how they are told apart).  Returns
 * whether the lock is held: unlock only then.  Any thread.
 */
#define SRNIC_LOCK_STEP_MS 20

bool srnic_shared_lock_busy(struct srnic_node *node, pthread_mutex_t *lock,
			    unsigned slot);
/* A thread's state letter in /proc (R, S, D, T, t, ...), or 0. */
char srnic_thread_state(int tid);

static inline bool srnic_shared_lock(struct srnic_node *node,
				     pthread_mutex_t *lock)
{
	unsigned slot = lock == &node->peer_lock ? 0 : 1;
	int rc = pthread_mutex_trylock(lock);

	if (rc == EBUSY)
		return srnic_shared_lock_busy(node, lock, slot);
	if (rc == EOWNERDEAD)
		pthread_mutex_consistent(lock);
	else if (rc)
		return false;	/* ENOTRECOVERABLE: nobody will have it */
	/* whoever was stepped over has let go */
	if (__atomic_load_n(&node->lock_stuck_tid[slot], __ATOMIC_RELAXED))
		__atomic_store_n(&node->lock_stuck_tid[slot], 0,
				 __ATOMIC_RELAXED);
	return true;
}

static inline void srnic_shared_unlock(pthread_mutex_t *lock, bool held)
{
	if (held)
		pthread_mutex_unlock(lock);
}

static inline bool srnic_peer_lock(struct srnic_node *node)
{
	return srnic_shared_lock(node, &node->peer_lock);
}

static inline void srnic_peer_unlock(struct srnic_node *node, bool held)
{
	srnic_shared_unlock(&node->peer_lock, held);
}

/* service.c: services (failover addresses, docs/failover.md).  Init: the
 * configuration's, at start; rx: a member's announcement; tick: claim
 * what this node should hold; announce: this node's memberships on port
 * p (with each HELLO); find: the service of an address (any thread);
 * holder: the peer holding it, or NULL (any thread). */
void srnic_services_init(struct srnic_engine *eng);
void srnic_service_rx(struct srnic_engine *eng, const struct srnic_pkt *pkt,
		      uint64_t now);
void srnic_services_tick(struct srnic_engine *eng, uint64_t now);
void srnic_services_announce(struct srnic_engine *eng, unsigned p);
struct srnic_service *srnic_service_find(struct srnic_node *node,
					 uint32_t ipv4);
struct srnic_peer *srnic_service_holder(struct srnic_engine *eng,
					uint32_t ipv4);
/* The Ethernet address a service's frames go to: its group address
 * (SRNIC_SVC_GROUP) or its own unicast one (SRNIC_SVC_SWITCH). */
void srnic_service_mac(uint32_t ipv4, uint8_t mode, uint8_t mac[6]);

/* keys.c: key migration between the node's adapters.  Miss: adapter dev
 * received a request with key, neither its own nor imported (datapath);
 * settle: ask the issuer about each miss, import or refuse the key
 * (datapath, after the burst); forget: the key ends, in every adapter's
 * imports (an engine call, with its deregistration). */
void srnic_keys_miss(struct srnic_engine *eng, uint8_t dev, uint32_t key);
void srnic_keys_settle(struct srnic_engine *eng);
void srnic_keys_forget(struct srnic_engine *eng, uint32_t key);
void srnic_keys_evict(struct srnic_engine *eng, uint64_t now);

/* integrate.c: the BOOTING / BOOT_ACK / RDMA_READY exchange */
void srnic_integrate_booting(struct srnic_engine *eng,
			     const struct srnic_pkt *pkt, unsigned p);
/* The forgetting part alone: QPs failed, or -1 for a stale BOOTING. */
int srnic_integrate_forget(struct srnic_engine *eng,
			   const struct srnic_pkt *pkt);
void srnic_integrate_rx(struct srnic_engine *eng, const struct srnic_pkt *pkt,
			unsigned p);
void srnic_integrate_new_incarnation(struct srnic_peer *peer);
void srnic_integrate_tick(struct srnic_engine *eng, uint64_t now);
/* Both directions done with the peer's current incarnation. */
bool srnic_peer_integrated(const struct srnic_peer *peer);
/* The ports (a bit each) that hear the peer and that this node polls. */
uint8_t srnic_peer_reach(const struct srnic_engine *eng,
			 const struct srnic_peer *peer);

/* ---- the system-wide protection table (tpt.c) ---- */

/* Any thread: entry e (name, rkey, addr, length, remote rights) into the
 * node's table for the process in slot.  0, -EINVAL (no name or rights,
 * a range that wraps), -EEXIST (the name is the node's already),
 * -ENOSPC (SRNIC_TPT_MAX published). */
int srnic_tpt_publish(struct srnic_node *node, unsigned slot,
		      const struct srnic_tpt_entry *e);
/* Any thread: the slot's entries of key rkey out; 0 or -ENOENT. */
int srnic_tpt_unpublish(struct srnic_node *node, unsigned slot,
			uint32_t rkey);
/* Any thread: the slot's entry of key rkey follows its region's new
 * range and remote rights (re-registration; no right left: it goes).
 * 0 or -ENOENT (not published). */
int srnic_tpt_follow(struct srnic_node *node, unsigned slot, uint32_t rkey,
		     uint64_t addr, uint64_t length, uint8_t access);
/* srnicd: every entry of a process gone out; the control core's start:
 * every entry out (keys of an incarnation before mean nothing). */
void srnic_tpt_release_proc(struct srnic_node *node, unsigned slot);
void srnic_tpt_forget_own(struct srnic_node *node);
/* Any thread: region name of the node ipv4 (this one's, or an integrated
 * peer's current process's).  0, or -ENOENT. */
int srnic_tpt_lookup(struct srnic_engine *eng, uint32_t ipv4, uint32_t name,
		     struct srnic_tpt_entry *out);
/* Control core: send our table to the peers that lack its generation;
 * a TPT_UPDATE or TPT_ACK from port p; a peer's new incarnation (its
 * copy emptied). */
void srnic_tpt_tick(struct srnic_engine *eng, uint64_t now);
void srnic_tpt_rx(struct srnic_engine *eng, const struct srnic_pkt *pkt,
		  unsigned p);
void srnic_tpt_forget(struct srnic_engine *eng, struct srnic_peer *peer);

int srnic_control_start(struct srnic_engine *eng);
void srnic_control_stop(struct srnic_engine *eng);
/* HELLOs now (with what changed: a service's holder, a group's owner),
 * not at the control core's next tick. */
void srnic_hello_now(struct srnic_node *node);
struct srnic_peer *srnic_control_resolve(struct srnic_engine *eng,
					 const uint8_t gid[16],
					 unsigned wait_ms);

#endif
