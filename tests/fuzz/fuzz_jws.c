/* A compact JWS — a JWT access token or a DPoP proof (src/base/jws.c, src/access/jwt.c):
 * jws_looks_like, jws_parse under every algorithm, the signature with a fixed JWK set
 * (an RSA and a P-256 key; the corpus holds tokens they signed) and with the key a
 * header embeds, then the header's and the claims' acceptance. Properties: what parses
 * and begins "eyJ" looks like a JWS, has an accepted algorithm, an object for header and payload; an
 * embedded key's thumbprint is 43 base64url characters; accepted claims are terminated
 * strings within their sizes and unexpired within the skew. */
#include "autoconf.h"

#include <jansson.h>

#include "fuzz.h"
#include "jws.h"
#include "jwt.h"

#define NOW	1760000000	/* seconds */

static struct config *cfg;
static struct jws_keys *keys;

static const char jwks[] =
	    "{\"keys\":[{\"kty\":\"RSA\",\"n\":\"0xZeD8dH8UP9gUud1ZTvHWQ6BRYl8ZbjBEIaxEn1-rxvHGqJd1Vu"
	    "nZ8QpIqF3bwVQHn2Gd5fBQhDZVON3iUJUq7HRGJPvhuNPC8uEm7nEnUCr9Wkv7zDtx5frB4duDq-eNQFtCV26dtc"
	    "X24AwwaaXrTrc35Jg5JqFLURKm8cNV9i_MBFVDvQ_fOQLa9iln6pnVQyf0lA4O6PuklnLcLE7mn4sQnertzi03Nv"
	    "INDE2DozdBAIrOo0RPGHvGFmMkw8tg-TDnFzBsWpZ-cxPhcQl8DM25MXfFhmVKIBA706SuIpw1-Oeun4N8tECQoo"
	    "DQ1t3lc2cKINK3AYPLDjL8gmAw\",\"e\":\"AQAB\",\"kid\":\"r1\",\"use\":\"sig\"},{\"kty\":\"E"
	    "C\",\"x\":\"wJ_4N7yJij1sQMN-OGP-x76cRXWQwc2VjBvOURSl6Fw\",\"y\":\"cOL_L14TS2HASIuyBX654P"
	    "rKdFaCBvM_6SpMw3s4BGk\",\"crv\":\"P-256\",\"kid\":\"e1\",\"use\":\"sig\",\"alg\":\"ES256"
	    "\"}]}";

void
fuzz_setup(void)
{
	struct gw_error err;

	cfg = fuzz_config("[gateway]\nresource = https://gw.example.com/mcp\n"
	    "[auth]\nissuer = https://idp.example.com\nverify = jwt\nclock-skew = 60\n");
	keys = jws_keys_parse(jwks, sizeof(jwks) - 1, &err);
	FUZZ_CHECK(keys != NULL && jws_keys_count(keys) == 2);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size), thumb[JWS_B64_SHA256];
	size_t n = strlen(s);
	struct gw_error err = { GW_OK, 0, "" };
	const char *alg;
	unsigned bit;
	struct claims c;
	struct jws *j;
	int looks = jws_looks_like(s, n);

	if (jws_parse(s, n, JWS_ALGS_ALL, &j, &err) == 0) {
		FUZZ_CHECK(looks || strncmp(s, "eyJ", 3) != 0);
		alg = json_string_value(json_object_get(jws_header(j), "alg"));
		FUZZ_CHECK(alg != NULL && jws_alg_parse(alg, &bit, &err) == 0);
		FUZZ_CHECK(json_is_object(jws_payload(j)));
		(void)jws_verify(j, keys);
		if (jws_verify_embedded(j, NULL, thumb) != JWS_NOKEY)
			FUZZ_CHECK(strlen(thumb) == JWS_B64_SHA256 - 1);
		(void)jwt_check_header(cfg, j, &err);
		if (jwt_check_claims(cfg, jws_payload(j), NOW, &c, &err) == 0) {
			fuzz_claims_ok(&c);
			FUZZ_CHECK(c.exp > NOW - 60);
		} else
			FUZZ_CHECK(err.code == GW_EBADTOKEN && *err.detail);
		jws_free(j);
	} else
		FUZZ_CHECK((err.code == GW_EBADTOKEN || err.code == GW_EINTERNAL) && *err.detail);
	free(s);
	return 0;
}
