/* h_health — GET /mcp/health: ok, or degraded naming each dependency that failed, from
 * what requests observed (kept in the state file: metrics.c, the metadata mirror) and
 * what this process holds (its state file). It asks nothing of any dependency itself:
 * a health request never waits on the network. A degraded gateway still answers 200;
 * only a gateway that cannot serve (no configuration, no state) answers 500, and the
 * router does that before this handler runs. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "handlers.h"
#include "pinning.h"

static const char *const state_words[] = {
	[METRICS_UNKNOWN] = "unknown", [METRICS_UP] = "up", [METRICS_DOWN] = "down",
};

/* The answer being built: each dependency, and the reasons the gateway is degraded. */
struct health {
	json_t *deps, *reasons;
};

/* One dependency: {dependency, name?, state, since?, detail?}; a dependency that is
 * down adds a reason saying so. */
static void
dependency(struct health *h, const char *kind, const char *name, int state, int64_t since_s,
    const char *detail)
{
	char ts[32], why[METRICS_NAME_MAX + METRICS_DETAIL_MAX + 128];
	json_t *d;

	if (state != METRICS_UP && state != METRICS_DOWN)
		state = METRICS_UNKNOWN;
	d = json_pack("{s:s}", "dependency", kind);
	if (d && name)
		json_object_set_new(d, "name", json_string(name));
	if (d)
		json_object_set_new(d, "state", json_string(state_words[state]));
	if (d && since_s > 0) {
		clock_rfc3339((time_t)since_s, ts, sizeof(ts));
		json_object_set_new(d, "since", json_string(ts));
	}
	if (d && state == METRICS_DOWN && detail && detail[0])
		json_object_set_new(d, "detail", json_string(detail));
	json_array_append_new(h->deps, d);
	if (state != METRICS_DOWN)
		return;
	snprintf(why, sizeof(why), "%s%s%s is down%s%s%s%s", kind, name ? " " : "", name ? name : "",
	    since_s > 0 ? " since " : "", since_s > 0 ? ts : "", detail && detail[0] ? ": " : "",
	    detail && detail[0] ? detail : "");
	json_array_append_new(h->reasons, json_string(why));
}

/* An upstream never observed since the state file was built: what this worker's copy of
 * the catalog says of it (no fetch), else unknown. */
static int
upstream_from_catalog(const struct worker *w, const char *name, const char **why)
{
	json_t *st = json_object_get(catalog_upstreams(worker_mcp(w)->cat.doc), name);

	*why = NULL;
	if (st == NULL)
		return METRICS_UNKNOWN;
	if (json_is_true(json_object_get(st, "ok")))
		return METRICS_UP;
	*why = "left out of the catalog";
	return METRICS_DOWN;
}

/* The authorization server: its metadata (when it is fetched: the introspection
 * endpoint comes from it, or /.well-known/oauth-authorization-server mirrors it), the
 * introspection of tokens unless they are only verified here, the issuer's JWK set
 * when they may be, and its token endpoint when upstreams are reached as the caller. */
static void
auth_dependencies(const struct req_ctx *rc, int64_t now_s, struct health *h)
{
	struct metrics *m = rc->sh->metrics;
	char detail[METRICS_DETAIL_MAX];
	int64_t since;
	int st;

	if (!rc->cfg->introspection_endpoint || strcmp(rc->cfg->as_metadata, "fetch") == 0) {
		st = introspect_asmeta_state(rc->sh->asmeta, rc->cfg, now_s * 1000, &since);
		dependency(h, "authorization_server_metadata", NULL, st, since / 1000,
		    "the issuer's metadata could not be fetched");
	}
	if (rc->cfg->verify != VERIFY_JWT || rc->cfg->introspect_jwt) {
		st = metrics_dep_state(m, METRICS_DEP_INTROSPECTION, now_s, &since, detail, sizeof(detail));
		dependency(h, "introspection", NULL, st, since, detail);
	}
	if (rc->cfg->verify != VERIFY_INTROSPECTION) {
		st = metrics_dep_state(m, METRICS_DEP_JWKS, now_s, &since, detail, sizeof(detail));
		dependency(h, "jwk_set", NULL, st, since, detail);
	}
	if (rc->cfg->obtains) {	/* the token endpoints, for the upstreams whose tokens the gateway obtains */
		st = metrics_dep_state(m, METRICS_DEP_EXCHANGE, now_s, &since, detail, sizeof(detail));
		dependency(h, "token_exchange", NULL, st, since, detail);
	}
}

/* What the pins hold pending of upstream name, on its dependency (the last one) as
 * "pins": {"new", "changed", "held", "unclean"}. 1 when an operator's word is awaited: a
 * definition changed, hides text, or is held back (mcpgate pins). */
static int
pins_pending(const struct req_ctx *rc, const char *name, struct health *h)
{
	struct pinning_counts c;

	pinning_count(worker_mcp(rc->w)->cat.doc, name, &c);
	if (c.new + c.changed == 0)
		return 0;
	json_object_set_new(json_array_get(h->deps, json_array_size(h->deps) - 1), "pins", json_pack("{s:I, s:I, s:I, s:I}",
	    "new", (json_int_t)c.new, "changed", (json_int_t)c.changed, "held", (json_int_t)c.held,
	    "unclean", (json_int_t)c.unclean));
	return c.changed || c.held || c.unclean;
}

/* Each upstream, as requests and catalog fetches saw it; and the catalog: an upstream
 * left out that no record names (the records are the state file's: built anew, they
 * know nothing yet), an upstream over its share (served, but not all of it). */
static void
upstream_dependencies(const struct req_ctx *rc, int64_t now_s, struct health *h)
{
	char detail[METRICS_DETAIL_MAX], note[CATALOG_NOTE_MAX];
	size_t i, down_before = json_array_size(h->reasons);
	json_t *version, *awaited = json_array();
	const char *why;
	int64_t since;
	int st;

	for (i = 0; i < rc->cfg->n_upstreams; i++) {
		const char *name = rc->cfg->upstreams[i].s.name;

		st = metrics_upstream_state(rc->sh->metrics, name, now_s, &since, detail, sizeof(detail));
		if (st == METRICS_UNKNOWN && (st = upstream_from_catalog(rc->w, name, &why)) != METRICS_UNKNOWN)
			snprintf(detail, sizeof(detail), "%s", why ? why : "");
		dependency(h, "upstream", name, st, since, detail);
		/* The revision the gateway speaks to it, as the catalog found it. */
		version = json_object_get(json_object_get(catalog_upstreams(worker_mcp(rc->w)->cat.doc), name), "version");
		if (json_is_string(version))
			json_object_set(json_array_get(h->deps, json_array_size(h->deps) - 1), "protocolVersion", version);
		if (pins_pending(rc, name, h))
			json_array_append_new(awaited, json_pack("s++", "upstream ", name, ": definitions await approval "
			    "(changed, held back or with hidden text: mcpgate pins status)"));
	}
	if (json_array_size(h->reasons) == down_before && catalog_region_degraded(rc->sh->catalog))
		json_array_append_new(h->reasons, json_string("an upstream is left out of the catalog"));
	if (catalog_region_note(rc->sh->catalog, note, sizeof(note)))
		json_array_append_new(h->reasons, json_pack("s++", "catalog: ", note, ""));
	json_array_extend(h->reasons, awaited);
	json_decref(awaited);
}

void
h_health(struct req_ctx *rc)
{
	int64_t now_s = (int64_t)rc->req->now, since;
	char ts[32], detail[METRICS_DETAIL_MAX], state[600];
	struct health h = { json_array(), json_array() };
	json_t *doc;
	int st;

	clock_rfc3339(rc->req->now, ts, sizeof(ts));
	auth_dependencies(rc, now_s, &h);
	upstream_dependencies(rc, now_s, &h);
	st = gateway_state_health(rc->sh, now_s, &since, state, sizeof(state));
	dependency(&h, "state_file", NULL, st, since, state);
	if (rc->cfg->redis_on) {
		st = metrics_dep_state(rc->sh->metrics, METRICS_DEP_REDIS, now_s, &since, detail, sizeof(detail));
		dependency(&h, "redis", NULL, st, since, detail);
	}
	doc = json_pack("{s:s, s:s, s:s, s:s}", "status", json_array_size(h.reasons) ? "degraded" : "ok",
	    "service", PACKAGE_NAME, "version", PACKAGE_VERSION, "timestamp", ts);
	if (doc && json_array_size(h.reasons))
		json_object_set(doc, "reasons", h.reasons);
	if (doc)
		json_object_set(doc, "dependencies", h.deps);
	json_decref(h.reasons);
	json_decref(h.deps);
	response_set_json(rc->resp, 200, doc);
	response_set_header(rc->resp, "Cache-Control", "no-store");
}
