/* policy — who sees which tool (DESIGN §4): one pure function decides for tools/list,
 * tools/call and `mcpgate explain`, so that list and call never drift. No I/O, no
 * clock: everything it needs is passed in.
 *
 * Steps (step 1, the token itself, is auth.c's):
 *   2 the caller's tenant (its tenant claim, else [tenant "*"]) exists;
 *   3 some group G holding the tool is in the tenant's groups, G's feature (if any) is
 *     among the tenant's features, the caller is in one of G's members (if any), and
 *     has all of G's scopes. A tool is in G when G's `tools` globs match its exposed
 *     name, or when G is its upstream's group (`group`, default the upstream's name;
 *     without a [group] of that name the group has no requirements);
 *   4 the tool matches no `deny` glob of the tenant, and some `allow` glob when there
 *     are any;
 *   5 in read-only mode, the tool is read-only: its upstream's `read-only-tools` globs
 *     match it, or the upstream has `trust-hints = yes` and annotates readOnlyHint.
 * A configuration without any [tenant] has no policy: every tool is visible to every
 * caller the token rules admit (as before policy existed). */
#ifndef GW_POLICY_H
#define GW_POLICY_H

#include "config.h"
#include "token_cache.h"

enum policy_step {
	POLICY_VISIBLE = 0,
	POLICY_TENANT = 2,
	POLICY_GROUP = 3,
	POLICY_RULE = 4,
	POLICY_READ_ONLY = 5,
};

/* A caller, prepared once per request. */
struct policy_caller {
	const struct config *cfg;
	const struct tc_claims *claims;
	const struct cfg_tenant *tenant;	/* NULL: unknown (or no policy, see off) */
	int off;				/* the configuration has no [tenant]: all visible */
};

/* A tool of the catalog. */
struct policy_tool {
	const char *name;			/* exposed name */
	const struct cfg_upstream *upstream;	/* where it comes from; NULL = none */
	int read_only_hint;			/* the upstream annotated readOnlyHint: true */
};

struct policy_why {
	enum policy_step step;
	/* For the caller: tenant_forbidden, group_forbidden, insufficient_scope,
	 * feature_disabled, tool_denied, read_only_mode. */
	const char *reason;
	/* Only the scope test failed (for a group that passes the rest, and steps 4 and 5
	 * pass): the caller could step up to scopes, all it needs (granted ones too). */
	int only_scope;
	char scopes[512];
	/* The rule that failed, for explain: "FILE:LINE: what", or a sentence. */
	char rule[512];
};

/* Prepares c for claims under cfg (both borrowed for c's life). */
void policy_caller_init(struct policy_caller *c, const struct config *cfg, const struct tc_claims *claims);
/* POLICY_VISIBLE, or the first failing step with *why filled (why may be NULL). */
enum policy_step policy_decide(const struct policy_caller *c, const struct policy_tool *t,
    struct policy_why *why);
/* A digest of what the decision depends on for this caller (tenant, scopes, groups):
 * equal digests see the same tools. 16 bytes. */
void policy_profile(const struct policy_caller *c, unsigned char out[16]);

#endif
