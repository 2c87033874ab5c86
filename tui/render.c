/*
 * render.c - kvmtop's screens as text: a frame of rows x cols cells, filled
 * without curses, so the terminal view and batch mode (`kvmtop -b`) show the
 * same thing.  Every string read from a dump goes through sanitize()
 * (common/escape.c) and then has any byte outside printable ASCII shown as
 * \xNN, so a cell is one column wide and nothing reaches a terminal raw.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui.h"

int
frame_init(struct frame *f, int rows, int cols)
{
	if (rows < 1)
		rows = 1;
	if (cols < 1)
		cols = 1;
	f->rows = rows;
	f->cols = cols;
	f->ch = malloc((size_t)rows * (size_t)cols);
	f->role = malloc((size_t)rows * (size_t)cols);
	if (f->ch == NULL || f->role == NULL) {
		frame_free(f);
		return -1;
	}
	f->cap = (size_t)rows * (size_t)cols;
	memset(f->ch, ' ', (size_t)rows * (size_t)cols);
	memset(f->role, R_NONE, (size_t)rows * (size_t)cols);
	return 0;
}

int
frame_fit(struct frame *f, int rows, int cols)
{
	if (rows < 1)
		rows = 1;
	if (cols < 1)
		cols = 1;
	if (f->ch == NULL || f->role == NULL || (size_t)rows * (size_t)cols > f->cap) {
		frame_free(f);
		return frame_init(f, rows, cols);
	}
	f->rows = rows;
	f->cols = cols;
	memset(f->ch, ' ', (size_t)rows * (size_t)cols);
	memset(f->role, R_NONE, (size_t)rows * (size_t)cols);
	return 0;
}

void
frame_free(struct frame *f)
{
	free(f->ch);
	free(f->role);
	f->ch = NULL;
	f->role = NULL;
	f->cap = 0;
}

/* Write s at (y, x), clipped to the row; returns the column after it. */
static int
put(struct frame *f, int y, int x, enum role r, const char *s)
{
	const unsigned char *p;

	if (y < 0 || y >= f->rows)
		return x;
	for (p = (const unsigned char *)s; *p != '\0' && x < f->cols; p++) {
		char esc[8];
		const char *q = esc;
		if (*p >= 0x20 && *p < 0x7f) {
			esc[0] = (char)*p;
			esc[1] = '\0';
		} else
			snprintf(esc, sizeof(esc), "\\x%02x", *p);
		for (; *q != '\0' && x < f->cols; q++, x++) {
			if (x < 0)
				continue;
			f->ch[(size_t)y * (size_t)f->cols + (size_t)x] = *q;
			f->role[(size_t)y * (size_t)f->cols + (size_t)x] = (unsigned char)r;
		}
	}
	return x;
}

static int __attribute__((format(printf, 5, 6)))
putf(struct frame *f, int y, int x, enum role r, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return put(f, y, x, r, buf);
}

/* Give a whole row a role (title bars, the selection). */
static void
paint(struct frame *f, int y, enum role r)
{
	int x;

	if (y < 0 || y >= f->rows)
		return;
	for (x = 0; x < f->cols; x++)
		f->role[(size_t)y * (size_t)f->cols + (size_t)x] = (unsigned char)r;
}

/* A dump string made safe for a cell. */
static void
clean(char *dst, size_t len, const char *src)
{
	sanitize(dst, len, src, strlen(src), false);
}

/* Bytes with one unit always shown: 512B, 12.0K, 3.4M. */
static void
human_bytes(char *buf, size_t len, double v)
{
	static const char *const unit[] = { "B", "K", "M", "G", "T" };
	int u = 0;

	while ((v >= 1024 || v <= -1024) && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f%s" : "%.0f%s", v, unit[u]);
}

/* An unsigned count in at most w characters: exact when it fits, else
 * scaled by 1000s with a suffix (k, M, G, T). */
static void
fit_u64(char *buf, size_t len, int w, uint64_t v)
{
	static const char *const sfx[] = { "", "k", "M", "G", "T", "P" };
	double d = (double)v;
	int u = 0;

	snprintf(buf, len, "%llu", (unsigned long long)v);
	while ((int)strlen(buf) > w && u < 5) {
		d /= 1000;
		u++;
		snprintf(buf, len, "%.0f%s", d, sfx[u]);
	}
}

/* A signed figure with `dec` decimals in at most w characters: fewer
 * decimals, then scaled by 1000s with a suffix, never cut. */
static void
fit_num(char *buf, size_t len, int w, double v, int dec)
{
	static const char *const sfx[] = { "", "k", "M", "G", "T", "P", "E" };
	int u = 0;

	snprintf(buf, len, "%.*f", dec, v);
	if ((int)strlen(buf) <= w)
		return;
	snprintf(buf, len, "%.0f", v);
	while ((int)strlen(buf) > w && u < 6) {
		v /= 1000;
		u++;
		snprintf(buf, len, "%.0f%s", v, sfx[u]);
	}
}

/* Segments joined by two blanks while the whole of each fits in w: a
 * narrow screen loses the last segments, never half a number. */
static void
join_fit(char *buf, size_t len, int w, const char *const *seg, size_t n)
{
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		size_t sl;
		if (seg[i] == NULL || seg[i][0] == '\0')
			continue;
		sl = strlen(seg[i]);
		if ((int)(o + (o ? 2 : 0) + sl) > w || o + sl + 3 > len)
			break;
		o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? "  " : "", seg[i]);
	}
}

static const char *
view_title(const struct tui *t)
{
	switch (t->screen) {
	case SCR_HELP: return "keys";
	case SCR_INFO: return "dump information";
	case SCR_PROFILE: return "kernel profile";
	case SCR_MEMORY: return "memory";
	case SCR_PROBES: return "DTrace profile probes";
	default:
		return t->model.allocator == ALLOCATOR_UMA ? "UMA zones" :
		    t->model.allocator == ALLOCATOR_SLAB ? "slab caches" : "malloc types";
	}
}

static void
draw_header(struct tui *t, struct frame *f)
{
	struct model *m = &t->model;
	char b1[32], b2[32], src[512];
	const char *what = m->allocator == ALLOCATOR_UMA ? "zones" :
	    m->allocator == ALLOCATOR_SLAB ? "caches" : "types";

	clean(src, sizeof(src), t->source);
	putf(f, 0, 0, R_HEADER, "kvmtop: %s - %s%s", view_title(t), src, t->live ? " (live)" : "");
	{
		/* Totals of the rows shown; a filter says of how many. */
		char s[6][96], line[1024];
		const char *seg[6];
		size_t k;
		human_bytes(b1, sizeof(b1), (double)m->total_bytes);
		snprintf(b2, sizeof(b2), "%.1f", m->total_rate);
		if (m->filter[0] != '\0')
			snprintf(s[0], sizeof(s[0]), "%s %zu (filtered: %zu of %zu)", what, m->nrows,
			    m->nrows, m->nall);
		else
			snprintf(s[0], sizeof(s[0]), "%s %zu", what, m->nrows);
		/* Rows whose count is not known are left out of the sums: "+?". */
		if (m->nunknown > 0 && m->nunknown == m->nrows) {
			snprintf(s[1], sizeof(s[1]), "in use ?");
			snprintf(s[2], sizeof(s[2]), "memory ?");
		} else {
			snprintf(s[1], sizeof(s[1]), "in use %llu%s",
			    (unsigned long long)m->total_inuse, m->nunknown ? "+?" : "");
			snprintf(s[2], sizeof(s[2]), "memory %s%s", b1, m->nunknown ? "+?" : "");
		}
		snprintf(s[3], sizeof(s[3]), "requests %llu", (unsigned long long)m->total_requests);
		snprintf(s[4], sizeof(s[4]), "req/s %s", b2);
		s[5][0] = '\0';
		for (k = 0; k < 6; k++)
			seg[k] = s[k];
		join_fit(line, sizeof(line), f->cols, seg, 6);
		put(f, 1, 0, R_NONE, line);

		/* A dump is read once; live memory every interval. */
		if (t->live)
			snprintf(s[0], sizeof(s[0]), "refresh #%llu %.1f ms every %.1fs%s",
			    (unsigned long long)m->refreshes, m->refresh_ms, t->interval,
			    t->paused ? " [PAUSED]" : "");
		else
			snprintf(s[0], sizeof(s[0]), "dump read once (%.1f ms)", m->refresh_ms);
		snprintf(s[1], sizeof(s[1]), "sort %s%s", model_col_title(m, m->sort),
		    m->reverse ? " (rev)" : "");
		snprintf(s[2], sizeof(s[2]), "%s%.60s", m->filter[0] ? "filter /" : "", m->filter);
		snprintf(s[3], sizeof(s[3]), "%s", m->show_addr ? "addresses" : "");
		join_fit(line, sizeof(line), f->cols, seg, 4);
		{
			char c2[4 * sizeof(line)];
			clean(c2, sizeof(c2), line);
			put(f, 2, 0, R_NONE, c2);
		}
	}
	if (m->failed) {
		char e[1024];
		clean(e, sizeof(e), m->error);
		paint(f, 3, R_BANNER);
		putf(f, 3, 0, R_BANNER, "refresh failed, showing last good data: %s", e);
	}
}

/* The text of one cell of the list, at most w characters (but a name). */
static void
cell(const struct model *m, const struct row *r, const struct column *c, int w, char *buf,
    size_t len)
{
	const struct memory_type *mt = r->mt;
	uint64_t fl = memstat_get_flags(mt);

	buf[0] = '\0';
	/* A partial dump: what the dump does not hold of the row is "?" - its
	 * name, or every figure counted from its statistics (the sizes and the
	 * address, read from the type itself, stand). */
	if (c->col == COL_NAME ? (fl & MEMSTAT_NAME_UNREADABLE) != 0 :
	    (fl & MEMSTAT_COUNTS_UNREADABLE) != 0 && c->col != COL_ADDR && c->col != COL_SIZE &&
	    c->col != COL_OBJSIZE && c->col != COL_OBJPERSLAB) {
		snprintf(buf, len, "?");
		return;
	}
	/* No per-CPU offsets (a kernel read without its kernel file whose
	 * symbols name no data): the objects in use, their bytes and the free
	 * ones are not known; slabs, objects and active (slabinfo's) stand. */
	if ((fl & MEMSTAT_SLAB_PERCPU_UNREADABLE) != 0 && (c->col == COL_INUSE ||
	    c->col == COL_MEMUSE || c->col == COL_FREE || c->col == COL_DINUSE ||
	    c->col == COL_DMEM)) {
		snprintf(buf, len, "?");
		return;
	}
	switch (c->col) {
	case COL_NAME:
		clean(buf, len, memstat_get_name(mt));
		break;
	case COL_ADDR:
		snprintf(buf, len, "0x%016llx", (unsigned long long)memstat_get_kaddr(mt));
		break;
	case COL_INUSE:
		fit_u64(buf, len, w, memstat_get_count(mt));
		break;
	case COL_MEMUSE:
		fit_u64(buf, len, w, (memstat_get_bytes(mt) + 1023) / 1024);
		break;
	case COL_REQUESTS:
		fit_u64(buf, len, w, memstat_get_numallocs(mt));
		break;
	case COL_DINUSE:
		fit_num(buf, len, w, (double)r->d_inuse, 0);
		break;
	case COL_DMEM:
		fit_num(buf, len, w, (double)r->d_bytes / 1024, 1);
		break;
	case COL_RATE:
		fit_num(buf, len, w, r->rate, 1);
		break;
	case COL_SIZE:
		fit_u64(buf, len, w, memstat_get_size(mt));
		break;
	case COL_FREE:
		fit_u64(buf, len, w, memstat_get_free(mt));
		break;
	case COL_FAIL:
		fit_u64(buf, len, w, memstat_get_failures(mt));
		break;
	case COL_OBJS:
		fit_u64(buf, len, w, memstat_get_slab_numobjs(mt));
		break;
	case COL_ACTIVE:
		fit_u64(buf, len, w, memstat_get_slab_active(mt));
		break;
	case COL_USE: {
		uint64_t o = memstat_get_slab_numobjs(mt);
		snprintf(buf, len, "%llu%%", (unsigned long long)(o ? memstat_get_slab_active(mt) * 100 / o : 0));
		break;
	}
	case COL_OBJSIZE:
		fit_u64(buf, len, w, memstat_get_rsize(mt));
		break;
	case COL_SLABS:
		fit_u64(buf, len, w, memstat_get_slab_numslabs(mt));
		break;
	case COL_OBJPERSLAB:
		fit_u64(buf, len, w, memstat_get_slab_objperslab(mt));
		break;
	case COL_CACHESIZE:
		fit_u64(buf, len, w, memstat_get_slab_numslabs(mt) *
		    memstat_get_slab_pagesperslab(mt) * 4);
		break;
	case COL_SIZES: {
		/* Whole sizes while they fit; then "+N", the sizes left out. */
		size_t k, nz = memstat_mtl_malloc_zone_count(m->list), n = 0, shown = 0, used = 0;
		for (k = 0; k < nz; k++)
			used += memstat_malloc_zone_used(mt, k) != 0;
		for (k = 0; k < nz; k++) {
			char one[32], more[16] = "";
			size_t ol;
			if (!memstat_malloc_zone_used(mt, k))
				continue;
			ol = (size_t)snprintf(one, sizeof(one), "%s%zu", n ? "," : "",
			    memstat_mtl_malloc_zone_size(m->list, k));
			if (shown + 1 < used)
				snprintf(more, sizeof(more), " +%zu", used - shown - 1);
			if (n + ol + strlen(more) > (size_t)w || n + ol + 1 > len) {
				char tail[24];
				size_t tl = (size_t)snprintf(tail, sizeof(tail), "%s+%zu", n ? " " : "",
				    used - shown);
				if (n + tl <= (size_t)w && n + tl < len)
					memcpy(buf + n, tail, tl + 1);
				break;
			}
			memcpy(buf + n, one, ol + 1);
			n += ol;
			shown++;
		}
		break;
	}
	default:
		break;
	}
}

int
render_rows_needed(const struct tui *t)
{
	return 5 + (int)t->model.nrows;
}

static void
draw_list(struct tui *t, struct frame *f, bool batch)
{
	struct model *m = &t->model;
	const struct column *cols;
	size_t ncols = model_fit_columns(m, f->cols, &cols), c;
	int y = 4, x = 0, i, rows = f->rows - 5 - (batch ? 0 : 1);

	if (rows < 0)
		rows = 0;
	paint(f, y, R_TITLE);
	for (c = 0; c < ncols; c++) {
		int w = cols[c].width ? cols[c].width : f->cols - x;
		char b[64];
		enum role r = cols[c].col == m->sort ? R_SORTED : R_TITLE;
		if (cols[c].left)
			snprintf(b, sizeof(b), "%s%-*s", c ? " " : "", w - (c ? 1 : 0), cols[c].title);
		else
			snprintf(b, sizeof(b), "%*s", w, cols[c].title);
		put(f, y, x, r, b);
		x += w;
	}
	if (t->sel >= (int)m->nrows)
		t->sel = m->nrows > 0 ? (int)m->nrows - 1 : 0;
	if (t->sel < t->top)
		t->top = t->sel;
	if (rows > 0 && t->sel >= t->top + rows)
		t->top = t->sel - rows + 1;
	if (batch)
		t->top = 0;
	for (i = 0; i < rows && t->top + i < (int)m->nrows; i++) {
		const struct row *r = &m->rows[t->top + i];
		bool sel = !batch && t->top + i == t->sel;
		int yy = y + 1 + i;

		x = 0;
		if (sel)
			paint(f, yy, R_SELECTED);
		for (c = 0; c < ncols; c++) {
			int w = cols[c].width ? cols[c].width : f->cols - x;
			char v[512], b[600];
			enum role role = sel ? R_SELECTED : R_NONE;
			cell(m, r, &cols[c], w > 1 ? w - 1 : 1, v, sizeof(v));
			if (!sel && (cols[c].col == COL_DINUSE || cols[c].col == COL_DMEM) && r->d_inuse != 0)
				role = r->d_inuse > 0 ? R_GROW : R_SHRINK;
			if (cols[c].left)
				snprintf(b, sizeof(b), "%s%-*.*s", c ? " " : "", w - (c ? 1 : 0),
				    w - (c ? 1 : 0), v);
			else
				snprintf(b, sizeof(b), " %*s", w - 1, v);
			/* sanitize's \xNN may make a name longer than its cell: cut it. */
			if ((int)strlen(b) > w && w >= 0)
				b[w] = '\0';
			put(f, yy, x, role, b);
			x += w;
		}
	}
}

/* One line of the per-CPU screen: an 8-wide id, then n figures. */
static void
put_percpu(struct frame *f, int y, enum role r, const char *id, const char *const *v, size_t n)
{
	static const int fw[4] = { 15, 15, 13, 13 };
	char b[128];
	size_t k, o;

	o = (size_t)snprintf(b, sizeof(b), "%-8s", id);
	for (k = 0; k < n && k < 4; k++)
		o += (size_t)snprintf(b + o, sizeof(b) - o, "%*s", fw[k], v[k]);
	put(f, y, 0, r, b);
}

static void
draw_percpu(struct tui *t, struct frame *f)
{
	struct model *m = &t->model;
	const struct row *r;
	const char *const *ti;
	struct percpu_line lines[256];
	char name[256];
	size_t nl, nv, i;
	int y = 5;

	if (m->nrows == 0) {
		t->screen = SCR_LIST;
		return;
	}
	if (t->sel >= (int)m->nrows)
		t->sel = (int)m->nrows - 1;
	r = &m->rows[t->sel];
	clean(name, sizeof(name), memstat_get_flags(r->mt) & MEMSTAT_NAME_UNREADABLE ? "?" :
	    memstat_get_name(r->mt));
	putf(f, 4, 0, R_NONE, "per-CPU: %s at 0x%llx (Enter/Esc to go back)", name,
	    (unsigned long long)memstat_get_kaddr(r->mt));
	nv = model_percpu_titles(memstat_get_allocator(r->mt), &ti);
	nl = model_percpu(r->mt, lines, sizeof(lines) / sizeof(lines[0]));
	/* The figures that fit the screen whole (the CPU column is 8 wide). */
	{
		static const int fw[4] = { 15, 15, 13, 13 };
		int used = 8;
		size_t show = 0;
		while (show < nv && used + fw[show] <= f->cols)
			used += fw[show++];
		nv = show;
	}
	paint(f, y, R_TITLE);
	put_percpu(f, y++, R_TITLE, "CPU", ti, nv);
	if (nl == 0)
		put(f, y++, 0, R_NONE, "(no per-CPU figures: every CPU's are zero)");
	for (i = 0; i < nl && y < f->rows - 1; i++) {
		char id[16], v[4][24];
		const char *vp[4] = { v[0], v[1], v[2], v[3] };
		size_t k;
		snprintf(id, sizeof(id), "%s%u", lines[i].domain ? "domain" : "", lines[i].id);
		for (k = 0; k < 4; k++)
			snprintf(v[k], sizeof(v[k]), "%llu", (unsigned long long)lines[i].v[k]);
		if (lines[i].domain)          /* a domain has no per-CPU cache */
			v[0][0] = v[1][0] = '\0';
		else if (memstat_get_allocator(r->mt) == ALLOCATOR_UMA)
			v[2][0] = v[3][0] = '\0';  /* nor a CPU free items of its own */
		put_percpu(f, y++, R_NONE, id, vp, nv);
	}
}

/*
 * The keys, as the help screen shows them.  This table is the one text of
 * the key help: README.md's kvmtop table and kvmtop.1's Keys list say the
 * same words (tests/check_tui.c: help_is_one_text).
 */
static const char *const help_keys[][2] = {
	{ "1..9", "sort by the n-th column shown (again: reverse the order)" },
	{ "< >", "move the sort to the previous or next column" },
	{ "n m r u", "sort by name, memory in use, requests, objects in use" },
	{ "/", "filter by name; Enter keeps, Esc clears; totals: rows shown" },
	{ "Enter", "per-CPU figures of the selected row" },
	{ "Up Down k j", "move the selection by a row" },
	{ "PgUp PgDn Home End", "move the selection by a page, to the first or last row" },
	{ "space", "pause or resume the refreshes (live memory)" },
	{ "+ -", "double or halve the refresh interval" },
	{ "Tab z", "switch between malloc types and UMA zones (FreeBSD)" },
	{ "a", "show or hide kernel addresses (tell same names apart)" },
	{ "i", "dump information: format, kernel version, panic string" },
	{ "p", "kernel profile, busiest functions first" },
	{ "b", "DTrace profile-provider probes" },
	{ "M", "memory: where the kernel's memory is, as a bar, and each allocator's total" },
	{ "h ?", "this help" },
	{ "Esc", "back to the list from another screen" },
	{ "q", "quit" },
};

/* The memory screen: the bar, then each part's size and share, then the
 * allocators' totals from the list. */
static void
draw_memory(struct tui *t, struct frame *f)
{
	static const char *const anames[3] = { "malloc(9) types", "UMA zones", "slab caches" };
	const struct memview *mv = &t->mem;
	char bar[1024], b1[32];
	int y = 4, i, w = f->cols - 2;

	if (!mv->have) {
		char e[1024];
		clean(e, sizeof(e), mv->error[0] ? mv->error : "not read yet");
		putf(f, y, 0, R_NONE, "no memory summary: %s", e);
		return;
	}
	if (w > (int)sizeof(bar) - 1)
		w = (int)sizeof(bar) - 1;
	human_bytes(b1, sizeof(b1), (double)mv->total_kib * 1024);
	putf(f, y++, 0, R_TITLE, "%s memory: %s%s", mv->family, b1,
	    mv->incomplete ? " (incomplete: some counters are not in the dump)" : "");
	if (w >= 1) {
		memview_bar(mv, bar, w);
		put(f, y, 0, R_NONE, "[");
		put(f, y, 1, R_NONE, bar);
		put(f, y, 1 + w, R_NONE, "]");
	}
	y += 2;
	for (i = 0; i < mv->nparts; i++) {
		human_bytes(b1, sizeof(b1), (double)mv->part[i].kib * 1024);
		putf(f, y++, 1, R_NONE, "%c %-14s %10s %6.1f%%", mv->part[i].mark, mv->part[i].name,
		    b1, mv->total_kib ? 100.0 * (double)mv->part[i].kib / (double)mv->total_kib : 0.0);
	}
	y++;
	for (i = 0; i < 3; i++) {
		if (mv->alloc_n[i] == 0)
			continue;
		human_bytes(b1, sizeof(b1), (double)mv->alloc_bytes[i]);
		putf(f, y++, 1, R_NONE, "%-16s %10s in use, %zu entries", anames[i], b1,
		    mv->alloc_n[i]);
	}
}

static void
draw_help(struct frame *f)
{
	size_t i;

	for (i = 0; i < sizeof(help_keys) / sizeof(help_keys[0]) && (int)i + 4 < f->rows - 1; i++)
		putf(f, 4 + (int)i, 1, R_NONE, "%-18s  %s", help_keys[i][0], help_keys[i][1]);
}

/* Label: value lines, a long value continued under itself. */
static void
draw_info(struct tui *t, struct frame *f)
{
	int y = 4, i;

	for (i = 0; i < t->ninfo && y < f->rows - 1; i++) {
		char v[1100];
		int lw = 10, avail = f->cols - 1 - lw, off = 0, n;
		clean(v, sizeof(v), t->info[i][1]);
		n = (int)strlen(v);
		putf(f, y, 1, R_NONE, "%-*.*s", lw, lw, t->info[i][0]);
		if (avail < 8) {                /* too narrow to wrap usefully */
			put(f, y++, 1 + lw, R_NONE, v);
			continue;
		}
		/* Break before the last blank that fits (the blank starts the
		 * next line, so the lines joined are the value), else hard. */
		do {
			char part[1100];
			int take = n - off < avail ? n - off : avail, k;
			if (off + take < n)
				for (k = take; k > 1; k--)
					if (v[off + k] == ' ') {
						take = k;
						break;
					}
			snprintf(part, sizeof(part), "%.*s", take, v + off);
			put(f, y++, 1 + lw, R_NONE, part);
			off += take;
		} while (off < n && y < f->rows - 1);
	}
}

/* A text line cut to w columns, but never inside a figure: when the word
 * at the edge is a number, the line ends before it. */
static void
cut_whole(char *s, int w)
{
	int b, e;

	if (w < 0 || (int)strlen(s) <= w)
		return;
	if (s[w] == ' ' || s[w - 1] == ' ') {
		s[w] = '\0';
		return;
	}
	for (b = w - 1; b > 0 && s[b - 1] != ' '; b--)
		;
	for (e = b; s[e] != '\0' && s[e] != ' '; e++)
		if (strchr("0123456789.%+-", s[e]) == NULL) {
			s[w] = '\0';           /* a name: cut where the screen ends */
			return;
		}
	while (b > 0 && s[b - 1] == ' ')
		b--;
	s[b] = '\0';
}

void
render(struct tui *t, struct frame *f, bool batch)
{
	memset(f->ch, ' ', (size_t)f->rows * (size_t)f->cols);
	memset(f->role, R_NONE, (size_t)f->rows * (size_t)f->cols);
	draw_header(t, f);
	switch (t->screen) {
	case SCR_PERCPU:
		draw_percpu(t, f);
		break;
	case SCR_HELP:
		draw_help(f);
		break;
	case SCR_INFO:
		draw_info(t, f);
		break;
	case SCR_MEMORY:
		draw_memory(t, f);
		break;
	case SCR_PROFILE:
	case SCR_PROBES: {
		int i;
		for (i = 0; i < t->ntext && 4 + i < f->rows - (batch ? 0 : 1); i++) {
			char c[1024];
			clean(c, sizeof(c), t->text[i]);
			cut_whole(c, f->cols);
			put(f, 4 + i, 0, R_NONE, c);
		}
		break;
	}
	default:
		draw_list(t, f, batch);
		break;
	}
	if (batch)
		return;
	if (t->filtering)
		putf(f, f->rows - 1, 0, R_NONE, "filter: %s", t->filter_buf);
	else
		put(f, f->rows - 1, 0, R_NONE, t->have_uma && t->have_malloc ?
		    "h help  q quit  / filter  a addr  Enter per-CPU  Tab zones  i info  p profile" :
		    "h help  q quit  / filter  a addr  Enter per-CPU  i info  p profile");
}
