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

/* Bytes of bitmaps that the tracks of messages from the wire may hold at
 * once (per engine): a message's length is the sender's word, and a forged
 * 2 GiB one in 256-byte packets would take 1 MiB.  A track that would go
 * past max (0: no limit) is refused (its message is asked for again
 * later). */
struct srnic_track_budget {
	uint64_t bytes;
	uint64_t max;
};

struct srnic_track {
	uint64_t inline_bits;
	uint64_t *bits;		/* NULL when inline_bits is enough */
	struct srnic_track_budget *budget; /* what bits count against */
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

/* The bitmap bytes npkts packets take (0: inline). */
static inline uint64_t srnic_track_map_bytes(uint32_t npkts)
{
	return npkts > 64 ? ((uint64_t)npkts + 63) / 64 * 8 : 0;
}

static inline void srnic_track_fini(struct srnic_track *t)
{
	if (t->bits && t->budget)
		t->budget->bytes -= srnic_track_map_bytes(t->npkts);
	srnic_free(t->bits);
	t->bits = NULL;
	t->budget = NULL;
	t->npkts = t->ndone = 0;
	t->inline_bits = 0;
}

/* A track for a message of msg_len bytes in packets of 1 << shift, its
 * bitmap counted against budget (NULL: none, for messages of our own);
 * -1 when no memory or budget is left for it. */
static inline int srnic_track_init_within(struct srnic_track *t,
					  uint32_t msg_len, uint8_t shift,
					  struct srnic_track_budget *budget)
{
	uint64_t bytes;

	srnic_track_fini(t);
	t->shift = shift;
	t->npkts = srnic_track_npkts(msg_len, shift);
	bytes = srnic_track_map_bytes(t->npkts);
	if (!bytes)
		return 0;
	if (budget && budget->max && budget->bytes + bytes > budget->max) {
		t->npkts = 0;
		return -1;
	}
	t->bits = srnic_zalloc(bytes);
	if (!t->bits) {
		t->npkts = 0;
		return -1;
	}
	t->budget = budget;
	if (budget)
		budget->bytes += bytes;
	return 0;
}

static inline int srnic_track_init(struct srnic_track *t, uint32_t msg_len,
				   uint8_t shift)
{
	return srnic_track_init_within(t, msg_len, shift, NULL);
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

/* Packet idx as not landed after all (a held packet given back: its
 * resend must land). */
static inline void srnic_track_unmark(struct srnic_track *t, uint32_t idx)
{
	uint64_t *w = t->bits ? &t->bits[idx / 64] : &t->inline_bits;
	uint64_t b = 1ull << (idx % 64);

	if (*w & b) {
		*w &= ~b;
		t->ndone--;
	}
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
