/* explain — the `mcpgate explain` command (docs/ARCHITECTURE.md §2): who sees which
 * tool, and why. */
#ifndef GW_EXPLAIN_H
#define GW_EXPLAIN_H

/* Exit codes. */
#define EXPLAIN_OK	0	/* explained (whatever the caller sees) */
#define EXPLAIN_ERROR	1	/* usage, claims or configuration error; an upstream asked live did not answer */
#define EXPLAIN_HIDDEN	2	/* --tool names a tool the caller may not call, or none */

#include <jansson.h>

#include "config.h"

/* --catalog FILE: what each upstream offers, from a file instead of the upstreams (a CI
 * job that cannot reach them): {"<upstream section>": its tools/list result (bare or
 * the JSON-RPC answer), or just its tools array, or {"caps", "tools", "prompts",
 * "resources", "resourceTemplates"} as --save-catalog writes}, names as the upstream
 * gives them; with one upstream, the file may be its tools/list result alone (bare or
 * the JSON-RPC answer), refused with several (whose tools is not said). The gateway's
 * own builder makes the catalog document of it (catalog.h); an upstream the file lacks
 * is left out, and a name that is no upstream is noted in notes (an array). NULL, said
 * on stderr with what was expected, when the file is unusable: not JSON, a JSON-RPC
 * error answer, or nothing of any upstream in it. */
json_t *explain_catalog_load(const struct config *cfg, const char *path, json_t *notes);

/* argv[0] is "explain"; config_path is the default for -c. Prints the answer to
 * stdout, notes and errors to stderr; returns the exit code. */
int explain_main(int argc, char **argv, const char *config_path);

#endif
