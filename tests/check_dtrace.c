/*
 * check_dtrace.c - modules located through linker_files, DTrace probes of
 * every provider and the profile provider's intervals and fire times, and
 * profil(2) processes, against the generator's truth; bad tables fail cleanly.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kvmprof.h"
#include "testutil.h"

static kvs_t *
open_with_modules(const char *core, int flags)
{
	char err[KVS_ERRBUF_SIZE];
	kvs_t *kd = kvs_open(fixture_path("fbsd14/kernel"), core, flags, err);

	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_int_eq(kvs_add_module(kd, fixture_path("fbsd14/dtrace.ko")), 1);
	ck_assert_int_eq(kvs_add_module(kd, fixture_path("fbsd14/profile.ko")), 1);
	return kd;
}

START_TEST(probes_equal_truth)
{
	static const char *const cores[] = { "fbsd14/vmcore.minidump3", "fbsd14/vmcore.elf", "fbsd14/mem.raw" };
	json_t *t = load_truth("fbsd14/truth.json"), *probes, *pt, *nf;
	kvs_t *kd = open_with_modules(fixture_path(cores[_i]), 0);
	kvmprof_probes_t *p;
	uint64_t addr;
	size_t i, k;

	/* Module symbols resolve at the truth's load addresses. */
	ck_assert_int_eq(kvs_symbol(kd, "dtrace_nprobes", &addr, NULL), 0);
	json_t *mods = json_object_get(json_object_get(t, "dtrace"), "modules");
	uint64_t dbase = jget(json_array_get(mods, 0), "base");
	ck_assert(addr >= dbase && addr < dbase + jget(json_array_get(mods, 0), "size"));

	probes = json_object_get(json_object_get(t, "dtrace"), "probes");
	p = kvmprof_probes_read(kd, 1);
	ck_assert_msg(p != NULL, "%s", kvs_geterr(kd));
	ck_assert_uint_eq(kvmprof_probes_count(p), json_array_size(probes));
	json_array_foreach(probes, i, pt) {
		const struct kvmprof_probe *pr = kvmprof_probes_get(p, i);
		ck_assert_uint_eq(pr->id, jget(pt, "id"));
		ck_assert_str_eq(pr->provider, json_string_value(json_object_get(pt, "provider")));
		ck_assert_str_eq(pr->function, json_string_value(json_object_get(pt, "function")));
		ck_assert_str_eq(pr->name, json_string_value(json_object_get(pt, "name")));
		ck_assert_int_eq(pr->enabled, json_is_true(json_object_get(pt, "enabled")));
		if (json_object_get(pt, "kind") == NULL)
			continue;
		ck_assert_int_eq(pr->kind, strcmp(json_string_value(json_object_get(pt, "kind")), "tick") == 0);
		ck_assert_uint_eq(pr->interval_ns, jget(pt, "interval_ns"));
		ck_assert_uint_eq(pr->interval_sbt, jget(pt, "interval_sbt"));
		ck_assert(fabs(pr->hz - json_real_value(json_object_get(pt, "hz"))) < 1e-6);
		if (json_object_get(pt, "next_fire_ns") != NULL)
			ck_assert_uint_eq(pr->next_fire_ns, jget(pt, "next_fire_ns"));
		nf = json_object_get(pt, "next_fire_ns_percpu");
		if (nf != NULL) {
			const char *cpu;
			json_t *v;
			size_t n = 0;
			ck_assert_ptr_nonnull(pr->next_fire_percpu);
			json_object_foreach(nf, cpu, v) {
				ck_assert_uint_eq(pr->next_fire_percpu[atoi(cpu)], jnum(v));
				n++;
			}
			for (k = 0; k < kvmprof_probes_maxcpus(p); k++)
				n -= pr->next_fire_percpu[k] != 0;
			ck_assert_uint_eq(n, 0);                /* absent CPUs stay empty */
		} else
			ck_assert_ptr_null(pr->next_fire_percpu);
	}
	kvmprof_probes_free(p);
	/* Profile provider only. */
	p = kvmprof_probes_read(kd, 0);
	ck_assert_ptr_nonnull(p);
	for (i = 0; i < kvmprof_probes_count(p); i++)
		ck_assert_str_eq(kvmprof_probes_get(p, i)->provider, "profile");
	kvmprof_probes_free(p);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

START_TEST(profil_equal_truth)
{
	json_t *t = load_truth("fbsd14/truth.json"), *pt;
	kvs_t *kd = open_with_modules(fixture_path("fbsd14/vmcore.minidump3"), 0);
	struct kvmprof_proc *v;
	size_t n, i, k = 0;

	ck_assert_int_eq(kvmprof_profil_read(kd, &v, &n), 0);
	json_array_foreach(json_object_get(t, "procs"), i, pt) {
		if (!json_is_true(json_object_get(pt, "profil")))
			continue;
		ck_assert_uint_lt(k, n);
		ck_assert_int_eq(v[k].pid, (int)jget(pt, "pid"));
		ck_assert_str_eq(v[k].comm, json_string_value(json_object_get(pt, "comm")));
		ck_assert_uint_eq(v[k].pr_base, jget(pt, "pr_base"));
		ck_assert_uint_eq(v[k].pr_size, jget(pt, "pr_size"));
		ck_assert_uint_eq(v[k].pr_off, jget(pt, "pr_off"));
		ck_assert_uint_eq(v[k].pr_scale, jget(pt, "pr_scale"));
		k++;
	}
	ck_assert_uint_eq(k, n);
	free(v);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

START_TEST(bad_tables)
{
	char err[KVS_ERRBUF_SIZE];
	kvs_t *kd = kvs_open(fixture_path("fbsd14/kernel"), fixture_path("fbsd14/mem.raw"), 0, err);
	char copy[4096];
	uint64_t addr, pa;
	size_t len;
	uint8_t *img;
	int32_t big = 900000;

	snprintf(copy, sizeof(copy), "%s", path_join(test_tmpdir(), "dtrace.raw"));
	/* Without the modules: a clear message that says what is missing. */
	ck_assert_ptr_nonnull(kd);
	ck_assert_ptr_null(kvmprof_probes_read(kd, 1));
	ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "dtrace.ko"));
	/* A module that is not loaded in this dump. */
	ck_assert_int_eq(kvs_add_module(kd, fixture_path("fbsd14/kernel.other")), -1);
	ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "not loaded"));
	kvs_close(kd);
	/* dtrace_nprobes far beyond the array: an error, not a huge allocation. */
	kd = open_with_modules(fixture_path("fbsd14/mem.raw"), 0);
	ck_assert_int_eq(kvs_symbol(kd, "dtrace_nprobes", &addr, NULL), 0);
	ck_assert_int_eq(kvs_kvtop(kd, addr, &pa), 0);
	kvs_close(kd);
	img = read_file(fixture_path("fbsd14/mem.raw"), &len);
	memcpy(img + pa, &big, 4);
	write_file(copy, img, len);
	kd = open_with_modules(copy, KVS_O_RAW);
	ck_assert_ptr_null(kvmprof_probes_read(kd, 1));
	ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "dtrace_nprobes"));
	kvs_close(kd);
	big = 0x7fffffff;
	memcpy(img + pa, &big, 4);
	write_file(copy, img, len);
	kd = open_with_modules(copy, KVS_O_RAW);
	ck_assert_ptr_null(kvmprof_probes_read(kd, 1));
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_DATA);
	kvs_close(kd);
	free(img);
}
END_TEST

/* Module symbols where the kernel linker put them: profile.ko's .data (4
 * bytes) then its .bss (0xf8 bytes, 32-byte aligned) in one block whose
 * base and size the generator recorded, so the .bss ends at base + size;
 * a symbol's address follows from that and its nm offset alone. */
START_TEST(module_sections_aligned)
{
	json_t *t = load_truth("fbsd14/truth.json"), *m;
	kvs_t *kd = open_with_modules(fixture_path("fbsd14/vmcore.elf"), 0);
	uint64_t base = 0, size = 0, addr;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(t, "dtrace"), "modules"), i, m)
		if (strcmp(json_string_value(json_object_get(m, "name")), "profile.ko") == 0) {
			base = jget(m, "base");
			size = jget(m, "size");
		}
	ck_assert_uint_ne(base, 0);
	ck_assert_uint_eq(size, 0x118);
	ck_assert_int_eq(kvs_symbol(kd, "profile_max", &addr, NULL), 0);     /* .data + 0 */
	ck_assert_uint_eq(addr, base);
	ck_assert_int_eq(kvs_symbol(kd, "profile_total", &addr, NULL), 0);   /* .bss + 4 */
	ck_assert_uint_eq(addr, base + size - 0xf8 + 4);
	ck_assert_int_eq(kvs_symbol(kd, "profile_percpu_example", &addr, NULL), 0); /* .bss + 0xa0 */
	ck_assert_uint_eq(addr, base + size - 0xf8 + 0xa0);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("dtrace");
	TCase *tc = tcase_create("probes");

	tcase_add_loop_test(tc, probes_equal_truth, 0, 3);
	tcase_add_test(tc, profil_equal_truth);
	tcase_add_test(tc, bad_tables);
	tcase_add_test(tc, module_sections_aligned);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
