/* SPDX-License-Identifier: Apache-2.0 */
/*
 * internal.h - what every libxprobe source file shares and nothing outside
 * lib/ may include: compiler helpers, the log and error-reporting helpers,
 * the OPTS_VALID / OPTS_GET pair of the sz-versioned options convention,
 * and the invariant macros of STYLE.md (ALWAYS/NEVER, testcase).
 *
 * Internal names carry the xpl_ prefix; only xprobe_* symbols leave the
 * shared object (lib/libxprobe.map).
 */
#ifndef XPL_INTERNAL_H
#define XPL_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "xprobe/common.h"
#include "xprobe/error.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define barrier() __asm__ __volatile__("" ::: "memory")
#define XPL_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define XPL_ALIGN8(n) (((n) + 7u) & ~(size_t)7u)
#define XPL_HIDDEN __attribute__((visibility("hidden")))

/*
 * ALWAYS(x)/NEVER(x) wrap defensive checks of states that cannot happen:
 * in debug builds (XPL_DEBUG) they assert, in release builds the check is
 * kept and handled.  testcase(x) marks a boundary that tests must reach
 * (documentation only; coverage tools see the branch).
 */
#ifdef XPL_DEBUG
#include <assert.h>
#define ALWAYS(x) (assert(x), 1)
#define NEVER(x) (assert(!(x)), 0)
#else
#define ALWAYS(x) (x)
#define NEVER(x) (x)
#endif
#define testcase(x) ((void)(x))

/* --- log (core/log.c) ----------------------------------------------------- */

void xpl_log(enum xprobe_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define pr_warn(...) xpl_log(XPROBE_LOG_WARN, __VA_ARGS__)
#define pr_info(...) xpl_log(XPROBE_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) xpl_log(XPROBE_LOG_DEBUG, __VA_ARGS__)
/* Async-signal-safe variant: no formatting beyond %s/%d/%u/%lu (xpl_sfmt). */
void xpl_log_signal_safe(enum xprobe_log_level level, const char *msg);

/*
 * xpl_fail() - record why the current call fails (xprobe_last_error), log it
 * at DEBUG, set errno and return @err (a negative code), so API functions
 * end with `return xpl_fail(-XPROBE_E_..., "what was wrong")`.
 */
int xpl_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Forget the last error text of this thread (called at the top of the
 * lifecycle API calls, so xprobe_last_error() speaks of the latest call). */
void xpl_clear_error(void);

/* Minimal async-signal-safe formatter: %s %d %u %lu %llu %x only. */
size_t xpl_sfmt(char *buf, size_t size, const char *fmt, ...);

/* --- options structs (STYLE.md "per-call options are sz-versioned") ------- */

#define offsetofend(TYPE, FIELD) (offsetof(TYPE, FIELD) + sizeof(((TYPE *)0)->FIELD))

/* True when @opts is NULL or a valid @type: sz >= sizeof(size_t) and every
 * byte past the last field this build knows is zero. */
bool xpl_opts_valid(const void *opts, size_t known_size);
#define OPTS_VALID(opts, type) xpl_opts_valid((opts), offsetofend(struct type, type##__last_field))
#define OPTS_HAS(opts, field) ((opts) && (opts)->sz >= offsetofend(__typeof__(*(opts)), field))
#define OPTS_GET(opts, field, fallback) (OPTS_HAS(opts, field) ? (opts)->field : (fallback))

/* --- small utilities (core/util.c) ----------------------------------------- */

uint64_t xpl_now_mono_ns(void);
uint64_t xpl_now_real_ns(void);
/* mkdir -p with mode 0700 for the parts it creates.  Return 0 or -errno;
 * *failed_at receives (if not NULL) the component that failed. */
int xpl_mkdir_p(const char *path, char *failed_at, size_t failed_len);
/* /proc/self/stat field 22 (starttime, clock ticks since boot), 0 if unknown. */
uint64_t xpl_process_start_time(int pid);
/* Bounded snprintf into a buffer: -XPROBE_E_TRUNCATED when cut. */
int xpl_snprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* write(2) all of it, retrying EINTR.  Async-signal-safe.  0 or -errno. */
int xpl_write_all(int fd, const void *p, size_t len);
/* Copy at most XPROBE_NAME_MAX bytes of @s (cut on a UTF-8 boundary) into
 * @dst; returns the length kept and sets *complete. */
size_t xpl_name_copy(char *dst, const char *s, bool *complete);
/* A plain file name: 1..127 bytes, no '/', not "." or "..". */
bool xpl_plain_name(const char *s);

#endif /* XPL_INTERNAL_H */
