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
 *   - first non-whitespace byte '{': JSON.  The top-level keys of the first
 *     document decide: a key only a HostCaptureResult has ("events", "ok",
 *     "target", ...) makes the file one host-capture document; the keys of
 *     a Chrome Trace Event export get their own error; anything else is an
 *     Event stream (whose decoder rejects a host capture met later);
 *   - only whitespace, or nothing: "capture is empty";
 *   - a directory, or a file starting with the .xtf magic: a libxprobe
 *     session or trace file, read by decode_xtf.c (xp_decode_xtf_path);
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
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture_io.h"
#include "decode_json.h"

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
	while (i < n && is_ws(p[i]))
		i++;
	if (i == n) /* whitespace so far: empty, or let the stream decoder see */
		return eof ? FMT_EMPTY : FMT_EVENTS;
	if (p[i] != '{')
		return FMT_UNKNOWN;
	return scan_first_object(p, n, i);
}

/* read() until @want bytes or EOF; bytes read, or -errno. */
static ssize_t read_full(int fd, char *buf, size_t want)
{
	size_t got = 0;

	while (got < want) {
		ssize_t r = read(fd, buf + got, want - got);

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

static int read_error(struct xp_error *err, const char *path, int errnum)
{
	xp_error_detail_str(err, "path", path);
	return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false, "failed to read %s: %s", path,
			    strerror(errnum));
}

static int format_error(struct xp_error *err, const char *path, const char *why)
{
	xp_error_detail_str(err, "path", path);
	return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false, "failed to decode %s: %s",
			    path, why);
}

/* Host capture: the whole file in one padded buffer (prefix included). */
static int load_host(int fd, const char *path, const char *prefix, size_t plen,
		     struct xp_capture *c, unsigned flags, struct xp_decode_stats *st,
		     struct xp_error *err)
{
	/* simdjson's limit for one document */
	const size_t max_len = (size_t)0xFFFFFFFFu;
	struct stat sb;
	size_t cap, len = plen;
	char *buf;
	int rc;

	cap = plen + DETECT_BYTES;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size > cap)
		cap = (uint64_t)sb.st_size < max_len ? (size_t)sb.st_size + 1 : max_len;
	buf = malloc(cap + XP_JSON_PADDING);
	if (!buf)
		return format_error(err, path, "out of memory");
	memcpy(buf, prefix, plen);
	for (;;) {
		ssize_t r;

		if (len == cap) {
			char *nb;

			if (cap >= max_len) {
				free(buf);
				return format_error(err, path, "host capture is larger than 4 GiB");
			}
			cap = cap > max_len / 2 ? max_len : cap * 2;
			nb = realloc(buf, cap + XP_JSON_PADDING);
			if (!nb) {
				free(buf);
				return format_error(err, path, "out of memory");
			}
			buf = nb;
		}
		r = read_full(fd, buf + len, cap - len);
		if (r < 0) {
			free(buf);
			return read_error(err, path, (int)-r);
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
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

/* A libxprobe session directory or .xtf file. */
static int load_xtf(const char *path, struct xp_capture *c, struct xp_error *err)
{
	size_t before = c->count;
	int rc;

	rc = xp_decode_xtf_path(path, c, err);
	if (rc)
		return rc;
	return check_pids(c, before, path, err);
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
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return read_error(err, path, errno);
	if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		close(fd);
		rc = load_xtf(path, c, err);
		st->observed = c->count - before;
		return rc;
	}
	prefix = malloc(DETECT_BYTES);
	if (!prefix) {
		rc = format_error(err, path, "out of memory");
		goto out;
	}
	n = read_full(fd, prefix, DETECT_BYTES);
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
		rc = load_host(fd, path, prefix, (size_t)n, c, flags, st, err);
		break;
	case FMT_EVENTS:
		rc = xp_decode_event_stream_fd_ex(fd, prefix, (size_t)n, path, c, flags, st, err);
		if (!rc && st->observed == 0)
			rc = format_error(err, path, "capture is empty");
		break;
	case FMT_XTF:
		close(fd);
		fd = -1;
		rc = load_xtf(path, c, err);
		st->observed = c->count - before;
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
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		struct xp_decode_stats st;
		unsigned flags = XP_DECODE_DEFER_LIMIT;

		if (crossed || (c->max_events && c->count >= c->max_events))
			flags |= XP_DECODE_COUNT_ONLY;
		rc = load_one(paths[i], c, flags, &st, err);
		if (rc)
			return rc;
		total += st.observed;
		if (st.over_limit && !crossed)
			crossed = paths[i];
	}
	if (crossed) {
		if (n > 1)
			xp_error_detail_u64(err, "inputs", n);
		return xp_error_event_limit(err, crossed, total, c->max_events);
	}
	return xp_capture_sort_and_sequence(c);
}
