/* config_keys — the configuration's contract as tables (docs/ARCHITECTURE.md §3): every
 * section and key, its type, bounds and default, and what a section kind is; how a
 * value is parsed and stored, defaulted and freed; where a key was set. config.c reads
 * files into these tables; nothing else includes this header. */
#ifndef GW_CONFIG_KEYS_H
#define GW_CONFIG_KEYS_H

#include <stddef.h>

#include "config.h"
#include "err.h"

#define UPSTREAM_TIMEOUT_DEFAULT	"30000"	/* [upstream] timeout-ms */
#define UPSTREAM_TIMEOUT_DEFAULT_MS	30000L

enum cfg_type {
	T_STR = 1,	/* any string */
	T_URL,		/* absolute http(s) URL without fragment */
	T_INT,		/* bounded integer */
	T_BOOL,		/* yes/no, true/false, on/off, 1/0 */
	T_LIST,		/* blank-separated words */
	T_ENUM,		/* one of names[], stored as index + 1 */
	T_RATE,		/* N/S, 0 = unlimited */
};

struct cfg_key {
	const char *key;
	enum cfg_type type;
	size_t offset;		/* into the section's base struct */
	long min, max;		/* T_INT */
	const char *const *names;	/* T_ENUM */
	const char *def;	/* default, parsed like a value; NULL = none */
	unsigned flags;		/* CK_* */
};

/* What a key is part of, besides its own value. */
enum {
	/* How a token is accepted: a cached acceptance holds only while every key so
	 * flagged keeps its value (cfg_accept_digest, in every token cache key). */
	CK_ACCEPT = 1 << 0,
};

/* Section kinds. Singletons live inside struct config; named ones in arrays. */
enum kind { K_GATEWAY, K_AUTH, K_LIMITS, K_METRICS, K_UPSTREAM, K_GROUP, K_TENANT, K_MAX };

struct cfg_kind {
	const char *name;
	const struct cfg_key *keys;
	int named;
	size_t elem_size;	/* named: element size */
	size_t array_off;	/* named: offset of the array pointer in struct config */
	size_t count_off;	/* named: offset of its count */
	size_t section_off;	/* singleton: offset of its struct cfg_section */
};

extern const struct cfg_kind cfg_kinds[K_MAX];

/* Stores value in base's field of k: 0, or -1 with err (GW_ECONFIG, the reason the
 * value was refused; GW_EINTERNAL without memory). */
int cfg_set_value(void *base, const struct cfg_key *k, const char *value, struct gw_error *err);
/* Every key's default where the files did not set it: 0, or -1 without memory. */
int cfg_defaults(struct config *cfg) __attribute__((warn_unused_result));
/* The digest of every CK_ACCEPT key's value (singleton sections), with its name:
 * 0, or -1 without memory. */
int cfg_accept_digest(const struct config *cfg, unsigned char out[32]) __attribute__((warn_unused_result));
/* Where key of a section of kind was set ({ NULL, 0 } when it was not). */
const struct cfg_where *cfg_where(const struct cfg_section *sec, enum kind kind, const char *key);
/* What a key that loads but that nothing implements yet does not do, or NULL. */
const char *cfg_inert(enum kind kind, const char *key);
/* Blank-separated words appended to l: 0, or -1 without memory. */
int strlist_split(struct strlist *l, const char *value);
void strlist_free(struct strlist *l);

#endif
