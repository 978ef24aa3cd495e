/* The Redis store's URL ([limits] store, url_redis_parse in src/base/url.c). Properties:
 * what parses is either a TCP endpoint (redis://: a host of name, IPv4 or IPv6
 * characters only, a port 1 – 65535) or a unix socket (unix:// or redis+unix://: an
 * absolute path of 2 – 107 bytes, no control character, not ending in '/'), never both,
 * with a database 0 – 100000; its parts written again as a URL (user, password and path
 * percent-encoded, an IPv6 host in brackets, a unix socket's database as ?db=) parse to
 * the same parts; url_redis_where names the host or the path and never the
 * credentials; anything else is refused with a reason, and a refusal leaves nothing
 * allocated. */
#include "autoconf.h"

#include <ctype.h>

#include "fuzz.h"
#include "url.h"

/* Appends s percent-encoded (everything but letters and digits, and keep's characters). */
static size_t
put_encoded(char *out, size_t at, const char *s, const char *keep)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		if (isalnum((unsigned char)*s) || strchr(keep, *s)) {
			out[at++] = *s;
		} else {
			out[at++] = '%';
			out[at++] = hex[(unsigned char)*s >> 4];
			out[at++] = hex[(unsigned char)*s & 15];
		}
	}
	return at;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct url_redis r, again;
	struct gw_error err;
	char *in, *url, where[256], expect[256];
	size_t n, i;

	if ((in = malloc(size + 1)) == NULL)
		return 0;
	memcpy(in, data, size);
	in[size] = '\0';
	if (url_redis_parse(in, &r, &err) < 0) {
		FUZZ_CHECK(err.detail[0] != '\0' && (err.code == GW_ECONFIG || err.code == GW_EINTERNAL));
		FUZZ_CHECK(r.host == NULL && r.path == NULL && r.user == NULL && r.password == NULL);
		free(in);
		return 0;
	}
	FUZZ_CHECK((r.host == NULL) != (r.path == NULL));
	if (r.host) {
		FUZZ_CHECK(strncmp(in, "redis://", 8) == 0);
		FUZZ_CHECK(*r.host);
		FUZZ_CHECK(strspn(r.host, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:") == strlen(r.host));
		FUZZ_CHECK(r.port >= 1 && r.port <= 65535);
	} else {
		FUZZ_CHECK(strncmp(in, "unix://", 7) == 0 || strncmp(in, "redis+unix://", 13) == 0);
		FUZZ_CHECK(r.path[0] == '/' && strlen(r.path) >= 2 && strlen(r.path) <= URL_REDIS_PATH_MAX);
		FUZZ_CHECK(r.path[strlen(r.path) - 1] != '/' && r.port == 0);
		for (i = 0; r.path[i]; i++)
			FUZZ_CHECK((unsigned char)r.path[i] >= 0x20 && r.path[i] != 0x7f);
	}
	FUZZ_CHECK(r.db >= 0 && r.db <= 100000);
	FUZZ_CHECK(r.user == NULL || r.password != NULL);
	/* Where it points, and nothing else (no credentials). */
	url_redis_where(&r, where, sizeof(where));
	if (r.host)
		snprintf(expect, sizeof(expect), "%s port %d", r.host, r.port);
	else
		snprintf(expect, sizeof(expect), "unix socket %s", r.path);
	FUZZ_CHECK(strcmp(where, expect) == 0);
	/* Written again, it parses to the same parts. */
	n = 64 + 3 * (strlen(r.host ? r.host : r.path) + (r.user ? strlen(r.user) : 0) +
	    (r.password ? strlen(r.password) : 0));
	FUZZ_CHECK((url = malloc(n)) != NULL);
	i = (size_t)snprintf(url, n, r.host ? "redis://" : "unix://");
	if (r.password) {
		if (r.user)
			i = put_encoded(url, i, r.user, "");
		url[i++] = ':';
		i = put_encoded(url, i, r.password, "");
		url[i++] = '@';
	}
	if (r.host) {
		i += (size_t)snprintf(url + i, n - i, strchr(r.host, ':') ? "[%s]:%d/%d" : "%s:%d/%d", r.host, r.port, r.db);
	} else {
		i = put_encoded(url, i, r.path, "/.-_");
		snprintf(url + i, n - i, "?db=%d", r.db);
	}
	FUZZ_CHECK(url_redis_parse(url, &again, &err) == 0);
	FUZZ_CHECK((again.host == NULL) == (r.host == NULL) && (!r.host || strcmp(again.host, r.host) == 0));
	FUZZ_CHECK((again.path == NULL) == (r.path == NULL) && (!r.path || strcmp(again.path, r.path) == 0));
	FUZZ_CHECK(again.port == r.port && again.db == r.db);
	FUZZ_CHECK((r.user == NULL) == (again.user == NULL) && (!r.user || strcmp(r.user, again.user) == 0));
	FUZZ_CHECK((r.password == NULL) == (again.password == NULL) &&
	    (!r.password || strcmp(r.password, again.password) == 0));
	url_redis_free(&again);
	url_redis_free(&r);
	free(url);
	free(in);
	return 0;
}
