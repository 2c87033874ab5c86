/*
 * write_gmon.c - write the kernel's gprof buffers as the gmon.out that
 * `kgmon -p` writes, for `gprof KERNEL gmon.out`.
 *
 *   write_gmon KERNEL CORE OUTPUT
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <kvmprof.h>
#include <kvmstat.h>

int
main(int argc, char **argv)
{
	char err[KVS_ERRBUF_SIZE];
	kvmprof_gmon_t *g;
	kvs_t *kd;
	int rc = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: write_gmon KERNEL CORE OUTPUT\n");
		return 2;
	}
	if ((kd = kvs_open(argv[1], argv[2], 0, err)) == NULL) {
		fprintf(stderr, "write_gmon: %s\n", err);
		return 1;
	}
	if ((g = kvmprof_gmon_read(kd)) == NULL) {
		fprintf(stderr, "write_gmon: %s\n", kvs_geterr(kd));
		kvs_close(kd);
		return 1;
	}
	if (kvmprof_gmon_write(g, argv[3], 1) != 0) {
		fprintf(stderr, "write_gmon: %s: %s\n", argv[3], strerror(errno));
		rc = 1;
	} else
		printf("%s: %zu bins of %" PRIu64 " bytes, %zu arcs, %d Hz\n", argv[3],
		    kvmprof_gmon_nbins(g), kvmprof_gmon_binsize(g), kvmprof_gmon_narcs(g),
		    kvmprof_gmon_profrate(g));
	kvmprof_gmon_free(g);
	kvs_close(kd);
	return rc;
}
