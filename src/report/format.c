/* SPDX-License-Identifier: Apache-2.0 */
/*
 * format.c - the terminal's duration format (format.h).
 */
#include <stdio.h>

#include "format.h"

void xp_report_fmt_ns(char *buf, size_t size, double ns)
{
	static const struct {
		double div;
		const char *unit;
	} units[] = { { 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" } };
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double v = ns / units[i].div;

		if (ns < units[i].div)
			continue;
		if (v >= 100.0)
			snprintf(buf, size, "%.0f%s", v, units[i].unit);
		else if (v >= 10.0)
			snprintf(buf, size, "%.1f%s", v, units[i].unit);
		else
			snprintf(buf, size, "%.2f%s", v, units[i].unit);
		return;
	}
	snprintf(buf, size, "%.0fns", ns);
}
