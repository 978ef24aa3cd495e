/* A token endpoint's answer (RFC 6749 §5.1/§5.2, RFC 8693 §2.2): tokenep_parse
 * (src/net/tokenep.c). The first byte picks the HTTP status (200, 400, 401 or another:
 * its two low bits) and the grant asked for (the next two), the rest is the body. Properties: an issued token is 1 to TOKENEP_TOKEN_MAX visible
 * ASCII bytes (it goes into a header line) with a bounded life; a refusal is an OAuth
 * error code of RFC 6749's characters and holds no token; anything else says why and
 * holds nothing. */
#include "autoconf.h"

#include "fuzz.h"
#include "tokenep.h"

static int
oauth_text(const char *s, int blank_ok)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e || *s == '"' || *s == '\\' ||
		    (*s == ' ' && !blank_ok))
			return 0;
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const long statuses[] = { 200, 400, 401, 500 };
	static const enum tokenep_grant grants[] = { TOKENEP_EXCHANGE, TOKENEP_EXCHANGE_ID_JAG, TOKENEP_JWT_BEARER,
	    TOKENEP_CLIENT_CREDENTIALS };
	struct gw_error err = { GW_OK, 0, "" };
	struct tokenep_answer a;
	size_t i;
	long status;
	int rc;

	if (size < 1)
		return 0;
	status = statuses[data[0] % 4];
	rc = tokenep_parse(grants[(data[0] >> 2) % 4], status, (const char *)data + 1, size - 1, &a, &err);
	if (rc == 0) {
		FUZZ_CHECK(status == 200 && a.token != NULL);
		FUZZ_CHECK(a.token_len >= 1 && a.token_len <= TOKENEP_TOKEN_MAX && strlen(a.token) == a.token_len);
		for (i = 0; i < a.token_len; i++)
			FUZZ_CHECK((unsigned char)a.token[i] > 0x20 && (unsigned char)a.token[i] < 0x7f);
		FUZZ_CHECK(a.expires_in >= 0 && a.expires_in <= TOKENEP_EXPIRES_MAX);
		FUZZ_CHECK(a.error[0] == '\0');
	} else if (rc == 1) {
		FUZZ_CHECK((status == 400 || status == 401) && a.token == NULL);
		FUZZ_CHECK(a.error[0] != '\0' && oauth_text(a.error, 0) && oauth_text(a.description, 1));
	} else {
		FUZZ_CHECK(rc == -1 && a.token == NULL && err.code == GW_EAUTHSERVER && err.detail[0] != '\0');
	}
	tokenep_answer_clear(&a);
	FUZZ_CHECK(a.token == NULL && a.token_len == 0);
	return 0;
}
