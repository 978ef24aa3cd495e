/* Unit tests: allocation failure. Every allocation our code makes (malloc, calloc,
 * realloc, strdup, strndup: wrapped at link time, -Wl,--wrap; jansson's through
 * json_set_alloc_funcs) is made to fail in turn, the first, then the second, and so
 * on, until a run makes fewer allocations than the one that would fail. Each run must
 * either fail with an error that says so, or not have met the failure: a loader that
 * "succeeds" past a failed allocation serves a half-built configuration. */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config.h"
#include "fixture.h"
#include "jschema.h"
#include "tap.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

/* 0: nothing fails. Otherwise the countdown: the allocation that takes it to 0 fails. */
static long oom_left;
static int oom_hit;

static int
oom_now(void)
{
	if (oom_left == 0 || --oom_left > 0)
		return 0;
	oom_hit = 1;
	errno = ENOMEM;
	return 1;
}

void *__wrap_malloc(size_t n) { return oom_now() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t k, size_t n) { return oom_now() ? NULL : __real_calloc(k, n); }
void *__wrap_realloc(void *p, size_t n) { return oom_now() ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) { return oom_now() ? NULL : __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) { return oom_now() ? NULL : __real_strndup(s, n); }
static void *json_alloc(size_t n) { return oom_now() ? NULL : __real_malloc(n); }

/* Every part of the loader: includes, upstreams, groups, tenants, limits, metrics, a
 * credential file, lists, derived URLs. */
static const char conf[] =
    "[gateway]\n"
    "resource = https://gw.example.com/mcp\n"
    "name = com.example/gateway\n"
    "allowed-origins = https://app.example.com https://b.example.com\n"
    "trusted-proxies = 127.0.0.1 10.0.0.0/8\n"
    "[auth]\n"
    "issuer = https://idp.example.com\n"
    "introspection-endpoint = https://idp.example.com/token/introspection\n"
    "client-id = mcpgate\n"
    "client-secret-file = %s/secret\n"
    "required-scopes = mcp:tools mcp:read\n"
    "jwt-algs = RS256 ES256\n"
    "[upstream \"github\"]\n"
    "url = http://127.0.0.1:9001/mcp\n"
    "prefix = gh_\n"
    "read-only-tools = gh_get_* gh_list_*\n"
    "[upstream \"docs\"]\n"
    "url = http://127.0.0.1:9002/mcp\n"
    "[group \"github\"]\n"
    "tools = gh_*\n"
    "scopes = mcp:github\n"
    "limit-tool = 30/60\n"
    "prompts = gh_summarize_*\n"
    "[tenant \"acme\"]\n"
    "groups = github docs\n"
    "access-mode = read-only\n"
    "deny = gh_delete_*\n"
    "limit-token = 60/60\n"
    "[limits]\n"
    "ip = 300/60\n"
    "[metrics]\n"
    "path = /metrics\n"
    "allow = 127.0.0.1 ::1\n"
    "include = %s/more.conf\n";

static const char more[] =
    "[tenant \"*\"]\n"
    "groups = docs\n";

static void
config_under_oom(void)
{
	static struct cfg_errors errs;
	char text[sizeof(conf) + 256];
	const char *dir = fixture_dir(), *path;
	struct config *cfg;
	long k;
	int rc, lied = 0, unsaid = 0, runs = 0;

	fixture_file("secret", "s3cret\n");
	fixture_file("more.conf", more);
	snprintf(text, sizeof(text), conf, dir, dir);
	path = fixture_file("main.conf", text);
	rc = config_load(path, &cfg, &errs);
	if (!ok(rc == 0, "the configuration loads when nothing fails"))
		printf("# %s\n", errs.n ? errs.err[0].detail : "");
	config_unref(cfg);
	for (k = 1; k < 100000; k++) {
		oom_hit = 0;
		oom_left = k;
		rc = config_load(path, &cfg, &errs);
		oom_left = 0;
		if (!oom_hit) {
			ok(rc == 0 && cfg && cfg->prm_path, "past the last of its %ld allocations, it loads", k - 1);
			config_unref(cfg);
			break;
		}
		runs++;
		if (rc == 0) {
			if (lied++ < 20)
				printf("# allocation %ld failed, and the load succeeded\n", k);
		} else if (errs.n == 0 || !strstr(errs.err[0].detail, "out of memory")) {
			if (!unsaid++)
				printf("# allocation %ld failed: \"%s\"\n", k, errs.n ? errs.err[0].detail : "(no error)");
		}
		config_unref(cfg);
	}
	ok(runs > 50, "allocations made to fail: %d", runs);
	is_int(lied, 0, "no load succeeds past a failed allocation");
	is_int(unsaid, 0, "each failed load says \"out of memory\"");
}

/* The schema validator: a compile fails saying so, or gives a schema whose validations
 * each answer right or stop (-1) saying "out of memory". */
static void
jschema_under_oom(void)
{
	static const char schema[] =
	    "{\"$id\":\"http://x.example/s\",\"$defs\":{\"n\":{\"$anchor\":\"n\",\"type\":\"integer\"}},"
	    "\"properties\":{\"a\":{\"$ref\":\"#n\"},\"b\":{\"pattern\":\"^(x|y)+$\"}},"
	    "\"patternProperties\":{\"^c[0-9]{1,3}$\":{\"minimum\":1}},\"propertyNames\":{\"maxLength\":3},"
	    "\"anyOf\":[{\"required\":[\"a\"]},{\"required\":[\"b\"]}],\"unevaluatedProperties\":false}";
	struct jschema_error e1, e2;
	struct jschema *s;
	json_t *sch, *good, *bad;
	struct gw_error err = { 0 };
	long k;
	int rc1 = 0, rc2 = 0, lied = 0, unsaid = 0, runs = 0;

	sch = json_loads(schema, 0, NULL);
	good = json_loads("{\"a\":1,\"b\":\"xy\",\"c1\":2}", 0, NULL);
	bad = json_loads("{\"a\":1,\"zz\":1}", 0, NULL);
	for (k = 1; k < 100000; k++) {
		oom_hit = 0;
		oom_left = k;
		err.code = GW_OK;
		err.detail[0] = '\0';	/* a failure that says nothing shows */
		if ((s = jschema_compile(sch, NULL, &err)) != NULL) {
			rc1 = jschema_validate(s, good, &e1);
			rc2 = jschema_validate(s, bad, &e2);
		}
		oom_left = 0;
		jschema_free(s);
		if (!oom_hit) {
			ok(s != NULL && rc1 == 1 && rc2 == 0, "past the last of its %ld allocations, it validates", k - 1);
			break;
		}
		runs++;
		if (s == NULL) {
			if ((err.code != GW_EINTERNAL || strstr(err.detail, "out of memory") == NULL) && !unsaid++)
				printf("# allocation %ld failed: \"%s\"\n", k, err.detail);
		} else if (!(rc1 == 1 || (rc1 == -1 && strstr(e1.message, "out of memory"))) ||
		    !(rc2 == 0 || (rc2 == -1 && strstr(e2.message, "out of memory")))) {
			if (lied++ < 20)
				printf("# allocation %ld failed: %d (%s), %d (%s)\n", k, rc1, e1.message, rc2, e2.message);
		}
	}
	ok(runs > 20, "allocations made to fail: %d", runs);
	is_int(lied, 0, "no validation answers wrong past a failed allocation");
	is_int(unsaid, 0, "each failed compile says \"out of memory\"");
	json_decref(sch);
	json_decref(good);
	json_decref(bad);
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	json_set_alloc_funcs(json_alloc, free);
	run_case(config_under_oom);
	run_case(jschema_under_oom);
	return done_testing();
}
