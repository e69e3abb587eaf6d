/* SPDX-License-Identifier: MIT */
/*
 * srnicd: the node's adapter as a daemon, one per node.
 *
 *   srnicd [--conf FILE]      (or $SRNIC_CONF, or /etc/srnic/srnic.conf)
 *
 * It runs the node (ports, control core, counters) as DPDK's primary
 * process, with the node's state in DPDK memory, and serves the node's
 * socket (srnicd_socket in the configuration): every process that opens
 * srnic0 while it runs attaches to it and runs the datapath of its own QPs
 * in that memory (docs/architecture.md).  It runs until SIGTERM, SIGINT or
 * a SHUTDOWN request, then says goodbye on every link.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srnicd.h"

/* Where the node's DPDK memory is mapped, in srnicd and in every process
 * of the node: clear of the usual mappings and of AddressSanitizer's
 * shadow memory, so that instrumented programs can attach too. */
#define NODE_BASE_VA "0x500000000000"

static volatile int stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* A hugetlbfs mount for the node's memory files: the first in
 * /proc/mounts. */
static int huge_dir(char *out, size_t size)
{
	char dev[64], dir[256], type[64];
	FILE *f = fopen("/proc/mounts", "r");
	int found = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%63s %255s %63s %*[^\n]", dev, dir, type) == 3)
		if (!strcmp(type, "hugetlbfs") && strlen(dir) < size) {
			snprintf(out, size, "%s", dir);
			found = 0;
			break;
		}
	fclose(f);
	return found;
}

/* The EAL file prefix of the node: its name, and a hash of its socket's
 * path, so that two testbeds' nodes "a" never share one. */
static void file_prefix(const struct srnic_config *cfg, char *out,
			size_t size)
{
	uint32_t h = 2166136261u;
	const char *c;

	for (c = cfg->srnicd_socket; *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;
	snprintf(out, size, "srnicd-%s-%08x", cfg->node, h);
}

/* The kernel's autogroup scheduling gives srnicd's session a group of its
 * own, and a busy session's threads then kept srnicd's off both CPUs for
 * up to 580 ms here (docs/architecture.md, "Scheduling"): said once, in
 * the log, where a host that has not run ./srnic setup would look. */
static void say_autogroup(void)
{
	FILE *f = fopen("/proc/sys/kernel/sched_autogroup_enabled", "r");
	int on = 0;

	if (!f)
		return;
	if (fscanf(f, "%d", &on) != 1)
		on = 0;
	fclose(f);
	if (on)
		fprintf(stderr, "srnicd: kernel.sched_autogroup_enabled is 1: "
			"busy programs of another session may keep this "
			"node's threads off the CPUs for hundreds of ms; "
			"./srnic setup (or sysctl "
			"kernel.sched_autogroup_enabled=0) turns it off\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"conf", required_argument, 0, 'c'},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0}};
	struct srnic_config cfg;
	struct srnic_engine *eng;
	struct sigaction sa;
	sigset_t stops;
	char err[320], huge[128], prefix[64];
	int c, rc;

	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			setenv("SRNIC_CONF", optarg, 1);
			break;
		default:
			fprintf(stderr, "usage: srnicd [--conf FILE]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (srnic_config_load(&cfg, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (!cfg.hugepages) {
		fprintf(stderr, "srnicd: %s says 'hugepages = no', but the "
			"node's processes share its memory through hugepage "
			"files\n", cfg.path);
		return 1;
	}
	if (cfg.huge_dir[0])
		snprintf(huge, sizeof(huge), "%s", cfg.huge_dir);
	else if (huge_dir(huge, sizeof(huge))) {
		fprintf(stderr, "srnicd: no hugetlbfs is mounted: mount one "
			"(mount -t hugetlbfs nodev /dev/hugepages) or name one "
			"with huge_dir in %s (the testbed mounts its own)\n",
			cfg.path);
		return 1;
	}
	file_prefix(&cfg, prefix, sizeof(prefix));
	say_autogroup();

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* (blocked in every thread: this one lets them in only while it
	 * waits in srnicd_serve's ppoll(), which a stop then cuts short;
	 * an idle node's poll lasts IDLE_POLL_MS) */
	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stops, NULL);

	srnic_engine_be_node(prefix, huge, NODE_BASE_VA);
	eng = srnic_engine_get(&cfg, err, sizeof(err));
	if (!eng) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	rc = srnic_engine_start(eng, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	rc = srnicd_serve(eng, &stop);
	srnic_engine_put(eng);
	fprintf(stderr, "srnicd: node %s stopped\n", cfg.node);
	return rc ? 1 : 0;
}
