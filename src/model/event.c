/* SPDX-License-Identifier: Apache-2.0 */
/*
 * event.c - enum names, the capture container, sort and merge.
 * Invariants are in event.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../../common/buf.h"
#include "../../common/json.h"
#include "event.h"

static const char *const source_names[XP_SRC__COUNT] = {
	"ebpf",
	"cupti_callback",
	"cupti_activity",
	"marker",
};

static const char *const event_type_names[XP_EV__COUNT] = {
	"host_function_entry",	"host_function_exit", "kernel_function_entry",
	"kernel_function_exit", "tracepoint",	      "syscall_entry",
	"syscall_exit",		"cuda_api_entry",     "cuda_api_exit",
	"gpu_kernel_start",	"gpu_kernel_end",     "gpu_memcpy_start",
	"gpu_memcpy_end",	"gpu_memset_start",   "gpu_memset_end",
	"nvtx_range_start",	"nvtx_range_end",     "marker",
};

static const char *const clock_names[XP_CLOCK__COUNT] = {
	"host_monotonic",
	"cupti",
	"cupti_normalized_to_host_monotonic",
};

static const char *const probe_kind_names[XP_PROBE__COUNT] = {
	"uprobe", "uretprobe", "kprobe", "kretprobe", "tracepoint", "syscall", "usdt",
};

static const char *const memcpy_names[XP_MEMCPY__COUNT] = {
	"HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "unknown",
};

static const char *const nvtx_kind_names[XP_NVTX__COUNT] = { "thread", "process" };

static int parse_name(const char *const *names, unsigned count, const char *s, size_t n)
{
	unsigned i;

	for (i = 0; i < count; i++)
		if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0)
			return (int)i;
	return -1;
}

#define NAME_FUNCS(fn, table, count)                       \
	const char *xp_##fn##_name(unsigned v)             \
	{                                                  \
		return v < (count) ? table[v] : "unknown"; \
	}                                                  \
	int xp_##fn##_parse(const char *s, size_t n)       \
	{                                                  \
		return parse_name(table, (count), s, n);   \
	}

NAME_FUNCS(source, source_names, XP_SRC__COUNT)
NAME_FUNCS(event_type, event_type_names, XP_EV__COUNT)
NAME_FUNCS(clock_domain, clock_names, XP_CLOCK__COUNT)
NAME_FUNCS(probe_kind, probe_kind_names, XP_PROBE__COUNT)
NAME_FUNCS(memcpy_kind, memcpy_names, XP_MEMCPY__COUNT)
NAME_FUNCS(nvtx_range_kind, nvtx_kind_names, XP_NVTX__COUNT)

uint64_t xp_capture_cuda_events(const struct xp_capture *c)
{
	uint64_t n = 0;

	for (size_t i = 0; i < c->count; i++)
		n += c->events[i].source != XP_SRC_EBPF;
	return n;
}

void xp_capture_init(struct xp_capture *c, size_t max_events)
{
	memset(c, 0, sizeof(*c));
	c->max_events = max_events;
	xp_strtab_init(&c->strings);
}

void xp_capture_free(struct xp_capture *c)
{
	if (c->events_map_len)
		munmap(c->events, c->events_map_len);
	else
		free(c->events);
	free(c->attrs);
	free(c->args);
	xp_strtab_free(&c->strings);
	memset(c, 0, sizeof(*c));
}

/*
 * A large bounded capture keeps its events in one reservation of
 * max_events slots: address space only (MAP_NORESERVE), filled in as
 * events arrive, in transparent huge pages where the kernel has them.
 * Growing a heap block by realloc instead faults in every 4 KiB page
 * separately, which on our VMs costs about 10 us each: half the time of
 * decoding a million-event capture went there (perf: 57,000 page faults,
 * 0.6 s of system time for 1.3 s in all).  Small bounds, unbounded
 * captures and a failed mmap keep the realloc path.
 */
#define EVENTS_MAP_MIN ((size_t)8 << 20)
#define EVENTS_MAP_ALIGN ((size_t)2 << 20)

static int reserve_events(struct xp_capture *c)
{
	size_t want, len;
	uint8_t *p, *start;

	if (!c->max_events || c->max_events > SIZE_MAX / sizeof(*c->events) / 2)
		return -1;
	want = c->max_events * sizeof(*c->events);
	if (want < EVENTS_MAP_MIN)
		return -1;
	want = (want + EVENTS_MAP_ALIGN - 1) & ~(EVENTS_MAP_ALIGN - 1);
	len = want + EVENTS_MAP_ALIGN;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
		 0);
	if (p == MAP_FAILED)
		return -1;
	/* keep the 2 MiB-aligned part, give the slack back */
	start = (uint8_t *)(((uintptr_t)p + EVENTS_MAP_ALIGN - 1) &
			    ~(uintptr_t)(EVENTS_MAP_ALIGN - 1));
	if (start > p)
		munmap(p, (size_t)(start - p));
	munmap(start + want, EVENTS_MAP_ALIGN - (size_t)(start - p)); /* never 0 */
	(void)madvise(start, want, MADV_HUGEPAGE); /* a hint */
	c->events = (struct xp_event *)start;
	c->cap = c->max_events;
	c->events_map_len = want;
	return 0;
}

struct xp_event *xp_capture_add(struct xp_capture *c, int *err)
{
	struct xp_event *e;

	if (c->max_events && c->count >= c->max_events) {
		*err = -E2BIG;
		return NULL;
	}
	if (!c->events)
		reserve_events(c); /* else the realloc path below */
	if (c->count == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;

		if (c->max_events && cap > c->max_events)
			cap = c->max_events;
		e = realloc(c->events, cap * sizeof(*e));
		if (!e) {
			*err = -ENOMEM;
			return NULL;
		}
		c->events = e;
		c->cap = cap;
	}
	e = &c->events[c->count++];
	memset(e, 0, sizeof(*e));
	return e;
}

void xp_capture_pop(struct xp_capture *c)
{
	if (c->count)
		c->count--;
}

long xp_capture_add_attr(struct xp_capture *c, xp_str_t key, xp_str_t value)
{
	if (!key || !value)
		return -ENOMEM;
	if (c->nattrs == c->attrs_cap) {
		size_t cap = c->attrs_cap ? c->attrs_cap * 2 : 256;
		struct xp_attr *a = realloc(c->attrs, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		c->attrs = a;
		c->attrs_cap = cap;
	}
	c->attrs[c->nattrs].key = key;
	c->attrs[c->nattrs].value = value;
	return (long)c->nattrs++;
}

long xp_capture_add_arg(struct xp_capture *c, const struct xp_arg *arg)
{
	if (c->nargs == c->args_cap) {
		size_t cap = c->args_cap ? c->args_cap * 2 : 256;
		struct xp_arg *a = realloc(c->args, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		c->args = a;
		c->args_cap = cap;
	}
	c->args[c->nargs] = *arg;
	return (long)c->nargs++;
}

xp_str_t xp_event_attr(const struct xp_capture *c, const struct xp_event *e, xp_str_t key)
{
	uint32_t i;

	for (i = 0; i < e->attrs_count; i++)
		if (c->attrs[e->attrs_first + i].key == key)
			return c->attrs[e->attrs_first + i].value;
	return 0;
}

static int link_attr(struct xp_capture *c, struct xp_event *e, xp_str_t k, xp_str_t v)
{
	long idx = xp_capture_add_attr(c, k, v);

	if (idx < 0)
		return (int)idx;
	if (e->attrs_count == 0)
		e->attrs_first = (uint32_t)idx;
	else if (e->attrs_first + e->attrs_count != (uint32_t)idx)
		return -EINVAL; /* attributes of one event must be contiguous */
	e->attrs_count++;
	return 0;
}

int xp_event_add_attr_str(struct xp_capture *c, struct xp_event *e, const char *key,
			  const char *value)
{
	struct xpc_buf b = XPC_BUF_INIT;
	xp_str_t k, v;

	xpc_buf_putc(&b, '"');
	xpc_json_escape(&b, value, strlen(value));
	xpc_buf_putc(&b, '"');
	if (!xpc_buf_ok(&b)) {
		xpc_buf_free(&b);
		return -ENOMEM;
	}
	k = xp_capture_intern(c, key);
	v = xp_capture_intern_n(c, b.data, b.len);
	xpc_buf_free(&b);
	return link_attr(c, e, k, v);
}

int xp_event_add_attr_u64(struct xp_capture *c, struct xp_event *e, const char *key, uint64_t value)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)value);

	return link_attr(c, e, xp_capture_intern(c, key), xp_capture_intern_n(c, tmp, (size_t)n));
}

static int cmp_ts(const void *a, const void *b)
{
	const struct xp_event *x = a, *y = b;

	if (x->timestamp_ns != y->timestamp_ns)
		return x->timestamp_ns < y->timestamp_ns ? -1 : 1;
	/* stability: sequence holds the original index during the sort */
	return x->sequence < y->sequence ? -1 : x->sequence > y->sequence;
}

int xp_capture_sort_and_sequence(struct xp_capture *c)
{
	size_t i;
	bool sorted = true;

	for (i = 0; i < c->count; i++) {
		c->events[i].sequence = i;
		if (i && c->events[i - 1].timestamp_ns > c->events[i].timestamp_ns)
			sorted = false;
	}
	if (!sorted) {
		qsort(c->events, c->count, sizeof(*c->events), cmp_ts);
		for (i = 0; i < c->count; i++)
			c->events[i].sequence = i;
	}
	return 0;
}

static bool host_same(const struct xp_capture *c, const struct xp_host_part *a,
		      const struct xp_host_part *b)
{
	uint32_t i;

	if (a->offset != b->offset || a->return_value != b->return_value ||
	    a->binary_path != b->binary_path || a->build_id != b->build_id ||
	    a->symbol != b->symbol || a->symbol_demangled != b->symbol_demangled ||
	    a->args_count != b->args_count || a->probe_kind != b->probe_kind ||
	    a->flags != b->flags)
		return false;
	for (i = 0; i < a->args_count; i++) {
		const struct xp_arg *x = &c->args[a->args_first + i],
				    *y = &c->args[b->args_first + i];

		if (x->abi_type != y->abi_type || x->value != y->value ||
		    x->read_error != y->read_error || x->index != y->index)
			return false;
	}
	return true;
}

bool xp_event_same(const struct xp_capture *c, const struct xp_event *a, const struct xp_event *b)
{
	uint32_t i;

	if (a->timestamp_ns != b->timestamp_ns || a->timestamp_raw != b->timestamp_raw ||
	    a->timestamp_error_ns != b->timestamp_error_ns ||
	    a->process_start_time != b->process_start_time || a->pid != b->pid ||
	    a->tid != b->tid || a->cpu != b->cpu || a->attrs_count != b->attrs_count ||
	    a->source != b->source || a->event_type != b->event_type ||
	    a->clock_domain != b->clock_domain || a->flags != b->flags)
		return false;
	/* zeroed when added, every field interned: compared as bytes */
	if (memcmp(&a->cuda, &b->cuda, sizeof(a->cuda)) ||
	    memcmp(&a->nvtx, &b->nvtx, sizeof(a->nvtx)))
		return false;
	if (!host_same(c, &a->host, &b->host))
		return false;
	for (i = 0; i < a->attrs_count; i++) {
		const struct xp_attr *x = &c->attrs[a->attrs_first + i],
				     *y = &c->attrs[b->attrs_first + i];

		if (x->key != y->key || x->value != y->value)
			return false;
	}
	return true;
}

void xp_capture_drop_duplicates(struct xp_capture *c)
{
	size_t i, j, out = 0, run;

	for (i = 0; i < c->count; i = run) {
		/* the run of events at one timestamp: duplicates can only be there */
		for (run = i + 1;
		     run < c->count && c->events[run].timestamp_ns == c->events[i].timestamp_ns;
		     run++)
			;
		for (j = i; j < run; j++) {
			size_t k;
			bool dup = false;

			for (k = i; k < j && !dup; k++)
				dup = c->events[k].input != c->events[j].input &&
				      c->events[k].sequence != UINT64_MAX &&
				      xp_event_same(c, &c->events[k], &c->events[j]);
			if (dup) {
				c->duplicates_dropped++;
				c->events[j].sequence = UINT64_MAX; /* dropped */
			}
		}
		for (j = i; j < run; j++) {
			if (c->events[j].sequence == UINT64_MAX)
				continue;
			if (out != j)
				c->events[out] = c->events[j];
			c->events[out].sequence = out;
			out++;
		}
	}
	c->count = out;
}

static xp_str_t reintern(struct xp_capture *dst, const struct xp_capture *src, xp_str_t id)
{
	if (!id)
		return 0;
	return xp_capture_intern_n(dst, xp_strtab_get(&src->strings, id),
				   xp_strtab_len(&src->strings, id));
}

int xp_capture_merge(struct xp_capture *dst, const struct xp_capture *src, uint32_t *mixed_pid)
{
	size_t i;
	int err = 0;

	for (i = 0; i < src->count; i++) {
		const struct xp_event *s = &src->events[i];
		struct xp_event *d;
		uint32_t k;

		if (dst->has_pid && s->pid != dst->pid) {
			if (mixed_pid)
				*mixed_pid = s->pid;
			return -EINVAL;
		}
		if (!dst->has_pid) {
			dst->has_pid = true;
			dst->pid = s->pid;
		}
		d = xp_capture_add(dst, &err);
		if (!d)
			return err;
		*d = *s;
		d->host.binary_path = reintern(dst, src, s->host.binary_path);
		d->host.build_id = reintern(dst, src, s->host.build_id);
		d->host.symbol = reintern(dst, src, s->host.symbol);
		d->host.symbol_demangled = reintern(dst, src, s->host.symbol_demangled);
		d->cuda.kernel_name = reintern(dst, src, s->cuda.kernel_name);
		d->cuda.kernel_name_mangled = reintern(dst, src, s->cuda.kernel_name_mangled);
		d->nvtx.name = reintern(dst, src, s->nvtx.name);
		d->attrs_count = 0;
		for (k = 0; k < s->attrs_count; k++) {
			const struct xp_attr *a = &src->attrs[s->attrs_first + k];

			err = link_attr(dst, d, reintern(dst, src, a->key),
					reintern(dst, src, a->value));
			if (err)
				return err;
		}
		d->host.args_count = 0;
		for (k = 0; k < s->host.args_count; k++) {
			struct xp_arg a = src->args[s->host.args_first + k];
			long idx;

			a.abi_type = reintern(dst, src, a.abi_type);
			a.value = reintern(dst, src, a.value);
			a.read_error = reintern(dst, src, a.read_error);
			idx = xp_capture_add_arg(dst, &a);
			if (idx < 0)
				return (int)idx;
			if (k == 0)
				d->host.args_first = (uint32_t)idx;
			d->host.args_count++;
		}
		if (dst->strings.failed)
			return -ENOMEM;
	}
	dst->dropped += src->dropped;
	dst->unknown_records += src->unknown_records;
	dst->record_limit_reached |= src->record_limit_reached;
	if (src->has_start_time && !dst->has_start_time) {
		dst->has_start_time = true;
		dst->process_start_time = src->process_start_time;
	}
	if (src->cupti.present) {
		dst->cupti.present = true;
		dst->cupti.record_capacity += src->cupti.record_capacity;
		dst->cupti.observed_records += src->cupti.observed_records;
		dst->cupti.dropped_records += src->cupti.dropped_records;
	}
	return 0;
}
