/*
 * view.c - drawing.  Colours come from one theme table; with NO_COLOR set or
 * a terminal without colours every attribute falls back to monochrome.
 * Nothing read from a dump is drawn before sanitize() (common/escape.c)
 * escapes it.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui.h"

enum role { R_HEADER = 1, R_TITLE, R_SORTED, R_SELECTED, R_BANNER, R_GROW, R_SHRINK, R__COUNT };

static const struct {
	short fg, bg;
	attr_t mono;
} theme[R__COUNT] = {
	[R_HEADER] = { COLOR_CYAN, -1, A_BOLD },
	[R_TITLE] = { COLOR_BLACK, COLOR_GREEN, A_REVERSE },
	[R_SORTED] = { COLOR_BLACK, COLOR_CYAN, A_REVERSE | A_BOLD },
	[R_SELECTED] = { COLOR_BLACK, COLOR_YELLOW, A_REVERSE },
	[R_BANNER] = { COLOR_WHITE, COLOR_RED, A_REVERSE | A_BOLD },
	[R_GROW] = { COLOR_RED, -1, A_BOLD },
	[R_SHRINK] = { COLOR_GREEN, -1, A_NORMAL },
};

static bool use_color;

static attr_t
role(enum role r)
{
	return use_color ? COLOR_PAIR(r) : theme[r].mono;
}


void
view_init(struct tui *t)
{
	int i;

	initscr();
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	use_color = t->color && getenv("NO_COLOR") == NULL && has_colors();
	if (use_color) {
		start_color();
		use_default_colors();
		for (i = 1; i < R__COUNT; i++)
			init_pair((short)i, theme[i].fg, theme[i].bg);
	}
}

void
view_end(void)
{
	endwin();
}

static void
human(char *buf, size_t len, double v)
{
	static const char *const unit[] = { "", "K", "M", "G", "T" };
	int u = 0;

	while ((v >= 10000 || v <= -10000) && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.0f%s", v, unit[u]);
}

static void
draw_header(struct tui *t)
{
	struct model *m = &t->model;
	char b1[32], b2[32];

	attron(role(R_HEADER));
	mvprintw(0, 0, "kvmtop - %s%s - %s", t->source, t->live ? " (live)" : "",
	    m->allocator == ALLOCATOR_UMA ? "UMA zones" :
	    m->allocator == ALLOCATOR_SLAB ? "slab caches" : "malloc types");
	attroff(role(R_HEADER));
	human(b1, sizeof(b1), (double)m->total_bytes);
	human(b2, sizeof(b2), m->total_rate);
	mvprintw(1, 0, "types %zu  in use %llu  memory %sB  requests %llu  req/s %s",
	    m->nrows, (unsigned long long)m->total_inuse, b1,
	    (unsigned long long)m->total_requests, b2);
	mvprintw(2, 0, "refresh #%llu %.1f ms every %.1fs%s  sort %s%s%s%s",
	    (unsigned long long)m->refreshes, m->refresh_ms, t->interval,
	    t->paused ? " [PAUSED]" : "", col_title(m->sort), m->reverse ? " (rev)" : "",
	    m->filter[0] ? "  filter /" : "", m->filter);
	if (m->failed) {
		char clean[256];
		sanitize(clean, sizeof(clean), m->error, strlen(m->error), false);
		attron(role(R_BANNER));
		mvprintw(3, 0, " refresh failed, showing last good data: %.*s", COLS - 42, clean);
		clrtoeol();
		attroff(role(R_BANNER));
	}
}

static const int widths[COL__COUNT] = { 18, 8, 9, 10, 8, 8, 9, 0 };

static void
draw_list(struct tui *t)
{
	struct model *m = &t->model;
	int y = 4, x = 0, c, i, rows = LINES - 6;

	move(y, 0);
	attron(role(R_TITLE));
	for (c = 0; c < COL__COUNT; c++) {
		int w = widths[c] ? widths[c] : COLS - x;
		if (x >= COLS)
			break;
		if ((enum col)c == m->sort)
			attron(role(R_SORTED));
		mvprintw(y, x, c == COL_NAME ? "%-*.*s" : "%*.*s", w > COLS - x ? COLS - x : w,
		    w > COLS - x ? COLS - x : w, col_title((enum col)c));
		if ((enum col)c == m->sort) {
			attroff(role(R_SORTED));
			attron(role(R_TITLE));
		}
		x += w;
	}
	attroff(role(R_TITLE));
	if (t->sel >= (int)m->nrows)
		t->sel = m->nrows > 0 ? (int)m->nrows - 1 : 0;
	if (t->sel < t->top)
		t->top = t->sel;
	if (t->sel >= t->top + rows)
		t->top = t->sel - rows + 1;
	for (i = 0; i < rows && t->top + i < (int)m->nrows; i++) {
		const struct row *r = &m->rows[t->top + i];
		char name[128], mem[32], dm[32], rate[32], sizes[96];
		size_t k, n = 0;

		sanitize(name, sizeof(name), memstat_get_name(r->mt), strlen(memstat_get_name(r->mt)), false);
		human(mem, sizeof(mem), (double)memstat_get_bytes(r->mt));
		human(dm, sizeof(dm), (double)r->d_bytes);
		snprintf(rate, sizeof(rate), "%.1f", r->rate);
		sizes[0] = '\0';
		if (memstat_get_allocator(r->mt) == ALLOCATOR_UMA ||
		    memstat_get_allocator(r->mt) == ALLOCATOR_SLAB)
			n = (size_t)snprintf(sizes, sizeof(sizes), "%llu free %llu",
			    (unsigned long long)memstat_get_size(r->mt),
			    (unsigned long long)memstat_get_free(r->mt));
		for (k = 0; memstat_get_allocator(r->mt) == ALLOCATOR_MALLOC && k < memstat_malloc_zone_get_count() && n + 8 < sizeof(sizes); k++)
			if (memstat_malloc_zone_used(r->mt, k))
				n += (size_t)snprintf(sizes + n, sizeof(sizes) - n, "%s%zu",
				    n ? "," : "", memstat_malloc_zone_get_size(k));
		if (t->top + i == t->sel)
			attron(role(R_SELECTED));
		mvprintw(y + 1 + i, 0, "%-18.18s%8llu%9s%10llu", name,
		    (unsigned long long)memstat_get_count(r->mt), mem,
		    (unsigned long long)memstat_get_numallocs(r->mt));
		if (t->top + i != t->sel && r->d_inuse != 0)
			attron(role(r->d_inuse > 0 ? R_GROW : R_SHRINK));
		printw("%8lld%8s", (long long)r->d_inuse, dm);
		if (t->top + i != t->sel && r->d_inuse != 0)
			attroff(role(r->d_inuse > 0 ? R_GROW : R_SHRINK));
		printw("%9s %.*s", rate, COLS > 71 ? COLS - 71 : 0, sizes);
		clrtoeol();
		if (t->top + i == t->sel)
			attroff(role(R_SELECTED));
	}
}

static void
draw_percpu(struct tui *t)
{
	struct model *m = &t->model;
	const struct row *r;
	char name[128];
	unsigned c, maxc;
	int y = 5;

	if (m->nrows == 0) {
		t->screen = SCR_LIST;
		return;
	}
	r = &m->rows[t->sel];
	sanitize(name, sizeof(name), memstat_get_name(r->mt), strlen(memstat_get_name(r->mt)), false);
	maxc = memstat_get_maxcpus(r->mt);
	mvprintw(4, 0, "per-CPU: %s at 0x%llx (Enter/Esc to go back)", name,
	    (unsigned long long)memstat_get_kaddr(r->mt));
	attron(role(R_TITLE));
	mvprintw(y++, 0, "%4s %14s %14s %12s %12s", "CPU", "ALLOCED", "FREED", "ALLOCS", "FREES");
	clrtoeol();
	attroff(role(R_TITLE));
	for (c = 0; c < maxc && y < LINES - 1; c++) {
		uint64_t a = memstat_get_percpu_numallocs(r->mt, (int)c);
		uint64_t f = memstat_get_percpu_numfrees(r->mt, (int)c);
		if (a == 0 && f == 0)
			continue;
		mvprintw(y++, 0, "%4u %14llu %14llu %12llu %12llu", c,
		    (unsigned long long)memstat_get_percpu_memalloced(r->mt, (int)c),
		    (unsigned long long)memstat_get_percpu_memfreed(r->mt, (int)c),
		    (unsigned long long)a, (unsigned long long)f);
	}
}

static void
draw_help(void)
{
	static const char *const lines[] = {
		"kvmtop keys",
		"",
		"  1..7 / < >   sort by column (again: reverse); < > move the sort column",
		"  n m r u      sort by name, memory, requests, in use",
		"  /            filter by name (Enter applies, Esc clears)",
		"  Enter        per-CPU breakdown of the selected type",
		"  Up/Down PgUp/PgDn Home/End   move",
		"  space        pause / resume",
		"  + -          refresh interval longer / shorter",
		"  Tab z        malloc types / UMA zones",
		"  p            kernel profile (top functions)   b  DTrace profile probes",
		"  i            dump information",
		"  h ?          this help       q  quit",
	};
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]) && (int)i + 4 < LINES - 1; i++)
		mvprintw(4 + (int)i, 2, "%.*s", COLS - 3, lines[i]);
}

void
view_draw(struct tui *t)
{
	erase();
	draw_header(t);
	switch (t->screen) {
	case SCR_PERCPU:
		draw_percpu(t);
		break;
	case SCR_HELP:
		draw_help();
		break;
	case SCR_PROFILE:
	case SCR_PROBES: {
		int i;
		for (i = 0; i < t->ntext && 4 + i < LINES - 1; i++) {
			char clean[400];
			sanitize(clean, sizeof(clean), t->text[i], strlen(t->text[i]), false);
			mvprintw(4 + i, 0, "%.*s", COLS, clean);
		}
		break;
	}
	case SCR_INFO: {
		char clean[2048], *line, *save = NULL;
		int y = 4;
		sanitize(clean, sizeof(clean), t->info, strlen(t->info), false);
		/* sanitize escaped the newlines too: split on the escape. */
		for (line = strtok_r(clean, "|", &save); line && y < LINES - 1;
		    line = strtok_r(NULL, "|", &save))
			mvprintw(y++, 2, "%.*s", COLS - 3, line);
		break;
	}
	default:
		draw_list(t);
		break;
	}
	if (t->filtering)
		mvprintw(LINES - 1, 0, "filter: %s", t->filter_buf);
	else
		mvprintw(LINES - 1, 0, "h help  q quit  / filter  Enter per-CPU  Tab zones  p profile");
	refresh();
}
