/* URL checks (src/base/url.c) and the Origin check of /mcp (router_origin_allowed). The
 * input is two strings cut at the first NUL. Properties: url_origin of a checked URL is
 * a lowercase scheme://host[:port] that the URL starts with (but for case and a
 * default port), its path the rest; url_same is symmetric and reflexive; the resource's
 * own origin is always allowed, any case, and an allowed origin stays allowed in
 * another case; a resource URI url_resource_ambiguous takes holds no "/../", "/./",
 * encoded '/' or backslash, and becomes ambiguous with "/.." after it. */
#include "autoconf.h"

#include <ctype.h>
#include <strings.h>

#include "fuzz.h"
#include "router.h"
#include "url.h"

static struct config *cfg;

void
fuzz_setup(void)
{
	cfg = fuzz_config("[gateway]\nresource = https://gw.example.com/mcp\n"
	    "allowed-origins = https://app.example.com http://localhost:8080\n"
	    "[auth]\nissuer = https://idp.example.com\n");
}

static void
one_url(const char *u)
{
	const char *path = NULL;
	char *o;
	size_t n, i;

	if (url_check(u) < 0)
		return;
	FUZZ_CHECK(strncmp(u, "http://", 7) == 0 || strncmp(u, "https://", 8) == 0);
	FUZZ_CHECK(strchr(u, '#') == NULL);
	if ((o = url_origin(u, &path)) == NULL)
		return;
	n = strlen(o);
	FUZZ_CHECK(n > strlen(u[4] == 's' ? "https://" : "http://"));	/* a host */
	FUZZ_CHECK(path >= u && path <= u + strlen(u) && (*path == '\0' || *path == '/' || *path == '?'));
	FUZZ_CHECK(n <= (size_t)(path - u) && strncasecmp(o, u, n) == 0);
	FUZZ_CHECK(n == (size_t)(path - u) || strcmp(u + n, path) != 0);	/* only a default port dropped */
	for (i = 0; i < n; i++)
		FUZZ_CHECK(!isupper((unsigned char)o[i]));
	FUZZ_CHECK(strpbrk(o + 8, "/?") == NULL);
	free(o);
}

static void
one_resource(const char *u)
{
	char *more;
	size_t n = strlen(u);

	if (url_resource_ambiguous(u) != NULL)
		return;
	FUZZ_CHECK(strstr(u, "/../") == NULL && strstr(u, "/./") == NULL && strchr(u, '\\') == NULL);
	FUZZ_CHECK(strcasestr(u, "%2f") == NULL && strcasestr(u, "%5c") == NULL);
	if ((more = malloc(n + 4)) == NULL)
		return;
	memcpy(more, u, n);
	memcpy(more + n, "/..", 4);
	FUZZ_CHECK(url_resource_ambiguous(more) != NULL);
	free(more);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *a, *b, *up;
	size_t i;

	fuzz_split2(data, size, &a, &b);
	one_url(a);
	one_url(b);
	one_resource(a);
	FUZZ_CHECK(url_same(a, a));
	FUZZ_CHECK(url_same(a, b) == url_same(b, a));
	if (router_origin_allowed(cfg, a)) {
		up = strdup(a);
		for (i = 0; up[i]; i++)
			up[i] = (char)toupper((unsigned char)up[i]);
		FUZZ_CHECK(router_origin_allowed(cfg, up));
		free(up);
	}
	FUZZ_CHECK(router_origin_allowed(cfg, cfg->origin));
	free(a);
	free(b);
	return 0;
}
