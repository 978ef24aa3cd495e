/* joseload — cjose (and with it OpenSSL's libcrypto), loaded when a token or a proof
 * first needs a signature checked.
 *
 * mcpgate is not linked with cjose: libcrypto, linked shared, is millions of
 * instructions of relocation at every start, and linked statically tens of thousands of
 * relative relocations and a megabyte of pages touched at every start — the cost of
 * every CGI run, although a gateway that introspects its tokens never checks a
 * signature, and a FastCGI process that loads libcurl then holds libcrypto twice. This
 * file defines the cjose functions jws.c calls, under their own names and with
 * <cjose/cjose.h>'s prototypes, as curlload.c does for libcurl. The first call of any
 * of them loads CJOSE_SONAME (configure: the file the linker would have recorded) with
 * dlopen (dynload.c) and resolves them all, once per process; each then forwards to cjose's own.
 * When cjose cannot be loaded that is logged once with the loader's reason, and every
 * call fails as cjose reports a failure (NULL, false, 0, with err set), which jws.c
 * takes as a key or a signature it cannot use. No jansson value crosses into cjose: it
 * has its own copy of jansson, whose objects hash their keys with another seed (keys go
 * to it as JSON text, cjose_jwk_import). Only this file and jws.c include cjose. */
#include "autoconf.h"

#include <cjose/cjose.h>
#include <pthread.h>
#include <stddef.h>

#include "dynload.h"
#include "log.h"

#ifndef CJOSE_SONAME
#define CJOSE_SONAME "libcjose.so.0"
#endif

/* cjose's functions that the gateway calls, as dlsym found them. */
struct cjose_fns {
	cjose_jwk_t *(*jwk_import)(const char *, size_t, cjose_err *);
	cjose_jwk_t *(*jwk_retain)(cjose_jwk_t *, cjose_err *);
	bool (*jwk_release)(cjose_jwk_t *);
	cjose_jwk_kty_t (*jwk_get_kty)(const cjose_jwk_t *, cjose_err *);
	size_t (*jwk_get_keysize)(const cjose_jwk_t *, cjose_err *);
	cjose_jwk_ec_curve (*jwk_EC_get_curve)(const cjose_jwk_t *, cjose_err *);
	cjose_jws_t *(*jws_import)(const char *, size_t, cjose_err *);
	bool (*jws_verify)(cjose_jws_t *, const cjose_jwk_t *, cjose_err *);
	void (*jws_release)(cjose_jws_t *);
};
static struct cjose_fns fn;

#define SYM(name)	{ "cjose_" #name, offsetof(struct cjose_fns, name) }
static const struct dynload_sym syms[] = {
	SYM(jwk_import), SYM(jwk_retain), SYM(jwk_release), SYM(jwk_get_kty), SYM(jwk_get_keysize),
	SYM(jwk_EC_get_curve), SYM(jws_import), SYM(jws_verify), SYM(jws_release),
};
#undef SYM
_Static_assert(sizeof(syms) / sizeof(syms[0]) * sizeof(void (*)(void)) == sizeof(fn), "a name for every pointer");

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int usable;	/* written once, under once */

static void
load(void)
{
	struct gw_error err;

	if (dynload(CJOSE_SONAME, syms, sizeof(syms) / sizeof(syms[0]), &fn, &err) == 0)
		usable = 1;
	else
		log_err(NULL, "cjose: %s; no JWT or DPoP proof can be verified", err.detail);
}

/* 1 when cjose is there; else 0 with err set. */
static int
ready(cjose_err *err)
{
	pthread_once(&once, load);
	if (!usable && err) {
		err->code = CJOSE_ERR_INVALID_STATE;
		err->message = "cjose could not be loaded";
		err->function = __func__;
		err->file = __FILE__;
		err->line = __LINE__;
	}
	return usable;
}

cjose_jwk_t *
cjose_jwk_import(const char *json, size_t len, cjose_err *err)
{
	return ready(err) ? fn.jwk_import(json, len, err) : NULL;
}

cjose_jwk_t *
cjose_jwk_retain(cjose_jwk_t *jwk, cjose_err *err)
{
	return jwk && ready(err) ? fn.jwk_retain(jwk, err) : NULL;
}

bool
cjose_jwk_release(cjose_jwk_t *jwk)
{
	return jwk && ready(NULL) ? fn.jwk_release(jwk) : false;	/* a key means cjose is loaded */
}

cjose_jwk_kty_t
cjose_jwk_get_kty(const cjose_jwk_t *jwk, cjose_err *err)
{
	return ready(err) ? fn.jwk_get_kty(jwk, err) : (cjose_jwk_kty_t)0;
}

size_t
cjose_jwk_get_keysize(const cjose_jwk_t *jwk, cjose_err *err)
{
	return ready(err) ? fn.jwk_get_keysize(jwk, err) : 0;
}

/* cjose's prototype returns a const value: clang wants it repeated, gcc warns that it
 * means nothing. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-qualifiers"
const cjose_jwk_ec_curve
cjose_jwk_EC_get_curve(const cjose_jwk_t *jwk, cjose_err *err)
{
	return ready(err) ? fn.jwk_EC_get_curve(jwk, err) : CJOSE_JWK_EC_INVALID;
}
#pragma GCC diagnostic pop

cjose_jws_t *
cjose_jws_import(const char *compact, size_t compact_len, cjose_err *err)
{
	return ready(err) ? fn.jws_import(compact, compact_len, err) : NULL;
}

bool
cjose_jws_verify(cjose_jws_t *jws, const cjose_jwk_t *jwk, cjose_err *err)
{
	return ready(err) ? fn.jws_verify(jws, jwk, err) : false;
}

void
cjose_jws_release(cjose_jws_t *jws)
{
	if (jws && ready(NULL))
		fn.jws_release(jws);
}
