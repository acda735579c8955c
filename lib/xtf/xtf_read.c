/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xtf_read.c - the strict .xtf reader (include/xprobe/xtf.h), the record
 * stream checker it shares with ring recovery, the event type names, and
 * the TSC -> ns conversion both the stop path and recovery use.
 *
 * Strictness is the point: every field of the header is checked against
 * what this version writes, every byte of the file belongs to the header,
 * the metadata, the zero padding after it or exactly one stream, both
 * sections' CRC32C must match, protobuf metadata must carry every required
 * field and no unknown one, and every record is walked once at open.  The
 * test suite opens every truncation of valid files and the fuzz target
 * (tests/fuzz/fuzz_xtf.c) feeds arbitrary bytes; both require a clean
 * rejection, never a crash or an acceptance of garbage.
 *
 * The reader copies the input, so a handle owns everything it points to.
 * No global state; thread-safe per handle.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../internal.h"
#include "crc32c.h"
#include "xtf_internal.h"
#include "xprobe/inspect.h"

static const char *const event_type_names[XPROBE_EV__COUNT] = {
	[XPROBE_EV_PAD] = "pad",
	[XPROBE_EV_NVTX_PUSH] = "nvtx_range_push",
	[XPROBE_EV_NVTX_POP] = "nvtx_range_pop",
	[XPROBE_EV_NVTX_START] = "nvtx_range_start",
	[XPROBE_EV_NVTX_END] = "nvtx_range_end",
	[XPROBE_EV_NVTX_MARK] = "nvtx_mark",
	[XPROBE_EV_EXEC_BEGIN] = "execution_begin",
	[XPROBE_EV_EXEC_END] = "execution_end",
	[XPROBE_EV_USER] = "user",
	[XPROBE_EV_SESSION_BEGIN] = "session_begin",
	[XPROBE_EV_SESSION_END] = "session_end",
	[XPROBE_EV_SIGNAL] = "signal",
	[XPROBE_EV_DEVICE_ACTIVITY] = "device_activity",
	[XPROBE_EV_CPU_SAMPLE] = "cpu_sample",
	[XPROBE_EV_MEM_SAMPLE] = "mem_sample",
	[XPROBE_EV_CUDA_API_ENTRY] = "cuda_api_entry",
	[XPROBE_EV_CUDA_API_EXIT] = "cuda_api_exit",
	[XPROBE_EV_CUDA_KERNEL] = "cuda_kernel",
	[XPROBE_EV_CUDA_MEMCPY] = "cuda_memcpy",
	[XPROBE_EV_CUDA_MEMSET] = "cuda_memset",
};

XPROBE_API const char *xprobe_event_type_name(uint32_t type)
{
	return type < XPROBE_EV__COUNT ? event_type_names[type] : NULL;
}

XPROBE_API int xprobe_event_type_names(const char *const **names, size_t *count)
{
	if (!names || !count)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "names and count must not be NULL");
	*names = event_type_names;
	*count = XPROBE_EV__COUNT;
	return 0;
}

XPROBE_API int xprobe_event_type_from_name(const char *name, uint32_t *type)
{
	if (!name || !type)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "name and type must not be NULL");
	for (uint32_t i = 1; i < XPROBE_EV__COUNT; i++) {
		if (!strcmp(name, event_type_names[i])) {
			*type = i;
			return 0;
		}
	}
	return xpl_fail(-XPROBE_E_UNKNOWN_NAME, "unknown event type '%s'", name);
}

void xpl_conv_init(struct xpl_conv *c, const struct xpl_calib *a, const struct xpl_calib *b,
		   bool tsc)
{
	memset(c, 0, sizeof(*c));
	if (!tsc) {
		c->identity = true;
		return;
	}
	c->tsc0 = a->tsc;
	c->ns0 = a->ns;
	if (b->tsc > a->tsc && b->ns > a->ns)
		c->mult =
			(uint64_t)(((unsigned __int128)(b->ns - a->ns) << 32) / (b->tsc - a->tsc));
	else
		c->mult = 1ull << 32; /* no second point: assume 1 GHz (never used by us) */
}

void xpl_xtf_err_append(char *err, size_t errlen, const char *fmt, ...)
{
	size_t l;
	va_list ap;

	if (!err || !errlen)
		return;
	l = strnlen(err, errlen);
	if (l + 1 >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + l, errlen - l, fmt, ap);
	va_end(ap);
}

int xpl_xtf_open_regular(const char *path, int oflags, int *fd, uint64_t *size, char *err,
			 size_t errlen)
{
	struct stat st;
	int f, e;

	*fd = -1;
	f = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | oflags);
	if (f < 0) {
		e = errno;
		if (e == ELOOP && (oflags & O_NOFOLLOW))
			return xpl_xtf_reject(err, errlen,
					      "not a regular file: a symbolic link, not followed");
		return xpl_errf(err, errlen, -e, "cannot open: %s", strerror(e));
	}
	if (fstat(f, &st) != 0) {
		e = errno;
		close(f);
		return xpl_errf(err, errlen, -e, "cannot stat: %s", strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(f);
		return xpl_xtf_reject(err, errlen, "not a regular file: a %s",
				      xpl_file_type_name(st.st_mode));
	}
	*fd = f;
	*size = (uint64_t)st.st_size;
	return 0;
}

static bool type_allowed(uint32_t kind, uint32_t type)
{
	switch (kind) {
	case XPROBE_XTF_NTRACE:
		return type == XPROBE_EV_PAD ||
		       (type >= XPROBE_EV_NVTX_PUSH && type <= XPROBE_EV_SIGNAL);
	case XPROBE_XTF_DEVICE_PROFILE:
		return type == XPROBE_EV_DEVICE_ACTIVITY || xpl_cuda_activity_type(type);
	case XPROBE_XTF_CPU_UTIL:
		return type == XPROBE_EV_CPU_SAMPLE;
	case XPROBE_XTF_HOST_MEM:
		return type == XPROBE_EV_MEM_SAMPLE;
	}
	return false;
}

static bool type_named(uint32_t type)
{
	switch (type) {
	case XPROBE_EV_NVTX_PUSH:
	case XPROBE_EV_NVTX_START:
	case XPROBE_EV_NVTX_MARK:
	case XPROBE_EV_EXEC_BEGIN:
	case XPROBE_EV_EXEC_END:
	case XPROBE_EV_DEVICE_ACTIVITY:
		return true;
	}
	return false;
}

bool xpl_cuda_activity_type(uint32_t type)
{
	return type == XPROBE_EV_CUDA_KERNEL || type == XPROBE_EV_CUDA_MEMCPY ||
	       type == XPROBE_EV_CUDA_MEMSET;
}

/*
 * One CUDA activity record (record.h, struct xprobe_cuda_activity) of
 * @size bytes at @p: a fixed 104-byte part, then for kernels the name.
 * Everything record.h leaves zero must be zero, so a record has one
 * encoding.
 */
int xpl_check_cuda_activity(const uint8_t *p, size_t size, char *err, size_t errlen)
{
	struct xprobe_cuda_activity a;
	bool kernel;

	if (size < XPROBE_CUDA_ACTIVITY_SIZE)
		return xpl_xtf_reject(err, errlen, "CUDA activity record of %zu bytes, under %u",
				      size, XPROBE_CUDA_ACTIVITY_SIZE);
	memcpy(&a, p, sizeof(a));
	kernel = a.hdr.type == XPROBE_EV_CUDA_KERNEL;
	if (!a.hdr.ts)
		return xpl_xtf_reject(err, errlen, "zero timestamp");
	if (a.hdr.a0 < a.hdr.ts)
		return xpl_xtf_reject(err, errlen, "activity ends before it starts");
	if (a.hdr.tid)
		return xpl_xtf_reject(err, errlen, "device record with tid %u", a.hdr.tid);
	if (a.hdr.flags & ~(kernel ? XPROBE_RECF_NAME_COMPLETE : 0u))
		return xpl_xtf_reject(err, errlen, "flags 0x%x not allowed on this type",
				      a.hdr.flags);
	if (a.hdr.name_len > (kernel ? XPROBE_NAME_MAX : 0u))
		return xpl_xtf_reject(err, errlen, "name length %u on this type", a.hdr.name_len);
	if (size != XPL_ALIGN8(XPROBE_CUDA_ACTIVITY_SIZE + a.hdr.name_len))
		return xpl_xtf_reject(err, errlen, "size %zu does not fit a %u-byte name", size,
				      a.hdr.name_len);
	if (memchr(p + XPROBE_CUDA_ACTIVITY_SIZE, 0, a.hdr.name_len))
		return xpl_xtf_reject(err, errlen, "NUL inside the name");
	for (size_t i = XPROBE_CUDA_ACTIVITY_SIZE + a.hdr.name_len; i < size; i++)
		if (p[i])
			return xpl_xtf_reject(err, errlen, "non-zero padding after the name");
	if (a.reserved)
		return xpl_xtf_reject(err, errlen, "reserved is %u", a.reserved);
	if (a.memcpy_kind > 5 || (a.hdr.type != XPROBE_EV_CUDA_MEMCPY &&
				  (a.memcpy_kind || a.raw_copy_kind || a.runtime_correlation_id)))
		return xpl_xtf_reject(err, errlen, "memcpy fields on this type or kind %u",
				      a.memcpy_kind);
	if (a.hdr.type != XPROBE_EV_CUDA_MEMSET && a.memset_value)
		return xpl_xtf_reject(err, errlen, "memset value on this type");
	if (kernel && a.bytes)
		return xpl_xtf_reject(err, errlen, "kernel with bytes");
	if (!kernel && (a.grid_x | a.grid_y | a.grid_z | a.block_x | a.block_y | a.block_z))
		return xpl_xtf_reject(err, errlen, "grid or block dimensions on this type");
	return 0;
}

int xpl_xtf_check_stream(uint32_t kind, const uint8_t *data, size_t len, uint64_t *records,
			 char *err, size_t errlen)
{
	size_t off = 0;
	uint64_t n = 0;

	if (len % 8)
		return xpl_xtf_reject(err, errlen, "stream length %zu is not a multiple of 8", len);
	while (off < len) {
		const uint8_t *p = data + off;
		uint32_t size = xpl_get_u16(p), type = xpl_get_u16(p + 2);
		struct xprobe_record r;

		if (size < 8 || size % 8 || size > len - off)
			return xpl_xtf_reject(
				err, errlen,
				"record at stream offset %zu: size %u is not a multiple of 8 in "
				"8..%zu",
				off, size, len - off);
		if (type >= XPROBE_EV__COUNT || !type_allowed(kind, type))
			return xpl_xtf_reject(
				err, errlen,
				"record at stream offset %zu: type %u is not allowed in this "
				"kind of file",
				off, type);
		if (type == XPROBE_EV_PAD) {
			/* a pad fills a ring's end: shorter than the largest record */
			if (size >= XPROBE_RECORD_MAX_SIZE)
				return xpl_xtf_reject(err, errlen,
						      "pad at stream offset %zu is %u bytes", off,
						      size);
			off += size;
			continue;
		}
		if (size < XPROBE_RECORD_HDR_SIZE)
			return xpl_xtf_reject(err, errlen,
					      "record at stream offset %zu: %u bytes, header is 40",
					      off, size);
		memcpy(&r, p, sizeof(r));
		if (xpl_cuda_activity_type(type)) {
			int rc = xpl_check_cuda_activity(p, size, err, errlen);

			if (rc) {
				xpl_xtf_err_append(err, errlen, " (record at stream offset %zu)",
						   off);
				return rc;
			}
			n++;
			off += size;
			continue;
		}
		if (r.ts == 0)
			return xpl_xtf_reject(err, errlen,
					      "record at stream offset %zu: zero timestamp", off);
		if (r.flags & ~XPROBE_RECF__ALL)
			return xpl_xtf_reject(err, errlen,
					      "record at stream offset %zu: unknown flags 0x%x",
					      off, r.flags);
		if (type_named(type)) {
			if (r.name_len > XPROBE_NAME_MAX)
				return xpl_xtf_reject(
					err, errlen,
					"record at stream offset %zu: name length %u > 127", off,
					r.name_len);
			if (size != XPL_ALIGN8(XPROBE_RECORD_HDR_SIZE + r.name_len))
				return xpl_xtf_reject(
					err, errlen,
					"record at stream offset %zu: size %u does not fit a "
					"%u-byte name",
					off, size, r.name_len);
			if (memchr(p + XPROBE_RECORD_HDR_SIZE, 0, r.name_len))
				return xpl_xtf_reject(
					err, errlen,
					"record at stream offset %zu: NUL inside the name", off);
			for (size_t i = XPROBE_RECORD_HDR_SIZE + r.name_len; i < size; i++)
				if (p[i])
					return xpl_xtf_reject(
						err, errlen,
						"record at stream offset %zu: non-zero padding "
						"after the name",
						off);
			if ((r.flags & XPROBE_RECF_NAME_UNSUPPORTED) &&
			    (r.name_len || (r.flags & XPROBE_RECF_NAME_COMPLETE)))
				return xpl_xtf_reject(
					err, errlen,
					"record at stream offset %zu: unsupported-name record "
					"carries a name",
					off);
		} else {
			uint32_t want =
				(type == XPROBE_EV_CPU_SAMPLE || type == XPROBE_EV_MEM_SAMPLE) ?
					72 :
					XPROBE_RECORD_HDR_SIZE;

			if (r.name_len || r.flags)
				return xpl_xtf_reject(
					err, errlen,
					"record at stream offset %zu: type %s carries a name or "
					"flags",
					off, event_type_names[type]);
			if (size != want)
				return xpl_xtf_reject(
					err, errlen,
					"record at stream offset %zu: type %s is %u bytes, not %u",
					off, event_type_names[type], size, want);
		}
		if (kind == XPROBE_XTF_NTRACE && r.tid == 0)
			return xpl_xtf_reject(
				err, errlen, "record at stream offset %zu: host record without tid",
				off);
		if (kind != XPROBE_XTF_NTRACE && r.tid != 0)
			return xpl_xtf_reject(err, errlen,
					      "record at stream offset %zu: unexpected tid %u", off,
					      r.tid);
		if (type == XPROBE_EV_DEVICE_ACTIVITY && r.a0 < r.ts)
			return xpl_xtf_reject(
				err, errlen,
				"record at stream offset %zu: activity ends before it starts", off);
		n++;
		off += size;
	}
	*records = n;
	return 0;
}

static bool known_fields_only(const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d;

	if (!m)
		return true;
	if (m->n_unknown_fields)
		return false;
	d = m->descriptor;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *base = (const char *)m;

		if (f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)(base + f->quantifier_offset);
			ProtobufCMessage *const *v =
				*(ProtobufCMessage *const *const *)(base + f->offset);

			for (size_t k = 0; k < n; k++)
				if (!known_fields_only(v[k]))
					return false;
		} else if (!known_fields_only(*(ProtobufCMessage *const *)(base + f->offset))) {
			return false;
		}
	}
	return true;
}

void xpl_xtf_free(struct xprobe_xtf *x)
{
	if (!x)
		return;
	if (x->meta)
		protobuf_c_message_free_unpacked(&x->meta->base, NULL);
	for (size_t i = 0; i < XPL_ARRAY_SIZE(x->strings); i++)
		free(x->strings[i]);
	free(x->streams);
	free(x->buf);
	free(x);
}

XPROBE_API void xprobe_xtf_close(struct xprobe_xtf *x)
{
	xpl_xtf_free(x);
}

static const char *key_space_ok(const char *k)
{
	static const char *const ok[] = { "session", "model", "continuous", "on_fail" };

	for (size_t i = 0; i < XPL_ARRAY_SIZE(ok); i++)
		if (!strcmp(k, ok[i]))
			return k;
	return NULL;
}

static int check_meta(struct xprobe_xtf *x, char *err, size_t errlen)
{
	Xprobe__Xtf__Capture *m = x->meta;
	struct xprobe_xtf_info *in = &x->info;
	uint32_t kind = in->kind;

	if ((uint32_t)m->kind != kind)
		return xpl_xtf_reject(err, errlen, "metadata kind %d differs from header kind %u",
				      m->kind, kind);
	if (m->simulated != !!(in->flags & XPROBE_XTF_F_SIMULATED))
		return xpl_xtf_reject(err, errlen,
				      "metadata simulated=%d disagrees with the header flag",
				      m->simulated);
	if (m->simulated != !strcmp(m->backend, "sim"))
		return xpl_xtf_reject(err, errlen, "backend '%s' disagrees with simulated=%d",
				      m->backend, m->simulated);
	if (strcmp(m->backend, "none") && strcmp(m->backend, "sim") && strcmp(m->backend, "cupti"))
		return xpl_xtf_reject(err, errlen, "unknown backend '%s'", m->backend);
	if (strcmp(m->clock->domain, "host_monotonic"))
		return xpl_xtf_reject(err, errlen, "unknown clock domain '%s'", m->clock->domain);
	if (strcmp(m->clock->source, "tsc") && strcmp(m->clock->source, "clock_gettime"))
		return xpl_xtf_reject(err, errlen, "unknown clock source '%s'", m->clock->source);
	if (m->pid == 0)
		return xpl_xtf_reject(err, errlen, "pid 0");
	if (!m->instance_id[0] || strlen(m->instance_id) > 63)
		return xpl_xtf_reject(err, errlen, "instance id must be 1..63 bytes");
	switch (kind) {
	case XPROBE_XTF_DEVICE_PROFILE: {
		Xprobe__Xtf__DeviceProfile *d = m->device;

		if (!d || m->info || m->has_sample_period_ms)
			return xpl_xtf_reject(err, errlen,
					      "a device profile needs exactly the device message");
		if (!key_space_ok(d->key_space))
			return xpl_xtf_reject(err, errlen, "unknown key space '%s'", d->key_space);
		if (!strcmp(d->key_space, "session") && (!d->has_device || !d->has_session_id))
			return xpl_xtf_reject(err, errlen,
					      "a session profile needs device and session_id");
		if (d->has_device && d->device >= XPROBE_MAX_DEVICES)
			return xpl_xtf_reject(err, errlen, "device %u out of range", d->device);
		if (d->stop_ns < d->start_ns)
			return xpl_xtf_reject(err, errlen, "profile stops before it starts");
		for (size_t i = 0; i < m->n_streams; i++)
			if (!m->streams[i]->has_device ||
			    m->streams[i]->device >= XPROBE_MAX_DEVICES || m->streams[i]->tid)
				return xpl_xtf_reject(err, errlen,
						      "device stream %zu needs a device and no tid",
						      i);
		break;
	}
	case XPROBE_XTF_NTRACE:
		if (m->device || m->info || m->has_sample_period_ms)
			return xpl_xtf_reject(err, errlen,
					      "ntrace carries device, info or sample fields");
		for (size_t i = 0; i < m->n_streams; i++)
			if (m->streams[i]->has_device || !m->streams[i]->tid)
				return xpl_xtf_reject(err, errlen,
						      "host stream %zu needs a tid and no device",
						      i);
		break;
	case XPROBE_XTF_CPU_UTIL:
	case XPROBE_XTF_HOST_MEM:
		if (m->device || m->info || !m->has_sample_period_ms || m->n_streams > 1)
			return xpl_xtf_reject(err, errlen,
					      "a sample file needs one stream and a period");
		for (size_t i = 0; i < m->n_streams; i++)
			if (m->streams[i]->has_device || m->streams[i]->tid)
				return xpl_xtf_reject(err, errlen,
						      "sample stream with tid or device");
		break;
	case XPROBE_XTF_TRACE_INFO: {
		Xprobe__Xtf__TraceInfo *t = m->info;

		if (!t || m->device || m->n_streams || m->has_sample_period_ms)
			return xpl_xtf_reject(err, errlen,
					      "trace_info needs the info message and no streams");
		if (strcmp(t->stop_reason, "stop") && strcmp(t->stop_reason, "close") &&
		    strcmp(t->stop_reason, "atexit") && strcmp(t->stop_reason, "signal"))
			return xpl_xtf_reject(err, errlen, "unknown stop reason '%s'",
					      t->stop_reason);
		if ((strcmp(t->stop_reason, "signal") == 0) != (bool)t->has_signal)
			return xpl_xtf_reject(
				err, errlen, "signal number present iff the stop reason is signal");
		for (size_t i = 0; i < t->n_files; i++) {
			const char *n = t->files[i]->name;
			const char *leaf = !strncmp(n, "on_fail/", 8) ? n + 8 : n;

			if (!xpl_plain_name(leaf))
				return xpl_xtf_reject(err, errlen,
						      "file entry '%s' is not a plain name", n);
			if (t->files[i]->kind < 1 || t->files[i]->kind > 5 ||
			    (uint32_t)t->files[i]->kind == XPROBE_XTF_TRACE_INFO)
				return xpl_xtf_reject(err, errlen, "file entry '%s' has kind %d", n,
						      t->files[i]->kind);
		}
		break;
	}
	}
	return 0;
}

static void fill_info_from_meta(struct xprobe_xtf *x)
{
	Xprobe__Xtf__Capture *m = x->meta;
	struct xprobe_xtf_info *in = &x->info;

	in->pid = m->pid;
	in->process_start_time = m->process_start_time;
	in->session_start_ns = m->session_start_ns;
	in->producer = m->producer;
	in->instance_id = m->instance_id;
	in->backend = m->backend;
	in->simulated = m->simulated;
	in->clock_source = m->clock->source;
	in->streams = m->n_streams;
	in->device = -1;
	if (m->device) {
		Xprobe__Xtf__DeviceProfile *d = m->device;

		in->key_space = d->key_space;
		in->device = d->has_device ? (int32_t)d->device : -1;
		in->session_id = d->has_session_id ? d->session_id : 0;
		in->model = d->model;
		in->filename = d->filename;
		in->execution_id = d->has_execution_id ? d->execution_id : 0;
		in->status = d->has_status ? d->status : 0;
		in->has_status = d->has_status;
		in->complete = d->complete;
		in->harvest_error = d->harvest_error;
	}
	if (m->info) {
		Xprobe__Xtf__TraceInfo *t = m->info;

		in->stop_reason = t->stop_reason;
		in->signal = t->has_signal ? t->signal : 0;
		in->host_events = t->host_events;
		in->host_dropped = t->host_dropped;
		in->fetched_events = t->fetched_events;
		in->threads = t->threads;
		in->threads_without_ring = t->threads_without_ring;
		in->files = t->n_files;
		in->notes = t->n_notes;
		in->complete = t->complete;
	}
}

XPROBE_API int xprobe_xtf_open_mem(const void *data, size_t len, struct xprobe_xtf **out, char *err,
				   size_t errlen)
{
	const uint8_t *p = data;
	struct xpl_xtf_header h;
	struct xprobe_xtf *x = NULL;
	uint64_t expect_blob_off, pos;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!out || (!data && len))
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "data and out must not be NULL");
	*out = NULL;
	if (len < XPROBE_XTF_HEADER_SIZE)
		return xpl_xtf_reject(
			err, errlen, "truncated: %zu bytes, shorter than the 128-byte header", len);
	if (memcmp(p, XPL_XTF_MAGIC, 8))
		return xpl_xtf_reject(err, errlen, "not an .xtf file (bad magic)");
	if (xpl_get_u32(p + 124) != xpl_crc32c(0, p, 124))
		return xpl_xtf_reject(err, errlen, "header checksum mismatch");
	h.version_major = xpl_get_u16(p + 8);
	h.version_minor = xpl_get_u16(p + 10);
	h.header_size = xpl_get_u32(p + 12);
	h.flags = xpl_get_u32(p + 16);
	h.kind = xpl_get_u32(p + 20);
	h.meta_offset = xpl_get_u64(p + 24);
	h.meta_length = xpl_get_u64(p + 32);
	h.blob_offset = xpl_get_u64(p + 40);
	h.blob_length = xpl_get_u64(p + 48);
	h.file_length = xpl_get_u64(p + 56);
	h.meta_crc = xpl_get_u32(p + 64);
	h.blob_crc = xpl_get_u32(p + 68);
	h.record_format = xpl_get_u32(p + 72);
	h.record_header_size = xpl_get_u32(p + 76);
	if (h.version_major != XPROBE_XTF_VERSION_MAJOR ||
	    h.version_minor > XPROBE_XTF_VERSION_MINOR)
		return xpl_xtf_reject(err, errlen,
				      "format version %u.%u is not supported (this reader: %d.%d)",
				      h.version_major, h.version_minor, XPROBE_XTF_VERSION_MAJOR,
				      XPROBE_XTF_VERSION_MINOR);
	if (h.header_size != XPROBE_XTF_HEADER_SIZE)
		return xpl_xtf_reject(err, errlen, "header size %u, expected 128", h.header_size);
	for (int i = 88; i < 124; i++)
		if (p[i])
			return xpl_xtf_reject(err, errlen, "reserved header byte %d is not zero",
					      i);
	if (h.flags & ~XPROBE_XTF_F__ALL)
		return xpl_xtf_reject(err, errlen, "unknown header flags 0x%x", h.flags);
	if (h.kind < XPROBE_XTF_DEVICE_PROFILE || h.kind > XPROBE_XTF_HOST_MEM)
		return xpl_xtf_reject(err, errlen, "unknown file kind %u", h.kind);
	if (h.record_format != XPL_XTF_RECORD_FORMAT ||
	    h.record_header_size != XPROBE_RECORD_HDR_SIZE)
		return xpl_xtf_reject(err, errlen, "record format %u/%u is not 1/40",
				      h.record_format, h.record_header_size);
	if (h.file_length != len)
		return xpl_xtf_reject(err, errlen,
				      "truncated or extended: header says %llu bytes, file has %zu",
				      (unsigned long long)h.file_length, len);
	if (h.meta_offset != XPROBE_XTF_HEADER_SIZE || h.meta_length == 0 ||
	    h.meta_length > len - XPROBE_XTF_HEADER_SIZE)
		return xpl_xtf_reject(
			err, errlen, "metadata section %llu+%llu does not fit the file",
			(unsigned long long)h.meta_offset, (unsigned long long)h.meta_length);
	expect_blob_off = XPL_ALIGN8(XPROBE_XTF_HEADER_SIZE + h.meta_length);
	if (h.blob_offset != expect_blob_off || h.blob_offset > len ||
	    h.blob_length != len - h.blob_offset)
		return xpl_xtf_reject(
			err, errlen,
			"blob section %llu+%llu does not follow the metadata to the end",
			(unsigned long long)h.blob_offset, (unsigned long long)h.blob_length);
	for (pos = h.meta_offset + h.meta_length; pos < h.blob_offset; pos++)
		if (p[pos])
			return xpl_xtf_reject(err, errlen,
					      "padding byte %llu after the metadata is not zero",
					      (unsigned long long)pos);
	if (xpl_crc32c(0, p + h.meta_offset, h.meta_length) != h.meta_crc)
		return xpl_xtf_reject(err, errlen, "metadata checksum mismatch");
	if (xpl_crc32c(0, p + h.blob_offset, h.blob_length) != h.blob_crc)
		return xpl_xtf_reject(err, errlen, "blob checksum mismatch");

	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->buf = malloc(len);
	if (!x->buf) {
		rc = -ENOMEM;
		goto fail;
	}
	memcpy(x->buf, p, len);
	x->len = len;
	x->info.sz = sizeof(x->info);
	x->info.kind = h.kind;
	x->info.flags = h.flags;
	x->info.version_major = h.version_major;
	x->info.version_minor = h.version_minor;
	x->meta = (Xprobe__Xtf__Capture *)protobuf_c_message_unpack(
		&xprobe__xtf__capture__descriptor, NULL, h.meta_length, x->buf + h.meta_offset);
	if (!x->meta) {
		rc = xpl_xtf_reject(err, errlen,
				    "metadata is not a valid Capture message (or lacks a required "
				    "field)");
		goto fail;
	}
	if (!known_fields_only(&x->meta->base)) {
		rc = xpl_xtf_reject(err, errlen,
				    "metadata carries fields this reader does not know");
		goto fail;
	}
	rc = check_meta(x, err, errlen);
	if (rc)
		goto fail;
	fill_info_from_meta(x);

	/* streams: in order, back to back, covering the blob section exactly */
	x->nstreams = x->meta->n_streams;
	x->streams = calloc(x->nstreams ? x->nstreams : 1, sizeof(*x->streams));
	if (!x->streams) {
		rc = -ENOMEM;
		goto fail;
	}
	pos = 0;
	for (size_t i = 0; i < x->nstreams; i++) {
		Xprobe__Xtf__Stream *s = x->meta->streams[i];
		uint64_t nrec = 0;

		if (s->offset != pos || s->length > h.blob_length - pos) {
			rc = xpl_xtf_reject(err, errlen,
					    "stream %zu at %llu+%llu does not follow stream %zu", i,
					    (unsigned long long)s->offset,
					    (unsigned long long)s->length, i ? i - 1 : 0);
			goto fail;
		}
		rc = xpl_xtf_check_stream(h.kind, x->buf + h.blob_offset + pos, s->length, &nrec,
					  err, errlen);
		if (rc) {
			xpl_xtf_err_append(err, errlen, " (stream %zu)", i);
			goto fail;
		}
		if (nrec != s->records) {
			rc = xpl_xtf_reject(
				err, errlen, "stream %zu holds %llu records, metadata says %llu", i,
				(unsigned long long)nrec, (unsigned long long)s->records);
			goto fail;
		}
		x->streams[i].tid = s->tid;
		x->streams[i].device = s->has_device ? (int32_t)s->device : -1;
		x->streams[i].records = s->records;
		x->streams[i].dropped = s->dropped;
		x->streams[i].data = x->buf + h.blob_offset + pos;
		x->streams[i].len = s->length;
		x->info.records += s->records;
		x->info.dropped += s->dropped;
		pos += s->length;
	}
	if (pos != h.blob_length) {
		rc = xpl_xtf_reject(err, errlen, "%llu blob bytes belong to no stream",
				    (unsigned long long)(h.blob_length - pos));
		goto fail;
	}
	*out = x;
	return 0;
fail:
	xpl_xtf_free(x);
	if (rc == -XPROBE_E_FORMAT)
		errno = XPROBE_E_FORMAT;
	return rc;
}

static int xtf_open(const char *path, int oflags, struct xprobe_xtf **out, char *err, size_t errlen)
{
	uint8_t *buf = NULL;
	uint64_t size = 0;
	ssize_t got;
	int fd, rc;

	if (err && errlen)
		err[0] = '\0';
	if (!path || !out)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "path and out must not be NULL");
	*out = NULL;
	rc = xpl_xtf_open_regular(path, oflags, &fd, &size, err, errlen);
	if (rc)
		return rc;
	if (size > SIZE_MAX - 1) {
		close(fd);
		return xpl_xtf_reject(err, errlen, "%llu bytes do not fit in memory",
				      (unsigned long long)size);
	}
	buf = malloc(size ? (size_t)size : 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	got = xpl_read_full(fd, buf, (size_t)size);
	close(fd);
	if (got < 0) {
		free(buf);
		return xpl_errf(err, errlen, (int)got, "cannot read: %s", strerror((int)-got));
	}
	rc = xprobe_xtf_open_mem(buf, (size_t)got, out, err, errlen);
	free(buf);
	return rc;
}

XPROBE_API int xprobe_xtf_open_file(const char *path, struct xprobe_xtf **out, char *err,
				    size_t errlen)
{
	return xtf_open(path, 0, out, err, errlen);
}

int xpl_xtf_open_entry(const char *path, struct xprobe_xtf **out, char *err, size_t errlen)
{
	return xtf_open(path, O_NOFOLLOW, out, err, errlen);
}

XPROBE_API int xprobe_xtf_get_info(const struct xprobe_xtf *x, struct xprobe_xtf_info *info)
{
	size_t n;

	if (!x || !info || info->sz < offsetofend(struct xprobe_xtf_info, streams))
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,
				"handle and info must be set, info.sz at least up to 'streams'");
	n = info->sz < sizeof(*info) ? info->sz : sizeof(*info);
	memcpy((char *)info + sizeof(size_t), (const char *)&x->info + sizeof(size_t),
	       n - sizeof(size_t));
	return 0;
}

XPROBE_API int xprobe_xtf_get_stream(const struct xprobe_xtf *x, size_t i,
				     struct xprobe_xtf_stream *out)
{
	if (!x || !out || i >= x->nstreams)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "no stream %zu", i);
	*out = x->streams[i];
	return 0;
}

XPROBE_API const struct xprobe_record *xprobe_xtf_next_record(const struct xprobe_xtf_stream *s,
							      size_t *cursor)
{
	if (!s || !cursor)
		return NULL;
	while (*cursor + 8 <= s->len) {
		const struct xprobe_record *r = (const void *)(s->data + *cursor);

		*cursor += r->size;
		if (r->type != XPROBE_EV_PAD)
			return r;
	}
	return NULL;
}

XPROBE_API int xprobe_xtf_get_file(const struct xprobe_xtf *x, size_t i, const char **name,
				   uint32_t *kind, uint64_t *size)
{
	Xprobe__Xtf__FileEntry *f;

	if (!x || !x->meta || !x->meta->info || i >= x->meta->info->n_files)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "no file entry %zu", i);
	f = x->meta->info->files[i];
	if (name)
		*name = f->name;
	if (kind)
		*kind = (uint32_t)f->kind;
	if (size)
		*size = f->size;
	return 0;
}

XPROBE_API const char *xprobe_xtf_get_note(const struct xprobe_xtf *x, size_t i)
{
	if (!x || !x->meta || !x->meta->info || i >= x->meta->info->n_notes)
		return NULL;
	return x->meta->info->notes[i];
}
