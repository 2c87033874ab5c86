/*
 * check_badinput.c - hostile and broken inputs: every case ends in a clear
 * error (never a crash, hang or write), and the dumps are never modified.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvmstat.h"
#include "testutil.h"

static const char *const cores[] = {
	"fbsd14/vmcore.minidump1", "fbsd14/vmcore.minidump2", "fbsd14/vmcore.minidump3",
	"fbsd14/vmcore.elf", "fbsd14/mem.raw",
};

/* Open must fail with a message containing `want` (if non-NULL). */
static void
expect_open_fails(const char *kernel, const char *core, int flags, const char *want)
{
	char err[KVS_ERRBUF_SIZE];
	kvs_t *kd = kvs_open(kernel, core, flags, err);

	ck_assert_msg(kd == NULL, "%s opened but should not", core);
	ck_assert_msg(strlen(err) > 0, "empty error for %s", core);
	if (want != NULL)
		ck_assert_msg(strstr(err, want) != NULL, "%s: '%s' lacks '%s'", core, err, want);
}

static const char *
kernel(void)
{
	return fixture_path("fbsd14/kernel");
}

/* Truncations: headers cut short fail at open; a minidump cut in its data
 * pages opens and then reports the missing page. */
START_TEST(truncated)
{
	static const size_t cuts[] = { 0, 10, 4095, 4096, 6000, 20000 };
	const char *src = fixture_path(cores[_i]);
	const char *dst = path_join(test_tmpdir(), "trunc");
	size_t i;

	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		char err[KVS_ERRBUF_SIZE];
		kvs_t *kd;

		ck_assert_int_eq(copy_prefix(src, dst, cuts[i]), 0);
		kd = kvs_open(kernel(), dst, 0, err);
		if (kd == NULL) {
			ck_assert_int_gt(strlen(err), 0);
			continue;
		}
		/* Something opened (a raw reading of a short file): reads of the
		 * kernel must fail cleanly. */
		uint64_t a;
		char v[64];
		ck_assert_int_eq(kvs_symbol(kd, "msgbufp", &a, NULL), 0);
		(void)kvs_read_string(kd, a, v, sizeof(v), NULL);
		kvs_close(kd);
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
		memcpy(b + 9, "FreeBSD/arm64\0\0\0\0\0\0\0\0\0\0", 15);
		write_file(dst, b, len);
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
	write_file(dst, b, len);
	expect_open_fails(kernel(), dst, 0, "program headers");
	/* e_phnum absurd */
	free(b);
	b = read_file(src, &len);
	uint16_t n = 0xfff0;
	memcpy(b + 0x38, &n, 2);
	write_file(dst, b, len);
	expect_open_fails(kernel(), dst, 0, NULL);
	/* first PT_LOAD p_offset past the end */
	free(b);
	b = read_file(src, &len);
	v = (uint64_t)len * 2;
	memcpy(b + 64 + 8, &v, 8);
	write_file(dst, b, len);
	expect_open_fails(kernel(), dst, 0, "past end of file");
	free(b);
	/* A KVA-addressed core is not a FreeBSD full dump. */
	expect_open_fails(kernel(), fixture_path("fbsd14/vmcore.kva.elf"), 0, "virtual address");
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
	expect_open_fails(kernel(), "/nonexistent/vmcore", 0, "No such file");
	expect_open_fails(kernel(), kernel(), 0, "not a core dump");
	write_file(txt, "hello\n", 6);
	expect_open_fails(txt, fixture_path(cores[2]), 0, "not an ELF");
	expect_open_fails(NULL, fixture_path(cores[2]), 0, "no kernel");
	expect_open_fails(kernel(), path_join(dir, "empty"), 0, NULL);
	write_file(path_join(dir, "empty"), "", 0);
	expect_open_fails(kernel(), path_join(dir, "empty"), 0, "empty");
}
END_TEST

START_TEST(wrong_kernel)
{
	size_t i;

	for (i = 0; i < sizeof(cores) / sizeof(cores[0]); i++)
		expect_open_fails(fixture_path("fbsd14/kernel.other"), fixture_path(cores[i]), 0,
		    "does not match");
	/* A kernel of another generation: its page tables or version differ. */
	expect_open_fails(fixture_path("fbsd12/kernel"), fixture_path(cores[2]), 0, NULL);
}
END_TEST

/* Reads: unmapped, not dumped, missing page-table page, page-table loop,
 * unterminated strings. */
START_TEST(bad_reads)
{
	json_t *t = load_truth("fbsd14/truth.json");
	char err[KVS_ERRBUF_SIZE], buf[64];
	kvs_t *kd = kvs_open(kernel(), fixture_path(cores[_i]), 0, err);
	uint64_t va, pa;
	int valid, trunc;

	ck_assert_msg(kd != NULL, "%s", err);
	va = jget(t, "loop_va");
	(void)kvs_read(kd, va, buf, sizeof(buf));               /* returns, either way */
	va = jget(t, "missing_pt_va");
	if (_i < 3) {                                           /* the PT page is not dumped */
		ck_assert_int_eq(kvs_read(kd, va, buf, 8), -1);
		ck_assert_int_gt(strlen(kvs_geterr(kd)), 0);
		ck_assert_uint_eq(kvs_fault_addr(kd, &valid), va);
	}
	/* A read that runs from a mapped page into an unmapped one. */
	va = jget(json_array_get(json_object_get(t, "translations"), 1), "va") & ~0xfffULL;
	while (kvs_kvtop(kd, va, &pa) == 0)                     /* find the heap's end */
		va += 4096;
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_UNMAPPED);
	ck_assert_int_eq(kvs_read(kd, va - 16, buf, 32), -1);
	ck_assert_uint_eq(kvs_fault_addr(kd, &valid), va);
	ck_assert(valid);
	/* An unterminated string is cut at maxlen, flagged, and stays in bounds. */
	uint64_t vers;
	kvs_symbol(kd, "version", &vers, NULL);
	ck_assert_int_eq(kvs_read_string(kd, vers, buf, 8, &trunc), 7);
	ck_assert_int_eq(trunc, 1);
	ck_assert_uint_eq(strlen(buf), 7);
	/* A string running into an unmapped page fails cleanly. */
	{       /* ends inside the 4 mapped bytes, or fails at the unmapped page */
		ssize_t r = kvs_read_string(kd, va - 4, buf, sizeof(buf), &trunc);
		ck_assert(r == -1 || (r >= 0 && r < 4));
		if (r == -1)
			ck_assert_uint_eq(kvs_fault_addr(kd, &valid), va);
	}
	kvs_close(kd);
	json_decref(t);
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
	SRunner *sr;
	int nf;

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, truncated, 0, 5);
	tcase_add_test(tc, minidump_cut_in_data);
	tcase_add_test(tc, minidump_headers);
	tcase_add_test(tc, elf_headers);
	tcase_add_test(tc, not_dumps);
	tcase_add_test(tc, wrong_kernel);
	tcase_add_loop_test(tc, bad_reads, 0, 5);
	suite_add_tcase(s, tc);
	uint64_t before[5], after;
	size_t i;
	for (i = 0; i < 5; i++)
		before[i] = sum_file(fixture_path(cores[i]));
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	/* Nothing may ever write to a dump. */
	for (i = 0; i < 5; i++) {
		after = sum_file(fixture_path(cores[i]));
		if (after != before[i]) {
			fprintf(stderr, "%s changed during the tests\n", cores[i]);
			nf++;
		}
	}
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
