/* method — the table, from methods.def. */
#include "autoconf.h"

#include <stddef.h>
#include <string.h>

#include "method.h"

static const struct method methods[METHOD_N] = {
#define METHOD(id, name, flags, name_param, kind, route, capability, feature, unknown, handler) \
	{ METHOD_##id, name, flags, name_param, kind, route, capability, feature, unknown },
#include "methods.def"
#undef METHOD
};

const struct method *
method_list_of(enum catalog_kind kind)
{
	size_t i;

	for (i = 0; i < METHOD_N; i++)
		if ((methods[i].flags & MF_LIST) && methods[i].kind == kind)
			return &methods[i];
	return &methods[METHOD_TOOLS_LIST];	/* not reached: every kind has its list */
}

const struct method *
method_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < METHOD_N; i++)
		if (strcmp(methods[i].name, name) == 0)
			return &methods[i];
	return NULL;
}
