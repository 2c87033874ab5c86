/* bench_util.h - pieces the benchmarks share: a clock, file writes, DWARF
 * offsets of the fixture kernel, and the image every refresh benchmark
 * starts from (the fixture's own memory, more added through the DMAP). */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvmstat.h"
#include "memstat.h"
#include "memstat_internal.h"

#define BENCH_DMAP 0xfffff80000000000ULL
#define BENCH_KB   0xffffffff80000000ULL
#define BENCH_AREA 0x1000000ULL   /* first physical address the benches add */

static inline double
bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline void
bench_put(int fd, uint64_t pa, const void *b, size_t n)
{
	if (pwrite(fd, b, n, (off_t)pa) != (ssize_t)n) {
		perror("pwrite");
		exit(1);
	}
}

static inline uint64_t
bench_member(kvs_t *kd, const char *t, const char *m)
{
	struct kvs_typeinfo ti;
	if (kvs_member(kd, t, m, &ti) != 0) {
		fprintf(stderr, "%s\n", kvs_geterr(kd));
		exit(1);
	}
	return ti.offset;
}

/* Copy the fixture's raw image to `path` (fd returned in *fd) and open it. */
static inline kvs_t *
bench_image(const char *fixdir, const char *path, int *fd)
{
	char src[4096], err[KVS_ERRBUF_SIZE];
	uint8_t *img = malloc(8 << 20);
	size_t n;
	FILE *f;
	kvs_t *kd;

	snprintf(src, sizeof(src), "%s/mem.raw", fixdir);
	f = fopen(src, "rb");
	if (f == NULL || img == NULL) {
		perror(src);
		exit(1);
	}
	n = fread(img, 1, 8 << 20, f);
	fclose(f);
	*fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	bench_put(*fd, 0, img, n);
	free(img);
	snprintf(src, sizeof(src), "%s/kernel", fixdir);
	kd = kvs_open(src, path, KVS_O_RAW, err);
	if (kd == NULL) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	return kd;
}

/* ------------------------------------------- counting reads and mallocs
 *
 * The refresh benches link with -Wl,--wrap=kvs_read (and kvs_peek), so every
 * kvs_read the library's walkers (and the naive baseline) make goes through
 * here, and
 * they define malloc/calloc/realloc in the executable, which glibc lets
 * replace its own for the whole process (shared libraries included).  Both
 * only count while bench_counting is set: the timed runs count nothing. */
#ifdef BENCH_COUNTING
static int bench_counting;
static unsigned long bench_nreads, bench_nmallocs;
static uint64_t bench_nbytes;

/* The reads of the counted refresh, in order, kept for the two floors
 * below (static: recording must not malloc). */
#define BENCH_MAXREC (1u << 20)
static struct bench_rec {
	uint64_t kva;
	size_t len;
} bench_rec[BENCH_MAXREC];
static unsigned long bench_nrec;

int __real_kvs_read(kvs_t *kd, uint64_t kva, void *buf, size_t len);
int __wrap_kvs_read(kvs_t *kd, uint64_t kva, void *buf, size_t len);
int
__wrap_kvs_read(kvs_t *kd, uint64_t kva, void *buf, size_t len)
{
	if (bench_counting) {
		bench_nreads++;
		bench_nbytes += len;
		if (bench_nrec < BENCH_MAXREC)
			bench_rec[bench_nrec++] = (struct bench_rec){ kva, len };
	}
	return __real_kvs_read(kd, kva, buf, len);
}

/* Bytes a walker sums where they lie in the dump (kvs_peek) count as read
 * too: the floors below copy them like the rest. */
const void *__real_kvs_peek(kvs_t *kd, uint64_t kva, size_t len);
const void *__wrap_kvs_peek(kvs_t *kd, uint64_t kva, size_t len);
const void *
__wrap_kvs_peek(kvs_t *kd, uint64_t kva, size_t len)
{
	const void *p = __real_kvs_peek(kd, kva, len);

	if (bench_counting && p != NULL) {
		bench_nreads++;
		bench_nbytes += len;
		if (bench_nrec < BENCH_MAXREC)
			bench_rec[bench_nrec++] = (struct bench_rec){ kva, len };
	}
	return p;
}

/*
 * Two floors between the memcpy floor (all the bytes in one contiguous
 * copy, which no walk that follows pointers can approach) and a refresh:
 *   reads:  the counted refresh's kvs_read calls replayed alone, same
 *           addresses, same order (translation and copy; no bookkeeping);
 *   gather: the same ranges copied straight from the image's own mapping
 *           at their physical addresses (translated beforehand, page by
 *           page): the cost of touching those bytes where they lie.
 * Best of reps; -1 when the refresh made more reads than were recorded.
 */
static inline double
bench_reads_floor(kvs_t *kd, int reps)
{
	static uint8_t buf[1 << 20];
	double best = 1e9;
	unsigned long i;
	int r;

	if (bench_nrec >= BENCH_MAXREC)
		return -1;
	for (r = 0; r < reps; r++) {
		double t0 = bench_now();
		for (i = 0; i < bench_nrec; i++)
			if (bench_rec[i].len <= sizeof(buf))
				__real_kvs_read(kd, bench_rec[i].kva, buf, bench_rec[i].len);
		__asm__ volatile("" : : "r"(buf) : "memory");
		if (bench_now() - t0 < best)
			best = bench_now() - t0;
	}
	return best;
}

static inline double
bench_gather_floor(kvs_t *kd, const char *image, uint64_t nbytes, int reps)
{
	struct seg { uint64_t pa; size_t len; } *seg = NULL;
	size_t nseg = 0, cap = 0, out = 0, k;
	double best = 1e9;
	uint8_t *dst;
	const uint8_t *map;
	off_t size;
	unsigned long i;
	int fd, r;

	if (bench_nrec >= BENCH_MAXREC)
		return -1;
	for (i = 0; i < bench_nrec; i++) {
		uint64_t kva = bench_rec[i].kva, end = kva + bench_rec[i].len;
		while (kva < end) {
			uint64_t pa, n = 4096 - (kva & 4095);
			if (n > end - kva)
				n = end - kva;
			if (kvs_kvtop(kd, kva, &pa) != 0)
				return -1;
			if (nseg == cap) {
				cap = cap ? cap * 2 : 4096;
				seg = realloc(seg, cap * sizeof(*seg));
				if (seg == NULL)
					exit(1);
			}
			seg[nseg++] = (struct seg){ pa, (size_t)n };
			kva += n;
		}
	}
	fd = open(image, O_RDONLY);
	size = fd < 0 ? 0 : lseek(fd, 0, SEEK_END);
	map = size > 0 ? mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
	dst = malloc(nbytes ? nbytes : 1);
	if (map == MAP_FAILED || dst == NULL) {
		perror(image);
		exit(1);
	}
	for (k = 0; k < nseg; k++)
		if (seg[k].pa + seg[k].len > (uint64_t)size)
			return -1;
	for (r = 0; r < reps; r++) {
		double t0 = bench_now();
		for (k = 0, out = 0; k < nseg; k++) {
			memcpy(dst + out, map + seg[k].pa, seg[k].len);
			out += seg[k].len;
		}
		__asm__ volatile("" : : "r"(dst) : "memory");
		if (bench_now() - t0 < best)
			best = bench_now() - t0;
	}
	munmap((void *)map, (size_t)size);
	close(fd);
	free(dst);
	if (nseg)
		free(seg);
	return best;
}

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
void *malloc(size_t n);
void *calloc(size_t n, size_t m);
void *realloc(void *p, size_t n);
void *
malloc(size_t n)
{
	bench_nmallocs += bench_counting != 0;
	return __libc_malloc(n);
}
void *
calloc(size_t n, size_t m)
{
	bench_nmallocs += bench_counting != 0;
	return __libc_calloc(n, m);
}
void *
realloc(void *p, size_t n)
{
	bench_nmallocs += bench_counting != 0;
	return __libc_realloc(p, n);
}

static inline void
bench_count_start(void)
{
	bench_nreads = bench_nmallocs = bench_nrec = 0;
	bench_nbytes = 0;
	bench_counting = 1;
}

static inline void
bench_count_stop(void)
{
	bench_counting = 0;
}
#endif

/* The floor: the best time of a memcpy of `bytes` from one buffer of that
 * size to another (both touched first), best of `reps`. */
static inline double
bench_memcpy_floor(uint64_t bytes, int reps)
{
	size_t n = bytes ? (size_t)bytes : 1;
	char *a = malloc(n), *b = malloc(n);
	double best = 1e9;
	int r;

	if (a == NULL || b == NULL) {
		perror("memcpy floor");
		exit(1);
	}
	memset(a, 1, n);
	memset(b, 2, n);
	for (r = 0; r < reps; r++) {
		double t0 = bench_now();
		memcpy(b, a, n);
		__asm__ volatile("" : : "r"(b) : "memory");
		if (bench_now() - t0 < best)
			best = bench_now() - t0;
	}
	free(a);
	free(b);
	return best;
}

/* How many runs each measurement of a row takes: enough for about
 * BENCH_BUDGET_S seconds of ours and the baseline together (one of each
 * took `one` seconds), at least `least` and at most 2000.  On a shared
 * machine the best of a few runs of a short refresh is mostly noise; runs
 * are cheap there, so short rows get many. */
#define BENCH_BUDGET_S 0.25
static inline int
bench_reps(double one, int least)
{
	double n = one > 0 ? BENCH_BUDGET_S / one : 2000;

	return n < least ? least : n > 2000 ? 2000 : (int)n;
}

/*
 * This library's list bookkeeping alone, as a walker of `allocator` drives
 * it, without reading the kernel (best of reps): begin; each entry upserted
 * in the kernel's order (the list's, backwards; the guess right every
 * time); what the walker then writes to the entry; commit.  malloc (13+)
 * defers its counters (mtl_counters_flow) and shows per-CPU records from
 * the store; UMA (13+) writes the zone's fields and every CPU's cache slot
 * as it walks, and its counters in a second pass (finish_zone).  The
 * per-CPU records malloc copies to the store are left out (the gather
 * floor copies those bytes).  The list must hold the entries; their
 * counters and per-CPU records are left meaningless: free the list next.
 */
static inline double
bench_list_floor(struct memory_type_list *l, int allocator, unsigned ncpus, int reps)
{
	struct memory_type *mt, **order;
	size_t n = 0, i;
	double best = 1e9;
	unsigned c;
	int r, is_new;

	for (mt = l->mtl_head; mt != NULL && mt->mt_next != NULL; mt = mt->mt_next)
		;
	order = malloc((memstat_mtl_count(l) + 1) * sizeof(*order));
	if (order == NULL)
		exit(1);
	for (; mt != NULL; mt = mt->mt_prev)
		if (mt->mt_allocator == allocator)
			order[n++] = mt;
	for (r = 0; r < reps + 2; r++) {
		double t0 = bench_now(), t;
		struct mt_percpu_alloc_s *blk = NULL;
		if (mtl_refresh_begin(l, allocator, ncpus) != 0)
			exit(1);
		l->mtl_fill_alloc = MTL_PCPU_UNUSED;
		l->mtl_fill_cache = allocator == ALLOCATOR_MALLOC ? MTL_PCPU_UNUSED : MTL_PCPU_FILLED;
		l->mtl_defer_counters = allocator == ALLOCATOR_MALLOC;
		for (i = 0; i < n; i++) {
			if ((mt = mtl_upsert(l, allocator, order[i]->mt_kaddr, &is_new)) != order[i])
				exit(1);
			if (allocator != ALLOCATOR_MALLOC) {
				struct mt_percpu_cache_s *pc = mt->mt_percpu_valid ?
				    mt->mt_percpu_cache : NULL;
				mt->mt_sleeps = i;
				mt->mt_countlimit = 0;
				mt->mt_size = mt->mt_rsize = 256;
				for (c = 0; pc != NULL && c < ncpus; c++)
					pc[c].mtp_free = c;
				mt->mt_free += ncpus;
				mt->mt_zonefree += 1;
				mt->mt_dom_zonefree[0] += 1;
			}
		}
		if (allocator == ALLOCATOR_MALLOC) {
			if (mtl_store_reserve(l, allocator, n * ncpus) != 0 ||
			    (blk = mtl_store_take(l, allocator, n * ncpus)) == NULL)
				exit(1);
			for (i = 0; i < n; i++) {
				mt = order[i];
				mtl_counters_flow(mt, i, i, i, i, 0);
				mtl_store_view(l, mt, blk + i, n, ncpus);
			}
		} else {
			for (i = 0; i < n; i++) {
				mt = order[i];
				mt->mt_failures = 0;
				mt->mt_xdomain = 0;
				mt->mt_ndomains = 1;
				mt->mt_numallocs = mt->mt_numfrees = i;
				mt->mt_byteslimit = mt->mt_countlimit * mt->mt_size;
				mt->mt_memalloced = mt->mt_memfreed = i * mt->mt_size;
				mt->mt_bytes = mt->mt_count = 0;
				mt->mt_free += mt->mt_zonefree + mt->mt_kegfree;
			}
		}
		mtl_refresh_commit(l, allocator);
		if ((t = bench_now() - t0) < best && r >= 2)
			best = t;
	}
	free(order);
	return best;
}

/* One side of bench_side_by_side: ours (a memstat refresh of l from kd)
 * when set, else the baseline with ctx. */
struct bench_side {
	int (*ours)(struct memory_type_list *, void *);
	struct memory_type_list *l;
	kvs_t *kd;
	int (*base)(void *);
	void *ctx;
};

/* A round of one side: untimed runs until two in a row take within 10% of
 * each other (at least 2; at most 30 or about 2 s), then `per` timed runs,
 * the best kept in *best. */
static inline int
bench_round(const struct bench_side *f, int per, double *best)
{
	double start = bench_now(), prev = 0;
	int i;

	for (i = 0; i < 30 && bench_now() - start < 2.0; i++) {
		double t0 = bench_now(), t;
		if ((f->ours != NULL ? f->ours(f->l, f->kd) : f->base(f->ctx)) != 0)
			return -1;
		t = bench_now() - t0;
		if (i >= 1 && t <= prev * 1.1 && prev <= t * 1.1)
			break;
		prev = t;
	}
	for (i = 0; i < per; i++) {
		double t0 = bench_now(), t;
		if ((f->ours != NULL ? f->ours(f->l, f->kd) : f->base(f->ctx)) != 0)
			return -1;
		if ((t = bench_now() - t0) < *best)
			*best = t;
	}
	return 0;
}

/*
 * Ours and the baseline side by side, best of *reps runs each (first set
 * from one run of each, at least the *reps given: bench_reps): in rounds of
 * a few runs of one, then a few of the other, as the memcpy floor is timed
 * (one run after another, so what a run leaves in the caches serves the next
 * of its kind, never the other's), the rounds alternating so that a slow
 * patch of the shared machine falls on both.  Each round begins with
 * untimed runs until the times settle (bench_round): on this machine's
 * hypervisor, memory the guest has not touched for a moment (while the
 * other ran, or idle) is slow to touch again for the next few runs, up to
 * ten times at 20,000 types x 64 CPUs, whoever touches it; that is the
 * host's cost, not the refresh's.  Ours is a memstat refresh of list l from
 * kd; the baseline gets ctx.  Each returns 0, or -1 to stop (then so does
 * this).
 */
static inline int
bench_side_by_side(int *reps, int (*ours)(struct memory_type_list *, void *),
    struct memory_type_list *l, kvs_t *kd, int (*base)(void *), void *ctx,
    double *best_ours, double *best_base)
{
	enum { ROUNDS = 3 };
	const struct bench_side o = { ours, l, kd, NULL, NULL }, b = { NULL, NULL, NULL, base, ctx };
	double t0 = bench_now();
	int per, round;

	if (ours(l, kd) != 0 || base(ctx) != 0)
		return -1;
	*reps = bench_reps(bench_now() - t0, *reps);
	per = (*reps + ROUNDS - 1) / ROUNDS;
	*best_ours = *best_base = 1e9;
	for (round = 0; round < ROUNDS; round++)
		if (bench_round(&o, per, best_ours) != 0 || bench_round(&b, per, best_base) != 0)
			return -1;
	return 0;
}

/* "200,2000" -> up to max numbers; returns how many. */
static inline size_t
bench_list(const char *s, unsigned *out, size_t max)
{
	size_t n = 0;
	char *end;

	while (*s != '\0' && n < max) {
		out[n++] = (unsigned)strtoul(s, &end, 10);
		if (*end != ',')
			break;
		s = end + 1;
	}
	return n;
}

#endif
