/* h_metrics — GET [metrics] path: the host's counters as Prometheus text, to the
 * addresses [metrics] allow names (the client as the ip limit sees it: REMOTE_ADDR, or
 * behind trusted-proxies the X-Forwarded-For client); any other gets 403. */
#include "autoconf.h"

#include "buf.h"
#include "clock.h"
#include "handlers.h"
#include "netaddr.h"
#include "pinning.h"

#define METRICS_TYPE	"text/plain; version=0.0.4; charset=utf-8"

/* What the pins hold pending, per upstream (pinning.h), from this worker's catalog: a
 * gauge per state. An upstream's name as a label value: \ and " escaped, and any byte
 * that is not printable ASCII as '?'. 0, or -1 when out is full. */
static int
pins_render(struct req_ctx *rc, struct buf *out)
{
	static const char *const states[4] = { "new", "changed", "held", "unclean" };
	struct pinning_counts c;
	char label[2 * 128 + 1];
	size_t i, j, o, n[4];
	const char *name;
	int k, bad = buf_puts(out, "# HELP mcpgate_pins_pending Tool, prompt and template definitions an "
	    "upstream lists that are not the approved ones, by what they are (mcpgate pins status).\n"
	    "# TYPE mcpgate_pins_pending gauge\n");

	for (i = 0; i < rc->cfg->n_upstreams && bad == 0; i++) {
		name = rc->cfg->upstreams[i].s.name;
		pinning_count(worker_mcp(rc->w)->cat.doc, name, &c);
		for (j = o = 0; name[j] && o + 3 < sizeof(label); j++) {
			if (name[j] == '\\' || name[j] == '"')
				label[o++] = '\\';
			label[o++] = name[j] >= 0x20 && name[j] < 0x7f ? name[j] : '?';
		}
		label[o] = '\0';
		n[0] = c.new, n[1] = c.changed, n[2] = c.held, n[3] = c.unclean;
		for (k = 0; k < 4 && bad == 0; k++)
			bad = buf_printf(out, "mcpgate_pins_pending{upstream=\"%s\",state=\"%s\"} %zu\n", label, states[k], n[k]);
	}
	return bad;
}

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
	    token_cache_count(rc->sh->tokens, now_ms)) < 0)) || pins_render(rc, &out) < 0)
		response_set_error(rc->resp, GW_EINTERNAL, "the metrics do not fit");
	else if (response_set_body(rc->resp, 200, METRICS_TYPE, buf_str(&out), out.len) < 0)
		response_set_error(rc->resp, GW_EINTERNAL, "out of memory");
	buf_free(&out);
}
