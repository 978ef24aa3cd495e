/* config — table-driven loader for the git-config-like format of
 * docs/ARCHITECTURE.md §3. */
#include "autoconf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "secret.h"
#include "url.h"

#define UPSTREAM_TIMEOUT_DEFAULT	"30000"	/* [upstream] timeout-ms */
#define UPSTREAM_TIMEOUT_DEFAULT_MS	30000L

enum cfg_type {
	T_STR = 1,	/* any string */
	T_URL,		/* absolute http(s) URL without fragment */
	T_INT,		/* bounded integer */
	T_BOOL,		/* yes/no, true/false, on/off, 1/0 */
	T_LIST,		/* blank-separated words */
	T_ENUM,		/* one of names[], stored as index + 1 */
	T_RATE,		/* N/S, 0 = unlimited */
};

struct cfg_key {
	const char *key;
	enum cfg_type type;
	size_t offset;		/* into the section's base struct */
	long min, max;		/* T_INT */
	const char *const *names;	/* T_ENUM */
	const char *def;	/* default, parsed like a value; NULL = none */
};

static const char *const deny_styles[] = { "forbidden", "hide", NULL };
static const char *const access_modes[] = { "read-write", "read-only", NULL };
static const char *const client_auths[] = { "client_secret_basic", "client_secret_post", NULL };

#define C(f)	offsetof(struct config, f)
static const struct cfg_key gateway_keys[] = {
	{ "resource", T_URL, C(resource), 0, 0, NULL, NULL },
	{ "docs-url", T_URL, C(docs_url), 0, 0, NULL, NULL },
	{ "name", T_STR, C(name), 0, 0, NULL, NULL },
	{ "title", T_STR, C(title), 0, 0, NULL, NULL },
	{ "description", T_STR, C(description), 0, 0, NULL, NULL },
	{ "version", T_STR, C(version), 0, 0, NULL, NULL },
	{ "website-url", T_URL, C(website_url), 0, 0, NULL, NULL },
	{ "instructions", T_STR, C(instructions), 0, 0, NULL, NULL },
	{ "allowed-origins", T_LIST, C(allowed_origins), 0, 0, NULL, NULL },
	{ "max-body", T_INT, C(max_body), 64, 64L << 20, NULL, "1048576" },
	{ "max-batch", T_INT, C(max_batch), 1, 10000, NULL, "100" },
	{ "catalog-ttl", T_INT, C(catalog_ttl), 1, 86400, NULL, "60" },
	{ "page-size", T_INT, C(page_size), 1, 10000, NULL, "100" },
	{ "state", T_STR, C(state), 0, 0, NULL, NULL },
	{ "session-key-file", T_STR, C(session_key_file), 0, 0, NULL, NULL },
	{ "session-ttl", T_INT, C(session_ttl), 60, 30 * 86400, NULL, "86400" },
	{ "log-file", T_STR, C(log_file), 0, 0, NULL, NULL },
	{ "trusted-proxies", T_LIST, C(trusted_proxies), 0, 0, NULL, NULL },
	{ "workers", T_INT, C(workers), 1, 256, NULL, "4" },
	{ "deny-style", T_ENUM, C(deny_style), 0, 0, deny_styles, "forbidden" },
	/* No default in the table: the longest upstream timeout-ms (derive). */
	{ "request-timeout-ms", T_INT, C(request_timeout_ms), 1, 3600000, NULL, NULL },
	{ "client-timeout-ms", T_INT, C(client_timeout_ms), 100, 3600000, NULL, "10000" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct cfg_key auth_keys[] = {
	{ "issuer", T_URL, C(issuer), 0, 0, NULL, NULL },
	{ "introspection-endpoint", T_URL, C(introspection_endpoint), 0, 0, NULL, NULL },
	{ "client-id", T_STR, C(client_id), 0, 0, NULL, NULL },
	{ "client-secret-file", T_STR, C(client_secret_file), 0, 0, NULL, NULL },
	{ "client-auth", T_ENUM, C(client_auth), 0, 0, client_auths, "client_secret_basic" },
	{ "required-scopes", T_LIST, C(required_scopes), 0, 0, NULL, NULL },
	{ "scopes-supported", T_LIST, C(scopes_supported), 0, 0, NULL, NULL },
	{ "cache-ttl", T_INT, C(cache_ttl), 0, 86400, NULL, "300" },
	{ "cache-entries", T_INT, C(cache_entries), 64, 1 << 20, NULL, "4096" },
	{ "negative-ttl", T_INT, C(negative_ttl), 0, 3600, NULL, "10" },
	{ "timeout-ms", T_INT, C(auth_timeout_ms), 1, 60000, NULL, "3000" },
	{ "groups-claim", T_STR, C(groups_claim), 0, 0, NULL, "groups" },
	{ "tenant-claim", T_STR, C(tenant_claim), 0, 0, NULL, "tenant" },
	{ "as-metadata", T_STR, C(as_metadata), 0, 0, NULL, "fetch" },
	{ "ca-file", T_STR, C(auth_ca_file), 0, 0, NULL, NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};

static const struct cfg_key limits_keys[] = {
	{ "gateway", T_RATE, C(limit_gateway), 0, 0, NULL, "0/1" },
	{ "ip", T_RATE, C(limit_ip), 0, 0, NULL, "0/1" },
	{ "tenant", T_RATE, C(limit_tenant), 0, 0, NULL, "0/1" },
	{ "token", T_RATE, C(limit_token), 0, 0, NULL, "0/1" },
	{ "tool", T_RATE, C(limit_tool), 0, 0, NULL, "0/1" },
	{ "store", T_STR, C(limit_store), 0, 0, NULL, "shm" },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
#undef C

#define U(f)	offsetof(struct cfg_upstream, f)
static const struct cfg_key upstream_keys[] = {
	{ "url", T_URL, U(url), 0, 0, NULL, NULL },
	{ "prefix", T_STR, U(prefix), 0, 0, NULL, "" },
	{ "group", T_STR, U(group), 0, 0, NULL, NULL },
	{ "auth-header-file", T_STR, U(auth_header_file), 0, 0, NULL, NULL },
	{ "read-only-tools", T_LIST, U(read_only_tools), 0, 0, NULL, NULL },
	{ "trust-hints", T_BOOL, U(trust_hints), 0, 0, NULL, "no" },
	{ "timeout-ms", T_INT, U(timeout_ms), 1, 3600000, NULL, UPSTREAM_TIMEOUT_DEFAULT },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
#undef U

#define G(f)	offsetof(struct cfg_group, f)
static const struct cfg_key group_keys[] = {
	{ "tools", T_LIST, G(tools), 0, 0, NULL, NULL },
	{ "scopes", T_LIST, G(scopes), 0, 0, NULL, NULL },
	{ "members", T_LIST, G(members), 0, 0, NULL, NULL },
	{ "feature", T_STR, G(feature), 0, 0, NULL, NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
#undef G

#define N(f)	offsetof(struct cfg_tenant, f)
static const struct cfg_key tenant_keys[] = {
	{ "groups", T_LIST, N(groups), 0, 0, NULL, NULL },
	{ "access-mode", T_ENUM, N(access_mode), 0, 0, access_modes, "read-write" },
	{ "features", T_LIST, N(features), 0, 0, NULL, NULL },
	{ "deny", T_LIST, N(deny), 0, 0, NULL, NULL },
	{ "allow", T_LIST, N(allow), 0, 0, NULL, NULL },
	{ "limit-gateway", T_RATE, N(limit_gateway), 0, 0, NULL, NULL },
	{ "limit-ip", T_RATE, N(limit_ip), 0, 0, NULL, NULL },
	{ "limit-tenant", T_RATE, N(limit_tenant), 0, 0, NULL, NULL },
	{ "limit-token", T_RATE, N(limit_token), 0, 0, NULL, NULL },
	{ "limit-tool", T_RATE, N(limit_tool), 0, 0, NULL, NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
#undef N

/* Section kinds. Singletons live inside struct config; named ones in arrays. */
enum kind { K_GATEWAY, K_AUTH, K_LIMITS, K_UPSTREAM, K_GROUP, K_TENANT, K_MAX };

struct cfg_kind {
	const char *name;
	const struct cfg_key *keys;
	int named;
	size_t elem_size;	/* named: element size */
	size_t array_off;	/* named: offset of the array pointer in struct config */
	size_t count_off;	/* named: offset of its count */
	size_t section_off;	/* singleton: offset of its struct cfg_section */
};

static const struct cfg_kind kinds[K_MAX] = {
	[K_GATEWAY] = { "gateway", gateway_keys, 0, 0, 0, 0, offsetof(struct config, gateway) },
	[K_AUTH] = { "auth", auth_keys, 0, 0, 0, 0, offsetof(struct config, auth) },
	[K_LIMITS] = { "limits", limits_keys, 0, 0, 0, 0, offsetof(struct config, limits) },
	[K_UPSTREAM] = { "upstream", upstream_keys, 1, sizeof(struct cfg_upstream),
		offsetof(struct config, upstreams), offsetof(struct config, n_upstreams), 0 },
	[K_GROUP] = { "group", group_keys, 1, sizeof(struct cfg_group),
		offsetof(struct config, groups), offsetof(struct config, n_groups), 0 },
	[K_TENANT] = { "tenant", tenant_keys, 1, sizeof(struct cfg_tenant),
		offsetof(struct config, tenants), offsetof(struct config, n_tenants), 0 },
};

/* Keys that load (a configuration written for a later version still does) but that
 * nothing implements yet: setting one is a warning. Matched by the start of the key
 * ("" is every key of the section). */
static const struct {
	int kind;
	const char *prefix;
	const char *what;
} inert_keys[] = {
	{ K_LIMITS, "", "rate limits are not enforced" },
	{ K_TENANT, "limit-", "rate limits are not enforced" },
	{ K_GATEWAY, "trusted-proxies", "X-Forwarded-For is not read" },
};

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

static void
lerr(struct loader *ld, const char *file, int line, const char *fmt, ...)
{
	struct cfg_errors *e = ld->errs;
	va_list ap;
	int n;

	if (e->n >= CFG_MAX_ERRORS) {
		e->dropped++;
		return;
	}
	if (line > 0)
		n = snprintf(e->msg[e->n], sizeof(e->msg[0]), "%s:%d: ", file, line);
	else
		n = snprintf(e->msg[e->n], sizeof(e->msg[0]), "%s: ", file);
	if (n < 0 || (size_t)n >= sizeof(e->msg[0]))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(e->msg[e->n] + n, sizeof(e->msg[0]) - (size_t)n, fmt, ap);
	va_end(ap);
	e->n++;
}

static void
lwarn_inert(struct loader *ld, const char *file, int line, const char *key)
{
	struct cfg_errors *e = ld->errs;
	size_t i;

	for (i = 0; i < sizeof(inert_keys) / sizeof(inert_keys[0]); i++)
		if (inert_keys[i].kind == ld->kind &&
		    strncmp(key, inert_keys[i].prefix, strlen(inert_keys[i].prefix)) == 0)
			break;
	if (i == sizeof(inert_keys) / sizeof(inert_keys[0]) || e->n_warn >= CFG_MAX_WARNINGS)
		return;
	snprintf(e->warn[e->n_warn++], sizeof(e->warn[0]), "%s:%d: %s: has no effect yet (%s)",
	    file, line, key, inert_keys[i].what);
}

static int
nerrors(const struct loader *ld)
{
	return (int)(ld->errs->n + ld->errs->dropped);
}

static char *
xstrndup(const char *s, size_t n)
{
	char *p = malloc(n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

static void
strlist_free(struct strlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

int
strlist_has(const struct strlist *l, const char *s)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return 0;
}

static int
strlist_split(struct strlist *l, const char *value)
{
	const char *p = value, *start;
	char **nv;

	while (*p) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if ((nv = realloc(l->v, (l->n + 1) * sizeof(*nv))) == NULL)
			return -1;
		l->v = nv;
		if ((l->v[l->n] = xstrndup(start, (size_t)(p - start))) == NULL)
			return -1;
		l->n++;
	}
	return 0;
}

/* Bounded decimal parse of the whole string. */
static int
parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)*s) && *s != '-')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Stores one value; returns NULL or the reason it was refused. */
static const char *
set_value(void *base, const struct cfg_key *k, const char *value)
{
	void *field = (char *)base + k->offset;
	long v;
	size_t i;

	switch (k->type) {
	case T_URL:
		if (url_check(value) < 0)
			return "expected an absolute http:// or https:// URL without fragment";
		/* FALLTHROUGH */
	case T_STR:
		free(*(char **)field);
		if ((*(char **)field = strdup(value)) == NULL)
			return "out of memory";
		return NULL;
	case T_INT:
		if (parse_long(value, k->min, k->max, &v) < 0) {
			static __thread char why[96];
			snprintf(why, sizeof(why), "expected an integer from %ld to %ld", k->min, k->max);
			return why;
		}
		*(long *)field = v;
		return NULL;
	case T_BOOL:
		if (!strcmp(value, "yes") || !strcmp(value, "true") || !strcmp(value, "on") || !strcmp(value, "1"))
			*(int *)field = 1;
		else if (!strcmp(value, "no") || !strcmp(value, "false") || !strcmp(value, "off") || !strcmp(value, "0"))
			*(int *)field = 0;
		else
			return "expected yes or no";
		return NULL;
	case T_LIST:
		strlist_free(field);
		if (strlist_split(field, value) < 0)
			return "out of memory";
		return NULL;
	case T_ENUM:
		for (i = 0; k->names[i]; i++)
			if (strcmp(value, k->names[i]) == 0) {
				*(int *)field = (int)i + 1;
				return NULL;
			}
		return "unknown value";
	case T_RATE: {
		struct rate *r = field;
		const char *slash = strchr(value, '/');
		char num[32];
		long n, per;

		if (!slash || (size_t)(slash - value) >= sizeof(num))
			return "expected N/SECONDS (0 = unlimited)";
		memcpy(num, value, (size_t)(slash - value));
		num[slash - value] = '\0';
		if (parse_long(num, 0, 1000000000L, &n) < 0 ||
		    parse_long(slash + 1, 1, 86400 * 366L, &per) < 0)
			return "expected N/SECONDS (0 = unlimited)";
		r->n = n;
		r->per = per;
		return NULL;
	}
	}
	return "unknown key type";
}

static void *
section_base(struct loader *ld, struct cfg_section **sec)
{
	const struct cfg_kind *k = &kinds[ld->kind];
	char *cfg = (char *)ld->cfg;

	if (!k->named) {
		*sec = (struct cfg_section *)(cfg + k->section_off);
		return ld->cfg;
	}
	char *arr = *(char **)(cfg + k->array_off);
	*sec = (struct cfg_section *)(arr + ld->index * k->elem_size);
	return *sec;
}

static void
apply_defaults(void *base, struct cfg_section *sec, const struct cfg_key *keys)
{
	size_t i;

	for (i = 0; keys[i].key; i++)
		if (keys[i].def && sec->at[i].line == 0)
			set_value(base, &keys[i], keys[i].def);
}

static int
open_section(struct loader *ld, const char *file, int line, const char *name, const char *sub)
{
	const struct cfg_kind *k;
	struct cfg_section *sec;
	char *cfg = (char *)ld->cfg;
	size_t i, n;
	int kind;

	for (kind = 0; kind < K_MAX; kind++)
		if (strcmp(kinds[kind].name, name) == 0)
			break;
	if (kind == K_MAX) {
		lerr(ld, file, line, "unknown section [%s]", name);
		return -1;
	}
	k = &kinds[kind];
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
	const char *why;
	void *base;
	size_t i;

	if (ld->kind < 0) {
		lerr(ld, file, line, "%s: key outside of any section", key);
		return;
	}
	keys = kinds[ld->kind].keys;
	for (i = 0; keys[i].key; i++)
		if (strcmp(keys[i].key, key) == 0)
			break;
	if (!keys[i].key) {
		lerr(ld, file, line, "%s: unknown key in [%s]", key, kinds[ld->kind].name);
		return;
	}
	base = section_base(ld, &sec);
	if (sec->at[i].line) {
		lerr(ld, file, line, "%s: set twice (first at %s:%d)", key,
		    sec->at[i].file, sec->at[i].line);
		return;
	}
	if ((why = set_value(base, &keys[i], value)) != NULL) {
		lerr(ld, file, line, "%s: %s: '%s'", key, why, value);
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
	cfg->n_files++;
	return nf->path;
}

/* Opens path for reading when it is a regular file. Never blocks: a FIFO or a device
 * is refused by stat() before it is opened, and the open itself is O_NONBLOCK and
 * checked again with fstat() (the path may have been replaced in between). Symbolic
 * links are followed (configuration managers link files into place). Returns the fd
 * and *st, or -1 with *why. */
static int
open_regular(const char *path, struct stat *st, const char **why)
{
	int fd;

	if (stat(path, st) < 0) {
		*why = strerror(errno);
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		*why = "not a regular file";
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) < 0) {
		*why = strerror(errno);
		return -1;
	}
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		*why = "not a regular file";
		return -1;
	}
	return fd;
}

/* fopen() for the files a configuration names (secrets, keys): regular files only. */
static FILE *
fopen_regular(const char *path, const char **why)
{
	struct stat st;
	FILE *f;
	int fd;

	if ((fd = open_regular(path, &st, why)) < 0)
		return NULL;
	if ((f = fdopen(fd, "rb")) == NULL) {
		*why = strerror(errno);
		close(fd);
	}
	return f;
}

/* Reads all of fd into *out (NUL-terminated, *len bytes). Returns 0, 1 when the file
 * holds more than max bytes (read, not stat: it may be growing), or -1 on an error. */
static int
read_all(int fd, size_t max, char **out, size_t *len)
{
	size_t n = 0, cap = 4096;
	char *b = NULL, *nb;
	ssize_t r;

	*out = NULL;
	*len = 0;
	for (;;) {
		if (b == NULL || n == cap) {
			if (b != NULL)
				cap = cap > max / 2 ? max + 1 : cap * 2;
			if ((nb = realloc(b, cap + 1)) == NULL) {
				free(b);
				return -1;
			}
			b = nb;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(b);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			free(b);
			return 1;
		}
	}
	b[n] = '\0';
	*out = b;
	*len = n;
	return 0;
}

/* One line of a configuration file: its number and text (without the newline) in line. */
static void parse_line(struct loader *ld, const char *file, int lineno, char *line, int depth);

static int
load_file(struct loader *ld, const char *path, const char *from, int from_line, int depth)
{
	char line[CFG_LINE_MAX + 1];
	const char *file, *why;
	char *text = NULL;
	size_t i, len, pos, n;
	struct stat st;
	int fd, lineno = 0, rc = -1;

	if (depth > CFG_MAX_DEPTH) {
		lerr(ld, from, from_line, "include: nested deeper than %d (a cycle?)", CFG_MAX_DEPTH);
		return -1;
	}
	for (i = 0; i < ld->cfg->n_files; i++)
		if (strcmp(ld->cfg->files[i].path, path) == 0) {
			lerr(ld, from, from_line, "include: %s is already included", path);
			return -1;
		}
	if (ld->cfg->n_files >= CFG_MAX_FILES) {
		lerr(ld, from, from_line, "include: %s: more than %d files in one configuration", path, CFG_MAX_FILES);
		return -1;
	}
	if ((fd = open_regular(path, &st, &why)) < 0) {
		if (from)
			lerr(ld, from, from_line, "include: %s: %s", path, why);
		else
			lerr(ld, path, 0, "%s", why);
		return -1;
	}
	/* Remembered before it is read: a reload notices when an oversized file shrinks. */
	if ((file = remember_file(ld, path, &st)) == NULL) {
		lerr(ld, path, 0, "out of memory");
		goto out;
	}
	switch (read_all(fd, CFG_FILE_MAX, &text, &len)) {
	case 0:
		break;
	case 1:
		lerr(ld, file, 0, "larger than %d bytes", CFG_FILE_MAX);
		goto out;
	default:
		lerr(ld, file, 0, "read error");
		goto out;
	}
	if (len > CFG_TOTAL_MAX - ld->bytes) {
		lerr(ld, file, 0, "the configuration's files hold more than %d bytes together", CFG_TOTAL_MAX);
		goto out;
	}
	ld->bytes += len;
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

/* Where key of a section was set (for errors that arise after parsing). */
static const struct cfg_where *
where_of(const struct cfg_section *sec, const struct cfg_key *keys, const char *key)
{
	static const struct cfg_where none = { NULL, 0 };
	size_t i;

	for (i = 0; keys[i].key; i++)
		if (strcmp(keys[i].key, key) == 0)
			return &sec->at[i];
	return &none;
}

/* The introspection client's secret: the file's first line. Errors name the key's line. */
static int
read_secret(struct loader *ld, struct config *cfg)
{
	const struct cfg_where *w = where_of(&cfg->auth, auth_keys, "client-secret-file");
	char line[1024];
	const char *why;
	FILE *f;
	size_t n;

	if ((f = fopen_regular(cfg->client_secret_file, &why)) == NULL) {
		lerr(ld, w->file, w->line, "client-secret-file: %s: %s", cfg->client_secret_file, why);
		return -1;
	}
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	fclose(f);
	n = strcspn(line, "\r\n");
	line[n] = '\0';
	if (n == 0) {
		lerr(ld, w->file, w->line, "client-secret-file: %s is empty", cfg->client_secret_file);
		return -1;
	}
	cfg->client_secret = strdup(line);
	secret_wipe(line, sizeof(line));
	return cfg->client_secret ? 0 : -1;
}

/* Header names the gateway sets itself on upstream requests, or that would change the
 * framing: an auth-header-file may not name them. */
static const char *const reserved_headers[] = {
	"accept", "connection", "content-length", "content-type", "expect", "host",
	"mcp-protocol-version", "mcp-session-id", "transfer-encoding", NULL
};

static int
is_tchar(char c)
{
	return isalnum((unsigned char)c) || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* An upstream's credentials: one header line "Name: value" (a final newline allowed).
 * Nothing of the file's content ever goes into an error message. */
static int
read_auth_header(struct loader *ld, struct cfg_upstream *u)
{
	const struct cfg_where *w = where_of(&u->s, upstream_keys, "auth-header-file");
	char raw[8192 + 2], name[64];
	size_t n, i, nlen, vstart;
	const char *why = NULL;
	FILE *f;

	if ((f = fopen_regular(u->auth_header_file, &why)) == NULL) {
		lerr(ld, w->file, w->line, "auth-header-file: %s: %s", u->auth_header_file, why);
		return -1;
	}
	n = fread(raw, 1, sizeof(raw) - 1, f);
	if (ferror(f))
		why = "cannot be read";
	fclose(f);
	if (n >= sizeof(raw) - 1)
		why = "longer than 8192 bytes";
	if (n > 0 && raw[n - 1] == '\n')
		n--;
	if (n > 0 && raw[n - 1] == '\r')
		n--;
	while (n > 0 && (raw[n - 1] == ' ' || raw[n - 1] == '\t'))
		n--;
	raw[n] = '\0';
	/* field-name = token (RFC 9110 §5.1), ":", optional blanks, a visible value. */
	for (nlen = 0; nlen < n && is_tchar(raw[nlen]); nlen++)
		;
	vstart = nlen + 1;
	while (vstart < n && (raw[vstart] == ' ' || raw[vstart] == '\t'))
		vstart++;
	if (!why && (nlen == 0 || nlen >= sizeof(name) || nlen >= n || raw[nlen] != ':' || vstart >= n))
		why = "expected one line 'Name: value'";
	for (i = vstart; !why && i < n; i++)	/* no control character but HTAB: no second line */
		if (((unsigned char)raw[i] < 0x20 && raw[i] != '\t') || (unsigned char)raw[i] == 0x7f)
			why = "expected one line 'Name: value'";
	if (!why) {
		for (i = 0; i < nlen; i++)
			name[i] = (char)tolower((unsigned char)raw[i]);
		name[nlen] = '\0';
		for (i = 0; reserved_headers[i]; i++)
			if (strcmp(name, reserved_headers[i]) == 0) {
				lerr(ld, w->file, w->line, "auth-header-file: %s: names %s, which the gateway sets itself",
				    u->auth_header_file, reserved_headers[i]);
				secret_wipe(raw, sizeof(raw));
				return -1;
			}
	}
	if (why) {
		lerr(ld, w->file, w->line, "auth-header-file: %s: %s", u->auth_header_file, why);
		secret_wipe(raw, sizeof(raw));
		return -1;
	}
	/* Stored as "Name: value" with exactly one blank. */
	if ((u->auth_header = malloc(nlen + 2 + (n - vstart) + 1)) != NULL)
		snprintf(u->auth_header, nlen + 2 + (n - vstart) + 1, "%.*s: %s", (int)nlen, raw, raw + vstart);
	secret_wipe(raw, sizeof(raw));
	if (u->auth_header == NULL) {
		lerr(ld, w->file, w->line, "out of memory");
		return -1;
	}
	return 0;
}

/* A 32-byte key shared by several hosts: 32 raw bytes, or 64 hex digits and a newline. */
static int
read_session_key(struct loader *ld, struct config *cfg)
{
	const struct cfg_where *w = where_of(&cfg->gateway, gateway_keys, "session-key-file");
	unsigned char raw[80];
	const char *why;
	size_t n, i;
	FILE *f;

	if ((f = fopen_regular(cfg->session_key_file, &why)) == NULL) {
		lerr(ld, w->file, w->line, "session-key-file: %s: %s", cfg->session_key_file, why);
		return -1;
	}
	n = fread(raw, 1, sizeof(raw), f);
	fclose(f);
	while (n > 32 && (raw[n - 1] == '\n' || raw[n - 1] == '\r'))
		n--;
	if (n == 32)
		memcpy(cfg->session_key, raw, 32);
	else if (n == 64) {
		for (i = 0; i < 32; i++)
			if (sscanf((const char *)raw + 2 * i, "%2hhx", &cfg->session_key[i]) != 1 ||
			    !isxdigit(raw[2 * i]) || !isxdigit(raw[2 * i + 1]))
				n = 0;
	}
	secret_wipe(raw, sizeof(raw));
	if (n != 32 && n != 64) {
		lerr(ld, w->file, w->line, "session-key-file: %s: expected 32 bytes or 64 hex digits",
		    cfg->session_key_file);
		return -1;
	}
	cfg->has_session_key = 1;
	return 0;
}

static int
derive(struct loader *ld, const char *path)
{
	struct config *cfg = ld->cfg;
	const char *rpath;
	size_t n, i;
	int bad = 0;

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
	if (strchr(rpath, '?')) {
		const struct cfg_where *w = where_of(&cfg->gateway, gateway_keys, "resource");

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
	if (cfg->client_secret_file && read_secret(ld, cfg) < 0)
		return -1;
	if (cfg->auth_ca_file && access(cfg->auth_ca_file, R_OK) < 0) {
		const struct cfg_where *w = where_of(&cfg->auth, auth_keys, "ca-file");

		lerr(ld, w->file, w->line, "ca-file: %s: %s", cfg->auth_ca_file, strerror(errno));
		return -1;
	}
	if (cfg->session_key_file && read_session_key(ld, cfg) < 0)
		return -1;
	for (i = 0; i < cfg->n_upstreams; i++)
		if (cfg->upstreams[i].auth_header_file && read_auth_header(ld, &cfg->upstreams[i]) < 0)
			bad = 1;
	if (bad)
		return -1;
	if (!cfg->name && (cfg->name = strdup("mcpgate")) == NULL)
		return -1;
	if (!cfg->version && (cfg->version = strdup("1.0.0")) == NULL)
		return -1;
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
				const struct cfg_where *w = where_of(&tn->s, tenant_keys, "groups");

				lerr(ld, w->file, w->line, "groups: no [group \"%s\"] or upstream group of that name", name);
			}
		}
	}
}

static void
section_defaults(struct config *cfg)
{
	size_t i;

	apply_defaults(cfg, &cfg->gateway, gateway_keys);
	apply_defaults(cfg, &cfg->auth, auth_keys);
	apply_defaults(cfg, &cfg->limits, limits_keys);
	for (i = 0; i < cfg->n_upstreams; i++)
		apply_defaults(&cfg->upstreams[i], &cfg->upstreams[i].s, upstream_keys);
	for (i = 0; i < cfg->n_groups; i++)
		apply_defaults(&cfg->groups[i], &cfg->groups[i].s, group_keys);
	for (i = 0; i < cfg->n_tenants; i++)
		apply_defaults(&cfg->tenants[i], &cfg->tenants[i].s, tenant_keys);
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
		snprintf(errs->msg[0], sizeof(errs->msg[0]), "%s: out of memory", path);
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
	if (nerrors(&ld) == 0) {
		section_defaults(cfg);
		check_refs(&ld);
	}
	if (nerrors(&ld) == 0)
		derive(&ld, path);
	*out = cfg;
	if (nerrors(&ld) > 0) {
		cfg->broken = 1;
		return -1;
	}
	return 0;
}

struct config *
config_ref(struct config *cfg)
{
	__atomic_add_fetch(&cfg->refs, 1, __ATOMIC_RELAXED);
	return cfg;
}

static void
free_section_values(void *base, const struct cfg_key *keys)
{
	size_t i;

	for (i = 0; keys[i].key; i++) {
		void *field = (char *)base + keys[i].offset;

		if (keys[i].type == T_STR || keys[i].type == T_URL)
			free(*(char **)field);
		else if (keys[i].type == T_LIST)
			strlist_free(field);
	}
}

void
config_unref(struct config *cfg)
{
	size_t i;

	if (cfg == NULL || __atomic_sub_fetch(&cfg->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	free_section_values(cfg, gateway_keys);
	free_section_values(cfg, auth_keys);
	free_section_values(cfg, limits_keys);
	for (i = 0; i < cfg->n_upstreams; i++) {
		free_section_values(&cfg->upstreams[i], upstream_keys);
		free(cfg->upstreams[i].s.name);
		if (cfg->upstreams[i].auth_header) {
			secret_wipe(cfg->upstreams[i].auth_header, strlen(cfg->upstreams[i].auth_header));
			free(cfg->upstreams[i].auth_header);
		}
	}
	for (i = 0; i < cfg->n_groups; i++) {
		free_section_values(&cfg->groups[i], group_keys);
		free(cfg->groups[i].s.name);
	}
	for (i = 0; i < cfg->n_tenants; i++) {
		free_section_values(&cfg->tenants[i], tenant_keys);
		free(cfg->tenants[i].s.name);
		free(cfg->tenants[i].listed);
	}
	free(cfg->upstreams);
	free(cfg->groups);
	free(cfg->tenants);
	secret_wipe(cfg->session_key, sizeof(cfg->session_key));
	free(cfg->origin);
	free(cfg->prm_url);
	if (cfg->client_secret) {
		secret_wipe(cfg->client_secret, strlen(cfg->client_secret));
		free(cfg->client_secret);
	}
	for (i = 0; i < cfg->n_files; i++)
		free(cfg->files[i].path);
	free(cfg->files);
	strlist_free(&cfg->include_globs);
	free(cfg);
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

		if (stat(f->path, &st) < 0 || st.st_ino != f->ino || st.st_dev != f->dev ||
		    st.st_size != f->size || st.st_mtim.tv_sec != f->mtime.tv_sec ||
		    st.st_mtim.tv_nsec != f->mtime.tv_nsec)
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

const struct cfg_tenant *
config_tenant(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->n_tenants; i++)
		if (strcmp(cfg->tenants[i].s.name, name) == 0)
			return &cfg->tenants[i];
	return NULL;
}

const struct cfg_where *
config_group_where(const struct cfg_group *g, const char *key)
{
	return where_of(&g->s, group_keys, key);
}

const struct cfg_where *
config_tenant_where(const struct cfg_tenant *t, const char *key)
{
	return where_of(&t->s, tenant_keys, key);
}

const struct cfg_upstream *
config_upstream(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; name && i < cfg->n_upstreams; i++)
		if (strcmp(cfg->upstreams[i].s.name, name) == 0)
			return &cfg->upstreams[i];
	return NULL;
}
