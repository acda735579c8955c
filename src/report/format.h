/* SPDX-License-Identifier: Apache-2.0 */
/*
 * format.h - how the terminal views write a duration: one format every
 * renderer of an inventory, a histogram or an aggregate shares, so a
 * latency reads the same wherever it is printed.
 */
#ifndef XP_REPORT_FORMAT_H
#define XP_REPORT_FORMAT_H

#include <stddef.h>

/* @ns in readable units, three significant digits: "512ns", "1.02us",
 * "262us", "4.19ms", "1.50s". */
void xp_report_fmt_ns(char *buf, size_t size, double ns);

#endif /* XP_REPORT_FORMAT_H */
