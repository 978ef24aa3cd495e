/* jwt — RFC 9068 access tokens: the JWS, the signature, the claims. */
#include "autoconf.h"

#include <string.h>
#include <strings.h>

#include "jwt.h"
#include "url.h"

int
jwt_local(const struct config *cfg, const char *tok, size_t len)
{
	switch (cfg->verify) {
	case VERIFY_JWT:
		return 1;
	case VERIFY_AUTO:
		return jws_looks_like(tok, len);
	default:
		return 0;
	}
}

int
jwt_check_header(const struct config *cfg, const struct jws *j, struct gw_error *err)
{
	const char *typ = jws_typ(j);

	if (json_object_get(jws_header(j), "typ") && typ == NULL)
		return gw_error_set(err, GW_EBADTOKEN, "token typ is not a string"), -1;
	/* RFC 9068 §2.1: "at+jwt"; a media type may carry its "application/" (RFC 7515 §4.1.9). */
	if (typ && (strcasecmp(typ, "at+jwt") == 0 || strcasecmp(typ, "application/at+jwt") == 0))
		return 0;
	if (cfg->jwt_typ == JWT_TYP_LENIENT && (typ == NULL || strcasecmp(typ, "JWT") == 0))
		return 0;
	return gw_error_set(err, GW_EBADTOKEN, "token is not a JWT access token (typ at+jwt)"), -1;
}

/* A time claim: 0 with *t (absent: *t untouched), or -1 when it is not an integer. */
static int
time_claim(json_t *payload, const char *name, int64_t *t)
{
	json_t *v = json_object_get(payload, name);

	if (v == NULL)
		return 0;
	if (!json_is_integer(v))
		return -1;
	*t = (int64_t)json_integer_value(v);
	return 0;
}

int
jwt_check_claims(const struct config *cfg, json_t *payload, int64_t now_s, struct claims *c,
    struct gw_error *err)
{
	const char *iss = json_string_value(json_object_get(payload, "iss"));
	int64_t exp = INT64_MIN, nbf = INT64_MIN, iat = INT64_MIN, skew = cfg->clock_skew;

	memset(c, 0, sizeof(*c));
	if (iss == NULL || !url_same(iss, cfg->issuer))
		return gw_error_set(err, GW_EBADTOKEN, "token issued by another issuer"), -1;
	if (time_claim(payload, "exp", &exp) < 0 || time_claim(payload, "nbf", &nbf) < 0 ||
	    time_claim(payload, "iat", &iat) < 0)
		return gw_error_set(err, GW_EBADTOKEN, "token time claim is not a number"), -1;
	if (exp == INT64_MIN)
		return gw_error_set(err, GW_EBADTOKEN, "token has no exp"), -1;
	/* Compared as now - skew against the claim: no sum of the claim's overflows. */
	if (exp <= now_s - skew)
		return gw_error_set(err, GW_EBADTOKEN, "token expired"), -1;
	if (nbf != INT64_MIN && nbf > now_s + skew)
		return gw_error_set(err, GW_EBADTOKEN, "token not yet valid"), -1;
	if (iat != INT64_MIN && iat > now_s + skew)
		return gw_error_set(err, GW_EBADTOKEN, "token issued in the future"), -1;
	if (!claims_audience(json_object_get(payload, "aud"), cfg->resource, cfg->audiences.v, cfg->audiences.n))
		return gw_error_set(err, GW_EBADTOKEN, "token not issued for this resource"), -1;
	{
		const struct claims_names names = { cfg->scope_claim, cfg->groups_claim, cfg->tenant_claim };

		if (claims_read(payload, &names, c, err) < 0)
			return -1;
	}
	/* RFC 9068 §2.2: a token without a resource owner has the client for subject. */
	c->machine = c->machine || (*c->client_id && strcmp(c->subject, c->client_id) == 0);
	c->exp = exp;
	return 0;
}

int
jwt_verify(struct jwks_view *v, const struct jwks_env *env, const struct config *cfg, const struct jwt_token *t,
    struct claims *c, struct gw_error *err)
{
	const struct jws_keys *keys;
	enum jws_verdict vd;
	struct jws *j = NULL;
	int rc = -1;

	memset(c, 0, sizeof(*c));
	if (cfg->verify == VERIFY_JWT && !jws_looks_like(t->tok, t->len)) {
		gw_error_set(err, GW_EBADTOKEN, "token is not a JWT");
		goto out;
	}
	if (jws_parse(t->tok, t->len, cfg->jwt_algs, &j, err) < 0) {
		err->code = GW_EBADTOKEN;	/* whatever failed, the token is refused */
		goto out;
	}
	if (jwt_check_header(cfg, j, err) < 0)
		goto out;
	if (jwks_keys(v, env, cfg, &(struct jwks_ask){ t->rid, t->now_ms, 0 }, &keys, err) < 0)
		goto out;
	/* A key the set lacks: the issuer may have rotated its keys. Fetched again at most
	 * once per jwks-min-interval for the host (jwks.c), whoever asks. */
	if ((vd = jws_verify(j, keys)) == JWS_NOKEY) {
		if (jwks_keys(v, env, cfg, &(struct jwks_ask){ t->rid, t->now_ms, 1 }, &keys, err) < 0)
			goto out;
		vd = jws_verify(j, keys);
	}
	if (vd != JWS_OK) {
		gw_error_set(err, GW_EBADTOKEN, "%s", vd == JWS_NOKEY ? "token signed with a key the issuer does not publish" :
		    "token signature does not verify");
		goto out;
	}
	if (jwt_check_claims(cfg, jws_payload(j), t->now_ms / 1000, c, err) < 0)
		goto out;
	rc = 0;
out:
	jws_free(j);
	return rc;
}
