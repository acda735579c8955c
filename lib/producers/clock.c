/* SPDX-License-Identifier: Apache-2.0 */
/*
 * clock.c - is the TSC usable, and calibration points (clock.h).
 *
 * Usable means invariant: /proc/cpuinfo lists both constant_tsc (fixed
 * rate across P-states) and nonstop_tsc (keeps counting in deep C-states).
 * The kernel additionally checks cross-CPU synchronization before it picks
 * tsc as its clocksource; we do not repeat that: a skew between CPUs shows
 * up as an error of the same size in cross-thread ordering, and the kernel
 * marks a skewed TSC unstable (then current_clocksource is not tsc, which
 * we also require when the file is readable).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../internal.h"
#include "clock.h"

static bool has_flag(const char *flags_line, const char *flag)
{
	size_t n = strlen(flag);

	for (const char *p = strstr(flags_line, flag); p; p = strstr(p + 1, flag))
		if ((p == flags_line || p[-1] == ' ' || p[-1] == '\t') &&
		    (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

bool xpl_tsc_usable(void)
{
#if defined(__x86_64__)
	static char buf[16384]; /* the first CPU's block is enough */
	const char *env = secure_getenv("XPROBE_INSPECT_CLOCK");
	char cs[64];
	char *flags, *eol;
	bool ok;

	if (env && !strcmp(env, "monotonic"))
		return false;
	if (env && !strcmp(env, "tsc"))
		return true;
	if (!xpl_read_small("/proc/cpuinfo", buf, sizeof(buf)))
		return false;
	flags = strstr(buf, "\nflags");
	if (!flags)
		return false;
	eol = strchr(flags + 1, '\n');
	if (eol)
		*eol = '\0';
	ok = has_flag(flags, "constant_tsc") && has_flag(flags, "nonstop_tsc");
	if (ok && xpl_read_small("/sys/devices/system/clocksource/clocksource0/current_clocksource",
				 cs, sizeof(cs)))
		ok = !strncmp(cs, "tsc", 3);
	return ok;
#else
	return false;
#endif
}

void xpl_calib_now(struct xpl_calib *c, bool tsc)
{
	uint64_t best = UINT64_MAX;

	if (!tsc) {
		c->tsc = 0;
		c->ns = xpl_mono_ns();
		return;
	}
	for (int i = 0; i < 5; i++) {
		uint64_t t1 = xpl_rdtsc();
		uint64_t ns = xpl_mono_ns();
		uint64_t t2 = xpl_rdtsc();

		if (t2 - t1 < best) {
			best = t2 - t1;
			c->tsc = t1 + (t2 - t1) / 2;
			c->ns = ns;
		}
	}
}
