/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_html.c - the self-contained HTML report (html_report.h): the
 * page template with the embedded stylesheet and renderer
 * (html_assets.h), the document --json prints, and what the page draws
 * that the document cannot carry: the histogram of every pair, the
 * threads, and a bounded timeline.
 *
 * Why the CLI computes the histogram: above XP_HTML_TIMELINE_MAX pairs the
 * page holds only a sample of them, and a histogram recomputed from a
 * sample would not be exact.  So every count is taken here from all pairs,
 * in one pass, and the page only draws it.  The page never sees more than
 * XP_HTML_TIMELINE_MAX pairs or events and XP_HTML_EVIDENCE_MAX full
 * evidence pairs, so its size is bounded (about 1.5 MB whatever the
 * capture's size) and so is its load time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/atomic_file.h"
#include "../../common/buf.h"
#include "../../common/json.h"
#include "../../common/readfile.h"
#include "../inventory/explain_pairs.h"
#include "../model/event_json.h"
#include "html_assets.h"
#include "html_report.h"
#include "render_histogram.h"

#define NBUCKETS 65 /* xp_html_log2_bucket(): 0 and 2^0 .. 2^63 */

/* --- first-seen indexes of 64-bit keys --------------------------------- */

/*
 * Keys (a thread's pid and tid, an event kind's type and name) numbered
 * in first-seen order, found through an open-addressing table: slot value
 * = index + 1 (0 = empty), at most half the slots used.  Both the lanes
 * and the kinds are looked up once per pair or event, so this is the
 * all-pairs pass's inner step: no linear search, whatever the capture.
 */
struct keyidx {
	uint64_t *keys; /* by index */
	size_t n, cap;
	uint32_t *slot;
	size_t nslots; /* power of two */
};

static size_t key_hash(uint64_t k, size_t mask)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & mask;
}

static int keyidx_grow(struct keyidx *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 64, i;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		size_t h = key_hash(t->keys[i], n - 1);

		while (s[h])
			h = (h + 1) & (n - 1);
		s[h] = (uint32_t)(i + 1);
	}
	free(t->slot);
	t->slot = s;
	t->nslots = n;
	return 0;
}

/* The index of @key, added if new (*added); or -ENOMEM. */
static long keyidx_get(struct keyidx *t, uint64_t key, bool *added)
{
	size_t h;

	*added = false;
	if ((t->n + 1) * 2 > t->nslots && keyidx_grow(t))
		return -ENOMEM;
	h = key_hash(key, t->nslots - 1);
	while (t->slot[h]) {
		if (t->keys[t->slot[h] - 1] == key)
			return (long)(t->slot[h] - 1);
		h = (h + 1) & (t->nslots - 1);
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		uint64_t *v = realloc(t->keys, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->keys = v;
		t->cap = cap;
	}
	t->keys[t->n] = key;
	t->slot[h] = (uint32_t)(t->n + 1);
	*added = true;
	return (long)t->n++;
}

static void keyidx_free(struct keyidx *t)
{
	free(t->keys);
	free(t->slot);
}

/* Grow @v (elements of @size, *@cap of them) to hold index @i. */
static int grow_to(void **v, size_t *cap, size_t size, size_t i)
{
	size_t n = *cap ? *cap : 16;
	void *p;

	if (i < *cap)
		return 0;
	while (n <= i)
		n *= 2;
	p = realloc(*v, n * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = n;
	return 0;
}

/* --- one lane per thread ------------------------------------------------ */

struct lane {
	uint32_t pid, tid;
	uint64_t count, min, max, sum; /* of the pairs that start on it */
};

struct lanes {
	struct keyidx idx; /* (pid << 32 | tid) */
	struct lane *v; /* by index */
	size_t cap;
};

/* The lane of (@pid, @tid), added if new: its index, or -ENOMEM. */
static long lane_of(struct lanes *l, uint32_t pid, uint32_t tid)
{
	bool added;
	long i = keyidx_get(&l->idx, (uint64_t)pid << 32 | tid, &added);

	if (i < 0 || !added)
		return i;
	if (grow_to((void **)&l->v, &l->cap, sizeof(*l->v), (size_t)i))
		return -ENOMEM;
	l->v[i] = (struct lane){ .pid = pid, .tid = tid, .min = UINT64_MAX };
	return i;
}

static void lanes_free(struct lanes *l)
{
	keyidx_free(&l->idx);
	free(l->v);
}

/* --- event kinds: (event_type, name) as the timeline labels them ------- */

struct kind {
	uint8_t event_type;
	xp_str_t name; /* 0 = none */
	bool raw; /* name is JSON text (an attribute value), not a string */
	uint64_t count;
};

struct kinds {
	struct keyidx idx; /* (event_type << 32 | name) */
	struct kind *v; /* by index */
	size_t cap;
	xp_str_t api_name_key; /* "cuda_api_name" in the capture, or 0 */
};

/*
 * The name an event is shown by: the demangled symbol, the symbol, the
 * CUDA API name attribute, the kernel name, the NVTX range name, or none.
 * A string id is either a plain string or an attribute's JSON text, never
 * both (the text of a string attribute has its quotes), so the id alone
 * tells which: the kind's key need not hold @raw.
 */
static xp_str_t event_name(const struct xp_capture *c, const struct xp_event *e, xp_str_t api_key,
			   bool *raw)
{
	xp_str_t id;

	*raw = false;
	if (e->flags & XP_EVF_HOST) {
		if (e->host.symbol_demangled)
			return e->host.symbol_demangled;
		if (e->host.symbol)
			return e->host.symbol;
	}
	if (api_key && (id = xp_event_attr(c, e, api_key)) != 0) {
		const char *s = xp_capture_str(c, id);

		if (s && s[0] == '"') {
			*raw = true;
			return id;
		}
	}
	if ((e->flags & XP_EVF_CUDA) && e->cuda.kernel_name)
		return e->cuda.kernel_name;
	if ((e->flags & XP_EVF_NVTX) && e->nvtx.name)
		return e->nvtx.name;
	return 0;
}

/* The kind of @e, added if new: its index, or -ENOMEM. */
static long kind_of(struct kinds *k, const struct xp_capture *c, const struct xp_event *e)
{
	bool raw, added;
	xp_str_t name = event_name(c, e, k->api_name_key, &raw);
	long i = keyidx_get(&k->idx, (uint64_t)e->event_type << 32 | name, &added);

	if (i < 0 || !added)
		return i;
	if (grow_to((void **)&k->v, &k->cap, sizeof(*k->v), (size_t)i))
		return -ENOMEM;
	k->v[i] = (struct kind){ .event_type = e->event_type, .name = name, .raw = raw };
	return i;
}

static void kinds_free(struct kinds *k)
{
	keyidx_free(&k->idx);
	free(k->v);
}

/* --- the embedded JSON ------------------------------------------------- */

/*
 * Copy @json into @out so that it can sit inside a <script> element: no
 * "<" (so no "</script" and no "<!--"), ">" or "&" is left.  JSON has
 * these characters only inside strings, where \u003c is the same
 * character, so the text parses to the same value.
 */
static void put_script_json(struct xpc_buf *out, const char *json, size_t n)
{
	size_t i, from = 0;

	for (i = 0; i < n; i++) {
		const char *rep;

		switch (json[i]) {
		case '<':
			rep = "\\u003c";
			break;
		case '>':
			rep = "\\u003e";
			break;
		case '&':
			rep = "\\u0026";
			break;
		default:
			continue;
		}
		xpc_buf_append(out, json + from, i - from);
		xpc_buf_puts(out, rep);
		from = i + 1;
	}
	xpc_buf_append(out, json + from, n - from);
}

static void render_error_doc(struct xpc_json *w, const struct xp_error *err)
{
	xpc_json_obj_begin(w);
	xpc_json_kstr(w, "schema_version", XP_SCHEMA_VERSION);
	xpc_json_kbool(w, "ok", false);
	xpc_json_kobj_begin(w, "error");
	xp_error_render_fields(err, w);
	xpc_json_obj_end(w);
	xpc_json_obj_end(w);
}

/* The document --json prints, evidence capped (html_report.h). */
static void render_document(struct xpc_json *w, const struct xp_html_report *r)
{
	switch (r->kind) {
	case XP_HTML_MEASUREMENT: {
		struct xp_correlation corr = *r->result->corr;
		struct xp_measurement_view v = *r->result;

		if (corr.npairs > XP_HTML_EVIDENCE_MAX)
			corr.npairs = XP_HTML_EVIDENCE_MAX;
		v.corr = &corr;
		xp_render_measurement_json(w, &v);
		break;
	}
	case XP_HTML_MEASUREMENT_ERROR:
		render_error_doc(w, r->error);
		break;
	default:
		r->doc_type->json(w, r->doc);
		break;
	}
}

static const char *kind_name(enum xp_html_kind k)
{
	switch (k) {
	case XP_HTML_MEASUREMENT:
		return "measurement";
	case XP_HTML_MEASUREMENT_ERROR:
		return "measurement_error";
	case XP_HTML_CPU_SAMPLE:
		return "cpu_sample";
	case XP_HTML_SYSCALL_AGGREGATE:
		return "syscall_aggregate";
	case XP_HTML_AGGREGATE:
		return "aggregate";
	case XP_HTML_HISTOGRAM:
		return "histogram";
	}
	return "unknown";
}

/* Which of @total items the timeline draws: all up to the bound, else
 * item j = floor(j * total / XP_HTML_TIMELINE_MAX). */
static size_t drawn_count(size_t total)
{
	return total > XP_HTML_TIMELINE_MAX ? XP_HTML_TIMELINE_MAX : total;
}

static size_t drawn_index(size_t j, size_t total)
{
	if (total <= XP_HTML_TIMELINE_MAX)
		return j;
	return (size_t)(((unsigned __int128)j * total) / XP_HTML_TIMELINE_MAX);
}

/*
 * The timeline's sampling: counts, and the rule the page's note goes on
 * with after "the timeline draws N of T pairs, " -- what is drawn in
 * words first, then the formula with every symbol in it defined.
 */
static void put_sampling(struct xpc_json *w, const char *unit, size_t total)
{
	size_t n = drawn_count(total);
	char rule[700];

	xpc_json_kstr(w, "unit", unit);
	xpc_json_ku64(w, "total", total);
	xpc_json_ku64(w, "drawn", n);
	xpc_json_kbool(w, "sampled", n < total);
	if (n < total && strcmp(unit, "pair") == 0)
		snprintf(rule, sizeof(rule),
			 "spread evenly over all of them in start-time order. "
			 "As a formula: the drawn pair at position j is pair floor(j * %zu / %u) "
			 "of the evidence, where j is its position among the drawn pairs "
			 "(0 to %u) and the evidence's pairs are numbered from 0 in start-time "
			 "order.",
			 total, XP_HTML_TIMELINE_MAX, XP_HTML_TIMELINE_MAX - 1);
	else if (n < total)
		snprintf(rule, sizeof(rule),
			 "each event kind on each thread separately: a kind (event type and "
			 "name) on a thread gets a share of the drawn events in proportion to "
			 "its count, and its drawn events are spread evenly over its events in "
			 "capture order, so that every kind on every thread keeps its share "
			 "whatever the order the events came in. As a formula: a kind on a "
			 "thread with C events and a share of Q draws its events floor(j * C / "
			 "Q), where C is its number of events, Q is its share (the shares add "
			 "up to %u) and j is 0, 1, .. Q - 1, its events numbered from 0 in "
			 "capture order.",
			 XP_HTML_TIMELINE_MAX);
	xpc_json_kstr(w, "rule", n < total ? rule : NULL);
}

/*
 * The timeline's origin: t0_ns, also as a decimal string (a JavaScript
 * number holds 53 bits, a raw CUPTI timestamp 19 digits), and the clock
 * domain of the event it is the timestamp of.
 */
static void put_origin(struct xpc_json *w, uint64_t t0, const struct xp_event *at)
{
	char text[24];

	snprintf(text, sizeof(text), "%" PRIu64, t0);
	xpc_json_ku64(w, "t0_ns", t0);
	xpc_json_kstr(w, "t0_ns_text", text);
	xpc_json_kstr(w, "t0_clock", at ? xp_clock_domain_name(at->clock_domain) : NULL);
}

/*
 * The lanes and kinds a page lists: those the drawn items reference, so a
 * capture of a million threads or names lists at most two per drawn item
 * (the timeline's bound), not all of them.  remap[i] is entry i's index
 * in the list, -1 when it is not listed; remap_mark() marks the entries
 * @refs names, remap_number() numbers the marked ones in order.
 */
static long *remap_new(size_t n)
{
	long *m = malloc((n + 1) * sizeof(*m));
	size_t i;

	for (i = 0; m && i < n; i++)
		m[i] = -1;
	return m;
}

static void remap_mark(long *remap, const long *refs, size_t nrefs)
{
	size_t j;

	for (j = 0; j < nrefs; j++)
		remap[refs[j]] = 0;
}

static void remap_number(long *remap, size_t n)
{
	long next = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (remap[i] == 0)
			remap[i] = next++;
}

static void put_kinds(struct xpc_json *w, const struct xp_capture *c, const struct kinds *k,
		      const long *remap, bool counts)
{
	uint64_t other = 0;
	size_t i;

	xpc_json_karr_begin(w, "kinds");
	for (i = 0; i < k->idx.n; i++) {
		const struct kind *x = &k->v[i];

		if (remap[i] < 0) {
			other += x->count;
			continue;
		}
		xpc_json_obj_begin(w);
		xpc_json_kstr(w, "event_type", xp_event_type_name(x->event_type));
		if (!x->name)
			xpc_json_knull(w, "name");
		else if (x->raw)
			xpc_json_kraw(w, "name", xp_capture_str(c, x->name));
		else
			xpc_json_kstr(w, "name", xp_capture_str(c, x->name));
		if (counts)
			xpc_json_ku64(w, "events", x->count);
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
	xpc_json_ku64(w, "kinds_total", k->idx.n);
	if (counts)
		xpc_json_ku64(w, "events_of_unlisted_kinds", other);
}

static void put_lanes(struct xpc_json *w, const struct lanes *l, const long *remap, bool pairs)
{
	uint64_t other = 0;
	size_t i;

	xpc_json_karr_begin(w, "lanes");
	for (i = 0; i < l->idx.n; i++) {
		const struct lane *x = &l->v[i];

		if (remap[i] < 0) {
			other += x->count;
			continue;
		}
		xpc_json_obj_begin(w);
		xpc_json_ku64(w, "pid", x->pid);
		xpc_json_ku64(w, "tid", x->tid);
		xpc_json_ku64(w, pairs ? "pairs" : "events", x->count);
		if (pairs) {
			xpc_json_kopt_u64(w, "min_ns", x->count, x->min);
			xpc_json_kopt_u64(w, "max_ns", x->count, x->max);
			xpc_json_kopt_u64(w, "sum_ns", x->count, x->sum);
		}
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
	xpc_json_ku64(w, "lanes_total", l->idx.n);
	xpc_json_ku64(w, pairs ? "pairs_of_unlisted_lanes" : "events_of_unlisted_lanes", other);
}

/* The histogram of every pair: buckets from the first non-empty to the
 * last, the empty ones between them included. */
static void put_histogram(struct xpc_json *w, const struct xp_correlation *corr)
{
	uint64_t counts[NBUCKETS] = { 0 };
	unsigned lo = NBUCKETS, hi = 0, b;
	size_t i;

	for (i = 0; i < corr->npairs; i++)
		counts[xp_html_log2_bucket(corr->pairs[i].latency_ns)]++;
	for (b = 0; b < NBUCKETS; b++) {
		if (!counts[b])
			continue;
		if (lo == NBUCKETS)
			lo = b;
		hi = b;
	}
	xpc_json_kobj_begin(w, "histogram");
	xpc_json_kstr(w, "scheme", "log2");
	xpc_json_ku64(w, "total", corr->npairs);
	xpc_json_karr_begin(w, "buckets");
	for (b = lo; lo < NBUCKETS && b <= hi; b++) {
		xpc_json_obj_begin(w);
		xpc_json_ku64(w, "lower_ns", b ? 1ull << (b - 1) : 0);
		/* the top bucket's bound 2^64 does not fit: its upper is inclusive */
		xpc_json_ku64(w, "upper_ns", b == 0 ? 1 : b < 64 ? 1ull << b : UINT64_MAX);
		xpc_json_ku64(w, "count", counts[b]);
		xpc_json_obj_end(w);
	}
	xpc_json_arr_end(w);
	xpc_json_obj_end(w);
}

/* The pairs' lanes (statistics over every pair), kinds and timeline. */
/* --explain: what the page draws of the explanation (html_report.h). */
static void put_explain(struct xpc_json *w, const struct xp_explained *x)
{
	xpc_json_kobj_begin(w, "explain");
	xp_render_explain_parts_json(w, "total", &x->total);
	xpc_json_kobj_begin(w, "unexplained_pairs");
	for (int k = XP_EXP_OTHER_THREAD; k <= XP_EXP_GAP; k++)
		xpc_json_ku64(w, xp_ex_pair_status_name((enum xp_ex_pair_status)k),
			      x->unexplained[k]);
	xpc_json_obj_end(w);
	xp_render_explain_blocked_json(w, &x->ex);
	xp_render_explain_slowest_json(w, &x->ex, false);
	xpc_json_obj_end(w);
}

static int put_pairs(struct xpc_json *w, const struct xp_measurement_view *v,
		     const struct xp_explained *x)
{
	const struct xp_correlation *corr = v->corr;
	const struct xp_capture *c = v->capture;
	size_t n = drawn_count(corr->npairs), i, j;
	struct kinds k = { 0 };
	struct lanes l = { 0 };
	long *sk = NULL, *ek = NULL, *sl = NULL, *el = NULL, *lmap = NULL, *kmap = NULL;
	const struct xp_event *first = NULL; /* the event at t0 */
	uint64_t t0 = UINT64_MAX;
	int rc = -ENOMEM;

	k.api_name_key = xp_strtab_find(&c->strings, "cuda_api_name", strlen("cuda_api_name"));
	for (i = 0; i < corr->npairs; i++) {
		const struct xp_pair *p = &corr->pairs[i];
		const struct xp_event *s = &c->events[p->start];
		long li;
		struct lane *x;

		/* one load per pair from a capture of hundreds of MB: ask for
		 * the start event a few pairs ahead (halves this pass at 1M) */
		if (i + 16 < corr->npairs)
			__builtin_prefetch(&c->events[corr->pairs[i + 16].start]);
		li = lane_of(&l, s->pid, s->tid);
		if (li < 0)
			goto out;
		x = &l.v[li];
		x->count++;
		x->sum += p->latency_ns;
		if (p->latency_ns < x->min)
			x->min = p->latency_ns;
		if (p->latency_ns > x->max)
			x->max = p->latency_ns;
	}
	sk = calloc(n + 1, sizeof(*sk));
	ek = calloc(n + 1, sizeof(*ek));
	sl = calloc(n + 1, sizeof(*sl));
	el = calloc(n + 1, sizeof(*el));
	if (!sk || !ek || !sl || !el)
		goto out;
	for (j = 0; j < n; j++) {
		const struct xp_pair *p = &corr->pairs[drawn_index(j, corr->npairs)];
		const struct xp_event *s = &c->events[p->start], *e = &c->events[p->end];

		sk[j] = kind_of(&k, c, s);
		ek[j] = kind_of(&k, c, e);
		sl[j] = lane_of(&l, s->pid, s->tid);
		el[j] = lane_of(&l, e->pid, e->tid);
		if (sk[j] < 0 || ek[j] < 0 || sl[j] < 0 || el[j] < 0)
			goto out;
		if (s->timestamp_ns < t0) {
			t0 = s->timestamp_ns;
			first = s;
		}
		if (e->timestamp_ns < t0) {
			t0 = e->timestamp_ns;
			first = e;
		}
	}
	if (!n)
		t0 = 0;
	lmap = remap_new(l.idx.n);
	kmap = remap_new(k.idx.n);
	if (!lmap || !kmap)
		goto out;
	remap_mark(lmap, sl, n);
	remap_mark(lmap, el, n);
	remap_number(lmap, l.idx.n);
	remap_mark(kmap, sk, n);
	remap_mark(kmap, ek, n);
	remap_number(kmap, k.idx.n);
	put_histogram(w, corr);
	put_lanes(w, &l, lmap, true);
	put_kinds(w, c, &k, kmap, false);

	xpc_json_kobj_begin(w, "timeline");
	put_sampling(w, "pair", corr->npairs);
	put_origin(w, t0, first);
#define COLUMN(key, expr)                                                                     \
	do {                                                                                  \
		xpc_json_karr_begin(w, key);                                                  \
		for (j = 0; j < n; j++) {                                                     \
			const struct xp_pair *p = &corr->pairs[drawn_index(j, corr->npairs)]; \
			const struct xp_event *s = &c->events[p->start];                      \
			const struct xp_event *e = &c->events[p->end];                        \
			(void)s;                                                              \
			(void)e;                                                              \
			expr;                                                                 \
		}                                                                             \
		xpc_json_arr_end(w);                                                          \
	} while (0)
	COLUMN("pair", xpc_json_u64(w, drawn_index(j, corr->npairs)));
	COLUMN("lane", xpc_json_u64(w, (uint64_t)lmap[sl[j]]));
	COLUMN("end_lane", xpc_json_u64(w, (uint64_t)lmap[el[j]]));
	COLUMN("start", xpc_json_u64(w, s->timestamp_ns - t0));
	COLUMN("end", xpc_json_u64(w, e->timestamp_ns - t0));
	COLUMN("latency", xpc_json_u64(w, p->latency_ns));
	COLUMN("start_kind", xpc_json_u64(w, (uint64_t)kmap[sk[j]]));
	COLUMN("end_kind", xpc_json_u64(w, (uint64_t)kmap[ek[j]]));
	COLUMN("start_seq", xpc_json_u64(w, s->sequence));
	COLUMN("end_seq", xpc_json_u64(w, e->sequence));
	COLUMN("start_cpu", (s->flags & XP_EVF_CPU) ? xpc_json_u64(w, s->cpu) : xpc_json_null(w));
	COLUMN("end_cpu", (e->flags & XP_EVF_CPU) ? xpc_json_u64(w, e->cpu) : xpc_json_null(w));
	if (x) {
		/* each drawn pair's parts (null: not explained) */
		static const char *const part_key[XP_EX_NCOMP] = { "on_cpu", "runqueue",
								   "blocked_s", "blocked_d" };

		for (int k = 0; k < XP_EX_NCOMP; k++) {
			const struct xp_ex_pair *ep;

			COLUMN(part_key[k], (ep = &x->pairs[drawn_index(j, corr->npairs)],
					     ep->status == XP_EXP_EXPLAINED ?
						     xpc_json_u64(w, ep->comp[k]) :
						     xpc_json_null(w)));
		}
	}
#undef COLUMN
	xpc_json_obj_end(w);
	if (x)
		put_explain(w, x);
	rc = 0;
out:
	free(sk);
	free(ek);
	free(sl);
	free(el);
	free(lmap);
	free(kmap);
	kinds_free(&k);
	lanes_free(&l);
	return rc;
}

/* qsort's comparison of kinds by remainder (g_rem), largest first, then
 * by kind: the sort is not stable, the index makes it so. */
static const unsigned __int128 *g_rem;

static int by_remainder(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (g_rem[x] != g_rem[y])
		return g_rem[x] > g_rem[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * The events a failed capture's timeline draws, in capture order: all of
 * them up to XP_HTML_TIMELINE_MAX, else each stratum (an event kind on
 * one thread) separately, so that every kind on every thread is drawn in
 * proportion to its count whatever the order events came in (one stride
 * over alternating entries and exits drew only entries; one stride per
 * kind over three threads taking turns drew one thread): stratum s of C_s
 * events gets Q_s = floor(N * C_s / total) slots, the slots left go to
 * the strata with the largest remainders (spread evenly over strata whose
 * remainders tie), and stratum s draws its events floor(j * C_s / Q_s).
 * @ki, @li: each event's kind and lane.  Returns the count, or 0 when
 * memory runs out.
 */
static size_t drawn_events(const long *ki, const long *li, size_t count, size_t *out)
{
	size_t n = drawn_count(count), given = 0, i, j, ns, *order = NULL;
	size_t *quota = NULL, *seen = NULL, *total = NULL, got = 0;
	unsigned __int128 *rem = NULL;
	struct keyidx strata = { 0 };
	uint32_t *si = NULL;

	if (count <= n) {
		for (i = 0; i < count; i++)
			out[i] = i;
		return count;
	}
	si = calloc(count, sizeof(*si));
	if (!si)
		goto out;
	for (i = 0; i < count; i++) {
		bool added;
		long x = keyidx_get(&strata, (uint64_t)ki[i] << 32 | (uint64_t)li[i], &added);

		if (x < 0)
			goto out;
		si[i] = (uint32_t)x;
	}
	ns = strata.n;
	quota = calloc(ns + 1, sizeof(*quota));
	seen = calloc(ns + 1, sizeof(*seen));
	total = calloc(ns + 1, sizeof(*total));
	rem = calloc(ns + 1, sizeof(*rem));
	order = calloc(ns + 1, sizeof(*order));
	if (!quota || !seen || !total || !rem || !order)
		goto out;
	for (i = 0; i < count; i++)
		total[si[i]]++;
	for (i = 0; i < ns; i++) {
		unsigned __int128 prod = (unsigned __int128)n * total[i];

		quota[i] = (size_t)(prod / count);
		rem[i] = prod % count;
		given += quota[i];
		order[i] = i;
	}
	/* the strata by remainder, largest first, ties in first-seen order */
	g_rem = rem;
	qsort(order, ns, sizeof(*order), by_remainder);
	{
		size_t left = n - given, m = 0;

		/* the leftover slots over the strata in that order, evenly */
		for (j = 0; j < left && ns; j++) {
			size_t at = (size_t)(((unsigned __int128)j * ns) / left);

			if (at < m)
				at = m;
			if (at >= ns)
				break;
			quota[order[at]]++;
			m = at + 1;
		}
	}
	/* rem[] now counts each stratum's draws made: its next draw is its
	 * event floor(rem * C / Q) (strictly increasing, C >= Q) */
	memset(rem, 0, (ns + 1) * sizeof(*rem));
	for (i = 0; i < count; i++) {
		size_t s = si[i], c = total[s], q = quota[s];

		if (rem[s] < q && got < n &&
		    (size_t)((rem[s] * (unsigned __int128)c) / q) == seen[s]) {
			out[got++] = i;
			rem[s]++;
		}
		seen[s]++;
	}
out:
	keyidx_free(&strata);
	free(si);
	free(quota);
	free(seen);
	free(total);
	free(rem);
	free(order);
	return got;
}

/* A failure: what was captured (every event counted by kind and thread)
 * and a timeline of the events. */
static int put_capture(struct xpc_json *w, const struct xp_capture *c)
{
	size_t n = drawn_count(c->count), i, j;
	struct kinds k = { 0 };
	struct lanes l = { 0 };
	long *ki = NULL, *li = NULL, *kd = NULL, *ld = NULL, *kmap = NULL, *lmap = NULL;
	size_t *drawn = NULL;
	const struct xp_event *first = NULL; /* the event at t0 */
	uint64_t t0 = UINT64_MAX, host = 0;
	int rc = -ENOMEM;

	k.api_name_key = xp_strtab_find(&c->strings, "cuda_api_name", strlen("cuda_api_name"));
	ki = calloc(c->count + 1, sizeof(*ki));
	li = calloc(c->count + 1, sizeof(*li));
	if (!ki || !li)
		goto out;
	for (i = 0; i < c->count; i++) {
		const struct xp_event *e = &c->events[i];

		ki[i] = kind_of(&k, c, e);
		li[i] = lane_of(&l, e->pid, e->tid);
		if (ki[i] < 0 || li[i] < 0)
			goto out;
		k.v[ki[i]].count++;
		l.v[li[i]].count++;
		host += xp_event_is_host(e);
		if (e->timestamp_ns < t0) {
			t0 = e->timestamp_ns;
			first = e;
		}
	}
	if (!c->count)
		t0 = 0;
	/* the drawn events, and their kinds and lanes, listed (remap_new) */
	drawn = calloc(n + 1, sizeof(*drawn));
	kd = calloc(n + 1, sizeof(*kd));
	ld = calloc(n + 1, sizeof(*ld));
	kmap = remap_new(k.idx.n);
	lmap = remap_new(l.idx.n);
	if (!drawn || !kd || !ld || !kmap || !lmap)
		goto out;
	n = drawn_events(ki, li, c->count, drawn);
	if (!n && c->count)
		goto out; /* out of memory */
	for (j = 0; j < n; j++) {
		kd[j] = ki[drawn[j]];
		ld[j] = li[drawn[j]];
	}
	remap_mark(kmap, kd, n);
	remap_number(kmap, k.idx.n);
	remap_mark(lmap, ld, n);
	remap_number(lmap, l.idx.n);
	xpc_json_kobj_begin(w, "capture");
	xpc_json_ku64(w, "events", c->count);
	xpc_json_ku64(w, "host_events", host);
	xpc_json_ku64(w, "cuda_events", c->count - host);
	xpc_json_ku64(w, "dropped_records", c->dropped);
	xpc_json_kbool(w, "record_limit_reached", c->record_limit_reached);
	xpc_json_obj_end(w);
	put_lanes(w, &l, lmap, false);
	put_kinds(w, c, &k, kmap, true);
	xpc_json_kobj_begin(w, "timeline");
	put_sampling(w, "event", c->count);
	put_origin(w, t0, first);
	xpc_json_karr_begin(w, "event");
	for (j = 0; j < n; j++)
		xpc_json_u64(w, drawn[j]);
	xpc_json_arr_end(w);
	xpc_json_karr_begin(w, "lane");
	for (j = 0; j < n; j++)
		xpc_json_u64(w, (uint64_t)lmap[ld[j]]);
	xpc_json_arr_end(w);
	xpc_json_karr_begin(w, "time");
	for (j = 0; j < n; j++)
		xpc_json_u64(w, c->events[drawn[j]].timestamp_ns - t0);
	xpc_json_arr_end(w);
	xpc_json_karr_begin(w, "kind");
	for (j = 0; j < n; j++)
		xpc_json_u64(w, (uint64_t)kmap[kd[j]]);
	xpc_json_arr_end(w);
	xpc_json_karr_begin(w, "seq");
	for (j = 0; j < n; j++)
		xpc_json_u64(w, c->events[drawn[j]].sequence);
	xpc_json_arr_end(w);
	xpc_json_karr_begin(w, "cpu");
	for (j = 0; j < n; j++) {
		const struct xp_event *e = &c->events[drawn[j]];

		if (e->flags & XP_EVF_CPU)
			xpc_json_u64(w, e->cpu);
		else
			xpc_json_null(w);
	}
	xpc_json_arr_end(w);
	xpc_json_obj_end(w);
	rc = 0;
out:
	free(drawn);
	free(ki);
	free(li);
	free(kd);
	free(ld);
	free(kmap);
	free(lmap);
	kinds_free(&k);
	lanes_free(&l);
	return rc;
}

/* The "xprobe-report" block. */
static int render_meta(struct xpc_json *w, const struct xp_html_report *r)
{
	const struct xp_capture *c =
		r->kind == XP_HTML_MEASUREMENT ? r->result->capture : r->capture;
	const struct xp_host_collection *h =
		r->kind == XP_HTML_MEASUREMENT ? r->result->host : NULL;
	bool measurement = r->kind == XP_HTML_MEASUREMENT || r->kind == XP_HTML_MEASUREMENT_ERROR;
	int i, rc = 0;

	xpc_json_obj_begin(w);
	xpc_json_ku64(w, "report_version", 1);
	xpc_json_kstr(w, "generator", r->generator);
	xpc_json_kstr(w, "kind", kind_name(r->kind));
	xpc_json_karr_begin(w, "command");
	xpc_json_str(w, "xprobe");
	for (i = 0; i < r->argc; i++)
		xpc_json_str(w, r->argv[i]);
	xpc_json_arr_end(w);
	xpc_json_key(w, "target");
	if (r->has_target || (c && c->has_pid)) {
		bool st = r->has_target || c->has_start_time;

		xpc_json_obj_begin(w);
		xpc_json_ku64(w, "pid", r->has_target ? r->pid : c->pid);
		xpc_json_kopt_u64(w, "process_start_time", st,
				  r->has_target ? r->process_start_time : c->process_start_time);
		xpc_json_kstr(w, "source", r->has_target ? "live" : "input");
		xpc_json_obj_end(w);
	} else {
		xpc_json_null(w);
	}
	xpc_json_karr_begin(w, "inputs");
	for (size_t k = 0; k < r->ninputs; k++)
		xpc_json_str(w, r->inputs[k]);
	xpc_json_arr_end(w);
	xpc_json_key(w, "selectors");
	if (measurement) {
		xpc_json_obj_begin(w);
		xpc_json_kstr(w, "start", r->start_selector);
		xpc_json_kstr(w, "end", r->end_selector);
		xpc_json_kstr(w, "match_policy", r->match_policy);
		xpc_json_obj_end(w);
	} else {
		xpc_json_null(w);
	}
	xpc_json_key(w, "host_ring");
	if (h) {
		xpc_json_obj_begin(w);
		xpc_json_ku64(w, "record_capacity", h->record_capacity);
		xpc_json_ku64(w, "observed_records", h->observed_records);
		xpc_json_ku64(w, "retained_records", h->retained_records);
		xpc_json_ku64(w, "dropped_records", h->dropped_records);
		xpc_json_obj_end(w);
	} else {
		xpc_json_null(w);
	}
	if (r->kind == XP_HTML_MEASUREMENT) {
		size_t np = r->result->corr->npairs;

		xpc_json_kobj_begin(w, "evidence");
		xpc_json_ku64(w, "total", np);
		xpc_json_ku64(w, "embedded", np > XP_HTML_EVIDENCE_MAX ? XP_HTML_EVIDENCE_MAX : np);
		xpc_json_obj_end(w);
		rc = put_pairs(w, r->result, r->explained);
	} else if (r->kind == XP_HTML_MEASUREMENT_ERROR) {
		rc = put_capture(w, r->capture);
	}
	xpc_json_obj_end(w);
	return rc;
}

/*
 * The page: the template with its markers replaced, in order, by the
 * stylesheet, the two JSON blocks and the script.  A template without
 * every marker is a build defect (INTERNAL, not an export failure).
 */
static const char *const markers[] = { "@XPROBE_CSS@", "@XPROBE_DOCUMENT@", "@XPROBE_REPORT@",
				       "@XPROBE_JS@" };

static int build_page(struct xpc_buf *page, const struct xpc_buf *doc, const struct xpc_buf *meta)
{
	const char *t = xp_html_asset_template, *end = t + xp_html_asset_template_len;
	size_t m;

	for (m = 0; m < sizeof(markers) / sizeof(markers[0]); m++) {
		const char *at = strstr(t, markers[m]);

		if (!at || at > end)
			return -EINVAL;
		xpc_buf_append(page, t, (size_t)(at - t));
		switch (m) {
		case 0:
			xpc_buf_append(page, xp_html_asset_css, xp_html_asset_css_len);
			break;
		case 1:
			put_script_json(page, xpc_buf_str(doc), doc->len);
			break;
		case 2:
			put_script_json(page, xpc_buf_str(meta), meta->len);
			break;
		case 3:
			xpc_buf_append(page, xp_html_asset_js, xp_html_asset_js_len);
			break;
		}
		t = at + strlen(markers[m]);
	}
	xpc_buf_append(page, t, (size_t)(end - t));
	return xpc_buf_ok(page) ? 0 : -ENOMEM;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* As export.c's: @dest_mode is the st_mode of a refused destination. */
static int report_failed(struct xp_error *err, const char *path, int rc, unsigned dest_mode)
{
	char reason[256];

	xp_error_detail_str(err, "path", path);
	if (dest_mode && (rc == -XPC_EFTYPE || rc == -ELOOP || rc == -EISDIR)) {
		const char *type = xpc_file_type_name((mode_t)dest_mode);

		xp_error_detail_str(err, "file_type", type);
		xp_error_hint(
			err,
			"--report writes a new or regular file only and never replaces a %s; pass another path",
			type);
		return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false,
				    "failed to write %s: it exists and is a %s, not a regular file",
				    path, type);
	}
	xprobe_strerror(rc, reason, sizeof(reason));
	xp_error_hint(err, "check that the report's directory exists and is writable");
	return xp_error_set(err, XPROBE_E_TRACE_EXPORT_FAILED, false, "failed to write %s: %s",
			    path, reason);
}

int xp_html_report_write(const char *path, const struct xp_html_report *r, struct xp_error *err)
{
	struct xpc_buf doc = XPC_BUF_INIT, meta = XPC_BUF_INIT, page = XPC_BUF_INIT;
	struct xpc_atomic_file f = { .fd = -1 };
	struct xpc_json w;
	int rc;

	if (!path || !*path)
		return report_failed(err, "", -EINVAL, 0);
	rc = xpc_atomic_open(&f, path);
	if (rc)
		return report_failed(err, path, rc, f.dest_mode);
	xpc_json_init_buf(&w, &doc, 0);
	render_document(&w, r);
	rc = xpc_json_finish(&w);
	if (!rc) {
		xpc_json_init_buf(&w, &meta, 0);
		rc = render_meta(&w, r);
		if (rc && !w.err)
			w.err = rc;
		rc = xpc_json_finish(&w);
	}
	if (!rc) {
		rc = build_page(&page, &doc, &meta);
		if (rc == -EINVAL) {
			xpc_atomic_abort(&f);
			rc = xp_error_set(
				err, XPROBE_E_INTERNAL, false,
				"the HTML report's template lacks a marker (a build defect)");
			goto out;
		}
	}
	if (!rc)
		rc = write_all(f.fd, xpc_buf_str(&page), page.len);
	if (rc) {
		xpc_atomic_abort(&f);
		rc = report_failed(err, path, rc, 0);
		goto out;
	}
	rc = xpc_atomic_commit(&f);
	if (rc)
		rc = report_failed(err, path, rc, f.dest_mode);
out:
	xpc_buf_free(&doc);
	xpc_buf_free(&meta);
	xpc_buf_free(&page);
	return rc;
}
