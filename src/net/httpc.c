/* httpc — the one set-up of a libcurl easy handle for the gateway's own HTTP requests. */
#include "autoconf.h"

#include <string.h>

#include "httpc.h"
#include "secret.h"

void
httpc_reset(CURL *h, const char *url, long connect_ms, long timeout_ms)
{
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	if (timeout_ms > 0)
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, PACKAGE_NAME "/" PACKAGE_VERSION);
}

struct curl_slist *
httpc_header(struct curl_slist *l, const char *line, int *bad)
{
	struct curl_slist *n;

	if (*bad || (n = curl_slist_append(l, line)) == NULL) {
		*bad = 1;
		return l;
	}
	return n;
}

void
httpc_free_headers(struct curl_slist *l)
{
	struct curl_slist *h;

	for (h = l; h; h = h->next)
		secret_wipe(h->data, strlen(h->data));
	curl_slist_free_all(l);
}
