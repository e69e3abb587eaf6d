/* SPDX-License-Identifier: MIT */
/*
 * Encoding and decoding of the connection exchange (cm_msg.h).  Big-endian
 * fields at fixed offsets:
 *
 *   0 magic "SRCM"   4 version   5 type   6 body length (16 bits)
 *   8 qpn   12 psn   16 qkey
 *  20 qp_type  21 resp_res  22 init_depth  23 retry  24 rnr_retry
 *  25 srq  26 flow_control  27 status  28 pd_len  29..31 zero
 *  32 private data (pd_len bytes)
 */
#include <string.h>

#include "cm_msg.h"

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

unsigned cm_msg_encode(const struct cm_msg *m, uint8_t *buf)
{
	unsigned body = CM_FIXED_LEN + m->pd_len;

	if (m->type < CM_REQ || m->type >= CM_TYPE_MAX ||
	    m->pd_len > cm_max_pd(m->type))
		return 0;
	memset(buf, 0, CM_HDR_LEN + CM_FIXED_LEN);
	put32(buf, CM_MAGIC);
	buf[4] = CM_VERSION;
	buf[5] = m->type;
	buf[6] = body >> 8;
	buf[7] = body;
	put32(buf + 8, m->qpn);
	put32(buf + 12, m->psn);
	put32(buf + 16, m->qkey);
	buf[20] = m->qp_type;
	buf[21] = m->resp_res;
	buf[22] = m->init_depth;
	buf[23] = m->retry;
	buf[24] = m->rnr_retry;
	buf[25] = m->srq;
	buf[26] = m->flow_control;
	buf[27] = m->status;
	buf[28] = m->pd_len;
	memcpy(buf + CM_HDR_LEN + CM_FIXED_LEN, m->pd, m->pd_len);
	return CM_HDR_LEN + body;
}

int cm_msg_decode(const uint8_t *buf, unsigned len, struct cm_msg *m)
{
	unsigned body;

	if (len < CM_HDR_LEN)
		return 0;
	if (get32(buf) != CM_MAGIC || buf[4] != CM_VERSION ||
	    buf[5] < CM_REQ || buf[5] >= CM_TYPE_MAX)
		return -1;
	body = (unsigned)buf[6] << 8 | buf[7];
	if (body < CM_FIXED_LEN || body > CM_FIXED_LEN + CM_MAX_PD)
		return -1;
	if (len < CM_HDR_LEN + body)
		return 0;
	memset(m, 0, sizeof(*m));
	m->type = buf[5];
	m->qpn = get32(buf + 8) & 0xffffff;
	m->psn = get32(buf + 12) & 0xffffff;
	m->qkey = get32(buf + 16);
	m->qp_type = buf[20];
	m->resp_res = buf[21];
	m->init_depth = buf[22];
	m->retry = buf[23] & 7;
	m->rnr_retry = buf[24] & 7;
	m->srq = !!buf[25];
	m->flow_control = !!buf[26];
	m->status = buf[27];
	m->pd_len = buf[28];
	if (m->pd_len != body - CM_FIXED_LEN ||
	    m->pd_len > cm_max_pd(m->type))
		return -1;
	memcpy(m->pd, buf + CM_HDR_LEN + CM_FIXED_LEN, m->pd_len);
	return (int)(CM_HDR_LEN + body);
}
