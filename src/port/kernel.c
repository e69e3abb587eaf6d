/* SPDX-License-Identifier: MIT */
/*
 * Ports that ride a kernel interface: af_packet on an interface, and the
 * tap wire, whose port is a tap that DPDK makes and that joins the bridge
 * of the port's link (a host's NIC, or a veth in the testbed).  Slow path
 * only: the node's process (srnicd, or a program running its own node)
 * calls these when it starts a port, and the control core when it follows
 * a link.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/sockios.h>

#include "srnic_port.h"

/* Whether IFACE is a bridge (its link can be one: the tap joins it). */
static bool is_bridge(const char *iface)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/class/net/%s/bridge", iface);
	return access(path, F_OK) == 0;
}

bool srnic_port_is_tap(const char *arg)
{
	return strncmp(arg, "net_tap", 7) == 0;
}

/* The value of "key=" in a port's vdev arguments, or "". */
static void vdev_value(const char *arg, const char *key, char *out,
		       size_t size)
{
	size_t klen = strlen(key), n;
	const char *s = arg;

	out[0] = '\0';
	while ((s = strchr(s, ',')) != NULL) {
		s++;
		if (strncmp(s, key, klen) || s[klen] != '=')
			continue;
		s += klen + 1;
		n = strcspn(s, ",");
		if (n && n < size) {
			memcpy(out, s, n);
			out[n] = '\0';
		}
		return;
	}
}

/*
 * Bytes of frame a buffer of the node's pool must hold for port arg's
 * driver to take the pool at all (0: whatever srnic's own frames need).
 * DPDK's af_packet refuses a pool whose buffers hold less than its ring
 * slot (its framesz argument, 2048 unless given) less the slot's
 * header, 32 bytes of TPACKET2_HDRLEN beyond its sockaddr_ll: an
 * "out of memory" at the port's start, with framesz=8192 for 4 KiB of
 * payload.
 */
unsigned srnic_port_buf_need(const char *arg)
{
	char v[16];
	unsigned long framesz = 2048;

	if (strncmp(arg, "net_af_packet", 13))
		return 0;
	vdev_value(arg, "framesz", v, sizeof(v));
	if (v[0])
		framesz = strtoul(v, NULL, 0);
	return framesz > 32 && framesz <= 32768 ? (unsigned)framesz - 32
					       : 0;
}

void srnic_port_kernel_iface(const struct srnic_config *cfg, unsigned i,
			     char *out, size_t size)
{
	out[0] = '\0';
	if (strncmp(cfg->port[i], "net_af_packet", 13) == 0)
		vdev_value(cfg->port[i], "iface", out, size);
	else if (srnic_port_is_tap(cfg->port[i]) && !is_bridge(cfg->link[i]))
		snprintf(out, size, "%s", cfg->link[i]);
}

/*
 * Whether the port's cable is in: DPDK's af_packet says "up" whatever the
 * kernel interface's carrier, and a tap is up whatever its link's, so ask
 * the kernel (control core only; a port on no kernel interface answers 1).
 */
int srnic_port_carrier(const struct srnic_port *port)
{
	char path[64], c = '1';
	FILE *f;

	if (!port->iface[0])
		return 1;
	snprintf(path, sizeof(path), "/sys/class/net/%s/carrier", port->iface);
	f = fopen(path, "r");
	if (!f)
		return 1;	/* cannot tell: trust DPDK */
	if (fread(&c, 1, 1, f) != 1)
		c = '0';	/* an interface that is down reads EINVAL */
	fclose(f);
	return c == '1';
}

/*
 * DPDK 22.11's tap asks the kernel for a real-time signal on every frame
 * its receive queue gets (O_ASYNC), and its receive burst reads only when
 * a signal has come since the last empty read.  The signal goes to the
 * process that made the queue, so on a shared node it would be srnicd,
 * woken once a frame while its processes do the reading, on a machine
 * with few cores for everyone.  Without the signals its counter stays 0,
 * and a burst reads whenever it is called (one read system call an empty
 * poll, which the datapath's naps already bound).  Called after the
 * queues are made and before the port starts: the tap is down until
 * then, so no signal has come yet (one that had would leave the burst
 * waiting for another).
 */
void srnic_port_tap_quiet(void)
{
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	struct stat st;
	int fd, fl;

	if (!dir)
		return;
	while ((d = readdir(dir)) != NULL) {
		fd = atoi(d->d_name);
		if (d->d_name[0] == '.' || fd == dirfd(dir))
			continue;
		/* (the tun device, 10:200, whatever path it was opened by:
		 * a testbed's node reaches it through a /dev of its own) */
		if (fstat(fd, &st) || !S_ISCHR(st.st_mode) ||
		    st.st_rdev != makedev(10, 200))
			continue;
		fl = fcntl(fd, F_GETFL);
		if (fl >= 0 && (fl & O_ASYNC))
			fcntl(fd, F_SETFL, fl & ~O_ASYNC);
	}
	closedir(dir);
}

/* The bridge IFACE is a port of, into br (size IFNAMSIZ); -ENOENT when it
 * is in none. */
static int master_of(const char *iface, char *br)
{
	char path[96], target[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/class/net/%s/master", iface);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return -ENOENT;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= IFNAMSIZ)
		return -ENAMETOOLONG;
	strcpy(br, base);
	return 0;
}

/*
 * A bridge delivers a frame addressed to one of its ports' own MACs to
 * its host, not out of that port; DPDK gives the tap's kernel side the
 * port's MAC, so the node would never see a frame sent to it.  The kernel
 * side takes another (bit 2 of the first byte flipped: still unicast and
 * locally administered), and the port keeps its own in its frames.
 */
static int kernel_side_mac(int s, const char *tap, const uint8_t mac[6])
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", tap);
	ifr.ifr_hwaddr.sa_family = 1;	/* ARPHRD_ETHER */
	memcpy(ifr.ifr_hwaddr.sa_data, mac, 6);
	ifr.ifr_hwaddr.sa_data[0] ^= 0x04;
	return ioctl(s, SIOCSIFHWADDR, &ifr) < 0 ? -errno : 0;
}

/*
 * What the kernel queues for the tap's reader: a frame that finds the
 * queue full is dropped.  The datapath that reads it shares a few CPUs
 * with everything else and may be off one for a time slice (some ms);
 * the kernel's default, 1000 frames, overflowed so under one ib_write_bw
 * on two CPUs.  As many as an af_packet port's ring holds.
 */
#define TAP_QUEUE_FRAMES 4096

static void tap_queue_len(int s, const char *tap)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", tap);
	ifr.ifr_qlen = TAP_QUEUE_FRAMES;
	(void)ioctl(s, SIOCSIFTXQLEN, &ifr);	/* (the default will do) */
}

/* Put tap port i's kernel side (tap) in the bridge of its link, with the
 * MAC the kernel side takes; s is a socket for the ioctls. */
static int tap_join_link(const struct srnic_config *cfg, unsigned i, int s,
			 const char *tap, const uint8_t mac[6], char *err,
			 unsigned errlen)
{
	const char *link = cfg->link[i];
	char br[IFNAMSIZ];
	struct ifreq ifr;
	int rc;

	if (!tap[0]) {
		snprintf(err, errlen, "srnic: port %u: a tap with a link needs "
			 "its interface named (iface=NAME) in %s", i,
			 cfg->path);
		return -EINVAL;
	}
	if (!if_nametoindex(link)) {
		snprintf(err, errlen, "srnic: port %u: its link %s is no "
			 "interface of this network namespace (%s)", i, link,
			 cfg->path);
		return -ENODEV;
	}
	if (is_bridge(link))
		snprintf(br, sizeof(br), "%s", link);
	else if (master_of(link, br)) {
		snprintf(err, errlen, "srnic: port %u: its link %s is in no "
			 "bridge: put it in one (ip link add br0 type bridge; "
			 "ip link set %s master br0; docs/install.md)", i,
			 link, link);
		return -ENOENT;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", br);
	ifr.ifr_ifindex = (int)if_nametoindex(tap);
	if (s < 0)
		rc = -EBADF;	/* (the caller's socket() failed) */
	else if (!ifr.ifr_ifindex)
		rc = -ENODEV;
	else
		rc = kernel_side_mac(s, tap, mac);
	if (rc == 0 && ioctl(s, SIOCBRADDIF, &ifr) < 0)
		rc = -errno;
	if (rc && rc != -EBUSY) {	/* (EBUSY: a port of it already) */
		snprintf(err, errlen, "srnic: port %u: tap %s could not join "
			 "bridge %s of its link %s: %s", i, tap, br, link,
			 strerror(-rc));
		return rc;
	}
	return 0;
}

int srnic_port_tap_setup(const struct srnic_config *cfg, unsigned i,
			 const uint8_t mac[6], char *err, unsigned errlen)
{
	char tap[IFNAMSIZ];
	int s, rc = 0;

	if (!srnic_port_is_tap(cfg->port[i]))
		return 0;
	vdev_value(cfg->port[i], "iface", tap, sizeof(tap));
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (tap[0] && s >= 0)
		tap_queue_len(s, tap);
	if (cfg->link[i][0])
		rc = tap_join_link(cfg, i, s, tap, mac, err, errlen);
	if (s >= 0)
		close(s);
	return rc;
}
