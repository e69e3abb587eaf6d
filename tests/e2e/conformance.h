/* SPDX-License-Identifier: MIT */
/*
 * What the parts of the conformance program share: the node (device, PD,
 * port and GIDs), the check reporting, and names for messages.
 *
 *   conformance.c         main, reporting, device and port queries
 *   conformance_qp.c      the QP state machine of RC, UC and UD, and what
 *                         ibv_query_qp says after each step
 *   conformance_limits.c  the device's limits, what post time refuses,
 *                         flushing, the send queue error state
 *   conformance_remote.c  error completions between two nodes
 */
#ifndef CONFORMANCE_H
#define CONFORMANCE_H

#include <stdint.h>

#include "verbs_util.h"

#define CF_POLL_MS 5000		/* longest wait for a completion expected */
#define CF_QUIET_MS 300		/* how long "nothing comes" is watched */
#define CF_TCP_MS 30000
#define CF_QKEY 0x1111abcdu	/* every UD QP's Q_Key (high bit clear) */
#define CF_BAD_QKEY 0x2222abcdu
/* A QP number no node has: where the local checks point their QPs, so
 * that anything they send is dropped at the peer. */
#define CF_NO_QPN 0xfffff0u
/* srnic's largest inline send (SRNIC_MAX_INLINE in src/queue/
 * srnic_queue.h): verbs has no device attribute for it. */
#define CF_MAX_INLINE 256

struct cf_node {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device_attr dev;
	struct ibv_port_attr port;
	enum ibv_mtu mtu;		/* the port's active MTU */
	union ibv_gid gid;		/* ours, index VU_GID_INDEX */
	union ibv_gid peer_gid;		/* the other node's */
	int server;
};

/* One check: "ok - what" or "not ok - what (detail)". */
#define cf_report vu_check

/* A comment line, "# ...", that counts as no check. */
void cf_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A failure that leaves nothing sensible to check: report and exit. */
void cf_die(const char *what) __attribute__((noreturn));

/* Names for messages (verbs_util.h) */
#define cf_err vu_err_str
#define cf_state vu_state_str
#define cf_wc vu_wc_str
const char *cf_type(enum ibv_qp_type t);

/* A zeroed page-aligned buffer of len bytes, or cf_die(). */
uint8_t *cf_alloc(size_t len);

/* A QP of type on cq (both sides), or NULL; *cap_out what it holds. */
struct ibv_qp *cf_create_qp(struct cf_node *n, enum ibv_qp_type type,
			    struct ibv_cq *cq, uint32_t send_wr,
			    uint32_t recv_wr, uint32_t sge, uint32_t inline_len,
			    int sig_all, struct ibv_qp_cap *cap_out);

/*
 * The usual walk: RESET->INIT->RTR->RTS with the attributes each type
 * requires, to dest_qpn on the peer node (RC, UC).  rnr_retry is for RC.
 * 0 or an errno value.
 */
int cf_to_rts(struct cf_node *n, struct ibv_qp *qp, uint32_t dest_qpn,
	      uint32_t rq_psn, uint32_t sq_psn, uint8_t rnr_retry);
/* The first steps only: to INIT (access for RC and UC, CF_QKEY for UD). */
int cf_to_init(struct ibv_qp *qp, int access);
int cf_to_rtr(struct cf_node *n, struct ibv_qp *qp, uint32_t dest_qpn,
	      uint32_t rq_psn);
/* ... with max_dest_rd_atomic dest_rd (RC; -1: vu_rtr_attr's) */
int cf_to_rtr_granting(struct cf_node *n, struct ibv_qp *qp,
		       uint32_t dest_qpn, uint32_t rq_psn, int dest_rd);
int cf_rtr_to_rts(struct ibv_qp *qp, uint32_t sq_psn, uint8_t rnr_retry);

/* An address handle for the peer node's IPv4 GID, or NULL. */
struct ibv_ah *cf_peer_ah(struct cf_node *n);

/* conformance_qp.c */
void cf_state_checks(struct cf_node *n);

/* conformance_limits.c */
void cf_limit_checks(struct cf_node *n);

/* conformance_remote.c: set up, swap with the peer, run. */
struct cf_remote;
struct cf_remote *cf_remote_setup(struct cf_node *n);
void cf_remote_dests(struct cf_remote *r, struct vu_dest *d, unsigned *nd);
void cf_remote_connect(struct cf_remote *r, const struct vu_dest *peer);
void cf_remote_client(struct cf_remote *r);
/* Server: what arrives, while the client runs its cases. */
void cf_remote_server(struct cf_remote *r);
/* Server: after the client is done (nothing more came, memory). */
void cf_remote_server_after(struct cf_remote *r);
void cf_remote_free(struct cf_remote *r);

#endif
