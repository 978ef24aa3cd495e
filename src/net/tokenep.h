/* tokenep — an authorization server's token endpoint, seen from the gateway: RFC 8693
 * token exchange (a caller's access token traded for one meant for an upstream) and the
 * client_credentials grant (the gateway's own token for an upstream), and the reading
 * of a token endpoint's answer (RFC 6749 §5.1 and §5.2), which trusts
 * nothing of it. The caller's token goes only into the request's body, the issued one
 * only into memory its holder wipes. */
#ifndef GW_TOKENEP_H
#define GW_TOKENEP_H

#include <stddef.h>
#include <stdint.h>

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
};

/* What a token endpoint answered. */
struct tokenep_answer {
	char *token;		/* issued: the access token (malloc'd, NUL-terminated; visible ASCII) */
	size_t token_len;
	long expires_in;	/* issued: seconds it lives, 0 = not said */
	char error[TOKENEP_ERROR_MAX];		/* refused: the OAuth error code */
	char description[TOKENEP_DESC_MAX];	/* refused: its description, or "" */
};

/* The answer of a token endpoint to a request for grant (its HTTP status and body of
 * len bytes): 0 with a token (an access token of type Bearer; for an ID-JAG, one of
 * issued_token_type id-jag and token_type N_A), 1 with a refusal (a 400 or 401 with an
 * OAuth error), -1 with err (GW_EAUTHSERVER: anything else). out is cleared first;
 * tokenep_answer_clear frees it whatever the outcome. */
int tokenep_parse(enum tokenep_grant grant, long status, const char *body, size_t len, struct tokenep_answer *out,
    struct gw_error *err);
/* Wipes and frees what out holds. */
void tokenep_answer_clear(struct tokenep_answer *out);

/* One token request. */
struct tokenep_ask {
	enum tokenep_grant grant;
	const char *endpoint;		/* NULL: the issuer's token_endpoint, from its metadata */
	const struct as_client *client;	/* as whom the gateway asks */
	/* An exchange's subject_token (the caller's access token), or the jwt-bearer
	 * grant's assertion; NULL for client_credentials. */
	const struct secret_part *subject;
	const char *resource;		/* the upstream's */
	const char *audience;		/* NULL: none sent (exchanges only) */
	const struct strlist *scopes;	/* NULL or empty: none asked */
	int64_t now_ms;			/* wall clock: the metadata mirror's freshness */
};

/* POSTs the request (ask->grant's) on the worker's
 * connection to the authorization server (bounded by [auth] timeout-ms): tokenep_parse's
 * answer (0 issued, 1 refused), or -1 with err (the endpoint unknown, unreachable, or
 * answering something else). */
int tokenep_request(struct introspect *ix, struct asmeta_region *asmeta, const struct config *cfg,
    const struct tokenep_ask *ask, struct tokenep_answer *out, struct gw_error *err);

#endif
