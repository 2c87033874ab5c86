/*
 * check_malloc.c - memstat_kvm_malloc against the generator's truth for each
 * malloc(9) generation (5.x, 6-11, 12, 13+), the vmstat -m text of each
 * generation, and incremental refresh across two cores of one kernel; copies
 * of the raw images with values the tests write (garbage in absent CPUs'
 * records, counts that need checked sums, statistics out of the dump, 5.x
 * calls below the items in use).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "kvmstat.h"
#include "memstat.h"
#include "memstat_internal.h"
#include "testutil.h"

struct gen {
	const char *dir, *core;
	int layout;
};
static const struct gen gens[] = {
	{ "fbsd14", "vmcore.minidump3", 13 },
	{ "fbsd14", "vmcore.elf", 13 },
	{ "fbsd14-s2", "mem.raw", 13 },
	{ "fbsd12", "vmcore.minidump2", 12 },
	{ "fbsd11", "vmcore.minidump2", 6 },
	{ "fbsd5", "vmcore.elf", 5 },
};

static kvs_t *
open_core(const char *dir, const char *core)
{
	char err[KVS_ERRBUF_SIZE], k[256], c[256];
	kvs_t *kd;

	snprintf(k, sizeof(k), "%s/kernel", strcmp(dir, "fbsd14-s2") == 0 ? "fbsd14" : dir);
	snprintf(c, sizeof(c), "%s/%s", dir, core);
	kd = kvs_open(fixture_path(k), fixture_path(c), 0, err);
	ck_assert_msg(kd != NULL, "%s: %s", c, err);
	return kd;
}

static struct memory_type *
find_addr(struct memory_type_list *l, uint64_t addr)
{
	struct memory_type *mt;

	for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt))
		if (memstat_get_kaddr(mt) == addr)
			return mt;
	return NULL;
}

START_TEST(tables_equal_truth)
{
	const struct gen *g = &gens[_i];
	char rel[256];
	json_t *t, *types, *row;
	struct memory_type_list *l = memstat_mtl_alloc();
	kvs_t *kd = open_core(g->dir, g->core);
	size_t i, n = 0;
	const char *warn;

	snprintf(rel, sizeof(rel), "%s/truth.json", g->dir);
	t = load_truth(rel);
	types = json_object_get(json_object_get(t, "malloc"), "types");
	ck_assert_int_eq(memstat_kvm_malloc_layout(kd), g->layout);
	ck_assert_msg(memstat_kvm_malloc(l, kd) == 0, "%s", kvs_geterr(kd));
	/* The type with a bad magic/version is skipped with a warning. */
	ck_assert_uint_eq(kvs_warnings(kd, &warn), 1);
	ck_assert_ptr_nonnull(strstr(warn, "skipped"));
	ck_assert_uint_eq(memstat_mtl_count(l), json_array_size(types));
	/* List order: the truth lists the types in the kernel's order (from
	 * kmemstatistics); libmemstat inserts each type it discovers at the
	 * head, so its list is the reverse. */
	struct memory_type *mt = memstat_mtl_first(l);
	for (i = json_array_size(types); i-- > 0; mt = memstat_mtl_next(mt)) {
		ck_assert_msg(mt != NULL, "list ends before truth type %zu", i);
		ck_assert_msg(memstat_get_kaddr(mt) == jget(json_array_get(types, i), "addr"),
		    "list position %zu: 0x%llx, truth 0x%llx", json_array_size(types) - 1 - i,
		    (unsigned long long)memstat_get_kaddr(mt),
		    (unsigned long long)jget(json_array_get(types, i), "addr"));
	}
	ck_assert_ptr_null(mt);
	json_array_foreach(types, i, row) {
		struct memory_type *m2 = find_addr(l, jget(row, "addr"));
		ck_assert_ptr_nonnull(m2);
		ck_assert_str_eq(memstat_get_name(m2), json_string_value(json_object_get(row, "name")));
		ck_assert_uint_eq(memstat_get_numallocs(m2), jget(row, "numallocs"));
		ck_assert_uint_eq(memstat_get_count(m2), jget(row, "inuse"));
		ck_assert_uint_eq(memstat_get_bytes(m2), jget(row, "memuse_bytes"));
		ck_assert_uint_eq(memstat_get_sizemask(m2), jget(row, "sizemask"));
		ck_assert_int_eq(memstat_get_allocator(m2), ALLOCATOR_MALLOC);
		if (g->layout != 5) {
			json_t *pc;
			size_t k;
			ck_assert_uint_eq(memstat_get_memalloced(m2), jget(row, "memalloced"));
			ck_assert_uint_eq(memstat_get_memfreed(m2), jget(row, "memfreed"));
			ck_assert_uint_eq(memstat_get_numfrees(m2), jget(row, "numfrees"));
			json_array_foreach(json_object_get(row, "percpu"), k, pc) {
				size_t cpu = jget(pc, "cpu");
				ck_assert_uint_eq(memstat_get_percpu_memalloced(m2, cpu), jget(pc, "memalloced"));
				ck_assert_uint_eq(memstat_get_percpu_memfreed(m2, cpu), jget(pc, "memfreed"));
				ck_assert_uint_eq(memstat_get_percpu_numallocs(m2, cpu), jget(pc, "numallocs"));
				ck_assert_uint_eq(memstat_get_percpu_numfrees(m2, cpu), jget(pc, "numfrees"));
				ck_assert_uint_eq(memstat_get_percpu_sizemask(m2, cpu), jget(pc, "sizemask"));
			}
		} else
			ck_assert_uint_eq(memstat_get_maxused(m2), jget(row, "maxused"));
		n++;
	}
	ck_assert_uint_eq(n, memstat_mtl_count(l));
	/* Duplicate names (every generation's truth has two devbuf types) are
	 * separate rows; find returns the first in list order. */
	{
		struct memory_type *a = memstat_mtl_find(l, ALLOCATOR_MALLOC, "devbuf");
		struct memory_type *first = NULL;
		int dups = 0, want = 0;
		json_array_foreach(types, i, row)
			want += strcmp(json_string_value(json_object_get(row, "name")), "devbuf") == 0;
		ck_assert_int_eq(want, 2);
		for (mt = memstat_mtl_first(l); mt; mt = memstat_mtl_next(mt))
			if (strcmp(memstat_get_name(mt), "devbuf") == 0) {
				if (first == NULL)
					first = mt;
				dups++;
			}
		ck_assert_int_eq(dups, want);
		ck_assert_ptr_nonnull(a);
		ck_assert_ptr_eq(a, first);
		ck_assert_ptr_null(memstat_mtl_find(l, ALLOCATOR_UMA, "devbuf"));
		ck_assert_ptr_null(memstat_mtl_find(l, ALLOCATOR_MALLOC, "no_such_type"));
	}
	/* Zone table */
	json_t *zs = json_object_get(json_object_get(t, "malloc"), "zone_sizes");
	ck_assert_uint_eq(memstat_malloc_zone_get_count(), json_array_size(zs));
	json_array_foreach(zs, i, row)
		ck_assert_uint_eq(memstat_malloc_zone_get_size(i), jnum(row));
	memstat_mtl_free(l);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/* The same through the field-by-field statistics reader, which layouts
 * other than the five leading u64s take (no fixture kernel has one, so the
 * fast path is turned off: KVS_MALLOC_FIELDWISE). */
START_TEST(tables_equal_truth_fieldwise)
{
	ck_assert_int_eq(setenv("KVS_MALLOC_FIELDWISE", "1", 1), 0);
	tables_equal_truth_fn(_i);
	unsetenv("KVS_MALLOC_FIELDWISE");
}
END_TEST

/* `kvmstat malloc` prints exactly the vmstat -m text of the generation. */
START_TEST(vmstat_text_equals_truth)
{
	const struct gen *g = &gens[_i];
	char rel[256], cmd[2048], *out, *want;
	json_t *t, *line;
	size_t i, len = 0;
	int st;

	snprintf(rel, sizeof(rel), "%s/truth.json", g->dir);
	t = load_truth(rel);
	snprintf(cmd, sizeof(cmd), "%s -N %s -M %s/%s/%s -m 2>/dev/null", build_path("analyzers/kvmstat"),
	    fixture_path(strcmp(g->dir, "fbsd14-s2") == 0 ? "fbsd14/kernel" :
	    (snprintf(rel, sizeof(rel), "%s/kernel", g->dir), rel)),
	    getenv("KVS_FIXTURES") ? getenv("KVS_FIXTURES") : "fixtures/cores", g->dir, g->core);
	out = run_capture(cmd, &st);
	ck_assert_int_eq(st, 0);
	want = calloc(1, 1 << 20);
	json_array_foreach(json_object_get(t, "vmstat_m"), i, line) {
		const char *s = json_string_value(line);
		memcpy(want + len, s, strlen(s));
		len += strlen(s);
		want[len++] = '\n';
	}
	/* The hostile name is printed escaped, never raw. */
	ck_assert_ptr_null(strchr(out, 0x1b));
	/* Compare line by line except escaped names. */
	char *o = out, *w = want;
	while (*w != '\0') {
		char *oe = strchr(o, '\n'), *we = strchr(w, '\n');
		ck_assert_ptr_nonnull(oe);
		*oe = *we = '\0';
		if (strstr(w, "evil") == NULL)
			ck_assert_str_eq(o, w);
		else
			ck_assert_ptr_nonnull(strstr(o, "evil\\x1b[2J\\x1b]0;pwned\\x07"));
		o = oe + 1;
		w = we + 1;
	}
	ck_assert_str_eq(o, "");
	free(out);
	free(want);
	json_decref(t);
}
END_TEST

/*
 * A C1 control (U+009B, CSI, which some terminals obey) in a name, in valid
 * UTF-8: `kvmstat malloc` shows its bytes escaped, never raw.  The fixture
 * has none, so a copy of the raw image gets one in place of "devstat".
 */
START_TEST(c1_control_in_name_escaped)
{
	static const char hostile[] = "de\xc2\x9bJst";   /* as long as "devstat" */
	const char *copy = path_join(test_tmpdir(), "c1.raw");
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	char cmd[4096], name[16], *out;
	uint64_t desc, pa[7];
	size_t len, i;
	uint8_t *img;
	kvs_t *kd = open_core("fbsd14", "mem.raw");
	int st;

	ck_assert_int_eq(memstat_kvm_malloc(l, kd), 0);
	mt = memstat_mtl_find(l, ALLOCATOR_MALLOC, "devstat");
	ck_assert_ptr_nonnull(mt);
	{
		struct kvs_typeinfo ti;
		ck_assert_int_eq(kvs_member(kd, "struct malloc_type", "ks_shortdesc", &ti), 0);
		ck_assert_int_eq(kvs_read(kd, memstat_get_kaddr(mt) + ti.offset, &desc, 8), 0);
	}
	ck_assert_int_eq(kvs_read_string(kd, desc, name, sizeof(name), NULL), 7);
	ck_assert_str_eq(name, "devstat");
	for (i = 0; i < 7; i++)                      /* the name may straddle pages */
		ck_assert_int_eq(kvs_kvtop(kd, desc + i, &pa[i]), 0);
	kvs_close(kd);
	memstat_mtl_free(l);
	img = read_file(fixture_path("fbsd14/mem.raw"), &len);
	ck_assert_ptr_nonnull(img);
	for (i = 0; i < 7; i++) {
		ck_assert_uint_lt(pa[i], len);
		img[pa[i]] = (uint8_t)hostile[i];
	}
	ck_assert_int_eq(write_file(copy, img, len), 0);
	free(img);
	snprintf(cmd, sizeof(cmd), "%s -N %s -M %s --raw -m", build_path("analyzers/kvmstat"),
	    fixture_path("fbsd14/kernel"), copy);
	out = run_capture(cmd, &st);
	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(st, 0);
	ck_assert_msg(strstr(out, "de\\xc2\\x9bJst") != NULL, "name not shown escaped:\n%s", out);
	ck_assert_ptr_null(strstr(out, "\xc2\x9b"));
	ck_assert_ptr_null(strchr(out, 0x1b));
	free(out);
}
END_TEST

/* Every CPU's counters of the truth's malloc rows (only those whose name
 * starts with `only`, when given; but the one at `skip`), absent CPUs
 * included (they read 0), and no row flagged. */
static void
check_percpu(struct memory_type_list *l, json_t *truth, const char *only, uint64_t skip)
{
	json_t *row, *pc;
	size_t i, k;

	json_array_foreach(json_object_get(json_object_get(truth, "malloc"), "types"), i, row) {
		struct memory_type *mt = find_addr(l, jget(row, "addr"));
		if (only != NULL && strncmp(json_string_value(json_object_get(row, "name")), only,
		    strlen(only)) != 0)
			continue;
		if (jget(row, "addr") == skip)
			continue;
		ck_assert_ptr_nonnull(mt);
		ck_assert_uint_eq(memstat_get_flags(mt), 0);
		ck_assert_uint_eq(memstat_get_numallocs(mt), jget(row, "numallocs"));
		ck_assert_uint_eq(memstat_get_memfreed(mt), jget(row, "memfreed"));
		json_array_foreach(json_object_get(row, "percpu"), k, pc) {
			int cpu = (int)jget(pc, "cpu");
			ck_assert_uint_eq(memstat_get_percpu_memalloced(mt, cpu), jget(pc, "memalloced"));
			ck_assert_uint_eq(memstat_get_percpu_memfreed(mt, cpu), jget(pc, "memfreed"));
			ck_assert_uint_eq(memstat_get_percpu_numallocs(mt, cpu), jget(pc, "numallocs"));
			ck_assert_uint_eq(memstat_get_percpu_numfrees(mt, cpu), jget(pc, "numfrees"));
			ck_assert_uint_eq(memstat_get_percpu_sizemask(mt, cpu), jget(pc, "sizemask"));
		}
		/* Past the CPUs the kernel can have: 0. */
		ck_assert_uint_eq(memstat_get_percpu_numallocs(mt, (int)k + 1000), 0);
	}
}

/* Whether the truth's malloc types hold one at addr. */
static bool
truth_has(json_t *truth, uint64_t addr)
{
	json_t *row;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(truth, "malloc"), "types"), i, row)
		if (jget(row, "addr") == addr)
			return true;
	return false;
}

/* How many of a's malloc types b lacks (by address). */
static size_t
truth_lacks(json_t *a, json_t *b)
{
	json_t *row;
	size_t i, n = 0;

	json_array_foreach(json_object_get(json_object_get(a, "malloc"), "types"), i, row)
		n += !truth_has(b, jget(row, "addr"));
	return n;
}

/*
 * Two cores of one kernel taken at two moments: caller slots survive, counts
 * change, new types appear and unloaded ones vanish (a module swap); a failed refresh keeps the earlier contents,
 * per-CPU counters included.  Then back to the first core: the types only
 * the second has vanish and keep its counters, per-CPU ones too, over more
 * refreshes, until they are swept.
 */
static void
refresh_pair(const char *dir, const char *core1)
{
	char core2[128], rel[256];
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	json_t *t1, *t2;
	kvs_t *kd;
	size_t n1, i, k;
	json_t *row;

	snprintf(rel, sizeof(rel), "%s/truth.json", dir);
	t1 = load_truth(rel);
	kd = open_core(dir, core1);
	ck_assert_int_eq(memstat_kvm_malloc(l, kd), 0);
	kvs_close(kd);
	n1 = memstat_mtl_count(l);
	check_percpu(l, t1, NULL, 0);
	i = 0;
	for (mt = memstat_mtl_first(l); mt; mt = memstat_mtl_next(mt), i++) {
		memstat_set_caller_uint64(mt, 0, memstat_get_kaddr(mt) ^ 0x5a5a);
		memstat_set_caller_pointer(mt, 1, mt);
		memstat_set_percpu_caller_uint64(mt, 0, 3, 1000 + i);
	}
	/* A truncated second core: a partial dump.  The refresh keeps what it
	 * reaches (rows flagged, a list cut), says why, and succeeds; every
	 * entry stays. */
	snprintf(core2, sizeof(core2), "%s.t2", core1);
	snprintf(rel, sizeof(rel), "%s/%s", dir, core2);
	{
		const char *trunc = path_join(test_tmpdir(), "trunc.core");
		char err[KVS_ERRBUF_SIZE], k[256];
		size_t len;
		void *b = read_file(fixture_path(rel), &len);
		ck_assert_ptr_nonnull(b);
		free(b);
		/* Cut into the data pages: the header still opens, reads fail. */
		ck_assert_int_eq(copy_prefix(fixture_path(rel), trunc, len - 40960), 0);
		snprintf(k, sizeof(k), "%s/kernel", dir);
		kd = kvs_open(fixture_path(k), trunc, KVS_O_NOVERIFY, err);
		ck_assert_msg(kd != NULL, "truncated core did not open: %s", err);
		const char *w;
		size_t hit = 0;
		ck_assert_int_eq(memstat_kvm_malloc(l, kd), 0);
		ck_assert_uint_gt(kvs_warnings(kd, &w), 0);
		ck_assert_msg(strstr(w, "truncated") != NULL, "%s", w);
		ck_assert_uint_ge(memstat_mtl_count(l), n1);   /* t2 has new types */
		for (mt = memstat_mtl_first(l); mt; mt = memstat_mtl_next(mt))
			hit += memstat_get_flags(mt) != 0 || memstat_get_vanished(mt);
		ck_assert_uint_gt(hit + (size_t)memstat_mtl_incomplete(l), 0);
		kvs_close(kd);
	}
	kd = open_core(dir, core2);
	ck_assert_msg(memstat_kvm_malloc(l, kd) == 0, "%s", kvs_geterr(kd));
	ck_assert_int_eq(memstat_mtl_incomplete(l), 0);   /* the whole list again */
	kvs_close(kd);
	snprintf(rel, sizeof(rel), "%s/truth.t2.json", dir);
	t2 = load_truth(rel);
	/* The truth's new types (by address) are added; its unloaded ones
	 * stay, marked vanished. */
	ck_assert_uint_ge(truth_lacks(t1, t2), 2);
	ck_assert_uint_eq(memstat_mtl_count(l), n1 + truth_lacks(t2, t1));
	json_array_foreach(json_object_get(json_object_get(t1, "malloc"), "types"), i, row) {
		mt = find_addr(l, jget(row, "addr"));
		ck_assert_ptr_nonnull(mt);
		ck_assert_int_eq(memstat_get_vanished(mt), !truth_has(t2, jget(row, "addr")));
	}
	json_array_foreach(json_object_get(json_object_get(t2, "malloc"), "types"), i, row) {
		mt = find_addr(l, jget(row, "addr"));
		ck_assert_ptr_nonnull(mt);
		ck_assert_uint_eq(memstat_get_numallocs(mt), jget(row, "numallocs"));
		ck_assert_uint_eq(memstat_get_bytes(mt), jget(row, "memuse_bytes"));
		if (!truth_has(t1, jget(row, "addr"))) {
			ck_assert_uint_eq(memstat_get_caller_uint64(mt, 0), 0);
			ck_assert_uint_eq(memstat_get_percpu_caller_uint64(mt, 0, 3), 0);
		} else {
			ck_assert_uint_eq(memstat_get_caller_uint64(mt, 0), memstat_get_kaddr(mt) ^ 0x5a5a);
			ck_assert_ptr_eq(memstat_get_caller_pointer(mt, 1), mt);
			ck_assert_uint_ge(memstat_get_percpu_caller_uint64(mt, 0, 3), 1000);
		}
	}
	check_percpu(l, t2, NULL, 0);
	for (i = 0; i < 3; i++) {
		unsigned long ev = l->mtl_alloc_events;
		kd = open_core(dir, core1);
		ck_assert_msg(memstat_kvm_malloc(l, kd) == 0, "%s", kvs_geterr(kd));
		kvs_close(kd);
		/* The vanished hold no store: the next refreshes allocate nothing. */
		if (i > 0)
			ck_assert_uint_eq(l->mtl_alloc_events, ev);
		ck_assert_uint_eq(memstat_mtl_count(l), n1 + truth_lacks(t2, t1));
		check_percpu(l, t1, NULL, 0);
		json_array_foreach(json_object_get(json_object_get(t2, "malloc"), "types"), k, row) {
			mt = find_addr(l, jget(row, "addr"));
			ck_assert_int_eq(memstat_get_vanished(mt), !truth_has(t1, jget(row, "addr")));
		}
		check_percpu(l, t2, "newtype", 0);   /* the vanished: the second core's */
	}
	ck_assert_int_eq(memstat_mtl_sweep(l), (int)truth_lacks(t2, t1));
	ck_assert_uint_eq(memstat_mtl_count(l), n1);
	check_percpu(l, t1, NULL, 0);
	memstat_mtl_free(l);
	json_decref(t1);
	json_decref(t2);
}

/* The libmemstat-only clone prints the same rows (names unsanitized there,
 * so compare only rows without control bytes). */
START_TEST(clone_agrees)
{
	char cmd[2048], *out;
	json_t *t = load_truth("fbsd14/truth.json"), *line;
	size_t i;
	int st;

	snprintf(cmd, sizeof(cmd), "%s %s %s", build_path("tests/vmstat_m_clone"),
	    fixture_path("fbsd14/kernel"), fixture_path("fbsd14/vmcore.minidump3"));
	out = run_capture(cmd, &st);
	ck_assert_int_eq(st, 0);
	json_array_foreach(json_object_get(t, "vmstat_m"), i, line) {
		const char *s = json_string_value(line);
		if (strchr(s, 0x1b) == NULL)
			ck_assert_msg(strstr(out, s) != NULL, "missing: %s", s);
	}
	free(out);
	json_decref(t);
}
END_TEST

/* With per-CPU counters turned off (a live view's totals), the totals are
 * unchanged and the per-CPU accessors say 0. */
START_TEST(totals_without_percpu)
{
	json_t *t = load_truth("fbsd14/truth.json"), *row;
	struct memory_type_list *l = memstat_mtl_alloc();
	kvs_t *kd = open_core("fbsd14", "vmcore.minidump3");
	size_t i;

	ck_assert_int_eq(memstat_kvm_malloc(l, kd), 0);
	memstat_mtl_set_percpu(l, 0);
	ck_assert_int_eq(memstat_kvm_malloc(l, kd), 0);
	json_array_foreach(json_object_get(json_object_get(t, "malloc"), "types"), i, row) {
		struct memory_type *mt = find_addr(l, jget(row, "addr"));
		ck_assert_uint_eq(memstat_get_numallocs(mt), jget(row, "numallocs"));
		ck_assert_uint_eq(memstat_get_bytes(mt), jget(row, "memuse_bytes"));
		ck_assert_uint_eq(memstat_get_percpu_numallocs(mt, 0), 0);
	}
	memstat_mtl_set_percpu(l, 1);
	ck_assert_int_eq(memstat_kvm_malloc(l, kd), 0);
	row = json_array_get(json_object_get(json_object_get(t, "malloc"), "types"), 3);
	ck_assert_uint_eq(memstat_get_percpu_numallocs(find_addr(l, jget(row, "addr")), 0),
	    jget(json_array_get(json_object_get(row, "percpu"), 0), "numallocs"));
	memstat_mtl_free(l);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/* A kmemstatistics list that loops: a clear error naming the address, and
 * the list keeps what it had. */
START_TEST(cyclic_list)
{
	json_t *t = load_truth("fbsd14/truth.json");
	json_t *types = json_object_get(json_object_get(t, "malloc"), "types");
	uint64_t head = jget(json_object_get(t, "malloc"), "head");
	uint64_t third = jget(json_array_get(types, 3), "addr"), pa, next = head;
	char copy[4096];
	char err[KVS_ERRBUF_SIZE];
	struct memory_type_list *l = memstat_mtl_alloc();
	size_t len;
	uint8_t *img;
	kvs_t *kd = open_core("fbsd14", "mem.raw");

	snprintf(copy, sizeof(copy), "%s", path_join(test_tmpdir(), "cyclic.raw"));
	ck_assert_int_eq(memstat_kvm_malloc(l, kd), 0);
	ck_assert_int_eq(kvs_kvtop(kd, third, &pa), 0);    /* ks_next is at offset 0 */
	kvs_close(kd);
	img = read_file(fixture_path("fbsd14/mem.raw"), &len);
	ck_assert_ptr_nonnull(img);
	memcpy(img + pa, &next, 8);                        /* 4th entry -> head */
	ck_assert_int_eq(write_file(copy, img, len), 0);
	free(img);
	kd = kvs_open(fixture_path("fbsd14/kernel"), copy, KVS_O_RAW, err);
	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_int_eq(memstat_kvm_malloc(l, kd), -1);
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_DATA);
	/* The named node is on the cycle: the head or one of the next four. */
	{
		const char *m = strstr(kvs_geterr(kd), "loops back to 0x");
		uint64_t at;
		size_t k;
		int on_cycle = 0;
		ck_assert_msg(m != NULL, "%s", kvs_geterr(kd));
		at = strtoull(m + strlen("loops back to "), NULL, 16);
		for (k = 0; k <= 3; k++)
			on_cycle |= at == jget(json_array_get(types, k), "addr") || at == head;
		ck_assert_msg(on_cycle, "%s", kvs_geterr(kd));
	}
	ck_assert_uint_eq(memstat_mtl_count(l), json_array_size(types));
	kvs_close(kd);
	memstat_mtl_free(l);
	json_decref(t);
}
END_TEST

/*
 * A corrupt dump whose malloc types all share one statistics record, more
 * of them than a run of records holds: the refresh stays within its working
 * space (ASan, valgrind) and every type reads that record, each CPU's copy
 * written here from known values.
 */
START_TEST(shared_stats_record)
{
	enum { NT = 300 };
	const uint64_t DMAP = 0xfffff80000000000ULL, KB = 0xffffffff80000000ULL;
	const uint64_t AREA = 0x1000000;     /* past the fixture's memory */
	json_t *t = load_truth("fbsd14/truth.json");
	kvs_t *kd = open_core("fbsd14", "mem.raw");
	struct kvs_typeinfo ti, pc;
	uint64_t o_next, o_ver, o_desc, o_st, head, pcpu_sym, pcpu, next = 0;
	uint64_t names = AREA + 0x40000, types = AREA + 0x80000, want_alloc = 0;
	char copy[4096], err[KVS_ERRBUF_SIZE];
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	size_t len, i, c, n = 0;
	json_t *cpu;
	uint8_t *img;

	ck_assert_int_eq(kvs_type(kd, "struct malloc_type", &ti), 0);
	ck_assert_int_eq(kvs_type(kd, "struct pcpu", &pc), 0);
	ck_assert_uint_le(ti.size, 256);
	o_next = member_off(kd, "struct malloc_type", "ks_next");
	o_ver = member_off(kd, "struct malloc_type", "ks_version");
	o_desc = member_off(kd, "struct malloc_type", "ks_shortdesc");
	o_st = member_off(kd, "struct malloc_type", "ks_mti.mti_stats");
	ck_assert_int_eq(kvs_symbol(kd, "kmemstatistics", &head, NULL), 0);
	ck_assert_int_eq(kvs_symbol(kd, "__pcpu", &pcpu_sym, NULL), 0);
	ck_assert_int_eq(kvs_read(kd, pcpu_sym, &pcpu, 8), 0);
	kvs_close(kd);

	img = read_file_grown(fixture_path("fbsd14/mem.raw"), AREA + 0x100000, &len);
	ck_assert_uint_le(len, AREA);
	/* CPU c's copy of the one record, at the per-CPU stride. */
	for (c = 0; c < 64; c++) {
		uint64_t st[5] = { 4096 * (c + 1), 2048, 100 + c, 7, 1u << c % 14 };
		ck_assert_uint_le(AREA + c * pc.size + 40, AREA + 0x40000);
		memcpy(img + AREA + c * pc.size, st, sizeof(st));
	}
	json_array_foreach(json_object_get(t, "cpus"), i, cpu)
		want_alloc += 100 + jnum(cpu);
	for (i = 0; i < NT; i++) {
		uint8_t *mtp = img + types + i * 256;
		uint64_t v = 2020110501, d = DMAP + names + i * 16, off = DMAP + AREA - pcpu;
		snprintf((char *)img + names + i * 16, 16, "shared%03zu", i);
		memcpy(mtp + o_next, &next, 8);
		memcpy(mtp + o_ver, &v, 8);
		memcpy(mtp + o_desc, &d, 8);
		memcpy(mtp + o_st, &off, 8);
		next = DMAP + types + i * 256;
	}
	memcpy(img + (head - KB), &next, 8);
	snprintf(copy, sizeof(copy), "%s", path_join(test_tmpdir(), "shared-stats.raw"));
	ck_assert_int_eq(write_file(copy, img, AREA + 0x100000), 0);
	free(img);

	kd = kvs_open(fixture_path("fbsd14/kernel"), copy, KVS_O_RAW, err);
	ck_assert_msg(kd != NULL, "%s", err);
	for (int r = 0; r < 2; r++) {
		ck_assert_msg(memstat_kvm_malloc(l, kd) == 0, "%s", kvs_geterr(kd));
		ck_assert_uint_eq(memstat_mtl_count(l), NT);
		for (mt = memstat_mtl_first(l), n = 0; mt != NULL; mt = memstat_mtl_next(mt), n++) {
			ck_assert_uint_eq(memstat_get_numallocs(mt), want_alloc);
			ck_assert_uint_eq(memstat_get_percpu_numallocs(mt, 5), 105);
			ck_assert_uint_eq(memstat_get_percpu_memalloced(mt, 2), 4096 * 3);
			ck_assert_uint_eq(memstat_get_percpu_numallocs(mt, 3), 0);   /* not present */
		}
		ck_assert_uint_eq(n, NT);
	}
	memstat_mtl_free(l);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/* A copy of <dir>/mem.raw, named `name` in the test's directory, with the
 * u64 val[i] written at the kernel address va[i] for each i < n. */
static const char *
patch_raw(const char *dir, const char *name, const uint64_t *va, const uint64_t *val, size_t n)
{
	char k[256], m[256];
	const char *out = path_join(test_tmpdir(), name);

	snprintf(k, sizeof(k), "%s/kernel", dir);
	snprintf(m, sizeof(m), "%s/mem.raw", dir);
	patch_image(k, m, out, va, val, NULL, n);
	return out;
}

static kvs_t *
open_copy(const char *dir, const char *copy)
{
	char err[KVS_ERRBUF_SIZE], k[256];
	kvs_t *kd;

	snprintf(k, sizeof(k), "%s/kernel", dir);
	kd = kvs_open(fixture_path(k), copy, KVS_O_RAW, err);
	ck_assert_msg(kd != NULL, "%s: %s", copy, err);
	return kd;
}

/* The CPU ids up to mp_maxid that are not in the truth's all_cpus. */
static uint64_t
absent_cpus(json_t *t)
{
	uint64_t maxid = jget(t, "mp_maxid"), mask, present = 0;
	json_t *cpu;
	size_t i;

	ck_assert_uint_lt(maxid, 63);
	json_array_foreach(json_object_get(t, "cpus"), i, cpu)
		present |= 1ULL << jnum(cpu);
	mask = ((1ULL << (maxid + 1)) - 1) & ~present;
	ck_assert_uint_ne(mask, 0);                    /* the fixture has some */
	return mask;
}

static const char *const st_fields[5] = { "mts_memalloced", "mts_memfreed", "mts_numallocs",
	"mts_numfrees", "mts_size" };

/*
 * 6-11: the statistics array has a record for every CPU id below MAXCPU;
 * those of the ids not in all_cpus hold garbage here (the generator leaves
 * them 0).  Every type still reads its truth, absent CPUs 0.
 */
START_TEST(absent_cpus_ignored_6)
{
	json_t *t = load_truth("fbsd11/truth.json"), *row;
	kvs_t *kd = open_core("fbsd11", "mem.raw");
	struct memory_type_list *l = memstat_mtl_alloc();
	struct kvs_typeinfo st;
	uint64_t absent = absent_cpus(t), o_handle, o_stats, o_f[5], *va, *val;
	size_t i, n = 0, cap;
	unsigned c;
	int f;

	ck_assert_int_eq(kvs_type(kd, "struct malloc_type_stats", &st), 0);
	o_handle = member_off(kd, "struct malloc_type", "ks_handle");
	o_stats = member_off(kd, "struct malloc_type_internal", "mti_stats");
	for (f = 0; f < 5; f++)
		o_f[f] = member_off(kd, "struct malloc_type_stats", st_fields[f]);
	cap = json_array_size(json_object_get(json_object_get(t, "malloc"), "types")) * 64 * 5;
	va = calloc(cap, sizeof(*va));
	val = calloc(cap, sizeof(*val));
	json_array_foreach(json_object_get(json_object_get(t, "malloc"), "types"), i, row) {
		uint64_t base = rd64(kd, jget(row, "addr") + o_handle) + o_stats;
		for (c = 0; c < 64; c++)
			for (f = 0; absent >> c & 1 && f < 5; f++) {
				va[n] = base + c * st.size + o_f[f];
				val[n++] = 0x1000000ULL * (c + 1) + 77 * (uint64_t)f + i;
			}
	}
	kvs_close(kd);
	kd = open_copy("fbsd11", patch_raw("fbsd11", "absent6.raw", va, val, n));
	free(va);
	free(val);
	ck_assert_msg(memstat_kvm_malloc(l, kd) == 0, "%s", kvs_geterr(kd));
	check_percpu(l, t, NULL, 0);
	json_array_foreach(json_object_get(json_object_get(t, "malloc"), "types"), i, row) {
		struct memory_type *mt = find_addr(l, jget(row, "addr"));
		ck_assert_uint_eq(memstat_get_numfrees(mt), jget(row, "numfrees"));
		ck_assert_uint_eq(memstat_get_count(mt), jget(row, "inuse"));
		ck_assert_uint_eq(memstat_get_bytes(mt), jget(row, "memuse_bytes"));
		ck_assert_uint_eq(memstat_get_sizemask(mt), jget(row, "sizemask"));
	}
	memstat_mtl_free(l);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/* 13+: the address of CPU c's statistics record of the malloc type at p. */
static uint64_t
stats13(kvs_t *kd, uint64_t p, unsigned c)
{
	uint64_t pcpu_sym;
	struct kvs_typeinfo pc;

	ck_assert_int_eq(kvs_symbol(kd, "__pcpu", &pcpu_sym, NULL), 0);
	ck_assert_int_eq(kvs_type(kd, "struct pcpu", &pc), 0);
	return rd64(kd, pcpu_sym) + rd64(kd, p + member_off(kd, "struct malloc_type",
	    "ks_mti.mti_stats")) + (uint64_t)c * pc.size;
}

/*
 * 13+: a count too large for the fast sum to rule out a wrap (2^62 added to
 * CPU 0's allocations of one type) makes the type summed again CPU by CPU,
 * every add checked; its absent CPUs' records hold garbage here.  The type
 * reads its truth plus what was added, absent CPUs 0, without a warning
 * beyond the fixture's own (its bad-version type).
 */
START_TEST(recheck_sums_present_cpus)
{
	json_t *t = load_truth("fbsd14/truth.json"), *row = NULL, *pc;
	json_t *types = json_object_get(json_object_get(t, "malloc"), "types");
	kvs_t *kd = open_core("fbsd14", "mem.raw");
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	const uint64_t big = 1ULL << 62;
	uint64_t absent = absent_cpus(t), va[1 + 64 * 5], val[1 + 64 * 5], o_f[5], cpu0 = 0;
	size_t i, n = 0;
	unsigned c;
	int f;

	json_array_foreach(types, i, row) {
		json_t *p0 = json_array_get(json_object_get(row, "percpu"), 0);
		if (jget(p0, "cpu") == 0 && (cpu0 = jget(p0, "numallocs")) > 0)
			break;
	}
	ck_assert_uint_gt(cpu0, 0);
	for (f = 0; f < 5; f++)
		o_f[f] = member_off(kd, "struct malloc_type_stats", st_fields[f]);
	va[n] = stats13(kd, jget(row, "addr"), 0) + o_f[2];
	val[n++] = cpu0 + big;
	for (c = 0; c < 64; c++)
		for (f = 0; absent >> c & 1 && f < 5; f++) {
			va[n] = stats13(kd, jget(row, "addr"), c) + o_f[f];
			val[n++] = 0x1000000ULL * (c + 1) + 77 * (uint64_t)f;
		}
	kvs_close(kd);
	kd = open_copy("fbsd14", patch_raw("fbsd14", "recheck.raw", va, val, n));
	for (int r = 0; r < 2; r++) {
		ck_assert_msg(memstat_kvm_malloc(l, kd) == 0, "%s", kvs_geterr(kd));
		ck_assert_uint_eq(kvs_warnings(kd, NULL), 1);
		ck_assert_uint_eq(memstat_mtl_count(l), json_array_size(types));
		mt = find_addr(l, jget(row, "addr"));
		ck_assert_ptr_nonnull(mt);
		ck_assert_uint_eq(memstat_get_numallocs(mt), jget(row, "numallocs") + big);
		ck_assert_uint_eq(memstat_get_numfrees(mt), jget(row, "numfrees"));
		ck_assert_uint_eq(memstat_get_memalloced(mt), jget(row, "memalloced"));
		ck_assert_uint_eq(memstat_get_memfreed(mt), jget(row, "memfreed"));
		ck_assert_uint_eq(memstat_get_sizemask(mt), jget(row, "sizemask"));
		ck_assert_uint_eq(memstat_get_count(mt), jget(row, "inuse") + big);
		json_array_foreach(json_object_get(row, "percpu"), i, pc) {
			int cpu = (int)jget(pc, "cpu");
			ck_assert_uint_eq(memstat_get_percpu_numallocs(mt, cpu),
			    jget(pc, "numallocs") + (cpu == 0 ? big : 0));
			ck_assert_uint_eq(memstat_get_percpu_memalloced(mt, cpu), jget(pc, "memalloced"));
			ck_assert_uint_eq(memstat_get_percpu_numfrees(mt, cpu), jget(pc, "numfrees"));
			ck_assert_uint_eq(memstat_get_percpu_sizemask(mt, cpu), jget(pc, "sizemask"));
		}
	}
	memstat_mtl_free(l);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/*
 * 13+: one type's statistics lie nowhere (its mti_stats offset leads out of
 * the dump).  The row stays, its counts flagged unknown (0, per CPU too),
 * every other row as the truth has it; the warning names that type (name
 * and address from the truth) and the first CPU whose record could not be
 * read (the first present one).  The next refresh of a whole dump clears
 * the flag.
 */
START_TEST(unreadable_stats_named)
{
	json_t *t = load_truth("fbsd14/truth.json");
	json_t *types = json_object_get(json_object_get(t, "malloc"), "types");
	json_t *row = json_array_get(types, 3);
	kvs_t *kd = open_core("fbsd14", "mem.raw");
	struct memory_type_list *l = memstat_mtl_alloc();
	uint64_t va, val = 0x7000000000ULL;
	char want[256];
	const char *w;
	struct memory_type *mt;
	int c;

	ck_assert_int_eq(memstat_kvm_malloc(l, kd), 0);
	va = jget(row, "addr") + member_off(kd, "struct malloc_type", "ks_mti.mti_stats");
	kvs_close(kd);
	kd = open_copy("fbsd14", patch_raw("fbsd14", "stats-nowhere.raw", &va, &val, 1));
	ck_assert_int_eq(memstat_kvm_malloc(l, kd), 0);
	ck_assert_uint_ge(kvs_warnings(kd, &w), 1);
	snprintf(want, sizeof(want), "malloc type \"%s\" at 0x%llx: its statistics are not "
	    "readable", json_string_value(json_object_get(row, "name")),
	    (unsigned long long)jget(row, "addr"));
	ck_assert_msg(strstr(w, want) != NULL, "%s", w);
	snprintf(want, sizeof(want), "CPU %llu statistics",
	    (unsigned long long)jnum(json_array_get(json_object_get(t, "cpus"), 0)));
	ck_assert_msg(strstr(w, want) != NULL, "%s", w);
	ck_assert_uint_eq(memstat_mtl_count(l), json_array_size(types));
	check_percpu(l, t, NULL, jget(row, "addr"));
	mt = find_addr(l, jget(row, "addr"));
	ck_assert_ptr_nonnull(mt);
	ck_assert_uint_eq(memstat_get_flags(mt), MEMSTAT_COUNTS_UNREADABLE);
	ck_assert_str_eq(memstat_get_name(mt), json_string_value(json_object_get(row, "name")));
	ck_assert_uint_eq(memstat_get_numallocs(mt), 0);
	ck_assert_uint_eq(memstat_get_bytes(mt), 0);
	for (c = 0; c < (int)memstat_get_maxcpus(mt); c++)
		ck_assert_uint_eq(memstat_get_percpu_numallocs(mt, c), 0);
	kvs_close(kd);
	kd = open_core("fbsd14", "mem.raw");
	ck_assert_int_eq(memstat_kvm_malloc(l, kd), 0);
	check_percpu(l, t, NULL, 0);
	memstat_mtl_free(l);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/*
 * 5.x keeps no free counter: frees are calls - inuse, an upper bound, and 0
 * when a type's calls (written here) are fewer than its items in use.
 */
START_TEST(calls_below_inuse_5)
{
	json_t *t = load_truth("fbsd5/truth.json"), *row = NULL;
	kvs_t *kd = open_core("fbsd5", "mem.raw");
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	uint64_t va, calls = 0;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(t, "malloc"), "types"), i, row)
		if (jget(row, "inuse") >= 2)
			break;
	ck_assert_ptr_nonnull(row);
	ck_assert_uint_ge(jget(row, "inuse"), 2);
	calls = jget(row, "inuse") - 1;
	va = jget(row, "addr") + member_off(kd, "struct malloc_type", "ks_calls");
	kvs_close(kd);
	kd = open_copy("fbsd5", patch_raw("fbsd5", "calls5.raw", &va, &calls, 1));
	ck_assert_msg(memstat_kvm_malloc(l, kd) == 0, "%s", kvs_geterr(kd));
	mt = find_addr(l, jget(row, "addr"));
	ck_assert_ptr_nonnull(mt);
	ck_assert_uint_eq(memstat_get_numallocs(mt), calls);
	ck_assert_uint_eq(memstat_get_count(mt), jget(row, "inuse"));
	ck_assert_uint_eq(memstat_get_numfrees(mt), 0);
	ck_assert_uint_eq(memstat_get_bytes(mt), jget(row, "memuse_bytes"));
	memstat_mtl_free(l);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

START_TEST(refresh_fbsd14)
{
	refresh_pair("fbsd14", "vmcore.minidump3");
}
END_TEST

START_TEST(refresh_fbsd12)
{
	refresh_pair("fbsd12", "vmcore.minidump2");
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("malloc");
	TCase *tc = tcase_create("walker");
	int n = (int)(sizeof(gens) / sizeof(gens[0]));

	tcase_add_loop_test(tc, tables_equal_truth, 0, n);
	tcase_add_loop_test(tc, tables_equal_truth_fieldwise, 0, n);
	tcase_add_loop_test(tc, vmstat_text_equals_truth, 0, n);
	tcase_add_test(tc, clone_agrees);
	tcase_add_test(tc, c1_control_in_name_escaped);
	tcase_add_test(tc, cyclic_list);
	tcase_add_test(tc, totals_without_percpu);
	tcase_add_test(tc, shared_stats_record);
	tcase_add_test(tc, absent_cpus_ignored_6);
	tcase_add_test(tc, recheck_sums_present_cpus);
	tcase_add_test(tc, unreadable_stats_named);
	tcase_add_test(tc, calls_below_inuse_5);
	tcase_add_test(tc, refresh_fbsd14);
	tcase_add_test(tc, refresh_fbsd12);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
