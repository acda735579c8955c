/* SPDX-License-Identifier: Apache-2.0 */
/*
 * capfile.h - the Agent's saved capture (capfile.c): XPROBE_AGENT_OUTPUT
 * arms a capture at load and the capture is written as a file
 * (include/xprobe/agent.h, struct xprobe_agent_capfile) at exit, at
 * xprobe_agent_output_flush() or on a fatal signal.  What the rest of
 * libxprobe calls: the control socket asks whether it must refuse an ARM.
 * The crash handlers (lib/inspect/, below) reach it only through the
 * signal hook it sets while armed (xpl_crash_set_signal_hook).
 */
#ifndef XPL_AGENT_CAPFILE_H
#define XPL_AGENT_CAPFILE_H

#include <stdbool.h>

/*
 * Is the XPROBE_AGENT_OUTPUT capture armed (or being written) in this
 * process?  Then it holds the one published capture and a control-socket
 * ARM is refused with ALREADY_ACTIVE (server.c); *path (may be NULL)
 * receives the output path.
 */
bool xpl_capfile_busy(const char **path);

#endif /* XPL_AGENT_CAPFILE_H */
