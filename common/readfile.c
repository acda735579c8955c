/* SPDX-License-Identifier: Apache-2.0 */
/*
 * readfile.c - non-blocking open, type and size checks, bounded whole-file
 * reads; see readfile.h for the rules and why they are in one place.
 *
 * Invariant of xpc_read_fd: the buffer always has room for the bytes read,
 * one NUL and @pad bytes; it never grows beyond max + 1 + pad (the one byte
 * over @max is how "exactly max" is told from "more than max").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readfile.h"

/* first allocation when the size is not known (procfs, sysfs) */
#define XPC_READ_FIRST 4096u

int xpc_file_open(const char *path, unsigned flags, struct stat *st)
{
	int oflags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
	int fd;

	if (!path || !st)
		return -EINVAL;
	if (flags & XPC_FILE_NOFOLLOW)
		oflags |= O_NOFOLLOW;
	fd = open(path, oflags);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	if (S_ISREG(st->st_mode) || (S_ISDIR(st->st_mode) && (flags & XPC_FILE_DIR_OK)))
		return fd;
	close(fd);
	return S_ISDIR(st->st_mode) ? -EISDIR : -XPC_EFTYPE;
}

ssize_t xpc_read_full(int fd, void *buf, size_t want)
{
	char *p = buf;
	size_t got = 0;

	while (got < want) {
		ssize_t r = read(fd, p + got, want - got);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int xpc_read_fd(int fd, size_t max, size_t pad, char **out, size_t *len)
{
	size_t cap, n = 0, limit;
	struct stat st;
	char *buf;

	*out = NULL;
	if (len)
		*len = 0;
	if (max > SIZE_MAX - 2 - pad)
		return -EINVAL;
	limit = max + 1; /* content bytes the buffer may ever hold */
	cap = XPC_READ_FIRST;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		off_t pos = lseek(fd, 0, SEEK_CUR);
		uint64_t size = (uint64_t)st.st_size, at = pos > 0 ? (uint64_t)pos : 0;
		uint64_t left = at < size ? size - at : 0;

		if (left > max)
			return -EFBIG;
		cap = (size_t)left + 1; /* + 1: end of file is seen without a realloc */
	}
	if (cap > limit)
		cap = limit;
	buf = malloc(cap + 1 + pad);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (n == cap) {
			size_t ncap;
			char *nb;

			if (cap >= limit)
				break;
			ncap = cap > limit / 2 ? limit : cap * 2;
			nb = realloc(buf, ncap + 1 + pad);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap = ncap;
		}
		r = xpc_read_full(fd, buf + n, cap - n);
		if (r < 0) {
			free(buf);
			return (int)r;
		}
		n += (size_t)r;
		if (n < cap)
			break; /* end of file */
	}
	if (n > max) {
		free(buf);
		return -EFBIG;
	}
	memset(buf + n, 0, 1 + pad);
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

int xpc_read_file(const char *path, unsigned flags, size_t max, char **out, size_t *len,
		  struct stat *st)
{
	struct stat local;
	int fd, rc;

	*out = NULL;
	if (len)
		*len = 0;
	if (!st)
		st = &local;
	fd = xpc_file_open(path, flags & ~XPC_FILE_DIR_OK, st);
	if (fd < 0)
		return fd;
	rc = xpc_read_fd(fd, max, 0, out, len);
	close(fd);
	return rc;
}

const char *xpc_file_type_name(mode_t mode)
{
	if (S_ISREG(mode))
		return "regular file";
	if (S_ISDIR(mode))
		return "directory";
	if (S_ISFIFO(mode))
		return "fifo";
	if (S_ISSOCK(mode))
		return "socket";
	if (S_ISCHR(mode))
		return "character device";
	if (S_ISBLK(mode))
		return "block device";
	if (S_ISLNK(mode))
		return "symlink";
	return "unknown file type";
}

const char *xpc_file_strerror(int rc, mode_t st_mode, char *buf, size_t size)
{
	if (rc == -XPC_EFTYPE)
		snprintf(buf, size, "not a regular file (%s)", xpc_file_type_name(st_mode));
	else if (rc == -ELOOP)
		snprintf(buf, size, "the last path component is a symbolic link");
	else
		snprintf(buf, size, "%s", strerror(rc < 0 ? -rc : rc));
	return buf;
}
