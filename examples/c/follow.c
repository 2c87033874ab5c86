/*
 * follow.c - follow a live source (/dev/mem, or a raw image another program
 * keeps changing) every second: one line per refresh with the malloc types'
 * totals and what changed since the previous refresh.
 *
 *   follow [-r] [-w SECONDS] [-n ITERATIONS] KERNEL CORE
 *
 * -r reads CORE as a raw physical-memory image.  The list is refreshed in
 * place: entries keep their identity, so the per-type change is the
 * difference of two readings of the same kernel object.  Prints
 *   tick N: types T requests R bytes B +requests D top NAME
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <kvmstat.h>
#include <memstat.h>

int
main(int argc, char **argv)
{
	char err[KVS_ERRBUF_SIZE];
	struct memory_type_list *list;
	struct memory_type *mt;
	double wait = 1.0;
	long iterations = -1, tick;
	int flags = 0, ch;
	kvs_t *kd;

	while ((ch = getopt(argc, argv, "rw:n:")) != -1) {
		switch (ch) {
		case 'r': flags |= KVS_O_RAW; break;
		case 'w': wait = atof(optarg); break;
		case 'n': iterations = atol(optarg); break;
		default:
			fprintf(stderr, "usage: follow [-r] [-w SECONDS] [-n ITERATIONS] KERNEL CORE\n");
			return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: follow [-r] [-w SECONDS] [-n ITERATIONS] KERNEL CORE\n");
		return 2;
	}
	if ((kd = kvs_open(argv[optind], argv[optind + 1], flags, err)) == NULL) {
		fprintf(stderr, "follow: %s\n", err);
		return 1;
	}
	if ((list = memstat_mtl_alloc()) == NULL) {
		kvs_close(kd);
		return 1;
	}
	memstat_mtl_set_percpu(list, 0);        /* totals are enough */
	for (tick = 1; iterations < 0 || tick <= iterations; tick++) {
		uint64_t requests = 0, bytes = 0, delta = 0, best = 0;
		const char *top = "-";
		size_t types = 0;

		if (tick > 1) {
			struct timespec ts = { (time_t)wait, (long)((wait - (time_t)wait) * 1e9) };
			nanosleep(&ts, NULL);
		}
		if (memstat_kvm_malloc(list, kd) != 0) {
			fprintf(stderr, "follow: %s\n", kvs_geterr(kd));
			break;
		}
		memstat_mtl_sweep(list);         /* types gone from the kernel */
		for (mt = memstat_mtl_first(list); mt != NULL; mt = memstat_mtl_next(mt)) {
			uint64_t now = memstat_get_numallocs(mt);
			/* Slot 0: this type's request count at the previous tick
			 * (+1, so 0 means "new"); slots survive refreshes. */
			uint64_t before = memstat_get_caller_uint64(mt, 0);
			uint64_t d = before != 0 && now >= before - 1 ? now - (before - 1) : 0;

			memstat_set_caller_uint64(mt, 0, now + 1);
			types++;
			requests += now;
			bytes += memstat_get_bytes(mt);
			delta += d;
			if (d > best) {
				best = d;
				top = memstat_get_name(mt);
			}
		}
		printf("tick %ld: types %zu requests %" PRIu64 " bytes %" PRIu64
		    " +requests %" PRIu64 " top %s\n", tick, types, requests, bytes, delta, top);
		fflush(stdout);
	}
	memstat_mtl_free(list);
	kvs_close(kd);
	return 0;
}
