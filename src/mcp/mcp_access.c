/* mcp_access — the policy in the exchange: which upstreams a caller reaches, the word
 * on a tools/call (the same decision its tools/list made) and on what upstreams offer
 * besides tools, how a refusal answers (403, insufficient_scope, or hidden), and one
 * audit line per decision. */
#include "autoconf.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "mcp_call.h"
#include "pinning.h"

/* The policy's kind of a catalog record's. */
static enum policy_kind
kind_of(enum catalog_kind kind)
{
	return kind == CATALOG_PROMPTS ? POLICY_PROMPT : kind == CATALOG_TOOLS ? POLICY_TOOL : POLICY_RESOURCE;
}

int
mcp_sees(const struct exchange *x, enum catalog_kind kind, const char *key, const struct cfg_upstream *up)
{
	struct policy_tool t = { key, up, 0, kind_of(kind) };

	return x->pc.off || (key && up && policy_decide(&x->pc, &t, NULL) == POLICY_VISIBLE);
}

int
mcp_reaches(struct exchange *x, const char *name, unsigned kinds)
{
	const struct cfg_upstream *u;
	const char *up, *orig, *key;
	json_t *doc;
	size_t i, n, alt;
	int k;

	if (x->pc.off)
		return 1;
	if ((u = config_upstream(x->cfg, name)) == NULL)
		return 0;
	if (policy_decide_upstream(&x->pc, u, NULL) == POLICY_VISIBLE)
		return 1;
	if (!x->cfg->item_grants)	/* no group grants prompts or resources of their own */
		return 0;
	doc = mcp_catalog(x);
	for (k = 0; k < CATALOG_NKINDS; k++) {
		if (!(kinds & (1u << k)))
			continue;
		n = catalog_count(doc, (enum catalog_kind)k);
		for (i = 0; i < n; i++)
			for (alt = 0; catalog_route_alt(doc, (enum catalog_kind)k, (long)i, alt, &up, &orig) == 0; alt++)
				if (strcmp(up, name) == 0 && (key = catalog_key(doc, (enum catalog_kind)k, i)) != NULL &&
				    mcp_sees(x, (enum catalog_kind)k, key, u))
					return 1;
	}
	return 0;
}

/* The HttpError of each denial reason under deny-style forbidden. */
static const struct {
	const char *reason;
	enum gw_err e;
} denials[] = {
	{ "tenant_forbidden", GW_ETENANT }, { "group_forbidden", GW_EGROUP },
	{ "feature_disabled", GW_EFEATURE }, { "tool_denied", GW_EDENIED },
	{ "read_only_mode", GW_EREADONLY }, { "insufficient_scope", GW_EGROUP },
};

/* One audit line per decision of the policy on a request: who, what (the tool; or the
 * prompt or resource, what names it, and the upstream it is of), the verdict and why;
 * never the arguments. */
static void
audit(const struct exchange *x, const char *method, const char *what, const char *name, const char *upstream,
    const struct policy_why *why)
{
	char who[33];
	json_t *line;

	session_who(NULL, x->caller->claims.subject, "", "", who);	/* (the log's: the subject alone) */
	line = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:s?, s:i}",
	    "request_id", x->req->id, "audit", method, "tenant", x->pc.tenant ? x->pc.tenant->s.name : "",
	    "subject", who, "client_id", x->caller->claims.client_id, what, name,
	    "allowed", why->step == POLICY_VISIBLE, "reason", why->reason, "step", (int)why->step);
	if (line && upstream)
		json_object_set_new(line, "upstream", json_string(upstream));
	log_json(GW_LOG_INFO, line);
}

/* A refusal of the policy as the caller gets it: 403 insufficient_scope with the scopes
 * to step up to, hidden (deny-style hide: 1, the caller answers as for what does not
 * exist), or 403 with the reason; a batch element gets a JSON-RPC error instead of the
 * 403. -1 with err (and el->denied for a single request), or 1. */
static int
refuse(struct element *el, const struct policy_why *why, struct gw_error *err)
{
	size_t i;

	if (why->only_scope) {
		el->denied = GW_ESCOPE;
		snprintf(el->denied_scopes, sizeof(el->denied_scopes), "%s", why->scopes);
		gw_error_set(err, GW_EREFUSED, "Forbidden: insufficient_scope (needs %.200s)", why->scopes);
	} else if (el->x->cfg->deny_style == DENY_HIDE) {
		return 1;
	} else {
		for (i = 0; i < sizeof(denials) / sizeof(denials[0]); i++)
			if (strcmp(denials[i].reason, why->reason) == 0)
				el->denied = denials[i].e;
		gw_error_set(err, GW_EREFUSED, "Forbidden: %s", why->reason);
	}
	if (el->x->in_batch)
		el->denied = GW_OK;	/* a batch element gets its JSON-RPC error; the others proceed */
	return -1;
}

/* The tool's rate limit, on a call the policy allowed (of a tool that exists: a name
 * nobody serves fills no bucket; its upstream known, for its groups' limit-tool). 0, or
 * -1 with err (its facts in el->err_data), and el->denied for a single request. */
static int
gate_limit(struct element *el, const struct policy_tool *t, struct gw_error *err)
{
	struct limiter *lim = el->x->lim;
	int rc;

	if (lim == NULL || (rc = limiter_tool(lim, t, clock_mono_us() * 1000)) == LIMIT_PASS)
		return 0;
	limiter_error(lim, rc, err);
	json_decref(el->err_data);
	el->err_data = limiter_data(lim, rc);
	el->denied = el->x->in_batch ? GW_OK : err->code;
	el->limit_rc = rc;
	return -1;
}

/* The policy's word on a tools/call (the same decision tools/list made), written to the
 * audit log, then the tool's rate limit. 0 to go on; -1 with err, and el->denied for a
 * single request. */
int
mcp_gate_call(struct element *el, json_t *params, struct gw_error *err)
{
	struct exchange *x = el->x;
	const char *name = json_string_value(json_object_get(params, "name")), *held = NULL;
	struct policy_tool t;
	struct policy_why why;
	json_t *doc = mcp_catalog(x), *pin;
	long ix;

	if (name == NULL)
		return 0;	/* nothing to decide: federate.c answers */
	if ((ix = catalog_find(doc, name)) >= 0)
		catalog_policy_tool(x->cfg, doc, (size_t)ix, &t, NULL, NULL);
	else if ((held = catalog_held(doc, CATALOG_TOOLS, name)) != NULL) {
		/* Held for its upstream while that is down (federate.c refuses the call, and no
		 * bucket is filled): the caller hears so only of a tool it may call. */
		memset(&t, 0, sizeof(t));
		t.name = name;
		t.upstream = config_upstream(x->cfg, held);
	} else
		return 0;
	if (x->pc.off && held && (pin = pinning_held(doc, CATALOG_TOOLS, name)) != NULL) {
		pinning_refusal(pin, name, err);
		el->pin_held = 1;
		return -1;
	}
	if (x->pc.off)
		return held ? 0 : gate_limit(el, &t, err);
	policy_decide(&x->pc, &t, &why);
	audit(x, "tools/call", "tool", name, NULL, &why);
	if (why.step == POLICY_VISIBLE && held && (pin = pinning_held(doc, CATALOG_TOOLS, name)) != NULL) {
		pinning_refusal(pin, name, err);	/* to a caller who may call it: what it awaits */
		el->pin_held = 1;
		return -1;
	}
	if (why.step == POLICY_VISIBLE)
		return held ? 0 : gate_limit(el, &t, err);
	if (refuse(el, &why, err) < 0)
		return -1;
	gw_error_set(err, GW_EPARAMS, "Unknown tool");	/* exactly as for a tool that does not exist */
	return -1;
}

/* The kinds whose records grant an upstream as a whole (its log level): its prompts,
 * resources and templates. */
#define ITEM_KINDS	(1u << CATALOG_PROMPTS | 1u << CATALOG_RESOURCES | 1u << CATALOG_TEMPLATES)

/* federate.c's gate for what an upstream offers besides tools: the policy's word on the
 * prompt or resource the request names (policy_decide with its kind), the same one that
 * filters the lists; on the upstream as a whole (logging/setLevel), mcp_reaches. Tools
 * were decided one by one (mcp_gate_call). f->ctx is the element (m_forward). */
int
mcp_gate_upstream(struct fed_call *f, const char *method, const struct cfg_upstream *up, enum catalog_kind kind,
    const char *key, int alone)
{
	struct element *el = f->ctx;
	struct exchange *x = el->x;
	struct policy_tool t = { key, up, 0, kind_of(kind) };
	struct policy_why why;

	if (x->pc.off || strcmp(method, "tools/call") == 0)
		return FED_PASS;
	if (key == NULL)
		return mcp_reaches(x, up->s.name, ITEM_KINDS) ? FED_PASS : FED_HIDDEN;
	if (!alone)
		return mcp_sees(x, kind, key, up) ? FED_PASS : FED_HIDDEN;
	policy_decide(&x->pc, &t, &why);
	audit(x, method, t.kind == POLICY_PROMPT ? "prompt" : "resource", key, up->s.name, &why);
	if (why.step == POLICY_VISIBLE)
		return FED_PASS;
	return refuse(el, &why, &f->err) > 0 ? FED_HIDDEN : FED_DENIED;
}

/* Step 2 of docs/ARCHITECTURE.md §4 (the caller's tenant exists) holds for every /mcp
 * request: 0, or -1 with the 403. */
int
mcp_tenant_check(const struct config *cfg, const struct caller *caller, struct response *resp)
{
	struct policy_caller pc;

	policy_caller_init(&pc, cfg, &caller->claims);
	if (pc.off || pc.tenant)
		return 0;
	response_set_error(resp, GW_ETENANT, NULL);
	return -1;
}
