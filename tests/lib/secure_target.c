/* SPDX-License-Identifier: Apache-2.0 */
/*
 * secure_target.c - a program that loads libxprobe the way an injection
 * does (dlopen of an absolute path, so the library's constructor reads
 * the environment), for tests/unit/test_lib_secure.c.  The test installs a
 * copy setuid to another user and runs it with XPROBE_INSPECT_* set: the
 * kernel marks such a process AT_SECURE, and libxprobe must then ignore
 * its environment entirely.
 *
 *   secure_target LIBXPROBE_SO
 *
 * Prints "AT_SECURE n", "EUID n", "ACTIVE n" (xprobe_inspect_is_active
 * after the load), "AGENT n" (1 when the library's constructor serves an
 * Agent control socket: xprobe_agent_socket_path) on stdout; exits 0, or 2
 * when the library cannot be loaded.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <unistd.h>

/*
 * Sanitizer builds: LeakSanitizer cannot stop the threads of a
 * non-dumpable (setuid) process, and such a process cannot read its own
 * /proc/self/environ for ASAN_OPTIONS; the option is compiled in instead.
 */
__attribute__((used, visibility("default"))) const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

int main(int argc, char **argv)
{
	int (*is_active)(void);
	int (*close_session)(void);
	int (*agent_path)(char *, size_t);
	char path[256];
	void *h;

	if (argc != 2)
		return 2;
	printf("AT_SECURE %lu\nEUID %u\n", getauxval(AT_SECURE), (unsigned)geteuid());
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 2;
	}
	*(void **)&is_active = dlsym(h, "xprobe_inspect_is_active");
	*(void **)&close_session = dlsym(h, "xprobe_inspect_close");
	*(void **)&agent_path = dlsym(h, "xprobe_agent_socket_path");
	if (!is_active || !close_session || !agent_path)
		return 2;
	printf("ACTIVE %d\n", is_active());
	printf("AGENT %d\n", agent_path(path, sizeof(path)) == 0);
	fflush(stdout);
	close_session();
	return 0;
}
