/* Unit tests: limiter_rate (the effective rate of a class for a tenant's callers, as
 * explain prints it), and for a tool the tightest of that and its groups' limit-tool,
 * charged to the tool's one bucket; the gateway's bucket key follows the digest key (another digest
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

	r = limiter_rate(&cfg, &tn, LIMIT_TOKEN, NULL, &over, NULL);
	ok(r->n == 10 && r->per == 1 && over == 1, "token: the tenant's limit-token, said to be the tenant's");
	r = limiter_rate(&cfg, NULL, LIMIT_TOKEN, NULL, &over, NULL);
	ok(r->n == 120 && r->per == 60 && over == 0, "token without a tenant section: [limits]");
	r = limiter_rate(&cfg, &tn, LIMIT_TOOL, NULL, &over, NULL);
	ok(!config_rate_on(r) && over == 1, "tool: the tenant's limit-tool = 0, unlimited for it");
	r = limiter_rate(&cfg, &tn, LIMIT_IP, NULL, &over, NULL);
	ok(r->n == 100 && r->burst == 20 && over == 0, "ip: [limits] ip, the tenant's limit-ip not read");
	r = limiter_rate(&cfg, &tn, LIMIT_TENANT, NULL, &over, NULL);
	ok(!config_rate_on(r) && r->per == 0 && over == 0, "tenant: neither sets it: [limits]'s, off");
	r = limiter_rate(&cfg, &tn, LIMIT_GATEWAY, NULL, NULL, NULL);
	ok(r == &cfg.limit_gateway, "gateway: [limits] gateway (from_tenant may be NULL)");
}

/* [group]s for the tool limit: gen (gen_*, 2/60), video (gen_video, 1/120), loose
 * (bulk_*, 100/60), twin_a (twin, 4/120 burst 5), twin_b (twin, 2/60 burst 1), same
 * (same, 20/120 burst 3: [limits]'s steady rate, a larger burst), imaging (no globs,
 * 3/60: upstream img's group), plain (plain, no limit-tool). */
#define N_GROUPS	8
static struct cfg_group groups[N_GROUPS];
static struct cfg_upstream up_img, up_own;
static char names[N_GROUPS][8] = { "gen", "video", "loose", "twin_a", "twin_b", "same", "imaging", "plain" };
static char globs[N_GROUPS][10] = { "gen_*", "gen_video", "bulk_*", "twin", "twin", "same", "", "plain" };
static char *glob_of[N_GROUPS][1];
static char img[] = "img";

static void
groups_init(struct config *cfg)
{
	static const struct rate r[N_GROUPS] = {
		{ 2, 60, 0 }, { 1, 120, 0 }, { 100, 60, 0 }, { 4, 120, 5 }, { 2, 60, 1 }, { 20, 120, 3 }, { 3, 60, 0 },
		{ 0, 0, 0 },
	};
	size_t i;

	memset(groups, 0, sizeof(groups));
	for (i = 0; i < N_GROUPS; i++) {
		groups[i].s.name = names[i];
		glob_of[i][0] = globs[i];
		groups[i].tools = (struct strlist){ glob_of[i], globs[i][0] != '\0' };	/* imaging: no globs */
		groups[i].limit_tool = r[i];
	}
	memset(&up_img, 0, sizeof(up_img));
	up_img.s.name = img;
	up_img.group = names[6];	/* group = imaging */
	memset(&up_own, 0, sizeof(up_own));
	up_own.s.name = names[6];	/* [upstream "imaging"], no group key: its own name */
	cfg->groups = groups;
	cfg->n_groups = N_GROUPS;
	cfg->group_limits = 1;	/* as config_load derives it */
}

/* The tool rate of tool name (from upstream up) for tenant tn: n/per burst b and where from. */
static const struct rate *
tool_rate(const struct config *cfg, const struct cfg_tenant *tn, const char *name, const struct cfg_upstream *up,
    int *over, const struct cfg_group **g)
{
	struct policy_tool t = { name, up, 0, POLICY_TOOL };

	return limiter_rate(cfg, tn, LIMIT_TOOL, &t, over, g);
}

#define RATE_IS(r, a, b, c)	((r)->n == (a) && (r)->per == (b) && (r)->burst == (c))

/* The tightest rate wins among the tool rate (the tenant's, else [limits]) and the
 * limit-tool of every group holding the tool. */
static void
test_group_rate(void)
{
	struct config cfg;
	struct cfg_tenant tn;
	const struct cfg_group *g = NULL;
	const struct rate *r;
	int over = -1;

	memset(&cfg, 0, sizeof(cfg));
	memset(&tn, 0, sizeof(tn));
	cfg.limit_tool = (struct rate){ 10, 60, 0 };
	groups_init(&cfg);

	r = tool_rate(&cfg, NULL, "gen_image", NULL, &over, &g);
	ok(RATE_IS(r, 2, 60, 0) && g == &groups[0] && over == 0, "a group's 2/60 tighter than [limits] tool 10/60: the group's");
	r = tool_rate(&cfg, NULL, "bulk_copy", NULL, &over, &g);
	ok(r == &cfg.limit_tool && g == NULL && over == 0, "a group's 100/60 looser than [limits] 10/60: [limits]'s");
	r = tool_rate(&cfg, NULL, "gen_video", NULL, &over, &g);
	ok(RATE_IS(r, 1, 120, 0) && g == &groups[1], "in two limited groups (2/60, then 1/120): the tighter, 1/120");
	r = tool_rate(&cfg, NULL, "twin", NULL, &over, &g);
	ok(RATE_IS(r, 2, 60, 1) && g == &groups[4], "equal steady rates (4/120 burst 5, 2/60 burst 1): the smaller burst");
	r = tool_rate(&cfg, NULL, "same", NULL, &over, &g);
	ok(r == &cfg.limit_tool && g == NULL, "[limits]'s steady rate with a larger burst in the group: [limits]'s");
	cfg.limit_tool.burst = 4;
	r = tool_rate(&cfg, NULL, "same", NULL, &over, &g);
	ok(RATE_IS(r, 20, 120, 3) && g == &groups[5], "… and with [limits] burst 4, the group's burst 3");
	cfg.limit_tool.burst = 0;
	r = tool_rate(&cfg, NULL, "render", &up_img, &over, &g);
	ok(RATE_IS(r, 3, 60, 0) && g == &groups[6], "a tool of upstream img, group = imaging: imaging's 3/60, no glob");
	r = tool_rate(&cfg, NULL, "render", &up_own, &over, &g);
	ok(RATE_IS(r, 3, 60, 0) && g == &groups[6], "a tool of upstream imaging (no group key): its own group's 3/60");
	r = tool_rate(&cfg, NULL, "render", NULL, &over, &g);
	ok(r == &cfg.limit_tool && g == NULL, "the same name from no upstream: no group holds it, [limits]'s");
	r = tool_rate(&cfg, NULL, "plain", NULL, &over, &g);
	ok(r == &cfg.limit_tool && g == NULL, "a tool in a group without limit-tool: [limits]'s, unchanged");
	r = tool_rate(&cfg, NULL, "other", NULL, &over, &g);
	ok(r == &cfg.limit_tool && g == NULL, "a tool in no group: [limits]'s, unchanged");

	tn.limit_tool = (struct rate){ 1, 60, 0 };
	r = tool_rate(&cfg, &tn, "gen_image", NULL, &over, &g);
	ok(r == &tn.limit_tool && g == NULL && over == 1, "the tenant's limit-tool 1/60 tighter than the group's: the tenant's");
	tn.limit_tool = (struct rate){ 30, 60, 0 };
	r = tool_rate(&cfg, &tn, "gen_image", NULL, &over, &g);
	ok(RATE_IS(r, 2, 60, 0) && g == &groups[0] && over == 0, "the tenant's 30/60 looser than the group's: the group's");
	r = tool_rate(&cfg, &tn, "bulk_copy", NULL, &over, &g);
	ok(r == &tn.limit_tool && g == NULL && over == 1, "… a looser group does not loosen the tenant's");

	cfg.limit_tool = (struct rate){ 0, 1, 0 };	/* [limits] tool = 0 */
	r = tool_rate(&cfg, NULL, "gen_image", NULL, &over, &g);
	ok(RATE_IS(r, 2, 60, 0) && g == &groups[0], "[limits] tool = 0: the group's limit-tool turns it on for its tools");
	r = tool_rate(&cfg, NULL, "other", NULL, &over, &g);
	ok(!config_rate_on(r) && g == NULL, "… a tool in no group stays unlimited");
	tn.limit_tool = (struct rate){ 0, 1, 0 };	/* the tenant's limit-tool = 0 */
	r = tool_rate(&cfg, &tn, "gen_image", NULL, &over, &g);
	ok(RATE_IS(r, 2, 60, 0) && g == &groups[0] && over == 0, "the tenant's limit-tool = 0 too: the group's applies");

	cfg.group_limits = 0;	/* no group sets one: groups are not looked at */
	r = tool_rate(&cfg, &tn, "gen_image", NULL, &over, &g);
	ok(r == &tn.limit_tool && g == NULL, "without a group limit (group_limits 0): the tenant's, as before");
}

static struct ratelimit *rl;
static struct config *gcfg;
static struct request greq;
static void *region;

/* Fresh buckets in a shared region (rl), an empty configuration for the case to fill
 * (gcfg), and a request with no address (greq: the ip limit has no key). */
static void
buckets_begin(void)
{
	size_t size = ratelimit_region_def.size;

	region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	state_region_make(&ratelimit_region_def, region, size, 1);
	rl = ratelimit_attach(region, size);
	gcfg = calloc(1, sizeof(*gcfg));
	memset(&greq, 0, sizeof(greq));
	snprintf(greq.id, sizeof(greq.id), "test");
}

static void
buckets_end(void)
{
	ratelimit_detach(rl);
	munmap(region, ratelimit_region_def.size);
	free(gcfg);
}

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
	pthread_t t;
	int rc[2] = { -9, -9 };

	buckets_begin();
	ok(rl != NULL, "buckets attached");
	gcfg->limit_gateway = (struct rate){ 1, 3600, 0 };

	is_int(gateway_take(key_a, 10 * S), LIMIT_PASS, "gateway = 1/3600, digest key A: the first passes");
	is_int(gateway_take(key_a, 10 * S), LIMIT_REFUSED, "… the second is refused (the key kept: the same bucket)");
	is_int(gateway_take(key_b, 10 * S), LIMIT_PASS, "digest key B (a rebuilt state file): a bucket of its own");
	is_int(gateway_take(key_b, 10 * S), LIMIT_REFUSED, "… and B's second is refused");
	is_int(gateway_take(key_a, 10 * S), LIMIT_REFUSED, "back to A: A's bucket again, still spent");
	pthread_create(&t, NULL, other_thread, rc);
	pthread_join(t, NULL);
	ok(rc[0] == LIMIT_REFUSED && rc[1] == LIMIT_REFUSED, "another thread finds the same buckets for A and B");
	is_int((long long)ratelimit_count(rl, 10 * S), 2, "two buckets in use: one per digest key");
	buckets_end();
}

/* A caller the token cache knew: gateway and ip owed, then decided with tenant and token
 * in the first element's decision, in class order; or settled at the end. */
static void
test_owed(void)
{
	unsigned char tok[RL_KEY_BYTES] = { 5 };
	struct limiter l;

	buckets_begin();
	gcfg->limit_gateway = (struct rate){ 3, 3600, 0 };
	gcfg->limit_token = (struct rate){ 1, 3600, 0 };

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
	buckets_end();
}

/* A group's limit-tool through the buckets: its rate refuses the call and is the one
 * the RateLimit headers show; the bucket is the tool's within the tenant, whichever
 * rate applies; a tool outside the group is not limited. */
static void
test_group_take(void)
{
	unsigned char tok[RL_KEY_BYTES] = { 7 };
	struct policy_tool gen = { "gen_image", NULL, 0, POLICY_TOOL }, other = { "other", NULL, 0, POLICY_TOOL };
	struct limiter l;
	int i, rc[3];

	buckets_begin();
	groups_init(gcfg);	/* [limits] tool = 0: only groups limit tools */

	for (i = 0; i < 3; i++) {
		limiter_init(&l, rl, NULL, gcfg, key_a, &greq);
		limiter_caller(&l, "acme", tok);
		rc[i] = limiter_tool(&l, &gen, 10 * S);
	}
	ok(rc[0] == LIMIT_PASS && rc[1] == LIMIT_PASS && rc[2] == LIMIT_REFUSED,
	    "[group \"gen\"] limit-tool = 2/60, [limits] tool off: two calls of gen_image pass, the third is refused");
	ok(l.refused == LIMIT_TOOL && RATE_IS(&l.rate, 2, 60, 0), "… by the tool class, at the group's 2/60");
	ok(l.shown && l.shown_class == LIMIT_TOOL && RATE_IS(&l.shown_rate, 2, 60, 0),
	    "… the RateLimit headers show the group's rate");
	is_int((long long)ratelimit_count(rl, 10 * S), 1, "… one bucket: the tool's within the tenant");
	limiter_init(&l, rl, NULL, gcfg, key_a, &greq);
	limiter_caller(&l, "acme", tok);
	is_int(limiter_tool(&l, &other, 10 * S), LIMIT_PASS, "a tool outside the group: served, no bucket taken");
	is_int((long long)ratelimit_count(rl, 10 * S), 1, "… still one bucket");
	gcfg->limit_tool = (struct rate){ 100, 60, 0 };	/* now [limits] tool applies to every tool */
	limiter_init(&l, rl, NULL, gcfg, key_a, &greq);
	limiter_caller(&l, "acme", tok);
	is_int(limiter_tool(&l, &gen, 10 * S), LIMIT_REFUSED,
	    "[limits] tool = 100/60 now: gen_image still at the group's 2/60, its bucket the same (spent)");
	buckets_end();
}

int
main(int argc, char **argv)
{
	tap_args(argc, argv);
	secret_init();
	run_case(test_rate);
	run_case(test_group_rate);
	run_case(test_gateway_key);
	run_case(test_owed);
	run_case(test_group_take);
	return done_testing();
}
