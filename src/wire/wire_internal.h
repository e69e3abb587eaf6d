/* SPDX-License-Identifier: MIT */
/*
 * What wire.c takes from the other file of wire/: the checksums' sum,
 * csum.c, built on its own (src/wire/meson.build says why).  Nothing
 * outside wire/ calls it.
 */
#ifndef SRNIC_WIRE_INTERNAL_H
#define SRNIC_WIRE_INTERNAL_H

#include <stdint.h>

/* The ones' complement sum of len bytes at p (an odd last byte as the
 * high half of a word), added to sum, folded and not yet inverted: the
 * IPv4, UDP and ICMPv6 checksums' arithmetic. */
uint32_t srnic_wire_ones_sum(const uint8_t *p, uint32_t len, uint32_t sum);

#endif
