/*
 * uma_internal.h - what the UMA walker's files share: the layout of the
 * zone, keg, cache and bucket structures, resolved from the types by
 * uma_layout.c and read by uma.c's walk.
 */
#ifndef KVS_UMA_INTERNAL_H
#define KVS_UMA_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "freebsd.h"

struct ulayout {
	uint64_t zone_size, cache_size, zdom_size, kdom_size;
	struct kfield uz_flags, uz_size, uz_max, uz_xdomain, uz_keg, uz_sleeps, uz_link, uz_allocs,
	    uz_frees, uz_fails, uz_name, uz_cpu;
	struct kfield uk_zones, uk_size, uk_rsize, uk_flags, uk_link, uk_domain, ud_free;
	struct kfield uc_free, uc_alloc, uc_cross, uc_allocs, uc_frees, ucb_cnt, ucb_entries;
	struct kfield uzd_buckets, ub_link, ub_cnt;
	uint64_t pcpu_base;
	/* 13+: uc_allocs/uc_frees are plain u64s and ucb_cnt/ucb_entries plain
	 * 16-bit counts, all inside struct uma_cache: read without kfield_get. */
	bool cache_plain;
	int ndomains;
	int gen;                          /* 11 (<= 11), 12 or 13 (13+) */
	/* <= 12 */
	struct kfield uz_domain, uz_buckets, uk_free, uk_maxpages, uk_ppera, uk_ipers;
};

/* The layout: what the types say, worked out on the handle's first refresh
 * and kept in its memo, and what lives in memory, read every time (*keg_size:
 * sizeof(struct uma_keg)). */
KVS_HIDDEN int uma_layout(kvs_t *kd, struct ulayout *L, uint64_t *keg_size);

#endif
