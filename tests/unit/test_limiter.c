/* Unit tests: limiter_rate (the effective rate of a class for a tenant's callers, as
 * explain prints it); the gateway's bucket key follows the digest key (another digest
 * key, a rebuilt state file, is another bucket; going back finds the first again, in
 * any thread); and a caller known before the network owes gateway and ip to its first
 * element's decision, or to the end of the request. */
#include "autoconf.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "limiter.h"
#include "ratelimit.h"
#include "secret.h"
#include "tap.h"

#define S	1000000000LL

static void
test_rate(void)
{
	struct config cfg;
	struct cfg_tenant tn;
	const struct rate *r;
	int over = -1;

	memset(&cfg, 0, sizeof(cfg));
	memset(&tn, 0, sizeof(tn));
	cfg.limit_token = (struct rate){ 120, 60, 0 };
	cfg.limit_tool = (struct rate){ 600, 60, 5 };
	cfg.limit_ip = (struct rate){ 100, 1, 20 };
	tn.limit_token = (struct rate){ 10, 1, 0 };
	tn.limit_tool = (struct rate){ 0, 1, 0 };	/* "0": unlimited for this tenant */
	tn.limit_ip = (struct rate){ 1, 1, 0 };		/* not read: ip is taken before the tenant is known */

	r = limiter_rate(&cfg, &tn, LIMIT_TOKEN, &over);
	ok(r->n == 10 && r->per == 1 && over == 1, "token: the tenant's limit-token, said to be the tenant's");
	r = limiter_rate(&cfg, NULL, LIMIT_TOKEN, &over);
	ok(r->n == 120 && r->per == 60 && over == 0, "token without a tenant section: [limits]");
	r = limiter_rate(&cfg, &tn, LIMIT_TOOL, &over);
	ok(!config_rate_on(r) && over == 1, "tool: the tenant's limit-tool = 0, unlimited for it");
	r = limiter_rate(&cfg, &tn, LIMIT_IP, &over);
	ok(r->n == 100 && r->burst == 20 && over == 0, "ip: [limits] ip, the tenant's limit-ip not read");
	r = limiter_rate(&cfg, &tn, LIMIT_TENANT, &over);
	ok(!config_rate_on(r) && r->per == 0 && over == 0, "tenant: neither sets it: [limits]'s, off");
	r = limiter_rate(&cfg, &tn, LIMIT_GATEWAY, NULL);
	ok(r == &cfg.limit_gateway, "gateway: [limits] gateway (from_tenant may be NULL)");
}

static struct ratelimit *rl;
static struct config *gcfg;
static struct request greq;

/* One request's gateway limit under digest key dk at now: LIMIT_PASS or LIMIT_REFUSED. */
static int
gateway_take(const unsigned char *dk, int64_t now)
{
	struct limiter l;

	limiter_init(&l, rl, NULL, gcfg, dk, &greq);
	return limiter_before_auth(&l, 0, now);
}

static const unsigned char key_a[32] = { 1, 2, 3 }, key_b[32] = { 9, 8, 7 };

static void *
other_thread(void *arg)
{
	int *rc = arg;

	rc[0] = gateway_take(key_a, 10 * S);	/* A's bucket, its key made afresh here */
	rc[1] = gateway_take(key_b, 10 * S);
	return NULL;
}

static void
test_gateway_key(void)
{
	size_t size = ratelimit_region_size();
	void *region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pthread_t t;
	int rc[2] = { -9, -9 };

	ratelimit_region_init(region, size, 1);
	rl = ratelimit_attach(region, size);
	ok(rl != NULL, "buckets attached");
	gcfg = calloc(1, sizeof(*gcfg));
	gcfg->limit_gateway = (struct rate){ 1, 3600, 0 };
	memset(&greq, 0, sizeof(greq));
	snprintf(greq.id, sizeof(greq.id), "test");	/* no address: the ip limit (off here) has no key */

	is_int(gateway_take(key_a, 10 * S), LIMIT_PASS, "gateway = 1/3600, digest key A: the first passes");
	is_int(gateway_take(key_a, 10 * S), LIMIT_REFUSED, "… the second is refused (the key kept: the same bucket)");
	is_int(gateway_take(key_b, 10 * S), LIMIT_PASS, "digest key B (a rebuilt state file): a bucket of its own");
	is_int(gateway_take(key_b, 10 * S), LIMIT_REFUSED, "… and B's second is refused");
	is_int(gateway_take(key_a, 10 * S), LIMIT_REFUSED, "back to A: A's bucket again, still spent");
	pthread_create(&t, NULL, other_thread, rc);
	pthread_join(t, NULL);
	ok(rc[0] == LIMIT_REFUSED && rc[1] == LIMIT_REFUSED, "another thread finds the same buckets for A and B");
	is_int((long long)ratelimit_count(rl, 10 * S), 2, "two buckets in use: one per digest key");
	ratelimit_detach(rl);
	munmap(region, size);
	free(gcfg);
}

/* A caller the token cache knew: gateway and ip owed, then decided with tenant and token
 * in the first element's decision, in class order; or settled at the end. */
static void
test_owed(void)
{
	size_t size = ratelimit_region_size();
	void *region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned char tok[RL_KEY_BYTES] = { 5 };
	struct limiter l;

	ratelimit_region_init(region, size, 1);
	rl = ratelimit_attach(region, size);
	gcfg = calloc(1, sizeof(*gcfg));
	gcfg->limit_gateway = (struct rate){ 3, 3600, 0 };
	gcfg->limit_token = (struct rate){ 1, 3600, 0 };
	memset(&greq, 0, sizeof(greq));
	snprintf(greq.id, sizeof(greq.id), "test");

	limiter_init(&l, rl, NULL, gcfg, key_a, &greq);
	is_int(limiter_before_auth(&l, 1, 10 * S), LIMIT_PASS, "known caller: nothing decided before authentication");
	is_int((long long)ratelimit_count(rl, 10 * S), 0, "… no bucket taken yet");
	limiter_caller(&l, "", tok);
	is_int(limiter_element(&l, 1, 10 * S), LIMIT_PASS, "the first element: gateway and token together");
	is_int((long long)ratelimit_count(rl, 10 * S), 2, "… both buckets taken");
	limiter_settle(&l, 10 * S);
	is_int((long long)ratelimit_count(rl, 10 * S), 2, "… nothing owed at the end");

	limiter_init(&l, rl, NULL, gcfg, key_a, &greq);
	limiter_before_auth(&l, 1, 10 * S);
	limiter_caller(&l, "", tok);
	is_int(limiter_element(&l, 1, 10 * S), LIMIT_REFUSED, "the token's second request: refused");
	is_int(l.refused, LIMIT_TOKEN, "… by the token class, gateway (owed, first in order) having passed");

	limiter_init(&l, rl, NULL, gcfg, key_a, &greq);
	limiter_before_auth(&l, 1, 10 * S);
	limiter_settle(&l, 10 * S);	/* say a 400 before any element */
	limiter_init(&l, rl, NULL, gcfg, key_a, &greq);
	is_int(limiter_before_auth(&l, 0, 10 * S), LIMIT_REFUSED,
	    "an answer made before the first element still paid its gateway share (3 of 3 spent)");
	ratelimit_detach(rl);
	munmap(region, size);
	free(gcfg);
}

int
main(void)
{
	secret_init();
	test_rate();
	test_gateway_key();
	test_owed();
	return done_testing();
}
