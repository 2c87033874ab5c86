/*
 * view.c - the terminal: render() (render.c) fills a frame the size of the
 * screen, and this file puts it on the screen with curses.  Colours come from
 * one theme table; with NO_COLOR set, --no-color or a terminal without
 * colours every attribute falls back to monochrome.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui.h"

static const struct {
	short fg, bg;
	attr_t mono;
} theme[R__COUNT] = {
	[R_NONE] = { -1, -1, A_NORMAL },
	[R_HEADER] = { COLOR_CYAN, -1, A_BOLD },
	[R_TITLE] = { COLOR_BLACK, COLOR_GREEN, A_REVERSE },
	[R_SORTED] = { COLOR_BLACK, COLOR_CYAN, A_REVERSE | A_BOLD },
	[R_SELECTED] = { COLOR_BLACK, COLOR_YELLOW, A_REVERSE },
	[R_BANNER] = { COLOR_WHITE, COLOR_RED, A_REVERSE | A_BOLD },
	[R_GROW] = { COLOR_RED, -1, A_BOLD },
	[R_SHRINK] = { COLOR_GREEN, -1, A_NORMAL },
};

static bool use_color;
/* The frame of the screen, reallocated only when the terminal's size
 * changes: a steady-state redraw allocates nothing. */
static struct frame f;

static attr_t
role_attr(enum role r)
{
	if (r == R_NONE)
		return A_NORMAL;
	return use_color ? COLOR_PAIR(r) : theme[r].mono;
}

int
view_init(struct tui *t)
{
	int i;

	/* newterm, not initscr: an unknown TERM is an answer (the caller
	 * falls back to batch mode), not an exit. */
	if (newterm(NULL, stdout, stdin) == NULL)
		return -1;
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
	return 0;
}

void
view_end(void)
{
	endwin();
	frame_free(&f);
}


void
view_draw(struct tui *t)
{
	int y, x;

	erase();
	if (f.ch == NULL || f.rows != LINES || f.cols != COLS) {
		frame_free(&f);
		if (frame_init(&f, LINES, COLS) != 0) {
			refresh();
			return;
		}
	}
	render(t, &f, false);
	for (y = 0; y < f.rows; y++) {
		for (x = 0; x < f.cols;) {
			size_t at = (size_t)y * (size_t)f.cols + (size_t)x;
			int n = 1;
			/* Leave the last cell alone: writing it may scroll. */
			int end = y == f.rows - 1 ? f.cols - 1 : f.cols;
			if (x >= end)
				break;
			while (x + n < end && f.role[at + (size_t)n] == f.role[at])
				n++;
			attrset(role_attr((enum role)f.role[at]));
			mvaddnstr(y, x, f.ch + at, n);
			x += n;
		}
	}
	attrset(A_NORMAL);
	refresh();
}
