/* err — the error table. */
#include "autoconf.h"

#include <stdarg.h>
#include <stdio.h>

#include "err.h"

static const struct gw_err_info err_table[GW_ERR_MAX] = {
	[GW_OK]		= { 200, 0, "ok", "OK" },
	[GW_ENOTFOUND]	= { 404, 0, "not_found", "No such endpoint" },
	[GW_EMETHOD]	= { 405, 0, "method_not_allowed", "Method not allowed on this endpoint" },
	[GW_ETOOLARGE]	= { 413, 0, "payload_too_large", "Request body too large" },
	[GW_ENOTOKEN]	= { 401, 0, "unauthorized", "An OAuth bearer token is required" },
	[GW_EBADTOKEN]	= { 401, 0, "invalid_token", "The access token was not accepted" },
	[GW_EORIGIN]	= { 403, 0, "forbidden_origin", "Origin not allowed" },
	[GW_EMEDIATYPE]	= { 400, 0, "invalid_request", "Content-Type must be application/json" },
	[GW_EPARSE]	= { 400, -32700, "invalid_request", "Parse error" },
	[GW_EINVALID]	= { 400, -32600, "invalid_request", "Invalid JSON-RPC request" },
	[GW_EBADREQUEST] = { 400, 0, "invalid_request", "Malformed request" },
	[GW_EASMETA]	= { 500, 0, "temporarily_unavailable", "Authorization server metadata is not available" },
	[GW_EAUTHSERVER] = { 500, 0, "temporarily_unavailable", "The authorization server could not verify the token; retry later" },
	[GW_ESCOPE]	= { 403, 0, "insufficient_scope", "The access token lacks a required scope" },
	[GW_ESESSION]	= { 404, -32001, "session_not_found", "Session not found or ended" },
	[GW_EMETA]	= { 400, -32602, "invalid_request", "params._meta must carry the protocol version and client capabilities" },
	[GW_EHEADER]	= { 400, -32020, "invalid_request", "An MCP header is missing or does not match the body" },
	[GW_EVERSION]	= { 400, -32022, "unsupported_protocol_version", "Unsupported protocol version" },
	[GW_ENOMETHOD]	= { 404, -32601, "method_not_found", "Method not found" },
	[GW_EINTERNAL]	= { 500, -32603, "server_error", "Internal gateway error" },
	[GW_ECONFIG]	= { 500, -32603, "server_error", "Gateway configuration is not usable" },
	[GW_EUPSTREAM]	= { 502, -32603, "upstream_error", "An upstream MCP server failed" },
	[GW_ETENANT]	= { 403, 0, "tenant_forbidden", "The caller's tenant has no access to this gateway" },
	[GW_EGROUP]	= { 403, 0, "group_forbidden", "The caller is in no group that holds this tool" },
	[GW_EFEATURE]	= { 403, 0, "feature_disabled", "The tool's feature is not enabled for the caller's tenant" },
	[GW_EDENIED]	= { 403, 0, "tool_denied", "A rule of the caller's tenant denies this tool" },
	[GW_EREADONLY]	= { 403, 0, "read_only_mode", "The caller's tenant is read-only and this tool is not" },
	[GW_EPARAMS]	= { 400, -32602, "invalid_params", "Invalid params" },
	[GW_ENORESOURCE] = { 404, -32002, "resource_not_found", "Resource not found" },
	[GW_EREFUSED]	= { 403, -32003, "forbidden", "Forbidden" },
	[GW_ERATELIMIT]	= { 429, -32029, "rate_limited", "Rate limit exceeded" },
	[GW_ELIMITSTORE] = { 503, -32603, "temporarily_unavailable", "Rate limits cannot be decided now; retry later" },
	[GW_EDPOP]	= { 401, 0, "invalid_dpop_proof", "The DPoP proof was not accepted" },
	[GW_EREPLAY]	= { 503, 0, "temporarily_unavailable", "A DPoP proof cannot be checked for replay now; retry later" },
	[GW_EADDRESS]	= { 403, 0, "forbidden_address", "The client's address may not read this" },
	[GW_ECALL]	= { 502, -32603, "upstream_error", "A call to an upstream MCP server was too large or too slow" },
	[GW_ECONNECT]	= { 403, -32042, "connect_required", "The upstream needs your own account there connected" },
};

const struct gw_err_info *
err_info(enum gw_err e)
{
	if ((int)e < 0 || e >= GW_ERR_MAX)
		e = GW_EINTERNAL;
	return &err_table[e];
}

void
gw_error_set(struct gw_error *e, enum gw_err code, const char *fmt, ...)
{
	va_list ap;

	e->code = code;
	e->rpc = 0;
	va_start(ap, fmt);
	vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
	va_end(ap);
}

int
gw_error_rpc(const struct gw_error *e)
{
	return e->rpc ? e->rpc : err_info(e->code)->jsonrpc_code;
}
