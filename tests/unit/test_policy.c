/* Unit tests: the visibility decision of docs/ARCHITECTURE.md §4 (src/model/policy.c).
 *
 * 1. A table: each step alone and in combination, each row with the step, the reason,
 *    whether the caller could step up, and the configuration line the rule names
 *    (checked against the text of the file: its section and key).
 * 2. Properties over seeded random configurations, callers and tools, against a
 *    reference written here straight from docs/ARCHITECTURE.md §4: the step, the
 *    reason (with the precedence policy.h documents), the rule's line, the step-up
 *    scopes; deciding is deterministic and the list filter (why NULL) equals the
 *    per-tool decision; a tool hidden at a step stays hidden at that step whatever the
 *    later steps say; more scopes or identity groups never hide a tool.
 * (How long deciding takes is bench/policy.sh's, not a test's.) */
#include "autoconf.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "fixture.h"
#include "policy.h"
#include "str.h"
#include "tap.h"

static const char *conf_text =
	"[gateway]\nresource = https://gw.example.com/mcp\nname = gw\nversion = 1\n"
	"[auth]\nissuer = https://idp.example.com\nrequired-scopes = mcp:tools\n"
	"[upstream \"github\"]\nurl = http://127.0.0.1:9/mcp\nprefix = gh_\ngroup = github\n"
	"read-only-tools = gh_get_* gh_list_*\n"
	"[upstream \"files\"]\nurl = http://127.0.0.1:9/mcp\nprefix = fs_\n"
	"[upstream \"hinty\"]\nurl = http://127.0.0.1:9/mcp\nprefix = hi_\ngroup = hints\ntrust-hints = yes\n"
	"[upstream \"other\"]\nurl = http://127.0.0.1:9/mcp\nprefix = ot_\n"
	"[upstream \"sec\"]\nurl = http://127.0.0.1:9/mcp\nprefix = se_\ngroup = secured\n"
	"[group \"github\"]\ntools = gh_*\nscopes = mcp:github\nmembers = engineering\n"
	"[group \"admin\"]\ntools = gh_delete_* fs_delete_*\nscopes = mcp:admin\nmembers = admins ops\n"
	"[group \"beta\"]\ntools = fs_beta_*\nfeature = beta\n"
	"[group \"betaops\"]\ntools = fs_bops_*\nfeature = beta\nmembers = ops\n"
	"[group \"open\"]\ntools = ot_*\n"
	"[group \"secured\"]\nscopes = mcp:sec\n"		/* no tools glob: its upstream's tools */
	"[group \"wide\"]\ntools = se_wide_*\nscopes = mcp:a mcp:b\n"
	"[group \"narrow\"]\ntools = se_wide_*\nscopes = mcp:c\nmembers = engineering\n"
	"[tenant \"acme\"]\ngroups = github files admin beta open secured\nfeatures = beta\ndeny = gh_delete_repo\n"
	"[tenant \"*\"]\ngroups = open\n"
	"[tenant \"ro\"]\ngroups = github files hints open\naccess-mode = read-only\n"
	"[tenant \"allowy\"]\ngroups = files open\nallow = fs_read* ot_*\n"
	"[tenant \"nofeat\"]\ngroups = beta betaops\n"
	"[tenant \"withfeat\"]\ngroups = beta betaops\nfeatures = beta\n"
	"[tenant \"denyall\"]\ngroups = files\ndeny = fs_*\nallow = fs_read\n"
	"[tenant \"empty\"]\ngroups = files\nallow =\n"
	"[tenant \"nogroups\"]\nfeatures = beta\n"
	"[tenant \"stepup\"]\ngroups = wide narrow\n";

struct who {
	const char *tenant, *scope, *groups;
};

static const struct who A = { "acme", "mcp:tools mcp:github", "engineering" };
static const struct who A0 = { "acme", "mcp:tools", "engineering" };
static const struct who Aadm = { "acme", "mcp:tools mcp:admin", "admins" };
static const struct who Aall = { "acme", "mcp:tools mcp:github mcp:admin mcp:sec", "engineering admins" };
static const struct who Anon = { "acme", "mcp:tools mcp:github", "sales" };
static const struct who Amany = { "acme", "mcp:tools mcp:github mcp:extra", "sales engineering ops" };
static const struct who Anone = { "acme", "mcp:tools", "" };
static const struct who S = { "", "mcp:tools", "" };
static const struct who Sstar = { "*", "mcp:tools", "" };
static const struct who U = { "zzz", "mcp:tools mcp:github", "engineering" };
static const struct who R = { "ro", "mcp:tools mcp:github", "engineering" };
static const struct who R0 = { "ro", "mcp:tools", "engineering" };
static const struct who L = { "allowy", "mcp:tools", "" };
static const struct who D = { "denyall", "mcp:tools", "" };
static const struct who F = { "nofeat", "mcp:tools", "" };
static const struct who Fops = { "nofeat", "mcp:tools", "ops" };
static const struct who W = { "withfeat", "mcp:tools", "" };
static const struct who Wops = { "withfeat", "mcp:tools", "sales ops" };
static const struct who E = { "empty", "mcp:tools", "" };
static const struct who N = { "nogroups", "mcp:tools mcp:github", "engineering" };
static const struct who P = { "stepup", "mcp:tools", "engineering" };
static const struct who Pn = { "stepup", "mcp:tools", "" };
static const struct who Pa = { "stepup", "mcp:tools mcp:a", "engineering" };
static const struct who Pc = { "stepup", "mcp:tools mcp:c", "engineering" };

#define V	POLICY_VISIBLE, NULL, 0, NULL
static const struct row {
	const struct who *who;
	const char *tool, *upstream;
	int hint;
	enum policy_step step;
	const char *reason;
	int only_scope;
	/* The line the rule names: its section header, a blank, the line's start ("" = no
	 * line; a header alone when the section lacks the key). */
	const char *line;
} rows[] = {
	/* everything passes */
	{ &A, "gh_search", "github", 0, V },
	{ &A, "gh_get_issue", "github", 0, V },
	{ &A, "gh_create_issue", "github", 0, V },
	{ &A, "gh_delete_branch", "github", 0, V },	/* github holds it; admin need not */
	{ &A, "fs_search", "files", 0, V },		/* the upstream's group, no [group] section */
	{ &A, "fs_read", "files", 0, V },
	{ &A, "fs_delete_x", "files", 0, V },		/* admin fails, files passes: any one group */
	{ &A, "ot_x", "other", 0, V },			/* a group without members: everyone */
	{ &Amany, "gh_search", "github", 0, V },	/* scope superset; member of one of several */
	{ &Aall, "gh_delete_branch", "github", 0, V },
	{ &Aadm, "gh_delete_branch", "github", 0, V },	/* via admin, not github */
	{ &Aadm, "fs_delete_x", "files", 0, V },
	{ &Anon, "fs_read", "files", 0, V },
	{ &S, "ot_x", "other", 0, V },			/* tenant "*" for no tenant claim */
	{ &A0, "fs_search", "files", 0, V },		/* same tool as gh_search, other prefix */
	{ &A0, "fs_echo", "files", 0, V },
	{ &Aall, "se_x", "sec", 0, V },			/* a [group] without tools: its upstream's */
	{ &E, "fs_write", "files", 0, V },		/* `allow =` empty: no allow list */
	{ &E, "fs_read", "files", 0, V },
	{ &L, "fs_read", "files", 0, V },
	{ &L, "fs_read_more", "files", 0, V },
	{ &L, "ot_x", "other", 0, V },
	{ &R, "gh_get_issue", "github", 0, V },		/* read-only-tools */
	{ &R, "gh_list_repos", "github", 0, V },
	{ &R, "gh_get_issue", "github", 1, V },
	{ &R, "hi_read", "hinty", 1, V },		/* a trusted hint */
	{ &W, "fs_beta_x", "files", 0, V },		/* the feature is on */
	{ &Wops, "fs_bops_x", "files", 0, V },		/* feature and members */
	{ &Pc, "se_wide_x", "sec", 0, V },
	/* step 2: the tenant */
	{ &U, "gh_search", "github", 0, POLICY_TENANT, "tenant_forbidden", 0, "" },
	{ &U, "ot_x", "other", 0, POLICY_TENANT, "tenant_forbidden", 0, "" },
	{ &U, "fs_read", "files", 0, POLICY_TENANT, "tenant_forbidden", 0, "" },
	{ &Sstar, "ot_x", "other", 0, POLICY_TENANT, "tenant_forbidden", 0, "" },	/* a claim of "*" */
	/* step 3: groups, features, members, scopes */
	{ &A0, "gh_search", "github", 0, POLICY_GROUP, "insufficient_scope", 1, "[group \"github\"] scopes =" },
	{ &A0, "gh_echo", "github", 0, POLICY_GROUP, "insufficient_scope", 1, "[group \"github\"] scopes =" },
	{ &A0, "gh_get_issue", "github", 0, POLICY_GROUP, "insufficient_scope", 1, "[group \"github\"] scopes =" },
	/* step 3 before step 4; no step-up offered since deny refuses it anyway */
	{ &A0, "gh_delete_repo", "github", 0, POLICY_GROUP, "group_forbidden", 0, "[group \"github\"] scopes =" },
	{ &Aadm, "gh_search", "github", 0, POLICY_GROUP, "group_forbidden", 0, "[group \"github\"] members =" },
	{ &Anon, "gh_search", "github", 0, POLICY_GROUP, "group_forbidden", 0, "[group \"github\"] members =" },
	/* members before scopes: neither is no step-up */
	{ &Anone, "gh_search", "github", 0, POLICY_GROUP, "group_forbidden", 0, "[group \"github\"] members =" },
	{ &A, "hi_read", "hinty", 1, POLICY_GROUP, "group_forbidden", 0, "[tenant \"acme\"] groups =" },
	{ &S, "fs_read", "files", 0, POLICY_GROUP, "group_forbidden", 0, "[tenant \"*\"] groups = open" },
	{ &S, "gh_search", "github", 0, POLICY_GROUP, "group_forbidden", 0, "[tenant \"*\"] groups = open" },
	{ &S, "hi_read", "hinty", 1, POLICY_GROUP, "group_forbidden", 0, "[tenant \"*\"] groups = open" },
	{ &F, "fs_beta_x", "files", 0, POLICY_GROUP, "feature_disabled", 0, "[group \"beta\"] feature = beta" },
	/* feature before members */
	{ &F, "fs_bops_x", "files", 0, POLICY_GROUP, "feature_disabled", 0, "[group \"betaops\"] feature = beta" },
	{ &Fops, "fs_bops_x", "files", 0, POLICY_GROUP, "feature_disabled", 0, "[group \"betaops\"] feature = beta" },
	{ &W, "fs_bops_x", "files", 0, POLICY_GROUP, "group_forbidden", 0, "[group \"betaops\"] members = ops" },
	{ &F, "fs_read", "files", 0, POLICY_GROUP, "group_forbidden", 0, "[tenant \"nofeat\"] groups = beta betaops" },
	{ &F, "ot_x", "other", 0, POLICY_GROUP, "group_forbidden", 0, "[tenant \"nofeat\"] groups =" },
	{ &L, "gh_search", "github", 0, POLICY_GROUP, "group_forbidden", 0, "[tenant \"allowy\"] groups = files open" },
	{ &D, "ot_x", "other", 0, POLICY_GROUP, "group_forbidden", 0, "[tenant \"denyall\"] groups = files" },
	{ &A, "zz_unknown", NULL, 0, POLICY_GROUP, "group_forbidden", 0, "" },	/* no group at all */
	{ &R0, "gh_get_issue", "github", 0, POLICY_GROUP, "insufficient_scope", 1, "[group \"github\"] scopes =" },
	/* not read-only either: no step-up */
	{ &R0, "gh_search", "github", 0, POLICY_GROUP, "group_forbidden", 0, "[group \"github\"] scopes =" },
	/* no groups at all in the tenant: its header */
	{ &N, "gh_search", "github", 0, POLICY_GROUP, "group_forbidden", 0, "[tenant \"nogroups\"]" },
	{ &N, "fs_read", "files", 0, POLICY_GROUP, "group_forbidden", 0, "[tenant \"nogroups\"]" },
	{ &A, "se_x", "sec", 0, POLICY_GROUP, "insufficient_scope", 1, "[group \"secured\"] scopes = mcp:sec" },
	/* two groups fail on scopes only: the one missing fewer, then the first in the file */
	{ &P, "se_wide_x", "sec", 0, POLICY_GROUP, "insufficient_scope", 1, "[group \"narrow\"] scopes = mcp:c" },
	{ &Pn, "se_wide_x", "sec", 0, POLICY_GROUP, "insufficient_scope", 1, "[group \"wide\"] scopes =" },
	{ &Pa, "se_wide_x", "sec", 0, POLICY_GROUP, "insufficient_scope", 1, "[group \"wide\"] scopes =" },
	{ &P, "se_other", "sec", 0, POLICY_GROUP, "group_forbidden", 0, "[tenant \"stepup\"] groups = wide narrow" },
	/* step 4: deny and allow */
	{ &A, "gh_delete_repo", "github", 0, POLICY_RULE, "tool_denied", 0, "[tenant \"acme\"] deny = gh_delete_repo" },
	{ &Aadm, "gh_delete_repo", "github", 0, POLICY_RULE, "tool_denied", 0, "[tenant \"acme\"] deny =" },
	{ &Aall, "gh_delete_repo", "github", 0, POLICY_RULE, "tool_denied", 0, "[tenant \"acme\"] deny =" },
	{ &Amany, "gh_delete_repo", "github", 0, POLICY_RULE, "tool_denied", 0, "[tenant \"acme\"] deny =" },
	{ &L, "fs_write", "files", 0, POLICY_RULE, "tool_denied", 0, "[tenant \"allowy\"] allow = fs_read* ot_*" },
	{ &L, "fs_search", "files", 0, POLICY_RULE, "tool_denied", 0, "[tenant \"allowy\"] allow =" },
	{ &D, "fs_read", "files", 0, POLICY_RULE, "tool_denied", 0, "[tenant \"denyall\"] deny = fs_*" },	/* deny beats allow */
	{ &D, "fs_write", "files", 0, POLICY_RULE, "tool_denied", 0, "[tenant \"denyall\"] deny = fs_*" },
	/* step 5: read-only mode */
	{ &R, "gh_search", "github", 0, POLICY_READ_ONLY, "read_only_mode", 0, "[tenant \"ro\"] access-mode = read-only" },
	{ &R, "gh_create_issue", "github", 0, POLICY_READ_ONLY, "read_only_mode", 0, "[tenant \"ro\"] access-mode =" },
	{ &R, "hi_write", "hinty", 0, POLICY_READ_ONLY, "read_only_mode", 0, "[tenant \"ro\"] access-mode =" },
	{ &R, "fs_hinted", "files", 1, POLICY_READ_ONLY, "read_only_mode", 0, "[tenant \"ro\"] access-mode =" },	/* hints not trusted */
	{ &R, "fs_read", "files", 0, POLICY_READ_ONLY, "read_only_mode", 0, "[tenant \"ro\"] access-mode =" },
	{ &R, "fs_get_x", "files", 0, POLICY_READ_ONLY, "read_only_mode", 0, "[tenant \"ro\"] access-mode =" },	/* gh_get_* is not fs_get_* */
	{ &R, "ot_x", "other", 1, POLICY_READ_ONLY, "read_only_mode", 0, "[tenant \"ro\"] access-mode =" },
	{ &R0, "fs_read", "files", 0, POLICY_READ_ONLY, "read_only_mode", 0, "[tenant \"ro\"] access-mode =" },
};
#undef V

static struct config *
load(const char *text)
{
	return fixture_config(text);
}

/* Line n (from 1) of text as "[section] line", or the header alone; "" without one. */
static const char *
line_of(const char *text, int n, char *out, size_t len)
{
	char hdr[128] = "", cur[256];
	const char *p = text, *e;
	int i;

	out[0] = '\0';
	for (i = 1; *p && i <= n; i++) {
		e = strchr(p, '\n');
		if (e == NULL)
			e = p + strlen(p);
		snprintf(cur, sizeof(cur), "%.*s", (int)(e - p), p);
		if (cur[0] == '[')
			snprintf(hdr, sizeof(hdr), "%.120s", cur);
		if (i == n) {
			if (cur[0] == '[')
				snprintf(out, len, "%s", cur);
			else
				snprintf(out, len, "%s %.200s", hdr, cur);
		}
		p = *e ? e + 1 : e;
	}
	return out;
}

/* Does why name the line want (see struct row) of text, with rule = "FILE:LINE: …"? */
static int
names_line(const char *text, const struct policy_why *why, const char *want, char *got, size_t len)
{
	char head[300];

	snprintf(got, len, "(no line)");
	if (want[0] == '\0')
		return why->where.file == NULL && why->rule[0] != '\0';
	if (why->where.file == NULL)
		return 0;
	line_of(text, why->where.line, got, len);
	snprintf(head, sizeof(head), "%s:%d: ", why->where.file, why->where.line);
	return strncmp(got, want, strlen(want)) == 0 && strncmp(why->rule, head, strlen(head)) == 0;
}

static void
claims_of(const struct who *w, struct claims *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->subject, sizeof(c->subject), "alice");
	snprintf(c->tenant, sizeof(c->tenant), "%s", w->tenant);
	snprintf(c->scope, sizeof(c->scope), "%s", w->scope);
	snprintf(c->groups, sizeof(c->groups), "%s", w->groups);
}

static enum policy_step
decide(const struct config *cfg, const struct who *w, const char *tool, const char *up, int hint,
    struct policy_why *why)
{
	struct claims cl;
	struct policy_caller c;
	struct policy_tool t = { tool, config_upstream(cfg, up), hint, POLICY_TOOL };

	claims_of(w, &cl);
	policy_caller_init(&c, cfg, &cl);
	return policy_decide(&c, &t, why);
}

/* policy_decide_upstream: deny, allow and read-only mode are about tools; an
 * upstream's own group is what counts, not the [group]s whose globs hold its tools. */
static const struct up_row {
	const struct who *who;
	const char *upstream;
	enum policy_step step;
	const char *reason;
	int only_scope;
	const char *line;
} up_rows[] = {
#define UV	POLICY_VISIBLE, NULL, 0, NULL
	{ &A, "github", UV },
	{ &Amany, "github", UV },
	{ &A, "files", UV },			/* no [group "files"]: listed is enough */
	{ &R, "files", UV },			/* read-only mode: reading is allowed */
	{ &R0, "hinty", UV },
	{ &D, "files", UV },			/* deny = fs_* names tools */
	{ &E, "files", UV },
	{ &L, "files", UV },			/* allow = fs_read* ot_*: tools again */
	{ &Aall, "sec", UV },
	{ &U, "github", POLICY_TENANT, "tenant_forbidden", 0, "" },
	{ &Sstar, "other", POLICY_TENANT, "tenant_forbidden", 0, "" },
	{ &A0, "github", POLICY_GROUP, "insufficient_scope", 1, "[group \"github\"] scopes =" },
	{ &A, "sec", POLICY_GROUP, "insufficient_scope", 1, "[group \"secured\"] scopes =" },
	{ &Anon, "github", POLICY_GROUP, "group_forbidden", 0, "[group \"github\"] members =" },
	{ &A, "hinty", POLICY_GROUP, "group_forbidden", 0, "[tenant \"acme\"] groups =" },
	/* ot_* tools are visible through [group "open"]; the upstream's own group "other"
	 * is not listed, so its prompts and resources are not */
	{ &A, "other", POLICY_GROUP, "group_forbidden", 0, "[tenant \"acme\"] groups =" },
	{ &S, "files", POLICY_GROUP, "group_forbidden", 0, "[tenant \"*\"] groups =" },
	{ &N, "files", POLICY_GROUP, "group_forbidden", 0, "[tenant \"nogroups\"]" },
#undef UV
};

static int
same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static void
table(void)
{
	struct config *cfg = load(conf_text);
	struct claims cl0;
	struct policy_caller pc0;
	struct policy_why why;
	char got[300];
	size_t i;

	if (cfg == NULL) {
		ok(0, "the table's configuration loads");
		return;
	}
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		enum policy_step s = decide(cfg, r->who, r->tool, r->upstream, r->hint, &why);
		enum policy_step fast = decide(cfg, r->who, r->tool, r->upstream, r->hint, NULL);
		int line_ok = r->line ? names_line(conf_text, &why, r->line, got, sizeof(got)) : why.rule[0] == '\0';

		ok(s == r->step && fast == s && why.step == s && same_str(why.reason, r->reason) &&
		    why.only_scope == r->only_scope && line_ok,
		    "%s [%s] [%s] %s%s: step %d %s%s%s%s (got %d/%d %s%s; %s)",
		    r->who->tenant[0] ? r->who->tenant : "(no tenant)", r->who->scope, r->who->groups, r->tool,
		    r->hint ? " readOnlyHint" : "", r->step, r->reason ? r->reason : "visible",
		    r->only_scope ? " (step-up)" : "", r->line && r->line[0] ? " by " : "", r->line ? r->line : "",
		    s, fast, why.reason ? why.reason : "visible", why.only_scope ? " (step-up)" : "",
		    why.rule[0] ? why.rule : "-");
		if (r->line && !line_ok)
			printf("#   the rule's line reads: %s\n", got);
	}

	/* The step-up scopes: granted, required, the group's; nothing twice. */
	decide(cfg, &A0, "gh_search", "github", 0, &why);
	is_str(why.scopes, "mcp:tools mcp:github", "insufficient_scope: every scope the call needs, granted ones too");
	ok(strstr(why.rule, "the token lacks mcp:github") != NULL, "… and the rule names the missing one: %s", why.rule);
	decide(cfg, &P, "se_wide_x", "sec", 0, &why);
	is_str(why.scopes, "mcp:tools mcp:c", "two groups to step up to: the one missing fewer scopes");
	decide(cfg, &Pn, "se_wide_x", "sec", 0, &why);
	is_str(why.scopes, "mcp:tools mcp:a mcp:b", "… the other one when the caller is not a member of the first");
	decide(cfg, &Pa, "se_wide_x", "sec", 0, &why);
	is_str(why.scopes, "mcp:tools mcp:a mcp:b", "… a tie: the first in the file (granted mcp:a once)");
	decide(cfg, &A0, "gh_delete_repo", "github", 0, &why);
	ok(why.scopes[0] == '\0' && strstr(why.rule, "no step-up"), "no step-up scopes when a later step refuses too: %s",
	    why.rule);

	/* The rule's words, for explain. */
	decide(cfg, &A, "gh_delete_repo", "github", 0, &why);
	ok(strstr(why.rule, "deny: gh_delete_repo matches gh_delete_repo") != NULL, "a deny names its glob: %s", why.rule);
	decide(cfg, &F, "fs_beta_x", "files", 0, &why);
	ok(strstr(why.rule, "feature = beta") != NULL, "a missing feature names it: %s", why.rule);
	decide(cfg, &R, "gh_search", "github", 0, &why);
	ok(strstr(why.rule, "access-mode = read-only") != NULL, "read-only mode names the tenant's line: %s", why.rule);
	decide(cfg, &R, "fs_hinted", "files", 1, &why);
	ok(strstr(why.rule, "readOnlyHint is not trusted") != NULL, "… and says an untrusted hint is why: %s", why.rule);
	decide(cfg, &U, "gh_search", "github", 0, &why);
	ok(strstr(why.rule, "no [tenant \"zzz\"]") && strstr(why.rule, ".conf: "), "an unknown tenant names the file: %s",
	    why.rule);
	decide(cfg, &Sstar, "ot_x", "other", 0, &why);
	ok(strstr(why.rule, "tenant claim \"*\"") != NULL, "a tenant claim of \"*\" is no tenant: %s", why.rule);
	decide(cfg, &A, "gh_search", "github", 0, &why);
	ok(why.reason == NULL && why.rule[0] == '\0' && why.where.file == NULL, "visible: no reason, no rule");

	/* Profiles: equal for equal claims, different when what decides differs. */
	{
		struct claims c1, c2c;
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

	/* What an upstream offers besides tools: steps 2 and 3 for its own group alone. */
	for (i = 0; i < sizeof(up_rows) / sizeof(up_rows[0]); i++) {
		const struct up_row *r = &up_rows[i];
		struct claims cl;
		struct policy_caller pc;
		enum policy_step s, fast;
		int line_ok;

		claims_of(r->who, &cl);
		policy_caller_init(&pc, cfg, &cl);
		s = policy_decide_upstream(&pc, config_upstream(cfg, r->upstream), &why);
		fast = policy_decide_upstream(&pc, config_upstream(cfg, r->upstream), NULL);
		line_ok = r->line ? names_line(conf_text, &why, r->line, got, sizeof(got)) : why.rule[0] == '\0';
		ok(s == r->step && fast == s && same_str(why.reason, r->reason) && why.only_scope == r->only_scope &&
		    line_ok, "upstream %s's prompts and resources for %s [%s] [%s]: step %d %s%s (got %d/%d %s; %s)",
		    r->upstream, r->who->tenant[0] ? r->who->tenant : "(no tenant)", r->who->scope, r->who->groups,
		    r->step, r->reason ? r->reason : "visible", r->only_scope ? " (step-up)" : "", s, fast,
		    why.reason ? why.reason : "visible", why.rule[0] ? why.rule : "-");
		if (r->line && !line_ok)
			printf("#   the rule's line reads: %s\n", got);
	}
	claims_of(&A0, &cl0);
	policy_caller_init(&pc0, cfg, &cl0);
	policy_decide_upstream(&pc0, config_upstream(cfg, "github"), &why);
	is_str(why.scopes, "mcp:tools mcp:github", "an upstream's step-up: every scope it needs, granted ones too");
	config_unref(cfg);

	/* No [tenant]: no policy. */
	cfg = load("[gateway]\nresource = https://gw.example.com/mcp\n[auth]\nissuer = https://idp.example.com\n"
	    "[upstream \"x\"]\nurl = http://127.0.0.1:9/mcp\n[group \"g\"]\ntools = *\nscopes = never\n");
	ok(cfg && decide(cfg, &U, "anything", "x", 0, &why) == POLICY_VISIBLE && why.reason == NULL &&
	    decide(cfg, &S, "other", NULL, 0, NULL) == POLICY_VISIBLE,
	    "no [tenant] section: every tool visible to every caller (no policy)");
	config_unref(cfg);
}

/* --- random configurations against a reference --------------------------------------- */

static const char *const globs[] = { "a_*", "b_*", "*_one", "c_*", "*", "*get*", "b_two", "z_*" };
#define NGLOBS	8
static const char *const tools[] = { "a_one", "a_two", "a_get_x", "b_one", "b_two", "b_get", "c_x", "c_one", "z_x" };
#define NTOOLS	9
#define NGROUPS	4
#define NUPS	3
#define NTENANTS	3	/* t0, t1, "*" */
#define NSCOPES	3

struct m_group {
	unsigned tools;		/* globs, by bit */
	unsigned scopes;	/* s1..s3 */
	unsigned members;	/* m1..m3 */
	int feature;		/* -1 none, else f0/f1 */
};

struct m_up {
	int group;		/* -1: its own name (no section); 0..3: gK; 4: "xNAME" (no section) */
	unsigned ro;		/* read-only-tools globs */
	int trust;
};

struct m_tenant {
	int present;
	unsigned groups;	/* bits 0..3: gK; bits 4..6: upstream K's group when it has no section */
	int has_groups;		/* the key is written (else the section lacks it) */
	unsigned features;	/* f0, f1 */
	unsigned deny, allow;	/* globs */
	int allow_key;		/* write `allow =` even when empty */
	int ro;
};

struct model {
	struct m_group g[NGROUPS];
	struct m_up u[NUPS];
	struct m_tenant t[NTENANTS];
};

struct m_caller {
	int tenant;		/* 0, 1: t0, t1; 2: no claim; 3: "nope"; 4: "*" */
	unsigned scopes, groups;
};

static unsigned
rbits(int n)
{
	return (unsigned)rand() & ((1u << n) - 1);
}

static int
glob_hits(unsigned set, const char *name)
{
	int i;

	for (i = 0; i < NGLOBS; i++)
		if ((set & (1u << i)) && fnmatch(globs[i], name, 0) == 0)
			return 1;
	return 0;
}

static void
random_model(struct model *m)
{
	int i;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < NGROUPS; i++) {
		m->g[i].tools = rand() % 3 ? 1u << (rand() % NGLOBS) : rbits(NGLOBS) & rbits(NGLOBS);
		m->g[i].scopes = rbits(NSCOPES) & rbits(NSCOPES);
		m->g[i].members = rand() % 2 ? 0 : rbits(3);
		m->g[i].feature = rand() % 3 ? -1 : rand() % 2;
	}
	for (i = 0; i < NUPS; i++) {
		m->u[i].group = rand() % 3 == 0 ? -1 : rand() % 5;
		m->u[i].ro = rand() % 2 ? 0 : 1u << (rand() % NGLOBS);
		m->u[i].trust = rand() % 2;
	}
	for (i = 0; i < NTENANTS; i++) {
		m->t[i].present = rand() % 6 != 0;
		m->t[i].has_groups = rand() % 8 != 0;
		m->t[i].groups = m->t[i].has_groups ? rbits(NGROUPS + NUPS) : 0;
		m->t[i].features = rbits(2);
		m->t[i].deny = rand() % 3 == 0 ? 1u << (rand() % NGLOBS) : 0;
		m->t[i].allow = rand() % 3 == 0 ? rbits(NGLOBS) : 0;
		m->t[i].allow_key = rand() % 4 == 0;
		m->t[i].ro = rand() % 3 == 0;
	}
}

/* The later steps' keys of tenant i, redrawn (for "hidden at step k whatever follows"). */
static void
redraw_later(struct m_tenant *t, int only_ro)
{
	if (!only_ro) {
		t->deny = rand() % 2 ? 1u << (rand() % NGLOBS) : 0;
		t->allow = rand() % 2 ? rbits(NGLOBS) : 0;
		t->allow_key = rand() % 2;
	}
	t->ro = rand() % 2;
}

static const char *
up_name(int u)
{
	static const char *const names[] = { "a", "b", "c" };

	return names[u];
}

/* The group name of upstream u, and whether it has a [group] section (its index). */
static const char *
up_group(const struct model *m, int u, int *gi, char *buf, size_t n)
{
	*gi = -1;
	if (m->u[u].group == -1)
		snprintf(buf, n, "%s", up_name(u));
	else if (m->u[u].group == 4)
		snprintf(buf, n, "x%s", up_name(u));
	else {
		*gi = m->u[u].group;
		snprintf(buf, n, "g%d", *gi);
	}
	return buf;
}

static void
put_set(char *out, size_t n, size_t *len, const char *key, unsigned set, const char *const *words, int nwords)
{
	int i, first = 1;

	*len += (size_t)snprintf(out + *len, n - *len, "%s =", key);
	for (i = 0; i < nwords; i++)
		if (set & (1u << i)) {
			*len += (size_t)snprintf(out + *len, n - *len, " %s", words[i]);
			first = 0;
		}
	(void)first;
	*len += (size_t)snprintf(out + *len, n - *len, "\n");
}

static const char *const scope_words[] = { "s1", "s2", "s3" };
static const char *const member_words[] = { "m1", "m2", "m3" };
static const char *const feature_words[] = { "f0", "f1" };

static void
render(const struct model *m, char *out, size_t n)
{
	static const char *const tnames[] = { "t0", "t1", "*" };
	const char *gnames[NGROUPS + NUPS];
	char ugn[NUPS][16], gn[NGROUPS][8];
	size_t len = 0;
	int i, k, gi;

	len += (size_t)snprintf(out + len, n - len,
	    "[gateway]\nresource = https://gw.example.com/mcp\n[auth]\nissuer = https://idp.example.com\n");
	for (i = 0; i < NUPS; i++) {
		len += (size_t)snprintf(out + len, n - len, "[upstream \"%s\"]\nurl = http://127.0.0.1:9/mcp\nprefix = %s_\n",
		    up_name(i), up_name(i));
		if (m->u[i].group != -1)
			len += (size_t)snprintf(out + len, n - len, "group = %s\n", up_group(m, i, &gi, ugn[i], sizeof(ugn[i])));
		if (m->u[i].ro)
			put_set(out, n, &len, "read-only-tools", m->u[i].ro, globs, NGLOBS);
		len += (size_t)snprintf(out + len, n - len, "trust-hints = %s\n", m->u[i].trust ? "yes" : "no");
	}
	for (i = 0; i < NGROUPS; i++) {
		snprintf(gn[i], sizeof(gn[i]), "g%d", i);
		gnames[i] = gn[i];
		len += (size_t)snprintf(out + len, n - len, "[group \"g%d\"]\n", i);
		if (m->g[i].tools)
			put_set(out, n, &len, "tools", m->g[i].tools, globs, NGLOBS);
		if (m->g[i].scopes)
			put_set(out, n, &len, "scopes", m->g[i].scopes, scope_words, NSCOPES);
		if (m->g[i].members)
			put_set(out, n, &len, "members", m->g[i].members, member_words, 3);
		if (m->g[i].feature >= 0)
			len += (size_t)snprintf(out + len, n - len, "feature = f%d\n", m->g[i].feature);
	}
	for (i = 0; i < NUPS; i++) {
		up_group(m, i, &gi, ugn[i], sizeof(ugn[i]));
		gnames[NGROUPS + i] = gi < 0 ? ugn[i] : "";	/* listable only without a section */
	}
	for (i = 0; i < NTENANTS; i++) {
		const struct m_tenant *t = &m->t[i];

		if (!t->present)
			continue;
		len += (size_t)snprintf(out + len, n - len, "[tenant \"%s\"]\n", tnames[i]);
		if (t->has_groups) {
			len += (size_t)snprintf(out + len, n - len, "groups =");
			for (k = 0; k < NGROUPS + NUPS; k++)
				if ((t->groups & (1u << k)) && gnames[k][0])
					len += (size_t)snprintf(out + len, n - len, " %s", gnames[k]);
			len += (size_t)snprintf(out + len, n - len, "\n");
		}
		if (t->features)
			put_set(out, n, &len, "features", t->features, feature_words, 2);
		if (t->deny)
			put_set(out, n, &len, "deny", t->deny, globs, NGLOBS);
		if (t->allow || t->allow_key)
			put_set(out, n, &len, "allow", t->allow, globs, NGLOBS);
		if (t->ro)
			len += (size_t)snprintf(out + len, n - len, "access-mode = read-only\n");
	}
}

/* What the reference says. */
struct expect {
	enum policy_step step;
	const char *reason;
	int only_scope;
	char group[16];		/* the group the step-3 rule names; "" = none */
	const char *key;	/* the key of the rule's line: "groups", "feature", ... ; NULL = none */
	unsigned scopes;	/* the step-up group's scopes */
};

static int
tool_upstream(const char *tool)
{
	return tool[0] == 'a' ? 0 : tool[0] == 'b' ? 1 : tool[0] == 'c' ? 2 : -1;
}

static int
popcount(unsigned v)
{
	int n = 0;

	for (; v; v &= v - 1)
		n++;
	return n;
}

/* docs/ARCHITECTURE.md §4 and policy.h's precedence, written out again. */
static void
reference(const struct model *m, const struct m_caller *c, const char *tool, int hint, struct expect *x)
{
	const struct m_tenant *t;
	int ti, u = tool_upstream(tool), gi = -1, i, later, best_reach = -1, best_missing = 0;
	char ugn[16] = "";

	memset(x, 0, sizeof(*x));
	if (!m->t[0].present && !m->t[1].present && !m->t[2].present)
		return;		/* no policy */
	ti = c->tenant <= 1 ? c->tenant : c->tenant == 2 ? 2 : -1;
	if (ti < 0 || !m->t[ti].present) {
		x->step = POLICY_TENANT;
		x->reason = "tenant_forbidden";
		return;
	}
	t = &m->t[ti];
	if (u >= 0)
		up_group(m, u, &gi, ugn, sizeof(ugn));
	/* step 3: every group holding the tool, in file order, the sectionless one last */
	for (i = 0; i <= NGROUPS; i++) {
		const struct m_group *g = i < NGROUPS ? &m->g[i] : NULL;
		int holds, reach, missing = 0;

		if (g)
			holds = gi == i || glob_hits(g->tools, tool);
		else
			holds = u >= 0 && gi < 0;
		if (!holds)
			continue;
		if (g == NULL)
			reach = (t->groups & (1u << (NGROUPS + u))) ? 4 : 0;
		else if (!(t->groups & (1u << i)))
			reach = 0;
		else if (g->feature >= 0 && !(t->features & (1u << g->feature)))
			reach = 1;
		else if (g->members && !(g->members & c->groups))
			reach = 2;
		else if ((g->scopes & c->scopes) != g->scopes)
			reach = 3, missing = popcount(g->scopes & ~c->scopes);
		else
			reach = 4;
		if (reach > best_reach || (reach == best_reach && missing < best_missing)) {
			best_reach = reach;
			best_missing = missing;
			if (g)
				snprintf(x->group, sizeof(x->group), "g%d", i);
			else
				snprintf(x->group, sizeof(x->group), "%s", ugn);
			x->scopes = g ? g->scopes : 0;
		}
	}
	later = !glob_hits(t->deny, tool) && (t->allow == 0 || glob_hits(t->allow, tool)) &&
	    (!t->ro || (u >= 0 && (glob_hits(m->u[u].ro, tool) || (m->u[u].trust && hint))));
	if (best_reach < 4) {
		static const char *const reasons[] = { "group_forbidden", "feature_disabled", "group_forbidden" };
		static const char *const keys[] = { "groups", "feature", "members", "scopes" };

		x->step = POLICY_GROUP;
		if (best_reach < 0) {
			x->reason = "group_forbidden";
			x->group[0] = '\0';
			return;
		}
		x->only_scope = best_reach == 3 && later;
		x->reason = best_reach == 3 ? (later ? "insufficient_scope" : "group_forbidden") : reasons[best_reach];
		x->key = keys[best_reach];
		return;
	}
	x->group[0] = '\0';
	if (glob_hits(t->deny, tool)) {
		x->step = POLICY_RULE, x->reason = "tool_denied", x->key = "deny";
	} else if (t->allow && !glob_hits(t->allow, tool)) {
		x->step = POLICY_RULE, x->reason = "tool_denied", x->key = "allow";
	} else if (!later) {
		x->step = POLICY_READ_ONLY, x->reason = "read_only_mode", x->key = "access-mode";
	}
}

static void
m_claims(const struct m_caller *c, struct claims *cl)
{
	static const char *const tenants[] = { "t0", "t1", "", "nope", "*" };
	int i;

	memset(cl, 0, sizeof(*cl));
	snprintf(cl->subject, sizeof(cl->subject), "someone");
	snprintf(cl->tenant, sizeof(cl->tenant), "%s", tenants[c->tenant]);
	for (i = 0; i < NSCOPES; i++)
		if (c->scopes & (1u << i))
			snprintf(cl->scope + strlen(cl->scope), sizeof(cl->scope) - strlen(cl->scope), "%s%s",
			    cl->scope[0] ? " " : "", scope_words[i]);
	for (i = 0; i < 3; i++)
		if (c->groups & (1u << i))
			snprintf(cl->groups + strlen(cl->groups), sizeof(cl->groups) - strlen(cl->groups), "%s%s",
			    cl->groups[0] ? " " : "", member_words[i]);
}

static enum policy_step
m_decide(const struct config *cfg, const struct m_caller *c, const char *tool, int hint, struct policy_why *why)
{
	struct claims cl;
	struct policy_caller pc;
	struct policy_tool t;

	m_claims(c, &cl);
	policy_caller_init(&pc, cfg, &cl);
	t.name = tool;
	t.upstream = tool_upstream(tool) < 0 ? NULL : config_upstream(cfg, up_name(tool_upstream(tool)));
	t.read_only_hint = hint;
	t.kind = POLICY_TOOL;
	return policy_decide(&pc, &t, why);
}

/* Does why's rule agree with the reference's: the key of its line, in the section of
 * the group it names? */
static int
rule_agrees(const char *text, const struct policy_why *why, const struct expect *x)
{
	char line[300], want[64];

	if (x->step == POLICY_VISIBLE)
		return why->rule[0] == '\0' && why->where.file == NULL;
	if (x->key == NULL)	/* an unknown tenant, or no group holds the tool */
		return why->where.file == NULL && why->rule[0] != '\0';
	if (why->where.file == NULL)
		return 0;
	line_of(text, why->where.line, line, sizeof(line));
	if (strcmp(x->key, "groups") == 0) {	/* the tenant's groups line, or its header without one */
		snprintf(want, sizeof(want), "does not list %s", x->group);
		return strncmp(line, "[tenant ", 8) == 0 && (strchr(line, ']')[1] == '\0' || strstr(line, "] groups =")) &&
		    strlen(why->rule) >= strlen(want) && strcmp(why->rule + strlen(why->rule) - strlen(want), want) == 0;
	}
	if (strcmp(x->key, "feature") == 0 || strcmp(x->key, "members") == 0 || strcmp(x->key, "scopes") == 0) {
		snprintf(want, sizeof(want), "[group \"%s\"] %s =", x->group, x->key);
		return strncmp(line, want, strlen(want)) == 0;
	}
	snprintf(want, sizeof(want), "] %s =", x->key);
	return strncmp(line, "[tenant ", 8) == 0 && strstr(line, want) != NULL;
}

static void
properties(void)
{
	static char text[8192], text2[8192];
	struct model m, m2;
	struct m_caller c, more;
	struct expect x, x2;
	struct policy_why why, why2;
	struct config *cfg, *cfg2;
	long cases = 0, bad_ref = 0, bad_reason = 0, bad_rule = 0, bad_fast = 0, bad_list = 0, bad_later = 0,
	    bad_mono = 0, bad_stepup = 0, bad_load = 0, seen[6] = { 0 }, stepups = 0;
	int k, i, j, tn;

	srand(20261122);
	for (k = 0; k < 300; k++) {
		random_model(&m);
		render(&m, text, sizeof(text));
		if ((cfg = load(text)) == NULL) {
			if (bad_load++ == 0)
				printf("# does not load:\n%s", text);
			continue;
		}
		for (i = 0; i < 4; i++) {
			struct claims cl;
			struct policy_caller pc;
			enum policy_step listed[NTOOLS];

			c.tenant = rand() % 8 < 6 ? rand() % 3 : 3 + rand() % 2;
			c.scopes = rbits(NSCOPES);
			c.groups = rbits(3);

			/* list ≡ call: one prepared caller filters the whole catalog (why NULL). */
			m_claims(&c, &cl);
			policy_caller_init(&pc, cfg, &cl);
			for (j = 0; j < NTOOLS; j++) {
				struct policy_tool t = { tools[j], tool_upstream(tools[j]) < 0 ? NULL :
				    config_upstream(cfg, up_name(tool_upstream(tools[j]))), j % 2, POLICY_TOOL };

				listed[j] = policy_decide(&pc, &t, NULL);
			}
			for (j = 0; j < NTOOLS; j++) {
				int hint = j % 2;
				enum policy_step s = m_decide(cfg, &c, tools[j], hint, &why);

				cases++;
				reference(&m, &c, tools[j], hint, &x);
				seen[s == POLICY_VISIBLE ? 0 : s]++;
				if (s != x.step && bad_ref++ == 0)
					printf("# reference: %s, tenant %d scopes %u groups %u: got %d, want %d\n%s", tools[j],
					    c.tenant, c.scopes, c.groups, s, x.step, text);
				if ((!same_str(why.reason, x.reason) || why.only_scope != x.only_scope || why.step != s ||
				    (why.only_scope != same_str(why.reason, "insufficient_scope"))) && bad_reason++ == 0)
					printf("# reason: %s tenant %d scopes %u groups %u: got %s%s, want %s%s (%s)\n%s",
					    tools[j], c.tenant, c.scopes, c.groups, why.reason ? why.reason : "visible",
					    why.only_scope ? " step-up" : "", x.reason ? x.reason : "visible",
					    x.only_scope ? " step-up" : "", why.rule, text);
				if (s == x.step && !rule_agrees(text, &why, &x) && bad_rule++ == 0)
					printf("# rule: %s tenant %d: %s (want key %s of %s)\n%s", tools[j], c.tenant, why.rule,
					    x.key ? x.key : "-", x.group, text);
				if ((m_decide(cfg, &c, tools[j], hint, NULL) != s || m_decide(cfg, &c, tools[j], hint, &why2) != s ||
				    strcmp(why.rule, why2.rule) != 0) && bad_fast++ == 0)
					printf("# deterministic: %s\n", tools[j]);
				if (listed[j] != s && bad_list++ == 0)
					printf("# list filter: %s: %d, the call's decision %d\n", tools[j], listed[j], s);

				/* Stepping up to the scopes offered makes it visible. */
				if (why.only_scope) {
					struct claims up;
					struct policy_caller pu;
					struct policy_tool t = { tools[j], tool_upstream(tools[j]) < 0 ? NULL :
					    config_upstream(cfg, up_name(tool_upstream(tools[j]))), hint, POLICY_TOOL };

					stepups++;
					m_claims(&c, &up);
					snprintf(up.scope, sizeof(up.scope), "%s", why.scopes);
					policy_caller_init(&pu, cfg, &up);
					if ((policy_decide(&pu, &t, NULL) != POLICY_VISIBLE || !strstr(why.scopes, cl.scope)) &&
					    bad_stepup++ == 0)
						printf("# step-up to [%s] does not show %s\n", why.scopes, tools[j]);
				}
				/* More scopes, more identity groups: never hidden where it was visible, and a
				 * tool refused at step 3 for scopes alone is shown with all of them. */
				more = c;
				more.scopes |= rbits(NSCOPES);
				more.groups |= rbits(3);
				if (s == POLICY_VISIBLE && m_decide(cfg, &more, tools[j], hint, NULL) != POLICY_VISIBLE &&
				    bad_mono++ == 0)
					printf("# monotony: %s hidden with more scopes or groups\n", tools[j]);
				more = c;
				more.scopes = (1u << NSCOPES) - 1;
				if (s == POLICY_GROUP && !why.only_scope &&
				    m_decide(cfg, &more, tools[j], hint, NULL) == POLICY_VISIBLE && bad_stepup++ == 0)
					printf("# %s: all scopes show it, but no step-up was offered (%s)\n", tools[j], why.rule);
			}
		}
		config_unref(cfg);

		/* The same configuration with the later steps redrawn: a tool hidden at steps
		 * 2 or 3 stays hidden there (the reason may only move between
		 * insufficient_scope and group_forbidden); one hidden at step 4 stays hidden
		 * at step 4 whatever the access mode. */
		m2 = m;
		tn = rand() % NTENANTS;
		redraw_later(&m2.t[tn], rand() % 2);
		render(&m2, text2, sizeof(text2));
		if ((cfg2 = load(text2)) == NULL) {
			bad_load++;
			continue;
		}
		for (i = 0; i < 4; i++) {
			c.tenant = tn;	/* 2: no tenant claim, so [tenant "*"] */
			c.scopes = rbits(NSCOPES);
			c.groups = rbits(3);
			for (j = 0; j < NTOOLS; j++) {
				enum policy_step s2 = m_decide(cfg2, &c, tools[j], j % 2, &why2);

				cases++;
				reference(&m, &c, tools[j], j % 2, &x);
				reference(&m2, &c, tools[j], j % 2, &x2);
				if (s2 != x2.step && bad_ref++ == 0)
					printf("# reference (redrawn): %s\n%s", tools[j], text2);
				if ((x.step == POLICY_TENANT || x.step == POLICY_GROUP) && s2 != x.step && bad_later++ == 0)
					printf("# %s hidden at step %d, then %d with other later rules\n", tools[j], x.step, s2);
				if (x.step == POLICY_RULE && m2.t[tn].deny == m.t[tn].deny && m2.t[tn].allow == m.t[tn].allow &&
				    s2 != POLICY_RULE && bad_later++ == 0)
					printf("# %s hidden at step 4, then %d with another access mode\n", tools[j], s2);
			}
		}
		config_unref(cfg2);
	}
	ok(bad_load == 0 && cases >= 2000, "%ld random decisions over 600 random configurations (%ld visible, %ld at "
	    "step 2, %ld at 3, %ld at 4, %ld at 5; %ld step-ups)", cases, seen[0], seen[2], seen[3], seen[4], seen[5],
	    stepups);
	ok(seen[0] && seen[2] && seen[3] && seen[4] && seen[5] && stepups, "… every outcome occurs");
	is_int(bad_ref, 0, "the step agrees with docs/ARCHITECTURE.md §4 written out again");
	is_int(bad_reason, 0, "the reason agrees with policy.h's precedence; step-up exactly when insufficient_scope");
	is_int(bad_rule, 0, "the rule's FILE:LINE is a line of the file with the key that decided, in the right section");
	is_int(bad_fast, 0, "deterministic: again, and without asking why, the same step and rule");
	is_int(bad_list, 0, "list ≡ call: the list filter of one prepared caller equals each call's decision");
	is_int(bad_stepup, 0, "stepping up to the scopes offered shows the tool; all scopes never show a tool "
	    "refused without a step-up offer at step 3");
	is_int(bad_mono, 0, "more scopes or identity groups never hide a tool");
	is_int(bad_later, 0, "hidden at step k whatever the later steps say");
}

/* --- how fast a list filter is -------------------------------------------------------- */

/* The one word-list test behind scopes and groups. */
static void
test_words(void)
{
	ok(str_has_word("mcp:tools mcp:admin", "mcp:admin"), "words: the last word");
	ok(str_has_word("\tops  dev\t", "dev"), "words: tabs and runs of blanks separate");
	ok(!str_has_word("mcp:tools-extra", "mcp:tools"), "words: a prefix of a word is not the word");
	ok(!str_has_word("xmcp:tools", "mcp:tools"), "words: nor a suffix");
	ok(!str_has_word("a  b", ""), "words: the empty word is in no list");
	ok(!str_has_word(NULL, "a") && !str_has_word("", "a"), "words: nothing is in no list");
}

/* Prompts and resources: a [group]'s prompts and resources globs grant them on their
 * own, besides their upstream's group; a tools glob grants neither; allow, deny and
 * read-only mode name tools and never hide them; a group refused only for its scopes
 * offers a step-up (no later step applies). */
static int
named(const struct cfg_group *g, void *arg)
{
	snprintf(arg, 64, "%s", g->s.name);
	return 1;
}

static void
kinds(void)
{
	static const struct {
		enum policy_kind kind;
		const char *name, *up, *scope;
		enum policy_step step;
		const char *reason;
		int only_scope;
	} krows[] = {
		{ POLICY_PROMPT, "dc_hello", "docs", "mcp:tools", POLICY_VISIBLE, NULL, 0 },	/* all: prompts = dc_* */
		{ POLICY_PROMPT, "pv_greet", "priv", "mcp:tools", POLICY_VISIBLE, NULL, 0 },
		{ POLICY_PROMPT, "pv_other", "priv", "mcp:tools", POLICY_GROUP, "group_forbidden", 0 },
		{ POLICY_PROMPT, "dc_x", NULL, "mcp:tools", POLICY_VISIBLE, NULL, 0 },		/* no upstream: the glob alone */
		{ POLICY_RESOURCE, "file:///pub/a.md", "docs", "mcp:tools", POLICY_VISIBLE, NULL, 0 },
		{ POLICY_RESOURCE, "file:///pub/{name}", "docs", "mcp:tools", POLICY_VISIBLE, NULL, 0 },	/* a template */
		{ POLICY_RESOURCE, "file:///secret/k", "priv", "mcp:tools", POLICY_GROUP, "insufficient_scope", 1 },
		{ POLICY_RESOURCE, "file:///secret/k", "priv", "mcp:tools mcp:secret", POLICY_VISIBLE, NULL, 0 },
		{ POLICY_RESOURCE, "file:///other", "docs", "mcp:tools", POLICY_GROUP, "group_forbidden", 0 },
		/* the prompts glob dc_* does not grant a resource of that name, nor a tool */
		{ POLICY_RESOURCE, "dc_hello", "docs", "mcp:tools", POLICY_GROUP, "group_forbidden", 0 },
		{ POLICY_TOOL, "pv_t", "priv", "mcp:tools", POLICY_VISIBLE, NULL, 0 },		/* all: tools = pv_* (read-only pv_*) */
		{ POLICY_TOOL, "dc_t", "docs", "mcp:tools", POLICY_RULE, "tool_denied", 0 },	/* deny = dc_* */
	};
	struct config *cfg = load("[gateway]\nresource = https://gw.example.com/mcp\n[auth]\nissuer = https://idp.example.com\n"
	    "[upstream \"docs\"]\nurl = http://127.0.0.1:9/mcp\nprefix = dc_\n"
	    "[upstream \"priv\"]\nurl = http://127.0.0.1:9/mcp\nprefix = pv_\ngroup = private\nread-only-tools = pv_*\n"
	    "[group \"private\"]\nscopes = mcp:priv\n"
	    "[group \"all\"]\ntools = pv_* dc_*\nprompts = dc_* pv_greet\nresources = file:///pub/*\n"
	    "[group \"secret\"]\nresources = file:///secret/*\nscopes = mcp:secret\n"
	    "[tenant \"t\"]\ngroups = all secret\ndeny = dc_*\nallow = pv_* dc_*\naccess-mode = read-only\n");
	struct policy_caller c, c2;
	struct policy_why why;
	struct claims cl;
	char group[64] = "";
	size_t i;

	if (!ok(cfg != NULL, "kinds: the configuration loads"))
		return;
	for (i = 0; i < sizeof(krows) / sizeof(krows[0]); i++) {
		struct policy_tool t = { krows[i].name, krows[i].up ? config_upstream(cfg, krows[i].up) : NULL, 0, krows[i].kind };

		memset(&cl, 0, sizeof(cl));
		snprintf(cl.tenant, sizeof(cl.tenant), "t");
		snprintf(cl.scope, sizeof(cl.scope), "%s", krows[i].scope);
		policy_caller_init(&c, cfg, &cl);
		policy_decide(&c, &t, &why);
		ok(why.step == krows[i].step && same_str(why.reason, krows[i].reason) && why.only_scope == krows[i].only_scope &&
		    policy_decide(&c, &t, NULL) == krows[i].step,
		    "kinds: %s %s of %s with \"%s\": step %d %s%s", krows[i].kind == POLICY_PROMPT ? "prompt" :
		    krows[i].kind == POLICY_RESOURCE ? "resource" : "tool", krows[i].name, krows[i].up ? krows[i].up : "no upstream",
		    krows[i].scope, krows[i].step, krows[i].reason ? krows[i].reason : "visible", krows[i].only_scope ? " (step-up)" : "");
		if (why.step != krows[i].step)
			printf("# got step %d %s: %s\n", why.step, why.reason ? why.reason : "", why.rule);
	}
	{
		struct policy_tool p = { "dc_hello", config_upstream(cfg, "docs"), 0, POLICY_PROMPT };

		policy_tool_groups(cfg, &p, named, group);
		is_str(group, "all", "kinds: the groups holding a prompt are those whose prompts globs match it");
	}
	memset(&cl, 0, sizeof(cl));
	snprintf(cl.tenant, sizeof(cl.tenant), "t");
	policy_caller_init(&c2, cfg, &cl);
	ok(policy_decide_upstream(&c2, config_upstream(cfg, "docs"), NULL) == POLICY_GROUP,
	    "kinds: the upstream as a whole still follows its own group (docs, which t does not list)");
	config_unref(cfg);
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	run_case(test_words);
	run_case(table);
	run_case(kinds);
	run_case(properties);
	return done_testing();
}
