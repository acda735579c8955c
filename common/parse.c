/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parse.c - strict decimal and hexadecimal parsing for flags, selectors and
 * /proc fields.  Hand-rolled digit loops (not strtoull) so that signs,
 * spaces and partial numbers are rejected rather than silently accepted.
 */
#include <errno.h>

#include "parse.h"

int xpc_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -EINVAL;
	for (; *s; s++) {
		unsigned d;

		if (*s < '0' || *s > '9')
			return -EINVAL;
		d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int xpc_parse_hex_span(const char *s, size_t max, uint64_t *out, size_t *used)
{
	uint64_t v = 0;
	size_t n;

	*used = 0;
	for (n = 0; n < max; n++) {
		unsigned d;

		if (s[n] >= '0' && s[n] <= '9')
			d = (unsigned)(s[n] - '0');
		else if (s[n] >= 'a' && s[n] <= 'f')
			d = (unsigned)(s[n] - 'a' + 10);
		else if (s[n] >= 'A' && s[n] <= 'F')
			d = (unsigned)(s[n] - 'A' + 10);
		else
			break;
		if (v >> 60)
			return -ERANGE;
		v = (v << 4) | d;
	}
	if (n == 0)
		return -EINVAL;
	*out = v;
	*used = n;
	return 0;
}

int xpc_parse_hex_u64(const char *s, uint64_t *out)
{
	size_t n;
	int rc;

	if (!s || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return -EINVAL;
	rc = xpc_parse_hex_span(s + 2, SIZE_MAX, out, &n);
	if (rc)
		return rc;
	return s[2 + n] == '\0' ? 0 : -EINVAL;
}

int xpc_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	uint64_t mag;
	int neg = 0, err;

	if (s && *s == '-') {
		neg = 1;
		s++;
	}
	err = xpc_parse_u64(s, 0, neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, &mag);
	if (err)
		return err;
	{
		int64_t v = neg ? (int64_t)(0 - mag) : (int64_t)mag;

		if (v < min || v > max)
			return -ERANGE;
		*out = v;
	}
	return 0;
}
