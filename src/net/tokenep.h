/* tokenep — an authorization server's token endpoint, seen from the gateway: RFC 8693
 * token exchange (a caller's access token traded for one meant for an upstream), the
 * client_credentials grant (the gateway's own token for an upstream), the
 * authorization_code and refresh_token grants (the gateway as an OAuth client on behalf
 * of a person), and the reading of a token endpoint's answer (RFC 6749 §5.1 and §5.2),
 * which trusts nothing of it. The grant's secret goes only into the request's body, the
 * issued tokens only into memory their holder wipes. */
#ifndef GW_TOKENEP_H
#define GW_TOKENEP_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "config.h"
#include "err.h"
#include "introspect.h"
#include "secret.h"

#define TOKENEP_TOKEN_MAX	4096	/* an issued access token, in bytes */
#define TOKENEP_ERROR_MAX	64	/* an OAuth error code, with its NUL */
#define TOKENEP_DESC_MAX	160	/* its error_description as kept, with its NUL */
#define TOKENEP_EXPIRES_MAX	(366L * 86400)	/* expires_in beyond this is taken as this */

#define TOKENEP_TYPE_ACCESS	"urn:ietf:params:oauth:token-type:access_token"
#define TOKENEP_TYPE_ID_JAG	"urn:ietf:params:oauth:token-type:id-jag"

/* What a token request asks for (one row each in tokenep.c). */
enum tokenep_grant {
	TOKENEP_CLIENT_CREDENTIALS,	/* the gateway's own access token */
	TOKENEP_EXCHANGE,		/* RFC 8693: an access token for the caller's */
	TOKENEP_EXCHANGE_ID_JAG,	/* RFC 8693: an identity assertion grant (ID-JAG) for it */
	TOKENEP_JWT_BEARER,		/* RFC 7523: an access token for an assertion (the ID-JAG) */
	TOKENEP_AUTH_CODE,		/* RFC 6749 §4.1.3 with RFC 7636 PKCE: a person's tokens for a code */
	TOKENEP_REFRESH,		/* RFC 6749 §6: a person's tokens for a refresh token */
};

#define TOKENEP_SCOPE_MAX	1023	/* a granted scope string, in bytes */

/* What a token endpoint answered. */
struct tokenep_answer {
	char *token;		/* issued: the access token (malloc'd, NUL-terminated; visible ASCII) */
	size_t token_len;
	long expires_in;	/* issued: seconds it lives, 0 = not said */
	/* Issued for TOKENEP_AUTH_CODE and TOKENEP_REFRESH only (the other grants' answers
	 * are read as before: these stay NULL): the refresh token, as the access token is
	 * (malloc'd, NUL-terminated, 1 to TOKENEP_TOKEN_MAX visible ASCII bytes), NULL when
	 * none was issued (RFC 6749 §6: after a refresh, the one used is kept then); */
	char *refresh_token;
	size_t refresh_len;
	/* and the scope granted (malloc'd: RFC 6749 §3.3 scope tokens separated by single
	 * blanks, at most TOKENEP_SCOPE_MAX bytes), NULL when not said (RFC 6749 §5.1: the
	 * scope asked for). */
	char *scope;
	char error[TOKENEP_ERROR_MAX];		/* refused: the OAuth error code */
	char description[TOKENEP_DESC_MAX];	/* refused: its description, or "" */
};

/* The answer of a token endpoint to a request for grant (its HTTP status and body of
 * len bytes): 0 with a token (an access token of type Bearer; for an ID-JAG, one of
 * issued_token_type id-jag and token_type N_A; for a person's grants, with the refresh
 * token and scope when said), 1 with a refusal (a 400 or 401 with an OAuth error), -1
 * with err (GW_EAUTHSERVER: anything else, a refresh_token or scope said but unusable
 * included). out is cleared first; tokenep_answer_clear frees it whatever the outcome. */
int tokenep_parse(enum tokenep_grant grant, long status, const char *body, size_t len, struct tokenep_answer *out,
    struct gw_error *err);
/* Wipes and frees what out holds (the tokens and the scope). */
void tokenep_answer_clear(struct tokenep_answer *out);

/* One token request. */
struct tokenep_ask {
	enum tokenep_grant grant;
	/* NULL: the issuer's token_endpoint, from its metadata (a person's grants give it) */
	const char *endpoint;
	/* As whom the gateway asks; a client without a secret is a public one (RFC 6749
	 * §2.3, §3.2.1): its client_id goes in the form, no Authorization header. */
	const struct as_client *client;
	/* The grant's secret: an exchange's subject_token (the caller's access token), the
	 * jwt-bearer grant's assertion, the authorization_code grant's code, or the
	 * refresh_token grant's refresh token; NULL for client_credentials. */
	const struct secret_part *subject;
	const char *resource;		/* RFC 8707: the upstream's; NULL: none sent */
	const char *audience;		/* NULL: none sent (exchanges only) */
	const struct strlist *scopes;	/* NULL or empty: none asked (a refresh: the grant's own) */
	const char *code_verifier;	/* TOKENEP_AUTH_CODE: RFC 7636 §4.5, required */
	const char *redirect_uri;	/* TOKENEP_AUTH_CODE: the authorization request's, required */
	int64_t now_ms;			/* wall clock: the metadata mirror's freshness */
};

/* Appends the form of ask to form (application/x-www-form-urlencoded, each value
 * escaped; its ceiling bounds it, and the caller wipes it: it holds the grant's
 * secret): 0, or -1 when it does not fit or ask lacks what its grant needs. The
 * client's own credentials are not in it: introspect_post_form adds them. Used by
 * tokenep_request; public for the tests. */
int tokenep_form(const struct tokenep_ask *ask, struct buf *form);

/* POSTs the request (ask->grant's) on the worker's
 * connection to the authorization server (bounded by [auth] timeout-ms): tokenep_parse's
 * answer (0 issued, 1 refused), or -1 with err (the endpoint unknown, unreachable, or
 * answering something else). */
int tokenep_request(struct introspect *ix, struct asmeta_region *asmeta, const struct config *cfg,
    const struct tokenep_ask *ask, struct tokenep_answer *out, struct gw_error *err);

#endif
