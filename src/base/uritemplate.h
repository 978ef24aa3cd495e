/* uritemplate — RFC 6570 templates, as resources/templates/list gives them. */
#ifndef GW_URITEMPLATE_H
#define GW_URITEMPLATE_H

/* 1 when uri is an expansion of the template tmpl (levels 1-3 operators; values may
 * not contain the characters that end their expression). Bounded in time and memory. */
int uritemplate_matches(const char *tmpl, const char *uri);

#endif
