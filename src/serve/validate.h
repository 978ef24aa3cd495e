/* validate — the `mcpgate validate` command: instances checked against a JSON Schema
 * as the gateway checks a tool's arguments (jschema.h), for a CI job or a tool's author. */
#ifndef GW_VALIDATE_H
#define GW_VALIDATE_H

/* Exit codes. */
#define VALIDATE_OK	0	/* every instance is valid */
#define VALIDATE_INVALID 1	/* one or more is not (each one's first error printed) */
#define VALIDATE_ERROR	2	/* usage error, or a schema or instance that does not load or compile */

/* argv[0] is "validate": [--remotes DIR] [--format] SCHEMA-FILE INSTANCE-FILE...
 * Prints a line per instance to stdout, errors to stderr; returns the exit code. */
int validate_main(int argc, char **argv);

#endif
