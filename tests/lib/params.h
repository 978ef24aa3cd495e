/* params.h — a request's parameters for unit tests that make one (request_init's get):
 * a list "NAME", "VALUE", ..., NULL behind struct params, read by params_get. */
#ifndef GW_TEST_PARAMS_H
#define GW_TEST_PARAMS_H

#include <string.h>

struct params {
	const char *const *kv;	/* name, value, ..., NULL */
};

/* The value of the parameter name (ctx: a struct params), or NULL. */
static const char *__attribute__((unused))
params_get(void *ctx, const char *name)
{
	const char *const *kv = ((struct params *)ctx)->kv;

	for (; *kv; kv += 2)
		if (strcmp(kv[0], name) == 0)
			return kv[1];
	return NULL;
}

#endif
