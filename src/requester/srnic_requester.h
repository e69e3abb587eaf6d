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

#endif
