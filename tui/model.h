/*
 * model.h - kvmtop's model: rows over a memory_type_list with deltas and
 * rates, sorting and filtering.  No curses here: tests drive it directly.
 *
 * History lives in each entry's caller slots (libmemstat's intended use), so
 * a refresh is the list's incremental refresh plus one pass over the rows;
 * the row array only grows when the kernel gains types.
 */
#ifndef TUI_MODEL_H
#define TUI_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memstat.h"

enum col {
	COL_NAME, COL_INUSE, COL_MEMUSE, COL_REQUESTS, COL_DINUSE, COL_DMEM,
	COL_RATE, COL_SIZES,
	/* Zone and slab-cache columns, and the kernel address. */
	COL_ADDR, COL_SIZE, COL_FREE, COL_FAIL, COL_OBJS, COL_ACTIVE, COL_USE,
	COL_OBJSIZE, COL_SLABS, COL_OBJPERSLAB, COL_CACHESIZE, COL__COUNT
};

/* One column of a view: what it shows, its title there, its width on screen
 * (a right-aligned column's width includes the space before it; 0: the rest
 * of the line) and whether it is left-aligned. */
struct column {
	enum col col;
	const char *title;
	int width;
	bool left;
	int drop;               /* narrow screens drop the highest first; 0: never */
};

/* The least width of the rest-of-line column (SIZES): a title or a number. */
#define COL_REST_MIN 9

struct row {
	struct memory_type *mt;
	int64_t d_inuse;        /* since the previous refresh */
	int64_t d_bytes;
	double rate;            /* requests per second since the previous refresh */
};

struct model {
	struct memory_type_list *list;
	struct row *rows;       /* visible rows, sorted and filtered */
	size_t nrows, cap;
	int allocator;          /* rows shown: ALLOCATOR_MALLOC, _UMA or _SLAB */
	bool show_addr;         /* the ADDRESS column is shown */
	enum col sort;
	bool reverse;
	char filter[64];
	uint64_t refreshes;
	double last_time;       /* seconds, monotonic, of the last good refresh */
	double refresh_ms;      /* cost of the last refresh */
	bool failed;            /* the last refresh failed; rows are the last good ones */
	char error[512];
	/* Totals of the rows shown (the filter's, when one is set); nall is
	 * how many rows the view has unfiltered. */
	uint64_t total_bytes, total_inuse, total_requests;
	size_t nunknown;        /* rows shown whose count is not known (not in the totals) */
	double total_rate;
	size_t nall;
};

/* One line of the per-CPU screen: a CPU (or memory domain) and its figures,
 * whose titles model_percpu_titles gives for the row's allocator. */
struct percpu_line {
	unsigned id;
	bool domain;            /* a UMA memory domain, not a CPU */
	uint64_t v[4];
};

/* Caller slots used for history (documented so other callers avoid them). */
#define SLOT_PREV_REQ   0
#define SLOT_PREV_COUNT 1
#define SLOT_PREV_BYTES 2
#define SLOT_SEEN       3
#define SLOT_DINUSE     4   /* last delta of INUSE (two's complement) */
#define SLOT_DBYTES     5
#define SLOT_RATE       6   /* double bits */

int model_init(struct model *m);
void model_free(struct model *m);
/* Apply one refresh result: `ok` from memstat_kvm_all; `now` in seconds.
 * Computes deltas/rates, keeps the last good rows on failure. */
void model_update(struct model *m, bool ok, const char *err, double now, double cost_ms);
/* Rebuild the visible rows (after sort/filter changes). */
void model_rebuild(struct model *m);
void model_set_sort(struct model *m, enum col c);   /* same column twice reverses */
void model_set_filter(struct model *m, const char *substr);
const char *col_title(enum col c);
/* The columns of the current view, in screen order (the ADDRESS column only
 * when show_addr).  Returns their number; *out points into a static table. */
size_t model_columns(const struct model *m, const struct column **out);
/* The columns that fit in `width` screen columns: those of model_columns
 * less the least important (highest `drop`) until the rest fit, so no
 * cell is ever cut.  *out points into a static table. */
size_t model_fit_columns(const struct model *m, int width, const struct column **out);
/* Per-CPU figures of entry mt: malloc types their allocations and frees,
 * UMA zones the items each CPU caches and each domain's free items, slab
 * caches the free objects each CPU holds.  Lines with nothing are left out.
 * Returns the number of lines written (at most max).  model_percpu_titles
 * points *titles at the names of an allocator's figures and returns how
 * many there are (v[0] onwards). */
size_t model_percpu(const struct memory_type *mt, struct percpu_line *out, size_t max);
size_t model_percpu_titles(int allocator, const char *const **titles);
/* Title of column c in the current view. */
const char *model_col_title(const struct model *m, enum col c);
/* Show another allocator's rows; the sort moves to that view's default when
 * its column is not shown there. */
void model_set_allocator(struct model *m, int allocator);

#endif
