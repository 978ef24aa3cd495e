/* The JSON Schema validator (jschema_compile, jschema_validate, src/model/jschema*.c):
 * the input is a schema and an instance, JSON texts cut at the first NUL. Properties: a
 * schema compiles or says why; a validation ends (its bounds) with 1, 0 or -1, and says
 * why when not 1; a second validation of the same instance gives the same answer (a
 * compiled schema is read-only). No remote document: references stay within the schema. */
#include "autoconf.h"

#include "jschema.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jschema_opts o = { 0 };
	struct jschema_error e, e2;
	struct jschema *s;
	char *a, *b;
	struct gw_error err;
	json_t *sch, *inst;
	int rc;

	fuzz_split2(data, size, &a, &b);
	sch = json_loads(a, JSON_DECODE_ANY, NULL);
	inst = json_loads(b, JSON_DECODE_ANY, NULL);
	o.draft = size > 0 && (data[size - 1] & 1) ? JSCHEMA_DRAFT_07 : JSCHEMA_DRAFT_2020_12;
	o.format_assert = size > 0 && (data[size - 1] & 2);
	if (sch != NULL && inst != NULL) {
		err.code = GW_OK;
		err.detail[0] = '\0';
		s = jschema_compile(sch, &o, &err);
		FUZZ_CHECK(s != NULL || (err.code != GW_OK && err.detail[0] != '\0'));
		if (s != NULL) {
			rc = jschema_validate(s, inst, &e);
			FUZZ_CHECK(rc == 1 || rc == 0 || rc == -1);
			FUZZ_CHECK(rc == 1 || e.message[0] != '\0');
			FUZZ_CHECK(jschema_validate(s, inst, &e2) == rc);
			FUZZ_CHECK(rc == 1 || strcmp(e.message, e2.message) == 0);
			jschema_free(s);
		}
	}
	json_decref(sch);
	json_decref(inst);
	free(a);
	free(b);
	return 0;
}
