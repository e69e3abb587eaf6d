/* SPDX-License-Identifier: MIT */
/*
 * libsrnic-sockets.so: what rsockets' preload library (rdma-core 44's
 * librspreload) needs to carry the programs Debian builds.  Loaded by
 * "./srnic exec --sockets" between srnic's preload library and
 * librspreload; runs in the program's threads.
 *
 * librspreload interposes the socket calls by their plain names.  A
 * program built with 64-bit file offsets calls fcntl64, and one built
 * with _FORTIFY_SOURCE (Debian's packages are) calls __read_chk,
 * __recv_chk, __recvfrom_chk and __poll_chk where the buffer's size is
 * known: those reach the C library itself with librspreload's socket
 * number, a descriptor of /dev/null.  socat so spun on a recv() that
 * never saw its connection, and its O_NONBLOCK never reached rsockets.
 * Each is taken here, checked as the C library checks it, and passed on
 * by its plain name, which librspreload serves.
 *
 * librspreload also finds the C library's functions on a program's first
 * socket call: a recv() before any (socat's client makes one, on a file)
 * called through a null pointer.  The constructor makes a harmless call
 * it serves first.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* The C library's own failure for a buffer overrun a check found. */
extern void __chk_fail(void) __attribute__((noreturn));

/* The first definition of name in the program's scope (librspreload's,
 * where it is loaded). */
static void *plain(const char *name)
{
	void *f = dlsym(RTLD_DEFAULT, name);

	if (!f)
		abort();
	return f;
}

/* (on an LP64 system fcntl and fcntl64 are one call: off_t is 64 bits) */
_Static_assert(sizeof(long) == 8, "fcntl64 is fcntl only where off_t is 64 bits");

EXPORT int fcntl64(int fd, int cmd, ...)
{
	static int (*f)(int, int, ...);
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!f)
		f = plain("fcntl");
	return f(fd, cmd, arg);
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	static ssize_t (*f)(int, void *, size_t);

	if (n > buflen)
		__chk_fail();
	if (!f)
		f = plain("read");
	return f(fd, buf, n);
}

EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen,
			  int flags)
{
	static ssize_t (*f)(int, void *, size_t, int);

	if (n > buflen)
		__chk_fail();
	if (!f)
		f = plain("recv");
	return f(fd, buf, n, flags);
}

EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen,
			      int flags, struct sockaddr *from,
			      socklen_t *fromlen)
{
	static ssize_t (*f)(int, void *, size_t, int, struct sockaddr *,
			    socklen_t *);

	if (n > buflen)
		__chk_fail();
	if (!f)
		f = plain("recvfrom");
	return f(fd, buf, n, flags, from, fromlen);
}

EXPORT int __poll_chk(struct pollfd *fds, nfds_t nfds, int timeout,
		      size_t fdslen)
{
	static int (*f)(struct pollfd *, nfds_t, int);

	if (fdslen / sizeof(*fds) < nfds)
		__chk_fail();
	if (!f)
		f = plain("poll");
	return f(fds, nfds, timeout);
}

/* (descriptor 0's flags: librspreload sets itself up on the way; no
 * socket of its exists yet for 0 to be) */
__attribute__((constructor)) static void wake_rspreload(void)
{
	int (*f)(int, int, ...) = dlsym(RTLD_DEFAULT, "fcntl");

	if (f)
		(void)f(0, F_GETFD);
}
