/*
 * check_census_freebsd - the FreeBSD memory census (census.h) against the
 * generator's model (truth.json's "vm": vmstat -s's lines, top's Mem:
 * line, the physical free lists, the vmem arenas; the malloc(9) and UMA
 * totals from its types and zones), on every generation and dump form of
 * the fixtures, and its answers on broken input: a flagged partial answer
 * (1), or a clear error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census.h"
#include "testutil.h"

static const struct form {
	const char *dir, *core, *truth;
} forms[] = {
	{ "fbsd14", "vmcore.minidump1", "truth.json" }, { "fbsd14", "vmcore.minidump2", "truth.json" },
	{ "fbsd14", "vmcore.minidump3", "truth.json" }, { "fbsd14", "vmcore.elf", "truth.json" },
	{ "fbsd14", "mem.raw", "truth.json" }, { "fbsd14", "vmcore.kva.elf", "truth.json" },
	{ "fbsd14", "vmcore.minidump3.t2", "truth.t2.json" },
	{ "fbsd14-s2", "vmcore.minidump1", "truth.json" }, { "fbsd14-s2", "vmcore.elf", "truth.json" },
	{ "fbsd14-s2", "mem.raw", "truth.json" },
	{ "fbsd12", "vmcore.minidump2", "truth.json" }, { "fbsd12", "mem.raw", "truth.json" },
	{ "fbsd12", "vmcore.minidump2.t2", "truth.t2.json" },
	{ "fbsd11", "vmcore.minidump2", "truth.json" }, { "fbsd11", "mem.raw", "truth.json" },
	{ "fbsd5", "vmcore.elf", "truth.json" }, { "fbsd5", "mem.raw", "truth.json" },
};
#define NFORMS ((int)(sizeof(forms) / sizeof(forms[0])))

static const char *
kernel_of(const char *dir)
{
	static char k[256];
	/* the second seed shares the first's kernel */
	snprintf(k, sizeof(k), "%s/kernel", strcmp(dir, "fbsd14-s2") == 0 ? "fbsd14" : dir);
	return fixture_path(k);
}

static kvs_t *
open_form(const struct form *f, json_t **t)
{
	char err[KVS_ERRBUF_SIZE], c[256];
	kvs_t *kd;

	snprintf(c, sizeof(c), "%s/%s", f->dir, f->core);
	kd = kvs_open(kernel_of(f->dir), fixture_path(c), 0, err);
	ck_assert_msg(kd != NULL, "%s: %s", c, err);
	snprintf(c, sizeof(c), "%s/%s", f->dir, f->truth);
	*t = load_truth(c);
	ck_assert_msg(json_object_get(*t, "vm") != NULL, "%s has no vm model", c);
	return kd;
}

static const struct kvs_counter *
find(const struct kvs_counter *c, size_t n, const char *group, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(c[i].group, group) == 0 && strcmp(c[i].key, key) == 0)
			return &c[i];
	return NULL;
}

START_TEST(meminfo_equals_truth)
{
	const struct form *f = &forms[_i];
	json_t *t, *vm, *e, *q;
	kvs_t *kd = open_form(f, &t);
	struct kvs_counter *c;
	size_t n, i, nv = 0, nq = 0;

	vm = json_object_get(t, "vm");
	int rc = kvs_meminfo(kd, &c, &n);
	for (i = 0; rc == 1 && i < n; i++)
		ck_assert_msg(c[i].flags == 0, "%s/%s %s: %s", f->dir, f->core, c[i].name, c[i].note);
	ck_assert_int_eq(rc, 0);
	/* vmstat -s's lines, in its order, with its words */
	for (i = 0; i < n && strcmp(c[i].group, "vm") == 0; i++, nv++) {
		e = json_array_get(json_object_get(vm, "vmstat_s"), i);
		ck_assert_msg(e != NULL, "%s/%s: extra vm line %s", f->dir, f->core, c[i].key);
		ck_assert_str_eq(c[i].key, json_string_value(json_object_get(e, "key")));
		ck_assert_str_eq(c[i].name, json_string_value(json_object_get(e, "name")));
		ck_assert_msg(c[i].value == jget(e, "value"), "%s/%s %s: %llu, truth %llu", f->dir,
		    f->core, c[i].key, (unsigned long long)c[i].value,
		    (unsigned long long)jget(e, "value"));
		ck_assert_uint_eq(c[i].flags, 0);
	}
	ck_assert_uint_eq(nv, json_array_size(json_object_get(vm, "vmstat_s")));
	/* top's Mem: line */
	json_array_foreach(json_object_get(vm, "queues"), nq, q) {
		const char *name = json_string_value(json_object_get(q, "name"));
		ck_assert_msg(i + nq < n && strcmp(c[i + nq].group, "queues") == 0, "%s missing", name);
		ck_assert_str_eq(c[i + nq].name, name);
		ck_assert_msg(c[i + nq].value == jget(q, "value"), "%s/%s %s: %llu KiB, truth %llu",
		    f->dir, f->core, name, (unsigned long long)c[i + nq].value,
		    (unsigned long long)jget(q, "value"));
		ck_assert_int_eq(c[i + nq].unit, KVS_UNIT_KIB);
		ck_assert_msg(c[i + nq].flags == 0, "%s: %s", name, c[i + nq].note);
	}
	nq = json_array_size(json_object_get(vm, "queues"));
	/* the allocators' totals: the model's malloc types and UMA zones */
	uint64_t mb = 0, ub = 0;
	json_array_foreach(json_object_get(json_object_get(t, "malloc"), "types"), i, e)
		mb += jget(e, "memuse_bytes");
	json_t *uma = json_object_get(t, "uma");
	if (uma != NULL)
		json_array_foreach(json_object_get(uma, "zones"), i, e)
			ub += jget(e, "bytes");
	const struct kvs_counter *m = find(c, n, "allocators", "malloc_bytes");
	const struct kvs_counter *u = find(c, n, "allocators", "uma_bytes");
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->value, mb);
	ck_assert_uint_ne(mb, 0);
	if (uma != NULL) {       /* no UMA, no UMA line */
		ck_assert_ptr_nonnull(u);
		ck_assert_uint_eq(u->value, ub);
		ck_assert_uint_ne(ub, 0);
	} else
		ck_assert_ptr_null(u);
	ck_assert_uint_eq(n, nv + nq + 1 + (uma != NULL));
	kvs_counters_free(c, n);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

START_TEST(pzones_equal_truth)
{
	const struct form *f = &forms[_i];
	json_t *t, *vm, *e, *pools;
	kvs_t *kd = open_form(f, &t);
	struct kvs_pzone *z;
	size_t n, i;

	vm = json_object_get(t, "vm");
	if (json_object_get(vm, "phys_free") == NULL) {
		/* 5.x: no vm_phys yet; said so */
		ck_assert_int_eq(kvs_pzones(kd, &z, &n), -1);
		ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "vm_phys_free_queues"));
		ck_assert_int_eq(kvs_arenas(kd, (struct kvs_arena **)&z, &n), -1);
		ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "vmem"));
		goto out;
	}
	ck_assert_int_eq(kvs_pzones(kd, &z, &n), 0);
	ck_assert_uint_eq(n, json_array_size(json_object_get(vm, "phys_free")));
	uint64_t total = 0;
	json_array_foreach(json_object_get(vm, "phys_free"), i, e) {
		ck_assert_int_eq(z[i].node, (int)jget(e, "domain"));
		ck_assert_int_eq(z[i].index, (int)jget(e, "list"));
		ck_assert_uint_eq(z[i].kaddr, jget(e, "address"));
		ck_assert_uint_eq(z[i].flags, 0);
		pools = json_object_get(e, "pools");
		ck_assert_uint_eq(z[i].npools, json_array_size(pools));
		for (size_t p = 0; p < z[i].npools; p++) {
			json_t *o = json_array_get(pools, p);
			ck_assert_uint_eq(z[i].norders, json_array_size(o));
			for (size_t k = 0; k < z[i].norders; k++) {
				ck_assert_uint_eq(z[i].pool_free[p][k], jnum(json_array_get(o, k)));
				total += z[i].pool_free[p][k];
			}
		}
		for (size_t k = 0; k < z[i].norders; k++) {
			uint64_t s = 0;
			for (size_t p = 0; p < z[i].npools; p++)
				s += jnum(json_array_get(json_array_get(pools, p), k));
			ck_assert_uint_eq(z[i].free[k], s);
		}
	}
	ck_assert_uint_ne(total, 0);
	kvs_pzones_free(z, n);

	struct kvs_arena *a;
	ck_assert_int_eq(kvs_arenas(kd, &a, &n), 0);
	ck_assert_uint_eq(n, json_array_size(json_object_get(vm, "arenas")));
	json_array_foreach(json_object_get(vm, "arenas"), i, e) {
		ck_assert_str_eq(a[i].name, json_string_value(json_object_get(e, "name")));
		ck_assert_uint_eq(a[i].kaddr, jget(e, "address"));
		ck_assert_uint_eq(a[i].quantum, jget(e, "quantum"));
		ck_assert_uint_eq(a[i].size, jget(e, "size"));
		ck_assert_uint_eq(a[i].inuse, jget(e, "inuse"));
		ck_assert_uint_eq(a[i].free, jget(e, "free"));
		ck_assert_uint_eq(a[i].cflags, 0);
	}
	kvs_arenas_free(a, n);
out:
	kvs_close(kd);
	json_decref(t);
}
END_TEST

static uint64_t
sym(kvs_t *kd, const char *name)
{
	uint64_t a;
	ck_assert_msg(kvs_symbol(kd, name, &a, NULL) == 0, "%s", name);
	return a;
}

/* One counter(9) of vm_cnt points where nothing is mapped, and the second
 * arena's list link too: those are flagged, everything else is kept. */
START_TEST(unreadable_parts_flagged)
{
	char err[KVS_ERRBUF_SIZE];
	const char *copy = path_join(test_tmpdir(), "vm-broken.raw");
	json_t *t = load_truth("fbsd14/truth.json");
	kvs_t *kd = kvs_open(fixture_path("fbsd14/kernel"), fixture_path("fbsd14/mem.raw"), 0, err);
	ck_assert_msg(kd != NULL, "%s", err);
	uint64_t hole = jnum(json_array_get(json_object_get(t, "unmapped"), 0));
	uint64_t pcpu = rd64(kd, sym(kd, "__pcpu"));
	uint64_t va[2], val[2];
	va[0] = sym(kd, "vm_cnt") + member_off(kd, "struct vmmeter", "v_trap");
	val[0] = hole - pcpu;
	json_t *ar = json_object_get(json_object_get(t, "vm"), "arenas");
	uint64_t second = jget(json_array_get(ar, 1), "address");
	va[1] = second + member_off(kd, "struct vmem", "vm_alllist.le_next");
	val[1] = hole;
	kvs_close(kd);
	patch_image("fbsd14/kernel", "fbsd14/mem.raw", copy, va, val, NULL, 2);
	kd = kvs_open(fixture_path("fbsd14/kernel"), copy, KVS_O_RAW, err);
	ck_assert_msg(kd != NULL, "%s", err);

	struct kvs_counter *c;
	size_t n, i, flagged = 0;
	ck_assert_int_eq(kvs_meminfo(kd, &c, &n), 1);
	for (i = 0; i < n; i++) {
		if (c[i].flags & KVS_CF_UNREADABLE) {
			flagged++;
			ck_assert_str_eq(c[i].key, "v_trap");
			ck_assert_uint_eq(c[i].value, 0);
			ck_assert_str_ne(c[i].note, "");
		}
	}
	ck_assert_uint_eq(flagged, 1);
	json_t *e;
	json_array_foreach(json_object_get(json_object_get(t, "vm"), "vmstat_s"), i, e) {
		const struct kvs_counter *k = find(c, n, "vm", json_string_value(json_object_get(e, "key")));
		ck_assert_ptr_nonnull(k);
		if (strcmp(k->key, "v_trap") != 0)
			ck_assert_uint_eq(k->value, jget(e, "value"));
	}
	kvs_counters_free(c, n);

	struct kvs_arena *a;
	ck_assert_int_eq(kvs_arenas(kd, &a, &n), 1);
	ck_assert_uint_eq(n, 3);         /* two read, the third behind the broken link */
	ck_assert_str_eq(a[0].name, json_string_value(json_object_get(json_array_get(ar, 0), "name")));
	ck_assert_uint_eq(a[1].size, jget(json_array_get(ar, 1), "size"));
	ck_assert_uint_eq(a[2].kaddr, hole);
	ck_assert(a[2].cflags & KVS_CF_UNREADABLE);
	kvs_arenas_free(a, n);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/* Absurd domain counts and a missing layout give an error naming them. */
START_TEST(bad_input)
{
	char err[KVS_ERRBUF_SIZE];
	const char *copy = path_join(test_tmpdir(), "vm-domains.raw");
	kvs_t *kd = kvs_open(fixture_path("fbsd14/kernel"), fixture_path("fbsd14/mem.raw"), 0, err);
	ck_assert_msg(kd != NULL, "%s", err);
	uint64_t va = sym(kd, "vm_ndomains"), val = 1000;
	size_t w = 4;
	kvs_close(kd);
	patch_image("fbsd14/kernel", "fbsd14/mem.raw", copy, &va, &val, &w, 1);
	kd = kvs_open(fixture_path("fbsd14/kernel"), copy, KVS_O_RAW, err);
	ck_assert_msg(kd != NULL, "%s", err);
	struct kvs_pzone *z;
	size_t n;
	ck_assert_int_eq(kvs_pzones(kd, &z, &n), -1);
	ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "1000 domains"));
	ck_assert_int_eq(kvs_vmalloc(kd, (struct kvs_varea **)&z, &n), -1);
	ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "FreeBSD"));
	kvs_close(kd);
}
END_TEST

/* Each symbol of the truth, at its start and inside: that symbol; a heap
 * address: unknown, saying why. */
START_TEST(whatis_symbols)
{
	const struct form *f = &forms[_i];
	json_t *t, *e;
	kvs_t *kd = open_form(f, &t);
	struct kvs_whatis w;
	const char *name;
	char want[160];
	size_t nsym = 0;

	json_object_foreach(json_object_get(t, "symbols"), name, e) {
		uint64_t a = jget(e, "addr"), size = jget(e, "size");
		if (size == 0)
			continue;
		uint64_t offs[2] = { 0, size - 1 };
		for (int k = 0; k < 2; k++) {
			ck_assert_int_eq(kvs_whatis(kd, a + offs[k], &w), 0);
			ck_assert_msg(w.kind == KVS_WHATIS_SYMBOL, "%s+%llu: %s", name,
			    (unsigned long long)offs[k], w.note);
			snprintf(want, sizeof(want), "%s+0x%llx", name, (unsigned long long)offs[k]);
			ck_assert_str_eq(w.symbol, want);
			ck_assert_str_eq(kvs_whatis_kind_str(w.kind), "symbol");
		}
		nsym++;
	}
	ck_assert_uint_gt(nsym, 5);
	json_t *tr = json_array_get(json_object_get(t, "translations"), 1);
	uint64_t heap = jget(tr, "va");
	ck_assert_int_eq(kvs_whatis(kd, heap, &w), 0);
	if (json_object_get(t, "zslab") != NULL && strstr(f->core, "kva") == NULL) {
		/* A kernel with a vm_page array: the heap page's struct vm_page
		 * (not in the gdb core, addressed by VA alone: no physical pages). */
		ck_assert_int_eq(w.kind, KVS_WHATIS_PAGE);
		ck_assert_uint_eq(w.pfn, jget(tr, "pa") / 4096);
	} else {
		ck_assert_int_eq(w.kind, KVS_WHATIS_UNKNOWN);
		ck_assert_str_ne(w.note, "");
	}
	kvs_close(kd);
	json_decref(t);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("census_freebsd");
	TCase *tc = tcase_create("census");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, meminfo_equals_truth, 0, NFORMS);
	tcase_add_loop_test(tc, pzones_equal_truth, 0, NFORMS);
	tcase_add_loop_test(tc, whatis_symbols, 0, NFORMS);
	tcase_add_test(tc, unreadable_parts_flagged);
	tcase_add_test(tc, bad_input);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
