/* SPDX-License-Identifier: MIT */
/*
 * Port lifecycle: bringing the node's DPDK ports up and down, starting a
 * memif client again whose server was not there (or went away), and
 * looking at the links.  Every start and stop runs on DPDK's interrupt
 * thread (on_intr_thread).  The frames themselves are rxtx.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_alarm.h>
#include <rte_ethdev.h>
#include <rte_log.h>

#include "srnic_port.h"
#include "srnic_port_guard.h"
#include "port_internal.h"

/* How long an attached process's look at its links waits for its own
 * pollers to leave the links' memory. */
#define REMAP_WAIT_MS 50
#define RX_DESC 1024
#define TX_DESC 1024

static int on_intr_thread(struct srnic_port *port, int stop);

/* The ethdev name is the vdev argument string up to its first comma. */
static int port_name(const char *arg, char *name, size_t size)
{
	size_t n = strcspn(arg, ",");

	if (n == 0 || n >= size)
		return -1;
	memcpy(name, arg, n);
	name[n] = '\0';
	return 0;
}

/* The DPDK id of port i, which EAL made from its vdev argument. */
static int port_find(struct srnic_engine *eng, unsigned i, char *name,
		     size_t size, uint16_t *id, char *err, unsigned errlen)
{
	if (port_name(eng->cfg.port[i], name, size) ||
	    rte_eth_dev_get_port_by_name(name, id)) {
		snprintf(err, errlen, "srnic: port %u (%s) did not appear: "
			 "check the port line in %s", i, eng->cfg.port[i],
			 eng->cfg.path);
		return -ENODEV;
	}
	return 0;
}

/* Port i's steering program, if it is a tap its kernel will steer (a
 * node with classes, where the program loads: tun_steer.c, which reads
 * raw frames or UDP ones); -1 if not.  A tap whose kernel does not steer
 * has one queue, as with queues = 1: with more, the kernel would spread
 * frames over queues nobody polls.  (DPDK 22.11's tap hands an attached
 * process at most 8 queue descriptors, 4 pairs: SRNIC_MAX_CLASSES.) */
static int tun_steer_prog(const struct srnic_engine *eng, unsigned i)
{
	char log[256];
	int prog;

	if (eng->node->classes <= 1 || !srnic_port_is_tap(eng->cfg.port[i]))
		return -1;
	prog = srnic_tun_steer_load(eng->node->classes,
				    eng->cfg.encap_udp
					    ? (uint16_t)eng->cfg.udp_port
					    : 0,
				    eng->cfg.has_ipv6, log, sizeof(log));
	if (prog < 0) {
		fprintf(stderr, "srnic[%s]: port %u: the tap's steering "
			"program is refused here (%s%s%.200s): the port does "
			"not steer\n", eng->cfg.node, i, strerror(-prog),
			log[0] ? ": " : "", log);
		return -1;
	}
	return prog;
}

/* One receive and one transmit queue (a memif port of a node with
 * steering classes: one pair for each class that sends and class that
 * receives, steer.c; a tap whose kernel steers: one pair a class,
 * tun_steer.c), and an MTU that fits our largest frame where the port
 * says it can: shared-memory ports (memif) claim 1518 bytes but carry
 * larger frames in chained buffers, so a smaller claim is not an error. */
static int port_configure(struct srnic_engine *eng, unsigned i, uint16_t id,
			  bool kernel_steers)
{
	struct srnic_port *p = &eng->node->port[i];
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	uint16_t q, nq = 1, dev_nq;
	int rc;

	if (eng->node->classes > 1 && p->shared_memory)
		nq = (uint16_t)(eng->node->classes * eng->node->classes);
	else if (kernel_steers)
		nq = eng->node->classes;
	p->nq = (uint8_t)nq;
	/* A memif server takes as many rings as its client connects, up to
	 * the queues it has, and refuses a client with more: the link would
	 * stay down without a word whenever the client's node said more
	 * queues.  So a server has the most any node may ask for; the ones
	 * past nq are never touched (unconnected, they alias ring 0: steer.c),
	 * and a link whose ends say different numbers does not steer. */
	dev_nq = p->shared_memory && !p->reconnects
			 ? SRNIC_MAX_CLASSES * SRNIC_MAX_CLASSES
			 : nq;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(id, &info);
	if (rc == 0 &&
	    info.max_rx_pktlen >= eng->payload_max + SRNIC_MAX_OVERHEAD)
		conf.rxmode.mtu = eng->payload_max + SRNIC_MAX_OVERHEAD -
				  SRNIC_ETH_HLEN;
	rc = rte_eth_dev_configure(id, dev_nq, dev_nq, &conf);
	for (q = 0; rc == 0 && q < dev_nq; q++) {
		rc = rte_eth_rx_queue_setup(id, q, RX_DESC,
					    rte_eth_dev_socket_id(id), NULL,
					    eng->node->pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(id, q, TX_DESC,
						    rte_eth_dev_socket_id(id),
						    NULL);
	}
	return rc;
}

/* What kind of port i is, from its vdev argument and configuration: what
 * the datapath and the control core do differently for it. */
static void port_learn_kind(struct srnic_engine *eng, unsigned i)
{
	struct srnic_port *p = &eng->node->port[i];
	const char *arg = eng->cfg.port[i];

	/* A memif client cannot start before its server exists; the
	 * control core keeps trying (srnic_port_retry_start). */
	p->shared_memory = strncmp(arg, "net_memif", 9) == 0;
	p->reconnects = p->shared_memory && strstr(arg, "role=client") != NULL;
	/* (DPDK 22.11's tap hands its queues' descriptors to secondary
	 * processes; af_packet and af_xdp do not) */
	p->shareable = p->shared_memory || srnic_port_is_tap(arg);
	srnic_port_kernel_iface(&eng->cfg, i, p->iface, sizeof(p->iface));
	/* Ports that copy a frame out during tx_burst may be given payload
	 * that stays in registered memory; one that hands the mbuf on
	 * (net_ring) may not.  (memif's own zero-copy mode, which would hand
	 * it on too, is refused by the configuration.) */
	p->crc = eng->cfg.crc[i];
	/* (nor an IPv6 UDP node's: its UDP checksum covers the payload,
	 * which the wrap sums in one buffer) */
	p->zero_copy = eng->cfg.zero_copy && !p->crc &&
		       !(eng->cfg.encap_udp && eng->cfg.has_ipv6) &&
		       (p->shared_memory || srnic_port_is_tap(arg) ||
			strncmp(arg, "net_af_packet", 13) == 0);
}

/* The port's first start.  A memif client whose server is not there yet
 * is no error: the control core retries it. */
static int port_first_start(struct srnic_engine *eng, unsigned i)
{
	struct srnic_port *p = &eng->node->port[i];
	int rc;

	p->start_gen = p->link_gen;
	rc = on_intr_thread(p, 0);
	if (rc == 0) {
		srnic_memif_server_name(eng, i, true);
		p->started = 1;
		p->started_at = srnic_ms();
	} else if (p->reconnects) {
		rc = 0;
	}
	return rc;
}

/* Bring port i up: find it, configure it, start it, and set up the
 * kernel's side of a tap port. */
static int port_start(struct srnic_engine *eng, unsigned i, char *err,
		      unsigned errlen)
{
	struct srnic_port *p = &eng->node->port[i];
	struct rte_ether_addr mac;
	char name[64];
	uint16_t id;
	int rc, prog;

	rc = port_find(eng, i, name, sizeof(name), &id, err, errlen);
	if (rc)
		return rc;
	p->port_id = id;
	p->bye_gen = UINT32_MAX;	/* link_gen starts at 0 */
	/* (its kind first: how many queues it has depends on it) */
	port_learn_kind(eng, i);
	prog = tun_steer_prog(eng, i);
	rc = port_configure(eng, i, id, prog >= 0);
	/* (a tap's queues steered before it starts: its kernel sends as the
	 * interface comes up, IPv6's neighbour and multicast frames, which
	 * would land on the class's queues by the flow hash meanwhile) */
	if (rc == 0 && prog >= 0) {
		rc = srnic_tun_steer(eng, i, prog, err, errlen);
		if (rc)
			return rc;
	} else if (prog >= 0) {
		close(prog);
	}
	/* (once a tap: its queue is made now, and it must be quiet before
	 * it starts, which comes before the next port's queue is made) */
	if (rc == 0 && srnic_port_is_tap(eng->cfg.port[i]))
		srnic_port_tap_quiet();
	if (rc == 0)
		rc = port_first_start(eng, i);
	if (rc) {
		snprintf(err, errlen, "srnic: port %u (%s) failed to start: %s",
			 i, name, rte_strerror(-rc));
		return rc;
	}
	rte_eth_macaddr_get(id, &mac);
	memcpy(p->mac, mac.addr_bytes, 6);
	return srnic_port_tap_setup(&eng->cfg, i, p->mac, err, errlen);
}

int srnic_ports_start(struct srnic_engine *eng, char *err, unsigned errlen)
{
	unsigned i;
	int rc;

	if (eng->node->nports) {
		/* Configured by an earlier start of the engine in this
		 * process: only start them again. */
		for (i = 0; i < eng->node->nports; i++)
			srnic_port_retry_start(eng, i);
		return 0;
	}
	eng->node->classes = (uint8_t)eng->cfg.queues;
	for (i = 0; i < eng->cfg.nports; i++) {
		rc = port_start(eng, i, err, errlen);
		if (rc) {
			eng->node->nports = i;
			srnic_ports_stop(eng);
			eng->node->nports = 0;
			return rc;
		}
	}
	eng->node->nports = eng->cfg.nports;
	/* `queues` is what the node steers where its wires can (its
	 * default, 4): a node none of whose ports has queues to steer on
	 * (af_packet, taps whose kernel refused the program) has no
	 * classes, so that none of its processes takes one for nothing */
	for (i = 0; i < eng->node->nports; i++)
		if (eng->node->port[i].nq > 1)
			return 0;
	eng->node->classes = 1;
	return 0;
}

/*
 * A memif server panics when a client goes away between connecting and the
 * end of the handshake (DPDK 22.11).  So a client that connected but whose
 * link is not up yet gets the time a handshake needs before it stops.
 */
static void await_handshake(struct srnic_port *p)
{
	struct rte_eth_link link;

	/* The link came up since this start: the handshake is over. */
	if (__atomic_load_n(&p->link_gen, __ATOMIC_ACQUIRE) != p->start_gen)
		return;
	while (srnic_ms() - p->started_at < SRNIC_HANDSHAKE_MS) {
		memset(&link, 0, sizeof(link));
		rte_eth_link_get_nowait(p->port_id, &link);
		if (link.link_status == RTE_ETH_LINK_UP)
			return;
		usleep(10000);
	}
}

/*
 * Stop, but do not close: DPDK stays initialised for the life of the
 * process, and a later start of the engine starts the same ports again.
 */
void srnic_ports_stop(struct srnic_engine *eng)
{
	unsigned i;

	for (i = 0; i < eng->node->nports; i++) {
		struct srnic_port *p = &eng->node->port[i];

		srnic_port_tx_discard(eng, i);
		srnic_fault_drop(p);
		if (p->started && p->reconnects)
			await_handshake(p);
		if (p->started) {
			srnic_memif_server_name(eng, i, false);
			on_intr_thread(p, 1);
		}
		p->started = 0;
		p->polling = 0;
		p->link_up = 0;
		p->bye_gen = p->link_gen - 1;	/* no goodbye in the next life */
	}
}

/* ---- starting and stopping, on DPDK's interrupt thread ----
 *
 * memif runs its connection handshake on DPDK's interrupt thread.  Starting
 * or stopping a memif port on another thread while a handshake is under way
 * breaks it (the interrupt thread faults, or panics), so every start and
 * stop runs there as an alarm callback, and the caller waits for it.
 */
struct intr_job {
	struct srnic_port *port;
	int stop;
	int rc;
	uint32_t done;
};

static void intr_job_run(void *arg)
{
	struct intr_job *j = arg;
	uint16_t id = j->port->port_id;

	if (j->stop) {
		j->rc = rte_eth_dev_stop(id);
	} else {
		/* An absent server is expected (the peer's process may start
		 * later): keep memif from logging each attempt. */
		int type = rte_log_register("pmd.net.memif");
		int level = type >= 0 ? rte_log_get_level(type) : -1;

		if (type >= 0)
			rte_log_set_level(type, RTE_LOG_CRIT);
		j->rc = rte_eth_dev_start(id);
		if (type >= 0 && level >= 0)
			rte_log_set_level(type, level);
		if (j->rc == 0)
			rte_eth_promiscuous_enable(id);
	}
	__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
}

static int on_intr_thread(struct srnic_port *port, int stop)
{
	struct intr_job j = {.port = port, .stop = stop};

	if (rte_eal_alarm_set(1, intr_job_run, &j) != 0)
		intr_job_run(&j);	/* no alarm: nothing else runs either */
	while (!__atomic_load_n(&j.done, __ATOMIC_ACQUIRE))
		usleep(100);
	return j.rc;
}

/* Control core: start a port whose peer was not there yet.  A refused
 * start (no server listening) is retried every RETRY_MS. */
void srnic_port_retry_start(struct srnic_engine *eng, unsigned i)
{
	struct srnic_port *p = &eng->node->port[i];
	uint64_t now = srnic_ms();

	if (p->started || now < p->next_try)
		return;
	p->start_gen = __atomic_load_n(&p->link_gen, __ATOMIC_ACQUIRE);
	if (on_intr_thread(p, 0) == 0) {
		srnic_memif_server_name(eng, i, true);
		p->started = 1;
		p->started_at = now;
	} else {
		p->next_try = now + SRNIC_PORT_RETRY_MS;
	}
}

/* Control core: stop and start again a port whose link stays down (a memif
 * client does not reconnect by itself).  The caller made sure the datapath
 * no longer touches it. */
void srnic_port_restart(struct srnic_engine *eng, unsigned i)
{
	struct srnic_port *p = &eng->node->port[i];

	on_intr_thread(p, 1);
	srnic_fault_drop(p);	/* frames of the link's last life */
	p->started = 0;
	p->next_try = 0;
	srnic_port_retry_start(eng, i);
}

unsigned srnic_ports_up(const struct srnic_node *node)
{
	unsigned p, n = 0;

	for (p = 0; p < node->nports; p++)
		n += __atomic_load_n(&node->port[p].link_up, __ATOMIC_RELAXED);
	return n;
}

void srnic_ports_remap(struct srnic_engine *eng)
{
	unsigned p;

	/* (memif maps or unmaps the link's memory in this look: none of
	 * this process's pollers may be in it) */
	srnic_port_io_close(REMAP_WAIT_MS);
	for (p = 0; p < eng->node->nports; p++) {
		struct rte_eth_link link;

		rte_eth_link_get_nowait(eng->node->port[p].port_id, &link);
	}
	srnic_port_io_open();
}
