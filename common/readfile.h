/* SPDX-License-Identifier: Apache-2.0 */
/*
 * readfile.h - the one way the CLI reads a file it did not write: open
 * without blocking, check what the path is before reading a byte of it,
 * read it whole within a bound.  Shared code (common/), no library state.
 *
 * Why one helper: xprobe runs as root and reads paths that other users
 * can create (--input, --spec, the target's /tmp/perf-<pid>.map, files
 * of a session directory).  A plain open() of a FIFO without a writer
 * blocks forever; a symlink at a user-writable path points anywhere; a
 * sparse file claims gigabytes it costs nothing to make.  So:
 *
 *   - open is O_RDONLY|O_CLOEXEC|O_NONBLOCK (a FIFO or a device opens
 *     at once instead of waiting for a writer), plus O_NOFOLLOW with
 *     XPC_FILE_NOFOLLOW (a symlink at the last component is -ELOOP);
 *   - fstat of the descriptor just opened (never a second lookup of the
 *     path) decides: a regular file only, unless the caller passes
 *     XPC_FILE_DIR_OK (a directory is then returned open, for the caller
 *     to read as one) -- anything else is -XPC_EFTYPE with st_mode left
 *     for xpc_file_type_name();
 *   - the size is checked twice: st_size against the bound before the
 *     first read (a 5 GiB file is refused without reading it), and the
 *     bytes actually read while reading, because procfs and sysfs files
 *     report st_size 0 and any file can grow after fstat;
 *   - EINTR is retried here, once for the whole project (src/, common/).
 *
 * Reads on a regular file ignore O_NONBLOCK, so the flag costs nothing
 * once the type is known to be regular.
 */
#ifndef XPC_READFILE_H
#define XPC_READFILE_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* xpc_file_open() / xpc_read_file() flags */
#define XPC_FILE_NOFOLLOW 0x1u /* refuse a symlink at the last component (-ELOOP) */
#define XPC_FILE_DIR_OK 0x2u /* a directory is returned open, not refused */

/*
 * "Not a file of the type this caller reads" (a FIFO, a socket, a device,
 * a directory where none is allowed is -EISDIR instead).  Linux has no
 * errno for it (the BSDs call it EFTYPE); the value stays below the
 * XPROBE_E_* range (4000 and up) so it still reads as an errno-like code.
 */
#define XPC_EFTYPE 3900

/*
 * Open @path for reading as described above; @st receives the fstat.
 * Return: the descriptor (O_NONBLOCK set), or -errno: -ELOOP (a symlink
 * with XPC_FILE_NOFOLLOW), -EISDIR (a directory without XPC_FILE_DIR_OK),
 * -XPC_EFTYPE (anything else that is not a regular file).
 */
int xpc_file_open(const char *path, unsigned flags, struct stat *st);

/*
 * read() until @want bytes or end of file, retrying EINTR: the bytes read
 * (fewer than @want only at end of file), or -errno.
 */
ssize_t xpc_read_full(int fd, void *buf, size_t want);

/*
 * Read the rest of @fd (from its current offset) into a malloc'ed buffer
 * of *len bytes followed by a NUL and @pad more zero bytes (simdjson wants
 * readable padding after a document).  More than @max bytes is -EFBIG:
 * checked against fstat's st_size first when the file is regular and
 * reports one, and against the bytes read while reading.
 * Return: 0, -EFBIG, -ENOMEM, -errno.  *out is NULL on error.
 */
int xpc_read_fd(int fd, size_t max, size_t pad, char **out, size_t *len);

/*
 * xpc_file_open() + xpc_read_fd() + close: the whole of @path, at most
 * @max bytes, NUL-terminated.  @st (optional) receives the fstat.
 * Return: 0, or the negative codes of both (-EISDIR for a directory even
 * with XPC_FILE_DIR_OK: there is no content to read).
 */
int xpc_read_file(const char *path, unsigned flags, size_t max, char **out, size_t *len,
		  struct stat *st);

/* "regular file", "directory", "fifo", "socket", "character device",
 * "block device", "symlink" or "unknown file type", from st_mode. */
const char *xpc_file_type_name(mode_t mode);

/*
 * A short reason for an error code of this file: "not a regular file
 * (fifo)" for -XPC_EFTYPE (with @st_mode), "a symbolic link" for -ELOOP,
 * strerror() otherwise.  Returns @buf.
 */
const char *xpc_file_strerror(int rc, mode_t st_mode, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* XPC_READFILE_H */
