/* SPDX-License-Identifier: MIT */
/*
 * Frames in mbufs: a packet encoded into a buffer of the node's pool, or
 * its header there with the payload left in registered memory (zero
 * copy); and making a chained frame linear, or copying out of it.
 */
#include <string.h>

#include "srnic_port.h"

struct rte_mbuf *srnic_pkt_alloc(struct srnic_engine *eng,
				 const struct srnic_pkt *pkt,
				 const uint8_t dst_mac[6], unsigned p,
				 uint8_t **payload)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(eng->node->pool);
	unsigned hlen, len;
	uint8_t *buf;

	if (!m) {
		eng->st->drops[SRNIC_DROP_NO_MBUF]++;
		return NULL;
	}
	hlen = srnic_wire_pkt_hlen(pkt);
	len = hlen + (srnic_op_carries_payload(pkt->opcode) ? pkt->pkt_len
							    : 0);
	/* A control frame's MAC (control.c asks for it), right after the
	 * headers. */
	if (pkt->flags & SRNIC_F_AUTH)
		len += SRNIC_AUTH_LEN;
	/* Room for the CRC, which srnic_port_tx writes once the caller has
	 * put the payload in. */
	if (eng->node->port[p].crc)
		len += SRNIC_CRC_LEN;
	/* Ethernet's minimum frame; the receiver reads lengths, not size
	 * (and every srnic header is longer anyway). */
	if (len < 60)
		len = 60;
	buf = (uint8_t *)rte_pktmbuf_append(m, len);
	if (!buf) {
		rte_pktmbuf_free(m);
		eng->st->drops[SRNIC_DROP_NO_MBUF]++;
		return NULL;
	}
	if (len > hlen + pkt->pkt_len)	/* padding only, never payload */
		memset(buf + hlen + pkt->pkt_len, 0, len - hlen - pkt->pkt_len);
	srnic_wire_encode(buf, dst_mac, eng->node->port[p].mac, pkt);
	/* The header is final before anything is computed over it. */
	if (eng->node->port[p].crc)
		srnic_wire_add_flags(buf, SRNIC_F_CRC);
	if (pkt->flags & SRNIC_F_AUTH)
		srnic_wire_sign(buf, eng->cfg.cluster_key, eng->cfg.encap_udp);
	if (payload)
		*payload = buf + hlen;
	m->port = p;
	return m;
}

bool srnic_qp_send_header(struct srnic_engine *eng, struct srnic_qp *qp,
			  const struct srnic_pkt *pkt)
{
	int port = qp->peer ? srnic_qp_pick_port(eng, qp) : -1;
	struct rte_mbuf *m;

	if (port < 0)
		return false;
	m = srnic_pkt_alloc(eng, pkt, qp->peer->mac[port], (unsigned)port,
			    NULL);
	if (!m)
		return false;
	srnic_port_tx(eng, (unsigned)port, m);
	return true;
}

static void keep_registered(void *addr, void *opaque)
{
	(void)addr;
	(void)opaque;
}

/* Every frame with payload in registered memory shares this: its count
 * starts at 1 and each frame adds one while it lives, so it never falls to
 * 0 and nothing is freed through it (the memory is the program's). */
_Static_assert(SRNIC_POOL_SIZE / 2 + 1 < UINT16_MAX,
	       "the shared count must not wrap: two mbufs a live frame");
static struct rte_mbuf_ext_shared_info registered_memory = {
	.free_cb = keep_registered,
	.refcnt = 1,
};

struct rte_mbuf *srnic_pkt_alloc_ext(struct srnic_engine *eng,
				     const struct srnic_pkt *pkt,
				     const uint8_t dst_mac[6], unsigned p,
				     const uint8_t *payload)
{
	struct rte_mbuf *m, *d;
	uint8_t *hdr;

	m = rte_pktmbuf_alloc(eng->node->zc_pool);
	d = m ? rte_pktmbuf_alloc(eng->node->zc_pool) : NULL;
	hdr = d ? (uint8_t *)rte_pktmbuf_append(
			  m, srnic_wire_pkt_hlen(pkt))
		: NULL;
	if (!hdr) {
		rte_pktmbuf_free(m);
		rte_pktmbuf_free(d);
		eng->st->drops[SRNIC_DROP_NO_MBUF]++;
		return NULL;
	}
	/* The header in a buffer of ours (its lengths count the payload),
	 * the payload attached behind it where it is. */
	srnic_wire_encode(hdr, dst_mac, eng->node->port[p].mac, pkt);
	rte_mbuf_ext_refcnt_update(&registered_memory, 1);
	rte_pktmbuf_attach_extbuf(d, (void *)(uintptr_t)payload, RTE_BAD_IOVA,
				  pkt->pkt_len, &registered_memory);
	d->data_len = pkt->pkt_len;
	d->pkt_len = pkt->pkt_len;
	rte_pktmbuf_chain(m, d);
	m->port = p;
	eng->st->tx_zero_copy++;
	return m;
}

struct rte_mbuf *srnic_mbuf_linear(struct srnic_engine *eng,
				   struct rte_mbuf *m)
{
	struct rte_mbuf *n;
	uint32_t len = rte_pktmbuf_pkt_len(m);
	char *dst;

	if (m->nb_segs == 1)
		return m;
	n = rte_pktmbuf_alloc(eng->node->pool);
	dst = n ? rte_pktmbuf_append(n, len) : NULL;
	if (!dst) {
		rte_pktmbuf_free(n);
		rte_pktmbuf_free(m);
		eng->st->drops[SRNIC_DROP_NO_MBUF]++;
		return NULL;
	}
	srnic_mbuf_copy_out(m, 0, dst, len);
	n->port = m->port;
	n->hash.usr = m->hash.usr;	/* (a UDP frame's path and number) */
	rte_pktmbuf_free(m);
	return n;
}

void srnic_mbuf_copy_out(const struct rte_mbuf *m, uint32_t off, void *dst,
			 uint32_t len)
{
	uint8_t *d = dst;

	while (m && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	while (m && len) {
		uint32_t n = m->data_len - off;

		if (n > len)
			n = len;
		memcpy(d, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), n);
		d += n;
		len -= n;
		off = 0;
		m = m->next;
	}
}
