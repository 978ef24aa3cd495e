/* mcp_level — logging/setLevel of a caller of the revisions with sessions, for the
 * upstreams it reaches statelessly. Revision 2026-07-28 removed the method: such an
 * upstream takes the level in each request's _meta and keeps none. So the gateway keeps
 * the level the session set, in the state file (loglevels.c) and, with a Redis store,
 * in Redis for every host (ll, until the session expires), and asks each stateless
 * upstream for it on every request of that session. The upstreams that keep the
 * caller's session get the method itself (federate.c). */
#include "autoconf.h"

#include <string.h>

#include "clock.h"
#include "federate.h"
#include "log.h"
#include "loglevels.h"
#include "mcp_call.h"
#include "rstore.h"
#include "session.h"

/* The levels of RFC 5424 the revisions name, by their number in the store (0: none). */
static const char *const level_names[] = {
	NULL, "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
};
#define NLEVELS (sizeof(level_names) / sizeof(level_names[0]))

static unsigned
level_number(const char *name)
{
	unsigned i;

	for (i = 1; name && i < NLEVELS; i++)
		if (strcmp(name, level_names[i]) == 0)
			return i;
	return 0;
}

int
mcp_level_set(const struct exchange *x, json_t *params, struct gw_error *err)
{
	const struct mcp_env *env = x->env;
	const char *name = json_string_value(json_object_get(params, "level"));
	unsigned char key[RSTORE_KEY_BYTES];
	unsigned n = level_number(name);
	int64_t ttl_ms;
	int kept = 0;

	if (n == 0) {
		gw_error_set(err, GW_EPARAMS, "level is one of debug, info, notice, warning, error, critical, alert, "
		    "emergency");
		return -1;
	}
	/* Without a session nothing is kept: the upstreams' own sessions (the pool's for
	 * this caller) keep what they are sent. */
	if (x->sess == NULL || x->req->session_id == NULL)
		return 0;
	if (env->session_key && env->loglevels) {
		session_tomb_key(env->session_key, x->req->session_id, key);
		kept |= loglevels_put(env->loglevels, key, n, x->sess->exp, x->req->now) == 0;
	}
	if (env->rs) {
		ttl_ms = (x->sess->exp - x->req->now + 1) * 1000;
		session_tomb_key(env->shared_key, x->req->session_id, key);
		if (rstore_put(env->rs, x->cfg, &(struct rs_key){ RS_LOGLEVEL, key }, level_names[n], ttl_ms,
		    clock_mono_us() / 1000) == 0)
			kept = 1;
		else if (kept)
			log_warn(x->req->id, "this session's log level is kept on this host only: Redis does not answer");
	}
	if (!kept) {
		gw_error_set(err, GW_EINTERNAL, "the session's log level cannot be kept now");
		return -1;
	}
	return 0;
}

const char *
mcp_level_of(const struct fed_call *f)
{
	struct element *el = f->ctx;
	struct exchange *x = el->x;
	const struct mcp_env *env = x->env;
	unsigned char key[RSTORE_KEY_BYTES];
	char got[16];
	int n = -1;

	if (x->log_level_known)
		return x->log_level;
	x->log_level_known = 1;
	if (x->modern || x->sess == NULL || x->req->session_id == NULL)
		return NULL;
	/* Redis first (another host may have set it); while it does not answer, the host's */
	if (env->rs) {
		session_tomb_key(env->shared_key, x->req->session_id, key);
		if ((n = rstore_get(env->rs, x->cfg, &(struct rs_key){ RS_LOGLEVEL, key }, got, sizeof(got),
		    clock_mono_us() / 1000)) == 1)
			n = (int)level_number(got);
	}
	if (n < 0 && env->session_key && env->loglevels) {
		session_tomb_key(env->session_key, x->req->session_id, key);
		n = loglevels_get(env->loglevels, key, x->req->now);
	}
	x->log_level = n > 0 && (size_t)n < NLEVELS ? level_names[n] : NULL;
	return x->log_level;
}
