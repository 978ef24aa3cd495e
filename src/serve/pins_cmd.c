/* pins_cmd — `mcpgate pins status|diff|approve` (pins_cmd.h, mcpgate(8)).
 *
 * The judging is pure (pins_review_judge: the lists and the pins in, a state for each
 * record out); the rest reads the configuration and the catalog, prints, and writes the
 * pins file through pins_update, which serializes approvals and writes atomically (the
 * running gateway watches the file and takes the change by itself). Whatever a record
 * holds is printed so that it cannot pass for something else: status gives a hygiene
 * finding's reason, never the text; diff writes JSON with every non-ASCII character
 * escaped (\u202e, not the override itself). */
#include "autoconf.h"

#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "catalog_store.h"
#include "clock.h"
#include "explain.h"
#include "gateway.h"
#include "linediff.h"
#include "pins_cmd.h"
#include "pins_review.h"
#include "upstream.h"

#define PINS_CMD_CONTEXT	3		/* lines of context in a hunk */
#define PINS_CMD_OUT_MAX	(64u << 20)	/* what one record's diff may take */
#define PINS_CMD_RENDER		(JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(17))

/* A run of the command. */
struct pins_run {
	const struct config *cfg;
	struct pins_review r;
	const char **reasons;		/* catalog_lists' */
	unsigned char *pick;		/* of each entry: chosen by the arguments */
	int as_json, all_new;
	const char *by;
};

static void
usage(void)
{
	fputs("usage: mcpgate pins [-c FILE] [--catalog FILE] [--json] status [UPSTREAM[/NAME]...]\n"
	    "       mcpgate pins [-c FILE] [--catalog FILE] diff [UPSTREAM[/NAME]...]\n"
	    "       mcpgate pins [-c FILE] [--catalog FILE] approve [--by WHO] (--all-new | UPSTREAM[/NAME]...)\n"
	    "  exit 0 every record pinned (approve: done); 1 something new, changed or gone;\n"
	    "  2 an error, or an upstream whose records could not be read\n", stderr);
}

/* s as a pins file field (pins_encode) on f. */
static void
put_field(FILE *f, const char *s, int first)
{
	struct buf b;

	buf_init(&b, 3 * strlen(s) + 1);
	if (pins_encode(&b, s, first) == 0)
		fputs(buf_str(&b), f);
	buf_free(&b);
}

/* "UPSTREAM KIND NAME" of e on f. */
static void
put_record(const struct pins_run *x, const struct pins_review_entry *e, FILE *f)
{
	put_field(f, x->cfg->upstreams[e->up].s.name, 1);
	fprintf(f, " %s ", pins_kind_word(e->kind));
	put_field(f, e->name, 0);
}

/* A hygiene reason as a quoted word: printable ASCII as it is but '"' and '\\', which
 * are escaped, and every other byte as \xHH (a member name in its pointer is the
 * upstream's). */
static void
put_reason(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\x%02X", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* Whether a chosen entry differs (new, changed, gone). */
static int
differs(const struct pins_run *x, size_t i)
{
	return x->pick[i] && x->r.e[i].state != PINS_REVIEW_PINNED;
}

/* The notes on the upstreams not judged (those the arguments name, when they name
 * some), on stderr; the exit code of what was chosen. */
static int
notes_and_code(const struct pins_run *x, char **args, int nargs)
{
	const struct cfg_upstream *u;
	size_t i, len;
	int a, named, code = PINS_CMD_SAME;

	for (i = 0; i < x->cfg->n_upstreams; i++) {
		u = &x->cfg->upstreams[i];
		len = strlen(u->s.name);
		for (named = nargs == 0, a = 0; a < nargs && !named; a++)
			named = strncmp(args[a], u->s.name, len) == 0 && (args[a][len] == '\0' || args[a][len] == '/');
		if (!named || x->r.up[i] == PINS_REVIEW_UP_READ)
			continue;
		if (x->r.up[i] == PINS_REVIEW_UP_OFF) {
			fprintf(stderr, "note: [upstream \"%s\"]: pin = off: its records are not checked\n", u->s.name);
			continue;
		}
		if (x->r.up[i] == PINS_REVIEW_UP_PER_CALLER) {
			fprintf(stderr, "note: [upstream \"%s\"]: its lists are each caller's (catalog = per-caller): "
			    "its records are not checked here\n", u->s.name);
			continue;
		}
		fprintf(stderr, "note: [upstream \"%s\"]: its records could not be read (%s): its pins are "
		    "neither gone nor pinned\n", u->s.name, x->reasons[i] ? x->reasons[i] : "left out of the catalog");
		code = PINS_CMD_TROUBLE;
	}
	if (x->r.undigested > 0) {
		fprintf(stderr, "note: %zu records have a definition that cannot be digested (nested too deep): "
		    "not checked\n", x->r.undigested);
		code = PINS_CMD_TROUBLE;
	}
	for (i = 0; i < x->r.n && code == PINS_CMD_SAME; i++)
		if (differs(x, i))
			code = PINS_CMD_DIFFERENT;
	return code;
}

/* status: a line, or with --json an object, per chosen record. */
static void
status(const struct pins_run *x)
{
	const struct pins_review_entry *e;
	json_t *arr = json_array(), *o;
	size_t i;

	for (i = 0; i < x->r.n; i++) {
		if (!x->pick[i])
			continue;
		e = &x->r.e[i];
		if (x->as_json) {
			o = json_pack("{s:s, s:s, s:s, s:s, s:s}", "state", pins_review_state_word(e->state), "upstream",
			    x->cfg->upstreams[e->up].s.name, "kind", pins_kind_word(e->kind), "name", e->name,
			    "digest", e->digest);
			if (o && e->state == PINS_REVIEW_CHANGED)
				json_object_set_new(o, "pinned", json_string(e->pin->digest));
			if (o && e->hygiene.found)
				json_object_set_new(o, "hygiene", json_string(e->hygiene.reason));
			json_array_append_new(arr, o);
			continue;
		}
		printf("%s ", pins_review_state_word(e->state));
		put_record(x, e, stdout);
		printf(" %s", e->digest);
		if (e->state == PINS_REVIEW_CHANGED)
			printf(" pinned=%s", e->pin->digest);
		if (e->hygiene.found) {
			fputs(" hygiene=", stdout);
			put_reason(e->hygiene.reason);
		}
		putchar('\n');
	}
	if (x->as_json) {
		json_dumpf(arr, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
		putchar('\n');
	}
	json_decref(arr);
}

/* A definition as diff shows it (a new string), or NULL. */
static char *
render(json_t *def)
{
	return def ? json_dumps(def, PINS_CMD_RENDER) : NULL;
}

/* The pinned definition of e as diff shows it (a new string), or NULL when its pin keeps
 * none. */
static char *
render_pinned(const struct pins_review_entry *e)
{
	json_t *v;
	char *s;

	if (e->pin == NULL || e->pin->def == NULL || (v = json_loads(e->pin->def, 0, NULL)) == NULL)
		return NULL;
	s = render(v);
	json_decref(v);
	return s;
}

/* diff: each chosen record that differs as a unified diff from its pinned definition to
 * the listed one. 0, or -1 said on stderr. */
static int
diff(const struct pins_run *x)
{
	const struct pins_review_entry *e;
	char *was = NULL, *now = NULL, when[32];
	struct buf out;
	size_t i;
	int rc = 0;

	buf_init(&out, PINS_CMD_OUT_MAX);
	for (i = 0; i < x->r.n && rc == 0; i++) {
		if (!differs(x, i))
			continue;
		e = &x->r.e[i];
		was = render_pinned(e);
		now = render(e->def);
		fputs("--- ", stdout);
		put_record(x, e, stdout);
		if (e->pin) {
			clock_rfc3339(e->pin->when, when, sizeof(when));
			printf(" pinned %s (%s by ", e->pin->digest, when);
			put_field(stdout, e->pin->by, 0);
			printf("%s)\n", was ? "" : "; the pin keeps no definition");
		} else
			fputs(" not pinned\n", stdout);
		fputs("+++ ", stdout);
		put_record(x, e, stdout);
		if (e->def)
			printf(" listed %s\n", e->digest);
		else
			fputs(" not listed\n", stdout);
		buf_reset(&out);
		if (linediff_unified(was ? was : "", now ? now : "", PINS_CMD_CONTEXT, &out) < 0) {
			fputs("mcpgate pins: ", stderr);
			put_record(x, e, stderr);
			fputs(": the difference is too large to show\n", stderr);
			rc = -1;
		}
		fputs(buf_str(&out), stdout);
		free(was);
		free(now);
	}
	buf_free(&out);
	return rc;
}

/* Who approves: --by, else the user sudo(8) ran as, else the login's, else the passwd
 * name of the real user, else "uid N" (buf's). */
static const char *
approver(const char *by, char *buf, size_t len)
{
	static const char *const env[] = { "SUDO_USER", "USER", "LOGNAME" };
	const struct passwd *pw;
	const char *v;
	size_t i;

	if (by && *by)
		return by;
	for (i = 0; i < sizeof(env) / sizeof(env[0]); i++)
		if ((v = getenv(env[i])) != NULL && *v)
			return v;
	if ((pw = getpwuid(getuid())) != NULL && pw->pw_name && *pw->pw_name)
		return pw->pw_name;
	snprintf(buf, len, "uid %lu", (unsigned long)getuid());
	return buf;
}

/* What approve writes: the chosen entries that are new or changed. */
struct approval {
	const struct pins_run *x;
	const char *by;
	time_t when;
};

/* pins_update's change: a pin for each entry approved, its definition kept when its line
 * fits; a gone one's pin removed (what is approved is that it is gone). */
static int
approve_change(struct pins *p, void *arg, struct gw_error *err)
{
	const struct approval *a = arg;
	const struct pins_review_entry *e;
	struct pin pin;
	char *def;
	size_t i;
	int rc = 0;

	for (i = 0; i < a->x->r.n && rc == 0; i++) {
		if (!differs(a->x, i))
			continue;
		e = &a->x->r.e[i];
		if (e->state == PINS_REVIEW_GONE) {
			pins_remove(p, a->x->cfg->upstreams[e->up].s.name, e->kind, e->name);
			continue;
		}
		def = canon_text(e->def);
		if (def && strlen(def) + 3 > PINS_LINE_MAX) {	/* a tab, the text, "\r\n" */
			free(def);
			def = NULL;
		}
		pin.upstream = a->x->cfg->upstreams[e->up].s.name;
		pin.kind = e->kind;
		pin.name = e->name;
		pin.digest = e->digest;
		pin.when = a->when;
		pin.by = a->by;
		pin.def = def;
		rc = pins_set(p, &pin, err);
		free(def);
	}
	return rc;
}

/* approve: pins for the chosen entries that are new or changed, in the pins file, and
 * the pins of those named that are gone removed. The exit code. */
static int
approve(const struct pins_run *x)
{
	struct gw_error err = { GW_OK, 0, "" };
	struct approval a = { x, NULL, 0 };
	char uid[32];
	size_t i, n = 0;

	for (i = 0; i < x->r.n; i++)
		n += differs(x, i);
	if (n == 0) {
		printf("nothing to approve: %s\n", x->all_new ? "no record is new" :
		    "what is named is pinned already");
		return PINS_CMD_SAME;
	}
	a.by = approver(x->by, uid, sizeof(uid));
	a.when = clock_wall();
	if (pins_update(x->cfg->pins_file, approve_change, &a, &err) < 0) {
		fprintf(stderr, "mcpgate pins: %s\n", err.detail);
		return PINS_CMD_TROUBLE;
	}
	for (i = 0; i < x->r.n; i++)
		if (differs(x, i)) {
			fputs(x->r.e[i].state == PINS_REVIEW_GONE ? "removed " : "approved ", stdout);
			put_record(x, &x->r.e[i], stdout);
			printf(" %s\n", x->r.e[i].digest);
		}
	return PINS_CMD_SAME;
}

/* The upstream arg names (the longest name it begins with, then '/' or its end) into
 * *up, and what follows the '/' into *name (NULL: none). 0, or -1 said on stderr. */
static int
arg_parse(const struct config *cfg, const char *arg, size_t *up, const char **name)
{
	size_t i, len, best = 0;
	int found = 0;

	for (i = 0; i < cfg->n_upstreams; i++) {
		len = strlen(cfg->upstreams[i].s.name);
		if (strncmp(arg, cfg->upstreams[i].s.name, len) == 0 && (arg[len] == '\0' || arg[len] == '/') &&
		    (!found || len > best)) {
			found = 1;
			best = len;
			*up = i;
		}
	}
	if (!found) {
		fprintf(stderr, "mcpgate pins: %s: names no [upstream] of the configuration\n", arg);
		return -1;
	}
	*name = arg[best] == '/' ? arg + best + 1 : NULL;
	return 0;
}

/* Whether entry e is what an argument (upstream up, name or NULL) names: any of that
 * name (approve: a gone one's pin is removed), or with no name, for approve one new or
 * changed; else any of them. */
static int
arg_names(const struct pins_review_entry *e, size_t up, const char *name, int approving)
{
	if (e->up != up)
		return 0;
	if (name)
		return strcmp(e->name, name) == 0;
	return !approving || e->state == PINS_REVIEW_NEW || e->state == PINS_REVIEW_CHANGED;
}

/* x->pick from the arguments (none: every record; approve --all-new: every new one). An
 * argument whose upstream was read must name a record of it (approve: one it lists),
 * approve's must name an upstream read. 0, or -1 said on stderr. */
static int
choose(struct pins_run *x, char **args, int nargs, int approving)
{
	const char *name;
	size_t i, up, hits;
	int a;

	for (i = 0; i < x->r.n; i++)
		x->pick[i] = x->all_new ? x->r.e[i].state == PINS_REVIEW_NEW : nargs == 0;
	for (a = 0; a < nargs; a++) {
		if (arg_parse(x->cfg, args[a], &up, &name) < 0)
			return -1;
		for (hits = 0, i = 0; i < x->r.n; i++)
			if (arg_names(&x->r.e[i], up, name, approving)) {
				x->pick[i] = 1;
				hits++;
			}
		if (approving && x->r.up[up] != PINS_REVIEW_UP_READ) {
			fprintf(stderr, "mcpgate pins: %s: [upstream \"%s\"] %s: nothing of it can be approved\n",
			    args[a], x->cfg->upstreams[up].s.name, x->r.up[up] == PINS_REVIEW_UP_OFF ? "has pin = off" :
			    x->r.up[up] == PINS_REVIEW_UP_PER_CALLER ? "lists per caller" : "could not be read");
			return -1;
		}
		if (hits == 0 && name && x->r.up[up] == PINS_REVIEW_UP_READ) {
			fprintf(stderr, "mcpgate pins: %s: [upstream \"%s\"] lists no tool, prompt or resource "
			    "template of that name\n", args[a], x->cfg->upstreams[up].s.name);
			return -1;
		}
	}
	return 0;
}

/* The catalog: --catalog's file, else the gateway's in its state file, else asked of
 * the upstreams now; which one said on stderr. NULL when --catalog's is unusable (said). */
static json_t *
catalog_source(const struct config *cfg, const char *path, struct upstream_pool *pool, struct catalog_view *view)
{
	struct gw_error err = { GW_OK, 0, "" };
	json_t *notes, *doc, *n;
	size_t i;

	if (path) {
		notes = json_array();
		doc = explain_catalog_load(cfg, path, notes);
		json_array_foreach(notes, i, n)
			fprintf(stderr, "note: %s\n", json_string_value(n));
		json_decref(notes);
		if (doc)
			fprintf(stderr, "note: catalog: %s (--catalog)\n", path);
		return doc;
	}
	if ((doc = gateway_saved_catalog(cfg, &err)) != NULL) {
		fprintf(stderr, "note: catalog: the one the gateway saved in its state file\n");
		return doc;
	}
	fprintf(stderr, "note: catalog: asked of the upstreams now (none saved: %s)\n", err.detail);
	const struct catalog_fetcher by = { pool, NULL, NULL, NULL, NULL };

	return catalog_get(NULL, view, &by, cfg, clock_mono_us() / 1000);
}

/* The command line's options into x and *path, *catalog; the command word's index, or
 * -1 after the usage. */
static int
options(struct pins_run *x, int argc, char **argv, const char **path, const char **catalog)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "catalog", required_argument, NULL, 'K' },
		{ "json", no_argument, NULL, 'J' },
		{ "by", required_argument, NULL, 'B' },
		{ "all-new", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cmd;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': *path = optarg; break;
		case 'K': *catalog = optarg; break;
		case 'J': x->as_json = 1; break;
		case 'B': x->by = optarg; break;
		case 'A': x->all_new = 1; break;
		default: usage(); return -1;
		}
	}
	cmd = optind < argc ? argv[optind] : "";
	if ((strcmp(cmd, "status") != 0 && strcmp(cmd, "diff") != 0 && strcmp(cmd, "approve") != 0) ||
	    (x->as_json && strcmp(cmd, "status") != 0) ||
	    ((x->by || x->all_new) && strcmp(cmd, "approve") != 0) ||
	    (strcmp(cmd, "approve") == 0 && x->all_new == (optind + 1 < argc))) {
		usage();
		return -1;
	}
	return optind;
}

/* Long: the run's steps (options, configuration, catalog, lists, judging, choosing, the
 * command) with one cleanup. */
int
pins_cmd_main(int argc, char **argv, const char *config_path)
{
	struct pins_run x;
	struct cfg_errors errs;
	struct config *cfg = NULL;
	struct catalog_view view;
	struct upstream_pool *pool = NULL;
	json_t *doc = NULL, **lists = NULL;
	const char *catalog_in = NULL, *cmd;
	size_t i;
	int at, code = PINS_CMD_TROUBLE, rc;

	memset(&x, 0, sizeof(x));
	memset(&view, 0, sizeof(view));
	if ((at = options(&x, argc, argv, &config_path, &catalog_in)) < 0)
		goto out;
	cmd = argv[at];
	if (config_load(config_path, &cfg, &errs) < 0) {
		config_errors_print(&errs, stderr);
		goto out;
	}
	x.cfg = cfg;
	if ((pool = upstream_pool_new()) == NULL ||
	    (lists = calloc(cfg->n_upstreams + 1, sizeof(*lists))) == NULL ||
	    (x.reasons = calloc(cfg->n_upstreams + 1, sizeof(*x.reasons))) == NULL) {
		fprintf(stderr, "mcpgate pins: out of memory\n");
		goto out;
	}
	if ((doc = catalog_source(cfg, catalog_in, pool, &view)) == NULL)
		goto out;
	catalog_lists(doc, cfg, lists, x.reasons);
	if (pins_review_judge(&x.r, cfg, cfg->pins, lists) < 0 || (x.pick = calloc(x.r.n + 1, 1)) == NULL) {
		fprintf(stderr, "mcpgate pins: out of memory\n");
		goto out;
	}
	if (choose(&x, argv + at + 1, argc - at - 1, strcmp(cmd, "approve") == 0) < 0)
		goto out;
	rc = notes_and_code(&x, argv + at + 1, argc - at - 1);
	if (strcmp(cmd, "status") == 0) {
		status(&x);
		code = rc;
	} else if (strcmp(cmd, "diff") == 0) {
		code = diff(&x) < 0 ? PINS_CMD_TROUBLE : rc;
	} else {
		code = approve(&x);
	}
out:
	free(x.pick);
	pins_review_free(&x.r);
	for (i = 0; lists && cfg && i < cfg->n_upstreams; i++)
		json_decref(lists[i]);
	free(lists);
	free(x.reasons);
	json_decref(doc);
	catalog_view_free(&view);
	if (pool)
		upstream_pool_free(pool);
	if (cfg)
		config_unref(cfg);
	return code;
}
