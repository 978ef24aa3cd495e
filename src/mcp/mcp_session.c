/* mcp_session — sealed sessions of the revisions of initialize: issued with a session
 * at every upstream, opened and checked against tombstones on every request, ended by
 * DELETE. Its standalone stream (GET /mcp): mcp_stream.c. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "mcp_call.h"
#include "rstore.h"

void
mcp_caller_who(const struct config *cfg, const struct caller *caller, char who[33])
{
	if (caller->who[0])	/* made when the caller was accepted */
		memcpy(who, caller->who, 33);
	else
		session_who(cfg->bind, caller->claims.subject, caller->claims.client_id, caller->claims.tenant, who);
}

/* A fresh session for an initialize that succeeded: the Mcp-Session-Id header, with a
 * session of the caller's own at every upstream (its client capabilities passed on). */
void
mcp_issue_session(struct exchange *x, json_t *params, json_t *answer)
{
	const char *pv = json_string_value(json_object_get(json_object_get(answer, "result"), "protocolVersion"));
	struct fed_call f;
	struct session s;
	char id[SESSION_ID_MAX];

	if (pv == NULL || x->env->session_key == NULL)
		return;
	mcp_fed_init(x, &f);
	f.doc = mcp_catalog(x);
	f.sessions = NULL;	/* the new session's own, below */
	memset(&s, 0, sizeof(s));
	snprintf(s.version, sizeof(s.version), "%s", pv);
	mcp_caller_who(x->cfg, x->caller, s.who);
	s.exp = x->req->now + x->cfg->session_ttl;
	s.flags = mcp_ask_flags(json_object_get(params, "capabilities"));
	s.upstreams = fed_open_sessions(&f, json_object_get(params, "capabilities"));
	if (session_seal(x->env->session_key, &s, id) < 0) {
		log_warn(x->req->id, "session: the caller's upstream sessions do not fit an Mcp-Session-Id; "
		    "its calls go on sessions the gateway holds for it");
		f.sessions = s.upstreams;
		fed_close_sessions(&f);
		json_object_clear(s.upstreams);
		if (session_seal(x->env->session_key, &s, id) < 0) {
			session_clear(&s);
			return;
		}
	}
	response_set_header(x->resp, "Mcp-Session-Id", "%s", id);
	session_clear(&s);
}

/* A presented Mcp-Session-Id must open for this caller; none means stateless. 0, -1
 * (not a session: 404), or -2 when its tombstones cannot be read (404 too: fail closed).
 * With a Redis store, a session another host ended is ended here too (asked in the
 * round trip of the request's first limit decision when there was one, limiter.h);
 * while Redis does not answer, the host's own tombstones decide (rstore.c logs it). */
int
mcp_check_session(const struct req_ctx *rc, struct session *s)
{
	const struct mcp_env *env = rc->slot[REQ_SLOT_MCP];
	const struct request *req = rc->req;
	unsigned char key[RSTORE_KEY_BYTES];
	char who[33];
	int st, seen;

	memset(s, 0, sizeof(*s));
	if (req->session_id == NULL)
		return 0;
	mcp_caller_who(rc->cfg, rc->caller, who);
	if (env->session_key == NULL)
		return -1;
	st = session_open_memo(&(struct session_opener){ env->session_key, env->tombstones, env->sessions },
	    req->session_id, who, req->now, s);
	if (st == 0 && env->rs) {
		session_tomb_key(env->shared_key, req->session_id, key);
		if ((seen = rc->lim ? limiter_probed(rc->lim, key) : -1) < 0)
			seen = rstore_has(env->rs, rc->cfg, &(struct rs_key){ RS_TOMB, key }, clock_mono_us() / 1000);
		if (seen == 1) {
			session_clear(s);
			st = -1;
		}
	}
	return st;
}

int
mcp_session_route(struct req_ctx *rc)
{
	response_set_header(rc->resp, "Cache-Control", "no-store");
	return mcp_tenant_check(rc->cfg, rc->caller, rc->resp);
}

void
mcp_end_session(struct req_ctx *rc)
{
	const struct mcp_env *env = rc->slot[REQ_SLOT_MCP];
	const struct config *cfg = rc->cfg;
	struct request *req = rc->req;
	struct response *resp = rc->resp;
	struct session s;
	int st;

	if (mcp_session_route(rc) < 0)
		return;
	if (req->session_id == NULL) {
		response_set_error(resp, GW_EBADREQUEST, "DELETE needs the Mcp-Session-Id to end");
		return;
	}
	if ((st = mcp_check_session(rc, &s)) < 0 || env->tombstones == NULL) {
		/* A DELETE whose end could not be recorded is not answered as done. */
		if (st == -2)
			response_set_error(resp, GW_EINTERNAL, "the session's end cannot be recorded now");
		else
			response_set_error(resp, GW_ESESSION, NULL);
		session_clear(&s);
		return;
	}
	if (session_end(env->tombstones, req->session_id, s.exp, req->now) < 0) {
		response_set_error(resp, GW_EINTERNAL, "the session's end cannot be recorded now");
		session_clear(&s);
		return;
	}
	if (env->rs) {
		unsigned char key[RSTORE_KEY_BYTES];

		session_tomb_key(env->shared_key, req->session_id, key);
		if (rstore_put(env->rs, cfg, &(struct rs_key){ RS_TOMB, key }, "1", (s.exp - req->now + 1) * 1000,
		    clock_mono_us() / 1000) < 0)
			log_warn(req->id, "this session's end is recorded on this host only: Redis does not answer");
	}
	{
		struct fed_call f = { .cfg = cfg, .pool = env->pool, .now_ms = clock_mono_us() / 1000,
		    .sessions = s.upstreams, .cred = env->cred };

		fed_close_sessions(&f);
	}
	session_clear(&s);
	response_set_empty(resp, 204);
}
