/* SPDX-License-Identifier: MIT */
/*
 * The ones' complement sum of the IPv4, UDP and ICMPv6 checksums
 * (wire_internal.h).  Over IPv6 every frame's UDP checksum covers its
 * whole payload, kilobytes, so this goes 8 bytes a step: words loaded in
 * the host's order sum to the network order's sum with its two bytes
 * swapped (RFC 1071, 2(B)), and 2^32 is 1 to a 16-bit ones' complement
 * sum, so each 64-bit word goes in as its two halves, into 64 bits no
 * uint32_t length can overflow, and the carries fold back once at the end.
 *
 * The loop is one the compiler vectorizes at -O3, which this file alone
 * is built with (src/wire/meson.build; gcc's -O2 leaves it scalar); gcc
 * builds it twice, for AVX2 and for any x86-64, and the loader picks the
 * one the CPU runs (measured on 4 KiB: 190-300 ns as -O2 builds it, 71 ns
 * vectorized for AVX2; ib_write_bw over IPv6 on memif, whose frames are 4
 * KiB, ran at 0.53 of IPv4's with the former).  (Not under the
 * sanitizers, nor clang, which the fuzzers build with: one plain build
 * there.)
 */
#include <string.h>

#include "wire_internal.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
	!defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx2", "default")))
#endif
uint32_t srnic_wire_ones_sum(const uint8_t *p, uint32_t len, uint32_t sum)
{
	uint64_t acc = 0, w;
	uint32_t i = 0, v32;
	uint16_t v16;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		acc += (uint32_t)w;
		acc += w >> 32;
	}
	if (i + 4 <= len) {
		memcpy(&v32, p + i, 4);
		acc += v32;
		i += 4;
	}
	if (i + 2 <= len) {
		memcpy(&v16, p + i, 2);
		acc += v16;
		i += 2;
	}
	if (i < len) {
		const uint8_t odd[2] = {p[i], 0};

		memcpy(&v16, odd, 2);
		acc += v16;
	}
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	acc = (uint16_t)(acc << 8 | acc >> 8);
#endif
	sum += (uint32_t)acc;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}
