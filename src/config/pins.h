/* pins — the pins file: the approved definition of each upstream's tools, prompts and
 * resource templates, by digest (canon.h). Pure data and file IO; what a definition is
 * and how its digest is made is tooldef.h's, above this layer.
 *
 * The format (a contract: operators and other tools read and write it):
 *
 *   # comments and blank lines are ignored
 *   UPSTREAM KIND NAME DIGEST WHEN BY
 *   	{canonical JSON of the approved definition, on one line, indented by a tab}
 *
 * - A pin line: six fields separated by one or more spaces or tabs. UPSTREAM is the
 *   upstream's section name; KIND is "tool", "prompt" or "template"; NAME is the
 *   record's name at the upstream, without the gateway's prefix (a template: its
 *   uriTemplate); DIGEST is "sha256:" and 64 lowercase hex digits (canon.h); WHEN is
 *   when it was approved, RFC 3339 UTC as 2026-11-29T22:00:00Z; BY is who approved it.
 *   In UPSTREAM, NAME and BY, the bytes up to 0x20, 0x7f and '%' are percent-encoded
 *   ("%20", "%25"; either case of hex is read, uppercase is written), and so is a '#'
 *   that would begin the line; every other byte (UTF-8) is itself. "%00" is refused.
 * - A definition line: a tab, then the canonical text (canon.h) of the approved
 *   definition, a JSON object. Optional: a pin without one is checked but cannot be
 *   shown as a difference. When present it comes right after its pin line, it must be
 *   canonical (byte for byte what canon_text writes of it), and its digest must be the
 *   pin's DIGEST: the file verifies itself.
 * - A line begins with its first field, a '#', or a tab (a definition); a line may end
 *   "\r\n". At most one pin per (UPSTREAM, KIND, NAME).
 * - Bounds: PINS_FILE_MAX bytes, PINS_LINE_MAX bytes a line (a definition of a record
 *   the catalog keeps fits), PINS_MAX pins.
 *
 * pins_format writes the pins sorted by upstream, kind (tool, prompt, template) and
 * name, each byte order, one space between fields, after a header comment: the same
 * set, the same bytes. An error is a struct gw_error, GW_ECONFIG ("FILE:LINE: what",
 * or "PATH: what"), or GW_EINTERNAL without memory. */
#ifndef GW_PINS_H
#define GW_PINS_H

#include <stddef.h>
#include <time.h>

#include "buf.h"
#include "canon.h"
#include "err.h"

#define PINS_FILE_MAX	(32u << 20)
#define PINS_LINE_MAX	(320u << 10)	/* a record is up to 256 KiB (catalog.h); canonical reals are longer */
#define PINS_MAX	65536

enum pins_kind { PINS_TOOL, PINS_PROMPT, PINS_TEMPLATE, PINS_NKINDS };

/* One pin. Those a set holds are its own (valid until the set changes); those given to
 * pins_set are copied. */
struct pin {
	const char *upstream;
	enum pins_kind kind;
	const char *name;	/* at the upstream */
	const char *digest;	/* canon.h's */
	time_t when;		/* approved at (1970 to 9999) */
	const char *by;		/* approved by */
	const char *def;	/* the definition's canonical text, or NULL */
};

struct pins;

/* The word of a kind ("tool", "prompt", "template"); the kind of a word, or -1. */
const char *pins_kind_word(enum pins_kind kind);
int pins_kind_of(const char *word);

/* An empty set, or NULL without memory. */
struct pins *pins_new(void);
void pins_free(struct pins *p);
/* How many pins p holds, and the i-th in pins_format's order (NULL past the last). */
size_t pins_count(const struct pins *p);
const struct pin *pins_at(const struct pins *p, size_t i);

/* The pins of text (len bytes, any bytes) into a new set *out: 0, or -1 with err (the
 * first error, "file:LINE: what") and *out NULL. */
int pins_parse(const char *text, size_t len, const char *file, struct pins **out, struct gw_error *err);
/* The pins file at path into a new set *out: 0 (no file: an empty set), or -1 with err
 * (not a regular file, not one the gateway trusts (cfgfile_judge), unreadable, too
 * large, or an error in it). */
int pins_load(const char *path, struct pins **out, struct gw_error *err);

/* The pin of (upstream, kind, name), borrowed, or NULL. */
const struct pin *pins_find(const struct pins *p, const char *upstream, enum pins_kind kind, const char *name);
/* Adds pin, or replaces the one of its (upstream, kind, name): 0, or -1 with err when it
 * is not one the file can hold (an empty field, a bad kind, digest or time, a definition
 * that is not canonical or not of that digest, PINS_MAX pins) or without memory. */
int pins_set(struct pins *p, const struct pin *pin, struct gw_error *err);
/* Removes the pin of (upstream, kind, name): 1, or 0 when there is none. */
int pins_remove(struct pins *p, const char *upstream, enum pins_kind kind, const char *name);

/* s as a field of a pin line, percent-encoded as the format says, appended to out
 * (first: s is an UPSTREAM, whose leading '#' is encoded too): what a tool that names a
 * pin prints. 0, or -1 when out is full. */
int pins_encode(struct buf *out, const char *s, int first) BUF_MUST;
/* The file's text of p appended to out: 0, or -1 when out is full. */
int pins_format(const struct pins *p, struct buf *out) BUF_MUST;
/* Writes p to path, atomically: a temporary file in the same directory, written and
 * synced, renamed over path, the directory synced. The file keeps its mode (a new one:
 * 0644). 0, or -1 with err: path's file unchanged, unless only the directory's sync
 * failed (then it is the new one, maybe not yet on disk). */
int pins_save(const struct pins *p, const char *path, struct gw_error *err);

/* A change of the file at path, serialized with every other pins_update of it (an
 * exclusive flock(2) of "PATH.lock", made when missing): loads it, calls fn, saves it
 * when fn returns 0 (1: nothing to save; -1: stop, with err set by fn), then unlocks. So
 * two approvals at once each land. fn's result, or -1 with err. */
typedef int (*pins_change_fn)(struct pins *p, void *arg, struct gw_error *err);
int pins_update(const char *path, pins_change_fn fn, void *arg, struct gw_error *err);

#endif
