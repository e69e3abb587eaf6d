/* SPDX-License-Identifier: MIT */
/*
 * A service's announcements as the control core takes them
 * (control/service.c): a recorded SVC_ANNOUNCE sent again, whose MAC is
 * still good, must not keep a dead holder alive.  Each announcement
 * carries its port's HELLO number; one not newer than the last taken from
 * its sender on that port is counted (svc_stale) and changes nothing, as
 * is one of an older process of the sender.  And the count of QPs bound
 * to clients a holder announces loses a departed process's share; a
 * holder's release (failback=manual) makes it as silent; and the table of
 * services gives a newcomer the entry of one long unheard.
 */
#include <string.h>

#include "check.h"
#include "engine_internal.h"
#include "ring_engine.h"
#include "srnic_control.h"

#define SVC 0x0a00000au		/* 10.0.0.10 */
#define HOLDER 0x0a000005u	/* 10.0.0.5 */
#define INC 0x00030011u		/* boot 3 */
#define TERM (0x100u | 5)

static struct srnic_engine *eng;

/* An SVC_ANNOUNCE of service svc by its holder h (of incarnation inc) on
 * port with HELLO number seq, taken at now. */
static void announce_as(uint32_t svc, uint32_t h, uint32_t inc,
			unsigned port, uint32_t seq, uint64_t now,
			uint8_t holder, uint32_t term)
{
	struct srnic_pkt pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.opcode = SRNIC_OP_SVC_ANNOUNCE;
	pkt.src_inc = inc;
	pkt.ipv4 = h;
	pkt.port = (uint8_t)port;
	pkt.src_qpn = seq;
	pkt.msn = term;
	pkt.svc_ipv4 = svc;
	pkt.svc_prio = 100;
	pkt.svc_holder = holder;
	srnic_service_rx(eng, &pkt, now);
}

static void announce_of(uint32_t svc, uint32_t h, uint32_t inc, unsigned port,
			uint32_t seq, uint64_t now)
{
	announce_as(svc, h, inc, port, seq, now, 1, TERM);
}

static void announce(uint32_t inc, unsigned port, uint32_t seq,
		     uint64_t now)
{
	announce_of(SVC, HOLDER, inc, port, seq, now);
}

static uint64_t heard(void)
{
	const struct srnic_service *sv = srnic_service_find(eng->node, SVC);

	return sv ? sv->holder_heard : 0;
}

/* failback=manual: the holder's "released at term T" makes it as silent
 * as a dead one (heard svc_dead_ms ago: the best live member claims at
 * once, and clients' retries stay free within svc_grace_ms); a
 * release of another term, or by another member, changes nothing. */
static void test_released(uint32_t inc, uint32_t seq, uint64_t now)
{
	const struct srnic_service *sv = srnic_service_find(eng->node, SVC);
	uint64_t was = heard();

	eng->cfg.svc_dead_ms = 300;

	announce_as(SVC, HOLDER, inc, 0, seq, now, SRNIC_SVC_RELEASED,
		    TERM - 0x100);
	CHECK(heard() == was, "a release of an older term taken");
	announce_as(SVC, HOLDER + 1, inc, 0, 1, now, SRNIC_SVC_RELEASED, TERM);
	CHECK(heard() == was, "another member's release taken");
	announce_as(SVC, HOLDER, inc, 0, seq + 1, now, SRNIC_SVC_RELEASED,
		    TERM);
	CHECK(heard() == now - 300 && sv && sv->holder_released,
	      "the holder's release of its term not taken: heard %llu",
	      (unsigned long long)heard());
}

/* The QPs a holder announces as bound to clients: a process killed with
 * some bound takes its count with it, or failback=expire would wait for
 * connections nobody holds. */
static void test_bound_release(void)
{
	struct srnic_service *sv = srnic_service_find(eng->node, SVC);

	if (!CHECK(sv, "no service"))
		return;
	__atomic_add_fetch(&sv->bound_by[0], 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&sv->bound_by[3], 2, __ATOMIC_RELEASE);
	CHECK(srnic_service_bound(sv) == 3, "bound %u, not 3",
	      srnic_service_bound(sv));
	srnic_service_release_proc(eng->node, 3);
	CHECK(srnic_service_bound(sv) == 1,
	      "bound %u after process 3 went, not 1", srnic_service_bound(sv));
}

/* The table of services is not filled for good by announcements of
 * services nobody hears of again: the full table refuses a newcomer (and
 * counts it) while every entry was heard lately, then gives it the entry
 * of the one unheard for longest, never one of this node's own.  SVC,
 * last heard at 8000, is the quietest. */
static void test_table_full(void)
{
	const uint64_t t = 15000, forget = SRNIC_PEER_FORGET_MS + 2000;
	uint64_t full0 = eng->st->svc_full;
	struct srnic_service *own;
	unsigned i;

	eng->cfg.svc_grace_ms = 2000;
	for (i = 0; i < SRNIC_MAX_SVC_KNOWN; i++)
		announce_of(0x0a000100u + i, 0x0a000200u + i, INC, 0, 1, t);
	CHECK(eng->st->svc_full - full0 == 1,
	      "%llu of 16 new services refused by a table with one entry "
	      "taken, not 1", (unsigned long long)(eng->st->svc_full - full0));
	announce_of(0x0a000300u, 0x0a000400u, INC, 0, 1, t + 1000);
	CHECK(!srnic_service_find(eng->node, 0x0a000300u) &&
		      eng->st->svc_full - full0 == 2,
	      "a newcomer took the entry of a service heard lately");
	announce_of(0x0a000300u, 0x0a000400u, INC, 0, 2, 8000 + forget);
	CHECK(srnic_service_find(eng->node, 0x0a000300u) &&
		      !srnic_service_find(eng->node, SVC),
	      "the newcomer did not take the entry of the service unheard "
	      "for %llu ms", (unsigned long long)forget);
	own = srnic_service_find(eng->node, 0x0a000100u);
	if (!CHECK(own, "service 10.0.1.0 not in the table"))
		return;
	own->mine = 0;
	own->since = own->holder_heard = own->member[0].heard = 0;
	announce_of(0x0a000301u, 0x0a000401u, INC, 0, 1, t + forget + 1);
	CHECK(srnic_service_find(eng->node, 0x0a000301u) &&
		      srnic_service_find(eng->node, 0x0a000100u) == own,
	      "a newcomer took this node's own service's entry, or none");
}

int main(void)
{
	const struct srnic_service *sv;
	uint64_t stale0;

	eng = ring_engine_new();
	eng->cfg.ipv4 = 0x0a000001u;
	announce(INC, 0, 10, 1000);
	sv = srnic_service_find(eng->node, SVC);
	if (!CHECK(sv && sv->holder == HOLDER && sv->term == TERM &&
			   heard() == 1000,
		   "the first announcement did not make the holder"))
		return check_summary("test_service");

	/* The holder dies; its last announcement, recorded, comes again. */
	stale0 = eng->st->svc_stale;
	announce(INC, 0, 10, 5000);
	announce(INC, 0, 9, 5001);
	CHECK(heard() == 1000, "a replay kept the holder alive (heard %llu)",
	      (unsigned long long)heard());
	CHECK(eng->st->svc_stale - stale0 == 2, "%llu replays counted, not 2",
	      (unsigned long long)(eng->st->svc_stale - stale0));

	/* Its next one, and the same round's on its other port. */
	announce(INC, 0, 11, 6000);
	CHECK(heard() == 6000, "a new announcement not taken");
	announce(INC, 1, 11, 6001);
	CHECK(heard() == 6001, "the other port's announcement not taken");
	announce(INC, 1, 11, 6002);
	CHECK(heard() == 6001, "the other port's, replayed, taken");

	/* An older process of the holder (lower boot count): refused. */
	announce(INC - 0x10000, 0, 500, 7000);
	CHECK(heard() == 6001, "an older process's announcement taken");
	/* A newer process numbers from 0 again: taken. */
	announce(INC + 0x10000, 0, 0, 8000);
	CHECK(heard() == 8000, "a restarted holder's first announcement "
	      "refused");
	test_released(INC + 0x10000, 1, 8000);
	test_bound_release();
	test_table_full();
	return check_summary("test_service");
}
