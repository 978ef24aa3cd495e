/* upstream_post — one POST (or DELETE) of one JSON-RPC message to an upstream, driven
 * by curl_multi_perform/poll rather than curl_easy_perform so that, once our answer
 * has come on an event stream, the upstream gets UPSTREAM_END_GRACE_MS to end the
 * stream (then the connection is kept) before the transfer is dropped: a server that
 * keeps the stream open costs a little time, never a hang. The answer is read as JSON
 * or as an event stream, whose other messages go to the call's on_msg. Nothing the
 * upstream sends is trusted: ids, types, sizes and header values are checked; reasons
 * never quote its bodies. */
#include "autoconf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "clock.h"
#include "httpc.h"
#include "jsonrpc.h"
#include "jsonw.h"
#include "log.h"
#include "negotiate.h"
#include "secret.h"
#include "sse.h"
#include "upstream_pool.h"
#include "url.h"

#define DISCARD_MAX	(64 * 1024)	/* body of an error or a 202 read so the connection stays */

enum body_kind { BODY_NONE, BODY_JSON, BODY_SSE, BODY_DISCARD };

/* The state of one transfer, shared by the curl callbacks. */
struct xfer {
	struct upstream_pool *p;
	struct up_conn *c;
	const struct upstream_call *call;
	struct post *q;
	CURL *h;
	int started;		/* the body began: status and type are known */
	enum body_kind kind;
	char ctype[96];
	struct buf body;	/* a JSON answer */
	struct sse_parser sse;
	int sse_on;
	size_t discarded;
	json_t *response;	/* ours, once it came */
	int64_t done_us;
	int64_t left_ms;	/* the time the transfer had when it began */
	int finished;		/* run(): curl completed it, */
	CURLcode rc;		/* with this */
	char fail[200];		/* why we stopped reading; "" = we did not */
	enum gw_err fail_code;	/* and whose fault it is: GW_EUPSTREAM, or GW_ECALL (this answer's) */
	char errbuf[CURL_ERROR_SIZE];
};

static void
set_fail(struct xfer *x, enum gw_err code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Why the transfer stops: code GW_EUPSTREAM when the upstream is at fault, GW_ECALL
 * when this one answer is (over the caps: another call may be well). */
static void
set_fail(struct xfer *x, enum gw_err code, const char *fmt, ...)
{
	va_list ap;

	if (x->fail[0])
		return;	/* the first reason is the one */
	x->fail_code = code;
	va_start(ap, fmt);
	vsnprintf(x->fail, sizeof(x->fail), fmt, ap);
	va_end(ap);
}

/* An Mcp-Session-Id we can send back: 1 to UPSTREAM_MAX_SESSION_ID visible ASCII. */
int
upstream_session_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > UPSTREAM_MAX_SESSION_ID)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
			return 0;
	return 1;
}

/* "Name: value" of one header line, the value without blanks around it. */
int
upstream_header_value(const char *line, size_t len, const char *name, const char **v, size_t *vlen)
{
	size_t nl = strlen(name);

	if (len <= nl || line[nl] != ':' || strncasecmp(line, name, nl) != 0)
		return 0;
	line += nl + 1;
	len -= nl + 1;
	while (len && (*line == ' ' || *line == '\t')) {
		line++;
		len--;
	}
	while (len && (line[len - 1] == '\r' || line[len - 1] == '\n' || line[len - 1] == ' ' ||
	    line[len - 1] == '\t'))
		len--;
	*v = line;
	*vlen = len;
	return 1;
}

static size_t
on_header(char *p, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * n, vlen;
	const char *v;

	if (len >= 5 && memcmp(p, "HTTP/", 5) == 0) {	/* a new answer (after a 1xx): start over */
		x->ctype[0] = '\0';
		x->q->session_got[0] = '\0';
		x->q->session_bad = 0;
	} else if (upstream_header_value(p, len, "content-type", &v, &vlen)) {
		if (vlen >= sizeof(x->ctype))
			vlen = sizeof(x->ctype) - 1;
		memcpy(x->ctype, v, vlen);
		x->ctype[vlen] = '\0';
	} else if (upstream_header_value(p, len, "mcp-session-id", &v, &vlen)) {
		x->q->session_bad = !upstream_session_ok(v, vlen);
		if (!x->q->session_bad) {
			memcpy(x->q->session_got, v, vlen);
			x->q->session_got[vlen] = '\0';
		}
	}
	return len;
}

/* The media type of a Content-Type is want (parameters aside). */
int
upstream_media_is(const char *ctype, const char *want)
{
	size_t n = strlen(want);

	return strncasecmp(ctype, want, n) == 0 &&
	    (ctype[n] == '\0' || ctype[n] == ';' || ctype[n] == ' ' || ctype[n] == '\t');
}

/* The Content-Type's media type, fit for a log line. */
static const char *
media_for_log(const char *ctype, char *out, size_t n)
{
	size_t i;

	if (ctype[0] == '\0')
		return "(none)";
	for (i = 0; i + 1 < n && i < 64 && ctype[i] && ctype[i] != ';'; i++)
		out[i] = ctype[i] > 0x20 && ctype[i] < 0x7f ? ctype[i] : '?';
	out[i] = '\0';
	return out;
}

/* A JSON-RPC response to id: that id, and exactly one of an object result or error. */
static int
is_answer(json_t *m, json_t *id)
{
	json_t *r = json_object_get(m, "result"), *e = json_object_get(m, "error");

	return id != NULL && json_equal(json_object_get(m, "id"), id) && (r == NULL) != (e == NULL) &&
	    json_is_object(r ? r : e);
}

int
upstream_is_jsonrpc(json_t *m)
{
	const char *v = json_string_value(json_object_get(m, "jsonrpc"));

	return json_is_object(m) && v != NULL && strcmp(v, "2.0") == 0;
}

/* Answers a request the upstream made with an error, on the side handle (a transfer
 * of ours is still running), at most a second. */
void
upstream_decline(struct upstream_pool *p, const struct upstream_call *call, const char *session,
    const char *version, json_t *req)
{
	struct up_conn *c;
	struct gw_error err;
	struct post q;
	json_t *ans = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", json_object_get(req, "id"),
	    "error", "code", JSONRPC_METHOD_NOT_FOUND,
	    "message", "The gateway's caller cannot take this request");

	if (ans == NULL || (c = upstream_conn(p, call->up)) == NULL) {
		json_decref(ans);
		return;
	}
	memset(&q, 0, sizeof(q));
	q.raw = ans;
	q.side = 1;
	q.session = session;
	q.version = version;
	q.deadline_ms = clock_mono_us() / 1000 + 1000;
	if (upstream_post(p, c, call, &q, NULL, &err) < 0)
		log_msg(GW_LOG_INFO, NULL, "%s (declining %s)", err.detail,
		    json_string_value(json_object_get(req, "method")));
	json_decref(ans);
}

/* One message of an event stream: ours ends the call, requests and notifications go to
 * on_msg, anything else is a protocol failure. 0 to go on, -1 to stop. */
static int
take_one(struct xfer *x, json_t *m)
{
	const struct upstream_call *call = x->call;

	if (x->response)
		return 0;	/* nothing is relayed after the answer */
	if (!upstream_is_jsonrpc(m)) {
		set_fail(x, GW_EUPSTREAM, "an event that is not a JSON-RPC message");
		return -1;
	}
	if (json_is_string(json_object_get(m, "method"))) {
		int r = x->q->relay && call->on_msg ? call->on_msg(call->ctx, m) : UPSTREAM_DECLINE;

		if (r < 0) {
			x->q->abandoned = 1;
			set_fail(x, GW_EUPSTREAM, "%s", call->client && call->client->failed ? "call abandoned: the caller went away" :
			    "call abandoned");
			return -1;
		}
		/* A request nobody relays would hold the call until its timeout: refuse it. */
		if (r == UPSTREAM_DECLINE && json_object_get(m, "id"))
			upstream_decline(x->p, call, x->q->session, x->q->version, m);
		return 0;
	}
	if (!is_answer(m, x->q->id)) {
		set_fail(x, GW_EUPSTREAM, "a message that is not the answer to our request");
		return -1;
	}
	x->response = json_incref(m);
	x->done_us = clock_mono_us();
	return 0;
}

static int
on_event(void *ctx, const struct sse_event *ev)
{
	struct xfer *x = ctx;
	json_error_t jerr;
	json_t *msg;
	size_t i;
	int rc = 0;

	if (x->response || ev->data_len == 0 || strcmp(ev->event, "message") != 0)
		return 0;	/* after our answer; a priming event; an event type that is not ours */
	if ((msg = json_loadb(ev->data, ev->data_len, JSON_REJECT_DUPLICATES, &jerr)) == NULL) {
		set_fail(x, GW_EUPSTREAM, "an event that is not JSON");
		return -1;
	}
	if (json_is_array(msg)) {	/* a batch, as 2025-03-26 allows */
		if (json_array_size(msg) == 0) {
			set_fail(x, GW_EUPSTREAM, "an event that is not a JSON-RPC message");
			rc = -1;
		}
		for (i = 0; rc == 0 && i < json_array_size(msg); i++)
			rc = take_one(x, json_array_get(msg, i));
	} else
		rc = take_one(x, msg);
	json_decref(msg);
	return rc;
}

/* A status that 2026-07-28 answers a JSON-RPC error with (the header, capability and
 * version errors: 400; an unknown method: 404): its body is read as the answer. */
static int
error_answer(const struct post *q)
{
	return q->modern && (q->status == 400 || q->status == 404);
}

/* The most an answer of x's upstream may be: its max-result (a configuration that did
 * not come from a file, as in tests, has none: the ceiling). */
static size_t
max_of(const struct xfer *x)
{
	return x->call->up->max_result > 0 ? (size_t)x->call->up->max_result : UPSTREAM_MAX_RESPONSE;
}

/* An answer (what) larger than that: refused while it comes. */
static void
over_max(struct xfer *x, const char *what)
{
	set_fail(x, GW_ECALL, "%s over its max-result of %zu bytes", what, max_of(x));
}

static size_t
on_body(char *p, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * n;
	enum sse_status st;
	char media[80];
	size_t max = max_of(x);

	if (!x->started) {
		x->started = 1;
		curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &x->q->status);
		if ((x->q->status != 200 && !error_answer(x->q)) || x->q->id == NULL)
			x->kind = BODY_DISCARD;	/* judged by its status */
		else if (upstream_media_is(x->ctype, "application/json")) {
			curl_off_t cl = -1;

			x->kind = BODY_JSON;
			curl_easy_getinfo(x->h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
			if (cl > (curl_off_t)max) {	/* announced: no need to read it first */
				over_max(x, "an answer");
				return 0;
			}
		}
		else if (upstream_media_is(x->ctype, "text/event-stream")) {
			x->kind = BODY_SSE;
			sse_parser_init(&x->sse, max + UPSTREAM_LINE_SLACK, max, on_event, x);
			x->sse_on = 1;
		} else {
			set_fail(x, GW_EUPSTREAM, "an answer of type %s", media_for_log(x->ctype, media, sizeof(media)));
			return 0;
		}
	}
	if (x->response || x->kind == BODY_DISCARD) {	/* read on, a little, for the connection */
		x->discarded += len;
		return x->discarded > DISCARD_MAX ? 0 : len;
	}
	if (x->kind == BODY_JSON) {
		if (x->body.len + len > max || buf_append(&x->body, p, len) < 0) {
			over_max(x, "an answer");
			return 0;
		}
		return len;
	}
	st = sse_parser_feed(&x->sse, p, len);
	if (st == SSE_OK)
		return len;
	if (st == SSE_ELINE)
		over_max(x, "an event-stream line");
	else if (st == SSE_EEVENT)
		over_max(x, "an event");
	return 0;	/* short count: curl stops with CURLE_WRITE_ERROR */
}

/* Runs the transfer on the pool's multi handle. Sets x->finished and x->rc when curl
 * completed it; returns early (the connection is then dropped) a grace period after
 * our answer, when the caller went away (the request is abandoned), or past the
 * deadline (x->q's) should curl's own timeout not fire.
 * Long: one wait loop whose exits (curl finished, the caller gone, the deadline past)
 * are a few lines each. */
static void
run(CURLM *multi, struct xfer *x)
{
	int64_t deadline_ms = x->q->deadline_ms;
	struct sink *client = x->q->relay ? x->call->client : NULL;
	CURLMcode mc;
	CURLMsg *m;
	int running = 1, left;
	int64_t now_us, wait, t0_us = clock_mono_us(), tell_us = t0_us + UPSTREAM_SLOW_MS * 1000;

	x->finished = 0;
	x->rc = CURLE_OK;
	if ((mc = curl_multi_add_handle(multi, x->h)) != CURLM_OK) {
		set_fail(x, GW_EUPSTREAM, "libcurl: %s", curl_multi_strerror(mc));
		return;
	}
	for (;;) {
		if ((mc = curl_multi_perform(multi, &running)) != CURLM_OK) {
			set_fail(x, GW_EUPSTREAM, "libcurl: %s", curl_multi_strerror(mc));
			break;
		}
		while ((m = curl_multi_info_read(multi, &left)) != NULL)
			if (m->msg == CURLMSG_DONE && m->easy_handle == x->h) {
				x->rc = m->data.result;
				x->finished = 1;
			}
		if (x->finished || running == 0)
			break;
		now_us = clock_mono_us();
		wait = 1000;
		if (x->response) {
			wait = UPSTREAM_END_GRACE_MS - (now_us - x->done_us) / 1000;
			if (wait <= 0)
				break;
		} else if (now_us / 1000 > deadline_ms + 1000)
			break;	/* a backstop: curl's CURLOPT_TIMEOUT_MS ends it first */
		else if (client) {
			/* The caller's connection is not in curl's poll set (a FastCGI socket
			 * stays readable while the server's last records are unread): it is
			 * looked at on each wake-up, and the wait ends when it is due. */
			if (sink_gone(client, now_us)) {
				x->q->abandoned = 1;
				set_fail(x, GW_EUPSTREAM, "call abandoned: the caller went away");
				break;
			}
			if ((client->watch_next_us - now_us) / 1000 + 1 < wait)
				wait = (client->watch_next_us - now_us) / 1000 + 1;
		}
		/* A call still waiting after UPSTREAM_SLOW_MS tells the pool's on_wait, and
		 * again every UPSTREAM_SLOW_AGAIN_MS it waits on. */
		if (!x->response && !x->q->side && x->p->on_wait) {
			if (now_us >= tell_us) {
				x->p->on_wait(x->p->on_wait_ctx, (now_us - t0_us) / 1000);
				tell_us = now_us + UPSTREAM_SLOW_AGAIN_MS * 1000;
			}
			if ((tell_us - now_us) / 1000 + 1 < wait)
				wait = (tell_us - now_us) / 1000 + 1;
		}
		if ((mc = curl_multi_poll(multi, NULL, 0, (int)wait, NULL)) != CURLM_OK) {
			set_fail(x, GW_EUPSTREAM, "libcurl: %s", curl_multi_strerror(mc));
			break;
		}
	}
	curl_multi_remove_handle(multi, x->h);
}

/* The deadline of a call that takes up to timeout_ms: its own, or its request's when
 * that comes first. */
int64_t
upstream_deadline(const struct upstream_call *call, long timeout_ms)
{
	int64_t d = call->now_ms + timeout_ms;

	return call->until_ms && call->until_ms < d ? call->until_ms : d;
}

/* The reason of a call that ran out of time: its upstream's timeout-ms, or what was
 * left of its request's time (GW_ECALL: one slow answer is that call's; the upstream
 * may answer another at once). */
static void
timed_out(struct gw_error *err, const struct upstream_call *call, int64_t deadline_ms)
{
	if (call->until_ms && deadline_ms >= call->until_ms)
		gw_error_set(err, GW_ECALL, "upstream %s: timed out: the request ran out of time (request-timeout-ms)",
		    call->up->s.name);
	else
		gw_error_set(err, GW_ECALL, "upstream %s: timed out after %ld ms", call->up->s.name,
		    call->up->timeout_ms);
}

/* The headers of an MCP request to up: the protocol version and the session when
 * given, and the credentials: the caller's bearer token for the upstream when given,
 * else the upstream's own header. */
struct curl_slist *
upstream_mcp_headers(struct curl_slist *l, const struct cfg_upstream *up,
    const char *version, const char *session, const char *bearer, int *bad)
{
	char line[64 + UPSTREAM_MAX_SESSION_ID];
	struct buf auth;

	if (version) {
		snprintf(line, sizeof(line), "MCP-Protocol-Version: %s", version);
		l = httpc_header(l, line, bad);
	}
	if (session) {
		snprintf(line, sizeof(line), "Mcp-Session-Id: %s", session);
		l = httpc_header(l, line, bad);
	}
	if (bearer) {
		buf_init(&auth, 64 + strlen(bearer));
		if (buf_printf(&auth, "Authorization: Bearer %s", bearer) < 0)
			*bad = 1;
		else
			l = httpc_header(l, auth.data, bad);
		if (auth.data)
			secret_wipe(auth.data, auth.len);
		buf_free(&auth);
	} else if (up->auth_header)
		l = httpc_header(l, up->auth_header, bad);
	return l;
}

int
upstream_bearer(const struct upstream_call *call, int again, char **token, struct gw_error *err)
{
	*token = NULL;
	if (!UP_BEARER(call->up))
		return 0;
	if (call->cred == NULL) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: its token is obtained for the caller "
		    "(credentials = %s), and this call has no way to", call->up->s.name,
		    call->up->credentials == UP_CRED_USER_OAUTH ? "user-oauth" : "exchange or client-credentials");
		return -1;
	}
	if (call->cred->bearer == NULL)	/* asked with no token (a user-oauth upstream's catalog) */
		return 0;
	return call->cred->bearer(call->cred->ctx, call->up, again, token, err);
}

void
upstream_bearer_free(char *token)
{
	if (token) {
		secret_wipe(token, strlen(token));
		free(token);
	}
}

/* The params to send for q: as given, but that the revision's own members of _meta
 * (a caller's, relayed) are the gateway's: for a stateless upstream its protocol
 * version, the client capabilities q declares and the gateway's clientInfo, and q's
 * log level unless the caller named one; for any other, none. A new reference (NULL:
 * no params), or *bad set. */
static json_t *
wire_params(const struct post *q, const struct config *cfg, int *bad)
{
	json_t *in = json_object_get(q->params, "_meta"), *params, *meta;

	if (!q->modern && (json_object_get(in, MCP_META_VERSION) == NULL && json_object_get(in, MCP_META_CAPS) == NULL &&
	    json_object_get(in, MCP_META_INFO) == NULL))
		return json_incref(q->params);
	params = json_is_object(q->params) ? json_copy(q->params) : json_object();
	meta = json_is_object(in) ? json_copy(in) : json_object();
	if (params == NULL || meta == NULL) {
		*bad = 1;
		json_decref(meta);
		return params;
	}
	json_object_del(meta, MCP_META_VERSION);
	json_object_del(meta, MCP_META_CAPS);
	json_object_del(meta, MCP_META_INFO);
	if (q->modern &&
	    (json_object_set_new(meta, MCP_META_VERSION, json_string(UPSTREAM_MODERN_VERSION)) < 0 ||
	    json_object_set_new(meta, MCP_META_CAPS, json_is_object(q->client_caps) ? json_copy(q->client_caps) :
	    json_object()) < 0 ||
	    json_object_set_new(meta, MCP_META_INFO, json_pack("{s:s, s:s}",
	    "name", cfg && cfg->name ? cfg->name : PACKAGE_NAME,
	    "version", cfg && cfg->version ? cfg->version : PACKAGE_VERSION)) < 0 ||
	    (q->log_level && json_object_get(meta, MCP_META_LOG_LEVEL) == NULL &&
	    json_object_set_new(meta, MCP_META_LOG_LEVEL, json_string(q->log_level)) < 0)))
		*bad = 1;
	if (json_object_size(meta) > 0)
		json_object_set_new(params, "_meta", meta);
	else {
		json_object_del(params, "_meta");
		json_decref(meta);
	}
	return params;
}

/* "Name: value" of an Mcp-* header, its value as negotiate.h encodes it. */
static struct curl_slist *
mcp_header(struct curl_slist *l, const char *name, const char *value, int *bad)
{
	size_t cap = strlen(name) + 2 + 4 * ((strlen(value) + 2) / 3) + 12;
	char *line = malloc(cap);

	if (line == NULL)
		*bad = 1;
	else {
		snprintf(line, cap, "%s: ", name);
		if (negotiate_header_encode(value, line + strlen(line), cap - strlen(line)) < 0)
			*bad = 1;
		else
			l = httpc_header(l, line, bad);
	}
	free(line);
	return l;
}

int
upstream_build(const struct post *q, const struct upstream_call *call, struct buf *body, struct curl_slist **hdrs)
{
	json_t *msg = NULL, *params = NULL;
	int bad = 0, rc = 0;

	if (buf_reserve(body, 256) < 0)
		rc = -1;
	else if (q->del)
		rc = 0;
	else if (q->raw)
		rc = jsonw_dump(body, q->raw) < 0 ? -2 : 0;
	else if ((params = wire_params(q, call->cfg, &bad), bad) ||
	    (msg = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", q->method ? q->method : "")) == NULL ||
	    (q->id && json_object_set(msg, "id", q->id) < 0) ||
	    (params && json_object_set(msg, "params", params) < 0))
		rc = -1;
	else
		rc = jsonw_dump(body, msg) < 0 ? -2 : 0;
	json_decref(msg);
	*hdrs = httpc_header(NULL, "Content-Type: application/json", &bad);
	*hdrs = httpc_header(*hdrs, "Accept: application/json, text/event-stream", &bad);
	*hdrs = httpc_header(*hdrs, "Expect:", &bad);	/* no 100-continue round trip */
	*hdrs = upstream_mcp_headers(*hdrs, call->up, q->version, q->session, q->bearer, &bad);
	if (q->modern && q->method && !q->del && !q->raw) {
		*hdrs = mcp_header(*hdrs, "Mcp-Method", q->method, &bad);
		if (q->name)
			*hdrs = mcp_header(*hdrs, "Mcp-Name", q->name, &bad);
	}
	json_decref(params);
	return rc < 0 ? rc : bad ? -1 : 0;
}

/* Statuses that refuse this one request, not every request: the upstream is there. */
static int
refused_call(long status)
{
	return status == 400 || status == 413 || status == 414 || status == 422 || status == 429;
}

/* A connection that was made, then dropped in the middle of this exchange (the upstream
 * refusing a large request by closing, say): the next call may well be served. Failures
 * to reach the upstream (resolving, connecting, TLS) are its own. */
static int
dropped(CURLcode rc)
{
	return rc == CURLE_SEND_ERROR || rc == CURLE_RECV_ERROR || rc == CURLE_GOT_NOTHING || rc == CURLE_PARTIAL_FILE;
}

/* A JSON body of several messages, one after the other (as some servers write the
 * messages of a call they would otherwise stream): each taken as an event's would be.
 * 0 when they end with our answer, -1 when they are not that. */
static int
json_lines(struct xfer *x)
{
	const char *p = buf_str(&x->body);
	size_t at = 0, n = x->body.len;
	json_error_t jerr;
	json_t *m;
	int rc = 0;

	while (rc == 0 && !x->response) {
		while (at < n && (p[at] == ' ' || p[at] == '\t' || p[at] == '\r' || p[at] == '\n'))
			at++;
		if (at == n ||
		    (m = json_loadb(p + at, n - at, JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK, &jerr)) == NULL)
			return -1;
		at += (size_t)jerr.position;
		rc = take_one(x, m);
		json_decref(m);
	}
	return rc == 0 && x->response ? 0 : -1;
}

/* What the finished (or stopped) transfer x amounts to (what run() reported in it): 0
 * with *resp (a request's answer, or NULL for an accepted notification), or -1 with
 * err: GW_EUPSTREAM when the upstream cannot be reached or is broken, GW_ECALL when
 * this exchange failed on its own (over the caps, too slow, refused or dropped midway)
 * while the upstream may serve the next.
 * Long: one table of outcomes in order (stopped, libcurl's failure, the status, the
 * body), each saying whose failure it is. */
static int
post_outcome(struct xfer *x, json_t **resp, struct gw_error *err)
{
	const struct post *q = x->q;
	const struct upstream_call *call = x->call;
	const char *name = call->up->s.name;
	int64_t deadline_ms = q->deadline_ms, left_ms = x->left_ms;
	int finished = x->finished;
	CURLcode rc = x->rc;
	int64_t now_ms = clock_mono_us() / 1000;
	json_error_t jerr;
	char where[300];	/* host:port for the log, in parentheses: callers read what precedes */

	json_t *answer;
	char media[80];

	url_host_port(call->up->url, where, sizeof(where));
	if (x->fail[0]) {
		gw_error_set(err, x->fail_code, "upstream %s: %s", name, x->fail);
	} else if (x->response) {
		*resp = x->response;	/* however the stream ended */
		x->response = NULL;
		return 0;
	} else if (!finished || rc == CURLE_OPERATION_TIMEDOUT) {
		if (finished && q->status == 0 && now_ms < deadline_ms - 50)
			gw_error_set(err, GW_EUPSTREAM, "upstream %s: cannot connect: timed out after %ld ms (%s)",
			    name, left_ms < CONNECT_MAX_MS ? (long)left_ms : CONNECT_MAX_MS, where);
		else
			timed_out(err, call, deadline_ms);
	} else if (q->status != 0 && !(q->status == 200 || (error_answer(q) && x->kind == BODY_JSON) ||
	    (q->id == NULL && (q->status == 202 || q->status == 204)))) {
		/* (a DELETE the upstream refuses, 405, or of a session it forgot, 404, fails
		 * here too: the caller of upstream_close takes it as done) */
		gw_error_set(err, refused_call(q->status) ? GW_ECALL : GW_EUPSTREAM, "upstream %s: HTTP %ld", name,
		    q->status);
	} else if (rc != CURLE_OK && rc != CURLE_WRITE_ERROR) {
		if (x->kind == BODY_SSE)
			gw_error_set(err, GW_ECALL, "upstream %s: the event stream broke before the answer (%s: %s)",
			    name, where, x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc));
		else if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST)
			gw_error_set(err, GW_EUPSTREAM, "upstream %s: cannot connect (%s: %s)", name, where,
			    x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc));
		else
			gw_error_set(err, dropped(rc) ? GW_ECALL : GW_EUPSTREAM, "upstream %s: %s (%s)", name,
			    x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc), where);
	} else if (q->id == NULL) {
		return 0;	/* a notification, accepted */
	} else if (x->kind == BODY_SSE) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: the event stream ended before the answer", name);
	} else if (x->kind == BODY_NONE && !upstream_media_is(x->ctype, "application/json")) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: an empty answer of type %s", name,
		    media_for_log(x->ctype, media, sizeof(media)));
	} else if ((answer = json_loadb(buf_str(&x->body), x->body.len, JSON_REJECT_DUPLICATES, &jerr)) == NULL &&
	    (q->status != 200 || json_lines(x) < 0)) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: an answer that is not JSON", name);
	} else if (answer == NULL) {
		*resp = x->response;	/* the last of its lines */
		x->response = NULL;
		return 0;
	} else if (q->status != 200 && (!upstream_is_jsonrpc(answer) || !is_answer(answer, q->id) ||
	    !json_object_get(answer, "error"))) {
		json_decref(answer);
		gw_error_set(err, refused_call(q->status) ? GW_ECALL : GW_EUPSTREAM, "upstream %s: HTTP %ld", name,
		    q->status);
	} else if (!upstream_is_jsonrpc(answer) || !is_answer(answer, q->id)) {
		json_decref(answer);
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: an answer that is not a JSON-RPC response to our request",
		    name);
	} else {
		*resp = answer;
		return 0;
	}
	return -1;
}

/* One POST of one JSON-RPC message with q's credentials, by q->deadline_ms (what
 * upstream_post does once).
 * Long: one transfer from its set-up to its cleanup (the handle, the body, the
 * headers, the run, the outcome): the handle is left clean in one place, at its one
 * exit. */
static int
post_once(struct upstream_pool *p, struct up_conn *c, const struct upstream_call *call,
    struct post *q, json_t **resp, struct gw_error *err)
{
	const struct cfg_upstream *up = call->up;
	const char *name = up->s.name;
	struct curl_slist *hdrs = NULL;
	struct xfer x;
	struct buf body;
	CURLM **multi;
	CURL **h;
	long connects = 0;
	int built, ret = -1;

	if (resp)
		*resp = NULL;
	q->status = 0;
	q->session_got[0] = '\0';
	q->session_bad = 0;
	q->abandoned = 0;
	memset(&x, 0, sizeof(x));
	x.p = p;
	x.c = c;
	x.call = call;
	x.q = q;
	buf_init(&x.body, UPSTREAM_MAX_RESPONSE);
	buf_init(&body, UPSTREAM_MAX_RESPONSE);

	x.left_ms = q->deadline_ms - clock_mono_us() / 1000;
	if (q->relay && call->client && call->client->failed) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: not sent: the caller went away", name);
		goto out;
	}
	if (x.left_ms <= 0) {
		timed_out(err, call, q->deadline_ms);
		goto out;
	}
	multi = q->side ? &p->side_multi : &p->multi;
	h = q->side ? &p->side : &c->h;
	if ((*multi == NULL && (*multi = curl_multi_init()) == NULL) ||
	    (*h == NULL && (*h = curl_easy_init()) == NULL)) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: cannot initialise libcurl", name);
		goto out;
	}
	if ((built = upstream_build(q, call, &body, &hdrs)) == -2) {
		gw_error_set(err, GW_ECALL, "upstream %s: the request is over %u MiB", name, UPSTREAM_MAX_RESPONSE >> 20);
		goto out;
	} else if (built < 0) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: the request could not be built", name);
		goto out;
	}

	x.h = *h;
	httpc_reset(x.h, up->url, x.left_ms < CONNECT_MAX_MS ? (long)x.left_ms : CONNECT_MAX_MS, (long)x.left_ms);
	curl_easy_setopt(x.h, CURLOPT_ERRORBUFFER, x.errbuf);
	curl_easy_setopt(x.h, CURLOPT_HTTPHEADER, hdrs);
	if (q->del)
		curl_easy_setopt(x.h, CURLOPT_CUSTOMREQUEST, "DELETE");
	else {
		curl_easy_setopt(x.h, CURLOPT_POSTFIELDS, buf_str(&body));
		curl_easy_setopt(x.h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body.len);
	}
	curl_easy_setopt(x.h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(x.h, CURLOPT_HEADERDATA, &x);
	curl_easy_setopt(x.h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(x.h, CURLOPT_WRITEDATA, &x);

	run(*multi, &x);
	if (curl_easy_getinfo(x.h, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK && connects > 0)
		p->connects += (unsigned long)connects;
	if (!x.started)
		curl_easy_getinfo(x.h, CURLINFO_RESPONSE_CODE, &q->status);
	ret = post_outcome(&x, resp, err);
	/* Nothing of ours may outlive the call in the handle. */
	curl_easy_setopt(x.h, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(x.h, CURLOPT_POSTFIELDS, NULL);
	curl_easy_setopt(x.h, CURLOPT_ERRORBUFFER, NULL);
out:
	json_decref(x.response);
	buf_free(&body);
	httpc_free_headers(hdrs);
	if (x.sse_on)
		sse_parser_free(&x.sse);
	buf_free(&x.body);
	return ret;
}

/* With a token obtained at a token endpoint (credentials = exchange, client-credentials),
 * a 401 is the upstream refusing that token (revoked, or its keys rotated): a fresh one
 * is obtained and the POST made once more. */
int
upstream_post(struct upstream_pool *p, struct up_conn *c, const struct upstream_call *call,
    struct post *q, json_t **resp, struct gw_error *err)
{
	char *token = NULL;
	int again, rc = -1;

	for (again = 0; again < 2; again++) {
		if (upstream_bearer(call, again, &token, err) < 0)
			break;
		q->bearer = token;
		rc = post_once(p, c, call, q, resp, err);
		q->bearer = NULL;
		upstream_bearer_free(token);
		token = NULL;
		if (rc == 0 || q->status != 401 || !UP_BEARER(call->up) || call->cred->bearer == NULL)
			break;
	}
	return rc;
}
