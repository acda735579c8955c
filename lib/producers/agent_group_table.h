/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_group_table.h - the group table of an AGGREGATE capture (agent.h,
 * MODE_AGGREGATE): device activities folded into at most `capacity`
 * groups inside the target, so no per-activity stream leaves it.  A
 * producer-side table beside the host rings: the CUPTI backend
 * (lib/device/cupti.c) fills it, the Agent (lib/agent/server.c) reads it;
 * it calls neither.
 *
 * Layout.  A dense array of `capacity` struct xprobe_agent_group in the
 * order their first activity arrived (what replies send, so an offset
 * names the same group in every reply), a parallel array of their key
 * hashes, and an open-addressed index of 2^k >= 2 x capacity slots holding
 * group number + 1 (0 = empty), probed linearly.  Groups are never removed,
 * so a probe ends at the first empty slot.  All three are allocated at ARM
 * (anonymous, MAP_NORESERVE: pages are touched as groups appear), never
 * while activities are added.
 *
 * Key: kind, device, memcpy kind, name flags and the kept name bytes (a
 * multiply-xorshift mix of the words, then of 8 name bytes at a time).  A
 * new key when `capacity` groups exist is refused (-ENOSPC): the table is
 * full, the capture LIMIT_REACHED; existing groups still grow.  A caller
 * that knows an activity's key is a group's it already had (the CUPTI
 * backend: the same kernel-name pointer within one buffer) bumps the group
 * by number (xpl_agg_bump) without hashing.
 *
 * Locking.  The CUPTI backend adds activities from buffer-completion
 * callbacks, which CUPTI may run on several threads, and the server reads
 * groups for replies: xpl_agg_lock() around either.  The backend takes it
 * once per completed buffer, not per activity.
 */
#ifndef XPL_AGENT_AGGREGATE_H
#define XPL_AGENT_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xprobe/agent.h"

struct xpl_agent_agg;

/* A table of @capacity groups (1..XPROBE_AGENT_CAPACITY_MAX).  0 or -ENOMEM. */
int xpl_agg_new(uint64_t capacity, struct xpl_agent_agg **out);
void xpl_agg_free(struct xpl_agent_agg *g);

void xpl_agg_lock(struct xpl_agent_agg *g);
void xpl_agg_unlock(struct xpl_agent_agg *g);

/*
 * Fold one activity into its group (lock held): @kind XPROBE_AGENT_KIND_
 * KERNEL/MEMCPY/MEMSET, @name/@n the kept name bytes (kernels; n <= 127),
 * @flags XPROBE_RECF_NAME_COMPLETE or 0, @dur_ns its duration, @bytes.
 * The group's number (what xpl_agg_bump takes), or -ENOSPC when it would
 * need a group and the table is full.
 */
int64_t xpl_agg_add(struct xpl_agent_agg *g, uint32_t kind, uint32_t device, uint32_t memcpy_kind,
		    uint16_t flags, const char *name, uint32_t n, uint64_t dur_ns, uint64_t bytes);
/* One more activity of group @idx (a number xpl_agg_add returned; lock
 * held): the caller knows its key is that group's. */
void xpl_agg_bump(struct xpl_agent_agg *g, int64_t idx, uint64_t dur_ns, uint64_t bytes);

/* Counters (lock held or not: a consistent pair needs it). */
uint64_t xpl_agg_groups(const struct xpl_agent_agg *g);
uint64_t xpl_agg_grouped(const struct xpl_agent_agg *g); /* activities in groups */
bool xpl_agg_full(const struct xpl_agent_agg *g);

/* Copy groups [@from, @from + @count) to @out (lock held); the number copied. */
uint64_t xpl_agg_copy(const struct xpl_agent_agg *g, uint64_t from, uint64_t count,
		      struct xprobe_agent_group *out);

#endif /* XPL_AGENT_AGGREGATE_H */
