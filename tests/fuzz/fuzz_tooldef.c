/* A record's definition, digest and hygiene (tooldef.c, canon.c) on any JSON, and the
 * hygiene on any bytes as one string. Properties: nothing crashes; tooldef_digest is the
 * digest of tooldef_of's definition; canon_text writes what jansson writes of
 * canon_dup's copy with the canonical flags (and fails where jansson does); a canonical
 * text reloads to a value of the same digest and the same text (a fixed point); the
 * hygiene finds the same in a value and in its canonical reload (member order and number
 * spelling do not move it), its reason empty exactly when nothing was found. */
#include "autoconf.h"

#include <jansson.h>

#include "canon.h"
#include "fuzz.h"
#include "tooldef.h"

static void
hygiene(json_t *v, struct tooldef_flags *f)
{
	int found = tooldef_hygiene(v, 40, f);

	FUZZ_CHECK(memchr(f->reason, '\0', sizeof(f->reason)) != NULL);
	FUZZ_CHECK(found == (f->found != 0) && (f->found == 0) == (f->reason[0] == '\0'));
}

/* The canonical text of v is jansson's of canon_dup(v) with canon.h's flags, and
 * reloads to the same digest, text and findings. */
static void
check_canon(json_t *v)
{
	char d1[CANON_DIGEST_LEN], d2[CANON_DIGEST_LEN], *t1 = canon_text(v), *t2, *j;
	json_t *back = canon_dup(v);
	struct tooldef_flags f1, f2;

	j = back ? json_dumps(back, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY) : NULL;
	FUZZ_CHECK((t1 == NULL) == (j == NULL || strlen(j) > CANON_MAX_BYTES));
	FUZZ_CHECK(t1 == NULL || strcmp(t1, j) == 0);
	free(j);
	json_decref(back);
	if (t1 == NULL)
		return;
	FUZZ_CHECK((back = json_loads(t1, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL)) != NULL);
	FUZZ_CHECK(canon_digest(v, d1) == 0 && canon_digest(back, d2) == 0 && strcmp(d1, d2) == 0);
	FUZZ_CHECK((t2 = canon_text(back)) != NULL && strcmp(t1, t2) == 0);
	hygiene(v, &f1);
	hygiene(back, &f2);
	FUZZ_CHECK(f1.found == f2.found && strcmp(f1.reason, f2.reason) == 0);
	free(t1);
	free(t2);
	json_decref(back);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum catalog_kind kinds[] = { CATALOG_TOOLS, CATALOG_PROMPTS, CATALOG_TEMPLATES, CATALOG_RESOURCES };
	char d1[CANON_DIGEST_LEN], d2[CANON_DIGEST_LEN];
	json_t *v = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL), *def, *s;
	struct tooldef_flags f;
	size_t i;

	s = json_stringn_nocheck((const char *)data, size);
	hygiene(s, &f);
	json_decref(s);
	if (v == NULL)
		return 0;
	check_canon(v);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		def = tooldef_of(kinds[i], v);
		FUZZ_CHECK(def == NULL || json_is_object(def));
		if (def != NULL && tooldef_digest(kinds[i], v, d1) == 0) {
			FUZZ_CHECK(canon_digest(def, d2) == 0 && strcmp(d1, d2) == 0);
			hygiene(def, &f);
			check_canon(def);
		}
		json_decref(def);
	}
	json_decref(v);
	return 0;
}
