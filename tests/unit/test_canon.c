/* Unit tests: canonical JSON (canon.h): what does not change the digest (member order,
 * spacing, 1.0 for 1), what does (any string, number or array order), a known vector
 * (its SHA-256 computed apart: printf '%s' TEXT | sha256sum), and the caps. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "secret.h"
#include "tap.h"

/* The digest of the JSON text s, or "" when it does not load or canon_digest fails. */
static const char *
digest_of(const char *s, char out[CANON_DIGEST_LEN])
{
	json_t *v = json_loads(s, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);

	out[0] = '\0';
	if (v == NULL || canon_digest(v, out) < 0)
		out[0] = '\0';
	json_decref(v);
	return out;
}

/* The canonical text of the JSON text s (a new string), or NULL. */
static char *
text_of(const char *s)
{
	json_t *v = json_loads(s, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	char *t = v ? canon_text(v) : NULL;

	json_decref(v);
	return t;
}

static int
same_digest(const char *a, const char *b)
{
	char da[CANON_DIGEST_LEN], db[CANON_DIGEST_LEN];

	return digest_of(a, da)[0] != '\0' && strcmp(da, digest_of(b, db)) == 0;
}

static void
test_vector(void)
{
	const char *in = "{ \"c\": 0.1, \"b\": [1.0, 2.5, \"\\u00e9\", \"\\u0001\\n\"],\n"
	    "  \"a\": {\"y\": null, \"x\": true} }";
	char d[CANON_DIGEST_LEN], *t = text_of(in);

	is_str(t, "{\"a\":{\"x\":true,\"y\":null},\"b\":[1,2.5,\"\xc3\xa9\",\"\\u0001\\n\"],\"c\":0.10000000000000001}",
	    "the canonical text: sorted, compact, UTF-8 kept, 1.0 an integer, 17 digits");
	is_str(digest_of(in, d), "sha256:e74b3a8a19045b7d4f93580a272f87adeb77699989f826ffd3fabb7a42fe0fd6",
	    "its digest: the known vector");
	is_str(digest_of("{}", d), "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
	    "the empty object's");
	ok(canon_digest_valid(d), "a digest is valid");
	ok(!canon_digest_valid("sha256:44136FA355B3678A1146AD16F7E8649E94FB4FC21FE77E8310C060F61CAAFF8A")
	    && !canon_digest_valid("sha256:44136fa3") && !canon_digest_valid("sha1:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a")
	    && !canon_digest_valid("sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a0"),
	    "uppercase, short, another hash, long: not digests");
	free(t);
	t = text_of("{\"\\u00e9\":1,\"ab\":2,\"a\":3,\"B\":4,\"\\u4e2d\":5,\"\\ud83d\\ude00\":6}");
	is_str(t, "{\"B\":4,\"a\":3,\"ab\":2,\"\xc3\xa9\":1,\"\xe4\xb8\xad\":5,\"\xf0\x9f\x98\x80\":6}",
	    "members sorted by their bytes (UTF-8 order: code point order)");
	free(t);
}

static void
test_same(void)
{
	ok(same_digest("{\"a\":1,\"b\":2}", "{\"b\":2,\"a\":1}"), "member order does not count");
	ok(same_digest("{\"a\":[1,{\"y\":2,\"x\":3}]}", "{ \"a\" : [ 1 , { \"x\" : 3 , \"y\" : 2 } ] }\n"),
	    "spacing and nested order do not count");
	ok(same_digest("{\"n\":1.0}", "{\"n\":1}") && same_digest("[1e2]", "[100]") && same_digest("[-0.0]", "[0]"),
	    "an integral real is its integer (1.0, 1e2, -0.0)");
	ok(same_digest("[9007199254740992.0]", "[9007199254740992]"), "… up to 2^53");
	ok(!same_digest("[18014398509481984.0]", "[18014398509481984]"), "… not past it (a real stays a real)");
	ok(same_digest("[0.1]", "[0.10000000000000001]"), "one double, two spellings");
	ok(same_digest("[\"\\u00e9\"]", "[\"\xc3\xa9\"]") && same_digest("[\"\\/\"]", "[\"/\"]"),
	    "a string's escapes do not count");
}

static void
test_differ(void)
{
	ok(!same_digest("{\"a\":\"x\"}", "{\"a\":\"y\"}"), "a changed string changes it");
	ok(!same_digest("{\"a\":\"x\"}", "{\"b\":\"x\"}"), "… a changed member name");
	ok(!same_digest("{\"a\":1}", "{\"a\":2}") && !same_digest("{\"a\":1}", "{\"a\":1.5}"), "… a changed number");
	ok(!same_digest("[1,2]", "[2,1]"), "… array order");
	ok(!same_digest("{\"a\":1}", "{\"a\":\"1\"}") && !same_digest("{\"a\":null}", "{}"), "… a type, a member");
	ok(!same_digest("[\"a\\u0000\"]", "[\"a\"]"), "… a NUL in a string");
}

/* A value nested n deep: [[[...]]]. */
static json_t *
nested(int n)
{
	json_t *v = json_array(), *o;

	while (--n > 0) {
		o = json_array();
		json_array_append_new(o, v);
		v = o;
	}
	return v;
}

static void
test_caps(void)
{
	json_t *v, *big;
	char d[CANON_DIGEST_LEN], *t, *s;

	v = nested(CANON_DEPTH_MAX + 1);
	t = canon_text(v);
	ok(t != NULL, "nesting of CANON_DEPTH_MAX + 1 levels is fine");
	free(t);
	json_decref(v);
	v = nested(CANON_DEPTH_MAX + 2);
	ok(canon_text(v) == NULL && canon_dup(v) == NULL && canon_digest(v, d) < 0, "one deeper is refused");
	json_decref(v);
	s = malloc(CANON_MAX_BYTES);
	memset(s, 'x', CANON_MAX_BYTES - 3);
	s[CANON_MAX_BYTES - 3] = '\0';
	big = json_string(s);
	t = canon_text(big);
	ok(t != NULL && strlen(t) == CANON_MAX_BYTES - 1, "a text of the cap, less one byte");
	free(t);
	json_decref(big);
	memset(s, 'x', CANON_MAX_BYTES - 1);
	s[CANON_MAX_BYTES - 1] = '\0';
	big = json_string(s);
	ok(canon_text(big) == NULL && canon_digest(big, d) < 0, "a text over the cap is refused");
	json_decref(big);
	free(s);
	ok(canon_text(NULL) == NULL && canon_dup(NULL) == NULL, "NULL is no value");
	big = json_pack("{s:o}", "a", json_stringn_nocheck("\xff", 1));
	ok(canon_text(big) == NULL && canon_digest(big, d) < 0, "a string that is not UTF-8 has no text");
	json_decref(big);
}

static void
test_dup(void)
{
	json_t *v = json_loads("{\"a\":[1.0,2.5,{\"b\":true}],\"c\":\"s\"}", 0, NULL), *c = canon_dup(v);

	ok(c != NULL && json_is_integer(json_array_get(json_object_get(c, "a"), 0)) &&
	    json_is_real(json_array_get(json_object_get(c, "a"), 1)), "canon_dup: 1.0 an integer, 2.5 a real");
	json_string_set(json_object_get(c, "c"), "changed");
	ok(strcmp(json_string_value(json_object_get(v, "c")), "s") == 0, "… a deep copy");
	json_decref(c);
	json_decref(v);
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	if (secret_init() < 0)
		return 1;
	run_case(test_vector);
	run_case(test_same);
	run_case(test_differ);
	run_case(test_caps);
	run_case(test_dup);
	return done_testing();
}
