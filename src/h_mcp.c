/* h_mcp — POST and DELETE /mcp. The router's gate has already checked the Origin,
 * the body size and the token; JSON-RPC dispatch arrives with issue #4. */
#include "autoconf.h"

#include "handlers.h"

void
h_mcp(struct worker *w, const struct config *cfg, struct request *req,
    const struct caller *caller, struct response *resp)
{
	response_set_error(resp, GW_EINTERNAL, "the MCP exchange is not enabled in this build");
}
