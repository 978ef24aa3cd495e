/* A token endpoint's answer (RFC 6749 §5.1/§5.2, RFC 8693 §2.2): tokenep_parse
 * (src/net/tokenep.c). The first byte picks the HTTP status (200, 400, 401 or another:
 * its two low bits) and the grant asked for (the rest of it, modulo the six grants), the
 * rest is the body. Properties: an issued token is 1 to TOKENEP_TOKEN_MAX visible ASCII
 * bytes (it goes into a header line) with a bounded life; so is a refresh token, kept
 * only for a person's grants (authorization_code, refresh_token), as is a scope of RFC
 * 6749 scope tokens separated by single blanks; a refusal is an OAuth error code of RFC
 * 6749's characters and holds no token; anything else says why and holds nothing. */
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

/* 1 to TOKENEP_TOKEN_MAX bytes of visible ASCII, len of them. */
static int
visible(const char *t, size_t len)
{
	size_t i;

	if (t == NULL || len < 1 || len > TOKENEP_TOKEN_MAX || strlen(t) != len)
		return 0;
	for (i = 0; i < len; i++)
		if ((unsigned char)t[i] <= 0x20 || (unsigned char)t[i] >= 0x7f)
			return 0;
	return 1;
}

/* Scope tokens separated by single blanks, at most TOKENEP_SCOPE_MAX bytes. */
static int
scope_text(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= TOKENEP_SCOPE_MAX && s[0] != ' ' && s[n - 1] != ' ' && strstr(s, "  ") == NULL &&
	    oauth_text(s, 1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const long statuses[] = { 200, 400, 401, 500 };
	/* (The first four in the order the corpus was written for.) */
	static const enum tokenep_grant grants[] = { TOKENEP_EXCHANGE, TOKENEP_EXCHANGE_ID_JAG, TOKENEP_JWT_BEARER,
	    TOKENEP_CLIENT_CREDENTIALS, TOKENEP_AUTH_CODE, TOKENEP_REFRESH };
	struct gw_error err = { GW_OK, 0, "" };
	struct tokenep_answer a;
	enum tokenep_grant grant;
	long status;
	int rc, person;

	if (size < 1)
		return 0;
	status = statuses[data[0] % 4];
	grant = grants[(data[0] >> 2) % 6];
	person = grant == TOKENEP_AUTH_CODE || grant == TOKENEP_REFRESH;
	rc = tokenep_parse(grant, status, (const char *)data + 1, size - 1, &a, &err);
	if (rc == 0) {
		FUZZ_CHECK(status == 200 && visible(a.token, a.token_len));
		FUZZ_CHECK(a.expires_in >= 0 && a.expires_in <= TOKENEP_EXPIRES_MAX);
		FUZZ_CHECK(a.error[0] == '\0');
		FUZZ_CHECK(a.refresh_token == NULL ? a.refresh_len == 0 : person && visible(a.refresh_token, a.refresh_len));
		FUZZ_CHECK(a.scope == NULL || (person && scope_text(a.scope)));
	} else if (rc == 1) {
		FUZZ_CHECK((status == 400 || status == 401) && a.token == NULL && a.refresh_token == NULL && a.scope == NULL);
		FUZZ_CHECK(a.error[0] != '\0' && oauth_text(a.error, 0) && oauth_text(a.description, 1));
	} else {
		FUZZ_CHECK(rc == -1 && a.token == NULL && a.refresh_token == NULL && a.scope == NULL);
		FUZZ_CHECK(err.code == GW_EAUTHSERVER && err.detail[0] != '\0');
	}
	tokenep_answer_clear(&a);
	FUZZ_CHECK(a.token == NULL && a.token_len == 0 && a.refresh_token == NULL && a.refresh_len == 0 && a.scope == NULL);
	return 0;
}
