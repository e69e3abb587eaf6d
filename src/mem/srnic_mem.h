/* SPDX-License-Identifier: MIT */
/*
 * A process's memory table: every registered region of every context of
 * the process, shared by all ports.  A key is
 *
 *   0 | random tag (10 bits) | owner (5 bits) | index (16 bits)
 *
 * The tag comes from a generator seeded when the table is made, so keys of
 * an earlier incarnation, or guessed ones, miss.  The owner is the
 * process's slot in srnicd's node (0 for a process that runs the node
 * itself): two processes attached to one node at the same time never hand
 * out the same key, so a key of process P that arrives on a QP of process
 * Q names nothing of Q's and fails its check, whatever the draw.
 *
 * Registration happens on application threads; lookups happen only in the
 * datapath (under its token).  An entry is published by storing its key
 * last (release), and invalidated by the datapath itself
 * (srnic_mem_invalidate runs as an engine call), so a region is never
 * written after deregistration returns.
 */
#ifndef SRNIC_MEM_H
#define SRNIC_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>

#define SRNIC_MR_INDEX_BITS 16
#define SRNIC_MR_OWNER_BITS 5
#define SRNIC_MR_TAG_BITS (32 - SRNIC_MR_INDEX_BITS - SRNIC_MR_OWNER_BITS)
/* The PD of a revoked region: no PD has it, so every check of the key
 * fails (as SRNIC_MEM_BAD_PD) at no cost to the checks themselves. */
#define SRNIC_PD_REVOKED UINT32_MAX
#define SRNIC_MAX_MR (1u << SRNIC_MR_INDEX_BITS)
/* The last entries are services' (docs/failover.md): slot s of a service
 * is entry SRNIC_MR_SVC_FIRST + s, its key the same on every member (a
 * tag from the service's address and the slot, owner 0); the free list
 * hands out the others. */
#define SRNIC_MR_SVC_SLOTS 256
#define SRNIC_MR_SVC_FIRST (SRNIC_MAX_MR - SRNIC_MR_SVC_SLOTS)

/* Access rights, same meaning as verbs'. */
#define SRNIC_ACCESS_LOCAL_WRITE 0x1
#define SRNIC_ACCESS_REMOTE_WRITE 0x2
#define SRNIC_ACCESS_REMOTE_READ 0x4
#define SRNIC_ACCESS_REMOTE_ATOMIC 0x8
#define SRNIC_ACCESS_MW_BIND 0x10	/* windows may be bound in it */
/* On-demand paging: the region need not be mapped, now or later; a copy
 * that meets a hole fails its message (guard.c) instead of the process. */
#define SRNIC_ACCESS_ON_DEMAND 0x20
/* Half-RDMA (docs/half-rdma.md): the region is a FIFO's ring
 * (srnic_fifo.h), whose key names no address: a WRITE's packets are
 * appended to the ring as records, whatever their va.  Never a local key. */
#define SRNIC_ACCESS_FIFO 0x40
/* Third-party RDMA (docs/third-party.md): a controller may have this
 * node WRITE the region's bytes to a third node (with REMOTE_READ). */
#define SRNIC_ACCESS_THIRD_PARTY 0x80
#define SRNIC_ACCESS_REMOTE_ANY                                             \
	(SRNIC_ACCESS_REMOTE_WRITE | SRNIC_ACCESS_REMOTE_READ |              \
	 SRNIC_ACCESS_REMOTE_ATOMIC)

/*
 * Memory windows (window.c): a key of its own, whose range, rights and QP
 * a bind sets inside a region registered with SRNIC_ACCESS_MW_BIND.  A
 * window's key is
 *
 *   1 | tag (4 bits) | owner (5 bits) | index (14 bits) | count (8 bits)
 *
 * The count is the byte ibv_inc_rkey steps at every bind (a type 2 bind's
 * key is the program's choice of it); the top bit keeps windows' keys
 * apart from regions', whose tags leave it clear.
 */
#define SRNIC_MW_BIT 0x80000000u
#define SRNIC_MW_INDEX_BITS 14
#define SRNIC_MAX_MW (1u << SRNIC_MW_INDEX_BITS)
#define SRNIC_MW_INDEX(key) ((key) >> 8 & (SRNIC_MAX_MW - 1))

struct srnic_mr {
	uint32_t key; /* 0 when the entry is free: published last */
	uint32_t access;
	uint32_t pd;
	uint32_t next_free;
	uint32_t was;	/* the last key handed out here: the next differs */
	uint32_t windows;	/* windows bound in it (datapath's count) */
	uint8_t dev;		/* the adapter (verbs device) that issued it */
	uint64_t addr;
	uint64_t length;
};

struct srnic_mw {
	uint32_t key;		/* the bound key; 0: not bound (datapath) */
	uint32_t base;		/* the key less its count; 0: free entry */
	uint32_t pd;
	uint32_t qpn;		/* type 2: the QP it is bound to; 0: any */
	uint32_t access;	/* remote rights */
	uint32_t mr_key;	/* the region it lies in */
	uint32_t next_free;
	uint8_t type;		/* 1 or 2 */
	uint64_t addr;
	uint64_t length;
};

struct srnic_mem_table {
	struct srnic_mr *mr;
	struct srnic_mw *mw;
	uint32_t free_head;	/* index of the first free entry, or ~0 */
	uint32_t mw_free_head;	/* the same for windows */
	uint32_t mw_bound_to_qp; /* type 2 windows bound (datapath's count) */
	uint32_t used;
	uint64_t rng;		/* xorshift state for key tags */
	uint32_t owner;		/* the owner field of every key handed out */
	/* Robust placement (config robust_placement, set before anything
	 * is registered): every region's copies are guarded, so memory its
	 * program unmapped without deregistering fails the packet and
	 * fences the key (srnic_mem_fence) instead of killing the process. */
	bool robust;
	/* Set for good by the first region whose copies need the guard
	 * (every region when robust, else the first on-demand one): from
	 * then on every copy to or from a program's memory is guarded. */
	bool guarded;
	/* Set for good by the first on-demand region: no payload leaves
	 * zero-copy from then on, since the port would read a hole
	 * unguarded (an ordinary region's holes are the program's doing,
	 * and zero_copy is a choice made knowing it). */
	bool on_demand;
	pthread_mutex_t lock;	/* registration only; never on the datapath */
};

/* Results of a check, as the responder and requester need to tell them. */
enum srnic_mem_check {
	SRNIC_MEM_OK = 0,
	SRNIC_MEM_BAD_KEY,
	SRNIC_MEM_BAD_PD,
	SRNIC_MEM_OUT_OF_BOUNDS,
	SRNIC_MEM_NO_RIGHTS,
	SRNIC_MEM_FIFO,		/* a FIFO's key with the rights: its packets
				 * go to the ring, not to an address */
};

int srnic_mem_init(struct srnic_mem_table *t, uint64_t seed);
/* The owner of keys registered from now on (below 1 << SRNIC_MR_OWNER_BITS):
 * set when the process takes its slot, before it registers anything. */
void srnic_mem_set_owner(struct srnic_mem_table *t, uint32_t owner);
/* The owner field of a key. */
static inline uint32_t srnic_mem_key_owner(uint32_t key)
{
	return key >> SRNIC_MR_INDEX_BITS & ((1u << SRNIC_MR_OWNER_BITS) - 1);
}
void srnic_mem_fini(struct srnic_mem_table *t);

/* Control side: what a region with rights access needs before its key may
 * be used (guarded copies, for an on-demand region or when the table is
 * robust).  0 or -errno; registering does it, re-registering must before
 * it runs. */
int srnic_mem_prepare(struct srnic_mem_table *t, uint32_t access);

/* Returns the key, or 0 with errno set (ENOMEM table full, EINVAL).  dev:
 * the adapter (verbs device) that issues it; the table is the node's
 * adapters' tables in one, each entry saying whose it is. */
uint32_t srnic_mem_register_on(struct srnic_mem_table *t, uint8_t dev,
			       uint64_t addr, uint64_t length, uint32_t access,
			       uint32_t pd);
/* A service's region of slot slot: its key, the same for that service and
 * slot on every member, or 0 with errno set (EBUSY: the slot has one,
 * EINVAL). */
uint32_t srnic_mem_register_svc(struct srnic_mem_table *t, uint8_t dev,
				uint32_t svc_ipv4, unsigned slot,
				uint64_t addr, uint64_t length,
				uint32_t access, uint32_t pd);
static inline uint32_t srnic_mem_register(struct srnic_mem_table *t,
					  uint64_t addr, uint64_t length,
					  uint32_t access, uint32_t pd)
{
	return srnic_mem_register_on(t, 0, addr, length, access, pd);
}

/*
 * Datapath side of re-registration (ibv_rereg_mr): the region key names
 * takes new bounds, rights and PD, and is valid again if it had been
 * invalidated; every check after it returns sees them.  0, or -EINVAL
 * when key names no registered region (or the bounds wrap).
 */
int srnic_mem_modify(struct srnic_mem_table *t, uint32_t key, uint64_t addr,
		     uint64_t length, uint32_t access, uint32_t pd);

/*
 * ibv_advise_mr's prefetch, on the caller's thread: [addr, addr + len) of
 * the on-demand region key names (of pd) is faulted in now (unless
 * !fault: then only checked), writable if write, so the first packet to
 * reach it finds it there.  0; -EINVAL when key is no on-demand region of
 * pd or the range is not inside it; -EFAULT when part of the range is not
 * mapped (or not writable, for write).
 */
int srnic_mem_prefetch(const struct srnic_mem_table *t, uint32_t key,
		       uint32_t pd, uint64_t addr, uint64_t len, bool fault,
		       bool write);

/* Datapath side of deregistration: after it returns no packet uses key. */
int srnic_mem_invalidate(struct srnic_mem_table *t, uint32_t key);

/*
 * Datapath: invalidate a key without deregistering its region (send with
 * invalidate, local invalidate): every check fails from now on, and
 * deregistration still works.  0, or -EINVAL when key names no live region
 * of pd.
 */
int srnic_mem_revoke(struct srnic_mem_table *t, uint32_t key, uint32_t pd);

/*
 * Datapath: a guarded copy under key (a region's or a window's) met
 * memory that is not there.  An on-demand region stays as it is (its
 * pages may come back); any other is fenced: revoked as srnic_mem_revoke
 * does, so later packets fail their check without touching the hole.  (A
 * window in it keeps its own check: its packets go on meeting the guard,
 * each failing as this one did.)  True when this call fenced it.
 */
bool srnic_mem_fence(struct srnic_mem_table *t, uint32_t key);

/* Control side: puts an invalidated entry back on the free list. */
void srnic_mem_release(struct srnic_mem_table *t, uint32_t key);

/* Whether key names a live region of pd: what may be invalidated. */
static inline bool srnic_mem_owned(const struct srnic_mem_table *t,
				   uint32_t key, uint32_t pd)
{
	const struct srnic_mr *mr = &t->mr[key & (SRNIC_MAX_MR - 1)];

	return key != 0 && pd != SRNIC_PD_REVOKED &&
	       __atomic_load_n(&mr->key, __ATOMIC_ACQUIRE) == key &&
	       mr->pd == pd;
}

/* The key of the region key names: itself, or a bound window's region's;
 * 0 for a window not bound under that key. */
static inline uint32_t srnic_mem_region_key(const struct srnic_mem_table *t,
					    uint32_t key)
{
	const struct srnic_mw *w;

	if (!(key & SRNIC_MW_BIT))
		return key;
	w = &t->mw[SRNIC_MW_INDEX(key)];
	return __atomic_load_n(&w->key, __ATOMIC_ACQUIRE) == key ? w->mr_key
								  : 0;
}

/* The adapter that issued key (a window's: its region's), or -1 when it
 * names nothing live. */
static inline int srnic_mem_key_dev(const struct srnic_mem_table *t,
				    uint32_t key)
{
	const struct srnic_mr *mr;

	key = srnic_mem_region_key(t, key);
	mr = &t->mr[key & (SRNIC_MAX_MR - 1)];
	return key && __atomic_load_n(&mr->key, __ATOMIC_ACQUIRE) == key
		       ? mr->dev
		       : -1;
}

/* The rights of the region key names (the caller checked it is live). */
static inline uint32_t srnic_mem_access(const struct srnic_mem_table *t,
					uint32_t key)
{
	return t->mr[key & (SRNIC_MAX_MR - 1)].access;
}

/* [addr, addr + len) inside [base, base + length), and need in access. */
static inline enum srnic_mem_check
srnic_mem_range(uint64_t base, uint64_t length, uint32_t access,
		uint64_t addr, uint64_t len, uint32_t need)
{
	if (addr < base || len > length || addr - base > length - len)
		return SRNIC_MEM_OUT_OF_BOUNDS;
	if ((access & need) != need)
		return SRNIC_MEM_NO_RIGHTS;
	return SRNIC_MEM_OK;
}

/*
 * The one check every placement and every local gather goes through: the key
 * names a live region of this PD, [addr, addr + len) lies inside it and the
 * region grants all of the rights in need.
 */
static inline enum srnic_mem_check
srnic_mem_check(const struct srnic_mem_table *t, uint32_t key, uint32_t pd,
		uint64_t addr, uint64_t len, uint32_t need)
{
	const struct srnic_mr *mr = &t->mr[key & (SRNIC_MAX_MR - 1)];

	if (key == 0 || __atomic_load_n(&mr->key, __ATOMIC_ACQUIRE) != key)
		return SRNIC_MEM_BAD_KEY;
	if (mr->pd != pd)
		return SRNIC_MEM_BAD_PD;
	if (__builtin_expect(mr->access & SRNIC_ACCESS_FIFO, 0))
		return (mr->access & need) == need ? SRNIC_MEM_FIFO
						   : SRNIC_MEM_NO_RIGHTS;
	return srnic_mem_range(mr->addr, mr->length, mr->access, addr, len,
			       need);
}

/* The region of a key srnic_mem_check passed (a FIFO's, for its ring). */
static inline const struct srnic_mr *
srnic_mem_region_of(const struct srnic_mem_table *t, uint32_t key)
{
	return &t->mr[key & (SRNIC_MAX_MR - 1)];
}

/* ---- guarded copies (guard.c) ---- */

/* Install the fault handler (once per process): 0 or -errno. */
int srnic_guard_enable(void);
/* The remote atomics, on 8 aligned bytes of a program's memory. */
enum srnic_amo {
	SRNIC_AMO_ADD,		/* fetch and add a */
	SRNIC_AMO_CAS,		/* compare with a, swap in b */
	SRNIC_AMO_STORE,	/* atomic write: store a, as one */
};

/* One atomic as a locked instruction of this CPU: the old value. */
static inline uint64_t srnic_amo_run(uint64_t *p, enum srnic_amo op,
				     uint64_t a, uint64_t b)
{
	uint64_t v = a;

	switch (op) {
	case SRNIC_AMO_CAS:
		__atomic_compare_exchange_n(p, &v, b, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
		return v;
	case SRNIC_AMO_STORE:
		return __atomic_exchange_n(p, a, __ATOMIC_SEQ_CST);
	default:
		return __atomic_fetch_add(p, a, __ATOMIC_SEQ_CST);
	}
}

/* Copies (and atomics) that a fault ends with false. */
bool srnic_guard_copy(void *dst, const void *src, size_t len);
bool srnic_guard_atomic(uint64_t *p, enum srnic_amo op, uint64_t a,
			uint64_t b, uint64_t *old);

/* Whether copies of t's memory are guarded (set before the key of the
 * first region that needs it is published, so a datapath that checked
 * that key sees it). */
static inline bool srnic_mem_guarded(const struct srnic_mem_table *t)
{
	return __atomic_load_n(&t->guarded, __ATOMIC_RELAXED);
}

/* Whether a payload may leave straight from t's memory (zero-copy): not
 * once an on-demand region is in it (set as guarded is). */
static inline bool srnic_mem_zero_copy_ok(const struct srnic_mem_table *t)
{
	return !__atomic_load_n(&t->on_demand, __ATOMIC_RELAXED);
}

/*
 * A copy that stores each byte of dst once, as a NIC's DMA writes it, and
 * its last byte last.  memcpy may store some bytes twice: glibc copies 16
 * to 31 bytes as two overlapping 16-byte stores (16: both at dst), and a
 * long copy's head and tail the same way.  The second store of a
 * placement then undoes what the program did to those bytes after it saw
 * the first: rsockets takes the credit its peer's WRITE gives ({addr,
 * key, length}, 16 bytes) as soon as it sees it and writes down what it
 * used, and a datapath descheduled between the two stores set its entry
 * back, so that its next WRITE went 8 bytes below where it belonged (the
 * 256 MiB sock_check stream of e2e/44 arrived shifted by 8 bytes at a
 * receive ring's half, about once in 35-50 runs).
 *
 * rep movsb stores each byte once, and with ERMS/FSRM (this machine has
 * both; FSRM since Ice Lake and Zen 3) costs what memcpy does at a
 * packet's sizes.  Its stores may become visible in any order, but not
 * after a later store (Intel SDM vol. 3, "Out-of-order stores for string
 * operations"): the last byte, which a program may poll (the packet that
 * holds a message's last byte is placed after all the others), is a
 * plain store of its own after it.  Under AddressSanitizer, which sees
 * no asm, memcpy: its bounds checks are what that build is for.
 */
/* (gcc says AddressSanitizer so, clang by __has_feature) */
#if defined(__SANITIZE_ADDRESS__)
#define SRNIC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SRNIC_ASAN 1
#endif
#endif

static inline void srnic_copy_once(void *dst, const void *src, size_t len)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	if (!len)
		return;
#if defined(SRNIC_ASAN)
	memcpy(d, s, len);
#elif defined(__x86_64__)
	{
		size_t n = len - 1;

		__asm__ volatile("rep movsb"
				 : "+D"(d), "+S"(s), "+c"(n)
				 :
				 : "memory");
		*(volatile uint8_t *)d = *s;
	}
#else
	{
		volatile uint8_t *v = d;

		while (len--)
			*v++ = *s++;
	}
#endif
}

/* Every copy to or from registered memory: false when a page of it was
 * not there (guarded tables only; others are copied as they are). */
static inline bool srnic_mem_copy(const struct srnic_mem_table *t, void *dst,
				  const void *src, size_t len)
{
	if (!srnic_mem_guarded(t)) {
		srnic_copy_once(dst, src, len);
		return true;
	}
	return srnic_guard_copy(dst, src, len);
}

/* A remote atomic on registered memory: the old value in *old, or false
 * as srnic_mem_copy. */
static inline bool srnic_mem_atomic(const struct srnic_mem_table *t,
				    uint64_t *p, enum srnic_amo op, uint64_t a,
				    uint64_t b, uint64_t *old)
{
	if (!srnic_mem_guarded(t)) {
		*old = srnic_amo_run(p, op, a, b);
		return true;
	}
	return srnic_guard_atomic(p, op, a, b, old);
}

/* ---- memory windows (window.c) ---- */

/* (for mem.c: the windows' part of srnic_mem_init, and of
 * srnic_mem_revoke) */
void srnic_mw_table_init(struct srnic_mem_table *t);
int srnic_mw_invalidate(struct srnic_mem_table *t, uint32_t key, uint32_t pd);

/* Control side: a window of type 1 or 2 in pd, not bound; its key (count
 * 0), or 0 with errno set. */
uint32_t srnic_mw_alloc(struct srnic_mem_table *t, uint8_t type, uint32_t pd);
/* Datapath: the window goes (unbound first); then srnic_mw_release. */
int srnic_mw_retire(struct srnic_mem_table *t, uint32_t key);
void srnic_mw_release(struct srnic_mem_table *t, uint32_t key);

/* Datapath: a QP goes; the type 2 windows bound to it are unbound (a
 * later QP given its number must not reach them). */
void srnic_mw_forget_qp(struct srnic_mem_table *t, uint32_t qpn);

/* The bind a QP's send queue asks for (its QP's PD and number). */
struct srnic_mw_bind {
	uint32_t key;		/* the new key: the window's, any count */
	uint32_t mr_key;	/* 0 with length 0: unbind */
	uint32_t access;	/* SRNIC_ACCESS_*: only the remote ones count */
	uint64_t addr;
	uint64_t length;
};
/* Datapath: bind (or unbind) a window; 0, or -EINVAL for anything the
 * verbs call it as MW_BIND_ERR: a window of another PD, a type 2 window
 * bound already, a region without MW_BIND, of another PD, too small, or
 * without local write under remote write or atomic rights. */
int srnic_mw_bind(struct srnic_mem_table *t, const struct srnic_mw_bind *b,
		  uint32_t pd, uint32_t qpn);

/*
 * The check every remote access goes through: a window's key (through the
 * QP it is bound to, if type 2) or a region's (srnic_mem_check).
 */
static inline enum srnic_mem_check
srnic_mem_check_remote(const struct srnic_mem_table *t, uint32_t key,
		       uint32_t pd, uint32_t qpn, uint64_t addr, uint64_t len,
		       uint32_t need)
{
	const struct srnic_mw *w;

	if (!(key & SRNIC_MW_BIT))
		return srnic_mem_check(t, key, pd, addr, len, need);
	w = &t->mw[SRNIC_MW_INDEX(key)];
	if (__atomic_load_n(&w->key, __ATOMIC_ACQUIRE) != key)
		return SRNIC_MEM_BAD_KEY;
	if (w->pd != pd || (w->qpn && w->qpn != qpn))
		return SRNIC_MEM_BAD_PD;
	return srnic_mem_range(w->addr, w->length, w->access, addr, len, need);
}

/* ---- half-RDMA's FIFO rings (fifo_ring.c; datapath) ---- */

struct srnic_fifo_hdr;

/* A record appended to the ring of FIFO key (a key srnic_mem_check
 * answered SRNIC_MEM_FIFO for): h, whose valid word says what the record
 * is and goes last, then len bytes of payload.  0; -ENOSPC when the ring
 * has no room (counted in the ring's full); -EFAULT when its memory is
 * gone (guarded tables), nothing appended. */
int srnic_fifo_put(const struct srnic_mem_table *t, uint32_t key,
		   const struct srnic_fifo_hdr *h, const void *payload);

/* What a SEND with invalidate (qpn: the QP it came on) or a local
 * invalidate may invalidate: a live region of pd with a remote right, or
 * a bound type 2 window of pd (and of that QP).  */
bool srnic_mem_invalidatable(const struct srnic_mem_table *t, uint32_t key,
			     uint32_t pd, uint32_t qpn);

#endif
