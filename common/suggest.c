/* SPDX-License-Identifier: Apache-2.0 */
/*
 * suggest.c - edit distance and the closest name (suggest.h).  One row of
 * the dynamic-programming table, abandoned as soon as every cell of a row
 * exceeds the limit.
 */
#include <string.h>

#include "suggest.h"

#define NAME_MAX_LEN 256

size_t xpc_edit_distance(const char *a, const char *b, size_t limit)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t row[NAME_MAX_LEN + 1], prev;

	if (la > NAME_MAX_LEN || lb > NAME_MAX_LEN)
		return limit + 1;
	if ((la > lb ? la - lb : lb - la) > limit)
		return limit + 1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t best;

		prev = row[0];
		row[0] = i;
		best = row[0];
		for (j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t sub = prev + (a[i - 1] != b[j - 1]);
			size_t ins = row[j - 1] + 1, del = row[j] + 1;
			size_t v = ins < del ? ins : del;

			row[j] = sub < v ? sub : v;
			prev = cur;
			if (row[j] < best)
				best = row[j];
		}
		if (best > limit)
			return limit + 1;
	}
	return row[lb] <= limit ? row[lb] : limit + 1;
}

const char *xpc_closest(const char *word, const char *const *cands, size_t n)
{
	size_t limit = strlen(word) / 3 > 2 ? strlen(word) / 3 : 2, best_d = limit + 1, i;
	const char *best = NULL;

	for (i = 0; i < n; i++) {
		size_t d = cands[i] ? xpc_edit_distance(word, cands[i], limit) : limit + 1;

		if (d < best_d) {
			best_d = d;
			best = cands[i];
		}
	}
	return best;
}
