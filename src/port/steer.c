/* SPDX-License-Identifier: MIT */
/*
 * Steering (queues = N > 1; docs/architecture.md, "Steering"): a memif
 * port's N*N queue pairs, queue s*N + r carrying the frames of class s's
 * QPs to class r's, the receiving class read off the frame's QP number
 * (srnic_qpn_class).  Every queue then has one sender and one poller: a
 * class c > 0 (an attached process's) sends on its queues and polls its
 * own without the port token, so its frames pass through nobody else and
 * a process that stops delays only its own; class 0's queues are the port
 * token's holders', as every frame was before.  A memif link carries as
 * many queues as its client connected, so a port steers only once its
 * peer's HELLO says its node has as many classes (port->steer).  A tap
 * port has a queue pair a class instead, its kernel steering what comes
 * (tun_steer.c): class c sends on queue c and polls it.
 *
 * Datapath: the queues' sender and poller (class 0's under the port
 * token).  The testbed's faults (fault.c) and the capture (tap.c) see
 * every class's queues; a UDP node's frames are wrapped before they
 * come here and unwrapped by the class that polls them (udp.c).
 */
#include <unistd.h>

#include <rte_ethdev.h>

#include "srnic_port.h"
#include "srnic_port_guard.h"
#include "port_internal.h"

/* The queue class s sends class r's frames on: a memif link's s*N + r, a
 * tap's s (its kernel picks the far end's queue: tun_steer.c). */
static inline uint16_t steer_txq(const struct srnic_port *port,
				 unsigned classes, unsigned s, unsigned r)
{
	return (uint16_t)(port->kernel_steer ? s : s * classes + r);
}

/* Whom a frame of ours is for: its QP's class; false for a control
 * frame (class 0's, the node's), or ARP.  (A UDP node's frames are
 * wrapped by now: udp.c.) */
static inline bool frame_class(const struct srnic_engine *eng,
			       const struct rte_mbuf *m, uint8_t *cls)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t qpn;

	uint32_t len = rte_pktmbuf_data_len(m);

	if (!(!eng->cfg.encap_udp ? srnic_wire_frame_qpn(f, len, &qpn)
	      : eng->cfg.has_ipv6 ? srnic_wire_udp6_frame_qpn(f, len, &qpn)
				  : srnic_wire_udp_frame_qpn(f, len, &qpn))) {
		*cls = 0;
		return false;
	}
	*cls = (uint8_t)srnic_qpn_class(eng->node->classes, qpn);
	return true;
}

/* The far end's sleeper for frames to class k: its process's own bell,
 * or (class 0) whoever polls for the node there. */
static inline void ring_class(struct srnic_engine *eng, unsigned p,
			      unsigned k)
{
	if (k && eng->wire_peer_cls[p])
		srnic_ring(&eng->wire_peer_cls[p]->cls[k].b);
	else if (!k && eng->wire_peer[p])
		ring_wire(eng->wire_peer[p]);
}

/*
 * A frame a queue did not take stays in tb, in order, for the next flush,
 * as on the port token's path: a receiver that is slower than its senders
 * holds them back, it does not lose their frames.  But a queue to a class
 * (k > 0) that has taken nothing for STEER_STALL_US, while tb is backed
 * up, belongs to a process that stopped (SIGSTOP, a debugger): what it
 * has no room for is dropped and counted, and the sender's traffic to the
 * others goes on, as a NIC drops what a stopped receiver's queue has no
 * room for.  (Class 0's queues, the node's control frames among their
 * frames, never drop: their pollers are srnicd's and the token's.)
 */
#define STEER_STALL_US 100000

unsigned srnic_steer_tx(struct srnic_engine *eng, unsigned p,
			struct srnic_txbuf *tb, unsigned cls)
{
	struct srnic_port *port = &eng->node->port[p];
	unsigned classes = eng->node->classes, k;
	bool backed_up = srnic_port_backlogged(eng, p);
	struct rte_mbuf *b[SRNIC_TXBUF];
	uint16_t at[SRNIC_TXBUF], i, nb, sent, left, nctrl, total = 0;
	uint32_t len[SRNIC_TXBUF];
	uint8_t to[SRNIC_TXBUF], ctl[SRNIC_TXBUF], gone[SRNIC_TXBUF];
	bool data;

	for (i = 0; i < tb->n; i++) {
		ctl[i] = !frame_class(eng, tb->m[i], &to[i]);
		gone[i] = 0;
	}
	for (k = 0; k < classes; k++) {
		uint16_t q = steer_txq(port, classes, cls, k);
		struct srnic_queue_stats *qs = &port->q[q];
		uint64_t *full_at = &eng->steer_full_at[p][k];

		for (i = 0, nb = 0; i < tb->n; i++)
			if (to[i] == k) {
				at[nb] = i;
				/* (read now: a sent frame is the port's) */
				len[nb] = rte_pktmbuf_pkt_len(tb->m[i]);
				b[nb++] = tb->m[i];
			}
		if (!nb)
			continue;
		sent = srnic_port_burst(eng, p, q, b, nb);
		for (i = 0, data = false; i < sent; i++) {
			qs->tx_bytes += len[i];
			/* (class 0 holds the port token: the port's own
			 * counters are its too, as on rxtx.c's path) */
			if (!cls)
				port->st.tx_bytes += len[i];
			gone[at[i]] = 1;
			data |= !ctl[at[i]];
		}
		qs->tx_pkts += sent;
		if (!cls)
			port->st.tx_pkts += sent;
		/* (the far end's sleepers are woken for data, not for the
		 * control core's HELLOs, as on rxtx.c's path) */
		if (data)
			ring_class(eng, p, k);
		total += sent;
		if (sent == nb) {
			*full_at = 0;
			continue;
		}
		if (sent || !*full_at)
			*full_at = eng->now;
		if (k && backed_up &&
		    eng->now - *full_at > STEER_STALL_US * eng->tsc_per_us) {
			rte_pktmbuf_free_bulk(b + sent, nb - sent);
			qs->tx_dropped += nb - sent;
			for (i = sent; i < nb; i++)
				gone[at[i]] = 1;
		}
	}
	for (i = 0, left = 0, nctrl = 0; i < tb->n; i++)
		if (!gone[i]) {
			nctrl += ctl[i];
			tb->m[left++] = tb->m[i];
		}
	if (!cls)
		port->st.tx_full += left > 0;
	tb->n = left;
	tb->nctrl = nctrl;
	return total;
}

/* Port p's queues to class cls, from each sending class in turn (where
 * the last poll left off: a busy sender does not starve the others); a
 * tap's one queue to it. */
uint16_t srnic_steer_rx(struct srnic_engine *eng, unsigned p, unsigned cls,
			struct rte_mbuf **pkts, uint16_t n)
{
	struct srnic_port *port = &eng->node->port[p];
	unsigned classes = eng->node->classes, j, k;
	uint16_t got = 0, g, i;

	for (j = 0; j < classes && got < n; j++) {
		unsigned q;

		k = (eng->steer_next + j) % classes;
		if (port->kernel_steer && j)
			break;
		q = port->kernel_steer ? cls : k * classes + cls;
		g = rte_eth_rx_burst(port->port_id, (uint16_t)q, pkts + got,
				     n - got);
		for (i = 0; i < g; i++)
			port->q[q].rx_bytes += rte_pktmbuf_pkt_len(pkts[got + i]);
		port->q[q].rx_pkts += g;
		got += g;
	}
	eng->steer_next++;
	return got;
}

/* Whether a class's port p is its own to flush and poll (steered). */
bool srnic_port_own(const struct srnic_engine *eng, unsigned p)
{
	return eng->cls && p < eng->node->nports &&
	       srnic_port_steers(&eng->node->port[p]);
}

/* ... and may be touched now: its link up, and in a life of it whose
 * peer has not said goodbye (class 0's pollers decide that, as they poll:
 * rx_poll's polling). */
static bool own_live(const struct srnic_engine *eng, unsigned p)
{
	const struct srnic_port *port = &eng->node->port[p];

	return srnic_port_own(eng, p) &&
	       __atomic_load_n(&port->link_up, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&port->polling, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&eng->node->closing, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&eng->fatal, __ATOMIC_ACQUIRE);
}

/*
 * A class in its own queues of port p, which nothing but this word keeps
 * the port's restart out of (the class takes no port token): it says so
 * before it looks whether the port is still its own, and the control core
 * clears steer before it looks at the word (srnic_port_classes_out).
 */
static inline bool own_enter(struct srnic_engine *eng, unsigned p)
{
	uint8_t *busy = &eng->node->port[p].cls_busy[eng->cls];

	__atomic_store_n(busy, 1, __ATOMIC_SEQ_CST);
	if (own_live(eng, p) && srnic_port_io_enter())
		return true;
	__atomic_store_n(busy, 0, __ATOMIC_RELEASE);
	return false;
}

static inline void own_leave(struct srnic_engine *eng, unsigned p)
{
	srnic_port_io_leave();
	__atomic_store_n(&eng->node->port[p].cls_busy[eng->cls], 0,
			 __ATOMIC_RELEASE);
}

/* The control core, before port p restarts (its steer cleared): whether
 * no class is in its queues any more, waiting up to wait_ms for one that
 * is (a class stopped in the middle of a burst holds the restart off, as
 * a port token holder stopped would). */
bool srnic_port_classes_out(struct srnic_engine *eng, unsigned p,
			    unsigned wait_ms)
{
	const struct srnic_port *port = &eng->node->port[p];
	unsigned c, ms;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (ms = 0;; ms++) {
		for (c = 1; c < SRNIC_MAX_CLASSES; c++)
			if (__atomic_load_n(&port->cls_busy[c],
					    __ATOMIC_ACQUIRE))
				break;
		if (c == SRNIC_MAX_CLASSES)
			return true;
		if (ms >= wait_ms)
			return false;
		usleep(1000);
	}
}

/* A class's own poll of a steered port (no port token): its frames, those
 * that are not data frames dropped and counted (only class 0's queues
 * carry the node's control frames). */
uint16_t srnic_port_rx_steered(struct srnic_engine *eng, unsigned p,
			       struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t got, i, kept = 0;
	uint32_t qpn;

	if (!own_enter(eng, p))
		return 0;
	got = srnic_steer_rx(eng, p, eng->cls, pkts, n);
	if (srnic_tap_on(&eng->node->tap, p) && got)
		srnic_tap_rx(eng->node, p, pkts, got);
	/* (captured as the wire carried them, then raw, as on class 0's
	 * path: rxtx.c; an ARP frame here is no class's) */
	if (eng->cfg.encap_udp && got) {
		eng->rx_ts16 = srnic_ts16(eng, srnic_now());
		got = srnic_port_udp_strip(eng, pkts, got, false);
	}
	/* (inside: a port's restart frees what its classes hold) */
	if (unlikely(srnic_fault_on(&eng->node->port[p], eng->cls)))
		got = srnic_fault_rx(eng, p, eng->cls, pkts, got, n);
	own_leave(eng, p);
	for (i = 0; i < got; i++) {
		struct rte_mbuf *m = pkts[i];

		if (!srnic_wire_frame_qpn(rte_pktmbuf_mtod(m, const uint8_t *),
					  rte_pktmbuf_data_len(m), &qpn)) {
			eng->st->drops[SRNIC_DROP_MISSTEERED]++;
			rte_pktmbuf_free(m);
			continue;
		}
		m->port = p;
		pkts[kept++] = m;
	}
	return kept;
}

/* A class's own flush of its steered ports' transmit buffers (no port
 * token): how many frames went. */
unsigned srnic_ports_flush_steered(struct srnic_engine *eng)
{
	unsigned i, total = 0;

	for (i = 0; i < eng->node->nports; i++) {
		struct srnic_txbuf *tb = &eng->txbuf[i];

		if (!tb->n || !srnic_port_own(eng, i))
			continue;
		if (!own_enter(eng, i)) {
			/* Nobody there (or the link's memory going): what
			 * was queued is lost, as on rxtx.c's path. */
			if (!own_live(eng, i))
				srnic_port_tx_discard(eng, i);
			continue;
		}
		/* (a UDP node's frames numbered on their paths as they go,
		 * as under the port token: udp.c) */
		if (eng->cfg.encap_udp)
			srnic_port_udp_number(eng, i, tb->m, tb->n);
		total += srnic_steer_tx(eng, i, tb, eng->cls);
		own_leave(eng, i);
	}
	return total;
}
