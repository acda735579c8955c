/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sim.c - `sim`, the software device backend, and the backend table.
 *
 * For tests and demos on machines without a GPU.  N cores (devices, default
 * 4); each declared execution becomes deterministic activity records on
 * every armed core: the count (1..4 unless configured) and the activity
 * names follow from an FNV-1a hash of the model name, the spans divide the
 * execution's [begin, end] evenly, and a failed execution ends with a
 * "sim.fault" record.  Same model, same times, same core -> same records.
 *
 * It behaves like an asynchronous backend: records go into the core's
 * pending buffer and are handed to the engine when the buffer fills or at
 * harvest, so the engine's flush-at-stop path is the one exercised.  It can
 * be told to fail arming (start) or harvesting on given cores.
 *
 * It is never chosen implicitly: only by name ("sim" option or
 * XPROBE_INSPECT_BACKEND=sim).  The engine marks every file made with it
 * (header flag, Capture.simulated, backend "sim").
 */
#include <stdlib.h>

#include "../internal.h"
#include "backend.h"
#include "cupti.h"
#include "xprobe/record.h"

#define SIM_BUF 4096 /* bytes of a pending buffer: small, so buffers complete */

static const char *const sim_ops_names[] = { "sim.matmul",  "sim.conv",	   "sim.allreduce",
					     "sim.softmax", "sim.copy_in", "sim.copy_out" };

struct sim_core {
	bool armed;
	bool fail_arm, fail_harvest;
	uint8_t buf[SIM_BUF] __attribute__((aligned(8)));
	size_t len;
	struct xpl_sim_stats st;
};

struct sim {
	uint32_t records_per_exec;
	struct sim_core core[];
};

int xpl_backend_find(const char *name, const struct xpl_backend_ops **ops)
{
	*ops = NULL;
	if (!name)
		return -XPROBE_E_INVALID_ARGUMENT;
	if (!strcmp(name, "sim")) {
		*ops = &xpl_sim_backend;
		return 0;
	}
	if (!strcmp(name, "cupti")) {
		/* loaded (dlopen of libcupti) only when its engine opens */
		if (!xpl_cupti_built())
			return -XPROBE_E_BACKEND_UNAVAILABLE;
		*ops = &xpl_cupti_backend;
		return 0;
	}
	return -XPROBE_E_UNKNOWN_NAME;
}

static bool bit(const uint64_t map[4], uint32_t d)
{
	return (map[d / 64] >> (d % 64)) & 1;
}

static int sim_open(struct xpl_backend *b, const struct xprobe_backend_opts *o)
{
	uint32_t cores = OPTS_GET(o, sim_cores, 0);
	struct sim *s;

	if (!cores)
		cores = 4;
	if (cores > XPROBE_MAX_DEVICES)
		return -XPROBE_E_INVALID_ARGUMENT;
	s = calloc(1, sizeof(*s) + cores * sizeof(s->core[0]));
	if (!s)
		return -ENOMEM;
	s->records_per_exec = OPTS_GET(o, sim_records_per_exec, 0);
	for (uint32_t d = 0; d < cores; d++) {
		if (OPTS_HAS(o, sim_fail_arm))
			s->core[d].fail_arm = bit(o->sim_fail_arm, d);
		if (OPTS_HAS(o, sim_fail_harvest))
			s->core[d].fail_harvest = bit(o->sim_fail_harvest, d);
	}
	b->priv = s;
	b->ndev = cores;
	return 0;
}

static void sim_close(struct xpl_backend *b)
{
	free(b->priv);
	b->priv = NULL;
}

static int sim_start(struct xpl_backend *b, uint32_t dev)
{
	struct sim_core *c = &((struct sim *)b->priv)->core[dev];

	if (c->fail_arm) {
		c->st.arm_failures++;
		return -XPROBE_E_DEVICE_FAILED;
	}
	c->armed = true;
	c->st.starts++;
	return 0;
}

static void complete(struct xpl_backend *b, uint32_t dev)
{
	struct sim_core *c = &((struct sim *)b->priv)->core[dev];

	if (c->len)
		xpl_backend_complete(b, dev, c->buf, c->len);
	c->len = 0;
}

static int sim_harvest(struct xpl_backend *b, uint32_t dev)
{
	struct sim_core *c = &((struct sim *)b->priv)->core[dev];

	c->st.harvests++;
	if (c->fail_harvest) {
		c->st.harvest_failures++;
		c->len = 0; /* the pending buffer is lost, as a failed device read would be */
		return -XPROBE_E_DEVICE_FAILED;
	}
	complete(b, dev);
	return 0;
}

static void sim_stop(struct xpl_backend *b, uint32_t dev)
{
	struct sim_core *c = &((struct sim *)b->priv)->core[dev];

	c->armed = false;
	c->st.stops++;
}

static void sim_drop(struct xpl_backend *b, uint32_t dev)
{
	struct sim_core *c = &((struct sim *)b->priv)->core[dev];

	c->len = 0;
	c->st.drops++;
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static void emit(struct xpl_backend *b, uint32_t dev, const char *name, uint64_t start,
		 uint64_t end, uint64_t exec)
{
	struct sim_core *c = &((struct sim *)b->priv)->core[dev];
	size_t n = strlen(name), size = XPL_ALIGN8(XPROBE_RECORD_HDR_SIZE + n);
	struct xprobe_record *r;

	if (c->len + size > SIM_BUF)
		complete(b, dev);
	r = (struct xprobe_record *)(c->buf + c->len);
	memset(r, 0, size);
	r->size = (uint16_t)size;
	r->type = XPROBE_EV_DEVICE_ACTIVITY;
	r->ts = start;
	r->aux = dev;
	r->flags = XPROBE_RECF_NAME_COMPLETE;
	r->name_len = (uint16_t)n;
	r->a0 = end;
	r->a1 = exec;
	memcpy((uint8_t *)r + XPROBE_RECORD_HDR_SIZE, name, n);
	c->len += size;
}

static void sim_execution(struct xpl_backend *b, uint32_t dev, const struct xpl_exec_info *e)
{
	struct sim *s = b->priv;
	struct sim_core *c = &s->core[dev];
	uint64_t h = fnv1a(e->model), begin = e->begin_ns, end = e->end_ns;
	uint32_t k = s->records_per_exec ? s->records_per_exec : 1 + (uint32_t)(h % 4);

	if (!c->armed)
		return;
	c->st.executions++;
	if (end < begin)
		end = begin;
	for (uint32_t j = 0; j < k; j++) {
		uint64_t a = begin + (end - begin) * j / k, z = begin + (end - begin) * (j + 1) / k;

		emit(b, dev, sim_ops_names[(h + j + dev) % XPL_ARRAY_SIZE(sim_ops_names)],
		     a ? a : 1, z ? z : 1, e->id);
	}
	if (e->status != 0)
		emit(b, dev, "sim.fault", end ? end : 1, end ? end : 1, e->id);
}

void xpl_sim_stats(const struct xpl_backend *b, uint32_t dev, struct xpl_sim_stats *out)
{
	const struct sim *s = b->priv;

	memset(out, 0, sizeof(*out));
	if (b->ops != &xpl_sim_backend || !s || dev >= b->ndev)
		return;
	*out = s->core[dev].st;
	out->armed = s->core[dev].armed;
}

const struct xpl_backend_ops xpl_sim_backend = {
	.name = "sim",
	.simulated = true,
	.open = sim_open,
	.close = sim_close,
	.start = sim_start,
	.harvest = sim_harvest,
	.stop = sim_stop,
	.drop = sim_drop,
	.execution = sim_execution,
};
