/* SPDX-License-Identifier: MIT */
/*
 * rdma_cm commands about connections (run in the caller's thread,
 * ucma.lock held; ucma_cmd.c dispatches them): connect, listen, accept,
 * reject, disconnect, and the QP attributes each state of a connection
 * needs (INIT_QP_ATTR).  What they send, and what answers, is the CM
 * thread's (cm_thread.c).
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "cm_msg.h"
#include "ucma.h"

#define REJ_CONSUMER 28	/* IB CM's reject reason: the application's */

static bool ud_id(const struct ucma_id *id)
{
	return id->qp_type == IBV_QPT_UD;
}

uint32_t ucma_new_psn(void)
{
	uint32_t v = 0;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
		v = (uint32_t)rand();
	return v & 0xffffff;
}

int ucma_connect(struct ucma_chan *ch, struct ucma_id *id, const void *c,
		 uint32_t out)
{
	const struct rdma_ucm_conn_param *p =
		&((const struct rdma_ucm_connect *)c)->conn_param;
	struct cm_msg m = {0};

	(void)ch;
	(void)out;
	if (id->state != ST_ROUTE)
		return EINVAL;
	m.type = ud_id(id) ? CM_SIDR_REQ : CM_REQ;
	m.pd_len = (uint8_t)ucma_pd_header(id, m.type, m.pd);
	if (p->private_data_len > cm_max_pd(m.type) - m.pd_len)
		return EINVAL;
	id->qpn = p->qp_num;
	id->psn = ucma_new_psn();
	id->srq = p->srq;
	id->resp_res = p->responder_resources;
	id->init_depth = p->initiator_depth;
	id->retry = p->retry_count & 7;
	id->flow_control = p->flow_control;
	m.qp_type = id->qp_type;
	m.qpn = id->qpn;
	m.psn = id->psn;
	m.qkey = p->qkey ? p->qkey : RDMA_UDP_QKEY;
	m.resp_res = id->resp_res;
	m.init_depth = id->init_depth;
	m.retry = id->retry;
	m.rnr_retry = p->rnr_retry_count & 7;
	m.srq = id->srq;
	m.flow_control = id->flow_control;
	memcpy(m.pd + m.pd_len, p->private_data, p->private_data_len);
	m.pd_len += p->private_data_len;
	id->state = ST_CONNECTING;
	id->tcp_up = false;
	if (cm_send(id, &m))
		return ENOMEM;
	cm_connect(id);	/* (a failure is told as an event) */
	return 0;
}

int ucma_listen(struct ucma_chan *ch, struct ucma_id *id, const void *c,
		uint32_t out)
{
	const struct rdma_ucm_listen *cmd = c;
	struct sockaddr_in any = {.sin_family = AF_INET};
	int rc;

	(void)ch;
	(void)out;
	if (id->state == ST_IDLE) {
		rc = ucma_bind_to(id, (struct sockaddr *)&any);
		if (rc)
			return rc;
	}
	if (id->state != ST_BOUND)
		return EINVAL;
	if (listen(id->sock, cmd->backlog > 0 ? (int)cmd->backlog : 128))
		return errno;
	id->state = ST_LISTEN;
	id->tcp_up = true;
	return cm_watch(id, EPOLLIN) ? EIO : 0;
}

int ucma_accept(struct ucma_chan *ch, struct ucma_id *id, const void *c,
		uint32_t out)
{
	const struct rdma_ucm_accept *cmd = c;
	const struct rdma_ucm_conn_param *p = &cmd->conn_param;
	struct cm_msg m = {0};

	(void)ch;
	(void)out;
	if (id->state == ST_REP_RCVD) {
		/* the active side, connected: RTU */
		m.type = CM_RTU;
		cm_send(id, &m);
		id->state = ST_ESTABLISHED;
		return 0;
	}
	if (id->state != ST_REQ_RCVD)
		return EINVAL;
	m.type = ud_id(id) ? CM_SIDR_REP : CM_REP;
	if (p->valid && p->private_data_len > cm_max_pd(m.type))
		return EINVAL;
	if (cmd->uid)
		id->uid = cmd->uid;
	if (p->valid) {
		id->qpn = p->qp_num;
		id->srq = p->srq;
		id->resp_res = p->responder_resources;
		id->init_depth = p->initiator_depth;
		id->flow_control = p->flow_control;
		m.rnr_retry = p->rnr_retry_count & 7;
		m.pd_len = p->private_data_len;
		memcpy(m.pd, p->private_data, m.pd_len);
	}
	id->qkey = p->qkey ? p->qkey : RDMA_UDP_QKEY;
	m.qpn = id->qpn;
	m.psn = id->psn;	/* (chosen with the request: cm_thread.c) */
	m.qkey = id->qkey;
	m.resp_res = id->resp_res;
	m.init_depth = id->init_depth;
	m.srq = id->srq;
	m.flow_control = id->flow_control;
	if (id->peer_gone) {
		id->state = ST_DEAD;
		ucma_queue(id, RDMA_CM_EVENT_CONNECT_ERROR, -ECONNRESET);
		return 0;
	}
	if (ud_id(id)) {
		id->close_after_tx = true;	/* SIDR: nothing follows */
		id->state = ST_ESTABLISHED;
	} else {
		id->state = ST_REP_SENT;
	}
	cm_send(id, &m);
	return 0;
}

int ucma_reject(struct ucma_chan *ch, struct ucma_id *id, const void *c,
		uint32_t out)
{
	const struct rdma_ucm_reject *cmd = c;
	struct cm_msg m = {0};

	(void)ch;
	(void)out;
	if (id->state != ST_REQ_RCVD && id->state != ST_REP_RCVD)
		return EINVAL;
	m.type = ud_id(id) ? CM_SIDR_REP : CM_REJ;
	if (cmd->private_data_len > cm_max_pd(m.type))
		return EINVAL;
	m.status = ud_id(id) ? 1 : cmd->reason ? cmd->reason : REJ_CONSUMER;
	m.pd_len = cmd->private_data_len;
	memcpy(m.pd, cmd->private_data, m.pd_len);
	id->state = ST_DEAD;
	id->close_after_tx = true;
	if (id->sock >= 0)
		cm_send(id, &m);
	return 0;
}

int ucma_disconnect(struct ucma_chan *ch, struct ucma_id *id, const void *c,
		    uint32_t out)
{
	struct cm_msg m = {.type = CM_DREQ};

	(void)ch;
	(void)c;
	(void)out;
	switch (id->state) {
	case ST_ESTABLISHED:
	case ST_REP_SENT:
	case ST_REP_RCVD:
		if (ud_id(id))
			return EINVAL;
		id->state = ST_DREQ_SENT;
		if (id->sock >= 0)
			cm_send(id, &m);
		return 0;
	case ST_DREQ_SENT:
	case ST_DISCONNECTED:
		return 0;	/* (the peer's DREQ came first) */
	default:
		return EINVAL;
	}
}

/* The QP attributes for the next state, as IB CM computes them. */
static int qp_attr(const struct ucma_id *id, uint32_t state,
		   struct ib_uverbs_qp_attr *a)
{
	bool connected = id->peer_known;
	uint32_t mask = IBV_QP_STATE;

	memset(a, 0, sizeof(*a));
	if (id->dev < 0)
		return EINVAL;
	a->qp_state = state;
	switch (state) {
	case IBV_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = 1;
		mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (ud_id(id)) {
			a->qkey = RDMA_UDP_QKEY;
			mask |= IBV_QP_QKEY;
			break;
		}
		/* (no remote right until the connection says which) */
		mask |= IBV_QP_ACCESS_FLAGS;
		if (connected || id->state == ST_CONNECTING)
			a->qp_access_flags =
				IBV_ACCESS_REMOTE_WRITE |
				(id->resp_res && id->qp_type == IBV_QPT_RC
					 ? IBV_ACCESS_REMOTE_READ |
						   IBV_ACCESS_REMOTE_ATOMIC
					 : 0);
		break;
	case IBV_QPS_RTR:
		if (ud_id(id))
			break;
		if (!connected)
			return EINVAL;	/* the peer's QP is not known yet */
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
		cm_peer_ah(id, &a->ah_attr);
		a->path_mtu = ucma.devs[id->dev].active_mtu;
		a->dest_qp_num = id->rqpn;
		a->rq_psn = id->rpsn;
		if (id->qp_type == IBV_QPT_RC) {
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER;
			a->max_dest_rd_atomic = id->resp_res;
			a->min_rnr_timer = 12;	/* 0.64 ms */
		}
		break;
	case IBV_QPS_RTS:
		mask |= IBV_QP_SQ_PSN;
		a->sq_psn = ud_id(id) ? 0 : id->psn;
		if (id->qp_type == IBV_QPT_RC) {
			if (!connected)
				return EINVAL;
			mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
			a->timeout = id->ack_timeout ? id->ack_timeout : 14;
			a->retry_cnt = id->retry;
			a->rnr_retry = id->rnr_retry;
			a->max_rd_atomic = id->init_depth;
		}
		break;
	default:
		return EINVAL;
	}
	a->qp_attr_mask = mask;
	return 0;
}

int ucma_init_qp_attr(struct ucma_chan *ch, struct ucma_id *id,
		      const void *c, uint32_t out)
{
	const struct rdma_ucm_init_qp_attr *cmd = c;
	struct ib_uverbs_qp_attr resp;
	int rc;

	(void)ch;
	rc = qp_attr(id, cmd->qp_state, &resp);
	if (rc)
		return rc;
	ucma_answer(cmd->response, out, &resp, sizeof(resp));
	return 0;
}
