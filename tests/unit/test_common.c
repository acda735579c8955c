/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_common.c - the JSON writer, escaping, float formatting, number
 * parsing and the atomic writer of common/.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "../../common/atomic_file.h"
#include "../../common/json.h"
#include "../../common/parse.h"
#include "../../common/readfile.h"
#include "../../common/suggest.h"
#include "testlib.h"

static void check_f64(double v, const char *want)
{
	char buf[48];

	xpc_fmt_f64(v, buf, sizeof(buf));
	CHECK_STR(buf, want);
}

static void test_floats(void)
{
	check_f64(65.0, "65.0");
	check_f64(1.0, "1.0");
	check_f64(0.5, "0.5");
	check_f64(0.000244140625, "0.000244140625");
	check_f64(0.1, "0.1");
	check_f64(1.0 / 3.0, "0.3333333333333333");
	check_f64(123456.789, "123456.789");
	check_f64(1e16, "1e16");
	check_f64(1e15, "1000000000000000.0");
	check_f64(0.00001, "0.00001");
	check_f64(0.000001, "1e-6");
	check_f64(1.5e-7, "1.5e-7");
	check_f64(-2.25, "-2.25");
	check_f64(0.0, "0.0");
	check_f64(2500000.5, "2500000.5");
}

static void test_writer(void)
{
	struct xpc_buf b = XPC_BUF_INIT;
	struct xpc_json w;

	xpc_json_init_buf(&w, &b, 0);
	xpc_json_obj_begin(&w);
	xpc_json_ku64(&w, "a", 1);
	xpc_json_karr_begin(&w, "b");
	xpc_json_u64(&w, 1);
	xpc_json_str(&w, "x\"y\\\n\x01");
	xpc_json_arr_end(&w);
	xpc_json_kobj_begin(&w, "c");
	xpc_json_obj_end(&w);
	xpc_json_kraw(&w, "d", "{\"k\":[1,{}],\"z\":null}");
	xpc_json_kf64(&w, "e", 2.0);
	xpc_json_obj_end(&w);
	CHECK(xpc_json_finish(&w) == 0);
	CHECK_STR(b.data, "{\"a\":1,\"b\":[1,\"x\\\"y\\\\\\n\\u0001\"],\"c\":{},\"d\":{\"k\":[1,{}],\"z\":null},\"e\":2.0}");
	xpc_buf_reset(&b);

	xpc_json_init_buf(&w, &b, XPC_JSON_PRETTY);
	xpc_json_obj_begin(&w);
	xpc_json_ku64(&w, "a", 1);
	xpc_json_karr_begin(&w, "b");
	xpc_json_arr_end(&w);
	xpc_json_kraw(&w, "d", "{\"k\":[1,2]}");
	xpc_json_obj_end(&w);
	CHECK(xpc_json_finish(&w) == 0);
	CHECK_STR(b.data, "{\n  \"a\": 1,\n  \"b\": [],\n  \"d\": {\n    \"k\": [\n      1,\n      2\n    ]\n  }\n}");
	xpc_buf_reset(&b);

	/* integers at their edges (formatted without printf) */
	xpc_json_init_buf(&w, &b, 0);
	xpc_json_arr_begin(&w);
	xpc_json_u64(&w, 0);
	xpc_json_u64(&w, UINT64_MAX);
	xpc_json_i64(&w, 0);
	xpc_json_i64(&w, -1);
	xpc_json_i64(&w, INT64_MIN);
	xpc_json_i64(&w, INT64_MAX);
	xpc_json_arr_end(&w);
	CHECK(xpc_json_finish(&w) == 0);
	CHECK_STR(b.data, "[0,18446744073709551615,0,-1,-9223372036854775808,9223372036854775807]");
	xpc_buf_reset(&b);

	/* pretty at depth: two spaces a level */
	xpc_json_init_buf(&w, &b, XPC_JSON_PRETTY);
	xpc_json_arr_begin(&w);
	xpc_json_arr_begin(&w);
	xpc_json_arr_begin(&w);
	xpc_json_u64(&w, 7);
	xpc_json_arr_end(&w);
	xpc_json_arr_end(&w);
	xpc_json_arr_end(&w);
	CHECK(xpc_json_finish(&w) == 0);
	CHECK_STR(b.data, "[\n  [\n    [\n      7\n    ]\n  ]\n]");
	xpc_buf_reset(&b);

	/* unbalanced document is reported */
	xpc_json_init_buf(&w, &b, 0);
	xpc_json_obj_begin(&w);
	CHECK(xpc_json_finish(&w) == -EINVAL);
	xpc_buf_free(&b);
}

/* The 8-byte fast path agrees with the byte loop: every byte value at
 * every position of a 16-byte string, escaped whole and byte by byte (a
 * lone byte escapes alike whether or not it sits among 'a's). */
static void test_escape_words(void)
{
	struct xpc_buf whole = XPC_BUF_INIT, bytes = XPC_BUF_INIT;
	char s[16];
	int bad = 0;

	for (int c = 0; c < 256; c++) {
		for (int pos = 0; pos < 16; pos++) {
			memset(s, 'a', sizeof(s));
			s[pos] = (char)c;
			xpc_buf_reset(&whole);
			xpc_buf_reset(&bytes);
			xpc_json_escape(&whole, s, sizeof(s));
			for (int i = 0; i < 16; i++)
				xpc_json_escape(&bytes, s + i, 1);
			bad += whole.len != bytes.len || memcmp(whole.data, bytes.data, whole.len);
		}
	}
	CHECK(bad == 0);
	xpc_buf_free(&whole);
	xpc_buf_free(&bytes);
}

static void test_escape_utf8(void)
{
	struct xpc_buf b = XPC_BUF_INIT;

	xpc_json_escape(&b, "caf\xc3\xa9", 5);
	CHECK_STR(b.data, "caf\xc3\xa9");
	xpc_buf_reset(&b);
	xpc_json_escape(&b, "a\xff" "b\xc3", 4); /* invalid byte, truncated sequence */
	CHECK_STR(b.data, "a\xef\xbf\xbd" "b\xef\xbf\xbd");
	xpc_buf_reset(&b);
	xpc_json_escape(&b, "\xed\xa0\x80", 3); /* UTF-16 surrogate encoded */
	CHECK_STR(b.data, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	xpc_buf_reset(&b);
	xpc_json_escape(&b, "\x7f\t", 2);
	CHECK_STR(b.data, "\x7f\\t");
	xpc_buf_free(&b);
}

static void test_parse(void)
{
	uint64_t v;
	int64_t s;

	CHECK(xpc_parse_u64("123", 0, 1000, &v) == 0 && v == 123);
	CHECK(xpc_parse_u64("18446744073709551615", 0, UINT64_MAX, &v) == 0 && v == UINT64_MAX);
	CHECK(xpc_parse_u64("18446744073709551616", 0, UINT64_MAX, &v) == -ERANGE);
	CHECK(xpc_parse_u64("-1", 0, 10, &v) == -EINVAL);
	CHECK(xpc_parse_u64("+1", 0, 10, &v) == -EINVAL);
	CHECK(xpc_parse_u64(" 1", 0, 10, &v) == -EINVAL);
	CHECK(xpc_parse_u64("1x", 0, 10, &v) == -EINVAL);
	CHECK(xpc_parse_u64("", 0, 10, &v) == -EINVAL);
	CHECK(xpc_parse_u64("11", 0, 10, &v) == -ERANGE);
	CHECK(xpc_parse_hex_u64("0x1A2b", &v) == 0 && v == 0x1a2b);
	CHECK(xpc_parse_hex_u64("0x", &v) == -EINVAL);
	CHECK(xpc_parse_hex_u64("12", &v) == -EINVAL);
	CHECK(xpc_parse_hex_u64("0x10000000000000000", &v) == -ERANGE);
	/* the span reader behind it: digits up to the first other byte or @max */
	{
		size_t n = 99;

		CHECK(xpc_parse_hex_span("7f00aB-7f01 r", SIZE_MAX, &v, &n) == 0);
		CHECK(v == 0x7f00ab && n == 6);
		CHECK(xpc_parse_hex_span("ffff", 2, &v, &n) == 0 && v == 0xff && n == 2);
		CHECK(xpc_parse_hex_span("-1", SIZE_MAX, &v, &n) == -EINVAL && n == 0);
		CHECK(xpc_parse_hex_span("", SIZE_MAX, &v, &n) == -EINVAL);
		CHECK(xpc_parse_hex_span("ffffffffffffffff ", SIZE_MAX, &v, &n) == 0 &&
		      v == UINT64_MAX && n == 16);
		CHECK(xpc_parse_hex_span("00000000000000001", SIZE_MAX, &v, &n) == 0 && v == 1);
		CHECK(xpc_parse_hex_span("10000000000000000", SIZE_MAX, &v, &n) == -ERANGE);
		CHECK(xpc_parse_hex_u64("0x12 ", &v) == -EINVAL);
		CHECK(xpc_parse_hex_u64("0x00000000000000001", &v) == 0 && v == 1);
	}
	CHECK(xpc_parse_i64("-9223372036854775808", INT64_MIN, INT64_MAX, &s) == 0 && s == INT64_MIN);
	CHECK(xpc_parse_i64("-5", 0, 10, &s) == -ERANGE);
}

static int count_tmp_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (strstr(de->d_name, ".tmp"))
			n++;
	closedir(d);
	return n;
}

static void test_atomic(void)
{
	char dir[] = "/tmp/xp_atomic_XXXXXX", path[256], buf[16];
	struct stat st;
	mode_t old;
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/out.jsonl", dir);
	old = umask(0);
	CHECK(xpc_atomic_write(path, "hello", 5) == 0);
	umask(old);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	/* A forced failure leaves the old file and no temporary. */
	xpc_atomic_fault_before_rename = -EIO;
	CHECK(xpc_atomic_write(path, "world!", 6) == -EIO);
	xpc_atomic_fault_before_rename = 0;
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) == 5);
	close(fd);
	CHECK(memcmp(buf, "hello", 5) == 0);
	CHECK(count_tmp_files(dir) == 0);
	/* A directory that does not exist */
	CHECK(xpc_atomic_write("/nonexistent-dir/x", "a", 1) == -ENOENT);
	unlink(path);
	rmdir(dir);
}

/*
 * The destination check of the atomic writer: only a regular file is
 * replaced; a FIFO, a device node, a symlink and a directory are refused
 * at open (before anything is written) with their type, and a FIFO that
 * takes the place of the destination between open and commit is refused
 * at commit.
 */
static void test_atomic_refuses_non_regular(void)
{
	char dir[] = "/tmp/xp_atomic_dest_XXXXXX", path[256], other[256];
	struct xpc_atomic_file f;
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/dest", dir);
	snprintf(other, sizeof(other), "%s/regular", dir);
	CHECK(xpc_atomic_write(other, "x", 1) == 0);

	CHECK(mkfifo(path, 0600) == 0);
	CHECK(xpc_atomic_open(&f, path) == -XPC_EFTYPE);
	CHECK(S_ISFIFO(f.dest_mode));
	CHECK(xpc_atomic_write(path, "a", 1) == -XPC_EFTYPE);
	CHECK(lstat(path, &st) == 0 && S_ISFIFO(st.st_mode));
	unlink(path);

	CHECK(mknod(path, S_IFCHR | 0600, makedev(1, 3)) == 0);
	CHECK(xpc_atomic_write(path, "a", 1) == -XPC_EFTYPE);
	CHECK(lstat(path, &st) == 0 && S_ISCHR(st.st_mode));
	unlink(path);

	CHECK(symlink(other, path) == 0);
	CHECK(xpc_atomic_open(&f, path) == -ELOOP);
	CHECK(S_ISLNK(f.dest_mode));
	CHECK(lstat(path, &st) == 0 && S_ISLNK(st.st_mode));
	unlink(path);

	CHECK(mkdir(path, 0700) == 0);
	CHECK(xpc_atomic_write(path, "a", 1) == -EISDIR);
	rmdir(path);

	/* absent at open, a FIFO at commit: refused, the FIFO stays */
	CHECK(xpc_atomic_open(&f, path) == 0);
	CHECK(write(f.fd, "a", 1) == 1);
	CHECK(mkfifo(path, 0600) == 0);
	CHECK(xpc_atomic_commit(&f) == -XPC_EFTYPE);
	CHECK(lstat(path, &st) == 0 && S_ISFIFO(st.st_mode));
	unlink(path);
	/* absent at open, a regular file at commit: replaced */
	CHECK(xpc_atomic_open(&f, path) == 0);
	CHECK(write(f.fd, "new", 3) == 3);
	CHECK(xpc_atomic_write(path, "old", 3) == 0);
	CHECK(xpc_atomic_commit(&f) == 0);
	CHECK(stat(path, &st) == 0 && st.st_size == 3);
	CHECK(count_tmp_files(dir) == 0);
	unlink(path);
	unlink(other);
	rmdir(dir);
}

/* common/readfile.h: type before content, size before reading. */
static void test_readfile(void)
{
	char dir[] = "/tmp/xp_readfile_XXXXXX", path[256], link[256];
	struct timespec t0, t1;
	struct stat st;
	size_t len;
	char *buf, why[128];
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/f", dir);
	snprintf(link, sizeof(link), "%s/l", dir);
	CHECK(xpc_atomic_write(path, "0123456789", 10) == 0);
	CHECK(xpc_read_file(path, 0, 10, &buf, &len, &st) == 0);
	CHECK(len == 10 && memcmp(buf, "0123456789", 11) == 0 && S_ISREG(st.st_mode));
	free(buf);
	/* the bound: exactly max is read, max + 1 is refused */
	CHECK(xpc_read_file(path, 0, 9, &buf, &len, NULL) == -EFBIG && buf == NULL);
	/* procfs reports st_size 0: read to the end all the same */
	CHECK(xpc_read_file("/proc/self/status", 0, 1 << 20, &buf, &len, &st) == 0);
	CHECK(st.st_size == 0 && len > 100 && strstr(buf, "\nPid:") != NULL);
	free(buf);
	CHECK(xpc_read_file("/proc/self/status", 0, 16, &buf, &len, NULL) == -EFBIG);
	/* a symlink: followed unless NOFOLLOW */
	CHECK(symlink(path, link) == 0);
	CHECK(xpc_read_file(link, 0, 64, &buf, &len, NULL) == 0 && len == 10);
	free(buf);
	CHECK(xpc_read_file(link, XPC_FILE_NOFOLLOW, 64, &buf, &len, NULL) == -ELOOP);
	CHECK_STR(xpc_file_strerror(-ELOOP, 0, why, sizeof(why)),
		  "the last path component is a symbolic link");
	unlink(link);
	/* a FIFO without a writer: refused at once, named */
	CHECK(mkfifo(link, 0600) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(xpc_read_file(link, 0, 64, &buf, &len, &st) == -XPC_EFTYPE);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(t1.tv_sec - t0.tv_sec < 2);
	CHECK_STR(xpc_file_strerror(-XPC_EFTYPE, st.st_mode, why, sizeof(why)),
		  "not a regular file (fifo)");
	unlink(link);
	/* a directory: refused, or opened with DIR_OK */
	CHECK(xpc_read_file(dir, 0, 64, &buf, &len, NULL) == -EISDIR);
	fd = xpc_file_open(dir, XPC_FILE_DIR_OK, &st);
	CHECK(fd >= 0 && S_ISDIR(st.st_mode));
	close(fd);
	/* a device */
	CHECK(xpc_read_file("/dev/zero", 0, 64, &buf, &len, &st) == -XPC_EFTYPE);
	CHECK_STR(xpc_file_type_name(st.st_mode), "character device");
	/* a 5 GiB sparse file is refused by its size, before reading */
	CHECK(truncate(path, (off_t)5 << 30) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(xpc_read_file(path, 0, (size_t)4 << 30, &buf, &len, NULL) == -EFBIG);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(t1.tv_sec - t0.tv_sec < 2);
	/* xpc_read_fd: from the current offset, NUL and zeroed padding */
	CHECK(truncate(path, 10) == 0);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && lseek(fd, 4, SEEK_SET) == 4);
	CHECK(xpc_read_fd(fd, 6, 8, &buf, &len) == 0 && len == 6);
	CHECK(memcmp(buf, "456789", 6) == 0);
	for (size_t i = 6; i < 6 + 1 + 8; i++)
		CHECK(buf[i] == 0);
	free(buf);
	close(fd);
	unlink(path);
	rmdir(dir);
}

/* xpc_same_file: one inode under two names, one name under two spellings. */
static void test_same_file(void)
{
	char dir[] = "/tmp/xp_same_XXXXXX", a[256], b[256], hard[256], sub[256], up[300];

	CHECK(mkdtemp(dir) != NULL);
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	snprintf(hard, sizeof(hard), "%s/hard", dir);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	snprintf(up, sizeof(up), "%s/../a", sub);
	CHECK(mkdir(sub, 0700) == 0);
	/* neither exists: the same name in the same directory */
	CHECK(xpc_same_file(a, a) == 1);
	CHECK(xpc_same_file(a, up) == 1);
	CHECK(xpc_same_file(a, b) == 0);
	CHECK(xpc_same_file("/nonexistent-dir/x", "/nonexistent-dir/x") == 1);
	CHECK(xpc_same_file("/nonexistent-dir/x", "/nonexistent-dir/y") == 0);
	/* one exists: different */
	CHECK(xpc_atomic_write(a, "x", 1) == 0);
	CHECK(xpc_same_file(a, b) == 0 && xpc_same_file(b, a) == 0);
	/* both exist: by inode (a hard link is the same file) */
	CHECK(xpc_same_file(a, up) == 1);
	CHECK(link(a, hard) == 0);
	CHECK(xpc_same_file(a, hard) == 1);
	CHECK(xpc_atomic_write(b, "x", 1) == 0);
	CHECK(xpc_same_file(a, b) == 0);
	unlink(a);
	unlink(b);
	unlink(hard);
	rmdir(sub);
	rmdir(dir);
}

static void test_suggest(void)
{
	static const char *const flags[] = { "samples", "duration-ms", "max-events", "match" };
	static const char *const cmds[] = { "doctor", "discover", "validate", "measure" };

	CHECK(xpc_edit_distance("fx_add", "fx_add", 3) == 0);
	CHECK(xpc_edit_distance("fx_ad", "fx_add", 3) == 1);
	CHECK(xpc_edit_distance("kitten", "sitting", 5) == 3);
	CHECK(xpc_edit_distance("abc", "abcdefgh", 2) == 3); /* gave up past the limit */
	CHECK_STR(xpc_closest("sampels", flags, 4), "samples");
	CHECK_STR(xpc_closest("mesure", cmds, 4), "measure");
	CHECK_STR(xpc_closest("dcotor", cmds, 4), "doctor");
	CHECK(xpc_closest("frobnicate", cmds, 4) == NULL);
}

int main(void)
{
	test_floats();
	test_writer();
	test_escape_words();
	test_escape_utf8();
	test_parse();
	test_atomic();
	test_atomic_refuses_non_regular();
	test_same_file();
	test_suggest();
	test_readfile();
	TEST_MAIN_END();
}
