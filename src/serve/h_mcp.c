/* h_mcp — POST and DELETE /mcp. The router's gate has already checked the Origin,
 * the body size and the token. */
#include "autoconf.h"

#include "handlers.h"
#include "mcp.h"

void
h_mcp(struct req_ctx *rc)
{
	struct mcp_thread *th = worker_mcp(rc->w);
	struct mcp_env env = {
		.session_key = gateway_session_key(rc->sh, rc->cfg), .tombstones = rc->sh->tombs,
		.catalog = rc->sh->catalog, .view = &th->cat, .pool = th->ups, .pages = th->pages,
		.sessions = th->sessions,
		.listeners = &rc->w->gw->listeners,
		.listen_max = __atomic_load_n(&rc->w->gw->listen_max, __ATOMIC_ACQUIRE),
		.rs = worker_rstore(rc->w, rc->cfg), .shared_key = rc->cfg->shared_key,
		.metrics = rc->sh->metrics,
	};

	rc->slot[REQ_SLOT_MCP] = &env;
	if (rc->req->method == M_GET)
		mcp_listen(rc);
	else if (rc->req->method == M_DELETE)
		mcp_end_session(rc);
	else
		mcp_exchange(rc);
	rc->slot[REQ_SLOT_MCP] = NULL;
}
