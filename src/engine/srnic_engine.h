/* SPDX-License-Identifier: MIT */
/*
 * The engine's face towards the provider (and, later, anything else that
 * drives a node): start and stop, memory registration, CQs and QPs.  Posting
 * and polling are inline ring operations (srnic_post.h); everything that
 * changes engine state is an engine call executed by the datapath, so the
 * datapath never takes a lock.
 */
#ifndef SRNIC_ENGINE_H
#define SRNIC_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "srnic_config.h"
#include "srnic_mem.h"
#include "srnic_queue.h"
#include "srnic_event.h"

struct srnic_engine;

/*
 * The process's engine, with a reference taken; the configuration was
 * loaded by the caller.  When srnicd serves the node, the first get
 * attaches to it (one request on its socket: the process's slot, which
 * every key the process hands out carries); without srnicd the process
 * runs the node itself.  It starts nothing: memory can be registered at
 * once.  Returns NULL with errno set and a reason in err on failure.
 */
struct srnic_engine *srnic_engine_get(const struct srnic_config *cfg,
				      char *err, unsigned errlen);
/*
 * Start the datapath (DPDK, ports, datapath and control cores) unless it
 * runs: CQs, QPs, SRQs and address handles need it.  0, or a negative
 * errno with a reason in err.  The last put() of a started engine stops it.
 */
int srnic_engine_start(struct srnic_engine *eng, char *err, unsigned errlen);
bool srnic_engine_running(const struct srnic_engine *eng);
/* srnicd went away under the attached process (SRNIC_EV_DEVICE_FATAL). */
bool srnic_engine_fatal(const struct srnic_engine *eng);
/* srnicd, before its get: the engine is the node itself, kept in DPDK
 * memory (EAL file prefix, hugetlbfs directory, base address) that the
 * node's processes attach to. */
void srnic_engine_be_node(const char *prefix, const char *huge_dir,
			  const char *base_va);
void srnic_engine_put(struct srnic_engine *eng);

/* Link state as the control core sees it: how many ports are up. */
unsigned srnic_engine_ports_up(const struct srnic_engine *eng);

/* What srnic_query_device (include/srnic.h) says of the engine. */
struct srnic_engine_desc {
	bool running;		/* its datapath runs */
	bool attached;		/* ... as a process of srnicd's node */
	uint32_t slot;		/* attached: the process's slot */
	uint32_t ports_up;	/* bit p: port p's link is up (every
				 * configured port, before it runs) */
};
void srnic_engine_describe(const struct srnic_engine *eng,
			   struct srnic_engine_desc *d);

/* Memory registration; keys are the same for local and remote use. */
/* A region of adapter dev (srnic<dev>): its key, or 0 with errno set. */
uint32_t srnic_engine_reg_mr(struct srnic_engine *eng, uint8_t dev,
			     void *addr, uint64_t length, uint32_t access,
			     uint32_t pd);
/* A service's region of slot slot: its key the same on every member of
 * the service at svc_ipv4 (0 with errno set: EBUSY, the slot has one). */
uint32_t srnic_engine_reg_mr_svc(struct srnic_engine *eng, uint8_t dev,
				 uint32_t svc_ipv4, unsigned slot, void *addr,
				 uint64_t length, uint32_t access, uint32_t pd);
int srnic_engine_dereg_mr(struct srnic_engine *eng, uint32_t key);
/* Half-RDMA: a program's answer to the READ request its FIFO took, sent
 * on QP qpn, a burst of its packets a call (fifo.c): as
 * srnic_responder_fifo_answer. */
int srnic_engine_fifo_answer(struct srnic_engine *eng, uint32_t qpn,
			     const struct srnic_fifo_answer *a);
/* Memory windows: one of type 1 or 2 in pd (its key, count 0; 0 with
 * errno set), and its end (unbound first, on the datapath). */
uint32_t srnic_engine_alloc_mw(struct srnic_engine *eng, uint8_t type,
			       uint32_t pd);
int srnic_engine_dealloc_mw(struct srnic_engine *eng, uint32_t key);
/* ibv_rereg_mr: key's region becomes [addr, addr + length) with access
 * and pd, on the datapath (srnic_mem_modify); 0, or a negative errno. */
int srnic_engine_rereg_mr(struct srnic_engine *eng, uint32_t key, void *addr,
			  uint64_t length, uint32_t access, uint32_t pd);
/* ibv_advise_mr's prefetch of part of an on-demand region (srnic_mem_
 * prefetch): 0, or -EINVAL (not an on-demand region of pd, or out of it),
 * -EFAULT (not mapped), -EOPNOTSUPP (a kernel that cannot fault pages in
 * on request). */
int srnic_engine_prefetch(struct srnic_engine *eng, uint32_t key, uint32_t pd,
			  uint64_t addr, uint64_t length, bool fault,
			  bool write);

/* failback=manual (docs/failover.md): the QPs of the service at svc_ipv4
 * this process has bound, and any it binds later, take no new request
 * from now on (on), or take them again (off): their count, or -ENOENT
 * (this node is no member), -EINVAL (it does not hold it); and the
 * service goes to the best live member (0 once this node holds it no
 * more; -EAGAIN: no better member is heard, -ETIMEDOUT). */
int srnic_engine_svc_freeze(struct srnic_engine *eng, uint32_t svc_ipv4,
			    bool on);
int srnic_engine_svc_handover(struct srnic_engine *eng, uint32_t svc_ipv4);

/* The system-wide protection table (control/tpt.c; docs/published-
 * keys.md): a region of this process published under a name, found by a
 * node's address and that name. */
struct srnic_published {
	uint32_t name;
	uint32_t rkey;
	uint32_t access;	/* remote rights, SRNIC_ACCESS_REMOTE_* */
	uint64_t addr;
	uint64_t length;
};
/* 0, -EINVAL, -EEXIST (the node has the name), -ENOSPC. */
int srnic_engine_publish_mr(struct srnic_engine *eng,
			    const struct srnic_published *p);
/* Key's publication withdrawn: 0 or -ENOENT (deregistration and
 * re-registration do it too). */
int srnic_engine_unpublish_mr(struct srnic_engine *eng, uint32_t key);
/* Region `name` published by the node of GID gid (its RoCE v2 GID: an
 * IPv4 node's ::ffff:a.b.c.d, an IPv6 node's address): 0 with *out,
 * -EINVAL for a GID that names no node so, or -ENOENT (not published
 * there, or the node is not integrated with this one in its current
 * incarnation). */
int srnic_engine_lookup_mr(struct srnic_engine *eng, const uint8_t gid[16],
			   uint32_t name, struct srnic_published *out);

struct srnic_cq *srnic_engine_create_cq(struct srnic_engine *eng,
					unsigned depth);
int srnic_engine_destroy_cq(struct srnic_engine *eng, struct srnic_cq *cq);
/* The CQ keeps each completion's time (cq->ts): before any QP uses it.
 * 0 or -ENOMEM. */
int srnic_engine_cq_timestamps(struct srnic_engine *eng, struct srnic_cq *cq);
/* A new depth (at least what is unpolled: else -EINVAL); the caller keeps
 * the CQ's pollers out meanwhile (its lock). */
int srnic_engine_resize_cq(struct srnic_engine *eng, struct srnic_cq *cq,
			   unsigned depth);
/* The CQ's event after count completions, or period_us after the first
 * of them (count <= 1 and period 0: after each, as before). */
int srnic_engine_moderate_cq(struct srnic_engine *eng, struct srnic_cq *cq,
			     unsigned count, unsigned period_us);

struct srnic_srq *srnic_engine_create_srq(struct srnic_engine *eng,
					  unsigned depth, unsigned max_sge);
/* An XRC SRQ of domain xrcd (a handle of the caller's): srq->srqn is its
 * number, by which XRC senders name it; its receives complete into cq and
 * its messages' memory is checked against pd. */
struct srnic_srq *srnic_engine_create_xrc_srq(struct srnic_engine *eng,
					      unsigned depth, unsigned max_sge,
					      uint32_t xrcd, uint32_t pd,
					      struct srnic_cq *cq);
int srnic_engine_destroy_srq(struct srnic_engine *eng, struct srnic_srq *srq);
/* Arm the SRQ-limit event: SRNIC_EV_SRQ_LIMIT once fewer than limit WQEs
 * are left (0 disarms). */
void srnic_engine_arm_srq(struct srnic_srq *srq, uint32_t limit);

struct srnic_qp_init {
	uint8_t type;
	uint8_t xrc;		/* enum srnic_xrc_role (type RC) */
	uint32_t xrcd;		/* SRNIC_XRC_TGT: its domain */
	uint8_t sq_sig_all;
	uint8_t dev;		/* its adapter: its QPN's table index % the
				 * node's ndev */
	/* a member's QP of a service (docs/failover.md): the service's
	 * address and slot + 1 (its number SRNIC_SVC_QPN_BASE + slot);
	 * 0: an ordinary QP */
	uint32_t svc_ipv4;
	uint16_t svc_slot;
	uint32_t pd;
	uint32_t max_send_wr, max_recv_wr;
	uint32_t max_send_sge, max_recv_sge, max_inline;
	struct srnic_cq *send_cq, *recv_cq;
	struct srnic_srq *srq;	/* receives come from here, not an RQ */
};

/* The engine's QP is its own (srnic_qp.h); the provider holds it by
 * pointer and posts through its queues. */
struct srnic_qp;

struct srnic_qp *srnic_engine_create_qp(struct srnic_engine *eng,
					const struct srnic_qp_init *init);
/* The application side of qp: its rings, their indices, its post locks. */
struct srnic_qp_queues *srnic_engine_qp_queues(struct srnic_qp *qp);
int srnic_engine_destroy_qp(struct srnic_engine *eng, struct srnic_qp *qp);

/* What modify_qp hands over once the provider has validated it. */
#define SRNIC_MOD_STATE 0x01
#define SRNIC_MOD_RTR 0x02	/* dest_qpn, rq_psn, peer, path_shift... */
#define SRNIC_MOD_RTS 0x04	/* sq_psn, max_rd_atomic (and the timers) */
#define SRNIC_MOD_ACCESS 0x08	/* access: remote rights the QP grants */
#define SRNIC_MOD_TIMERS 0x10	/* timeout, retry_cnt, rnr_retry, min_rnr_timer */
#define SRNIC_MOD_QKEY 0x20	/* UD: qkey */

struct srnic_qp_mod {
	uint32_t mask;
	uint32_t state;
	uint32_t dest_qpn, rq_psn, sq_psn;
	uint8_t peer_gid[16];
	uint8_t path_shift;
	uint8_t timeout;	/* verbs code: 4.096 us << timeout */
	uint8_t retry_cnt, rnr_retry, min_rnr_timer;
	uint8_t max_rd_atomic, max_dest_rd_atomic;
	uint32_t access;	/* SRNIC_ACCESS_REMOTE_* */
	uint32_t qkey;
	uint32_t svc_ipv4;	/* (the engine's: the peer GID is a service's
				 * address) */
};

/* Returns 0 or a negative errno (EHOSTUNREACH: the GID did not resolve). */
int srnic_engine_modify_qp(struct srnic_engine *eng, struct srnic_qp *qp,
			   const struct srnic_qp_mod *mod);

/*
 * What an address handle for gid resolves to (its qpn and qkey are the
 * work request's business): a peer node, waiting up to the configured
 * resolve_ms for it to be heard of, or an IPv4 multicast group
 * (::ffff:224.0.0.0/100).  Returns 0 or a negative errno: EHOSTUNREACH
 * when no node has that GID, EINVAL for a GID srnic cannot send to.
 */
int srnic_engine_resolve_ud(struct srnic_engine *eng, const uint8_t gid[16],
			    struct srnic_ud_addr *out);

/* Multicast: let a UD QP take the datagrams sent to the group of gid (an
 * IPv4 multicast GID, as above), or stop.  0 or a negative errno
 * (EINVAL: not a multicast GID or not a UD QP; ENOMEM: too many groups or
 * members; ENOENT: detach of a QP that is not attached). */
int srnic_engine_attach_mcast(struct srnic_engine *eng, struct srnic_qp *qp,
			      const uint8_t gid[16]);
int srnic_engine_detach_mcast(struct srnic_engine *eng, struct srnic_qp *qp,
			      const uint8_t gid[16]);

/* Multicast RDMA WRITE (src/group).  Region: key (of pd, length bytes
 * at addr) becomes group g's region on this node: 0, or -EINVAL (no such
 * group), -EBUSY (the node has one for g).  Forget_key: the key's group
 * regions end (its deregistration).  Members: the other nodes that hold a
 * region for g and that a port reaches, up to max of them in out; returns
 * how many there are.  Failed: the members qp's last failed multicast
 * WRITE gave up on (*wr_id: its WQE's), as members does. */
struct srnic_engine_member {
	uint32_t ipv4;
	char name[16];
	int status;		/* srnic_wc_status */
};
int srnic_engine_group_region(struct srnic_engine *eng, unsigned g,
			      uint32_t key, uint32_t pd, const void *addr,
			      uint64_t length);
void srnic_engine_group_forget_key(struct srnic_engine *eng, uint32_t key);
/* The region of key (a group's) makes a completion in cq for each
 * message that lands whole (cq NULL: no more); -EINVAL if key is no
 * group region of this process. */
int srnic_engine_group_notify(struct srnic_engine *eng, uint32_t key,
			      struct srnic_cq *cq);
int srnic_engine_group_members(struct srnic_engine *eng, unsigned g,
			       struct srnic_engine_member *out, int max);
int srnic_engine_group_failed(struct srnic_engine *eng, struct srnic_qp *qp,
			      uint64_t *wr_id, struct srnic_engine_member *out,
			      int max);

/* Conditional queues (srnic.h, docs/conditional-rdma.md): create gives
 * a queue's id (> 0), or -ENOMEM (the provider keeps it to its PD's QPs);
 * destroy fails the QPs
 * whose WQEs wait on it; set sets the count of successes and clears the
 * failures; query reads successes, failures and conditional WQEs
 * started, in that order. */
int srnic_engine_condq_create(struct srnic_engine *eng);
void srnic_engine_condq_destroy(struct srnic_engine *eng, uint16_t id);
void srnic_engine_condq_set(struct srnic_engine *eng, uint16_t id,
			    uint64_t count);
void srnic_engine_condq_query(const struct srnic_engine *eng, uint16_t id,
			      uint64_t out[3]);

/* Posting: mark qp as having new work (under the QP's post lock), then,
 * with the lock dropped, kick the datapath: the caller's thread runs it if
 * it is free, else its thread is told. */
void srnic_engine_doorbell(struct srnic_engine *eng, struct srnic_qp *qp);
void srnic_engine_kick(struct srnic_engine *eng);
/* ... or, when the caller will poll for what it posted (or the engine's
 * thread may take it), only tell that thread: it runs once more, woken
 * if it sleeps. */
void srnic_engine_wake(struct srnic_engine *eng);

/* Polling found nothing: run one datapath iteration on the caller's thread
 * if nobody else is.  Returns the work it did (0 also when it did not run);
 * a program that keeps polling thus drives its own traffic. */
unsigned srnic_engine_progress(struct srnic_engine *eng);
/* A thread that waits for a completion event runs the datapath itself
 * for a while (srnic_engine_progress): the engine's thread steps aside
 * while one does (on), and takes the datapath back at once when it goes
 * to sleep for the event (app_sleeps). */
void srnic_engine_app_spins(struct srnic_engine *eng, bool on);
void srnic_engine_app_sleeps(struct srnic_engine *eng);

#endif
