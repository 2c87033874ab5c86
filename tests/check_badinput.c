/*
 * check_badinput.c - hostile and broken inputs: every case ends in a clear
 * error (never a crash, hang or write), and the dumps are never modified.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvmstat.h"
#include "memstat.h"
#include "testutil.h"

static const char *const cores[] = {
	"fbsd14/vmcore.minidump1", "fbsd14/vmcore.minidump2", "fbsd14/vmcore.minidump3",
	"fbsd14/vmcore.elf", "fbsd14/mem.raw",
};

/* Open must fail with a message containing `want`: the errbuf is all a
 * failed open reports, so it must name the real cause. */
static void
expect_open_fails(const char *kernel, const char *core, int flags, const char *want)
{
	char err[KVS_ERRBUF_SIZE] = "";
	kvs_t *kd = kvs_open(kernel, core, flags, err);

	ck_assert_msg(kd == NULL, "%s opened but should not", core);
	ck_assert_msg(strstr(err, want) != NULL, "%s: '%s' lacks '%s'", core, err, want);
}

static const char *
kernel(void)
{
	return fixture_path("fbsd14/kernel");
}

/* Truncations: every cut of every format fails at open, and the message
 * names what is cut short (with the file's size where the format says it). */
START_TEST(truncated)
{
	static const size_t cuts[] = { 0, 10, 4095, 4096, 6000, 20000 };
	/* Per core (as in cores[]) and cut: what the message must contain;
	 * %zu / %zx take the cut. */
	static const char *const want[5][6] = {
		{ "empty file", "minidump header truncated (%zu bytes)",
		  "minidump header truncated (%zu bytes)",
		  "message buffer (msgbufsize 6000 bytes at offset 0x1000) past end of file (%zu bytes)",
		  "message buffer (msgbufsize 6000 bytes at offset 0x1000) past end of file (%zu bytes)",
		  "page-table section (pmapsize 65536 bytes at offset 0x4000) past end of file (%zu bytes)" },
		{ "empty file", "minidump header truncated (%zu bytes)",
		  "minidump header truncated (%zu bytes)",
		  "message buffer (msgbufsize 6000 bytes at offset 0x1000) past end of file (%zu bytes)",
		  "message buffer (msgbufsize 6000 bytes at offset 0x1000) past end of file (%zu bytes)",
		  "minidump truncated: %zu pages claimed, file holds 0" },  /* truth.json dumped_pages */
		{ "empty file", "minidump header truncated (%zu bytes)",
		  "minidump header truncated (%zu bytes)",
		  "message buffer (msgbufsize 6000 bytes at offset 0x1000) past end of file (%zu bytes)",
		  "message buffer (msgbufsize 6000 bytes at offset 0x1000) past end of file (%zu bytes)",
		  "page bitmap (bitmapsize 4096 bytes at offset 0x4000) past end of file (%zu bytes)" },
		{ "empty file", "ELF header truncated (%zu bytes)",
		  "segment 0 (physical 0x0, 0x9f000 bytes at offset 0x1000) past end of file (%zu bytes)",
		  "segment 0 (physical 0x0, 0x9f000 bytes at offset 0x1000) past end of file (%zu bytes)",
		  "segment 0 (physical 0x0, 0x9f000 bytes at offset 0x1000) past end of file (%zu bytes)",
		  "segment 0 (physical 0x0, 0x9f000 bytes at offset 0x1000) past end of file (%zu bytes)" },
		/* raw: a cut to whole pages is a smaller image; any other cut is
		 * no image at all. */
		{ "empty file", "at %zu bytes, not whole 4 KiB pages, not a raw memory image",
		  "at %zu bytes, not whole 4 KiB pages, not a raw memory image",
		  "physical 0x2030a0 beyond the image (0x%zx bytes)",
		  "at %zu bytes, not whole 4 KiB pages, not a raw memory image",
		  "at %zu bytes, not whole 4 KiB pages, not a raw memory image" },
	};
	const char *src = fixture_path(cores[_i]);
	const char *dst = path_join(test_tmpdir(), "trunc");
	size_t i;

	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		char w[256];

		ck_assert_int_eq(copy_prefix(src, dst, cuts[i]), 0);
		if (strstr(want[_i][i], "pages claimed") != NULL) {
			/* the generator's count of the pages it dumped */
			json_t *t = load_truth("fbsd14/truth.json");
			json_t *n = json_object_get(json_object_get(t, "dumped_pages"), "minidump2");
			ck_assert_msg(json_is_integer(n), "truth.json lacks dumped_pages.minidump2");
			snprintf(w, sizeof(w), want[_i][i], (size_t)json_integer_value(n));
			json_decref(t);
		} else
			snprintf(w, sizeof(w), want[_i][i], cuts[i]);
		expect_open_fails(kernel(), dst, 0, w);
		/* The message names the file it could not use. */
		expect_open_fails(kernel(), dst, 0, dst);
	}
}
END_TEST

START_TEST(minidump_cut_in_data)
{
	const char *dst = path_join(test_tmpdir(), "cut.mdmp");
	size_t len;
	char *b = read_file(fixture_path("fbsd14/vmcore.minidump3"), &len);
	char err[KVS_ERRBUF_SIZE], buf[64];
	kvs_t *kd;
	json_t *t = load_truth("fbsd14/truth.json");
	struct kvs_dumpinfo di;

	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(write_file(dst, b, len - 8192), 0);
	free(b);
	kd = kvs_open(kernel(), dst, KVS_O_NOVERIFY, err);
	ck_assert_msg(kd != NULL, "%s", err);
	kvs_dumpinfo(kd, &di);
	/* The highest dumped pages are gone: a heap read fails as truncated. */
	json_t *tr = json_array_get(json_object_get(t, "translations"), 1);
	uint64_t va = jget(tr, "va");
	int any = 0;
	for (uint64_t off = 0; off < 0x200000; off += 4096)
		if (kvs_read(kd, (va & ~0xfffULL) + off, buf, 8) != 0 &&
		    kvs_errstatus(kd) == KVS_E_TRUNCATED) {
			ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "truncated"));
			any = 1;
			break;
		}
	ck_assert_msg(any, "no read reported the truncation");
	kvs_close(kd);
	json_decref(t);
}
END_TEST

static void
patch32(const char *src, const char *dst, size_t off, uint32_t v)
{
	size_t len;
	char *b = read_file(src, &len);

	ck_assert_ptr_nonnull(b);
	memcpy(b + off, &v, 4);
	ck_assert_int_eq(write_file(dst, b, len), 0);
	free(b);
}

START_TEST(minidump_headers)
{
	const char *src = fixture_path("fbsd14/vmcore.minidump3");
	const char *dst = path_join(test_tmpdir(), "bad.mdmp");

	patch32(src, dst, 24, 4);
	expect_open_fails(kernel(), dst, 0, "version 4");
	patch32(src, dst, 24, 0);
	expect_open_fails(kernel(), dst, 0, "version 0");
	patch32(src, dst, 28, 0xfffff000);             /* msgbufsize */
	expect_open_fails(kernel(), dst, 0, "message buffer");
	patch32(src, dst, 32, 0x7ffff000);             /* bitmapsize */
	expect_open_fails(kernel(), dst, 0, "bitmap");
	patch32(src, dst, 36, 0xfffffff0);             /* pmapsize */
	expect_open_fails(kernel(), dst, 0, "page-table section");
	patch32(src, dst, 64, 0xfffff000);             /* dumpavailsize */
	expect_open_fails(kernel(), dst, 0, "dump_avail");
	/* Another architecture's minidump. */
	{
		size_t len;
		char *b = read_file(src, &len);
		memcpy(b + 9, "FreeBSD/riscv\0\0\0\0\0\0\0\0\0\0", 15);
		ck_assert_int_eq(write_file(dst, b, len), 0);
		free(b);
		expect_open_fails(kernel(), dst, 0, "another architecture");
	}
}
END_TEST

START_TEST(elf_headers)
{
	const char *src = fixture_path("fbsd14/vmcore.elf");
	const char *dst = path_join(test_tmpdir(), "bad.elf");
	size_t len;
	char *b = read_file(src, &len);
	uint64_t v;

	ck_assert_ptr_nonnull(b);
	/* e_phoff past the end */
	v = len + 4096;
	memcpy(b + 0x20, &v, 8);
	ck_assert_int_eq(write_file(dst, b, len), 0);
	expect_open_fails(kernel(), dst, 0, "program headers");
	/* e_phnum absurd */
	free(b);
	b = read_file(src, &len);
	/* (a table that reaches the kernel's data, 2 MiB in, reads it as
	 * headers first: keep to the zeros of low memory) */
	uint16_t n = 0x1000;
	memcpy(b + 0x38, &n, 2);
	ck_assert_int_eq(write_file(dst, b, len), 0);
	expect_open_fails(kernel(), dst, 0, "program header table (4096 entries at 0x40) overlaps");
	/* first PT_LOAD p_offset past the end */
	free(b);
	b = read_file(src, &len);
	v = (uint64_t)len * 2;
	memcpy(b + 64 + 8, &v, 8);
	ck_assert_int_eq(write_file(dst, b, len), 0);
	expect_open_fails(kernel(), dst, 0, "past end of file");
	free(b);
	/* A core with neither physical nor virtual ranges holds nothing: every
	 * PT_LOAD turned into a PT_NOTE. */
	b = read_file(src, &len);
	ck_assert_ptr_nonnull(b);
	{
		uint64_t phoff;
		uint16_t phnum, k;
		int loads = 0;
		memcpy(&phoff, b + 0x20, 8);
		memcpy(&phnum, b + 0x38, 2);
		ck_assert_uint_le(phoff + 56ULL * phnum, len);
		for (k = 0; k < phnum; k++) {
			uint32_t type;
			memcpy(&type, b + phoff + 56ULL * k, 4);
			if (type == 1) {                 /* PT_LOAD -> PT_NOTE */
				type = 4;
				memcpy(b + phoff + 56ULL * k, &type, 4);
				loads++;
			}
		}
		ck_assert_int_gt(loads, 0);
	}
	ck_assert_int_eq(write_file(dst, b, len), 0);
	free(b);
	expect_open_fails(kernel(), dst, 0, "ELF dump has no PT_LOAD segments");
}
END_TEST

START_TEST(not_dumps)
{
	const char *dir = test_tmpdir();
	const char *fifo = path_join(dir, "fifo");
	const char *txt = path_join(dir, "text");

	expect_open_fails(kernel(), dir, 0, "is a directory");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	expect_open_fails(kernel(), fifo, 0, "FIFO");          /* must not block */
	/* A FIFO, a directory or a device as the kernel or a module: refused
	 * at once (a FIFO used to block the open until a writer came). */
	expect_open_fails(fifo, fixture_path(cores[2]), 0, "not a regular file (a FIFO)");
	expect_open_fails(dir, fixture_path(cores[2]), 0, "not a regular file (a directory)");
	expect_open_fails("/dev/null", fixture_path(cores[2]), 0,
	    "kernel /dev/null: not a regular file (a character device)");
	{
		char err[KVS_ERRBUF_SIZE] = "";
		const char *mods = path_join(dir, "mods");
		const char *ko = path_join(mods, "dtrace.ko");   /* loaded in the dump */
		kvs_t *kd = kvs_open(kernel(), fixture_path(cores[2]), 0, err);

		ck_assert_msg(kd != NULL, "%s", err);
		ck_assert_int_eq(mkdir(mods, 0700), 0);
		ck_assert_int_eq(mkfifo(ko, 0600), 0);
		ck_assert_int_eq(kvs_add_module(kd, ko), -1);
		ck_assert_int_eq(kvs_errstatus(kd), KVS_E_FORMAT);
		ck_assert_msg(strstr(kvs_geterr(kd), "module") != NULL &&
		    strstr(kvs_geterr(kd), "not a regular file (a FIFO)") != NULL,
		    "%s", kvs_geterr(kd));
		kvs_close(kd);
	}
	expect_open_fails(kernel(), "/nonexistent/vmcore", 0, "No such file");
	expect_open_fails(kernel(), kernel(), 0, "not a core dump");
	ck_assert_int_eq(write_file(txt, "hello\n", 6), 0);
	expect_open_fails(txt, fixture_path(cores[2]), 0, "not an ELF");
	expect_open_fails(NULL, fixture_path(cores[2]), 0, "no kernel");
	expect_open_fails(kernel(), path_join(dir, "empty"), 0, "No such file");
	ck_assert_int_eq(write_file(path_join(dir, "empty"), "", 0), 0);
	expect_open_fails(kernel(), path_join(dir, "empty"), 0, "empty");
}
END_TEST

/* KPML4phys holding a value that is not page aligned (a corrupt image, or
 * the wrong kernel's data there): refused with the value named, never
 * walked.  The generator's value, found at the generator's address in a
 * copy of the RAM file, gets 0x10 added. */
START_TEST(kpml4phys_unaligned)
{
	json_t *t = load_truth("fbsd14/truth.json");
	json_t *sy = json_object_get(json_object_get(t, "symbols"), "KPML4phys");
	uint64_t at = strtoull(json_string_value(json_object_get(sy, "addr")), NULL, 16);
	uint64_t want = jget(t, "kpml4phys"), v;
	const char *copy = path_join(test_tmpdir(), "kpml4.raw");
	size_t len;
	uint8_t *img = read_file(fixture_path("fbsd14/mem.raw"), &len);
	char msg[128];

	ck_assert_ptr_nonnull(img);
	at -= 0xffffffff80000000ULL;            /* the generator's kernbase */
	ck_assert_uint_le(at + 8, len);
	memcpy(&v, img + at, 8);
	ck_assert_uint_eq(v, want);
	v += 0x10;
	memcpy(img + at, &v, 8);
	ck_assert_int_eq(write_file(copy, img, len), 0);
	snprintf(msg, sizeof(msg), "KPML4phys holds 0x%llx, not a page-table address",
	    (unsigned long long)v);
	expect_open_fails(kernel(), copy, KVS_O_RAW, msg);
	free(img);
	json_decref(t);
}
END_TEST

/* A FreeBSD kernel ELF patched to AArch64's machine (183), which kvmstat
 * translates but whose FreeBSD layout it does not read yet, and to RISC-V's
 * (243), which it does not translate: both refused, naming what they are. */
START_TEST(kernel_of_another_machine)
{
	const char *k = path_join(test_tmpdir(), "kernel.arm64");
	size_t len;
	uint8_t *img = read_file(kernel(), &len);
	uint16_t m = 183;

	ck_assert_ptr_nonnull(img);
	ck_assert_uint_gt(len, 64);
	memcpy(img + 18, &m, 2);                /* e_machine */
	ck_assert_int_eq(write_file(k, img, len), 0);
	expect_open_fails(k, fixture_path(cores[2]), 0, "machine 183");
	/* the dump says amd64: both machines named */
	expect_open_fails(k, fixture_path(cores[2]), 0, "is of amd64 (machine 62), but the kernel");
	/* a machine no architecture reads: refused by the file's checks */
	m = 243;                                /* EM_RISCV */
	memcpy(img + 18, &m, 2);
	ck_assert_int_eq(write_file(k, img, len), 0);
	expect_open_fails(k, fixture_path(cores[2]), 0, "machine 243");
	expect_open_fails(k, fixture_path(cores[2]), 0, "not an amd64/arm64 kernel executable");
	free(img);
}
END_TEST

START_TEST(wrong_kernel)
{
	size_t i;

	for (i = 0; i < sizeof(cores) / sizeof(cores[0]); i++) {
		expect_open_fails(fixture_path("fbsd14/kernel.other"), fixture_path(cores[i]), 0,
		    "kernel does not match dump");
		/* ... and shows both versions. */
		expect_open_fails(fixture_path("fbsd14/kernel.other"), fixture_path(cores[i]), 0,
		    "kernel is \"FreeBSD 14.0-RELEASE other-fixture #1");
		expect_open_fails(fixture_path("fbsd14/kernel.other"), fixture_path(cores[i]), 0,
		    "dump is \"FreeBSD 14.1-RELEASE fixture #0");
	}
	/* A kernel of another generation: the minidumps (which carry their
	 * page tables) read its version from the wrong place, the full dump and
	 * the raw image find no page-table root where it says. */
	for (i = 0; i < sizeof(cores) / sizeof(cores[0]); i++) {
		char k12[4096];
		snprintf(k12, sizeof(k12), "%s", fixture_path("fbsd12/kernel"));
		if (i < 3) {
			expect_open_fails(k12, fixture_path(cores[i]), 0, "kernel does not match dump");
			expect_open_fails(k12, fixture_path(cores[i]), 0,
			    "kernel is \"FreeBSD 12.4-RELEASE");
		} else
			expect_open_fails(k12, fixture_path(cores[i]), 0,
			    "KPML4phys holds 0x0, not a page-table address");
	}
}
END_TEST

/* The last failure's status, message and fault address. */
static void
expect_fault(kvs_t *kd, kvs_status_t st, const char *why, uint64_t va)
{
	char vas[64];
	int valid;

	ck_assert_msg(kvs_errstatus(kd) == st, "status %s, want %s: %s",
	    kvs_status_str(kvs_errstatus(kd)), kvs_status_str(st), kvs_geterr(kd));
	ck_assert_msg(strstr(kvs_geterr(kd), why) != NULL, "'%s' lacks '%s'", kvs_geterr(kd), why);
	snprintf(vas, sizeof(vas), "va 0x%llx", (unsigned long long)va);
	ck_assert_msg(strstr(kvs_geterr(kd), vas) != NULL, "'%s' lacks '%s'", kvs_geterr(kd), vas);
	ck_assert_uint_eq(kvs_fault_addr(kd, &valid), va);
	ck_assert(valid);
}

/* Reads: unmapped, not dumped, missing page-table page, page-table loop,
 * unterminated strings. */
START_TEST(bad_reads)
{
	/* Why a walk stops, per core: the minidumps translate through their own
	 * page-table section (v1: PTEs, v2/v3: PDEs and the dumped PT pages),
	 * the full dump and the raw image through the kernel's page tables. */
	static const char *const pte_why[] = { "PTE not valid", "PTE not valid", "PTE not valid",
		"PT entry not valid", "PT entry not valid" };
	json_t *t = load_truth("fbsd14/truth.json");
	char err[KVS_ERRBUF_SIZE], buf[64];
	kvs_t *kd = kvs_open(kernel(), fixture_path(cores[_i]), 0, err);
	uint64_t va, pa;
	int valid, trunc;

	ck_assert_msg(kd != NULL, "%s", err);
	/* A PD entry pointing back at its own PD: the walk takes the PD for a
	 * PT, finds no valid entry there, and stops. */
	va = jget(t, "loop_va");
	ck_assert_int_eq(kvs_read(kd, va, buf, sizeof(buf)), -1);
	expect_fault(kd, KVS_E_UNMAPPED, pte_why[_i], va);
	/* A PD entry whose PT page is not in the dump. */
	va = jget(t, "missing_pt_va");
	ck_assert_int_eq(kvs_read(kd, va, buf, 8), -1);
	if (_i == 1 || _i == 2) {
		expect_fault(kd, KVS_E_NOTDUMPED, "reading PT entry at physical", va);
		ck_assert_msg(strstr(kvs_geterr(kd), "not in dump") != NULL, "%s", kvs_geterr(kd));
	} else  /* v1 keeps PTEs itself; full dumps hold the page, zero-filled */
		expect_fault(kd, KVS_E_UNMAPPED, pte_why[_i], va);
	/* A read that runs from a mapped page into an unmapped one. */
	va = jget(json_array_get(json_object_get(t, "translations"), 1), "va") & ~0xfffULL;
	while (kvs_kvtop(kd, va, &pa) == 0)                     /* find the heap's end */
		va += 4096;
	expect_fault(kd, KVS_E_UNMAPPED, pte_why[_i], va);
	ck_assert_int_eq(kvs_read(kd, va - 16, buf, 32), -1);
	expect_fault(kd, KVS_E_UNMAPPED, pte_why[_i], va);
	{
		char what[64];
		snprintf(what, sizeof(what), "reading 32 bytes at 0x%llx", (unsigned long long)(va - 16));
		ck_assert_msg(strstr(kvs_geterr(kd), what) != NULL, "%s", kvs_geterr(kd));
	}
	/* An unterminated string is cut at maxlen, flagged, and stays in bounds. */
	uint64_t vers;
	ck_assert_int_eq(kvs_symbol(kd, "version", &vers, NULL), 0);
	ck_assert_int_eq(kvs_read_string(kd, vers, buf, 8, &trunc), 7);
	ck_assert_int_eq(trunc, 1);
	ck_assert_uint_eq(strlen(buf), 7);
	/* The heap's last bytes are zero here: a string there ends in bounds. */
	ck_assert_int_eq(kvs_read_string(kd, va - 4, buf, sizeof(buf), &trunc), 0);
	ck_assert_int_eq(trunc, 0);
	ck_assert_int_eq(kvs_errstatus(kd), KVS_OK);
	ck_assert_int_eq(kvs_fault_addr(kd, &valid), 0);
	ck_assert(!valid);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/* A string whose last mapped bytes hold no NUL runs into the unmapped page:
 * it fails there, naming the page, and writes a terminated buffer. */
START_TEST(string_into_unmapped_page)
{
	json_t *t = load_truth("fbsd14/truth.json");
	const char *copy = path_join(test_tmpdir(), "string.raw");
	char err[KVS_ERRBUF_SIZE], buf[64];
	uint64_t va, pa;
	size_t len;
	uint8_t *img;
	int trunc = -1;
	kvs_t *kd = kvs_open(kernel(), fixture_path("fbsd14/mem.raw"), KVS_O_RAW, err);

	ck_assert_msg(kd != NULL, "%s", err);
	va = jget(json_array_get(json_object_get(t, "translations"), 1), "va") & ~0xfffULL;
	while (kvs_kvtop(kd, va, &pa) == 0)
		va += 4096;
	ck_assert_int_eq(kvs_kvtop(kd, va - 4, &pa), 0);
	kvs_close(kd);
	img = read_file(fixture_path("fbsd14/mem.raw"), &len);
	ck_assert_ptr_nonnull(img);
	ck_assert_uint_le(pa + 4, len);
	memcpy(img + pa, "ABCD", 4);                       /* no NUL before the page end */
	ck_assert_int_eq(write_file(copy, img, len), 0);
	free(img);
	kd = kvs_open(kernel(), copy, KVS_O_RAW, err);
	ck_assert_msg(kd != NULL, "%s", err);
	memset(buf, 'x', sizeof(buf));
	ck_assert_int_eq(kvs_read_string(kd, va - 4, buf, sizeof(buf), &trunc), -1);
	expect_fault(kd, KVS_E_UNMAPPED, "PT entry not valid", va);
	ck_assert_ptr_nonnull(memchr(buf, '\0', sizeof(buf)));
	/* With room for only the mapped bytes it is merely cut short. */
	ck_assert_int_eq(kvs_read_string(kd, va - 4, buf, 5, &trunc), 4);
	ck_assert_int_eq(trunc, 1);
	ck_assert_str_eq(buf, "ABCD");
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/*
 * A dump cut short while a handle has it open (kvmtop over a file another
 * process truncates): the next refresh fails, naming the file and the
 * cause, over the last good values; nothing touches the mapping past the
 * new end (that would be SIGBUS, which check's fork reports as a failure).
 */
START_TEST(shrinks_while_open)
{
	const char *copy = path_join(test_tmpdir(), "shrinking");
	struct memory_type_list *mtl = memstat_mtl_alloc();
	struct memory_type *mt;
	uint64_t allocs_before = 0, allocs_after = 0;
	char err[KVS_ERRBUF_SIZE] = "";
	char *text = NULL;
	size_t len = 0;
	int n = 0;
	kvs_t *kd;

	ck_assert_int_eq(copy_prefix(fixture_path(cores[_i]), copy, SIZE_MAX), 0);
	kd = kvs_open(kernel(), copy, 0, err);
	ck_assert_msg(kd != NULL, "%s: %s", cores[_i], err);
	ck_assert_int_eq(memstat_kvm_malloc(mtl, kd), 0);
	for (mt = memstat_mtl_first(mtl); mt != NULL; mt = memstat_mtl_next(mt), n++)
		allocs_before += memstat_get_numallocs(mt);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(truncate(copy, 8192), 0);
	ck_assert_int_eq(memstat_kvm_malloc(mtl, kd), -1);
	if (_i < 4) {     /* mapped formats: the whole file is refused */
		ck_assert_int_eq(kvs_errstatus(kd), KVS_E_TRUNCATED);
		ck_assert_msg(strstr(kvs_geterr(kd), "shrank from") != NULL &&
		    strstr(kvs_geterr(kd), copy) != NULL &&
		    strstr(kvs_geterr(kd), "to 8192 bytes while open") != NULL,
		    "%s: '%s'", cores[_i], kvs_geterr(kd));
		ck_assert_int_eq(kvs_msgbuf(kd, &text, &len), -1);
		ck_assert_msg(strstr(kvs_geterr(kd), "shrank from") != NULL, "%s", kvs_geterr(kd));
		free(text);
		ck_assert_int_eq(kvs_read(kd, 0xffffffff80000000ULL, &len, 8), -1);
	} else {          /* raw reads what is left: past it, beyond the image */
		ck_assert_msg(strstr(kvs_geterr(kd), "beyond the image (0x2000 bytes)") != NULL,
		    "%s", kvs_geterr(kd));
	}
	/* The failed refresh left the last good values. */
	for (mt = memstat_mtl_first(mtl); mt != NULL; mt = memstat_mtl_next(mt), n--)
		allocs_after += memstat_get_numallocs(mt);
	ck_assert_int_eq(n, 0);
	ck_assert_uint_eq(allocs_after, allocs_before);
	memstat_mtl_free(mtl);
	kvs_close(kd);
	unlink(copy);
}
END_TEST

/* Run kvmstat; its exit status in *st, its output (stdout and stderr). */
static char *
kvmstat(const char *args, int *st)
{
	char cmd[9000];

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", build_path("analyzers/kvmstat"), args);
	return run_capture(cmd, st);
}

/*
 * A valid zstd frame holding src's bytes in stored (raw) blocks, written
 * by hand so no zstd program is needed: magic, a single-segment header
 * with the 8-byte content size, then blocks of at most 128 KiB, each a
 * 3-byte header (last flag, type 0 = raw, size) and the bytes.
 */
static void
zstd_stored(const char *src, const char *dst)
{
	size_t len, off = 0, o = 0;
	uint8_t *in = read_file(src, &len);
	uint8_t *out = malloc(len + len / 4096 + 64);

	ck_assert(in != NULL && out != NULL);
	memcpy(out, "\x28\xb5\x2f\xfd\xe0", 5);
	o = 5;
	for (int k = 0; k < 8; k++)
		out[o++] = (uint8_t)((uint64_t)len >> (8 * k));
	do {
		size_t n = len - off < 131072 ? len - off : 131072;
		uint32_t h = (uint32_t)(n << 3) | (off + n == len ? 1u : 0u);
		out[o++] = (uint8_t)h;
		out[o++] = (uint8_t)(h >> 8);
		out[o++] = (uint8_t)(h >> 16);
		memcpy(out + o, in + off, n);
		o += n;
		off += n;
	} while (off < len);
	ck_assert_int_eq(write_file(dst, out, o), 0);
	free(in);
	free(out);
}

/* Inputs that used to get a message about something else (page tables,
 * the kernel, the UMA layout): each now names the file and the real cause. */
START_TEST(real_causes)
{
	const char *dir = test_tmpdir();
	const char *tiny = path_join(dir, "tiny"), *nodwarf = path_join(dir, "kernel.nodwarf");
	static const struct { const char *name, *magic, *want; size_t len; } packed[] = {
		{ "x.xz", "\xfd" "7zXZ\0", "xz-compressed data, not a dump: decompress it first (unxz)", 6 },
		{ "x.bz2", "BZh9", "bzip2-compressed data, not a dump: decompress it first (bunzip2)", 4 },
		{ "x.lz4", "\x04\x22\x4d\x18", "lz4-compressed data, not a dump: decompress it first (unlz4)", 4 },
	};
	char cmd[8192], err[KVS_ERRBUF_SIZE], buf[8192];
	struct memory_type_list *mtl;
	char *out;
	size_t i;
	kvs_t *kd;
	int st;

	/* Character devices that are no memory. */
	expect_open_fails(kernel(), "/dev/zero", 0,
	    "dump /dev/zero: is the device /dev/zero, not memory (live memory is /dev/mem)");
	expect_open_fails(kernel(), "/dev/null", 0,
	    "dump /dev/null: is the device /dev/null, not memory");
	/* --raw on a format that is not raw. */
	for (i = 0; i < 4; i++) {
		snprintf(buf, sizeof(buf), "dump %s is in the %s dump format, not a raw memory "
		    "image: open it without --raw", fixture_path(cores[i]), i < 3 ? "minidump" : "elf");
		expect_open_fails(kernel(), fixture_path(cores[i]), KVS_O_RAW, buf);
	}
	/* Not whole pages, so not a raw image (unless asked for). */
	ck_assert_int_eq(copy_prefix(fixture_path("fbsd14/mem.raw"), tiny, 100), 0);
	snprintf(buf, sizeof(buf), "dump %s: no dump format kvmstat reads, and at 100 bytes, "
	    "not whole 4 KiB pages, not a raw memory image either", tiny);
	expect_open_fails(kernel(), tiny, 0, buf);
	expect_open_fails(kernel(), tiny, KVS_O_RAW, "beyond the image (0x64 bytes)");
	/* Compressed files no source reads. */
	for (i = 0; i < sizeof(packed) / sizeof(packed[0]); i++) {
		const char *f = path_join(dir, packed[i].name);
		memset(buf, 0, sizeof(buf));
		memcpy(buf, packed[i].magic, packed[i].len);
		ck_assert_int_eq(write_file(f, buf, sizeof(buf)), 0);
		expect_open_fails(kernel(), f, 0, packed[i].want);
	}
	/* gzip and zstd: read by a source where there is one, else the same. */
	for (i = 0; i < 2; i++) {
		const char *f = path_join(dir, i ? "m.zst" : "m.gz");
		if (i)
			zstd_stored(fixture_path(cores[2]), f);
		else {
			snprintf(cmd, sizeof(cmd), "gzip -c %s > %s", fixture_path(cores[2]), f);
			ck_assert_msg(system(cmd) == 0, "%s", cmd);
		}
		kd = kvs_open(kernel(), f, 0, err);
		if (kd == NULL)
			ck_assert_msg(strstr(err, i ? "zstd-compressed data, not a dump: decompress it first"
			    : "gzip-compressed data, not a dump: decompress it first") != NULL, "%s", err);
		kvs_close(kd);
	}
	/* No -M: the default and why it failed. */
	kd = kvs_open(kernel(), NULL, 0, err);
	if (kd == NULL)
		ck_assert_msg(strstr(err, "no dump given (-M), so live memory, /dev/mem, was tried: ")
		    == err, "%s", err);
	kvs_close(kd);
	out = kvmstat(" -N /nonexistent/kernel info", &st);
	ck_assert_int_ne(st, 0);
	ck_assert_msg(strstr(out, "kernel /nonexistent/kernel: No such file") != NULL, "%s", out);
	free(out);

	/* A kernel without DWARF: zone says which types are missing. */
	snprintf(cmd, sizeof(cmd), "objcopy --strip-debug %s %s", kernel(), nodwarf);
	ck_assert_msg(system(cmd) == 0, "objcopy is needed: %s", cmd);
	snprintf(cmd, sizeof(cmd), "-N %s -M %s zone", nodwarf, fixture_path(cores[2]));
	out = kvmstat(cmd, &st);
	ck_assert_int_ne(st, 0);
	ck_assert_msg(strstr(out, "zone: UMA layout: the types struct uma_zone, struct uma_keg and "
	    "struct uma_cache are needed: kernel ") != NULL && strstr(out, "no DWARF") != NULL,
	    "%s", out);
	free(out);

	/* --no-verify with the wrong kernel: malloc fails, non-zero, no table. */
	snprintf(cmd, sizeof(cmd), "-N %s -M %s --no-verify malloc", kernel(),
	    fixture_path("fbsd12/vmcore.minidump2"));
	out = kvmstat(cmd, &st);
	ck_assert_int_ne(st, 0);
	ck_assert_msg(strstr(out, "Type InUse") == NULL, "%s", out);
	ck_assert_msg(strstr(out, "is NULL: no malloc type is registered, so the kernel ") != NULL &&
	    strstr(out, "does not match the dump") != NULL, "%s", out);
	free(out);
	kd = kvs_open(kernel(), fixture_path("fbsd12/vmcore.minidump2"), KVS_O_NOVERIFY, err);
	ck_assert_msg(kd != NULL, "%s", err);
	mtl = memstat_mtl_alloc();
	ck_assert_int_eq(memstat_kvm_malloc(mtl, kd), -1);
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_MISMATCH);
	ck_assert_ptr_null(memstat_mtl_first(mtl));
	memstat_mtl_free(mtl);
	kvs_close(kd);
}
END_TEST

/* Checksums of every fixture dump, taken before and after the suite. */
static uint64_t
sum_file(const char *path)
{
	size_t len, i;
	unsigned char *b = read_file(path, &len);
	uint64_t h = 1469598103934665603ULL;

	if (b == NULL)
		return 0;
	for (i = 0; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	free(b);
	return h ^ len;
}

int
main(void)
{
	Suite *s = suite_create("badinput");
	TCase *tc = tcase_create("all");
	int rc;

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, truncated, 0, 5);
	tcase_add_test(tc, minidump_cut_in_data);
	tcase_add_test(tc, minidump_headers);
	tcase_add_test(tc, elf_headers);
	tcase_add_test(tc, not_dumps);
	tcase_add_test(tc, wrong_kernel);
	tcase_add_test(tc, kpml4phys_unaligned);
	tcase_add_test(tc, kernel_of_another_machine);
	tcase_add_loop_test(tc, bad_reads, 0, 5);
	tcase_add_test(tc, string_into_unmapped_page);
	tcase_add_loop_test(tc, shrinks_while_open, 0, 5);
	tcase_add_test(tc, real_causes);
	suite_add_tcase(s, tc);
	uint64_t before[5], after;
	size_t i;
	for (i = 0; i < 5; i++)
		before[i] = sum_file(fixture_path(cores[i]));
	rc = run_suite(s);
	/* Nothing may ever write to a dump. */
	for (i = 0; i < 5; i++) {
		after = sum_file(fixture_path(cores[i]));
		if (after != before[i]) {
			fprintf(stderr, "%s changed during the tests\n", cores[i]);
			rc = EXIT_FAILURE;
		}
	}
	return rc;
}
