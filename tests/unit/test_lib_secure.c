/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lib_secure.c - libxprobe in hostile places.
 *
 *   privileged   tests/lib/secure_target (it dlopens libxprobe.so, whose
 *                constructor reads XPROBE_INSPECT_*) installed setuid to
 *                nobody, and once with a file capability, run by another
 *                unprivileged user with XPROBE_INSPECT_ENABLE=1 and an
 *                output dir anyone may write: the process is AT_SECURE, so
 *                no session begins, nothing is created and no Agent control
 *                socket is served.  The same copy
 *                without the setuid bit, run the same way, does begin (the
 *                control: the environment door is open to a plain process);
 *   links        a symbolic link planted at the output base, at the
 *                predictable <base>/<instance>-<pid>, at a session file
 *                (ntrace.pb), at on_fail/ and at a continuous-save
 *                directory is refused, never followed: nothing is written
 *                where the link points;
 *   temporaries  a hard link and a FIFO planted at the name the writer
 *                used to take for its temporary ("<file>.tmp.<pid>") are
 *                neither written through nor waited on;
 *   modes        session files are 0600, the directories 0700.
 */
#include <grp.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <sys/xattr.h>

#include "../lib/libtest.h"
#include "testlib.h"
#include "xprobe/xprobe.h"

#define OWNER_UID 65534 /* nobody: owns the setuid copy */
#define RUNNER_UID 65533 /* another unprivileged user runs it */

static char scratch[PATH_MAX];

/* --- privileged processes ----------------------------------------------------- */

struct target_out {
	long at_secure, euid, active, agent;
};

static int run_as_runner(const char *exe, const char *lib, const char *outdir, const char *out_path,
			 struct target_out *t)
{
	char buf[1024], *p;
	pid_t pid;
	int st = -1, fd;

	t->at_secure = t->euid = t->active = t->agent = -1;
	fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		char env_dir[PATH_MAX + 32];

		dup2(fd, 1);
		snprintf(env_dir, sizeof(env_dir), "XPROBE_INSPECT_OUTPUT_DIR=%s", outdir);
		putenv(env_dir);
		putenv((char *)"XPROBE_INSPECT_ENABLE=1");
		putenv((char *)"XPROBE_INSPECT_ACTIVITIES=system_profile");
		putenv((char *)"XPROBE_LOG_LEVEL=debug");
		if (setgroups(0, NULL) != 0 || setgid(RUNNER_UID) != 0 || setuid(RUNNER_UID) != 0)
			_exit(126);
		execl(exe, exe, lib, (char *)NULL);
		_exit(127);
	}
	close(fd);
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "%s: status 0x%x\n", exe, st);
		return -1;
	}
	lt_read_file(out_path, buf, sizeof(buf));
	if ((p = strstr(buf, "AT_SECURE ")))
		t->at_secure = strtol(p + 10, NULL, 10);
	if ((p = strstr(buf, "EUID ")))
		t->euid = strtol(p + 5, NULL, 10);
	if ((p = strstr(buf, "ACTIVE ")))
		t->active = strtol(p + 7, NULL, 10);
	if ((p = strstr(buf, "AGENT ")))
		t->agent = strtol(p + 6, NULL, 10);
	return 0;
}

/* A file capability (cap_net_bind_service, effective): exec makes the
 * process AT_SECURE just as setuid does. */
static int set_file_cap(const char *path)
{
	struct vfs_cap_data cap;

	memset(&cap, 0, sizeof(cap));
	cap.magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE;
	cap.data[0].permitted = 1u << CAP_NET_BIND_SERVICE;
	return setxattr(path, "security.capability", &cap, XATTR_CAPS_SZ_2, 0);
}

static void test_privileged(void)
{
	char mnt[PATH_MAX], exe[PATH_MAX + 32], capexe[PATH_MAX + 32], lib[PATH_MAX + 32];
	char src[PATH_MAX], out[PATH_MAX + 32], outdir[PATH_MAX + 32], res[PATH_MAX + 32];
	struct target_out t;

	/* world-traversable and not nosuid (the build tree may be neither) */
	snprintf(mnt, sizeof(mnt), "/tmp/xpl-test-secure-mnt-%d", (int)getpid());
	if (lt_tmpfs_mount_flags(mnt, 64 * 1024, MS_NODEV) != 0) {
		CHECK(!"tmpfs mounted (the tests run as root)");
		return;
	}
	snprintf(exe, sizeof(exe), "%s/secure_target", mnt);
	snprintf(capexe, sizeof(capexe), "%s/secure_target_cap", mnt);
	snprintf(lib, sizeof(lib), "%s/libxprobe.so", mnt);
	snprintf(outdir, sizeof(outdir), "%s/out", mnt);
	snprintf(res, sizeof(res), "%s/results", mnt);
	lt_build_path(src, sizeof(src), "tests/lib/secure_target");
	CHECK(lt_copy(src, exe, 0755) == 0);
	CHECK(lt_copy(src, capexe, 0755) == 0);
	lt_build_path(src, sizeof(src), "lib/libxprobe.so");
	CHECK(lt_copy(src, lib, 0644) == 0);
	CHECK(mkdir(outdir, 0777) == 0 && chmod(outdir, 0777) == 0);
	CHECK(mkdir(res, 0700) == 0);
	snprintf(out, sizeof(out), "%s/target.out", res);

	/* setuid nobody, run by another user: AT_SECURE, the door stays shut */
	CHECK(chown(exe, OWNER_UID, OWNER_UID) == 0);
	CHECK(chmod(exe, 04755) == 0);
	CHECK(run_as_runner(exe, lib, outdir, out, &t) == 0);
	CHECK(t.at_secure == 1 && t.euid == OWNER_UID);
	CHECK(t.active == 0);
	CHECK(t.agent == 0); /* no Agent control socket either */
	CHECK(lt_count_names(outdir, "-") == 0); /* no <instance>-<pid> */
	CHECK(lt_count_names(outdir, "") == 2); /* only . and .. */

	/* a file capability: AT_SECURE as well */
	CHECK(set_file_cap(capexe) == 0);
	CHECK(run_as_runner(capexe, lib, outdir, out, &t) == 0);
	CHECK(t.at_secure == 1 && t.euid == RUNNER_UID);
	CHECK(t.active == 0);
	CHECK(t.agent == 0);
	CHECK(lt_count_names(outdir, "") == 2);

	/* the control: the same copy, no setuid bit: the session begins */
	CHECK(chmod(exe, 0755) == 0);
	CHECK(run_as_runner(exe, lib, outdir, out, &t) == 0);
	CHECK(t.at_secure == 0 && t.euid == RUNNER_UID);
	CHECK(t.active == 1);
	CHECK(t.agent == 1);
	CHECK(lt_count_names(outdir, "-") == 1);
	lt_tmpfs_umount(mnt);
}

/* --- links --------------------------------------------------------------------- */

static struct xprobe_inspect_config *cfg_at(const char *base)
{
	struct xprobe_inspect_config *c = NULL;

	xprobe_inspect_config_new(&c);
	xprobe_inspect_config_set_output_dir(c, base);
	xprobe_inspect_config_set_instance_id(c, "sec");
	xprobe_inspect_config_set_activity(c, "all", false);
	xprobe_inspect_config_set_activity(c, "system_profile", true);
	xprobe_inspect_config_set_ring_events(c, 1024);
	return c;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static bool has_text(const char *path, const char *text)
{
	char buf[256];

	lt_read_file(path, buf, sizeof(buf));
	return !strcmp(buf, text);
}

static bool is_link(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

static void test_links(void)
{
	struct xprobe_inspect_config *c;
	char away[PATH_MAX + 16], link[PATH_MAX + 16], dir[PATH_MAX], p[PATH_MAX + 64];
	char victim[PATH_MAX + 16];

	snprintf(away, sizeof(away), "%s/away", scratch);
	CHECK(mkdir(away, 0700) == 0);
	snprintf(victim, sizeof(victim), "%s/victim", scratch);
	write_text(victim, "precious");

	/* the output base itself is a link */
	snprintf(link, sizeof(link), "%s/linkbase", scratch);
	CHECK(symlink(away, link) == 0);
	c = cfg_at(link);
	CHECK(xprobe_inspect_begin_with_options(c) == -XPROBE_E_OUTPUT_FAILED);
	fprintf(stderr, "  link at the base: %s\n", xprobe_last_error());
	CHECK(strstr(xprobe_last_error(), "symbolic link") != NULL);
	CHECK(lt_count_names(away, "") == 2);
	xprobe_inspect_config_free(c);

	/* <base>/<instance>-<pid>, predictable, planted in a shared base */
	snprintf(p, sizeof(p), "%s/shared", scratch);
	CHECK(mkdir(p, 0777) == 0);
	snprintf(link, sizeof(link), "%s/shared/sec-%d", scratch, (int)getpid());
	CHECK(symlink(away, link) == 0);
	c = cfg_at(p);
	CHECK(xprobe_inspect_begin_with_options(c) == -XPROBE_E_OUTPUT_FAILED);
	fprintf(stderr, "  link at <instance>-<pid>: %s\n", xprobe_last_error());
	CHECK(strstr(xprobe_last_error(), "symbolic link") != NULL);
	CHECK(lt_count_names(away, "") == 2);
	CHECK(unlink(link) == 0);

	/* a session file is a link: refused at stop, the link left alone */
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	CHECK(xprobe_trace_record(1, 2, 3) == 0);
	CHECK(xprobe_inspect_get_output_dir(dir, sizeof(dir)) > 0);
	snprintf(p, sizeof(p), "%s/ntrace.pb", dir);
	CHECK(symlink(victim, p) == 0);
	CHECK(xprobe_inspect_stop() == -XPROBE_E_OUTPUT_FAILED);
	fprintf(stderr, "  link at ntrace.pb: %s\n", xprobe_last_error());
	CHECK(strstr(xprobe_last_error(), "ntrace.pb") != NULL);
	CHECK(is_link(p));
	CHECK(has_text(victim, "precious"));
	CHECK(lt_count_names(dir, ".tmp") == 0);
	CHECK(xprobe_inspect_close() == 0); /* stopped already */
	xprobe_inspect_config_free(c);
}

static void test_on_fail_link(void)
{
	struct xprobe_inspect_config *c = NULL;
	XPROBE_OPTS(xprobe_backend_opts, bo, .sim_cores = 1, .sim_records_per_exec = 2);
	char away[PATH_MAX + 16], dir[PATH_MAX], p[PATH_MAX + 64], base[PATH_MAX + 16];
	uint64_t id;

	snprintf(away, sizeof(away), "%s/away_fail", scratch);
	CHECK(mkdir(away, 0700) == 0);
	snprintf(base, sizeof(base), "%s/onfail", scratch);
	xprobe_inspect_config_new(&c);
	xprobe_inspect_config_set_output_dir(c, base);
	xprobe_inspect_config_set_activity(c, "all", false);
	xprobe_inspect_config_set_backend(c, "sim", &bo);
	xprobe_inspect_config_set_enable_on_fail(c, true);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	CHECK(xprobe_inspect_get_output_dir(dir, sizeof(dir)) > 0);
	snprintf(p, sizeof(p), "%s/on_fail", dir);
	CHECK(symlink(away, p) == 0);
	CHECK(xprobe_execution_begin("net", &id) == 0);
	CHECK(xprobe_execution_end(id, 3) == -XPROBE_E_OUTPUT_FAILED);
	fprintf(stderr, "  link at on_fail/: %s\n", xprobe_last_error());
	CHECK(lt_count_names(away, "") == 2);
	CHECK(xprobe_inspect_close() == 0);
	xprobe_inspect_config_free(c);
}

static void test_save_link(void)
{
	char away[PATH_MAX + 16], link[PATH_MAX + 16];
	XPROBE_OPTS(xprobe_continuous_opts, co, .backend = "sim");
	XPROBE_OPTS(xprobe_continuous_save_opts, so, .output_dir = link);
	uint64_t id;

	snprintf(away, sizeof(away), "%s/away_save", scratch);
	snprintf(link, sizeof(link), "%s/savelink", scratch);
	CHECK(mkdir(away, 0700) == 0);
	CHECK(symlink(away, link) == 0);
	CHECK(xprobe_profile_continuous_start(&co) == 0);
	CHECK(xprobe_execution_begin("net", &id) == 0);
	CHECK(xprobe_execution_end(id, 0) == 0);
	CHECK(xprobe_profile_continuous_save(&so) == -XPROBE_E_OUTPUT_FAILED);
	fprintf(stderr, "  link at the save dir: %s\n", xprobe_last_error());
	CHECK(strstr(xprobe_last_error(), "symbolic link") != NULL);
	CHECK(lt_count_names(away, "") == 2);
	CHECK(xprobe_profile_continuous_stop() == 0);
}

/* --- temporaries and modes ------------------------------------------------------ */

/* A hard link to a victim at "trace_info.pb.tmp.<pid>", a FIFO at
 * "ntrace.pb.tmp.<pid>": the old predictable temporaries. */
static int sc_planted_temporaries(void *arg)
{
	static const char *const names[] = { "ntrace.pb", "trace_info.pb", "cpu_util.pb" };
	int failures = xpt_failures;
	struct xprobe_inspect_config *c = cfg_at("planted");
	char dir[PATH_MAX], p[PATH_MAX + 64];
	const char *victim = arg;
	struct stat st;

	xprobe_inspect_config_set_activity(c, "cpu_util", true);
	CHECK(xprobe_inspect_begin_with_options(c) == 0);
	CHECK(xprobe_trace_record(1, 2, 3) == 0);
	CHECK(xprobe_inspect_get_output_dir(dir, sizeof(dir)) > 0);
	snprintf(p, sizeof(p), "%s/trace_info.pb.tmp.%d", dir, (int)getpid());
	CHECK(link(victim, p) == 0);
	snprintf(p, sizeof(p), "%s/ntrace.pb.tmp.%d", dir, (int)getpid());
	CHECK(mkfifo(p, 0600) == 0);
	CHECK(xprobe_inspect_close() == 0); /* neither waited on nor written through */
	CHECK(has_text(victim, "precious"));
	CHECK(lt_exists(dir, "trace_info.pb") && lt_exists(dir, "ntrace.pb"));
	/* modes: files 0600, the session directory and its parent 0700 */
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0600);
	}
	CHECK(stat(dir, &st) == 0 && (st.st_mode & 07777) == 0700);
	snprintf(p, sizeof(p), "%s/..", dir);
	CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0700);
	xprobe_inspect_config_free(c);
	return xpt_failures - failures;
}

int main(void)
{
	char victim[PATH_MAX + 16];

	lt_scratch(scratch, sizeof(scratch), "secure");
	test_privileged();
	test_links();
	test_on_fail_link();
	test_save_link();
	snprintf(victim, sizeof(victim), "%s/victim2", scratch);
	write_text(victim, "precious");
	CHECK(lt_in_child("planted temporaries", sc_planted_temporaries, victim, 20));
	if (!xpt_failures)
		lt_rm_rf(scratch);
	TEST_MAIN_END();
}
