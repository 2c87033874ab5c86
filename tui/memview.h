/*
 * memview.h - kvmtop's memory view: where the kernel's memory is, as one
 * bar of disjoint parts that add up to the total, from the kernel's own
 * memory summary (kvs_meminfo, census.h), and the allocators' totals from
 * the memstat list.  No curses and no kernel reads here: tests feed it.
 */
#ifndef TUI_MEMVIEW_H
#define TUI_MEMVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "census.h"
#include "memstat.h"

#define MV_PARTS 12

struct mv_part {
	char mark;              /* the bar's character for it */
	const char *name;       /* static */
	uint64_t kib;
};

struct memview {
	bool have;              /* a summary was read */
	bool incomplete;        /* some of its values were not in the dump */
	char error[256];        /* why there is no summary */
	const char *family;     /* "Linux", "FreeBSD" (static) */
	uint64_t total_kib;     /* the parts add up to this */
	struct mv_part part[MV_PARTS];
	int nparts;
	/* Bytes in use by each kernel allocator of the memstat list, and how
	 * many entries each has. */
	uint64_t alloc_bytes[3];   /* malloc(9), UMA, slab caches */
	size_t alloc_n[3];
};

/* The parts from a summary: Linux meminfo (free, page cache, anon, slab,
 * page tables, kernel stacks, vmalloc, per-CPU, other), FreeBSD top's
 * queues (active, inactive, laundry, wired, buffers, free, other).  0, or
 * -1 when the summary lacks its total (error says so). */
int memview_build(struct memview *mv, const struct kvs_counter *c, size_t n, bool incomplete);
/* The allocators' totals from a refreshed list. */
void memview_allocators(struct memview *mv, struct memory_type_list *list);
/* The bar, exactly width characters (plus NUL) of the parts' marks, each
 * part's cells in proportion to its size (a non-empty part gets at least
 * one cell when the width allows). */
void memview_bar(const struct memview *mv, char *out, int width);

#endif
