/*
 * check_tui_model.c - kvmtop's model without curses: deltas and rates from
 * history kept in caller slots, sorting by every column, filtering, a failed
 * refresh keeping the last good rows, and no reallocation per tick; the
 * totals of a filtered view, the columns that fit a width, and the per-CPU
 * figures of UMA zones.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "memstat_internal.h"
#include "memview.h"
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

/* A filter's totals are those of the rows it shows (issue 27): the header
 * says "filtered: N of M", with nall the M. */
START_TEST(filter_totals)
{
	struct model m;
	uint64_t r1[] = { 100, 400, 300, 200 }, u1[] = { 40, 10, 30, 20 };

	ck_assert_int_eq(model_init(&m), 0);
	fake_refresh(&m, r1, u1, 4);
	model_update(&m, true, NULL, 1.0, 0.1);
	ck_assert_uint_eq(m.nall, 4);
	ck_assert_uint_eq(m.total_requests, 1000);
	ck_assert_uint_eq(m.total_inuse, 100);
	model_set_filter(&m, "a");                        /* alpha, bravo, charlie, delta */
	ck_assert_uint_eq(m.nrows, 4);
	model_set_filter(&m, "ar");                       /* charlie */
	ck_assert_uint_eq(m.nrows, 1);
	ck_assert_uint_eq(m.nall, 4);
	ck_assert_uint_eq(m.total_requests, 300);
	ck_assert_uint_eq(m.total_inuse, 30);
	ck_assert_uint_eq(m.total_bytes, 30 * 64);
	model_set_filter(&m, "nosuch");
	ck_assert_uint_eq(m.total_requests, 0);
	ck_assert_uint_eq(m.total_bytes, 0);
	model_set_filter(&m, "");
	ck_assert_uint_eq(m.total_requests, 1000);
	model_free(&m);
}
END_TEST

/* The columns that fit a width: never wider than it (the rest-of-line
 * SIZES counted at its least), the name always first, the memory in use
 * kept while it fits with the name (and address), every column at 200. */
START_TEST(columns_fit_width)
{
	static const int alloc[] = { ALLOCATOR_MALLOC, ALLOCATOR_UMA, ALLOCATOR_SLAB };
	static const int widths[] = { 30, 40, 60, 79, 80, 100, 120, 200 };
	struct model m;
	size_t a, k, i;
	int addr;

	ck_assert_int_eq(model_init(&m), 0);
	for (a = 0; a < 3; a++)
		for (addr = 0; addr < 2; addr++)
			for (k = 0; k < sizeof(widths) / sizeof(widths[0]); k++) {
				const struct column *all, *fit;
				size_t nall, n;
				int sum = 0, w = widths[k];
				bool mem = false, ad = false;
				m.allocator = alloc[a];
				m.show_addr = addr != 0;
				nall = model_columns(&m, &all);
				n = model_fit_columns(&m, w, &fit);
				ck_assert_uint_ge(n, 1);
				ck_assert_int_eq(fit[0].col, COL_NAME);
				for (i = 0; i < n; i++) {
					sum += fit[i].width ? fit[i].width : COL_REST_MIN;
					mem |= fit[i].col == COL_MEMUSE || fit[i].col == COL_CACHESIZE;
					ad |= fit[i].col == COL_ADDR;
				}
				ck_assert_msg(sum <= w, "allocator %d addr %d: %d columns wide at %d", alloc[a],
				    addr, sum, w);
				if (w >= fit[0].width + 10 + (addr ? 19 : 0))
					ck_assert_msg(mem, "allocator %d addr %d width %d: memory left out",
					    alloc[a], addr, w);
				if (addr && w >= fit[0].width + 19)
					ck_assert(ad);
				if (w == 200)
					ck_assert_uint_eq(n, nall);
			}
	/* 80 columns: the zones keep vmstat -z's figures and lose the deltas;
	 * the malloc types keep every column. */
	m.show_addr = false;
	m.allocator = ALLOCATOR_MALLOC;
	{
		const struct column *all, *fit;
		ck_assert_uint_eq(model_fit_columns(&m, 80, &fit), model_columns(&m, &all));
		m.allocator = ALLOCATOR_UMA;
		size_t n = model_fit_columns(&m, 80, &fit);
		bool fail = false, dused = false;
		for (i = 0; i < n; i++) {
			fail |= fit[i].col == COL_FAIL;
			dused |= fit[i].col == COL_DINUSE;
		}
		ck_assert(fail && !dused);
	}
	model_free(&m);
}
END_TEST

/* UMA zones have per-CPU figures: the items each CPU caches (the list's
 * per-CPU free counts) and each domain's free items (issue 27: the
 * per-CPU screen was empty for zones). */
START_TEST(uma_percpu)
{
	struct model m;
	struct memory_type *mt;
	struct percpu_line l[16];
	const char *const *ti;
	int is_new;
	size_t n;

	ck_assert_int_eq(model_init(&m), 0);
	ck_assert_int_eq(mtl_refresh_begin(m.list, ALLOCATOR_UMA, 4), 0);
	mt = mtl_upsert(m.list, ALLOCATOR_UMA, 0x5000, &is_new);
	ck_assert_ptr_nonnull(mt);
	mtl_set_name(mt, "mbuf", 0);
	mt->mt_size = 256;
	mt->mt_count = 100;
	ck_assert(mt->mt_percpu_valid);
	mt->mt_percpu_cache[0].mtp_free = 7;
	mt->mt_percpu_cache[2].mtp_free = 9;                /* CPUs 1 and 3: none */
	mt->mt_ndomains = 2;
	mt->mt_dom_zonefree[0] = 11;
	mt->mt_dom_kegfree[1] = 13;
	mtl_refresh_commit(m.list, ALLOCATOR_UMA);
	model_set_allocator(&m, ALLOCATOR_UMA);
	model_update(&m, true, NULL, 1.0, 0.1);
	ck_assert_uint_eq(m.nrows, 1);

	ck_assert_uint_eq(model_percpu_titles(ALLOCATOR_UMA, &ti), 4);
	ck_assert_str_eq(ti[0], "CACHED");
	n = model_percpu(m.rows[0].mt, l, 16);
	ck_assert_uint_eq(n, 4);                            /* CPUs 0 and 2, two domains */
	ck_assert(!l[0].domain && l[0].id == 0 && l[0].v[0] == 7 && l[0].v[1] == 2);
	ck_assert(!l[1].domain && l[1].id == 2 && l[1].v[0] == 9 && l[1].v[1] == 3);
	ck_assert(l[2].domain && l[2].id == 0 && l[2].v[2] == 11 && l[2].v[3] == 0);
	ck_assert(l[3].domain && l[3].id == 1 && l[3].v[2] == 0 && l[3].v[3] == 13);
	ck_assert_uint_eq(model_percpu(m.rows[0].mt, l, 1), 1);   /* bounded */
	model_free(&m);
}
END_TEST

static struct kvs_counter
ctr(const char *group, const char *name, uint64_t v, kvs_unit_t unit, unsigned flags)
{
	struct kvs_counter c = { .group = group, .value = v, .unit = unit, .flags = flags };
	snprintf(c.name, sizeof(c.name), "%s", name);
	snprintf(c.key, sizeof(c.key), "%s", name);
	return c;
}

/* The Linux parts: each the sum of its lines, "other" the rest of
 * MemTotal; an unreadable line counts nothing; the bar's cells follow the
 * shares and fill its width exactly. */
START_TEST(memview_linux_parts)
{
	struct kvs_counter c[] = {
		ctr("meminfo", "MemTotal", 1000, KVS_UNIT_KIB, 0),
		ctr("meminfo", "MemFree", 400, KVS_UNIT_KIB, 0),
		ctr("meminfo", "Buffers", 20, KVS_UNIT_KIB, 0),
		ctr("meminfo", "Cached", 180, KVS_UNIT_KIB, 0),
		ctr("meminfo", "AnonPages", 100, KVS_UNIT_KIB, 0),
		ctr("meminfo", "Slab", 100, KVS_UNIT_KIB, 0),
		ctr("meminfo", "PageTables", 7, KVS_UNIT_KIB, KVS_CF_UNREADABLE),
		ctr("meminfo", "KernelStack", 1, KVS_UNIT_KIB, 0),
		ctr("meminfo", "HugePages_Total", 50, KVS_UNIT_COUNT, 0),
	};
	struct memview mv;
	char bar[101];
	int i, counts[128] = { 0 };

	ck_assert_int_eq(memview_build(&mv, c, sizeof(c) / sizeof(c[0]), true), 0);
	ck_assert(mv.have && mv.incomplete);
	ck_assert_str_eq(mv.family, "Linux");
	ck_assert_uint_eq(mv.total_kib, 1000);
	for (i = 0; i < mv.nparts; i++) {
		if (strcmp(mv.part[i].name, "page cache") == 0)
			ck_assert_uint_eq(mv.part[i].kib, 200);
		if (strcmp(mv.part[i].name, "page tables") == 0)
			ck_assert_uint_eq(mv.part[i].kib, 0);
		if (strcmp(mv.part[i].name, "other") == 0)
			ck_assert_uint_eq(mv.part[i].kib, 1000 - 400 - 200 - 100 - 100 - 1);
	}
	memview_bar(&mv, bar, 100);
	ck_assert_uint_eq(strlen(bar), 100);
	for (i = 0; i < 100; i++)
		counts[(unsigned char)bar[i]]++;
	ck_assert_int_eq(counts['F'], 40);
	ck_assert_int_eq(counts['C'], 20);
	ck_assert_int_eq(counts['A'], 10);
	ck_assert_int_eq(counts['S'], 10);
	ck_assert_int_eq(counts['K'], 1);       /* 0.1%: one cell at least */
	ck_assert_int_eq(counts['T'], 0);
	ck_assert_int_eq(counts['.'], 19);      /* 19.9% less the cell K took */
	memview_bar(&mv, bar, 3);               /* narrower than the parts */
	ck_assert_uint_eq(strlen(bar), 3);
}
END_TEST

START_TEST(memview_freebsd_and_none)
{
	struct kvs_counter c[] = {
		ctr("vm", "v_page_count", 300, KVS_UNIT_COUNT, 0),
		ctr("vm", "v_page_size", 4096, KVS_UNIT_BYTES, 0),
		ctr("queues", "Active", 100, KVS_UNIT_KIB, 0),
		ctr("queues", "Inact", 200, KVS_UNIT_KIB, 0),
		ctr("queues", "Wired", 300, KVS_UNIT_KIB, 0),
		ctr("queues", "Free", 400, KVS_UNIT_KIB, 0),
	};
	struct memview mv;

	ck_assert_int_eq(memview_build(&mv, c, sizeof(c) / sizeof(c[0]), false), 0);
	ck_assert_str_eq(mv.family, "FreeBSD");
	ck_assert_uint_eq(mv.total_kib, 1200);          /* 300 pages of 4 KiB */
	ck_assert_str_eq(mv.part[mv.nparts - 1].name, "other");
	ck_assert_uint_eq(mv.part[mv.nparts - 1].kib, 200);
	ck_assert_int_eq(memview_build(&mv, c, 2, false), -1);    /* no total */
	ck_assert(!mv.have);
	ck_assert(strstr(mv.error, "total") != NULL);
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
	tcase_add_test(tc, filter_totals);
	tcase_add_test(tc, columns_fit_width);
	tcase_add_test(tc, uma_percpu);
	tcase_add_test(tc, memview_linux_parts);
	tcase_add_test(tc, memview_freebsd_and_none);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
