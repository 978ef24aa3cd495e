/* regex — the ECMA-262 subset JSON Schema patterns use, matched in time linear in the
 * subject (a Pike VM over UTF-8 code points: no backtracking, so no pattern a schema
 * carries can make a match run long).
 *
 * Supported: literals, '.', classes [...] (ranges, negation, escapes), \d \w \s \D \W \S,
 * \p{L} \p{N} \p{Nd} and \P (long names too: Letter, Number, Decimal_Number), \b \B,
 * escapes (\t \n \v \f \r \0 \xHH \uHHHH \u{H...} \cX and any punctuation), ^ $ (the
 * subject's ends: no multiline flag), groups ( ), (?: ) and (?<name> ), alternation,
 * * + ? {n} {n,} {n,m} (lazy forms accepted: a search's answer does not depend on
 * them). Refused at compile, with a message: backreferences, lookaround, other \p{...}
 * properties, and a pattern whose program would pass REGEX_MAX_INSNS. */
#ifndef GW_REGEX_H
#define GW_REGEX_H

#include <stddef.h>

#include "err.h"

#define REGEX_MAX_INSNS		4096	/* instructions of a compiled pattern, repetitions expanded */
#define REGEX_MAX_REPEAT	1000	/* the largest count a {n,m} may name */

struct regex;

/* The compiled pattern (a NUL-terminated UTF-8 string), or NULL with the reason in err
 * (NULL: not wanted): GW_EPARAMS and what of the pattern is refused, or
 * GW_EINTERNAL when memory ran out. Free it with regex_free; a compiled pattern is
 * read-only and may be used by many threads at once. */
struct regex *regex_compile(const char *pattern, struct gw_error *err);
/* 1 when the pattern matches somewhere in s (len bytes of UTF-8; a byte that is not
 * UTF-8 counts as the code point of its value), 0 when not, -1 when out of memory. */
int regex_search(const struct regex *re, const char *s, size_t len);
void regex_free(struct regex *re);
/* The size of a compiled pattern: its instructions, and a class's ranges four to one.
 * A search's steps are at most this many for each code point of the subject (a
 * caller's cost, and its cap on all it compiles). */
size_t regex_size(const struct regex *re);
/* The next code point of s (len > 0 bytes) into *cp; the bytes it takes. */
size_t regex_utf8_next(const char *s, size_t len, unsigned long *cp);

#endif
