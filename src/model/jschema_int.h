/* jschema_int — what the schema compiler (jschema.c) hands the validator
 * (jschema_kw.c): the subschemas found, each with its $ref resolved and its patterns
 * compiled, looked up by the JSON value they are. Read-only once compiled. */
#ifndef GW_JSCHEMA_INT_H
#define GW_JSCHEMA_INT_H

#include <jansson.h>
#include <stdint.h>

#include "jschema.h"
#include "regex.h"

/* A schema resource: a document, or a subschema with an $id of its own. */
struct jres {
	char *uri;			/* absolute, without fragment ("" for a document without $id) */
	json_t *root;
	/* its $dynamicAnchors, for a $dynamicRef's dynamic scope */
	size_t ndyn;
	const char **dyn_name;
	json_t **dyn_target;
};

/* The keywords validation reads, each a bit of a node's has: an absent one (most of a
 * node's keywords are) costs a bit test, not a lookup. */
#define JSCHEMA_KEYWORDS(X) \
	X(TYPE, "type") \
	X(CONST, "const") \
	X(ENUM, "enum") \
	X(MINIMUM, "minimum") \
	X(MAXIMUM, "maximum") \
	X(EXCLUSIVEMINIMUM, "exclusiveMinimum") \
	X(EXCLUSIVEMAXIMUM, "exclusiveMaximum") \
	X(MULTIPLEOF, "multipleOf") \
	X(MINLENGTH, "minLength") \
	X(MAXLENGTH, "maxLength") \
	X(PATTERN, "pattern") \
	X(FORMAT, "format") \
	X(ITEMS, "items") \
	X(PREFIXITEMS, "prefixItems") \
	X(ADDITIONALITEMS, "additionalItems") \
	X(CONTAINS, "contains") \
	X(MINCONTAINS, "minContains") \
	X(MAXCONTAINS, "maxContains") \
	X(MINITEMS, "minItems") \
	X(MAXITEMS, "maxItems") \
	X(UNIQUEITEMS, "uniqueItems") \
	X(PROPERTIES, "properties") \
	X(PATTERNPROPERTIES, "patternProperties") \
	X(ADDITIONALPROPERTIES, "additionalProperties") \
	X(PROPERTYNAMES, "propertyNames") \
	X(MINPROPERTIES, "minProperties") \
	X(MAXPROPERTIES, "maxProperties") \
	X(REQUIRED, "required") \
	X(DEPENDENTREQUIRED, "dependentRequired") \
	X(DEPENDENTSCHEMAS, "dependentSchemas") \
	X(DEPENDENCIES, "dependencies") \
	X(ALLOF, "allOf") \
	X(ANYOF, "anyOf") \
	X(ONEOF, "oneOf") \
	X(NOT, "not") \
	X(IF, "if") \
	X(THEN, "then") \
	X(ELSE, "else") \
	X(UNEVALUATEDITEMS, "unevaluatedItems") \
	X(UNEVALUATEDPROPERTIES, "unevaluatedProperties") 

enum jkw {
#define X(id, name)	JK_##id,
	JSCHEMA_KEYWORDS(X)
#undef X
	JK_N
};
_Static_assert(JK_N <= 64, "a node's has holds a bit a keyword");
extern const char *const jschema_kw_names[JK_N];

/* A subschema that is an object. */
struct jnode {
	json_t *js;
	uint64_t has;			/* 1 << JK_x: keyword x is a member of js */
	const struct jres *res;
	int draft;			/* JSCHEMA_DRAFT_* */
	int uneval;			/* has unevaluatedProperties or unevaluatedItems */
	json_t *ref;			/* what $ref names (a boolean schema, or one with a node) */
	json_t *dynref;			/* what $dynamicRef names first */
	const char *dynname;		/* non-NULL: the $dynamicAnchor name it looks up in the dynamic scope */
	struct regex *pattern;
	struct regex **pprops;		/* patternProperties, in the object's order */
	size_t npprops;
};

struct jschema {
	json_t *root;
	int format_assert;
	long work;
	struct jnode **nodes;		/* open addressing on the json_t pointer; NULL: free slot */
	size_t nslots, nnodes;
	struct jres **res;
	size_t nres;
	json_t **docs;			/* the documents a resolver gave (references held) */
	size_t ndocs;
};

/* Keyword k of n's schema, or NULL. */
static inline json_t *
jschema_kw(const struct jnode *n, enum jkw k)
{
	return n->has >> k & 1 ? json_object_get(n->js, jschema_kw_names[k]) : NULL;
}

/* The node of sch (an object the compiler walked), or NULL. */
const struct jnode *jschema_node(const struct jschema *s, const json_t *sch);
/* ref resolved against base (RFC 3986 §5.2), into out (cap bytes): 0, or -1 when too long. */
int jschema_uri_resolve(const char *base, const char *ref, char *out, size_t cap);
/* The value a JSON pointer (percent-encoded, as a URI fragment) names under root, or NULL. */
json_t *jschema_pointer(json_t *root, const char *p);

/* Why an assertion failed, or a bound stopped it. */
struct jfail {
	const char *kw;
	char msg[200];
	long *work;		/* the validation's budget: patterns and uniqueItems spend it */
	int format_assert;	/* "format" asserts (jschema_format_ok) */
};
/* The assertions of n (type, enum, const, numbers, strings, arrays, objects) on inst:
 * 1 all hold, 0 one fails (f says which), -1 a bound stopped them (f->msg says which). */
int jschema_assert(const struct jnode *n, json_t *inst, struct jfail *f);

/* A count keyword's value (maxLength, minContains...) as a whole number in *n: 1, or 0
 * when absent or not whole (2.0 counts as 2). */
int jschema_count(const struct jnode *n, enum jkw k, json_int_t *out);
/* 0 when s (len bytes) is not of the format jschema knows by that name; 1 when it is,
 * or the format is not one it knows. */
int jschema_format_ok(const char *format, const char *s, size_t len);
/* What a search of a subject of len bytes costs of the work budget: one, and one more
 * for each 1024 of its VM steps at most. */
long jschema_search_cost(const struct regex *re, size_t len);
/* JSON equality: numbers by value (1 equals 1.0), objects whatever their order. */
int jschema_equal(json_t *a, json_t *b);

#endif
