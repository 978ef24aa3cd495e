/* negotiate — Content-Type, Accept, and header values that repeat the body. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "negotiate.h"
#include "secret.h"

int
negotiate_media_type_is(const char *ct, const char *want)
{
	size_t n = strlen(want);

	return ct && strncasecmp(ct, want, n) == 0 && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

unsigned
negotiate_accept(const char *accept)
{
	static const struct {
		const char *range;
		unsigned types;
	} ranges[] = {
		{ "application/json", NEGOTIATE_JSON }, { "text/event-stream", NEGOTIATE_SSE },
		{ "application/*", NEGOTIATE_JSON }, { "text/*", NEGOTIATE_SSE },
		{ "*/*", NEGOTIATE_JSON | NEGOTIATE_SSE },
	};
	const char *p = accept, *end, *semi, *q;
	unsigned types = 0;
	size_t i, n;

	if (accept == NULL || *accept == '\0')
		return NEGOTIATE_JSON | NEGOTIATE_SSE;
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		end = p + strcspn(p, ",");
		semi = memchr(p, ';', (size_t)(end - p));
		n = (size_t)((semi ? semi : end) - p);
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		q = semi ? strstr(semi, "q=") : NULL;
		if (!(q && q < end && strtod(q + 2, NULL) == 0.0))
			for (i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
				if (strlen(ranges[i].range) == n && strncasecmp(p, ranges[i].range, n) == 0)
					types |= ranges[i].types;
		p = end;
	}
	return types;
}

int
negotiate_header_value(const char *raw, char *out, size_t outlen)
{
	size_t n;
	long len;

	while (*raw == ' ' || *raw == '\t')
		raw++;
	n = strlen(raw);
	while (n && (raw[n - 1] == ' ' || raw[n - 1] == '\t'))
		n--;
	if (n >= 12 && strncmp(raw, "=?base64?", 9) == 0 && strncmp(raw + n - 2, "?=", 2) == 0) {
		if ((len = secret_unbase64(raw + 9, n - 11, out, outlen - 1)) < 0 ||
		    memchr(out, '\0', (size_t)len))
			return -1;
		out[len] = '\0';
		return 0;
	}
	if (n >= outlen)
		return -1;
	memcpy(out, raw, n);
	out[n] = '\0';
	return 0;
}

int
negotiate_header_matches(const char *raw, const char *want)
{
	char v[NEGOTIATE_HEADER_MAX];

	return raw && want && negotiate_header_value(raw, v, sizeof(v)) == 0 && strcmp(v, want) == 0;
}

int
negotiate_header_encode(const char *value, char *out, size_t outlen)
{
	size_t n = strlen(value), i;
	/* (one that reads as encoded is encoded itself) */
	int plain = n > 0 && value[0] != ' ' && value[n - 1] != ' ' && strncmp(value, "=?base64?", 9) != 0;

	for (i = 0; i < n && plain; i++)
		plain = (unsigned char)value[i] >= 0x20 && (unsigned char)value[i] < 0x7f;
	if (plain) {
		if (n >= outlen)
			return -1;
		memcpy(out, value, n + 1);
		return 0;
	}
	if (outlen < 12 || secret_base64(value, n, out + 9, outlen - 11) < 0)
		return -1;
	memcpy(out, "=?base64?", 9);
	memcpy(out + strlen(out), "?=", 3);
	return 0;
}
