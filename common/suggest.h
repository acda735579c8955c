/* SPDX-License-Identifier: Apache-2.0 */
/*
 * suggest.h - "did you mean": the edit distance between two names and the
 * closest of a list, for every place a user's word is not one we know
 * (a flag, a command, a policy, a syscall, a tracepoint, a symbol).
 */
#ifndef XPC_SUGGEST_H
#define XPC_SUGGEST_H

#include <stddef.h>

/*
 * Levenshtein distance of @a and @b (insert, delete, substitute: 1 each),
 * or @limit + 1 as soon as it must exceed @limit (names longer than 256
 * bytes are never close).
 */
size_t xpc_edit_distance(const char *a, const char *b, size_t limit);
/*
 * The candidate of @cands (@n of them) closest to @word, within
 * max(2, strlen(@word) / 3) edits; ties go to the first.  NULL when none
 * is that close.
 */
const char *xpc_closest(const char *word, const char *const *cands, size_t n);

#endif /* XPC_SUGGEST_H */
