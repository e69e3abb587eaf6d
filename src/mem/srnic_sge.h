/* SPDX-License-Identifier: MIT */
/*
 * Scatter into (and gather from) a list of local SGEs, checking each piece
 * against the memory table as it is used: a region deregistered while a
 * message is in flight is never touched after its deregistration returned.
 */
#ifndef SRNIC_SGE_H
#define SRNIC_SGE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "srnic_mem.h"
#include "srnic_queue.h"

/* Sum of the SGE lengths, or -1 when an SGE that any of the first `used`
 * bytes would land in fails the check.  The others are not looked at: a
 * 0-byte message lands in none, and its receive may name no memory at all
 * (libfabric's fi_shared_ctx posts one of lkey 0 and 256 bytes; rxe
 * checks a key only as it copies, and a NIC as it writes). */
static inline int64_t srnic_sge_check_used(const struct srnic_mem_table *t,
					   uint32_t pd,
					   const struct srnic_sge *sge,
					   unsigned n, uint32_t need,
					   uint64_t used)
{
	int64_t total = 0;
	unsigned i;

	for (i = 0; i < n; i++) {
		if (sge[i].length && (uint64_t)total < used &&
		    srnic_mem_check(t, sge[i].lkey, pd, sge[i].addr,
				    sge[i].length, need))
			return -1;
		total += sge[i].length;
	}
	return total;
}

/* Copy len bytes at message offset off into the SGEs (into) or out of
 * them, checking each piece as it goes (writing needs LOCAL_WRITE, reading
 * any live region of the PD); 0, or -1 on a failed check, a page of an
 * on-demand region not there, or when the SGEs end first. */
static inline int srnic_sge_copy(const struct srnic_mem_table *t, uint32_t pd,
				 const struct srnic_sge *sge, unsigned n,
				 uint32_t off, uint8_t *buf, uint32_t len,
				 bool into)
{
	unsigned i;

	for (i = 0; i < n && len; i++) {
		uint32_t sl = sge[i].length, k;
		uint8_t *mem;

		if (off >= sl) {
			off -= sl;
			continue;
		}
		k = sl - off < len ? sl - off : len;
		if (srnic_mem_check(t, sge[i].lkey, pd, sge[i].addr + off, k,
				    into ? SRNIC_ACCESS_LOCAL_WRITE : 0))
			return -1;
		mem = (uint8_t *)(uintptr_t)(sge[i].addr + off);
		if (!srnic_mem_copy(t, into ? mem : buf, into ? buf : mem, k))
			return -1;
		buf += k;
		len -= k;
		off = 0;
	}
	return len ? -1 : 0;
}

/* Where the len bytes at message offset off are, when one SGE holds them
 * all and they pass the check for reading: NULL otherwise, with *bad set
 * when the check failed (and clear when they merely span SGEs). */
static inline const uint8_t *srnic_sge_piece(const struct srnic_mem_table *t,
					     uint32_t pd,
					     const struct srnic_sge *sge,
					     unsigned n, uint32_t off,
					     uint32_t len, bool *bad)
{
	unsigned i;

	*bad = false;
	for (i = 0; i < n; i++) {
		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		if (sge[i].length - off < len)
			return NULL;
		if (srnic_mem_check(t, sge[i].lkey, pd, sge[i].addr + off, len,
				    0)) {
			*bad = true;
			return NULL;
		}
		return (const uint8_t *)(uintptr_t)(sge[i].addr + off);
	}
	return NULL;
}

static inline int srnic_sge_scatter(const struct srnic_mem_table *t,
				    uint32_t pd, const struct srnic_sge *sge,
				    unsigned n, uint32_t off, const void *src,
				    uint32_t len)
{
	return srnic_sge_copy(t, pd, sge, n, off, (uint8_t *)(uintptr_t)src,
			      len, true);
}

static inline int srnic_sge_gather(const struct srnic_mem_table *t,
				   uint32_t pd, const struct srnic_sge *sge,
				   unsigned n, uint32_t off, void *dst,
				   uint32_t len)
{
	return srnic_sge_copy(t, pd, sge, n, off, dst, len, false);
}

#endif
