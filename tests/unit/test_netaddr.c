/* Unit tests: addresses, ranges, the client behind trusted proxies, limit keys
 * (src/base/netaddr.c). Tables: each row a text and what it must give. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "netaddr.h"
#include "tap.h"

/* A row of the tables that turn one text into another: the text in, the text it must
 * give (NULL: refused). */
struct row {
	const char *in, *want;
};

/* The text of an address, for is_str. */
static const char *
text(const struct netaddr *a)
{
	static char t[NETADDR_TEXT_MAX];

	netaddr_format(a, t, sizeof(t));
	return t;
}

/* s for a test's name: control characters (tabs, a newline) as '?'. */
static const char *
shown(const char *s)
{
	static char t[256];
	size_t i;

	for (i = 0; s[i] && i < sizeof(t) - 1; i++)
		t[i] = (unsigned char)s[i] < 0x20 ? '?' : s[i];
	t[i] = '\0';
	return t;
}

/* What proxies and servers write, and what it reads as (NULL: refused). */
static void
test_parse(void)
{
	static const struct row rows[] = {
		{ "1.2.3.4", "1.2.3.4" },
		{ "0.0.0.0", "0.0.0.0" },
		{ "255.255.255.255", "255.255.255.255" },
		{ "1.2.3.4:5678", "1.2.3.4" },
		{ "1.2.3.4:0", "1.2.3.4" },
		{ "1.2.3.4:65535", "1.2.3.4" },
		{ " \t1.2.3.4 ", "1.2.3.4" },
		{ "::1", "::1" },
		{ "::", "::" },
		{ "2001:DB8::1", "2001:db8::1" },
		{ "2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1" },
		{ "[2001:db8::1]", "2001:db8::1" },
		{ "[2001:db8::1]:443", "2001:db8::1" },
		{ "\t[::1]:8080 ", "::1" },
		{ "::ffff:1.2.3.4", "1.2.3.4" },
		{ "[::ffff:10.0.0.1]:80", "10.0.0.1" },
		{ "64:ff9b::192.0.2.33", "64:ff9b::c000:221" },
		{ "", NULL },
		{ "   ", NULL },
		{ "garbage", NULL },
		{ "1.2.3", NULL },
		{ "1.2.3.4.5", NULL },
		{ "1.2.3.256", NULL },
		{ "01.2.3.4", NULL },
		{ "0x7f.0.0.1", NULL },
		{ "127.1", NULL },
		{ "1.2.3.4 5", NULL },
		{ "::1%eth0", NULL },
		{ "[fe80::1%25eth0]", NULL },
		{ "fe80::1%1", NULL },
		{ "[::1", NULL },
		{ "::1]", NULL },
		{ "[::1]x", NULL },
		{ "[::1]:", NULL },
		{ "[::1]:99999", NULL },
		{ "[1.2.3.4]", NULL },
		{ "[1.2.3.4]:80", NULL },
		{ "1.2.3.4:", NULL },
		{ "1.2.3.4:99999", NULL },
		{ "1.2.3.4:123456", NULL },
		{ "1.2.3.4:000080", NULL },
		{ "1.2.3.4:-1", NULL },
		{ "1.2.3.4:+80", NULL },
		{ ":80", NULL },
		{ "::1:80:", NULL },
		{ "1:2:3:4:5:6:7:8:9", NULL },
		{ "1::2::3", NULL },
		{ "2001:db8::g", NULL },
		{ "1.2.3.4\n", NULL },
		{ "[::1] :80", NULL },
		{ "1111:2222:3333:4444:5555:6666:7777:8888:9999:aaaa:bbbb:cccc:dddd:eeee:ffff", NULL },
		{ "                                                                           1.2.3.4",
		    "1.2.3.4" },
		{ "0000000000000000000000000000000000000000000000000000000000000000000000::1", NULL },
	};
	struct netaddr a;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		memset(&a, 0xaa, sizeof(a));
		rc = netaddr_parse(rows[i].in, strlen(rows[i].in), &a);
		if (rows[i].want == NULL)
			ok(rc == -1 && a.b[0] == 0xaa && a.b[15] == 0xaa,
			    "refused, a untouched: \"%s\"", shown(rows[i].in));
		else if (is_int(rc, 0, "parses: \"%s\"", shown(rows[i].in)))
			is_str(text(&a), rows[i].want, "… as %s", rows[i].want);
	}
}

/* len, not a NUL, ends the text; a NUL within it is refused. */
static void
test_parse_len(void)
{
	struct netaddr a, b;

	ok(netaddr_parse("1.2.3.4xyz", 7, &a) == 0 && strcmp(text(&a), "1.2.3.4") == 0,
	    "the first len bytes only");
	ok(netaddr_parse("[::1]:443, 10.0.0.1", 9, &a) == 0 && strcmp(text(&a), "::1") == 0,
	    "an entry of a longer header");
	ok(netaddr_parse("1.2.3.4\0", 8, &a) == -1, "a NUL inside len is refused");
	ok(netaddr_parse("1.2.3.4", 0, &a) == -1, "no bytes: refused");
	ok(netaddr_parse("1.2.3.45", 7, &a) == 0 && strcmp(text(&a), "1.2.3.4") == 0,
	    "cut short by len: the address in the bytes given");
	ok(netaddr_parse("1.2.3.4", 6, &a) == -1, "cut short in a bad place: refused");
	ok(netaddr_parse("1.2.3.4", 7, &a) == 0 && netaddr_parse("::ffff:1.2.3.4", 14, &b) == 0 &&
	    memcmp(&a, &b, sizeof(a)) == 0, "IPv4 is stored IPv4-mapped");
	ok(netaddr_is_v4(&a) && a.b[10] == 0xff && a.b[11] == 0xff && a.b[12] == 1 && a.b[15] == 4,
	    "… ::ffff:1.2.3.4, bytes in network order");
	ok(netaddr_parse("::1", 3, &b) == 0 && !netaddr_is_v4(&b) && b.b[15] == 1, "::1 is not IPv4");
}

/* RFC 5952 text, whatever the C library's inet_ntop would print. */
static void
test_format(void)
{
	static const struct row rows[] = {
		{ "2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1" },	/* the first of equal runs */
		{ "2001:db8:0:0:0:1:0:0", "2001:db8::1:0:0" },	/* the longest run */
		{ "2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1" },	/* one zero group stays */
		{ "1:0:0:0:0:0:0:0", "1::" },
		{ "0:0:0:0:0:0:0:1", "::1" },
		{ "0:0:0:0:0:0:2:3", "::2:3" },	/* not "::0.2.0.3" */
		{ "::102:304", "::102:304" },	/* IPv4-compatible: hex, not dotted */
		{ "ABCD:EF01:2345:6789:ABCD:EF01:2345:6789", "abcd:ef01:2345:6789:abcd:ef01:2345:6789" },
		{ "::ffff:0:0", "0.0.0.0" },
		{ "::fffe:1.2.3.4", "::fffe:102:304" },
	};
	struct netaddr a;
	char small[NETADDR_TEXT_MAX - 1] = "x", none[1] = "x";
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (is_int(netaddr_parse(rows[i].in, strlen(rows[i].in), &a), 0, "parses: %s", rows[i].in))
			is_str(text(&a), rows[i].want, "formats as %s", rows[i].want);
	netaddr_parse("1.2.3.4", 7, &a);
	netaddr_format(&a, small, sizeof(small));
	is_str(small, "", "a buffer under NETADDR_TEXT_MAX gets \"\"");
	netaddr_format(&a, none, 0);
	is_int(none[0], 'x', "no buffer at all: nothing written");
}

/* Ranges: bits on the 16-byte form, host bits refused, no brackets or ports. */
static void
test_range(void)
{
	static const struct {
		const char *in;
		int bits;	/* -1: refused */
	} rows[] = {
		{ "10.0.0.0/8", 104 }, { "0.0.0.0/0", 96 }, { "1.2.3.4", 128 }, { "1.2.3.4/32", 128 },
		{ "192.168.1.128/25", 121 }, { "2001:db8::/32", 32 }, { "::/0", 0 }, { "::1", 128 },
		{ "::1/128", 128 }, { "fd00::/8", 8 }, { "::ffff:10.0.0.0/104", 104 },
		{ "10.0.0.1/8", -1 }, { "192.168.1.129/25", -1 }, { "2001:db8::1/32", -1 },
		{ "::1/0", -1 }, { "1.2.3.4/33", -1 }, { "::/129", -1 }, { "10.0.0.0/08", -1 },
		{ "10.0.0.0/", -1 }, { "/8", -1 }, { "", -1 }, { "10.0.0.0/8/8", -1 },
		{ "10.0.0.0/-8", -1 }, { "10.0.0.0/+8", -1 }, { "10.0.0.0/1000", -1 },
		{ " 10.0.0.0/8", -1 }, { "10.0.0.0/8 ", -1 }, { "[::1]", -1 }, { "1.2.3.4:80", -1 },
		{ "::1%lo/128", -1 }, { "10.0.0/8", -1 }, { "garbage/8", -1 },
	};
	struct netaddr_range r;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (rows[i].bits < 0)
			is_int(netaddr_parse_range(rows[i].in, &r), -1, "range refused: \"%s\"", rows[i].in);
		else if (is_int(netaddr_parse_range(rows[i].in, &r), 0, "range: %s", rows[i].in))
			is_int(r.bits, rows[i].bits, "… %d bits", rows[i].bits);
	}
}

/* Which addresses a range holds; IPv4 ranges hold the mapped form too. */
static void
test_in(void)
{
	static const struct {
		const char *addr, *range;
		int want;
	} rows[] = {
		{ "10.1.2.3", "10.0.0.0/8", 1 }, { "::ffff:10.1.2.3", "10.0.0.0/8", 1 },
		{ "11.0.0.0", "10.0.0.0/8", 0 }, { "9.255.255.255", "10.0.0.0/8", 0 },
		{ "192.168.1.127", "192.168.1.0/25", 1 }, { "192.168.1.128", "192.168.1.0/25", 0 },
		{ "8.8.8.8", "0.0.0.0/0", 1 }, { "::1", "0.0.0.0/0", 0 }, { "::a01:203", "10.0.0.0/8", 0 },
		{ "::1", "::/0", 1 }, { "8.8.8.8", "::/0", 1 },
		{ "2001:db8:ffff::1", "2001:db8::/32", 1 }, { "2001:db9::", "2001:db8::/32", 0 },
		{ "1.2.3.4", "1.2.3.4", 1 }, { "1.2.3.5", "1.2.3.4", 0 }, { "::1", "::1", 1 },
		{ "::2", "::1", 0 }, { "fdff::1", "fd00::/8", 1 }, { "fe00::1", "fd00::/8", 0 },
	};
	struct netaddr a;
	struct netaddr_range r[2];
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		ok(netaddr_parse(rows[i].addr, strlen(rows[i].addr), &a) == 0 &&
		    netaddr_parse_range(rows[i].range, &r[0]) == 0, "parse %s, %s", rows[i].addr, rows[i].range);
		is_int(netaddr_in(&a, r, 1), rows[i].want, "%s %s %s", rows[i].addr,
		    rows[i].want ? "in" : "not in", rows[i].range);
	}
	netaddr_parse("10.1.2.3", 8, &a);
	netaddr_parse_range("2001:db8::/32", &r[0]);
	netaddr_parse_range("10.0.0.0/8", &r[1]);
	ok(netaddr_in(&a, r, 2) == 1 && netaddr_in(&a, r, 1) == 0, "any of n ranges; only n");
	ok(netaddr_in(&a, r, 0) == 0, "no ranges: in none");
	r[1].bits = 129;
	ok(netaddr_in(&a, r, 2) == 0, "a range of over 128 bits holds nothing");
}

static const char *const trusted_text[] = { "10.0.0.0/8", "127.0.0.1", "::1", "fd00::/8" };

static size_t
trusted(struct netaddr_range *r)
{
	size_t i, n = sizeof(trusted_text) / sizeof(trusted_text[0]);

	for (i = 0; i < n; i++)
		if (netaddr_parse_range(trusted_text[i], &r[i]) < 0)
			abort();
	return n;
}

/* The client: REMOTE_ADDR unless it is a trusted proxy; then X-Forwarded-For from the
 * right. Trusted: 10.0.0.0/8, 127.0.0.1, ::1, fd00::/8. want NULL: -1. */
static void
test_client(void)
{
	static const struct {
		const char *remote, *xff, *want, *what;
	} rows[] = {
		{ "203.0.113.9", "1.2.3.4", "203.0.113.9", "an untrusted remote: the header is ignored" },
		{ "203.0.113.9", "10.0.0.2", "203.0.113.9", "… even when it names a trusted hop" },
		{ "10.0.0.1", NULL, "10.0.0.1", "a trusted remote, no header: remote" },
		{ "10.0.0.1", "203.0.113.7", "203.0.113.7", "a trusted remote: the header's entry" },
		{ "10.0.0.1", "198.51.100.1, 203.0.113.7", "203.0.113.7",
		    "the right-most untrusted entry, not the (forgeable) left-most" },
		{ "10.0.0.1", "198.51.100.1, 203.0.113.7, 10.0.0.5, 10.0.0.4", "203.0.113.7",
		    "a chain of trusted proxies is skipped" },
		{ "127.0.0.1", "10.0.0.3, 10.0.0.2", "10.0.0.3", "every entry trusted: the left-most" },
		{ "10.0.0.1", "203.0.113.7,10.0.0.2", "203.0.113.7", "no blank after the comma" },
		{ "10.0.0.1", "\t203.0.113.7 ,\t10.0.0.2 ", "203.0.113.7", "blanks around entries" },
		{ "10.0.0.1", "203.0.113.7, unknown, 10.0.0.2", "10.0.0.2",
		    "a malformed entry stops the walk: the trusted hop to its right" },
		{ "10.0.0.1", "203.0.113.7, garbage", "10.0.0.1", "… or remote, when it is the last entry" },
		{ "10.0.0.1", "10.0.0.7, 1.2.3", "10.0.0.1", "… a truncated address is malformed" },
		{ "10.0.0.1", "203.0.113.7, ::1%lo", "10.0.0.1", "… a zone id is malformed" },
		{ "10.0.0.1", "", "10.0.0.1", "an empty header: remote" },
		{ "10.0.0.1", " \t ", "10.0.0.1", "a blank header: remote" },
		{ "10.0.0.1", " , ", "10.0.0.1", "only empty entries: remote" },
		{ "10.0.0.1", "203.0.113.7,", "10.0.0.1", "a trailing comma: an empty last entry" },
		{ "10.0.0.1", "203.0.113.7,,10.0.0.2", "10.0.0.2", "an empty entry in the middle" },
		{ "10.0.0.1", "203.0.113.7:5678", "203.0.113.7", "an entry with a port" },
		{ "::1", "[2001:db8::1]:443", "2001:db8::1", "a bracketed IPv6 entry with a port" },
		{ "::1", "[2001:db8::1]", "2001:db8::1", "a bracketed IPv6 entry" },
		{ "fd00::1", "2001:db8::5, fd12::1", "2001:db8::5", "IPv6 proxies and client" },
		{ "::ffff:10.0.0.1", "203.0.113.7", "203.0.113.7", "a mapped remote is trusted by an IPv4 range" },
		{ "10.0.0.1", "::ffff:10.0.0.9, 203.0.113.7", "203.0.113.7", "mixed forms" },
		{ "10.0.0.1", "::ffff:203.0.113.7", "203.0.113.7", "a mapped client formats dotted" },
		{ " 10.0.0.1 ", "203.0.113.7", "203.0.113.7", "blanks around remote" },
		{ "unix:", "203.0.113.7", NULL, "a remote that is no address: -1" },
		{ "", NULL, NULL, "an empty remote: -1" },
		{ "10.0.0.1, 10.0.0.2", NULL, NULL, "two remotes: -1" },
	};
	struct netaddr_range r[4];
	struct netaddr out;
	size_t n = trusted(r), i;
	int rc;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		memset(&out, 0xaa, sizeof(out));
		rc = netaddr_client(rows[i].remote, rows[i].xff, r, n, &out);
		if (rows[i].want == NULL)
			ok(rc == -1 && memcmp(&out, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16) == 0,
			    "%s (out zeroed)", rows[i].what);
		else if (is_int(rc, 0, "%s: 0", rows[i].what))
			is_str(text(&out), rows[i].want, "%s", rows[i].what);
	}
	ok(netaddr_client(NULL, "1.2.3.4", r, n, &out) == -1, "no remote: -1");
	ok(netaddr_client("10.0.0.1", "203.0.113.7", r, 0, &out) == 0 &&
	    strcmp(text(&out), "10.0.0.1") == 0, "no trusted ranges: always remote");
}

/* At most NETADDR_XFF_MAX entries are walked; long headers and entries are bounded. */
static void
test_client_many(void)
{
	struct netaddr_range r[4];
	struct netaddr out;
	size_t n = trusted(r), len, cap = 1 << 20;
	char *xff = malloc(cap + 64), *p;
	int i;

	if (xff == NULL)
		abort();
	/* 198.51.100.1, then 10.0.0.1 … 10.0.0.k */
	for (i = 1, p = xff + snprintf(xff, 64, "198.51.100.1"); i <= NETADDR_XFF_MAX; i++)
		p += snprintf(p, 64, ", 10.0.0.%d", i);
	netaddr_client("10.0.0.254", xff, r, n, &out);
	is_str(text(&out), "10.0.0.1", "more trusted entries than are walked: the left-most walked");
	*strrchr(xff, ',') = '\0';
	netaddr_client("10.0.0.254", xff, r, n, &out);
	is_str(text(&out), "198.51.100.1", "NETADDR_XFF_MAX entries, the last one walked untrusted");
	for (p = xff, len = 0; len + 16 < cap; len += 10)
		p += snprintf(p, 16, "10.0.0.1, ");
	snprintf(p, 64, "203.0.113.7");
	netaddr_client("10.0.0.254", xff, r, n, &out);
	is_str(text(&out), "203.0.113.7", "a 1 MiB header: its right-most entries");
	*p = '\0';
	memcpy(p - 2, "  ", 2);
	netaddr_client("10.0.0.254", xff, r, n, &out);
	is_str(text(&out), "10.0.0.1", "… all trusted: the left-most walked");
	memset(xff, 'a', cap);
	xff[cap] = '\0';
	netaddr_client("10.0.0.254", xff, r, n, &out);
	is_str(text(&out), "10.0.0.254", "a 1 MiB entry: malformed, remote");
	len = (size_t)snprintf(xff, cap, "203.0.113.7,");
	memset(xff + len, ' ', NETADDR_XFF_ENTRY_MAX - 7);
	snprintf(xff + len + NETADDR_XFF_ENTRY_MAX - 7, 64, "1.2.3.4");
	netaddr_client("10.0.0.254", xff, r, n, &out);
	is_str(text(&out), "1.2.3.4", "an entry of NETADDR_XFF_ENTRY_MAX bytes, blanks and all");
	len = (size_t)snprintf(xff, cap, "203.0.113.7,");
	memset(xff + len, ' ', NETADDR_XFF_ENTRY_MAX - 6);
	snprintf(xff + len + NETADDR_XFF_ENTRY_MAX - 6, 64, "1.2.3.4");
	netaddr_client("10.0.0.254", xff, r, n, &out);
	is_str(text(&out), "10.0.0.254", "one byte more: malformed");
	free(xff);
}

/* The limit key: IPv4 as it is, IPv6 by its /64. */
static void
test_limit_key(void)
{
	static const struct row rows[] = {
		{ "203.0.113.7", "203.0.113.7" },
		{ "::ffff:203.0.113.7", "203.0.113.7" },
		{ "2001:db8:1:2:3:4:5:6", "2001:db8:1:2::" },
		{ "2001:db8:1:2::ffff", "2001:db8:1:2::" },
		{ "2001:db8:1:3::", "2001:db8:1:3::" },
		{ "::1", "::" },
	};
	struct netaddr a, k;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (netaddr_parse(rows[i].in, strlen(rows[i].in), &a) < 0)
			abort();
		netaddr_limit_key(&a, &k);
		is_str(text(&k), rows[i].want, "limit key of %s", rows[i].in);
	}
	netaddr_client("::1", "2001:db8:1:2:aaaa:bbbb:cccc:dddd", NULL, 0, &a);
	netaddr_limit_key(&a, &k);
	is_str(text(&k), "::", "a NULL range list trusts nothing");
	netaddr_parse("2001:db8:1:2:aaaa::1", 20, &a);
	netaddr_limit_key(&a, &k);
	netaddr_parse("2001:db8:1:2:bbbb::2", 20, &a);
	netaddr_limit_key(&a, &a);
	ok(memcmp(&a, &k, sizeof(a)) == 0, "two hosts of one /64: one key (key may be a)");
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	run_case(test_parse);
	run_case(test_parse_len);
	run_case(test_format);
	run_case(test_range);
	run_case(test_in);
	run_case(test_client);
	run_case(test_client_many);
	run_case(test_limit_key);
	return done_testing();
}
