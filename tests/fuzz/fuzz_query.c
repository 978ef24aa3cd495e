/* One parameter of a query string (url_query_param, src/base/url.c), as the connect page
 * reads an authorization server's answer (code, state, iss, error). The first byte is
 * the size of the out buffer (0 to 255, allocated to that size: a byte written past it
 * is a finding); the rest is two strings cut at the first NUL, the query and the name.
 * Properties: the result is -1, 0 or 1; with a buffer of 0 bytes, -1 and nothing
 * written; on 1 the value is a string shorter than the buffer with no control character
 * and the query holds "name=" (at its start or after a '&'); on 0 or -1 the buffer holds
 * ""; the parameter named once more ("&name=v") makes a found one (and a refused one)
 * -1, and an absent one found, its value "v" (a name without '&'); the query repeated
 * ("query&query") is -1 when the parameter was found; no query is 0. */
#include "autoconf.h"

#include "fuzz.h"
#include "url.h"

/* query, "&", then b and c: a new string. */
static char *
join(const char *query, const char *b, const char *c)
{
	size_t qn = strlen(query), bn = strlen(b), cn = strlen(c);
	char *s = malloc(qn + 1 + bn + cn + 1);

	FUZZ_CHECK(s != NULL);
	memcpy(s, query, qn);
	s[qn] = '&';
	memcpy(s + qn + 1, b, bn);
	memcpy(s + qn + 1 + bn, c, cn + 1);
	return s;
}

/* Whether query holds "name=" at its start or after a '&'. */
static int
names(const char *query, const char *name)
{
	size_t nl = strlen(name);
	const char *p;

	for (p = query; p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL)
		if (strncmp(p, name, nl) == 0 && p[nl] == '=')
			return 1;
	return 0;
}

/* url_query_param of query and name into a buffer of outlen bytes, checked; the value
 * into val (256 bytes) on 1. */
static int
one(const char *query, const char *name, size_t outlen, char *val)
{
	char *out = malloc(outlen ? outlen : 1);
	int r;
	size_t i;

	FUZZ_CHECK(out != NULL);
	out[0] = 'x';
	r = url_query_param(query, name, out, outlen);
	FUZZ_CHECK(r == -1 || r == 0 || r == 1);
	if (outlen == 0) {
		FUZZ_CHECK(r == -1 && out[0] == 'x');
	} else if (r == 1) {
		FUZZ_CHECK(memchr(out, '\0', outlen) != NULL);
		for (i = 0; out[i]; i++)
			FUZZ_CHECK((unsigned char)out[i] >= 0x20 && out[i] != 0x7f);
		FUZZ_CHECK(query != NULL && names(query, name));
		memcpy(val, out, strlen(out) + 1);
	} else {
		FUZZ_CHECK(out[0] == '\0');
	}
	free(out);
	return r;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char val[256], again[256], *query, *name, *more;
	size_t outlen;
	int r;

	if (size < 1)
		return 0;
	outlen = data[0];
	fuzz_split2(data + 1, size - 1, &query, &name);
	r = one(query, name, outlen, val);
	FUZZ_CHECK(one(NULL, name, outlen, again) == (outlen ? 0 : -1));
	more = join(query, name, "=v");
	if (r != 0)
		FUZZ_CHECK(one(more, name, outlen, again) == -1);
	else if (strchr(name, '&') == NULL && outlen >= 2)
		FUZZ_CHECK(one(more, name, outlen, again) == 1 && strcmp(again, "v") == 0);
	free(more);
	if (r == 1) {
		more = join(query, query, "");
		FUZZ_CHECK(one(more, name, outlen, again) == -1);
		free(more);
	}
	free(query);
	free(name);
	return 0;
}
