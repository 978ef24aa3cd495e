/* mcp_ask — an upstream's input_required (2026-07-28) for a caller of an older
 * revision, which has no such result: the gateway asks the caller itself, as a server
 * of its revision does, with a request on the call's event stream (elicitation/create,
 * sampling/createMessage, roots/list, each under an id of ours), waits for its answers,
 * and retries the upstream with them (inputResponses, and the upstream's requestState),
 * round after round, within the request's deadline. Only a caller that declared the
 * capability at initialize, with a session and an event stream, is asked; any other
 * gets an error.
 *
 * The caller's answer is a POST of its own, which any process of the host (or, with a
 * Redis store, any host) may take: mcp_ask_answer leaves it, sealed under the session
 * key, in the state file's mailbox (mailbox.h) or in Redis, named by a keyed digest of
 * the caller and the id, and the waiting call takes it from there. An answer is taken
 * once, only for the caller it was asked of, and only until the call's deadline. */
#include "autoconf.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "mcp_call.h"
#include "secret.h"

#define ASK_PREFIX	"mcpgate-ask:"
#define ASK_ID_MAX	(sizeof(ASK_PREFIX) + 32)
#define ASK_ROUNDS	8	/* an upstream asking more often than this is refused */
#define ASK_INPUTS	16	/* input requests of one round */
#define ASK_POLL_MS	20	/* the first wait for answers; doubled up to */
#define ASK_POLL_MAX_MS	200
#define ASK_KEEPALIVE_MS 15000	/* a comment on the stream while a person answers */
#define ASK_PLAIN_MAX	12288	/* an answer, as JSON (SECRET_SEAL_MAX) */
#define ASK_SEALED_MAX	MAILBOX_VALUE_MAX
#define ASK_AD		"mcpgate ask answer v1"

/* What each question needs the caller to have declared. */
static const struct {
	const char *method;
	unsigned flag;
	const char *capability;
} asks[] = {
	{ "elicitation/create", SESSION_F_ELICIT, "elicitation" },
	{ "sampling/createMessage", SESSION_F_SAMPLING, "sampling" },
	{ "roots/list", SESSION_F_ROOTS, "roots" },
};

unsigned
mcp_ask_flags(json_t *caps)
{
	json_t *e = json_object_get(caps, "elicitation");
	unsigned flags = 0;
	size_t i;

	if (json_is_object(json_object_get(e, "url")))
		flags |= SESSION_F_ELICIT_URL;
	/* (an empty elicitation object is form mode, as the revision says) */
	if (json_is_object(e) && (json_object_size(e) == 0 || json_object_get(e, "form")))
		flags |= SESSION_F_ELICIT;
	for (i = 0; i < sizeof(asks) / sizeof(asks[0]); i++)
		if (asks[i].flag != SESSION_F_ELICIT && json_is_object(json_object_get(caps, asks[i].capability)))
			flags |= asks[i].flag;
	return flags;
}

json_t *
mcp_ask_caps(const struct exchange *x)
{
	json_t *caps;
	size_t i;

	if (x->modern || x->sess == NULL || !x->stream_ok || x->in_batch)
		return NULL;
	caps = json_object();
	for (i = 0; caps && i < sizeof(asks) / sizeof(asks[0]); i++)
		if (x->sess->flags & asks[i].flag)
			json_object_set_new(caps, asks[i].capability, json_object());
	return caps;
}

/* The name an answer to id is kept under, for the caller who. */
static void
answer_name(const struct exchange *x, const char *who, const char *id, unsigned char name[RSTORE_KEY_BYTES])
{
	const struct secret_part parts[3] = { { "mcpgate ask v1", 15 }, { who, strlen(who) + 1 }, { id, strlen(id) } };
	unsigned char d[32];

	secret_keyed_digest_parts(x->env->session_key, parts, 3, d);
	memcpy(name, d, RSTORE_KEY_BYTES);
}

static void
seal_key(const struct exchange *x, unsigned char key[32])
{
	secret_keyed_digest(x->env->session_key, ASK_AD, strlen(ASK_AD), key);
}

int
mcp_ask_answer(const struct exchange *x, json_t *msg)
{
	const char *id = json_string_value(json_object_get(msg, "id"));
	unsigned char name[RSTORE_KEY_BYTES], key[32];
	char who[33], sealed[ASK_SEALED_MAX], *plain;
	struct rs_key k = { RS_ANSWER, name };
	int64_t now = clock_wall_ms();
	int rc = -1;

	if (id == NULL || strncmp(id, ASK_PREFIX, strlen(ASK_PREFIX)) != 0)
		return 0;
	if (x->env->session_key == NULL || x->caller == NULL || strlen(id) >= ASK_ID_MAX ||
	    (plain = json_dumps(msg, JSON_COMPACT)) == NULL) {
		log_info(x->req->id, "ask: an answer that cannot be kept was dropped");
		return 1;
	}
	mcp_caller_who(x->cfg, x->caller, who);
	answer_name(x, who, id, name);
	seal_key(x, key);
	/* In Redis for every host; when it cannot be had now, the host's mailbox (which the
	 * call looks in too: it may well be on this host). */
	if (strlen(plain) <= ASK_PLAIN_MAX && secret_seal(key, plain, strlen(plain), ASK_AD, sealed, sizeof(sealed)) == 0 &&
	    (x->env->rs == NULL || (rc = rstore_put(x->env->rs, x->cfg, &k, sealed, x->cfg->request_timeout_ms, now)) < 0))
		rc = mailbox_put(x->env->mailbox, name, sealed, now + x->cfg->request_timeout_ms, now);
	secret_wipe(key, sizeof(key));
	secret_wipe(plain, strlen(plain));
	free(plain);
	if (rc < 0)
		log_warn(x->req->id, "ask: a client's answer could not be kept (over %d bytes, or the %s full or "
		    "unavailable): the call that asked ends at its deadline", ASK_PLAIN_MAX, x->env->rs ? "store" : "mailbox");
	return 1;
}

/* The answer to id, if it came (in Redis, else in the host's mailbox): 1 with *answer
 * (a new reference), 0 not yet (or neither can be read now), -1 when it is not one of
 * ours. */
static int
take(const struct exchange *x, const char *who, const char *id, json_t **answer)
{
	unsigned char name[RSTORE_KEY_BYTES], key[32];
	char sealed[ASK_SEALED_MAX], plain[ASK_PLAIN_MAX + 1];
	struct rs_key k = { RS_ANSWER, name };
	int64_t now = clock_wall_ms();
	long n = -1;
	int got;

	*answer = NULL;
	answer_name(x, who, id, name);
	if (x->env->rs && (got = rstore_get(x->env->rs, x->cfg, &k, sealed, sizeof(sealed), now)) == 1)
		rstore_del(x->env->rs, x->cfg, &k, now);
	else
		got = mailbox_take(x->env->mailbox, name, sealed, sizeof(sealed), now);
	if (got <= 0)
		return 0;
	seal_key(x, key);
	if ((n = secret_open(key, sealed, ASK_AD, plain, sizeof(plain))) >= 0)
		*answer = json_loadb(plain, (size_t)n, JSON_REJECT_DUPLICATES, NULL);
	secret_wipe(key, sizeof(key));
	secret_wipe(plain, sizeof(plain));
	return *answer ? 1 : -1;
}

/* The questions of an input_required (reqs) asked of the caller on the call's stream,
 * each under a fresh id of ours (into ids, keyed as reqs). 0, or -1 with err. */
static int
ask(struct element *el, json_t *reqs, json_t *ids, struct gw_error *err)
{
	struct exchange *x = el->x;
	const char *key, *method;
	char id[ASK_ID_MAX], hex[33];
	json_t *r, *msg;
	size_t i;

	json_object_foreach(reqs, key, r) {
		method = json_string_value(json_object_get(r, "method"));
		for (i = 0; i < sizeof(asks) / sizeof(asks[0]) && (method == NULL || strcmp(method, asks[i].method)); i++)
			;
		if (i == sizeof(asks) / sizeof(asks[0])) {
			gw_error_set(err, GW_EUPSTREAM, "The upstream asks the client something the gateway does not relay");
			return -1;
		}
		if (!(x->sess->flags & asks[i].flag)) {
			gw_error_set(err, GW_EUPSTREAM, "This request needs the client capability %s, which this client did "
			    "not declare", asks[i].capability);
			return -1;
		}
		secret_random_hex(hex, 16);
		snprintf(id, sizeof(id), ASK_PREFIX "%s", hex);
		msg = json_pack("{s:s, s:s, s:s, s:O?}", "jsonrpc", "2.0", "id", id, "method", method, "params",
		    json_object_get(r, "params"));
		if (msg == NULL || response_stream_open(x->resp) < 0 || response_stream_message(x->resp, msg) < 0) {
			json_decref(msg);
			gw_error_set(err, GW_EINTERNAL, "The client could not be asked for the upstream's input");
			return -1;
		}
		json_decref(msg);
		json_object_set_new(ids, key, json_string(id));
	}
	return 0;
}

/* The caller's answers to ids (keyed as the input requests), into inputResponses,
 * waited for until the request's deadline or the caller goes. 0, or -1 with err (the
 * caller answered one with an error, went away, or took too long). */
static int
collect(struct element *el, const char *who, json_t *ids, json_t *responses, struct gw_error *err)
{
	struct exchange *x = el->x;
	int64_t now_us, wait = ASK_POLL_MS, said_us = clock_mono_us();
	const char *key;
	json_t *id, *answer, *result;
	int got;

	while (json_object_size(responses) < json_object_size(ids)) {
		json_object_foreach(ids, key, id) {
			if (json_object_get(responses, key) || (got = take(x, who, json_string_value(id), &answer)) == 0)
				continue;
			if (got < 0 || !json_is_object(result = json_object_get(answer, "result"))) {
				gw_error_set(err, GW_EREFUSED, "The client did not give the input the request needs%s%s",
				    got < 0 ? "" : ": ", got < 0 ? "" :
				    json_string_value(json_object_get(json_object_get(answer, "error"), "message")) ?
				    json_string_value(json_object_get(json_object_get(answer, "error"), "message")) : "an error");
				json_decref(answer);
				return -1;
			}
			json_object_set(responses, key, result);
			json_decref(answer);
		}
		if (json_object_size(responses) == json_object_size(ids))
			break;
		now_us = clock_mono_us();
		if (now_us / 1000 + wait >= x->until_ms || (x->resp->sink && sink_gone(x->resp->sink, now_us))) {
			gw_error_set(err, GW_EINTERNAL, "Request timeout: the client's input did not come within the "
			    "request's time");
			return -1;
		}
		if (now_us - said_us >= ASK_KEEPALIVE_MS * 1000LL) {
			response_stream_comment(x->resp, "waiting for the client's input");
			said_us = now_us;
		}
		poll(NULL, 0, (int)wait);
		wait = wait * 2 > ASK_POLL_MAX_MS ? ASK_POLL_MAX_MS : wait * 2;
	}
	return 0;
}

json_t *
mcp_ask(struct element *el, struct fed_call *f, json_t *params, json_t *result, struct gw_error *err)
{
	struct exchange *x = el->x;
	json_t *reqs, *ids = NULL, *responses = NULL, *retry;
	char who[33];
	int round;

	if (x->sess == NULL || !x->stream_ok || x->in_batch || x->caller == NULL || x->env->session_key == NULL) {
		gw_error_set(err, GW_EUPSTREAM, "The request needs input from the client, which can be asked only of a "
		    "client with a session and an event stream");
		goto fail;
	}
	mcp_caller_who(x->cfg, x->caller, who);
	for (round = 0;; round++) {
		reqs = json_object_get(result, "inputRequests");
		if (round == ASK_ROUNDS || !json_is_object(reqs) || json_object_size(reqs) == 0 ||
		    json_object_size(reqs) > ASK_INPUTS) {
			gw_error_set(err, GW_EUPSTREAM, "The upstream's input requests are not ones the gateway relays "
			    "(none, more than %d, or more than %d rounds)", ASK_INPUTS, ASK_ROUNDS);
			goto fail;
		}
		ids = json_object();
		responses = json_object();
		if (ask(el, reqs, ids, err) < 0 || collect(el, who, ids, responses, err) < 0)
			goto fail;
		if ((retry = json_copy(params)) == NULL) {
			gw_error_set(err, GW_EINTERNAL, "out of memory");
			goto fail;
		}
		json_object_set(retry, "inputResponses", responses);
		if (json_is_string(json_object_get(result, "requestState")))
			json_object_set(retry, "requestState", json_object_get(result, "requestState"));
		f->bound = f->answered;	/* the same upstream again */
		json_decref(result);
		json_decref(ids);
		json_decref(responses);
		ids = responses = NULL;
		result = fed_request(f, el->mm->name, retry);
		json_decref(retry);
		if (result == NULL) {
			*err = f->err;
			el->err_data = f->err_data;
			f->err_data = NULL;
			return NULL;
		}
		if (!json_is_string(json_object_get(result, "resultType")) ||
		    strcmp(json_string_value(json_object_get(result, "resultType")), "input_required") != 0)
			return result;
	}
fail:
	json_decref(ids);
	json_decref(responses);
	json_decref(result);
	return NULL;
}
