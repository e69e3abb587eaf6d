/* SPDX-License-Identifier: MIT */
/*
 * Within port/: what its files call of each other, and nobody else.
 */
#ifndef SRNIC_PORT_INTERNAL_H
#define SRNIC_PORT_INTERNAL_H

#include "srnic_port.h"

/* memif.c: give port i's server socket, once the port runs, its real
 * name (real), or take it back before the port stops. */
void srnic_memif_server_name(struct srnic_engine *eng, unsigned i, bool real);

/* token.c: frames wait for the token: sleep up to us for its holder to
 * give it back. */
void srnic_token_wait(struct srnic_engine *eng, unsigned us);
/* token.c: the token was taken again with frames waiting: after a while,
 * ask the others to leave it to this process. */
void srnic_token_missed(struct srnic_engine *eng);

#endif
