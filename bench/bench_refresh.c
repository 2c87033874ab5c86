/*
 * bench_refresh.c - cost of memstat_kvm_malloc refreshes against the number
 * of malloc types and CPUs, next to a naive libmemstat-style refresh.
 *
 * For each (types, CPUs) it builds a raw image from the bundled FreeBSD 14
 * fixture: the fixture's memory, then (through the DMAP) N malloc_type
 * records, their names, and 13+-style per-CPU statistics reached through
 * __pcpu offsets for every CPU.  It then times
 *   ours:  memstat_kvm_malloc() on a list that already holds the types
 *          (steady state: identity hash, names not re-read, no allocation);
 *   naive: what libmemstat does: read each name byte by byte, find the
 *          entry by a linear search on the name, read each CPU's record.
 *
 * and, for the same refresh counted once (untimed), the reads and bytes it
 * made, the time a memcpy of that many bytes takes (the floor), the list's
 * allocation count and every malloc in the process (both must be 0).
 *
 *   bench_refresh [--json] [--types N,..] [--cpus N,..] [fixture-dir]
 *                 [tmp-dir] [max-types]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BENCH_COUNTING
#include "bench_util.h"
#include "kread.h"
#include "memstat_internal.h"

#define DMAP BENCH_DMAP
#define KB   BENCH_KB
#define AREA BENCH_AREA          /* first PA the bench writes */

static int fd;

static void
put64(uint64_t pa, uint64_t v)
{
	bench_put(fd, pa, &v, 8);
}

static uint64_t
sym_pa(kvs_t *kd, const char *name)
{
	uint64_t a;

	if (kvs_symbol(kd, name, &a, NULL) != 0) {
		fprintf(stderr, "%s\n", kvs_geterr(kd));
		exit(1);
	}
	return a - KB;
}

/* Build the image; returns 0. */
static void
build(const char *fixdir, const char *path, unsigned ntypes, unsigned ncpus)
{
	kvs_t *kd;
	uint64_t next = 0, pcpu, names, types, zone = 0, slot = 64;
	unsigned i, c;

	kd = bench_image(fixdir, path, &fd);
	uint64_t o_next = bench_member(kd, "struct malloc_type", "ks_next");
	uint64_t o_ver = bench_member(kd, "struct malloc_type", "ks_version");
	uint64_t o_desc = bench_member(kd, "struct malloc_type", "ks_shortdesc");
	uint64_t o_st = bench_member(kd, "struct malloc_type", "ks_mti.mti_stats");

	pcpu = AREA;
	names = pcpu + (uint64_t)ncpus * 4096;
	types = names + (uint64_t)ntypes * 16;
	types = (types + 4095) & ~4095ULL;
	zone = types + (uint64_t)ntypes * 112;
	zone = (zone + 4095) & ~4095ULL;
	for (i = 0; i < ntypes; i++) {
		char nm[16];
		uint8_t mt[112] = { 0 };
		uint64_t st[8] = { 0 };

		if (slot == 64) {               /* a new per-CPU stats region */
			slot = 0;
			if (i > 0)
				zone += (uint64_t)ncpus * 4096;
		}
		snprintf(nm, sizeof(nm), "type%05u", i);
		bench_put(fd, names + i * 16ULL, nm, 16);
		uint64_t rec = zone + slot * 64;
		for (c = 0; c < ncpus; c++) {
			st[0] = (i + 1) * 1000ULL + c;
			st[1] = (i + 1) * 500ULL;
			st[2] = 10 + c;
			st[3] = 5;
			st[4] = 1ULL << (i % 14);
			bench_put(fd, rec + c * 4096ULL, st, 64);
		}
		slot++;
		memcpy(mt + o_next, &next, 8);
		uint64_t v = 2020110501, d = DMAP + names + i * 16ULL;
		uint64_t off = (DMAP + rec) - (DMAP + pcpu);
		memcpy(mt + o_ver, &v, 8);
		memcpy(mt + o_desc, &d, 8);
		memcpy(mt + o_st, &off, 8);
		bench_put(fd, types + i * 112ULL, mt, 112);
		next = DMAP + types + i * 112ULL;
	}
	put64(sym_pa(kd, "kmemstatistics"), next);
	put64(sym_pa(kd, "__pcpu"), DMAP + pcpu);
	{
		int32_t maxid = (int32_t)ncpus - 1, nc = (int32_t)ncpus;
		uint8_t bits[128] = { 0 };
		bench_put(fd, sym_pa(kd, "mp_maxid"), &maxid, 4);
		bench_put(fd, sym_pa(kd, "mp_ncpus"), &nc, 4);
		for (c = 0; c < ncpus; c++)
			bits[c / 8] |= 1 << (c % 8);
		bench_put(fd, sym_pa(kd, "all_cpus"), bits, sizeof(bits));
	}
	kvs_close(kd);
	close(fd);
}

/* ------------------------------------------------ the naive baseline */

struct naive {
	char name[32];
	uint64_t memalloced, memfreed, numallocs, numfrees, sizemask;
	uint64_t *percpu;       /* 5 per CPU */
};

static int
naive_refresh(kvs_t *kd, struct naive **arr, size_t *n, unsigned ncpus,
    uint64_t o_next, uint64_t o_desc, uint64_t o_st, uint64_t pcpu_base)
{
	uint64_t head, addr, p;
	uint8_t mt[112];

	kvs_symbol(kd, "kmemstatistics", &addr, NULL);
	if (kvs_read(kd, addr, &head, 8) != 0)
		return -1;
	for (p = head; p != 0;) {
		char name[32];
		size_t i, k;
		struct naive *e = NULL;
		uint64_t desc, off;

		if (kvs_read(kd, p, mt, sizeof(mt)) != 0)
			return -1;
		memcpy(&desc, mt + o_desc, 8);
		for (i = 0; i < sizeof(name) - 1; i++) {      /* byte by byte */
			if (kvs_read(kd, desc + i, &name[i], 1) != 0)
				return -1;
			if (name[i] == '\0')
				break;
		}
		name[i] = '\0';
		for (k = 0; k < *n; k++)                       /* linear search */
			if (strcmp((*arr)[k].name, name) == 0) {
				e = &(*arr)[k];
				break;
			}
		if (e == NULL) {
			*arr = realloc(*arr, (*n + 1) * sizeof(**arr));
			e = &(*arr)[(*n)++];
			memset(e, 0, sizeof(*e));
			e->percpu = malloc(5 * 8 * ncpus);
			strcpy(e->name, name);
		}
		e->memalloced = e->memfreed = e->numallocs = e->numfrees = e->sizemask = 0;
		memcpy(&off, mt + o_st, 8);
		for (unsigned c = 0; c < ncpus; c++) {
			uint64_t st[8];
			if (kvs_read(kd, pcpu_base + off + c * 4096ULL, st, 64) != 0)
				return -1;
			e->memalloced += st[0];
			e->memfreed += st[1];
			e->numallocs += st[2];
			e->numfrees += st[3];
			e->sizemask |= st[4];
			memcpy(e->percpu + 5 * c, st, 40);
		}
		memcpy(&p, mt + o_next, 8);
	}
	return 0;
}

/* The naive refresh as bench_side_by_side calls it. */
struct side {
	kvs_t *kd;
	struct naive **arr;
	size_t *n;
	unsigned ncpus;
	uint64_t o_next, o_desc, o_st, pcpu_base;
};

static int
side_naive(void *p)
{
	struct side *s = p;
	return naive_refresh(s->kd, s->arr, s->n, s->ncpus, s->o_next, s->o_desc, s->o_st,
	    s->pcpu_base);
}

static void
usage(void)
{
	fprintf(stderr, "usage: bench_refresh [--json] [--types N,..] [--cpus N,..] "
	    "[fixture-dir] [tmp-dir] [max-types]\n"
	    "       bench_refresh --image PATH TYPES CPUS [fixture-dir]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	/* bench_refresh --image PATH TYPES CPUS [fixture-dir]: only build an
	 * image (used by bench_tui.sh). */
	if (argc >= 5 && strcmp(argv[1], "--image") == 0) {
		build(argc > 5 ? argv[5] : "fixtures/cores/fbsd14", argv[2],
		    (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]));
		return 0;
	}
	unsigned ntypes[8] = { 200, 2000, 20000 }, ncpus[8] = { 8, 64, 256 };
	size_t nt = 3, nc = 3, ti, ci;
	const char *pos[3] = { "fixtures/cores/fbsd14", "/tmp", NULL };
	int json = 0, npos = 0, a, profile = 0;

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--json") == 0)
			json = 1;
		else if (strcmp(argv[a], "--profile") == 0 && a + 1 < argc)
			profile = atoi(argv[++a]);      /* only ours, N times: for perf */
		else if (strcmp(argv[a], "--types") == 0 && a + 1 < argc)
			nt = bench_list(argv[++a], ntypes, 8);
		else if (strcmp(argv[a], "--cpus") == 0 && a + 1 < argc)
			nc = bench_list(argv[++a], ncpus, 8);
		else if (argv[a][0] == '-' || npos == 3)
			usage();
		else
			pos[npos++] = argv[a];
	}
	const char *fixdir = pos[0], *tmp = pos[1];
	unsigned maxtypes = pos[2] ? (unsigned)atoi(pos[2]) : 20000;
	char path[4096], kernel[4096], err[KVS_ERRBUF_SIZE];

	snprintf(path, sizeof(path), "%s/kvs-bench-refresh.raw", tmp);
	snprintf(kernel, sizeof(kernel), "%s/kernel", fixdir);
	if (!json)
		printf("%7s %5s %10s %10s %10s %9s %7s %8s %9s %7s %7s %10s %9s %10s %9s %9s %9s %9s\n",
		    "types", "cpus", "ours ms", "naive ms", "memcpy ms", "MiB read", "reads",
		    "vs naive", "vs memcpy", "allocs", "mallocs", "gather ms", "vs gather",
		    "reads ms", "vs reads", "list ms", "g+l", "vs g+l");
	for (ti = 0; ti < nt; ti++) {
		if (ntypes[ti] > maxtypes)
			continue;
		for (ci = 0; ci < nc; ci++) {
			struct memory_type_list *l;
			struct naive *arr = NULL;
			size_t n = 0, i;
			double t0, ours = 1e9, naive = 1e9, floor;
			unsigned long ev0, nreads, nmallocs;
			uint64_t nbytes;
			kvs_t *kd;
			int r, reps = ntypes[ti] * ncpus[ci] > 1000000 ? 5 : 15;

			build(fixdir, path, ntypes[ti], ncpus[ci]);
			kd = kvs_open(kernel, path, KVS_O_RAW, err);
			if (kd == NULL) {
				fprintf(stderr, "%s\n", err);
				return 1;
			}
			l = memstat_mtl_alloc();
			if (memstat_kvm_malloc(l, kd) != 0 || memstat_mtl_count(l) != ntypes[ti]) {
				fprintf(stderr, "refresh: %s (%zu types)\n", kvs_geterr(kd),
				    memstat_mtl_count(l));
				return 1;
			}
			for (r = 0; r < profile; r++) {
				t0 = bench_now();
				memstat_kvm_malloc(l, kd);
				if (bench_now() - t0 < ours)
					ours = bench_now() - t0;
			}
			if (profile > 0) {
				fprintf(stderr, "ours best of %d: %.3f ms\n", profile, ours * 1e3);
				return 0;
			}
			/* One untimed steady-state refresh, counted: reads, bytes,
			 * the list's own allocation count and every malloc. */
			ev0 = l->mtl_alloc_events;
			bench_count_start();
			memstat_kvm_malloc(l, kd);
			bench_count_stop();
			nreads = bench_nreads;
			nbytes = bench_nbytes;
			nmallocs = bench_nmallocs;
			unsigned long allocs = l->mtl_alloc_events - ev0;
			uint64_t o_next, o_desc, o_st, pcpu_sym, pcpu_base;
			struct kvs_typeinfo tt;
			kvs_member(kd, "struct malloc_type", "ks_next", &tt); o_next = tt.offset;
			kvs_member(kd, "struct malloc_type", "ks_shortdesc", &tt); o_desc = tt.offset;
			kvs_member(kd, "struct malloc_type", "ks_mti.mti_stats", &tt); o_st = tt.offset;
			kvs_symbol(kd, "__pcpu", &pcpu_sym, NULL);
			kvs_read(kd, pcpu_sym, &pcpu_base, 8);
			/* Side by side (bench_side_by_side), each best of reps. */
			struct side sd = { kd, &arr, &n, ncpus[ci], o_next, o_desc, o_st, pcpu_base };
			if (bench_side_by_side(&reps, memstat_kvm_malloc, l, kd, side_naive, &sd, &ours,
			    &naive) != 0) {
				fprintf(stderr, "refresh: %s\n", kvs_geterr(kd));
				return 1;
			}
			floor = bench_memcpy_floor(nbytes, reps);
			double rfloor = bench_reads_floor(kd, reps);
			double gfloor = bench_gather_floor(kd, path, nbytes, reps);
			/* A reference, not a floor: the bytes copied from where
			 * they lie, plus this library's list bookkeeping alone. */
			double lfloor = bench_list_floor(l, ALLOCATOR_MALLOC, ncpus[ci], reps);
			double ref = gfloor > 0 ? gfloor + lfloor : -1;
			if (json)
				printf("{\"types\": %u, \"cpus\": %u, \"ours_ms\": %.4f, \"naive_ms\": %.4f, "
				    "\"memcpy_ms\": %.4f, \"bytes_read\": %llu, \"reads\": %lu, "
				    "\"speedup_vs_naive\": %.2f, \"ours_over_memcpy\": %.2f, "
				    "\"gather_ms\": %.4f, \"reads_ms\": %.4f, \"ours_over_gather\": %.2f, "
				    "\"ours_over_reads\": %.2f, \"list_ms\": %.4f, "
				    "\"gather_list_over_memcpy\": %.2f, \"ours_over_gather_list\": %.2f, "
				    "\"steady_list_allocs\": %lu, \"steady_mallocs\": %lu}\n",
				    ntypes[ti], ncpus[ci], ours * 1e3, naive * 1e3, floor * 1e3,
				    (unsigned long long)nbytes, nreads, naive / ours, ours / floor,
				    gfloor * 1e3, rfloor * 1e3, gfloor > 0 ? ours / gfloor : -1,
				    rfloor > 0 ? ours / rfloor : -1, lfloor * 1e3,
				    ref > 0 ? ref / floor : -1, ref > 0 ? ours / ref : -1,
				    allocs, nmallocs);
			else
				printf("%7u %5u %10.3f %10.3f %10.3f %9.2f %7lu %7.1fx %8.2fx %7lu %7lu %10.3f %8.2fx %10.3f %8.2fx %9.3f %8.2fx %8.2fx\n",
				    ntypes[ti], ncpus[ci], ours * 1e3, naive * 1e3, floor * 1e3,
				    nbytes / 1048576.0, nreads, naive / ours, ours / floor, allocs,
				    nmallocs,
				    gfloor * 1e3, gfloor > 0 ? ours / gfloor : -1, rfloor * 1e3,
				    rfloor > 0 ? ours / rfloor : -1, lfloor * 1e3,
				    ref > 0 ? ref / floor : -1, ref > 0 ? ours / ref : -1);
			fflush(stdout);
			for (i = 0; i < n; i++)
				free(arr[i].percpu);
			free(arr);
			memstat_mtl_free(l);
			kvs_close(kd);
		}
	}
	unlink(path);
	return 0;
}
