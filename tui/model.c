/* model.c - see model.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static const char *const titles[COL__COUNT] = {
	[COL_NAME] = "TYPE", [COL_INUSE] = "INUSE", [COL_MEMUSE] = "MEMUSE",
	[COL_REQUESTS] = "REQUESTS", [COL_DINUSE] = "dINUSE", [COL_DMEM] = "dMEM",
	[COL_RATE] = "REQ/s", [COL_SIZES] = "SIZES",
};

const char *
col_title(enum col c)
{
	return (unsigned)c < COL__COUNT ? titles[c] : "?";
}

int
model_init(struct model *m)
{
	memset(m, 0, sizeof(*m));
	m->list = memstat_mtl_alloc();
	m->sort = COL_MEMUSE;
	m->allocator = ALLOCATOR_MALLOC;
	return m->list == NULL ? -1 : 0;
}

void
model_free(struct model *m)
{
	memstat_mtl_free(m->list);
	free(m->rows);
	memset(m, 0, sizeof(*m));
}

static const struct model *sort_model;

static int
cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? 1 : a > b ? -1 : 0;      /* largest first */
}

static int
cmp_i64(int64_t a, int64_t b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

static int
cmp_rows(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	int r = 0;

	switch (sort_model->sort) {
	case COL_NAME:
		r = -strcmp(memstat_get_name(a->mt), memstat_get_name(b->mt));
		break;
	case COL_INUSE:
		r = cmp_u64(memstat_get_count(a->mt), memstat_get_count(b->mt));
		break;
	case COL_MEMUSE:
		r = cmp_u64(memstat_get_bytes(a->mt), memstat_get_bytes(b->mt));
		break;
	case COL_REQUESTS:
		r = cmp_u64(memstat_get_numallocs(a->mt), memstat_get_numallocs(b->mt));
		break;
	case COL_DINUSE:
		r = cmp_i64(a->d_inuse, b->d_inuse);
		break;
	case COL_DMEM:
		r = cmp_i64(a->d_bytes, b->d_bytes);
		break;
	case COL_RATE:
		r = a->rate < b->rate ? 1 : a->rate > b->rate ? -1 : 0;
		break;
	default:
		r = cmp_u64(memstat_get_sizemask(a->mt), memstat_get_sizemask(b->mt));
		break;
	}
	if (sort_model->sort == COL_NAME)
		r = -r;                         /* names ascend */
	if (r == 0)
		r = strcmp(memstat_get_name(a->mt), memstat_get_name(b->mt));
	if (r == 0)
		r = memstat_get_kaddr(a->mt) < memstat_get_kaddr(b->mt) ? -1 : 1;
	return sort_model->reverse ? -r : r;
}

void
model_rebuild(struct model *m)
{
	struct memory_type *mt;
	size_t n = 0;

	/* Totals cover the whole view (all rows of this allocator, unfiltered). */
	m->total_bytes = m->total_inuse = m->total_requests = 0;
	m->total_rate = 0;
	for (mt = memstat_mtl_first(m->list); mt != NULL; mt = memstat_mtl_next(mt)) {
		double rate;
		uint64_t rb;

		if (memstat_get_vanished(mt) || memstat_get_allocator(mt) != m->allocator)
			continue;
		rb = memstat_get_caller_uint64(mt, SLOT_RATE);
		memcpy(&rate, &rb, sizeof(rate));
		m->total_bytes += memstat_get_bytes(mt);
		m->total_inuse += memstat_get_count(mt);
		m->total_requests += memstat_get_numallocs(mt);
		m->total_rate += rate;
		if (m->filter[0] != '\0' && strstr(memstat_get_name(mt), m->filter) == NULL)
			continue;
		if (n == m->cap) {
			size_t cap = m->cap ? m->cap * 2 : 256;
			struct row *r = realloc(m->rows, cap * sizeof(*r));
			if (r == NULL)
				break;
			m->rows = r;
			m->cap = cap;
		}
		m->rows[n].mt = mt;
		/* Deltas were stored in the entry's caller slots by model_update. */
		m->rows[n].d_inuse = (int64_t)memstat_get_caller_uint64(mt, SLOT_DINUSE);
		m->rows[n].d_bytes = (int64_t)memstat_get_caller_uint64(mt, SLOT_DBYTES);
		memcpy(&m->rows[n].rate, &(uint64_t){ memstat_get_caller_uint64(mt, SLOT_RATE) }, sizeof(double));
		n++;
	}
	m->nrows = n;
	sort_model = m;
	qsort(m->rows, n, sizeof(*m->rows), cmp_rows);
	sort_model = NULL;
}

void
model_update(struct model *m, bool ok, const char *err, double now, double cost_ms)
{
	struct memory_type *mt;
	double dt = m->refreshes > 0 ? now - m->last_time : 0;

	m->refresh_ms = cost_ms;
	if (!ok) {
		/* The list kept its previous contents: show them under a banner. */
		m->failed = true;
		snprintf(m->error, sizeof(m->error), "%s", err ? err : "refresh failed");
		return;
	}
	m->failed = false;
	m->error[0] = '\0';
	for (mt = memstat_mtl_first(m->list); mt != NULL; mt = memstat_mtl_next(mt)) {
		uint64_t req = memstat_get_numallocs(mt), cnt = memstat_get_count(mt);
		uint64_t bytes = memstat_get_bytes(mt);
		bool seen = memstat_get_caller_uint64(mt, SLOT_SEEN) != 0;
		int64_t di = seen ? (int64_t)(cnt - memstat_get_caller_uint64(mt, SLOT_PREV_COUNT)) : 0;
		int64_t db = seen ? (int64_t)(bytes - memstat_get_caller_uint64(mt, SLOT_PREV_BYTES)) : 0;
		double rate = seen && dt > 0 ?
		    (double)(int64_t)(req - memstat_get_caller_uint64(mt, SLOT_PREV_REQ)) / dt : 0;
		uint64_t rbits;

		if (memstat_get_vanished(mt))
			continue;
		memcpy(&rbits, &rate, sizeof(rbits));
		memstat_set_caller_uint64(mt, SLOT_DINUSE, (uint64_t)di);
		memstat_set_caller_uint64(mt, SLOT_DBYTES, (uint64_t)db);
		memstat_set_caller_uint64(mt, SLOT_RATE, rbits);
		memstat_set_caller_uint64(mt, SLOT_PREV_REQ, req);
		memstat_set_caller_uint64(mt, SLOT_PREV_COUNT, cnt);
		memstat_set_caller_uint64(mt, SLOT_PREV_BYTES, bytes);
		memstat_set_caller_uint64(mt, SLOT_SEEN, 1);
	}
	m->refreshes++;
	m->last_time = now;
	model_rebuild(m);
}

void
model_set_sort(struct model *m, enum col c)
{
	if (m->sort == c)
		m->reverse = !m->reverse;
	else {
		m->sort = c;
		m->reverse = false;
	}
	model_rebuild(m);
}

void
model_set_filter(struct model *m, const char *substr)
{
	snprintf(m->filter, sizeof(m->filter), "%s", substr ? substr : "");
	model_rebuild(m);
}
