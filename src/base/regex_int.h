/* regex_int — a compiled pattern, as the compiler (regex.c) writes it and the Pike VM
 * (regex_vm.c) runs it. */
#ifndef GW_REGEX_INT_H
#define GW_REGEX_INT_H

#include <stddef.h>

enum regex_op { OP_CHAR, OP_ANY, OP_CLASS, OP_SPLIT, OP_JMP, OP_BOL, OP_EOL, OP_WORDB, OP_NWORDB, OP_MATCH };

struct insn {
	unsigned char op;
	int x, y;		/* SPLIT: both ways, JMP: x; relative to this instruction */
	unsigned long c;	/* CHAR: the code point, CLASS: the class's index */
};

struct range {
	unsigned long lo, hi;
};

struct rclass {
	const struct range *r;	/* sorted, disjoint: own, or a static set (\d, \p{L}) */
	struct range *own;	/* r when the class holds its ranges */
	size_t n;
	int neg;
};

struct regex {
	struct insn *code;
	size_t n;
	struct rclass *cls;
	size_t ncls;
	size_t nranges;		/* the classes' own ranges */
};

/* The set of a Unicode general category \p{name} names (name: len bytes): Letter,
 * Number, Decimal_Number and their short names; NULL when regex_uni.c has none. */
const struct range *regex_uni_set(const char *name, size_t len, size_t *n);

#endif
