/* clock — monotonic and wall clocks, and their formatting. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"

/* What clock id reads, in units of 1/per_sec second (per_sec divides 10^9). */
static int64_t
clock_units(clockid_t id, int64_t per_sec)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * per_sec + ts.tv_nsec / (1000000000 / per_sec);
}

int64_t
clock_mono_us(void)
{
	return clock_units(CLOCK_MONOTONIC, 1000000);
}

time_t
clock_wall(void)
{
	return time(NULL);
}

int64_t
clock_wall_ms(void)
{
	return clock_units(CLOCK_REALTIME, 1000);
}

void
clock_utc(time_t t, char *out, size_t outlen)
{
	int64_t secs = (int64_t)t, days = secs / 86400, rem = secs % 86400, z, era, y;
	unsigned doe, yoe, doy, mp, m, d;

	if (rem < 0) {
		rem += 86400;
		days--;
	}
	/* Days since 1970-01-01 to the proleptic Gregorian date, in 400-year eras that
	 * start on 0000-03-01 (so that a leap day ends its year). */
	z = days + 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y = (int64_t)yoe + era * 400 + (m <= 2);
	if (snprintf(out, outlen, "%04lld-%02u-%02uT%02d:%02d:%02d", (long long)y, m, d, (int)(rem / 3600),
	    (int)(rem / 60 % 60), (int)(rem % 60)) < 0 && outlen)
		out[0] = '\0';
}

void
clock_rfc3339(time_t t, char *out, size_t outlen)
{
	char utc[32];

	clock_utc(t, utc, sizeof(utc));
	if (snprintf(out, outlen, "%sZ", utc) < 0 && outlen)
		out[0] = '\0';
}

/* n decimal digits at s: the number, or -1. */
static int
digits(const char *s, int n)
{
	int v = 0;

	for (; n > 0; n--, s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

/* clock_utc's arithmetic backwards: days from 1970-01-01 to y-m-d (y >= 0). Whether the
 * date exists is clock_parse_rfc3339's test: written back, it is the same text. */
static int64_t
days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = y / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

int
clock_parse_rfc3339(const char *s, time_t *t)
{
	int y, mo, d, h, mi, sec;
	char back[32];
	int64_t v;

	if (strlen(s) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z')
		return -1;
	y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2);
	h = digits(s + 11, 2), mi = digits(s + 14, 2), sec = digits(s + 17, 2);
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59)
		return -1;
	v = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + sec;
	clock_rfc3339((time_t)v, back, sizeof(back));
	if (strcmp(back, s) != 0)
		return -1;	/* a day the month has not (02-30) */
	*t = (time_t)v;
	return 0;
}
