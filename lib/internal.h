/* SPDX-License-Identifier: Apache-2.0 */
/*
 * internal.h - what every libxprobe source file shares and nothing outside
 * lib/ may include: compiler helpers, the log and error-reporting helpers,
 * the OPTS_VALID / OPTS_GET pair of the sz-versioned options convention,
 * and the invariant macros (ALWAYS/NEVER, testcase).
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
#include <sys/types.h>

#include "xprobe/common.h"
#include "xprobe/error.h"
#include "xprobe/record.h"

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

/* --- options structs (per-call options are sz-versioned) ------------------ */

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
/* Open the directory @name in @dirfd (O_DIRECTORY; with @nofollow never
 * through a symbolic link: -ELOOP).  The descriptor or -errno.
 * Async-signal-safe. */
int xpl_openat_dir(int dirfd, const char *name, bool nofollow);
/*
 * mkdir -p with mode 0700 for the parts it creates, then the directory
 * opened (O_DIRECTORY) into *dirfd.  Components past the first
 * @follow_upto bytes of @path, and those it creates, are never followed
 * through a symbolic link (-ELOOP).  Return 0 or -errno; *failed_at
 * receives (if not NULL) the path up to the component that failed.
 */
int xpl_dir_open(const char *path, size_t follow_upto, int *dirfd, char *failed_at,
		 size_t failed_len);
/* The length of @path's parent part ("a/b/c" -> 3): pass it as
 * @follow_upto so @path's own last component is never a link. */
size_t xpl_parent_len(const char *path);
/* /proc/<pid>/stat field 22 (starttime, clock ticks since boot), 0 if unknown;
 * @pid 0 reads /proc/self (the process as it sees itself, any PID namespace). */
uint64_t xpl_process_start_time(int pid);
/* Bounded snprintf into a buffer: -XPROBE_E_TRUNCATED when cut. */
int xpl_snprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* write(2) all of it, retrying EINTR.  Async-signal-safe.  0 or -errno. */
int xpl_write_all(int fd, const void *p, size_t len);
/* read(2) until @len bytes or end of file, retrying EINTR: the bytes read,
 * or -errno. */
ssize_t xpl_read_full(int fd, void *p, size_t len);
/* A small file (/proc, /sys) into @buf, NUL-terminated: the bytes read, 0
 * when it cannot be opened or is empty. */
size_t xpl_read_small(const char *path, char *buf, size_t size);
/* The bytes of @s a record keeps: at most XPROBE_NAME_MAX, cut on a UTF-8
 * boundary (continuation bytes 10xxxxxx at the cut are given back);
 * *complete says whether all of it fits.  Inline: the recording paths use
 * it.  Async-signal-safe. */
static inline size_t xpl_name_cut(const char *s, bool *complete)
{
	size_t n = strnlen(s, XPROBE_NAME_MAX + 1);

	*complete = n <= XPROBE_NAME_MAX;
	if (*complete)
		return n;
	n = XPROBE_NAME_MAX;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}
/* The English description of an error code of either sign ("No space left
 * on device"; XPROBE_E_* codes by name; ELOOP and EEXIST as what the
 * writer refuses, a link or a non-regular file in the way).  Unlike
 * strerror it neither translates nor allocates: async-signal-safe. */
const char *xpl_errdesc(int err);
/*
 * The readers' and the device backend's one error formatter: write the
 * sentence into @why (when @why and @whylen are set) and return @code, so
 * a failure reads `return xpl_errf(why, whylen, -EIO, "what was wrong")`.
 * lib/xtf's xpl_xtf_reject() is this with -XPROBE_E_FORMAT.
 */
int xpl_errf(char *why, size_t whylen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* "directory", "FIFO", "symbolic link" ...: what a refused st_mode is. */
const char *xpl_file_type_name(mode_t m);
/*
 * rename(2) the finished temporary @tmp onto @name in @dirfd: created
 * with RENAME_NOREPLACE where nothing is there; a regular file there is
 * replaced, anything else refused (-ELOOP for a link, -EEXIST).  0 or
 * -errno.  Async-signal-safe (syscalls only): the crash-time writers use it.
 */
int xpl_rename_regular(int dirfd, const char *tmp, const char *name);
/*
 * What a long-lived descriptor of libxprobe is (fstat's device and inode,
 * taken when it is opened).  The program may close every descriptor (a
 * daemon does) and reuse the numbers for files, sockets or directories of
 * its own; before a long-lived descriptor is written through, read from,
 * polled or closed, xpl_fd_same() says whether the number still holds it.
 * A number that does not is the program's: never used, never closed.
 * All three are async-signal-safe (fstat, close).
 */
struct xpl_fdid {
	dev_t dev;
	ino_t ino;
};
void xpl_fdid_take(int fd, struct xpl_fdid *id);
bool xpl_fd_same(int fd, const struct xpl_fdid *id);
/* close(@fd) only while xpl_fd_same(). */
void xpl_close_same(int fd, const struct xpl_fdid *id);
/* A model name: 1..127 bytes, no '/'. */
bool xpl_model_name(const char *s);
/* A plain file name: a model name that is not "." or "..". */
bool xpl_plain_name(const char *s);

#endif /* XPL_INTERNAL_H */
