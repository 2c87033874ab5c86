/*
 * check_kread.c - the bulk-read helpers of core/kread.h: krec_sort against a
 * plain stable insertion sort on ascending, descending, interleaved and
 * random records with repeated addresses; krec_sort_memo answering the same
 * input from its memo and any other input (one record changed, one more or
 * one fewer record, a memo that is all zero) with a fresh sort; krec_run's
 * cut at gaps and at the span.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kread.h"
#include "testutil.h"

#define NMAX 5000

/* The order a stable sort by address gives, by insertion: the oracle. */
static void
reference_sort(struct krec *r, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		struct krec t = r[i];
		for (j = i; j > 0 && r[j - 1].addr > t.addr; j--)
			r[j] = r[j - 1];
		r[j] = t;
	}
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t
next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

enum shape { ASCENDING, DESCENDING, BLOCKS, RANDOM, FEW_VALUES, SHAPES };

/* n records of a shape; item numbers the records in input order, so that a
 * result out of input order among equal addresses shows. */
static void
fill(struct krec *r, size_t n, enum shape s)
{
	size_t i;

	for (i = 0; i < n; i++) {
		switch (s) {
		case ASCENDING:
			r[i].addr = 0xfffff80000000000ULL + i * 8;
			break;
		case DESCENDING:
			r[i].addr = 0xfffff80000000000ULL + (n - i) * 8;
			break;
		case BLOCKS:            /* ascending groups of 4, groups descending */
			r[i].addr = 0xfffffe0000000000ULL + (n / 4 - i / 4) * 64 + (i % 4) * 8;
			break;
		case RANDOM:
			r[i].addr = next_rand();
			break;
		default:
			r[i].addr = 0x1000 + (next_rand() % 7) * 8;
			break;
		}
		r[i].item = (uint32_t)i;
		r[i].slot = (uint32_t)(i % 4);
	}
}

START_TEST(sort_matches_stable_reference)
{
	static struct krec r[NMAX], want[NMAX], tmp[NMAX];
	static const size_t sizes[] = { 0, 1, 2, 3, 17, 64, 1000, NMAX };
	size_t si;
	int s;

	for (s = 0; s < SHAPES; s++)
		for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
			size_t n = sizes[si];
			fill(r, n, (enum shape)s);
			memcpy(want, r, n * sizeof(*r));
			reference_sort(want, n);
			krec_sort(r, n, tmp);
			ck_assert_msg(memcmp(r, want, n * sizeof(*r)) == 0,
			    "shape %d, %zu records: not the stable order", s, n);
		}
}
END_TEST

START_TEST(memo_answers_only_the_same_input)
{
	static struct krec in[NMAX], r[NMAX], want[NMAX], tmp[NMAX];
	struct krec *memo = calloc(2 * NMAX + 3, sizeof(*memo));
	size_t n = 3000;
	int s;

	ck_assert_ptr_nonnull(memo);
	for (s = 0; s < SHAPES; s++) {
		fill(in, n, (enum shape)s);
		memcpy(want, in, n * sizeof(*in));
		reference_sort(want, n);
		/* First time (memo zero), then the same input twice. */
		for (int round = 0; round < 3; round++) {
			memcpy(r, in, n * sizeof(*in));
			krec_sort_memo(r, n, tmp, memo);
			ck_assert_msg(memcmp(r, want, n * sizeof(*r)) == 0, "shape %d round %d", s, round);
		}
		/* One record moved: the memo must not answer. */
		in[n / 2].addr = in[0].addr - 8;
		memcpy(want, in, n * sizeof(*in));
		reference_sort(want, n);
		memcpy(r, in, n * sizeof(*in));
		krec_sort_memo(r, n, tmp, memo);
		ck_assert_msg(memcmp(r, want, n * sizeof(*r)) == 0, "shape %d, one moved", s);
		/* Only a record's item differs. */
		in[n / 3].item ^= 0x40000000;
		memcpy(want, in, n * sizeof(*in));
		reference_sort(want, n);
		memcpy(r, in, n * sizeof(*in));
		krec_sort_memo(r, n, tmp, memo);
		ck_assert_msg(memcmp(r, want, n * sizeof(*r)) == 0, "shape %d, one item", s);
		/* One record fewer, then one more (the memo's count differs). */
		for (size_t m = n - 1; m <= n + 1; m += 2) {
			if (m > n)
				in[n] = in[0];
			memcpy(want, in, m * sizeof(*in));
			reference_sort(want, m);
			memcpy(r, in, m * sizeof(*in));
			krec_sort_memo(r, m, tmp, memo);
			ck_assert_msg(memcmp(r, want, m * sizeof(*r)) == 0, "shape %d, %zu records", s, m);
		}
	}
	free(memo);
}
END_TEST

START_TEST(run_cuts_at_gaps_and_span)
{
	struct krec r[6];
	uint64_t hi;
	size_t i;
	static const uint64_t a[6] = { 0x1000, 0x1008, 0x1010, 0x1050, 0x10a0, 0x3000 };

	for (i = 0; i < 6; i++) {
		r[i].addr = a[i];
		r[i].item = (uint32_t)i;
		r[i].slot = 0;
	}
	/* 0x1050 is 64 bytes past the end of 0x1010's record: still the run;
	 * 0x10a0 is 72 past 0x1058: a new one. */
	ck_assert_uint_eq(krec_run(r, 6, 0, 8, 4096, &hi), 4);
	ck_assert_uint_eq(hi, 0x1058);
	ck_assert_uint_eq(krec_run(r, 6, 4, 8, 4096, &hi), 5);
	ck_assert_uint_eq(hi, 0x10a8);
	/* A span of 24 bytes holds three records of 8. */
	ck_assert_uint_eq(krec_run(r, 6, 0, 8, 24, &hi), 3);
	ck_assert_uint_eq(hi, 0x1018);
	ck_assert_uint_eq(krec_run(r, 6, 5, 8, 4096, &hi), 6);
	ck_assert_uint_eq(hi, 0x3008);
}
END_TEST

/* Bit-fields of every width from every bit offset, each against a model
 * that walks the bits one by one. */
START_TEST(bitfields_against_bit_walk)
{
	uint8_t buf[16];
	unsigned off, width, i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(next_rand() | 0x81);
	for (off = 0; off < 40; off++)
		for (width = 1; width + off <= 64; width++) {
			struct kfield f = { .off = 2, .size = 8, .bit_size = width,
			    .bit_offset = off, .present = true };
			uint64_t want = 0;
			for (i = 0; i < width; i++) {
				unsigned bit = 16 + off + i;
				want |= (uint64_t)(buf[bit / 8] >> (bit % 8) & 1) << i;
			}
			ck_assert_msg(kfield_get_slow(buf, sizeof(buf), &f) == want,
			    "bit-field of %u bits at bit %u", width, off);
		}
}
END_TEST

/* A walk's bound: exactly max nodes pass, one more fails; a loop is
 * caught whatever its length and wherever it starts; the errors name the
 * list. */
START_TEST(walk_bound_and_loops)
{
	char err[KVS_ERRBUF_SIZE];
	kvs_t *kd = kvs_open(fixture_path("fbsd14/kernel"), fixture_path("fbsd14/vmcore.elf"),
	    KVS_O_NO_CACHE, err);
	struct kwalk w;
	uint64_t i, max, start, len;

	ck_assert_msg(kd != NULL, "%s", err);
	for (max = 1; max < 40; max++) {
		kwalk_init(&w, max);
		for (i = 0; i < max; i++)
			ck_assert_msg(kwalk_step(kd, &w, 0x1000 + i * 64, "test") == 0,
			    "node %llu of a walk bounded at %llu", (unsigned long long)i,
			    (unsigned long long)max);
		ck_assert_int_eq(kwalk_step(kd, &w, 0x1000 + max * 64, "test"), -1);
		ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "test list longer than"));
	}
	for (start = 0; start < 10; start++)
		for (len = 1; len < 20; len++) {
			kwalk_init(&w, 1000);
			int rc = 0;
			for (i = 0; i < 200 && rc == 0; i++) {
				uint64_t n = i < start ? i : start + (i - start) % len;
				rc = kwalk_step(kd, &w, 0x1000 + n * 64, "looped");
			}
			ck_assert_msg(rc == -1, "loop of %llu from node %llu not caught",
			    (unsigned long long)len, (unsigned long long)start);
			ck_assert_ptr_nonnull(strstr(kvs_geterr(kd), "looped list loops back"));
		}
	kvs_close(kd);
}
END_TEST

/* kread_sym_uint reads a variable at its type's width: an int whose next
 * four bytes are all ones in the image still reads as the generator's
 * mp_maxid. */
START_TEST(sym_uint_at_type_width)
{
	json_t *t = load_truth("fbsd14/truth.json");
	const char *copy = path_join(test_tmpdir(), "width.raw");
	char err[KVS_ERRBUF_SIZE];
	size_t len;
	uint8_t *img = read_file(fixture_path("fbsd14/mem.raw"), &len);
	uint64_t addr, size, pa, v = 0;

	ck_assert_ptr_nonnull(img);
	kvs_t *kd = kvs_open(fixture_path("fbsd14/kernel"), fixture_path("fbsd14/mem.raw"),
	    KVS_O_RAW | KVS_O_NO_CACHE, err);
	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_int_eq(kvs_symbol(kd, "mp_maxid", &addr, &size), 0);
	ck_assert_int_eq(kvs_kvtop(kd, addr, &pa), 0);
	kvs_close(kd);
	ck_assert_uint_le(pa + 8, len);
	memset(img + pa + 4, 0xff, 4);
	ck_assert_int_eq(write_file(copy, img, len), 0);
	kd = kvs_open(fixture_path("fbsd14/kernel"), copy, KVS_O_RAW | KVS_O_NO_CACHE, err);
	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_int_eq(kread_sym_uint(kd, "mp_maxid", &v), 0);
	ck_assert_uint_eq(v, jget(t, "mp_maxid"));
	kvs_close(kd);
	free(img);
	json_decref(t);
}
END_TEST

/* kvs_dump_bound: nodes a dump can hold, from the larger of its file size
 * and its dumped pages (a compressed dump holds more than its file), capped;
 * live memory and unknown sizes give the cap. */
START_TEST(dump_bound_from_size_and_pages)
{
	kvs_t *kd = calloc(1, sizeof(*kd));

	ck_assert_ptr_nonnull(kd);
	kd->info.page_size = 4096;
	kd->info.source_bytes = 10 * 4096;
	kd->info.dumped_pages = 1000;           /* compressed: 100x its file */
	ck_assert_uint_eq(kvs_dump_bound(kd, 64, 1000000), 1000 * 4096 / 64 + 1);
	ck_assert_uint_eq(kvs_dump_bound(kd, 64, 500), 500);
	kd->info.dumped_pages = 2;              /* fewer pages than the file */
	ck_assert_uint_eq(kvs_dump_bound(kd, 64, 1000000), 10 * 4096 / 64 + 1);
	kd->info.page_size = 0;                 /* unknown: 4 KiB pages */
	kd->info.dumped_pages = 1000;
	ck_assert_uint_eq(kvs_dump_bound(kd, 64, 1000000), 1000 * 4096 / 64 + 1);
	kd->info.live = true;
	ck_assert_uint_eq(kvs_dump_bound(kd, 64, 777), 777);
	kd->info.live = false;
	ck_assert_uint_eq(kvs_dump_bound(kd, 0, 777), 777);
	free(kd);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("kread");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, sort_matches_stable_reference);
	tcase_add_test(tc, memo_answers_only_the_same_input);
	tcase_add_test(tc, run_cuts_at_gaps_and_span);
	tcase_add_test(tc, bitfields_against_bit_walk);
	tcase_add_test(tc, walk_bound_and_loops);
	tcase_add_test(tc, sym_uint_at_type_width);
	tcase_add_test(tc, dump_bound_from_size_and_pages);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
