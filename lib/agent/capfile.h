/* SPDX-License-Identifier: Apache-2.0 */
/*
 * capfile.h - the Agent's saved capture (capfile.c): XPROBE_AGENT_OUTPUT
 * arms a capture at load and the capture is written as a file
 * (include/xprobe/agent.h, struct xprobe_agent_capfile) at exit, at
 * xprobe_agent_output_flush() or on a fatal signal.  What the rest of
 * libxprobe calls: the control socket asks whether it must refuse an ARM,
 * the crash handlers hand it the signal.
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

/*
 * A fatal signal (lib/inspect/crash_handlers.c, before the previous action
 * runs): write the armed capture now, async-signal-safely (no lock, no
 * allocation), with XPROBE_AGENT_CAPFILE_F_SIGNAL.  Nothing when none is
 * armed or it was written.
 */
void xpl_capfile_on_signal(int sig);

#endif /* XPL_AGENT_CAPFILE_H */
