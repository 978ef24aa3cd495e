/* err — the one error enum, mapped once to HTTP status, JSON-RPC code and text. */
#ifndef GW_ERR_H
#define GW_ERR_H

enum gw_err {
	GW_OK = 0,
	GW_ENOTFOUND = 1,	/* no such route */
	GW_EMETHOD,		/* route exists, method not allowed */
	GW_ETOOLARGE,		/* body over max-body */
	GW_ENOTOKEN,		/* no credentials */
	GW_EBADTOKEN,		/* credentials rejected */
	GW_EORIGIN,		/* Origin not allowed */
	GW_EMEDIATYPE,		/* Content-Type not application/json */
	GW_EPARSE,		/* body is not JSON */
	GW_EINVALID,		/* not a valid JSON-RPC envelope */
	GW_EBADREQUEST,		/* other malformed HTTP request */
	GW_EASMETA,		/* authorization-server metadata unavailable */
	GW_EAUTHSERVER,		/* introspection failed: the authorization server is unreachable or broken */
	GW_ESCOPE,		/* token lacks a required scope */
	GW_ESESSION,		/* Mcp-Session-Id unknown, ended, expired, altered or another caller's */
	GW_EMETA,		/* 2026-07-28: params._meta lacks the protocol version or client capabilities */
	GW_EHEADER,		/* 2026-07-28: an MCP header is missing or does not match the body */
	GW_EVERSION,		/* 2026-07-28: the requested protocol version is not spoken here */
	GW_ENOMETHOD,		/* 2026-07-28: no such method (or one the revision removed) */
	GW_EINTERNAL,		/* gateway fault */
	GW_ECONFIG,		/* no usable configuration */
	GW_EUPSTREAM,		/* an upstream MCP server is down, slow, broken or over the caps */
	GW_ETENANT,		/* policy: the caller's tenant is not configured */
	GW_EGROUP,		/* policy: no group of the caller's holds the tool */
	GW_EFEATURE,		/* policy: the tool's group needs a feature the tenant lacks */
	GW_EDENIED,		/* policy: a deny (or allow) rule of the tenant */
	GW_EREADONLY,		/* policy: the tenant is read-only and the tool is not */
	/* JSON-RPC errors of one request (answered inside a 200, or per batch element). */
	GW_EPARAMS,		/* the method's params are not what it takes */
	GW_ENORESOURCE,		/* resources/read of a URI no upstream serves */
	GW_EREFUSED,		/* the policy refused one element of a batch (a single request: 403) */
	GW_ERATELIMIT,		/* a rate limit was exceeded */
	GW_ELIMITSTORE,		/* the rate-limit buckets cannot be read now: fail closed */
	GW_EDPOP,		/* a DPoP proof missing, malformed, stale, replayed or not the token's */
	GW_EREPLAY,		/* whether a DPoP proof was seen cannot be told now: fail closed */
	GW_EADDRESS,		/* the client's address may not use this endpoint ([metrics] allow) */
	/* One call to an upstream failed for reasons of its own: its request or its answer
	 * over the caps, or its time ran out. The upstream may be well (it is not marked
	 * down for it: a caller chooses its calls). */
	GW_ECALL,
	/* A user-oauth upstream the person has not connected (or whose connection was
	 * dropped): the detail is that upstream's name alone (connected.h). */
	GW_ECONNECT,
	GW_ERR_MAX
};

struct gw_err_info {
	int status;		/* HTTP status */
	int jsonrpc_code;	/* 0 when not a JSON-RPC level error */
	const char *error;	/* HttpError.error, machine-readable */
	const char *message;	/* HttpError.message, for people */
};

const struct gw_err_info *err_info(enum gw_err e);

/* Caller-owned detail of a failure: the one error channel of every layer (HTTP,
 * JSON-RPC, upstream calls). rpc is set only for a JSON-RPC error passed on as it came
 * (an upstream's own code); otherwise the table's code holds. */
#define GW_ERROR_DETAIL	320	/* the words of a failure, with their NUL: at most this */

struct gw_error {
	enum gw_err code;
	int rpc;		/* 0 = err_info(code)->jsonrpc_code */
	char detail[GW_ERROR_DETAIL];	/* for people; "" = the table's message */
};

/* Sets code and detail (rpc back to 0). */
void gw_error_set(struct gw_error *e, enum gw_err code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The JSON-RPC error code of e. */
int gw_error_rpc(const struct gw_error *e);

#endif
