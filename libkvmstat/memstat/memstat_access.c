/*
 * memstat_access.c - the public face of an entry and of the zone tables:
 * memstat_get_* / memstat_set_* (counters, per-CPU counters, caller slots,
 * SLAB fields), the malloc(9) zone tables (the process-wide one and each
 * list's), memstat_strerror, and the sysctl sources this library never has.
 *
 * Entries, lists, the refresh protocol and the per-CPU stores these read
 * are memstat.c's (caller slots are allocated there, mtl_caller_slots).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "memstat_internal.h"

/* The table behind FreeBSD's memstat_malloc_zone_get_*(), which take no
 * list: the one process-wide variable of the library (memstat.h documents
 * the exception).  Lists keep their own table; a successful malloc refresh
 * copies its list's table here under the lock, so readers in other threads
 * never see one half-written.  A mutex rather than an atomic pointer: the
 * table is small and copied, so nothing published ever has to be freed
 * while a reader might hold it. */
static struct {
	pthread_mutex_t lock;
	struct mtl_zones z;
} published = { PTHREAD_MUTEX_INITIALIZER, { 0, { 0 } } };

const char *
memstat_strerror(int error)
{
	switch (error) {
	case MEMSTAT_ERROR_NOMEMORY:
		return "Cannot allocate memory";
	case MEMSTAT_ERROR_VERSION:
		return "Version mismatch";
	case MEMSTAT_ERROR_PERMISSION:
		return "Permission denied";
	case MEMSTAT_ERROR_DATAERROR:
		return "Data format error";
	case MEMSTAT_ERROR_KVM:
		return "KVM error";
	case MEMSTAT_ERROR_KVM_NOSYMBOL:
		return "KVM unable to find symbol";
	case MEMSTAT_ERROR_KVM_SHORTREAD:
		return "KVM short read";
	case MEMSTAT_ERROR_UNDEFINED:
	default:
		return "Unknown error";
	}
}

/* Make z the process-wide zone table (mtl_refresh_commit, mtl_set_zones). */
void
mtl_publish_zones(const struct mtl_zones *z)
{
	pthread_mutex_lock(&published.lock);
	published.z.n = z->n;
	memcpy(published.z.size, z->size, z->n * sizeof(z->size[0]));
	pthread_mutex_unlock(&published.lock);
}

static void
zones_fill(struct mtl_zones *z, const size_t *sizes, size_t n)
{
	if (n > MEMSTAT_ZONES_MAX)
		n = MEMSTAT_ZONES_MAX;
	if (n > 0)
		memcpy(z->size, sizes, n * sizeof(*sizes));
	z->n = n;
}

void
mtl_set_list_zones(struct memory_type_list *l, const size_t *sizes, size_t n)
{
	zones_fill(&l->mtl_zones_new, sizes, n);
	l->mtl_zones_staged = true;
}

void
mtl_set_zones(const size_t *sizes, size_t n)
{
	struct mtl_zones z;

	zones_fill(&z, sizes, n);
	mtl_publish_zones(&z);
}

size_t
memstat_malloc_zone_get_count(void)
{
	size_t n;

	pthread_mutex_lock(&published.lock);
	n = published.z.n;
	pthread_mutex_unlock(&published.lock);
	return n;
}

size_t
memstat_malloc_zone_get_size(size_t n)
{
	size_t sz;

	pthread_mutex_lock(&published.lock);
	sz = n < published.z.n ? published.z.size[n] : (size_t)-1;
	pthread_mutex_unlock(&published.lock);
	return sz;
}

size_t
memstat_mtl_malloc_zone_count(const struct memory_type_list *list)
{
	return list->mtl_zones.n;
}

size_t
memstat_mtl_malloc_zone_size(const struct memory_type_list *list, size_t n)
{
	return n < list->mtl_zones.n ? list->mtl_zones.size[n] : (size_t)-1;
}

int
memstat_malloc_zone_used(const struct memory_type *mtp, size_t n)
{
	return n < 64 && (mtp->mt_sizemask >> n & 1);
}

/* The sysctl sources need a running FreeBSD kernel, which this library
 * never has: they fail without touching the list's entries. */
int
memstat_sysctl_all(struct memory_type_list *list, int flags)
{
	(void)flags;
	list->mtl_error = MEMSTAT_ERROR_UNDEFINED;
	errno = ENOSYS;
	return -1;
}

int
memstat_sysctl_malloc(struct memory_type_list *list, int flags)
{
	return memstat_sysctl_all(list, flags);
}

int
memstat_sysctl_uma(struct memory_type_list *list, int flags)
{
	return memstat_sysctl_all(list, flags);
}

/* -------------------------------------------------------------- accessors */

#define GET(field, name) \
	uint64_t memstat_get_##name(const struct memory_type *mtp) { return mtp->field; }
GET(mt_countlimit, countlimit)
GET(mt_byteslimit, byteslimit)
GET(mt_sizemask, sizemask)
GET(mt_size, size)
GET(mt_rsize, rsize)
GET(mt_memalloced, memalloced)
GET(mt_memfreed, memfreed)
GET(mt_numallocs, numallocs)
GET(mt_numfrees, numfrees)
GET(mt_bytes, bytes)
GET(mt_count, count)
GET(mt_free, free)
GET(mt_failures, failures)
GET(mt_sleeps, sleeps)
GET(mt_xdomain, xdomain)
GET(mt_zonefree, zonefree)
GET(mt_kegfree, kegfree)
GET(mt_kaddr, kaddr)
GET(mt_maxused, maxused)

unsigned
memstat_get_ndomains(const struct memory_type *mtp)
{
	return mtp->mt_ndomains;
}

uint64_t
memstat_get_domain_zonefree(const struct memory_type *mtp, unsigned domain)
{
	return domain < MEMSTAT_MAXDOMAINS ? mtp->mt_dom_zonefree[domain] : 0;
}

uint64_t
memstat_get_domain_kegfree(const struct memory_type *mtp, unsigned domain)
{
	return domain < MEMSTAT_MAXDOMAINS ? mtp->mt_dom_kegfree[domain] : 0;
}

const char *
memstat_get_name(const struct memory_type *mtp)
{
	return mtp->mt_name;
}

int
memstat_get_allocator(const struct memory_type *mtp)
{
	return mtp->mt_allocator;
}

int
memstat_get_vanished(const struct memory_type *mtp)
{
	return mtp->mt_vanished;
}

unsigned
memstat_get_maxcpus(const struct memory_type *mtp)
{
	return mtp->mt_maxcpus;
}

static bool
idx_ok(int index)
{
	return index >= 0 && index < MEMSTAT_MAXCALLER;
}

static bool
cpu_ok(const struct memory_type *mtp, int cpu)
{
	return cpu >= 0 && (unsigned)cpu < mtp->mt_capcpus;
}

/* Library-owned per-CPU counters, when the last refresh kept them. */
static bool
pcpu_ok(const struct memory_type *mtp, int cpu)
{
	return mtp->mt_percpu_valid && cpu_ok(mtp, cpu);
}

void *
memstat_get_caller_pointer(const struct memory_type *mtp, int index)
{
	return idx_ok(index) ? mtp->mt_caller_pointer[index] : NULL;
}

void
memstat_set_caller_pointer(struct memory_type *mtp, int index, void *value)
{
	if (idx_ok(index))
		mtp->mt_caller_pointer[index] = value;
}

uint64_t
memstat_get_caller_uint64(const struct memory_type *mtp, int index)
{
	return idx_ok(index) ? mtp->mt_caller_uint64[index] : 0;
}

void
memstat_set_caller_uint64(struct memory_type *mtp, int index, uint64_t value)
{
	if (idx_ok(index))
		mtp->mt_caller_uint64[index] = value;
}

#define GETPC(field, name) \
	uint64_t memstat_get_percpu_##name(const struct memory_type *mtp, int cpu) \
	{ return pcpu_ok(mtp, cpu) && (unsigned)cpu < mtp->mt_pa_ncpu ? \
	    mt_pa(mtp, (unsigned)cpu)->field : 0; }
GETPC(mtp_memalloced, memalloced)
GETPC(mtp_memfreed, memfreed)
GETPC(mtp_numallocs, numallocs)
GETPC(mtp_numfrees, numfrees)
GETPC(mtp_sizemask, sizemask)

uint64_t
memstat_get_percpu_free(const struct memory_type *mtp, int cpu)
{
	return pcpu_ok(mtp, cpu) ? mtp->mt_percpu_cache[cpu].mtp_free : 0;
}

void *
memstat_get_percpu_caller_pointer(const struct memory_type *mtp, int cpu, int index)
{
	return cpu_ok(mtp, cpu) && idx_ok(index) && mtp->mt_percpu_caller != NULL ?
	    mtp->mt_percpu_caller[cpu].mtp_caller_pointer[index] : NULL;
}

void
memstat_set_percpu_caller_pointer(struct memory_type *mtp, int cpu, int index, void *value)
{
	struct mt_percpu_caller_s *c;

	if (cpu_ok(mtp, cpu) && idx_ok(index) && (c = mtl_caller_slots(mtp, cpu)) != NULL)
		c->mtp_caller_pointer[index] = value;
}

uint64_t
memstat_get_percpu_caller_uint64(const struct memory_type *mtp, int cpu, int index)
{
	return cpu_ok(mtp, cpu) && idx_ok(index) && mtp->mt_percpu_caller != NULL ?
	    mtp->mt_percpu_caller[cpu].mtp_caller_uint64[index] : 0;
}

void
memstat_set_percpu_caller_uint64(struct memory_type *mtp, int cpu, int index, uint64_t value)
{
	struct mt_percpu_caller_s *c;

	if (cpu_ok(mtp, cpu) && idx_ok(index) && (c = mtl_caller_slots(mtp, cpu)) != NULL)
		c->mtp_caller_uint64[index] = value;
}

/* SLAB (Linux SLUB) entries: see memstat.h. */
uint64_t
memstat_get_slab_objperslab(const struct memory_type *mtp)
{
	return mtp->mt_slab_objperslab;
}

uint64_t
memstat_get_slab_pagesperslab(const struct memory_type *mtp)
{
	return mtp->mt_slab_pagesperslab;
}

uint64_t
memstat_get_slab_numslabs(const struct memory_type *mtp)
{
	return mtp->mt_slab_numslabs;
}

uint64_t
memstat_get_slab_numobjs(const struct memory_type *mtp)
{
	return mtp->mt_slab_numobjs;
}

uint64_t
memstat_get_slab_active(const struct memory_type *mtp)
{
	return mtp->mt_slab_active;
}

uint64_t
memstat_get_flags(const struct memory_type *mtp)
{
	return mtp->mt_flags;
}

/* The older name, for SLAB entries: the same flags. */
uint64_t
memstat_get_slab_flags(const struct memory_type *mtp)
{
	return memstat_get_flags(mtp);
}

int
memstat_mtl_incomplete(const struct memory_type_list *list)
{
	int a;

	for (a = 0; a < MTL_NALLOC; a++)
		if (list->mtl_cut[a])
			return 1;
	return 0;
}
