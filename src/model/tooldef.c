/* tooldef — a record's pinned definition, its digest and its hygiene (tooldef.h). */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "str.h"
#include "tooldef.h"

static const char *const tool_members[] = {
	"name", "title", "description", "inputSchema", "outputSchema", "annotations", NULL
};
static const char *const prompt_members[] = { "name", "title", "description", "arguments", NULL };
static const char *const template_members[] = {
	"uriTemplate", "name", "title", "description", "mimeType", NULL
};
static const char *const *const definition_members[CATALOG_NKINDS] = {
	[CATALOG_TOOLS] = tool_members,
	[CATALOG_PROMPTS] = prompt_members,
	[CATALOG_TEMPLATES] = template_members,
};

/* The definition's members, borrowed from record (not a copy: what canon_dup or
 * canon_digest then reads), or NULL. */
static json_t *
members_of(enum catalog_kind kind, json_t *record)
{
	const char *const *m;
	json_t *def, *v;

	if ((unsigned)kind >= CATALOG_NKINDS || definition_members[kind] == NULL || !json_is_object(record))
		return NULL;
	if ((def = json_object()) == NULL)
		return NULL;
	for (m = definition_members[kind]; *m; m++)
		if ((v = json_object_get(record, *m)) != NULL && json_object_set(def, *m, v) < 0) {
			json_decref(def);
			return NULL;
		}
	return def;
}

json_t *
tooldef_of(enum catalog_kind kind, json_t *record)
{
	json_t *borrowed = members_of(kind, record), *def = canon_dup(borrowed);

	json_decref(borrowed);
	return def;
}

int
tooldef_digest(enum catalog_kind kind, json_t *record, char out[CANON_DIGEST_LEN])
{
	json_t *borrowed = members_of(kind, record);
	int rc = borrowed ? canon_digest(borrowed, out) : -1;

	json_decref(borrowed);
	return rc;
}

/* The code points hygiene looks for, sorted (a binary search): a range, its finding, and
 * its name when it is one code point people should recognise. */
static const struct suspect {
	uint32_t lo, hi;
	unsigned finding;
	const char *name;
} suspects[] = {
	{ 0x0000, 0x0008, TOOLDEF_CONTROL, NULL },
	{ 0x000b, 0x000c, TOOLDEF_CONTROL, NULL },
	{ 0x000e, 0x001f, TOOLDEF_CONTROL, NULL },
	{ 0x007f, 0x009f, TOOLDEF_CONTROL, NULL },
	{ 0x00ad, 0x00ad, TOOLDEF_INVISIBLE, "SOFT HYPHEN" },
	{ 0x061c, 0x061c, TOOLDEF_BIDI, "ARABIC LETTER MARK" },
	{ 0x180e, 0x180e, TOOLDEF_INVISIBLE, "MONGOLIAN VOWEL SEPARATOR" },
	{ 0x200b, 0x200b, TOOLDEF_INVISIBLE, "ZERO WIDTH SPACE" },
	{ 0x200c, 0x200c, TOOLDEF_INVISIBLE, "ZERO WIDTH NON-JOINER" },
	{ 0x200d, 0x200d, TOOLDEF_INVISIBLE, "ZERO WIDTH JOINER" },
	{ 0x200e, 0x200e, TOOLDEF_BIDI, "LEFT-TO-RIGHT MARK" },
	{ 0x200f, 0x200f, TOOLDEF_BIDI, "RIGHT-TO-LEFT MARK" },
	{ 0x202a, 0x202a, TOOLDEF_BIDI, "LEFT-TO-RIGHT EMBEDDING" },
	{ 0x202b, 0x202b, TOOLDEF_BIDI, "RIGHT-TO-LEFT EMBEDDING" },
	{ 0x202c, 0x202c, TOOLDEF_BIDI, "POP DIRECTIONAL FORMATTING" },
	{ 0x202d, 0x202d, TOOLDEF_BIDI, "LEFT-TO-RIGHT OVERRIDE" },
	{ 0x202e, 0x202e, TOOLDEF_BIDI, "RIGHT-TO-LEFT OVERRIDE" },
	{ 0x2060, 0x2060, TOOLDEF_INVISIBLE, "WORD JOINER" },
	{ 0x2061, 0x2061, TOOLDEF_INVISIBLE, "FUNCTION APPLICATION" },
	{ 0x2062, 0x2062, TOOLDEF_INVISIBLE, "INVISIBLE TIMES" },
	{ 0x2063, 0x2063, TOOLDEF_INVISIBLE, "INVISIBLE SEPARATOR" },
	{ 0x2064, 0x2064, TOOLDEF_INVISIBLE, "INVISIBLE PLUS" },
	{ 0x2066, 0x2066, TOOLDEF_BIDI, "LEFT-TO-RIGHT ISOLATE" },
	{ 0x2067, 0x2067, TOOLDEF_BIDI, "RIGHT-TO-LEFT ISOLATE" },
	{ 0x2068, 0x2068, TOOLDEF_BIDI, "FIRST STRONG ISOLATE" },
	{ 0x2069, 0x2069, TOOLDEF_BIDI, "POP DIRECTIONAL ISOLATE" },
	{ 0xfeff, 0xfeff, TOOLDEF_INVISIBLE, "ZERO WIDTH NO-BREAK SPACE" },
	{ 0xe0000, 0xe007f, TOOLDEF_TAG, "TAG" },
};

static const struct suspect *
suspect_of(uint32_t cp)
{
	size_t lo = 0, hi = sizeof(suspects) / sizeof(suspects[0]), mid;

	if (cp >= 0x20 && cp < 0x7f)
		return NULL;	/* the common case, printable ASCII */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cp < suspects[mid].lo)
			hi = mid;
		else if (cp > suspects[mid].hi)
			lo = mid + 1;
		else
			return &suspects[mid];
	}
	return NULL;
}

static const char *
finding_word(unsigned finding)
{
	switch (finding) {
	case TOOLDEF_TAG:
		return "tag character";
	case TOOLDEF_BIDI:
		return "bidi control";
	case TOOLDEF_INVISIBLE:
		return "invisible character";
	case TOOLDEF_CONTROL:
		return "control character";
	case TOOLDEF_BADUTF8:
		return "invalid UTF-8";
	case TOOLDEF_LONG:
		return "too long";
	default:
		return "not checked";
	}
}

/* A walk over a definition: the JSON pointer of the value it is at, and what it may
 * still read. A pointer longer than ptr is cut (and said so with "..."). */
struct walk {
	struct tooldef_flags *f;
	size_t budget;
	char ptr[160];
	size_t plen;
	int cut;
};

/* Where the walk is, for a reason: its pointer, or "the top". */
static const char *
walk_where(const struct walk *w, char *out, size_t n)
{
	snprintf(out, n, "%s%s", w->plen ? w->ptr : "the top", w->cut ? "..." : "");
	return out;
}

/* A finding at the walk's place: its bit, and the reason when it is the first. what:
 * the words after the finding's ("U+202E RIGHT-TO-LEFT OVERRIDE"); name: 1 when in a
 * member name. */
static void
walk_found(struct walk *w, unsigned finding, const char *what, int name)
{
	char where[sizeof(w->ptr) + 8];

	if (w->f->found == 0)
		snprintf(w->f->reason, sizeof(w->f->reason), "%s: %s%s at %s", finding_word(finding), what,
		    name ? " in a member name" : "", walk_where(w, where, sizeof(where)));
	w->f->found |= finding;
}

/* Checks the len bytes of s, a string or a member name (name: 1). Each finding is told
 * once a string, at its first code point: a string of a thousand is one finding. */
static void
walk_text(struct walk *w, const char *s, size_t len, int name)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	const struct suspect *sus;
	unsigned seen = 0;
	char what[80];
	uint32_t cp;
	size_t k;

	for (; p < end; p += k ? k : 1) {
		if ((k = str_utf8(p, (size_t)(end - p), &cp)) == 0) {
			snprintf(what, sizeof(what), "byte 0x%02X", *p);
			if (!(seen & TOOLDEF_BADUTF8))
				walk_found(w, TOOLDEF_BADUTF8, what, name);
			seen |= TOOLDEF_BADUTF8;
		} else if ((sus = suspect_of(cp)) != NULL && !(seen & sus->finding)) {
			snprintf(what, sizeof(what), "U+%04X%s%s", (unsigned)cp, sus->name ? " " : "",
			    sus->name ? sus->name : "");
			walk_found(w, sus->finding, what, name);
			seen |= sus->finding;
		}
	}
}

/* Appends c to the walk's pointer, or cuts it there. */
static void
walk_putc(struct walk *w, char c)
{
	if (w->cut || w->plen + 2 > sizeof(w->ptr)) {
		w->cut = 1;
		return;
	}
	w->ptr[w->plen++] = c;
	w->ptr[w->plen] = '\0';
}

/* Where the walk was before a step: walk_pop goes back there. */
struct mark {
	size_t plen;
	int cut;
};

/* A step into the member or item seg (n bytes), escaped as RFC 6901 says ("~0", "~1");
 * a control byte is written '?' (a reason is one line). */
static struct mark
walk_push(struct walk *w, const char *seg, size_t n)
{
	struct mark m = { w->plen, w->cut };
	size_t i;

	walk_putc(w, '/');
	for (i = 0; i < n; i++) {
		if (seg[i] == '~' || seg[i] == '/') {
			walk_putc(w, '~');
			walk_putc(w, seg[i] == '~' ? '0' : '1');
		} else {
			walk_putc(w, (unsigned char)seg[i] < 0x20 || seg[i] == 0x7f ? '?' : seg[i]);
		}
	}
	return m;
}

static void
walk_pop(struct walk *w, struct mark m)
{
	w->plen = m.plen;
	w->cut = m.cut;
	w->ptr[w->plen] = '\0';
}

/* Takes n from what the walk may still read: 0, or -1 (a finding) when it has not that
 * much left. */
static int
walk_charge(struct walk *w, size_t n)
{
	char what[64];

	if (n > w->budget) {
		snprintf(what, sizeof(what), "more than %u bytes to read", TOOLDEF_WORK_MAX);
		walk_found(w, TOOLDEF_UNCHECKED, what, 0);
		w->budget = 0;
		return -1;
	}
	w->budget -= n;
	return 0;
}

static int walk_value(struct walk *w, json_t *v, int depth);

/* The members in canon.h's order: the first finding is the same whatever the order the
 * upstream wrote them in. */
static int
walk_object(struct walk *w, json_t *v, int depth)
{
	size_t n = json_object_size(v), i;
	struct canon_member *m;
	struct mark mark;
	int rc = 0;

	if (n == 0)
		return 0;
	if ((m = canon_members(v)) == NULL) {
		walk_found(w, TOOLDEF_UNCHECKED, "out of memory", 0);
		return -1;
	}
	for (i = 0; i < n && rc == 0; i++) {
		if ((rc = walk_charge(w, m[i].len)) < 0)
			break;
		walk_text(w, m[i].key, m[i].len, 1);
		mark = walk_push(w, m[i].key, m[i].len);
		rc = walk_value(w, m[i].value, depth + 1);
		walk_pop(w, mark);
	}
	free(m);
	return rc;
}

static int
walk_value(struct walk *w, json_t *v, int depth)
{
	struct mark mark;
	char what[64], ix[24];
	size_t i;
	int rc = 0;

	if (depth > TOOLDEF_DEPTH_MAX) {
		snprintf(what, sizeof(what), "nested deeper than %d", TOOLDEF_DEPTH_MAX);
		walk_found(w, TOOLDEF_UNCHECKED, what, 0);
		return -1;
	}
	if (walk_charge(w, 1) < 0)
		return -1;
	switch (json_typeof(v)) {
	case JSON_STRING:
		if ((rc = walk_charge(w, json_string_length(v))) == 0)
			walk_text(w, json_string_value(v), json_string_length(v), 0);
		return rc;
	case JSON_OBJECT:
		return walk_object(w, v, depth);
	case JSON_ARRAY:
		for (i = 0; i < json_array_size(v) && rc == 0; i++) {
			mark = walk_push(w, ix, (size_t)snprintf(ix, sizeof(ix), "%zu", i));
			rc = walk_value(w, json_array_get(v, i), depth + 1);
			walk_pop(w, mark);
		}
		return rc;
	default:
		return 0;
	}
}

/* The top-level member (a string) against max code points: a finding when longer. A
 * byte that is not UTF-8 counts as one. */
static void
check_length(struct walk *w, json_t *def, const char *member, size_t max)
{
	json_t *s = json_object_get(def, member);
	const unsigned char *p, *end;
	struct mark mark;
	char what[80];
	size_t n = 0, k;
	uint32_t cp;

	if (!json_is_string(s))
		return;
	p = (const unsigned char *)json_string_value(s);
	for (end = p + json_string_length(s); p < end; p += k ? k : 1, n++)
		k = str_utf8(p, (size_t)(end - p), &cp);
	if (n <= max)
		return;
	snprintf(what, sizeof(what), "%zu characters, over %zu", n, max);
	mark = walk_push(w, member, strlen(member));
	walk_found(w, TOOLDEF_LONG, what, 0);
	walk_pop(w, mark);
}

int
tooldef_hygiene(json_t *def, size_t max_description, struct tooldef_flags *f)
{
	struct walk w = { .f = f, .budget = TOOLDEF_WORK_MAX };

	f->found = 0;
	f->reason[0] = '\0';
	if (def != NULL)
		walk_value(&w, def, 0);
	if (max_description > 0 && json_is_object(def)) {
		check_length(&w, def, "description", max_description);
		check_length(&w, def, "title", max_description);
	}
	return f->found != 0;
}
