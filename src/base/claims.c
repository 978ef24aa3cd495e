/* claims — one reading of a token's claims, for introspection and JWT access tokens. */
#include "autoconf.h"

#include <string.h>

#include "buf.h"
#include "claims.h"
#include "url.h"

#define B64URL	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

int
claims_set(char *dst, size_t n, const char *src)
{
	size_t len = strlen(src);

	if (len >= n)
		return -1;
	memcpy(dst, src, len + 1);
	return 0;
}

/* A list claim (an array of strings or one blank-separated string) into a blank-separated
 * field; names with blanks in an array are left out. */
static int
put_words(char *dst, size_t n, json_t *g)
{
	struct buf b;
	size_t i;
	json_t *v;
	int rc = 0;

	dst[0] = '\0';
	if (g == NULL || json_is_null(g))
		return 0;
	if (json_is_string(g))
		return claims_set(dst, n, json_string_value(g));
	if (!json_is_array(g))
		return -1;
	buf_init(&b, n - 1);
	json_array_foreach(g, i, v) {
		const char *s = json_string_value(v);

		if (s == NULL || !*s || strpbrk(s, " \t"))
			continue;	/* not a usable name */
		if ((b.len && buf_putc(&b, ' ') < 0) || buf_puts(&b, s) < 0) {
			rc = -1;
			break;
		}
	}
	if (rc == 0)
		memcpy(dst, buf_str(&b), b.len + 1);
	buf_free(&b);
	return rc;
}

int
claims_read(json_t *j, const struct claims_names *names, struct claims *c, struct gw_error *err)
{
	static const char *const clients[] = { "client_id", "azp", "appid" };
	const char *s = NULL;
	json_t *v;
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; s == NULL && i < sizeof(clients) / sizeof(clients[0]); i++)
		s = json_string_value(json_object_get(j, clients[i]));
	if (s && claims_set(c->client_id, sizeof(c->client_id), s) < 0)
		return gw_error_set(err, GW_EBADTOKEN, "token claims too large"), -1;
	s = json_string_value(json_object_get(j, "sub"));
	c->machine = s == NULL;
	if (claims_set(c->subject, sizeof(c->subject), s ? s : c->client_id) < 0)
		return gw_error_set(err, GW_EBADTOKEN, "token claims too large"), -1;
	v = json_object_get(j, names->scope);
	if ((json_is_string(v) || json_is_array(v)) && put_words(c->scope, sizeof(c->scope), v) < 0)
		return gw_error_set(err, GW_EBADTOKEN, "token claims too large"), -1;
	if (put_words(c->groups, sizeof(c->groups), json_object_get(j, names->groups)) < 0)
		return gw_error_set(err, GW_EBADTOKEN, "token groups claim unusable"), -1;
	v = json_object_get(j, names->tenant);
	if (v && !json_is_null(v) && (!json_is_string(v) || claims_set(c->tenant, sizeof(c->tenant), json_string_value(v)) < 0))
		return gw_error_set(err, GW_EBADTOKEN, "token tenant claim unusable"), -1;
	v = json_object_get(json_object_get(j, "cnf"), "jkt");
	if (v && (!json_is_string(v) || json_string_length(v) != CLAIMS_JKT_MAX - 1 ||
	    strspn(json_string_value(v), B64URL) != CLAIMS_JKT_MAX - 1))
		return gw_error_set(err, GW_EBADTOKEN, "token cnf.jkt unusable"), -1;
	if (v)
		memcpy(c->jkt, json_string_value(v), CLAIMS_JKT_MAX);
	return 0;
}

int
claims_audience(json_t *aud, const char *resource, char *const *extra, size_t n)
{
	size_t i, k;
	json_t *v;

	if (json_is_string(aud))
		aud = json_pack("[O]", aud);
	else
		json_incref(aud);
	json_array_foreach(aud, i, v) {
		const char *s = json_string_value(v);

		if (s == NULL)
			continue;
		if (url_same(s, resource))
			goto yes;
		for (k = 0; k < n; k++)
			if (strcmp(s, extra[k]) == 0)
				goto yes;
	}
	json_decref(aud);
	return 0;
yes:
	json_decref(aud);
	return 1;
}
