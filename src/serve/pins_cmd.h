/* pins_cmd — the `mcpgate pins` command (mcpgate(8)): the upstreams' tools, prompts
 * and resource templates against the pins file (pins.h), their differences, and their
 * approval.
 *
 *   mcpgate pins [-c FILE] [--catalog FILE] [--json] status [UPSTREAM[/NAME]...]
 *   mcpgate pins [-c FILE] [--catalog FILE] diff [UPSTREAM[/NAME]...]
 *   mcpgate pins [-c FILE] [--catalog FILE] approve [--by WHO] (--all-new | UPSTREAM[/NAME]...)
 *
 * What each upstream lists is catalog_lists' of the catalog (--catalog FILE, else the
 * one the gateway saved in its state file, else asked of the upstreams now), never the
 * gateway's decisions on it: a record the gateway holds back is judged as any other. */
#ifndef GW_PINS_CMD_H
#define GW_PINS_CMD_H

#include <jansson.h>

#include "canon.h"
#include "config.h"
#include "pins.h"
#include "tooldef.h"

/* Exit codes, as diff(1)'s. */
#define PINS_CMD_SAME		0	/* every record pinned; approve: done */
#define PINS_CMD_DIFFERENT	1	/* something new, changed or gone */
#define PINS_CMD_TROUBLE	2	/* usage, configuration, catalog; an upstream not read */

/* A record against its pin. */
enum pins_cmd_state { PINS_CMD_PINNED, PINS_CMD_CHANGED, PINS_CMD_NEW, PINS_CMD_GONE };

/* What became of an upstream. */
enum pins_cmd_up {
	PINS_CMD_UP_READ,	/* its records judged */
	PINS_CMD_UP_OFF,	/* pin = off: not judged */
	PINS_CMD_UP_UNREAD,	/* down, left out or per caller: its pins neither gone nor pinned */
};

struct pins_cmd_entry {
	enum pins_cmd_state state;
	size_t up;			/* its upstream's index in the configuration */
	enum pins_kind kind;
	char *name;			/* at the upstream */
	char digest[CANON_DIGEST_LEN];	/* as listed; of one gone, its pin's */
	const struct pin *pin;		/* borrowed from the pins, or NULL */
	json_t *def;			/* the listed definition; NULL when gone */
	struct tooldef_flags hygiene;	/* of one new or changed when its upstream checks */
};

struct pins_cmd_review {
	struct pins_cmd_entry *e;	/* by upstream (the configuration's order), kind, name */
	size_t n;
	enum pins_cmd_up *up;		/* of each upstream */
	size_t undigested;		/* records whose definition has no digest (left out) */
};

/* Judges what each of cfg's upstreams listed (lists, reasons: catalog_lists') against
 * pins into r: 0, or -1 without memory. pins may be NULL (none). */
int pins_cmd_judge(struct pins_cmd_review *r, const struct config *cfg, const struct pins *pins,
    json_t *const *lists);
void pins_cmd_review_free(struct pins_cmd_review *r);
/* The word of a state ("pinned", "changed", "new", "gone"). */
const char *pins_cmd_state_word(enum pins_cmd_state s);

/* argv[0] is "pins"; config_path is the default for -c. The answer on stdout, notes and
 * errors on stderr; returns the exit code. */
int pins_cmd_main(int argc, char **argv, const char *config_path);

#endif
