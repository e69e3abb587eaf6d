/* SPDX-License-Identifier: MIT */
/*
 * The memory table and the SGE helpers on top of it: keys, the one bounds
 * and rights check every placement goes through, and scatter across SGEs.
 * Regions used only for checks name addresses nothing maps: the table never
 * touches the memory, so any number will do.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "srnic_mem.h"
#include "srnic_sge.h"

#define IDX(key) ((key) & (SRNIC_MAX_MR - 1))
#define TAG(key) ((key) >> (SRNIC_MR_INDEX_BITS + SRNIC_MR_OWNER_BITS))

#define ALL_RIGHTS                                                  \
	(SRNIC_ACCESS_LOCAL_WRITE | SRNIC_ACCESS_REMOTE_WRITE |     \
	 SRNIC_ACCESS_REMOTE_READ | SRNIC_ACCESS_REMOTE_ATOMIC)

static const char *mem_name(enum srnic_mem_check r)
{
	static const char *const n[] = {"OK", "BAD_KEY", "BAD_PD",
					"OUT_OF_BOUNDS", "NO_RIGHTS"};

	return r <= SRNIC_MEM_NO_RIGHTS ? n[r] : "?";
}

#define EXPECT(t, key, pd, addr, len, need, want)                            \
	do {                                                                 \
		enum srnic_mem_check r_ =                                    \
			srnic_mem_check(t, key, pd, addr, len, need);        \
		CHECK(r_ == (want),                                          \
		      "check(key %#x, pd %u, addr %#llx, len %#llx, need "   \
		      "%#x) = %s, want %s",                                  \
		      (unsigned)(key), (unsigned)(pd),                       \
		      (unsigned long long)(addr), (unsigned long long)(len), \
		      (unsigned)(need), mem_name(r_), mem_name(want));       \
	} while (0)

static void deregister(struct srnic_mem_table *t, uint32_t key)
{
	CHECK(srnic_mem_invalidate(t, key) == 0, "invalidate %#x", key);
	srnic_mem_release(t, key);
}

static void test_keys(void)
{
	struct srnic_mem_table t, u;
	uint32_t k[100], prev, key, same = 0, i, j;
	unsigned tags_seen = 0;
	static uint8_t seen[1u << SRNIC_MR_TAG_BITS];

	CHECK(srnic_mem_init(&t, 42) == 0, "init");
	for (i = 0; i < 100; i++) {
		k[i] = srnic_mem_register(&t, 0x1000 * (i + 1), 0x1000,
					  ALL_RIGHTS, 1);
		CHECK(k[i] != 0, "register %u failed", i);
		CHECK(IDX(k[i]) != 0, "key %#x uses index 0", k[i]);
		CHECK(TAG(k[i]) != 0, "key %#x has no tag", k[i]);
		for (j = 0; j < i; j++)
			CHECK(IDX(k[i]) != IDX(k[j]),
			      "keys %#x and %#x share an index", k[i], k[j]);
	}
	CHECK(t.used == 100, "used %u", t.used);

	/* Tags come from the generator, not a counter: they must not be
	 * all alike nor step by one. */
	for (i = 1, j = 0; i < 100; i++)
		j += TAG(k[i]) - TAG(k[i - 1]) <= 1;
	CHECK(j < 3, "%u of 99 tags follow their predecessor", j);

	/* Reusing an index gives a new tag, so the old key misses: never the
	 * tag it just had. */
	prev = k[50];
	for (i = 0; i < 20000; i++) {
		deregister(&t, prev);
		key = srnic_mem_register(&t, 0x5000, 0x1000, ALL_RIGHTS, 1);
		CHECK(IDX(key) == IDX(prev),
		      "freed index %#x not reused first (got %#x)", IDX(prev),
		      IDX(key));
		if (key == prev) {
			same++;
		} else {
			EXPECT(&t, prev, 1, 0x5000, 1, 0, SRNIC_MEM_BAD_KEY);
		}
		EXPECT(&t, key, 1, 0x5000, 1, 0, SRNIC_MEM_OK);
		if (!seen[TAG(key)]++)
			tags_seen++;
		prev = key;
	}
	CHECK(same == 0, "%u of 20000 re-registrations reused the key", same);
	/* 20000 draws from 1023 tags (the top bit is clear: a window's
	 * keys have it) see nearly all of them. */
	CHECK(tags_seen > 1000, "only %u distinct tags in 20000", tags_seen);
	CHECK(t.used == 100, "used %u after churn", t.used);

	/* Another seed (another engine start) gives other keys: keys of an
	 * earlier incarnation miss. */
	CHECK(srnic_mem_init(&u, 0x9e3779b97f4a7c15ull) == 0, "init");
	for (i = 0, j = 0; i < 100; i++) {
		key = srnic_mem_register(&u, 0x1000 * (i + 1), 0x1000,
					 ALL_RIGHTS, 1);
		j += key == k[i];
	}
	CHECK(j <= 1, "%u of 100 keys alike under two seeds", j);
	srnic_mem_fini(&u);

	/* The same seed gives the same keys: the tags depend on the seed
	 * and on nothing else. */
	CHECK(srnic_mem_init(&u, 42) == 0, "init");
	key = srnic_mem_register(&u, 0x1000, 0x1000, ALL_RIGHTS, 1);
	CHECK(key == k[0], "seed 42 gave %#x, then %#x", k[0], key);
	srnic_mem_fini(&u);

	/* Two processes of one node (owners 1 and 2), even with the same
	 * seed: no key of one is a key of the other, and each carries its
	 * owner. */
	{
		struct srnic_mem_table p, q;
		uint32_t kp, kq;

		CHECK(srnic_mem_init(&p, 42) == 0 && srnic_mem_init(&q, 42) == 0,
		      "init");
		srnic_mem_set_owner(&p, 1);
		srnic_mem_set_owner(&q, 2);
		for (i = 0; i < 1000; i++) {
			kp = srnic_mem_register(&p, 0x1000, 0x1000, ALL_RIGHTS, 1);
			kq = srnic_mem_register(&q, 0x1000, 0x1000, ALL_RIGHTS, 1);
			CHECK(srnic_mem_key_owner(kp) == 1 &&
			      srnic_mem_key_owner(kq) == 2,
			      "owners of %#x and %#x", kp, kq);
			EXPECT(&q, kp, 1, 0x1000, 1, 0, SRNIC_MEM_BAD_KEY);
			EXPECT(&p, kq, 1, 0x1000, 1, 0, SRNIC_MEM_BAD_KEY);
		}
		srnic_mem_fini(&p);
		srnic_mem_fini(&q);
	}

	/* A region that wraps the address space is refused. */
	errno = 0;
	key = srnic_mem_register(&t, UINT64_MAX - 10, 100, ALL_RIGHTS, 1);
	CHECK(key == 0 && errno == EINVAL, "wrapping region: key %#x errno %d",
	      key, errno);
	CHECK(t.used == 100, "a refused registration took an entry");

	/* Invalidating twice, or a key never handed out, fails. */
	CHECK(srnic_mem_invalidate(&t, k[0]) == 0, "invalidate");
	CHECK(srnic_mem_invalidate(&t, k[0]) == -EINVAL, "second invalidate");
	CHECK(srnic_mem_invalidate(&t, 0) == -EINVAL, "invalidate key 0");
	CHECK(srnic_mem_invalidate(&t, k[1] ^ (1u << 20)) == -EINVAL,
	      "invalidate a forged key");
	EXPECT(&t, k[1], 1, 0x2000, 1, 0, SRNIC_MEM_OK);
	srnic_mem_fini(&t);
}

static void test_check(void)
{
	struct srnic_mem_table t;
	const uint64_t a = 0x7f0000001000ull, len = 0x3000;
	/* A region ending 4 KiB below the top of the address space. */
	const uint64_t hi = UINT64_MAX - 0x1fff;
	uint32_t key, hkey, stale, rights[4], r, need;
	unsigned i;

	CHECK(srnic_mem_init(&t, 7) == 0, "init");
	key = srnic_mem_register(&t, a, len, ALL_RIGHTS, 5);
	hkey = srnic_mem_register(&t, hi, 0x1000, ALL_RIGHTS, 5);
	CHECK(key && hkey, "register");

	EXPECT(&t, key, 5, a, len, ALL_RIGHTS, SRNIC_MEM_OK);
	EXPECT(&t, key, 5, a, 1, 0, SRNIC_MEM_OK);
	EXPECT(&t, key, 5, a + len - 1, 1, 0, SRNIC_MEM_OK);
	EXPECT(&t, key, 5, a + 0x1000, 0x1000, 0, SRNIC_MEM_OK);
	EXPECT(&t, key, 5, a + len, 0, 0, SRNIC_MEM_OK);

	/* Keys: none, unknown index, right index with a wrong tag, index
	 * right but the entry unused. */
	EXPECT(&t, 0, 5, a, 1, 0, SRNIC_MEM_BAD_KEY);
	EXPECT(&t, key ^ (1u << 16), 5, a, 1, 0, SRNIC_MEM_BAD_KEY);
	EXPECT(&t, key ^ 0x80000000u, 5, a, 1, 0, SRNIC_MEM_BAD_KEY);
	EXPECT(&t, (key & ~0xffffu) | 0x1234, 5, a, 1, 0, SRNIC_MEM_BAD_KEY);
	EXPECT(&t, key & ~0xffffu, 5, a, 1, 0, SRNIC_MEM_BAD_KEY);
	EXPECT(&t, IDX(key), 5, a, 1, 0, SRNIC_MEM_BAD_KEY);

	EXPECT(&t, key, 4, a, 1, 0, SRNIC_MEM_BAD_PD);
	EXPECT(&t, key, 0, a, 1, 0, SRNIC_MEM_BAD_PD);

	/* Bounds: one byte before, at the end, one past, longer than the
	 * region, and lengths that would wrap an addition. */
	EXPECT(&t, key, 5, a - 1, 1, 0, SRNIC_MEM_OUT_OF_BOUNDS);
	EXPECT(&t, key, 5, a - 1, 2, 0, SRNIC_MEM_OUT_OF_BOUNDS);
	EXPECT(&t, key, 5, a + len, 1, 0, SRNIC_MEM_OUT_OF_BOUNDS);
	EXPECT(&t, key, 5, a + len - 1, 2, 0, SRNIC_MEM_OUT_OF_BOUNDS);
	EXPECT(&t, key, 5, a, len + 1, 0, SRNIC_MEM_OUT_OF_BOUNDS);
	EXPECT(&t, key, 5, a + len + 1, 0, 0, SRNIC_MEM_OUT_OF_BOUNDS);
	EXPECT(&t, key, 5, 0, 1, 0, SRNIC_MEM_OUT_OF_BOUNDS);
	EXPECT(&t, key, 5, a + 1, UINT64_MAX, 0, SRNIC_MEM_OUT_OF_BOUNDS);
	EXPECT(&t, key, 5, a + 1, UINT64_MAX - a, 0, SRNIC_MEM_OUT_OF_BOUNDS);
	EXPECT(&t, key, 5, UINT64_MAX, 2, 0, SRNIC_MEM_OUT_OF_BOUNDS);

	/* Near the top of the address space, where addr + len wraps. */
	EXPECT(&t, hkey, 5, hi, 0x1000, 0, SRNIC_MEM_OK);
	EXPECT(&t, hkey, 5, hi + 0xfff, 1, 0, SRNIC_MEM_OK);
	EXPECT(&t, hkey, 5, hi + 0x1000, 1, 0, SRNIC_MEM_OUT_OF_BOUNDS);
	EXPECT(&t, hkey, 5, hi + 0x10, UINT64_MAX, 0, SRNIC_MEM_OUT_OF_BOUNDS);
	EXPECT(&t, hkey, 5, hi + 0x10, UINT64_MAX - hi, 0,
	       SRNIC_MEM_OUT_OF_BOUNDS);	/* addr + len wraps to 0xf */
	EXPECT(&t, hkey, 5, hi + 0x10, 0 - (hi + 0x10), 0,
	       SRNIC_MEM_OUT_OF_BOUNDS);	/* addr + len wraps to 0 */
	EXPECT(&t, hkey, 5, UINT64_MAX, 1, 0, SRNIC_MEM_OUT_OF_BOUNDS);
	EXPECT(&t, hkey, 5, UINT64_MAX, 0x2000, 0, SRNIC_MEM_OUT_OF_BOUNDS);

	/* Rights: a region lacking exactly one right refuses that one and
	 * grants the others. */
	rights[0] = SRNIC_ACCESS_LOCAL_WRITE;
	rights[1] = SRNIC_ACCESS_REMOTE_WRITE;
	rights[2] = SRNIC_ACCESS_REMOTE_READ;
	rights[3] = SRNIC_ACCESS_REMOTE_ATOMIC;
	for (i = 0; i < 4; i++) {
		r = srnic_mem_register(&t, a, len, ALL_RIGHTS & ~rights[i], 5);
		EXPECT(&t, r, 5, a, len, rights[i], SRNIC_MEM_NO_RIGHTS);
		EXPECT(&t, r, 5, a, len, ALL_RIGHTS, SRNIC_MEM_NO_RIGHTS);
		EXPECT(&t, r, 5, a, len, ALL_RIGHTS & ~rights[i],
		       SRNIC_MEM_OK);
		EXPECT(&t, r, 5, a, 0, 0, SRNIC_MEM_OK);
		deregister(&t, r);
	}
	/* And a region with no rights at all grants only the empty set. */
	r = srnic_mem_register(&t, a, len, 0, 5);
	for (need = 1; need <= ALL_RIGHTS; need++)
		EXPECT(&t, r, 5, a, 1, need, SRNIC_MEM_NO_RIGHTS);
	EXPECT(&t, r, 5, a, 1, 0, SRNIC_MEM_OK);

	/* Order of the verdicts: key before PD before bounds before
	 * rights, so the NAK names the first thing wrong. */
	EXPECT(&t, r, 6, a - 1, 1, ALL_RIGHTS, SRNIC_MEM_BAD_PD);
	EXPECT(&t, r, 5, a - 1, 1, ALL_RIGHTS, SRNIC_MEM_OUT_OF_BOUNDS);

	/* A key is dead as soon as it is invalidated, before release. */
	stale = key;
	CHECK(srnic_mem_invalidate(&t, key) == 0, "invalidate");
	EXPECT(&t, stale, 5, a, 1, 0, SRNIC_MEM_BAD_KEY);
	srnic_mem_release(&t, key);
	EXPECT(&t, stale, 5, a, 1, 0, SRNIC_MEM_BAD_KEY);
	/* ... and stays dead when its index is handed out again. */
	key = srnic_mem_register(&t, a, len, ALL_RIGHTS, 5);
	CHECK(IDX(key) == IDX(stale), "index not reused");
	if (key != stale)
		EXPECT(&t, stale, 5, a, 1, 0, SRNIC_MEM_BAD_KEY);
	EXPECT(&t, key, 5, a, 1, 0, SRNIC_MEM_OK);
	srnic_mem_fini(&t);
}

/* A service's region: the same key for its service and slot in any
 * table (every member's), one per slot, the same again after a release. */
static void test_service_keys(void)
{
	struct srnic_mem_table t, u;
	uint32_t a, b, c, d;

	CHECK(srnic_mem_init(&t, 1) == 0 && srnic_mem_init(&u, 99) == 0,
	      "init");
	a = srnic_mem_register_svc(&t, 0, 0x0a370064, 3, 0x5000, 0x1000,
				   SRNIC_ACCESS_REMOTE_WRITE, 1);
	b = srnic_mem_register_svc(&u, 0, 0x0a370064, 3, 0x9000, 0x2000,
				   SRNIC_ACCESS_REMOTE_WRITE, 7);
	CHECK(a && a == b, "a service slot's key on two members: %#x %#x",
	      a, b);
	CHECK(IDX(a) == SRNIC_MR_SVC_FIRST + 3 && !(a & SRNIC_MW_BIT),
	      "its entry is the slot's: %#x", a);
	CHECK(srnic_mem_check(&t, a, 1, 0x5000, 0x1000,
			      SRNIC_ACCESS_REMOTE_WRITE) == SRNIC_MEM_OK &&
		      srnic_mem_check(&u, b, 7, 0x9000, 0x2000,
				      SRNIC_ACCESS_REMOTE_WRITE) == SRNIC_MEM_OK,
	      "each member's region behind it");
	errno = 0;
	CHECK(!srnic_mem_register_svc(&t, 0, 0x0a370064, 3, 0x5000, 0x1000,
				      0, 1) && errno == EBUSY,
	      "a second region for the slot is EBUSY");
	c = srnic_mem_register_svc(&t, 0, 0x0a370064, 5, 0x5000, 0x1000, 0, 1);
	d = srnic_mem_register_svc(&u, 0, 0x0a370065, 5, 0x5000, 0x1000, 0,
				   1);
	CHECK(c && c != a && d && d != c,
	      "another slot, another service: other keys (%#x %#x)", c, d);
	deregister(&t, a);
	CHECK(srnic_mem_check(&t, a, 1, 0x5000, 0x1000, 0) != SRNIC_MEM_OK,
	      "gone with its release");
	CHECK(srnic_mem_register_svc(&t, 0, 0x0a370064, 3, 0x6000, 0x1000, 0,
				     1) == a,
	      "the same key again after its release");
	srnic_mem_fini(&t);
	srnic_mem_fini(&u);
}

static void test_full(void)
{
	struct srnic_mem_table t;
	static uint32_t keys[SRNIC_MAX_MR];
	static uint8_t idx_used[SRNIC_MAX_MR];
	uint32_t i, key, dup = 0;

	CHECK(srnic_mem_init(&t, 1) == 0, "init");
	/* Index 0 is never used, nor the services' entries, so there is
	 * room for SRNIC_MR_SVC_FIRST - 1. */
	for (i = 0; i < SRNIC_MR_SVC_FIRST - 1; i++) {
		keys[i] = srnic_mem_register(&t, 0x10000 + i * 64ull, 64,
					     SRNIC_ACCESS_LOCAL_WRITE, 1);
		if (!CHECK(keys[i] != 0, "register %u of %u failed", i,
			   SRNIC_MR_SVC_FIRST - 1))
			break;
		dup += idx_used[IDX(keys[i])]++ != 0;
	}
	CHECK(dup == 0, "%u indices handed out twice", dup);
	CHECK(!idx_used[0], "index 0 handed out");
	CHECK(t.used == SRNIC_MR_SVC_FIRST - 1, "used %u", t.used);

	errno = 0;
	key = srnic_mem_register(&t, 0x1000, 64, 0, 1);
	CHECK(key == 0 && errno == ENOMEM, "full table: key %#x errno %d",
	      key, errno);
	errno = 0;
	key = srnic_mem_register(&t, 0x1000, 64, 0, 1);
	CHECK(key == 0 && errno == ENOMEM, "full table again: key %#x errno %d",
	      key, errno);

	/* Every region is still intact and checkable. */
	for (i = 0, dup = 0; i < SRNIC_MR_SVC_FIRST - 1; i++)
		dup += srnic_mem_check(&t, keys[i], 1, 0x10000 + i * 64ull, 64,
				       SRNIC_ACCESS_LOCAL_WRITE) !=
		       SRNIC_MEM_OK;
	CHECK(dup == 0, "%u regions fail their check in a full table", dup);

	/* One freed entry makes room for exactly one. */
	deregister(&t, keys[1234]);
	key = srnic_mem_register(&t, 0x1000, 64, 0, 1);
	CHECK(key != 0 && IDX(key) == IDX(keys[1234]),
	      "register after a release: %#x", key);
	errno = 0;
	CHECK(srnic_mem_register(&t, 0x1000, 64, 0, 1) == 0 && errno == ENOMEM,
	      "table not full again");
	srnic_mem_fini(&t);
}

/*
 * Scatter across five SGEs of odd sizes, a zero-length one among them, each
 * in its own region with guard bytes around it.  Every (offset, length)
 * pair is tried, so every way of starting and ending inside or on the edge
 * of an SGE is covered; the guards show no byte lands outside.
 */
#define NSGE 5
#define GUARD 16

static const uint32_t sge_len[NSGE] = {7, 0, 13, 1, 32};

struct scatter_fix {
	struct srnic_mem_table t;
	uint8_t *buf[NSGE];
	struct srnic_sge sge[NSGE];
	uint32_t total;
};

static void fix_init(struct scatter_fix *x)
{
	unsigned i;

	CHECK(srnic_mem_init(&x->t, 99) == 0, "init");
	x->total = 0;
	for (i = 0; i < NSGE; i++) {
		x->buf[i] = malloc(sge_len[i] + 2 * GUARD);
		if (!x->buf[i])
			abort();
		/* Register the guards too: a write into them would pass
		 * the table check, so only the SGE bounds keep it out. */
		x->sge[i].addr = (uintptr_t)x->buf[i] + GUARD;
		x->sge[i].length = sge_len[i];
		x->sge[i].lkey = srnic_mem_register(
			&x->t, (uintptr_t)x->buf[i], sge_len[i] + 2 * GUARD,
			SRNIC_ACCESS_LOCAL_WRITE, 3);
		x->total += sge_len[i];
	}
}

static void fix_fill(struct scatter_fix *x)
{
	unsigned i;

	for (i = 0; i < NSGE; i++)
		memset(x->buf[i], 0xee, sge_len[i] + 2 * GUARD);
}

/* Whether the SGEs hold exactly src[off, off + len) at those message
 * offsets and 0xee everywhere else. */
static bool fix_holds(const struct scatter_fix *x, uint32_t off, uint32_t len,
		      const uint8_t *src)
{
	uint32_t m = 0, i, j;

	for (i = 0; i < NSGE; i++) {
		for (j = 0; j < sge_len[i] + 2 * GUARD; j++) {
			uint8_t want = 0xee;

			if (j >= GUARD && j < GUARD + sge_len[i]) {
				if (m >= off && m < off + len)
					want = src[m - off];
				m++;
			}
			if (x->buf[i][j] != want)
				return false;
		}
	}
	return true;
}

static void fix_fini(struct scatter_fix *x)
{
	unsigned i;

	for (i = 0; i < NSGE; i++)
		free(x->buf[i]);
	srnic_mem_fini(&x->t);
}

static void test_sge(void)
{
	struct scatter_fix x;
	struct srnic_sge bad[NSGE];
	uint8_t src[64];
	uint32_t off, len, i;
	unsigned wrong = 0;

	for (i = 0; i < sizeof(src); i++)
		src[i] = 0x10 + i;
	fix_init(&x);

	CHECK(srnic_sge_check_used(&x.t, 3, x.sge, NSGE, SRNIC_ACCESS_LOCAL_WRITE,
				   UINT64_MAX) == x.total,
	      "check_used total");
	CHECK(srnic_sge_check_used(&x.t, 3, x.sge, 0, 0, UINT64_MAX) == 0,
	      "no SGEs");
	CHECK(srnic_sge_check_used(&x.t, 4, x.sge, NSGE, 0, UINT64_MAX) == -1,
	      "wrong PD");
	CHECK(srnic_sge_check_used(&x.t, 3, x.sge, NSGE, SRNIC_ACCESS_REMOTE_READ,
				   UINT64_MAX) == -1,
	      "right not granted");
	/* An empty SGE names no memory, so its key is not looked at. */
	memcpy(bad, x.sge, sizeof(bad));
	bad[1].lkey = 0xdead0000;
	CHECK(srnic_sge_check_used(&x.t, 3, bad, NSGE, 0, UINT64_MAX) ==
		      x.total,
	      "empty SGE with a bad key");
	bad[2].lkey = 0;
	CHECK(srnic_sge_check_used(&x.t, 3, bad, NSGE, 0, UINT64_MAX) == -1,
	      "SGE with key 0");
	/* Only the SGEs the message's bytes land in are checked: none for
	 * 0 bytes, up to and with SGE 2 for a byte in it, and the total
	 * still for the length's own check. */
	CHECK(srnic_sge_check_used(&x.t, 3, bad, NSGE, 0, 0) == x.total,
	      "0 bytes: a bad key in an SGE checked");
	CHECK(srnic_sge_check_used(&x.t, 3, bad, NSGE, 0,
				   x.sge[0].length + x.sge[1].length) ==
		      x.total,
	      "bytes up to SGE 2: SGE 2's bad key checked");
	CHECK(srnic_sge_check_used(&x.t, 3, bad, NSGE, 0,
				   x.sge[0].length + x.sge[1].length + 1) == -1,
	      "a byte in SGE 2: its bad key not checked");
	memcpy(bad, x.sge, sizeof(bad));
	bad[4].length = 32 + GUARD + 1;
	CHECK(srnic_sge_check_used(&x.t, 3, bad, NSGE, 0, UINT64_MAX) == -1,
	      "SGE past its region");

	for (off = 0; off <= x.total; off++) {
		for (len = 0; off + len <= x.total; len++) {
			fix_fill(&x);
			if (!CHECK(srnic_sge_scatter(&x.t, 3, x.sge, NSGE, off,
						     src, len) == 0,
				   "scatter %u bytes at %u", len, off))
				continue;
			wrong += !fix_holds(&x, off, len, src);
		}
		/* One byte more than the SGEs hold is refused. */
		fix_fill(&x);
		CHECK(srnic_sge_scatter(&x.t, 3, x.sge, NSGE, off, src,
					x.total - off + 1) == -1,
		      "scatter past the SGEs at %u", off);
	}
	CHECK(wrong == 0, "%u scatters wrote the wrong bytes", wrong);
	CHECK(srnic_sge_scatter(&x.t, 3, x.sge, NSGE, x.total + 100, src,
				1) == -1,
	      "offset past the SGEs");
	CHECK(srnic_sge_scatter(&x.t, 3, x.sge, NSGE, UINT32_MAX, src, 1) ==
		      -1,
	      "offset UINT32_MAX");
	CHECK(srnic_sge_scatter(&x.t, 4, x.sge, NSGE, 0, src, 1) == -1,
	      "scatter with the wrong PD");

	/* An SGE deregistered while the message is in flight: any scatter
	 * that reaches it is refused and never writes into it. */
	CHECK(srnic_mem_invalidate(&x.t, x.sge[2].lkey) == 0, "invalidate");
	for (off = 0, wrong = 0; off <= x.total; off++) {
		for (len = 1; off + len <= x.total; len++) {
			bool hits = off < 7 + 13 && off + len > 7;
			int rc;

			fix_fill(&x);
			rc = srnic_sge_scatter(&x.t, 3, x.sge, NSGE, off, src,
					       len);
			/* Pieces are checked as they are written, so a
			 * packet placed clear of the dead SGE still lands:
			 * the one that reaches it fails the message. */
			CHECK(rc == (hits ? -1 : 0),
			      "scatter of %u at %u with SGE 2 invalidated: %d",
			      len, off, rc);
			for (i = 0; i < 13 + 2 * GUARD; i++)
				wrong += x.buf[2][i] != 0xee;
		}
	}
	CHECK(wrong == 0, "%u bytes written into an invalidated SGE", wrong);

	/* A region without local write is not scattered into. */
	fix_fini(&x);
	fix_init(&x);
	srnic_mem_invalidate(&x.t, x.sge[4].lkey);
	srnic_mem_release(&x.t, x.sge[4].lkey);
	x.sge[4].lkey = srnic_mem_register(&x.t, x.sge[4].addr - GUARD,
					   32 + 2 * GUARD,
					   SRNIC_ACCESS_REMOTE_WRITE, 3);
	fix_fill(&x);
	CHECK(srnic_sge_scatter(&x.t, 3, x.sge, NSGE, 21, src, 1) == -1,
	      "scatter into a region without local write");
	CHECK(fix_holds(&x, 0, 0, src), "bytes written without the right");
	fix_fini(&x);
}

/* The placements' copy (srnic_copy_once): every length up to a few
 * vectors past a cache line, at each alignment in a word of either end,
 * lands its bytes and nothing beside them.  (That it stores each byte
 * once, which is why it is not memcpy, no single-threaded test can see:
 * the e2e sock_check stream is where its absence showed.) */
static void test_copy_once(void)
{
	static uint8_t src[512], dst[512];
	size_t len, so, d, i;
	unsigned bad = 0;

	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + 1);
	for (len = 0; len <= 300; len++)
		for (so = 0; so < 8; so++)
			for (d = 64; d < 72; d++) {
				memset(dst, 0xaa, sizeof(dst));
				srnic_copy_once(dst + d, src + so, len);
				for (i = 0; i < sizeof(dst); i++) {
					uint8_t want = i >= d && i < d + len
							       ? src[so + i - d]
							       : 0xaa;

					bad += dst[i] != want;
				}
			}
	CHECK(bad == 0, "srnic_copy_once: %u bytes wrong or written outside", bad);
}

int main(void)
{
	test_copy_once();
	test_keys();
	test_check();
	test_full();
	test_service_keys();
	test_sge();
	return check_summary("test_mem");
}
