/*
 * uma.c - UMA zone statistics (vmstat -z) and memstat_kvm_all.
 *
 * Zones are reached through uma_kegs (each keg's uk_zones list) and, for
 * cache-only zones that have no keg, through uma_cachezones - libmemstat's
 * kvm path forgets those.  Layout is detected from DWARF: a 13+ kernel
 * embeds the per-CPU bucket records in struct uma_cache (uc_allocbucket has
 * ucb_cnt) and keeps the per-domain zone records after uz_cpu[mp_maxid+1];
 * counters are counter(9), per-CPU u64s at a __pcpu-relative offset.
 *
 * Statistics per zone, with libmemstat's semantics where they are right and
 * the fix where they are not:
 *   numallocs/numfrees/failures/xdomain = counters summed over present CPUs
 *     (numallocs clamped up to numfrees: the counters are not read atomically),
 *     plus each present CPU's cache uc_allocs/uc_frees unless the keg is
 *     INTERNAL;
 *   free = cached items (alloc, free and cross buckets of each present CPU,
 *     also kept per CPU) + full buckets on the zone's domain lists (zonefree)
 *     + the keg's free items (kegfree) counted once per keg, on its primary
 *     zone (libmemstat's test is inverted);
 *   size = keg item size, rsize = real size, countlimit = uz_max_items.
 *
 * A partial dump keeps every zone it can reach: one whose name is not in the
 * dump keeps its row flagged MEMSTAT_NAME_UNREADABLE; one whose counters,
 * per-CPU caches, buckets, domain records or keg domains are not keeps it
 * flagged MEMSTAT_COUNTS_UNREADABLE with its counts 0 (zone_unknown); a keg
 * or zone that cannot be read cuts its list there (the kegs, a keg's zones,
 * the cache-only zones): the rows before stand, the walk goes on with the
 * next list, and the list says it is incomplete (memstat_mtl_incomplete).
 * Each cause is a warning naming the zone, its address and the physical
 * page.
 *
 * This file owns the walk of the kegs and zones and the readers of their
 * counters, caches, buckets and domain records; the layout they are read
 * with is resolved by uma_layout.c.
 */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "freebsd.h"
#include "memstat_internal.h"
#include "uma_internal.h"

#define MAX_KEGS 100000
#define MAX_BUCKETS 1000000
#define SECONDARY 0x200
#define INTERNAL 0x20000000

/* counter(9): sum of the present CPUs' copies; unreadable -> error. */
static int
counter_fetch(kvs_t *kd, const struct ulayout *L, const struct kcpus *cpus, uint64_t off,
    uint64_t *sum)
{
	int c;

	*sum = 0;
	if (off == 0)
		return 0;
	for (c = 0; c <= cpus->maxid; c++) {
		uint64_t v;
		if (!kcpu_present(cpus, c))
			continue;
		if (kread_u64(kd, L->pcpu_base + off + (uint64_t)c * 4096, &v) != 0)
			return kerr_push(&kd->err, "counter(9) of CPU %d", c);
		*sum += v;
	}
	return 0;
}

/* Zones not readable and the zone a read of a list reached, as returned by
 * zone_entry and the zone readers: -1 failed (error set), 1 the zone itself
 * is not in the dump (its list is cut there; error set). */
#define ZONE_CUT 1

/* How a warning names a zone: its name, or ? when that is not readable. */
static const char *
zname(const struct memory_type *mt)
{
	return mt->mt_name[0] != '\0' ? mt->mt_name : "?";
}

/* Read a zone's fixed part (*zbp: where it lies in the dump, or a copy in
 * zb), find its entry (identity: the zone's address) and refresh the name
 * only when its pointer moved or the last refresh could not read it. */
static int
zone_entry(kvs_t *kd, struct memory_type_list *l, const struct ulayout *L, uint64_t z,
    uint8_t *zcopy, const uint8_t **zbp, uint64_t *next, struct memory_type **mtp)
{
	struct memory_type *mt;
	const uint8_t *zb;
	uint64_t nameptr;
	int is_new;

	if ((zb = kvs_peek(kd, z, L->zone_size)) == NULL) {
		if (kvs_read(kd, z, zcopy, L->zone_size) != 0)
			return ZONE_CUT;
		zb = zcopy;
	}
	*zbp = zb;
	*next = kfield_get(zb, L->zone_size, &L->uz_link);
	*mtp = mt = mtl_upsert(l, ALLOCATOR_UMA, z, &is_new);
	if (mt == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	nameptr = kfield_get(zb, L->zone_size, &L->uz_name);
	if (is_new || mt->mt_namekey != nameptr || mt->mt_name[0] == '\0') {
		char name[MEMTYPE_MAXNAME];
		if (kvs_read_string(kd, nameptr, name, sizeof(name), NULL) < 0) {
			/* A partial dump: the row stays, without its name. */
			kvs_warn_lost(kd, "zone at 0x%llx: its name (at 0x%llx) is not readable: %s",
			    (unsigned long long)z, (unsigned long long)nameptr, kvs_geterr(kd));
			kerr_clear(&kd->err);
			name[0] = '\0';
		}
		mtl_set_name(mt, name, nameptr);
	}
	if (mt->mt_name[0] == '\0')
		mt->mt_flags |= MEMSTAT_NAME_UNREADABLE;
	return 0;
}

/* Totals every layout derives the same way from requests and frees. */
static void
finish_zone(struct memory_type *mt, uint64_t a, uint64_t f, int ndomains)
{
	mt->mt_ndomains = (unsigned)(ndomains < MEMSTAT_MAXDOMAINS ? ndomains : MEMSTAT_MAXDOMAINS);
	mt->mt_numallocs = a;
	mt->mt_numfrees = f;
	mt->mt_byteslimit = mt->mt_countlimit * mt->mt_size;
	mt->mt_memalloced = a * mt->mt_size;
	mt->mt_memfreed = f * mt->mt_size;
	mt->mt_bytes = mt->mt_memalloced - mt->mt_memfreed;
	mt->mt_count = a - f;
	mt->mt_free += mt->mt_zonefree + mt->mt_kegfree;
}

/* A zone whose counts the dump does not hold (the error on the handle says
 * what): flagged, and why; every count 0, the figures of the zone and keg
 * themselves (sizes, limit, sleeps) kept. */
static void
zone_unknown(kvs_t *kd, struct memory_type *mt, int ndomains)
{
	unsigned c;

	kvs_warn_lost(kd, "zone \"%s\" at 0x%llx: its counts are not readable: %s", zname(mt),
	    (unsigned long long)mt->mt_kaddr, kvs_geterr(kd));
	kerr_clear(&kd->err);
	mt->mt_flags |= MEMSTAT_COUNTS_UNREADABLE;
	mt->mt_free = mt->mt_zonefree = mt->mt_kegfree = 0;
	mt->mt_failures = mt->mt_xdomain = 0;
	memset(mt->mt_dom_zonefree, 0, sizeof(mt->mt_dom_zonefree));
	memset(mt->mt_dom_kegfree, 0, sizeof(mt->mt_dom_kegfree));
	for (c = 0; mt->mt_percpu_valid && c < mt->mt_maxcpus; c++)
		mt->mt_percpu_cache[c].mtp_free = 0;
	finish_zone(mt, 0, 0, ndomains);
}

/*
 * 13+: the counter(9) sums of every zone are read after the walk.  Counters
 * are u64 slots of per-CPU pages, allocated side by side, each CPU's copy a
 * page further: a run of neighbouring slots is one read per CPU, not one per
 * counter and CPU.  The walk keeps, per zone, its entry, its counters'
 * offsets and what its caches added, in the list's working space.
 */
#define NCTR 4                            /* allocs, frees, fails, xdomain */
#define CTR_STRIDE 4096                   /* one page per CPU */

struct uitem {
	struct memory_type *mt;
	uint64_t off[NCTR];               /* counter(9) offsets from __pcpu */
	uint64_t sum[NCTR];
	uint64_t ca, cf;                  /* the caches' uc_allocs and uc_frees */
	bool unread;                      /* counts not readable: zone_unknown */
};

struct upending {
	struct memory_type_list *list;
	struct uitem *item;               /* mtl_scratch 0, in walk order */
	struct krec *rec;                 /* mtl_scratch 1 */
	size_t n, cap, nrec, caprec;
};

static struct uitem *
upending_add(kvs_t *kd, struct upending *pd, struct memory_type *mt)
{
	struct uitem *it;

	if (pd->n == pd->cap) {
		size_t cap = pd->cap ? pd->cap * 2 : 256;
		if (cap > UINT32_MAX || (it = mtl_scratch(pd->list, 0, cap * sizeof(*it))) == NULL) {
			kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
			return NULL;
		}
		pd->item = it;
		pd->cap = cap;
	}
	if (pd->nrec + NCTR > pd->caprec) {
		size_t cap = pd->caprec ? pd->caprec * 2 : 1024;
		struct krec *r = mtl_scratch(pd->list, 1, cap * sizeof(*r));
		if (r == NULL) {
			kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
			return NULL;
		}
		pd->rec = r;
		pd->caprec = cap;
	}
	it = &pd->item[pd->n++];
	memset(it, 0, sizeof(*it));
	it->mt = mt;
	return it;
}

/* Counter k of the last zone added lives at offset `off` (0: none). */
static void
upending_counter(const struct ulayout *L, struct upending *pd, int k, uint64_t off)
{
	pd->item[pd->n - 1].off[k] = off;
	if (off == 0)
		return;
	pd->rec[pd->nrec].addr = L->pcpu_base + off;
	pd->rec[pd->nrec].item = (uint32_t)(pd->n - 1);
	pd->rec[pd->nrec].slot = (uint32_t)k;
	pd->nrec++;
}

static void
upending_finish(const struct ulayout *L, struct upending *pd)
{
	size_t i;

	for (i = 0; i < pd->n; i++) {
		struct uitem *it = &pd->item[i];
		uint64_t a = it->sum[0], f = it->sum[1];
		if (it->unread)
			continue;               /* zone_unknown did it */
		if (a < f)
			a = f;
		it->mt->mt_failures = it->sum[2];
		it->mt->mt_xdomain = it->sum[3];
		finish_zone(it->mt, a + it->ca, f + it->cf, L->ndomains);
	}
}

static int
upending_counters(kvs_t *kd, const struct ulayout *L, const struct kcpus *cpus,
    struct upending *pd)
{
	/* A run of neighbouring counters, CPU after CPU: summed where it lies
	 * in the dump (kvs_peek) or from a copy, into one sum per counter of
	 * the run, kept side by side. */
	size_t i, j, k, need = CTR_STRIDE + (CTR_STRIDE / 8 + 1) * sizeof(uint64_t);
	uint8_t *buf;
	uint64_t *acc;
	int c;

	for (i = 0; i < pd->n; i++)
		memset(pd->item[i].sum, 0, sizeof(pd->item[i].sum));
	if (need < pd->nrec * sizeof(struct krec))
		need = pd->nrec * sizeof(struct krec);
	/* The working space is first the sort's. */
	if ((buf = mtl_scratch(pd->list, 2, need)) == NULL)
		goto per_zone;
	mtl_sort_recs(pd->list, MTL_SCRATCH_UMA_MEMO, pd->rec, pd->nrec, (struct krec *)(void *)buf);
	acc = (uint64_t *)(void *)(buf + CTR_STRIDE);
	for (i = 0; i < pd->nrec; i = j) {
		uint64_t lo = pd->rec[i].addr, hi;
		size_t len;
		j = krec_run(pd->rec, pd->nrec, i, 8, CTR_STRIDE, &hi);
		/* Counters that overlap (a corrupt dump: zones sharing them)
		 * could make a run longer than its sums' room. */
		if (j - i > CTR_STRIDE / 8 + 1)
			j = i + CTR_STRIDE / 8 + 1;
		len = (size_t)(hi - lo);
		memset(acc, 0, (j - i) * sizeof(*acc));
		for (c = 0; c <= cpus->maxid; c++) {
			const uint8_t *src;
			if (!kcpu_present(cpus, c))
				continue;
			src = kvs_peek(kd, lo + (uint64_t)c * CTR_STRIDE, len);
			if (src == NULL) {
				if (kvs_read(kd, lo + (uint64_t)c * CTR_STRIDE, buf, len) != 0)
					goto per_zone;
				src = buf;
			}
			for (k = i; k < j; k++) {
				uint64_t v;
				memcpy(&v, src + (pd->rec[k].addr - lo), 8);
				acc[k - i] += le64toh(v);
			}
		}
		for (k = i; k < j; k++)
			pd->item[pd->rec[k].item].sum[pd->rec[k].slot] += acc[k - i];
	}
	upending_finish(L, pd);
	return 0;

per_zone:
	/* Something in a run could not be read: zone by zone, counter by
	 * counter, so that an error names the first zone and CPU that fail. */
	kerr_clear(&kd->err);
	for (i = 0; i < pd->n; i++) {
		struct uitem *it = &pd->item[i];
		for (k = 0; k < NCTR && !it->unread; k++)
			if (counter_fetch(kd, L, cpus, it->off[k], &it->sum[k]) != 0) {
				zone_unknown(kd, it->mt, L->ndomains);
				it->unread = true;
			}
	}
	upending_finish(L, pd);
	return 0;
}

static int
one_zone(kvs_t *kd, struct memory_type_list *l, const struct ulayout *L,
    const struct kcpus *cpus, uint64_t z, uint64_t keg, const uint8_t *kb, size_t kblen,
    bool primary, uint64_t *next, struct upending *pd)
{
	static const int ctr_of[NCTR] = { 0, 1, 2, 3 };
	const struct kfield *ctr[NCTR] = { &L->uz_allocs, &L->uz_frees, &L->uz_fails, &L->uz_xdomain };
	const struct kfield *bk[3] = { &L->uc_free, &L->uc_alloc, &L->uc_cross };
	uint8_t zcopy[1024];
	const uint8_t *zb;
	uint64_t v;
	struct memory_type *mt;
	struct uitem *it;
	int c, d, k;
	bool internal;

	if (L->zone_size > sizeof(zcopy) || L->cache_size > 256)
		return kerr_set(&kd->err, KVS_E_DATA, "UMA structures larger than expected");
	if ((k = zone_entry(kd, l, L, z, zcopy, &zb, next, &mt)) != 0)
		return k;
	if ((it = upending_add(kd, pd, mt)) == NULL)
		return -1;
	for (k = 0; k < NCTR; k++)
		upending_counter(L, pd, ctr_of[k], kfield_get(zb, L->zone_size, ctr[k]));
	mt->mt_sleeps = kfield_get(zb, L->zone_size, &L->uz_sleeps);
	mt->mt_countlimit = kfield_get(zb, L->zone_size, &L->uz_max);
	if (keg != 0) {
		mt->mt_size = kfield_get(kb, kblen, &L->uk_size);
		mt->mt_rsize = kfield_get(kb, kblen, &L->uk_rsize);
		internal = (kfield_get(kb, kblen, &L->uk_flags) & INTERNAL) != 0;
	} else {
		mt->mt_size = mt->mt_rsize = kfield_get(zb, L->zone_size, &L->uz_size);
		internal = false;
	}
	/* Per-CPU caches, present CPUs only, and the zone's domain records
	 * after them: one read when it fits the stack buffer (up to 512 CPUs),
	 * else one per CPU and domain. */
	uint8_t all[512 * 128 + 1024];
	uint64_t cpubase = z + L->uz_cpu.off, dombase = cpubase + (uint64_t)(cpus->maxid + 1) * L->cache_size;
	size_t span = (size_t)(cpus->maxid + 1) * L->cache_size;
	size_t domspan = (size_t)L->ndomains * L->zdom_size;
	bool whole = false, withdom = false;
	const uint8_t *allp = all;
	if (!internal && (allp = kvs_peek(kd, cpubase, span + domspan)) != NULL)
		whole = withdom = true;         /* where they lie in the dump */
	else if (!internal && span <= sizeof(all)) {
		allp = all;
		withdom = span + domspan <= sizeof(all) &&
		    kvs_read(kd, cpubase, all, span + domspan) == 0;
		whole = withdom || kvs_read(kd, cpubase, all, span) == 0;
		kerr_clear(&kd->err);           /* read CPU by CPU below */
	}
	/* Every slot below maxcpus is written, 0 for the CPUs not present and
	 * for INTERNAL zones (the list leaves them alone: MTL_PCPU_FILLED). */
	struct mt_percpu_cache_s *pc = mt->mt_percpu_valid ? mt->mt_percpu_cache : NULL;
	/* The layout, out of the loop: the offsets of the counters and of the
	 * buckets' counts in a cache record; sums kept in locals. */
	const bool plain = L->cache_plain;
	const size_t csz = L->cache_size, oa = L->uc_allocs.off, of = L->uc_frees.off;
	size_t ocnt[3], oent[3];
	int nb = 0, b;
	uint64_t ca = 0, cf = 0, free_sum = 0;
	for (k = 0; k < 3; k++)
		if (bk[k]->present) {
			ocnt[nb] = bk[k]->off + L->ucb_cnt.off;
			oent[nb++] = bk[k]->off + L->ucb_entries.off;
		}
	for (c = 0; c <= cpus->maxid; c++) {
		uint8_t cb[256];
		const uint8_t *cp = cb;
		uint64_t cached = 0;

		if (internal || !kcpu_present(cpus, c)) {
			if (pc != NULL)
				pc[c].mtp_free = 0;
			continue;
		}
		if (whole)
			cp = allp + (size_t)c * csz;
		else if (kvs_read(kd, cpubase + (uint64_t)c * csz, cb, csz) != 0) {
			kerr_push(&kd->err, "CPU %d cache", c);
			goto unreadable;
		}
		if (plain && nb == 3) {
			/* The usual layout: the three buckets' counts at once,
			 * each checked below only when one is out of range. */
			uint16_t x[3], y[3];
			int16_t c0, c1, c2;
			memcpy(&x[0], cp + ocnt[0], 2);
			memcpy(&x[1], cp + ocnt[1], 2);
			memcpy(&x[2], cp + ocnt[2], 2);
			memcpy(&y[0], cp + oent[0], 2);
			memcpy(&y[1], cp + oent[1], 2);
			memcpy(&y[2], cp + oent[2], 2);
			c0 = (int16_t)le16toh(x[0]);
			c1 = (int16_t)le16toh(x[1]);
			c2 = (int16_t)le16toh(x[2]);
			if ((c0 | c1 | c2) >= 0 && c0 <= (int16_t)le16toh(y[0]) &&
			    c1 <= (int16_t)le16toh(y[1]) && c2 <= (int16_t)le16toh(y[2])) {
				cached = (uint64_t)c0 + (uint64_t)c1 + (uint64_t)c2;
				goto counted;
			}
		}
		for (b = 0; b < nb; b++) {
			int16_t cnt, ent;
			if (plain) {
				uint16_t x, y;
				memcpy(&x, cp + ocnt[b], 2);
				memcpy(&y, cp + oent[b], 2);
				cnt = (int16_t)le16toh(x);
				ent = (int16_t)le16toh(y);
			} else {
				cnt = (int16_t)kfield_get(cp + ocnt[b] - L->ucb_cnt.off,
				    csz - (ocnt[b] - L->ucb_cnt.off), &L->ucb_cnt);
				ent = (int16_t)kfield_get(cp + oent[b] - L->ucb_entries.off,
				    csz - (oent[b] - L->ucb_entries.off), &L->ucb_entries);
			}
			if (cnt < 0 || cnt > ent) {
				kvs_warn(kd, "zone %s: CPU %d bucket holds %d items but has room for %d; "
				    "not counted", mt->mt_name, c, cnt, ent);
				continue;
			}
			cached += (uint64_t)cnt;
		}
counted:
		if (plain) {
			uint64_t x, y;
			memcpy(&x, cp + oa, 8);
			memcpy(&y, cp + of, 8);
			ca += le64toh(x);
			cf += le64toh(y);
		} else {
			ca += kfield_get(cp, csz, &L->uc_allocs);
			cf += kfield_get(cp, csz, &L->uc_frees);
		}
		if (pc != NULL)
			pc[c].mtp_free = cached;
		free_sum += cached;
	}
	it->ca += ca;
	it->cf += cf;
	mt->mt_free += free_sum;
	/* Full buckets on each domain's list. */
	for (d = 0; d < L->ndomains; d++) {
		uint64_t dom = dombase + (uint64_t)d * L->zdom_size;
		struct kwalk w;
		if (withdom)
			v = kfield_get(allp + span + (size_t)d * L->zdom_size, L->zdom_size, &L->uzd_buckets);
		else if (kread_u64(kd, dom + L->uzd_buckets.off, &v) != 0) {
			kerr_push(&kd->err, "domain %d", d);
			goto unreadable;
		}
		kwalk_init(&w, MAX_BUCKETS);
		for (; v != 0;) {
			uint8_t bb[32];
			if (kwalk_step(kd, &w, v, "zone bucket") != 0)
				return kerr_push(&kd->err, "buckets of zone %s", zname(mt));
			if (kvs_read(kd, v, bb, sizeof(bb)) != 0) {
				kerr_push(&kd->err, "bucket at 0x%llx", (unsigned long long)v);
				goto unreadable;
			}
			int16_t cnt = (int16_t)kfield_get(bb, sizeof(bb), &L->ub_cnt);
			if (cnt > 0) {
				mt->mt_zonefree += (uint64_t)cnt;
				if (d < MEMSTAT_MAXDOMAINS)
					mt->mt_dom_zonefree[d] += (uint64_t)cnt;
			}
			v = kfield_get(bb, sizeof(bb), &L->ub_link);
		}
	}
	if (keg != 0 && primary) {
		/* The keg's domain records: one read, else one per domain. */
		uint8_t kd_all[64 * 64];
		uint64_t kdbase = keg + L->uk_domain.off;
		size_t kdspan = (size_t)L->ndomains * L->kdom_size;
		bool kwhole = kdspan <= sizeof(kd_all) && L->ud_free.off + 4 <= L->kdom_size &&
		    kvs_read(kd, kdbase, kd_all, kdspan) == 0;
		for (d = 0; d < L->ndomains; d++) {
			uint32_t fi;
			if (kwhole) {
				memcpy(&fi, kd_all + (size_t)d * L->kdom_size + L->ud_free.off, 4);
				fi = le32toh(fi);
			} else if (kread_u32(kd, kdbase + (uint64_t)d * L->kdom_size + L->ud_free.off,
			    &fi) != 0) {
				kerr_push(&kd->err, "domain %d of its keg at 0x%llx", d,
				    (unsigned long long)keg);
				goto unreadable;
			}
			mt->mt_kegfree += fi;
			if (d < MEMSTAT_MAXDOMAINS)
				mt->mt_dom_kegfree[d] = fi;
		}
	}
	return 0;

unreadable:
	zone_unknown(kd, mt, L->ndomains);
	it->unread = true;
	return 0;
}

/* A bucket's item count, checked against its capacity. */
static int
bucket_count(kvs_t *kd, const struct ulayout *L, uint64_t b, const char *zone, int cpu,
    uint64_t *cnt, uint64_t *next)
{
	uint8_t bb[32];
	int16_t c, e;

	if (kvs_read(kd, b, bb, sizeof(bb)) != 0)
		return kerr_push(&kd->err, "bucket at 0x%llx", (unsigned long long)b);
	c = (int16_t)kfield_get(bb, sizeof(bb), &L->ub_cnt);
	e = (int16_t)kfield_get(bb, sizeof(bb), &L->ucb_entries);
	if (next != NULL)
		*next = kfield_get(bb, sizeof(bb), &L->ub_link);
	if (c < 0 || (e > 0 && c > e)) {
		kvs_warn(kd, "zone %s: %s%d bucket holds %d items but has room for %d; not counted",
		    zone, cpu >= 0 ? "CPU " : "domain list ", cpu >= 0 ? cpu : 0, c, e);
		*cnt = 0;
	} else
		*cnt = (uint64_t)c;
	return 0;
}

/* One zone of a <= 12 kernel. */
static int
one_zone_old(kvs_t *kd, struct memory_type_list *l, const struct ulayout *L,
    const struct kcpus *cpus, uint64_t z, const uint8_t *kb, size_t kblen, bool primary,
    uint64_t *next)
{
	uint8_t zcopy[1024], cb[256];
	const uint8_t *zb;
	uint64_t a, f, v, cnt;
	struct memory_type *mt;
	int c, d;
	bool internal = (kfield_get(kb, kblen, &L->uk_flags) & INTERNAL) != 0;
	int ndom = L->gen == 11 ? 1 : L->ndomains, r;

	if (L->zone_size > sizeof(zcopy) || L->cache_size > sizeof(cb))
		return kerr_set(&kd->err, KVS_E_DATA, "UMA structures larger than expected");
	if ((r = zone_entry(kd, l, L, z, zcopy, &zb, next, &mt)) != 0)
		return r;
	mt->mt_size = kfield_get(kb, kblen, &L->uk_size);
	mt->mt_rsize = kfield_get(kb, kblen, &L->uk_rsize);
	mt->mt_sleeps = kfield_get(zb, L->zone_size, &L->uz_sleeps);
	if (L->gen == 12) {
		mt->mt_countlimit = kfield_get(zb, L->zone_size, &L->uz_max);
		/* counter(9) pointers: CPU c's copy at + c * 4096 (pcpu_base is 0). */
		if (counter_fetch(kd, L, cpus, kfield_get(zb, L->zone_size, &L->uz_allocs), &a) ||
		    counter_fetch(kd, L, cpus, kfield_get(zb, L->zone_size, &L->uz_frees), &f) ||
		    counter_fetch(kd, L, cpus, kfield_get(zb, L->zone_size, &L->uz_fails), &mt->mt_failures))
			goto unreadable;
	} else {
		uint64_t maxpages = kfield_get(kb, kblen, &L->uk_maxpages);
		uint64_t ppera = kfield_get(kb, kblen, &L->uk_ppera), ipers = kfield_get(kb, kblen, &L->uk_ipers);
		a = kfield_get(zb, L->zone_size, &L->uz_allocs);
		f = kfield_get(zb, L->zone_size, &L->uz_frees);
		mt->mt_failures = kfield_get(zb, L->zone_size, &L->uz_fails);
		/* Items a page limit allows (libmemstat divides by ipers for
		 * multi-page items; pages per item is what divides). */
		mt->mt_countlimit = ppera > 1 ? maxpages / ppera : maxpages * ipers;
	}
	if (a < f)
		a = f;
	for (c = 0; c <= cpus->maxid && !internal; c++) {
		uint64_t cached = 0, b;
		if (!kcpu_present(cpus, c))
			continue;
		if (kvs_read(kd, z + L->uz_cpu.off + (uint64_t)c * L->cache_size, cb, L->cache_size) != 0) {
			kerr_push(&kd->err, "CPU %d cache", c);
			goto unreadable;
		}
		a += kfield_get(cb, L->cache_size, &L->uc_allocs);
		f += kfield_get(cb, L->cache_size, &L->uc_frees);
		if ((b = kfield_get(cb, L->cache_size, &L->uc_alloc)) != 0) {
			if (bucket_count(kd, L, b, zname(mt), c, &cnt, NULL) != 0)
				goto unreadable;
			cached += cnt;
		}
		if ((b = kfield_get(cb, L->cache_size, &L->uc_free)) != 0) {
			if (bucket_count(kd, L, b, zname(mt), c, &cnt, NULL) != 0)
				goto unreadable;
			cached += cnt;
		}
		if (mt->mt_percpu_valid)
			mt->mt_percpu_cache[c].mtp_free = cached;
		mt->mt_free += cached;
	}
	for (d = 0; d < (L->gen == 12 ? L->ndomains : 1); d++) {
		struct kwalk w;
		if (L->gen == 12) {
			uint64_t doms = kfield_get(zb, L->zone_size, &L->uz_domain);
			if (kread_u64(kd, doms + (uint64_t)d * L->zdom_size + L->uzd_buckets.off, &v) != 0) {
				kerr_push(&kd->err, "domain %d", d);
				goto unreadable;
			}
		} else
			v = kfield_get(zb, L->zone_size, &L->uz_buckets);
		kwalk_init(&w, MAX_BUCKETS);
		while (v != 0) {
			uint64_t nx;
			if (kwalk_step(kd, &w, v, "zone bucket") != 0)
				return kerr_push(&kd->err, "buckets of zone %s", zname(mt));
			if (bucket_count(kd, L, v, zname(mt), -1, &cnt, &nx) != 0)
				goto unreadable;
			mt->mt_zonefree += cnt;
			if (d < MEMSTAT_MAXDOMAINS)
				mt->mt_dom_zonefree[d] += cnt;
			v = nx;
		}
	}
	if (primary)
		mt->mt_kegfree = mt->mt_dom_kegfree[0] = kfield_get(kb, kblen, &L->uk_free);
	finish_zone(mt, a, f, ndom);
	return 0;

unreadable:
	zone_unknown(kd, mt, ndom);
	return 0;
}

/* The refresh itself; its warnings add to the handle's (memstat_kvm_all
 * keeps the malloc walk's before them). */
static int
uma_refresh(struct memory_type_list *list, kvs_t *kd)
{
	struct ulayout L;
	struct kcpus cpus;
	struct kwalk kw;
	uint64_t k, z, headsym, prev = 0;
	uint8_t kcopy[512];
	const uint8_t *kb = kcopy;
	uint64_t keg_size;
	struct upending pend = { list, NULL, NULL, 0, 0, 0, 0 };
	struct kvs_error saved;

	kerr_clear(&kd->err);
	kvs_tlb_flush(kd);
	if (kvs_symbol(kd, "uma_kegs", &headsym, NULL) != 0) {
		list->mtl_error = MEMSTAT_ERROR_KVM_NOSYMBOL;
		return -1;
	}
	if (uma_layout(kd, &L, &keg_size) != 0 || kcpus_read(kd, &cpus) != 0 ||
	    keg_size > sizeof(kcopy)) {
		list->mtl_error = kvs_errstatus(kd) == KVS_E_VERSION ? MEMSTAT_ERROR_VERSION :
		    MEMSTAT_ERROR_KVM;
		return -1;
	}
	if (mtl_refresh_begin(list, ALLOCATOR_UMA, (unsigned)cpus.maxid + 1) != 0)
		return -1;
	/* UMA keeps no per-CPU allocation counters; 13+ writes every cache
	 * slot (one_zone). */
	list->mtl_fill_alloc = MTL_PCPU_UNUSED;
	if (L.gen == 13)
		list->mtl_fill_cache = MTL_PCPU_FILLED;
	if (kread_u64(kd, headsym, &k) != 0)
		goto walk_failed;
	kwalk_init(&kw, kvs_dump_bound(kd, keg_size, MAX_KEGS));
	for (; k != 0; prev = k, k = kfield_get(kb, keg_size, &L.uk_link)) {
		struct kwalk zw;
		bool first = true;
		uint64_t zprev = 0;
		if (kwalk_step(kd, &kw, k, "uma_kegs") != 0)
			goto walk_failed;
		/* Where the keg lies in the dump, or a copy. */
		if ((kb = kvs_peek(kd, k, keg_size)) == NULL) {
			if (kvs_read(kd, k, kcopy, keg_size) != 0) {
				/* A partial dump: the kegs before stand. */
				mtl_list_cut(list, kd, "uma_kegs", k, prev,
				    "its zones and the kegs after it");
				break;
			}
			kb = kcopy;
		}
		bool secondary = (kfield_get(kb, keg_size, &L.uk_flags) & SECONDARY) != 0;
		kwalk_init(&zw, kvs_dump_bound(kd, L.zone_size, MAX_KEGS));
		for (z = kfield_get(kb, keg_size, &L.uk_zones); z != 0; first = false) {
			uint64_t next;
			int r;
			if (kwalk_step(kd, &zw, z, "keg zone") != 0)
				goto walk_failed;
			r = L.gen == 13 ? one_zone(kd, list, &L, &cpus, z, k, kb, keg_size,
			    !secondary || first, &next, &pend) : one_zone_old(kd, list, &L, &cpus, z, kb,
			    keg_size, !secondary || first, &next);
			if (r == ZONE_CUT) {
				char name[64];
				snprintf(name, sizeof(name), "the zone list of the keg at 0x%llx",
				    (unsigned long long)k);
				mtl_list_cut(list, kd, name, z, zprev, "the keg's zones after it");
				break;
			}
			if (r != 0)
				goto walk_failed;
			zprev = z;
			z = next;
		}
	}
	/* Cache-only zones (13+ keeps them on their own list). */
	if (L.gen == 13 && kvs_symbol(kd, "uma_cachezones", &headsym, NULL) == 0) {
		struct kwalk zw;
		if (kread_u64(kd, headsym, &z) != 0)
			goto walk_failed;
		kwalk_init(&zw, kvs_dump_bound(kd, L.zone_size, MAX_KEGS));
		prev = 0;
		while (z != 0) {
			uint64_t next;
			int r;
			if (kwalk_step(kd, &zw, z, "uma_cachezones") != 0)
				goto walk_failed;
			r = one_zone(kd, list, &L, &cpus, z, 0, NULL, 0, false, &next, &pend);
			if (r == ZONE_CUT) {
				mtl_list_cut(list, kd, "uma_cachezones", z, prev, "the zones after it");
				break;
			}
			if (r != 0)
				goto walk_failed;
			prev = z;
			z = next;
		}
	} else
		kerr_clear(&kd->err);
	if (pend.n > 0 && upending_counters(kd, &L, &cpus, &pend) != 0)
		goto fail;
	mtl_refresh_commit(list, ALLOCATOR_UMA);
	return 0;
walk_failed:
	/* The zones before the failure would have had their counters read
	 * first: an error there is the one to report. */
	saved = kd->err;
	if (pend.n > 0 && upending_counters(kd, &L, &cpus, &pend) != 0)
		goto fail;
	kd->err = saved;
fail:
	mtl_refresh_abort(list, ALLOCATOR_UMA, MEMSTAT_ERROR_KVM);
	return -1;
}

int
memstat_kvm_uma(struct memory_type_list *list, void *kvm_handle)
{
	kvs_t *kd = kvm_handle;

	kd->nwarn = 0;          /* warnings of this walk only */
	return uma_refresh(list, kd);
}

/* FreeBSD's memstat_kvm_all(): malloc(9) types, then UMA zones; the
 * warnings of both. */
int
freebsd_memstat_all(struct memory_type_list *list, kvs_t *kd)
{
	if (memstat_kvm_malloc(list, kd) != 0)
		return -1;
	return uma_refresh(list, kd);
}
