/* bench/bench.h — what the C micro-benchmarks share: their clocks, and the median of a
 * measurement's repetitions. */
#ifndef GW_BENCH_H
#define GW_BENCH_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* Clock c now, in ns. */
static inline int64_t
bench_ns(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* This thread's CPU time: time preempted by other processes does not count. */
static inline int64_t
bench_cpu_ns(void)
{
	return bench_ns(CLOCK_THREAD_CPUTIME_ID);
}

static inline int
bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of v's n values, v sorted by it (v[0]: the best). */
static inline double
bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
