/* SPDX-License-Identifier: Apache-2.0 */
/*
 * error_text.h - what the unit tests look for in a struct xp_error: a hint
 * or a detail holding some text.  Shared by the tests of resolution and of
 * the host checks (test_resolve_live.c, test_checks_host.c), which each
 * had a copy.  Header-only.
 */
#ifndef XP_TESTS_ERROR_TEXT_H
#define XP_TESTS_ERROR_TEXT_H

#include <stdbool.h>
#include <string.h>

#include "../../src/model/error_record.h"

/* Some hint of @e contains @needle. */
static inline bool xpt_hint_contains(const struct xp_error *e, const char *needle)
{
	size_t i;

	for (i = 0; i < e->nhints; i++)
		if (strstr(e->hints[i], needle))
			return true;
	return false;
}

/* Detail @key of @e (its JSON text) contains @needle. */
static inline bool xpt_detail_contains(const struct xp_error *e, const char *key,
				       const char *needle)
{
	const char *v = xp_error_detail_get(e, key);

	return v && strstr(v, needle);
}

#endif /* XP_TESTS_ERROR_TEXT_H */
