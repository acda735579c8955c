/* SPDX-License-Identifier: Apache-2.0 */
/*
 * util.c - small helpers of libxprobe with no state: clocks, mkdir -p,
 * /proc/<pid>/stat start time, bounded formatting, full reads and writes,
 * and the name rules of models and file names.
 *
 * xpl_write_all and xpl_errdesc are async-signal-safe (the fatal-signal
 * stop path uses them); the others allocate nothing but may block on the file system.
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

/*
 * mkdir -p: create each missing component with mode 0700 (session data may
 * be sensitive).  An existing component must be a directory.
 */
int xpl_mkdir_p(const char *path, char *failed_at, size_t failed_len)
{
	char buf[4096];
	size_t len = strlen(path);
	struct stat st;

	if (len == 0 || len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		if (buf[i - 1] == '/')
			continue; /* "a//b" */
		buf[i] = '\0';
		if (mkdir(buf, 0700) != 0) {
			int e = errno;

			if (e != EEXIST || stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
				if (failed_at)
					snprintf(failed_at, failed_len, "%s", buf);
				return e == EEXIST ? -ENOTDIR : -e;
			}
		}
		if (i < len)
			buf[i] = '/';
	}
	return 0;
}

uint64_t xpl_process_start_time(int pid)
{
	char path[64], buf[1024];
	const char *p;
	uint64_t v = 0;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
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
