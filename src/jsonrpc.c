/* jsonrpc — strict envelope validation (spec: JsonRpcRequest/Notification tables). */
#include "autoconf.h"

#include <string.h>

#include "jsonrpc.h"

static int
id_ok(json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

int
jsonrpc_validate(json_t *m, struct jr_msg *out, const char **why, json_t **idp)
{
	json_t *v, *id, *method, *params;
	const char *key;
	int has_result, has_error;

	*idp = NULL;
	memset(out, 0, sizeof(*out));
	if (!json_is_object(m))
		return *why = "a JSON-RPC message must be an object", -1;
	id = json_object_get(m, "id");
	if (id && id_ok(id))
		*idp = id;
	v = json_object_get(m, "jsonrpc");
	if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0)
		return *why = "jsonrpc must be exactly \"2.0\"", -1;
	method = json_object_get(m, "method");
	has_result = json_object_get(m, "result") != NULL;
	has_error = json_object_get(m, "error") != NULL;

	if (method == NULL && (has_result || has_error)) {
		/* An answer to one of our requests. */
		json_t *e = json_object_get(m, "error");

		if (!id_ok(id) && !(has_error && json_is_null(id)))
			return *why = "a response id must be a string or an integer", -1;
		if (has_result == has_error)
			return *why = "a response has exactly one of result and error", -1;
		if (has_error && (!json_is_object(e) || !json_is_integer(json_object_get(e, "code")) ||
		    !json_is_string(json_object_get(e, "message"))))
			return *why = "error must be an object with an integer code and a string message", -1;
		json_object_foreach(m, key, v)
			if (strcmp(key, "jsonrpc") && strcmp(key, "id") && strcmp(key, "result") && strcmp(key, "error"))
				return *why = "unexpected member in a response", -1;
		out->kind = JR_RESPONSE;
		out->id = id;
		return 0;
	}
	if (!json_is_string(method) || json_string_length(method) == 0)
		return *why = "method must be a non-empty string", -1;
	if (id != NULL && !id_ok(id))
		return *why = "id must be a string or an integer", -1;
	params = json_object_get(m, "params");
	if (params && !json_is_object(params) && !json_is_array(params))
		return *why = "params must be an object or an array", -1;
	json_object_foreach(m, key, v)
		if (strcmp(key, "jsonrpc") && strcmp(key, "id") && strcmp(key, "method") && strcmp(key, "params"))
			return *why = "unexpected member in a request", -1;
	out->kind = id ? JR_REQUEST : JR_NOTIFICATION;
	out->id = id;
	out->method = json_string_value(method);
	out->params = params;
	return 0;
}

json_t *
jsonrpc_parse(const char *body, size_t len, int *code, const char **why)
{
	json_error_t err;
	json_t *j;

	j = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);
	if (j == NULL) {
		if (strstr(err.text, "duplicate object key")) {
			*code = JSONRPC_INVALID_REQUEST;
			*why = "duplicate member name";
		} else {
			*code = JSONRPC_PARSE_ERROR;
			*why = "body is not valid JSON";
		}
		return NULL;
	}
	if (json_is_array(j) && json_array_size(j) == 0) {
		json_decref(j);
		*code = JSONRPC_INVALID_REQUEST;
		*why = "an empty batch";
		return NULL;
	}
	if (!json_is_object(j) && !json_is_array(j)) {
		json_decref(j);
		*code = JSONRPC_INVALID_REQUEST;
		*why = "a JSON-RPC payload is an object or a non-empty array";
		return NULL;
	}
	return j;
}

json_t *
jsonrpc_result(json_t *id, json_t *result)
{
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(),
	    "result", result ? result : json_object());
}

json_t *
jsonrpc_error(json_t *id, int code, const char *message, json_t *data)
{
	json_t *e = json_pack("{s:i, s:s}", "code", code, "message", message);

	if (e && data)
		json_object_set_new(e, "data", data);
	else
		json_decref(data);
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", e);
}
