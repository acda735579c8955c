/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_sample.h - `measure --cpu-sample`: bounded user call-chain sampling of
 * a live target's current threads with perf events, exact grouping of the
 * raw stacks, and the hotspot profile built from them after symbolization.
 *
 * What this module owns:
 *   - the collector (cpu_sample.c): one perf event per current thread
 *     (PERF_COUNT_SW_CPU_CLOCK, a fixed period of 1e9/frequency ns,
 *     PERF_SAMPLE_TID|TIME|CALLCHAIN, user call chains only), one ring per
 *     thread drained on a short timer into a fixed scratch record, never
 *     allocating per sample;
 *   - the stack table (cpu_sample_stacks.c): at most --max-groups distinct
 *     stacks with exact counts; a new stack arriving at a full table is
 *     counted as ungrouped (capacity pressure), never silently dropped;
 *   - the profile (cpu_sample_profile.c): the frame table, the function
 *     table and the hotspots (inclusive/exclusive counts and proportions)
 *     over the symbolized frames, in a deterministic order.
 * What it deliberately does not own: symbol lookup (symbolize.h), the
 * validation of selector hints (the caller passes a check, see
 * xp_cpu_profile_opts), rendering (src/report/render_cpu_sample.c).
 *
 * Why cpu-clock: it is time-proportional (a share of samples is a share of
 * CPU time), needs no PMU, and works in the VMs we run on, where hardware
 * cycles are "<not supported>".  Why a fixed period instead of perf's
 * frequency mode: the period of cpu-clock is nanoseconds, so 1e9/Hz is
 * exact and the kernel never retunes it (no throttling adjustments skew
 * the shares between threads).
 *
 * Stack depth: the kernel is asked for stack_depth + 1 user frames, so a
 * stack that had more than stack_depth frames is known to be truncated
 * (exactly, not guessed); only stack_depth frames are kept.  When
 * stack_depth is already the system maximum (kernel.perf_event_max_stack)
 * a stack filling it is counted as truncated.
 *
 * Frame addresses: the leaf is the sampled instruction pointer; every
 * caller frame is its return address minus one, so that it falls inside
 * the call instruction (and inside the caller, even when the call was the
 * caller's last instruction).
 */
#ifndef XP_COLLECT_CPU_SAMPLE_H
#define XP_COLLECT_CPU_SAMPLE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../model/error_record.h"
#include "symbolize.h"

/* Hard ceilings of the flags (beyond them memory would follow the flag,
 * not the target; the contract defaults are far below). */
#define XP_CPU_MAX_GROUPS_LIMIT 65536u
#define XP_CPU_MAX_THREADS_LIMIT 65536u
#define XP_CPU_MAX_SAMPLES_LIMIT 100000000u

/* ---------------------------------------------------------------------- */
/* Stack table                                                             */

struct xp_inv_stack_group {
	uint64_t count;     /* samples with exactly this stack */
	uint64_t *frames;   /* nframes addresses, leaf first (owned) */
	uint32_t nframes;   /* 1..stack_depth */
	bool truncated;     /* the real stack was deeper than nframes */
	uint32_t hash;      /* of frames + truncated */
};

struct xp_inv_stack_table {
	struct xp_inv_stack_group *groups; /* n used of cap */
	size_t n;
	size_t cap;                    /* --max-groups */
	uint32_t *slots;               /* open addressing, group index + 1, 0 = empty */
	size_t nslots;                 /* power of two, >= 2 * cap */
	uint64_t grouped_samples;      /* samples counted in a group */
	uint64_t ungrouped_samples;    /* samples whose new stack found the table full */
};

/* Return 0 or -ENOMEM.  @max_groups >= 1. */
int xp_inv_stack_table_init(struct xp_inv_stack_table *t, size_t max_groups);
/*
 * Count @count samples of the stack @frames[0..n) (leaf first, n >= 1).
 * Return 0 when grouped, 1 when the table was full and the samples were
 * counted as ungrouped, -ENOMEM.  Allocates only when a new group is made.
 */
int xp_inv_stack_table_add(struct xp_inv_stack_table *t, const uint64_t *frames, uint32_t n,
			   bool truncated, uint64_t count);
/* Deterministic order: count desc, then frames (leaf first) ascending
 * lexicographically, shorter first, then untruncated first.  Rebuilds
 * nothing: call once, after collection. */
void xp_inv_stack_table_sort(struct xp_inv_stack_table *t);
void xp_inv_stack_table_free(struct xp_inv_stack_table *t);

/* ---------------------------------------------------------------------- */
/* Collector                                                               */

enum xp_inv_cpu_stop_reason {
	XP_CPU_STOP_DURATION = 0, /* "duration": the window ran to its end */
	XP_CPU_STOP_MAX_SAMPLES, /* "max_samples": --max-samples observed */
	XP_CPU_STOP_CANCELLED, /* "cancelled": SIGINT/SIGTERM */
};
const char *xp_inv_cpu_stop_reason_name(enum xp_inv_cpu_stop_reason r);

struct xp_inv_cpu_sample_opts {
	uint32_t pid;
	uint64_t frequency_hz;  /* per thread, 1..kernel.perf_event_max_sample_rate */
	uint64_t max_samples;   /* observed samples, 1..XP_CPU_MAX_SAMPLES_LIMIT */
	uint64_t max_groups;    /* retained stacks, 1..XP_CPU_MAX_GROUPS_LIMIT */
	uint32_t stack_depth;   /* user frames kept, 1..kernel.perf_event_max_stack */
	uint64_t max_threads;   /* threads sampled, 1..XP_CPU_MAX_THREADS_LIMIT */
	uint64_t duration_ms;   /* window, > 0 */
	const volatile sig_atomic_t *stop; /* non-zero ends the window early; may be NULL */
	/* Called after each drain with the time since sampling began and the
	 * samples observed so far: the command's progress line; NULL: none. */
	void (*progress)(void *ctx, uint64_t elapsed_ns, uint64_t count);
	void *progress_ctx;
};

/* Counters of one collection; every bound hit is one of these. */
struct xp_inv_cpu_sample_counts {
	uint64_t observed_samples;      /* sample records processed (<= max_samples) */
	uint64_t samples_beyond_limit;  /* delivered after max_samples was reached */
	uint64_t lost_samples;          /* PERF_RECORD_LOST totals (ring full) */
	uint64_t lost_records;          /* PERF_RECORD_LOST records */
	uint64_t throttle_events;       /* PERF_RECORD_THROTTLE records */
	uint64_t samples_without_user_stack; /* no user frame (kernel-only context) */
	uint64_t kernel_mode_samples;   /* taken while the thread ran in the kernel */
	uint64_t truncated_stacks;      /* samples whose stack exceeded stack_depth */
	uint64_t malformed_records;     /* short or inconsistent records (never expected) */
	uint64_t threads_seen;          /* /proc/<pid>/task entries at start */
	uint64_t threads_sampled;       /* events opened (<= max_threads) */
	uint64_t threads_over_bound;    /* seen but beyond max_threads */
	uint64_t threads_open_failed;   /* perf_event_open failed (thread gone, EMFILE) */
	uint64_t threads_exited;        /* seen at start, gone at the end */
	uint64_t threads_started;       /* present at the end, not seen at start: unsampled */
	uint64_t threads_with_samples;  /* sampled threads that produced a sample */
};

struct xp_inv_cpu_sample_result {
	struct xp_inv_stack_table stacks;
	struct xp_inv_cpu_sample_counts counts;
	enum xp_inv_cpu_stop_reason stop_reason;
	uint64_t sample_period_ns;  /* 1e9 / frequency_hz */
	uint64_t frequency_hz;      /* the options' bounds, as collected */
	uint64_t max_samples;
	uint64_t max_threads;
	uint32_t stack_depth;
	uint32_t kernel_stack_max;  /* kernel.perf_event_max_stack at start */
	uint32_t requested_depth;   /* frames asked of the kernel per sample */
	uint64_t ring_bytes;        /* data bytes of each thread's ring */
	bool kernel_time_included;  /* samples in kernel mode counted (exclude_kernel = 0) */
	uint64_t window_ns;         /* enabled -> disabled, CLOCK_MONOTONIC */
	int open_errno;             /* first perf_event_open errno (threads_open_failed > 0) */
};

/* System limits the flags are checked against (procfs sysctls). */
int xp_inv_cpu_sample_limits(uint64_t *max_sample_rate, uint32_t *max_stack);

/*
 * Sample @o->pid for @o->duration_ms.  Errors: PERMISSION_DENIED
 * (perf_event_open EACCES/EPERM on every thread), TARGET_EXITED (no
 * thread could be opened because they are gone), SESSION_LIMIT_EXCEEDED
 * (a flag beyond the system limits), INTERNAL.  The caller verifies the
 * target identity before and after.  @r needs xp_inv_cpu_sample_result_free.
 */
int xp_inv_cpu_sample_collect(const struct xp_inv_cpu_sample_opts *o,
			      struct xp_inv_cpu_sample_result *r, struct xp_error *err);
void xp_inv_cpu_sample_result_free(struct xp_inv_cpu_sample_result *r);

/*
 * The per-record step, exposed for tests: account one ring record
 * (@rec, @len bytes, starting with a struct perf_event_header) into @r,
 * with @frames as scratch of at least @r->requested_depth entries.
 * @max_samples and @stack_depth as in the options.
 */
int xp_inv_cpu_sample_account(struct xp_inv_cpu_sample_result *r, const void *rec, size_t len,
			      uint64_t max_samples, uint32_t stack_depth, uint64_t *frames);

/*
 * Drain one perf ring: @meta is the control page, @data its data area of
 * @size bytes (a power of two).  Each record is passed to @fn contiguous:
 * a record that wraps is copied into @scratch (@scratch_size bytes; a
 * longer record is skipped and counted by returning it in *@oversized).
 * Advances data_tail.  Returns the number of records.
 */
struct perf_event_mmap_page;
size_t xp_inv_perf_ring_drain(struct perf_event_mmap_page *meta, const uint8_t *data, uint64_t size,
			      uint8_t *scratch, size_t scratch_size, uint64_t *oversized,
			      void (*fn)(void *ctx, const void *rec, size_t len), void *ctx);

/* ---------------------------------------------------------------------- */
/* Profile: frames, functions, hotspots                                    */

/* One distinct frame address, symbolized (index into xp_inv_cpu_profile.frames). */
struct xp_inv_cpu_frame {
	struct xp_inv_sym_frame sym; /* what symbolization found (strings in the symbolizer) */
	uint32_t function;         /* index into functions */
	uint64_t leaf_samples;     /* samples with this frame as leaf */
};

/* State of a frame's uprobe selector hint. */
enum xp_inv_hint_status {
	XP_HINT_NONE = 0, /* not a native ELF symbol: no hint */
	XP_HINT_VALIDATED, /* validate accepts the hint */
	XP_HINT_REJECTED, /* validate rejects it (e.g. an ambiguous local symbol) */
	XP_HINT_UNCHECKED, /* no checker given (unit tests) */
};
const char *xp_inv_hint_status_name(enum xp_inv_hint_status s);

/* A function: the unit hotspots are counted in. */
struct xp_inv_cpu_function {
	enum xp_inv_frame_kind kind;
	const char *name;          /* symbol, perf-map symbol, or "0x..." for unresolved */
	const char *binary;        /* canonical ELF path (native) or NULL */
	const char *symbol;        /* native ELF symbol or NULL */
	const char *perf_map_symbol; /* or NULL */
	const char *mapping;       /* mapping of the (first) frame, or NULL */
	uint64_t address;          /* unresolved: the (lowest) frame address; else 0 */
	uint32_t naddresses;       /* distinct frame addresses behind it */
	char *selector_hint;       /* "uprobe:<binary>:<symbol>:entry" when validated (owned) */
	enum xp_inv_hint_status hint_status;
	char *hint_error;          /* validate's error code when rejected (owned) */
	uint64_t exclusive;        /* samples with this function as leaf */
	uint64_t inclusive;        /* samples with this function anywhere (once per sample) */
};

struct xp_inv_cpu_profile {
	struct xp_inv_cpu_frame *frames; /* sorted by address */
	size_t nframes;
	struct xp_inv_cpu_function
		*functions; /* hotspot order: exclusive desc, inclusive desc, name */
	size_t nfunctions;
	uint32_t **group_frames;         /* per stack group: its frame indices, leaf first */
	/* symbolization summary over distinct frames */
	uint64_t native_frames, jit_frames, python_frames, unresolved_frames;
	uint64_t perf_map_frames;        /* frames the perf map resolved (any kind) */
	uint64_t hints_validated, hints_rejected;
	uint64_t python_samples;         /* samples with at least one Python frame */
	uint64_t interpreter_samples;    /* samples with a frame in the CPython binary/libpython */
	uint64_t unresolved_leaf_samples;
};

/*
 * Check a uprobe selector hint as `validate` would: return 0 when it is
 * accepted, else a negative code (its name goes into hint_error).
 */
typedef int (*xp_hint_check_fn)(void *ctx, const char *hint);

/*
 * Build the profile of @r (its stack table sorted) with @sym (opened on
 * the same live target).  Every distinct address is symbolized once; every
 * distinct native function's hint is checked once with @check (NULL:
 * hints stay XP_HINT_UNCHECKED and are still written).  -ENOMEM or 0.
 */
int xp_inv_cpu_profile_build(struct xp_inv_cpu_sample_result *r, struct xp_inv_symbolizer *sym,
			     xp_hint_check_fn check, void *check_ctx, struct xp_inv_cpu_profile *p);
void xp_inv_cpu_profile_free(struct xp_inv_cpu_profile *p, size_t ngroups);

/* ---------------------------------------------------------------------- */
/* Verdicts the result document shows (derived here, rendered as is)       */

/*
 * Python coverage (schema PythonStatus.status): "python_frames_resolved",
 * "not_python", "perf_map_unreadable", "no_perf_map" or
 * "perf_map_without_python_frames".  Native frames inside the interpreter
 * never count as Python coverage.  @hint receives what to do ("" when
 * nothing is missing).
 */
const char *xp_inv_cpu_python_status(const struct xp_inv_symbolizer *s,
				     const struct xp_inv_cpu_profile *p, char *hint, size_t size);
/* Every observation of the window is in the groups (schema completeness). */
bool xp_inv_cpu_sample_complete(const struct xp_inv_cpu_sample_result *r);
/* The result's warnings, in a fixed order.  0 or -ENOMEM. */
int xp_inv_cpu_sample_warnings(const struct xp_inv_cpu_sample_result *r,
			       const struct xp_inv_cpu_profile *p,
			       const struct xp_inv_symbolizer *s, const char *python_status,
			       const char *python_hint, struct xp_warnings *ws);

#endif /* XP_COLLECT_CPU_SAMPLE_H */
