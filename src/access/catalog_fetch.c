/* catalog_fetch — what every upstream offers, asked of each (catalog_fetch.h). */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "catalog_fetch.h"
#include "clock.h"
#include "log.h"
#include "method.h"
#include "str.h"

/* A call of the fetch: as the gateway (with its own token at a client-credentials
 * upstream, or at one reached as the caller whose catalog-credentials say so), or, at
 * an upstream reached as the caller, as the caller whose request needs the catalog,
 * on its own pool session. A person's own account (user-oauth) never fetches: without
 * catalog-credentials = client-credentials its catalog is asked with no token, on the
 * gateway's own session. */
static void
as_fetcher(const struct catalog_fetcher *by, struct upstream_call *call)
{
	if (call->up->credentials == UP_CRED_USER_OAUTH) {
		static const struct upstream_cred none = { NULL, NULL };

		call->cred = call->up->catalog_credentials == UP_CATALOG_CLIENT ? by->own : &none;
		call->who = NULL;
		return;
	}
	if (!UP_OBTAINED(call->up))
		return;
	if (UP_AS_CALLER(call->up) && call->up->catalog_credentials == UP_CATALOG_CLIENT) {
		call->cred = by->own;	/* the gateway's own token, on its own session */
		return;
	}
	call->cred = by->cred;
	if (UP_AS_CALLER(call->up))
		call->who = by->who;
}

/* What each upstream offered, or why not (the arrays' n entries). */
struct fetched {
	json_t **lists;
	struct gw_error *errs;
	const char **why;
	size_t n;
};

/* One upstream's records of a kind, following its pages. NULL with err on failure (the
 * call's own, or GW_EUPSTREAM for an answer without the list). */
static json_t *
fetch_list(const struct catalog_fetcher *by, const struct config *cfg, const struct cfg_upstream *u,
    const struct catalog_kind_info *k, int64_t now_ms, struct gw_error *err)
{
	const char *method = method_list_of((enum catalog_kind)(k - catalog_kinds))->name;
	struct upstream_call call = { .cfg = cfg, .up = u, .method = method };

	as_fetcher(by, &call);
	json_t *all = json_array(), *resp, *result, *params = NULL;
	const char *cursor;
	int page;

	for (page = 0; page < CATALOG_MAX_PAGES; page++) {
		call.params = params;
		call.now_ms = page == 0 ? now_ms : clock_mono_us() / 1000;	/* each page its own deadline */
		if (upstream_request(by->pool, &call, &resp, err) < 0)
			goto fail;
		result = json_object_get(resp, "result");
		if (!json_is_array(json_object_get(result, k->array))) {
			gw_error_set(err, GW_EUPSTREAM, "upstream %s: %s answered %s", u->s.name, method,
			    json_object_get(resp, "error") ? "an error" : "no array");
			json_decref(resp);
			goto fail;
		}
		json_array_extend(all, json_object_get(result, k->array));
		cursor = json_string_value(json_object_get(result, "nextCursor"));
		json_decref(params);
		params = cursor && *cursor ? json_pack("{s:s}", "cursor", cursor) : NULL;
		json_decref(resp);
		if (params == NULL)
			return all;
	}
	gw_error_set(err, GW_EUPSTREAM, "upstream %s: more than %d pages of %s", u->s.name, CATALOG_MAX_PAGES,
	    k->array);
fail:
	json_decref(params);
	json_decref(all);
	return NULL;
}

/* What one upstream offers: {"caps": its capabilities, "version": the revision it is
 * spoken to in, "legacyCaps": what it offers older clients when that differs (a
 * stateless upstream that keeps their sessions too), and an array for each kind its
 * capabilities announce}. NULL with err when it is down or any list fails. */
static json_t *
fetch_upstream(const struct catalog_fetcher *by, const struct config *cfg, const struct cfg_upstream *u,
    int64_t now_ms, struct gw_error *err)
{
	struct upstream_call call = { .cfg = cfg, .up = u, .method = "initialize", .now_ms = now_ms };
	json_t *caps, *out, *list, *legacy;
	char version[16] = "";
	int k;

	as_fetcher(by, &call);
	call.method = "tools/list";	/* what the capabilities are wanted for, in the log */
	if ((caps = upstream_capabilities(by->pool, &call, version, err)) == NULL)
		return NULL;
	out = json_pack("{s:o, s:s}", "caps", caps, "version", version);
	/* Older callers are offered what the upstream offers their revision, when it keeps
	 * their sessions too. */
	if (out && strcmp(version, UPSTREAM_MODERN_VERSION) == 0 &&
	    (legacy = upstream_legacy_capabilities(by->pool, &call)) != NULL)
		json_object_set_new(out, "legacyCaps", legacy);
	for (k = 0; out && k < CATALOG_NKINDS; k++) {
		if (!json_object_get(caps, method_list_of((enum catalog_kind)k)->capability))
			continue;
		if ((list = fetch_list(by, cfg, u, &catalog_kinds[k], clock_mono_us() / 1000, err)) == NULL) {
			json_decref(out);
			return NULL;
		}
		json_object_set_new(out, catalog_kinds[k].array, list);
	}
	return out;
}

/* The lists of the arrays' upstreams: of those whose catalog is each caller's
 * (u->catalog per-caller) when mine, else of the others; the rest left as they are.
 * Each failure into errs[i] and why[i], logged and observed (by->m). */
static void
fetch_each(const struct catalog_fetcher *by, const struct config *cfg, int64_t now_ms, int mine,
    struct fetched *f)
{
	char brief[METRICS_DETAIL_MAX];
	size_t i;

	for (i = 0; i < cfg->n_upstreams; i++) {
		if ((cfg->upstreams[i].catalog == UP_CATALOG_PER_CALLER) != mine)
			continue;
		json_decref(f->lists[i]);
		f->lists[i] = fetch_upstream(by, cfg, &cfg->upstreams[i], now_ms, &f->errs[i]);
		f->why[i] = f->lists[i] ? NULL : f->errs[i].detail;
		if (f->lists[i] == NULL) {
			log_warn(NULL, "catalog: %s; what it offers is left out", f->errs[i].detail);
			/* what happened, not where, for /mcp/health */
			snprintf(brief, sizeof(brief), "%.*s", (int)str_what_happened(f->errs[i].detail),
			    f->errs[i].detail);
		} else if (mine) {
			json_object_set_new(f->lists[i], "perCaller", json_true());
		}
		/* A caller's credential refused, or not to be had, says nothing of the upstream. */
		if (f->lists[i] || (f->errs[i].code != GW_ECALL && f->errs[i].code != GW_EAUTHSERVER &&
		    f->errs[i].code != GW_ESCOPE))
			metrics_observe_upstream(by->m, cfg->upstreams[i].s.name, f->lists[i] != NULL,
			    (int64_t)clock_wall(), f->lists[i] ? NULL : brief);
	}
}

static int
fetched_init(struct fetched *f, size_t n)
{
	f->n = n;
	f->lists = calloc(n + 1, sizeof(*f->lists));
	f->errs = calloc(n + 1, sizeof(*f->errs));
	f->why = calloc(n + 1, sizeof(*f->why));
	return f->lists && f->errs && f->why ? 0 : -1;
}

static void
fetched_free(struct fetched *f)
{
	size_t i;

	for (i = 0; f->lists && i < f->n; i++)
		json_decref(f->lists[i]);
	free(f->lists);
	free(f->errs);
	free(f->why);
}

json_t *
catalog_fetch_all(const struct catalog_fetcher *by, const struct config *cfg, int64_t now_ms, json_t *prev)
{
	struct fetched f;
	json_t *doc;
	size_t i;

	if (fetched_init(&f, cfg->n_upstreams) < 0) {
		fetched_free(&f);
		return json_pack("{s:[], s:[], s:{}}", "tools", "routes", "upstreams");	/* the empty catalog */
	}
	/* Listed per caller: in the host's catalog by name alone (catalog_fetch_caller). */
	for (i = 0; i < cfg->n_upstreams; i++)
		if (cfg->upstreams[i].catalog == UP_CATALOG_PER_CALLER)
			f.lists[i] = json_pack("{s:{}, s:b}", "caps", "perCaller", 1);
	fetch_each(by, cfg, now_ms, 0, &f);
	doc = catalog_build_bound(cfg, f.lists, f.why, prev);
	fetched_free(&f);
	return doc;
}

json_t *
catalog_fetch_caller(const struct catalog_fetcher *by, const struct config *cfg, int64_t now_ms, json_t *shared)
{
	struct fetched f;
	json_t *doc;

	if (fetched_init(&f, cfg->n_upstreams) < 0) {
		fetched_free(&f);
		return json_incref(shared);	/* what every caller sees, then */
	}
	catalog_lists(shared, cfg, f.lists, f.why);
	fetch_each(by, cfg, now_ms, 1, &f);
	doc = catalog_build_bound(cfg, f.lists, f.why, shared);
	fetched_free(&f);
	return doc;
}
