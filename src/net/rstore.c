/* rstore — one hiredis connection per worker, bounded by redis-timeout-ms. */
#include "autoconf.h"

#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "clock.h"
#include "log.h"
#include "rstore.h"
#include "secret.h"

#define US		1000000LL
#define US_MAX		(1LL << 50)	/* Lua numbers are doubles: exact below 2^53 */
#define TAKE_MAX	8

/* The buckets of one decision, in order, each charged until one refuses, and whether a
 * probe key exists (KEYS past the n buckets: a session's tombstone, in the same round
 * trip); answers {refused index or -1, the probe's 1/0 or -1 for none, how far each
 * bucket's TAT was ahead of now before it}. ARGV: n, then T and tau of each bucket.
 * The clamps are ratelimit_gcra's (a value that is not 8 bytes, or not a number, is a
 * full bucket); TIME is the server's, so every host decides alike; a record expires
 * when its bucket is full again (an expired record is a full bucket). What keeps it
 * cheap (each redis.call, and each number the server writes out or reads back in
 * decimal, costs more than the Lua around it): one MGET reads every bucket and the
 * probe, and a TAT is stored as 8 bytes (a little-endian double: exact, as every TAT
 * is below 2^53 µs) that struct.pack and struct.unpack convert without printf or
 * strtod. Lua numbers are doubles: every figure stays below 2^53. */
static const char take_script[] =
	"local n = tonumber(ARGV[1])\n"
	"local now = redis.call('TIME')\n"
	"now = now[1] * 1000000 + now[2]\n"
	"local out = {-1, -1}\n"
	"local v = redis.call('MGET', unpack(KEYS))\n"
	"if #KEYS > n then out[2] = v[n + 1] and 1 or 0 end\n"
	"for i = 1, n do\n"
	"  local t, tau = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])\n"
	"  local tat = v[i] and #v[i] == 8 and struct.unpack('<d', v[i]) or now\n"
	"  if tat ~= tat or tat < 0 then tat = now end\n"
	"  if tat > now + tau + t then tat = now + tau + t end\n"
	"  if tat < now then tat = now end\n"
	"  out[i + 2] = tat - now\n"
	"  if tat - now > tau then out[1] = i - 1 return out end\n"
	"  redis.call('SET', KEYS[i], struct.pack('<d', tat + t), 'PX', math.floor((tat + t - now) / 1000) + 1)\n"
	"end\n"
	"return out\n";

/* One command's words (argc of them, with their lengths); script: argv[1] is the
 * script's digest, set by command(). */
struct cmd {
	int argc;
	const char **argv;
	size_t *len;
	int script;
};

struct rstore {
	redisContext *c;
	int *outage;
	int64_t retry_at_ms;	/* monotonic: nothing is tried before */
	char *endpoint;		/* the store URL c is connected to */
	char sha[48];		/* the script's, as the server loaded it */
	uint64_t trips;
	struct metrics *obs;	/* the request's (rstore_observe) */
};

struct rstore *
rstore_new(int *outage)
{
	struct rstore *rs = calloc(1, sizeof(*rs));

	if (rs)
		rs->outage = outage;
	return rs;
}

static void
disconnect(struct rstore *rs)
{
	if (rs->c)
		redisFree(rs->c);
	rs->c = NULL;
	free(rs->endpoint);
	rs->endpoint = NULL;
}

void
rstore_free(struct rstore *rs)
{
	if (rs == NULL)
		return;
	disconnect(rs);
	free(rs);
}

void
rstore_observe(struct rstore *rs, struct metrics *m)
{
	if (rs)
		rs->obs = m;
}

uint64_t
rstore_round_trips(const struct rstore *rs)
{
	return rs ? rs->trips : 0;
}

/* An operation failed (why): the connection is dropped and the outage begins, logged
 * by the first worker of the process that sees it. */
static int
failed(struct rstore *rs, const struct config *cfg, const char *why_in, int64_t now_ms)
{
	char why[160], where[320];

	snprintf(why, sizeof(why), "%s", why_in);	/* it may be the context's, freed next */
	disconnect(rs);
	rs->retry_at_ms = now_ms + RSTORE_RETRY_MS;
	url_redis_where(&cfg->redis, where, sizeof(where));
	metrics_observe(rs->obs, METRICS_DEP_REDIS, 0, (int64_t)clock_wall(), "Redis does not answer");
	if (rs->outage && __atomic_exchange_n(rs->outage, 1, __ATOMIC_ACQ_REL) == 0)
		log_err(NULL, "redis at %s cannot be used: %s; until it answers, rate limits %s "
		    "and sessions ended elsewhere are not seen here (tried again every %d ms)",
		    where, why,
		    cfg->redis_fail == REDIS_FAIL_OPEN ? "are not applied (redis-fail = open)" : "refuse requests (503)",
		    RSTORE_RETRY_MS);
	return -1;
}

static int
answered(struct rstore *rs)
{
	metrics_observe(rs->obs, METRICS_DEP_REDIS, 1, (int64_t)clock_wall(), NULL);
	if (rs->outage && __atomic_exchange_n(rs->outage, 0, __ATOMIC_ACQ_REL) == 1)
		log_warn(NULL, "redis answers again: rate limits and tombstones are shared");
	return 0;
}

/* The text of a failed exchange: the context's error or the server's. */
static const char *
why_of(const struct rstore *rs, const redisReply *r)
{
	if (r && r->type == REDIS_REPLY_ERROR && r->str)
		return r->str;
	if (rs->c && rs->c->err == REDIS_ERR_IO && strstr(rs->c->errstr, "temporarily unavailable"))
		return "no answer within redis-timeout-ms";
	return rs->c && rs->c->errstr[0] ? rs->c->errstr : "no answer";
}

/* Connected to the configured Redis, authenticated, its database selected and the
 * script loaded, in one round trip after the connect: 0, or -1 (failed() called).
 * Long: the connect, then AUTH, SELECT and SCRIPT LOAD written in one write and their
 * answers read in order: the one round trip a connection costs, which pieces would
 * hide. */
static int
connect_to(struct rstore *rs, const struct config *cfg, int64_t now_ms)
{
	struct timeval tv = { cfg->redis_timeout_ms / 1000, (cfg->redis_timeout_ms % 1000) * 1000 };
	const char *argv[3];
	size_t len[3];
	char db[16];
	redisReply *r = NULL;
	int n = 0, i, rc = -1;
	const char *why = NULL;

	if (rs->c && rs->endpoint && strcmp(rs->endpoint, cfg->limit_store) == 0)
		return 0;
	disconnect(rs);
	/* In an outage, nothing for a while, unless another worker found Redis back. */
	if (now_ms < rs->retry_at_ms && (rs->outage == NULL || __atomic_load_n(rs->outage, __ATOMIC_ACQUIRE)))
		return -1;
	if (cfg->redis.path)
		rs->c = redisConnectUnixWithTimeout(cfg->redis.path, tv);
	else
		rs->c = redisConnectWithTimeout(cfg->redis.host, cfg->redis.port, tv);
	if (rs->c == NULL || rs->c->err || redisSetTimeout(rs->c, tv) != REDIS_OK)
		return failed(rs, cfg, rs->c ? why_of(rs, NULL) : "out of memory", now_ms);
	/* Each exchange is one write and one read; on TCP, nothing may hold the write back
	 * (hiredis 0.14 sets TCP_NODELAY itself: set here so that it holds whatever it does). */
	if (cfg->redis.path == NULL &&
	    setsockopt(rs->c->fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int)) < 0)
		return failed(rs, cfg, "cannot set TCP_NODELAY", now_ms);
	if (cfg->redis.password) {
		argv[0] = "AUTH";
		argv[1] = cfg->redis.user ? cfg->redis.user : cfg->redis.password;
		argv[2] = cfg->redis.password;
		for (i = 0; i < 3; i++)
			len[i] = strlen(argv[i]);
		redisAppendCommandArgv(rs->c, cfg->redis.user ? 3 : 2, argv, len);
		n++;
	}
	if (cfg->redis.db) {
		snprintf(db, sizeof(db), "%d", cfg->redis.db);
		argv[0] = "SELECT", argv[1] = db;
		len[0] = 6, len[1] = strlen(db);
		redisAppendCommandArgv(rs->c, 2, argv, len);
		n++;
	}
	argv[0] = "SCRIPT", argv[1] = "LOAD", argv[2] = take_script;
	len[0] = 6, len[1] = 4, len[2] = sizeof(take_script) - 1;
	redisAppendCommandArgv(rs->c, 3, argv, len);
	n++;
	rs->trips++;
	for (i = 0; i < n; i++) {
		if (redisGetReply(rs->c, (void **)&r) != REDIS_OK || r == NULL) {
			why = why_of(rs, NULL);
			goto out;
		}
		if (r->type == REDIS_REPLY_ERROR) {
			why = r->str;
			goto out;
		}
		if (i == n - 1) {
			if (r->type != REDIS_REPLY_STRING || r->len >= sizeof(rs->sha)) {
				why = "SCRIPT LOAD gave no digest";
				goto out;
			}
			memcpy(rs->sha, r->str, r->len);
			rs->sha[r->len] = '\0';
		}
		freeReplyObject(r);
		r = NULL;
	}
	if ((rs->endpoint = strdup(cfg->limit_store)) == NULL) {
		why = "out of memory";
		goto out;
	}
	rc = 0;
out:
	if (rc < 0)
		failed(rs, cfg, why ? why : "no answer", now_ms);
	freeReplyObject(r);
	return rc;
}

/* The connection broke (the server closed it, was restarted): not a timeout. */
static int
broken(const struct rstore *rs)
{
	return rs->c && (rs->c->err == REDIS_ERR_EOF ||
	    (rs->c->err == REDIS_ERR_IO && !strstr(rs->c->errstr, "temporarily unavailable")));
}

/* One command (with script, its argv[1] is the script's digest, set here), its reply
 * (free it), or NULL (failed() called). A kept connection that turns out broken (Redis
 * restarted since) is replaced at once, and so is one whose server forgot the script;
 * a timeout is not tried again. */
static redisReply *
command(struct rstore *rs, const struct config *cfg, const struct cmd *cmd, int64_t now_ms)
{
	redisReply *r = NULL;
	int attempt, kept;

	for (attempt = 0; attempt < 2; attempt++) {
		kept = rs->c != NULL;
		if (connect_to(rs, cfg, now_ms) < 0)
			return NULL;
		if (cmd->script) {
			cmd->argv[1] = rs->sha;
			cmd->len[1] = strlen(rs->sha);
		}
		rs->trips++;
		if ((r = redisCommandArgv(rs->c, cmd->argc, cmd->argv, cmd->len)) == NULL) {
			if (kept && attempt == 0 && broken(rs)) {
				disconnect(rs);
				continue;
			}
			failed(rs, cfg, why_of(rs, NULL), now_ms);
			return NULL;
		}
		if (r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOSCRIPT", 8) == 0 && attempt == 0) {
			freeReplyObject(r);
			disconnect(rs);
			continue;
		}
		break;
	}
	if (r && r->type == REDIS_REPLY_ERROR) {
		failed(rs, cfg, why_of(rs, r), now_ms);
		freeReplyObject(r);
		return NULL;
	}
	if (r)
		answered(rs);
	return r;
}

static void
key_name(char *out, const char *kind, const unsigned char *key)
{
	memcpy(out, "mcpgate:", 8);
	memcpy(out + 8, kind, 2);
	out[10] = ':';
	secret_hex(key, RSTORE_KEY_BYTES, out + 11);	/* and its NUL */
}

#define KEY_NAME_MAX	(sizeof("mcpgate:xx:") + 2 * RSTORE_KEY_BYTES)

/* Long: the arguments of the one script call built, the call made, and its answer
 * checked item by item before anything of it is believed. */
int
rstore_take_all(struct rstore *rs, const struct config *cfg, struct rl_take *t, size_t n,
    struct rs_probe *probe, int64_t now_ms)
{
	const char *argv[5 + 3 * TAKE_MAX];
	size_t len[5 + 3 * TAKE_MAX], i, k, nk = n + (probe != NULL), argc = 3 + nk + 1 + 2 * n;
	char keys[TAKE_MAX + 1][KEY_NAME_MAX], nkeys[8], nb[8], num[2 * TAKE_MAX][24];
	const struct cmd cmd = { (int)argc, argv, len, 1 };
	struct rl_params p[TAKE_MAX];
	redisReply *r;
	long long refused, seen;
	int rc = -1;

	if (probe)
		probe->seen = -1;
	if (n == 0)
		return 0;
	if (n > TAKE_MAX)
		return -1;
	snprintf(nkeys, sizeof(nkeys), "%zu", nk);
	snprintf(nb, sizeof(nb), "%zu", n);
	argv[0] = "EVALSHA", argv[1] = NULL, argv[2] = nkeys;
	for (i = 0; i < n; i++) {
		ratelimit_params(&t[i].r, US, US_MAX, &p[i]);
		key_name(keys[i], "rl", t[i].key);
		argv[3 + i] = keys[i];
		snprintf(num[2 * i], sizeof(num[0]), "%lld", (long long)p[i].t);
		snprintf(num[2 * i + 1], sizeof(num[0]), "%lld", (long long)p[i].tau);
	}
	if (probe) {
		key_name(keys[n], "ts", probe->key);
		argv[3 + n] = keys[n];
	}
	k = 3 + nk;
	argv[k++] = nb;
	for (i = 0; i < 2 * n; i++)
		argv[k++] = num[i];
	for (i = 0; i < argc; i++)
		len[i] = i == 1 ? 0 : strlen(argv[i]);	/* argv[1]: the digest, set by command() */
	if ((r = command(rs, cfg, &cmd, now_ms)) == NULL)
		return -1;
	if (r->type != REDIS_REPLY_ARRAY || r->elements < 3 || r->elements > n + 2)
		goto out;
	for (i = 0; i < r->elements; i++)
		if (r->element[i]->type != REDIS_REPLY_INTEGER)
			goto out;
	refused = r->element[0]->integer;
	seen = r->element[1]->integer;
	if (refused < -1 || refused >= (long long)n || (refused == -1 && r->elements != n + 2) ||
	    (refused >= 0 && r->elements != (size_t)refused + 3) || seen < -1 || seen > 1 ||
	    (seen == -1) != (probe == NULL))
		goto out;
	for (i = 0; i + 2 < r->elements; i++)
		ratelimit_verdict(r->element[i + 2]->integer, &p[i], US, (long long)i == refused, &t[i].v);
	if (probe)
		probe->seen = (int)seen;
	rc = refused < 0 ? (int)n : (int)refused;
out:
	if (rc < 0)
		failed(rs, cfg, "the limit script gave an answer of another shape", now_ms);
	freeReplyObject(r);
	return rc;
}

static const char *const kind_names[] = { [RS_TOMB] = "ts", [RS_TOKEN] = "tc", [RS_DPOP] = "dp", [RS_UPCRED] = "uc",
	[RS_VAULT] = "va", [RS_VAULT_CLAIM] = "vc", [RS_ONCE] = "co", [RS_ANSWER] = "ma",
	[RS_LOGLEVEL] = "ll", [RS_SUBS] = "su" };

/* A command on one record, and the storage of its words: VERB name, then what the
 * command adds (SET's value, PX ttl and NX). */
struct keyed {
	char name[KEY_NAME_MAX], px[24];
	const char *argv[6];
	size_t len[6];
	struct cmd cmd;
};

/* verb k: its first two words. */
static void
keyed_words(struct keyed *o, const char *verb, const struct rs_key *k)
{
	key_name(o->name, kind_names[k->kind], k->digest);
	o->argv[0] = verb;
	o->argv[1] = o->name;
	o->len[0] = strlen(verb);
	o->len[1] = strlen(o->name);
	o->cmd = (struct cmd){ 2, o->argv, o->len, 0 };
}

/* SET k value PX ttl_ms [NX] (nx). */
static void
set_words(struct keyed *o, const struct rs_key *k, const char *value, int64_t ttl_ms, int nx)
{
	int i;

	keyed_words(o, "SET", k);
	snprintf(o->px, sizeof(o->px), "%lld", (long long)(ttl_ms > 0 ? ttl_ms : 1));
	o->argv[2] = value, o->argv[3] = "PX", o->argv[4] = o->px, o->argv[5] = "NX";
	o->cmd.argc = nx ? 6 : 5;
	for (i = 2; i < o->cmd.argc; i++)
		o->len[i] = strlen(o->argv[i]);
}

int
rstore_put(struct rstore *rs, const struct config *cfg, const struct rs_key *k, const char *value,
    int64_t ttl_ms, int64_t now_ms)
{
	struct keyed o;
	redisReply *r;

	set_words(&o, k, value, ttl_ms, 0);
	if ((r = command(rs, cfg, &o.cmd, now_ms)) == NULL)
		return -1;
	freeReplyObject(r);
	return 0;
}

int
rstore_once(struct rstore *rs, const struct config *cfg, const struct rs_key *k, int64_t ttl_ms,
    int64_t now_ms)
{
	struct keyed o;
	redisReply *r;
	int rc;

	set_words(&o, k, "1", ttl_ms, 1);
	if ((r = command(rs, cfg, &o.cmd, now_ms)) == NULL)
		return -1;
	/* OK when it was set; nil when the key was there already */
	rc = r->type == REDIS_REPLY_STATUS ? 1 : r->type == REDIS_REPLY_NIL ? 0 : -1;
	freeReplyObject(r);
	if (rc < 0)
		return failed(rs, cfg, "SET NX gave neither OK nor nothing", now_ms);
	return rc;
}

int
rstore_get(struct rstore *rs, const struct config *cfg, const struct rs_key *k, char *out, size_t outlen,
    int64_t now_ms)
{
	struct keyed o;
	redisReply *r;
	int rc = -1;

	keyed_words(&o, "GET", k);
	if ((r = command(rs, cfg, &o.cmd, now_ms)) == NULL)
		return -1;
	if (r->type == REDIS_REPLY_NIL) {
		rc = 0;
	} else if (r->type == REDIS_REPLY_STRING) {
		rc = 0;		/* a value too large, or with a NUL, is nothing of ours */
		if (r->len < outlen && memchr(r->str, '\0', r->len) == NULL) {
			memcpy(out, r->str, r->len);
			out[r->len] = '\0';
			rc = 1;
		}
	}
	freeReplyObject(r);
	if (rc < 0)
		return failed(rs, cfg, "GET gave neither a value nor nothing", now_ms);
	return rc;
}

int
rstore_del(struct rstore *rs, const struct config *cfg, const struct rs_key *k, int64_t now_ms)
{
	struct keyed o;
	redisReply *r;
	int rc;

	keyed_words(&o, "DEL", k);
	if ((r = command(rs, cfg, &o.cmd, now_ms)) == NULL)
		return -1;
	rc = r->type == REDIS_REPLY_INTEGER ? 0 : -1;
	freeReplyObject(r);
	if (rc < 0)
		return failed(rs, cfg, "DEL gave no number", now_ms);
	return 0;
}

int
rstore_member(struct rstore *rs, const struct config *cfg, const struct rs_key *k, const struct rs_member *m,
    int64_t now_ms)
{
	const char *member = m->value;
	int on = m->on;
	int64_t ttl_ms = m->ttl_ms;
	struct keyed o;
	redisReply *r;
	int rc;

	keyed_words(&o, on ? "SADD" : "SREM", k);
	o.argv[2] = member;
	o.len[2] = strlen(member);
	o.cmd.argc = 3;
	if ((r = command(rs, cfg, &o.cmd, now_ms)) == NULL)
		return -1;
	rc = r->type == REDIS_REPLY_INTEGER ? 0 : -1;
	freeReplyObject(r);
	if (rc < 0)
		return failed(rs, cfg, on ? "SADD gave no number" : "SREM gave no number", now_ms);
	/* (a set emptied is gone: its PEXPIRE answers 0) */
	keyed_words(&o, "PEXPIRE", k);
	snprintf(o.px, sizeof(o.px), "%lld", (long long)(ttl_ms > 0 ? ttl_ms : 1));
	o.argv[2] = o.px;
	o.len[2] = strlen(o.px);
	o.cmd.argc = 3;
	if ((r = command(rs, cfg, &o.cmd, now_ms)) == NULL)
		return -1;
	freeReplyObject(r);
	return 0;
}

static int
member_cmp(const void *a, const void *b)
{
	const redisReply *x = *(redisReply *const *)a, *y = *(redisReply *const *)b;
	int c = memcmp(x->str, y->str, x->len < y->len ? x->len : y->len);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

int
rstore_members(struct rstore *rs, const struct config *cfg, const struct rs_key *k, char *out, size_t outlen,
    int64_t now_ms)
{
	struct keyed o;
	redisReply *r;
	size_t i, used = 0;
	int rc = -1;

	if (outlen == 0)
		return -1;
	out[0] = '\0';
	keyed_words(&o, "SMEMBERS", k);
	if ((r = command(rs, cfg, &o.cmd, now_ms)) == NULL)
		return -1;
	if (r->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(r);
		return failed(rs, cfg, "SMEMBERS gave no set", now_ms);
	}
	for (i = 0; i < r->elements; i++)
		if (r->element[i]->type != REDIS_REPLY_STRING || memchr(r->element[i]->str, '\n', r->element[i]->len) ||
		    memchr(r->element[i]->str, '\0', r->element[i]->len))
			goto out;
	if (r->elements > 1)
		qsort(r->element, r->elements, sizeof(*r->element), member_cmp);
	for (i = 0; i < r->elements; i++) {
		if (used + r->element[i]->len + 2 > outlen)
			goto out;
		memcpy(out + used, r->element[i]->str, r->element[i]->len);
		used += r->element[i]->len;
		out[used++] = '\n';
	}
	out[used] = '\0';
	rc = 0;
out:
	if (rc < 0)
		out[0] = '\0';
	freeReplyObject(r);
	return rc;
}

int
rstore_has(struct rstore *rs, const struct config *cfg, const struct rs_key *k, int64_t now_ms)
{
	struct keyed o;
	redisReply *r;
	int rc;

	keyed_words(&o, "EXISTS", k);
	if ((r = command(rs, cfg, &o.cmd, now_ms)) == NULL)
		return -1;
	rc = r->type == REDIS_REPLY_INTEGER ? r->integer > 0 : -1;
	freeReplyObject(r);
	if (rc < 0)
		return failed(rs, cfg, "EXISTS gave no number", now_ms);
	return rc;
}
