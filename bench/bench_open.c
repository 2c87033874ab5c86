/*
 * bench_open.c - open cost and peak RSS against dump size.
 *
 * Builds sparse dumps of 64 MiB, 4 GiB and 64 GiB of physical memory from
 * the bundled fixture (the fixture's pages keep their addresses, the rest is
 * a hole in the file), then times kvs_open + a first read + kvs_close.  Each
 * size is measured in a fresh child process so peak RSS is per size.
 *
 *   bench_open [--json] [--sizes-mib N,..] [fixture-dir] [tmp-dir]
 *
 * Formats: raw image (file offset = PA) and ELF full dump (one PT_LOAD per
 * fixture range plus one big sparse range), and a v3 minidump whose bitmap
 * and dump_avail cover the whole size with every page marked dumped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elfcore.h"
#include "kvmstat.h"

static void *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	void *b;
	long n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc((size_t)n);
	if (b == NULL || fread(b, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(b);
		return NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

static int
write_at(int fd, const void *b, size_t n, off_t off)
{
	return pwrite(fd, b, n, off) == (ssize_t)n ? 0 : -1;
}

/* raw: the fixture image at its own addresses, then a hole up to size. */
static int
make_raw(const char *fixdir, const char *out, uint64_t size)
{
	char p[4096];
	size_t n;
	void *img;
	int fd, rc;

	snprintf(p, sizeof(p), "%s/mem.raw", fixdir);
	if ((img = slurp(p, &n)) == NULL)
		return -1;
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	rc = fd < 0 || write_at(fd, img, n, 0) != 0 || ftruncate(fd, (off_t)size) != 0;
	if (fd >= 0)
		close(fd);
	free(img);
	return rc ? -1 : 0;
}

/* ELF full dump: one PT_LOAD for [0, size) backed by the raw image layout
 * (headers from tests/support/elfcore.c, as check_source writes them). */
static int
make_elf(const char *fixdir, const char *out, uint64_t size)
{
	const struct elfcore_seg seg = { 0, 0, size, size };
	uint8_t hdr[ELFCORE_PAGE];
	char p[4096];
	size_t n;
	uint64_t off, total;
	void *img;
	int fd, rc;

	snprintf(p, sizeof(p), "%s/mem.raw", fixdir);
	if ((img = slurp(p, &n)) == NULL)
		return -1;
	total = elfcore_headers(hdr, &seg, 1, &off);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	rc = fd < 0 || write_at(fd, hdr, elfcore_hdr_size(1), 0) != 0 ||
	    write_at(fd, img, n, (off_t)off) != 0 || ftruncate(fd, (off_t)total) != 0;
	if (fd >= 0)
		close(fd);
	free(img);
	return rc ? -1 : 0;
}

/*
 * minidump v3: header and pmap taken from the fixture; dump_avail = [0,size);
 * every page dumped, so the data region is the raw image plus a hole.
 */
static int
make_minidump(const char *fixdir, const char *out, uint64_t size)
{
	char p[4096];
	size_t n, rawn;
	uint8_t *md, *raw, *page;
	uint32_t msgsz, bmsz, pmsz, dasz;
	uint64_t pages = size / 4096, bitmap_bytes, off, avail[4] = { 0, size, 0, 0 };
	int fd, rc = -1;

	snprintf(p, sizeof(p), "%s/vmcore.minidump3", fixdir);
	if ((md = slurp(p, &n)) == NULL)
		return -1;
	snprintf(p, sizeof(p), "%s/mem.raw", fixdir);
	if ((raw = slurp(p, &rawn)) == NULL) {
		free(md);
		return -1;
	}
	memcpy(&msgsz, md + 28, 4);
	memcpy(&bmsz, md + 32, 4);
	memcpy(&pmsz, md + 36, 4);
	memcpy(&dasz, md + 64, 4);
#define RND(x) (((uint64_t)(x) + 4095) & ~4095ULL)
	bitmap_bytes = RND(pages / 8);
	page = calloc(1, 4096);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || page == NULL)
		goto out;
	{
		uint32_t nb = (uint32_t)bitmap_bytes, na = 4096;
		memcpy(page, md, 4096);
		memcpy(page + 32, &nb, 4);
		memcpy(page + 64, &na, 4);
	}
	off = 0;
	if (write_at(fd, page, 4096, 0) != 0)
		goto out;
	off = 4096;
	if (write_at(fd, md + off, RND(msgsz), off) != 0)
		goto out;
	off += RND(msgsz);
	memset(page, 0, 4096);
	memcpy(page, avail, sizeof(avail));
	if (write_at(fd, page, 4096, off) != 0)
		goto out;
	off += 4096;
	/* All-ones bitmap, written in 1 MiB chunks. */
	{
		static uint8_t ones[1 << 20];
		uint64_t left = pages / 8, o = off;
		memset(ones, 0xff, sizeof(ones));
		while (left > 0) {
			size_t k = left > sizeof(ones) ? sizeof(ones) : (size_t)left;
			if (write_at(fd, ones, k, (off_t)o) != 0)
				goto out;
			o += k;
			left -= k;
		}
	}
	off += bitmap_bytes;
	{
		uint64_t fix_pmap_off = 4096 + RND(msgsz) + RND(dasz) + RND(bmsz);
		if (write_at(fd, md + fix_pmap_off, pmsz, (off_t)off) != 0)
			goto out;
		off += RND(pmsz);
	}
	if (write_at(fd, raw, rawn, (off_t)off) != 0 ||
	    ftruncate(fd, (off_t)(off + pages * 4096)) != 0)
		goto out;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(page);
	free(md);
	free(raw);
	return rc;
}

static int json_out;

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
measure(const char *kernel, const char *core, int flags, const char *label, uint64_t size)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		char err[KVS_ERRBUF_SIZE];
		struct rusage ru;
		double t0, best = 1e9;
		int i;

		for (i = 0; i < 20; i++) {
			kvs_t *kd;
			char v[128];
			uint64_t a;

			t0 = now();
			kd = kvs_open(kernel, core, flags, err);
			if (kd == NULL) {
				fprintf(stderr, "%s: %s\n", label, err);
				_exit(1);
			}
			if (kvs_symbol(kd, "version", &a, NULL) != 0 ||
			    kvs_read_string(kd, a, v, sizeof(v), NULL) < 0) {
				fprintf(stderr, "%s: %s\n", label, kvs_geterr(kd));
				_exit(1);
			}
			kvs_close(kd);
			if (now() - t0 < best)
				best = now() - t0;
		}
		getrusage(RUSAGE_SELF, &ru);
		if (json_out)
			printf("{\"format\": \"%s\", \"size_bytes\": %llu, \"open_us\": %.1f, "
			    "\"peak_rss_kib\": %ld}\n", label, (unsigned long long)size, best * 1e6,
			    ru.ru_maxrss);
		else
			printf("%-9s %8.0f MiB  open+read+close best of 20: %8.1f us  peak RSS %6ld KiB\n",
			    label, size / 1048576.0, best * 1e6, ru.ru_maxrss);
		fflush(stdout);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int
main(int argc, char **argv)
{
	const char *pos[2] = { "fixtures/cores/fbsd14", "/tmp" };
	uint64_t sizes[8] = { 64ULL << 20, 4ULL << 30, 64ULL << 30 };
	char kernel[4096], path[4096];
	size_t i, nsizes = 3;
	int fails = 0, a, npos = 0;

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--json") == 0)
			json_out = 1;
		else if (strcmp(argv[a], "--sizes-mib") == 0 && a + 1 < argc) {
			/* "64,4096,65536": dump sizes in MiB */
			char *s = argv[++a], *end;
			for (nsizes = 0; *s != '\0' && nsizes < 8; s = end + 1) {
				sizes[nsizes++] = strtoull(s, &end, 10) << 20;
				if (*end != ',')
					break;
			}
		} else if (argv[a][0] == '-' || npos == 2) {
			fprintf(stderr, "usage: bench_open [--json] [--sizes-mib N,..] "
			    "[fixture-dir] [tmp-dir]\n");
			return 2;
		} else
			pos[npos++] = argv[a];
	}
	const char *fixdir = pos[0], *tmp = pos[1];

	snprintf(kernel, sizeof(kernel), "%s/kernel", fixdir);
	for (i = 0; i < nsizes; i++) {
		snprintf(path, sizeof(path), "%s/kvs-bench.raw", tmp);
		if (make_raw(fixdir, path, sizes[i]) == 0)
			fails += measure(kernel, path, KVS_O_RAW, "raw", sizes[i]) != 0;
		else
			fails++;
		unlink(path);
		snprintf(path, sizeof(path), "%s/kvs-bench.elf", tmp);
		if (make_elf(fixdir, path, sizes[i]) == 0)
			fails += measure(kernel, path, 0, "elf", sizes[i]) != 0;
		else
			fails++;
		unlink(path);
		snprintf(path, sizeof(path), "%s/kvs-bench.mdmp", tmp);
		if (make_minidump(fixdir, path, sizes[i]) == 0)
			fails += measure(kernel, path, 0, "minidump", sizes[i]) != 0;
		else
			fails++;
		unlink(path);
	}
	return fails ? 1 : 0;
}
