/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tc classifier that drops a random PERMILLE/1000 of the frames leaving
 * an interface.  The end-to-end loss test attaches it to the switch side of
 * every rail: this machine's kernel has no netem, and DPDK's af_packet
 * transmits past the sending node's own qdiscs, but the bridge's ports have
 * theirs.  (GPL: the kernel lends bpf_get_prandom_u32 to GPL programs only.)
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#ifndef PERMILLE
#define PERMILLE 10
#endif

static unsigned int (*get_prandom_u32)(void) = (void *)BPF_FUNC_get_prandom_u32;

__attribute__((section("tc"), used)) int lossy(struct __sk_buff *skb)
{
	(void)skb;
	return get_prandom_u32() % 1000 < PERMILLE ? TC_ACT_SHOT : TC_ACT_OK;
}

char _license[] __attribute__((section("license"), used)) = "GPL";
