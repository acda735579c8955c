/* SPDX-License-Identifier: Apache-2.0 */
/*
 * error.c - names and descriptions of enum xprobe_err.
 *
 * Both functions are switches with no default case, after curl's
 * curl_easy_strerror: with -Wswitch the build fails when a code is added
 * without a name and a description.  Shared by libxprobe and the CLI.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "xprobe/error.h"

XPROBE_API const char *xprobe_errname(int err)
{
	enum xprobe_err e = (enum xprobe_err)(err < 0 ? -err : err);

	if (err != 0 && (err < 0 ? -err : err) < 4000)
		return "ERRNO";
	switch (e) {
	case XPROBE_OK: return "OK";
	case XPROBE_E_PERMISSION_DENIED: return "PERMISSION_DENIED";
	case XPROBE_E_TARGET_NOT_FOUND: return "TARGET_NOT_FOUND";
	case XPROBE_E_TARGET_EXITED: return "TARGET_EXITED";
	case XPROBE_E_TARGET_REUSED: return "TARGET_REUSED";
	case XPROBE_E_AMBIGUOUS_TARGET: return "AMBIGUOUS_TARGET";
	case XPROBE_E_SYMBOL_NOT_FOUND: return "SYMBOL_NOT_FOUND";
	case XPROBE_E_BINARY_NOT_MAPPED: return "BINARY_NOT_MAPPED";
	case XPROBE_E_INVALID_EVENT_SELECTOR: return "INVALID_EVENT_SELECTOR";
	case XPROBE_E_INVALID_CORRELATION_POLICY: return "INVALID_CORRELATION_POLICY";
	case XPROBE_E_CUPTI_NOT_AVAILABLE: return "CUPTI_NOT_AVAILABLE";
	case XPROBE_E_CUPTI_AGENT_NOT_LOADED: return "CUPTI_AGENT_NOT_LOADED";
	case XPROBE_E_CUDA_CONTEXT_NOT_FOUND: return "CUDA_CONTEXT_NOT_FOUND";
	case XPROBE_E_UNSUPPORTED_CUDA_VERSION: return "UNSUPPORTED_CUDA_VERSION";
	case XPROBE_E_EVENT_RATE_TOO_HIGH: return "EVENT_RATE_TOO_HIGH";
	case XPROBE_E_SESSION_LIMIT_EXCEEDED: return "SESSION_LIMIT_EXCEEDED";
	case XPROBE_E_NO_MATCHED_SAMPLES: return "NO_MATCHED_SAMPLES";
	case XPROBE_E_HIGH_UNMATCHED_RATE: return "HIGH_UNMATCHED_RATE";
	case XPROBE_E_EVENTS_DROPPED: return "EVENTS_DROPPED";
	case XPROBE_E_CLOCK_ALIGNMENT_FAILED: return "CLOCK_ALIGNMENT_FAILED";
	case XPROBE_E_TRACE_EXPORT_FAILED: return "TRACE_EXPORT_FAILED";
	case XPROBE_E_CLEANUP_FAILED: return "CLEANUP_FAILED";
	case XPROBE_E_INTERNAL: return "INTERNAL";
	case XPROBE_E_MISUSE: return "MISUSE";
	case XPROBE_E_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
	case XPROBE_E_UNKNOWN_NAME: return "UNKNOWN_NAME";
	case XPROBE_E_RESERVED_OUTPUT_DIR: return "RESERVED_OUTPUT_DIR";
	case XPROBE_E_ALREADY_ACTIVE: return "ALREADY_ACTIVE";
	case XPROBE_E_NOT_ACTIVE: return "NOT_ACTIVE";
	case XPROBE_E_CONTINUOUS_CONFLICT: return "CONTINUOUS_CONFLICT";
	case XPROBE_E_NO_SUCH_SESSION: return "NO_SUCH_SESSION";
	case XPROBE_E_DEVICE_FAILED: return "DEVICE_FAILED";
	case XPROBE_E_BACKEND_UNAVAILABLE: return "BACKEND_UNAVAILABLE";
	case XPROBE_E_OUTPUT_FAILED: return "OUTPUT_FAILED";
	case XPROBE_E_FORMAT: return "FORMAT";
	case XPROBE_E_TRUNCATED: return "TRUNCATED";
	case XPROBE_E_OUTPUT_NOT_DIRECTORY: return "OUTPUT_NOT_DIRECTORY";
	case XPROBE_E__LAST: break;
	}
	return "UNKNOWN";
}

static const char *describe(enum xprobe_err e)
{
	switch (e) {
	case XPROBE_OK: return "success";
	case XPROBE_E_PERMISSION_DENIED: return "permission denied for inspection, eBPF or ptrace";
	case XPROBE_E_TARGET_NOT_FOUND: return "target process not found";
	case XPROBE_E_TARGET_EXITED: return "target process exited";
	case XPROBE_E_TARGET_REUSED: return "target PID was reused by another process";
	case XPROBE_E_AMBIGUOUS_TARGET: return "selector resolves to several addresses";
	case XPROBE_E_SYMBOL_NOT_FOUND: return "symbol not found";
	case XPROBE_E_BINARY_NOT_MAPPED: return "binary not mapped by the target";
	case XPROBE_E_INVALID_EVENT_SELECTOR: return "invalid event selector";
	case XPROBE_E_INVALID_CORRELATION_POLICY: return "invalid correlation policy";
	case XPROBE_E_CUPTI_NOT_AVAILABLE: return "CUPTI collection is not available";
	case XPROBE_E_CUPTI_AGENT_NOT_LOADED: return "the xprobe Agent is not loaded in the target";
	case XPROBE_E_CUDA_CONTEXT_NOT_FOUND: return "CUDA context not found";
	case XPROBE_E_UNSUPPORTED_CUDA_VERSION: return "unsupported CUDA version";
	case XPROBE_E_EVENT_RATE_TOO_HIGH: return "event rate exceeded the capture bound";
	case XPROBE_E_SESSION_LIMIT_EXCEEDED: return "invalid or exceeded session limit";
	case XPROBE_E_NO_MATCHED_SAMPLES: return "no event pairs matched";
	case XPROBE_E_HIGH_UNMATCHED_RATE: return "too many unmatched events";
	case XPROBE_E_EVENTS_DROPPED: return "events were dropped";
	case XPROBE_E_CLOCK_ALIGNMENT_FAILED: return "clock domains cannot be aligned";
	case XPROBE_E_TRACE_EXPORT_FAILED: return "trace read, decode or export failed";
	case XPROBE_E_CLEANUP_FAILED: return "cleanup failed";
	case XPROBE_E_INTERNAL: return "internal error";
	case XPROBE_E_MISUSE: return "API misuse (NULL, closed or out-of-order handle)";
	case XPROBE_E_INVALID_ARGUMENT: return "invalid argument";
	case XPROBE_E_UNKNOWN_NAME: return "unknown name";
	case XPROBE_E_RESERVED_OUTPUT_DIR: return "output directory name is reserved";
	case XPROBE_E_ALREADY_ACTIVE: return "already active";
	case XPROBE_E_NOT_ACTIVE: return "not active";
	case XPROBE_E_CONTINUOUS_CONFLICT: return "continuous and inspect device profiling exclude each other";
	case XPROBE_E_NO_SUCH_SESSION: return "no such profile session";
	case XPROBE_E_DEVICE_FAILED: return "device backend failed";
	case XPROBE_E_BACKEND_UNAVAILABLE: return "device backend unavailable";
	case XPROBE_E_OUTPUT_FAILED: return "writing output failed";
	case XPROBE_E_FORMAT: return "malformed or truncated data";
	case XPROBE_E_TRUNCATED: return "buffer too small";
	case XPROBE_E_OUTPUT_NOT_DIRECTORY: return "output path exists and is not a directory";
	case XPROBE_E__LAST: break;
	}
	return NULL;
}

XPROBE_API int xprobe_strerror(int err, char *buf, size_t size)
{
	int e = err < 0 ? -err : err;
	const char *msg = NULL;
	char tmp[128];
	int n;

	if (!buf || size == 0)
		return -XPROBE_E_TRUNCATED;
	if (e != 0 && e < 4000) {
		/* GNU strerror_r may return a static string instead of filling tmp. */
		msg = strerror_r(e, tmp, sizeof(tmp));
	} else {
		msg = describe((enum xprobe_err)e);
		if (!msg) {
			snprintf(tmp, sizeof(tmp), "unknown error %d", e);
			msg = tmp;
		}
	}
	n = snprintf(buf, size, "%s", msg);
	return n < 0 || (size_t)n >= size ? -XPROBE_E_TRUNCATED : 0;
}
