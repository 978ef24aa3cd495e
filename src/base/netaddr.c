/* netaddr — parse (inet_pton on a capped copy), match, format, and the X-Forwarded-For
 * walk. Every loop is bounded by a constant or by the bytes given. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "netaddr.h"

#define TEXT_MAX	64	/* "[" + 45 + "]:65535" is 53 */
#define ADDR_CHARS	"0123456789abcdefABCDEF:."

static const unsigned char v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

static int
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* A bare address: IPv6 when it holds a colon, else IPv4. *v4 says which. */
static int
parse_bare(const char *t, struct netaddr *a, int *v4)
{
	unsigned char b4[4];

	if (*t == '\0' || t[strspn(t, ADDR_CHARS)] != '\0')
		return -1;	/* a zone id ("%eth0"), blanks, anything inet_pton might take */
	*v4 = strchr(t, ':') == NULL;
	if (!*v4)
		return inet_pton(AF_INET6, t, a->b) == 1 ? 0 : -1;
	if (inet_pton(AF_INET, t, b4) != 1)
		return -1;
	memcpy(a->b, v4_mapped, sizeof(v4_mapped));
	memcpy(a->b + 12, b4, sizeof(b4));
	return 0;
}

/* A port after a colon: 1 to 5 digits, 0..65535. */
static int
port_ok(const char *p)
{
	size_t n = strspn(p, "0123456789");

	return n > 0 && n <= 5 && p[n] == '\0' && strtol(p, NULL, 10) <= 65535;
}

/* t (NUL-terminated, changed in place): the address with its brackets and port cut. */
static int
parse_text(char *t, struct netaddr *a)
{
	char *close, *colon;
	int v4;

	if (*t == '[') {
		if ((close = strchr(t, ']')) == NULL)
			return -1;
		*close = '\0';
		if ((close[1] == ':' && !port_ok(close + 2)) || (close[1] != ':' && close[1] != '\0'))
			return -1;
		return parse_bare(t + 1, a, &v4) == 0 && !v4 ? 0 : -1;
	}
	if ((colon = strchr(t, ':')) != NULL && strchr(colon + 1, ':') == NULL) {
		*colon = '\0';	/* one colon: IPv4 and a port */
		if (!port_ok(colon + 1))
			return -1;
		return parse_bare(t, a, &v4) == 0 && v4 ? 0 : -1;
	}
	return parse_bare(t, a, &v4);
}

int
netaddr_parse(const char *s, size_t len, struct netaddr *a)
{
	char t[TEXT_MAX + 1];
	struct netaddr got;

	while (len && is_blank(*s))
		s++, len--;
	while (len && is_blank(s[len - 1]))
		len--;
	if (len == 0 || len > TEXT_MAX || memchr(s, '\0', len))
		return -1;
	memcpy(t, s, len);
	t[len] = '\0';
	if (parse_text(t, &got) < 0)
		return -1;
	*a = got;
	return 0;
}

/* A prefix length: decimal, no sign or leading zero, at most max. */
static int
parse_bits(const char *p, unsigned max, unsigned *bits)
{
	size_t n = strspn(p, "0123456789");
	long v;

	if (n == 0 || n > 3 || p[n] != '\0' || (n > 1 && *p == '0'))
		return -1;
	if ((v = strtol(p, NULL, 10)) > (long)max)
		return -1;
	*bits = (unsigned)v;
	return 0;
}

/* a with every bit past the first bits cleared. */
static void
mask(const struct netaddr *a, unsigned bits, struct netaddr *out)
{
	unsigned i;

	for (i = 0; i < sizeof(a->b); i++)
		if (bits >= 8 * (i + 1))
			out->b[i] = a->b[i];
		else if (bits > 8 * i)
			out->b[i] = (unsigned char)(a->b[i] & (0xff00u >> (bits - 8 * i)));
		else
			out->b[i] = 0;
}

int
netaddr_parse_range(const char *s, struct netaddr_range *r)
{
	char t[TEXT_MAX + 1];
	const char *slash = strchr(s, '/');
	size_t len = slash ? (size_t)(slash - s) : strlen(s);
	struct netaddr a, m;
	unsigned bits;
	int v4;

	if (len > TEXT_MAX)
		return -1;
	memcpy(t, s, len);
	t[len] = '\0';
	if (parse_bare(t, &a, &v4) < 0)
		return -1;
	if (slash == NULL)
		bits = v4 ? 32 : 128;
	else if (parse_bits(slash + 1, v4 ? 32 : 128, &bits) < 0)
		return -1;
	if (v4)
		bits += 96;
	mask(&a, bits, &m);
	if (memcmp(&a, &m, sizeof(a)) != 0)
		return -1;	/* host bits set: "10.0.0.1/8" */
	r->net = a;
	r->bits = bits;
	return 0;
}

int
netaddr_in(const struct netaddr *a, const struct netaddr_range *r, size_t n)
{
	struct netaddr m;
	size_t i;

	for (i = 0; i < n; i++) {
		if (r[i].bits > 128)
			continue;
		mask(a, r[i].bits, &m);
		if (memcmp(&m, &r[i].net, sizeof(m)) == 0)
			return 1;
	}
	return 0;
}

int
netaddr_is_v4(const struct netaddr *a)
{
	return memcmp(a->b, v4_mapped, sizeof(v4_mapped)) == 0;
}

int
netaddr_client(const char *remote, const char *xff, const struct netaddr_range *trusted,
    size_t n, struct netaddr *out)
{
	struct netaddr cur, e;
	const char *end, *p;
	size_t k;

	memset(out, 0, sizeof(*out));
	if (remote == NULL || netaddr_parse(remote, strlen(remote), &cur) < 0)
		return -1;
	if (xff != NULL && netaddr_in(&cur, trusted, n)) {
		end = xff + strlen(xff);
		for (k = 0; k < NETADDR_XFF_MAX; k++) {
			for (p = end; p > xff && p[-1] != ',' && end - p <= NETADDR_XFF_ENTRY_MAX; p--)
				;
			if (end - p > NETADDR_XFF_ENTRY_MAX || netaddr_parse(p, (size_t)(end - p), &e) < 0)
				break;	/* malformed: the hop to its right is the client */
			cur = e;
			if (!netaddr_in(&e, trusted, n) || p == xff)
				break;
			end = p - 1;
		}
	}
	*out = cur;
	return 0;
}

/* RFC 5952: lowercase hex groups without leading zeros, the longest run of two or
 * more zero groups (the first of equal runs) as "::". */
static void
format_v6(const unsigned char *b, char *out, size_t n)
{
	unsigned g[8], i, run = 0, best = 0, at = 8;
	size_t len = 0;

	for (i = 0; i < 8; i++) {
		g[i] = (unsigned)b[2 * i] << 8 | b[2 * i + 1];
		run = g[i] == 0 ? run + 1 : 0;
		if (run > best && run >= 2) {
			best = run;
			at = i + 1 - run;
		}
	}
	out[0] = '\0';
	for (i = 0; i < 8 && len < n; i++) {
		if (i == at) {
			len += (size_t)snprintf(out + len, n - len, "::");
			i += best - 1;
			continue;
		}
		len += (size_t)snprintf(out + len, n - len, "%s%x",
		    i == 0 || i == at + best ? "" : ":", g[i]);
	}
}

void
netaddr_format(const struct netaddr *a, char *out, size_t n)
{
	if (n == 0)
		return;
	if (n < NETADDR_TEXT_MAX)
		out[0] = '\0';
	else if (netaddr_is_v4(a))
		snprintf(out, n, "%u.%u.%u.%u", a->b[12], a->b[13], a->b[14], a->b[15]);
	else
		format_v6(a->b, out, n);
}

void
netaddr_limit_key(const struct netaddr *a, struct netaddr *key)
{
	if (netaddr_is_v4(a))
		*key = *a;
	else
		mask(a, 64, key);
}
