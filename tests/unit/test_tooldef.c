/* Unit tests: a record's definition (tooldef.h): the members of each kind, its digest
 * (not moved by members outside the definition or by member order), and its hygiene:
 * each kind of code point found at the top, inside a schema and in a member name, every
 * listed code point in its class and its neighbours not, clean text of any script, the
 * length in code points, and the bounds. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secret.h"
#include "tap.h"
#include "tooldef.h"

/* cp as UTF-8 into out (5 bytes): its length. */
static size_t
utf8_of(unsigned cp, char *out)
{
	size_t n;

	if (cp < 0x80)
		out[0] = (char)cp, n = 1;
	else if (cp < 0x800)
		out[0] = (char)(0xc0 | cp >> 6), out[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
	else if (cp < 0x10000)
		out[0] = (char)(0xe0 | cp >> 12), out[1] = (char)(0x80 | (cp >> 6 & 0x3f)),
		out[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
	else
		out[0] = (char)(0xf0 | cp >> 18), out[1] = (char)(0x80 | (cp >> 12 & 0x3f)),
		out[2] = (char)(0x80 | (cp >> 6 & 0x3f)), out[3] = (char)(0x80 | (cp & 0x3f)), n = 4;
	out[n] = '\0';
	return n;
}

enum place { AT_TOP, IN_SCHEMA, IN_NAME };

/* A tool's definition with the n bytes of s (any bytes) in one place: its description, the
 * description of its schema's property "path", or the name of a property. */
static json_t *
def_with(const char *s, size_t n, enum place where)
{
	json_t *def = json_pack("{s:s, s:s, s:{s:s, s:{s:{s:s, s:s}}}}", "name", "read_file",
	    "description", "Reads a file", "inputSchema", "type", "object", "properties", "path",
	    "type", "string", "description", "Which file");
	json_t *props = json_object_get(json_object_get(def, "inputSchema"), "properties");
	char buf[64];
	int len = snprintf(buf, sizeof(buf), "Reads %.*s a file", (int)n, s);

	if (where == AT_TOP)
		json_object_set_new(def, "description", json_stringn_nocheck(buf, (size_t)len));
	else if (where == IN_SCHEMA)
		json_object_set_new(json_object_get(props, "path"), "description", json_stringn_nocheck(s, n));
	else
		json_object_setn_new_nocheck(props, s, n, json_pack("{s:s}", "type", "string"));
	return def;
}

/* The finding and reason of s at each place. */
static void
check_class(const char *s, size_t n, unsigned finding, const char *what)
{
	static const char *const where[] = {
		" at /description", " at /inputSchema/properties/path/description", " in a member name at /inputSchema/properties"
	};
	struct tooldef_flags f;
	char want[TOOLDEF_REASON_MAX];
	json_t *def;
	int i;

	for (i = AT_TOP; i <= IN_NAME; i++) {
		def = def_with(s, n, (enum place)i);
		snprintf(want, sizeof(want), "%s%s", what, where[i]);
		ok(tooldef_hygiene(def, 0, &f) == 1 && f.found == finding, "%s: found (%s)", what, where[i] + 1);
		is_str(f.reason, want, "… the reason names it and where");
		json_decref(def);
	}
}

static void
test_tag(void)
{
	char s[8];

	check_class(s, utf8_of(0xe0041, s), TOOLDEF_TAG, "tag character: U+E0041 TAG");
}

static void
test_bidi(void)
{
	char s[8];

	check_class(s, utf8_of(0x202e, s), TOOLDEF_BIDI, "bidi control: U+202E RIGHT-TO-LEFT OVERRIDE");
}

static void
test_invisible(void)
{
	char s[8];

	check_class(s, utf8_of(0x200b, s), TOOLDEF_INVISIBLE, "invisible character: U+200B ZERO WIDTH SPACE");
}

static void
test_control(void)
{
	char s[8];

	check_class("\x07", 1, TOOLDEF_CONTROL, "control character: U+0007");
	check_class(s, utf8_of(0x85, s), TOOLDEF_CONTROL, "control character: U+0085");
}

static void
test_bad_utf8(void)
{
	check_class("\xff", 1, TOOLDEF_BADUTF8, "invalid UTF-8: byte 0xFF");
	check_class("\xc3", 1, TOOLDEF_BADUTF8, "invalid UTF-8: byte 0xC3");
	check_class("\xed\xa0\x80", 3, TOOLDEF_BADUTF8, "invalid UTF-8: byte 0xED");
}

/* Every listed code point is in its class, and those beside the ranges are clean. */
static void
test_every_code_point(void)
{
	static const struct { unsigned lo, hi, finding; } listed[] = {
		{ 0xe0000, 0xe007f, TOOLDEF_TAG }, { 0x202a, 0x202e, TOOLDEF_BIDI }, { 0x2066, 0x2069, TOOLDEF_BIDI },
		{ 0x200e, 0x200f, TOOLDEF_BIDI }, { 0x061c, 0x061c, TOOLDEF_BIDI },
		{ 0x200b, 0x200d, TOOLDEF_INVISIBLE }, { 0x2060, 0x2064, TOOLDEF_INVISIBLE },
		{ 0xfeff, 0xfeff, TOOLDEF_INVISIBLE }, { 0x180e, 0x180e, TOOLDEF_INVISIBLE },
		{ 0x00ad, 0x00ad, TOOLDEF_INVISIBLE }, { 0x0000, 0x0008, TOOLDEF_CONTROL },
		{ 0x000b, 0x000c, TOOLDEF_CONTROL }, { 0x000e, 0x001f, TOOLDEF_CONTROL }, { 0x007f, 0x009f, TOOLDEF_CONTROL },
	};
	static const unsigned clean[] = { '\t', '\n', '\r', ' ', '~', 0xa0, 0xac, 0xae, 0x061b, 0x061d, 0x180d,
		0x180f, 0x200a, 0x2010, 0x2029, 0x202f, 0x205f, 0x2065, 0x206a, 0xfefe, 0xff00, 0xdffff, 0xe0080, 0x10ffff };
	struct tooldef_flags f;
	unsigned cp, bad = 0, wrong = 0;
	size_t i;
	json_t *s;
	char u[8];

	for (i = 0; i < sizeof(listed) / sizeof(listed[0]); i++)
		for (cp = listed[i].lo; cp <= listed[i].hi; cp++) {
			s = json_stringn_nocheck(u, utf8_of(cp, u));
			if (tooldef_hygiene(s, 0, &f) != 1 || f.found != listed[i].finding)
				bad++;
			json_decref(s);
		}
	is_int(bad, 0, "every listed code point is found, in its class");
	for (i = 0; i < sizeof(clean) / sizeof(clean[0]); i++) {
		s = json_stringn_nocheck(u, utf8_of(clean[i], u));
		wrong += tooldef_hygiene(s, 0, &f) != 0;
		json_decref(s);
	}
	is_int(wrong, 0, "tab, newline, carriage return and the code points beside the ranges are clean");
}

static void
test_clean(void)
{
	json_t *def = json_loads("{\"name\":\"caf\\u00e9\",\"title\":\"\\u4e2d\\u6587 \\ud83d\\ude00\","
	    "\"description\":\"R\\u00e9sum\\u00e9s, \\u65e5\\u672c\\u8a9e, \\u0627\\u0644\\u0639\\u0631\\u0628\\u064a\\u0629,"
	    " \\ud83d\\ude80\\nline two\\ttabbed\\r\",\"inputSchema\":{\"type\":\"object\",\"properties\":"
	    "{\"\\u00fcber\":{\"type\":\"string\",\"enum\":[\"a\",\"\\u00df\"]},\"n\":{\"type\":\"number\",\"maximum\":3.5}}}}",
	    0, NULL);
	struct tooldef_flags f;

	ok(def != NULL && tooldef_hygiene(def, 0, &f) == 0 && f.found == 0 && f.reason[0] == '\0',
	    "é, CJK, Arabic, emoji, tabs and newlines, anywhere: clean");
	json_decref(def);
	ok(tooldef_hygiene(NULL, 10, &f) == 0, "no definition: nothing found");
}

static void
test_length(void)
{
	json_t *def = json_pack("{s:s, s:s}", "description", "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", "title", "short");
	struct tooldef_flags f;

	ok(tooldef_hygiene(def, 10, &f) == 0, "10 code points (20 bytes) against 10: fine");
	ok(tooldef_hygiene(def, 9, &f) == 1 && f.found == TOOLDEF_LONG, "… against 9: too long");
	is_str(f.reason, "too long: 10 characters, over 9 at /description", "… the reason");
	ok(tooldef_hygiene(def, 0, &f) == 0, "0: no limit");
	ok(tooldef_hygiene(def, 4, &f) == 1 && strcmp(f.reason, "too long: 10 characters, over 4 at /description") == 0,
	    "the description first, then the title");
	json_object_set_new(def, "description", json_string("ok"));
	ok(tooldef_hygiene(def, 4, &f) == 1 && strcmp(f.reason, "too long: 5 characters, over 4 at /title") == 0,
	    "… the title too");
	json_object_set_new(def, "title", json_string("ok"));
	json_object_set_new(def, "inputSchema", json_pack("{s:s}", "description", "a long nested description"));
	ok(tooldef_hygiene(def, 4, &f) == 0, "a nested description has no length limit");
	json_decref(def);
}

/* Several findings: each kind's bit, the reason the first in member order; a pointer's
 * "/" and "~" escaped. */
static void
test_several(void)
{
	json_t *def = json_loads("{\"title\":\"a\\u202eb\",\"description\":\"a\\u200bb\\u200bc\\u2066\","
	    "\"inputSchema\":{\"properties\":{\"a/b~c\":{\"description\":\"\\u00ad\"}}}}", 0, NULL);
	struct tooldef_flags f;

	ok(tooldef_hygiene(def, 0, &f) == 1 && f.found == (TOOLDEF_BIDI | TOOLDEF_INVISIBLE), "two kinds: both bits");
	is_str(f.reason, "invisible character: U+200B ZERO WIDTH SPACE at /description", "… the first in byte order of the names");
	json_object_del(def, "title");
	json_object_set_new(def, "description", json_string("x"));
	tooldef_hygiene(def, 0, &f);
	is_str(f.reason, "invisible character: U+00AD SOFT HYPHEN at /inputSchema/properties/a~1b~0c/description",
	    "a pointer escapes / and ~");
	json_decref(def);
}

static void
test_bounds(void)
{
	json_t *v = json_string("x"), *o;
	struct tooldef_flags f;
	char *big;
	int i;

	for (i = 0; i <= TOOLDEF_DEPTH_MAX + 1; i++) {
		o = json_object();
		json_object_set_new(o, "d", v);
		v = o;
	}
	ok(tooldef_hygiene(v, 0, &f) == 1 && f.found == TOOLDEF_UNCHECKED && strncmp(f.reason, "not checked: nested deeper", 26) == 0,
	    "nested too deep: not checked (%s)", f.reason);
	ok(strstr(f.reason, "/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d") != NULL && strstr(f.reason, "...") != NULL,
	    "… where, the pointer cut");
	json_decref(v);
	big = calloc(1, TOOLDEF_WORK_MAX + 1);
	memset(big, 'a', TOOLDEF_WORK_MAX);
	v = json_pack("{s:s}", "description", big);
	ok(tooldef_hygiene(v, 0, &f) == 1 && f.found == TOOLDEF_UNCHECKED, "more to read than TOOLDEF_WORK_MAX: not checked");
	is_str(f.reason, "not checked: more than 1048576 bytes to read at /description", "… the reason");
	json_decref(v);
	free(big);
}

static void
test_members(void)
{
	json_t *tool = json_loads("{\"name\":\"t\",\"title\":\"T\",\"description\":\"d\",\"inputSchema\":{\"type\":\"object\"},"
	    "\"outputSchema\":{\"type\":\"object\"},\"annotations\":{\"readOnlyHint\":true},\"_meta\":{\"x\":1},"
	    "\"icons\":[{\"src\":\"https://x/i.png\"}],\"execution\":{}}", 0, NULL);
	json_t *prompt = json_loads("{\"name\":\"p\",\"description\":\"d\",\"arguments\":[{\"name\":\"a\"}],\"icons\":[]}", 0, NULL);
	json_t *tpl = json_loads("{\"uriTemplate\":\"file:///{path}\",\"name\":\"f\",\"mimeType\":\"text/plain\",\"_meta\":{}}", 0, NULL);
	json_t *d;

	d = tooldef_of(CATALOG_TOOLS, tool);
	ok(json_object_size(d) == 6 && json_object_get(d, "_meta") == NULL && json_object_get(d, "icons") == NULL &&
	    json_is_true(json_object_get(json_object_get(d, "annotations"), "readOnlyHint")), "a tool: its six members, no others");
	json_decref(d);
	json_object_del(tool, "title");
	d = tooldef_of(CATALOG_TOOLS, tool);
	ok(json_object_size(d) == 5 && json_object_get(d, "title") == NULL, "… an absent member stays absent");
	json_decref(d);
	d = tooldef_of(CATALOG_PROMPTS, prompt);
	ok(json_object_size(d) == 3 && json_is_array(json_object_get(d, "arguments")), "a prompt: name, description, arguments");
	json_decref(d);
	d = tooldef_of(CATALOG_TEMPLATES, tpl);
	ok(json_object_size(d) == 3 && json_is_string(json_object_get(d, "uriTemplate")), "a template: uriTemplate, name, mimeType");
	json_decref(d);
	d = tooldef_of(CATALOG_TOOLS, json_array_get(json_object_get(tool, "icons"), 0));
	ok(tooldef_of(CATALOG_RESOURCES, tpl) == NULL && d != NULL && json_object_size(d) == 0,
	    "resources have no definition; any object has one (maybe empty)");
	json_decref(d);
	d = json_string("x");
	ok(tooldef_of(CATALOG_TOOLS, d) == NULL, "a string is no record");
	json_decref(d);
	json_decref(tool);
	json_decref(prompt);
	json_decref(tpl);
}

static void
test_digest(void)
{
	json_t *a = json_loads("{\"name\":\"t\",\"description\":\"d\",\"inputSchema\":{\"type\":\"object\",\"properties\":"
	    "{\"n\":{\"type\":\"number\",\"default\":1.0}}},\"_meta\":{\"x\":1}}", 0, NULL);
	json_t *b = json_loads("{\"icons\":[],\"inputSchema\":{\"properties\":{\"n\":{\"default\":1,\"type\":\"number\"}},"
	    "\"type\":\"object\"},\"description\":\"d\",\"name\":\"t\"}", 0, NULL);
	char da[CANON_DIGEST_LEN], db[CANON_DIGEST_LEN], dc[CANON_DIGEST_LEN];
	json_t *def;
	char *text;

	ok(tooldef_digest(CATALOG_TOOLS, a, da) == 0 && tooldef_digest(CATALOG_TOOLS, b, db) == 0 && strcmp(da, db) == 0,
	    "the digest: not moved by _meta, icons, member order or 1.0 for 1");
	def = tooldef_of(CATALOG_TOOLS, a);
	ok(canon_digest(def, dc) == 0 && strcmp(da, dc) == 0, "… it is the digest of tooldef_of's definition");
	text = canon_text(def);
	is_str(text, "{\"description\":\"d\",\"inputSchema\":{\"properties\":{\"n\":{\"default\":1,\"type\":\"number\"}},"
	    "\"type\":\"object\"},\"name\":\"t\"}", "… whose canonical text is this");
	free(text);
	json_decref(def);
	json_object_set_new(b, "description", json_string("d2"));
	ok(tooldef_digest(CATALOG_TOOLS, b, db) == 0 && strcmp(da, db) != 0, "a changed description changes it");
	ok(tooldef_digest(CATALOG_PROMPTS, a, db) == 0 && strcmp(da, db) != 0, "… and so does the kind (inputSchema is no prompt's)");
	ok(tooldef_digest(CATALOG_RESOURCES, a, db) < 0, "resources: no digest");
	json_decref(a);
	json_decref(b);
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	if (secret_init() < 0)
		return 1;
	run_case(test_tag);
	run_case(test_bidi);
	run_case(test_invisible);
	run_case(test_control);
	run_case(test_bad_utf8);
	run_case(test_every_code_point);
	run_case(test_clean);
	run_case(test_length);
	run_case(test_several);
	run_case(test_bounds);
	run_case(test_members);
	run_case(test_digest);
	return done_testing();
}
