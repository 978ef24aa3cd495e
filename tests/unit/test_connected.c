/* Unit tests: a person's connection as calls use it (src/access/connected.c) on a vault
 * in private memory: kept, then a call's token; peeked; a token the upstream refused
 * right after it was obtained drops the connection (the person is asked again:
 * GW_ECONNECT naming the upstream); an entry that does not open (written over, or
 * another key's) is dropped; a disconnect drops it once; no vault at all is an internal
 * error, not a person to ask. Refreshes need a token endpoint: tests/fed/connect-refresh.sh. */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "connected.h"
#include "log.h"
#include "secret.h"
#include "tap.h"

static char dir[] = "/tmp/mcpgate-unit-XXXXXX";

static struct config *
load(void)
{
	char conf[600], key[600];
	struct cfg_errors errs;
	struct config *cfg = NULL;
	FILE *f;

	snprintf(key, sizeof(key), "%s/session.key", dir);
	snprintf(conf, sizeof(conf), "%s/main.conf", dir);
	if ((f = fopen(key, "w")) == NULL)
		return NULL;
	fputs("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n", f);
	fclose(f);
	chmod(key, 0600);
	if ((f = fopen(conf, "w")) == NULL)
		return NULL;
	fprintf(f, "[gateway]\nresource = https://gw.example.com/mcp\nsession-key-file = %s\n"
	    "[auth]\nissuer = https://idp.example.com\nclient-id = gw\n"
	    "[upstream \"tracker\"]\nurl = https://t.example.net/mcp\ncredentials = user-oauth\nclient-id = c\n", key);
	fclose(f);
	if (config_load(conf, &cfg, &errs) < 0) {
		config_unref(cfg);
		return NULL;
	}
	return cfg;
}

static struct tokenep_answer
answer(const char *access, const char *refresh, long expires_in)
{
	struct tokenep_answer a = { 0 };

	a.token = strdup(access);
	a.token_len = strlen(access);
	a.refresh_token = refresh ? strdup(refresh) : NULL;
	a.scope = strdup("mcp:tools");
	a.expires_in = expires_in;
	return a;
}

int
main(void)
{
	struct config *cfg;
	const struct cfg_upstream *up;
	struct upcred u;
	struct tokenep_answer a;
	struct vault_tokens t;
	struct gw_error err;
	unsigned char name[VAULT_NAME_BYTES];
	char ev[VAULT_VALUE_MAX], *tok = NULL;
	size_t size = vault_region_size(64);
	void *mem = calloc(1, size);

	if (secret_init() < 0 || mkdtemp(dir) == NULL || mem == NULL || (cfg = load()) == NULL ||
	    (up = config_upstream(cfg, "tracker")) == NULL) {
		printf("Bail out! set-up\n");
		return 1;
	}
	log_set_level(GW_LOG_ERR);
	state_region_make(&vault_region_def, mem, size, 0);
	memset(&u, 0, sizeof(u));
	u.cfg = cfg;
	u.key = cfg->session_key;
	u.subject_sub = "alice";
	u.subject_who = "0123456789abcdef0123456789abcdef";
	upcred_bind(&u);

	err.code = GW_OK;
	is_int(connected_bearer(&u, up, 0, &tok, &err), -1, "no vault: refused");
	is_int(err.code, GW_EINTERNAL, "… an internal error, not a person to ask");
	u.vault = vault_attach(mem, size);
	is_int(connected_bearer(&u, up, 0, &tok, &err), -1, "alice not connected: refused");
	ok(err.code == GW_ECONNECT && strcmp(err.detail, "tracker") == 0, "… GW_ECONNECT naming the upstream alone");
	is_int(connected_peek(&u, "alice", up, &t), 0, "peek: not connected");
	vault_tokens_free(&t);

	a = answer("at-alice-1", "rt-alice-1", 3600);
	is_int(connected_keep(&u, up, "alice", u.subject_who, &a, &err), 0, "kept");
	tokenep_answer_clear(&a);
	is_int(connected_bearer(&u, up, 0, &tok, &err), 0, "then a call has her token");
	is_str(tok, "at-alice-1", "… the one kept");
	free(tok);
	tok = NULL;
	is_int(connected_peek(&u, "alice", up, &t), 1, "peek: connected");
	ok(t.scope && strcmp(t.scope, "mcp:tools") == 0 && t.obtained_ms > 0, "… with its scopes and when");
	vault_tokens_free(&t);
	u.subject_sub = "bob";
	is_int(connected_bearer(&u, up, 0, &tok, &err), -1, "bob: not connected (alice's entry is hers)");
	u.subject_sub = "alice";

	/* The upstream refused the token just obtained: the connection is dropped. */
	is_int(connected_bearer(&u, up, 1, &tok, &err), -1, "a fresh token refused by the upstream: dropped");
	is_int(err.code, GW_ECONNECT, "… the person is asked again");
	is_int(connected_peek(&u, "alice", up, &t), 0, "… and the entry is gone");
	vault_tokens_free(&t);

	/* An entry written over (or sealed under another key) does not open: dropped. */
	connected_name(&u, "alice", up, name);
	is_int(vault_put(u.vault, name, 1, &(struct vault_value){ "not-a-sealed-value", 0 }, ev, sizeof(ev)), 0,
	    "an entry written over");
	is_int(connected_bearer(&u, up, 0, &tok, &err), -1, "… does not open: refused");
	is_int(err.code, GW_ECONNECT, "… the person is asked again");
	is_int(vault_count(u.vault, 1), 0, "… and the entry is dropped");

	/* A disconnect: once (no authorization server to revoke at: dropped all the same). */
	a = answer("at-alice-2", NULL, 0);
	is_int(connected_keep(&u, up, "alice", u.subject_who, &a, &err), 0, "kept again (no refresh token, no end)");
	tokenep_answer_clear(&a);
	is_int(connected_bearer(&u, up, 0, &tok, &err), 0, "a token with no end said is used");
	free(tok);
	tok = NULL;
	is_int(connected_drop(&u, "alice", up), 1, "disconnected");
	is_int(connected_drop(&u, "alice", up), 0, "… once: then there is none");
	is_int(connected_bearer(&u, up, 0, &tok, &err), -1, "… and a call asks again");

	a = answer("bad\"token", NULL, 60);
	is_int(connected_keep(&u, up, "alice", u.subject_who, &a, &err), -1, "a token a header cannot carry: not kept");
	tokenep_answer_clear(&a);

	upcred_clear(&u);
	vault_detach(u.vault);
	free(mem);
	config_unref(cfg);
	{
		char path[600];

		snprintf(path, sizeof(path), "%s/session.key", dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/main.conf", dir);
		unlink(path);
		rmdir(dir);
	}
	return done_testing();
}
