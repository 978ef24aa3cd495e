/* clock — the only module that reads clocks; everything else takes `now`. */
#ifndef GW_CLOCK_H
#define GW_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

int64_t clock_mono_us(void);	/* monotonic microseconds, for durations */
time_t clock_wall(void);	/* seconds since the epoch */
int64_t clock_wall_ms(void);	/* milliseconds since the epoch */
/* RFC 3339 UTC timestamp of t ("2026-11-22T10:00:00Z"); out needs 21 bytes. */
void clock_rfc3339(time_t t, char *out, size_t outlen);
/* The same without the "Z" ("2026-11-22T10:00:00"), for a caller adding fractions;
 * out needs 20 bytes. Both by arithmetic: gmtime_r's first call reads the time zone
 * file, a cost every CGI run would pay for its log line. */
void clock_utc(time_t t, char *out, size_t outlen);
/* The time of s, an RFC 3339 UTC timestamp exactly as clock_rfc3339 writes it (a date
 * that exists, from 1970 to 9999, seconds 00 to 59, "Z"): 0, or -1 when s is anything
 * else. */
int clock_parse_rfc3339(const char *s, time_t *t);

#endif
