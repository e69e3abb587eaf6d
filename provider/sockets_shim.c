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
 * by its plain name, which librspreload serves.  F_GETFD and F_SETFD
 * (close-on-exec), which librspreload has rsockets refuse, go to the
 * descriptor the program holds.
 *
 * librspreload 44's select() hands the ready bits back to the wrong
 * descriptors: it maps each back by scanning for the first descriptor
 * whose rsocket matches, and an rsocket's number is a descriptor of the
 * program's too (its rdma_cm channel).  A program in select() then sees
 * its call return with none of its bits set, and spins (socat did, in
 * its transfer loop, reading nothing).  rdma-core fixed it after 44
 * ("librdmacm: Fix select function"); select() here is written over
 * librspreload's poll(), which maps each entry in place.
 *
 * rsockets' poll sleeps on a listener's rdma_cm channel, whose events its
 * own listening thread takes: it sees a connection only when its sleep
 * (wake_up_interval, 5 s) ends.  A poll or select here that waits on a
 * descriptor the program listened on wakes every LISTEN_SLICE_MS to look
 * at the accept queue again.
 *
 * rdma-core 44's rpoll() must never reach a timeout of its own: one that
 * runs out leaves its count of pollers one too high (fixed upstream in
 * "librdmacm: Fix rpoll in case of timeout"), after which every rpoll() of
 * the process spins and ignores its timeout.  So a wait here hands
 * librspreload's poll no timeout: its end (or a listener's next look) is
 * a timerfd of the thread's, one more descriptor in the set, that wakes
 * rpoll() as an event would.
 *
 * librspreload also finds the C library's functions on a program's first
 * socket call: a recv() before any (socat's client makes one, on a file)
 * called through a null pointer.  The constructor makes a harmless call
 * it serves first.
 */
/* (the build's 64-bit offsets would make the fcntl defined here fcntl64:
 * both names are defined below, each as itself) */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
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

/* The next definition after this library's own (for the calls it also
 * defines: librspreload's). */
static void *next(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f)
		abort();
	return f;
}

/* How long a wait on a listener sleeps before it looks again: the most a
 * connection waits to be seen, and 100 wake-ups a second while none comes. */
#define LISTEN_SLICE_MS 10

/* The descriptors the program listened on (below LISTENERS_MAX: one at or
 * above it is never marked, and a wait on it sleeps as rsockets' do). */
#define LISTENERS_MAX 4096
static unsigned char listening[LISTENERS_MAX];

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
static int (*listen_f)(int, int);
static int (*close_f)(int);

EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	/* close-on-exec belongs to the descriptor the program holds, which
	 * for an rsocket is librspreload's stand-in: the kernel keeps it */
	if (cmd == F_GETFD || cmd == F_SETFD)
		return (int)syscall(SYS_fcntl, fd, cmd, arg);
	if (!fcntl_f)
		fcntl_f = next("fcntl");
	return fcntl_f(fd, cmd, arg);
}

EXPORT int fcntl64(int fd, int cmd, ...) __attribute__((alias("fcntl")));

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
	return poll(fds, nfds, timeout);
}

static int64_t now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

EXPORT int listen(int fd, int backlog)
{
	int ret;

	if (!listen_f)
		listen_f = next("listen");
	ret = listen_f(fd, backlog);
	if (!ret && fd >= 0 && fd < LISTENERS_MAX)
		listening[fd] = 1;
	return ret;
}

/* The thread's timer for its waits (-1 until its first; -2 where the
 * kernel gave none, and waits go as librspreload's do). */
static __thread int wait_timer = -1;

/* In a wait of the thread's (rpoll() polls the descriptors under its
 * rsockets by the name poll too). */
static __thread bool in_wait;

/* The thread's copy of a wait's set, with room for its timer. */
static __thread struct pollfd *wait_set;
static __thread nfds_t wait_room;

static pthread_key_t timer_key, set_key;
static pthread_once_t timer_once = PTHREAD_ONCE_INIT;

/* A thread's timer closed as it ends; a forked child's copy of the
 * forking thread's closed, the open timer being its parent's too. */
static void timer_gone(void *fd)
{
	syscall(SYS_close, (int)(intptr_t)fd - 1);
}

static void timer_forked(void)
{
	if (wait_timer >= 0) {
		syscall(SYS_close, wait_timer);
		wait_timer = -1;
		pthread_setspecific(timer_key, NULL);
	}
}

/* The thread's copy of a wait's set, as it ends (another key's
 * destructor may still wait after this one: it makes a new copy). */
static void set_gone(void *set)
{
	free(set);
	wait_set = NULL;
	wait_room = 0;
}

static void timer_key_init(void)
{
	pthread_key_create(&timer_key, timer_gone);
	/* (and the thread's copy of a wait's set goes with it) */
	pthread_key_create(&set_key, set_gone);
	pthread_atfork(NULL, NULL, timer_forked);
}

static bool arm_timer(int64_t us)
{
	struct itimerspec t = {
		.it_value = {.tv_sec = us / 1000000,
			     .tv_nsec = (us % 1000000) * 1000},
	};

	if (wait_timer == -1) {
		pthread_once(&timer_once, timer_key_init);
		wait_timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (wait_timer >= 0)
			pthread_setspecific(timer_key, (void *)(intptr_t)(wait_timer + 1));
	}
	if (wait_timer < 0) {
		wait_timer = -2;
		return false;
	}
	return timerfd_settime(wait_timer, 0, &t, NULL) == 0;
}

EXPORT int close(int fd)
{
	if (!close_f)
		close_f = next("close");
	if (fd >= 0 && fd < LISTENERS_MAX)
		listening[fd] = 0;
	/* (a program that closes every descriptor, as a daemon does, takes
	 * this thread's timer too: the next wait makes another) */
	if (fd >= 0 && fd == wait_timer) {
		wait_timer = -1;
		pthread_setspecific(timer_key, NULL);
	}
	return close_f(fd);
}

static bool waits_on_listener(const struct pollfd *fds, nfds_t nfds)
{
	nfds_t i;

	for (i = 0; i < nfds; i++)
		if (fds[i].fd >= 0 && fds[i].fd < LISTENERS_MAX && listening[fds[i].fd])
			return true;
	return false;
}

/* librspreload's poll with no timeout of its own (see the top): a wait
 * that ends, or looks at a listener again, ends by the thread's timer. */
EXPORT int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	bool listener = waits_on_listener(fds, nfds);
	int64_t end = timeout > 0 ? now_us() + (int64_t)timeout * 1000 : 0;
	nfds_t i;
	int ret;

	if (!poll_f)
		poll_f = next("poll");
	/* (rpoll's own poll of the descriptors under the rsockets comes here
	 * too, inside a wait of ours: it goes on as it is, to the kernel) */
	if (!timeout || (timeout < 0 && !listener) || in_wait)
		return poll_f(fds, nfds, timeout);
	if (nfds + 1 > wait_room) {
		struct pollfd *n = realloc(wait_set, (nfds + 1) * sizeof(*n));

		if (!n) {
			errno = ENOMEM;
			return -1;
		}
		pthread_once(&timer_once, timer_key_init);
		pthread_setspecific(set_key, n);
		wait_set = n;
		wait_room = nfds + 1;
	}
	for (;;) {
		int64_t wait = timeout < 0 ? INT64_MAX : end - now_us();

		if (wait <= 0)
			return 0;
		if (listener && wait > LISTEN_SLICE_MS * 1000)
			wait = LISTEN_SLICE_MS * 1000;
		if (!arm_timer(wait))
			return poll_f(fds, nfds, timeout);
		memcpy(wait_set, fds, nfds * sizeof(*fds));
		wait_set[nfds] = (struct pollfd){.fd = wait_timer, .events = POLLIN};
		in_wait = true;
		ret = poll_f(wait_set, nfds + 1, -1);
		in_wait = false;
		if (ret < 0)
			return ret;
		for (i = 0; i < nfds; i++)
			fds[i].revents = wait_set[i].revents;
		ret -= wait_set[nfds].revents != 0;
		if (ret)
			return ret;
	}
}

/* select() as poll(): one entry per descriptor in any set, and back; a
 * descriptor is readable on data, hang-up or error, as the kernel's
 * select() says, and writable on room, error or hang-up (rsockets says a
 * peer that left with no credit for us by POLLHUP alone: a write fails at
 * once, where waiting for room would wait for good).  An entry whose
 * events none of its sets asked for is left out of the rest of the wait.
 * The timeout is rounded up to poll's milliseconds and left holding what
 * remains, as Linux does. */
EXPORT int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
		  struct timeval *tv)
{
	struct pollfd fds[FD_SETSIZE];
	int64_t end = 0, left = 0;
	int fd, n = 0, ready = 0, got, i, j;

	if (nfds < 0 || (tv && (tv->tv_sec < 0 || tv->tv_usec < 0))) {
		errno = EINVAL;
		return -1;
	}
	if (nfds > FD_SETSIZE)
		nfds = FD_SETSIZE;	/* (the sets hold no more) */
	for (fd = 0; fd < nfds; fd++) {
		short ev = (rd && FD_ISSET(fd, rd) ? POLLIN : 0) |
			   (wr && FD_ISSET(fd, wr) ? POLLOUT : 0) |
			   (ex && FD_ISSET(fd, ex) ? POLLPRI : 0);

		if (ev)
			fds[n++] = (struct pollfd){.fd = fd, .events = ev};
	}
	if (tv) {
		left = tv->tv_sec > INT_MAX / 1000 ? (int64_t)INT_MAX * 1000
			: (int64_t)tv->tv_sec * 1000000 + tv->tv_usec;
		end = now_us() + left;
	}
	for (;;) {
		int64_t ms = -1;

		if (tv) {
			left = end - now_us();
			ms = left <= 0 ? 0 : (left + 999) / 1000;
		}
		got = poll(fds, n, (int)(ms > INT_MAX ? INT_MAX : ms));
		if (got <= 0)
			break;
		for (i = 0; i < n; i++) {
			short ev = fds[i].events, rev = fds[i].revents;

			if (rev & POLLNVAL) {
				errno = EBADF;
				got = -1;
				goto out;
			}
			ready += ((ev & POLLIN) && (rev & (POLLIN | POLLHUP | POLLERR))) +
				 ((ev & POLLOUT) && (rev & (POLLOUT | POLLERR | POLLHUP))) +
				 ((ev & POLLPRI) && (rev & POLLPRI));
		}
		if (ready || (tv && ms == 0))
			break;
		for (i = j = 0; i < n; i++)
			if (!fds[i].revents)
				fds[j++] = fds[i];
		n = j;
	}
out:
	if (tv) {
		left = end - now_us();
		if (left < 0 || (got >= 0 && !ready))
			left = 0;	/* (timed out; an error leaves what remains) */
		tv->tv_sec = left / 1000000;
		tv->tv_usec = left % 1000000;
	}
	if (got < 0)
		return -1;
	if (rd)
		FD_ZERO(rd);
	if (wr)
		FD_ZERO(wr);
	if (ex)
		FD_ZERO(ex);
	for (i = 0; i < n && ready; i++) {
		short ev = fds[i].events, rev = fds[i].revents;

		if ((ev & POLLIN) && (rev & (POLLIN | POLLHUP | POLLERR)))
			FD_SET(fds[i].fd, rd);
		if ((ev & POLLOUT) && (rev & (POLLOUT | POLLERR | POLLHUP)))
			FD_SET(fds[i].fd, wr);
		if ((ev & POLLPRI) && (rev & POLLPRI))
			FD_SET(fds[i].fd, ex);
	}
	return ready;
}

/* The plain functions found; then descriptor 0's flags asked through
 * librspreload's fcntl, which sets librspreload up on the way (no socket
 * of its exists yet for 0 to be). */
__attribute__((constructor)) static void shim_start(void)
{
	fcntl_f = next("fcntl");
	read_f = plain("read");
	recv_f = plain("recv");
	recvfrom_f = plain("recvfrom");
	poll_f = next("poll");
	listen_f = next("listen");
	close_f = next("close");
	(void)fcntl_f(0, F_GETFD);
}
