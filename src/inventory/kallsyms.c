/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kallsyms.c - /proc/kallsyms as a sorted table (kallsyms.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/search.h"
#include "kallsyms.h"

static int add_name(struct xp_inv_kallsyms *k, const char *name, uint32_t *off)
{
	size_t len = strlen(name) + 1;
	char *nb;

	if (k->nbytes + len > k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 1 << 20;

		while (cap < k->nbytes + len)
			cap *= 2;
		nb = realloc(k->names, cap);
		if (!nb)
			return -ENOMEM;
		k->names = nb;
		k->cap = cap;
	}
	memcpy(k->names + k->nbytes, name, len);
	*off = (uint32_t)k->nbytes;
	k->nbytes += len;
	return 0;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct xp_inv_ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int xp_inv_kallsyms_load(struct xp_inv_kallsyms *k, const char *path)
{
	FILE *f;
	int rc;

	memset(k, 0, sizeof(*k));
	f = fopen(path ? path : "/proc/kallsyms", "re");
	if (!f)
		return -errno;
	rc = xp_inv_kallsyms_parse(k, f);
	fclose(f);
	return rc;
}

int xp_inv_kallsyms_parse(struct xp_inv_kallsyms *k, FILE *f)
{
	char line[512], name[256], type;
	size_t cap = 0;
	uint64_t addr;
	int rc = 0;

	memset(k, 0, sizeof(*k));
	while (fgets(line, sizeof(line), f)) {
		struct xp_inv_ksym *nv;

		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) != 3)
			continue;
		if (!addr || !strchr("tTwW", type))
			continue;
		if (k->n == cap) {
			cap = cap ? cap * 2 : 65536;
			nv = realloc(k->v, cap * sizeof(*nv));
			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			k->v = nv;
		}
		k->v[k->n].addr = addr;
		rc = add_name(k, name, &k->v[k->n].name);
		if (rc)
			break;
		k->n++;
	}
	if (rc) {
		xp_inv_kallsyms_free(k);
		return rc;
	}
	if (k->n) /* qsort of NULL, even for 0 items, is undefined */
		qsort(k->v, k->n, sizeof(*k->v), ksym_cmp);
	return 0;
}

struct ksym_key {
	const struct xp_inv_ksym *v;
	uint64_t addr;
};

static bool ksym_at_or_before(const void *ctx, size_t i)
{
	const struct ksym_key *key = ctx;

	return key->v[i].addr <= key->addr;
}

const char *xp_inv_kallsyms_find(const struct xp_inv_kallsyms *k, uint64_t addr, uint64_t *off)
{
	struct ksym_key key = { k->v, addr };
	size_t i = xpc_partition_point(k->n, ksym_at_or_before, &key);

	if (!i)
		return NULL;
	*off = addr - k->v[i - 1].addr;
	return k->names + k->v[i - 1].name;
}

void xp_inv_kallsyms_free(struct xp_inv_kallsyms *k)
{
	free(k->v);
	free(k->names);
	memset(k, 0, sizeof(*k));
}
