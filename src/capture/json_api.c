/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_api.c - the JSON decoder's functions as the rest of xprobe calls
 * them (decode_json.h), forwarded to the decoder's table: the one linked
 * in when a program said so with xp_json_use(), else the one of the
 * plugin lib/xprobe/xprobe-json.so, loaded on first use.
 *
 * Why a plugin: simdjson and the C++ runtime it needs cost every start of
 * the binary about 1.3 ms on our VMs (perf stat: a C hello world starts in
 * 1.5 ms, with libstdc++ and libsimdjson in 2.9 ms), while doctor,
 * discover, validate and the live measurements never parse JSON.  Only
 * `measure --input` and `--spec` do, and they pay the load once.
 *
 * $XPROBE_JSON_PLUGIN is read with secure_getenv and loaded only from a
 * path no other user can write (xpc_dlopen_trusted, common/env_hooks.h):
 * a root-run xprobe must not map a library someone else planted.
 *
 * Invariant: `api` is written once, under `once`, before any call goes
 * through it (xp_json_use() is for single-threaded start-up).
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/cancel.h"
#include "../../common/env_hooks.h"
#include "capture_io.h"
#include "decode_json.h"

#define PLUGIN_REL "/../lib/xprobe/xprobe-json.so"

static const struct xp_json_api *api;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char plugin_path[PATH_MAX + sizeof(PLUGIN_REL)];
static char load_error[512];
static bool plugin_from_env; /* $XPROBE_JSON_PLUGIN: loaded only if trusted */

void xp_json_use(const struct xp_json_api *a)
{
	api = a;
}

/* The plugin's path into plugin_path; false (with load_error) when the
 * executable's own path cannot be read. */
static bool find_plugin(void)
{
	const char *env = xpc_env("XPROBE_JSON_PLUGIN");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env) {
		snprintf(plugin_path, sizeof(plugin_path), "%s", env);
		plugin_from_env = true;
		return true;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		snprintf(plugin_path, sizeof(plugin_path), "." PLUGIN_REL);
		snprintf(load_error, sizeof(load_error),
			 "cannot read /proc/self/exe to find it: %s", strerror(errno));
		return false;
	}
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(plugin_path, sizeof(plugin_path), "%s%s", exe, PLUGIN_REL);
	return true;
}

static void load_plugin(void)
{
	xp_json_plugin_fn entry;
	const struct xp_json_api *a;
	void *h;

	if (api)
		return;
	if (!find_plugin())
		return;
	if (plugin_from_env) {
		/* a root-run xprobe loads no library another user can write */
		h = xpc_dlopen_trusted(plugin_path, RTLD_NOW | RTLD_LOCAL, "XPROBE_JSON_PLUGIN",
				       load_error, sizeof(load_error));
		if (!h)
			return;
	} else {
		h = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			snprintf(load_error, sizeof(load_error), "%s", dlerror());
			return;
		}
	}
	entry = (xp_json_plugin_fn)dlsym(h, XP_JSON_PLUGIN_ENTRY);
	if (!entry) {
		snprintf(load_error, sizeof(load_error), "no %s in it", XP_JSON_PLUGIN_ENTRY);
		dlclose(h);
		return;
	}
	a = entry();
	if (!a || a->abi != XP_JSON_API_ABI || a->size != sizeof(*a)) {
		snprintf(load_error, sizeof(load_error),
			 "it was built for another version of xprobe (interface %u, expected %u)",
			 a ? a->abi : 0, XP_JSON_API_ABI);
		dlclose(h);
		return;
	}
	/* one stop request for the binary and the plugin (common/cancel.h) */
	a->share_cancel(xpc_cancel_flag());
	api = a; /* the handle stays open for the life of the process */
}

int xp_json_ready(struct xp_error *err)
{
	pthread_once(&once, load_plugin);
	if (api)
		return 0;
	xp_error_detail_str(err, "plugin", plugin_path);
	xp_error_detail_str(err, "reason", load_error);
	if (strncmp(load_error, "refused:", 8) == 0)
		xp_error_hint(err, "XPROBE_JSON_PLUGIN must name a file owned by root or by you, "
				   "writable by its owner only, in a directory likewise; or unset it");
	xp_error_hint(err, "build it with `make build` (target xprobe_json), keep bin/ and "
			   "lib/xprobe/ side by side, or set XPROBE_JSON_PLUGIN to its path");
	return xp_error_set(err, XPROBE_E_INTERNAL, false,
			    "cannot load xprobe's JSON decoder %s: %s", plugin_path, load_error);
}

/* For the calls that have no xp_error: tests and the jdoc accessors,
 * which are only reached through a document the decoder made. */
static const struct xp_json_api *need(void)
{
	struct xp_error e = { 0 };

	if (xp_json_ready(&e)) {
		fprintf(stderr, "xprobe: %s\n", e.message);
		abort();
	}
	xp_error_clear(&e);
	return api;
}

int xp_decode_event_stream_fd_ex(int fd, const char *prefix, size_t prefix_len, const char *name,
				 struct xp_capture *c, unsigned flags,
				 struct xp_decode_stats *stats, struct xp_error *err)
{
	int rc = xp_json_ready(err);

	if (rc)
		return rc;
	return api->event_stream_fd_ex(fd, prefix, prefix_len, name, c, flags, stats, err);
}

int xp_decode_host_capture_padded(const char *buf, size_t len, const char *name,
				  struct xp_capture *c, unsigned flags,
				  struct xp_decode_stats *stats, struct xp_error *err)
{
	int rc = xp_json_ready(err);

	if (rc)
		return rc;
	return api->host_capture_padded(buf, len, name, c, flags, stats, err);
}

int xp_decode_event_stream(const char *data, size_t len, const char *name, struct xp_capture *c,
			   struct xp_error *err)
{
	int rc = xp_json_ready(err);

	if (rc)
		return rc;
	return api->event_stream(data, len, name, c, err);
}

/* The decoder's own wording (decode_json.cc). */
static int nomem(struct xp_error *err, const char *name)
{
	return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
			    "failed to decode %s: out of memory", name ? name : "input");
}

int xp_decode_event_stream_fd(int fd, const char *name, struct xp_capture *c, struct xp_error *err)
{
	return xp_decode_event_stream_fd_ex(fd, NULL, 0, name, c, 0, NULL, err);
}

int xp_decode_host_capture(const char *data, size_t len, const char *name, struct xp_capture *c,
			   struct xp_error *err)
{
	char *buf;
	int rc;

	if (len > SIZE_MAX - XP_JSON_PADDING)
		return nomem(err, name);
	buf = malloc(len + XP_JSON_PADDING);
	if (!buf)
		return nomem(err, name);
	if (len)
		memcpy(buf, data, len);
	memset(buf + len, 0, XP_JSON_PADDING);
	rc = xp_decode_host_capture_padded(buf, len, name, c, 0, NULL, err);
	free(buf);
	return rc;
}

void xp_decode_test_chunk_bytes(size_t bytes)
{
	need()->test_chunk_bytes(bytes);
}

void xp_decode_test_fastpath(int mode)
{
	need()->test_fastpath(mode);
}

void xp_decode_test_fast_stats(struct xp_decode_fast_stats *out)
{
	need()->test_fast_stats(out);
}

int xp_decode_test_fast_line(const char *line, size_t len, struct xp_capture *c)
{
	return need()->test_fast_line(line, len, c);
}

struct xp_jdoc *xp_jdoc_parse(const char *data, size_t len, char *why, size_t why_size)
{
	return need()->jdoc_parse(data, len, why, why_size);
}

void xp_jdoc_free(struct xp_jdoc *d)
{
	if (d)
		api->jdoc_free(d);
}

struct xp_jval xp_jdoc_root(const struct xp_jdoc *d)
{
	return api->jdoc_root(d);
}

enum xp_jtype xp_jval_type(struct xp_jval v)
{
	return api->jval_type(v);
}

const char *xp_jtype_name(enum xp_jtype t)
{
	switch (t) {
	case XP_J_NULL:
		return "null";
	case XP_J_BOOL:
		return "a boolean";
	case XP_J_INT:
	case XP_J_UINT:
		return "an integer";
	case XP_J_DOUBLE:
		return "a floating-point number";
	case XP_J_STRING:
		return "a string";
	case XP_J_ARRAY:
		return "an array";
	case XP_J_OBJECT:
		return "an object";
	}
	return "an unknown value";
}

bool xp_jval_bool(struct xp_jval v)
{
	return api->jval_bool(v);
}

int64_t xp_jval_i64(struct xp_jval v)
{
	return api->jval_i64(v);
}

uint64_t xp_jval_u64(struct xp_jval v)
{
	return api->jval_u64(v);
}

double xp_jval_f64(struct xp_jval v)
{
	return api->jval_f64(v);
}

const char *xp_jval_str(struct xp_jval v, size_t *len)
{
	return api->jval_str(v, len);
}

void xp_jobj_iter(struct xp_jval obj, struct xp_jiter *it)
{
	api->jobj_iter(obj, it);
}

bool xp_jobj_next(struct xp_jiter *it, const char **key, size_t *klen, struct xp_jval *val)
{
	return api->jobj_next(it, key, klen, val);
}
