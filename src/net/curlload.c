/* curlload — libcurl, loaded when a request first needs the network.
 *
 * mcpgate is not linked with libcurl: libcurl and its own libraries (a TLS library,
 * HTTP/2, IDN, Kerberos, LDAP, compression: about thirty) would otherwise be mapped and
 * relocated by the dynamic loader at every start, most of a CGI run's cost, although a
 * run answered from the state file (a cached token, the cached catalog) never talks to
 * another server. This file defines the libcurl functions the gateway calls, under
 * their own names and with <curl/curl.h>'s prototypes, so that httpc, introspect and
 * upstream* call libcurl as they would if it were linked. The first call of any of
 * them loads CURL_SONAME (configure: the file the linker would have recorded) with
 * dlopen, resolves them all with dlsym (dynload.c) and runs curl_global_init, once per process
 * (pthread_once: worker threads may race to it); each then forwards to libcurl's own.
 * When libcurl cannot be loaded (missing, or without one of the functions) that is
 * logged once with the loader's reason, and every call fails as libcurl reports a
 * failure: the handle constructors and curl_slist_append return NULL, the others
 * CURLE_FAILED_INIT or CURLM_INTERNAL_ERROR; the callers already treat those as "cannot
 * initialise libcurl". Freeing NULL loads nothing. */
#include "autoconf.h"

/* The functions are defined here: no type-checking macros in their place. */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "curlload.h"
#include "dynload.h"
#include "log.h"

#ifndef CURL_SONAME
#define CURL_SONAME "libcurl.so.4"
#endif

/* GnuTLS is among libcurl's libraries here only for protocols mcpgate never speaks
 * (librtmp's rtmps, libldap's ldaps), yet it initialises itself when loaded, its
 * PKCS #11 modules and all: 0.9 MiB of a process's resident pages, and CPU in a CGI
 * run's first network call. GNUTLS_NO_IMPLICIT_INIT=1 is GnuTLS's own switch for that
 * (a library that needs GnuTLS calls gnutls_global_init itself); an administrator's
 * own value is kept. */
void
curlload_env(void)
{
	(void)setenv("GNUTLS_NO_IMPLICIT_INIT", "1", 0);
}

/* libcurl's functions that the gateway calls, as dlsym found them. */
struct curl_fns {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	void (*easy_cleanup)(CURL *);
	void (*easy_reset)(CURL *);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	CURLcode (*easy_perform)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_cleanup)(CURLM *);
	CURLMcode (*multi_add_handle)(CURLM *, CURL *);
	CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
	CURLMcode (*multi_perform)(CURLM *, int *);
	CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned int, int, int *);
	CURLMsg *(*multi_info_read)(CURLM *, int *);
	const char *(*multi_strerror)(CURLMcode);
};
static struct curl_fns fn;

#define SYM(name)	{ "curl_" #name, offsetof(struct curl_fns, name) }
static const struct dynload_sym syms[] = {
	SYM(global_init), SYM(easy_init), SYM(easy_cleanup), SYM(easy_reset), SYM(easy_setopt),
	SYM(easy_getinfo), SYM(easy_perform), SYM(easy_strerror), SYM(slist_append),
	SYM(slist_free_all), SYM(multi_init), SYM(multi_cleanup), SYM(multi_add_handle),
	SYM(multi_remove_handle), SYM(multi_perform), SYM(multi_poll), SYM(multi_info_read),
	SYM(multi_strerror),
};
#undef SYM
_Static_assert(sizeof(syms) / sizeof(syms[0]) * sizeof(void (*)(void)) == sizeof(fn), "a name for every pointer");

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int usable;	/* written once, under once */
static const char not_loaded[] = "libcurl could not be loaded";

static void
load(void)
{
	struct gw_error err;

	if (dynload(CURL_SONAME, syms, sizeof(syms) / sizeof(syms[0]), &fn, &err) < 0)
		goto out;
	if (fn.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		gw_error_set(&err, GW_EINTERNAL, "curl_global_init failed");
		goto out;
	}
	usable = 1;
out:
	if (!usable)
		log_err(NULL, "libcurl: %s; requests needing another server fail", err.detail);
}

static int
ready(void)
{
	pthread_once(&once, load);
	return usable;
}

CURL *
curl_easy_init(void)
{
	return ready() ? fn.easy_init() : NULL;
}

void
curl_easy_cleanup(CURL *h)
{
	if (h && ready())
		fn.easy_cleanup(h);
}

void
curl_easy_reset(CURL *h)
{
	if (ready())
		fn.easy_reset(h);
}

/* The type of an option's argument is in its number (CURLOPTTYPE_*). */
CURLcode
curl_easy_setopt(CURL *h, CURLoption opt, ...)
{
	CURLcode rc;
	va_list ap;

	if (!ready())
		return CURLE_FAILED_INIT;
	va_start(ap, opt);
	if (opt < CURLOPTTYPE_OBJECTPOINT)
		rc = fn.easy_setopt(h, opt, va_arg(ap, long));
	else if (opt < CURLOPTTYPE_FUNCTIONPOINT)
		rc = fn.easy_setopt(h, opt, va_arg(ap, void *));
	else if (opt < CURLOPTTYPE_OFF_T)
		rc = fn.easy_setopt(h, opt, va_arg(ap, void (*)(void)));
	else if (opt < CURLOPTTYPE_BLOB)
		rc = fn.easy_setopt(h, opt, va_arg(ap, curl_off_t));
	else
		rc = fn.easy_setopt(h, opt, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

/* Every CURLINFO takes a pointer to where its value goes. */
CURLcode
curl_easy_getinfo(CURL *h, CURLINFO info, ...)
{
	CURLcode rc;
	va_list ap;

	if (!ready())
		return CURLE_FAILED_INIT;
	va_start(ap, info);
	rc = fn.easy_getinfo(h, info, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

CURLcode
curl_easy_perform(CURL *h)
{
	return ready() ? fn.easy_perform(h) : CURLE_FAILED_INIT;
}

const char *
curl_easy_strerror(CURLcode code)
{
	return ready() ? fn.easy_strerror(code) : not_loaded;
}

struct curl_slist *
curl_slist_append(struct curl_slist *l, const char *line)
{
	return ready() ? fn.slist_append(l, line) : NULL;
}

void
curl_slist_free_all(struct curl_slist *l)
{
	if (l && ready())
		fn.slist_free_all(l);
}

CURLM *
curl_multi_init(void)
{
	return ready() ? fn.multi_init() : NULL;
}

CURLMcode
curl_multi_cleanup(CURLM *m)
{
	if (m == NULL)
		return CURLM_BAD_HANDLE;
	return ready() ? fn.multi_cleanup(m) : CURLM_INTERNAL_ERROR;
}

CURLMcode
curl_multi_add_handle(CURLM *m, CURL *h)
{
	return ready() ? fn.multi_add_handle(m, h) : CURLM_INTERNAL_ERROR;
}

CURLMcode
curl_multi_remove_handle(CURLM *m, CURL *h)
{
	return ready() ? fn.multi_remove_handle(m, h) : CURLM_INTERNAL_ERROR;
}

CURLMcode
curl_multi_perform(CURLM *m, int *running)
{
	return ready() ? fn.multi_perform(m, running) : CURLM_INTERNAL_ERROR;
}

CURLMcode
curl_multi_poll(CURLM *m, struct curl_waitfd *extra, unsigned int n, int timeout_ms, int *ret)
{
	return ready() ? fn.multi_poll(m, extra, n, timeout_ms, ret) : CURLM_INTERNAL_ERROR;
}

CURLMsg *
curl_multi_info_read(CURLM *m, int *left)
{
	return ready() ? fn.multi_info_read(m, left) : NULL;
}

const char *
curl_multi_strerror(CURLMcode code)
{
	return ready() ? fn.multi_strerror(code) : not_loaded;
}
