/* SPDX-License-Identifier: MIT */
/*
 * Port I/O: bringing the node's DPDK ports up and down, receive bursts, and
 * per-port transmit buffers flushed once per datapath iteration.  A frame
 * that a port cannot take yet stays in its buffer (back-pressure), so the
 * wire never sees a drop the engine caused itself.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_alarm.h>
#include <rte_ethdev.h>
#include <rte_log.h>

#include "srnic_port.h"
#include "srnic_futex.h"
#include "srnic_port_guard.h"

/* How long an attached process's look at its links waits for its own
 * pollers to leave the links' memory. */
#define REMAP_WAIT_MS 50
/* Longest sleep for the port token with frames to send: a holder that
 * is descheduled keeps it for a time slice; the next iteration tries
 * again (and reads its own ring meanwhile). */
#define TOKEN_WAIT_US 500
#define RX_DESC 1024

static int on_intr_thread(struct srnic_port *port, int stop);
static void server_name(struct srnic_engine *eng, unsigned i, bool real);
#define TX_DESC 1024

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

static int port_start(struct srnic_engine *eng, unsigned i, char *err,
		      unsigned errlen)
{
	struct srnic_port *p = &eng->node->port[i];
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	char name[64];
	uint16_t id;
	int rc;

	if (port_name(eng->cfg.port[i], name, sizeof(name)) ||
	    rte_eth_dev_get_port_by_name(name, &id)) {
		snprintf(err, errlen, "srnic: port %u (%s) did not appear: "
			 "check the port line in %s", i, eng->cfg.port[i],
			 eng->cfg.path);
		return -ENODEV;
	}
	p->port_id = id;
	p->bye_gen = UINT32_MAX;	/* link_gen starts at 0 */
	memset(&conf, 0, sizeof(conf));
	/* Ask for an MTU that fits our largest frame where the port says it
	 * can; shared-memory ports (memif) claim 1518 bytes but carry larger
	 * frames in chained buffers, so a smaller claim is not an error. */
	rc = rte_eth_dev_info_get(id, &info);
	if (rc == 0 &&
	    info.max_rx_pktlen >= eng->payload_max + SRNIC_MAX_OVERHEAD)
		conf.rxmode.mtu = eng->payload_max + SRNIC_MAX_OVERHEAD -
				  SRNIC_ETH_HLEN;
	rc = rte_eth_dev_configure(id, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(id, 0, RX_DESC,
					    rte_eth_dev_socket_id(id), NULL,
					    eng->node->pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(id, 0, TX_DESC,
					    rte_eth_dev_socket_id(id), NULL);
	if (rc == 0 && srnic_port_is_tap(eng->cfg.port[i]))
		srnic_port_tap_quiet();
	if (rc == 0) {
		/* A memif client cannot start before its server exists; the
		 * control core keeps trying (srnic_port_retry_start). */
		p->shared_memory = strncmp(eng->cfg.port[i], "net_memif", 9) == 0;
		p->reconnects = p->shared_memory &&
				strstr(eng->cfg.port[i], "role=client") != NULL;
		/* (DPDK 22.11's tap hands its queues' descriptors to
		 * secondary processes; af_packet and af_xdp do not) */
		p->shareable = p->shared_memory ||
			       srnic_port_is_tap(eng->cfg.port[i]);
		srnic_port_kernel_iface(&eng->cfg, i, p->iface,
					sizeof(p->iface));
		/* Ports that copy a frame out during tx_burst may be given
		 * payload that stays in registered memory; one that hands the
		 * mbuf on (net_ring) may not.  (memif's own zero-copy mode,
		 * which would hand it on too, is refused by the
		 * configuration.) */
		p->crc = eng->cfg.crc[i];
		p->zero_copy = eng->cfg.zero_copy && !p->crc &&
			       (p->shared_memory ||
				srnic_port_is_tap(eng->cfg.port[i]) ||
				strncmp(eng->cfg.port[i], "net_af_packet",
					13) == 0);
		p->start_gen = p->link_gen;
		rc = on_intr_thread(p, 0);
		if (rc == 0) {
			server_name(eng, i, true);
			p->started = 1;
			p->started_at = srnic_ms();
		} else if (p->reconnects) {
			rc = 0;
		}
	}
	if (rc) {
		snprintf(err, errlen, "srnic: port %u (%s) failed to start: %s",
			 i, name, rte_strerror(-rc));
		return rc;
	}
	rte_eth_macaddr_get(id, &mac);
	memcpy(p->mac, mac.addr_bytes, 6);
	return srnic_port_tap_setup(&eng->cfg, i, p->mac, err, errlen);
}

/* ---- memif server sockets ----
 *
 * DPDK 22.11's memif server creates its listening socket when EAL probes the
 * device, long before the port is configured and started; a client that
 * connects in that window (a peer retrying every 250 ms) makes the server's
 * interrupt thread panic.  So a server listens under a private name while
 * it starts, and the socket takes its real name (rename is atomic) only
 * once the port runs; it gives the name back when the port stops.
 */

/* PATH of "socket=PATH" in a memif server's vdev arguments, or 0. */
static size_t server_socket(const char *arg, const char **path)
{
	const char *s;

	if (strncmp(arg, "net_memif", 9) || !strstr(arg, "role=server"))
		return 0;
	s = strstr(arg, "socket=");
	if (!s)
		return 0;
	*path = s + 7;
	return strcspn(*path, ",");
}

static void starting_name(const char *path, size_t n, char *out, size_t size)
{
	snprintf(out, size, "%.*s.%d", (int)n, path, (int)getpid());
}

/* Is somebody listening on a Unix socket of that path (in this network
 * namespace)?  Read from /proc/net/unix: a probing connect would itself
 * upset a memif server mid-start. */
static bool unix_listener(const char *path)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/net/unix", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *name = strrchr(line, ' ');
		unsigned flags = 0;

		if (!name || sscanf(line, "%*s %*s %*s %x", &flags) != 1)
			continue;
		name[strcspn(name, "\n")] = '\0';
		found = (flags & 0x10000) /* __SO_ACCEPTCON: listening */ &&
			!strcmp(name + 1, path);
	}
	fclose(f);
	return found;
}

/* The vdev arguments EAL gets for port i: a server's socket renamed. */
void srnic_port_vdev_arg(const struct srnic_config *cfg, unsigned i,
			 char *out, size_t size)
{
	const char *arg = cfg->port[i], *path;
	char tmp[128];
	size_t n = server_socket(arg, &path);

	if (!n || n >= sizeof(tmp) - 16) {
		snprintf(out, size, "%s", arg);
		return;
	}
	starting_name(path, n, tmp, sizeof(tmp));
	snprintf(out, size, "%.*s%s%s", (int)(path - arg), arg, tmp,
		 path + n);
}

/* Private names (PATH.<pid>) that servers which ended left behind. */
static void remove_stale_starting(const char *name)
{
	char dir[128], full[300];
	const char *base, *slash = strrchr(name, '/');
	size_t blen;
	struct dirent *d;
	DIR *dp;

	if (!slash)
		return;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - name), name);
	base = slash + 1;
	blen = strlen(base);
	dp = opendir(dir[0] ? dir : "/");
	if (!dp)
		return;
	while ((d = readdir(dp)) != NULL) {
		if (strncmp(d->d_name, base, blen) || d->d_name[blen] != '.' ||
		    strspn(d->d_name + blen + 1, "0123456789") !=
			    strlen(d->d_name + blen + 1))
			continue;
		snprintf(full, sizeof(full), "%s/%s", dir, d->d_name);
		if (!unix_listener(full))
			unlink(full);
	}
	closedir(dp);
}

/*
 * Before EAL starts: a socket file nobody listens on is left over from a
 * server that died (memif does not remove it): remove it, or this node's
 * server could not take the name.
 */
void srnic_ports_prepare(const struct srnic_config *cfg)
{
	unsigned i;

	for (i = 0; i < cfg->nports; i++) {
		const char *path;
		char name[128];
		size_t n = server_socket(cfg->port[i], &path);

		if (!n || n >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)n, path);
		if (!unix_listener(name))
			unlink(name);
		remove_stale_starting(name);
	}
}

/* Give a started server's socket its real name, or take it back. */
static void server_name(struct srnic_engine *eng, unsigned i, bool real)
{
	const char *path;
	char name[128], tmp[128];
	size_t n = server_socket(eng->cfg.port[i], &path);

	if (!n || n >= sizeof(name) - 16)
		return;
	snprintf(name, sizeof(name), "%.*s", (int)n, path);
	starting_name(path, n, tmp, sizeof(tmp));
	if (real)
		rename(tmp, name);
	else
		rename(name, tmp);
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
		struct srnic_txbuf *tb = &eng->txbuf[i];

		rte_pktmbuf_free_bulk(tb->m, tb->n);
		tb->n = 0;
		srnic_fault_drop(p);
		if (p->started && p->reconnects)
			await_handshake(p);
		if (p->started) {
			server_name(eng, i, false);
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
		server_name(eng, i, true);
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

uint16_t srnic_port_rx(struct srnic_engine *eng, unsigned p,
		       struct rte_mbuf **pkts, uint16_t n)
{
	struct srnic_port *port = &eng->node->port[p];
	uint16_t got, i;

	if (!srnic_port_io_enter())
		return 0;	/* a link's memory is going: next time */
	got = rte_eth_rx_burst(port->port_id, 0, pkts, n);
	srnic_port_io_leave();
	if (srnic_tap_on(&eng->node->tap, p) && got)
		srnic_tap_rx(eng->node, p, pkts, got);
	for (i = 0; i < got; i++) {
		pkts[i]->port = p;	/* our index, not DPDK's id */
		port->st.rx_bytes += rte_pktmbuf_pkt_len(pkts[i]);
	}
	port->st.rx_pkts += got;
	/* The testbed's delay, reordering and corruption (fault.c): one
	 * branch when the port has no fault and holds nothing. */
	if (unlikely(__atomic_load_n(&port->fault.hold, __ATOMIC_RELAXED) |
		     __atomic_load_n(&port->fault.corrupt, __ATOMIC_RELAXED) |
		     (port->fault.tail - port->fault.head)))
		return srnic_fault_rx(eng, p, pkts, got, n);
	return got;
}

/* The frame is finished: on a port that carries the CRC, seal it (in the
 * room srnic_pkt_alloc left at its end).  Sealing again gives the same
 * trailer. */
static inline void seal(const struct srnic_port *port, struct rte_mbuf *m)
{
	if (port->crc) {
		RTE_ASSERT(m->nb_segs == 1);
		srnic_wire_seal(rte_pktmbuf_mtod(m, uint8_t *),
				rte_pktmbuf_data_len(m));
	}
}

void srnic_port_seal(struct srnic_engine *eng, unsigned p, struct rte_mbuf *m)
{
	seal(&eng->node->port[p], m);
}

void srnic_port_tx(struct srnic_engine *eng, unsigned p, struct rte_mbuf *m)
{
	struct srnic_txbuf *tb = &eng->txbuf[p];

	seal(&eng->node->port[p], m);
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
	for (i = 0; i < n; i++)
		if (m[i]->port < eng->node->nports)
			srnic_port_tx(eng, m[i]->port, m[i]);
		else
			rte_pktmbuf_free(m[i]);
}

/* A frame out at once, past the transmit buffer (leaving a link, when
 * nothing else will flush it).  Returns whether the port took it; the
 * frame is gone either way. */
bool srnic_port_tx_now(struct srnic_engine *eng, unsigned p,
		       struct rte_mbuf *m)
{
	bool sent;

	seal(&eng->node->port[p], m);
	if (!srnic_port_io_enter()) {
		rte_pktmbuf_free(m);
		return false;
	}
	sent = rte_eth_tx_burst(eng->node->port[p].port_id, 0, &m, 1) == 1;
	srnic_port_io_leave();
	if (!sent)
		rte_pktmbuf_free(m);
	return sent;
}

bool srnic_port_backlogged(const struct srnic_engine *eng, unsigned p)
{
	return eng->txbuf[p].n > SRNIC_TXBUF - SRNIC_BURST;
}

/* The first sent frames of port's buffer tb are gone: count them, keep
 * the rest for the next flush. */
static uint16_t tx_taken(struct srnic_port *port, struct srnic_txbuf *tb,
			 uint16_t sent)
{
	uint16_t k;

	for (k = 0; k < sent; k++)
		port->st.tx_bytes += rte_pktmbuf_pkt_len(tb->m[k]);
	port->st.tx_pkts += sent;
	port->st.tx_full += sent < tb->n;
	if (sent && sent < tb->n)
		memmove(tb->m, tb->m + sent, (tb->n - sent) * sizeof(tb->m[0]));
	tb->n -= sent;
	return sent;
}

/*
 * Starvation of the port token.  With more busy processes than cores, the
 * token is free only for moments, and a process that sleeps for it (or
 * merely waits for its core) finds it taken again each time it looks,
 * while busier pollers take it as soon as it is given: a pingpong beside
 * three ib_write_bw pairs had the ports 3 times in 5,000 tries, and its QP
 * ran out of retries with its frames still queued.  So a process that has
 * had frames waiting for the token for SRNIC_TOKEN_HUNGRY_US says so, and
 * the others leave the token to it for up to SRNIC_TOKEN_LEAVE_US (not
 * longer: it may be waiting for a core, or gone).  One process at a time;
 * it ends when it takes the token.
 */
static inline bool others_hungry(const struct srnic_engine *eng)
{
	uint32_t h = __atomic_load_n(&eng->node->hungry, __ATOMIC_RELAXED);

	return unlikely(h) && h != eng->slot + 1 &&
	       srnic_now() - __atomic_load_n(&eng->node->hungry_at,
					     __ATOMIC_RELAXED) <
		       eng->tsc_per_us * SRNIC_TOKEN_LEAVE_US;
}

/* Frames waiting, the token taken: a process that has waited
 * SRNIC_TOKEN_HUNGRY_US asks for its turn (unless another has asked, and
 * is still within its time). */
static void token_missed(struct srnic_engine *eng)
{
	struct srnic_node *node = eng->node;
	uint64_t now = srnic_now();
	uint32_t h;

	/* (srnicd's own frames are the control core's, which tolerate a
	 * wait: it does not make the node's processes wait for it) */
	if (eng->mode == SRNIC_NODE)
		return;
	if (!eng->token_missed_at) {
		eng->token_missed_at = now;
		return;
	}
	if (now - eng->token_missed_at <
	    eng->tsc_per_us * SRNIC_TOKEN_HUNGRY_US)
		return;
	h = __atomic_load_n(&node->hungry, __ATOMIC_RELAXED);
	if (h == eng->slot + 1 || others_hungry(eng))
		return;
	if (__atomic_compare_exchange_n(&node->hungry, &h, eng->slot + 1,
					false, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED)) {
		__atomic_store_n(&node->hungry_at, now, __ATOMIC_RELAXED);
		node->proc[eng->slot].token_hungry++;
	}
}

bool srnic_ports_take(struct srnic_engine *eng)
{
	struct srnic_proc *me = &eng->node->proc[eng->slot];
	uint32_t free = 0;
	bool got;

	if (!eng->node->shared)
		return true;
	/* (srnicd gone or going: the ports are nobody's) */
	if (eng->fatal || (eng->mode == SRNIC_ATTACHED &&
			   __atomic_load_n(&eng->node->closing,
					   __ATOMIC_ACQUIRE)))
		return false;
	got = __atomic_load_n(&eng->node->port_token, __ATOMIC_RELAXED) == 0 &&
	      !others_hungry(eng) &&
	      __atomic_compare_exchange_n(&eng->node->port_token, &free,
					  eng->slot + 1, false,
					  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
	if (got && __atomic_load_n(&eng->node->hungry, __ATOMIC_RELAXED) ==
			   eng->slot + 1)
		__atomic_store_n(&eng->node->hungry, 0, __ATOMIC_RELAXED);
	/* (srnicd began to stop between the look above and the taking:
	 * it waits for the token, so it has not stopped a port yet) */
	if (got && eng->mode == SRNIC_ATTACHED &&
	    __atomic_load_n(&eng->node->closing, __ATOMIC_ACQUIRE)) {
		srnic_ports_give(eng);
		got = false;
	}
	if (got)
		me->port_polls++;
	else
		me->token_misses++;
	return got;
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

bool srnic_ports_hold(struct srnic_engine *eng, unsigned wait_ms)
{
	uint64_t until = srnic_ms() + wait_ms;
	unsigned i;

	/* (a holder that dies is let go of by srnicd: procs.c) */
	for (i = 0; !srnic_ports_take(eng); i++) {
		if (wait_ms && srnic_ms() >= until)
			return false;
		if (eng->fatal || (eng->mode == SRNIC_ATTACHED &&
				   eng->node->closing))
			return false;
		if (i < 64)
			sched_yield();
		else
			usleep(50);
	}
	return true;
}

void srnic_ports_give(struct srnic_engine *eng)
{
	if (eng->node->shared)
		srnic_port_token_free(eng->node);
}

void srnic_port_token_free(struct srnic_node *node)
{
	if (__atomic_exchange_n(&node->port_token, 0, __ATOMIC_RELEASE) &
	    SRNIC_TOKEN_WAITERS)
		srnic_futex_wake(&node->port_token, INT32_MAX);
}

/*
 * Frames wait for the token: sleep until its holder gives it back (or up
 * to us).  A poller that spins for the token takes the CPU from the one
 * that holds it: with more busy processes than cores, that holder is
 * often descheduled in its burst, and spinners made every process of the
 * node wait out their time slices (four ib_write_bw pairs a node: whole
 * QPs starved of the token until their retries ran out).  Asleep, they
 * leave the holder the core.
 */
static void token_wait(struct srnic_engine *eng, unsigned us)
{
	uint32_t *tok = &eng->node->port_token;
	uint32_t v = __atomic_load_n(tok, __ATOMIC_RELAXED);

	if (!v)
		return;
	if (!(v & SRNIC_TOKEN_WAITERS)) {
		if (!__atomic_compare_exchange_n(tok, &v,
						 v | SRNIC_TOKEN_WAITERS, false,
						 __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			return;	/* given back (or taken anew) meanwhile */
		v |= SRNIC_TOKEN_WAITERS;
	}
	eng->node->proc[eng->slot].token_waits++;
	srnic_futex_wait(tok, v, us);
}

/* The flush itself, the port token held. */
static unsigned flush_held(struct srnic_engine *eng)
{
	struct srnic_txbuf *lb = &eng->txbuf[SRNIC_PORT_LOOP];
	unsigned i, total = 0;

	for (i = 0; i < eng->node->nports; i++) {
		struct srnic_port *port = &eng->node->port[i];
		struct srnic_txbuf *tb = &eng->txbuf[i];

		if (!tb->n)
			continue;
		if (!__atomic_load_n(&port->polling, __ATOMIC_ACQUIRE)) {
			/* Nobody there: what was queued is lost, and the
			 * requester's timers will send it again elsewhere. */
			rte_pktmbuf_free_bulk(tb->m, tb->n);
			tb->n = 0;
			continue;
		}
		/* (a link's memory going: the frames wait, as for a
		 * full port) */
		if (!srnic_port_io_enter())
			continue;
		if (srnic_tap_on(&eng->node->tap, i)) {
			void *idx[SRNIC_BURST_MAX];
			uint16_t got = srnic_tap_tx_take(eng->node, i, tb->m,
							 tb->n, idx);
			uint16_t sent = rte_eth_tx_burst(port->port_id, 0,
							 tb->m, tb->n);

			srnic_tap_tx_done(eng->node, idx, got, sent);
			total += tx_taken(port, tb, sent);
		} else {
			total += tx_taken(port, tb,
					  rte_eth_tx_burst(port->port_id, 0,
							   tb->m, tb->n));
		}
		srnic_port_io_leave();
	}
	if (lb->n)
		total += tx_taken(&eng->node->port[SRNIC_PORT_LOOP], lb,
				  srnic_loop_tx(eng, lb->m, lb->n));
	return total;
}

unsigned srnic_ports_flush(struct srnic_engine *eng)
{
	unsigned i, total, waiting = 0;

	for (i = 0; i < SRNIC_PORT_SLOTS; i++)
		waiting += eng->txbuf[i].n;
	/* (the control core's frames make the token worth taking too) */
	if (!waiting && !rte_ring_empty(eng->node->ctrl_tx))
		waiting = 1;
	if (!waiting)
		return 0;
	if (!srnic_ports_take(eng)) {
		token_wait(eng, TOKEN_WAIT_US);
		/* srnicd's node, the token still taken: the frames wait for
		 * the next iteration's flush, and count as work meanwhile
		 * (the datapath must not nap with them queued). */
		if (!srnic_ports_take(eng)) {
			token_missed(eng);
			return waiting;
		}
	}
	eng->token_missed_at = 0;
	srnic_ports_take_control(eng);
	total = flush_held(eng);
	srnic_ports_give(eng);
	return total;
}

void srnic_ports_flush_last(struct srnic_engine *eng, unsigned wait_ms)
{
	unsigned i;

	if (srnic_ports_hold(eng, wait_ms)) {
		flush_held(eng);
		srnic_ports_give(eng);
	}
	/* (what did not go, goes no more) */
	for (i = 0; i < SRNIC_PORT_SLOTS; i++) {
		rte_pktmbuf_free_bulk(eng->txbuf[i].m, eng->txbuf[i].n);
		eng->txbuf[i].n = 0;
	}
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
		srnic_wire_sign(buf, eng->cfg.cluster_key);
	if (payload)
		*payload = buf + hlen;
	m->port = p;
	return m;
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
