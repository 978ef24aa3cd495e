/* canon — canonical JSON and its digest: one text for one value, whatever the order of
 * its members, its spacing or how a number was written, so that a digest of it names
 * the value (a tool's definition, pinned: pins.h, tooldef.h).
 *
 * The canonical text (a contract: pins files keep it, and their digests with it):
 * compact (no whitespace), object members sorted by the bytes of their names (UTF-8
 * order), strings as jansson writes them (non-ASCII kept as UTF-8; '"', '\\' and the
 * control characters escaped: \b \f \n \r \t, else \u00XX with uppercase hex; '/' not
 * escaped), integers in decimal, reals with 17 significant digits ("%.17g", with ".0"
 * added when it would read as an integer, an exponent without '+' or leading zeros). A
 * real that is integral and within +-2^53 is an integer first, so 1.0 and 1 agree (-0.0
 * is 0). The digest: "sha256:" and the 64 lowercase hex digits of SHA-256 of that text. */
#ifndef GW_CANON_H
#define GW_CANON_H

#include <jansson.h>

#define CANON_MAX_BYTES		(1u << 20)	/* a canonical text longer than this is refused */
#define CANON_DEPTH_MAX		128		/* nesting (arrays and objects) beyond this is refused */
#define CANON_DIGEST_PREFIX	"sha256:"
#define CANON_DIGEST_LEN	(7 + 64 + 1)	/* "sha256:", 64 hex digits, NUL */

/* A new deep copy of v with every integral real within +-2^53 an integer; NULL without
 * memory or when v nests deeper than CANON_DEPTH_MAX. */
json_t *canon_dup(json_t *v);
/* The canonical text of v (any JSON value), NUL-terminated (a NUL in a string is
 * written \u0000): a new string to free(), or NULL without memory, when v nests deeper
 * than CANON_DEPTH_MAX, its text would be longer than CANON_MAX_BYTES, or a string in it
 * is not UTF-8 (one made with json_stringn_nocheck). The bytes of
 * json_dumps(canon_dup(v), JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17) |
 * JSON_ENCODE_ANY), written without the copy. */
char *canon_text(json_t *v);
/* The members of object o in the canonical text's order (by the bytes of their names):
 * a new array of json_object_size(o) to free(), borrowed names and values; NULL when o
 * has none, or without memory. */
struct canon_member {
	const char *key;
	size_t len;
	json_t *value;
};
struct canon_member *canon_members(json_t *o);
/* The digest of v's canonical text into out: 0, or -1 as canon_text. */
int canon_digest(json_t *v, char out[CANON_DIGEST_LEN]);
/* The digest of a text already canonical (len bytes) into out. */
void canon_digest_text(const char *text, size_t len, char out[CANON_DIGEST_LEN]);
/* 1 when s is a digest as canon_digest writes it ("sha256:" and 64 lowercase hex). */
int canon_digest_valid(const char *s);

#endif
