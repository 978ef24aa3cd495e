/* The list cursors of tools/list, prompts/list, resources/list and
 * resources/templates/list (mcp_cursor_seal/open in src/mcp/mcp_list.c). The first byte picks:
 *   even: the input opened as a cursor: never accepted (nobody can forge one);
 *   odd:  an offset, a list and a caller from the input sealed and opened: the same
 *         offset for that list and caller, nothing for another list or caller (of the
 *         gateway, or the same one of another gateway sharing the key), and no cursor
 *         at all for offset 0. */
#include "autoconf.h"

#include "catalog.h"
#include "fuzz.h"
#include "mcp.h"
#include "session.h"

static unsigned char key[SESSION_KEY_BYTES];
/* two gateways sharing the key (a state file, a session-key-file) */
static const unsigned char gw[SESSION_BIND_BYTES] = "fuzz gateway 01", gw2[SESSION_BIND_BYTES] = "fuzz gateway 02";

void
fuzz_setup(void)
{
	memset(key, 0xa5, sizeof(key));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char cursor[MCP_CURSOR_MAX], who[33], other[33], there[33], *s;
	const char *list, *list2;
	size_t off = 0, got, i;

	if (size == 0)
		return 0;
	if (data[0] % 2 == 0) {
		s = fuzz_cstr(data + 1, size - 1);
		session_who(gw, "alice", "c", "", who);
		for (i = 0; i < CATALOG_NKINDS; i++)
			FUZZ_CHECK(mcp_cursor_open(key, catalog_kinds[i].array, who, s, &got) < 0);
		free(s);
		return 0;
	}
	if (size < 10)
		return 0;
	for (i = 0; i < 8; i++)
		off = off << 8 | data[1 + i];
	list = catalog_kinds[data[9] % CATALOG_NKINDS].array;
	list2 = catalog_kinds[(data[9] + 1) % CATALOG_NKINDS].array;
	s = fuzz_cstr(data + 10, size - 10);
	session_who(gw, s, "c", "", who);
	session_who(gw, s, "c", "other", other);
	session_who(gw2, s, "c", "", there);
	FUZZ_CHECK(mcp_cursor_seal(key, list, who, off, cursor, sizeof(cursor)) == 0);	/* any offset fits */
	FUZZ_CHECK(strspn(cursor, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
	    strlen(cursor));
	if (off == 0)
		FUZZ_CHECK(mcp_cursor_open(key, list, who, cursor, &got) < 0);
	else {
		FUZZ_CHECK(mcp_cursor_open(key, list, who, cursor, &got) == 0 && got == off);
		FUZZ_CHECK(mcp_cursor_open(key, list2, who, cursor, &got) < 0);
		FUZZ_CHECK(mcp_cursor_open(key, list, other, cursor, &got) < 0);
		FUZZ_CHECK(mcp_cursor_open(key, list, there, cursor, &got) < 0);
	}
	free(s);
	return 0;
}
