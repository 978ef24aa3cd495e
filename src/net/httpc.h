/* httpc — the one set-up of a libcurl easy handle for the gateway's own HTTP requests:
 * to the authorization server (introspect) and to the upstreams (upstream). */
#ifndef GW_HTTPC_H
#define GW_HTTPC_H

#include <curl/curl.h>

/* Resets h (its live connection stays for reuse) and sets what every request of ours
 * has: url, http and https only, no redirects, no signals, TCP keep-alive, our
 * User-Agent, connect_ms to connect, and timeout_ms for the whole exchange (0: no bound,
 * for a stream the caller ends itself). */
void httpc_reset(CURL *h, const char *url, long connect_ms, long timeout_ms);

/* l with the header line appended; on failure l as it was and *bad set (a no-op once
 * *bad is set, so that a list is built with one check at the end). */
struct curl_slist *httpc_header(struct curl_slist *l, const char *line, int *bad);
/* Wipes every line of l (credentials pass through them), then frees it. */
void httpc_free_headers(struct curl_slist *l);

#endif
