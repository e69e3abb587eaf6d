/* SPDX-License-Identifier: MIT */
/*
 * Small helpers for the end-to-end verbs test programs: open the device,
 * make RC QPs and walk them through INIT/RTR/RTS, exchange what a peer
 * needs over TCP, and poll a CQ with a deadline so that a test that would
 * hang fails instead.
 *
 * Roles: a program started without a host is the server (it listens on the
 * TCP port); with a host it is the client (it connects there).
 */
#ifndef VERBS_UTIL_H
#define VERBS_UTIL_H

#include <stdint.h>

#include <infiniband/verbs.h>

/* GID index 1 is the IPv4-mapped RoCE v2 GID of a srnic node. */
#define VU_GID_INDEX 1
#define VU_PORT 1

/* What one side tells the other about one QP. */
struct vu_dest {
	uint32_t qpn;
	uint32_t psn;
	union ibv_gid gid;
	uint32_t rkey;
	uint64_t addr;
};

/* Test data: each byte depends on the seed and its offset, so a byte at
 * the wrong place, or left from another run, shows.  vu_fill writes len
 * such bytes from offset 0. */
uint8_t vu_pattern(uint32_t seed, uint64_t off);
void vu_fill(uint8_t *p, uint64_t len, uint32_t seed);

/* Milliseconds on the monotonic clock. */
uint64_t vu_now_ms(void);

/* The first device's context, or NULL after printing why. */
struct ibv_context *vu_open_first(void);

/* An RC QP on cq (send and receive); cap_out gets what it really holds. */
struct ibv_qp *vu_create_rc_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			       uint32_t max_send_wr, uint32_t max_recv_wr,
			       uint32_t max_sge, struct ibv_qp_cap *cap_out);

/* Valid attributes for each transition, for tests to start from. */
int vu_init_attr(struct ibv_qp_attr *a, int access);
int vu_rtr_attr(struct ibv_qp_attr *a, const struct vu_dest *peer,
		enum ibv_mtu mtu);
int vu_rts_attr(struct ibv_qp_attr *a, uint32_t sq_psn, uint8_t timeout,
		uint8_t retry_cnt);

/* The transitions themselves: 0 or an errno value. */
int vu_to_init(struct ibv_qp *qp, int access);
int vu_to_rtr(struct ibv_qp *qp, const struct vu_dest *peer,
	      enum ibv_mtu mtu);
int vu_to_rts(struct ibv_qp *qp, uint32_t sq_psn, uint8_t timeout,
	      uint8_t retry_cnt);

/* Two RC QPs of one program on pd and cq, connected to each other through
 * gid (the node's own: the loopback), in RTS with the remote rights of
 * access.  0 or -1. */
int vu_loop_pair(struct ibv_pd *pd, struct ibv_cq *cq,
		 const union ibv_gid *gid, int access, struct ibv_qp *qp[2]);

/* The same for two RC QPs made elsewhere (in RESET). */
int vu_loop_connect(struct ibv_qp *qp[2], const union ibv_gid *gid,
		    int access);

/* The QP's state as ibv_query_qp reports it, or -1. */
int vu_qp_state(struct ibv_qp *qp);

/*
 * Poll cq for one completion for at most timeout_ms.  Returns 1 with *wc
 * filled, 0 on timeout, -1 when ibv_poll_cq itself failed.
 */
int vu_poll(struct ibv_cq *cq, struct ibv_wc *wc, unsigned timeout_ms);

/*
 * TCP: the server (host NULL) listens on port and accepts one client; the
 * client connects to host:port, trying again until the server is there.
 * Both give up after timeout_ms.  Returns the socket or -1.
 */
int vu_tcp_connect(const char *host, int port, unsigned timeout_ms);

/* Send our n entries, receive the peer's n.  0 or -1. */
int vu_exchange(int fd, const struct vu_dest *mine, struct vu_dest *theirs,
		unsigned n, unsigned timeout_ms);

/* Meet the peer: send one byte, wait for one.  0 or -1. */
int vu_sync(int fd, unsigned timeout_ms);

/* Wait until the peer closes the connection (its process is gone). */
int vu_wait_eof(int fd, unsigned timeout_ms);

/*
 * Checks, one line each: "ok - what" or "not ok - what (detail)", and the
 * counts the summary line ("# N checks, M failed") needs.
 */
void vu_check(int ok, const char *detail, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
extern unsigned vu_checks, vu_failed;

/* Names for messages: a QP state, an errno value (EINVAL...), and what a
 * vu_poll() that returned got found ("got <status>", "no completion in
 * time", "poll_cq failed").  The last two share a static buffer each. */
const char *vu_state_str(int s);
const char *vu_err_str(int e);
const char *vu_wc_str(const struct ibv_wc *wc, int got);

/* "::ffff:a.b.c.d" style text of a GID, for messages. */
const char *vu_gid_str(const union ibv_gid *gid, char *buf, unsigned len);

#endif
