/* SPDX-License-Identifier: MIT */
/*
 * port/: the node's ports as the layers above use them: starting and
 * stopping them, frames in and out under the port token, the loopback,
 * the receive-side fault injector, which port a packet takes, and the
 * frame builders and decoder.  Whoever holds the port token runs it.
 */
#ifndef SRNIC_PORT_H
#define SRNIC_PORT_H

#include "srnic_engine_state.h"

/* port.c: starting and stopping the ports, looking at their links */
void srnic_port_retry_start(struct srnic_engine *eng, unsigned i);
void srnic_port_restart(struct srnic_engine *eng, unsigned i);
#define SRNIC_PORT_RETRY_MS 250		/* a refused memif client start */
#define SRNIC_HANDSHAKE_MS 2000		/* what a memif handshake may take */
int srnic_ports_start(struct srnic_engine *eng, char *err, unsigned errlen);
void srnic_ports_stop(struct srnic_engine *eng);
/* Attached: a DPDK secondary maps a memif link's memory when it looks at
 * the link, and lets go of it when it sees it down; a link that came
 * back (its peer or srnicd restarted it) must be looked at again before
 * it is polled.  Under the process's datapath token, not the port
 * token (it may ask srnicd for the memory, which takes a while). */
void srnic_ports_remap(struct srnic_engine *eng);
/* The node's ports whose link is up. */
unsigned srnic_ports_up(const struct srnic_node *node);

/* bell.c: memif links' bells (how a node wakes the far end's sleeper):
 * mapped for each memif port of the configuration; the others are
 * counted in wires_unbelled. */
void srnic_port_bells_open(struct srnic_engine *eng);
/* srnicd: the process of that slot is gone (it may have died asleep). */
void srnic_port_bells_forget(struct srnic_engine *eng, unsigned slot);
void srnic_port_bells_steer(struct srnic_engine *eng, unsigned i);

/* memif.c: memif server sockets, before EAL starts */
void srnic_ports_prepare(const struct srnic_config *cfg);
void srnic_port_vdev_arg(const struct srnic_config *cfg, unsigned i,
			 char *out, size_t size);

/* steer.c: a steering class's own queues (queues > 1), polled and
 * flushed without the port token; whether port p is one of them. */
uint16_t srnic_port_rx_steered(struct srnic_engine *eng, unsigned p,
			       struct rte_mbuf **pkts, uint16_t n);
unsigned srnic_ports_flush_steered(struct srnic_engine *eng);
bool srnic_port_own(const struct srnic_engine *eng, unsigned p);
bool srnic_port_classes_out(struct srnic_engine *eng, unsigned p,
			    unsigned wait_ms);

/* rxtx.c: frames in and out */
uint16_t srnic_port_rx(struct srnic_engine *eng, unsigned p,
		       struct rte_mbuf **pkts, uint16_t n);
void srnic_port_tx(struct srnic_engine *eng, unsigned p, struct rte_mbuf *m);
/* The CRC a frame made for port p carries there, now (srnic_port_tx
 * writes it anyway): for a copy that goes elsewhere whole. */
void srnic_port_seal(struct srnic_engine *eng, unsigned p, struct rte_mbuf *m);
/* udp.c, a UDP node's (encap = udp): wrap a sealed raw frame for port p
 * to its next hop (false, counted: no headroom, or the hop's Ethernet
 * address not known yet), and strip n frames off a port in place, the
 * damaged ones freed and counted (drop bad_ip), ARP handed to the control
 * core (arp true; else freed); how many are left.  Frames not in UDP to
 * our port are left as they came. */
bool srnic_port_udp_wrap(struct srnic_engine *eng, unsigned p,
			 struct rte_mbuf *m);
/* What strip leaves in a frame's hash.usr: the path it came on
 * (SRNIC_UDP_NO_PATH: none of ours), this flag when it was sent to the
 * node alone, and its number on its path in the high 16 bits. */
#define SRNIC_UDP_RX_UNICAST 0x100
uint16_t srnic_port_udp_strip(struct srnic_engine *eng,
			      struct rte_mbuf **pkts, uint16_t n, bool arp);
/* The n wrapped frames about to go out of port p (the port token held)
 * numbered on their paths; a frame of a UDP peer that the port's holder
 * found good (decoded: engine/dispatch.c) counted on its path, with its
 * send time ts if it has one (a data frame's; 0: none). */
void srnic_port_udp_number(struct srnic_engine *eng, unsigned p,
			   struct rte_mbuf **m, uint16_t n);
void srnic_port_udp_count(struct srnic_engine *eng, const struct rte_mbuf *m,
			  uint16_t ts);
bool srnic_port_tx_now(struct srnic_engine *eng, unsigned p,
		       struct rte_mbuf *m);
unsigned srnic_ports_flush(struct srnic_engine *eng);
/* The engine stops: what its transmit buffers hold goes if the token
 * comes within wait_ms, and is freed either way. */
void srnic_ports_flush_last(struct srnic_engine *eng, unsigned wait_ms);
void srnic_ports_settle(struct srnic_engine *eng);
/* The port token held: the control core's frames into this process's
 * transmit queues (whoever holds the token sends them). */
void srnic_ports_take_control(struct srnic_engine *eng);
/* srnicd's control core: its frames out itself, if the port token is free
 * (memif ports); whether none is left for the datapath. */
bool srnic_ports_send_control(struct srnic_engine *eng);
bool srnic_port_backlogged(const struct srnic_engine *eng, unsigned p);
/* What port p's transmit buffer holds will not go (the port stops, or its
 * link goes): free it. */
void srnic_port_tx_discard(struct srnic_engine *eng, unsigned p);

/* token.c: srnicd's node: the token of port I/O (a try-lock; always had
 * when the node is the process's own). */
bool srnic_ports_take(struct srnic_engine *eng);
/* ... waiting for it up to wait_ms (0: as long as it takes: srnicd's
 * control core, to restart a port); false when it did not come. */
bool srnic_ports_hold(struct srnic_engine *eng, unsigned wait_ms);
void srnic_ports_give(struct srnic_engine *eng);
/* port_token's bit: someone sleeps for the token. */
#define SRNIC_TOKEN_WAITERS 0x80000000u
/* The port token is free again (its holder gave it back, or srnicd took
 * it from a process that died): whoever sleeps for it wakes. */
void srnic_port_token_free(struct srnic_node *node);

/* kernel.c: ports on kernel interfaces (af_packet, tap) */
bool srnic_port_is_tap(const char *arg);
unsigned srnic_port_buf_need(const char *arg);
void srnic_port_kernel_iface(const struct srnic_config *cfg, unsigned i,
			     char *out, size_t size);
int srnic_port_carrier(const struct srnic_port *port);
void srnic_port_tap_quiet(void);
/* A tap port, once started (mac is the port's): its kernel queue, and
 * with a link, the link's bridge. */
int srnic_port_tap_setup(const struct srnic_config *cfg, unsigned i,
			 const uint8_t mac[6], char *err, unsigned errlen);
void srnic_ports_prefault_shared(void);
/* tun_steer.c: a tap port of a node with classes, its queues made and
 * not started yet: its kernel steers each frame to its class's queue by
 * prog (srnic_tun_steer_load's, closed here) */
int srnic_tun_steer(struct srnic_engine *eng, unsigned i, int prog,
		    char *err, unsigned errlen);
/* ... the program for a node of `classes` classes, loaded (a port
 * learns from it whether the kernel takes it; unit tests run it on
 * frames), for frames in UDP to udp_port (encap = udp; in IPv6 when
 * ipv6) or raw (0): its
 * descriptor, or -errno and the verifier's words in log. */
int srnic_tun_steer_load(unsigned classes, uint16_t udp_port, bool ipv6,
			 char *log, unsigned loglen);

/* loop.c: the loopback port (SRNIC_PORT_LOOP), frames to this node */
int srnic_loop_start(struct srnic_engine *eng, char *err, unsigned errlen);
void srnic_loop_stop(struct srnic_engine *eng);
uint16_t srnic_loop_rx(struct srnic_engine *eng, struct rte_mbuf **pkts,
		       uint16_t n);
uint16_t srnic_loop_tx(struct srnic_engine *eng, struct rte_mbuf **pkts,
		       uint16_t n);

/* fault.c: delay and reorder received frames (the testbed's faults), as
 * class cls's poller of port p receives them */
uint16_t srnic_fault_rx(struct srnic_engine *eng, unsigned p, unsigned cls,
			struct rte_mbuf **pkts, uint16_t got, uint16_t n);

/* Whether class cls's poller of the port has frames held back (its
 * datapath must not sleep on them). */
static inline bool srnic_fault_holds(const struct srnic_port *port,
				     unsigned cls)
{
	return port->fault.held[cls].head != port->fault.held[cls].tail;
}

/* ... or the port has a fault: srnic_fault_rx has work. */
static inline bool srnic_fault_on(const struct srnic_port *port,
				  unsigned cls)
{
	return __atomic_load_n(&port->fault.hold, __ATOMIC_RELAXED) |
	       __atomic_load_n(&port->fault.corrupt, __ATOMIC_RELAXED) |
	       srnic_fault_holds(port, cls);
}
void srnic_fault_drop(struct srnic_port *port);
void srnic_fault_poll(struct srnic_engine *eng);

/* mbuf.c: frame builders shared by requester, responder and completer */
struct rte_mbuf *srnic_pkt_alloc(struct srnic_engine *eng,
				 const struct srnic_pkt *pkt,
				 const uint8_t dst_mac[6], unsigned p,
				 uint8_t **payload);
/* A frame of headers only (pkt carries no payload) from qp to its peer,
 * on the port its next packet takes; false when no port or buffer could
 * take it now (its sender's timers send it again). */
bool srnic_qp_send_header(struct srnic_engine *eng, struct srnic_qp *qp,
			  const struct srnic_pkt *pkt);
/*
 * As srnic_pkt_alloc, for a payload of pkt->pkt_len bytes that stays where
 * it is (registered memory, checked by the caller) until the port copies it
 * out: only for ports with zero_copy, and only for RC, whose WQEs complete
 * once the peer has their data (a frame still queued then is a duplicate,
 * which the peer drops whatever it carries).  Queued ones get copies of
 * their own before any engine call runs (srnic_ports_settle): after a
 * deregistration returns, the program may unmap the memory.
 */
struct rte_mbuf *srnic_pkt_alloc_ext(struct srnic_engine *eng,
				     const struct srnic_pkt *pkt,
				     const uint8_t dst_mac[6], unsigned p,
				     const uint8_t *payload);

/* stripe.c: which port a packet takes */
/* Pick the port for qp's next packet (weighted round-robin over live
 * paths, lossy ones only when nothing else is left); -1 when none can take
 * one now. */
int srnic_qp_pick_port(struct srnic_engine *eng, struct srnic_qp *qp);
/* The same for peer (NULL: a multicast group), rotating *rr. */
int srnic_stripe_pick(struct srnic_engine *eng, const struct srnic_peer *peer,
		      uint32_t *rr);
/* The port qp's next packet would take, the rotation left where it is:
 * an ACK sent ahead of that packet goes there (engine/datapath.c). */
static inline int srnic_qp_peek_port(struct srnic_engine *eng,
				     const struct srnic_qp *qp)
{
	uint32_t cursor = qp->path.cursor;

	return srnic_stripe_pick(eng, qp->peer, &cursor);
}
/* A packet of qp went (or is about to go) on port in this datapath
 * iteration. */
static inline void srnic_qp_path_sent(struct srnic_engine *eng,
				      struct srnic_qp *qp, int port)
{
	qp->path.sent_port = (uint8_t)port;
	qp->path.sent_epoch = eng->dp_epoch;
}
/* The port of qp's packet sent in this iteration, else -1: an ACK goes
 * there, to keep its place next to the data. */
static inline int srnic_qp_path_now(const struct srnic_engine *eng,
				    const struct srnic_qp *qp)
{
	return qp->path.sent_epoch == eng->dp_epoch ? qp->path.sent_port
						    : -1;
}
/* Lay out the rotation from the configured weights. */
void srnic_stripe_plan(struct srnic_engine *eng);
/* Whether any port reaches qp's peer (peer; NULL: any live port). */
bool srnic_qp_peer_reachable(const struct srnic_engine *eng,
			     const struct srnic_qp *qp);
bool srnic_stripe_reachable(const struct srnic_engine *eng,
			    const struct srnic_peer *peer);

/* decode.c: check (CRC), decode and, for a control frame under a cluster
 * key, authenticate a frame port p received; false, and the drop counted,
 * for one that is damaged, malformed, forged or not ours. */
bool srnic_rx_decode(struct srnic_engine *eng, unsigned p,
		     const struct rte_mbuf *m, struct srnic_pkt *pkt);

/* mbuf.c: a frame in one segment: m itself, or a copy of it (m is freed); NULL,
 * counted as a drop, when no buffer is free. */
struct rte_mbuf *srnic_mbuf_linear(struct srnic_engine *eng,
				   struct rte_mbuf *m);
/* Copy len bytes of a (possibly chained) mbuf starting at off into dst. */
void srnic_mbuf_copy_out(const struct rte_mbuf *m, uint32_t off, void *dst,
			 uint32_t len);

/* tap.c: the capture tap (./srnic capture), datapath side */
int srnic_tap_init(struct srnic_node *node);
void srnic_tap_rx(struct srnic_node *node, unsigned p, struct rte_mbuf **m,
		  uint16_t n);
uint16_t srnic_tap_tx_take(struct srnic_node *node, unsigned p,
			   struct rte_mbuf **m, uint16_t n, void **idx);
void srnic_tap_tx_done(struct srnic_node *node, void **idx, uint16_t got,
		       uint16_t sent);

#endif
