/* jschema_kw — the assertion keywords: type, enum and const (JSON equality: 1 equals
 * 1.0), the numeric ones, string lengths in code points and pattern, array and object
 * sizes, uniqueItems, required and dependentRequired (and dependencies). Each
 * says which failed and why; the applicators are jschema_eval.c's. */
#include "autoconf.h"

#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jschema_int.h"
#include "regex.h"

#define D07		JSCHEMA_DRAFT_07

#define TRY(x) do { int r_ = (x); if (r_ <= 0) return r_; } while (0)

/* The failure of keyword kw; 0. */
static int __attribute__((format(printf, 3, 4)))
kfail(struct jfail *c, const char *kw, const char *fmt, ...)
{
	va_list ap;

	c->kw = kw;
	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
	return 0;
}

static int
kbound(struct jfail *c, const char *what)
{
	c->kw = "";
	snprintf(c->msg, sizeof(c->msg), "%s", what);
	return -1;
}

static int
kspend(struct jfail *c, long n)
{
	if ((*c->work -= n) < 0)
		return kbound(c, "the work bound was exceeded");
	return 1;
}

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
kw_type(struct jfail *c, const struct jnode *n, json_t *inst)
{
	json_t *t = jschema_kw(n, JK_TYPE), *v;
	size_t i;

	if (json_is_string(t))
		return type_is(json_string_value(t), inst) ? 1 :
		    kfail(c, "type", "%s is not of type %s", type_name(inst), json_string_value(t));
	if (!json_is_array(t))
		return 1;
	json_array_foreach(t, i, v)
		if (json_is_string(v) && type_is(json_string_value(v), inst))
			return 1;
	return kfail(c, "type", "%s is none of the types allowed", type_name(inst));
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
kw_enum(struct jfail *c, const struct jnode *n, json_t *inst)
{
	json_t *en, *v;
	size_t i;

	if ((v = jschema_kw(n, JK_CONST)) != NULL && !jschema_equal(v, inst))
		return kfail(c, "const", "not the value const requires");
	if (!json_is_array(en = jschema_kw(n, JK_ENUM)))
		return 1;
	json_array_foreach(en, i, v)
		if (jschema_equal(v, inst))
			return 1;
	return kfail(c, "enum", "none of the values enum allows");
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
	if (q > DBL_MAX || q < -DBL_MAX || q != q) {
		/* too large to divide: a whole number is a multiple of m when 1/m is whole */
		r = 1 / json_number_value(m);
		return is_integral(v) && r <= 9.0e15 && r == (double)(long long)r;
	}
	if (q > 9.0e15 || q < -9.0e15)
		return 1;	/* beyond 2^53 every double is whole */
	r = q - (double)(long long)q;
	r = r < 0 ? -r : r;
	return r < 1e-9 || 1 - r < 1e-9;
}

static int
kw_number(struct jfail *c, const struct jnode *n, json_t *inst)
{
	json_t *v;

	if (!json_is_number(inst))
		return 1;
	if (json_is_number(v = jschema_kw(n, JK_MINIMUM)) && num_cmp(inst, v) < 0)
		return kfail(c, "minimum", "below the minimum %g", json_number_value(v));
	if (json_is_number(v = jschema_kw(n, JK_MAXIMUM)) && num_cmp(inst, v) > 0)
		return kfail(c, "maximum", "above the maximum %g", json_number_value(v));
	if (json_is_number(v = jschema_kw(n, JK_EXCLUSIVEMINIMUM)) && num_cmp(inst, v) <= 0)
		return kfail(c, "exclusiveMinimum", "not above %g", json_number_value(v));
	if (json_is_number(v = jschema_kw(n, JK_EXCLUSIVEMAXIMUM)) && num_cmp(inst, v) >= 0)
		return kfail(c, "exclusiveMaximum", "not below %g", json_number_value(v));
	if (json_is_number(v = jschema_kw(n, JK_MULTIPLEOF)) && !multiple_of(inst, v))
		return kfail(c, "multipleOf", "not a multiple of %g", json_number_value(v));
	return 1;
}

int
jschema_count(const struct jnode *n, enum jkw k, json_int_t *out)
{
	json_t *v = jschema_kw(n, k);

	if (v == NULL || !is_integral(v))
		return 0;
	*out = json_is_integer(v) ? json_integer_value(v) : (json_int_t)json_real_value(v);
	return 1;
}

long
jschema_search_cost(const struct regex *re, size_t len)
{
	return 1 + (long)(len / 1024 * regex_size(re) + len % 1024 * regex_size(re) / 1024);
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
kw_string(struct jfail *c, const struct jnode *n, json_t *inst)
{
	json_int_t lim;
	json_t *v;
	size_t len;
	int rc;

	if (!json_is_string(inst))
		return 1;
	len = utf8_len(json_string_value(inst), json_string_length(inst));
	if (jschema_count(n, JK_MINLENGTH, &lim) && (json_int_t)len < lim)
		return kfail(c, "minLength", "shorter than %" JSON_INTEGER_FORMAT " characters", lim);
	if (jschema_count(n, JK_MAXLENGTH, &lim) && (json_int_t)len > lim)
		return kfail(c, "maxLength", "longer than %" JSON_INTEGER_FORMAT " characters", lim);
	if (c->format_assert && json_is_string(v = jschema_kw(n, JK_FORMAT)) &&
	    !jschema_format_ok(json_string_value(v), json_string_value(inst), json_string_length(inst)))
		return kfail(c, "format", "not a valid %s", json_string_value(v));
	if (n->pattern != NULL) {
		TRY(kspend(c, jschema_search_cost(n->pattern, json_string_length(inst))));
		if ((rc = regex_search(n->pattern, json_string_value(inst), json_string_length(inst))) < 0)
			return kbound(c, "out of memory");
		if (rc == 0)
			return kfail(c, "pattern", "does not match the pattern %s",
			    json_string_value(jschema_kw(n, JK_PATTERN)));
	}
	return 1;
}

static int
kw_array(struct jfail *c, const struct jnode *n, json_t *inst)
{
	json_int_t lim;
	size_t i, j, size;

	if (!json_is_array(inst))
		return 1;
	size = json_array_size(inst);
	if (jschema_count(n, JK_MINITEMS, &lim) && (json_int_t)size < lim)
		return kfail(c, "minItems", "fewer than %" JSON_INTEGER_FORMAT " items", lim);
	if (jschema_count(n, JK_MAXITEMS, &lim) && (json_int_t)size > lim)
		return kfail(c, "maxItems", "more than %" JSON_INTEGER_FORMAT " items", lim);
	if (json_is_true(jschema_kw(n, JK_UNIQUEITEMS))) {
		TRY(kspend(c, (long)(size * (size / 2 + 1) / 64)));
		for (i = 0; i < size; i++)
			for (j = i + 1; j < size; j++)
				if (jschema_equal(json_array_get(inst, i), json_array_get(inst, j)))
					return kfail(c, "uniqueItems", "items %zu and %zu are equal", i, j);
	}
	return 1;
}

/* kw's members that are arrays: the properties the member's name requires. draft-07's
 * dependencies, and 2020-12's dependentRequired; dependencies counts in 2020-12 too, as
 * schemas written for both drafts expect. */
static int
dependent_required(struct jfail *c, const struct jnode *n, enum jkw kw, json_t *inst)
{
	json_t *list = jschema_kw(n, kw), *req, *v;
	const char *k;
	size_t i;

	if (json_is_object(list))
		json_object_foreach(list, k, req) {
			if (!json_is_array(req) || json_object_get(inst, k) == NULL)
				continue;
			json_array_foreach(req, i, v)
				if (json_is_string(v) && json_object_get(inst, json_string_value(v)) == NULL)
					return kfail(c, jschema_kw_names[kw], "\"%s\" requires the property \"%s\"", k,
					    json_string_value(v));
		}
	return 1;
}

static int
kw_object(struct jfail *c, const struct jnode *n, json_t *inst)
{
	json_t *v, *req;
	json_int_t lim;
	size_t i, size;

	if (!json_is_object(inst))
		return 1;
	size = json_object_size(inst);
	if (jschema_count(n, JK_MINPROPERTIES, &lim) && (json_int_t)size < lim)
		return kfail(c, "minProperties", "fewer than %" JSON_INTEGER_FORMAT " properties", lim);
	if (jschema_count(n, JK_MAXPROPERTIES, &lim) && (json_int_t)size > lim)
		return kfail(c, "maxProperties", "more than %" JSON_INTEGER_FORMAT " properties", lim);
	if (json_is_array(req = jschema_kw(n, JK_REQUIRED)))
		json_array_foreach(req, i, v)
			if (json_is_string(v) && json_object_get(inst, json_string_value(v)) == NULL)
				return kfail(c, "required", "the property \"%s\" is required", json_string_value(v));
	if (n->draft != D07)
		TRY(dependent_required(c, n, JK_DEPENDENTREQUIRED, inst));
	return dependent_required(c, n, JK_DEPENDENCIES, inst);
}

int
jschema_assert(const struct jnode *n, json_t *inst, struct jfail *f)
{
	TRY(kw_type(f, n, inst));
	TRY(kw_enum(f, n, inst));
	TRY(kw_number(f, n, inst));
	TRY(kw_string(f, n, inst));
	TRY(kw_array(f, n, inst));
	return kw_object(f, n, inst);
}
