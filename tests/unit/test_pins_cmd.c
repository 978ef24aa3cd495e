/* Unit tests: `mcpgate pins`'s pure parts: the line diff (linediff.h: hunks, context,
 * merging, all-added, the bound past which both texts are shown whole) and the judging
 * of each upstream's records against the pins (pins_review_judge: pinned, changed, new,
 * gone, hygiene, an upstream with pin = off, one that is down, one listing per
 * caller). */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "linediff.h"
#include "pins_review.h"
#include "tap.h"

#define T0	((time_t)1795996800)	/* 2026-11-30T00:00:00Z */

/* The hunks of a to b (a new string), and linediff's result in *rc. */
static char *
hunks(const char *a, const char *b, int *rc)
{
	struct buf out;

	buf_init(&out, 1u << 24);
	*rc = linediff_unified(a, b, 3, &out);
	if (out.data == NULL)
		return strdup("");
	return out.data;
}

static void
test_diff_small(void)
{
	char *s;
	int rc;

	s = hunks("a\nb\nc\n", "a\nb\nc\n", &rc);
	ok(rc == 0 && *s == '\0', "the same texts: no hunk, 0");
	free(s);
	s = hunks("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n", &rc);
	is_str(s, "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n", "one line changed: three lines of context");
	ok(rc == 1, "texts that differ: 1");
	free(s);
	s = hunks("", "{\n  \"a\": 1\n}", &rc);
	is_str(s, "@@ -0,0 +1,3 @@\n+{\n+  \"a\": 1\n+}\n", "from nothing: all added (a last line without newline)");
	free(s);
	s = hunks("x\ny", "", &rc);
	is_str(s, "@@ -1,2 +0,0 @@\n-x\n-y\n", "to nothing: all removed");
	free(s);
	s = hunks("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n", "A\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nM\n", &rc);
	is_str(s, "@@ -1,4 +1,4 @@\n-a\n+A\n b\n c\n d\n@@ -10,4 +10,4 @@\n j\n k\n l\n-m\n+M\n",
	    "changes far apart: two hunks");
	free(s);
	s = hunks("a\nb\nc\nd\ne\nf\ng\nh\n", "A\nb\nc\nd\ne\nf\ng\nH\n", &rc);
	is_str(s, "@@ -1,8 +1,8 @@\n-a\n+A\n b\n c\n d\n e\n f\n g\n-h\n+H\n",
	    "changes six lines apart: one hunk");
	free(s);
	s = hunks("k\nx\nk\n", "k\ny\nz\nk\n", &rc);
	is_str(s, "@@ -1,3 +1,4 @@\n k\n-x\n+y\n+z\n k\n", "the removed line before the added ones");
	free(s);
	s = hunks("a\nb\nc\nd\n", "b\nX\nd\ne\n", &rc);
	is_str(s, "@@ -1,4 +1,4 @@\n-a\n b\n-c\n+X\n d\n+e\n", "a longest common subsequence");
	free(s);
}

/* Past the bound: 3000 lines against 3000 others, all different; the lines shown whole. */
static void
test_diff_bound(void)
{
	struct buf a, b;
	char *s, *p;
	size_t i, minus = 0, plus = 0;
	int rc;

	buf_init(&a, 1u << 20);
	buf_init(&b, 1u << 20);
	for (i = 0; i < 3000; i++)
		if (buf_printf(&a, "a%zu\n", i) < 0 || buf_printf(&b, "b%zu\n", i) < 0)
			break;
	s = hunks(buf_str(&a), buf_str(&b), &rc);
	ok(rc == 1 && strncmp(s, "@@ -1,3000 +1,3000 @@\n-a0\n", 20) == 0, "past the bound: one hunk, a whole then b");
	for (p = s; (p = strchr(p, '\n')) != NULL && p[1]; p++) {
		minus += p[1] == '-';
		plus += p[1] == '+';
	}
	ok(minus == 3000 && plus == 3000, "every line of both: %zu removed, %zu added", minus, plus);
	free(s);
	buf_free(&a);
	buf_free(&b);
}

/* A tool record's definition digest. */
static void
digest_of(const char *json, char out[CANON_DIGEST_LEN])
{
	json_t *rec = json_loads(json, 0, NULL);

	if (tooldef_digest(CATALOG_TOOLS, rec, out) < 0)
		out[0] = '\0';
	json_decref(rec);
}

static const struct pins_review_entry *
entry(const struct pins_review *r, size_t up, enum pins_kind kind, const char *name)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->e[i].up == up && r->e[i].kind == kind && strcmp(r->e[i].name, name) == 0)
			return &r->e[i];
	return NULL;
}

/* Long: a configuration of four upstreams, their lists and pins, then every state. */
static void
test_judge(void)
{
	static const char *const names[] = { "files", "off", "down", "mine" };
	struct cfg_upstream ups[4];
	struct config cfg;
	struct pins *pins = pins_new();
	struct gw_error err;
	struct pins_review r;
	const struct pins_review_entry *e;
	char dsame[CANON_DIGEST_LEN], dold[CANON_DIGEST_LEN], dgone[CANON_DIGEST_LEN];
	json_t *lists[4];
	size_t i;

	memset(&cfg, 0, sizeof(cfg));
	memset(ups, 0, sizeof(ups));
	for (i = 0; i < 4; i++) {
		ups[i].s.name = (char *)(uintptr_t)names[i];
		ups[i].pin = i == 1 ? UP_PIN_OFF : UP_PIN_WARN;
		ups[i].hygiene = 1;
	}
	cfg.upstreams = ups;
	cfg.n_upstreams = 4;
	lists[0] = json_loads("{\"caps\": {}, \"tools\": ["
	    "{\"name\": \"read\", \"description\": \"Reads\", \"_meta\": {\"x\": 1}},"
	    "{\"name\": \"write\", \"description\": \"Writes now\"},"
	    "{\"name\": \"evil\", \"description\": \"a\\u202eb\"}],"
	    "\"resourceTemplates\": [{\"uriTemplate\": \"file:///{path}\", \"name\": \"file\"}]}", 0, NULL);
	lists[1] = json_loads("{\"caps\": {}, \"tools\": [{\"name\": \"t\"}]}", 0, NULL);
	lists[2] = NULL;
	lists[3] = json_loads("{\"caps\": {}, \"perCaller\": true}", 0, NULL);
	digest_of("{\"name\": \"read\", \"description\": \"Reads\"}", dsame);
	digest_of("{\"name\": \"write\", \"description\": \"Writes\"}", dold);
	digest_of("{\"name\": \"gone\"}", dgone);
	{
		struct pin p1 = { "files", PINS_TOOL, "read", dsame, T0, "alice", NULL };
		struct pin p2 = { "files", PINS_TOOL, "write", dold, T0, "alice", NULL };
		struct pin p3 = { "files", PINS_TOOL, "gone", dgone, T0, "alice", NULL };
		struct pin p4 = { "down", PINS_TOOL, "x", dgone, T0, "alice", NULL };
		struct pin p5 = { "off", PINS_TOOL, "y", dgone, T0, "alice", NULL };

		ok(pins_set(pins, &p1, &err) == 0 && pins_set(pins, &p2, &err) == 0 && pins_set(pins, &p3, &err) == 0 &&
		    pins_set(pins, &p4, &err) == 0 && pins_set(pins, &p5, &err) == 0, "the pins");
	}
	ok(pins_review_judge(&r, &cfg, pins, lists) == 0, "judged");
	ok(r.up[0] == PINS_REVIEW_UP_READ && r.up[1] == PINS_REVIEW_UP_OFF && r.up[2] == PINS_REVIEW_UP_UNREAD &&
	    r.up[3] == PINS_REVIEW_UP_PER_CALLER, "upstreams: read, off, unread, per caller");
	is_int(r.n, 5, "five records, all of the upstream read");
	e = entry(&r, 0, PINS_TOOL, "read");
	ok(e && e->state == PINS_REVIEW_PINNED && e->hygiene.found == 0, "read: pinned (its _meta is no part of it)");
	e = entry(&r, 0, PINS_TOOL, "write");
	ok(e && e->state == PINS_REVIEW_CHANGED && strcmp(e->pin->digest, dold) == 0 && strcmp(e->digest, dold) != 0,
	    "write: changed, with its pin");
	e = entry(&r, 0, PINS_TOOL, "evil");
	ok(e && e->state == PINS_REVIEW_NEW && (e->hygiene.found & TOOLDEF_BIDI) && strstr(e->hygiene.reason, "U+202E"),
	    "evil: new, a bidi control found (%s)", e ? e->hygiene.reason : "");
	e = entry(&r, 0, PINS_TOOL, "gone");
	ok(e && e->state == PINS_REVIEW_GONE && e->def == NULL && strcmp(e->digest, dgone) == 0, "gone: gone");
	e = entry(&r, 0, PINS_TEMPLATE, "file:///{path}");
	ok(e && e->state == PINS_REVIEW_NEW, "a template by its uriTemplate: new");
	ok(strcmp(r.e[0].name, "evil") == 0 && strcmp(r.e[3].name, "write") == 0 && r.e[4].kind == PINS_TEMPLATE,
	    "sorted by kind, then name");
	pins_review_free(&r);
	ok(pins_review_judge(&r, &cfg, NULL, lists) == 0 && r.n == 4 && r.e[0].state == PINS_REVIEW_NEW &&
	    r.e[3].state == PINS_REVIEW_NEW, "no pins: every record new");
	pins_review_free(&r);
	json_decref(lists[0]);
	json_decref(lists[1]);
	json_decref(lists[3]);
	pins_free(pins);
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	run_case(test_diff_small);
	run_case(test_diff_bound);
	run_case(test_judge);
	return done_testing();
}
