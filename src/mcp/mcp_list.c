/* mcp_list — the lists of the catalog a caller sees: the records the policy leaves it
 * (decided once per profile and catalog copy), pages under sealed cursors bound to the
 * caller and the list, cut from the catalog's record texts (catalog_page_text), cached
 * per worker and spliced into the answer. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "mcp_call.h"
#include "secret.h"

#define CURSOR_AD	"mcpgate cursor v1 "

/* Gateway-owned cursors: the offset sealed under the session key, bound to the caller
 * and to the list. */
static void
cursor_ad(const char *list, const char *who, char *ad, size_t n)
{
	snprintf(ad, n, "%s%s %s", CURSOR_AD, list, who);
}

int
mcp_cursor_seal(const unsigned char *key, const char *list, const char *who, size_t off,
    char *out, size_t outlen)
{
	char ad[96], plain[32];

	cursor_ad(list, who, ad, sizeof(ad));
	snprintf(plain, sizeof(plain), "%zu", off);
	return secret_seal(key, plain, strlen(plain), ad, out, outlen);
}

int
mcp_cursor_open(const unsigned char *key, const char *list, const char *who, const char *cursor,
    size_t *off)
{
	char ad[96], plain[32], *end;

	cursor_ad(list, who, ad, sizeof(ad));
	if (secret_open(key, cursor, ad, plain, sizeof(plain)) < 0)
		return -1;
	*off = strtoul(plain, &end, 10);
	return *end != '\0' || *off == 0 ? -1 : 0;
}

/* Does the caller see record i of kind? The policy's word on it (policy_decide), from
 * one of the upstreams that offer it (one is enough: its request goes there,
 * federate.c's pick_owner). */
static int
record_visible(const struct exchange *x, json_t *doc, enum catalog_kind kind, size_t i)
{
	struct policy_tool t;
	const char *up, *orig, *key;
	size_t alt;

	if (kind == CATALOG_TOOLS) {
		catalog_policy_tool(x->cfg, doc, i, &t, NULL, NULL);
		return t.name && policy_decide(&x->pc, &t, NULL) == POLICY_VISIBLE;
	}
	key = catalog_key(doc, kind, i);
	for (alt = 0; catalog_route_alt(doc, kind, (long)i, alt, &up, &orig) == 0; alt++)
		if (mcp_sees(x, kind, key, config_upstream(x->cfg, up)))
			return 1;
	return 0;
}

/* The worker's cache of what was derived from the host's catalog, for x: none when x's
 * catalog is its caller's own (nothing of it is kept for another). */
static struct fragcache *
pages_of(const struct exchange *x)
{
	return x->doc_mine ? NULL : x->env->pages;
}

/* x->vis: the indexes of the catalog's records of kind the caller sees (NULL with the
 * policy off), kept from an earlier list of the request, else from the worker's cache
 * for its profile and catalog copy, else decided record by record and stored there. 0,
 * or -1 without memory. */
static int
visible(struct exchange *x, json_t *doc, enum catalog_kind kind)
{
	struct {
		uint64_t marker, cfg;
		unsigned char profile[16];
	} key;
	const char *cached;
	size_t i, n = catalog_count(doc, kind), len;
	uint64_t epoch = x->env->view->serial;

	if (x->pc.off || x->vis_kind == (int)kind)
		return 0;
	memset(&key, 0, sizeof(key));
	key.marker = UINT64_MAX - (uint64_t)kind;	/* not a list page's kind: a visible set */
	key.cfg = x->cfg->serial;	/* a reload may change the policy and keep the catalog */
	memcpy(key.profile, x->profile, sizeof(key.profile));
	free(x->vis);
	x->vis_kind = -1;
	/* The exchange owns vis (freed at its end); gcc -fanalyzer, not seeing that end,
	 * takes it for a leak. */
	if ((x->vis = malloc((n ? n : 1) * sizeof(*x->vis))) == NULL)
		return -1;
	x->n_vis = 0;
	if ((cached = fragcache_get(pages_of(x), epoch, &key, sizeof(key), &len)) != NULL) {
		memcpy(x->vis, cached, len);	/* a copy: the cache may evict it */
		x->n_vis = len / sizeof(*x->vis);
	} else {
		for (i = 0; i < n; i++)
			if (record_visible(x, doc, kind, i))
				x->vis[x->n_vis++] = (uint32_t)i;
		fragcache_put(pages_of(x), epoch, &key, sizeof(key), (const char *)x->vis,
		    x->n_vis * sizeof(*x->vis));
	}
	x->vis_kind = (int)kind;
	return 0;
}

/* The serialized page [off, to) of the kind's records (of their vis subset when not
 * NULL), from the worker's cache or made and stored there: 1 with el->splice set, or 0
 * (then the page goes out as JSON). */
static int
cached_page(struct element *el, json_t *doc, size_t off, size_t to, size_t size, const uint32_t *vis)
{
	struct {
		uint64_t kind, off, size, cfg;
		unsigned char profile[16];
	} key;
	const struct exchange *x = el->x;
	struct fragcache *pages = pages_of(x);
	uint64_t epoch = x->env->view->serial;
	struct buf text;

	memset(&key, 0, sizeof(key));
	key.kind = (uint64_t)el->mm->kind;
	key.off = off;
	key.size = size;
	key.cfg = x->cfg->serial;
	memcpy(key.profile, x->profile, sizeof(key.profile));
	if (pages == NULL)
		return 0;
	if ((el->splice = fragcache_get(pages, epoch, &key, sizeof(key), &el->splice_len)) != NULL)
		return 1;
	buf_init(&text, RESPONSE_BODY_MAX);
	if (catalog_page_text(doc, (enum catalog_kind)el->mm->kind, vis, off, to, &text) == 0) {
		/* the cache takes the text (not a copy) */
		if (fragcache_take(pages, epoch, &key, sizeof(key), text.data, text.len) == 0)
			el->splice = fragcache_get(pages, epoch, &key, sizeof(key), &el->splice_len);
		buf_init(&text, RESPONSE_BODY_MAX);
	}
	buf_free(&text);
	return el->splice != NULL;
}

/* The page [off, to) of the kind's records (of their vis subset when not NULL) as JSON:
 * a new array, or NULL. */
static json_t *
page_json(json_t *doc, enum catalog_kind kind, const uint32_t *vis, size_t off, size_t to)
{
	struct buf text;
	json_t *page = NULL;

	buf_init(&text, RESPONSE_BODY_MAX);
	if (catalog_page_text(doc, kind, vis, off, to, &text) == 0)
		page = json_loadb(text.data, text.len, 0, NULL);
	buf_free(&text);
	return page;
}

/* tools/list, prompts/list, resources/list, resources/templates/list: a page of the
 * catalog. */
json_t *
mcp_list(struct element *el, json_t *params, struct gw_error *err)
{
	struct exchange *x = el->x;
	enum catalog_kind kind = (enum catalog_kind)el->mm->kind;
	const char *array = catalog_kinds[kind].array;
	const uint32_t *vis = NULL;
	json_t *doc, *page, *result, *cur;
	char who[33], sealed[MCP_CURSOR_MAX];
	size_t off = 0, n, to, size = (size_t)x->cfg->page_size;

	if (params && !json_is_object(params))
		return gw_error_set(err, GW_EPARAMS, "a list takes an object"), NULL;
	mcp_caller_who(x->cfg, x->caller, who);
	if ((cur = json_object_get(params, "cursor")) != NULL &&
	    (!json_is_string(cur) || x->env->session_key == NULL ||
	    mcp_cursor_open(x->env->session_key, array, who, json_string_value(cur), &off) < 0))
		return gw_error_set(err, GW_EPARAMS, "Invalid cursor"), NULL;
	doc = mcp_catalog(x);
	n = catalog_count(doc, kind);
	if (visible(x, doc, kind) < 0)	/* what this caller may see */
		return gw_error_set(err, GW_EINTERNAL, "out of memory"), NULL;
	if ((vis = x->vis) != NULL)
		n = x->n_vis;
	to = off + size < n ? off + size : n;
	if (x->splice_ok && cached_page(el, doc, off, to, size, vis))
		page = json_null();	/* the placeholder mcp_answer_spliced() replaces */
	else if ((page = page_json(doc, kind, vis, off, to)) == NULL)
		return gw_error_set(err, GW_EINTERNAL, "the page could not be made"), NULL;
	result = json_pack("{s:o}", array, page);
	if (result && off + size < n && x->env->session_key &&
	    mcp_cursor_seal(x->env->session_key, array, who, off + size, sealed, sizeof(sealed)) == 0)
		json_object_set_new(result, "nextCursor", json_string(sealed));
	if (result && x->modern) {
		json_object_set_new(result, "cacheScope", json_string("private"));
		json_object_set_new(result, "ttlMs", json_integer(0));
	}
	return result;
}

/* The answer to a list whose page came from the cache: out with the page's text in
 * place of the null placeholder of the list's member, into the exchange's response.
 * The page is held, not copied: the response lets it go once written. Steals out. */
void
mcp_answer_spliced(const struct element *el, json_t *out)
{
	struct response *resp = el->x->resp;
	char needle[64], *head = NULL, *at;
	struct buf b;
	size_t n;

	buf_init(&b, RESPONSE_BODY_MAX);
	if (jsonw_dump(&b, out) == 0)
		head = b.data;
	json_decref(out);
	/* Every quote inside a JSON string is escaped, so the member's name followed by
	 * :null occurs once, at the placeholder. */
	n = (size_t)snprintf(needle, sizeof(needle), "\"%s\":null", catalog_kinds[el->mm->kind].array);
	fragcache_hold(el->splice);
	if (head == NULL || (at = strstr(head, needle)) == NULL) {
		fragcache_release(el->splice);
		response_set_error(resp, GW_EINTERNAL, "the answer could not be written");
	} else if (response_set_body_spliced(resp, 200, "application/json", &(struct response_parts){ head,
	    (size_t)(at - head) + n - 4, el->splice, el->splice_len, fragcache_release_cb, at + n, strlen(at + n) }) < 0)
		response_set_error(resp, GW_EINTERNAL, "the answer could not be written");
	buf_free(&b);
}
