/* The pins file's parser (pins_parse, src/config/pins.c) on any bytes. Properties: an
 * error names the file and is a terminated string; a text that parses formats to one
 * that parses to the same pins and formats to the same bytes (the format is a fixed
 * point); each pin is found by its key with its fields, and pins_set takes every pin the
 * parser read (what one accepts, the other does). */
#include "autoconf.h"

#include "buf.h"
#include "fuzz.h"
#include "pins.h"

/* The formatted text of p in b (a new buffer). */
static void
format(const struct pins *p, struct buf *b)
{
	buf_init(b, PINS_FILE_MAX + 4096);
	FUZZ_CHECK(pins_format(p, b) == 0);
}

/* Every pin of p is in q, alike. */
static void
check_same(const struct pins *p, const struct pins *q)
{
	const struct pin *a, *b;
	size_t i;

	FUZZ_CHECK(pins_count(p) == pins_count(q));
	for (i = 0; (a = pins_at(p, i)) != NULL; i++) {
		FUZZ_CHECK((b = pins_find(q, a->upstream, a->kind, a->name)) != NULL);
		FUZZ_CHECK(strcmp(a->digest, b->digest) == 0 && a->when == b->when && strcmp(a->by, b->by) == 0);
		FUZZ_CHECK((a->def == NULL) == (b->def == NULL) && (a->def == NULL || strcmp(a->def, b->def) == 0));
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pins *p = NULL, *q = NULL, *r;
	struct gw_error err;
	struct buf a, b;
	size_t i;

	if (pins_parse((const char *)data, size, "fuzz.pins", &p, &err) < 0) {
		FUZZ_CHECK(p == NULL && (err.code == GW_ECONFIG || err.code == GW_EINTERNAL));
		FUZZ_CHECK(memchr(err.detail, '\0', sizeof(err.detail)) && strncmp(err.detail, "fuzz.pins:", 10) == 0);
		return 0;
	}
	format(p, &a);
	FUZZ_CHECK(pins_parse(a.data, a.len, "again", &q, &err) == 0);
	check_same(p, q);
	format(q, &b);
	FUZZ_CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
	FUZZ_CHECK((r = pins_new()) != NULL);
	for (i = 0; i < pins_count(p); i++)
		FUZZ_CHECK(pins_set(r, pins_at(p, i), &err) == 0);
	check_same(p, r);
	buf_free(&a);
	buf_free(&b);
	pins_free(p);
	pins_free(q);
	pins_free(r);
	return 0;
}
