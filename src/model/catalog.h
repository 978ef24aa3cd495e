/* catalog — the tools of every upstream as the gateway exposes them: names mapped with
 * the upstream's prefix, a description on every tool, sorted by name. A document type,
 * pure: fetched by catalog_fetch.h, kept in the state file by catalog_store.h.
 *
 * The gateway decides on a record by its key (and a tool's readOnlyHint) and sends the
 * rest as the upstream wrote it, so the document keeps two things of each record: an
 * index record, parsed, holding only what decisions read, and the whole record as
 * compact JSON text, never parsed again: a list page is cut from those texts
 * (catalog_page_text). A reader of the state file (a CGI run, a worker after a new
 * generation) parses the index alone, and only when something reads it: a document
 * catalog_unpack made keeps its index as text until then, and a list page of a gateway
 * without a policy needs only the count and the texts. So a document is read through
 * the functions below (never its members directly), by one thread at a time (a
 * worker's view and its requests): the first that needs the index parses it in place. */
#ifndef GW_CATALOG_H
#define GW_CATALOG_H

#include <jansson.h>
#include <stdint.h>

#include "buf.h"
#include "config.h"

#define CATALOG_MAX_BYTES	(4u << 20)	/* the serialized catalog in the state file */
/* Of CATALOG_MAX_BYTES, what the document's own members may take (the upstreams' status
 * and capabilities), and so what no upstream's records may: a part, and a part per
 * upstream. The rest is shared among the upstreams by what they need (max-min: the
 * smaller needs in full, the rest evenly among the larger), each upstream's records
 * kept in its own order while they fit its share; one over it is cut, never another,
 * and the cut is named in the log, the upstream's status and /mcp/health. */
#define CATALOG_RESERVE		(64u << 10)
#define CATALOG_RESERVE_UPSTREAM	1024u
#define CATALOG_RECORD_MAX	(256u << 10)	/* one record's JSON: a larger one is left out */
#define CATALOG_RECORD_MAX_TEXT	"256 KiB"
#define CATALOG_NOTE_MAX	512		/* catalog_note's text */

#define CATALOG_URI_MAX		2048		/* a resource URI or URI template */

/* What the catalog holds of each upstream: its tools and prompts (exposed under the
 * upstream's prefix), its resources and resource templates (URIs unchanged). */
enum catalog_kind { CATALOG_TOOLS, CATALOG_PROMPTS, CATALOG_RESOURCES, CATALOG_TEMPLATES, CATALOG_NKINDS };

/* The method that lists each kind, and the capability that offers it, are the method
 * table's (method.h, method_list_of). */
struct catalog_kind_info {
	const char *array;	/* the member of the list result, and of the document */
	const char *key;	/* the member that names a record */
	const char *routes;	/* the document's member with their routes */
	int prefixed;		/* the key gets the upstream's prefix */
};
extern const struct catalog_kind_info catalog_kinds[CATALOG_NKINDS];

/* The catalog document:
 *   {"tools": [index records of the exposed tools, sorted by name: {"name", "digest":
 *              catalog_digest's} and, when the tool's annotations say readOnlyHint:
 *              true, {"annotations": {"readOnlyHint": true}}],
 *    "routes": [[upstream section name, the tool's name upstream (, the same for each
 *               other upstream that exposes that name)], ...]  (same order),
 *    "prompts"/"promptRoutes", "resources"/"resourceRoutes",
 *    "resourceTemplates"/"templateRoutes": the same for the other kinds (index
 *               records: their key and digest; a resource's, its key alone),
 *    "upstreams": {name: {"ok": true, "tools": n, "caps": {its capabilities: the kinds and
 *                      their true subscribe and listChanged}, and, when some of its
 *                      records were left out, "cut": how many, "share": its bytes;
 *                      "perCaller": true when its records are each caller's own: its
 *                      lists said "perCaller": true}
 *                      | {"ok": false, "tools": 0, "reason": "..."}},
 *    "records": {"tools": the whole records as exposed (prefixed name, description,
 *               inputSchema), each as compact JSON, in the index's order, separated
 *               by newlines (compact JSON has none); "prompts", "resources",
 *               "resourceTemplates": the same}} */

/* Builds the document from what each upstream offers: lists[i] is, for
 * cfg->upstreams[i], an object {"caps": {...}, "tools": [...], "prompts": [...],
 * "resources": [...], "resourceTemplates": [...]} (members absent when not offered),
 * or just the array of its tools, or NULL with reasons[i] when it failed. Pure. */
json_t *catalog_build(const struct config *cfg, json_t *const *lists, const char *const *reasons);
/* catalog_build, with every key bound to the upstream that offered it: prev (may be NULL)
 * is the catalog before. What an upstream that is down now offered in prev stays its
 * (held): the same key of an upstream later in the file is not served meanwhile, and a
 * request for it is refused rather than passed to another upstream than the one it
 * meant. The document's "held": {kind's array: {key: [upstream, key there]}}. */
json_t *catalog_build_bound(const struct config *cfg, json_t *const *lists, const char *const *reasons, json_t *prev);
/* What each of cfg's upstreams offered when doc was built, as catalog_build takes it:
 * lists[i] a new object ({"caps", and an array for each kind it has records of, each
 * under its key there}) or NULL with reasons[i] (borrowed from doc; NULL: none said) when
 * doc has it left out or does not know it. A record several upstreams expose is the
 * first's record for each; one the pins hold back is there too (catalog_pending). */
void catalog_lists(json_t *doc, const struct config *cfg, json_t **lists, const char **reasons);
/* The upstream that holds key of kind while it is down (catalog_build_bound), or NULL. */
const char *catalog_held(json_t *doc, enum catalog_kind kind, const char *key);
/* Every key of kind held so: {key: [upstream, key there]} (borrowed), or NULL. */
json_t *catalog_held_all(json_t *doc, enum catalog_kind kind);
/* What the pins make of the record served (or held back) under key of kind, when they
 * do not simply approve it (pinning.h): its entry in the document's "pending", borrowed
 * {"upstream", "name": its key there, "state": "new" | "changed", "digest" (absent when
 * its definition has none), "pinned": the approved digest of a changed one, "hygiene":
 * the first finding, "held": true and "record": the upstream's record as JSON text when
 * the pins hold it back (then its key is held, as catalog_held says, and catalog_lists
 * gives its record back)}; NULL when pinned, not pinned by its upstream, or unknown. */
json_t *catalog_pending(json_t *doc, enum catalog_kind kind, const char *key);
/* Every such entry of kind: {key: entry} (borrowed), or NULL. */
json_t *catalog_pending_all(json_t *doc, enum catalog_kind kind);

/* The bytes of doc's record texts, all kinds (what its size grows with). */
size_t catalog_bytes(json_t *doc);
/* How many records of kind doc holds (the index is not parsed for it). */
size_t catalog_count(json_t *doc, enum catalog_kind kind);
/* The key (exposed name, URI, URI template) of record ix of kind, borrowed; NULL past
 * the last. */
const char *catalog_key(json_t *doc, enum catalog_kind kind, size_t ix);
/* The digest (tooldef.h) of record ix of kind as its upstream listed it, before the
 * gateway prefixed its name or gave it a description or schema, borrowed; NULL for a
 * resource, a record past the last, or one whose definition has no digest. */
const char *catalog_digest(json_t *doc, enum catalog_kind kind, size_t ix);
/* The document's "upstreams" (borrowed). */
json_t *catalog_upstreams(json_t *doc);

/* Appends to out, as one JSON array, the whole records of kind whose indexes are
 * ix[from] to ix[to - 1] (ascending; ix NULL: the indexes from to to - 1): a list page,
 * as the upstreams wrote its records. 0, or -1 when there is no such record or out is
 * full. */
int catalog_page_text(json_t *doc, enum catalog_kind kind, const uint32_t *ix, size_t from, size_t to,
    struct buf *out);
/* The whole record ix of kind, parsed: a new reference, or NULL. */
json_t *catalog_record(json_t *doc, enum catalog_kind kind, size_t ix);

/* The document as the state file keeps it, in out: its JSON without "records", then
 * each kind's record texts; lens: the length of each part, in that order. 0, or -1
 * (out of memory, or over out's ceiling). */
#define CATALOG_PARTS	(1 + CATALOG_NKINDS)
int catalog_pack(json_t *doc, struct buf *out, uint32_t lens[CATALOG_PARTS]);
/* The document again from what catalog_pack wrote (data: the parts, lens long): a new
 * reference, or NULL without memory. Its index is parsed when first read; one that does
 * not parse, or lacks a record text for an index record or has one more, reads as the
 * empty catalog (logged). The record texts are not parsed: what the state file (the
 * service user's own, 0600) holds goes out as it was written. */
json_t *catalog_unpack(const char *data, const uint32_t lens[CATALOG_PARTS]);

/* The index of the exposed tool name in doc's sorted tools, or -1. */
long catalog_find(json_t *doc, const char *name);
/* The index of the record of kind whose key (exposed name, URI, URI template) is key. */
long catalog_find_in(json_t *doc, enum catalog_kind kind, const char *key);
/* Where record ix of kind comes from: its upstream's section name and its key there
 * (borrowed from doc). 0, or -1 when there is no such record. */
int catalog_route(json_t *doc, enum catalog_kind kind, long ix, const char **upstream, const char **orig);
/* The same for the alt-th upstream that offers that key (0: the first in the file, whose
 * record is listed; the others come after it): -1 when there are no more. */
int catalog_route_alt(json_t *doc, enum catalog_kind kind, long ix, size_t alt, const char **upstream,
    const char **orig);

/* Tool ix of doc as the policy sees it: its exposed name, its readOnlyHint, and the
 * upstream of cfg it comes from (NULL when none); *upstream and *orig (each may be NULL)
 * its route, as catalog_route. Strings borrowed from doc. */
struct policy_tool;
void catalog_policy_tool(const struct config *cfg, json_t *doc, size_t ix, struct policy_tool *t,
    const char **upstream, const char **orig);

/* Which upstreams of doc were cut to their share, in words ("upstream NAME: N records
 * left out (...)", joined by "; ", as many as fit len): 1 when any was, else 0 and "". */
int catalog_note(json_t *doc, char *out, size_t len);

/* 1 when an upstream was left out of doc. */
int catalog_degraded(json_t *doc);

/* 1 when doc's index reads back (catalog_unpack's, parsed now), else 0. */
int catalog_index_ok(json_t *doc);
/* 1 when a and b hold the same index (the same records, routes and upstreams). */
int catalog_same(json_t *a, json_t *b);

#endif
