/* Unit tests: one parameter of a WWW-Authenticate challenge (src/http/challenge.c).
 * A table: each row a header, the scheme and parameter asked for, and what it must give
 * (NULL: none). */
#include "autoconf.h"

#include <string.h>

#include "challenge.h"
#include "tap.h"

struct row {
	const char *hdr, *scheme, *name, *want;
};

static const struct row rows[] = {
	/* What the MCP SDK's requireBearerAuth writes. */
	{ "Bearer error=\"invalid_token\", error_description=\"Missing Authorization header\", "
	    "resource_metadata=\"http://127.0.0.1:1/meta/prm\"", "Bearer", "resource_metadata",
	    "http://127.0.0.1:1/meta/prm" },
	{ "Bearer resource_metadata=\"https://a.example/.well-known/oauth-protected-resource\"", "Bearer",
	    "resource_metadata", "https://a.example/.well-known/oauth-protected-resource" },
	/* Case of the scheme and the name does not matter; BWS around '='. */
	{ "bearer Resource_Metadata = \"x\"", "Bearer", "resource_metadata", "x" },
	{ "Bearer realm=example", "Bearer", "realm", "example" },
	/* Quoted-pairs undone; commas and '=' inside quotes are the value's. */
	{ "Bearer realm=\"a \\\"b\\\" \\\\c, d=e\"", "Bearer", "realm", "a \"b\" \\c, d=e" },
	{ "Bearer realm=\"\"", "Bearer", "realm", "" },
	/* Several challenges; the parameter of the one asked for. */
	{ "Basic realm=\"basic\", Bearer realm=\"bearer\"", "Bearer", "realm", "bearer" },
	{ "Basic realm=\"basic\", Bearer realm=\"bearer\"", "Basic", "realm", "basic" },
	{ "Negotiate, Bearer realm=x", "Bearer", "realm", "x" },
	{ "Basic YWxhZGRpbjpvcGVuc2VzYW1l, Bearer realm=x", "Bearer", "realm", "x" },
	{ "Basic abc==, Bearer realm=x", "Bearer", "realm", "x" },
	{ "Basic abc=, Bearer realm=x", "Bearer", "realm", "x" },
	{ "Newauth realm=\"apps\", type=1, title=\"Login to \\\"apps\\\"\", Basic realm=\"simple\"", "Newauth",
	    "title", "Login to \"apps\"" },
	/* Empty elements and lines joined by ", ". */
	{ ", ,Bearer realm=x,, error=y ,", "Bearer", "error", "y" },
	{ "DPoP algs=\"ES256\", Bearer resource_metadata=\"u\"", "DPoP", "resource_metadata", NULL },
	/* The first challenge of the scheme only. */
	{ "Bearer realm=a, Bearer resource_metadata=\"u\"", "Bearer", "resource_metadata", NULL },
	{ "Bearer realm=a, Bearer realm=b", "Bearer", "realm", "a" },
	/* Named twice in one challenge: none. */
	{ "Bearer resource_metadata=\"a\", resource_metadata=\"b\"", "Bearer", "resource_metadata", NULL },
	/* Not there. */
	{ "", "Bearer", "realm", NULL },
	{ "Bearer", "Bearer", "realm", NULL },
	{ "Bearer abc==", "Bearer", "abc", NULL },
	{ "Basic realm=x", "Bearer", "realm", NULL },
	{ "Bearerx realm=x", "Bearer", "realm", NULL },
	{ "Bearer realmx=x", "Bearer", "realm", NULL },
	/* Malformed anywhere: none. */
	{ "Bearer realm=\"x", "Bearer", "realm", NULL },
	{ "Bearer realm=\"x\" y", "Bearer", "realm", NULL },
	{ "Bearer realm=x y", "Bearer", "realm", NULL },
	{ "Bearer realm=\"a\nb\"", "Bearer", "realm", NULL },
	{ "Bearer realm=\"a\\\nb\"", "Bearer", "realm", NULL },
	{ "Bearer realm=\"a\x7f\"", "Bearer", "realm", NULL },
	{ "Bearer realm=x, Basic \"q\"", "Bearer", "realm", NULL },
	{ "Bearer realm=x, abc==", "Bearer", "realm", NULL },
	{ "Bearer=x", "Bearer", "realm", NULL },
	{ "\"Bearer\" realm=x", "Bearer", "realm", NULL },
	{ "Bearer realm=x, =y", "Bearer", "realm", NULL },
	{ "Bearer a=b=", "Bearer", "a", NULL },
	{ "Basic abc==, realm=x", "Basic", "realm", NULL },
	{ "Bearer realm=x; error=y", "Bearer", "realm", NULL },
	/* Obs-text passes through. */
	{ "Bearer realm=\"caf\xc3\xa9\"", "Bearer", "realm", "caf\xc3\xa9" },
};

static void
test_table(void)
{
	char out[128];
	size_t i;
	int rc;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		rc = challenge_param(rows[i].hdr, rows[i].scheme, rows[i].name, out, sizeof(out));
		if (rows[i].want == NULL)
			ok(rc == -1, "row %zu: no %s of %s", i, rows[i].name, rows[i].scheme);
		else
			is_str(rc == 0 ? out : "(refused)", rows[i].want, "row %zu: %s of %s", i, rows[i].name,
			    rows[i].scheme);
	}
}

static void
test_fit(void)
{
	char out[5];

	is_int(challenge_param("Bearer realm=abcd", "Bearer", "realm", out, sizeof(out)), 0,
	    "a value of outlen - 1 bytes fits");
	is_str(out, "abcd", "… whole");
	is_int(challenge_param("Bearer realm=\"abcde\"", "Bearer", "realm", out, sizeof(out)), -1,
	    "one byte more does not: refused, not cut");
	is_int(challenge_param("Bearer realm=abcdef", "Bearer", "realm", out, sizeof(out)), -1,
	    "… a token value neither");
	is_int(challenge_param("Bearer realm=x", "Bearer", "realm", out, 0), -1, "no room at all: refused");
	is_int(challenge_param("Bearer other=\"longer than five\", realm=x", "Bearer", "realm", out, sizeof(out)), 0,
	    "another parameter's value is not bounded by out");
	is_str(out, "x", "… and does not leak into it");
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	run_case(test_table);
	run_case(test_fit);
	return done_testing();
}
