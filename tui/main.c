/*
 * main.c - kvmtop: a live view of kernel allocator statistics.
 *
 *   kvmtop [-N kernel] [-M /dev/mem | core | raw-image] [--raw] [-w seconds]
 *          [-b] [-n N] [--width W] [--height H] [--view V] [-a] [--no-color]
 *   kvmtop --demo [...]
 *
 * With neither -M nor -N it watches the running system (the booted kernel
 * and live memory), as kvmstat does, or says what is missing; --demo opens
 * the bundled demo dump.  -M alone lets the library take the dump's own
 * symbols (Linux) or the installed kernel.  On live memory the loop
 * refreshes the list (incrementally: no reallocation per tick), redraws, and
 * waits for a key up to the interval; a dump is read once, per-CPU counters
 * included, and only redrawn.
 *
 * Batch mode (-b, or whenever stdout is not a terminal, or a TERM curses
 * cannot drive), as top -b: N frames of plain text (the same render() the
 * screen shows), no curses and no control sequence, each followed by a
 * blank line; a frame that cannot be written exits 1.  Without -n: one
 * frame of a dump, endless frames of live memory.
 */
#include <curses.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "census.h"
#include "kvmprof.h"
#include "kvmstat.h"
#include "sysdefault.h"
#include "tui.h"

#ifndef KVS_DEMO_DIR
#define KVS_DEMO_DIR "/usr/local/share/kvmstat/demo"
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
	} else if (t->screen == SCR_MEMORY) {
		/* The kernel's memory summary, read at every refresh as the
		 * list is; the allocators' totals from the list itself.
		 * Into storage kept on t: grown when the summary has more lines
		 * than it holds, else a refresh allocates nothing. */
		size_t n = 0;
		int rc = kvs_meminfo_into(kd, t->meminfo, t->meminfo_cap, &n);
		if (rc < 0 && n > t->meminfo_cap) {
			struct kvs_counter *c = realloc(t->meminfo, n * sizeof(*c));
			if (c != NULL) {
				t->meminfo = c;
				t->meminfo_cap = n;
				rc = kvs_meminfo_into(kd, t->meminfo, t->meminfo_cap, &n);
			}
		}
		if (rc < 0) {
			t->mem.have = false;
			snprintf(t->mem.error, sizeof(t->mem.error), "%s", kvs_geterr(kd));
		} else
			memview_build(&t->mem, t->meminfo, n, rc > 0);
		memview_allocators(&t->mem, t->model.list);
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

static void __attribute__((format(printf, 3, 4)))
add_info(struct tui *t, const char *label, const char *fmt, ...)
{
	va_list ap;

	if (t->ninfo >= (int)(sizeof(t->info) / sizeof(t->info[0])))
		return;
	snprintf(t->info[t->ninfo][0], sizeof(t->info[0][0]), "%s", label);
	va_start(ap, fmt);
	vsnprintf(t->info[t->ninfo][1], sizeof(t->info[0][1]), fmt, ap);
	va_end(ap);
	t->ninfo++;
}

/* A whole number in [lo, hi] from an option argument, or exit 2. */
static long
num_arg(const char *opt, const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "kvmtop: %s wants a whole number from %ld to %ld, not '%s'\n",
		    opt, lo, hi, s);
		exit(2);
	}
	return v;
}

/* One batch frame on stdout: the rows of the frame, trailing blanks cut. */
static void
print_frame(struct tui *t, int width, int height)
{
	struct frame *fp = &t->out;
	int y, rows = height > 0 ? height : render_rows_needed(t);

	if (t->screen != SCR_LIST && height <= 0)
		rows = 4 + (t->screen == SCR_INFO ? 3 * t->ninfo + 10 : 70);
	/* The frame of the last print, reused: no allocation per frame. */
	if (frame_fit(fp, rows, width) != 0) {
		fprintf(stderr, "kvmtop: out of memory\n");
		exit(1);
	}
	render(t, fp, true);
	/* Without a fixed height, no trailing empty rows. */
	if (height <= 0)
		while (rows > 1) {
			const char *l = fp->ch + (size_t)(rows - 1) * (size_t)width;
			int x;
			for (x = 0; x < width && l[x] == ' '; x++)
				;
			if (x < width)
				break;
			rows--;
		}
	for (y = 0; y < rows; y++) {
		const char *l = fp->ch + (size_t)y * (size_t)width;
		int n = width;
		while (n > 0 && l[n - 1] == ' ')
			n--;
		fwrite(l, 1, (size_t)n, stdout);
		fputc('\n', stdout);
	}
	fputc('\n', stdout);
	/* A frame that cannot be written (a full disk, a closed pipe) is an
	 * error, as for any filter: said on stderr, exit 1. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "kvmtop: writing standard output: %s\n", strerror(errno));
		exit(1);
	}
}

/* The error of the start's read when it read some allocators but not all
 * (see main); empty otherwise. */
static char known_err[KVS_ERRBUF_SIZE];

static void
do_refresh(struct tui *t, kvs_t *kd)
{
	double t0;

	/* Per-CPU counters only while the drill-down shows them: a refresh
	 * then writes one record per type instead of one per type and CPU.  A
	 * dump is read once, with them. */
	memstat_mtl_set_percpu(t->model.list, t->screen == SCR_PERCPU || !t->live);
	t0 = now();
	int rc = memstat_kvm_all(t->model.list, kd);
	double t1 = now();

	/* The failure the start already met (an allocator of the kernel that
	 * is not readable: a FreeBSD 5 kernel's UMA zones) is no failure of
	 * the rows shown, which the same call read before it. */
	if (rc != 0 && known_err[0] != '\0' && strcmp(kvs_geterr(kd), known_err) == 0)
		rc = 0;

	if (t->screen == SCR_PROFILE || t->screen == SCR_PROBES || t->screen == SCR_MEMORY)
		fill_text(t, kd);

	model_update(&t->model, rc == 0, rc == 0 ? NULL : kvs_geterr(kd), t1, (t1 - t0) * 1e3);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "iterations", required_argument, NULL, 'n' },
		{ "batch", no_argument, NULL, 'b' },
		{ "width", required_argument, NULL, 'W' },
		{ "height", required_argument, NULL, 'H' },
		{ "view", required_argument, NULL, 'V' },
		{ "addresses", no_argument, NULL, 'a' },
		{ "raw", no_argument, NULL, 'R' },
		{ "no-color", no_argument, NULL, 'C' },
		{ "no-verify", no_argument, NULL, 'Y' },
		{ "demo", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	const char *kernel = NULL, *core = NULL;
	char err[KVS_ERRBUF_SIZE];
	char demo_kernel[4096], demo_core[4096], sys_kernel[4096];
	struct tui t;
	long iterations = -1, done = 0, width = 0, height = 0;
	int flags = 0, ch;
	bool batch = !isatty(STDOUT_FILENO), addr = false, demo = false;
	const char *view = NULL;
	kvs_t *kd;

	memset(&t, 0, sizeof(t));
	t.interval = 1.0;
	t.color = true;
	while ((ch = getopt_long(argc, argv, "N:M:w:n:bah", longopts, NULL)) != -1) {
		switch (ch) {
		case 'N': kernel = optarg; break;
		case 'M': core = optarg; break;
		case 'w': {
			char *end;
			t.interval = strtod(optarg, &end);
			if (end == optarg || *end != '\0' || !(t.interval >= 0 && t.interval <= 3600)) {
				fprintf(stderr, "kvmtop: -w wants seconds (0.1 to 3600), not '%s'\n", optarg);
				return 2;
			}
			break;
		}
		case 'n': iterations = num_arg("-n", optarg, 1, 1000000000); break;
		case 'b': batch = true; break;
		case 'W': width = num_arg("--width", optarg, 10, 1000); break;
		case 'H': height = num_arg("--height", optarg, 3, 10000); break;
		case 'V': view = optarg; break;
		case 'a': addr = true; break;
		case 'R': flags |= KVS_O_RAW; break;
		case 'C': t.color = false; break;
		case 'Y': flags |= KVS_O_NOVERIFY; break;
		case 'D': demo = true; break;
		case 'v':
			printf("kvmtop %s\n", KVS_VERSION);
			return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
		case 'h':
			printf("usage: kvmtop [-N kernel] [-M core|/dev/mem|raw-image] [--raw] "
			    "[--no-verify]\n"
			    "       [-w seconds] [-n N|--iterations N] [--no-color]\n"
			    "       [-b|--batch] [--width W] [--height H] [-a|--addresses]\n"
			    "       [--view malloc|zones|slab|memory|info|profile|probes|help]\n"
			    "       kvmtop --demo [options]\n"
			    "       kvmtop -h|--help | --version\n"
			    "  -b      batch mode (also when stdout is not a terminal): N plain-text frames\n"
			    "  --demo  the bundled demo dump (a FreeBSD 14 minidump)\n"
			    "  no -M/-N: the running system (booted kernel and live memory)\n");
			return 0;
		default:
			fprintf(stderr, "usage: kvmtop [-N kernel] [-M core] [-b] [-n N] ... (kvmtop -h)\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kvmtop: unexpected argument '%s' (kvmtop -h)\n", argv[optind]);
		return 2;
	}
	if (view != NULL && strcmp(view, "malloc") != 0 && strcmp(view, "zones") != 0 &&
	    strcmp(view, "slab") != 0 && strcmp(view, "info") != 0 && strcmp(view, "profile") != 0 &&
	    strcmp(view, "probes") != 0 && strcmp(view, "help") != 0 &&
	    strcmp(view, "memory") != 0) {
		fprintf(stderr, "kvmtop: --view wants malloc, zones, slab, memory, info, profile, "
		    "probes or help, not '%s'\n", view);
		return 2;
	}
	if (t.interval < 0.1)
		t.interval = 0.1;
	if (demo && (kernel != NULL || core != NULL)) {
		fprintf(stderr, "kvmtop: --demo cannot be combined with -M or -N (kvmtop -h)\n");
		return 2;
	}
	if (demo) {
		if (sys_demo_paths(argv[0], KVS_DEMO_DIR, demo_kernel, demo_core,
		    sizeof(demo_kernel)) != 0) {
			fprintf(stderr, "kvmtop: %s\n", demo_kernel);
			return 1;
		}
		kernel = demo_kernel;
		core = demo_core;
	} else if (kernel == NULL && core == NULL) {
		/* As vmstat: the booted kernel and the live memory device (the
		 * library's default core).  -M alone keeps no kernel: the
		 * library takes the dump's own symbols and types (Linux
		 * VMCOREINFO), else the installed kernel. */
		if (sys_default_kernel(sys_kernel, sizeof(sys_kernel)) != 0) {
			fprintf(stderr, "kvmtop: %s\n", sys_kernel);
			return 1;
		}
		kernel = sys_kernel;
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
		add_info(&t, "dump", "%s", di.path);
		add_info(&t, "format", "%s v%u, %llu pages", di.format, di.format_version,
		    (unsigned long long)di.dumped_pages);
		add_info(&t, "kernel", "%s (%s)", di.kernel, ki.os ? ki.os : "unknown OS");
		add_info(&t, "version", "%s", ki.version ? ki.version : "unknown");
		add_info(&t, "panic", "%s", ki.panic ? ki.panic : "none (the kernel did not panic)");
		add_info(&t, "cpus", "%d (highest id %d)", ki.ncpus, ki.maxid);
	}
	/* What the kernel's allocators hold, from one family-neutral read on a
	 * scratch list: the views are those of its entries' allocators (malloc
	 * types and UMA zones when readable on FreeBSD, SLUB caches on Linux).
	 * A read that fails after reading some allocators (a fresh list keeps
	 * only what was read whole) has its error remembered: do_refresh meets
	 * it again on every refresh.  A read that gave nothing cannot say; the
	 * kernel's family then names the (empty) view, as before. */
	{
		struct memory_type_list *probe = memstat_mtl_alloc();
		struct memory_type *mt;
		bool have_slab = false, any = false;
		int prc = probe != NULL ? memstat_kvm_all(probe, kd) : -1;

		for (mt = probe ? memstat_mtl_first(probe) : NULL; mt != NULL;
		    mt = memstat_mtl_next(mt)) {
			int a = memstat_get_allocator(mt);
			any = true;
			t.have_malloc |= a == ALLOCATOR_MALLOC;
			t.have_uma |= a == ALLOCATOR_UMA;
			have_slab |= a == ALLOCATOR_SLAB;
		}
		if (prc != 0 && any)
			snprintf(known_err, sizeof(known_err), "%s", kvs_geterr(kd));
		memstat_mtl_free(probe);
		if (!any) {
			struct kvs_kernelinfo ki;
			kvs_kernel_info(kd, &ki);
			have_slab = ki.os != NULL && strcmp(ki.os, "Linux") == 0;
			t.have_malloc = !have_slab;
		}
		if (have_slab && !t.have_malloc)
			model_set_allocator(&t.model, ALLOCATOR_SLAB);
	}
	t.model.show_addr = addr;
	if (view != NULL) {
		const char *why = NULL;
		if (strcmp(view, "malloc") == 0 && !t.have_malloc)
			why = "this kernel has no malloc types";
		else if (strcmp(view, "zones") == 0 && !t.have_uma)
			why = "this kernel's UMA zones are not readable";
		else if (strcmp(view, "slab") == 0 && t.model.allocator != ALLOCATOR_SLAB)
			why = "this kernel has no slab caches";
		if (why != NULL) {
			fprintf(stderr, "kvmtop: --view %s: %s\n", view, why);
			return 1;
		}
		if (strcmp(view, "zones") == 0)
			model_set_allocator(&t.model, ALLOCATOR_UMA);
		else if (strcmp(view, "info") == 0)
			t.screen = SCR_INFO;
		else if (strcmp(view, "profile") == 0)
			t.screen = SCR_PROFILE;
		else if (strcmp(view, "probes") == 0)
			t.screen = SCR_PROBES;
		else if (strcmp(view, "memory") == 0)
			t.screen = SCR_MEMORY;
		else if (strcmp(view, "help") == 0)
			t.screen = SCR_HELP;
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
	if (!batch && view_init(&t) != 0) {
		/* A terminal curses cannot drive: top's batch frames instead. */
		const char *term = getenv("TERM");
		char tc[256];
		sanitize(tc, sizeof(tc), term ? term : "", term ? strlen(term) : 0, false);
		fprintf(stderr, "kvmtop: cannot use terminal type '%s'; batch mode (as -b)\n", tc);
		batch = true;
	}
	if (batch) {
		const char *cols = getenv("COLUMNS");
		if (width == 0 && cols != NULL && atoi(cols) >= 10 && atoi(cols) <= 1000)
			width = atoi(cols);
		if (width == 0)
			width = 80;
		if (iterations < 0)
			iterations = t.live ? 1000000000 : 1;
		for (;;) {
			print_frame(&t, (int)width, (int)height);
			if (done >= iterations)
				break;
			if (!t.live) {          /* a dump does not change: not re-read */
				done++;
				continue;
			}
			{
				struct timespec ts = { (time_t)t.interval,
				    (long)((t.interval - (double)(time_t)t.interval) * 1e9) };
				nanosleep(&ts, NULL);
			}
			do_refresh(&t, kd);
			done++;
		}
		goto out_batch;
	}
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
			/* A dump is shown once: wait for keys only (with -n, its
			 * frames still count at the interval). */
			timeout(!t.live && iterations < 0 ? -1 : (int)(left * 1000) + 1);
			key = getch();
			if (key == ERR)
				continue;
			enum action a = input_key(&t, key);
			if (a == ACT_QUIT)
				goto out;
			if (a == ACT_RESCAN) {
				if (t.screen == SCR_PERCPU && t.live)
					do_refresh(&t, kd);
				else
					fill_text(&t, kd);
				view_draw(&t);
				continue;
			}
			view_draw(&t);
		}
		if (!t.live)
			done++;
		else if (!t.paused) {
			do_refresh(&t, kd);
			done++;
		}
	}
out:
	view_end();
out_batch:
	frame_free(&t.out);
	free(t.meminfo);
	model_free(&t.model);
	kvs_close(kd);
	return 0;
}
