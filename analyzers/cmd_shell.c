/*
 * cmd_shell.c - `kvmstat shell [SCRIPT [ARG...]]`: Python with `prog` bound
 * to the kernel and dump named by -M and -N (as every command), the object
 * layer's names (Object, cast, sizeof, container_of...) and the family's
 * helpers imported, as `drgn -c vmcore` gives; with a script, the script
 * runs with those in its globals and ARG... in sys.argv, as `drgn -c vmcore
 * script.py` does.  This program only finds the module (the build tree's,
 * or the installed one) and hands over to python3 -m kvmstat.shell.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sysdefault.h"

#ifndef KVS_PYSRC_DIR
#define KVS_PYSRC_DIR ""
#endif
#ifndef KVS_PYINSTALL_DIR
#define KVS_PYINSTALL_DIR ""
#endif
#ifndef KVS_DEMO_DIR
#define KVS_DEMO_DIR "/usr/local/share/kvmstat/demo"
#endif

static bool
exists(const char *p)
{
	return p[0] != '\0' && access(p, F_OK) == 0;
}

/* PYTHONPATH with dir first (when it exists and is not there yet). */
static void
path_prepend(const char *dir)
{
	const char *old = getenv("PYTHONPATH");
	char buf[8192];

	if (!exists(dir))
		return;
	if (old == NULL || old[0] == '\0')
		snprintf(buf, sizeof(buf), "%s", dir);
	else
		snprintf(buf, sizeof(buf), "%s:%s", dir, old);
	setenv("PYTHONPATH", buf, 1);
}

int
cmd_shell(kvs_t *kd, const struct opts *o)
{
	char exe[PATH_MAX], lib[PATH_MAX + 64], dk[4096], dc[4096];
	const char *argv[64 + 16];
	const char *core = o->core, *kernel = o->kernel;
	ssize_t n;
	int a = 0, i;

	(void)kd;
	if (o->json)
		return usage_error(true, "shell has no JSON output");
	if (o->demo) {
		if (sys_demo_paths(o->argv0, KVS_DEMO_DIR, dk, dc, sizeof(dk)) != 0) {
			fprintf(stderr, "kvmstat: %s\n", dk);
			return 1;
		}
		kernel = dk;
		core = dc;
	}
	if (o->nargs > 64)
		return usage_error(false, "shell: at most 64 arguments for the script");
	/* Run from the build tree (the library beside this program's folder):
	 * that tree's library and the source tree's module; else the
	 * installed module, which finds the installed library itself. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')) != NULL)
			*slash = '\0';
		snprintf(lib, sizeof(lib), "%s/../libkvmstat/libkvmstat.so", exe);
		if (exists(lib)) {
			if (getenv("KVMSTAT_LIB") == NULL)
				setenv("KVMSTAT_LIB", lib, 1);
			path_prepend(KVS_PYSRC_DIR);
		} else
			path_prepend(KVS_PYINSTALL_DIR);
	}
	argv[a++] = "python3";
	argv[a++] = "-m";
	argv[a++] = "kvmstat.shell";
	if (core != NULL) {
		argv[a++] = "--core";
		argv[a++] = core;
	}
	if (kernel != NULL) {
		argv[a++] = "--kernel";
		argv[a++] = kernel;
	}
	if (o->open_flags & KVS_O_RAW)
		argv[a++] = "--raw";
	if (o->open_flags & KVS_O_NOVERIFY)
		argv[a++] = "--no-verify";
	if (o->open_flags & KVS_O_NO_CACHE)
		setenv("KVS_NO_CACHE", "1", 1);
	argv[a++] = "--";
	for (i = 0; i < o->nargs; i++)
		argv[a++] = o->args[i];
	argv[a] = NULL;
	fflush(stdout);
	execvp("python3", (char *const *)argv);
	fprintf(stderr, "kvmstat: shell needs python3: %s\n", strerror(errno));
	return 1;
}
