/* h_metrics — GET [metrics] path: the host's counters as Prometheus text, to the
 * addresses [metrics] allow names (the client as the ip limit sees it: REMOTE_ADDR, or
 * behind trusted-proxies the X-Forwarded-For client); any other gets 403. */
#include "autoconf.h"

#include "buf.h"
#include "clock.h"
#include "handlers.h"
#include "netaddr.h"

#define METRICS_TYPE	"text/plain; version=0.0.4; charset=utf-8"

void
h_metrics(struct req_ctx *rc)
{
	struct netaddr client;
	struct buf out;
	int64_t now_ms = clock_wall_ms();

	response_set_header(rc->resp, "Cache-Control", "no-store");
	if (rc->req->remote_addr == NULL ||
	    netaddr_client(rc->req->remote_addr, rc->req->forwarded_for, rc->cfg->trusted, rc->cfg->n_trusted, &client) < 0 ||
	    !netaddr_in(&client, rc->cfg->metrics_from, rc->cfg->n_metrics_from)) {
		response_set_error(rc->resp, GW_EADDRESS, "this address is not in [metrics] allow");
		return;
	}
	buf_init(&out, METRICS_RENDER_MAX);
	if (metrics_render(rc->sh->metrics, now_ms / 1000, &out) < 0 ||
	    (rc->sh->tokens && (buf_printf(&out, "# HELP mcpgate_token_cache_entries Entries of the host's token "
	    "cache in use (accepted and refused tokens, introspections under way).\n# TYPE "
	    "mcpgate_token_cache_entries gauge\nmcpgate_token_cache_entries %zu\n",
	    token_cache_count(rc->sh->tokens, now_ms)) < 0)))
		response_set_error(rc->resp, GW_EINTERNAL, "the metrics do not fit");
	else if (response_set_body(rc->resp, 200, METRICS_TYPE, buf_str(&out), out.len) < 0)
		response_set_error(rc->resp, GW_EINTERNAL, "out of memory");
	buf_free(&out);
}
