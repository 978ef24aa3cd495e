/* method — the table. */
#include "autoconf.h"

#include <stddef.h>
#include <string.h>

#include "method.h"

#define LEGACY_MODERN	(MF_LEGACY | MF_MODERN)

static const struct method methods[METHOD_N] = {
	{ METHOD_INITIALIZE, "initialize", MF_LEGACY | MF_NO_BATCH, NULL, CATALOG_TOOLS,
	    ROUTE_NONE, NULL, NULL, NULL },
	{ METHOD_PING, "ping", MF_LEGACY, NULL, CATALOG_TOOLS, ROUTE_NONE, NULL, NULL, NULL },
	{ METHOD_DISCOVER, "server/discover", MF_MODERN, NULL, CATALOG_TOOLS, ROUTE_NONE, NULL, NULL, NULL },
	{ METHOD_TOOLS_LIST, "tools/list", LEGACY_MODERN | MF_PRIVATE | MF_LIST, NULL, CATALOG_TOOLS,
	    ROUTE_NONE, "tools", NULL, NULL },
	{ METHOD_PROMPTS_LIST, "prompts/list", LEGACY_MODERN | MF_PRIVATE | MF_LIST | MF_UPSTREAM, NULL,
	    CATALOG_PROMPTS, ROUTE_NONE, "prompts", NULL, NULL },
	{ METHOD_RESOURCES_LIST, "resources/list", LEGACY_MODERN | MF_PRIVATE | MF_LIST | MF_UPSTREAM, NULL,
	    CATALOG_RESOURCES, ROUTE_NONE, "resources", NULL, NULL },
	{ METHOD_TEMPLATES_LIST, "resources/templates/list", LEGACY_MODERN | MF_PRIVATE | MF_LIST | MF_UPSTREAM,
	    NULL, CATALOG_TEMPLATES, ROUTE_NONE, "resources", NULL, NULL },
	{ METHOD_TOOLS_CALL, "tools/call", LEGACY_MODERN, "name", CATALOG_TOOLS,
	    ROUTE_BY_NAME, "tools", NULL, "Unknown tool" },
	{ METHOD_PROMPTS_GET, "prompts/get", LEGACY_MODERN | MF_UPSTREAM, "name", CATALOG_PROMPTS,
	    ROUTE_BY_NAME, "prompts", NULL, "Unknown prompt" },
	{ METHOD_RESOURCES_READ, "resources/read", LEGACY_MODERN | MF_UPSTREAM, "uri", CATALOG_RESOURCES,
	    ROUTE_BY_URI, "resources", NULL, NULL },
	{ METHOD_COMPLETE, "completion/complete", LEGACY_MODERN | MF_UPSTREAM, NULL, CATALOG_PROMPTS,
	    ROUTE_BY_REF, "completions", NULL, NULL },
	/* Updates come on the caller's GET stream, from its own session at the upstream.
	 * 2026-07-28 has subscriptions/listen instead (not offered yet). */
	{ METHOD_SUBSCRIBE, "resources/subscribe", MF_LEGACY | MF_UPSTREAM, NULL, CATALOG_RESOURCES,
	    ROUTE_BY_URI, "resources", "subscribe", NULL },
	{ METHOD_UNSUBSCRIBE, "resources/unsubscribe", MF_LEGACY | MF_UPSTREAM, NULL, CATALOG_RESOURCES,
	    ROUTE_BY_URI, "resources", "subscribe", NULL },
	/* 2026-07-28 removed it. */
	{ METHOD_SET_LEVEL, "logging/setLevel", MF_LEGACY | MF_UPSTREAM, NULL, CATALOG_TOOLS,
	    ROUTE_TO_ALL, "logging", NULL, NULL },
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
