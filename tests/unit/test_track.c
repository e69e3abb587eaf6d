/* SPDX-License-Identifier: MIT */
/*
 * srnic_track: packets land in any order and any number of times; the
 * message completes exactly when each of its packets has landed once.
 * Sizes straddle the 64-packet line where the bits move from inline to an
 * allocated bitmap.
 */
#include <stdlib.h>

#include "check.h"
#include "srnic_track.h"

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint32_t rnd_below(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static void shuffle(uint32_t *v, uint32_t n)
{
	uint32_t i, j, x;

	for (i = n; i > 1; i--) {
		j = rnd_below(i);
		x = v[i - 1];
		v[i - 1] = v[j];
		v[j] = x;
	}
}

static void test_npkts(void)
{
	uint8_t s;
	uint32_t k, stride;

	for (s = 8; s <= 14; s++) {
		stride = 1u << s;
		CHECK(srnic_track_npkts(0, s) == 1, "empty message, shift %u",
		      s);
		CHECK(srnic_track_npkts(1, s) == 1, "1 byte, shift %u", s);
		for (k = 1; k <= 1000; k += 37) {
			CHECK(srnic_track_npkts(k * stride, s) == k,
			      "%u strides of %u", k, stride);
			CHECK(srnic_track_npkts(k * stride - 1, s) == k,
			      "%u strides of %u less a byte", k, stride);
			CHECK(srnic_track_npkts(k * stride + 1, s) == k + 1,
			      "%u strides of %u and a byte", k, stride);
		}
		/* The largest message: no overflow on the way. */
		CHECK(srnic_track_npkts(1u << 31, s) == 1u << (31 - s),
		      "2 GiB at shift %u: %u", s,
		      srnic_track_npkts(1u << 31, s));
		CHECK(srnic_track_npkts(UINT32_MAX, s) ==
			      (uint32_t)((1ull << 32) >> s),
		      "4 GiB - 1 at shift %u", s);
	}
}

/*
 * Lands every packet of a msg_len-byte message in a shuffled order, with
 * each packet sent twice on average, and checks at every step that exactly
 * the landed ones are set and completion comes with the last new one.
 * Testing every index after every mark would be quadratic, so a sample of
 * them is tested each time, and all of them at the end.
 */
static void land_all(uint32_t msg_len, uint8_t shift)
{
	struct srnic_track t = {0};
	uint32_t n = srnic_track_npkts(msg_len, shift), i, j, idx, done = 0;
	uint32_t *order, bad = 0;
	uint8_t *landed;

	if (!CHECK(srnic_track_init(&t, msg_len, shift) == 0,
		   "init %u bytes", msg_len))
		return;
	CHECK(t.npkts == n, "npkts %u, want %u", t.npkts, n);
	CHECK((t.bits != NULL) == (n > 64), "%u packets: bitmap %p", n,
	      (void *)t.bits);
	CHECK(!srnic_track_complete(&t), "%u bytes complete before any packet",
	      msg_len);

	/* Each index twice, shuffled: the second copy is the duplicate. */
	order = malloc(2 * (size_t)n * sizeof(*order));
	landed = calloc(n, 1);
	if (!order || !landed)
		abort();
	for (i = 0; i < n; i++)
		order[i] = order[n + i] = i;
	shuffle(order, 2 * n);

	for (i = 0; i < 2 * n; i++) {
		bool fresh;

		idx = order[i];
		bad += srnic_track_test(&t, idx) != landed[idx];
		fresh = srnic_track_mark(&t, idx);
		if (fresh != !landed[idx])
			bad++;
		if (!landed[idx]) {
			landed[idx] = 1;
			done++;
		}
		bad += !srnic_track_test(&t, idx);
		bad += t.ndone != done;
		bad += srnic_track_complete(&t) != (done == n);
		for (j = 0; j < 4; j++) {
			uint32_t k = rnd_below(n);

			bad += srnic_track_test(&t, k) != landed[k];
		}
	}
	CHECK(bad == 0, "%u bytes at shift %u: %u wrong answers", msg_len,
	      shift, bad);
	CHECK(srnic_track_complete(&t), "%u bytes not complete", msg_len);
	for (i = 0, bad = 0; i < n; i++)
		bad += !srnic_track_test(&t, i) || srnic_track_mark(&t, i);
	CHECK(bad == 0, "%u packets not set or marked again at the end", bad);
	CHECK(t.ndone == n, "ndone %u of %u after duplicates", t.ndone, n);
	free(order);
	free(landed);
	srnic_track_fini(&t);
	CHECK(!t.bits && !t.npkts && !t.ndone && !t.inline_bits,
	      "fini leaves state behind");
	CHECK(!srnic_track_complete(&t), "complete after fini");
}

static void test_landing(void)
{
	static const uint32_t k[] = {1, 2, 3, 63, 64, 65, 127, 128, 129, 1000};
	uint32_t i;
	uint8_t s;

	land_all(0, 8);
	land_all(1, 14);
	for (s = 8; s <= 14; s += 3) {
		for (i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
			/* k full packets, one byte more, one byte less */
			land_all(k[i] << s, s);
			land_all((k[i] << s) + 1, s);
			land_all((k[i] << s) - 1, s);
		}
	}
	land_all(100000u << 8, 8);			/* 100000 packets */
	land_all((100000u << 10) + 1, 10);
}

/* The first packet alone, the last alone, and each reported exactly at the
 * moment the message completes; the rest of the bitmap is not touched. */
static void test_edges(void)
{
	struct srnic_track t = {0};
	uint32_t n, i, bad = 0;

	CHECK(srnic_track_init(&t, 65 << 8, 8) == 0, "init");
	n = t.npkts;
	CHECK(n == 65, "npkts %u", n);
	CHECK(srnic_track_mark(&t, 64), "last packet");
	CHECK(srnic_track_test(&t, 64) && !srnic_track_test(&t, 63) &&
		      !srnic_track_test(&t, 0),
	      "bit 64 is not only bit 64");
	for (i = 0; i < 64; i++) {
		bad += srnic_track_complete(&t);
		bad += !srnic_track_mark(&t, i);
	}
	CHECK(bad == 0, "%u wrong answers", bad);
	CHECK(srnic_track_complete(&t), "65 packets landed, not complete");

	/* Re-init (the slot taken by the next message) starts clean, from
	 * a bitmap to inline bits and back. */
	CHECK(srnic_track_init(&t, 64 << 8, 8) == 0, "re-init, 64 packets");
	CHECK(!t.bits && !t.ndone && !srnic_track_complete(&t),
	      "re-init keeps state");
	for (i = 0, bad = 0; i < 64; i++)
		bad += srnic_track_test(&t, i);
	CHECK(bad == 0, "%u bits left over after re-init", bad);
	CHECK(srnic_track_mark(&t, 63) && srnic_track_mark(&t, 0),
	      "mark 63 and 0");
	CHECK(t.inline_bits == (1ull << 63 | 1), "inline bits %#llx",
	      (unsigned long long)t.inline_bits);
	CHECK(srnic_track_init(&t, 1000 << 8, 8) == 0, "re-init, 1000");
	for (i = 0, bad = 0; i < 1000; i++)
		bad += srnic_track_test(&t, i);
	CHECK(bad == 0, "%u bits set in a fresh bitmap", bad);
	srnic_track_fini(&t);
	srnic_track_fini(&t);	/* twice is harmless */
	CHECK(!t.bits, "fini");
}

/* srnic_track_next() against a bit-by-bit scan, on inline and allocated
 * bitmaps, with holes at word edges and at the end. */
static void test_next(void)
{
	static const uint32_t sizes[] = {1, 63, 64, 65, 130, 1000};
	unsigned k, i, f;

	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint32_t n = sizes[k];
		struct srnic_track t = {0};

		CHECK(srnic_track_init(&t, n << 8, 8) == 0, "init %u", n);
		for (i = 0; i < n; i++)
			if (i % 7 == 0 || i % 64 == 63 || i == n - 2)
				srnic_track_mark(&t, i);
		for (f = 0; f <= n; f++) {
			uint32_t want_l = n, want_m = n;

			for (i = n; i-- > f;) {
				if (srnic_track_test(&t, i))
					want_l = i;
				else
					want_m = i;
			}
			CHECK(srnic_track_next(&t, f, true) == want_l,
			      "%u packets: next landed from %u is %u, not %u",
			      n, f, want_l, srnic_track_next(&t, f, true));
			CHECK(srnic_track_next(&t, f, false) == want_m,
			      "%u packets: next missing from %u is %u, not %u",
			      n, f, want_m, srnic_track_next(&t, f, false));
		}
		srnic_track_fini(&t);
	}
}

int main(void)
{
	test_npkts();
	test_landing();
	test_edges();
	test_next();
	return check_summary("test_track");
}
