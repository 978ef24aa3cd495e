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

/* May the caller reach this upstream's prompts, resources, completions, log level? */
int
mcp_reaches(const struct exchange *x, const char *name)
{
	const struct cfg_upstream *u;

	if (x->pc.off)
		return 1;
	return (u = config_upstream(x->cfg, name)) != NULL && policy_decide_upstream(&x->pc, u, NULL) == POLICY_VISIBLE;
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

/* One audit line per decision of the policy on a request: who, what (the tool, or the
 * upstream whose prompt or resource it is: what names it), the verdict and why; never
 * the arguments. */
static void
audit(const struct exchange *x, const char *method, const char *what, const char *name, const struct policy_why *why)
{
	char who[33];

	session_who(x->caller->claims.subject, "", "", who);
	log_json(GW_LOG_INFO, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:s?, s:i}",
	    "request_id", x->req->id, "audit", method, "tenant", x->pc.tenant ? x->pc.tenant->s.name : "",
	    "subject", who, "client_id", x->caller->claims.client_id, what, name,
	    "allowed", why->step == POLICY_VISIBLE, "reason", why->reason, "step", (int)why->step));
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
	struct limiter *lim = el->x->env->lim;
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
	const char *name = json_string_value(json_object_get(params, "name"));
	struct policy_tool t;
	struct policy_why why;
	json_t *doc = mcp_catalog(x);
	long ix;

	if (name == NULL || (ix = catalog_find(doc, name)) < 0)
		return 0;	/* nothing to decide: federate.c answers */
	catalog_policy_tool(x->cfg, doc, (size_t)ix, &t, NULL, NULL);
	if (x->pc.off)
		return gate_limit(el, &t, err);
	policy_decide(&x->pc, &t, &why);
	audit(x, "tools/call", "tool", name, &why);
	if (why.step == POLICY_VISIBLE)
		return gate_limit(el, &t, err);
	if (refuse(el, &why, err) < 0)
		return -1;
	gw_error_set(err, GW_EPARAMS, "Unknown tool");	/* exactly as for a tool that does not exist */
	return -1;
}

/* federate.c's gate for what an upstream offers besides tools: the policy's word on the
 * upstream (policy_decide_upstream), the same one that filters its prompts and
 * resources out of the lists. Tools were decided one by one (mcp_gate_call). f->ctx is
 * the element (m_forward). */
int
mcp_gate_upstream(struct fed_call *f, const char *method, const struct cfg_upstream *up, int alone)
{
	struct element *el = f->ctx;
	const struct exchange *x = el->x;
	struct policy_why why;

	if (x->pc.off || strcmp(method, "tools/call") == 0)
		return FED_PASS;
	if (!alone)
		return mcp_reaches(x, up->s.name) ? FED_PASS : FED_HIDDEN;
	policy_decide_upstream(&x->pc, up, &why);
	audit(x, method, "upstream", up->s.name, &why);
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
