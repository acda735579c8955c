/* SPDX-License-Identifier: Apache-2.0 */
/*
 * util.c - small helpers of libxprobe with no state: clocks, mkdir -p,
 * /proc/<pid>/stat start time, bounded formatting, write-all, and the
 * bounded name copy every named record uses.
 *
 * xpl_write_all and xpl_name_copy are async-signal-safe (the fatal-signal
 * stop path and the recording hot path use them); the others allocate
 * nothing but may block on the file system.
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
	ssize_t n;
	uint64_t v = 0;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
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

/*
 * Copy a name into a record: at most XPROBE_NAME_MAX bytes; a cut never
 * splits a UTF-8 sequence (continuation bytes 10xxxxxx at the cut are given
 * back).  Hot path: one bounded scan and one memcpy.
 */
size_t xpl_name_copy(char *dst, const char *s, bool *complete)
{
	size_t n = strnlen(s, XPROBE_NAME_MAX + 1);

	if (n <= XPROBE_NAME_MAX) {
		*complete = true;
	} else {
		n = XPROBE_NAME_MAX;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
		*complete = false;
	}
	memcpy(dst, s, n);
	return n;
}

bool xpl_plain_name(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strnlen(s, 128);
	if (n == 0 || n > 127)
		return false;
	if (!strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	return strchr(s, '/') == NULL;
}
