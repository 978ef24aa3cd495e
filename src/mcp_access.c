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
mcp_reaches(const struct mcp_call *c, const char *name)
{
	const struct cfg_upstream *u;

	if (c->pc.off)
		return 1;
	return (u = config_upstream(c->cfg, name)) != NULL && policy_decide_upstream(&c->pc, u, NULL) == POLICY_VISIBLE;
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
audit(const struct mcp_call *c, const char *method, const char *what, const char *name, const struct policy_why *why)
{
	char who[33];

	session_who(c->caller->claims.subject, "", "", who);
	log_json(GW_LOG_INFO, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:s?, s:i}",
	    "request_id", c->req->id, "audit", method, "tenant", c->pc.tenant ? c->pc.tenant->s.name : "",
	    "subject", who, "client_id", c->caller->claims.client_id, what, name,
	    "allowed", why->step == POLICY_VISIBLE, "reason", why->reason, "step", (int)why->step));
}

/* A refusal of the policy as the caller gets it: 403 insufficient_scope with the scopes
 * to step up to, hidden (deny-style hide: 1, the caller answers as for what does not
 * exist), or 403 with the reason; a batch element gets a JSON-RPC error instead of the
 * 403. -1 with err (and c->denied for a single request), or 1. */
static int
refuse(struct mcp_call *c, const struct policy_why *why, struct gw_error *err)
{
	size_t i;

	if (why->only_scope) {
		c->denied = GW_ESCOPE;
		snprintf(c->denied_scopes, sizeof(c->denied_scopes), "%s", why->scopes);
		gw_error_set(err, GW_EREFUSED, "Forbidden: insufficient_scope (needs %.200s)", why->scopes);
	} else if (c->cfg->deny_style == DENY_HIDE) {
		return 1;
	} else {
		for (i = 0; i < sizeof(denials) / sizeof(denials[0]); i++)
			if (strcmp(denials[i].reason, why->reason) == 0)
				c->denied = denials[i].e;
		gw_error_set(err, GW_EREFUSED, "Forbidden: %s", why->reason);
	}
	if (c->in_batch)
		c->denied = GW_OK;	/* a batch element gets its JSON-RPC error; the others proceed */
	return -1;
}

/* The tool's rate limit, on a call the policy allowed (of a tool that exists: a name
 * nobody serves fills no bucket). 0, or -1 with err (its facts in c->err_data), and
 * c->denied for a single request. */
static int
gate_limit(struct mcp_call *c, const char *name, struct gw_error *err)
{
	int rc;

	if (c->env->lim == NULL || (rc = limiter_tool(c->env->lim, name, clock_mono_us() * 1000)) == LIMIT_PASS)
		return 0;
	limiter_error(c->env->lim, rc, err);
	json_decref(c->err_data);
	c->err_data = limiter_data(c->env->lim, rc);
	c->denied = c->in_batch ? GW_OK : err->code;
	c->limit_rc = rc;
	return -1;
}

/* The policy's word on a tools/call (the same decision tools/list made), written to the
 * audit log, then the tool's rate limit. 0 to go on; -1 with err, and c->denied for a
 * single request. */
int
mcp_gate_call(struct mcp_call *c, json_t *params, struct gw_error *err)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	struct policy_tool t;
	struct policy_why why;
	json_t *doc = mcp_catalog(c);
	long ix;

	if (name == NULL || (ix = catalog_find(doc, name)) < 0)
		return 0;	/* nothing to decide: federate.c answers */
	if (c->pc.off)
		return gate_limit(c, name, err);
	catalog_policy_tool(c->cfg, doc, (size_t)ix, &t, NULL, NULL);
	policy_decide(&c->pc, &t, &why);
	audit(c, "tools/call", "tool", name, &why);
	if (why.step == POLICY_VISIBLE)
		return gate_limit(c, name, err);
	if (refuse(c, &why, err) < 0)
		return -1;
	gw_error_set(err, GW_EPARAMS, "Unknown tool");	/* exactly as for a tool that does not exist */
	return -1;
}

/* federate.c's gate for what an upstream offers besides tools: the policy's word on the
 * upstream (policy_decide_upstream), the same one that filters its prompts and
 * resources out of the lists. Tools were decided one by one (gate_call). */
int
mcp_gate_upstream(struct fed_call *f, const char *method, const struct cfg_upstream *up, int alone)
{
	struct mcp_call *c = f->ctx;
	struct policy_why why;

	if (c->pc.off || strcmp(method, "tools/call") == 0)
		return FED_PASS;
	if (!alone)
		return mcp_reaches(c, up->s.name) ? FED_PASS : FED_HIDDEN;
	policy_decide_upstream(&c->pc, up, &why);
	audit(c, method, "upstream", up->s.name, &why);
	if (why.step == POLICY_VISIBLE)
		return FED_PASS;
	return refuse(c, &why, &f->err) > 0 ? FED_HIDDEN : FED_DENIED;
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
