/* The Redis store's URL ([limits] store, url_redis_parse in src/base/url.c). Properties:
 * what parses has a host of name, IPv4 or IPv6 characters only, a port 1 – 65535 and a
 * database 0 – 100000; its parts written again as a URL (user and password
 * percent-encoded, an IPv6 host in brackets) parse to the same parts; anything that is
 * not redis:// is refused with a reason, and a refusal leaves nothing allocated. */
#include "autoconf.h"

#include <ctype.h>

#include "fuzz.h"
#include "url.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_init();
	return 0;
}

/* Appends s percent-encoded (everything but letters and digits). */
static size_t
put_encoded(char *out, size_t at, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		if (isalnum((unsigned char)*s)) {
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
	const char *why;
	char *in, *url;
	size_t n, i;

	if ((in = malloc(size + 1)) == NULL)
		return 0;
	memcpy(in, data, size);
	in[size] = '\0';
	why = url_redis_parse(in, &r);
	if (why != NULL) {
		FUZZ_CHECK(*why != '\0');
		FUZZ_CHECK(r.host == NULL && r.user == NULL && r.password == NULL);
		free(in);
		return 0;
	}
	FUZZ_CHECK(strncmp(in, "redis://", 8) == 0);
	FUZZ_CHECK(r.host && *r.host);
	FUZZ_CHECK(strspn(r.host, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:") == strlen(r.host));
	FUZZ_CHECK(r.port >= 1 && r.port <= 65535 && r.db >= 0 && r.db <= 100000);
	FUZZ_CHECK(r.user == NULL || r.password != NULL);
	/* Written again, it parses to the same parts. */
	n = 64 + 3 * (strlen(r.host) + (r.user ? strlen(r.user) : 0) + (r.password ? strlen(r.password) : 0));
	FUZZ_CHECK((url = malloc(n)) != NULL);
	i = (size_t)snprintf(url, n, "redis://");
	if (r.password) {
		if (r.user)
			i = put_encoded(url, i, r.user);
		url[i++] = ':';
		i = put_encoded(url, i, r.password);
		url[i++] = '@';
	}
	i += (size_t)snprintf(url + i, n - i, strchr(r.host, ':') ? "[%s]:%d/%d" : "%s:%d/%d", r.host, r.port, r.db);
	FUZZ_CHECK(url_redis_parse(url, &again) == NULL);
	FUZZ_CHECK(strcmp(again.host, r.host) == 0 && again.port == r.port && again.db == r.db);
	FUZZ_CHECK((r.user == NULL) == (again.user == NULL) && (!r.user || strcmp(r.user, again.user) == 0));
	FUZZ_CHECK((r.password == NULL) == (again.password == NULL) &&
	    (!r.password || strcmp(r.password, again.password) == 0));
	url_redis_free(&again);
	url_redis_free(&r);
	free(url);
	free(in);
	return 0;
}
