/* SPDX-License-Identifier: MIT */
/*
 * hostile: an attached process that turns on its node (issue 32, hole 3;
 * e2e/26-srnicd, 1b).  Attaching maps the node's DPDK memory read-write,
 * as it must (docs/security.md, "Where srnic promises less"); what srnicd
 * does must not be steered by what such a process writes there.  So it
 * attaches as any program does (a completion queue starts the engine),
 * finds the node in that memory, and writes:
 *   - npeers: 4294967295 (srnicd's JSON and every loop over the peers
 *     would run far past the table);
 *   - its slot's program name: 32 bytes, no NUL, quotes and backslashes
 *     (srnicd's JSON and its log print it);
 *   - its slot's rings (receive, doorbell, calls): pointers to nowhere
 *     (srnicd drains a departed process's ring, and repairs the rings of
 *     a port-token holder that died);
 * and then dies without a word to srnicd, as a crash would.  The test
 * checks that srnicd lives on, answers, and lets go of the slot, and that
 * programs beside it still run.
 *
 * With "lock" (e2e/26-srnicd, 1c) it writes nothing: it takes the node's
 * shared locks (the peer table's, mcast_lock) and stops itself (SIGSTOP)
 * holding them, as a debugger's breakpoint or a freeze might catch a
 * process; the test checks that the node goes on (its HELLOs, a pingpong
 * whose connection resolves its peer under that lock) and then kills it.
 *
 *   hostile [lock]
 *
 * Prints "ok - ..." for each write done, "not ok - ..." if the node is
 * not where it should be; exits 1 then, else ends by _exit(0) right after
 * the last write (its own datapath may fault on the rings first: the test
 * does not read its exit status).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rte_memzone.h>

#include "srnic_node.h"

static int attach(void)
{
	struct ibv_device **devs = ibv_get_device_list(NULL);
	struct ibv_context *ctx;

	if (!devs || !devs[0]) {
		printf("not ok - no srnic device\n");
		return -1;
	}
	ctx = ibv_open_device(devs[0]);
	if (!ctx || !ibv_create_cq(ctx, 16, NULL, NULL, 0)) {
		printf("not ok - no completion queue: the engine did not start\n");
		return -1;
	}
	return 0;
}

/* Our slot: the live one that srnicd named after this program, the
 * highest such (an earlier run's could not still be live). */
static int my_slot(const struct srnic_node *node)
{
	int s;

	for (s = SRNIC_MAX_PROCS - 1; s > 0; s--)
		if (node->proc[s].live &&
		    strncmp(node->proc[s].prog, "hostile",
			    sizeof(node->proc[s].prog)) == 0)
			return s;
	return -1;
}

/* Take a shared lock of the node as its code does (robust: a holder that
 * died leaves it to us). */
static void take(pthread_mutex_t *lock)
{
	if (pthread_mutex_lock(lock) == EOWNERDEAD)
		pthread_mutex_consistent(lock);
}

static int hold_locks(struct srnic_node *node)
{
	take(&node->peer_lock);
	take(&node->mcast_lock);
	printf("ok - holding the peer table's lock and mcast_lock: stopping\n");
	raise(SIGSTOP);
	printf("ok - continued\n");
	return 0;
}

int main(int argc, char **argv)
{
	const struct rte_memzone *mz;
	struct srnic_node *node;
	struct srnic_proc *me;
	int slot;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (attach())
		return 1;
	mz = rte_memzone_lookup(SRNIC_NODE_MZ);
	if (!mz || mz->len < sizeof(*node) || !(node = mz->addr)->shared) {
		printf("not ok - srnicd's node is not in this process's memory\n");
		return 1;
	}
	slot = my_slot(node);
	if (slot < 0) {
		printf("not ok - no slot of the node is this program's\n");
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "lock"))
		return hold_locks(node);
	me = &node->proc[slot];
	printf("ok - attached in slot %d, %u peers\n", slot, node->npeers);
	__atomic_store_n(&node->npeers, 0xffffffffu, __ATOMIC_RELEASE);
	printf("ok - npeers written: %u\n", node->npeers);
	memset(me->prog, '"', sizeof(me->prog));
	me->prog[3] = '\\';
	printf("ok - program name written: 32 bytes, no NUL\n");
	printf("ok - rings of slot %d pointed to nowhere, and gone\n", slot);
	me->rx = (struct rte_ring *)(uintptr_t)0x10;
	me->doorbell = (struct rte_ring *)(uintptr_t)0x20;
	me->calls = (struct rte_ring *)(uintptr_t)0x30;
	_exit(0);
}
