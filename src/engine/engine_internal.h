/* SPDX-License-Identifier: MIT */
/*
 * engine/: what the top layer shares among its files (start and stop,
 * the datapath loop, receive dispatch, the object API, attaching to
 * srnicd), with every layer's header below it.  srnicd and the unit tests
 * include it to see the whole engine; a layer below includes its own
 * header and those of the layers it depends on (src/meson.build gives it
 * no others).
 */
#ifndef SRNIC_ENGINE_INTERNAL_H
#define SRNIC_ENGINE_INTERNAL_H

#include "srnic_engine.h"
#include "srnic_engine_state.h"
#include "srnic_flow.h"
#include "srnic_rto.h"
#include "srnic_port.h"
#include "srnic_sched.h"
#include "srnic_requester.h"
#include "srnic_responder.h"
#include "srnic_completer.h"
#include "srnic_group.h"
#include "srnic_control.h"

/* An operation the datapath core runs for another thread. */
struct srnic_call {
	void (*fn)(struct srnic_engine *eng, struct srnic_call *c);
	void *arg;
	const void *arg2;
	void *arg3;
	int result;
	uint32_t done;
};

/* engine.c: fill m (the strings are cut to fit). */
void srnic_eal_memory_set(struct srnic_eal_memory *m, const char *prefix,
			  const char *huge_dir, const char *base_va);

/* eal_files.c: the files DPDK leaves for each secondary process in a
 * node's runtime directory.  The directory EAL uses for prefix (0), or
 * -1 when it does not fit in len ... */
int srnic_eal_runtime_dir(const char *prefix, char *out, size_t len);
/* ... and pid's files there removed (an exited process's, or ours before
 * EAL starts): how many. */
unsigned srnic_eal_files_forget(const char *dir, int pid);

/* attach.c: a process joins srnicd's node (process side) */
/* Connect to srnicd if one serves the node (cfg.srnicd_socket): 1 and
 * the engine attached (mode, slot, lcore, EAL memory), 0 when none runs
 * (the engine stays embedded), or a negative errno with the reason in
 * err (srnicd refused, or spoke nonsense). */
int srnic_attach(struct srnic_engine *eng, char *err, unsigned errlen);
/* Whether srnicd, to which the process is attached, has gone (its end of
 * the socket closed). */
bool srnic_attach_gone(const struct srnic_engine *eng);
/* Let go of srnicd: it releases whatever the process held. */
void srnic_attach_close(struct srnic_engine *eng);
/* The engine's thread, every few ms, token or not: whether srnicd is
 * gone (fatal becomes SRNIC_FATAL_SEEN).  Then the next iteration, under
 * the token, fails every QP and reports DEVICE_FATAL, once
 * (srnic_attach_fail_all: SRNIC_FATAL_DONE). */
#define SRNIC_FATAL_SEEN 1
#define SRNIC_FATAL_DONE 2
void srnic_attach_check(struct srnic_engine *eng);
void srnic_attach_fail_all(struct srnic_engine *eng);

/* engine.c */
/* Run c at once if the datapath has not started (and keep it from
 * starting meanwhile); false when it runs, and c must go to it. */
bool srnic_engine_call_unstarted(struct srnic_engine *eng,
				 struct srnic_call *c);

/* datapath.c */
/* Run c under the datapath token and wait for it to finish. */
void srnic_engine_call(struct srnic_engine *eng, struct srnic_call *c);
/* The engine thread's loop, until eng->stop; it returns holding the token
 * (and eng->dp_abandoned says the datapath must not be touched again). */
void srnic_datapath_loop(struct srnic_engine *eng);
/* Wake the engine's thread if it naps. */
void srnic_datapath_wake(struct srnic_engine *eng);
/* The process exits from inside an iteration this thread runs (a signal
 * handler that calls exit): that iteration never ends, and the engine's
 * stop leaves the datapath, its ports and links untouched. */
void srnic_datapath_abandon(struct srnic_engine *eng);
void srnic_qp_lists_remove(struct srnic_engine *eng, struct srnic_qp *qp);
void srnic_doorbells_drain_all(struct srnic_engine *eng);

/* incarnation.c: the next incarnation of the node (boot count and random
 * bits); -1 with a reason in err when the boot count cannot be kept. */
int srnic_incarnation_draw(const struct srnic_config *cfg, uint32_t *inc,
			   char *err, unsigned errlen);
/* ... and the node's claim by this process (srnicd, or a program with no
 * srnicd to attach to): -1 with a reason when another holds it. */
int srnic_node_claim(const struct srnic_config *cfg, char *err,
		     unsigned errlen);
void srnic_node_release(void);

/* dispatch.c: receive */
unsigned srnic_rx_ports(struct srnic_engine *eng);
void srnic_rx_handled(struct srnic_engine *eng);

/* dispatch.c: srnicd's node, the port poller passes frame m, with one
 * more reference each, to the rings of the processes in the mask procs
 * (bit = slot), and wakes them; what could not go is counted. */
void srnic_procs_queue(struct srnic_engine *eng, uint32_t procs,
		       struct rte_mbuf *m);

/* dispatch.c: a datagram to a group, off a port (m, NULL in unit tests,
 * is its frame): to the node's other member processes; whether this one
 * has members too. */
bool srnic_mcast_forward(struct srnic_engine *eng, const struct srnic_pkt *pkt,
			 struct rte_mbuf *m);

/* service.c: service QPs on the datapath (docs/failover.md) */
void srnic_svc_qps_tick(struct srnic_engine *eng, uint64_t now);
void srnic_svc_resync_rx(struct srnic_engine *eng, struct srnic_qp *qp,
			 const struct srnic_pkt *pkt);
void srnic_svc_resync_ack_rx(struct srnic_engine *eng, struct srnic_qp *qp,
			     const struct srnic_pkt *pkt);
/* The program moved a member's bound QP out of RTS itself. */
void srnic_svc_qp_left(struct srnic_engine *eng, struct srnic_qp *qp);
/* qp is (on) or is no more (off) a service QP the tick looks at. */
void srnic_svc_qp_track(struct srnic_engine *eng, struct srnic_qp *qp,
			bool on);
/* objects.c: a verbs timeout code (4.096 us << code) in TSC cycles */
uint64_t srnic_timeout_tsc(const struct srnic_engine *eng, uint8_t code);

#endif
