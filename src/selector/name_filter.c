/* SPDX-License-Identifier: Apache-2.0 */
/*
 * name_filter.c - bounded name filters: reducing a name~REGEX to one
 * exact/prefix/suffix/contains literal, applying such a filter, and
 * escaping a literal back into a regex.
 *
 * Why: the CUDA Agent filters kernel and NVTX names on its hot path, where
 * no regex engine may run, so a selector that must be applied there (every
 * NVTX selector, aggregate kernels) has to reduce to one literal compare.
 * The reduction is syntactic and conservative: it accepts only regexes
 * whose meaning is exactly "equals/starts with/ends with/contains this
 * literal" (docs/contract.md, "Selectors": bounded name regex).
 *
 * Wrapper order matters only for which reading wins when several strip
 * cleanly; a wrapper whose inner text is not a pure literal (for example
 * "^a\.*", where the ".*" is really "\." followed by "*") is skipped and the
 * next is tried, so a dangling backslash can never smuggle a metacharacter
 * into a literal.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "selector.h"

struct wrapper {
	const char *prefix;
	const char *suffix;
	enum xp_name_match match;
};

static const struct wrapper wrappers[] = {
	{ "^", "$", XP_NAME_EXACT },	{ "^", ".*", XP_NAME_PREFIX },
	{ ".*", "$", XP_NAME_SUFFIX },	{ ".*", ".*", XP_NAME_CONTAINS },
	{ "^", "", XP_NAME_PREFIX },	{ "", "$", XP_NAME_SUFFIX },
	{ ".*", "", XP_NAME_CONTAINS }, { "", "", XP_NAME_CONTAINS },
};

static const char *const any_forms[] = { ".*", "^.*", ".*$", "^.*$" };

static bool is_meta(char ch)
{
	return ch && strchr(".+*?()|[]{}^$", ch) != NULL;
}

static bool is_alnum_ascii(unsigned char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static void say(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!why || !size)
		return;
	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
}

/*
 * Unescape @n bytes of @s (at offset @base of the regex) into @out when
 * they are a pure literal.
 * Returns the literal length, -1 (not a literal; reason in @why) or
 * -2 (a literal, but too long; reason in @why).
 */
static int unescape_literal(const char *s, size_t n, size_t base, char out[XP_NAME_FILTER_MAX],
			    char *why, size_t why_size)
{
	size_t i, len = 0;

	for (i = 0; i < n; i++) {
		char ch = s[i];

		if (ch == '\\') {
			unsigned char next;

			if (i + 1 == n) {
				say(why, why_size, "trailing backslash");
				return -1;
			}
			next = (unsigned char)s[++i];
			if (next >= 0x80 || is_alnum_ascii(next)) {
				say(why, why_size, "\\%c is not a literal escape", next);
				return -1;
			}
			ch = (char)next;
		} else if (is_meta(ch)) {
			say(why, why_size, "unescaped metacharacter '%c' at offset %zu", ch,
			    base + i);
			return -1;
		}
		if (len + 1 >= XP_NAME_FILTER_MAX) {
			/* keep scanning: a later metacharacter is the better reason */
			len++;
			continue;
		}
		out[len++] = ch;
	}
	if (len >= XP_NAME_FILTER_MAX) {
		say(why, why_size, "literal is %zu bytes; at most %d are allowed", len,
		    XP_NAME_FILTER_MAX - 1);
		return -2;
	}
	out[len] = '\0';
	return (int)len;
}

int xp_name_filter_reduce(const char *regex, struct xp_name_filter *out, char *why, size_t why_size)
{
	char reason[128] = "", first[128] = "", best[128] = "";
	size_t n, i;

	memset(out, 0, sizeof(*out));
	if (!regex) {
		say(why, why_size, "no name expression");
		return -EINVAL;
	}
	n = strlen(regex);
	for (i = 0; i < sizeof(any_forms) / sizeof(any_forms[0]); i++) {
		if (strcmp(regex, any_forms[i]) == 0) {
			out->match = XP_NAME_ANY;
			return 0;
		}
	}
	for (i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++) {
		const struct wrapper *w = &wrappers[i];
		size_t pl = strlen(w->prefix), sl = strlen(w->suffix);
		int len;

		if (n < pl + sl || strncmp(regex, w->prefix, pl) != 0 ||
		    strcmp(regex + n - sl, w->suffix) != 0)
			continue;
		len = unescape_literal(regex + pl, n - pl - sl, pl, out->literal, reason,
				       sizeof(reason));
		if (len == -2) {
			memcpy(best, reason, sizeof(best));
			continue;
		}
		if (len < 0) {
			/* the first reading explains best, unless its "trailing
			 * backslash" only comes from stripping a suffix */
			if (!first[0] && (sl == 0 || strcmp(reason, "trailing backslash") != 0))
				memcpy(first, reason, sizeof(first));
			continue;
		}
		if (len == 0) {
			snprintf(best, sizeof(best), "the literal is empty");
			continue;
		}
		out->match = w->match;
		out->len = (uint8_t)len;
		return 0;
	}
	memset(out, 0, sizeof(*out));
	/* a wrapper that stripped to a pure literal that is empty or too long
	 * explains best; else the first wrapper that applied */
	say(why, why_size, "%s", best[0] ? best : first[0] ? first : reason);
	return -EINVAL;
}

bool xp_name_filter_match(const struct xp_name_filter *f, const char *name, size_t n)
{
	size_t l = f->len;

	switch (f->match) {
	case XP_NAME_ANY:
		return true;
	case XP_NAME_EXACT:
		return n == l && memcmp(name, f->literal, l) == 0;
	case XP_NAME_PREFIX:
		return n >= l && memcmp(name, f->literal, l) == 0;
	case XP_NAME_SUFFIX:
		return n >= l && memcmp(name + n - l, f->literal, l) == 0;
	case XP_NAME_CONTAINS:
		return memmem(name, n, f->literal, l) != NULL;
	}
	return false;
}

const char *xp_name_match_name(enum xp_name_match m)
{
	switch (m) {
	case XP_NAME_ANY:
		return "any";
	case XP_NAME_EXACT:
		return "exact";
	case XP_NAME_PREFIX:
		return "prefix";
	case XP_NAME_SUFFIX:
		return "suffix";
	case XP_NAME_CONTAINS:
		return "contains";
	}
	return "unknown";
}

char *xp_regex_escape(const char *literal)
{
	size_t n = 0, i;
	const char *p;
	char *out;

	for (p = literal; *p; p++)
		n += (*p == '\\' || is_meta(*p)) ? 2 : 1;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	for (p = literal, i = 0; *p; p++) {
		if (*p == '\\' || is_meta(*p))
			out[i++] = '\\';
		out[i++] = *p;
	}
	out[i] = '\0';
	return out;
}
