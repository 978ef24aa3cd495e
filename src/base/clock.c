/* clock — monotonic and wall clocks, and their formatting. */
#include "autoconf.h"

#include <time.h>

#include "clock.h"

int64_t
clock_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

time_t
clock_wall(void)
{
	return time(NULL);
}

int64_t
clock_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
clock_rfc3339(time_t t, char *out, size_t outlen)
{
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(out, outlen, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
		if (outlen)
			out[0] = '\0';
	}
}
