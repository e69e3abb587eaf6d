/* SPDX-License-Identifier: MIT */
/*
 * The kernel's rdma_cm command interface (the "ucma" ABI, version 4),
 * served in user space inside the program that uses it.
 *
 * librdmacm talks to /dev/infiniband/rdma_cm with write(): one command a
 * write, answers written straight into the caller's memory, GET_EVENT a
 * write that waits.  The preload library catches that device's open,
 * fstat, write and close (ucma_fd.c) and runs each command here, in the
 * caller's thread (ucma_cmd.c, ucma_addr.c, ucma_conn.c).  Connections are set up with a small
 * exchange over TCP between the nodes' IP addresses (cm_msg.h), run by
 * one CM thread per process (cm_thread.c).  Everything librdmacm builds on
 * the interface (rdma_getaddrinfo, rdma_create_ep, rsockets, ...) stays
 * librdmacm's own.
 *
 * One lock (ucma.lock) guards every channel, id and queued event: commands
 * and the CM thread take it; GET_EVENT waits outside it.
 */
#ifndef SRNIC_UCMA_H
#define SRNIC_UCMA_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rdma/rdma_user_cm.h>

#define EXPORT __attribute__((visibility("default")))

/* librdmacm's event numbers (rdma_cma.h, which cannot be included beside
 * the kernel's header: both name the port spaces). */
enum {
	RDMA_CM_EVENT_ADDR_RESOLVED,
	RDMA_CM_EVENT_ADDR_ERROR,
	RDMA_CM_EVENT_ROUTE_RESOLVED,
	RDMA_CM_EVENT_ROUTE_ERROR,
	RDMA_CM_EVENT_CONNECT_REQUEST,
	RDMA_CM_EVENT_CONNECT_RESPONSE,
	RDMA_CM_EVENT_CONNECT_ERROR,
	RDMA_CM_EVENT_UNREACHABLE,
	RDMA_CM_EVENT_REJECTED,
	RDMA_CM_EVENT_ESTABLISHED,
	RDMA_CM_EVENT_DISCONNECTED,
	RDMA_CM_EVENT_DEVICE_REMOVAL,
	RDMA_CM_EVENT_MULTICAST_JOIN,
	RDMA_CM_EVENT_MULTICAST_ERROR,
};
#define RDMA_UDP_QKEY 0x01234567u	/* rdma_cm's Q_Key for UD ids */

/* A channel: one open of the device.  The program holds `fd`, one end of
 * a socket pair; each queued event puts a byte into the other end, so the
 * fd polls readable exactly while events wait (and O_NONBLOCK, set by the
 * program on its fd, makes GET_EVENT say EAGAIN, as the kernel does). */
struct ucma_event;
struct ucma_chan {
	struct ucma_chan *next;
	/* fd: the program's; rfd: ours, on the same socket (its flags, as
	 * O_NONBLOCK, are the program's), what GET_EVENT waits on: it stays
	 * while a call runs, though the program close fd and its number go
	 * to another file; wake: the socket's other end */
	int fd, rfd, wake;
	struct ucma_event *head, **tail;
	/* (under ucma.lock) commands running on it, and whether it was
	 * closed meanwhile: it is freed when both say so, as the kernel
	 * holds a file for a call that runs while it is closed */
	unsigned calls;
	int closed;
};

enum ucma_state {
	ST_IDLE,	/* created */
	ST_BOUND,	/* an address (and TCP port) of its own */
	ST_ADDR,	/* destination resolved: a device, both GIDs */
	ST_ROUTE,	/* route resolved */
	ST_LISTEN,
	ST_CONNECTING,	/* active: REQ (or SIDR REQ) on its way */
	ST_REP_RCVD,	/* active: REP here, RTU goes at ACCEPT */
	ST_REQ_HIDDEN,	/* passive: TCP accepted, REQ not yet read */
	ST_REQ_RCVD,	/* passive: reported, waiting for accept/reject */
	ST_REP_SENT,	/* passive: accepted, waiting for RTU */
	ST_ESTABLISHED,
	ST_DREQ_SENT,
	ST_DISCONNECTED,
	ST_DEAD,	/* rejected, failed or torn down: only destroy is left */
};

struct ucma_mc;

struct ucma_id {
	uint32_t handle, gen;
	uint64_t uid;
	struct ucma_chan *chan;
	uint16_t ps;
	uint8_t qp_type;
	enum ucma_state state;
	bool route;		/* path known (route resolved or connected) */
	bool peer_gone;		/* passive: the peer hung up before accept */
	bool peer_known;	/* the peer's QP number and PSN are here */
	bool tcp_up;		/* the socket is connected */
	bool close_after_tx;	/* the exchange is over once tx is sent */
	uint64_t refused_until;	/* connect: a refusal is tried again till */
	uint64_t retry_at;	/* then, the next try (ms, monotonic) */
	int dev;		/* index into ucma_devs, -1 if none */
	struct sockaddr_storage src, dst;
	int sock;		/* TCP: bound, listening or connected */
	struct ucma_id *listener;	/* passive, until reported */
	uint32_t events_reported;
	uint8_t tos, ack_timeout;
	bool afonly;
	/* AF_IB: the program named the id's addresses by GID and service
	 * id (ucma_ib.c); src and dst hold the IP addresses they name, and
	 * sid_ps the port space the service id gave */
	bool af_ib;
	uint16_t sid_ps;
	bool passive;		/* a listener's child */

	/* the connection: ours and the peer's */
	uint32_t qpn, psn, qkey;
	uint32_t rqpn, rpsn, rqkey;
	uint8_t resp_res, init_depth, retry, rnr_retry, srq, flow_control;
	uint8_t rresp_res, rinit_depth, rsrq;

	/* TCP bytes in and out (messages are a few hundred bytes) */
	uint8_t rx[512], tx[1024];
	uint32_t rxlen, txlen;

	struct ucma_mc *mcs;
};

struct ucma_mc {
	struct ucma_mc *next;
	uint32_t handle;
	uint64_t uid;
	struct ucma_id *id;
	struct sockaddr_storage addr;
	uint32_t events_reported;
};

struct ucma_event {
	struct ucma_event *next;
	struct ucma_id *id;	/* counted on (the listener, for a request) */
	struct ucma_id *child;	/* a connect request's new id */
	struct ucma_mc *mc;
	struct rdma_ucm_event_resp resp;
};

/* An RDMA device as rdma_cm sees it: port 1, its GIDs, its MTU. */
#define UCMA_MAX_DEVS 8
#define UCMA_GIDS 4
struct ucma_dev {
	char name[64];
	uint64_t guid;		/* network order, as ibv_get_device_guid */
	uint8_t gid[UCMA_GIDS][16];
	uint32_t active_mtu;	/* enum ibv_mtu */
};

struct ucma {
	pthread_mutex_t lock;
	struct ucma_chan *chans;
	struct ucma_id **ids;	/* by handle */
	uint32_t nids, gen;
	struct ucma_mc **mcs;	/* by handle */
	uint32_t nmcs;
	int epfd;		/* the CM thread's */
	int wakefd;		/* an eventfd in it: a retry was scheduled */
	bool thread_up;
	struct ucma_dev devs[UCMA_MAX_DEVS];
	int ndevs;
	bool devs_read;
	unsigned link_scope;	/* the devices' netdev (ucma_ib.c), 0: unknown */
};

extern struct ucma ucma;

/* ucma_fd.c (any thread): the libc calls it stands behind */
ssize_t ucma_real_write(int fd, const void *buf, size_t len);
int ucma_fd_is_chan(int fd);

/* ucma_cmd.c (the caller's thread, ucma.lock not held) */
ssize_t ucma_command(struct ucma_chan *ch, const void *buf, size_t len);

/* A command, ucma.lock held: its copy, and the id it names (validated:
 * this channel's), or NULL for a command that names none.  0 or an errno
 * value. */
typedef int (*ucma_cmd_fn)(struct ucma_chan *ch, struct ucma_id *id,
			   const void *cmd, uint32_t out);
void ucma_answer(uint64_t response, uint32_t out, const void *resp,
		 size_t size);

/* ucma_addr.c: commands about addresses */
int ucma_bind_to(struct ucma_id *id, const struct sockaddr *a);
int ucma_bind_ip(struct ucma_chan *, struct ucma_id *, const void *, uint32_t);
int ucma_bind(struct ucma_chan *, struct ucma_id *, const void *, uint32_t);
int ucma_resolve_ip(struct ucma_chan *, struct ucma_id *, const void *,
		    uint32_t);
int ucma_resolve_addr(struct ucma_chan *, struct ucma_id *, const void *,
		      uint32_t);
int ucma_resolve_route(struct ucma_chan *, struct ucma_id *, const void *,
		       uint32_t);
int ucma_query_route(struct ucma_chan *, struct ucma_id *, const void *,
		     uint32_t);
struct ib_user_path_rec;
void ucma_path_rec(const struct ucma_id *id, struct ib_user_path_rec *p);
int ucma_query(struct ucma_chan *, struct ucma_id *, const void *, uint32_t);
int ucma_join_ip_mcast(struct ucma_chan *, struct ucma_id *, const void *,
		       uint32_t);
int ucma_join_mcast(struct ucma_chan *, struct ucma_id *, const void *,
		    uint32_t);
int ucma_leave_mcast(struct ucma_chan *, struct ucma_id *, const void *,
		     uint32_t);

/* ucma_conn.c: commands about connections */
uint32_t ucma_new_psn(void);
int ucma_connect(struct ucma_chan *, struct ucma_id *, const void *,
		 uint32_t);
int ucma_listen(struct ucma_chan *, struct ucma_id *, const void *, uint32_t);
int ucma_accept(struct ucma_chan *, struct ucma_id *, const void *, uint32_t);
int ucma_reject(struct ucma_chan *, struct ucma_id *, const void *, uint32_t);
int ucma_disconnect(struct ucma_chan *, struct ucma_id *, const void *,
		    uint32_t);
int ucma_init_qp_attr(struct ucma_chan *, struct ucma_id *, const void *,
		      uint32_t);

/* ucma_ids.c (ucma.lock held) */
struct ucma_chan *ucma_chan_by_fd(int fd);
struct ucma_id *ucma_id_new(struct ucma_chan *ch, uint64_t uid,
			    uint16_t ps, uint8_t qp_type);
struct ucma_id *ucma_id_get(uint32_t handle);
void ucma_id_free(struct ucma_id *id);
struct ucma_event *ucma_event_new(struct ucma_id *id, uint32_t event,
				  int32_t status);
void ucma_event_queue(struct ucma_id *on, struct ucma_event *ev);
void ucma_queue(struct ucma_id *id, uint32_t event, int32_t status);
struct ucma_event *ucma_event_pop(struct ucma_chan *ch);
void ucma_events_purge(struct ucma_id *id);
void ucma_events_move(struct ucma_id *id, struct ucma_chan *to);
struct ucma_mc *ucma_mc_new(struct ucma_id *id, uint64_t uid);
void ucma_mc_free(struct ucma_mc *mc);
struct ucma_mc *ucma_mc_get(uint32_t handle);
void ucma_id_teardown(struct ucma_id *id);
void ucma_chan_destroy(struct ucma_chan *ch);
/* The channel's memory and sockets go (its last call ended, or none ran
 * when it was closed). */
void ucma_chan_free(struct ucma_chan *ch);

/* ucma_dev.c (ucma.lock held) */
void ucma_devs_load(void);
int ucma_dev_by_addr(const struct sockaddr *a, int *gid_index);
void ucma_addr_gid(const struct sockaddr *a, uint8_t gid[16]);
bool ucma_addr_any(const struct sockaddr *a);
bool ucma_addr_loopback(const struct sockaddr *a);
socklen_t ucma_addr_len(const struct sockaddr *a);
uint16_t ucma_addr_port(const struct sockaddr *a);
void ucma_addr_set_port(struct sockaddr_storage *a, uint16_t port);
void ucma_port_flip(struct sockaddr_storage *a);
bool ucma_port_ok(const struct sockaddr *a);

/* ucma_ib.c (ucma.lock held): AF_IB addresses */
struct sockaddr_ib;
int ucma_ib_to_ip(const struct sockaddr_ib *sib, uint16_t id_ps,
		  struct sockaddr_storage *to, uint16_t *ps);
void ucma_ip_to_ib(const struct ucma_id *id, const struct sockaddr_storage *a,
		   struct sockaddr_ib *sib);
unsigned ucma_pd_skip(const struct ucma_id *id, unsigned type);
unsigned ucma_pd_header(const struct ucma_id *id, unsigned type, uint8_t *p);
int ucma_query_gid(const struct ucma_id *id, uint64_t response, uint32_t out);
struct rdma_ucm_query_addr_resp;
/* (ucma_addr.c) QUERY's answer's device fields: the id's device's GUID,
 * port 1, the default P_Key; none when the id has no device yet. */
void ucma_query_dev(const struct ucma_id *id,
		    struct rdma_ucm_query_addr_resp *resp);
int ucma_query_path(const struct ucma_id *id, uint64_t response,
		    uint32_t out);

/* cm_thread.c (the CM thread; the calls below from commands, lock held) */
int cm_start(void);
int cm_watch(struct ucma_id *id, uint32_t events);
void cm_unwatch(struct ucma_id *id);
struct cm_msg;
int cm_send(struct ucma_id *id, const struct cm_msg *m);
void cm_connect(struct ucma_id *id);
struct ib_uverbs_ah_attr;
void cm_peer_ah(const struct ucma_id *id, struct ib_uverbs_ah_attr *ah);

#endif
