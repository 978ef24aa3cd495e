/* linediff — a unified diff of two texts (linediff.h). */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "linediff.h"

struct lines {
	const char **p;
	size_t *len;
	size_t n;
};

/* One step of the edit: ' ' (a line of both), '-' (of a), '+' (of b), and where it
 * stands in each text (the index of its line there, or of the next). */
struct step {
	char op;
	size_t ia, ib;
};

struct script {
	struct step *s;
	size_t n;
	size_t ia, ib;	/* where the next step stands */
};

static void
lines_free(struct lines *l)
{
	free(l->p);
	free(l->len);
}

/* The lines of s into l: 0, or -1 (too many, no memory). */
static int
lines_split(const char *s, struct lines *l)
{
	const char *q, *nl;
	size_t n = 0;

	memset(l, 0, sizeof(*l));
	for (q = s; *q; q = nl ? nl + 1 : q + strlen(q))
		if ((nl = strchr(q, '\n'), ++n) > LINEDIFF_LINES_MAX)
			return -1;
	if (n > 0 && ((l->p = malloc(n * sizeof(*l->p))) == NULL || (l->len = malloc(n * sizeof(*l->len))) == NULL)) {
		lines_free(l);
		return -1;
	}
	for (q = s; *q; q = nl ? nl + 1 : q + l->len[l->n - 1]) {
		nl = strchr(q, '\n');
		l->p[l->n] = q;
		l->len[l->n++] = nl ? (size_t)(nl - q) : strlen(q);
	}
	return 0;
}

static int
same(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	return a->len[i] == b->len[j] && memcmp(a->p[i], b->p[j], a->len[i]) == 0;
}

static void
step_add(struct script *sc, char op)
{
	struct step *st = &sc->s[sc->n++];

	st->op = op;
	st->ia = sc->ia;
	st->ib = sc->ib;
	sc->ia += op != '+';
	sc->ib += op != '-';
}

/* The middle of the edit: a's lines [ia, ia + n) against b's [ib, ib + m) (sc's), by the
 * lengths of the longest common subsequences of their suffixes (fits 16 bits: it is at
 * most min(n, m), whose square is at most the cells). 0, or -1 without memory. */
static int
middle(const struct lines *a, const struct lines *b, size_t n, size_t m, struct script *sc)
{
	uint16_t *t = NULL;
	size_t i, j, w = m + 1, a0 = sc->ia, b0 = sc->ib;

	if ((uint64_t)(n + 1) * (m + 1) > LINEDIFF_CELLS_MAX) {	/* both whole */
		for (i = 0; i < n; i++)
			step_add(sc, '-');
		for (j = 0; j < m; j++)
			step_add(sc, '+');
		return 0;
	}
	if ((t = calloc((n + 1) * w, sizeof(*t))) == NULL)
		return -1;
	for (i = n; i-- > 0;)
		for (j = m; j-- > 0;)
			t[i * w + j] = same(a, a0 + i, b, b0 + j) ? (uint16_t)(t[(i + 1) * w + j + 1] + 1) :
			    t[(i + 1) * w + j] >= t[i * w + j + 1] ? t[(i + 1) * w + j] : t[i * w + j + 1];
	for (i = 0, j = 0; i < n || j < m;) {
		if (i < n && j < m && same(a, a0 + i, b, b0 + j)) {
			step_add(sc, ' ');
			i++, j++;
		} else if (i < n && (j == m || t[(i + 1) * w + j] >= t[i * w + j + 1])) {
			step_add(sc, '-');
			i++;
		} else {
			step_add(sc, '+');
			j++;
		}
	}
	free(t);
	return 0;
}

/* One hunk: steps [from, to) of sc. */
static int
hunk(const struct script *sc, size_t from, size_t to, const struct lines *a, const struct lines *b,
    struct buf *out)
{
	const struct step *st;
	size_t k, na = 0, nb = 0;

	for (k = from; k < to; k++) {
		na += sc->s[k].op != '+';
		nb += sc->s[k].op != '-';
	}
	if (buf_printf(out, "@@ -%zu,%zu +%zu,%zu @@\n", sc->s[from].ia + (na > 0), na, sc->s[from].ib + (nb > 0),
	    nb) < 0)
		return -1;
	for (k = from; k < to; k++) {
		st = &sc->s[k];
		if (buf_putc(out, st->op) < 0 ||
		    (st->op == '+' ? buf_append(out, b->p[st->ib], b->len[st->ib]) :
		    buf_append(out, a->p[st->ia], a->len[st->ia])) < 0 || buf_putc(out, '\n') < 0)
			return -1;
	}
	return 0;
}

/* The hunks of sc: each change with context lines around it, merged with the next when
 * fewer than 2 * context common lines part them. */
static int
hunks(const struct script *sc, unsigned context, const struct lines *a, const struct lines *b, struct buf *out)
{
	size_t i = 0, k, c, from;

	while (i < sc->n) {
		if (sc->s[i].op == ' ') {
			i++;
			continue;
		}
		from = i > context ? i - context : 0;
		for (k = i;;) {
			while (k < sc->n && sc->s[k].op != ' ')
				k++;
			for (c = k; c < sc->n && sc->s[c].op == ' '; c++)
				;
			if (c == sc->n || c - k > 2 * (size_t)context)
				break;
			k = c;
		}
		i = sc->n - k > context ? k + context : sc->n;
		if (hunk(sc, from, i, a, b, out) < 0)
			return -1;
	}
	return 0;
}

/* Long: the lines of both, the common ends, the middle, then the hunks, with one
 * cleanup. */
int
linediff_unified(const char *a, const char *b, unsigned context, struct buf *out)
{
	struct lines la, lb;
	struct script sc = { NULL, 0, 0, 0 };
	size_t pre = 0, suf = 0, k;
	int rc = -1;

	memset(&lb, 0, sizeof(lb));
	if (lines_split(a, &la) < 0)
		return -1;
	if (lines_split(b, &lb) < 0 || (sc.s = malloc((la.n + lb.n + 1) * sizeof(*sc.s))) == NULL)
		goto out;
	while (pre < la.n && pre < lb.n && same(&la, pre, &lb, pre))
		pre++;
	while (suf < la.n - pre && suf < lb.n - pre && same(&la, la.n - 1 - suf, &lb, lb.n - 1 - suf))
		suf++;
	for (k = 0; k < pre; k++)
		step_add(&sc, ' ');
	if (middle(&la, &lb, la.n - pre - suf, lb.n - pre - suf, &sc) < 0)
		goto out;
	for (k = 0; k < suf; k++)
		step_add(&sc, ' ');
	if (hunks(&sc, context, &la, &lb, out) < 0)
		goto out;
	rc = pre + suf < la.n || pre + suf < lb.n;
out:
	free(sc.s);
	lines_free(&lb);
	lines_free(&la);
	return rc;
}
