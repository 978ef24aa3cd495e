/* claims — what a verified token says of its caller, as every layer above the token
 * sees it (auth fills it, the policy and the exchange read it). Fixed-size strings,
 * so that it lives in the shared token cache as it is. */
#ifndef GW_CLAIMS_H
#define GW_CLAIMS_H

#include <stdint.h>

#define CLAIMS_SUBJECT_MAX	256
#define CLAIMS_CLIENT_MAX	128
#define CLAIMS_SCOPE_MAX	512
#define CLAIMS_GROUPS_MAX	1024
#define CLAIMS_TENANT_MAX	128

struct claims {
	char subject[CLAIMS_SUBJECT_MAX];	/* sub, or client_id for machine tokens */
	char client_id[CLAIMS_CLIENT_MAX];
	char scope[CLAIMS_SCOPE_MAX];	/* space-separated */
	char groups[CLAIMS_GROUPS_MAX];	/* space-separated */
	char tenant[CLAIMS_TENANT_MAX];	/* "" = none */
	int64_t exp;			/* seconds since the epoch */
	int machine;			/* no sub: a client_credentials token */
};

#endif
