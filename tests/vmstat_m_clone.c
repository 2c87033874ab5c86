/*
 * vmstat_m_clone.c - a `vmstat -m` written the way FreeBSD programs use
 * libmemstat: only <sys/types.h> and <memstat.h> (plus <kvmstat.h> to get a
 * handle, where FreeBSD would call kvm_openfiles).  It proves the header is
 * source-compatible; check_malloc runs it against the fixtures.  Output is
 * FreeBSD 14's plain-text `vmstat -m` (types in list order, a type skipped
 * when it never allocated and holds nothing, MemUse rounded up to KiB).
 *
 *   vmstat_m_clone kernel core
 */
#include <sys/types.h>
#include <err.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <memstat.h>

#include "kvmstat.h"

int
main(int argc, char **argv)
{
	struct memory_type_list *mtlp;
	struct memory_type *mtp;
	char errbuf[KVS_ERRBUF_SIZE];
	size_t i, zones;
	kvs_t *kd;
	int first;

	if (argc != 3)
		errx(2, "usage: vmstat_m_clone kernel core");
	kd = kvs_open(argv[1], argv[2], 0, errbuf);
	if (kd == NULL)
		errx(1, "%s", errbuf);
	mtlp = memstat_mtl_alloc();
	if (mtlp == NULL)
		err(1, "memstat_mtl_alloc");
	if (memstat_kvm_malloc(mtlp, kd) < 0) {
		/* As vmstat does with kvm_geterr(): the handle has the detail. */
		if (memstat_mtl_geterror(mtlp) == MEMSTAT_ERROR_KVM)
			errx(1, "memstat_kvm_malloc: %s", kvs_geterr(kd));
		errx(1, "memstat_kvm_malloc: %s", memstat_strerror(memstat_mtl_geterror(mtlp)));
	}
	printf("%13s %5s %6s %8s  Size(s)\n", "Type", "InUse", "MemUse", "Requests");
	zones = memstat_malloc_zone_get_count();
	for (mtp = memstat_mtl_first(mtlp); mtp != NULL; mtp = memstat_mtl_next(mtp)) {
		if (memstat_get_numallocs(mtp) == 0 && memstat_get_count(mtp) == 0)
			continue;
		printf("%13s %5ju %5juK %8ju  ", memstat_get_name(mtp),
		    (uintmax_t)memstat_get_count(mtp),
		    ((uintmax_t)memstat_get_bytes(mtp) + 1023) / 1024,
		    (uintmax_t)memstat_get_numallocs(mtp));
		first = 1;
		for (i = 0; i < zones; i++) {
			if (memstat_malloc_zone_used(mtp, i)) {
				printf("%s%zu", first ? "" : ",", memstat_malloc_zone_get_size(i));
				first = 0;
			}
		}
		printf("\n");
	}
	memstat_mtl_free(mtlp);
	kvs_close(kd);
	return 0;
}
