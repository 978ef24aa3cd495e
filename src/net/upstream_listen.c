/* upstream_listen — the standalone streams (GET) of a caller's upstream sessions, all
 * at once on one multi handle: what the upstreams send outside of calls goes to the
 * call's on_msg (requests nobody takes are declined), with a tick for keep-alives,
 * until the caller leaves, every stream ends, or the time is up. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "httpc.h"
#include "log.h"
#include "sse.h"
#include "upstream_pool.h"
#include "url.h"

struct listen_xfer {
	struct upstream_pool *p;
	const struct upstream_call *call;
	CURL *h;
	struct curl_slist *hdrs;
	struct buf body;	/* a stateless upstream's: the POST of the listen request */
	struct buf lines;	/* and its answer's line so far, when it writes JSON lines */
	int json_on;
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

	if (upstream_header_value(p, len, "content-type", &v, &vlen)) {
		if (vlen >= sizeof(l->ctype))
			vlen = sizeof(l->ctype) - 1;
		memcpy(l->ctype, v, vlen);
		l->ctype[vlen] = '\0';
	}
	return len;
}

/* One message of a stream (n bytes of JSON) to the call's on_msg: 0, or -1 to end it. */
static int
listen_message(struct listen_xfer *l, const char *data, size_t n)
{
	const struct upstream_call *call = l->call;
	json_t *msg;
	int r;

	if ((msg = json_loadb(data, n, JSON_REJECT_DUPLICATES, NULL)) == NULL)
		return -1;	/* garbage: this stream ends */
	if (upstream_is_jsonrpc(msg) && json_is_string(json_object_get(msg, "method"))) {
		r = call->on_msg ? call->on_msg(call->ctx, msg) : UPSTREAM_DECLINE;
		if (r < 0)
			l->stop = 1;
		else if (r == UPSTREAM_DECLINE && json_object_get(msg, "id"))
			upstream_decline(l->p, call, call->session_id, call->version, msg);
	}
	json_decref(msg);
	return l->stop ? -1 : 0;
}

static int
listen_event(void *ctx, const struct sse_event *ev)
{
	if (ev->data_len == 0 || strcmp(ev->event, "message") != 0)
		return 0;
	return listen_message(ctx, ev->data, ev->data_len);
}

/* A stateless upstream's listen stream written as JSON, one message a line (as some
 * servers write it): each whole line a message, at most UPSTREAM_MAX_LINE long. */
static int
listen_lines(struct listen_xfer *l, const char *p, size_t n)
{
	const char *nl;
	size_t k;

	while (n > 0) {
		k = (nl = memchr(p, '\n', n)) ? (size_t)(nl - p) : n;
		if (l->lines.len + k > UPSTREAM_MAX_LINE || buf_append(&l->lines, p, k) < 0)
			return -1;
		if (nl == NULL)
			return 0;
		if (l->lines.len > 0 && listen_message(l, buf_str(&l->lines), l->lines.len) < 0)
			return -1;
		l->lines.len = 0;
		p += k + 1;
		n -= k + 1;
	}
	return 0;
}

static size_t
listen_body(char *p, size_t size, size_t n, void *ud)
{
	struct listen_xfer *l = ud;
	long status = 0;

	if (!l->sse_on && !l->json_on) {
		curl_easy_getinfo(l->h, CURLINFO_RESPONSE_CODE, &status);
		if (status == 200 && l->call->id && upstream_media_is(l->ctype, "application/json"))
			l->json_on = 1;
		else if (status != 200 || !upstream_media_is(l->ctype, "text/event-stream"))
			return 0;	/* no stream here (405: the upstream offers none) */
		else {
			sse_parser_init(&l->sse, UPSTREAM_MAX_LINE, UPSTREAM_MAX_RESPONSE, listen_event, l);
			l->sse_on = 1;
		}
	}
	if (l->json_on)
		return listen_lines(l, p, size * n) == 0 ? size * n : 0;
	return sse_parser_feed(&l->sse, p, size * n) == SSE_OK ? size * n : 0;
}

/* l's handle made for call c: a GET on its session, or, for an upstream of
 * UPSTREAM_MODERN_VERSION, a POST of its request. 0, or -1 (the stream is not made). */
static int
listen_setup(struct listen_xfer *l, const struct upstream_call *c)
{
	struct gw_error err;
	struct post q;
	char *token = NULL;
	int modern = c->revision && strcmp(c->revision, UPSTREAM_MODERN_VERSION) == 0, bad;

	bad = upstream_bearer(c, 0, &token, &err) < 0;
	buf_init(&l->body, UPSTREAM_MAX_RESPONSE);
	buf_init(&l->lines, UPSTREAM_MAX_LINE + 1);
	if (modern) {
		memset(&q, 0, sizeof(q));
		q.method = c->method;
		q.params = c->params;
		q.id = c->id;
		q.version = UPSTREAM_MODERN_VERSION;
		q.modern = 1;
		q.client_caps = c->client_caps;
		q.bearer = token;
		bad = bad || c->id == NULL || upstream_build(&q, c, &l->body, &l->hdrs) < 0;
	} else {
		l->hdrs = httpc_header(l->hdrs, "Accept: text/event-stream", &bad);
		l->hdrs = upstream_mcp_headers(l->hdrs, c->up, c->version ? c->version : UPSTREAM_CLIENT_VERSION,
		    c->session_id ? c->session_id : "", token, &bad);
		bad = bad || c->session_id == NULL || !upstream_session_ok(c->session_id, strlen(c->session_id));
	}
	upstream_bearer_free(token);
	if (bad || (l->h = curl_easy_init()) == NULL)
		return -1;
	httpc_reset(l->h, c->up->url, CONNECT_MAX_MS, 0);	/* a stream: ended by until_ms */
	curl_easy_setopt(l->h, CURLOPT_HTTPHEADER, l->hdrs);
	if (modern) {
		curl_easy_setopt(l->h, CURLOPT_POSTFIELDS, buf_str(&l->body));
		curl_easy_setopt(l->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)l->body.len);
	}
	curl_easy_setopt(l->h, CURLOPT_HEADERFUNCTION, listen_header);
	curl_easy_setopt(l->h, CURLOPT_HEADERDATA, l);
	curl_easy_setopt(l->h, CURLOPT_WRITEFUNCTION, listen_body);
	curl_easy_setopt(l->h, CURLOPT_WRITEDATA, l);
	curl_easy_setopt(l->h, CURLOPT_PRIVATE, l);
	return 0;
}

/* A standalone stream that could not reach its upstream ends like one the upstream
 * closed; the log says which host and port it tried. */
static void
listen_unreached(const struct upstream_call *c, CURLcode rc)
{
	char where[300];

	url_host_port(c->up->url, where, sizeof(where));
	log_warn(NULL, "upstream %s: standalone stream: cannot connect (%s: %s)", c->up->s.name, where,
	    curl_easy_strerror(rc));
}

/* Long: one event loop over the n streams (each started, the multi handle run with its
 * ticks and keep-alives until every stream ends or the client leaves, each cleaned
 * up), whose state is the loop's own locals. */
int
upstream_listen(struct upstream_pool *p, const struct upstream_call *calls, size_t n,
    const struct upstream_tick *tick, int64_t until_ms)
{
	struct listen_xfer *l = calloc(n ? n : 1, sizeof(*l));
	CURLM *multi = curl_multi_init();
	int64_t now_ms, next_tick;
	int running = 0, left, rc = 0;
	CURLMsg *m;
	size_t i;

	if (l == NULL || multi == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		l[i].p = p;
		l[i].call = &calls[i];
		if (listen_setup(&l[i], &calls[i]) == 0 && curl_multi_add_handle(multi, l[i].h) == CURLM_OK)
			running++;
		else
			l[i].done = 1;
	}
	next_tick = clock_mono_us() / 1000 + tick->every_ms;
	while (running > 0 || tick->hold) {
		if (curl_multi_perform(multi, &running) != CURLM_OK)
			break;
		while ((m = curl_multi_info_read(multi, &left)) != NULL)
			if (m->msg == CURLMSG_DONE) {
				struct listen_xfer *x = NULL;

				curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
				if (x && (m->data.result == CURLE_COULDNT_CONNECT ||
				    m->data.result == CURLE_COULDNT_RESOLVE_HOST))
					listen_unreached(&calls[x - l], m->data.result);
				if (x) {
					x->done = 1;
					if (x->stop)
						rc = 1;
				}
			}
		if (rc || (running == 0 && !tick->hold))
			break;
		now_ms = clock_mono_us() / 1000;
		if (now_ms >= until_ms)
			break;
		if (now_ms >= next_tick) {
			if (tick->fn && tick->fn(tick->ctx) < 0) {
				rc = 1;
				break;
			}
			next_tick = now_ms + tick->every_ms;
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
		buf_free(&l[i].body);
		buf_free(&l[i].lines);
		if (l[i].sse_on)
			sse_parser_free(&l[i].sse);
	}
	if (multi)
		curl_multi_cleanup(multi);
	free(l);
	return rc;
}
