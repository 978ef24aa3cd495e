/* url — check, origin, loose equality, the same resource; the Redis store's URL. */
#include "autoconf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secret.h"
#include "url.h"

int
url_check(const char *s)
{
	const char *host;

	if (strncmp(s, "https://", 8) == 0)
		host = s + 8;
	else if (strncmp(s, "http://", 7) == 0)
		host = s + 7;
	else
		return -1;
	if (!*host || strchr("/?:", *host) || strchr(s, '#') || strpbrk(s, " \t\"<>\\^`{|}"))
		return -1;	/* no host: "http://", "http:///x", "http://?q", "http://:80" */
	return 0;
}

char *
url_origin(const char *url, const char **path_out)
{
	const char *host = strstr(url, "://") + 3, *end;
	int https = strncmp(url, "https", 5) == 0;
	size_t n, i;
	char *o;

	end = host + strcspn(host, "/?");
	*path_out = end;
	n = (size_t)(end - url);
	if ((o = malloc(n + 1)) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		o[i] = (char)tolower((unsigned char)url[i]);
	o[n] = '\0';
	if ((https && n > 4 && strcmp(o + n - 4, ":443") == 0) ||
	    (!https && n > 3 && strcmp(o + n - 3, ":80") == 0))
		*strrchr(o, ':') = '\0';
	return o;
}

int
url_same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la && a[la - 1] == '/')
		la--;
	if (lb && b[lb - 1] == '/')
		lb--;
	return la == lb && strncmp(a, b, la) == 0;
}

/* The length of path p without one trailing slash. */
static size_t
path_len(const char *p)
{
	size_t n = strlen(p);

	return n && p[n - 1] == '/' ? n - 1 : n;
}

int
url_same_resource(const char *a, const char *b)
{
	const char *pa, *pb;
	char *ca, *oa = NULL, *ob = NULL;
	int same = 0;
	size_t i;

	if ((ca = strndup(a, strcspn(a, "?#"))) == NULL)
		return 0;
	for (i = 0; ca[i] && ca[i] != ':'; i++)	/* the scheme, in any case */
		ca[i] = (char)tolower((unsigned char)ca[i]);
	if (url_check(ca) == 0 && url_check(b) == 0 && (oa = url_origin(ca, &pa)) != NULL &&
	    (ob = url_origin(b, &pb)) != NULL)
		same = strcmp(oa, ob) == 0 && path_len(pa) == path_len(pb) && strncmp(pa, pb, path_len(pa)) == 0;
	free(ca);
	free(oa);
	free(ob);
	return same;
}

/* A percent-decoded copy of s[0..n) (a URL's user or password), or NULL. */
static char *
url_part(const char *s, size_t n)
{
	char *out = malloc(n + 1), *o = out;
	unsigned v;
	size_t i;

	if (out == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) &&
		    isxdigit((unsigned char)s[i + 2]) && sscanf(s + i + 1, "%2x", &v) == 1 && v != 0) {
			*o++ = (char)v;
			i += 2;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}

void
url_redis_free(struct url_redis *r)
{
	free(r->host);
	free(r->user);
	if (r->password) {
		secret_wipe(r->password, strlen(r->password));
		free(r->password);
	}
	memset(r, 0, sizeof(*r));
}

static const char *
parse_redis(const char *url, struct url_redis *r)
{
	const char *p, *at, *colon, *host, *end, *hend;
	long port = 6379, db = 0;
	char *e;

	if (strncmp(url, "rediss://", 9) == 0)
		return "rediss:// (TLS) is not available: this build's hiredis has no TLS; "
		    "reach Redis over loopback or a private network";
	if (strncmp(url, "redis://", 8) != 0)
		return "expected shm or redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]";
	p = url + 8;
	end = p + strcspn(p, "/");
	if ((at = memrchr(p, '@', (size_t)(end - p))) != NULL) {	/* a password may hold '@' */
		if ((colon = memchr(p, ':', (size_t)(at - p))) == NULL)
			return "the credentials of a redis:// URL are [USER]:PASSWORD";
		if (colon > p && (r->user = url_part(p, (size_t)(colon - p))) == NULL)
			return "out of memory";
		if ((r->password = url_part(colon + 1, (size_t)(at - colon - 1))) == NULL)
			return "out of memory";
		p = at + 1;
	}
	host = p;
	if (*host == '[') {
		if ((hend = memchr(host, ']', (size_t)(end - host))) == NULL)
			return "an IPv6 host is written [ADDRESS]";
		host++;
		p = hend + 1;
	} else {
		hend = host + strcspn(host, ":/");
		p = hend;
	}
	if (hend == host)
		return "a redis:// URL needs a host";
	if (strspn(host, *(host - 1) == '[' ? "0123456789abcdefABCDEF:." :
	    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-") < (size_t)(hend - host))
		return "the host is a name, an IPv4 address or [an IPv6 address]";
	if (*p == ':') {
		port = strtol(p + 1, &e, 10);
		if (e == p + 1 || e != end || port < 1 || port > 65535)
			return "the port must be 1 to 65535";
		p = e;
	}
	if (p != end)
		return "unexpected text after the host";
	if (*end == '/' && end[1]) {
		db = strtol(end + 1, &e, 10);
		if (!isdigit((unsigned char)end[1]) || *e || db < 0 || db > 100000)
			return "the database must be a number (0, 1, ...)";
	}
	if ((r->host = strndup(host, (size_t)(hend - host))) == NULL)
		return "out of memory";
	r->port = (int)port;
	r->db = (int)db;
	return NULL;
}

const char *
url_redis_parse(const char *url, struct url_redis *r)
{
	const char *why;

	memset(r, 0, sizeof(*r));
	if ((why = parse_redis(url, r)) != NULL)
		url_redis_free(r);
	return why;
}
