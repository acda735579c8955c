/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_report_format.c - the terminal's duration format
 * (src/report/format.c): three significant digits, the unit switching at
 * each power of 1000, nanoseconds without decimals; and the bars split by
 * part (src/report/render_bars.c, --explain): each bar as long as
 * without parts, its glyphs in proportion, largest remainders first.
 */
#include <stdlib.h>
#include <string.h>

#include "report/format.h"
#include "report/render_bars.h"
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

/* The bar of the line whose label starts with @label, in @text. */
static void bar_of(const char *text, const char *label, char *bar, size_t size)
{
	const char *l = strstr(text, label), *a, *b;

	bar[0] = '\0';
	if (!l || !(a = strchr(l, '|')) || !(b = strchr(a + 1, '|')))
		return;
	snprintf(bar, size, "%.*s", (int)(b - a - 1), a + 1);
}

static size_t count(const char *s, char c)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

static void test_bars_parts(void)
{
	uint64_t bins[XP_POW2_BINS] = { 0 };
	uint64_t parts[XP_POW2_BINS][XP_BAR_PARTS];
	char *text = NULL, bar[64];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	memset(parts, 0, sizeof(parts));
	bins[11] = 10; /* [1.02us, 2.05us): the widest, 40 glyphs */
	parts[11][0] = 250, parts[11][1] = 250, parts[11][2] = 500;
	bins[12] = 5; /* 20 glyphs, thirds: 7 + 7 + 6 by largest remainder */
	parts[12][0] = 1, parts[12][1] = 1, parts[12][3] = 1;
	bins[13] = 1; /* no parts: '@' as before */
	xp_render_pow2_bars_parts(f, bins, (const uint64_t(*)[XP_BAR_PARTS])parts, "crSD", false);
	fclose(f);
	bar_of(text, "[1.02us,", bar, sizeof(bar));
	CHECK_EQ_U64(strlen(bar), 40);
	CHECK_STR(bar, "ccccccccccrrrrrrrrrrSSSSSSSSSSSSSSSSSSSS");
	bar_of(text, "[2.05us,", bar, sizeof(bar));
	CHECK_EQ_U64(count(bar, 'c') + count(bar, 'r') + count(bar, 'D'), 20);
	CHECK(count(bar, 'c') >= 6 && count(bar, 'c') <= 7 && count(bar, 'D') >= 6);
	CHECK_EQ_U64(count(bar, 'S'), 0);
	bar_of(text, "[4.10us,", bar, sizeof(bar));
	CHECK(bar[0] == '@');
	free(text);
}

int main(void)
{
	test_fmt_ns();
	test_bars_parts();
	TEST_MAIN_END();
}
