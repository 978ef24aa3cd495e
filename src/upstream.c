/* upstream — the MCP client side of federation, over libcurl. A pool (one per worker)
 * holds one multi handle, whose connection cache keeps the connections, and per
 * upstream an easy handle, the session the upstream gave the gateway and the
 * negotiated protocol version. A transfer is driven by curl_multi_perform/poll rather
 * than curl_easy_perform so that, once our answer has come on an event stream, the
 * upstream gets UPSTREAM_END_GRACE_MS to end the stream (then the connection is kept)
 * before the transfer is dropped: a server that keeps the stream open costs a little
 * time, never a hang. Nothing the upstream sends is trusted: ids, types, sizes and
 * header values are checked; reasons never quote its bodies. */
#include "autoconf.h"

#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "clock.h"
#include "httpc.h"
#include "jsonrpc.h"
#include "log.h"
#include "secret.h"
#include "sse.h"
#include "upstream.h"

#define DISCARD_MAX	(64 * 1024)	/* body of an error or a 202 read so the connection stays */
#define CONNECT_MAX_MS	5000L

/* Versions the gateway speaks as a client, newest first. */
static const char *const versions[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL };

struct up_conn {
	char *name;		/* the [upstream "name"] this is for */
	char *url;		/* the URL the session below belongs to */
	CURL *h;
	int ready;		/* initialized: version (and session, when given) are valid */
	char *session;		/* Mcp-Session-Id the upstream gave us; NULL = none */
	char version[16];	/* negotiated protocol version */
	json_t *caps;		/* the server capabilities initialize answered */
};

struct upstream_pool {
	CURLM *multi;		/* owns the connection cache */
	/* For an answer the gateway sends an upstream while one of its transfers is still
	 * running (declining a request the upstream made in the middle of a call). */
	CURLM *side_multi;
	CURL *side;
	struct up_conn *conns;
	size_t n;
	int64_t next_id;	/* JSON-RPC ids of the gateway's own requests */
	unsigned long connects;
};

/* One POST: what to send, and what came back besides the body. */
struct post {
	const char *method;
	json_t *params;		/* borrowed; NULL = none */
	json_t *id;		/* borrowed; NULL = a notification */
	const char *session;	/* Mcp-Session-Id to send; NULL = none */
	const char *version;	/* MCP-Protocol-Version to send; NULL = none */
	int relay;		/* other messages go to the call's on_msg */
	int del;		/* a DELETE of the session, not a POST of method */
	json_t *raw;		/* borrowed: the message to POST as is (an answer) instead of method */
	int side;		/* on the pool's side handle: another transfer is running */
	long status;		/* out: HTTP status, 0 = none */
	char session_got[UPSTREAM_MAX_SESSION_ID + 1];	/* out: the answer's Mcp-Session-Id */
	int session_bad;	/* out: it had one, but not a usable one */
	int abandoned;		/* out: on_msg asked to stop */
};

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
	char fail[200];		/* why we stopped reading; "" = we did not */
	char errbuf[CURL_ERROR_SIZE];
};

static void
set_fail(struct xfer *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
set_fail(struct xfer *x, const char *fmt, ...)
{
	va_list ap;

	if (x->fail[0])
		return;	/* the first reason is the one */
	va_start(ap, fmt);
	vsnprintf(x->fail, sizeof(x->fail), fmt, ap);
	va_end(ap);
}

struct upstream_pool *
upstream_pool_new(void)
{
	return calloc(1, sizeof(struct upstream_pool));	/* libcurl starts on first use */
}

static void
conn_forget(struct up_conn *c)
{
	free(c->session);
	c->session = NULL;
	c->version[0] = '\0';
	json_decref(c->caps);
	c->caps = NULL;
	c->ready = 0;
}

void
upstream_pool_free(struct upstream_pool *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->n; i++) {
		if (p->conns[i].h)
			curl_easy_cleanup(p->conns[i].h);
		conn_forget(&p->conns[i]);
		free(p->conns[i].name);
		free(p->conns[i].url);
	}
	free(p->conns);
	if (p->multi)
		curl_multi_cleanup(p->multi);
	if (p->side)
		curl_easy_cleanup(p->side);
	if (p->side_multi)
		curl_multi_cleanup(p->side_multi);
	free(p);
}

unsigned long
upstream_pool_connects(const struct upstream_pool *p)
{
	return p->connects;
}

/* The pool's entry for an upstream; a changed URL starts over with a new session. */
static struct up_conn *
conn_get(struct upstream_pool *p, const struct cfg_upstream *up)
{
	struct up_conn *c, *nc;
	char *url;
	size_t i;

	for (i = 0; i < p->n; i++) {
		c = &p->conns[i];
		if (strcmp(c->name, up->s.name) != 0)
			continue;
		if (strcmp(c->url, up->url) != 0) {
			if ((url = strdup(up->url)) == NULL)
				return NULL;
			free(c->url);
			c->url = url;
			conn_forget(c);
		}
		return c;
	}
	if ((nc = realloc(p->conns, (p->n + 1) * sizeof(*nc))) == NULL)
		return NULL;
	p->conns = nc;
	c = &p->conns[p->n];
	memset(c, 0, sizeof(*c));
	c->name = strdup(up->s.name);
	c->url = strdup(up->url);
	if (c->name == NULL || c->url == NULL) {
		free(c->name);
		free(c->url);
		return NULL;
	}
	p->n++;
	return c;
}

/* An Mcp-Session-Id we can send back: 1 to UPSTREAM_MAX_SESSION_ID visible ASCII. */
static int
session_ok(const char *s, size_t n)
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
static int
header_value(const char *line, size_t len, const char *name, const char **v, size_t *vlen)
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
	} else if (header_value(p, len, "content-type", &v, &vlen)) {
		if (vlen >= sizeof(x->ctype))
			vlen = sizeof(x->ctype) - 1;
		memcpy(x->ctype, v, vlen);
		x->ctype[vlen] = '\0';
	} else if (header_value(p, len, "mcp-session-id", &v, &vlen)) {
		x->q->session_bad = !session_ok(v, vlen);
		if (!x->q->session_bad) {
			memcpy(x->q->session_got, v, vlen);
			x->q->session_got[vlen] = '\0';
		}
	}
	return len;
}

/* The media type of a Content-Type is want (parameters aside). */
static int
media_is(const char *ctype, const char *want)
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

static int
is_jsonrpc(json_t *m)
{
	const char *v = json_string_value(json_object_get(m, "jsonrpc"));

	return json_is_object(m) && v != NULL && strcmp(v, "2.0") == 0;
}

/* One message of an event stream: ours ends the call, requests and notifications go to
 * on_msg, anything else is a protocol failure. 0 to go on, -1 to stop. */
static int post(struct upstream_pool *p, struct up_conn *c, const struct upstream_call *call,
    struct post *q, int64_t deadline_ms, json_t **resp, struct gw_error *err);

/* Answers a request the upstream made with an error, on the side handle (a transfer
 * of ours is still running), at most a second. */
static void
respond_error(struct upstream_pool *p, const struct upstream_call *call, const char *session,
    const char *version, json_t *req)
{
	struct up_conn *c;
	struct gw_error err;
	struct post q;
	json_t *ans = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", json_object_get(req, "id"),
	    "error", "code", JSONRPC_METHOD_NOT_FOUND,
	    "message", "The gateway's caller cannot take this request");

	if (ans == NULL || (c = conn_get(p, call->up)) == NULL) {
		json_decref(ans);
		return;
	}
	memset(&q, 0, sizeof(q));
	q.raw = ans;
	q.side = 1;
	q.session = session;
	q.version = version;
	if (post(p, c, call, &q, clock_mono_us() / 1000 + 1000, NULL, &err) < 0)
		log_msg(GW_LOG_INFO, NULL, "%s (declining %s)", err.detail,
		    json_string_value(json_object_get(req, "method")));
	json_decref(ans);
}

static int
take_one(struct xfer *x, json_t *m)
{
	const struct upstream_call *call = x->call;

	if (x->response)
		return 0;	/* nothing is relayed after the answer */
	if (!is_jsonrpc(m)) {
		set_fail(x, "an event that is not a JSON-RPC message");
		return -1;
	}
	if (json_is_string(json_object_get(m, "method"))) {
		int r = x->q->relay && call->on_msg ? call->on_msg(call->ctx, m) : UPSTREAM_DECLINE;

		if (r < 0) {
			x->q->abandoned = 1;
			set_fail(x, "%s", call->client && call->client->failed ? "call abandoned: the caller went away" :
			    "call abandoned");
			return -1;
		}
		/* A request nobody relays would hold the call until its timeout: refuse it. */
		if (r == UPSTREAM_DECLINE && json_object_get(m, "id"))
			respond_error(x->p, call, x->q->session, x->q->version, m);
		return 0;
	}
	if (!is_answer(m, x->q->id)) {
		set_fail(x, "a message that is not the answer to our request");
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
		set_fail(x, "an event that is not JSON");
		return -1;
	}
	if (json_is_array(msg)) {	/* a batch, as 2025-03-26 allows */
		if (json_array_size(msg) == 0) {
			set_fail(x, "an event that is not a JSON-RPC message");
			rc = -1;
		}
		for (i = 0; rc == 0 && i < json_array_size(msg); i++)
			rc = take_one(x, json_array_get(msg, i));
	} else
		rc = take_one(x, msg);
	json_decref(msg);
	return rc;
}

static size_t
on_body(char *p, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * n;
	enum sse_status st;
	char media[80];

	if (!x->started) {
		x->started = 1;
		curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &x->q->status);
		if (x->q->status != 200 || x->q->id == NULL)
			x->kind = BODY_DISCARD;	/* judged by its status */
		else if (media_is(x->ctype, "application/json")) {
			curl_off_t cl = -1;

			x->kind = BODY_JSON;
			curl_easy_getinfo(x->h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
			if (cl > (curl_off_t)UPSTREAM_MAX_RESPONSE) {	/* announced: no need to read 8 MiB first */
				set_fail(x, "answer over %u MiB", UPSTREAM_MAX_RESPONSE >> 20);
				return 0;
			}
		}
		else if (media_is(x->ctype, "text/event-stream")) {
			x->kind = BODY_SSE;
			sse_parser_init(&x->sse, UPSTREAM_MAX_LINE, UPSTREAM_MAX_RESPONSE, on_event, x);
			x->sse_on = 1;
		} else {
			set_fail(x, "an answer of type %s", media_for_log(x->ctype, media, sizeof(media)));
			return 0;
		}
	}
	if (x->response || x->kind == BODY_DISCARD) {	/* read on, a little, for the connection */
		x->discarded += len;
		return x->discarded > DISCARD_MAX ? 0 : len;
	}
	if (x->kind == BODY_JSON) {
		if (buf_append(&x->body, p, len) < 0) {
			set_fail(x, "answer over %u MiB", UPSTREAM_MAX_RESPONSE >> 20);
			return 0;
		}
		return len;
	}
	st = sse_parser_feed(&x->sse, p, len);
	if (st == SSE_OK)
		return len;
	if (st == SSE_ELINE)
		set_fail(x, "event-stream line over %u MiB", UPSTREAM_MAX_LINE >> 20);
	else if (st == SSE_EEVENT)
		set_fail(x, "event over %u MiB", UPSTREAM_MAX_RESPONSE >> 20);
	return 0;	/* short count: curl stops with CURLE_WRITE_ERROR */
}

/* Runs the transfer on the pool's multi handle. Sets *finished and *rc when curl
 * completed it; returns early (the connection is then dropped) a grace period after
 * our answer, when the caller went away (the request is abandoned), or past the
 * deadline should curl's own timeout not fire. */
static void
run(CURLM *multi, struct xfer *x, int64_t deadline_ms, int *finished, CURLcode *rc)
{
	struct sink *client = x->q->relay ? x->call->client : NULL;
	CURLMcode mc;
	CURLMsg *m;
	int running = 1, left;
	int64_t now_us, wait;

	*finished = 0;
	*rc = CURLE_OK;
	if ((mc = curl_multi_add_handle(multi, x->h)) != CURLM_OK) {
		set_fail(x, "libcurl: %s", curl_multi_strerror(mc));
		return;
	}
	for (;;) {
		if ((mc = curl_multi_perform(multi, &running)) != CURLM_OK) {
			set_fail(x, "libcurl: %s", curl_multi_strerror(mc));
			break;
		}
		while ((m = curl_multi_info_read(multi, &left)) != NULL)
			if (m->msg == CURLMSG_DONE && m->easy_handle == x->h) {
				*rc = m->data.result;
				*finished = 1;
			}
		if (*finished || running == 0)
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
				set_fail(x, "call abandoned: the caller went away");
				break;
			}
			if ((client->watch_next_us - now_us) / 1000 + 1 < wait)
				wait = (client->watch_next_us - now_us) / 1000 + 1;
		}
		if ((mc = curl_multi_poll(multi, NULL, 0, (int)wait, NULL)) != CURLM_OK) {
			set_fail(x, "libcurl: %s", curl_multi_strerror(mc));
			break;
		}
	}
	curl_multi_remove_handle(multi, x->h);
}

/* The deadline of a call that takes up to timeout_ms: its own, or its request's when
 * that comes first. */
static int64_t
deadline_of(const struct upstream_call *call, long timeout_ms)
{
	int64_t d = call->now_ms + timeout_ms;

	return call->until_ms && call->until_ms < d ? call->until_ms : d;
}

/* The reason of a call that ran out of time: its upstream's timeout-ms, or what was
 * left of its request's time. */
static void
timed_out(struct gw_error *err, const struct upstream_call *call, int64_t deadline_ms)
{
	if (call->until_ms && deadline_ms >= call->until_ms)
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: timed out: the request ran out of time (request-timeout-ms)",
		    call->up->s.name);
	else
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: timed out after %ld ms", call->up->s.name,
		    call->up->timeout_ms);
}

/* The headers of an MCP request to up: the protocol version and the session when
 * given, and the upstream's own credentials. */
static struct curl_slist *
mcp_headers(struct curl_slist *l, const struct cfg_upstream *up, const char *version, const char *session,
    int *bad)
{
	char line[64 + UPSTREAM_MAX_SESSION_ID];

	if (version) {
		snprintf(line, sizeof(line), "MCP-Protocol-Version: %s", version);
		l = httpc_header(l, line, bad);
	}
	if (session) {
		snprintf(line, sizeof(line), "Mcp-Session-Id: %s", session);
		l = httpc_header(l, line, bad);
	}
	if (up->auth_header)
		l = httpc_header(l, up->auth_header, bad);
	return l;
}

/* The body (malloc'd) and headers of q to up: 0, or -1 (out of memory, a header that
 * does not fit). */
static int
build_post(const struct post *q, const struct cfg_upstream *up, char **body, struct curl_slist **hdrs)
{
	json_t *msg = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", q->method ? q->method : "");
	int bad = 0;

	if (msg && q->id)
		json_object_set(msg, "id", q->id);
	if (msg && q->params)
		json_object_set(msg, "params", q->params);
	*body = msg == NULL ? NULL : q->del ? strdup("") : json_dumps(q->raw ? q->raw : msg, JSON_COMPACT);
	json_decref(msg);
	*hdrs = httpc_header(NULL, "Content-Type: application/json", &bad);
	*hdrs = httpc_header(*hdrs, "Accept: application/json, text/event-stream", &bad);
	*hdrs = httpc_header(*hdrs, "Expect:", &bad);	/* no 100-continue round trip */
	*hdrs = mcp_headers(*hdrs, up, q->version, q->session, &bad);
	return *body == NULL || bad ? -1 : 0;
}

/* What the finished (or stopped) transfer x of q amounts to: 0 with *resp (a request's
 * answer, or NULL for an accepted notification), or -1 with err. finished and rc: what
 * run() reported; left_ms: the time the transfer had. */
static int
post_outcome(struct xfer *x, const struct upstream_call *call, int64_t deadline_ms, int64_t left_ms,
    int finished, CURLcode rc, json_t **resp, struct gw_error *err)
{
	const struct post *q = x->q;
	const char *name = call->up->s.name;
	int64_t now_ms = clock_mono_us() / 1000;
	json_error_t jerr;
	json_t *answer;
	char media[80];

	if (x->fail[0]) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: %s", name, x->fail);
	} else if (x->response) {
		*resp = x->response;	/* however the stream ended */
		x->response = NULL;
		return 0;
	} else if (!finished || rc == CURLE_OPERATION_TIMEDOUT) {
		if (finished && q->status == 0 && now_ms < deadline_ms - 50)
			gw_error_set(err, GW_EUPSTREAM, "upstream %s: cannot connect: timed out after %ld ms",
			    name, left_ms < CONNECT_MAX_MS ? (long)left_ms : CONNECT_MAX_MS);
		else
			timed_out(err, call, deadline_ms);
	} else if (q->status != 0 && !(q->status == 200 ||
	    (q->id == NULL && (q->status == 202 || q->status == 204)))) {
		/* (a DELETE the upstream refuses, 405, or of a session it forgot, 404, fails
		 * here too: the caller of upstream_close takes it as done) */
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: HTTP %ld", name, q->status);
	} else if (rc != CURLE_OK && rc != CURLE_WRITE_ERROR) {
		if (x->kind == BODY_SSE)
			gw_error_set(err, GW_EUPSTREAM, "upstream %s: the event stream broke before the answer (%s)",
			    name, x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc));
		else if (rc == CURLE_COULDNT_CONNECT)
			gw_error_set(err, GW_EUPSTREAM, "upstream %s: cannot connect (%s)", name,
			    x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc));
		else
			gw_error_set(err, GW_EUPSTREAM, "upstream %s: %s", name,
			    x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc));
	} else if (q->id == NULL) {
		return 0;	/* a notification, accepted */
	} else if (x->kind == BODY_SSE) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: the event stream ended before the answer", name);
	} else if (x->kind == BODY_NONE && !media_is(x->ctype, "application/json")) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: an empty answer of type %s", name,
		    media_for_log(x->ctype, media, sizeof(media)));
	} else if ((answer = json_loadb(buf_str(&x->body), x->body.len, JSON_REJECT_DUPLICATES, &jerr)) == NULL) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: an answer that is not JSON", name);
	} else if (!is_jsonrpc(answer) || !is_answer(answer, q->id)) {
		json_decref(answer);
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: an answer that is not a JSON-RPC response to our request",
		    name);
	} else {
		*resp = answer;
		return 0;
	}
	return -1;
}

/* One POST of one JSON-RPC message. 0: for a request, its answer in *resp; for a
 * notification, it was accepted. -1 with err (q->status holds the HTTP status). */
static int
post(struct upstream_pool *p, struct up_conn *c, const struct upstream_call *call,
    struct post *q, int64_t deadline_ms, json_t **resp, struct gw_error *err)
{
	const struct cfg_upstream *up = call->up;
	const char *name = up->s.name;
	struct curl_slist *hdrs = NULL;
	struct xfer x;
	char *body = NULL;
	CURLM **multi;
	CURL **h;
	int64_t left_ms;
	long connects = 0;
	CURLcode rc;
	int finished, ret = -1;

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

	left_ms = deadline_ms - clock_mono_us() / 1000;
	if (q->relay && call->client && call->client->failed) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: not sent: the caller went away", name);
		goto out;
	}
	if (left_ms <= 0) {
		timed_out(err, call, deadline_ms);
		goto out;
	}
	multi = q->side ? &p->side_multi : &p->multi;
	h = q->side ? &p->side : &c->h;
	if ((*multi == NULL && (*multi = curl_multi_init()) == NULL) ||
	    (*h == NULL && (*h = curl_easy_init()) == NULL)) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: cannot initialise libcurl", name);
		goto out;
	}
	if (build_post(q, up, &body, &hdrs) < 0) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: the request could not be built", name);
		goto out;
	}

	x.h = *h;
	httpc_reset(x.h, up->url, left_ms < CONNECT_MAX_MS ? (long)left_ms : CONNECT_MAX_MS, (long)left_ms);
	curl_easy_setopt(x.h, CURLOPT_ERRORBUFFER, x.errbuf);
	curl_easy_setopt(x.h, CURLOPT_HTTPHEADER, hdrs);
	if (q->del)
		curl_easy_setopt(x.h, CURLOPT_CUSTOMREQUEST, "DELETE");
	else {
		curl_easy_setopt(x.h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(x.h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	}
	curl_easy_setopt(x.h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(x.h, CURLOPT_HEADERDATA, &x);
	curl_easy_setopt(x.h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(x.h, CURLOPT_WRITEDATA, &x);

	run(*multi, &x, deadline_ms, &finished, &rc);
	if (curl_easy_getinfo(x.h, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK && connects > 0)
		p->connects += (unsigned long)connects;
	if (!x.started)
		curl_easy_getinfo(x.h, CURLINFO_RESPONSE_CODE, &q->status);
	ret = post_outcome(&x, call, deadline_ms, left_ms, finished, rc, resp, err);
	/* Nothing of ours may outlive the call in the handle. */
	curl_easy_setopt(x.h, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(x.h, CURLOPT_POSTFIELDS, NULL);
	curl_easy_setopt(x.h, CURLOPT_ERRORBUFFER, NULL);
out:
	json_decref(x.response);
	free(body);
	httpc_free_headers(hdrs);
	if (x.sse_on)
		sse_parser_free(&x.sse);
	buf_free(&x.body);
	return ret;
}

/* The lifecycle on a new session: initialize (with the client capabilities caps),
 * then notifications/initialized. 0 with *session (malloc'd; NULL when the upstream
 * keeps none), version and *server_caps (a new reference); -1 with err. */
static int
handshake(struct upstream_pool *p, struct up_conn *c, const struct upstream_call *call,
    json_t *caps, int64_t deadline_ms, char **session, char version[16], json_t **server_caps,
    struct gw_error *err)
{
	const char *name = call->up->s.name, *pv;
	json_t *params, *id, *resp = NULL, *result;
	struct post q;
	size_t i;
	int rc = -1;

	*session = NULL;
	*server_caps = NULL;
	params = json_pack("{s:s, s:O, s:{s:s, s:s}}", "protocolVersion", UPSTREAM_CLIENT_VERSION,
	    "capabilities", caps, "clientInfo",
	    "name", call->cfg && call->cfg->name ? call->cfg->name : PACKAGE_NAME,
	    "version", call->cfg && call->cfg->version ? call->cfg->version : PACKAGE_VERSION);
	id = json_integer(++p->next_id);
	if (params == NULL || id == NULL) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: the request could not be built", name);
		goto out;
	}
	memset(&q, 0, sizeof(q));
	q.method = "initialize";
	q.params = params;
	q.id = id;
	if (post(p, c, call, &q, deadline_ms, &resp, err) < 0)
		goto out;
	if ((result = json_object_get(resp, "result")) == NULL) {
		json_t *code = json_object_get(json_object_get(resp, "error"), "code");

		gw_error_set(err, GW_EUPSTREAM, "upstream %s: initialize answered JSON-RPC error %lld", name,
		    json_is_integer(code) ? (long long)json_integer_value(code) : 0LL);
		goto out;
	}
	pv = json_string_value(json_object_get(result, "protocolVersion"));
	for (i = 0; versions[i] && (pv == NULL || strcmp(pv, versions[i]) != 0); i++)
		;
	if (versions[i] == NULL) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: initialize answered a protocol version the gateway does not speak",
		    name);
		goto out;
	}
	if (q.session_bad) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: initialize answered an unusable Mcp-Session-Id", name);
		goto out;
	}
	if (q.session_got[0] && (*session = strdup(q.session_got)) == NULL) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: out of memory", name);
		goto out;
	}
	snprintf(version, 16, "%s", versions[i]);
	*server_caps = json_is_object(json_object_get(result, "capabilities")) ?
	    json_incref(json_object_get(result, "capabilities")) : json_object();

	memset(&q, 0, sizeof(q));
	q.method = "notifications/initialized";
	q.session = *session;
	q.version = version;
	if (post(p, c, call, &q, deadline_ms, NULL, err) < 0)
		goto out;
	rc = 0;
out:
	if (rc < 0) {
		free(*session);
		*session = NULL;
		json_decref(*server_caps);
		*server_caps = NULL;
	}
	json_decref(resp);
	json_decref(params);
	json_decref(id);
	return rc;
}

/* The pool's own session with the upstream, as the gateway (no client capabilities). */
static int
initialize(struct upstream_pool *p, struct up_conn *c, const struct upstream_call *call,
    int64_t deadline_ms, struct gw_error *err)
{
	json_t *none = json_object();
	int rc;

	conn_forget(c);
	rc = handshake(p, c, call, none, deadline_ms, &c->session, c->version, &c->caps, err);
	json_decref(none);
	c->ready = rc == 0;
	return rc;
}

/* After the caller abandoned a request: tell the upstream (best effort, a second at
 * most), since a dropped stream is not a cancellation. 0 when the upstream took it. */
static int
cancel(struct upstream_pool *p, struct up_conn *c, const struct upstream_call *call, json_t *id,
    const char *session)
{
	struct gw_error ignored;
	struct post q;
	int rc = -1;

	memset(&q, 0, sizeof(q));
	q.method = "notifications/cancelled";
	q.params = json_pack("{s:O, s:s}", "requestId", id, "reason", "the gateway's caller went away");
	q.session = session;
	q.version = c->ready ? c->version : UPSTREAM_CLIENT_VERSION;
	/* Its own second, even when the request's time is what ran out. */
	if (q.params)
		rc = post(p, c, call, &q, clock_mono_us() / 1000 + UPSTREAM_CANCEL_MS, NULL, &ignored);
	json_decref(q.params);
	return rc;
}

/* abandoned: 0 no, 1 and notifications/cancelled taken, -1 and not taken. */
static void
log_failure(const struct upstream_call *call, const struct gw_error *err, int64_t t0_us, int abandoned)
{
	log_msg(abandoned ? GW_LOG_INFO : GW_LOG_WARN, NULL, "%s (%s, after %lld ms)%s",
	    err->detail, call->method ? call->method : "?", (long long)((clock_mono_us() - t0_us) / 1000),
	    abandoned > 0 ? "; notifications/cancelled sent" : abandoned < 0 ? "; notifications/cancelled not taken" : "");
}

/* What the entry points check first (lifecycle: upstream_open and _close, which
 * take no method); the pool's entry for the upstream. */
static struct up_conn *
begin(struct upstream_pool *p, const struct upstream_call *call, int lifecycle, struct gw_error *err)
{
	const char *name = call->up && call->up->s.name ? call->up->s.name : "?";
	struct up_conn *c;

	if (call->up == NULL || call->up->url == NULL ||
	    (!lifecycle && (call->method == NULL || strcmp(call->method, "initialize") == 0))) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: not a call the gateway makes", name);
		return NULL;
	}
	if (call->session_id && !session_ok(call->session_id, strlen(call->session_id))) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: an unusable session id", name);
		return NULL;
	}
	if ((c = conn_get(p, call->up)) == NULL)
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: out of memory", name);
	return c;
}

int
upstream_request(struct upstream_pool *p, const struct upstream_call *call,
    json_t **response, struct gw_error *err)
{
	int64_t t0 = clock_mono_us(), deadline;
	struct up_conn *c;
	struct post q;
	json_t *id = NULL;
	int own = call->session_id == NULL, fresh = 0, rc = -1, abandoned = 0;

	*response = NULL;
	memset(&q, 0, sizeof(q));
	if ((c = begin(p, call, 0, err)) == NULL)
		goto out;
	deadline = deadline_of(call, call->up->timeout_ms);
	if ((id = call->id ? json_incref(call->id) : json_integer(++p->next_id)) == NULL) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: out of memory", call->up->s.name);
		goto out;
	}
	if (own && !c->ready) {
		if (initialize(p, c, call, deadline, err) < 0)
			goto out;
		fresh = 1;
	}
	for (;;) {
		memset(&q, 0, sizeof(q));
		q.method = call->method;
		q.params = call->params;
		q.id = id;
		q.session = own ? c->session : call->session_id;
		q.version = own ? c->version : call->version ? call->version : UPSTREAM_CLIENT_VERSION;
		q.relay = 1;
		if (post(p, c, call, &q, deadline, response, err) == 0) {
			gw_error_set(err, GW_OK, "%s", "");	/* a 404 before may have set it */
			rc = 0;
			break;
		}
		if (q.status == 404 && !own) {
			gw_error_set(err, GW_ESESSION, "upstream %s: the session ended", call->up->s.name);
			break;
		}
		if (q.status != 404 || !own || fresh || c->session == NULL)
			break;
		/* The upstream no longer knows our session (restarted, expired): once more. */
		if (initialize(p, c, call, deadline, err) < 0)
			break;
		fresh = 1;
	}
	if (q.abandoned)
		abandoned = cancel(p, c, call, id, own ? c->session : call->session_id) == 0 ? 1 : -1;
out:
	json_decref(id);
	if (rc < 0)
		log_failure(call, err, t0, abandoned);
	return rc;
}

int
upstream_notify(struct upstream_pool *p, const struct upstream_call *call, struct gw_error *err)
{
	int64_t t0 = clock_mono_us(), deadline;
	struct up_conn *c;
	struct post q;
	int own = call->session_id == NULL, rc = -1;

	if ((c = begin(p, call, 0, err)) == NULL)
		goto out;
	deadline = deadline_of(call, call->up->timeout_ms);
	if (own && !c->ready && initialize(p, c, call, deadline, err) < 0)
		goto out;
	memset(&q, 0, sizeof(q));
	q.method = call->method;
	q.params = call->params;
	q.session = own ? c->session : call->session_id;
	q.version = own ? c->version : call->version ? call->version : UPSTREAM_CLIENT_VERSION;
	rc = post(p, c, call, &q, deadline, NULL, err);
out:
	if (rc < 0)
		log_failure(call, err, t0, 0);
	return rc;
}

json_t *
upstream_capabilities(struct upstream_pool *p, const struct upstream_call *call, struct gw_error *err)
{
	int64_t t0 = clock_mono_us();
	struct up_conn *c;

	if ((c = begin(p, call, 0, err)) == NULL)
		goto fail;
	if (!c->ready && initialize(p, c, call, deadline_of(call, call->up->timeout_ms), err) < 0)
		goto fail;
	return json_incref(c->caps);
fail:
	log_failure(call, err, t0, 0);
	return NULL;
}

int
upstream_open(struct upstream_pool *p, const struct upstream_call *call, json_t *client_caps,
    char **session_id, char version[16], struct gw_error *err)
{
	int64_t t0 = clock_mono_us();
	struct up_conn *c;
	json_t *server_caps = NULL, *none = NULL;
	int rc = -1;

	*session_id = NULL;
	if ((c = begin(p, call, 1, err)) == NULL)
		goto out;
	if (!json_is_object(client_caps))
		client_caps = none = json_object();
	rc = handshake(p, c, call, client_caps, deadline_of(call, call->up->timeout_ms), session_id, version,
	    &server_caps, err);
	json_decref(server_caps);
	json_decref(none);
out:
	if (rc < 0)
		log_failure(call, err, t0, 0);
	return rc;
}

void
upstream_close(struct upstream_pool *p, const struct upstream_call *call)
{
	struct gw_error err;
	struct up_conn *c;
	struct post q;
	int64_t deadline = call->now_ms + (call->up && call->up->timeout_ms < UPSTREAM_CLOSE_MS ?
	    call->up->timeout_ms : UPSTREAM_CLOSE_MS);

	if (call->session_id == NULL || (c = begin(p, call, 1, &err)) == NULL)
		return;
	memset(&q, 0, sizeof(q));
	q.del = 1;
	q.session = call->session_id;
	q.version = call->version ? call->version : UPSTREAM_CLIENT_VERSION;
	if (post(p, c, call, &q, deadline, NULL, &err) < 0)
		log_msg(GW_LOG_INFO, NULL, "%s (DELETE of a caller's session: left to expire)", err.detail);
}

int
upstream_respond(struct upstream_pool *p, const struct upstream_call *call, json_t *msg,
    struct gw_error *err)
{
	int64_t t0 = clock_mono_us();
	struct up_conn *c;
	struct post q;
	int rc = -1;

	if ((c = begin(p, call, 1, err)) == NULL)
		goto out;
	memset(&q, 0, sizeof(q));
	q.raw = msg;
	q.session = call->session_id;
	q.version = call->version ? call->version : UPSTREAM_CLIENT_VERSION;
	rc = post(p, c, call, &q, deadline_of(call, call->up->timeout_ms), NULL, err);
out:
	if (rc < 0)
		log_failure(call, err, t0, 0);
	return rc;
}

void
upstream_pool_end(struct upstream_pool *p, const struct config *cfg)
{
	struct upstream_call call = { .cfg = cfg, .now_ms = clock_mono_us() / 1000 };
	size_t i, k;

	for (i = 0; p && cfg && i < p->n; i++) {
		struct up_conn *c = &p->conns[i];

		if (!c->ready || c->session == NULL)
			continue;
		for (k = 0, call.up = NULL; k < cfg->n_upstreams && call.up == NULL; k++)
			if (strcmp(cfg->upstreams[k].s.name, c->name) == 0 && strcmp(cfg->upstreams[k].url, c->url) == 0)
				call.up = &cfg->upstreams[k];
		if (call.up == NULL)
			continue;
		call.session_id = c->session;
		call.version = c->version;
		upstream_close(p, &call);
		conn_forget(c);
	}
}

/* --- standalone streams (GET) ------------------------------------------------------ */

struct listen_xfer {
	struct upstream_pool *p;
	const struct upstream_call *call;
	CURL *h;
	struct curl_slist *hdrs;
	struct sse_parser sse;
	int sse_on;
	int stop;		/* on_msg asked to end everything */
	int done;
	char ctype[96];
};

static size_t
listen_header(char *p, size_t size, size_t n, void *ud)
{
	struct listen_xfer *l = ud;
	size_t len = size * n, vlen;
	const char *v;

	if (header_value(p, len, "content-type", &v, &vlen)) {
		if (vlen >= sizeof(l->ctype))
			vlen = sizeof(l->ctype) - 1;
		memcpy(l->ctype, v, vlen);
		l->ctype[vlen] = '\0';
	}
	return len;
}

static int
listen_event(void *ctx, const struct sse_event *ev)
{
	struct listen_xfer *l = ctx;
	const struct upstream_call *call = l->call;
	json_t *msg;
	int r;

	if (ev->data_len == 0 || strcmp(ev->event, "message") != 0)
		return 0;
	if ((msg = json_loadb(ev->data, ev->data_len, JSON_REJECT_DUPLICATES, NULL)) == NULL)
		return -1;	/* garbage: this stream ends */
	if (is_jsonrpc(msg) && json_is_string(json_object_get(msg, "method"))) {
		r = call->on_msg ? call->on_msg(call->ctx, msg) : UPSTREAM_DECLINE;
		if (r < 0)
			l->stop = 1;
		else if (r == UPSTREAM_DECLINE && json_object_get(msg, "id"))
			respond_error(l->p, call, call->session_id, call->version, msg);
	}
	json_decref(msg);
	return l->stop ? -1 : 0;
}

static size_t
listen_body(char *p, size_t size, size_t n, void *ud)
{
	struct listen_xfer *l = ud;
	long status = 0;

	if (!l->sse_on) {
		curl_easy_getinfo(l->h, CURLINFO_RESPONSE_CODE, &status);
		if (status != 200 || !media_is(l->ctype, "text/event-stream"))
			return 0;	/* no stream here (405: the upstream offers none) */
		sse_parser_init(&l->sse, UPSTREAM_MAX_LINE, UPSTREAM_MAX_RESPONSE, listen_event, l);
		l->sse_on = 1;
	}
	return sse_parser_feed(&l->sse, p, size * n) == SSE_OK ? size * n : 0;
}

int
upstream_listen(struct upstream_pool *p, const struct upstream_call *calls, size_t n,
    int (*tick)(void *ctx), void *tick_ctx, int64_t tick_ms, int64_t until_ms)
{
	struct listen_xfer *l = calloc(n ? n : 1, sizeof(*l));
	CURLM *multi = curl_multi_init();
	int64_t now_ms, next_tick;
	int running = 0, left, bad, rc = 0;
	CURLMsg *m;
	size_t i;

	if (l == NULL || multi == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		const struct upstream_call *c = &calls[i];

		l[i].p = p;
		l[i].call = c;
		bad = 0;
		l[i].hdrs = httpc_header(l[i].hdrs, "Accept: text/event-stream", &bad);
		l[i].hdrs = mcp_headers(l[i].hdrs, c->up, c->version ? c->version : UPSTREAM_CLIENT_VERSION,
		    c->session_id ? c->session_id : "", &bad);
		if (bad || c->session_id == NULL || !session_ok(c->session_id, strlen(c->session_id)) ||
		    (l[i].h = curl_easy_init()) == NULL) {
			l[i].done = 1;
			continue;
		}
		httpc_reset(l[i].h, c->up->url, CONNECT_MAX_MS, 0);	/* a stream: ended by until_ms */
		curl_easy_setopt(l[i].h, CURLOPT_HTTPHEADER, l[i].hdrs);
		curl_easy_setopt(l[i].h, CURLOPT_HEADERFUNCTION, listen_header);
		curl_easy_setopt(l[i].h, CURLOPT_HEADERDATA, &l[i]);
		curl_easy_setopt(l[i].h, CURLOPT_WRITEFUNCTION, listen_body);
		curl_easy_setopt(l[i].h, CURLOPT_WRITEDATA, &l[i]);
		curl_easy_setopt(l[i].h, CURLOPT_PRIVATE, &l[i]);
		if (curl_multi_add_handle(multi, l[i].h) == CURLM_OK)
			running++;
		else
			l[i].done = 1;
	}
	next_tick = clock_mono_us() / 1000 + tick_ms;
	while (running > 0) {
		if (curl_multi_perform(multi, &running) != CURLM_OK)
			break;
		while ((m = curl_multi_info_read(multi, &left)) != NULL)
			if (m->msg == CURLMSG_DONE) {
				struct listen_xfer *x = NULL;

				curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
				if (x) {
					x->done = 1;
					if (x->stop)
						rc = 1;
				}
			}
		if (rc || running == 0)
			break;
		now_ms = clock_mono_us() / 1000;
		if (now_ms >= until_ms)
			break;
		if (now_ms >= next_tick) {
			if (tick && tick(tick_ctx) < 0) {
				rc = 1;
				break;
			}
			next_tick = now_ms + tick_ms;
		}
		curl_multi_poll(multi, NULL, 0, (int)(next_tick - now_ms < until_ms - now_ms ?
		    next_tick - now_ms : until_ms - now_ms) + 1, NULL);
	}
out:
	for (i = 0; l && i < n; i++) {
		if (l[i].h) {
			curl_multi_remove_handle(multi, l[i].h);
			curl_easy_cleanup(l[i].h);
		}
		httpc_free_headers(l[i].hdrs);
		if (l[i].sse_on)
			sse_parser_free(&l[i].sse);
	}
	if (multi)
		curl_multi_cleanup(multi);
	free(l);
	return rc;
}
