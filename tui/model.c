/* model.c - see model.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static const char *const titles[COL__COUNT] = {
	[COL_NAME] = "TYPE", [COL_INUSE] = "INUSE", [COL_MEMUSE] = "MEMUSE",
	[COL_REQUESTS] = "REQUESTS", [COL_DINUSE] = "dINUSE", [COL_DMEM] = "dMEM",
	[COL_RATE] = "REQ/s", [COL_SIZES] = "SIZES", [COL_ADDR] = "ADDRESS",
	[COL_SIZE] = "SIZE", [COL_FREE] = "FREE", [COL_FAIL] = "FAIL", [COL_OBJS] = "OBJS",
	[COL_ACTIVE] = "ACTIVE", [COL_USE] = "USE%", [COL_OBJSIZE] = "OBJSIZE",
	[COL_SLABS] = "SLABS", [COL_OBJPERSLAB] = "OBJ/SLAB", [COL_CACHESIZE] = "CACHE(K)",
};

/*
 * The views.  Memory is in KiB everywhere in a column (MEMUSE rounded up as
 * vmstat -m does, the delta with one decimal), so a column never mixes
 * units.  Zones follow vmstat -z; slab caches follow slabtop (OBJS, ACTIVE,
 * USE, OBJ SIZE, SLABS, OBJ/SLAB, CACHE SIZE) plus the exact in-use count.
 * Each table has the ADDRESS column second; it is skipped unless shown.
 */
/* drop: the order in which a narrow screen gives columns up (highest
 * first): the deltas, then the rarer counters, the memory in use next to
 * last, the address (asked for) last; never the name. */
static const struct column malloc_cols[] = {
	{ COL_NAME, "TYPE", 18, true, 0 }, { COL_ADDR, "ADDRESS", 19, false, 1 },
	{ COL_INUSE, "INUSE", 8, false, 3 }, { COL_MEMUSE, "MEMUSE(K)", 10, false, 2 },
	{ COL_REQUESTS, "REQUESTS", 10, false, 4 }, { COL_DINUSE, "dINUSE", 8, false, 8 },
	{ COL_DMEM, "dMEM(K)", 9, false, 7 }, { COL_RATE, "REQ/s", 8, false, 5 },
	{ COL_SIZES, "SIZES", 0, true, 6 },
};
static const struct column uma_cols[] = {
	{ COL_NAME, "ZONE", 18, true, 0 }, { COL_ADDR, "ADDRESS", 19, false, 1 },
	{ COL_SIZE, "SIZE", 7, false, 4 }, { COL_INUSE, "USED", 9, false, 3 },
	{ COL_FREE, "FREE", 8, false, 5 }, { COL_MEMUSE, "MEMUSE(K)", 10, false, 2 },
	{ COL_REQUESTS, "REQUESTS", 10, false, 6 }, { COL_FAIL, "FAIL", 6, false, 8 },
	{ COL_DINUSE, "dUSED", 8, false, 10 }, { COL_DMEM, "dMEM(K)", 9, false, 9 },
	{ COL_RATE, "REQ/s", 8, false, 7 },
};
static const struct column slab_cols[] = {
	{ COL_NAME, "CACHE", 20, true, 0 }, { COL_ADDR, "ADDRESS", 19, false, 1 },
	{ COL_OBJS, "OBJS", 9, false, 3 }, { COL_ACTIVE, "ACTIVE", 9, false, 4 },
	{ COL_USE, "USE%", 5, false, 5 }, { COL_OBJSIZE, "OBJSIZE", 8, false, 6 },
	{ COL_SLABS, "SLABS", 8, false, 7 }, { COL_OBJPERSLAB, "OBJ/SLAB", 9, false, 8 },
	{ COL_CACHESIZE, "CACHE(K)", 10, false, 2 }, { COL_INUSE, "INUSE", 9, false, 9 },
	{ COL_DINUSE, "dINUSE", 8, false, 10 },
};

size_t
model_columns(const struct model *m, const struct column **out)
{
	/* Without the address: a copy of the table less its second entry. */
	static struct column noaddr[3][16];
	const struct column *t;
	size_t n, k;
	int v;

	if (m->allocator == ALLOCATOR_UMA) {
		t = uma_cols, n = sizeof(uma_cols) / sizeof(uma_cols[0]), v = 1;
	} else if (m->allocator == ALLOCATOR_SLAB) {
		t = slab_cols, n = sizeof(slab_cols) / sizeof(slab_cols[0]), v = 2;
	} else {
		t = malloc_cols, n = sizeof(malloc_cols) / sizeof(malloc_cols[0]), v = 0;
	}
	if (m->show_addr) {
		*out = t;
		return n;
	}
	noaddr[v][0] = t[0];
	for (k = 2; k < n; k++)
		noaddr[v][k - 1] = t[k];
	*out = noaddr[v];
	return n - 1;
}

size_t
model_fit_columns(const struct model *m, int width, const struct column **out)
{
	static struct column fit[16];
	const struct column *cols;
	size_t n = model_columns(m, &cols), i, k;
	bool keep[16];

	for (i = 0; i < n; i++)
		keep[i] = true;
	for (;;) {
		int sum = 0, worst = 0;
		size_t wi = 0;
		for (i = 0; i < n; i++)
			if (keep[i]) {
				sum += cols[i].width ? cols[i].width : COL_REST_MIN;
				if (cols[i].drop > worst) {
					worst = cols[i].drop;
					wi = i;
				}
			}
		if (sum <= width || worst == 0)
			break;
		keep[wi] = false;
	}
	for (i = k = 0; i < n; i++)
		if (keep[i])
			fit[k++] = cols[i];
	*out = fit;
	return k;
}

static const char *const percpu_titles[3][4] = {
	{ "ALLOCED", "FREED", "ALLOCS", "FREES" },
	{ "CACHED", "CACHED(K)", "ZONEFREE", "KEGFREE" },
	{ "FREE", "FREE(K)", "", "" },
};

size_t
model_percpu_titles(int allocator, const char *const **titles)
{
	int v = allocator == ALLOCATOR_UMA ? 1 : allocator == ALLOCATOR_SLAB ? 2 : 0;

	*titles = percpu_titles[v];
	return v == 2 ? 2 : 4;
}

size_t
model_percpu(const struct memory_type *mt, struct percpu_line *out, size_t max)
{
	unsigned c, maxc = memstat_get_maxcpus(mt), d;
	int a = memstat_get_allocator(mt);
	uint64_t size = a == ALLOCATOR_SLAB ? memstat_get_rsize(mt) : memstat_get_size(mt);
	size_t n = 0;

	for (c = 0; c < maxc && n < max; c++) {
		struct percpu_line *l = &out[n];
		memset(l, 0, sizeof(*l));
		l->id = c;
		if (a == ALLOCATOR_MALLOC) {
			l->v[0] = memstat_get_percpu_memalloced(mt, (int)c);
			l->v[1] = memstat_get_percpu_memfreed(mt, (int)c);
			l->v[2] = memstat_get_percpu_numallocs(mt, (int)c);
			l->v[3] = memstat_get_percpu_numfrees(mt, (int)c);
			if (l->v[2] == 0 && l->v[3] == 0)
				continue;
		} else {
			/* The items the CPU holds, and their memory in KiB. */
			l->v[0] = memstat_get_percpu_free(mt, (int)c);
			l->v[1] = (l->v[0] * size + 1023) / 1024;
			if (l->v[0] == 0)
				continue;
		}
		n++;
	}
	if (a == ALLOCATOR_UMA)
		for (d = 0; d < memstat_get_ndomains(mt) && n < max; d++) {
			struct percpu_line *l = &out[n];
			memset(l, 0, sizeof(*l));
			l->id = d;
			l->domain = true;
			l->v[2] = memstat_get_domain_zonefree(mt, d);
			l->v[3] = memstat_get_domain_kegfree(mt, d);
			n++;
		}
	return n;
}

const char *
model_col_title(const struct model *m, enum col c)
{
	const struct column *cols;
	size_t n = model_columns(m, &cols), i;

	for (i = 0; i < n; i++)
		if (cols[i].col == c)
			return cols[i].title;
	return col_title(c);
}

static bool
shown(const struct model *m, enum col c)
{
	const struct column *cols;
	size_t n = model_columns(m, &cols), i;

	for (i = 0; i < n; i++)
		if (cols[i].col == c)
			return true;
	return false;
}

void
model_set_allocator(struct model *m, int allocator)
{
	m->allocator = allocator;
	if (!shown(m, m->sort)) {
		m->sort = allocator == ALLOCATOR_SLAB ? COL_CACHESIZE : COL_MEMUSE;
		m->reverse = false;
	}
	model_rebuild(m);
}

/* slabtop's figures for a cache. */
static uint64_t
slab_cachesize(const struct memory_type *mt)
{
	return memstat_get_slab_numslabs(mt) * memstat_get_slab_pagesperslab(mt) * 4096;
}

static uint64_t
slab_use(const struct memory_type *mt)
{
	uint64_t o = memstat_get_slab_numobjs(mt);

	return o ? memstat_get_slab_active(mt) * 100 / o : 0;
}

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
cmp_rows(const struct model *m, const struct row *a, const struct row *b)
{
	int r = 0;

	switch (m->sort) {
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
	case COL_ADDR:
		r = -cmp_u64(memstat_get_kaddr(a->mt), memstat_get_kaddr(b->mt));
		break;
	case COL_SIZE:
		r = cmp_u64(memstat_get_size(a->mt), memstat_get_size(b->mt));
		break;
	case COL_FREE:
		r = cmp_u64(memstat_get_free(a->mt), memstat_get_free(b->mt));
		break;
	case COL_FAIL:
		r = cmp_u64(memstat_get_failures(a->mt), memstat_get_failures(b->mt));
		break;
	case COL_OBJS:
		r = cmp_u64(memstat_get_slab_numobjs(a->mt), memstat_get_slab_numobjs(b->mt));
		break;
	case COL_ACTIVE:
		r = cmp_u64(memstat_get_slab_active(a->mt), memstat_get_slab_active(b->mt));
		break;
	case COL_USE:
		r = cmp_u64(slab_use(a->mt), slab_use(b->mt));
		break;
	case COL_OBJSIZE:
		r = cmp_u64(memstat_get_rsize(a->mt), memstat_get_rsize(b->mt));
		break;
	case COL_SLABS:
		r = cmp_u64(memstat_get_slab_numslabs(a->mt), memstat_get_slab_numslabs(b->mt));
		break;
	case COL_OBJPERSLAB:
		r = cmp_u64(memstat_get_slab_objperslab(a->mt), memstat_get_slab_objperslab(b->mt));
		break;
	case COL_CACHESIZE:
		r = cmp_u64(slab_cachesize(a->mt), slab_cachesize(b->mt));
		break;
	default:
		r = cmp_u64(memstat_get_sizemask(a->mt), memstat_get_sizemask(b->mt));
		break;
	}
	if (m->sort == COL_NAME)
		r = -r;                         /* names ascend */
	if (r == 0)
		r = strcmp(memstat_get_name(a->mt), memstat_get_name(b->mt));
	if (r == 0)
		r = memstat_get_kaddr(a->mt) < memstat_get_kaddr(b->mt) ? -1 : 1;
	return m->reverse ? -r : r;
}

/* Move rows[i] down the heap of n rows until neither child sorts after it. */
static void
sift(const struct model *m, struct row *rows, size_t i, size_t n)
{
	for (;;) {
		size_t big = i, l = 2 * i + 1, r = l + 1;
		struct row tmp;
		if (l < n && cmp_rows(m, &rows[l], &rows[big]) > 0)
			big = l;
		if (r < n && cmp_rows(m, &rows[r], &rows[big]) > 0)
			big = r;
		if (big == i)
			return;
		tmp = rows[i];
		rows[i] = rows[big];
		rows[big] = tmp;
		i = big;
	}
}

/* The rows in the model's order, in place: a heap sort, which needs no
 * buffer (qsort may allocate one per call; a refresh must not).  The order
 * is total (ties fall to the name, then the address), so the result is the
 * same as any other sort's. */
static void
sort_rows(const struct model *m, struct row *rows, size_t n)
{
	size_t i;

	for (i = n / 2; i-- > 0;)
		sift(m, rows, i, n);
	for (i = n; i-- > 1;) {
		struct row tmp = rows[0];
		rows[0] = rows[i];
		rows[i] = tmp;
		sift(m, rows, 0, i);
	}
}

void
model_rebuild(struct model *m)
{
	struct memory_type *mt;
	size_t n = 0;

	/* Totals are those of the rows shown: with a filter, of the rows it
	 * lets through (the header then says "filtered: N of M"). */
	m->total_bytes = m->total_inuse = m->total_requests = 0;
	m->nunknown = 0;
	m->total_rate = 0;
	m->nall = 0;
	for (mt = memstat_mtl_first(m->list); mt != NULL; mt = memstat_mtl_next(mt)) {
		double rate;
		uint64_t rb;

		if (memstat_get_vanished(mt) || memstat_get_allocator(mt) != m->allocator)
			continue;
		m->nall++;
		if (m->filter[0] != '\0' && strstr(memstat_get_name(mt), m->filter) == NULL)
			continue;
		rb = memstat_get_caller_uint64(mt, SLOT_RATE);
		memcpy(&rate, &rb, sizeof(rate));
		if (memstat_get_flags(mt) & (MEMSTAT_COUNTS_UNREADABLE |
		    MEMSTAT_SLAB_PERCPU_UNREADABLE)) {
			m->nunknown++;          /* its count is not known: not summed */
		} else {
			m->total_bytes += memstat_get_bytes(mt);
			m->total_inuse += memstat_get_count(mt);
		}
		m->total_requests += memstat_get_numallocs(mt);
		m->total_rate += rate;
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
	if (n < 2)
		return;         /* nothing to order (and rows may still be NULL) */
	sort_rows(m, m->rows, n);
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
