/* pins_cmd — the `mcpgate pins` command (mcpgate(8)): the upstreams' tools, prompts
 * and resource templates against the pins file (pins.h), their differences, and their
 * approval.
 *
 *   mcpgate pins [-c FILE] [--catalog FILE] [--json] status [UPSTREAM[/NAME]...]
 *   mcpgate pins [-c FILE] [--catalog FILE] diff [UPSTREAM[/NAME]...]
 *   mcpgate pins [-c FILE] [--catalog FILE] approve [--by WHO] (--all-new | UPSTREAM[/NAME]...)
 *
 * What each upstream lists is catalog_lists' of the catalog (--catalog FILE, else the
 * one the gateway saved in its state file, else asked of the upstreams now), never the
 * gateway's decisions on it: a record the gateway holds back is judged as any other. */
#ifndef GW_PINS_CMD_H
#define GW_PINS_CMD_H

/* Exit codes, as diff(1)'s. */
#define PINS_CMD_SAME		0	/* every record pinned; approve: done */
#define PINS_CMD_DIFFERENT	1	/* something new, changed or gone */
#define PINS_CMD_TROUBLE	2	/* usage, configuration, catalog; an upstream not read */

/* argv[0] is "pins"; config_path is the default for -c. The answer on stdout, notes and
 * errors on stderr; returns the exit code. */
int pins_cmd_main(int argc, char **argv, const char *config_path);

#endif
