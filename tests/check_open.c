/*
 * check_open.c - every source format against the generator's truth: dump
 * info, symbols, translations through 4 KiB / 2 MiB / DMAP mappings (and
 * 1 GiB pages, which the full-dump and raw formats walk for DMAP addresses),
 * page-crossing reads and strings.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvmstat.h"
#include "kvs_private.h"
#include "memstat.h"
#include "testutil.h"

static const char *const formats[] = {
	"vmcore.minidump1", "vmcore.minidump2", "vmcore.minidump3", "vmcore.elf", "mem.raw",
};
static const char *const format_names[] = { "minidump", "minidump", "minidump", "elf", "raw" };
static const char *const count_keys[] = { "minidump1", "minidump2", "minidump3", "elf", "raw" };

static kvs_t *
open_fixture(const char *dir, const char *core)
{
	char err[KVS_ERRBUF_SIZE], rel[256];
	kvs_t *kd;

	snprintf(rel, sizeof(rel), "%s/%s", dir, core);
	kd = kvs_open(fixture_path("fbsd14/kernel"), fixture_path(rel), 0, err);
	ck_assert_msg(kd != NULL, "open %s: %s", rel, err);
	return kd;
}

static void
check_dir(const char *dir, int i)
{
	char rel[256], buf[512];
	json_t *t;
	kvs_t *kd;
	struct kvs_dumpinfo di;
	uint64_t addr, v;
	size_t k;
	json_t *e;

	snprintf(rel, sizeof(rel), "%s/truth.json", dir);
	t = load_truth(rel);
	kd = open_fixture(dir, formats[i]);
	ck_assert_int_eq(kvs_dumpinfo(kd, &di), 0);
	ck_assert_str_eq(di.format, format_names[i]);
	ck_assert_uint_eq(di.format_version, i < 3 ? (unsigned)i + 1 : 0);
	ck_assert_uint_eq(di.page_size, 4096);
	ck_assert_uint_eq(di.dumped_pages, jget(json_object_get(t, "dumped_pages"), count_keys[i]));

	/* version, panicstr, CPUs */
	ck_assert_int_eq(kvs_symbol(kd, "_version", &addr, NULL), 0);   /* a.out name */
	ck_assert_int_ge(kvs_read_string(kd, addr, buf, sizeof(buf), NULL), 0);
	ck_assert_str_eq(buf, json_string_value(json_object_get(t, "version")));
	ck_assert_int_eq(kvs_symbol(kd, "panicstr", &addr, NULL), 0);
	ck_assert_int_eq(kvs_read(kd, addr, &v, 8), 0);
	if (json_is_null(json_object_get(t, "panicstr")))
		ck_assert_uint_eq(v, 0);
	else {
		ck_assert_int_ge(kvs_read_string(kd, v, buf, sizeof(buf), NULL), 0);
		ck_assert_str_eq(buf, json_string_value(json_object_get(t, "panicstr")));
	}
	ck_assert_int_eq(kvs_symbol(kd, "mp_maxid", &addr, NULL), 0);
	ck_assert_int_eq(kvs_read(kd, addr, &v, 4), 0);
	ck_assert_uint_eq((uint32_t)v, jget(t, "mp_maxid"));

	/* symbols, locals included */
	const char *name;
	json_object_foreach(json_object_get(t, "symbols"), name, e) {
		uint64_t size;
		ck_assert_msg(kvs_symbol(kd, name, &addr, &size) == 0, "%s: %s", name, kvs_geterr(kd));
		ck_assert_uint_eq(addr, jget(e, "addr"));
		ck_assert_uint_eq(size, jget(e, "size"));
	}
	ck_assert_int_eq(kvs_symbol(kd, "no_such_symbol", &addr, NULL), -1);
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_NOSYMBOL);
	ck_assert_str_eq(kvs_geterr(kd), "symbol 'no_such_symbol' not found");
	/* The a.out spelling is tried bare, but the message keeps the name asked. */
	ck_assert_int_eq(kvs_symbol(kd, "_no_such_symbol", &addr, NULL), -1);
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_NOSYMBOL);
	ck_assert_str_eq(kvs_geterr(kd), "symbol '_no_such_symbol' not found");
	{
		uint64_t off;
		uint64_t fh = jget(json_object_get(json_object_get(t, "symbols"), "fixture_hash"), "addr");
		const char *s = kvs_symbol_at(kd, fh + 3, &off);
		ck_assert_ptr_nonnull(s);
		ck_assert_str_eq(s, "fixture_hash");
		ck_assert_uint_eq(off, 3);
	}

	/* translations */
	json_array_foreach(json_object_get(t, "translations"), k, e) {
		uint64_t pa;
		ck_assert_msg(kvs_kvtop(kd, jget(e, "va"), &pa) == 0, "%s", kvs_geterr(kd));
		ck_assert_uint_eq(pa, jget(e, "pa"));
	}
	/* page-crossing reads */
	json_array_foreach(json_object_get(t, "reads"), k, e) {
		size_t n = jget(e, "len"), j;
		uint8_t got[256];
		const char *hex = json_string_value(json_object_get(e, "hex"));
		char h[3] = { 0 };
		ck_assert_int_le(n, sizeof(got));
		ck_assert_msg(kvs_read(kd, jget(e, "va"), got, n) == 0, "%s", kvs_geterr(kd));
		for (j = 0; j < n; j++) {
			h[0] = hex[2 * j];
			h[1] = hex[2 * j + 1];
			ck_assert_uint_eq(got[j], strtoul(h, NULL, 16));
		}
	}
	/* Unmapped addresses fail with the faulting address and the reason:
	 * the truth's four are a hole in the 2 MiB-mapped kernel, the unmapped
	 * page after the heap, the bottom of kernel space and a non-canonical
	 * address.  The minidumps see them through their page-table section
	 * (v1: PTEs only; both start at kernbase), the full dump and the raw
	 * image through the kernel's four levels. */
	json_array_foreach(json_object_get(t, "unmapped"), k, e) {
		static const char *const why[5][4] = {
			{ "PTE not valid", "PTE not valid", "below the minidump's kernbase",
			  "below the minidump's kernbase" },
			{ "PDE not valid", "PTE not valid", "below the minidump's kernbase",
			  "below the minidump's kernbase" },
			{ "PDE not valid", "PTE not valid", "below the minidump's kernbase",
			  "below the minidump's kernbase" },
			{ "PD entry not valid", "PT entry not valid", "PML4 entry not valid",
			  "non-canonical address" },
			{ "PD entry not valid", "PT entry not valid", "PML4 entry not valid",
			  "non-canonical address" },
		};
		char want[160];
		int valid;
		ck_assert_uint_lt(k, 4);
		ck_assert_int_eq(kvs_read(kd, jnum(e), buf, 8), -1);
		ck_assert_int_eq(kvs_errstatus(kd), KVS_E_UNMAPPED);
		ck_assert_uint_eq(kvs_fault_addr(kd, &valid), jnum(e));
		ck_assert(valid);
		snprintf(want, sizeof(want), "reading 8 bytes at 0x%llx: va 0x%llx: %s",
		    (unsigned long long)jnum(e), (unsigned long long)jnum(e), why[i][k]);
		ck_assert_msg(strstr(kvs_geterr(kd), want) != NULL, "'%s' lacks '%s'",
		    kvs_geterr(kd), want);
	}
	ck_assert_uint_eq(json_array_size(json_object_get(t, "unmapped")), 4);
	/* No symbol below the first one. */
	ck_assert_ptr_null(kvs_symbol_at(kd, 0x1000, NULL));
	kvs_close(kd);
	json_decref(t);
}

/* Walkers' memos on a handle (kvs_memo): zeroed the first time, the same
 * bytes for the same tag after, apart per tag and per handle, NULL once
 * the slots are taken; kvs_close frees them (valgrind and ASan check). */
START_TEST(walker_memos)
{
	static const char tags[KVS_NMEMO + 1] = { 0 };
	kvs_t *a = open_fixture("fbsd14", "vmcore.minidump3");
	kvs_t *b = open_fixture("fbsd14", "vmcore.minidump3");
	unsigned char *m0 = kvs_memo(a, &tags[0], 100), *m1;
	int i;

	ck_assert_ptr_nonnull(m0);
	for (i = 0; i < 100; i++)
		ck_assert_uint_eq(m0[i], 0);
	memset(m0, 0x5a, 100);
	ck_assert_ptr_eq(kvs_memo(a, &tags[0], 100), m0);
	m1 = kvs_memo(a, &tags[1], 8);
	ck_assert_ptr_nonnull(m1);
	ck_assert_ptr_ne(m1, m0);
	ck_assert_uint_eq(m1[0], 0);
	/* Another handle has its own. */
	ck_assert_ptr_ne(kvs_memo(b, &tags[0], 100), m0);
	ck_assert_uint_eq(((unsigned char *)kvs_memo(b, &tags[0], 100))[0], 0);
	for (i = 2; i < KVS_NMEMO; i++)
		ck_assert_ptr_nonnull(kvs_memo(a, &tags[i], 16));
	ck_assert_ptr_null(kvs_memo(a, &tags[KVS_NMEMO], 16));
	ck_assert_ptr_eq(kvs_memo(a, &tags[0], 100), m0);
	ck_assert_uint_eq(m0[99], 0x5a);
	kvs_close(a);
	kvs_close(b);
}
END_TEST

START_TEST(formats_seed1)
{
	check_dir("fbsd14", _i);
}
END_TEST

START_TEST(formats_seed2)
{
	check_dir("fbsd14-s2", _i);
}
END_TEST

/* A DMAP address of a page the minidump did not keep: "not in dump", while
 * the full dump and the raw image (all of RAM) read it through 1 GiB pages. */
START_TEST(dmap_not_dumped)
{
	json_t *t = load_truth("fbsd14/truth.json");
	uint64_t va = jget(t, "not_dumped_va"), pa;
	uint8_t b[16];
	kvs_t *kd = open_fixture("fbsd14", "vmcore.minidump3");
	int valid;

	ck_assert_int_eq(kvs_read(kd, va, b, sizeof(b)), -1);
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_NOTDUMPED);
	ck_assert_uint_eq(kvs_fault_addr(kd, &valid), va);
	ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "not in dump"));
	kvs_close(kd);
	kd = open_fixture("fbsd14", "vmcore.elf");
	ck_assert_int_eq(kvs_kvtop(kd, va, &pa), 0);
	ck_assert_uint_eq(pa, va - 0xfffff80000000000ULL);
	ck_assert_int_eq(kvs_read(kd, va, b, sizeof(b)), 0);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/* Separate kernel.debug: a stripped kernel finds its DWARF beside it. */
START_TEST(separate_debug_file)
{
	const char *dir = test_tmpdir();
	char cmd[2048], err[KVS_ERRBUF_SIZE];
	struct kvs_typeinfo ti;
	kvs_t *kd;

	snprintf(cmd, sizeof(cmd), "objcopy --strip-debug %s %s/kernel && cp %s %s/kernel.debug",
	    fixture_path("fbsd14/kernel"), dir, fixture_path("fbsd14/kernel"), dir);
	ck_assert_int_eq(system(cmd), 0);
	kd = kvs_open(path_join(dir, "kernel"), fixture_path("fbsd14/vmcore.minidump3"), 0, err);
	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_int_eq(kvs_member(kd, "struct malloc_type", "ks_mti.mti_stats", &ti), 0);
	ck_assert_uint_eq(ti.offset, 40);
	ck_assert_int_eq(ti.kind, KVS_KIND_POINTER);
	kvs_close(kd);
}
END_TEST

/*
 * FreeBSD's layout, in a directory standing for the root (KVS_DEBUG_ROOT):
 * /boot/kernel/kernel stripped, its DWARF in
 * /usr/lib/debug/boot/kernel/kernel.debug (objcopy --only-keep-debug, as
 * the release builds it).  A dump without a kernel takes it when the dump's
 * version is the kernel's own, and finds the debug file; another dump is
 * refused, naming the installed kernel and the mismatch.
 */
START_TEST(installed_kernel_and_debug_file)
{
	const char *root = path_join(test_tmpdir(), "root");
	char cmd[8192], err[KVS_ERRBUF_SIZE], want[4096];
	struct memory_type_list *mtl = memstat_mtl_alloc();
	json_t *t = load_truth("fbsd14/truth.json");
	struct kvs_typeinfo ti;
	struct kvs_dumpinfo di;
	char *out;
	int st;
	kvs_t *kd;

	snprintf(cmd, sizeof(cmd), "mkdir -p %s/boot/kernel %s/usr/lib/debug/boot/kernel && "
	    "objcopy --strip-debug %s %s/boot/kernel/kernel && "
	    "objcopy --only-keep-debug %s %s/usr/lib/debug/boot/kernel/kernel.debug",
	    root, root, fixture_path("fbsd14/kernel"), root, fixture_path("fbsd14/kernel"), root);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(setenv("KVS_DEBUG_ROOT", root, 1), 0);
	kd = kvs_open(NULL, fixture_path("fbsd14/vmcore.minidump3"), 0, err);
	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_int_eq(kvs_dumpinfo(kd, &di), 0);
	snprintf(want, sizeof(want), "%s/boot/kernel/kernel", root);
	ck_assert_str_eq(di.kernel, want);
	/* Types come from the debug file (the kernel itself has none). */
	ck_assert_int_eq(kvs_member(kd, "struct malloc_type", "ks_mti.mti_stats", &ti), 0);
	ck_assert_uint_eq(ti.offset, 40);
	ck_assert_int_eq(memstat_kvm_malloc(mtl, kd), 0);
	ck_assert_uint_eq(memstat_mtl_count(mtl), json_array_size(json_object_get(
	    json_object_get(t, "malloc"), "types")));
	kvs_close(kd);
	/* The same through kvmstat, with no -N. */
	snprintf(cmd, sizeof(cmd), "KVS_DEBUG_ROOT=%s %s -M %s malloc 2>&1", root,
	    build_path("analyzers/kvmstat"), fixture_path("fbsd14/vmcore.minidump3"));
	out = run_capture(cmd, &st);
	ck_assert_msg(st == 0 && strstr(out, "devbuf") != NULL, "%s", out);
	free(out);
	/* A dump of another kernel: the installed one is named, and refused. */
	kd = kvs_open(NULL, fixture_path("fbsd12/vmcore.minidump2"), 0, err);
	ck_assert_ptr_null(kd);
	ck_assert_msg(strstr(err, "no kernel file given (-N) for dump ") == err &&
	    strstr(err, "and the installed one does not fit it: ") != NULL &&
	    strstr(err, want) != NULL && strstr(err, "does not match") != NULL, "%s", err);
	/* Unverified, nothing says which kernel a dump is of. */
	ck_assert_ptr_null(kvs_open(NULL, fixture_path("fbsd14/vmcore.minidump3"),
	    KVS_O_NOVERIFY, err));
	ck_assert_msg(strstr(err, "the installed one is taken only when it is checked") != NULL,
	    "%s", err);
	/* Without the debug file the kernel still opens, without types. */
	snprintf(cmd, sizeof(cmd), "%s/usr/lib/debug/boot/kernel/kernel.debug", root);
	ck_assert_int_eq(unlink(cmd), 0);
	kd = kvs_open(NULL, fixture_path("fbsd14/vmcore.minidump3"), 0, err);
	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_int_eq(kvs_member(kd, "struct malloc_type", "ks_mti.mti_stats", &ti), -1);
	ck_assert_msg(strstr(kvs_geterr(kd), "no DWARF debug information") != NULL, "%s",
	    kvs_geterr(kd));
	kvs_close(kd);
	unsetenv("KVS_DEBUG_ROOT");
	memstat_mtl_free(mtl);
	json_decref(t);
}
END_TEST

/*
 * A format-only open (KVS_O_FORMAT_ONLY): every format without a kernel,
 * whatever kernel it holds.  The dump's format and page count are the
 * truth's; physical memory reads as the machine's (mem.raw, read here with
 * pread: the generator's image of physical memory) wherever the dump holds
 * the page (the truth's translations name such pages); a kernel address,
 * a symbol and a type fail saying why; a kernel file is refused.
 */
START_TEST(format_only)
{
	char err[KVS_ERRBUF_SIZE], rel[256];
	json_t *t = load_truth("fbsd14/truth.json"), *e;
	struct kvs_dumpinfo di;
	struct kvs_kernelinfo ki;
	struct kvs_typeinfo ti;
	uint8_t got[64], want[64];
	uint64_t addr;
	size_t k, n = 0;
	int fd, valid;
	kvs_t *kd;

	snprintf(rel, sizeof(rel), "fbsd14/%s", formats[_i]);
	kd = kvs_open(NULL, fixture_path(rel), KVS_O_FORMAT_ONLY | (_i == 4 ? KVS_O_RAW : 0),
	    err);
	ck_assert_msg(kd != NULL, "%s: %s", rel, err);
	ck_assert_int_eq(kvs_dumpinfo(kd, &di), 0);
	ck_assert_str_eq(di.format, format_names[_i]);
	ck_assert_uint_eq(di.dumped_pages, jget(json_object_get(t, "dumped_pages"), count_keys[_i]));
	ck_assert_ptr_nonnull(strstr(di.kernel, "none"));
	ck_assert_int_eq(kvs_kernel_info(kd, &ki), 0);
	ck_assert_str_eq(ki.os, "unknown");
	fd = open(fixture_path("fbsd14/mem.raw"), O_RDONLY);
	ck_assert_int_ge(fd, 0);
	json_array_foreach(json_object_get(t, "translations"), k, e) {
		uint64_t pa = jget(e, "pa") & ~(uint64_t)63;
		ck_assert_int_eq(pread(fd, want, sizeof(want), (off_t)pa), (ssize_t)sizeof(want));
		ck_assert_msg(kvs_read_phys(kd, pa, got, sizeof(got)) == 0, "%s pa 0x%llx: %s", rel,
		    (unsigned long long)pa, kvs_geterr(kd));
		ck_assert_mem_eq(got, want, sizeof(got));
		n++;
	}
	ck_assert_uint_gt(n, 2);
	close(fd);
	ck_assert_int_eq(kvs_read(kd, 0xffffffff80200000ULL, got, 8), -1);
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_INVAL);
	ck_assert_uint_eq(kvs_fault_addr(kd, &valid), 0xffffffff80200000ULL);
	ck_assert(valid);
	ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "bytes alone"));
	ck_assert_int_eq(kvs_kvtop(kd, 0xffffffff80200000ULL, &addr), -1);
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_INVAL);
	ck_assert_int_eq(kvs_read_string(kd, 0xffffffff80200000ULL, (char *)got, sizeof(got),
	    NULL), -1);
	ck_assert_int_eq(kvs_symbol(kd, "_version", &addr, NULL), -1);
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_NOSYMBOL);
	ck_assert_ptr_null(kvs_symbol_at(kd, 0xffffffff80200000ULL, NULL));
	ck_assert_int_eq(kvs_symbol_next(kd, 0xffffffff80200000ULL, &addr), -1);
	ck_assert_int_eq(kvs_type(kd, "struct malloc_type", &ti), -1);
	ck_assert_int_ne(kvs_errstatus(kd), KVS_OK);
	kvs_close(kd);
	/* a kernel file is refused, saying so */
	ck_assert_ptr_null(kvs_open(fixture_path("fbsd14/kernel"), fixture_path(rel),
	    KVS_O_FORMAT_ONLY, err));
	ck_assert_ptr_nonnull(strstr(err, "takes no kernel"));
	json_decref(t);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("open");
	TCase *tc = tcase_create("formats");

	tcase_add_loop_test(tc, formats_seed1, 0, 5);
	tcase_add_loop_test(tc, formats_seed2, 0, 5);
	tcase_add_test(tc, dmap_not_dumped);
	tcase_add_test(tc, walker_memos);
	tcase_add_test(tc, separate_debug_file);
	tcase_add_test(tc, installed_kernel_and_debug_file);
	tcase_add_loop_test(tc, format_only, 0, 5);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
