/* h_mcp — POST and DELETE /mcp. The router's gate has already checked the Origin,
 * the body size and the token. */
#include "autoconf.h"

#include "handlers.h"
#include "mcp.h"

void
h_mcp(struct req_ctx *rc)
{
	struct mcp_env env = {
		.session_key = gateway_session_key(rc->sh, rc->cfg), .tombstones = rc->sh->tombs,
		.catalog = rc->sh->catalog, .view = &rc->w->cat, .pool = rc->w->ups, .pages = rc->w->pages,
		.sessions = rc->w->sessions,
		.listeners = &rc->w->gw->listeners,
		.listen_max = __atomic_load_n(&rc->w->gw->listen_max, __ATOMIC_ACQUIRE),
		.lim = rc->lim,
		.rs = worker_rstore(rc->w, rc->cfg), .shared_key = rc->cfg->shared_key, .cfg = rc->cfg,
		.metrics = rc->sh->metrics,
	};

	if (rc->req->method == M_GET)
		mcp_listen(&env, rc->cfg, rc->caller, rc->req, rc->resp);
	else if (rc->req->method == M_DELETE)
		mcp_end_session(&env, rc->cfg, rc->caller, rc->req, rc->resp);
	else
		mcp_exchange(&env, rc->cfg, rc->caller, rc->req, rc->resp);
}
