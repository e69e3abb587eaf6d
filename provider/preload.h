/* SPDX-License-Identifier: MIT */
/*
 * What the parts of libsrnic-preload.so share (preload.c, ucma/): none of
 * it is exported, and none of it links libibverbs.
 */
#ifndef SRNIC_PRELOAD_H
#define SRNIC_PRELOAD_H

/* libibverbs' function `name` at `version` (IBVERBS_1.0, ...), wherever
 * libibverbs was loaded from; NULL if it is not loaded. */
void *preload_verbs_fn(const char *name, const char *version);

#endif
