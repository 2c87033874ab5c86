/*
 * check_tui_model.c - kvmtop's model without curses: deltas and rates from
 * history kept in caller slots, sorting by every column, filtering, a failed
 * refresh keeping the last good rows, and no reallocation per tick.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "memstat_internal.h"
#include "model.h"
#include "testutil.h"

static const char *const names[] = { "alpha", "bravo", "charlie", "delta" };

/* A refresh as the walker would do it: type i gets req[i] requests. */
static void
fake_refresh(struct model *m, const uint64_t *req, const uint64_t *inuse, size_t n)
{
	size_t i;

	ck_assert_int_eq(mtl_refresh_begin(m->list, ALLOCATOR_MALLOC, 2), 0);
	for (i = 0; i < n; i++) {
		int is_new;
		struct memory_type *mt = mtl_upsert(m->list, ALLOCATOR_MALLOC, 0x1000 * (i + 1), &is_new);
		if (is_new)
			mtl_set_name(mt, names[i], 0);
		mt->mt_numallocs = req[i];
		mt->mt_count = inuse[i];
		mt->mt_numfrees = req[i] - inuse[i];
		mt->mt_bytes = inuse[i] * 64;
	}
	mtl_refresh_commit(m->list, ALLOCATOR_MALLOC);
}

START_TEST(deltas_rates_history)
{
	struct model m;
	uint64_t r1[] = { 100, 200, 300, 400 }, u1[] = { 10, 20, 30, 40 };
	uint64_t r2[] = { 150, 200, 310, 800 }, u2[] = { 15, 20, 25, 40 };
	size_t i;

	ck_assert_int_eq(model_init(&m), 0);
	fake_refresh(&m, r1, u1, 4);
	model_update(&m, true, NULL, 10.0, 0.1);
	for (i = 0; i < m.nrows; i++) {
		ck_assert_int_eq(m.rows[i].d_inuse, 0);       /* no history yet */
		ck_assert(m.rows[i].rate == 0);
	}
	fake_refresh(&m, r2, u2, 4);
	model_update(&m, true, NULL, 12.0, 0.1);          /* 2 s later */
	model_set_sort(&m, COL_NAME);
	ck_assert_str_eq(memstat_get_name(m.rows[0].mt), "alpha");
	ck_assert_int_eq(m.rows[0].d_inuse, 5);
	ck_assert(m.rows[0].rate == 25.0);
	ck_assert_int_eq(m.rows[2].d_inuse, -5);          /* charlie shrank */
	ck_assert_int_eq(m.rows[2].d_bytes, -5 * 64);
	ck_assert(m.rows[3].rate == 200.0);
	ck_assert_uint_eq(m.total_requests, 150 + 200 + 310 + 800);
	ck_assert(m.total_rate == 25.0 + 0 + 5.0 + 200.0);
	/* Rates settle to zero when nothing moves. */
	fake_refresh(&m, r2, u2, 4);
	model_update(&m, true, NULL, 13.0, 0.1);
	for (i = 0; i < m.nrows; i++)
		ck_assert(m.rows[i].rate == 0);
	model_free(&m);
}
END_TEST

START_TEST(sort_and_filter)
{
	struct model m;
	uint64_t r1[] = { 100, 400, 300, 200 }, u1[] = { 40, 10, 30, 20 };

	ck_assert_int_eq(model_init(&m), 0);
	fake_refresh(&m, r1, u1, 4);
	model_update(&m, true, NULL, 1.0, 0.1);
	ck_assert_int_eq(m.sort, COL_MEMUSE);             /* default: biggest first */
	ck_assert_str_eq(memstat_get_name(m.rows[0].mt), "alpha");
	model_set_sort(&m, COL_REQUESTS);
	ck_assert_str_eq(memstat_get_name(m.rows[0].mt), "bravo");
	model_set_sort(&m, COL_REQUESTS);                 /* again: reversed */
	ck_assert_str_eq(memstat_get_name(m.rows[0].mt), "alpha");
	model_set_sort(&m, COL_INUSE);
	ck_assert_str_eq(memstat_get_name(m.rows[3].mt), "bravo");
	model_set_sort(&m, COL_NAME);
	ck_assert_str_eq(memstat_get_name(m.rows[0].mt), "alpha");
	ck_assert_str_eq(memstat_get_name(m.rows[3].mt), "delta");
	model_set_filter(&m, "ar");
	ck_assert_uint_eq(m.nrows, 1);
	ck_assert_str_eq(memstat_get_name(m.rows[0].mt), "charlie");
	model_set_filter(&m, "");
	ck_assert_uint_eq(m.nrows, 4);
	model_free(&m);
}
END_TEST

START_TEST(failed_refresh_keeps_rows)
{
	struct model m;
	uint64_t r1[] = { 100, 400 }, u1[] = { 40, 10 };

	ck_assert_int_eq(model_init(&m), 0);
	fake_refresh(&m, r1, u1, 2);
	model_update(&m, true, NULL, 1.0, 0.1);
	model_update(&m, false, "reading 8 bytes at 0x1000: page not in dump", 2.0, 0.1);
	ck_assert(m.failed);
	ck_assert_ptr_nonnull(strstr(m.error, "page not in dump"));
	ck_assert_uint_eq(m.nrows, 2);
	ck_assert_uint_eq(memstat_get_numallocs(m.rows[0].mt) + memstat_get_numallocs(m.rows[1].mt), 500);
	fake_refresh(&m, r1, u1, 2);
	model_update(&m, true, NULL, 3.0, 0.1);
	ck_assert(!m.failed);
	model_free(&m);
}
END_TEST

START_TEST(no_reallocation_per_tick)
{
	struct model m;
	uint64_t r[] = { 1, 2, 3, 4 }, u[] = { 1, 1, 1, 1 };
	struct row *rows;
	unsigned long ev;
	int k;

	ck_assert_int_eq(model_init(&m), 0);
	fake_refresh(&m, r, u, 4);
	model_update(&m, true, NULL, 1.0, 0.1);
	rows = m.rows;
	ev = m.list->mtl_alloc_events;
	for (k = 0; k < 50; k++) {
		r[k % 4] += 7;
		fake_refresh(&m, r, u, 4);
		model_update(&m, true, NULL, 2.0 + k, 0.1);
	}
	ck_assert_ptr_eq(m.rows, rows);
	ck_assert_uint_eq(m.list->mtl_alloc_events, ev);
	model_free(&m);
}
END_TEST

/* An empty list (no kernel types yet, or a filter matching nothing): no
 * rows, and no qsort over a NULL array (UBSan's nonnull check, issue 14). */
START_TEST(empty_list)
{
	struct model m;

	ck_assert_int_eq(model_init(&m), 0);
	ck_assert_ptr_null(m.rows);
	model_update(&m, true, NULL, 1.0, 0.1);
	ck_assert_uint_eq(m.nrows, 0);
	model_set_sort(&m, COL_NAME);
	model_set_allocator(&m, ALLOCATOR_UMA);
	ck_assert_uint_eq(m.nrows, 0);
	ck_assert_int_eq(m.sort, COL_NAME);             /* zones have names: kept */
	model_set_allocator(&m, ALLOCATOR_MALLOC);
	model_set_sort(&m, COL_SIZES);
	model_set_allocator(&m, ALLOCATOR_UMA);
	ck_assert_int_eq(m.sort, COL_MEMUSE);           /* zones have no SIZES */
	model_set_allocator(&m, ALLOCATOR_SLAB);
	ck_assert_int_eq(m.sort, COL_CACHESIZE);        /* slabtop's default */
	model_free(&m);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("tui_model");
	TCase *tc = tcase_create("model");

	tcase_add_test(tc, deltas_rates_history);
	tcase_add_test(tc, sort_and_filter);
	tcase_add_test(tc, failed_refresh_keeps_rows);
	tcase_add_test(tc, no_reallocation_per_tick);
	tcase_add_test(tc, empty_list);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
