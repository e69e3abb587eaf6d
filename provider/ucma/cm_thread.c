/* SPDX-License-Identifier: MIT */
/*
 * The CM thread: one a process, started by the first open of rdma_cm.  It
 * waits on every id's TCP socket (epoll), accepts connections on
 * listeners, reads the connection exchange (cm_msg.h) and moves ids
 * through it, queuing the events the program reads.  It runs each step
 * with ucma.lock held, as commands do; cm_send() and friends are called
 * from both.
 *
 * The exchange, as IB CM's (docs/wire-protocol.md):
 *   active                         passive
 *   CONNECT   -- REQ -->           CONNECT_REQUEST
 *   CONNECT_RESPONSE <-- REP --    ACCEPT
 *   ACCEPT    -- RTU -->           ESTABLISHED
 *   DISCONNECT -- DREQ -->         DISCONNECTED (DREP sent)
 *   DISCONNECTED <-- DREP --
 * UD ids ask instead with SIDR REQ and are answered with SIDR REP.  A
 * refused TCP connection is IB CM's "no such service" reject; a socket
 * that closes takes the connection down (DISCONNECTED), which IB would
 * only learn from timeouts.
 */

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "cm_msg.h"
#include "ucma.h"

#define REJ_NO_SERVICE 8	/* IB CM: invalid service id */
#define CM_REFUSED_RETRY_MS 1000
#define CM_RETRY_GAP_MS 50
#define WAKE_TAG UINT64_MAX	/* the eventfd's epoll tag */

static uint64_t tag(const struct ucma_id *id)
{
	return (uint64_t)id->gen << 32 | id->handle;
}

int cm_watch(struct ucma_id *id, uint32_t events)
{
	struct epoll_event e = {.events = events, .data.u64 = tag(id)};

	if (epoll_ctl(ucma.epfd, EPOLL_CTL_MOD, id->sock, &e) == 0)
		return 0;
	return epoll_ctl(ucma.epfd, EPOLL_CTL_ADD, id->sock, &e) ? -errno
								  : 0;
}

void cm_unwatch(struct ucma_id *id)
{
	epoll_ctl(ucma.epfd, EPOLL_CTL_DEL, id->sock, NULL);
}

static void drop_socket(struct ucma_id *id)
{
	if (id->sock < 0)
		return;
	cm_unwatch(id);
	close(id->sock);
	id->sock = -1;
	id->tcp_up = false;
	id->rxlen = 0;
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* Sends what waits in tx, as far as the socket takes it now. */
static void flush(struct ucma_id *id)
{
	ssize_t n;

	if (id->sock < 0 || !id->tcp_up)
		return;
	while (id->txlen) {
		n = send(id->sock, id->tx, id->txlen,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n <= 0)
			break;
		memmove(id->tx, id->tx + n, id->txlen - (uint32_t)n);
		id->txlen -= (uint32_t)n;
	}
	if (id->txlen) {
		cm_watch(id, EPOLLIN | EPOLLOUT);
		return;
	}
	if (id->close_after_tx)
		drop_socket(id);
	else
		cm_watch(id, EPOLLIN);
}

int cm_send(struct ucma_id *id, const struct cm_msg *m)
{
	uint8_t buf[CM_MSG_MAX];
	unsigned n = cm_msg_encode(m, buf);

	if (!n)
		return EINVAL;
	if (id->sock < 0)
		return ENOTCONN;
	if (id->txlen + n > sizeof(id->tx))
		return ENOBUFS;
	memcpy(id->tx + id->txlen, buf, n);
	id->txlen += n;
	flush(id);
	return 0;
}

/* The route to the peer, as an address handle: rdma_cm's UD events and
 * INIT_QP_ATTR's RTR carry it. */
void cm_peer_ah(const struct ucma_id *id, struct ib_uverbs_ah_attr *ah)
{
	int k = 0;

	memset(ah, 0, sizeof(*ah));
	ucma_addr_gid((const struct sockaddr *)&id->dst, ah->grh.dgid);
	ucma_dev_by_addr((const struct sockaddr *)&id->src, &k);
	ah->grh.sgid_index = (uint8_t)k;
	ah->grh.hop_limit = 64;
	ah->grh.traffic_class = id->tos;
	ah->is_global = 1;
	ah->port_num = 1;
}

/* The private data of m that id's program sees (ucma_pd_skip), padded
 * with zeros to the field's length, as IB CM delivers the message's whole
 * field and the kernel's rdma_cm reports it on IB and RoCE. */
static uint8_t take_pd(const struct ucma_id *id, const struct cm_msg *m,
		       uint8_t *to)
{
	unsigned skip = ucma_pd_skip(id, m->type);

	if (m->pd_len > skip)
		memcpy(to, m->pd + skip, m->pd_len - skip);
	return (uint8_t)(cm_max_pd(m->type) - skip);
}

static void conn_event(struct ucma_event *ev, const struct ucma_id *id,
		       const struct cm_msg *m)
{
	struct rdma_ucm_conn_param *c;

	if (!ev)
		return;
	c = &ev->resp.param.conn;
	c->qp_num = m->qpn;
	c->srq = m->srq;
	/* (seen from the receiver: the peer's depth is what it will ask
	 * of us, its resources what we may ask of it) */
	c->responder_resources = m->init_depth;
	c->initiator_depth = m->resp_res;
	c->flow_control = m->flow_control;
	c->retry_count = m->retry;
	c->rnr_retry_count = m->rnr_retry;
	c->private_data_len = take_pd(id, m, c->private_data);
}

static void ud_event(struct ucma_event *ev, const struct ucma_id *id,
		     const struct cm_msg *m)
{
	struct rdma_ucm_ud_param *u;

	if (!ev)
		return;
	u = &ev->resp.param.ud;
	u->qp_num = m->qpn;
	u->qkey = m->qkey;
	cm_peer_ah(id, &u->ah_attr);
	u->private_data_len = take_pd(id, m, u->private_data);
}

/* The TCP connection ended (or its peer broke the exchange). */
static void peer_closed(struct ucma_id *id)
{
	drop_socket(id);
	switch (id->state) {
	case ST_REQ_HIDDEN:
		ucma_id_teardown(id);
		return;
	case ST_CONNECTING:
		ucma_queue(id, RDMA_CM_EVENT_UNREACHABLE, -ECONNRESET);
		id->state = ST_DEAD;
		break;
	case ST_REQ_RCVD:
		id->peer_gone = true;	/* told at accept */
		break;
	case ST_REP_SENT:
		ucma_queue(id, RDMA_CM_EVENT_CONNECT_ERROR, -ECONNRESET);
		id->state = ST_DEAD;
		break;
	case ST_REP_RCVD:
	case ST_ESTABLISHED:
	case ST_DREQ_SENT:
		ucma_queue(id, RDMA_CM_EVENT_DISCONNECTED, 0);
		id->state = ST_DISCONNECTED;
		break;
	default:
		break;
	}
}

/* A socket of its own again, bound where the refused one was. */
static int rebind(struct ucma_id *id)
{
	struct sockaddr_storage t = id->src;
	int one = 1, s;

	s = socket(id->src.ss_family,
		   SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ucma_port_flip(&t);
	if (bind(s, (struct sockaddr *)&t,
		 ucma_addr_len((struct sockaddr *)&t))) {
		close(s);
		return -1;
	}
	id->sock = s;
	return 0;
}

static void connect_done(struct ucma_id *id, int err)
{
	uint64_t one = 1;

	if (!err) {
		id->tcp_up = true;
		flush(id);
		return;
	}
	drop_socket(id);
	if (err == ECONNREFUSED && now_ms() < id->refused_until &&
	    rebind(id) == 0) {
		id->retry_at = now_ms() + CM_RETRY_GAP_MS;
		(void)!write(ucma.wakefd, &one, sizeof(one));
		return;
	}
	id->txlen = 0;
	id->state = ST_DEAD;
	if (err == ECONNREFUSED && id->qp_type != IBV_QPT_UD) {
		/* nobody listens on that port */
		ucma_queue(id, RDMA_CM_EVENT_REJECTED, REJ_NO_SERVICE);
	} else {
		ucma_queue(id, RDMA_CM_EVENT_UNREACHABLE,
		      err == ECONNREFUSED ? -ECONNRESET : -err);
	}
}

static void try_connect(struct ucma_id *id)
{
	struct sockaddr_storage t = id->dst;

	ucma_port_flip(&t);
	if (connect(id->sock, (struct sockaddr *)&t,
		    ucma_addr_len((struct sockaddr *)&t)) == 0)
		connect_done(id, 0);
	else if (errno == EINPROGRESS)
		cm_watch(id, EPOLLOUT | EPOLLIN);
	else
		connect_done(id, errno);
}

/* CONNECT's TCP connection.  No listener is IB CM's immediate reject; but
 * a server that listens anew for a second connection (perftest -R does)
 * may not be back yet, on a busy host, when its client comes: a refusal
 * is tried again, every 50 ms for a second, before it is told. */
void cm_connect(struct ucma_id *id)
{
	id->refused_until = now_ms() + CM_REFUSED_RETRY_MS;
	id->retry_at = 0;
	try_connect(id);
}

/* The retries due by now; the ms until the next one (-1: none). */
static int retries(void)
{
	uint64_t now = now_ms(), next = UINT64_MAX;
	struct ucma_id *id;
	uint32_t i;

	for (i = 0; i < ucma.nids; i++) {
		id = ucma.ids[i];
		if (!id || !id->retry_at || id->state != ST_CONNECTING)
			continue;
		if (id->retry_at <= now) {
			id->retry_at = 0;
			try_connect(id);
			if (ucma_id_get(i) != id || !id->retry_at)
				continue;
		}
		if (id->retry_at < next)
			next = id->retry_at;
	}
	return next == UINT64_MAX ? -1 : (int)(next > now ? next - now : 0);
}

/* A request, on a connection a listener accepted. */
static void on_request(struct ucma_id *id, const struct cm_msg *m)
{
	struct ucma_id *l = id->listener;
	bool ud = id->qp_type == IBV_QPT_UD;
	struct ucma_event *ev;
	struct cm_msg rej = {0};

	if (!l || (m->type == CM_SIDR_REQ) != ud) {
		rej.type = ud ? CM_SIDR_REP : CM_REJ;
		rej.status = ud ? 1 : REJ_NO_SERVICE;
		cm_send(id, &rej);
		id->close_after_tx = true;
		id->state = ST_DEAD;
		flush(id);
		return;
	}
	id->rqpn = m->qpn;
	id->rpsn = m->psn;
	id->rqkey = m->qkey;
	id->peer_known = true;
	/* (ours now: librdmacm moves the QP to RTS before it accepts) */
	id->psn = ucma_new_psn();
	/* The passive side's QP: what the peer asks of it, and the retry
	 * counts the peer chose (IB CM's REQ carries both). */
	id->resp_res = m->init_depth;
	id->init_depth = m->resp_res;
	id->retry = m->retry;
	id->rnr_retry = m->rnr_retry;
	id->state = ST_REQ_RCVD;
	id->route = true;
	ev = ucma_event_new(l, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	if (!ev)
		return;
	ev->resp.id = id->handle;
	ev->child = id;
	if (ud)
		ud_event(ev, id, m);
	else
		conn_event(ev, id, m);
	ucma_event_queue(l, ev);
}

static void on_message(struct ucma_id *id, const struct cm_msg *m)
{
	struct ucma_event *ev;
	struct cm_msg drep = {.type = CM_DREP};

	switch (m->type) {
	case CM_REQ:
	case CM_SIDR_REQ:
		if (id->state == ST_REQ_HIDDEN)
			on_request(id, m);
		return;
	case CM_REP:
		if (id->state != ST_CONNECTING)
			return;
		id->rqpn = m->qpn;
		id->rpsn = m->psn;
		id->rnr_retry = m->rnr_retry;
		id->peer_known = true;
		id->state = ST_REP_RCVD;
		ev = ucma_event_new(id, RDMA_CM_EVENT_CONNECT_RESPONSE, 0);
		conn_event(ev, id, m);
		ucma_event_queue(id, ev);
		return;
	case CM_SIDR_REP:
		if (id->state != ST_CONNECTING)
			return;
		id->close_after_tx = true;
		if (m->status) {
			id->state = ST_DEAD;
			ucma_queue(id, RDMA_CM_EVENT_UNREACHABLE, -ECONNRESET);
		} else {
			id->rqpn = m->qpn;
			id->rqkey = m->qkey;
			id->peer_known = true;
			id->state = ST_ESTABLISHED;
			ev = ucma_event_new(id, RDMA_CM_EVENT_ESTABLISHED, 0);
			ud_event(ev, id, m);
			ucma_event_queue(id, ev);
		}
		flush(id);
		return;
	case CM_RTU:
		if (id->state != ST_REP_SENT)
			return;
		id->state = ST_ESTABLISHED;
		ucma_queue(id, RDMA_CM_EVENT_ESTABLISHED, 0);
		return;
	case CM_REJ:
		if (id->state != ST_CONNECTING && id->state != ST_REP_SENT &&
		    id->state != ST_REP_RCVD)
			return;
		id->state = ST_DEAD;
		ev = ucma_event_new(id, RDMA_CM_EVENT_REJECTED, m->status);
		conn_event(ev, id, m);
		ucma_event_queue(id, ev);
		id->close_after_tx = true;
		flush(id);
		return;
	case CM_DREQ:
		cm_send(id, &drep);
		id->close_after_tx = true;
		if (id->state == ST_ESTABLISHED || id->state == ST_DREQ_SENT ||
		    id->state == ST_REP_SENT || id->state == ST_REP_RCVD) {
			id->state = ST_DISCONNECTED;
			ucma_queue(id, RDMA_CM_EVENT_DISCONNECTED, 0);
		}
		flush(id);
		return;
	case CM_DREP:
		if (id->state == ST_DREQ_SENT) {
			id->state = ST_DISCONNECTED;
			ucma_queue(id, RDMA_CM_EVENT_DISCONNECTED, 0);
		}
		drop_socket(id);
		return;
	default:
		return;
	}
}

static void on_readable(struct ucma_id *id)
{
	uint32_t handle = id->handle;
	struct cm_msg m;
	ssize_t n;
	int used;

	for (;;) {
		n = recv(id->sock, id->rx + id->rxlen,
			 sizeof(id->rx) - id->rxlen, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			peer_closed(id);
			return;
		}
		if (n < 0)
			return;
		id->rxlen += (uint32_t)n;
		while ((used = cm_msg_decode(id->rx, id->rxlen, &m)) > 0) {
			memmove(id->rx, id->rx + used, id->rxlen - (uint32_t)used);
			id->rxlen -= (uint32_t)used;
			on_message(id, &m);
			/* (a message may end the id or its socket) */
			if (ucma_id_get(handle) != id || id->sock < 0)
				return;
		}
		if (used < 0) {
			peer_closed(id);	/* not our protocol */
			return;
		}
	}
}

static void on_listener(struct ucma_id *l)
{
	struct sockaddr_storage peer;
	socklen_t len;
	struct ucma_id *c;
	int fd;

	for (;;) {
		len = sizeof(peer);
		fd = accept4(l->sock, (struct sockaddr *)&peer, &len,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		c = ucma_id_new(l->chan, 0, l->ps, l->qp_type);
		if (!c) {
			close(fd);
			continue;
		}
		c->listener = l;
		c->af_ib = l->af_ib;
		c->sid_ps = l->sid_ps;
		c->passive = true;
		c->state = ST_REQ_HIDDEN;
		c->sock = fd;
		c->tcp_up = true;
		c->tos = l->tos;
		memcpy(&c->dst, &peer, sizeof(peer));
		ucma_port_flip(&c->dst);
		len = sizeof(c->src);
		getsockname(fd, (struct sockaddr *)&c->src, &len);
		ucma_port_flip(&c->src);
		c->dev = ucma_dev_by_addr((struct sockaddr *)&c->src, NULL);
		if (c->dev < 0 || cm_watch(c, EPOLLIN)) {
			ucma_id_teardown(c);	/* not an RDMA address */
			continue;
		}
	}
}

static void on_ready(struct ucma_id *id, uint32_t events)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (id->state == ST_LISTEN) {
		on_listener(id);
		return;
	}
	if (!id->tcp_up && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
		getsockopt(id->sock, SOL_SOCKET, SO_ERROR, &err, &len);
		connect_done(id, err);	/* (the id stays: it reports) */
		if (err)
			return;
	}
	if (events & EPOLLOUT)
		flush(id);
	if (id->sock >= 0 && (events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
		on_readable(id);
}

static void *cm_main(void *arg)
{
	struct epoll_event evs[32];
	struct ucma_id *id;
	int n, i, wait = -1;
	uint64_t v;

	(void)arg;
	for (;;) {
		n = epoll_wait(ucma.epfd, evs, 32, wait);
		pthread_mutex_lock(&ucma.lock);
		for (i = 0; i < n; i++) {
			if (evs[i].data.u64 == WAKE_TAG) {
				(void)!read(ucma.wakefd, &v, sizeof(v));
				continue;
			}
			id = ucma_id_get((uint32_t)evs[i].data.u64);
			if (!id || id->gen != evs[i].data.u64 >> 32 ||
			    id->sock < 0)
				continue;	/* gone since */
			on_ready(id, evs[i].events);
		}
		wait = retries();
		pthread_mutex_unlock(&ucma.lock);
	}
	return NULL;
}

/* Starts the CM thread once (signals stay with the program's threads). */
int cm_start(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	int rc = 0;

	pthread_mutex_lock(&ucma.lock);
	if (ucma.thread_up)
		goto out;
	if (ucma.epfd < 0)
		ucma.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ucma.wakefd < 0)
		ucma.wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ucma.epfd < 0 || ucma.wakefd < 0 ||
	    epoll_ctl(ucma.epfd, EPOLL_CTL_ADD, ucma.wakefd,
		      &(struct epoll_event){.events = EPOLLIN,
					    .data.u64 = WAKE_TAG})) {
		rc = -1;
		goto out;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, cm_main, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		errno = rc;
		rc = -1;
		goto out;
	}
	pthread_setname_np(t, "srnic-cm");
	ucma.thread_up = true;
out:
	pthread_mutex_unlock(&ucma.lock);
	return rc;
}
