/* jsonw — compact JSON written straight into a buf: the bytes json_dumps(JSON_COMPACT)
 * writes, without its cost per object (jansson 2.14 formats each object's address with
 * snprintf and keeps it in a hash table to find cycles) — a cached list's answer, a ping's,
 * the log's request line. */
#ifndef GW_JSONW_H
#define GW_JSONW_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* The len bytes of s as a JSON string, escaped as jansson escapes ('"', '\', control
 * characters); a byte that is not part of valid UTF-8 written as '?'. 0, or -1 when b's
 * ceiling was reached (then b holds a part). */
int jsonw_string(struct buf *b, const char *s, size_t len);
/* v as a JSON integer. 0, or -1 at b's ceiling. */
int jsonw_int(struct buf *b, int64_t v);
/* v (any value) as compact JSON, members in their order; the bytes of
 * json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY). 0, or -1 (b's ceiling, or a value
 * jansson would not write: a cycle). */
int jsonw_dump(struct buf *b, json_t *v);

#endif
