/* Addresses, ranges and the client behind trusted proxies (src/base/netaddr.c). The input
 * is two strings cut at the first NUL: a REMOTE_ADDR and an X-Forwarded-For header;
 * each is also read as an address (from an exact-size copy, so that a read past len is
 * caught) and as a range. Properties: a parsed address formats within NETADDR_TEXT_MAX
 * and the text parses back to the same bytes, as an address and as a /128 range, with
 * blanks around, brackets and a port too; its limit key is itself (IPv4) or its /64; a
 * range holds its network and every address that differs only past its prefix, not one
 * that differs at the prefix's last bit, and its text parses back to the same range;
 * netaddr_client equals a model written here from the header's contract (the entries
 * split forward, then walked from the right), so its answer is remote or an entry. */
#include "autoconf.h"

#include "fuzz.h"
#include "netaddr.h"

static const char *const trusted_text[] = {
	"10.0.0.0/8", "127.0.0.1", "::1", "fd00::/8", "192.168.0.0/16", "2001:db8::/32",
};
#define NTRUSTED	(sizeof(trusted_text) / sizeof(trusted_text[0]))
static struct netaddr_range trusted[NTRUSTED];

void
fuzz_setup(void)
{
	size_t i;

	for (i = 0; i < NTRUSTED; i++)
		FUZZ_CHECK(netaddr_parse_range(trusted_text[i], &trusted[i]) == 0);
}

static int
same(const struct netaddr *a, const struct netaddr *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

/* The text t (of a) in another form, between pre and post: it must read as a again. */
static void
reparse_as(const struct netaddr *a, const char *pre, const char *t, const char *post)
{
	char w[NETADDR_TEXT_MAX + 16];
	struct netaddr b;

	snprintf(w, sizeof(w), "%s%s%s", pre, t, post);
	FUZZ_CHECK(netaddr_parse(w, strlen(w), &b) == 0 && same(a, &b));
}

static void
one_address(const char *s, size_t len)
{
	char *copy = malloc(len ? len : 1), t[NETADDR_TEXT_MAX];
	struct netaddr a, b, key;
	struct netaddr_range r;

	FUZZ_CHECK(copy != NULL);
	memcpy(copy, s, len);
	if (netaddr_parse(copy, len, &a) == 0) {
		FUZZ_CHECK(memchr(s, '%', len) == NULL);
		netaddr_format(&a, t, sizeof(t));
		FUZZ_CHECK(strlen(t) > 0 && strlen(t) < NETADDR_TEXT_MAX);
		FUZZ_CHECK(netaddr_parse(t, strlen(t), &b) == 0 && same(&a, &b));
		FUZZ_CHECK(netaddr_parse_range(t, &r) == 0 && r.bits == 128 && same(&a, &r.net));
		FUZZ_CHECK(netaddr_in(&a, &r, 1));
		FUZZ_CHECK((strchr(t, '.') != NULL) == netaddr_is_v4(&a));
		reparse_as(&a, " \t", t, "\t ");
		if (netaddr_is_v4(&a))
			reparse_as(&a, "", t, ":65535");
		else
			reparse_as(&a, "[", t, "]:443");
		netaddr_limit_key(&a, &key);
		if (netaddr_is_v4(&a))
			FUZZ_CHECK(same(&a, &key));
		else
			FUZZ_CHECK(memcmp(a.b, key.b, 8) == 0 && memcmp(key.b + 8, "\0\0\0\0\0\0\0\0", 8) == 0);
		netaddr_limit_key(&key, &b);
		FUZZ_CHECK(same(&key, &b));
	}
	free(copy);
}

static void
one_range(const char *s)
{
	struct netaddr_range r, back;
	struct netaddr a;
	char t[NETADDR_TEXT_MAX + 8];
	int v4;

	if (netaddr_parse_range(s, &r) < 0)
		return;
	v4 = netaddr_is_v4(&r.net);
	FUZZ_CHECK(r.bits <= 128 && (!v4 || r.bits >= 96));
	FUZZ_CHECK(netaddr_in(&r.net, &r, 1));
	netaddr_format(&r.net, t, NETADDR_TEXT_MAX);
	snprintf(t + strlen(t), 8, "/%u", v4 ? r.bits - 96 : r.bits);
	FUZZ_CHECK(netaddr_parse_range(t, &back) == 0 && same(&r.net, &back.net) && back.bits == r.bits);
	if (r.bits < 128) {
		a = r.net;
		a.b[15] ^= 1;	/* past the prefix: still in */
		FUZZ_CHECK(netaddr_in(&a, &r, 1));
	}
	if (r.bits > 0) {
		a = r.net;
		a.b[(r.bits - 1) / 8] ^= (unsigned char)(0x80u >> ((r.bits - 1) % 8));
		FUZZ_CHECK(!netaddr_in(&a, &r, 1));	/* the prefix's last bit: out */
	}
}

/* netaddr_client by its contract: every entry of xff split forward, then walked from
 * the right. */
static int
model_client(const char *remote, const char *xff, struct netaddr *want)
{
	const char **start;
	size_t *len, n = 0, k;
	const char *p, *comma;
	struct netaddr e;

	if (netaddr_parse(remote, strlen(remote), want) < 0)
		return -1;
	if (xff == NULL || !netaddr_in(want, trusted, NTRUSTED))
		return 0;
	start = malloc((strlen(xff) + 1) * sizeof(*start));
	len = malloc((strlen(xff) + 1) * sizeof(*len));
	FUZZ_CHECK(start != NULL && len != NULL);
	for (p = xff;; p = comma + 1) {
		comma = strchr(p, ',');
		start[n] = p;
		len[n++] = comma ? (size_t)(comma - p) : strlen(p);
		if (comma == NULL)
			break;
	}
	for (k = 0; k < n && k < NETADDR_XFF_MAX; k++) {
		p = start[n - 1 - k];
		if (len[n - 1 - k] > NETADDR_XFF_ENTRY_MAX || netaddr_parse(p, len[n - 1 - k], &e) < 0)
			break;
		*want = e;
		if (!netaddr_in(&e, trusted, NTRUSTED))
			break;
	}
	free(start);
	free(len);
	return 0;
}

static void
one_client(const char *remote, const char *xff)
{
	struct netaddr got, want;
	int rc = netaddr_client(remote, xff, trusted, NTRUSTED, &got);

	FUZZ_CHECK(rc == model_client(remote, xff, &want));
	if (rc < 0)
		FUZZ_CHECK(memcmp(got.b, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16) == 0);
	else
		FUZZ_CHECK(same(&got, &want));
	rc = netaddr_client(remote, xff, trusted, 0, &got);
	FUZZ_CHECK(rc < 0 || (netaddr_parse(remote, strlen(remote), &want) == 0 && same(&got, &want)));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *remote, *xff;

	fuzz_split2(data, size, &remote, &xff);
	one_address(remote, strlen(remote));
	one_address(xff, strlen(xff));
	one_range(remote);
	one_range(xff);
	one_client(remote, xff);
	one_client(remote, NULL);
	free(remote);
	free(xff);
	return 0;
}
