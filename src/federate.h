/* federate — the requests the gateway passes on to an upstream: which upstream a
 * tools/call, prompts/get, resources/read, completion/complete or logging/setLevel
 * belongs to (by exposed name, by URI or URI template, by completion reference, or all
 * that offer it), the name it has there, and the upstream's answer or a JSON-RPC error
 * a caller may read (what happened, never where). Also the capabilities the gateway
 * offers: the union of what its upstreams offer and it can relay. */
#ifndef GW_FEDERATE_H
#define GW_FEDERATE_H

#include <jansson.h>
#include <stdint.h>

#include "config.h"
#include "upstream.h"

struct fed_call {
	const struct config *cfg;
	struct upstream_pool *pool;
	json_t *doc;			/* the catalog (catalog.h) */
	upstream_msg_fn *on_msg;	/* what the upstream sends before its answer */
	void *ctx;
	int64_t now_ms;			/* monotonic */
	/* Out, when the request fails. */
	int code;
	char why[256];
};

/* 1 when method is one the gateway passes on (fed_request). */
int fed_relays(const char *method);
/* The result of method with params (borrowed) from the upstream it belongs to: a new
 * reference, or NULL with f->code and f->why. */
json_t *fed_request(struct fed_call *f, const char *method, json_t *params);
/* 0 when method needs a capability (resources, prompts, completions, logging) no
 * upstream of doc offers: the gateway then answers it as an unknown method. */
int fed_offers(json_t *doc, const char *method);
/* The capabilities to announce for the catalog doc: a new object. */
json_t *fed_capabilities(json_t *doc);
/* 1 when uri is an expansion of the RFC 6570 template tmpl (levels 1-3 operators;
 * values may not contain the characters that end their expression). */
int fed_uri_matches(const char *tmpl, const char *uri);

#endif
