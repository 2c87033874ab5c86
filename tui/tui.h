/* tui.h - kvmtop's screen state shared by render.c, view.c, input.c and main.c. */
#ifndef TUI_H
#define TUI_H

#include <stdbool.h>

#include "escape.h"
#include "memview.h"
#include "model.h"

enum tscreen { SCR_LIST, SCR_PERCPU, SCR_HELP, SCR_INFO, SCR_PROFILE, SCR_PROBES, SCR_MEMORY };

/*
 * A frame: the screen as text, rows x cols cells, each one printable ASCII
 * byte and a role.  render() fills it without curses; the terminal view
 * (view.c) puts it on the screen, batch mode prints it.  Nothing longer than
 * a row is ever written, so no line wraps at any size.
 */
struct frame {
	int rows, cols;
	char *ch;
	unsigned char *role;
	size_t cap;             /* cells ch and role hold */
};

struct tui {
	struct model model;
	enum tscreen screen;
	int top;                /* first visible row */
	int sel;                /* selected row */
	bool paused;
	double interval;        /* seconds */
	const char *source;     /* what we are looking at, for the header */
	bool live;
	bool color;
	bool filtering;         /* typing a filter after '/' */
	char filter_buf[64];
	int filter_len;
	char info[16][2][256];  /* info screen: label, value (raw: drawn sanitized) */
	int ninfo;
	bool have_uma;          /* the kernel's UMA layout is readable */
	bool have_malloc;       /* the kernel has malloc types (FreeBSD) */
	char text[64][200];     /* profile / probes screens, filled by main.c */
	int ntext;
	bool want_text;         /* main.c: refill text for the current screen */
	struct memview mem;     /* the memory screen, filled by main.c */
	/* main.c's storage, kept between refreshes so that a steady refresh
	 * allocates nothing: the memory summary (kvs_meminfo_into) and the
	 * frame batch mode prints. */
	struct kvs_counter *meminfo;
	size_t meminfo_cap;
	struct frame out;
};

/* Colour roles of the cells of a frame. */
enum role { R_NONE, R_HEADER, R_TITLE, R_SORTED, R_SELECTED, R_BANNER, R_GROW, R_SHRINK,
	R__COUNT };

int frame_init(struct frame *f, int rows, int cols);
/* A blank frame of rows x cols in f's storage, reallocated only when it
 * holds fewer cells (f zeroed, or from frame_init).  0 or -1. */
int frame_fit(struct frame *f, int rows, int cols);
void frame_free(struct frame *f);
/* Rows the list screen needs to show every row (batch mode's height). */
int render_rows_needed(const struct tui *t);
/* Draw the current screen; batch: no key hints and no selection bar. */
void render(struct tui *t, struct frame *f, bool batch);

enum action { ACT_NONE, ACT_REDRAW, ACT_RESCAN, ACT_QUIT };

/* -1: the terminal cannot be driven (TERM unknown); nothing drawn. */
int view_init(struct tui *t);
void view_draw(struct tui *t);
void view_end(void);
enum action input_key(struct tui *t, int key);

#endif
