/* SPDX-License-Identifier: MIT */
/*
 * The secret a multicast WRITE carries (any thread: computed at a WRITE's
 * start by its sender, and for each packet by a member).  A unicast WRITE
 * names a region by its key, which the region's owner drew and told only
 * the peers it chose; a group's members each hold a region of their own,
 * and one packet goes to all of them, so the packet names the group, and
 * the right to write it comes from the cluster key instead: the rkey slot
 * holds the group in its low 6 bits and above them 26 bits of a keyed
 * hash (SipHash-2-4, libsodium's crypto_shorthash) of the group and the
 * sender's incarnation, under a key drawn from the cluster key.  A node
 * without the cluster key cannot write a group; a forged tag is dropped
 * and counted (bad_key).  The incarnation in the hash means a tag seen on
 * the wire serves only for packets that claim that sender's incarnation,
 * which members drop once the sender restarts (docs/multicast-rdma.md).
 * Without a cluster key (has_key 0) the tag is 0 and any node may write,
 * as control frames are then unauthenticated too.
 */
#include <string.h>

#include <sodium.h>

#include "srnic_group.h"

#define TAG_SHIFT 6	/* the group below it: SRNIC_MAX_GROUPS is 64 */
_Static_assert(SRNIC_MAX_GROUPS == 1u << TAG_SHIFT,
	       "a group's number fits the rkey's low TAG_SHIFT bits");
_Static_assert(sizeof(((struct srnic_engine *)0)->group_tag_key) ==
		       crypto_shorthash_KEYBYTES,
	       "crypto_shorthash is SipHash-2-4: a 16-byte key");

void srnic_group_tag_init(struct srnic_engine *eng)
{
	static const char what[] = "srnic multicast WRITE tag";

	eng->group_tag_on = eng->cfg.has_key != 0;
	if (eng->group_tag_on)
		crypto_generichash(eng->group_tag_key,
				   sizeof(eng->group_tag_key),
				   (const uint8_t *)what, sizeof(what) - 1,
				   eng->cfg.cluster_key,
				   sizeof(eng->cfg.cluster_key));
}

uint32_t srnic_group_rkey(const struct srnic_engine *eng, uint8_t group,
			  uint32_t inc)
{
	uint8_t in[8] = {0}, out[crypto_shorthash_BYTES];
	uint32_t tag;

	if (!eng->group_tag_on)
		return group;
	memcpy(in, &inc, sizeof(inc));
	in[4] = group;
	crypto_shorthash(out, in, sizeof(in), eng->group_tag_key);
	memcpy(&tag, out, sizeof(tag));
	return tag << TAG_SHIFT | group;
}
