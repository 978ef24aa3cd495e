/* schemas — a thread's compiled tool schemas, by catalog document and tool index. */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "schemas.h"

/* The revision since which MCP's schemas are 2020-12 unless they say otherwise. */
#define DIALECT_SINCE	"2025-11-25"

/* One tool of a document: its schemas once compiled with opts. */
struct tool_entry {
	int done;
	struct schemas_opts opts;
	struct jschema *in, *out;
	struct tool_schemas view;
};

/* One document: a reference of ours, its tools, when it was last used. */
struct doc_entry {
	json_t *doc;
	size_t n;
	struct tool_entry *tools;
	uint64_t used;
};

struct schemas {
	struct doc_entry docs[SCHEMAS_DOCS];
	uint64_t clock;
};

void
schemas_opts_of(json_t *doc, const struct cfg_upstream *up, struct schemas_opts *o)
{
	const char *v = json_string_value(json_object_get(json_object_get(catalog_upstreams(doc), up->s.name), "version"));

	o->draft = v && strcmp(v, DIALECT_SINCE) < 0 ? JSCHEMA_DRAFT_07 : JSCHEMA_DRAFT_2020_12;
	o->format_assert = up->validate_formats;
}

struct schemas *
schemas_new(void)
{
	return calloc(1, sizeof(struct schemas));
}

static void
tool_clear(struct tool_entry *t)
{
	jschema_free(t->in);
	jschema_free(t->out);
	memset(t, 0, sizeof(*t));
}

static void
doc_clear(struct doc_entry *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		tool_clear(&d->tools[i]);
	free(d->tools);
	json_decref(d->doc);
	memset(d, 0, sizeof(*d));
}

void
schemas_free(struct schemas *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < SCHEMAS_DOCS; i++)
		doc_clear(&c->docs[i]);
	free(c);
}

/* doc's entry: found, or made in place of the one used longest ago. NULL without
 * memory. */
static struct doc_entry *
doc_entry(struct schemas *c, json_t *doc)
{
	struct doc_entry *d = NULL;
	size_t i, n;

	for (i = 0; i < SCHEMAS_DOCS; i++)
		if (c->docs[i].doc == doc)
			d = &c->docs[i];
	if (d == NULL) {
		d = &c->docs[0];
		for (i = 1; i < SCHEMAS_DOCS; i++)
			if (c->docs[i].used < d->used)
				d = &c->docs[i];
		doc_clear(d);
		n = catalog_count(doc, CATALOG_TOOLS);
		if (n && (d->tools = calloc(n, sizeof(*d->tools))) == NULL)
			return NULL;
		d->n = n;
		d->doc = json_incref(doc);
	}
	d->used = ++c->clock;
	return d;
}

/* member (inputSchema, outputSchema) of tool record rec compiled into *s; *failed and
 * reason when it does not compile. -1 when memory ran out: nothing is kept, the next
 * call tries again. */
static int
compile(json_t *rec, const char *member, const struct schemas_opts *o, struct jschema **s, int *failed,
    char *reason)
{
	struct jschema_opts jo = { o->draft, o->format_assert, 0, NULL, NULL };
	json_t *schema = json_object_get(rec, member);
	struct gw_error err;

	if (schema == NULL || (*s = jschema_compile(schema, &jo, &err)) != NULL)
		return 0;
	if (err.code == GW_EINTERNAL)
		return -1;
	*failed = 1;
	snprintf(reason, SCHEMAS_REASON_MAX, "%.*s", SCHEMAS_REASON_MAX - 1, err.detail[0] ? err.detail : err_info(err.code)->message);
	return 0;
}

int
schemas_of(struct schemas *c, json_t *doc, size_t ix, const struct schemas_opts *o,
    const struct tool_schemas **out)
{
	struct doc_entry *d = doc_entry(c, doc);
	struct tool_entry *t;
	json_t *rec;
	int rc;

	if (d == NULL || ix >= d->n)
		return -1;
	t = &d->tools[ix];
	if (t->done && memcmp(&t->opts, o, sizeof(*o)) == 0) {
		t->view.fresh = 0;
		*out = &t->view;
		return 0;
	}
	tool_clear(t);
	if ((rec = catalog_record(doc, CATALOG_TOOLS, ix)) == NULL)
		return -1;
	rc = compile(rec, "inputSchema", o, &t->in, &t->view.in_failed, t->view.in_reason);
	if (rc == 0)
		rc = compile(rec, "outputSchema", o, &t->out, &t->view.out_failed, t->view.out_reason);
	json_decref(rec);
	if (rc < 0) {
		tool_clear(t);
		return -1;
	}
	t->view.in = t->in;
	t->view.out = t->out;
	t->view.fresh = 1;
	t->opts = *o;
	t->done = 1;
	*out = &t->view;
	return 0;
}
