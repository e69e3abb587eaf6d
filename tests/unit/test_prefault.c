/* SPDX-License-Identifier: MIT */
/*
 * prefault.c on a real memif link: one process holds both ends (a server
 * and a client on the same socket), so both map the link's memfd.  After
 * the links come up only the rings and a few buffers are resident; after
 * srnic_ports_prefault_shared() every page of every memif mapping is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "check.h"
#include "engine_internal.h"

/* kB of memif mappings in this process: their size, and what is resident */
static void memif_kb(unsigned long *size, unsigned long *rss, int *maps)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0;
	unsigned long v;

	*size = *rss = 0;
	*maps = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		/* a mapping's first line: "lo-hi perms offset dev inode path" */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in = strstr(line, "/memfd:memif_region_") != NULL;
			*maps += in;
		} else if (in && sscanf(line, "Size: %lu kB", &v) == 1) {
			*size += v;
		} else if (in && sscanf(line, "Rss: %lu kB", &v) == 1) {
			*rss += v;
		}
	}
	fclose(f);
}

static int port_up(uint16_t id)
{
	struct rte_eth_link link;

	memset(&link, 0, sizeof(link));
	return rte_eth_link_get_nowait(id, &link) == 0 &&
	       link.link_status == RTE_ETH_LINK_UP;
}

static void start(uint16_t id, struct rte_mempool *pool)
{
	struct rte_eth_conf conf;

	memset(&conf, 0, sizeof(conf));
	if (rte_eth_dev_configure(id, 1, 1, &conf) ||
	    rte_eth_rx_queue_setup(id, 0, 1024, 0, NULL, pool) ||
	    rte_eth_tx_queue_setup(id, 0, 1024, 0, NULL) ||
	    rte_eth_dev_start(id)) {
		fprintf(stderr, "port %u did not start\n", id);
		exit(2);
	}
}

int main(void)
{
	char sock[64], srv[160], cli[160];
	char *argv[] = {"test", "--no-pci", "--no-huge", "--no-shconf",
			"--no-telemetry", "-m", "256", srv, cli,
			"--log-level=*:error"};
	struct rte_mempool *pool;
	unsigned long size, rss0, rss1;
	uint64_t until;
	int maps;

	snprintf(sock, sizeof(sock), "/tmp/srnic-prefault-%d.sock", getpid());
	snprintf(srv, sizeof(srv), "--vdev=net_memif0,role=server,id=0,"
		 "socket=%s,socket-abstract=no,bsize=8192", sock);
	snprintf(cli, sizeof(cli), "--vdev=net_memif1,role=client,id=0,"
		 "socket=%s,socket-abstract=no,bsize=8192", sock);
	unlink(sock);	/* (a run of the same pid that crashed) */
	if (rte_eal_init(sizeof(argv) / sizeof(argv[0]), argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 2;
	}
	pool = rte_pktmbuf_pool_create("p", 4095, 0, 0, 8192 + 128, 0);
	if (!pool)
		return 2;
	start(0, pool);
	start(1, pool);
	until = rte_get_timer_cycles() + 5 * rte_get_timer_hz();
	while (!(port_up(0) && port_up(1)) && rte_get_timer_cycles() < until)
		usleep(1000);
	/* (no stop of a port mid-handshake: DPDK 22.11's memif server
	 * panics at that, port.c) */
	if (!CHECK(port_up(0) && port_up(1), "memif link up within 5 s")) {
		unlink(sock);
		return check_summary("prefault");
	}

	memif_kb(&size, &rss0, &maps);
	/* the client's mapping and the server's, of 16 MiB each */
	CHECK(maps == 2, "memif mappings: %d, expected 2", maps);
	CHECK(size >= 2 * 16384, "memif mappings: %lu kB", size);
	CHECK(rss0 < size / 2, "before: %lu of %lu kB resident already", rss0,
	      size);
	srnic_ports_prefault_shared();
	memif_kb(&size, &rss1, &maps);
	CHECK(rss1 == size, "after: %lu of %lu kB resident", rss1, size);
	printf("memif mappings: %d, %lu kB; resident %lu kB before, %lu after\n",
	       maps, size, rss0, rss1);

	/* The ports are left as they are: stopping a memif port anywhere
	 * but on DPDK's interrupt thread can fault it (port.c), and the
	 * process ends here anyway. */
	unlink(sock);
	return check_summary("prefault");
}
