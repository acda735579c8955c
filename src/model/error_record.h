/* SPDX-License-Identifier: Apache-2.0 */
/*
 * error_record.h - the CLI's error record (struct xp_error) and warnings.
 *
 * Every CLI module reports failure by returning -XPROBE_E_* (or -errno) and
 * filling a caller-provided struct xp_error with the contract's fields:
 * code, message, recoverable, details (a JSON object; keys are rendered in
 * alphabetical order, as the reference documents do), hints.  The struct
 * is the curl "error buffer" of the CLI: the renderer prints it when set.
 * Modules never print.
 *
 * Warnings (struct xp_warnings) are the non-fatal companion: code, message,
 * details, in emission order.
 */
#ifndef XP_MODEL_ERROR_RECORD_H
#define XP_MODEL_ERROR_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xprobe/error.h"

struct xpc_json;

#define XP_ERR_MAX_DETAILS 32
#define XP_ERR_MAX_HINTS 8
#define XP_ERR_MESSAGE_MAX 1024

struct xp_error_detail {
	char *key;  /* owned */
	char *json; /* owned compact JSON value text */
};

struct xp_error {
	int code;         /* positive enum xprobe_err; 0 = no error recorded */
	bool recoverable; /* contract "recoverable" */
	char message[XP_ERR_MESSAGE_MAX];
	struct xp_error_detail details[XP_ERR_MAX_DETAILS];
	size_t ndetails;
	char *hints[XP_ERR_MAX_HINTS]; /* owned */
	size_t nhints;
};

/*
 * Record an error (replacing code/message/recoverable, keeping details and
 * hints already added) and return -code, so callers can write
 * `return xp_error_set(err, XPROBE_E_..., true, "...")`.
 * @e may be NULL (the code is still returned).
 */
int xp_error_set(struct xp_error *e, int code, bool recoverable, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Prefix the current message with "<prefix>: ". */
void xp_error_prefix(struct xp_error *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void xp_error_detail_str(struct xp_error *e, const char *key, const char *val);
void xp_error_detail_u64(struct xp_error *e, const char *key, uint64_t val);
void xp_error_detail_i64(struct xp_error *e, const char *key, int64_t val);
void xp_error_detail_bool(struct xp_error *e, const char *key, bool val);
void xp_error_detail_null(struct xp_error *e, const char *key);
/* @json: a compact JSON value the caller built (e.g. an array). */
void xp_error_detail_raw(struct xp_error *e, const char *key, const char *json);
void xp_error_detail_strv(struct xp_error *e, const char *key, const char *const *v, size_t n);
const char *xp_error_detail_get(const struct xp_error *e, const char *key);
void xp_error_hint(struct xp_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Free owned storage and zero the record. */
void xp_error_clear(struct xp_error *e);
/* Move @src into @dst (dst cleared first). */
void xp_error_move(struct xp_error *dst, struct xp_error *src);

/* The contract's exit code for an error code (1, 3 or 4). */
int xp_exit_code(int code);

/* Render the "error" object's body fields into an open object. */
void xp_error_render_fields(const struct xp_error *e, struct xpc_json *w);

/*
 * A phase that stopped on the stop request (common/cancel.h): records
 * INTERNAL "<what>: cancelled by signal N" -- the command replaces it with
 * its cancelled document -- and returns -ECANCELED.
 */
int xp_error_cancelled(struct xp_error *e, const char *what);

/* EVENT_RATE_TOO_HIGH for an input (@name) that held @observed events
 * against a bound of @max_events: the wording every decoder shares. */
int xp_error_event_limit(struct xp_error *err, const char *name, uint64_t observed,
			 uint64_t max_events);

struct xp_warning {
	char *code;    /* owned, e.g. "HEURISTIC_CORRELATION" */
	char *message; /* owned */
	char *details; /* owned compact JSON object text, NULL = {} */
};

struct xp_warnings {
	struct xp_warning *v;
	size_t n, cap;
};

/* Append a warning; @details_json may be NULL. Returns 0 or -ENOMEM. */
int xp_warnings_add(struct xp_warnings *ws, const char *code, const char *message,
		    const char *details_json);
/* Append a warning whose details are the (const char *key, uint64_t value)
 * pairs that follow @message, ended by a NULL key.  0 or -ENOMEM. */
int xp_warnings_add_u64(struct xp_warnings *ws, const char *code, const char *message, ...);
bool xp_warnings_has(const struct xp_warnings *ws, const char *code);
void xp_warnings_free(struct xp_warnings *ws);
/* Render as a JSON array value (after a key). */
void xp_warnings_render(const struct xp_warnings *ws, struct xpc_json *w);

#endif /* XP_MODEL_ERROR_RECORD_H */
