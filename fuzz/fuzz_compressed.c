/*
 * fuzz_compressed.c - libFuzzer harness for the compression layer
 * (source/compressed.c): the input is a gzip or zstd file (savecore -z).
 *
 * The layer's own ops run on the input bytes as the mapping, twice:
 *   1. as kvs_open does (flags 0): the gzip restart-point index or the zstd
 *      frame table (or the zstd spill to a temporary file) is built, the
 *      stream's first bytes decompressed, and the dump formats are probed
 *      on the stream through the view; a claimed dump is read;
 *   2. with KVS_O_RAW: the stream is a raw image, so every read_phys is a
 *      read of the decompressed stream at that offset: forwards (the live
 *      inflate stream continues), backwards and far (a restart point or
 *      another frame), across a block boundary, at the end and past it,
 *      and at offsets the input names.  Each read of the same range twice
 *      must give the same bytes (the block cache against a fresh
 *      decompression).
 * A zstd frame that does not state its size is decompressed into a
 * temporary file: the harness caps files at 32 MiB (RLIMIT_FSIZE, SIGXFSZ
 * ignored), so a small input that expands to gigabytes fails with EFBIG
 * instead of filling the disk.
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "kvs_private.h"
#include "fz.h"

#define OPS kvs_source_compressed

static struct fz_file file;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct rlimit rl = { 32u << 20, 32u << 20 };

	(void)argc;
	(void)argv;
	signal(SIGXFSZ, SIG_IGN);
	(void)setrlimit(RLIMIT_FSIZE, &rl);
	fz_file_init(&file, "fuzzcz");
	return 0;
}

static void
read_twice(void *priv, uint64_t pa, size_t len)
{
	static uint8_t a[3 * 4096], b[3 * 4096];
	struct kvs_error e;
	int ra, rb;

	if (len > sizeof(a))
		len = sizeof(a);
	kerr_clear(&e);
	ra = OPS.read_phys(priv, pa, a, len, &e);
	kerr_clear(&e);
	rb = OPS.read_phys(priv, pa, b, len, &e);
	if (ra != rb || (ra == 0 && memcmp(a, b, len) != 0)) {
		fprintf(stderr, "fuzz_compressed: two reads of 0x%zx bytes at 0x%llx differ "
		    "(%d, %d)\n", len, (unsigned long long)pa, ra, rb);
		abort();
	}
}

static void
one(const uint8_t *data, size_t size, const struct stat *st, int flags)
{
	struct kvs_open_args a = { .path = file.path, .fd = file.fd, .st = st,
	    .map = size ? data : NULL, .map_len = size, .flags = flags };
	struct kvs_src_info info;
	struct kvs_error e;
	uint8_t page[4096];
	void *priv = NULL;
	uint64_t n, end;

	kerr_clear(&e);
	if (OPS.open(&a, &priv, &e) != 0)
		return;
	OPS.info(priv, &info);
	n = OPS.dumped_pages(priv);
	(void)n;
	/* raw over the view: source_bytes is the decompressed size */
	end = info.source_bytes;
	if (flags & KVS_O_RAW) {
		/* forwards, backwards, far, across the cache blocks (256 KiB)
		 * and gzip spans (1 MiB), the end and past it */
		static const uint64_t pas[] = { 0, 4096, 100, 0x3fff0, 0x40000 - 8, 0x100000 - 100,
		    0x100000 + 5, 0x10, 0x300000, 0x180000, 0x7ffff0, 0x1000000, 0x200 };
		for (size_t i = 0; i < sizeof(pas) / sizeof(pas[0]); i++)
			read_twice(priv, pas[i], 4096 + 64);
		if (end > 0) {
			read_twice(priv, end - 1, 1);
			read_twice(priv, end > 5000 ? end - 5000 : 0, 8192);
			read_twice(priv, end, 16);
			read_twice(priv, end / 2, 3 * 4096);
		}
		if (size >= 8) {
			uint64_t pa = fz_le64(data + size - 8);
			read_twice(priv, end > 0 ? pa % (end + 4096) : pa, 2 * 4096);
		}
	} else {
		static const uint64_t pas[] = { 0, 0x1000, 0x200000, 0x100000000ULL };
		for (size_t i = 0; i < sizeof(pas) / sizeof(pas[0]); i++) {
			kerr_clear(&e);
			(void)OPS.read_phys(priv, pas[i], page, sizeof(page), &e);
		}
		kerr_clear(&e);
		(void)OPS.read_virt(priv, 0xffffffff80000000ULL, page, sizeof(page), &e);
	}
	OPS.close(priv);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stat st;

	fz_file_set(&file, data, size);
	if (fstat(file.fd, &st) != 0)
		return 0;
	one(data, size, &st, 0);
	one(data, size, &st, KVS_O_RAW);
	return 0;
}
