/*
 * memview.c - the memory view's model (memview.h): the kernel's memory
 * summary cut into disjoint parts, the bar that draws them, and the
 * allocators' totals.
 */
#include <stdio.h>
#include <string.h>

#include "memview.h"

static const struct kvs_counter *
find(const struct kvs_counter *c, size_t n, const char *group, const char *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((group == NULL || (c[i].group != NULL && strcmp(c[i].group, group) == 0)) &&
		    (strcmp(c[i].key, key) == 0 || strcmp(c[i].name, key) == 0) &&
		    !(c[i].flags & KVS_CF_UNREADABLE))
			return &c[i];
	return NULL;
}

static uint64_t
kib(const struct kvs_counter *c)
{
	if (c == NULL)
		return 0;
	switch (c->unit) {
	case KVS_UNIT_KIB: return c->value;
	case KVS_UNIT_BYTES: return c->value / 1024;
	default: return 0;     /* pages and counts: not a size here */
	}
}

struct want {
	char mark;
	const char *name;
	const char *keys[3];   /* summed */
};

static const struct want linux_parts[] = {
	{ 'A', "anon", { "AnonPages" } },
	{ 'C', "page cache", { "Cached", "Buffers" } },
	{ 'S', "slab", { "Slab" } },
	{ 'T', "page tables", { "PageTables", "SecPageTables" } },
	{ 'K', "kernel stacks", { "KernelStack" } },
	{ 'V', "vmalloc", { "VmallocUsed" } },
	{ 'P', "per-CPU", { "Percpu" } },
	{ 'F', "free", { "MemFree" } },
};

static const struct want freebsd_parts[] = {
	{ 'A', "active", { "Active" } },
	{ 'I', "inactive", { "Inact" } },
	{ 'L', "laundry", { "Laundry" } },
	{ 'W', "wired", { "Wired" } },
	{ 'B', "buffers", { "Buf" } },
	{ 'F', "free", { "Free" } },
};

int
memview_build(struct memview *mv, const struct kvs_counter *c, size_t n, bool incomplete)
{
	const struct want *w;
	const char *group;
	size_t nw, i, j;
	uint64_t total, sum = 0;

	memset(mv->part, 0, sizeof(mv->part));
	mv->nparts = 0;
	mv->have = false;
	mv->incomplete = incomplete;
	mv->error[0] = '\0';
	if (find(c, n, "meminfo", "MemTotal") != NULL) {
		mv->family = "Linux";
		w = linux_parts;
		nw = sizeof(linux_parts) / sizeof(linux_parts[0]);
		group = "meminfo";
		total = kib(find(c, n, group, "MemTotal"));
	} else if (find(c, n, "queues", "Free") != NULL) {
		mv->family = "FreeBSD";
		w = freebsd_parts;
		nw = sizeof(freebsd_parts) / sizeof(freebsd_parts[0]);
		group = "queues";
		total = 0;
		for (i = 0; i < nw; i++)
			total += kib(find(c, n, group, w[i].keys[0]));
		/* The pages the kernel manages, when vm_cnt says: what the queues
		 * do not hold is "other". */
		const struct kvs_counter *pc = find(c, n, "vm", "v_page_count");
		const struct kvs_counter *ps = find(c, n, "vm", "v_page_size");
		if (pc != NULL && ps != NULL && pc->value * (ps->value / 1024) > total)
			total = pc->value * (ps->value / 1024);
	} else {
		snprintf(mv->error, sizeof(mv->error), "the memory summary has no total");
		return -1;
	}
	for (i = 0; i < nw && mv->nparts < MV_PARTS - 1; i++) {
		struct mv_part *p = &mv->part[mv->nparts++];
		p->mark = w[i].mark;
		p->name = w[i].name;
		for (j = 0; j < 3 && w[i].keys[j] != NULL; j++)
			p->kib += kib(find(c, n, group, w[i].keys[j]));
		sum += p->kib;
	}
	/* The rest of the total: the kernel's image, reserved and huge pages,
	 * memory no counter names.  Parts that overlap (a counter that counts
	 * what another does) can exceed the total: then the total grows. */
	mv->part[mv->nparts].mark = '.';
	mv->part[mv->nparts].name = "other";
	mv->part[mv->nparts].kib = total > sum ? total - sum : 0;
	mv->nparts++;
	mv->total_kib = total > sum ? total : sum;
	mv->have = true;
	return 0;
}

void
memview_allocators(struct memview *mv, struct memory_type_list *list)
{
	struct memory_type *mt;

	memset(mv->alloc_bytes, 0, sizeof(mv->alloc_bytes));
	memset(mv->alloc_n, 0, sizeof(mv->alloc_n));
	if (list == NULL)
		return;
	for (mt = memstat_mtl_first(list); mt != NULL; mt = memstat_mtl_next(mt)) {
		int a = memstat_get_allocator(mt);
		int k = a == ALLOCATOR_MALLOC ? 0 : a == ALLOCATOR_UMA ? 1 :
		    a == ALLOCATOR_SLAB ? 2 : -1;
		if (k < 0 || memstat_get_vanished(mt))
			continue;
		mv->alloc_bytes[k] += memstat_get_bytes(mt);
		mv->alloc_n[k]++;
	}
}

void
memview_bar(const struct memview *mv, char *out, int width)
{
	int i, used = 0, cells[MV_PARTS], left, biggest = -1;

	if (width <= 0) {
		if (out != NULL)
			out[0] = '\0';
		return;
	}
	memset(out, ' ', (size_t)width);
	out[width] = '\0';
	if (!mv->have || mv->total_kib == 0)
		return;
	/* Each part its share, rounded down; a non-empty part at least one
	 * cell; the remainder to the largest parts' rounding. */
	for (i = 0; i < mv->nparts; i++) {
		cells[i] = (int)((double)mv->part[i].kib * width / (double)mv->total_kib);
		if (cells[i] == 0 && mv->part[i].kib > 0)
			cells[i] = 1;
		used += cells[i];
		if (biggest < 0 || mv->part[i].kib > mv->part[biggest].kib)
			biggest = i;
	}
	/* Too many cells (the minimum of one): take from the biggest. */
	while (used > width && biggest >= 0 && cells[biggest] > 1) {
		cells[biggest]--;
		used--;
	}
	left = width - used;
	if (left > 0 && biggest >= 0)
		cells[biggest] += left;
	used = 0;
	for (i = 0; i < mv->nparts; i++) {
		int k;
		for (k = 0; k < cells[i] && used < width; k++)
			out[used++] = mv->part[i].mark;
	}
}
