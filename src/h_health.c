/* h_health — GET /mcp/health. */
#include "autoconf.h"

#include "clock.h"
#include "handlers.h"

void
h_health(struct gateway *gw, const struct config *cfg, struct request *req, struct response *resp)
{
	char ts[32];

	clock_rfc3339(req->now, ts, sizeof(ts));
	response_set_json(resp, 200, json_pack("{s:s, s:s, s:s, s:s}",
	    "status", "ok", "service", PACKAGE_NAME, "version", PACKAGE_VERSION, "timestamp", ts));
	response_set_header(resp, "Cache-Control", "no-store");
}
