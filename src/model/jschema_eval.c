/* jschema_eval — the validator: a compiled schema's keywords applied to an instance.
 * Each subschema's result is 1 valid, 0 invalid, -1 a bound exceeded (which ends the
 * validation). The first failure not inside anyOf, oneOf, not or if is the error
 * reported. unevaluatedProperties and unevaluatedItems see what the keywords beside
 * them evaluated: an evaluation fills in which members (items) of its instance it
 * evaluated, and a subschema that fails gives none. */
#include "autoconf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jschema_int.h"
#include "regex.h"

#define SPATH_MAX	(2 * JSCHEMA_MAX_RECURSION + 8)
#define D07		JSCHEMA_DRAFT_07

#define TRY(x) do { int r_ = (x); if (r_ <= 0) return r_; } while (0)

/* A step of a JSON pointer: a name, or (key NULL) an index; no step at all when key is
 * NULL and idx is -1 (no_step: a keyword's only subschema). */
struct seg {
	const char *key;
	size_t idx;
};

static const struct seg no_step = { NULL, (size_t)-1 };

static struct seg
key_step(const char *key)
{
	struct seg s = { key, 0 };

	return s;
}

static struct seg
idx_step(size_t idx)
{
	struct seg s = { NULL, idx };

	return s;
}

struct vctx {
	const struct jschema *s;
	long work;
	int depth, quiet, reported;
	struct jschema_error *e;
	const char *kw;		/* the keyword whose subschema is being applied */
	struct seg ip[JSCHEMA_MAX_DEPTH + 1];
	int nip;
	struct seg sp[SPATH_MAX];
	int nsp;
	const struct jres *scope[JSCHEMA_MAX_RECURSION + 1];	/* the dynamic scope, outermost first */
	int nscope;
};

/* Which members or items of an instance the keywords evaluated: a byte each, in the
 * object's order. */
struct ann {
	unsigned char *seen;
	size_t n;
	unsigned char small[32];
};

static int eval(struct vctx *c, json_t *sch, json_t *inst, struct ann *ann);

static int
ann_init(struct ann *a, const json_t *inst)
{
	a->n = json_is_array(inst) ? json_array_size(inst) : json_is_object(inst) ? json_object_size(inst) : 0;
	a->seen = a->n <= sizeof(a->small) ? a->small : calloc(a->n, 1);
	memset(a->small, 0, sizeof(a->small));
	return a->seen == NULL ? -1 : 0;
}

static void
ann_free(struct ann *a)
{
	if (a->seen != a->small)
		free(a->seen);
}

static void
ann_merge(struct ann *to, const struct ann *from)
{
	size_t i;

	for (i = 0; i < to->n && i < from->n; i++)
		to->seen[i] |= from->seen[i];
}

/* The pointer of steps, escaped, into out (cap bytes, cut), then kw if not NULL. */
static void
pointer_of(const struct seg *seg, int n, const char *kw, char *out, size_t cap)
{
	size_t len = 0;
	const char *k;
	int i;

	out[0] = '\0';
	for (i = 0; i <= n && len + 1 < cap; i++) {
		if (i == n && kw == NULL)
			break;
		out[len++] = '/';
		if (i < n && seg[i].key == NULL) {
			len += (size_t)snprintf(out + len, cap - len, "%zu", seg[i].idx);
			len = len < cap ? len : cap - 1;
			continue;
		}
		for (k = i < n ? seg[i].key : kw; *k && len + 2 < cap; k++) {
			if (*k == '~' || *k == '/') {
				out[len++] = '~';
				out[len++] = *k == '~' ? '0' : '1';
			} else
				out[len++] = *k;
		}
	}
	out[len < cap ? len : cap - 1] = '\0';
}

/* Records a failure, the first reported one only: keyword kw, the schema path the
 * subschemas entered, then append when not NULL; 0. */
static int __attribute__((format(printf, 4, 0)))
vrecord(struct vctx *c, const char *kw, const char *append, const char *fmt, va_list ap)
{
	if (c->quiet || c->reported || c->e == NULL)
		return 0;
	c->reported = 1;
	pointer_of(c->ip, c->nip, NULL, c->e->instance_path, sizeof(c->e->instance_path));
	pointer_of(c->sp, c->nsp, append, c->e->schema_path, sizeof(c->e->schema_path));
	snprintf(c->e->keyword, sizeof(c->e->keyword), "%s", kw);
	vsnprintf(c->e->message, sizeof(c->e->message), fmt, ap);
	return 0;
}

/* The failure of keyword kw of the subschema here; 0. */
static int __attribute__((format(printf, 3, 4)))
verror(struct vctx *c, const char *kw, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vrecord(c, kw, kw, fmt, ap);
	va_end(ap);
	return 0;
}

static int __attribute__((format(printf, 4, 5)))
record(struct vctx *c, const char *kw, const char *append, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vrecord(c, kw, append, fmt, ap);
	va_end(ap);
	return 0;
}

/* The failure of a false schema, said as the keyword that holds it: a member or an item
 * not allowed (additionalProperties: false, items: false...), else the schema itself; 0. */
static int
false_error(struct vctx *c)
{
	const struct seg *at = c->nip > 0 ? &c->ip[c->nip - 1] : NULL;
	const char *kw = c->kw ? c->kw : "false";

	if (at && at->key && strstr(kw, "ropert") != NULL)	/* ...Properties, propertyNames */
		return record(c, kw, NULL, "the property \"%s\" is not allowed", at->key);
	if (at && !at->key && (strstr(kw, "tems") != NULL || strcmp(kw, "contains") == 0))
		return record(c, kw, NULL, "item %zu is not allowed", at->idx);
	return record(c, kw, NULL, "the schema false allows nothing");
}

/* A bound exceeded: the error whatever was reported before; -1. */
static int
bound(struct vctx *c, const char *what)
{
	if (c->e != NULL) {
		pointer_of(c->ip, c->nip, NULL, c->e->instance_path, sizeof(c->e->instance_path));
		pointer_of(c->sp, c->nsp, NULL, c->e->schema_path, sizeof(c->e->schema_path));
		snprintf(c->e->keyword, sizeof(c->e->keyword), "%s", "");
		snprintf(c->e->message, sizeof(c->e->message), "validation stopped: %s (counted as invalid)", what);
	}
	c->reported = 1;
	return -1;
}

static int
spend(struct vctx *c, long n)
{
	if ((c->work -= n) < 0)
		return bound(c, "the work bound was exceeded");
	return 1;
}

/* sch (the subschema under kw, then at step unless it is no_step) applied to inst, the
 * same instance. */
static int
sub(struct vctx *c, const char *kw, struct seg step, json_t *sch, json_t *inst, struct ann *ann)
{
	const char *outer = c->kw;
	int rc, n = c->nsp;

	if (c->nsp + 2 > SPATH_MAX)
		return bound(c, "schema recursion too deep");
	c->sp[c->nsp].key = kw;
	c->sp[c->nsp++].idx = 0;
	if (step.key != NULL || step.idx != (size_t)-1)
		c->sp[c->nsp++] = step;
	c->kw = kw;
	rc = eval(c, sch, inst, ann);
	c->kw = outer;
	c->nsp = n;
	return rc;
}

/* sch (under kw, then at step) applied to a member or an item of the instance (at, a
 * name or an index), whose value is v. */
static int
member(struct vctx *c, const char *kw, struct seg step, json_t *sch, struct seg at, json_t *v)
{
	int rc;

	if (c->nip >= JSCHEMA_MAX_DEPTH)
		return bound(c, "the instance is nested too deep");
	c->ip[c->nip++] = at;
	rc = spend(c, 1) > 0 ? sub(c, kw, step, sch, v, NULL) : -1;
	c->nip--;
	return rc;
}

/* --- applicators ------------------------------------------------------------------ */

/* prefixItems, items (both forms), additionalItems and contains: the applicators
 * over an array's items, each marking the items it evaluated. */
static int
ap_items(struct vctx *c, const struct jnode *n, json_t *inst, struct ann *ann)
{
	json_t *pre, *items, *rest, *ct, *v;
	size_t i, npre = 0, size, matches = 0;
	json_int_t mn, mx;
	int rc, hasmin;

	if (!json_is_array(inst))
		return 1;
	size = json_array_size(inst);
	items = jschema_kw(n, JK_ITEMS);
	pre = n->draft == D07 ? (json_is_array(items) ? items : NULL) : jschema_kw(n, JK_PREFIXITEMS);
	rest = n->draft == D07 ? (json_is_array(items) ? jschema_kw(n, JK_ADDITIONALITEMS) : items) :
	    (json_is_array(items) ? NULL : items);
	if (json_is_array(pre)) {
		npre = json_array_size(pre);
		for (i = 0; i < size && i < npre; i++) {
			TRY(member(c, pre == items ? "items" : "prefixItems", idx_step(i), json_array_get(pre, i), idx_step(i),
			    json_array_get(inst, i)));
			if (ann)
				ann->seen[i] = 1;
		}
	}
	if (rest != NULL)
		for (i = npre; i < size; i++) {
			TRY(member(c, rest == items ? "items" : "additionalItems", no_step, rest, idx_step(i),
			    json_array_get(inst, i)));
			if (ann)
				ann->seen[i] = 1;
		}
	if ((ct = jschema_kw(n, JK_CONTAINS)) == NULL)
		return 1;
	c->quiet++;
	json_array_foreach(inst, i, v) {
		if ((rc = member(c, "contains", no_step, ct, idx_step(i), v)) < 0)
			return rc;
		matches += (size_t)rc;
		if (rc && ann)
			ann->seen[i] = 1;
	}
	c->quiet--;
	hasmin = n->draft != D07 && jschema_count(n, JK_MINCONTAINS, &mn);
	if (hasmin ? (json_int_t)matches < mn : matches == 0)
		return verror(c, hasmin ? "minContains" : "contains", "%zu items match contains, too few", matches);
	if (n->draft != D07 && jschema_count(n, JK_MAXCONTAINS, &mx) && (json_int_t)matches > mx)
		return verror(c, "maxContains", "%zu items match contains, too many", matches);
	return 1;
}

/* properties, patternProperties and additionalProperties over each member, in
 * one pass (additionalProperties takes what the other two did not), then propertyNames. */
static int
ap_props(struct vctx *c, const struct jnode *n, json_t *inst, struct ann *ann)
{
	json_t *props, *pp, *ap, *names, *v, *ps, *name;
	const char *key, *pk;
	size_t i = 0, j;
	int hit, rc;

	if (!json_is_object(inst))
		return 1;
	props = jschema_kw(n, JK_PROPERTIES);
	pp = jschema_kw(n, JK_PATTERNPROPERTIES);
	ap = jschema_kw(n, JK_ADDITIONALPROPERTIES);
	json_object_foreach(inst, key, v) {
		hit = 0;
		if (json_is_object(props) && (ps = json_object_get(props, key)) != NULL) {
			hit = 1;
			TRY(member(c, "properties", key_step(key), ps, key_step(key), v));
		}
		j = 0;
		if (n->npprops > 0)
			json_object_foreach(pp, pk, ps) {
				TRY(spend(c, jschema_search_cost(n->pprops[j], strlen(key))));
				if ((rc = regex_search(n->pprops[j++], key, strlen(key))) < 0)
					return bound(c, "out of memory");
				if (rc == 0)
					continue;
				hit = 1;
				TRY(member(c, "patternProperties", key_step(pk), ps, key_step(key), v));
			}
		if (!hit && ap != NULL) {
			hit = 1;
			TRY(member(c, "additionalProperties", no_step, ap, key_step(key), v));
		}
		if (hit && ann)
			ann->seen[i] = 1;
		i++;
	}
	if ((names = jschema_kw(n, JK_PROPERTYNAMES)) == NULL)
		return 1;
	json_object_foreach(inst, key, v) {
		if ((name = json_string(key)) == NULL)
			return bound(c, "out of memory");
		rc = member(c, "propertyNames", no_step, names, key_step(key), name);
		json_decref(name);
		if (rc <= 0)
			return rc;
	}
	return 1;
}

/* sch applied to inst quietly (its failure is not the error), its annotations merged
 * into ann when it passes. */
static int
try_branch(struct vctx *c, const char *kw, size_t idx, json_t *sch, json_t *inst, struct ann *ann)
{
	struct ann a;
	int rc;

	if (ann && ann_init(&a, inst) < 0)
		return bound(c, "out of memory");
	c->quiet++;
	rc = sub(c, kw, idx_step(idx), sch, inst, ann ? &a : NULL);
	c->quiet--;
	if (rc > 0 && ann)
		ann_merge(ann, &a);
	if (ann)
		ann_free(&a);
	return rc;
}

/* kw's members that are schemas, each applied to the instance when it has the member:
 * 2020-12's dependentSchemas, and dependencies (draft-07's, counted in 2020-12 too). */
static int
dependent_schemas(struct vctx *c, const struct jnode *n, enum jkw k_, json_t *inst, struct ann *ann)
{
	const char *kw = jschema_kw_names[k_];
	json_t *l = jschema_kw(n, k_), *v;
	const char *k;

	if (json_is_object(inst) && json_is_object(l))
		json_object_foreach(l, k, v)
			if ((json_is_object(v) || json_is_boolean(v)) && json_object_get(inst, k) != NULL)
				TRY(sub(c, kw, key_step(k), v, inst, ann));
	return 1;
}

/* allOf, anyOf, oneOf, not, if/then/else, dependentSchemas and dependencies: the
 * applicators to the instance itself. */
static int
ap_logic(struct vctx *c, const struct jnode *n, json_t *inst, struct ann *ann)
{
	json_t *l, *v, *t;
	const char *k;
	size_t i, hits;
	int rc;

	if (json_is_array(l = jschema_kw(n, JK_ALLOF)))
		json_array_foreach(l, i, v)
			TRY(sub(c, "allOf", idx_step(i), v, inst, ann));
	if (json_is_array(l = jschema_kw(n, JK_ANYOF))) {
		hits = 0;
		json_array_foreach(l, i, v) {
			if ((rc = try_branch(c, "anyOf", i, v, inst, ann)) < 0)
				return rc;
			if ((hits += (size_t)rc) > 0 && ann == NULL)
				break;	/* no annotation to collect from the others */
		}
		if (hits == 0)
			return verror(c, "anyOf", "matches none of the anyOf subschemas");
	}
	if (json_is_array(l = jschema_kw(n, JK_ONEOF))) {
		hits = 0;
		json_array_foreach(l, i, v) {
			if ((rc = try_branch(c, "oneOf", i, v, inst, ann)) < 0)
				return rc;
			if ((hits += (size_t)rc) > 1)
				return verror(c, "oneOf", "matches more than one of the oneOf subschemas");
		}
		if (hits == 0)
			return verror(c, "oneOf", "matches none of the oneOf subschemas");
	}
	if ((v = jschema_kw(n, JK_NOT)) != NULL) {
		if ((rc = try_branch(c, "not", (size_t)-1, v, inst, NULL)) < 0)
			return rc;
		if (rc > 0)
			return verror(c, "not", "matches the schema not forbids");
	}
	if ((v = jschema_kw(n, JK_IF)) != NULL) {
		if ((rc = try_branch(c, "if", (size_t)-1, v, inst, ann)) < 0)
			return rc;
		k = rc ? "then" : "else";
		if ((t = jschema_kw(n, rc ? JK_THEN : JK_ELSE)) != NULL)
			TRY(sub(c, k, no_step, t, inst, ann));
	}
	if (n->draft != D07)
		TRY(dependent_schemas(c, n, JK_DEPENDENTSCHEMAS, inst, ann));
	return dependent_schemas(c, n, JK_DEPENDENCIES, inst, ann);
}

/* unevaluatedItems and unevaluatedProperties: what no other keyword evaluated (ann). */
static int
ap_uneval(struct vctx *c, const struct jnode *n, json_t *inst, struct ann *ann)
{
	json_t *u, *v;
	const char *key;
	size_t i = 0;

	if (json_is_array(inst) && (u = jschema_kw(n, JK_UNEVALUATEDITEMS)) != NULL)
		json_array_foreach(inst, i, v) {
			if (!ann->seen[i])
				TRY(member(c, "unevaluatedItems", no_step, u, idx_step(i), v));
			ann->seen[i] = 1;
		}
	if (json_is_object(inst) && (u = jschema_kw(n, JK_UNEVALUATEDPROPERTIES)) != NULL)
		json_object_foreach(inst, key, v) {
			if (!ann->seen[i])
				TRY(member(c, "unevaluatedProperties", no_step, u, key_step(key), v));
			ann->seen[i++] = 1;
		}
	return 1;
}

/* $dynamicRef: the outermost resource of the dynamic scope with the anchor, when the
 * reference is dynamic; its first target otherwise. */
static int
dynamic_ref(struct vctx *c, const struct jnode *n, json_t *inst, struct ann *ann)
{
	json_t *t = n->dynref;
	const struct jres *r;
	int i;
	size_t j;

	for (i = 0; n->dynname != NULL && i < c->nscope; i++) {
		r = c->scope[i];
		for (j = 0; j < r->ndyn; j++)
			if (strcmp(r->dyn_name[j], n->dynname) == 0) {
				t = r->dyn_target[j];
				goto found;
			}
	}
found:
	return sub(c, "$dynamicRef", no_step, t, inst, ann);
}

static int
eval_node(struct vctx *c, const struct jnode *n, json_t *inst, struct ann *ann)
{
	struct jfail f;
	int rc;

	if (n->ref != NULL) {
		if (n->draft == D07)	/* draft-07: $ref's siblings are ignored */
			return sub(c, "$ref", no_step, n->ref, inst, ann);
		TRY(sub(c, "$ref", no_step, n->ref, inst, ann));
	}
	if (n->dynref != NULL)
		TRY(dynamic_ref(c, n, inst, ann));
	f.work = &c->work;
	f.format_assert = c->s->format_assert;
	if ((rc = jschema_assert(n, inst, &f)) < 0)
		return bound(c, f.msg);
	if (rc == 0)
		return verror(c, f.kw, "%s", f.msg);
	TRY(ap_logic(c, n, inst, ann));
	TRY(ap_props(c, n, inst, ann));
	TRY(ap_items(c, n, inst, ann));
	if (n->uneval && n->draft != D07)
		TRY(ap_uneval(c, n, inst, ann));
	return 1;
}

static int
eval(struct vctx *c, json_t *sch, json_t *inst, struct ann *ann)
{
	const struct jnode *n;
	struct ann local;
	int rc, pushed = 0;

	TRY(spend(c, 1));
	if (json_is_true(sch))
		return 1;
	if (json_is_false(sch))
		return false_error(c);
	if ((n = jschema_node(c->s, sch)) == NULL)
		return bound(c, "a subschema was not compiled");
	if (c->depth >= JSCHEMA_MAX_RECURSION)
		return bound(c, "schema recursion too deep");
	if (ann == NULL && n->uneval) {
		if (ann_init(&local, inst) < 0)
			return bound(c, "out of memory");
		ann = &local;
	}
	if (c->nscope == 0 || c->scope[c->nscope - 1] != n->res)
		c->scope[c->nscope++] = n->res, pushed = 1;
	c->depth++;
	rc = eval_node(c, n, inst, ann);
	c->depth--;
	c->nscope -= pushed;
	if (ann == &local)
		ann_free(&local);
	return rc;
}

int
jschema_validate(const struct jschema *s, json_t *instance, struct jschema_error *e)
{
	struct vctx *c;
	int rc;

	if (e != NULL)
		memset(e, 0, sizeof(*e));
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		if (e != NULL)
			snprintf(e->message, sizeof(e->message), "validation stopped: out of memory (counted as invalid)");
		return -1;
	}
	c->s = s;
	c->work = s->work;
	c->e = e;
	rc = eval(c, s->root, instance, NULL);
	free(c);
	return rc;
}
