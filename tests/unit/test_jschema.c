/* Unit tests: jschema, the JSON Schema validator. The official JSON-Schema-Test-Suite
 * (tests/data/json-schema-test-suite: draft2020-12 and draft7, their required tests;
 * remotes/ served by the resolver as http://localhost:1234/), each file a test line:
 * every failure must be listed in tests/unit/jschema-known-failures.txt, and every
 * test listed there must fail (so that the list stays true). Then the bounds and the
 * error reports. */
#include "autoconf.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jschema.h"
#include "tap.h"

#define SUITE		"/tests/data/json-schema-test-suite"
#define KNOWN		"/tests/unit/jschema-known-failures.txt"
#define REMOTE		"http://localhost:1234/"
#define MAX_KNOWN	256

/* A known failure: file (draft/name.json), case, test, and whether it was seen failing. */
struct known {
	char *file, *kase, *test;
	int seen;
};

static struct known known[MAX_KNOWN];
static size_t nknown;
static char srcdir[1024];

static void
load_known(void)
{
	char path[1200], line[2048], *f[4], *p;
	FILE *fp;
	int i;

	snprintf(path, sizeof(path), "%s%s", srcdir, KNOWN);
	if ((fp = fopen(path, "r")) == NULL)
		return;
	while (fgets(line, sizeof(line), fp) != NULL && nknown < MAX_KNOWN) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		for (i = 0, p = line; i < 4 && p != NULL; i++) {
			f[i] = p;
			if ((p = strchr(p, '\t')) != NULL)
				*p++ = '\0';
		}
		if (i < 3)
			continue;
		known[nknown].file = strdup(f[0]);
		known[nknown].kase = strdup(f[1]);
		known[nknown++].test = strdup(f[2]);
	}
	fclose(fp);
}

static struct known *
find_known(const char *file, const char *kase, const char *test)
{
	size_t i;

	for (i = 0; i < nknown; i++)
		if (strcmp(known[i].file, file) == 0 && strcmp(known[i].kase, kase) == 0 &&
		    strcmp(known[i].test, test) == 0)
			return &known[i];
	return NULL;
}

/* The suite's remotes/, as the resolver of a schema's remote references. */
static json_t *
remotes(const char *uri, void *arg)
{
	char path[1200];

	(void)arg;
	if (strncmp(uri, REMOTE, strlen(REMOTE)) != 0 || strstr(uri, "..") != NULL)
		return NULL;
	snprintf(path, sizeof(path), "%s%s/remotes/%s", srcdir, SUITE, uri + strlen(REMOTE));
	return json_load_file(path, 0, NULL);
}

struct tally {
	int pass, total;
};

/* The tests of one file: its figures in *t; 1 when its failures are all known. */
static int
run_file(const char *draft, const char *name, struct tally *t)
{
	char path[1200], file[256];
	struct gw_error err = { 0 };
	struct jschema_opts o = { 0 };
	struct jschema_error e;
	json_t *doc, *kase, *test;
	struct jschema *s;
	struct known *k;
	size_t i, j;
	int good = 1, valid, rc;

	snprintf(path, sizeof(path), "%s%s/tests/%s/%s", srcdir, SUITE, draft, name);
	snprintf(file, sizeof(file), "%s/%s", draft, name);
	if ((doc = json_load_file(path, JSON_ALLOW_NUL, NULL)) == NULL) {
		printf("# %s: does not load\n", file);
		return 0;
	}
	o.draft = strcmp(draft, "draft7") == 0 ? JSCHEMA_DRAFT_07 : JSCHEMA_DRAFT_2020_12;
	o.resolve = remotes;
	json_array_foreach(doc, i, kase) {
		const char *kd = json_string_value(json_object_get(kase, "description"));

		s = jschema_compile(json_object_get(kase, "schema"), &o, &err);
		json_array_foreach(json_object_get(kase, "tests"), j, test) {
			const char *td = json_string_value(json_object_get(test, "description"));

			valid = json_is_true(json_object_get(test, "valid"));
			rc = s ? jschema_validate(s, json_object_get(test, "data"), &e) : -2;
			t->total++;
			k = find_known(file, kd, td);
			if ((rc == 1) == valid && rc != -2) {
				t->pass++;
				if (k != NULL) {
					printf("# %s: \"%s\" / \"%s\" passes but is listed as a known failure\n", file, kd, td);
					good = 0;
				}
				continue;
			}
			if (k != NULL) {
				k->seen = 1;
				continue;
			}
			good = 0;
			printf("# %s: \"%s\" / \"%s\": %s\n", file, kd, td,
			    rc == -2 ? err.detail : rc == 1 ? "valid, should be invalid" : e.message);
		}
		jschema_free(s);
	}
	json_decref(doc);
	return good;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every required file of a draft, then its totals. */
static void
run_draft(const char *draft)
{
	char path[1200], *names[128];
	struct tally all = { 0, 0 }, t;
	struct dirent *d;
	size_t n = 0, i, len;
	int good;
	DIR *dir;

	snprintf(path, sizeof(path), "%s%s/tests/%s", srcdir, SUITE, draft);
	if ((dir = opendir(path)) == NULL) {
		ok(0, "%s: the suite's folder %s opens", draft, path);
		return;
	}
	while ((d = readdir(dir)) != NULL && n < 128)
		if ((len = strlen(d->d_name)) > 5 && strcmp(d->d_name + len - 5, ".json") == 0)
			names[n++] = strdup(d->d_name);
	closedir(dir);
	qsort(names, n, sizeof(names[0]), name_cmp);
	for (i = 0; i < n; i++) {
		t.pass = t.total = 0;
		good = run_file(draft, names[i], &t);
		ok(good, "%s/%s: %d/%d pass, the others known failures", draft, names[i], t.pass, t.total);
		all.pass += t.pass;
		all.total += t.total;
		free(names[i]);
	}
	printf("# %s: %d of %d required tests pass (%.1f %%)\n", draft, all.pass, all.total,
	    all.total ? 100.0 * all.pass / all.total : 0.0);
	ok(all.total > 0 && all.pass * 100 >= all.total * 98, "%s: at least 98 %% of the required tests pass", draft);
}

static void
test_jschema_suite(void)
{
	size_t i;

	load_known();
	run_draft("draft2020-12");
	run_draft("draft7");
	for (i = 0; i < nknown; i++)
		if (!known[i].seen)
			printf("# listed but not run: %s \"%s\" / \"%s\"\n", known[i].file, known[i].kase, known[i].test);
	for (i = 0; i < nknown && known[i].seen; i++)
		;
	ok(i == nknown, "every known failure listed was run (and failed)");
}

/* 1, 0 or -1 of text's schema against text's instance; e filled in. */
static int
check(const char *schema, const char *instance, struct jschema_error *e, struct gw_error *err)
{
	json_t *sj = json_loads(schema, JSON_DECODE_ANY, NULL), *ij = json_loads(instance, JSON_DECODE_ANY, NULL);
	struct jschema *s;
	int rc = -2;

	if (sj != NULL && ij != NULL && (s = jschema_compile(sj, NULL, err)) != NULL) {
		rc = jschema_validate(s, ij, e);
		jschema_free(s);
	}
	json_decref(sj);
	json_decref(ij);
	return rc;
}

/* The first error's instance path, schema path, keyword. */
static void
test_jschema_errors(void)
{
	struct jschema_error e;
	struct gw_error err = { 0 };

	is_int(check("{\"properties\":{\"a/b\":{\"items\":{\"type\":\"string\"}}}}", "{\"a/b\":[\"x\",3]}", &e,
	    &err), 0, "an item of the wrong type is invalid");
	is_str(e.instance_path, "/a~1b/1", "its instance path");
	is_str(e.schema_path, "/properties/a~1b/items/type", "its schema path");
	is_str(e.keyword, "type", "its keyword");
	is_int(check("{\"properties\":{\"a\":{}},\"additionalProperties\":false}", "{\"a\":1,\"b\":2}", &e, &err), 0, "a member additionalProperties forbids");
	is_str(e.message, "the property \"b\" is not allowed", "said as the member not allowed");
	is_str(e.keyword, "additionalProperties", "its keyword");
	is_str(e.schema_path, "/additionalProperties", "its schema path: the false schema's");
	is_str(e.instance_path, "/b", "its instance path");
	is_int(check("{\"prefixItems\":[{},false]}", "[1,2]", &e, &err), 0, "an item prefixItems forbids");
	is_str(e.message, "item 1 is not allowed", "said as the item not allowed");
	is_str(e.schema_path, "/prefixItems/1", "its schema path");
	is_int(check("{\"allOf\":[false]}", "1", &e, &err), 0, "allOf: [false]");
	is_str(e.message, "the schema false allows nothing", "said as the false schema");
	is_int(check("false", "1", &e, &err), 0, "the schema false");
	is_str(e.keyword, "false", "its keyword: false");
	is_str(e.schema_path, "", "its schema path: the root");
	is_int(check("{\"anyOf\":[{\"type\":\"string\"},{\"minimum\":5}]}", "3", &e, &err), 0,
	    "anyOf: none matches");
	is_str(e.schema_path, "/anyOf", "anyOf's error is its own, not a branch's");
	is_int(check("{\"maxLength\":2}", "\"\xcf\x80\xcf\x80\"", &e, &err), 1,
	    "string length counts code points");
	is_int(check("{\"pattern\":\"(a)\\\\1\"}", "\"aa\"", &e, &err), -2,
	    "a backreference is a schema error: %s", err.detail);
	is_int(check("{\"$ref\":\"http://example.com/x.json\"}", "1", &e, &err), -2,
	    "a remote $ref is never fetched: %s", err.detail);
	is_int(check("{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"$ref\":\"#/definitions/a\","
	    "\"maximum\":0,\"definitions\":{\"a\":{\"minimum\":1}}}", "5", &e, &err), 1,
	    "draft-07: $ref's siblings are ignored");
	is_int(check("{\"dependencies\":{\"a\":[\"b\"],\"c\":{\"required\":[\"d\"]}}}", "{\"a\":1,\"c\":2,\"d\":3}",
	    &e, &err), 0, "2020-12: dependencies counts too (schemas written for both drafts)");
	is_str(e.keyword, "dependencies", "its keyword");
	is_int(check("{\"type\":\"integer\",\"multipleOf\":0.5}", "1e308", &e, &err), 1,
	    "a whole number too large to divide is a multiple of 0.5");
	is_int(check("{\"multipleOf\":0.123456789}", "1e308", &e, &err), 0,
	    "… but not of 0.123456789");
}

/* format: an annotation by default; asserted for the formats jschema knows when asked. */
static void
test_jschema_format(void)
{
	static const struct {
		const char *format, *value;
		int valid;
	} t[] = {
		{ "date", "2024-02-29", 1 }, { "date", "2023-02-29", 0 }, { "date", "2024-13-01", 0 },
		{ "date-time", "2024-01-02T03:04:05.6Z", 1 }, { "date-time", "2024-01-02T03:04:05+01:00", 1 },
		{ "date-time", "2024-01-02 03:04:05Z", 0 }, { "time", "23:59:60Z", 1 }, { "time", "24:00:00Z", 0 },
		{ "email", "a@b.example", 1 }, { "email", "a@b@c", 0 }, { "ipv4", "192.168.0.1", 1 },
		{ "ipv4", "192.168.0.01", 0 }, { "ipv4", "256.1.1.1", 0 }, { "ipv6", "::1", 1 }, { "ipv6", "1:::2", 0 },
		{ "hostname", "a-b.example.org", 1 }, { "hostname", "-a.example", 0 },
		{ "uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d16380", 1 }, { "uuid", "2eb8aa08aa9811eab4aa73b441d16380", 0 },
		{ "uri", "https://example.org/a?b#c", 1 }, { "uri", "/relative", 0 }, { "color", "anything", 1 },
	};
	struct jschema_opts o = { 0 };
	struct jschema_error e;
	struct jschema *s, *plain;
	json_t *sch, *v;
	size_t i;

	o.format_assert = 1;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		sch = json_pack("{ss}", "format", t[i].format);
		v = json_string(t[i].value);
		s = jschema_compile(sch, &o, NULL);
		plain = jschema_compile(sch, NULL, NULL);
		is_int(s ? jschema_validate(s, v, &e) : -2, t[i].valid, "format %s: \"%s\"", t[i].format, t[i].value);
		is_int(plain ? jschema_validate(plain, v, &e) : -2, 1, "an annotation only, by default");
		jschema_free(s);
		jschema_free(plain);
		json_decref(sch);
		json_decref(v);
	}
}

/* One compiled schema, validated by several threads at once: each gets the answers it
 * would alone (the compiled schema is read-only). */
struct shared {
	const struct jschema *s;
	json_t *good, *bad;
	int wrong;
};

static void *
validator(void *arg)
{
	struct shared *sh = arg;
	struct jschema_error e;
	int i;

	for (i = 0; i < 300; i++)
		if (jschema_validate(sh->s, sh->good, &e) != 1 || jschema_validate(sh->s, sh->bad, &e) != 0 ||
		    strcmp(e.instance_path, "/n/1/v") != 0)
			sh->wrong++;
	return NULL;
}

static void
test_jschema_threads(void)
{
	struct shared sh[4];
	pthread_t t[4];
	struct jschema *s;
	json_t *sch, *good, *bad;
	int i, wrong = 0;

	sch = json_loads("{\"$defs\":{\"i\":{\"$dynamicAnchor\":\"i\",\"properties\":{\"v\":{\"pattern\":\"^[a-z]+$\"}},"
	    "\"unevaluatedProperties\":false}},\"properties\":{\"n\":{\"items\":{\"$dynamicRef\":\"#i\"}}}}", 0, NULL);
	good = json_loads("{\"n\":[{\"v\":\"ab\"},{\"v\":\"cd\"}]}", 0, NULL);
	bad = json_loads("{\"n\":[{\"v\":\"ab\"},{\"v\":\"C\"}]}", 0, NULL);
	s = jschema_compile(sch, NULL, NULL);
	ok(s != NULL, "a schema for threads compiles");
	for (i = 0; s != NULL && i < 4; i++) {
		sh[i].s = s, sh[i].good = good, sh[i].bad = bad, sh[i].wrong = 0;
		pthread_create(&t[i], NULL, validator, &sh[i]);
	}
	for (i = 0; s != NULL && i < 4; i++) {
		pthread_join(t[i], NULL);
		wrong += sh[i].wrong;
	}
	is_int(wrong, 0, "4 threads x 300 validations of one compiled schema, each answered right");
	jschema_free(s);
	json_decref(sch);
	json_decref(good);
	json_decref(bad);
}

/* A pattern's search spends the budget by its size and the subject's; a schema's
 * patterns together are capped at compile. */
static void
test_jschema_pattern_bounds(void)
{
	struct jschema_error e;
	struct jschema *s;
	json_t *sch, *v, *pp;
	char *subject, key[64];
	struct gw_error err = { 0 };
	size_t n = 300000;
	int i;

	sch = json_pack("{ss}", "pattern", "[ab]{1000}z");
	subject = malloc(n + 1);
	memset(subject, 'a', n);
	subject[n] = '\0';
	v = json_string(subject);
	s = jschema_compile(sch, NULL, &err);
	ok(s != NULL, "a pattern of 1000 instructions compiles");
	is_int(s ? jschema_validate(s, v, &e) : -2, -1, "its search of 300,000 bytes exceeds the work bound: %s",
	    e.message);
	jschema_free(s);
	json_decref(sch);
	json_decref(v);
	free(subject);
	pp = json_object();
	for (i = 0; i < 80; i++) {
		snprintf(key, sizeof(key), "[ab]{1000}[ab]{1000}[ab]{1000}[ab]{%d}", 900 + i);
		json_object_set_new(pp, key, json_true());
	}
	sch = json_pack("{so}", "patternProperties", pp);
	ok(jschema_compile(sch, NULL, &err) == NULL, "80 patterns of 3900 instructions: %s", err.detail);
	json_decref(sch);
}

/* Pathological schemas and instances end within the bounds: -1, never a stall. */
static void
test_jschema_bounds(void)
{
	struct timespec t0, t1;
	struct jschema_error e;
	char schema[8192], inst[4096];
	struct gw_error err = { 0 };
	size_t len = 0;
	double secs;
	int i;

	/* 24 levels of anyOf, each of two refs to the next: 2^24 paths to a failure. */
	len += (size_t)snprintf(schema + len, sizeof(schema) - len, "{\"$ref\":\"#/$defs/d0\",\"$defs\":{");
	for (i = 0; i < 24; i++)
		len += (size_t)snprintf(schema + len, sizeof(schema) - len,
		    "\"d%d\":{\"anyOf\":[{\"$ref\":\"#/$defs/d%d\"},{\"$ref\":\"#/$defs/d%d\"}]},", i, i + 1, i + 1);
	snprintf(schema + len, sizeof(schema) - len, "\"d24\":false}}");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	is_int(check(schema, "1", &e, &err), -1, "an exponential schema exceeds the work bound: %s",
	    e.message);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ok(secs < 2.0, "and stops at once (%.3f s)", secs);
	is_int(check("{\"$ref\":\"#\"}", "1", &e, &err), -1, "a $ref to itself ends: %s", e.message);
	memset(inst, '[', 100);
	memset(inst + 100, ']', 100);
	inst[200] = '\0';
	is_int(check("{\"items\":{\"$ref\":\"#\"}}", inst, &e, &err), -1,
	    "an instance nested 100 deep exceeds the depth bound: %s", e.message);
	is_int(check("{\"items\":{\"$ref\":\"#\"}}", "[[[[[[[[[[]]]]]]]]]]", &e, &err), 1,
	    "nested 10 deep is fine");
	test_jschema_pattern_bounds();
}

int
main(int argc, char **argv)
{
	const char *d = getenv("MCPGATE_SRCDIR");

	tap_args(argc, argv);
	snprintf(srcdir, sizeof(srcdir), "%s", d && *d ? d : SRCDIR);
	run_case(test_jschema_suite);
	run_case(test_jschema_errors);
	run_case(test_jschema_format);
	run_case(test_jschema_threads);
	run_case(test_jschema_bounds);
	return done_testing();
}
