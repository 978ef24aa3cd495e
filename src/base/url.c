/* url — check, origin, loose equality, the same resource; the Redis store's URL. */
#include "autoconf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

void
url_host_port(const char *url, char *out, size_t n)
{
	const char *auth, *end, *at, *host, *port = NULL;
	int https;
	size_t hl;

	if (url == NULL || (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0)) {
		snprintf(out, n, "an unparsable URL");
		return;
	}
	https = tolower((unsigned char)url[4]) == 's';
	auth = url + (https ? 8 : 7);
	end = auth + strcspn(auth, "/?#");
	for (host = auth; (at = memchr(host, '@', (size_t)(end - host))) != NULL; host = at + 1)
		;	/* the last '@' ends the userinfo */
	if (*host == '[' && (at = memchr(host, ']', (size_t)(end - host))) != NULL)
		hl = (size_t)(at - host) + 1;
	else
		hl = strcspn(host, ":/?#");
	if (host + hl < end && host[hl] == ':' && host + hl + 1 < end)
		port = host + hl + 1;
	if (hl == 0 || hl > (size_t)(end - host))
		snprintf(out, n, "an unparsable URL");
	else if (port)
		snprintf(out, n, "%.*s:%.*s", (int)hl, host, (int)(end - port), port);
	else
		snprintf(out, n, "%.*s:%s", (int)hl, host, https ? "443" : "80");
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

static int
hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	    c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The byte at p as an upstream decodes it (a "%XX" escape or itself); *len is how many
 * characters of p it takes, *escaped whether it was an escape. */
static unsigned
decoded(const unsigned char *p, size_t *len, int *escaped)
{
	int hi, lo;

	if (p[0] == '%' && (hi = hexval(p[1])) >= 0 && (lo = hexval(p[2])) >= 0) {
		*len = 3, *escaped = 1;
		return (unsigned)(hi << 4 | lo);
	}
	*len = 1, *escaped = 0;
	return p[0];
}

const char *
url_resource_ambiguous(const char *uri)
{
	const unsigned char *p = (const unsigned char *)uri;
	size_t seg = 0, dots = 0, len, len2;
	unsigned need = 0, c, next;	/* need: UTF-8 continuation bytes still to come */
	int escaped, escaped2;

	for (;; p += len) {
		c = decoded(p, &len, &escaped);
		if (escaped && (c < 0x20 || c == 0x7f))
			return "a control character";	/* %00 is not the end */
		if (need && (c & 0xc0) != 0x80)
			return "an escape that does not decode to UTF-8";
		if (c == '\0' || strchr("/?#;", (int)c)) {	/* a segment ends */
			if (c == '/' && escaped)
				return "an encoded '/'";
			if (seg > 0 && seg == dots && dots <= 2)
				return "a dot segment";
			if (c == '\0')
				return NULL;
			seg = dots = 0;
			continue;
		}
		if (c < 0x20 || c == 0x7f)
			return "a control character";
		if (c == '\\')
			return "a backslash";
		if (need) {
			need--;
		} else if (c >= 0x80) {	/* a lead byte, and no overlong form */
			next = decoded(p + len, &len2, &escaped2);
			if (c < 0xc2 || c > 0xf4 || (c == 0xe0 && next < 0xa0) || (c == 0xf0 && next < 0x90))
				return "an escape that does not decode to UTF-8";
			need = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
		}
		seg++;
		dots += c == '.';
	}
}

/* One parameter's value (n bytes at v) decoded into out: 0, or -1. */
static int
query_decode(const char *v, size_t n, char *out, size_t outlen)
{
	size_t i, k = 0;
	int c;

	for (i = 0; i < n; i++) {
		c = (unsigned char)v[i];
		if (c == '+') {
			c = ' ';
		} else if (c == '%') {
			if (i + 2 >= n || hexval(v[i + 1]) < 0 || hexval(v[i + 2]) < 0)
				return -1;
			c = hexval(v[i + 1]) << 4 | hexval(v[i + 2]);
			i += 2;
		}
		if (c < 0x20 || c == 0x7f || k + 1 >= outlen)
			return -1;
		out[k++] = (char)c;
	}
	out[k] = '\0';
	return 0;
}

int
url_query_param(const char *query, const char *name, char *out, size_t outlen)
{
	size_t nl = strlen(name), len;
	const char *p = query, *amp;
	int found = 0;

	if (outlen == 0)
		return -1;
	out[0] = '\0';
	while (p && *p) {
		amp = strchr(p, '&');
		len = amp ? (size_t)(amp - p) : strlen(p);
		if (len > nl && strncmp(p, name, nl) == 0 && p[nl] == '=' &&
		    (found++ || query_decode(p + nl + 1, len - nl - 1, out, outlen) < 0)) {
			out[0] = '\0';
			return -1;
		}
		p = amp ? amp + 1 : NULL;
	}
	return found;
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
	free(r->path);
	free(r->user);
	if (r->password) {
		secret_wipe(r->password, strlen(r->password));
		free(r->password);
	}
	memset(r, 0, sizeof(*r));
}

void
url_redis_where(const struct url_redis *r, char *out, size_t n)
{
	if (r->path)
		snprintf(out, n, "unix socket %s", r->path);
	else
		snprintf(out, n, "%s port %d", r->host ? r->host : "(none)", r->port);
}

/* [[USER]:PASSWORD@] at the start of p..end (it ends at the last '@': a password may
 * hold one) into r; *rest: what follows it (p when there is none). */
static const char *
parse_credentials(const char *p, const char *end, struct url_redis *r, const char **rest)
{
	const char *at, *colon;

	*rest = p;
	if ((at = memrchr(p, '@', (size_t)(end - p))) == NULL)
		return NULL;
	if ((colon = memchr(p, ':', (size_t)(at - p))) == NULL)
		return "the credentials of a Redis URL are [USER]:PASSWORD";
	if (colon > p && (r->user = url_part(p, (size_t)(colon - p))) == NULL)
		return "out of memory";
	if ((r->password = url_part(colon + 1, (size_t)(at - colon - 1))) == NULL)
		return "out of memory";
	*rest = at + 1;
	return NULL;
}

/* redis://: the TCP form, from after the scheme. */
static const char *
parse_tcp(const char *p, struct url_redis *r)
{
	const char *host, *end, *hend, *why;
	long port = 6379, db = 0;
	char *e;

	end = p + strcspn(p, "/");
	if ((why = parse_credentials(p, end, r, &p)) != NULL)
		return why;
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
		if (!isdigit((unsigned char)end[1]) || *e || db < 0 || db > URL_REDIS_DB_MAX)
			return "the database must be a number (0, 1, ...)";
	}
	if ((r->host = strndup(host, (size_t)(hend - host))) == NULL)
		return "out of memory";
	r->port = (int)port;
	r->db = (int)db;
	return NULL;
}

/* The characters a path may hold as they are (RFC 3986 pchar and '/'); others are
 * percent-encoded. */
static const char path_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    "-._~!$&'()*+,;=:@/%";

/* ?db=DB of a unix:// URL (q after the '?'): the only parameter, once. */
static const char *
parse_query(const char *q, struct url_redis *r)
{
	const char *seg, *next;
	size_t n, digits;
	int seen = 0;
	long db;

	for (seg = q; ; seg = next + 1) {
		next = seg + strcspn(seg, "&");
		n = (size_t)(next - seg);
		if (n > 3 && strncmp(seg, "db=", 3) == 0) {
			digits = strspn(seg + 3, "0123456789");
			if (seen || digits != n - 3 || digits > 6)
				return "db= takes one number (0, 1, ...), once";
			seen = 1;
			db = strtol(seg + 3, NULL, 10);
			if (db > URL_REDIS_DB_MAX)
				return "the database must be a number (0, 1, ...)";
			r->db = (int)db;
		} else if ((n >= 9 && strncmp(seg, "password=", 9) == 0) || (n >= 5 && strncmp(seg, "pass=", 5) == 0)) {
			return "the password of a unix:// URL goes before the '@': unix://:PASSWORD@/PATH";
		} else {
			return "a unix:// URL takes one parameter, db=N";
		}
		if (*next == '\0')
			return NULL;
	}
}

/* unix:// (or redis+unix://): a unix socket, from after the scheme. */
static const char *
parse_unix(const char *p, struct url_redis *r)
{
	const char *end = p + strcspn(p, "/"), *q, *why;
	size_t i, n;

	if ((why = parse_credentials(p, end, r, &p)) != NULL)
		return why;
	if (p != end)
		return "a unix:// URL names no host: unix:///PATH (three slashes), or unix://:PASSWORD@/PATH";
	if (*end != '/')
		return "a unix:// URL needs the socket's absolute path: unix:///run/redis/redis.sock";
	q = end + strcspn(end, "?");
	if (strspn(end, path_chars) < (size_t)(q - end))
		return "the socket's path holds a character to percent-encode";
	if ((r->path = url_part(end, (size_t)(q - end))) == NULL)
		return "out of memory";
	n = strlen(r->path);
	if (n < 2 || r->path[n - 1] == '/')
		return "a unix:// URL needs the socket's path, not a directory";
	if (n > URL_REDIS_PATH_MAX)
		return "the socket's path is longer than a unix socket's 107 bytes";
	for (i = 0; i < n; i++)
		if ((unsigned char)r->path[i] < 0x20 || r->path[i] == 0x7f)
			return "the socket's path holds a control character";
	return *q == '?' ? parse_query(q + 1, r) : NULL;
}

static const char *
parse_redis(const char *url, struct url_redis *r)
{
	if (strncmp(url, "rediss://", 9) == 0)
		return "rediss:// (TLS) is not available: this build's hiredis has no TLS; "
		    "reach Redis over loopback, a unix socket or a private network";
	if (strncmp(url, "redis://", 8) == 0)
		return parse_tcp(url + 8, r);
	if (strncmp(url, "unix://", 7) == 0)
		return parse_unix(url + 7, r);
	if (strncmp(url, "redis+unix://", 13) == 0)
		return parse_unix(url + 13, r);
	return "expected shm, redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] or unix://[[USER]:PASSWORD@]/PATH[?db=DB]";
}

int
url_redis_parse(const char *url, struct url_redis *r, struct gw_error *err)
{
	const char *why;

	memset(r, 0, sizeof(*r));
	if ((why = parse_redis(url, r)) == NULL)
		return 0;
	url_redis_free(r);
	gw_error_set(err, strcmp(why, "out of memory") == 0 ? GW_EINTERNAL : GW_ECONFIG, "%s", why);
	return -1;
}
