/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracefs.c - named tracepoints exist when tracefs says so:
 * <root>/events/<category>/<name>/id.  The root is /sys/kernel/tracing,
 * or $XPROBE_TRACEFS_ROOT for tests (an unmounted directory, or a private
 * tracefs mount), so both states are tested without unmounting the
 * system's tracefs under other users' feet.
 *
 * "Mounted" means <root>/events exists: an unmounted /sys/kernel/tracing
 * is an empty directory.  Syscall selectors do not come here: they attach
 * to raw tracepoints, which need no tracefs.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../common/env_hooks.h"
#include "../../common/parse.h"
#include "../../common/suggest.h"
#include "../process/procfs.h"
#include "resolve.h"
#include "tracefs.h"
#include "xelf.h"

#define MAX_SUGGESTIONS 3

const char *xp_tracefs_root(void)
{
	/* a test hook: honoured only in XPROBE_TEST_HOOKS builds */
	const char *r = xpc_test_hook_env("XPROBE_TRACEFS_ROOT");

	return r && r[0] == '/' ? r : "/sys/kernel/tracing";
}

bool xp_tracefs_mounted(const char *root)
{
	char path[4200];
	struct stat st;

	snprintf(path, sizeof(path), "%s/events", root);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Whether /proc/self/mountinfo lists a tracefs mounted at @root. */
static bool listed_mounted(const char *root)
{
	char line[4096];
	bool yes = false;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return false;
	while (!yes && fgets(line, sizeof(line), f)) {
		/* id parent major:minor root mountpoint options... - fstype source ... */
		char *save = NULL, *tok = strtok_r(line, " ", &save);
		const char *mnt = NULL;
		int i;

		for (i = 1; tok && i < 5; i++)
			tok = strtok_r(NULL, " ", &save);
		mnt = tok;
		while (tok && strcmp(tok, "-") != 0)
			tok = strtok_r(NULL, " ", &save);
		tok = tok ? strtok_r(NULL, " ", &save) : NULL;
		yes = mnt && tok && strcmp(mnt, root) == 0 && strcmp(tok, "tracefs") == 0;
	}
	fclose(f);
	return yes;
}

enum xp_tracefs_state xp_tracefs_state(const char *root)
{
	char path[4200];
	struct stat st;

	snprintf(path, sizeof(path), "%s/events", root);
	if (stat(path, &st) == 0)
		return S_ISDIR(st.st_mode) ? XP_TRACEFS_READABLE : XP_TRACEFS_ABSENT;
	if (errno == EACCES || errno == EPERM)
		return XP_TRACEFS_UNREADABLE;
	return listed_mounted(root) ? XP_TRACEFS_UNREADABLE : XP_TRACEFS_ABSENT;
}

static bool plain_name(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* Hints naming up to three entries of @dir close to @want. */
static void suggest(const char *dir, const char *want, const char *prefix, struct xp_error *err)
{
	struct {
		char name[256];
		size_t d;
	} best[MAX_SUGGESTIONS];
	size_t n = 0, i, limit = strlen(want) / 3 > 2 ? strlen(want) / 3 : 2;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t dist, pos;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(best[0].name))
			continue;
		dist = xpc_edit_distance(de->d_name, want, limit);
		if (dist > limit && !(strlen(want) >= 3 && strstr(de->d_name, want)))
			continue;
		for (pos = 0; pos < n && best[pos].d <= dist; pos++)
			;
		if (pos >= MAX_SUGGESTIONS)
			continue;
		if (n == MAX_SUGGESTIONS)
			n--;
		memmove(&best[pos + 1], &best[pos], (n - pos) * sizeof(best[0]));
		snprintf(best[pos].name, sizeof(best[pos].name), "%s", de->d_name);
		best[pos].d = dist;
		n++;
	}
	closedir(d);
	for (i = 0; i < n; i++)
		xp_error_hint(err, "close match: tracepoint:%s%s", prefix, best[i].name);
}

static int tracefs_check(const char *category, const char *name, uint64_t *id, struct xp_error *err)
{
	const char *root = xp_tracefs_root();
	char path[4400], *text = NULL, *nl;
	struct stat st;
	int rc;

	*id = 0;
	if (!plain_name(category) || !plain_name(name)) {
		xp_error_detail_str(err, "category", category ? category : "");
		xp_error_detail_str(err, "name", name ? name : "");
		return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				    "tracepoint category and name must be [A-Za-z0-9_]+");
	}
	xp_error_detail_str(err, "tracefs", root);
	if (!xp_tracefs_mounted(root)) {
		snprintf(path, sizeof(path), "%s/events", root);
		if (stat(path, &st) < 0 && (errno == EACCES || errno == EPERM)) {
			xp_error_hint(err, "run xprobe as root to read tracefs");
			return xp_error_set(err, XPROBE_E_PERMISSION_DENIED, true,
					    "permission denied reading %s", path);
		}
		xp_error_detail_str(err, "category", category);
		xp_error_detail_str(err, "name", name);
		xp_error_hint(err, "mount it: %s", XP_TRACEFS_MOUNT_HINT);
		xp_error_hint(err, "syscall:<name>:entry|exit selectors need no tracefs");
		return xp_error_set(
			err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
			"tracefs is not mounted at %s, so tracepoint %s:%s cannot be checked or attached",
			root, category, name);
	}
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", root, category, name);
	rc = xp_read_file(path, 64, &text, NULL);
	if (rc == -EACCES || rc == -EPERM) {
		xp_error_hint(err, "run xprobe as root to read tracefs");
		return xp_error_set(err, XPROBE_E_PERMISSION_DENIED, true,
				    "permission denied reading %s", path);
	}
	if (rc) {
		char dir[4300];

		snprintf(dir, sizeof(dir), "%s/events/%s", root, category);
		xp_error_detail_str(err, "category", category);
		xp_error_detail_str(err, "name", name);
		if (stat(dir, &st) < 0) {
			snprintf(dir, sizeof(dir), "%s/events", root);
			suggest(dir, category, "", err);
			xp_error_hint(err, "list the categories: ls %s/events", root);
			return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
					    "tracepoint category %s does not exist", category);
		}
		{
			char prefix[300];

			snprintf(prefix, sizeof(prefix), "%s:", category);
			suggest(dir, name, prefix, err);
		}
		xp_error_hint(err, "list the tracepoints: ls %s", dir);
		return xp_error_set(err, XPROBE_E_INVALID_EVENT_SELECTOR, true,
				    "tracepoint %s:%s does not exist", category, name);
	}
	nl = strchr(text, '\n');
	if (nl)
		*nl = '\0';
	rc = xpc_parse_u64(text, 0, UINT64_MAX, id);
	free(text);
	if (rc)
		return xp_error_set(err, XPROBE_E_INTERNAL, false, "malformed tracepoint id in %s",
				    path);
	return 0;
}

int xp_tracefs_check(const char *category, const char *name, uint64_t *id, struct xp_error *uerr)
{
	/* details are gathered on the way; they reach @uerr only on failure */
	struct xp_error le = { 0 };
	int rc = tracefs_check(category, name, id, &le);

	if (rc)
		xp_error_move(uerr, &le);
	else
		xp_error_clear(&le);
	return rc;
}
