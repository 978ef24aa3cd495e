/* h_meta — the public discovery documents, all built from the configuration:
 * MCP metadata, RFC 9728 protected-resource metadata, RFC 8414 authorization-server
 * metadata, and the MCP registry manifest. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfgfile.h"
#include "clock.h"
#include "handlers.h"
#include "upreg.h"
#include "introspect.h"
#include "jws.h"
#include "log.h"

#define REGISTRY_SCHEMA	"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
#define AS_METADATA_MAX	(64 * 1024)

static json_t *
strlist_json(const struct strlist *l)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < l->n; i++)
		json_array_append_new(a, json_string(l->v[i]));
	return a;
}

/* Sets key to s unless s is NULL. */
static void
set_opt(json_t *o, const char *key, const char *s)
{
	if (s)
		json_object_set_new(o, key, json_string(s));
}

void
h_mcp_metadata(struct req_ctx *rc)
{
	char openapi[1024];
	json_t *doc, *authz;

	snprintf(openapi, sizeof(openapi), "%s/openapi.json", rc->cfg->docs_url);
	authz = json_pack("{s:s, s:s, s:[s], s:o, s:o}",
	    "resource_metadata", rc->cfg->prm_url,
	    "issuer", rc->cfg->issuer,
	    "authorization_servers", rc->cfg->issuer,
	    "scopes_supported", strlist_json(&rc->cfg->scopes_supported),
	    "required_scopes", strlist_json(&rc->cfg->required_scopes));
	doc = json_object();
	set_opt(doc, "name", rc->cfg->name);
	set_opt(doc, "title", rc->cfg->title);
	set_opt(doc, "description", rc->cfg->description);
	set_opt(doc, "version", rc->cfg->version);
	json_object_set_new(doc, "endpoint", json_string(rc->cfg->resource));
	json_object_set_new(doc, "transport", json_string("streamable-http"));
	json_object_set_new(doc, "authorization", authz);
	json_object_set_new(doc, "documentation", json_string(openapi));
	set_opt(doc, "website_url", rc->cfg->website_url);
	response_set_json(rc->resp, 200, doc);
}

void
h_protected_resource(struct req_ctx *rc)
{
	json_t *doc, *dpop = json_array();
	char algs[128], *save = NULL, *a;

	doc = json_pack("{s:s, s:[s], s:o, s:[s], s:s}",
	    "resource", rc->cfg->resource,
	    "authorization_servers", rc->cfg->issuer,
	    "scopes_supported", strlist_json(&rc->cfg->scopes_supported),
	    "bearer_methods_supported", "header",
	    "resource_documentation", rc->cfg->docs_url);
	set_opt(doc, "resource_name", rc->cfg->title);
	/* RFC 9728 §2: the DPoP proofs this resource verifies, and whether only bound tokens do */
	jws_alg_names(rc->cfg->dpop_algs, algs, sizeof(algs));
	for (a = strtok_r(algs, " ", &save); a; a = strtok_r(NULL, " ", &save))
		json_array_append_new(dpop, json_string(a));
	json_object_set_new(doc, "dpop_signing_alg_values_supported", dpop);
	if (rc->cfg->dpop == DPOP_REQUIRED)
		json_object_set_new(doc, "dpop_bound_access_tokens_required", json_true());
	response_set_json(rc->resp, 200, doc);
}

/* The document the as-metadata file holds: a regular file judged as at load (another
 * user able to write it would point clients where they please), a JSON object naming
 * its issuer. A new reference, or NULL (logged). */
static json_t *
metadata_file(const struct config *cfg, const char *rid)
{
	struct gw_error err;
	char *text = NULL;
	const char *why = NULL;
	json_t *doc = NULL;
	struct stat st;
	size_t len;
	int fd;

	if ((fd = cfgfile_open(cfg->as_metadata, &st, &err)) < 0) {
		why = err.detail;
		goto out;
	}
	if (cfgfile_judge(&st, CFGFILE_TRUSTED, &err) < 0)
		why = err.detail;
	else if (cfgfile_read_all(fd, AS_METADATA_MAX, &text, &len, &err) != 0)
		why = "cannot be read, or too large";
	else if ((doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL)) == NULL ||
	    !json_is_string(json_object_get(doc, "issuer"))) {
		why = "not a JSON object naming its issuer";
		json_decref(doc);
		doc = NULL;
	}
	close(fd);
out:
	if (doc == NULL)
		log_warn(rid, "as-metadata: %s: %s", cfg->as_metadata, why);
	free(text);
	return doc;
}

/* RFC 8414 metadata: the issuer's own document mirrored (fetched, shared by the host,
 * served stale while the issuer is unreachable; 500 when never fetched), or the file
 * named by as-metadata. */
void
h_authorization_server(struct req_ctx *rc)
{
	json_t *doc;

	if (strcmp(rc->cfg->as_metadata, "fetch") == 0) {
		struct gw_error err = { GW_OK, 0, "" };

		if (introspect_as_metadata(worker_auth(rc->w)->ix, rc->sh->asmeta, rc->cfg, clock_wall_ms(), &doc, &err) < 0) {
			log_warn(rc->req->id, "as-metadata: %s", err.detail);
			response_set_error(rc->resp, GW_EASMETA, NULL);
			response_set_header(rc->resp, "Retry-After", "10");
			return;
		}
		response_set_json(rc->resp, 200, doc);
		return;
	}
	if ((doc = metadata_file(rc->cfg, rc->req->id)) == NULL) {
		response_set_error(rc->resp, GW_EASMETA, "authorization server metadata file is unusable");
		return;
	}
	response_set_json(rc->resp, 200, doc);
}

void
h_server_json(struct req_ctx *rc)
{
	json_t *doc;

	doc = json_pack("{s:s, s:s}", "$schema", REGISTRY_SCHEMA, "name", rc->cfg->name);
	set_opt(doc, "title", rc->cfg->title);
	set_opt(doc, "description", rc->cfg->description);
	json_object_set_new(doc, "version", json_string(rc->cfg->version));
	set_opt(doc, "websiteUrl", rc->cfg->website_url);
	json_object_set_new(doc, "remotes", json_pack("[{s:s, s:s}]",
	    "type", "streamable-http", "url", rc->cfg->resource));
	response_set_json(rc->resp, 200, doc);
}

void
h_client_document(struct req_ctx *rc)
{
	json_t *doc = upreg_document(rc->cfg);

	if (doc == NULL)
		response_set_error(rc->resp, GW_EINTERNAL, NULL);
	else
		response_set_json(rc->resp, 200, doc);
}
