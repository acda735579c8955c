/* SPDX-License-Identifier: Apache-2.0 */
/*
 * env.c - the environment door: XPROBE_INSPECT_* variables into a config
 * (xpl_config_from_env, used by xprobe_inspect_begin), and the constructor
 * that begins a session when the library is loaded into a process whose
 * environment asks for one (LD_PRELOAD, NVTX injection, plain linking).
 *
 * docs/environment.md is the list.  A variable that cannot be parsed is an
 * error naming it: the session does not begin and the log says why, rather
 * than a half-understood configuration running silently.
 *
 * The door is shut to privileged processes: every variable is read with
 * secure_getenv, which answers NULL when the process is AT_SECURE (setuid,
 * setgid, file capabilities, an LSM transition), so a user who runs a
 * privileged program cannot make libxprobe inside it record, or create
 * files where that user chooses.  Such a process records only what it
 * asks for itself through the API.
 *
 * When loaded by the NVTX loader the constructor runs inside the
 * application's first NVTX call (the loader dlopens us lazily), so the
 * session begins there, not at process start; preloading the library as
 * well makes it begin at start (docs/environment.md).
 */
#include <stdio.h>
#include <stdlib.h>

#include "../internal.h"
#include "config.h"
#include "parse.h"
#include "xprobe/inspect.h"

static int bad(const char *var, const char *val, const char *why)
{
	return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "%s=%s: %s", var, val, why);
}

static int env_bool(const char *var, bool *out)
{
	const char *v = secure_getenv(var);

	if (!v)
		return 1;
	if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "on"))
		*out = true;
	else if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "off") ||
		 !v[0])
		*out = false;
	else
		return bad(var, v, "expected 1/0, true/false, yes/no or on/off");
	return 0;
}

static int env_u64(const char *var, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *v = secure_getenv(var);
	char why[96];

	if (!v)
		return 1;
	if (xpc_parse_u64(v, min, max, out) != 0) {
		snprintf(why, sizeof(why), "expected a decimal number in %llu..%llu",
			 (unsigned long long)min, (unsigned long long)max);
		return bad(var, v, why);
	}
	return 0;
}

/* Split @buf in place at commas: the next token, or NULL at the end. */
static char *next_token(char **cursor)
{
	char *tok = *cursor, *comma;

	if (!tok)
		return NULL;
	comma = strchr(tok, ',');
	if (comma) {
		*comma = '\0';
		*cursor = comma + 1;
	} else {
		*cursor = NULL;
	}
	return tok;
}

/* "all" or a comma list of N and N-M (0..255) into a 256-entry map. */
static int parse_devices(const char *var, const char *v, uint8_t map[XPROBE_MAX_DEVICES])
{
	char buf[1024], *cur = buf;

	if (!strcmp(v, "all")) {
		memset(map, 1, XPROBE_MAX_DEVICES);
		return 0;
	}
	if (strlen(v) >= sizeof(buf) || !v[0])
		return bad(var, v, "expected 'all' or a list like 0,2,4-7");
	memcpy(buf, v, strlen(v) + 1);
	memset(map, 0, XPROBE_MAX_DEVICES);
	for (char *tok = next_token(&cur); tok; tok = next_token(&cur)) {
		char *dash = strchr(tok, '-');
		uint64_t a, b;

		if (dash)
			*dash = '\0';
		if (xpc_parse_u64(tok, 0, XPROBE_MAX_DEVICES - 1, &a) != 0)
			return bad(var, v, "device numbers are 0..255");
		b = a;
		if (dash && (xpc_parse_u64(dash + 1, 0, XPROBE_MAX_DEVICES - 1, &b) != 0 || b < a))
			return bad(var, v, "a range is N-M with N <= M <= 255");
		for (uint64_t d = a; d <= b; d++)
			map[d] = 1;
	}
	return 0;
}

static void map_to_bits(const uint8_t map[XPROBE_MAX_DEVICES], uint64_t bits[4])
{
	memset(bits, 0, 4 * sizeof(uint64_t));
	for (unsigned d = 0; d < XPROBE_MAX_DEVICES; d++)
		if (map[d])
			bits[d / 64] |= 1ull << (d % 64);
}

/* A comma list of names, each applied with @set (true). */
static int name_list(const char *var, const char *v, struct xprobe_inspect_config *c,
		     int (*set)(struct xprobe_inspect_config *, const char *, bool))
{
	char buf[1024], *cur = buf;
	int rc;

	if (strlen(v) >= sizeof(buf))
		return bad(var, v, "too long");
	memcpy(buf, v, strlen(v) + 1);
	for (char *tok = next_token(&cur); tok; tok = next_token(&cur)) {
		rc = set(c, tok, true);
		if (rc)
			return xpl_fail(rc, "%s=%s: %s", var, v, xprobe_last_error());
	}
	return 0;
}

int xpl_config_from_env(struct xprobe_inspect_config *c)
{
	const char *v;
	uint64_t u;
	bool b;
	int rc;

	if ((rc = env_bool("XPROBE_INSPECT_ENABLE", &b)) < 0)
		return rc;
	if (rc == 0)
		c->enable = b;
	if ((rc = env_bool("XPROBE_INSPECT_ON_FAIL", &b)) < 0)
		return rc;
	if (rc == 0)
		c->on_fail = b;
	v = secure_getenv("XPROBE_INSPECT_OUTPUT_DIR");
	if (v && (rc = xprobe_inspect_config_set_output_dir(c, v)))
		return xpl_fail(rc, "XPROBE_INSPECT_OUTPUT_DIR: %s", xprobe_last_error());
	v = secure_getenv("XPROBE_INSPECT_ACTIVITIES");
	if (v) {
		int mode = c->mode;

		c->activities = 0;
		rc = name_list("XPROBE_INSPECT_ACTIVITIES", v, c,
			       xprobe_inspect_config_set_activity);
		if (rc)
			return rc;
		/* device_profile alone keeps an explicit mode set below */
		if (!(c->activities & XPROBE_ACT_DEVICE_PROFILE))
			c->mode = XPROBE_DEVICE_PROFILE_DISABLED;
		else if (mode != XPROBE_DEVICE_PROFILE_DISABLED)
			c->mode = mode;
	}
	v = secure_getenv("XPROBE_INSPECT_DEVICE_PROFILE");
	if (v) {
		int mode;

		if (!strcmp(v, "model"))
			mode = XPROBE_DEVICE_PROFILE_MODEL;
		else if (!strcmp(v, "session"))
			mode = XPROBE_DEVICE_PROFILE_SESSION;
		else if (!strcmp(v, "disabled") || !v[0])
			mode = XPROBE_DEVICE_PROFILE_DISABLED;
		else
			return bad("XPROBE_INSPECT_DEVICE_PROFILE", v,
				   "expected model, session or disabled");
		xprobe_inspect_config_set_device_profile_mode(c, mode);
	}
	v = secure_getenv("XPROBE_INSPECT_DEVICES");
	if (v && (rc = parse_devices("XPROBE_INSPECT_DEVICES", v, c->devices)))
		return rc;
	v = secure_getenv("XPROBE_INSPECT_EVENT_TYPES");
	if (v) {
		c->type_mask = 0;
		rc = name_list("XPROBE_INSPECT_EVENT_TYPES", v, c,
			       xprobe_inspect_config_set_capture_enabled_for_event_type);
		if (rc)
			return rc;
	}
	v = secure_getenv("XPROBE_INSPECT_BACKEND");
	if (v && v[0]) {
		struct xprobe_backend_opts o = c->bopts;

		if (strcmp(v, "sim") && strcmp(v, "cupti"))
			return bad("XPROBE_INSPECT_BACKEND", v, "expected sim or cupti");
		if ((rc = env_u64("XPROBE_INSPECT_SIM_CORES", 1, XPROBE_MAX_DEVICES, &u)) < 0)
			return rc;
		if (rc == 0)
			o.sim_cores = (uint32_t)u;
		if ((rc = env_u64("XPROBE_INSPECT_SIM_RECORDS", 1, 64, &u)) < 0)
			return rc;
		if (rc == 0)
			o.sim_records_per_exec = (uint32_t)u;
		if ((v = secure_getenv("XPROBE_INSPECT_SIM_FAIL_ARM"))) {
			uint8_t map[XPROBE_MAX_DEVICES];

			if ((rc = parse_devices("XPROBE_INSPECT_SIM_FAIL_ARM", v, map)))
				return rc;
			map_to_bits(map, o.sim_fail_arm);
		}
		if ((v = secure_getenv("XPROBE_INSPECT_SIM_FAIL_HARVEST"))) {
			uint8_t map[XPROBE_MAX_DEVICES];

			if ((rc = parse_devices("XPROBE_INSPECT_SIM_FAIL_HARVEST", v, map)))
				return rc;
			map_to_bits(map, o.sim_fail_harvest);
		}
		rc = xprobe_inspect_config_set_backend(c, secure_getenv("XPROBE_INSPECT_BACKEND"),
						       &o);
		if (rc)
			return xpl_fail(rc, "XPROBE_INSPECT_BACKEND: %s", xprobe_last_error());
	}
	if ((rc = env_u64("XPROBE_INSPECT_RING_EVENTS", 1024, 1ull << 26, &u)) < 0)
		return rc;
	if (rc == 0)
		c->ring_events = u;
	if ((rc = env_u64("XPROBE_INSPECT_MAX_THREADS", 1, 4096, &u)) < 0)
		return rc;
	if (rc == 0)
		c->max_threads = (uint32_t)u;
	if ((rc = env_u64("XPROBE_INSPECT_MONITOR_PERIOD_MS", 10, 3600000, &u)) < 0)
		return rc;
	if (rc == 0)
		c->monitor_period_ms = (uint32_t)u;
	if ((rc = env_u64("XPROBE_INSPECT_WARMUP", 0, 1000000, &u)) < 0)
		return rc;
	if (rc == 0)
		c->warmup = (uint32_t)u;
	v = secure_getenv("XPROBE_INSPECT_SESSION_ID");
	if (v) {
		int64_t id;

		if (xpc_parse_i64(v, INT64_MIN, INT64_MAX, &id) != 0)
			return bad("XPROBE_INSPECT_SESSION_ID", v, "expected a decimal integer");
		c->session_id = id;
	}
	v = secure_getenv("XPROBE_INSPECT_INSTANCE_ID");
	if (v && (rc = xprobe_inspect_config_set_instance_id(c, v)))
		return xpl_fail(rc, "XPROBE_INSPECT_INSTANCE_ID=%s: %s", v, xprobe_last_error());
	v = secure_getenv("XPROBE_INSPECT_RING_BACKING");
	if (v) {
		if (!strcmp(v, "file"))
			c->ring_backing = XPROBE_RING_FILE;
		else if (!strcmp(v, "anon"))
			c->ring_backing = XPROBE_RING_ANON;
		else
			return bad("XPROBE_INSPECT_RING_BACKING", v, "expected file or anon");
	}
	v = secure_getenv("XPROBE_INSPECT_CLOCK");
	if (v && strcmp(v, "auto") && strcmp(v, "tsc") && strcmp(v, "monotonic"))
		return bad("XPROBE_INSPECT_CLOCK", v, "expected auto, tsc or monotonic");
	return 0;
}

/*
 * Begin a session at load when XPROBE_INSPECT_ENABLE or _ON_FAIL asks for
 * one.  Priority 102: after the log level (101).
 */
__attribute__((constructor(102))) static void inspect_from_env(void)
{
	bool en = false, of = false;
	int rc;

	if (env_bool("XPROBE_INSPECT_ENABLE", &en) < 0 ||
	    env_bool("XPROBE_INSPECT_ON_FAIL", &of) < 0) {
		pr_warn("inspect session not begun: %s", xprobe_last_error());
		return;
	}
	if (!en && !of)
		return;
	rc = xprobe_inspect_begin();
	if (rc) {
		char why[128];

		xprobe_strerror(rc, why, sizeof(why));
		pr_warn("inspect session not begun: %s (%s)", xprobe_last_error(), why);
	}
}
