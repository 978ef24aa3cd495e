/* regex — ECMA-262 patterns (the subset regex.h lists) compiled to a small program for
 * the Pike VM of regex_vm.c. A recursive descent parser emits the code as it goes; jumps
 * are relative, so that a repetition's copies are the body's code copied, and an
 * instruction inserted before a construct needs no jump fixed. */
#include "autoconf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "regex.h"
#include "regex_int.h"

#define MAX_NESTING	64		/* groups within groups */
#define CP_MAX		0x10ffffUL

struct parser {
	const char *p;
	struct regex *re;
	size_t cap, clscap;
	int depth;
	struct gw_error *err;
	int failed;		/* err is set: the first error stands */
};

static const struct range digit_set[] = { { '0', '9' } };
static const struct range word_set[] = { { '0', '9' }, { 'A', 'Z' }, { '_', '_' }, { 'a', 'z' } };
static const struct range space_set[] = {
	{ 9, 13 }, { 32, 32 }, { 0xa0, 0xa0 }, { 0x1680, 0x1680 }, { 0x2000, 0x200a },
	{ 0x2028, 0x2029 }, { 0x202f, 0x202f }, { 0x205f, 0x205f }, { 0x3000, 0x3000 },
	{ 0xfeff, 0xfeff },
};

static int parse_alt(struct parser *ps);

/* The first error only: the one that stopped the parse. GW_EPARAMS: the pattern is
 * what is wrong (a schema's, or a caller's); GW_EINTERNAL: memory ran out. */
static int __attribute__((format(printf, 3, 4)))
failcode(struct parser *ps, enum gw_err code, const char *fmt, ...)
{
	va_list ap;

	if (!ps->failed) {
		ps->failed = 1;
		va_start(ap, fmt);
		vsnprintf(ps->err->detail, sizeof(ps->err->detail), fmt, ap);
		va_end(ap);
		ps->err->code = code;
		ps->err->rpc = 0;
	}
	return -1;
}

static int
fail(struct parser *ps, const char *what)
{
	return failcode(ps, GW_EPARAMS, "%s", what);
}

static int
failat(struct parser *ps, const char *what, const char *start)
{
	return failcode(ps, GW_EPARAMS, "pattern: %s (at offset %ld)", what, (long)(ps->p - start));
}

static int
nomem(struct parser *ps)
{
	return failcode(ps, GW_EINTERNAL, "out of memory");
}

/* Appends an instruction; its index, or -1 when the program would be too large. */
static long
emit(struct parser *ps, enum regex_op op, int x, int y, unsigned long c)
{
	struct regex *re = ps->re;
	struct insn *code;

	if (re->n >= REGEX_MAX_INSNS)
		return failcode(ps, GW_EPARAMS,
		    "pattern: too large once its repetitions are expanded (over %d instructions)",
		    REGEX_MAX_INSNS);
	if (re->n == ps->cap) {
		ps->cap = ps->cap ? ps->cap * 2 : 32;
		if ((code = realloc(re->code, ps->cap * sizeof(*code))) == NULL)
			return nomem(ps);
		re->code = code;
	}
	re->code[re->n].op = (unsigned char)op;
	re->code[re->n].x = x;
	re->code[re->n].y = y;
	re->code[re->n].c = c;
	return (long)re->n++;
}

/* Inserts an instruction at index at, the code from there moved up one (jumps are
 * relative and stay within their construct, so none needs fixing). */
static int
insert(struct parser *ps, size_t at, enum regex_op op, int x, int y)
{
	struct regex *re = ps->re;

	if (emit(ps, op, x, y, 0) < 0)
		return -1;
	memmove(&re->code[at + 1], &re->code[at], (re->n - 1 - at) * sizeof(re->code[0]));
	re->code[at].op = (unsigned char)op;
	re->code[at].x = x;
	re->code[at].y = y;
	re->code[at].c = 0;
	return 0;
}

static int
range_cmp(const void *a, const void *b)
{
	const struct range *ra = a, *rb = b;

	return ra->lo < rb->lo ? -1 : ra->lo > rb->lo;
}

/* A new class of the set (nset ranges; neg: its complement), a copy of it when copy,
 * else the static set itself; its index, or -1. */
static long
new_class(struct parser *ps, const struct range *set, size_t nset, int neg, int copy)
{
	struct regex *re = ps->re;
	struct rclass *cls;

	if (re->ncls == ps->clscap) {
		ps->clscap = ps->clscap ? ps->clscap * 2 : 8;
		if ((cls = realloc(re->cls, ps->clscap * sizeof(*cls))) == NULL)
			return nomem(ps);
		re->cls = cls;
	}
	cls = &re->cls[re->ncls];
	cls->neg = neg;
	cls->n = nset;
	cls->r = set;
	cls->own = NULL;
	if (copy) {
		if ((re->nranges += nset) > 4 * REGEX_MAX_INSNS)
			return fail(ps, "pattern: its classes are too large");
		if ((cls->own = malloc((nset ? nset : 1) * sizeof(*cls->own))) == NULL)
			return nomem(ps);
		if (nset)
			memcpy(cls->own, set, nset * sizeof(*set));
		cls->r = cls->own;
	}
	return (long)re->ncls++;
}

/* \p{NAME} or \P{NAME} (NAME a general category, perhaps after "gc=" or
 * "General_Category="), ps->p at the p or P: its set, *neg for \P; NULL with the error set. */
static const struct range *
property(struct parser *ps, const char *start, size_t *nset, int *neg)
{
	const struct range *set;
	const char *name, *end;

	*neg = *ps->p == 'P';
	if (ps->p[1] != '{' || (end = strchr(ps->p + 2, '}')) == NULL)
		return failat(ps, "\\p without its {name}", start), NULL;
	name = ps->p + 2;
	if (strncmp(name, "General_Category=", 17) == 0)
		name += 17;
	else if (strncmp(name, "gc=", 3) == 0)
		name += 3;
	if (name > end || (set = regex_uni_set(name, (size_t)(end - name), nset)) == NULL)
		return failat(ps, "a Unicode property not supported (only \\p{L}, \\p{N}, \\p{Nd} and their long names)",
		    start), NULL;
	ps->p = end + 1;
	return set;
}

/* The ranges of a class under construction: n of them in r, room for cap. */
struct ranges {
	struct range *r;
	size_t n, cap;
};

/* Adds lo-hi to the class under construction. */
static int
add_range(struct parser *ps, struct ranges *l, unsigned long lo, unsigned long hi)
{
	struct range *nr;

	if (l->n == l->cap) {
		if (l->cap >= REGEX_MAX_INSNS)
			return fail(ps, "pattern: a class too large");
		l->cap = l->cap ? l->cap * 2 : 16;
		if ((nr = realloc(l->r, l->cap * sizeof(*nr))) == NULL)
			return nomem(ps);
		l->r = nr;
	}
	l->r[l->n].lo = lo;
	l->r[l->n++].hi = hi;
	return 0;
}

/* Adds a shorthand's set (\d \w \s) or, neg, its complement to the class under construction. */
static int
add_set(struct parser *ps, struct ranges *l, const struct range *set, size_t nset, int neg)
{
	unsigned long next = 0;
	size_t i;

	for (i = 0; i < nset; i++) {
		if (!neg && add_range(ps, l, set[i].lo, set[i].hi) < 0)
			return -1;
		if (neg && set[i].lo > next && add_range(ps, l, next, set[i].lo - 1) < 0)
			return -1;
		next = set[i].hi + 1;
	}
	return neg && next <= CP_MAX ? add_range(ps, l, next, CP_MAX) : 0;
}

/* The shorthand c names (d w s, upper case: the complement): its set, or NULL. */
static const struct range *
shorthand(int c, size_t *nset, int *neg)
{
	*neg = c >= 'A' && c <= 'Z';
	switch (c | 0x20) {
	case 'd':
		*nset = 1;
		return digit_set;
	case 'w':
		*nset = sizeof(word_set) / sizeof(word_set[0]);
		return word_set;
	case 's':
		*nset = sizeof(space_set) / sizeof(space_set[0]);
		return space_set;
	}
	return NULL;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

/* n hex digits at ps->p into *v. */
static int
hexdigits(struct parser *ps, int n, unsigned long *v)
{
	int i, h;

	*v = 0;
	for (i = 0; i < n; i++) {
		if ((h = hexval((unsigned char)ps->p[i])) < 0)
			return -1;
		*v = *v << 4 | (unsigned long)h;
	}
	ps->p += n;
	return 0;
}

/* The character an escape names, ps->p after the backslash; -1 with the error set. */
static long
escape_char(struct parser *ps, const char *start)
{
	unsigned char c = (unsigned char)*ps->p;
	unsigned long v, lo;

	if (c == '\0')
		return failat(ps, "a pattern ends with a backslash", start);
	ps->p++;
	switch (c) {
	case 't': return '\t';
	case 'n': return '\n';
	case 'v': return '\v';
	case 'f': return '\f';
	case 'r': return '\r';
	case '0':
		if (*ps->p >= '0' && *ps->p <= '9')
			return failat(ps, "octal escapes are not supported", start);
		return 0;
	case 'c':
		if (((*ps->p | 0x20) >= 'a' && (*ps->p | 0x20) <= 'z'))
			return *ps->p++ % 32;
		return failat(ps, "\\c without a letter", start);
	case 'x':
		if (hexdigits(ps, 2, &v) < 0)
			return failat(ps, "\\x without two hex digits", start);
		return (long)v;
	case 'u':
		if (*ps->p == '{') {
			ps->p++;
			for (v = 0; hexval((unsigned char)*ps->p) >= 0 && v <= CP_MAX; ps->p++)
				v = v << 4 | (unsigned long)hexval((unsigned char)*ps->p);
			if (*ps->p != '}' || v > CP_MAX)
				return failat(ps, "a bad \\u{...} escape", start);
			ps->p++;
			return (long)v;
		}
		if (hexdigits(ps, 4, &v) < 0)
			return failat(ps, "\\u without four hex digits", start);
		/* A surrogate pair written as two escapes is one code point. */
		if (v >= 0xd800 && v <= 0xdbff && ps->p[0] == '\\' && ps->p[1] == 'u') {
			ps->p += 2;
			if (hexdigits(ps, 4, &lo) == 0 && lo >= 0xdc00 && lo <= 0xdfff)
				return (long)(0x10000 + ((v - 0xd800) << 10) + (lo - 0xdc00));
			ps->p -= 2;
		}
		return (long)v;
	}
	if (c >= '1' && c <= '9')
		return failat(ps, "backreferences are not supported", start);
	if (c == 'k')
		return failat(ps, "named backreferences are not supported", start);
	if (c < 0x80 && ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'))
		return failat(ps, "an unknown escape", start);
	if (c >= '0' && c <= '9')
		return failat(ps, "an unknown escape", start);
	ps->p--;
	ps->p += regex_utf8_next(ps->p, strlen(ps->p), &v);
	return (long)v;
}

/* One member of a class, ps->p at it: a character (*lo = *hi), or a shorthand's set added
 * directly (returns 1 then); 0, or -1 with the error set. */
static int
class_atom(struct parser *ps, const char *start, unsigned long *cp, struct ranges *l)
{
	const struct range *set;
	size_t nset;
	long v;
	int neg;

	if (*ps->p != '\\') {
		ps->p += regex_utf8_next(ps->p, strlen(ps->p), cp);
		return 0;
	}
	ps->p++;
	if ((set = shorthand((unsigned char)*ps->p, &nset, &neg)) != NULL) {
		ps->p++;
		return add_set(ps, l, set, nset, neg) < 0 ? -1 : 1;
	}
	if (*ps->p == 'p' || *ps->p == 'P') {
		if ((set = property(ps, start, &nset, &neg)) == NULL)
			return -1;
		return add_set(ps, l, set, nset, neg) < 0 ? -1 : 1;
	}
	if (*ps->p == 'b' || *ps->p == '-') {
		*cp = *ps->p++ == 'b' ? 8 : '-';
		return 0;
	}
	if ((v = escape_char(ps, start)) < 0)
		return -1;
	*cp = (unsigned long)v;
	return 0;
}

/* A class [...], ps->p after the '['; its CLASS instruction emitted. */
static int
parse_class(struct parser *ps, const char *start)
{
	struct ranges l = { NULL, 0, 0 };
	struct range *r;
	size_t i, j;
	unsigned long lo, hi;
	int neg = 0, rc = -1, k;

	if (*ps->p == '^')
		neg = 1, ps->p++;
	while (*ps->p != ']') {
		if (*ps->p == '\0') {
			failat(ps, "a class [ without its ]", start);
			goto out;
		}
		if ((k = class_atom(ps, start, &lo, &l)) < 0)
			goto out;
		if (k == 1)
			continue;
		hi = lo;
		if (ps->p[0] == '-' && ps->p[1] != ']' && ps->p[1] != '\0') {
			ps->p++;
			if ((k = class_atom(ps, start, &hi, &l)) < 0)
				goto out;
			if (k == 1 || hi < lo) {
				failat(ps, k == 1 ? "a class range ends with a shorthand" : "a class range out of order", start);
				goto out;
			}
		}
		if (add_range(ps, &l, lo, hi) < 0)
			goto out;
	}
	ps->p++;
	/* Sorted and merged, for the binary search of a match. */
	r = l.r;
	if (l.n)
		qsort(r, l.n, sizeof(*r), range_cmp);
	for (i = 0, j = 0; i < l.n; i++) {
		if (j > 0 && r[i].lo <= r[j - 1].hi + 1) {
			if (r[i].hi > r[j - 1].hi)
				r[j - 1].hi = r[i].hi;
		} else
			r[j++] = r[i];
	}
	if ((k = (int)new_class(ps, r, j, neg, 1)) < 0 || emit(ps, OP_CLASS, 0, 0, (unsigned long)k) < 0)
		goto out;
	rc = 0;
out:
	free(l.r);
	return rc;
}

/* The repetition {min,max} (max -1: no bound) of the code from start on. */
static int
repeat(struct parser *ps, size_t start, long min, long max)
{
	struct regex *re = ps->re;
	size_t len = re->n - start, i;
	struct insn *body;
	long k;
	int rc = -1;

	if ((size_t)(min + (max < 0 ? 1 : max - min)) * (len + 1) > REGEX_MAX_INSNS)
		return fail(ps, "pattern: too large once its repetitions are expanded");
	if (min == 0 && max < 0)	/* split to the body or past it; the body jumps back */
		return insert(ps, start, OP_SPLIT, 1, (int)len + 2) < 0 ||
		    emit(ps, OP_JMP, -(int)len - 1, 0, 0) < 0 ? -1 : 0;
	if ((body = malloc((len ? len : 1) * sizeof(*body))) == NULL)
		return nomem(ps);
	if (len > 0)	/* an empty group's body: no code, perhaps none at all yet */
		memcpy(body, &re->code[start], len * sizeof(*body));
	re->n = start;
	for (k = 0; k < min; k++)
		for (i = 0; i < len; i++)
			if (emit(ps, body[i].op, body[i].x, body[i].y, body[i].c) < 0)
				goto out;
	if (max < 0) {		/* the last copy again and again */
		if (emit(ps, OP_SPLIT, -(int)len, 1, 0) < 0)
			goto out;
	} else {
		for (k = min; k < max; k++) {
			if (emit(ps, OP_SPLIT, 1, (int)len + 1, 0) < 0)
				goto out;
			for (i = 0; i < len; i++)
				if (emit(ps, body[i].op, body[i].x, body[i].y, body[i].c) < 0)
					goto out;
		}
	}
	rc = 0;
out:
	free(body);
	return rc;
}

/* A count of a {n,m}: its value, or -1 when there are no digits. */
static long
count(const char **p)
{
	long v = -1;

	while (**p >= '0' && **p <= '9') {
		v = (v < 0 ? 0 : v) * 10 + (**p - '0');
		if (v > REGEX_MAX_REPEAT)
			v = REGEX_MAX_REPEAT + 1;
		(*p)++;
	}
	return v;
}

/* Whether p starts a {n}, {n,} or {n,m}: its end (after the '}'), *min and *max (-1: none). */
static const char *
braces(const char *p, long *min, long *max)
{
	p++;
	if ((*min = count(&p)) < 0)
		return NULL;
	*max = *min;
	if (*p == ',') {
		p++;
		*max = count(&p);
	}
	return *p == '}' ? p + 1 : NULL;
}

/* Long: an atom (a switch over what may start one, each case a few lines), then its
 * quantifier, in one place so that only what may be repeated is. */
static int
parse_term(struct parser *ps, const char *start)
{
	size_t at = ps->re->n, nset;
	const struct range *set;
	unsigned long cp;
	const char *end;
	long v, min, max;
	int neg, quant = 1;
	char c = *ps->p;

	switch (c) {
	case '(':
		ps->p++;
		if (ps->p[0] == '?' && ps->p[1] == ':')
			ps->p += 2;
		else if (ps->p[0] == '?' && ps->p[1] == '<' && ps->p[2] != '=' && ps->p[2] != '!') {
			if ((end = strchr(ps->p, '>')) == NULL)
				return failat(ps, "a group name without its >", start);
			ps->p = end + 1;
		} else if (ps->p[0] == '?')
			return failat(ps, "lookaround and other (? groups are not supported", start);
		if (++ps->depth > MAX_NESTING)
			return failat(ps, "groups nested too deep", start);
		if (parse_alt(ps) < 0)
			return -1;
		ps->depth--;
		if (*ps->p != ')')
			return failat(ps, "a group ( without its )", start);
		ps->p++;
		break;
	case '[':
		ps->p++;
		if (parse_class(ps, start) < 0)
			return -1;
		break;
	case '.':
		ps->p++;
		if (emit(ps, OP_ANY, 0, 0, 0) < 0)
			return -1;
		break;
	case '^':
	case '$':
		ps->p++;
		quant = 0;
		if (emit(ps, c == '^' ? OP_BOL : OP_EOL, 0, 0, 0) < 0)
			return -1;
		break;
	case '*':
	case '+':
	case '?':
		return failat(ps, "nothing to repeat", start);
	case '\\':
		ps->p++;
		if (*ps->p == 'b' || *ps->p == 'B') {
			quant = 0;
			if (emit(ps, *ps->p++ == 'b' ? OP_WORDB : OP_NWORDB, 0, 0, 0) < 0)
				return -1;
			break;
		}
		if ((set = shorthand((unsigned char)*ps->p, &nset, &neg)) != NULL)
			ps->p++;
		else if ((*ps->p == 'p' || *ps->p == 'P') && (set = property(ps, start, &nset, &neg)) == NULL)
			return -1;
		if (set != NULL) {
			if ((v = new_class(ps, set, nset, neg, 0)) < 0 || emit(ps, OP_CLASS, 0, 0, (unsigned long)v) < 0)
				return -1;
			break;
		}
		if ((v = escape_char(ps, start)) < 0 || emit(ps, OP_CHAR, 0, 0, (unsigned long)v) < 0)
			return -1;
		break;
	default:
		if (c == '{' && braces(ps->p, &min, &max) != NULL)
			return failat(ps, "nothing to repeat", start);
		ps->p += regex_utf8_next(ps->p, strlen(ps->p), &cp);
		if (emit(ps, OP_CHAR, 0, 0, cp) < 0)
			return -1;
	}
	c = *ps->p;
	if (c == '*' || c == '+' || c == '?') {
		min = c == '+';
		max = c == '?' ? 1 : -1;
		end = ps->p + 1;
	} else if (c != '{' || (end = braces(ps->p, &min, &max)) == NULL)
		return 0;
	if (!quant)
		return failat(ps, "an assertion cannot be repeated", start);
	if (min > REGEX_MAX_REPEAT || max > REGEX_MAX_REPEAT)
		return failat(ps, "a repetition count over 1000", start);
	if (max >= 0 && max < min)
		return failat(ps, "a repetition {n,m} with m < n", start);
	ps->p = end;
	if (*ps->p == '?')	/* lazy: the same answer for a search */
		ps->p++;
	return repeat(ps, at, min, max);
}

/* An alternation of sequences, up to a ')' or the end. */
static int
parse_alt(struct parser *ps)
{
	struct regex *re = ps->re;
	size_t start = re->n, jmp;
	const char *origin = ps->p;

	while (*ps->p && *ps->p != '|' && *ps->p != ')')
		if (parse_term(ps, origin) < 0)
			return -1;
	while (*ps->p == '|') {
		ps->p++;
		/* split to the first branch or the next; the first jumps past the next */
		if (insert(ps, start, OP_SPLIT, 1, (int)(re->n - start) + 2) < 0)
			return -1;
		if (emit(ps, OP_JMP, 0, 0, 0) < 0)
			return -1;
		jmp = re->n - 1;
		while (*ps->p && *ps->p != '|' && *ps->p != ')')
			if (parse_term(ps, origin) < 0)
				return -1;
		re->code[jmp].x = (int)(re->n - jmp);
	}
	return 0;
}

struct regex *
regex_compile(const char *pattern, struct gw_error *err)
{
	struct parser ps;
	struct regex *re;
	struct gw_error ignored;

	memset(&ps, 0, sizeof(ps));
	ps.p = pattern;
	ps.err = err != NULL ? err : &ignored;
	if ((re = calloc(1, sizeof(*re))) == NULL) {
		nomem(&ps);
		return NULL;
	}
	ps.re = re;
	if (parse_alt(&ps) < 0)
		goto bad;
	if (*ps.p == ')') {
		failat(&ps, "a ) without its (", pattern);
		goto bad;
	}
	if (emit(&ps, OP_MATCH, 0, 0, 0) < 0)
		goto bad;
	return re;
bad:
	fail(&ps, "pattern: not supported");	/* a failure that said nothing */
	regex_free(re);
	return NULL;
}

size_t
regex_size(const struct regex *re)
{
	return re->n + re->nranges / 4;
}

void
regex_free(struct regex *re)
{
	size_t i;

	if (re == NULL)
		return;
	for (i = 0; i < re->ncls; i++)
		free(re->cls[i].own);
	free(re->cls);
	free(re->code);
	free(re);
}
