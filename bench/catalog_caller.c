/* bench/catalog_caller.c — what an upstream listed per caller ([upstream] catalog =
 * per-caller) costs the gateway besides the upstream's own answer, with its own code
 * (src/model/catalog.c, src/state/fragcache.c). A host's catalog of S tools from two
 * shared upstreams, and P tools the per-caller upstream lists for the caller:
 *
 *   make     a caller's catalog, as catalog_fetch_caller makes it once per caller and
 *            catalog-ttl in a worker: the host's catalog taken back into what each
 *            upstream offered (catalog_lists), the caller's lists added, built again
 *            (catalog_build_bound)
 *   own      a tools/list page of the caller's own catalog: its record texts cut
 *            (catalog_page_text), as every list of such a gateway is (its pages are not
 *            cached: nothing derived from a caller's catalog is kept for another)
 *   cached   the same page of a shared catalog, from the worker's page cache
 *            (fragcache_get), as every list of a gateway without such an upstream is
 *
 * Built on demand, never by "make" or "make check":
 *     make bench/catalog_caller_bench && bench/catalog_caller_bench [-n N] [-r REPS] [-s S] [-p P]
 * Each measurement is N operations in a row, repeated REPS times; the median and the
 * best of this thread's CPU time per operation are printed in µs. The last line,
 * "BENCH key=value", holds the medians and own / cached. */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "catalog.h"
#include "config.h"
#include "fragcache.h"
#include "log.h"

#define MAX_REPS 101
enum { R_MAKE, R_OWN, R_CACHED, R_N };
static const char *const rows[R_N] = { "make", "own", "cached" };

/* n tools named NAME_i, each with a description and a small schema (about 300 bytes). */
static json_t *
tools(const char *name, int n)
{
	json_t *a = json_array();
	char nm[64];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(nm, sizeof(nm), "%s_%04d", name, i);
		json_array_append_new(a, json_pack("{s:s, s:s, s:{s:s, s:{s:{s:s, s:s}}, s:[s]}}", "name", nm,
		    "description", "Looks something up in the system this upstream fronts and returns it as text",
		    "inputSchema", "type", "object", "properties", "query", "type", "string", "description",
		    "What to look for", "required", "query"));
	}
	return json_pack("{s:{s:{}}, s:o}", "caps", "tools", "tools", a);
}

static struct config *
load(void)
{
	char path[] = "/tmp/catalog-caller-bench-XXXXXX";
	struct cfg_errors errs;
	struct config *cfg = NULL;
	FILE *f;
	int fd = mkstemp(path);

	if (fd < 0 || (f = fdopen(fd, "w")) == NULL)
		return NULL;
	fputs("[gateway]\nresource = https://gw.example.com/mcp\nname = gw\nversion = 1\n"
	    "[auth]\nissuer = https://idp.example.com\nclient-id = gw\n"
	    "[upstream \"a\"]\nurl = http://127.0.0.1:9001/mcp\nprefix = a_\n"
	    "[upstream \"b\"]\nurl = http://127.0.0.1:9002/mcp\nprefix = b_\n"
	    "[upstream \"mine\"]\nurl = http://127.0.0.1:9003/mcp\nprefix = m_\ncredentials = exchange\n"
	    "catalog = per-caller\n", f);
	fclose(f);
	if (config_load(path, &cfg, &errs) < 0)
		cfg = NULL;
	unlink(path);
	return cfg;
}

/* Long: the set-up, the three measurements over the same documents, and the report. */
int
main(int argc, char **argv)
{
	long n = 200, i;
	int reps = 7, s = 200, p = 20, opt, r, k;
	double v[R_N][MAX_REPS], med[R_N];
	volatile unsigned long sink = 0;
	struct config *cfg;
	struct fragcache *fc;
	json_t *lists[3], *back[3], *shared, *mine, *doc;
	const char *why[3] = { NULL, NULL, NULL }, *back_why[3];
	const char *text;
	struct buf page;
	size_t len;
	int64_t c0;
	uint64_t key = 1;

	while ((opt = getopt(argc, argv, "n:r:s:p:")) != -1) {
		switch (opt) {
		case 'n': n = atol(optarg); break;
		case 'r': reps = atoi(optarg); break;
		case 's': s = atoi(optarg); break;
		case 'p': p = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: catalog_caller_bench [-n N] [-r REPS] [-s SHARED_TOOLS] [-p OWN_TOOLS]\n");
			return 2;
		}
	}
	if (n < 1 || reps < 1 || reps > MAX_REPS || s < 2 || s > 20000 || p < 0 || p > 20000 || (cfg = load()) == NULL)
		return 2;
	log_set_level(GW_LOG_ERR);
	lists[0] = tools("a", s / 2);
	lists[1] = tools("b", s - s / 2);
	lists[2] = json_pack("{s:{}, s:b}", "caps", "perCaller", 1);
	shared = catalog_build(cfg, lists, why);
	json_decref(lists[2]);
	lists[2] = tools("own", p);
	json_object_set_new(lists[2], "perCaller", json_true());
	mine = NULL;
	for (r = 0; r < reps; r++) {
		c0 = bench_cpu_ns();
		for (i = 0; i < n; i++) {
			catalog_lists(shared, cfg, back, back_why);
			json_decref(back[2]);
			back[2] = json_incref(lists[2]);
			doc = catalog_build_bound(cfg, back, back_why, shared);
			for (k = 0; k < 3; k++)
				json_decref(back[k]);
			json_decref(mine);
			mine = doc;
		}
		v[R_MAKE][r] = (double)(bench_cpu_ns() - c0) / (double)n / 1000;
	}
	buf_init(&page, 64u << 20);
	fc = fragcache_new(64u << 20, 16);
	if (catalog_page_text(shared, CATALOG_TOOLS, NULL, 0, catalog_count(shared, CATALOG_TOOLS), &page) < 0 ||
	    fc == NULL || fragcache_put(fc, 1, &key, sizeof(key), buf_str(&page), page.len) < 0)
		return 1;
	for (r = 0; r < reps; r++) {
		c0 = bench_cpu_ns();
		for (i = 0; i < n; i++) {
			buf_reset(&page);
			sink += (unsigned long)catalog_page_text(mine, CATALOG_TOOLS, NULL, 0,
			    catalog_count(mine, CATALOG_TOOLS), &page) + page.len;
		}
		v[R_OWN][r] = (double)(bench_cpu_ns() - c0) / (double)n / 1000;
		c0 = bench_cpu_ns();
		for (i = 0; i < n; i++) {
			text = fragcache_get(fc, 1, &key, sizeof(key), &len);
			sink += text ? len : 0;
		}
		v[R_CACHED][r] = (double)(bench_cpu_ns() - c0) / (double)n / 1000;
	}
	printf("catalog_caller_bench: %ld operations x %d repetitions; %d shared tools, %d of the caller's own "
	    "(%zu in its catalog); µs of CPU per operation\n", n, reps, s, p, catalog_count(mine, CATALOG_TOOLS));
	printf("%-8s %10s %10s\n", "", "median", "best");
	for (k = 0; k < R_N; k++) {
		med[k] = bench_median(v[k], reps);
		printf("%-8s %10.2f %10.2f\n", rows[k], med[k], v[k][0]);
	}
	printf("BENCH make_us=%.2f own_us=%.2f cached_us=%.3f own_over_cached=%.1f sink=%lu\n", med[R_MAKE],
	    med[R_OWN], med[R_CACHED], med[R_CACHED] > 0 ? med[R_OWN] / med[R_CACHED] : 0, sink & 1);
	buf_free(&page);
	fragcache_free(fc);
	json_decref(mine);
	json_decref(shared);
	for (k = 0; k < 3; k++)
		json_decref(lists[k]);
	config_unref(cfg);
	return 0;
}
