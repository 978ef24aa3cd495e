/* auth — Bearer credentials to a caller, and the challenges of RFC 6750 / RFC 9728.
 * Token verification (RFC 7662 introspection) arrives with issue #3; until then every
 * request to a protected route is answered 401 with a correct challenge. */
#ifndef GW_AUTH_H
#define GW_AUTH_H

#include "config.h"
#include "request.h"
#include "response.h"

/* RFC 6750 §2.1: "Bearer" 1*SP b64token. Points *tok into header; 0 or -1. */
int auth_parse_bearer(const char *header, const char **tok, size_t *len);
/* Fills resp with the 401/403 answer for e (GW_ENOTOKEN, GW_EBADTOKEN). */
void auth_challenge(const struct config *cfg, struct response *resp, enum gw_err e,
    const char *description);
/* 0 when the request carries an accepted token; else -1 with resp filled. */
int auth_require(const struct config *cfg, const struct request *req, struct response *resp);

#endif
