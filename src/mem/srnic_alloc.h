/* SPDX-License-Identifier: MIT */
/*
 * Control-plane allocations (QPs, CQs, tables, the bitmaps of messages of
 * more than 64 packets) come from the C library's allocator: that is, from
 * the allocator of the program the provider is loaded into, as in every
 * rdma-core provider.  A library that libibverbs dlopen()s into any program
 * must not need static TLS, which an allocator of its own such as jemalloc
 * takes (its thread state is initial-exec TLS, and glibc keeps only a
 * little room for it: every program then needed GLIBC_TUNABLES).  A
 * program of ours that wants jemalloc links it as its malloc.
 * Packet buffers never come from here: they are DPDK mbufs.
 */
#ifndef SRNIC_ALLOC_H
#define SRNIC_ALLOC_H

#include <stdlib.h>
#include <string.h>

static inline void *srnic_zalloc(size_t size)
{
	return calloc(1, size ? size : 1);
}

static inline void *srnic_zalloc_aligned(size_t size, size_t align)
{
	void *p;

	if (posix_memalign(&p, align, size ? size : 1))
		return NULL;
	memset(p, 0, size);
	return p;
}

static inline void srnic_free(void *p)
{
	free(p);
}

#endif
