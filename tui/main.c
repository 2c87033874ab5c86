/*
 * main.c - kvmtop: a live view of kernel allocator statistics.
 *
 *   kvmtop [-N kernel] [-M /dev/mem | core | raw-image] [--raw] [-w seconds]
 *          [--iterations N] [--no-color]
 *
 * With no arguments it opens the bundled fixture dump.  The loop refreshes
 * the list (incrementally: no reallocation per tick), redraws, and waits for
 * a key up to the interval.
 */
#include <curses.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "kvmstat.h"
#include "tui.h"

#ifndef KVS_DEFAULT_KERNEL
#define KVS_DEFAULT_KERNEL "fixtures/cores/fbsd14/kernel"
#endif
#ifndef KVS_DEFAULT_CORE
#define KVS_DEFAULT_CORE "fixtures/cores/fbsd14/vmcore.minidump3"
#endif

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
do_refresh(struct tui *t, kvs_t *kd)
{
	double t0 = now();
	int rc = memstat_kvm_malloc(t->model.list, kd);
	double t1 = now();

	model_update(&t->model, rc == 0, rc == 0 ? NULL : kvs_geterr(kd), t1, (t1 - t0) * 1e3);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "iterations", required_argument, NULL, 'I' },
		{ "raw", no_argument, NULL, 'R' },
		{ "no-color", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *kernel = NULL, *core = NULL;
	char err[KVS_ERRBUF_SIZE];
	struct tui t;
	long iterations = -1, done = 0;
	int flags = 0, ch;
	kvs_t *kd;

	memset(&t, 0, sizeof(t));
	t.interval = 1.0;
	t.color = true;
	while ((ch = getopt_long(argc, argv, "N:M:w:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'N': kernel = optarg; break;
		case 'M': core = optarg; break;
		case 'w': t.interval = atof(optarg); break;
		case 'I': iterations = atol(optarg); break;
		case 'R': flags |= KVS_O_RAW; break;
		case 'C': t.color = false; break;
		case 'h':
			printf("usage: kvmtop [-N kernel] [-M core|/dev/mem|raw-image] [--raw] "
			    "[-w seconds] [--iterations N] [--no-color]\n");
			return 0;
		default:
			return 2;
		}
	}
	if (t.interval < 0.1)
		t.interval = 0.1;
	if (kernel == NULL && core == NULL) {
		kernel = KVS_DEFAULT_KERNEL;
		core = KVS_DEFAULT_CORE;
	} else if (kernel == NULL) {
		fprintf(stderr, "kvmtop: -M needs -N kernel\n");
		return 2;
	}
	kd = kvs_open(kernel, core, flags, err);
	if (kd == NULL) {
		char clean[4 * KVS_ERRBUF_SIZE];
		clean_name(clean, sizeof(clean), err);
		fprintf(stderr, "kvmtop: %s\n", clean);
		return 1;
	}
	if (model_init(&t.model) != 0) {
		fprintf(stderr, "kvmtop: out of memory\n");
		return 1;
	}
	{
		struct kvs_dumpinfo di;
		kvs_dumpinfo(kd, &di);
		t.live = di.live || strcmp(di.format, "raw") == 0;
		t.source = core ? core : "/dev/mem";
		snprintf(t.info, sizeof(t.info), "dump: %s|kernel: %s|format: %s v%u|"
		    "pages: %llu|malloc layout: %d|(any key to go back)", di.path, di.kernel,
		    di.format, di.format_version, (unsigned long long)di.dumped_pages,
		    kvs_malloc_layout(kd));
	}
	do_refresh(&t, kd);
	done = 1;
	view_init(&t);
	for (;;) {
		double next = now() + t.interval;
		view_draw(&t);
		if (iterations >= 0 && done >= iterations)
			break;
		for (;;) {
			double left = next - now();
			int key;
			if (left <= 0)
				break;
			timeout((int)(left * 1000) + 1);
			key = getch();
			if (key == ERR)
				continue;
			enum action a = input_key(&t, key);
			if (a == ACT_QUIT)
				goto out;
			if (a == ACT_RESCAN)
				break;
			view_draw(&t);
		}
		if (!t.paused) {
			do_refresh(&t, kd);
			done++;
		}
	}
out:
	view_end();
	model_free(&t.model);
	kvs_close(kd);
	return 0;
}
