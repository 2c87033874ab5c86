/*
 * malloc_top.c - the malloc(9) types of a FreeBSD dump, most memory first,
 * through the libmemstat interface.
 *
 *   malloc_top KERNEL CORE [N]
 *
 * Prints "bytes count requests name" per type, N types (default all).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <kvmstat.h>
#include <memstat.h>

static int
by_bytes(const void *a, const void *b)
{
	uint64_t x = memstat_get_bytes(*(struct memory_type *const *)a);
	uint64_t y = memstat_get_bytes(*(struct memory_type *const *)b);

	return x < y ? 1 : x > y ? -1 : 0;
}

int
main(int argc, char **argv)
{
	char err[KVS_ERRBUF_SIZE];
	struct memory_type_list *list;
	struct memory_type *mt, **v;
	size_t n = 0, i, max;
	kvs_t *kd;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: malloc_top KERNEL CORE [N]\n");
		return 2;
	}
	max = argc == 4 ? strtoul(argv[3], NULL, 10) : (size_t)-1;
	if ((kd = kvs_open(argv[1], argv[2], 0, err)) == NULL) {
		fprintf(stderr, "malloc_top: %s\n", err);
		return 1;
	}
	if ((list = memstat_mtl_alloc()) == NULL || memstat_kvm_malloc(list, kd) != 0) {
		fprintf(stderr, "malloc_top: %s\n", list ? kvs_geterr(kd) : "out of memory");
		memstat_mtl_free(list);
		kvs_close(kd);
		return 1;
	}
	v = calloc(memstat_mtl_count(list) + 1, sizeof(*v));
	for (mt = memstat_mtl_first(list); mt != NULL && v != NULL; mt = memstat_mtl_next(mt))
		v[n++] = mt;
	qsort(v, n, sizeof(*v), by_bytes);
	for (i = 0; i < n && i < max; i++)
		printf("%" PRIu64 " %" PRIu64 " %" PRIu64 " %s\n", memstat_get_bytes(v[i]),
		    memstat_get_count(v[i]), memstat_get_numallocs(v[i]), memstat_get_name(v[i]));
	free(v);
	memstat_mtl_free(list);
	kvs_close(kd);
	return 0;
}
