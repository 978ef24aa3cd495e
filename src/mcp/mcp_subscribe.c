/* mcp_subscribe — subscriptions/listen (2026-07-28): a caller's stream of change
 * notifications, each tagged with the listen request's id
 * (_meta["io.modelcontextprotocol/subscriptionId"]), the first the acknowledgement of
 * what will come. The gateway's own lists changing (its catalog built again with other
 * records of a kind the caller asked about: tools, prompts, resources), and the
 * resources the caller asked for that it may read, at the upstreams of 2026-07-28 that
 * own them (their own listen streams, federate.c's fed_listen). An upstream telling
 * its lists changed makes the gateway fetch its catalog again at once; the caller hears
 * of it when the gateway's list changed. Like the standalone stream, it holds a worker
 * thread (one of the process's stream slots) for MCP_LISTEN_MAX_MS at most; the caller
 * listens again. */
#include "autoconf.h"

#include <string.h>

#include "clock.h"
#include "log.h"
#include "mcp_call.h"
#include "negotiate.h"
#include "secret.h"

#define META_SUBSCRIPTION	"io.modelcontextprotocol/subscriptionId"
#define LISTEN_URIS_MAX		256	/* resources one listen may ask for */
#define LISTEN_CHECK_MS		250	/* how often the catalog is looked at (its generation: cheap) */

/* f->ctx of the listen's federated calls: first the element (what mcp_gate_upstream
 * reads there), a copy of the listen request's. */
struct listening {
	struct element el;
	struct mcp_watch watch;			/* the gateway's lists asked about */
	json_t *uris;				/* the resources listened to */
	json_t *accepted;			/* what the acknowledgement says */
	int64_t said_us;			/* the last keep-alive comment */
	size_t waiting;				/* upstream streams not acknowledged yet */
	int acked;				/* ours was sent */
};

/* A notification for the caller, tagged: 0, or -1 when the stream is gone. Steals msg. */
static int
tell(struct listening *l, json_t *msg)
{
	json_t *params = json_object_get(msg, "params"), *meta;
	int rc;

	if (!json_is_object(params))
		json_object_set_new(msg, "params", params = json_object());
	if (!json_is_object(meta = json_object_get(params, "_meta")))
		json_object_set_new(params, "_meta", meta = json_object());
	json_object_set(meta, META_SUBSCRIPTION, l->el.id);
	rc = response_stream_message(l->el.x->resp, msg);
	json_decref(msg);
	return rc < 0 ? -1 : 0;
}

/* Our acknowledgement, once, before anything else: when every upstream stream is
 * acknowledged (so that what the caller does next is heard there), or at the first
 * tick, or before the first thing to tell. 0, or -1 when the stream is gone. */
static int
ack(struct listening *l)
{
	if (l->acked)
		return 0;
	l->acked = 1;
	return tell(l, json_pack("{s:s, s:s, s:{s:O}}", "jsonrpc", "2.0", "method",
	    "notifications/subscriptions/acknowledged", "params", "notifications", l->accepted));
}

/* A list change of the gateway's (mcp_watch_now's tell), after our acknowledgement. */
static int
told(void *ctx, const char *method)
{
	struct listening *l = ctx;

	if (ack(l) < 0)
		return -1;
	return tell(l, json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method));
}

/* What an upstream's listen stream brings (f->on_msg): a resource the caller listens to
 * updated, told; its lists changed, the catalog fetched again and looked at. */
static int
upstream_msg(void *ctx, json_t *msg)
{
	struct listening *l = ctx;
	const char *m = json_string_value(json_object_get(msg, "method"));
	json_t *uri = json_object_get(json_object_get(msg, "params"), "uri"), *u;
	size_t k;
	int i;

	if (json_object_get(msg, "id"))
		return UPSTREAM_DECLINE;
	if (m && strcmp(m, "notifications/subscriptions/acknowledged") == 0)
		return l->waiting > 0 && --l->waiting == 0 ? ack(l) : 0;
	if (m && strcmp(m, "notifications/resources/updated") == 0 && json_is_string(uri)) {
		json_array_foreach(l->uris, k, u)
			if (json_equal(u, uri))
				return ack(l) < 0 ? -1 :
				    tell(l, json_pack("{s:s, s:s, s:{s:O}}", "jsonrpc", "2.0", "method", m, "params", "uri", uri));
		return 0;
	}
	/* Fetched again; told the caller whether or not the gateway's list differs: the
	 * upstream's word that it may (an upstream it lists). */
	if ((i = mcp_watch_upstream(l->el.x, m)) >= 0)
		return mcp_watch_now(&l->watch, l->el.x, i, told, l);
	return 0;
}

static int
tick(void *ctx)
{
	struct listening *l = ctx;

	int64_t now_us = clock_mono_us();

	if (ack(l) < 0)
		return -1;
	if (now_us - l->said_us >= MCP_LISTEN_TICK_MS * 1000LL) {
		if (response_stream_comment(l->el.x->resp, "keep-alive") < 0)
			return -1;
		l->said_us = now_us;
	}
	return mcp_watch_now(&l->watch, l->el.x, -1, told, l);
}

/* The listen's filter from params.notifications into l and accepted; 0, or -1 with err. */
static int
filter(struct listening *l, json_t *asked, json_t *accepted, struct gw_error *err)
{
	json_t *uris = json_object_get(asked, "resourceSubscriptions"), *u;
	size_t i;

	if (!json_is_object(asked) || (uris && !json_is_array(uris))) {
		gw_error_set(err, GW_EPARAMS, "subscriptions/listen takes params.notifications, an object "
		    "(resourceSubscriptions an array)");
		return -1;
	}
	json_array_foreach(uris, i, u)
		if (!json_is_string(u) || json_string_length(u) > CATALOG_URI_MAX || i >= LISTEN_URIS_MAX) {
			gw_error_set(err, GW_EPARAMS, "resourceSubscriptions: at most %d URIs, each a string of at most %d "
			    "bytes", LISTEN_URIS_MAX, CATALOG_URI_MAX);
			return -1;
		}
	for (i = 0; i < MCP_WATCH_N; i++)
		if ((l->watch.asked[i] = json_is_true(json_object_get(asked, mcp_watch_filter(i)))))
			json_object_set_new(accepted, mcp_watch_filter(i), json_true());
	return 0;
}

/* One more listen of the caller who on the host, until until_ms: 1 with *ticket, 0
 * when it holds MCP_LISTENS_PER_CALLER already, -1 when that cannot be told now (the
 * state unusable: let it listen, the process's stream slots still bound it). */
static int
listen_lease(const struct mcp_env *env, const char *who, unsigned char key[LEASES_KEY_BYTES], int64_t until_ms,
    unsigned *ticket)
{
	secret_digest(who, strlen(who), key, LEASES_KEY_BYTES);
	return leases_take(env->leases, key, MCP_LISTENS_PER_CALLER, until_ms, clock_wall_ms(), ticket);
}

/* Long: the checks (era, stream, filter, a stream slot), the acknowledgement, then one
 * wait over the upstreams' streams and the ticks, and its one release. */
json_t *
mcp_subscribe(struct element *el, json_t *params, struct gw_error *err)
{
	struct exchange *x = el->x;
	struct listening l = { .el = *el };
	json_t *accepted = json_object(), *asked = json_object_get(params, "notifications"), *by = NULL, *result = NULL;
	const struct upstream_tick every = { tick, &l, LISTEN_CHECK_MS, 1 };
	struct fed_call f;
	unsigned char key[LEASES_KEY_BYTES];
	unsigned ticket = 0;
	int leased = 0;

	l.uris = json_array();
	if (!x->stream_ok || x->in_batch) {
		gw_error_set(err, GW_EINVALID, "subscriptions/listen answers with an event stream: Accept must allow "
		    "text/event-stream");
		goto out;
	}
	if (filter(&l, asked, accepted, err) < 0)
		goto out;
	mcp_fed_init(x, &f);
	if ((leased = listen_lease(x->env, f.who, key, clock_wall_ms() + MCP_LISTEN_MAX_MS + 60000, &ticket)) == 0) {
		gw_error_set(err, GW_ERATELIMIT, "Too many subscriptions/listen streams of yours at once (%d): "
		    "close one first", MCP_LISTENS_PER_CALLER);
		goto out;
	}
	if (x->env->listeners == NULL || __atomic_add_fetch(x->env->listeners, 1, __ATOMIC_ACQ_REL) > x->env->listen_max) {
		if (x->env->listeners)
			__atomic_sub_fetch(x->env->listeners, 1, __ATOMIC_ACQ_REL);
		gw_error_set(err, GW_EINTERNAL, "no stream slot free in this process: listen again later");
		goto out;
	}
	f.doc = mcp_catalog(x);
	f.on_msg = upstream_msg;
	f.ctx = &l;
	f.client = x->resp->sink;
	f.id = el->id;
	f.gate = mcp_gate_upstream;
	f.client_caps = json_object_get(json_object_get(params, "_meta"), MCP_META_CAPS);
	/* (accepted holds the list changes alone so far: what each upstream is asked too) */
	by = fed_listening(&f, accepted, json_object_get(asked, "resourceSubscriptions"), l.uris);
	if (json_array_size(l.uris) > 0)
		json_object_set(accepted, "resourceSubscriptions", l.uris);
	/* What the lists are now is what a change is told against. */
	mcp_watch_begin(&l.watch, x, f.doc);
	l.accepted = accepted;
	l.waiting = json_object_size(by);
	l.said_us = clock_mono_us();
	if (response_stream_open(x->resp) == 0 && (l.waiting > 0 || ack(&l) == 0))
		fed_listen(&f, by, &every, clock_mono_us() / 1000 + MCP_LISTEN_MAX_MS);
	__atomic_sub_fetch(x->env->listeners, 1, __ATOMIC_ACQ_REL);
	result = json_pack("{s:{s:O}}", "_meta", META_SUBSCRIPTION, el->id);
out:
	if (leased == 1)
		leases_give(x->env->leases, key, ticket);
	json_decref(by);
	json_decref(accepted);
	json_decref(l.uris);
	return result;
}
