/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprobe.h - the whole public API of libxprobe in one include.
 *
 *   error.h    the error enum shared with the CLI, xprobe_strerror
 *   common.h   XPROBE_OPTS, the log callback, xprobe_last_error
 *   inspect.h  sessions: options bag, begin/stop/close, executions, fetch
 *   profile.h  device profiles: MODEL, SESSION, continuous
 *   trace.h    direct recording calls (NVTX arrives by injection)
 *   record.h   the record layout of rings, .xtf blobs and fetch
 *   xtf.h      the .xtf and session-directory reader
 *   agent.h    the Agent's control socket (xprobe_agent_start) and wire ABI
 *
 * Link with -lxprobe.  docs/libxprobe.md is the reference.
 */
#ifndef XPROBE_XPROBE_H
#define XPROBE_XPROBE_H

#include "error.h"
#include "common.h"
#include "inspect.h"
#include "profile.h"
#include "trace.h"
#include "record.h"
#include "xtf.h"
#include "agent.h"

#endif /* XPROBE_XPROBE_H */
