/*
 * fuzz_open.c - libFuzzer harness: arbitrary bytes as a dump, opened with the
 * fixture kernel, then the reads `kvmstat info` and `dmesg` make.
 * Build and run: bash fuzz/run.sh [seconds]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvmstat.h"

static char path[64];
static const char *kernel;

/* The scratch dump goes when the run ends (libFuzzer exits through exit();
 * after a crash the file stays, holding the input). */
static void
remove_scratch(void)
{
	unlink(path);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	kernel = getenv("KVS_FUZZ_KERNEL");
	if (kernel == NULL)
		kernel = "fixtures/cores/fbsd14/kernel";
	snprintf(path, sizeof(path), "/tmp/kvsfuzz.%d", (int)getpid());
	atexit(remove_scratch);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[KVS_ERRBUF_SIZE], buf[256];
	FILE *f = fopen(path, "wb");
	uint64_t a, v;
	kvs_t *kd;

	if (f == NULL)
		return 0;
	if (size > 0)
		fwrite(data, 1, size, f);
	fclose(f);
	for (int flags = 0; flags <= KVS_O_RAW; flags += KVS_O_RAW) {
		kd = kvs_open(kernel, path, flags | KVS_O_NOVERIFY, err);
		if (kd == NULL)
			continue;
		struct kvs_dumpinfo di;
		kvs_dumpinfo(kd, &di);
		if (kvs_symbol(kd, "version", &a, NULL) == 0)
			(void)kvs_read_string(kd, a, buf, sizeof(buf), NULL);
		if (kvs_symbol(kd, "msgbufp", &a, NULL) == 0 && kvs_read(kd, a, &v, 8) == 0)
			(void)kvs_read(kd, v, buf, 64);
		(void)kvs_read(kd, 0xfffff80000001000ULL, buf, sizeof(buf));
		(void)kvs_read(kd, 0xffffffff80801ff0ULL, buf, 64);
		kvs_close(kd);
	}
	return 0;
}
