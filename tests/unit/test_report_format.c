/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_report_format.c - the terminal's duration format
 * (src/report/format.c): three significant digits, the unit switching at
 * each power of 1000, nanoseconds without decimals.
 */
#include "report/format.h"
#include "testlib.h"

static void test_fmt_ns(void)
{
	char b[32];

	xp_report_fmt_ns(b, sizeof(b), 0);
	CHECK_STR(b, "0ns");
	xp_report_fmt_ns(b, sizeof(b), 512);
	CHECK_STR(b, "512ns");
	xp_report_fmt_ns(b, sizeof(b), 999);
	CHECK_STR(b, "999ns");
	xp_report_fmt_ns(b, sizeof(b), 1000);
	CHECK_STR(b, "1.00us");
	xp_report_fmt_ns(b, sizeof(b), 1024);
	CHECK_STR(b, "1.02us");
	xp_report_fmt_ns(b, sizeof(b), 12345);
	CHECK_STR(b, "12.3us");
	xp_report_fmt_ns(b, sizeof(b), 262144);
	CHECK_STR(b, "262us");
	xp_report_fmt_ns(b, sizeof(b), 4194304);
	CHECK_STR(b, "4.19ms");
	xp_report_fmt_ns(b, sizeof(b), 1.5e9);
	CHECK_STR(b, "1.50s");
	xp_report_fmt_ns(b, sizeof(b), 250e9);
	CHECK_STR(b, "250s");
}

int main(void)
{
	test_fmt_ns();
	TEST_MAIN_END();
}
