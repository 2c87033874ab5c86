/*
 * check_uma.c - memstat_kvm_uma against the generator's truth (FreeBSD 13+
 * layout): every field of every zone, vmstat -z text, memstat_kvm_all,
 * refresh, and bad input (a looping zone list or bucket list, a bucket count above its
 * capacity, an unreadable counter, garbage in the counters of absent CPUs).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "memstat_internal.h"
#include "testutil.h"

struct gen {
	const char *dir, *core;
};
static const struct gen gens[] = {
	{ "fbsd14", "vmcore.minidump3" }, { "fbsd14", "vmcore.elf" }, { "fbsd14", "mem.raw" },
	{ "fbsd12", "vmcore.minidump2" }, { "fbsd12", "mem.raw" },
	{ "fbsd11", "vmcore.minidump2" }, { "fbsd11", "mem.raw" },
};

static kvs_t *
open_gen(const struct gen *g)
{
	char err[KVS_ERRBUF_SIZE], k[256], c[256];
	kvs_t *kd;

	snprintf(k, sizeof(k), "%s/kernel", g->dir);
	snprintf(c, sizeof(c), "%s/%s", g->dir, g->core);
	kd = kvs_open(fixture_path(k), fixture_path(c), 0, err);
	ck_assert_msg(kd != NULL, "%s", err);
	return kd;
}

static kvs_t *
open_core(const char *core, int flags)
{
	char err[KVS_ERRBUF_SIZE];
	kvs_t *kd = kvs_open(fixture_path("fbsd14/kernel"), core, flags, err);

	ck_assert_msg(kd != NULL, "%s", err);
	return kd;
}

/* The truth's zones, in list order from mt on: identity and counters.
 * Returns the entry after them. */
static struct memory_type *
check_zone_counts(struct memory_type *mt, json_t *zones)
{
	json_t *z;
	size_t i;

	json_array_foreach(zones, i, z) {
		ck_assert_ptr_nonnull(mt);
		ck_assert_uint_eq(memstat_get_kaddr(mt), jget(z, "addr"));
		ck_assert_uint_eq(memstat_get_numallocs(mt), jget(z, "numallocs"));
		ck_assert_uint_eq(memstat_get_numfrees(mt), jget(z, "numfrees"));
		ck_assert_uint_eq(memstat_get_failures(mt), jget(z, "failures"));
		ck_assert_uint_eq(memstat_get_xdomain(mt), jget(z, "xdomain"));
		ck_assert_uint_eq(memstat_get_free(mt), jget(z, "free"));
		ck_assert_uint_eq(memstat_get_count(mt), jget(z, "count"));
		mt = memstat_mtl_next(mt);
	}
	return mt;
}

START_TEST(zones_equal_truth)
{
	char rel[256];
	json_t *t, *zones, *z;
	kvs_t *kd = open_gen(&gens[_i]);
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	size_t i;

	snprintf(rel, sizeof(rel), "%s/truth.json", gens[_i].dir);
	t = load_truth(rel);
	zones = json_object_get(json_object_get(t, "uma"), "zones");
	ck_assert_msg(memstat_kvm_uma(l, kd) == 0, "%s", kvs_geterr(kd));
	ck_assert_uint_eq(memstat_mtl_count(l), json_array_size(zones));
	mt = memstat_mtl_first(l);
	json_array_foreach(zones, i, z) {
		const char *cpu;
		json_t *v;
		ck_assert_ptr_nonnull(mt);
		ck_assert_uint_eq(memstat_get_kaddr(mt), jget(z, "addr"));     /* list order too */
		ck_assert_str_eq(memstat_get_name(mt), json_string_value(json_object_get(z, "name")));
		ck_assert_int_eq(memstat_get_allocator(mt), ALLOCATOR_UMA);
		ck_assert_uint_eq(memstat_get_size(mt), jget(z, "size"));
		ck_assert_uint_eq(memstat_get_rsize(mt), jget(z, "rsize"));
		ck_assert_uint_eq(memstat_get_countlimit(mt), jget(z, "countlimit"));
		ck_assert_uint_eq(memstat_get_byteslimit(mt), jget(z, "byteslimit"));
		ck_assert_uint_eq(memstat_get_numallocs(mt), jget(z, "numallocs"));
		ck_assert_uint_eq(memstat_get_numfrees(mt), jget(z, "numfrees"));
		ck_assert_uint_eq(memstat_get_failures(mt), jget(z, "failures"));
		ck_assert_uint_eq(memstat_get_sleeps(mt), jget(z, "sleeps"));
		ck_assert_uint_eq(memstat_get_xdomain(mt), jget(z, "xdomain"));
		ck_assert_uint_eq(memstat_get_zonefree(mt), jget(z, "zonefree"));
		ck_assert_uint_eq(memstat_get_kegfree(mt), jget(z, "kegfree"));
		ck_assert_uint_eq(memstat_get_free(mt), jget(z, "free"));
		ck_assert_uint_eq(memstat_get_count(mt), jget(z, "count"));
		ck_assert_uint_eq(memstat_get_bytes(mt), jget(z, "bytes"));
		json_object_foreach(json_object_get(z, "percpu_free"), cpu, v)
			ck_assert_uint_eq(memstat_get_percpu_free(mt, atoi(cpu)), jnum(v));
		{
			json_t *dz = json_object_get(z, "domain_zonefree");
			json_t *dk = json_object_get(z, "domain_kegfree");
			size_t d;
			ck_assert_uint_eq(memstat_get_ndomains(mt), json_array_size(dz));
			for (d = 0; d < json_array_size(dz); d++) {
				ck_assert_uint_eq(memstat_get_domain_zonefree(mt, (unsigned)d),
				    jnum(json_array_get(dz, d)));
				ck_assert_uint_eq(memstat_get_domain_kegfree(mt, (unsigned)d),
				    jnum(json_array_get(dk, d)));
			}
		}
		mt = memstat_mtl_next(mt);
	}
	memstat_mtl_free(l);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

START_TEST(vmstat_z_text)
{
	char rel[256], k[256], c[256];
	json_t *t, *line;
	char cmd[4096], *out;
	size_t i, len = 0;
	int st;
	char *want = calloc(1, 1 << 16);

	snprintf(rel, sizeof(rel), "%s/truth.json", gens[_i].dir);
	t = load_truth(rel);
	snprintf(k, sizeof(k), "%s/kernel", gens[_i].dir);
	snprintf(c, sizeof(c), "%s/%s", gens[_i].dir, gens[_i].core);
	snprintf(cmd, sizeof(cmd), "%s -N %s -M %s -z", build_path("analyzers/kvmstat"),
	    fixture_path(k), fixture_path(c));
	out = run_capture(cmd, &st);
	ck_assert_int_eq(st, 0);
	json_array_foreach(json_object_get(t, "vmstat_z"), i, line) {
		len += (size_t)sprintf(want + len, "%s\n", json_string_value(line));
	}
	ck_assert_str_eq(out, want);
	free(out);
	free(want);
	json_decref(t);
}
END_TEST

START_TEST(all_and_refresh)
{
	json_t *t = load_truth("fbsd14/truth.json");
	kvs_t *kd = open_core(fixture_path("fbsd14/vmcore.minidump3"), 0);
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	unsigned long ev;
	size_t nm = json_array_size(json_object_get(json_object_get(t, "malloc"), "types"));
	size_t nu = json_array_size(json_object_get(json_object_get(t, "uma"), "zones"));

	ck_assert_int_eq(memstat_kvm_all(l, kd), 0);
	ck_assert_uint_eq(memstat_mtl_count(l), nm + nu);
	/* UMA nodes come before malloc nodes, as in libmemstat. */
	ck_assert_int_eq(memstat_get_allocator(memstat_mtl_first(l)), ALLOCATOR_UMA);
	ck_assert_ptr_nonnull(memstat_mtl_find(l, ALLOCATOR_UMA, "mbuf"));
	ck_assert_ptr_nonnull(memstat_mtl_find(l, ALLOCATOR_MALLOC, "devbuf"));
	for (mt = memstat_mtl_first(l); mt; mt = memstat_mtl_next(mt))
		memstat_set_caller_uint64(mt, 2, memstat_get_kaddr(mt));
	ev = l->mtl_alloc_events;
	ck_assert_int_eq(memstat_kvm_all(l, kd), 0);
	ck_assert_uint_eq(l->mtl_alloc_events, ev);
	for (mt = memstat_mtl_first(l); mt; mt = memstat_mtl_next(mt))
		ck_assert_uint_eq(memstat_get_caller_uint64(mt, 2), memstat_get_kaddr(mt));
	ck_assert_uint_eq(memstat_mtl_count(l), nm + nu);
	memstat_mtl_free(l);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/* A copy of the raw image with `width` bytes of `value` at `va`. */
static void
patch(char *out, size_t outlen, uint64_t va, uint64_t value, size_t width)
{
	snprintf(out, outlen, "%s", path_join(test_tmpdir(), "uma.raw"));
	patch_image("fbsd14/kernel", "fbsd14/mem.raw", out, &va, &value, &width, 1);
}

START_TEST(bad_input)
{
	json_t *t = load_truth("fbsd14/truth.json");
	json_t *zones = json_object_get(json_object_get(t, "uma"), "zones");
	uint64_t z = jget(json_array_get(zones, 5), "addr");
	struct memory_type_list *l = memstat_mtl_alloc();
	char copy[4096];
	const char *w;
	kvs_t *kd = open_core(fixture_path("fbsd14/mem.raw"), 0);
	uint64_t link_off, cpu_off, cnt_off, alloc_off, allocs_off, free_off, cross_off;

	link_off = member_off(kd, "struct uma_zone", "uz_link");
	cpu_off = member_off(kd, "struct uma_zone", "uz_cpu");
	alloc_off = member_off(kd, "struct uma_cache", "uc_allocbucket");
	cnt_off = member_off(kd, "struct uma_cache_bucket", "ucb_cnt");
	allocs_off = member_off(kd, "struct uma_zone", "uz_allocs");
	free_off = member_off(kd, "struct uma_cache", "uc_freebucket");
	cross_off = member_off(kd, "struct uma_cache", "uc_crossbucket");
	kvs_close(kd);

	/* 1: a zone list that loops back on itself. */
	patch(copy, sizeof(copy), z + link_off, z, 8);
	kd = open_core(copy, KVS_O_RAW);
	ck_assert_int_eq(memstat_kvm_uma(l, kd), -1);
	ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "loops"));
	kvs_close(kd);
	/* 2: CPU 0's alloc bucket claims more items than it has room for. */
	patch(copy, sizeof(copy), z + cpu_off + alloc_off + cnt_off, 30000, 2);
	kd = open_core(copy, KVS_O_RAW);
	ck_assert_int_eq(memstat_kvm_uma(l, kd), 0);
	ck_assert_uint_ge(kvs_warnings(kd, &w), 1);
	ck_assert_ptr_nonnull(strstr(w, "room for"));
	kvs_close(kd);
	/* 2b: CPU 0's free and cross buckets with negative counts (-1, -5):
	 * each is named, neither is counted, so CPU 0 holds only what its
	 * alloc bucket does: the truth less the two buckets' counts (the
	 * generator's, per bucket). */
	{
		uint64_t va[2] = { z + cpu_off + free_off + cnt_off, z + cpu_off + cross_off + cnt_off },
		    val[2] = { 0xffff, 0xfffb }, lost;
		size_t width[2] = { 2, 2 };
		json_t *zt = json_array_get(zones, 5);
		json_t *b0 = json_object_get(json_object_get(zt, "percpu_buckets"), "0");
		struct memory_type *mt;
		ck_assert_msg(b0 != NULL, "truth.json has no percpu_buckets for CPU 0 of zone 5 "
		    "(regenerate the fixtures: fixtures/gen/regen.sh)");
		lost = jget(b0, "free") + jget(b0, "cross");
		ck_assert_uint_eq(jget(b0, "free") + jget(b0, "alloc") + jget(b0, "cross"),
		    jget(json_object_get(zt, "percpu_free"), "0"));
		ck_assert_uint_gt(lost, 0);
		snprintf(copy, sizeof(copy), "%s", path_join(test_tmpdir(), "uma3.raw"));
		patch_image("fbsd14/kernel", "fbsd14/mem.raw", copy, va, val, width, 2);
		kd = open_core(copy, KVS_O_RAW);
		ck_assert_int_eq(memstat_kvm_uma(l, kd), 0);
		ck_assert_uint_eq(kvs_warnings(kd, &w), 2);
		ck_assert_msg(strstr(w, "holds -1 items") != NULL, "%s", w);
		for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt))
			if (memstat_get_kaddr(mt) == z)
				break;
		ck_assert_ptr_nonnull(mt);
		ck_assert_uint_eq(memstat_get_percpu_free(mt, 0),
		    jget(json_object_get(zt, "percpu_free"), "0") - lost);
		ck_assert_uint_eq(memstat_get_percpu_free(mt, 1),
		    jget(json_object_get(zt, "percpu_free"), "1"));
		ck_assert_uint_eq(memstat_get_free(mt), jget(zt, "free") - lost);
		kvs_close(kd);
	}
	/* 3: a counter(9) whose per-CPU copies are unreadable: the zone's
	 * row stays, its counts flagged unknown, and the warning says whose
	 * (the zone, by its name and address in the truth) and why. */
	patch(copy, sizeof(copy), z + allocs_off, 0x7000000000ULL, 8);
	kd = open_core(copy, KVS_O_RAW);
	ck_assert_int_eq(memstat_kvm_uma(l, kd), 0);
	ck_assert_uint_ge(kvs_warnings(kd, &w), 1);
	ck_assert_ptr_nonnull(strstr(w, "counter(9)"));
	{
		char want[128];
		struct memory_type *mt;
		snprintf(want, sizeof(want), "zone \"%s\" at 0x%llx: its counts are not readable",
		    json_string_value(json_object_get(json_array_get(zones, 5), "name")),
		    (unsigned long long)z);
		ck_assert_msg(strstr(w, want) != NULL, "%s", w);
		for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt)) {
			json_t *zt = NULL, *x;
			size_t i;
			json_array_foreach(zones, i, x)
				if (jget(x, "addr") == memstat_get_kaddr(mt))
					zt = x;
			ck_assert_ptr_nonnull(zt);
			if (memstat_get_kaddr(mt) == z) {
				ck_assert_uint_eq(memstat_get_flags(mt), MEMSTAT_COUNTS_UNREADABLE);
				ck_assert_uint_eq(memstat_get_numallocs(mt), 0);
				ck_assert_uint_eq(memstat_get_free(mt), 0);
				ck_assert_uint_eq(memstat_get_size(mt), jget(zt, "size"));
			} else {
				ck_assert_uint_eq(memstat_get_flags(mt), 0);
				ck_assert_uint_eq(memstat_get_numallocs(mt), jget(zt, "numallocs"));
				ck_assert_uint_eq(memstat_get_free(mt), jget(zt, "free"));
			}
		}
	}
	ck_assert_int_eq(memstat_mtl_incomplete(l), 0);
	kvs_close(kd);
	memstat_mtl_free(l);
	json_decref(t);
}
END_TEST

/* Two cores of one kernel at two moments: same zones, new counts, caller
 * slots kept. */
START_TEST(refresh_across_moments)
{
	json_t *t2 = load_truth("fbsd14/truth.t2.json"), *z;
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	kvs_t *kd = open_core(fixture_path("fbsd14/vmcore.minidump3"), 0);
	size_t i, n;

	ck_assert_int_eq(memstat_kvm_uma(l, kd), 0);
	n = memstat_mtl_count(l);
	for (mt = memstat_mtl_first(l); mt; mt = memstat_mtl_next(mt))
		memstat_set_caller_uint64(mt, 7, memstat_get_numallocs(mt));
	kvs_close(kd);
	kd = open_core(fixture_path("fbsd14/vmcore.minidump3.t2"), 0);
	ck_assert_int_eq(memstat_kvm_uma(l, kd), 0);
	ck_assert_uint_eq(memstat_mtl_count(l), n);
	mt = memstat_mtl_first(l);
	json_array_foreach(json_object_get(json_object_get(t2, "uma"), "zones"), i, z) {
		ck_assert_uint_eq(memstat_get_kaddr(mt), jget(z, "addr"));
		ck_assert_uint_eq(memstat_get_numallocs(mt), jget(z, "numallocs"));
		ck_assert_uint_eq(memstat_get_free(mt), jget(z, "free"));
		ck_assert_uint_gt(memstat_get_numallocs(mt), memstat_get_caller_uint64(mt, 7));
		mt = memstat_mtl_next(mt);
	}
	memstat_mtl_free(l);
	kvs_close(kd);
	json_decref(t2);
}
END_TEST

/* FreeBSD 12: a per-CPU cache whose bucket pointer leads nowhere. */
START_TEST(unmapped_percpu_bucket)
{
	json_t *t = load_truth("fbsd12/truth.json");
	uint64_t z = jget(json_array_get(json_object_get(json_object_get(t, "uma"), "zones"), 6), "addr");
	char err[KVS_ERRBUF_SIZE], copy[4096];
	struct kvs_typeinfo ti;
	struct memory_type_list *l = memstat_mtl_alloc();
	kvs_t *kd = kvs_open(fixture_path("fbsd12/kernel"), fixture_path("fbsd12/mem.raw"), 0, err);
	uint64_t off, pa, bad = 0xffffffff8f000000ULL;
	size_t len;
	uint8_t *img;

	ck_assert_ptr_nonnull(kd);
	ck_assert_int_eq(kvs_member(kd, "struct uma_zone", "uz_cpu", &ti), 0);
	off = ti.offset;
	ck_assert_int_eq(kvs_member(kd, "struct uma_cache", "uc_allocbucket", &ti), 0);
	off += ti.offset;
	ck_assert_int_eq(kvs_kvtop(kd, z + off, &pa), 0);
	kvs_close(kd);
	img = read_file(fixture_path("fbsd12/mem.raw"), &len);
	memcpy(img + pa, &bad, 8);
	snprintf(copy, sizeof(copy), "%s", path_join(test_tmpdir(), "uma12.raw"));
	write_file(copy, img, len);
	free(img);
	kd = kvs_open(fixture_path("fbsd12/kernel"), copy, KVS_O_RAW, err);
	ck_assert_ptr_nonnull(kd);
	/* The zone's row stays, its counts unknown; the warning names it. */
	{
		const char *w;
		struct memory_type *mt;
		char want[128];
		ck_assert_int_eq(memstat_kvm_uma(l, kd), 0);
		ck_assert_uint_ge(kvs_warnings(kd, &w), 1);
		ck_assert_msg(strstr(w, "bucket at 0xffffffff8f000000") != NULL, "%s", w);
		snprintf(want, sizeof(want), "at 0x%llx: its counts are not readable",
		    (unsigned long long)z);
		ck_assert_msg(strstr(w, want) != NULL, "%s", w);
		for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt))
			ck_assert_uint_eq(memstat_get_flags(mt), memstat_get_kaddr(mt) == z ?
			    MEMSTAT_COUNTS_UNREADABLE : 0);
	}
	kvs_close(kd);
	memstat_mtl_free(l);
	json_decref(t);
}
END_TEST

/*
 * A corrupt dump in which 600 zones all keep their counter(9)s
 * (allocations, frees, failures and, where the kernel has it, cross-domain
 * frees) in one per-CPU slot, thousands of records on one address where a
 * run of counters is cut at 513: the refresh
 * stays within its working space (ASan, valgrind) and every one of those
 * zones reads the sum of the present CPUs' copies of that slot, written here
 * from known values.  The zones are copies of mbuf's fixed part, with empty
 * per-CPU caches and domain lists, on a new keg (a copy of mbuf's, with no
 * free items) put at the head of uma_kegs; the fixture's zones, walked
 * after it, still read their truth.
 */
START_TEST(shared_counter_slots)
{
	enum { NZ = 600, ZS = 0x1000 };
	const uint64_t DMAP = 0xfffff80000000000ULL, KB = 0xffffffff80000000ULL;
	const uint64_t AREA = 0x1000000;     /* past the fixture's memory */
	const uint64_t SLOT = AREA + 0x800, NAMES = AREA + 0x40000, KEG = AREA + 0x50000;
	const uint64_t ZONES = AREA + 0x60000, END = ZONES + (uint64_t)NZ * ZS;
	const char *ctr[4] = { "uz_allocs", "uz_frees", "uz_fails", "uz_xdomain" };
	json_t *t = load_truth("fbsd14/truth.json");
	json_t *zones = json_object_get(json_object_get(t, "uma"), "zones");
	json_t *mbuf = json_array_get(zones, 5), *cpu;
	kvs_t *kd = open_core(fixture_path("fbsd14/mem.raw"), 0);
	struct kvs_typeinfo ci, di, ki, kdi;
	uint64_t o_link, o_name, o_cpu, o_keg, o_kzones, o_klink, o_ctr[4];
	uint64_t kegsym, head, pcpu_sym, pcpu, keg, off, next = 0, want = 0;
	uint64_t maxid = jget(t, "mp_maxid");
	size_t ndom = json_array_size(json_object_get(mbuf, "domain_zonefree"));
	int nctr = kvs_has_member(kd, "struct uma_zone", "uz_xdomain") == 1 ? 4 : 3;
	uint8_t zfix[ZS], kfix[ZS];
	char copy[4096], err[KVS_ERRBUF_SIZE], name[32];
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	size_t len, i, c;
	uint8_t *img;
	int k;

	ck_assert_str_eq(json_string_value(json_object_get(mbuf, "name")), "mbuf");
	ck_assert_int_eq(kvs_type(kd, "struct uma_cache", &ci), 0);
	ck_assert_int_eq(kvs_type(kd, "struct uma_zone_domain", &di), 0);
	ck_assert_int_eq(kvs_type(kd, "struct uma_keg", &ki), 0);
	ck_assert_int_eq(kvs_type(kd, "struct uma_domain", &kdi), 0);
	o_link = member_off(kd, "struct uma_zone", "uz_link.le_next");
	o_name = member_off(kd, "struct uma_zone", "uz_name");
	o_cpu = member_off(kd, "struct uma_zone", "uz_cpu");
	o_keg = member_off(kd, "struct uma_zone", "uz_keg");
	o_kzones = member_off(kd, "struct uma_keg", "uk_zones.lh_first");
	o_klink = member_off(kd, "struct uma_keg", "uk_link.le_next");
	for (k = 0; k < nctr; k++)
		o_ctr[k] = member_off(kd, "struct uma_zone", ctr[k]);
	/* Each zone with its caches and domain records fits its stride, and
	 * the keg with its domain records fits its page. */
	ck_assert_uint_le(o_cpu + (maxid + 1) * ci.size + ndom * di.size, ZS);
	ck_assert_uint_le(ki.size + ndom * kdi.size, ZS);
	ck_assert_uint_le(maxid, 63);
	/* The fixed part of mbuf and of its keg, read while the handle is open. */
	ck_assert_int_eq(kvs_read(kd, jget(mbuf, "addr"), zfix, o_cpu), 0);
	memcpy(&keg, zfix + o_keg, 8);
	ck_assert_int_eq(kvs_read(kd, keg, kfix, ki.size), 0);
	ck_assert_int_eq(kvs_symbol(kd, "uma_kegs", &kegsym, NULL), 0);
	ck_assert_int_eq(kvs_read(kd, kegsym, &head, 8), 0);
	ck_assert_int_eq(kvs_symbol(kd, "__pcpu", &pcpu_sym, NULL), 0);
	ck_assert_int_eq(kvs_read(kd, pcpu_sym, &pcpu, 8), 0);
	kvs_close(kd);

	img = read_file_grown(fixture_path("fbsd14/mem.raw"), END, &len);
	ck_assert_uint_le(len, AREA);
	/* CPU c's copy of the one slot, a page further per CPU, each CPU a
	 * value of its own; its neighbours hold values no zone should read. */
	for (c = 0; c < 64; c++) {
		uint64_t v = 1000003 * (c + 1) + c * c, poison = 0x5a5a5a5a5a5a5a5aULL;
		memcpy(img + SLOT + c * 4096, &v, 8);
		memcpy(img + SLOT + c * 4096 - 8, &poison, 8);
		memcpy(img + SLOT + c * 4096 + 8, &poison, 8);
	}
	json_array_foreach(json_object_get(t, "cpus"), i, cpu)
		want += 1000003 * (jnum(cpu) + 1) + jnum(cpu) * jnum(cpu);
	/* The walk meets shared599 first: the list, which takes each new zone
	 * at its head as libmemstat does, runs shared000 .. shared599. */
	off = DMAP + SLOT - pcpu;
	for (i = 0; i < NZ; i++) {
		uint8_t *zp = img + ZONES + i * ZS;
		uint64_t np = DMAP + NAMES + i * 32;
		snprintf((char *)img + NAMES + i * 32, 32, "shared%03zu", i);
		memcpy(zp, zfix, o_cpu);        /* caches and domain lists stay 0 */
		memcpy(zp + o_link, &next, 8);
		memcpy(zp + o_name, &np, 8);
		for (k = 0; k < nctr; k++)
			memcpy(zp + o_ctr[k], &off, 8);
		next = DMAP + ZONES + i * ZS;
	}
	/* The keg: mbuf's, holding only the new zones, first on uma_kegs. */
	memcpy(img + KEG, kfix, ki.size);     /* its domain records stay 0 */
	memcpy(img + KEG + o_kzones, &next, 8);
	memcpy(img + KEG + o_klink, &head, 8);
	next = DMAP + KEG;
	memcpy(img + (kegsym - KB), &next, 8);
	snprintf(copy, sizeof(copy), "%s", path_join(test_tmpdir(), "shared-counters.raw"));
	ck_assert_int_eq(write_file(copy, img, END), 0);
	free(img);

	kd = kvs_open(fixture_path("fbsd14/kernel"), copy, KVS_O_RAW, err);
	ck_assert_msg(kd != NULL, "%s", err);
	/* The second refresh is the steady state: same zones, same counters. */
	for (int r = 0; r < 2; r++) {
		ck_assert_msg(memstat_kvm_uma(l, kd) == 0, "%s", kvs_geterr(kd));
		ck_assert_uint_eq(memstat_mtl_count(l), NZ + json_array_size(zones));
		/* The fixture's zones, walked after the new keg, as before. */
		mt = check_zone_counts(memstat_mtl_first(l), zones);
		for (i = 0; i < NZ; i++, mt = memstat_mtl_next(mt)) {
			ck_assert_ptr_nonnull(mt);
			snprintf(name, sizeof(name), "shared%03zu", i);
			ck_assert_str_eq(memstat_get_name(mt), name);
			ck_assert_uint_eq(memstat_get_kaddr(mt), DMAP + ZONES + i * ZS);
			ck_assert_uint_eq(memstat_get_numallocs(mt), want);
			ck_assert_uint_eq(memstat_get_numfrees(mt), want);
			ck_assert_uint_eq(memstat_get_failures(mt), want);
			ck_assert_uint_eq(memstat_get_xdomain(mt), nctr == 4 ? want : 0);
			ck_assert_uint_eq(memstat_get_count(mt), 0);
			ck_assert_uint_eq(memstat_get_free(mt), 0);
			ck_assert_uint_eq(memstat_get_size(mt), jget(mbuf, "size"));
			ck_assert_uint_eq(memstat_get_sleeps(mt), jget(mbuf, "sleeps"));
		}
		ck_assert_ptr_null(mt);
	}
	memstat_mtl_free(l);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/*
 * FreeBSD 12: counter(9) copies of the CPU ids that are not in all_cpus hold
 * garbage (the generator leaves them 0): every zone still reads the sum of
 * the present CPUs' copies, its truth.  The counters' addresses are read
 * from the zones as they lie in the dump.
 */
START_TEST(absent_cpu_counters_ignored)
{
	static const char *const ctr[3] = { "uz_allocs", "uz_frees", "uz_fails" };
	json_t *t = load_truth("fbsd12/truth.json"), *zones, *z, *cpu;
	char err[KVS_ERRBUF_SIZE];
	const char *copy = path_join(test_tmpdir(), "uma12-absent.raw");
	struct memory_type_list *l = memstat_mtl_alloc();
	kvs_t *kd = kvs_open(fixture_path("fbsd12/kernel"), fixture_path("fbsd12/mem.raw"), 0, err);
	uint64_t maxid = jget(t, "mp_maxid"), present = 0, off[3], ctrva, *va, *val;
	size_t i, n = 0;
	unsigned c;
	int k;

	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_uint_lt(maxid, 64);
	zones = json_object_get(json_object_get(t, "uma"), "zones");
	json_array_foreach(json_object_get(t, "cpus"), i, cpu)
		present |= 1ULL << jnum(cpu);
	va = calloc(json_array_size(zones) * 3 * 64, sizeof(*va));
	val = calloc(json_array_size(zones) * 3 * 64, sizeof(*val));
	for (k = 0; k < 3; k++)
		off[k] = member_off(kd, "struct uma_zone", ctr[k]);
	json_array_foreach(zones, i, z) {
		for (k = 0; k < 3; k++) {
			ck_assert_int_eq(kvs_read(kd, jget(z, "addr") + off[k], &ctrva, 8), 0);
			for (c = 0; c <= maxid; c++)
				if (!(present >> c & 1)) {
					va[n] = ctrva + (uint64_t)c * 4096;
					val[n++] = 0x0123456789abcdefULL;
				}
		}
	}
	kvs_close(kd);
	ck_assert_uint_gt(n, 0);                        /* the fixture has absent CPUs */
	patch_image("fbsd12/kernel", "fbsd12/mem.raw", copy, va, val, NULL, n);
	free(va);
	free(val);
	kd = kvs_open(fixture_path("fbsd12/kernel"), copy, KVS_O_RAW, err);
	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_msg(memstat_kvm_uma(l, kd) == 0, "%s", kvs_geterr(kd));
	ck_assert_uint_eq(memstat_mtl_count(l), json_array_size(zones));
	ck_assert_ptr_null(check_zone_counts(memstat_mtl_first(l), zones));
	memstat_mtl_free(l);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/*
 * A zone's list of full buckets that loops, in each layout (13+ and 12 keep
 * a list per memory domain, 11 one per zone): its last bucket linked back to
 * its first, or its first bucket to itself.  The refresh ends with an error
 * that names the zone and a bucket on the loop, and the list keeps what the
 * refresh before gave it.  Buckets and the link's offset are the generator's.
 */
static const char *const cycle_dirs[] = { "fbsd14", "fbsd12", "fbsd11" };

START_TEST(bucket_list_cycle)
{
	const char *dir = cycle_dirs[_i / 2];
	int self = _i % 2;
	char path[256], copy[4096], err[KVS_ERRBUF_SIZE];
	json_t *t, *uma, *zones, *bk = NULL, *z = NULL;
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	uint64_t link, from, to, free0, zfree0, at;
	size_t i, d, count0;
	const char *m;
	kvs_t *kd;
	int on_loop = 0;

	snprintf(path, sizeof(path), "%s/truth.json", dir);
	t = load_truth(path);
	uma = json_object_get(t, "uma");
	zones = json_object_get(uma, "zones");
	link = jget(uma, "bucket_link");
	for (i = 0; i < json_array_size(zones) && bk == NULL; i++) {
		json_t *doms = json_object_get(json_array_get(zones, i), "domain_buckets");
		for (d = 0; d < json_array_size(doms) && bk == NULL; d++)
			if (json_array_size(json_array_get(doms, d)) >= (size_t)(self ? 1 : 2)) {
				bk = json_array_get(doms, d);
				z = json_array_get(zones, i);
			}
	}
	ck_assert_msg(bk != NULL, "%s: no zone with a bucket list to loop", dir);
	to = jnum(json_array_get(bk, 0));
	from = self ? to : jnum(json_array_get(bk, json_array_size(bk) - 1));

	/* The refresh before, on the fixture as it is. */
	snprintf(path, sizeof(path), "%s/kernel", dir);
	snprintf(copy, sizeof(copy), "%s/mem.raw", dir);
	kd = kvs_open(fixture_path(path), fixture_path(copy), 0, err);
	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_msg(memstat_kvm_uma(l, kd) == 0, "%s", kvs_geterr(kd));
	count0 = memstat_mtl_count(l);
	for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt))
		if (memstat_get_kaddr(mt) == jget(z, "addr"))
			break;
	ck_assert_ptr_nonnull(mt);
	free0 = memstat_get_free(mt);
	zfree0 = memstat_get_zonefree(mt);
	ck_assert_uint_eq(zfree0, jget(z, "zonefree"));
	kvs_close(kd);

	{
		char image[256];
		uint64_t va = from + link;
		snprintf(image, sizeof(image), "%s/mem.raw", dir);
		snprintf(copy, sizeof(copy), "%s/bucket-cycle-%s-%d.raw", test_tmpdir(), dir, self);
		patch_image(path, image, copy, &va, &to, NULL, 1);
	}
	kd = kvs_open(fixture_path(path), copy, KVS_O_RAW, err);
	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_int_eq(memstat_kvm_uma(l, kd), -1);
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_DATA);
	m = strstr(kvs_geterr(kd), "zone bucket list loops back to 0x");
	ck_assert_msg(m != NULL, "%s", kvs_geterr(kd));
	ck_assert_msg(strstr(kvs_geterr(kd), json_string_value(json_object_get(z, "name"))) != NULL,
	    "%s", kvs_geterr(kd));
	at = strtoull(m + strlen("zone bucket list loops back to "), NULL, 16);
	for (i = 0; i < json_array_size(bk); i++)
		on_loop |= at == jnum(json_array_get(bk, i));
	ck_assert_msg(on_loop, "%s", kvs_geterr(kd));
	/* What the refresh before gave is still there. */
	ck_assert_uint_eq(memstat_mtl_count(l), count0);
	ck_assert_uint_eq(memstat_get_free(mt), free0);
	ck_assert_uint_eq(memstat_get_zonefree(mt), zfree0);
	kvs_close(kd);
	memstat_mtl_free(l);
	json_decref(t);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("uma");
	TCase *tc = tcase_create("zones");

	tcase_set_timeout(tc, 120);
	int n = (int)(sizeof(gens) / sizeof(gens[0]));
	tcase_add_loop_test(tc, zones_equal_truth, 0, n);
	tcase_add_loop_test(tc, vmstat_z_text, 0, n);
	tcase_add_test(tc, all_and_refresh);
	tcase_add_test(tc, refresh_across_moments);
	tcase_add_test(tc, unmapped_percpu_bucket);
	tcase_add_test(tc, absent_cpu_counters_ignored);
	tcase_add_test(tc, bad_input);
	tcase_add_test(tc, shared_counter_slots);
	tcase_add_loop_test(tc, bucket_list_cycle, 0, 2 * (int)(sizeof(cycle_dirs) / sizeof(cycle_dirs[0])));
	suite_add_tcase(s, tc);
	return run_suite(s);
}
