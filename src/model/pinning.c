/* pinning — the pins' verdict on one record (pinning.h). */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "pinning.h"
#include "uritemplate.h"

int
pinning_kind(enum catalog_kind kind)
{
	switch (kind) {
	case CATALOG_TOOLS:
		return PINS_TOOL;
	case CATALOG_PROMPTS:
		return PINS_PROMPT;
	case CATALOG_TEMPLATES:
		return PINS_TEMPLATE;
	default:
		return -1;
	}
}

const char *
pinning_state_word(enum pinning_state s)
{
	return s == PINNING_PINNED ? "pinned" : s == PINNING_NEW ? "new" : "changed";
}

/* What hygiene finds in r's definition into *f (a record without one: not checked). */
static void
look(const struct cfg_upstream *u, const struct pinning_record *r, struct tooldef_flags *f)
{
	json_t *def = r->digest ? tooldef_of(r->kind, r->record) : NULL;

	memset(f, 0, sizeof(*f));
	if (def == NULL) {
		f->found = TOOLDEF_UNCHECKED;
		snprintf(f->reason, sizeof(f->reason), "its definition could not be read (nested too deep, or no memory)");
		return;
	}
	tooldef_hygiene(def, (size_t)u->max_description, f);
	json_decref(def);
}

json_t *
pinning_held(json_t *doc, enum catalog_kind kind, const char *key)
{
	const char *tmpl;
	json_t *e;

	if (kind == CATALOG_RESOURCES) {	/* a URI: held back with the template it matches */
		json_object_foreach(catalog_pending_all(doc, CATALOG_TEMPLATES), tmpl, e)
			if (json_is_true(json_object_get(e, "held")) && uritemplate_matches(tmpl, key))
				return e;
		return NULL;
	}
	e = catalog_pending(doc, kind, key);
	return json_is_true(json_object_get(e, "held")) ? e : NULL;
}

void
pinning_refusal(json_t *e, const char *key, struct gw_error *err)
{
	const char *state = json_string_value(json_object_get(e, "state")), *hygiene;

	hygiene = json_string_value(json_object_get(e, "hygiene"));
	gw_error_set(err, GW_EPARAMS, "%.200s is held back until an operator approves it: %s%s%.300s", key,
	    state && strcmp(state, "changed") == 0 ? "its definition changed since it was approved" : "it is new",
	    hygiene ? "; in its definition: " : "", hygiene ? hygiene : "");
}

void
pinning_count(json_t *doc, const char *upstream, struct pinning_counts *c)
{
	const char *key, *up, *state;
	json_t *e;
	int k;

	memset(c, 0, sizeof(*c));
	for (k = 0; k < CATALOG_NKINDS; k++)
		json_object_foreach(catalog_pending_all(doc, (enum catalog_kind)k), key, e) {
			up = json_string_value(json_object_get(e, "upstream"));
			if (upstream && (up == NULL || strcmp(up, upstream) != 0))
				continue;
			state = json_string_value(json_object_get(e, "state"));
			c->new += state && strcmp(state, "new") == 0;
			c->changed += state && strcmp(state, "changed") == 0;
			c->held += json_is_true(json_object_get(e, "held"));
			c->unclean += json_object_get(e, "hygiene") != NULL;
		}
}

int
pinning_judge(const struct cfg_upstream *u, const struct pins *pins, const struct pinning_record *r,
    struct pinning_verdict *v)
{
	const struct pin *p;
	int kind = pinning_kind(r->kind);

	memset(v, 0, sizeof(*v));
	if (u->pin == UP_PIN_OFF || u->catalog == UP_CATALOG_PER_CALLER || kind < 0)
		return 0;	/* off, a caller's own records, or no definitions (resources) */
	p = pins ? pins_find(pins, u->s.name, (enum pins_kind)kind, r->name) : NULL;
	if (p && r->digest && strcmp(p->digest, r->digest) == 0)
		return 0;
	v->state = p ? PINNING_CHANGED : PINNING_NEW;
	v->pinned = p ? p->digest : NULL;
	if (u->hygiene || r->digest == NULL)
		look(u, r, &v->hygiene);
	v->held = (v->state == PINNING_NEW && u->new_tools == UP_NEW_HOLD) ||
	    (u->pin == UP_PIN_HOLD && (v->state == PINNING_CHANGED || v->hygiene.found));
	return 1;
}
