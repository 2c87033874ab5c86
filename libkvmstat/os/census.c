/*
 * census.c - the memory census's public calls (census.h): each asks the
 * kernel family's op, and says so when the family has none.  The freeing
 * calls live here too.
 */
#include <stdlib.h>

#include "kvs_private.h"

static int
none(kvs_t *kd, const char *what)
{
	return kerr_set(&kd->err, KVS_E_INVAL, "kvmstat reads no %s of %s kernels",
	    what, kd->os->name);
}

static int
start(kvs_t *kd, void *out, size_t *n)
{
	if (out == NULL || n == NULL)
		return kerr_set(&kd->err, KVS_E_INVAL, "no place for the answer");
	*n = 0;
	return 0;
}

int
kvs_meminfo(kvs_t *kd, struct kvs_counter **out, size_t *n)
{
	struct kvs_counter *c = NULL, *nc;
	size_t cap = 0, want = 64;
	int rc;

	kerr_clear(&kd->err);
	if (start(kd, out, n) < 0)
		return -1;
	*out = NULL;
	if (kd->os->meminfo == NULL)
		return none(kd, "memory summary");
	/* Grown to what the summary has (it may grow between two reads of
	 * live memory: asked again, a bounded number of times). */
	for (int tries = 0; tries < 4; tries++) {
		if ((nc = realloc(c, want * sizeof(*c))) == NULL) {
			free(c);
			return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
		}
		c = nc;
		cap = want;
		rc = kd->os->meminfo(kd, c, cap, n);
		if (rc < 0) {
			free(c);
			*n = 0;
			return -1;
		}
		if (*n <= cap) {
			*out = c;
			return rc;
		}
		want = *n;
	}
	free(c);
	*n = 0;
	return kerr_set(&kd->err, KVS_E_DATA, "the memory summary kept growing while read");
}

int
kvs_meminfo_into(kvs_t *kd, struct kvs_counter *buf, size_t cap, size_t *n)
{
	int rc;

	kerr_clear(&kd->err);
	if (n == NULL || (buf == NULL && cap > 0))
		return kerr_set(&kd->err, KVS_E_INVAL, "no place for the answer");
	*n = 0;
	if (kd->os->meminfo == NULL)
		return none(kd, "memory summary");
	if ((rc = kd->os->meminfo(kd, buf, cap, n)) < 0)
		return -1;
	if (*n > cap)
		return kerr_set(&kd->err, KVS_E_INVAL, "the memory summary has %zu counters, "
		    "room for %zu", *n, cap);
	return rc;
}

void
kvs_counters_free(struct kvs_counter *c, size_t n)
{
	(void)n;
	free(c);
}

int
kvs_pzones(kvs_t *kd, struct kvs_pzone **out, size_t *n)
{
	kerr_clear(&kd->err);
	if (start(kd, out, n) < 0)
		return -1;
	*out = NULL;
	if (kd->os->pzones == NULL)
		return none(kd, "page allocator zones");
	return kd->os->pzones(kd, out, n);
}

void
kvs_pzones_free(struct kvs_pzone *z, size_t n)
{
	size_t i;

	if (z == NULL)
		return;
	for (i = 0; i < n; i++) {
		free(z[i].stat);
		free(z[i].node_stat);
		free(z[i].pcp);
	}
	free(z);
}

int
kvs_vmalloc(kvs_t *kd, struct kvs_varea **out, size_t *n)
{
	kerr_clear(&kd->err);
	if (start(kd, out, n) < 0)
		return -1;
	*out = NULL;
	if (kd->os->vmalloc == NULL)
		return none(kd, "vmalloc areas");
	return kd->os->vmalloc(kd, out, n);
}

void
kvs_vareas_free(struct kvs_varea *v, size_t n)
{
	(void)n;
	free(v);
}

int
kvs_arenas(kvs_t *kd, struct kvs_arena **out, size_t *n)
{
	kerr_clear(&kd->err);
	if (start(kd, out, n) < 0)
		return -1;
	*out = NULL;
	if (kd->os->arenas == NULL)
		return none(kd, "vmem arenas");
	return kd->os->arenas(kd, out, n);
}

void
kvs_arenas_free(struct kvs_arena *a, size_t n)
{
	(void)n;
	free(a);
}

int
kvs_slab_objects(kvs_t *kd, const char *cache,
    int (*cb)(void *arg, const struct kvs_slab_object *o), void *arg)
{
	kerr_clear(&kd->err);
	if (cache == NULL || cb == NULL)
		return kerr_set(&kd->err, KVS_E_INVAL, "no cache named, or no callback");
	if (kd->os->slab_objects == NULL)
		return none(kd, "slab objects");
	return kd->os->slab_objects(kd, cache, cb, arg);
}

int
kvs_whatis(kvs_t *kd, uint64_t addr, struct kvs_whatis *w)
{
	kerr_clear(&kd->err);
	if (w == NULL)
		return kerr_set(&kd->err, KVS_E_INVAL, "no place for the answer");
	*w = (struct kvs_whatis){ .addr = addr, .cpu = -1, .pid = -1, .tid = -1 };
	if (kd->os->whatis == NULL)
		return none(kd, "address owners");
	return kd->os->whatis(kd, addr, w);
}

const char *
kvs_whatis_kind_str(kvs_whatis_kind_t k)
{
	static const char *const names[] = {
		[KVS_WHATIS_UNKNOWN] = "unknown", [KVS_WHATIS_SLAB] = "slab",
		[KVS_WHATIS_PAGE] = "page", [KVS_WHATIS_VMALLOC] = "vmalloc",
		[KVS_WHATIS_SYMBOL] = "symbol", [KVS_WHATIS_STACK] = "stack",
	};
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "unknown";
}

const char *
kvs_obj_state_str(kvs_obj_state_t s)
{
	static const char *const names[] = {
		[KVS_OBJ_ALLOCATED] = "allocated", [KVS_OBJ_FREE_CPU] = "free (cpu)",
		[KVS_OBJ_FREE_CPU_PARTIAL] = "free (cpu partial)",
		[KVS_OBJ_FREE_PARTIAL] = "free (partial)", [KVS_OBJ_FREE] = "free",
		[KVS_OBJ_UNKNOWN] = "unknown", [KVS_OBJ_FREE_ZONE] = "free (zone bucket)",
	};
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}
