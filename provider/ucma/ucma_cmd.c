/* SPDX-License-Identifier: MIT */
/*
 * The commands of the rdma_cm interface (ucma ABI 4), one a write(), run
 * in the thread that wrote it: the dispatch, the id's life (create,
 * destroy, migrate, options) and GET_EVENT.  Addresses and routes are in
 * ucma_addr.c, connections in ucma_conn.c.
 *
 * Each command runs with ucma.lock held, but GET_EVENT, which first waits
 * for the channel's fd to hold an event.  The dispatch copies the command
 * (zero past what the caller sent: older librdmacm sends shorter CONNECT
 * and ACCEPT, without ECE), checks its length and finds the id it names on
 * this channel, so a handler starts from valid input.  Answers go where
 * the command points (`response`), in this same address space; a failed
 * command makes write() fail with errno set, as the kernel's does.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "ucma.h"

void ucma_answer(uint64_t response, uint32_t out, const void *resp,
		 size_t size)
{
	if (response && out)
		memcpy((void *)(uintptr_t)response, resp,
		       out < size ? out : size);
}

/* The id `handle` names, if this channel's (another channel's is not this
 * file's: EINVAL, as the kernel says), and the program's (not a request
 * still waiting to be reported). */
static struct ucma_id *id_of(struct ucma_chan *ch, uint32_t handle)
{
	struct ucma_id *id = ucma_id_get(handle);

	return id && id->chan == ch && !id->listener ? id : NULL;
}

static int create_id(struct ucma_chan *ch, struct ucma_id *none,
		     const void *c, uint32_t out)
{
	const struct rdma_ucm_create_id *cmd = c;
	struct rdma_ucm_create_id_resp resp = {0};
	struct ucma_id *id;

	(void)none;
	if (cmd->ps != RDMA_PS_TCP && cmd->ps != RDMA_PS_UDP &&
	    cmd->ps != RDMA_PS_IPOIB && cmd->ps != RDMA_PS_IB)
		return EINVAL;
	if (cmd->qp_type != IBV_QPT_RC && cmd->qp_type != IBV_QPT_UC &&
	    cmd->qp_type != IBV_QPT_UD)
		return EINVAL;
	id = ucma_id_new(ch, cmd->uid, cmd->ps, cmd->qp_type);
	if (!id)
		return ENOMEM;
	resp.id = id->handle;
	ucma_answer(cmd->response, out, &resp, sizeof(resp));
	return 0;
}

static int destroy_id(struct ucma_chan *ch, struct ucma_id *id, const void *c,
		      uint32_t out)
{
	const struct rdma_ucm_destroy_id *cmd = c;
	struct rdma_ucm_destroy_id_resp resp = {0};

	(void)ch;
	resp.events_reported = id->events_reported;
	ucma_id_teardown(id);
	ucma_answer(cmd->response, out, &resp, sizeof(resp));
	return 0;
}

/* MIGRATE_ID comes on the channel the id moves to; it names the other. */
static int migrate_id(struct ucma_chan *ch, struct ucma_id *none,
		      const void *c, uint32_t out)
{
	const struct rdma_ucm_migrate_id *cmd = c;
	struct rdma_ucm_migrate_resp resp = {0};
	struct ucma_chan *from = ucma_chan_by_fd((int)cmd->fd);
	struct ucma_id *id = from ? id_of(from, cmd->id) : NULL;

	(void)none;
	if (!id)
		return EINVAL;
	ucma_events_move(id, ch);	/* (its groups' events too) */
	id->chan = ch;
	resp.events_reported = id->events_reported;
	ucma_answer(cmd->response, out, &resp, sizeof(resp));
	return 0;
}

static int set_option(struct ucma_chan *ch, struct ucma_id *id, const void *c,
		      uint32_t out)
{
	const struct rdma_ucm_set_option *cmd = c;
	const void *v = (const void *)(uintptr_t)cmd->optval;
	int iv = 0;

	(void)ch;
	(void)out;
	if (cmd->level != RDMA_OPTION_ID)
		return ENOSYS;	/* IB paths: the route is resolved instead */
	if (!v || !cmd->optlen)
		return EINVAL;
	switch (cmd->optname) {
	case RDMA_OPTION_ID_TOS:
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (cmd->optlen != 1)
			return EINVAL;
		if (cmd->optname == RDMA_OPTION_ID_TOS)
			id->tos = *(const uint8_t *)v;
		else
			id->ack_timeout = *(const uint8_t *)v & 31;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
	case RDMA_OPTION_ID_AFONLY:
		if (cmd->optlen != sizeof(int))
			return EINVAL;
		memcpy(&iv, v, sizeof(iv));
		if (cmd->optname == RDMA_OPTION_ID_AFONLY)
			id->afonly = iv != 0;
		return 0;	/* (every port is bound SO_REUSEADDR) */
	default:
		return ENOSYS;
	}
}

static int notify(struct ucma_chan *ch, struct ucma_id *id, const void *c,
		  uint32_t out)
{
	(void)ch;
	(void)id;
	(void)c;
	(void)out;
	return 0;	/* (a QP's events change nothing here) */
}

/* GET_EVENT: one byte off the channel's fd (waiting as the fd's file
 * flags say), then the event it stands for. */
static int get_event(struct ucma_chan *ch, const void *c, uint32_t out)
{
	const struct rdma_ucm_get_event *cmd = c;
	struct ucma_event *ev;
	char b;
	ssize_t n;

	if (out < offsetof(struct rdma_ucm_event_resp, reserved))
		return ENOSPC;
	for (;;) {
		n = recv(ch->rfd, &b, 1, 0);
		if (n < 0)
			return errno;	/* EAGAIN when O_NONBLOCK */
		if (n == 0) {
			/* The channel was closed under this wait.  The
			 * kernel's would hold its file and wait on, forever:
			 * so does this (the channel stays, for this call). */
			for (;;)
				pause();
		}
		pthread_mutex_lock(&ucma.lock);
		ev = ucma_event_pop(ch);
		pthread_mutex_unlock(&ucma.lock);
		if (ev)
			break;
		/* (its event went with a destroyed id) */
	}
	ucma_answer(cmd->response, out, &ev->resp, sizeof(ev->resp));
	free(ev);
	return 0;
}

struct command {
	ucma_cmd_fn fn;
	uint16_t min;	/* the bytes it must have */
	int16_t id_at;	/* where its id is, or -1: it names none */
};

#define CMD(op, f, type, id_field)                                         \
	[RDMA_USER_CM_CMD_##op] = {f, sizeof(type), offsetof(type, id_field)}
#define CMD_NO_ID(op, f, type) [RDMA_USER_CM_CMD_##op] = {f, sizeof(type), -1}
/* (CONNECT and ACCEPT: without ECE, as older librdmacm sends them) */
#define CMD_SHORT(op, f, type, id_field)                                   \
	[RDMA_USER_CM_CMD_##op] = {f, offsetof(type, reserved),              \
				   offsetof(type, id_field)}

static const struct command commands[] = {
	CMD_NO_ID(CREATE_ID, create_id, struct rdma_ucm_create_id),
	CMD(DESTROY_ID, destroy_id, struct rdma_ucm_destroy_id, id),
	CMD(BIND_IP, ucma_bind_ip, struct rdma_ucm_bind_ip, id),
	CMD(RESOLVE_IP, ucma_resolve_ip, struct rdma_ucm_resolve_ip, id),
	CMD(RESOLVE_ROUTE, ucma_resolve_route, struct rdma_ucm_resolve_route,
	    id),
	CMD(QUERY_ROUTE, ucma_query_route, struct rdma_ucm_query, id),
	CMD_SHORT(CONNECT, ucma_connect, struct rdma_ucm_connect, id),
	CMD(LISTEN, ucma_listen, struct rdma_ucm_listen, id),
	CMD_SHORT(ACCEPT, ucma_accept, struct rdma_ucm_accept, id),
	CMD(REJECT, ucma_reject, struct rdma_ucm_reject, id),
	CMD(DISCONNECT, ucma_disconnect, struct rdma_ucm_disconnect, id),
	CMD(INIT_QP_ATTR, ucma_init_qp_attr, struct rdma_ucm_init_qp_attr, id),
	CMD(SET_OPTION, set_option, struct rdma_ucm_set_option, id),
	CMD(NOTIFY, notify, struct rdma_ucm_notify, id),
	CMD(JOIN_IP_MCAST, ucma_join_ip_mcast, struct rdma_ucm_join_ip_mcast,
	    id),
	CMD_NO_ID(LEAVE_MCAST, ucma_leave_mcast, struct rdma_ucm_destroy_id),
	CMD_NO_ID(MIGRATE_ID, migrate_id, struct rdma_ucm_migrate_id),
	CMD(QUERY, ucma_query, struct rdma_ucm_query, id),
	CMD(BIND, ucma_bind, struct rdma_ucm_bind, id),
	CMD(RESOLVE_ADDR, ucma_resolve_addr, struct rdma_ucm_resolve_addr, id),
	CMD(JOIN_MCAST, ucma_join_mcast, struct rdma_ucm_join_mcast, id),
};

static int run(struct ucma_chan *ch, uint32_t op, const void *in,
	       uint32_t len, uint32_t out)
{
	union {
		uint8_t raw[512];	/* more than the longest command */
		uint64_t align;
	} cmd;
	const struct command *c;
	struct ucma_id *id = NULL;
	uint32_t handle;
	int rc;

	memset(&cmd, 0, sizeof(cmd));
	memcpy(&cmd, in, len < sizeof(cmd) ? len : sizeof(cmd));
	if (op == RDMA_USER_CM_CMD_GET_EVENT)
		return len < sizeof(struct rdma_ucm_get_event)
			       ? EINVAL
			       : get_event(ch, &cmd, out);
	if (op >= sizeof(commands) / sizeof(commands[0]) ||
	    !commands[op].fn)
		return ENOSYS;
	c = &commands[op];
	if (len < c->min)
		return EINVAL;
	pthread_mutex_lock(&ucma.lock);
	if (c->id_at >= 0) {
		memcpy(&handle, cmd.raw + c->id_at, sizeof(handle));
		id = id_of(ch, handle);
	}
	rc = c->id_at >= 0 && !id ? EINVAL : c->fn(ch, id, &cmd, out);
	pthread_mutex_unlock(&ucma.lock);
	return rc;
}

ssize_t ucma_command(struct ucma_chan *ch, const void *buf, size_t len)
{
	struct rdma_ucm_cmd_hdr hdr;
	int rc;

	if (len < sizeof(hdr)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.in + sizeof(hdr) != len) {
		errno = EINVAL;
		return -1;
	}
	rc = run(ch, hdr.cmd, (const char *)buf + sizeof(hdr), hdr.in, hdr.out);
	if (rc) {
		errno = rc;
		return -1;
	}
	return (ssize_t)len;
}
