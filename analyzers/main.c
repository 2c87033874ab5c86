/*
 * main.c - the kvmstat command: option parsing and dispatch.
 *
 *   kvmstat [-M core] [-N kernel] [--raw] [--json] command [options]
 *
 * With neither -M nor -N it opens the bundled fixture dump, so a newcomer
 * sees real output at once.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifndef KVS_DEFAULT_KERNEL
#define KVS_DEFAULT_KERNEL "fixtures/cores/fbsd14/kernel"
#endif
#ifndef KVS_DEFAULT_CORE
#define KVS_DEFAULT_CORE "fixtures/cores/fbsd14/vmcore.minidump3"
#endif

struct command {
	const char *name;
	int (*fn)(kvs_t *, const struct opts *);
	const char *help;
};

static const struct command commands[] = {
	{ "info", cmd_info, "dump format, kernel version, panic string, CPUs" },
	{ "dmesg", cmd_dmesg, "kernel message buffer" },
	{ "malloc", cmd_malloc, "malloc(9) types, as vmstat -m (alias -m)" },
	{ "zone", cmd_zone, "UMA zones, as vmstat -z (alias -z; --format 12|14|15, --percpu)" },
	{ "gmon", cmd_gmon, "write the kernel gprof data as gmon.out (-o FILE, -f to replace)" },
	{ "profile", cmd_profile, "flat kernel profile and top call arcs (--top N)" },
	{ "probes", cmd_probes, "DTrace profile-provider probes (--all: every provider)" },
	{ "profil", cmd_profil, "processes with profil(2) enabled" },
	{ "slab", cmd_slab, "Linux SLUB caches, as /proc/slabinfo (--format slabinfo|crash, --json)" },
};

static void
usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: kvmstat [-M core] [-N kernel] [--raw] [--json] command [options]\n"
	    "\n"
	    "  -M core      crash dump, raw physical image, or /dev/mem (live)\n"
	    "  -N kernel    kernel ELF with symbols (DWARF inside or in kernel.debug)\n"
	    "  --raw        treat the core as a raw physical-memory image\n"
	    "  --no-verify  do not check that the kernel matches the dump\n"
	    "  --json       machine-readable output\n"
	    "  -K file.ko   a kernel module whose symbols/types to use (repeatable)\n"
	    "  --module-dir DIR  every loaded module found in DIR\n"
	    "  With neither -M nor -N the bundled fixture dump is used.\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
}

kvs_t *
open_handle(const struct opts *o)
{
	char errbuf[KVS_ERRBUF_SIZE], clean[4 * KVS_ERRBUF_SIZE];
	kvs_t *kd;

	kd = kvs_open(o->kernel, o->core, o->open_flags, errbuf);
	if (kd == NULL)
		fprintf(stderr, "kvmstat: %s\n", sanitize(clean, sizeof(clean), errbuf,
		    strlen(errbuf), false));
	return kd;
}

/*
 * Modules named with -K, or every loaded one in --module-dir.  For `probes`
 * with neither, the kernel's own directory is tried, as /boot/kernel holds
 * both the kernel and its modules.
 */
static int
add_modules(kvs_t *kd, const struct opts *o, bool want)
{
	char dir[4096], clean[4 * KVS_ERRBUF_SIZE];
	int i;

	for (i = 0; i < o->nmodules; i++)
		if (kvs_add_module(kd, o->modules[i]) < 0)
			goto fail;
	if (o->moddir != NULL) {
		if (kvs_add_module_dir(kd, o->moddir) < 0)
			goto fail;
	} else if (want && o->nmodules == 0) {
		const char *slash = strrchr(o->kernel, '/');
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - o->kernel) : 1,
		    slash ? o->kernel : ".");
		(void)kvs_add_module_dir(kd, dir);
	}
	return 0;
fail:
	fprintf(stderr, "kvmstat: %s\n", sanitize(clean, sizeof(clean), kvs_geterr(kd),
	    strlen(kvs_geterr(kd)), false));
	return -1;
}

enum { OPT_JSON = 256, OPT_RAW, OPT_NOVERIFY, OPT_FORMAT, OPT_SORT, OPT_PERCPU,
	OPT_ALL, OPT_TOP, OPT_MODDIR };

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "raw", no_argument, NULL, OPT_RAW },
		{ "no-verify", no_argument, NULL, OPT_NOVERIFY },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "percpu", no_argument, NULL, OPT_PERCPU },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "module-dir", required_argument, NULL, OPT_MODDIR },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .top = 20 };
	const char *cmd = NULL;
	const struct command *c = NULL;
	kvs_t *kd;
	size_t i;
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "M:N:mzo:fK:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'M': o.core = optarg; break;
		case 'N': o.kernel = optarg; break;
		case 'm': cmd = "malloc"; break;
		case 'z': cmd = "zone"; break;
		case 'o': o.output = optarg; break;
		case 'f': o.force = true; break;
		case 'K':
			if (o.nmodules < (int)(sizeof(o.modules) / sizeof(o.modules[0])))
				o.modules[o.nmodules++] = optarg;
			break;
		case OPT_JSON: o.json = true; break;
		case OPT_RAW: o.open_flags |= KVS_O_RAW; break;
		case OPT_NOVERIFY: o.open_flags |= KVS_O_NOVERIFY; break;
		case OPT_FORMAT: o.format = optarg; break;
		case OPT_SORT: o.sort = optarg; break;
		case OPT_PERCPU: o.percpu = true; break;
		case OPT_ALL: o.all = true; break;
		case OPT_TOP: o.top = atoi(optarg); break;
		case OPT_MODDIR: o.moddir = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (cmd == NULL && optind < argc)
		cmd = argv[optind++];
	if (cmd == NULL)
		cmd = "info";
	o.args = argv + optind;
	o.nargs = argc - optind;
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, cmd) == 0)
			c = &commands[i];
	if (c == NULL) {
		fprintf(stderr, "kvmstat: unknown command '%s'\n", cmd);
		usage(stderr);
		return 2;
	}
	if (o.core == NULL && o.kernel == NULL) {
		o.core = KVS_DEFAULT_CORE;
		o.kernel = KVS_DEFAULT_KERNEL;
	} else if (o.kernel == NULL) {
		fprintf(stderr, "kvmstat: -M needs -N kernel\n");
		return 2;
	}
	kd = open_handle(&o);
	if (kd == NULL)
		return 1;
	if (add_modules(kd, &o, strcmp(c->name, "probes") == 0) != 0) {
		kvs_close(kd);
		return 1;
	}
	rc = c->fn(kd, &o);
	kvs_close(kd);
	return rc;
}
