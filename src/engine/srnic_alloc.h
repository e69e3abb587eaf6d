/* SPDX-License-Identifier: MIT */
/*
 * Control-plane allocations (QPs, CQs, tables) come from jemalloc through its
 * own entry points, never through malloc: the provider is dlopen()ed into
 * programs that already have an allocator, so "malloc" there is theirs.
 * Packet buffers never come from here: they are DPDK mbufs.
 */
#ifndef SRNIC_ALLOC_H
#define SRNIC_ALLOC_H

#include <stddef.h>
#include <jemalloc/jemalloc.h>

static inline void *srnic_zalloc(size_t size)
{
	return mallocx(size ? size : 1, MALLOCX_ZERO);
}

static inline void *srnic_zalloc_aligned(size_t size, size_t align)
{
	return mallocx(size ? size : 1, MALLOCX_ZERO | MALLOCX_ALIGN(align));
}

static inline void srnic_free(void *p)
{
	if (p)
		dallocx(p, 0);
}

#endif
