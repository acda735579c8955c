// SPDX-License-Identifier: Apache-2.0
/*
 * decode_json.cc - the strict decoders of completed JSON captures (Event
 * streams and HostCaptureResult documents) into a struct xp_capture, and a
 * small C view of parsed JSON documents (xp_jdoc) for the spec parser.
 * The one C++ file of src/capture; everything it exports is extern "C".
 *
 * Why simdjson's DOM.  Measured on the build VMs (docs/inputs.md,
 * "Performance") the
 * DOM parse_many of Event JSONL runs at 2.9M events/s where jq manages 45k
 * and cJSON 290k.  The DOM (rather than On-Demand) validates every byte of
 * every document, so strictness does not depend on what we happen to read;
 * and measured here, On-Demand walking every field of a 1M-event uprobe
 * capture took 1.15-1.3 CPU s against 0.7-0.95 for DOM parse + walk, so
 * the lazier parser buys nothing when every value is read anyway.
 *
 * Where the time goes (callgrind, 50k uprobe events, per event): simdjson
 * stage 1 ~2000 instructions, stage 2 ~3150, this file's walk ~3500; a
 * syscall entry with six arguments costs about twice that.  Two threads
 * per chunk (decode_stream) therefore roughly halve the wall time; the rest
 * is per-field work that is already a word compare per key (name_eq), a
 * hinted enum lookup and a cached intern per string.
 *
 * The fast path.  So lines in the canonical form our exporter writes
 * (decode_fast.h) are read by a hand-written scanner instead, and only
 * what it declines goes through simdjson: about 1,100 instructions per
 * uprobe event and 1,300 per read(2) event (callgrind, 100k-event captures
 * of bench/gen_events.py, whole decode included) against 9,200 and 14,700;
 * much of that comes from lines repeating what the lines before them said
 * (decode_fast.h), which real captures do less than generated ones.  The
 * comment before parse_segment_mixed() says how the two paths share a
 * segment without changing any result, error or error location;
 * XPROBE_DECODE_NO_FASTPATH turns the fast path off.
 *
 * What "strict" means here (the reference decodes with serde and
 * deny_unknown_fields):
 *   - every object is closed: an unknown key is an error, anywhere;
 *   - a key given twice is an error, anywhere (attribute maps and nested
 *     attribute values included);
 *   - required fields must be present, optional ones may be absent or null
 *     where the reference type is an Option;
 *   - integers must be integers: negative, fractional, exponent and
 *     out-of-range numbers, and numbers in strings, are errors;
 *   - enum strings must be one of the listed spellings;
 *   - schema_version must be exactly "2.0".
 * A failure is TRACE_EXPORT_FAILED, recoverable false, message "failed to
 * decode <name>: line <L>: <field>: <why>", details path, line,
 * byte_offset, field.  Mixed targets have their own messages.
 *
 * Memory.  An Event stream is read in chunks of XP_CHUNK_BYTES (8 MiB);
 * each chunk goes through parse_many in one batch and the bytes of a
 * document cut by the chunk end (truncated_bytes) move to the front of the
 * buffer for the next read (while the helper thread merges its half).
 * Nothing is mapped or slurped, so a decode holds one chunk, the parser's
 * per-document tape, the fast path's kept tails and the capture.  Once
 * xp_capture_add() refuses an event (max_events reached) the decoder keeps
 * validating and counting documents into a scratch event without retaining
 * anything, then fails with EVENT_RATE_TOO_HIGH and the exact total.
 * A host-capture document is parsed whole (it is one document; simdjson
 * needs all of it), costing about three times its size while it is read.
 * Measured peak RSS for 1M retained events (bench/bench_decode.sh): 238
 * bytes per event for uprobe pairs and for read(2) entry/exit with six
 * arguments (thanks to shared argument runs): the 224-byte event, the
 * tables, one chunk, the helper's capture of half a chunk and, when
 * simdjson decodes, two parsers' structural indexes.
 *
 * Attribute and argument values are stored as canonical compact JSON text
 * written by this file with the project's escaper (common/json.h), so the
 * text equals what our own collectors and exporters produce for the same
 * value and selectors can compare interned ids.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <new>
#include <system_error>
#include <thread>
#include <string_view>
#include <type_traits>
#include <vector>

#include <simdjson.h>

extern "C" {
#include "../../../common/buf.h"
#include "../../../common/cancel.h"
#include "../../../common/json.h"
#include "../../../common/readfile.h"
#include "../capture_io.h"
#include "decode_fast.h"
#include "../decode_json.h"
}

using simdjson::dom::element;
using simdjson::dom::element_type;

static_assert(XP_JSON_PADDING == simdjson::SIMDJSON_PADDING, "padding must match simdjson");

namespace
{

/* Default read chunk; a document may grow the buffer up to XP_MAX_DOC. */
constexpr size_t XP_CHUNK_BYTES = 8u << 20;
constexpr size_t XP_MAX_DOC = 64u << 20;

size_t g_test_chunk_bytes; /* xp_decode_test_chunk_bytes() */
int g_test_fast_mode = -1; /* xp_decode_test_fastpath(): -1 = the environment */

/* xp_decode_test_fast_stats(), summed over decoders as segments end */
std::atomic<uint64_t> g_stat_fast_lines, g_stat_declined, g_stat_reruns;

/* ---------------------------------------------------------------------- */
/* Field tables                                                            */

template <typename T> inline T load(const char *p)
{
	T v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Equality of short byte strings without a call or a byte loop: word
 * compares, the last word overlapping the one before.  Reads only bytes
 * [0, n) of both. */
inline bool fast_eq(const char *a, const char *b, size_t n)
{
	if (n >= 8) {
		for (size_t i = 0; i + 8 < n; i += 8)
			if (load<uint64_t>(a + i) != load<uint64_t>(b + i))
				return false;
		return load<uint64_t>(a + n - 8) == load<uint64_t>(b + n - 8);
	}
	if (n >= 4)
		return load<uint32_t>(a) == load<uint32_t>(b) &&
		       load<uint32_t>(a + n - 4) == load<uint32_t>(b + n - 4);
	if (n >= 2)
		return load<uint16_t>(a) == load<uint16_t>(b) &&
		       load<uint16_t>(a + n - 2) == load<uint16_t>(b + n - 2);
	return n == 0 || a[0] == b[0];
}

/*
 * A known name (field key, enum spelling) with its first and last word
 * precomputed, so matching a key costs a length compare and two loads.
 * Words are little-endian loads of the first/last min(8, 4, 2, 1) bytes.
 */
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "word signatures assume little-endian");

constexpr uint64_t le_word(const char *s, size_t off, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)(unsigned char)s[off + i] << (8 * i);
	return v;
}

constexpr size_t sig_width(size_t n)
{
	return n >= 8 ? 8 : n >= 4 ? 4 : n >= 2 ? 2 : n;
}

struct fdesc {
	const char *name;
	size_t len;
	uint64_t first, last; /* le_word of the first / last sig_width(len) bytes */
};

constexpr fdesc make_fdesc(const char *s, size_t n)
{
	return { s, n, le_word(s, 0, sig_width(n)), le_word(s, n - sig_width(n), sig_width(n)) };
}

#define F(s) make_fdesc(s, sizeof(s) - 1)

__attribute__((always_inline)) inline bool name_eq(const fdesc &f, std::string_view k)
{
	size_t n = k.size();
	const char *p = k.data();

	if (n != f.len)
		return false;
	if (n >= 8)
		return load<uint64_t>(p) == f.first && load<uint64_t>(p + n - 8) == f.last &&
		       (n <= 16 || fast_eq(f.name + 8, p + 8, n - 16));
	if (n >= 4)
		return load<uint32_t>(p) == f.first && load<uint32_t>(p + n - 4) == f.last;
	if (n >= 2)
		return load<uint16_t>(p) == f.first && load<uint16_t>(p + n - 2) == f.last;
	return n == 0 || (unsigned char)p[0] == f.first;
}

/* Look @k up in @t, trying @hint first (documents we write list fields in
 * table order, so the hint nearly always hits). */
__attribute__((always_inline)) inline int find_field(const fdesc *t, int n, std::string_view k,
						     int hint)
{
	if (hint < n && name_eq(t[hint], k))
		return hint;
	for (int i = 0; i < n; i++)
		if (name_eq(t[i], k))
			return i;
	return -1;
}

/* Enum spellings, taken once from the model's name functions. */
struct enum_tab {
	unsigned n;
	unsigned slot; /* index of this table's hint in decoder::enum_hint */
	fdesc names[32];
	enum_tab(const char *(*name)(unsigned), unsigned count, unsigned hint_slot)
	    : n(count < 32 ? count : 32), slot(hint_slot)
	{
		for (unsigned i = 0; i < n; i++)
			names[i] = make_fdesc(name(i), strlen(name(i)));
	}
	/* @hint: the index found last time (consecutive events repeat) */
	int parse(std::string_view s, uint8_t *hint) const
	{
		if (*hint < n && name_eq(names[*hint], s))
			return *hint;
		for (unsigned i = 0; i < n; i++)
			if (name_eq(names[i], s)) {
				*hint = (uint8_t)i;
				return (int)i;
			}
		return -1;
	}
};

const enum_tab t_source(xp_source_name, XP_SRC__COUNT, 0);
const enum_tab t_event_type(xp_event_type_name, XP_EV__COUNT, 1);
const enum_tab t_clock(xp_clock_domain_name, XP_CLOCK__COUNT, 2);
const enum_tab t_probe_kind(xp_probe_kind_name, XP_PROBE__COUNT, 3);
const enum_tab t_memcpy_kind(xp_memcpy_kind_name, XP_MEMCPY__COUNT, 4);
const enum_tab t_range_kind(xp_nvtx_range_kind_name, XP_NVTX__COUNT, 5);

enum {
	EV_SCHEMA_VERSION,
	EV_SESSION_ID,
	EV_EVENT_ID,
	EV_SEQUENCE,
	EV_SOURCE,
	EV_EVENT_TYPE,
	EV_PID,
	EV_TID,
	EV_CPU,
	EV_TIMESTAMP_RAW,
	EV_TIMESTAMP_NS,
	EV_CLOCK_DOMAIN,
	EV_TIMESTAMP_ERROR_NS,
	EV_PROCESS_START_TIME,
	EV_HOST,
	EV_CUDA,
	EV_NVTX,
	EV_ATTRIBUTES,
	EV__COUNT
};
const fdesc ev_fields[EV__COUNT] = {
	F("schema_version"),
	F("session_id"),
	F("event_id"),
	F("sequence"),
	F("source"),
	F("event_type"),
	F("pid"),
	F("tid"),
	F("cpu"),
	F("timestamp_raw"),
	F("timestamp_ns"),
	F("clock_domain"),
	F("timestamp_error_ns"),
	F("process_start_time"),
	F("host"),
	F("cuda"),
	F("nvtx"),
	F("attributes"),
};
constexpr uint32_t EV_REQUIRED = (1u << EV_SCHEMA_VERSION) | (1u << EV_SESSION_ID) |
				 (1u << EV_EVENT_ID) | (1u << EV_SEQUENCE) | (1u << EV_SOURCE) |
				 (1u << EV_EVENT_TYPE) | (1u << EV_PID) | (1u << EV_TID) |
				 (1u << EV_TIMESTAMP_RAW) | (1u << EV_TIMESTAMP_NS) |
				 (1u << EV_CLOCK_DOMAIN);

enum {
	HO_PROBE_KIND,
	HO_BINARY_PATH,
	HO_BUILD_ID,
	HO_SYMBOL,
	HO_SYMBOL_DEMANGLED,
	HO_OFFSET,
	HO_RETURN_VALUE,
	HO_ARGUMENTS,
	HO__COUNT
};
const fdesc host_fields[HO__COUNT] = {
	F("probe_kind"),       F("binary_path"), F("build_id"),	    F("symbol"),
	F("symbol_demangled"), F("offset"),	 F("return_value"), F("arguments"),
};

enum { AR_INDEX, AR_ABI_TYPE, AR_VALUE, AR_READ_ERROR, AR__COUNT };
const fdesc arg_fields[AR__COUNT] = {
	F("index"),
	F("abi_type"),
	F("value"),
	F("read_error"),
};

enum {
	CU_DEVICE_ID,
	CU_CONTEXT_ID,
	CU_STREAM_ID,
	CU_CORRELATION_ID,
	CU_RUNTIME_CORRELATION_ID,
	CU_CALLBACK_DOMAIN,
	CU_CALLBACK_ID,
	CU_KERNEL_NAME,
	CU_KERNEL_NAME_MANGLED,
	CU_START_NS,
	CU_END_NS,
	CU_GRID,
	CU_BLOCK,
	CU_BYTES,
	CU_MEMCPY_KIND,
	CU__COUNT
};
const fdesc cuda_fields[CU__COUNT] = {
	F("device_id"),
	F("context_id"),
	F("stream_id"),
	F("correlation_id"),
	F("runtime_correlation_id"),
	F("callback_domain"),
	F("callback_id"),
	F("kernel_name"),
	F("kernel_name_mangled"),
	F("start_ns"),
	F("end_ns"),
	F("grid"),
	F("block"),
	F("bytes"),
	F("memcpy_kind"),
};

enum { NV_NAME, NV_NAME_COMPLETE, NV_RANGE_KIND, NV_RANGE_ID, NV_START_TID, NV__COUNT };
const fdesc nvtx_fields[NV__COUNT] = {
	F("name"), F("name_complete"), F("range_kind"), F("range_id"), F("start_tid"),
};

enum { D3_X, D3_Y, D3_Z, D3__COUNT };
const fdesc dim3_fields[D3__COUNT] = { F("x"), F("y"), F("z") };

enum {
	HC_SCHEMA_VERSION,
	HC_OK,
	HC_SESSION_ID,
	HC_TARGET,
	HC_PROBE_ID,
	HC_CAPTURED,
	HC_DROPPED,
	HC_TIMED_OUT,
	HC_RECORD_LIMIT_REACHED,
	HC_EVENTS,
	HC__COUNT
};
const fdesc hc_fields[HC__COUNT] = {
	F("schema_version"), F("ok"),	     F("session_id"),
	F("target"),	     F("probe_id"),  F("captured"),
	F("dropped"),	     F("timed_out"), F("record_limit_reached"),
	F("events"),
};
constexpr uint32_t HC_REQUIRED = (1u << HC__COUNT) - 1 - (1u << HC_RECORD_LIMIT_REACHED);

enum { TG_PID, TG_PROCESS_START_TIME, TG__COUNT };
const fdesc target_fields[TG__COUNT] = { F("pid"), F("process_start_time") };

#undef F

/* ---------------------------------------------------------------------- */
/* The decoder state and its failure record                               */

enum fail_kind {
	FAIL_NONE = 0,
	FAIL_DECODE, /* reason[] says what; "failed to decode <name>: ..." */
	FAIL_MIXED_PID, /* mixed_a, mixed_b */
	FAIL_MIXED_START, /* mixed_a (pid), start_a, start_b */
	FAIL_NOMEM,
	FAIL_READ, /* read_errno */
};

struct path_comp {
	const char *s; /* key, or NULL for an array index */
	size_t n;
	size_t idx;
};

constexpr int PATH_MAX_DEPTH = 16;

/* One-entry intern caches, one per kind of string: consecutive events
 * repeat the same path, symbol, kernel name, so most strings are
 * recognized by one comparison instead of a hash lookup. */
enum {
	IC_BINARY_PATH,
	IC_BUILD_ID,
	IC_SYMBOL,
	IC_SYMBOL_DEMANGLED,
	IC_KERNEL_NAME,
	IC_KERNEL_NAME_MANGLED,
	IC_NVTX_NAME,
	IC_ABI_TYPE,
	IC_READ_ERROR,
	IC_ATTR_KEY,
	IC__COUNT
};

constexpr size_t VALUE_CACHE = 64; /* entries of decoder::vc, a power of two */
constexpr size_t RANGE_CACHE = 256; /* entries of decoder::arg_rc/attr_rc */

/* A run of the capture's argument or attribute table already used by an
 * event, by the hash of its content. */
struct range_ent {
	uint64_t h;
	uint32_t first;
	uint32_t count; /* 0: empty */
};

struct icache {
	const char *p; /* the interned copy (stable until the capture is freed) */
	size_t n;
	xp_str_t id; /* 0: empty */
};

struct decoder {
	struct xp_capture *c = nullptr;
	const char *name = nullptr;
	bool count_only = false; /* retain nothing (capture full) */
	bool in_stream = false; /* decoding an Event stream (not a host capture) */
	uint64_t observed = 0; /* documents decoded (retained or not) */
	bool over_limit = false; /* the capture refused an event */

	/* failure */
	fail_kind fkind = FAIL_NONE;
	char reason[640];
	char field[256];
	uint64_t mixed_a = 0, mixed_b = 0, start_a = 0, start_b = 0;
	int read_errno = 0;

	/* where we are, for field paths */
	path_comp path[PATH_MAX_DEPTH];
	int depth = 0;

	/* scratch */
	struct xpc_buf tmp = XPC_BUF_INIT; /* canonical JSON text */
	std::vector<std::string_view> keys; /* duplicate detection, a stack */
	struct xp_event scratch; /* the event of count-only mode */
	icache ic[IC__COUNT];
	icache vc[VALUE_CACHE]; /* value texts, direct-mapped (intern_value) */
	range_ent arg_rc[RANGE_CACHE]; /* argument lists seen (share_args) */
	range_ent attr_rc[RANGE_CACHE]; /* attribute maps seen (share_attrs) */
	uint8_t enum_hint[6] = { 0, 0, 0, 0, 0, 0 }; /* enum_tab::parse hints */

	/* where identity was first set (helper halves, see merge) */
	uint64_t cur_off = 0; /* stream offset of the document at hand */
	bool pid_set = false, start_set = false;
	uint64_t pid_set_off = 0, start_set_off = 0;

	/* the canonical-line fast path (decode_fast.h) */
	bool fast = false;
	std::unique_ptr<struct xp_fast_state> fs; /* its state, once used */
	struct xp_fast_event fe; /* the line at hand */
	uint64_t n_fast = 0, n_declined = 0, n_reruns = 0; /* flushed to g_stat_* */

	decoder()
	{
		reason[0] = field[0] = '\0';
		memset(&scratch, 0, sizeof(scratch));
		memset(ic, 0, sizeof(ic));
		memset(vc, 0, sizeof(vc));
		memset(arg_rc, 0, sizeof(arg_rc));
		memset(attr_rc, 0, sizeof(attr_rc));
	}
	~decoder()
	{
		xpc_buf_free(&tmp);
	}
	decoder(const decoder &) = delete;
	decoder &operator=(const decoder &) = delete;
};

struct path_push {
	decoder &d;
	path_push(decoder &dd, std::string_view k) : d(dd)
	{
		if (d.depth < PATH_MAX_DEPTH)
			d.path[d.depth] = { k.data(), k.size(), 0 };
		d.depth++;
	}
	path_push(decoder &dd, size_t idx) : d(dd)
	{
		if (d.depth < PATH_MAX_DEPTH)
			d.path[d.depth] = { nullptr, 0, idx };
		d.depth++;
	}
	~path_push()
	{
		d.depth--;
	}
};

/* Write the current path ("host.arguments[1].abi_type") into d.field. */
void format_path(decoder &d)
{
	size_t off = 0;
	int n = d.depth < PATH_MAX_DEPTH ? d.depth : PATH_MAX_DEPTH;

	d.field[0] = '\0';
	for (int i = 0; i < n && off < sizeof(d.field) - 1; i++) {
		const path_comp &p = d.path[i];
		int w;

		if (p.s)
			w = snprintf(d.field + off, sizeof(d.field) - off, "%s%.*s", off ? "." : "",
				     (int)std::min<size_t>(p.n, 120), p.s);
		else
			w = snprintf(d.field + off, sizeof(d.field) - off, "[%zu]", p.idx);
		if (w < 0)
			break;
		off += (size_t)w;
	}
	if (off >= sizeof(d.field))
		d.field[sizeof(d.field) - 1] = '\0';
}

/* Record a decode failure at the current path; returns -1. */
__attribute__((format(printf, 2, 3))) int fail(decoder &d, const char *fmt, ...)
{
	char why[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	format_path(d);
	d.fkind = FAIL_DECODE;
	if (d.field[0])
		snprintf(d.reason, sizeof(d.reason), "%s: %s", d.field, why);
	else
		snprintf(d.reason, sizeof(d.reason), "%s", why);
	return -1;
}

/* Failures about a key of the current object: the field is path + key. */
int fail_key(decoder &d, std::string_view key, const char *what)
{
	path_push p(d, key);

	format_path(d);
	d.fkind = FAIL_DECODE;
	snprintf(d.reason, sizeof(d.reason), "%s field \"%s\"", what, d.field);
	return -1;
}

int fail_nomem(decoder &d)
{
	d.fkind = FAIL_NOMEM;
	return -1;
}

const char *type_name(element_type t)
{
	switch (t) {
	case element_type::ARRAY:
		return "an array";
	case element_type::OBJECT:
		return "an object";
	case element_type::INT64:
		return "an integer";
	case element_type::UINT64:
		return "an integer";
	case element_type::DOUBLE:
		return "a floating-point number";
	case element_type::STRING:
		return "a string";
	case element_type::BOOL:
		return "a boolean";
	case element_type::NULL_VALUE:
		return "null";
	}
	return "an unknown value";
}

/* ---------------------------------------------------------------------- */
/* Scalars                                                                 */

int get_uint(decoder &d, element v, uint64_t max, const char *what, uint64_t *out)
{
	switch (v.type()) {
	case element_type::INT64: {
		int64_t x = v.get_int64().value_unsafe();

		if (x < 0)
			return fail(d, "expected %s, found negative number %" PRId64, what, x);
		*out = (uint64_t)x;
		break;
	}
	case element_type::UINT64:
		*out = v.get_uint64().value_unsafe();
		break;
	case element_type::DOUBLE:
		return fail(d, "expected %s, found floating-point number %.17g", what,
			    v.get_double().value_unsafe());
	default:
		return fail(d, "expected %s, found %s", what, type_name(v.type()));
	}
	if (*out > max)
		return fail(d, "%" PRIu64 " is out of range for %s", *out, what);
	return 0;
}

inline int get_u64(decoder &d, element v, uint64_t *out)
{
	return get_uint(d, v, UINT64_MAX, "an unsigned 64-bit integer", out);
}

inline int get_u32(decoder &d, element v, uint32_t *out)
{
	uint64_t x;

	if (get_uint(d, v, UINT32_MAX, "an unsigned 32-bit integer", &x))
		return -1;
	*out = (uint32_t)x;
	return 0;
}

/* Optional (nullable) integers: *has false for null. */
inline int get_opt_u64(decoder &d, element v, bool *has, uint64_t *out)
{
	if (v.is_null()) {
		*has = false;
		return 0;
	}
	*has = true;
	return get_u64(d, v, out);
}

inline int get_opt_u32(decoder &d, element v, bool *has, uint32_t *out)
{
	if (v.is_null()) {
		*has = false;
		return 0;
	}
	*has = true;
	return get_u32(d, v, out);
}

int get_i64(decoder &d, element v, int64_t *out)
{
	switch (v.type()) {
	case element_type::INT64:
		*out = v.get_int64().value_unsafe();
		return 0;
	case element_type::UINT64:
		return fail(d, "%" PRIu64 " is out of range for a signed 64-bit integer",
			    v.get_uint64().value_unsafe());
	case element_type::DOUBLE:
		return fail(d,
			    "expected a signed 64-bit integer, found floating-point number %.17g",
			    v.get_double().value_unsafe());
	default:
		return fail(d, "expected a signed 64-bit integer, found %s", type_name(v.type()));
	}
}

int get_bool(decoder &d, element v, bool *out)
{
	if (v.type() != element_type::BOOL)
		return fail(d, "expected a boolean, found %s", type_name(v.type()));
	*out = v.get_bool().value_unsafe();
	return 0;
}

int get_str(decoder &d, element v, std::string_view *out)
{
	if (v.type() != element_type::STRING)
		return fail(d, "expected a string, found %s", type_name(v.type()));
	*out = v.get_string().value_unsafe();
	return 0;
}

int get_obj(decoder &d, element v, simdjson::dom::object *out, const char *what)
{
	if (v.type() != element_type::OBJECT)
		return fail(d, "expected %s object, found %s", what, type_name(v.type()));
	*out = v.get_object().value_unsafe();
	return 0;
}

/* Intern @s through cache @slot (0 on allocation failure: strings.failed). */
xp_str_t intern_cached(decoder &d, int slot, std::string_view s)
{
	icache &ic = d.ic[slot];
	xp_str_t id;

	if (ic.id && ic.n == s.size() && fast_eq(ic.p, s.data(), s.size()))
		return ic.id;
	id = xp_capture_intern_n(d.c, s.data(), s.size());
	if (id) {
		ic.id = id;
		ic.n = s.size();
		ic.p = xp_capture_str(d.c, id);
	}
	return id;
}

/* A string, interned (0 in count-only mode, which retains nothing). */
int get_str_id(decoder &d, element v, int slot, xp_str_t *out)
{
	std::string_view s;

	if (get_str(d, v, &s))
		return -1;
	*out = d.count_only ? 0 : intern_cached(d, slot, s);
	return 0;
}

/* string|null */
int get_opt_str_id(decoder &d, element v, int slot, xp_str_t *out)
{
	if (v.is_null()) {
		*out = 0;
		return 0;
	}
	return get_str_id(d, v, slot, out);
}

/* An enum spelled as a string: @parse is one of the xp_*_parse functions. */
int get_enum(decoder &d, element v, const enum_tab &tab, const char *expected, uint8_t *out)
{
	std::string_view s;
	int x;

	if (v.type() != element_type::STRING)
		return fail(d, "expected one of %s, found %s", expected, type_name(v.type()));
	s = v.get_string().value_unsafe();
	x = tab.parse(s, &d.enum_hint[tab.slot]);
	if (x < 0)
		return fail(d, "unknown value \"%.*s\", expected one of %s",
			    (int)std::min<size_t>(s.size(), 80), s.data(), expected);
	*out = (uint8_t)x;
	return 0;
}

int check_version(decoder &d, element v)
{
	std::string_view s;

	if (get_str(d, v, &s))
		return -1;
	if (s != XP_SCHEMA_VERSION)
		return fail(d,
			    "unsupported schema version \"%.*s\", expected \"" XP_SCHEMA_VERSION
			    "\"",
			    (int)std::min<size_t>(s.size(), 40), s.data());
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Duplicate keys of free-form objects (attributes, nested values)        */

/* Keys d.keys[base..] of one object: return the index of a duplicate or -1. */
long find_duplicate(decoder &d, size_t base)
{
	size_t n = d.keys.size() - base;

	if (n < 2)
		return -1;
	if (n <= 16) {
		for (size_t i = base + 1; i < d.keys.size(); i++)
			for (size_t j = base; j < i; j++)
				if (d.keys[i] == d.keys[j])
					return (long)i;
		return -1;
	}
	std::vector<std::string_view> sorted(d.keys.begin() + (long)base, d.keys.end());
	std::sort(sorted.begin(), sorted.end());
	for (size_t i = 1; i < sorted.size(); i++)
		if (sorted[i] == sorted[i - 1]) {
			for (size_t k = base; k < d.keys.size(); k++)
				if (d.keys[k] == sorted[i])
					return (long)k;
		}
	return -1;
}

/* ---------------------------------------------------------------------- */
/* Canonical compact JSON text of any value (attribute / argument values) */

void put_u64(struct xpc_buf *b, uint64_t v)
{
	char tmp[24], *p = tmp + sizeof(tmp);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	xpc_buf_append(b, p, (size_t)(tmp + sizeof(tmp) - p));
}

void put_string(struct xpc_buf *b, std::string_view s)
{
	xpc_buf_putc(b, '"');
	xpc_json_escape(b, s.data(), s.size());
	xpc_buf_putc(b, '"');
}

int write_value(decoder &d, element v, struct xpc_buf *b)
{
	switch (v.type()) {
	case element_type::NULL_VALUE:
		xpc_buf_append(b, "null", 4);
		return 0;
	case element_type::BOOL:
		if (v.get_bool().value_unsafe())
			xpc_buf_append(b, "true", 4);
		else
			xpc_buf_append(b, "false", 5);
		return 0;
	case element_type::INT64: {
		int64_t x = v.get_int64().value_unsafe();

		if (x < 0) {
			xpc_buf_putc(b, '-');
			put_u64(b, (uint64_t)0 - (uint64_t)x);
		} else {
			put_u64(b, (uint64_t)x);
		}
		return 0;
	}
	case element_type::UINT64:
		put_u64(b, v.get_uint64().value_unsafe());
		return 0;
	case element_type::DOUBLE: {
		char tmp[40];
		int n = xpc_fmt_f64(v.get_double().value_unsafe(), tmp, sizeof(tmp));

		xpc_buf_append(b, tmp, (size_t)n);
		return 0;
	}
	case element_type::STRING:
		put_string(b, v.get_string().value_unsafe());
		return 0;
	case element_type::ARRAY: {
		simdjson::dom::array arr = v.get_array().value_unsafe();
		size_t i = 0;

		xpc_buf_putc(b, '[');
		for (element x : arr) {
			path_push p(d, i);

			if (i++)
				xpc_buf_putc(b, ',');
			if (write_value(d, x, b))
				return -1;
		}
		xpc_buf_putc(b, ']');
		return 0;
	}
	case element_type::OBJECT: {
		simdjson::dom::object o = v.get_object().value_unsafe();
		size_t base = d.keys.size(), i = 0;
		long dup;

		xpc_buf_putc(b, '{');
		for (auto it = o.begin(); it != o.end(); ++it) {
			std::string_view k = it.key();

			d.keys.push_back(k);
			if (i++)
				xpc_buf_putc(b, ',');
			put_string(b, k);
			xpc_buf_putc(b, ':');
			path_push p(d, k);
			if (write_value(d, it.value(), b))
				return -1;
		}
		xpc_buf_putc(b, '}');
		dup = find_duplicate(d, base);
		if (dup >= 0) {
			std::string_view k = d.keys[(size_t)dup];

			d.keys.resize(base);
			return fail_key(d, k, "duplicate");
		}
		d.keys.resize(base);
		return 0;
	}
	}
	return fail(d, "unsupported JSON value");
}

/* Canonical text of @v, interned (0 in count-only mode). */
/*
 * Intern a value's text through a small direct-mapped cache: argument
 * values rotate among a few texts per event (six syscall registers), which
 * a one-entry cache misses every time.
 */
xp_str_t intern_value(decoder &d, const char *p, size_t n)
{
	uint64_t a = 0, b = 0, h;
	icache *e;
	xp_str_t id;

	memcpy(&a, p, n < 8 ? n : 8);
	if (n > 8)
		b = load<uint64_t>(p + n - 8);
	h = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full) ^ n;
	e = &d.vc[(h >> 58) & (VALUE_CACHE - 1)];
	if (e->id && e->n == n && fast_eq(e->p, p, n))
		return e->id;
	id = xp_capture_intern_n(d.c, p, n);
	if (id) {
		e->id = id;
		e->n = n;
		e->p = xp_capture_str(d.c, id);
	}
	return id;
}

/* Canonical text of @v, interned (0 in count-only mode). */
int value_id(decoder &d, element v, xp_str_t *out)
{
	char num[24], *p = num + sizeof(num);

	/* integers, the common case, without the buffer */
	if (v.type() == element_type::UINT64 || v.type() == element_type::INT64) {
		bool neg = v.type() == element_type::INT64 && v.get_int64().value_unsafe() < 0;
		uint64_t x = v.type() == element_type::UINT64 ?
				     v.get_uint64().value_unsafe() :
				     (neg ? (uint64_t)0 - (uint64_t)v.get_int64().value_unsafe() :
					    (uint64_t)v.get_int64().value_unsafe());

		do {
			*--p = (char)('0' + x % 10);
			x /= 10;
		} while (x);
		if (neg)
			*--p = '-';
		*out = d.count_only ? 0 : intern_value(d, p, (size_t)(num + sizeof(num) - p));
		return 0;
	}
	xpc_buf_reset(&d.tmp);
	if (write_value(d, v, &d.tmp))
		return -1;
	if (!xpc_buf_ok(&d.tmp))
		return fail_nomem(d);
	*out = d.count_only ? 0 : intern_value(d, xpc_buf_str(&d.tmp), d.tmp.len);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Event parts                                                             */

/*
 * Shared argument and attribute runs.  A syscall entry carries six
 * arguments and a syscall event one attribute, and most events repeat a
 * list seen before (the same fd, buffer and count; the same category), so
 * the run just appended is compared with an earlier run of the same hash
 * and, when equal, dropped in favour of it: the table grows with distinct
 * lists, not with events (48 bytes per syscall entry otherwise).  Runs are
 * read-only once linked, so sharing one is invisible to readers; @first is
 * always the end of the table here, which is what makes dropping it safe.
 */
inline uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x9e3779b97f4a7c15ull;
}

uint32_t share_args(decoder &d, uint32_t first, uint32_t count)
{
	struct xp_capture *c = d.c;
	const struct xp_arg *a = c->args + first;
	uint64_t h = count;

	for (uint32_t i = 0; i < count; i++)
		h = mix(mix(h, (uint64_t)a[i].abi_type << 32 | a[i].value),
			(uint64_t)a[i].read_error << 16 | a[i].index);
	range_ent &e = d.arg_rc[(h >> 56) & (RANGE_CACHE - 1)];
	if (e.count == count && e.h == h && e.first + count <= first) {
		const struct xp_arg *b = c->args + e.first;
		uint32_t i;

		for (i = 0; i < count; i++)
			if (a[i].abi_type != b[i].abi_type || a[i].value != b[i].value ||
			    a[i].read_error != b[i].read_error || a[i].index != b[i].index)
				break;
		if (i == count && first + count == c->nargs) {
			c->nargs = first;
			return e.first;
		}
	}
	e = { h, first, count };
	return first;
}

uint32_t share_attrs(decoder &d, uint32_t first, uint32_t count)
{
	struct xp_capture *c = d.c;
	const struct xp_attr *a = c->attrs + first;
	uint64_t h = count;

	for (uint32_t i = 0; i < count; i++)
		h = mix(h, (uint64_t)a[i].key << 32 | a[i].value);
	range_ent &e = d.attr_rc[(h >> 56) & (RANGE_CACHE - 1)];
	if (e.count == count && e.h == h && e.first + count <= first) {
		const struct xp_attr *b = c->attrs + e.first;
		uint32_t i;

		for (i = 0; i < count; i++)
			if (a[i].key != b[i].key || a[i].value != b[i].value)
				break;
		if (i == count && first + count == c->nattrs) {
			c->nattrs = first;
			return e.first;
		}
	}
	e = { h, first, count };
	return first;
}

int decode_dim3(decoder &d, element v, bool *has, struct xp_dim3 *out)
{
	simdjson::dom::object o;
	uint32_t seen = 0, vals[D3__COUNT] = { 0, 0, 0 };
	int hint = 0;

	if (v.is_null()) {
		*has = false;
		return 0;
	}
	if (get_obj(d, v, &o, "a Dim3"))
		return -1;
	for (auto it = o.begin(); it != o.end(); ++it) {
		std::string_view k = it.key();
		int f = find_field(dim3_fields, D3__COUNT, k, hint);

		if (f < 0)
			return fail_key(d, k, "unknown");
		if (seen & (1u << f))
			return fail_key(d, k, "duplicate");
		seen |= 1u << f;
		hint = f + 1;
		path_push p(d, k);
		if (get_u32(d, it.value(), &vals[f]))
			return -1;
	}
	for (int f = 0; f < D3__COUNT; f++)
		if (!(seen & (1u << f)))
			return fail_key(d, { dim3_fields[f].name, dim3_fields[f].len }, "missing");
	*has = true;
	out->x = vals[D3_X];
	out->y = vals[D3_Y];
	out->z = vals[D3_Z];
	return 0;
}

int decode_argument(decoder &d, element v, struct xp_arg *a)
{
	simdjson::dom::object o;
	uint32_t seen = 0;
	uint64_t idx = 0;
	int hint = 0;

	if (get_obj(d, v, &o, "an ArgumentValue"))
		return -1;
	memset(a, 0, sizeof(*a));
	for (auto it = o.begin(); it != o.end(); ++it) {
		std::string_view k = it.key();
		int f = find_field(arg_fields, AR__COUNT, k, hint);
		element x = it.value();

		if (f < 0)
			return fail_key(d, k, "unknown");
		if (seen & (1u << f))
			return fail_key(d, k, "duplicate");
		seen |= 1u << f;
		hint = f + 1;
		path_push p(d, k);
		switch (f) {
		case AR_INDEX:
			if (get_uint(d, x, UINT16_MAX, "an unsigned 16-bit integer", &idx))
				return -1;
			a->index = (uint16_t)idx;
			break;
		case AR_ABI_TYPE:
			if (get_str_id(d, x, IC_ABI_TYPE, &a->abi_type))
				return -1;
			break;
		case AR_VALUE:
			if (x.is_null())
				a->value = 0;
			else if (value_id(d, x, &a->value))
				return -1;
			break;
		case AR_READ_ERROR:
			if (get_opt_str_id(d, x, IC_READ_ERROR, &a->read_error))
				return -1;
			break;
		}
	}
	if (!(seen & (1u << AR_INDEX)))
		return fail_key(d, "index", "missing");
	if (!(seen & (1u << AR_ABI_TYPE)))
		return fail_key(d, "abi_type", "missing");
	return 0;
}

int decode_arguments(decoder &d, element v, struct xp_host_part *h)
{
	simdjson::dom::array arr;
	size_t i = 0;

	if (v.type() != element_type::ARRAY)
		return fail(d, "expected an array of ArgumentValue, found %s", type_name(v.type()));
	arr = v.get_array().value_unsafe();
	h->args_count = 0;
	h->args_first = 0;
	for (element x : arr) {
		struct xp_arg a;
		path_push p(d, i);

		if (i >= UINT16_MAX)
			return fail(d, "more than %u arguments", UINT16_MAX);
		if (decode_argument(d, x, &a))
			return -1;
		i++;
		if (d.count_only)
			continue;
		if (d.c->nargs >= UINT32_MAX)
			return fail(d, "the capture holds too many arguments");
		long idx = xp_capture_add_arg(d.c, &a);
		if (idx < 0)
			return fail_nomem(d);
		if (h->args_count == 0)
			h->args_first = (uint32_t)idx;
		h->args_count++;
	}
	if (h->args_count)
		h->args_first = share_args(d, h->args_first, h->args_count);
	return 0;
}

const char k_probe_kinds[] = "uprobe, uretprobe, kprobe, kretprobe, tracepoint, syscall, usdt";
const char k_sources[] = "ebpf, cupti_callback, cupti_activity, marker";
const char k_event_types[] =
	"host_function_entry, host_function_exit, kernel_function_entry, kernel_function_exit, "
	"tracepoint, syscall_entry, syscall_exit, cuda_api_entry, cuda_api_exit, "
	"gpu_kernel_start, gpu_kernel_end, gpu_memcpy_start, gpu_memcpy_end, "
	"gpu_memset_start, gpu_memset_end, nvtx_range_start, nvtx_range_end, marker, usdt";
const char k_clocks[] = "host_monotonic, cupti, cupti_normalized_to_host_monotonic";
const char k_memcpy_kinds[] = "HtoD, DtoH, DtoD, HtoH, PtoP, unknown";
const char k_range_kinds[] = "thread, process";

int decode_host(decoder &d, element v, struct xp_event *e)
{
	struct xp_host_part *h = &e->host;
	simdjson::dom::object o;
	uint32_t seen = 0;
	int hint = 0;

	if (v.is_null())
		return 0;
	if (get_obj(d, v, &o, "a HostEvent"))
		return -1;
	for (auto it = o.begin(); it != o.end(); ++it) {
		std::string_view k = it.key();
		int f = find_field(host_fields, HO__COUNT, k, hint);
		element x = it.value();
		bool has = false;

		if (f < 0)
			return fail_key(d, k, "unknown");
		if (seen & (1u << f))
			return fail_key(d, k, "duplicate");
		seen |= 1u << f;
		hint = f + 1;
		path_push p(d, k);
		switch (f) {
		case HO_PROBE_KIND:
			if (get_enum(d, x, t_probe_kind, k_probe_kinds, &h->probe_kind))
				return -1;
			break;
		case HO_BINARY_PATH:
			if (get_opt_str_id(d, x, IC_BINARY_PATH, &h->binary_path))
				return -1;
			break;
		case HO_BUILD_ID:
			if (get_opt_str_id(d, x, IC_BUILD_ID, &h->build_id))
				return -1;
			break;
		case HO_SYMBOL:
			if (get_opt_str_id(d, x, IC_SYMBOL, &h->symbol))
				return -1;
			break;
		case HO_SYMBOL_DEMANGLED:
			if (get_opt_str_id(d, x, IC_SYMBOL_DEMANGLED, &h->symbol_demangled))
				return -1;
			break;
		case HO_OFFSET:
			if (get_opt_u64(d, x, &has, &h->offset))
				return -1;
			if (has)
				h->flags |= XP_HOSTF_OFFSET;
			break;
		case HO_RETURN_VALUE:
			if (x.is_null())
				break;
			if (get_i64(d, x, &h->return_value))
				return -1;
			h->flags |= XP_HOSTF_RETURN_VALUE;
			break;
		case HO_ARGUMENTS:
			if (decode_arguments(d, x, h))
				return -1;
			break;
		}
	}
	if (!(seen & (1u << HO_PROBE_KIND)))
		return fail_key(d, "probe_kind", "missing");
	e->flags |= XP_EVF_HOST;
	return 0;
}

int decode_cuda(decoder &d, element v, struct xp_event *e)
{
	struct xp_cuda_part *cu = &e->cuda;
	simdjson::dom::object o;
	uint32_t seen = 0;
	int hint = 0;

	if (v.is_null())
		return 0;
	if (get_obj(d, v, &o, "a CudaEvent"))
		return -1;
	for (auto it = o.begin(); it != o.end(); ++it) {
		std::string_view k = it.key();
		int f = find_field(cuda_fields, CU__COUNT, k, hint);
		element x = it.value();
		bool has = false;
		uint16_t bit = 0;
		int rc = 0;

		if (f < 0)
			return fail_key(d, k, "unknown");
		if (seen & (1u << f))
			return fail_key(d, k, "duplicate");
		seen |= 1u << f;
		hint = f + 1;
		path_push p(d, k);
		switch (f) {
		case CU_DEVICE_ID:
			rc = get_opt_u32(d, x, &has, &cu->device_id);
			bit = XP_CUDAF_DEVICE_ID;
			break;
		case CU_CONTEXT_ID:
			rc = get_opt_u32(d, x, &has, &cu->context_id);
			bit = XP_CUDAF_CONTEXT_ID;
			break;
		case CU_STREAM_ID:
			rc = get_opt_u64(d, x, &has, &cu->stream_id);
			bit = XP_CUDAF_STREAM_ID;
			break;
		case CU_CORRELATION_ID:
			rc = get_opt_u32(d, x, &has, &cu->correlation_id);
			bit = XP_CUDAF_CORRELATION_ID;
			break;
		case CU_RUNTIME_CORRELATION_ID:
			rc = get_opt_u32(d, x, &has, &cu->runtime_correlation_id);
			bit = XP_CUDAF_RUNTIME_CORRELATION_ID;
			break;
		case CU_CALLBACK_DOMAIN:
			rc = get_opt_u32(d, x, &has, &cu->callback_domain);
			bit = XP_CUDAF_CALLBACK_DOMAIN;
			break;
		case CU_CALLBACK_ID:
			rc = get_opt_u32(d, x, &has, &cu->callback_id);
			bit = XP_CUDAF_CALLBACK_ID;
			break;
		case CU_KERNEL_NAME:
			rc = get_opt_str_id(d, x, IC_KERNEL_NAME, &cu->kernel_name);
			break;
		case CU_KERNEL_NAME_MANGLED:
			rc = get_opt_str_id(d, x, IC_KERNEL_NAME_MANGLED, &cu->kernel_name_mangled);
			break;
		case CU_START_NS:
			rc = get_opt_u64(d, x, &has, &cu->start_ns);
			bit = XP_CUDAF_START_NS;
			break;
		case CU_END_NS:
			rc = get_opt_u64(d, x, &has, &cu->end_ns);
			bit = XP_CUDAF_END_NS;
			break;
		case CU_GRID:
			rc = decode_dim3(d, x, &has, &cu->grid);
			bit = XP_CUDAF_GRID;
			break;
		case CU_BLOCK:
			rc = decode_dim3(d, x, &has, &cu->block);
			bit = XP_CUDAF_BLOCK;
			break;
		case CU_BYTES:
			rc = get_opt_u64(d, x, &has, &cu->bytes);
			bit = XP_CUDAF_BYTES;
			break;
		case CU_MEMCPY_KIND:
			if (x.is_null())
				break;
			rc = get_enum(d, x, t_memcpy_kind, k_memcpy_kinds, &cu->memcpy_kind);
			has = true;
			bit = XP_CUDAF_MEMCPY_KIND;
			break;
		}
		if (rc)
			return -1;
		if (has)
			cu->flags |= bit;
	}
	e->flags |= XP_EVF_CUDA;
	return 0;
}

int decode_nvtx(decoder &d, element v, struct xp_event *e)
{
	struct xp_nvtx_part *n = &e->nvtx;
	simdjson::dom::object o;
	uint32_t seen = 0;
	int hint = 0;
	bool b = false;

	if (v.is_null())
		return 0;
	if (get_obj(d, v, &o, "an NvtxEvent"))
		return -1;
	for (auto it = o.begin(); it != o.end(); ++it) {
		std::string_view k = it.key();
		int f = find_field(nvtx_fields, NV__COUNT, k, hint);
		element x = it.value();

		if (f < 0)
			return fail_key(d, k, "unknown");
		if (seen & (1u << f))
			return fail_key(d, k, "duplicate");
		seen |= 1u << f;
		hint = f + 1;
		path_push p(d, k);
		switch (f) {
		case NV_NAME:
			if (get_str_id(d, x, IC_NVTX_NAME, &n->name))
				return -1;
			break;
		case NV_NAME_COMPLETE:
			if (get_bool(d, x, &b))
				return -1;
			n->name_complete = b;
			break;
		case NV_RANGE_KIND:
			if (get_enum(d, x, t_range_kind, k_range_kinds, &n->range_kind))
				return -1;
			break;
		case NV_RANGE_ID:
			if (get_u64(d, x, &n->range_id))
				return -1;
			break;
		case NV_START_TID:
			if (get_u32(d, x, &n->start_tid))
				return -1;
			break;
		}
	}
	for (int f = 0; f < NV__COUNT; f++)
		if (!(seen & (1u << f)))
			return fail_key(d, { nvtx_fields[f].name, nvtx_fields[f].len }, "missing");
	e->flags |= XP_EVF_NVTX;
	return 0;
}

int decode_attributes(decoder &d, element v, struct xp_event *e)
{
	simdjson::dom::object o;
	size_t base = d.keys.size(), n = 0;
	long dup;

	if (get_obj(d, v, &o, "an attributes"))
		return -1;
	e->attrs_count = 0;
	e->attrs_first = 0;
	for (auto it = o.begin(); it != o.end(); ++it) {
		std::string_view k = it.key();
		xp_str_t vid = 0;

		d.keys.push_back(k);
		if (++n > UINT16_MAX)
			return fail(d, "more than %u attributes", UINT16_MAX);
		/* attribute keys are C strings everywhere downstream */
		if (memchr(k.data(), '\0', k.size()))
			return fail_key(d, k, "NUL character in the name of");
		{
			path_push p(d, k);

			if (value_id(d, it.value(), &vid))
				return -1;
		}
		if (d.count_only)
			continue;
		if (d.c->nattrs >= UINT32_MAX)
			return fail(d, "the capture holds too many attributes");
		long idx = xp_capture_add_attr(d.c, intern_cached(d, IC_ATTR_KEY, k), vid);
		if (idx < 0)
			return fail_nomem(d);
		if (e->attrs_count == 0)
			e->attrs_first = (uint32_t)idx;
		e->attrs_count++;
	}
	dup = find_duplicate(d, base);
	if (dup >= 0) {
		std::string_view k = d.keys[(size_t)dup];

		d.keys.resize(base);
		return fail_key(d, k, "duplicate");
	}
	d.keys.resize(base);
	if (e->attrs_count)
		e->attrs_first = share_attrs(d, e->attrs_first, e->attrs_count);
	return 0;
}

/* Everything but the target checks. */
int decode_event_fields(decoder &d, element root, struct xp_event *e)
{
	simdjson::dom::object o;
	uint32_t seen = 0;
	int hint = 0;

	if (root.type() != element_type::OBJECT)
		return fail(d, "expected an Event object, found %s", type_name(root.type()));
	o = root.get_object().value_unsafe();
	for (auto it = o.begin(); it != o.end(); ++it) {
		std::string_view k = it.key();
		int f = find_field(ev_fields, EV__COUNT, k, hint);
		element x = it.value();
		bool has = false;
		std::string_view s;

		if (f < 0) {
			if (d.in_stream && d.depth == 0 &&
			    find_field(hc_fields, HC__COUNT, k, 0) >= 0)
				return fail(d, "a host-capture document must be the only document "
					       "of its file");
			return fail_key(d, k, "unknown");
		}
		if (seen & (1u << f))
			return fail_key(d, k, "duplicate");
		seen |= 1u << f;
		hint = f + 1;
		path_push p(d, k);
		switch (f) {
		case EV_SCHEMA_VERSION:
			if (check_version(d, x))
				return -1;
			break;
		case EV_SESSION_ID:
		case EV_EVENT_ID:
			/* validated, then dropped: the merge resequences */
			if (get_str(d, x, &s))
				return -1;
			break;
		case EV_SEQUENCE:
			if (get_u64(d, x, &e->sequence))
				return -1;
			break;
		case EV_SOURCE:
			if (get_enum(d, x, t_source, k_sources, &e->source))
				return -1;
			break;
		case EV_EVENT_TYPE:
			if (get_enum(d, x, t_event_type, k_event_types, &e->event_type))
				return -1;
			break;
		case EV_PID:
			if (get_u32(d, x, &e->pid))
				return -1;
			break;
		case EV_TID:
			if (get_u32(d, x, &e->tid))
				return -1;
			break;
		case EV_CPU:
			if (get_opt_u32(d, x, &has, &e->cpu))
				return -1;
			if (has)
				e->flags |= XP_EVF_CPU;
			break;
		case EV_TIMESTAMP_RAW:
			if (get_u64(d, x, &e->timestamp_raw))
				return -1;
			break;
		case EV_TIMESTAMP_NS:
			if (get_u64(d, x, &e->timestamp_ns))
				return -1;
			break;
		case EV_CLOCK_DOMAIN:
			if (get_enum(d, x, t_clock, k_clocks, &e->clock_domain))
				return -1;
			break;
		case EV_TIMESTAMP_ERROR_NS:
			if (get_opt_u64(d, x, &has, &e->timestamp_error_ns))
				return -1;
			if (has)
				e->flags |= XP_EVF_TS_ERROR;
			break;
		case EV_PROCESS_START_TIME:
			if (get_opt_u64(d, x, &has, &e->process_start_time))
				return -1;
			if (has)
				e->flags |= XP_EVF_START_TIME;
			break;
		case EV_HOST:
			if (decode_host(d, x, e))
				return -1;
			break;
		case EV_CUDA:
			if (decode_cuda(d, x, e))
				return -1;
			break;
		case EV_NVTX:
			if (decode_nvtx(d, x, e))
				return -1;
			break;
		case EV_ATTRIBUTES:
			if (decode_attributes(d, x, e))
				return -1;
			break;
		}
	}
	if ((seen & EV_REQUIRED) != EV_REQUIRED) {
		for (int f = 0; f < EV__COUNT; f++)
			if ((EV_REQUIRED & (1u << f)) && !(seen & (1u << f)))
				return fail_key(d, { ev_fields[f].name, ev_fields[f].len },
						"missing");
	}
	return 0;
}

/* The target checks: one pid (and one process start time) per capture. */
int check_target(decoder &d, const struct xp_event *e)
{
	struct xp_capture *c = d.c;

	if (!c->has_pid) {
		c->has_pid = true;
		c->pid = e->pid;
		d.pid_set = true;
		d.pid_set_off = d.cur_off;
	} else if (e->pid != c->pid) {
		d.fkind = FAIL_MIXED_PID;
		d.mixed_a = c->pid;
		d.mixed_b = e->pid;
		return -1;
	}
	if (e->flags & XP_EVF_START_TIME) {
		if (!c->has_start_time) {
			c->has_start_time = true;
			c->process_start_time = e->process_start_time;
			d.start_set = true;
			d.start_set_off = d.cur_off;
		} else if (e->process_start_time != c->process_start_time) {
			d.fkind = FAIL_MIXED_START;
			d.mixed_a = e->pid;
			d.start_a = c->process_start_time;
			d.start_b = e->process_start_time;
			return -1;
		}
	}
	return 0;
}

/* Decode one Event document into the capture (or count it when full). */
/*
 * A record of xprobe's own event extension (measure --explain's scheduler
 * events beside the Event lines of an --events-out file, docs/output.md):
 * an object whose key "xprobe_extension" names its type.  Not an Event:
 * read past, never counted as one.
 */
bool extension_record(element root)
{
	simdjson::dom::object o;

	if (root.type() != element_type::OBJECT)
		return false;
	o = root.get_object().value_unsafe();
	return o.at_key("xprobe_extension").error() == simdjson::SUCCESS;
}

int decode_one(decoder &d, element root)
{
	struct xp_capture *c = d.c;
	struct xp_event *e = nullptr;
	bool retained = false;

	if (extension_record(root))
		return 0;
	if (!d.count_only) {
		int rc = 0;

		e = xp_capture_add(c, &rc);
		if (e) {
			retained = true;
		} else if (rc == -E2BIG) {
			d.count_only = true;
		} else {
			return fail_nomem(d);
		}
	}
	if (!retained) {
		d.over_limit = true; /* this one is counted, not kept */
		e = &d.scratch;
		memset(e, 0, sizeof(*e));
	}
	if (decode_event_fields(d, root, e) || check_target(d, e)) {
		if (retained)
			xp_capture_pop(c);
		return -1;
	}
	if (c->strings.failed) {
		if (retained)
			xp_capture_pop(c);
		return fail_nomem(d);
	}
	d.observed++;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Turning a failure into the contract's error                             */

/* Location of a failure: 1-based line and byte offset, when known. */
struct location {
	bool known = false;
	uint64_t line = 0;
	uint64_t offset = 0;
};

int raise(decoder &d, const location &loc, struct xp_error *err, long event_index = -1)
{
	char where[64] = "";

	if (loc.known)
		snprintf(where, sizeof(where), "line %" PRIu64 ": ", loc.line);
	switch (d.fkind) {
	case FAIL_MIXED_PID: {
		char pids[64];

		xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
			     "completed capture mixes target PIDs %" PRIu64 " and %" PRIu64,
			     d.mixed_a, d.mixed_b);
		snprintf(pids, sizeof(pids), "[%" PRIu64 ",%" PRIu64 "]", d.mixed_a, d.mixed_b);
		xp_error_detail_raw(err, "pids", pids);
		xp_error_hint(err, "measure captures of one target process at a time");
		break;
	}
	case FAIL_MIXED_START:
		xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
			     "completed capture mixes target processes: pid %" PRIu64
			     " with process start times %" PRIu64 " and %" PRIu64,
			     d.mixed_a, d.start_a, d.start_b);
		xp_error_detail_u64(err, "pid", d.mixed_a);
		xp_error_detail_u64(err, "expected_process_start_time", d.start_a);
		xp_error_detail_u64(err, "process_start_time", d.start_b);
		xp_error_hint(err, "the pid was reused by another process; measure one process "
				   "at a time");
		break;
	case FAIL_NOMEM:
		xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
			     "failed to decode %s: %sout of memory", d.name, where);
		break;
	case FAIL_READ:
		xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false, "failed to read %s: %s",
			     d.name, strerror(d.read_errno));
		break;
	case FAIL_DECODE:
	case FAIL_NONE:
	default:
		xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false, "failed to decode %s: %s%s",
			     d.name, where, d.reason);
		if (d.field[0])
			xp_error_detail_str(err, "field", d.field);
		break;
	}
	xp_error_detail_str(err, "path", d.name);
	if (loc.known) {
		xp_error_detail_u64(err, "line", loc.line);
		xp_error_detail_u64(err, "byte_offset", loc.offset);
	}
	if (event_index >= 0)
		xp_error_detail_u64(err, "event_index", (uint64_t)event_index);
	return -XPROBE_E_TRACE_EXPORT_FAILED;
}

/* ---------------------------------------------------------------------- */
/* Event streams                                                           */

/* Where the bytes come from: an optional prefix, then an fd or memory. */
struct source {
	const char *prefix = nullptr;
	size_t prefix_len = 0, prefix_pos = 0;
	int fd = -1;
	const char *mem = nullptr;
	size_t mem_len = 0, mem_pos = 0;
	/* line counting on error: memory is at hand; a regular file is
	 * re-read with pread from file_base; anything else is counted as it
	 * is consumed (lines_before). */
	bool seekable = false;
	off_t file_base = 0;
	/* bytes the stream holds, when known (0: unknown), so a small input
	 * gets a small buffer */
	uint64_t size_hint = 0;
};

/* Fill @dst with up to @want bytes; fewer only at end of input. */
ssize_t src_fill(source &s, char *dst, size_t want)
{
	size_t got = 0;

	if (s.prefix_pos < s.prefix_len) {
		size_t n = std::min(want, s.prefix_len - s.prefix_pos);

		memcpy(dst, s.prefix + s.prefix_pos, n);
		s.prefix_pos += n;
		got += n;
	}
	if (got == want)
		return (ssize_t)got;
	if (s.fd < 0) {
		size_t n = std::min(want - got, s.mem_len - s.mem_pos);

		if (n)
			memcpy(dst + got, s.mem + s.mem_pos, n);
		s.mem_pos += n;
		return (ssize_t)(got + n);
	}
	ssize_t r = xpc_read_full(s.fd, dst + got, want - got);
	if (r < 0)
		return r;
	return (ssize_t)(got + (size_t)r);
}

uint64_t count_newlines(const char *p, size_t n)
{
	uint64_t lines = 0;
	const char *end = p + n;

	while (p < end) {
		const char *q = (const char *)memchr(p, '\n', (size_t)(end - p));

		if (!q)
			break;
		lines++;
		p = q + 1;
	}
	return lines;
}

/* Newlines in stream bytes [0, @upto), for an error's line number. */
uint64_t lines_upto(source &s, uint64_t upto, uint64_t lines_before, uint64_t buf_off,
		    const char *buf)
{
	if (s.fd < 0)
		return count_newlines(s.mem, upto);
	if (!s.seekable)
		return lines_before + count_newlines(buf, upto - buf_off);

	/* regular file: the prefix was read from file_base onwards */
	static const size_t BLK = 1u << 20;
	char *tmp = (char *)malloc(BLK);
	uint64_t lines = 0, pos = 0;

	if (!tmp)
		return lines_before + count_newlines(buf, upto - buf_off);
	while (pos < upto) {
		size_t want = (size_t)std::min<uint64_t>(BLK, upto - pos);
		ssize_t r = pread(s.fd, tmp, want, s.file_base + (off_t)pos);

		if (r <= 0)
			break;
		lines += count_newlines(tmp, (size_t)r);
		pos += (uint64_t)r;
	}
	free(tmp);
	return lines;
}

/*
 * A JSON error somewhere in buf[from..len): find the first non-blank line
 * that does not parse on its own (JSONL puts one document per line), so
 * the error names the right line even when simdjson's stage 1 failed for
 * the whole chunk.  Returns the offset of that line, or @from.
 */
size_t locate_bad_line(const char *buf, size_t len, size_t from)
{
	simdjson::dom::parser p;
	size_t pos = from;

	while (pos < len) {
		const char *nl = (const char *)memchr(buf + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - buf) : len;
		size_t a = pos;

		while (a < end && (buf[a] == ' ' || buf[a] == '\t' || buf[a] == '\r'))
			a++;
		if (a < end) {
			simdjson::padded_string line(buf + a, end - a);
			element ignored;

			if (p.parse(line).get(ignored))
				return pos;
		}
		pos = end + 1;
	}
	return from;
}

/* What parsing one segment of a chunk found. */
struct seg_result {
	enum { OK, DECODE_FAIL, JSON_FAIL } status = OK;
	size_t fail_at = 0; /* offset in the segment of the failing document/line */
	simdjson::error_code jerr = simdjson::SUCCESS;
	size_t trunc = 0; /* bytes of a document cut by the segment's end */
};

/*
 * Decode the whole documents of buf[0..len) (padded) into d.c with
 * simdjson alone.  @seg_off is the stream offset of buf[0] (decoders
 * record where identity was set).
 */
seg_result parse_segment_slow(decoder &d, simdjson::dom::parser &parser, const char *buf,
			      size_t len, uint64_t seg_off)
{
	seg_result r;
	simdjson::dom::document_stream stream;
	size_t idx = 0, docs = 0;

	/* (simdjson leaves truncated_bytes() undefined for empty input) */
	if (len == 0)
		return r;

	r.jerr = parser.parse_many((const uint8_t *)buf, len, len).get(stream);
	if (!r.jerr) {
		for (auto it = stream.begin(); it != stream.end(); ++it) {
			element doc;

			idx = it.current_index();
			r.jerr = (*it).get(doc);
			if (r.jerr)
				break;
			d.cur_off = seg_off + idx;
			if (decode_one(d, doc)) {
				r.status = seg_result::DECODE_FAIL;
				r.fail_at = idx;
				return r;
			}
			docs++;
		}
	}
	if (r.jerr) {
		/* stage 1 fails for a whole batch: look for the line */
		size_t from = docs ? idx : 0;
		size_t bad = locate_bad_line(buf, len, from);

		if (bad == from && docs)
			bad = idx;
		r.status = seg_result::JSON_FAIL;
		r.fail_at = bad;
		d.fkind = FAIL_DECODE;
		d.field[0] = '\0';
		snprintf(d.reason, sizeof(d.reason), "malformed JSON: %s",
			 simdjson::error_message(r.jerr));
		return r;
	}
	r.trunc = std::min(stream.truncated_bytes(), len);
	return r;
}

/* ---------------------------------------------------------------------- */
/* The canonical-line fast path                                            */

/*
 * How a segment is decoded with the fast path on (parse_segment).
 *
 * Lines are offered to xp_fast_scan() one by one; an accepted line is
 * interned and linked by fast_commit() as decode_one() would, so the
 * capture holds the same events (a repeated tail links the run it linked
 * the first time, where decode_one() might make a new equal one).  A line
 * it declines goes to simdjson (parse_segment_slow) on its own, and after
 * repeated declines the next 2, 4, 8 ... lines with it, so a stream that
 * is not canonical costs a few declined scans per segment and is then
 * decoded in large simdjson batches.
 *
 * Errors.  simdjson validates a batch before decoding any of it, so which
 * error a stream gets depends on what else its batch holds (a malformed
 * line after an unknown field wins over it).  Rather than imitate that,
 * any failure inside a segment decoded this way -- a declined line that
 * simdjson rejects, a mixed target, running out of memory -- undoes the
 * segment (mixed_mark / mixed_undo: the capture's lengths and identity,
 * the decoder's counts) and decodes it again with simdjson alone, which
 * reports exactly the error it always did.  Failures end the decode, so
 * this costs nothing when the input is good.
 *
 * Why the pieces agree with one simdjson pass when nothing fails: the fast
 * path accepts only whole valid documents ended by '\n', so every piece
 * handed to simdjson starts between documents, outside any string, at a
 * UTF-8 boundary: simdjson's first stage finds the same structure in the
 * piece as in the whole batch, and its documents are the same.  A piece
 * whose last document runs past it (pretty-printed documents) makes the
 * rest of the segment one simdjson piece.  Only where a batch is cut is
 * decided over more than one document: simdjson searches back from the
 * batch's end for the last boundary between two documents, and checks
 * UTF-8 only in a batch with a complete document; so the piece with the
 * segment's cut document, when it holds nothing else, is decoded again
 * together with the two pieces before it (see the end of the loop).
 * tests/fuzz/fuzz_event_fastpath.cc compares the two paths on every input.
 */
struct mixed_mark {
	size_t count, nattrs, nargs, keys;
	bool has_pid, has_start_time, count_only, over_limit, pid_set, start_set;
	uint32_t pid;
	uint64_t process_start_time, observed, pid_set_off, start_set_off;
};

mixed_mark mixed_take(const decoder &d)
{
	const struct xp_capture *c = d.c;
	mixed_mark m;

	m.count = c->count;
	m.nattrs = c->nattrs;
	m.nargs = c->nargs;
	m.keys = d.keys.size();
	m.has_pid = c->has_pid;
	m.pid = c->pid;
	m.has_start_time = c->has_start_time;
	m.process_start_time = c->process_start_time;
	m.count_only = d.count_only;
	m.over_limit = d.over_limit;
	m.observed = d.observed;
	m.pid_set = d.pid_set;
	m.pid_set_off = d.pid_set_off;
	m.start_set = d.start_set;
	m.start_set_off = d.start_set_off;
	return m;
}

void mixed_undo(decoder &d, const mixed_mark &m)
{
	struct xp_capture *c = d.c;

	c->count = m.count;
	c->nattrs = m.nattrs;
	c->nargs = m.nargs;
	c->has_pid = m.has_pid;
	c->pid = m.pid;
	c->has_start_time = m.has_start_time;
	c->process_start_time = m.process_start_time;
	d.keys.resize(m.keys);
	d.count_only = m.count_only;
	d.over_limit = m.over_limit;
	d.observed = m.observed;
	d.pid_set = m.pid_set;
	d.pid_set_off = m.pid_set_off;
	d.start_set = m.start_set;
	d.start_set_off = m.start_set_off;
	d.fkind = FAIL_NONE;
	d.reason[0] = d.field[0] = '\0';
	d.depth = 0;
	/* the runs they name may be gone (content is compared anyway) */
	memset(d.arg_rc, 0, sizeof(d.arg_rc));
	memset(d.attr_rc, 0, sizeof(d.attr_rc));
	if (d.fs)
		xp_fast_state_uncommit(d.fs.get());
}

/* A string of an accepted line, interned as get_opt_str_id() would. */
bool fast_str_id(decoder &d, int slot, const struct xp_fast_str &s, xp_str_t *out)
{
	*out = 0;
	if (!s.p)
		return true;
	if (!s.esc) {
		*out = intern_cached(d, slot, std::string_view(s.p, s.n));
		return true;
	}
	xpc_buf_reset(&d.tmp);
	if (xpc_buf_reserve(&d.tmp, (size_t)s.n + 1))
		return false;
	*out = intern_cached(d, slot,
			     std::string_view(d.tmp.data, xp_fast_unescape(&s, d.tmp.data)));
	return true;
}

/* decode_arguments() for an accepted line's parts (not in count-only
 * mode): the same interning, table and sharing. */
int fast_args(decoder &d, const struct xp_fast_parts &pt, struct xp_host_part *h)
{
	h->args_count = 0;
	h->args_first = 0;
	for (unsigned i = 0; i < pt.nargs; i++) {
		const struct xp_fast_arg &fa = pt.args[i];
		struct xp_arg a;
		long idx;

		memset(&a, 0, sizeof(a));
		a.index = fa.index;
		if (!fast_str_id(d, IC_ABI_TYPE, fa.abi_type, &a.abi_type))
			return fail_nomem(d);
		if (fa.value)
			a.value = intern_value(d, fa.value, fa.value_len);
		if (!fast_str_id(d, IC_READ_ERROR, fa.read_error, &a.read_error))
			return fail_nomem(d);
		if (d.c->nargs >= UINT32_MAX)
			return fail(d, "the capture holds too many arguments");
		idx = xp_capture_add_arg(d.c, &a);
		if (idx < 0)
			return fail_nomem(d);
		if (h->args_count == 0)
			h->args_first = (uint32_t)idx;
		h->args_count++;
	}
	if (h->args_count)
		h->args_first = share_args(d, h->args_first, h->args_count);
	return 0;
}

/* decode_attributes() for an accepted line's parts (not in count-only
 * mode) */
int fast_attrs(decoder &d, const struct xp_fast_parts &pt, struct xp_event *e)
{
	e->attrs_count = 0;
	e->attrs_first = 0;
	for (unsigned i = 0; i < pt.nattrs; i++) {
		const struct xp_fast_attr &fa = pt.attrs[i];
		xp_str_t vid = intern_value(d, fa.value, fa.value_len);
		long idx;

		if (d.c->nattrs >= UINT32_MAX)
			return fail(d, "the capture holds too many attributes");
		idx = xp_capture_add_attr(
			d.c, intern_cached(d, IC_ATTR_KEY, std::string_view(fa.key, fa.key_len)),
			vid);
		if (idx < 0)
			return fail_nomem(d);
		if (e->attrs_count == 0)
			e->attrs_first = (uint32_t)idx;
		e->attrs_count++;
	}
	if (e->attrs_count)
		e->attrs_first = share_attrs(d, e->attrs_first, e->attrs_count);
	return 0;
}

/* The string ids, argument list and attribute map of an accepted line's
 * parts, in decode_one()'s order. */
int fast_parts(decoder &d, const struct xp_fast_parts &pt, struct xp_event *e)
{
	bool ok = true;

	if (e->flags & XP_EVF_HOST) {
		struct xp_host_part *h = &e->host;

		ok = fast_str_id(d, IC_BINARY_PATH, pt.str[XP_FS_BINARY_PATH], &h->binary_path) &&
		     fast_str_id(d, IC_BUILD_ID, pt.str[XP_FS_BUILD_ID], &h->build_id) &&
		     fast_str_id(d, IC_SYMBOL, pt.str[XP_FS_SYMBOL], &h->symbol) &&
		     fast_str_id(d, IC_SYMBOL_DEMANGLED, pt.str[XP_FS_SYMBOL_DEMANGLED],
				 &h->symbol_demangled);
		if (ok && pt.nargs && fast_args(d, pt, h))
			return -1;
	}
	if (ok && (e->flags & XP_EVF_CUDA))
		ok = fast_str_id(d, IC_KERNEL_NAME, pt.str[XP_FS_KERNEL_NAME],
				 &e->cuda.kernel_name) &&
		     fast_str_id(d, IC_KERNEL_NAME_MANGLED, pt.str[XP_FS_KERNEL_NAME_MANGLED],
				 &e->cuda.kernel_name_mangled);
	if (ok && (e->flags & XP_EVF_NVTX))
		ok = fast_str_id(d, IC_NVTX_NAME, pt.str[XP_FS_NVTX_NAME], &e->nvtx.name);
	if (!ok)
		return fail_nomem(d);
	if (pt.nattrs && fast_attrs(d, pt, e))
		return -1;
	return 0;
}

/*
 * decode_one() for a line the fast path accepted: the same event and
 * failures.  A line whose tail the scanner had kept takes what the tail
 * became the first time: the same bytes would intern to the same ids, and
 * an equal argument list or attribute map may link the same run (sharing
 * it is what decode_one does when it can).
 */
int fast_commit(decoder &d, const struct xp_fast_event &fe)
{
	struct xp_fast_tail *t = fe.tail;
	struct xp_capture *c = d.c;
	struct xp_event *e = nullptr;
	bool retained = false;

	if (!d.count_only) {
		int rc = 0;

		e = xp_capture_add(c, &rc);
		if (e)
			retained = true;
		else if (rc == -E2BIG)
			d.count_only = true;
		else
			return fail_nomem(d);
	}
	if (!retained) {
		d.over_limit = true; /* this one is counted, not kept */
		e = &d.scratch;
	}
	*e = fe.ev;
	if (retained) {
		if (!t) {
			if (fast_parts(d, fe.pt, e))
				goto fail;
		} else if (t->committed && t->cgen == d.fs->cgen) {
			e->host.binary_path = t->str_id[XP_FS_BINARY_PATH];
			e->host.build_id = t->str_id[XP_FS_BUILD_ID];
			e->host.symbol = t->str_id[XP_FS_SYMBOL];
			e->host.symbol_demangled = t->str_id[XP_FS_SYMBOL_DEMANGLED];
			e->host.args_first = t->args_first;
			e->host.args_count = t->args_count;
			e->cuda.kernel_name = t->str_id[XP_FS_KERNEL_NAME];
			e->cuda.kernel_name_mangled = t->str_id[XP_FS_KERNEL_NAME_MANGLED];
			e->nvtx.name = t->str_id[XP_FS_NVTX_NAME];
			e->attrs_first = t->attrs_first;
			e->attrs_count = t->attrs_count;
		} else {
			if (fast_parts(d, t->pt, e))
				goto fail;
			t->str_id[XP_FS_BINARY_PATH] = e->host.binary_path;
			t->str_id[XP_FS_BUILD_ID] = e->host.build_id;
			t->str_id[XP_FS_SYMBOL] = e->host.symbol;
			t->str_id[XP_FS_SYMBOL_DEMANGLED] = e->host.symbol_demangled;
			t->args_first = e->host.args_first;
			t->args_count = e->host.args_count;
			t->str_id[XP_FS_KERNEL_NAME] = e->cuda.kernel_name;
			t->str_id[XP_FS_KERNEL_NAME_MANGLED] = e->cuda.kernel_name_mangled;
			t->str_id[XP_FS_NVTX_NAME] = e->nvtx.name;
			t->attrs_first = e->attrs_first;
			t->attrs_count = e->attrs_count;
			t->committed = true;
			t->cgen = d.fs->cgen;
		}
	}
	if (check_target(d, e))
		goto fail;
	if (c->strings.failed) {
		fail_nomem(d);
		goto fail;
	}
	d.observed++;
	return 0;
fail:
	if (retained)
		xp_capture_pop(c);
	return -1;
}

/* The fast path over a segment (see above); any failure is reported as a
 * DECODE_FAIL without details: parse_segment decodes the segment again. */
seg_result parse_segment_mixed(decoder &d, simdjson::dom::parser &parser, const char *buf,
			       size_t len, uint64_t seg_off)
{
	seg_result r;
	const char *p = buf, *end = buf + len, *mark_from = buf;
	size_t batch_lines = 1;
	/* marks taken before the last pieces (see the end of the segment) */
	struct piece_mark {
		mixed_mark m;
		const char *at;
		uint64_t no;
	} ring[3];
	unsigned nmarks = 0;
	uint64_t pieces = 0;
	auto mark = [&](const char *at, uint64_t no) {
		ring[nmarks++ % 3] = { mixed_take(d), at, no };
	};

	/* pieces from the start of the last two complete lines on are marked */
	{
		const char *q = end;

		for (int k = 0; k < 3 && q > buf; k++) {
			const char *nl = (const char *)memrchr(buf, '\n', (size_t)(q - buf));

			if (!nl) {
				q = buf;
				break;
			}
			q = nl;
		}
		mark_from = q > buf ? q + 1 : buf;
	}

	while (p < end) {
		uint64_t no;
		bool marked = false;
		size_t n;

		if (*p == '\n') { /* blank line: whitespace between documents */
			p++;
			continue;
		}
		no = pieces++;
		if (p >= mark_from) {
			mark(p, no);
			marked = true;
		}
		n = xp_fast_scan(d.fs.get(), p, end, &d.fe);
		if (n) {
			d.cur_off = seg_off + (uint64_t)(p - buf);
			if (fast_commit(d, d.fe)) {
				r.status = seg_result::DECODE_FAIL;
				return r;
			}
			d.n_fast++;
			p += n;
			batch_lines = 1;
			continue;
		}
		d.n_declined++;
		if (!marked)
			mark(p, no);

		/* this line, and more after repeated declines, to simdjson */
		const char *e = p;
		for (size_t k = 0; k < batch_lines && e < end; k++) {
			const char *nl = (const char *)memchr(e, '\n', (size_t)(end - e));

			e = nl ? nl + 1 : end;
		}
		uint64_t docs = d.observed;
		seg_result s = parse_segment_slow(d, parser, p, (size_t)(e - p),
						  seg_off + (uint64_t)(p - buf));

		if (s.status == seg_result::OK && s.trunc && e < end) {
			/* a document runs past the piece: the rest in one */
			p = e - s.trunc;
			mark(p, pieces++);
			docs = d.observed;
			s = parse_segment_slow(d, parser, p, (size_t)(end - p),
					       seg_off + (uint64_t)(p - buf));
			e = end;
		}
		if (s.status != seg_result::OK)
			return s;
		if (s.trunc && d.observed == docs && p != buf) {
			/*
			 * The segment's cut document, alone in its piece.  Where
			 * simdjson cuts a batch is found by going back from its
			 * end to the last boundary between two documents: in the
			 * whole segment that search goes on before the piece
			 * (when the piece starts with a ',', it takes the
			 * document before it along), and simdjson checks UTF-8
			 * over a batch only when it holds a complete document.
			 * So decode the two pieces before it again together with
			 * it: between the two there is a boundary, and everything
			 * is decided inside.
			 */
			const piece_mark &last = ring[(nmarks - 1) % 3];
			const piece_mark &back = ring[(nmarks - 3) % 3];

			if (nmarks < 3 || back.no + 2 != last.no) {
				r.status = seg_result::DECODE_FAIL;
				return r;
			}
			p = back.at;
			mixed_undo(d, back.m);
			docs = d.observed;
			s = parse_segment_slow(d, parser, p, (size_t)(end - p),
					       seg_off + (uint64_t)(p - buf));
			if (s.status != seg_result::OK ||
			    (s.trunc && d.observed == docs && p != buf)) {
				r.status = seg_result::DECODE_FAIL;
				return r;
			}
		}
		if (e == end) {
			r.trunc = s.trunc;
			return r;
		}
		p = e;
		batch_lines = std::min<size_t>(batch_lines * 2, (size_t)1 << 20);
	}
	return r;
}

/*
 * Decode the whole documents of buf[0..len) (padded) into d.c: through
 * the fast path when it is on, else (and to report a failure) with
 * simdjson alone.
 */
seg_result parse_segment(decoder &d, simdjson::dom::parser &parser, const char *buf, size_t len,
			 uint64_t seg_off)
{
	seg_result r;

	/* xp_fast_scan's bound: a '\n' ends the segment, or a NUL follows
	 * it (the chunk's zeroed padding) */
	if (!d.fast || len == 0 || !(buf[len - 1] == '\n' || buf[len] == '\0'))
		return parse_segment_slow(d, parser, buf, len, seg_off);
	if (!d.fs) {
		d.fs.reset(new struct xp_fast_state);
		xp_fast_state_init(d.fs.get());
	}
	mixed_mark m = mixed_take(d);
	r = parse_segment_mixed(d, parser, buf, len, seg_off);
	if (r.status != seg_result::OK) {
		mixed_undo(d, m);
		d.n_reruns++;
		r = parse_segment_slow(d, parser, buf, len, seg_off);
	}
	g_stat_fast_lines.fetch_add(d.n_fast, std::memory_order_relaxed);
	g_stat_declined.fetch_add(d.n_declined, std::memory_order_relaxed);
	g_stat_reruns.fetch_add(d.n_reruns, std::memory_order_relaxed);
	d.n_fast = d.n_declined = d.n_reruns = 0;
	return r;
}

/*
 * The second half of a chunk, decoded by a helper thread into a private
 * capture (own strings, attributes, arguments) and appended to the real
 * one afterwards, in order.  The helper sees the capture's identity as it
 * was before the chunk; identity first set inside the half is checked at
 * the merge, at the offset of the event that set it, which is where a
 * sequential decode would have failed.
 *
 * One job serves every chunk: its capture is emptied between halves but
 * keeps its strings (and the decoder its caches), so the strings of a
 * stream are interned into it once, not once per chunk, and ids[] maps
 * them into the real capture once.
 */
struct half_job {
	decoder d;
	struct xp_capture lc;
	simdjson::dom::parser &parser; /* the helper's, kept across chunks */
	const char *buf = nullptr;
	size_t len = 0;
	uint64_t seg_off = 0;
	seg_result res;
	std::vector<xp_str_t> ids; /* lc string id -> d.c's, 0: not mapped yet */
	std::vector<uint32_t> arg_runs, attr_runs; /* lc run -> d.c run, this half */

	explicit half_job(simdjson::dom::parser &p) : parser(p)
	{
		xp_capture_init(&lc, 0);
		d.c = &lc;
		d.in_stream = true;
	}
	~half_job()
	{
		xp_capture_free(&lc);
	}
	half_job(const half_job &) = delete;
	half_job &operator=(const half_job &) = delete;

	/* Start a half after @main's events: nothing decoded, identity as
	 * main's capture has it now. */
	void reset(const decoder &main)
	{
		lc.count = 0;
		lc.nattrs = 0;
		lc.nargs = 0;
		lc.has_pid = main.c->has_pid;
		lc.pid = main.c->pid;
		lc.has_start_time = main.c->has_start_time;
		lc.process_start_time = main.c->process_start_time;
		d.name = main.name;
		d.fast = main.fast;
		d.count_only = main.count_only;
		d.observed = 0;
		d.over_limit = false;
		d.fkind = FAIL_NONE;
		d.reason[0] = d.field[0] = '\0';
		d.depth = 0;
		d.keys.clear();
		d.pid_set = d.start_set = false;
		d.pid_set_off = d.start_set_off = 0;
		/* runs of the previous half are gone */
		memset(d.arg_rc, 0, sizeof(d.arg_rc));
		memset(d.attr_rc, 0, sizeof(d.attr_rc));
		if (d.fs)
			xp_fast_state_uncommit(d.fs.get());
		res = seg_result();
	}

	void run()
	{
		try {
			res = parse_segment(d, parser, buf, len, seg_off);
		} catch (...) {
			res.status = seg_result::DECODE_FAIL;
			res.fail_at = 0;
			d.fkind = FAIL_NOMEM;
		}
	}

	/* merge_half() on the helper thread: merge_rc */
	int merge_rc = 0;
	void merge_into(decoder *main);

	/* lc's string @id in the real capture @c */
	xp_str_t map(struct xp_capture *c, xp_str_t id)
	{
		if (!id)
			return 0;
		if (id >= ids.size())
			ids.resize((size_t)lc.strings.count, 0);
		if (!ids[id])
			ids[id] = xp_capture_intern_n(c, xp_strtab_get(&lc.strings, id),
						      xp_strtab_len(&lc.strings, id));
		return ids[id];
	}
};

/* Joins a thread when the scope ends, exceptions included. */
struct joiner {
	std::thread &t;
	~joiner()
	{
		if (t.joinable())
			t.join();
	}
};

/*
 * Append the helper's events to d.c (bounded: counted once full).  The
 * helper's argument lists and attribute maps are shared runs already, so
 * each run is copied (and shared) once per half, and every event using
 * it links the copy.
 */
int merge_half(decoder &d, half_job &job)
{
	struct xp_capture *c = d.c;
	const struct xp_capture *lc = &job.lc;

	job.arg_runs.assign(lc->nargs, UINT32_MAX);
	job.attr_runs.assign(lc->nattrs, UINT32_MAX);
	for (size_t i = 0; i < lc->count; i++) {
		const struct xp_event *s = &lc->events[i];
		struct xp_event *e = nullptr;
		int rc = 0;

		if (!d.count_only) {
			e = xp_capture_add(c, &rc);
			if (!e && rc != -E2BIG)
				return fail_nomem(d);
			if (!e)
				d.count_only = true;
		}
		d.observed++;
		if (!e) {
			d.over_limit = true;
			continue;
		}
		*e = *s;
		e->host.binary_path = job.map(c, s->host.binary_path);
		e->host.build_id = job.map(c, s->host.build_id);
		e->host.symbol = job.map(c, s->host.symbol);
		e->host.symbol_demangled = job.map(c, s->host.symbol_demangled);
		e->cuda.kernel_name = job.map(c, s->cuda.kernel_name);
		e->cuda.kernel_name_mangled = job.map(c, s->cuda.kernel_name_mangled);
		e->nvtx.name = job.map(c, s->nvtx.name);
		e->attrs_first = 0;
		if (s->attrs_count) {
			uint32_t &run = job.attr_runs[s->attrs_first];

			if (run == UINT32_MAX) {
				for (uint32_t k = 0; k < s->attrs_count; k++) {
					const struct xp_attr *a = &lc->attrs[s->attrs_first + k];
					long idx = xp_capture_add_attr(c, job.map(c, a->key),
								       job.map(c, a->value));

					if (idx < 0)
						return fail_nomem(d);
					if (k == 0)
						e->attrs_first = (uint32_t)idx;
				}
				run = share_attrs(d, e->attrs_first, e->attrs_count);
			}
			e->attrs_first = run;
		}
		e->host.args_first = 0;
		if (s->host.args_count) {
			uint32_t &run = job.arg_runs[s->host.args_first];

			if (run == UINT32_MAX) {
				for (uint32_t k = 0; k < s->host.args_count; k++) {
					struct xp_arg a = lc->args[s->host.args_first + k];
					long idx;

					a.abi_type = job.map(c, a.abi_type);
					a.value = job.map(c, a.value);
					a.read_error = job.map(c, a.read_error);
					idx = xp_capture_add_arg(c, &a);
					if (idx < 0)
						return fail_nomem(d);
					if (k == 0)
						e->host.args_first = (uint32_t)idx;
				}
				run = share_args(d, e->host.args_first, e->host.args_count);
			}
			e->host.args_first = run;
		}
		if (c->strings.failed)
			return fail_nomem(d);
	}
	/* events the helper only counted (the capture was full before) */
	if (job.d.observed > lc->count) {
		d.observed += job.d.observed - lc->count;
		d.over_limit = true;
	}
	return 0;
}

void half_job::merge_into(decoder *main)
{
	try {
		merge_rc = merge_half(*main, *this);
	} catch (...) {
		main->fkind = FAIL_NOMEM;
		merge_rc = -1;
	}
}

/*
 * Identity the helper set inside its half, against the real capture.
 * Returns -1 with the failure in d and its stream offset in *off.
 */
int check_half_identity(decoder &d, half_job &job, uint64_t *off)
{
	struct xp_capture *c = d.c;
	const struct xp_capture *lc = &job.lc;

	if (job.d.pid_set && lc->has_pid) {
		if (!c->has_pid) {
			c->has_pid = true;
			c->pid = lc->pid;
		} else if (c->pid != lc->pid) {
			d.fkind = FAIL_MIXED_PID;
			d.mixed_a = c->pid;
			d.mixed_b = lc->pid;
			*off = job.d.pid_set_off;
			return -1;
		}
	}
	if (job.d.start_set && lc->has_start_time) {
		if (!c->has_start_time) {
			c->has_start_time = true;
			c->process_start_time = lc->process_start_time;
		} else if (c->process_start_time != lc->process_start_time) {
			d.fkind = FAIL_MIXED_START;
			d.mixed_a = lc->pid;
			d.start_a = c->process_start_time;
			d.start_b = lc->process_start_time;
			*off = job.d.start_set_off;
			return -1;
		}
	}
	return 0;
}

/* Chunks at least this large are decoded by two threads. */
constexpr size_t XP_PAR_MIN = 1u << 20;

/*
 * Where a chunk is cut for the two threads, as a share of it for this
 * thread: besides its part, this thread pays the page faults of the
 * capture's event array as it grows (the helper's capture is reused),
 * and reads the next chunk while the helper merges (measured on the
 * 2-vCPU build VM: 0.45 balances the two).  A constant, not a measured
 * balance: where the cut falls decides which error a bad chunk reports
 * first, and that must not depend on timing.
 */
constexpr double XP_SPLIT_SHARE = 0.45;

/*
 * The chunk loop.  Invariant at the top of each round: buf[0..carry) holds
 * the bytes of a document the previous chunk cut, and buf_off is their
 * offset in the stream.
 *
 * Two threads: a chunk of at least XP_PAR_MIN bytes is cut at the first
 * newline after its middle.  This thread decodes the first part into the
 * capture while a helper decodes the second into a private capture that
 * is then appended.  A newline is never inside a JSON string, so in a
 * one-document-per-line stream the cut is a document boundary; if the
 * first part ends inside a document (multi-line documents), the helper's
 * work is dropped and the stream is decoded by this thread alone from
 * there on.  Errors are reported in stream order either way.
 */
int decode_stream(decoder &d, source &s, struct xp_error *err)
{
	size_t cap = g_test_chunk_bytes ? g_test_chunk_bytes : XP_CHUNK_BYTES;
	size_t par_min = g_test_chunk_bytes ? 2 : XP_PAR_MIN;
	size_t carry = 0;
	uint64_t buf_off = 0, lines_before = 0;
	char *buf;
	/* one parser per thread, reused for every chunk: a parser's first
	 * use of a size allocates and faults in its index */
	simdjson::dom::parser parser, helper_parser;
	location loc;
	int rc = 0;
	bool eof = false, par_ok = true;
	decoder *fd = &d; /* the decoder whose failure is reported */

	if (!g_test_chunk_bytes && s.size_hint && s.size_hint < cap)
		cap = std::max<size_t>((size_t)s.size_hint + 1, 4096);
	buf = (char *)malloc(cap + XP_JSON_PADDING);
	if (!buf) {
		d.fkind = FAIL_NOMEM;
		return raise(d, loc, err);
	}
	parser.threaded = false;
	helper_parser.threaded = false;
	std::unique_ptr<half_job> job; /* the helper's, kept across chunks */
	bool ahead = false; /* the next chunk's bytes are read already: ahead_n */
	ssize_t ahead_n = 0;
	while (!eof) {
		/* one chunk (8 MiB, some 30,000 events) between checks */
		if (xpc_cancel_signo()) {
			rc = xp_error_cancelled(err, d.name);
			goto out;
		}
		ssize_t n = ahead ? ahead_n : src_fill(s, buf + carry, cap - carry);
		size_t len, consumed, trunc, split = 0;
		seg_result r;
		uint64_t fail_off = 0;

		ahead = false;
		if (n < 0) {
			d.fkind = FAIL_READ;
			d.read_errno = (int)-n;
			rc = raise(d, loc, err);
			goto out;
		}
		len = carry + (size_t)n;
		eof = len < cap;
		if (len == 0)
			break;
		memset(buf + len, 0, XP_JSON_PADDING);

		if (par_ok && len >= par_min) {
			size_t at = (size_t)((double)len * XP_SPLIT_SHARE);
			const char *nl = (const char *)memchr(buf + at, '\n', len - at);

			if (nl && (size_t)(nl - buf) + 1 < len)
				split = (size_t)(nl - buf) + 1;
		}
		if (split) {
			if (!job)
				job.reset(new half_job(helper_parser));
			job->reset(d);
			job->buf = buf + split;
			job->len = len - split;
			job->seg_off = buf_off + split;
			std::thread t;

			try {
				t = std::thread(&half_job::run, job.get());
			} catch (const std::system_error &) {
				/* no thread: decode alone */
				job.reset();
				split = 0;
			}
			if (split) {
				joiner j{ t };

				r = parse_segment(d, parser, buf, split, buf_off);
			}
		}
		if (!split)
			r = parse_segment(d, parser, buf, len, buf_off);

		if (r.status != seg_result::OK) {
			fd = &d;
			fail_off = buf_off + r.fail_at;
			goto fail;
		}
		if (split && r.trunc) {
			/* the cut fell inside a document: the rest alone, from now on */
			size_t a = split - r.trunc;

			par_ok = false;
			job.reset();
			r = parse_segment(d, parser, buf + a, len - a, buf_off + a);
			if (r.status != seg_result::OK) {
				fd = &d;
				fail_off = buf_off + a + r.fail_at;
				goto fail;
			}
			trunc = r.trunc;
		} else if (split) {
			if (check_half_identity(d, *job, &fail_off)) {
				fd = &d;
				goto fail;
			}
			if (job->res.status != seg_result::OK) {
				fd = &job->d;
				fail_off = job->seg_off + job->res.fail_at;
				goto fail;
			}
			trunc = job->res.trunc;
			consumed = len - trunc;
			if (!eof && consumed && (s.seekable || s.fd < 0)) {
				/*
				 * The helper merges its half while this thread
				 * reads the next chunk behind the cut document
				 * (the merge does not read the buffer; errors find
				 * their line without it from a file or memory).
				 */
				std::thread t;

				memmove(buf, buf + consumed, trunc);
				try {
					t = std::thread(&half_job::merge_into, job.get(), &d);
				} catch (const std::system_error &) {
					job->merge_into(&d);
				}
				{
					joiner j{ t };

					ahead_n = src_fill(s, buf + trunc, cap - trunc);
					ahead = true;
				}
				if (job->merge_rc) {
					fd = &d;
					fail_off = job->seg_off;
					goto fail;
				}
				carry = trunc;
				buf_off += consumed;
				continue;
			}
			if (merge_half(d, *job)) {
				fd = &d;
				fail_off = job->seg_off;
				goto fail;
			}
		} else {
			trunc = r.trunc;
		}
		consumed = len - trunc;
		if (trunc && eof) {
			size_t a = consumed;

			while (a < len && (buf[a] == ' ' || buf[a] == '\t' || buf[a] == '\r' ||
					   buf[a] == '\n'))
				a++;
			d.fkind = FAIL_DECODE;
			d.field[0] = '\0';
			if (a < len && buf[a] != '{' && buf[a] != '[')
				snprintf(d.reason, sizeof(d.reason),
					 "malformed JSON: unexpected character '%c'",
					 buf[a] >= 0x20 && buf[a] < 0x7f ? buf[a] : '?');
			else
				snprintf(d.reason, sizeof(d.reason),
					 "truncated document at end of input");
			fd = &d;
			fail_off = buf_off + consumed;
			goto fail;
		}
		if (consumed == 0 && trunc == cap) {
			/* one document fills the buffer: grow it */
			char *nb;

			if (cap >= XP_MAX_DOC) {
				d.fkind = FAIL_DECODE;
				d.field[0] = '\0';
				snprintf(d.reason, sizeof(d.reason),
					 "document is larger than %zu MiB", XP_MAX_DOC >> 20);
				fd = &d;
				fail_off = buf_off;
				goto fail;
			}
			cap = std::min(cap * 2, XP_MAX_DOC);
			nb = (char *)realloc(buf, cap + XP_JSON_PADDING);
			if (!nb) {
				d.fkind = FAIL_NOMEM;
				rc = raise(d, loc, err);
				goto out;
			}
			buf = nb;
			carry = len;
			continue;
		}
		if (!s.seekable && s.fd >= 0)
			lines_before += count_newlines(buf, consumed);
		if (trunc)
			memmove(buf, buf + consumed, trunc);
		carry = trunc;
		buf_off += consumed;
		continue;
fail:
		loc.known = true;
		loc.offset = fail_off;
		loc.line = 1 + lines_upto(s, loc.offset, lines_before, buf_off, buf);
		rc = raise(*fd, loc, err);
		goto out;
	}
out:
	free(buf);
	return rc;
}

int finish_counts(decoder &d, unsigned flags, struct xp_decode_stats *stats, struct xp_error *err)
{
	if (stats) {
		stats->observed = d.observed;
		stats->over_limit = d.over_limit;
	}
	if (d.over_limit && !(flags & XP_DECODE_DEFER_LIMIT))
		return xp_error_event_limit(err, d.name, d.observed, d.c->max_events);
	return 0;
}

/* The fast path is on unless a test turned it off, or the environment
 * (XPROBE_DECODE_NO_FASTPATH set to anything but "" or "0"). */
bool fast_path_enabled()
{
	const char *v;

	if (g_test_fast_mode >= 0)
		return g_test_fast_mode != 0;
	v = secure_getenv("XPROBE_DECODE_NO_FASTPATH");
	return !v || !v[0] || (v[0] == '0' && !v[1]);
}

int run_stream(source &s, const char *name, struct xp_capture *c, unsigned flags,
	       struct xp_decode_stats *stats, struct xp_error *err)
{
	decoder d;
	int rc;

	d.c = c;
	d.name = name ? name : "input";
	d.in_stream = true;
	d.fast = fast_path_enabled();
	d.count_only = (flags & XP_DECODE_COUNT_ONLY) != 0;
	rc = decode_stream(d, s, err);
	if (stats) {
		stats->observed = d.observed;
		stats->over_limit = d.over_limit;
	}
	if (rc)
		return rc;
	return finish_counts(d, flags, stats, err);
}

/* ---------------------------------------------------------------------- */
/* Host-capture documents                                                  */

int decode_host_capture(decoder &d, const char *buf, size_t len, struct xp_error *err)
{
	simdjson::dom::parser parser;
	simdjson::dom::object o;
	simdjson::error_code jerr;
	element root, f_el[HC__COUNT];
	location loc; /* unknown inside one big document */
	uint32_t seen = 0;
	uint64_t captured = 0, dropped = 0, probe_id = 0, pid = 0, start_time = 0;
	bool ok = false, timed_out = false, limit = false;
	long ev_index = -1;
	int hint = 0;
	struct xp_capture *c = d.c;

	parser.threaded = false;
	if (len > simdjson::SIMDJSON_MAXSIZE_BYTES) {
		fail(d, "host capture is larger than %zu bytes",
		     (size_t)simdjson::SIMDJSON_MAXSIZE_BYTES);
		return raise(d, loc, err);
	}
	jerr = parser.parse((const uint8_t *)buf, len, false).get(root);
	if (jerr) {
		/* one good document followed by more: say so */
		simdjson::dom::document_stream st;
		size_t ndocs = 0;

		if (!parser.parse_many((const uint8_t *)buf, len, len).get(st)) {
			for (auto it = st.begin(); it != st.end() && ndocs < 2; ++it) {
				element e;

				if ((*it).get(e))
					break;
				ndocs++;
			}
		}
		if (ndocs > 1)
			fail(d, "a host-capture document must be the only document of its file");
		else
			fail(d, "malformed JSON: %s", simdjson::error_message(jerr));
		return raise(d, loc, err);
	}
	if (root.type() != element_type::OBJECT) {
		fail(d, "expected a HostCaptureResult object, found %s", type_name(root.type()));
		return raise(d, loc, err);
	}
	o = root.get_object().value_unsafe();
	for (auto it = o.begin(); it != o.end(); ++it) {
		std::string_view k = it.key();
		int f = find_field(hc_fields, HC__COUNT, k, hint);

		if (f < 0) {
			fail_key(d, k, "unknown");
			return raise(d, loc, err);
		}
		if (seen & (1u << f)) {
			fail_key(d, k, "duplicate");
			return raise(d, loc, err);
		}
		seen |= 1u << f;
		hint = f + 1;
		f_el[f] = it.value();
	}
	for (int f = 0; f < HC__COUNT; f++)
		if ((HC_REQUIRED & (1u << f)) && !(seen & (1u << f))) {
			fail_key(d, { hc_fields[f].name, hc_fields[f].len }, "missing");
			return raise(d, loc, err);
		}

		/* scalars, in declaration order */
#define FIELD(id) path_push p_##id(d, std::string_view(hc_fields[id].name, hc_fields[id].len))
	{
		FIELD(HC_SCHEMA_VERSION);
		if (check_version(d, f_el[HC_SCHEMA_VERSION]))
			return raise(d, loc, err);
	}
	{
		FIELD(HC_OK);
		if (get_bool(d, f_el[HC_OK], &ok))
			return raise(d, loc, err);
		if (!ok) {
			fail(d, "a host capture with ok false is not a completed capture");
			return raise(d, loc, err);
		}
	}
	{
		FIELD(HC_SESSION_ID);
		std::string_view s;

		if (get_str(d, f_el[HC_SESSION_ID], &s))
			return raise(d, loc, err);
	}
	{
		FIELD(HC_TARGET);
		simdjson::dom::object t;
		uint32_t tseen = 0;
		int th = 0;

		if (get_obj(d, f_el[HC_TARGET], &t, "a TargetIdentity"))
			return raise(d, loc, err);
		for (auto it = t.begin(); it != t.end(); ++it) {
			std::string_view k = it.key();
			int f = find_field(target_fields, TG__COUNT, k, th);

			if (f < 0) {
				fail_key(d, k, "unknown");
				return raise(d, loc, err);
			}
			if (tseen & (1u << f)) {
				fail_key(d, k, "duplicate");
				return raise(d, loc, err);
			}
			tseen |= 1u << f;
			th = f + 1;
			path_push p(d, k);
			if (f == TG_PID) {
				if (get_uint(d, it.value(), UINT32_MAX,
					     "an unsigned 32-bit integer", &pid))
					return raise(d, loc, err);
			} else if (get_u64(d, it.value(), &start_time)) {
				return raise(d, loc, err);
			}
		}
		for (int f = 0; f < TG__COUNT; f++)
			if (!(tseen & (1u << f))) {
				fail_key(d, { target_fields[f].name, target_fields[f].len },
					 "missing");
				return raise(d, loc, err);
			}
	}
	{
		FIELD(HC_PROBE_ID);
		if (get_uint(d, f_el[HC_PROBE_ID], UINT32_MAX, "an unsigned 32-bit integer",
			     &probe_id))
			return raise(d, loc, err);
	}
	{
		FIELD(HC_CAPTURED);
		if (get_u64(d, f_el[HC_CAPTURED], &captured))
			return raise(d, loc, err);
	}
	{
		FIELD(HC_DROPPED);
		if (get_u64(d, f_el[HC_DROPPED], &dropped))
			return raise(d, loc, err);
	}
	{
		FIELD(HC_TIMED_OUT);
		if (get_bool(d, f_el[HC_TIMED_OUT], &timed_out))
			return raise(d, loc, err);
	}
	if (seen & (1u << HC_RECORD_LIMIT_REACHED)) {
		FIELD(HC_RECORD_LIMIT_REACHED);
		if (get_bool(d, f_el[HC_RECORD_LIMIT_REACHED], &limit))
			return raise(d, loc, err);
	}
	if (f_el[HC_EVENTS].type() != element_type::ARRAY) {
		FIELD(HC_EVENTS);
		fail(d, "expected an array of Event, found %s", type_name(f_el[HC_EVENTS].type()));
		return raise(d, loc, err);
	}

	/* the target: the capture's identity, checked against earlier inputs */
	{
		struct xp_event t;

		memset(&t, 0, sizeof(t));
		t.pid = (uint32_t)pid;
		t.process_start_time = start_time;
		t.flags = XP_EVF_START_TIME;
		if (check_target(d, &t))
			return raise(d, loc, err);
	}

	/* the events */
	{
		FIELD(HC_EVENTS);
		simdjson::dom::array arr = f_el[HC_EVENTS].get_array().value_unsafe();
		size_t i = 0;

		for (element x : arr) {
			path_push p(d, i);

			if (!(i % XPC_CANCEL_EVERY) && xpc_cancel_signo())
				return xp_error_cancelled(err, d.name);
			ev_index = (long)i;
			if (decode_one(d, x))
				return raise(d, loc, err, ev_index);
			i++;
		}
	}
#undef FIELD
	if (captured != d.observed) {
		path_push p(d, std::string_view("captured"));
		fail(d,
		     "host capture is inconsistent: captured is %" PRIu64
		     " but events holds %" PRIu64,
		     captured, d.observed);
		xp_error_detail_u64(err, "captured", captured);
		xp_error_detail_u64(err, "events", d.observed);
		return raise(d, loc, err);
	}
	c->dropped += dropped;
	if (limit)
		c->record_limit_reached = true;
	(void)timed_out;
	(void)probe_id;
	return 0;
}

int run_host(const char *buf, size_t len, const char *name, struct xp_capture *c, unsigned flags,
	     struct xp_decode_stats *stats, struct xp_error *err)
{
	decoder d;
	int rc;

	d.c = c;
	d.name = name ? name : "input";
	d.count_only = (flags & XP_DECODE_COUNT_ONLY) != 0;
	rc = decode_host_capture(d, buf, len, err);
	if (stats) {
		stats->observed = d.observed;
		stats->over_limit = d.over_limit;
	}
	if (rc)
		return rc;
	return finish_counts(d, flags, stats, err);
}

int nomem(struct xp_error *err, const char *name)
{
	return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
			    "failed to decode %s: out of memory", name ? name : "input");
}

} // namespace

/* ====================================================================== */
/* The entry points, reached through struct xp_json_api                  */

static void jd_decode_test_chunk_bytes(size_t bytes)
{
	g_test_chunk_bytes = bytes;
}

static void jd_decode_test_fastpath(int mode)
{
	g_test_fast_mode = mode < 0 ? -1 : mode != 0;
}

static void jd_decode_test_fast_stats(struct xp_decode_fast_stats *out)
{
	out->fast_lines = g_stat_fast_lines.exchange(0);
	out->declined = g_stat_declined.exchange(0);
	out->reruns = g_stat_reruns.exchange(0);
}

static int jd_decode_test_fast_line(const char *line, size_t len, struct xp_capture *c)
{
	try {
		std::unique_ptr<decoder> d(new decoder);
		std::vector<char> buf(len + 1 + XP_JSON_PADDING, '\0');
		size_t n;

		d->c = c;
		d->name = "line";
		d->in_stream = true;
		d->fs.reset(new struct xp_fast_state);
		xp_fast_state_init(d->fs.get());
		if (len)
			memcpy(buf.data(), line, len);
		buf[len] = '\n';
		n = xp_fast_scan(d->fs.get(), buf.data(), buf.data() + len + 1, &d->fe);
		if (n != len + 1)
			return 0;
		return fast_commit(*d, d->fe) ? -1 : 1;
	} catch (...) {
		return -1;
	}
}

static int jd_decode_event_stream_fd_ex(int fd, const char *prefix, size_t prefix_len,
					const char *name, struct xp_capture *c, unsigned flags,
					struct xp_decode_stats *stats, struct xp_error *err)
{
	try {
		source s;
		struct stat st;

		s.fd = fd;
		s.prefix = prefix;
		s.prefix_len = prefix ? prefix_len : 0;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			off_t pos = lseek(fd, 0, SEEK_CUR);

			if (pos >= 0 && (uint64_t)pos >= s.prefix_len) {
				s.seekable = true;
				s.file_base = pos - (off_t)s.prefix_len;
				if (st.st_size > s.file_base)
					s.size_hint = (uint64_t)(st.st_size - s.file_base);
			}
		}
		return run_stream(s, name, c, flags, stats, err);
	} catch (...) {
		return nomem(err, name);
	}
}

static int jd_decode_host_capture_padded(const char *buf, size_t len, const char *name,
					 struct xp_capture *c, unsigned flags,
					 struct xp_decode_stats *stats, struct xp_error *err)
{
	try {
		return run_host(buf, len, name, c, flags, stats, err);
	} catch (...) {
		return nomem(err, name);
	}
}

static int jd_decode_event_stream(const char *data, size_t len, const char *name,
				  struct xp_capture *c, struct xp_error *err)
{
	try {
		source s;

		s.mem = data ? data : "";
		s.mem_len = data ? len : 0;
		s.size_hint = s.mem_len;
		return run_stream(s, name, c, 0, nullptr, err);
	} catch (...) {
		return nomem(err, name);
	}
}

/* --- xp_jdoc ----------------------------------------------------------- */

struct xp_jdoc {
	simdjson::dom::parser parser;
	simdjson::padded_string text;
	element root;
};

static_assert(sizeof(element) <= sizeof(xp_jval::opaque), "xp_jval too small");
static_assert(std::is_trivially_copyable<element>::value, "element must be copyable");
static_assert(2 * sizeof(simdjson::dom::object::iterator) <= sizeof(xp_jiter::opaque),
	      "xp_jiter too small");
static_assert(std::is_trivially_copyable<simdjson::dom::object::iterator>::value,
	      "object iterator must be copyable");

static struct xp_jval jval_of(element e)
{
	struct xp_jval v;

	memset(&v, 0, sizeof(v));
	memcpy(v.opaque, &e, sizeof(e));
	return v;
}

static element elem_of(struct xp_jval v)
{
	element e;

	memcpy((void *)&e, v.opaque, sizeof(e));
	return e;
}

static struct xp_jdoc *jd_jdoc_parse(const char *data, size_t len, char *why, size_t why_size)
{
	try {
		xp_jdoc *d = new (std::nothrow) xp_jdoc;
		simdjson::error_code e;

		if (!d) {
			snprintf(why, why_size, "out of memory");
			return nullptr;
		}
		d->parser.threaded = false;
		d->text = simdjson::padded_string(data ? data : "", data ? len : 0);
		if (len && !d->text.data()) {
			delete d;
			snprintf(why, why_size, "out of memory");
			return nullptr;
		}
		e = d->parser.parse(d->text).get(d->root);
		if (e) {
			snprintf(why, why_size, "malformed JSON: %s", simdjson::error_message(e));
			delete d;
			return nullptr;
		}
		return d;
	} catch (...) {
		snprintf(why, why_size, "out of memory");
		return nullptr;
	}
}

static void jd_jdoc_free(struct xp_jdoc *d)
{
	delete d;
}

static struct xp_jval jd_jdoc_root(const struct xp_jdoc *d)
{
	return jval_of(d->root);
}

static enum xp_jtype jd_jval_type(struct xp_jval v)
{
	switch (elem_of(v).type()) {
	case element_type::ARRAY:
		return XP_J_ARRAY;
	case element_type::OBJECT:
		return XP_J_OBJECT;
	case element_type::INT64:
		return XP_J_INT;
	case element_type::UINT64:
		return XP_J_UINT;
	case element_type::DOUBLE:
		return XP_J_DOUBLE;
	case element_type::STRING:
		return XP_J_STRING;
	case element_type::BOOL:
		return XP_J_BOOL;
	case element_type::NULL_VALUE:
		return XP_J_NULL;
	}
	return XP_J_NULL;
}

static bool jd_jval_bool(struct xp_jval v)
{
	bool b = false;

	if (elem_of(v).get_bool().get(b))
		return false;
	return b;
}

static int64_t jd_jval_i64(struct xp_jval v)
{
	int64_t x = 0;

	if (elem_of(v).get_int64().get(x))
		return 0;
	return x;
}

static uint64_t jd_jval_u64(struct xp_jval v)
{
	uint64_t x = 0;

	if (elem_of(v).get_uint64().get(x))
		return 0;
	return x;
}

static double jd_jval_f64(struct xp_jval v)
{
	double x = 0;

	if (elem_of(v).get_double().get(x))
		return 0;
	return x;
}

static const char *jd_jval_str(struct xp_jval v, size_t *len)
{
	std::string_view s;

	if (elem_of(v).get_string().get(s)) {
		if (len)
			*len = 0;
		return nullptr;
	}
	if (len)
		*len = s.size();
	return s.data(); /* simdjson NUL-terminates DOM strings */
}

static void jd_jobj_iter(struct xp_jval obj, struct xp_jiter *it)
{
	simdjson::dom::object o;

	memset(it, 0, sizeof(*it));
	if (elem_of(obj).get_object().get(o))
		return; /* not an object: an empty iteration */
	simdjson::dom::object::iterator b = o.begin(), e = o.end();

	memcpy((char *)it->opaque, (const void *)&b, sizeof(b));
	memcpy((char *)it->opaque + sizeof(b), (const void *)&e, sizeof(e));
}

static bool jd_jobj_next(struct xp_jiter *it, const char **key, size_t *klen, struct xp_jval *val)
{
	simdjson::dom::object::iterator b, e;

	/* a zeroed state (not an object) compares equal to itself: no members */
	memcpy((void *)&b, (const char *)it->opaque, sizeof(b));
	memcpy((void *)&e, (const char *)it->opaque + sizeof(b), sizeof(e));
	if (!(b != e))
		return false;
	std::string_view k = b.key();
	*key = k.data();
	*klen = k.size();
	*val = jval_of(b.value());
	++b;
	memcpy((char *)it->opaque, (const void *)&b, sizeof(b));
	return true;
}

static void jd_share_cancel(volatile sig_atomic_t *flag)
{
	xpc_cancel_share(flag);
}

extern "C" const struct xp_json_api xp_json_builtin = {
	XP_JSON_API_ABI,
	sizeof(struct xp_json_api),
	jd_decode_event_stream_fd_ex,
	jd_decode_host_capture_padded,
	jd_decode_event_stream,
	jd_decode_test_chunk_bytes,
	jd_decode_test_fastpath,
	jd_decode_test_fast_stats,
	jd_decode_test_fast_line,
	jd_jdoc_parse,
	jd_jdoc_free,
	jd_jdoc_root,
	jd_jval_type,
	jd_jval_bool,
	jd_jval_i64,
	jd_jval_u64,
	jd_jval_f64,
	jd_jval_str,
	jd_jobj_iter,
	jd_jobj_next,
	jd_share_cancel,
};
