/* config — the reader of the git-config-like format of docs/ARCHITECTURE.md §3: files
 * and their includes, line by line into the tables of config_keys.c, with every error
 * at its file:line; then the checks across sections and what a configuration derives
 * (URLs, defaults that depend on other keys, the credential files through cfgfile.c);
 * and whether its files changed since. Longer than most files here because reading is
 * one pass with one error list: splitting it would pass the loader's state between
 * files. */
#include "autoconf.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cfgfile.h"
#include "config_keys.h"
#include "jws.h"
#include "secret.h"
#include "url.h"

/* Loader state: the config being built and the open section. */
struct loader {
	struct config *cfg;
	struct cfg_errors *errs;
	int kind;			/* -1 outside any section */
	size_t index;			/* named: element index */
	size_t bytes;			/* read so far, all files together */
};

static void
lerr(struct loader *ld, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

void
cfg_vsay(char *out, size_t outlen, const char *file, int line, const char *fmt, va_list ap)
{
	int n;

	if (line > 0)
		n = snprintf(out, outlen, "%s:%d: ", file, line);
	else
		n = snprintf(out, outlen, "%s: ", file);
	if (n < 0 || (size_t)n >= outlen)
		n = 0;
	vsnprintf(out + n, outlen - (size_t)n, fmt, ap);
}

static void
lerr(struct loader *ld, const char *file, int line, const char *fmt, ...)
{
	struct cfg_errors *e = ld->errs;
	va_list ap;

	if (e->n >= CFG_MAX_ERRORS) {
		e->dropped++;
		return;
	}
	e->err[e->n].code = GW_ECONFIG;
	e->err[e->n].rpc = 0;
	va_start(ap, fmt);
	cfg_vsay(e->err[e->n].detail, sizeof(e->err[0].detail), file, line, fmt, ap);
	va_end(ap);
	e->n++;
}

static void
lwarn(struct loader *ld, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A warning at file:line ("file:line: " and the message): the configuration loads. */
static void
lwarn(struct loader *ld, const char *file, int line, const char *fmt, ...)
{
	struct cfg_errors *e = ld->errs;
	va_list ap;

	if (e->n_warn >= CFG_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	cfg_vsay(e->warn[e->n_warn++], sizeof(e->warn[0]), file, line, fmt, ap);
	va_end(ap);
}

static void
lwarn_inert(struct loader *ld, const char *file, int line, const char *key)
{
	const char *what = cfg_inert((enum kind)ld->kind, key);

	if (what != NULL)
		lwarn(ld, file, line, "%s: has no effect yet (%s)", key, what);
}

static int
nerrors(const struct loader *ld)
{
	return (int)(ld->errs->n + ld->errs->dropped);
}

static void *
section_base(struct loader *ld, struct cfg_section **sec)
{
	const struct cfg_kind *k = &cfg_kinds[ld->kind];
	char *cfg = (char *)ld->cfg;

	if (!k->named) {
		*sec = (struct cfg_section *)(cfg + k->section_off);
		return ld->cfg;
	}
	char *arr = *(char **)(cfg + k->array_off);
	*sec = (struct cfg_section *)(arr + ld->index * k->elem_size);
	return *sec;
}

/* Long: a section header's cases (a kind, a named kind with its name checked and its
 * array grown, a duplicate), each naming its error at its line. */
static int
open_section(struct loader *ld, const char *file, int line, const char *name, const char *sub)
{
	const struct cfg_kind *k;
	struct cfg_section *sec;
	char *cfg = (char *)ld->cfg;
	size_t i, n;
	int kind;

	for (kind = 0; kind < K_MAX; kind++)
		if (strcmp(cfg_kinds[kind].name, name) == 0)
			break;
	if (kind == K_MAX) {
		lerr(ld, file, line, "unknown section [%s]", name);
		return -1;
	}
	k = &cfg_kinds[kind];
	if (!k->named) {
		if (sub) {
			lerr(ld, file, line, "section [%s] takes no name", name);
			return -1;
		}
		ld->kind = kind;
		sec = (struct cfg_section *)(cfg + k->section_off);
		if (sec->where.line == 0) {
			sec->where.file = file;
			sec->where.line = line;
		}
		return 0;
	}
	if (!sub || !*sub) {
		lerr(ld, file, line, "section [%s] needs a name: [%s \"NAME\"]", name, name);
		return -1;
	}
	char **arr = (char **)(cfg + k->array_off);
	size_t *count = (size_t *)(cfg + k->count_off);
	n = *count;
	for (i = 0; i < n; i++) {
		sec = (struct cfg_section *)(*arr + i * k->elem_size);
		if (strcmp(sec->name, sub) == 0) {
			lerr(ld, file, line, "duplicate section [%s \"%s\"] (first at %s:%d)",
			    name, sub, sec->where.file, sec->where.line);
			return -1;
		}
	}
	char *na = realloc(*arr, (n + 1) * k->elem_size);
	if (na == NULL) {
		lerr(ld, file, line, "out of memory");
		return -1;
	}
	*arr = na;
	sec = (struct cfg_section *)(na + n * k->elem_size);
	memset(sec, 0, k->elem_size);
	if ((sec->name = strdup(sub)) == NULL) {
		lerr(ld, file, line, "out of memory");
		return -1;
	}
	sec->where.file = file;
	sec->where.line = line;
	*count = n + 1;
	ld->kind = kind;
	ld->index = n;
	return 0;
}

static void
set_key(struct loader *ld, const char *file, int line, const char *key, const char *value)
{
	const struct cfg_key *keys;
	struct cfg_section *sec;
	struct gw_error err;
	void *base;
	size_t i;

	if (ld->kind < 0) {
		lerr(ld, file, line, "%s: key outside of any section", key);
		return;
	}
	keys = cfg_kinds[ld->kind].keys;
	for (i = 0; keys[i].key; i++)
		if (strcmp(keys[i].key, key) == 0)
			break;
	if (!keys[i].key) {
		lerr(ld, file, line, "%s: unknown key in [%s]", key, cfg_kinds[ld->kind].name);
		return;
	}
	base = section_base(ld, &sec);
	if (sec->at[i].line) {
		lerr(ld, file, line, "%s: set twice (first at %s:%d)", key,
		    sec->at[i].file, sec->at[i].line);
		return;
	}
	if (cfg_set_value(base, &keys[i], value, &err) < 0) {
		lerr(ld, file, line, "%s: %s: '%s'", key, err.detail, value);
		return;
	}
	sec->at[i].file = file;
	sec->at[i].line = line;
	lwarn_inert(ld, file, line, key);
}

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

/* Cuts a "# comment" that starts the value or follows a blank. */
static void
cut_comment(char *v)
{
	char *p;

	for (p = v; *p; p++)
		if (*p == '#' && (p == v || p[-1] == ' ' || p[-1] == '\t')) {
			*p = '\0';
			return;
		}
}

/* A value is either bare (comment cut, trimmed) or one double-quoted string with \" and \\. */
static const char *
parse_value(char *v, char **out)
{
	char *r, *w;

	v = trim(v);
	if (*v != '"') {
		cut_comment(v);
		*out = trim(v);
		return NULL;
	}
	for (r = v + 1, w = v; *r && *r != '"'; r++) {
		if (*r == '\\' && (r[1] == '"' || r[1] == '\\'))
			r++;
		*w++ = *r;
	}
	if (*r != '"')
		return "unterminated quoted value";
	*w = '\0';
	r = trim(r + 1);
	if (*r && *r != '#')
		return "text after the closing quote";
	*out = v;
	return NULL;
}

static int load_file(struct loader *ld, const char *path, const char *from, int from_line, int depth);

static int
has_glob_magic(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static void
do_include(struct loader *ld, const char *file, int line, const char *pattern, int depth)
{
	char dirbuf[PATH_MAX], abspat[PATH_MAX];
	glob_t g;
	size_t i;
	int rc, saved_kind = ld->kind;
	size_t saved_index = ld->index;

	if (!*pattern) {
		lerr(ld, file, line, "include: empty pattern");
		return;
	}
	if (pattern[0] == '/')
		snprintf(abspat, sizeof(abspat), "%s", pattern);
	else {
		snprintf(dirbuf, sizeof(dirbuf), "%s", file);
		if (snprintf(abspat, sizeof(abspat), "%s/%s", dirname(dirbuf), pattern) >= (int)sizeof(abspat)) {
			lerr(ld, file, line, "include: path too long");
			return;
		}
	}
	if (has_glob_magic(abspat)) {
		if (strlist_split(&ld->cfg->include_globs, abspat) < 0) {
			lerr(ld, file, line, "out of memory");
			return;
		}
	}
	rc = glob(abspat, 0, NULL, &g);
	if (rc == GLOB_NOMATCH) {
		if (!has_glob_magic(abspat))
			lerr(ld, file, line, "include: %s: no such file", abspat);
		return;
	}
	if (rc != 0) {
		lerr(ld, file, line, "include: %s: cannot expand", abspat);
		return;
	}
	for (i = 0; i < g.gl_pathc; i++) {
		ld->kind = -1;	/* an included file opens its own sections */
		load_file(ld, g.gl_pathv[i], file, line, depth + 1);
	}
	globfree(&g);
	ld->kind = saved_kind;
	ld->index = saved_index;
}

static const char *
remember_file(struct loader *ld, const char *path, const struct stat *st)
{
	struct config *cfg = ld->cfg;
	struct cfg_file *nf;

	if ((nf = realloc(cfg->files, (cfg->n_files + 1) * sizeof(*nf))) == NULL)
		return NULL;
	cfg->files = nf;
	nf = &cfg->files[cfg->n_files];
	if ((nf->path = strdup(path)) == NULL)
		return NULL;
	nf->dev = st->st_dev;
	nf->ino = st->st_ino;
	nf->size = st->st_size;
	nf->mtime = st->st_mtim;
	nf->mode = st->st_mode;
	nf->uid = st->st_uid;
	cfg->n_files++;
	return nf->path;
}

/* One line of a configuration file: its number and text (without the newline) in line. */
static void parse_line(struct loader *ld, const char *file, int lineno, char *line, int depth);

/* Each line of a file's text (len bytes) parsed in turn; a line too long or with a
 * NUL byte is an error at its number, and the next line counts. */
static void
parse_text(struct loader *ld, const char *file, const char *text, size_t len, int depth)
{
	char line[CFG_LINE_MAX + 1];
	size_t pos, n;
	int lineno = 0;

	for (pos = 0; pos < len; pos += n + 1) {
		const char *nl = memchr(text + pos, '\n', len - pos);

		n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		lineno++;
		if (n + 1 > CFG_LINE_MAX) {	/* the newline counts */
			lerr(ld, file, lineno, "line longer than %d bytes", CFG_LINE_MAX);
			continue;
		}
		if (memchr(text + pos, '\0', n) != NULL) {
			lerr(ld, file, lineno, "NUL byte in line");
			continue;
		}
		memcpy(line, text + pos, n);
		line[n] = '\0';
		parse_line(ld, file, lineno, line, depth);
	}
}

/* Whether path may not be read as one more file of this configuration (nested too
 * deep, read already, one file too many): 1 with the error named at the include, or 0. */
static int
include_refused(struct loader *ld, const char *path, const char *from, int from_line, int depth)
{
	size_t i;

	if (depth > CFG_MAX_DEPTH) {
		lerr(ld, from, from_line, "include: nested deeper than %d (a cycle?)", CFG_MAX_DEPTH);
		return 1;
	}
	for (i = 0; i < ld->cfg->n_files; i++)
		if (strcmp(ld->cfg->files[i].path, path) == 0) {
			lerr(ld, from, from_line, "include: %s is already included", path);
			return 1;
		}
	if (ld->cfg->n_files >= CFG_MAX_FILES) {
		lerr(ld, from, from_line, "include: %s: more than %d files in one configuration", path, CFG_MAX_FILES);
		return 1;
	}
	return 0;
}

static int
load_file(struct loader *ld, const char *path, const char *from, int from_line, int depth)
{
	struct gw_error err;
	const char *file;
	char *text = NULL;
	size_t len;
	struct stat st;
	int fd, rc = -1;

	if (include_refused(ld, path, from, from_line, depth))
		return -1;
	if ((fd = cfgfile_open(path, &st, &err)) < 0) {
		if (from)
			lerr(ld, from, from_line, "include: %s: %s", path, err.detail);
		else
			lerr(ld, path, 0, "%s", err.detail);
		return -1;
	}
	/* Remembered before it is read: a reload notices when an oversized file shrinks, or
	 * when one refused below gets another mode or owner. */
	if ((file = remember_file(ld, path, &st)) == NULL) {
		lerr(ld, path, 0, "out of memory");
		goto out;
	}
	/* What another user may write decides what the gateway believes: refused. */
	if (cfgfile_judge(&st, CFGFILE_TRUSTED, &err) < 0) {
		if (from)
			lerr(ld, from, from_line, "include: %s: %s", path, err.detail);
		else
			lerr(ld, path, 0, "%s", err.detail);
		goto out;
	}
	if (cfgfile_read_all(fd, CFG_FILE_MAX, &text, &len, &err) != 0) {
		lerr(ld, file, 0, "%s", err.detail);
		goto out;
	}
	if (len > CFG_TOTAL_MAX - ld->bytes) {
		lerr(ld, file, 0, "the configuration's files hold more than %d bytes together", CFG_TOTAL_MAX);
		goto out;
	}
	ld->bytes += len;
	parse_text(ld, file, text, len, depth);
	rc = 0;
out:
	free(text);
	close(fd);
	return rc;
}

static void
parse_line(struct loader *ld, const char *file, int lineno, char *line, int depth)
{
	char *p, *eq, *key, *value;
	const char *why;

	p = trim(line);
	if (*p == '\0' || *p == '#' || *p == ';')
		return;
	if (*p == '[') {
		char *name = p + 1, *end = strchr(p, ']'), *sub = NULL;

		if (!end) {
			lerr(ld, file, lineno, "section header without ']'");
			ld->kind = -1;
			return;
		}
		*end = '\0';
		p = trim(end + 1);
		if (*p && *p != '#') {
			lerr(ld, file, lineno, "text after section header");
			ld->kind = -1;
			return;
		}
		name = trim(name);
		if ((sub = strchr(name, '"')) != NULL) {
			char *q;

			*sub++ = '\0';
			name = trim(name);
			if ((q = strchr(sub, '"')) == NULL || *trim(q + 1)) {
				lerr(ld, file, lineno, "section name must be one quoted string");
				ld->kind = -1;
				return;
			}
			*q = '\0';
		}
		if (open_section(ld, file, lineno, name, sub) < 0)
			ld->kind = -1;
		return;
	}
	if ((eq = strchr(p, '=')) == NULL) {
		lerr(ld, file, lineno, "expected 'key = value' or '[section]'");
		return;
	}
	*eq = '\0';
	key = trim(p);
	if ((why = parse_value(eq + 1, &value)) != NULL) {
		lerr(ld, file, lineno, "%s: %s", key, why);
		return;
	}
	if (strcmp(key, "include") == 0)
		do_include(ld, file, lineno, value, depth);
	else
		set_key(ld, file, lineno, key, value);
}

/* A file the configuration names and trusts without a secret in it (ca-file, an
 * as-metadata file): a regular file this user may read, cfgfile_judge's word on it. 0,
 * or -1 with the error at the key's line. */
static int
trusted_file(struct loader *ld, const struct cfg_where *w, const char *key, const char *path)
{
	struct gw_error err;
	struct stat st;
	int fd;

	if ((fd = cfgfile_open(path, &st, &err)) < 0) {
		lerr(ld, w->file, w->line, "%s: %s: %s", key, path, err.detail);
		return -1;
	}
	close(fd);
	if (cfgfile_judge(&st, CFGFILE_TRUSTED, &err) < 0) {
		lerr(ld, w->file, w->line, "%s: %s: %s", key, path, err.detail);
		return -1;
	}
	return 0;
}

/* The state file's own directory, when the configuration names one: judged as a
 * trusted file is, since another user who may write there could make <state>.lock
 * first (no process would start) or put files in its place. One that does not exist
 * yet is made at start (state_file_dir, which judges it again: -t makes nothing). 0, or -1 with the error at the key's line. */
static int
state_dir(struct loader *ld, const struct config *cfg)
{
	const struct cfg_where *w = cfg_where(&cfg->gateway, K_GATEWAY, "state");
	struct gw_error err;
	char buf[PATH_MAX];
	const char *dir;
	struct stat st;

	if (cfg->state == NULL || snprintf(buf, sizeof(buf), "%s", cfg->state) >= (int)sizeof(buf))
		return 0;
	dir = dirname(buf);
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	if (cfgfile_judge(&st, CFGFILE_TRUSTED, &err) < 0) {
		lerr(ld, w->file, w->line, "state: %s: %s", dir, err.detail);
		return -1;
	}
	return 0;
}

/* The files the configuration names, each error or warning at its key's line: every
 * missing, unreadable or untrusted one is reported, not only the first. */
static int
read_credentials(struct loader *ld, struct config *cfg)
{
	const struct cfg_where *w;
	char warn[CFGFILE_WHY_MAX];
	struct gw_error err;
	size_t i;
	int bad = 0;

	if (cfg->client_secret_file) {
		w = cfg_where(&cfg->auth, K_AUTH, "client-secret-file");
		if ((cfg->client_secret = cfgfile_secret(cfg->client_secret_file, &err, warn,
		    sizeof(warn))) == NULL) {
			lerr(ld, w->file, w->line, "client-secret-file: %s", err.detail);
			bad = 1;
		} else if (warn[0])
			lwarn(ld, w->file, w->line, "client-secret-file: %s", warn);
	}
	if (cfg->auth_ca_file && trusted_file(ld, cfg_where(&cfg->auth, K_AUTH, "ca-file"), "ca-file",
	    cfg->auth_ca_file) < 0)
		bad = 1;
	if (cfg->as_metadata && strcmp(cfg->as_metadata, "fetch") != 0 &&
	    trusted_file(ld, cfg_where(&cfg->auth, K_AUTH, "as-metadata"), "as-metadata", cfg->as_metadata) < 0)
		bad = 1;
	if (cfg->session_key_file) {
		w = cfg_where(&cfg->gateway, K_GATEWAY, "session-key-file");
		if (cfgfile_key32(cfg->session_key_file, cfg->session_key, &err, warn, sizeof(warn)) < 0) {
			lerr(ld, w->file, w->line, "session-key-file: %s", err.detail);
			bad = 1;
		} else {
			cfg->has_session_key = 1;
			if (warn[0])
				lwarn(ld, w->file, w->line, "session-key-file: %s", warn);
		}
	}
	for (i = 0; i < cfg->n_upstreams; i++) {
		struct cfg_upstream *u = &cfg->upstreams[i];

		if (u->client_secret_file) {
			w = cfg_where(&u->s, K_UPSTREAM, "client-secret-file");
			if ((u->client_secret = cfgfile_secret(u->client_secret_file, &err, warn, sizeof(warn))) == NULL) {
				lerr(ld, w->file, w->line, "client-secret-file: %s", err.detail);
				bad = 1;
			} else if (warn[0])
				lwarn(ld, w->file, w->line, "client-secret-file: %s", warn);
		}
		if (u->auth_header_file == NULL)
			continue;
		w = cfg_where(&u->s, K_UPSTREAM, "auth-header-file");
		if ((u->auth_header = cfgfile_header(u->auth_header_file, &err, warn, sizeof(warn))) == NULL) {
			lerr(ld, w->file, w->line, "auth-header-file: %s", err.detail);
			bad = 1;
		} else if (warn[0])
			lwarn(ld, w->file, w->line, "auth-header-file: %s", warn);
	}
	if (state_dir(ld, cfg) < 0)
		bad = 1;
	return bad ? -1 : 0;
}

/* [gateway] pins-file: the pins (pins.h), read now and watched with the configuration's
 * files (one that does not exist is remembered so: its coming is a change). By default
 * beside the configuration: its path with ".pins" for a final ".conf", or added. */
static int
read_pins(struct loader *ld, struct config *cfg, const char *path)
{
	const struct cfg_where *w = cfg_where(&cfg->gateway, K_GATEWAY, "pins-file");
	struct stat st = { 0 };
	struct gw_error err;
	struct buf b;
	size_t n = strlen(path);
	int rc;

	if (cfg->pins_file == NULL) {
		n -= n >= 5 && strcmp(path + n - 5, ".conf") == 0 ? 5 : 0;
		if ((cfg->pins_file = malloc(n + sizeof(".pins"))) == NULL)
			return -1;
		memcpy(cfg->pins_file, path, n);
		memcpy(cfg->pins_file + n, ".pins", sizeof(".pins"));
	}
	if (stat(cfg->pins_file, &st) < 0 && errno != ENOENT)
		st.st_ino = (ino_t)-1;	/* unreadable now: any later look differs */
	if (remember_file(ld, cfg->pins_file, &st) == NULL)
		return -1;
	if (pins_load(cfg->pins_file, &cfg->pins, &err) < 0) {
		lerr(ld, w->file ? w->file : path, w->file ? w->line : 0, "pins-file: %s", err.detail);
		return err.code == GW_EINTERNAL ? -1 : 0;
	}
	buf_init(&b, PINS_FILE_MAX + 4096);
	rc = pins_format(cfg->pins, &b);
	if (rc == 0)
		secret_digest(b.data ? b.data : "", b.len, cfg->pins_digest, sizeof(cfg->pins_digest));
	buf_free(&b);
	return rc;
}

/* [limits] store: shm, or a Redis that hosts sharing session-key-file share; then the
 * key of every shared record is derived from that key and the resource. */
static int
parse_store(struct loader *ld, struct config *cfg)
{
	const struct cfg_where *w = cfg_where(&cfg->limits, K_LIMITS, "store");
	static const char label[] = "mcpgate shared store v1";
	struct secret_part parts[2];
	struct gw_error err;

	if (cfg->limit_store == NULL || strcmp(cfg->limit_store, "shm") == 0) {
		if (cfg->shared_cache) {
			w = cfg_where(&cfg->auth, K_AUTH, "shared-cache");
			lerr(ld, w->file, w->line, "shared-cache: needs a store several hosts share "
			    "([limits] store = redis://… or unix://…)");
			return -1;
		}
		return 0;
	}
	if (url_redis_parse(cfg->limit_store, &cfg->redis, &err) < 0) {
		lerr(ld, w->file, w->line, "store: %s", err.detail);
		return -1;
	}
	cfg->redis_on = 1;
	if (!cfg->has_session_key) {
		lerr(ld, w->file, w->line, "store: a Redis store needs [gateway] session-key-file: "
		    "the hosts sharing it share sessions, limits and their keys through that key");
		return -1;
	}
	parts[0] = (struct secret_part){ label, sizeof(label) };
	parts[1] = (struct secret_part){ cfg->resource, cfg->resource ? strlen(cfg->resource) : 0 };
	secret_keyed_digest_parts(cfg->session_key, parts, 2, cfg->shared_key);
	return 0;
}

/* An allow-list of JWS algorithms (jwt-algs, dpop-algs): each one this build verifies,
 * never "none", an HMAC or EdDSA. Not set: all of them. */
static int
parse_algs(struct loader *ld, struct config *cfg, const char *key, const struct strlist *l, unsigned *bits)
{
	const struct cfg_where *w;
	struct gw_error err;
	unsigned bit;
	size_t i;

	*bits = l->n ? 0 : JWS_ALGS_ALL;
	for (i = 0; i < l->n; i++) {
		if (jws_alg_parse(l->v[i], &bit, &err) < 0) {
			w = cfg_where(&cfg->auth, K_AUTH, key);
			lerr(ld, w->file, w->line, "%s: %s: %s", key, l->v[i], err.detail);
			return -1;
		}
		*bits |= bit;
	}
	return 0;
}

/* jwks-uri: an http(s) URL (http only for an http issuer: keys fetched in clear could
 * be swapped by anyone on the path), or the absolute path of a file holding a JWK set
 * (read now, so that a wrong one is refused with its line). */
static int
parse_jwks_uri(struct loader *ld, struct config *cfg)
{
	const struct cfg_where *w = cfg_where(&cfg->auth, K_AUTH, "jwks-uri");
	char *doc = NULL;
	struct gw_error err = { GW_OK, 0, "" };
	struct jws_keys *ks;
	struct stat st;
	size_t len;
	int fd, rc;

	if (cfg->jwks_uri == NULL)
		return 0;
	if (cfg->jwks_uri[0] != '/') {
		if (url_check(cfg->jwks_uri) < 0) {
			lerr(ld, w->file, w->line, "jwks-uri: expected an https:// URL or the absolute path of a file");
			return -1;
		}
		if (strncasecmp(cfg->jwks_uri, "http://", 7) == 0 && strncasecmp(cfg->issuer, "http://", 7) != 0) {
			lerr(ld, w->file, w->line, "jwks-uri: an http:// URL for an https:// issuer (the keys "
			    "would travel in clear)");
			return -1;
		}
		return 0;
	}
	cfg->jwks_file = 1;
	if ((fd = cfgfile_open(cfg->jwks_uri, &st, &err)) < 0) {
		lerr(ld, w->file, w->line, "jwks-uri: %s: %s", cfg->jwks_uri, err.detail);
		return -1;
	}
	if (cfgfile_judge(&st, CFGFILE_TRUSTED, &err) < 0) {
		lerr(ld, w->file, w->line, "jwks-uri: %s: %s", cfg->jwks_uri, err.detail);
		close(fd);
		return -1;
	}
	rc = cfgfile_read_all(fd, JWS_SET_MAX, &doc, &len, &err);
	close(fd);
	if (rc != 0) {
		lerr(ld, w->file, w->line, "jwks-uri: %s: %s", cfg->jwks_uri,
		    rc > 0 ? "larger than a JWK set may be" : err.detail);
		free(doc);
		return -1;
	}
	ks = jws_keys_parse(doc, len, &err);
	free(doc);
	if (jws_keys_count(ks) == 0) {	/* (at load: a file without a key is a mistake) */
		lerr(ld, w->file, w->line, "jwks-uri: %s: %s", cfg->jwks_uri, err.detail);
		jws_keys_free(ks);
		return -1;
	}
	jws_keys_free(ks);
	return 0;
}

/* trusted-proxies: addresses and CIDR ranges, each checked. */
static int
parse_trusted(struct loader *ld, struct config *cfg)
{
	const struct cfg_where *w = cfg_where(&cfg->gateway, K_GATEWAY, "trusted-proxies");
	size_t i;

	if (cfg->trusted_proxies.n == 0)
		return 0;
	if ((cfg->trusted = calloc(cfg->trusted_proxies.n, sizeof(*cfg->trusted))) == NULL)
		return -1;
	for (i = 0; i < cfg->trusted_proxies.n; i++)
		if (netaddr_parse_range(cfg->trusted_proxies.v[i], &cfg->trusted[i]) < 0) {
			lerr(ld, w->file, w->line, "trusted-proxies: %s is not an address or CIDR range "
			    "(host bits beyond the prefix must be zero)", cfg->trusted_proxies.v[i]);
			return -1;
		}
	cfg->n_trusted = cfg->trusted_proxies.n;
	return 0;
}

/* The paths the gateway serves itself, which [metrics] path may not take. */
static int
path_taken(const struct config *cfg, const char *p)
{
	static const char *const own[] = { "/mcp", "/mcp/health", "/server.json" };
	size_t i;

	for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (strcmp(p, own[i]) == 0)
			return 1;
	return strncmp(p, "/.well-known/", 13) == 0 || (cfg->prm_path && strcmp(p, cfg->prm_path) == 0);
}

/* [metrics]: on when the section is there; path a route of its own; allow addresses and
 * CIDR ranges as trusted-proxies (loopback when unset). */
static int
parse_metrics(struct loader *ld, struct config *cfg)
{
	static const char *const loopback[] = { "127.0.0.0/8", "::1" };
	const struct cfg_where *w = cfg_where(&cfg->metrics, K_METRICS, "allow");
	const struct strlist *allow = &cfg->metrics_allow;
	size_t i, n = allow->n ? allow->n : sizeof(loopback) / sizeof(loopback[0]);

	cfg->metrics_on = cfg->metrics.where.line != 0;
	if (!cfg->metrics_on)
		return 0;
	if (cfg->metrics_path[0] != '/' || strpbrk(cfg->metrics_path, "?# \t") || path_taken(cfg, cfg->metrics_path)) {
		const struct cfg_where *pw = cfg_where(&cfg->metrics, K_METRICS, "path");

		lerr(ld, pw->file ? pw->file : cfg->metrics.where.file, pw->file ? pw->line : cfg->metrics.where.line,
		    "path: %s: expected an absolute path that is not one the gateway serves (/mcp, /mcp/health, "
		    "/server.json, /.well-known/…)", cfg->metrics_path);
		return -1;
	}
	if ((cfg->metrics_from = calloc(n, sizeof(*cfg->metrics_from))) == NULL)
		return -1;
	for (i = 0; i < n; i++)
		if (netaddr_parse_range(allow->n ? allow->v[i] : loopback[i], &cfg->metrics_from[i]) < 0) {
			lerr(ld, w->file, w->line, "allow: %s is not an address or CIDR range "
			    "(host bits beyond the prefix must be zero)", allow->v[i]);
			return -1;
		}
	cfg->n_metrics_from = n;
	return 0;
}

/* What the resource and issuer make: the origin, the gateway's binding, the metadata
 * and documentation URLs. */
static int
derive_urls(struct loader *ld, const char *path)
{
	struct config *cfg = ld->cfg;
	const char *rpath;
	size_t n;

	if (!cfg->resource) {
		lerr(ld, path, 0, "[gateway] resource: required (the canonical MCP URL)");
		return -1;
	}
	if (!cfg->issuer) {
		lerr(ld, path, 0, "[auth] issuer: required");
		return -1;
	}
	if ((cfg->origin = url_origin(cfg->resource, &rpath)) == NULL)
		return -1;
	{
		/* What this gateway is, to what it leaves in shared state: two gateways of
		 * one host (one state file) or of one Redis differ in resource or issuer. */
		const struct secret_part bind[3] = { { "mcpgate bind v1", 16 },
		    { cfg->resource, strlen(cfg->resource) + 1 }, { cfg->issuer, strlen(cfg->issuer) } };

		secret_digest_parts(bind, 3, cfg->bind, sizeof(cfg->bind));
	}
	if (strchr(rpath, '?')) {
		const struct cfg_where *w = cfg_where(&cfg->gateway, K_GATEWAY, "resource");

		lerr(ld, w->file, w->line, "resource: must not carry a query");
		return -1;
	}
	n = strlen(cfg->origin) + strlen(rpath) + 64;
	if ((cfg->prm_url = malloc(n)) == NULL)
		return -1;
	snprintf(cfg->prm_url, n, "%s/.well-known/oauth-protected-resource%s",
	    cfg->origin, strcmp(rpath, "/") == 0 ? "" : rpath);
	cfg->prm_path = cfg->prm_url + strlen(cfg->origin);
	if (!cfg->docs_url) {
		n = strlen(cfg->origin) + 8;
		if ((cfg->docs_url = malloc(n)) == NULL)
			return -1;
		snprintf(cfg->docs_url, n, "%s/docs", cfg->origin);
	}
	return 0;
}

/* The defaults that depend on other keys. */
static int
derive_defaults(struct loader *ld)
{
	struct config *cfg = ld->cfg;
	size_t i;

	if (!cfg->name && (cfg->name = strdup("mcpgate")) == NULL)
		return -1;
	if (!cfg->version && (cfg->version = strdup("1.0.0")) == NULL)
		return -1;
	if (cfg->jwks_max_age == 0) {	/* an hour past freshness, as long as the issuer fails */
		cfg->jwks_max_age = cfg->jwks_ttl + 3600;
	} else if (cfg->jwks_max_age < cfg->jwks_ttl) {
		const struct cfg_where *w = cfg_where(&cfg->auth, K_AUTH, "jwks-max-age");

		lerr(ld, w->file, w->line, "jwks-max-age: %ld s is less than jwks-ttl (%ld s): keys are fresh that long",
		    cfg->jwks_max_age, cfg->jwks_ttl);
		return -1;
	}
	if (cfg->request_timeout_ms == 0) {	/* a single call has its own timeout-ms, as before */
		cfg->request_timeout_ms = cfg->n_upstreams ? 1 : UPSTREAM_TIMEOUT_DEFAULT_MS;
		for (i = 0; i < cfg->n_upstreams; i++)
			if (cfg->upstreams[i].timeout_ms > cfg->request_timeout_ms)
				cfg->request_timeout_ms = cfg->upstreams[i].timeout_ms;
	}
	if (!cfg->scopes_supported.n && cfg->required_scopes.n) {
		for (i = 0; i < cfg->required_scopes.n; i++)
			if (strlist_split(&cfg->scopes_supported, cfg->required_scopes.v[i]) < 0)
				return -1;
	}
	return 0;
}

/* Whether any rate limit is on, anywhere, and whether groups have their own. */
static void
derive_limits(struct config *cfg)
{
	size_t i;

	cfg->limits_on = config_rate_on(&cfg->limit_gateway) || config_rate_on(&cfg->limit_ip) ||
	    config_rate_on(&cfg->limit_tenant) || config_rate_on(&cfg->limit_token) ||
	    config_rate_on(&cfg->limit_tool);
	for (i = 0; i < cfg->n_tenants; i++)
		cfg->limits_on |= config_rate_on(&cfg->tenants[i].limit_tenant) ||
		    config_rate_on(&cfg->tenants[i].limit_token) || config_rate_on(&cfg->tenants[i].limit_tool);
	for (i = 0; i < cfg->n_groups; i++) {
		cfg->group_limits |= config_rate_on(&cfg->groups[i].limit_tool);
		cfg->item_grants |= cfg->groups[i].prompts.n > 0 || cfg->groups[i].resources.n > 0;
	}
	cfg->limits_on |= cfg->group_limits;
}

/* What one upstream's credentials need (the mode already derived; mode its name): 0,
 * or 1 with why (n bytes) and the key whose line says it (*key; NULL: credentials'). */
static int
credentials_fault(const struct config *cfg, const struct cfg_upstream *u, const char *mode, const char **key,
    char *why, size_t n)
{
#define FAULT(k, ...)	do { *key = (k); snprintf(why, n, __VA_ARGS__); return 1; } while (0)
	*key = NULL;
	if (u->credentials == UP_CRED_STATIC && u->auth_header_file == NULL)
		FAULT(NULL, "credentials = static: needs auth-header-file");
	if (u->credentials != UP_CRED_STATIC && u->auth_header_file)
		FAULT(NULL, "credentials = %s: auth-header-file is for credentials = static only", mode);
	if (u->credentials == UP_CRED_USER_OAUTH) {
		if (!u->client_id && u->catalog_credentials == UP_CATALOG_CLIENT)
			FAULT("catalog-credentials", "catalog-credentials = client-credentials: needs client-id (the "
			    "gateway's own client at the upstream's authorization server)");
		if (!u->client_id && u->client_secret_file)
			FAULT(NULL, "credentials = user-oauth: client-secret-file goes with client-id");
		if (!cfg->session_key_file)
			FAULT(NULL, "credentials = user-oauth: needs [gateway] session-key-file (the vault is "
			    "sealed under it)");
		if (u->exchange_resource || u->exchange_audience || u->exchange_scopes.n)
			FAULT(NULL, "credentials = user-oauth: exchange-* are for credentials = exchange or id-jag");
		if (u->catalog_credentials == UP_CATALOG_CALLER)
			FAULT("catalog-credentials", "catalog-credentials = caller: a person's own account never "
			    "lists tools for others (client-credentials, or unset: no token)");
		if (u->catalog == UP_CATALOG_PER_CALLER)
			FAULT("catalog", "catalog = per-caller: for an upstream reached by exchange or id-jag");
		return 0;
	}
	if (u->authorization_endpoint || u->user_scopes.n)
		FAULT(NULL, "authorization-endpoint and user-scopes are for credentials = user-oauth");
	if (UP_OBTAINED(u) && !u->client_id && !cfg->client_id)
		FAULT(NULL, "credentials = %s: needs a client at the token endpoint (this section's client-id, or "
		    "[auth] client-id)", mode);
	if (!UP_AS_CALLER(u) && u->catalog_credentials == UP_CATALOG_CLIENT)
		FAULT("catalog-credentials", "catalog-credentials: for an upstream reached as the caller "
		    "(credentials = exchange, id-jag or user-oauth)");
	if (u->catalog == UP_CATALOG_PER_CALLER && (!UP_AS_CALLER(u) || u->catalog_credentials == UP_CATALOG_CLIENT))
		FAULT("catalog", "catalog = per-caller: for an upstream reached as the caller "
		    "(credentials = exchange or id-jag) whose catalog-credentials = caller");
	if (u->credentials == UP_CRED_CLIENT && u->exchange_audience)
		FAULT(NULL, "credentials = client-credentials: exchange-audience is for credentials = exchange or id-jag");
	if (!UP_OBTAINED(u) && (u->token_endpoint || u->exchange_resource || u->exchange_audience ||
	    u->exchange_scopes.n || u->client_id || u->client_secret_file))
		FAULT(NULL, "token-endpoint, exchange-*, client-id and client-secret-file are for "
		    "credentials = exchange, client-credentials, id-jag or user-oauth");
	return 0;
#undef FAULT
}

/* An upstream's credentials: the mode, derived when unset (static with an
 * auth-header-file, else none), and what each mode needs. 0, or -1 with the error at
 * its key's line. */
static int
derive_credentials(struct loader *ld, struct config *cfg)
{
	static const char *const names[] = { "", "none", "static", "exchange", "client-credentials", "id-jag",
	    "user-oauth" };
	const struct cfg_where *w;
	const char *key;
	char why[256];
	size_t i;
	int bad = 0;

	for (i = 0; i < cfg->n_upstreams; i++) {
		struct cfg_upstream *u = &cfg->upstreams[i];

		if (u->credentials == 0)
			u->credentials = u->auth_header_file ? UP_CRED_STATIC : UP_CRED_NONE;
		cfg->obtains |= UP_OBTAINED(u);
		cfg->per_caller |= u->catalog == UP_CATALOG_PER_CALLER;
		cfg->user_oauth |= u->credentials == UP_CRED_USER_OAUTH;
		if (credentials_fault(cfg, u, names[u->credentials], &key, why, sizeof(why))) {
			w = cfg_where(&u->s, K_UPSTREAM, key ? key : "credentials");
			if (w->file == NULL)	/* not set: the section's line */
				w = &u->s.where;
			lerr(ld, w->file, w->line, "%s", why);
			bad = 1;
		}
		if (u->catalog_credentials == 0 && u->credentials != UP_CRED_USER_OAUTH)
			u->catalog_credentials = UP_CATALOG_CALLER;
	}
	return bad ? -1 : 0;
}

/* The connect page, when some upstream is user-oauth: a path of its own at the
 * resource's origin (its URL is the redirect URI registered at both authorization
 * servers), and a client at the issuer to sign people in with. 0, or -1 named. */
static int
derive_connect(struct loader *ld, struct config *cfg)
{
	const struct cfg_where *w = cfg_where(&cfg->gateway, K_GATEWAY, "connect-path");
	const char *file = w->file ? w->file : cfg->gateway.where.file;
	int line = w->file ? w->line : cfg->gateway.where.line;
	char warn[CFGFILE_WHY_MAX];
	struct gw_error err;
	size_t n;

	if (!cfg->user_oauth)
		return 0;
	if (cfg->connect_path[0] != '/' || strpbrk(cfg->connect_path, "?#% \t") || path_taken(cfg, cfg->connect_path) ||
	    (cfg->metrics.where.line && strcmp(cfg->connect_path, cfg->metrics_path) == 0)) {
		lerr(ld, file, line, "connect-path: %s: expected an absolute path that is not one the gateway "
		    "serves otherwise", cfg->connect_path);
		return -1;
	}
	if (!cfg->connect_client_id && !cfg->client_id) {
		lerr(ld, file, line, "credentials = user-oauth: the connect page signs people in at the issuer and "
		    "needs a client there ([gateway] connect-client-id, or [auth] client-id)");
		return -1;
	}
	if (cfg->connect_client_secret_file) {
		w = cfg_where(&cfg->gateway, K_GATEWAY, "connect-client-secret-file");
		if ((cfg->connect_client_secret = cfgfile_secret(cfg->connect_client_secret_file, &err, warn,
		    sizeof(warn))) == NULL) {
			lerr(ld, w->file, w->line, "connect-client-secret-file: %s", err.detail);
			return -1;
		}
		if (warn[0])
			lwarn(ld, w->file, w->line, "connect-client-secret-file: %s", warn);
	}
	n = strlen(cfg->origin) + strlen(cfg->connect_path) + 8;
	if ((cfg->connect_url = malloc(n)) == NULL || (cfg->client_document_url = malloc(n)) == NULL)
		return -1;
	snprintf(cfg->connect_url, n, "%s%s", cfg->origin, cfg->connect_path);
	snprintf(cfg->client_document_url, n, "%s%s/client", cfg->origin, cfg->connect_path);
	cfg->client_document_path = cfg->client_document_url + strlen(cfg->origin);
	return 0;
}

/* What the keys make together, after the files are read: 0, or -1 (an error named, or
 * out of memory when none is). */
static int
derive(struct loader *ld, const char *path)
{
	struct config *cfg = ld->cfg;

	if (derive_urls(ld, path) < 0 || derive_credentials(ld, cfg) < 0 || read_credentials(ld, cfg) < 0 ||
	    derive_defaults(ld) < 0 || derive_connect(ld, cfg) < 0 || read_pins(ld, cfg, path) < 0)
		return -1;
	if (parse_trusted(ld, cfg) < 0 || parse_metrics(ld, cfg) < 0 ||
	    parse_algs(ld, cfg, "jwt-algs", &cfg->jwt_algs_list, &cfg->jwt_algs) < 0 ||
	    parse_algs(ld, cfg, "dpop-algs", &cfg->dpop_algs_list, &cfg->dpop_algs) < 0 ||
	    parse_jwks_uri(ld, cfg) < 0 || cfg_accept_digest(cfg, cfg->accept) < 0)
		return -1;
	derive_limits(cfg);
	return parse_store(ld, cfg);
}

/* Cross-references: every tenant group exists as a [group] or an upstream's group. */
static void
check_refs(struct loader *ld)
{
	struct config *cfg = ld->cfg;
	size_t t, g, i;

	for (i = 0; i < cfg->n_upstreams; i++) {
		struct cfg_upstream *u = &cfg->upstreams[i];

		if (!u->url)
			lerr(ld, u->s.where.file, u->s.where.line,
			    "[upstream \"%s\"] url: required", u->s.name);
		if (!u->group && (u->group = strdup(u->s.name)) == NULL)
			lerr(ld, u->s.where.file, u->s.where.line, "out of memory");
	}
	for (t = 0; t < cfg->n_tenants; t++) {
		struct cfg_tenant *tn = &cfg->tenants[t];

		if ((tn->listed = calloc(cfg->n_groups + 1, 1)) == NULL)
			lerr(ld, tn->s.where.file, tn->s.where.line, "out of memory");
		for (g = 0; g < tn->groups.n; g++) {
			const char *name = tn->groups.v[g];
			int found = 0;

			for (i = 0; i < cfg->n_groups; i++)
				if (strcmp(cfg->groups[i].s.name, name) == 0) {
					found = 1;
					if (tn->listed)
						tn->listed[i] = 1;
				}
			for (i = 0; i < cfg->n_upstreams && !found; i++)
				found = cfg->upstreams[i].group && strcmp(cfg->upstreams[i].group, name) == 0;
			if (!found) {
				const struct cfg_where *w = cfg_where(&tn->s, K_TENANT, "groups");

				lerr(ld, w->file, w->line, "groups: no [group \"%s\"] or upstream group of that name", name);
			}
		}
	}

}

/* Counts loads in this process: each configuration has its own serial. */
static uint64_t load_serial;

int
config_load(const char *path, struct config **out, struct cfg_errors *errs)
{
	struct loader ld;
	struct config *cfg;

	*out = NULL;
	errs->n = errs->dropped = errs->n_warn = 0;
	if ((cfg = calloc(1, sizeof(*cfg))) == NULL) {
		gw_error_set(&errs->err[0], GW_EINTERNAL, "%s: out of memory", path);
		errs->n = 1;
		return -1;
	}
	cfg->refs = 1;
	cfg->serial = __atomic_add_fetch(&load_serial, 1, __ATOMIC_RELAXED);
	ld.cfg = cfg;
	ld.errs = errs;
	ld.kind = -1;
	ld.index = 0;
	ld.bytes = 0;
	load_file(&ld, path, NULL, 0, 0);
	if (nerrors(&ld) == 0 && cfg_defaults(cfg) < 0)
		lerr(&ld, path, 0, "out of memory");
	if (nerrors(&ld) == 0)
		check_refs(&ld);
	/* derive() names what it refuses; a failure it does not name is an allocation's. */
	if (nerrors(&ld) == 0 && derive(&ld, path) < 0 && nerrors(&ld) == 0)
		lerr(&ld, path, 0, "out of memory");
	*out = cfg;
	if (nerrors(&ld) > 0) {
		cfg->broken = 1;
		return -1;
	}
	return 0;
}

static int
file_known(const struct config *cfg, const char *path)
{
	size_t i;

	for (i = 0; i < cfg->n_files; i++)
		if (strcmp(cfg->files[i].path, path) == 0)
			return 1;
	return 0;
}

int
config_changed(const struct config *cfg)
{
	struct stat st;
	glob_t g;
	size_t i, j;

	for (i = 0; i < cfg->n_files; i++) {
		const struct cfg_file *f = &cfg->files[i];

		if (stat(f->path, &st) < 0 && errno == ENOENT && f->ino == 0)
			continue;	/* absent, as it was (a pins file not made yet) */
		if (stat(f->path, &st) < 0 || st.st_ino != f->ino || st.st_dev != f->dev ||
		    st.st_size != f->size || st.st_mtim.tv_sec != f->mtime.tv_sec ||
		    st.st_mtim.tv_nsec != f->mtime.tv_nsec || st.st_mode != f->mode || st.st_uid != f->uid)
			return 1;
	}
	for (i = 0; i < cfg->include_globs.n; i++) {
		if (glob(cfg->include_globs.v[i], 0, NULL, &g) != 0)
			continue;	/* no match now: a vanished file was caught above */
		for (j = 0; j < g.gl_pathc; j++)
			if (!file_known(cfg, g.gl_pathv[j])) {
				globfree(&g);
				return 1;
			}
		globfree(&g);
	}
	return 0;
}
