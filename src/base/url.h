/* url — the few URL operations the gateway needs (absolute http/https URLs only). */
#ifndef GW_URL_H
#define GW_URL_H

/* 0 when s is an absolute http:// or https:// URL with a host, no fragment and no
 * characters that must be escaped; -1 otherwise. */
int url_check(const char *s);
/* scheme://host[:port] of url, lowercased, default port dropped (new string, or
 * NULL); *path_out points at the rest of url. url must pass url_check. */
char *url_origin(const char *url, const char **path_out);
/* Same URL, ignoring one trailing slash on either side (as the MCP SDK does for
 * audiences, and RFC 8414 issuers are compared). */
int url_same(const char *a, const char *b);
/* 1 when a names the resource b (RFC 9449's htu): a's query and fragment ignored,
 * scheme and host compared without case, a default port as none, the path exactly but
 * for one trailing slash ("" as "/"). b must pass url_check; a anything. */
int url_same_resource(const char *a, const char *b);

/* A Redis URL's parts. */
struct url_redis {
	char *host;		/* a name, an IPv4 address or an IPv6 address (no brackets) */
	int port;
	int db;
	char *user;		/* ACL user (Redis 6+); NULL: AUTH with the password alone */
	char *password;		/* wiped on free; NULL: no AUTH */
};
/* redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] (user and password percent-decoded; the
 * last '@' ends them; a host in brackets is an IPv6 address) into r: NULL, or why not
 * (r then holds nothing). Free r with url_redis_free. */
const char *url_redis_parse(const char *url, struct url_redis *r);
void url_redis_free(struct url_redis *r);

#endif
