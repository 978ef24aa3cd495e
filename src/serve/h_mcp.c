/* h_mcp — POST and DELETE /mcp. The router's gate has already checked the Origin,
 * the body size and the token. */
#include "autoconf.h"

#include <string.h>

#include "auth.h"
#include "handlers.h"
#include "mcp.h"
#include "upcred.h"

/* The two digests of a caller that upcred takes: the audit log's (the subject alone)
 * and the gateway's (session_who: what names the markers explain reads). */
struct caller_whos {
	char subject[33], caller[33];
};

/* What the upstreams whose tokens the gateway obtains need (credentials = exchange,
 * client-credentials): the caller's token (parsed again from the header the gate
 * accepted) and its life, the worker's connection to the authorization server, the
 * host's cache. 0, or -1: none needed. */
static int
caller_cred(const struct req_ctx *rc, struct upcred *u, struct caller_whos *who)
{
	const char *tok;
	size_t len;
	int scheme;

	if ((!rc->cfg->obtains && !rc->cfg->user_oauth) || rc->caller == NULL)
		return -1;
	if (auth_parse_credentials(rc->req->authorization, &scheme, &tok, &len) < 0) {
		tok = NULL;	/* none to exchange: a client-credentials upstream is still reached */
		len = 0;
	}
	*u = (struct upcred){
		.cfg = rc->cfg, .ix = worker_auth(rc->w)->ix, .asmeta = rc->sh->asmeta, .cache = rc->sh->creds,
		.key = gateway_session_key(rc->sh, rc->cfg), .subject = { tok, len },
		.subject_exp_ms = rc->caller->claims.exp > 0 ? rc->caller->claims.exp * 1000 : 0,
		.subject_scope = rc->caller->claims.scope, .subject_who = who->subject,
		.caller_who = who->caller, .request_id = rc->req->id,
		.metrics = rc->sh->metrics, .rs = rc->cfg->shared_cache ? worker_rstore(rc->w, rc->cfg) : NULL,
		.vault = rc->sh->vault, .subject_sub = rc->caller->claims.subject,
		.vault_rs = rc->cfg->redis_on ? worker_rstore(rc->w, rc->cfg) : NULL,
	};
	if (u->key == NULL)
		return -1;
	session_who(NULL, rc->caller->claims.subject, "", "", who->subject);	/* the audit log's: the subject alone */
	if (rc->caller->who[0])	/* made when the caller was accepted */
		memcpy(who->caller, rc->caller->who, sizeof(who->caller));
	else
		session_who(rc->cfg->bind, rc->caller->claims.subject, rc->caller->claims.client_id,
		    rc->caller->claims.tenant, who->caller);
	upcred_bind(u);
	return 0;
}

void
h_mcp(struct req_ctx *rc)
{
	struct mcp_thread *th = worker_mcp(rc->w);
	struct upcred cred;
	struct caller_whos who;
	int obtains = caller_cred(rc, &cred, &who) == 0;
	struct mcp_env env = {
		.session_key = gateway_session_key(rc->sh, rc->cfg), .tombstones = rc->sh->tombs,
		.catalog = rc->sh->catalog, .view = &th->cat, .callers = th->callers, .pool = th->ups, .pages = th->pages,
		.schemas = th->schemas,
		.sessions = th->sessions,
		.listeners = &rc->w->gw->listeners, .leases = rc->sh->leases,
		.listen_max = __atomic_load_n(&rc->w->gw->listen_max, __ATOMIC_ACQUIRE),
		.rs = worker_rstore(rc->w, rc->cfg), .shared_key = rc->cfg->shared_key,
		.metrics = rc->sh->metrics, .mailbox = rc->sh->mailbox, .loglevels = rc->sh->loglevels, .subs = rc->sh->subs,
		.cred = obtains ? &cred.cred : NULL, .own_cred = obtains ? &cred.own : NULL,
	};

	rc->slot[REQ_SLOT_MCP] = &env;
	if (rc->req->method == M_GET)
		mcp_listen(rc);
	else if (rc->req->method == M_DELETE)
		mcp_end_session(rc);
	else
		mcp_exchange(rc);
	rc->slot[REQ_SLOT_MCP] = NULL;
	if (obtains)
		upcred_clear(&cred);
}
