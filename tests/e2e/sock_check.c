/* SPDX-License-Identifier: MIT */
/*
 * sock_check: a plain TCP program (it knows nothing of RDMA), run under
 * rsockets' librspreload to see that stream sockets over srnic keep the
 * promises a TCP program counts on (44-sockets.sh, ./srnic demo sockets).
 *
 *   sock_check -s PORT            serve: each connection sends an 8-byte
 *                                 length, then that many bytes of the
 *                                 pattern; every byte is compared, and
 *                                 the answer is "ok N SHA256" or
 *                                 "bad at OFFSET"
 *   sock_check HOST PORT MIB      send MIB MiB: a non-blocking connect
 *                                 (EINPROGRESS or at once, then POLLOUT
 *                                 and SO_ERROR 0), the stream, shutdown
 *                                 of the sending side, the server's
 *                                 answer, then end of file
 *   sock_check -r HOST PORT       nobody listens there (over srnic): a
 *                                 non-blocking connect's SO_ERROR is
 *                                 ECONNREFUSED
 *   sock_check -k HOST PORT       send (poll, then MSG_DONTWAIT) until
 *                                 the peer (killed by the script) is
 *                                 gone: ECONNRESET or EPIPE
 *
 * Prints "ok"/"not ok" lines, the client's rate ("# rate: R MB/s") and
 * the stream's SHA-256 on both sides (libsodium); exits 1 on any failure.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#define CHUNK (64 * 1024)

/* Sizes the compiler cannot know: in the build with _FORTIFY_SOURCE
 * (sock_check_fortified) the reads, receives and polls that use them go
 * through __read_chk, __recv_chk and __poll_chk, as a Debian program's
 * do, which librspreload alone does not serve. */
static volatile size_t chunk_v = CHUNK;
static volatile nfds_t one_v = 1;

static unsigned checks, failed;

static void check(int ok, const char *what, const char *detail)
{
	checks++;
	failed += !ok;
	printf("%s - %s%s%s\n", ok ? "ok" : "not ok", what,
	       detail ? ": " : "", detail ? detail : "");
}

/* The stream's bytes at every offset: a word of xorshift64 every 8
 * bytes, so both ends make any piece from its offset alone. */
static uint64_t word(uint64_t k)
{
	uint64_t w = k * 0x9e3779b97f4a7c15ull + 1;

	w ^= w << 13;
	w ^= w >> 7;
	w ^= w << 17;
	return w;
}

/* word's inverse: the k whose word w is (each xorshift step undone, then
 * the multiplication, by the odd constant's inverse mod 2^64). */
static uint64_t word_index(uint64_t w)
{
	const uint64_t c = 0x9e3779b97f4a7c15ull;
	uint64_t x, inv = c;
	int i;

	for (x = w, i = 0; i < 4; i++)
		x = w ^ (x << 17);
	for (w = x, i = 0; i < 10; i++)
		x = w ^ (x >> 7);
	for (w = x, i = 0; i < 5; i++)
		x = w ^ (x << 13);
	for (i = 0; i < 6; i++)
		inv *= 2 - c * inv;
	return (x - 1) * inv;
}

static void pattern(uint8_t *p, uint64_t off, size_t n)
{
	uint64_t k = off >> 3;
	size_t skip = off & 7, done = 0;

	while (done < n) {
		uint64_t w = word(k++);
		size_t take = 8 - skip < n - done ? 8 - skip : n - done;

		memcpy(p + done, (uint8_t *)&w + skip, take);
		done += take;
		skip = 0;
	}
}

static int full_read(int s, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(s, (char *)buf + got, n - got);

		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static int full_write(int s, const void *buf, size_t n)
{
	size_t put = 0;

	while (put < n) {
		ssize_t r = write(s, (const char *)buf + put, n - put);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		put += (size_t)r;
	}
	return 0;
}

static void hex(const uint8_t *h, char *out)
{
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", h[i]);
}

/* The first byte of a read (r bytes at stream offset off) that differs,
 * and, said in why, how many of the read's bytes do and where the word
 * with the first of them came from: the stream's word at some other
 * offset (stale or early bytes of the same stream) or none of it. */
static uint64_t first_bad(const uint8_t *buf, const uint8_t *want,
			  uint64_t off, size_t r, char *why, size_t n)
{
	size_t i, first = r, count = 0;
	uint64_t w, k;

	for (i = 0; i < r; i++)
		if (buf[i] != want[i]) {
			if (first == r)
				first = i;
			count++;
		}
	/* the word that holds the first bad byte, or, begun before the
	 * read, the next one */
	i = (size_t)(((off + first) & ~7ull) < off ? ((off + first + 7) & ~7ull) - off
						   : ((off + first) & ~7ull) - off);
	if (i + 8 > r) {
		snprintf(why, n, "%zu of %zu bytes read at %llu differ", count, r,
			 (unsigned long long)off);
		return off + first;
	}
	memcpy(&w, buf + i, 8);
	k = word_index(w);
	snprintf(why, n, "%zu of %zu bytes read at %llu differ; at %llu: %s %llu",
		 count, r, (unsigned long long)off,
		 (unsigned long long)(off + i),
		 k < (1ull << 40) ? "the stream's bytes of offset" : "no bytes of the stream, word",
		 k < (1ull << 40) ? (unsigned long long)(k << 3) : (unsigned long long)w);
	return off + first;
}

/* One connection: the length, the stream compared byte for byte. */
static void serve_one(int c)
{
	static uint8_t buf[CHUNK], want[CHUNK];
	crypto_hash_sha256_state st;
	uint64_t len, off = 0, bad = UINT64_MAX;
	uint8_t h[32];
	char line[128], hx[65];
	char why[160] = "";

	crypto_hash_sha256_init(&st);
	if (full_read(c, &len, sizeof(len)))
		return;
	len = be64toh(len);
	while (off < len) {
		size_t n = len - off < chunk_v ? (size_t)(len - off) : chunk_v;
		ssize_t r = read(c, buf, n);

		if (r <= 0)
			break;
		crypto_hash_sha256_update(&st, buf, (size_t)r);
		pattern(want, off, (size_t)r);
		if (bad == UINT64_MAX && memcmp(buf, want, (size_t)r))
			bad = first_bad(buf, want, off, (size_t)r, why, sizeof(why));
		off += (uint64_t)r;
	}
	crypto_hash_sha256_final(&st, h);
	hex(h, hx);
	if (why[0])
		printf("# %s\n", why);
	if (off < len)
		snprintf(line, sizeof(line), "short %llu of %llu\n",
			 (unsigned long long)off, (unsigned long long)len);
	else if (bad != UINT64_MAX)
		snprintf(line, sizeof(line), "bad at %llu\n",
			 (unsigned long long)bad);
	else
		snprintf(line, sizeof(line), "ok %llu %s\n",
			 (unsigned long long)len, hx);
	printf("# %s", line);
	fflush(stdout);
	/* (after the peer's shutdown its end reads what we write; a failure
	 * is said, for the client that then waits in vain) */
	if (full_write(c, line, strlen(line)))
		printf("# the answer not written: %s\n", strerror(errno));
}

static int server(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port)};
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0), c;

	if (l >= 0)
		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 4)) {
		perror("sock_check: listen");
		return 1;
	}
	printf("# listening on %d\n", port);
	fflush(stdout);
	for (;;) {
		c = accept(l, NULL, NULL);
		if (c < 0) {
			if (errno == EINTR)
				continue;
			perror("sock_check: accept");
			return 1;
		}
		serve_one(c);
		if (close(c))
			printf("# close: %s\n", strerror(errno));
		fflush(stdout);
	}
}

static struct sockaddr_in addr_of(const char *host, int port)
{
	struct addrinfo hints = {.ai_family = AF_INET}, *ai;
	struct sockaddr_in a = {0};

	if (getaddrinfo(host, NULL, &hints, &ai)) {
		fprintf(stderr, "sock_check: cannot resolve %s\n", host);
		exit(2);
	}
	memcpy(&a, ai->ai_addr, sizeof(a));
	a.sin_port = htons((uint16_t)port);
	freeaddrinfo(ai);
	return a;
}

/* A non-blocking connect, as event-driven programs make it; blocking
 * again after. */
static int connect_nb(const struct sockaddr_in *a)
{
	int s = socket(AF_INET, SOCK_STREAM, 0), err = -1, rc;
	socklen_t len = sizeof(err);
	struct pollfd p = {.fd = s, .events = POLLOUT};
	char d[64];

	fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK);
	rc = connect(s, (const struct sockaddr *)a, sizeof(*a));
	snprintf(d, sizeof(d), "rc %d, %s", rc, rc ? strerror(errno) : "at once");
	check(rc == 0 || errno == EINPROGRESS, "non-blocking connect starts", d);
	rc = poll(&p, one_v, 20000);
	getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len);
	snprintf(d, sizeof(d), "poll %d, revents %#x, SO_ERROR %d", rc,
		 (unsigned)p.revents, err);
	check(rc == 1 && (p.revents & POLLOUT) && err == 0,
	      "then writable, SO_ERROR 0", d);
	fcntl(s, F_SETFL, fcntl(s, F_GETFL) & ~O_NONBLOCK);
	return s;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int client(const char *host, int port, uint64_t mib)
{
	static uint8_t buf[CHUNK];
	struct sockaddr_in a = addr_of(host, port);
	crypto_hash_sha256_state st;
	uint64_t len = mib << 20, off, be = htobe64(len);
	char answer[128] = "", want[128], hx[65], d[160];
	uint8_t h[32];
	double t0;
	ssize_t r = -1;
	size_t got = 0;
	bool eof;
	int s = connect_nb(&a);

	crypto_hash_sha256_init(&st);
	t0 = now_s();
	int ok = full_write(s, &be, sizeof(be)) == 0;

	for (off = 0; ok && off < len; off += CHUNK) {
		size_t n = len - off < CHUNK ? (size_t)(len - off) : CHUNK;

		pattern(buf, off, n);
		crypto_hash_sha256_update(&st, buf, n);
		ok = full_write(s, buf, n) == 0;
	}
	check(ok, "the stream written", ok ? NULL : strerror(errno));
	check(shutdown(s, SHUT_WR) == 0, "shutdown of the sending side",
	      NULL);
	while (got < sizeof(answer) - 1 &&
	       (r = recv(s, answer + got,
			 (sizeof(answer) - 1 - got) * one_v, 0)) > 0)
		got += (size_t)r;
	eof = r == 0;
	printf("# rate: %.0f MB/s\n", (double)len / 1e6 / (now_s() - t0));
	crypto_hash_sha256_final(&st, h);
	hex(h, hx);
	printf("# sent sha256 %s\n", hx);
	snprintf(want, sizeof(want), "ok %llu %s\n", (unsigned long long)len,
		 hx);
	snprintf(d, sizeof(d), "%.*s", (int)strcspn(answer, "\n"), answer);
	check(!strcmp(answer, want),
	      "the server saw every byte, and the same SHA-256", d);
	check(eof && read(s, answer, 1) == 0, "then end of file", NULL);
	close(s);
	return 0;
}

/* Nobody listens (over srnic) there: a non-blocking connect, whose
 * refusal comes as SO_ERROR.  (A blocking one that rsockets fails,
 * librspreload tries again over the kernel's TCP: the script has a
 * kernel listener there to catch that.) */
static int refused(const char *host, int port)
{
	struct sockaddr_in a = addr_of(host, port);
	int s = socket(AF_INET, SOCK_STREAM, 0), err = 0, rc;
	socklen_t len = sizeof(err);
	struct pollfd p = {.fd = s, .events = POLLOUT};

	fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK);
	rc = connect(s, (struct sockaddr *)&a, sizeof(a));
	if (rc && errno == EINPROGRESS) {
		poll(&p, 1, 20000);
		getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len);
	} else {
		err = rc ? errno : 0;
	}
	check(err == ECONNREFUSED,
	      "connect where nobody listens: ECONNREFUSED",
	      err ? strerror(err) : "connected");
	close(s);
	return 0;
}

/* Writes until the peer is gone, as an event-driven program does (poll
 * for POLLOUT, send without waiting): the error a TCP program gets.
 * (rsockets tells a poller of the peer's disconnect; a writer blocked in
 * write() waiting for a dead peer's credits it does not wake, over any
 * RDMA device: docs/sockets.md.) */
static int killed(const char *host, int port)
{
	static uint8_t buf[CHUNK];
	struct sockaddr_in a = addr_of(host, port);
	uint64_t off = 0, be = htobe64(UINT64_MAX / 2);
	int s = connect_nb(&a), e = 0;
	double t0 = now_s();
	struct pollfd p = {.fd = s, .events = POLLOUT};

	signal(SIGPIPE, SIG_IGN);
	full_write(s, &be, sizeof(be));
	printf("# writing\n");
	fflush(stdout);
	pattern(buf, off, CHUNK);
	while (now_s() - t0 < 30) {
		ssize_t w;

		poll(&p, 1, 1000);
		w = send(s, buf, CHUNK, MSG_DONTWAIT);
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR) {
			e = errno;
			break;
		}
		if (w > 0) {
			off += (uint64_t)w;
			pattern(buf, off, CHUNK);
		}
	}
	check(e == ECONNRESET || e == EPIPE,
	      "writes to a killed peer fail: ECONNRESET or EPIPE",
	      e ? strerror(e) : "no error in 30 s");
	close(s);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 2;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (sodium_init() < 0)
		return 2;
	if (argc == 3 && !strcmp(argv[1], "-s"))
		rc = server(atoi(argv[2]));
	else if (argc == 4 && !strcmp(argv[1], "-r"))
		rc = refused(argv[2], atoi(argv[3]));
	else if (argc == 4 && !strcmp(argv[1], "-k"))
		rc = killed(argv[2], atoi(argv[3]));
	else if (argc == 4 && argv[1][0] != '-')
		rc = client(argv[1], atoi(argv[2]),
			    strtoull(argv[3], NULL, 10));
	else
		fprintf(stderr, "usage: sock_check -s PORT | HOST PORT MIB | "
				"-r HOST PORT | -k HOST PORT\n");
	if (rc == 2)
		return 2;
	printf("# %u checks, %u failed\n", checks, failed);
	return rc || failed ? 1 : 0;
}
