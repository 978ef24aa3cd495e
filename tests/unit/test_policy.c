/* Unit tests: the visibility decision of DESIGN §4 (src/policy.c), table-driven — each
 * step alone and in combination — then properties over random callers and random
 * configurations: deciding twice agrees, more scopes never hide a tool, another deny
 * rule never shows one, and no tenant section means no policy. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy.h"
#include "tap.h"

static const char *conf_text =
	"[gateway]\nresource = https://gw.example.com/mcp\nname = gw\nversion = 1\n"
	"[auth]\nissuer = https://idp.example.com\nrequired-scopes = mcp:tools\n"
	"[upstream \"github\"]\nurl = http://127.0.0.1:9/mcp\nprefix = gh_\ngroup = github\n"
	"read-only-tools = gh_get_* gh_list_*\n"
	"[upstream \"files\"]\nurl = http://127.0.0.1:9/mcp\nprefix = fs_\n"
	"[upstream \"hinty\"]\nurl = http://127.0.0.1:9/mcp\nprefix = hi_\ngroup = hints\ntrust-hints = yes\n"
	"[upstream \"other\"]\nurl = http://127.0.0.1:9/mcp\nprefix = ot_\n"
	"[group \"github\"]\ntools = gh_*\nscopes = mcp:github\nmembers = engineering\n"	/* line 16.. */
	"[group \"admin\"]\ntools = gh_delete_* fs_delete_*\nscopes = mcp:admin\nmembers = admins ops\n"
	"[group \"beta\"]\ntools = fs_beta_*\nfeature = beta\n"
	"[group \"open\"]\ntools = ot_*\n"
	"[tenant \"acme\"]\ngroups = github files admin beta open\nfeatures = beta\ndeny = gh_delete_repo\n"
	"[tenant \"*\"]\ngroups = open\n"
	"[tenant \"ro\"]\ngroups = github files hints open\naccess-mode = read-only\n"
	"[tenant \"allowy\"]\ngroups = files open\nallow = fs_read* ot_*\n"
	"[tenant \"nofeat\"]\ngroups = beta\n"
	"[tenant \"denyall\"]\ngroups = files\ndeny = fs_*\nallow = fs_read\n";

struct who {
	const char *tenant, *scope, *groups;
};

static const struct who A = { "acme", "mcp:tools mcp:github", "engineering" };
static const struct who A0 = { "acme", "mcp:tools", "engineering" };
static const struct who Aadm = { "acme", "mcp:tools mcp:admin", "admins" };
static const struct who Aall = { "acme", "mcp:tools mcp:github mcp:admin", "engineering admins" };
static const struct who Anon = { "acme", "mcp:tools mcp:github", "sales" };
static const struct who Amany = { "acme", "mcp:tools mcp:github mcp:extra", "sales engineering ops" };
static const struct who S = { "", "mcp:tools", "" };
static const struct who U = { "zzz", "mcp:tools mcp:github", "engineering" };
static const struct who R = { "ro", "mcp:tools mcp:github", "engineering" };
static const struct who R0 = { "ro", "mcp:tools", "engineering" };
static const struct who L = { "allowy", "mcp:tools", "" };
static const struct who D = { "denyall", "mcp:tools", "" };
static const struct who F = { "nofeat", "mcp:tools", "" };

static const struct row {
	const struct who *who;
	const char *tool, *upstream;
	int hint;
	enum policy_step step;
	const char *reason;
	int only_scope;
} rows[] = {
	/* everything passes */
	{ &A, "gh_search", "github", 0, POLICY_VISIBLE, NULL, 0 },
	{ &A, "gh_get_issue", "github", 0, POLICY_VISIBLE, NULL, 0 },
	{ &A, "gh_create_issue", "github", 0, POLICY_VISIBLE, NULL, 0 },
	{ &A, "gh_delete_branch", "github", 0, POLICY_VISIBLE, NULL, 0 },
	{ &A, "fs_search", "files", 0, POLICY_VISIBLE, NULL, 0 },	/* the upstream's group, no [group] */
	{ &A, "fs_read", "files", 0, POLICY_VISIBLE, NULL, 0 },
	{ &A, "fs_write", "files", 0, POLICY_VISIBLE, NULL, 0 },
	{ &A, "fs_beta_x", "files", 0, POLICY_VISIBLE, NULL, 0 },	/* feature present */
	{ &A, "fs_delete_x", "files", 0, POLICY_VISIBLE, NULL, 0 },	/* any one group suffices */
	{ &A, "ot_x", "other", 0, POLICY_VISIBLE, NULL, 0 },		/* a group without members: everyone */
	{ &A, "ot_y", "other", 0, POLICY_VISIBLE, NULL, 0 },
	{ &Amany, "gh_search", "github", 0, POLICY_VISIBLE, NULL, 0 },	/* superset of scopes, one of several groups */
	{ &Aall, "gh_delete_branch", "github", 0, POLICY_VISIBLE, NULL, 0 },
	{ &Aall, "gh_search", "github", 0, POLICY_VISIBLE, NULL, 0 },
	{ &Aadm, "gh_delete_branch", "github", 0, POLICY_VISIBLE, NULL, 0 },	/* via admin, not github */
	{ &Aadm, "fs_delete_x", "files", 0, POLICY_VISIBLE, NULL, 0 },
	{ &Anon, "fs_read", "files", 0, POLICY_VISIBLE, NULL, 0 },
	{ &Anon, "fs_delete_x", "files", 0, POLICY_VISIBLE, NULL, 0 },
	{ &S, "ot_x", "other", 0, POLICY_VISIBLE, NULL, 0 },		/* tenant "*" for no tenant claim */
	{ &S, "ot_y", "other", 0, POLICY_VISIBLE, NULL, 0 },
	{ &A0, "fs_read", "files", 0, POLICY_VISIBLE, NULL, 0 },
	{ &A0, "fs_search", "files", 0, POLICY_VISIBLE, NULL, 0 },	/* same name as gh_search, other prefix */
	/* step 2: the tenant */
	{ &U, "gh_search", "github", 0, POLICY_TENANT, "tenant_forbidden", 0 },
	{ &U, "ot_x", "other", 0, POLICY_TENANT, "tenant_forbidden", 0 },
	{ &U, "fs_read", "files", 0, POLICY_TENANT, "tenant_forbidden", 0 },
	/* step 3: groups, members, features, scopes */
	{ &A0, "gh_search", "github", 0, POLICY_GROUP, "insufficient_scope", 1 },	/* scope subset */
	{ &A0, "gh_get_issue", "github", 0, POLICY_GROUP, "insufficient_scope", 1 },
	{ &A0, "gh_delete_repo", "github", 0, POLICY_GROUP, "insufficient_scope", 0 },	/* also denied */
	{ &Aadm, "gh_search", "github", 0, POLICY_GROUP, "group_forbidden", 0 },	/* not a member */
	{ &Anon, "gh_search", "github", 0, POLICY_GROUP, "group_forbidden", 0 },
	{ &A, "hi_read", "hinty", 1, POLICY_GROUP, "group_forbidden", 0 },		/* group not listed */
	{ &S, "fs_read", "files", 0, POLICY_GROUP, "group_forbidden", 0 },
	{ &S, "gh_search", "github", 0, POLICY_GROUP, "group_forbidden", 0 },
	{ &S, "fs_search", "files", 0, POLICY_GROUP, "group_forbidden", 0 },
	{ &S, "hi_read", "hinty", 1, POLICY_GROUP, "group_forbidden", 0 },
	{ &F, "fs_beta_x", "files", 0, POLICY_GROUP, "feature_disabled", 0 },	/* feature missing */
	{ &F, "fs_read", "files", 0, POLICY_GROUP, "group_forbidden", 0 },
	{ &F, "ot_x", "other", 0, POLICY_GROUP, "group_forbidden", 0 },
	{ &L, "gh_search", "github", 0, POLICY_GROUP, "group_forbidden", 0 },
	{ &D, "ot_x", "other", 0, POLICY_GROUP, "group_forbidden", 0 },
	{ &A, "zz_unknown", NULL, 0, POLICY_GROUP, "group_forbidden", 0 },		/* no group at all */
	{ &R0, "gh_get_issue", "github", 0, POLICY_GROUP, "insufficient_scope", 1 },	/* read-only tool */
	{ &R0, "gh_search", "github", 0, POLICY_GROUP, "insufficient_scope", 0 },	/* also not read-only */
	/* step 4: deny and allow */
	{ &A, "gh_delete_repo", "github", 0, POLICY_RULE, "tool_denied", 0 },
	{ &Aadm, "gh_delete_repo", "github", 0, POLICY_RULE, "tool_denied", 0 },
	{ &Aall, "gh_delete_repo", "github", 0, POLICY_RULE, "tool_denied", 0 },
	{ &L, "fs_read", "files", 0, POLICY_VISIBLE, NULL, 0 },
	{ &L, "fs_read_more", "files", 0, POLICY_VISIBLE, NULL, 0 },
	{ &L, "ot_x", "other", 0, POLICY_VISIBLE, NULL, 0 },
	{ &L, "fs_write", "files", 0, POLICY_RULE, "tool_denied", 0 },		/* allow does not match */
	{ &L, "fs_search", "files", 0, POLICY_RULE, "tool_denied", 0 },
	{ &D, "fs_read", "files", 0, POLICY_RULE, "tool_denied", 0 },		/* deny beats allow */
	{ &D, "fs_write", "files", 0, POLICY_RULE, "tool_denied", 0 },
	/* step 5: read-only mode */
	{ &R, "gh_get_issue", "github", 0, POLICY_VISIBLE, NULL, 0 },		/* read-only-tools */
	{ &R, "gh_list_repos", "github", 0, POLICY_VISIBLE, NULL, 0 },
	{ &R, "gh_search", "github", 0, POLICY_READ_ONLY, "read_only_mode", 0 },
	{ &R, "gh_create_issue", "github", 0, POLICY_READ_ONLY, "read_only_mode", 0 },
	{ &R, "gh_get_issue", "github", 1, POLICY_VISIBLE, NULL, 0 },
	{ &R, "hi_read", "hinty", 1, POLICY_VISIBLE, NULL, 0 },			/* a trusted hint */
	{ &R, "hi_write", "hinty", 0, POLICY_READ_ONLY, "read_only_mode", 0 },
	{ &R, "fs_hinted", "files", 1, POLICY_READ_ONLY, "read_only_mode", 0 },	/* hints not trusted */
	{ &R, "fs_read", "files", 0, POLICY_READ_ONLY, "read_only_mode", 0 },
	{ &R, "ot_x", "other", 0, POLICY_READ_ONLY, "read_only_mode", 0 },
};

static char dir[] = "/tmp/mcpgate-test-policy-XXXXXX";
static int nconf;

static struct config *
load(const char *text)
{
	struct cfg_errors errs;
	struct config *cfg = NULL;
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/p%d.conf", dir, nconf++);
	if ((f = fopen(path, "w")) == NULL)
		return NULL;
	fputs(text, f);
	fclose(f);
	if (config_load(path, &cfg, &errs) < 0) {
		fprintf(stderr, "%s\n", errs.n ? errs.msg[0] : "?");
		config_unref(cfg);
		cfg = NULL;
	}
	unlink(path);
	return cfg;
}

static void
claims_of(const struct who *w, struct tc_claims *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->subject, sizeof(c->subject), "alice");
	snprintf(c->tenant, sizeof(c->tenant), "%s", w->tenant);
	snprintf(c->scope, sizeof(c->scope), "%s", w->scope);
	snprintf(c->groups, sizeof(c->groups), "%s", w->groups);
}

static const struct cfg_upstream *
upstream(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; name && i < cfg->n_upstreams; i++)
		if (strcmp(cfg->upstreams[i].s.name, name) == 0)
			return &cfg->upstreams[i];
	return NULL;
}

static enum policy_step
decide(const struct config *cfg, const struct who *w, const char *tool, const char *up, int hint,
    struct policy_why *why)
{
	struct tc_claims cl;
	struct policy_caller c;
	struct policy_tool t = { tool, upstream(cfg, up), hint };

	claims_of(w, &cl);
	policy_caller_init(&c, cfg, &cl);
	return policy_decide(&c, &t, why);
}

/* --- random configurations ----------------------------------------------------------- */

static const char *const r_scopes[] = { "s1", "s2", "s3" };
static const char *const r_members[] = { "m1", "m2", "m3" };
static const char *const r_tools[] = { "a_one", "a_two", "b_one", "b_two", "c_x" };
static const char *const r_ups[] = { "a", "b", "c" };

static const char *
pick(const char *const *v, size_t n)
{
	return v[(size_t)rand() % n];
}

static void
random_conf(char *out, size_t n, int with_deny)
{
	static const char *const globs[] = { "a_*", "b_*", "*_one", "c_*", "*" };
	size_t len = 0;
	int g, t;

	len += (size_t)snprintf(out + len, n - len,
	    "[gateway]\nresource = https://gw.example.com/mcp\n[auth]\nissuer = https://idp.example.com\n"
	    "[upstream \"a\"]\nurl = http://127.0.0.1:9/mcp\nprefix = a_\nread-only-tools = a_one\n"
	    "[upstream \"b\"]\nurl = http://127.0.0.1:9/mcp\nprefix = b_\ntrust-hints = %s\n"
	    "[upstream \"c\"]\nurl = http://127.0.0.1:9/mcp\nprefix = c_\n", rand() % 2 ? "yes" : "no");
	for (g = 0; g < 3; g++) {
		len += (size_t)snprintf(out + len, n - len, "[group \"g%d\"]\ntools = %s\n", g, pick(globs, 5));
		if (rand() % 2)
			len += (size_t)snprintf(out + len, n - len, "scopes = %s\n", pick(r_scopes, 3));
		if (rand() % 2)
			len += (size_t)snprintf(out + len, n - len, "members = %s %s\n", pick(r_members, 3), pick(r_members, 3));
		if (rand() % 3 == 0)
			len += (size_t)snprintf(out + len, n - len, "feature = f%d\n", rand() % 2);
	}
	for (t = 0; t < 2; t++) {
		len += (size_t)snprintf(out + len, n - len, "[tenant \"t%d\"]\ngroups = g%d g%d %s\nfeatures = f%d\n",
		    t, rand() % 3, rand() % 3, rand() % 2 ? "a" : "b", rand() % 2);
		if (rand() % 3 == 0)
			len += (size_t)snprintf(out + len, n - len, "access-mode = read-only\n");
		if (rand() % 3 == 0)
			len += (size_t)snprintf(out + len, n - len, "allow = %s\n", pick(globs, 5));
		if (with_deny >= 0 && rand() % 3 == 0)
			len += (size_t)snprintf(out + len, n - len, "deny = %s\n", pick(r_tools, 5));
	}
}

int
main(void)
{
	struct config *cfg, *c2;
	struct policy_why why;
	char text[4096], text2[4200];
	size_t i;
	int k, bad;

	if (mkdtemp(dir) == NULL || (cfg = load(conf_text)) == NULL)
		return 1;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		enum policy_step got = decide(cfg, r->who, r->tool, r->upstream, r->hint, &why);

		ok(got == r->step && (r->reason == NULL ? why.reason == NULL : why.reason && strcmp(why.reason, r->reason) == 0) &&
		    why.only_scope == r->only_scope,
		    "%s %s/[%s]/[%s] %s%s: step %d %s%s (got %d %s%s; %s)", r->who->tenant[0] ? r->who->tenant : "(none)",
		    r->who->scope, r->who->groups, r->tool, r->hint ? " readOnlyHint" : "", "", r->step,
		    r->reason ? r->reason : "visible", r->only_scope ? " (scope only)" : "",
		    got, why.reason ? why.reason : "visible", why.only_scope ? " (scope only)" : "", why.rule);
	}

	/* The rule explain names: file and line. */
	decide(cfg, &A, "gh_delete_repo", "github", 0, &why);
	ok(strstr(why.rule, ".conf:") && strstr(why.rule, "deny matches gh_delete_repo"), "a deny names its line: %s", why.rule);
	decide(cfg, &A0, "gh_search", "github", 0, &why);
	ok(strstr(why.rule, ":26: [group \"github\"] scopes"), "missing scopes name the group's scopes line: %s", why.rule);
	is_str(why.scopes, "mcp:tools mcp:github", "insufficient_scope: every scope the call needs, granted ones too");
	decide(cfg, &F, "fs_beta_x", "files", 0, &why);
	ok(strstr(why.rule, "feature beta") != NULL, "a missing feature names it: %s", why.rule);
	decide(cfg, &R, "gh_search", "github", 0, &why);
	ok(strstr(why.rule, "access-mode = read-only") != NULL, "read-only mode names the tenant's line: %s", why.rule);
	decide(cfg, &U, "gh_search", "github", 0, &why);
	ok(strstr(why.rule, "no [tenant \"zzz\"]") != NULL, "an unknown tenant is said so: %s", why.rule);

	/* Profiles: equal for equal claims, different when what decides differs. */
	{
		struct tc_claims c1, c2c;
		struct policy_caller p1, p2;
		unsigned char d1[16], d2[16];

		claims_of(&A, &c1);
		claims_of(&A, &c2c);
		snprintf(c2c.subject, sizeof(c2c.subject), "bob");
		policy_caller_init(&p1, cfg, &c1);
		policy_caller_init(&p2, cfg, &c2c);
		policy_profile(&p1, d1);
		policy_profile(&p2, d2);
		ok(memcmp(d1, d2, 16) == 0, "two callers with the same tenant, scopes and groups share a profile");
		claims_of(&A0, &c2c);
		policy_caller_init(&p2, cfg, &c2c);
		policy_profile(&p2, d2);
		ok(memcmp(d1, d2, 16) != 0, "… other scopes: another profile");
	}

	/* No [tenant]: no policy. */
	c2 = load("[gateway]\nresource = https://gw.example.com/mcp\n[auth]\nissuer = https://idp.example.com\n"
	    "[upstream \"x\"]\nurl = http://127.0.0.1:9/mcp\n[group \"g\"]\ntools = *\nscopes = never\n");
	ok(c2 && decide(c2, &U, "anything", "x", 0, NULL) == POLICY_VISIBLE &&
	    decide(c2, &S, "other", NULL, 0, NULL) == POLICY_VISIBLE,
	    "no [tenant] section: every tool visible to every caller (no policy)");
	config_unref(c2);
	config_unref(cfg);

	/* Properties over random configurations and callers. */
	srand(20261122);
	bad = 0;
	for (k = 0; k < 400 && !bad; k++) {
		random_conf(text, sizeof(text), 0);
		if ((cfg = load(text)) == NULL) {
			bad = 1;
			break;
		}
		for (i = 0; i < 12 && !bad; i++) {
			char scope[64], scope_more[80], groups[64];
			struct who w = { "", scope, groups }, wm = { "", scope_more, groups };
			const char *tool = pick(r_tools, 5);
			const char *up = tool[0] == 'a' ? "a" : tool[0] == 'b' ? "b" : "c";
			int hint = rand() % 2;
			enum policy_step s1, s2, s3;

			w.tenant = wm.tenant = rand() % 5 == 0 ? "nope" : rand() % 2 ? "t0" : "t1";
			snprintf(scope, sizeof(scope), "%s", pick(r_scopes, 3));
			snprintf(scope_more, sizeof(scope_more), "%s %s %s", scope, pick(r_scopes, 3), pick(r_scopes, 3));
			snprintf(groups, sizeof(groups), "%s", rand() % 2 ? pick(r_members, 3) : "");
			s1 = decide(cfg, &w, tool, up, hint, NULL);
			s2 = decide(cfg, &w, tool, up, hint, NULL);
			s3 = decide(cfg, &wm, tool, up, hint, NULL);
			if (s1 != s2)
				bad = 2;
			else if (s1 == POLICY_VISIBLE && s3 != POLICY_VISIBLE)
				bad = 3;
			else if (s1 == POLICY_TENANT && s3 != POLICY_TENANT)
				bad = 4;
			if (bad)
				fprintf(stderr, "# config:\n%s\n# caller %s [%s] [%s], tool %s: %d %d %d\n", text, w.tenant,
				    scope, groups, tool, s1, s2, s3);
		}
		/* The same configuration with one more deny rule: nothing becomes visible. */
		snprintf(text2, sizeof(text2), "%s", text);
		if (strstr(text2, "[tenant \"t0\"]\n") && !strstr(text2, "deny")) {
			char *at = strstr(text2, "[tenant \"t0\"]\n") + strlen("[tenant \"t0\"]\n");
			char tail[4200];
			const char *dtool = pick(r_tools, 5);
			size_t j;

			snprintf(tail, sizeof(tail), "%s", at);
			snprintf(at, sizeof(text2) - (size_t)(at - text2), "deny = %s\n%s", dtool, tail);
			if ((c2 = load(text2)) != NULL) {
				for (j = 0; j < 5 && !bad; j++) {
					struct who w = { "t0", "s1 s2 s3", "m1 m2 m3" };
					const char *up = r_tools[j][0] == 'a' ? "a" : r_tools[j][0] == 'b' ? "b" : "c";

					if (decide(cfg, &w, r_tools[j], up, 1, NULL) != POLICY_VISIBLE &&
					    decide(c2, &w, r_tools[j], up, 1, NULL) == POLICY_VISIBLE)
						bad = 5;
					if (strcmp(r_tools[j], dtool) == 0 && decide(c2, &w, r_tools[j], up, 1, NULL) == POLICY_VISIBLE)
						bad = 6;
				}
				config_unref(c2);
			}
		}
		config_unref(cfg);
	}
	is_int(bad, 0, "400 random configurations x 12 callers: deciding twice agrees, more scopes never hide "
	    "a tool nor change an unknown tenant, a deny rule hides its tool and shows nothing");
	(void)r_ups;
	rmdir(dir);
	return done_testing();
}
