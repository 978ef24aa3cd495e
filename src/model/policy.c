/* policy — the visibility decision of docs/ARCHITECTURE.md §4 (the contract is in
 * policy.h).
 *
 * policy_caller_init does what depends only on the caller: the tenant, and how far
 * each group gets through step 3's tests. policy_decide then does per tool only what
 * depends on the tool's name: the globs of the groups that pass, of deny and allow,
 * and of read-only-tools. The reasons and rules of a refusal are worked out only when
 * the caller asks for them (why != NULL), never for a list filter. */
#include "autoconf.h"

#include <assert.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "policy.h"
#include "secret.h"
#include "str.h"

/* How far a group gets through step 3's tests: the first one it fails, in the order
 * of docs/ARCHITECTURE.md §4 (so a larger value is nearer to passing). */
enum reach { R_LISTED, R_FEATURE, R_MEMBERS, R_SCOPES, R_PASS };

/* The first of globs that matches name, or NULL. */
static const char *
glob_match(const struct strlist *globs, const char *name)
{
	size_t i;

	for (i = 0; i < globs->n; i++)
		if (fnmatch(globs->v[i], name, 0) == 0)
			return globs->v[i];
	return NULL;
}

/* A group's globs for what t is. */
static const struct strlist *
globs_of(const struct cfg_group *g, enum policy_kind k)
{
	return k == POLICY_PROMPT ? &g->prompts : k == POLICY_RESOURCE ? &g->resources : &g->tools;
}

static const char *
kind_key(enum policy_kind k)
{
	return k == POLICY_PROMPT ? "prompts" : k == POLICY_RESOURCE ? "resources" : "tools";
}

static long
group_index(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->n_groups; i++)
		if (strcmp(cfg->groups[i].s.name, name) == 0)
			return (long)i;
	return -1;
}

static const char *
upstream_group(const struct cfg_upstream *u)
{
	return u->group ? u->group : u->s.name;
}

/* How far group g gets for c; g NULL is an upstream's group without a [group]
 * section, named name, which only needs the listing. */
static enum reach
reach_of(const struct policy_caller *c, const struct cfg_group *g, const char *name)
{
	const struct cfg_tenant *tn = c->tenant;
	size_t i;
	int in;

	if (g && tn->listed ? !tn->listed[g - c->cfg->groups] : !strlist_has(&tn->groups, name))
		return R_LISTED;	/* (listed: the names resolved once, at load) */
	if (g == NULL)
		return R_PASS;
	if (g->feature && !strlist_has(&tn->features, g->feature))
		return R_FEATURE;
	for (i = 0, in = g->members.n == 0; i < g->members.n && !in; i++)
		in = str_has_word(c->claims->groups, g->members.v[i]);
	if (!in)
		return R_MEMBERS;
	for (i = 0; i < g->scopes.n; i++)
		if (!str_has_word(c->claims->scope, g->scopes.v[i]))
			return R_SCOPES;
	return R_PASS;
}

static enum reach
group_reach(const struct policy_caller *c, size_t i)
{
	if (i < POLICY_GROUPS_MAX)
		return (enum reach)c->reach[i];
	return reach_of(c, &c->cfg->groups[i], c->cfg->groups[i].s.name);
}

void
policy_caller_init(struct policy_caller *c, const struct config *cfg, const struct claims *claims)
{
	const struct cfg_upstream *u;
	size_t i;
	long gi;

	memset(c, 0, sizeof(*c));
	c->cfg = cfg;
	c->claims = claims;
	c->off = cfg->n_tenants == 0;
	if (claims->tenant[0] == '\0')
		c->tenant = config_tenant(cfg, "*");
	else if (strcmp(claims->tenant, "*") != 0)
		c->tenant = config_tenant(cfg, claims->tenant);
	if (c->off || c->tenant == NULL)
		return;
	for (i = 0; i < cfg->n_groups && i < POLICY_GROUPS_MAX; i++) {
		c->reach[i] = (unsigned char)reach_of(c, &cfg->groups[i], cfg->groups[i].s.name);
		if (c->reach[i] == R_PASS)
			c->pass[c->n_pass++] = (unsigned short)i;
	}
	for (i = 0; i < cfg->n_upstreams && i < POLICY_UPSTREAMS_MAX; i++) {
		u = &cfg->upstreams[i];
		gi = group_index(cfg, upstream_group(u));
		c->up_group[i] = gi;
		c->up_reach[i] = (unsigned char)(gi < 0 ? reach_of(c, NULL, upstream_group(u)) : group_reach(c, (size_t)gi));
	}
}

void
policy_profile(const struct policy_caller *c, unsigned char out[16])
{
	char buf[CLAIMS_SCOPE_MAX + CLAIMS_GROUPS_MAX + CLAIMS_TENANT_MAX + 8], off[21];
	const char *const part[4] = {
		off, c->tenant ? c->tenant->s.name : "", c->claims->scope, c->claims->groups,
	};

	str_u64(off, (uint64_t)(c->off != 0));
	secret_digest(buf, str_join0(buf, sizeof(buf), part, 4), out, 16);
}

/* The group the tool's upstream names: its [group] index (-1: no such section) and
 * how far it gets. 0, or -1 when the tool has no upstream. */
static int
own_group(const struct policy_caller *c, const struct policy_tool *t, long *gi, enum reach *r)
{
	const struct config *cfg = c->cfg;
	uintptr_t p = (uintptr_t)t->upstream, base = (uintptr_t)cfg->upstreams;
	size_t ui;

	if (t->upstream == NULL)
		return -1;
	/* Prepared when the tool's upstream is one of cfg's (it always is, but a
	 * section of another configuration is looked up by name rather than trusted). */
	if (cfg->n_upstreams > 0 && p >= base && (p - base) % sizeof(*cfg->upstreams) == 0 &&
	    (ui = (p - base) / sizeof(*cfg->upstreams)) < cfg->n_upstreams && ui < POLICY_UPSTREAMS_MAX) {
		*gi = c->up_group[ui];
		*r = (enum reach)c->up_reach[ui];
		return 0;
	}
	*gi = group_index(cfg, upstream_group(t->upstream));
	*r = *gi < 0 ? reach_of(c, NULL, upstream_group(t->upstream)) : group_reach(c, (size_t)*gi);
	return 0;
}

/* Step 3 for a list filter: does a group that passes hold the tool? */
static int
step3_passes(const struct policy_caller *c, const struct policy_tool *t, int has_own, enum reach own)
{
	const struct config *cfg = c->cfg;
	size_t i;

	if (has_own && own == R_PASS)
		return 1;
	for (i = 0; i < c->n_pass; i++)
		if (glob_match(globs_of(&cfg->groups[c->pass[i]], t->kind), t->name))
			return 1;
	for (i = POLICY_GROUPS_MAX; i < cfg->n_groups; i++)
		if (glob_match(globs_of(&cfg->groups[i], t->kind), t->name) && group_reach(c, i) == R_PASS)
			return 1;
	return 0;
}

static size_t
missing_scopes(const struct policy_caller *c, const struct cfg_group *g)
{
	size_t i, n = 0;

	for (i = 0; i < g->scopes.n; i++)
		n += !str_has_word(c->claims->scope, g->scopes.v[i]);
	return n;
}

/* The group holding the tool that got furthest (see policy.h for the tie rules). */
struct best {
	int found;
	const struct cfg_group *g;	/* NULL: an upstream's group without a section */
	const char *name;
	enum reach r;
	size_t missing;
};

static void
consider(const struct policy_caller *c, struct best *b, const struct cfg_group *g, const char *name, enum reach r)
{
	size_t missing = r == R_SCOPES ? missing_scopes(c, g) : 0;

	if (!b->found || r > b->r || (r == b->r && missing < b->missing)) {
		b->found = 1;
		b->g = g;
		b->name = name;
		b->r = r;
		b->missing = missing;
	}
}

int
policy_tool_groups(const struct config *cfg, const struct policy_tool *t,
    int (*fn)(const struct cfg_group *g, void *arg), void *arg)
{
	long own = t->upstream ? group_index(cfg, upstream_group(t->upstream)) : -1;
	size_t i;
	int rc;

	for (i = 0; i < cfg->n_groups; i++)
		if ((own == (long)i || glob_match(globs_of(&cfg->groups[i], t->kind), t->name)) &&
		    (rc = fn(&cfg->groups[i], arg)) != 0)
			return rc;
	return 0;
}

struct best_of {
	const struct policy_caller *c;
	struct best *b;
};

static int
consider_group(const struct cfg_group *g, void *arg)
{
	const struct best_of *a = arg;

	consider(a->c, a->b, g, g->s.name, group_reach(a->c, (size_t)(g - a->c->cfg->groups)));
	return 0;
}

/* The groups holding the tool (policy_tool_groups), and its upstream's group when no
 * [group] has its name. */
static void
step3_best(const struct policy_caller *c, const struct policy_tool *t, int has_own, long own_gi, enum reach own,
    struct best *b)
{
	struct best_of a = { c, b };

	memset(b, 0, sizeof(*b));
	policy_tool_groups(c->cfg, t, consider_group, &a);
	if (has_own && own_gi < 0)
		consider(c, b, NULL, upstream_group(t->upstream), own);
}

/* Step 4: NULL when the tool passes, else the key that refuses it ("deny", with
 * *glob the deny glob that matches, or "allow"). */
static const char *
step4(const struct cfg_tenant *tn, const char *name, const char **glob)
{
	if ((*glob = glob_match(&tn->deny, name)) != NULL)
		return "deny";
	if (tn->allow.n > 0 && glob_match(&tn->allow, name) == NULL)
		return "allow";
	return NULL;
}

/* Step 5: 1 when the tool passes. */
static int
step5(const struct cfg_tenant *tn, const struct policy_tool *t)
{
	if (tn->access_mode != ACCESS_READ_ONLY)
		return 1;
	return t->upstream && (glob_match(&t->upstream->read_only_tools, t->name) ||
	    (t->upstream->trust_hints && t->read_only_hint));
}

/* --- the reasons, for a caller who asks ---------------------------------------------- */

/* A list's words, blank-separated, capped (for the rule's text). */
static const char *
joined(const struct strlist *l, char *out, size_t n)
{
	size_t i, len = 0;

	out[0] = '\0';
	for (i = 0; i < l->n && len + 1 < n; i++)
		len += (size_t)snprintf(out + len, n - len, "%s%s", i ? " " : "", l->v[i]);
	return out;
}

/* The refusals: each one's reason (the 403 `error` word) and the step that gives it. */
enum refusal { REF_TENANT, REF_GROUP, REF_FEATURE, REF_SCOPE, REF_DENIED, REF_READ_ONLY };

static const struct {
	enum policy_step step;
	const char *reason;
} refusals[] = {
	[REF_TENANT] = { POLICY_TENANT, "tenant_forbidden" },
	[REF_GROUP] = { POLICY_GROUP, "group_forbidden" },
	[REF_FEATURE] = { POLICY_GROUP, "feature_disabled" },
	[REF_SCOPE] = { POLICY_GROUP, "insufficient_scope" },
	[REF_DENIED] = { POLICY_RULE, "tool_denied" },
	[REF_READ_ONLY] = { POLICY_READ_ONLY, "read_only_mode" },
};

static void refuse(struct policy_why *why, enum refusal r, const struct cfg_where *w,
    const struct cfg_where *fallback, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Fills why for the refusal r, decided by the line w (else the line fallback, e.g. the
 * section header when the key was not set). */
static void
refuse(struct policy_why *why, enum refusal r, const struct cfg_where *w, const struct cfg_where *fallback,
    const char *fmt, ...)
{
	char what[POLICY_RULE_MAX - 64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	why->step = refusals[r].step;
	why->reason = refusals[r].reason;
	if ((w == NULL || w->file == NULL) && fallback)
		w = fallback;
	if (w && w->file) {
		why->where = *w;
		snprintf(why->rule, sizeof(why->rule), "%s:%d: %s", w->file, w->line, what);
	} else
		snprintf(why->rule, sizeof(why->rule), "%s", what);
}

/* Adds the words of more to the blank-separated set in out (capped at n). */
static void
add_words(char *out, size_t n, const char *more)
{
	char w[256];
	const char *p = more;
	size_t len, have;

	while (*p) {
		p += strspn(p, " \t");
		len = strcspn(p, " \t");
		if (len > 0 && len < sizeof(w)) {
			memcpy(w, p, len);
			w[len] = '\0';
			have = strlen(out);
			if (!str_has_word(out, w) && have + len + 2 < n)
				snprintf(out + have, n - have, "%s%s", have ? " " : "", w);
		}
		p += len;
	}
}

static void
add_list(char *out, size_t n, const struct strlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		add_words(out, n, l->v[i]);
}

/* Why step 2 fails. No line decides it (the section is missing), so the rule names
 * the main file. */
static void
explain_step2(const struct policy_caller *c, struct policy_why *why)
{
	const char *file = c->cfg->n_files ? c->cfg->files[0].path : "the configuration";
	const char *claim = c->claims->tenant;

	if (claim[0] == '\0')
		refuse(why, REF_TENANT, NULL, NULL, "%s: no [tenant \"*\"], which tokens without a tenant claim need", file);
	else if (strcmp(claim, "*") == 0)
		refuse(why, REF_TENANT, NULL, NULL,
		    "%s: the tenant claim \"*\" names no tenant ([tenant \"*\"] is for tokens without the claim)", file);
	else
		refuse(why, REF_TENANT, NULL, NULL, "%s: no [tenant \"%s\"] (the token's tenant claim)", file, claim);
}

/* Why step 3 fails: b is the group that got furthest; later says whether steps 4
 * and 5 would pass (so that stepping up would help). */
static void
explain_step3(const struct policy_caller *c, const struct policy_tool *t, const struct best *b, int later,
    struct policy_why *why)
{
	const struct cfg_tenant *tn = c->tenant;
	char list[200], lacks[200];
	size_t i;

	if (!b->found) {
		refuse(why, REF_GROUP, NULL, NULL,
		    "no group holds %s: no [group] %s glob matches it and it comes from no upstream", t->name,
		    kind_key(t->kind));
		return;
	}
	switch (b->r) {
	case R_LISTED:
		refuse(why, REF_GROUP, config_tenant_where(tn, "groups"), &tn->s.where,
		    "[tenant \"%s\"] groups does not list %s", tn->s.name, b->name);
		break;
	case R_FEATURE:
		assert(b->g != NULL);	/* reach_of: only a [group] has a feature */
		refuse(why, REF_FEATURE, config_group_where(b->g, "feature"), &b->g->s.where,
		    "[group \"%s\"] feature = %s, which [tenant \"%s\"] features does not list", b->name,
		    b->g->feature, tn->s.name);
		break;
	case R_MEMBERS:
		refuse(why, REF_GROUP, config_group_where(b->g, "members"), &b->g->s.where,
		    "[group \"%s\"] members = %s: the caller is in none of them", b->name,
		    joined(&b->g->members, list, sizeof(list)));
		break;
	default:	/* R_SCOPES */
		lacks[0] = '\0';
		for (i = 0; i < b->g->scopes.n; i++)
			if (!str_has_word(c->claims->scope, b->g->scopes.v[i]))
				add_words(lacks, sizeof(lacks), b->g->scopes.v[i]);
		refuse(why, later ? REF_SCOPE : REF_GROUP,
		    config_group_where(b->g, "scopes"), &b->g->s.where, "[group \"%s\"] scopes: the token lacks %s%s",
		    b->name, lacks, later ? "" : " (no step-up: a later step refuses the tool too)");
		if (later) {
			why->only_scope = 1;
			add_words(why->scopes, sizeof(why->scopes), c->claims->scope);
			add_list(why->scopes, sizeof(why->scopes), &c->cfg->required_scopes);
			add_list(why->scopes, sizeof(why->scopes), &b->g->scopes);
		}
		break;
	}
}

static void
explain_step4(const struct cfg_tenant *tn, const struct policy_tool *t, const char *key, const char *glob,
    struct policy_why *why)
{
	char list[200];

	if (strcmp(key, "deny") == 0)
		refuse(why, REF_DENIED, config_tenant_where(tn, "deny"), &tn->s.where,
		    "[tenant \"%s\"] deny: %s matches %s", tn->s.name, glob, t->name);
	else
		refuse(why, REF_DENIED, config_tenant_where(tn, "allow"), &tn->s.where,
		    "[tenant \"%s\"] allow = %s: none matches %s", tn->s.name, joined(&tn->allow, list, sizeof(list)),
		    t->name);
}

static void
explain_step5(const struct cfg_tenant *tn, const struct policy_tool *t, struct policy_why *why)
{
	char how[200];

	if (t->upstream == NULL)
		snprintf(how, sizeof(how), "it comes from no upstream");
	else if (t->read_only_hint)
		snprintf(how, sizeof(how), "no read-only-tools of [upstream \"%s\"] matches it, and its readOnlyHint "
		    "is not trusted (trust-hints = no)", t->upstream->s.name);
	else
		snprintf(how, sizeof(how), "no read-only-tools of [upstream \"%s\"] matches it%s", t->upstream->s.name,
		    t->upstream->trust_hints ? ", and it has no readOnlyHint" : "");
	refuse(why, REF_READ_ONLY, config_tenant_where(tn, "access-mode"), &tn->s.where,
	    "[tenant \"%s\"] access-mode = read-only, and %s is not read-only: %s", tn->s.name, t->name, how);
}

static void
why_clear(struct policy_why *why)
{
	if (why == NULL)
		return;
	why->step = POLICY_VISIBLE;
	why->reason = NULL;
	why->only_scope = 0;
	why->scopes[0] = why->rule[0] = '\0';
	why->where.file = NULL;
	why->where.line = 0;
}

enum policy_step
policy_decide(const struct policy_caller *c, const struct policy_tool *t, struct policy_why *why)
{
	const struct cfg_tenant *tn = c->tenant;
	const char *key, *glob;
	struct best b;
	enum reach own = R_LISTED;
	long own_gi = -1;
	int has_own, later;

	why_clear(why);
	if (c->off)
		return POLICY_VISIBLE;
	if (tn == NULL) {
		if (why)
			explain_step2(c, why);
		return POLICY_TENANT;
	}
	has_own = own_group(c, t, &own_gi, &own) == 0;
	if (!step3_passes(c, t, has_own, own)) {
		if (why == NULL)
			return POLICY_GROUP;
		step3_best(c, t, has_own, own_gi, own, &b);
		/* Steps 4 and 5 only to tell whether the caller could step up. */
		later = b.found && b.r == R_SCOPES &&
		    (t->kind != POLICY_TOOL || (step4(tn, t->name, &glob) == NULL && step5(tn, t)));
		explain_step3(c, t, &b, later, why);
		return POLICY_GROUP;
	}
	if (t->kind != POLICY_TOOL)	/* allow, deny and read-only mode name tools */
		return POLICY_VISIBLE;
	if ((key = step4(tn, t->name, &glob)) != NULL) {
		if (why)
			explain_step4(tn, t, key, glob, why);
		return POLICY_RULE;
	}
	if (!step5(tn, t)) {
		if (why)
			explain_step5(tn, t, why);
		return POLICY_READ_ONLY;
	}
	return POLICY_VISIBLE;
}

enum policy_step
policy_decide_upstream(const struct policy_caller *c, const struct cfg_upstream *up, struct policy_why *why)
{
	struct policy_tool t = { .name = up->s.name, .upstream = up };
	struct best b;
	enum reach own;
	long gi;

	why_clear(why);
	if (c->off)
		return POLICY_VISIBLE;
	if (c->tenant == NULL) {
		if (why)
			explain_step2(c, why);
		return POLICY_TENANT;
	}
	own_group(c, &t, &gi, &own);
	if (own == R_PASS)
		return POLICY_VISIBLE;
	if (why) {
		memset(&b, 0, sizeof(b));
		consider(c, &b, gi < 0 ? NULL : &c->cfg->groups[gi], upstream_group(up), own);
		explain_step3(c, &t, &b, 1, why);	/* no step 4 or 5 here: a step-up is all it takes */
	}
	return POLICY_GROUP;
}
