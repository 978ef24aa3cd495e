/* tap.h — a tiny TAP producer for C unit tests (one per test binary).
 * ok(cond, fmt, ...) prints "ok N - …" or "not ok N - … (file:line)";
 * is_str(got, want, fmt, ...) and is_int(got, want, fmt, ...) the same, and show both
 * values when they differ; done_testing() prints the plan and returns the exit status.
 *
 * Cases: main(int argc, char **argv) calls tap_args(argc, argv) first, then runs each of
 * its top-level test functions as a case, run_case(f, args...): f(args...), a case named
 * f. `tests/unit/test_x -k WORD` runs only the cases whose name contains WORD (-k again:
 * those that contain any of the words); the set-up and the checks main makes outside a
 * case always run. A case that uses what an earlier one left (a shared fixture) may fail
 * when run without it. Without -k every case runs: the output is that of calling each
 * function directly. -k that selects no case is a failure (a word mistyped). */
#ifndef GW_TAP_H
#define GW_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAP_WORDS_MAX	16

static int tap_count, tap_fails;
static const char *tap_words[TAP_WORDS_MAX];	/* the -k words; none: every case runs */
static int tap_nwords, tap_cases;	/* tap_cases: how many ran */

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_str(got, want, ...) \
	tap_is_str((got), (want), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(got, want, ...) \
	tap_is_int((long long)(got), (long long)(want), __FILE__, __LINE__, __VA_ARGS__)
#define run_case(f, ...) \
	do { \
		if (tap_selected(#f)) \
			f(__VA_ARGS__); \
	} while (0)

/* The test's line "ok N - DESC" or "not ok N - DESC", and "#   failed at FILE:LINE" under
 * a failure (the caller adds what it shows of the values); returns cond. */
static int __attribute__((unused))
tap_line(int cond, const char *file, int line, const char *fmt, va_list ap)
{
	tap_count++;
	printf("%sok %d - ", cond ? "" : "not ", tap_count);
	vprintf(fmt, ap);
	printf("\n");
	if (!cond) {
		tap_fails++;
		printf("#   failed at %s:%d\n", file, line);
	}
	return cond;
}

static int __attribute__((format(printf, 4, 5), unused))
tap_ok(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_line(cond, file, line, fmt, ap);
	va_end(ap);
	return cond;
}

static int __attribute__((format(printf, 5, 6), unused))
tap_is_str(const char *got, const char *want, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int cond = (got == NULL && want == NULL) ||
	    (got != NULL && want != NULL && strcmp(got, want) == 0);

	va_start(ap, fmt);
	tap_line(cond, file, line, fmt, ap);
	va_end(ap);
	if (!cond)
		printf("#   got:  '%s'\n#   want: '%s'\n", got ? got : "(null)", want ? want : "(null)");
	return cond;
}

static int __attribute__((format(printf, 5, 6), unused))
tap_is_int(long long got, long long want, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int cond = got == want;

	va_start(ap, fmt);
	tap_line(cond, file, line, fmt, ap);
	va_end(ap);
	if (!cond)
		printf("#   got:  %lld\n#   want: %lld\n", got, want);
	return cond;
}

/* The command line: -k WORD, any number of times; anything else is a usage error. */
static void __attribute__((unused))
tap_args(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-k") != 0 || i + 1 == argc || tap_nwords == TAP_WORDS_MAX) {
			fprintf(stderr, "usage: %s [-k WORD]... (at most %d words)\n", argv[0], TAP_WORDS_MAX);
			exit(2);
		}
		tap_words[tap_nwords++] = argv[++i];
	}
}

/* Whether the case named name runs: no -k word, or one its name contains. */
static int __attribute__((unused))
tap_selected(const char *name)
{
	int i;

	for (i = 0; i < tap_nwords; i++)
		if (strstr(name, tap_words[i]) != NULL)
			break;
	if (tap_nwords > 0 && i == tap_nwords)
		return 0;
	tap_cases++;
	return 1;
}

static int __attribute__((unused))
done_testing(void)
{
	int i;

	if (tap_nwords > 0 && tap_cases == 0) {
		printf("# no case's name contains");
		for (i = 0; i < tap_nwords; i++)
			printf(" '%s'", tap_words[i]);
		printf("\n");
		tap_fails++;
	}
	printf("1..%d\n", tap_count);
	return tap_fails ? 1 : 0;
}

#endif
