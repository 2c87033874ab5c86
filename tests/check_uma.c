/*
 * check_uma.c - memstat_kvm_uma against the generator's truth (FreeBSD 13+
 * layout): every field of every zone, vmstat -z text, memstat_kvm_all,
 * refresh, and bad input (a looping zone list, a bucket count above its
 * capacity, an unreadable counter).
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

/* A copy of the raw image with 8 bytes patched at the PA of `va`. */
static void
patch(char *out, size_t outlen, uint64_t va, uint64_t value, size_t width)
{
	kvs_t *kd = open_core(fixture_path("fbsd14/mem.raw"), 0);
	uint64_t pa;
	size_t len;
	uint8_t *img = read_file(fixture_path("fbsd14/mem.raw"), &len);

	snprintf(out, outlen, "%s", path_join(test_tmpdir(), "uma.raw"));
	ck_assert_int_eq(kvs_kvtop(kd, va, &pa), 0);
	memcpy(img + pa, &value, width);
	ck_assert_int_eq(write_file(out, img, len), 0);
	free(img);
	kvs_close(kd);
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
	uint64_t link_off, cpu_off, cnt_off, alloc_off, allocs_off;

	link_off = member_off(kd, "struct uma_zone", "uz_link");
	cpu_off = member_off(kd, "struct uma_zone", "uz_cpu");
	alloc_off = member_off(kd, "struct uma_cache", "uc_allocbucket");
	cnt_off = member_off(kd, "struct uma_cache_bucket", "ucb_cnt");
	allocs_off = member_off(kd, "struct uma_zone", "uz_allocs");
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
	/* 3: a counter(9) whose per-CPU copies are unreadable. */
	patch(copy, sizeof(copy), z + allocs_off, 0x7000000000ULL, 8);
	kd = open_core(copy, KVS_O_RAW);
	ck_assert_int_eq(memstat_kvm_uma(l, kd), -1);
	ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "counter(9)"));
	ck_assert_int_eq(memstat_mtl_geterror(l), MEMSTAT_ERROR_KVM);
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
	ck_assert_int_eq(memstat_kvm_uma(l, kd), -1);
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_UNMAPPED);
	ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "bucket at 0xffffffff8f000000"));
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
	SRunner *sr;
	int nf;

	tcase_set_timeout(tc, 120);
	int n = (int)(sizeof(gens) / sizeof(gens[0]));
	tcase_add_loop_test(tc, zones_equal_truth, 0, n);
	tcase_add_loop_test(tc, vmstat_z_text, 0, n);
	tcase_add_test(tc, all_and_refresh);
	tcase_add_test(tc, refresh_across_moments);
	tcase_add_test(tc, unmapped_percpu_bucket);
	tcase_add_test(tc, bad_input);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
