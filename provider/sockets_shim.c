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

/* The plain functions, found by the constructor (or by a first call that
 * comes before it, from another library's constructor). */
static int (*fcntl_f)(int, int, ...);
static ssize_t (*read_f)(int, void *, size_t);
static ssize_t (*recv_f)(int, void *, size_t, int);
static ssize_t (*recvfrom_f)(int, void *, size_t, int, struct sockaddr *,
			     socklen_t *);
static int (*poll_f)(struct pollfd *, nfds_t, int);

EXPORT int fcntl64(int fd, int cmd, ...)
{
	int (*f)(int, int, ...);
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!fcntl_f)
		fcntl_f = plain("fcntl");
	f = fcntl_f;
	return f(fd, cmd, arg);
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (n > buflen)
		__chk_fail();
	if (!read_f)
		read_f = plain("read");
	return read_f(fd, buf, n);
}

EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen,
			  int flags)
{
	if (n > buflen)
		__chk_fail();
	if (!recv_f)
		recv_f = plain("recv");
	return recv_f(fd, buf, n, flags);
}

EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen,
			      int flags, struct sockaddr *from,
			      socklen_t *fromlen)
{
	if (n > buflen)
		__chk_fail();
	if (!recvfrom_f)
		recvfrom_f = plain("recvfrom");
	return recvfrom_f(fd, buf, n, flags, from, fromlen);
}

EXPORT int __poll_chk(struct pollfd *fds, nfds_t nfds, int timeout,
		      size_t fdslen)
{
	if (fdslen / sizeof(*fds) < nfds)
		__chk_fail();
	if (!poll_f)
		poll_f = plain("poll");
	return poll_f(fds, nfds, timeout);
}

/* The plain functions found; then descriptor 0's flags asked through
 * librspreload's fcntl, which sets librspreload up on the way (no socket
 * of its exists yet for 0 to be). */
__attribute__((constructor)) static void shim_start(void)
{
	fcntl_f = plain("fcntl");
	read_f = plain("read");
	recv_f = plain("recv");
	recvfrom_f = plain("recvfrom");
	poll_f = plain("poll");
	(void)fcntl_f(0, F_GETFD);
}
