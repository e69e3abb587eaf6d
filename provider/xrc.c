/* SPDX-License-Identifier: MIT */
/*
 * XRC domains (ibv_open_xrcd): what groups XRC SRQs and the XRC target QPs
 * that may receive for them.  A domain opened on a file is the same
 * domain to every open of that file in this process (a count keeps it);
 * one opened without a file is private to its opener.  srnic's datapath
 * places each process's data in that process's memory, so a domain is a
 * process's: another process opening the same file gets a domain of its
 * own (docs/verbs.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "srnic_provider.h"

struct srnic_xrcd {
	struct verbs_xrcd vxrcd;
	dev_t dev;
	ino_t ino;
	int on_file;		/* opened on a file: found by (dev, ino) */
	unsigned opens;
	unsigned users;		/* its SRQs and target QPs */
	struct srnic_xrcd *next;
};

/* The process's domains opened on files; handles number every domain. */
static pthread_mutex_t domains_lock = PTHREAD_MUTEX_INITIALIZER;
static struct srnic_xrcd *domains;
static uint32_t next_handle;

static struct srnic_xrcd *to_sxrcd(struct ibv_xrcd *xrcd)
{
	return (struct srnic_xrcd *)xrcd;
}

uint32_t srnic_xrcd_handle(struct ibv_xrcd *xrcd)
{
	return to_sxrcd(xrcd)->vxrcd.handle;
}

void srnic_xrcd_use(struct ibv_xrcd *xrcd, int delta)
{
	pthread_mutex_lock(&domains_lock);
	to_sxrcd(xrcd)->users += delta;
	pthread_mutex_unlock(&domains_lock);
}

struct ibv_xrcd *srnic_open_xrcd(struct ibv_context *context,
				 struct ibv_xrcd_init_attr *attr)
{
	struct srnic_xrcd *x = NULL;
	struct stat st;
	int fd = -1;

	if (attr->comp_mask & ~(uint32_t)(IBV_XRCD_INIT_ATTR_FD |
					  IBV_XRCD_INIT_ATTR_OFLAGS) ||
	    !(attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS) ||
	    (attr->oflags & ~(O_CREAT | O_EXCL))) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & IBV_XRCD_INIT_ATTR_FD)
		fd = attr->fd;
	if (fd >= 0 && fstat(fd, &st))
		return NULL;	/* (errno: EBADF) */
	pthread_mutex_lock(&domains_lock);
	if (fd >= 0)
		for (x = domains; x; x = x->next)
			if (x->dev == st.st_dev && x->ino == st.st_ino)
				break;
	if (x) {
		/* the file's domain: O_EXCL asked for a new one */
		if (attr->oflags & O_EXCL) {
			pthread_mutex_unlock(&domains_lock);
			errno = EEXIST;
			return NULL;
		}
		x->opens++;
		pthread_mutex_unlock(&domains_lock);
		return &x->vxrcd.xrcd;
	}
	if (fd >= 0 && !(attr->oflags & O_CREAT)) {
		pthread_mutex_unlock(&domains_lock);
		errno = ENOENT;	/* no domain on that file yet */
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		pthread_mutex_unlock(&domains_lock);
		errno = ENOMEM;
		return NULL;
	}
	x->vxrcd.xrcd.context = context;
	x->vxrcd.handle = ++next_handle;
	x->opens = 1;
	if (fd >= 0) {
		x->on_file = 1;
		x->dev = st.st_dev;
		x->ino = st.st_ino;
		x->next = domains;
		domains = x;
	}
	pthread_mutex_unlock(&domains_lock);
	return &x->vxrcd.xrcd;
}

int srnic_close_xrcd(struct ibv_xrcd *xrcd)
{
	struct srnic_xrcd *x = to_sxrcd(xrcd), **p;

	pthread_mutex_lock(&domains_lock);
	if (x->opens == 1 && x->users) {
		pthread_mutex_unlock(&domains_lock);
		return EBUSY;	/* its SRQs and QPs go first */
	}
	if (--x->opens) {
		pthread_mutex_unlock(&domains_lock);
		return 0;
	}
	for (p = &domains; *p; p = &(*p)->next)
		if (*p == x) {
			*p = x->next;
			break;
		}
	pthread_mutex_unlock(&domains_lock);
	free(x);
	return 0;
}
