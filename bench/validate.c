/* bench/validate.c — the cost of holding a tools/call's arguments against the tool's
 * inputSchema, with the gateway's own code (src/model/jschema*.c, src/base/regex*.c):
 * a validation, as each call makes one, and a compile, as each worker makes one per
 * tool and catalog (src/model/schemas.c).
 *
 * Built on demand, never by "make" or "make check":
 *     make bench/validate_bench && bench/validate_bench [-n N] [-r REPS] SCHEMA-FILE INSTANCE-FILE
 * bench/validate.sh builds and runs it with the schemas a fixture upstream lists.
 *
 * Each measurement is N operations in a row, repeated REPS times; the median and the best
 * of the repetitions are printed, as this thread's CPU time and as wall time. The
 * instance must be valid (what the benchmark's calls send). The last line,
 * "BENCH key=value ...", is for bench/validate.sh (medians of CPU time, in ns). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "jschema.h"

#define MAX_REPS 101

static void
usage(void)
{
	fprintf(stderr, "usage: validate_bench [-n N] [-r REPS] SCHEMA-FILE INSTANCE-FILE\n"
	    "  -n  operations per repetition (default 20000)\n"
	    "  -r  repetitions (default 7, at most %d)\n", MAX_REPS);
	exit(2);
}

/* ns per operation of what (0: validate, 1: compile), reps times n, into cpu and wall. */
static int
measure(int what, json_t *schema, json_t *inst, long n, int reps, double *cpu, double *wall)
{
	struct gw_error err;
	struct jschema *s = jschema_compile(schema, NULL, &err), *t;
	volatile long sink = 0;
	int64_t c0, w0;
	long i;
	int r;

	if (s == NULL) {
		fprintf(stderr, "validate_bench: the schema does not compile: %s\n", err.detail);
		return -1;
	}
	for (r = 0; r < reps && sink == 0; r++) {
		c0 = bench_cpu_ns();
		w0 = bench_ns(CLOCK_MONOTONIC);
		for (i = 0; i < n; i++) {
			if (what == 0) {
				sink += jschema_validate(s, inst, NULL);
			} else {
				t = jschema_compile(schema, NULL, &err);
				sink += t != NULL;
				jschema_free(t);
			}
		}
		cpu[r] = (double)(bench_cpu_ns() - c0) / (double)n;
		wall[r] = (double)(bench_ns(CLOCK_MONOTONIC) - w0) / (double)n;
		sink -= n;	/* each operation adds 1: 0 when all succeeded */
	}
	jschema_free(s);
	if (sink != 0) {
		fprintf(stderr, "validate_bench: %s failed (%ld of %ld)\n", what ? "a compile" : "the instance is not valid: a validation",
		    -sink, n);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	long n = 20000;
	int reps = 7, opt, w;
	double cpu[2][MAX_REPS], wall[2][MAX_REPS], med[2];
	json_t *schema, *inst;
	json_error_t je;

	while ((opt = getopt(argc, argv, "n:r:")) != -1) {
		switch (opt) {
		case 'n': n = atol(optarg); break;
		case 'r': reps = atoi(optarg); break;
		default: usage();
		}
	}
	if (n < 1 || reps < 1 || reps > MAX_REPS || argc - optind != 2)
		usage();
	if ((schema = json_load_file(argv[optind], 0, &je)) == NULL ||
	    (inst = json_load_file(argv[optind + 1], JSON_DECODE_ANY, &je)) == NULL) {
		fprintf(stderr, "validate_bench: %s:%d: %s\n", je.source, je.line, je.text);
		return 1;
	}
	printf("%-30s %12s %12s %12s %12s\n", "ns per operation", "cpu median", "cpu best", "wall median", "wall best");
	for (w = 0; w < 2; w++) {
		if (measure(w, schema, inst, w ? n / 10 + 1 : n, reps, cpu[w], wall[w]) < 0)
			return 1;
		med[w] = bench_median(cpu[w], reps);
		printf("%-30s %12.0f %12.0f %12.0f %12.0f\n", w ? "compile" : "validate", med[w], cpu[w][0],
		    bench_median(wall[w], reps), wall[w][0]);
	}
	printf("BENCH validate_ns=%.0f compile_ns=%.0f\n", med[0], med[1]);
	json_decref(schema);
	json_decref(inst);
	return 0;
}
