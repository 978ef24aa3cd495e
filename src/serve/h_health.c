/* h_health — GET /mcp/health. */
#include "autoconf.h"

#include "clock.h"
#include "handlers.h"

void
h_health(struct worker *w, const struct config *cfg, struct request *req,
    const struct caller *caller, struct response *resp)
{
	char ts[32], state[600];
	json_t *doc, *reasons = json_array();

	clock_rfc3339(req->now, ts, sizeof(ts));
	/* degraded: an upstream was left out of the catalog (its tools are missing), or
	 * this process does not have the host's shared state file (why, in reasons). */
	if (catalog_region_degraded(w->sh->catalog))
		json_array_append_new(reasons, json_string("an upstream is left out of the catalog"));
	gateway_state_degraded(w->sh, state, sizeof(state));
	if (state[0])
		json_array_append_new(reasons, json_string(state));
	doc = json_pack("{s:s, s:s, s:s, s:s}", "status", json_array_size(reasons) ? "degraded" : "ok",
	    "service", PACKAGE_NAME, "version", PACKAGE_VERSION, "timestamp", ts);
	if (doc && json_array_size(reasons))
		json_object_set(doc, "reasons", reasons);
	json_decref(reasons);
	response_set_json(resp, 200, doc);
	response_set_header(resp, "Cache-Control", "no-store");
}
