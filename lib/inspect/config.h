/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.h - the inspect options bag (struct xprobe_inspect_config) as the
 * library sees it, the registry that tells a live bag from a freed or
 * foreign pointer, and the environment parser (inspect/env.c).
 */
#ifndef XPL_CONFIG_H
#define XPL_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "xprobe/inspect.h"
#include "xprobe/record.h"

#define XPL_OUTPUT_DIR_MAX 3072
#define XPL_DEFAULT_RING_EVENTS 65536
#define XPL_DEFAULT_MAX_THREADS 256
#define XPL_DEFAULT_MONITOR_MS 1000
#define XPL_DEFAULT_ACTIVITIES \
	(XPROBE_ACT_SYSTEM_PROFILE | XPROBE_ACT_CPU_UTIL | XPROBE_ACT_HOST_MEMORY)
/* every host type but the pad */
#define XPL_ALL_TYPES (((1ull << XPROBE_EV__COUNT) - 1) & ~1ull)

struct xprobe_inspect_config {
	int64_t session_id;
	char output_dir[XPL_OUTPUT_DIR_MAX];
	uint32_t activities; /* enum xprobe_activity bits */
	int mode; /* enum xprobe_device_profile_mode */
	uint8_t devices[XPROBE_MAX_DEVICES]; /* 1 = captured */
	uint64_t type_mask; /* bit per enum xprobe_event_type */
	uint64_t ring_events;
	uint32_t max_threads;
	uint32_t monitor_period_ms;
	bool enable;
	bool on_fail;
	uint32_t warmup;
	char backend[16]; /* "" = none */
	struct xprobe_backend_opts bopts; /* sz = sizeof in this build */
	char instance_id[64];
	int ring_backing; /* enum xprobe_ring_backing */
};

/* Defaults (xprobe_inspect_config_new's list). */
void xpl_config_defaults(struct xprobe_inspect_config *c);
/* Is @c a bag allocated by xprobe_inspect_config_new and not yet freed? */
bool xpl_config_live(const struct xprobe_inspect_config *c);
/* Apply the XPROBE_INSPECT_* environment to @c.  Returns 0 or
 * -XPROBE_E_INVALID_ARGUMENT / -XPROBE_E_UNKNOWN_NAME naming the variable. */
int xpl_config_from_env(struct xprobe_inspect_config *c);
/* Ring bytes for @events (events * 64, next power of two). */
uint64_t xpl_ring_bytes(uint64_t events);

#endif /* XPL_CONFIG_H */
