/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lib_agent.c - the Agent (lib/agent/): a real client
 * (tests/lib/agent_peer.h) over the real control socket against
 * tests/lib/agent_fixture, an NVTX program that has libxprobe only because
 * the NVTX loader injected it (NVTX_INJECTION64_PATH).  Every count is
 * compared with what the fixture says it did.
 *
 *   decoder      every field of a request, refused one at a time (in
 *                process, the decoder alone);
 *   name rules   exact / prefix / suffix / contains at their edges: short,
 *                long (cut) names, a character across the cut (in process);
 *   hello        versions, pid + start time, features (NVTX routed, host
 *                monotonic; not injected, no device backend); without the
 *                NVTX injection (preloaded only) NVTX is not routed;
 *   filters      exact / prefix / suffix / contains / two rules: the
 *                capture holds exactly the admitted ranges and `observed`
 *                equals them (rejections happen before anything is
 *                reserved); long names cut with name_complete false;
 *   nesting      two threads, three levels: per thread, push/pop in order
 *                with their levels; a rule on the middle level admits its
 *                pops and no other;
 *   xthread      process ranges started on one thread, ended on another;
 *   before ARM   a push and a process range begun before ARM end after it:
 *                neither end is in the capture, the same calls after ARM are;
 *   Ex forms     ASCII messages recorded, wide ones not, a NULL attribute
 *                struct counted as unknown; push levels stay right;
 *   overflow     capacity reached: LIMIT_REACHED, RECORD_LIMIT, drops;
 *   snapshot     offsets, chunk packets (whole records, <= 64 KiB),
 *                offset past the committed records refused;
 *   concurrent   three threads record while captures are read, stopped,
 *                freed and armed again (30 times): every thread's records
 *                follow its loop; the sanitizer builds' fixture aborts on a
 *                race or a use after free;
 *   malformed    every kind of bad request over the socket: an
 *                INVALID_ARGUMENT reply and nothing changed;
 *   one at a time  a second ARM (either connection) refused; SNAPSHOT,
 *                STOP and CLOSE of another connection's capture refused;
 *   SIGKILL      a client killed while armed: disarmed within 100 ms, and
 *                a new ARM works;
 *   other uid    a peer of another uid is refused before it is answered;
 *   directory    a runtime directory owned by another uid, of another
 *                mode, a link or a file: nothing served; XPROBE_AGENT=0;
 *   injected     xprobe_agent_start() marks the Agent injected; its CLOSE
 *                removes the socket, the library stays mapped, a new start
 *                serves again; a CLOSE of a non-injected Agent keeps it;
 *   dlclose      a program dlopens libxprobe and dlcloses it: still mapped,
 *                the Agent still answers;
 *   sweep        a stale socket of a dead process is removed at start, a
 *                live one (another PID namespace) kept;
 *   coexistence  an inspect session and an armed capture both record;
 *   fork, exit   a forked child does not keep the parent's socket alive;
 *                the socket is removed at exit;
 *   fd limit     the program at its descriptor limit: a connection that
 *                cannot be accepted does not make the Agent spin; it is
 *                accepted and answered once descriptors are free;
 *   reused fds   the program replaces the Agent's descriptors with files of
 *                its own (a daemon closing every descriptor): the Agent
 *                stops serving without a busy loop and never reads from
 *                or closes the program's files.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <grp.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "../../lib/producers/agent_capture.h"
#include "../../lib/agent/request.h"
#include "../lib/agent_peer.h"
#include "../lib/libtest.h"
#include "testlib.h"
#include "xprobe/xprobe.h"

#define ARRAY_N(a) (sizeof(a) / sizeof((a)[0]))

/*
 * ThreadSanitizer: this process has threads (its own Agent's server, the
 * static libxprobe's constructor started it) and test_directory's children
 * start an Agent after fork, which TSan refuses by default.  The children
 * only start it, answer and _exit.
 */
__attribute__((used)) const char *__tsan_default_options(void)
{
	return "die_after_fork=0";
}

static char scratch[PATH_MAX], libso[PATH_MAX], fixture_exe[PATH_MAX];

/* --- helpers ------------------------------------------------------------------------- */

static uint64_t start_time_of(pid_t pid)
{
	char path[64], buf[1024];
	const char *p;
	uint64_t v = 0;
	int field = 2;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!lt_read_file(path, buf, sizeof(buf)) || !(p = strrchr(buf, ')')))
		return 0;
	for (; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

static void expected_path(pid_t pid, char *out, size_t size)
{
	char name[96];

	snprintf(name, sizeof(name), XPROBE_AGENT_SOCK_FMT, (unsigned)pid,
		 (unsigned long long)start_time_of(pid));
	snprintf(out, size, XPROBE_AGENT_DIR_FMT "/%s", (unsigned)geteuid(), name);
}

/*
 * Start the fixture under NVTX injection (plus @extra, NULL-terminated),
 * make its first NVTX call and check the socket path it reports is the
 * one agent.h names.  0 and the path, or -1.
 */
static int fx_start_env(struct ap_fixture *fx, char *path, size_t size, const char *const *extra,
			bool inject)
{
	static char env_inject[PATH_MAX + 32];
	const char *env[12];
	char line[512], want[256];
	long pid = 0;
	int n = 0;

	snprintf(env_inject, sizeof(env_inject), "NVTX_INJECTION64_PATH=%s", libso);
	if (inject)
		env[n++] = env_inject;
	env[n++] = "ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0";
	env[n++] = "TSAN_OPTIONS=halt_on_error=1:exitcode=66";
	for (size_t i = 0; extra && extra[i] && n < 11; i++)
		env[n++] = extra[i];
	env[n] = NULL;
	if (ap_fixture_start(fx, fixture_exe, env) != 0 || ap_cmd(fx, "init", line, sizeof(line)))
		return -1;
	if (sscanf(line, "READY %ld %255s", &pid, path) != 2 || pid != fx->pid) {
		fprintf(stderr, "fixture said: %s\n", line);
		return -1;
	}
	expected_path(fx->pid, want, sizeof(want));
	if (inject && strcmp(path, want) != 0) {
		fprintf(stderr, "socket %s, expected %s\n", path, want);
		return -1;
	}
	snprintf(path, size, "%s", want);
	return 0;
}

static int fx_start(struct ap_fixture *fx, char *path, size_t size)
{
	return fx_start_env(fx, path, size, NULL, true);
}

static void fx_stop(struct ap_fixture *fx)
{
	int st = ap_fixture_stop(fx);

	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void cmd(struct ap_fixture *fx, const char *c, char *line, size_t size)
{
	CHECK(ap_cmd(fx, c, line, size) == 0);
}

/* Records of @type in @r (0: all), named @name (NULL: any). */
static uint64_t count(const struct ap_reply *r, uint32_t type, const char *name)
{
	const struct xprobe_record *rec;
	uint64_t n = 0;
	char buf[256];

	AP_FOR_EACH(r, rec)
	if ((!type || rec->type == type) &&
	    (!name || !strcmp(ap_name(rec, buf, sizeof(buf)), name)))
		n++;
	return n;
}

static uint64_t nrec(const struct ap_reply *r)
{
	return count(r, 0, NULL);
}

/* ARM with one NVTX rule. */
static int arm1(int fd, uint64_t capacity, uint32_t match, const char *name, struct ap_reply *r)
{
	struct xprobe_agent_req q;

	ap_arm(&q, capacity);
	ap_filter(&q, XPROBE_AGENT_KIND_NVTX_RANGE, match, name);
	if (ap_rpc(fd, &q, r))
		return -100000;
	return r->h.status;
}

static int hello(int fd, struct ap_reply *r)
{
	return ap_simple(fd, XPROBE_AGENT_OP_HELLO, 0, r);
}

static uint32_t state_of(int fd)
{
	struct ap_reply r = { 0 };

	if (hello(fd, &r))
		return 99;
	return r.h.state;
}

/* --- the decoder alone --------------------------------------------------------------------- */

static struct xprobe_agent_req good_arm(void)
{
	struct xprobe_agent_req q;

	ap_arm(&q, 100);
	ap_filter(&q, XPROBE_AGENT_KIND_NVTX_RANGE, XPROBE_AGENT_NAME_EXACT, "step");
	return q;
}

/* The malformed variants of a request (also sent over the socket). */
struct bad {
	const char *what; /* a word the refusal must say */
	void (*mutate)(struct xprobe_agent_req *q);
	uint32_t op; /* the request's op before mutation */
};

#define BAD(name, op, body)                                      \
	static void mut_##name(struct xprobe_agent_req *q) body; \
	static const uint32_t op_##name = op
BAD(magic, XPROBE_AGENT_OP_HELLO, { q->magic[2] = 'X'; });
BAD(version, XPROBE_AGENT_OP_HELLO, { q->version = 2; });
BAD(size, XPROBE_AGENT_OP_HELLO, { q->size = 351; });
BAD(op0, XPROBE_AGENT_OP_HELLO, { q->op = 0; });
BAD(op6, XPROBE_AGENT_OP_HELLO, { q->op = 6; });
BAD(reserved, XPROBE_AGENT_OP_HELLO, { q->by = 1; });
BAD(hello_mode, XPROBE_AGENT_OP_HELLO, { q->mode = 1; });
BAD(hello_cap, XPROBE_AGENT_OP_HELLO, { q->capacity = 5; });
BAD(hello_nf, XPROBE_AGENT_OP_HELLO, { q->nfilters = 1; });
BAD(hello_off, XPROBE_AGENT_OP_HELLO, { q->offset = 3; });
BAD(hello_filter, XPROBE_AGENT_OP_HELLO, { q->filters[1].name[5] = 'x'; });
BAD(close_off, XPROBE_AGENT_OP_CLOSE, { q->offset = 1; });
BAD(stop_mode, XPROBE_AGENT_OP_STOP, { q->mode = 1; });
BAD(mode, XPROBE_AGENT_OP_ARM, { q->mode = 3; });
BAD(exact_by, XPROBE_AGENT_OP_ARM, { q->by = XPROBE_AGENT_BY_NAME; });
BAD(hist_inflight0, XPROBE_AGENT_OP_ARM, { q->mode = XPROBE_AGENT_MODE_HISTOGRAM; });
BAD(hist_inflight_big, XPROBE_AGENT_OP_ARM, {
	q->mode = XPROBE_AGENT_MODE_HISTOGRAM;
	q->offset = XPROBE_AGENT_INFLIGHT_MAX + 1ull;
});
BAD(hist_capbig, XPROBE_AGENT_OP_ARM, {
	q->mode = XPROBE_AGENT_MODE_HISTOGRAM;
	q->offset = 8;
	q->capacity = XPROBE_AGENT_HIST_GROUPS_MAX + 1ull;
});
BAD(hist_by5, XPROBE_AGENT_OP_ARM, {
	q->mode = XPROBE_AGENT_MODE_HISTOGRAM;
	q->offset = 8;
	q->by = 5;
});
BAD(hist_stream_nvtx, XPROBE_AGENT_OP_ARM, {
	q->mode = XPROBE_AGENT_MODE_HISTOGRAM;
	q->offset = 8;
	q->by = XPROBE_AGENT_BY_STREAM;
});
BAD(hist_two_kinds, XPROBE_AGENT_OP_ARM, {
	q->mode = XPROBE_AGENT_MODE_HISTOGRAM;
	q->offset = 8;
	q->nfilters = 2;
	q->filters[1].kind = XPROBE_AGENT_KIND_MEMSET;
});
BAD(cap0, XPROBE_AGENT_OP_ARM, { q->capacity = 0; });
BAD(capbig, XPROBE_AGENT_OP_ARM, { q->capacity = XPROBE_AGENT_CAPACITY_MAX + 1ull; });
BAD(arm_off, XPROBE_AGENT_OP_ARM, { q->offset = 1; });
BAD(nf0, XPROBE_AGENT_OP_ARM, {
	memset(&q->filters[0], 0, sizeof(q->filters[0]));
	q->nfilters = 0;
});
BAD(nf3, XPROBE_AGENT_OP_ARM, { q->nfilters = 3; });
BAD(kind0, XPROBE_AGENT_OP_ARM, { q->filters[0].kind = 0; });
BAD(kind6, XPROBE_AGENT_OP_ARM, { q->filters[0].kind = 6; });
BAD(domain3, XPROBE_AGENT_OP_ARM, {
	q->filters[0].kind = XPROBE_AGENT_KIND_CUDA_API;
	q->filters[0].api_domain = 3;
});
BAD(domain_nvtx, XPROBE_AGENT_OP_ARM, { q->filters[0].api_domain = 1; });
BAD(memcpy6, XPROBE_AGENT_OP_ARM, {
	q->filters[0].kind = XPROBE_AGENT_KIND_MEMCPY;
	q->filters[0].name_match = 0;
	q->filters[0].name_len = 0;
	memset(q->filters[0].name, 0, sizeof(q->filters[0].name));
	q->filters[0].memcpy_kind = 6;
});
BAD(memcpy_nvtx, XPROBE_AGENT_OP_ARM, { q->filters[0].memcpy_kind = 1; });
BAD(match5, XPROBE_AGENT_OP_ARM, { q->filters[0].name_match = 5; });
BAD(len128, XPROBE_AGENT_OP_ARM, {
	memset(q->filters[0].name, 'a', 128);
	q->filters[0].name_len = 128;
});
BAD(any_name, XPROBE_AGENT_OP_ARM, { q->filters[0].name_match = XPROBE_AGENT_NAME_ANY; });
BAD(exact_empty, XPROBE_AGENT_OP_ARM, {
	memset(q->filters[0].name, 0, sizeof(q->filters[0].name));
	q->filters[0].name_len = 0;
});
BAD(memset_rule, XPROBE_AGENT_OP_ARM, { q->filters[0].kind = XPROBE_AGENT_KIND_MEMSET; });
BAD(nul_inside, XPROBE_AGENT_OP_ARM, { q->filters[0].name[1] = '\0'; });
BAD(garbage_after, XPROBE_AGENT_OP_ARM, { q->filters[0].name[100] = 'z'; });
BAD(filter_reserved, XPROBE_AGENT_OP_ARM, { q->filters[0].reserved = 7; });
BAD(unused_slot, XPROBE_AGENT_OP_ARM, { q->filters[1].kind = 1; });
BAD(aggregate_nvtx, XPROBE_AGENT_OP_ARM, { q->mode = XPROBE_AGENT_MODE_AGGREGATE; });

#define B(name, word)                       \
	{                                   \
		word, mut_##name, op_##name \
	}
static const struct bad bads[] = {
	B(magic, "magic"),
	B(version, "version"),
	B(size, "size"),
	B(op0, "op 0"),
	B(op6, "op 6"),
	B(reserved, "by is 1"),
	B(hello_mode, "no mode"),
	B(hello_cap, "no mode"),
	B(hello_nf, "no mode"),
	B(hello_off, "offset"),
	B(hello_filter, "no filters"),
	B(close_off, "offset"),
	B(stop_mode, "no mode"),
	B(mode, "mode 3"),
	B(exact_by, "only a HISTOGRAM ARM"),
	B(hist_inflight0, "in-flight slots (offset) 0"),
	B(hist_inflight_big, "in-flight slots (offset) 65537"),
	B(hist_capbig, "capacity 16385"),
	B(hist_by5, "by 5"),
	B(hist_stream_nvtx, "stream, device"),
	B(hist_two_kinds, "one lifecycle"),
	B(cap0, "capacity 0"),
	B(capbig, "capacity 16777217"),
	B(arm_off, "offset 1"),
	B(nf0, "nfilters 0"),
	B(nf3, "nfilters 3"),
	B(kind0, "kind 0"),
	B(kind6, "kind 6"),
	B(domain3, "api_domain 3"),
	B(domain_nvtx, "only CUDA_API"),
	B(memcpy6, "memcpy_kind 6"),
	B(memcpy_nvtx, "only MEMCPY"),
	B(match5, "name_match 5"),
	B(len128, "name_len 128"),
	B(any_name, "ANY with"),
	B(exact_empty, "empty name"),
	B(memset_rule, "no name"),
	B(nul_inside, "NUL"),
	B(garbage_after, "after"),
	B(filter_reserved, "reserved is 7"),
	B(unused_slot, "past nfilters"),
	B(aggregate_nvtx, "aggregate"),
};
#undef B

static struct xprobe_agent_req bad_req(const struct bad *b)
{
	struct xprobe_agent_req q;

	if (b->op == XPROBE_AGENT_OP_ARM)
		q = good_arm();
	else
		ap_req(&q, b->op);
	b->mutate(&q);
	return q;
}

static void test_decoder(void)
{
	struct xprobe_agent_req q, out;
	char why[256], big[400];

	/* the good ones */
	for (uint32_t op = XPROBE_AGENT_OP_HELLO; op <= XPROBE_AGENT_OP_CLOSE; op++) {
		if (op == XPROBE_AGENT_OP_ARM)
			q = good_arm();
		else
			ap_req(&q, op);
		CHECK(xpl_agent_req_decode(&q, sizeof(q), &out, why, sizeof(why)) == 0);
		CHECK(!memcmp(&q, &out, sizeof(q)));
	}
	ap_req(&q, XPROBE_AGENT_OP_SNAPSHOT);
	q.offset = 12345;
	CHECK(xpl_agent_req_decode(&q, sizeof(q), NULL, why, sizeof(why)) == 0);
	q = good_arm();
	ap_filter(&q, XPROBE_AGENT_KIND_NVTX_RANGE, XPROBE_AGENT_NAME_ANY, NULL);
	q.capacity = XPROBE_AGENT_CAPACITY_MAX;
	CHECK(xpl_agent_req_decode(&q, sizeof(q), NULL, why, sizeof(why)) == 0);
	/* device kinds decode (the server answers BACKEND_UNAVAILABLE) */
	ap_arm(&q, 10);
	ap_filter(&q, XPROBE_AGENT_KIND_KERNEL, XPROBE_AGENT_NAME_PREFIX, "gemm");
	q.filters[1].kind = XPROBE_AGENT_KIND_MEMCPY;
	q.filters[1].memcpy_kind = XPROBE_AGENT_MEMCPY_DTOH;
	q.nfilters = 2;
	q.mode = XPROBE_AGENT_MODE_AGGREGATE;
	CHECK(xpl_agent_req_decode(&q, sizeof(q), NULL, why, sizeof(why)) == 0);

	/* lengths */
	q = good_arm();
	CHECK(xpl_agent_req_decode(&q, sizeof(q) - 1, NULL, why, sizeof(why)) ==
	      -XPROBE_E_INVALID_ARGUMENT);
	CHECK(strstr(why, "351") != NULL);
	memset(big, 0, sizeof(big));
	memcpy(big, &q, sizeof(q));
	CHECK(xpl_agent_req_decode(big, sizeof(big), NULL, why, sizeof(why)) ==
	      -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xpl_agent_req_decode(NULL, 0, NULL, why, sizeof(why)) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(xpl_agent_req_op(&q, 8) == 0);
	CHECK(xpl_agent_req_op(&q, 16) == XPROBE_AGENT_OP_ARM);

	for (size_t i = 0; i < ARRAY_N(bads); i++) {
		q = bad_req(&bads[i]);
		memset(&out, 0xa5, sizeof(out));
		why[0] = '\0';
		if (xpl_agent_req_decode(&q, sizeof(q), &out, why, sizeof(why)) !=
		    -XPROBE_E_INVALID_ARGUMENT) {
			fprintf(stderr, "bad request %zu (%s) accepted\n", i, bads[i].what);
			CHECK(0);
			continue;
		}
		if (!strstr(why, bads[i].what)) {
			fprintf(stderr, "bad request %zu: '%s' does not say '%s'\n", i, why,
				bads[i].what);
			CHECK(0);
		}
		CHECK(((uint8_t *)&out)[0] == 0xa5); /* nothing handed out */
	}
}

/* --- the name rules alone ---------------------------------------------------------------------- */

static bool rule_ok(uint32_t match, const char *rule, const char *name)
{
	static struct xpl_agent_cap c;

	memset(&c, 0, sizeof(c));
	c.nrules = 1;
	c.rules[0].match = match;
	c.rules[0].len = rule ? (uint32_t)strlen(rule) : 0;
	if (rule)
		memcpy(c.rules[0].name, rule, c.rules[0].len);
	return xpl_agent_name_ok(&c, name);
}

static void test_name_rules(void)
{
	char lng[300], cut[300], rule127[128], rule126[127];
	struct xpl_agent_cap two;

	/* "step" + 192 x 'x' + "tep!" (200 bytes: kept 127) */
	memset(lng, 'x', 200);
	memcpy(lng, "step", 4);
	memcpy(lng + 196, "tep!", 4);
	lng[200] = '\0';
	CHECK(rule_ok(XPROBE_AGENT_NAME_EXACT, "step", "step"));
	CHECK(!rule_ok(XPROBE_AGENT_NAME_EXACT, "step", "ste"));
	CHECK(!rule_ok(XPROBE_AGENT_NAME_EXACT, "step", "steps"));
	CHECK(!rule_ok(XPROBE_AGENT_NAME_EXACT, "step", ""));
	CHECK(!rule_ok(XPROBE_AGENT_NAME_EXACT, "step", "Step"));
	CHECK(!rule_ok(XPROBE_AGENT_NAME_EXACT, "step", lng));
	CHECK(rule_ok(XPROBE_AGENT_NAME_PREFIX, "step", "stepper"));
	CHECK(rule_ok(XPROBE_AGENT_NAME_PREFIX, "step", "step"));
	CHECK(!rule_ok(XPROBE_AGENT_NAME_PREFIX, "step", "ste"));
	CHECK(!rule_ok(XPROBE_AGENT_NAME_PREFIX, "step", "xstep"));
	CHECK(rule_ok(XPROBE_AGENT_NAME_PREFIX, "step", lng));
	CHECK(rule_ok(XPROBE_AGENT_NAME_SUFFIX, "step", "prestep"));
	CHECK(rule_ok(XPROBE_AGENT_NAME_SUFFIX, "step", "step"));
	CHECK(!rule_ok(XPROBE_AGENT_NAME_SUFFIX, "step", "tep"));
	CHECK(!rule_ok(XPROBE_AGENT_NAME_SUFFIX, "step", "steps"));
	CHECK(!rule_ok(XPROBE_AGENT_NAME_SUFFIX, "tep!", lng)); /* a cut name has no end */
	CHECK(rule_ok(XPROBE_AGENT_NAME_CONTAINS, "tep", "xtepx"));
	CHECK(rule_ok(XPROBE_AGENT_NAME_CONTAINS, "tep", "tep"));
	CHECK(!rule_ok(XPROBE_AGENT_NAME_CONTAINS, "tep", "te"));
	CHECK(rule_ok(XPROBE_AGENT_NAME_CONTAINS, "stepx", lng));
	CHECK(!rule_ok(XPROBE_AGENT_NAME_CONTAINS, "tep!", lng)); /* only past the kept bytes */
	CHECK(rule_ok(XPROBE_AGENT_NAME_ANY, NULL, ""));
	CHECK(rule_ok(XPROBE_AGENT_NAME_ANY, NULL, lng));
	/* a 2-byte character across the cut: 126 x 'a', then U+00E9, then
	 * more; the record keeps 126 bytes, so a 127-byte prefix ending in the
	 * character's first byte is not admitted, a 126-byte one is */
	memset(cut, 'a', 126);
	cut[126] = (char)0xc3;
	cut[127] = (char)0xa9;
	memset(cut + 128, 'b', 20);
	cut[148] = '\0';
	memcpy(rule127, cut, 127);
	rule127[127] = '\0';
	memcpy(rule126, cut, 126);
	rule126[126] = '\0';
	CHECK(!rule_ok(XPROBE_AGENT_NAME_PREFIX, rule127, cut));
	CHECK(rule_ok(XPROBE_AGENT_NAME_PREFIX, rule126, cut));
	/* two rules: either */
	memset(&two, 0, sizeof(two));
	two.nrules = 2;
	two.rules[0] = (struct xpl_agent_rule){ XPROBE_AGENT_NAME_EXACT, 5, "other" };
	two.rules[1] = (struct xpl_agent_rule){ XPROBE_AGENT_NAME_SUFFIX, 3, "per" };
	CHECK(xpl_agent_name_ok(&two, "other"));
	CHECK(xpl_agent_name_ok(&two, "stepper"));
	CHECK(!xpl_agent_name_ok(&two, "step"));
	two.nrules = 0;
	CHECK(!xpl_agent_name_ok(&two, "step")); /* no NVTX rule: nothing */
}

/* --- hello ------------------------------------------------------------------------------------ */

static void test_hello(void)
{
	struct ap_fixture fx;
	struct ap_reply r = { 0 };
	char path[256], line[256];
	const char *preload[] = { NULL, NULL };
	static char env_preload[PATH_MAX + 16];
	int fd;

	if (fx_start(&fx, path, sizeof(path))) {
		CHECK(!"fixture started");
		return;
	}
	fd = ap_connect(path);
	CHECK(fd >= 0);
	CHECK(hello(fd, &r) == 0);
	CHECK(r.h.op == XPROBE_AGENT_OP_HELLO);
	CHECK(r.h.pid == (uint32_t)fx.pid);
	CHECK_EQ_U64(r.h.start_time, start_time_of(fx.pid));
	CHECK(r.h.features & XPROBE_AGENT_F_NVTX_ROUTED);
	CHECK(r.h.features & XPROBE_AGENT_F_HOST_MONOTONIC);
	CHECK(!(r.h.features & XPROBE_AGENT_F_INJECTED));
	CHECK(!(r.h.features & XPROBE_AGENT_F_DEVICE_BACKEND));
	CHECK(!(r.h.features & ~XPROBE_AGENT_F__ALL));
	CHECK(r.h.state == XPROBE_AGENT_IDLE && r.h.status == 0 && r.h.arm_ns == 0);
	CHECK(r.h.cuda_major == 0 && r.h.cupti_major == 0 && r.h.nchunks == 0);
	CHECK(r.h.message[0] == '\0');
	close(fd);
	/* the socket goes at exit */
	fx_stop(&fx);
	CHECK(access(path, F_OK) != 0);

	/* preloaded without the NVTX injection: an Agent, NVTX not routed */
	snprintf(env_preload, sizeof(env_preload), "LD_PRELOAD=%s", libso);
	preload[0] = env_preload;
	if (fx_start_env(&fx, path, sizeof(path), preload, false)) {
		CHECK(!"preloaded fixture started");
		return;
	}
	fd = ap_connect(path);
	CHECK(fd >= 0);
	CHECK(hello(fd, &r) == 0);
	CHECK(!(r.h.features & XPROBE_AGENT_F_NVTX_ROUTED));
	CHECK(r.h.features & XPROBE_AGENT_F_HOST_MONOTONIC);
	/* an NVTX ARM is still accepted (routing may begin later); the CLI
	 * checks the feature */
	CHECK(arm1(fd, 10, XPROBE_AGENT_NAME_EXACT, "step", &r) == 0);
	cmd(&fx, "burst 3", line, sizeof(line));
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK(r.h.nrecords == 0 && r.h.observed == 0);
	close(fd);
	fx_stop(&fx);
}

/* --- filters ------------------------------------------------------------------------------------ */

/* names N makes N x step, stepper, prestep, other, LONGNAME (200 bytes:
 * "step" + 192 x 'x' + "step"), each a push and a pop. */
struct rule_case {
	uint32_t match;
	const char *name;
	uint32_t match2; /* second rule, 0 none */
	const char *name2;
	int step, stepper, prestep, other, longname; /* admitted? */
};

static void check_rule(int fd, struct ap_fixture *fx, const struct rule_case *c, int n)
{
	struct xprobe_agent_req q;
	struct ap_reply r = { 0 };
	const struct xprobe_record *rec;
	char line[256], buf[256], cmdline[32];
	uint64_t want, t0, t1;
	int pushes = c->step + c->stepper + c->prestep + c->other + c->longname;
	bool names_ok = true, ts_ok = true, longs_ok = true;
	uint64_t longs = 0;

	ap_arm(&q, 100000);
	ap_filter(&q, XPROBE_AGENT_KIND_NVTX_RANGE, c->match, c->name);
	if (c->match2)
		ap_filter(&q, XPROBE_AGENT_KIND_NVTX_RANGE, c->match2, c->name2);
	t0 = ap_now_ns();
	CHECK(ap_rpc(fd, &q, &r) == 0 && r.h.status == 0);
	CHECK(r.h.state == XPROBE_AGENT_ACTIVE && r.h.capacity == 100000);
	CHECK(r.h.arm_ns >= t0 && r.h.arm_ns <= ap_now_ns());
	snprintf(cmdline, sizeof(cmdline), "names %d", n);
	cmd(fx, cmdline, line, sizeof(line));
	t1 = ap_now_ns();
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	want = (uint64_t)pushes * n * 2;
	CHECK_EQ_U64(r.h.nrecords, want);
	CHECK_EQ_U64(nrec(&r), want);
	/* observed counts only what passed the rules: the rest were refused
	 * before anything was reserved */
	CHECK_EQ_U64(r.h.observed, want);
	CHECK_EQ_U64(r.h.retained, want);
	CHECK(r.h.dropped == 0 && r.h.unknown == 0);
	CHECK(r.h.state == XPROBE_AGENT_STOPPED && r.h.stop_reason == XPROBE_AGENT_STOP_REQUESTED);
	CHECK(r.chunks_ok);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_PUSH, "step"), (uint64_t)c->step * n);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_PUSH, "stepper"), (uint64_t)c->stepper * n);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_PUSH, "prestep"), (uint64_t)c->prestep * n);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_PUSH, "other"), (uint64_t)c->other * n);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_POP, NULL), (uint64_t)pushes * n);
	AP_FOR_EACH(&r, rec)
	{
		if (rec->ts < r.h.arm_ns || rec->ts > t1)
			ts_ok = false;
		if (rec->type == XPROBE_EV_NVTX_POP && (rec->aux != 0 || rec->name_len))
			names_ok = false;
		if (rec->type != XPROBE_EV_NVTX_PUSH)
			continue;
		if (rec->aux != 0)
			names_ok = false;
		if (rec->name_len == XPROBE_NAME_MAX) { /* the long name, cut */
			longs++;
			ap_name(rec, buf, sizeof(buf));
			if ((rec->flags & XPROBE_RECF_NAME_COMPLETE) ||
			    strncmp(buf, "stepxxx", 7) ||
			    strspn(buf + 4, "x") != XPROBE_NAME_MAX - 4)
				longs_ok = false;
		} else if (!(rec->flags & XPROBE_RECF_NAME_COMPLETE)) {
			names_ok = false;
		}
	}
	CHECK_EQ_U64(longs, (uint64_t)c->longname * n);
	CHECK(names_ok);
	CHECK(ts_ok);
	CHECK(longs_ok);
	ap_reply_free(&r);
}

static void test_filters(void)
{
	static const struct rule_case cases[] = {
		{ XPROBE_AGENT_NAME_EXACT, "step", 0, NULL, 1, 0, 0, 0, 0 },
		{ XPROBE_AGENT_NAME_PREFIX, "step", 0, NULL, 1, 1, 0, 0, 1 },
		/* the long name ends in "step" but is cut: never a suffix match */
		{ XPROBE_AGENT_NAME_SUFFIX, "step", 0, NULL, 1, 0, 1, 0, 0 },
		{ XPROBE_AGENT_NAME_CONTAINS, "tep", 0, NULL, 1, 1, 1, 0, 1 },
		{ XPROBE_AGENT_NAME_EXACT, "other", XPROBE_AGENT_NAME_SUFFIX, "per", 0, 1, 0, 1,
		  0 },
		{ XPROBE_AGENT_NAME_ANY, NULL, 0, NULL, 1, 1, 1, 1, 1 },
		{ XPROBE_AGENT_NAME_EXACT, "nothing", 0, NULL, 0, 0, 0, 0, 0 },
	};
	struct ap_fixture fx;
	char path[256], line[64];
	int fd;

	if (fx_start(&fx, path, sizeof(path))) {
		CHECK(!"fixture started");
		return;
	}
	fd = ap_connect(path);
	CHECK(fd >= 0);
	for (size_t i = 0; i < ARRAY_N(cases); i++)
		check_rule(fd, &fx, &cases[i], 50);
	cmd(&fx, "levels", line, sizeof(line));
	CHECK_STR(line, "LEVELS ok");
	close(fd);
	fx_stop(&fx);
}

/* --- nesting, threads, before ARM, Ex ------------------------------------------------------------- */

static void test_nesting(void)
{
	static const char *const names[3] = { "n_a", "n_b", "n_c" };
	struct ap_fixture fx;
	struct ap_reply r = { 0 };
	const struct xprobe_record *rec;
	char path[256], line[256], buf[64];
	long tids[2];
	int fd, n = 200;
	int step[2] = { 0, 0 };
	bool order_ok = true;

	if (fx_start(&fx, path, sizeof(path))) {
		CHECK(!"fixture started");
		return;
	}
	fd = ap_connect(path);
	CHECK(arm1(fd, 100000, XPROBE_AGENT_NAME_PREFIX, "n_", &r) == 0);
	cmd(&fx, "nest 200", line, sizeof(line));
	CHECK(sscanf(line, "DONE nest %ld %ld", &tids[0], &tids[1]) == 2);
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK_EQ_U64(r.h.nrecords, 2ull * n * 6);
	/* per thread, in index order: push a0 b1 c2, pop 2 1 0, again */
	AP_FOR_EACH(&r, rec)
	{
		int t = rec->tid == (uint32_t)tids[0] ? 0 : rec->tid == (uint32_t)tids[1] ? 1 : -1;
		int k, lvl;

		if (t < 0) {
			order_ok = false;
			continue;
		}
		k = step[t]++ % 6;
		lvl = k < 3 ? k : 5 - k;
		if (rec->type != (k < 3 ? XPROBE_EV_NVTX_PUSH : XPROBE_EV_NVTX_POP) ||
		    rec->aux != (uint32_t)lvl)
			order_ok = false;
		if (k < 3 && strcmp(ap_name(rec, buf, sizeof(buf)), names[k]))
			order_ok = false;
	}
	CHECK(order_ok);
	CHECK(step[0] == n * 6 && step[1] == n * 6);
	ap_reply_free(&r);

	/* a rule on the middle level: its pops only */
	CHECK(arm1(fd, 100000, XPROBE_AGENT_NAME_EXACT, "n_b", &r) == 0);
	cmd(&fx, "nest 100", line, sizeof(line));
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_PUSH, "n_b"), 200);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_POP, NULL), 200);
	CHECK_EQ_U64(r.h.observed, 400);
	order_ok = true;
	AP_FOR_EACH(&r, rec)
	if (rec->aux != 1)
		order_ok = false;
	CHECK(order_ok);
	ap_reply_free(&r);
	cmd(&fx, "levels", line, sizeof(line));
	CHECK_STR(line, "LEVELS ok");
	close(fd);
	fx_stop(&fx);
}

static void test_xthread(void)
{
	struct ap_fixture fx;
	struct ap_reply r = { 0 };
	const struct xprobe_record *rec;
	char path[256], line[256];
	long tid_b = 0, tid_main = 0;
	uint64_t starts[300], nstart = 0, matched = 0;
	bool ok = true;
	int fd;

	if (fx_start(&fx, path, sizeof(path))) {
		CHECK(!"fixture started");
		return;
	}
	fd = ap_connect(path);
	CHECK(arm1(fd, 1000, XPROBE_AGENT_NAME_EXACT, "span", &r) == 0);
	cmd(&fx, "xthread 300", line, sizeof(line));
	CHECK(sscanf(line, "DONE xthread %ld %ld", &tid_b, &tid_main) == 2);
	CHECK(tid_b != tid_main);
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK_EQ_U64(r.h.nrecords, 600);
	AP_FOR_EACH(&r, rec)
	{
		if (rec->type == XPROBE_EV_NVTX_START) {
			if (rec->tid != (uint32_t)tid_b || !(rec->a0 & 1) || nstart == 300)
				ok = false;
			else
				starts[nstart++] = rec->a0;
		}
	}
	AP_FOR_EACH(&r, rec)
	{
		if (rec->type != XPROBE_EV_NVTX_END)
			continue;
		if (rec->tid != (uint32_t)tid_main)
			ok = false;
		for (uint64_t k = 0; k < nstart; k++)
			if (starts[k] == rec->a0) {
				matched++;
				starts[k] = 0;
				break;
			}
	}
	CHECK(ok);
	CHECK_EQ_U64(nstart, 300);
	CHECK_EQ_U64(matched, 300);
	ap_reply_free(&r);
	close(fd);
	fx_stop(&fx);
}

static void test_before_arm(void)
{
	struct ap_fixture fx;
	struct ap_reply r = { 0 };
	const struct xprobe_record *rec;
	char path[256], line[256];
	uint64_t start_id = 0, end_id = 1;
	int fd;

	if (fx_start(&fx, path, sizeof(path))) {
		CHECK(!"fixture started");
		return;
	}
	fd = ap_connect(path);
	cmd(&fx, "open", line, sizeof(line)); /* push + start, before ARM */
	CHECK(arm1(fd, 1000, XPROBE_AGENT_NAME_PREFIX, "open_", &r) == 0);
	/* their pop and end, then the same calls again, all after ARM */
	cmd(&fx, "close_open", line, sizeof(line));
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_PUSH, "open_push"), 1);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_POP, NULL), 1);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_START, "open_span"), 1);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_END, NULL), 1);
	CHECK_EQ_U64(r.h.nrecords, 4);
	CHECK_EQ_U64(r.h.observed, 4);
	AP_FOR_EACH(&r, rec)
	{
		if (rec->type == XPROBE_EV_NVTX_START)
			start_id = rec->a0;
		if (rec->type == XPROBE_EV_NVTX_END)
			end_id = rec->a0;
	}
	CHECK(start_id == end_id);
	/* the push came first in the capture: the pop is the second push's */
	CHECK(r.len >= 48 && ((const struct xprobe_record *)r.recs)->type == XPROBE_EV_NVTX_PUSH);
	ap_reply_free(&r);

	/* ranges begun in one capture (recorded there), ended in the next:
	 * their ends are not admitted in the second */
	CHECK(arm1(fd, 1000, XPROBE_AGENT_NAME_PREFIX, "open_", &r) == 0);
	cmd(&fx, "open", line, sizeof(line));
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK_EQ_U64(r.h.nrecords, 2);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_START, "open_span"), 1);
	CHECK(arm1(fd, 1000, XPROBE_AGENT_NAME_PREFIX, "open_", &r) == 0);
	cmd(&fx, "close_open", line, sizeof(line));
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK_EQ_U64(r.h.nrecords, 4);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_POP, NULL), 1);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_END, NULL), 1);
	ap_reply_free(&r);
	cmd(&fx, "levels", line, sizeof(line));
	CHECK_STR(line, "LEVELS ok");
	close(fd);
	fx_stop(&fx);
}

static void test_ex(void)
{
	struct ap_fixture fx;
	struct ap_reply r = { 0 };
	char path[256], line[256];
	int fd;

	if (fx_start(&fx, path, sizeof(path))) {
		CHECK(!"fixture started");
		return;
	}
	fd = ap_connect(path);
	CHECK(arm1(fd, 1000, XPROBE_AGENT_NAME_ANY, NULL, &r) == 0);
	cmd(&fx, "ex 20", line, sizeof(line));
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	/* ASCII Ex forms are recorded; the wide ones are not, and the NULL
	 * attribute struct is counted as unknown */
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_PUSH, "step"), 20);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_POP, NULL), 20);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_START, "step"), 20);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_END, NULL), 20);
	CHECK_EQ_U64(r.h.nrecords, 80);
	CHECK_EQ_U64(r.h.unknown, 1);
	ap_reply_free(&r);
	cmd(&fx, "levels", line, sizeof(line));
	CHECK_STR(line, "LEVELS ok");
	close(fd);
	fx_stop(&fx);
}

/* --- bounds and offsets ------------------------------------------------------------------------------- */

static void test_overflow(void)
{
	struct ap_fixture fx;
	struct ap_reply r = { 0 };
	char path[256], line[256];
	int fd, fd2;

	if (fx_start(&fx, path, sizeof(path))) {
		CHECK(!"fixture started");
		return;
	}
	fd = ap_connect(path);
	fd2 = ap_connect(path);
	CHECK(arm1(fd, 10, XPROBE_AGENT_NAME_EXACT, "step", &r) == 0);
	cmd(&fx, "burst 20", line, sizeof(line));
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_SNAPSHOT, 0, &r) == 0);
	CHECK(r.h.state == XPROBE_AGENT_LIMIT_REACHED);
	CHECK(r.h.stop_reason == XPROBE_AGENT_STOP_RECORD_LIMIT);
	CHECK_EQ_U64(r.h.nrecords, 10);
	CHECK_EQ_U64(r.h.retained, 10);
	/* pushes 6..20 found no room; their pops are not admitted (their
	 * range was not recorded) */
	CHECK_EQ_U64(r.h.dropped, 15);
	CHECK_EQ_U64(r.h.observed, 25);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_PUSH, "step"), 5);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_POP, NULL), 5);
	/* still armed (frozen): another ARM is refused */
	CHECK(arm1(fd2, 10, XPROBE_AGENT_NAME_EXACT, "step", &r) == -XPROBE_E_ALREADY_ACTIVE);
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_STOP, 10, &r) == 0);
	CHECK(r.h.state == XPROBE_AGENT_STOPPED);
	CHECK(r.h.stop_reason == XPROBE_AGENT_STOP_RECORD_LIMIT);
	CHECK(r.h.nrecords == 0 && r.h.offset == 10 && r.h.nchunks == 0);
	/* after STOP a new capture may begin */
	CHECK(arm1(fd2, 10, XPROBE_AGENT_NAME_EXACT, "step", &r) == 0);
	CHECK(r.h.capacity == 10 && r.h.retained == 0 && r.h.dropped == 0);
	CHECK(ap_simple(fd2, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	close(fd);
	close(fd2);
	fx_stop(&fx);
}

static void test_snapshot(void)
{
	struct ap_fixture fx;
	struct ap_reply r1 = { 0 }, r2 = { 0 }, r3 = { 0 };
	char path[256], line[256];
	int fd;

	if (fx_start(&fx, path, sizeof(path))) {
		CHECK(!"fixture started");
		return;
	}
	fd = ap_connect(path);
	CHECK(arm1(fd, 100000, XPROBE_AGENT_NAME_EXACT, "step", &r1) == 0);
	cmd(&fx, "burst 5", line, sizeof(line));
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_SNAPSHOT, 0, &r1) == 0);
	CHECK(r1.h.offset == 0 && r1.h.nrecords == 10 && r1.h.state == XPROBE_AGENT_ACTIVE);
	CHECK(r1.h.bytes == r1.len && r1.h.nchunks == r1.packets && r1.packets == 1);
	cmd(&fx, "burst 5", line, sizeof(line));
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_SNAPSHOT, 10, &r2) == 0);
	CHECK(r2.h.offset == 10 && r2.h.nrecords == 10);
	/* back to 4: the same bytes again */
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_SNAPSHOT, 4, &r3) == 0);
	CHECK(r3.h.offset == 4 && r3.h.nrecords == 16);
	CHECK(r3.len == r1.len - 2 * (48 + 40) + r2.len);
	{
		/* records 4..9 of the first snapshot begin r3 (timestamps are
		 * converted per reply, so compare all but ts) */
		const struct xprobe_record *a, *b;
		size_t oa = 0, ob = 0;
		bool same = true;
		int k = 0;

		while (k < 4 && oa < r1.len) {
			a = (const struct xprobe_record *)(r1.recs + oa);
			oa += a->size;
			k++;
		}
		while (oa < r1.len && ob < r3.len) {
			a = (const struct xprobe_record *)(r1.recs + oa);
			b = (const struct xprobe_record *)(r3.recs + ob);
			if (a->size != b->size || a->type != b->type || a->tid != b->tid ||
			    a->aux != b->aux ||
			    memcmp((const uint8_t *)a + 16, (const uint8_t *)b + 16,
				   a->size - 16) ||
			    (a->ts > b->ts ? a->ts - b->ts : b->ts - a->ts) > 1000)
				same = false;
			oa += a->size;
			ob += b->size;
		}
		CHECK(same);
	}
	ap_reply_free(&r1);
	ap_reply_free(&r2);
	ap_reply_free(&r3);
	/* past the committed records: refused, and the capture goes on */
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_SNAPSHOT, 21, &r1) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(strstr(r1.h.message, "offset 21") != NULL);
	CHECK(r1.h.state == XPROBE_AGENT_ACTIVE && r1.h.nchunks == 0);
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_STOP, 21, &r1) == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(state_of(fd) == XPROBE_AGENT_ACTIVE);
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_SNAPSHOT, 20, &r1) == 0);
	CHECK(r1.h.nrecords == 0 && r1.h.nchunks == 0 && r1.h.offset == 20);

	/* many records: packets of whole records, none over 64 KiB */
	cmd(&fx, "burst 3000", line, sizeof(line));
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_STOP, 20, &r1) == 0);
	CHECK_EQ_U64(r1.h.nrecords, 6000);
	CHECK_EQ_U64(nrec(&r1), 6000);
	CHECK(r1.h.nchunks == r1.packets && r1.packets >= 4);
	CHECK(r1.chunks_ok);
	CHECK(r1.h.bytes == r1.len && r1.len == 3000 * 48 + 3000 * 40);
	/* a STOP again gives the same final records */
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_STOP, 0, &r2) == 0);
	CHECK_EQ_U64(r2.h.nrecords, 6020);
	ap_reply_free(&r1);
	ap_reply_free(&r2);
	close(fd);
	fx_stop(&fx);
}

/*
 * Threads record while the capture is read, stopped, freed and armed
 * again.  Each thread loops push, start, end of that start, pop; in a
 * capture, per thread and in index order, a pop only closes a recorded
 * push, an end only its own recorded start, never two opens of a kind.
 * (A thread's first records may be a start whose push came before ARM.)
 * Under the sanitizers, the fixture also proves that no producer touched
 * a freed capture.
 */
struct thread_state {
	uint32_t tid;
	bool push_open;
	uint64_t start_open; /* id, 0 none */
};

static bool pattern_ok(const struct ap_reply *r, struct thread_state *ts, size_t nts)
{
	const struct xprobe_record *rec;

	AP_FOR_EACH(r, rec)
	{
		struct thread_state *t = NULL;

		for (size_t i = 0; i < nts && !t; i++)
			if (ts[i].tid == rec->tid || !ts[i].tid)
				t = &ts[i];
		if (!t)
			return false;
		t->tid = rec->tid;
		switch (rec->type) {
		case XPROBE_EV_NVTX_PUSH:
			if (t->push_open || rec->aux != 0)
				return false;
			t->push_open = true;
			break;
		case XPROBE_EV_NVTX_POP:
			if (!t->push_open || rec->aux != 0)
				return false;
			t->push_open = false;
			break;
		case XPROBE_EV_NVTX_START:
			if (t->start_open || !(rec->a0 & 1))
				return false;
			t->start_open = rec->a0;
			break;
		case XPROBE_EV_NVTX_END:
			if (rec->a0 != t->start_open)
				return false;
			t->start_open = 0;
			break;
		default:
			return false;
		}
	}
	return true;
}

static void test_concurrent(void)
{
	struct ap_fixture fx;
	struct ap_reply r = { 0 };
	char path[256], line[256];
	uint64_t total = 0;
	bool ok = true;
	int fd, full = 0;

	if (fx_start(&fx, path, sizeof(path))) {
		CHECK(!"fixture started");
		return;
	}
	fd = ap_connect(path);
	cmd(&fx, "spin 3", line, sizeof(line));
	for (int cycle = 0; cycle < 30 && ok; cycle++) {
		struct thread_state ts[8];
		uint64_t off = 0;

		memset(ts, 0, sizeof(ts));
		if (arm1(fd, cycle % 3 ? 100000 : 3000, XPROBE_AGENT_NAME_EXACT, "step", &r)) {
			ok = false;
			break;
		}
		for (int k = 0; k < 3; k++) {
			usleep(1000);
			if (ap_simple(fd, XPROBE_AGENT_OP_SNAPSHOT, off, &r) || r.h.offset != off ||
			    !r.chunks_ok || !pattern_ok(&r, ts, 8)) {
				fprintf(stderr, "cycle %d snapshot %d at %llu: bad\n", cycle, k,
					(unsigned long long)off);
				ok = false;
			}
			off += r.h.nrecords;
		}
		if (ap_simple(fd, XPROBE_AGENT_OP_STOP, off, &r) || !r.chunks_ok ||
		    !pattern_ok(&r, ts, 8) || off + r.h.nrecords != r.h.retained) {
			fprintf(stderr, "cycle %d stop at %llu: %llu records, %llu retained\n",
				cycle, (unsigned long long)off, (unsigned long long)r.h.nrecords,
				(unsigned long long)r.h.retained);
			ok = false;
		}
		total += r.h.retained;
		full += r.h.stop_reason == XPROBE_AGENT_STOP_RECORD_LIMIT;
	}
	CHECK(ok);
	CHECK(total > 0);
	CHECK(full > 0 && full < 30); /* both kinds: filled, and stopped while recording */
	fprintf(stderr,
		"test_lib_agent: %llu records in 30 captures (%d filled) under 3 recording "
		"threads\n",
		(unsigned long long)total, full);
	ap_reply_free(&r);
	cmd(&fx, "unspin", line, sizeof(line));
	cmd(&fx, "levels", line, sizeof(line));
	CHECK_STR(line, "LEVELS ok");
	close(fd);
	fx_stop(&fx);
}

/* --- malformed over the socket ---------------------------------------------------------------------------- */

static void test_malformed_socket(void)
{
	struct ap_fixture fx;
	struct ap_reply r = { 0 }, before = { 0 }, after = { 0 };
	struct xprobe_agent_req q;
	char path[256], line[256], raw[400];
	int fd;

	if (fx_start(&fx, path, sizeof(path))) {
		CHECK(!"fixture started");
		return;
	}
	fd = ap_connect(path);
	/* idle: each refused, still idle, connection still usable */
	for (size_t i = 0; i < ARRAY_N(bads); i++) {
		q = bad_req(&bads[i]);
		CHECK(ap_rpc(fd, &q, &r) == 0);
		CHECK(r.h.status == -XPROBE_E_INVALID_ARGUMENT);
		CHECK(strstr(r.h.message, bads[i].what) != NULL);
		CHECK(r.h.nchunks == 0);
		CHECK(state_of(fd) == XPROBE_AGENT_IDLE);
	}
	/* a short and a long packet */
	q = good_arm();
	CHECK(ap_rpc_raw(fd, &q, 100, &r) == 0 && r.h.status == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(r.h.op == XPROBE_AGENT_OP_ARM);
	memset(raw, 0, sizeof(raw));
	memcpy(raw, &q, sizeof(q));
	CHECK(ap_rpc_raw(fd, raw, sizeof(raw), &r) == 0 &&
	      r.h.status == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(ap_rpc_raw(fd, raw, 3, &r) == 0 && r.h.status == -XPROBE_E_INVALID_ARGUMENT);
	CHECK(r.h.op == 0);
	CHECK(state_of(fd) == XPROBE_AGENT_IDLE);

	/* armed: refused requests change nothing (capacity, counts, state) */
	CHECK(arm1(fd, 1000, XPROBE_AGENT_NAME_EXACT, "step", &r) == 0);
	cmd(&fx, "burst 3", line, sizeof(line));
	CHECK(hello(fd, &before) == 0);
	for (size_t i = 0; i < ARRAY_N(bads); i++) {
		q = bad_req(&bads[i]);
		CHECK(ap_rpc(fd, &q, &r) == 0 && r.h.status == -XPROBE_E_INVALID_ARGUMENT);
	}
	CHECK(hello(fd, &after) == 0);
	CHECK(after.h.state == XPROBE_AGENT_ACTIVE);
	CHECK(after.h.capacity == before.h.capacity && after.h.arm_ns == before.h.arm_ns);
	CHECK(after.h.observed == 6 && after.h.retained == 6);
	/* the capture is intact and still records */
	cmd(&fx, "burst 1", line, sizeof(line));
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK_EQ_U64(r.h.nrecords, 8);
	ap_reply_free(&r);
	/* a device kind in a process without CUDA: CUDA_CONTEXT_NOT_FOUND,
	 * nothing armed, and CUPTI never loaded (test_lib_cupti.c has the rest) */
	ap_arm(&q, 10);
	ap_filter(&q, XPROBE_AGENT_KIND_NVTX_RANGE, XPROBE_AGENT_NAME_EXACT, "step");
	ap_filter(&q, XPROBE_AGENT_KIND_KERNEL, XPROBE_AGENT_NAME_PREFIX, "gemm");
	CHECK(ap_rpc(fd, &q, &r) == 0 && r.h.status == -XPROBE_E_CUDA_CONTEXT_NOT_FOUND);
	CHECK(r.h.state == XPROBE_AGENT_FAILED);
	CHECK(strstr(r.h.message, "no CUDA runtime") != NULL);
	CHECK(!(r.h.features & XPROBE_AGENT_F_DEVICE_BACKEND) && !r.h.cuda_major);
	CHECK(ap_maps_has(fx.pid, "libcupti") == 0);
	CHECK(state_of(fd) == XPROBE_AGENT_STOPPED); /* the stopped capture is still there */
	close(fd);
	fx_stop(&fx);
}

/* --- one at a time, SIGKILL -------------------------------------------------------------------------------- */

static void test_one_at_a_time(void)
{
	struct ap_fixture fx;
	struct ap_reply r = { 0 };
	char path[256], line[256];
	int a, b;

	if (fx_start(&fx, path, sizeof(path))) {
		CHECK(!"fixture started");
		return;
	}
	a = ap_connect(path);
	b = ap_connect(path);
	CHECK(arm1(a, 1000, XPROBE_AGENT_NAME_EXACT, "step", &r) == 0);
	CHECK(arm1(b, 1000, XPROBE_AGENT_NAME_EXACT, "other", &r) == -XPROBE_E_ALREADY_ACTIVE);
	CHECK(strstr(r.h.message, "already armed") != NULL);
	CHECK(r.h.state == XPROBE_AGENT_ACTIVE);
	CHECK(arm1(a, 1000, XPROBE_AGENT_NAME_EXACT, "other", &r) == -XPROBE_E_ALREADY_ACTIVE);
	CHECK(ap_simple(b, XPROBE_AGENT_OP_SNAPSHOT, 0, &r) == -XPROBE_E_NOT_ACTIVE);
	CHECK(ap_simple(b, XPROBE_AGENT_OP_STOP, 0, &r) == -XPROBE_E_NOT_ACTIVE);
	CHECK(ap_simple(b, XPROBE_AGENT_OP_CLOSE, 0, &r) == -XPROBE_E_ALREADY_ACTIVE);
	/* b is still connected and a's capture untouched, with the first
	 * rule, not the refused one's */
	CHECK(hello(b, &r) == 0 && r.h.state == XPROBE_AGENT_ACTIVE);
	cmd(&fx, "names 2", line, sizeof(line));
	CHECK(ap_simple(a, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK_EQ_U64(r.h.nrecords, 4);
	CHECK_EQ_U64(count(&r, XPROBE_EV_NVTX_PUSH, "step"), 2);
	ap_reply_free(&r);
	close(a);
	close(b);
	fx_stop(&fx);
}

static void test_sigkill(void)
{
	struct ap_fixture fx;
	struct ap_reply r = { 0 };
	char path[256], line[256], c;
	int p[2], fd;
	uint64_t t0, t1 = 0;
	pid_t kid;

	if (fx_start(&fx, path, sizeof(path))) {
		CHECK(!"fixture started");
		return;
	}
	fd = ap_connect(path);
	CHECK(pipe(p) == 0);
	kid = fork();
	if (kid == 0) {
		int k = ap_connect(path);
		struct ap_reply kr = { 0 };

		if (k < 0 || arm1(k, 1000, XPROBE_AGENT_NAME_EXACT, "step", &kr) != 0)
			_exit(1);
		if (write(p[1], "a", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	CHECK(read(p[0], &c, 1) == 1);
	close(p[0]);
	cmd(&fx, "burst 2", line, sizeof(line));
	CHECK(hello(fd, &r) == 0);
	CHECK(r.h.state == XPROBE_AGENT_ACTIVE && r.h.observed == 4);
	t0 = ap_now_ns();
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	for (int i = 0; i < 2000; i++) {
		if (state_of(fd) == XPROBE_AGENT_IDLE) {
			t1 = ap_now_ns();
			break;
		}
		usleep(500);
	}
	CHECK(t1 != 0);
	fprintf(stderr, "test_lib_agent: disarmed %.1f ms after the SIGKILL\n", (t1 - t0) / 1e6);
	CHECK(t1 - t0 <= 100000000ull);
	/* a new measurement works */
	CHECK(arm1(fd, 1000, XPROBE_AGENT_NAME_EXACT, "step", &r) == 0);
	cmd(&fx, "burst 3", line, sizeof(line));
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK_EQ_U64(r.h.nrecords, 6);
	ap_reply_free(&r);
	close(fd);
	fx_stop(&fx);
}

/* --- permissions --------------------------------------------------------------------------------------- */

#define NOBODY 65534

/* In a child running as @uid: connect to @path and send a HELLO.  Exit 0
 * when the Agent answered, 3 when it closed the connection unanswered, 2
 * when connect failed. */
static int peer_as(uid_t uid, const char *path)
{
	pid_t pid = fork();
	int st = -1;

	if (pid == 0) {
		struct ap_reply r = { 0 };
		struct xprobe_agent_req q;
		int fd, rc;

		if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			_exit(4);
		fd = ap_connect(path);
		if (fd < 0)
			_exit(2);
		ap_req(&q, XPROBE_AGENT_OP_HELLO);
		rc = ap_rpc(fd, &q, &r);
		_exit(rc == 0 ? 0 : 3);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_other_uid(void)
{
	struct ap_fixture fx;
	struct ap_reply r = { 0 };
	char path[256], dir[PATH_MAX], link_path[PATH_MAX + 8];
	int fd;

	if (fx_start(&fx, path, sizeof(path))) {
		CHECK(!"fixture started");
		return;
	}
	/* nobody cannot even reach the socket through its 0700 directory ... */
	CHECK(peer_as(NOBODY, path) == 2);
	/* ... so give it a way there (a hard link in a world-readable
	 * directory, the socket's inode opened up): now only SO_PEERCRED
	 * stands between it and the Agent */
	snprintf(dir, sizeof(dir), "%s/peer", scratch);
	CHECK(mkdir(dir, 0755) == 0 && chmod(scratch, 0755) == 0);
	snprintf(link_path, sizeof(link_path), "%s/s", dir);
	CHECK(link(path, link_path) == 0);
	CHECK(chmod(link_path, 0777) == 0);
	CHECK(peer_as(NOBODY, link_path) == 3);
	/* root passes the same way */
	CHECK(peer_as(0, link_path) == 0);
	fd = ap_connect(path);
	CHECK(hello(fd, &r) == 0 && r.h.state == XPROBE_AGENT_IDLE);
	close(fd);
	unlink(link_path);
	chmod(scratch, 0700);
	fx_stop(&fx);
}

/*
 * In a child running as @uid (with @env set, "NAME=value" or NULL): call
 * xprobe_agent_start() of this (static) libxprobe.  Its return code, the
 * error text in @why, and whether a socket exists afterwards.
 */
static int start_as(uid_t uid, const char *env, char *why, size_t whylen, bool *served)
{
	int p[2], st = -1;
	pid_t pid;
	ssize_t n;

	*served = false;
	why[0] = '\0';
	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		char buf[512], sock[256];
		int rc;

		close(p[0]);
		if (env)
			putenv((char *)env);
		if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			_exit(100);
		char err[400];
		int has;

		rc = xprobe_agent_start();
		snprintf(err, sizeof(err), "%s", rc ? xprobe_last_error() : "");
		has = xprobe_agent_socket_path(sock, sizeof(sock)) == 0 && access(sock, F_OK) == 0;
		snprintf(buf, sizeof(buf), "%d %d %s", rc, has, err);
		if (write(p[1], buf, strlen(buf)) < 0)
			_exit(101);
		_exit(0); /* no atexit: a served socket stays for the test to see */
	}
	close(p[1]);
	n = read(p[0], why, whylen - 1);
	close(p[0]);
	waitpid(pid, &st, 0);
	if (n <= 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1000;
	why[n] = '\0';
	{
		int rc = 0, s = 0, used = 0;

		if (sscanf(why, "%d %d %n", &rc, &s, &used) < 2)
			return -1001;
		*served = s;
		memmove(why, why + used, strlen(why + used) + 1);
		if (getenv("AGENT_TEST_VERBOSE"))
			fprintf(stderr, "start_as(%u): %d %s\n", (unsigned)uid, rc, why);
		return rc;
	}
}

static void test_directory(void)
{
	uid_t u = 61000 + (uid_t)(getpid() % 3000);
	char dir[64], away[PATH_MAX], why[512];
	struct stat st;
	bool served;

	snprintf(dir, sizeof(dir), XPROBE_AGENT_DIR_FMT, (unsigned)u);
	lt_rm_rf(dir);
	snprintf(away, sizeof(away), "%s/away", scratch);
	CHECK(mkdir(away, 0700) == 0 && chown(away, u, u) == 0);
	CHECK(chmod(scratch, 0755) == 0);

	/* owned by another uid (root here) */
	CHECK(mkdir(dir, 0700) == 0);
	CHECK(start_as(u, NULL, why, sizeof(why), &served) == -XPROBE_E_PERMISSION_DENIED);
	CHECK(!served && strstr(why, "owned by uid 0") != NULL);
	CHECK(lt_count_names(dir, "agent-") == 0);
	/* ours, but 0755 */
	CHECK(chown(dir, u, u) == 0 && chmod(dir, 0755) == 0);
	CHECK(start_as(u, NULL, why, sizeof(why), &served) == -XPROBE_E_PERMISSION_DENIED);
	CHECK(!served && strstr(why, "mode 0755") != NULL);
	CHECK(lt_count_names(dir, "agent-") == 0);
	/* a symbolic link to a good directory of ours */
	CHECK(rmdir(dir) == 0 && symlink(away, dir) == 0);
	CHECK(start_as(u, NULL, why, sizeof(why), &served) == -XPROBE_E_PERMISSION_DENIED);
	CHECK(!served && strstr(why, "symbolic link") != NULL);
	CHECK(lt_count_names(away, "agent-") == 0);
	/* a file */
	CHECK(unlink(dir) == 0 && close(open(dir, O_CREAT | O_WRONLY, 0600)) == 0);
	CHECK(chown(dir, u, u) == 0);
	CHECK(start_as(u, NULL, why, sizeof(why), &served) == -XPROBE_E_PERMISSION_DENIED);
	CHECK(!served && strstr(why, "not a directory") != NULL);
	/* none: created 0700 (whatever the umask), served */
	CHECK(unlink(dir) == 0);
	umask(0777);
	CHECK(start_as(u, NULL, why, sizeof(why), &served) == 0);
	umask(022);
	CHECK(served);
	CHECK(lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == u &&
	      (st.st_mode & 07777) == 0700);
	/* in it (the child left without its atexit) */
	CHECK(lt_count_names(dir, "agent-") == 1);
	CHECK(lt_count_names(dir, ".tmp") == 0);
	/* switched off */
	CHECK(start_as(u, "XPROBE_AGENT=0", why, sizeof(why), &served) ==
	      -XPROBE_E_PERMISSION_DENIED);
	CHECK(!served && strstr(why, "switched off") != NULL);
	CHECK(start_as(u, "XPROBE_AGENT=maybe", why, sizeof(why), &served) ==
	      -XPROBE_E_PERMISSION_DENIED);
	CHECK(!served && strstr(why, "expected 0 or 1") != NULL);
	lt_rm_rf(dir);
	chmod(scratch, 0700);
}

/* --- injected, sweep, coexistence, fork ----------------------------------------------------------------- */

static bool maps_libxprobe(pid_t pid)
{
	char path[64], buf[1 << 16];

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	lt_read_file(path, buf, sizeof(buf));
	return strstr(buf, "libxprobe.so") != NULL;
}

static void test_injected(void)
{
	struct ap_fixture fx;
	struct ap_reply r = { 0 };
	char path[256], line[512], p2[256];
	int fd, rc = -1;

	if (fx_start(&fx, path, sizeof(path))) {
		CHECK(!"fixture started");
		return;
	}
	/* not injected: CLOSE keeps the socket */
	fd = ap_connect(path);
	CHECK(arm1(fd, 100, XPROBE_AGENT_NAME_EXACT, "step", &r) == 0);
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_CLOSE, 0, &r) == 0);
	CHECK(r.h.state == XPROBE_AGENT_STOPPED);
	CHECK(ap_read_reply(fd, &r) == -ECONNRESET); /* CLOSE ends the connection */
	close(fd);
	CHECK(access(path, F_OK) == 0);
	fd = ap_connect(path);
	CHECK(fd >= 0 && hello(fd, &r) == 0 && r.h.state == XPROBE_AGENT_IDLE);
	close(fd);

	/* what online injection does after its dlopen */
	cmd(&fx, "inject", line, sizeof(line));
	CHECK(sscanf(line, "DONE inject %d %255s", &rc, p2) == 2 && rc == 0);
	CHECK_STR(p2, path);
	fd = ap_connect(path);
	CHECK(hello(fd, &r) == 0 && (r.h.features & XPROBE_AGENT_F_INJECTED));
	CHECK(arm1(fd, 100, XPROBE_AGENT_NAME_EXACT, "step", &r) == 0);
	cmd(&fx, "burst 2", line, sizeof(line));
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_CLOSE, 0, &r) == 0);
	CHECK(r.h.state == XPROBE_AGENT_STOPPED && r.h.retained == 4);
	/* the socket is gone when the reply comes; the library stays */
	CHECK(access(path, F_OK) != 0);
	CHECK(ap_read_reply(fd, &r) == -ECONNRESET);
	close(fd);
	CHECK(ap_connect(path) < 0);
	cmd(&fx, "path", line, sizeof(line));
	CHECK_STR(line, "PATH -");
	CHECK(maps_libxprobe(fx.pid));
	/* NVTX calls still land in the library (nothing armed) */
	cmd(&fx, "burst 100", line, sizeof(line));
	cmd(&fx, "levels", line, sizeof(line));
	CHECK_STR(line, "LEVELS ok");
	/* a later start serves again */
	cmd(&fx, "inject", line, sizeof(line));
	CHECK(sscanf(line, "DONE inject %d %255s", &rc, p2) == 2 && rc == 0);
	CHECK_STR(p2, path);
	for (int i = 0; i < 50 && access(path, F_OK) != 0; i++)
		usleep(1000);
	fd = ap_connect(path);
	CHECK(fd >= 0 && hello(fd, &r) == 0 && (r.h.features & XPROBE_AGENT_F_INJECTED));
	CHECK(arm1(fd, 100, XPROBE_AGENT_NAME_EXACT, "step", &r) == 0);
	cmd(&fx, "burst 1", line, sizeof(line));
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0 && r.h.nrecords == 2);
	ap_reply_free(&r);
	close(fd);
	fx_stop(&fx);
	CHECK(access(path, F_OK) != 0);
}

/* A program that dlopens libxprobe and dlcloses it: the Agent's thread
 * runs in it, so it stays mapped and keeps answering. */
static void test_dlclose(void)
{
	static char env_lib[PATH_MAX + 32];
	const char *env[] = { env_lib, NULL };
	struct ap_fixture fx;
	struct ap_reply r = { 0 };
	char path[256], line[256];
	int loaded = 0, mapped = 0, fd;

	snprintf(env_lib, sizeof(env_lib), "AGENT_FIXTURE_LIB=%s", libso);
	if (fx_start_env(&fx, path, sizeof(path), env, false)) {
		CHECK(!"fixture started");
		return;
	}
	cmd(&fx, "loadclose", line, sizeof(line));
	CHECK(sscanf(line, "DONE loadclose %d %d", &loaded, &mapped) == 2);
	CHECK(loaded == 1 && mapped == 1);
	expected_path(fx.pid, path, sizeof(path));
	usleep(20000); /* the thread would wake into unmapped code by now */
	fd = ap_connect(path);
	CHECK(fd >= 0 && hello(fd, &r) == 0 && r.h.pid == (uint32_t)fx.pid);
	close(fd);
	fx_stop(&fx);
}

static void test_sweep(void)
{
	struct ap_fixture fx;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char path[256], dead[256], live[256], dir[64];
	pid_t gone = fork();
	int s1, s2;

	if (gone == 0)
		_exit(0);
	waitpid(gone, NULL, 0);
	snprintf(dir, sizeof(dir), XPROBE_AGENT_DIR_FMT, (unsigned)geteuid());
	mkdir(dir, 0700);
	/* a dead process's socket (nobody listens), and one whose pid is not
	 * here but which accepts (as in another PID namespace) */
	snprintf(dead, sizeof(dead), "%s/agent-%d-12345.sock", dir, (int)gone);
	snprintf(live, sizeof(live), "%s/agent-%d-12346.sock", dir, (int)gone);
	s1 = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	memcpy(a.sun_path, dead, strlen(dead) + 1);
	CHECK(bind(s1, (struct sockaddr *)&a, sizeof(a)) == 0);
	close(s1);
	s2 = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	memcpy(a.sun_path, live, strlen(live) + 1);
	CHECK(bind(s2, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(s2, 4) == 0);
	CHECK(access(dead, F_OK) == 0);
	if (fx_start(&fx, path, sizeof(path)) == 0)
		fx_stop(&fx);
	else
		CHECK(!"fixture started");
	CHECK(access(dead, F_OK) != 0);
	CHECK(access(live, F_OK) == 0);
	close(s2);
	unlink(live);
}

static void test_coexist(void)
{
	static char env_dir[PATH_MAX + 32];
	const char *env[4];
	struct ap_fixture fx;
	struct ap_reply r = { 0 };
	char path[256], line[256], base[PATH_MAX], sess[PATH_MAX], err[256];
	struct xprobe_session *s = NULL;
	int fd;

	snprintf(base, sizeof(base), "%s/coexist", scratch);
	snprintf(env_dir, sizeof(env_dir), "XPROBE_INSPECT_OUTPUT_DIR=%s", base);
	env[0] = "XPROBE_INSPECT_ENABLE=1";
	env[1] = env_dir;
	env[2] = "XPROBE_INSPECT_ACTIVITIES=system_profile";
	env[3] = NULL;
	if (fx_start_env(&fx, path, sizeof(path), env, true)) {
		CHECK(!"fixture started");
		return;
	}
	fd = ap_connect(path);
	CHECK(arm1(fd, 1000, XPROBE_AGENT_NAME_EXACT, "step", &r) == 0);
	cmd(&fx, "names 10", line, sizeof(line));
	CHECK(ap_simple(fd, XPROBE_AGENT_OP_STOP, 0, &r) == 0);
	CHECK_EQ_U64(r.h.nrecords, 20);
	ap_reply_free(&r);
	close(fd);
	fx_stop(&fx);
	/* the session has everything (both sinks were fed by each call) */
	CHECK(lt_find_session(base, sess, sizeof(sess)) == 0);
	CHECK(xprobe_session_open(sess, &s, err, sizeof(err)) == 0);
	if (s) {
		const char *name = NULL;
		const struct xprobe_xtf *x = NULL;

		for (size_t i = 0; (x = xprobe_session_get_file(s, i, &name)); i++)
			if (name && !strcmp(name, "ntrace.pb"))
				break;
		CHECK(x != NULL);
		if (x) {
			CHECK_EQ_U64(lt_count(x, XPROBE_EV_NVTX_PUSH), 50);
			CHECK_EQ_U64(lt_count(x, XPROBE_EV_NVTX_POP), 50);
		}
		xprobe_session_close(s);
	}
}

static void test_fork_child(void)
{
	struct ap_fixture fx;
	char path[256], line[256];
	pid_t kid;
	int fd;

	if (fx_start(&fx, path, sizeof(path))) {
		CHECK(!"fixture started");
		return;
	}
	cmd(&fx, "fork", line, sizeof(line));
	CHECK(sscanf(line, "DONE fork %d", &kid) == 1 && kid > 0);
	/* the parent still answers, as itself */
	fd = ap_connect(path);
	{
		struct ap_reply r = { 0 };

		CHECK(hello(fd, &r) == 0 && r.h.pid == (uint32_t)fx.pid);
	}
	close(fd);
	/* the parent dies without its atexit: its socket file stays, but the
	 * child (still alive) holds no copy of the listening socket, so
	 * nobody accepts there: refused, not a connection that hangs */
	kill(fx.pid, SIGKILL);
	waitpid(fx.pid, NULL, 0);
	CHECK(kill(kid, 0) == 0);
	CHECK(access(path, F_OK) == 0);
	{
		int rc = ap_connect(path);

		if (rc != -ECONNREFUSED)
			fprintf(stderr, "connect to the dead parent's socket: %d\n", rc);
		CHECK(rc == -ECONNREFUSED);
	}
	kill(kid, SIGKILL);
	unlink(path);
	close(fx.in);
	fclose(fx.out);
}

/* utime + stime of @pid, clock ticks. */
static uint64_t cpu_ticks(pid_t pid)
{
	char path[64], buf[1024];
	const char *p;
	uint64_t u = 0, s = 0;
	int field = 2;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!lt_read_file(path, buf, sizeof(buf)) || !(p = strrchr(buf, ')')))
		return 0;
	for (; *p && field < 14; p++)
		if (*p == ' ')
			field++;
	if (sscanf(p, "%" SCNu64 " %" SCNu64, &u, &s) != 2)
		return 0;
	return u + s;
}

static void test_fd_limit(void)
{
	struct ap_fixture fx;
	struct ap_reply r = { 0 };
	char path[256], line[256];
	uint64_t t0, t1;
	int fd, n = 0;

	if (fx_start(&fx, path, sizeof(path))) {
		CHECK(!"fixture started");
		return;
	}
	cmd(&fx, "exhaust_fds", line, sizeof(line));
	CHECK(sscanf(line, "DONE exhaust_fds %d", &n) == 1 && n > 0);
	/* connected (the backlog holds it), not accepted: no descriptor */
	fd = ap_connect(path);
	CHECK(fd >= 0);
	usleep(200000);
	t0 = cpu_ticks(fx.pid);
	usleep(500000);
	t1 = cpu_ticks(fx.pid);
	fprintf(stderr,
		"test_lib_agent: at the descriptor limit (%d more held): %llu ticks in 500 ms\n", n,
		(unsigned long long)(t1 - t0));
	CHECK(t1 - t0 <= 5);
	cmd(&fx, "release_fds", line, sizeof(line));
	t0 = ap_now_ns();
	CHECK(hello(fd, &r) == 0 && r.h.status == 0);
	fprintf(stderr, "test_lib_agent: answered %.1f ms after the descriptors were freed\n",
		(ap_now_ns() - t0) / 1e6);
	ap_reply_free(&r);
	close(fd);
	fx_stop(&fx);
}

static void test_reused_fds(void)
{
	struct ap_fixture fx;
	struct ap_reply r = { 0 };
	char path[256], line[256];
	uint64_t t0, t1;
	int fd, n = 0;

	if (fx_start(&fx, path, sizeof(path))) {
		CHECK(!"fixture started");
		return;
	}
	fd = ap_connect(path);
	CHECK(fd >= 0 && hello(fd, &r) == 0);
	ap_reply_free(&r);
	/* the listening socket and this connection's end */
	cmd(&fx, "reuse_fds", line, sizeof(line));
	CHECK(sscanf(line, "DONE reuse_fds %d", &n) == 1 && n >= 2);
	usleep(200000);
	/* no busy loop on a file that always polls readable */
	t0 = cpu_ticks(fx.pid);
	usleep(500000);
	t1 = cpu_ticks(fx.pid);
	fprintf(stderr, "test_lib_agent: %d descriptors reused; %llu ticks in 500 ms after\n", n,
		(unsigned long long)(t1 - t0));
	CHECK(t1 - t0 <= 5);
	cmd(&fx, "check_fds", line, sizeof(line));
	CHECK(strncmp(line, "FDS ok ", 7) == 0);
	/* the old connection is gone, nothing is served any more */
	CHECK(hello(fd, &r) != 0);
	ap_reply_free(&r);
	close(fd);
	/* the thread sees the reused listening number on its next poll (it
	 * slept in poll() on the old socket until the HELLO woke it) */
	for (int i = 0; i < 200 && (fd = ap_connect(path)) >= 0; i++) {
		close(fd);
		usleep(10000);
	}
	CHECK(fd < 0);
	/* the program goes on, its files intact through the NVTX calls and exit */
	cmd(&fx, "burst 3", line, sizeof(line));
	cmd(&fx, "check_fds", line, sizeof(line));
	CHECK(strncmp(line, "FDS ok ", 7) == 0);
	fx_stop(&fx);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	lt_build_path(libso, sizeof(libso), "lib/libxprobe.so");
	lt_build_path(fixture_exe, sizeof(fixture_exe), "tests/lib/agent_fixture");
	if (access(fixture_exe, X_OK) != 0 || access(libso, R_OK) != 0) {
		fprintf(stderr, "%s or %s missing: build xpl_agent_fixture and libxprobe\n",
			fixture_exe, libso);
		return 1;
	}
	lt_scratch(scratch, sizeof(scratch), "agent");
	test_decoder();
	test_name_rules();
	test_hello();
	test_filters();
	test_nesting();
	test_xthread();
	test_before_arm();
	test_ex();
	test_overflow();
	test_snapshot();
	test_concurrent();
	test_malformed_socket();
	test_one_at_a_time();
	test_sigkill();
	test_other_uid();
	test_directory();
	test_injected();
	test_dlclose();
	test_sweep();
	test_coexist();
	test_fork_child();
	test_fd_limit();
	test_reused_fds();
	if (chdir("/") == 0)
		lt_rm_rf(scratch);
	TEST_MAIN_END();
}
