/* pins — the set of pins, its text: parse and format (pins.h). The file itself (load,
 * atomic save, the lock) is pins_file.c's. */
#include "autoconf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "clock.h"
#include "pins.h"

/* The latest time the format writes: 9999-12-31T23:59:59Z. */
#define PINS_WHEN_MAX	((time_t)253402300799LL)

struct slot {
	struct pin pin;		/* its strings: those below (slot_link) */
	char *upstream, *name, *digest, *by, *def;
	size_t line;		/* where pins_parse read it; 0 when set */
};

struct pins {
	struct slot *v;		/* sorted (by_key) but while pins_parse reads */
	size_t n, cap;
};

static const char *const kind_words[PINS_NKINDS] = {
	[PINS_TOOL] = "tool", [PINS_PROMPT] = "prompt", [PINS_TEMPLATE] = "template",
};

const char *
pins_kind_word(enum pins_kind kind)
{
	return (unsigned)kind < PINS_NKINDS ? kind_words[kind] : "?";
}

int
pins_kind_of(const char *word)
{
	int k;

	for (k = 0; k < PINS_NKINDS; k++)
		if (strcmp(word, kind_words[k]) == 0)
			return k;
	return -1;
}

struct pins *
pins_new(void)
{
	return calloc(1, sizeof(struct pins));
}

/* The pin's strings are the slot's. */
static void
slot_link(struct slot *s)
{
	s->pin.upstream = s->upstream;
	s->pin.name = s->name;
	s->pin.digest = s->digest;
	s->pin.by = s->by;
	s->pin.def = s->def;
}

static void
slot_free(struct slot *s)
{
	free(s->upstream);
	free(s->name);
	free(s->digest);
	free(s->by);
	free(s->def);
	memset(s, 0, sizeof(*s));
}

void
pins_free(struct pins *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->n; i++)
		slot_free(&p->v[i]);
	free(p->v);
	free(p);
}

size_t
pins_count(const struct pins *p)
{
	return p->n;
}

const struct pin *
pins_at(const struct pins *p, size_t i)
{
	return i < p->n ? &p->v[i].pin : NULL;
}

static int
key_cmp(const char *upstream, enum pins_kind kind, const char *name, const struct pin *b)
{
	int c = strcmp(upstream, b->upstream);

	if (c == 0)
		c = ((int)kind > (int)b->kind) - ((int)kind < (int)b->kind);
	return c ? c : strcmp(name, b->name);
}

/* The order of the file; then the order read, so that of two pins of one key the one
 * read later is named as the second. */
static int
by_key(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;
	int c = key_cmp(x->pin.upstream, x->pin.kind, x->pin.name, &y->pin);

	return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* Where (upstream, kind, name) is in p, or would be: *found says which. */
static size_t
slot_index(const struct pins *p, const char *upstream, enum pins_kind kind, const char *name, int *found)
{
	size_t lo = 0, hi = p->n, mid;
	int c;

	*found = 0;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = key_cmp(upstream, kind, name, &p->v[mid].pin)) == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

const struct pin *
pins_find(const struct pins *p, const char *upstream, enum pins_kind kind, const char *name)
{
	int found;
	size_t i = slot_index(p, upstream, kind, name, &found);

	return found ? &p->v[i].pin : NULL;
}

/* Room for one more slot: 0, or -1 (PINS_MAX, or no memory) with err. */
static int
slot_room(struct pins *p, struct gw_error *err)
{
	struct slot *nv;
	size_t cap;

	if (p->n >= PINS_MAX) {
		gw_error_set(err, GW_ECONFIG, "more than %u pins", PINS_MAX);
		return -1;
	}
	if (p->n < p->cap)
		return 0;
	cap = p->cap ? 2 * p->cap : 16;
	if ((nv = realloc(p->v, cap * sizeof(*nv))) == NULL) {
		gw_error_set(err, GW_EINTERNAL, "out of memory");
		return -1;
	}
	p->v = nv;
	p->cap = cap;
	return 0;
}

/* Whether def (n bytes) is a definition line's text for digest: NULL, or what it is not. */
static const char *
def_wrong(const char *def, size_t n, const char *digest)
{
	char got[CANON_DIGEST_LEN], *text;
	const char *why = NULL;
	json_t *v = json_loadb(def, n, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);

	if (v == NULL || !json_is_object(v)) {
		json_decref(v);
		return "the definition is not a JSON object";
	}
	text = canon_text(v);
	json_decref(v);
	if (text == NULL)
		why = "the definition nests too deep or is too large";
	else if (strlen(text) != n || memcmp(text, def, n) != 0)
		why = "the definition is not canonical JSON";
	free(text);
	if (why == NULL) {
		canon_digest_text(def, n, got);
		if (strcmp(got, digest) != 0)
			why = "the definition's digest is not the pin's";
	}
	return why;
}

/* Whether the byte at p of the field s is percent-encoded in the file (first: s is an
 * UPSTREAM, whose leading '#' would begin a comment). */
static int
escaped(const char *s, const char *p, int first)
{
	unsigned char c = (unsigned char)*p;

	return c <= 0x20 || c == 0x7f || c == '%' || (first && p == s && c == '#');
}

/* The bytes s takes in the file. */
static size_t
field_len(const char *s, int first)
{
	const char *p;
	size_t n = 0;

	for (p = s; *p; p++)
		n += escaped(s, p, first) ? 3 : 1;
	return n;
}

/* s as a field (pins.h). */
int
pins_encode(struct buf *out, const char *s, int first)
{
	static const char hex[] = "0123456789ABCDEF";
	char esc[3] = { '%' };
	const char *p;
	int rc = 0;

	for (p = s; *p && rc == 0; p++) {
		if (escaped(s, p, first)) {
			esc[1] = hex[(unsigned char)*p >> 4];
			esc[2] = hex[*p & 0xf];
			rc = buf_append(out, esc, 3);
		} else {
			rc = buf_putc(out, *p);
		}
	}
	return rc;
}

/* What pins_set refuses of pin: NULL, or why. */
static const char *
pin_wrong(const struct pin *pin)
{
	if (pin->upstream == NULL || pin->name == NULL || pin->by == NULL || !*pin->upstream || !*pin->name || !*pin->by)
		return "an empty upstream, name or approver";
	if ((unsigned)pin->kind >= PINS_NKINDS)
		return "no such kind";
	if (pin->digest == NULL || !canon_digest_valid(pin->digest))
		return "not a digest";
	if (pin->when < 0 || pin->when > PINS_WHEN_MAX)
		return "a time before 1970 or after 9999";
	/* The line as pins_format writes it must fit: what pins_parse read always does. */
	if (field_len(pin->upstream, 1) + field_len(pin->name, 0) + field_len(pin->by, 0) +
	    strlen(kind_words[pin->kind]) + (CANON_DIGEST_LEN - 1) + 20 + 5 > PINS_LINE_MAX ||
	    (pin->def != NULL && strlen(pin->def) + 1 > PINS_LINE_MAX))
		return "longer than a line of the file";
	return pin->def ? def_wrong(pin->def, strlen(pin->def), pin->digest) : NULL;
}

int
pins_set(struct pins *p, const struct pin *pin, struct gw_error *err)
{
	const char *why = pin_wrong(pin);
	struct slot s = { .pin = *pin };
	size_t i;
	int found;

	if (why != NULL) {
		gw_error_set(err, GW_ECONFIG, "%s", why);
		return -1;
	}
	s.upstream = strdup(pin->upstream);
	s.name = strdup(pin->name);
	s.digest = strdup(pin->digest);
	s.by = strdup(pin->by);
	s.def = pin->def ? strdup(pin->def) : NULL;
	slot_link(&s);
	if (!s.upstream || !s.name || !s.digest || !s.by || (pin->def && !s.def)) {
		slot_free(&s);
		gw_error_set(err, GW_EINTERNAL, "out of memory");
		return -1;
	}
	i = slot_index(p, pin->upstream, pin->kind, pin->name, &found);
	if (found) {
		slot_free(&p->v[i]);
	} else {
		if (slot_room(p, err) < 0) {
			slot_free(&s);
			return -1;
		}
		memmove(&p->v[i + 1], &p->v[i], (p->n - i) * sizeof(*p->v));
		p->n++;
	}
	p->v[i] = s;
	return 0;
}

int
pins_remove(struct pins *p, const char *upstream, enum pins_kind kind, const char *name)
{
	int found;
	size_t i = slot_index(p, upstream, kind, name, &found);

	if (!found)
		return 0;
	slot_free(&p->v[i]);
	memmove(&p->v[i], &p->v[i + 1], (p->n - i - 1) * sizeof(*p->v));
	p->n--;
	return 1;
}

/* pins_parse's state: the line it is at, and the pin read on the line before (a
 * definition line's), or NO_PIN. */
#define NO_PIN	((size_t)-1)

struct parser {
	struct pins *p;
	const char *file;
	size_t line;
	size_t pending;
	struct gw_error *err;
};

static int __attribute__((format(printf, 3, 4)))
parse_fail(struct parser *ps, enum gw_err code, const char *fmt, ...)
{
	char what[GW_ERROR_DETAIL];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	gw_error_set(ps->err, code, "%s:%zu: %s", ps->file, ps->line, what);
	return -1;
}

static int
hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The field s (n bytes) percent-decoded: a new string, or NULL with *why (NULL: no
 * memory). */
static char *
field_decode(const char *s, size_t n, const char **why)
{
	char *out = malloc(n + 1);
	size_t i, j = 0;
	int hi, lo, c;

	*why = NULL;
	for (i = 0; out != NULL && i < n; i++) {
		c = (unsigned char)s[i];
		if (c == '%') {
			hi = i + 2 < n ? hex_value(s[i + 1]) : -1;
			lo = i + 2 < n ? hex_value(s[i + 2]) : -1;
			*why = hi < 0 || lo < 0 ? "'%' without two hex digits" : hi == 0 && lo == 0 ? "%00" : NULL;
			c = *why ? 0 : hi << 4 | lo;
			i += 2;
		} else if (c < 0x20 || c == 0x7f) {
			*why = "a control byte not percent-encoded";
		}
		if (*why != NULL) {
			free(out);
			return NULL;
		}
		out[j++] = (char)c;
	}
	if (out != NULL)
		out[j] = '\0';
	return out;
}

/* s (n bytes) split at runs of blanks into at most max fields: how many it has (max + 1:
 * more). */
static int
fields(const char *s, size_t n, const char **f, size_t *fl, int max)
{
	size_t i = 0, start;
	int nf = 0;

	for (;;) {
		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i == n)
			return nf;
		if (nf == max)
			return max + 1;
		for (start = i; i < n && s[i] != ' ' && s[i] != '\t'; i++)
			;
		f[nf] = s + start;
		fl[nf++] = i - start;
	}
}

/* The field (n bytes) as a string in word (size bytes): 1, or 0 when it does not fit. */
static int
field_word(const char *s, size_t n, char *word, size_t size)
{
	if (n >= size)
		return 0;
	memcpy(word, s, n);
	word[n] = '\0';
	return 1;
}

/* A pin line (n bytes at s): its pin added to ps->p, unsorted. 0, or -1 with the error. */
static int
parse_pin(struct parser *ps, const char *s, size_t n)
{
	static const char *const what[3] = { "UPSTREAM", "NAME", "BY" };
	static const int at[3] = { 0, 2, 5 };
	struct slot sl = { .line = ps->line };
	char **dst[3] = { &sl.upstream, &sl.name, &sl.by };
	const char *f[6], *why;
	size_t fl[6], i;
	char word[80];
	int nf, k, rc = -1;

	if ((nf = fields(s, n, f, fl, 6)) != 6) {
		parse_fail(ps, GW_ECONFIG, "a pin line has six fields, UPSTREAM KIND NAME DIGEST WHEN BY, not %s%d",
		    nf > 6 ? "more than " : "", nf > 6 ? 6 : nf);
		goto out;
	}
	if (!field_word(f[1], fl[1], word, sizeof(word)) || (k = pins_kind_of(word)) < 0) {
		parse_fail(ps, GW_ECONFIG, "KIND is tool, prompt or template");
		goto out;
	}
	sl.pin.kind = (enum pins_kind)k;
	if (!field_word(f[3], fl[3], word, sizeof(word)) || !canon_digest_valid(word)) {
		parse_fail(ps, GW_ECONFIG, "DIGEST is \"sha256:\" and 64 lowercase hex digits");
		goto out;
	}
	if ((sl.digest = strdup(word)) == NULL) {
		parse_fail(ps, GW_EINTERNAL, "out of memory");
		goto out;
	}
	if (!field_word(f[4], fl[4], word, sizeof(word)) || clock_parse_rfc3339(word, &sl.pin.when) < 0) {
		parse_fail(ps, GW_ECONFIG, "WHEN is a UTC time as 2026-11-29T22:00:00Z");
		goto out;
	}
	for (i = 0; i < 3; i++)
		if ((*dst[i] = field_decode(f[at[i]], fl[at[i]], &why)) == NULL) {
			parse_fail(ps, why ? GW_ECONFIG : GW_EINTERNAL, "%s: %s", what[i], why ? why : "out of memory");
			goto out;
		}
	if (slot_room(ps->p, ps->err) < 0) {
		parse_fail(ps, ps->err->code, "%s", ps->err->detail);
		goto out;
	}
	slot_link(&sl);
	ps->p->v[ps->p->n++] = sl;
	ps->pending = ps->p->n - 1;
	rc = 0;
out:
	if (rc < 0)
		slot_free(&sl);
	return rc;
}

/* A definition line's text (n bytes at s, after its tab), of the pin read on the line
 * before (pending). */
static int
parse_def(struct parser *ps, size_t pending, const char *s, size_t n)
{
	struct slot *sl;
	const char *why;

	if (pending == NO_PIN)
		return parse_fail(ps, GW_ECONFIG, "a definition line without its pin line right before it");
	sl = &ps->p->v[pending];
	if ((why = def_wrong(s, n, sl->pin.digest)) != NULL)
		return parse_fail(ps, GW_ECONFIG, "%s", why);
	if ((sl->def = strndup(s, n)) == NULL)
		return parse_fail(ps, GW_EINTERNAL, "out of memory");
	slot_link(sl);
	return 0;
}

static int
parse_line(struct parser *ps, const char *s, size_t n)
{
	size_t pending = ps->pending, i;

	ps->pending = NO_PIN;
	if (n > PINS_LINE_MAX)
		return parse_fail(ps, GW_ECONFIG, "longer than %u bytes", PINS_LINE_MAX);
	if (n > 0 && s[n - 1] == '\r')
		n--;
	for (i = 0; i < n && (s[i] == ' ' || s[i] == '\t'); i++)
		;
	if (i == n || s[0] == '#')
		return 0;
	if (s[0] == '\t')
		return parse_def(ps, pending, s + 1, n - 1);
	if (s[0] == ' ')
		return parse_fail(ps, GW_ECONFIG, "a line begins with a space (a definition line, with a tab)");
	return parse_pin(ps, s, n);
}

/* After the sort: a second pin of one key is an error at the line of the first such
 * second pin in the file. */
static int
check_duplicates(struct parser *ps)
{
	size_t i, line = 0, first = 0;
	struct slot *v = ps->p->v;

	for (i = 1; i < ps->p->n; i++)
		if (key_cmp(v[i].pin.upstream, v[i].pin.kind, v[i].pin.name, &v[i - 1].pin) == 0 &&
		    (line == 0 || v[i].line < line)) {
			line = v[i].line;
			first = v[i - 1].line;
		}
	if (line == 0)
		return 0;
	ps->line = line;
	return parse_fail(ps, GW_ECONFIG, "a second pin of this UPSTREAM, KIND and NAME (the first: line %zu)", first);
}

int
pins_parse(const char *text, size_t len, const char *file, struct pins **out, struct gw_error *err)
{
	struct parser ps = { .file = file, .pending = NO_PIN, .err = err };
	const char *s = text, *end = text + len, *nl;
	int rc = -1;

	*out = NULL;
	if ((ps.p = pins_new()) == NULL) {
		gw_error_set(err, GW_EINTERNAL, "out of memory");
		return -1;
	}
	if (len > PINS_FILE_MAX) {
		gw_error_set(err, GW_ECONFIG, "%s: larger than %u bytes", file, PINS_FILE_MAX);
		goto out;
	}
	while (s < end) {
		ps.line++;
		nl = memchr(s, '\n', (size_t)(end - s));
		if (parse_line(&ps, s, (size_t)((nl ? nl : end) - s)) < 0)
			goto out;
		s = nl ? nl + 1 : end;
	}
	if (ps.p->n > 1)
		qsort(ps.p->v, ps.p->n, sizeof(*ps.p->v), by_key);
	if (check_duplicates(&ps) < 0)
		goto out;
	rc = 0;
out:
	if (rc < 0)
		pins_free(ps.p);
	else
		*out = ps.p;
	return rc;
}

#define PINS_HEADER \
	"# Pins: UPSTREAM KIND NAME DIGEST WHEN BY, then the approved definition (canonical\n" \
	"# JSON after a tab) where it is kept. The format: src/config/pins.h.\n"

int
pins_format(const struct pins *p, struct buf *out)
{
	const struct pin *pin;
	char when[32];
	size_t i;
	int rc = buf_puts(out, PINS_HEADER);

	for (i = 0; i < p->n && rc == 0; i++) {
		pin = &p->v[i].pin;
		clock_rfc3339(pin->when, when, sizeof(when));
		rc |= pins_encode(out, pin->upstream, 1);
		rc |= buf_printf(out, " %s ", kind_words[pin->kind]);
		rc |= pins_encode(out, pin->name, 0);
		rc |= buf_printf(out, " %s %s ", pin->digest, when);
		rc |= pins_encode(out, pin->by, 0);
		rc |= buf_putc(out, '\n');
		if (pin->def != NULL) {
			rc |= buf_putc(out, '\t');
			rc |= buf_puts(out, pin->def);
			rc |= buf_putc(out, '\n');
		}
	}
	return rc ? -1 : 0;
}
