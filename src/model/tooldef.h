/* tooldef — a record's definition as it is pinned, and its hygiene. Pure.
 *
 * The definition of a record is the members of the upstream's own record (before the
 * gateway prefixes its name or gives it a description) that say what it is and does,
 * those a model reads or a call depends on, copied as they are; a member absent stays
 * absent, any other member (_meta, icons, ...) is not part of it:
 *   tool:              name, title, description, inputSchema, outputSchema, annotations
 *   prompt:            name, title, description, arguments
 *   resource template: uriTemplate, name, title, description, mimeType
 * Its digest is canon.h's, of that object: the same definition, the same digest,
 * whatever the order of the members or the other members of the record.
 *
 * Hygiene: what in a definition could say one thing to a person and another to a model
 * (text that is not shown, or shown in another order), or is too long to be read: every
 * string in it and the name of every object member at any depth (a description inside
 * a schema is read by models too) is checked for the code points below, and for bytes
 * that are not UTF-8; the top-level description and title against a length in code
 * points. */
#ifndef GW_TOOLDEF_H
#define GW_TOOLDEF_H

#include <jansson.h>
#include <stddef.h>

#include "canon.h"
#include "catalog.h"

/* What hygiene finds, a bit each: */
enum tooldef_finding {
	TOOLDEF_TAG = 1 << 0,		/* Unicode tag characters, U+E0000 to U+E007F */
	TOOLDEF_BIDI = 1 << 1,		/* U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C */
	TOOLDEF_INVISIBLE = 1 << 2,	/* U+200B-U+200D, U+2060-U+2064, U+FEFF, U+180E, U+00AD */
	TOOLDEF_CONTROL = 1 << 3,	/* C0 but tab, newline, carriage return; DEL; C1 */
	TOOLDEF_BADUTF8 = 1 << 4,	/* bytes that are not UTF-8 */
	TOOLDEF_LONG = 1 << 5,		/* the top-level description or title is too long */
	/* Not all of it was read: nested deeper than TOOLDEF_DEPTH_MAX, more than
	 * TOOLDEF_WORK_MAX to read, or no memory. A definition not checked is not clean. */
	TOOLDEF_UNCHECKED = 1 << 6,
};

#define TOOLDEF_DEPTH_MAX	CANON_DEPTH_MAX
/* What hygiene reads at the most: the bytes of the strings and member names, and one
 * for every value (four times the largest record the catalog keeps). */
#define TOOLDEF_WORK_MAX	(1u << 20)
#define TOOLDEF_REASON_MAX	256

struct tooldef_flags {
	unsigned found;		/* enum tooldef_finding bits; 0: clean */
	/* The first finding, for people: what, the code point (and its name when it is
	 * one of those above), and the JSON pointer of the string, e.g. "bidi control:
	 * U+202E RIGHT-TO-LEFT OVERRIDE at /inputSchema/properties/path/description", or
	 * of the object whose member name holds it ("... in a member name at /inputSchema");
	 * "" when clean. Never the text itself. */
	char reason[TOOLDEF_REASON_MAX];
};

/* The definition of record (an upstream's tool, prompt or resource template, as it
 * listed it), a new object and a deep copy, its numbers as canon_dup leaves them; NULL
 * when record is not an object, kind has no definition (CATALOG_RESOURCES), it nests
 * too deep, or without memory. */
json_t *tooldef_of(enum catalog_kind kind, json_t *record);
/* The digest of record's definition into out: 0, or -1 as tooldef_of or canon_digest. */
int tooldef_digest(enum catalog_kind kind, json_t *record, char out[CANON_DIGEST_LEN]);
/* Checks def (a definition, or any JSON value) into *f: 1 when something was found
 * (f->found, f->reason), 0 when clean. max_description: the longest top-level
 * description or title, in code points; 0: no limit. */
int tooldef_hygiene(json_t *def, size_t max_description, struct tooldef_flags *f);

#endif
