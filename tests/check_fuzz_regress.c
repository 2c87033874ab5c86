/*
 * check_fuzz_regress.c - every input a fuzzer found crashing, kept in
 * tests/fuzz-regress/<harness>/, replayed through that harness's own code
 * (fuzz/<harness>.c, compiled here by the normal build without the fuzzer,
 * so under build-asan too): a crash, a sanitizer report or a hang fails the
 * test.  Then, for each bug found, what its fix promises:
 *   - rnglists-double-free (fuzz_dwarf): libdwarf 20210528 freed its
 *     .debug_rnglists table twice on a bad unit header; such a header is now
 *     refused before libdwarf reads it, with a message naming the section,
 *     the unit and the reason, while the intact object still answers;
 *   - sibling-loop-hang (fuzz_dwarf): a DW_AT_sibling pointing back made
 *     the DWARF index walk endless; the walk now stops there, the lookup
 *     says where, and the types indexed before it still answer;
 *   - histcounter-int-min (fuzz_walk_gprof): a histcounter_type of INT_MIN
 *     was negated (UBSan); it is now refused as not a counter width;
 *   - strtab-nobits-symtab (fuzz_dwarf, CI run of 2026-11-23): a symbol
 *     table whose string section is SHT_NOBITS (a size, no bytes) was read
 *     through a NULL pointer by the unindexed name scan (SEGV); such a
 *     table now has no names, and the types still answer;
 *   - data16-constant (fuzz_dwarf): a DW_FORM_data16 attribute was decoded
 *     by shifting a 64-bit value 64 bits and more (UBSan); it now keeps its
 *     low 64 bits.
 */
#include <check.h>
#include <dirent.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvmprof.h"
#include "kvmstat.h"
#include "testutil.h"

/* The harnesses, renamed by tests/meson.build. */
#define HARNESS(n) \
	int fz_init_##n(int *argc, char ***argv); \
	int fz_one_##n(const uint8_t *data, size_t size);
HARNESS(minidump)
HARNESS(elfdump)
HARNESS(kdump)
HARNESS(raw)
HARNESS(kvtop)
HARNESS(walk_malloc)
HARNESS(walk_uma)
HARNESS(walk_gprof)
HARNESS(walk_dtrace)
HARNESS(walk_slub)
HARNESS(dwarf)
HARNESS(btf)
HARNESS(lcache)
HARNESS(lcache_roundtrip)
HARNESS(compressed)
HARNESS(escape)
HARNESS(cli)

static const struct harness {
	const char *name;
	int (*init)(int *argc, char ***argv);
	int (*one)(const uint8_t *data, size_t size);
	int min_inputs;         /* crashes found by this harness, kept */
} harnesses[] = {
	{ "fuzz_minidump", fz_init_minidump, fz_one_minidump, 0 },
	{ "fuzz_elfdump", fz_init_elfdump, fz_one_elfdump, 0 },
	{ "fuzz_kdump", fz_init_kdump, fz_one_kdump, 0 },
	{ "fuzz_raw", fz_init_raw, fz_one_raw, 0 },
	{ "fuzz_kvtop", NULL, fz_one_kvtop, 0 },
	{ "fuzz_walk_malloc", fz_init_walk_malloc, fz_one_walk_malloc, 0 },
	{ "fuzz_walk_uma", fz_init_walk_uma, fz_one_walk_uma, 0 },
	{ "fuzz_walk_gprof", fz_init_walk_gprof, fz_one_walk_gprof, 1 },
	{ "fuzz_walk_dtrace", fz_init_walk_dtrace, fz_one_walk_dtrace, 0 },
	{ "fuzz_walk_slub", fz_init_walk_slub, fz_one_walk_slub, 0 },
	{ "fuzz_dwarf", fz_init_dwarf, fz_one_dwarf, 4 },
	{ "fuzz_btf", fz_init_btf, fz_one_btf, 0 },
	{ "fuzz_lcache", NULL, fz_one_lcache, 0 },
	{ "fuzz_lcache_roundtrip", fz_init_lcache_roundtrip, fz_one_lcache_roundtrip, 0 },
	{ "fuzz_compressed", fz_init_compressed, fz_one_compressed, 0 },
	{ "fuzz_escape", NULL, fz_one_escape, 0 },
	{ "fuzz_cli", NULL, fz_one_cli, 0 },
};
#define NHARNESS (sizeof(harnesses) / sizeof(harnesses[0]))

static const char *
regress_path(const char *rel)
{
	static char buf[4][4096];
	static unsigned n;
	const char *src = getenv("KVS_SRCDIR");
	char *b = buf[n++ % 4];

	snprintf(b, sizeof(buf[0]), "%s/tests/fuzz-regress/%s", src != NULL ? src : ".", rel);
	return b;
}

/* Every kept input of harness _i through the harness (forked: a crash
 * fails this test, naming the harness). */
START_TEST(replay)
{
	const struct harness *h = &harnesses[_i];
	const char *dir = regress_path(h->name);
	struct dirent *de;
	int n = 0, inited = 0;
	DIR *d = opendir(dir);

	if (d == NULL) {
		ck_assert_msg(h->min_inputs == 0, "%s: %s missing", h->name, dir);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		char path[4096 + 256];
		size_t len;
		uint8_t *buf;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		buf = read_file(path, &len);
		ck_assert_msg(buf != NULL, "%s: cannot read", path);
		if (!inited && h->init != NULL) {
			int argc = 1;
			char *args[] = { (char *)"check_fuzz_regress", NULL }, **argv = args;
			h->init(&argc, &argv);
		}
		inited = 1;
		fprintf(stderr, "%s: %s\n", h->name, de->d_name);
		h->one(buf, len);
		free(buf);
		n++;
	}
	closedir(d);
	ck_assert_msg(n >= h->min_inputs, "%s: %d inputs kept, %d crashes were found", h->name,
	    n, h->min_inputs);
}
END_TEST

/* The file offset of section `want` of an ELF file in memory. */
static size_t
section_offset(const char *path, const char *want)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx, off = 0;
	FILE *f = fopen(path, "rb");

	ck_assert_ptr_nonnull(f);
	elf_version(EV_CURRENT);
	elf = elf_begin(fileno(f), ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(elf);
	ck_assert_int_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *nm;
		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (nm != NULL && strcmp(nm, want) == 0)
			off = sh.sh_offset;
	}
	elf_end(elf);
	fclose(f);
	ck_assert_msg(off != 0, "%s: no %s", path, want);
	return off;
}

/* kvs_type on the kernel-only handle of path: 0, or -1 with *st and msg. */
static int
type_of(const char *path, const char *type, kvs_status_t *st, char *msg, size_t msglen)
{
	char err[KVS_ERRBUF_SIZE];
	struct kvs_typeinfo ti;
	kvs_t *kd = kvs_open(path, NULL, KVS_O_KERNEL_ONLY, err);
	int rc;

	ck_assert_msg(kd != NULL, "%s: %s", path, err);
	rc = kvs_type(kd, type, &ti);
	*st = kvs_errstatus(kd);
	snprintf(msg, msglen, "%s", kvs_geterr(kd));
	kvs_close(kd);
	return rc;
}

START_TEST(rnglists_header_refused)
{
	const char *good = fixture_path("../dwarf-test/t.exec5");
	const char *crash = regress_path("fuzz_dwarf/rnglists-double-free");
	const char *tmp = path_join(test_tmpdir(), "t.badaddr");
	char msg[KVS_ERRBUF_SIZE];
	kvs_status_t st;
	size_t len, at;
	uint8_t *b;

	/* The intact object answers: the check refuses only bad headers. */
	ck_assert_int_eq(type_of(good, "struct outer", &st, msg, sizeof(msg)), 0);
	/* The fuzzer's input: its first unit's version reads 0. */
	ck_assert_int_eq(type_of(crash, "struct outer", &st, msg, sizeof(msg)), -1);
	ck_assert_int_eq(st, KVS_E_DWARF);
	ck_assert_msg(strstr(msg, "corrupt DWARF: .debug_rnglists unit at offset 0x0: "
	    "version is not 5") != NULL, "%s", msg);
	/* The intact object with its first unit's address size made 3. */
	at = section_offset(good, ".debug_rnglists");
	b = read_file(good, &len);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(b[at + 6], 8);
	b[at + 6] = 3;
	ck_assert_int_eq(write_file(tmp, b, len), 0);
	free(b);
	ck_assert_int_eq(type_of(tmp, "struct outer", &st, msg, sizeof(msg)), -1);
	ck_assert_int_eq(st, KVS_E_DWARF);
	ck_assert_msg(strstr(msg, "corrupt DWARF: .debug_rnglists unit at offset 0x0: "
	    "address size is not 2, 4 or 8") != NULL, "%s", msg);
}
END_TEST

START_TEST(sibling_loop_cut)
{
	const char *hang = regress_path("fuzz_dwarf/sibling-loop-hang");
	char msg[KVS_ERRBUF_SIZE];
	kvs_status_t st;

	setenv("KVS_TYPES", "dwarf", 1);
	ck_assert_int_eq(type_of(hang, "struct malloc_type", &st, msg, sizeof(msg)), 0);
	/* struct proc's DW_AT_sibling names itself; struct proclist follows. */
	ck_assert_int_eq(type_of(hang, "struct proclist", &st, msg, sizeof(msg)), -1);
	ck_assert_msg(strstr(msg, "DWARF index incomplete: walking top-level DIEs "
	    "(DIE 0xedb): malformed DWARF") != NULL, "%s", msg);
	/* The intact kernel has the type: the cut is the loop's doing. */
	ck_assert_int_eq(type_of(fixture_path("fbsd14/kernel.dwarf5"), "struct proclist", &st,
	    msg, sizeof(msg)), 0);
}
END_TEST

START_TEST(strtab_nobits)
{
	const char *good = fixture_path("../dwarf-test/t.exec5");
	const char *bad = regress_path("fuzz_dwarf/strtab-nobits-symtab");
	char err[KVS_ERRBUF_SIZE], msg[KVS_ERRBUF_SIZE];
	kvs_status_t st;
	uint64_t v;
	kvs_t *kd;

	/* The intact object names its globals. */
	kd = kvs_open(good, NULL, KVS_O_KERNEL_ONLY, err);
	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_int_eq(kvs_symbol(kd, "fwd_global", &v, NULL), 0);
	ck_assert_uint_ne(v, 0);
	kvs_close(kd);
	/* The same symbols over a string section without bytes: none found,
	 * said so, and the DWARF types still answer. */
	kd = kvs_open(bad, NULL, KVS_O_KERNEL_ONLY, err);
	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_int_eq(kvs_symbol(kd, "fwd_global", &v, NULL), -1);
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_NOSYMBOL);
	kvs_close(kd);
	ck_assert_int_eq(type_of(bad, "struct outer", &st, msg, sizeof(msg)), 0);
}
END_TEST

/* _gmonparam.histcounter_type = v in a copy of the fbsd14 raw image. */
START_TEST(histcounter_int_min)
{
	const char *img = path_join(test_tmpdir(), "mem.raw");
	char err[KVS_ERRBUF_SIZE];
	struct kvs_typeinfo ti;
	uint64_t sym, pa;
	size_t len;
	uint8_t *b;
	kvs_t *kd;
	kvmprof_gmon_t *g;

	kd = kvs_open(fixture_path("fbsd14/kernel"), fixture_path("fbsd14/mem.raw"), 0, err);
	ck_assert_msg(kd != NULL, "%s", err);
	g = kvmprof_gmon_read(kd);
	ck_assert_msg(g != NULL, "%s", kvs_geterr(kd));     /* the intact image reads */
	kvmprof_gmon_free(g);
	ck_assert_int_eq(kvs_symbol(kd, "_gmonparam", &sym, NULL), 0);
	ck_assert_int_eq(kvs_member(kd, "struct gmonparam", "histcounter_type", &ti), 0);
	ck_assert_uint_eq(ti.size, 4);
	ck_assert_int_eq(kvs_kvtop(kd, sym + ti.offset, &pa), 0);
	kvs_close(kd);
	b = read_file(fixture_path("fbsd14/mem.raw"), &len);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_lt(pa + 4, len);
	memcpy(b + pa, "\x00\x00\x00\x80", 4);    /* INT_MIN, little-endian */
	ck_assert_int_eq(write_file(img, b, len), 0);
	free(b);
	kd = kvs_open(fixture_path("fbsd14/kernel"), img, 0, err);
	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_ptr_null(kvmprof_gmon_read(kd));
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_DATA);
	ck_assert_msg(strstr(kvs_geterr(kd), "histcounter_type -2147483648 is not a counter "
	    "width") != NULL, "%s", kvs_geterr(kd));
	kvs_close(kd);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("fuzz_regress");
	TCase *tc = tcase_create("replay");

	/* The inputs are mutated copies that keep the intact file's build-id:
	 * the layout cache (keyed by it, tested in check_layout_cache) would
	 * answer for them from the intact file, so the parsers are asked. */
	setenv("KVS_NO_CACHE", "1", 1);

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, replay, 0, (int)NHARNESS);
	tcase_add_test(tc, rnglists_header_refused);
	tcase_add_test(tc, sibling_loop_cut);
	tcase_add_test(tc, histcounter_int_min);
	tcase_add_test(tc, strtab_nobits);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
