/* explain — `mcpgate explain [-c FILE] --claims JSON [--tool NAME] [--json]`
 * (DESIGN §2): which tools a caller with these introspection claims sees, and for each
 * hidden tool the first failing step of DESIGN §4 with the configuration line that
 * decided it; with --tool, that one decision and the rate-limit keys of such a call.
 * The catalog is fetched from the configured upstreams as the gateway would. Exit 0;
 * 2 when --tool names a tool the caller may not call (or none); 1 on a usage, claims
 * or configuration error. Made for an operator's CI job. */
#include "autoconf.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "clock.h"
#include "explain.h"
#include "policy.h"
#include "upstream.h"

/* The claims an introspection response carries, as auth.c reads them (without its
 * acceptance rules: explain is about policy, not token validity). */
static int
claims_from_json(const struct config *cfg, json_t *j, struct tc_claims *c, const char **why)
{
	json_t *g = json_object_get(j, cfg->groups_claim), *v;
	const char *s;
	size_t i;

	memset(c, 0, sizeof(*c));
	if (!json_is_object(j))
		return *why = "--claims must be a JSON object (an introspection response)", -1;
	snprintf(c->subject, sizeof(c->subject), "%s", (s = json_string_value(json_object_get(j, "sub"))) ? s : "");
	snprintf(c->client_id, sizeof(c->client_id), "%s",
	    (s = json_string_value(json_object_get(j, "client_id"))) ? s : "");
	snprintf(c->scope, sizeof(c->scope), "%s", (s = json_string_value(json_object_get(j, "scope"))) ? s : "");
	snprintf(c->tenant, sizeof(c->tenant), "%s",
	    (s = json_string_value(json_object_get(j, cfg->tenant_claim))) ? s : "");
	if (json_is_string(g))
		snprintf(c->groups, sizeof(c->groups), "%s", json_string_value(g));
	json_array_foreach(g, i, v)
		if (json_is_string(v) && strlen(c->groups) + strlen(json_string_value(v)) + 2 < sizeof(c->groups))
			snprintf(c->groups + strlen(c->groups), sizeof(c->groups) - strlen(c->groups), "%s%s",
			    c->groups[0] ? " " : "", json_string_value(v));
	return 0;
}

static const struct cfg_upstream *
upstream_named(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; name && i < cfg->n_upstreams; i++)
		if (strcmp(cfg->upstreams[i].s.name, name) == 0)
			return &cfg->upstreams[i];
	return NULL;
}

static void
tool_at(const struct config *cfg, json_t *doc, size_t i, struct policy_tool *t)
{
	json_t *rec = json_array_get(json_object_get(doc, "tools"), i);
	const char *up = NULL, *orig;

	memset(t, 0, sizeof(*t));
	t->name = json_string_value(json_object_get(rec, "name"));
	t->read_only_hint = json_is_true(json_object_get(json_object_get(rec, "annotations"), "readOnlyHint"));
	if (catalog_route(doc, CATALOG_TOOLS, (long)i, &up, &orig) == 0)
		t->upstream = upstream_named(cfg, up);
}

/* A limit's rate: the tenant's override, else [limits]. */
static void
print_rate(const char *key, const char *value, const struct rate *dflt, const struct rate *over)
{
	const struct rate *r = over && over->per > 0 ? over : dflt;

	if (r->n == 0)
		printf("  %-7s %-24s unlimited\n", key, value);
	else
		printf("  %-7s %-24s %ld/%ld s%s\n", key, value, r->n, r->per, r == over ? " (tenant override)" : "");
}

static void
usage(void)
{
	fputs("usage: mcpgate explain [-c FILE] --claims JSON [--tool NAME] [--json]\n", stderr);
}

int
explain_main(int argc, char **argv, const char *config_path)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "claims", required_argument, NULL, 'C' },
		{ "tool", required_argument, NULL, 'T' },
		{ "json", no_argument, NULL, 'J' },
		{ NULL, 0, NULL, 0 }
	};
	struct cfg_errors errs;
	struct config *cfg = NULL;
	struct catalog_view view;
	struct upstream_pool *pool = NULL;
	struct policy_caller pc;
	struct policy_tool t;
	struct policy_why why;
	struct tc_claims claims;
	json_t *claims_json = NULL, *doc, *st, *out = NULL, *hidden = NULL, *visible = NULL;
	const char *claims_arg = NULL, *tool = NULL, *msg = NULL, *name;
	size_t i, n, nvis = 0;
	int c, as_json = 0, rc = 1;

	memset(&view, 0, sizeof(view));
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': config_path = optarg; break;
		case 'C': claims_arg = optarg; break;
		case 'T': tool = optarg; break;
		case 'J': as_json = 1; break;
		default: usage(); return 1;
		}
	}
	if (claims_arg == NULL || optind < argc) {
		usage();
		return 1;
	}
	if (config_load(config_path, &cfg, &errs) < 0) {
		for (i = 0; i < errs.n; i++)
			fprintf(stderr, "%s\n", errs.msg[i]);
		goto out;
	}
	if ((claims_json = json_loads(claims_arg, 0, NULL)) == NULL ||
	    claims_from_json(cfg, claims_json, &claims, &msg) < 0) {
		fprintf(stderr, "mcpgate explain: %s\n", msg ? msg : "--claims is not JSON");
		goto out;
	}
	policy_caller_init(&pc, cfg, &claims);
	for (i = 0; i < cfg->required_scopes.n; i++)
		if (!strstr(claims.scope, cfg->required_scopes.v[i]))
			printf("note: the token lacks required scope %s: every POST /mcp is 403 (step 1)\n",
			    cfg->required_scopes.v[i]);
	pool = upstream_pool_new();
	doc = catalog_get(NULL, &view, pool, cfg, clock_mono_us() / 1000);
	json_object_foreach(json_object_get(doc, "upstreams"), name, st)
		if (!json_is_true(json_object_get(st, "ok")))
			fprintf(stderr, "note: upstream %s left out of the catalog: %s\n", name,
			    json_string_value(json_object_get(st, "reason")));
	n = json_array_size(json_object_get(doc, "tools"));
	visible = json_array();
	hidden = json_array();
	rc = 0;
	for (i = 0; i < n; i++) {
		tool_at(cfg, doc, i, &t);
		if (t.name == NULL || (tool && strcmp(tool, t.name) != 0))
			continue;
		if (policy_decide(&pc, &t, &why) == POLICY_VISIBLE) {
			json_array_append_new(visible, json_string(t.name));
			nvis++;
		} else
			json_array_append_new(hidden, json_pack("{s:s, s:i, s:s, s:s, s:b}", "tool", t.name,
			    "step", (int)why.step, "reason", why.reason, "rule", why.rule, "step_up", why.only_scope));
	}
	if (tool && catalog_find(doc, tool) < 0) {
		printf("%s: not in the catalog (no upstream offers it; a call is -32602 Unknown tool)\n", tool);
		rc = 2;
		goto out;
	}
	if (as_json) {
		out = json_pack("{s:s?, s:b, s:O, s:O}", "tenant", pc.tenant ? pc.tenant->s.name : NULL,
		    "policy", !pc.off, "visible", visible, "hidden", hidden);
		json_dumpf(out, stdout, JSON_INDENT(2));
		putchar('\n');
	} else {
		if (pc.off)
			printf("policy: off (no [tenant] in %s): every tool is visible\n", config_path);
		else if (pc.tenant)
			printf("tenant: %s (%s:%d)\n", pc.tenant->s.name, pc.tenant->s.where.file, pc.tenant->s.where.line);
		else
			printf("tenant: %s is not configured: every /mcp request is 403 tenant_forbidden\n",
			    claims.tenant[0] ? claims.tenant : "* (no tenant claim)");
		printf("visible (%zu):\n", nvis);
		for (i = 0; i < json_array_size(visible); i++)
			printf("  %s\n", json_string_value(json_array_get(visible, i)));
		printf("hidden (%zu):\n", json_array_size(hidden));
		for (i = 0; i < json_array_size(hidden); i++) {
			json_t *h = json_array_get(hidden, i);

			printf("  %s: step %d %s — %s%s\n", json_string_value(json_object_get(h, "tool")),
			    (int)json_integer_value(json_object_get(h, "step")),
			    json_string_value(json_object_get(h, "reason")), json_string_value(json_object_get(h, "rule")),
			    json_is_true(json_object_get(h, "step_up")) ? " (a token with those scopes may call it)" : "");
		}
	}
	if (tool) {
		const struct cfg_tenant *tn = pc.tenant;

		if (!as_json) {
			printf("rate-limit keys of a call:\n");
			print_rate("gateway", "*", &cfg->limit_gateway, tn ? &tn->limit_gateway : NULL);
			print_rate("ip", "(the caller's address)", &cfg->limit_ip, tn ? &tn->limit_ip : NULL);
			print_rate("tenant", tn ? tn->s.name : "-", &cfg->limit_tenant, tn ? &tn->limit_tenant : NULL);
			print_rate("token", "(the token's digest)", &cfg->limit_token, tn ? &tn->limit_token : NULL);
			print_rate("tool", tool, &cfg->limit_tool, tn ? &tn->limit_tool : NULL);
		}
		rc = nvis ? 0 : 2;
	}
out:
	json_decref(out);
	json_decref(visible);
	json_decref(hidden);
	json_decref(claims_json);
	catalog_view_free(&view);
	upstream_pool_free(pool);
	if (cfg)
		config_unref(cfg);
	return rc;
}
