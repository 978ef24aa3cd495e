/* h_health — GET /mcp/health. */
#include "autoconf.h"

#include "clock.h"
#include "handlers.h"

void
h_health(struct worker *w, const struct config *cfg, struct request *req,
    const struct caller *caller, struct response *resp)
{
	char ts[32];

	clock_rfc3339(req->now, ts, sizeof(ts));
	/* degraded: an upstream was left out of the catalog (its tools are missing). */
	response_set_json(resp, 200, json_pack("{s:s, s:s, s:s, s:s}",
	    "status", catalog_region_degraded(w->gw->catalog) ? "degraded" : "ok", "service", PACKAGE_NAME, "version", PACKAGE_VERSION, "timestamp", ts));
	response_set_header(resp, "Cache-Control", "no-store");
}
