/*
 * fuzz_lcache.c - libFuzzer harness for the layout cache's reader: a file
 * under ~/.cache/kvmstat is input like any other (another user's home, a
 * disk that flipped bits, a file from a different build).
 *
 * A random change almost never keeps the file's checksum right, and the
 * reader stops there, so the harness writes the magic and recomputes the
 * checksum over the mutated bytes (as a writer would) before handing them
 * to kvs_lcache_parse: the records themselves get fuzzed.  The input as it
 * came is parsed too, for the rejection paths.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvs_private.h"
#include "types.h"

#define LC_HDR 32u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *b;
	uint64_t h = 0xcbf29ce484222325ULL;    /* FNV-1a 64, as the format says */
	size_t i;

	(void)kvs_lcache_parse(data, size);
	if (size < LC_HDR)
		return 0;
	if ((b = malloc(size)) == NULL)
		return 0;
	memcpy(b, data, size);
	memcpy(b, "KVSLC001", 8);
	for (i = LC_HDR; i < size; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	for (i = 0; i < 8; i++)
		b[24 + i] = (uint8_t)(h >> (8 * i));
	(void)kvs_lcache_parse(b, size);
	free(b);
	return 0;
}
