/* tap.h — a tiny TAP producer for C unit tests (one per test binary).
 * ok(cond, fmt, ...) prints "ok N - …" or "not ok N - … (file:line)";
 * done_testing() prints the plan and returns the exit status. */
#ifndef GW_TAP_H
#define GW_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_count, tap_fails;

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_str(got, want, ...) \
	tap_is_str((got), (want), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(got, want, ...) \
	tap_is_int((long long)(got), (long long)(want), __FILE__, __LINE__, __VA_ARGS__)

static void __attribute__((unused))
tap_vdesc(const char *fmt, va_list ap)
{
	vprintf(fmt, ap);
}

static int __attribute__((format(printf, 4, 5), unused))
tap_ok(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	printf("%sok %d - ", cond ? "" : "not ", tap_count);
	va_start(ap, fmt);
	tap_vdesc(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		tap_fails++;
		printf("#   failed at %s:%d\n", file, line);
	}
	return cond;
}

static int __attribute__((format(printf, 5, 6), unused))
tap_is_str(const char *got, const char *want, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int cond = (got == NULL && want == NULL) ||
	    (got != NULL && want != NULL && strcmp(got, want) == 0);

	tap_count++;
	printf("%sok %d - ", cond ? "" : "not ", tap_count);
	va_start(ap, fmt);
	tap_vdesc(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		tap_fails++;
		printf("#   failed at %s:%d\n#   got:  '%s'\n#   want: '%s'\n", file, line,
		    got ? got : "(null)", want ? want : "(null)");
	}
	return cond;
}

static int __attribute__((format(printf, 5, 6), unused))
tap_is_int(long long got, long long want, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int cond = got == want;

	tap_count++;
	printf("%sok %d - ", cond ? "" : "not ", tap_count);
	va_start(ap, fmt);
	tap_vdesc(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		tap_fails++;
		printf("#   failed at %s:%d\n#   got:  %lld\n#   want: %lld\n", file, line, got, want);
	}
	return cond;
}

static int __attribute__((unused))
done_testing(void)
{
	printf("1..%d\n", tap_count);
	return tap_fails ? 1 : 0;
}

#endif
