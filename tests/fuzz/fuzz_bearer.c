/* The Authorization header (auth_parse_bearer, src/access/auth.c). Properties: an accepted
 * header is "Bearer" (any case), blanks, then a non-empty b64token (RFC 6750 §2.1) that
 * ends the header, and the token points into it. */
#include "autoconf.h"

#include <ctype.h>
#include <strings.h>

#include "auth.h"
#include "fuzz.h"

static int
b64token_char(int c)
{
	return isalnum(c) || strchr("-._~+/", c) != NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *h = fuzz_cstr(data, size);
	const char *tok = NULL;
	size_t len = 0, i, eq = 0;

	if (auth_parse_bearer(h, &tok, &len) == 0) {
		FUZZ_CHECK(strncasecmp(h, "Bearer ", 7) == 0);
		FUZZ_CHECK(tok >= h + 7 && len > 0 && tok + len == h + strlen(h));
		for (i = 7; h + i < tok; i++)
			FUZZ_CHECK(h[i] == ' ');
		for (i = 0; i < len && tok[i] != '='; i++)
			FUZZ_CHECK(tok[i] != '\0' && b64token_char((unsigned char)tok[i]));
		for (; i < len; i++, eq++)
			FUZZ_CHECK(tok[i] == '=');
		FUZZ_CHECK(eq < len);
	}
	free(h);
	return 0;
}
