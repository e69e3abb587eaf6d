/* SPDX-License-Identifier: MIT */
/*
 * Channels, ids, multicast memberships and the events queued on channels:
 * the tables a kernel's rdma_cm keeps per open file.  Every function here
 * runs with ucma.lock held, from a command or from the CM thread.
 *
 * Handles are small slot numbers, reused, as the kernel's are (librdmacm
 * indexes a table with them); `gen` tells a reused slot from the id the CM
 * thread's epoll still names.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "cm_msg.h"
#include "ucma.h"

struct ucma_chan *ucma_chan_by_fd(int fd)
{
	struct ucma_chan *ch;

	for (ch = ucma.chans; ch; ch = ch->next)
		if (ch->fd == fd)
			return ch;
	return NULL;
}

/* A free slot of a table of pointers, grown when full: its index. */
static int slot(void ***table, uint32_t *n)
{
	uint32_t i, grow;
	void **t;

	for (i = 0; i < *n; i++)
		if (!(*table)[i])
			return (int)i;
	grow = *n ? *n * 2 : 16;
	if (grow > (1u << 20))
		return -1;	/* (librdmacm's index map ends at 2^24) */
	t = realloc(*table, grow * sizeof(*t));
	if (!t)
		return -1;
	memset(t + *n, 0, (grow - *n) * sizeof(*t));
	*table = t;
	i = *n;
	*n = grow;
	return (int)i;
}

struct ucma_id *ucma_id_new(struct ucma_chan *ch, uint64_t uid, uint16_t ps,
			    uint8_t qp_type)
{
	struct ucma_id *id = calloc(1, sizeof(*id));
	int s;

	if (!id)
		return NULL;
	s = slot((void ***)&ucma.ids, &ucma.nids);
	if (s < 0) {
		free(id);
		return NULL;
	}
	id->handle = (uint32_t)s;
	id->gen = ++ucma.gen;
	id->uid = uid;
	id->chan = ch;
	id->ps = ps;
	id->qp_type = qp_type;
	id->dev = -1;
	id->sock = -1;
	ucma.ids[s] = id;
	return id;
}

struct ucma_id *ucma_id_get(uint32_t handle)
{
	return handle < ucma.nids ? ucma.ids[handle] : NULL;
}

void ucma_id_free(struct ucma_id *id)
{
	ucma.ids[id->handle] = NULL;
	free(id);
}

struct ucma_mc *ucma_mc_new(struct ucma_id *id, uint64_t uid)
{
	struct ucma_mc *mc = calloc(1, sizeof(*mc));
	int s;

	if (!mc)
		return NULL;
	s = slot((void ***)&ucma.mcs, &ucma.nmcs);
	if (s < 0) {
		free(mc);
		return NULL;
	}
	mc->handle = (uint32_t)s;
	mc->uid = uid;
	mc->id = id;
	mc->next = id->mcs;
	id->mcs = mc;
	ucma.mcs[s] = mc;
	return mc;
}

struct ucma_mc *ucma_mc_get(uint32_t handle)
{
	return handle < ucma.nmcs ? ucma.mcs[handle] : NULL;
}

/* Unlinks mc from its id and drops its queued events. */
void ucma_mc_free(struct ucma_mc *mc)
{
	struct ucma_chan *ch = mc->id->chan;
	struct ucma_event **p = &ch->head, *ev;
	struct ucma_mc **q;
	char b;

	while ((ev = *p)) {
		if (ev->mc == mc) {
			*p = ev->next;
			free(ev);
			(void)!recv(ch->rfd, &b, 1, MSG_DONTWAIT);
		} else {
			p = &ev->next;
		}
	}
	ch->tail = p;
	for (q = &mc->id->mcs; *q; q = &(*q)->next)
		if (*q == mc) {
			*q = mc->next;
			break;
		}
	ucma.mcs[mc->handle] = NULL;
	free(mc);
}

struct ucma_event *ucma_event_new(struct ucma_id *id, uint32_t event,
				  int32_t status)
{
	struct ucma_event *ev = calloc(1, sizeof(*ev));

	if (!ev)
		return NULL;
	ev->resp.uid = id->uid;
	ev->resp.id = id->handle;
	ev->resp.event = event;
	ev->resp.status = (uint32_t)status;
	return ev;
}

/* Queues ev on the channel of `on`, which it will be counted on, and
 * makes the channel's fd readable. */
void ucma_event_queue(struct ucma_id *on, struct ucma_event *ev)
{
	struct ucma_chan *ch = on->chan;
	char b = 0;

	if (!ev)
		return;		/* (out of memory: the event is lost) */
	ev->id = on;
	ev->next = NULL;
	*ch->tail = ev;
	ch->tail = &ev->next;
	(void)!send(ch->wake, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* An event with no parameters, queued on id's own channel. */
void ucma_queue(struct ucma_id *id, uint32_t event, int32_t status)
{
	ucma_event_queue(id, ucma_event_new(id, event, status));
}

struct ucma_event *ucma_event_pop(struct ucma_chan *ch)
{
	struct ucma_event *ev = ch->head;

	if (!ev)
		return NULL;
	ch->head = ev->next;
	if (!ch->head)
		ch->tail = &ch->head;
	ev->id->events_reported++;
	if (ev->mc)
		ev->mc->events_reported++;
	if (ev->child)
		ev->child->listener = NULL;	/* the program's now */
	return ev;
}

/* Takes id's events off its channel (and their bytes off the fd). A
 * connect request not yet reported takes its new id with it. */
void ucma_events_purge(struct ucma_id *id)
{
	struct ucma_chan *ch = id->chan;
	struct ucma_event **p = &ch->head, *ev, *gone = NULL;
	char b;

	while ((ev = *p)) {
		if (ev->id == id) {
			*p = ev->next;
			ev->next = gone;
			gone = ev;
			(void)!recv(ch->rfd, &b, 1, MSG_DONTWAIT);
		} else {
			p = &ev->next;
		}
	}
	ch->tail = p;
	while ((ev = gone)) {
		gone = ev->next;
		if (ev->child) {
			ev->child->listener = NULL;
			ucma_id_teardown(ev->child);
		}
		free(ev);
	}
}

/* MIGRATE_ID: id's queued events go with it to channel `to`. */
void ucma_events_move(struct ucma_id *id, struct ucma_chan *to)
{
	struct ucma_chan *from = id->chan;
	struct ucma_event **p = &from->head, *ev;
	char b;

	while ((ev = *p)) {
		if (ev->id == id) {
			*p = ev->next;
			(void)!recv(from->fd, &b, 1, MSG_DONTWAIT);
			id->chan = to;
			ucma_event_queue(id, ev);
			id->chan = from;
		} else {
			p = &ev->next;
		}
	}
	from->tail = p;
}

/* What destroying an id does: the peer is told (a connection goes down
 * with DREQ, an unanswered request with REJ), the TCP socket closed, its
 * memberships and events dropped, the requests of a listener refused. */
void ucma_id_teardown(struct ucma_id *id)
{
	struct cm_msg m = {0};
	uint32_t i;

	switch (id->state) {
	case ST_ESTABLISHED:
	case ST_REP_SENT:
	case ST_REP_RCVD:
		m.type = CM_DREQ;
		cm_send(id, &m);
		break;
	case ST_REQ_RCVD:
		m.type = id->qp_type == IBV_QPT_UD ? CM_SIDR_REP : CM_REJ;
		m.status = 28;	/* IB CM: consumer defined */
		cm_send(id, &m);
		break;
	default:
		break;
	}
	if (id->state == ST_LISTEN)
		for (i = 0; i < ucma.nids; i++)
			if (ucma.ids[i] && ucma.ids[i]->listener == id &&
			    ucma.ids[i]->state == ST_REQ_HIDDEN)
				ucma_id_teardown(ucma.ids[i]);
	if (id->sock >= 0) {
		cm_unwatch(id);
		close(id->sock);
		id->sock = -1;
	}
	while (id->mcs)
		ucma_mc_free(id->mcs);
	ucma_events_purge(id);
	ucma_id_free(id);
}

void ucma_chan_destroy(struct ucma_chan *ch)
{
	struct ucma_chan **p;
	uint32_t i;

	for (i = 0; i < ucma.nids; i++)
		if (ucma.ids[i] && ucma.ids[i]->chan == ch &&
		    !ucma.ids[i]->listener)
			ucma_id_teardown(ucma.ids[i]);
	for (p = &ucma.chans; *p; p = &(*p)->next)
		if (*p == ch) {
			*p = ch->next;
			break;
		}
	/* (a GET_EVENT waiting on it wakes and waits on, forever) */
	close(ch->wake);
	ch->closed = 1;
	if (!ch->calls)
		ucma_chan_free(ch);
}

void ucma_chan_free(struct ucma_chan *ch)
{
	close(ch->rfd);
	free(ch);
}
