/* SPDX-License-Identifier: MIT */
/*
 * Port I/O: receive bursts, and per-port transmit buffers flushed once per
 * datapath iteration under the port token.  A frame that a port cannot
 * take yet stays in its buffer (back-pressure), so the wire never sees a
 * drop the engine caused itself.
 */
#include <string.h>

#include <rte_ethdev.h>

#include "srnic_port.h"
#include "srnic_port_guard.h"
#include "port_internal.h"

/* Longest sleep for the port token with frames to send: a holder that
 * is descheduled keeps it for a time slice; the next iteration tries
 * again (and reads its own ring meanwhile). */
#define TOKEN_WAIT_US 500

uint16_t srnic_port_rx(struct srnic_engine *eng, unsigned p,
		       struct rte_mbuf **pkts, uint16_t n)
{
	struct srnic_port *port = &eng->node->port[p];
	uint16_t got, i;

	if (!srnic_port_io_enter())
		return 0;	/* a link's memory is going: next time */
	/* (a steered port: class 0's queues, from every sending class) */
	got = srnic_port_steers(port) ? srnic_steer_rx(eng, p, 0, pkts, n)
				      : rte_eth_rx_burst(port->port_id, 0,
							 pkts, n);
	srnic_port_io_leave();
	if (eng->cfg.encap_udp && got)
		eng->rx_ts16 = srnic_ts16(eng, srnic_now());
	if (srnic_tap_on(&eng->node->tap, p) && got)
		srnic_tap_rx(eng->node, p, pkts, got);
	for (i = 0; i < got; i++) {
		pkts[i]->port = p;	/* our index, not DPDK's id */
		port->st.rx_bytes += rte_pktmbuf_pkt_len(pkts[i]);
	}
	port->st.rx_pkts += got;
	/* (counted and captured as the wire carried them; the rest of the
	 * node sees raw frames) */
	if (eng->cfg.encap_udp)
		got = srnic_port_udp_strip(eng, pkts, got, true);
	/* The testbed's delay, reordering and corruption (fault.c): one
	 * branch when the port has no fault and holds nothing. */
	if (unlikely(srnic_fault_on(port, 0)))
		return srnic_fault_rx(eng, p, 0, pkts, got, n);
	return got;
}

/* The frame is finished: on a port that carries the CRC, seal it (in the
 * room srnic_pkt_alloc left at its end).  Sealing again gives the same
 * trailer. */
static inline void seal(const struct srnic_engine *eng,
			const struct srnic_port *port, struct rte_mbuf *m)
{
	if (port->crc) {
		RTE_ASSERT(m->nb_segs == 1);
		srnic_wire_seal(rte_pktmbuf_mtod(m, uint8_t *),
				rte_pktmbuf_data_len(m), eng->cfg.encap_udp);
	}
}

void srnic_port_seal(struct srnic_engine *eng, unsigned p, struct rte_mbuf *m)
{
	seal(eng, &eng->node->port[p], m);
}

/* Sealed, and wrapped for a port of a UDP node (udp.c; not for the
 * loopback, which carries raw frames).  False when it could not be: the
 * frame is freed and counted. */
static inline bool seal_wrap(struct srnic_engine *eng, unsigned p,
			     struct rte_mbuf *m)
{
	bool wrap = eng->cfg.encap_udp && p < eng->node->nports;

	/* (a frame that went through here already, if one ever comes
	 * again: wrapped, its raw flags are no longer where seal looks) */
	if (wrap && srnic_get16(rte_pktmbuf_mtod(m, uint8_t *) + 12) !=
			    SRNIC_ETHERTYPE)
		return true;
	seal(eng, &eng->node->port[p], m);
	if (!wrap || srnic_port_udp_wrap(eng, p, m))
		return true;
	rte_pktmbuf_free(m);	/* (counted there) */
	return false;
}

void srnic_port_tx(struct srnic_engine *eng, unsigned p, struct rte_mbuf *m)
{
	struct srnic_txbuf *tb = &eng->txbuf[p];

	if (!seal_wrap(eng, p, m))
		return;
	if (tb->n == SRNIC_TXBUF) {
		/* Callers check srnic_port_backlogged() before making
		 * packets; this is the last line of defence. */
		rte_pktmbuf_free(m);
		eng->st->drops[SRNIC_DROP_NO_MBUF]++;
		return;
	}
	tb->m[tb->n++] = m;
}

/*
 * The control core's frames (HELLOs, integration) go with whichever of
 * the node's datapaths holds the port token, not only with srnicd's own:
 * with busy processes on few cores srnicd's is one of many taking turns
 * with the token, and a peer that hears no HELLO for PEER_DEAD_MS takes
 * the node for dead on every port.  Datapath, the port token held (the
 * ring has one consumer at a time: the token's holder).
 */
void srnic_ports_take_control(struct srnic_engine *eng)
{
	struct rte_mbuf *m[SRNIC_BURST];
	unsigned i, n;

	n = rte_ring_sc_dequeue_burst(eng->node->ctrl_tx, (void **)m,
				      SRNIC_BURST, NULL);
	eng->ctrl_frames += n;
	for (i = 0; i < n; i++)
		if (m[i]->port < eng->node->nports) {
			struct srnic_txbuf *tb = &eng->txbuf[m[i]->port];
			uint16_t before = tb->n;

			srnic_port_tx(eng, m[i]->port, m[i]);
			tb->nctrl += tb->n > before;	/* (unless dropped) */
		} else {
			rte_pktmbuf_free(m[i]);
		}
}

/*
 * srnicd's control core, at the end of its tick: its frames out now if
 * the port token is free, so that an idle node's datapath need not wake
 * to send them.  Memif ports only (a tap's transmit goes through
 * tap.c's bookkeeping in flush_held); whatever stays on ctrl_tx goes with
 * the next flush.  Whether ctrl_tx is empty now.
 */
bool srnic_ports_send_control(struct srnic_engine *eng)
{
	struct rte_mbuf *m[SRNIC_BURST];
	unsigned i, n;

	if (rte_ring_empty(eng->node->ctrl_tx))
		return true;
	/* (an embedded node's ports are guarded by its datapath's token,
	 * which this thread cannot take; a port being captured goes
	 * through flush_held, which copies to the capture) */
	if (!eng->node->shared || eng->wires_unbelled)
		return false;
	for (i = 0; i < eng->node->nports; i++)
		if (srnic_tap_on(&eng->node->tap, i))
			return false;
	if (!srnic_ports_take(eng))
		return false;
	n = rte_ring_sc_dequeue_burst(eng->node->ctrl_tx, (void **)m,
				      SRNIC_BURST, NULL);
	for (i = 0; i < n; i++) {
		struct srnic_port *port;
		uint32_t len;

		if (m[i]->port >= eng->node->nports ||
		    !__atomic_load_n(&eng->node->port[m[i]->port].polling,
				     __ATOMIC_ACQUIRE) ||
		    !srnic_port_io_enter()) {
			rte_pktmbuf_free(m[i]);
			continue;
		}
		port = &eng->node->port[m[i]->port];
		if (!seal_wrap(eng, m[i]->port, m[i])) {
			srnic_port_io_leave();
			continue;
		}
		if (eng->cfg.encap_udp)
			srnic_port_udp_number(eng, m[i]->port, &m[i], 1);
		len = rte_pktmbuf_pkt_len(m[i]);
		if (rte_eth_tx_burst(port->port_id, 0, &m[i], 1) == 1) {
			port->st.tx_pkts++;
			port->st.tx_bytes += len;
		} else {
			rte_pktmbuf_free(m[i]);
		}
		srnic_port_io_leave();
	}
	srnic_ports_give(eng);
	return rte_ring_empty(eng->node->ctrl_tx);
}

/* A frame out at once, past the transmit buffer (leaving a link, when
 * nothing else will flush it).  Returns whether the port took it; the
 * frame is gone either way. */
bool srnic_port_tx_now(struct srnic_engine *eng, unsigned p,
		       struct rte_mbuf *m)
{
	bool sent;

	if (!seal_wrap(eng, p, m))
		return false;
	if (eng->cfg.encap_udp && p < eng->node->nports)
		srnic_port_udp_number(eng, p, &m, 1);
	if (!srnic_port_io_enter()) {
		rte_pktmbuf_free(m);
		return false;
	}
	sent = rte_eth_tx_burst(eng->node->port[p].port_id, 0, &m, 1) == 1;
	srnic_port_io_leave();
	if (sent && eng->wire_peer[p])
		ring_wire(eng->wire_peer[p]);
	if (!sent)
		rte_pktmbuf_free(m);
	return sent;
}

/* What port p's transmit buffer holds will not go: free it.  (The
 * requester's timers send what it needs again, on another port.) */
void srnic_port_tx_discard(struct srnic_engine *eng, unsigned p)
{
	struct srnic_txbuf *tb = &eng->txbuf[p];

	rte_pktmbuf_free_bulk(tb->m, tb->n);
	tb->n = 0;
	tb->nctrl = 0;
}

bool srnic_port_backlogged(const struct srnic_engine *eng, unsigned p)
{
	return eng->txbuf[p].n > SRNIC_TXBUF - SRNIC_BURST;
}

/* The lengths of tb's frames, read before a burst: a frame the port took
 * is the port's (memif frees it as it copies it), and by the time the
 * burst returns its buffer may be another process's. */
static inline void tx_lens(const struct srnic_txbuf *tb, uint32_t *len)
{
	uint16_t k;

	for (k = 0; k < tb->n; k++)
		len[k] = rte_pktmbuf_pkt_len(tb->m[k]);
}

/* The first sent frames of port's buffer tb (of lengths len) are gone:
 * count them, keep the rest for the next flush. */
static uint16_t tx_taken(struct srnic_port *port, struct srnic_txbuf *tb,
			 uint16_t sent, const uint32_t *len)
{
	uint16_t k;

	for (k = 0; k < sent; k++)
		port->st.tx_bytes += len[k];
	port->st.tx_pkts += sent;
	port->st.tx_full += sent < tb->n;
	if (sent && sent < tb->n)
		memmove(tb->m, tb->m + sent, (tb->n - sent) * sizeof(tb->m[0]));
	tb->n -= sent;
	/* (which were the control core's is not kept: as if the sent ones
	 * were, erring towards a ring too many, never one too few) */
	tb->nctrl = tb->nctrl > sent ? tb->nctrl - sent : 0;
	return sent;
}

/* The flush itself, the port token held. */
static unsigned flush_held(struct srnic_engine *eng)
{
	struct srnic_txbuf *lb = &eng->txbuf[SRNIC_PORT_LOOP];
	uint32_t len[SRNIC_TXBUF];
	unsigned i, sent, total = 0;
	bool data;

	for (i = 0; i < eng->node->nports; i++) {
		struct srnic_port *port = &eng->node->port[i];
		struct srnic_txbuf *tb = &eng->txbuf[i];

		/* (a steering class's own ports: srnic_ports_flush_steered) */
		if (!tb->n || srnic_port_own(eng, i))
			continue;
		if (!__atomic_load_n(&port->polling, __ATOMIC_ACQUIRE)) {
			/* Nobody there: what was queued is lost. */
			srnic_port_tx_discard(eng, i);
			continue;
		}
		/* (a link's memory going: the frames wait, as for a
		 * full port) */
		if (!srnic_port_io_enter())
			continue;
		if (eng->cfg.encap_udp)
			srnic_port_udp_number(eng, i, tb->m, tb->n);
		/* (the far end of a memif link may sleep: frames for its
		 * QPs wake it) */
		data = tb->n > tb->nctrl;
		if (srnic_port_steers(port)) {
			/* (captured there, queue by queue) */
			sent = srnic_steer_tx(eng, i, tb, 0);
			data = false;	/* (rung there, by class) */
		} else {
			tx_lens(tb, len);
			sent = tx_taken(port, tb,
					srnic_port_burst(eng, i, 0, tb->m,
							 tb->n),
					len);
		}
		if (sent && data && eng->wire_peer[i])
			ring_wire(eng->wire_peer[i]);
		total += sent;
		srnic_port_io_leave();
	}
	/* Frames to this node itself: the loopback rings as a link does */
	if (lb->n)
		tx_lens(lb, len);
	if (lb->n &&
	    (sent = tx_taken(&eng->node->port[SRNIC_PORT_LOOP], lb,
			     srnic_loop_tx(eng, lb->m, lb->n), len))) {
		ring_wire(&eng->node->loop_end);
		total += sent;
	}
	return total;
}

/* The frames this process has waiting for the port token (a steering
 * class's own ports' need none: those are added to *own). */
static unsigned token_frames(const struct srnic_engine *eng, unsigned *own)
{
	unsigned i, waiting = 0;

	for (i = 0; i < SRNIC_PORT_SLOTS; i++)
		if (!srnic_port_own(eng, i))
			waiting += eng->txbuf[i].n;
		else
			*own += eng->txbuf[i].n;
	return waiting;
}

unsigned srnic_ports_flush(struct srnic_engine *eng)
{
	unsigned total, waiting, own = 0;

	/* (a steering class's own ports first: no token for them; what
	 * their queues did not take yet counts as work, as frames waiting
	 * for the token do: the datapath must not nap on it) */
	if (eng->cls)
		own = srnic_ports_flush_steered(eng);
	waiting = token_frames(eng, &own);
	/* (the control core's frames make the token worth taking too, but
	 * not to a steering class, which takes it only for its own frames:
	 * class 0's pollers send them) */
	if (!waiting && !eng->cls && !rte_ring_empty(eng->node->ctrl_tx))
		waiting = 1;
	if (!waiting)
		return own;
	if (!srnic_ports_take(eng)) {
		srnic_token_wait(eng, TOKEN_WAIT_US);
		/* srnicd's node, the token still taken: the frames wait for
		 * the next iteration's flush, and count as work meanwhile
		 * (the datapath must not nap with them queued). */
		if (!srnic_ports_take(eng)) {
			srnic_token_missed(eng);
			return own + waiting;
		}
	}
	eng->token_missed_at = 0;
	if (!eng->cls)
		srnic_ports_take_control(eng);
	total = flush_held(eng);
	srnic_ports_give(eng);
	return own + total;
}

void srnic_ports_flush_last(struct srnic_engine *eng, unsigned wait_ms)
{
	unsigned i, own = 0;

	if (eng->cls)
		srnic_ports_flush_steered(eng);
	/* (a steering class takes the port token only for frames of its
	 * own that its queues do not carry) */
	if ((token_frames(eng, &own) || !eng->cls) &&
	    srnic_ports_hold(eng, wait_ms)) {
		flush_held(eng);
		srnic_ports_give(eng);
	}
	/* (what did not go, goes no more) */
	for (i = 0; i < SRNIC_PORT_SLOTS; i++)
		srnic_port_tx_discard(eng, i);
}

void srnic_ports_settle(struct srnic_engine *eng)
{
	unsigned i, k, left;

	for (i = 0; i < eng->node->nports; i++) {
		struct srnic_txbuf *tb = &eng->txbuf[i];

		/* A frame whose payload is still in registered memory gets
		 * a copy of its own (or is dropped, as a full wire would). */
		for (k = 0, left = 0; k < tb->n; k++) {
			struct rte_mbuf *m = tb->m[k];

			if (m->nb_segs > 1) {
				m = srnic_mbuf_linear(eng, m);
				eng->st->tx_settled += m != NULL;
			}
			if (m)
				tb->m[left++] = m;
		}
		tb->n = left;
	}
}
