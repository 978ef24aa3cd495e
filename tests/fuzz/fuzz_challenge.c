/* The WWW-Authenticate reader (src/http/challenge.c): what an upstream's 401 names as
 * its resource_metadata. The first byte picks the size of the output buffer (1 to 256
 * bytes); the rest is the header. Properties: a value found fits and holds no control
 * character but HTAB; a larger buffer gives the same value; the value, quoted again
 * into a challenge of its own, reads back as itself. */
#include "autoconf.h"

#include "challenge.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[256], big[CHALLENGE_HEADER_MAX], again[CHALLENGE_HEADER_MAX], *h, *hdr;
	size_t outlen, n, i, k;

	if (size == 0)
		return 0;
	outlen = 1 + data[0] % 256;
	h = fuzz_cstr(data + 1, size - 1);
	if (challenge_param(h, "Bearer", "resource_metadata", out, outlen) == 0) {
		n = strlen(out);
		FUZZ_CHECK(n < outlen);
		for (i = 0; i < n; i++)
			FUZZ_CHECK((unsigned char)out[i] >= 0x20 || out[i] == '\t');
		FUZZ_CHECK(challenge_param(h, "bearer", "RESOURCE_METADATA", big, sizeof(big)) == 0);
		FUZZ_CHECK(strcmp(big, out) == 0);
		/* Quoted again: '"' and '\\' escaped. */
		hdr = malloc(2 * n + 96);	/* the words around the value: 66 bytes */
		k = (size_t)snprintf(hdr, 64, "Basic x==, Bearer error=y, resource_metadata=\"");
		for (i = 0; i < n; i++) {
			if (out[i] == '"' || out[i] == '\\')
				hdr[k++] = '\\';
			hdr[k++] = out[i];
		}
		memcpy(hdr + k, "\", DPoP algs=ES256", 19);
		FUZZ_CHECK(challenge_param(hdr, "Bearer", "resource_metadata", again, sizeof(again)) == 0);
		FUZZ_CHECK(strcmp(again, out) == 0);
		free(hdr);
	}
	(void)challenge_param(h, "Basic", "realm", out, outlen);
	free(h);
	return 0;
}
