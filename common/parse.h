/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parse.h - the one way the project turns outside text into numbers.
 * No atoi/strtol elsewhere: they are banned here (docs/development.md,
 * "Conventions").
 */
#ifndef XPC_PARSE_H
#define XPC_PARSE_H

#include <stddef.h>
#include <stdint.h>

/*
 * The largest millisecond count any time bound may hold (--timeout-ms,
 * --duration-ms, a MeasurementSpec's timeout_ms/duration_ms): its
 * nanoseconds fit in an int64_t (about 292 years), so `ms * 1000000`, a
 * deadline `CLOCK_MONOTONIC now + ns` and a timespec's signed tv_sec
 * never wrap.  Larger values are refused where they are parsed, never
 * saturated, so the bound a caller wrote is the bound that runs.
 */
#define XPC_MS_MAX ((uint64_t)INT64_MAX / 1000000u)

/*
 * Parse a whole string as an unsigned decimal in [min, max].
 * Leading '+', '-', whitespace and trailing bytes are rejected.
 * Return: 0, -EINVAL (not a number), -ERANGE (outside [min, max]).
 */
int xpc_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* Same for "0x" hexadecimal (prefix required, case-insensitive digits). */
int xpc_parse_hex_u64(const char *s, uint64_t *out);
/*
 * The hex digits (no prefix, either case) at the start of @s, at most @max
 * bytes: the one hex loop behind xpc_parse_hex_u64 and the field readers
 * of /proc/<pid>/maps and perf maps.  Stops at the first byte that is not
 * a hex digit (a NUL included) and sets *used to the digits read.
 * Return: 0, -EINVAL (no digit), -ERANGE (the value needs over 64 bits).
 */
int xpc_parse_hex_span(const char *s, size_t max, uint64_t *out, size_t *used);
/* Same for a signed decimal in [min, max]. */
int xpc_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);

#endif /* XPC_PARSE_H */
