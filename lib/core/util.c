/* SPDX-License-Identifier: Apache-2.0 */
/*
 * util.c - small helpers of libxprobe with no state: clocks, the mkdir -p
 * walk that never follows a link where it writes, /proc/<pid>/stat start
 * time, bounded formatting, full reads and writes, error descriptions and
 * the one error formatter, file type names, the rename that replaces only
 * a regular file, and the name rules of models and file names.
 *
 * xpl_write_all, xpl_errdesc and xpl_rename_regular are async-signal-safe
 * (the fatal-signal stop path uses them); the others allocate nothing but
 * may block on the file system.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "xprobe/record.h"

uint64_t xpl_now_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t xpl_now_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int xpl_snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	return (size_t)n >= size ? -XPROBE_E_TRUNCATED : n;
}

int xpl_openat_dir(int dirfd, const char *name, bool nofollow)
{
	struct stat st;
	int fd = openat(dirfd, name,
			O_RDONLY | O_DIRECTORY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));

	if (fd >= 0)
		return fd;
	/* O_DIRECTORY answers ENOTDIR for a link too: say which it was */
	if (errno == ENOTDIR && nofollow && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		return -ELOOP;
	return -errno;
}

/*
 * mkdir -p that hands back the directory opened, walking with mkdirat and
 * openat so no component is resolved twice.  Components are created with
 * mode 0700 (session data may be sensitive).  Every component that ends
 * past @follow_upto bytes of @path, and every component this call creates,
 * is opened with O_NOFOLLOW: a symbolic link there (planted in a shared
 * directory to redirect a privileged writer) is refused with -ELOOP, never
 * followed.  Components within the first @follow_upto bytes are the
 * caller's own ancestors and are resolved as usual (/var/run -> /run).
 * An existing component that is not a directory is -ENOTDIR.
 */
int xpl_dir_open(const char *path, size_t follow_upto, int *dirfd, char *failed_at,
		 size_t failed_len)
{
	char buf[4096];
	size_t len = strlen(path), i = 0;
	int fd, err = 0;

	*dirfd = -1;
	if (len == 0 || len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	fd = open(path[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (i < len) {
		size_t start, end;
		bool created, nofollow;
		int nfd = -1;

		while (i < len && buf[i] == '/')
			i++;
		if (i == len)
			break;
		start = i;
		while (i < len && buf[i] != '/')
			i++;
		end = i;
		buf[end] = '\0';
		created = mkdirat(fd, buf + start, 0700) == 0;
		if (!created && errno != EEXIST) {
			err = -errno;
		} else {
			nofollow = created || end > follow_upto;
			nfd = xpl_openat_dir(fd, buf + start, nofollow);
			if (nfd < 0)
				err = nfd;
		}
		if (err) {
			if (failed_at)
				snprintf(failed_at, failed_len, "%s", buf);
			close(fd);
			return err;
		}
		close(fd);
		fd = nfd;
		buf[end] = '/';
	}
	*dirfd = fd;
	return 0;
}

/* The length of @path's parent part: what xpl_dir_open may follow when
 * @path itself must not be a link ("a/b/c/" -> 3, "c" -> 0, "/c" -> 1). */
size_t xpl_parent_len(const char *path)
{
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	while (n > 0 && path[n - 1] != '/')
		n--;
	while (n > 1 && path[n - 1] == '/')
		n--;
	return n;
}

uint64_t xpl_process_start_time(int pid)
{
	char path[64], buf[1024];
	const char *p;
	uint64_t v = 0;
	int field;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	if (!xpl_read_small(path, buf, sizeof(buf)))
		return 0;
	/* comm may hold spaces and parens: fields restart after the last ')' */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* after ')' comes field 3 (state); starttime is field 22 */
	for (field = 2; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

ssize_t xpl_read_full(int fd, void *p, size_t len)
{
	char *c = p;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, c + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

size_t xpl_read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (!size)
		return 0;
	buf[0] = '\0';
	if (fd < 0)
		return 0;
	n = xpl_read_full(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (size_t)n;
}

int xpl_write_all(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len) {
		ssize_t n = write(fd, c, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

const char *xpl_errdesc(int err)
{
	const char *d;

	if (err < 0)
		err = -err;
	/* libxprobe's own ELOOP and EEXIST: what its writer refuses */
	if (err == ELOOP)
		return "a symbolic link is in the way (libxprobe never follows one where it "
		       "writes)";
	if (err == EEXIST)
		return "something that is not a regular file is in the way";
	d = strerrordesc_np(err);
	if (d)
		return d;
	d = xprobe_errname(-err);
	return d ? d : "unknown error";
}

bool xpl_model_name(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strnlen(s, 128);
	return n > 0 && n <= 127 && !strchr(s, '/');
}

bool xpl_plain_name(const char *s)
{
	return xpl_model_name(s) && strcmp(s, ".") && strcmp(s, "..");
}

int xpl_errf(char *why, size_t whylen, int code, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return code;
}

const char *xpl_file_type_name(mode_t m)
{
	return S_ISLNK(m)  ? "symbolic link" :
	       S_ISDIR(m)  ? "directory" :
	       S_ISFIFO(m) ? "FIFO" :
	       S_ISSOCK(m) ? "socket" :
	       S_ISCHR(m)  ? "character device" :
	       S_ISBLK(m)  ? "block device" :
			     "non-regular file";
}

int xpl_rename_regular(int dirfd, const char *tmp, const char *name)
{
	struct stat st;

	if (renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EEXIST && errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* taken (or no RENAME_NOREPLACE here): only a regular file is replaced */
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			return -ELOOP;
		if (!S_ISREG(st.st_mode))
			return -EEXIST;
	} else if (errno != ENOENT) {
		return -errno;
	}
	return renameat(dirfd, tmp, dirfd, name) == 0 ? 0 : -errno;
}

void xpl_fdid_take(int fd, struct xpl_fdid *id)
{
	struct stat st;

	memset(id, 0, sizeof(*id));
	if (fd >= 0 && fstat(fd, &st) == 0) {
		id->dev = st.st_dev;
		id->ino = st.st_ino;
	}
}

bool xpl_fd_same(int fd, const struct xpl_fdid *id)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == id->dev && st.st_ino == id->ino;
}

void xpl_close_same(int fd, const struct xpl_fdid *id)
{
	if (xpl_fd_same(fd, id))
		close(fd);
}
