/* h_mcp — POST and DELETE /mcp. The router's gate has already checked the Origin,
 * the body size and the token. */
#include "autoconf.h"

#include "handlers.h"
#include "mcp.h"

void
h_mcp(struct worker *w, const struct config *cfg, struct request *req,
    const struct caller *caller, struct response *resp)
{
	struct mcp_env env = {
		.session_key = gateway_session_key(w->sh, cfg), .tombstones = w->sh->tombs,
		.catalog = w->sh->catalog, .view = &w->cat, .pool = w->ups, .pages = w->pages,
		.sessions = w->sessions,
		.listeners = &w->gw->listeners,
		.listen_max = __atomic_load_n(&w->gw->listen_max, __ATOMIC_ACQUIRE),
		.lim = w->lim,
		.rs = worker_rstore(w, cfg), .shared_key = cfg->shared_key, .cfg = cfg,
		.metrics = w->sh->metrics,
	};

	if (req->method == M_GET)
		mcp_listen(&env, cfg, caller, req, resp);
	else if (req->method == M_DELETE)
		mcp_end_session(&env, cfg, caller, req, resp);
	else
		mcp_exchange(&env, cfg, caller, req, resp);
}
