/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.c - the inspect options bag: allocation with documented defaults,
 * one setter per field, the activity name <-> bit map, and the registry of
 * live bags.
 *
 * The registry is why a freed or foreign pointer gets -XPROBE_E_MISUSE
 * instead of a crash: every setter checks membership (pointer comparison
 * only, never a dereference) under a small lock before touching the bag.
 * The original controller's bag (docs/seed-mapping.md) is a plain C++
 * object; passing it freed is undefined behaviour there.
 *
 * The activity names are a static table: the map is built once, at compile
 * time (the original builds a hash map in a static initializer).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../internal.h"
#include "config.h"

static const char *const activity_names[] = {
	"system_profile", "device_profile", "host_memory", "cpu_util", "all",
};
static const uint32_t activity_bits[] = {
	XPROBE_ACT_SYSTEM_PROFILE,
	XPROBE_ACT_DEVICE_PROFILE,
	XPROBE_ACT_HOST_MEMORY,
	XPROBE_ACT_CPU_UTIL,
	XPROBE_ACT_ALL,
};

#define XPL_MAX_LIVE_CONFIGS 1024
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct xprobe_inspect_config *live[XPL_MAX_LIVE_CONFIGS];

/* Replace the registry entry @from with @to (NULL: a free entry); false
 * when there is no such entry (a full registry, or @from not live). */
static bool reg_swap(const struct xprobe_inspect_config *from,
		     const struct xprobe_inspect_config *to)
{
	bool found = false;

	pthread_mutex_lock(&reg_lock);
	for (size_t i = 0; i < XPL_MAX_LIVE_CONFIGS && !found; i++)
		if (live[i] == from) {
			live[i] = to;
			found = true;
		}
	pthread_mutex_unlock(&reg_lock);
	return found;
}

bool xpl_config_live(const struct xprobe_inspect_config *c)
{
	return c && reg_swap(c, c);
}

uint64_t xpl_ring_bytes(uint64_t events)
{
	uint64_t b = events * 64, p = 4096;

	while (p < b)
		p <<= 1;
	return p;
}

static void default_instance_id(char *dst, size_t size)
{
	char host[256];
	size_t k = 0;

	if (gethostname(host, sizeof(host)) != 0)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	for (size_t i = 0; host[i] && k + 1 < size; i++) {
		char c = host[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '_' || c == '-')
			dst[k++] = c;
	}
	dst[k] = '\0';
	if (!k)
		snprintf(dst, size, "localhost");
}

void xpl_config_defaults(struct xprobe_inspect_config *c)
{
	memset(c, 0, sizeof(*c));
	c->activities = XPL_DEFAULT_ACTIVITIES;
	c->mode = XPROBE_DEVICE_PROFILE_DISABLED;
	memset(c->devices, 1, sizeof(c->devices));
	c->type_mask = XPL_ALL_TYPES;
	c->ring_events = XPL_DEFAULT_RING_EVENTS;
	c->max_threads = XPL_DEFAULT_MAX_THREADS;
	c->monitor_period_ms = XPL_DEFAULT_MONITOR_MS;
	c->enable = true;
	c->bopts.sz = sizeof(c->bopts);
	default_instance_id(c->instance_id, sizeof(c->instance_id));
	c->ring_backing = XPROBE_RING_FILE;
}

XPROBE_API int xprobe_inspect_config_new(struct xprobe_inspect_config **out)
{
	struct xprobe_inspect_config *c;

	if (!out)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "out must not be NULL");
	*out = NULL;
	c = malloc(sizeof(*c));
	if (!c)
		return xpl_fail(-ENOMEM, "out of memory allocating a config");
	xpl_config_defaults(c);
	if (!reg_swap(NULL, c)) {
		free(c);
		return xpl_fail(-ENOMEM, "more than %d configs are alive", XPL_MAX_LIVE_CONFIGS);
	}
	*out = c;
	return 0;
}

XPROBE_API void xprobe_inspect_config_free(struct xprobe_inspect_config *cfg)
{
	if (cfg && reg_swap(cfg, NULL))
		free(cfg);
}

#define CHECK_CFG(cfg)                                                           \
	do {                                                                     \
		if (!xpl_config_live(cfg))                                       \
			return xpl_fail(-XPROBE_E_MISUSE,                        \
					"%s: config is NULL, freed or not from " \
					"xprobe_inspect_config_new",             \
					__func__);                               \
	} while (0)

XPROBE_API int xprobe_inspect_config_set_session_id(struct xprobe_inspect_config *cfg, int64_t id)
{
	CHECK_CFG(cfg);
	cfg->session_id = id;
	return 0;
}

XPROBE_API int xprobe_inspect_config_set_output_dir(struct xprobe_inspect_config *cfg,
						    const char *dir)
{
	CHECK_CFG(cfg);
	if (!dir)
		dir = "";
	if (strlen(dir) >= XPL_OUTPUT_DIR_MAX)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,
				"output dir is %zu bytes; at most %d are allowed", strlen(dir),
				XPL_OUTPUT_DIR_MAX - 1);
	snprintf(cfg->output_dir, sizeof(cfg->output_dir), "%s", dir);
	return 0;
}

XPROBE_API int xprobe_inspect_activity_names(const char *const **names, size_t *count)
{
	if (!names || !count)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "names and count must not be NULL");
	*names = activity_names;
	*count = XPL_ARRAY_SIZE(activity_names);
	return 0;
}

XPROBE_API int xprobe_inspect_activity_from_name(const char *name, uint32_t *bit)
{
	if (!name || !bit)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "name and bit must not be NULL");
	for (size_t i = 0; i < XPL_ARRAY_SIZE(activity_names); i++)
		if (!strcmp(name, activity_names[i])) {
			*bit = activity_bits[i];
			return 0;
		}
	return xpl_fail(-XPROBE_E_UNKNOWN_NAME,
			"unknown activity '%s' (system_profile, device_profile, host_memory, "
			"cpu_util, all)",
			name);
}

XPROBE_API const char *xprobe_inspect_activity_name(uint32_t bit)
{
	for (size_t i = 0; i < XPL_ARRAY_SIZE(activity_bits); i++)
		if (activity_bits[i] == bit)
			return activity_names[i];
	return NULL;
}

XPROBE_API int xprobe_inspect_config_set_activity(struct xprobe_inspect_config *cfg,
						  const char *name, bool enable)
{
	uint32_t bit;
	int rc;

	CHECK_CFG(cfg);
	if (!name)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "activity name must not be NULL");
	rc = xprobe_inspect_activity_from_name(name, &bit);
	if (rc)
		return rc;
	if (enable)
		cfg->activities |= bit;
	else
		cfg->activities &= ~bit;
	if ((bit & XPROBE_ACT_DEVICE_PROFILE) && enable &&
	    cfg->mode == XPROBE_DEVICE_PROFILE_DISABLED)
		cfg->mode = XPROBE_DEVICE_PROFILE_SESSION;
	if ((bit & XPROBE_ACT_DEVICE_PROFILE) && !enable)
		cfg->mode = XPROBE_DEVICE_PROFILE_DISABLED;
	return 0;
}

XPROBE_API int xprobe_inspect_config_get_activities(const struct xprobe_inspect_config *cfg,
						    uint32_t *mask)
{
	CHECK_CFG(cfg);
	if (!mask)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "mask must not be NULL");
	*mask = cfg->activities;
	return 0;
}

XPROBE_API int xprobe_inspect_config_set_device_profile_mode(struct xprobe_inspect_config *cfg,
							     int mode)
{
	CHECK_CFG(cfg);
	switch (mode) {
	case XPROBE_DEVICE_PROFILE_DISABLED:
		cfg->activities &= ~(uint32_t)XPROBE_ACT_DEVICE_PROFILE;
		break;
	case XPROBE_DEVICE_PROFILE_MODEL:
	case XPROBE_DEVICE_PROFILE_SESSION:
		cfg->activities |= XPROBE_ACT_DEVICE_PROFILE;
		break;
	default:
		return xpl_fail(
			-XPROBE_E_INVALID_ARGUMENT,
			"device profile mode %d is not DISABLED (0), MODEL (1) or SESSION (2)",
			mode);
	}
	cfg->mode = mode;
	return 0;
}

XPROBE_API int
xprobe_inspect_config_set_capture_enabled_for_device(struct xprobe_inspect_config *cfg, int device,
						     bool enable)
{
	CHECK_CFG(cfg);
	if (device == -1) {
		memset(cfg->devices, enable, sizeof(cfg->devices));
		return 0;
	}
	if (device < 0 || device >= XPROBE_MAX_DEVICES)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,
				"device %d is outside 0..%d (or -1 for all)", device,
				XPROBE_MAX_DEVICES - 1);
	cfg->devices[device] = enable;
	return 0;
}

XPROBE_API int
xprobe_inspect_config_set_capture_enabled_for_event_type(struct xprobe_inspect_config *cfg,
							 const char *name, bool enable)
{
	uint32_t type;
	uint64_t bits;
	int rc;

	CHECK_CFG(cfg);
	if (!name)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "event type name must not be NULL");
	if (!strcmp(name, "all")) {
		bits = XPL_ALL_TYPES;
	} else {
		rc = xprobe_event_type_from_name(name, &type);
		if (rc)
			return rc;
		bits = 1ull << type;
	}
	if (enable)
		cfg->type_mask |= bits;
	else
		cfg->type_mask &= ~bits;
	return 0;
}

/*
 * The setters of a number with bounds: @lo..@hi or INVALID_ARGUMENT with
 * the sentence "<what> <v> is outside <lo> .. <hi>".
 */
#define RANGED_SETTER(fn, type, field, what, lo, hi)                                     \
	XPROBE_API int fn(struct xprobe_inspect_config *cfg, type v)                     \
	{                                                                                \
		CHECK_CFG(cfg);                                                          \
		if ((uint64_t)v - (lo) > (uint64_t)(hi) - (lo)) /* v outside lo..hi */   \
			return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,                      \
					"%s %llu is outside %llu .. %llu", what,         \
					(unsigned long long)v, (unsigned long long)(lo), \
					(unsigned long long)(hi));                       \
		cfg->field = v;                                                          \
		return 0;                                                                \
	}

RANGED_SETTER(xprobe_inspect_config_set_ring_events, uint64_t, ring_events, "ring events", 1024,
	      1ull << 26)
RANGED_SETTER(xprobe_inspect_config_set_max_threads, uint32_t, max_threads, "max threads", 1, 4096)
RANGED_SETTER(xprobe_inspect_config_set_monitor_period_ms, uint32_t, monitor_period_ms,
	      "monitor period (ms)", 10, 3600000)
RANGED_SETTER(xprobe_inspect_config_set_warmup, uint32_t, warmup, "warm-up", 0, 1000000)

XPROBE_API int xprobe_inspect_config_set_enable(struct xprobe_inspect_config *cfg, bool enable)
{
	CHECK_CFG(cfg);
	cfg->enable = enable;
	return 0;
}

XPROBE_API int xprobe_inspect_config_set_enable_on_fail(struct xprobe_inspect_config *cfg,
							bool enable)
{
	CHECK_CFG(cfg);
	cfg->on_fail = enable;
	return 0;
}

XPROBE_API int xprobe_inspect_config_set_backend(struct xprobe_inspect_config *cfg,
						 const char *name,
						 const struct xprobe_backend_opts *opts)
{
	CHECK_CFG(cfg);
	if (!name || !name[0]) {
		cfg->backend[0] = '\0';
		memset(&cfg->bopts, 0, sizeof(cfg->bopts));
		cfg->bopts.sz = sizeof(cfg->bopts);
		return 0;
	}
	if (strcmp(name, "sim") && strcmp(name, "cupti"))
		return xpl_fail(-XPROBE_E_UNKNOWN_NAME, "unknown backend '%s' (sim, cupti)", name);
	if (!OPTS_VALID(opts, xprobe_backend_opts))
		return xpl_fail(
			-XPROBE_E_INVALID_ARGUMENT,
			"backend opts: sz %zu is too small or unknown trailing fields are set",
			opts->sz);
	if (OPTS_GET(opts, sim_cores, 0) > XPROBE_MAX_DEVICES)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "sim_cores %u is above %d",
				opts->sim_cores, XPROBE_MAX_DEVICES);
	if (OPTS_GET(opts, sim_records_per_exec, 0) > 64)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "sim_records_per_exec %u is above 64",
				opts->sim_records_per_exec);
	snprintf(cfg->backend, sizeof(cfg->backend), "%s", name);
	memset(&cfg->bopts, 0, sizeof(cfg->bopts));
	if (opts)
		memcpy(&cfg->bopts, opts,
		       opts->sz < sizeof(cfg->bopts) ? opts->sz : sizeof(cfg->bopts));
	cfg->bopts.sz = sizeof(cfg->bopts);
	return 0;
}

XPROBE_API int xprobe_inspect_config_set_instance_id(struct xprobe_inspect_config *cfg,
						     const char *id)
{
	size_t n;

	CHECK_CFG(cfg);
	if (!id)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "instance id must not be NULL");
	n = strlen(id);
	if (n == 0 || n > 63)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "instance id must be 1..63 bytes");
	for (size_t i = 0; i < n; i++) {
		char c = id[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,
					"instance id byte %zu ('%c') is not [A-Za-z0-9._-]", i, c);
	}
	if (!strcmp(id, ".") || !strcmp(id, ".."))
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "instance id cannot be . or ..");
	snprintf(cfg->instance_id, sizeof(cfg->instance_id), "%s", id);
	return 0;
}

XPROBE_API int xprobe_inspect_config_set_ring_backing(struct xprobe_inspect_config *cfg,
						      int backing)
{
	CHECK_CFG(cfg);
	if (backing != XPROBE_RING_FILE && backing != XPROBE_RING_ANON)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT,
				"ring backing %d is not FILE (0) or ANON (1)", backing);
	cfg->ring_backing = backing;
	return 0;
}
