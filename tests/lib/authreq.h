/* authreq.h — one request through auth_authenticate, for the unit tests: a POST with
 * these Authorization and DPoP headers (dpop NULL: none); its status (0: accepted) and
 * its WWW-Authenticate (or "") in challenge. */
#ifndef GW_AUTHREQ_H
#define GW_AUTHREQ_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"

static __attribute__((unused)) int
authreq(const struct auth_env *env, const struct config *cfg, const char *authorization, const char *dpop,
    char *challenge, size_t n)
{
	char post[] = "POST";
	struct request req;
	struct response r;
	struct caller who;
	struct req_ctx rc = { .cfg = cfg, .req = &req, .resp = &r, .slot[REQ_SLOT_AUTH] = env };
	int status;

	memset(&req, 0, sizeof(req));
	snprintf(req.id, sizeof(req.id), "t");
	req.authorization = strdup(authorization);
	req.dpop = dpop ? strdup(dpop) : NULL;
	req.method_name = post;
	response_init(&r, "t");
	status = auth_authenticate(&rc, &who) == 0 ? 0 : r.status;
	snprintf(challenge, n, "%s", response_get_header(&r, "WWW-Authenticate") ?
	    response_get_header(&r, "WWW-Authenticate") : "");
	response_free(&r);
	free(req.authorization);
	free(req.dpop);
	return status;
}

#endif
