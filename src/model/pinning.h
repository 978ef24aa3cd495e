/* pinning — what the pins (pins.h) make of a record an upstream lists: pinned, new or
 * changed, what hygiene finds in it (tooldef.h), and whether the catalog holds it back
 * until an operator approves it. Pure: the catalog build asks it of every record.
 *
 * Per upstream ([upstream] keys): pin = off asks nothing (every record is served as
 * listed); warn serves a record whose definition is not the pinned one, flagged; hold
 * holds back one whose definition changed or in which hygiene finds something. A record
 * with no pin at all is new: new-tools = hold holds it back too (unless pin = off),
 * allow serves it. A record whose definition is the pinned one is served as approved,
 * whatever hygiene would find in it: approving is the operator's word on it. */
#ifndef GW_PINNING_H
#define GW_PINNING_H

#include <jansson.h>

#include "catalog.h"
#include "config.h"
#include "err.h"
#include "pins.h"
#include "tooldef.h"

enum pinning_state { PINNING_PINNED, PINNING_NEW, PINNING_CHANGED };

/* A record as its upstream listed it. */
struct pinning_record {
	enum catalog_kind kind;
	const char *name;	/* its key at the upstream (a template: its uriTemplate) */
	const char *digest;	/* its definition's (tooldef_digest), or NULL when it has none */
	json_t *record;
};

struct pinning_verdict {
	enum pinning_state state;
	int held;			/* kept out of the lists, and its calls refused */
	const char *pinned;		/* the approved digest of a changed record, borrowed */
	struct tooldef_flags hygiene;	/* found 0: clean, or not looked at */
};

/* The verdict of u's pins on r into *v: 1 when r is not simply pinned (the catalog
 * keeps it as pending), 0 when it is, when its kind has no definitions (resources) or
 * when u does not pin (pin = off, or catalog = per-caller: its records are each
 * caller's, fetched for each). A record without a digest counts as not checked by
 * hygiene. */
int pinning_judge(const struct cfg_upstream *u, const struct pins *pins, const struct pinning_record *r,
    struct pinning_verdict *v);
/* The pending entry (catalog_pending) of key of kind in doc when the pins hold that
 * record back, borrowed; else NULL. A resource's key (a URI): the entry of a held
 * template it matches. */
json_t *pinning_held(json_t *doc, enum catalog_kind kind, const char *key);
/* The refusal of a request for key, held back by the pins (e: pinning_held's), in err:
 * GW_EPARAMS, saying why and that it awaits an operator's approval. */
void pinning_refusal(json_t *e, const char *key, struct gw_error *err);
/* What doc holds pending for an upstream (NULL: all of them), every kind. */
struct pinning_counts {
	size_t new, changed, held, unclean;	/* unclean: hygiene found something */
};
void pinning_count(json_t *doc, const char *upstream, struct pinning_counts *c);
/* "pinned", "new", "changed". */
const char *pinning_state_word(enum pinning_state s);
/* The pins' kind of a catalog kind, or -1 for resources. */
int pinning_kind(enum catalog_kind kind);

#endif
