/* url — check, origin, loose equality. */
#include "autoconf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "url.h"

int
url_check(const char *s)
{
	const char *host;

	if (strncmp(s, "https://", 8) == 0)
		host = s + 8;
	else if (strncmp(s, "http://", 7) == 0)
		host = s + 7;
	else
		return -1;
	if (!*host || strchr("/?:", *host) || strchr(s, '#') || strpbrk(s, " \t\"<>\\^`{|}"))
		return -1;	/* no host: "http://", "http:///x", "http://?q", "http://:80" */
	return 0;
}

char *
url_origin(const char *url, const char **path_out)
{
	const char *host = strstr(url, "://") + 3, *end;
	int https = strncmp(url, "https", 5) == 0;
	size_t n, i;
	char *o;

	end = host + strcspn(host, "/?");
	*path_out = end;
	n = (size_t)(end - url);
	if ((o = malloc(n + 1)) == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		o[i] = (char)tolower((unsigned char)url[i]);
	o[n] = '\0';
	if ((https && n > 4 && strcmp(o + n - 4, ":443") == 0) ||
	    (!https && n > 3 && strcmp(o + n - 3, ":80") == 0))
		*strrchr(o, ':') = '\0';
	return o;
}

int
url_same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la && a[la - 1] == '/')
		la--;
	if (lb && b[lb - 1] == '/')
		lb--;
	return la == lb && strncmp(a, b, la) == 0;
}
