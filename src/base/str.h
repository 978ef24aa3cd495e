/* str — small string helpers shared by the modules. */
#ifndef GW_STR_H
#define GW_STR_H

#include <stddef.h>
#include <stdint.h>

/* Is word one of the words of list, separated by blanks (spaces or tabs)? Scopes
 * (RFC 6749 §3.3), identity groups. An empty word is in no list. */
int str_has_word(const char *list, const char *word);
/* How much of an error's detail says what happened without where: up to its first
 * "(" (libcurl's parenthesized detail names hosts and ports), trailing blanks cut. */
size_t str_what_happened(const char *detail);
/* v in decimal, NUL-terminated, in out (21 bytes hold any); its length. printf's work
 * without printf, for the lines and heads of every request. */
size_t str_u64(char out[21], uint64_t v);
/* The n parts one after the other, a NUL between two, in buf (cap bytes, cap > 0), cut
 * to cap - 1 bytes; their length. What snprintf("%s%c%s", a, 0, b) writes, faster. */
size_t str_join0(char *buf, size_t cap, const char *const *parts, size_t n);
/* The UTF-8 sequence at s (n > 0 bytes left): its length (1 to 4), its code point in
 * *cp; 0 when the bytes there are not valid UTF-8 (a stray continuation byte, an
 * overlong form, a surrogate, past U+10FFFF, cut short). */
size_t str_utf8(const unsigned char *s, size_t n, uint32_t *cp);

#endif
