/* upstream — the MCP client side of federation, over libcurl. A pool (one per worker)
 * holds one multi handle, whose connection cache keeps the connections, and per
 * upstream an easy handle, the session the upstream gave the gateway and those it gave
 * callers without a session of their own, each with its negotiated protocol version.
 * Here: the pool, and the lifecycle of sessions (initialize, requests, notifications,
 * cancellation, DELETE); one POST is upstream_post.c's, a standalone stream
 * upstream_listen.c's. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "upstream_pool.h"

/* Versions the gateway speaks as a client, newest first. */
static const char *const versions[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL };

struct upstream_pool *
upstream_pool_new(void)
{
	return calloc(1, sizeof(struct upstream_pool));	/* libcurl starts on first use */
}

static void
session_forget(struct up_session *s)
{
	free(s->session);
	s->session = NULL;
	s->version[0] = '\0';
	json_decref(s->caps);
	s->caps = NULL;
	s->ready = 0;
}

/* Every session of c (its URL changed, or the pool goes). */
static void
conn_forget(struct up_conn *c)
{
	size_t i;

	session_forget(&c->own);
	for (i = 0; i < c->n_callers; i++)
		session_forget(&c->callers[i]);
	c->n_callers = 0;
	c->stateless = 0;
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

void
upstream_pool_on_wait(struct upstream_pool *p, void (*fn)(void *ctx, int64_t waited_ms), void *ctx)
{
	p->on_wait = fn;
	p->on_wait_ctx = ctx;
}

/* The pool's entry for an upstream; a changed URL starts over with a new session. */
struct up_conn *
upstream_conn(struct upstream_pool *p, const struct cfg_upstream *up)
{
	struct up_conn *c, *nc;
	char *url;
	size_t i;

	for (i = 0; i < p->n; i++) {
		c = &p->conns[i];
		if (strcmp(c->name, up->s.name) != 0)
			continue;
		if (strcmp(c->url, up->url) != 0) {	/* (the same for url: the pool's) */
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
	/* The pool owns what its connections hold (upstream_pool_free); gcc -fanalyzer
	 * takes strings stored in the realloc'd array for leaks. */
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

/* q made afresh for a message on a session: the pool's s, else (NULL) the call's own
 * (its version, else the newest); sent by deadline_ms. On the pool's stateless
 * session with an upstream (stateless()), a request of that revision. */
static void
post_on(struct post *q, const struct upstream_call *call, const struct up_session *s, int64_t deadline_ms)
{
	memset(q, 0, sizeof(*q));
	q->session = s ? s->session : call->session_id;
	q->version = s ? s->version : call->version ? call->version : UPSTREAM_CLIENT_VERSION;
	q->deadline_ms = deadline_ms;
	if (s && strcmp(s->version, UPSTREAM_MODERN_VERSION) == 0) {
		q->session = NULL;
		q->version = UPSTREAM_MODERN_VERSION;
		q->modern = 1;
		q->client_caps = call->client_caps;
		q->log_level = call->log_level;
	}
}

/* The lifecycle on a new session: initialize (with the client capabilities caps),
 * then notifications/initialized, by the call's deadline, into s (its who, ready and
 * used are left as they are). 0 with s->session (malloc'd; NULL when the upstream keeps
 * none), s->version and s->caps (a new reference); -1 with err, s->session and s->caps
 * NULL.
 * Long: the lifecycle's two messages (initialize, whose version and session are
 * checked, then notifications/initialized), with one cleanup of what initialize
 * returned. */
static int
handshake(struct upstream_pool *p, struct up_conn *c, const struct upstream_call *call,
    json_t *caps, struct up_session *s, struct gw_error *err)
{
	const char *name = call->up->s.name, *pv;
	json_t *params, *id, *resp = NULL, *result;
	int64_t deadline_ms = upstream_deadline(call, call->up->timeout_ms);
	struct post q;
	size_t i;
	int rc = -1;

	s->session = NULL;
	s->caps = NULL;
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
	q.deadline_ms = deadline_ms;
	if (upstream_post(p, c, call, &q, &resp, err) < 0)
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
	if (q.session_got[0] && (s->session = strdup(q.session_got)) == NULL) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: out of memory", name);
		goto out;
	}
	snprintf(s->version, sizeof(s->version), "%s", versions[i]);
	s->caps = json_is_object(json_object_get(result, "capabilities")) ?
	    json_incref(json_object_get(result, "capabilities")) : json_object();

	post_on(&q, call, s, deadline_ms);
	q.method = "notifications/initialized";
	if (upstream_post(p, c, call, &q, NULL, err) < 0)
		goto out;
	rc = 0;
out:
	if (rc < 0) {
		free(s->session);
		s->session = NULL;
		json_decref(s->caps);
		s->caps = NULL;
	}
	json_decref(resp);
	json_decref(params);
	json_decref(id);
	return rc;
}

/* s made the pool's session with a stateless upstream: nothing to open there. */
static void
stateless(struct up_conn *c, struct up_session *s, json_t *caps)
{
	session_forget(s);
	snprintf(s->version, sizeof(s->version), "%s", UPSTREAM_MODERN_VERSION);
	s->caps = caps;
	s->ready = 1;
	c->modern = 1;
	c->stateless = 1;
}

/* server/discover: 1 when the upstream speaks UPSTREAM_MODERN_VERSION (s is then the
 * pool's stateless session, with the capabilities discovered), 0 when it does not
 * (whatever it answered, discovery listing that revision aside, or no answer within
 * UPSTREAM_DISCOVER_MS: a server of older revisions may leave a method it does not
 * know unanswered; the pool then opens sessions), -1 with err when it could not be
 * asked (down, no credential). */
static int
discover(struct upstream_pool *p, struct up_conn *c, struct up_session *s, const struct upstream_call *call,
    struct gw_error *err)
{
	json_t *id = json_integer(++p->next_id), *resp = NULL, *result, *v;
	struct post q;
	size_t i;
	int rc = 0;

	if (id == NULL) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: out of memory", call->up->s.name);
		return -1;
	}
	memset(&q, 0, sizeof(q));
	q.method = "server/discover";
	q.id = id;
	q.version = UPSTREAM_MODERN_VERSION;
	q.modern = 1;
	q.deadline_ms = upstream_deadline(call, call->up->timeout_ms < UPSTREAM_DISCOVER_MS ? call->up->timeout_ms :
	    UPSTREAM_DISCOVER_MS);
	if (upstream_post(p, c, call, &q, &resp, err) < 0)	/* an HTTP answer, or none in time: not a discovery */
		rc = q.status == 0 && err->code != GW_ECALL ? -1 : 0;
	result = json_object_get(resp, "result");
	json_array_foreach(json_object_get(result, "supportedVersions"), i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), UPSTREAM_MODERN_VERSION) == 0)
			rc = 1;
	if (rc > 0)
		stateless(c, s, json_is_object(json_object_get(result, "capabilities")) ?
		    json_incref(json_object_get(result, "capabilities")) : json_object());
	else if (rc == 0 && q.status != 0)	/* (unanswered: asked again next time) */
		c->modern = -1;
	json_decref(resp);
	json_decref(id);
	return rc;
}

/* A session the pool holds, as the gateway (no client capabilities): its own, or one
 * for a caller, by the call's deadline. Whether the upstream keeps sessions at all is
 * learnt here. A stateless upstream needs none: nothing is sent. */
static int
initialize(struct upstream_pool *p, struct up_conn *c, struct up_session *s, const struct upstream_call *call,
    struct gw_error *err)
{
	json_t *none;
	int rc;

	if (c->modern > 0) {
		stateless(c, s, NULL);
		return 0;
	}
	none = json_object();
	session_forget(s);
	rc = handshake(p, c, call, none, s, err);
	json_decref(none);
	s->ready = rc == 0;
	if (s->ready)
		c->stateless = s->session == NULL;
	/* Only the capabilities of the session the catalog is fetched on are read: the
	 * gateway's own, or a caller's at an upstream reached as the caller. */
	if (s != &c->own && !UP_PERSONAL(call->up)) {
		json_decref(s->caps);
		s->caps = NULL;
	}
	return rc;
}

/* DELETE of a session the pool holds (best effort, UPSTREAM_CLOSE_MS at most; none
 * when quiet), and forgets it. -1 when a DELETE was not taken. */
static int
session_end(struct upstream_pool *p, const struct upstream_call *call, struct up_session *s, int quiet)
{
	struct upstream_call del = { .cfg = call->cfg, .up = call->up, .now_ms = clock_mono_us() / 1000 };
	int rc = 0;

	/* A caller's session at an upstream that sees the person takes that person's token,
	 * which a pool ending without a request (a retiring thread) does not have: its
	 * DELETE would only be refused. Left to expire there. */
	if (s->who[0] && call->up && UP_PERSONAL(call->up) && call->cred == NULL)
		quiet = 1;
	if (s->ready && s->session && !quiet) {
		del.session_id = s->session;
		del.version = s->version;
		rc = upstream_close(p, &del);
	}
	session_forget(s);
	return rc;
}

/* The session a call without one of its caller's goes on: the gateway's own for the
 * gateway, and for everyone at an upstream that keeps no sessions (nothing of a
 * caller's is kept there); else the caller's own, made on first use, the least
 * recently used of UPSTREAM_CALLER_SESSIONS ended to make room. Never another
 * caller's. */
static struct up_session *
pool_session(struct upstream_pool *p, struct up_conn *c, const struct upstream_call *call)
{
	struct up_session *s, *lru = NULL;
	size_t i;

	if (call->who == NULL || call->who[0] == '\0' || c->stateless)
		s = &c->own;
	else {
		for (i = 0, s = NULL; i < c->n_callers && s == NULL; i++)
			if (strcmp(c->callers[i].who, call->who) == 0)
				s = &c->callers[i];
			else if (lru == NULL || c->callers[i].used < lru->used)
				lru = &c->callers[i];
		if (s == NULL) {
			if (c->n_callers < UPSTREAM_CALLER_SESSIONS)
				s = &c->callers[c->n_callers++];
			else
				session_end(p, call, s = lru, 0);
			memset(s, 0, sizeof(*s));
			snprintf(s->who, sizeof(s->who), "%s", call->who);	/* fits: begin() checked */
		}
	}
	s->used = ++p->uses;
	return s;
}

/* After the caller abandoned a request: tell the upstream (best effort, a second at
 * most), since a dropped stream is not a cancellation. 0 when the upstream took it. */
static int
cancel(struct upstream_pool *p, struct up_conn *c, const struct upstream_call *call, json_t *id,
    const char *session, const char *version)
{
	struct gw_error ignored;
	struct post q;
	int rc = -1;

	memset(&q, 0, sizeof(q));
	q.method = "notifications/cancelled";
	q.params = json_pack("{s:O, s:s}", "requestId", id, "reason", "the gateway's caller went away");
	q.session = session;
	q.version = version && *version ? version : UPSTREAM_CLIENT_VERSION;
	/* Its own second, even when the request's time is what ran out. */
	q.deadline_ms = clock_mono_us() / 1000 + UPSTREAM_CANCEL_MS;
	if (q.params)
		rc = upstream_post(p, c, call, &q, NULL, &ignored);
	json_decref(q.params);
	return rc;
}

/* abandoned: 0 no, 1 and notifications/cancelled taken, -1 and not taken. A person not
 * connected at a user-oauth upstream is no failure of it (connected.c says so once). */
static void
log_failure(const struct upstream_call *call, const struct gw_error *err, int64_t t0_us, int abandoned)
{
	if (err->code == GW_ECONNECT)
		return;
	log_msg(abandoned ? GW_LOG_INFO : GW_LOG_WARN, NULL, "%s (%s, after %lld ms)%s",
	    err->detail, call->method ? call->method : "?", (long long)((clock_mono_us() - t0_us) / 1000),
	    abandoned > 0 ? "; notifications/cancelled sent" : abandoned < 0 ? "; notifications/cancelled not taken" : "");
}

/* The revision the catalog found the upstream speaking, when it says: the pool's
 * sessions of the other kind are no use any more (left to expire there). */
static void
follow(struct up_conn *c, const char *revision)
{
	int modern;

	if (revision == NULL)
		return;
	modern = strcmp(revision, UPSTREAM_MODERN_VERSION) == 0 ? 1 : -1;
	if (c->modern == modern)
		return;
	if (c->modern != 0 || modern > 0)
		conn_forget(c);
	c->modern = modern;
	c->stateless = modern > 0;
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
	if (call->session_id && !upstream_session_ok(call->session_id, strlen(call->session_id))) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: an unusable session id", name);
		return NULL;
	}
	if (call->who && strlen(call->who) >= UPSTREAM_WHO_MAX) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: a caller that cannot be told apart", name);
		return NULL;
	}
	if ((c = upstream_conn(p, call->up)) == NULL) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: out of memory", name);
		return NULL;
	}
	follow(c, call->revision);
	return c;
}

int
upstream_request(struct upstream_pool *p, const struct upstream_call *call,
    json_t **response, struct gw_error *err)
{
	int64_t t0 = clock_mono_us(), deadline;
	struct up_session *s = NULL;
	struct up_conn *c;
	struct post q;
	json_t *id = NULL;
	int own = call->session_id == NULL, fresh = 0, rc = -1, abandoned = 0;

	*response = NULL;
	memset(&q, 0, sizeof(q));
	if ((c = begin(p, call, 0, err)) == NULL)
		goto out;
	deadline = upstream_deadline(call, call->up->timeout_ms);
	if ((id = call->id ? json_incref(call->id) : json_integer(++p->next_id)) == NULL) {
		gw_error_set(err, GW_EUPSTREAM, "upstream %s: out of memory", call->up->s.name);
		goto out;
	}
	if (own && !(s = pool_session(p, c, call))->ready) {
		if (initialize(p, c, s, call, err) < 0)
			goto out;
		fresh = 1;
	}
	for (;;) {
		post_on(&q, call, own ? s : NULL, deadline);
		q.method = call->method;
		q.params = call->params;
		q.name = call->mcp_name;
		q.id = id;
		q.relay = 1;
		if (upstream_post(p, c, call, &q, response, err) == 0) {
			gw_error_set(err, GW_OK, "%s", "");	/* a 404 before may have set it */
			rc = 0;
			break;
		}
		if (q.status == 404 && !own) {
			gw_error_set(err, GW_ESESSION, "upstream %s: the session ended", call->up->s.name);
			break;
		}
		if (q.status != 404 || !own || fresh || s->session == NULL)
			break;
		/* The upstream no longer knows our session (restarted, expired): once more. */
		if (initialize(p, c, s, call, err) < 0)
			break;
		fresh = 1;
	}
	if (q.abandoned && q.modern)
		abandoned = 1;	/* the stream dropped is the cancellation */
	else if (q.abandoned)
		abandoned = cancel(p, c, call, id, own ? s->session : call->session_id,
		    own ? s->version : call->version) == 0 ? 1 : -1;
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
	struct up_session *s = NULL;
	struct up_conn *c;
	struct post q;
	int own = call->session_id == NULL, rc = -1;

	if ((c = begin(p, call, 0, err)) == NULL)
		goto out;
	deadline = upstream_deadline(call, call->up->timeout_ms);
	if (own && !(s = pool_session(p, c, call))->ready && initialize(p, c, s, call, err) < 0)
		goto out;
	post_on(&q, call, own ? s : NULL, deadline);
	q.method = call->method;
	q.params = call->params;
	/* A stateless upstream has no notification of the kind (cancelling is dropping the
	 * stream; there is no initialized): nothing to send. */
	rc = q.modern ? 0 : upstream_post(p, c, call, &q, NULL, err);
out:
	if (rc < 0)
		log_failure(call, err, t0, 0);
	return rc;
}

json_t *
upstream_capabilities(struct upstream_pool *p, const struct upstream_call *call, char version[16],
    struct gw_error *err)
{
	int64_t t0 = clock_mono_us();
	struct up_session *s;
	struct up_conn *c;
	int found = 0;

	if ((c = begin(p, call, 0, err)) == NULL)
		goto fail;
	/* An upstream reached as the caller is asked on the caller's session. */
	s = UP_PERSONAL(call->up) ? pool_session(p, c, call) : &c->own;
	if (!s->ready || s->caps == NULL) {
		if (c->modern >= 0 && (found = discover(p, c, s, call, err)) < 0)
			goto fail;
		if (!found && initialize(p, c, s, call, err) < 0)
			goto fail;
	}
	if (version)
		snprintf(version, 16, "%s", s->version);
	return json_incref(s->caps);
fail:
	log_failure(call, err, t0, 0);
	return NULL;
}

json_t *
upstream_legacy_capabilities(struct upstream_pool *p, const struct upstream_call *call)
{
	struct up_session s;
	struct gw_error err;
	json_t *none = json_object(), *caps = NULL;
	struct up_conn *c;

	memset(&s, 0, sizeof(s));
	if (none && (c = begin(p, call, 1, &err)) != NULL && handshake(p, c, call, none, &s, &err) == 0) {
		caps = s.caps;
		s.caps = NULL;
		s.ready = 1;
		session_end(p, call, &s, 0);
	}
	json_decref(none);
	return caps;
}

int
upstream_open(struct upstream_pool *p, const struct upstream_call *call, json_t *client_caps,
    char **session_id, char version[16], struct gw_error *err)
{
	int64_t t0 = clock_mono_us();
	struct up_session got = { .session = NULL };
	struct up_conn *c;
	json_t *none = NULL;
	int rc = -1;

	*session_id = NULL;
	if ((c = begin(p, call, 1, err)) == NULL)
		goto out;
	if (!json_is_object(client_caps))
		client_caps = none = json_object();
	/* A stateless upstream may keep sessions for older clients too: the caller's own is
	 * then its revision's, server-to-client requests and all. One that does not (it
	 * refuses initialize) has the caller's calls made statelessly. */
	rc = handshake(p, c, call, client_caps, &got, err);
	if (rc == 0) {
		*session_id = got.session;
		memcpy(version, got.version, sizeof(got.version));
		if (c->modern <= 0)
			c->stateless = *session_id == NULL;
	} else if (c->modern > 0) {
		snprintf(version, 16, "%s", UPSTREAM_MODERN_VERSION);
		rc = 0;
	}
	json_decref(got.caps);
	json_decref(none);
out:
	if (rc < 0)
		log_failure(call, err, t0, 0);
	return rc;
}

int
upstream_close(struct upstream_pool *p, const struct upstream_call *call)
{
	struct gw_error err;
	struct up_conn *c;
	struct post q;
	int64_t deadline = call->now_ms + (call->up && call->up->timeout_ms < UPSTREAM_CLOSE_MS ?
	    call->up->timeout_ms : UPSTREAM_CLOSE_MS);

	if (call->session_id == NULL || (c = begin(p, call, 1, &err)) == NULL)
		return -1;
	post_on(&q, call, NULL, deadline);
	q.del = 1;
	if (upstream_post(p, c, call, &q, NULL, &err) < 0) {
		log_msg(GW_LOG_INFO, NULL, "%s (DELETE of a session: left to expire)", err.detail);
		return -1;
	}
	return 0;
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
	post_on(&q, call, NULL, upstream_deadline(call, call->up->timeout_ms));
	q.raw = msg;
	rc = upstream_post(p, c, call, &q, NULL, err);
out:
	if (rc < 0)
		log_failure(call, err, t0, 0);
	return rc;
}

void
upstream_pool_end(struct upstream_pool *p, const struct config *cfg)
{
	struct upstream_call call = { .cfg = cfg };
	size_t i, k;
	int quiet;

	for (i = 0; p && cfg && i < p->n; i++) {
		struct up_conn *c = &p->conns[i];

		for (k = 0, call.up = NULL; k < cfg->n_upstreams && call.up == NULL; k++)
			if (strcmp(cfg->upstreams[k].s.name, c->name) == 0 && strcmp(cfg->upstreams[k].url, c->url) == 0)
				call.up = &cfg->upstreams[k];
		if (call.up == NULL)
			continue;
		/* One DELETE not taken (the upstream down or hanging): the others would wait as
		 * long, each; they are left to expire. */
		quiet = session_end(p, &call, &c->own, 0) < 0;
		for (k = 0; k < c->n_callers; k++)
			quiet |= session_end(p, &call, &c->callers[k], quiet) < 0;
		conn_forget(c);
	}
}
