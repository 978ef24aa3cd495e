/* federate — route a request to its upstream, pass it on, map the answer. */
#include "autoconf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "clock.h"
#include "federate.h"
#include "method.h"
#include "pinning.h"
#include "str.h"
#include "uritemplate.h"
#include "url.h"

/* The row of a method federation passes on, or NULL. */
static const struct method *
route_of(const char *method)
{
	const struct method *m = method_find(method);

	return m && m->route != ROUTE_NONE ? m : NULL;
}

int
fed_relays(const char *method)
{
	return method && route_of(method) != NULL;
}

static json_t *failed(struct fed_call *f, enum gw_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static json_t *
failed(struct fed_call *f, enum gw_err code, const char *fmt, ...)
{
	va_list ap;

	f->err.code = code;
	f->err.rpc = 0;
	va_start(ap, fmt);
	vsnprintf(f->err.detail, sizeof(f->err.detail), fmt, ap);
	va_end(ap);
	return NULL;
}

/* --- routing ----------------------------------------------------------------------- */

/* The one upstream offering capability, or NULL: none, several, or one left out of the
 * catalog (down: it might offer it, and what was meant for it must not go to another). */
static const char *
sole_offer(json_t *doc, const char *capability)
{
	json_t *st;
	const char *name, *found = NULL;
	int n = 0;

	json_object_foreach(catalog_upstreams(doc), name, st) {
		if (!json_is_true(json_object_get(st, "ok")))
			return NULL;
		if (json_object_get(json_object_get(st, "caps"), capability) && n++ == 0)
			found = name;
	}
	return n == 1 ? found : NULL;
}

/* The upstream, down now, that a name or URI of kind is bound to (catalog_held; for a
 * URI, also a held template it expands), or NULL. */
static const char *
held_for(json_t *doc, enum catalog_kind kind, const char *key)
{
	json_t *t, *v;
	const char *tmpl, *up;

	if ((up = catalog_held(doc, kind, key)) != NULL || kind != CATALOG_RESOURCES)
		return up;
	if ((up = catalog_held(doc, CATALOG_TEMPLATES, key)) != NULL)
		return up;
	t = catalog_held_all(doc, CATALOG_TEMPLATES);
	json_object_foreach(t, tmpl, v)
		if (uritemplate_matches(tmpl, key))
			return json_string_value(json_array_get(v, 0));
	return NULL;
}

/* Of the upstreams that offer record ix of kind, the first the caller's gate passes for
 * r's method and key (asked quietly), else the first of all, which then answers the
 * caller's refusal; *there is its name for the record. A name (a tool's, a prompt's) is
 * its first upstream's alone: the record listed is that one's, and another's of the
 * same name is another thing; a URI names the same resource wherever it is read. NULL
 * when there is no such record. */
static const char *
pick_owner(struct fed_call *f, const struct method *r, enum catalog_kind kind, long ix, const char *key,
    const char **there)
{
	const struct cfg_upstream *u;
	const char *up, *orig, *first = NULL;
	size_t alt;

	for (alt = 0; catalog_route_alt(f->doc, kind, ix, alt, &up, &orig) == 0; alt++) {
		if (alt == 0) {
			first = up;
			*there = orig;
			if (catalog_kinds[kind].prefixed)
				break;
		}
		if (f->gate == NULL ||
		    ((u = config_upstream(f->cfg, up)) != NULL && f->gate(f, r->name, u, kind, key, 0) == FED_PASS)) {
			*there = orig;
			return up;
		}
	}
	return first;
}

/* The upstream that owns uri: a listed resource, else a template (exact, for completion
 * references, or expanded), else, unless it is held for an upstream that is down, the
 * only upstream that offers resources at all. *held: the upstream it is held for. */
static const char *
owner_of_uri(struct fed_call *f, const struct method *r, const char *uri, const char **held)
{
	const char *tmpl, *there;
	long ix;
	size_t i, n = catalog_count(f->doc, CATALOG_TEMPLATES);

	*held = NULL;
	if ((ix = catalog_find_in(f->doc, CATALOG_RESOURCES, uri)) >= 0)
		return pick_owner(f, r, CATALOG_RESOURCES, ix, uri, &there);
	if ((ix = catalog_find_in(f->doc, CATALOG_TEMPLATES, uri)) >= 0)
		return pick_owner(f, r, CATALOG_TEMPLATES, ix, uri, &there);
	if ((*held = held_for(f->doc, CATALOG_RESOURCES, uri)) != NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		tmpl = catalog_key(f->doc, CATALOG_TEMPLATES, i);
		if (uritemplate_matches(tmpl, uri))
			return pick_owner(f, r, CATALOG_TEMPLATES, (long)i, uri, &there);
	}
	return sole_offer(f->doc, "resources");
}

/* An exposed name of kind to its upstream; *name_there is the name to send. *held: the
 * upstream, down now, it is held for. */
static const char *
owner_of_name(struct fed_call *f, const struct method *r, enum catalog_kind kind, const char *name,
    const char **name_there, const char **held)
{
	long ix = catalog_find_in(f->doc, kind, name);

	*held = ix < 0 ? held_for(f->doc, kind, name) : NULL;
	return ix >= 0 ? pick_owner(f, r, kind, ix, name, name_there) : NULL;
}

/* The upstream for one request, and the params to send it (a new reference); NULL
 * with f->err when there is none, or the caller's gate refuses it.
 * Long: one way to find the upstream per route kind (a name, a URI, a reference, all),
 * then the checks every kind shares, in their order (an ambiguous URI, a held name,
 * the owner, the caller's gate, the name upstream). */
static const struct cfg_upstream *
resolve(struct fed_call *f, const struct method *r, json_t *params, json_t **out)
{
	json_t *ref = json_object_get(params, "ref"), *where = params, *pin;
	const char *key = NULL, *owner = NULL, *there = NULL, *type, *unknown = r->unknown, *why, *held = NULL;
	const struct cfg_upstream *up = NULL;
	enum catalog_kind kind = r->kind;
	enum gw_err code = GW_EPARAMS;
	int gate = FED_PASS;

	*out = NULL;
	switch (r->route) {
	case ROUTE_BY_NAME:
		if ((key = json_string_value(json_object_get(params, "name"))) == NULL)
			return failed(f, GW_EPARAMS, "%s needs params.name", r->name), NULL;
		/* A tool's and a prompt's arguments are a JSON object: nothing else goes upstream. */
		if (json_object_get(params, "arguments") && !json_is_object(json_object_get(params, "arguments")))
			return failed(f, GW_EPARAMS, "%s: params.arguments must be an object",
			    r->name), NULL;
		owner = owner_of_name(f, r, r->kind, key, &there, &held);
		break;
	case ROUTE_BY_URI:
		if ((key = json_string_value(json_object_get(params, "uri"))) == NULL)
			return failed(f, GW_EPARAMS, "%s needs params.uri", r->name), NULL;
		owner = owner_of_uri(f, r, key, &held);
		kind = CATALOG_RESOURCES;
		code = GW_ENORESOURCE;
		unknown = "Resource not found";
		break;
	case ROUTE_BY_REF:
		type = json_string_value(json_object_get(ref, "type"));
		if (type && strcmp(type, "ref/prompt") == 0 &&
		    (key = json_string_value(json_object_get(ref, "name"))) != NULL) {
			owner = owner_of_name(f, r, CATALOG_PROMPTS, key, &there, &held);
			kind = CATALOG_PROMPTS;
			where = ref;
			unknown = "Unknown prompt";
		} else if (type && strcmp(type, "ref/resource") == 0 &&
		    (key = json_string_value(json_object_get(ref, "uri"))) != NULL) {
			owner = owner_of_uri(f, r, key, &held);
			kind = CATALOG_RESOURCES;
			unknown = "Unknown resource reference";
		} else
			return failed(f, GW_EPARAMS, "%s", "completion/complete needs params.ref, "
			    "a ref/prompt with a name or a ref/resource with a uri"), NULL;
		break;
	case ROUTE_NONE:
	case ROUTE_TO_ALL:
		return NULL;
	}
	/* The policy decides on a URI as a string, and the same string goes upstream: none
	 * that an upstream could resolve to another resource (a dot segment, an encoded
	 * '/'). */
	if (kind == CATALOG_RESOURCES && (why = url_resource_ambiguous(key)) != NULL)
		return failed(f, GW_EPARAMS, "%s: the URI has %s (refused: an upstream could resolve it to "
		    "another resource than the one named)", r->name, why), NULL;
	/* Held for an upstream that is down: refused, never passed to another that offers the
	 * same name (what happened, not where). Still the policy's: one the caller may not
	 * have is answered as unknown. */
	if (owner == NULL && held && (up = config_upstream(f->cfg, held)) != NULL) {
		if (f->gate && (gate = f->gate(f, r->name, up, kind, key, 1)) == FED_DENIED)
			return NULL;
		if (gate == FED_PASS && (pin = pinning_held(f->doc, kind, key)) != NULL) {
			pinning_refusal(pin, key, &f->err);	/* a tool's, prompt's or template's, as listed */
			return NULL;
		}
		if (gate == FED_PASS)
			return failed(f, GW_EUPSTREAM, "%s: unavailable: the upstream that offers it is down, or over its "
			    "share of the catalog", key), NULL;
		return failed(f, code, "%s", unknown), NULL;
	}
	if (owner && (up = config_upstream(f->cfg, owner)) == NULL)
		return failed(f, GW_EINTERNAL, "%s", "the catalog names an upstream the configuration lacks"), NULL;
	if (up && f->gate && (gate = f->gate(f, r->name, up, kind, key, 1)) == FED_DENIED)
		return NULL;
	if (up == NULL || gate == FED_HIDDEN)
		return failed(f, code, "%s", unknown), NULL;
	/* A name has another spelling upstream (its prefix): params as sent, renamed. */
	if (there) {
		*out = json_deep_copy(params);
		json_object_set_new(where == ref ? json_object_get(*out, "ref") : *out, "name", json_string(there));
	} else
		*out = json_incref(params);
	if (*out == NULL)
		return failed(f, GW_EINTERNAL, "%s", "out of memory"), NULL;
	return up;
}

/* The caller's own session with up, when it has one: call's session_id, version, and
 * the caller's request id; else whom the pool's session must be for. */
static void
caller_session(const struct fed_call *f, const struct cfg_upstream *up, struct upstream_call *call)
{
	json_t *entry = json_object_get(f->sessions, up->s.name);

	call->session_id = json_string_value(json_array_get(entry, 0));
	call->version = json_string_value(json_array_get(entry, 1));
	call->id = call->session_id ? f->id : NULL;
	call->who = f->who;
	call->cred = f->cred;
	call->revision = json_string_value(json_object_get(json_object_get(catalog_upstreams(f->doc), up->s.name),
	    "version"));
	call->client_caps = f->client_caps;
	call->log_level = f->log_level && call->session_id == NULL && call->revision &&
	    strcmp(call->revision, UPSTREAM_MODERN_VERSION) == 0 ? f->log_level(f) : NULL;
}

/* call to the upstream named name as the caller's session with it: 0, or -1 when no
 * upstream has that name (any more). */
static int
session_call(const struct fed_call *f, const char *name, struct upstream_call *call)
{
	if ((call->up = config_upstream(f->cfg, name)) == NULL)
		return -1;
	caller_session(f, call->up, call);
	return 0;
}

/* A request an upstream makes of the caller travels under an id that names the
 * upstream, so that the caller's answer (a POST of its own, to any process) finds the
 * way back: "mcpgate:" length of the upstream's name ":" the name, then the original
 * id as JSON. */
#define ROUTE_ID_PREFIX	"mcpgate:"

struct relay_ctx {
	struct fed_call *f;
	const struct cfg_upstream *up;
};

static int
relay_msg(void *ctx, json_t *msg)
{
	struct relay_ctx *r = ctx;
	struct fed_call *f = r->f;
	json_t *id = json_object_get(msg, "id"), *copy;
	char *idj, *rid;
	int rc = UPSTREAM_DECLINE;

	if (id == NULL)
		return f->on_msg ? f->on_msg(f->ctx, msg) : 0;
	/* Only the caller's own session carries its capabilities: on the gateway's,
	 * nobody could answer. */
	if (f->on_msg == NULL || json_object_get(f->sessions, r->up->s.name) == NULL)
		return UPSTREAM_DECLINE;
	if ((idj = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY)) == NULL)
		return UPSTREAM_DECLINE;
	if (asprintf(&rid, ROUTE_ID_PREFIX "%zu:%s%s", strlen(r->up->s.name), r->up->s.name, idj) >= 0) {
		copy = json_copy(msg);
		json_object_set_new(copy, "id", json_string(rid));
		rc = f->on_msg(f->ctx, copy);
		json_decref(copy);
		free(rid);
	}
	free(idj);
	return rc;
}

int
fed_answer(struct fed_call *f, json_t *msg)
{
	const char *rid = json_string_value(json_object_get(msg, "id")), *p;
	struct upstream_call call = { .cfg = f->cfg, .now_ms = f->now_ms, .until_ms = f->until_ms };
	struct gw_error err;
	json_t *id, *copy;
	char name[256], *end;
	unsigned long n;
	int rc = -1;

	if (rid == NULL || strncmp(rid, ROUTE_ID_PREFIX, strlen(ROUTE_ID_PREFIX)) != 0)
		return -1;
	p = rid + strlen(ROUTE_ID_PREFIX);
	n = strtoul(p, &end, 10);
	if (end == p || *end != ':' || n == 0 || n >= sizeof(name) || strlen(end + 1) <= n)
		return -1;
	memcpy(name, end + 1, n);
	name[n] = '\0';
	if ((call.up = config_upstream(f->cfg, name)) == NULL ||
	    (id = json_loads(end + 1 + n, JSON_DECODE_ANY, NULL)) == NULL)
		return -1;
	caller_session(f, call.up, &call);
	if (call.session_id && (copy = json_copy(msg)) != NULL) {
		json_object_set(copy, "id", id);
		rc = upstream_respond(f->pool, &call, copy, &err);
		json_decref(copy);
	}
	json_decref(id);
	return rc;
}

/* One request of method r to up: its result (a new reference), or NULL with f->err. */
static json_t *
forward(struct fed_call *f, const struct cfg_upstream *up, const struct method *r, json_t *params)
{
	struct relay_ctx rc = { f, up };
	struct upstream_call call = { .cfg = f->cfg, .up = up, .method = r->name, .params = params,
	    .on_msg = relay_msg, .ctx = &rc, .now_ms = f->now_ms, .until_ms = f->until_ms, .client = f->client };
	struct gw_error err = { GW_OK, 0, "" };
	json_t *resp, *result, *e;
	int64_t t0 = clock_mono_us();
	size_t n;
	int got;

	caller_session(f, up, &call);
	if (r->name_param)
		call.mcp_name = json_string_value(json_object_get(params, r->name_param));
	got = upstream_request(f->pool, &call, &resp, &err);
	/* A session the upstream forgot is its answer, not a failure of the upstream. */
	if (f->cfg->metrics_on)
		metrics_upstream(f->metrics, up->s.name, clock_mono_us() - t0, got == 0 || err.code == GW_ESESSION);
	if (got < 0) {
		if (err.code == GW_ESESSION)
			f->session_gone = 1;
		/* What happened, not where: libcurl's detail in parentheses (hosts, ports) stays
		 * in the log line upstream.c or upstream_post.c wrote. */
		n = str_what_happened(err.detail);
		if (err.code == GW_ESCOPE)	/* the scopes the caller's token lacks for up's credential */
			failed(f, GW_ESCOPE, "%s", err.detail);
		else if (err.code == GW_ECONNECT)	/* the person's account there is not connected */
			failed(f, GW_ECONNECT, "%s", err.detail);
		else
			failed(f, GW_EUPSTREAM, "%.*s", (int)n, err.detail);
		/* Down for health is the upstream's failure: not one answer too large or too
		 * slow (a caller chose the call), nor a forgotten session, nor a caller gone, nor
		 * the caller's credential refused or not to be had (the token endpoint's), nor
		 * its scopes short of what the upstream's credential asks. */
		if (err.code != GW_ESESSION && err.code != GW_ECALL && err.code != GW_EAUTHSERVER && err.code != GW_ESCOPE &&
		    err.code != GW_ECONNECT && err.code != GW_EINTERNAL && !(f->client && f->client->failed))
			metrics_observe_upstream(f->metrics, up->s.name, 0, (int64_t)clock_wall(), f->err.detail);
		return NULL;
	}
	metrics_observe_upstream(f->metrics, up->s.name, 1, (int64_t)clock_wall(), NULL);
	if (json_is_object(result = json_object_get(resp, "result"))) {
		json_incref(result);
		json_decref(resp);
		return result;
	}
	/* The upstream's own JSON-RPC error, passed on when well-formed. */
	e = json_object_get(resp, "error");
	if (json_is_integer(json_object_get(e, "code")) && json_is_string(json_object_get(e, "message"))) {
		failed(f, GW_EUPSTREAM, "%s", json_string_value(json_object_get(e, "message")));
		f->err.rpc = (int)json_integer_value(json_object_get(e, "code"));
		json_decref(f->err_data);
		f->err_data = json_incref(json_object_get(e, "data"));
	} else
		failed(f, GW_EUPSTREAM, "upstream %s: an answer without result or error", up->s.name);
	json_decref(resp);
	return NULL;
}

/* Whether the catalog found the upstream of status st speaking 2026-07-28. */
static int
stateless_status(json_t *st)
{
	const char *v = json_string_value(json_object_get(st, "version"));

	return v && strcmp(v, UPSTREAM_MODERN_VERSION) == 0;
}


/* What an upstream's status st says it offers a caller of the revisions of initialize
 * (legacy) or of the stateless one. */
static json_t *
caps_of(json_t *st, int legacy)
{
	json_t *caps = legacy ? json_object_get(st, "legacyCaps") : NULL;

	return caps ? caps : json_object_get(st, "caps");
}

/* To every upstream that offers the capability; {} when all of them took it. One the
 * caller reaches statelessly has no logging/setLevel: it takes the level the caller's
 * session keeps with each request (fed_call.log_level), and counts as taking it. */
static json_t *
to_all(struct fed_call *f, const struct method *r, json_t *params)
{
	const struct cfg_upstream *up;
	json_t *st, *res;
	const char *name;
	struct gw_error first = { GW_OK, 0, "" };
	int sent = 0;

	json_object_foreach(catalog_upstreams(f->doc), name, st) {
		/* (logging/setLevel, of the revisions of initialize alone) */
		if (!json_object_get(caps_of(st, 1), r->capability) ||
		    (up = config_upstream(f->cfg, name)) == NULL ||
		    (f->gate && f->gate(f, r->name, up, CATALOG_NKINDS, NULL, 0) != FED_PASS))
			continue;
		sent++;
		if (stateless_status(st) && json_object_get(f->sessions, name) == NULL)
			continue;
		if ((res = forward(f, up, r, params)) != NULL)
			json_decref(res);
		else if (first.code == GW_OK)
			first = f->err;
	}
	if (sent == 0)
		return failed(f, GW_ENOMETHOD, "%s", "Method not found");
	if (first.code != GW_OK) {
		f->err = first;
		json_decref(f->err_data);	/* (of the last to fail, not of the first) */
		f->err_data = NULL;
		return NULL;
	}
	return json_object();
}

json_t *
fed_request(struct fed_call *f, const char *method, json_t *params)
{
	const struct method *r = route_of(method);
	const struct cfg_upstream *up;
	json_t *sent, *result;

	memset(&f->err, 0, sizeof(f->err));
	if (r == NULL)
		return failed(f, GW_ENOMETHOD, "%s", "Method not found");
	if (!json_is_object(params))
		return failed(f, GW_EPARAMS, "%s takes an object", method);
	if (r->route == ROUTE_TO_ALL)
		return to_all(f, r, params);
	if ((up = resolve(f, r, params, &sent)) == NULL)
		return NULL;
	if (r->feature && json_object_get(f->sessions, up->s.name) == NULL) {
		/* An upstream reached statelessly has no resources/subscribe: the caller's
		 * session keeps it (f->keep), its standalone stream listens there. */
		if (f->keep && stateless_status(json_object_get(catalog_upstreams(f->doc), up->s.name))) {
			result = f->keep(f, json_string_value(json_object_get(sent, "uri")),
			    r->id == METHOD_SUBSCRIBE) == 0 ? json_object() : NULL;
			json_decref(sent);
			return result;
		}
		json_decref(sent);
		return failed(f, GW_EINVALID, "%s needs a session with the gateway (initialize)", method);
	}
	if (f->bound && strcmp(f->bound, up->s.name) != 0) {
		json_decref(sent);
		return failed(f, GW_EPARAMS, "%s", "requestState was given for another request: call again without it");
	}
	f->answered = up->s.name;
	result = forward(f, up, r, sent);
	json_decref(sent);
	return result;
}

/* An upstream left in doc offering capability (and, when given, its feature), that
 * admit (NULL: any) lets the caller reach. */
static int
offered(json_t *doc, const char *capability, const char *feature, const struct fed_admit *admit)
{
	json_t *st, *cap;
	const char *name;

	json_object_foreach(catalog_upstreams(doc), name, st)
		if ((cap = json_object_get(caps_of(st, admit && admit->legacy), capability)) != NULL &&
		    (feature == NULL || json_is_true(json_object_get(cap, feature))) &&
		    (admit == NULL || admit->fn(admit->ctx, name, capability)))
			return 1;
	return 0;
}

int
fed_offers(json_t *doc, const char *method, const struct fed_admit *admit)
{
	const struct method *m = method_find(method);
	const char *cap = m ? m->capability : NULL;

	/* Tools are the gateway's own business: an empty list rather than no method. */
	return cap == NULL || strcmp(cap, "tools") == 0 || offered(doc, cap, m->feature, admit);
}

json_t *
fed_capabilities(json_t *doc, const struct fed_admit *admit)
{
	/* Only what the gateway delivers: its own lists' changes (to the revisions of
	 * initialize on the caller's GET stream, to 2026-07-28 on subscriptions/listen);
	 * to the revisions of initialize, subscriptions (their updates come on the GET
	 * stream); to 2026-07-28, the resources of upstreams of that revision that offer
	 * them. */
	static const char *const relayed[] = { "prompts", "resources", "completions", "logging" };
	int legacy = admit == NULL || admit->legacy;
	json_t *caps = json_pack("{s:{}}", "tools"), *st;
	const char *name;
	size_t i;

	for (i = 0; i < sizeof(relayed) / sizeof(relayed[0]); i++)
		if (offered(doc, relayed[i], NULL, admit))
			json_object_set_new(caps, relayed[i], json_object());
	/* (no upstream: a list that never changes) */
	for (i = 0; i < 2 && json_object_size(catalog_upstreams(doc)) > 0; i++)	/* tools, prompts */
		if (json_object_get(caps, i ? "prompts" : "tools"))
			json_object_set_new(json_object_get(caps, i ? "prompts" : "tools"), "listChanged", json_true());
	if (json_object_get(caps, "resources") == NULL)
		return caps;
	json_object_set_new(json_object_get(caps, "resources"), "listChanged", json_true());
	if (legacy) {
		if (offered(doc, "resources", "subscribe", admit))
			json_object_set_new(json_object_get(caps, "resources"), "subscribe", json_true());
		return caps;
	}
	json_object_foreach(catalog_upstreams(doc), name, st) {
		if (stateless_status(st) &&
		    json_is_true(json_object_get(json_object_get(caps_of(st, 0), "resources"), "subscribe")) &&
		    admit->fn(admit->ctx, name, "resources")) {
			json_object_set_new(json_object_get(caps, "resources"), "subscribe", json_true());
			break;
		}
	}
	return caps;
}

json_t *
fed_open_sessions(struct fed_call *f, json_t *client_caps)
{
	struct upstream_call call = { .cfg = f->cfg, .now_ms = f->now_ms, .until_ms = f->until_ms, .cred = f->cred };
	struct gw_error err;
	json_t *map = json_object(), *st;
	const char *name;
	char *sid, version[16];

	json_object_foreach(catalog_upstreams(f->doc), name, st) {
		if (!json_is_true(json_object_get(st, "ok")) || (call.up = config_upstream(f->cfg, name)) == NULL)
			continue;
		call.revision = json_string_value(json_object_get(st, "version"));
		if (upstream_open(f->pool, &call, client_caps, &sid, version, &err) < 0)
			continue;	/* logged; its calls go on a pool session of the caller's own */
		if (sid)
			json_object_set_new(map, name, json_pack("[s, s]", sid, version));
		free(sid);
	}
	return map;
}

void
fed_close_sessions(struct fed_call *f)
{
	struct upstream_call call = { .cfg = f->cfg, .now_ms = f->now_ms };
	const char *name;
	json_t *entry;

	json_object_foreach(f->sessions, name, entry)
		if (session_call(f, name, &call) == 0)
			upstream_close(f->pool, &call);
}

void
fed_notify_sessions(struct fed_call *f, const char *method, json_t *params)
{
	struct upstream_call call = { .cfg = f->cfg, .method = method, .params = params, .now_ms = f->now_ms,
	    .until_ms = f->until_ms };
	struct gw_error err;
	const char *name;
	json_t *entry;

	json_object_foreach(f->sessions, name, entry) {
		if (session_call(f, name, &call) < 0)
			continue;
		call.id = NULL;
		if (call.session_id)
			upstream_notify(f->pool, &call, &err);	/* logged when it fails */
	}
}

/* What the caller's subscriptions/listen asks of each upstream of 2026-07-28 (up in
 * the catalog): {name: {the list changes of lists, resourceSubscriptions: [its URIs of
 * uris that the caller may read]}} (a new object), each URI listened to also appended
 * to accepted. An upstream asked nothing is left out. (A list change an upstream tells
 * is no message for the caller: it makes the gateway look at its catalog again.) */
json_t *
fed_listening(struct fed_call *f, json_t *lists, json_t *uris, json_t *accepted)
{
	const struct method *r = route_of("resources/read");
	const char *uri, *owner, *held, *name;
	json_t *by = json_object(), *u, *st, *one;
	void *tmp;
	size_t i;

	json_object_foreach(catalog_upstreams(f->doc), name, st)
		if (json_is_true(json_object_get(st, "ok")) && stateless_status(st))
			json_object_set_new(by, name, json_copy(lists));
	json_array_foreach(uris, i, u) {
		if ((uri = json_string_value(u)) == NULL || url_resource_ambiguous(uri) != NULL ||
		    (owner = owner_of_uri(f, r, uri, &held)) == NULL ||
		    (f->gate && f->gate(f, r->name, config_upstream(f->cfg, owner), CATALOG_RESOURCES, uri, 0) != FED_PASS))
			continue;
		/* An older upstream offering subscriptions: a session of the listen's own there */
		st = json_object_get(catalog_upstreams(f->doc), owner);
		if ((one = json_object_get(by, owner)) == NULL && json_is_true(json_object_get(st, "ok")) &&
		    !stateless_status(st) &&
		    json_is_true(json_object_get(json_object_get(caps_of(st, 1), "resources"), "subscribe")))
			json_object_set_new(by, owner, one = json_object());
		if (one == NULL)
			continue;
		if (json_object_get(one, "resourceSubscriptions") == NULL)
			json_object_set_new(one, "resourceSubscriptions", json_array());
		json_array_append(json_object_get(one, "resourceSubscriptions"), u);
		json_array_append(accepted, u);
	}
	json_object_foreach_safe(by, tmp, name, one)
		if (json_object_size(one) == 0)
			json_object_del(by, name);
	return by;
}

/* A listen's session of its own at ctx->up, an older upstream (no subscriptions/listen
 * there): opened without client capabilities (entered in opened, [id, version,
 * upstream], for fed_listen to end), each URI of one subscribed on it, its GET made
 * call's stream, and our acknowledgement told as a stateless upstream's own is. 0, or
 * -1 (logged). */
static int
legacy_listen(struct fed_call *f, struct relay_ctx *ctx, json_t *one, struct upstream_call *call, json_t *opened)
{
	struct upstream_call c = { .cfg = f->cfg, .up = ctx->up, .method = "resources/subscribe", .now_ms = f->now_ms,
	    .until_ms = f->until_ms, .cred = f->cred, .who = f->who };
	json_t *u, *resp = NULL, *entry, *ack;
	struct gw_error err;
	char *sid = NULL, version[16];
	size_t i;
	int subscribed = 0;

	if (upstream_open(f->pool, &c, NULL, &sid, version, &err) < 0 || sid == NULL ||
	    json_array_append_new(opened, entry = json_pack("[s, s, s]", sid, version, ctx->up->s.name)) < 0) {
		free(sid);
		return -1;
	}
	free(sid);
	c.session_id = json_string_value(json_array_get(entry, 0));
	c.version = json_string_value(json_array_get(entry, 1));
	json_array_foreach(json_object_get(one, "resourceSubscriptions"), i, u) {
		c.params = json_pack("{s:O}", "uri", u);
		if (c.params && upstream_request(f->pool, &c, &resp, &err) == 0 && json_object_get(resp, "result"))
			subscribed++;
		json_decref(resp);
		json_decref(c.params);
		resp = NULL;
	}
	if (subscribed == 0)
		return -1;
	*call = (struct upstream_call){ .cfg = f->cfg, .up = ctx->up, .method = "GET", .session_id = c.session_id,
	    .version = c.version, .on_msg = relay_msg, .ctx = ctx, .now_ms = f->now_ms, .cred = f->cred };
	ack = json_pack("{s:s, s:s, s:{}}", "jsonrpc", "2.0", "method", "notifications/subscriptions/acknowledged",
	    "params");
	if (ack && f->on_msg)
		f->on_msg(f->ctx, ack);
	json_decref(ack);
	return 0;
}

/* Long: one array of streams of three kinds (a GET on each upstream session of the
 * caller's, a POST of subscriptions/listen at each stateless upstream of by, a GET on
 * a session of the listen's own at each older one), each with its relay context, made
 * in one pass, the listen's sessions ended and all freed at the one exit. */
int
fed_listen(struct fed_call *f, json_t *by, const struct upstream_tick *tick, int64_t until_ms)
{
	size_t n = json_object_size(f->sessions) + json_object_size(by), k = 0, i;
	struct upstream_call *calls = calloc(n ? n : 1, sizeof(*calls));
	struct relay_ctx *ctxs = calloc(n ? n : 1, sizeof(*ctxs));
	json_t *params = json_array(), *opened = json_array(), *one, *entry;
	const char *name;
	int rc = -1;

	if (calls == NULL || ctxs == NULL || params == NULL || opened == NULL)
		goto out;
	json_object_foreach(f->sessions, name, entry) {
		if ((ctxs[k].up = config_upstream(f->cfg, name)) == NULL)
			continue;
		ctxs[k].f = f;
		calls[k] = (struct upstream_call){ .cfg = f->cfg, .up = ctxs[k].up, .method = "GET",
		    .on_msg = relay_msg, .ctx = &ctxs[k], .now_ms = f->now_ms };
		caller_session(f, ctxs[k].up, &calls[k]);
		calls[k].id = NULL;
		if (calls[k].session_id)
			k++;
	}
	json_object_foreach(by, name, one) {
		if ((ctxs[k].up = config_upstream(f->cfg, name)) == NULL)
			continue;
		ctxs[k].f = f;
		if (!stateless_status(json_object_get(catalog_upstreams(f->doc), name))) {
			if (legacy_listen(f, &ctxs[k], one, &calls[k], opened) == 0)
				k++;
			continue;
		}
		calls[k] = (struct upstream_call){ .cfg = f->cfg, .up = ctxs[k].up, .method = "subscriptions/listen",
		    .on_msg = relay_msg, .ctx = &ctxs[k], .now_ms = f->now_ms };
		caller_session(f, ctxs[k].up, &calls[k]);
		json_array_append_new(params, json_pack("{s:O}", "notifications", one));
		calls[k].params = json_array_get(params, json_array_size(params) - 1);
		calls[k].id = f->id;
		calls[k].session_id = NULL;
		k++;
	}
	rc = upstream_listen(f->pool, calls, k, tick, until_ms);
out:
	json_array_foreach(opened, i, entry) {	/* the listen's own sessions, ended */
		struct upstream_call c = { .cfg = f->cfg, .session_id = json_string_value(json_array_get(entry, 0)),
		    .version = json_string_value(json_array_get(entry, 1)), .cred = f->cred, .who = f->who,
		    .now_ms = clock_mono_us() / 1000 };	/* (the listen lasted: now, not its start) */

		if ((c.up = config_upstream(f->cfg, json_string_value(json_array_get(entry, 2)))) != NULL)
			upstream_close(f->pool, &c);
	}
	json_decref(opened);
	json_decref(params);
	free(calls);
	free(ctxs);
	return rc;
}
