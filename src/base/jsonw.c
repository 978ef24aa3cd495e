/* jsonw — compact JSON written straight into a buf (jsonw.h). */
#include "autoconf.h"

#include <string.h>

#include "jsonw.h"
#include "str.h"

/* Deeper than this, a value is handed to jansson, which finds cycles. */
#define JSONW_DEPTH	32

int
jsonw_string(struct buf *b, const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";	/* as jansson writes them */
	static const char *const short_esc[0x20] = {
		['\b'] = "\\b", ['\f'] = "\\f", ['\n'] = "\\n", ['\r'] = "\\r", ['\t'] = "\\t",
	};
	const unsigned char *p = (const unsigned char *)s, *end = p + len, *run;
	char u[7] = "\\u00";
	uint32_t cp;
	size_t k;
	int rc = buf_putc(b, '"');

	while (p < end) {
		for (run = p; p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\'; p++)
			;
		rc |= buf_append(b, run, (size_t)(p - run));
		if (p == end)
			break;
		if (*p >= 0x80) {
			k = str_utf8(p, (size_t)(end - p), &cp);
			rc |= k > 0 ? buf_append(b, p, k) : buf_putc(b, '?');
			p += k ? k : 1;
		} else if (*p == '"' || *p == '\\') {
			rc |= buf_putc(b, '\\');
			rc |= buf_putc(b, (char)*p++);
		} else if (short_esc[*p]) {
			rc |= buf_puts(b, short_esc[*p++]);
		} else {
			u[4] = hex[*p >> 4];
			u[5] = hex[*p++ & 0xf];
			rc |= buf_append(b, u, 6);
		}
	}
	return rc | buf_putc(b, '"');
}

int
jsonw_int(struct buf *b, int64_t v)
{
	char num[22];
	size_t n;

	num[0] = '-';
	n = str_u64(num + 1, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
	return buf_append(b, v < 0 ? num : num + 1, v < 0 ? n + 1 : n);
}

static int
dump_jansson(const char *p, size_t n, void *data)
{
	return buf_append(data, p, n);
}

static int
dump(struct buf *b, json_t *v, int depth)
{
	const char *key;
	json_t *m;
	size_t ix, n;
	int rc = 0, first = 1;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		if (depth >= JSONW_DEPTH)
			break;
		rc = buf_putc(b, '{');
		json_object_foreach(v, key, m) {
			if (!first)
				rc |= buf_putc(b, ',');
			first = 0;
			rc |= jsonw_string(b, key, strlen(key));
			rc |= buf_putc(b, ':');
			if (rc < 0 || dump(b, m, depth + 1) < 0)
				return -1;
		}
		return rc | buf_putc(b, '}');
	case JSON_ARRAY:
		if (depth >= JSONW_DEPTH)
			break;
		rc = buf_putc(b, '[');
		for (ix = 0, n = json_array_size(v); ix < n; ix++) {
			if (ix > 0)
				rc |= buf_putc(b, ',');
			if (rc < 0 || dump(b, json_array_get(v, ix), depth + 1) < 0)
				return -1;
		}
		return rc | buf_putc(b, ']');
	case JSON_STRING:
		return jsonw_string(b, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		return jsonw_int(b, json_integer_value(v));
	case JSON_TRUE:
		return buf_puts(b, "true");
	case JSON_FALSE:
		return buf_puts(b, "false");
	case JSON_NULL:
		return buf_puts(b, "null");
	default:	/* a real: jansson's own digits */
		break;
	}
	return json_dump_callback(v, dump_jansson, b, JSON_COMPACT | JSON_ENCODE_ANY);
}

int
jsonw_dump(struct buf *b, json_t *v)
{
	return v ? dump(b, v, 0) : -1;
}
