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

#include "kvmprof.h"
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

/* Text of the profile and probes screens (read when shown). */
static void
fill_text(struct tui *t, kvs_t *kd)
{
	t->ntext = 0;
	if (t->screen == SCR_PROFILE) {
		/* The flat profile `kvmstat profile` prints, same figures. */
		static const char *const states[] = { "on", "busy", "error", "off" };
		kvmprof_gmon_t *g = kvmprof_gmon_read(kd);
		kvmprof_flat_t *f = g != NULL ? kvmprof_gmon_flat(g, kd) : NULL;
		uint64_t total, unknown;
		size_t i;
		double hz;
		int st;

		if (f == NULL) {
			snprintf(t->text[t->ntext++], sizeof(t->text[0]), "no kernel profile: %s",
			    kvs_geterr(kd));
			kvmprof_gmon_free(g);
			return;
		}
		total = kvmprof_flat_total(f);
		unknown = kvmprof_flat_unknown(f);
		st = kvmprof_gmon_state(g);
		hz = kvmprof_gmon_profrate(g) > 0 ? kvmprof_gmon_profrate(g) : 1;
		snprintf(t->text[t->ntext++], sizeof(t->text[0]),
		    "kernel profile: profiling %s, %d Hz, %llu ticks (%.2f s)",
		    st >= 0 && st <= 3 ? states[st] : "unknown", kvmprof_gmon_profrate(g),
		    (unsigned long long)total, total / hz);
		snprintf(t->text[t->ntext++], sizeof(t->text[0]), "%7s %10s %9s %12s  %s",
		    "%time", "ticks", "seconds", "calls", "name");
		/* Busiest first; the unattributed row stays on screen. */
		for (i = 0; i < kvmprof_flat_count(f) && t->ntext < 60 - (unknown != 0); i++) {
			const struct kvmprof_func *fn = kvmprof_flat_get(f, i);
			snprintf(t->text[t->ntext++], sizeof(t->text[0]), "%7.2f %10llu %9.2f %12llu  %s",
			    total ? 100.0 * fn->ticks / total : 0.0, (unsigned long long)fn->ticks,
			    fn->ticks / hz, (unsigned long long)fn->calls, fn->name);
		}
		if (unknown)
			snprintf(t->text[t->ntext++], sizeof(t->text[0]), "%7.2f %10llu %9.2f %12s  %s",
			    100.0 * unknown / total, (unsigned long long)unknown, unknown / hz, "",
			    "(outside any function)");
		if (kvmprof_flat_count(f) == 0 && unknown == 0)
			snprintf(t->text[t->ntext++], sizeof(t->text[0]), "%7s  %s", "",
			    "(no samples and no calls recorded)");
		kvmprof_flat_free(f);
		kvmprof_gmon_free(g);
	} else if (t->screen == SCR_PROBES) {
		kvmprof_probes_t *p = kvmprof_probes_read(kd, 0);
		size_t i;
		if (p == NULL) {
			snprintf(t->text[t->ntext++], sizeof(t->text[0]), "no DTrace probes: %s",
			    kvs_geterr(kd));
			return;
		}
		snprintf(t->text[t->ntext++], sizeof(t->text[0]), "%5s %-16s %4s %14s %10s",
		    "ID", "NAME", "ON", "INTERVAL(ns)", "HZ");
		for (i = 0; i < kvmprof_probes_count(p) && t->ntext < 60; i++) {
			const struct kvmprof_probe *pr = kvmprof_probes_get(p, i);
			snprintf(t->text[t->ntext++], sizeof(t->text[0]), "%5u %-16.16s %4s %14llu %10.2f",
			    pr->id, pr->name, pr->enabled ? "yes" : "no",
			    (unsigned long long)pr->interval_ns, pr->hz);
		}
		kvmprof_probes_free(p);
	}
}

static void
do_refresh(struct tui *t, kvs_t *kd)
{
	double t0;

	/* Per-CPU counters only while the drill-down shows them: a refresh
	 * then writes one record per type instead of one per type and CPU. */
	memstat_mtl_set_percpu(t->model.list, t->screen == SCR_PERCPU);
	t0 = now();
	int rc = t->have_uma || t->model.allocator == ALLOCATOR_SLAB ?
	    memstat_kvm_all(t->model.list, kd) : memstat_kvm_malloc(t->model.list, kd);
	double t1 = now();

	if (t->screen == SCR_PROFILE || t->screen == SCR_PROBES)
		fill_text(t, kd);

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
	/* -M alone: the dump's own symbols and types (Linux VMCOREINFO). */
	if (kernel == NULL && core == NULL) {
		kernel = KVS_DEFAULT_KERNEL;
		core = KVS_DEFAULT_CORE;
	}
	kd = kvs_open(kernel, core, flags, err);
	if (kd == NULL) {
		char clean[4 * KVS_ERRBUF_SIZE];
		sanitize(clean, sizeof(clean), err, strlen(err), false);
		fprintf(stderr, "kvmtop: %s\n", clean);
		return 1;
	}
	if (model_init(&t.model) != 0) {
		fprintf(stderr, "kvmtop: out of memory\n");
		return 1;
	}
	{
		struct kvs_dumpinfo di;
		struct kvs_kernelinfo ki;
		kvs_dumpinfo(kd, &di);
		kvs_kernel_info(kd, &ki);
		t.live = di.live || strcmp(di.format, "raw") == 0;
		t.source = core ? core : "/dev/mem";
		snprintf(t.info, sizeof(t.info), "dump: %s|kernel: %s (%s)|format: %s v%u|"
		    "pages: %llu|version: %s|panic: %s|"
		    "(any key to go back)", di.path, di.kernel, ki.os,
		    di.format, di.format_version, (unsigned long long)di.dumped_pages,
		    ki.version ? ki.version : "unknown", ki.panic ? ki.panic : "none");
	}
	/* Linux: its SLUB caches.  FreeBSD: UMA when this kernel's layout is
	 * readable; malloc types always. */
	{
		struct kvs_kernelinfo ki;
		kvs_kernel_info(kd, &ki);
		if (strcmp(ki.os, "Linux") == 0)
			t.model.allocator = ALLOCATOR_SLAB;
		else {
			struct memory_type_list *probe = memstat_mtl_alloc();
			t.have_uma = probe != NULL && memstat_kvm_uma(probe, kd) == 0;
			memstat_mtl_free(probe);
		}
	}
	/* Module-local symbols (DTrace) from the kernel's directory. */
	if (kernel != NULL) {
		char dir[4096];
		const char *slash = strrchr(kernel, '/');
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - kernel) : 1, slash ? kernel : ".");
		(void)kvs_add_module_dir(kd, dir);
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
			if (a == ACT_RESCAN) {
				if (t.screen == SCR_PERCPU)
					do_refresh(&t, kd);
				else
					fill_text(&t, kd);
				view_draw(&t);
				continue;
			}
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
