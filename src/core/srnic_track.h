/* SPDX-License-Identifier: MIT */
/*
 * Which packets of one message have landed.  Packets are cut on stride
 * boundaries, so packet i covers [i << shift, (i + 1) << shift): a bit per
 * packet is enough to place in any order and to drop duplicates.  Messages of
 * up to 64 packets keep their bits inline; larger ones get a bitmap for the
 * message's lifetime (one allocation a message, never one a packet).
 */
#ifndef SRNIC_TRACK_H
#define SRNIC_TRACK_H

#include <stdbool.h>
#include <stdint.h>

#include "srnic_alloc.h"

struct srnic_track {
	uint64_t inline_bits;
	uint64_t *bits;		/* NULL when inline_bits is enough */
	uint32_t npkts;
	uint32_t ndone;
	uint8_t shift;
};

static inline uint32_t srnic_track_npkts(uint32_t msg_len, uint8_t shift)
{
	/* An empty message still travels as one (empty) packet. */
	return msg_len ? (uint32_t)(((uint64_t)msg_len + (1u << shift) - 1) >>
				    shift)
		       : 1;
}

static inline void srnic_track_fini(struct srnic_track *t)
{
	srnic_free(t->bits);
	t->bits = NULL;
	t->npkts = t->ndone = 0;
	t->inline_bits = 0;
}

static inline int srnic_track_init(struct srnic_track *t, uint32_t msg_len,
				   uint8_t shift)
{
	srnic_track_fini(t);
	t->shift = shift;
	t->npkts = srnic_track_npkts(msg_len, shift);
	if (t->npkts > 64) {
		t->bits = srnic_zalloc(((t->npkts + 63) / 64) * 8);
		if (!t->bits)
			return -1;
	}
	return 0;
}

/* Marks packet idx; false when it had landed already (a duplicate). */
static inline bool srnic_track_mark(struct srnic_track *t, uint32_t idx)
{
	uint64_t *w = t->bits ? &t->bits[idx / 64] : &t->inline_bits;
	uint64_t b = 1ull << (idx % 64);

	if (*w & b)
		return false;
	*w |= b;
	t->ndone++;
	return true;
}

static inline bool srnic_track_test(const struct srnic_track *t, uint32_t idx)
{
	const uint64_t *w = t->bits ? &t->bits[idx / 64] : &t->inline_bits;

	return *w & (1ull << (idx % 64));
}

/* The first packet at or after from that has landed (landed true) or not
 * (false); npkts when there is none.  A word at a time: a READ of 2 GiB
 * has two million packets. */
static inline uint32_t srnic_track_next(const struct srnic_track *t,
					uint32_t from, bool landed)
{
	const uint64_t *words = t->bits ? t->bits : &t->inline_bits;
	uint32_t i = from;

	while (i < t->npkts) {
		uint64_t w = words[i / 64];

		if (!landed)
			w = ~w;
		w &= ~0ull << (i % 64);
		if (w) {
			i = (i & ~63u) + (uint32_t)__builtin_ctzll(w);
			return i < t->npkts ? i : t->npkts;
		}
		i = (i & ~63u) + 64;
	}
	return t->npkts;
}

static inline bool srnic_track_complete(const struct srnic_track *t)
{
	return t->npkts && t->ndone == t->npkts;
}

#endif
