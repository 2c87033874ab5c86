/*
 * bench_uma.c - cost of memstat_kvm_uma refreshes for 100, 1,000 and
 * 10,000 zones at 8, 64 and 256 CPUs, next to a naive libmemstat-style
 * refresh (names read byte by byte, entries found by a linear search on the
 * name, counter(9) read CPU by CPU).
 *
 * Images are built from the bundled FreeBSD 14 fixture: its memory, then
 * (through the DMAP) kegs, zones with their per-CPU caches and two domain
 * records, names and counter(9) regions, all laid out with the fixture
 * kernel's DWARF offsets.
 *
 * Like bench_refresh, one untimed refresh is counted: reads, bytes, the
 * memcpy floor for those bytes, the list's allocations and every malloc.
 *
 *   bench_uma [--json] [--zones N,..] [--cpus N,..] [fixture-dir] [tmp-dir]
 *             [max-zones]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BENCH_COUNTING
#include "bench_util.h"
#include "kread.h"
#include "memstat_internal.h"

#define DMAP BENCH_DMAP
#define KB   BENCH_KB
#define AREA BENCH_AREA

static int fd;

static uint64_t
size_of(kvs_t *kd, const char *t)
{
	struct kvs_typeinfo ti;
	if (kvs_type(kd, t, &ti) != 0) {
		fprintf(stderr, "%s\n", kvs_geterr(kd));
		exit(1);
	}
	return ti.size;
}

static void
build(const char *fixdir, const char *path, unsigned nzones, unsigned ncpus)
{
	kvs_t *kd;
	unsigned i, c;

	kd = bench_image(fixdir, path, &fd);
	uint64_t zsz = size_of(kd, "struct uma_zone"), csz = size_of(kd, "struct uma_cache");
	uint64_t dsz = size_of(kd, "struct uma_zone_domain"), ksz = size_of(kd, "struct uma_keg");
	uint64_t kdsz = size_of(kd, "struct uma_domain");
	uint64_t o_link = bench_member(kd, "struct uma_zone", "uz_link"), o_name = bench_member(kd, "struct uma_zone", "uz_name");
	uint64_t o_keg = bench_member(kd, "struct uma_zone", "uz_keg"), o_cpu = bench_member(kd, "struct uma_zone", "uz_cpu");
	uint64_t o_al = bench_member(kd, "struct uma_zone", "uz_allocs"), o_fr = bench_member(kd, "struct uma_zone", "uz_frees");
	uint64_t o_fa = bench_member(kd, "struct uma_zone", "uz_fails"), o_xd = bench_member(kd, "struct uma_zone", "uz_xdomain");
	uint64_t o_ua = bench_member(kd, "struct uma_cache", "uc_allocs");
	uint64_t o_ab = bench_member(kd, "struct uma_cache", "uc_allocbucket");
	uint64_t o_cnt = bench_member(kd, "struct uma_cache_bucket", "ucb_cnt");
	uint64_t o_kz = bench_member(kd, "struct uma_keg", "uk_zones"), o_ks = bench_member(kd, "struct uma_keg", "uk_size");
	uint64_t o_kl = bench_member(kd, "struct uma_keg", "uk_link");
	uint64_t zstride = (zsz + ncpus * csz + 2 * dsz + 127) & ~127ULL;
	uint64_t kstride = (ksz + 2 * kdsz + 63) & ~63ULL;
	uint64_t pcpu = AREA, names = pcpu + (uint64_t)ncpus * 4096;
	uint64_t kegs = (names + nzones * 16ULL + 4095) & ~4095ULL;
	uint64_t zones = (kegs + nzones * kstride + 4095) & ~4095ULL;
	uint64_t ctrs = (zones + nzones * zstride + 4095) & ~4095ULL;
	uint8_t *zb = calloc(1, zstride), *kb = calloc(1, kstride), *region = calloc(ncpus, 4096);
	uint64_t prevkeg = 0, slot = 512, regbase = ctrs - (uint64_t)ncpus * 4096;

	for (i = 0; i < nzones; i++) {
		char nm[16];
		uint64_t z = zones + i * zstride, k = kegs + i * kstride, v;
		uint64_t cnt[4];
		int j;

		snprintf(nm, sizeof(nm), "zone%05u", i);
		bench_put(fd, names + i * 16ULL, nm, 16);
		for (j = 0; j < 4; j++) {        /* counter(9) slots */
			if (slot == 512) {
				if (i > 0 || j > 0)
					bench_put(fd, regbase, region, (size_t)ncpus * 4096);
				regbase += (uint64_t)ncpus * 4096;
				memset(region, 0, (size_t)ncpus * 4096);
				slot = 0;
			}
			for (c = 0; c < ncpus; c++) {
				v = 100 + i + c + (uint64_t)j;
				memcpy(region + c * 4096 + slot * 8, &v, 8);
			}
			cnt[j] = (DMAP + regbase + slot * 8) - (DMAP + pcpu);
			slot++;
		}
		memset(zb, 0, zstride);
		v = DMAP + names + i * 16ULL;
		memcpy(zb + o_name, &v, 8);
		v = DMAP + k;
		memcpy(zb + o_keg, &v, 8);
		memcpy(zb + o_al, &cnt[0], 8);
		memcpy(zb + o_fr, &cnt[1], 8);
		memcpy(zb + o_fa, &cnt[2], 8);
		memcpy(zb + o_xd, &cnt[3], 8);
		for (c = 0; c < ncpus; c++) {
			uint64_t ca[2] = { 50 + c, 20 + c };
			int16_t b[2] = { 3, 128 };
			memcpy(zb + o_cpu + c * csz + o_ua, ca, 16);
			memcpy(zb + o_cpu + c * csz + o_ab + o_cnt, b, 4);
		}
		bench_put(fd, z, zb, zstride);
		memset(kb, 0, kstride);
		v = DMAP + z;
		memcpy(kb + o_kz, &v, 8);
		uint32_t size = 64 + 16 * (i % 32);
		memcpy(kb + o_ks, &size, 4);
		memcpy(kb + o_kl, &prevkeg, 8);
		bench_put(fd, k, kb, kstride);
		prevkeg = DMAP + k;
		(void)o_link;
	}
	bench_put(fd, regbase, region, (size_t)ncpus * 4096);
	uint64_t a;
	kvs_symbol(kd, "uma_kegs", &a, NULL);
	bench_put(fd, a - KB, &prevkeg, 8);
	kvs_symbol(kd, "__pcpu", &a, NULL);
	uint64_t pv = DMAP + pcpu;
	bench_put(fd, a - KB, &pv, 8);
	{
		int32_t maxid = (int32_t)ncpus - 1, nc = (int32_t)ncpus, nd = 2;
		uint8_t bits[128] = { 0 };
		uint64_t zero = 0;
		kvs_symbol(kd, "mp_maxid", &a, NULL);
		bench_put(fd, a - KB, &maxid, 4);
		kvs_symbol(kd, "mp_ncpus", &a, NULL);
		bench_put(fd, a - KB, &nc, 4);
		kvs_symbol(kd, "vm_ndomains", &a, NULL);
		bench_put(fd, a - KB, &nd, 4);
		kvs_symbol(kd, "uma_cachezones", &a, NULL);
		bench_put(fd, a - KB, &zero, 8);
		for (c = 0; c < ncpus; c++)
			bits[c / 8] |= 1 << (c % 8);
		kvs_symbol(kd, "all_cpus", &a, NULL);
		bench_put(fd, a - KB, bits, sizeof(bits));
	}
	free(zb);
	free(kb);
	free(region);
	kvs_close(kd);
	close(fd);
}

/* ------------------------------------------------ the naive baseline */

struct naive {
	char name[32];
	uint64_t allocs, frees, free;
};

static void
naive_refresh(kvs_t *kd, struct naive **arr, size_t *n, unsigned ncpus)
{
	static uint8_t zb[1 << 16], cache[256 * 128];
	uint64_t k, pcpu, a;
	struct kvs_typeinfo ti;
	uint64_t zsz, csz, o_kz, o_kl, o_name, o_cpu, o_al, o_fr, o_fa, o_xd, o_ua, o_ab, o_cnt;

	/* libmemstat resolves nothing by DWARF; use fixed offsets found once. */
	kvs_type(kd, "struct uma_zone", &ti); zsz = ti.size;
	kvs_type(kd, "struct uma_cache", &ti); csz = ti.size;
	kvs_member(kd, "struct uma_keg", "uk_zones", &ti); o_kz = ti.offset;
	kvs_member(kd, "struct uma_keg", "uk_link", &ti); o_kl = ti.offset;
	kvs_member(kd, "struct uma_zone", "uz_name", &ti); o_name = ti.offset;
	kvs_member(kd, "struct uma_zone", "uz_cpu", &ti); o_cpu = ti.offset;
	kvs_member(kd, "struct uma_zone", "uz_allocs", &ti); o_al = ti.offset;
	kvs_member(kd, "struct uma_zone", "uz_frees", &ti); o_fr = ti.offset;
	kvs_member(kd, "struct uma_zone", "uz_fails", &ti); o_fa = ti.offset;
	kvs_member(kd, "struct uma_zone", "uz_xdomain", &ti); o_xd = ti.offset;
	kvs_member(kd, "struct uma_cache", "uc_allocs", &ti); o_ua = ti.offset;
	kvs_member(kd, "struct uma_cache", "uc_allocbucket", &ti); o_ab = ti.offset;
	kvs_member(kd, "struct uma_cache_bucket", "ucb_cnt", &ti); o_cnt = ti.offset;
	kvs_symbol(kd, "__pcpu", &a, NULL);
	kvs_read(kd, a, &pcpu, 8);
	kvs_symbol(kd, "uma_kegs", &a, NULL);
	kvs_read(kd, a, &k, 8);
	while (k != 0) {
		uint8_t kb[256];
		uint64_t z;
		kvs_read(kd, k, kb, sizeof(kb));
		memcpy(&z, kb + o_kz, 8);
		while (z != 0) {
			char name[32];
			uint64_t np, cnt[4], v, fails = 0, xd = 0;
			size_t i, e;
			unsigned c;
			struct naive *en = NULL;

			kvs_read(kd, z, zb, zsz);
			kvs_read(kd, z + o_cpu, cache, ncpus * csz);
			memcpy(&np, zb + o_name, 8);
			for (i = 0; i < 31; i++) {
				kvs_read(kd, np + i, &name[i], 1);
				if (name[i] == '\0')
					break;
			}
			name[i] = '\0';
			for (e = 0; e < *n; e++)
				if (strcmp((*arr)[e].name, name) == 0) {
					en = &(*arr)[e];
					break;
				}
			if (en == NULL) {
				*arr = realloc(*arr, (*n + 1) * sizeof(**arr));
				en = &(*arr)[(*n)++];
				memset(en, 0, sizeof(*en));
				strcpy(en->name, name);
			}
			memcpy(&cnt[0], zb + o_al, 8);
			memcpy(&cnt[1], zb + o_fr, 8);
			memcpy(&cnt[2], zb + o_fa, 8);
			memcpy(&cnt[3], zb + o_xd, 8);
			en->allocs = en->frees = en->free = 0;
			for (c = 0; c < ncpus; c++) {
				kvs_read(kd, pcpu + cnt[0] + c * 4096ULL, &v, 8);
				en->allocs += v;
				kvs_read(kd, pcpu + cnt[1] + c * 4096ULL, &v, 8);
				en->frees += v;
				kvs_read(kd, pcpu + cnt[2] + c * 4096ULL, &v, 8);
				fails += v;
				kvs_read(kd, pcpu + cnt[3] + c * 4096ULL, &v, 8);
				xd += v;
				uint64_t ua;
				int16_t b;
				memcpy(&ua, cache + c * csz + o_ua, 8);
				en->allocs += ua;
				memcpy(&b, cache + c * csz + o_ab + o_cnt, 2);
				en->free += (uint64_t)b;
			}
			(void)fails;
			(void)xd;
			kvs_member(kd, "struct uma_zone", "uz_link", &ti);
			memcpy(&z, zb + ti.offset, 8);
		}
		memcpy(&k, kb + o_kl, 8);
	}
}

/* The naive refresh as bench_side_by_side calls it. */
struct side {
	kvs_t *kd;
	struct naive **arr;
	size_t *n;
	unsigned ncpus;
};

static int
side_naive(void *p)
{
	struct side *s = p;
	naive_refresh(s->kd, s->arr, s->n, s->ncpus);
	return 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: bench_uma [--json] [--zones N,..] [--cpus N,..] "
	    "[fixture-dir] [tmp-dir] [max-zones]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	unsigned nz[8] = { 100, 1000, 10000 }, nc[8] = { 8, 64, 256 };
	size_t nnz = 3, nnc = 3, zi, ci;
	const char *pos[3] = { "fixtures/cores/fbsd14", "/tmp", NULL };
	int json = 0, npos = 0, a, profile = 0;

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--json") == 0)
			json = 1;
		else if (strcmp(argv[a], "--profile") == 0 && a + 1 < argc)
			profile = atoi(argv[++a]);      /* only ours, N times: for perf */
		else if (strcmp(argv[a], "--zones") == 0 && a + 1 < argc)
			nnz = bench_list(argv[++a], nz, 8);
		else if (strcmp(argv[a], "--cpus") == 0 && a + 1 < argc)
			nnc = bench_list(argv[++a], nc, 8);
		else if (argv[a][0] == '-' || npos == 3)
			usage();
		else
			pos[npos++] = argv[a];
	}
	const char *fixdir = pos[0], *tmp = pos[1];
	unsigned maxz = pos[2] ? (unsigned)atoi(pos[2]) : 10000;
	char path[4096], kernel[4096], err[KVS_ERRBUF_SIZE];

	snprintf(path, sizeof(path), "%s/kvs-bench-uma.raw", tmp);
	snprintf(kernel, sizeof(kernel), "%s/kernel", fixdir);
	if (!json)
		printf("%7s %5s %10s %10s %10s %9s %7s %8s %9s %7s %7s %10s %9s %10s %9s %9s %9s %9s\n",
		    "zones", "cpus", "ours ms", "naive ms", "memcpy ms", "MiB read", "reads",
		    "vs naive", "vs memcpy", "allocs", "mallocs", "gather ms", "vs gather",
		    "reads ms", "vs reads", "list ms", "g+l", "vs g+l");
	for (zi = 0; zi < nnz; zi++) {
		if (nz[zi] > maxz)
			continue;
		for (ci = 0; ci < nnc; ci++) {
			struct memory_type_list *l = memstat_mtl_alloc();
			struct naive *arr = NULL;
			size_t n = 0;
			double ours = 1e9, naive = 1e9, floor;
			int r, reps = nz[zi] * nc[ci] > 300000 ? 5 : 15;
			unsigned long ev, nreads, nmallocs;
			uint64_t nbytes;
			kvs_t *kd;

			build(fixdir, path, nz[zi], nc[ci]);
			kd = kvs_open(kernel, path, KVS_O_RAW, err);
			if (kd == NULL || memstat_kvm_uma(l, kd) != 0 || memstat_mtl_count(l) != nz[zi]) {
				fprintf(stderr, "%s\n", kd ? kvs_geterr(kd) : err);
				return 1;
			}
			for (r = 0; r < profile; r++) {
				double t0 = bench_now();
				memstat_kvm_uma(l, kd);
				if (bench_now() - t0 < ours)
					ours = bench_now() - t0;
			}
			if (profile > 0) {
				fprintf(stderr, "ours best of %d: %.3f ms\n", profile, ours * 1e3);
				return 0;
			}
			ev = l->mtl_alloc_events;
			bench_count_start();
			memstat_kvm_uma(l, kd);
			bench_count_stop();
			ev = l->mtl_alloc_events - ev;
			nreads = bench_nreads;
			nbytes = bench_nbytes;
			nmallocs = bench_nmallocs;
			struct side sd = { kd, &arr, &n, nc[ci] };
			if (bench_side_by_side(&reps, memstat_kvm_uma, l, kd, side_naive, &sd, &ours,
			    &naive) != 0) {
				fprintf(stderr, "refresh: %s\n", kvs_geterr(kd));
				return 1;
			}
			floor = bench_memcpy_floor(nbytes, reps);
			double rfloor = bench_reads_floor(kd, reps);
			double gfloor = bench_gather_floor(kd, path, nbytes, reps);
			/* A reference, not a floor: the bytes copied from where
			 * they lie, plus this library's list bookkeeping alone. */
			double lfloor = bench_list_floor(l, ALLOCATOR_UMA, nc[ci], reps);
			double ref = gfloor > 0 ? gfloor + lfloor : -1;
			if (json)
				printf("{\"zones\": %u, \"cpus\": %u, \"ours_ms\": %.4f, \"naive_ms\": %.4f, "
				    "\"memcpy_ms\": %.4f, \"bytes_read\": %llu, \"reads\": %lu, "
				    "\"speedup_vs_naive\": %.2f, \"ours_over_memcpy\": %.2f, "
				    "\"gather_ms\": %.4f, \"reads_ms\": %.4f, \"ours_over_gather\": %.2f, "
				    "\"ours_over_reads\": %.2f, \"list_ms\": %.4f, "
				    "\"gather_list_over_memcpy\": %.2f, \"ours_over_gather_list\": %.2f, "
				    "\"steady_list_allocs\": %lu, \"steady_mallocs\": %lu}\n",
				    nz[zi], nc[ci], ours * 1e3, naive * 1e3, floor * 1e3,
				    (unsigned long long)nbytes, nreads, naive / ours, ours / floor,
				    gfloor * 1e3, rfloor * 1e3, gfloor > 0 ? ours / gfloor : -1,
				    rfloor > 0 ? ours / rfloor : -1, lfloor * 1e3,
				    ref > 0 ? ref / floor : -1, ref > 0 ? ours / ref : -1,
				    ev, nmallocs);
			else
				printf("%7u %5u %10.3f %10.3f %10.3f %9.2f %7lu %7.1fx %8.2fx %7lu %7lu %10.3f %8.2fx %10.3f %8.2fx %9.3f %8.2fx %8.2fx\n",
				    nz[zi], nc[ci], ours * 1e3, naive * 1e3, floor * 1e3,
				    nbytes / 1048576.0, nreads, naive / ours, ours / floor, ev, nmallocs,
				    gfloor * 1e3, gfloor > 0 ? ours / gfloor : -1, rfloor * 1e3,
				    rfloor > 0 ? ours / rfloor : -1, lfloor * 1e3,
				    ref > 0 ? ref / floor : -1, ref > 0 ? ours / ref : -1);
			fflush(stdout);
			free(arr);
			memstat_mtl_free(l);
			kvs_close(kd);
		}
	}
	unlink(path);
	return 0;
}
