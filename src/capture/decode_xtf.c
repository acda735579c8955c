/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decode_xtf.c - libxprobe sessions as completed captures: an .xtf file or
 * a session directory (<base>/<instance-id>-<pid>/<start-ns>) into events,
 * for `measure --input`.  Reading and validating the files is libxprobe's
 * public reader (include/xprobe/xtf.h, the xtf_reader library); this file
 * only maps records to the event model (docs/xtf-format.md, "Events").
 *
 * The record -> event mapping is record_events.c's, shared with the
 * Agent's socket (decode_agent.c).  A file's process range starts are
 * collected before its streams are mapped (starts_first), since the ending
 * thread's stream may come before the starting one's.  cpu_util.pb and
 * host_mem.pb hold samples, not boundaries: not decoded.
 *
 * Drops the session counted (rings full, threads without a ring, device
 * captures over their bound) go to the capture's `dropped`, so the
 * correlator refuses to measure a lossy session instead of reporting a
 * partial result.  Bounds: events beyond max_events are counted, not kept,
 * and the input fails with EVENT_RATE_TOO_HIGH naming the total.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/readfile.h"
#include "../../common/cancel.h"
#include "capture_io.h"
#include "decode_json.h"
#include "record_events.h"
#include "xprobe/xtf.h"

struct dec {
	struct xp_capture *c;
	const char *path;
	const char *file; /* file inside a session, for messages */
	uint32_t pid;
	struct xp_rec_map map; /* the mapping's state and counts */
	struct xp_error *err;
};

static int dec_error(struct dec *d, const char *fmt, const char *what)
{
	xp_error_detail_str(d->err, "path", d->path);
	if (d->file)
		xp_error_detail_str(d->err, "file", d->file);
	return xp_error_set(d->err, XPROBE_E_TRACE_EXPORT_FAILED, false, fmt, d->path, what);
}

static int map_fail(void *ctx, const char *what)
{
	return dec_error(ctx, "failed to decode %s: %s", what);
}

/*
 * First pass over a host file: every process range start, so that an end
 * recorded by another thread (whose stream may come first) finds its name.
 */
static int collect_starts(struct dec *d, const struct xprobe_xtf *x, size_t nstreams)
{
	for (size_t i = 0; i < nstreams; i++) {
		struct xprobe_xtf_stream s;
		const struct xprobe_record *r;
		size_t cur = 0;
		int rc;

		xprobe_xtf_get_stream(x, i, &s);
		while ((r = xprobe_xtf_next_record(&s, &cur))) {
			if (r->type != XPROBE_EV_NVTX_START)
				continue;
			rc = xp_rec_map_proc_start(&d->map, r);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Map one opened file's records. */
static int decode_file(struct dec *d, const struct xprobe_xtf *x)
{
	struct xprobe_xtf_info in;

	memset(&in, 0, sizeof(in));
	in.sz = sizeof(in);
	if (xprobe_xtf_get_info(x, &in))
		return dec_error(d, "failed to decode %s: %s", "unreadable file information");
	if (d->pid && in.pid != d->pid)
		return dec_error(d, "failed to decode %s: %s",
				 "files of more than one process in one session");
	d->pid = in.pid;
	d->map.pid = in.pid;
	d->map.start_time = in.process_start_time;
	d->map.backend = in.backend;
	d->map.simulated = in.simulated;
	if (in.kind == XPROBE_XTF_TRACE_INFO) {
		d->c->dropped += in.host_dropped;
		return 0;
	}
	if (in.kind != XPROBE_XTF_NTRACE && in.kind != XPROBE_XTF_DEVICE_PROFILE)
		return 0; /* samples */
	/* a recovered ring file has no trace_info: its stream drops count */
	if (in.kind == XPROBE_XTF_DEVICE_PROFILE || (in.flags & XPROBE_XTF_F_RECOVERED))
		d->c->dropped += in.dropped;
	if (in.kind == XPROBE_XTF_NTRACE) {
		int rc;

		xp_rec_map_proc_reset(&d->map);
		rc = collect_starts(d, x, in.streams);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < in.streams; i++) {
		struct xprobe_xtf_stream s;
		const struct xprobe_record *r;
		size_t cur = 0;
		int rc;

		if (xprobe_xtf_get_stream(x, i, &s))
			return dec_error(d, "failed to decode %s: %s", "unreadable stream");
		while ((r = xprobe_xtf_next_record(&s, &cur))) {
			if (!(d->map.observed % XPC_CANCEL_EVERY) && xpc_cancel_signo())
				return xp_error_cancelled(d->err, d->path);
			rc = in.kind == XPROBE_XTF_NTRACE ? xp_rec_map_host(&d->map, r) :
							      xp_rec_map_device(&d->map, r);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/*
 * The CLI's side of reading a session directory: before the reader opens
 * anything by name, every entry of the directory and of its on_fail/ must
 * be a regular file within XP_INPUT_MAX_BYTES (lstat: a symlink is refused
 * too) or a directory.  A FIFO there would block the reader's open() for
 * ever; a 5 GiB sparse file would be read into memory whole.  libxprobe
 * writes only regular files and on_fail/ into a session.  Another user who
 * can write into the directory can still swap a file between this check
 * and the reader's open (the reader's own checks are libxprobe's).
 */
static int session_dir_check(int dfd, const char *sub, struct dec *d)
{
	struct dirent *de;
	char name[300];
	DIR *dir;
	int fd, rc = 0;

	fd = sub ? openat(dfd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK) :
		   dup(dfd);
	if (fd < 0)
		return sub && errno == ENOENT ? 0 : -errno;
	dir = fdopendir(fd);
	if (!dir) {
		rc = -errno;
		close(fd);
		return rc;
	}
	while (!rc && (errno = 0, de = readdir(dir))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(name, sizeof(name), "%s%s%s", sub ? sub : "", sub ? "/" : "", de->d_name);
		if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT) /* removed meanwhile: the reader will say */
				continue;
			rc = -errno;
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			if (!sub && !strcmp(de->d_name, "on_fail"))
				rc = session_dir_check(dirfd(dir), "on_fail", d);
			continue;
		}
		if (!S_ISREG(st.st_mode)) {
			const char *type = xpc_file_type_name(st.st_mode);

			xp_error_detail_str(d->err, "file_type", type);
			xp_error_hint(d->err, "a libxprobe session directory holds regular files and "
					      "on_fail/ only; remove %s or pass its .xtf files one by one",
				      name);
			xp_error_detail_str(d->err, "path", d->path);
			xp_error_detail_str(d->err, "file", name);
			rc = xp_error_set(d->err, XPROBE_E_TRACE_EXPORT_FAILED, false,
					  "failed to read %s: %s is a %s, not a regular file", d->path,
					  name, type);
			break;
		}
		if ((uint64_t)st.st_size > XP_INPUT_MAX_BYTES) {
			char what[340];

			snprintf(what, sizeof(what), "session file %s", name);
			xp_error_detail_str(d->err, "file", name);
			rc = xp_input_too_large(d->err, d->path, what, (uint64_t)st.st_size);
			break;
		}
	}
	if (!rc && errno)
		rc = -errno;
	closedir(dir);
	return rc;
}

/* One .xtf file at @fd: read here (bounded), validated in memory. */
static int decode_one_file(struct dec *d, int fd, const struct stat *sb)
{
	struct xprobe_xtf *x = NULL;
	char why[512];
	size_t len;
	char *buf;
	int rc;

	if ((uint64_t)sb->st_size > XP_INPUT_MAX_BYTES)
		return xp_input_too_large(d->err, d->path, "the .xtf file", (uint64_t)sb->st_size);
	if (lseek(fd, 0, SEEK_SET) < 0)
		return dec_error(d, "failed to read %s: %s", strerror(errno));
	rc = xpc_read_fd(fd, XP_INPUT_MAX_BYTES, 0, &buf, &len);
	if (rc == -EFBIG)
		return xp_input_too_large(d->err, d->path, "the .xtf file", 0);
	if (rc)
		return dec_error(d, "failed to read %s: %s", strerror(-rc));
	why[0] = '\0';
	rc = xprobe_xtf_open_mem(buf, len, &x, why, sizeof(why));
	free(buf);
	if (rc) {
		xp_error_hint(d->err, "inputs are Event JSONL, host-capture JSON, .xtf files or "
				      "libxprobe session directories; see docs/inputs.md");
		return dec_error(d, "failed to decode %s: %s",
				 why[0] ? why : strerror(rc < 0 && -rc < 4000 ? -rc : EIO));
	}
	rc = decode_file(d, x);
	xprobe_xtf_close(x);
	return rc;
}

int xp_decode_xtf_fd(int fd, const struct stat *sb, const char *path, struct xp_capture *c,
		     struct xp_error *err)
{
	struct dec d;
	char why[512];
	size_t before = c->count;
	int rc = 0;

	memset(&d, 0, sizeof(d));
	d.c = c;
	d.path = path;
	d.err = err;
	xp_rec_map_init(&d.map, c, 0, 0, map_fail, &d);
	d.map.starts_first = true;
	if (S_ISDIR(sb->st_mode)) {
		struct xprobe_session *s = NULL;

		rc = session_dir_check(fd, NULL, &d);
		if (rc && !err->code)
			rc = dec_error(&d, "failed to read %s: %s", strerror(-rc));
		if (rc)
			return rc;
		why[0] = '\0';
		rc = xprobe_session_open(path, &s, why, sizeof(why));
		if (rc) {
			if (strstr(why, "not a libxprobe session"))
				xp_error_hint(err, "pass a session directory "
						   "<base>/<instance-id>-<pid>/<session-start-ns> "
						   "or one of its .xtf files");
			return dec_error(&d, "failed to decode %s: %s",
					 why[0] ? why : strerror(rc < 0 && -rc < 4000 ? -rc : EIO));
		}
		if (xprobe_session_recovered(s))
			xp_error_detail_bool(err, "recovered", true);
		for (size_t i = 0; !rc && i < xprobe_session_file_count(s); i++) {
			const char *name;
			const struct xprobe_xtf *x = xprobe_session_get_file(s, i, &name);

			d.file = name;
			rc = decode_file(&d, x);
		}
		xprobe_session_close(s);
	} else {
		rc = decode_one_file(&d, fd, sb);
	}
	xp_rec_map_free(&d.map);
	if (!rc && d.map.full)
		rc = xp_error_event_limit(err, path, before + d.map.observed, c->max_events);
	return rc;
}
