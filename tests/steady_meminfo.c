/*
 * steady_meminfo.c - tests/check_steady_allocs.py's driver of
 * kvs_meminfo_into: opens a dump, asks for its memory summary -n times into
 * one buffer, and ends each call's line with fflush(stdout), where the
 * preloaded allocation counter (support/alloccount.c) logs what the call
 * allocated.  Then checks the answer against kvs_meminfo's (the same
 * counters, byte for byte) and the short buffer's contract (-1, the full
 * count, the first lines written).  Exit 0, or 1 saying what differs.
 *
 *   steady_meminfo [-N kernel] -M core [--raw] [-n calls]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census.h"
#include "kvmstat.h"

#define CAP 512

int
main(int argc, char **argv)
{
	const char *kernel = NULL, *core = NULL;
	char err[KVS_ERRBUF_SIZE];
	struct kvs_counter *buf, *c = NULL, one;
	size_t n = 0, n2 = 0, n1 = 0, i;
	int flags = 0, calls = 5, rc = 0, rc2, k;
	kvs_t *kd;

	for (k = 1; k < argc; k++) {
		if (strcmp(argv[k], "-N") == 0 && k + 1 < argc)
			kernel = argv[++k];
		else if (strcmp(argv[k], "-M") == 0 && k + 1 < argc)
			core = argv[++k];
		else if (strcmp(argv[k], "--raw") == 0)
			flags |= KVS_O_RAW;
		else if (strcmp(argv[k], "-n") == 0 && k + 1 < argc)
			calls = atoi(argv[++k]);
		else {
			fprintf(stderr, "usage: steady_meminfo [-N kernel] -M core [--raw] [-n calls]\n");
			return 2;
		}
	}
	if ((kd = kvs_open(kernel, core, flags, err)) == NULL) {
		fprintf(stderr, "steady_meminfo: %s\n", err);
		return 1;
	}
	if ((buf = calloc(CAP, sizeof(*buf))) == NULL)
		return 1;
	for (k = 0; k < calls; k++) {
		rc = kvs_meminfo_into(kd, buf, CAP, &n);
		printf("call %d: rc %d, %zu counters\n", k + 1, rc, n);
		fflush(stdout);          /* the counter's mark: one line per call */
		if (rc < 0) {
			fprintf(stderr, "steady_meminfo: %s\n", kvs_geterr(kd));
			return 1;
		}
	}
	/* The same answer as the allocating call's. */
	rc2 = kvs_meminfo(kd, &c, &n2);
	if (rc2 != rc || n2 != n) {
		fprintf(stderr, "steady_meminfo: kvs_meminfo gave rc %d, %zu counters; "
		    "kvs_meminfo_into rc %d, %zu\n", rc2, n2, rc, n);
		return 1;
	}
	for (i = 0; i < n; i++)
		if (strcmp(c[i].name, buf[i].name) != 0 || strcmp(c[i].key, buf[i].key) != 0 ||
		    c[i].value != buf[i].value || c[i].unit != buf[i].unit ||
		    c[i].flags != buf[i].flags || strcmp(c[i].note, buf[i].note) != 0 ||
		    strcmp(c[i].group, buf[i].group) != 0) {
			fprintf(stderr, "steady_meminfo: counter %zu differs: %s %llu / %s %llu\n",
			    i, c[i].name, (unsigned long long)c[i].value, buf[i].name,
			    (unsigned long long)buf[i].value);
			return 1;
		}
	/* Room for one less than the summary has: -1, the full count, the lines
	 * that fit; room for one: the same; room for exactly all: the answer. */
	if (n > 1 && (kvs_meminfo_into(kd, buf, n - 1, &n1) != -1 || n1 != n ||
	    strcmp(buf[n - 2].name, c[n - 2].name) != 0 || kvs_errstatus(kd) != KVS_E_INVAL)) {
		fprintf(stderr, "steady_meminfo: a buffer one short: count %zu of %zu\n", n1, n);
		return 1;
	}
	if (n > 1 && (kvs_meminfo_into(kd, &one, 1, &n1) != -1 || n1 != n ||
	    strcmp(one.name, c[0].name) != 0)) {
		fprintf(stderr, "steady_meminfo: a buffer of one: count %zu of %zu\n", n1, n);
		return 1;
	}
	if (kvs_meminfo_into(kd, buf, n, &n1) != rc || n1 != n) {
		fprintf(stderr, "steady_meminfo: a buffer of exactly %zu: count %zu\n", n, n1);
		return 1;
	}
	printf("checked: %zu counters as kvs_meminfo's\n", n);
	kvs_counters_free(c, n2);
	free(buf);
	kvs_close(kd);
	return 0;
}
