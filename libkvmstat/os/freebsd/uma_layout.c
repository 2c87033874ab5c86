/*
 * uma_layout.c - the UMA walker's layout (struct ulayout, uma_internal.h),
 * told apart by DWARF alone: 13+ embeds the per-CPU bucket records in
 * struct uma_cache (uc_allocbucket.ucb_cnt, resolve), 12 keeps its zone
 * domains behind uz_domain and <= 11 has one full-bucket list (resolve_old).
 * Resolved once per handle (its memo); vm_ndomains and the value of __pcpu
 * are read on every refresh.  Reading the kegs, zones, caches and buckets
 * with it is uma.c's.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "freebsd.h"
#include "uma_internal.h"

/* The older layouts: per-CPU buckets by pointer; 12 keeps its zone domains
 * behind uz_domain and counts with counter(9) pointers, <= 11 has plain
 * counters, one full-bucket list and a page limit on the keg. */
static int
resolve_old(kvs_t *kd, struct ulayout *L)
{
	static const char Z[] = "struct uma_zone", K[] = "struct uma_keg", C[] = "struct uma_cache";
	struct kvs_typeinfo ti;

	L->gen = kvs_has_member(kd, Z, "uz_domain") == 1 ? 12 : 11;
	if (L->gen == 11 && kvs_has_member(kd, Z, "uz_buckets") != 1)
		return kerr_set(&kd->err, KVS_E_VERSION, "unrecognised UMA layout: struct "
		    "uma_cache has no uc_allocbucket.ucb_cnt (13 and later), struct uma_zone "
		    "neither uz_domain (12) nor uz_buckets (11 and before)");
	if (kvs_type(kd, Z, &ti) != 0)
		return -1;
	L->zone_size = ti.size;
	if (kvs_type(kd, C, &ti) != 0)
		return -1;
	L->cache_size = ti.size;
	if (L->gen == 12) {
		if (kvs_type(kd, "struct uma_zone_domain", &ti) != 0 ||
		    kfield(kd, Z, "uz_domain", &L->uz_domain, true) ||
		    kfield(kd, Z, "uz_max_items", &L->uz_max, true) ||
		    kfield(kd, "struct uma_zone_domain", "uzd_buckets.lh_first", &L->uzd_buckets, true))
			return kerr_push(&kd->err, "UMA layout");
		L->zdom_size = ti.size;
	} else if (kfield(kd, Z, "uz_buckets.lh_first", &L->uz_buckets, true) ||
	    kfield(kd, K, "uk_maxpages", &L->uk_maxpages, true))
		return kerr_push(&kd->err, "UMA layout");
	if (kfield(kd, Z, "uz_size", &L->uz_size, true) || kfield(kd, Z, "uz_sleeps", &L->uz_sleeps, true) ||
	    kfield(kd, Z, "uz_link.le_next", &L->uz_link, true) ||
	    kfield(kd, Z, "uz_allocs", &L->uz_allocs, true) || kfield(kd, Z, "uz_frees", &L->uz_frees, true) ||
	    kfield(kd, Z, "uz_fails", &L->uz_fails, true) || kfield(kd, Z, "uz_name", &L->uz_name, true) ||
	    kfield(kd, Z, "uz_cpu", &L->uz_cpu, true) ||
	    kfield(kd, K, "uk_zones.lh_first", &L->uk_zones, true) || kfield(kd, K, "uk_size", &L->uk_size, true) ||
	    kfield(kd, K, "uk_rsize", &L->uk_rsize, true) || kfield(kd, K, "uk_flags", &L->uk_flags, true) ||
	    kfield(kd, K, "uk_link.le_next", &L->uk_link, true) || kfield(kd, K, "uk_free", &L->uk_free, true) ||
	    kfield(kd, K, "uk_ppera", &L->uk_ppera, true) || kfield(kd, K, "uk_ipers", &L->uk_ipers, true) ||
	    kfield(kd, C, "uc_freebucket", &L->uc_free, true) || kfield(kd, C, "uc_allocbucket", &L->uc_alloc, true) ||
	    kfield(kd, C, "uc_allocs", &L->uc_allocs, true) || kfield(kd, C, "uc_frees", &L->uc_frees, true) ||
	    kfield(kd, "struct uma_bucket", "ub_link.le_next", &L->ub_link, true) ||
	    kfield(kd, "struct uma_bucket", "ub_cnt", &L->ub_cnt, true) ||
	    kfield(kd, "struct uma_bucket", "ub_entries", &L->ucb_entries, true))
		return kerr_push(&kd->err, "UMA layout");
	return 0;
}

/* A field of exactly `size` bytes, no bit-field, inside `within` bytes. */
static bool
plain(const struct kfield *f, uint64_t size, uint64_t within)
{
	return f->present && f->size == size && f->bit_size == 0 && f->off + size <= within;
}

static int
resolve(kvs_t *kd, struct ulayout *L)
{
	static const char Z[] = "struct uma_zone", K[] = "struct uma_keg", C[] = "struct uma_cache";
	struct kvs_typeinfo ti;
	memset(L, 0, sizeof(*L));
	/* Without types no layout can be told apart: say that, not "unrecognised". */
	if (kvs_type(kd, Z, &ti) != 0 || kvs_type(kd, C, &ti) != 0 ||
	    kvs_type(kd, K, &ti) != 0)
		return kerr_push(&kd->err, "UMA layout: the types struct uma_zone, "
		    "struct uma_keg and struct uma_cache are needed");
	if (kvs_has_member(kd, C, "uc_allocbucket.ucb_cnt") != 1)
		return resolve_old(kd, L);
	L->gen = 13;
	if (kvs_type(kd, Z, &ti) != 0)
		return -1;
	L->zone_size = ti.size;
	if (kvs_type(kd, C, &ti) != 0)
		return -1;
	L->cache_size = ti.size;
	if (kvs_type(kd, "struct uma_zone_domain", &ti) != 0)
		return -1;
	L->zdom_size = ti.size;
	if (kvs_type(kd, "struct uma_domain", &ti) != 0)
		return -1;
	L->kdom_size = ti.size;
	if (kfield(kd, Z, "uz_flags", &L->uz_flags, true) || kfield(kd, Z, "uz_size", &L->uz_size, true) ||
	    kfield(kd, Z, "uz_max_items", &L->uz_max, true) ||
	    kfield(kd, Z, "uz_xdomain", &L->uz_xdomain, false) ||
	    kfield(kd, Z, "uz_keg", &L->uz_keg, true) || kfield(kd, Z, "uz_sleeps", &L->uz_sleeps, true) ||
	    kfield(kd, Z, "uz_link.le_next", &L->uz_link, true) ||
	    kfield(kd, Z, "uz_allocs", &L->uz_allocs, true) || kfield(kd, Z, "uz_frees", &L->uz_frees, true) ||
	    kfield(kd, Z, "uz_fails", &L->uz_fails, true) || kfield(kd, Z, "uz_name", &L->uz_name, true) ||
	    kfield(kd, Z, "uz_cpu", &L->uz_cpu, true) ||
	    kfield(kd, K, "uk_zones.lh_first", &L->uk_zones, true) || kfield(kd, K, "uk_size", &L->uk_size, true) ||
	    kfield(kd, K, "uk_rsize", &L->uk_rsize, true) || kfield(kd, K, "uk_flags", &L->uk_flags, true) ||
	    kfield(kd, K, "uk_link.le_next", &L->uk_link, true) ||
	    kfield(kd, K, "uk_domain", &L->uk_domain, true) ||
	    kfield(kd, "struct uma_domain", "ud_free_items", &L->ud_free, true) ||
	    kfield(kd, C, "uc_freebucket", &L->uc_free, true) || kfield(kd, C, "uc_allocbucket", &L->uc_alloc, true) ||
	    kfield(kd, C, "uc_crossbucket", &L->uc_cross, false) ||
	    kfield(kd, C, "uc_allocs", &L->uc_allocs, true) || kfield(kd, C, "uc_frees", &L->uc_frees, true) ||
	    kfield(kd, "struct uma_cache_bucket", "ucb_cnt", &L->ucb_cnt, true) ||
	    kfield(kd, "struct uma_cache_bucket", "ucb_entries", &L->ucb_entries, true) ||
	    kfield(kd, "struct uma_zone_domain", "uzd_buckets.stqh_first", &L->uzd_buckets, true) ||
	    kfield(kd, "struct uma_bucket", "ub_link.stqe_next", &L->ub_link, true) ||
	    kfield(kd, "struct uma_bucket", "ub_cnt", &L->ub_cnt, true))
		return kerr_push(&kd->err, "UMA layout");
	L->cache_plain = plain(&L->uc_allocs, 8, L->cache_size) && plain(&L->uc_frees, 8, L->cache_size);
	{
		const struct kfield *bk[3] = { &L->uc_free, &L->uc_alloc, &L->uc_cross };
		int k;
		for (k = 0; k < 3; k++)
			if (bk[k]->present)
				L->cache_plain = L->cache_plain && bk[k]->off < L->cache_size &&
				    plain(&L->ucb_cnt, 2, L->cache_size - bk[k]->off) &&
				    plain(&L->ucb_entries, 2, L->cache_size - bk[k]->off);
	}
	return 0;
}

/* The layout: what the types say (resolve, sizeof(struct uma_keg)), worked
 * out on the handle's first refresh and kept in its memo, and what lives in
 * memory (vm_ndomains, the value of __pcpu), read every time. */
int
uma_layout(kvs_t *kd, struct ulayout *L, uint64_t *keg_size)
{
	static const char memo_tag;
	struct ulayout_memo {
		bool ok;
		struct ulayout L;
		uint64_t keg_size;
	} *m = kvs_memo(kd, &memo_tag, sizeof(*m));
	uint64_t addr;

	if (m != NULL && m->ok) {
		*L = m->L;
		*keg_size = m->keg_size;
	} else {
		struct kvs_typeinfo ti;
		if (resolve(kd, L) != 0 || kvs_type(kd, "struct uma_keg", &ti) != 0)
			return -1;
		*keg_size = ti.size;
		if (m != NULL) {
			m->L = *L;
			m->keg_size = ti.size;
			m->ok = true;
		}
	}
	L->ndomains = (int)kread_sym_uint_or(kd, "vm_ndomains", 1);
	if (L->ndomains < 1 || L->ndomains > 64)
		return kerr_set(&kd->err, KVS_E_DATA, "vm_ndomains %d is implausible", L->ndomains);
	L->pcpu_base = 0;       /* arm64: counter(9) values are CPU 0's addresses */
	if (L->gen == 13 && freebsd_zpcpu_offsets(kd) &&
	    (kvs_symbol(kd, "__pcpu", &addr, NULL) != 0 || kread_u64(kd, addr, &L->pcpu_base) != 0))
		return kerr_push(&kd->err, "per-CPU base for counter(9)");
	return 0;
}
