/* SPDX-License-Identifier: MIT */
/*
 * The peer table (control/control.c, srnic_peer_slot).  Without a cluster
 * key anyone on the rails can fill it with made-up nodes: 64 forged HELLOs
 * shut every new node out for good.  Now a new peer is refused, and
 * counted (peers_full), only while every slot's peer was heard lately;
 * once one has been heard on no port for SRNIC_PEER_FORGET_MS, the one
 * silent longest gives its slot up.  A peer a port still hears is never
 * forgotten, however old its other ports' news.  And the table's lock,
 * held by a process that does not move, is stepped over.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "engine_internal.h"
#include "ring_engine.h"

#define NET 0x0a010000u		/* 10.1.0.0: the made-up nodes */
#define NEWCOMER 0x0a020001u

static struct srnic_engine *eng;

/* A HELLO from ipv4 on port 0 at now, as the control core learns it: its
 * slot (found or given), then heard. */
static struct srnic_peer *hello_from(uint32_t ipv4, uint64_t now)
{
	struct srnic_peer *peer;
	struct srnic_pkt pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.ipv4 = ipv4;
	pkt.src_inc = 0x100 + ipv4;
	snprintf(pkt.node_name, sizeof(pkt.node_name), "n%08x", ipv4);
	bool held = srnic_peer_lock(eng->node);
	peer = srnic_peer_find(eng, ipv4);
	if (!peer)
		peer = srnic_peer_slot(eng, &pkt, now);
	if (peer) {
		peer->inc = pkt.src_inc;
		peer->last_seen[0] = now;
		peer->up[0] = 1;
	}
	srnic_peer_unlock(eng->node, held);
	return peer;
}

/* A process that holds the node's lock and does not move (stopped, frozen,
 * hostile): a thread here, until told to let go. */
static volatile int let_go;
static volatile int holding;

static void *stuck_holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&eng->node->peer_lock);
	holding = 1;
	while (!let_go)
		usleep(1000);
	pthread_mutex_unlock(&eng->node->peer_lock);
	return NULL;
}

/* The control core steps over a lock whose holder sleeps with it (seen
 * asleep twice, SRNIC_LOCK_STEP_MS apart), and at once while it still
 * holds it: it would send no HELLO while it waited (control/shared_lock.c). */
static void test_stuck_lock(uint64_t now)
{
	uint32_t stepped = eng->node->locks_stepped;
	uint64_t t0, t1, t2;
	pthread_t t;
	bool held;

	pthread_create(&t, NULL, stuck_holder, NULL);
	while (!holding)
		usleep(1000);
	t0 = srnic_ms();
	held = srnic_peer_lock(eng->node);
	t1 = srnic_ms();
	CHECK(!held && t1 - t0 >= 2 * SRNIC_LOCK_STEP_MS - 1 && t1 - t0 < 1000,
	      "a stuck holder's lock: %s after %llu ms", held ? "taken" : "not",
	      (unsigned long long)(t1 - t0));
	held = srnic_peer_lock(eng->node);
	t2 = srnic_ms();
	CHECK(!held && t2 - t1 < SRNIC_LOCK_STEP_MS / 2,
	      "the same stuck holder waited for again (%llu ms)",
	      (unsigned long long)(t2 - t1));
	CHECK(hello_from(NET + 1, now) == &eng->node->peer[1] &&
		      eng->node->peer[1].last_seen[0] == now,
	      "a HELLO not learned while the lock was stuck");
	CHECK(eng->node->locks_stepped - stepped == 3,
	      "%u steps over counted, not 3", eng->node->locks_stepped - stepped);
	let_go = 1;
	pthread_join(t, NULL);
	held = srnic_peer_lock(eng->node);
	CHECK(held, "the lock, let go, was not taken");
	srnic_peer_unlock(eng->node, held);
}

static void *busy_holder(void *arg)
{
	uint64_t until;

	(void)arg;
	pthread_mutex_lock(&eng->node->peer_lock);
	until = srnic_ms() + 150;
	holding = 1;
	while (srnic_ms() < until)
		;	/* on its core, or waiting for one: state R */
	pthread_mutex_unlock(&eng->node->peer_lock);
	return NULL;
}

/* A holder that runs, or waits for a core, lets go by itself: it is waited
 * for, not stepped over, or two would be inside at once. */
static void test_busy_lock(void)
{
	uint32_t stepped = eng->node->locks_stepped;
	pthread_t t;
	bool held;

	holding = 0;
	pthread_create(&t, NULL, busy_holder, NULL);
	while (!__atomic_load_n(&holding, __ATOMIC_ACQUIRE))
		;
	held = srnic_peer_lock(eng->node);
	CHECK(held && eng->node->locks_stepped == stepped,
	      "a lock held 150 ms by a running thread %s",
	      held ? "counted as stepped over" : "stepped over");
	srnic_peer_unlock(eng->node, held);
	pthread_join(t, NULL);
}

int main(void)
{
	const uint64_t now = 1000000;
	struct srnic_peer *peer;
	uint64_t full;
	unsigned i;

	eng = ring_engine_new();
	ring_engine_start(eng, 2048);
	/* Every slot taken, slot 7's peer heard last the longest ago. */
	for (i = 0; i < SRNIC_MAX_PEERS; i++)
		CHECK(hello_from(NET + i, now - (i == 7 ? 150 : 100)) ==
			      &eng->node->peer[i],
		      "made-up node %u got no slot of its own", i);
	full = eng->st->ctl_peers_full;
	CHECK(!hello_from(NEWCOMER, now) && eng->st->ctl_peers_full == full + 1,
	      "a new peer took a slot while all %u peers were heard",
	      SRNIC_MAX_PEERS);
	/* All down, as watch_peer puts them after PEER_DEAD_MS; slot 3's
	 * port 0 still hears its peer, whose news is the oldest. */
	for (i = 0; i < SRNIC_MAX_PEERS; i++)
		eng->node->peer[i].up[0] = 0;
	eng->node->peer[3].up[0] = 1;
	eng->node->peer[3].last_seen[0] = 1;
	CHECK(!hello_from(NEWCOMER, now + SRNIC_PEER_FORGET_MS - 1000) &&
		      eng->st->ctl_peers_full == full + 2,
	      "a peer silent for less than %u ms was forgotten",
	      SRNIC_PEER_FORGET_MS);
	peer = hello_from(NEWCOMER, now + SRNIC_PEER_FORGET_MS);
	CHECK(peer == &eng->node->peer[7],
	      "the newcomer took slot %ld, not 7 (silent longest)",
	      peer ? (long)(peer - eng->node->peer) : -1L);
	CHECK(peer && peer->ipv4 == NEWCOMER && peer->inc == 0x100 + NEWCOMER &&
		      !peer->nretired && !srnic_peer_find(eng, NET + 7) &&
		      srnic_npeers(eng->node) == SRNIC_MAX_PEERS,
	      "slot 7 is not the newcomer's alone (its old peer kept)");
	CHECK(srnic_peer_find(eng, NET + 3) == &eng->node->peer[3],
	      "a peer a port still hears was forgotten");
	test_stuck_lock(now + 2 * SRNIC_PEER_FORGET_MS);
	test_busy_lock();
	return check_summary("test_peers");
}
