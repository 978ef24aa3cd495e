/* explain — the `mcpgate explain` command (docs/ARCHITECTURE.md §2): who sees which
 * tool, and why. */
#ifndef GW_EXPLAIN_H
#define GW_EXPLAIN_H

/* Exit codes. */
#define EXPLAIN_OK	0	/* explained (whatever the caller sees) */
#define EXPLAIN_ERROR	1	/* usage, claims or configuration error; an upstream asked live did not answer */
#define EXPLAIN_HIDDEN	2	/* --tool names a tool the caller may not call, or none */

/* argv[0] is "explain"; config_path is the default for -c. Prints the answer to
 * stdout, notes and errors to stderr; returns the exit code. */
int explain_main(int argc, char **argv, const char *config_path);

#endif
