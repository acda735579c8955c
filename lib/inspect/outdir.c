/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outdir.c - resolving a session's output tree:
 *     <base>/<instance-id>-<pid>/<session-start-ns>
 * where an empty base means "./output", created like mkdir -p (0700) by a
 * walk of mkdirat + openat(O_DIRECTORY|O_NOFOLLOW): neither the base nor
 * anything below it is ever a symbolic link libxprobe follows (a link
 * planted at a predictable path such as /tmp/out/<host>-<pid> would
 * otherwise redirect a privileged process's files); the session directory
 * stays open and every file is created relative to it.
 *
 * Rejected bases, each with its own code and sentence (the original
 * controller, docs/seed-mapping.md, logs "Tmp is not acceptable for output
 * directory name." for both of its cases):
 *   - "/dev/null": XPROBE_E_OUTPUT_NOT_DIRECTORY, saying that output cannot
 *     be discarded this way and how to disable the session instead;
 *   - any other existing non-directory: XPROBE_E_OUTPUT_NOT_DIRECTORY,
 *     naming what it is;
 *   - a base whose last component is "on_fail", the salvage directory
 *     libxprobe keeps inside every session for failing executions:
 *     XPROBE_E_RESERVED_OUTPUT_DIR (a session tree inside another session's
 *     salvage directory would be mistaken for salvaged profiles).
 */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../internal.h"
#include "controller.h"

int xpl_outdir_check_base(const char *base)
{
	struct stat st;
	const char *leaf;
	size_t n = strlen(base);

	if (!strcmp(base, "/dev/null"))
		return xpl_fail(
			-XPROBE_E_OUTPUT_NOT_DIRECTORY,
			"output dir '/dev/null' is the null device, not a directory: libxprobe "
			"writes a tree of files and cannot discard them this way; to record "
			"nothing, do not begin a session (XPROBE_INSPECT_ENABLE=0)");
	if (stat(base, &st) == 0 && !S_ISDIR(st.st_mode))
		return xpl_fail(-XPROBE_E_OUTPUT_NOT_DIRECTORY,
				"output dir '%s' exists and is a %s, not a directory", base,
				S_ISREG(st.st_mode)  ? "regular file" :
				S_ISCHR(st.st_mode)  ? "character device" :
				S_ISBLK(st.st_mode)  ? "block device" :
				S_ISFIFO(st.st_mode) ? "FIFO" :
				S_ISSOCK(st.st_mode) ? "socket" :
						       "non-directory");
	while (n > 1 && base[n - 1] == '/')
		n--;
	leaf = base + n;
	while (leaf > base && leaf[-1] != '/')
		leaf--;
	if ((size_t)(base + n - leaf) == strlen(XPL_ON_FAIL_DIR) &&
	    !strncmp(leaf, XPL_ON_FAIL_DIR, strlen(XPL_ON_FAIL_DIR)))
		return xpl_fail(-XPROBE_E_RESERVED_OUTPUT_DIR,
				"output dir '%s' ends in '" XPL_ON_FAIL_DIR
				"', the salvage directory "
				"libxprobe reserves inside each session for failing executions; "
				"choose another name",
				base);
	return 0;
}

/* The error of a directory that could not be created or opened. */
static int open_failed(const char *dir, const char *failed, int rc)
{
	if (rc == -ELOOP)
		return xpl_fail(-XPROBE_E_OUTPUT_FAILED,
				"cannot create %s: %s is a symbolic link; libxprobe never follows "
				"a link where it writes (name the directory it points to)",
				dir, failed);
	return xpl_fail(-XPROBE_E_OUTPUT_FAILED, "cannot create %s: mkdir %s: %s", dir, failed,
			strerror(-rc));
}

int xpl_outdir_open(const char *dir, int *dirfd)
{
	char failed[4096] = "";
	int rc = xpl_dir_open(dir, xpl_parent_len(dir), dirfd, failed, sizeof(failed));

	return rc ? open_failed(dir, failed, rc) : 0;
}

int xpl_outdir_make(const char *base_in, const char *instance_id, uint32_t pid, uint64_t start_ns,
		    char *out, size_t outlen, int *dirfd)
{
	const char *base = base_in && base_in[0] ? base_in : "./output";
	char failed[4096] = "";
	int rc;

	*dirfd = -1;
	if (!base_in || !base_in[0])
		pr_info("output dir is empty; defaulting to %s", base);
	rc = xpl_outdir_check_base(base);
	if (rc)
		return rc;
	if (xpl_snprintf(out, outlen, "%s/%s-%u/%llu", base, instance_id, pid,
			 (unsigned long long)start_ns) < 0)
		return xpl_fail(-XPROBE_E_INVALID_ARGUMENT, "output dir '%s' is too long", base);
	/* the base's parents are the caller's path; the base and below are ours */
	rc = xpl_dir_open(out, xpl_parent_len(base), dirfd, failed, sizeof(failed));
	if (rc)
		return open_failed(out, failed, rc);
	return 0;
}
