/* schemas — a thread's compiled tool schemas: each tool's inputSchema and outputSchema,
 * compiled (jschema.h) the first time a call of it needs them and kept while the
 * catalog that holds the tool is in use, so that a call validates and never compiles.
 * Kept by catalog document (a reference of its own, so that another document cannot
 * take its address meanwhile) and tool index, for the few documents used last (the
 * shared catalog, and callers' own); one thread's, never shared. */
#ifndef GW_SCHEMAS_H
#define GW_SCHEMAS_H

#include <jansson.h>

#include "config.h"
#include "jschema.h"

#define SCHEMAS_DOCS		4	/* catalog documents kept at once */
#define SCHEMAS_REASON_MAX	200

/* How a tool's schemas are read: the dialect of a schema without $schema, and whether
 * "format" asserts (jschema_opts). */
struct schemas_opts {
	int draft;
	int format_assert;
};

/* What a tool's schemas compiled to: in and out NULL where the tool declares none, or
 * where its schema did not compile (in_failed, out_failed, with the reason); fresh when
 * this schemas_of compiled them (what failed is worth saying then, once). Valid until
 * the next schemas_of of the thread. */
struct tool_schemas {
	const struct jschema *in, *out;
	int in_failed, out_failed;
	char in_reason[SCHEMAS_REASON_MAX], out_reason[SCHEMAS_REASON_MAX];
	int fresh;
};

/* How the schemas of upstream up's tools in catalog doc are read: a schema without
 * $schema in the dialect of the upstream's revision (2020-12 since 2025-11-25 made it
 * MCP's default, draft-07, what the SDKs wrote, before); format per validate-formats. */
void schemas_opts_of(json_t *doc, const struct cfg_upstream *up, struct schemas_opts *o);

struct schemas;

struct schemas *schemas_new(void);	/* NULL when out of memory */
void schemas_free(struct schemas *c);

/* The schemas of tool ix of doc (catalog.h) read with o: compiled now when they are not
 * yet (or were with other options). 0, or -1 without memory (or no such tool). */
int schemas_of(struct schemas *c, json_t *doc, size_t ix, const struct schemas_opts *o,
    const struct tool_schemas **out);

#endif
