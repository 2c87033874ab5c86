/* tui.h - kvmtop's screen state shared by view.c, input.c and main.c. */
#ifndef TUI_H
#define TUI_H

#include <stdbool.h>

#include "escape.h"
#include "model.h"

enum tscreen { SCR_LIST, SCR_PERCPU, SCR_HELP, SCR_INFO, SCR_PROFILE, SCR_PROBES };

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
	char info[1024];        /* dump description for the info screen */
	bool have_uma;          /* the kernel's UMA layout is readable */
	char text[64][200];     /* profile / probes screens, filled by main.c */
	int ntext;
	bool want_text;         /* main.c: refill text for the current screen */
};

enum action { ACT_NONE, ACT_REDRAW, ACT_RESCAN, ACT_QUIT };

void view_init(struct tui *t);
void view_draw(struct tui *t);
void view_end(void);
enum action input_key(struct tui *t, int key);

#endif
