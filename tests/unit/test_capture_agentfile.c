/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_capture_agentfile.c - saved Agent captures (include/xprobe/agent.h,
 * struct xprobe_agent_capfile, as libxprobe writes them for
 * XPROBE_AGENT_OUTPUT) read by decode_agent.c's xp_capture_agent_file_check /
 * xp_capture_agent_dec_file and by `measure --input` (input.c, xp_inputs_load):
 *
 *   good       ranges across threads with the file's pid and start time,
 *              the counters (dropped, RECORD_LIMIT, collection.cupti), an
 *              empty capture, a stream of several packets cut as the Agent
 *              cuts its STOP reply
 *   header     every field of the file header and of its reply that a
 *              saved capture constrains, broken alone: refused naming it
 *   stream     a packet count, a record count, a record that do not
 *              match; every truncation and an appended record refused;
 *              every byte of the header flipped: refused or the same
 *              capture, never a crash
 *   bound      events beyond max_events: EVENT_RATE_TOO_HIGH, or counted
 *              for the caller (defer)
 *   inputs     through xp_inputs_load: files of two processes (pid, then
 *              start time) refused as a mixed capture, two files of one
 *              process merged with their counters summed, the bound's total
 *              over both, unknown records refused, a cut file named with
 *              its path, a 5 GiB sparse file refused by its size unread
 *   seeds      fuzz_agent_file's corpus, written by libxprobe itself:
 *              the good ones decode with the ranges the fixture made, the
 *              bad_ ones are refused
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_wire.h"
#include "capture/capture_io.h"
#include "capture/decode_agent.h"
#include "capture/record_events.h"
#include "error_text.h"
#include "testlib.h"

#define PID 4242u
#define START 777u

static struct xpt_pkt pkt;
/* a stream larger than one packet (xpt_pkt holds one) */
static struct {
	uint8_t b[256 * 1024];
	size_t len;
	uint64_t n;
} big;
static uint8_t file[sizeof(big.b) + sizeof(struct xprobe_agent_capfile)];
static char scratch[] = "/tmp/xpt-agentfile-XXXXXX";

/* The packets a stream of @len bytes makes when cut as the Agent cuts a
 * reply (a new packet when the next record would not fit). */
static uint32_t packets_of(const uint8_t *p, size_t len)
{
	size_t off = 0, in = 0;
	uint32_t n = 0;

	while (off < len) {
		uint16_t size;

		memcpy(&size, p + off, sizeof(size));
		if (!in || in + size > XPROBE_AGENT_CHUNK_MAX) {
			n++;
			in = 0;
		}
		in += size;
		off += size;
	}
	return n;
}

/* A saved capture of the @n records of @b[0, len) into `file`: its length. */
static size_t make_file_of(const uint8_t *b, size_t len, uint64_t n, uint32_t pid, uint64_t start,
			   uint64_t dropped)
{
	struct xprobe_agent_capfile h;
	struct xprobe_agent_reply *r = &h.reply;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, XPROBE_AGENT_CAPFILE_MAGIC, sizeof(h.magic));
	h.version = XPROBE_AGENT_CAPFILE_VERSION;
	h.header_size = sizeof(h);
	h.file_size = sizeof(h) + len;
	xpt_reply(r, XPROBE_AGENT_OP_STOP, pid, start, n > 1000 ? n : 1000);
	r->state = XPROBE_AGENT_STOPPED;
	r->stop_reason = XPROBE_AGENT_STOP_REQUESTED;
	r->nrecords = r->retained = n;
	r->bytes = len;
	r->nchunks = packets_of(b, len);
	r->dropped = dropped;
	r->observed = r->retained + dropped;
	memcpy(file, &h, sizeof(h));
	memcpy(file + sizeof(h), b, len);
	return sizeof(h) + len;
}

static size_t make_file(const struct xpt_pkt *p, uint32_t pid, uint64_t start, uint64_t dropped)
{
	return make_file_of(p->b, p->len, p->n, pid, start, dropped);
}

/* @p's records appended to `big` (@p emptied). */
static void big_add(struct xpt_pkt *p)
{
	CHECK(big.len + p->len <= sizeof(big.b));
	if (big.len + p->len > sizeof(big.b))
		return;
	memcpy(big.b + big.len, p->b, p->len);
	big.len += p->len;
	big.n += p->n;
	p->len = 0;
	p->n = 0;
}

static struct xprobe_agent_capfile *hdr(void)
{
	return (struct xprobe_agent_capfile *)(void *)file;
}

/* Decode `file`[0, len) into a fresh capture of @max events. */
static int decode(size_t len, size_t max, bool defer, struct xp_capture *c,
		  struct xp_capture_agent_dec *d, struct xp_error *err)
{
	xp_capture_init(c, max);
	CHECK(xp_capture_agent_dec_init(d, c, 0, 0) == 0);
	return xp_capture_agent_dec_file(d, file, len, defer, err);
}

static void done(struct xp_capture *c, struct xp_capture_agent_dec *d, struct xp_error *err)
{
	xp_capture_agent_dec_free(d);
	xp_capture_free(c);
	xp_error_clear(err);
}

/* `file`[0, len) is refused, naming @field. */
static bool refused(size_t len, const char *field)
{
	struct xp_capture_agent_dec d;
	struct xp_capture c;
	struct xp_error err = { 0 };
	int rc = decode(len, 1000, false, &c, &d, &err);
	bool ok = rc == -XPROBE_E_TRACE_EXPORT_FAILED && err.code == XPROBE_E_TRACE_EXPORT_FAILED &&
		  xpt_detail_contains(&err, "field", field);

	if (!ok)
		fprintf(stderr, "  expected field %s: rc %d %s (field %s)\n", field, rc,
			err.message,
			xp_error_detail_get(&err, "field") ? xp_error_detail_get(&err, "field") :
							     "none");
	done(&c, &d, &err);
	return ok;
}

/* Two ranges: a thread range on 11, a process range started on 11 and
 * ended on 13. */
static void two_ranges(void)
{
	pkt.len = 0;
	pkt.n = 0;
	xpt_push(&pkt, 11, 2000, 0, "step");
	xpt_start(&pkt, 11, 2100, 0x99, "proc");
	xpt_pop(&pkt, 11, 3000, 0);
	xpt_end(&pkt, 13, 3100, 0x99);
}

/* --- good files ------------------------------------------------------------- */

static void test_good(void)
{
	struct xp_capture_agent_dec d;
	struct xp_capture c;
	struct xp_error err = { 0 };
	size_t len;

	two_ranges();
	len = make_file(&pkt, PID, START, 2);
	CHECK(xp_capture_agent_file_check(file, len, NULL, &err) == 0);
	CHECK(decode(len, 1000, false, &c, &d, &err) == 0);
	CHECK_EQ_U64(c.count, 4);
	for (size_t i = 0; i < c.count; i++) {
		CHECK_EQ_U64(c.events[i].pid, PID);
		CHECK_EQ_U64(c.events[i].process_start_time, START);
	}
	CHECK_EQ_U64(c.events[3].tid, 13);
	CHECK_EQ_U64(c.dropped, 2);
	CHECK(!c.record_limit_reached);
	CHECK(c.cupti.present);
	CHECK_EQ_U64(c.cupti.record_capacity, 1000);
	CHECK_EQ_U64(c.cupti.observed_records, 6);
	CHECK_EQ_U64(c.cupti.dropped_records, 2);
	CHECK_EQ_U64(d.st.records, 4);
	CHECK(!d.in_reply);
	done(&c, &d, &err);

	/* full: RECORD_LIMIT */
	len = make_file(&pkt, PID, START, 5);
	hdr()->reply.stop_reason = XPROBE_AGENT_STOP_RECORD_LIMIT;
	CHECK(decode(len, 1000, false, &c, &d, &err) == 0);
	CHECK(c.record_limit_reached);
	done(&c, &d, &err);

	/* nothing recorded */
	pkt.len = 0;
	pkt.n = 0;
	len = make_file(&pkt, PID, START, 0);
	CHECK(len == sizeof(struct xprobe_agent_capfile));
	CHECK(decode(len, 1000, false, &c, &d, &err) == 0);
	CHECK_EQ_U64(c.count, 0);
	CHECK(c.cupti.present);
	done(&c, &d, &err);

	/* several packets: 1500 ranges of 100-byte names (~216 KiB) */
	{
		char name[101];
		uint32_t nchunks;

		memset(name, 'n', 100);
		name[100] = '\0';
		pkt.len = 0;
		pkt.n = 0;
		for (uint32_t i = 0; i < 750; i++) {
			xpt_push(&pkt, 5, 10 + 2 * i, 0, name);
			xpt_pop(&pkt, 5, 11 + 2 * i, 0);
			big_add(&pkt);
		}
		len = make_file_of(big.b, big.len, big.n, PID, START, 0);
		nchunks = hdr()->reply.nchunks;
		CHECK(nchunks >= 3); /* 144-byte push + 40-byte pop per range */
		CHECK(decode(len, 10000, false, &c, &d, &err) == 0);
		CHECK_EQ_U64(c.count, 1500);
		done(&c, &d, &err);
		/* a packet more or less than the Agent's cut */
		hdr()->reply.nchunks = nchunks + 1;
		CHECK(refused(len, "nchunks"));
		hdr()->reply.nchunks = nchunks - 1; /* fewer than the bytes need */
		CHECK(refused(len, "nchunks"));
		hdr()->reply.nchunks = nchunks;
	}
}

/* --- the header ----------------------------------------------------------- */

struct hcase {
	const char *what, *field;
	void (*mutate)(struct xprobe_agent_capfile *h);
};

static void m_magic(struct xprobe_agent_capfile *h)
{
	h->magic[6] = 'Q';
}
static void m_version(struct xprobe_agent_capfile *h)
{
	h->version = 2;
}
static void m_hsize(struct xprobe_agent_capfile *h)
{
	h->header_size -= 8;
}
static void m_fsize_up(struct xprobe_agent_capfile *h)
{
	h->file_size++;
}
static void m_fsize_down(struct xprobe_agent_capfile *h)
{
	h->file_size--;
}
static void m_flags(struct xprobe_agent_capfile *h)
{
	h->flags = 0x2;
}
static void m_sig_noflag(struct xprobe_agent_capfile *h)
{
	h->signal = 9;
}
static void m_flag_nosig(struct xprobe_agent_capfile *h)
{
	h->flags = XPROBE_AGENT_CAPFILE_F_SIGNAL;
}
static void m_sig_range(struct xprobe_agent_capfile *h)
{
	h->flags = XPROBE_AGENT_CAPFILE_F_SIGNAL;
	h->signal = 65;
}
static void m_rmagic(struct xprobe_agent_capfile *h)
{
	h->reply.magic[0] = 'Y';
}
static void m_rversion(struct xprobe_agent_capfile *h)
{
	h->reply.version = 2;
}
static void m_op(struct xprobe_agent_capfile *h)
{
	h->reply.op = XPROBE_AGENT_OP_SNAPSHOT;
}
static void m_state_active(struct xprobe_agent_capfile *h)
{
	h->reply.state = XPROBE_AGENT_ACTIVE;
	h->reply.stop_reason = XPROBE_AGENT_STOP_NONE;
}
static void m_state_full(struct xprobe_agent_capfile *h)
{
	h->reply.state = XPROBE_AGENT_LIMIT_REACHED;
	h->reply.stop_reason = XPROBE_AGENT_STOP_RECORD_LIMIT;
}
static void m_stop_none(struct xprobe_agent_capfile *h)
{
	h->reply.stop_reason = XPROBE_AGENT_STOP_NONE;
}
static void m_stop_backend(struct xprobe_agent_capfile *h)
{
	h->reply.stop_reason = XPROBE_AGENT_STOP_BACKEND_ERROR;
}
static void m_pid(struct xprobe_agent_capfile *h)
{
	h->reply.pid = 0;
}
static void m_offset(struct xprobe_agent_capfile *h)
{
	h->reply.offset = 1;
	h->reply.retained++;
	h->reply.observed++;
}
static void m_partial(struct xprobe_agent_capfile *h)
{
	h->reply.retained++; /* more retained than the file holds */
	h->reply.observed++;
}
static void m_observed(struct xprobe_agent_capfile *h)
{
	h->reply.observed++; /* != retained + dropped */
}
static void m_dropped(struct xprobe_agent_capfile *h)
{
	h->reply.dropped = h->reply.observed + 1;
}
static void m_retained_over(struct xprobe_agent_capfile *h)
{
	h->reply.retained = h->reply.observed + 1;
	h->reply.nrecords = h->reply.retained;
}
static void m_capacity(struct xprobe_agent_capfile *h)
{
	h->reply.capacity = 2; /* 4 records retained */
}
static void m_bytes(struct xprobe_agent_capfile *h)
{
	h->reply.bytes -= 8;
}
static void m_nchunks0(struct xprobe_agent_capfile *h)
{
	h->reply.nchunks = 0;
}
static void m_reserved(struct xprobe_agent_capfile *h)
{
	h->reply.mode = 3;
}
static void m_features(struct xprobe_agent_capfile *h)
{
	h->reply.features |= 0x100;
}
static void m_message(struct xprobe_agent_capfile *h)
{
	memset(h->reply.message, 'x', sizeof(h->reply.message));
}
static void m_nrecords(struct xprobe_agent_capfile *h)
{
	h->reply.nrecords++; /* one more than the stream holds */
	h->reply.retained++;
	h->reply.observed++;
}

static const struct hcase hcases[] = {
	{ "magic", "magic", m_magic },
	{ "version", "version", m_version },
	{ "header size", "header_size", m_hsize },
	{ "file size above", "file_size", m_fsize_up },
	{ "file size below", "file_size", m_fsize_down },
	{ "unknown flag", "flags", m_flags },
	{ "signal without the flag", "signal", m_sig_noflag },
	{ "the flag without a signal", "signal", m_flag_nosig },
	{ "signal 65", "signal", m_sig_range },
	{ "reply magic", "magic", m_rmagic },
	{ "reply version", "version", m_rversion },
	{ "a SNAPSHOT reply", "op", m_op },
	{ "an active capture", "state", m_state_active },
	{ "a full, still armed capture", "state", m_state_full },
	{ "stopped for no reason", "stop_reason", m_stop_none },
	{ "a backend error", "stop_reason", m_stop_backend },
	{ "no pid", "pid", m_pid },
	{ "records from offset 1", "nrecords", m_offset },
	{ "part of the retained records", "nrecords", m_partial },
	{ "observed != retained + dropped", "observed", m_observed },
	{ "dropped above observed", "observed", m_dropped },
	{ "retained above observed", "observed", m_retained_over },
	{ "retained above capacity", "retained", m_capacity },
	{ "bytes short of the file", "bytes", m_bytes },
	{ "records without packets", "nchunks", m_nchunks0 },
	{ "mode", "mode", m_reserved },
	{ "unknown feature", "features", m_features },
	{ "message not terminated", "message", m_message },
	{ "a record more than the stream's bytes hold", "bytes", m_nrecords },
};

static void test_header(void)
{
	size_t len;

	CHECK(refused(0, "size"));
	CHECK(refused(8, "size"));
	CHECK(refused(sizeof(struct xprobe_agent_capfile) - 1, "size"));
	for (size_t i = 0; i < sizeof(hcases) / sizeof(hcases[0]); i++) {
		two_ranges();
		len = make_file(&pkt, PID, START, 2);
		hcases[i].mutate(hdr());
		if (!refused(len, hcases[i].field))
			fprintf(stderr, "  header case: %s\n", hcases[i].what);
	}
	/* an error reply saved (status): refused */
	pkt.len = 0;
	pkt.n = 0;
	len = make_file(&pkt, PID, START, 0);
	hdr()->reply.status = -XPROBE_E_NOT_ACTIVE;
	CHECK(refused(len, "status"));
}

/* --- the stream ----------------------------------------------------------- */

static void test_stream(void)
{
	struct xprobe_agent_capfile good;
	size_t len;

	/* a record whose name padding is not zero */
	two_ranges();
	len = make_file(&pkt, PID, START, 0);
	file[sizeof(struct xprobe_agent_capfile) + XPROBE_RECORD_HDR_SIZE + 6] = 'x';
	CHECK(refused(len, "name"));
	/* a record size that cannot be */
	two_ranges();
	len = make_file(&pkt, PID, START, 0);
	file[sizeof(struct xprobe_agent_capfile)] = 12;
	CHECK(refused(len, "size"));

	/* every truncation: the file says its size */
	two_ranges();
	len = make_file(&pkt, PID, START, 0);
	for (size_t cut = 0; cut < len; cut++) {
		struct xp_capture_agent_dec d;
		struct xp_capture c;
		struct xp_error err = { 0 };

		CHECK(decode(cut, 1000, false, &c, &d, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
		done(&c, &d, &err);
	}
	/* a record appended, the header unchanged but for the size */
	memcpy(&good, file, sizeof(good));
	xpt_pop(&pkt, 11, 5000, 0);
	memcpy(file + sizeof(good), pkt.b, pkt.len);
	hdr()->file_size = sizeof(good) + pkt.len;
	CHECK(refused(sizeof(good) + pkt.len, "bytes"));

	/* every header byte flipped: refused, or the same four events */
	two_ranges();
	len = make_file(&pkt, PID, START, 0);
	memcpy(&good, file, sizeof(good));
	for (size_t i = 0; i < sizeof(good); i++) {
		for (int bit = 0; bit < 8; bit += 3) {
			struct xp_capture_agent_dec d;
			struct xp_capture c;
			struct xp_error err = { 0 };
			int rc;

			memcpy(file, &good, sizeof(good));
			file[i] ^= (uint8_t)(1u << bit);
			rc = decode(len, 1000, false, &c, &d, &err);
			if (rc == 0)
				CHECK_EQ_U64(c.count, 4);
			else
				CHECK(err.code != 0);
			done(&c, &d, &err);
		}
	}
}

/* --- the bound -------------------------------------------------------------- */

static void test_bound(void)
{
	struct xp_capture_agent_dec d;
	struct xp_capture c;
	struct xp_error err = { 0 };
	size_t len;

	two_ranges();
	len = make_file(&pkt, PID, START, 0);
	CHECK(decode(len, 3, false, &c, &d, &err) == -XPROBE_E_EVENT_RATE_TOO_HIGH);
	CHECK(xpt_detail_contains(&err, "observed_events", "4"));
	done(&c, &d, &err);
	CHECK(decode(len, 3, true, &c, &d, &err) == 0);
	CHECK_EQ_U64(c.count, 3);
	CHECK_EQ_U64(d.map->observed, 4);
	CHECK(d.map->full);
	done(&c, &d, &err);
}

/* --- measure --input --------------------------------------------------------- */

static void save(const char *name, size_t len, char *path, size_t size)
{
	FILE *f;

	snprintf(path, size, "%s/%s", scratch, name);
	f = fopen(path, "wb");
	CHECK(f && fwrite(file, 1, len, f) == len);
	if (f)
		fclose(f);
}

static int load2(const char *a, const char *b, size_t max, struct xp_capture *c,
		 struct xp_error *err)
{
	const char *paths[2] = { a, b };

	xp_capture_init(c, max);
	return xp_inputs_load(paths, b ? 2 : 1, c, err);
}

static void test_inputs(void)
{
	char a[512], b[512], other[512], restarted[512], cut[512], unk[512], big[512];
	struct xp_capture c;
	struct xp_error err = { 0 };
	size_t len;
	int fd;

	CHECK(mkdtemp(scratch) != NULL);
	two_ranges();
	len = make_file(&pkt, PID, START, 1);
	save("a.xpagent", len, a, sizeof(a));
	save("b.xpagent", len, b, sizeof(b));
	make_file(&pkt, PID + 1, START, 0);
	save("other.xpagent", len, other, sizeof(other));
	make_file(&pkt, PID, START + 1, 0);
	save("restarted.xpagent", len, restarted, sizeof(restarted));
	make_file(&pkt, PID, START, 0);
	save("cut.xpagent", len - 8, cut, sizeof(cut));
	make_file(&pkt, PID, START, 0);
	hdr()->reply.unknown = 3;
	save("unknown.xpagent", len, unk, sizeof(unk));

	/* one process, two files: merged, counters summed; the two files
	 * hold the same records, so each event is kept once */
	CHECK(load2(a, b, 1000, &c, &err) == 0);
	CHECK_EQ_U64(c.count, 4);
	CHECK_EQ_U64(c.duplicates_dropped, 4);
	CHECK(c.has_pid && c.pid == PID && c.has_start_time && c.process_start_time == START);
	CHECK_EQ_U64(c.cupti.record_capacity, 2000);
	CHECK_EQ_U64(c.cupti.observed_records, 10);
	CHECK_EQ_U64(c.cupti.dropped_records, 2);
	CHECK_EQ_U64(c.dropped, 2);
	for (size_t i = 1; i < c.count; i++)
		CHECK(c.events[i - 1].timestamp_ns <= c.events[i].timestamp_ns);
	xp_capture_free(&c);
	xp_error_clear(&err);

	/* two processes: by pid, then by start time (a reused pid) */
	CHECK(load2(a, other, 1000, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(strstr(err.message, "mixes target PIDs 4242 and 4243") != NULL);
	CHECK(xpt_detail_contains(&err, "path", "other.xpagent"));
	xp_capture_free(&c);
	xp_error_clear(&err);
	CHECK(load2(a, restarted, 1000, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(strstr(err.message, "mixes target processes") != NULL);
	CHECK(xpt_detail_contains(&err, "process_start_time", "778"));
	xp_capture_free(&c);
	xp_error_clear(&err);

	/* the bound counts both files */
	CHECK(load2(a, b, 5, &c, &err) == -XPROBE_E_EVENT_RATE_TOO_HIGH);
	CHECK(xpt_detail_contains(&err, "observed_events", "8"));
	CHECK(xpt_detail_contains(&err, "inputs", "2"));
	xp_capture_free(&c);
	xp_error_clear(&err);

	/* records the Agent could not interpret: refused, as live */
	CHECK(load2(unk, NULL, 1000, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(xpt_detail_contains(&err, "unknown_records", "3"));
	xp_capture_free(&c);
	xp_error_clear(&err);

	/* a cut file: its path in the message and the details */
	CHECK(load2(cut, NULL, 1000, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(strstr(err.message, "failed to decode ") && strstr(err.message, "cut.xpagent"));
	CHECK(xpt_detail_contains(&err, "field", "file_size"));
	CHECK(xpt_detail_contains(&err, "path", "cut.xpagent"));
	xp_capture_free(&c);
	xp_error_clear(&err);

	/* 5 GiB, sparse, behind the magic: refused by its size, never read */
	snprintf(big, sizeof(big), "%s/big.xpagent", scratch);
	fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, file, sizeof(struct xprobe_agent_capfile)) > 0 &&
	      ftruncate(fd, 5ll << 30) == 0);
	close(fd);
	CHECK(load2(big, NULL, 1000, &c, &err) == -XPROBE_E_TRACE_EXPORT_FAILED);
	CHECK(strstr(err.message, "larger than 4 GiB") != NULL);
	xp_capture_free(&c);
	xp_error_clear(&err);

	unlink(a);
	unlink(b);
	unlink(other);
	unlink(restarted);
	unlink(cut);
	unlink(unk);
	unlink(big);
	rmdir(scratch);
}

/* Run from tests/ (CTest's working directory). */
static void test_seeds(void)
{
	static const struct {
		const char *name;
		size_t events; /* SIZE_MAX: refused */
	} seeds[] = {
		/* thread: 3 x 4 names; process: 3 ranges; ex: 2 x (push, start);
		 * full: 7 records kept of 5 x 4 ranges; sigterm: nested, 2
		 * threads x 2 x 2 levels; empty: no NVTX call after ARM */
		{ "thread", 24 },
		{ "process", 6 },
		{ "ex", 8 },
		{ "full", 7 },
		{ "sigterm", 16 },
		{ "empty", 0 },
		{ "bad_cut", SIZE_MAX },
		{ "bad_grown", SIZE_MAX },
		{ "bad_version", SIZE_MAX },
		{ "bad_nchunks", SIZE_MAX },
		{ "bad_record_size", SIZE_MAX },
		{ "bad_padding", SIZE_MAX },
	};

	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		struct xp_capture_agent_dec d;
		struct xp_capture c;
		struct xp_error err = { 0 };
		char path[256];
		size_t len = 0;
		FILE *f;
		int rc;

		snprintf(path, sizeof(path), "fuzz/corpus/fuzz_agent_file/%s", seeds[i].name);
		f = fopen(path, "rb");
		CHECK(f != NULL);
		if (!f)
			continue;
		len = fread(file, 1, sizeof(file), f);
		fclose(f);
		rc = decode(len, 1000, false, &c, &d, &err);
		if ((rc == 0) != (seeds[i].events != SIZE_MAX))
			fprintf(stderr, "seed %s: rc %d %s\n", seeds[i].name, rc, err.message);
		CHECK((rc == 0) == (seeds[i].events != SIZE_MAX));
		if (!rc)
			CHECK_EQ_U64(c.count, seeds[i].events);
		done(&c, &d, &err);
	}
}

int main(void)
{
	test_good();
	test_header();
	test_stream();
	test_bound();
	test_inputs();
	test_seeds();
	TEST_MAIN_END();
}
