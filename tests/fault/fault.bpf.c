/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fault injector of "./srnic testbed fault": a tc classifier on the
 * switch side of one node's rail that drops LOSS_PERMILLE/1000 of the frames
 * and sends DUP_PERMILLE/1000 of them twice.  This machine's kernel has no
 * netem, and DPDK's af_packet transmits past the sending node's own qdiscs,
 * but the bridge's ports have theirs.  (GPL: the kernel lends
 * bpf_get_prandom_u32 and bpf_clone_redirect to GPL programs only.)
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#ifndef LOSS_PERMILLE
#define LOSS_PERMILLE 0
#endif
#ifndef DUP_PERMILLE
#define DUP_PERMILLE 0
#endif
#ifndef INGRESS
#define INGRESS 0
#endif

/* A copy we made ourselves carries this mark, and is let through as is. */
#define COPY_MARK 0x5352dead

static unsigned int (*get_prandom_u32)(void) = (void *)BPF_FUNC_get_prandom_u32;
static long (*clone_redirect)(struct __sk_buff *skb, unsigned int ifindex,
			      unsigned long long flags) =
	(void *)BPF_FUNC_clone_redirect;

__attribute__((section("tc"), used)) int fault(struct __sk_buff *skb)
{
	if (skb->mark == COPY_MARK) {
		skb->mark = 0;
		return TC_ACT_OK;
	}
	if (LOSS_PERMILLE && get_prandom_u32() % 1000 < LOSS_PERMILLE)
		return TC_ACT_SHOT;
	if (DUP_PERMILLE && get_prandom_u32() % 1000 < DUP_PERMILLE) {
		skb->mark = COPY_MARK;
		clone_redirect(skb, skb->ifindex, INGRESS ? BPF_F_INGRESS : 0);
		skb->mark = 0;
	}
	return TC_ACT_OK;
}

char _license[] __attribute__((section("license"), used)) = "GPL";
