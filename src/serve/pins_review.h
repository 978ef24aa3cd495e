/* pins_review — what `mcpgate pins` (pins_cmd.h) says of each record: each upstream's
 * tools, prompts and resource templates, as catalog_lists gives them, judged against
 * the pins (pins.h) by their definitions' digests (tooldef.h). Pure. */
#ifndef GW_PINS_REVIEW_H
#define GW_PINS_REVIEW_H

#include <jansson.h>

#include "canon.h"
#include "config.h"
#include "pins.h"
#include "tooldef.h"

/* A record against its pin. */
enum pins_review_state { PINS_REVIEW_PINNED, PINS_REVIEW_CHANGED, PINS_REVIEW_NEW, PINS_REVIEW_GONE };

/* What became of an upstream. */
enum pins_review_up {
	PINS_REVIEW_UP_READ,	/* its records judged */
	PINS_REVIEW_UP_OFF,	/* pin = off: not judged */
	PINS_REVIEW_UP_UNREAD,	/* down or left out: its pins neither gone nor pinned */
	PINS_REVIEW_UP_PER_CALLER,	/* its lists are each caller's (catalog = per-caller): likewise */
};

struct pins_review_entry {
	enum pins_review_state state;
	size_t up;			/* its upstream's index in the configuration */
	enum pins_kind kind;
	char *name;			/* at the upstream */
	char digest[CANON_DIGEST_LEN];	/* as listed; of one gone, its pin's */
	const struct pin *pin;		/* borrowed from the pins, or NULL */
	json_t *def;			/* the listed definition; NULL when gone */
	struct tooldef_flags hygiene;	/* of one new or changed when its upstream checks */
};

struct pins_review {
	struct pins_review_entry *e;	/* by upstream (the configuration's order), kind, name */
	size_t n;
	enum pins_review_up *up;		/* of each upstream */
	size_t undigested;		/* records whose definition has no digest (left out) */
};

/* Judges what each of cfg's upstreams listed (lists: catalog_lists') against
 * pins into r: 0, or -1 without memory. pins may be NULL (none). */
int pins_review_judge(struct pins_review *r, const struct config *cfg, const struct pins *pins,
    json_t *const *lists);
void pins_review_free(struct pins_review *r);
/* The word of a state ("pinned", "changed", "new", "gone"). */
const char *pins_review_state_word(enum pins_review_state s);

#endif
