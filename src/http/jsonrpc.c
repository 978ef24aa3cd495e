/* jsonrpc — strict envelope validation (spec: JsonRpcRequest/Notification tables). */
#include "autoconf.h"

#include <string.h>

#include "jsonrpc.h"

/* Marks a batch element that repeated a member name: validation reports it as such. */
#define DUPLICATE_MARK	"\001duplicate member name"

static int
id_ok(json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

/* -1, with err: GW_EINVALID and what is wrong. */
static int
invalid(struct gw_error *err, const char *what)
{
	gw_error_set(err, GW_EINVALID, "%s", what);
	return -1;
}

int
jsonrpc_validate(json_t *m, struct jr_msg *out, json_t **idp, struct gw_error *err)
{
	json_t *v, *id, *method, *params;
	const char *key;
	int has_result, has_error;

	*idp = NULL;
	memset(out, 0, sizeof(*out));
	if (!json_is_object(m))
		return invalid(err, "a JSON-RPC message must be an object");
	if (json_object_get(m, DUPLICATE_MARK))
		return invalid(err, "duplicate member name");
	id = json_object_get(m, "id");
	if (id && id_ok(id))
		*idp = id;
	v = json_object_get(m, "jsonrpc");
	if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0)
		return invalid(err, "jsonrpc must be exactly \"2.0\"");
	method = json_object_get(m, "method");
	has_result = json_object_get(m, "result") != NULL;
	has_error = json_object_get(m, "error") != NULL;

	if (method == NULL && (has_result || has_error)) {
		/* An answer to one of our requests. */
		json_t *e = json_object_get(m, "error");

		if (!id_ok(id) && !(has_error && json_is_null(id)))
			return invalid(err, "a response id must be a string or an integer");
		if (has_result == has_error)
			return invalid(err, "a response has exactly one of result and error");
		if (has_error && (!json_is_object(e) || !json_is_integer(json_object_get(e, "code")) ||
		    !json_is_string(json_object_get(e, "message"))))
			return invalid(err, "error must be an object with an integer code and a string message");
		json_object_foreach(m, key, v)
			if (strcmp(key, "jsonrpc") && strcmp(key, "id") && strcmp(key, "result") && strcmp(key, "error"))
				return invalid(err, "unexpected member in a response");
		out->kind = JR_RESPONSE;
		out->id = id;
		return 0;
	}
	if (!json_is_string(method) || json_string_length(method) == 0)
		return invalid(err, "method must be a non-empty string");
	if (id != NULL && !id_ok(id))
		return invalid(err, "id must be a string or an integer");
	params = json_object_get(m, "params");
	if (params && !json_is_object(params) && !json_is_array(params))
		return invalid(err, "params must be an object or an array");
	json_object_foreach(m, key, v)
		if (strcmp(key, "jsonrpc") && strcmp(key, "id") && strcmp(key, "method") && strcmp(key, "params"))
			return invalid(err, "unexpected member in a request");
	out->kind = id ? JR_REQUEST : JR_NOTIFICATION;
	out->id = id;
	out->method = json_string_value(method);
	out->params = params;
	return 0;
}

/* A top-level array whose whole text is valid JSON but repeats a member name somewhere:
 * each element parsed on its own, so that only the guilty ones are invalid. */
static json_t *
parse_elements(const char *body, size_t len)
{
	json_t *arr = json_array(), *el;
	size_t i = 0, start;
	int depth = 0, in_str = 0, esc = 0;

	while (i < len && body[i] != '[')
		i++;
	start = ++i;
	for (; i < len && arr; i++) {
		char c = body[i];

		if (in_str) {
			if (esc)
				esc = 0;
			else if (c == '\\')
				esc = 1;
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c == '"')
			in_str = 1;
		else if (c == '[' || c == '{')
			depth++;
		else if ((c == ']' || c == '}') && depth > 0)
			depth--;
		else if ((c == ',' || c == ']') && depth == 0) {
			el = json_loadb(body + start, i - start, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
			if (el == NULL)
				el = json_pack("{s:b}", DUPLICATE_MARK, 1);
			json_array_append_new(arr, el);
			start = i + 1;
			if (c == ']')
				break;
		}
	}
	return arr;
}

json_t *
jsonrpc_parse(const char *body, size_t len, struct gw_error *err)
{
	json_error_t jerr;
	json_t *j;

	j = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (j == NULL && strstr(jerr.text, "duplicate object key")) {
		/* Valid JSON apart from that? Then a batch judges its elements one by one. */
		j = json_loadb(body, len, JSON_DECODE_ANY, NULL);
		if (json_is_array(j)) {
			json_decref(j);
			j = parse_elements(body, len);
		} else {
			json_decref(j);
			gw_error_set(err, GW_EINVALID, "duplicate member name");
			return NULL;
		}
	}
	if (j == NULL) {
		gw_error_set(err, GW_EPARSE, "body is not valid JSON");
		return NULL;
	}
	if (json_is_array(j) && json_array_size(j) == 0) {
		json_decref(j);
		gw_error_set(err, GW_EINVALID, "an empty batch");
		return NULL;
	}
	if (!json_is_object(j) && !json_is_array(j)) {
		json_decref(j);
		gw_error_set(err, GW_EINVALID, "a JSON-RPC payload is an object or a non-empty array");
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
