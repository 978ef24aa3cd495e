/* url — the few URL operations the gateway needs (absolute http/https URLs only). */
#ifndef GW_URL_H
#define GW_URL_H

#include <stddef.h>

#include "err.h"

/* 0 when s is an absolute http:// or https:// URL with a host, no fragment and no
 * characters that must be escaped; -1 otherwise. */
int url_check(const char *s);
/* scheme://host[:port] of url, lowercased, default port dropped (new string, or
 * NULL); *path_out points at the rest of url. url must pass url_check. */
char *url_origin(const char *url, const char **path_out);
/* "host:port" of an http:// or https:// URL for messages (the scheme's port when none
 * is written; an IPv6 address in brackets), in out (truncated to n): never its
 * userinfo, path or query, which may carry secrets. "an unparsable URL" for anything
 * else. */
void url_host_port(const char *url, char *out, size_t n);
/* Same URL, ignoring one trailing slash on either side (as the MCP SDK does for
 * audiences, and RFC 8414 issuers are compared). */
int url_same(const char *a, const char *b);
/* 1 when a names the resource b (RFC 9449's htu): a's query and fragment ignored,
 * scheme and host compared without case, a default port as none, the path exactly but
 * for one trailing slash ("" as "/"). b must pass url_check; a anything. */
int url_same_resource(const char *a, const char *b);

/* Why a resource URI (or URI template) could name one thing to the gateway, which
 * decides on it as a string (the policy's globs), and another to an upstream, which
 * decodes its escapes and resolves its path: NULL when it cannot, else the reason. It
 * cannot when it has no dot segment ("." or "..", also percent-encoded, between any
 * two of '/', '?', '#', ';' and the ends, raw or encoded), no backslash (raw or
 * encoded: a path separator to some), no encoded '/', no control character (raw or
 * encoded), and its escapes decode to valid UTF-8 (no overlong '.' or '/'). */
const char *url_resource_ambiguous(const char *uri);

/* The value of parameter name in an application/x-www-form-urlencoded query (a request's
 * QUERY_STRING; NULL: none), decoded ('+' a blank, %XX a byte) into out (outlen bytes,
 * NUL-terminated): 1 found, 0 absent, -1 when the query names it twice (which one an
 * authorization server meant is not for the gateway to guess), an escape is broken, the
 * value decodes to a control character or does not fit. */
int url_query_param(const char *query, const char *name, char *out, size_t outlen);

/* A Redis URL's parts: a TCP endpoint (host, port) or a unix socket (path). */
struct url_redis {
	char *host;		/* a name, an IPv4 address or an IPv6 address (no brackets); NULL with path */
	int port;		/* 0 with path */
	char *path;		/* a unix socket (absolute, at most URL_REDIS_PATH_MAX bytes); NULL with host */
	int db;
	char *user;		/* ACL user (Redis 6+); NULL: AUTH with the password alone */
	char *password;		/* wiped on free; NULL: no AUTH */
};
#define URL_REDIS_PATH_MAX	107	/* sizeof(sockaddr_un.sun_path) on Linux, less its NUL */
#define URL_REDIS_DB_MAX	100000
/* redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] (a host in brackets is an IPv6 address), or
 * unix://[[USER]:PASSWORD@]/PATH[?db=DB] (also spelled redis+unix://; PATH absolute), into
 * r: 0, or -1 with err (GW_ECONFIG: why not; r then holds nothing). User, password and
 * path are percent-decoded; the last '@' before the first '/' ends the credentials. Free
 * r with url_redis_free. */
int url_redis_parse(const char *url, struct url_redis *r, struct gw_error *err);
/* Where r points, for people: "HOST port PORT" or "unix socket PATH" (never the
 * credentials), in out (truncated to n). */
void url_redis_where(const struct url_redis *r, char *out, size_t n);
void url_redis_free(struct url_redis *r);

#endif
