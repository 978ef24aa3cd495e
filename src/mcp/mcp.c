/* mcp — POST /mcp: the checks in the order of docs/ARCHITECTURE.md §6 (tenant, media
 * type, Accept, body, JSON-RPC envelope, era, session), the two eras (the revisions
 * negotiated by initialize, and 2026-07-28 with its per-request _meta and header
 * checks), batches under one deadline, and one way out (JSON, or an event stream). The
 * methods themselves are in mcp_methods.c. */
#include "autoconf.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "mcp_call.h"
#include "negotiate.h"

/* A batch element after the first is started only with this much of the request's time
 * left: the call before it may end a moment before the deadline (curl's clock is its
 * own), and one started with less could only time out. */
#define MCP_START_MIN_MS	20

/* A failure of the exchange: an HttpError for the revisions of initialize, the JSON-RPC
 * error body 2026-07-28 requires (echoing the id) for the stateless one. Steals data. */
static void
fail(const struct exchange *x, enum gw_err e, json_t *id, const char *why, json_t *data)
{
	const struct gw_err_info *info = err_info(e);

	if (x->modern && info->jsonrpc_code) {
		response_set_json(x->resp, info->status,
		    jsonrpc_error(id, info->jsonrpc_code, why ? why : info->message, data));
		return;
	}
	json_decref(data);
	response_set_error(x->resp, e, why);
}

/* --- 2026-07-28 ------------------------------------------------------------------ */

static const char *
meta_version(json_t *msg)
{
	json_t *meta = json_object_get(json_object_get(msg, "params"), "_meta");

	return json_string_value(json_object_get(meta, MCP_META_VERSION));
}

/* The era of a payload: 2026-07-28 when the header says so, or when a message's _meta
 * names a revision that initialize does not negotiate. */
static int
payload_is_modern(json_t *payload, const struct request *req)
{
	const char *v;
	json_t *item;
	size_t i;

	if (req->protocol_version && strcmp(req->protocol_version, MCP_MODERN_VERSION) == 0)
		return 1;
	if (json_is_object(payload))
		return (v = meta_version(payload)) != NULL && !mcp_version_legacy(v);
	json_array_foreach(payload, i, item)
		if ((v = meta_version(item)) != NULL && !mcp_version_legacy(v))
			return 1;
	return 0;
}

/* The checks 2026-07-28 adds to a request, in the conformance suite's order: _meta
 * (-32602), then headers against the body (-32020), then the version (-32022). */
static int
modern_checks(struct exchange *x, const struct jr_msg *m)
{
	const struct method *mm = method_find(m->method);
	json_t *meta = json_object_get(m->params, "_meta"), *data;
	const char *v = json_string_value(json_object_get(meta, MCP_META_VERSION)), *name;

	if (!json_is_object(m->params) || v == NULL || !json_is_object(json_object_get(meta, MCP_META_CAPS))) {
		fail(x, GW_EMETA, m->id, "params._meta must carry " MCP_META_VERSION
		    " and " MCP_META_CAPS, NULL);
		return -1;
	}
	if (!negotiate_header_matches(x->req->protocol_version, v)) {
		fail(x, GW_EHEADER, m->id, "MCP-Protocol-Version must equal _meta's protocol version", NULL);
		return -1;
	}
	if (!negotiate_header_matches(x->req->mcp_method, m->method)) {
		fail(x, GW_EHEADER, m->id, "Mcp-Method must equal the method", NULL);
		return -1;
	}
	if (mm && mm->name_param) {
		name = json_string_value(json_object_get(m->params, mm->name_param));
		if ((name || x->req->mcp_name) && !negotiate_header_matches(x->req->mcp_name, name)) {
			fail(x, GW_EHEADER, m->id, "Mcp-Name must equal the name the body calls", NULL);
			return -1;
		}
	}
	if (strcmp(v, MCP_MODERN_VERSION) != 0) {
		data = json_pack("{s:o, s:s}", "supported", mcp_versions_json(), "requested", v);
		fail(x, GW_EVERSION, m->id, "Unsupported protocol version", data);
		return -1;
	}
	if (!mcp_method_offered(x, mm)) {
		fail(x, GW_ENOMETHOD, m->id, "Method not found", NULL);
		return -1;
	}
	return 0;
}

/* An error 2026-07-28 answers with HTTP 400, the gateway's or an upstream's, relayed. */
static int
modern_error(json_t *out)
{
	json_int_t code = json_integer_value(json_object_get(json_object_get(out, "error"), "code"));

	return code == JSONRPC_HEADER_MISMATCH || code == JSONRPC_MISSING_CAPABILITY || code == JSONRPC_UNSUPPORTED_VERSION;
}

/* --- the exchange ------------------------------------------------------------------ */

/* One answer out: a JSON body, or an event on the stream. Steals msg. */
static void
answer(struct response *resp, int stream, json_t *msg)
{
	/* (once a relayed notification opened the stream, the answer follows it there) */
	if (resp->streamed || (stream && response_stream_open(resp) == 0)) {
		response_stream_message(resp, msg);
		json_decref(msg);
		return;
	}
	response_set_json(resp, 200, msg);
}

/* One batch element's line in the log: each is logged on its own. */
static void
log_element(const struct request *req, size_t i, const struct jr_msg *m, json_t *out)
{
	json_t *err = json_object_get(out, "error");

	log_json(GW_LOG_INFO, json_pack("{s:s, s:I, s:o, s:o}",
	    "request_id", req->id, "batch_index", (json_int_t)i,
	    "rpc_method", m && m->method ? log_string(m->method) : json_null(),
	    "rpc_error", err ? json_incref(json_object_get(err, "code")) : json_null()));
}

/* A JSON-RPC request counted by its method ([metrics]): a method of the table by its
 * row, any other as "other". */
static void
count_rpc(const struct exchange *x, const struct jr_msg *m)
{
	_Static_assert(METHOD_N < METRICS_METHODS, "a counter for each method of methods.def and for \"other\"");
	const struct method *mm;

	if (!x->cfg->metrics_on || m->kind != JR_REQUEST)
		return;
	if ((mm = method_find(m->method)) != NULL)
		metrics_rpc(x->env->metrics, (unsigned)mm->id, mm->name);
	else
		metrics_rpc(x->env->metrics, METHOD_N, "other");
}

/* The rate limits of the request's JSON-RPC request number nth (0: the first, whose
 * gateway and ip limits the router took). */
static int
element_limit(const struct exchange *x, size_t nth)
{
	if (x->lim == NULL)
		return LIMIT_PASS;
	return limiter_element(x->lim, nth == 0, clock_mono_us() * 1000);
}

/* A batch element a limit refused: its JSON-RPC error, the facts in data. */
static json_t *
limit_error(const struct exchange *x, json_t *id, int rc)
{
	struct gw_error err;

	limiter_error(x->lim, rc, &err);
	return jsonrpc_error(id, gw_error_rpc(&err), err.detail, limiter_data(x->lim, rc));
}

/* The elements run one after another under the request's one deadline: those not
 * started by then get an error, the answers already made are kept. A client that went
 * away ends the batch (its call in progress is abandoned by upstream_post.c). Each
 * request is dispatched as an element of its own; nothing of a call is relayed (relay()
 * in mcp_methods.c), whether the answers go as one JSON array or as events (stream). */
static void
exchange_batch(struct exchange *x, json_t *payload, int stream)
{
	struct response *resp = x->resp;
	json_t *out = stream ? NULL : json_array(), *id, *item, *r;
	struct gw_error invalid;
	struct jr_msg m;
	size_t i, n = 0, nreq = 0;
	int64_t now_us;
	int rc, valid;

	x->in_batch = 1;
	json_array_foreach(payload, i, item) {
		now_us = clock_mono_us();
		if (resp->sink && sink_gone(resp->sink, now_us)) {
			log_info(x->req->id, "the client went away: %zu of %zu batch elements not run",
			    json_array_size(payload) - i, json_array_size(payload));
			break;
		}
		r = NULL;
		valid = jsonrpc_validate(item, &m, &id, &invalid) == 0;
		if (valid)
			count_rpc(x, &m);
		if (!valid)
			r = mcp_error(id, GW_EINVALID, invalid.detail);
		else if (m.kind == JR_REQUEST && (now_us / 1000 >= x->until_ms ||
		    (i > 0 && now_us / 1000 + MCP_START_MIN_MS > x->until_ms)))
			r = mcp_error(m.id, GW_EINTERNAL, "Request timeout: the request's time "
			    "(request-timeout-ms) ran out before this element was started");
		else if (m.kind == JR_REQUEST && (rc = element_limit(x, nreq++)) != LIMIT_PASS)
			r = limit_error(x, m.id, rc);
		else if (m.kind == JR_REQUEST) {
			struct element el = { .x = x };

			r = mcp_dispatch(&el, &m);
		}
		log_element(x->req, i, &m, r);
		if (r == NULL)
			continue;
		n++;
		if (out)
			json_array_append_new(out, r);
		else
			answer(resp, 1, r);	/* each response as soon as it is made */
	}
	if (n == 0)
		response_set_empty(resp, 202);
	else if (out)
		response_set_json(resp, 200, out);
	if (n == 0)
		json_decref(out);
	if (x->lim && !resp->streamed)
		limiter_headers(x->lim, LIMIT_PASS, resp);
}

/* The HTTP side of the exchange, before any JSON: the caller's tenant, the media type,
 * Accept (*stream: the answer goes as an event stream; x->stream_ok: it may), and the
 * body, read into body. 0, or -1 with the response set. */
static int
exchange_begin(struct exchange *x, struct request *req, struct buf *body, int *stream)
{
	struct response *resp = x->resp;
	struct gw_error unread;
	unsigned types;

	if (!x->pc.off && x->pc.tenant == NULL) {
		response_set_error(resp, GW_ETENANT, NULL);
		return -1;
	}
	if (!negotiate_media_type_is(req->content_type, "application/json")) {
		response_set_error(resp, GW_EMEDIATYPE, NULL);
		return -1;
	}
	if ((types = negotiate_accept(req->accept)) == 0) {
		response_set_error(resp, GW_EBADREQUEST, "Accept must allow application/json or text/event-stream");
		return -1;
	}
	/* An event stream when the client takes nothing else (and, with federation, when
	 * the answer streams and the client takes it). */
	*stream = !(types & NEGOTIATE_JSON);
	x->stream_ok = (types & NEGOTIATE_SSE) != 0;
	if (request_read_body(req, (size_t)x->cfg->max_body, body, &unread) < 0) {
		response_set_error(resp, unread.code, unread.detail);
		return -1;
	}
	return 0;
}

/* A single request's answer, after the envelope checks: dispatched as the exchange's
 * one element, then written as JSON or an event stream (stream), spliced from cached
 * pages when it can be; the session issued at initialize, a 404 for a session an
 * upstream ended, the policy's 403. */
static void
exchange_one(struct exchange *x, const struct jr_msg *m, int stream)
{
	struct element el = { .x = x };
	const struct method *mm;
	struct response *resp = x->resp;
	json_t *out;

	if (x->modern && modern_checks(x, m) < 0)
		return;
	x->splice_ok = !stream;
	out = mcp_dispatch(&el, m);
	if (!x->modern && strcmp(m->method, "initialize") == 0 && json_object_get(out, "result"))
		mcp_issue_session(x, m->params, out);
	if (el.session_gone) {	/* the client starts over with initialize */
		json_decref(out);
		response_set_error(resp, GW_ESESSION, "an upstream ended this session; initialize again");
		return;
	}
	if (el.denied != GW_OK && !resp->streamed) {	/* the policy's 403, a limit's 429 */
		json_decref(out);
		if (el.limit_rc != LIMIT_PASS)
			limiter_answer(x->lim, el.limit_rc, x->modern, m->id, resp);
		else if (el.denied == GW_ESCOPE)
			auth_scope_challenge(x->cfg, x->req, resp, el.denied_scopes);
		else
			response_set_error(resp, el.denied, NULL);
		return;
	}
	if ((mm = method_find(m->method)) != NULL && (mm->flags & MF_PRIVATE) && !resp->streamed) {
		response_set_header(resp, "Cache-Control", "private");
		response_set_header(resp, "Vary", "Authorization");
	}
	if (el.splice && json_object_get(out, "result") && !resp->streamed)
		mcp_answer_spliced(&el, out);
	else if (x->modern && !resp->streamed && modern_error(out))
		response_set_json(resp, 400, out);
	else
		answer(resp, stream, out);
}

/* The revisions of initialize: the version header, if any, one of them, and the
 * session, if any, the caller's own and not ended: 0 (x->sess set then), or -1 answered. */
static int
legacy_gate(struct exchange *x, struct session *sess)
{
	const struct request *req = x->req;

	if (req->protocol_version && !mcp_version_supported(req->protocol_version)) {
		response_set_error(x->resp, GW_EBADREQUEST, "unsupported MCP-Protocol-Version");
		return -1;
	}
	if (mcp_check_session(x->rc, sess) < 0) {
		response_set_error(x->resp, GW_ESESSION, NULL);
		return -1;
	}
	if (req->session_id)
		x->sess = sess;
	return 0;
}

/* A message that is no request: a notification (a cancellation goes on to the
 * upstreams), or the answer to a request of ours (to the session that asked). 202. */
static void
exchange_notice(struct exchange *x, const struct jr_msg *m, json_t *payload)
{
	if (m->kind == JR_NOTIFICATION && strcmp(m->method, "notifications/cancelled") == 0)
		mcp_forward_cancel(x, m->params);
	else if (m->kind == JR_RESPONSE)
		mcp_forward_answer(x, payload);
	response_set_empty(x->resp, 202);
}

/* Each thread's cache of serialized list pages: a 200-tool page is about 45 kB. */
#define MCP_PAGE_CACHE_BYTES	(1u << 20)
#define MCP_PAGE_CACHE_ENTRIES	16

void *
mcp_thread_new(void)
{
	struct mcp_thread *th = calloc(1, sizeof(*th));

	if (th && ((th->ups = upstream_pool_new()) == NULL ||
	    (th->pages = fragcache_new(MCP_PAGE_CACHE_BYTES, MCP_PAGE_CACHE_ENTRIES)) == NULL ||
	    (th->sessions = session_memo_new()) == NULL || (th->callers = catalog_callers_new()) == NULL ||
	    (th->schemas = schemas_new()) == NULL)) {
		mcp_thread_free(th);
		th = NULL;
	}
	return th;
}

void
mcp_thread_end(void *p, const struct config *cfg)
{
	struct mcp_thread *th = p;

	upstream_pool_end(th->ups, cfg);
}

void
mcp_thread_free(void *p)
{
	struct mcp_thread *th = p;

	if (th == NULL)
		return;
	upstream_pool_free(th->ups);
	fragcache_free(th->pages);
	session_memo_free(th->sessions);
	catalog_view_free(&th->cat);
	catalog_callers_free(th->callers);
	schemas_free(th->schemas);
	free(th);
}

/* Long: the exchange's gates in the specification's order (body, JSON-RPC, era,
 * limits, session), then a batch, a notice or a request, with one cleanup. */
void
mcp_exchange(struct req_ctx *rc)
{
	const struct config *cfg = rc->cfg;
	struct request *req = rc->req;
	struct response *resp = rc->resp;
	struct exchange x = { .rc = rc, .env = rc->slot[REQ_SLOT_MCP], .cfg = cfg, .caller = rc->caller,
		.req = req, .resp = resp, .lim = rc->lim, .vis_kind = -1 };
	struct session sess = { "", "", 0, NULL, 0 };
	struct gw_error invalid;
	struct jr_msg m = { 0 };	/* jsonrpc_validate fills it (another file: the analyzer cannot see) */
	struct buf body;
	json_t *payload = NULL, *id;
	int stream, limit_rc;

	buf_init(&body, (size_t)cfg->max_body);
	response_set_header(resp, "Cache-Control", "no-store");
	policy_caller_init(&x.pc, cfg, &x.caller->claims);
	policy_profile(&x.pc, x.profile);
	if (exchange_begin(&x, req, &body, &stream) < 0)
		goto out;
	/* The exchange begins: every upstream call of the request ends by this. */
	x.until_ms = clock_mono_us() / 1000 + cfg->request_timeout_ms;
	x.modern = req->protocol_version && strcmp(req->protocol_version, MCP_MODERN_VERSION) == 0;
	if ((payload = jsonrpc_parse(buf_str(&body), body.len, &invalid)) == NULL) {
		fail(&x, invalid.code, NULL, invalid.detail, NULL);
		goto out;
	}
	assert(json_is_object(payload) || json_is_array(payload));	/* jsonrpc_parse's */
	x.modern = payload_is_modern(payload, req);
	if (x.modern && json_is_array(payload)) {
		fail(&x, GW_EINVALID, NULL, "2026-07-28 has no batches", NULL);
		goto out;
	}
	if (json_is_object(payload) && jsonrpc_validate(payload, &m, &id, &invalid) < 0) {
		fail(&x, invalid.code, id, invalid.detail, NULL);
		goto out;
	}
	if (json_is_object(payload))
		count_rpc(&x, &m);
	if (json_is_object(payload) && (limit_rc = element_limit(&x, 0)) != LIMIT_PASS) {
		limiter_answer(x.lim, limit_rc, x.modern, m.id, resp);
		goto out;
	}
	if (x.lim)
		limiter_headers(x.lim, LIMIT_PASS, resp);
	if (!x.modern && legacy_gate(&x, &sess) < 0)
		goto out;
	if (json_is_array(payload)) {
		if (json_array_size(payload) > (size_t)cfg->max_batch)
			response_set_error(resp, GW_EINVALID, "batch larger than max-batch");
		else
			exchange_batch(&x, payload, stream);
		goto out;
	}
	if (m.kind != JR_REQUEST)
		exchange_notice(&x, &m, payload);
	else
		exchange_one(&x, &m, stream);
out:
	free(x.vis);
	json_decref(x.doc);
	session_clear(&sess);
	json_decref(payload);
	buf_free(&body);
}
