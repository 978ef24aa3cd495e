/* Unit tests: the configuration loader — every error names file:line and the key. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "fixture.h"
#include "tap.h"

static const char *dir;	/* fixture_dir() */
#define write_file(name, text)		fixture_file((name), (text))
#define write_bytes(name, data, len)	fixture_bytes((name), (data), (len))

/* A loader that blocks fails the test instead of hanging the run. */
static void
on_alarm(int sig)
{
	static const char msg[] = "not ok - the configuration loader blocked for 20 s (FIFO or device?)\n";

	(void)sig;
	(void)!write(1, msg, sizeof(msg) - 1);
	_exit(1);
}

#define BASE "[gateway]\nresource = https://gw.example.com/mcp\n[auth]\nissuer = https://idp.example.com\n"

/* Loads text as main.conf; returns the first error or "" and frees the config. */
static const char *
first_error(const char *text)
{
	static struct cfg_errors errs;
	struct config *cfg;
	const char *path = write_file("main.conf", text);
	int rc = config_load(path, &cfg, &errs);

	config_unref(cfg);
	if (rc == 0)
		return "";
	/* Strip the directory so expectations read "main.conf:3: …". */
	const char *m = errs.err[0].detail;
	return strncmp(m, dir, strlen(dir)) == 0 ? m + strlen(dir) + 1 : m;
}

static const struct {
	const char *text;
	const char *want;	/* prefix of the first error; "" = loads */
} cases[] = {
	{ BASE, "" },
	{ BASE "# comment\n; also a comment\n\n", "" },
	{ "[gateway]\nresource = https://gw.example.com/mcp\n", "main.conf: [auth] issuer: required" },
	{ "[auth]\nissuer = https://idp.example.com\n", "main.conf: [gateway] resource: required" },
	{ BASE "[gateway]\nresource = https://other/mcp\n", "main.conf:6: resource: set twice (first at " },
	{ BASE "[nosuch]\n", "main.conf:5: unknown section [nosuch]" },
	{ BASE "[gateway]\nbogus = 1\n", "main.conf:6: bogus: unknown key in [gateway]" },
	{ "key = 1\n" BASE, "main.conf:1: key: key outside of any section" },
	{ BASE "[gateway]\nmax-body = 12abc\n", "main.conf:6: max-body: expected an integer from 64 to" },
	{ BASE "[gateway]\nmax-body = 1\n", "main.conf:6: max-body: expected an integer from 64 to" },
	{ BASE "[gateway]\nworkers = 0\n", "main.conf:6: workers: expected an integer from 1 to 256" },
	{ BASE "[gateway]\nrequest-timeout-ms = 0\n", "main.conf:6: request-timeout-ms: expected an integer from 1 to 3600000" },
	{ BASE "[gateway]\nrequest-timeout-ms = 3600001\n", "main.conf:6: request-timeout-ms: expected an integer from 1 to 3600000" },
	{ BASE "[gateway]\nclient-timeout-ms = 99\n", "main.conf:6: client-timeout-ms: expected an integer from 100 to 3600000" },
	{ BASE "[gateway]\nclient-timeout-ms = 10s\n", "main.conf:6: client-timeout-ms: expected an integer from 100 to 3600000" },
	{ BASE "[gateway]\ndeny-style = maybe\n", "main.conf:6: deny-style: unknown value: 'maybe'" },
	/* [upstream] credentials: the default (none), and what each mode needs, at its key's line. */
	{ BASE "[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\ncredentials = none\n", "" },
	{ BASE "[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\ncredentials = exchange\n", "main.conf:7: credentials = exchange: needs a client at the token endpoint" },
	{ BASE "[auth]\nclient-id = gw\n" "[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\ncredentials = exchange\nexchange-scopes = mcp:read mcp:write\n"
	    "exchange-audience = u\nexchange-resource = https://u.example.com/mcp\n", "" },
	{ BASE "[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\ncredentials = exchange\nclient-id = gw2\ntoken-endpoint = https://idp.example.com/token\n", "" },
	{ BASE "[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\ncredentials = exchange\nclient-id = gw2\ntoken-endpoint = ftp://x/token\n",
	    "main.conf:9: token-endpoint: " },
	{ BASE "[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\ncredentials = static\n", "main.conf:7: credentials = static: needs auth-header-file" },
	{ BASE "[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\ncatalog-credentials = client-credentials\n", "main.conf:7: catalog-credentials: for an upstream reached as the caller" },
	/* catalog = per-caller: an upstream reached as the caller, its catalog with the caller's credential. */
	{ BASE "[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\ncatalog = per-caller\n", "main.conf:7: catalog = per-caller: for an upstream reached as the caller" },
	{ BASE "[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\ncredentials = exchange\nclient-id = gw\ncatalog-credentials = client-credentials\ncatalog = per-caller\n",
	    "main.conf:10: catalog = per-caller: for an upstream reached as the caller" },
	{ BASE "[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\ncredentials = exchange\nclient-id = gw\ncatalog = per-caller\n", "" },
	{ BASE "[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\ncredentials = exchange\nclient-id = gw\ncatalog = mine\n", "main.conf:9: catalog: unknown value: 'mine'" },
	{ BASE "[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\ncredentials = client-credentials\nclient-id = svc\n", "" },
	{ BASE "[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\ncredentials = client-credentials\nclient-id = svc\ntoken-endpoint = https://as.example.com/token\n"
	    "exchange-scopes = read\nexchange-resource = https://u.example.com/mcp\n", "" },
	{ BASE "[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\ncredentials = client-credentials\nclient-id = svc\ntoken-endpoint = https://as.example.com/token\n"
	    "exchange-audience = x\n", "main.conf:7: credentials = client-credentials: exchange-audience is for credentials = exchange or id-jag" },
	{ BASE "[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\ncredentials = client-credentials\nauth-header-file = /x\n",
	    "main.conf:7: credentials = client-credentials: auth-header-file is for credentials = static only" },
	{ BASE "[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\ncredentials = magic\n", "main.conf:7: credentials: unknown value: 'magic'" },
	{ BASE "[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\ncredentials = none\ntoken-endpoint = https://idp.example.com/token\n",
	    "main.conf:7: token-endpoint, exchange-*, client-id and client-secret-file are for credentials = exchange, client-credentials, id-jag or user-oauth" },
	{ BASE "[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\nexchange-scopes = mcp:read\n",
	    "main.conf:5: token-endpoint, exchange-*, client-id and client-secret-file are for credentials = exchange, client-credentials, id-jag or user-oauth" },
	{ BASE "[upstream \"u\"]\nurl = http://127.0.0.1:9/mcp\ncredentials = exchange\nclient-id = gw2\nclient-secret-file = /nonexistent/secret\n",
	    "main.conf:9: client-secret-file: " },
	{ BASE "[gateway]\ndocs-url = ftp://x/docs\n", "main.conf:6: docs-url: expected an absolute http" },
	{ BASE "[gateway]\ndocs-url = https://x/docs#frag\n", "main.conf:6: docs-url: expected an absolute" },
	{ BASE "[gateway]\ndocs-url = http://:80/docs\n", "main.conf:6: docs-url: expected an absolute" },
	{ BASE "[gateway]\ndocs-url = http://?x\n", "main.conf:6: docs-url: expected an absolute" },
	{ BASE "[upstream]\nurl = http://127.0.0.1:1/mcp\n", "main.conf:5: section [upstream] needs a name" },
	{ BASE "[gateway \"x\"]\n", "main.conf:5: section [gateway] takes no name" },
	{ BASE "[upstream \"a\"]\nurl = http://127.0.0.1:1/mcp\n[upstream \"a\"]\n", "main.conf:7: duplicate section [upstream \"a\"] (first at " },
	{ BASE "[upstream \"a\"]\nprefix = a_\n", "main.conf:5: [upstream \"a\"] url: required" },
	{ BASE "[upstream \"a\"]\nurl = http://127.0.0.1:1/mcp\ntrust-hints = perhaps\n", "main.conf:7: trust-hints: expected yes or no" },
	{ BASE "[limits]\ntoken = 10\n", "main.conf:6: token: expected N/SECONDS" },
	{ BASE "[limits]\ntoken = 10/0\n", "main.conf:6: token: expected N/SECONDS" },
	{ BASE "[group \"g\"]\nlimit-tool = 2\n", "main.conf:6: limit-tool: expected N/SECONDS" },
	{ BASE "[group \"g\"]\nlimit-tool = 2/60 burst\n", "main.conf:6: limit-tool: expected N/SECONDS" },
	{ BASE "[group \"g\"]\nlimit-tool = 0\n", "" },
	{ BASE "[group \"g\"]\nlimit-token = 2/60\n", "main.conf:6: limit-token: unknown key in [group]" },
	{ BASE "[tenant \"acme\"]\ngroups = nosuch\n", "main.conf:6: groups: no [group \"nosuch\"]" },
	{ BASE "[tenant \"acme\"]\naccess-mode = sometimes\n", "main.conf:6: access-mode: unknown value" },
	{ BASE "[gateway\n", "main.conf:5: section header without ']'" },
	{ BASE "[gateway] junk\n", "main.conf:5: text after section header" },
	{ BASE "[gateway]\njust words\n", "main.conf:6: expected 'key = value' or '[section]'" },
	{ BASE "[gateway]\ntitle = \"unterminated\n", "main.conf:6: title: unterminated quoted value" },
	{ BASE "[gateway]\ntitle = \"a\" b\n", "main.conf:6: title: text after the closing quote" },
	{ BASE "include = nosuch.conf\n", "main.conf:5: include: " },
	{ "[gateway]\nresource = https://gw.example.com/mcp?x=1\n[auth]\nissuer = https://i\n", "main.conf:2: resource: must not carry a query" },
};

/* Bytes the loader must refuse: NULs, FIFOs, devices, directories, oversized files,
 * too many files. Each is an error naming the file (and line), and never blocks. */
static void
files_not_regular_or_too_big(void)
{
	static const char nul_text[] = BASE "[gateway]\ntitle = a\0b\nbogus = 1\n";
	struct cfg_errors errs;
	struct config *cfg;
	char path[600], name[64], *big;
	const char *got;
	size_t i;

	signal(SIGALRM, on_alarm);
	alarm(20);

	write_bytes("main.conf", nul_text, sizeof(nul_text) - 1);
	snprintf(path, sizeof(path), "%s/main.conf", dir);
	i = config_load(path, &cfg, &errs) < 0 && errs.n == 2;
	ok(i && strstr(errs.err[0].detail, "main.conf:6: NUL byte in line") && strstr(errs.err[1].detail, "main.conf:7: bogus"),
	    "a NUL byte is an error on its line, and the next line counts (got '%s')", errs.n ? errs.err[0].detail : "");
	config_unref(cfg);

	snprintf(path, sizeof(path), "%s/fifo", dir);
	ok(mkfifo(path, 0600) == 0, "mkfifo");
	got = first_error(BASE "include = fifo\n");
	ok(strstr(got, "main.conf:5: include: ") && strstr(got, "/fifo: not a regular file"),
	    "include of a FIFO: refused at once (got '%s')", got);
	got = first_error(BASE "include = /dev/zero\n");
	ok(strstr(got, "main.conf:5: include: /dev/zero: not a regular file") != NULL,
	    "include of a device: refused (got '%s')", got);
	snprintf(path, sizeof(path), "%s/sub.d", dir);
	mkdir(path, 0700);
	got = first_error(BASE "include = sub*\n");
	ok(strstr(got, "main.conf:5: include: ") && strstr(got, "/sub.d: not a regular file"),
	    "a directory an include glob matches: refused (got '%s')", got);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	ok(config_load(path, &cfg, &errs) < 0 && errs.n == 1 && strstr(errs.err[0].detail, "fifo: not a regular file"),
	    "a FIFO as the main file: refused (got '%s')", errs.n ? errs.err[0].detail : "");
	config_unref(cfg);
	{
		static const char *const keys[][3] = {
			{ "[gateway]\n", "session-key-file", "main.conf:6: session-key-file: " },
			{ "[auth]\nclient-id = c\n", "client-secret-file", "main.conf:7: client-secret-file: " },
			{ "[upstream \"u\"]\nurl = http://127.0.0.1:1/mcp\n", "auth-header-file", "main.conf:7: auth-header-file: " },
		};
		char text[1024];

		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			snprintf(text, sizeof(text), BASE "%s%s = %s/fifo\n", keys[i][0], keys[i][1], dir);
			got = first_error(text);
			ok(strncmp(got, keys[i][2], strlen(keys[i][2])) == 0 && strstr(got, "/fifo: not a regular file"),
			    "%s a FIFO: refused (got '%s')", keys[i][1], got);
		}
	}

	/* Size: one file of CFG_FILE_MAX bytes loads, one more byte does not. */
	big = malloc(CFG_TOTAL_MAX);
	memset(big, '\n', CFG_FILE_MAX + 1);
	memcpy(big, "# comment", 9);
	write_bytes("big.conf", big, CFG_FILE_MAX);
	is_str(first_error(BASE "include = big.conf\n"), "", "an included file of %d bytes loads", CFG_FILE_MAX);
	write_bytes("big.conf", big, CFG_FILE_MAX + 1);
	got = first_error(BASE "include = big.conf\n");
	ok(strstr(got, "big.conf: larger than 1048576 bytes") != NULL, "one byte more: refused (got '%s')", got);
	snprintf(path, sizeof(path), "%s/big.conf", dir);
	unlink(path);

	/* All files together: at most CFG_TOTAL_MAX bytes. */
	snprintf(path, sizeof(path), "%s/many.d", dir);
	mkdir(path, 0700);
	for (i = 0; i < CFG_TOTAL_MAX / CFG_FILE_MAX; i++) {
		snprintf(name, sizeof(name), "many.d/%03zu.conf", i);
		write_bytes(name, big, CFG_FILE_MAX);
	}
	got = first_error(BASE "include = many.d/*.conf\n");
	ok(strstr(got, "many.d/015.conf: the configuration's files hold more than 16777216 bytes") != NULL,
	    "files over %d bytes together: refused (got '%s')", CFG_TOTAL_MAX, got);
	for (i = 0; i < CFG_TOTAL_MAX / CFG_FILE_MAX; i++) {
		snprintf(path, sizeof(path), "%s/many.d/%03zu.conf", dir, i);
		unlink(path);
	}
	free(big);

	/* Files: the main file and CFG_MAX_FILES - 1 includes load, one more does not. */
	for (i = 0; i < CFG_MAX_FILES; i++) {
		snprintf(name, sizeof(name), "many.d/%04zu.conf", i);
		write_file(name, "# tenant\n");
	}
	got = first_error(BASE "include = many.d/*.conf\n");
	ok(strstr(got, "main.conf:5: include: ") && strstr(got, "many.d/1023.conf: more than 1024 files"),
	    "more than %d files: refused (got '%s')", CFG_MAX_FILES, got);
	snprintf(path, sizeof(path), "%s/many.d/1023.conf", dir);
	unlink(path);
	is_str(first_error(BASE "include = many.d/*.conf\n"), "", "%d files load", CFG_MAX_FILES);
	for (i = 0; i < CFG_MAX_FILES - 1; i++) {
		snprintf(path, sizeof(path), "%s/many.d/%04zu.conf", dir, i);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/fifo", dir);
	unlink(path);
	alarm(0);
}

/* Loads text as main.conf: rc, errors and warnings in *errs. */
static int
load_text(const char *text, struct cfg_errors *errs)
{
	struct config *cfg;
	int rc = config_load(write_file("main.conf", text), &cfg, errs);

	config_unref(cfg);
	return rc;
}

/* The files a configuration trusts: owned by root or this user, writable by nobody else;
 * a secret readable by others loads with a warning. */
static void
files_trusted(void)
{
	static const char *const secrets[][3] = {
		{ "[gateway]\n", "session-key-file", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n" },
		{ "[auth]\nclient-id = c\n", "client-secret-file", "s3cret\n" },
		{ "[upstream \"u\"]\nurl = http://127.0.0.1:1/mcp\n", "auth-header-file", "X-Key: s3cret\n" },
	};
	struct cfg_errors errs;
	char text[1024], want[1200], path[600];
	const char *f;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++) {
		f = write_file("secret", secrets[i][2]);
		snprintf(text, sizeof(text), BASE "%s%s = %s\n", secrets[i][0], secrets[i][1], f);
		chmod(f, 0600);
		rc = load_text(text, &errs);
		ok(rc == 0 && errs.n_warn == 0, "%s 0600: loads without a warning", secrets[i][1]);
		chmod(f, 0622);
		rc = load_text(text, &errs);
		snprintf(want, sizeof(want), "%s: %s: writable by group or others (mode 0622)", secrets[i][1], f);
		ok(rc < 0 && errs.n == 1 && strstr(errs.err[0].detail, want) && !strstr(errs.err[0].detail, "s3cret"),
		    "%s 0622: refused (got '%s')", secrets[i][1], errs.n ? errs.err[0].detail : "");
		chmod(f, 0644);
		rc = load_text(text, &errs);
		snprintf(want, sizeof(want), "%s: %s: readable by others (mode 0644)", secrets[i][1], f);
		ok(rc == 0 && errs.n_warn == 1 && strstr(errs.warn[0], want) && strstr(errs.warn[0], "main.conf:"),
		    "%s 0644: loads with a warning at its line (got '%s')", secrets[i][1], errs.n_warn ? errs.warn[0] : "");
		if (geteuid() == 0) {
			chmod(f, 0600);
			(void)!chown(f, 65534, 65534);
			rc = load_text(text, &errs);
			ok(rc < 0 && errs.n == 1 && strstr(errs.err[0].detail, "owned by uid 65534, neither root nor the user running"),
			    "%s of another user: refused (got '%s')", secrets[i][1], errs.n ? errs.err[0].detail : "");
		} else {
			ok(1, "# SKIP not root: %s of another user", secrets[i][1]);
		}
		unlink(f);
	}
	f = write_file("inc.conf", "# an included file\n");
	chmod(f, 0666);
	rc = load_text(BASE "include = inc.conf\n", &errs);
	ok(rc < 0 && strstr(errs.err[0].detail, "main.conf:5: include: ") && strstr(errs.err[0].detail, "inc.conf: writable by group or others (mode 0666)"),
	    "an included file writable by others: refused at the include (got '%s')", errs.n ? errs.err[0].detail : "");
	chmod(f, 0644);
	rc = load_text(BASE "include = inc.conf\n", &errs);
	ok(rc == 0 && errs.n_warn == 0, "an included file 0644: loads, no warning");
	snprintf(path, sizeof(path), "%s/open.d", dir);
	mkdir(path, 0700);
	chmod(path, 01777);
	snprintf(text, sizeof(text), BASE "[gateway]\nstate = %s/state\n", path);
	rc = load_text(text, &errs);
	snprintf(want, sizeof(want), "main.conf:6: state: %s: writable by group or others (mode 1777)", path);
	ok(rc < 0 && strstr(errs.err[0].detail, want), "state in a directory anyone may write: refused (got '%s')",
	    errs.n ? errs.err[0].detail : "");
	chmod(path, 0700);
	ok(load_text(text, &errs) == 0, "that directory 0700: loads");
	snprintf(text, sizeof(text), BASE "[gateway]\nstate = %s/missing.d/state\n", dir);
	ok(load_text(text, &errs) == 0, "a state directory that does not exist yet: not the loader's to judge");
}

/* Each case of the table loads, or fails with its first error. */
static void
test_cases(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = first_error(cases[i].text);

		if (!*cases[i].want)
			is_str(got, "", "case %zu loads", i);
		else
			ok(strncmp(got, cases[i].want, strlen(cases[i].want)) == 0,
			    "case %zu: '%s' (got '%s')", i, cases[i].want, got);
	}
}

/* A line longer than the cap is an error on that line, and the next line counts. */
static void
test_long_line(void)
{
	struct cfg_errors errs;
	struct config *cfg;
	char longline[CFG_LINE_MAX + 100], text[CFG_LINE_MAX + 400];

	memset(longline, 'x', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	snprintf(text, sizeof(text), BASE "[gateway]\ntitle = %s\nbogus = 1\n", longline);
	ok(strstr(first_error(text), "main.conf:6: line longer than") != NULL, "over-long line named");
	ok(config_load(write_file("main.conf", text), &cfg, &errs) < 0 && errs.n == 2 &&
	    strstr(errs.err[1].detail, "main.conf:7: bogus") != NULL, "line numbers stay right after it");
	config_unref(cfg);
}

/* Defaults, derived values, lists, quoted values and trailing comments. */
static void
test_defaults(void)
{
	struct cfg_errors errs;
	struct config *cfg;
	const char *path;

	path = write_file("main.conf",
	    "[gateway]\n"
	    "resource = https://GW.example.com:443/mcp   # canonical\n"
	    "title = \"Tools # for agents\"\n"
	    "allowed-origins = https://app.example.com  https://b.example.com\n"
	    "[auth]\n"
	    "issuer = https://idp.example.com\n"
	    "required-scopes = mcp:tools\n"
	    "[limits]\n"
	    "token = 120/60\n");
	ok(config_load(path, &cfg, &errs) == 0, "full config loads");
	is_str(cfg->origin, "https://gw.example.com", "origin lowercased, default port dropped");
	is_str(cfg->prm_url, "https://gw.example.com/.well-known/oauth-protected-resource/mcp", "path-suffixed PRM URL");
	is_str(cfg->docs_url, "https://gw.example.com/docs", "docs-url defaults under the origin");
	is_str(cfg->title, "Tools # for agents", "quoted value keeps its #");
	is_int(cfg->allowed_origins.n, 2, "list split on blanks");
	is_str(cfg->allowed_origins.v[1], "https://b.example.com", "second list item");
	is_int(cfg->max_body, 1048576, "max-body default");
	is_int(cfg->workers, 4, "workers default");
	is_int(cfg->deny_style, DENY_FORBIDDEN, "deny-style default");
	is_int(cfg->client_timeout_ms, 10000, "client-timeout-ms default");
	is_int(cfg->request_timeout_ms, 30000, "request-timeout-ms default without upstreams: an upstream's default timeout-ms");
	is_int(cfg->cache_ttl, 300, "cache-ttl default");
	is_str(cfg->groups_claim, "groups", "groups-claim default");
	is_int(cfg->limit_token.n, 120, "rate N");
	is_int(cfg->limit_token.per, 60, "rate S");
	is_int(cfg->limit_ip.n, 0, "unset limit is unlimited");
	is_int(cfg->scopes_supported.n, 1, "scopes-supported defaults to required-scopes");
	is_int(cfg->gateway.at[0].line, 2, "key location recorded");
	ok(!config_changed(cfg), "unchanged files are not a change");
	config_unref(cfg);
}

/* request-timeout-ms: the longest upstream timeout-ms (a call keeps its own), or as set. */
static void
test_request_timeout(void)
{
	struct cfg_errors errs;
	struct config *cfg;
	const char *path;

	path = write_file("main.conf", BASE "[upstream \"a\"]\nurl = http://127.0.0.1:1/mcp\ntimeout-ms = 4000\n"
	    "[upstream \"b\"]\nurl = http://127.0.0.1:2/mcp\ntimeout-ms = 90000\n[upstream \"c\"]\nurl = http://127.0.0.1:3/mcp\n");
	if (config_load(path, &cfg, &errs) == 0)
		is_int(cfg->request_timeout_ms, 90000, "request-timeout-ms default: the longest upstream timeout-ms");
	else
		ok(0, "request-timeout-ms default: loads (%s)", errs.err[0].detail);
	config_unref(cfg);
	path = write_file("main.conf", BASE "[gateway]\nrequest-timeout-ms = 2500\nclient-timeout-ms = 700\n"
	    "[upstream \"a\"]\nurl = http://127.0.0.1:1/mcp\ntimeout-ms = 4000\n");
	ok(config_load(path, &cfg, &errs) == 0 && cfg->request_timeout_ms == 2500 && cfg->client_timeout_ms == 700,
	    "request-timeout-ms and client-timeout-ms as set");
	config_unref(cfg);
}

/* A [group]'s limit-tool: stored in the group; group_limits and limits_on made at load
 * when one is on (0 is none). */
static void
test_group_limit(void)
{
	struct cfg_errors errs;
	struct config *cfg;
	const char *path;

	path = write_file("main.conf", BASE "[group \"gen\"]\ntools = gen_*\nlimit-tool = 2/60 burst 1\n"
	    "[group \"free\"]\ntools = *\nlimit-tool = 0\n");
	if (config_load(path, &cfg, &errs) == 0) {
		ok(cfg->groups[0].limit_tool.n == 2 && cfg->groups[0].limit_tool.per == 60 &&
		    cfg->groups[0].limit_tool.burst == 1, "[group] limit-tool = 2/60 burst 1: stored in the group");
		ok(!config_rate_on(&cfg->groups[1].limit_tool), "[group] limit-tool = 0: none");
		ok(cfg->group_limits && cfg->limits_on, "a group's limit-tool: group_limits and limits_on");
		is_int(config_group_where(&cfg->groups[0], "limit-tool")->line, 7, "… its line recorded");
	} else
		ok(0, "[group] limit-tool: loads (%s)", errs.err[0].detail);
	config_unref(cfg);
	path = write_file("main.conf", BASE "[group \"free\"]\ntools = *\nlimit-tool = 0\n");
	ok(config_load(path, &cfg, &errs) == 0 && !cfg->group_limits && !cfg->limits_on,
	    "only limit-tool = 0 in a group: no group limit, no limit on");
	config_unref(cfg);
}

/* Includes: globs, a file per tenant, change detection, errors in included files, cycles. */
static void
test_includes(void)
{
	struct cfg_errors errs;
	struct config *cfg;
	char text[600];
	const char *path;

	mkdir(strcat(strcpy(text, dir), "/tenants.d"), 0700);
	write_file("tenants.d/acme.conf", "[group \"github\"]\ntools = gh_*\n[tenant \"acme\"]\ngroups = github\n");
	write_file("tenants.d/beta.conf", "[tenant \"beta\"]\naccess-mode = read-only\n");
	path = write_file("main.conf", BASE "include = tenants.d/*.conf\n[gateway]\ntitle = after include\n");
	ok(config_load(path, &cfg, &errs) == 0, "config with include glob loads");
	is_int(cfg->n_tenants, 2, "both tenant files included");
	ok(config_tenant(cfg, "beta") && config_tenant(cfg, "beta")->access_mode == ACCESS_READ_ONLY, "included values");
	is_str(cfg->title, "after include", "the including file's section continues after the include");
	is_int(cfg->n_files, 4, "four files remembered: the three, and the pins file that is not there");
	ok(!config_changed(cfg), "nothing changed yet");
	write_file("tenants.d/gamma.conf", "[tenant \"gamma\"]\n");
	ok(config_changed(cfg), "a new file matching the glob is a change");
	unlink(strcat(strcpy(text, dir), "/tenants.d/gamma.conf"));
	ok(!config_changed(cfg), "and removing it again is not");
	{
		struct timespec ts[2] = { { 0, UTIME_OMIT }, { 12345, 0 } };
		char p2[600];

		snprintf(p2, sizeof(p2), "%s/tenants.d/acme.conf", dir);
		utimensat(AT_FDCWD, p2, ts, 0);
	}
	ok(config_changed(cfg), "a touched included file is a change");
	config_unref(cfg);

	write_file("tenants.d/beta.conf", "[tenant \"acme\"]\n");
	ok(strstr(first_error(BASE "include = tenants.d/*.conf\n"), "tenants.d/beta.conf:1: duplicate section [tenant \"acme\"]") != NULL,
	    "errors in included files name that file");
	write_file("loop.conf", "include = loop.conf\n");
	ok(strstr(first_error(BASE "include = loop.conf\n"), "already included") != NULL, "include cycle refused");
}

/* The pins file: beside the configuration by default, read with it, watched with it. */
static void
test_pins_file(void)
{
	static const char pin[] = "up tool t sha256:" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	    " 2026-11-29T22:00:00Z ops\n";
	struct cfg_errors errs;
	struct config *cfg;
	unsigned char before[32];
	char want[700], text[1200];
	const char *path;

	path = write_file("pinned.conf", BASE "[upstream \"up\"]\nurl = http://127.0.0.1:1/mcp\n");
	snprintf(want, sizeof(want), "%s/pinned.pins", dir);
	unlink(want);
	ok(config_load(path, &cfg, &errs) == 0, "no pins file: loads (an empty set)");
	is_str(cfg->pins_file, want, "pins-file by default: the configuration's path, .pins for .conf");
	is_int((long)pins_count(cfg->pins), 0, "... no pins");
	is_int(cfg->upstreams[0].pin, UP_PIN_WARN, "pin = warn by default");
	is_int(cfg->upstreams[0].new_tools, UP_NEW_ALLOW, "new-tools = allow by default");
	ok(cfg->upstreams[0].hygiene && cfg->upstreams[0].max_description == 8192, "hygiene = yes, max-description = 8192");
	ok(!config_changed(cfg), "an absent pins file, still absent: no change");
	memcpy(before, cfg->pins_digest, sizeof(before));
	write_file("pinned.pins", pin);
	ok(config_changed(cfg), "the pins file made: a change");
	config_unref(cfg);
	ok(config_load(path, &cfg, &errs) == 0 && pins_count(cfg->pins) == 1 &&
	    pins_find(cfg->pins, "up", PINS_TOOL, "t") != NULL, "read again: its pin");
	ok(memcmp(before, cfg->pins_digest, sizeof(before)) != 0, "... and the pins' digest changed");
	ok(!config_changed(cfg), "nothing changed since");
	write_file("pinned.pins", "up tool t sha256:nothex 2026-11-29T22:00:00Z ops\n");
	ok(config_changed(cfg), "the pins file rewritten: a change");
	config_unref(cfg);
	ok(config_load(path, &cfg, &errs) < 0 && errs.n >= 1 && strstr(errs.err[0].detail, "pins-file: ") &&
	    strstr(errs.err[0].detail, "pinned.pins:1: "), "a bad pins file refuses the configuration, naming file:line");
	ok(cfg->n_files == 2 && !config_changed(cfg), "... and is watched, so fixing it reloads");
	config_unref(cfg);

	snprintf(text, sizeof(text), BASE "[gateway]\npins-file = %s/elsewhere.pins\n[upstream \"up\"]\nurl = http://127.0.0.1:1/mcp\n"
	    "pin = hold\nnew-tools = hold\nhygiene = no\nmax-description = 0\n", dir);
	path = write_file("named", text);
	ok(config_load(path, &cfg, &errs) == 0, "pins-file named, modes set: loads");
	snprintf(want, sizeof(want), "%s/elsewhere.pins", dir);
	is_str(cfg->pins_file, want, "... that file");
	ok(cfg->upstreams[0].pin == UP_PIN_HOLD && cfg->upstreams[0].new_tools == UP_NEW_HOLD &&
	    !cfg->upstreams[0].hygiene && cfg->upstreams[0].max_description == 0, "... pin, new-tools, hygiene, max-description");
	config_unref(cfg);
	ok(strstr(first_error(BASE "[upstream \"up\"]\nurl = http://127.0.0.1:1/mcp\npin = maybe\n"), "main.conf:7: pin: ") != NULL,
	    "pin = maybe: refused at its line");
}

/* A broken load still reports its files, so a reload loop can wait for a change. */
static void
test_broken(void)
{
	struct cfg_errors errs;
	struct config *cfg;
	const char *path;

	path = write_file("main.conf", BASE "[gateway]\nbogus = 1\n");
	ok(config_load(path, &cfg, &errs) < 0 && cfg && cfg->broken && cfg->n_files == 1,
	    "broken config keeps its provenance");
	config_unref(cfg);
}

/* Many errors: each reported, with a cap. */
static void
test_many_errors(void)
{
	struct cfg_errors errs;
	struct config *cfg;
	char many[8192] = BASE "[gateway]\n";
	const char *path;
	size_t i;

	for (i = 0; i < 40; i++)
		strcat(many, "x = 1\n");
	path = write_file("main.conf", many);
	ok(config_load(path, &cfg, &errs) < 0 && errs.n == CFG_MAX_ERRORS &&
	    errs.dropped == 40 - CFG_MAX_ERRORS, "errors are capped and the rest counted");
	config_unref(cfg);
}

/* credentials = user-oauth: what it needs, its connect page's path and client, and the
 * keys that are its alone. */
static void
test_user_oauth(void)
{
	static const struct {
		const char *gateway, *auth, *upstream, *want;
	} uo[] = {
		{ "", "client-id = c\n", "client-id = up\n", "" },
		{ "", "client-id = c\n", "client-id = up\ncatalog-credentials = client-credentials\nuser-scopes = a b\n"
		    "authorization-endpoint = https://as.example.com/auth\ntoken-endpoint = https://as.example.com/token\n", "" },
		{ "connect-client-id = web\n", "", "client-id = up\n", "" },
		{ "", "", "client-id = up\n", "the connect page signs people in at the issuer and needs a client there" },
		{ "", "client-id = c\n", "", "" },
		{ "", "client-id = c\n", "catalog-credentials = client-credentials\n",
		    "catalog-credentials = client-credentials: needs client-id" },
		{ "", "client-id = c\n", "client-id = up\ncatalog-credentials = caller\n",
		    "catalog-credentials = caller: a person's own account never lists tools for others" },
		{ "", "client-id = c\n", "client-id = up\ncatalog = per-caller\n", "catalog = per-caller: for an upstream" },
		{ "", "client-id = c\n", "client-id = up\nexchange-scopes = x\n", "exchange-* are for credentials = exchange" },
		{ "connect-path = /mcp\n", "client-id = c\n", "client-id = up\n", "connect-path: /mcp: expected an absolute path" },
		{ "connect-path = /c?x=1\n", "client-id = c\n", "client-id = up\n", "connect-path: /c?x=1: expected" },
		{ "connect-path = relative\n", "client-id = c\n", "client-id = up\n", "connect-path: relative: expected" },
		{ "vault-entries = 4\n", "client-id = c\n", "client-id = up\n", "vault-entries: expected an integer from 8" },
	};
	char key[600];
	struct cfg_errors errs;
	struct config *cfg = NULL;
	char text[2048];
	const char *got;
	size_t i;

	snprintf(key, sizeof(key), "%s", write_file("session.key",
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"));
	chmod(key, 0600);
	for (i = 0; i < sizeof(uo) / sizeof(uo[0]); i++) {
		snprintf(text, sizeof(text), "[gateway]\nresource = https://gw.example.com/mcp\nsession-key-file = %s\n%s"
		    "[auth]\nissuer = https://idp.example.com\n%s[upstream \"t\"]\nurl = https://t.example.com/mcp\n"
		    "credentials = user-oauth\n%s", key, uo[i].gateway, uo[i].auth, uo[i].upstream);
		got = first_error(text);
		ok(uo[i].want[0] ? strstr(got, uo[i].want) != NULL : got[0] == '\0', "user-oauth case %zu: '%s' (got '%s')",
		    i, uo[i].want, got);
	}
	got = first_error(BASE "[upstream \"t\"]\nurl = https://t.example.com/mcp\ncredentials = user-oauth\nclient-id = up\n");
	ok(strstr(got, "needs [gateway] session-key-file") != NULL, "user-oauth without a session key: refused (got '%s')", got);
	got = first_error(BASE "[upstream \"t\"]\nurl = https://t.example.com/mcp\ncredentials = exchange\nclient-id = x\n"
	    "user-scopes = a\n");
	ok(strstr(got, "user-scopes are for credentials = user-oauth") != NULL, "user-scopes elsewhere: refused (got '%s')", got);
	snprintf(text, sizeof(text), "[gateway]\nresource = https://gw.example.com/mcp\nsession-key-file = %s\n"
	    "[auth]\nissuer = https://idp.example.com\nclient-id = c\n[upstream \"t\"]\nurl = https://t.example.com/mcp\n"
	    "credentials = user-oauth\nclient-id = up\n", key);
	ok(config_load(write_file("main.conf", text), &cfg, &errs) == 0 && cfg->user_oauth &&
	    strcmp(cfg->connect_url, "https://gw.example.com/mcp/connect") == 0 && cfg->vault_entries == 1024 &&
	    strcmp(cfg->client_document_url, "https://gw.example.com/mcp/connect/client") == 0 &&
	    strcmp(cfg->client_document_path, "/mcp/connect/client") == 0 &&
	    cfg->upstreams[0].catalog_credentials == 0 && UP_PERSONAL(&cfg->upstreams[0]) && UP_BEARER(&cfg->upstreams[0]) &&
	    !UP_OBTAINED(&cfg->upstreams[0]) && !cfg->obtains, "user-oauth: the connect page's URL, the vault's size, "
	    "no catalog credential, reached as the person");
	config_unref(cfg);
	cfg = NULL;
	ok(config_load(write_file("main.conf", BASE), &cfg, &errs) == 0 && !cfg->user_oauth && cfg->connect_url == NULL,
	    "no user-oauth upstream: no connect page");
	config_unref(cfg);
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);	/* lines out before an alarm ends the run */
	dir = fixture_dir();

	run_case(test_cases);
	run_case(test_long_line);
	run_case(test_defaults);
	run_case(test_request_timeout);
	run_case(test_group_limit);
	run_case(test_includes);
	run_case(test_pins_file);
	run_case(test_broken);
	run_case(test_many_errors);
	run_case(files_not_regular_or_too_big);
	run_case(files_trusted);
	run_case(test_user_oauth);
	return done_testing();
}
