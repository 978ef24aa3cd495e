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

#endif
