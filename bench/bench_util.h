/* bench_util.h - pieces the benchmarks share: a clock, file writes, DWARF
 * offsets of the fixture kernel, and the image every refresh benchmark
 * starts from (the fixture's own memory, more added through the DMAP). */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "kvmstat.h"

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

#endif
