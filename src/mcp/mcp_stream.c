/* mcp_stream — the standalone stream (GET /mcp) of a session of the revisions of
 * initialize, and what that session subscribes to at the upstreams it reaches
 * statelessly.
 *
 * The stream holds a GET on each of the session's upstream sessions. An upstream of
 * 2026-07-28 reached statelessly has neither sessions nor resources/subscribe: there,
 * the session's subscriptions are kept by the gateway (the state file's subs region
 * and, with a Redis store, a Redis set `su` for every host, until the session expires),
 * and the stream holds a subscriptions/listen at each such upstream for the ones the
 * caller may still read (the policy asked again); their updates reach the caller as its
 * revision's notifications/resources/updated. The stream looks at the subscriptions
 * every STREAM_CHECK_MS and listens anew when they changed (a subscribe POSTed to any
 * process or host). It also tells the gateway's own lists changing (mcp_watch.c), as
 * a 2026-07-28 listen does: an upstream's list_changed makes the host fetch its catalog
 * again, and the caller hears of a list of the gateway's that changed. */
#include "autoconf.h"

#include <string.h>

#include "clock.h"
#include "log.h"
#include "mcp_call.h"
#include "negotiate.h"
#include "rstore.h"
#include "session.h"

#define STREAM_CHECK_MS		1000	/* how often the session's subscriptions are looked at */
#define STREAM_LISTEN_ID	"mcpgate-stream"	/* the id of the listens the stream holds */
#define META_SUBSCRIPTION	"io.modelcontextprotocol/subscriptionId"

/* The stream's state, f->ctx of its federated calls: first the element whose exchange
 * mcp_gate_upstream reads. */
struct stream {
	struct element el;
	struct mcp_watch watch;		/* the gateway's lists, all three */
	char uris[SUBS_TEXT_MAX];	/* the subscriptions the listens were opened for */
	int changed;			/* they changed: listen anew */
	int64_t said_us;		/* the last keep-alive comment */
	int64_t checked_us;		/* the last look at the subscriptions */
};

/* The session's subscriptions at stateless upstreams, one a line, into out: 0, or -1
 * when they cannot be read now. Redis first (another host may have taken one); the
 * host's while it does not answer. */
static int
subs_now(const struct exchange *x, char *out, size_t outlen)
{
	const struct mcp_env *env = x->env;
	unsigned char key[RSTORE_KEY_BYTES];

	if (env->rs) {
		session_tomb_key(env->shared_key, x->req->session_id, key);
		if (rstore_members(env->rs, x->cfg, &(struct rs_key){ RS_SUBS, key }, out, outlen,
		    clock_mono_us() / 1000) == 0)
			return 0;
	}
	if (env->session_key == NULL)
		return -1;
	session_tomb_key(env->session_key, x->req->session_id, key);
	return subs_get(env->subs, key, out, outlen, clock_wall());
}

int
mcp_stream_keep(struct fed_call *f, const char *uri, int on)
{
	const struct element *el = f->ctx;
	const struct exchange *x = el->x;
	const struct mcp_env *env = x->env;
	unsigned char key[RSTORE_KEY_BYTES];
	int64_t now = x->req->now;
	int kept = 0, rc = 0;

	if (x->sess == NULL || x->req->session_id == NULL || uri == NULL) {
		gw_error_set(&f->err, GW_EINVALID, "resources/subscribe needs a session with the gateway (initialize)");
		return -1;
	}
	if (env->session_key && env->subs) {
		session_tomb_key(env->session_key, x->req->session_id, key);
		if ((rc = subs_edit(env->subs, key, uri, on, x->sess->exp, now)) == 0)
			kept = 1;
	}
	if (env->rs && rc != -2) {
		session_tomb_key(env->shared_key, x->req->session_id, key);
		if (rstore_member(env->rs, x->cfg, &(struct rs_key){ RS_SUBS, key },
		    &(struct rs_member){ uri, on, (x->sess->exp - now + 1) * 1000 }, clock_mono_us() / 1000) == 0)
			kept = 1;
		else if (kept)
			log_warn(x->req->id, "this session's subscription is kept on this host only: Redis does not answer");
	}
	if (rc == -2) {
		gw_error_set(&f->err, GW_EINVALID, "no room for another subscription of this session (at most %d bytes "
		    "of URIs, and the gateway's room for sessions' subscriptions)", SUBS_TEXT_MAX - 1);
		return -1;
	}
	if (!kept) {
		gw_error_set(&f->err, GW_EINTERNAL, "the session's subscription cannot be kept now");
		return -1;
	}
	return 0;
}

/* A list change of the gateway's (mcp_watch_now's tell). */
static int
stream_told(void *ctx, const char *method)
{
	struct stream *st = ctx;
	json_t *msg = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);
	int rc = msg ? response_stream_message(st->el.x->resp, msg) : -1;

	json_decref(msg);
	return rc < 0 ? -1 : 0;
}

/* What the streams bring (f->on_msg), for the caller of an older revision: a listen's
 * acknowledgement is the gateway's, not the caller's; an upstream's list change is
 * looked at in the gateway's lists; an update loses the listen's tag. */
static int
stream_msg(void *ctx, json_t *msg)
{
	struct stream *st = ctx;
	const char *m = json_string_value(json_object_get(msg, "method"));
	json_t *meta = json_object_get(json_object_get(msg, "params"), "_meta");
	int i;

	if (m && strcmp(m, "notifications/subscriptions/acknowledged") == 0)
		return 0;
	if (json_object_get(msg, "id") == NULL && (i = mcp_watch_upstream(st->el.x, m)) >= 0)
		return mcp_watch_now(&st->watch, st->el.x, i, stream_told, st);
	if (json_is_object(meta) && json_object_get(meta, META_SUBSCRIPTION)) {
		json_object_del(meta, META_SUBSCRIPTION);
		if (json_object_size(meta) == 0)
			json_object_del(json_object_get(msg, "params"), "_meta");
	}
	return response_stream_message(st->el.x->resp, msg) < 0 ? -1 : 0;
}

/* Every STREAM_CHECK_MS: a keep-alive comment now and then, and the subscriptions looked
 * at (-1 ends the listens: the caller gone, or listen anew). */
static int
stream_tick(void *ctx)
{
	struct stream *st = ctx;
	char now_uris[SUBS_TEXT_MAX];
	int64_t now_us = clock_mono_us();

	if (now_us - st->said_us >= MCP_LISTEN_TICK_MS * 1000LL) {
		if (response_stream_comment(st->el.x->resp, "keep-alive") < 0)
			return -1;
		st->said_us = now_us;
	}
	if (subs_now(st->el.x, now_uris, sizeof(now_uris)) == 0 && strcmp(now_uris, st->uris) != 0) {
		st->changed = 1;
		return -1;
	}
	return mcp_watch_now(&st->watch, st->el.x, -1, stream_told, st);
}

/* What the listens ask of each stateless upstream: its list changes, and the
 * subscriptions st->uris it owns. A new object (NULL: none). */
static json_t *
stream_by(struct stream *st, struct fed_call *f)
{
	json_t *uris = json_array(), *accepted = json_array(), *lists = json_object(), *by = NULL;
	char *p, *end;
	size_t i;

	for (i = 0; i < MCP_WATCH_N; i++)
		json_object_set_new(lists, mcp_watch_filter(i), json_true());
	for (p = st->uris; uris && *p && (end = strchr(p, '\n')) != NULL; p = end + 1)
		json_array_append_new(uris, json_stringn(p, (size_t)(end - p)));
	if (uris && accepted && lists)
		by = fed_listening(f, lists, uris, accepted);
	json_decref(uris);
	json_decref(accepted);
	json_decref(lists);
	return by;
}

/* Long: the stream's set-up (the checks, the slot, the exchange the policy reads), then
 * its loop of listens, each ended by a change of the subscriptions and begun anew, and
 * one cleanup. */
void
mcp_listen(struct req_ctx *rc)
{
	const struct mcp_env *env = rc->slot[REQ_SLOT_MCP];
	struct request *req = rc->req;
	struct response *resp = rc->resp;
	struct exchange x = { .rc = rc, .env = env, .cfg = rc->cfg, .caller = rc->caller, .req = req, .resp = resp,
		.vis_kind = -1 };
	struct stream st = { .el = { .x = &x } };
	/* (held open with no upstream stream: a list may change, a subscription come) */
	const struct upstream_tick every = { stream_tick, &st, STREAM_CHECK_MS, 1 };
	struct session s;
	struct fed_call f;
	json_t *by, *id = json_string(STREAM_LISTEN_ID);
	int64_t until_ms = clock_mono_us() / 1000 + MCP_LISTEN_MAX_MS;
	int slot = 0;

	memset(&s, 0, sizeof(s));
	if (mcp_session_route(rc) < 0)
		goto out;
	if (!(negotiate_accept(req->accept) & NEGOTIATE_SSE)) {
		response_set_error(resp, GW_EBADREQUEST, "GET /mcp needs Accept: text/event-stream");
		goto out;
	}
	if (mcp_check_session(rc, &s) < 0) {
		response_set_error(resp, GW_ESESSION, NULL);
		goto out;
	}
	x.sess = &s;
	policy_caller_init(&x.pc, rc->cfg, &rc->caller->claims);
	policy_profile(&x.pc, x.profile);
	mcp_fed_init(&x, &f);
	f.doc = mcp_catalog(&x);
	if (json_object_size(catalog_upstreams(f.doc)) == 0) {
		response_set_error(resp, GW_EMETHOD, "no stream for this session: no upstream to listen to");
		response_set_header(resp, "Allow", "POST, DELETE, OPTIONS");
		goto out;
	}
	if (env->listeners == NULL || __atomic_add_fetch(env->listeners, 1, __ATOMIC_ACQ_REL) > env->listen_max) {
		if (env->listeners)
			__atomic_sub_fetch(env->listeners, 1, __ATOMIC_ACQ_REL);
		log_info(req->id, "stream: every slot of this process is taken (%ld)", env->listen_max);
		response_set_error(resp, GW_EMETHOD, "no stream slot free; calls still stream their own messages");
		response_set_header(resp, "Allow", "POST, DELETE, OPTIONS");
		goto out;
	}
	slot = 1;
	f.on_msg = stream_msg;
	f.ctx = &st;
	f.client = resp->sink;
	f.id = id;
	f.gate = mcp_gate_upstream;
	/* A first comment right away: a front (nginx) may hold headers back until the
	 * body begins, and a client waits for them before it sends anything else. */
	if (response_stream_open(resp) < 0 || response_stream_comment(resp, "stream") < 0)
		goto out;
	st.said_us = clock_mono_us();
	st.watch.asked[MCP_WATCH_TOOLS] = st.watch.asked[MCP_WATCH_PROMPTS] = st.watch.asked[MCP_WATCH_RESOURCES] = 1;
	mcp_watch_begin(&st.watch, &x, f.doc);
	do {
		if (st.changed) {	/* listening anew: to the catalog as it is now */
			free(x.vis);
			x.vis = NULL;
			x.n_vis = 0;
			x.vis_kind = -1;
			json_decref(x.doc);
			x.doc = NULL;
			x.doc_mine = 0;
			f.doc = mcp_catalog(&x);
		}
		st.changed = 0;
		if (subs_now(&x, st.uris, sizeof(st.uris)) < 0)
			st.uris[0] = '\0';
		by = stream_by(&st, &f);
		f.now_ms = clock_mono_us() / 1000;
		fed_listen(&f, by, &every, until_ms);
		json_decref(by);
	} while (st.changed && clock_mono_us() / 1000 < until_ms && !sink_gone(resp->sink, clock_mono_us()));
out:
	if (slot)
		__atomic_sub_fetch(env->listeners, 1, __ATOMIC_ACQ_REL);
	free(x.vis);
	json_decref(x.doc);
	json_decref(id);
	session_clear(&s);
}
