/* mcp_check — a tool's schemas held against its calls: the arguments of a tools/call
 * against the tool's inputSchema before anything reaches its upstream ([upstream]
 * validate), and the result's structuredContent against its outputSchema after
 * (validate-output). The schemas are the catalog's records, the ones tools/list showed,
 * compiled once per worker and catalog (schemas.h). */
#include "autoconf.h"

#include <string.h>

#include "catalog.h"
#include "log.h"
#include "mcp_call.h"
#include "schemas.h"

/* Tool name's schemas in the request's catalog, when its upstream checks its arguments
 * (output 0) or its results (1): 1 with *ts and *up, 0 when nothing is to be checked,
 * -1 with err. */
static int
schemas_for(struct exchange *x, const char *name, int output, const struct tool_schemas **ts,
    const struct cfg_upstream **up, struct gw_error *err)
{
	json_t *doc = mcp_catalog(x);
	struct schemas_opts o;
	const char *upstream, *orig;
	long ix;

	if (name == NULL || x->env->schemas == NULL || (ix = catalog_find(doc, name)) < 0 ||
	    catalog_route(doc, CATALOG_TOOLS, ix, &upstream, &orig) < 0 ||
	    (*up = config_upstream(x->cfg, upstream)) == NULL ||
	    (output ? (*up)->validate_output == UP_OUTPUT_NO : !(*up)->validate))
		return 0;
	schemas_opts_of(doc, *up, &o);
	if (schemas_of(x->env->schemas, doc, (size_t)ix, &o, ts) < 0) {
		gw_error_set(err, GW_EINTERNAL, "out of memory compiling the schemas of tool %s", name);
		return -1;
	}
	/* Once per worker and catalog: a schema that cannot be checked. */
	if ((*ts)->fresh && (*ts)->in_failed && (*up)->validate)
		log_warn(NULL, "tool %s: its inputSchema cannot be checked by the gateway: %s", name, (*ts)->in_reason);
	if ((*ts)->fresh && (*ts)->out_failed && (*up)->validate_output != UP_OUTPUT_NO)
		log_warn(NULL, "tool %s: its outputSchema cannot be checked by the gateway: %s", name, (*ts)->out_reason);
	return 1;
}

int
mcp_check_args(struct element *el, json_t *params, struct gw_error *err)
{
	struct exchange *x = el->x;
	const char *name = json_string_value(json_object_get(params, "name"));
	const struct tool_schemas *ts;
	const struct cfg_upstream *up = NULL;
	struct jschema_error e;
	json_t *args, *none = NULL;
	int rc;

	if ((rc = schemas_for(x, name, 0, &ts, &up, err)) <= 0)
		return rc;
	if (ts->in_failed) {
		/* What cannot be checked is not passed on unchecked: the operator decides
		 * (validate = no for the upstream) rather than the caller. */
		gw_error_set(err, GW_EUPSTREAM, "tool %s: the gateway cannot check arguments against its inputSchema "
		    "(%s), so it does not call it", name, ts->in_reason);
		return -1;
	}
	if (ts->in == NULL)
		return 0;
	if ((args = json_object_get(params, "arguments")) == NULL)
		args = none = json_object();
	else if (!json_is_object(args))
		return 0;	/* what no tool takes: federate.c refuses it */
	rc = jschema_validate(ts->in, args, &e);
	json_decref(none);
	if (rc == 1)
		return 0;
	gw_error_set(err, GW_EPARAMS, "Invalid arguments for tool %s: %s%s%s (%s, at %s)", name,
	    e.instance_path[0] ? e.instance_path : "", e.instance_path[0] ? ": " : "", e.message, e.keyword,
	    e.schema_path[0] ? e.schema_path : "/");
	json_decref(el->err_data);
	el->err_data = json_pack("{s:s, s:s, s:s}", "instancePath", e.instance_path, "keyword", e.keyword,
	    "schemaPath", e.schema_path);
	log_info(x->req->id, "tools/call %s: arguments refused: %s at %s (schema %s)", name, e.keyword,
	    e.instance_path[0] ? e.instance_path : "/", e.schema_path[0] ? e.schema_path : "/");
	return -1;
}

/* A result that is tool name's error, saying why (a new reference). */
static json_t *
tool_error(const char *name, const char *why)
{
	char text[1200];

	snprintf(text, sizeof(text), "The gateway did not pass on the result of tool %s: %s", name, why);
	return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", text, "isError", 1);
}

json_t *
mcp_check_result(struct element *el, json_t *params, json_t *result)
{
	struct exchange *x = el->x;
	const char *name = json_string_value(json_object_get(params, "name"));
	const char *rt = json_string_value(json_object_get(result, "resultType"));
	const struct tool_schemas *ts;
	const struct cfg_upstream *up = NULL;
	struct jschema_error e;
	struct gw_error err;
	json_t *sc, *out;
	char why[1024];

	if (json_is_true(json_object_get(result, "isError")) || (rt && strcmp(rt, "complete") != 0) ||
	    schemas_for(x, name, 1, &ts, &up, &err) <= 0 || (ts->out == NULL && !ts->out_failed))
		return result;
	if (ts->out_failed && up->validate_output != UP_OUTPUT_YES)
		return result;	/* said once per worker and catalog (schemas_for) */
	if (ts->out_failed)
		snprintf(why, sizeof(why), "the gateway cannot check its outputSchema (%s)", ts->out_reason);
	else if ((sc = json_object_get(result, "structuredContent")) == NULL)
		snprintf(why, sizeof(why), "no structuredContent, though the tool declares an outputSchema");
	else if (jschema_validate(ts->out, sc, &e) == 1)
		return result;
	else
		snprintf(why, sizeof(why), "its structuredContent does not match the tool's outputSchema: %s%s%s "
		    "(%s, at %s)", e.instance_path, e.instance_path[0] ? ": " : "", e.message, e.keyword,
		    e.schema_path[0] ? e.schema_path : "/");
	log_warn(x->req->id, "tools/call %s: upstream %s's result: %s%s", name, up->s.name, why,
	    up->validate_output == UP_OUTPUT_YES ? " (answered as a tool error)" : "");
	if (up->validate_output != UP_OUTPUT_YES || (out = tool_error(name, why)) == NULL)
		return result;
	json_decref(result);
	return out;
}
