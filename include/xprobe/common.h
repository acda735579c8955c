/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common.h - what every libxprobe header shares: the export macro, the
 * sz-versioned options convention (XPROBE_OPTS), the leveled log callback
 * and the per-thread detail text of the last error.
 *
 * Conventions of the whole API (docs/libxprobe.md):
 *   - int functions return 0 (or a count) on success and a negative code on
 *     failure: -errno or -XPROBE_E_* (include/xprobe/error.h); errno is set
 *     to the positive code as well.  xprobe_strerror() describes either.
 *   - A failing call also leaves a sentence saying exactly what was wrong in
 *     xprobe_last_error() (per thread, like curl's error buffer).
 *   - The library never prints on user error, never exits or aborts; it
 *     reports through return codes and the log callback.
 *   - Per-call options are structs whose first member is `size_t sz`,
 *     declared with XPROBE_OPTS(); NULL means every default.  A struct
 *     from a newer caller with non-zero bytes past what this library knows
 *     is refused with -XPROBE_E_INVALID_ARGUMENT.
 */
#ifndef XPROBE_COMMON_H
#define XPROBE_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* XPROBE_API (the exported symbols' visibility) comes with error.h. */

/* Version of the library (and of docs/libxprobe.md). */
#define XPROBE_VERSION_MAJOR 0
#define XPROBE_VERSION_MINOR 1
#define XPROBE_VERSION_PATCH 0

/*
 * XPROBE_OPTS(type, name, .field = value, ...) declares a zeroed options
 * struct with sz set (after libbpf's LIBBPF_OPTS): padding included, every
 * field not named is 0, which is its documented default.
 */
#define XPROBE_OPTS(TYPE, NAME, ...)                                     \
	struct TYPE NAME = ({                                            \
		memset(&NAME, 0, sizeof(struct TYPE));                   \
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ }; \
	})

enum xprobe_log_level {
	XPROBE_LOG_NONE = 0, /* only as a threshold: nothing */
	XPROBE_LOG_WARN = 1, /* something the user should know: a file not written, a drop */
	XPROBE_LOG_INFO = 2, /* lifecycle: session begun, stopped, where the files went */
	XPROBE_LOG_DEBUG = 3, /* every refused call, with its reason */
};

/*
 * Log callback.  @level is the message's level, @msg one line without a
 * trailing newline.  Called from the thread that logs; may be called from
 * the fatal-signal stop path, where only async-signal-safe work is allowed.
 */
typedef void (*xprobe_log_fn)(enum xprobe_log_level level, const char *msg, void *ctx);

/**
 * xprobe_set_log_fn() - route library messages to @fn.
 * @fn: the callback, or NULL to silence the library.
 * @ctx: passed back to @fn.
 *
 * The default callback writes "libxprobe: <level>: <msg>" to stderr with
 * write(2), for messages at or below the threshold (xprobe_set_log_level;
 * default WARN, or XPROBE_LOG_LEVEL=none|warn|info|debug at load).
 *
 * Return: the previous callback (NULL if the library was silenced).
 */
XPROBE_API xprobe_log_fn xprobe_set_log_fn(xprobe_log_fn fn, void *ctx);

/**
 * xprobe_set_log_level() - set the threshold above which messages are not
 * delivered (to any callback).
 * @level: XPROBE_LOG_NONE .. XPROBE_LOG_DEBUG.
 *
 * Return: 0, or -XPROBE_E_INVALID_ARGUMENT for a value outside the enum.
 */
XPROBE_API int xprobe_set_log_level(int level);

/**
 * xprobe_last_error() - what the last failing libxprobe call of this thread
 * said, in words ("output dir '/dev/null' is the null device ...").
 *
 * Return: a thread-local string, "" when no call of this thread has failed.
 * Valid until the next libxprobe call of the same thread.
 */
XPROBE_API const char *xprobe_last_error(void);

/**
 * xprobe_version() - the library version as "MAJOR.MINOR.PATCH".
 *
 * Return: a static string.
 */
XPROBE_API const char *xprobe_version(void);

#ifdef __cplusplus
}
#endif
#endif /* XPROBE_COMMON_H */
