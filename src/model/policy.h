/* policy — who sees which tool, prompt and resource (docs/ARCHITECTURE.md §4): one pure
 * function decides for the lists, the calls and gets and reads, and `mcpgate explain`,
 * so that list and call never drift.
 * No I/O, no clock, no globals, no allocation: everything it needs is passed in.
 *
 * Steps (step 1, the token itself, is auth.c's):
 *   2 the caller's tenant exists: its tenant claim names a [tenant], or the token has
 *     no tenant claim and there is a [tenant "*"]. A claim naming an unknown tenant
 *     never falls back to "*", and a claim of "*" itself is an unknown tenant (that
 *     section is for tokens without the claim, not a tenant one can claim);
 *   3 some group G holding the tool passes all four tests, in this order: G is listed
 *     in the tenant's groups; G's feature (if any) is among the tenant's features; the
 *     caller's identity groups include one of G's members (if any); the token has all
 *     of G's scopes. A tool is in G when G's `tools` globs (fnmatch) match its exposed
 *     name, a prompt when G's `prompts` globs match its exposed name, a resource or
 *     resource template when G's `resources` globs match its URI or URI template; and
 *     anything an upstream offers is in its upstream's group (`group`, default the
 *     upstream's name; without a [group] of that name the group has no requirements but
 *     the listing);
 *   4 (tools only) the tool matches no `deny` glob of the tenant (deny beats allow),
 *     and some `allow` glob when there are any (an empty `allow =` is no allow list);
 *   5 (tools only) in read-only mode, the tool is read-only: its upstream's
 *     `read-only-tools` globs match it, or the upstream has `trust-hints = yes` and
 *     annotates it readOnlyHint: true.
 *
 * The first failing step is the answer. When step 3 fails, the reason and rule come
 * from the group holding the tool that got furthest through the four tests, and are
 * those of its first failing test: not listed → group_forbidden (the tenant's
 * `groups` line), feature → feature_disabled (the group's `feature` line), members →
 * group_forbidden (its `members` line), scopes → its `scopes` line. Among groups
 * that got equally far, the one missing the fewest scopes, then the first in the file
 * (an upstream's group without a [group] section after those).
 * The reason is insufficient_scope only when the caller could step up: some group
 * fails nothing but scopes and steps 4 and 5 pass, or do not apply (only_scope is then set, and scopes
 * holds every scope the call needs: the granted ones, required-scopes and that
 * group's); a group that lacks scopes for a tool that steps 4 or 5 refuse anyway is
 * group_forbidden, so a client is never told to step up for nothing.
 *
 * A configuration without any [tenant] has no policy: every tool is visible to every
 * caller the token rules admit (as before policy existed). */
#ifndef GW_POLICY_H
#define GW_POLICY_H

#include "config.h"
#include "claims.h"

/* How many [group]s and [upstream]s policy_caller_init prepares a verdict for; beyond
 * them (an unusual configuration) the same tests run per tool, with the same answers. */
#define POLICY_GROUPS_MAX	256
#define POLICY_UPSTREAMS_MAX	64
#define POLICY_SCOPES_MAX	512	/* the scopes of an insufficient_scope answer */
#define POLICY_RULE_MAX		512

enum policy_step {
	POLICY_VISIBLE = 0,
	POLICY_TENANT = 2,
	POLICY_GROUP = 3,
	POLICY_RULE = 4,
	POLICY_READ_ONLY = 5,
};

/* A caller, prepared once per request by policy_caller_init. cfg, claims and tenant
 * are for everyone to read; the rest is policy.c's. */
struct policy_caller {
	const struct config *cfg;
	const struct claims *claims;
	const struct cfg_tenant *tenant;	/* NULL: unknown (or no policy, see off) */
	int off;				/* the configuration has no [tenant]: all visible */

	/* How far each of the first POLICY_GROUPS_MAX [group]s gets through step 3's
	 * tests for this caller, and the indexes of those that pass all four: a tool's
	 * step 3 is then the glob match of those few. For each upstream: the index of
	 * the [group] its `group` names (-1: none) and how far its group gets. */
	unsigned char reach[POLICY_GROUPS_MAX];
	unsigned short pass[POLICY_GROUPS_MAX];
	size_t n_pass;
	long up_group[POLICY_UPSTREAMS_MAX];
	unsigned char up_reach[POLICY_UPSTREAMS_MAX];
};

/* What a decision is about: a tool of the catalog (the default), or a prompt, a
 * resource or a resource template an upstream offers. */
enum policy_kind { POLICY_TOOL = 0, POLICY_PROMPT, POLICY_RESOURCE };

/* A record of the catalog: a tool, unless kind says otherwise. */
struct policy_tool {
	const char *name;			/* exposed name (a tool's, a prompt's), or a resource's URI or a template's URI template */
	const struct cfg_upstream *upstream;	/* where it comes from (in cfg->upstreams); NULL = none */
	int read_only_hint;			/* the upstream annotated readOnlyHint: true (tools) */
	enum policy_kind kind;
};

struct policy_why {
	enum policy_step step;
	/* NULL when visible; else tenant_forbidden, group_forbidden, insufficient_scope,
	 * feature_disabled, tool_denied or read_only_mode (the 403 `error` words). */
	const char *reason;
	/* The caller could step up (reason insufficient_scope): scopes is every scope the
	 * call needs, granted ones too, blank-separated, for WWW-Authenticate. */
	int only_scope;
	char scopes[POLICY_SCOPES_MAX];
	/* The configuration line that decided ({NULL, 0} when no line did, e.g. an
	 * unknown tenant), and the rule as "FILE:LINE: what" for explain and logs. */
	struct cfg_where where;
	char rule[POLICY_RULE_MAX];
};

/* Prepares c for claims under cfg (both borrowed for c's life): resolves the tenant
 * (tenant claim, else [tenant "*"]) and step 3's per-group verdicts. */
void policy_caller_init(struct policy_caller *c, const struct config *cfg, const struct claims *claims);
/* POLICY_VISIBLE, or the first failing step with *why filled. why may be NULL (a list
 * filter): the step is the same, found with less work. */
enum policy_step policy_decide(const struct policy_caller *c, const struct policy_tool *t,
    struct policy_why *why);
/* The decision on an upstream as a whole (its log level, and whether all it offers is
 * the caller's): steps 2 and 3 for the upstream's own group alone (its `group`,
 * default its name). Steps 4 and 5 are about tools and do not apply. A caller refused
 * only for scopes may step up (only_scope). A prompt or resource is decided on its own
 * (policy_decide with its kind): its upstream's group, or a group whose globs of its
 * kind match it. */
enum policy_step policy_decide_upstream(const struct policy_caller *c, const struct cfg_upstream *up,
    struct policy_why *why);
/* The [group] sections holding t, as step 3 finds them: its upstream's group (when a
 * [group] has that name) and every [group] whose globs of t's kind match its name,
 * each once, in the file's order. fn is called for each until it returns nonzero: that
 * value is returned, else 0. */
int policy_tool_groups(const struct config *cfg, const struct policy_tool *t,
    int (*fn)(const struct cfg_group *g, void *arg), void *arg);
/* A digest of what the decision depends on for this caller (tenant, scopes, groups):
 * equal digests see the same tools. 16 bytes. */
void policy_profile(const struct policy_caller *c, unsigned char out[16]);

#endif
