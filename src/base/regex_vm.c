/* regex_vm — a compiled pattern run as a Pike VM: every thread steps over the subject's
 * code points together, each instruction at most once a position, so that a search
 * takes at most (length of the subject) x (instructions) steps whatever the pattern:
 * "(a*)*b" on a long run of a's too. */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "regex.h"
#include "regex_int.h"

/* A program this small runs on the stack: most patterns are (patternProperties tries
 * each against every member's name). */
#define SMALL_PROG	64

size_t
regex_utf8_next(const char *s, size_t len, unsigned long *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n, i;
	unsigned long v;

	if (u[0] < 0x80 || len < 2) {
		*cp = u[0];
		return 1;
	}
	if ((u[0] & 0xe0) == 0xc0)
		n = 2, v = u[0] & 0x1f;
	else if ((u[0] & 0xf0) == 0xe0)
		n = 3, v = u[0] & 0x0f;
	else if ((u[0] & 0xf8) == 0xf0)
		n = 4, v = u[0] & 0x07;
	else
		n = 0, v = 0;
	if (n == 0 || n > len)
		goto raw;
	for (i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)
			goto raw;
		v = v << 6 | (u[i] & 0x3f);
	}
	*cp = v;
	return n;
raw:
	*cp = u[0];
	return 1;
}

static int
class_has(const struct rclass *cl, unsigned long cp)
{
	size_t lo = 0, hi = cl->n, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (cp < cl->r[mid].lo)
			hi = mid;
		else if (cp > cl->r[mid].hi)
			lo = mid + 1;
		else
			return !cl->neg;
	}
	return cl->neg;
}

static int
is_word(long cp)
{
	return cp >= 0 && cp < 0x80 && (cp == '_' || (cp >= '0' && cp <= '9') ||
	    ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z'));
}

/* A position in the subject, as the assertions see it. */
struct at {
	int start, end;
	long prev, next;	/* the code points either side; -1: none */
};

/* What every step of one search shares: mark[] holds gen for each instruction already
 * added at this position, stack[] is add's work list (both re->n long). */
struct vm {
	const struct regex *re;
	size_t *mark;
	size_t *stack;
	size_t gen;
};

/* The threads at pc and all it reaches without a character, added to list (n of them):
 * by vm->mark each is added once a position, so that loops of empty steps end. 1 when
 * one reaches the match. */
static int
add(struct vm *vm, size_t *list, size_t *n, size_t pc, const struct at *at)
{
	const struct insn *in;
	size_t *mark = vm->mark, *stack = vm->stack, gen = vm->gen, sp = 0;
	int matched = 0;

#define PUSH(t) do { size_t t_ = (t); if (mark[t_] != gen) { mark[t_] = gen; stack[sp++] = t_; } } while (0)
	PUSH(pc);
	while (sp > 0) {
		pc = stack[--sp];
		in = &vm->re->code[pc];
		switch (in->op) {
		case OP_JMP:
			PUSH(pc + (size_t)(long)in->x);
			break;
		case OP_SPLIT:
			PUSH(pc + (size_t)(long)in->y);
			PUSH(pc + (size_t)(long)in->x);
			break;
		case OP_BOL:
			if (at->start)
				PUSH(pc + 1);
			break;
		case OP_EOL:
			if (at->end)
				PUSH(pc + 1);
			break;
		case OP_WORDB:
		case OP_NWORDB:
			if ((is_word(at->prev) != is_word(at->next)) == (in->op == OP_WORDB))
				PUSH(pc + 1);
			break;
		case OP_MATCH:
			matched = 1;
			break;
		default:
			list[(*n)++] = pc;
		}
	}
#undef PUSH
	return matched;
}

int
regex_search(const struct regex *re, const char *s, size_t len)
{
	size_t small[4 * SMALL_PROG], *mem = small, *clist, *nlist, *t, nc = 0, nn, i, pos = 0, k = 0;
	struct vm vm;
	const struct insn *in;
	unsigned long cp = 0, ncp;
	struct at at = { 1, len == 0, -1, -1 };
	int hit = 0, matched;

	if (re->n <= SMALL_PROG)
		memset(small, 0, sizeof(small));
	else if ((mem = calloc(4 * re->n, sizeof(*mem))) == NULL)
		return -1;
	clist = mem, nlist = mem + re->n;
	vm.re = re, vm.mark = mem + 2 * re->n, vm.stack = mem + 3 * re->n, vm.gen = 1;
	if (len > 0)
		k = regex_utf8_next(s, len, &cp), at.next = (long)cp;
	for (;;) {
		/* A new attempt starts at every position: the search is unanchored. */
		if ((matched = add(&vm, clist, &nc, 0, &at)) || pos == len)
			break;
		vm.gen++;
		nn = 0;
		at.start = 0;
		at.prev = (long)cp;
		at.end = pos + k == len;
		ncp = 0;
		if (!at.end)
			regex_utf8_next(s + pos + k, len - pos - k, &ncp);
		at.next = at.end ? -1 : (long)ncp;
		for (i = 0; i < nc && !hit; i++) {
			in = &re->code[clist[i]];
			if ((in->op == OP_CHAR && in->c == cp) ||
			    (in->op == OP_ANY && cp != '\n' && cp != '\r' && cp != 0x2028 && cp != 0x2029) ||
			    (in->op == OP_CLASS && class_has(&re->cls[in->c], cp)))
				hit = add(&vm, nlist, &nn, clist[i] + 1, &at);
		}
		if ((matched = hit))
			break;
		t = clist, clist = nlist, nlist = t;
		nc = nn;
		pos += k;
		cp = ncp;
		k = at.end ? 0 : regex_utf8_next(s + pos, len - pos, &ncp);
	}
	if (mem != small)
		free(mem);
	return matched;
}
