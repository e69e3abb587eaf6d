/* SPDX-License-Identifier: MIT */
/*
 * The whole assertion kit of the unit tests.  CHECK() records a failure and
 * carries on, so one run shows every broken property rather than the first;
 * check_summary() turns the tally into the exit status tests/run reads.
 *
 *   CHECK(cond, fmt, ...)      fails when cond is false; returns cond, so a
 *                              test can skip what depends on it
 *   KNOWN_BUG(cond, fmt, ...)  cond is what should hold but does not yet:
 *                              reported, not counted as a failure; once it
 *                              holds, it fails so that the marker goes
 *
 * Each test is one translation unit, so the counters can live here.
 */
#ifndef SRNIC_TEST_CHECK_H
#define SRNIC_TEST_CHECK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

/* A loop that breaks fails thousands of times; the first ones say enough
 * and the rest would push the summary out of tests/run's tail. */
#define CHECK_MAX_REPORTS 50

static unsigned long check_total, check_failures, check_known;

static inline bool __attribute__((format(printf, 5, 6)))
check_one(bool ok, const char *file, int line, const char *expr,
	  const char *fmt, ...)
{
	va_list ap;

	check_total++;
	if (ok)
		return true;
	if (++check_failures <= CHECK_MAX_REPORTS) {
		fprintf(stderr, "%s:%d: FAIL %s: ", file, line, expr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	} else if (check_failures == CHECK_MAX_REPORTS + 1) {
		fprintf(stderr, "(further failures are counted, not shown)\n");
	}
	return false;
}

static inline bool __attribute__((format(printf, 5, 6)))
check_known_bug(bool ok, const char *file, int line, const char *expr,
		const char *fmt, ...)
{
	va_list ap;

	check_total++;
	if (ok) {
		check_failures++;
		fprintf(stderr,
			"%s:%d: FAIL %s holds now: the bug looks fixed, turn "
			"this KNOWN_BUG into a CHECK\n",
			file, line, expr);
		return true;
	}
	check_known++;
	fprintf(stderr, "%s:%d: known bug, %s: ", file, line, expr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return false;
}

#define CHECK(cond, ...) \
	check_one(!!(cond), __FILE__, __LINE__, #cond, __VA_ARGS__)
#define KNOWN_BUG(cond, ...) \
	check_known_bug(!!(cond), __FILE__, __LINE__, #cond, __VA_ARGS__)

/* Prints the tally last (tests/run shows a failing log's tail) and returns
 * the exit status. */
static inline int check_summary(const char *name)
{
	fprintf(stderr, "%s: %lu checks, %lu failed", name, check_total,
		check_failures);
	if (check_known)
		fprintf(stderr, ", %lu known bugs", check_known);
	fputc('\n', stderr);
	/* A test that checked nothing proves nothing. */
	return check_failures || !check_total ? 1 : 0;
}

#endif
