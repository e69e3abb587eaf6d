/* SPDX-License-Identifier: MIT */
/*
 * requester/: send WQEs into packets, on a QP's turn (datapath).
 */
#ifndef SRNIC_REQUESTER_H
#define SRNIC_REQUESTER_H

#include "srnic_sched.h"
#include "srnic_port.h"

/* requester.c */
unsigned srnic_requester_run(struct srnic_engine *eng, struct srnic_qp *qp,
			     unsigned budget);

/* third_party.c: ask the data source of third-party WRITE idx for len
 * bytes (0: the rest) of it from off, cut at packets of 1 << shift, under
 * the attempt's txid (flags: SRNIC_F_PROBE, or none).  1 when the request
 * went out (or was lost: no port reaches the source), 0 when no port or
 * buffer could take it now, -1 when the WQE failed (its QP to the source
 * is gone). */
int srnic_tp_request(struct srnic_engine *eng, struct srnic_qp *qp,
		     uint32_t idx, uint32_t off, uint32_t len, uint16_t flags,
		     uint8_t shift);

#endif
