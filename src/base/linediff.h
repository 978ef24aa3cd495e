/* linediff — the difference of two texts by lines, as the hunks of a unified diff
 * (diff -u), bounded in work and memory. Pure.
 *
 * A text is its lines, split at '\n' (a last line without one is a line too; "" has
 * none). The edit is a longest common subsequence of the lines: its deletions come
 * before its insertions where both are possible. Past LINEDIFF_CELLS_MAX (the product
 * of the line counts that remain once the common first and last lines are set aside)
 * no subsequence is looked for: the hunk removes the rest of a and adds the rest of b,
 * whole. Hunks carry `context` common lines each side and merge when theirs meet. */
#ifndef GW_LINEDIFF_H
#define GW_LINEDIFF_H

#include "buf.h"

#define LINEDIFF_CELLS_MAX	(1u << 22)	/* 4 Mi cells of 2 bytes: 8 MiB at the most */
#define LINEDIFF_LINES_MAX	(1u << 20)	/* lines of a text */

/* Appends the hunks turning a into b to out ("@@ -A,N +B,M @@" and their lines, each
 * ending '\n'; nothing when they are the same): 1 when the texts differ, 0 when the
 * same, -1 when out is full, a text has more than LINEDIFF_LINES_MAX lines, or without
 * memory. */
int linediff_unified(const char *a, const char *b, unsigned context, struct buf *out) BUF_MUST;

#endif
