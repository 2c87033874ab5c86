/*
 * uma_items.c - UMA items one by one: what zone, slab and item an address
 * is (whatis), and every item of a zone with its state (kvs_slab_objects).
 *
 * An address leads to its physical page (kvs_kvtop) and so to its struct
 * vm_page, vm_page_array[pfn - first_page].  The page names its slab: 13+
 * in plinks.uma.slab (and the zone in plinks.uma.zone), 12 and before in
 * plinks.s.pv (the slab names its keg in us_keg).  Kegs whose pages do not
 * name the slab are searched: every keg's partial, free and full slab
 * lists (per domain in uk_domain[] on 12+, in the keg itself on 11), each
 * walk bounded.  A slab's items start at us_data (12 and 11) or uk_pgoff
 * bytes below the slab header (13+: the header ends the page); its free
 * bitset (us_free, set = free) holds what the keg has free.  An item the
 * slab counts as taken is still free when a bucket holds it: a present
 * CPU's alloc, free or cross bucket (embedded records on 13+, pointers on
 * 12 and 11), or a full bucket of the zone's bucket cache (per domain after
 * uz_cpu[] on 13+, behind uz_domain on 12, the zone's one list on 11), for
 * every zone of the keg.  Everything is told apart by members of the types.
 *
 * This file owns the slab layout (its memo), the walk of kegs, slabs and
 * buckets, and the item's answer; uma_layout.c resolves the zone and keg
 * records it starts from; kstack.c finds thread stacks.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census.h"
#include "freebsd.h"
#include "uma_internal.h"

#define PAGE_SZ 4096ULL
#define MAX_ZONES 65536
#define MAX_SLABS (1ULL << 22)
#define MAX_BUCKETS (1ULL << 20)
#define MAX_IN_BUCKET 65536
#define MAX_IPERS 65536
#define MAX_HDR 16384

struct ilayout {
	struct ulayout U;
	uint64_t keg_size, slab_size, page_size, kdom_size;
	struct kfield uk_ipers, uk_pgoff, uk_dom, lists[3];
	bool lists_in_keg;              /* 11: uk_part_slab... in the keg */
	struct kfield us_link, us_freecount, us_free, us_keg, us_data;
	struct kfield ub_bucket, ucb_bucket, pg_slab, pg_zone;
};

static const char *const list_name[3] = { "part", "free", "full" };

static int
resolve(kvs_t *kd, struct ilayout *X)
{
	static const char K[] = "struct uma_keg", S[] = "struct uma_slab";
	struct kvs_typeinfo ti;
	char path[64];
	int i;

	if (kvs_type(kd, S, &ti) != 0)
		return kerr_push(&kd->err, "UMA items: struct uma_slab is needed");
	X->slab_size = ti.size;
	if (kvs_type(kd, "struct vm_page", &ti) != 0)
		return kerr_push(&kd->err, "UMA items: struct vm_page is needed");
	X->page_size = ti.size;
	if (kfield(kd, S, "us_link.le_next", &X->us_link, false) != 0)
		return -1;
	if (!X->us_link.present && kfield(kd, S, "us_type._us_link.le_next", &X->us_link, true))
		return kerr_push(&kd->err, "UMA items: the slab's link");
	if (kfield(kd, S, "us_freecount", &X->us_freecount, true) ||
	    kfield(kd, S, "us_free", &X->us_free, true) ||
	    kfield(kd, S, "us_keg", &X->us_keg, false) || kfield(kd, S, "us_data", &X->us_data, false) ||
	    kfield(kd, K, "uk_ipers", &X->uk_ipers, true) || kfield(kd, K, "uk_pgoff", &X->uk_pgoff, true) ||
	    kfield(kd, "struct uma_bucket", "ub_bucket", &X->ub_bucket, true) ||
	    kfield(kd, "struct vm_page", "plinks.uma.zone", &X->pg_zone, false))
		return kerr_push(&kd->err, "UMA items layout");
	if (kfield(kd, "struct vm_page", X->pg_zone.present ? "plinks.uma.slab" : "plinks.s.pv",
	    &X->pg_slab, true))
		return kerr_push(&kd->err, "UMA items: the page's slab");
	if (X->U.gen == 13 && kfield(kd, "struct uma_cache_bucket", "ucb_bucket", &X->ucb_bucket, true))
		return kerr_push(&kd->err, "UMA items layout");
	if (kfield(kd, K, "uk_part_slab.lh_first", &X->lists[0], false) != 0)
		return -1;
	X->lists_in_keg = X->lists[0].present;
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s_%s_slab.lh_first", X->lists_in_keg ? "uk" : "ud",
		    list_name[i]);
		if (kfield(kd, X->lists_in_keg ? K : "struct uma_domain", path, &X->lists[i], true))
			return kerr_push(&kd->err, "UMA items: the keg's slab lists");
	}
	if (!X->lists_in_keg) {
		if (kfield(kd, K, "uk_domain", &X->uk_dom, true) ||
		    kvs_type(kd, "struct uma_domain", &ti) != 0)
			return kerr_push(&kd->err, "UMA items: the keg's domains");
		X->kdom_size = ti.size;
	}
	return 0;
}

static int
ilayout(kvs_t *kd, struct ilayout *X)
{
	static const char memo_tag;
	struct imemo {
		bool ok;
		struct ilayout X;
	} *m = kvs_memo(kd, &memo_tag, sizeof(*m));
	struct ulayout U;
	uint64_t ks;

	if (uma_layout(kd, &U, &ks) != 0)
		return -1;
	if (m != NULL && m->ok) {
		*X = m->X;
	} else {
		memset(X, 0, sizeof(*X));
		X->U = U;
		if (resolve(kd, X) != 0)
			return -1;
		if (m != NULL) {
			m->X = *X;
			m->ok = true;
		}
	}
	X->U = U;                       /* vm_ndomains, __pcpu: read each time */
	X->keg_size = ks;
	return 0;
}

/* Every (keg, zone) pair, kegs in uma_kegs order, zones in uk_zones order. */
struct izone {
	uint64_t keg, zone;
	bool primary;                   /* first on its keg's uk_zones */
};
struct iscan {
	struct ilayout X;
	struct kcpus cpus;
	struct izone *z;
	size_t nz;
	/* The items buckets hold, for one keg, sorted by address. */
	struct citem {
		uint64_t addr;
		kvs_obj_state_t state;
		int cpu;
	} *c;
	size_t nc, capc;
	uint64_t cached_keg;
	bool incomplete;
};

static void
iscan_free(struct iscan *s)
{
	free(s->z);
	free(s->c);
}

static int
iscan_init(kvs_t *kd, struct iscan *s)
{
	uint64_t keg, head;
	struct kwalk wk;
	size_t cap = 0;

	memset(s, 0, sizeof(*s));
	if (ilayout(kd, &s->X) != 0 || kcpus_read(kd, &s->cpus) != 0)
		return -1;
	if (kvs_symbol(kd, "uma_kegs", &head, NULL) != 0 || kread_u64(kd, head, &keg) != 0)
		return kerr_push(&kd->err, "UMA kegs");
	kwalk_init(&wk, MAX_ZONES);
	for (; keg != 0; ) {
		struct kwalk wz;
		uint64_t z, next;
		if (kwalk_step(kd, &wk, keg, "uma_kegs") != 0 ||
		    kread_u64(kd, keg + s->X.U.uk_zones.off, &z) != 0)
			return -1;
		kwalk_init(&wz, MAX_ZONES);
		for (bool first = true; z != 0; first = false) {
			if (kwalk_step(kd, &wz, z, "uk_zones") != 0)
				return -1;
			if (s->nz == cap) {
				struct izone *n = realloc(s->z, (cap = cap ? cap * 2 : 64) * sizeof(*n));
				if (n == NULL)
					return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
				s->z = n;
			}
			s->z[s->nz++] = (struct izone){ .keg = keg, .zone = z, .primary = first };
			if (kread_u64(kd, z + s->X.U.uz_link.off, &z) != 0)
				return -1;
		}
		if (kread_u64(kd, keg + s->X.U.uk_link.off, &next) != 0)
			return -1;
		keg = next;
	}
	return 0;
}

static const struct izone *
zone_of(const struct iscan *s, uint64_t zone)
{
	size_t i;

	for (i = 0; i < s->nz; i++)
		if (s->z[i].zone == zone)
			return &s->z[i];
	return NULL;
}

static const struct izone *
keg_primary(const struct iscan *s, uint64_t keg)
{
	size_t i;

	for (i = 0; i < s->nz; i++)
		if (s->z[i].keg == keg && s->z[i].primary)
			return &s->z[i];
	return NULL;
}

/* ---- the items buckets hold -------------------------------------------- */

static int
cadd(kvs_t *kd, struct iscan *s, uint64_t b, int64_t cnt, kvs_obj_state_t st, int cpu)
{
	uint64_t *v;
	int64_t i;

	if (cnt == 0 || b == 0)
		return 0;
	if (cnt < 0 || cnt > MAX_IN_BUCKET)
		return kerr_set(&kd->err, KVS_E_DATA, "UMA bucket 0x%llx holds %lld items "
		    "(corrupt?)", (unsigned long long)b, (long long)cnt);
	if (s->nc + (size_t)cnt > s->capc) {
		size_t cap = (s->nc + (size_t)cnt) * 2;
		struct citem *n = realloc(s->c, cap * sizeof(*n));
		if (n == NULL)
			return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
		s->c = n;
		s->capc = cap;
	}
	v = malloc((size_t)cnt * 8);
	if (v == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	if (kvs_read(kd, b + s->X.ub_bucket.off, v, (size_t)cnt * 8) != 0) {
		free(v);
		return kerr_push(&kd->err, "items of UMA bucket 0x%llx", (unsigned long long)b);
	}
	for (i = 0; i < cnt; i++)
		s->c[s->nc++] = (struct citem){ .addr = le64toh(v[i]), .state = st, .cpu = cpu };
	free(v);
	return 0;
}

static int
bucket_list(kvs_t *kd, struct iscan *s, uint64_t head, const char *zname)
{
	struct kwalk wk;
	uint64_t b, cnt;

	if (kread_u64(kd, head, &b) != 0)
		return -1;
	kwalk_init(&wk, MAX_BUCKETS);
	for (; b != 0; ) {
		if (kwalk_step(kd, &wk, b, "bucket") != 0)
			return kerr_push(&kd->err, "zone %s's bucket cache", zname);
		if (kread_uint(kd, b + s->X.U.ub_cnt.off, 2, &cnt) != 0 ||
		    cadd(kd, s, b, (int16_t)cnt, KVS_OBJ_FREE_ZONE, -1) != 0 ||
		    kread_u64(kd, b + s->X.U.ub_link.off, &b) != 0)
			return -1;
	}
	return 0;
}

static int
citem_cmp(const void *a, const void *b)
{
	const struct citem *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The items every zone of `keg` keeps in buckets (present CPUs only). */
static int
cache_keg(kvs_t *kd, struct iscan *s, uint64_t keg)
{
	const struct ulayout *U = &s->X.U;
	size_t i;

	if (s->cached_keg == keg && keg != 0)
		return 0;
	s->nc = 0;
	s->cached_keg = 0;
	for (i = 0; i < s->nz; i++) {
		const struct kfield *bk[3] = { &U->uc_alloc, &U->uc_free, &U->uc_cross };
		uint64_t z = s->z[i].zone, p, cnt;
		char zname[64];
		int c, k, d;
		if (s->z[i].keg != keg)
			continue;
		if (kread_u64(kd, z + U->uz_name.off, &p) != 0 ||
		    kvs_read_string(kd, p, zname, sizeof(zname), NULL) < 0)
			snprintf(zname, sizeof(zname), "0x%llx", (unsigned long long)z);
		kerr_clear(&kd->err);
		for (c = 0; c <= s->cpus.maxid; c++) {
			uint64_t rec = z + U->uz_cpu.off + (uint64_t)c * U->cache_size;
			if (!kcpu_present(&s->cpus, c))
				continue;
			for (k = 0; k < 3; k++) {
				if (!bk[k]->present)
					continue;
				if (U->gen == 13) {
					if (kread_u64(kd, rec + bk[k]->off + s->X.ucb_bucket.off, &p) != 0 ||
					    kread_uint(kd, rec + bk[k]->off + U->ucb_cnt.off, 2, &cnt) != 0)
						return -1;
				} else if (kread_u64(kd, rec + bk[k]->off, &p) != 0 ||
				    (p != 0 && kread_uint(kd, p + U->ub_cnt.off, 2, &cnt) != 0))
					return -1;
				if (p != 0 && cadd(kd, s, p, (int16_t)cnt, KVS_OBJ_FREE_CPU, c) != 0)
					return kerr_push(&kd->err, "zone %s, CPU %d", zname, c);
			}
		}
		for (d = 0; d < (U->gen == 11 ? 1 : U->ndomains); d++) {
			uint64_t head;
			if (U->gen == 13)
				head = z + U->uz_cpu.off + (uint64_t)(s->cpus.maxid + 1) * U->cache_size +
				    (uint64_t)d * U->zdom_size + U->uzd_buckets.off;
			else if (U->gen == 12) {
				if (kread_u64(kd, z + U->uz_domain.off, &head) != 0)
					return -1;
				head += (uint64_t)d * U->zdom_size + U->uzd_buckets.off;
			} else
				head = z + U->uz_buckets.off;
			if (bucket_list(kd, s, head, zname) != 0)
				return -1;
		}
	}
	qsort(s->c, s->nc, sizeof(*s->c), citem_cmp);
	s->cached_keg = keg;
	return 0;
}

static const struct citem *
cached(const struct iscan *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nc;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->c[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nc && s->c[lo].addr == addr ? &s->c[lo] : NULL;
}

/* ---- kegs and slabs ----------------------------------------------------- */

struct ikeg {
	uint64_t keg;
	uint32_t ipers, rsize, pgoff;
};

static int
read_keg(kvs_t *kd, const struct iscan *s, uint64_t keg, struct ikeg *k)
{
	uint64_t v;

	k->keg = keg;
	if (kread_uint(kd, keg + s->X.uk_ipers.off, (unsigned)s->X.uk_ipers.size, &v) != 0)
		return -1;
	k->ipers = (uint32_t)v;
	if (kread_uint(kd, keg + s->X.U.uk_rsize.off, (unsigned)s->X.U.uk_rsize.size, &v) != 0)
		return -1;
	k->rsize = (uint32_t)v;
	if (kread_uint(kd, keg + s->X.uk_pgoff.off, (unsigned)s->X.uk_pgoff.size, &v) != 0)
		return -1;
	k->pgoff = (uint32_t)v;
	if (k->ipers == 0 || k->ipers > MAX_IPERS || k->rsize == 0)
		return kerr_set(&kd->err, KVS_E_DATA, "UMA keg 0x%llx: %u items of %u bytes per "
		    "slab (corrupt?)", (unsigned long long)keg, k->ipers, k->rsize);
	return 0;
}

struct islab {
	uint64_t addr, data, next;
	bool readable;                  /* header and bitset in the dump */
	unsigned freecount;
	uint8_t bits[MAX_IPERS / 8];
};

/* The slab at `addr` of keg k.  0 with sl->readable false when its header
 * is not in the dump (data then from uk_pgoff, 0 when it cannot be known),
 * -1 when it is there but impossible. */
static int
read_slab(kvs_t *kd, const struct iscan *s, const struct ikeg *k, uint64_t addr,
    struct islab *sl)
{
	const struct ilayout *X = &s->X;
	uint8_t hdr[MAX_HDR];
	size_t nb = (k->ipers + 7) / 8, len = X->slab_size;

	sl->addr = addr;
	sl->readable = false;
	sl->next = 0;
	sl->data = X->us_data.present ? 0 : addr - k->pgoff;
	if (X->us_data.present && k->pgoff != 0 && (addr & (PAGE_SZ - 1)) == k->pgoff)
		sl->data = addr - k->pgoff;           /* an inline slab's page */
	if (X->us_free.off + nb > len)
		len = X->us_free.off + nb;
	if (len > sizeof(hdr))
		return kerr_set(&kd->err, KVS_E_DATA, "UMA slab 0x%llx: a %u-item bitset is too "
		    "large", (unsigned long long)addr, k->ipers);
	if (kvs_read(kd, addr, hdr, len) != 0) {
		kerr_clear(&kd->err);
		return 0;
	}
	sl->readable = true;
	sl->next = kfield_get(hdr, len, &X->us_link);
	sl->freecount = (unsigned)kfield_get(hdr, len, &X->us_freecount);
	memcpy(sl->bits, hdr + X->us_free.off, nb);
	if (X->us_data.present)
		sl->data = kfield_get(hdr, len, &X->us_data);
	if (sl->freecount > k->ipers)
		return kerr_set(&kd->err, KVS_E_DATA, "UMA slab 0x%llx: free count %u exceeds "
		    "the %u items of a slab", (unsigned long long)addr, sl->freecount, k->ipers);
	if (X->us_keg.present && kfield_get(hdr, len, &X->us_keg) != k->keg)
		return kerr_set(&kd->err, KVS_E_DATA, "UMA slab 0x%llx names keg 0x%llx, not "
		    "0x%llx", (unsigned long long)addr,
		    (unsigned long long)kfield_get(hdr, len, &X->us_keg),
		    (unsigned long long)k->keg);
	return 0;
}

static kvs_obj_state_t
item_state(const struct iscan *s, const struct islab *sl, const struct ikeg *k, uint64_t i,
    int *cpu)
{
	const struct citem *c;

	*cpu = -1;
	if (!sl->readable)
		return KVS_OBJ_UNKNOWN;
	if (sl->bits[i / 8] >> (i % 8) & 1)
		return KVS_OBJ_FREE;
	c = cached(s, sl->data + i * k->rsize);
	if (c == NULL)
		return KVS_OBJ_ALLOCATED;
	*cpu = c->cpu;
	return c->state;
}

/* Each slab on keg k's lists: cb returns non-zero to stop (returned). */
static int
each_slab(kvs_t *kd, struct iscan *s, const struct ikeg *k,
    int (*cb)(kvs_t *, struct iscan *, const struct ikeg *, struct islab *, void *), void *arg)
{
	const struct ilayout *X = &s->X;
	struct islab *sl = malloc(sizeof(*sl));
	int d, l, nd = X->lists_in_keg ? 1 : s->X.U.ndomains, rc = 0;

	if (sl == NULL)
		return kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
	for (d = 0; d < nd && rc == 0; d++)
		for (l = 0; l < 3 && rc == 0; l++) {
			uint64_t head = k->keg + X->lists[l].off, p;
			struct kwalk wk;
			if (!X->lists_in_keg)
				head += X->uk_dom.off + (uint64_t)d * X->kdom_size;
			if (kread_u64(kd, head, &p) != 0) {
				rc = -1;
				break;
			}
			kwalk_init(&wk, MAX_SLABS);
			for (; p != 0 && rc == 0; p = sl->next) {
				if (kwalk_step(kd, &wk, p, "UMA slab") != 0 ||
				    read_slab(kd, s, k, p, sl) != 0) {
					rc = -1;
					break;
				}
				rc = cb(kd, s, k, sl, arg);
				if (!sl->readable) {
					s->incomplete = true;     /* the rest of this list is lost */
					break;
				}
			}
		}
	free(sl);
	return rc;
}

/* ---- whatis -------------------------------------------------------------- */

struct ifind {
	uint64_t addr, slab;            /* slab: 0 = by range */
	struct islab found;
	bool hit;
};

static int
find_cb(kvs_t *kd, struct iscan *s, const struct ikeg *k, struct islab *sl, void *arg)
{
	struct ifind *f = arg;

	(void)kd;
	(void)s;
	if ((f->slab != 0 && sl->addr == f->slab) || (f->slab == 0 && sl->data != 0 &&
	    f->addr >= sl->data && f->addr - sl->data < (uint64_t)k->ipers * k->rsize)) {
		f->found = *sl;
		f->hit = true;
		return 1;
	}
	return 0;
}

/* The slab holding addr on some keg's lists (slab != 0: that slab). */
static int
search_kegs(kvs_t *kd, struct iscan *s, uint64_t addr, uint64_t slab, struct ikeg *k,
    struct ifind *f)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	f->addr = addr;
	f->slab = slab;
	for (i = 0; i < s->nz; i++) {
		if (!s->z[i].primary)
			continue;
		if (read_keg(kd, s, s->z[i].keg, k) != 0 || each_slab(kd, s, k, find_cb, f) < 0)
			return -1;
		if (f->hit)
			return 1;
	}
	return 0;
}

static int
answer(kvs_t *kd, struct iscan *s, const struct izone *zi, const struct ikeg *k,
    const struct islab *sl, uint64_t addr, struct kvs_whatis *w)
{
	uint64_t i = (addr - sl->data) / k->rsize, p;
	size_t j;

	w->kind = KVS_WHATIS_SLAB;
	w->cache_kaddr = zi->zone;
	if (kread_u64(kd, zi->zone + s->X.U.uz_name.off, &p) != 0 ||
	    kvs_read_string(kd, p, w->cache, sizeof(w->cache), NULL) < 0)
		w->cache[0] = '\0';
	kerr_clear(&kd->err);
	w->object = sl->data + i * k->rsize;
	w->offset = addr - w->object;
	w->obj_index = i;
	w->objsize = k->rsize;
	if (sl->readable && cache_keg(kd, s, k->keg) != 0)
		return -1;
	w->state = item_state(s, sl, k, i, &w->cpu);
	/* malloc(9)'s bucket zones: kmemzones[] (an array of anonymous
	 * structs: int kz_size, the name pointer at 8, then kz_zone[] up to the
	 * element's end) names the zones it allocates from. */
	{
		struct kvs_typeinfo ti;
		uint64_t base, n;
		w->malloc_zone[0] = '\0';
		if (kvs_symbol(kd, "kmemzones", &base, NULL) == 0 &&
		    kvs_variable(kd, "kmemzones", &ti) == 0 && ti.kind == KVS_KIND_ARRAY &&
		    ti.elem_size >= 24)
			for (n = 0; n < ti.count && n < 256 && w->malloc_zone[0] == '\0'; n++) {
				uint64_t e = base + n * ti.elem_size, zp, np;
				for (j = 0; 16 + (j + 1) * 8 <= ti.elem_size && j < 64; j++)
					if (kread_u64(kd, e + 16 + j * 8, &zp) == 0 && zp == zi->zone &&
					    kread_u64(kd, e + 8, &np) == 0 &&
					    kvs_read_string(kd, np, w->malloc_zone, sizeof(w->malloc_zone),
					    NULL) >= 0)
						break;
			}
		kerr_clear(&kd->err);
	}
	if (w->state == KVS_OBJ_UNKNOWN) {
		snprintf(w->note, sizeof(w->note), "the slab at 0x%llx is not in the dump",
		    (unsigned long long)sl->addr);
		return 1;
	}
	return 0;
}

/* The UMA item at addr, or its plain page: 1 answered (w filled, *rc the
 * answer's status), 0 not a page of the vm_page array, -1 error. */
int
freebsd_uma_whatis(kvs_t *kd, uint64_t addr, struct kvs_whatis *w, int *rc)
{
	struct iscan s;
	struct ikeg k;
	struct ifind f;
	uint64_t arr, size, first, pa, page, slab = 0, zone = 0;
	const struct izone *zi;
	const char *why = NULL;
	int r = -1;

	if (kread_sym_uint(kd, "vm_page_array", &arr) != 0 ||
	    kread_sym_uint(kd, "vm_page_array_size", &size) != 0 ||
	    kread_sym_uint(kd, "first_page", &first) != 0 || ilayout(kd, &s.X) != 0) {
		kerr_clear(&kd->err);
		return 0;
	}
	if (s.X.page_size == 0 || size > (1ULL << 40) / s.X.page_size)
		return 0;
	if (addr >= arr && addr - arr < size * s.X.page_size) {
		uint64_t i = (addr - arr) / s.X.page_size;
		w->kind = KVS_WHATIS_PAGE;
		w->page = arr + i * s.X.page_size;
		w->pfn = first + i;
		snprintf(w->note, sizeof(w->note), "the struct vm_page of pfn %llu",
		    (unsigned long long)w->pfn);
		*rc = 0;
		return 1;
	}
	if (kvs_kvtop(kd, addr, &pa) != 0 || pa / PAGE_SZ < first || pa / PAGE_SZ - first >= size) {
		kerr_clear(&kd->err);
		return 0;
	}
	page = arr + (pa / PAGE_SZ - first) * s.X.page_size;
	if (iscan_init(kd, &s) != 0)
		goto out;
	if (kread_u64(kd, page + s.X.pg_slab.off, &slab) != 0 ||
	    (s.X.pg_zone.present && kread_u64(kd, page + s.X.pg_zone.off, &zone) != 0)) {
		kerr_push(&kd->err, "struct vm_page 0x%llx", (unsigned long long)page);
		goto out;
	}
	if (slab != 0) {
		uint64_t keg = 0;
		uint8_t probe;
		bool readable = kvs_read(kd, slab, &probe, 1) == 0;
		kerr_clear(&kd->err);
		if (s.X.pg_zone.present) {
			zi = zone_of(&s, zone);
			if (zi == NULL) {
				kerr_set(&kd->err, KVS_E_DATA, "struct vm_page 0x%llx names zone "
				    "0x%llx, which no keg holds", (unsigned long long)page,
				    (unsigned long long)zone);
				goto out;
			}
		} else {
			zi = NULL;
			if (readable && kread_u64(kd, slab + s.X.us_keg.off, &keg) == 0)
				zi = keg_primary(&s, keg);
			kerr_clear(&kd->err);
		}
		if (!readable || zi == NULL) {
			/* The slab is unreadable, or names no keg: the kegs' lists. */
			r = search_kegs(kd, &s, addr & ~(PAGE_SZ - 1), slab, &k, &f);
			if (r == 0)
				r = search_kegs(kd, &s, addr, 0, &k, &f);
			if (r < 0)
				goto out;
			if (r == 0) {
				kerr_set(&kd->err, KVS_E_DATA, "struct vm_page 0x%llx names slab "
				    "0x%llx, which is %s and on no keg's slab lists",
				    (unsigned long long)page, (unsigned long long)slab,
				    readable ? "of no keg" : "not readable");
				r = -1;
				goto out;
			}
			if (zi == NULL || zi->keg != k.keg)
				zi = keg_primary(&s, k.keg);
			why = readable ? "of no keg" : "unreadable";
			goto item;
		}
		if (read_keg(kd, &s, zi->keg, &k) != 0 || read_slab(kd, &s, &k, slab, &f.found) != 0)
			goto out;
		if (f.found.data != 0 && (addr & ~(PAGE_SZ - 1)) == (f.found.data & ~(PAGE_SZ - 1)) &&
		    (addr < f.found.data || addr - f.found.data >= (uint64_t)k.ipers * k.rsize)) {
			/* The slab's own page past its items: the header, slack. */
			w->kind = KVS_WHATIS_PAGE;
			snprintf(w->note, sizeof(w->note), "in the page of UMA slab 0x%llx, past its "
			    "items (the slab header or slack)", (unsigned long long)slab);
			r = 0;
			goto done;
		}
		if (f.found.data == 0 || addr < f.found.data ||
		    addr - f.found.data >= (uint64_t)k.ipers * k.rsize) {
			kerr_set(&kd->err, KVS_E_DATA, "struct vm_page 0x%llx names slab 0x%llx, "
			    "whose items 0x%llx-0x%llx do not hold 0x%llx", (unsigned long long)page,
			    (unsigned long long)slab, (unsigned long long)f.found.data,
			    (unsigned long long)(f.found.data + (uint64_t)k.ipers * k.rsize),
			    (unsigned long long)addr);
			goto out;
		}
		r = answer(kd, &s, zi, &k, &f.found, addr, w);
		goto done;
	}
	/* A page that names no slab: a keg whose pages do not say. */
	r = search_kegs(kd, &s, addr, 0, &k, &f);
	if (r < 0)
		goto out;
	if (r == 0) {
		iscan_free(&s);
		w->page = page;
		w->pfn = pa / PAGE_SZ;
		return 0;       /* a plain page: the caller tries stacks first */
	}
	zi = keg_primary(&s, k.keg);
item:
	if (zi == NULL) {
		kerr_set(&kd->err, KVS_E_DATA, "UMA keg 0x%llx has no zone", (unsigned long long)k.keg);
		r = -1;
		goto out;
	}
	r = answer(kd, &s, zi, &k, &f.found, addr, w);
	if (r >= 0 && why != NULL && w->note[0] == '\0')
		snprintf(w->note, sizeof(w->note), "the page's slab pointer 0x%llx is %s: found "
		    "on the keg's slab lists", (unsigned long long)slab, why);
done:
	w->page = page;
	w->pfn = pa / PAGE_SZ;
out:
	iscan_free(&s);
	if (r < 0)
		return -1;
	*rc = r;
	return 1;
}

/* ---- every item of a zone ----------------------------------------------- */

struct iobj {
	int (*cb)(void *, const struct kvs_slab_object *);
	void *arg;
	int stop;
};

static int
obj_cb(kvs_t *kd, struct iscan *s, const struct ikeg *k, struct islab *sl, void *arg)
{
	struct iobj *o = arg;
	uint64_t i;

	(void)kd;
	if (sl->data == 0)
		return 0;
	for (i = 0; i < k->ipers; i++) {
		struct kvs_slab_object ob = { .addr = sl->data + i * k->rsize, .slab = sl->addr,
			.index = i, .node = -1 };
		ob.state = item_state(s, sl, k, i, &ob.cpu);
		if ((o->stop = o->cb(o->arg, &ob)) != 0)
			return 1;
	}
	return 0;
}

int
freebsd_slab_objects(kvs_t *kd, const char *name,
    int (*cb)(void *arg, const struct kvs_slab_object *o), void *arg)
{
	struct iscan s;
	struct ikeg k;
	struct iobj o = { .cb = cb, .arg = arg };
	size_t i;
	int rc = -1;

	if (iscan_init(kd, &s) != 0)
		goto out;
	for (i = 0; i < s.nz; i++) {
		char zname[64];
		uint64_t p;
		if (kread_u64(kd, s.z[i].zone + s.X.U.uz_name.off, &p) != 0 ||
		    kvs_read_string(kd, p, zname, sizeof(zname), NULL) < 0) {
			kerr_clear(&kd->err);
			continue;
		}
		if (strcmp(zname, name) == 0)
			break;
	}
	if (i == s.nz) {
		kerr_set(&kd->err, KVS_E_INVAL, "no UMA zone with slabs is named \"%s\"", name);
		goto out;
	}
	if (read_keg(kd, &s, s.z[i].keg, &k) != 0 || cache_keg(kd, &s, k.keg) != 0 ||
	    each_slab(kd, &s, &k, obj_cb, &o) < 0)
		goto out;
	rc = o.stop ? o.stop : s.incomplete ? 1 : 0;
out:
	iscan_free(&s);
	return rc;
}
