/* str — small string helpers shared by the modules. */
#ifndef GW_STR_H
#define GW_STR_H

/* Is word one of the words of list, separated by blanks (spaces or tabs)? Scopes
 * (RFC 6749 §3.3), identity groups. An empty word is in no list. */
int str_has_word(const char *list, const char *word);

#endif
