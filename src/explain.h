/* explain — the `mcpgate explain` command (DESIGN §2). */
#ifndef GW_EXPLAIN_H
#define GW_EXPLAIN_H

/* argv[0] is "explain". Prints to stdout, notes and errors to stderr; the exit code. */
int explain_main(int argc, char **argv, const char *config_path);

#endif
