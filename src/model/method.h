/* method — the one table of the MCP methods the gateway knows, by name, made from
 * methods.def: in which revisions the exchange offers each (mcp_methods.c takes each
 * row's handler from the same file), which catalog kind it lists or names, and, for
 * what an upstream serves, how federation finds that upstream (federate.c). */
#ifndef GW_METHOD_H
#define GW_METHOD_H

#include "catalog.h"

enum method_id {
#define METHOD(id, name, flags, name_param, kind, route, capability, feature, unknown, handler) METHOD_##id,
#include "methods.def"
#undef METHOD
	METHOD_N
};

enum {
	MF_LEGACY = 1 << 0,	/* offered to the revisions of initialize */
	MF_MODERN = 1 << 1,	/* offered to 2026-07-28 */
	MF_NO_BATCH = 1 << 2,
	MF_PRIVATE = 1 << 3,	/* the answer is per caller: Cache-Control private, Vary Authorization */
	MF_UPSTREAM = 1 << 4,	/* offered only when an upstream the caller reaches offers it */
	MF_LIST = 1 << 5,	/* a page of the catalog's records of kind */
};

/* How federation finds the upstream a request goes to. */
enum method_route {
	ROUTE_NONE,	/* the gateway answers it itself */
	ROUTE_BY_NAME,	/* params.name, an exposed tool or prompt name */
	ROUTE_BY_URI,	/* params.uri: a listed resource, a template's expansion, or the one upstream with resources */
	ROUTE_BY_REF,	/* completion/complete: params.ref, a prompt or a resource (template) */
	ROUTE_TO_ALL,	/* every upstream that offers the capability */
};

struct method {
	enum method_id id;
	const char *name;
	unsigned flags;
	const char *name_param;		/* the params member the Mcp-Name header repeats */
	enum catalog_kind kind;		/* MF_LIST: what it pages through; ROUTE_BY_NAME: what it names */
	enum method_route route;
	const char *capability;		/* the server capability that offers it; NULL: the gateway's own */
	const char *feature;		/* a member of the capability that must be true, or NULL */
	const char *unknown;		/* ROUTE_BY_NAME: the error message for a name not in the catalog */
};

/* The row of name, or NULL. */
const struct method *method_find(const char *name);
/* The list method of kind (MF_LIST): its name is what the catalog asks upstreams, its
 * capability what an upstream must announce to be asked. */
const struct method *method_list_of(enum catalog_kind kind);

#endif
