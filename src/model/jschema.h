/* jschema — JSON Schema validation (2020-12 by default, draft-07 by $schema or option),
 * for a tool's input schema: compiled once, then used by many threads at once (a
 * compiled schema is read-only). Remote references are never fetched: a resolver the
 * caller gives may supply documents; the official metaschemas count as known and
 * accept everything. Every validation is bounded: instance depth, schema recursion and
 * a budget of keyword evaluations, so that no schema and instance can make it run long. */
#ifndef GW_JSCHEMA_H
#define GW_JSCHEMA_H

#include <stddef.h>

#include <jansson.h>

#include "err.h"

#define JSCHEMA_DRAFT_2020_12	0
#define JSCHEMA_DRAFT_07	1

#define JSCHEMA_MAX_DEPTH	64	/* instance nesting a validation follows */
#define JSCHEMA_MAX_RECURSION	256	/* subschemas within subschemas in one evaluation */
#define JSCHEMA_WORK		200000	/* keyword evaluations one validation may take */
#define JSCHEMA_MAX_NODES	20000	/* subschemas of a compiled schema, remote documents included */
#define JSCHEMA_MAX_DOCS	32	/* documents a resolver may add */
#define JSCHEMA_MAX_NAMES	4096	/* $ids and anchors */
#define JSCHEMA_MAX_PATTERNS	262144	/* instructions of all its patterns (regex_size) */
#define JSCHEMA_URI_MAX		1024

/* A document for an absolute URI (no fragment) the schema refers to: a new reference,
 * or NULL when unknown. Called during compile only. */
typedef json_t *(*jschema_resolver)(const char *uri, void *arg);

struct jschema_opts {
	int draft;			/* JSCHEMA_DRAFT_*, when the schema has no $schema naming one */
	int format_assert;		/* 1: "format" asserts the formats jschema knows */
	long work;			/* the budget; 0: JSCHEMA_WORK */
	jschema_resolver resolve;	/* NULL: no remote document */
	void *resolve_arg;
};

/* The first error of a validation that failed. */
struct jschema_error {
	char instance_path[256];	/* a JSON pointer into the instance ("" the whole) */
	char schema_path[256];		/* the keyword's JSON pointer, through the $refs followed */
	char keyword[32];
	char message[200];
};

struct jschema;

/* The compiled schema (schema is kept, with a reference of its own), or NULL with the
 * reason in err (NULL: not wanted): GW_EPARAMS and what is wrong (an unresolvable $ref,
 * a pattern regex.h does not support, a schema past the bounds), or GW_EINTERNAL when
 * memory ran out. o may be NULL (2020-12, no resolver). */
struct jschema *jschema_compile(json_t *schema, const struct jschema_opts *o, struct gw_error *err);
/* 1 valid, 0 invalid (e, if not NULL, says why), -1 when a bound was exceeded (e says
 * which): callers treat -1 as invalid. */
int jschema_validate(const struct jschema *s, json_t *instance, struct jschema_error *e);
void jschema_free(struct jschema *s);

#endif
