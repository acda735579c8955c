/* SPDX-License-Identifier: Apache-2.0 */
/*
 * perf_map_file.c - may xprobe read the target's perf map (perf_map_file.h)?
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "../../common/json.h"
#include "../../common/readfile.h"
#include "../model/error_record.h"
#include "perf_map_file.h"
#include "procfs.h"

const char *xp_perf_map_refusal_name(enum xp_perf_map_refusal r)
{
	switch (r) {
	case XP_PERF_MAP_ACCEPTED:
		return "accepted";
	case XP_PERF_MAP_SYMLINK:
		return "symlink";
	case XP_PERF_MAP_NOT_REGULAR:
		return "not_regular_file";
	case XP_PERF_MAP_FOREIGN_OWNER:
		return "foreign_owner";
	case XP_PERF_MAP_TOO_LARGE:
		return "too_large";
	}
	return "accepted";
}

void xp_perf_map_owners_of(uint32_t pid, struct xp_perf_map_owners *o)
{
	struct xp_proc_status st;

	memset(o, 0, sizeof(*o));
	if (xp_proc_status_read(pid, &st) != 0 || !st.has_uid)
		return;
	o->uid[o->n++] = st.uid[1];
	if (st.uid[3] != st.uid[1])
		o->uid[o->n++] = st.uid[3];
}

int xp_perf_map_open(const char *path, const struct xp_perf_map_owners *owners,
		     struct xp_perf_map_file *f)
{
	struct stat sb;
	bool trusted;
	size_t i;
	int fd;

	memset(f, 0, sizeof(*f));
	memset(&sb, 0, sizeof(sb));
	fd = xpc_file_open(path, XPC_FILE_NOFOLLOW, &sb);
	if (fd == -ELOOP) {
		f->refusal = XP_PERF_MAP_SYMLINK;
		f->mode = S_IFLNK;
		return -EPERM;
	}
	if (fd == -XPC_EFTYPE || fd == -EISDIR) {
		f->refusal = XP_PERF_MAP_NOT_REGULAR;
		f->mode = (uint32_t)sb.st_mode;
		f->uid = (uint32_t)sb.st_uid;
		return -EPERM;
	}
	if (fd < 0)
		return fd;
	f->mode = (uint32_t)sb.st_mode;
	f->uid = (uint32_t)sb.st_uid;
	f->size = (uint64_t)sb.st_size;
	trusted = !owners || sb.st_uid == 0;
	for (i = 0; owners && i < owners->n && !trusted; i++)
		trusted = sb.st_uid == owners->uid[i];
	if (!trusted)
		f->refusal = XP_PERF_MAP_FOREIGN_OWNER;
	else if ((uint64_t)sb.st_size > XP_PERF_MAP_MAX_BYTES)
		f->refusal = XP_PERF_MAP_TOO_LARGE;
	if (f->refusal) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

void xp_perf_map_refusal_text(const struct xp_perf_map_file *f, const struct xp_perf_map_owners *o,
			      char *buf, size_t size)
{
	switch (f->refusal) {
	case XP_PERF_MAP_SYMLINK:
		snprintf(buf, size, "it is a symbolic link, which xprobe does not follow");
		return;
	case XP_PERF_MAP_NOT_REGULAR:
		snprintf(buf, size, "it is a %s, not a regular file",
			 xpc_file_type_name((mode_t)f->mode));
		return;
	case XP_PERF_MAP_FOREIGN_OWNER:
		if (o->n)
			snprintf(buf, size,
				 "it is owned by uid %u, neither root nor the target's uid %u",
				 f->uid, o->uid[0]);
		else
			snprintf(buf, size,
				 "it is owned by uid %u, not root, and the target's uid is unknown",
				 f->uid);
		return;
	case XP_PERF_MAP_TOO_LARGE:
		snprintf(buf, size, "it is %" PRIu64 " bytes, over the %llu-byte bound", f->size,
			 (unsigned long long)XP_PERF_MAP_MAX_BYTES);
		return;
	case XP_PERF_MAP_ACCEPTED:
		break;
	}
	snprintf(buf, size, "it was not accepted");
}

int xp_perf_map_refused_warning(struct xp_warnings *ws, const char *path,
				const struct xp_perf_map_file *f,
				const struct xp_perf_map_owners *o, const char *tail)
{
	struct xpc_buf b = XPC_BUF_INIT;
	struct xpc_json w;
	char why[160], msg[512];
	size_t i;
	int rc;

	xp_perf_map_refusal_text(f, o, why, sizeof(why));
	snprintf(msg, sizeof(msg), "the target's perf map %s was not read: %s; %s", path, why,
		 tail);
	xpc_json_init_buf(&w, &b, 0);
	xpc_json_obj_begin(&w);
	xpc_json_karr_begin(&w, "allowed_owner_uids");
	xpc_json_u64(&w, 0);
	for (i = 0; i < o->n; i++)
		if (o->uid[i] != 0)
			xpc_json_u64(&w, o->uid[i]);
	xpc_json_arr_end(&w);
	xpc_json_kstr(&w, "file_type",
		      f->refusal == XP_PERF_MAP_SYMLINK ? "symlink" :
							  xpc_file_type_name((mode_t)f->mode));
	xpc_json_kopt_u64(&w, "file_uid", f->refusal != XP_PERF_MAP_SYMLINK, f->uid);
	xpc_json_kstr(&w, "path", path);
	xpc_json_kstr(&w, "reason", xp_perf_map_refusal_name(f->refusal));
	xpc_json_kopt_u64(&w, "size_bytes",
			  f->refusal == XP_PERF_MAP_TOO_LARGE ||
				  f->refusal == XP_PERF_MAP_FOREIGN_OWNER,
			  f->size);
	xpc_json_ku64(&w, "size_limit_bytes", XP_PERF_MAP_MAX_BYTES);
	xpc_json_obj_end(&w);
	rc = xpc_json_finish(&w);
	if (!rc && !xpc_buf_ok(&b))
		rc = -ENOMEM;
	if (!rc)
		rc = xp_warnings_add(ws, "PERF_MAP_REFUSED", msg, xpc_buf_str(&b));
	xpc_buf_free(&b);
	return rc;
}
