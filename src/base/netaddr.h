/* netaddr — IP addresses, CIDR ranges, and the client of a request behind trusted
 * proxies (X-Forwarded-For), for limits by address. An address is always its 16-byte
 * IPv6 form: IPv4 as IPv4-mapped (::ffff:a.b.c.d), so that one range list and one key
 * space hold both. Pure: no allocation, no clock, no DNS. */
#ifndef GW_NETADDR_H
#define GW_NETADDR_H

#include <stddef.h>

#define NETADDR_TEXT_MAX	46	/* netaddr_format's longest text, NUL included */
#define NETADDR_XFF_MAX		32	/* X-Forwarded-For entries walked, from the right */
#define NETADDR_XFF_ENTRY_MAX	128	/* bytes of one entry (blanks included); longer is malformed */

struct netaddr {
	unsigned char b[16];
};

/* bits 0..128, counted on the 16-byte form: an IPv4 /8 is bits 104. */
struct netaddr_range {
	struct netaddr net;
	unsigned bits;
};

/* One address in the len bytes of s (no NUL needed): dotted IPv4 (four decimal parts,
 * no leading zeros), IPv6 text (RFC 4291, "::" and an embedded IPv4 included; a zone
 * id is refused), and the forms proxies write into X-Forwarded-For: "1.2.3.4:5678",
 * "[2001:db8::1]" and "[2001:db8::1]:443" (port 0..65535). Blanks (SP, HTAB) around
 * are skipped. 0, or -1 when it is not an address (a is then left as it was). */
int netaddr_parse(const char *s, size_t len, struct netaddr *a);
/* "10.0.0.0/8", "2001:db8::/32", or a bare address (/32, /128): no blanks, brackets or
 * port. An IPv4 prefix is 0..32 (0.0.0.0/0 holds every IPv4 address and nothing
 * else), an IPv6 one 0..128 (::/0 holds everything). Host bits set beyond the prefix
 * are refused, so that a typo is a configuration error. 0 or -1. */
int netaddr_parse_range(const char *s, struct netaddr_range *r);
/* 1 when a is in one of r[0..n), else 0. */
int netaddr_in(const struct netaddr *a, const struct netaddr_range *r, size_t n);
/* 1 when a is IPv4 (IPv4-mapped), else 0. */
int netaddr_is_v4(const struct netaddr *a);
/* The client of a request: remote (REMOTE_ADDR), unless remote is in trusted[0..n)
 * and xff (the X-Forwarded-For header, NULL when absent) is given. Then xff's
 * comma-separated entries are walked from the right: the first one not in trusted is
 * the client; when every entry is trusted, the left-most; a malformed or empty entry
 * stops the walk, and the address to its right (the last trusted hop, or remote) is
 * the client. At most the last NETADDR_XFF_MAX entries are walked: past them, the
 * left-most walked is the client. 0 with *out, or -1 when remote is not an address
 * (*out then all zeros). */
int netaddr_client(const char *remote, const char *xff, const struct netaddr_range *trusted,
    size_t n, struct netaddr *out);
/* The text of a into out (n bytes, NETADDR_TEXT_MAX is enough; a shorter buffer gets
 * ""): dotted IPv4 for an IPv4-mapped address, else RFC 5952 IPv6 (lowercase, the
 * longest run of two or more zero groups, the first of equals, as "::"). */
void netaddr_format(const struct netaddr *a, char *out, size_t n);
/* The rate-limit key of a client: an IPv4 address as it is, an IPv6 one masked to its
 * /64 (a host holds a whole /64). */
void netaddr_limit_key(const struct netaddr *a, struct netaddr *key);

#endif
