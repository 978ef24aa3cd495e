/* mcp_watch — the gateway's lists as a stream watches them: a digest of each list
 * asked about (tools, prompts, resources with their templates) in the worker's
 * catalog, looked at again when the catalog view changed, each change told once as its
 * list_changed notification. A 2026-07-28 caller's subscriptions/listen
 * (mcp_subscribe.c) and an older caller's standalone stream (mcp_stream.c) watch them
 * alike. An upstream saying its lists changed makes the host fetch its catalog again
 * at once (the gateway's list may or may not differ then: the upstream's word that it
 * may). */
#include "autoconf.h"

#include <string.h>

#include "clock.h"
#include "mcp_call.h"
#include "secret.h"

static const struct {
	const char *filter;		/* 2026-07-28's name of the list change in a listen */
	enum catalog_kind kinds[2];
	size_t n;
	const char *method;
} lists[MCP_WATCH_N] = {
	{ "toolsListChanged", { CATALOG_TOOLS }, 1, "notifications/tools/list_changed" },
	{ "promptsListChanged", { CATALOG_PROMPTS }, 1, "notifications/prompts/list_changed" },
	{ "resourcesListChanged", { CATALOG_RESOURCES, CATALOG_TEMPLATES }, 2, "notifications/resources/list_changed" },
};

const char *
mcp_watch_filter(size_t i)
{
	return i < MCP_WATCH_N ? lists[i].filter : NULL;
}

/* A digest of list i's records in doc (whole, as the upstreams wrote them). */
static void
list_digest(json_t *doc, size_t i, unsigned char d[32])
{
	struct buf b;
	size_t k, n;
	struct secret_part parts[2];

	buf_init(&b, CATALOG_MAX_BYTES + 64);
	memset(d, 0, 32);
	for (k = 0; k < lists[i].n; k++) {
		b.len = 0;
		if ((n = catalog_count(doc, lists[i].kinds[k])) > 0)
			catalog_page_text(doc, lists[i].kinds[k], NULL, 0, n, &b);
		parts[0] = (struct secret_part){ d, 32 };
		parts[1] = (struct secret_part){ b.data ? b.data : "", b.len };
		secret_digest_parts(parts, 2, d, 32);
	}
	buf_free(&b);
}

void
mcp_watch_begin(struct mcp_watch *w, const struct exchange *x, json_t *doc)
{
	size_t i;

	w->serial = x->env->view->serial;
	for (i = 0; i < MCP_WATCH_N; i++)
		if (w->asked[i])
			list_digest(doc, i, w->digest[i]);
}

int
mcp_watch_now(struct mcp_watch *w, const struct exchange *x, int said, int (*tell)(void *ctx, const char *method),
    void *ctx)
{
	char who[33] = "";
	struct catalog_fetcher by = { x->env->pool, x->env->cred, x->env->own_cred, who, x->env->metrics };
	unsigned char d[32];
	json_t *doc;
	size_t i;
	int rc = 0;

	doc = catalog_get(x->env->catalog, x->env->view, &by, x->cfg, clock_mono_us() / 1000);
	for (i = 0; i < MCP_WATCH_N && rc == 0; i++) {
		if (!w->asked[i] || (x->env->view->serial == w->serial && (int)i != said))
			continue;
		list_digest(doc, i, d);
		if (memcmp(d, w->digest[i], sizeof(d)) != 0 || (int)i == said) {
			memcpy(w->digest[i], d, sizeof(d));
			rc = tell(ctx, lists[i].method);
		}
	}
	w->serial = x->env->view->serial;
	json_decref(doc);
	return rc;
}

int
mcp_watch_upstream(const struct exchange *x, const char *method)
{
	size_t i;

	for (i = 0; method && i < MCP_WATCH_N; i++)
		if (strcmp(method, lists[i].method) == 0) {
			catalog_region_expire(x->env->catalog, x->env->view);
			return (int)i;
		}
	return -1;
}
