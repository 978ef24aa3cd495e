/* policy — the visibility decision of DESIGN §4. */
#include "autoconf.h"

#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policy.h"
#include "secret.h"

/* Is word one of the blank-separated words of list? */
static int
word_in(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list;

	while (p && *p) {
		p += strspn(p, " ");
		if (strncmp(p, word, n) == 0 && (p[n] == ' ' || p[n] == '\0') && n > 0)
			return 1;
		p += strcspn(p, " ");
	}
	return 0;
}

static int
glob_any(const struct strlist *globs, const char *name)
{
	size_t i;

	for (i = 0; i < globs->n; i++)
		if (fnmatch(globs->v[i], name, 0) == 0)
			return 1;
	return 0;
}

static const struct cfg_group *
group_named(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; name && i < cfg->n_groups; i++)
		if (strcmp(cfg->groups[i].s.name, name) == 0)
			return &cfg->groups[i];
	return NULL;
}

void
policy_caller_init(struct policy_caller *c, const struct config *cfg, const struct tc_claims *claims)
{
	memset(c, 0, sizeof(*c));
	c->cfg = cfg;
	c->claims = claims;
	c->off = cfg->n_tenants == 0;
	c->tenant = config_tenant(cfg, claims->tenant[0] ? claims->tenant : "*");
}

void
policy_profile(const struct policy_caller *c, unsigned char out[16])
{
	char buf[TC_SCOPE_MAX + TC_GROUPS_MAX + TC_TENANT_MAX + 8];
	int n;

	n = snprintf(buf, sizeof(buf), "%d%c%s%c%s%c%s", c->off, 0, c->tenant ? c->tenant->s.name : "",
	    0, c->claims->scope, 0, c->claims->groups);
	secret_digest(buf, n < 0 ? 0 : (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1, out, 16);
}

static void rule(struct policy_why *why, const struct cfg_where *w, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
rule(struct policy_why *why, const struct cfg_where *w, const char *fmt, ...)
{
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (w && w->file)
		snprintf(why->rule, sizeof(why->rule), "%s:%d: %s", w->file, w->line, what);
	else
		snprintf(why->rule, sizeof(why->rule), "%s", what);
}

/* How a group fares for the caller: the four tests of step 3. */
struct gtest {
	const struct cfg_group *g;	/* NULL: an upstream's group without a [group] section */
	const char *name;
	int listed, feature, member, scope;
};

static void
test_group(const struct policy_caller *c, const struct cfg_group *g, const char *name, struct gtest *t)
{
	size_t i;

	t->g = g;
	t->name = name;
	t->listed = strlist_has(&c->tenant->groups, name);
	t->feature = g == NULL || g->feature == NULL || strlist_has(&c->tenant->features, g->feature);
	t->member = g == NULL || g->members.n == 0;
	for (i = 0; g && i < g->members.n && !t->member; i++)
		t->member = word_in(c->claims->groups, g->members.v[i]);
	t->scope = 1;
	for (i = 0; g && i < g->scopes.n && t->scope; i++)
		t->scope = word_in(c->claims->scope, g->scopes.v[i]);
}

/* Adds the words of more to the blank-separated set in out. */
static void
add_words(char *out, size_t n, const char *more)
{
	char w[256];
	const char *p = more;
	size_t len;

	while (*p) {
		p += strspn(p, " ");
		len = strcspn(p, " ");
		if (len > 0 && len < sizeof(w)) {
			memcpy(w, p, len);
			w[len] = '\0';
			if (!word_in(out, w) && strlen(out) + len + 2 < n)
				snprintf(out + strlen(out), n - strlen(out), "%s%s", *out ? " " : "", w);
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

/* Step 3: 1 when some group holding the tool passes; else 0 with *best the group
 * nearest to passing (scope only, then feature, then members, then not listed). */
static int
step3(const struct policy_caller *c, const struct policy_tool *t, struct gtest *best)
{
	const struct config *cfg = c->cfg;
	const char *ug = t->upstream ? (t->upstream->group ? t->upstream->group : t->upstream->s.name) : NULL;
	struct gtest g;
	int rank, best_rank = -1, seen_upstream_group = 0;
	size_t i;

	memset(best, 0, sizeof(*best));
	for (i = 0; i <= cfg->n_groups; i++) {
		if (i < cfg->n_groups) {
			const struct cfg_group *grp = &cfg->groups[i];
			int own = ug && strcmp(grp->s.name, ug) == 0;

			if (!own && !glob_any(&grp->tools, t->name))
				continue;
			seen_upstream_group |= own;
			test_group(c, grp, grp->s.name, &g);
		} else {
			if (ug == NULL || seen_upstream_group || group_named(cfg, ug))
				continue;
			test_group(c, NULL, ug, &g);
		}
		if (g.listed && g.feature && g.member && g.scope)
			return 1;
		rank = !g.listed ? 0 : !g.member ? 1 : !g.feature ? 2 : 3;
		if (rank > best_rank) {
			best_rank = rank;
			*best = g;
		}
	}
	return 0;
}

enum policy_step
policy_decide(const struct policy_caller *c, const struct policy_tool *t, struct policy_why *why)
{
	struct policy_why scratch;
	const struct cfg_tenant *tn = c->tenant;
	struct gtest g;
	enum policy_step step = POLICY_VISIBLE;
	int read_only;

	if (why == NULL)
		why = &scratch;
	memset(why, 0, sizeof(*why));
	if (c->off)
		return POLICY_VISIBLE;
	if (tn == NULL) {
		why->step = POLICY_TENANT;
		why->reason = "tenant_forbidden";
		rule(why, NULL, "no [tenant \"%s\"] in the configuration%s",
		    c->claims->tenant[0] ? c->claims->tenant : "*", c->claims->tenant[0] ? "" : " (tokens without a tenant)");
		return POLICY_TENANT;
	}
	if (!step3(c, t, &g)) {
		step = POLICY_GROUP;
		if (g.name == NULL) {
			why->reason = "group_forbidden";
			rule(why, NULL, "no group holds %s (no [group] tools glob matches it)", t->name);
		} else if (!g.listed) {
			why->reason = "group_forbidden";
			rule(why, config_tenant_where(tn, "groups"), "[tenant \"%s\"] groups does not list %s",
			    tn->s.name, g.name);
		} else if (!g.member) {
			why->reason = "group_forbidden";
			rule(why, config_group_where(g.g, "members"), "[group \"%s\"] members: the caller is in none",
			    g.name);
		} else if (!g.feature) {
			why->reason = "feature_disabled";
			rule(why, config_group_where(g.g, "feature"), "[group \"%s\"] feature %s is not among the tenant's features",
			    g.name, g.g->feature);
		} else {
			why->reason = "insufficient_scope";
			why->only_scope = 1;
			rule(why, config_group_where(g.g, "scopes"), "[group \"%s\"] scopes: the token lacks some of them",
			    g.name);
			add_words(why->scopes, sizeof(why->scopes), c->claims->scope);
			add_list(why->scopes, sizeof(why->scopes), &c->cfg->required_scopes);
			add_list(why->scopes, sizeof(why->scopes), &g.g->scopes);
		}
	}
	/* Steps 4 and 5 also run after a failed step 3, to tell whether scopes alone
	 * would let the caller in. */
	if (glob_any(&tn->deny, t->name) || (tn->allow.n > 0 && !glob_any(&tn->allow, t->name))) {
		why->only_scope = 0;
		if (step == POLICY_VISIBLE) {
			step = POLICY_RULE;
			why->reason = "tool_denied";
			if (glob_any(&tn->deny, t->name))
				rule(why, config_tenant_where(tn, "deny"), "[tenant \"%s\"] deny matches %s", tn->s.name, t->name);
			else
				rule(why, config_tenant_where(tn, "allow"), "[tenant \"%s\"] allow does not match %s",
				    tn->s.name, t->name);
		}
	}
	read_only = t->upstream && (glob_any(&t->upstream->read_only_tools, t->name) ||
	    (t->upstream->trust_hints && t->read_only_hint));
	if (tn->access_mode == ACCESS_READ_ONLY && !read_only) {
		why->only_scope = 0;
		if (step == POLICY_VISIBLE) {
			step = POLICY_READ_ONLY;
			why->reason = "read_only_mode";
			rule(why, config_tenant_where(tn, "access-mode"),
			    "[tenant \"%s\"] access-mode = read-only, and %s is not marked read-only", tn->s.name, t->name);
		}
	}
	why->step = step;
	return step;
}
