/* jsonrpc — JSON-RPC 2.0 envelopes exactly as the published API (www/openapi.json)
 * describes them, and builders. */
#ifndef GW_JSONRPC_H
#define GW_JSONRPC_H

#include <jansson.h>

#include "err.h"

#define JSONRPC_PARSE_ERROR	-32700
#define JSONRPC_INVALID_REQUEST	-32600
#define JSONRPC_METHOD_NOT_FOUND -32601
#define JSONRPC_INVALID_PARAMS	-32602
#define JSONRPC_INTERNAL_ERROR	-32603
/* 2026-07-28's own, answered with HTTP 400: a header that does not match the body, a
 * client capability the request needs and the client did not declare, a protocol
 * version not spoken. */
#define JSONRPC_HEADER_MISMATCH	-32020
#define JSONRPC_MISSING_CAPABILITY -32021
#define JSONRPC_UNSUPPORTED_VERSION -32022

enum jr_kind {
	JR_REQUEST = 1,		/* method + id */
	JR_NOTIFICATION,	/* method, no id */
	JR_RESPONSE,		/* result or error: an answer to a server-to-client request */
};

struct jr_msg {
	enum jr_kind kind;
	json_t *id;		/* borrowed; NULL for notifications */
	const char *method;	/* borrowed */
	json_t *params;		/* borrowed; NULL when absent */
};

/* Validates one message. *id is set to the message's id when it could be read
 * (borrowed), else NULL. 0, or -1 with err (GW_EINVALID, what is wrong). */
int jsonrpc_validate(json_t *m, struct jr_msg *out, json_t **id, struct gw_error *err);
/* Parses a body: a message or a non-empty array. NULL with err on failure: GW_EPARSE
 * (-32700) or GW_EINVALID (-32600), and what is wrong. Duplicate member names are
 * GW_EINVALID. */
json_t *jsonrpc_parse(const char *body, size_t len, struct gw_error *err);

json_t *jsonrpc_result(json_t *id, json_t *result);	/* steals result; id borrowed (may be NULL) */
json_t *jsonrpc_error(json_t *id, int code, const char *message, json_t *data);	/* steals data */

#endif
