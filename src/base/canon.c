/* canon — canonical JSON text and its SHA-256 digest (canon.h). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "canon.h"
#include "jsonw.h"
#include "secret.h"
#include "str.h"

/* The largest integer a double holds exactly, and its neighbours: past it, an integral
 * real stays a real (two reals that print alike are one double anyway). */
#define CANON_EXACT	9007199254740992.0	/* 2^53 */

/* jansson's writer, fixed: what makes its text canonical (canon.h). canon_text writes
 * the same bytes itself. */
#define CANON_DUMP_FLAGS	(JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY)

static json_t *dup_at(json_t *v, int depth);

/* A real canon_dup makes an integer: integral, and in range (the conversion of a larger
 * one is undefined). -0.0 is one: the integer 0. */
static int
integral(double x)
{
	return x >= -CANON_EXACT && x <= CANON_EXACT && (double)(json_int_t)x == x;
}

static json_t *
dup_object(json_t *v, int depth)
{
	json_t *out = json_object(), *m, *c;
	const char *key;
	size_t klen;

	if (out == NULL)
		return NULL;
	json_object_keylen_foreach(v, key, klen, m) {
		if ((c = dup_at(m, depth + 1)) == NULL || json_object_setn_new_nocheck(out, key, klen, c) < 0) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

static json_t *
dup_array(json_t *v, int depth)
{
	json_t *out = json_array(), *m, *c;
	size_t i;

	if (out == NULL)
		return NULL;
	json_array_foreach(v, i, m) {
		if ((c = dup_at(m, depth + 1)) == NULL || json_array_append_new(out, c) < 0) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

static json_t *
dup_at(json_t *v, int depth)
{
	double x;

	if (depth > CANON_DEPTH_MAX)
		return NULL;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return dup_object(v, depth);
	case JSON_ARRAY:
		return dup_array(v, depth);
	case JSON_REAL:
		x = json_real_value(v);
		return integral(x) ? json_integer((json_int_t)x) : json_real(x);
	case JSON_STRING:
		return json_stringn_nocheck(json_string_value(v), json_string_length(v));
	default:
		return json_copy(v);
	}
}

json_t *
canon_dup(json_t *v)
{
	return v ? dup_at(v, 0) : NULL;
}

static int
by_name(const void *a, const void *b)
{
	const struct canon_member *x = a, *y = b;
	int c = memcmp(x->key, y->key, x->len < y->len ? x->len : y->len);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

struct canon_member *
canon_members(json_t *o)
{
	size_t n = json_object_size(o), i = 0, klen;
	struct canon_member *m;
	const char *key;
	json_t *v;

	if (n == 0 || (m = malloc(n * sizeof(*m))) == NULL)
		return NULL;
	json_object_keylen_foreach(o, key, klen, v) {
		m[i].key = key;
		m[i].len = klen;
		m[i++].value = v;
	}
	qsort(m, n, sizeof(*m), by_name);
	return m;
}

/* json_dump_callback's sink (a real's digits): the capped buffer. */
static int
canon_put(const char *p, size_t n, void *arg)
{
	return buf_append(arg, p, n);
}

/* A string as jansson writes it (jsonw_string's bytes), or -1 when it is not UTF-8
 * (jansson refuses to write it; jsonw would write '?'). */
static int
write_string(struct buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	uint32_t cp;
	size_t k;

	while (p < end) {
		if (*p < 0x80)
			p++;
		else if ((k = str_utf8(p, (size_t)(end - p), &cp)) > 0)
			p += k;
		else
			return -1;
	}
	return jsonw_string(b, s, n);
}

static int write_value(struct buf *b, json_t *v, int depth);

static int
write_object(struct buf *b, json_t *v, int depth)
{
	size_t n = json_object_size(v), i;
	struct canon_member *m;
	int rc;

	if (n == 0)
		return buf_puts(b, "{}");
	if ((m = canon_members(v)) == NULL)
		return -1;
	rc = buf_putc(b, '{');
	for (i = 0; i < n && rc == 0; i++) {
		if (i > 0)
			rc = buf_putc(b, ',');
		if (rc == 0)
			rc = write_string(b, m[i].key, m[i].len);
		if (rc == 0)
			rc = buf_putc(b, ':');
		if (rc == 0)
			rc = write_value(b, m[i].value, depth + 1);
	}
	free(m);
	return rc < 0 ? -1 : buf_putc(b, '}');
}

/* v's canonical text: what json_dumps(canon_dup(v), CANON_DUMP_FLAGS) writes, without
 * the copy, and without jansson's cost per object (jsonw.h): members sorted here, reals
 * alone left to jansson. fuzz_tooldef holds the two to the same bytes. */
static int
write_value(struct buf *b, json_t *v, int depth)
{
	size_t i, n;
	int rc;

	if (depth > CANON_DEPTH_MAX)
		return -1;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return write_object(b, v, depth);
	case JSON_ARRAY:
		rc = buf_putc(b, '[');
		for (i = 0, n = json_array_size(v); i < n && rc == 0; i++)
			if ((rc = i > 0 ? buf_putc(b, ',') : 0) == 0)
				rc = write_value(b, json_array_get(v, i), depth + 1);
		return rc < 0 ? -1 : buf_putc(b, ']');
	case JSON_STRING:
		return write_string(b, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		return jsonw_int(b, json_integer_value(v));
	case JSON_REAL:
		if (integral(json_real_value(v)))
			return jsonw_int(b, (int64_t)json_real_value(v));
		return json_dump_callback(v, canon_put, b, CANON_DUMP_FLAGS);
	case JSON_TRUE:
		return buf_puts(b, "true");
	case JSON_FALSE:
		return buf_puts(b, "false");
	default:
		return buf_puts(b, "null");
	}
}

char *
canon_text(json_t *v)
{
	struct buf b;

	buf_init(&b, CANON_MAX_BYTES);
	if (v == NULL || write_value(&b, v, 0) < 0 || b.data == NULL) {
		buf_free(&b);
		return NULL;
	}
	return b.data;	/* buf's data is a malloc'd, NUL-terminated string: ours now */
}

void
canon_digest_text(const char *text, size_t len, char out[CANON_DIGEST_LEN])
{
	unsigned char h[32];

	secret_sha256(text, len, h);
	memcpy(out, CANON_DIGEST_PREFIX, 7);
	secret_hex(h, sizeof(h), out + 7);
}

int
canon_digest(json_t *v, char out[CANON_DIGEST_LEN])
{
	char *text = canon_text(v);

	if (text == NULL)
		return -1;
	canon_digest_text(text, strlen(text), out);
	free(text);
	return 0;
}

int
canon_digest_valid(const char *s)
{
	size_t i;

	if (strncmp(s, CANON_DIGEST_PREFIX, 7) != 0)
		return 0;
	for (i = 7; i < CANON_DIGEST_LEN - 1; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[i] == '\0';
}
