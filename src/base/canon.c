/* canon — canonical JSON text and its SHA-256 digest (canon.h). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "canon.h"
#include "secret.h"

/* The largest integer a double holds exactly, and its neighbours: past it, an integral
 * real stays a real (two reals that print alike are one double anyway). */
#define CANON_EXACT	9007199254740992.0	/* 2^53 */

/* jansson's writer, fixed: what makes its text canonical (canon.h). */
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

/* Whether v needs canon_dup before it is written: 1 when it holds a real canon_dup
 * makes an integer, 0 when it is canonical as it is, -1 when it nests too deep. Most
 * definitions hold no such real: they are written without a copy. */
static int
needs_dup(json_t *v, int depth)
{
	json_t *m;
	const char *key;
	size_t i;
	int rc = 0;

	if (depth > CANON_DEPTH_MAX)
		return -1;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		json_object_foreach(v, key, m)
			if ((rc = needs_dup(m, depth + 1)) != 0)
				return rc;
		return 0;
	case JSON_ARRAY:
		json_array_foreach(v, i, m)
			if ((rc = needs_dup(m, depth + 1)) != 0)
				return rc;
		return 0;
	case JSON_REAL:
		return integral(json_real_value(v));
	default:
		return 0;
	}
}

/* json_dump_callback's sink: the capped buffer refuses past CANON_MAX_BYTES, and the
 * writer stops at the first refusal (no text of a megabyte and more is ever made). */
static int
canon_put(const char *p, size_t n, void *arg)
{
	return buf_append(arg, p, n);
}

char *
canon_text(json_t *v)
{
	struct buf b;
	json_t *c;
	int rc;

	switch (v ? needs_dup(v, 0) : -1) {
	case 0:
		c = json_incref(v);
		break;
	case 1:
		if ((c = canon_dup(v)) != NULL)
			break;
		/* fall through */
	default:
		return NULL;
	}
	buf_init(&b, CANON_MAX_BYTES);
	rc = json_dump_callback(c, canon_put, &b, CANON_DUMP_FLAGS);
	json_decref(c);
	if (rc < 0 || b.data == NULL) {
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
