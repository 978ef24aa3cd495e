/* h_mcp — POST /mcp. The router's gate has already checked the Origin, the body size
 * and the token. */
#include "autoconf.h"

#include "handlers.h"
#include "mcp.h"

void
h_mcp(struct worker *w, const struct config *cfg, struct request *req,
    const struct caller *caller, struct response *resp)
{
	mcp_exchange(cfg, caller, req, resp);
}
