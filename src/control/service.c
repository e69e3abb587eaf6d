/* SPDX-License-Identifier: MIT */
/*
 * Services (seed 000; docs/failover.md): an address that belongs to a
 * service, not a node, held by one member node at a time.  Control core.
 *
 * Every member of a service announces itself every HELLO interval on
 * every port (SVC_ANNOUNCE: the service's address, its priority, and
 * whether it holds the service, at which term).  A term is a counter in
 * the high 24 bits and the claimant's address's low byte below: the
 * highest term wins, so after a partition heals one holder is left, and a
 * holder that hears a higher term steps down.  When the holder has been
 * silent for svc_dead_ms (or there is none), the best live member (the
 * highest priority, then the highest address) claims the next term; a
 * member that has just started listens that long first.  With
 * failback=auto, a member better than the holder claims at once (a
 * primary that came back); with failback=expire it waits until the
 * holder's connections have closed (it announces how many QPs it has
 * bound to clients).
 *
 * Every node, member or not, learns the services from the announcements:
 * a GID of a service's address resolves to its holder (srnic_control_
 * resolve), so programs address the service, not a node.
 */
#include <stdio.h>
#include <string.h>

#include "srnic_control.h"

/* A member of a service as its announcements say. */
static struct srnic_svc_member *member_of(struct srnic_service *sv,
					  uint32_t ipv4)
{
	struct srnic_svc_member *free_m = NULL;
	unsigned i;

	for (i = 0; i < SRNIC_SVC_MEMBERS; i++) {
		if (sv->member[i].ipv4 == ipv4)
			return &sv->member[i];
		if (!sv->member[i].ipv4 && !free_m)
			free_m = &sv->member[i];
	}
	if (free_m)
		free_m->ipv4 = ipv4;
	return free_m;
}

/*
 * Whether pkt, an announcement of m, is newer than every one m's process
 * sent before on that port.  Each carries the sending port's HELLO number
 * (srnic_services_announce), so a recorded one sent again (its MAC is
 * still good) is not: a replay must not keep a dead holder alive.  An
 * older process's announcements are refused too; a newer process numbers
 * afresh.
 */
_Static_assert(SRNIC_MAX_PORTS <= 32, "seq_seen is a bit a port");
static bool announce_fresh(struct srnic_svc_member *m,
			   const struct srnic_pkt *pkt)
{
	unsigned p = pkt->port;

	if (p >= SRNIC_MAX_PORTS)
		return false;
	if (pkt->src_inc != m->inc) {
		if (srnic_inc_older(pkt->src_inc, m->inc))
			return false;	/* its boot count went back */
		m->inc = pkt->src_inc;
		m->seq_seen = 0;
	}
	if (((m->seq_seen >> p) & 1) &&
	    (int32_t)(pkt->src_qpn - m->seq[p]) <= 0)
		return false;
	m->seq[p] = pkt->src_qpn;
	m->seq_seen |= 1u << p;
	return true;
}

struct srnic_service *srnic_service_find(struct srnic_node *node,
					 uint32_t ipv4)
{
	unsigned i;

	for (i = 0; i < SRNIC_MAX_SVC_KNOWN; i++)
		if (__atomic_load_n(&node->svc[i].ipv4, __ATOMIC_ACQUIRE) == ipv4)
			return &node->svc[i];
	return NULL;
}

/* How long nobody has said a word of a service: no holder, no member
 * (ms). */
static uint64_t service_quiet(const struct srnic_service *sv, uint64_t now)
{
	uint64_t last = sv->since > sv->holder_heard ? sv->since
						      : sv->holder_heard;
	unsigned i;

	for (i = 0; i < SRNIC_SVC_MEMBERS; i++)
		if (sv->member[i].ipv4 && sv->member[i].heard > last)
			last = sv->member[i].heard;
	return now > last ? now - last : 0;
}

/*
 * An entry for a service new to this node: a free one, or, the table full,
 * the one of a service this node is no member of that has been unheard
 * for longest, once that is longer than a client's QP of it can live on
 * through the silence (svc_grace_ms, then its retries; SRNIC_PEER_FORGET_MS
 * covers those).  Without it, announcements of made-up services (without
 * a cluster key, anyone's) would fill the table for good.  What still
 * names the old service finds it gone: a client's QP looks its service
 * up by address and fails as one whose holder is gone; a datagram through
 * an address handle of it is lost (requester.c, datagram_peer).
 */
static struct srnic_service *service_new(struct srnic_engine *eng,
					 uint64_t now)
{
	struct srnic_service *sv = NULL;
	uint64_t longest = SRNIC_PEER_FORGET_MS + eng->cfg.svc_grace_ms, quiet;
	unsigned i;

	for (i = 0; i < SRNIC_MAX_SVC_KNOWN; i++) {
		struct srnic_service *s = &eng->node->svc[i];

		if (!s->ipv4)
			return s;
		if (s->mine < 0 && (quiet = service_quiet(s, now)) >= longest) {
			longest = quiet;
			sv = s;
		}
	}
	if (sv) {
		ctl_log(eng, "service %u.%u.%u.%u forgotten after %lu s of "
			"silence", sv->ipv4 >> 24, (sv->ipv4 >> 16) & 255,
			(sv->ipv4 >> 8) & 255, sv->ipv4 & 255,
			(unsigned long)(longest / 1000));
		/* (readers match the address first: it goes before the
		 * rest changes) */
		__atomic_store_n(&sv->ipv4, 0, __ATOMIC_RELEASE);
	}
	return sv;
}

/* The service of that address, made if new (control core only). */
static struct srnic_service *service_of(struct srnic_engine *eng,
					uint32_t ipv4, uint64_t now)
{
	struct srnic_service *sv = srnic_service_find(eng->node, ipv4);

	if (sv)
		return sv;
	sv = service_new(eng, now);
	if (!sv) {
		eng->st->svc_full++;
		return NULL;
	}
	memset(sv, 0, sizeof(*sv));
	sv->mine = -1;
	sv->holder_peer = -1;
	sv->since = now;
	__atomic_store_n(&sv->ipv4, ipv4, __ATOMIC_RELEASE);
	return sv;
}

void srnic_services_init(struct srnic_engine *eng)
{
	uint64_t now = srnic_ms();
	unsigned i;

	for (i = 0; i < eng->cfg.nsvc; i++) {
		struct srnic_service *sv =
			service_of(eng, eng->cfg.svc[i].ipv4, now);

		if (!sv)
			break;
		sv->mine = (int8_t)i;
		sv->mode = eng->cfg.svc[i].mode;
		snprintf(sv->name, sizeof(sv->name), "%s",
			 eng->cfg.svc[i].name);
	}
}

static uint32_t next_term(uint32_t term, uint32_t self)
{
	return ((term >> 8) + 1) << 8 | (self & 0xff);
}

/* Whether member (prio a, address x) beats (prio b, address y). */
static bool better(uint8_t a, uint32_t x, uint8_t b, uint32_t y)
{
	return a != b ? a > b : x > y;
}

void srnic_service_mac(uint32_t ipv4, uint8_t mode, uint8_t mac[6])
{
	if (mode == SRNIC_SVC_SWITCH) {
		/* 02:5e and the address: local, unicast, the service's */
		mac[0] = 0x02;
		mac[1] = 0x5e;
		mac[2] = (uint8_t)(ipv4 >> 24);
		mac[3] = (uint8_t)(ipv4 >> 16);
		mac[4] = (uint8_t)(ipv4 >> 8);
		mac[5] = (uint8_t)ipv4;
	} else {
		srnic_mcast_mac(ipv4, false, mac);
	}
}

/* The service's peer mirrors its remote holder h (NULL: none known, or
 * this node): its incarnation and integration, which paths reach it;
 * its address on every port is the service's group address
 * (srnic_mcast_mac of the service's IPv4), which every member hears. */
static void mirror(struct srnic_engine *eng, struct srnic_service *sv,
		   const struct srnic_peer *h)
{
	struct srnic_peer *ps = &sv->peer;
	unsigned p;

	if (ps->ipv4 != sv->ipv4) {
		ps->ipv4 = sv->ipv4;
		snprintf(ps->name, sizeof(ps->name), "%s",
			 sv->name[0] ? sv->name : "service");
	}
	for (p = 0; p < SRNIC_MAX_PORTS; p++)
		srnic_service_mac(sv->ipv4, sv->mode, ps->mac[p]);
	for (p = 0; p < SRNIC_MAX_PORTS; p++) {
		__atomic_store_n(&ps->up[p], h ? __atomic_load_n(&h->up[p],
							     __ATOMIC_ACQUIRE)
					       : 0,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&ps->lossy[p], h ? h->lossy[p] : 0,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&ps->silent[p], h ? h->silent[p] : 0,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&ps->dev_on[p], h ? h->dev_on[p] : 0,
				 __ATOMIC_RELEASE);
	}
	if (!h)
		return;
	__atomic_store_n(&ps->ndev, h->ndev, __ATOMIC_RELEASE);
	__atomic_store_n(&ps->ok_inc, __atomic_load_n(&h->ok_inc,
						      __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&ps->ready_inc, __atomic_load_n(&h->ready_inc,
							 __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&ps->inc, __atomic_load_n(&h->inc, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
}

/* The holder is ipv4 now (its peer entry too, for datagrams): the
 * service's peer follows it before the new holder shows. */
static void set_holder(struct srnic_engine *eng, struct srnic_service *sv,
		       uint32_t ipv4)
{
	const struct srnic_peer *peer = ipv4 == eng->cfg.ipv4
						? &eng->node->peer[SRNIC_PEER_SELF]
						: srnic_peer_find(eng, ipv4);

	mirror(eng, sv, peer == &eng->node->peer[SRNIC_PEER_SELF] ? NULL
								   : peer);
	__atomic_store_n(&sv->holder_peer,
			 peer ? (int16_t)(peer - eng->node->peer) : -1,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&sv->holder, ipv4, __ATOMIC_RELEASE);
}

static void claim(struct srnic_engine *eng, struct srnic_service *sv,
		  uint64_t now, const char *why)
{
	uint32_t term = next_term(sv->term, eng->cfg.ipv4);

	set_holder(eng, sv, eng->cfg.ipv4);
	__atomic_store_n(&sv->term, term, __ATOMIC_RELEASE);
	sv->holder_released = 0;
	__atomic_store_n(&sv->frozen, 0, __ATOMIC_RELEASE);
	sv->holding = 1;
	sv->holder_heard = now;
	sv->holder_prio = eng->cfg.svc[sv->mine].prio;
	sv->takeovers++;
	srnic_hello_now(eng->node);
	ctl_log(eng, "service %s: holding it, term %#x (%s)", sv->name, term,
		why);
}

void srnic_service_rx(struct srnic_engine *eng, const struct srnic_pkt *pkt,
		      uint64_t now)
{
	struct srnic_service *sv;
	struct srnic_svc_member *m;
	const struct srnic_peer *peer = srnic_peer_find(eng, pkt->ipv4);

	if (pkt->ipv4 == eng->cfg.ipv4 || !pkt->svc_ipv4 ||
	    (peer && srnic_peer_older(peer, pkt->src_inc)))
		return;		/* ourselves, nothing, or a late frame */
	sv = service_of(eng, pkt->svc_ipv4, now);
	if (!sv)
		return;
	if (sv->mine < 0)
		sv->mode = pkt->svc_mode;	/* (a client's: as members say) */
	/* (a member the table has no room for is not believed: nothing
	 * could tell its replays) */
	m = member_of(sv, pkt->ipv4);
	if (!m || !announce_fresh(m, pkt)) {
		eng->st->svc_stale++;
		return;
	}
	m->prio = pkt->svc_prio;
	m->heard = now;
	if (pkt->svc_holder == SRNIC_SVC_RELEASED) {
		/* The holder of this term handed it over (failback=manual):
		 * as good as silent, now, and the best live member claims. */
		if (pkt->ipv4 == sv->holder && pkt->msn == sv->term &&
		    !sv->holding && !sv->holder_released) {
			/* (quiet for svc_dead_ms, not for ever: clients'
			 * retries stay free, svc_grace_ms from now) */
			sv->holder_heard = now - eng->cfg.svc_dead_ms;
			sv->holder_released = 1;
		}
		return;
	}
	if (!pkt->svc_holder)
		return;
	if (pkt->msn > sv->term ||
	    (pkt->msn == sv->term && pkt->ipv4 == sv->holder)) {
		if (sv->holding && pkt->msn > sv->term) {
			sv->holding = 0;
			sv->stepdowns++;
			ctl_log(eng, "service %s: %u.%u.%u.%u holds it at term "
				"%#x: stepping down", sv->name,
				pkt->ipv4 >> 24, (pkt->ipv4 >> 16) & 255,
				(pkt->ipv4 >> 8) & 255, pkt->ipv4 & 255,
				pkt->msn);
		}
		if (sv->holder != pkt->ipv4 || sv->term != pkt->msn)
			sv->changes++;
		set_holder(eng, sv, pkt->ipv4);
		__atomic_store_n(&sv->term, pkt->msn, __ATOMIC_RELEASE);
		sv->holder_heard = now;
		sv->holder_released = 0;
		sv->holder_prio = pkt->svc_prio;
		sv->holder_bound = pkt->svc_bound;
	}
}

/* The holder's program asked (srnic_svc_handover): this node holds the
 * service no more, and says so in its announcements, with the term it
 * released, so the best live member claims it at once.  Its bound QPs
 * fail as at a step-down (engine/service.c). */
static void hand_over(struct srnic_engine *eng, struct srnic_service *sv)
{
	sv->released_term = sv->term;
	sv->handovers++;
	__atomic_store_n(&sv->frozen, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&sv->holding, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&sv->handover, 0, __ATOMIC_RELEASE);
	srnic_hello_now(eng->node);
	ctl_log(eng, "service %s: handing it over, term %#x", sv->name,
		sv->term);
}

/* A member's turn: claim the service when the holder is gone (after
 * listening svc_dead_ms since start) and this node is the best live
 * member, or (failback=auto) when this node is better than the holder. */
static void member_tick(struct srnic_engine *eng, struct srnic_service *sv,
			uint64_t now)
{
	const struct srnic_service_conf *c = &eng->cfg.svc[sv->mine];
	unsigned dead = eng->cfg.svc_dead_ms, i;
	bool holder_alive;

	if (sv->holding) {
		if (__atomic_load_n(&sv->handover, __ATOMIC_ACQUIRE))
			hand_over(eng, sv);
		return;
	}
	__atomic_store_n(&sv->handover, 0, __ATOMIC_RELEASE);
	holder_alive = sv->holder && now - sv->holder_heard < dead;
	if (holder_alive) {
		/* A better member takes it back: at once (auto), or once the
		 * holder's connections have all closed (expire); with manual,
		 * once the holder hands it over (then it is as silent). */
		if (better(c->prio, eng->cfg.ipv4, sv->holder_prio, sv->holder) &&
		    (c->failback == SRNIC_FAILBACK_AUTO ||
		     (c->failback == SRNIC_FAILBACK_EXPIRE && !sv->holder_bound)))
			claim(eng, sv, now,
			      c->failback == SRNIC_FAILBACK_AUTO
				      ? "failback: better than the holder"
				      : "failback: the holder's connections "
					"closed");
		return;
	}
	if (now - sv->since < dead)
		return;		/* just started: listen first */
	for (i = 0; i < SRNIC_SVC_MEMBERS; i++) {
		const struct srnic_svc_member *m = &sv->member[i];

		if (m->ipv4 && m->ipv4 != sv->holder && now - m->heard < dead &&
		    better(m->prio, m->ipv4, c->prio, eng->cfg.ipv4))
			return;	/* a better live member will claim it */
	}
	claim(eng, sv, now, !sv->holder		 ? "no holder"
			    : sv->holder_released ? "the holder handed it over"
						  : "the holder went silent");
}

void srnic_services_tick(struct srnic_engine *eng, uint64_t now)
{
	unsigned i;

	for (i = 0; i < SRNIC_MAX_SVC_KNOWN; i++) {
		struct srnic_service *sv = &eng->node->svc[i];
		int16_t h;

		if (!sv->ipv4)
			continue;
		if (sv->mine >= 0)
			member_tick(eng, sv, now);
		/* (the holder's paths come and go between its changes) */
		h = __atomic_load_n(&sv->holder_peer, __ATOMIC_ACQUIRE);
		mirror(eng, sv, h >= 0 && h != SRNIC_PEER_SELF
					? &eng->node->peer[h]
					: NULL);
	}
}

bool srnic_service_better_live(const struct srnic_engine *eng,
				const struct srnic_service *sv)
{
	uint64_t now = srnic_ms();
	unsigned i;

	if (sv->mine < 0)
		return false;
	for (i = 0; i < SRNIC_SVC_MEMBERS; i++) {
		const struct srnic_svc_member *m = &sv->member[i];

		if (m->ipv4 && m->ipv4 != eng->cfg.ipv4 &&
		    now - m->heard < eng->cfg.svc_dead_ms &&
		    better(m->prio, m->ipv4, eng->cfg.svc[sv->mine].prio,
			   eng->cfg.ipv4))
			return true;
	}
	return false;
}

uint32_t srnic_service_bound(const struct srnic_service *sv)
{
	uint32_t n = 0;
	unsigned i;

	for (i = 0; i < SRNIC_MAX_PROCS; i++)
		n += __atomic_load_n(&sv->bound_by[i], __ATOMIC_ACQUIRE);
	return n;
}

void srnic_service_release_proc(struct srnic_node *node, unsigned slot)
{
	unsigned i;

	if (slot >= SRNIC_MAX_PROCS)
		return;
	for (i = 0; i < SRNIC_MAX_SVC_KNOWN; i++)
		__atomic_store_n(&node->svc[i].bound_by[slot], 0,
				 __ATOMIC_RELEASE);
}

void srnic_services_announce(struct srnic_engine *eng, unsigned p)
{
	unsigned i;

	for (i = 0; i < SRNIC_MAX_SVC_KNOWN; i++) {
		const struct srnic_service *sv = &eng->node->svc[i];
		struct srnic_pkt pkt;

		if (!sv->ipv4 || sv->mine < 0)
			continue;
		srnic_control_pkt(eng, SRNIC_OP_SVC_ANNOUNCE, p, &pkt);
		/* (numbered as the port's HELLOs, one a round: announce_fresh) */
		pkt.src_qpn = eng->node->port[p].hello_seq;
		pkt.msn = sv->holding ? sv->term : 0;
		pkt.svc_ipv4 = sv->ipv4;
		pkt.svc_prio = eng->cfg.svc[sv->mine].prio;
		pkt.svc_holder = sv->holding;
		if (!sv->holding && sv->released_term &&
		    sv->released_term == sv->term) {
			/* (until another holder's term shows) */
			pkt.msn = sv->term;
			pkt.svc_holder = SRNIC_SVC_RELEASED;
		}
		pkt.svc_mode = sv->mode;
		if (sv->holding) {
			uint32_t b = srnic_service_bound(sv);

			pkt.svc_bound = (uint8_t)(b < 255 ? b : 255);
		}
		srnic_control_send(eng, &pkt, p);
	}
}

struct srnic_peer *srnic_service_holder(struct srnic_engine *eng,
					uint32_t ipv4)
{
	const struct srnic_service *sv = srnic_service_find(eng->node, ipv4);
	uint32_t holder;

	if (!sv)
		return NULL;
	holder = __atomic_load_n(&sv->holder, __ATOMIC_ACQUIRE);
	if (!holder)
		return NULL;
	if (holder == eng->cfg.ipv4)
		return &eng->node->peer[SRNIC_PEER_SELF];
	/* (the service itself: its group address, the holder's
	 * incarnation) */
	return (struct srnic_peer *)&sv->peer;
}
