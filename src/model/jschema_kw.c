/* jschema_kw — the validator: a compiled schema's keywords applied to an instance.
 * Each subschema's result is 1 valid, 0 invalid, -1 a bound exceeded (which ends the
 * validation). The first failure not inside anyOf, oneOf, not or if is the error
 * reported. unevaluatedProperties and unevaluatedItems see what the keywords beside
 * them evaluated: an evaluation fills in which members (items) of its instance it
 * evaluated, and a subschema that fails gives none. */
#include "autoconf.h"

#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jschema_int.h"
#include "regex.h"

#define SPATH_MAX	(2 * JSCHEMA_MAX_RECURSION + 8)
#define D07		JSCHEMA_DRAFT_07

#define TRY(x) do { int r_ = (x); if (r_ <= 0) return r_; } while (0)

/* A step of a JSON pointer: a name, or (key NULL) an index. */
struct seg {
	const char *key;
	size_t idx;
};

struct vctx {
	const struct jschema *s;
	long work;
	int depth, quiet, reported;
	struct jschema_error *e;
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

/* Records the failure of keyword kw here (the first reported one only); 0. */
static int __attribute__((format(printf, 3, 4)))
verror(struct vctx *c, const char *kw, const char *fmt, ...)
{
	va_list ap;

	if (c->quiet || c->reported || c->e == NULL)
		return 0;
	c->reported = 1;
	pointer_of(c->ip, c->nip, NULL, c->e->instance_path, sizeof(c->e->instance_path));
	pointer_of(c->sp, c->nsp, kw, c->e->schema_path, sizeof(c->e->schema_path));
	snprintf(c->e->keyword, sizeof(c->e->keyword), "%s", kw);
	va_start(ap, fmt);
	vsnprintf(c->e->message, sizeof(c->e->message), fmt, ap);
	va_end(ap);
	return 0;
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

/* sch (the subschema under kw, then key or index idx when key is not NULL or idx is
 * not -1) applied to inst, the same instance. */
static int
sub(struct vctx *c, const char *kw, const char *key, size_t idx, json_t *sch, json_t *inst, struct ann *ann)
{
	int rc, n = c->nsp;

	if (c->nsp + 2 > SPATH_MAX)
		return bound(c, "schema recursion too deep");
	c->sp[c->nsp].key = kw;
	c->sp[c->nsp++].idx = 0;
	if (key != NULL || idx != (size_t)-1) {
		c->sp[c->nsp].key = key;
		c->sp[c->nsp++].idx = idx;
	}
	rc = eval(c, sch, inst, ann);
	c->nsp = n;
	return rc;
}

/* sch applied to a member (ikey) or item (iidx) of the instance, the member's value v. */
static int
member(struct vctx *c, const char *kw, const char *key, size_t idx, json_t *sch, const char *ikey, size_t iidx,
    json_t *v)
{
	int rc;

	if (c->nip >= JSCHEMA_MAX_DEPTH)
		return bound(c, "the instance is nested too deep");
	c->ip[c->nip].key = ikey;
	c->ip[c->nip++].idx = iidx;
	rc = spend(c, 1) > 0 ? sub(c, kw, key, idx, sch, v, NULL) : -1;
	c->nip--;
	return rc;
}

/* --- assertions ------------------------------------------------------------------- */

static int
is_integral(const json_t *v)
{
	double d;

	if (json_is_integer(v))
		return 1;
	if (!json_is_real(v))
		return 0;
	d = json_real_value(v);
	if (d > 9.0e18 || d < -9.0e18)
		return 1;	/* a double this large has no fraction */
	return d == (double)(long long)d;
}

static int
type_is(const char *t, const json_t *v)
{
	if (strcmp(t, "integer") == 0)
		return is_integral(v);
	if (strcmp(t, "number") == 0)
		return json_is_number(v);
	if (strcmp(t, "string") == 0)
		return json_is_string(v);
	if (strcmp(t, "object") == 0)
		return json_is_object(v);
	if (strcmp(t, "array") == 0)
		return json_is_array(v);
	if (strcmp(t, "boolean") == 0)
		return json_is_boolean(v);
	if (strcmp(t, "null") == 0)
		return json_is_null(v);
	return 0;
}

static const char *
type_name(const json_t *v)
{
	static const char *const names[] = { "object", "array", "string", "integer", "number", "boolean", "boolean", "null" };

	return names[json_typeof(v)];
}

static int
kw_type(struct vctx *c, json_t *sch, json_t *inst)
{
	json_t *t = json_object_get(sch, "type"), *v;
	size_t i;

	if (json_is_string(t))
		return type_is(json_string_value(t), inst) ? 1 :
		    verror(c, "type", "%s is not of type %s", type_name(inst), json_string_value(t));
	if (!json_is_array(t))
		return 1;
	json_array_foreach(t, i, v)
		if (json_is_string(v) && type_is(json_string_value(v), inst))
			return 1;
	return verror(c, "type", "%s is none of the types allowed", type_name(inst));
}

int
jschema_equal(json_t *a, json_t *b)
{
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_number(a) && json_is_number(b)) {
		if (json_is_integer(a) && json_is_integer(b))
			return json_integer_value(a) == json_integer_value(b);
		return json_number_value(a) == json_number_value(b);
	}
	if (json_typeof(a) != json_typeof(b))
		return 0;
	switch (json_typeof(a)) {
	case JSON_STRING:
		return json_string_length(a) == json_string_length(b) &&
		    memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b))
			return 0;
		json_array_foreach(a, i, v)
			if (!jschema_equal(v, json_array_get(b, i)))
				return 0;
		return 1;
	case JSON_OBJECT:
		if (json_object_size(a) != json_object_size(b))
			return 0;
		json_object_foreach(a, k, v)
			if (json_object_get(b, k) == NULL || !jschema_equal(v, json_object_get(b, k)))
				return 0;
		return 1;
	default:
		return 1;	/* true, false, null: the type is the value */
	}
}

static int
kw_enum(struct vctx *c, json_t *sch, json_t *inst)
{
	json_t *en, *v;
	size_t i;

	if ((v = json_object_get(sch, "const")) != NULL && !jschema_equal(v, inst))
		return verror(c, "const", "not the value const requires");
	if (!json_is_array(en = json_object_get(sch, "enum")))
		return 1;
	json_array_foreach(en, i, v)
		if (jschema_equal(v, inst))
			return 1;
	return verror(c, "enum", "none of the values enum allows");
}

/* a compared with b: below 0, 0, above 0. */
static int
num_cmp(const json_t *a, const json_t *b)
{
	double x, y;

	if (json_is_integer(a) && json_is_integer(b))
		return json_integer_value(a) < json_integer_value(b) ? -1 : json_integer_value(a) > json_integer_value(b);
	x = json_number_value(a);
	y = json_number_value(b);
	return x < y ? -1 : x > y;
}

static int
multiple_of(const json_t *v, const json_t *m)
{
	double q, r;

	if (json_is_integer(v) && json_is_integer(m) && json_integer_value(m) > 0)
		return json_integer_value(v) % json_integer_value(m) == 0;
	if (json_number_value(m) <= 0)
		return 1;	/* not a valid multipleOf: no constraint */
	q = json_number_value(v) / json_number_value(m);
	if (q > DBL_MAX || q < -DBL_MAX || q != q)
		return 0;
	if (q > 9.0e15 || q < -9.0e15)
		return 1;	/* beyond 2^53 every double is whole */
	r = q - (double)(long long)q;
	r = r < 0 ? -r : r;
	return r < 1e-9 || 1 - r < 1e-9;
}

static int
kw_number(struct vctx *c, json_t *sch, json_t *inst)
{
	json_t *v;

	if (!json_is_number(inst))
		return 1;
	if (json_is_number(v = json_object_get(sch, "minimum")) && num_cmp(inst, v) < 0)
		return verror(c, "minimum", "below the minimum %g", json_number_value(v));
	if (json_is_number(v = json_object_get(sch, "maximum")) && num_cmp(inst, v) > 0)
		return verror(c, "maximum", "above the maximum %g", json_number_value(v));
	if (json_is_number(v = json_object_get(sch, "exclusiveMinimum")) && num_cmp(inst, v) <= 0)
		return verror(c, "exclusiveMinimum", "not above %g", json_number_value(v));
	if (json_is_number(v = json_object_get(sch, "exclusiveMaximum")) && num_cmp(inst, v) >= 0)
		return verror(c, "exclusiveMaximum", "not below %g", json_number_value(v));
	if (json_is_number(v = json_object_get(sch, "multipleOf")) && !multiple_of(inst, v))
		return verror(c, "multipleOf", "not a multiple of %g", json_number_value(v));
	return 1;
}

/* A count keyword's value (maxLength, minItems...) as a whole number in *n: 1, or 0
 * when absent or not whole (2.0 counts as 2). */
static int
count_of(json_t *sch, const char *kw, json_int_t *n)
{
	json_t *v = json_object_get(sch, kw);

	if (v == NULL || !is_integral(v))
		return 0;
	*n = json_is_integer(v) ? json_integer_value(v) : (json_int_t)json_real_value(v);
	return 1;
}

/* The code points of a string. */
static size_t
utf8_len(const char *s, size_t n)
{
	size_t i, cps = 0;

	for (i = 0; i < n; i++)
		cps += ((unsigned char)s[i] & 0xc0) != 0x80;
	return cps;
}

static int
kw_string(struct vctx *c, const struct jnode *n, json_t *inst)
{
	json_int_t lim;
	size_t len;
	int rc;

	if (!json_is_string(inst))
		return 1;
	len = utf8_len(json_string_value(inst), json_string_length(inst));
	if (count_of(n->js, "minLength", &lim) && (json_int_t)len < lim)
		return verror(c, "minLength", "shorter than %" JSON_INTEGER_FORMAT " characters", lim);
	if (count_of(n->js, "maxLength", &lim) && (json_int_t)len > lim)
		return verror(c, "maxLength", "longer than %" JSON_INTEGER_FORMAT " characters", lim);
	if (n->pattern != NULL) {
		TRY(spend(c, 1 + (long)(json_string_length(inst) / 256)));
		if ((rc = regex_search(n->pattern, json_string_value(inst), json_string_length(inst))) < 0)
			return bound(c, "out of memory");
		if (rc == 0)
			return verror(c, "pattern", "does not match the pattern %s",
			    json_string_value(json_object_get(n->js, "pattern")));
	}
	return 1;
}

static int
kw_array(struct vctx *c, json_t *sch, json_t *inst)
{
	json_int_t lim;
	size_t i, j, n;

	if (!json_is_array(inst))
		return 1;
	n = json_array_size(inst);
	if (count_of(sch, "minItems", &lim) && (json_int_t)n < lim)
		return verror(c, "minItems", "fewer than %" JSON_INTEGER_FORMAT " items", lim);
	if (count_of(sch, "maxItems", &lim) && (json_int_t)n > lim)
		return verror(c, "maxItems", "more than %" JSON_INTEGER_FORMAT " items", lim);
	if (json_is_true(json_object_get(sch, "uniqueItems"))) {
		TRY(spend(c, (long)(n * (n / 2 + 1) / 64)));
		for (i = 0; i < n; i++)
			for (j = i + 1; j < n; j++)
				if (jschema_equal(json_array_get(inst, i), json_array_get(inst, j)))
					return verror(c, "uniqueItems", "items %zu and %zu are equal", i, j);
	}
	return 1;
}

static int
kw_object(struct vctx *c, const struct jnode *n, json_t *inst)
{
	json_t *v, *list, *req;
	json_int_t lim;
	const char *k;
	size_t i, size;

	if (!json_is_object(inst))
		return 1;
	size = json_object_size(inst);
	if (count_of(n->js, "minProperties", &lim) && (json_int_t)size < lim)
		return verror(c, "minProperties", "fewer than %" JSON_INTEGER_FORMAT " properties", lim);
	if (count_of(n->js, "maxProperties", &lim) && (json_int_t)size > lim)
		return verror(c, "maxProperties", "more than %" JSON_INTEGER_FORMAT " properties", lim);
	if (json_is_array(req = json_object_get(n->js, "required")))
		json_array_foreach(req, i, v)
			if (json_is_string(v) && json_object_get(inst, json_string_value(v)) == NULL)
				return verror(c, "required", "the property \"%s\" is required", json_string_value(v));
	list = json_object_get(n->js, n->draft == D07 ? "dependencies" : "dependentRequired");
	if (json_is_object(list))
		json_object_foreach(list, k, req) {
			if (!json_is_array(req) || json_object_get(inst, k) == NULL)
				continue;
			json_array_foreach(req, i, v)
				if (json_is_string(v) && json_object_get(inst, json_string_value(v)) == NULL)
					return verror(c, n->draft == D07 ? "dependencies" : "dependentRequired",
					    "\"%s\" requires the property \"%s\"", k, json_string_value(v));
		}
	return 1;
}

/* --- applicators ------------------------------------------------------------------ */

/* Long: prefixItems, items (both forms), additionalItems and contains: the applicators
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
	items = json_object_get(n->js, "items");
	pre = n->draft == D07 ? (json_is_array(items) ? items : NULL) : json_object_get(n->js, "prefixItems");
	rest = n->draft == D07 ? (json_is_array(items) ? json_object_get(n->js, "additionalItems") : items) :
	    (json_is_array(items) ? NULL : items);
	if (json_is_array(pre)) {
		npre = json_array_size(pre);
		for (i = 0; i < size && i < npre; i++) {
			TRY(member(c, pre == items ? "items" : "prefixItems", NULL, i, json_array_get(pre, i), NULL, i,
			    json_array_get(inst, i)));
			if (ann)
				ann->seen[i] = 1;
		}
	}
	if (rest != NULL)
		for (i = npre; i < size; i++) {
			TRY(member(c, rest == items ? "items" : "additionalItems", NULL, (size_t)-1, rest, NULL, i,
			    json_array_get(inst, i)));
			if (ann)
				ann->seen[i] = 1;
		}
	if ((ct = json_object_get(n->js, "contains")) == NULL)
		return 1;
	c->quiet++;
	json_array_foreach(inst, i, v) {
		if ((rc = member(c, "contains", NULL, (size_t)-1, ct, NULL, i, v)) < 0)
			return rc;
		matches += (size_t)rc;
		if (rc && ann)
			ann->seen[i] = 1;
	}
	c->quiet--;
	hasmin = n->draft != D07 && count_of(n->js, "minContains", &mn);
	if (hasmin ? (json_int_t)matches < mn : matches == 0)
		return verror(c, hasmin ? "minContains" : "contains", "%zu items match contains, too few", matches);
	if (n->draft != D07 && count_of(n->js, "maxContains", &mx) && (json_int_t)matches > mx)
		return verror(c, "maxContains", "%zu items match contains, too many", matches);
	return 1;
}

/* Long: properties, patternProperties and additionalProperties over each member, in
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
	props = json_object_get(n->js, "properties");
	pp = json_object_get(n->js, "patternProperties");
	ap = json_object_get(n->js, "additionalProperties");
	json_object_foreach(inst, key, v) {
		hit = 0;
		if (json_is_object(props) && (ps = json_object_get(props, key)) != NULL) {
			hit = 1;
			TRY(member(c, "properties", key, 0, ps, key, 0, v));
		}
		j = 0;
		if (n->npprops > 0)
			json_object_foreach(pp, pk, ps) {
				TRY(spend(c, 1));
				if ((rc = regex_search(n->pprops[j++], key, strlen(key))) < 0)
					return bound(c, "out of memory");
				if (rc == 0)
					continue;
				hit = 1;
				TRY(member(c, "patternProperties", pk, 0, ps, key, 0, v));
			}
		if (!hit && ap != NULL) {
			hit = 1;
			TRY(member(c, "additionalProperties", NULL, (size_t)-1, ap, key, 0, v));
		}
		if (hit && ann)
			ann->seen[i] = 1;
		i++;
	}
	if ((names = json_object_get(n->js, "propertyNames")) == NULL)
		return 1;
	json_object_foreach(inst, key, v) {
		if ((name = json_string(key)) == NULL)
			return bound(c, "out of memory");
		rc = member(c, "propertyNames", NULL, (size_t)-1, names, key, 0, name);
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
	rc = sub(c, kw, NULL, idx, sch, inst, ann ? &a : NULL);
	c->quiet--;
	if (rc > 0 && ann)
		ann_merge(ann, &a);
	if (ann)
		ann_free(&a);
	return rc;
}

/* Long: allOf, anyOf, oneOf, not, if/then/else and dependentSchemas (draft-07's
 * dependencies that are schemas): the applicators to the instance itself. */
static int
ap_logic(struct vctx *c, const struct jnode *n, json_t *inst, struct ann *ann)
{
	json_t *l, *v, *t;
	const char *k;
	size_t i, hits;
	int rc;

	if (json_is_array(l = json_object_get(n->js, "allOf")))
		json_array_foreach(l, i, v)
			TRY(sub(c, "allOf", NULL, i, v, inst, ann));
	if (json_is_array(l = json_object_get(n->js, "anyOf"))) {
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
	if (json_is_array(l = json_object_get(n->js, "oneOf"))) {
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
	if ((v = json_object_get(n->js, "not")) != NULL) {
		if ((rc = try_branch(c, "not", (size_t)-1, v, inst, NULL)) < 0)
			return rc;
		if (rc > 0)
			return verror(c, "not", "matches the schema not forbids");
	}
	if ((v = json_object_get(n->js, "if")) != NULL) {
		if ((rc = try_branch(c, "if", (size_t)-1, v, inst, ann)) < 0)
			return rc;
		k = rc ? "then" : "else";
		if ((t = json_object_get(n->js, k)) != NULL)
			TRY(sub(c, k, NULL, (size_t)-1, t, inst, ann));
	}
	l = json_object_get(n->js, n->draft == D07 ? "dependencies" : "dependentSchemas");
	if (json_is_object(inst) && json_is_object(l))
		json_object_foreach(l, k, v)
			if ((json_is_object(v) || json_is_boolean(v)) && json_object_get(inst, k) != NULL)
				TRY(sub(c, n->draft == D07 ? "dependencies" : "dependentSchemas", k, 0, v, inst, ann));
	return 1;
}

/* unevaluatedItems and unevaluatedProperties: what no other keyword evaluated (ann). */
static int
ap_uneval(struct vctx *c, const struct jnode *n, json_t *inst, struct ann *ann)
{
	json_t *u, *v;
	const char *key;
	size_t i = 0;

	if (json_is_array(inst) && (u = json_object_get(n->js, "unevaluatedItems")) != NULL)
		json_array_foreach(inst, i, v) {
			if (!ann->seen[i])
				TRY(member(c, "unevaluatedItems", NULL, (size_t)-1, u, NULL, i, v));
			ann->seen[i] = 1;
		}
	if (json_is_object(inst) && (u = json_object_get(n->js, "unevaluatedProperties")) != NULL)
		json_object_foreach(inst, key, v) {
			if (!ann->seen[i])
				TRY(member(c, "unevaluatedProperties", NULL, (size_t)-1, u, key, 0, v));
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
	return sub(c, "$dynamicRef", NULL, (size_t)-1, t, inst, ann);
}

static int
eval_node(struct vctx *c, const struct jnode *n, json_t *inst, struct ann *ann)
{
	if (n->ref != NULL) {
		if (n->draft == D07)	/* draft-07: $ref's siblings are ignored */
			return sub(c, "$ref", NULL, (size_t)-1, n->ref, inst, ann);
		TRY(sub(c, "$ref", NULL, (size_t)-1, n->ref, inst, ann));
	}
	if (n->dynref != NULL)
		TRY(dynamic_ref(c, n, inst, ann));
	TRY(kw_type(c, n->js, inst));
	TRY(kw_enum(c, n->js, inst));
	TRY(kw_number(c, n->js, inst));
	TRY(kw_string(c, n, inst));
	TRY(kw_array(c, n->js, inst));
	TRY(kw_object(c, n, inst));
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
		return verror(c, "false", "the schema false allows nothing");
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
