/* claims — what a verified token says of its caller, as every layer above the token
 * sees it (auth fills it, the policy and the exchange read it), and the one reading of
 * a token's claims into it: an introspection response and a JWT access token's payload
 * alike. Fixed-size strings, so that it lives in the shared token cache as it is. */
#ifndef GW_CLAIMS_H
#define GW_CLAIMS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define CLAIMS_SUBJECT_MAX	256
#define CLAIMS_CLIENT_MAX	128
#define CLAIMS_SCOPE_MAX	512
#define CLAIMS_GROUPS_MAX	1024
#define CLAIMS_TENANT_MAX	128
#define CLAIMS_JKT_MAX		44	/* a base64url SHA-256 and its NUL */

struct claims {
	char subject[CLAIMS_SUBJECT_MAX];	/* sub, or client_id for machine tokens */
	char client_id[CLAIMS_CLIENT_MAX];
	char scope[CLAIMS_SCOPE_MAX];	/* space-separated */
	char groups[CLAIMS_GROUPS_MAX];	/* space-separated */
	char tenant[CLAIMS_TENANT_MAX];	/* "" = none */
	char jkt[CLAIMS_JKT_MAX];	/* cnf.jkt: the DPoP key the token is bound to; "" = none */
	int64_t exp;			/* seconds since the epoch */
	int machine;			/* no sub: a client_credentials token */
};

/* Which claims name the scopes, the identity groups and the tenant. */
struct claims_names {
	const char *scope;
	const char *groups;
	const char *tenant;
};

/* Who the claims of j say the caller is, whatever the token's acceptance: the client
 * (client_id, else azp, else appid), sub (else the client: a machine token), the scopes
 * (a blank-separated string or an array of names; of another type: none), the groups (the same), the tenant (a
 * string), and the DPoP key it is bound to (cnf.jkt, RFC 9449 §6: 43 base64url
 * characters). 0 with c, or -1 with err (GW_EBADTOKEN, saying which) when a claim does
 * not fit or is of the wrong type. exp is left to the caller. */
int claims_read(json_t *j, const struct claims_names *names, struct claims *c, struct gw_error *err);
/* Copies src into a field of n bytes: 0, or -1 when it does not fit. */
int claims_set(char *dst, size_t n, const char *src);
/* 1 when aud (a string or an array of strings) names resource or one of extra[n]. */
int claims_audience(json_t *aud, const char *resource, char *const *extra, size_t n);

#endif
