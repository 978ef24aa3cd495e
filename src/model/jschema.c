/* jschema — the compiler: walks a schema document along the keywords that hold
 * subschemas (a value under "const" or an unknown keyword is data, not a schema), gives
 * each subschema its base URI (RFC 3986 resolution of the $ids above it), records the
 * $ids, $anchors and $dynamicAnchors, then resolves every $ref and $dynamicRef once, and
 * compiles the patterns. The validator (jschema_kw.c) then only looks things up. */
#include "autoconf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jschema_int.h"
#include "regex.h"

#define WALK_DEPTH	128		/* subschemas within subschemas a document may nest */
#define META_2020	"https://json-schema.org/draft/2020-12/schema"
#define META_07		"http://json-schema.org/draft-07/schema"

/* A name a $ref may use: an $id's URI, or an anchor's URI#name. */
struct jname {
	char *uri;
	json_t *target;
	struct jres *res;
};

/* The compile in progress. */
struct jcomp {
	struct jschema *s;
	const struct jschema_opts *o;
	struct jname *names;
	size_t nnames, namecap;
	size_t insns;		/* of the patterns compiled so far */
	struct gw_error *err;
	int failed;		/* err is set: the first error stands */
};

/* Keywords whose value is one subschema, an object of them, an array of them. */
static const char *const kw_one[] = {
	"additionalProperties", "unevaluatedProperties", "unevaluatedItems", "items", "contains",
	"propertyNames", "not", "if", "then", "else", "additionalItems", NULL,
};
static const char *const kw_map[] = {
	"$defs", "definitions", "properties", "patternProperties", "dependentSchemas", "dependencies", NULL,
};
static const char *const kw_list[] = { "allOf", "anyOf", "oneOf", "prefixItems", "items", NULL };

/* The first error only: GW_EPARAMS, the schema is what is wrong (a tool's input schema
 * a caller's arguments cannot be checked against); -1. */
static int __attribute__((format(printf, 2, 3)))
cfail(struct jcomp *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->failed) {
		c->failed = 1;
		va_start(ap, fmt);
		vsnprintf(c->err->detail, sizeof(c->err->detail), fmt, ap);
		va_end(ap);
		c->err->code = GW_EPARAMS;
		c->err->rpc = 0;
	}
	return -1;
}

/* Memory ran out: GW_EINTERNAL, the gateway's failure and not the schema's; -1. */
static int
cnomem(struct jcomp *c)
{
	if (!c->failed) {
		c->failed = 1;
		gw_error_set(c->err, GW_EINTERNAL, "out of memory");
	}
	return -1;
}

/* --- the walk ----------------------------------------------------------------------- */

static uintptr_t
slot_of(const void *p, size_t nslots)
{
	return (((uintptr_t)p >> 4) * (uintptr_t)0x9e3779b97f4a7c15ull) & (nslots - 1);
}

const struct jnode *
jschema_node(const struct jschema *s, const json_t *sch)
{
	size_t i;

	if (s->nslots == 0)
		return NULL;
	for (i = slot_of(sch, s->nslots); s->nodes[i] != NULL; i = (i + 1) & (s->nslots - 1))
		if (s->nodes[i]->js == sch)
			return s->nodes[i];
	return NULL;
}

static int
add_node(struct jcomp *c, struct jnode *n)
{
	struct jschema *s = c->s;
	struct jnode **old = s->nodes, **t;
	size_t i, nold = s->nslots;

	if (s->nnodes >= JSCHEMA_MAX_NODES)
		return cfail(c, "schema: more than %d subschemas", JSCHEMA_MAX_NODES);
	if ((s->nnodes + 1) * 2 > s->nslots) {
		if ((t = calloc(nold ? nold * 2 : 64, sizeof(*t))) == NULL)
			return cnomem(c);
		s->nodes = t;
		s->nslots = nold ? nold * 2 : 64;
		for (i = 0; i < nold; i++)
			if (old[i] != NULL) {
				size_t j = slot_of(old[i]->js, s->nslots);

				while (t[j] != NULL)
					j = (j + 1) & (s->nslots - 1);
				t[j] = old[i];
			}
		free(old);
	}
	for (i = slot_of(n->js, s->nslots); s->nodes[i] != NULL; i = (i + 1) & (s->nslots - 1))
		;
	s->nodes[i] = n;
	s->nnodes++;
	return 0;
}

static int
add_name(struct jcomp *c, const char *uri, json_t *target, struct jres *res)
{
	struct jname *t;
	size_t i;

	for (i = 0; i < c->nnames; i++)
		if (strcmp(c->names[i].uri, uri) == 0)
			return 0;	/* the first wins */
	if (c->nnames >= JSCHEMA_MAX_NAMES)
		return cfail(c, "schema: more than %d $ids and anchors", JSCHEMA_MAX_NAMES);
	if (c->nnames == c->namecap) {
		c->namecap = c->namecap ? c->namecap * 2 : 32;
		if ((t = realloc(c->names, c->namecap * sizeof(*t))) == NULL)
			return cnomem(c);
		c->names = t;
	}
	if ((c->names[c->nnames].uri = strdup(uri)) == NULL)
		return cnomem(c);
	c->names[c->nnames].target = target;
	c->names[c->nnames++].res = res;
	return 0;
}

static struct jres *
add_res(struct jcomp *c, const char *uri, json_t *root)
{
	struct jschema *s = c->s;
	struct jres **t, *r;

	if ((t = realloc(s->res, (s->nres + 1) * sizeof(*t))) == NULL)
		return cnomem(c), NULL;
	s->res = t;
	if ((r = calloc(1, sizeof(*r))) == NULL || (r->uri = strdup(uri)) == NULL) {
		free(r);
		return cnomem(c), NULL;
	}
	r->root = root;
	s->res[s->nres++] = r;
	return r;
}

static int
add_dyn(struct jcomp *c, struct jres *r, const char *name, json_t *target)
{
	const char **nn;
	json_t **nt;

	if ((nn = realloc(r->dyn_name, (r->ndyn + 1) * sizeof(*nn))) == NULL)
		return cnomem(c);
	r->dyn_name = nn;
	if ((nt = realloc(r->dyn_target, (r->ndyn + 1) * sizeof(*nt))) == NULL)
		return cnomem(c);
	r->dyn_target = nt;
	nn[r->ndyn] = name;
	nt[r->ndyn++] = target;
	return 0;
}

/* The draft a $schema names, or -1 when it names none jschema knows. */
static int
draft_of(const char *meta)
{
	size_t n = strlen(meta);

	if (n > 0 && meta[n - 1] == '#')
		n--;
	if (n == strlen(META_2020) && strncmp(meta, META_2020, n) == 0)
		return JSCHEMA_DRAFT_2020_12;
	if ((n == strlen(META_07) && strncmp(meta, META_07, n) == 0) ||
	    (n == strlen(META_07) + 1 && strncmp(meta, "https://json-schema.org/draft-07/schema", n) == 0))
		return JSCHEMA_DRAFT_07;
	return -1;
}

static int walk(struct jcomp *c, json_t *sch, const char *base, struct jres *res, int draft, int depth);

/* The subschemas under the keywords of sch that hold them. */
static int
walk_children(struct jcomp *c, json_t *sch, const char *base, struct jres *res, int draft, int depth)
{
	const char *k;
	json_t *v, *m;
	size_t i, j;

	for (i = 0; kw_one[i] != NULL; i++)
		if ((v = json_object_get(sch, kw_one[i])) != NULL && (json_is_object(v) || json_is_boolean(v)) &&
		    walk(c, v, base, res, draft, depth + 1) < 0)
			return -1;
	for (i = 0; kw_map[i] != NULL; i++)
		if ((v = json_object_get(sch, kw_map[i])) != NULL && json_is_object(v))
			json_object_foreach(v, k, m)
				if ((json_is_object(m) || json_is_boolean(m)) && walk(c, m, base, res, draft, depth + 1) < 0)
					return -1;
	for (i = 0; kw_list[i] != NULL; i++)
		if ((v = json_object_get(sch, kw_list[i])) != NULL && json_is_array(v))
			json_array_foreach(v, j, m)
				if ((json_is_object(m) || json_is_boolean(m)) && walk(c, m, base, res, draft, depth + 1) < 0)
					return -1;
	return 0;
}

const char *const jschema_kw_names[JK_N] = {
#define X(id, name)	[JK_##id] = name,
	JSCHEMA_KEYWORDS(X)
#undef X
};

/* Which of the keywords validation reads sch has (struct jnode's has). */
static uint64_t
keywords_of(json_t *sch)
{
	uint64_t has = 0;
	const char *key;
	json_t *v;
	int k;

	json_object_foreach(sch, key, v)
		for (k = 0; k < JK_N; k++)
			if (strcmp(key, jschema_kw_names[k]) == 0) {
				has |= (uint64_t)1 << k;
				break;
			}
	return has;
}

/* One subschema's identifiers ($schema, $id, $anchor, $dynamicAnchor, each with
 * its draft's rule) and its node, in the order the base URI needs them. */
static int
walk(struct jcomp *c, json_t *sch, const char *base, struct jres *res, int draft, int depth)
{
	char uri[JSCHEMA_URI_MAX], anchor[JSCHEMA_URI_MAX];
	const char *id, *a, *meta;
	struct jnode *n;
	size_t k;
	int d;

	if (!json_is_object(sch))
		return 0;
	if (depth > WALK_DEPTH)
		return cfail(c, "schema: nested deeper than %d", WALK_DEPTH);
	if (jschema_node(c->s, sch) != NULL)
		return 0;	/* reached twice (a $ref's target walked again) */
	if ((meta = json_string_value(json_object_get(sch, "$schema"))) != NULL && (d = draft_of(meta)) >= 0)
		draft = d;
	id = json_string_value(json_object_get(sch, "$id"));
	if (draft == JSCHEMA_DRAFT_07 && json_object_get(sch, "$ref") != NULL)
		id = NULL;	/* draft-07: $ref's siblings are ignored */
	if (id != NULL) {
		if (jschema_uri_resolve(base, id, uri, sizeof(uri)) < 0)
			return cfail(c, "schema: an $id too long");
		if (id[0] == '#' && draft == JSCHEMA_DRAFT_07) {
			if (add_name(c, uri, sch, res) < 0)	/* draft-07's anchor */
				return -1;
		} else {
			if ((k = strlen(uri)) > 0 && uri[k - 1] == '#')
				uri[k - 1] = '\0';	/* an empty fragment names the resource */
			if ((res = add_res(c, uri, sch)) == NULL || add_name(c, res->uri, sch, res) < 0)
				return -1;
			base = res->uri;
		}
	}
	if ((n = calloc(1, sizeof(*n))) == NULL)
		return cnomem(c);
	n->js = sch;
	n->res = res;
	n->draft = draft;
	n->has = keywords_of(sch);
	n->uneval = (n->has >> JK_UNEVALUATEDPROPERTIES & 1) || (n->has >> JK_UNEVALUATEDITEMS & 1);
	if (add_node(c, n) < 0) {
		free(n);
		return -1;
	}
	if (draft == JSCHEMA_DRAFT_2020_12) {
		if ((a = json_string_value(json_object_get(sch, "$anchor"))) != NULL) {
			if ((size_t)snprintf(anchor, sizeof(anchor), "%s#%s", base, a) >= sizeof(anchor) ||
			    add_name(c, anchor, sch, res) < 0)
				return cfail(c, "schema: an $anchor too long");
		}
		if ((a = json_string_value(json_object_get(sch, "$dynamicAnchor"))) != NULL) {
			if ((size_t)snprintf(anchor, sizeof(anchor), "%s#%s", base, a) >= sizeof(anchor) ||
			    add_name(c, anchor, sch, res) < 0 || add_dyn(c, res, a, sch) < 0)
				return cfail(c, "schema: a $dynamicAnchor too long");
		}
	}
	return walk_children(c, sch, base, res, draft, depth);
}

/* --- references ---------------------------------------------------------------------- */

static const struct jname *
find_name(const struct jcomp *c, const char *uri)
{
	size_t i;

	for (i = 0; i < c->nnames; i++)
		if (strcmp(c->names[i].uri, uri) == 0)
			return &c->names[i];
	return NULL;
}

/* A resolver's document for the absolute URI doc, walked as a resource of its own: 1,
 * 0 when there is none, -1 on error. */
static int
load_remote(struct jcomp *c, const char *doc, int draft)
{
	struct jschema *s = c->s;
	struct jres *res;
	json_t *d, **t;

	if (c->o == NULL || c->o->resolve == NULL || s->ndocs >= JSCHEMA_MAX_DOCS ||
	    (d = c->o->resolve(doc, c->o->resolve_arg)) == NULL)
		return 0;
	if ((t = realloc(s->docs, (s->ndocs + 1) * sizeof(*t))) == NULL) {
		json_decref(d);
		return cnomem(c);
	}
	s->docs = t;
	s->docs[s->ndocs++] = d;
	if ((res = add_res(c, doc, d)) == NULL || add_name(c, doc, d, res) < 0)
		return -1;
	return walk(c, d, doc, res, draft, 0) < 0 ? -1 : 1;
}

/* What ref (a $ref's value, in the node n) names: a schema value, or NULL with the error set. */
static json_t *
resolve(struct jcomp *c, const struct jnode *n, const char *ref)
{
	char uri[JSCHEMA_URI_MAX], doc[JSCHEMA_URI_MAX];
	const struct jname *nm;
	const char *frag;
	json_t *t = NULL;
	int tries, rc;

	if (jschema_uri_resolve(n->res->uri, ref, uri, sizeof(uri)) < 0)
		return cfail(c, "schema: a $ref too long"), NULL;
	frag = strchr(uri, '#');
	snprintf(doc, sizeof(doc), "%.*s", (int)(frag ? (size_t)(frag - uri) : strlen(uri)), uri);
	frag = frag ? frag + 1 : "";
	for (tries = 0; tries < 2; tries++) {
		if (*frag == '\0' || *frag == '/') {
			if ((nm = find_name(c, doc)) != NULL && (t = jschema_pointer(nm->target, frag)) != NULL) {
				if ((json_is_object(t) || json_is_boolean(t)) &&
				    walk(c, t, nm->res->uri, nm->res, n->draft, 0) < 0)
					return NULL;
				return t;
			}
		} else if ((nm = find_name(c, uri)) != NULL)
			return nm->target;
		if (tries > 0 || find_name(c, doc) != NULL)
			break;
		if ((rc = load_remote(c, doc, n->draft)) < 0)
			return NULL;
		if (rc == 0)
			break;
	}
	if (draft_of(doc) >= 0)
		return json_true();	/* a metaschema: known, and not checked against */
	return cfail(c, "schema: $ref \"%s\" names nothing known (remote references are never fetched)", ref), NULL;
}

/* A pattern compiled, within the cap on all of a schema's; NULL with the error set. */
static struct regex *
pattern(struct jcomp *c, const char *p)
{
	struct regex *re;

	if ((re = regex_compile(p, c->err)) == NULL) {
		c->failed = 1;
		return NULL;
	}
	if ((c->insns += regex_size(re)) > JSCHEMA_MAX_PATTERNS) {
		regex_free(re);
		return cfail(c, "schema: its patterns are too large together (over %d instructions)",
		    JSCHEMA_MAX_PATTERNS), NULL;
	}
	return re;
}

/* One node's $ref and $dynamicRef resolved, its patterns compiled. */
static int
link_node(struct jcomp *c, struct jnode *n)
{
	const char *ref, *k, *frag;
	json_t *pp, *v, *t;
	size_t j = 0;

	pp = json_object_get(n->js, "patternProperties");
	if ((n->pprops = calloc(json_is_object(pp) ? json_object_size(pp) + 1 : 1, sizeof(*n->pprops))) == NULL)
		return cnomem(c);
	if ((ref = json_string_value(json_object_get(n->js, "$ref"))) != NULL &&
	    (n->ref = resolve(c, n, ref)) == NULL)
		return -1;
	if (n->draft == JSCHEMA_DRAFT_2020_12 &&
	    (ref = json_string_value(json_object_get(n->js, "$dynamicRef"))) != NULL) {
		if ((n->dynref = resolve(c, n, ref)) == NULL)
			return -1;
		frag = strchr(ref, '#');
		/* dynamic only when the first target has the same $dynamicAnchor */
		if (frag != NULL && frag[1] != '/' && frag[1] != '\0' && json_is_object(n->dynref) &&
		    (t = json_object_get(n->dynref, "$dynamicAnchor")) != NULL &&
		    json_is_string(t) && strcmp(json_string_value(t), frag + 1) == 0)
			n->dynname = json_string_value(t);
	}
	if ((v = json_object_get(n->js, "pattern")) != NULL && json_is_string(v) &&
	    (n->pattern = pattern(c, json_string_value(v))) == NULL)
		return -1;
	if (json_is_object(pp))
		json_object_foreach(pp, k, v) {
			if ((n->pprops[j] = pattern(c, k)) == NULL)
				return -1;
			n->npprops = ++j;
		}
	return 0;
}

/* Every node linked, in rounds: resolving a $ref may add nodes (a remote document, a
 * target no keyword reaches) and reorder the table. pprops marks a node linked. */
static int
link_nodes(struct jcomp *c)
{
	struct jschema *s = c->s;
	struct jnode *n;
	int again = 1;
	size_t i;

	while (again) {
		again = 0;
		for (i = 0; i < s->nslots; i++) {
			if ((n = s->nodes[i]) == NULL || n->pprops != NULL)
				continue;
			if (link_node(c, n) < 0)
				return -1;
			again = 1;
		}
	}
	return 0;
}

struct jschema *
jschema_compile(json_t *schema, const struct jschema_opts *o, struct gw_error *err)
{
	struct jcomp c;
	struct jschema *s;
	struct jres *res;
	struct gw_error ignored;
	size_t i;
	int ok = 0;

	memset(&c, 0, sizeof(c));
	c.o = o;
	c.err = err != NULL ? err : &ignored;
	if (!json_is_object(schema) && !json_is_boolean(schema))
		return cfail(&c, "schema: neither an object nor a boolean"), NULL;
	if ((s = c.s = calloc(1, sizeof(*s))) == NULL)
		return cnomem(&c), NULL;
	s->root = json_incref(schema);
	s->format_assert = o ? o->format_assert : 0;
	s->work = o && o->work > 0 ? o->work : JSCHEMA_WORK;
	if ((res = add_res(&c, "", schema)) == NULL || add_name(&c, "", schema, res) < 0 ||
	    walk(&c, schema, "", res, o ? o->draft : JSCHEMA_DRAFT_2020_12, 0) < 0 || link_nodes(&c) < 0)
		goto out;
	ok = 1;
out:
	for (i = 0; i < c.nnames; i++)
		free(c.names[i].uri);
	free(c.names);
	if (!ok) {
		jschema_free(s);
		return NULL;
	}
	return s;
}

void
jschema_free(struct jschema *s)
{
	size_t i, j;

	if (s == NULL)
		return;
	for (i = 0; i < s->nslots; i++) {
		if (s->nodes[i] == NULL)
			continue;
		regex_free(s->nodes[i]->pattern);
		for (j = 0; j < s->nodes[i]->npprops; j++)
			regex_free(s->nodes[i]->pprops[j]);
		free(s->nodes[i]->pprops);
		free(s->nodes[i]);
	}
	free(s->nodes);
	for (i = 0; i < s->nres; i++) {
		free(s->res[i]->uri);
		free(s->res[i]->dyn_name);
		free(s->res[i]->dyn_target);
		free(s->res[i]);
	}
	free(s->res);
	for (i = 0; i < s->ndocs; i++)
		json_decref(s->docs[i]);
	free(s->docs);
	json_decref(s->root);
	free(s);
}
