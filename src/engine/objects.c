/* SPDX-License-Identifier: MIT */
/*
 * Memory regions, CQs and QPs: allocation on the caller's thread, every
 * change the datapath could observe made by an engine call, which runs
 * under the datapath's token.
 */
#include <errno.h>
#include <string.h>

#include "engine_internal.h"

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* ---- memory regions ---- */

uint32_t srnic_engine_reg_mr(struct srnic_engine *eng, uint8_t dev,
			     void *addr, uint64_t length, uint32_t access,
			     uint32_t pd)
{
	return srnic_mem_register_on(&eng->mem, dev, (uintptr_t)addr, length,
				     access, pd);
}

uint32_t srnic_engine_reg_mr_svc(struct srnic_engine *eng, uint8_t dev,
				 uint32_t svc_ipv4, unsigned slot, void *addr,
				 uint64_t length, uint32_t access, uint32_t pd)
{
	return srnic_mem_register_svc(&eng->mem, dev, svc_ipv4, slot,
				      (uintptr_t)addr, length, access, pd);
}

/* A key's end: the datapath lets go of it (datapath, then control: its
 * entry back on the free list), for a region and for a window alike. */
struct key_end {
	int (*retire)(struct srnic_mem_table *t, uint32_t key);
	void (*release)(struct srnic_mem_table *t, uint32_t key);
	uint32_t key;
};

static void call_retire(struct srnic_engine *eng, struct srnic_call *c)
{
	const struct key_end *k = c->arg;

	c->result = k->retire(&eng->mem, k->key);
	/* (and out of every adapter's imports, before the call returns) */
	if (c->result == 0)
		srnic_keys_forget(eng, k->key);
}

static int key_end(struct srnic_engine *eng, const struct key_end *k)
{
	struct srnic_call c = {.fn = call_retire, .arg = (void *)k};

	srnic_engine_call(eng, &c);
	if (c.result == 0)
		k->release(&eng->mem, k->key);
	return c.result;
}

int srnic_engine_dereg_mr(struct srnic_engine *eng, uint32_t key)
{
	const struct key_end k = {srnic_mem_invalidate, srnic_mem_release, key};

	int rc;

	srnic_engine_group_forget_key(eng, key);
	rc = key_end(eng, &k);
	/* (published only once the engine joined its node: before, the
	 * node is this process's own, which joining frees) */
	if (rc == 0 && srnic_engine_running(eng))
		srnic_tpt_unpublish(eng->node, eng->slot, key);
	return rc;
}

uint32_t srnic_engine_alloc_mw(struct srnic_engine *eng, uint8_t type,
			       uint32_t pd)
{
	return srnic_mw_alloc(&eng->mem, type, pd);
}

int srnic_engine_dealloc_mw(struct srnic_engine *eng, uint32_t key)
{
	const struct key_end k = {srnic_mw_retire, srnic_mw_release, key};

	return key_end(eng, &k);
}

struct rereg {
	uint32_t key, access, pd;
	uint64_t addr, length;
};

static void call_rereg(struct srnic_engine *eng, struct srnic_call *c)
{
	const struct rereg *r = c->arg;

	c->result = srnic_mem_modify(&eng->mem, r->key, r->addr, r->length,
				     r->access, r->pd);
}

int srnic_engine_rereg_mr(struct srnic_engine *eng, uint32_t key, void *addr,
			  uint64_t length, uint32_t access, uint32_t pd)
{
	struct rereg r = {.key = key, .access = access, .pd = pd,
			  .addr = (uintptr_t)addr, .length = length};
	struct srnic_call c = {.fn = call_rereg, .arg = &r};
	int rc = srnic_mem_prepare(&eng->mem, access);

	if (rc)
		return rc;
	srnic_engine_call(eng, &c);
	/* (what peers were told of it follows it) */
	if (c.result == 0 && srnic_engine_running(eng))
		srnic_tpt_follow(eng->node, eng->slot, key, r.addr, r.length,
				 (uint8_t)(access & SRNIC_TPT_RIGHTS));
	return c.result;
}

int srnic_engine_prefetch(struct srnic_engine *eng, uint32_t key, uint32_t pd,
			  uint64_t addr, uint64_t length, bool fault,
			  bool write)
{
	return srnic_mem_prefetch(&eng->mem, key, pd, addr, length, fault,
				  write);
}

/* ---- the system-wide protection table ---- */

int srnic_engine_publish_mr(struct srnic_engine *eng,
			    const struct srnic_published *p)
{
	struct srnic_tpt_entry e = {.name = p->name, .rkey = p->rkey,
				    .addr = p->addr, .length = p->length,
				    .access = (uint8_t)p->access};

	if (p->access & ~SRNIC_TPT_RIGHTS)
		return -EINVAL;
	if (!srnic_engine_running(eng))
		return -ENODEV;	/* (the caller starts it) */
	return srnic_tpt_publish(eng->node, eng->slot, &e);
}

int srnic_engine_unpublish_mr(struct srnic_engine *eng, uint32_t key)
{
	if (!srnic_engine_running(eng))
		return -ENOENT;	/* (nothing published before it runs) */
	return srnic_tpt_unpublish(eng->node, eng->slot, key);
}

/* The node id a GID names, its RoCE v2 GID: ::ffff:a.b.c.d, or an IPv6
 * node's address (of which its id is made); false for any other. */
static bool gid_node(const struct srnic_engine *eng, const uint8_t gid[16],
		     uint32_t *id)
{
	static const uint8_t v4mapped[12] = {[10] = 0xff, [11] = 0xff};

	if (!eng->cfg.has_ipv6) {
		if (memcmp(gid, v4mapped, sizeof(v4mapped)))
			return false;
		*id = srnic_get32(gid + 12);
		return true;
	}
	if (gid[0] == 0xff || (gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80) ||
	    !memcmp(gid, v4mapped, sizeof(v4mapped)))
		return false;	/* (a group, a link-local GID 0, IPv4) */
	*id = srnic_wire_ip6_id(gid);
	return true;
}

/* Whether an IPv6 node's id is gid's node's: this node's, or a peer's at
 * that address (another address of the same id is not: a clash). */
static bool gid_is_node(struct srnic_engine *eng, const uint8_t gid[16],
			uint32_t id)
{
	uint8_t addr[16];

	if (!eng->cfg.has_ipv6)
		return true;
	if (id == eng->cfg.ipv4)
		return !memcmp(gid, eng->cfg.ipv6, 16);
	return !srnic_node_addr6(eng->node, &eng->cfg, id, addr) ||
	       !memcmp(gid, addr, 16);
}

int srnic_engine_lookup_mr(struct srnic_engine *eng, const uint8_t gid[16],
			   uint32_t name, struct srnic_published *out)
{
	struct srnic_tpt_entry e;
	uint32_t id;
	int rc;

	if (!gid_node(eng, gid, &id))
		return -EINVAL;
	rc = !srnic_engine_running(eng)	? -ENOENT /* (the caller starts it) */
	     : !gid_is_node(eng, gid, id) ? -ENOENT
					  : srnic_tpt_lookup(eng, id, name, &e);

	if (rc)
		return rc;
	*out = (struct srnic_published){.name = e.name, .rkey = e.rkey,
					.access = e.access, .addr = e.addr,
					.length = e.length};
	return 0;
}

/* ---- completion queues ---- */

struct srnic_cq *srnic_engine_create_cq(struct srnic_engine *eng,
					unsigned depth)
{
	struct srnic_cq *cq;
	uint32_t n = pow2_at_least(depth ? depth : 1);

	(void)eng;
	cq = srnic_zalloc_aligned(sizeof(*cq), SRNIC_CACHE_LINE);
	if (!cq)
		return NULL;
	cq->ring = srnic_zalloc((size_t)n * sizeof(*cq->ring));
	if (!cq->ring) {
		srnic_free(cq);
		return NULL;
	}
	cq->mask = n - 1;
	cq->notify_fd = -1;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return cq;
}

int srnic_engine_cq_timestamps(struct srnic_engine *eng, struct srnic_cq *cq)
{
	(void)eng;
	cq->ts = srnic_zalloc((size_t)(cq->mask + 1) * sizeof(*cq->ts));
	return cq->ts ? 0 : -ENOMEM;
}

/* A CQ's rings: its completions, and their times if it keeps them. */
struct cq_rings {
	struct srnic_cqe *ring;
	uint64_t *ts;
	uint32_t mask;
};

/* On the datapath, the only producer: move what is unpolled to the new
 * rings, at the same free-running indices; the old ones come back in
 * *r. */
static void call_resize_cq(struct srnic_engine *eng, struct srnic_call *c)
{
	struct srnic_cq *cq = c->arg;
	struct cq_rings *r = c->arg3, old = {cq->ring, cq->ts, cq->mask};
	uint32_t i, cons = __atomic_load_n(&cq->cons, __ATOMIC_ACQUIRE);

	(void)eng;
	if (cq->prod - cons > r->mask + 1) {
		c->result = -EINVAL;	/* more unpolled than it would hold */
		return;
	}
	for (i = cons; i != cq->prod; i++) {
		r->ring[i & r->mask] = old.ring[i & old.mask];
		if (old.ts)
			r->ts[i & r->mask] = old.ts[i & old.mask];
	}
	cq->ring = r->ring;
	cq->ts = r->ts;
	cq->mask = r->mask;
	*r = old;
	c->result = 0;
}

int srnic_engine_resize_cq(struct srnic_engine *eng, struct srnic_cq *cq,
			   unsigned depth)
{
	uint32_t n = pow2_at_least(depth ? depth : 1);
	struct cq_rings r = {
		.ring = srnic_zalloc((size_t)n * sizeof(*r.ring)),
		.ts = cq->ts ? srnic_zalloc((size_t)n * sizeof(*r.ts)) : NULL,
		.mask = n - 1};
	struct srnic_call c = {.fn = call_resize_cq, .arg = cq, .arg3 = &r};

	if (!r.ring || (cq->ts && !r.ts)) {
		srnic_free(r.ring);
		srnic_free(r.ts);
		return -ENOMEM;
	}
	srnic_engine_call(eng, &c);
	srnic_free(r.ring);	/* the rings not in use */
	srnic_free(r.ts);
	return c.result;
}

/* Event moderation: the CQ joins (or leaves) the engine's list of CQs
 * whose period the timer tick watches (datapath.c, run_timers). */
static void call_moderate_cq(struct srnic_engine *eng, struct srnic_call *c)
{
	struct srnic_cq *cq = c->arg, **pp;
	uint32_t count = (uint32_t)(uintptr_t)c->arg2;
	uint64_t period_us = (uint64_t)(uintptr_t)c->arg3;
	bool on = count > 1 || period_us;

	cq->mod_count = count;
	cq->mod_period = period_us * rte_get_tsc_hz() / 1000000;
	cq->mod_seen = 0;
	cq->mod_due = 0;
	if (on && !cq->mod_listed) {
		cq->mod_next = eng->mod_cqs;
		eng->mod_cqs = cq;
	} else if (!on && cq->mod_listed) {
		for (pp = &eng->mod_cqs; *pp; pp = &(*pp)->mod_next)
			if (*pp == cq) {
				*pp = cq->mod_next;
				break;
			}
	}
	cq->mod_listed = on;
	c->result = 0;
}

int srnic_engine_moderate_cq(struct srnic_engine *eng, struct srnic_cq *cq,
			     unsigned count, unsigned period_us)
{
	struct srnic_call c = {.fn = call_moderate_cq, .arg = cq,
			       .arg2 = (const void *)(uintptr_t)count,
			       .arg3 = (void *)(uintptr_t)period_us};

	srnic_engine_call(eng, &c);
	return c.result;
}

int srnic_engine_destroy_cq(struct srnic_engine *eng, struct srnic_cq *cq)
{
	if (__atomic_load_n(&cq->users, __ATOMIC_ACQUIRE))
		return -EBUSY;	/* as verbs says: destroy its QPs first */
	if (cq->mod_listed)	/* (off the timer's list first) */
		srnic_engine_moderate_cq(eng, cq, 0, 0);
	pthread_spin_destroy(&cq->lock);
	srnic_free(cq->ring);
	srnic_free(cq->ts);
	srnic_free(cq);
	return 0;
}

/* ---- shared receive queues ---- */

struct srnic_srq *srnic_engine_create_srq(struct srnic_engine *eng,
					  unsigned depth, unsigned max_sge)
{
	struct srnic_srq *srq;
	uint32_t n = pow2_at_least(depth ? depth : 1);

	(void)eng;
	srq = srnic_zalloc_aligned(sizeof(*srq), SRNIC_CACHE_LINE);
	if (!srq)
		return NULL;
	srq->rq = srnic_zalloc((size_t)n * sizeof(*srq->rq));
	if (!srq->rq) {
		srnic_free(srq);
		return NULL;
	}
	srq->mask = n - 1;
	srq->max_sge = max_sge;
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	return srq;
}

struct srnic_srq *srnic_engine_create_xrc_srq(struct srnic_engine *eng,
					      unsigned depth, unsigned max_sge,
					      uint32_t xrcd, uint32_t pd,
					      struct srnic_cq *cq)
{
	struct srnic_srq *srq = srnic_engine_create_srq(eng, depth, max_sge);
	uint32_t i, n;

	if (!srq)
		return NULL;
	srq->xrcd = xrcd;
	srq->pd = pd;
	srq->cq = cq;
	pthread_mutex_lock(&eng->obj_lock);
	if (!eng->xrc_srq)	/* (the datapath reads it: published) */
		__atomic_store_n(&eng->xrc_srq,
				 srnic_zalloc(SRNIC_MAX_XRC_SRQ *
					      sizeof(*eng->xrc_srq)),
				 __ATOMIC_RELEASE);
	for (i = 0; eng->xrc_srq && i < SRNIC_MAX_XRC_SRQ - 1; i++) {
		n = eng->xrc_srq_next % (SRNIC_MAX_XRC_SRQ - 1) + 1;
		eng->xrc_srq_next = n;
		if (!eng->xrc_srq[n])
			break;
	}
	if (!eng->xrc_srq || i == SRNIC_MAX_XRC_SRQ - 1) {
		pthread_mutex_unlock(&eng->obj_lock);
		srnic_engine_destroy_srq(eng, srq);
		errno = ENOMEM;
		return NULL;
	}
	srq->srqn = eng->mem.owner << SRNIC_XRC_SRQ_INDEX_BITS | n;
	__atomic_fetch_add(&cq->users, 1, __ATOMIC_RELAXED);
	/* (complete before the number is: the datapath finds it by it) */
	__atomic_store_n(&eng->xrc_srq[n], srq, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&eng->obj_lock);
	return srq;
}

/* Datapath: an XRC SRQ goes; target QPs forget the receive WQEs they took
 * from it and have not completed (their messages complete into no CQ). */
static void call_forget_xrc_srq(struct srnic_engine *eng, struct srnic_call *c)
{
	struct srnic_srq *srq = c->arg;
	uint32_t q, i;

	__atomic_store_n(&eng->xrc_srq[srq->srqn & (SRNIC_MAX_XRC_SRQ - 1)],
			 NULL, __ATOMIC_RELEASE);
	for (q = 0; q < SRNIC_MAX_QP; q++) {
		struct srnic_qp *qp = eng->qp_tab[q];

		if (qp && qp->xrc == SRNIC_XRC_TGT)
			for (i = 0; i <= qp->q.rq_mask; i++)
				if (qp->xrc_rq_srq[i] == srq)
					qp->xrc_rq_srq[i] = NULL;
	}
	c->result = 0;
}

int srnic_engine_destroy_srq(struct srnic_engine *eng, struct srnic_srq *srq)
{
	if (__atomic_load_n(&srq->users, __ATOMIC_ACQUIRE))
		return -EBUSY;	/* as verbs says: destroy its QPs first */
	if (srq->srqn) {
		struct srnic_call c = {.fn = call_forget_xrc_srq, .arg = srq};

		srnic_engine_call(eng, &c);
		__atomic_fetch_sub(&srq->cq->users, 1, __ATOMIC_RELEASE);
	}
	pthread_spin_destroy(&srq->lock);
	srnic_free(srq->rq);
	srnic_free(srq);
	return 0;
}

void srnic_engine_arm_srq(struct srnic_srq *srq, uint32_t limit)
{
	__atomic_store_n(&srq->limit, limit, __ATOMIC_RELEASE);
}

/* ---- queue pairs ---- */

static void qp_free(struct srnic_qp *qp)
{
	uint32_t i;

	if (qp->run)
		for (i = 0; i <= qp->q.sq_mask; i++)
			srnic_track_fini(&qp->run[i].rd);
	srnic_free(qp->q.sq);
	srnic_free(qp->q.rq);
	srnic_free(qp->run);
	srnic_free(qp->rcv.rmsg);
	srnic_free(qp->xrc_rq_srq);
	srnic_group_send_free(qp);
	pthread_spin_destroy(&qp->q.sq_lock);
	pthread_spin_destroy(&qp->q.rq_lock);
	srnic_free(qp);
}

struct srnic_qp_queues *srnic_engine_qp_queues(struct srnic_qp *qp)
{
	return &qp->q;
}

/* A QP and its rings, sized for init and not yet numbered; NULL with
 * errno ENOMEM. */
static struct srnic_qp *qp_alloc(const struct srnic_qp_init *init)
{
	bool tgt = init->xrc == SRNIC_XRC_TGT;
	uint32_t sq_n = pow2_at_least(init->max_send_wr ? init->max_send_wr
							: 1);
	/* With an SRQ the datapath moves WQEs in for the messages in the
	 * window: never more than that. */
	uint32_t rq_n = init->srq || tgt
				? SRNIC_WINDOW
				: pow2_at_least(init->max_recv_wr
							? init->max_recv_wr
							: 1);
	struct srnic_qp *qp;

	qp = srnic_zalloc_aligned(sizeof(*qp), SRNIC_CACHE_LINE);
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_spin_init(&qp->q.sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->q.rq_lock, PTHREAD_PROCESS_PRIVATE);
	qp->q.sq = srnic_zalloc((size_t)sq_n * sizeof(*qp->q.sq));
	qp->q.rq = srnic_zalloc((size_t)rq_n * sizeof(*qp->q.rq));
	qp->run = srnic_zalloc((size_t)sq_n * sizeof(*qp->run));
	qp->rcv.rmsg = srnic_zalloc(SRNIC_WINDOW * sizeof(*qp->rcv.rmsg));
	if (tgt)
		qp->xrc_rq_srq = srnic_zalloc((size_t)rq_n *
					      sizeof(*qp->xrc_rq_srq));
	if (!qp->q.sq || !qp->q.rq || !qp->run || !qp->rcv.rmsg ||
	    (tgt && !qp->xrc_rq_srq)) {
		qp_free(qp);
		errno = ENOMEM;
		return NULL;
	}
	qp->q.sq_mask = sq_n - 1;
	qp->q.rq_mask = rq_n - 1;
	return qp;
}

/* The attributes a QP keeps from its creation request. */
static void qp_set_init(struct srnic_qp *qp, const struct srnic_qp_init *init)
{
	qp->q.type = init->type;
	qp->q.sq_sig_all = init->sq_sig_all;
	qp->pd = init->pd;
	qp->q.max_send_sge = init->max_send_sge;
	qp->q.max_recv_sge = init->max_recv_sge;
	qp->q.max_inline = init->max_inline;
	qp->q.send_cq = init->send_cq;
	qp->q.recv_cq = init->recv_cq;
	qp->q.srq = init->srq;
	qp->xrc = init->xrc;
	qp->xrcd = init->xrcd;
	qp->svc_ipv4 = init->svc_ipv4;
	qp->svc_slot = init->svc_slot;
	qp->q.state = SRNIC_QPS_RESET;
}

/*
 * Take a QP number for init, under obj_lock.  Numbers are the node's: a
 * table entry is taken in its owner table, which every process of
 * srnicd's node shares (the receive side finds the process of a frame's
 * QP there), and the number is the entry under its next generation
 * (srnic_queue.h).  A service's QP has exactly one number (the same on
 * every member: its entry, generation 0); with several adapters a QP's
 * entry modulo their count names its adapter, which is how a peer knows
 * which ports reach it.  0 or an errno value.
 */
static int qpn_take(struct srnic_engine *eng, const struct srnic_qp_init *init,
		    uint32_t *qpn_out)
{
	uint32_t i, idx, gen;

	for (i = 0; i < SRNIC_MAX_QP; i++) {
		uint8_t free = 0;

		idx = eng->qpn_next >= 16 && eng->qpn_next < SRNIC_SVC_QPN_BASE
			      ? eng->qpn_next
			      : 16;
		eng->qpn_next = idx + 1;
		if (init->svc_slot) {
			idx = SRNIC_SVC_QPN_BASE + init->svc_slot - 1u;
			i = SRNIC_MAX_QP - 1;	/* one try */
		}
		if (eng->cfg.ndev > 1 && !init->svc_slot &&
		    idx % eng->cfg.ndev != init->dev % eng->cfg.ndev)
			continue;
		if (eng->qp_tab[idx] ||
		    !__atomic_compare_exchange_n(&eng->node->qp_owner[idx],
						 &free, eng->slot + 1, false,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		gen = 0;
		if (!init->svc_slot) {
			gen = srnic_qpn_next_gen(eng->node->qp_gen[idx],
						 eng->cls);
			eng->node->qp_gen[idx] = (uint16_t)gen;
		}
		*qpn_out = gen << SRNIC_QPN_INDEX_BITS | idx;
		return 0;
	}
	return init->svc_slot ? EBUSY : ENOMEM;	/* (the slot is taken) */
}

/* The CQs and SRQ a QP completes into count it as a user while it lives
 * (an XRC target has no CQs of its own). */
static void qp_hold_queues(struct srnic_qp *qp)
{
	if (qp->q.send_cq)
		__atomic_fetch_add(&qp->q.send_cq->users, 1, __ATOMIC_RELAXED);
	if (qp->q.recv_cq)
		__atomic_fetch_add(&qp->q.recv_cq->users, 1, __ATOMIC_RELAXED);
	if (qp->q.srq)
		__atomic_fetch_add(&qp->q.srq->users, 1, __ATOMIC_RELAXED);
}

struct srnic_qp *srnic_engine_create_qp(struct srnic_engine *eng,
					const struct srnic_qp_init *init)
{
	struct srnic_qp *qp = qp_alloc(init);
	uint32_t qpn;
	int rc;

	if (!qp)
		return NULL;
	qp_set_init(qp, init);
	pthread_mutex_lock(&eng->obj_lock);
	rc = qpn_take(eng, init, &qpn);
	if (rc) {
		pthread_mutex_unlock(&eng->obj_lock);
		qp_free(qp);
		errno = rc;
		return NULL;
	}
	qp->q.qpn = qpn;
	qp_hold_queues(qp);
	/* In RESET nothing reaches it; publishing is enough. */
	__atomic_store_n(&eng->qp_tab[srnic_qpn_index(qpn)], qp,
			 __ATOMIC_RELEASE);
	pthread_mutex_unlock(&eng->obj_lock);
	return qp;
}

/* A QP goes to RESET or is destroyed: its completions not polled yet
 * leave cq, the rest keeping their order (mlx5 does the same; rdma-core's
 * tests count on it, polling a QP brought back from the error state, and
 * libfabric's rxm, which closes a connection's QP before it reads its CQ
 * dry: fabtests' fi_rdm_pingpong crashed in rxm_post_recv on a closed
 * endpoint in 3 runs of about 90 here, handed a destroyed QP's receive).
 * A QP on an SRQ keeps its receives' completions (srq): each names a WQE
 * taken from the SRQ, whose buffer the program has back only by polling
 * it (mlx5 hands such WQEs back to the SRQ instead; srnic's SRQ ring
 * takes none back).  On the datapath, with the provider holding cq's
 * lock, so no poller reads the ring. */
static bool cqe_is_recv(const struct srnic_cqe *e)
{
	return e->opcode == SRNIC_WC_RECV ||
	       e->opcode == SRNIC_WC_RECV_RDMA_WITH_IMM;
}

static void cq_forget_qp(struct srnic_cq *cq, uint32_t qpn, bool srq)
{
	uint32_t i = cq->prod, to = cq->prod,
		 cons = __atomic_load_n(&cq->cons, __ATOMIC_ACQUIRE);

	while (i != cons) {
		const struct srnic_cqe *e = &cq->ring[--i & cq->mask];

		if (e->qp_num == qpn && !(srq && cqe_is_recv(e))) {
			/* (a told completion no poll will take: its early
			 * event counts as answered, provider/cq.c) */
			if ((e->flags & SRNIC_WC_F_TOLD) &&
			    !srnic_cq_told_lapsed(cq, e))
				__atomic_add_fetch(&cq->early_answered, 1,
						   __ATOMIC_RELEASE);
			continue;
		}
		--to;
		cq->ring[to & cq->mask] = *e;
		if (cq->ts)
			cq->ts[to & cq->mask] = cq->ts[i & cq->mask];
	}
	__atomic_store_n(&cq->cons, to, __ATOMIC_RELEASE);
}

/* ... out of both the QP's CQs. */
static void cqs_forget_qp(struct srnic_qp *qp)
{
	bool srq = qp->q.srq != NULL;

	if (qp->q.send_cq)
		cq_forget_qp(qp->q.send_cq, qp->q.qpn, srq);
	if (qp->q.recv_cq && qp->q.recv_cq != qp->q.send_cq)
		cq_forget_qp(qp->q.recv_cq, qp->q.qpn, srq);
}

static void call_destroy_qp(struct srnic_engine *eng, struct srnic_call *c)
{
	struct srnic_qp *qp = c->arg;

	/* A doorbell for qp rung before this call may still sit in the
	 * ring; take them all now so none outlives the QP. */
	srnic_doorbells_drain_all(eng);
	qp->destroyed = 1;
	srnic_mcast_forget_qp(eng, qp->q.qpn);
	srnic_mw_forget_qp(&eng->mem, qp->q.qpn);
	srnic_condq_forget_qp(eng, qp);
	srnic_qp_lists_remove(eng, qp);
	srnic_svc_qp_track(eng, qp, false);
	srnic_responder_reset(eng, qp);
	cqs_forget_qp(qp);
	__atomic_store_n(&eng->qp_tab[srnic_qpn_index(qp->q.qpn)], NULL,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&eng->node->qp_owner[srnic_qpn_index(qp->q.qpn)], 0,
			 __ATOMIC_RELEASE);
	c->result = 0;
}

int srnic_engine_destroy_qp(struct srnic_engine *eng, struct srnic_qp *qp)
{
	struct srnic_call c = {.fn = call_destroy_qp, .arg = qp};

	srnic_engine_call(eng, &c);
	if (qp->q.send_cq)
		__atomic_fetch_sub(&qp->q.send_cq->users, 1, __ATOMIC_RELEASE);
	if (qp->q.recv_cq)
		__atomic_fetch_sub(&qp->q.recv_cq->users, 1, __ATOMIC_RELEASE);
	if (qp->q.srq)
		__atomic_fetch_sub(&qp->q.srq->users, 1, __ATOMIC_RELEASE);
	qp_free(qp);
	return c.result;
}

uint64_t srnic_timeout_tsc(const struct srnic_engine *eng, uint8_t code)
{
	/* verbs: 4.096 us << code; 0 means "wait forever", which would hang
	 * a program whose peer died, so it becomes about a second. */
	if (code == 0)
		code = 18;
	if (code > 31)
		code = 31;
	return (uint64_t)((double)eng->tsc_hz * 4.096e-6 * (double)(1ull << code));
}

static void qp_reset(struct srnic_engine *eng, struct srnic_qp *qp)
{
	uint32_t i;

	srnic_responder_reset(eng, qp);
	for (i = 0; i <= qp->q.sq_mask; i++)
		srnic_track_fini(&qp->run[i].rd);
	qp->q.sq_prod = qp->q.sq_comp = qp->snd.sq_next = qp->snd.sq_cur = 0;
	qp->q.rq_prod = qp->q.rq_comp = 0;
	if (qp->xrc_rq_srq)
		memset(qp->xrc_rq_srq, 0,
		       (qp->q.rq_mask + 1) * sizeof(*qp->xrc_rq_srq));
	qp->snd.cur_busy = 0;
	qp->snd.resend_head = qp->snd.resend_tail = 0;
	qp->repair_head = qp->repair_tail = 0;
	qp->err_new = qp->ack_final = 0;
	qp->snd.next_ssn = qp->rcv.exp_ssn = 0;
	qp->rcv.uc_skew = 0;
	qp->snd.rd_inflight = 0;
	qp->snd.rnr_until = 0;
	qp->snd.srtt = qp->snd.rttvar = qp->snd.rto = 0;
	qp->snd.timer_set = 0;
	qp->rcv.ts_recent = 0;
	qp->snd.rto_backoff = 0;
	qp->flush_pending = 0;
	qp->cq_wait = 0;
	qp->snd.sq_stopped = 0;
	qp->snd.sq_wait = 0;
	qp->snd.inv_fence = 0;
	qp->q.db_armed = 0;
	qp->rcv.ack_syndrome = SRNIC_ACK_OK;	/* owed to the old peer only */
	qp->rcv.sack_due = 0;
	qp->rcv.ack_asked = qp->snd.ack_asking = 0;
	qp->peer = NULL;
}

/* The provider checked the transition against the state it read; the
 * datapath may have moved the QP on since (to ERR, or to SQE with
 * flushed completions still waiting for CQ room).  Only RESET and ERR
 * leave ERR; RTS leaves SQE once all is flushed.  0 or a negative
 * errno value. */
static int modify_overtaken(const struct srnic_qp *qp,
			    const struct srnic_qp_mod *mod)
{
	if (!(mod->mask & SRNIC_MOD_STATE) || mod->state == SRNIC_QPS_RESET ||
	    mod->state == SRNIC_QPS_ERR)
		return 0;
	if (qp->q.state == SRNIC_QPS_ERR)
		return -EINVAL;
	if (qp->q.state == SRNIC_QPS_SQE && qp->flush_pending)
		return -EAGAIN;
	return 0;
}

/* A client of a service follows the service's holder (engine/service.c);
 * a connection to an address no service holds is an ordinary one. */
static void svc_client_bind(struct srnic_engine *eng, struct srnic_qp *qp,
			    uint32_t svc_ipv4)
{
	const struct srnic_service *sv =
		svc_ipv4 ? srnic_service_find(eng->node, svc_ipv4) : NULL;

	qp->svc_ipv4 = sv ? svc_ipv4 : 0;
	qp->svc_term = sv ? __atomic_load_n(&sv->term, __ATOMIC_ACQUIRE) : 0;
	srnic_svc_qp_track(eng, qp, sv != NULL);
}

/* INIT to RTR: the peer and the receive side's starting point. */
static void modify_rtr(struct srnic_engine *eng, struct srnic_qp *qp,
		       const struct srnic_qp_mod *mod, struct srnic_peer *peer)
{
	qp->at.dest_qpn = mod->dest_qpn;
	qp->at.rq_psn = mod->rq_psn;
	qp->at.path_shift = mod->path_shift;
	qp->at.max_dest_rd_atomic = mod->max_dest_rd_atomic;
	qp->rcv.exp_msn = mod->rq_psn;
	srnic_fc_reset(qp);
	qp->peer = peer;
	qp->peer_inc = peer ? __atomic_load_n(&peer->inc, __ATOMIC_ACQUIRE)
			    : 0;
	if (!qp->svc_slot)
		svc_client_bind(eng, qp, mod->svc_ipv4);
}

/* RTR to RTS: the send side's starting point. */
static void modify_rts(struct srnic_engine *eng, struct srnic_qp *qp,
		       const struct srnic_qp_mod *mod)
{
	qp->at.sq_psn = mod->sq_psn;
	qp->snd.next_msn = mod->sq_psn;
	qp->snd.uc_acked = mod->sq_psn;
	qp->at.max_rd_atomic = mod->max_rd_atomic;
	/* UC has no timeout attribute, but its credit loan waits a
	 * sixteenth of one (srnic_probe_tsc): about 4 ms. */
	if (!qp->at.timeout_tsc)
		qp->at.timeout_tsc = srnic_timeout_tsc(eng, 14);
}

/* To RESET: off every list, its state cleared and its completions out
 * of its CQs, as a QP never used. */
static void enter_reset(struct srnic_engine *eng, struct srnic_qp *qp)
{
	srnic_qp_lists_remove(eng, qp);
	srnic_svc_qp_track(eng, qp, false);
	qp->svc_resync = 0;
	qp->fatal_told = 0;
	if (!qp->svc_slot)
		qp->svc_ipv4 = 0;
	qp_reset(eng, qp);
	srnic_condq_forget_qp(eng, qp);
	cqs_forget_qp(qp);
}

/* What entering state does beyond storing it (still the old state in
 * qp->q.state while this runs). */
static void enter_state(struct srnic_engine *eng, struct srnic_qp *qp,
			uint32_t state)
{
	switch (state) {
	case SRNIC_QPS_RESET:
		enter_reset(eng, qp);
		break;
	case SRNIC_QPS_ERR:
		srnic_qp_to_error(eng, qp);
		break;
	case SRNIC_QPS_RTS:
		/* (from SQE: sending resumes with the next WQE posted;
		 * everything before was flushed) */
		if (qp->q.state == SRNIC_QPS_SQE)
			qp->snd.sq_stopped = 0;
		/* a service's client asks its holder to bind first */
		if (qp->svc_ipv4 && !qp->svc_slot &&
		    qp->q.state == SRNIC_QPS_RTR) {
			qp->svc_resync = 1;
			qp->svc_resync_at = 0;
		}
		break;
	case SRNIC_QPS_INIT:
		/* a member's service QP waits here for a client */
		if (qp->svc_slot)
			srnic_svc_qp_track(eng, qp, true);
		break;
	default:
		break;
	}
}

/*
 * A program moves a sending QP to the error state: what it posted before
 * goes out once first, as far as a burst takes it, then everything
 * unfinished is flushed.  A NIC's send queue would have carried those
 * WQEs onto the wire while the modify was on its way, and programs count
 * on it: rdma-core 44's rsockets closes a connection (rshutdown) without
 * waiting for its last sends when its peer's half-close comes in just
 * then, and moves the QP to error; on a busy machine srnic's datapath had
 * not sent them yet, and the peer waited for ever for the answer and end
 * of stream (sock_check's 256 MiB stream: 5 runs in about 420; the
 * server's completion log in the one traced showed the peer's SHUTDOWN
 * taken, then the QP to ERR, and no completion of its answer; none in
 * 350 runs after this, the race met in about 60).  What goes out is not
 * waited for: it completes flushed, as the verbs say.  Only SENDs and
 * WRITEs go (what a NIC would have put on the wire unasked); the burst
 * stops at the first WQE that is not one, whose effect (a READ, an
 * atomic, a local invalidation) the program must not find done behind a
 * flush.
 */
#define SEND_POSTED_BURST 64

static bool plain_send(uint8_t op)
{
	return op == SRNIC_WR_SEND || op == SRNIC_WR_SEND_IMM ||
	       op == SRNIC_WR_WRITE || op == SRNIC_WR_WRITE_IMM;
}

static void send_posted(struct srnic_engine *eng, struct srnic_qp *qp)
{
	uint32_t prod = __atomic_load_n(&qp->q.sq_prod, __ATOMIC_ACQUIRE);
	unsigned n;

	if (qp->q.type != SRNIC_QPT_RC && qp->q.type != SRNIC_QPT_UC)
		return;
	/* (a packet a call: a call whose message ends starts no other, so
	 * each new one is looked at first) */
	for (n = 0; n < SEND_POSTED_BURST; n++) {
		const struct srnic_swqe *w =
			&qp->q.sq[qp->snd.sq_next & qp->q.sq_mask];

		if (!qp->snd.cur_busy &&
		    (qp->snd.sq_next == prod || !plain_send(w->opcode) ||
		     (w->flags & SRNIC_WR_COND)))
			break;
		if (!srnic_requester_run(eng, qp, 1))
			break;
	}
}

static void call_modify_qp(struct srnic_engine *eng, struct srnic_call *c)
{
	struct srnic_qp *qp = c->arg;
	const struct srnic_qp_mod *mod = c->arg2;

	c->result = modify_overtaken(qp, mod);
	if (c->result)
		return;
	if (mod->mask & SRNIC_MOD_RTR)
		modify_rtr(eng, qp, mod, c->arg3);
	if (mod->mask & SRNIC_MOD_RTS)
		modify_rts(eng, qp, mod);
	if (mod->mask & SRNIC_MOD_TIMERS) {
		qp->at.timeout_tsc = srnic_timeout_tsc(eng, mod->timeout);
		qp->at.retry_cnt = mod->retry_cnt;
		qp->at.rnr_retry = mod->rnr_retry;
		qp->at.min_rnr_timer = mod->min_rnr_timer;
	}
	if (mod->mask & SRNIC_MOD_ACCESS)
		qp->access = mod->access;
	if (mod->mask & SRNIC_MOD_QKEY)
		qp->at.qkey = mod->qkey;
	if (mod->mask & SRNIC_MOD_STATE) {
		if (mod->state == SRNIC_QPS_ERR && qp->q.state == SRNIC_QPS_RTS)
			send_posted(eng, qp);
		enter_state(eng, qp, mod->state);
		if (qp->svc_bound && mod->state != SRNIC_QPS_RTS)
			srnic_svc_qp_left(eng, qp);
		__atomic_store_n(&qp->q.state, mod->state, __ATOMIC_RELEASE);
		if (mod->state == SRNIC_QPS_RTS)
			srnic_qp_activate(eng, qp);	/* posted early */
	}
}

int srnic_engine_modify_qp(struct srnic_engine *eng, struct srnic_qp *qp,
			   const struct srnic_qp_mod *mod)
{
	struct srnic_call c = {.fn = call_modify_qp, .arg = qp, .arg2 = mod};

	if (mod->mask & SRNIC_MOD_RTR) {
		static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0,
						     0, 0, 0, 0, 0xff, 0xff};
		struct srnic_qp_mod m = *mod;

		c.arg3 = srnic_control_resolve(eng, mod->peer_gid,
					       eng->cfg.resolve_ms);
		if (!c.arg3)
			return -EHOSTUNREACH;
		/* (a service's address: the QP follows its holder) */
		m.svc_ipv4 = !memcmp(mod->peer_gid, v4mapped, 12)
				     ? srnic_get32(mod->peer_gid + 12)
				     : 0;
		if (m.svc_ipv4 && !srnic_service_find(eng->node, m.svc_ipv4))
			m.svc_ipv4 = 0;
		c.arg2 = &m;
		srnic_engine_call(eng, &c);
		return c.result;
	}
	srnic_engine_call(eng, &c);
	return c.result;
}
