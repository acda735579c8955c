/* SPDX-License-Identifier: Apache-2.0 */
/*
 * input.c - completed-capture inputs (`measure --input`): which decoder a
 * file needs (xp_input_load) and how several inputs become one capture
 * (xp_inputs_load).  The decoders themselves are in decode_json.cc; this
 * file owns only detection, file handling and the multi-input bound.
 *
 * Detection is by content, never by name (docs/inputs.md):
 *   - the 8 bytes "XPCUPTI\0": a CUPTI Agent ABI capture, which this build
 *     does not read (an explicit error rather than "unrecognized");
 *   - the 8 bytes "XPAGCAP\0": a saved Agent capture (XPROBE_AGENT_OUTPUT,
 *     include/xprobe/agent.h), read whole by decode_agent.c's
 *     xp_capture_agent_dec_file, the decoder of the control socket;
 *   - first non-whitespace byte '{': JSON.  The top-level keys of the first
 *     document decide: a key only a HostCaptureResult has ("events", "ok",
 *     "target", ...) makes the file one host-capture document; the keys of
 *     a Chrome Trace Event export get their own error; anything else is an
 *     Event stream (whose decoder rejects a host capture met later);
 *   - only whitespace, or nothing: "capture is empty";
 *   - a directory, or a file starting with the .xtf magic: a libxprobe
 *     session or trace file, read by decode_xtf.c (xp_decode_xtf_fd);
 *   - anything else: "unrecognized capture format" with the first bytes
 *     in hex.
 *
 * Several inputs are decoded one after the other straight into the
 * destination capture; the decoders check every event's pid (and process
 * start time) against the capture's, so mixing targets across inputs is
 * the same error as within one.  Decoding in place rather than into a
 * temporary capture merged afterwards keeps peak memory at one copy of the
 * events (a temporary plus xp_capture_merge would hold two: ~450 bytes per
 * event instead of ~240).  Once the capture is full the remaining inputs
 * are still read, validated and counted, so EVENT_RATE_TOO_HIGH reports the
 * total across all inputs.
 *
 * Inputs are paths anyone may have created, read by root: each is opened
 * with common/readfile.h (O_NONBLOCK, then fstat of the descriptor), and
 * only a regular file or a directory is read -- a FIFO without a writer,
 * a socket or a device is refused at once with TRACE_EXPORT_FAILED naming
 * the path and its type.  Whole-file formats (host capture, .xtf) are
 * checked against XP_INPUT_MAX_BYTES by st_size before they are read, so
 * an oversized (even sparse) file is refused without reading it; Event
 * JSONL is streamed in bounded memory whatever its size.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/readfile.h"
#include "../../common/cancel.h"
#include "capture_io.h"
#include "decode_agent.h"
#include "decode_json.h"
#include "record_events.h"

/* Bytes read up front to detect the format (a whole Event document
 * normally fits; a host capture shows a host-only key early). */
#define DETECT_BYTES (64u * 1024u)

/* The first 8 bytes of a libxprobe .xtf file (docs/xtf-format.md); the
 * file itself is read by decode_xtf.c through include/xprobe/xtf.h. */
static const char xtf_magic[8] = { '\x89', 'X', 'T', 'F', '\r', '\n', '\x1a', '\n' };

enum input_format {
	FMT_EMPTY = 0,
	FMT_EVENTS,
	FMT_HOST,
	FMT_CHROME,
	FMT_CUPTI,
	FMT_XTF,
	FMT_AGENT,
	FMT_UNKNOWN,
};

static const char cupti_magic[8] = { 'X', 'P', 'C', 'U', 'P', 'T', 'I', '\0' };

static bool is_ws(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* Skip a JSON string starting at p[i] == '"'; index after it, or n. */
static size_t skip_string(const char *p, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		if (p[i] == '\\')
			i++;
		else if (p[i] == '"')
			return i + 1;
	}
	return n;
}

/* Skip one JSON value starting at p[i]; index after it, or n. */
static size_t skip_value(const char *p, size_t n, size_t i)
{
	int depth = 0;

	if (i >= n)
		return n;
	if (p[i] == '"')
		return skip_string(p, n, i);
	if (p[i] != '{' && p[i] != '[') {
		while (i < n && p[i] != ',' && p[i] != '}' && p[i] != ']' && !is_ws(p[i]))
			i++;
		return i;
	}
	while (i < n) {
		char ch = p[i];

		if (ch == '"') {
			i = skip_string(p, n, i);
			continue;
		}
		if (ch == '{' || ch == '[')
			depth++;
		else if ((ch == '}' || ch == ']') && --depth == 0)
			return i + 1;
		i++;
	}
	return n;
}

static bool key_is(const char *k, size_t n, const char *s)
{
	return strlen(s) == n && memcmp(k, s, n) == 0;
}

/*
 * Look at the top-level keys of the object at p[i] == '{' (as far as the
 * buffer goes).  Malformed or cut text ends the scan as an Event stream:
 * its decoder then reports the real error with a line number.
 */
static enum input_format scan_first_object(const char *p, size_t n, size_t i)
{
	static const char *const host_keys[] = {
		"events",   "ok",      "target",    "probe_id",
		"captured", "dropped", "timed_out", "record_limit_reached",
	};

	for (i++;;) {
		size_t k0, k1, j;

		while (i < n && is_ws(p[i]))
			i++;
		if (i >= n || p[i] != '"')
			return FMT_EVENTS;
		k0 = i + 1;
		i = skip_string(p, n, i);
		if (i >= n)
			return FMT_EVENTS;
		k1 = i - 1;
		for (j = 0; j < sizeof(host_keys) / sizeof(host_keys[0]); j++)
			if (key_is(p + k0, k1 - k0, host_keys[j]))
				return FMT_HOST;
		if (key_is(p + k0, k1 - k0, "traceEvents") ||
		    key_is(p + k0, k1 - k0, "displayTimeUnit"))
			return FMT_CHROME;
		while (i < n && is_ws(p[i]))
			i++;
		if (i >= n || p[i] != ':')
			return FMT_EVENTS;
		i++;
		while (i < n && is_ws(p[i]))
			i++;
		i = skip_value(p, n, i);
		while (i < n && is_ws(p[i]))
			i++;
		if (i >= n || p[i] != ',')
			return FMT_EVENTS;
		i++;
	}
}

static enum input_format detect(const char *p, size_t n, bool eof)
{
	size_t i = 0;

	if (n >= sizeof(cupti_magic) && memcmp(p, cupti_magic, sizeof(cupti_magic)) == 0)
		return FMT_CUPTI;
	if (n >= sizeof(xtf_magic) && memcmp(p, xtf_magic, sizeof(xtf_magic)) == 0)
		return FMT_XTF;
	if (n >= 8 && memcmp(p, XPROBE_AGENT_CAPFILE_MAGIC, 8) == 0)
		return FMT_AGENT;
	while (i < n && is_ws(p[i]))
		i++;
	if (i == n) /* whitespace so far: empty, or let the stream decoder see */
		return eof ? FMT_EMPTY : FMT_EVENTS;
	if (p[i] != '{')
		return FMT_UNKNOWN;
	return scan_first_object(p, n, i);
}

static int read_error(struct xp_error *err, const char *path, int errnum)
{
	xp_error_detail_str(err, "path", path);
	if (errnum == ENOENT)
		xp_error_hint(err, "check the path: no file or directory %s exists", path);
	else if (errnum == EACCES || errnum == EPERM)
		xp_error_hint(err, "%s is not readable by this user: run as its owner or root",
			      path);
	return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false, "failed to read %s: %s", path,
			    strerror(errnum));
}

static int format_error(struct xp_error *err, const char *path, const char *why)
{
	xp_error_detail_str(err, "path", path);
	return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false, "failed to decode %s: %s",
			    path, why);
}

/* A path xpc_file_open() refused or could not open. */
static int open_error(struct xp_error *err, const char *path, int rc, const struct stat *sb)
{
	if (rc != -XPC_EFTYPE)
		return read_error(err, path, -rc);
	xp_error_detail_str(err, "path", path);
	xp_error_detail_str(err, "file_type", xpc_file_type_name(sb->st_mode));
	xp_error_hint(err, "inputs are regular files (Event JSONL, host-capture JSON, .xtf) or "
			   "libxprobe session directories; write a stream to a file first");
	return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
			    "failed to read %s: it is a %s, not a regular file or a directory",
			    path, xpc_file_type_name(sb->st_mode));
}

/* A whole-file input over XP_INPUT_MAX_BYTES (@what: "host capture"). */
int xp_input_too_large(struct xp_error *err, const char *path, const char *what, uint64_t size)
{
	xp_error_detail_str(err, "path", path);
	if (size)
		xp_error_detail_u64(err, "size_bytes", size);
	xp_error_detail_u64(err, "size_limit_bytes", XP_INPUT_MAX_BYTES);
	xp_error_hint(err, "split the capture, or convert it to Event JSONL, which is read as a "
			   "stream in bounded memory");
	return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
			    "failed to decode %s: %s is larger than 4 GiB", path, what);
}

/* Host capture: the whole file in one padded buffer, read again from its
 * start (the detection prefix is part of it). */
static int load_host(int fd, const char *path, const struct stat *sb, struct xp_capture *c,
		     unsigned flags, struct xp_decode_stats *st, struct xp_error *err)
{
	size_t len;
	char *buf;
	int rc;

	if ((uint64_t)sb->st_size > XP_INPUT_MAX_BYTES) /* before a byte more is read */
		return xp_input_too_large(err, path, "the host capture", (uint64_t)sb->st_size);
	if (lseek(fd, 0, SEEK_SET) < 0)
		return read_error(err, path, errno);
	rc = xpc_read_fd(fd, XP_INPUT_MAX_BYTES, XP_JSON_PADDING, &buf, &len);
	if (rc == -EFBIG) /* grew while read */
		return xp_input_too_large(err, path, "the host capture", 0);
	if (rc == -ENOMEM)
		return format_error(err, path, "out of memory");
	if (rc)
		return read_error(err, path, -rc);
	rc = xp_decode_host_capture_padded(buf, len, path, c, flags, st, err);
	free(buf);
	return rc;
}

static void hex_prefix(const char *p, size_t n, char *out, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, o = 0;

	for (i = 0; i < n && o + 3 <= size; i++) {
		out[o++] = hex[(unsigned char)p[i] >> 4];
		out[o++] = hex[(unsigned char)p[i] & 15];
	}
	out[o] = '\0';
}

/* Events [from, c->count) must share the capture's pid (xtf reader). */
static int check_pids(struct xp_capture *c, size_t from, const char *path, struct xp_error *err)
{
	size_t i;

	for (i = from; i < c->count; i++) {
		uint32_t pid = c->events[i].pid;

		if (!c->has_pid) {
			c->has_pid = true;
			c->pid = pid;
		} else if (pid != c->pid) {
			char pids[48];

			snprintf(pids, sizeof(pids), "[%u,%u]", c->pid, pid);
			xp_error_detail_raw(err, "pids", pids);
			xp_error_detail_str(err, "path", path);
			xp_error_hint(err, "measure captures of one target process at a time");
			return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
					    "completed capture mixes target PIDs %u and %u", c->pid,
					    pid);
		}
	}
	return 0;
}

/* A libxprobe session directory or .xtf file, open at @fd. */
static int load_xtf(int fd, const struct stat *sb, const char *path, struct xp_capture *c,
		    struct xp_error *err)
{
	size_t before = c->count;
	int rc;

	rc = xp_decode_xtf_fd(fd, sb, path, c, err);
	if (rc)
		return rc;
	return check_pids(c, before, path, err);
}

/*
 * The target of a saved Agent capture (its header's pid and start time,
 * checked) against the inputs read before it: the contract's "repeated
 * inputs are merged after target-PID checks", worded as the JSON
 * decoders word a mixed capture.  The first input with a target sets it.
 */
static int agent_target(struct xp_capture *c, const struct xprobe_agent_reply *r, const char *path,
			struct xp_error *err)
{
	if (c->has_pid && r->pid != c->pid) {
		char pids[48];

		snprintf(pids, sizeof(pids), "[%u,%u]", c->pid, r->pid);
		xp_error_detail_raw(err, "pids", pids);
		xp_error_detail_str(err, "path", path);
		xp_error_hint(err, "measure captures of one target process at a time");
		return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
				    "completed capture mixes target PIDs %u and %u", c->pid,
				    r->pid);
	}
	if (c->has_start_time && r->start_time != c->process_start_time) {
		xp_error_detail_u64(err, "pid", r->pid);
		xp_error_detail_u64(err, "expected_process_start_time", c->process_start_time);
		xp_error_detail_u64(err, "process_start_time", r->start_time);
		xp_error_detail_str(err, "path", path);
		xp_error_hint(err,
			      "the pid was reused by another process; measure one process at a "
			      "time");
		return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
				    "completed capture mixes target processes: pid %u with process "
				    "start times %llu and %llu",
				    r->pid, (unsigned long long)c->process_start_time,
				    (unsigned long long)r->start_time);
	}
	c->has_pid = true;
	c->pid = r->pid;
	if (r->start_time) {
		c->has_start_time = true;
		c->process_start_time = r->start_time;
	}
	return 0;
}

/*
 * A saved Agent capture (agent.h's struct xprobe_agent_capfile), whole:
 * bounded by st_size first, then checked and decoded by decode_agent.c as
 * the STOP reply it holds, so it counts exactly as a live Agent capture
 * does: dropped records into the capture's drops (EVENTS_DROPPED),
 * RECORD_LIMIT into record_limit_reached (EVENT_RATE_TOO_HIGH),
 * collection.cupti from its counters (summed over several files), and
 * records this build cannot read (the Agent's unknown count, types of a
 * later release) refused, as measure refuses them live.
 */
static int load_agent(int fd, const char *path, const struct stat *sb, struct xp_capture *c,
		      unsigned flags, struct xp_decode_stats *st, struct xp_error *err)
{
	struct xp_cupti_summary prev = c->cupti;
	struct xprobe_agent_capfile h;
	struct xp_capture_agent_dec d;
	char *buf = NULL;
	size_t len;
	int rc;

	if ((uint64_t)sb->st_size > XP_INPUT_MAX_BYTES)
		return xp_input_too_large(err, path, "the Agent capture", (uint64_t)sb->st_size);
	if (lseek(fd, 0, SEEK_SET) < 0)
		return read_error(err, path, errno);
	rc = xpc_read_fd(fd, XP_INPUT_MAX_BYTES, 0, &buf, &len);
	if (rc == -EFBIG)
		return xp_input_too_large(err, path, "the Agent capture", 0);
	if (rc == -ENOMEM)
		return format_error(err, path, "out of memory");
	if (rc)
		return read_error(err, path, -rc);
	rc = xp_capture_agent_file_check(buf, len, &h, err);
	if (rc)
		goto bad;
	rc = agent_target(c, &h.reply, path, err);
	if (rc)
		goto out;
	if (xp_capture_agent_dec_init(&d, c, h.reply.pid, h.reply.start_time)) {
		rc = format_error(err, path, "out of memory");
		goto out;
	}
	rc = xp_capture_agent_dec_file(&d, buf, len, true, err);
	st->observed = d.map->observed;
	st->over_limit = d.map->full;
	if (!rc && d.map->full && !(flags & XP_DECODE_DEFER_LIMIT))
		rc = xp_error_event_limit(err, path, d.map->observed, c->max_events);
	if (!rc && (d.st.unknown || d.st.unknown_types)) {
		xp_error_detail_u64(err, "unknown_records", d.st.unknown + d.st.unknown_types);
		xp_error_hint(err, "rebuild xprobe and libxprobe from the same release");
		rc = xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
				  "the Agent sent %llu records this collector cannot decode",
				  (unsigned long long)(d.st.unknown + d.st.unknown_types));
	}
	xp_capture_agent_dec_free(&d);
	if (rc)
		goto bad;
	if (prev.present) {
		c->cupti.record_capacity += prev.record_capacity;
		c->cupti.observed_records += prev.observed_records;
		c->cupti.dropped_records += prev.dropped_records;
	}
	goto out;
bad:
	if (err->code == XPROBE_E_TRACE_EXPORT_FAILED) {
		xp_error_detail_str(err, "path", path);
		xp_error_prefix(err, "failed to decode %s", path);
	}
out:
	free(buf);
	return rc;
}

static int unrecognized(const char *path, const char *first, size_t n, struct xp_error *err)
{
	char hex[2 * 16 + 1];

	hex_prefix(first, n < 16 ? n : 16, hex, sizeof(hex));
	xp_error_detail_str(err, "first_bytes", hex);
	xp_error_hint(err, "inputs are Event JSONL, host-capture JSON, libxprobe .xtf files or "
			   "session directories; see docs/inputs.md");
	return format_error(err, path, "unrecognized capture format");
}

static int load_one(const char *path, struct xp_capture *c, unsigned flags,
		    struct xp_decode_stats *st, struct xp_error *err)
{
	size_t before = c->count;
	char *prefix = NULL;
	struct stat sb;
	ssize_t n;
	int fd, rc;

	memset(st, 0, sizeof(*st));
	fd = xpc_file_open(path, XPC_FILE_DIR_OK, &sb);
	if (fd < 0)
		return open_error(err, path, fd, &sb);
	if (S_ISDIR(sb.st_mode)) {
		rc = load_xtf(fd, &sb, path, c, err);
		close(fd);
		st->observed = c->count - before;
		return rc;
	}
	prefix = malloc(DETECT_BYTES);
	if (!prefix) {
		rc = format_error(err, path, "out of memory");
		goto out;
	}
	n = xpc_read_full(fd, prefix, DETECT_BYTES);
	if (n < 0) {
		rc = read_error(err, path, (int)-n);
		goto out;
	}
	switch (detect(prefix, (size_t)n, (size_t)n < DETECT_BYTES)) {
	case FMT_EMPTY:
		rc = format_error(err, path, "capture is empty");
		break;
	case FMT_CUPTI:
		xp_error_detail_str(err, "format", "cupti_abi");
		xp_error_hint(err, "decode CUPTI captures with a build that has the CUDA Agent, "
				   "or export the capture as Event JSONL");
		rc = format_error(err, path, "CUPTI ABI captures are not supported by this build");
		break;
	case FMT_CHROME:
		xp_error_detail_str(err, "format", "chrome_trace");
		xp_error_hint(err, "pass the JSONL export (--format jsonl) instead");
		rc = format_error(err, path,
				  "Chrome Trace Event files cannot be read back as captures");
		break;
	case FMT_HOST:
		rc = load_host(fd, path, &sb, c, flags, st, err);
		break;
	case FMT_EVENTS:
		rc = xp_decode_event_stream_fd_ex(fd, prefix, (size_t)n, path, c, flags, st, err);
		if (!rc && st->observed == 0)
			rc = format_error(err, path, "capture is empty");
		break;
	case FMT_XTF:
		rc = load_xtf(fd, &sb, path, c, err);
		st->observed = c->count - before;
		break;
	case FMT_AGENT:
		rc = load_agent(fd, path, &sb, c, flags, st, err);
		break;
	case FMT_UNKNOWN:
	default:
		rc = unrecognized(path, prefix, (size_t)n, err);
		break;
	}
out:
	free(prefix);
	if (fd >= 0)
		close(fd);
	return rc;
}

int xp_input_load(const char *path, struct xp_capture *c, struct xp_error *err)
{
	struct xp_decode_stats st;

	return load_one(path, c, 0, &st, err);
}

int xp_inputs_load(const char *const *paths, size_t n, struct xp_capture *c, struct xp_error *err)
{
	const char *crossed = NULL; /* the input that crossed the bound */
	uint64_t total = 0;
	size_t i, k, from;
	int rc;

	for (i = 0; i < n; i++) {
		struct xp_decode_stats st;
		unsigned flags = XP_DECODE_DEFER_LIMIT;

		if (crossed || (c->max_events && c->count >= c->max_events))
			flags |= XP_DECODE_COUNT_ONLY;
		if (xpc_cancel_signo())
			return xp_error_cancelled(err, paths[i]);
		from = c->count;
		rc = load_one(paths[i], c, flags, &st, err);
		if (rc)
			return rc;
		for (k = from; k < c->count; k++)
			c->events[k].input = (uint16_t)i;
		total += st.observed;
		if (st.over_limit && !crossed)
			crossed = paths[i];
	}
	if (crossed) {
		if (n > 1)
			xp_error_detail_u64(err, "inputs", n);
		return xp_error_event_limit(err, crossed, total, c->max_events);
	}
	rc = xp_capture_sort_and_sequence(c);
	if (!rc && n > 1)
		xp_capture_drop_duplicates(c);
	return rc;
}
