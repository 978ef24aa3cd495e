/* The request-header readers of POST /mcp (src/http/negotiate.c): Accept, Content-Type, and
 * the =?base64?...?= header values. The first byte picks the size of the output buffer
 * (1 to 256 bytes); the rest is the header. Properties: negotiate_accept answers only
 * our two framings; a decoded value fits, holds no NUL and is trimmed; any bytes
 * without a NUL, as negotiate_header_encode writes them (no line break), decode to
 * themselves. */
#include "autoconf.h"

#include "fuzz.h"
#include "negotiate.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[NEGOTIATE_HEADER_MAX], *h, *enc;
	size_t outlen, n;

	if (size == 0)
		return 0;
	outlen = 1 + data[0] % 256;
	h = fuzz_cstr(data + 1, size - 1);
	FUZZ_CHECK((negotiate_accept(h) & ~(unsigned)(NEGOTIATE_JSON | NEGOTIATE_SSE)) == 0);
	(void)negotiate_media_type_is(h, "application/json");
	if (negotiate_header_value(h, out, outlen) == 0) {
		n = strlen(out);
		FUZZ_CHECK(n < outlen);
		FUZZ_CHECK(strncmp(h, "=?base64?", 9) == 0 || strstr(h, "=?base64?") != NULL ||
		    n == 0 || (out[0] != ' ' && out[0] != '\t' && out[n - 1] != ' ' && out[n - 1] != '\t'));
		FUZZ_CHECK(negotiate_header_matches(h, out));	/* the same with the full buffer */
	}
	/* The round trip: the bytes of the header, encoded as the gateway sends them. */
	n = strlen(h);
	enc = malloc(9 + 4 * (n / 3 + 1) + 3);
	FUZZ_CHECK(negotiate_header_encode(h, enc, 9 + 4 * (n / 3 + 1) + 3) == 0);
	FUZZ_CHECK(strchr(enc, '\r') == NULL && strchr(enc, '\n') == NULL);
	if (n > 0 && n < outlen) {
		FUZZ_CHECK(negotiate_header_value(enc, out, outlen) == 0);
		FUZZ_CHECK(strcmp(out, h) == 0);
	}
	if (n > 0 && n < NEGOTIATE_HEADER_MAX)
		FUZZ_CHECK(negotiate_header_matches(enc, h));
	free(enc);
	free(h);
	return 0;
}
