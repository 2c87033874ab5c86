/*
 * check_fbsd_arm64.c - FreeBSD/arm64 against the generator's truth
 * (fixtures/cores/fbsd14-arm64, written by mkcore.py --arch arm64): every
 * dump form (minidump v1, v2, v3, ELF full dump, raw image) gives the
 * malloc(9) and UMA tables of truth.json, `info` says arm64, reads of kernel
 * addresses give the generator's bytes, the direct map and kernel addresses
 * translate where the model put them; and the refusals: a kernel of the
 * other machine (both ways, minidump and ELF), a truncated minidump, a
 * version no layout knows, a 16 KiB-page minidump.  A gzipped minidump too.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "memstat.h"
#include "memstat_internal.h"
#include "testutil.h"

#define DIR "fbsd14-arm64"

static const char *const forms[] = {
	"vmcore.minidump1", "vmcore.minidump2", "vmcore.minidump3", "vmcore.elf", "mem.raw",
};
#define NFORMS (sizeof(forms) / sizeof(forms[0]))

static kvs_t *
open_form(const char *form)
{
	char err[KVS_ERRBUF_SIZE], c[256];
	kvs_t *kd;

	snprintf(c, sizeof(c), DIR "/%s", form);
	kd = kvs_open(fixture_path(DIR "/kernel"), fixture_path(c), 0, err);
	ck_assert_msg(kd != NULL, "%s: %s", form, err);
	return kd;
}

static void
expect_open_fails(const char *kernel, const char *core, const char *want, const char *want2)
{
	char err[KVS_ERRBUF_SIZE] = "";
	kvs_t *kd = kvs_open(kernel, core, 0, err);

	ck_assert_msg(kd == NULL, "%s opened with %s but should not", core, kernel);
	ck_assert_msg(strstr(err, want) != NULL, "%s: '%s' lacks '%s'", core, err, want);
	if (want2 != NULL)
		ck_assert_msg(strstr(err, want2) != NULL, "%s: '%s' lacks '%s'", core, err, want2);
}

START_TEST(info_says_arm64)
{
	kvs_t *kd = open_form(forms[_i]);
	json_t *t = load_truth(DIR "/truth.json");
	struct kvs_kernelinfo ki;
	struct kvs_dumpinfo di;

	ck_assert_str_eq(json_string_value(json_object_get(t, "arch")), "arm64");
	ck_assert_int_eq(kvs_kernel_info(kd, &ki), 0);
	ck_assert_str_eq(ki.arch, "arm64");
	ck_assert_str_eq(ki.os, "FreeBSD");
	ck_assert_int_eq(ki.ncpus, (int)jget(t, "mp_ncpus"));
	ck_assert_int_eq(kvs_dumpinfo(kd, &di), 0);
	if (strncmp(forms[_i], "vmcore.minidump", 15) == 0) {
		ck_assert_str_eq(di.format, "minidump");
		ck_assert_uint_eq(di.format_version, (unsigned)(forms[_i][15] - '0'));
	}
	json_decref(t);
	kvs_close(kd);
}
END_TEST

START_TEST(malloc_equals_truth)
{
	kvs_t *kd = open_form(forms[_i]);
	json_t *t = load_truth(DIR "/truth.json"), *types, *row, *pc;
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	size_t i, k;

	types = json_object_get(json_object_get(t, "malloc"), "types");
	ck_assert_msg(memstat_kvm_malloc(l, kd) == 0, "%s: %s", forms[_i], kvs_geterr(kd));
	ck_assert_uint_eq(memstat_mtl_count(l), json_array_size(types));
	mt = memstat_mtl_first(l);
	for (i = json_array_size(types); i-- > 0; mt = memstat_mtl_next(mt)) {
		row = json_array_get(types, i);
		ck_assert_ptr_nonnull(mt);
		ck_assert_uint_eq(memstat_get_kaddr(mt), jget(row, "addr"));
		ck_assert_str_eq(memstat_get_name(mt), json_string_value(json_object_get(row, "name")));
		ck_assert_uint_eq(memstat_get_numallocs(mt), jget(row, "numallocs"));
		ck_assert_uint_eq(memstat_get_numfrees(mt), jget(row, "numfrees"));
		ck_assert_uint_eq(memstat_get_count(mt), jget(row, "inuse"));
		ck_assert_uint_eq(memstat_get_bytes(mt), jget(row, "memuse_bytes"));
		ck_assert_uint_eq(memstat_get_sizemask(mt), jget(row, "sizemask"));
		json_array_foreach(json_object_get(row, "percpu"), k, pc) {
			int cpu = (int)jget(pc, "cpu");
			ck_assert_uint_eq(memstat_get_percpu_memalloced(mt, cpu), jget(pc, "memalloced"));
			ck_assert_uint_eq(memstat_get_percpu_numfrees(mt, cpu), jget(pc, "numfrees"));
		}
	}
	memstat_mtl_free(l);
	json_decref(t);
	kvs_close(kd);
}
END_TEST

START_TEST(uma_equals_truth)
{
	kvs_t *kd = open_form(forms[_i]);
	json_t *t = load_truth(DIR "/truth.json"), *zones, *z;
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	size_t i;

	zones = json_object_get(json_object_get(t, "uma"), "zones");
	ck_assert_msg(json_array_size(zones) > 0, "truth has no UMA zones");
	ck_assert_msg(memstat_kvm_uma(l, kd) == 0, "%s: %s", forms[_i], kvs_geterr(kd));
	ck_assert_uint_eq(memstat_mtl_count(l), json_array_size(zones));
	mt = memstat_mtl_first(l);
	json_array_foreach(zones, i, z) {
		ck_assert_ptr_nonnull(mt);
		ck_assert_uint_eq(memstat_get_kaddr(mt), jget(z, "addr"));
		ck_assert_str_eq(memstat_get_name(mt), json_string_value(json_object_get(z, "name")));
		ck_assert_uint_eq(memstat_get_size(mt), jget(z, "size"));
		ck_assert_uint_eq(memstat_get_numallocs(mt), jget(z, "numallocs"));
		ck_assert_uint_eq(memstat_get_numfrees(mt), jget(z, "numfrees"));
		ck_assert_uint_eq(memstat_get_free(mt), jget(z, "free"));
		ck_assert_uint_eq(memstat_get_count(mt), jget(z, "count"));
		ck_assert_uint_eq(memstat_get_xdomain(mt), jget(z, "xdomain"));
		mt = memstat_mtl_next(mt);
	}
	memstat_mtl_free(l);
	json_decref(t);
	kvs_close(kd);
}
END_TEST

/* kvmstat -m / -z text: the generator's vmstat lines, in order. */
static void
cli_lines(const char *cmd, const char *form, const char *key)
{
	json_t *t = load_truth(DIR "/truth.json"), *want = json_object_get(t, key), *line;
	char sh[2048];
	char *out, *p;
	int status;
	size_t i;

	ck_assert_msg(json_array_size(want) > 1, "truth has no %s", key);
	snprintf(sh, sizeof(sh), "'%s' -N '%s' -M '%s/%s' %s", build_path("analyzers/kvmstat"),
	    fixture_path(DIR "/kernel"), fixture_path(DIR), form, cmd);
	out = run_capture(sh, &status);
	ck_assert_ptr_nonnull(out);
	ck_assert_msg(status == 0, "%s: exit %d", sh, status);
	p = out;
	json_array_foreach(want, i, line) {
		const char *raw = json_string_value(line);
		char w[1024];
		size_t n = strcspn(p, "\n"), o = 0;
		/* the CLI shows control characters of names as \xHH */
		for (; *raw != '\0' && o + 5 < sizeof(w); raw++)
			if ((unsigned char)*raw < 0x20 || *raw == 0x7f)
				o += (size_t)snprintf(w + o, sizeof(w) - o, "\\x%02x", (unsigned char)*raw);
			else
				w[o++] = *raw;
		w[o] = '\0';
		ck_assert_msg(strlen(w) == n && strncmp(p, w, n) == 0, "%s line %zu: '%.*s', want '%s'",
		    cmd, i, (int)n, p, w);
		p += n + (p[n] == '\n');
	}
	free(out);
	json_decref(t);
}

START_TEST(vmstat_m_text)
{
	cli_lines("malloc", forms[_i], "vmstat_m");
}
END_TEST

START_TEST(vmstat_z_text)
{
	cli_lines("zone", forms[_i], "vmstat_z");
}
END_TEST

/* Reads of kernel addresses (image, scattered heap pages, a straddle, the
 * direct map) give the model's bytes; translations land where it put them;
 * unmapped and undumped addresses fail. */
START_TEST(reads_and_translations)
{
	kvs_t *kd = open_form(forms[_i]);
	json_t *t = load_truth(DIR "/truth.json"), *r;
	size_t i;

	json_array_foreach(json_object_get(t, "reads"), i, r) {
		size_t n = (size_t)jget(r, "len"), k;
		const char *hex = json_string_value(json_object_get(r, "hex"));
		uint8_t buf[256];
		char got[520];
		ck_assert_uint_le(n, sizeof(buf));
		ck_assert_msg(kvs_read(kd, jget(r, "va"), buf, n) == 0, "%s: read 0x%llx: %s",
		    forms[_i], (unsigned long long)jget(r, "va"), kvs_geterr(kd));
		for (k = 0; k < n; k++)
			snprintf(got + 2 * k, 3, "%02x", buf[k]);
		ck_assert_str_eq(got, hex);
	}
	json_array_foreach(json_object_get(t, "translations"), i, r) {
		uint64_t pa = 0;
		ck_assert_msg(kvs_kvtop(kd, jget(r, "va"), &pa) == 0, "%s: kvtop 0x%llx (%s): %s",
		    forms[_i], (unsigned long long)jget(r, "va"),
		    json_string_value(json_object_get(r, "kind")), kvs_geterr(kd));
		ck_assert_uint_eq(pa, jget(r, "pa"));
	}
	json_array_foreach(json_object_get(t, "unmapped"), i, r) {
		uint64_t pa;
		ck_assert_msg(kvs_kvtop(kd, jnum(r), &pa) != 0, "%s: 0x%llx translated", forms[_i],
		    (unsigned long long)jnum(r));
	}
	{
		uint8_t b;
		ck_assert_int_ne(kvs_read(kd, jget(t, "loop_va"), &b, 1), 0);
		if (strncmp(forms[_i], "vmcore.minidump", 15) == 0) {
			ck_assert_int_ne(kvs_read(kd, jget(t, "not_dumped_va"), &b, 1), 0);
			ck_assert_int_ne(kvs_read(kd, jget(t, "not_dumped_kernel_va"), &b, 1), 0);
			ck_assert_int_ne(kvs_read(kd, jget(t, "missing_pt_va"), &b, 1), 0);
		}
	}
	json_decref(t);
	kvs_close(kd);
}
END_TEST

/* The full dump's root is kernel_pmap_store.pm_l0_paddr: the truth's. */
START_TEST(elf_root_is_pm_l0_paddr)
{
	kvs_t *kd = open_form("vmcore.elf");
	json_t *t = load_truth(DIR "/truth.json");
	uint64_t pa = 0, l0 = jget(json_object_get(json_object_get(t, "symbols"),
	    "pagetable_l0_ttbr1"), "addr");

	/* the root table is a page of the image: its VA translates to the
	 * root's physical address, which the image's load address shifts */
	ck_assert_int_eq(kvs_kvtop(kd, l0, &pa), 0);
	ck_assert_uint_eq(pa, jget(t, "kpml4phys"));
	ck_assert_uint_ne(pa, l0 - jget(json_object_get(json_object_get(t, "symbols"),
	    "kernbase"), "addr"));
	json_decref(t);
	kvs_close(kd);
}
END_TEST

/* A minidump whose direct map starts at a physical base (dmapphys, as on
 * machines whose RAM does not start at 0): the header's window moved by the
 * same amount on both sides gives the same physical addresses. */
START_TEST(dmap_physical_base)
{
	const char *dst = path_join(test_tmpdir(), "dmapphys.minidump3");
	json_t *t = load_truth(DIR "/truth.json"), *r;
	char err[KVS_ERRBUF_SIZE];
	uint64_t shift = 0x40000, v, pa = 0;
	size_t len, i;
	uint8_t *b = read_file(fixture_path(DIR "/vmcore.minidump3"), &len);
	kvs_t *kd;

	ck_assert_ptr_nonnull(b);
	memcpy(&v, b + 48, 8);                  /* dmapphys */
	v += shift;
	memcpy(b + 48, &v, 8);
	memcpy(&v, b + 56, 8);                  /* dmapbase */
	v += shift;
	memcpy(b + 56, &v, 8);
	ck_assert_int_eq(write_file(dst, b, len), 0);
	free(b);
	kd = kvs_open(fixture_path(DIR "/kernel"), dst, 0, err);
	ck_assert_msg(kd != NULL, "%s", err);
	json_array_foreach(json_object_get(t, "translations"), i, r) {
		if (strcmp(json_string_value(json_object_get(r, "kind")), "dmap") != 0)
			continue;
		ck_assert_int_eq(kvs_kvtop(kd, jget(r, "va"), &pa), 0);
		ck_assert_uint_eq(pa, jget(r, "pa"));
	}
	ck_assert_uint_ne(pa, 0);
	json_decref(t);
	kvs_close(kd);
}
END_TEST

/* A raw image whose kernel_pmap_store.pm_l0_paddr holds no table address
 * (unaligned; past the memory): refused, naming the root. */
START_TEST(bad_root_refused)
{
	static const uint64_t bad[] = { 0x123456, 0x7ffff000000ULL };
	const char *dst = path_join(test_tmpdir(), "badroot.raw");
	json_t *t = load_truth(DIR "/truth.json"), *tr;
	uint64_t sym, off, delta = 0;
	size_t len, i;
	uint8_t *b;

	sym = jget(json_object_get(json_object_get(t, "symbols"), "kernel_pmap_store"), "addr");
	off = jget(json_object_get(json_object_get(json_object_get(json_object_get(t, "layouts"),
	    "struct pmap"), "members"), "pm_l0_paddr"), "offset");
	json_array_foreach(json_object_get(t, "translations"), i, tr)
		if (strcmp(json_string_value(json_object_get(tr, "kind")), "2m") == 0)
			delta = jget(tr, "va") - jget(tr, "pa");
	ck_assert_uint_ne(delta, 0);
	for (i = 0; i < 2; i++) {
		b = read_file(fixture_path(DIR "/mem.raw"), &len);
		ck_assert_ptr_nonnull(b);
		ck_assert_uint_lt(sym + off - delta + 8, len);
		memcpy(b + (sym + off - delta), &bad[i], 8);
		ck_assert_int_eq(write_file(dst, b, len), 0);
		free(b);
		expect_open_fails(fixture_path(DIR "/kernel"), dst, "root page table", NULL);
	}
	json_decref(t);
}
END_TEST

/* A kernel whose struct pmap has no pm_l0_paddr (its DWARF name changed in
 * a copy): the root is what pm_l0 holds, a kernel address, less the
 * image's VA - PA. */
START_TEST(root_from_pm_l0)
{
	const char *k = path_join(test_tmpdir(), "kernel.no_pm_l0_paddr");
	static const char from[] = "pm_l0_paddr", to[] = "pm_l0_xaddr";
	json_t *t = load_truth(DIR "/truth.json");
	char err[KVS_ERRBUF_SIZE];
	size_t len, i, n = 0;
	uint8_t *b = read_file(fixture_path(DIR "/kernel"), &len);
	uint64_t pa = 0;
	kvs_t *kd;

	ck_assert_ptr_nonnull(b);
	for (i = 0; i + sizeof(from) <= len; i++)
		if (memcmp(b + i, from, sizeof(from)) == 0) {
			memcpy(b + i, to, sizeof(to));
			n++;
		}
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(write_file(k, b, len), 0);
	free(b);
	kd = kvs_open(k, fixture_path(DIR "/vmcore.elf"), 0, err);
	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_int_eq(kvs_has_member(kd, "struct pmap", "pm_l0_paddr"), 0);
	ck_assert_int_eq(kvs_kvtop(kd, jget(json_object_get(json_object_get(t, "symbols"),
	    "pagetable_l0_ttbr1"), "addr"), &pa), 0);
	ck_assert_uint_eq(pa, jget(t, "kpml4phys"));
	json_decref(t);
	kvs_close(kd);
}
END_TEST

/* A dump of one machine with a kernel of the other: refused, both named. */
START_TEST(other_machine_refused)
{
	const char *a64k = fixture_path(DIR "/kernel");
	char a64k_copy[512];

	snprintf(a64k_copy, sizeof(a64k_copy), "%s", a64k);
	expect_open_fails(fixture_path("fbsd14/kernel"), fixture_path(DIR "/vmcore.minidump3"),
	    "arm64", "amd64");
	expect_open_fails(fixture_path("fbsd14/kernel"), fixture_path(DIR "/vmcore.elf"),
	    "arm64", "amd64");
	expect_open_fails(a64k_copy, fixture_path("fbsd14/vmcore.minidump3"), "amd64", "arm64");
	expect_open_fails(a64k_copy, fixture_path("fbsd14/vmcore.elf"), "amd64", "arm64");
	expect_open_fails(a64k_copy, fixture_path("fbsd14/vmcore.minidump1"), "amd64", "arm64");
}
END_TEST

/* A minidump cut inside its headers fails at open naming the section; one
 * cut inside its pages fails where the kernel's version is read. */
START_TEST(truncated_refused)
{
	const char *src = fixture_path(DIR "/vmcore.minidump3");
	const char *dst = path_join(test_tmpdir(), "cut.minidump3");
	/* header page, msgbuf (2 pages), dump_avail (1), bitmap (1), then the
	 * L3 section of 32 MiB of kernel addresses (16 pages) from 0x5000 */
	static const size_t cuts[] = { 100, 4096 + 100, 12288 + 10, 40960, 0x15000 + 4096 };
	static const char *const want[] = { "truncated", "message buffer", "dump_avail",
	    "page-table section", "minidump truncated" };
	size_t i;

	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		ck_assert_int_eq(copy_prefix(src, dst, cuts[i]), 0);
		expect_open_fails(fixture_path(DIR "/kernel"), dst, want[i], NULL);
	}
}
END_TEST

/* Patch the header of a copy of minidump `form` at `off` with v. */
static const char *
patched(const char *form, size_t off, uint32_t v)
{
	const char *dst = path_join(test_tmpdir(), "patched.minidump");
	char rel[256];
	size_t len;
	uint8_t *b;

	snprintf(rel, sizeof(rel), DIR "/%s", form);
	b = read_file(fixture_path(rel), &len);
	ck_assert_ptr_nonnull(b);
	memcpy(b + off, &v, 4);
	ck_assert_int_eq(write_file(dst, b, len), 0);
	free(b);
	return dst;
}

START_TEST(bad_version_refused)
{
	expect_open_fails(fixture_path(DIR "/kernel"), patched("vmcore.minidump3", 24, 4),
	    "arm64 minidump version 4", NULL);
	expect_open_fails(fixture_path(DIR "/kernel"), patched("vmcore.minidump1", 24, 0),
	    "version 0", NULL);
	/* v3 flags: 16 KiB pages are named, and not read */
	expect_open_fails(fixture_path(DIR "/kernel"), patched("vmcore.minidump3", 76, 1),
	    "16 KiB", NULL);
	expect_open_fails(fixture_path(DIR "/kernel"), patched("vmcore.minidump3", 76, 2),
	    "64 KiB", NULL);
}
END_TEST

/* The version alone picks the layout: a v2 file labelled v1 (no dump_avail
 * section) or a v1 file labelled v2 misplaces the sections, so the
 * kernel's `version` is not found where it should be. */
START_TEST(versions_differ_in_layout)
{
	expect_open_fails(fixture_path(DIR "/kernel"), patched("vmcore.minidump2", 24, 1),
	    "kernel does not match dump", NULL);
	expect_open_fails(fixture_path(DIR "/kernel"), patched("vmcore.minidump1", 24, 2),
	    "kernel does not match dump", NULL);
}
END_TEST

/* Under gzip the headers are read through the stream: the layout table
 * still places v2's dump_avail section. */
START_TEST(gzipped_minidump)
{
	const char *gz = path_join(test_tmpdir(), "vmcore.minidump2.gz");
	char sh[1024], err[KVS_ERRBUF_SIZE];
	json_t *t = load_truth(DIR "/truth.json");
	struct memory_type_list *l = memstat_mtl_alloc();
	kvs_t *kd;
	int status;
	char *out;

	snprintf(sh, sizeof(sh), "gzip -c '%s' > '%s'", fixture_path(DIR "/vmcore.minidump2"), gz);
	out = run_capture(sh, &status);
	free(out);
	ck_assert_int_eq(status, 0);
	kd = kvs_open(fixture_path(DIR "/kernel"), gz, 0, err);
	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_msg(memstat_kvm_malloc(l, kd) == 0, "%s", kvs_geterr(kd));
	ck_assert_uint_eq(memstat_mtl_count(l), json_array_size(json_object_get(
	    json_object_get(t, "malloc"), "types")));
	memstat_mtl_free(l);
	json_decref(t);
	kvs_close(kd);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("fbsd_arm64");
	TCase *tc = tcase_create("fbsd_arm64");

	tcase_add_loop_test(tc, info_says_arm64, 0, NFORMS);
	tcase_add_loop_test(tc, malloc_equals_truth, 0, NFORMS);
	tcase_add_loop_test(tc, uma_equals_truth, 0, NFORMS);
	tcase_add_loop_test(tc, vmstat_m_text, 0, NFORMS);
	tcase_add_loop_test(tc, vmstat_z_text, 0, NFORMS);
	tcase_add_loop_test(tc, reads_and_translations, 0, NFORMS);
	tcase_add_test(tc, elf_root_is_pm_l0_paddr);
	tcase_add_test(tc, root_from_pm_l0);
	tcase_add_test(tc, dmap_physical_base);
	tcase_add_test(tc, bad_root_refused);
	tcase_add_test(tc, other_machine_refused);
	tcase_add_test(tc, truncated_refused);
	tcase_add_test(tc, bad_version_refused);
	tcase_add_test(tc, versions_differ_in_layout);
	tcase_add_test(tc, gzipped_minidump);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(suite());
}
