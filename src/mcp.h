/* mcp — POST /mcp: media type, body, JSON-RPC payload (one message or a batch), the
 * lifecycle and the method table. Federation (issue #5) and policy (#6) plug into the
 * table's handlers; sessions and 2026-07-28 (#4) into mcp_exchange. */
#ifndef GW_MCP_H
#define GW_MCP_H

#include "auth.h"
#include "config.h"
#include "request.h"
#include "response.h"

#define MCP_LATEST_VERSION	"2025-11-25"

/* 1 when v is a protocol revision this gateway speaks. */
int mcp_version_supported(const char *v);
/* The exchange after the gate (origin, size, token): fills resp. */
void mcp_exchange(const struct config *cfg, const struct caller *caller, struct request *req,
    struct response *resp);

#endif
