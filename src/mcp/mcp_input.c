/* mcp_input — an upstream's input_required (2026-07-28, SEP-2322) on its way to the
 * caller, and the caller's retry on its way back. The result reaches a 2026-07-28
 * caller as the upstream wrote it but for its requestState, which becomes ours
 * (input_seal.h): bound to the caller, the upstream and ten minutes. The retry's
 * requestState is opened back into the upstream's own, and the retry may go only to
 * that upstream (federate.c's bound). Only the requests that may take input
 * (tools/call, prompts/get, resources/read) relay it; an older caller, which has no
 * such result, gets an error. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "input_seal.h"
#include "log.h"
#include "mcp_call.h"
#include "secret.h"

/* The caller the seal binds: its digest, or "-" for a gateway without callers. */
static const char *
who_of(const struct fed_call *f)
{
	return f->who[0] ? f->who : "-";
}

int
mcp_input_retry(struct element *el, json_t *params, struct fed_call *f, char upstream[INPUT_UPSTREAM_MAX],
    json_t **relay, struct gw_error *err)
{
	const char *wrapped = json_string_value(json_object_get(params, "requestState")), *state;
	unsigned char key[32];
	int ok;

	*relay = NULL;
	if (!el->x->modern || json_object_get(params, "requestState") == NULL)
		return 0;
	if (wrapped == NULL || el->x->env->session_key == NULL) {
		gw_error_set(err, GW_EPARAMS, "requestState is not one this gateway gave you");
		return -1;
	}
	input_key_derive(key, el->x->env->session_key);
	ok = input_unwrap(key, wrapped, who_of(f), clock_wall_ms(), upstream, &state) == 0;
	secret_wipe(key, sizeof(key));
	if (!ok) {
		gw_error_set(err, GW_EPARAMS, "requestState is not one this gateway gave you for this request, or it "
		    "expired: call again without it");
		return -1;
	}
	if ((*relay = json_copy(params)) == NULL ||
	    (state ? json_object_set_new(*relay, "requestState", json_string(state)) :
	    json_object_del(*relay, "requestState")) < 0) {
		json_decref(*relay);
		*relay = NULL;
		gw_error_set(err, GW_EINTERNAL, "out of memory");
		return -1;
	}
	f->bound = upstream;
	return 1;
}

/* Whether result is an input_required the revision lets the caller have: an object of
 * input requests, each with a method, and a string requestState when there is one. */
static const char *
input_wrong(const struct element *el, json_t *result)
{
	json_t *reqs = json_object_get(result, "inputRequests"), *st = json_object_get(result, "requestState"), *r;
	const char *key;

	if (el->mm->id != METHOD_TOOLS_CALL && el->mm->id != METHOD_PROMPTS_GET && el->mm->id != METHOD_RESOURCES_READ)
		return "to a request that takes no input";
	if (!json_is_object(reqs) || (st && !json_is_string(st)))
		return "that is not well-formed";
	json_object_foreach(reqs, key, r)
		if (!json_is_string(json_object_get(r, "method")))
			return "that is not well-formed";
	return NULL;
}

json_t *
mcp_input_relay(struct element *el, const struct fed_call *f, json_t *result, struct gw_error *err)
{
	const char *why, *state = json_string_value(json_object_get(result, "requestState"));
	unsigned char key[32];
	char *wrapped = NULL;

	if (!el->x->modern) {
		gw_error_set(err, GW_EUPSTREAM, "The request needs input from the client that the gateway cannot ask "
		    "a client of this protocol revision for");
		goto fail;
	}
	if ((why = input_wrong(el, result)) != NULL) {
		log_warn(el->x->req->id, "upstream %s: an input_required %s: refused", f->answered ? f->answered : "?", why);
		gw_error_set(err, GW_EUPSTREAM, "The upstream answered with an input request %s", why);
		goto fail;
	}
	if (f->answered && el->x->env->session_key) {
		input_key_derive(key, el->x->env->session_key);
		wrapped = input_wrap(key, who_of(f), f->answered, state, clock_wall_ms() + INPUT_STATE_MS);
		secret_wipe(key, sizeof(key));
	}
	if (wrapped == NULL || json_object_set_new(result, "requestState", json_string(wrapped)) < 0) {
		free(wrapped);
		gw_error_set(err, GW_EINTERNAL, "the upstream's input request could not be relayed");
		goto fail;
	}
	free(wrapped);
	return result;
fail:
	json_decref(result);
	return NULL;
}
