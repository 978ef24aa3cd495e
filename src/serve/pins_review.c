/* pins_review — each upstream's records judged against the pins (pins_review.h). */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "pinning.h"
#include "pins_review.h"

/* The kinds that have definitions, as the catalog and the pins file name them. */
static const struct {
	enum catalog_kind ck;
	enum pins_kind pk;
} kinds[] = {
	{ CATALOG_TOOLS, PINS_TOOL },
	{ CATALOG_PROMPTS, PINS_PROMPT },
	{ CATALOG_TEMPLATES, PINS_TEMPLATE },
};

const char *
pins_review_state_word(enum pins_review_state s)
{
	static const char *const words[] = { "pinned", "changed", "new", "gone" };

	return (unsigned)s < sizeof(words) / sizeof(words[0]) ? words[s] : "?";
}

static int
entry_cmp(const void *pa, const void *pb)
{
	const struct pins_review_entry *a = pa, *b = pb;

	if (a->up != b->up)
		return a->up < b->up ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* A judging under way: its review, the room there, the pins. */
struct judging {
	struct pins_review *r;
	size_t cap;
	const struct pins *pins;
};

/* A new entry at the end of j's review (zeroed, name a copy of name), or NULL without
 * memory. */
static struct pins_review_entry *
entry_new(struct judging *j, size_t up, enum pins_kind kind, const char *name)
{
	struct pins_review *r = j->r;
	struct pins_review_entry *e, *grown;

	if (r->n == j->cap) {
		if ((grown = realloc(r->e, (j->cap ? j->cap * 2 : 64) * sizeof(*r->e))) == NULL)
			return NULL;
		r->e = grown;
		j->cap = j->cap ? j->cap * 2 : 64;
	}
	e = &r->e[r->n];
	memset(e, 0, sizeof(*e));
	if ((e->name = strdup(name)) == NULL)
		return NULL;
	e->up = up;
	e->kind = kind;
	r->n++;
	return e;
}

/* The record rec of upstream u, the up-th (its kind k of kinds[]), into j. 0, or -1
 * without memory. */
static int
judge_record(struct judging *j, const struct cfg_upstream *u, size_t up, size_t k, json_t *rec)
{
	struct pins_review *r = j->r;
	const char *name = json_string_value(json_object_get(rec, catalog_kinds[kinds[k].ck].key));
	struct pinning_record pr;
	struct pinning_verdict v;
	json_t *def;
	struct pins_review_entry *e;

	if (name == NULL)
		return 0;
	if ((def = tooldef_of(kinds[k].ck, rec)) == NULL) {
		r->undigested++;
		return 0;
	}
	if ((e = entry_new(j, up, kinds[k].pk, name)) == NULL) {
		json_decref(def);
		return -1;
	}
	e->def = def;
	if (canon_digest(def, e->digest) < 0) {
		free(e->name);
		json_decref(def);
		r->n--;
		r->undigested++;
		return 0;
	}
	/* The gateway's own verdict (pinning.h), so that the review says what it does. */
	pr = (struct pinning_record){ kinds[k].ck, name, e->digest, rec };
	e->pin = j->pins ? pins_find(j->pins, u->s.name, kinds[k].pk, name) : NULL;
	if (pinning_judge(u, j->pins, &pr, &v) == 0) {
		e->state = PINS_REVIEW_PINNED;
		return 0;
	}
	e->state = v.state == PINNING_CHANGED ? PINS_REVIEW_CHANGED : PINS_REVIEW_NEW;
	e->hygiene = v.hygiene;
	return 0;
}

/* The pins of upstream u, the up-th, that it did not list (its entries are the review's
 * from first on), as gone, into j. 0, or -1 without memory. */
static int
judge_gone(struct judging *j, const struct cfg_upstream *u, size_t up, size_t first)
{
	struct pins_review *r = j->r;
	const struct pins *pins = j->pins;
	const struct pin *p;
	struct pins_review_entry key, *e;
	size_t i, listed = r->n - first;

	qsort(r->e + first, listed, sizeof(*r->e), entry_cmp);
	for (i = 0; pins && (p = pins_at(pins, i)) != NULL; i++) {
		if (strcmp(p->upstream, u->s.name) != 0)
			continue;
		key.up = up;
		key.kind = p->kind;
		key.name = (char *)(uintptr_t)p->name;
		if (listed > 0 && bsearch(&key, r->e + first, listed, sizeof(*r->e), entry_cmp) != NULL)
			continue;
		if ((e = entry_new(j, up, p->kind, p->name)) == NULL)
			return -1;
		e->state = PINS_REVIEW_GONE;
		e->pin = p;
		snprintf(e->digest, sizeof(e->digest), "%s", p->digest);
	}
	qsort(r->e + first, r->n - first, sizeof(*r->e), entry_cmp);
	return 0;
}

/* pins_review.h */
int
pins_review_judge(struct pins_review *r, const struct config *cfg, const struct pins *pins, json_t *const *lists)
{
	struct judging j = { r, 0, pins };
	const struct cfg_upstream *u;
	size_t i, k, ix, first;
	json_t *rec;

	memset(r, 0, sizeof(*r));
	if ((r->up = calloc(cfg->n_upstreams + 1, sizeof(*r->up))) == NULL)
		return -1;
	for (i = 0; i < cfg->n_upstreams; i++) {
		u = &cfg->upstreams[i];
		r->up[i] = u->pin == UP_PIN_OFF ? PINS_REVIEW_UP_OFF : lists[i] == NULL ? PINS_REVIEW_UP_UNREAD :
		    json_is_true(json_object_get(lists[i], "perCaller")) ? PINS_REVIEW_UP_PER_CALLER : PINS_REVIEW_UP_READ;
		if (r->up[i] != PINS_REVIEW_UP_READ)
			continue;
		first = r->n;
		for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			json_array_foreach(json_object_get(lists[i], catalog_kinds[kinds[k].ck].array), ix, rec)
				if (judge_record(&j, u, i, k, rec) < 0)
					return -1;
		if (judge_gone(&j, u, i, first) < 0)
			return -1;
	}
	return 0;
}

void
pins_review_free(struct pins_review *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		free(r->e[i].name);
		json_decref(r->e[i].def);
	}
	free(r->e);
	free(r->up);
	memset(r, 0, sizeof(*r));
}
