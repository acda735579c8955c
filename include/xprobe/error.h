/* SPDX-License-Identifier: Apache-2.0 */
/*
 * error.h - the one error enum of xprobe, shared by libxprobe and the CLI.
 *
 * Every function of the project that can fail returns 0 on success or a
 * negative number: either -errno (a system error, values below 4000) or
 * -XPROBE_E_* (one of ours, values from 4000 up, after libbpf's convention).
 * xprobe_strerror() accepts either sign.
 *
 * The first block of codes is the CLI contract's error catalogue: each one
 * has a stable SCREAMING_SNAKE name (xprobe_errname) that appears verbatim in
 * the "code" field of JSON error documents, in the order of the reference
 * schema.  The second block is libxprobe's own API codes; they never appear
 * in a CLI document.
 *
 * Append only.  Never renumber or remove a code: a retired one becomes
 * XPROBE_E_OBSOLETEnnnn.
 */
#ifndef XPROBE_ERROR_H
#define XPROBE_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef XPROBE_API
#define XPROBE_API __attribute__((visibility("default")))
#endif

enum xprobe_err {
	XPROBE_OK = 0,
	/* --- the CLI contract's catalogue (4000-4099) --- */
	XPROBE_E_PERMISSION_DENIED = 4000,
	XPROBE_E_TARGET_NOT_FOUND = 4001,
	XPROBE_E_TARGET_EXITED = 4002,
	XPROBE_E_TARGET_REUSED = 4003,
	XPROBE_E_AMBIGUOUS_TARGET = 4004,
	XPROBE_E_SYMBOL_NOT_FOUND = 4005,
	XPROBE_E_BINARY_NOT_MAPPED = 4006,
	XPROBE_E_INVALID_EVENT_SELECTOR = 4007,
	XPROBE_E_INVALID_CORRELATION_POLICY = 4008,
	XPROBE_E_CUPTI_NOT_AVAILABLE = 4009,
	XPROBE_E_CUPTI_AGENT_NOT_LOADED = 4010,
	XPROBE_E_CUDA_CONTEXT_NOT_FOUND = 4011,
	XPROBE_E_UNSUPPORTED_CUDA_VERSION = 4012,
	XPROBE_E_EVENT_RATE_TOO_HIGH = 4013,
	XPROBE_E_SESSION_LIMIT_EXCEEDED = 4014,
	XPROBE_E_NO_MATCHED_SAMPLES = 4015,
	XPROBE_E_HIGH_UNMATCHED_RATE = 4016,
	XPROBE_E_EVENTS_DROPPED = 4017,
	XPROBE_E_CLOCK_ALIGNMENT_FAILED = 4018,
	XPROBE_E_TRACE_EXPORT_FAILED = 4019,
	XPROBE_E_CLEANUP_FAILED = 4020,
	XPROBE_E_INTERNAL = 4021,
	/* --- libxprobe API codes (4100-4199) --- */
	XPROBE_E_MISUSE = 4100,          /* NULL, freed or closed handle; call out of order */
	XPROBE_E_INVALID_ARGUMENT = 4101, /* a value outside its documented range */
	XPROBE_E_UNKNOWN_NAME = 4102,    /* activity or event-type name not known */
	XPROBE_E_RESERVED_OUTPUT_DIR = 4103, /* output dir is a reserved name */
	XPROBE_E_ALREADY_ACTIVE = 4104,  /* a session / profile is already running */
	XPROBE_E_NOT_ACTIVE = 4105,      /* nothing to stop, save or serialize */
	XPROBE_E_CONTINUOUS_CONFLICT = 4106, /* continuous vs inspect device profiling */
	XPROBE_E_NO_SUCH_SESSION = 4107, /* SESSION profile id not stashed */
	XPROBE_E_DEVICE_FAILED = 4108,   /* a backend failed to arm or harvest */
	XPROBE_E_BACKEND_UNAVAILABLE = 4109, /* backend not built or not usable here */
	XPROBE_E_OUTPUT_FAILED = 4110,   /* writing the output tree failed */
	XPROBE_E_FORMAT = 4111,          /* malformed or truncated .xtf / record data */
	XPROBE_E_TRUNCATED = 4112,       /* caller buffer too small */
	XPROBE_E_OUTPUT_NOT_DIRECTORY = 4113, /* output dir exists and is not a directory (/dev/null) */
	XPROBE_E__LAST                   /* never use */
};

/**
 * xprobe_errname() - the stable name of a code ("TARGET_REUSED").
 * @err: a code of either sign.
 *
 * Return: a static string; "ERRNO" for system errors, "UNKNOWN" otherwise.
 */
XPROBE_API const char *xprobe_errname(int err);

/**
 * xprobe_strerror() - describe a code in words.
 * @err: a code of either sign (errno values are passed to strerror_r).
 * @buf: caller buffer.
 * @size: its size in bytes.
 *
 * Return: 0, or -XPROBE_E_TRUNCATED when @buf was too small (it still holds a
 * NUL-terminated prefix).
 */
XPROBE_API int xprobe_strerror(int err, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* XPROBE_ERROR_H */
