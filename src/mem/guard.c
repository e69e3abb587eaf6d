/* SPDX-License-Identifier: MIT */
/*
 * Guarded copies: a copy into or out of a program's memory that a page
 * fault ends with an error instead of a signal that kills the process.
 *
 * On-demand paging promises the program that a region need not be mapped
 * when it is registered, nor stay mapped: a packet that finds a hole must
 * fail its message, as a hardware NIC's page fault does when the kernel
 * cannot resolve it.  srnic touches memory with the CPU, so the hole is a
 * SIGSEGV (SIGBUS for a file mapping past its end) raised in the middle of
 * a copy.  The handler below jumps back to the copy that was armed on
 * the faulting thread; a fault anywhere else goes on to the handler that
 * was there before (or to the default action), so the program's own
 * crashes stay its own.
 *
 * Runs on whatever thread holds the datapath (an engine's lcore, or a
 * program's thread polling through the provider); the handler is
 * installed once per process, by the first on-demand registration.
 * An armed copy costs a sigsetjmp that saves no signal mask (no system
 * call): SA_NODEFER leaves the signal unblocked in the handler, so the
 * jump back has no mask to restore.
 *
 * Which copy is armed on a thread is kept under a pthread key, not in a
 * __thread variable: the provider is dlopen'ed, where TLS is either
 * static (initial-exec, which a loader may have no room left for: e2e/01
 * refuses it) or allocated on a thread's first touch, which a handler
 * must not risk (a program that crashed inside malloc would hang there).
 * glibc's pthread_getspecific only reads the thread's own array: it takes
 * no lock and allocates nothing.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>

#include "srnic_mem.h"

/* The copy armed on each thread: a sigjmp_buf *, or NULL. */
static pthread_key_t armed;
static struct sigaction prev_segv, prev_bus;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int install_error;

static void pass_on(int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *prev = sig == SIGBUS ? &prev_bus : &prev_segv;

	if (prev->sa_flags & SA_SIGINFO) {
		prev->sa_sigaction(sig, si, uc);
		return;
	}
	if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
		prev->sa_handler(sig);
		return;
	}
	if (prev->sa_handler == SIG_IGN && si->si_code <= 0)
		return;	/* a kill(2) the program chose to ignore */
	/* The default action: a fault comes back when the instruction runs
	 * again, a kill(2) has to be raised again. */
	signal(sig, SIG_DFL);
	if (si->si_code <= 0)
		raise(sig);
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *jb = pthread_getspecific(armed);

	if (jb && si->si_code > 0)	/* a fault, not a kill(2) */
		siglongjmp(*jb, 1);	/* (the copy disarms, back there) */
	pass_on(sig, si, uc);
}

static void install(void)
{
	struct sigaction sa;

	install_error = pthread_key_create(&armed, NULL);
	if (install_error)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &prev_segv) ||
	    sigaction(SIGBUS, &sa, &prev_bus))
		install_error = errno;
}

int srnic_guard_enable(void)
{
	pthread_once(&once, install);
	return -install_error;
}

/* The compiler must not move the copy out of the armed span: the signal
 * fences keep memory accesses on their side of arming and disarming. */
#define ARM(jb)                                                             \
	do {                                                                \
		pthread_setspecific(armed, &(jb));                          \
		__atomic_signal_fence(__ATOMIC_SEQ_CST);                    \
	} while (0)
#define DISARM()                                                            \
	do {                                                                \
		__atomic_signal_fence(__ATOMIC_SEQ_CST);                    \
		pthread_setspecific(armed, NULL);                           \
	} while (0)

bool srnic_guard_copy(void *dst, const void *src, size_t len)
{
	sigjmp_buf jb;

	if (sigsetjmp(jb, 0)) {
		pthread_setspecific(armed, NULL);
		return false;
	}
	ARM(jb);
	srnic_copy_once(dst, src, len);	/* (each byte once: srnic_mem.h) */
	DISARM();
	return true;
}

bool srnic_guard_atomic(uint64_t *p, enum srnic_amo op, uint64_t a,
			uint64_t b, uint64_t *old)
{
	sigjmp_buf jb;
	uint64_t v;

	if (sigsetjmp(jb, 0)) {
		pthread_setspecific(armed, NULL);
		return false;
	}
	ARM(jb);
	v = srnic_amo_run(p, op, a, b);
	DISARM();
	*old = v;
	return true;
}
