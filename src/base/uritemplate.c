/* uritemplate — does a URI expand an RFC 6570 template? A backtracking match with a
 * step budget and a memo of dead states, so that no template and URI an upstream or
 * a caller sends can make it run long. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "uritemplate.h"

#define MATCH_BUDGET		100000		/* steps one template match may take */
#define MATCH_MEMO_BITS		(1u << 20)	/* states one match may remember (128 KiB) */

/* What an expression's expansion looks like: its leading character (none for simple
 * and reserved expansion), and the characters that end it. */
static const struct {
	char op;
	char lead;
	const char *stop;
} ops[] = {
	{ '+', 0, "" }, { '#', '#', "" }, { '.', '.', "/?#" }, { '/', '/', "?#" },
	{ ';', ';', "?#" }, { '?', '?', "#" }, { '&', '&', "#" },
};

/* One match of a URI against a template: a step budget, and the states (the k-th
 * expression reached at an offset of the URI) known to fail, so that a template whose
 * expressions can take the same characters ("{a}{b}{c}") is matched in polynomial time:
 * without them, the backtracking tries every way to cut the URI and the budget ran out
 * before a URI the template expands was found to match. */
struct uri_match {
	const char *uri;
	size_t ulen;
	unsigned char *dead;	/* bit k * (ulen + 1) + offset; NULL: none kept (too large) */
	long budget;
};

static int match(struct uri_match *m, const char *t, const char *u, size_t k);

/* t is the template after k expressions, u where the URI is then. */
static int
match_from(struct uri_match *m, const char *t, const char *u, size_t k)
{
	const char *close, *stop = "/?#";
	char lead = 0;
	size_t i, run, min = 1;

	for (;;) {
		if (--m->budget <= 0)
			return 0;
		if (*t == '\0')
			return *u == '\0';
		if (*t == '{')
			break;
		if (*t != *u)
			return 0;
		t++, u++;
	}
	if ((close = strchr(t, '}')) == NULL)
		return 0;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (t[1] == ops[i].op) {
			lead = ops[i].lead;
			stop = ops[i].stop;
			min = 0;
		}
	t = close + 1;
	if (lead) {
		if (match(m, t, u, k + 1))	/* an undefined variable expands to nothing */
			return 1;
		if (*u++ != lead)
			return 0;
	}
	run = strcspn(u, stop);
	for (i = run + 1; i-- > min;)	/* the longest expansion first */
		if (match(m, t, u + i, k + 1))
			return 1;
	return 0;
}

static int
match(struct uri_match *m, const char *t, const char *u, size_t k)
{
	size_t bit = k * (m->ulen + 1) + (size_t)(u - m->uri);

	if (--m->budget <= 0)
		return 0;
	if (m->dead && (m->dead[bit / 8] & (1u << (bit % 8))))
		return 0;
	if (match_from(m, t, u, k))
		return 1;
	if (m->dead)
		m->dead[bit / 8] |= (unsigned char)(1u << (bit % 8));
	return 0;
}

int
uritemplate_matches(const char *tmpl, const char *uri)
{
	struct uri_match m = { uri, 0, NULL, MATCH_BUDGET };
	size_t nexpr = 0;
	const char *p;
	int rc;

	if (tmpl == NULL || uri == NULL)
		return 0;
	for (p = tmpl; (p = strchr(p, '{')) != NULL; p++)
		nexpr++;
	m.ulen = strlen(uri);
	if (nexpr > 1 && nexpr + 1 <= MATCH_MEMO_BITS / (m.ulen + 1))
		m.dead = calloc((nexpr + 1) * (m.ulen + 1) / 8 + 1, 1);	/* NULL: the budget alone */
	rc = match(&m, tmpl, uri, 0);
	free(m.dead);
	return rc;
}
