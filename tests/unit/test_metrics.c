/* Unit tests: the host's counters and dependency states (src/state/metrics.c) — counts
 * and their Prometheus text, bounded label values, processes counting at once, a
 * process killed while claiming a name, a region written over, dependency states and
 * their times (passed in). */
#include "autoconf.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "metrics.h"
#include "state.h"
#include "tap.h"

static void *region;
static struct metrics *m;

/* The value of a sample in text (its whole series, labels and all), or -1. */
static long long
sample(const char *text, const char *series)
{
	size_t n = strlen(series);
	const char *p = text;

	while ((p = strstr(p, series)) != NULL) {
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return atoll(p + n + 1);
		p += n;
	}
	return -1;
}

static char *
render(void)
{
	static struct buf b;

	buf_free(&b);
	buf_init(&b, METRICS_RENDER_MAX);
	if (metrics_render(m, 1000, &b) < 0)
		return NULL;
	return b.data ? b.data : (char *)"";
}

static void
test_counts(void)
{
	/* Each sample: the value it should have, its series, what that shows. */
	static const struct {
		long long want;
		const char *series, *what;
	} samples[] = {
		{ 2, "mcpgate_http_requests_total{route=\"/mcp\",status=\"200\"}", "requests by route and status" },
		{ 1, "mcpgate_http_requests_total{route=\"/mcp\",status=\"403\"}", "… an index keeps its first label" },
		{ 1, "mcpgate_http_requests_total{route=\"none\",status=\"other\"}", "… a status the table lacks: other" },
		{ 1, "mcpgate_jsonrpc_requests_total{method=\"ping\"}", "JSON-RPC methods" },
		{ 1, "mcpgate_tool_calls_total{tool=\"echo\",outcome=\"denied\"}", "tool calls by tool and outcome" },
		{ 1, "mcpgate_tool_calls_total{tool=\"other\",outcome=\"error\"}", "… no name: other" },
		{ 2, "mcpgate_token_cache_hits_total", "token cache hits" },
		{ 1, "mcpgate_token_cache_misses_total", "… and misses" },
		{ 1, "mcpgate_introspection_duration_seconds_bucket{le=\"0.001\"}", "histogram: the first bucket" },
		{ 2, "mcpgate_introspection_duration_seconds_bucket{le=\"0.05\"}", "… cumulative" },
		{ 2, "mcpgate_introspection_duration_seconds_bucket{le=\"10\"}", "… a minute is past 10 s" },
		{ 3, "mcpgate_introspection_duration_seconds_bucket{le=\"+Inf\"}", "… +Inf holds them all" },
		{ 3, "mcpgate_introspection_duration_seconds_count", "… the count is the buckets' total" },
		{ 1, "mcpgate_introspection_errors_total", "introspection errors" },
		{ 1, "mcpgate_jwt_verifications_total{outcome=\"accepted\"}", "JWT verifications by outcome" },
		{ 2, "mcpgate_jwt_verifications_total{outcome=\"refused\"}", "… refused" },
		{ 0, "mcpgate_jwt_verifications_total{outcome=\"error\"}", "… error, shown at 0; nothing past the outcomes" },
		{ 2, "mcpgate_upstream_request_duration_seconds_count{upstream=\"fx\"}", "upstream histogram, by upstream" },
		{ 1, "mcpgate_upstream_errors_total{upstream=\"fx\"}", "upstream errors" },
		{ 1, "mcpgate_rate_limited_total{class=\"tool\"}", "rate-limit refusals by class" },
		{ 3, "mcpgate_rate_limited_total{class=\"tenant\"}", "… each class on its own" },
	};
	const char *t;
	size_t i;

	metrics_request(m, 0, "/mcp", 200);
	metrics_request(m, 0, "/mcp", 200);
	metrics_request(m, 0, "/ignored", 403);	/* the first label of an index stays */
	metrics_request(m, 3, "none", 404);
	metrics_request(m, 3, "none", 299);	/* a status the table lacks */
	metrics_request(m, METRICS_ROUTES, "x", 200);	/* past the routes: dropped */
	metrics_rpc(m, 1, "ping");
	metrics_rpc(m, 31, "other");
	metrics_tool(m, "echo", METRICS_ALLOWED);
	metrics_tool(m, "echo", METRICS_DENIED);
	metrics_tool(m, NULL, METRICS_ERROR);
	metrics_token_cache(m, 1);
	metrics_token_cache(m, 1);
	metrics_token_cache(m, 0);
	metrics_introspection(m, 800, 1);	/* 0.8 ms: the first bucket */
	metrics_introspection(m, 30000, 0);	/* 30 ms: the 0.05 bucket */
	metrics_introspection(m, 60000000, 1);	/* a minute: +Inf only */
	metrics_jwt(m, METRICS_JWT_ACCEPTED);
	metrics_jwt(m, METRICS_JWT_REFUSED);
	metrics_jwt(m, METRICS_JWT_REFUSED);
	metrics_jwt(m, METRICS_JWT_OUTCOMES);	/* past the outcomes: dropped */
	metrics_upstream(m, "fx", 2000, 1);
	metrics_upstream(m, "fx", 2000, 0);
	metrics_limited(m, 4, "tool");
	for (i = 0; i < 3; i++)
		metrics_limited(m, 2, "tenant");
	t = render();
	ok(t != NULL, "rendered");
	if (t == NULL)
		return;
	for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++)
		is_int(sample(t, samples[i].series), samples[i].want, "%s", samples[i].what);
	ok(strstr(t, "/ignored") == NULL && strstr(t, "route=\"x\"") == NULL,
	    "requests: no later label, nothing past the routes");
	ok(strstr(t, "mcpgate_introspection_duration_seconds_sum 60.030800\n") != NULL, "introspection: the sum in seconds");
	ok(strstr(t, "# TYPE mcpgate_tool_calls_total counter\n") && strstr(t, "# HELP mcpgate_tool_calls_total "),
	    "families have TYPE and HELP");
}

/* Names: METRICS_TOOLS slots, then other; names that are no plain printable ASCII, or
 * too long, are other at once; a quote is escaped in the label. */
static void
test_names(void)
{
	char name[64], longname[METRICS_NAME_MAX + 8];
	const char *t;
	int i;

	for (i = 0; i < METRICS_TOOLS + 10; i++) {
		snprintf(name, sizeof(name), "t%03d", i);
		metrics_tool(m, name, METRICS_ALLOWED);
	}
	metrics_tool(m, "with space", METRICS_ALLOWED);
	metrics_tool(m, "caf\xc3\xa9", METRICS_ALLOWED);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	metrics_tool(m, longname, METRICS_ALLOWED);
	t = render();
	if (!ok(t != NULL, "rendered"))
		return;
	/* echo (test_counts) holds one slot: 255 of t000... have theirs */
	is_int(sample(t, "mcpgate_tool_calls_total{tool=\"t254\",outcome=\"allowed\"}"), 1, "slots up to the limit");
	is_int(sample(t, "mcpgate_tool_calls_total{tool=\"t255\",outcome=\"allowed\"}"), -1, "… none beyond it");
	is_int(sample(t, "mcpgate_tool_calls_total{tool=\"other\",outcome=\"allowed\"}"), 11 + 3,
	    "… those go to other, with the blank, the non-ASCII and the too long names");
	ok(strstr(t, "with space") == NULL && strstr(t, "caf") == NULL && strstr(t, "xxxxxxxxxx") == NULL,
	    "… none of which is a label value");
	metrics_upstream(m, "a\"b\\c", 10, 1);
	t = render();
	ok(t && strstr(t, "{upstream=\"a\\\"b\\\\c\"}") != NULL, "a quote and a backslash escaped in a label value");
}

/* Four processes count at once into one region: the exact sum. */
static void
test_processes(void)
{
	pid_t pids[4];
	const char *t;
	int i, ws;

	for (i = 0; i < 4; i++)
		if ((pids[i] = fork()) == 0) {
			int j;

			for (j = 0; j < 25000; j++) {
				metrics_rpc(m, 7, "tools/call");
				metrics_tool(m, (j & 1) ? "p_one" : "p_two", METRICS_ALLOWED);
			}
			_exit(0);
		}
	for (i = 0; i < 4; i++)
		waitpid(pids[i], &ws, 0);
	t = render();
	is_int(t ? sample(t, "mcpgate_jsonrpc_requests_total{method=\"tools/call\"}") : -1, 100000,
	    "4 processes x 25,000: every count");
	ok(t && sample(t, "mcpgate_tool_calls_total{tool=\"other\",outcome=\"allowed\"}") == 14 + 100000,
	    "… and the tool counts (the slots were full: other)");
}

/* A process killed while it claims a name (the claim lock held) blocks nobody. */
static void
test_killed_claimer(void)
{
	struct metrics *fresh;
	void *r2 = mmap(NULL, metrics_region_def.size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	const char *t;
	pid_t pid;
	int ws;

	state_region_make(&metrics_region_def, r2, metrics_region_def.size, 1);
	fresh = metrics_attach(r2, metrics_region_def.size);
	if ((pid = fork()) == 0) {
		state_lock((pthread_mutex_t *)(void *)((char *)r2 + 8));	/* after magic and pad */
		raise(SIGKILL);
	}
	waitpid(pid, &ws, 0);
	metrics_tool(fresh, "after_death", METRICS_ALLOWED);
	metrics_observe_upstream(fresh, "up_after_death", 0, 100, "no answer");
	{
		struct metrics *keep = m;

		m = fresh;
		t = render();
		m = keep;
	}
	ok(t && sample(t, "mcpgate_tool_calls_total{tool=\"after_death\",outcome=\"allowed\"}") == 1,
	    "the claimer died holding the lock: the next claim takes the slot");
	ok(t && sample(t, "mcpgate_upstream_up{upstream=\"up_after_death\"}") == 0, "… and an upstream's too");
	metrics_detach(fresh);
	munmap(r2, metrics_region_def.size);
}

static void
test_dependencies(void)
{
	char detail[METRICS_DETAIL_MAX];
	int64_t since;

	is_int(metrics_upstream_state(m, "never", 1000, &since, detail, sizeof(detail)), METRICS_UNKNOWN,
	    "an upstream never observed: unknown");
	ok(since == 0 && detail[0] == '\0', "… no since, no detail");
	metrics_observe_upstream(m, "gh", 1, 500, NULL);
	metrics_observe_upstream(m, "gh", 1, 600, NULL);
	is_int(metrics_upstream_state(m, "gh", 1000, &since, detail, sizeof(detail)), METRICS_UP, "up");
	is_int(since, 500, "… since the first success: an unchanged state keeps its time");
	metrics_observe_upstream(m, "gh", 0, 700, "Couldn't connect\x01\x7f\xff");
	metrics_observe_upstream(m, "gh", 0, 800, "later");
	is_int(metrics_upstream_state(m, "gh", 1000, &since, detail, sizeof(detail)), METRICS_DOWN, "down");
	is_int(since, 700, "… since the first failure");
	is_str(detail, "Couldn't connect???", "… its detail, cut to printable ASCII");
	metrics_observe_upstream(m, "gh", 1, 900, NULL);
	is_int(metrics_upstream_state(m, "gh", 1000, &since, detail, sizeof(detail)), METRICS_UP, "up again");
	ok(since == 900 && detail[0] == '\0', "… since then, no detail");
	metrics_observe(m, METRICS_DEP_REDIS, 0, 950, "Redis does not answer");
	is_int(metrics_dep_state(m, METRICS_DEP_REDIS, 1000, &since, detail, sizeof(detail)), METRICS_DOWN,
	    "redis: down");
	is_int(metrics_dep_state(m, METRICS_DEP_INTROSPECTION, 1000, &since, detail, sizeof(detail)), METRICS_UNKNOWN,
	    "introspection: not observed yet");
	metrics_observe(m, METRICS_DEP_INTROSPECTION, 1, 5000, NULL);	/* a clock ahead */
	is_int(metrics_dep_state(m, METRICS_DEP_INTROSPECTION, 1000, &since, detail, sizeof(detail)), METRICS_UP,
	    "a state from a time ahead of now: its state");
	is_int(since, 0, "… but no since");
}

/* Written over: garbage names and states never reach the text; a wrong magic counts and
 * shows nothing. */
static void
test_overwritten(void)
{
	unsigned char *p = region;
	size_t size = metrics_region_def.size, i;
	char detail[METRICS_DETAIL_MAX];
	int64_t since;
	const char *t;
	int bad = 0;

	srand(7);
	for (i = 64; i < size; i++)	/* all but the magic and the lock */
		p[i] = (unsigned char)rand();
	t = render();
	ok(t != NULL, "a region of random bytes: rendered, no crash");
	for (i = 0; t && t[i]; i++)
		bad += (t[i] < 0x20 && t[i] != '\n') || (unsigned char)t[i] > 0x7e;
	is_int(bad, 0, "… printable ASCII lines only");
	metrics_tool(m, "fresh", METRICS_ALLOWED);
	ok(metrics_upstream_state(m, "gh", 1000, &since, detail, sizeof(detail)) >= METRICS_UNKNOWN, "… states read");
	memset(region, 0xa5, 4);
	t = render();
	ok(t != NULL && t[0] == '\0', "a wrong magic: nothing shown");
	metrics_tool(m, "x", METRICS_ALLOWED);	/* counts nothing, and no crash */
	is_int(metrics_dep_state(m, METRICS_DEP_REDIS, 1000, &since, detail, sizeof(detail)), METRICS_UNKNOWN,
	    "… every dependency unknown");
}

int
main(int argc, char **argv)
{
	size_t size = metrics_region_def.size;

	tap_args(argc, argv);
	region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	state_region_make(&metrics_region_def, region, size, 1);
	ok(metrics_attach(region, size - 1) == NULL, "a region of another size is refused");
	m = metrics_attach(region, size);
	ok(m != NULL, "attached");
	run_case(test_counts);
	run_case(test_names);
	run_case(test_processes);
	run_case(test_killed_claimer);
	run_case(test_dependencies);
	run_case(test_overwritten);
	metrics_detach(m);
	return done_testing();
}
