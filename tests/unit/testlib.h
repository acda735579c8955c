/* SPDX-License-Identifier: Apache-2.0 */
/*
 * testlib.h - the unit tests' assertion macros.  A failed CHECK prints
 * file:line and the expression and counts a failure; main() returns the
 * count's truth, so a test binary exits 1 when anything failed.
 */
#ifndef XP_TESTLIB_H
#define XP_TESTLIB_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int xpt_failures;
static int xpt_checks;

#define CHECK(cond)                                                                   \
	do {                                                                          \
		xpt_checks++;                                                         \
		if (!(cond)) {                                                        \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
				#cond);                                               \
			xpt_failures++;                                               \
		}                                                                     \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                            \
	do {                                                                          \
		uint64_t xa_ = (uint64_t)(a), xb_ = (uint64_t)(b);                    \
		xpt_checks++;                                                         \
		if (xa_ != xb_) {                                                     \
			fprintf(stderr, "%s:%d: CHECK_EQ_U64 failed: %s == %" PRIu64   \
					", %s == %" PRIu64 "\n",                      \
				__FILE__, __LINE__, #a, xa_, #b, xb_);                \
			xpt_failures++;                                               \
		}                                                                     \
	} while (0)

#define CHECK_STR(a, b)                                                               \
	do {                                                                          \
		const char *xa_ = (a), *xb_ = (b);                                    \
		xpt_checks++;                                                         \
		if (!xa_ || !xb_ || strcmp(xa_, xb_) != 0) {                          \
			fprintf(stderr, "%s:%d: CHECK_STR failed: %s == \"%s\", %s == \"%s\"\n", \
				__FILE__, __LINE__, #a, xa_ ? xa_ : "(null)", #b,     \
				xb_ ? xb_ : "(null)");                                \
			xpt_failures++;                                               \
		}                                                                     \
	} while (0)

#define TEST_MAIN_END()                                                               \
	do {                                                                          \
		fprintf(stderr, "%s: %d checks, %d failures\n", __FILE__, xpt_checks, \
			xpt_failures);                                                \
		return xpt_failures ? 1 : 0;                                          \
	} while (0)

#endif /* XP_TESTLIB_H */
