/* JSON-RPC bodies (src/http/jsonrpc.c): jsonrpc_parse, then jsonrpc_validate on the message
 * or on every element of a batch. Properties: a failure is -32700 or -32600; a body
 * that jansson reads without duplicate keys parses to exactly that value; a batch that
 * repeats a member name somewhere is split into as many elements as the array has, and
 * every element the splitter read is the one jansson reads. And jsonw (src/base/jsonw.c),
 * the writer of the answers and the log, writes any value jansson read as the very bytes
 * json_dumps writes. */
#include "autoconf.h"

#include <jansson.h>

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "jsonrpc.h"
#include "jsonw.h"

static void
validate(json_t *m)
{
	struct jr_msg msg;
	struct gw_error err;
	json_t *id;

	if (jsonrpc_validate(m, &msg, &id, &err) == 0) {
		FUZZ_CHECK(msg.kind == JR_REQUEST || msg.kind == JR_NOTIFICATION || msg.kind == JR_RESPONSE);
		FUZZ_CHECK(msg.kind == JR_RESPONSE || (msg.method != NULL && *msg.method));
		FUZZ_CHECK((msg.kind == JR_NOTIFICATION) == (msg.id == NULL));
		FUZZ_CHECK(msg.params == NULL || json_is_object(msg.params) || json_is_array(msg.params));
	} else
		FUZZ_CHECK(err.code == GW_EINVALID && err.detail[0]);
	FUZZ_CHECK(id == NULL || json_is_string(id) || json_is_integer(id));
}

/* jsonw_dump(v) is json_dumps(v, JSON_COMPACT) to the byte. */
static void
same_bytes(json_t *v)
{
	char *want;
	struct buf b;

	if (v == NULL)
		return;
	want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	buf_init(&b, 1u << 24);
	FUZZ_CHECK(want != NULL && jsonw_dump(&b, v) == 0 && b.len == strlen(want) && memcmp(b.data, want, b.len) == 0);
	buf_free(&b);
	free(want);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gw_error err;
	json_t *j, *strict, *loose, *el;
	size_t i;

	j = jsonrpc_parse((const char *)data, size, &err);
	strict = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
	loose = strict ? NULL : json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	if (j == NULL) {
		FUZZ_CHECK(err.code == GW_EPARSE || err.code == GW_EINVALID);
		FUZZ_CHECK(err.detail[0] != '\0');
		FUZZ_CHECK(!json_is_array(loose) || json_array_size(loose) == 0);
	} else {
		FUZZ_CHECK(json_is_object(j) || (json_is_array(j) && json_array_size(j) > 0));
		if (strict)
			FUZZ_CHECK(json_equal(j, strict));
		else {	/* a batch with a repeated member name somewhere */
			FUZZ_CHECK(json_is_array(loose) && json_array_size(j) == json_array_size(loose));
			json_array_foreach(j, i, el)
				if (json_object_size(el) != 1 || json_object_iter_key(json_object_iter(el))[0] != '\001')
					FUZZ_CHECK(json_equal(el, json_array_get(loose, i)));
		}
		if (json_is_array(j))
			json_array_foreach(j, i, el)
				validate(el);
		else
			validate(j);
	}
	same_bytes(strict ? strict : loose);
	same_bytes(j);
	json_decref(j);
	json_decref(strict);
	json_decref(loose);
	return 0;
}
