/*
 * input.c - keys to actions.  Handlers change the screen state and return
 * what the main loop must do: redraw, rescan (refresh now) or quit.
 */
#include <curses.h>
#include <string.h>

#include "tui.h"

static enum action
filter_key(struct tui *t, int key)
{
	if (key == '\n' || key == KEY_ENTER) {
		t->filtering = false;
		model_set_filter(&t->model, t->filter_buf);
	} else if (key == 27) {
		t->filtering = false;
		t->filter_len = 0;
		t->filter_buf[0] = '\0';
		model_set_filter(&t->model, "");
	} else if (key == KEY_BACKSPACE || key == 127 || key == 8) {
		if (t->filter_len > 0)
			t->filter_buf[--t->filter_len] = '\0';
		model_set_filter(&t->model, t->filter_buf);
	} else if (key >= 0x20 && key < 0x7f && t->filter_len < (int)sizeof(t->filter_buf) - 1) {
		t->filter_buf[t->filter_len++] = (char)key;
		t->filter_buf[t->filter_len] = '\0';
		model_set_filter(&t->model, t->filter_buf);   /* live filtering */
	}
	return ACT_REDRAW;
}

enum action
input_key(struct tui *t, int key)
{
	int page = LINES > 8 ? LINES - 7 : 1;

	if (t->filtering)
		return filter_key(t, key);
	if (t->screen != SCR_LIST && (key == 27 || key == '\n' || key == KEY_ENTER ||
	    key == 'h' || key == '?' || key == 'i' || key == 'p' || key == 'b' || key == 'M')) {
		t->screen = SCR_LIST;
		return ACT_REDRAW;
	}
	switch (key) {
	case 'q':
	case 'Q':
		return ACT_QUIT;
	case 'h':
	case '?':
		t->screen = SCR_HELP;
		return ACT_REDRAW;
	case 'i':
		t->screen = SCR_INFO;
		return ACT_REDRAW;
	case 'p':
		t->screen = SCR_PROFILE;
		t->want_text = true;
		return ACT_RESCAN;
	case 'M':
		t->screen = SCR_MEMORY;
		t->want_text = true;
		return ACT_RESCAN;
	case 'b':
		t->screen = SCR_PROBES;
		t->want_text = true;
		return ACT_RESCAN;
	case '\t':
	case 'z':
		if (t->have_uma && t->have_malloc) {
			model_set_allocator(&t->model, t->model.allocator == ALLOCATOR_UMA ?
			    ALLOCATOR_MALLOC : ALLOCATOR_UMA);
			t->sel = t->top = 0;
		}
		return ACT_REDRAW;
	case 'a':
		t->model.show_addr = !t->model.show_addr;
		if (t->model.sort == COL_ADDR && !t->model.show_addr)
			model_set_allocator(&t->model, t->model.allocator);
		return ACT_REDRAW;
	case '/':
		t->filtering = true;
		t->filter_len = (int)strlen(t->model.filter);
		memcpy(t->filter_buf, t->model.filter, sizeof(t->filter_buf));
		return ACT_REDRAW;
	case ' ':
		t->paused = !t->paused;
		return ACT_REDRAW;
	case '+':
		t->interval = t->interval < 60 ? t->interval * 2 : 60;
		return ACT_REDRAW;
	case '-':
		t->interval = t->interval > 0.2 ? t->interval / 2 : 0.1;
		return ACT_REDRAW;
	case '\n':
	case KEY_ENTER:
		if (t->model.nrows == 0)
			return ACT_REDRAW;
		t->screen = SCR_PERCPU;
		return ACT_RESCAN;      /* fetch the per-CPU counters now */
	case KEY_UP:
	case 'k':
		if (t->sel > 0)
			t->sel--;
		return ACT_REDRAW;
	case KEY_DOWN:
	case 'j':
		if (t->sel + 1 < (int)t->model.nrows)
			t->sel++;
		return ACT_REDRAW;
	case KEY_NPAGE:
		t->sel += page;
		return ACT_REDRAW;
	case KEY_PPAGE:
		t->sel = t->sel > page ? t->sel - page : 0;
		return ACT_REDRAW;
	case KEY_HOME:
		t->sel = 0;
		return ACT_REDRAW;
	case KEY_END:
		t->sel = t->model.nrows > 0 ? (int)t->model.nrows - 1 : 0;
		return ACT_REDRAW;
	case 'n':
		model_set_sort(&t->model, COL_NAME);
		return ACT_REDRAW;
	case 'm':
		model_set_sort(&t->model, COL_MEMUSE);
		return ACT_REDRAW;
	case 'r':
		model_set_sort(&t->model, COL_REQUESTS);
		return ACT_REDRAW;
	case 'u':
		model_set_sort(&t->model, COL_INUSE);
		return ACT_REDRAW;
	case '<':
	case '>': {
		/* The next column shown, wrapping around. */
		const struct column *cols;
		size_t n = model_fit_columns(&t->model, COLS, &cols), i;
		for (i = 0; i < n && cols[i].col != t->model.sort; i++)
			;
		i = i == n ? 0 : key == '>' ? (i + 1) % n : (i + n - 1) % n;
		model_set_sort(&t->model, cols[i].col);
		return ACT_REDRAW;
	}
	case KEY_RESIZE:
		return ACT_REDRAW;
	default:
		if (key >= '1' && key <= '9') {
			/* The n-th column shown. */
			const struct column *cols;
			size_t n = model_fit_columns(&t->model, COLS, &cols);
			if ((size_t)(key - '1') < n)
				model_set_sort(&t->model, cols[key - '1'].col);
			return ACT_REDRAW;
		}
		return ACT_NONE;
	}
}
